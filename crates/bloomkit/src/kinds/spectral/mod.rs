//! The spectral Bloom filter (Cohen & Matias, "Spectral Bloom Filters", Proceedings of the
//! 2003 ACM SIGMOD International Conference on Management of Data, pp. 241–252,
//! doi:10.1145/872757.872787) — a Bloom filter that answers *how often* an item was
//! inserted.
//!
//! # Structure
//!
//! m counters and k hash functions, as in the [`CountingBloomFilter`](crate::CountingBloomFilter).
//! An item x inserted f_x times is answered with an estimate m_x of f_x, read off its k
//! counters. Where the counting filter only asks "is any counter 0?", the spectral filter
//! asks "what do the counters say?", and the paper gives three ways to keep and read them
//! ([`SpectralMethod`]):
//!
//! * **Minimum selection** (MS, the default): insert adds 1 to each of the item's k
//!   counters; the estimate is the smallest. Every counter of x holds f_x plus the counts
//!   of the other items that share it, so `m_x ≥ f_x` always, and `m_x = f_x` unless every
//!   one of x's counters is shared. That is exactly the event "x would be a false positive
//!   of the filter of the other items", so (the paper's claim for MS)
//!
//!   ```text
//!       P(m_x ≠ f_x)  =  E_b  ≈  (1 − (1 − 1/m)^(k(n−1)))^k
//!   ```
//!
//!   for n distinct items ([`params::spectral_error_probability`](crate::params::spectral_error_probability)) — the Bloom error of the
//!   same m, k and n, whatever the frequencies are. Removes are exact (subtract 1 from each
//!   counter), and the union of two filters is the sum of their counters.
//! * **Minimal increase** (MI): insert adds 1 only to the counters of x that hold the
//!   minimum. A counter larger than the minimum is already too large for x, so increasing
//!   it only adds error for the other items there. Still `m_x ≥ f_x` (the minimum rises with
//!   every insert of x), with fewer and smaller errors than MS; the paper shows it is the
//!   most accurate of the three on insert-only streams. But it **cannot remove**: a counter
//!   then holds less than the sum of the items passing through it, so subtracting x from it
//!   can take another item's last count (a false negative). [`SpectralBloomFilter::remove`]
//!   refuses with [`Error::Unsupported`] under MI.
//! * **Recurring minimum** (RM): items whose minimum appears in at least two of their
//!   counters (a *recurring* minimum) are rarely wrong — two counters would both have to be
//!   inflated by the same amount. The items with a *single* minimum are the suspicious ones;
//!   RM keeps them in a second, smaller spectral filter as well. Insert: add 1 to x's
//!   counters in the primary filter (MS); if x now has a single minimum, add 1 to its
//!   counters in the secondary filter if it is there (all of them positive), or else
//!   insert it there with the primary's minimum as its count. Query: the primary's minimum
//!   if it is 0 or recurring; otherwise the secondary's minimum if positive, else the
//!   primary's. Remove: subtract from the primary, and from the secondary when x had a
//!   single minimum there and is held there. RM supports removes, unlike MI, and errs less
//!   often than MS; its estimates can, rarely, fall *below* f_x (an item whose minimum
//!   switched between recurring and single missed some secondary increments), so only
//!   membership — never "estimate ≥ count" — is promised under RM.
//!
//! The secondary filter of RM has ⌈m/2⌉ counters of the same width and the same k, with its
//! own seed (derived from the filter's). Half the primary is this crate's choice: with the
//! optimal k about `(k + 1)/2^k` of the items (6% at k = 7) have a single minimum, far
//! fewer than the primary's n.
//!
//! Positions are taken as a set: an item whose k positions name one counter twice (only
//! possible when m is small) adds 1 to it once, so that every counter is the sum of the
//! counts of the distinct items that hash to it.
//!
//! # Counters
//!
//! A counter of w bits (1 to 16; 16 by default, counting to 65 535) counts to `2^w − 1`. A
//! counter that reaches `2^w − 1` **saturates**, as in the counting filter: it stays there
//! and is never decremented (its true value is unknown), so an estimate of `2^w − 1` means
//! "at least that many". How the counters are stored ([`SpectralLayout`]) changes nothing
//! of that, only the memory:
//!
//! * **Fixed** ([`SpectralLayout::Fixed`], [`PackedCounters`]): every counter w bits,
//!   `w` times a Bloom filter's bits (18.3 MiB for 10⁶ items at ε = 1% with 16 bits,
//!   where the classic filter takes 1.1 MiB). Counters of 4 bits or fewer are always kept
//!   so, and so are the files of the builds before the compact layout.
//! * **Compact** ([`SpectralLayout::Compact`], the default above 4 bits): each counter is a
//!   4-bit *base nibble*. A nibble below 15 is the count; 15 is an *escape*: the count is
//!   15 or more, and the exact value (up to `2^w − 1`, saturating as above) is in a table
//!   keyed by the counter's index. The paper stores counters with variable length (its
//!   String-Array Index) for the same reason: most counters are small.
//!
//! Why 4 bits: a counter's load is Poisson with mean `λ = k·n/m`, which the optimal k makes
//! `ln 2` at capacity (items inserted once each). Then
//!
//! ```text
//!     P(counter ≥ 15)  =  Σ_{j≥15} e^{−λ} λ^j / j!  ≈  1.6·10⁻¹⁵   (λ = ln 2)
//!                                                   ≈  3.0·10⁻¹³   (λ = 1, 1.44× capacity)
//! ```
//!
//! so at 10⁸ counters less than one counter in a million filters escapes through load
//! alone: the table holds the cells of the heavy hitters (an item inserted 15 times or more
//! escapes its k cells, at most), and the nibbles cost `m/2` bytes, a quarter of 16-bit
//! counters (4.6 MiB at 10⁶ items, ε = 1%). A 3-bit base would escape at 7 (`P ≈ 8·10⁻⁶`
//! at λ = ln 2: about 80 cells per 10⁷ counters for items seen once), and a nibble is
//! located by shifts (16 to a word) where 3 bits need a division.
//!
//! Each escaped cell costs a table entry: in memory a `HashMap` bucket (16 bytes and a
//! control byte, at most 7/8 full and rounded to a power of two: 19 to 39 bytes, counted in
//! [`memory_bytes`](Filter::memory_bytes)), on disk 12 bytes (index u64, count u32); a
//! nibble saves 1.5 bytes against a 16-bit counter, so the compact layout is the smaller
//! one while fewer than one cell in 8 (on disk: `0.5 + 12f < 2`) or one in 13 to 26 (in
//! memory) is at 15 or more. Reading or writing a counter reads its nibble (one shift and mask); only a
//! nibble at 15 looks the table up, and an insert that takes a nibble from 14 to 15 adds the
//! entry. Membership reads only nibbles: a count is 0 exactly when its nibble is. The
//! answers of every method, insert, remove, count, union and batch call are those of the
//! fixed layout of the same w (a property test runs both on the same operations).
//!
//! ```
//! use bloomkit::{SpectralBloomFilter, SpectralMethod};
//!
//! let mut words = SpectralBloomFilter::builder()
//!     .capacity(10_000)
//!     .fpp(0.01)
//!     .method(SpectralMethod::MinimalIncrease)
//!     .build()?;
//! for w in "to be or not to be that is the question".split(' ') {
//!     words.insert(w);
//! }
//! assert_eq!(words.count("to"), 2);
//! assert_eq!(words.count("question"), 1);
//! assert_eq!(words.count("hamlet"), 0); // with probability 1 − ε
//! # Ok::<(), bloomkit::Error>(())
//! ```

mod cells;
mod options;
pub mod theory;

pub use cells::SpectralLayout;

use std::fmt;

use crate::any::Summary;
use crate::bits::{CounterSpan, PackedCounters};
use crate::codec::{check_counter_width, check_num_counters, invalid, Parts, Persist};
use crate::error::{DecodeError, Error};
use crate::filter::{Filter, Kind};
use crate::format::view::{all_nonzero, infallible, try_all, FilterView, KindView, ViewFacts};
use crate::hash::{mix64, Hashing, HashingChoice, IndexScheme, Item, Positions};
use crate::params::MAX_NUM_BITS;
use crate::sizing;
use cells::{Cells, Layout, ENTRY_BYTES, ESCAPE};

/// `$body` with `$c` bound to the counters of `$cells` in their own layout (a
/// `PackedCounters` or a `cells::Compact`, by the reference `$cells` is): the one match on
/// the layout of a call, `$body` compiled once for each, so that the loop over an item's
/// counters inside it matches on nothing.
macro_rules! with_layout {
    ($cells:expr, |$c:ident| $body:expr) => {
        match $cells {
            Cells::Fixed($c) => $body,
            Cells::Compact($c) => $body,
        }
    };
}

/// The counter width used unless another is chosen: 16 bits, counts up to 65 535.
pub const DEFAULT_SPECTRAL_COUNTER_WIDTH: u32 = 16;

/// How a [`SpectralBloomFilter`] keeps and reads its counters (Cohen & Matias 2003, §3–4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SpectralMethod {
    /// Minimum selection: add 1 to every counter, answer the smallest. Error probability
    /// exactly the Bloom error; removes and unions.
    #[default]
    MinimumSelection,
    /// Minimal increase: add 1 only to the smallest counters. Fewest errors on
    /// insert-only streams; no removes.
    MinimalIncrease,
    /// Recurring minimum: minimum selection plus a secondary filter for the items whose
    /// minimum is not recurring. Fewer errors than MS, with removes.
    RecurringMinimum,
}

