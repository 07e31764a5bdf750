//! The counting Bloom filter (Fan, Cao, Almeida & Broder, "Summary Cache: A Scalable
//! Wide-Area Web Cache Sharing Protocol", IEEE/ACM Transactions on Networking 8(3),
//! 2000; SIGCOMM 1998) — a Bloom filter that can delete.
//!
//! # Structure
//!
//! m small counters instead of m bits, and k hash functions with values in `[0, m)` (the
//! positions come from [`Hashing::positions`], exactly as in the classic
//! [`BloomFilter`](crate::BloomFilter)). Inserting an item adds 1 to each of its k
//! counters; a query answers "definitely not" when one of them is 0 and "maybe" when all
//! are positive; removing an item subtracts 1 from each. A position that appears twice
//! among an item's k positions (possible when m is small) is counted twice on insert and
//! on remove alike. With the same m and k, the answers are those of a Bloom filter of m
//! bits holding the same items, so the false-positive probability and the sizing are the
//! classic ones ([`params::optimal_num_bits`], [`params::optimal_num_hashes`],
//! [`params::fpp_exact`]): `m = ⌈−n ln ε / (ln 2)²⌉` counters and `k = round((m/n) ln 2)`.
//! The price of deletion is memory: 4 bits per counter, so four times the classic filter.
//!
//! # Why 4 bits, and what saturation means
//!
//! A counter holds the number of items (with repeats) that hash to it, Binomial(nk, 1/m).
//! Fan et al. bound the chance that any counter reaches j:
//! `P(max c ≥ j) ≤ m · (e·nk/(j·m))^j`, which at the optimal k (nk/m = ln 2) and j = 16
//! is `≤ 1.37·10⁻¹⁵ · m` ([`params::counter_overflow_bound`]). So 4-bit counters (the
//! default) practically never overflow at the design load; 8 and 16 bits can be chosen
//! with [`CountingBloomFilterBuilder::counter_width`] for heavy overfilling or many
//! repeats of one item.
//!
//! When a counter does reach its maximum `2^w − 1` it **saturates**: it stays at the
//! maximum and is never decremented again, because its true value is no longer known.
//! Decrementing it could bring it to 0 while items still hash to it — a false negative.
//! A saturated counter therefore keeps answering "maybe" forever (the filter errs towards
//! false positives, never false negatives); [`CountingBloomFilter::saturated_counters`]
//! reports how many there are.
//!
//! # Removing
//!
//! [`CountingBloomFilter::remove`] first checks that the item can be in the filter: every
//! counter that is not saturated must be at least the number of times the item's positions
//! name it. If not, the item is certainly absent, the result is [`Error::NotPresent`] and
//! nothing changes. Otherwise each of its k counters is decremented (saturated ones are
//! left). Remove only what you inserted: removing a false positive (an item never inserted
//! that happens to pass the check) takes counts that belong to other items and can make
//! them disappear.
//!
//! ```
//! use bloomkit::{CountingBloomFilter, Error, Persist};
//!
//! let mut filter = CountingBloomFilter::with_capacity(10_000, 0.01)?;
//! filter.insert("dist");
//! filter.insert("bloom");
//! assert!(filter.contains("dist"));
//!
//! assert_eq!(filter.remove("dist"), Ok(true));
//! assert!(!filter.contains("dist"));              // gone (with probability 1 − ε)
//! assert!(filter.contains("bloom"));              // the other item is untouched
//! assert_eq!(filter.remove("cuckoo"), Err(Error::NotPresent));
//!
//! let copy = CountingBloomFilter::from_bytes(&filter.to_bytes())?;
//! assert_eq!(copy, filter);
//! # Ok::<(), bloomkit::Error>(())
//! ```

pub(crate) mod options;
pub mod theory;

use crate::any::Summary;
use crate::bits::{CounterSpan, Locate, PackedCounters, WithLocate};
use crate::codec::{check_num_counters, Parts};
use crate::error::{DecodeError, Error};
use crate::filter::{Filter, Kind};
use crate::format::view::{all_nonzero, FilterView, KindView, Shape, ViewFacts};
use crate::hash::HashingChoice;
use crate::hash::{with_common_k, EnhancedDouble, Hashing, IndexScheme, Item};
use crate::params::{self, MAX_NUM_HASHES};
use crate::registry::ParametersBlock;
use crate::sizing;

