//! The traits every filter kind implements.
//!
//! * [`Filter`] — what every approximate-membership structure can do: insert, ask,
//!   clear, and report its size and expected false-positive probability.
//! * [`Removable`] — only for kinds that can delete (counting, deletable, cuckoo). The
//!   classic [`BloomFilter`](crate::BloomFilter) does not implement it: a remove that the
//!   structure cannot honour is absent from the type instead of failing at run time.
//! * [`Mergeable`] — union (and intersection where it is defined) of two filters with the
//!   same parameters, as caches exchanging summaries need.
//!
//! The methods are generic over [`Item`], so every kind accepts strings, byte slices,
//! integers and [`Hashed`](crate::Hashed) values alike.

use crate::error::Error;
use crate::hash::{Hashing, Item};

/// The kinds of filter, with the tag that identifies each in the file format.
///
/// Tags are stable: a tag once given is never reused for another kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
#[repr(u8)]
pub enum Kind {
    /// The classic Bloom filter, [`BloomFilter`](crate::BloomFilter).
    Bloom = 1,
    /// The counting Bloom filter, [`CountingBloomFilter`](crate::CountingBloomFilter).
    Counting = 3,
    /// The variable-increment counting Bloom filter,
    /// [`VariableIncrementBloomFilter`](crate::VariableIncrementBloomFilter).
    VariableIncrement = 4,
    /// The deletable Bloom filter, [`DeletableBloomFilter`](crate::DeletableBloomFilter).
    Deletable = 5,
    /// The stable Bloom filter for streams, [`StableBloomFilter`](crate::StableBloomFilter).
    Stable = 7,
    /// The scalable Bloom filter, [`ScalableBloomFilter`](crate::ScalableBloomFilter).
    Scalable = 6,
    /// The cuckoo filter, [`CuckooFilter`](crate::CuckooFilter).
    Cuckoo = 8,
    /// The cache-line-blocked Bloom filter, [`BlockedBloomFilter`](crate::BlockedBloomFilter).
    Blocked = 2,
    /// Apache Parquet's split block Bloom filter,
    /// [`SplitBlockBloomFilter`](crate::SplitBlockBloomFilter).
    SplitBlock = 9,
}

impl Kind {
    /// Every kind this build knows.
    pub const ALL: &'static [Kind] = &[
        Kind::Bloom,
        Kind::Blocked,
        Kind::Counting,
        Kind::VariableIncrement,
        Kind::Deletable,
        Kind::Scalable,
        Kind::Stable,
        Kind::Cuckoo,
        Kind::SplitBlock,
    ];

    /// The tag stored in files.
    pub fn tag(self) -> u8 {
        self as u8
    }

    /// The kind with a stored tag, if this build knows it.
    pub fn from_tag(tag: u8) -> Option<Kind> {
        Self::ALL.iter().copied().find(|k| k.tag() == tag)
    }

    /// The name used on the command line and in `info` (`bloom`, …).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Bloom => "bloom",
            Kind::Counting => "counting",
            Kind::VariableIncrement => "vi-counting",
            Kind::Deletable => "deletable",
            Kind::Stable => "stable",
            Kind::Scalable => "scalable",
            Kind::Cuckoo => "cuckoo",
            Kind::Blocked => "blocked",
            Kind::SplitBlock => "sbbf",
        }
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// An approximate-membership filter: answers "definitely not" or "maybe" for an item.
///
/// ```
/// use bloomkit::{BloomFilter, Filter};
///
/// fn fill<F: Filter>(filter: &mut F, words: &[&str]) -> Result<(), bloomkit::Error> {
///     for w in words {
///         filter.try_insert(*w)?;
///     }
///     Ok(())
/// }
///
/// let mut filter = BloomFilter::with_capacity(1000, 0.01)?;
/// fill(&mut filter, &["dist", "bloom"])?;
/// assert!(Filter::contains(&filter, "dist"));
/// assert_eq!(filter.len(), 2);
/// # Ok::<(), bloomkit::Error>(())
/// ```
pub trait Filter {
    /// Which kind of filter this is.
    fn kind(&self) -> Kind;

    /// The hashing configuration (function, index scheme, seed).
    fn hashing(&self) -> Hashing;

    /// Adds an item. Kinds that can fill up (such as the cuckoo filter) return an error
    /// and keep every item already in; the other kinds always succeed.
    fn try_insert<I: Item + ?Sized>(&mut self, item: &I) -> Result<(), Error>;

    /// `false` if the item is certainly not in the filter; `true` if it may be.
    ///
    /// Kinds that promise no false negatives (all but the stable filter) never answer
    /// `false` for an inserted item.
    fn contains<I: Item + ?Sized>(&self, item: &I) -> bool;

