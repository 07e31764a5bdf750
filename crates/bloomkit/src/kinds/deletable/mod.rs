//! The deletable Bloom filter (Rothenberg, Macapuna, Verdi & Magalhães, "The Deletable
//! Bloom Filter: A New Member of the Bloom Family", IEEE Communications Letters 14(6),
//! 2010): a classic Bloom filter that can remove most of its items for a few extra bits.
//!
//! # Structure
//!
//! A classic filter cannot clear an item's bits because another item may share them. The
//! deletable filter remembers, coarsely, *where* bits were shared. Its m bits are laid out
//! as in the paper:
//!
//! ```text
//!   bit  0 … r−1      collision bitmap: bit i = 1 when region i has seen a collision
//!   bit  r … m−1      data: m' = m − r bits, split into r regions of about m'/r bits
//! ```
//!
//! Data bit j (0 ≤ j < m') lies in region `⌊j · r / m'⌋`, so region sizes differ by at most
//! one bit. Everything — bitmap and data — lives in one bit array of m bits, so
//! [`memory_bytes`](Filter::memory_bytes) and the bits per item count the bitmap too.
//!
//! * **Insert**: for each of the item's k positions (in the data part), if the bit is
//!   already 1 — set by another item, by an earlier insertion of the same item, or by
//!   another of this item's own positions — mark its region as collided; then set it.
//! * **Query**: all k bits set, exactly as in the classic filter.
//! * **Remove**: if one of the item's bits is 0 the item is certainly absent: an
//!   [`Error::NotPresent`], nothing changes. Otherwise reset those of its bits that lie in
//!   collision-free regions. `Ok(true)` when at least one bit was reset: the item is then
//!   reported absent (fully removed). `Ok(false)` when all its bits lie in collided regions:
//!   it cannot be removed and stays.
//!
//! **Why removal never creates a false negative.** In a collision-free region every set bit
//! was set by exactly one insertion of one item (a second setting would have been a
//! collision). Resetting such a bit therefore only affects the item being removed. Bits in
//! collided regions are never reset. This holds for items that were really inserted:
//! removing an item that was never inserted but is reported present (a false positive)
//! resets bits that belong to others, exactly as in a counting filter — remove only what
//! you inserted.
//!
//! # How many items can be removed
//!
//! An item is deletable when one of its k bits is in a collision-free region. The
//! probability, as a function of m, k, n and r, is [`params::deletable_probability`] (the
//! derivation is there): it depends mostly on the region size m'/r. At capacity with the
//! optimal k about half of the data bits are set, so large regions almost surely contain a
//! collision: with r = 16 regions (as in the TU Bergakademie Freiberg lecture "Bloom-Filter") a filter sized for 1000 items at
//! ε = 1% has regions of 600 bits; 73% of the items can be removed at n = 100, 17% at 150,
//! 1.5% at 200 and essentially none beyond 250. Small regions make most items deletable,
//! paid for with r bitmap bits:
//!
//! ```text
//!   bits per region   bitmap overhead   deletable at capacity (ε = 1%, k = 7)   at half
//!          4               25 %                      0.90                          1.00
//!          8               12.5 %                    0.64                          0.99
//!         16                6.3 %                    0.20                          0.92
//!         32                3.1 %                    0.01                          0.62
//! ```
//!
//! The default is therefore one region per [`DEFAULT_REGION_BITS`] = 8 data bits rather
//! than a fixed region count; [`DeletableBloomFilterBuilder::regions`] sets r directly (for
//! the paper's experiments and the studies of this project). [`DeletableBloomFilter::expected_deletable_fraction`]
//! gives the formula's value for the filter as it is; [`DeletableBloomFilter::deletable_fraction`]
//! measures it over items the caller holds.
//!
//! # False positives and sizing
//!
//! Queries see only the data part, so the false-positive probability is the classic one
//! with m' = m − r bits: `(1 − (1 − 1/m')^(kn))^k` (see [`crate::params`]). A filter for n
//! items at ε is therefore sized with the classic rule for the data part,
//! `m' = ⌈−n ln ε / (ln 2)²⌉`, `k = round((m'/n) ln 2)`, and the bitmap is added on top:
//! `m = m' + r`. Removing items lowers the false-positive rate again, since their bits in
//! collision-free regions become 0.
//!
//! # Union
//!
//! [`Mergeable::union`] ORs the data bits and the collision bitmaps, and also marks as
//! collided every region in which both inputs had the same bit set — that bit now stands for
//! two items, a collision that neither input had recorded. (Bits set by the two inputs in
//! different cells of a region are no collision.) For filters without removals the result
//! is exactly the filter that inserting both sets into one filter would have built (after
//! removals the bitmaps may carry marks of removed items, which only make fewer items
//! deletable), so removal stays safe after a union. [`Mergeable::intersect`] ANDs the data
//! bits and ORs the bitmaps: a region collision-free in the result is collision-free in both
//! inputs, so each remaining bit there still has a single owner and removal stays safe for
//! the items that were in both sets.
//!
//! ```
//! use bloomkit::DeletableBloomFilter;
//!
//! let mut filter = DeletableBloomFilter::with_capacity(1_000, 0.01)?;
//! for word in ["alpha", "beta", "gamma"] {
//!     filter.insert(word);
//! }
//! // With three items in a filter for 1000, every region is still collision-free.
//! assert_eq!(filter.remove("beta"), Ok(true));
//! assert!(!filter.contains("beta"));
//! assert!(filter.contains("alpha") && filter.contains("gamma"));
//! // Removing an item that is certainly absent is an error and changes nothing.
//! assert!(filter.remove("beta").is_err());
//! # Ok::<(), bloomkit::Error>(())
//! ```

mod options;
pub mod theory;

use crate::any::Summary;
use crate::bits::BitVec;
use crate::codec::{invalid, Parts};
use crate::error::{DecodeError, Error};
use crate::filter::{Filter, Kind, Mergeable};
use crate::format::view::{infallible, try_all, FilterView, KindView, Shape, ViewFacts};
use crate::hash::HashingChoice;
use crate::hash::{Hashing, Item, Positions};
use crate::params::{self, MAX_NUM_BITS};
use crate::registry::ParametersBlock;
use crate::sizing;

/// Data bits per region when neither a region count nor a region size is given. See the
/// module documentation for the trade-off.
pub const DEFAULT_REGION_BITS: u64 = 8;

/// A Bloom filter that can remove the items whose bits lie in collision-free regions.
///
/// ```
/// use bloomkit::{DeletableBloomFilter, Filter};
///
/// let mut filter = DeletableBloomFilter::builder()
///     .capacity(10_000)
///     .fpp(0.01)
///     .regions(20_000)
///     .build()?;
/// assert_eq!(filter.num_bits(), filter.data_bits() + 20_000);
/// filter.extend(0..5_000u32);
/// let removable = filter.deletable_fraction(0..5_000u32).unwrap();
/// assert!(removable > 0.9, "{removable}");
/// assert!((removable - filter.expected_deletable_fraction()).abs() < 0.05);
/// # Ok::<(), bloomkit::Error>(())
/// ```
#[derive(Clone, PartialEq)]
pub struct DeletableBloomFilter {
    /// m bits: the collision bitmap in `[0, r)`, the data in `[r, m)`.
    bits: BitVec,
    regions: u64,
    /// [`region_step`]`(regions, data bits)`: the regions by a multiply ([`region_by_step`]).
    step: u128,
    num_hashes: u32,
    hashing: Hashing,
    capacity: u64,
    target_fpp: f64,
    inserted: u64,
}