/// The counter width used unless another is chosen: 4 bits, as Fan et al. recommend.
pub const DEFAULT_COUNTER_WIDTH: u32 = 4;

/// A counting Bloom filter: a Bloom filter of small saturating counters that can remove.
///
/// ```
/// use bloomkit::CountingBloomFilter;
///
/// let mut filter = CountingBloomFilter::with_capacity(1_000, 0.01)?;
/// assert_eq!((filter.num_counters(), filter.num_hashes()), (9_586, 7));
/// assert_eq!(filter.counter_width(), 4);
/// filter.insert(&42u64);
/// filter.insert(&42u64);          // a multiset: two copies
/// filter.remove(&42u64)?;
/// assert!(filter.contains(&42u64)); // one copy left
/// # Ok::<(), bloomkit::Error>(())
/// ```
#[derive(Clone, PartialEq)]
pub struct CountingBloomFilter {
    counters: PackedCounters,
    num_hashes: u32,
    hashing: Hashing,
    capacity: u64,
    target_fpp: f64,
    len: u64,
}

impl CountingBloomFilter {
    /// A filter for `capacity` items at false-positive probability `fpp`, with 4-bit
    /// counters and the default hashing (MurmurHash3, enhanced double hashing, seed 0).
    ///
    /// ```
    /// use bloomkit::CountingBloomFilter;
    /// assert!(CountingBloomFilter::with_capacity(0, 0.01).is_err());
    /// assert!(CountingBloomFilter::with_capacity(100, f64::NAN).is_err());
    /// ```
    pub fn with_capacity(capacity: impl crate::params::ItemCount, fpp: f64) -> Result<Self, Error> {
        Self::builder().capacity(capacity).fpp(fpp).build()
    }

    /// A builder for every other choice: explicit m and k, counter width, hashing.
    pub fn builder() -> CountingBloomFilterBuilder {
        CountingBloomFilterBuilder::default()
    }

    /// Adds one copy of an item: each of its k counters goes up by 1 (saturated counters
    /// stay at the maximum). Returns `true` if the item was certainly new (one of its
    /// counters was 0), `false` if it was already reported present.
    #[inline]
    pub fn insert<I: Item + ?Sized>(&mut self, item: &I) -> bool {
        let (hashing, k, m) = (self.hashing, self.num_hashes, self.counters.len());
        if hashing.scheme == IndexScheme::EnhancedDoubleHashing {
            // The default scheme's positions as a plain loop, unrolled for the common k
            // (as the classic filter's insert).
            let digest = item.with_bytes(|bytes| hashing.digest(bytes));
            return with_common_k(k, |k| self.add(EnhancedDouble::new(digest, k, m)));
        }
        item.with_bytes(|bytes| self.add(hashing.positions(bytes, k, m)))
    }

    /// Adds 1 at every position; `true` when one of the counters was 0. The default 4-bit
    /// counters are found by shifts ([`PackedCounters::by_shifts`]: 16 to a word, word
    /// `p >> 4`, bit `(p & 15) << 2`), other widths by the general division (the choice:
    /// [`PackedCounters::locate_choice`]).
    #[inline(always)]
    fn add(&mut self, positions: impl IntoIterator<Item = u64>) -> bool {
        let new = self.counters.locate_choice::<4>().run(Raise {
            counters: &mut self.counters,
            positions,
        });
        self.len = self.len.saturating_add(1);
        new
    }

    /// [`add`](Self::add) at positions already computed (the batch window's).
    #[inline(always)]
    fn add_at(&mut self, positions: &[u64]) -> bool {
        self.add(positions.iter().copied())
    }

    /// Whether every counter at `positions` is nonzero, each found as [`add`](Self::add)
    /// finds it.
    #[inline(always)]
    fn all_raised(&self, positions: impl IntoIterator<Item = u64>) -> bool {
        self.counters.locate_choice::<4>().run(AllRaised {
            counters: &self.counters,
            positions,
        })
    }