    /// Removes every item.
    fn clear(&mut self);

    /// The number of items the filter holds by its own count. For set-like kinds (the
    /// classic, blocked, scalable and stable filters) that is the insertions that changed
    /// the filter: the distinct items added, less the few that were already reported
    /// present when they were added. For multiset kinds (counting, cuckoo) it is the
    /// insertions less the removals.
    fn len(&self) -> u64;

    /// Whether nothing has been inserted.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number of distinct items, estimated from the filter's content alone (it stays
    /// meaningful after unions).
    fn estimated_len(&self) -> f64;

    /// The heap memory of the filter's storage, in bytes.
    fn memory_bytes(&self) -> usize;

    /// The number of items the filter was sized for (for kinds that grow, what they hold
    /// now before growing again).
    fn capacity(&self) -> u64;

    /// Bits of storage per item at capacity: `8 · memory_bytes / capacity`.
    fn bits_per_item(&self) -> f64 {
        self.memory_bytes() as f64 * 8.0 / self.capacity().max(1) as f64
    }

    /// Kind-specific facts for reports such as `bloomkit info`, as (label, value) pairs:
    /// the parameters and state that the common methods do not cover.
    fn properties(&self) -> Vec<(&'static str, String)> {
        Vec::new()
    }

    /// The false-positive probability of a query now, from the filter's current content.
    fn expected_fpp(&self) -> f64;
}

/// Filters that can delete an item.
pub trait Removable: Filter {
    /// Removes one copy of an item.
    ///
    /// * `Ok(true)`: the copy was taken out of the structure. The item may still be
    ///   reported present — through other copies, other items sharing its cells, or
    ///   saturated counters, which are never decremented — but no other item loses its
    ///   membership.
    /// * `Ok(false)`: the kind could not take it out and it stays reported present (the
    ///   deletable filter, when every one of its bits lies in a region with collisions).
    /// * `Err(Error::NotPresent)`, with the filter unchanged: the item is certainly not in
    ///   the filter.
    ///
    /// Removing an item that was never inserted but is reported present (a false
    /// positive) can create false negatives for other items; only remove what you added.
    fn remove<I: Item + ?Sized>(&mut self, item: &I) -> Result<bool, Error>;
}

/// Filters that can be combined with another of the same parameters.
pub trait Mergeable: Filter {
    /// Makes `self` answer "maybe" for every item either filter held. The result is the
    /// filter that inserting both sets would have built.
    fn union(&mut self, other: &Self) -> Result<(), Error>;

    /// Makes `self` answer "maybe" only where both filters did. Every item in both sets is
    /// still found; the false-positive rate can be higher than a filter built from the
    /// intersection alone.
    fn intersect(&mut self, other: &Self) -> Result<(), Error>;
}

/// `Extend` (insert every item) and `FromIterator` (buffer the items, size a filter for
/// their number at ε = 1% with `with_capacity`, insert them) for a kind whose `insert`
/// cannot fail. The attributes given before the kind (a doc comment with an example)
/// go on the `FromIterator` impl.
macro_rules! collection_impls {
    ($(#[$attr:meta])* $kind:ty) => {
        impl<I: $crate::hash::Item> Extend<I> for $kind {
            fn extend<T: IntoIterator<Item = I>>(&mut self, iter: T) {
                for item in iter {
                    self.insert(&item);
                }
            }
        }

        $(#[$attr])*
        impl<I: $crate::hash::Item> FromIterator<I> for $kind {
            fn from_iter<T: IntoIterator<Item = I>>(iter: T) -> Self {
                let items: Vec<I> = iter.into_iter().collect();
                let mut filter =
                    <$kind>::with_capacity(items.len().max(1) as u64, $crate::bloom::DEFAULT_FPP)
                        .expect("ε = 1% is valid and any in-memory collection fits");
                filter.extend(items);
                filter
            }
        }
    };
}
pub(crate) use collection_impls;

/// The check behind every `Mergeable` impl: two filters combine only when their layouts —
/// every parameter that decides where an item lands, and the hashing — are equal. Each kind
/// describes its layout as text ("m = …, k = …, murmur3-x64-128, …"); equal descriptions
/// mean equal parameters, and the descriptions make the error say what differs.
pub(crate) fn require_same_layout(kind: Kind, ours: String, theirs: String) -> Result<(), Error> {
    if ours == theirs {
        Ok(())
    } else {
        Err(Error::Incompatible(format!(
            "({ours}) vs ({theirs}); only {kind} filters with the same parameters and hashing \
             can be combined"
        )))
    }
}
