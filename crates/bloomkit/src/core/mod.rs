//! What every kind shares: the traits ([`filter`]), the registry of kinds and the
//! run-time [`AnyFilter`](crate::AnyFilter) ([`registry`], [`any`]), the typed wrapper
//! ([`typed`]), the sizing checks every builder calls, and building a filter of any kind
//! from one description (`spec`, public through [`registry`]).

pub mod any;
mod batch;
pub mod filter;
pub mod registry;
pub(crate) mod sizing;
pub(crate) mod spec;
pub mod typed;