    /// `false` if the item is certainly absent (one of its counters is 0), `true` if it may
    /// be present.
    #[inline]
    pub fn contains<I: Item + ?Sized>(&self, item: &I) -> bool {
        item.with_bytes(|bytes| {
            let positions = self
                .hashing
                .positions(bytes, self.num_hashes, self.counters.len());
            self.all_raised(positions)
        })
    }

    /// [`insert`](Self::insert) of every item in order; returns how many were certainly new.
    /// A filter past the L2 cache hashes each item once and prefetches what its insert
    /// touches a window of items ahead ([`lookahead`](crate::lookahead)); the filter ends
    /// as after the single inserts.
    ///
    /// ```
    /// use bloomkit::CountingBloomFilter;
    /// let mut filter = CountingBloomFilter::with_capacity(1_000, 0.01)?;
    /// assert_eq!(filter.insert_batch(&["a", "b", "a"]), 2);
    /// let mut answers = Vec::new();
    /// filter.contains_batch_into(&["a", "b"], &mut answers);
    /// assert_eq!(answers, [true, true]);
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn insert_batch<I: Item>(&mut self, items: &[I]) -> u64 {
        crate::lookahead::insert_by_positions(self, items, |f, item| f.insert(item))
    }

    /// The answers of [`contains`](Self::contains) for every item, into `out` (cleared
    /// first), through the same window as [`insert_batch`](Self::insert_batch).
    pub fn contains_batch_into<I: Item>(&self, items: &[I], out: &mut Vec<bool>) {
        crate::lookahead::contains_by_positions(self, items, out, |f, item| f.contains(item))
    }

    /// Removes one copy of an item: each of its k counters goes down by 1, except
    /// saturated ones, which stay (their true value is unknown). `Ok(true)` when done.
    ///
    /// If the item is certainly absent — some counter that is not saturated is smaller
    /// than the number of times the item's positions name it (0 for a position named
    /// once) — the result is [`Error::NotPresent`] and the filter is unchanged.
    ///
    /// Only remove items you inserted: a false positive passes the check, and removing it
    /// takes counts from other items.
    pub fn remove<I: Item + ?Sized>(&mut self, item: &I) -> Result<bool, Error> {
        let mut positions = [0u64; MAX_NUM_HASHES as usize];
        let k = self.num_hashes as usize;
        item.with_bytes(|bytes| {
            let m = self.counters.len();
            for (slot, p) in
                positions
                    .iter_mut()
                    .zip(self.hashing.positions(bytes, self.num_hashes, m))
            {
                *slot = p;
            }
        });
        let positions = &positions[..k];
        let max = self.counters.max_value();
        // Check everything before changing anything, so that a failed remove changes
        // nothing. k ≤ 64, so counting repeats by comparison is cheap.
        for &p in positions {
            let value = self.counters.get(p);
            let times = positions.iter().filter(|&&q| q == p).count() as u32;
            if value != max && value < times {
                return Err(Error::NotPresent);
            }
        }
        for &p in positions {
            let value = self.counters.get(p);
            if value != max {
                self.counters.set(p, value - 1);
            }
        }
        self.len = self.len.saturating_sub(1);
        Ok(true)
    }

    crate::filter::counter_array_getters!();

    crate::sizing::getters! {
        /// k, the number of hash functions.
        num_hashes: u32;
    }

    crate::sizing::capacity_and_fpp_getters!();

    fn check_compatible(&self, other: &Self) -> Result<(), Error> {
        crate::filter::require_same_layout(self.kind(), self.layout(), other.layout())
    }

    /// The parameters that decide where an item lands, and the hashing, for
    /// [`require_same_layout`](crate::filter::require_same_layout).
    fn layout(&self) -> String {
        format!(
            "m = {}, k = {}, {}-bit counters, {}",
            self.num_counters(),
            self.num_hashes,
            self.counter_width(),
            self.hashing
        )
    }
}

impl Filter for CountingBloomFilter {
    crate::filter::filter_basics!(
        Counting: hashing, insert, contains, capacity, target_fpp,
        state(
            counters,
            len,
            "Insertions minus successful removals (a multiset count: repeats count). After \
             an intersection, where it is unknown, the estimate from the counters."
        ),
        fill(nonzero_counters, num_counters, num_hashes),
        classic_rate(num_counters, num_hashes)
    );