impl SpectralMethod {
    /// Every method, in the order of their ids.
    pub const ALL: [SpectralMethod; 3] = [
        SpectralMethod::MinimumSelection,
        SpectralMethod::MinimalIncrease,
        SpectralMethod::RecurringMinimum,
    ];

    /// The short name: `ms`, `mi`, `rm`.
    pub fn name(self) -> &'static str {
        match self {
            SpectralMethod::MinimumSelection => "ms",
            SpectralMethod::MinimalIncrease => "mi",
            SpectralMethod::RecurringMinimum => "rm",
        }
    }

    /// The method of a short name.
    pub fn from_name(name: &str) -> Option<SpectralMethod> {
        Self::ALL.into_iter().find(|m| m.name() == name)
    }

    fn id(self) -> u32 {
        self as u32
    }

    fn from_id(id: u32) -> Option<SpectralMethod> {
        Self::ALL.get(id as usize).copied()
    }
}

impl fmt::Display for SpectralMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A spectral Bloom filter: a multiset summary that estimates how often each item was
/// inserted (see the [module docs](self)).
///
/// ```
/// use bloomkit::SpectralBloomFilter;
///
/// let mut clicks = SpectralBloomFilter::with_capacity(1_000, 0.01)?;
/// for _ in 0..3 {
///     clicks.insert("home");
/// }
/// clicks.insert("about");
/// assert_eq!(clicks.count("home"), 3);
/// clicks.remove("home")?;
/// assert_eq!(clicks.count("home"), 2);
/// assert!(clicks.contains("about"));
/// # Ok::<(), bloomkit::Error>(())
/// ```
#[derive(Clone, PartialEq)]
pub struct SpectralBloomFilter {
    counters: Cells,
    /// RM's secondary filter (⌈m/2⌉ counters, in the primary's layout); `None` for MS and
    /// MI.
    secondary: Option<Cells>,
    num_hashes: u32,
    method: SpectralMethod,
    hashing: Hashing,
    capacity: u64,
    target_fpp: f64,
    len: u64,
}

/// An item's distinct positions, in the order the scheme gives them. Held inline for the
/// k ≤ 16 of every ε down to 10⁻⁴ (a 512-byte buffer for the largest k cost more to zero
/// and move than the query's counters), on the heap beyond.
enum DistinctPositions {
    Inline([u64; INLINE_POSITIONS], usize),
    Heap(Vec<u64>),
}

const INLINE_POSITIONS: usize = 16;

impl DistinctPositions {
    #[inline(always)]
    fn of(hashing: Hashing, bytes: &[u8], k: u32, m: u64) -> Self {
        Self::from_positions(hashing.positions(bytes, k, m), k)
    }

    /// The distinct ones of these k positions.
    #[inline(always)]
    fn from_positions(positions: Positions<'_>, k: u32) -> Self {
        if k as usize > INLINE_POSITIONS {
            let mut kept: Vec<u64> = Vec::with_capacity(k as usize);
            for p in positions {
                if !kept.contains(&p) {
                    kept.push(p);
                }
            }
            return DistinctPositions::Heap(kept);
        }
        let mut buf = [0u64; INLINE_POSITIONS];
        let mut len = 0;
        // k is small (7 at ε = 1%) and positions seldom repeat: a scan of those kept so far
        // costs fewer instructions than sorting them.
        // `for_each` runs `Positions`' own fold, which matches the scheme once per item.
        positions.for_each(|p| {
            if !buf[..len].contains(&p) {
                buf[len] = p;
                len += 1;
            }
        });
        DistinctPositions::Inline(buf, len)
    }

    fn get(&self) -> &[u64] {
        match self {
            DistinctPositions::Inline(buf, len) => &buf[..*len],
            DistinctPositions::Heap(kept) => kept,
        }
    }
}

/// The distinct ones of `positions`, in the order of their first occurrence, into the
/// front of `out` (at least as long); returns how many. Each position is written at the end
/// of those kept and kept (the end moved past it) when no earlier position equals it: no
/// branch on the comparisons, which for a constant k unroll into k(k − 1)/2 compares (21 at
/// k = 7), and positions seldom repeat.
#[inline(always)]
fn distinct_into(positions: &[u64], out: &mut [u64]) -> usize {
    let mut len = 0;
    for (i, &p) in positions.iter().enumerate() {
        out[len] = p;
        len += usize::from(!positions[..i].contains(&p));
    }
    len
}

/// `false` when no two of these positions are equal; `true` when two may be: two equal,
/// or two that differ but agree in their low 6 bits (16% of the items of a batch insert at
/// k = 7, measured: `kind_cost spectral 1000000 100000 batch` under callgrind). One bit per
/// position in a 64-bit set: about 6 instructions a position (a shift, `bts`, an or), where
/// comparing every pair takes k(k − 1)/2 compares of 3 (63 at k = 7), the price of taking
/// the positions as a set although they seldom repeat.
#[inline(always)]
fn may_repeat<const K: usize>(ps: &[u64; K]) -> bool {
    let (mut seen, mut hit) = (0u64, 0u64);
    for &p in ps {
        hit |= (seen >> (p & 63)) & 1;
        seen |= 1 << (p & 63);
    }
    hit != 0
}

/// Whether any position repeats an earlier one: k(k − 1)/2 compares with no branch (they
/// unroll for a constant k).
#[inline(always)]
fn repeats(ps: &[u64]) -> bool {
    ps.iter().enumerate().fold(false, |any, (i, p)| {
        any | ps[..i].iter().fold(false, |eq, q| eq | (q == p))
    })
}

/// The smallest counter at `positions`, and whether it occurs at two positions or more.
fn minimum(counters: &Cells, positions: &[u64]) -> (u32, bool) {
    with_layout!(counters, |c| minimum_in(c, positions))
}

/// [`minimum`] in one layout.
#[inline(always)]
fn minimum_in(counters: &impl Layout, positions: &[u64]) -> (u32, bool) {
    infallible(minimum_by(positions, |p| Ok(counters.get(p))))
}

/// The MS or MI insert at these distinct positions (RM's primary counters rise as MS's);
/// the item's estimate before it.
#[inline(always)]
fn raise(counters: &mut impl Layout, method: SpectralMethod, ps: &[u64]) -> u32 {
    match method {
        SpectralMethod::MinimumSelection | SpectralMethod::RecurringMinimum => {
            // Each counter read and raised in one pass; the smallest of the values read is
            // the estimate before the insert.
            ps.iter()
                .fold(u32::MAX, |min, &p| min.min(counters.increment(p)))
        }
        SpectralMethod::MinimalIncrease => {
            let (min, _) = minimum_in(&*counters, ps);
            // Only the counters at the minimum rise: m_x becomes min + 1.
            for &p in ps {
                if counters.get(p) == min {
                    counters.saturating_add(p, 1);
                }
            }
            min
        }
    }
}

/// The MS or MI insert at these k positions, repeats among them taken once; the item's
/// estimate before it.
#[inline(always)]
fn raise_positions(counters: &mut impl Layout, method: SpectralMethod, ps: &[u64]) -> u32 {
    // Repeats are rare (about k²/2m per item): only then are the distinct ones gathered.
    if !repeats(ps) {
        return raise(counters, method, ps);
    }
    let mut buf = [0u64; INLINE_POSITIONS];
    match buf.get_mut(..ps.len()) {
        Some(front) => {
            let n = distinct_into(ps, front);
            raise(counters, method, &buf[..n])
        }
        None => {
            let mut kept = ps.to_vec();
            let n = distinct_into(ps, &mut kept);
            raise(counters, method, &kept[..n])
        }
    }
}

/// The batch window's MS or MI insert of the item at these `K` positions, in one layout;
/// `true` when it was certainly new. Under MS, unless two positions may repeat
/// ([`may_repeat`]), each counter is read and raised in one pass ([`Layout::increment_each`]);
/// the rest (MI, and the items whose positions may repeat) out of line, in
/// [`raise_positions_cold`]. The single insert keeps [`raise_positions`]: there the quick
/// test and the call out of line for the items it flags cost more than the pairwise
/// compares (`kind_cost spectral 100000 100000` under callgrind: 387.6 instructions an
/// insert against 382.0).
#[inline(always)]
fn raise_positions_k<const K: usize>(
    counters: &mut impl Layout,
    method: SpectralMethod,
    ps: &[u64; K],
) -> bool {
    if method == SpectralMethod::MinimumSelection && !may_repeat(ps) {
        return counters.increment_each(ps) == 0;
    }
    raise_positions_cold(counters, method, ps)
}

/// [`raise_positions_k`] for MI, and for MS when two positions may repeat, kept out of the
/// batch window's loop: MS positions that turn out distinct (compared pairwise) go the
/// one-pass way after all.
#[inline(never)]
fn raise_positions_cold<const K: usize>(
    counters: &mut impl Layout,
    method: SpectralMethod,
    ps: &[u64; K],
) -> bool {
    if method == SpectralMethod::MinimumSelection && !repeats(ps) {
        return counters.increment_each(ps) == 0;
    }
    raise_positions(counters, method, ps) == 0
}

/// [`minimum`] over a way to read counter p (the loaded filter's array, or a view's
/// checked chunks).
#[inline(always)]
fn minimum_by<E>(
    positions: &[u64],
    mut counter: impl FnMut(u64) -> Result<u32, E>,
) -> Result<(u32, bool), E> {
    let mut min = u32::MAX;
    let mut times = 0;
    for &p in positions {
        let c = counter(p)?;
        if c < min {
            (min, times) = (c, 1);
        } else if c == min {
            times += 1;
        }
    }
    Ok((min, times >= 2))
}

