//! Every test of the library but serde's, in one binary: one link and one copy of the
//! library's generic code instead of twenty, and libtest runs the files' tests in parallel. A file per kind or concern, as before;
//! `cargo test -p bloomkit --test suite -- cuckoo::` runs one of them.
//!
//! `conformance` is the shared harness every kind is held to.

pub mod conformance;

mod blocked;
mod bloomier;
mod buffered;
mod compressed;
mod counting;
mod cuckoo;
mod decoder;
mod deletable;
mod every_kind;
mod generalized;
mod kernels;
mod properties;
mod robust;
mod saved_files;
mod scalable;
mod spectral;
mod split_block;
mod stable;
mod statistics;
mod vi_counting;
mod weighted;
