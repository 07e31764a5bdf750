//! The classic Bloom filter (Bloom, "Space/Time Trade-offs in Hash Coding with Allowable
//! Errors", CACM 1970) .
//!
//! An array of m bits, all 0 at first, and k hash functions with values in `[0, m)`.
//! Inserting an item sets its k bits; a query answers "definitely not" when one of the
//! item's bits is 0 and "maybe" when all are 1. Bits are never cleared, so an inserted item
//! is always found (no false negatives), and an item cannot be removed: its bits may be
//! shared with other items. This type therefore has no `remove` at all — see
//! the counting and deletable kinds for filters that can delete.
//!
//! Sizing follows the standard rule (see [`crate::params`]): for n items at false-positive
//! probability ε, `m = ⌈−n ln ε / (ln 2)²⌉` and `k = round((m/n) ln 2)`.

mod options;
pub mod theory;

use std::sync::OnceLock;

use crate::any::Summary;
use crate::bits::BitVec;
use crate::caches;
use crate::codec::Parts;
use crate::error::{DecodeError, Error};
use crate::filter::{Filter, Kind};
use crate::format::view::{view_facts, FilterView, KindView, Shape, ViewFacts};
use crate::hash::HashingChoice;
use crate::hash::{with_common_k, EnhancedDouble, Hashing, IndexScheme, Item};
use crate::lookahead;
use crate::registry::ParametersBlock;
use crate::sizing;

/// The classic Bloom filter.
///
/// ```
/// use bloomkit::BloomFilter;
///
/// // Sized by the standard formulas for 58 110 words at ε = 0.1%.
/// let mut filter = BloomFilter::with_capacity(58_110, 0.001)?;
/// assert_eq!(filter.num_hashes(), 10);
///
/// filter.insert("dist");
/// assert!(filter.contains("dist"));      // maybe in the set (here: yes)
/// assert!(!filter.contains("fkuv"));     // definitely not (with probability 1 − ε)
/// # Ok::<(), bloomkit::Error>(())
/// ```
#[derive(Clone, PartialEq)]
pub struct BloomFilter {
    // pub(crate) for the concurrent filter, which shares this layout.
    pub(crate) bits: BitVec,
    pub(crate) num_hashes: u32,
    pub(crate) hashing: Hashing,
    pub(crate) capacity: u64,
    pub(crate) target_fpp: f64,
    pub(crate) inserted: u64,
}

impl BloomFilter {
    /// A filter for `capacity` items at false-positive probability `fpp`, with the default
    /// hashing (MurmurHash3, enhanced double hashing, seed 0).
    ///
    /// ```
    /// use bloomkit::BloomFilter;
    /// let filter = BloomFilter::with_capacity(1_000, 0.01)?;
    /// assert_eq!(filter.num_bits(), 9_586);
    /// assert_eq!(filter.num_hashes(), 7);
    /// assert!(BloomFilter::with_capacity(0, 0.01).is_err());
    /// assert!(BloomFilter::with_capacity(1_000, 1.0).is_err());
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn with_capacity(capacity: impl crate::params::ItemCount, fpp: f64) -> Result<Self, Error> {
        Self::builder().capacity(capacity).fpp(fpp).build()
    }

    /// A builder for every other choice: explicit m and k, hash function, index scheme, seed.
    pub fn builder() -> BloomFilterBuilder {
        BloomFilterBuilder::default()
    }

    /// Adds an item. Returns `true` if the filter changed (at least one of its bits was 0, so
    /// the item was certainly new), `false` if it was already reported present.
    #[inline]
    pub fn insert<I: Item + ?Sized>(&mut self, item: &I) -> bool {
        let (hashing, k, m) = (self.hashing, self.num_hashes, self.bits.len());
        let bits = &mut self.bits;
        let changed = item.with_bytes(|bytes| {
            if hashing.scheme == IndexScheme::EnhancedDoubleHashing {
                // The default scheme's positions as a plain loop (see `EnhancedDouble`).
                EnhancedDouble::new(hashing.digest(bytes), k, m)
                    .fold(false, |changed, p| bits.set(p) | changed)
            } else {
                hashing
                    .positions(bytes, k, m)
                    .fold(false, |changed, p| bits.set(p) | changed)
            }
        });
        self.inserted += changed as u64;
        changed
    }

    /// `false` if the item is certainly absent, `true` if it may be present.
    ///
    /// How the k bits are read depends on the filter's size ([`branch_free_max_bits`]): a
    /// filter that fits in this machine's caches reads all k and combines them without a
    /// branch; a larger one requests all k words from memory first (k ≤ 16), then stops at
    /// the first 0 bit.
    #[inline]
    pub fn contains<I: Item + ?Sized>(&self, item: &I) -> bool {
        item.with_bytes(|bytes| self.holds(bytes, self.branch_free()))
    }

    /// Whether all k bits of the item with these bytes are 1, read branch-free or stopping
    /// at the first 0 (the two give the same answer; a unit test holds them to it).
    #[inline]
    fn holds(&self, bytes: &[u8], branch_free: bool) -> bool {
        if self.hashing.scheme == IndexScheme::EnhancedDoubleHashing {
            // The default scheme's positions as a plain loop (see `EnhancedDouble`).
            let digest = self.hashing.digest(bytes);
            let (bits, m) = (&self.bits, self.bits.len());
            return if branch_free {
                with_common_k(self.num_hashes, |k| {
                    EnhancedDouble::new(digest, k, m).fold(true, |all, p| all & bits.get(p))
                })
            } else if self.num_hashes as usize <= MAX_REQUESTED_FIRST {
                // From main memory: every word requested first, so that the k misses are
                // in flight together, then read in order, stopping at the first 0.
                let mut at = [0u64; MAX_REQUESTED_FIRST];
                let positions = EnhancedDouble::new(digest, self.num_hashes, m);
                for (slot, p) in at.iter_mut().zip(positions) {
                    bits.prefetch(p);
                    *slot = p;
                }
                at[..self.num_hashes as usize].iter().all(|&p| bits.get(p))
            } else {
                EnhancedDouble::new(digest, self.num_hashes, m).all(|p| bits.get(p))
            };
        }
        let positions = self
            .hashing
            .positions(bytes, self.num_hashes, self.bits.len());
        if branch_free {
            positions.fold(true, |all, p| all & self.bits.get(p))
        } else {
            { positions }.all(|p| self.bits.get(p))
        }
    }