/// The count estimate of the item with `bytes` ([`SpectralBloomFilter::count`]), over a way
/// to read primary counter p and, under RM (`secondary_len` given), secondary counter q: the
/// one function by which the loaded filter and a read-only view count.
///
/// * MS and MI: the minimum of the item's k primary counters (a repeated position cannot
///   change it, and the scan stops at a 0, which is the minimum).
/// * RM (Cohen & Matias 2003, §4): the minimum of its distinct primary counters; when that
///   minimum is not 0 and occurs once (a "single minimum", the sign of an error), the
///   minimum of its secondary counters if that is not 0.
#[inline(always)]
fn count_by<E>(
    hashing: Hashing,
    num_hashes: u32,
    num_counters: u64,
    secondary_len: Option<u64>,
    bytes: &[u8],
    mut primary: impl FnMut(u64) -> Result<u32, E>,
    secondary: impl FnMut(u64) -> Result<u32, E>,
) -> Result<u32, E> {
    let Some(secondary_len) = secondary_len else {
        let mut min = u32::MAX;
        let positions = hashing.positions(bytes, num_hashes, num_counters);
        try_all(positions, |p| {
            min = min.min(primary(p)?);
            Ok(min > 0)
        })?;
        return Ok(if min == u32::MAX { 0 } else { min });
    };
    let ps = DistinctPositions::of(hashing, bytes, num_hashes, num_counters);
    let (min, recurring) = minimum_by(ps.get(), &mut primary)?;
    if min == 0 || recurring {
        return Ok(min);
    }
    let qs = DistinctPositions::of(
        secondary_hashing_of(hashing),
        bytes,
        num_hashes,
        secondary_len,
    );
    Ok(match minimum_by(qs.get(), secondary)?.0 {
        0 => min,
        held => held,
    })
}

/// The hashing of RM's secondary filter: the primary's with a seed of its own.
fn secondary_hashing_of(hashing: Hashing) -> Hashing {
    Hashing {
        seed: mix64(hashing.seed ^ 0x05ec_0dc0),
        ..hashing
    }
}

/// Takes 1 from each counter at `positions`, leaving saturated counters (whose true value
/// is unknown) as they are.
fn decrement(counters: &mut Cells, positions: &[u64]) {
    let max = counters.max_value();
    for &p in positions {
        if counters.get(p) != max {
            counters.saturating_sub(p, 1);
        }
    }
}

impl SpectralBloomFilter {
    /// A filter for `capacity` distinct items at false-positive probability `fpp`
    /// (minimum selection, 16-bit counters, the default hashing).
    ///
    /// ```
    /// use bloomkit::SpectralBloomFilter;
    /// let f = SpectralBloomFilter::with_capacity(1_000, 0.01)?;
    /// assert_eq!((f.num_counters(), f.num_hashes(), f.counter_width()), (9_586, 7, 16));
    /// assert!(SpectralBloomFilter::with_capacity(0, 0.01).is_err());
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn with_capacity(capacity: impl crate::params::ItemCount, fpp: f64) -> Result<Self, Error> {
        Self::builder().capacity(capacity).fpp(fpp).build()
    }

    /// A builder for every other choice: method, explicit m and k, counter width, hashing.
    pub fn builder() -> SpectralBloomFilterBuilder {
        SpectralBloomFilterBuilder::default()
    }

    /// The hashing of RM's secondary filter: the same function and scheme, another seed,
    /// so that two items sharing primary counters do not share secondary ones for that.
    fn secondary_hashing(&self) -> Hashing {
        secondary_hashing_of(self.hashing)
    }

    #[inline(always)]
    fn positions(&self, bytes: &[u8]) -> DistinctPositions {
        DistinctPositions::of(self.hashing, bytes, self.num_hashes, self.counters.len())
    }

    /// The item's positions in RM's secondary filter (`None` under the other methods).
    fn secondary_positions(&self, bytes: &[u8]) -> Option<DistinctPositions> {
        let secondary = self.secondary.as_ref()?;
        Some(DistinctPositions::of(
            self.secondary_hashing(),
            bytes,
            self.num_hashes,
            secondary.len(),
        ))
    }

    /// Adds one occurrence of an item (by the filter's [`method`](Self::method)). Returns
    /// `true` if the item was certainly new (its estimate was 0).
    pub fn insert<I: Item + ?Sized>(&mut self, item: &I) -> bool {
        let new = item.with_bytes(|bytes| self.insert_bytes(bytes));
        self.len = self.len.saturating_add(1);
        new
    }

    fn insert_bytes(&mut self, bytes: &[u8]) -> bool {
        if self.secondary.is_none() && self.hashing.scheme != IndexScheme::SeededHashes {
            // MS and MI under a digest scheme: the positions once, into an array of the
            // common k's length.
            let digest = self.hashing.digest(bytes);
            return match self.num_hashes {
                7 => self.insert_digest_k::<7>(digest),
                10 => self.insert_digest_k::<10>(digest),
                4 => self.insert_digest_k::<4>(digest),
                k => {
                    let m = self.counters.len();
                    let positions = self.hashing.positions_with_digest(bytes, digest, k, m);
                    let ps = DistinctPositions::from_positions(positions, k);
                    self.insert_at(ps.get(), bytes)
                }
            };
        }
        let ps = self.positions(bytes);
        self.insert_at(ps.get(), bytes)
    }

    /// The MS or MI insert of the item with this digest at k = `K` (not counting it in `len`).
    #[inline(always)]
    fn insert_digest_k<const K: usize>(&mut self, digest: u128) -> bool {
        let mut ps = [0u64; K];
        crate::lookahead::positions_into(self.hashing, digest, self.counters.len(), &mut ps);
        self.insert_positions(&ps)
    }

    /// The batch window's MS or MI insert of the item at these `K` positions (not counting
    /// it in `len`): [`raise_positions_k`] in the counters' layout.
    #[inline(always)]
    fn insert_positions_k<const K: usize>(&mut self, ps: &[u64; K]) -> bool {
        let method = self.method;
        with_layout!(&mut self.counters, |c| raise_positions_k(c, method, ps))
    }

    /// The MS or MI insert of the item at these k positions, repeats among them taken once
    /// (not counting it in `len`).
    #[inline(always)]
    fn insert_positions(&mut self, ps: &[u64]) -> bool {
        let method = self.method;
        with_layout!(&mut self.counters, |c| raise_positions(c, method, ps)) == 0
    }

    /// The insert of the item with these distinct positions and these bytes (which only
    /// [`SpectralMethod::RecurringMinimum`] reads, for its secondary filter).
    #[inline(always)]
    fn insert_at(&mut self, ps: &[u64], bytes: &[u8]) -> bool {
        let method = self.method;
        let min = with_layout!(&mut self.counters, |c| raise(c, method, ps));
        if method == SpectralMethod::RecurringMinimum {
            self.insert_secondary(ps, bytes);
        }
        min == 0
    }

    /// RM's insert into its secondary filter after the primary's counters at `ps` rose
    /// (Cohen & Matias 2003, §4): when the item's minimum there is now single, one more
    /// in the secondary if it is held there, else its primary estimate.
    fn insert_secondary(&mut self, ps: &[u64], bytes: &[u8]) {
        let (primary, recurring) = minimum(&self.counters, ps);
        if !recurring {
            let qs = self.secondary_positions(bytes).expect("RM has a secondary");
            let secondary = self.secondary.as_mut().expect("RM has a secondary");
            let (held, _) = minimum(secondary, qs.get());
            // Held there: one more; not yet: start from the primary's estimate.
            let add = if held > 0 { 1 } else { primary };
            for &q in qs.get() {
                secondary.saturating_add(q, add);
            }
        }
    }

    /// [`insert`](Self::insert) of every item in order; returns how many were certainly new.
    /// A filter past the L2 cache hashes each item once and prefetches what its insert
    /// touches a window of items ahead ([`lookahead`](crate::lookahead)); the filter ends
    /// as after the single inserts.
    ///
    /// ```
    /// use bloomkit::SpectralBloomFilter;
    /// let mut filter = SpectralBloomFilter::with_capacity(1_000, 0.01)?;
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

    /// `false` if the item is certainly absent (one of its counters is 0).
    pub fn contains<I: Item + ?Sized>(&self, item: &I) -> bool {
        item.with_bytes(|bytes| {
            let m = self.counters.len();
            let positions = self.hashing.positions(bytes, self.num_hashes, m);
            with_layout!(&self.counters, |c| {
                infallible(all_nonzero(positions, |p| Ok(Layout::base(c, p))))
            })
        })
    }

    /// The estimated number of times the item was inserted (less the times it was
    /// removed): 0 when it is certainly absent. Under MS and MI never below the true count
    /// (unless counters saturated); wrong with probability about ε (MS) or less (MI, RM).
    pub fn count<I: Item + ?Sized>(&self, item: &I) -> u64 {
        item.with_bytes(|bytes| u64::from(self.count_bytes(bytes)))
    }

    fn count_bytes(&self, bytes: &[u8]) -> u32 {
        with_layout!(&self.counters, |c| {
            infallible(count_by(
                self.hashing,
                self.num_hashes,
                Layout::len(c),
                self.secondary.as_ref().map(Cells::len),
                bytes,
                |p| Ok(Layout::get(c, p)),
                |q| Ok(self.secondary.as_ref().map_or(0, |s| s.get(q))),
            ))
        })
    }

