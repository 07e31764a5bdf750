//! Implementations of other crates' traits, each behind the cargo feature of that crate.

#[cfg(feature = "serde")]
pub(crate) mod serde;
