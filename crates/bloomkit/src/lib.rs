#![doc = include_str!("../README.md")]
//!
//! ## Map of the crate
//!
//! * [`hash`] — stable 128-bit hashing of items (MurmurHash3, XXH3) and the derivation of
//!   k positions (enhanced double hashing or k seeded hashes).
//! * [`params`] — the textbook formulas: optimal m and k, the false-positive probability,
//!   the item count estimated from the fill; each kind's theory in its own file
//!   (`kinds/counting/theory.rs`, …), all reachable as `params::name`.
//! * [`filter`] — the traits [`Filter`], [`Removable`], [`Mergeable`]: one contract for every
//!   kind (`try_insert` says whether the item was new; every `remove` returns the same type).
//! * [`registry`] — every kind listed once: [`Kind`] (with what each kind can do) and
//!   [`AnyFilter`] are generated from that list; each kind declares its abilities in its own
//!   file.
//! * [`bloom`] — the classic [`BloomFilter`].
//! * [`bloomier`] — the [`BloomierFilter`] (Chazelle et al. 2004): a static map from keys to
//!   r-bit values built by 3-hypergraph peeling; not a filter kind (built once from a set).
//! * [`counting`] — the [`CountingBloomFilter`] (Fan et al. 2000): saturating counters, remove.
//! * [`vi_counting`] — the [`VariableIncrementBloomFilter`] (Rottenstreich et al. 2014):
//!   hashed increments, fewer false positives than counting for the same memory.
//! * [`deletable`] — the [`DeletableBloomFilter`]: removes items whose bits lie in
//!   collision-free regions.
//! * [`stable`] — the [`StableBloomFilter`]: duplicate detection on streams; forgets old
//!   items (false negatives by design).
//! * [`scalable`] — the [`ScalableBloomFilter`]: a stack of classic filters that grows and
//!   keeps its false-positive bound.
//! * [`spectral`] — the [`SpectralBloomFilter`] (Cohen & Matias 2003): how often was an item
//!   inserted; minimum selection, minimal increase, recurring minimum.
//! * [`weighted`] — the [`WeightedBloomFilter`] (Bruck, Gao & Jiang 2006): k per item from
//!   its query frequency and membership likelihood.
//! * [`generalized`] — the [`GeneralizedBloomFilter`] (Laufer et al. 2005): k₀ hashes reset
//!   bits, k₁ set them; false positives bounded at any fill, false negatives by design.
//! * [`cuckoo`] — the [`CuckooFilter`]: fingerprints in buckets, with remove.
//! * [`compressed`] — the [`CompressedBloomFilter`] (Mitzenmacher 2002): m and k chosen for
//!   the smallest transmitted size, saved arithmetic-coded ([`arith`]).
//! * [`concurrent`] — [`ConcurrentBloomFilter`], the classic filter shared between threads
//!   (insert and query through `&self`, no lock).
//! * `parallel` (cargo feature `rayon`) — `BloomFilter::insert_parallel`: inserting on
//!   all cores, bit for bit the sequential result.
//! * [`blocked`] — the [`BlockedBloomFilter`]: all k bits of an item in one 64-byte cache
//!   line, one cache miss per query; integer fast path and batched queries.
//! * [`split_block`] — the [`SplitBlockBloomFilter`]: Apache Parquet's Bloom filter, bit for
//!   bit (XXH64, 256-bit blocks of eight 32-bit words).
//! * [`buffered`] — [`BufferedBloomFilter`] (Canim et al. 2010): a filter larger than
//!   memory, on disk in pages, inserts buffered per page and flushed in batches; a journal
//!   keeps its file whole through a failed flush. Outside the registry (not a `Filter`).
//! * [`robust`] — [`RobustBloomFilter`], robustBF (Nayak & Patgiri 2021): the 2D filter of
//!   64-bit words, built as the paper describes, with its claims checked.
//! * `interop` (cargo features `guava`, `spark`, `redisbloom`, `parquet`) — filters other
//!   systems write, bit for bit: Guava's `BloomFilter`, Spark's `util.sketch.BloomFilter`,
//!   RedisBloom 2.4's SCANDUMP dumps and the LOADCHUNK commands that load them, and the split
//!   block filters of Parquet files.
//! * [`format`](mod@format) — the file format ([`Persist`]), with atomic saves, and [`FileLock`] for
//!   writers; version 2 checks the payload per chunk, so that [`format::view::FilterView`]
//!   answers from a read-only memory map of the file, reading only the chunks a query
//!   touches (the kinds whose payload is a flat array of bits or packed counters,
//!   [`Kind::can_view`]).
//! * [`prelude`] — `use bloomkit::prelude::*;` for the traits, items and every kind.
//! * [`stats`] — confidence intervals used to judge measured rates.
//! * [`arch`] — the one module with `unsafe`: prefetch, SIMD kernels chosen at run time
//!   (scalar twins held to the same bits by tests), huge-page advice, memory maps.
#![deny(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

// The source is laid out by concern: `kinds/<kind>/` (one folder per kind), `core/`
// (traits, registry), `format/` (the file format), `hash/`, `storage/`, `exec/` (batches,
// parallel builds, `arch`), `structures/` (what is not a registry kind). The public paths
// stay flat, as they were: `bloomkit::bloom`, `bloomkit::codec`, ….
mod core;
pub mod error;
mod exec;
mod external_trait_impls;
pub mod format;
pub mod hash;
#[cfg(any(
    feature = "guava",
    feature = "spark",
    feature = "redisbloom",
    feature = "parquet"
))]
#[cfg_attr(
    docsrs,
    doc(cfg(any(
        feature = "guava",
        feature = "spark",
        feature = "redisbloom",
        feature = "parquet"
    )))
)]
pub mod interop;
mod kinds;
pub mod params;
pub mod prelude;
pub mod stats;
mod storage;
mod structures;

pub(crate) use crate::core::sizing;
pub use crate::core::{any, filter, registry, typed};
#[cfg(feature = "rayon")]
#[cfg_attr(docsrs, doc(cfg(feature = "rayon")))]
pub use exec::parallel;
pub use exec::{arch, caches, lookahead};
/// The file format: the old name of [`format`].
#[doc(hidden)]
pub use format as codec;
pub use format::lock;
/// Every kind's module (`bloomkit::bloom`, …), type and builder, as `kinds/mod.rs` lists them.
pub use kinds::*;
pub use storage::arith;
#[doc(hidden)]
pub use storage::bits;
pub use structures::{bloomier, buffered, concurrent};

#[doc(inline)]
pub use any::AnyFilter;
#[doc(inline)]
pub use bloomier::{BloomierFilter, BloomierFilterBuilder, BloomierLayout};
pub use buffered::{BufferedBloomFilter, BufferedBloomFilterBuilder, BufferedOpenOptions, IoStats};
#[doc(inline)]
pub use codec::Persist;
#[doc(inline)]
pub use concurrent::ConcurrentBloomFilter;
#[doc(inline)]
pub use error::{DecodeError, Error};
#[doc(inline)]
pub use filter::{DynFilter, Filter, Kind, Mergeable, Removable};
#[doc(inline)]
pub use hash::{HashFunction, Hashed, Hashing, IndexScheme, Item};
#[doc(inline)]
pub use lock::FileLock;
#[doc(inline)]
pub use spectral::{SpectralLayout, SpectralMethod};
#[doc(inline)]
pub use typed::Typed;

/// The Rust examples of the project's README, run as doctests so that they stay true.
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