    /// Removes one occurrence of an item. `Ok(true)` when done.
    ///
    /// * [`Error::NotPresent`], with nothing changed, when the item is certainly absent
    ///   (one of its counters that is not saturated is 0).
    /// * [`Error::Unsupported`] under [`SpectralMethod::MinimalIncrease`], which cannot
    ///   remove without false negatives.
    ///
    /// As with every counting kind, only remove what you inserted.
    pub fn remove<I: Item + ?Sized>(&mut self, item: &I) -> Result<bool, Error> {
        item.with_bytes(|bytes| self.remove_bytes(bytes))?;
        self.len = self.len.saturating_sub(1);
        Ok(true)
    }

    fn remove_bytes(&mut self, bytes: &[u8]) -> Result<(), Error> {
        let ps = self.positions(bytes);
        let ps = ps.get();
        let (min, recurring) = minimum(&self.counters, ps);
        if min == 0 {
            return Err(Error::NotPresent);
        }
        if self.method == SpectralMethod::MinimalIncrease {
            return Err(Error::Unsupported {
                kind: Kind::Spectral,
                operation: "remove under minimal increase (it would create false negatives)",
            });
        }
        decrement(&mut self.counters, ps);
        if !recurring
            && let (Some(qs), Some(secondary)) =
                (self.secondary_positions(bytes), self.secondary.as_mut())
        {
            let qs = qs.get();
            if minimum(secondary, qs).0 > 0 {
                decrement(secondary, qs);
            }
        }
        Ok(())
    }

    crate::sizing::getters! {
        /// How the counters are kept and read.
        method: SpectralMethod;
    }

    /// m, the number of counters of the (primary) filter.
    pub fn num_counters(&self) -> u64 {
        self.counters.len()
    }

    /// The counters of RM's secondary filter (⌈m/2⌉), 0 for the other methods.
    pub fn secondary_counters(&self) -> u64 {
        self.secondary.as_ref().map_or(0, Cells::len)
    }

    crate::sizing::getters! {
        /// k, the number of hash functions.
        num_hashes: u32;
    }

    /// The width of one counter in bits: it counts to `2^w − 1`, in either layout.
    pub fn counter_width(&self) -> u32 {
        self.counters.width()
    }

    /// How the counters are kept ([`SpectralLayout`]): compact for the filters built with
    /// counters wider than 4 bits (unless the fixed layout was asked for), fixed for the
    /// others and for the files of the builds before the compact layout.
    ///
    /// ```
    /// use bloomkit::spectral::{SpectralBloomFilter, SpectralLayout};
    /// let b = || SpectralBloomFilter::builder().capacity(1_000);
    /// assert_eq!(b().build()?.counter_layout(), SpectralLayout::Compact);
    /// assert_eq!(b().counter_width(4).build()?.counter_layout(), SpectralLayout::Fixed);
    /// let fixed = b().counter_layout(SpectralLayout::Fixed).build()?;
    /// assert_eq!(fixed.counter_layout(), SpectralLayout::Fixed);
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn counter_layout(&self) -> SpectralLayout {
        self.counters.layout()
    }

    /// The counters (primary and secondary) the compact layout holds in its table, at 15
    /// or more; 0 in the fixed layout.
    ///
    /// ```
    /// use bloomkit::SpectralBloomFilter;
    /// let mut f = SpectralBloomFilter::with_capacity(1_000, 0.01)?;
    /// for _ in 0..14 {
    ///     f.insert("hot");
    /// }
    /// assert_eq!(f.escaped_counters(), 0);
    /// f.insert("hot"); // its k counters reach 15
    /// assert_eq!(f.escaped_counters(), u64::from(f.num_hashes()));
    /// assert_eq!(f.count("hot"), 15);
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn escaped_counters(&self) -> u64 {
        self.arrays().map(Cells::escaped).sum()
    }

    crate::sizing::getters! {
        /// n, the number of distinct items the filter was sized for.
        capacity: u64;

        /// ε, the false-positive probability (and the MS error probability) at capacity.
        target_fpp: f64;
    }

    /// The counters of the primary filter that are not zero.
    pub fn nonzero_counters(&self) -> u64 {
        self.counters.count_nonzero()
    }

    /// The counters (primary and secondary) at their maximum `2^w − 1`.
    pub fn saturated_counters(&self) -> u64 {
        self.arrays().map(Cells::count_saturated).sum()
    }

    /// The counter arrays: the primary, and RM's secondary.
    fn arrays(&self) -> impl Iterator<Item = &Cells> {
        std::iter::once(&self.counters).chain(self.secondary.as_ref())
    }
}

impl Filter for SpectralBloomFilter {
    // The non-zero counters read as a classic filter's set bits: `(nonzero/m)^k` is the
    // chance that an absent item has a non-zero estimate, and under MS that an item's
    // estimate is too high.
    crate::filter::filter_basics!(
        Spectral: hashing, insert, contains, capacity, target_fpp,
        fill(nonzero_counters, num_counters, num_hashes), classic_rate(num_counters, num_hashes)
    );

    fn clear(&mut self) {
        self.counters.clear();
        if let Some(s) = &mut self.secondary {
            s.clear();
        }
        self.len = 0;
    }

    /// Insertions less successful removals (a multiset count).
    fn len(&self) -> u64 {
        self.len
    }

    fn memory_bytes(&self) -> usize {
        self.arrays().map(Cells::memory_bytes).sum()
    }

    fn properties(&self) -> Vec<(&'static str, String)> {
        properties(
            &Stored::of(self),
            self.method,
            self.counter_layout(),
            self.escaped_counters(),
            self.nonzero_counters(),
            self.saturated_counters(),
        )
    }
}

/// [`Filter::properties`] of a filter with these stored parameters, method, layout,
/// escaped counters, non-zero primary counters and saturated counters of both arrays (a
/// view's summary gives the same).
fn properties(
    stored: &Stored,
    method: SpectralMethod,
    layout: SpectralLayout,
    escaped: u64,
    nonzero: u64,
    saturated: u64,
) -> Vec<(&'static str, String)> {
    let secondary = if method == SpectralMethod::RecurringMinimum {
        secondary_len(stored.num_counters)
    } else {
        0
    };
    vec![
        ("method", method.to_string()),
        ("counters (m)", stored.num_counters.to_string()),
        ("secondary counters", secondary.to_string()),
        ("counter width", format!("{} bits", stored.counter_width)),
        ("counter layout", layout_text(layout, escaped)),
        ("hash functions (k)", stored.num_hashes.to_string()),
        ("target fpp", format!("{}", stored.target_fpp)),
        ("nonzero counters", nonzero.to_string()),
        ("saturated counters", saturated.to_string()),
    ]
}

impl crate::lookahead::ByDigest for SpectralBloomFilter {
    /// The digest schemes under minimum selection and minimal increase; recurring minimum
    /// hashes the item again for its secondary filter, so its batches run the single calls.
    fn digest_hashing(&self) -> Option<Hashing> {
        crate::lookahead::unless_seeded(self.hashing).filter(|_| self.secondary.is_none())
    }
    fn batch_bits(&self) -> u64 {
        self.counters.len() * self.counters.cell_bits()
    }
    crate::lookahead::one_array_prefetch_query!(counters, num_hashes);
    #[inline(always)]
    fn contains_digest(&self, digest: u128) -> bool {
        let (k, m) = (self.num_hashes, self.counters.len());
        let positions = self.hashing.positions_with_digest(&[], digest, k, m);
        with_layout!(&self.counters, |c| {
            infallible(all_nonzero(positions, |p| Ok(Layout::base(c, p))))
        })
    }
    #[inline(always)]
    fn insert_digest(&mut self, digest: u128) -> bool {
        let (k, m) = (self.num_hashes, self.counters.len());
        let ps = DistinctPositions::from_positions(
            self.hashing.positions_with_digest(&[], digest, k, m),
            k,
        );
        let new = self.insert_at(ps.get(), &[]);
        self.len = self.len.saturating_add(1);
        new
    }
    /// Each insert writes at most k counters raised.
    fn advise_batch_insert(&mut self, items: u64) {
        self.counters
            .advise_bulk_write(items.saturating_mul(u64::from(self.num_hashes)));
    }
}

impl crate::lookahead::ByPositions for SpectralBloomFilter {
    type Extra = ();
    crate::lookahead::one_array_positions!(counters, num_hashes);
    #[inline(always)]
    fn contains_at(&self, ps: &[u64], _: ()) -> bool {
        self.counters.all_nonzero(ps)
    }
    /// Only reached under MS and MI (RM's [`digest_hashing`] is `None`).
    ///
    /// [`digest_hashing`]: crate::lookahead::ByDigest::digest_hashing
    #[inline(always)]
    fn insert_at(&mut self, ps: &[u64], _: ()) -> bool {
        self.len = self.len.saturating_add(1);
        // The window's K is a constant here once inlined: one of these is taken.
        if let Ok(ps) = <&[u64; 7]>::try_from(ps) {
            return self.insert_positions_k(ps);
        }
        if let Ok(ps) = <&[u64; 10]>::try_from(ps) {
            return self.insert_positions_k(ps);
        }
        if let Ok(ps) = <&[u64; 4]>::try_from(ps) {
            return self.insert_positions_k(ps);
        }
        self.insert_positions(ps)
    }
}

crate::registry::registered!(
    SpectralBloomFilter,
    {
        name: "spectral",
        summary: "Spectral Bloom filter (Cohen & Matias 2003): how often was an item inserted; \
                  minimum selection, minimal increase, recurring minimum; remove (MS, RM), union \
                  (MS).",
        grow: false,
        forgets: false,
        index_scheme: true,
    },
    remove,
    merge
);

