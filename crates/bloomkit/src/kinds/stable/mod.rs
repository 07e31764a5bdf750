//! The stable Bloom filter (Deng & Rafiei, "Approximately Detecting Duplicates for
//! Streaming Data using Stable Bloom Filters", SIGMOD 2006): duplicate detection on an
//! unbounded stream in fixed memory, by forgetting old items.
//!
//! # Structure
//!
//! m cells of d bits each (a [`PackedCounters`]), all 0 at
//! first; `Max = 2^d − 1`. K hash functions map an item to K cells.
//!
//! * **Insert**: decrement P cells by 1 (those already 0 stay 0), then set the item's K
//!   cells to Max.
//! * **Query**: "maybe seen" when all K cells are non-zero, "certainly not seen recently"
//!   otherwise.
//! * [`StableBloomFilter::insert_and_check`] does both for a stream: it answers whether the
//!   item looked like a duplicate, then inserts it.
//!
//! A classic filter fed an endless stream fills up until it answers "maybe" to everything.
//! Here the decrements evict old information at the rate new information arrives, and the
//! fraction of zero cells settles at a *stable point* independent of the stream's length.
//!
//! **False negatives by design.** An item's cells are decremented by later insertions;
//! once one of them reaches 0 the item is reported unseen. So an item inserted long ago is
//! eventually forgotten, and `contains` can answer `false` for an item that was inserted.
//! Right after its insertion an item is always found (its cells are at Max, and the
//! decrements of an insertion come *before* its sets); only later insertions can make it
//! disappear. This kind therefore has no `remove` and no union (a union of two decayed
//! states has no meaning the paper defines).
//!
//! # The random decrements
//!
//! The paper picks a random start position and decrements the P consecutive cells from
//! there (wrapping around at the end), which needs one random number per insertion instead
//! of P; this filter does the same. Each cell is still decremented with probability exactly
//! P/m per insertion, which is all the analysis uses. The random numbers come from a
//! SplitMix64 generator (Steele, Lea & Flood, "Fast Splittable Pseudorandom Number
//! Generators", OOPSLA 2014) started from the hashing seed; its state is part of the
//! filter and of the file format, so a filter saved and loaded again continues exactly
//! as the original would have, and two filters built with the same parameters and fed the
//! same stream are identical.
//!
//! # The stable point
//!
//! Deng & Rafiei show that the expected fraction of zero
//! cells converges, exponentially fast and from any start, to
//!
//! ```text
//!     Pr(0) = ( 1 / (1 + 1/(P (1/K − 1/m))) )^Max
//! ```
//!
//! so the false-positive probability of a fresh item converges to
//! `FPS = (1 − Pr(0))^K` ([`params::stable_zero_fraction`], [`params::stable_fpp`]).
//! Solving for P gives the number of decrements that makes the stable point a chosen ε
//! ([`params::stable_decrements_for_fpp`]). It is rounded *up*, so the filter's stable FPR
//! ([`StableBloomFilter::stable_fpp`]) never exceeds ε; with P in the tens (3-bit cells) it
//! is within a few percent of ε, with a small P noticeably below (one-bit cells at ε = 1%:
//! P = 6.5 → 7, stable FPR 0.78%).
//!
//! # Sizing for a stream: what capacity means
//!
//! `with_capacity(n, ε)` builds a filter that behaves, at its stable point, like a classic
//! Bloom filter holding about the last n items:
//!
//! * m = `⌈−n ln ε / (ln 2)²⌉` cells — as many cells as a classic filter for n items at ε
//!   has bits — and K = `round((m/n) ln 2)`, the classic optimal k; for fewer than about 8
//!   items, at least the fewest cells for which some P ≤ m reaches ε
//!   ([`params::stable_min_cells_for_fpp`]: 71 at ε = 1%), since no P reaches it in fewer;
//! * cells of d = [`DEFAULT_CELL_WIDTH`] = 3 bits (Max = 7), so memory is d times the classic
//!   filter's: 3 · 9.59 ≈ 28.8 bits per item of capacity at ε = 1%;
//! * P chosen so that the stable-point false-positive probability is ε (at most). Then about
//!   `ε^(1/K) ≈ 1/2` of the cells are non-zero at the stable point, as in a classic filter at
//!   capacity.
//!
//! # What `with_capacity(n, ε)` promises
//!
//! * **False positives: never above ε.** From empty, the rate rises towards the stable
//!   point and never passes it ([`params::stable_fpp_after`]); the stable point is at most
//!   ε (P rounded up). Filled with n distinct items it is about 0.47 ε (3-bit cells, ε =
//!   1%; 0.34 ε at 0.1%), after a long stream ε (0.98% at ε = 1%).
//! * **False negatives: by age.** An item inserted j insertions ago is no longer found with
//!   probability [`params::stable_fnr_after`]: with 3-bit cells at ε = 1%, 1% at j = n/4,
//!   25% at n/2, 91% at n, and at 2n it is found only as often as an item never inserted.
//!   Both depend on m/n, K, P and Max only, so they are the same for every n.
//!
//! `tests/suite/stable.rs` measures both against their formulas.
//!
//! A cell set to Max survives about `Max · m / P` further insertions unless it is set
//! again; with these choices that is about n insertions (1048 for n = 1000 at ε = 1%), and
//! an item needs all K of its cells. Measured (`tests/suite/stable.rs`, n = 2000, ε = 1%, d = 3),
//! an item is still found after n/4 further distinct insertions 99% of the time, after n/2
//! 76%, after n 9%, and after 2n no more often than an item never inserted (1%). So
//! *capacity n* is the horizon of the duplicate detection: a duplicate within about n/4
//! items is caught reliably, one more than n items later is (almost always) forgotten.
//!
//! [`params::stable_fnr_after`] gives the same shares (0.99, 0.75, 0.31, 0.09 at n/4 to n
//! for d = 3).
//!
//! The cell width decides how sharp that horizon is. A cell dies after Max decrements
//! that are not interrupted by a new set. With Max = 1 its lifetime is memoryless — one
//! unlucky decrement kills it, however recent — while with a larger Max it is the sum of
//! Max waiting times and nearly fixed. Measured with the test above (n = 2000, ε = 1%), the
//! share of items still found after a further number of distinct insertions:
//!
//! ```text
//!   d (Max)     P     n/8    n/4    n/2    3n/4    n      2n
//!   1  (1)      7    0.55   0.31   0.12   0.06   0.04   0.01
//!   2  (3)     26    0.97   0.82   0.40   0.16   0.06   0.01
//!   3  (7)     64    1.00   0.99   0.76   0.30   0.09   0.01
//!   4 (15)    141    1.00   1.00   0.96   0.51   0.10   0.01
//! ```
//!
//! The default of 3 bits catches duplicates within n/4 reliably for three times a classic
//! filter's memory; `cell_width(4)` stretches that to about n/2 for four times;
//! `cell_width(1)` is as small as a classic filter but forgets early and erratically.
//!
//! ```
//! use bloomkit::StableBloomFilter;
//!
//! // Duplicate detection over a click stream, remembering roughly the last 10 000 clicks.
//! let mut seen = StableBloomFilter::with_capacity(10_000, 0.01)?;
//! assert!(!seen.insert_and_check("click 1")); // new
//! assert!(!seen.insert_and_check("click 2")); // new
//! assert!(seen.insert_and_check("click 1")); // a duplicate
//! assert!(seen.contains("click 2"));
//! # Ok::<(), bloomkit::Error>(())
//! ```