    /// Whether queries read all k bits without branching (see [`branch_free_max_bits`]).
    #[inline(always)]
    fn branch_free(&self) -> bool {
        self.bits.len() <= branch_free_max_bits()
    }

    /// Whether the batch calls run the single calls' loop rather than the prefetching
    /// lookahead window (see [`batch_cached_max_bits`]).
    #[inline(always)]
    fn batch_in_cache(&self) -> bool {
        self.bits.len() <= batch_cached_max_bits()
    }

    /// The answers of [`contains`](Self::contains) for every item. A filter past
    /// [`batch_cached_max_bits`] (beyond one core's L2) is read through the lookahead window
    /// ([`lookahead`]): each item is hashed and the words of its k bits
    /// prefetched a window of items before they are read, so that many cache misses are
    /// always in flight; then its k bits are combined without a branch. (Under
    /// [`IndexScheme::SeededHashes`](crate::IndexScheme), whose k positions cost k hashes,
    /// the positions of a group of items are computed once, prefetched, then read.) A
    /// smaller filter is served from the caches, where the single queries' loop is faster.
    /// The answers are those of the single calls.
    ///
    /// ```
    /// use bloomkit::BloomFilter;
    /// let mut filter = BloomFilter::with_capacity(1000, 0.01)?;
    /// assert_eq!(filter.insert_batch(&["a", "b", "a"]), 2);
    /// assert_eq!(filter.contains_batch(&["a", "b", "zz"]), vec![true, true, false]);
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn contains_batch<I: Item>(&self, items: &[I]) -> Vec<bool> {
        lookahead::answers(items.len(), |out| self.contains_batch_into(items, out))
    }

    /// [`contains_batch`](Self::contains_batch) into a vector that is cleared first (reuse it
    /// across calls to avoid an allocation per batch).
    pub fn contains_batch_into<I: Item>(&self, items: &[I], out: &mut Vec<bool>) {
        lookahead::ready(out, items.len());
        if self.batch_in_cache() {
            out.extend(items.iter().map(|item| self.contains(item)));
        } else if self.hashing.scheme == IndexScheme::SeededHashes {
            self.grouped_contains_into(items, out);
        } else if self.hashing.scheme == IndexScheme::EnhancedDoubleHashing {
            let (bits, hashing) = (&self.bits, self.hashing);
            let tested = |bits: &mut &BitVec, positions: &[u64]| {
                out.push(positions.iter().fold(true, |all, &p| all & bits.get(p)));
            };
            match self.num_hashes {
                7 => in_window::<7, _, _>(bits, hashing, items, tested),
                10 => in_window::<10, _, _>(bits, hashing, items, tested),
                4 => in_window::<4, _, _>(bits, hashing, items, tested),
                k => lookahead::pipeline(&mut DoubleProbes(bits, hashing, k), out, items),
            }
        } else {
            let mut stages = Probes(&self.bits, self.hashing, self.num_hashes);
            lookahead::pipeline(&mut stages, out, items);
        }
    }

    /// The grouped, prefetched batch query of a large filter (appends to `out`).
    fn grouped_contains_into<I: Item>(&self, items: &[I], out: &mut Vec<bool>) {
        let (hashing, k) = (self.hashing, self.num_hashes);
        in_seeded_groups(&self.bits, hashing, k, items, |bits, item_positions| {
            out.push(
                item_positions
                    .iter()
                    .fold(true, |all, &p| all & bits.get(p)),
            );
        });
    }

    /// Inserts every item (a filter past [`batch_cached_max_bits`] prefetches their words
    /// ahead as [`contains_batch`](Self::contains_batch) does). The filter ends exactly as after
    /// [`insert`](Self::insert) of each item in order; returns how many of those inserts
    /// changed the filter.
    pub fn insert_batch<I: Item>(&mut self, items: &[I]) -> u64 {
        // Huge pages for a large array that this batch writes most pages of (the policy, in
        // `arch`): each insert sets k bits.
        self.bits
            .advise_bulk_write((items.len() as u64).saturating_mul(u64::from(self.num_hashes)));
        let mut changed = 0;
        if self.batch_in_cache() {
            // In the caches: the single inserts' loop is faster (as for queries).
            return items.iter().filter(|item| self.insert(*item)).count() as u64;
        } else if self.hashing.scheme == IndexScheme::SeededHashes {
            let (hashing, k) = (self.hashing, self.num_hashes);
            in_seeded_groups(&mut self.bits, hashing, k, items, |bits, item_positions| {
                changed += item_positions
                    .iter()
                    .fold(false, |changed, &p| bits.set(p) | changed)
                    as u64;
            });
        } else if self.hashing.scheme == IndexScheme::EnhancedDoubleHashing {
            let (bits, hashing) = (&mut self.bits, self.hashing);
            let set = |bits: &mut &mut BitVec, positions: &[u64]| {
                changed += positions
                    .iter()
                    .fold(false, |changed, &p| bits.set(p) | changed)
                    as u64;
            };
            match self.num_hashes {
                7 => in_window::<7, _, _>(bits, hashing, items, set),
                10 => in_window::<10, _, _>(bits, hashing, items, set),
                4 => in_window::<4, _, _>(bits, hashing, items, set),
                k => {
                    let mut stages = DoubleSets(hashing, k, 0);
                    lookahead::pipeline(&mut stages, bits, items);
                    changed = stages.2;
                }
            }
        } else {
            let mut stages = Sets(self.hashing, self.num_hashes, 0);
            lookahead::pipeline(&mut stages, &mut self.bits, items);
            changed = stages.2;
        }
        self.inserted += changed;
        changed
    }

    /// m, the number of bits.
    pub fn num_bits(&self) -> u64 {
        self.bits.len()
    }

    crate::sizing::getters! {
        /// k, the number of hash functions.
        num_hashes: u32;
    }

    crate::sizing::capacity_and_fpp_getters!();

    /// The number of bits that are 1.
    pub fn count_ones(&self) -> u64 {
        self.bits.count_ones()
    }

    /// The fraction of bits that are 1; about one half at capacity with the optimal k.
    pub fn fill_ratio(&self) -> f64 {
        self.count_ones() as f64 / self.num_bits() as f64
    }