impl SpectralBloomFilter {
    /// The parameters that decide where an item lands and how counters are kept, and the
    /// hashing, for [`require_same_layout`](crate::filter::require_same_layout).
    fn layout(&self) -> String {
        format!(
            "m = {}, k = {}, {}-bit counters, method {}, {}",
            self.num_counters(),
            self.num_hashes,
            self.counter_width(),
            self.method,
            self.hashing
        )
    }

    /// Same layout, and minimum selection: only its counters are plain sums, so that adding
    /// two filters gives the filter of both streams.
    fn check_mergeable(&self, other: &Self) -> Result<(), Error> {
        crate::filter::require_same_layout(self.kind(), self.layout(), other.layout())?;
        if self.method != SpectralMethod::MinimumSelection {
            return Err(Error::Unsupported {
                kind: Kind::Spectral,
                operation: "merge under minimal increase or recurring minimum (only minimum \
                            selection's counters add up)",
            });
        }
        Ok(())
    }
}

crate::filter::counter_mergeable!(
    SpectralBloomFilter,
    check_mergeable,
    union {
    /// Adds the counters (saturating), under minimum selection: exactly the filter that
    /// inserting both streams builds, so every estimate is an upper bound of the summed
    /// counts. Minimal increase and recurring minimum refuse with
    /// [`Error::Unsupported`]: their counters depend on the order of the inserts.
    ///
    /// ```
    /// use bloomkit::{Mergeable, SpectralBloomFilter};
    /// let mut monday = SpectralBloomFilter::with_capacity(1_000, 0.01)?;
    /// let mut tuesday = monday.clone();
    /// monday.insert("home");
    /// tuesday.insert("home");
    /// monday.union(&tuesday)?;
    /// assert_eq!(monday.count("home"), 2);
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    }
    intersect {
    /// Element-wise minimum, under minimum selection: every item in both keeps an estimate
    /// of at least the smaller of its two counts. `len` becomes the estimate from the fill.
    }
);

crate::filter::collection_impls!(
    /// Collects items (with repeats) into a filter sized for their number at ε = 1%.
    ///
    /// ```
    /// use bloomkit::SpectralBloomFilter;
    /// let filter: SpectralBloomFilter = ["a", "b", "a"].into_iter().collect();
    /// assert_eq!(filter.count("a"), 2);
    /// ```
    SpectralBloomFilter
);

/// The layout as [`Filter::properties`] and `describe` name it: `fixed`, or `compact` with
/// its 4-bit nibbles and the counters its table holds.
pub(crate) fn layout_text(layout: SpectralLayout, escaped: u64) -> String {
    match layout {
        SpectralLayout::Fixed => "fixed".into(),
        SpectralLayout::Compact => format!("compact (4-bit nibbles, {escaped} escaped)"),
    }
}

/// The counters of RM's secondary filter for a primary of m counters: ⌈m/2⌉.
fn secondary_len(m: u64) -> u64 {
    m.div_ceil(2)
}

/// Builds a [`SpectralBloomFilter`]: capacity and ε, or explicit m and k; method; counter
/// width; hashing.
///
/// ```
/// use bloomkit::{SpectralBloomFilter, SpectralMethod};
/// let f = SpectralBloomFilter::builder()
///     .num_counters(1 << 16)
///     .num_hashes(4)
///     .counter_width(8)
///     .method(SpectralMethod::RecurringMinimum)
///     .build()?;
/// assert_eq!(f.secondary_counters(), 1 << 15);
/// assert!(SpectralBloomFilter::builder().capacity(10).counter_width(0).build().is_err());
/// # Ok::<(), bloomkit::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
#[must_use = "a builder does nothing until .build() is called"]
pub struct SpectralBloomFilterBuilder {
    capacity: Option<u64>,
    fpp: Option<f64>,
    num_counters: Option<u64>,
    num_hashes: Option<u32>,
    counter_width: Option<u32>,
    method: SpectralMethod,
    counter_layout: SpectralLayout,
    hashing: HashingChoice,
}

impl SpectralBloomFilterBuilder {
    crate::hash::hashing_setters!(index_scheme);

    crate::sizing::capacity_and_fpp_setters!(
        "n, the number of distinct items expected.",
        "ε, the false-positive probability (and MS error probability) wanted at capacity \
         (default 1%)."
    );

    crate::sizing::num_cells_setter!(num_counters, "counters");

    crate::sizing::setters! {
        /// m, the number of counters, instead of deriving it from capacity and ε.
        num_counters: u64;

        /// k, the number of hash functions, instead of the optimal one.
        num_hashes: u32;

        /// Bits per counter, 1 to 16 (default 16).
        counter_width: u32;
    }

    /// How counters are kept and read (default minimum selection).
    pub fn method(mut self, method: SpectralMethod) -> Self {
        self.method = method;
        self
    }

    /// How counters are stored (default [`SpectralLayout::Compact`], a quarter of the
    /// memory of 16-bit counters with the same answers; counters of 4 bits or fewer are
    /// always [`SpectralLayout::Fixed`]).
    ///
    /// ```
    /// use bloomkit::spectral::{SpectralBloomFilter, SpectralLayout};
    /// let f = SpectralBloomFilter::builder()
    ///     .capacity(1_000)
    ///     .counter_layout(SpectralLayout::Fixed)
    ///     .build()?;
    /// assert_eq!(f.counter_layout(), SpectralLayout::Fixed);
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn counter_layout(mut self, layout: SpectralLayout) -> Self {
        self.counter_layout = layout;
        self
    }

    /// Validates the parameters and allocates the filter. Sizing is the classic one for n
    /// distinct items (so the MS error probability is ε at capacity); RM adds ⌈m/2⌉
    /// secondary counters, and the whole must stay within [`MAX_NUM_BITS`].
    pub fn build(self) -> Result<SpectralBloomFilter, Error> {
        let width =
            crate::sizing::counter_width(self.counter_width, DEFAULT_SPECTRAL_COUNTER_WIDTH)?;
        let d = sizing::dimensions(
            self.capacity,
            self.fpp,
            self.num_counters,
            self.num_hashes,
            width,
        )?;
        let rm = self.method == SpectralMethod::RecurringMinimum;
        let cells = d.num_cells + if rm { secondary_len(d.num_cells) } else { 0 };
        let bits = cells.saturating_mul(u64::from(width));
        if bits > MAX_NUM_BITS {
            return Err(Error::TooLarge {
                bits,
                max: MAX_NUM_BITS,
            });
        }
        let layout = self.counter_layout;
        let secondary = if rm {
            Some(Cells::zeros(secondary_len(d.num_cells), width, layout)?)
        } else {
            None
        };
        Ok(SpectralBloomFilter {
            counters: Cells::zeros(d.num_cells, width, layout)?,
            secondary,
            num_hashes: d.num_hashes,
            method: self.method,
            hashing: self.hashing.resolve()?,
            capacity: d.capacity,
            target_fpp: d.target_fpp,
            len: 0,
        })
    }
}

crate::codec::stored! {
    /// The spectral filter's parameters on disk (44 bytes): method 0 MS, 1 MI, 2 RM;
    /// `counter_width` the logical width w. The compact layout adds [`LAYOUT_BYTES`] after
    /// them. Payload: the primary counters as `PackedCounters` words (w bits; in the compact
    /// layout 4-bit nibbles), then under RM the ⌈m/2⌉ secondary counters likewise; in the
    /// compact layout then the primary's table and the secondary's, 12 bytes an entry.
    struct Stored of f: SpectralBloomFilter {
        num_counters: u64 = f.num_counters(),
        num_hashes: u32 = f.num_hashes => check_num_hashes,
        counter_width: u32 = f.counter_width(),
        method: u32 = f.method.id(),
        capacity: u64 = f.capacity => check_capacity,
        target_fpp: f64 = f.target_fpp => check_target_fpp,
        len: u64 = f.len,
    }
}

/// The bytes of [`Stored`]. A file of the compact layout has [`LAYOUT_BYTES`] more: the
/// layout's id (u32, 1) and the entries of the primary's and the secondary's tables (two
/// u64). A file without them is in the fixed layout, as every file before the compact one.
const STORED_BYTES: usize = 44;
/// The parameters after [`Stored`] in a file of the compact layout.
const LAYOUT_BYTES: usize = 20;

impl Persist for SpectralBloomFilter {
    fn encode_params(&self, out: &mut Vec<u8>) {
        Stored::of(self).write(out);
        if self.counter_layout() == SpectralLayout::Compact {
            out.extend_from_slice(&cells::COMPACT_ID.to_le_bytes());
            out.extend_from_slice(&self.counters.escaped().to_le_bytes());
            let secondary = self.secondary.as_ref().map_or(0, Cells::escaped);
            out.extend_from_slice(&secondary.to_le_bytes());
        }
    }

    /// The arrays (the counters, or the nibbles), primary then secondary; then the compact
    /// layout's tables, primary then secondary, each sorted by index.
    fn encode_payload(&self, out: &mut Vec<u8>) {
        for counters in self.arrays() {
            counters.write_array(out);
        }
        for counters in self.arrays() {
            counters.write_table(out);
        }
    }