mod options;
pub mod theory;

use crate::any::Summary;
use crate::bits::{CounterSpan, Locate, PackedCounters, WithLocate};
use crate::codec::{invalid, Parts};
use crate::error::{DecodeError, Error};
use crate::filter::{Filter, Kind};
use crate::format::view::{infallible, try_all, FilterView, KindView, Shape, ViewFacts};
use crate::hash::HashingChoice;
use crate::hash::SplitMix64;
use crate::hash::{mix64, reduce, Hashing, IndexScheme, Item, Positions, GOLDEN_GAMMA};
use crate::params::{self, MAX_NUM_BITS};
use crate::sizing;

/// The cell width d used where none is given: 3 bits, Max = 7.
pub const DEFAULT_CELL_WIDTH: u32 = 3;

/// Mixed into the hashing seed to start the decrement generator, so that it does not
/// produce the same numbers as anything else seeded with the same value.
const RNG_SALT: u64 = 0x5354_4142_4c45_2d31; // "STABLE-1"

/// One step of the crate's SplitMix64 on a stored state: advances it, returns the output.
#[inline]
fn splitmix64(state: &mut u64) -> u64 {
    let mut rng = SplitMix64::new(*state);
    let out = rng.next_u64();
    *state = rng.state();
    out
}

/// A stable Bloom filter: a fixed-memory duplicate detector for streams that forgets old
/// items (and so has false negatives).
///
/// ```
/// use bloomkit::{Filter, StableBloomFilter};
///
/// let mut filter = StableBloomFilter::with_capacity(1_000, 0.01)?;
/// // A long stream of distinct items: the share of "duplicate" answers settles near ε.
/// let false_alarms = (0..50_000u32).filter(|i| filter.insert_and_check(i)).count();
/// assert!(false_alarms < 1_000, "{false_alarms}");
/// assert!((filter.stable_fpp() - 0.01).abs() < 0.001);
/// # Ok::<(), bloomkit::Error>(())
/// ```
#[derive(Clone, PartialEq)]
pub struct StableBloomFilter {
    cells: PackedCounters,
    num_hashes: u32,
    decrements: u64,
    hashing: Hashing,
    capacity: u64,
    target_fpp: f64,
    /// Insertions of items that were not reported present before.
    inserted: u64,
    /// All insertions: the position in the stream.
    insertions: u64,
    /// SplitMix64 state of the decrement generator.
    rng: u64,
}

impl StableBloomFilter {
    /// A filter that remembers about the last `capacity` items of a stream and settles at
    /// false-positive probability `fpp` (see the module documentation for what capacity
    /// means here), with 3-bit cells and the default hashing.
    ///
    /// ```
    /// use bloomkit::StableBloomFilter;
    /// let filter = StableBloomFilter::with_capacity(1_000, 0.01)?;
    /// assert_eq!(filter.num_cells(), 9_586);
    /// assert_eq!(filter.num_hashes(), 7);
    /// assert_eq!(filter.max_value(), 7);
    /// assert_eq!(filter.decrements(), 64);
    /// assert!(StableBloomFilter::with_capacity(0, 0.01).is_err());
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn with_capacity(capacity: impl crate::params::ItemCount, fpp: f64) -> Result<Self, Error> {
        Self::builder().capacity(capacity).fpp(fpp).build()
    }

    /// A filter of `num_cells` cells that settles at false-positive probability `fpp`, with
    /// K = round(log₂(1/ε)) hash functions, 3-bit cells and P from the stable-point formula.
    ///
    /// ```
    /// use bloomkit::StableBloomFilter;
    /// let filter = StableBloomFilter::with_cells(1 << 20, 0.001)?;
    /// assert_eq!(filter.num_hashes(), 10);
    /// assert!((filter.stable_fpp() - 0.001).abs() < 0.0001);
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn with_cells(num_cells: u64, fpp: f64) -> Result<Self, Error> {
        Self::builder().num_cells(num_cells).fpp(fpp).build()
    }

    /// A builder for every other choice: cells, cell width, K, P, hashing.
    pub fn builder() -> StableBloomFilterBuilder {
        StableBloomFilterBuilder::default()
    }

    /// Adds an item: decrements P cells, then sets the item's K cells to Max. Returns `true`
    /// if the item looked new (it was not reported present just before), `false` if it
    /// looked like a duplicate.
    #[inline]
    pub fn insert<I: Item + ?Sized>(&mut self, item: &I) -> bool {
        let (hashing, k, m) = (self.hashing, self.num_hashes, self.cells.len());
        if hashing.scheme == IndexScheme::SeededHashes {
            return item.with_bytes(|bytes| self.add(hashing.positions(bytes, k, m)));
        }
        // A digest scheme: at the common k the positions once, into an array (`add` derives
        // them twice, to test and to set).
        let digest = item.with_bytes(|bytes| hashing.digest(bytes));
        match k {
            7 => self.add_digest_k::<7>(digest),
            10 => self.add_digest_k::<10>(digest),
            4 => self.add_digest_k::<4>(digest),
            _ => self.add(hashing.positions_with_digest(&[], digest, k, m)),
        }
    }