/// Sets data bit `j` (of the data bits after `r` region bits); when it was set already,
/// also marks its region as collided. `true` when the bit was 0.
///
/// With no branch on the bit: the region is found and its bitmap word or-ed for every
/// position, with the region's bit only when the data bit was set. Whether a bit is set
/// already is close to a coin toss for the branch predictor (the data part fills from 0 to
/// about half set), so an `if` on it was mispredicted for a fair share of the k positions
/// of every insert (2.7 an insert through the window at n = 10⁶, callgrind's branch
/// simulation; `BENCHMARKS.md`, "Branch-free inserts"). [`region_by_step`] is two
/// multiplies and no branch, so finding every position's region costs less than those
/// mispredictions.
#[inline(always)]
fn set_data_bit(bits: &mut BitVec, j: u64, r: u64, step: u128) -> bool {
    let was_set = bits.set_and_get(r + j);
    bits.set_when(region_by_step(j, step), was_set);
    was_set == 0
}

/// The region of data bit `j` of `data_bits`, for `regions` regions: `⌊j · r / m'⌋`.
#[inline]
fn region_of(j: u64, regions: u64, data_bits: u64) -> u64 {
    ((j as u128 * regions as u128) / data_bits as u128) as u64
}

/// The fraction bits of [`region_step`]: 80, enough that [`region_by_step`] is exact for
/// data parts up to 2⁴⁰ bits ([`MAX_NUM_BITS`]), since it is exact when m′² ≤ 2^`STEP_BITS`.
const STEP_BITS: u32 = 80;

/// ⌈2⁸⁰ · r / m′⌉ (at most 2⁸⁰, for r = m′): the multiplier by which [`region_by_step`]
/// finds a region without a division.
fn region_step(regions: u64, data_bits: u64) -> u128 {
    ((regions as u128) << STEP_BITS).div_ceil(data_bits.max(1) as u128)
}

/// [`region_of`] by a multiply instead of a 128-bit division (a call of tens of
/// instructions): `⌊j · step / 2⁸⁰⌋` with `step` = [`region_step`]`(r, m′)`, exact for every
/// j < m′ ≤ 2⁴⁰, with no correction and no branch. Write `step = 2⁸⁰r/m′ + e` with
/// 0 ≤ e < 1 and `j·r = q·m′ + t` with 0 ≤ t ≤ m′ − 1: then
/// `j · step / 2⁸⁰ = q + t/m′ + j·e/2⁸⁰`, where `t/m′ ≤ 1 − 1/m′` and
/// `j·e/2⁸⁰ < m′/2⁸⁰ ≤ 1/m′` (as m′² ≤ 2⁸⁰), so the floor is q. The product stays below
/// 2⁴⁰ · 2⁸⁰ = 2¹²⁰; `u128` arithmetic makes it two multiplies.
#[inline(always)]
fn region_by_step(j: u64, step: u128) -> u64 {
    ((j as u128 * step) >> STEP_BITS) as u64
}

impl DeletableBloomFilter {
    /// A filter for `capacity` items at false-positive probability `fpp`, with one region per
    /// [`DEFAULT_REGION_BITS`] data bits and the default hashing (MurmurHash3, enhanced
    /// double hashing, seed 0).
    ///
    /// ```
    /// use bloomkit::DeletableBloomFilter;
    /// let filter = DeletableBloomFilter::with_capacity(1_000, 0.01)?;
    /// assert_eq!(filter.data_bits(), 9_586); // the classic filter's m for n = 1000, ε = 1%
    /// assert_eq!(filter.regions(), 1_199); // ⌈9586 / 8⌉
    /// assert_eq!(filter.num_bits(), 9_586 + 1_199);
    /// assert_eq!(filter.num_hashes(), 7);
    /// assert!(DeletableBloomFilter::with_capacity(0, 0.01).is_err());
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn with_capacity(capacity: impl crate::params::ItemCount, fpp: f64) -> Result<Self, Error> {
        Self::builder().capacity(capacity).fpp(fpp).build()
    }

    /// A builder for every other choice: regions, explicit m and k, hashing.
    pub fn builder() -> DeletableBloomFilterBuilder {
        DeletableBloomFilterBuilder::default()
    }

    fn data_len(&self) -> u64 {
        self.bits.len() - self.regions
    }

    /// Adds an item. Returns `true` if the filter changed (at least one of its bits was 0, so
    /// the item was certainly new), `false` if it was already reported present — in which
    /// case all its regions are now marked collided and it can no longer be removed.
    #[inline]
    pub fn insert<I: Item + ?Sized>(&mut self, item: &I) -> bool {
        let (hashing, k) = (self.hashing, self.num_hashes);
        let data = self.data_len();
        item.with_bytes(|bytes| self.add(hashing.positions(bytes, k, data)))
    }

    /// Sets the bits at these data positions, marking the region of each that was set
    /// already; `true` when one was 0.
    #[inline(always)]
    fn add(&mut self, positions: Positions<'_>) -> bool {
        let (r, step) = (self.regions, self.step);
        let bits = &mut self.bits;
        let mut changed = false;
        // `for_each` runs `Positions`' own fold, which matches the index scheme once per
        // item; a `for` loop calls `Positions::next` out of line per position (184
        // instructions per insert at k = 7, callgrind).
        positions.for_each(|j| changed |= set_data_bit(bits, j, r, step));
        self.inserted += changed as u64;
        changed
    }

    /// [`add`](Self::add) at positions already computed (the batch window's).
    #[inline(always)]
    fn add_at(&mut self, positions: &[u64]) -> bool {
        let (r, step) = (self.regions, self.step);
        let bits = &mut self.bits;
        let mut changed = false;
        for &j in positions {
            changed |= set_data_bit(bits, j, r, step);
        }
        self.inserted += changed as u64;
        changed
    }

    /// `false` if the item is certainly absent, `true` if it may be present.
    #[inline]
    pub fn contains<I: Item + ?Sized>(&self, item: &I) -> bool {
        let (r, data) = (self.regions, self.data_len());
        item.with_bytes(|bytes| {
            let positions = self.hashing.positions(bytes, self.num_hashes, data);
            infallible(holds(positions, r, |p| Ok(self.bits.get(p))))
        })
    }

    /// [`insert`](Self::insert) of every item in order; returns how many were certainly new.
    /// A filter past the L2 cache hashes each item once and prefetches what its insert
    /// touches a window of items ahead ([`lookahead`](crate::lookahead)); the filter ends
    /// as after the single inserts.
    ///
    /// ```
    /// use bloomkit::DeletableBloomFilter;
    /// let mut filter = DeletableBloomFilter::with_capacity(1_000, 0.01)?;
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