    /// The parameters that decide where an item lands, and the hashing, for
    /// [`require_same_layout`](crate::filter::require_same_layout).
    pub(crate) fn layout(&self) -> String {
        layout(self.num_bits(), self.num_hashes, self.hashing)
    }

    /// Re-counts the items from the fill after a union or intersection, where the exact
    /// count is lost.
    fn recount(&mut self) {
        let estimate = Filter::estimated_len(self);
        self.inserted = crate::params::count_from_estimate(estimate);
    }
}

impl Filter for BloomFilter {
    crate::filter::filter_basics!(
        Bloom: hashing, insert, contains, capacity,
        state(bits, inserted),
        fill(count_ones, num_bits, num_hashes),
        classic_rate(num_bits, num_hashes)
    );

    fn properties(&self) -> Vec<(&'static str, String)> {
        properties(
            self.num_bits(),
            self.num_hashes,
            self.target_fpp,
            self.fill_ratio(),
        )
    }

    fn target_fpp(&self) -> f64 {
        BloomFilter::target_fpp(self)
    }
}

crate::registry::registered!(
    BloomFilter,
    {
        name: "bloom",
        summary: "The classic Bloom filter: no remove; union.",
        grow: false,
        forgets: false,
        index_scheme: true,
    },
    merge
);

/// The layout of a classic filter (shared with [`ConcurrentBloomFilter`](crate::ConcurrentBloomFilter),
/// so that the two merge with one check).
pub(crate) fn layout(num_bits: u64, num_hashes: u32, hashing: Hashing) -> String {
    format!("m = {num_bits}, k = {num_hashes}, {hashing}")
}

crate::filter::bit_array_mergeable!(
    /// Bitwise OR: exactly the filter that inserting both sets would have built.
    ///
    /// ```
    /// use bloomkit::{BloomFilter, Mergeable};
    /// let mut a = BloomFilter::with_capacity(100, 0.01)?;
    /// let mut b = BloomFilter::with_capacity(100, 0.01)?;
    /// a.insert("left");
    /// b.insert("right");
    /// a.union(&b)?;
    /// assert!(a.contains("left") && a.contains("right"));
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    BloomFilter
);

crate::filter::collection_impls!(
    /// Collects items into a filter sized for their number at ε = 1%, the most common choice.
    /// (The items are buffered to count them; use [`BloomFilter::with_capacity`] and `extend`
    /// to choose ε or to stream.)
    ///
    /// ```
    /// use bloomkit::BloomFilter;
    /// let filter: BloomFilter = ["a", "b", "c"].into_iter().collect();
    /// assert!(filter.contains("b"));
    /// assert_eq!(filter.capacity(), 3);
    /// ```
    BloomFilter
);

pub use crate::params::DEFAULT_FPP;

/// The largest k whose words a query of a filter in main memory requests before it reads
/// any (the positions wait in an array on the stack). A single query then waits for about
/// one miss instead of one after another: at n = 10⁸ (114 MiB, k = 7), absent items took
/// 86–92 ns against 129–144 ns reading word by word, present items 118 against 128–134 ns,
/// where fastbloom 0.17 took 144–158 ns in the same runs (`BLOOMKIT_BENCH_N=100000000
/// BLOOMKIT_BENCH_FPP=0.01 BLOOMKIT_BENCH_ONLY="bloomkit classic,fastbloom" cargo bench -p
/// bloomkit --bench peers`, two pairs of runs; 2-core AMD EPYC, load 1.0–1.1).
const MAX_REQUESTED_FIRST: usize = 16;

/// The largest filter (in bits) whose queries read all k bits and combine them without a
/// branch, on a machine that does not say how large its caches are (see
/// [`branch_free_max_bits`]): 32 MiB, the L3 of the machine where it was measured.
///
/// A query for an absent item meets its first 0 bit after about two reads (each bit is 1
/// with probability about 1/2), at a place no branch predictor can guess. While the filter
/// is in the caches, the mispredicted branch costs more than reading the other bits: at
/// n = 10⁷ (11.4 MiB) branch-free absent-item queries took 14–19 ns against 28–33 ns with the
/// early stop. From main memory each extra read costs more than the branch: at n = 10⁸
/// (114 MiB) 115 ns against 88 ns. (`BLOOMKIT_BENCH_N=10000000` and `=100000000
/// BLOOMKIT_BENCH_FPP=0.01 BLOOMKIT_BENCH_ONLY=classic cargo bench -p bloomkit --bench
/// peers`, each with this constant at `u64::MAX` and at 0; 2-core AMD EPYC with 32 MiB of
/// L3.) The limit sits at that L3 size; [`branch_free_max_bits`] puts it at the L3 of the
/// machine in use.
pub const BRANCH_FREE_MAX_BITS: u64 = 32 << 23;

/// The largest filter (in bits: 1 MiB, the L2 of the machine where it was measured) whose
/// batch calls run the single calls' loop, on a machine that does not say how large its
/// caches are (see [`batch_cached_max_bits`]); a larger one goes through the lookahead window
/// ([`lookahead`]), which prefetches each item's k words a window of items ahead, and
/// reads them without a branch as a query in the caches does.
///
/// The single query's limit ([`BRANCH_FREE_MAX_BITS`], the L3 size) was set on an idle
/// machine. With the L3 shared by busy neighbours, a filter of 11.4 MiB (n = 10⁷, ε = 1%)
/// is mostly in main memory: through the Python package's batch calls on lists of `str`,
/// `add_many` took 400–440 ns per item with the single calls' loop and 120–180 ns with the
/// window, `contains_many` 400–500 ns against 200–220 ns; at n = 10⁶ (1.1 MiB) both paths
/// measured the same within the noise (91–140 ns). (Each run built the filter and timed the
/// best of three calls on 10⁶ or 10⁷ random 29-byte names, with this limit at 0 and at
/// `u64::MAX`; 2-core AMD EPYC, load average 11–12.)
pub const BATCH_CACHED_MAX_BITS: u64 = 1 << 23;

/// The largest filter (in bits) whose queries read all k bits without a branch: the size
/// of this machine's last-level cache as Linux reports it ([`caches`]), read once, or
/// [`BRANCH_FREE_MAX_BITS`] where it does not. The crossing point measured for that
/// constant (branch-free cheaper in the L3, the early stop cheaper from main memory) is a
/// property of the caches, so it moves with them.
///
/// [`caches`]: crate::caches::caches
pub fn branch_free_max_bits() -> u64 {
    static LIMIT: OnceLock<u64> = OnceLock::new();
    *LIMIT.get_or_init(|| bits_of(caches::caches().last_level).unwrap_or(BRANCH_FREE_MAX_BITS))
}