    /// The insert of the item with this digest at k = `K`.
    #[inline(always)]
    fn add_digest_k<const K: usize>(&mut self, digest: u128) -> bool {
        let mut ps = [0u64; K];
        crate::lookahead::positions_into(self.hashing, digest, self.cells.len(), &mut ps);
        self.add_at(&ps)
    }

    /// Decrements the next run of P cells, then sets the cells at these positions to Max;
    /// `true` when one of them was 0 before.
    #[inline(always)]
    fn add(&mut self, positions: Positions<'_>) -> bool {
        let m = self.cells.len();
        let start = reduce(splitmix64(&mut self.rng), m);
        let cells = &mut self.cells;
        let seen = infallible(holds(positions.clone(), |i| Ok(cells.get(i))));
        let at = cells.by_division();
        decrement_run(cells, at, start, self.decrements);
        let max = cells.max_value();
        // `for_each`: `Positions`' own fold (see the deletable filter's insert).
        positions.for_each(|i| cells.set(i, max));
        let new = !seen;
        self.insertions += 1;
        self.inserted += new as u64;
        new
    }

    /// [`add`](Self::add) at positions already computed (the batch window's), the cells of
    /// the default width found by constants
    /// ([`ByConstantDivision`](crate::bits::ByConstantDivision): the divisor 21, the
    /// width and the masks of the run's decrement take no register), any other width by
    /// division.
    #[inline(always)]
    fn add_at(&mut self, positions: &[u64]) -> bool {
        self.cells
            .constant_choice::<DEFAULT_CELL_WIDTH>()
            .run(AddAt {
                filter: self,
                positions,
            })
    }

    /// [`add_at`](Self::add_at) with the cells found by `at`.
    #[inline(always)]
    fn add_at_by(&mut self, at: impl Locate, positions: &[u64]) -> bool {
        let m = self.cells.len();
        let start = reduce(splitmix64(&mut self.rng), m);
        let cells = &mut self.cells;
        let seen = positions.iter().all(|&i| cells.get_by(at, i) != 0);
        decrement_run(cells, at, start, self.decrements);
        for &i in positions {
            cells.saturate_at(at, at.locate(i));
        }
        let new = !seen;
        self.insertions += 1;
        self.inserted += new as u64;
        new
    }

    /// [`insert`](Self::insert) of every item in order; returns how many were certainly new.
    /// A filter past the L2 cache hashes each item once and prefetches what its insert
    /// touches a window of items ahead ([`lookahead`](crate::lookahead)); the filter ends
    /// as after the single inserts.
    ///
    /// ```
    /// use bloomkit::StableBloomFilter;
    /// let mut filter = StableBloomFilter::with_capacity(1_000, 0.01)?;
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

    /// Streaming duplicate detection: whether the item looked like a duplicate (it was
    /// reported present before), then inserts it.
    #[inline]
    pub fn insert_and_check<I: Item + ?Sized>(&mut self, item: &I) -> bool {
        !self.insert(item)
    }

    /// `false` if the item was certainly not inserted recently, `true` if it may have been.
    /// Unlike the other kinds, `false` is also possible for an item inserted long ago.
    #[inline]
    pub fn contains<I: Item + ?Sized>(&self, item: &I) -> bool {
        item.with_bytes(|bytes| {
            let positions = self
                .hashing
                .positions(bytes, self.num_hashes, self.cells.len());
            infallible(holds(positions, |i| Ok(self.cells.get(i))))
        })
    }

    /// m, the number of cells.
    pub fn num_cells(&self) -> u64 {
        self.cells.len()
    }

    /// d, the width of a cell in bits.
    pub fn cell_width(&self) -> u32 {
        self.cells.width()
    }

    /// Max = 2^d − 1, the value a cell is set to.
    pub fn max_value(&self) -> u32 {
        self.cells.max_value()
    }

    crate::sizing::getters! {
        /// K, the number of hash functions.
        num_hashes: u32;

        /// P, the number of cells decremented per insertion.
        decrements: u64;

        /// n, the number of recent items the filter was sized to remember.
        capacity: u64;

        /// ε, the stable-point false-positive probability asked for.
        target_fpp: f64;

        /// The number of insertions so far (the position in the stream).
        insertions: u64;
    }

    /// The stable-point false-positive probability of this filter's m, K, P and Max
    /// ([`params::stable_fpp`]).
    pub fn stable_fpp(&self) -> f64 {
        params::stable_fpp(
            self.num_cells(),
            self.num_hashes,
            self.decrements,
            self.max_value(),
        )
    }

    /// The fraction of zero cells at the stable point ([`params::stable_zero_fraction`]).
    pub fn stable_zero_fraction(&self) -> f64 {
        params::stable_zero_fraction(
            self.num_cells(),
            self.num_hashes,
            self.decrements,
            self.max_value(),
        )
    }

    /// The fraction of cells that are zero now.
    pub fn zero_fraction(&self) -> f64 {
        1.0 - self.cells.count_nonzero() as f64 / self.num_cells() as f64
    }

    fn initial_rng(seed: u64) -> u64 {
        seed ^ RNG_SALT
    }
}

/// The query: "maybe seen" unless one of the item's cells is 0. Over a way to read cell i,
/// so that the loaded filter (its array) and a view (the file's chunks) answer by this one
/// function.
#[inline(always)]
fn holds<E>(
    positions: impl Iterator<Item = u64>,
    mut cell: impl FnMut(u64) -> Result<u32, E>,
) -> Result<bool, E> {
    try_all(positions, |i| Ok(cell(i)? != 0))
}