    /// Removes an item: resets its bits that lie in collision-free regions.
    ///
    /// * `Ok(true)`: at least one bit was reset; the item is no longer reported present.
    /// * `Ok(false)`: every one of its bits lies in a collided region; nothing changed and
    ///   the item stays (reported present).
    /// * `Err(Error::NotPresent)`: one of its bits is 0, so it is certainly not in the
    ///   filter; nothing changed.
    ///
    /// Other items are never affected, provided that only inserted items are removed (see
    /// the module documentation).
    pub fn remove<I: Item + ?Sized>(&mut self, item: &I) -> Result<bool, Error> {
        let (hashing, k, r) = (self.hashing, self.num_hashes, self.regions);
        let data = self.data_len();
        let bits = &mut self.bits;
        let removed = item.with_bytes(|bytes| {
            let positions = hashing.positions(bytes, k, data);
            if !positions.clone().all(|j| bits.get(r + j)) {
                return Err(Error::NotPresent);
            }
            let mut removed = false;
            for j in positions {
                if !bits.get(region_of(j, r, data)) {
                    // A repeated position in a collision-free region cannot occur: it would
                    // have marked the region at insertion. `unset` is idempotent anyway.
                    removed |= bits.unset(r + j);
                }
            }
            Ok(removed)
        })?;
        if removed {
            self.inserted = self.inserted.saturating_sub(1);
        }
        Ok(removed)
    }

    /// Whether `remove(item)` would remove the item: it is reported present and at least
    /// one of its bits lies in a collision-free region.
    pub fn is_deletable<I: Item + ?Sized>(&self, item: &I) -> bool {
        let (r, data) = (self.regions, self.data_len());
        item.with_bytes(|bytes| {
            let mut positions = self.hashing.positions(bytes, self.num_hashes, data);
            positions.clone().all(|j| self.bits.get(r + j))
                && positions.any(|j| !self.bits.get(region_of(j, r, data)))
        })
    }

    /// The measured deletable fraction: of the given items (normally the ones inserted),
    /// the fraction that [`is_deletable`](Self::is_deletable). `None` for no items.
    pub fn deletable_fraction<T: Item>(&self, items: impl IntoIterator<Item = T>) -> Option<f64> {
        let (mut deletable, mut total) = (0u64, 0u64);
        for item in items {
            total += 1;
            deletable += self.is_deletable(&item) as u64;
        }
        (total > 0).then(|| deletable as f64 / total as f64)
    }

    /// The expected deletable fraction for the items the filter holds now
    /// ([`params::deletable_probability`] at n = [`len`](Filter::len)).
    pub fn expected_deletable_fraction(&self) -> f64 {
        params::deletable_probability(
            self.num_bits(),
            self.num_hashes,
            self.inserted,
            self.regions,
        )
    }

    /// The deletable fraction estimated from the filter's content alone, without the items:
    /// every set bit in a collision-free region belongs to exactly one position of one item,
    /// so a fraction `f = (such bits) / (k · n)` of the n items' positions can be reset, and
    /// an item (k positions) is deletable with probability about `1 − (1 − f)^k`.
    pub fn estimated_deletable_fraction(&self) -> f64 {
        self.content()
            .estimated_deletable_fraction(self.inserted, self.num_hashes)
    }

    /// The counts of its bits that the facts need ([`Content`]), over the array.
    fn content(&self) -> Content {
        let (r, data) = (self.regions, self.data_len());
        let mut content = Content::default();
        for (i, &word) in self.bits.words().iter().enumerate() {
            let region_bit = |p| Ok(self.bits.get(p));
            infallible(content.add_word(i as u64 * 64, word, r, data, region_bit));
        }
        content
    }

    /// m, the number of bits including the r-bit collision bitmap.
    pub fn num_bits(&self) -> u64 {
        self.bits.len()
    }

    /// m' = m − r, the bits that hold items.
    pub fn data_bits(&self) -> u64 {
        self.data_len()
    }

    crate::sizing::getters! {
        /// r, the number of regions (and of bitmap bits).
        regions: u64;

        /// k, the number of hash functions.
        num_hashes: u32;
    }

    crate::sizing::capacity_and_fpp_getters!();

    /// The number of data bits that are 1.
    pub fn count_ones(&self) -> u64 {
        self.bits.count_ones() - self.collided_regions()
    }

    /// The number of regions marked collided.
    pub fn collided_regions(&self) -> u64 {
        (0..self.regions).filter(|&i| self.bits.get(i)).count() as u64
    }

    /// The fraction of data bits that are 1.
    pub fn fill_ratio(&self) -> f64 {
        self.count_ones() as f64 / self.data_len() as f64
    }

    fn check_compatible(&self, other: &Self) -> Result<(), Error> {
        crate::filter::require_same_layout(self.kind(), self.layout(), other.layout())
    }

    /// The parameters that decide where an item lands, and the hashing, for
    /// [`require_same_layout`](crate::filter::require_same_layout).
    fn layout(&self) -> String {
        format!(
            "m = {}, r = {}, k = {}, {}",
            self.num_bits(),
            self.regions,
            self.num_hashes,
            self.hashing
        )
    }

    /// Re-counts the items from the fill after a union or intersection.
    fn recount(&mut self) {
        let estimate = Filter::estimated_len(self);
        self.inserted = crate::params::count_from_estimate(estimate);
    }
}

impl Filter for DeletableBloomFilter {
    crate::filter::filter_basics!(
        Deletable: hashing, insert, contains, capacity, target_fpp,
        state(
            bits,
            inserted,
            "Insertions that changed the filter, less the successful removals."
        ),
        fill(count_ones, data_len, num_hashes),
        classic_rate(data_len, num_hashes)
    );

    fn properties(&self) -> Vec<(&'static str, String)> {
        properties(&Stored::of(self), &self.content())
    }
}

/// The query: all k data bits set, exactly as in the classic filter. Over a way to read bit
/// p of the whole array (bitmap first, data at r + j), so that the loaded filter (its array)
/// and a view (the file's chunks) answer by this one function.
#[inline(always)]
fn holds<E>(
    positions: impl Iterator<Item = u64>,
    regions: u64,
    mut bit: impl FnMut(u64) -> Result<bool, E>,
) -> Result<bool, E> {
    try_all(positions, |j| bit(regions + j))
}

/// What the facts of a filter need from its bits, counted word by word (the loaded
/// filter's over its array, a view's over the file's pieces).
#[derive(Clone, Copy, Debug, Default)]
struct Content {
    /// Data bits set.
    ones: u64,
    /// Bitmap bits set: regions marked collided.
    collided: u64,
    /// Data bits set in collision-free regions: each belongs to exactly one position of
    /// one item.
    free_ones: u64,
}

