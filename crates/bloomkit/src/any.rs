//! A filter of any kind, for code that learns the kind at run time (such as the CLI
//! reading a file).

use crate::blocked::BlockedBloomFilter;
use crate::bloom::BloomFilter;
use crate::codec::{Parts, Persist};
use crate::counting::CountingBloomFilter;
use crate::cuckoo::CuckooFilter;
use crate::deletable::DeletableBloomFilter;
use crate::error::{DecodeError, Error};
use crate::filter::{Filter, Kind};
use crate::hash::{Hashing, Item};
use crate::scalable::ScalableBloomFilter;
use crate::split_block::SplitBlockBloomFilter;
use crate::stable::StableBloomFilter;
use crate::vi_counting::VariableIncrementBloomFilter;

/// One of the crate's filter kinds, chosen at run time.
///
/// ```
/// use bloomkit::{AnyFilter, BloomFilter, Filter, Persist};
///
/// let mut bloom = BloomFilter::with_capacity(100, 0.01)?;
/// bloom.insert("dist");
/// let any = AnyFilter::from_bytes(&bloom.to_bytes())?;
/// assert_eq!(any.kind().name(), "bloom");
/// assert!(any.contains("dist"));
/// # Ok::<(), bloomkit::Error>(())
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum AnyFilter {
    /// A classic Bloom filter.
    Bloom(BloomFilter),
    /// A counting Bloom filter.
    Counting(CountingBloomFilter),
    /// A variable-increment counting Bloom filter.
    VariableIncrement(VariableIncrementBloomFilter),
    /// A deletable Bloom filter.
    Deletable(DeletableBloomFilter),
    /// A stable Bloom filter.
    Stable(StableBloomFilter),
    /// A scalable Bloom filter.
    Scalable(ScalableBloomFilter),
    /// A cuckoo filter.
    Cuckoo(CuckooFilter),
    /// A blocked Bloom filter.
    Blocked(BlockedBloomFilter),
    /// A Parquet split block Bloom filter.
    SplitBlock(SplitBlockBloomFilter),
}

/// Calls `$body` with `$f` bound to the inner filter, whatever its kind.
macro_rules! dispatch {
    ($self:expr, $f:ident => $body:expr) => {
        match $self {
            AnyFilter::Bloom($f) => $body,
            AnyFilter::Counting($f) => $body,
            AnyFilter::VariableIncrement($f) => $body,
            AnyFilter::Deletable($f) => $body,
            AnyFilter::Stable($f) => $body,
            AnyFilter::Scalable($f) => $body,
            AnyFilter::Cuckoo($f) => $body,
            AnyFilter::Blocked($f) => $body,
            AnyFilter::SplitBlock($f) => $body,
        }
    };
}

/// `impl From<Kind> for AnyFilter` for every kind.
macro_rules! from_kinds {
    ($($variant:ident($kind:ty)),* $(,)?) => {$(
        impl From<$kind> for AnyFilter {
            fn from(filter: $kind) -> Self {
                AnyFilter::$variant(filter)
            }
        }
    )*};
}

from_kinds!(
    Bloom(BloomFilter),
    Blocked(BlockedBloomFilter),
    Counting(CountingBloomFilter),
    VariableIncrement(VariableIncrementBloomFilter),
    Deletable(DeletableBloomFilter),
    Scalable(ScalableBloomFilter),
    Stable(StableBloomFilter),
    Cuckoo(CuckooFilter),
    SplitBlock(SplitBlockBloomFilter),
);