/// [`Filter::properties`] of a filter with these stored parameters and this many non-zero
/// cells (a view's summary gives the same).
fn properties(stored: &Stored, nonzero: u64) -> Vec<(&'static str, String)> {
    let (m, k, p) = (stored.num_cells, stored.num_hashes, stored.decrements);
    let max = (1u32 << stored.cell_width) - 1;
    vec![
        ("cells (m)", m.to_string()),
        ("cell width (d)", stored.cell_width.to_string()),
        ("cell maximum (Max)", max.to_string()),
        ("hash functions (K)", k.to_string()),
        ("decrements per insertion (P)", p.to_string()),
        (
            "decrement scheme",
            "P consecutive cells from a random start".into(),
        ),
        ("target fpp", format!("{}", stored.target_fpp)),
        (
            "stable-point fpp",
            format!("{:.6}", params::stable_fpp(m, k, p, max)),
        ),
        (
            "zero fraction (stable point)",
            format!("{:.6}", params::stable_zero_fraction(m, k, p, max)),
        ),
        (
            "zero fraction (now)",
            format!("{:.6}", 1.0 - nonzero as f64 / m as f64),
        ),
        ("insertions", stored.insertions.to_string()),
        ("false negatives", "yes: old items are forgotten".into()),
    ]
}

/// Decrements `count` (at most m) consecutive cells from `start` (below m), wrapping at
/// the end. Inlined into the insert, with the run that wraps (P/m of them) out of line: the
/// call of the run and of an empty second run cost about 50 instructions an insert.
#[inline(always)]
fn decrement_run(cells: &mut PackedCounters, at: impl Locate, start: u64, count: u64) {
    let m = cells.len();
    debug_assert!(start < m && count <= m);
    let before_end = count.min(m - start);
    if before_end == count {
        cells.decrement_nonzero_run_by(at, start, count);
    } else {
        decrement_wrapped_run(cells, start, before_end, count - before_end);
    }
}

/// [`StableBloomFilter::add_at_by`] as a [`WithLocate`], for [`LocateChoice::run`].
///
/// [`LocateChoice::run`]: crate::bits::LocateChoice::run
struct AddAt<'a> {
    filter: &'a mut StableBloomFilter,
    positions: &'a [u64],
}

impl WithLocate for AddAt<'_> {
    type Out = bool;
    #[inline(always)]
    fn run(self, at: impl Locate) -> bool {
        self.filter.add_at_by(at, self.positions)
    }
}

/// [`decrement_run`] of a run that wraps: `before_end` cells from `start` to the end, then
/// `wrapped` from 0.
#[cold]
#[inline(never)]
fn decrement_wrapped_run(cells: &mut PackedCounters, start: u64, before_end: u64, wrapped: u64) {
    cells.decrement_nonzero_run(start, before_end);
    cells.decrement_nonzero_run(0, wrapped);
}

impl Filter for StableBloomFilter {
    crate::filter::filter_basics!(Stable: hashing, insert, contains, capacity, target_fpp);

    /// Empties every cell and restarts the decrement generator: the filter is as new.
    fn clear(&mut self) {
        self.cells.clear();
        self.inserted = 0;
        self.insertions = 0;
        self.rng = Self::initial_rng(self.hashing.seed);
    }

    /// Insertions of items that were not reported present just before (the stream's
    /// distinct-looking items, however long ago).
    fn len(&self) -> u64 {
        self.inserted
    }

    /// The number of items the non-zero cells stand for, `−(m/K) ln(1 − X/m)` for X
    /// non-zero cells: about the number of recent items still remembered.
    fn estimated_len(&self) -> f64 {
        params::estimate_items(
            self.cells.count_nonzero(),
            self.num_cells(),
            self.num_hashes,
        )
    }

    fn memory_bytes(&self) -> usize {
        self.cells.memory_bytes()
    }

    fn properties(&self) -> Vec<(&'static str, String)> {
        properties(&Stored::of(self), self.cells.count_nonzero())
    }

    /// The false-positive probability now, `(non-zero fraction)^K`; near
    /// [`stable_fpp`](StableBloomFilter::stable_fpp) once the stream is long.
    fn expected_fpp(&self) -> f64 {
        params::fpp_from_fill(
            self.cells.count_nonzero(),
            self.num_cells(),
            self.num_hashes,
        )
    }

    /// The stable point's rate (Deng & Rafiei's limit as the stream goes on): it does not
    /// depend on how many items came, once the filter has seen enough to forget.
    fn fpp_at(&self, _n: u64) -> f64 {
        params::stable_fpp(
            self.num_cells(),
            self.num_hashes(),
            self.decrements(),
            self.max_value(),
        )
    }
}

impl crate::lookahead::ByDigest for StableBloomFilter {
    fn digest_hashing(&self) -> Option<Hashing> {
        crate::lookahead::unless_seeded(self.hashing)
    }
    fn batch_bits(&self) -> u64 {
        self.cells.len() * self.cell_width() as u64
    }
    crate::lookahead::one_array_prefetch_query!(cells, num_hashes);
    /// The K cells, and the first and last cell of the run this insert decrements: the
    /// generator's state after `pending` more inserts is `rng + pending·γ` (SplitMix64 adds
    /// γ per output), so the run's start is known a window ahead.
    #[inline(always)]
    fn prefetch_insert(&self, digest: u128, pending: u64) {
        self.prefetch_query(digest);
        self.prefetch_run(pending);
    }
    #[inline(always)]
    fn contains_digest(&self, digest: u128) -> bool {
        let (k, m) = (self.num_hashes, self.cells.len());
        let positions = self.hashing.positions_with_digest(&[], digest, k, m);
        infallible(holds(positions, |i| Ok(self.cells.get(i))))
    }
    #[inline(always)]
    fn insert_digest(&mut self, digest: u128) -> bool {
        let (k, m) = (self.num_hashes, self.cells.len());
        self.add(self.hashing.positions_with_digest(&[], digest, k, m))
    }
    /// Each insert writes k cells set, and one run of decrements (a page at most).
    fn advise_batch_insert(&mut self, items: u64) {
        self.cells
            .advise_bulk_write(items.saturating_mul(u64::from(self.num_hashes) + 1));
    }
}