impl Content {
    /// Adds the bits of `word`, bits `first .. first + 64` of the m-bit array of a filter
    /// of r `regions` and `data` data bits; `region_bit` reads bit p of the array (a
    /// region's bit, for each data bit set).
    fn add_word<E>(
        &mut self,
        first: u64,
        mut word: u64,
        regions: u64,
        data: u64,
        mut region_bit: impl FnMut(u64) -> Result<bool, E>,
    ) -> Result<(), E> {
        while word != 0 {
            let p = first + word.trailing_zeros() as u64;
            word &= word - 1;
            if p < regions {
                self.collided += 1;
            } else {
                self.ones += 1;
                if !region_bit(region_of(p - regions, regions, data))? {
                    self.free_ones += 1;
                }
            }
        }
        Ok(())
    }

    /// [`DeletableBloomFilter::estimated_deletable_fraction`]: a fraction `f = (set bits in
    /// collision-free regions) / (k · n)` of the n items' positions can be reset, and an
    /// item is deletable with probability about `1 − (1 − f)^k`.
    fn estimated_deletable_fraction(&self, inserted: u64, num_hashes: u32) -> f64 {
        if inserted == 0 {
            return 1.0;
        }
        let positions = inserted as f64 * num_hashes as f64;
        let f = (self.free_ones as f64 / positions).min(1.0);
        1.0 - (1.0 - f).powi(num_hashes as i32)
    }
}

/// [`Filter::properties`] of a filter with these stored parameters and this content (a
/// view's summary gives the same).
fn properties(stored: &Stored, content: &Content) -> Vec<(&'static str, String)> {
    let (m, r, k) = (stored.num_bits, stored.regions, stored.num_hashes);
    let data = m - r;
    vec![
        ("bits (m)", m.to_string()),
        ("data bits (m - r)", data.to_string()),
        ("regions (r)", r.to_string()),
        (
            "data bits per region",
            format!("{:.2}", data as f64 / r as f64),
        ),
        ("hash functions (k)", k.to_string()),
        ("target fpp", format!("{}", stored.target_fpp)),
        (
            "fill ratio",
            format!("{:.6}", content.ones as f64 / data as f64),
        ),
        ("collided regions", format!("{} of {r}", content.collided)),
        (
            "deletable fraction (expected)",
            format!(
                "{:.4}",
                params::deletable_probability(m, k, stored.inserted, r)
            ),
        ),
        (
            "deletable fraction (from content)",
            format!(
                "{:.4}",
                content.estimated_deletable_fraction(stored.inserted, k)
            ),
        ),
    ]
}

impl crate::lookahead::ByDigest for DeletableBloomFilter {
    fn digest_hashing(&self) -> Option<Hashing> {
        crate::lookahead::unless_seeded(self.hashing)
    }
    fn batch_bits(&self) -> u64 {
        self.bits.len()
    }
    #[inline(always)]
    fn prefetch_query(&self, digest: u128) {
        let (k, r, data) = (self.num_hashes, self.regions, self.data_len());
        self.hashing
            .positions_with_digest(&[], digest, k, data)
            .for_each(|j| self.bits.prefetch(r + j));
    }
    /// The data bits and the region bits too (a ninth of the filter: 15 MB at n = 10⁸,
    /// which the L3 does not keep): the insert reads and writes the bitmap word of every
    /// position's region, with the region's bit or with nothing ([`set_data_bit`]). Per
    /// insert through the window at k = 7 (callgrind, `kind_cost deletable 1000000 100000
    /// batch`): 364 instructions with this prefetch and the ring of positions
    /// ([`ByPositions`]); before, with a floating-point multiply and conversion per region
    /// and the positions derived twice, 649 (467 without the region prefetch).
    ///
    /// [`ByPositions`]: crate::lookahead::ByPositions
    #[inline(always)]
    fn prefetch_insert(&self, digest: u128, _: u64) {
        let (k, data) = (self.num_hashes, self.data_len());
        self.hashing
            .positions_with_digest(&[], digest, k, data)
            .for_each(|j| self.prefetch_insert_bit(j));
    }
    #[inline(always)]
    fn contains_digest(&self, digest: u128) -> bool {
        let (k, r, data) = (self.num_hashes, self.regions, self.data_len());
        let positions = self.hashing.positions_with_digest(&[], digest, k, data);
        infallible(holds(positions, r, |p| Ok(self.bits.get(p))))
    }
    #[inline(always)]
    fn insert_digest(&mut self, digest: u128) -> bool {
        let (k, data) = (self.num_hashes, self.data_len());
        self.add(self.hashing.positions_with_digest(&[], digest, k, data))
    }
    /// Each insert writes k data bits set (and a region bit now and then).
    fn advise_batch_insert(&mut self, items: u64) {
        self.bits
            .advise_bulk_write(items.saturating_mul(u64::from(self.num_hashes)));
    }
}

impl DeletableBloomFilter {
    /// Prefetches data bit `j` and (about) its region's bit.
    ///
    /// A prefetch needs only the region's cache line, so its bit is a guess by one
    /// multiply, `⌊j · ⌊step / 2¹⁶⌋ / 2⁶⁴⌋`, where [`region_by_step`] takes two: at most one
    /// short of the region, which lies in the line before at most once in 512 (a line holds
    /// 512 bits). (For r = m′ the step's 2⁶⁴ truncates to 0, and the guess to bit 0: a
    /// hint.)
    #[inline(always)]
    fn prefetch_insert_bit(&self, j: u64) {
        let guess_step = (self.step >> (STEP_BITS - 64)) as u64;
        self.bits.prefetch(self.regions + j);
        self.bits
            .prefetch(((j as u128 * guess_step as u128) >> 64) as u64);
    }
}

impl crate::lookahead::ByPositions for DeletableBloomFilter {
    type Extra = ();
    fn position_range(&self) -> (u32, u64) {
        (self.num_hashes, self.data_len())
    }
    #[inline(always)]
    fn prefetch_query_at(&self, ps: &[u64]) {
        for &j in ps {
            self.bits.prefetch(self.regions + j);
        }
    }
    #[inline(always)]
    fn prefetch_insert_at(&self, ps: &[u64], _: u64) {
        for &j in ps {
            self.prefetch_insert_bit(j);
        }
    }
    #[inline(always)]
    fn contains_at(&self, ps: &[u64], _: ()) -> bool {
        ps.iter().all(|&j| self.bits.get(self.regions + j))
    }
    #[inline(always)]
    fn insert_at(&mut self, ps: &[u64], _: ()) -> bool {
        self.add_at(ps)
    }
}

crate::registry::registered!(
    DeletableBloomFilter,
    {
        name: "deletable",
        summary: "Deletable Bloom filter (Rothenberg et al. 2010): removes the items whose bits lie in collision-free regions; union.",
        grow: false,
        forgets: false,
        index_scheme: true,
    }, remove, merge
);

