//! What every kind shares: the traits ([`filter`]), the registry of kinds and the
//! run-time [`AnyFilter`](crate::AnyFilter) ([`registry`], [`any`]), the typed wrapper
//! ([`typed`]) and the sizing checks every builder calls.

pub mod any;
mod batch;
pub mod filter;
pub mod registry;
pub(crate) mod sizing;
pub mod typed;
