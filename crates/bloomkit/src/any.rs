//! A filter of any kind, for code that learns the kind at run time (such as the CLI
//! reading a file).

use crate::blocked::BlockedBloomFilter;
use crate::bloom::BloomFilter;
use crate::codec::{Parts, Persist};
use crate::error::{DecodeError, Error};
use crate::filter::{Filter, Kind};
use crate::hash::{Hashing, Item};

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
    /// A blocked Bloom filter.
    Blocked(BlockedBloomFilter),
}

/// Calls `$body` with `$f` bound to the inner filter, whatever its kind.
macro_rules! dispatch {
    ($self:expr, $f:ident => $body:expr) => {
        match $self {
            AnyFilter::Bloom($f) => $body,
            AnyFilter::Blocked($f) => $body,
        }
    };
}

impl From<BloomFilter> for AnyFilter {
    fn from(filter: BloomFilter) -> Self {
        AnyFilter::Bloom(filter)
    }
}

impl From<BlockedBloomFilter> for AnyFilter {
    fn from(filter: BlockedBloomFilter) -> Self {
        AnyFilter::Blocked(filter)
    }
}

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
    fn file_kind(&self) -> Kind {
        self.kind()
    }
    fn file_hashing(&self) -> Hashing {
        self.hashing()
    }
    fn encode_params(&self, out: &mut Vec<u8>) {
        dispatch!(self, f => f.encode_params(out))
    }
    fn encode_payload(&self, out: &mut Vec<u8>) {
        dispatch!(self, f => f.encode_payload(out))
    }
    fn decode_parts(parts: &Parts<'_>) -> Result<Self, DecodeError> {
        match parts.kind {
            Kind::Bloom => BloomFilter::decode_parts(parts).map(AnyFilter::Bloom),
            Kind::Blocked => BlockedBloomFilter::decode_parts(parts).map(AnyFilter::Blocked),
        }
    }
}

impl AnyFilter {
    /// Unions `other` into `self` when both are of the same mergeable kind.
    pub fn union(&mut self, other: &AnyFilter) -> Result<(), Error> {
        use crate::filter::Mergeable;
        #[allow(unreachable_patterns)] // one arm per mergeable kind; the last arm for the rest
        match (self, other) {
            (AnyFilter::Bloom(a), AnyFilter::Bloom(b)) => a.union(b),
            (AnyFilter::Blocked(a), AnyFilter::Blocked(b)) => a.union(b),
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
    #[allow(unreachable_patterns, clippy::match_single_binding)]
    pub fn remove<I: Item + ?Sized>(&mut self, item: &I) -> Result<bool, Error> {
        let _ = item; // used by the arms of the removable kinds
        match self {
            f => Err(Error::Unsupported {
                kind: f.kind(),
                operation: "remove",
            }),
        }
    }
}