impl Mergeable for DeletableBloomFilter {
    /// OR of data bits and bitmaps, plus a collision mark for every region in which both
    /// filters had the same bit set. Removal stays safe for the items of both sets.
    ///
    /// ```
    /// use bloomkit::{DeletableBloomFilter, Mergeable};
    /// let mut a = DeletableBloomFilter::with_capacity(100, 0.01)?;
    /// let mut b = a.clone();
    /// a.insert("left");
    /// b.insert("right");
    /// b.insert("shared");
    /// a.insert("shared");
    /// a.union(&b)?;
    /// assert!(a.contains("left") && a.contains("right"));
    /// // "shared" was inserted into both: its bits collide, it can no longer be removed.
    /// assert_eq!(a.remove("shared"), Ok(false));
    /// assert_eq!(a.remove("left"), Ok(true));
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    fn union(&mut self, other: &Self) -> Result<(), Error> {
        self.check_compatible(other)?;
        let (r, data) = (self.regions, self.data_len());
        for j in 0..data {
            if self.bits.get(r + j) && other.bits.get(r + j) {
                self.bits.set(region_of(j, r, data));
            }
        }
        self.bits.union_with(&other.bits);
        self.recount();
        Ok(())
    }

    /// AND of the data bits, OR of the bitmaps.
    fn intersect(&mut self, other: &Self) -> Result<(), Error> {
        self.check_compatible(other)?;
        let collided: Vec<u64> = (0..self.regions)
            .filter(|&i| self.bits.get(i) || other.bits.get(i))
            .collect();
        self.bits.intersect_with(&other.bits);
        for i in collided {
            self.bits.set(i);
        }
        self.recount();
        Ok(())
    }
}

crate::filter::collection_impls!(
    /// Collects items into a filter sized for their number at ε = 1% with the default regions.
    /// (The items are buffered to count them.)
    ///
    /// ```
    /// use bloomkit::DeletableBloomFilter;
    /// let filter: DeletableBloomFilter = ["a", "b", "c"].into_iter().collect();
    /// assert!(filter.contains("b"));
    /// assert_eq!(filter.capacity(), 3);
    /// ```
    DeletableBloomFilter
);

/// Builds a [`DeletableBloomFilter`] from a capacity and ε, or from explicit m and k; the
/// regions from a count or a size.
///
/// ```
/// use bloomkit::{DeletableBloomFilter, HashFunction};
///
/// // The Freiberg lecture's configuration: 16 regions.
/// let seed = DeletableBloomFilter::builder().capacity(58_110).fpp(0.01).regions(16).build()?;
/// assert_eq!(seed.regions(), 16);
/// assert_eq!(seed.data_bits(), 556_988);
///
/// // Explicit m (including the bitmap), k, region size and hashing.
/// let explicit = DeletableBloomFilter::builder()
///     .num_bits(1 << 20)
///     .num_hashes(5)
///     .region_bits(4)
///     .hash_function(HashFunction::Xxh3)
///     .seed(7)
///     .build()?;
/// assert_eq!(explicit.num_bits(), 1 << 20);
/// assert_eq!(explicit.regions(), 209_716); // ⌈2²⁰ / 5⌉: 4 data bits + 1 bitmap bit each
/// # Ok::<(), bloomkit::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
#[must_use = "a builder does nothing until .build() is called"]
pub struct DeletableBloomFilterBuilder {
    capacity: Option<u64>,
    fpp: Option<f64>,
    num_bits: Option<u64>,
    num_hashes: Option<u32>,
    regions: Option<u64>,
    region_bits: Option<u64>,
    hashing: HashingChoice,
}

impl DeletableBloomFilterBuilder {
    crate::sizing::array_setters! {
        num_bits, "bits, the collision bitmap included";
        m "m, the total number of bits *including* the collision bitmap, instead of deriving the \
           data part from capacity and ε.",
        k "k, the number of hash functions, instead of the optimal one.";

        /// r, the number of regions (and of bitmap bits). Takes precedence over
        /// [`region_bits`](Self::region_bits). Each region needs at least one data bit.
        regions: u64;

        /// The number of data bits per region, from which r is derived (default
        /// [`DEFAULT_REGION_BITS`]): `r = ⌈m'/s⌉` when the data part is sized from capacity,
        /// `r = ⌈m/(s + 1)⌉` when m is given.
        region_bits: u64;
    }

    /// Validates the parameters and allocates the filter.
    ///
    /// With neither capacity nor m, the error is [`Error::ZeroCapacity`]. With m but no
    /// capacity, the capacity is the n at which m' and k reach the optimal fill,
    /// `m' ln 2 / k`.
    pub fn build(self) -> Result<DeletableBloomFilter, Error> {
        let fpp = sizing::fpp(self.fpp)?;
        sizing::check_capacity(self.capacity)?;
        let region_bits = self.region_bits.unwrap_or(DEFAULT_REGION_BITS);
        if region_bits == 0 {
            return Err(Error::InvalidParameter {
                parameter: "region bits",
                reason: "a region needs at least one data bit".into(),
            });
        }
        let too_large = |bits: u64| Error::TooLarge {
            bits,
            max: MAX_NUM_BITS,
        };
        let (num_bits, regions) = match (self.num_bits, self.capacity) {
            (Some(0), _) => return Err(Error::ZeroBits),
            (Some(m), _) if m > MAX_NUM_BITS => return Err(too_large(m)),
            (Some(m), _) => (
                m,
                self.regions
                    .unwrap_or(m.div_ceil(region_bits.saturating_add(1))),
            ),
            (None, Some(n)) => {
                let data = params::optimal_num_bits(n, fpp)?;
                let r = self.regions.unwrap_or(data.div_ceil(region_bits));
                let m = data.saturating_add(r);
                if m > MAX_NUM_BITS {
                    return Err(too_large(m));
                }
                (m, r)
            }
            (None, None) => return Err(Error::ZeroCapacity),
        };
        if regions == 0 || regions > num_bits / 2 {
            return Err(Error::InvalidParameter {
                parameter: "regions",
                reason: format!(
                    "{regions} regions do not fit in {num_bits} bits: r must be between 1 and \
                     m/2 = {} (r bitmap bits plus at least one data bit per region)",
                    num_bits / 2
                ),
            });
        }
        let data = num_bits - regions;
        // The rules of every array-shaped kind, on the data bits (the bitmap is not probed).
        let num_hashes = sizing::num_hashes(self.num_hashes, data, self.capacity, fpp)?;
        let capacity = sizing::capacity(self.capacity, data, num_hashes);
        let fixed = self.num_bits.is_some() || self.num_hashes.is_some();
        let target_fpp = sizing::target_fpp(fixed, fpp, data, num_hashes, capacity);
        let hashing = self.hashing.resolve()?;
        Ok(DeletableBloomFilter {
            bits: BitVec::zeros(num_bits)?,
            regions,
            step: region_step(regions, data),
            num_hashes,
            hashing,
            capacity,
            target_fpp,
            inserted: 0,
        })
    }
}