impl Filter for AnyFilter {
    fn kind(&self) -> Kind {
        dispatch!(self, f => f.kind())
    }
    fn hashing(&self) -> Hashing {
        dispatch!(self, f => f.hashing())
    }
    fn try_insert<I: Item + ?Sized>(&mut self, item: &I) -> Result<(), Error> {
        dispatch!(self, f => f.try_insert(item))
    }
    fn contains<I: Item + ?Sized>(&self, item: &I) -> bool {
        dispatch!(self, f => Filter::contains(f, item))
    }
    fn clear(&mut self) {
        dispatch!(self, f => f.clear())
    }
    fn len(&self) -> u64 {
        dispatch!(self, f => f.len())
    }
    fn estimated_len(&self) -> f64 {
        dispatch!(self, f => f.estimated_len())
    }
    fn memory_bytes(&self) -> usize {
        dispatch!(self, f => f.memory_bytes())
    }
    fn capacity(&self) -> u64 {
        dispatch!(self, f => Filter::capacity(f))
    }
    fn properties(&self) -> Vec<(&'static str, String)> {
        dispatch!(self, f => f.properties())
    }
    fn expected_fpp(&self) -> f64 {
        dispatch!(self, f => f.expected_fpp())
    }
}

impl Persist for AnyFilter {
    fn encode_params(&self, out: &mut Vec<u8>) {
        dispatch!(self, f => f.encode_params(out))
    }
    fn encode_payload(&self, out: &mut Vec<u8>) {
        dispatch!(self, f => f.encode_payload(out))
    }
    fn decode_parts(parts: &Parts<'_>) -> Result<Self, DecodeError> {
        match parts.kind {
            Kind::Bloom => BloomFilter::decode_parts(parts).map(AnyFilter::Bloom),
            Kind::Counting => CountingBloomFilter::decode_parts(parts).map(AnyFilter::Counting),
            Kind::VariableIncrement => {
                VariableIncrementBloomFilter::decode_parts(parts).map(AnyFilter::VariableIncrement)
            }
            Kind::Deletable => DeletableBloomFilter::decode_parts(parts).map(AnyFilter::Deletable),
            Kind::Stable => StableBloomFilter::decode_parts(parts).map(AnyFilter::Stable),
            Kind::Scalable => ScalableBloomFilter::decode_parts(parts).map(AnyFilter::Scalable),
            Kind::Cuckoo => CuckooFilter::decode_parts(parts).map(AnyFilter::Cuckoo),
            Kind::Blocked => BlockedBloomFilter::decode_parts(parts).map(AnyFilter::Blocked),
            Kind::SplitBlock => {
                SplitBlockBloomFilter::decode_parts(parts).map(AnyFilter::SplitBlock)
            }
        }
    }
}

impl AnyFilter {
    /// Unions `other` into `self` when both are of the same mergeable kind.
    pub fn union(&mut self, other: &AnyFilter) -> Result<(), Error> {
        use crate::filter::Mergeable;
        match (self, other) {
            (AnyFilter::Bloom(a), AnyFilter::Bloom(b)) => a.union(b),
            (AnyFilter::Counting(a), AnyFilter::Counting(b)) => a.union(b),
            (AnyFilter::VariableIncrement(a), AnyFilter::VariableIncrement(b)) => a.union(b),
            (AnyFilter::Deletable(a), AnyFilter::Deletable(b)) => a.union(b),
            (AnyFilter::Blocked(a), AnyFilter::Blocked(b)) => a.union(b),
            (AnyFilter::SplitBlock(a), AnyFilter::SplitBlock(b)) => a.union(b),
            (a, b) if a.kind() != b.kind() => Err(Error::Incompatible(format!(
                "a {} filter cannot be merged with a {} filter",
                a.kind(),
                b.kind()
            ))),
            (a, _) => Err(Error::Unsupported {
                kind: a.kind(),
                operation: "merge",
            }),
        }
    }

    /// Removes an item when the kind can remove (see [`Removable`](crate::Removable));
    /// [`Error::Unsupported`] for the kinds that cannot.
    // One arm per removable kind; the last arm for the rest.
    pub fn remove<I: Item + ?Sized>(&mut self, item: &I) -> Result<bool, Error> {
        use crate::filter::Removable;
        match self {
            AnyFilter::Counting(f) => f.remove(item),
            AnyFilter::VariableIncrement(f) => f.remove(item),
            AnyFilter::Deletable(f) => f.remove(item),
            AnyFilter::Cuckoo(f) => Removable::remove(f, item),
            f => Err(Error::Unsupported {
                kind: f.kind(),
                operation: "remove",
            }),
        }
    }
}