    fn properties(&self) -> Vec<(&'static str, String)> {
        properties(
            &Stored::of(self),
            self.nonzero_counters(),
            self.saturated_counters(),
        )
    }
}

/// [`Filter::properties`] of a filter with these stored parameters and these counts of
/// non-zero and saturated counters (a view's summary gives the same).
fn properties(stored: &Stored, nonzero: u64, saturated: u64) -> Vec<(&'static str, String)> {
    let m = stored.num_counters;
    vec![
        ("counters (m)", m.to_string()),
        ("counter width", format!("{} bits", stored.counter_width)),
        ("hash functions (k)", stored.num_hashes.to_string()),
        ("target fpp", format!("{}", stored.target_fpp)),
        ("nonzero counters", nonzero.to_string()),
        ("fill ratio", format!("{:.6}", nonzero as f64 / m as f64)),
        ("saturated counters", saturated.to_string()),
        (
            "overflow bound at capacity",
            format!(
                "{:.3e}",
                params::counter_overflow_bound(
                    m,
                    stored.num_hashes,
                    stored.capacity,
                    1 << stored.counter_width
                )
            ),
        ),
    ]
}

impl crate::lookahead::ByDigest for CountingBloomFilter {
    fn digest_hashing(&self) -> Option<Hashing> {
        crate::lookahead::unless_seeded(self.hashing)
    }
    fn batch_bits(&self) -> u64 {
        self.counters.len() * self.counter_width() as u64
    }
    crate::lookahead::one_array_prefetch_query!(counters, num_hashes);
    #[inline(always)]
    fn contains_digest(&self, digest: u128) -> bool {
        let (k, m) = (self.num_hashes, self.counters.len());
        self.all_raised(self.hashing.positions_with_digest(&[], digest, k, m))
    }
    #[inline(always)]
    fn insert_digest(&mut self, digest: u128) -> bool {
        let (k, m) = (self.num_hashes, self.counters.len());
        self.add(self.hashing.positions_with_digest(&[], digest, k, m))
    }
    /// Each insert writes k counters raised.
    fn advise_batch_insert(&mut self, items: u64) {
        self.counters
            .advise_bulk_write(items.saturating_mul(u64::from(self.num_hashes)));
    }
}

/// The insert's counters: raises the counter at each position by 1 (saturated ones stay),
/// each found by the [`Locate`] it runs with; `true` when one of them was 0.
struct Raise<'a, P> {
    counters: &'a mut PackedCounters,
    positions: P,
}

impl<P: IntoIterator<Item = u64>> WithLocate for Raise<'_, P> {
    type Out = bool;
    #[inline(always)]
    fn run(self, at: impl Locate) -> bool {
        let counters = self.counters;
        self.positions
            .into_iter()
            .fold(false, |new, p| new | (counters.increment_by(at, p) == 0))
    }
}

/// The query's counters: whether every counter at the positions is nonzero, each found by
/// the [`Locate`] it runs with.
struct AllRaised<'a, P> {
    counters: &'a PackedCounters,
    positions: P,
}

impl<P: IntoIterator<Item = u64>> WithLocate for AllRaised<'_, P> {
    type Out = bool;
    #[inline(always)]
    fn run(self, at: impl Locate) -> bool {
        let counters = self.counters;
        self.positions
            .into_iter()
            .all(|p| counters.get_by(at, p) != 0)
    }
}

impl crate::lookahead::ByPositions for CountingBloomFilter {
    type Extra = ();
    crate::lookahead::one_array_positions!(counters, num_hashes);
    #[inline(always)]
    fn contains_at(&self, ps: &[u64], _: ()) -> bool {
        self.all_raised(ps.iter().copied())
    }
    #[inline(always)]
    fn insert_at(&mut self, ps: &[u64], _: ()) -> bool {
        self.add_at(ps)
    }
}

crate::registry::registered!(
    CountingBloomFilter,
    {
        name: "counting",
        summary: "Counting Bloom filter (Fan et al. 2000): saturating counters; remove, union.",
        grow: false,
        forgets: false,
        index_scheme: true,
    },
    remove,
    merge
);