crate::codec::stored! {
    /// The deletable filter's parameters on disk (44 bytes): m counts the bitmap. Payload: the
    /// m-bit array (bitmap in bits 0 … r−1, data after it), 64-bit little-endian words.
    struct Stored of f: DeletableBloomFilter {
        num_bits: u64 = f.num_bits(),
        num_hashes: u32 = f.num_hashes => check_num_hashes,
        regions: u64 = f.regions,
        capacity: u64 = f.capacity => check_capacity,
        target_fpp: f64 = f.target_fpp => check_target_fpp,
        inserted: u64 = f.inserted,
    }
    persist Deletable, payload bits;
}

impl DeletableBloomFilter {
    fn decode(parts: &Parts<'_>) -> Result<Self, DecodeError> {
        let Shape { stored, hashing } = ViewShape::read(parts)?;
        let Stored {
            num_bits,
            num_hashes,
            regions,
            capacity,
            target_fpp,
            inserted,
        } = stored;
        let bits = BitVec::from_le_bytes(num_bits, parts.payload)?;
        Ok(DeletableBloomFilter {
            bits,
            regions,
            step: region_step(regions, num_bits - regions),
            num_hashes,
            hashing,
            capacity,
            target_fpp,
            inserted,
        })
    }
}

/// A deletable filter as loading and a read-only view ([`format::view`](crate::format::view))
/// read it: the stored parameters, checked, and the query over the data bits the view
/// fetches from the file. Loading refuses a bit set past m in the last word; the view checks
/// that word when it opens ([`KindView::check_opened`]). The bitmap and the data are one bit
/// array, so nothing else in the payload can be wrong.
type ViewShape = Shape<Stored>;

impl KindView for ViewShape {
    fn read(parts: &Parts<'_>) -> Result<Self, DecodeError> {
        parts.expect_kind(Kind::Deletable)?;
        let stored = Stored::read(parts.params)?;
        let Stored {
            num_bits, regions, ..
        } = stored;
        if !(2..=MAX_NUM_BITS).contains(&num_bits) {
            return Err(invalid(
                "num_bits",
                format!("{num_bits} is not in 2..={MAX_NUM_BITS}"),
            ));
        }
        if regions == 0 || regions > num_bits / 2 {
            return Err(invalid(
                "regions",
                format!(
                    "{regions} is not in 1..={} for {num_bits} bits",
                    num_bits / 2
                ),
            ));
        }
        // The payload's length against m, before anything is allocated.
        BitVec::check_encoded_len(num_bits, parts.payload.len())?;
        Ok(Shape::of(stored, parts))
    }

    fn facts(&self) -> ViewFacts {
        let s = &self.stored;
        crate::format::view::view_facts!(s, s.num_bits, s.num_hashes)
    }

    fn contains(&self, bytes: &[u8], view: &FilterView) -> Result<bool, Error> {
        let s = &self.stored;
        let data = s.num_bits - s.regions;
        let positions = self.hashing.positions(bytes, s.num_hashes, data);
        holds(positions, s.regions, |p| view.bit(p))
    }

    /// The content counted over the payload in one pass of pieces, the region bit of each
    /// data bit set read by a second reader of pieces (regions come in the order of their
    /// data bits, so it reads the bitmap once, in order); the rest as the loaded filter
    /// works it out.
    fn summary(&self, view: &FilterView) -> Result<Summary, Error> {
        let s = &self.stored;
        let (r, data) = (s.regions, s.num_bits - s.regions);
        let mut bitmap = view.pieces();
        let mut content = Content::default();
        view.for_each_piece_at(|offset, bytes| {
            for (i, word) in bytes.chunks_exact(8).enumerate() {
                let word = u64::from_le_bytes(word.try_into().expect("8 bytes"));
                let first = (offset / 8 + i) as u64 * 64;
                content.add_word(first, word, r, data, |p| bitmap.bit(p))?;
            }
            Ok(())
        })?;
        let block = ParametersBlock::sized(s.capacity, s.target_fpp, s.num_hashes, s.num_bits);
        Ok(view.summary_of(
            Some(block),
            properties(s, &content),
            params::estimate_items(content.ones, data, s.num_hashes),
            params::fpp_from_fill(content.ones, data, s.num_hashes),
        ))
    }