impl crate::lookahead::ByPositions for StableBloomFilter {
    type Extra = ();
    crate::lookahead::one_array_positions!(cells, num_hashes);
    /// The K cells and the ends of the decrement run (as [`ByDigest::prefetch_insert`]).
    ///
    /// [`ByDigest::prefetch_insert`]: crate::lookahead::ByDigest::prefetch_insert
    #[inline(always)]
    fn prefetch_insert_at(&self, ps: &[u64], pending: u64) {
        self.prefetch_query_at(ps);
        self.prefetch_run(pending);
    }
    #[inline(always)]
    fn contains_at(&self, ps: &[u64], _: ()) -> bool {
        ps.iter().all(|&i| self.cells.get(i) != 0)
    }
    #[inline(always)]
    fn insert_at(&mut self, ps: &[u64], _: ()) -> bool {
        self.add_at(ps)
    }
}

impl StableBloomFilter {
    /// Prefetches the first and last cell of the run the insert decrements after `pending`
    /// more inserts.
    #[inline(always)]
    fn prefetch_run(&self, pending: u64) {
        let m = self.cells.len();
        let state = self
            .rng
            .wrapping_add(GOLDEN_GAMMA.wrapping_mul(pending.wrapping_add(1)));
        let start = reduce(mix64(state), m);
        self.cells.prefetch(start);
        // The run's last cell, (start + P − 1) mod m, with start < m and P ≤ m: one
        // subtraction at most, not a division (tens of cycles) an insert.
        let last = start + (self.decrements - 1);
        self.cells.prefetch(if last >= m { last - m } else { last });
    }
}

crate::registry::registered!(
    StableBloomFilter,
    {
        name: "stable",
        summary: "Stable Bloom filter (Deng & Rafiei 2006): duplicate detection on streams; forgets old items (false negatives by design).",
        grow: false,
        forgets: true,
        index_scheme: true,
    }
);

impl<I: Item> Extend<I> for StableBloomFilter {
    fn extend<T: IntoIterator<Item = I>>(&mut self, iter: T) {
        for item in iter {
            self.insert(&item);
        }
    }
}

// No `FromIterator`: a filter sized for a collection's length would already have
// forgotten part of the collection when the last item goes in. Build one with
// `with_capacity` for the horizon you need and `extend` it.

/// Builds a [`StableBloomFilter`] from a capacity and ε, or from explicit cells, cell
/// width, K and P.
///
/// ```
/// use bloomkit::StableBloomFilter;
///
/// // The paper's parameters, given directly: m, d, K, P.
/// let filter = StableBloomFilter::builder()
///     .num_cells(100_000)
///     .cell_width(2)
///     .num_hashes(4)
///     .decrements(10)
///     .seed(42)
///     .build()?;
/// assert_eq!(filter.max_value(), 3);
/// assert!(filter.stable_fpp() > 0.0 && filter.stable_fpp() < 1.0);
///
/// // One-bit cells, P from a target stable FPR.
/// let frugal = StableBloomFilter::builder().capacity(1_000).fpp(0.01).cell_width(1).build()?;
/// assert_eq!(frugal.decrements(), 7);
/// # Ok::<(), bloomkit::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
#[must_use = "a builder does nothing until .build() is called"]
pub struct StableBloomFilterBuilder {
    capacity: Option<u64>,
    fpp: Option<f64>,
    num_cells: Option<u64>,
    cell_width: Option<u32>,
    num_hashes: Option<u32>,
    decrements: Option<u64>,
    hashing: HashingChoice,
}

impl StableBloomFilterBuilder {
    crate::hash::hashing_setters!(index_scheme);

    crate::sizing::capacity_and_fpp_setters!(
        "n, the number of recent items to remember (sizes m and K like a classic filter).",
        "ε, the stable-point false-positive probability (default 1%); P is derived from it unless [`decrements`](Self::decrements) is given."
    );

    crate::sizing::setters! {
        /// m, the number of cells, instead of deriving it from capacity and ε.
        num_cells: u64;

        /// d, the bits per cell, 1 to 16 (default [`DEFAULT_CELL_WIDTH`]).
        cell_width: u32;

        /// K, the number of hash functions.
        num_hashes: u32;

        /// P, the cells decremented per insertion (1 to m), instead of deriving it from ε.
        decrements: u64;
    }

    /// Validates the parameters and allocates the filter.
    ///
    /// With neither capacity nor m, the error is [`Error::ZeroCapacity`]. With m but no
    /// capacity, K = round(log₂(1/ε)) and the capacity is `⌊m ln 2 / K⌋`.
    pub fn build(self) -> Result<StableBloomFilter, Error> {
        let width = crate::sizing::counter_width(self.cell_width, DEFAULT_CELL_WIDTH)?;
        // m and K by the rules of every array-shaped kind; the capacity and ε of a stable
        // filter are its own (the stable point), below.
        let d = sizing::dimensions(
            self.capacity,
            self.fpp,
            self.num_cells,
            self.num_hashes,
            width,
        )?;
        let (fpp, mut num_cells, num_hashes) = (d.fpp, d.num_cells, d.num_hashes);
        let max = (1u32 << width) - 1;
        if self.num_cells.is_none() && self.decrements.is_none() {
            // A small capacity's classic m (under about 7 items' worth) is too few cells
            // for any P ≤ m to reach ε: take the fewest cells that can.
            if let Some(floor) = params::stable_min_cells_for_fpp(num_hashes, max, fpp) {
                num_cells = num_cells.max(floor);
            }
        }
        if num_cells <= num_hashes as u64 {
            return Err(Error::InvalidParameter {
                parameter: "cells",
                reason: format!(
                    "{num_cells} cells for K = {num_hashes} hash functions: the filter needs \
                     more cells than hash functions (m > K)"
                ),
            });
        }
        let decrements = match self.decrements {
            Some(p) => p,
            None => {
                let p = params::stable_decrements_for_fpp(num_cells, num_hashes, max, fpp)
                    .unwrap_or(f64::INFINITY);
                if p > num_cells as f64 {
                    let fewest = params::stable_min_cells_for_fpp(num_hashes, max, fpp)
                        .map_or_else(String::new, |m| {
                            format!(" (at least {m} with K = {num_hashes})")
                        });
                    return Err(Error::UnreachableFpp {
                        kind: Kind::Stable,
                        fpp,
                        reason: format!(
                            "a stable false-positive probability of {fpp} with {num_cells} \
                             cells and K = {num_hashes} needs P = {p:.0} decrements per \
                             insertion, more than there are cells; allow a larger ε or use \
                             more cells{fewest} or hash functions"
                        ),
                    });
                }
                // Rounded up: more decrements, fewer non-zero cells, FPR at most ε.
                (p.ceil() as u64).max(1)
            }
        };
        if decrements == 0 || decrements > num_cells {
            return Err(Error::InvalidParameter {
                parameter: "decrements",
                reason: format!(
                    "P = {decrements} must be between 1 and the number of cells ({num_cells})"
                ),
            });
        }
        let capacity = self.capacity.unwrap_or_else(|| {
            ((num_cells as f64 * std::f64::consts::LN_2 / num_hashes as f64).floor() as u64).max(1)
        });
        let target_fpp = if self.decrements.is_none() {
            fpp
        } else {
            params::stable_fpp(num_cells, num_hashes, decrements, max)
        };
        let hashing = self.hashing.resolve()?;
        Ok(StableBloomFilter {
            cells: PackedCounters::zeros(num_cells, width)?,
            num_hashes,
            decrements,
            hashing,
            capacity,
            target_fpp,
            inserted: 0,
            insertions: 0,
            rng: StableBloomFilter::initial_rng(hashing.seed),
        })
    }
}

