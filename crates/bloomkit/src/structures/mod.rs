//! What is not a set-like kind of the registry: the Bloomier filter (a static map built once
//! from a set), the buffered filter on disk (changed in place, page by page) and the
//! concurrent classic filter (shared between threads).

pub mod bloomier;
pub mod buffered;
pub mod concurrent;