    /// Loading refuses a set bit past m in the last word; so does the view.
    fn check_opened(&self, view: &FilterView) -> Result<(), Error> {
        view.check_last_word(self.stored.num_bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::Persist;

    fn small(regions: u64) -> DeletableBloomFilter {
        DeletableBloomFilter::builder()
            .num_bits(1_000 + regions)
            .num_hashes(4)
            .regions(regions)
            .build()
            .unwrap()
    }

    #[test]
    fn regions_split_the_data_part_evenly() {
        let (r, data) = (7u64, 100u64);
        let mut sizes = vec![0u64; r as usize];
        for j in 0..data {
            sizes[region_of(j, r, data) as usize] += 1;
        }
        assert_eq!(sizes.iter().sum::<u64>(), data);
        assert!(sizes.iter().all(|&s| s == 14 || s == 15), "{sizes:?}");
        // Huge filters do not overflow.
        assert_eq!(
            region_of(MAX_NUM_BITS - 1, 1 << 39, MAX_NUM_BITS),
            (1 << 39) - 1
        );
    }

    proptest::proptest! {
        /// The region by one multiply is the region by division, for data parts up to the
        /// largest filter, any region count up to m′ (the step 2⁸⁰ at r = m′), any bit, and
        /// the last bit.
        #[test]
        fn region_by_step_is_region_of(
            data in 1u64..=MAX_NUM_BITS,
            r_frac in 0.0f64..=1.0,
            j_frac in 0.0f64..1.0,
            small in 1u64..64,
        ) {
            for data in [data, small] {
                let r = ((data as f64 * r_frac) as u64).clamp(1, data);
                let step = region_step(r, data);
                for j in [(data as f64 * j_frac) as u64 % data, data - 1, 0] {
                    proptest::prop_assert_eq!(
                        region_by_step(j, step),
                        region_of(j, r, data),
                        "j {} r {} m' {}", j, r, data
                    );
                }
                for r in [1, data] {
                    let step = region_step(r, data);
                    let j = data - 1;
                    proptest::prop_assert_eq!(region_by_step(j, step), region_of(j, r, data));
                }
            }
        }
    }

    /// Every bit of a small data part at every region count: the multiply finds
    /// the division's region.
    #[test]
    fn region_by_step_is_region_of_for_every_small_filter() {
        for data in 1..200u64 {
            for r in 1..=data {
                let step = region_step(r, data);
                for j in 0..data {
                    assert_eq!(region_by_step(j, step), region_of(j, r, data));
                }
            }
        }
    }

    /// The worst case of the rounding: the bit j whose `j · r` leaves the largest remainder,
    /// m′ − 1, where the step's excess would first carry into the next region, for data
    /// parts near 2⁴⁰ (the largest) and past 2³² (where 64 fraction bits stop sufficing).
    #[test]
    fn region_by_step_is_exact_where_the_remainder_is_largest() {
        // r⁻¹ mod m′ by the extended Euclidean algorithm (r and m′ coprime).
        let inverse = |r: u64, m: u64| {
            let (mut a, mut b, mut x, mut y) = (r as i128, m as i128, 1i128, 0i128);
            while b != 0 {
                let q = a / b;
                (a, b, x, y) = (b, a - q * b, y, x - q * y);
            }
            (a == 1).then(|| x.rem_euclid(m as i128) as u64)
        };
        let mut checked = 0;
        for data in [
            MAX_NUM_BITS,
            MAX_NUM_BITS - 1,
            MAX_NUM_BITS - 3,
            MAX_NUM_BITS / 3 + 7,
            (1 << 33) + 1,
            (1 << 32) + 15,
            999_999_937,
        ] {
            for r in [
                3,
                data / 8 + 1,
                data.div_ceil(8),
                data / 2 + 1,
                data / 3 - 1,
                data - 1,
            ] {
                let Some(inv) = inverse(r, data) else {
                    continue;
                };
                let j = ((data as u128 - 1) * inv as u128 % data as u128) as u64;
                assert_eq!(j as u128 * r as u128 % data as u128, data as u128 - 1);
                let step = region_step(r, data);
                assert_eq!(
                    region_by_step(j, step),
                    region_of(j, r, data),
                    "j {j} r {r} m' {data}"
                );
                checked += 1;
            }
        }
        assert!(checked >= 30, "{checked}");
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(96))]

        /// The branch-free insert (the region of every position found, its bitmap word
        /// or-ed with the region's bit only when the data bit was set) against the insert as
        /// the paper states it, over the scheme's positions: if the bit is 1 already, mark
        /// its region by division, then set it. The same bits, answers and counts after
        /// every insert, batch insert and removal, for regions from one to half the bits
        /// (a bitmap word shared with data bits included), any k and scheme.
        #[test]
        fn the_branch_free_insert_is_the_papers_insert(
            data in 1u64..1_500,
            r_frac in 0.0f64..=1.0,
            k in 1u32..12,
            scheme_at in 0usize..4,
            seed in proptest::num::u64::ANY,
            ops in proptest::collection::vec((0u64..400, 0u8..4), 0..300),
        ) {
            let r = ((data as f64 * r_frac) as u64).clamp(1, data);
            let scheme = crate::hash::TESTED_SCHEMES[scheme_at];
            let mut fast = DeletableBloomFilter::builder()
                .num_bits(data + r)
                .num_hashes(k)
                .regions(r)
                .index_scheme(scheme)
                .seed(seed)
                .build()
                .unwrap();
            let mut paper = fast.clone();
            // The reference insert: a branch on each bit, the region by division.
            let paper_insert = |f: &mut DeletableBloomFilter, item: u64| {
                let positions: Vec<u64> =
                    f.hashing.positions(&item.to_le_bytes(), k, data).collect();
                let mut changed = false;
                for j in positions {
                    if f.bits.get(r + j) {
                        f.bits.set(region_of(j, r, data));
                    } else {
                        f.bits.set(r + j);
                        changed = true;
                    }
                }
                f.inserted += changed as u64;
                changed
            };
            for (item, op) in ops {
                match op {
                    0 | 1 => {
                        proptest::prop_assert_eq!(fast.insert(&item), paper_insert(&mut paper, item));
                    }
                    2 => {
                        let batch = [item, item ^ 1, item];
                        let new = batch.iter().filter(|&&i| paper_insert(&mut paper, i)).count();
                        proptest::prop_assert_eq!(fast.insert_batch(&batch), new as u64);
                    }
                    _ => {
                        proptest::prop_assert_eq!(fast.remove(&item), paper.remove(&item));
                    }
                }
                proptest::prop_assert!(fast == paper, "r {} m' {} k {}", r, data, k);
            }
        }
    }

    #[test]
    fn insert_marks_a_region_only_when_a_bit_was_already_set() {
        let mut f = small(10);
        f.insert("a");
        // k = 4 positions in 1000 bits: a self-collision is possible but not for "a".
        assert_eq!(f.collided_regions(), 0);
        assert!(!f.insert("a")); // every bit already set: all its regions collide
        assert!(f.collided_regions() >= 1);
        assert_eq!(f.remove("a"), Ok(false));
        assert!(f.contains("a"));
    }

    #[test]
    fn remove_resets_only_bits_in_collision_free_regions() {
        let mut f = small(500); // regions of 2 data bits
        for i in 0..50u32 {
            f.insert(&i);
        }
        let before = f.clone();
        for i in 0..50u32 {
            let was_deletable = f.is_deletable(&i);
            match f.remove(&i) {
                Ok(true) => {
                    assert!(was_deletable);
                    assert!(!f.contains(&i));
                }
                Ok(false) => {
                    assert!(!was_deletable);
                    assert!(f.contains(&i));
                }
                Err(e) => panic!("{i}: {e}"),
            }
        }
        // Bits in collided regions are untouched; the bitmap never changes on removal.
        let (r, data) = (f.regions, f.data_len());
        for j in 0..data {
            if before.bits.get(region_of(j, r, data)) {
                assert_eq!(f.bits.get(r + j), before.bits.get(r + j));
            }
        }
        assert_eq!(f.collided_regions(), before.collided_regions());
    }

    #[test]
    fn removing_an_absent_item_is_an_error_and_changes_nothing() {
        let mut f = small(100);
        f.insert("present");
        let before = f.clone();
        assert_eq!(f.remove("absent"), Err(Error::NotPresent));
        assert_eq!(f, before);
    }

    #[test]
    fn len_counts_insertions_less_removals() {
        let mut f = DeletableBloomFilter::with_capacity(100, 0.01).unwrap();
        f.insert("x");
        f.insert("y");
        assert_eq!(Filter::len(&f), 2);
        assert_eq!(f.remove("x"), Ok(true));
        assert_eq!(Filter::len(&f), 1);
        f.clear();
        assert!(Filter::is_empty(&f));
        assert_eq!(f.collided_regions(), 0);
    }

    #[test]
    fn union_marks_bits_set_in_both_as_collisions() {
        let mut a = small(100);
        let mut b = small(100);
        a.insert("both");
        b.insert("both");
        a.insert("only a");
        b.insert("only b");
        let mut u = a.clone();
        u.union(&b).unwrap();
        assert!(u.contains("both") && u.contains("only a") && u.contains("only b"));
        assert_eq!(u.remove("both"), Ok(false));
        // Inserting both sets into one filter gives the same bitmap here.
        let mut direct = small(100);
        for x in ["both", "only a", "both", "only b"] {
            direct.insert(x);
        }
        assert_eq!(u.bits, direct.bits);
    }

    #[test]
    fn intersection_keeps_common_items_and_ors_the_bitmaps() {
        let mut a = small(100);
        let mut b = small(100);
        for i in 0..60u32 {
            a.insert(&i);
        }
        for i in 40..100u32 {
            b.insert(&i);
        }
        let mut x = a.clone();
        x.intersect(&b).unwrap();
        assert!((40..60u32).all(|i| x.contains(&i)));
        for i in 0..100 {
            assert_eq!(x.bits.get(i), a.bits.get(i) || b.bits.get(i));
        }
        // Removing common items never loses another common item.
        for i in 40..50u32 {
            x.remove(&i).unwrap();
        }
        assert!((50..60u32).all(|i| x.contains(&i)));
    }