crate::codec::stored! {
    /// The stable filter's parameters on disk (64 bytes), its generator's state included so a
    /// loaded filter goes on as the saved one would. Payload: the cells, packed ⌊64/d⌋ to a
    /// 64-bit little-endian word (`PackedCounters`).
    struct Stored of f: StableBloomFilter {
        num_cells: u64 = f.num_cells(),
        cell_width: u32 = f.cell_width(),
        num_hashes: u32 = f.num_hashes => check_num_hashes,
        decrements: u64 = f.decrements,
        capacity: u64 = f.capacity => check_capacity,
        target_fpp: f64 = f.target_fpp,
        inserted: u64 = f.inserted,
        insertions: u64 = f.insertions,
        rng: u64 = f.rng,
    }
    persist Stable, payload cells;
}

impl StableBloomFilter {
    fn decode(parts: &Parts<'_>) -> Result<Self, DecodeError> {
        let Shape { stored, hashing } = ViewShape::read(parts)?;
        let Stored {
            num_cells,
            cell_width,
            num_hashes,
            decrements,
            capacity,
            target_fpp,
            inserted,
            insertions,
            rng,
        } = stored;
        let cells = PackedCounters::from_le_bytes(num_cells, cell_width, parts.payload)?;
        Ok(StableBloomFilter {
            cells,
            num_hashes,
            decrements,
            hashing,
            capacity,
            target_fpp,
            inserted,
            insertions,
            rng,
        })
    }
}

impl Stored {
    /// The cells in the payload: all of it.
    fn span(&self) -> CounterSpan {
        CounterSpan {
            at: 0,
            len: self.num_cells,
            width: self.cell_width,
        }
    }
}

/// A stable filter as loading and a read-only view ([`format::view`](crate::format::view))
/// read it: the stored parameters, checked, and the query over cells the view fetches from
/// the file. Loading checks the padding bits of every word; the view checks them in each
/// chunk when it first touches it ([`KindView::check_piece`]). A view answers without
/// inserting, so the generator's state is only reported.
type ViewShape = Shape<Stored>;

impl KindView for ViewShape {
    fn read(parts: &Parts<'_>) -> Result<Self, DecodeError> {
        parts.expect_kind(Kind::Stable)?;
        let stored = Stored::read(parts.params)?;
        let Stored {
            num_cells,
            cell_width,
            num_hashes,
            decrements,
            target_fpp,
            ..
        } = stored;
        crate::codec::check_width_in_range("cell_width", cell_width)?;
        if num_cells <= num_hashes as u64
            || num_cells.saturating_mul(cell_width as u64) > MAX_NUM_BITS
        {
            return Err(invalid(
                "num_cells",
                format!(
                    "{num_cells} cells of {cell_width} bits: need more than K = {num_hashes} \
                     cells and at most {MAX_NUM_BITS} bits"
                ),
            ));
        }
        if decrements == 0 || decrements > num_cells {
            return Err(invalid(
                "decrements",
                format!("{decrements} is not in 1..={num_cells}"),
            ));
        }
        // A target derived from explicit parameters is the stable-point formula's value,
        // which can round to 0 or 1 for extreme parameters; NaN and the rest are invalid.
        if !(0.0..=1.0).contains(&target_fpp) {
            return Err(invalid(
                "target_fpp",
                format!("{target_fpp} is not in [0, 1]"),
            ));
        }
        // The payload's length against m and d, before anything is allocated.
        PackedCounters::check_encoded_len(num_cells, cell_width, parts.payload.len())?;
        Ok(Shape::of(stored, parts))
    }

    fn facts(&self) -> ViewFacts {
        let s = &self.stored;
        crate::format::view::view_facts!(s, s.num_cells, s.num_hashes)
    }

    fn contains(&self, bytes: &[u8], view: &FilterView) -> Result<bool, Error> {
        let s = &self.stored;
        let span = s.span();
        let positions = self.hashing.positions(bytes, s.num_hashes, s.num_cells);
        holds(positions, |i| view.counter(&span, i))
    }