/// The largest filter (in bits) whose batch calls run the single calls' loop: this
/// machine's L2 as Linux reports it, read once, or [`BATCH_CACHED_MAX_BITS`] where it does
/// not.
pub fn batch_cached_max_bits() -> u64 {
    static LIMIT: OnceLock<u64> = OnceLock::new();
    *LIMIT.get_or_init(|| bits_of(caches::caches().l2).unwrap_or(BATCH_CACHED_MAX_BITS))
}

/// A cache's size in bits.
fn bits_of(bytes: Option<u64>) -> Option<u64> {
    bytes?.checked_mul(8)
}

/// Items whose positions a batch computes at once under
/// [`IndexScheme::SeededHashes`](crate::IndexScheme) (the digest schemes go through the
/// lookahead window instead).
pub const SEEDED_GROUP: usize = 16;

/// The seeded scheme's batches: for a group of [`SEEDED_GROUP`] items at a time, the k
/// positions of each item are computed and their words prefetched, then `each` gets the
/// bits (shared for queries, `&mut` for inserts) and one item's positions, item by item.
fn in_seeded_groups<I: Item, B: std::ops::Deref<Target = BitVec>>(
    mut bits: B,
    hashing: Hashing,
    k: u32,
    items: &[I],
    mut each: impl FnMut(&mut B, &[u64]),
) {
    let m = bits.len();
    let mut positions = Vec::with_capacity(SEEDED_GROUP * k as usize);
    for group in items.chunks(SEEDED_GROUP) {
        positions.clear();
        for item in group {
            item.with_bytes(|bytes| positions.extend(hashing.positions(bytes, k, m)));
        }
        for &p in &positions {
            bits.prefetch(p);
        }
        for item_positions in positions.chunks_exact(k as usize) {
            each(&mut bits, item_positions);
        }
    }
}

/// The default scheme's batches past the caches for a k known at compile time (`K`: the k
/// of ε = 5%, 1% and 0.1%, as [`with_common_k`] picks for single queries): the lookahead
/// window of [`lookahead`], over positions. Each item is hashed once, its K positions
/// computed once into its slot of a ring of [`lookahead::WINDOW`] slots and their words
/// prefetched; [`lookahead::WINDOW`] items later `each` gets the bits (shared for queries,
/// `&mut` for inserts) and the K positions. The window of digests ([`DoubleProbes`],
/// [`DoubleSets`], still used for any other k) derives the positions twice, each time in a
/// loop over a k read at run time: for a query at k = 7, 226 instructions per item
/// besides the hash against 178 here (callgrind, `contains_many` of 10⁶ names through the
/// Python package, `crates/bloomkit-py/bench/batch_callgrind.py`; BENCHMARKS.md). Items are
/// used in their order, so the filter ends as after the single inserts.
#[inline(always)]
fn in_window<const K: usize, I: Item, B: std::ops::Deref<Target = BitVec>>(
    mut bits: B,
    hashing: Hashing,
    items: &[I],
    mut each: impl FnMut(&mut B, &[u64]),
) {
    const W: usize = lookahead::WINDOW;
    let m = bits.len();
    let mut ring = [[0u64; K]; W];
    let locate = |bits: &BitVec, item: &I, slot: &mut [u64; K]| {
        let digest = item.with_bytes(|bytes| hashing.digest(bytes));
        for (at, p) in slot
            .iter_mut()
            .zip(EnhancedDouble::new(digest, K as u32, m))
        {
            *at = p;
            bits.prefetch(p);
        }
    };
    let (head, rest) = items.split_at(items.len().min(W));
    for (slot, item) in ring.iter_mut().zip(head) {
        locate(&bits, item, slot);
    }
    let mut oldest = 0;
    for item in rest {
        each(&mut bits, &ring[oldest]);
        locate(&bits, item, &mut ring[oldest]);
        oldest = (oldest + 1) % W;
    }
    for i in 0..head.len() {
        each(&mut bits, &ring[(oldest + i) % W]);
    }
}

/// The k positions of a digest (either digest scheme), each word prefetched: what the
/// batches locate ahead. The digest is what they keep; `used` derives the positions again
/// (k multiply-shifts, cheaper than keeping k words per item in the window).
#[inline(always)]
fn prefetch_positions(bits: &BitVec, hashing: &Hashing, item: &impl Item, k: u32) -> u128 {
    let digest = item.with_bytes(|bytes| hashing.digest(bytes));
    for p in hashing.positions_with_digest(&[], digest, k, bits.len()) {
        bits.prefetch(p);
    }
    digest
}

/// The batch queries' stages: the bits, the hashing, k.
struct Probes<'a>(&'a BitVec, Hashing, u32);

impl<I: Item> lookahead::Stages<&I> for Probes<'_> {
    type State = Vec<bool>;
    type Located = u128;
    #[inline(always)]
    fn locate(&self, _: &Vec<bool>, item: &I) -> u128 {
        prefetch_positions(self.0, &self.1, item, self.2)
    }
    #[inline(always)]
    fn used(&mut self, out: &mut Vec<bool>, digest: u128) {
        let Probes(bits, hashing, k) = *self;
        let positions = hashing.positions_with_digest(&[], digest, k, bits.len());
        out.push(positions.fold(true, |all, p| all & bits.get(p)));
    }
}

/// The batch inserts' stages: the hashing, k, the count of inserts that changed the filter.
struct Sets(Hashing, u32, u64);

impl<I: Item> lookahead::Stages<&I> for Sets {
    type State = BitVec;
    type Located = u128;
    #[inline(always)]
    fn locate(&self, bits: &BitVec, item: &I) -> u128 {
        prefetch_positions(bits, &self.0, item, self.1)
    }
    #[inline(always)]
    fn used(&mut self, bits: &mut BitVec, digest: u128) {
        let positions = self
            .0
            .positions_with_digest(&[], digest, self.1, bits.len());
        self.2 += positions.fold(false, |changed, p| bits.set(p) | changed) as u64;
    }
}

