//! The traits every filter kind implements.
//!
//! * [`Filter`] — what every approximate-membership structure can do: insert, ask,
//!   clear, and report its size and expected false-positive probability.
//! * [`Removable`] — only for kinds that can delete (counting, variable-increment,
//!   deletable, cuckoo: the kinds whose [`Kind::can_remove`] is true). The
//!   classic [`BloomFilter`](crate::BloomFilter) does not implement it: a remove that the
//!   structure cannot honour is absent from the type instead of failing at run time.
//! * [`Mergeable`] — union (and intersection where it is defined) of two filters with the
//!   same parameters, as caches exchanging summaries need.
//! * [`DynFilter`] — the object-safe face of every filter, over bytes, for
//!   `Box<dyn DynFilter>`.
//!
//! The methods are generic over [`Item`], so every kind accepts strings, byte slices,
//! integers and [`Hashed`](crate::Hashed) values alike.

use crate::codec::Persist;
use crate::error::Error;
use crate::hash::{Hashing, Item};
pub use crate::registry::Kind;

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

    /// Adds an item; says whether it was new.
    ///
    /// * `Ok(true)`: the item was certainly not in the filter before (the filter would have
    ///   answered "no"); it is now.
    /// * `Ok(false)`: the filter already reported the item present. Set-like kinds (the
    ///   classic, blocked, deletable, scalable and stable filters) count it once; multiset
    ///   kinds (counting, variable-increment, cuckoo) still add a copy, so that a later
    ///   `remove` takes exactly one out.
    /// * `Err(_)`: the kind could not take the item — only the kinds that can fill up (the
    ///   cuckoo filter, a scalable filter at its limits); every item already in is kept.
    ///   The other kinds always return `Ok`.
    fn try_insert<I: Item + ?Sized>(&mut self, item: &I) -> Result<bool, Error>;

    /// Inserts every item with [`try_insert`](Filter::try_insert), stopping at the first
    /// error (the items before it are in; the failing one and the rest are not). Returns
    /// how many were new.
    ///
    /// This is the one way to fill a kind whose insert can fail: those kinds (cuckoo,
    /// scalable) do not implement [`Extend`], which has no way to report an error. The
    /// kinds whose insert cannot fail implement `Extend` as well.
    ///
    /// ```
    /// use bloomkit::{CuckooFilter, Filter};
    /// let mut filter = CuckooFilter::with_capacity(1_000, 0.01)?;
    /// assert_eq!(filter.try_extend(["a", "b", "a"])?, 2);
    /// assert_eq!(filter.len(), 3); // a multiset kind keeps both copies of "a"
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    fn try_extend<I: Item, T: IntoIterator<Item = I>>(&mut self, items: T) -> Result<u64, Error>
    where
        Self: Sized,
    {
        let mut new = 0;
        for item in items {
            new += u64::from(self.try_insert(&item)?);
        }
        Ok(new)
    }

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
    /// present when they were added. For multiset kinds (counting, variable-increment, cuckoo) it is the
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

    /// Whether this filter makes room past its capacity instead of refusing or saturating:
    /// the kind's [`Kind::can_grow`], unless a filter's layout decides (a cuckoo filter in
    /// RedisBloom's layout with an expansion grows by sub-filters, a cuckoo filter of the
    /// paper's does not). A filter that grows need not keep its error bound: compare
    /// [`expected_fpp`](Filter::expected_fpp) with [`target_fpp`](Filter::target_fpp).
    ///
    /// ```
    /// use bloomkit::{CuckooFilter, Filter, ScalableBloomFilter};
    /// use bloomkit::cuckoo::Layout;
    /// assert!(ScalableBloomFilter::with_capacity(100, 0.01)?.grows());
    /// assert!(!CuckooFilter::with_capacity(100, 0.01)?.grows());
    /// let redis = CuckooFilter::builder().layout(Layout::RedisBloom).capacity(100);
    /// assert!(redis.clone().expansion(1).build()?.grows());
    /// assert!(!redis.build()?.grows()); // expansion 0: full is full
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    fn grows(&self) -> bool {
        self.kind().can_grow()
    }

    /// Bits of storage per item at capacity: `8 · memory_bytes / capacity`.
    fn bits_per_item(&self) -> f64 {
        bits_per_item(self.memory_bytes() as u64, self.capacity())
    }

    /// Kind-specific facts for reports such as `bloomkit info`, as (label, value) pairs:
    /// the parameters and state that the common methods do not cover.
    fn properties(&self) -> Vec<(&'static str, String)> {
        Vec::new()
    }

    /// The false-positive probability of a query now, from the filter's current content.
    fn expected_fpp(&self) -> f64;

    /// ε, the false-positive probability the filter was built for (at its capacity; for a
    /// scalable filter the bound it keeps at every size; for a stable filter the rate at
    /// its stable point).
    fn target_fpp(&self) -> f64;

    /// The false-positive probability that theory gives after `n` distinct items were
    /// inserted into an empty filter of these parameters: the kind's own formula, next to
    /// its code. Measured rates are judged against it (the studies, the statistical
    /// tests). For the stable filter, whose rate depends on the stream and not on n, it is
    /// the stable-point limit; for a cuckoo filter, n is capped at its slots.
    fn fpp_at(&self, n: u64) -> f64;
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