    fn decode_parts(parts: &Parts<'_>) -> Result<Self, DecodeError> {
        let view = ViewShape::read(parts)?;
        let stored = &view.stored;
        let width = stored.counter_width;
        let payload = parts.payload;
        let read_array = |span: CounterSpan, table: usize| {
            let array = &payload[span.at..span.at + span.bytes()];
            match view.layout {
                SpectralLayout::Fixed => Cells::fixed_from(span.len, width, array),
                SpectralLayout::Compact => {
                    let (at, entries) = view.table(table);
                    let bytes = &payload[at..at + (entries * ENTRY_BYTES) as usize];
                    Cells::compact_from(span.len, width, array, bytes)
                }
            }
        };
        let counters = read_array(view.primary(), 0)?;
        let secondary = match view.secondary() {
            Some(span) => Some(read_array(span, 1)?),
            None => None,
        };
        Ok(SpectralBloomFilter {
            counters,
            secondary,
            num_hashes: stored.num_hashes,
            method: view.method,
            hashing: view.hashing,
            capacity: stored.capacity,
            target_fpp: stored.target_fpp,
            len: stored.len,
        })
    }
}

/// A spectral filter as loading and a read-only view ([`format::view`](crate::format::view))
/// read it: the stored parameters, method and layout, checked, and the query over the
/// primary counters the view fetches from the file (the membership query of every method
/// reads only them, and in the compact layout only their nibbles; a count under RM reads
/// the secondary too, and a count that meets a nibble 15 searches the table in the file).
/// Loading checks the padding bits of every word of both arrays; the view checks them in
/// each chunk when it first touches it ([`KindView::check_piece`]). Of the compact layout's
/// tables loading checks everything; the view checks the order, the indexes and the counts
/// of the entries when it opens (reading the tables' chunks), and that every entry has its
/// nibble 15 and every nibble 15 its entry in each summary; a count that meets a nibble 15
/// without its entry fails.
#[derive(Clone, Copy, Debug)]
struct ViewShape {
    stored: Stored,
    method: SpectralMethod,
    hashing: Hashing,
    layout: SpectralLayout,
    /// The entries of the primary's and the secondary's tables (compact layout; 0 and 0 in
    /// the fixed one).
    entries: [u64; 2],
}

impl ViewShape {
    /// The bits of an array's cells: w, or the compact layout's 4.
    fn cell_width(&self) -> u32 {
        match self.layout {
            SpectralLayout::Fixed => self.stored.counter_width,
            SpectralLayout::Compact => cells::NIBBLE_BITS,
        }
    }

    /// The primary counters (or nibbles) in the payload: from its start.
    fn primary(&self) -> CounterSpan {
        CounterSpan {
            at: 0,
            len: self.stored.num_counters,
            width: self.cell_width(),
        }
    }

    /// RM's secondary counters (or nibbles), after the primary ones (`None` for MS and MI).
    fn secondary(&self) -> Option<CounterSpan> {
        (self.method == SpectralMethod::RecurringMinimum).then(|| CounterSpan {
            at: self.primary().bytes(),
            len: secondary_len(self.stored.num_counters),
            width: self.cell_width(),
        })
    }

    /// The arrays' span: 0 (primary) or 1 (secondary).
    fn span(&self, which: usize) -> CounterSpan {
        match which {
            0 => self.primary(),
            _ => self
                .secondary()
                .expect("a table of the secondary only under RM"),
        }
    }

    /// Where the arrays end and the tables begin.
    fn arrays_end(&self) -> usize {
        let primary = self.primary();
        self.secondary()
            .map_or(primary.bytes(), |s| s.at + s.bytes())
    }

    /// The payload offset and the entries of table `which` (0: primary, 1: secondary).
    fn table(&self, which: usize) -> (usize, u64) {
        let skip = if which == 0 { 0 } else { self.entries[0] };
        (
            self.arrays_end() + (skip * ENTRY_BYTES) as usize,
            self.entries[which],
        )
    }

    /// Counter `index` of array `which`, read from the view's file: the counter, or the
    /// nibble, and for a nibble 15 the count its table entry holds (found by bisection
    /// over the sorted entries in the file).
    fn counter_in_file(&self, view: &FilterView, which: usize, index: u64) -> Result<u32, Error> {
        let value = view.counter(&self.span(which), index)?;
        if self.layout == SpectralLayout::Fixed || value != ESCAPE {
            return Ok(value);
        }
        let (at, entries) = self.table(which);
        let entry = |i: u64| at + (i * ENTRY_BYTES) as usize;
        let (mut low, mut high) = (0, entries);
        while low < high {
            let mid = low + (high - low) / 2;
            let mut key = [0; 8];
            view.payload_into(entry(mid), &mut key)?;
            match u64::from_le_bytes(key).cmp(&index) {
                std::cmp::Ordering::Less => low = mid + 1,
                std::cmp::Ordering::Greater => high = mid,
                std::cmp::Ordering::Equal => {
                    let mut count = [0; 4];
                    view.payload_into(entry(mid) + 8, &mut count)?;
                    return Ok(u32::from_le_bytes(count));
                }
            }
        }
        Err(cells::escapes_without_entry(1, 0).into())
    }

    /// The layout and the tables' entries from the parameters after [`Stored`] (none: the
    /// fixed layout).
    fn read_layout(
        rest: &[u8],
        stored: &Stored,
        rm: bool,
    ) -> Result<(SpectralLayout, [u64; 2]), DecodeError> {
        if rest.is_empty() {
            return Ok((SpectralLayout::Fixed, [0, 0]));
        }
        if rest.len() != LAYOUT_BYTES {
            return Err(invalid(
                "parameters",
                format!(
                    "{} bytes, expected {STORED_BYTES} (fixed layout) or {} (compact layout)",
                    STORED_BYTES + rest.len(),
                    STORED_BYTES + LAYOUT_BYTES
                ),
            ));
        }
        let mut r = crate::codec::Reader::new(rest);
        let (id, primary, secondary) = (r.u32()?, r.u64()?, r.u64()?);
        if id != cells::COMPACT_ID {
            return Err(invalid(
                "layout",
                format!("{id} is not {} (compact)", cells::COMPACT_ID),
            ));
        }
        if stored.counter_width <= cells::NIBBLE_BITS {
            return Err(invalid(
                "layout",
                format!(
                    "the compact layout with {}-bit counters (it is for counters of more than \
                     {} bits)",
                    stored.counter_width,
                    cells::NIBBLE_BITS
                ),
            ));
        }
        if !rm && secondary != 0 {
            return Err(invalid(
                "overflow table",
                format!("{secondary} entries for a secondary filter that only RM has"),
            ));
        }
        Ok((SpectralLayout::Compact, [primary, secondary]))
    }
}

impl KindView for ViewShape {
    fn read(parts: &Parts<'_>) -> Result<Self, DecodeError> {
        parts.expect_kind(Kind::Spectral)?;
        let params = parts.params;
        let (head, rest) = params.split_at(params.len().min(STORED_BYTES));
        let stored = Stored::read(head)?;
        let Stored {
            num_counters,
            counter_width: width,
            method,
            ..
        } = stored;
        let method = SpectralMethod::from_id(method)
            .ok_or_else(|| invalid("method", format!("{method} is not 0, 1 or 2")))?;
        check_counter_width(width)?;
        let rm = method == SpectralMethod::RecurringMinimum;
        check_num_counters(
            num_counters,
            if rm { secondary_len(num_counters) } else { 0 },
            width,
        )?;
        let (layout, entries) = Self::read_layout(rest, &stored, rm)?;
        let shape = ViewShape {
            stored,
            method,
            hashing: parts.hashing,
            layout,
            entries,
        };
        // The payload's length is known from m, the width, the method and the tables'
        // entries, before anything is allocated.
        let len = parts.payload.len();
        let primary = shape.primary().bytes();
        if len < primary {
            return Err(invalid(
                "payload",
                format!("{len} bytes cannot hold {num_counters} counters"),
            ));
        }
        let arrays = shape.arrays_end();
        let tables = entries[0]
            .checked_add(entries[1])
            .and_then(|e| e.checked_mul(ENTRY_BYTES));
        match tables.and_then(|t| t.checked_add(arrays as u64)) {
            Some(expected) if expected == len as u64 => {}
            _ if layout == SpectralLayout::Fixed && len > arrays => {
                return Err(invalid(
                    "payload",
                    format!("{} bytes too many", len - arrays),
                ));
            }
            _ if layout == SpectralLayout::Fixed => {
                let span = shape
                    .secondary()
                    .expect("shorter than the primary: refused above");
                PackedCounters::check_encoded_len(span.len, width, len - primary)?;
            }
            _ => {
                return Err(invalid(
                    "payload",
                    format!(
                        "{len} bytes cannot hold {arrays} bytes of nibbles and {} + {} table \
                         entries of {ENTRY_BYTES} bytes",
                        entries[0], entries[1]
                    ),
                ));
            }
        }
        Ok(shape)
    }

    fn facts(&self) -> ViewFacts {
        let s = &self.stored;
        crate::format::view::view_facts!(s, s.num_counters, s.num_hashes, s.len)
    }

    /// Every primary counter at the item's positions is non-zero: read from the counters,
    /// or the compact layout's nibbles (0 exactly when the count is).
    fn contains(&self, bytes: &[u8], view: &FilterView) -> Result<bool, Error> {
        let s = &self.stored;
        let primary = self.primary();
        let positions = self.hashing.positions(bytes, s.num_hashes, s.num_counters);
        all_nonzero(positions, |p| view.counter(&primary, p))
    }