/// The digest of an item under the default scheme, the words of its k positions
/// prefetched: what [`DoubleProbes`] and [`DoubleSets`] locate ahead. The positions come
/// from [`EnhancedDouble`], inlined, where [`prefetch_positions`] goes through
/// [`Positions`](crate::hash::Positions) and its scheme match per position.
#[inline(always)]
fn prefetch_double(bits: &BitVec, hashing: &Hashing, item: &impl Item, k: u32) -> u128 {
    let digest = item.with_bytes(|bytes| hashing.digest(bytes));
    for p in EnhancedDouble::new(digest, k, bits.len()) {
        bits.prefetch(p);
    }
    digest
}

/// [`Probes`] under [`IndexScheme::EnhancedDoubleHashing`] (the default).
struct DoubleProbes<'a>(&'a BitVec, Hashing, u32);

impl<I: Item> lookahead::Stages<&I> for DoubleProbes<'_> {
    type State = Vec<bool>;
    type Located = u128;
    #[inline(always)]
    fn locate(&self, _: &Vec<bool>, item: &I) -> u128 {
        prefetch_double(self.0, &self.1, item, self.2)
    }
    #[inline(always)]
    fn used(&mut self, out: &mut Vec<bool>, digest: u128) {
        let bits = self.0;
        let positions = EnhancedDouble::new(digest, self.2, bits.len());
        out.push(positions.fold(true, |all, p| all & bits.get(p)));
    }
}

/// [`Sets`] under [`IndexScheme::EnhancedDoubleHashing`] (the default).
struct DoubleSets(Hashing, u32, u64);

impl<I: Item> lookahead::Stages<&I> for DoubleSets {
    type State = BitVec;
    type Located = u128;
    #[inline(always)]
    fn locate(&self, bits: &BitVec, item: &I) -> u128 {
        prefetch_double(bits, &self.0, item, self.1)
    }
    #[inline(always)]
    fn used(&mut self, bits: &mut BitVec, digest: u128) {
        let positions = EnhancedDouble::new(digest, self.1, bits.len());
        self.2 += positions.fold(false, |changed, p| bits.set(p) | changed) as u64;
    }
}

/// Builds a [`BloomFilter`] from a capacity and ε, or from explicit m and k.
///
/// ```
/// use bloomkit::{BloomFilter, HashFunction, IndexScheme};
///
/// // The textbook construction: k seeded Murmur hashes.
/// let seeded = BloomFilter::builder()
///     .capacity(58_110)
///     .fpp(0.01)
///     .index_scheme(IndexScheme::SeededHashes)
///     .build()?;
/// assert_eq!(seeded.num_hashes(), 7);
///
/// // Explicit m and k, XXH3, a random seed.
/// let explicit = BloomFilter::builder()
///     .num_bits(1 << 20)
///     .num_hashes(5)
///     .hash_function(HashFunction::Xxh3)
///     .random_seed()
///     .build()?;
/// assert_eq!(explicit.num_bits(), 1 << 20);
/// # Ok::<(), bloomkit::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
#[must_use = "a builder does nothing until .build() is called"]
pub struct BloomFilterBuilder {
    capacity: Option<u64>,
    fpp: Option<f64>,
    num_bits: Option<u64>,
    num_hashes: Option<u32>,
    hashing: HashingChoice,
}

impl BloomFilterBuilder {
    crate::sizing::array_setters! {
        num_bits, "bits";
    }

    /// Validates the parameters and allocates the filter.
    ///
    /// With neither capacity nor m, the error is [`Error::ZeroCapacity`]. With m but no
    /// capacity, the capacity is the n at which m and k reach the optimal fill, `m ln 2 / k`.
    pub fn build(self) -> Result<BloomFilter, Error> {
        let d = sizing::dimensions(self.capacity, self.fpp, self.num_bits, self.num_hashes, 1)?;
        let hashing = self.hashing.resolve()?;
        Ok(BloomFilter {
            bits: BitVec::zeros(d.num_cells)?,
            num_hashes: d.num_hashes,
            hashing,
            capacity: d.capacity,
            target_fpp: d.target_fpp,
            inserted: 0,
        })
    }
}

crate::codec::stored! {
    /// The classic filter's parameters on disk (36 bytes). Payload: the bit array, 64-bit
    /// little-endian words.
    struct Stored of f: BloomFilter {
        num_bits: u64 = f.num_bits() => check_num_bits,
        num_hashes: u32 = f.num_hashes => check_num_hashes,
        capacity: u64 = f.capacity => check_capacity,
        target_fpp: f64 = f.target_fpp => check_target_fpp,
        inserted: u64 = f.inserted,
    }
    persist Bloom, payload bits;
}

impl BloomFilter {
    fn decode(parts: &Parts<'_>) -> Result<Self, DecodeError> {
        let ViewShape { stored, hashing } = ViewShape::read(parts)?;
        Ok(BloomFilter {
            // from_le_bytes checks the payload's length against m before it allocates.
            bits: BitVec::from_le_bytes(stored.num_bits, parts.payload)?,
            num_hashes: stored.num_hashes,
            hashing,
            capacity: stored.capacity,
            target_fpp: stored.target_fpp,
            inserted: stored.inserted,
        })
    }
}

/// The facts of a classic filter of m bits and k hash functions sized for ε, filled to
/// `fill_ratio` ([`Filter::properties`]; a view's summary gives the same).
fn properties(
    num_bits: u64,
    num_hashes: u32,
    target_fpp: f64,
    fill_ratio: f64,
) -> Vec<(&'static str, String)> {
    vec![
        ("bits (m)", num_bits.to_string()),
        ("hash functions (k)", num_hashes.to_string()),
        ("target fpp", format!("{target_fpp}")),
        ("fill ratio", format!("{fill_ratio:.6}")),
    ]
}

/// A classic filter as loading and a read-only view ([`format::view`](crate::format::view))
/// read it: the stored parameters, checked, and the query over bits that the view fetches
/// from the file.
type ViewShape = Shape<Stored>;

impl KindView for ViewShape {
    fn read(parts: &Parts<'_>) -> Result<Self, DecodeError> {
        parts.expect_kind(Kind::Bloom)?;
        let stored = Stored::read(parts.params)?;
        BitVec::check_encoded_len(stored.num_bits, parts.payload.len())?;
        Ok(Shape::of(stored, parts))
    }

