//! The names most code wants, in one import: `use bloomkit::prelude::*;`.
//!
//! It brings the traits whose methods a filter is used through ([`Filter`] for `len`,
//! `try_insert`, `expected_fpp`…, [`Removable`], [`Mergeable`], [`Persist`] for saving),
//! [`Item`] and [`Hashed`], [`AnyFilter`] and [`Kind`], and every filter type.
//! [`DynFilter`](crate::DynFilter) is left out on purpose: its methods share their names with
//! `Filter` and `Persist`, and importing both would make `filter.len()` ambiguous (a
//! `Box<dyn DynFilter>` needs no import to be used).
//!
//! ```
//! use bloomkit::prelude::*;
//!
//! let mut filter = CuckooFilter::with_capacity(1_000, 0.01)?;
//! filter.try_insert(&("user", 7u32))?;
//! filter.try_insert(&Hashed(vec![1u8, 2, 3]))?;
//! assert_eq!(filter.len(), 2);
//! filter.remove(&("user", 7u32))?;
//! assert_eq!(filter.len(), 1);
//!
//! let copy = AnyFilter::from_bytes(&filter.to_bytes())?;
//! assert_eq!(copy.kind(), Kind::Cuckoo);
//! assert!(copy.contains(&Hashed(vec![1u8, 2, 3])));
//!
//! let mut a: BloomFilter = ["x"].into_iter().collect();
//! let b: BloomFilter = ["y"].into_iter().collect();
//! a.union(&b)?;
//! assert!(a.contains("x") && a.contains("y") && !a.is_empty());
//!
//! // Every kind of the registry, the partitioned filter too.
//! let mut slices = PartitionedBloomFilter::with_capacity(100, 0.01)?;
//! slices.insert("x");
//! assert!(slices.contains("x"));
//! # Ok::<(), bloomkit::Error>(())
//! ```

pub use crate::codec::Persist;
pub use crate::filter::{Filter, Kind, Mergeable, Removable};
pub use crate::hash::{Hashed, Item};
pub use crate::{
    AnyFilter, BlockedBloomFilter, BloomFilter, BloomierFilter, CompressedBloomFilter,
    ConcurrentBloomFilter, CountingBloomFilter, CuckooFilter, DeletableBloomFilter,
    GeneralizedBloomFilter, PartitionedBloomFilter, RobustBloomFilter, ScalableBloomFilter,
    SpectralBloomFilter, SplitBlockBloomFilter, StableBloomFilter, Typed,
    VariableIncrementBloomFilter, WeightedBloomFilter,
};