crate::filter::counter_mergeable!(
    CountingBloomFilter,
    check_compatible,
    union {
    /// Adds the counters (saturating): the filter that inserting both multisets would have
    /// built, as long as no sum reaches the maximum. `len` becomes the sum of both.
    ///
    /// ```
    /// use bloomkit::{CountingBloomFilter, Mergeable};
    /// let mut a = CountingBloomFilter::with_capacity(100, 0.01)?;
    /// let mut b = a.clone();
    /// a.insert("left");
    /// b.insert("right");
    /// a.union(&b)?;
    /// assert!(a.contains("left") && a.contains("right"));
    /// a.remove("right")?;
    /// assert!(a.contains("left") && !a.contains("right"));
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    }
    intersect {
    /// Element-wise minimum. Each counter stays at least the count of the items both
    /// filters hold (a saturated counter yields to the other filter's exact one), so every
    /// common item is still found and can be removed. `len` becomes the estimate from the
    /// counters.
    }
);

crate::filter::collection_impls!(
    /// Collects items into a filter sized for their number at ε = 1% with 4-bit counters.
    /// (The items are buffered to count them; use [`CountingBloomFilter::with_capacity`] and
    /// `extend` to choose ε or to stream.)
    ///
    /// ```
    /// use bloomkit::CountingBloomFilter;
    /// let filter: CountingBloomFilter = ["a", "b", "c"].into_iter().collect();
    /// assert!(filter.contains("b"));
    /// assert_eq!(filter.capacity(), 3);
    /// ```
    CountingBloomFilter
);

/// Builds a [`CountingBloomFilter`] from a capacity and ε, or from explicit m and k.
///
/// ```
/// use bloomkit::{CountingBloomFilter, HashFunction, IndexScheme};
///
/// let wide = CountingBloomFilter::builder()
///     .capacity(10_000)
///     .fpp(0.001)
///     .counter_width(8)
///     .index_scheme(IndexScheme::SeededHashes)
///     .build()?;
/// assert_eq!((wide.counter_width(), wide.num_hashes()), (8, 10));
///
/// let explicit = CountingBloomFilter::builder()
///     .num_counters(1 << 16)
///     .num_hashes(5)
///     .hash_function(HashFunction::Xxh3)
///     .random_seed()
///     .build()?;
/// assert_eq!(explicit.num_counters(), 1 << 16);
/// assert!(CountingBloomFilter::builder().capacity(10).counter_width(17).build().is_err());
/// # Ok::<(), bloomkit::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
#[must_use = "a builder does nothing until .build() is called"]
pub struct CountingBloomFilterBuilder {
    capacity: Option<u64>,
    fpp: Option<f64>,
    num_counters: Option<u64>,
    num_hashes: Option<u32>,
    counter_width: Option<u32>,
    hashing: HashingChoice,
}

impl CountingBloomFilterBuilder {
    crate::sizing::array_setters! {
        num_counters, "counters";

        /// The width of each counter in bits: 4 (default), 8 or 16 are the usual choices; any
        /// width from 1 to 16 is accepted.
        counter_width: u32;
    }

    /// Validates the parameters and allocates the filter.
    ///
    /// Sizing is that of the classic filter with counters in place of bits. With neither
    /// capacity nor m, the error is [`Error::ZeroCapacity`]. With m but no capacity, the
    /// capacity is the n at which m and k reach the optimal fill, `m ln 2 / k`. The total
    /// size `m · width` must stay within [`MAX_NUM_BITS`](crate::params::MAX_NUM_BITS).
    pub fn build(self) -> Result<CountingBloomFilter, Error> {
        let width = crate::sizing::counter_width(self.counter_width, DEFAULT_COUNTER_WIDTH)?;
        let d = sizing::dimensions(
            self.capacity,
            self.fpp,
            self.num_counters,
            self.num_hashes,
            width,
        )?;
        let hashing = self.hashing.resolve()?;
        Ok(CountingBloomFilter {
            counters: PackedCounters::zeros(d.num_cells, width)?,
            num_hashes: d.num_hashes,
            hashing,
            capacity: d.capacity,
            target_fpp: d.target_fpp,
            len: 0,
        })
    }
}