    fn facts(&self) -> ViewFacts {
        let Stored {
            num_bits,
            num_hashes,
            ..
        } = self.stored;
        view_facts!(self.stored, num_bits, num_hashes)
    }

    /// Whether all k bits are 1; stops at the first 0 (the loaded filter's answer, by either
    /// of its ways of reading).
    fn contains(&self, bytes: &[u8], view: &FilterView) -> Result<bool, Error> {
        let Stored {
            num_bits,
            num_hashes,
            ..
        } = self.stored;
        view.all_bits(self.hashing.positions(bytes, num_hashes, num_bits))
    }

    /// The bits set, counted over the payload; the rest as the loaded filter works it out
    /// from them (`fill` of `filter_basics!`, [`properties`]).
    fn summary(&self, view: &FilterView) -> Result<Summary, Error> {
        let Stored {
            num_bits,
            num_hashes,
            capacity,
            target_fpp,
            ..
        } = self.stored;
        let ones = view.count_ones()?;
        let fill_ratio = ones as f64 / num_bits as f64;
        let block = ParametersBlock {
            classic_fill_ratio: Some(fill_ratio),
            ..ParametersBlock::sized(capacity, target_fpp, num_hashes, num_bits)
        };
        Ok(view.summary_of(
            Some(block),
            properties(num_bits, num_hashes, target_fpp, fill_ratio),
            crate::params::estimate_items(ones, num_bits, num_hashes),
            crate::params::fpp_from_fill(ones, num_bits, num_hashes),
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
    use crate::filter::Mergeable;
    use crate::hash::{HashFunction, IndexScheme, Item};
    use crate::params;

    /// The window over positions (k = 4, 7, 10, known at compile time) answers as the
    /// single queries and leaves the bits and the count of changes of the single inserts,
    /// for batches shorter than the window, as long and longer, of byte strings and `u64`s.
    #[test]
    fn the_window_over_positions_gives_the_single_calls_answers_and_bits() {
        fn check<const K: usize>() {
            let build = || {
                BloomFilter::builder()
                    .num_bits(30_011)
                    .num_hashes(K as u32)
                    .build()
                    .unwrap()
            };
            for n in [0, 1, lookahead::WINDOW - 1, lookahead::WINDOW, 3_000] {
                let names: Vec<String> = (0..n).map(|i| format!("name-{i}@example")).collect();
                let names: Vec<&[u8]> = names.iter().map(|s| s.as_bytes()).collect();
                let mut single = build();
                let changes = names.iter().filter(|b| single.insert(**b)).count() as u64;
                let mut batch = build();
                let mut changed = 0;
                in_window::<K, _, _>(&mut batch.bits, batch.hashing, &names, |bits, ps| {
                    assert_eq!(ps.len(), K);
                    changed += ps.iter().fold(false, |c, &p| bits.set(p) | c) as u64;
                });
                assert_eq!(batch.bits, single.bits, "k = {K}, n = {n}");
                assert_eq!(changed, changes, "k = {K}, n = {n}");
                let probes: Vec<u64> = (0..n as u64 * 2).collect();
                let mut answers = Vec::new();
                in_window::<K, _, _>(&single.bits, single.hashing, &probes, |bits, ps| {
                    answers.push(ps.iter().fold(true, |all, &p| all & bits.get(p)));
                });
                let singles: Vec<bool> = probes.iter().map(|p| single.contains(p)).collect();
                assert_eq!(answers, singles, "k = {K}, n = {n}");
                if n > 0 {
                    assert!(names.iter().all(|b| single.contains(*b)));
                }
            }
        }
        check::<4>();
        check::<7>();
        check::<10>();
    }

    /// Queries read the bits branch-free or stop at the first 0 (with the words requested
    /// first for k ≤ 16, word by word past it), and large filters answer batches by groups:
    /// every way gives the single branch-free answer, for present and absent items, under
    /// every index scheme.
    #[test]
    fn every_way_of_reading_the_bits_gives_the_same_answers() {
        for (scheme, k) in [
            IndexScheme::EnhancedDoubleHashing,
            IndexScheme::SeededHashes,
            IndexScheme::DoubleHashing,
        ]
        .into_iter()
        .flat_map(|scheme| [(scheme, 5), (scheme, MAX_REQUESTED_FIRST as u32 + 1)])
        {
            let mut f = BloomFilter::builder()
                .num_bits(20_000)
                .num_hashes(k)
                .index_scheme(scheme)
                .build()
                .unwrap();
            for i in 0..2_000u64 {
                f.insert(&i);
            }
            let items: Vec<u64> = (0..8_000).collect();
            let singles: Vec<bool> = items.iter().map(|i| f.contains(i)).collect();
            // The general positions iterator, which the default scheme's fast paths skip.
            let reference: Vec<bool> = items
                .iter()
                .map(|i| {
                    i.with_bytes(|b| {
                        f.hashing
                            .positions(b, f.num_hashes, f.bits.len())
                            .all(|p| f.bits.get(p))
                    })
                })
                .collect();
            assert_eq!(singles, reference, "{scheme:?}");
            let early: Vec<bool> = items
                .iter()
                .map(|i| i.with_bytes(|b| f.holds(b, false)))
                .collect();
            let mut grouped = Vec::new();
            f.grouped_contains_into(&items, &mut grouped);
            assert_eq!(early, singles, "{scheme:?}");
            assert_eq!(grouped, singles, "{scheme:?}");
            if scheme != IndexScheme::SeededHashes {
                let mut pipelined = Vec::new();
                let mut stages = Probes(&f.bits, f.hashing, f.num_hashes);
                lookahead::pipeline(&mut stages, &mut pipelined, &items);
                assert_eq!(pipelined, singles, "{scheme:?}");
            }
            if scheme == IndexScheme::EnhancedDoubleHashing {
                let mut pipelined = Vec::new();
                let mut stages = DoubleProbes(&f.bits, f.hashing, f.num_hashes);
                lookahead::pipeline(&mut stages, &mut pipelined, &items);
                assert_eq!(pipelined, singles, "{scheme:?}");
                // Inserts through the default scheme's window set the bits the general
                // positions give.
                let mut bits = f.bits.clone();
                bits.clear();
                let mut reference = bits.clone();
                for i in &items[..2_000] {
                    i.with_bytes(|b| {
                        for p in f.hashing.positions(b, f.num_hashes, f.bits.len()) {
                            reference.set(p);
                        }
                    });
                }
                let mut stages = DoubleSets(f.hashing, f.num_hashes, 0);
                lookahead::pipeline(&mut stages, &mut bits, &items[..2_000]);
                assert_eq!(bits, reference, "{scheme:?}");
            }
            if scheme != IndexScheme::SeededHashes {
                let mut by_single = f.clone();
                by_single.clear();
                let mut bits = by_single.bits.clone();
                let changed = items[..2_000]
                    .iter()
                    .filter(|i| by_single.insert(*i))
                    .count();
                let mut stages = Sets(f.hashing, f.num_hashes, 0);
                lookahead::pipeline(&mut stages, &mut bits, &items[..2_000]);
                assert_eq!(stages.2, changed as u64, "{scheme:?}");
                assert_eq!(bits, by_single.bits, "{scheme:?}");
            }
            assert!(singles[..2_000].iter().all(|&b| b));
            let absent_yes = singles[2_000..].iter().filter(|&&b| b).count();
            assert!(absent_yes < 6_000, "{scheme:?}: {absent_yes}");
        }
    }

    /// A filter past [`branch_free_max_bits`] (and so past [`batch_cached_max_bits`]) takes
    /// the early-stop path and the batches' lookahead window (digest schemes) or seeded groups (k seeded hashes) through the
    /// public calls: batch inserts set the bits and count the changes of the single inserts,
    /// and every inserted item is still found, singly and in batches.
    #[test]
    fn a_filter_past_the_branch_free_limit_finds_every_item() {
        // Past the batches' limit only (single queries branch-free), and past both.
        for ((bits, branch_free), scheme) in [
            (batch_cached_max_bits() + 1, true),
            (branch_free_max_bits() + 1, false),
        ]
        .into_iter()
        .flat_map(|size| {
            [
                IndexScheme::EnhancedDoubleHashing,
                IndexScheme::SeededHashes,
            ]
            .map(|scheme| (size, scheme))
        }) {
            let mut f = BloomFilter::builder()
                .num_bits(bits)
                .num_hashes(7)
                .index_scheme(scheme)
                .build()
                .unwrap();
            assert_eq!(f.branch_free(), branch_free);
            assert!(!f.batch_in_cache());
            let items: Vec<u64> = (0..20_000u64)
                .map(|i| i.wrapping_mul(0x9e37_79b9))
                .collect();
            let mut by_single = f.clone();
            let changed = items.iter().filter(|i| by_single.insert(*i)).count() as u64;
            assert_eq!(f.insert_batch(&items), changed, "{scheme:?}");
            assert!(f.bits == by_single.bits, "{scheme:?}");
            assert!(items.iter().all(|i| f.contains(i)));
            assert!(f.contains_batch(&items).into_iter().all(|b| b));
            let absent: Vec<u64> = (0..20_000u64).map(|i| !i).collect();
            let singles: Vec<bool> = absent.iter().map(|i| f.contains(i)).collect();
            assert_eq!(f.contains_batch(&absent), singles, "{scheme:?}");
        }
    }

    /// Fixed dimensions report their exact rate, which can be 1 (one bit, one hash) or
    /// underflow to 0 (a large m and k for one item): such a filter still saves and loads
    /// back. (The decoder refused both before: a file the library itself wrote.)
    #[test]
    fn filters_at_the_ends_of_their_rate_load_back() {
        for (m, k) in [(1, 1), (1 << 24, 64)] {
            let mut f = BloomFilter::builder()
                .num_bits(m)
                .num_hashes(k)
                .capacity(1)
                .build()
                .unwrap();
            f.insert("x");
            assert!(
                f.target_fpp() == 1.0 || f.target_fpp() == 0.0,
                "m {m}: {}",
                f.target_fpp()
            );
            let back = BloomFilter::from_bytes(&f.to_bytes()).unwrap();
            assert!(back == f && back.contains("x"), "m = {m}, k = {k}");
        }
    }

    #[test]
    fn inserted_items_are_found() {
        let mut f = BloomFilter::with_capacity(1000, 0.01).unwrap();
        for i in 0..1000u32 {
            f.insert(&i);
        }
        assert!((0..1000u32).all(|i| f.contains(&i)));
    }

    #[test]
    fn insert_reports_whether_the_filter_changed_and_len_counts_those() {
        let mut f = BloomFilter::with_capacity(1000, 0.01).unwrap();
        assert!(f.insert("x"));
        assert!(!f.insert("x"));
        assert_eq!(Filter::len(&f), 1);
        f.clear();
        assert!(Filter::is_empty(&f));
        assert!(!f.contains("x"));
    }

    #[test]
    fn union_of_mismatched_filters_is_an_error() {
        let mut a = BloomFilter::with_capacity(1000, 0.01).unwrap();
        let b = BloomFilter::with_capacity(2000, 0.01).unwrap();
        let c = BloomFilter::builder()
            .capacity(1000)
            .seed(1)
            .build()
            .unwrap();
        assert!(matches!(a.union(&b), Err(Error::Incompatible(_))));
        assert!(matches!(a.union(&c), Err(Error::Incompatible(_))));
        assert!(matches!(a.intersect(&b), Err(Error::Incompatible(_))));
    }

    #[test]
    fn intersection_keeps_common_items() {
        let mut a = BloomFilter::with_capacity(1000, 0.001).unwrap();
        let mut b = a.clone();
        for i in 0..300u32 {
            a.insert(&i);
        }
        for i in 200..500u32 {
            b.insert(&i);
        }
        a.intersect(&b).unwrap();
        assert!((200..300u32).all(|i| a.contains(&i)));
        let others = (0..200u32)
            .chain(300..500)
            .filter(|i| a.contains(i))
            .count();
        assert!(
            others < 100,
            "{others} of 400 non-shared items still present"
        );
    }

    #[test]
    fn estimated_len_is_close_to_the_truth() {
        let mut f = BloomFilter::with_capacity(10_000, 0.01).unwrap();
        f.extend(0..5_000u64);
        let est = f.estimated_len();
        assert!((est - 5000.0).abs() < 150.0, "{est}");
    }

    /// A short lowercase pseudo-word (4 to 10 letters) for index `i`, from a splitmix64 step.
    fn word(i: u64) -> Vec<u8> {
        let x = crate::hash::mix64(i.wrapping_mul(crate::hash::GOLDEN_GAMMA));
        let len = 4 + (x % 7) as usize;
        (0..len)
            .map(|j| b'a' + ((x >> (5 * j + 3)) % 26) as u8)
            .collect()
    }

    /// Similar short items (pseudo-words of 4 to 10 letters) at a small ε expose hash functions whose
    /// k variants are correlated: seeded XXH3 with seeds `0, 1, 2, …` gave 10× the
    /// theoretical rate here before the seeds were mixed (`hash::seeded_hash_seed`).
    #[test]
    fn every_hashing_combination_meets_theory_on_similar_words() {
        use crate::stats::{binomial_acceptance, Z_99_9};
        let (n, negatives) = (40_000u64, 400_000u64);
        for function in [HashFunction::Murmur3, HashFunction::Xxh3] {
            for scheme in [
                IndexScheme::EnhancedDoubleHashing,
                IndexScheme::SeededHashes,
            ] {
                let mut f = BloomFilter::builder()
                    .capacity(n)
                    .fpp(1e-4)
                    .hash_function(function)
                    .index_scheme(scheme)
                    .build()
                    .unwrap();
                let inserted: std::collections::HashSet<Vec<u8>> = (0..n).map(word).collect();
                for w in &inserted {
                    f.insert(w);
                }
                let absent: Vec<Vec<u8>> = (n..)
                    .map(word)
                    .filter(|w| !inserted.contains(w))
                    .take(negatives as usize)
                    .collect();
                let fp = absent.iter().filter(|w| f.contains(*w)).count();
                let n = inserted.len() as u64;
                let theory = params::fpp_exact(f.num_bits(), f.num_hashes(), n);
                let (low, high) = binomial_acceptance(theory, negatives, Z_99_9);
                assert!(
                    (low..=high).contains(&(fp as f64)),
                    "{function:?}/{scheme:?}: {fp} false positives, expected {low:.0}..{high:.0}"
                );
            }
        }
    }

    #[test]
    fn degenerate_parameters_are_errors() {
        assert_eq!(
            BloomFilter::builder().build().unwrap_err(),
            Error::ZeroCapacity
        );
        assert_eq!(
            BloomFilter::builder().num_bits(0).build().unwrap_err(),
            Error::ZeroBits
        );
        assert_eq!(
            BloomFilter::builder()
                .num_bits(10)
                .num_hashes(0)
                .build()
                .unwrap_err(),
            Error::ZeroHashes
        );
        assert!(matches!(
            BloomFilter::builder().num_bits(10).num_hashes(1000).build(),
            Err(Error::TooManyHashes { .. })
        ));
        assert!(matches!(
            BloomFilter::builder().num_bits(u64::MAX).build(),
            Err(Error::TooLarge { .. })
        ));
        assert!(matches!(
            BloomFilter::with_capacity(10, f64::NAN),
            Err(Error::InvalidFpp(_))
        ));
        assert!(matches!(
            BloomFilter::with_capacity(10, -1.0),
            Err(Error::InvalidFpp(_))
        ));
        assert!(matches!(
            BloomFilter::with_capacity(u64::MAX, 0.01),
            Err(Error::CapacityTooLarge {
                capacity: u64::MAX,
                ..
            })
        ));
        assert_eq!(
            BloomFilter::builder()
                .num_bits(100)
                .capacity(0)
                .build()
                .unwrap_err(),
            Error::ZeroCapacity
        );
    }

    #[test]
    fn explicit_size_derives_capacity_and_target() {
        let f = BloomFilter::builder()
            .num_bits(9_586)
            .num_hashes(7)
            .build()
            .unwrap();
        assert_eq!(f.capacity(), 949); // ⌊9586 · ln 2 / 7⌋
        assert!(
            (f.target_fpp() - 0.0083).abs() < 0.001,
            "{}",
            f.target_fpp()
        );
    }

    #[test]
    fn random_seeds_differ() {
        let a = BloomFilter::builder()
            .capacity(10)
            .random_seed()
            .build()
            .unwrap();
        let b = BloomFilter::builder()
            .capacity(10)
            .random_seed()
            .build()
            .unwrap();
        assert_ne!(a.hashing.seed, b.hashing.seed);
    }

    #[test]
    fn debug_shows_the_parameters() {
        let f = BloomFilter::with_capacity(1000, 0.01).unwrap();
        let s = format!("{f:?}");
        for needle in [
            "num_bits: 9586",
            "num_hashes: 7",
            "capacity: 1000",
            "target_fpp: 0.01",
        ] {
            assert!(s.contains(needle), "{s}");
        }
    }

    #[test]
    fn decoding_a_filter_of_another_kind_tag_is_an_error() {
        let f = BloomFilter::with_capacity(10, 0.1).unwrap();
        let mut bytes = f.to_bytes();
        bytes[10] = 200;
        let n = bytes.len();
        let sum = xxhash_rust::xxh3::xxh3_64(&bytes[..n - 8]);
        bytes[n - 8..].copy_from_slice(&sum.to_le_bytes());
        assert_eq!(
            BloomFilter::from_bytes(&bytes).unwrap_err(),
            Error::Decode(DecodeError::UnknownKind(200))
        );
    }

    #[test]
    fn batches_answer_exactly_like_single_calls() {
        for scheme in [
            IndexScheme::EnhancedDoubleHashing,
            IndexScheme::SeededHashes,
        ] {
            let mut single = BloomFilter::builder()
                .capacity(3000)
                .fpp(0.05)
                .index_scheme(scheme)
                .build()
                .unwrap();
            let mut batched = single.clone();
            let keys: Vec<u64> = (0..3000u64).map(|i| i.wrapping_mul(0x9e37_79b9)).collect();
            let changed = keys.iter().filter(|&&k| single.insert(&k)).count() as u64;
            assert_eq!(batched.insert_batch(&keys), changed);
            assert_eq!(batched, single);
            let queries: Vec<u64> = (0..10_007u64)
                .map(|i| i.wrapping_mul(0x9e37_79b9))
                .collect();
            let expected: Vec<bool> = queries.iter().map(|k| single.contains(k)).collect();
            assert_eq!(single.contains_batch(&queries), expected);
            let mut out = vec![false; 5];
            single.contains_batch_into(&queries[..17], &mut out);
            assert_eq!(out, expected[..17]);
            assert!(expected.iter().filter(|&&b| !b).count() > 6000);
        }
    }
}