/// The object-safe face of a filter: insert and query items as bytes, read the size and
/// the false-positive probability, save. Every kind with [`Filter`] and [`Persist`] has it
/// (a blanket impl), so filters of different kinds can live side by side as
/// `Box<dyn DynFilter>`; [`AnyFilter`](crate::AnyFilter) is the alternative when the set of
/// kinds is the crate's own and `remove` or `union` are needed.
///
/// An item is its bytes ([`Item`]), so `insert_bytes(b"dist")` and `Filter::try_insert("dist")`
/// are the same insert.
///
/// The methods share their names with [`Filter`] and [`Persist`]. A `dyn DynFilter` needs no
/// import to call them; a module that imports `DynFilter` next to `Filter` should call
/// methods of a concrete kind as `Filter::len(&filter)`, or the call is ambiguous — which is
/// why the [`prelude`](crate::prelude) leaves `DynFilter` out.
///
/// ```
/// use bloomkit::{BloomFilter, CuckooFilter, Persist};
///
/// let mut filters: Vec<Box<dyn bloomkit::DynFilter>> = vec![
///     Box::new(BloomFilter::with_capacity(1_000, 0.01)?),
///     Box::new(CuckooFilter::with_capacity(1_000, 0.01)?),
/// ];
/// for filter in &mut filters {
///     assert!(filter.insert_bytes(b"dist")?); // new
///     assert!(filter.contains_bytes(b"dist"));
///     assert_eq!(filter.len(), 1);
///     assert!(filter.expected_fpp() < 0.01 && filter.memory_bytes() > 0);
/// }
/// let kinds: Vec<&str> = filters.iter().map(|f| f.kind().name()).collect();
/// assert_eq!(kinds, ["bloom", "cuckoo"]);
///
/// // `to_bytes` writes the kind's own file.
/// let saved = filters[1].to_bytes();
/// assert!(CuckooFilter::from_bytes(&saved)?.contains("dist"));
/// # Ok::<(), bloomkit::Error>(())
/// ```
pub trait DynFilter {
    /// Which kind of filter this is ([`Filter::kind`]).
    fn kind(&self) -> Kind;

    /// Adds the item with these bytes; says whether it was new ([`Filter::try_insert`]).
    fn insert_bytes(&mut self, item: &[u8]) -> Result<bool, Error>;

    /// `false` if the item with these bytes is certainly not in the filter
    /// ([`Filter::contains`]).
    fn contains_bytes(&self, item: &[u8]) -> bool;

    /// The number of items the filter holds by its own count ([`Filter::len`]).
    fn len(&self) -> u64;

    /// Whether nothing has been inserted ([`Filter::is_empty`]).
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The heap memory of the filter's storage, in bytes ([`Filter::memory_bytes`]).
    fn memory_bytes(&self) -> usize;

