//! Where the bits live: bit vectors and packed counters ([`bits`]), and the range coder
//! of the compressed filter ([`arith`]).

pub mod arith;
// Storage internals: public for the workspace's own crates (the Redis module keeps
// RedisBloom's layouts on `BitVec`), not part of the documented API.
#[doc(hidden)]
pub mod bits;