crate::codec::stored! {
    /// The counting filter's parameters on disk (40 bytes): the width is the counters' bits.
    /// Payload: the packed counters, 64-bit little-endian words of ⌊64/width⌋ counters each
    /// (see `PackedCounters`).
    struct Stored of f: CountingBloomFilter {
        num_counters: u64 = f.num_counters(),
        num_hashes: u32 = f.num_hashes => check_num_hashes,
        counter_width: u32 = f.counter_width() => check_counter_width,
        capacity: u64 = f.capacity => check_capacity,
        target_fpp: f64 = f.target_fpp => check_target_fpp,
        len: u64 = f.len,
    }
    persist Counting, payload counters;
}

impl CountingBloomFilter {
    fn decode(parts: &Parts<'_>) -> Result<Self, DecodeError> {
        let Shape { stored, hashing } = ViewShape::read(parts)?;
        let Stored {
            num_counters,
            num_hashes,
            counter_width: width,
            capacity,
            target_fpp,
            len,
        } = stored;
        let counters = PackedCounters::from_le_bytes(num_counters, width, parts.payload)?;
        Ok(CountingBloomFilter {
            counters,
            num_hashes,
            hashing,
            capacity,
            target_fpp,
            len,
        })
    }
}

impl Stored {
    /// The counters in the payload: all of it.
    fn span(&self) -> CounterSpan {
        CounterSpan {
            at: 0,
            len: self.num_counters,
            width: self.counter_width,
        }
    }
}

/// A counting filter as loading and a read-only view ([`format::view`](crate::format::view))
/// read it: the stored parameters, checked, and the query over counters the view fetches
/// from the file. Loading checks the padding bits of every word; the view checks them in
/// each chunk when it first touches it ([`KindView::check_piece`]).
type ViewShape = Shape<Stored>;

impl KindView for ViewShape {
    fn read(parts: &Parts<'_>) -> Result<Self, DecodeError> {
        parts.expect_kind(Kind::Counting)?;
        let stored = Stored::read(parts.params)?;
        check_num_counters(stored.num_counters, 0, stored.counter_width)?;
        // The payload's length against m and the width, before anything is allocated.
        PackedCounters::check_encoded_len(
            stored.num_counters,
            stored.counter_width,
            parts.payload.len(),
        )?;
        Ok(Shape::of(stored, parts))
    }

    fn facts(&self) -> ViewFacts {
        let s = &self.stored;
        crate::format::view::view_facts!(s, s.num_counters, s.num_hashes, s.len)
    }

    fn contains(&self, bytes: &[u8], view: &FilterView) -> Result<bool, Error> {
        let Stored {
            num_counters,
            num_hashes,
            ..
        } = self.stored;
        let span = self.stored.span();
        let positions = self.hashing.positions(bytes, num_hashes, num_counters);
        all_nonzero(positions, |p| view.counter(&span, p))
    }

    /// The non-zero and saturated counters, counted over the payload; the rest as the
    /// loaded filter works it out from them.
    fn summary(&self, view: &FilterView) -> Result<Summary, Error> {
        let s = &self.stored;
        let max = (1u32 << s.counter_width) - 1;
        let (mut nonzero, mut saturated) = (0u64, 0u64);
        view.for_each_counter(&s.span(), |c| {
            nonzero += (c != 0) as u64;
            saturated += (c == max) as u64;
        })?;
        let block = ParametersBlock::sized(s.capacity, s.target_fpp, s.num_hashes, s.num_counters);
        Ok(view.summary_of(
            Some(block),
            properties(s, nonzero, saturated),
            params::estimate_items(nonzero, s.num_counters, s.num_hashes),
            params::fpp_from_fill(nonzero, s.num_counters, s.num_hashes),
        ))
    }