    /// The false-positive probability of a query now ([`Filter::expected_fpp`]).
    fn expected_fpp(&self) -> f64;

    /// The filter in the crate's file format ([`Persist::to_bytes`]).
    fn to_bytes(&self) -> Vec<u8>;
}

impl<T: Persist> DynFilter for T {
    fn kind(&self) -> Kind {
        Filter::kind(self)
    }
    fn insert_bytes(&mut self, item: &[u8]) -> Result<bool, Error> {
        self.try_insert(item)
    }
    fn contains_bytes(&self, item: &[u8]) -> bool {
        Filter::contains(self, item)
    }
    fn len(&self) -> u64 {
        Filter::len(self)
    }
    fn memory_bytes(&self) -> usize {
        Filter::memory_bytes(self)
    }
    fn expected_fpp(&self) -> f64 {
        Filter::expected_fpp(self)
    }
    fn to_bytes(&self) -> Vec<u8> {
        Persist::to_bytes(self)
    }
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

/// `Mergeable` for a kind whose state is one bit array `bits` plus a count it can recount
/// (`recount`) and a `layout()` that says where items land: union is the bitwise OR — the
/// filter that inserting both sets builds — and intersection the bitwise AND, both refused
/// unless the layouts are equal. The attributes given before the kind (the union's doc
/// comment with an example) go on `union`.
macro_rules! bit_array_mergeable {
    ($(#[$union_doc:meta])* $ty:ty) => {
        impl $crate::filter::Mergeable for $ty {
            $(#[$union_doc])*
            fn union(&mut self, other: &Self) -> Result<(), $crate::error::Error> {
                $crate::filter::require_same_layout(self.kind(), self.layout(), other.layout())?;
                self.bits.union_with(&other.bits);
                self.recount();
                Ok(())
            }

            /// Bitwise AND of the bit arrays: every item both filters held stays present.
            fn intersect(&mut self, other: &Self) -> Result<(), $crate::error::Error> {
                $crate::filter::require_same_layout(self.kind(), self.layout(), other.layout())?;
                self.bits.intersect_with(&other.bits);
                self.recount();
                Ok(())
            }
        }
    };
}
pub(crate) use bit_array_mergeable;

/// `8 · memory_bytes / capacity` ([`Filter::bits_per_item`]; a capacity of 0 counts as 1).
pub(crate) fn bits_per_item(memory_bytes: u64, capacity: u64) -> f64 {
    memory_bytes as f64 * 8.0 / capacity.max(1) as f64
}

/// The [`Filter`] methods that read the same in every kind, written once: inside `impl
/// Filter for T`, `filter_basics!(Variant: hashing, insert, contains, capacity, target_fpp)`
/// gives `kind()` (`Kind::Variant`) and, for each name listed, the method that forwards to
/// the kind's own field or method — `hashing` and `capacity`/`target_fpp` return the fields
/// of those names, `insert` makes `try_insert` the kind's infallible `insert` (`try_insert`
/// its fallible one), `contains` calls the kind's own `contains`, `state(array, count)`
/// gives `clear`, `len` and `memory_bytes` of a kind that is one array and a count,
/// `fill(ones, cells, k)` the classic filter's `estimated_len` and `expected_fpp` from the
/// fill and `classic_rate(cells, k)` its `fpp_at`. What a kind does its own way it writes
/// out beside the call.
macro_rules! filter_basics {
    ($kind:ident $(: $($what:ident $(($($arg:tt)*))?),*)?) => {
        fn kind(&self) -> $crate::filter::Kind {
            $crate::filter::Kind::$kind
        }
        $($($crate::filter::filter_basics!(@ $what $($($arg)*)?);)*)?
    };
    // `state(array, count)`: the kind's state is one array (with `clear` and
    // `memory_bytes`) and a count of insertions; `clear` empties both, `len` is the count
    // (documented by the optional string, where the kind counts in its own way).
    (@ state $array:ident, $count:ident $(, $len_doc:literal)?) => {
        fn clear(&mut self) {
            self.$array.clear();
            self.$count = 0;
        }
        $(#[doc = $len_doc])?
        fn len(&self) -> u64 {
            self.$count
        }
        fn memory_bytes(&self) -> usize {
            self.$array.memory_bytes()
        }
    };
    (@ hashing) => {
        fn hashing(&self) -> $crate::hash::Hashing {
            self.hashing
        }
    };
    (@ insert) => {
        fn try_insert<I: $crate::hash::Item + ?Sized>(
            &mut self,
            item: &I,
        ) -> Result<bool, $crate::error::Error> {
            Ok(Self::insert(self, item))
        }
    };
    (@ try_insert) => {
        fn try_insert<I: $crate::hash::Item + ?Sized>(
            &mut self,
            item: &I,
        ) -> Result<bool, $crate::error::Error> {
            Self::insert(self, item)
        }
    };
    (@ contains) => {
        fn contains<I: $crate::hash::Item + ?Sized>(&self, item: &I) -> bool {
            Self::contains(self, item)
        }
    };
    (@ capacity) => {
        fn capacity(&self) -> u64 {
            self.capacity
        }
    };
    (@ target_fpp) => {
        fn target_fpp(&self) -> f64 {
            self.target_fpp
        }
    };
    // `fill(ones, cells, k)`: a kind read as a classic filter of `self.cells()` cells, of
    // which `self.ones()` are set (not zero), and k = the field `self.k`.
    (@ fill $ones:ident, $cells:ident, $k:ident) => {
        /// The number of distinct items, from the fill as for a classic filter
        /// ([`params::estimate_items`](crate::params::estimate_items), Swamidass & Baldi).
        fn estimated_len(&self) -> f64 {
            $crate::params::estimate_items(self.$ones(), self.$cells(), self.$k)
        }
        /// `(set/m)^k`, the classic filter's rate at this fill
        /// ([`params::fpp_from_fill`](crate::params::fpp_from_fill)).
        fn expected_fpp(&self) -> f64 {
            $crate::params::fpp_from_fill(self.$ones(), self.$cells(), self.$k)
        }
    };
    // `classic_rate(cells, k)`: `fpp_at` is the classic filter's exact rate for m =
    // `self.cells()` and k = the field `self.k`.
    (@ classic_rate $cells:ident, $k:ident) => {
        /// The classic filter's rate after n items
        /// ([`params::fpp_exact`](crate::params::fpp_exact)).
        fn fpp_at(&self, n: u64) -> f64 {
            $crate::params::fpp_exact(self.$cells(), self.$k, n)
        }
    };
}
pub(crate) use filter_basics;

/// The getters of a kind whose state is one array of counters `counters`
/// (`PackedCounters`): m, the counter width, how many are not zero and at the maximum, and
/// one counter's value.
macro_rules! counter_array_getters {
    () => {
        /// m, the number of counters.
        pub fn num_counters(&self) -> u64 {
            self.counters.len()
        }

        /// The width of one counter in bits.
        pub fn counter_width(&self) -> u32 {
            self.counters.width()
        }

        /// The number of counters that are not zero (the set bits of the equivalent Bloom
        /// filter).
        pub fn nonzero_counters(&self) -> u64 {
            self.counters.count_nonzero()
        }

        /// The number of saturated counters: counters at the maximum `2^w − 1`, which are
        /// never decremented again. Practically always 0 at the design load (see the
        /// module docs); a growing number means the filter is overfilled or one item was
        /// inserted very many times.
        pub fn saturated_counters(&self) -> u64 {
            self.counters.count_saturated()
        }

        /// The value of counter `index` (for inspection and tests).
        ///
        /// # Panics
        ///
        /// If `index` is not below [`num_counters`](Self::num_counters).
        pub fn counter(&self, index: u64) -> u32 {
            assert!(index < self.counters.len(), "counter index out of range");
            self.counters.get(index)
        }
    };
}
pub(crate) use counter_array_getters;

/// `Mergeable` for a kind whose state is one array of counters `counters` that insertion
/// adds to, and an item count `len`: union adds the counters (saturating) — the filter that
/// inserting both multisets builds, until a sum saturates — and sums the counts;
/// intersection keeps the element-wise minimum, under which every item both filters hold
/// keeps counters at least its count, and re-estimates the count from the counters. `$check`
/// is the kind's method that refuses filters that do not combine. The doc comments (with an
/// example, and why the minimum is sound for the kind) go on `union` and `intersect`.
macro_rules! counter_mergeable {
    (
        $ty:ty, $check:ident,
        union { $(#[$union_doc:meta])* }
        intersect { $(#[$intersect_doc:meta])* }
    ) => {
        impl $crate::filter::Mergeable for $ty {
            $(#[$union_doc])*
            fn union(&mut self, other: &Self) -> Result<(), $crate::error::Error> {
                self.$check(other)?;
                self.counters.saturating_add_all(&other.counters);
                self.len = self.len.saturating_add(other.len);
                Ok(())
            }

            $(#[$intersect_doc])*
            fn intersect(&mut self, other: &Self) -> Result<(), $crate::error::Error> {
                self.$check(other)?;
                self.counters.min_with(&other.counters);
                let estimate = $crate::filter::Filter::estimated_len(self);
                self.len = $crate::params::count_from_estimate(estimate);
                Ok(())
            }
        }
    };
}
pub(crate) use counter_mergeable;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registered;

    /// A `Box<dyn DynFilter>` of a kind answers as the kind's own `Filter` and `Persist`
    /// impls do, insert for insert.
    fn dyn_agrees_with_the_kind<F: Registered + 'static>() {
        let mut reference = <F as Registered>::with_capacity(200, 0.01).unwrap();
        let mut boxed: Box<dyn DynFilter> = Box::new(reference.clone());
        assert!(boxed.is_empty());
        for i in 0..50u32 {
            let item = format!("item {}", i % 40);
            let new = boxed.insert_bytes(item.as_bytes()).unwrap();
            assert_eq!(new, reference.try_insert(&item).unwrap(), "{item}");
        }
        let kind = Filter::kind(&reference);
        assert_eq!(boxed.kind(), kind);
        assert_eq!(boxed.len(), Filter::len(&reference), "{kind}");
        assert_eq!(boxed.memory_bytes(), Filter::memory_bytes(&reference));
        assert_eq!(boxed.expected_fpp(), Filter::expected_fpp(&reference));
        assert_eq!(boxed.to_bytes(), Persist::to_bytes(&reference), "{kind}");
        for i in 0..1000u32 {
            let item = format!("item {i}");
            assert_eq!(
                boxed.contains_bytes(item.as_bytes()),
                Filter::contains(&reference, &item),
                "{kind}: {item}"
            );
        }
    }

    #[test]
    fn dyn_filter_is_every_kind_on_bytes() {
        use crate::*;
        dyn_agrees_with_the_kind::<BloomFilter>();
        dyn_agrees_with_the_kind::<BlockedBloomFilter>();
        dyn_agrees_with_the_kind::<CountingBloomFilter>();
        dyn_agrees_with_the_kind::<VariableIncrementBloomFilter>();
        dyn_agrees_with_the_kind::<DeletableBloomFilter>();
        dyn_agrees_with_the_kind::<ScalableBloomFilter>();
        dyn_agrees_with_the_kind::<StableBloomFilter>();
        dyn_agrees_with_the_kind::<CuckooFilter>();
        dyn_agrees_with_the_kind::<SplitBlockBloomFilter>();
        dyn_agrees_with_the_kind::<SpectralBloomFilter>();
        dyn_agrees_with_the_kind::<WeightedBloomFilter>();
        dyn_agrees_with_the_kind::<GeneralizedBloomFilter>();
        dyn_agrees_with_the_kind::<CompressedBloomFilter>();
        dyn_agrees_with_the_kind::<RobustBloomFilter>();
    }
}