    #[test]
    fn mismatched_filters_cannot_be_combined() {
        let mut a = small(100);
        assert!(matches!(a.union(&small(50)), Err(Error::Incompatible(_))));
        let other_regions = DeletableBloomFilter::builder()
            .num_bits(1_100)
            .num_hashes(4)
            .regions(99)
            .build()
            .unwrap();
        assert!(matches!(
            a.intersect(&other_regions),
            Err(Error::Incompatible(_))
        ));
    }

    #[test]
    fn degenerate_parameters_are_errors() {
        let b = DeletableBloomFilter::builder;
        assert_eq!(b().build().unwrap_err(), Error::ZeroCapacity);
        assert_eq!(b().num_bits(0).build().unwrap_err(), Error::ZeroBits);
        assert!(matches!(
            b().num_bits(10).regions(6).build(),
            Err(Error::InvalidParameter {
                parameter: "regions",
                ..
            })
        ));
        assert!(matches!(
            b().num_bits(10).regions(0).build(),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(matches!(
            b().num_bits(1).build(),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(matches!(
            b().capacity(10).region_bits(0).build(),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(matches!(
            b().capacity(10).regions(u64::MAX).build(),
            Err(Error::TooLarge { .. })
        ));
        assert_eq!(
            b().num_bits(100).num_hashes(0).build().unwrap_err(),
            Error::ZeroHashes
        );
        assert!(matches!(
            b().num_bits(100).num_hashes(65).build(),
            Err(Error::TooManyHashes { .. })
        ));
        assert!(matches!(
            b().num_bits(u64::MAX).build(),
            Err(Error::TooLarge { .. })
        ));
        assert!(matches!(
            DeletableBloomFilter::with_capacity(10, f64::NAN),
            Err(Error::InvalidFpp(_))
        ));
        assert!(matches!(
            DeletableBloomFilter::with_capacity(10, 1.0),
            Err(Error::InvalidFpp(_))
        ));
        assert!(matches!(
            DeletableBloomFilter::with_capacity(u64::MAX, 0.01),
            Err(Error::CapacityTooLarge {
                capacity: u64::MAX,
                ..
            })
        ));
        assert_eq!(
            b().num_bits(100).capacity(0).build().unwrap_err(),
            Error::ZeroCapacity
        );
        // The smallest filter: one bitmap bit, one data bit.
        let mut tiny = b().num_bits(2).regions(1).num_hashes(1).build().unwrap();
        assert!(tiny.insert("x"));
        assert_eq!(tiny.remove("x"), Ok(true));
    }

    #[test]
    fn the_region_size_table_in_the_module_docs_is_the_formula() {
        let n = 1_000;
        let data = params::optimal_num_bits(n, 0.01).unwrap();
        for (s, at_capacity, at_half) in [
            (4, 0.90, 1.00),
            (8, 0.64, 0.99),
            (16, 0.20, 0.92),
            (32, 0.01, 0.62),
        ] {
            let r = data.div_ceil(s);
            let full = params::deletable_probability(data + r, 7, n, r);
            let half = params::deletable_probability(data + r, 7, n / 2, r);
            assert!((full - at_capacity).abs() < 0.006, "s = {s}: {full}");
            assert!((half - at_half).abs() < 0.006, "s = {s}: {half}");
        }
    }

    #[test]
    fn sixteen_regions_stop_deleting_early_as_the_module_docs_say() {
        let m = params::optimal_num_bits(1_000, 0.01).unwrap() + 16;
        for (n, want) in [(100, 0.73), (150, 0.17), (200, 0.015)] {
            let p = params::deletable_probability(m, 7, n, 16);
            assert!((p - want).abs() < 0.006, "n = {n}: {p}");
        }
        assert!(params::deletable_probability(m, 7, 260, 16) < 0.001);
    }

    #[test]
    fn memory_counts_the_bitmap() {
        let f = DeletableBloomFilter::builder()
            .num_bits(64 * 10)
            .regions(64)
            .build()
            .unwrap();
        assert_eq!(f.memory_bytes(), 80);
        assert_eq!(f.data_bits(), 576);
        let g = DeletableBloomFilter::with_capacity(1_000, 0.01).unwrap();
        assert_eq!(g.memory_bytes(), (9_586 + 1_199usize).div_ceil(64) * 8);
    }

    #[test]
    fn fpp_is_the_classic_one_on_the_data_bits() {
        let mut f = DeletableBloomFilter::with_capacity(2_000, 0.01).unwrap();
        f.extend(0..2_000u32);
        let ones = f.count_ones();
        assert_eq!(
            f.expected_fpp(),
            params::fpp_from_fill(ones, f.data_bits(), f.num_hashes())
        );
        let classic = params::fpp_exact(f.data_bits(), f.num_hashes(), 2_000);
        assert!((classic - 0.01).abs() < 0.001, "{classic}");
    }

    #[test]
    fn debug_and_properties_show_the_parameters() {
        let f = DeletableBloomFilter::with_capacity(1000, 0.01).unwrap();
        let s = format!("{f:?}");
        for needle in ["num_bits: 10785", "regions: 1199", "num_hashes: 7"] {
            assert!(s.contains(needle), "{s}");
        }
        let props = Filter::properties(&f);
        for label in [
            "regions (r)",
            "collided regions",
            "deletable fraction (expected)",
            "deletable fraction (from content)",
        ] {
            assert!(props.iter().any(|(l, _)| *l == label), "{props:?}");
        }
    }

    #[test]
    fn decoding_checks_every_parameter() {
        let f = small(100);
        let bytes = f.to_bytes();
        assert_eq!(DeletableBloomFilter::from_bytes(&bytes).unwrap(), f);
        // Parameters start at offset 28: num_bits (8), num_hashes (4), regions (8) …
        let patch = |offset: usize, value: &[u8]| {
            let mut b = bytes.clone();
            b[offset..offset + value.len()].copy_from_slice(value);
            let n = b.len();
            let sum = xxhash_rust::xxh3::xxh3_64(&b[..n - 8]);
            b[n - 8..].copy_from_slice(&sum.to_le_bytes());
            DeletableBloomFilter::from_bytes(&b)
        };
        assert!(patch(28, &0u64.to_le_bytes()).is_err());
        assert!(patch(28, &u64::MAX.to_le_bytes()).is_err());
        assert!(patch(28, &2000u64.to_le_bytes()).is_err()); // payload too short
        assert!(patch(36, &0u32.to_le_bytes()).is_err());
        assert!(patch(40, &0u64.to_le_bytes()).is_err());
        assert!(patch(40, &551u64.to_le_bytes()).is_err());
        assert!(patch(48, &0u64.to_le_bytes()).is_err());
        assert!(patch(56, &f64::NAN.to_le_bytes()).is_err());
        assert!(patch(56, &1.5f64.to_le_bytes()).is_err());
    }
}