    /// The padding bits of every word are zero, as loading requires.
    fn check_piece(&self, offset: usize, bytes: &[u8]) -> Result<(), DecodeError> {
        self.stored.span().check_words(offset, bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::Persist;
    use crate::filter::Mergeable;
    use crate::params::MAX_NUM_BITS;

    /// A small filter whose items repeat positions: m = 3, k = 4 forces a repeat.
    fn tiny() -> CountingBloomFilter {
        CountingBloomFilter::builder()
            .num_counters(3)
            .num_hashes(4)
            .counter_width(8)
            .build()
            .unwrap()
    }

    #[test]
    fn inserted_items_are_found_and_removed_items_are_not() {
        let mut f = CountingBloomFilter::with_capacity(1000, 0.01).unwrap();
        f.extend(0..1000u32);
        assert!((0..1000u32).all(|i| f.contains(&i)));
        for i in 0..500u32 {
            assert_eq!(f.remove(&i), Ok(true));
        }
        assert!((500..1000u32).all(|i| f.contains(&i)));
        let left = (0..500u32).filter(|i| f.contains(i)).count();
        assert!(left < 25, "{left} of 500 removed items still reported");
        assert_eq!(Filter::len(&f), 500);
    }

    #[test]
    fn a_position_named_twice_is_counted_twice_on_insert_and_remove() {
        let mut f = tiny();
        f.insert("x");
        let total: u32 = (0..3).map(|i| f.counter(i)).sum();
        assert_eq!(total, 4, "k = 4 increments on 3 counters");
        assert_eq!(f.remove("x"), Ok(true));
        assert!((0..3).all(|i| f.counter(i) == 0));
        assert_eq!(f.remove("x"), Err(Error::NotPresent));
    }

    #[test]
    fn remove_needs_as_many_counts_as_the_item_has_repeats() {
        // Find an item that names one counter at least twice and set that counter to 1:
        // the item passes `contains` but cannot have been inserted.
        let mut f = tiny();
        let hashing = f.hashing;
        let (item, p) = (0u32..)
            .find_map(|i| {
                let ps: Vec<u64> = hashing.positions(&i.to_le_bytes(), 4, 3).collect();
                let p = *ps
                    .iter()
                    .find(|&&p| ps.iter().filter(|&&q| q == p).count() >= 2)?;
                Some((i, p))
            })
            .unwrap();
        for q in 0..3 {
            f.counters.set(q, 1);
        }
        assert!(f.contains(&item));
        assert!(f.counter(p) == 1);
        let before = f.to_bytes();
        assert_eq!(f.remove(&item), Err(Error::NotPresent));
        assert_eq!(f.to_bytes(), before);
    }

    #[test]
    fn saturated_counters_are_reported_and_never_decremented() {
        let mut f = CountingBloomFilter::builder()
            .num_counters(1000)
            .num_hashes(3)
            .build()
            .unwrap();
        for _ in 0..20 {
            f.insert("hot");
        }
        let distinct = {
            let mut ps: Vec<u64> = f.hashing.positions(b"hot", 3, 1000).collect();
            ps.sort_unstable();
            ps.dedup();
            ps.len() as u64
        };
        assert_eq!(f.saturated_counters(), distinct);
        for _ in 0..20 {
            assert_eq!(f.remove("hot"), Ok(true));
        }
        assert!(f.contains("hot"));
        assert_eq!(f.saturated_counters(), distinct);
        assert!(f
            .properties()
            .contains(&("saturated counters", distinct.to_string())));
    }

    #[test]
    fn union_adds_counts_and_intersection_keeps_common_items() {
        let mut a = CountingBloomFilter::with_capacity(1000, 0.001).unwrap();
        let mut b = a.clone();
        a.extend(0..300u32);
        b.extend(200..500u32);
        let mut u = a.clone();
        u.union(&b).unwrap();
        assert_eq!(Filter::len(&u), 600);
        // Items in both are there twice: two removes succeed.
        for i in 200..300u32 {
            u.remove(&i).unwrap();
            u.remove(&i).unwrap();
        }
        assert!((0..200u32).chain(300..500).all(|i| u.contains(&i)));
        a.intersect(&b).unwrap();
        assert!((200..300u32).all(|i| a.contains(&i)));
        let others = (0..200u32)
            .chain(300..500)
            .filter(|i| a.contains(i))
            .count();
        assert!(others < 100, "{others}");
        for i in 200..300u32 {
            assert_eq!(a.remove(&i), Ok(true));
        }
    }

    #[test]
    fn mismatched_filters_cannot_be_combined() {
        let mut a = CountingBloomFilter::with_capacity(1000, 0.01).unwrap();
        let wider = CountingBloomFilter::builder()
            .capacity(1000)
            .counter_width(8)
            .build()
            .unwrap();
        let seeded = CountingBloomFilter::builder()
            .capacity(1000)
            .seed(9)
            .build()
            .unwrap();
        let bigger = CountingBloomFilter::with_capacity(2000, 0.01).unwrap();
        for other in [&wider, &seeded, &bigger] {
            assert!(matches!(a.union(other), Err(Error::Incompatible(_))));
            assert!(matches!(a.intersect(other), Err(Error::Incompatible(_))));
        }
    }

    #[test]
    fn union_saturates_instead_of_wrapping() {
        let mut a = CountingBloomFilter::builder()
            .num_counters(100)
            .num_hashes(2)
            .build()
            .unwrap();
        for _ in 0..10 {
            a.insert("x");
        }
        let b = a.clone();
        a.union(&b).unwrap();
        assert!(a.contains("x"));
        assert!(a.saturated_counters() >= 1);
        assert_eq!(Filter::len(&a), 20);
    }

    #[test]
    fn degenerate_parameters_are_errors() {
        let b = CountingBloomFilter::builder;
        assert_eq!(b().build().unwrap_err(), Error::ZeroCapacity);
        assert_eq!(b().num_counters(0).build().unwrap_err(), Error::ZeroBits);
        assert_eq!(
            b().num_counters(10).num_hashes(0).build().unwrap_err(),
            Error::ZeroHashes
        );
        assert!(matches!(
            b().num_counters(10).num_hashes(65).build(),
            Err(Error::TooManyHashes { .. })
        ));
        for w in [0, 17, 64] {
            assert_eq!(
                b().capacity(10).counter_width(w).build().unwrap_err(),
                Error::InvalidCounterWidth(w)
            );
        }
        assert!(matches!(
            b().num_counters(MAX_NUM_BITS / 4 + 1).build(),
            Err(Error::TooLarge { .. })
        ));
        assert!(matches!(
            b().num_counters(u64::MAX).build(),
            Err(Error::TooLarge { .. })
        ));
        assert!(matches!(
            CountingBloomFilter::with_capacity(u64::MAX, 0.01),
            Err(Error::CapacityTooLarge {
                capacity: u64::MAX,
                ..
            })
        ));
        for fpp in [0.0, 1.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(matches!(
                CountingBloomFilter::with_capacity(10, fpp),
                Err(Error::InvalidFpp(_))
            ));
        }
        assert_eq!(
            b().num_counters(100).capacity(0).build().unwrap_err(),
            Error::ZeroCapacity
        );
    }

    #[test]
    fn sizing_is_the_classic_one_with_counters_for_bits() {
        let f = CountingBloomFilter::with_capacity(58_110, 0.001).unwrap();
        assert_eq!((f.num_counters(), f.num_hashes()), (835_482, 10));
        // 4 bits per counter: 16 counters per word.
        assert_eq!(f.memory_bytes(), 835_482usize.div_ceil(16) * 8);
        let explicit = CountingBloomFilter::builder()
            .num_counters(9_586)
            .num_hashes(7)
            .build()
            .unwrap();
        assert_eq!(explicit.capacity(), 949);
    }

    #[test]
    fn debug_shows_the_parameters() {
        let f = CountingBloomFilter::with_capacity(1000, 0.01).unwrap();
        let s = format!("{f:?}");
        for needle in [
            "num_counters: 9586",
            "counter_width: 4",
            "num_hashes: 7",
            "capacity: 1000",
        ] {
            assert!(s.contains(needle), "{s}");
        }
    }

    #[test]
    fn clear_empties_the_filter() {
        let mut f: CountingBloomFilter = (0..100u32).collect();
        assert_eq!(Filter::len(&f), 100);
        f.clear();
        assert!(Filter::is_empty(&f));
        assert!(!f.contains(&5u32));
        assert_eq!(f.nonzero_counters(), 0);
    }
}