    /// The loaded filter's count ([`count_by`]) over the counters the view fetches: the
    /// primary ones, and under RM the secondary ones when the primary minimum is single.
    fn count(&self, bytes: &[u8], view: &FilterView) -> Result<Option<u64>, Error> {
        let s = &self.stored;
        let secondary = self.secondary();
        let count = count_by(
            self.hashing,
            s.num_hashes,
            s.num_counters,
            secondary.map(|span| span.len),
            bytes,
            |p| self.counter_in_file(view, 0, p),
            |q| match &secondary {
                Some(_) => self.counter_in_file(view, 1, q),
                None => Ok(0),
            },
        )?;
        Ok(Some(u64::from(count)))
    }

    /// The non-zero primary counters and the saturated counters of both arrays, counted
    /// over the payload in one pass; the rest as the loaded filter works it out from them.
    /// In the compact layout the same pass counts the nibbles 15 of each array, which must
    /// be as many as its table's entries, and each entry's nibble is read: 15, as loading
    /// requires (so every nibble 15 has its entry).
    fn summary(&self, view: &FilterView) -> Result<Summary, Error> {
        let s = &self.stored;
        let max = (1u32 << s.counter_width) - 1;
        let (primary, secondary) = (self.primary(), self.secondary());
        let (mut nonzero, mut saturated) = (0u64, 0u64);
        let mut escapes = [0u64; 2];
        view.for_each_piece_at(|offset, bytes| {
            primary.for_each_in(offset, bytes, |c| {
                nonzero += (c != 0) as u64;
                saturated += (c == max) as u64;
                escapes[0] += (c == ESCAPE) as u64;
            });
            if let Some(secondary) = &secondary {
                secondary.for_each_in(offset, bytes, |c| {
                    saturated += (c == max) as u64;
                    escapes[1] += (c == ESCAPE) as u64;
                });
            }
            Ok(())
        })?;
        let mut memory_bytes = view.payload_bytes();
        if self.layout == SpectralLayout::Compact {
            memory_bytes = self.arrays_end() as u64;
            let arrays = if secondary.is_some() { 2 } else { 1 };
            for (which, &escaped) in escapes.iter().enumerate().take(arrays) {
                let (at, entries) = self.table(which);
                let mut table = cells::TableReader::new(self.span(which).len, s.counter_width);
                let mut indexes = Vec::new();
                view.for_each_piece_in(at..at + (entries * ENTRY_BYTES) as usize, |_, bytes| {
                    Ok(table.feed(bytes, |index, count| {
                        saturated += (count == max) as u64;
                        indexes.push(index);
                    })?)
                })?;
                for index in indexes {
                    if view.counter(&self.span(which), index)? != ESCAPE {
                        return Err(cells::entry_without_escape(index).into());
                    }
                }
                if escaped != entries {
                    return Err(cells::escapes_without_entry(escaped, entries).into());
                }
                memory_bytes += cells::table_bytes_for(entries) as u64;
            }
        }
        let escaped = self.entries[0] + self.entries[1];
        let summary = view.summary_of(
            None,
            properties(s, self.method, self.layout, escaped, nonzero, saturated),
            crate::params::estimate_items(nonzero, s.num_counters, s.num_hashes),
            crate::params::fpp_from_fill(nonzero, s.num_counters, s.num_hashes),
        );
        Ok(Summary {
            memory_bytes,
            bits_per_item: crate::filter::bits_per_item(memory_bytes, s.capacity),
            ..summary
        })
    }

    /// The compact layout's tables: entries sorted, each index below its array's length,
    /// each count in `15..=2^w − 1` (reading the tables' chunks).
    fn check_opened(&self, view: &FilterView) -> Result<(), Error> {
        if self.layout == SpectralLayout::Fixed {
            return Ok(());
        }
        for which in 0..if self.secondary().is_some() { 2 } else { 1 } {
            let (at, entries) = self.table(which);
            let mut table =
                cells::TableReader::new(self.span(which).len, self.stored.counter_width);
            view.for_each_piece_in(at..at + (entries * ENTRY_BYTES) as usize, |_, bytes| {
                Ok(table.feed(bytes, |_, _| {})?)
            })?;
        }
        Ok(())
    }

    /// The padding bits of every word of both arrays are zero, as loading requires.
    fn check_piece(&self, offset: usize, bytes: &[u8]) -> Result<(), DecodeError> {
        self.primary().check_words(offset, bytes)?;
        match self.secondary() {
            Some(span) => span.check_words(offset, bytes),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::Mergeable;

    /// The fixed and the compact filter of the same parameters and logical width.
    fn both_layouts(
        m: u64,
        k: u32,
        width: u32,
        method: SpectralMethod,
        scheme: IndexScheme,
        seed: u64,
    ) -> [SpectralBloomFilter; 2] {
        SpectralLayout::ALL.map(|layout| {
            SpectralBloomFilter::builder()
                .num_counters(m)
                .num_hashes(k)
                .counter_width(width)
                .method(method)
                .counter_layout(layout)
                .index_scheme(scheme)
                .seed(seed)
                .build()
                .unwrap()
        })
    }

    /// What a filter answers about every item of the tests' domain: count and contains.
    fn answers(f: &SpectralBloomFilter) -> Vec<(u64, bool)> {
        (0..ITEMS).map(|x| (f.count(&x), f.contains(&x))).collect()
    }

    /// Every counter of both arrays.
    fn all_counters(f: &SpectralBloomFilter) -> Vec<u32> {
        f.arrays()
            .flat_map(|c| (0..c.len()).map(move |p| c.get(p)))
            .collect()
    }

    /// The items the layout tests draw from: few, so that they repeat and share counters.
    const ITEMS: u64 = 24;

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(256))]