    /// The non-zero cells, counted over the payload; the rest as the loaded filter works it
    /// out from them.
    fn summary(&self, view: &FilterView) -> Result<Summary, Error> {
        let s = &self.stored;
        let mut nonzero = 0u64;
        view.for_each_counter(&s.span(), |c| nonzero += (c != 0) as u64)?;
        Ok(view.summary_of(
            None,
            properties(s, nonzero),
            params::estimate_items(nonzero, s.num_cells, s.num_hashes),
            params::fpp_from_fill(nonzero, s.num_cells, s.num_hashes),
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

    #[test]
    fn splitmix64_matches_the_reference_sequence() {
        // Reference outputs for seed 0 (Vigna's splitmix64.c).
        let mut state = 0u64;
        assert_eq!(splitmix64(&mut state), 0xe220_a839_7b1d_cdaf);
        assert_eq!(splitmix64(&mut state), 0x6e78_9e6a_a1b9_65f4);
        assert_eq!(splitmix64(&mut state), 0x06c4_5d18_8009_454f);
    }

    #[test]
    fn decrements_wrap_around_and_stop_at_zero() {
        let mut cells = PackedCounters::zeros(10, 3).unwrap();
        for i in 0..10 {
            cells.set(i, 2);
        }
        cells.set(9, 0);
        let at = cells.by_division();
        decrement_run(&mut cells, at, 8, 4); // cells 8, 9, 0, 1
        let values: Vec<u32> = (0..10).map(|i| cells.get(i)).collect();
        assert_eq!(values, [1, 1, 2, 2, 2, 2, 2, 2, 1, 0]);
        decrement_run(&mut cells, at, 0, 10);
        assert_eq!(cells.get(0), 0);
        assert_eq!(cells.get(2), 1);
        assert_eq!(cells.get(9), 0);
    }

    /// The property tests' filter: `cells` cells, k positions, a run of up to 30 decrements.
    fn tested(cells: u64, k: u32, scheme: IndexScheme, seed: u64) -> StableBloomFilter {
        StableBloomFilter::builder()
            .num_cells(cells)
            .num_hashes(k)
            .decrements(cells.min(30))
            .index_scheme(scheme)
            .seed(seed)
            .build()
            .unwrap()
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(64))]

        /// The insert at k = 4, 7 and 10 (positions once, into an array) against the insert
        /// over the scheme's positions (any other k, and the seeded scheme): the same answers
        /// and the same cells, generator and counts, under the digest schemes.
        #[test]
        fn the_common_k_insert_is_the_insert_over_positions(
            k in proptest::sample::select(vec![4u32, 7, 10, 3]),
            cells in 20u64..2_000,
            scheme_at in 0usize..3,
            seed in proptest::num::u64::ANY,
            items in proptest::collection::vec(0u64..500, 0..300),
        ) {
            let mut fast = tested(cells, k, crate::hash::TESTED_SCHEMES[..3][scheme_at], seed);
            let mut general = fast.clone();
            for item in &items {
                let (h, m) = (general.hashing, general.cells.len());
                let by_positions = general.add(h.positions(&item.to_le_bytes(), k, m));
                proptest::prop_assert_eq!(fast.insert(item), by_positions);
            }
            proptest::prop_assert!(fast == general);
        }

        /// An insert answers "new" exactly when the query answered "absent" just before (one
        /// of its K cells was 0), at the common k through the array of positions and at any
        /// other k and the seeded scheme through the scheme's positions; and the item is
        /// reported present after it.
        #[test]
        fn an_insert_is_new_exactly_when_the_query_said_absent(
            k in proptest::sample::select(vec![4u32, 7, 10, 3]),
            cells in 20u64..600,
            scheme_at in 0usize..4,
            seed in proptest::num::u64::ANY,
            items in proptest::collection::vec(0u64..200, 0..300),
        ) {
            let mut f = tested(cells, k, crate::hash::TESTED_SCHEMES[scheme_at], seed);
            for item in &items {
                let was_present = f.contains(item);
                let is_new = f.insert(item);
                proptest::prop_assert_eq!(is_new, !was_present);
                proptest::prop_assert!(f.contains(item));
            }
        }
    }

    #[test]
    fn insertion_decrements_p_cells_then_sets_k_cells_to_max() {
        let mut f = StableBloomFilter::builder()
            .num_cells(1_000)
            .num_hashes(3)
            .decrements(5)
            .build()
            .unwrap();
        f.insert("a");
        assert!(f.cells.count_nonzero() <= 3);
        assert_eq!(f.cells.count_saturated(), f.cells.count_nonzero());
        let sum = |f: &StableBloomFilter| (0..1_000).map(|i| f.cells.get(i) as u64).sum::<u64>();
        let before = sum(&f);
        // "b" sets at most 3 new cells (at most 21) and removes at most 5.
        f.insert("b");
        let after = sum(&f);
        assert!(
            after + 5 >= before && after <= before + 21,
            "{before} {after}"
        );
    }

    #[test]
    fn insert_reports_duplicates_and_counts() {
        let mut f = StableBloomFilter::with_capacity(1_000, 0.01).unwrap();
        assert!(f.insert("x"));
        assert!(f.insert_and_check("x"));
        assert_eq!(Filter::len(&f), 1);
        assert_eq!(f.insertions(), 2);
        f.clear();
        assert!(Filter::is_empty(&f));
        assert_eq!(f.insertions(), 0);
        assert_eq!(f, StableBloomFilter::with_capacity(1_000, 0.01).unwrap());
    }

    #[test]
    fn a_capacity_of_a_few_items_builds_with_enough_cells_to_reach_its_fpp() {
        // n = 4 at ε = 1% is 39 cells by the classic formula, and no P ≤ 39 reaches 1%
        // with K = 7: `bloomkit build --kind stable` of a four-line file was refused.
        for (n, fpp) in [(1u64, 0.01), (4, 0.01), (7, 0.01), (3, 1e-6), (2, 0.5)] {
            let mut f = StableBloomFilter::with_capacity(n, fpp)
                .unwrap_or_else(|e| panic!("n {n}, ε {fpp}: {e}"));
            assert!(f.decrements() <= f.num_cells(), "n {n}, ε {fpp}");
            assert!(f.stable_fpp() <= fpp, "n {n}, ε {fpp}: {}", f.stable_fpp());
            assert_eq!(f.capacity(), n);
            assert!(f.insert("x") && f.contains("x"));
        }
        // Cells given: the error names the fewest that reach ε.
        let error = StableBloomFilter::builder()
            .num_cells(39)
            .fpp(0.01)
            .build()
            .unwrap_err();
        assert!(
            error
                .to_string()
                .contains("more cells (at least 71 with K = 7)"),
            "{error}"
        );
        // From 8 items on the classic m suffices and stays as it was.
        let f = StableBloomFilter::with_capacity(8, 0.01).unwrap();
        assert_eq!(f.num_cells(), params::optimal_num_bits(8, 0.01).unwrap());
    }

    #[test]
    fn with_capacity_reaches_the_target_stable_fpp() {
        for (n, fpp) in [(1_000u64, 0.01), (100_000, 0.001), (50, 0.1)] {
            let f = StableBloomFilter::with_capacity(n, fpp).unwrap();
            let got = f.stable_fpp();
            assert!((got - fpp).abs() < 0.05 * fpp, "n {n}, ε {fpp}: {got}");
            assert_eq!(f.num_cells(), params::optimal_num_bits(n, fpp).unwrap());
        }
    }

    #[test]
    fn degenerate_parameters_are_errors() {
        let b = StableBloomFilter::builder;
        assert_eq!(b().build().unwrap_err(), Error::ZeroCapacity);
        assert_eq!(
            b().num_cells(100).capacity(0).build().unwrap_err(),
            Error::ZeroCapacity
        );
        // Zero cells is the same error in every kind.
        assert_eq!(b().num_cells(0).build().unwrap_err(), Error::ZeroBits);
        assert!(matches!(
            b().num_cells(5).num_hashes(5).build(),
            Err(Error::InvalidParameter { .. })
        ));
        assert_eq!(
            b().num_cells(100).num_hashes(0).build().unwrap_err(),
            Error::ZeroHashes
        );
        assert!(matches!(
            b().num_cells(100).num_hashes(65).build(),
            Err(Error::TooManyHashes { .. })
        ));
        assert_eq!(
            b().num_cells(100).cell_width(0).build().unwrap_err(),
            Error::InvalidCounterWidth(0)
        );
        assert_eq!(
            b().num_cells(100).cell_width(17).build().unwrap_err(),
            Error::InvalidCounterWidth(17)
        );
        assert!(matches!(
            b().num_cells(100).decrements(0).build(),
            Err(Error::InvalidParameter {
                parameter: "decrements",
                ..
            })
        ));
        assert!(matches!(
            b().num_cells(100).decrements(101).build(),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(matches!(
            b().num_cells(u64::MAX).build(),
            Err(Error::TooLarge { .. })
        ));
        assert!(matches!(
            b().num_cells(MAX_NUM_BITS).cell_width(2).build(),
            Err(Error::TooLarge { .. })
        ));
        assert!(matches!(
            StableBloomFilter::with_capacity(u64::MAX, 0.01),
            Err(Error::CapacityTooLarge {
                capacity: u64::MAX,
                ..
            })
        ));
        assert!(matches!(
            StableBloomFilter::with_capacity(10, f64::NAN),
            Err(Error::InvalidFpp(_))
        ));
        // One hash function cannot reach 10⁻⁹ with 100 cells: P would exceed m.
        assert!(matches!(
            b().num_cells(100).num_hashes(1).fpp(1e-9).build(),
            Err(Error::UnreachableFpp {
                kind: Kind::Stable,
                ..
            })
        ));
        // The smallest filter: two cells, one hash, one decrement.
        let mut tiny = b()
            .num_cells(2)
            .num_hashes(1)
            .decrements(1)
            .build()
            .unwrap();
        assert!(tiny.insert("x"));
        assert!(tiny.contains("x"));
    }

    #[test]
    fn a_filter_whose_stable_fpp_rounds_to_one_still_round_trips() {
        // 16 cells of Max = 31, one decrement per insertion: the stable point is all
        // non-zero, and the derived target is 1.0 in f64.
        let f = StableBloomFilter::builder()
            .num_cells(16)
            .cell_width(5)
            .num_hashes(3)
            .decrements(1)
            .build()
            .unwrap();
        assert_eq!(f.target_fpp(), 1.0);
        assert_eq!(StableBloomFilter::from_bytes(&f.to_bytes()).unwrap(), f);
    }

    #[test]
    fn debug_and_properties_show_the_parameters() {
        let f = StableBloomFilter::with_capacity(1000, 0.01).unwrap();
        let s = format!("{f:?}");
        for needle in [
            "num_cells: 9586",
            "cell_width: 3",
            "num_hashes: 7",
            "decrements: 64",
        ] {
            assert!(s.contains(needle), "{s}");
        }
        let props = Filter::properties(&f);
        for label in [
            "decrements per insertion (P)",
            "stable-point fpp",
            "zero fraction (now)",
        ] {
            assert!(props.iter().any(|(l, _)| *l == label), "{props:?}");
        }
        assert_eq!(Filter::memory_bytes(&f), 9_586usize.div_ceil(21) * 8);
    }

    #[test]
    fn decoding_checks_every_parameter() {
        let mut f = StableBloomFilter::builder()
            .num_cells(100)
            .num_hashes(3)
            .decrements(4)
            .build()
            .unwrap();
        f.extend(0..10u32);
        let bytes = f.to_bytes();
        assert_eq!(StableBloomFilter::from_bytes(&bytes).unwrap(), f);
        let patch = |offset: usize, value: &[u8]| {
            let mut b = bytes.clone();
            b[offset..offset + value.len()].copy_from_slice(value);
            let n = b.len();
            let sum = xxhash_rust::xxh3::xxh3_64(&b[..n - 8]);
            b[n - 8..].copy_from_slice(&sum.to_le_bytes());
            StableBloomFilter::from_bytes(&b)
        };
        // Parameters at offset 28: cells 8, width 4, K 4, P 8, capacity 8, fpp 8, …
        assert!(patch(28, &3u64.to_le_bytes()).is_err()); // m ≤ K
        assert!(patch(28, &u64::MAX.to_le_bytes()).is_err());
        assert!(patch(28, &200u64.to_le_bytes()).is_err()); // payload too short
        assert!(patch(36, &0u32.to_le_bytes()).is_err());
        assert!(patch(36, &17u32.to_le_bytes()).is_err());
        assert!(patch(36, &4u32.to_le_bytes()).is_err()); // payload length differs
        assert!(patch(40, &0u32.to_le_bytes()).is_err());
        assert!(patch(44, &0u64.to_le_bytes()).is_err());
        assert!(patch(44, &101u64.to_le_bytes()).is_err());
        assert!(patch(52, &0u64.to_le_bytes()).is_err());
        assert!(patch(60, &2.0f64.to_le_bytes()).is_err());
    }
}
