//! The filter kinds, one folder each: `mod.rs` holds the type, its builder and its
//! operations, `theory.rs` its formulas (sizing and false-positive rate, with their
//! sources). Each is listed once in the [registry](crate::registry) and reached from the
//! crate root by its old path (`bloomkit::bloom`, `bloomkit::cuckoo`, …).

pub mod blocked;
pub mod bloom;
pub mod compressed;
pub mod counting;
pub mod cuckoo;
pub mod deletable;
pub mod generalized;
pub mod partitioned;
pub mod robust;
pub mod scalable;
pub mod spectral;
pub mod split_block;
pub mod stable;
pub mod vi_counting;
pub mod weighted;