        /// The compact layout answers exactly as the fixed one of the same logical width:
        /// the same random sequence of single and batch inserts (items repeated up to 40
        /// times in a row, so that counters pass 15 and, at 5 and 6 bits, saturate at 31
        /// and 63), removes, unions and intersections (with a filter of either layout),
        /// clears and round trips through the file format, under every method; after each
        /// operation every count and contains answer is the same, and at the end every
        /// counter of both arrays, the length and the saturated and non-zero counters.
        #[test]
        fn the_compact_layout_answers_exactly_as_the_fixed_one(
            m in 1u64..300,
            k in 1u32..=8,
            width in proptest::prop_oneof![5u32..=6, 5u32..=16],
            method_at in 0usize..3,
            scheme_at in 0usize..4,
            seed in proptest::num::u64::ANY,
            ops in proptest::collection::vec((0u8..10, 0..ITEMS, 1usize..40), 0..60),
        ) {
            let scheme = crate::hash::TESTED_SCHEMES[scheme_at];
            let method = SpectralMethod::ALL[method_at];
            let [mut compact, mut fixed] = both_layouts(m, k, width, method, scheme, seed);
            proptest::prop_assert_eq!(compact.counter_layout(), SpectralLayout::Compact);
            proptest::prop_assert_eq!(fixed.counter_layout(), SpectralLayout::Fixed);
            for &(op, item, times) in &ops {
                let batch: Vec<u64> = (0..times as u64).map(|i| (item + i * i) % ITEMS).collect();
                match op {
                    0..=2 => {
                        for _ in 0..times {
                            proptest::prop_assert_eq!(compact.insert(&item), fixed.insert(&item));
                        }
                    }
                    3 => proptest::prop_assert_eq!(
                        compact.insert_batch(&batch),
                        fixed.insert_batch(&batch)
                    ),
                    4 => {
                        // The window by positions, forced whatever the filter's size.
                        let insert = |f: &mut SpectralBloomFilter, x: &u64| f.insert(x);
                        proptest::prop_assert_eq!(
                            crate::lookahead::insert_by_positions_in(&mut compact, &batch, insert, false),
                            crate::lookahead::insert_by_positions_in(&mut fixed, &batch, insert, false)
                        );
                        let (mut a, mut b) = (Vec::new(), Vec::new());
                        let contains = |f: &SpectralBloomFilter, x: &u64| f.contains(x);
                        crate::lookahead::contains_by_positions_in(&compact, &batch, &mut a, contains, false);
                        crate::lookahead::contains_by_positions_in(&fixed, &batch, &mut b, contains, false);
                        proptest::prop_assert_eq!(a, b);
                    }
                    5 | 6 => {
                        for _ in 0..times.min(20) {
                            proptest::prop_assert_eq!(compact.remove(&item), fixed.remove(&item));
                        }
                    }
                    7 => {
                        // With a filter of the other layout, and of its own.
                        let (a, b) = (fixed.clone(), compact.clone());
                        if item % 2 == 0 {
                            proptest::prop_assert_eq!(compact.union(&a), fixed.union(&b));
                        } else {
                            proptest::prop_assert_eq!(compact.union(&b), fixed.union(&a));
                        }
                    }
                    8 => {
                        let [mut c, mut f] = both_layouts(m, k, width, method, scheme, seed);
                        for x in &batch {
                            c.insert(x);
                            f.insert(x);
                        }
                        proptest::prop_assert_eq!(compact.intersect(&c), fixed.intersect(&f));
                        if item == 0 {
                            compact.clear();
                            fixed.clear();
                        }
                    }
                    _ => {
                        let bytes = compact.to_bytes();
                        let back = SpectralBloomFilter::from_bytes(&bytes).unwrap();
                        proptest::prop_assert_eq!(back.to_bytes(), bytes);
                        proptest::prop_assert!(back == compact, "the loaded filter differs");
                        compact = back;
                        fixed = SpectralBloomFilter::from_bytes(&fixed.to_bytes()).unwrap();
                        proptest::prop_assert_eq!(fixed.counter_layout(), SpectralLayout::Fixed);
                    }
                }
                let (mut a, mut b) = (Vec::new(), Vec::new());
                compact.contains_batch_into(&batch, &mut a);
                fixed.contains_batch_into(&batch, &mut b);
                proptest::prop_assert_eq!(a, b);
                proptest::prop_assert_eq!(answers(&compact), answers(&fixed), "after {:?}", (op, item, times));
            }
            proptest::prop_assert_eq!(all_counters(&compact), all_counters(&fixed));
            proptest::prop_assert_eq!(Filter::len(&compact), Filter::len(&fixed));
            proptest::prop_assert_eq!(compact.saturated_counters(), fixed.saturated_counters());
            proptest::prop_assert_eq!(compact.nonzero_counters(), fixed.nonzero_counters());
            let escaped = all_counters(&compact).iter().filter(|&&c| c >= ESCAPE).count();
            proptest::prop_assert_eq!(compact.escaped_counters(), escaped as u64);
        }
    }

    /// A filter of 16-bit counters in the compact layout takes a quarter of the fixed
    /// layout's memory while no counter escapes, and each escaped counter adds its entry.
    #[test]
    fn the_compact_layout_takes_a_quarter_of_the_memory_plus_its_table() {
        let [mut compact, fixed] = both_layouts(
            1 << 16,
            7,
            16,
            SpectralMethod::MinimumSelection,
            IndexScheme::default(),
            1,
        );
        assert_eq!(
            Filter::memory_bytes(&compact) * 4,
            Filter::memory_bytes(&fixed)
        );
        for _ in 0..15 {
            compact.insert("hot");
        }
        assert_eq!(compact.escaped_counters(), 7);
        let table = Filter::memory_bytes(&compact) - (1 << 16) / 2;
        assert!(
            (7 * 17..=64 * 17).contains(&table),
            "{table} bytes for 7 entries"
        );
    }

    fn with(method: SpectralMethod) -> SpectralBloomFilter {
        SpectralBloomFilter::builder()
            .capacity(1_000)
            .fpp(0.01)
            .method(method)
            .build()
            .unwrap()
    }

    #[test]
    fn counts_are_exact_without_collisions() {
        for method in SpectralMethod::ALL {
            let mut f = with(method);
            for i in 0..50u32 {
                for _ in 0..=i % 7 {
                    f.insert(&i);
                }
            }
            for i in 0..50u32 {
                assert_eq!(f.count(&i), u64::from(i % 7 + 1), "{method}: {i}");
            }
            assert_eq!(
                Filter::len(&f),
                (0..50u32).map(|i| u64::from(i % 7 + 1)).sum::<u64>()
            );
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(64))]

        /// The MS and MI inserts (the common k's array and one-pass increment, any other
        /// k's) against the definition written out here: the item's distinct positions, the
        /// minimum of their counters, then +1 on all of them (MS) or on those at the minimum
        /// (MI), a counter at 2^w − 1 staying there; the same counters and the same "new"
        /// answers. A few counters (so that an item's positions repeat) of 1 to 16 bits (so
        /// that they saturate), every k from 1 to 12, four index schemes.
        #[test]
        fn ms_and_mi_inserts_follow_their_definition(
            m in 1u64..40,
            k in 1u32..=12,
            width in 1u32..=16,
            mi in proptest::bool::ANY,
            scheme_at in 0usize..4,
            seed in proptest::num::u64::ANY,
            items in proptest::collection::vec(0u64..60, 0..200),
        ) {
            let scheme = crate::hash::TESTED_SCHEMES[scheme_at];
            let method = if mi { SpectralMethod::MinimalIncrease } else { SpectralMethod::MinimumSelection };
            let mut f = SpectralBloomFilter::builder()
                .num_counters(m)
                .num_hashes(k)
                .counter_width(width)
                .method(method)
                .index_scheme(scheme)
                .seed(seed)
                .build()
                .unwrap();
            let max = (1u32 << width) - 1;
            let mut model = vec![0u32; m as usize];
            for item in &items {
                let mut distinct: Vec<u64> = Vec::new();
                for p in f.hashing.positions(&item.to_le_bytes(), k, m) {
                    if !distinct.contains(&p) {
                        distinct.push(p);
                    }
                }
                let min = distinct.iter().map(|&p| model[p as usize]).min().unwrap();
                for &p in &distinct {
                    let c = &mut model[p as usize];
                    if (!mi || *c == min) && *c < max {
                        *c += 1;
                    }
                }
                proptest::prop_assert_eq!(f.insert(item), min == 0);
            }
            let counters: Vec<u32> = (0..m).map(|p| f.counters.get(p)).collect();
            proptest::prop_assert_eq!(counters, model);
        }
    }

    #[test]
    fn minimal_increase_raises_only_the_minimum() {
        // One counter, k = 1 … no: two counters and k = 2 so every item covers both.
        let mut f = SpectralBloomFilter::builder()
            .num_counters(64)
            .num_hashes(3)
            .method(SpectralMethod::MinimalIncrease)
            .build()
            .unwrap();
        f.insert("x");
        let ps = f.positions(b"x");
        let p = ps.get()[0];
        f.counters.set(p, 5);
        f.insert("x");
        // The counter at 5 stayed; the others (at 1) went to 2.
        assert_eq!(f.counters.get(p), 5);
        assert_eq!(f.count("x"), 2);
        for &q in &ps.get()[1..] {
            assert_eq!(f.counters.get(q), 2);
        }
    }

    #[test]
    fn minimal_increase_refuses_to_remove() {
        let mut f = with(SpectralMethod::MinimalIncrease);
        f.insert("x");
        let before = f.to_bytes();
        assert!(matches!(f.remove("x"), Err(Error::Unsupported { .. })));
        assert_eq!(f.remove("never"), Err(Error::NotPresent));
        assert_eq!(f.to_bytes(), before);
    }

    #[test]
    fn recurring_minimum_reads_the_secondary_for_a_single_minimum() {
        let mut f = with(SpectralMethod::RecurringMinimum);
        f.insert("x");
        // Inflate all but one of x's primary counters: a single minimum of 1 … and make
        // that one wrong too, so that only the secondary knows the truth.
        let ps = f.positions(b"x");
        for (i, &p) in ps.get().iter().enumerate() {
            f.counters.set(p, if i == 0 { 3 } else { 9 });
        }
        // x is not in the secondary yet: the primary's minimum is the answer.
        assert_eq!(f.count("x"), 3);
        f.insert("x"); // single minimum (4): into the secondary with 4
        assert_eq!(f.count("x"), 4);
        let qs = f.secondary_positions(b"x").unwrap();
        let s = f.secondary.as_mut().unwrap();
        for &q in qs.get() {
            s.set(q, 2);
        }
        assert_eq!(f.count("x"), 2, "the secondary wins for a single minimum");
        f.remove("x").unwrap();
        assert_eq!(f.count("x"), 1);
    }

    #[test]
    fn degenerate_parameters_are_errors() {
        let b = SpectralBloomFilter::builder;
        assert_eq!(b().build().unwrap_err(), Error::ZeroCapacity);
        assert_eq!(b().num_counters(0).build().unwrap_err(), Error::ZeroBits);
        assert_eq!(
            b().capacity(10).counter_width(17).build().unwrap_err(),
            Error::InvalidCounterWidth(17)
        );
        assert!(matches!(
            b().num_counters(MAX_NUM_BITS / 16)
                .method(SpectralMethod::RecurringMinimum)
                .build(),
            Err(Error::TooLarge { .. })
        ));
        assert!(matches!(
            SpectralBloomFilter::with_capacity(u64::MAX, 0.01),
            Err(Error::CapacityTooLarge {
                capacity: u64::MAX,
                ..
            })
        ));
    }

    #[test]
    fn saturated_counters_are_lower_bounds_and_stay() {
        let mut f = SpectralBloomFilter::builder()
            .num_counters(1_000)
            .num_hashes(3)
            .counter_width(4)
            .build()
            .unwrap();
        for _ in 0..20 {
            f.insert("hot");
        }
        assert_eq!(f.count("hot"), 15);
        assert!(f.saturated_counters() >= 1);
        for _ in 0..20 {
            f.remove("hot").unwrap();
        }
        assert_eq!(f.count("hot"), 15);
    }

    #[test]
    fn only_minimum_selection_merges() {
        for method in [
            SpectralMethod::MinimalIncrease,
            SpectralMethod::RecurringMinimum,
        ] {
            let mut a = with(method);
            a.insert("x");
            let before = a.to_bytes();
            let b = a.clone();
            assert!(matches!(a.union(&b), Err(Error::Unsupported { .. })));
            assert!(matches!(a.intersect(&b), Err(Error::Unsupported { .. })));
            assert_eq!(a.to_bytes(), before);
            let ms = with(SpectralMethod::MinimumSelection);
            assert!(matches!(a.union(&ms), Err(Error::Incompatible(_))));
        }
        let mut a = with(SpectralMethod::MinimumSelection);
        let mut b = a.clone();
        a.insert("x");
        b.insert("x");
        b.insert("y");
        a.union(&b).unwrap();
        assert_eq!((a.count("x"), a.count("y"), Filter::len(&a)), (2, 1, 3));
    }

    #[test]
    fn method_names_round_trip() {
        for m in SpectralMethod::ALL {
            assert_eq!(SpectralMethod::from_name(m.name()), Some(m));
            assert_eq!(SpectralMethod::from_id(m.id()), Some(m));
        }
        assert_eq!(SpectralMethod::from_name("xx"), None);
        assert_eq!(SpectralMethod::from_id(3), None);
    }
}
