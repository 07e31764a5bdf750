//! The filter kinds, one folder each: `mod.rs` holds the type, its builder and its
//! operations, `theory.rs` its formulas (sizing and false-positive rate, with their
//! sources). This file lists them once: the list declares each kind's module, re-exports its
//! type and builder (reached from the crate root, as are the modules by their old paths:
//! `bloomkit::bloom`, `bloomkit::cuckoo`, …), and is the [registry](crate::registry)'s list,
//! from which `Kind`, `AnyFilter` and their dispatch are generated.

/// Every kind, in registry order: its variant of [`Kind`](crate::Kind), the tag that names
/// it in the file format (stable: never reused), its module, its type and its builder.
/// `every_kind!(callback)` hands the list to the macro `callback`.
macro_rules! every_kind {
    ($callback:ident) => {
        $callback! {
            /// The classic Bloom filter, [`BloomFilter`].
            Bloom = 1: bloom::{BloomFilter, BloomFilterBuilder},
            /// The cache-line-blocked Bloom filter, [`BlockedBloomFilter`].
            Blocked = 2: blocked::{BlockedBloomFilter, BlockedBloomFilterBuilder},
            /// The counting Bloom filter, [`CountingBloomFilter`].
            Counting = 3: counting::{CountingBloomFilter, CountingBloomFilterBuilder},
            /// The variable-increment counting Bloom filter,
            /// [`VariableIncrementBloomFilter`].
            VariableIncrement = 4: vi_counting::{VariableIncrementBloomFilter, VariableIncrementBloomFilterBuilder},
            /// The deletable Bloom filter, [`DeletableBloomFilter`].
            Deletable = 5: deletable::{DeletableBloomFilter, DeletableBloomFilterBuilder},
            /// The scalable Bloom filter, [`ScalableBloomFilter`].
            Scalable = 6: scalable::{ScalableBloomFilter, ScalableBloomFilterBuilder},
            /// The stable Bloom filter for streams, [`StableBloomFilter`].
            Stable = 7: stable::{StableBloomFilter, StableBloomFilterBuilder},
            /// The cuckoo filter, [`CuckooFilter`].
            Cuckoo = 8: cuckoo::{CuckooFilter, CuckooFilterBuilder},
            /// Apache Parquet's split block Bloom filter,
            /// [`SplitBlockBloomFilter`].
            SplitBlock = 9: split_block::{SplitBlockBloomFilter, SplitBlockBloomFilterBuilder},
            /// The spectral Bloom filter (frequency estimates), [`SpectralBloomFilter`].
            Spectral = 10: spectral::{SpectralBloomFilter, SpectralBloomFilterBuilder},
            /// The weighted Bloom filter (k per item from its query frequency),
            /// [`WeightedBloomFilter`].
            Weighted = 11: weighted::{WeightedBloomFilter, WeightedBloomFilterBuilder},
            /// The generalized Bloom filter (bits set and reset; false negatives by design),
            /// [`GeneralizedBloomFilter`].
            Generalized = 12: generalized::{GeneralizedBloomFilter, GeneralizedBloomFilterBuilder},
            // 13 is the Bloomier filter's file tag (`bloomier::FORMAT_TAG`), and 16 the buffered
            // filter's (`buffered::BUFFERED_TAG`): structures outside this list.
            /// The compressed Bloom filter, [`CompressedBloomFilter`].
            Compressed = 14: compressed::{CompressedBloomFilter, CompressedBloomFilterBuilder},
            /// robustBF, the 2D Bloom filter, [`RobustBloomFilter`].
            Robust = 15: robust::{RobustBloomFilter, RobustBloomFilterBuilder},
            /// The partitioned Bloom filter, [`PartitionedBloomFilter`].
            Partitioned = 17: partitioned::{PartitionedBloomFilter, PartitionedBloomFilterBuilder},
        }
    };
}
pub(crate) use every_kind;

/// Declares each listed kind's module and re-exports its type and builder.
macro_rules! kind_modules {
    ($($(#[$doc:meta])* $variant:ident = $tag:literal: $module:ident::{$ty:ident, $builder:ident},)*) => {
        $(
            pub mod $module;
            pub use $module::{$ty, $builder};
        )*
    };
}

every_kind!(kind_modules);
