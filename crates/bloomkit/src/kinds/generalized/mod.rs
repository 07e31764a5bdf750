//! The generalized Bloom filter (Laufer, Velloso, Cunha & Duarte, "Generalized Bloom
//! Filters", technical report GTA-05-43, UFRJ, 2005; extended in Computer Networks, 2011) —
//! a Bloom filter whose false-positive probability is bounded however many items go in,
//! paid for with false negatives.
//!
//! # Structure
//!
//! m bits and two families of hash functions: k₁ that **set** bits to 1, as in a classic
//! filter, and k₀ that **reset** bits to 0. Inserting an item resets its k₀ bits, then sets
//! its k₁ bits (a bit named by both ends at 1). A query answers "maybe" when the item's k₁
//! bits are all 1 *and* its k₀ bits are all 0 (a k₀ bit that is also one of the item's own
//! k₁ bits must be 1); otherwise "certainly not" — or, since this filter forgets, "not any
//! more".
//!
//! A classic filter only ever sets bits: overfilled, it answers "maybe" to everything, and
//! a hostile writer who sets many bits can make every query a false positive. Here every
//! insertion also clears bits, so the fraction of ones p tends to `k₁/(k₀ + k₁)` instead of
//! to 1, and an absent item passes with probability `p^k₁ (1 − p)^k₀`, which is at most
//!
//! ```text
//!     (k₁/(k₀ + k₁))^k₁ · (k₀/(k₀ + k₁))^k₀
//! ```
//!
//! at *any* fill — so for any number of insertions and any initial state
//! ([`params::generalized_fpp_bound`]; 1/4 for k₀ = k₁ = 1, 0.0156 for k₁ = 6, k₀ = 2).
//! The price: a later insertion can reset one of an item's ones or set one of its zeros,
//! and the item is then no longer found — a **false negative**, growing with the number of
//! later insertions ([`params::generalized_fnr_after`]). The filter declares it
//! ([`Abilities::forgets`](crate::registry::Abilities::forgets)), like the stable filter:
//! an item is always found right after its insertion, not necessarily later.
//!
//! The recurrences behind both rates ([`params::generalized_one_probability`],
//! [`params::generalized_fpp`], [`params::generalized_fnr`]) are in `kinds/generalized/theory.rs`;
//! `tests/suite/generalized.rs` measures both rates against them. With k₀ = 0 the filter is the
//! classic one, bit for bit in behaviour.
//!
//! The filter starts with every bit at 0 (the paper allows any initial state; the bound
//! holds for all of them). It cannot remove or merge.
//!
//! # What `with_capacity(n, ε)` promises
//!
//! m and k₁ are the classic filter's for n at ε, and k₀ = 1. Filled with n distinct items:
//!
//! * **false positives at most ε** — [`params::generalized_fpp`] at n, about 0.37 ε at
//!   ε = 1% and at 0.1% (the resets keep the fill below the classic filter's half), reported
//!   as [`target_fpp`](GeneralizedBloomFilter::target_fpp). Past n the rate keeps rising,
//!   above ε from about 1.3 n (ε = 1%) or 1.2 n (0.1%), towards but never past
//!   [`false_positive_bound`](GeneralizedBloomFilter::false_positive_bound) (4.9% and 3.5%);
//! * **false negatives, by design** — [`params::generalized_fnr`] at n: about 44% of the n
//!   items (43% at 0.1%) are no longer found, the oldest 70%, the newest none. This is the
//!   price of the bound; a filter that must find its items is another kind.
//!
//! These hold for any n (they depend on m/n only) and are measured in
//! `tests/suite/generalized.rs`.
//!
//! ```
//! use bloomkit::GeneralizedBloomFilter;
//!
//! let mut recent = GeneralizedBloomFilter::builder()
//!     .num_bits(10_000)
//!     .set_hashes(6)
//!     .reset_hashes(2)
//!     .build()?;
//! recent.insert("a");
//! assert!(recent.contains("a")); // always, right after
//! // However many items follow, an absent item passes with probability at most 1.6%.
//! assert!(recent.false_positive_bound() < 0.016);
//! # Ok::<(), bloomkit::Error>(())
//! ```

mod options;
pub mod theory;

use crate::any::Summary;
use crate::bits::BitVec;
use crate::codec::{invalid, Parts};
use crate::error::{DecodeError, Error};
use crate::filter::{Filter, Kind};
use crate::format::view::{
    infallible, try_all, view_facts, FilterView, KindView, Shape, ViewFacts,
};
use crate::hash::{Hashing, HashingChoice, Item, Positions};
use crate::params::{self, MAX_NUM_HASHES};
use crate::sizing;

/// k₀ unless chosen otherwise: one reset per insertion, the smallest that bounds the
/// false-positive probability.
pub const DEFAULT_RESET_HASHES: u32 = 1;

/// A generalized Bloom filter: k₁ hashes set bits, k₀ reset them; bounded false positives,
/// false negatives by design (see the [module docs](self)).
#[derive(Clone, PartialEq)]
pub struct GeneralizedBloomFilter {
    bits: BitVec,
    set_hashes: u32,
    reset_hashes: u32,
    hashing: Hashing,
    capacity: u64,
    target_fpp: f64,
    inserted: u64,
}

/// The k₁ an insert keeps inline (every ε down to 10⁻⁴ needs fewer); above, it derives the
/// positions twice.
const SET_INLINE: usize = 16;

impl GeneralizedBloomFilter {
    /// A filter for `capacity` items: m and k₁ as a classic filter for `capacity` at
    /// `fpp`, and k₀ = 1. Filled with `capacity` distinct items its false-positive
    /// probability is at most ε (about 0.37 ε; [`target_fpp`](Self::target_fpp) says it),
    /// and about 44% of those items are no longer found (false negatives by design); past
    /// capacity the rate rises above ε but stays below
    /// [`false_positive_bound`](Self::false_positive_bound). See the module docs.
    ///
    /// ```
    /// use bloomkit::GeneralizedBloomFilter;
    /// let f = GeneralizedBloomFilter::with_capacity(1_000, 0.01)?;
    /// assert_eq!((f.num_bits(), f.set_hashes(), f.reset_hashes()), (9_586, 7, 1));
    /// assert!(f.target_fpp() < 0.01);
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn with_capacity(capacity: impl crate::params::ItemCount, fpp: f64) -> Result<Self, Error> {
        Self::builder().capacity(capacity).fpp(fpp).build()
    }

    /// A builder: capacity and ε, or m; k₁ and k₀; hashing.
    pub fn builder() -> GeneralizedBloomFilterBuilder {
        GeneralizedBloomFilterBuilder::default()
    }

    /// The item's k₁ + k₀ positions: the first k₁ set, the k₀ after them reset. The
    /// iterator holds the digest's state, so a clone gives them again without hashing.
    fn positions<'a>(&self, bytes: &'a [u8]) -> Positions<'a> {
        let k = self.set_hashes + self.reset_hashes;
        self.hashing.positions(bytes, k, self.bits.len())
    }

    /// Adds an item: resets its k₀ bits, then sets its k₁ bits. Returns `true` if the item
    /// was reported absent before.
    pub fn insert<I: Item + ?Sized>(&mut self, item: &I) -> bool {
        let k = self.set_hashes + self.reset_hashes;
        if self.hashing.scheme != crate::hash::IndexScheme::SeededHashes {
            // Under a digest scheme at k₁ + k₀ = 5, 8, 11 (ε = 5%, 1%, 0.1% with k₀ = 1):
            // the positions once, into an array, where `add` derives them twice.
            let digest = item.with_bytes(|bytes| self.hashing.digest(bytes));
            match k {
                8 => return self.add_digest_k::<8>(digest),
                5 => return self.add_digest_k::<5>(digest),
                11 => return self.add_digest_k::<11>(digest),
                _ => {
                    let m = self.bits.len();
                    return self.add(self.hashing.positions_with_digest(&[], digest, k, m));
                }
            }
        }
        item.with_bytes(|bytes| self.add(self.positions(bytes)))
    }

    /// The insert of the item with this digest at k₁ + k₀ = `K`.
    #[inline(always)]
    fn add_digest_k<const K: usize>(&mut self, digest: u128) -> bool {
        let mut ps = [0u64; K];
        crate::lookahead::positions_into(self.hashing, digest, self.bits.len(), &mut ps);
        self.add_at(&ps)
    }

    /// [`add`](Self::add) at positions already computed (the first k₁ set, the rest reset).
    #[inline(always)]
    fn add_at(&mut self, ps: &[u64]) -> bool {
        let k1 = self.set_hashes as usize;
        let new = !holds_at(ps, k1, |p| self.bits.get(p));
        let (ones, zeros) = ps.split_at(k1);
        for &p in zeros {
            self.bits.unset(p);
        }
        for &p in ones {
            self.bits.set(p);
        }
        self.inserted += u64::from(new);
        new
    }

    /// Resets the k₀ bits, then sets the k₁ bits, of these positions (so that a position
    /// among both ends up 1); `true` when the item was reported absent before.
    #[inline(always)]
    fn add(&mut self, positions: Positions<'_>) -> bool {
        let new = !self.holds(positions.clone());
        let k1 = self.set_hashes as usize;
        if k1 > SET_INLINE {
            for p in positions.clone().skip(k1) {
                self.bits.unset(p);
            }
            positions.take(k1).for_each(|p| _ = self.bits.set(p));
        } else {
            // One pass: the set positions kept inline, the reset ones cleared as they come;
            // then the set ones.
            let mut ones = [0u64; SET_INLINE];
            let mut i = 0;
            // `for_each`: `Positions`' own fold (see the deletable filter's insert).
            positions.for_each(|p| {
                if i < k1 {
                    ones[i] = p;
                } else {
                    self.bits.unset(p);
                }
                i += 1;
            });
            ones[..k1].iter().for_each(|&p| _ = self.bits.set(p));
        }
        self.inserted += u64::from(new);
        new
    }

    /// [`insert`](Self::insert) of every item in order; returns how many were certainly new.
    /// A filter past the L2 cache hashes each item once and prefetches what its insert
    /// touches a window of items ahead ([`lookahead`](crate::lookahead)); the filter ends
    /// as after the single inserts.
    ///
    /// ```
    /// use bloomkit::GeneralizedBloomFilter;
    /// let mut filter = GeneralizedBloomFilter::with_capacity(1_000, 0.01)?;
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

    /// `true` when the item's k₁ bits are 1 and its k₀ bits 0 (those that are not also
    /// among its k₁): "maybe inserted, and not overwritten since".
    pub fn contains<I: Item + ?Sized>(&self, item: &I) -> bool {
        item.with_bytes(|bytes| self.holds(self.positions(bytes)))
    }

    /// The answer of [`contains`](Self::contains) for an item's positions, read in one
    /// pass that stops at the first that rules the item out; a reset position whose bit is
    /// 1 is looked up among the set positions (derived again: it is the rare case).
    fn holds(&self, positions: Positions<'_>) -> bool {
        infallible(holds(positions, self.set_hashes, |p| Ok(self.bits.get(p))))
    }

    /// m, the number of bits.
    pub fn num_bits(&self) -> u64 {
        self.bits.len()
    }

    crate::sizing::getters! {
        /// k₁, the hash functions that set bits.
        set_hashes: u32;

        /// k₀, the hash functions that reset bits.
        reset_hashes: u32;

        /// n, the number of items the filter was sized for.
        capacity: u64;

        /// The false-positive probability at capacity ([`params::generalized_fpp`]).
        target_fpp: f64;
    }

    /// The bound on the false-positive probability at any fill
    /// ([`params::generalized_fpp_bound`]).
    pub fn false_positive_bound(&self) -> f64 {
        params::generalized_fpp_bound(self.set_hashes, self.reset_hashes)
    }

    /// The number of bits set.
    pub fn count_ones(&self) -> u64 {
        self.bits.count_ones()
    }
}

/// The query: the item's k₁ set bits all 1 and its k₀ reset bits all 0 (a reset bit that
/// is also one of its set bits must be 1). Over a way to read bit p, so that the loaded
/// filter (its array) and a view (the file's chunks) answer by this one function.
#[inline(always)]
fn holds<E>(
    positions: Positions<'_>,
    set_hashes: u32,
    mut bit: impl FnMut(u64) -> Result<bool, E>,
) -> Result<bool, E> {
    let k1 = set_hashes as usize;
    // One `all` over every position (the first k₁ set, the rest reset): `Positions`' own
    // `all` matches the index scheme once per item, where `take(k₁).all` went through
    // `Positions::next` out of line per position.
    let mut i = 0;
    try_all(positions.clone(), |p| {
        let passes = if i < k1 {
            bit(p)?
        } else {
            !bit(p)? || positions.clone().take(k1).any(|q| q == p)
        };
        i += 1;
        Ok(passes)
    })
}

/// The insertions that explain `ones` of m bits set, inverting
/// [`params::generalized_one_probability`]; infinite once the fill reaches its limit
/// `s/(s + r)`, where it no longer tells ([`Filter::estimated_len`]; a view's summary gives
/// the same).
fn estimated_len(ones: u64, num_bits: u64, set_hashes: u32, reset_hashes: u32) -> f64 {
    let target = ones as f64 / num_bits as f64;
    let one = |n: u64| params::generalized_one_probability(num_bits, set_hashes, reset_hashes, n);
    let limit = one(u64::MAX);
    if target >= limit {
        return f64::INFINITY;
    }
    // p(n) = L (1 − uⁿ) with L the limit: n = ln(1 − p/L) / ln u, u = 1 − p(1)/L.
    let u = 1.0 - one(1) / limit;
    (1.0 - target / limit).ln() / u.ln()
}

/// `x^k₁ (1 − x)^k₀` for the fraction x of ones ([`Filter::expected_fpp`]).
fn expected_fpp(ones: u64, num_bits: u64, set_hashes: u32, reset_hashes: u32) -> f64 {
    let x = ones as f64 / num_bits as f64;
    x.powi(set_hashes as i32) * (1.0 - x).powi(reset_hashes as i32)
}

/// [`Filter::properties`] of a filter with these stored parameters and `ones` bits set.
fn properties(stored: &Stored, ones: u64) -> Vec<(&'static str, String)> {
    let (m, k1, k0) = (stored.num_bits, stored.set_hashes, stored.reset_hashes);
    vec![
        ("bits (m)", m.to_string()),
        ("set hash functions (k1)", k1.to_string()),
        ("reset hash functions (k0)", k0.to_string()),
        ("target fpp", format!("{}", stored.target_fpp)),
        (
            "fpp bound at any fill",
            format!("{:.6}", params::generalized_fpp_bound(k1, k0)),
        ),
        ("fill ratio", format!("{:.6}", ones as f64 / m as f64)),
    ]
}

impl Filter for GeneralizedBloomFilter {
    crate::filter::filter_basics!(
        Generalized: hashing, insert, contains, capacity, target_fpp,
        state(
            bits,
            inserted,
            "The insertions of items that were reported absent (a set; forgotten items that \
             come again count again)."
        )
    );

    /// The insertions that explain the fraction of ones, inverting
    /// [`params::generalized_one_probability`]; infinite once the fill reaches its limit
    /// `s/(s + r)`, where it no longer tells.
    fn estimated_len(&self) -> f64 {
        let (m, k1, k0) = (self.num_bits(), self.set_hashes, self.reset_hashes);
        estimated_len(self.count_ones(), m, k1, k0)
    }

    fn properties(&self) -> Vec<(&'static str, String)> {
        properties(&Stored::of(self), self.count_ones())
    }

    /// `x^k₁ (1 − x)^k₀` for the fraction x of ones now.
    fn expected_fpp(&self) -> f64 {
        let (m, k1, k0) = (self.num_bits(), self.set_hashes, self.reset_hashes);
        expected_fpp(self.count_ones(), m, k1, k0)
    }

    fn fpp_at(&self, n: u64) -> f64 {
        params::generalized_fpp(self.num_bits(), self.set_hashes, self.reset_hashes, n)
    }
}

impl crate::lookahead::ByDigest for GeneralizedBloomFilter {
    fn digest_hashing(&self) -> Option<Hashing> {
        crate::lookahead::unless_seeded(self.hashing)
    }
    fn batch_bits(&self) -> u64 {
        self.bits.len()
    }
    crate::lookahead::one_array_prefetch_query!(bits, set_hashes + reset_hashes);
    #[inline(always)]
    fn contains_digest(&self, digest: u128) -> bool {
        let k = self.set_hashes + self.reset_hashes;
        self.holds(
            self.hashing
                .positions_with_digest(&[], digest, k, self.bits.len()),
        )
    }
    #[inline(always)]
    fn insert_digest(&mut self, digest: u128) -> bool {
        let k = self.set_hashes + self.reset_hashes;
        self.add(
            self.hashing
                .positions_with_digest(&[], digest, k, self.bits.len()),
        )
    }
    /// Each insert writes k₁ bits set and k₀ reset.
    fn advise_batch_insert(&mut self, items: u64) {
        self.bits.advise_bulk_write(
            items.saturating_mul(u64::from(self.set_hashes + self.reset_hashes)),
        );
    }
}

/// The window by positions for k₁ + k₀ = 5, 8 and 11 (the counts of ε = 5%, 1% and 0.1%:
/// k₁ = 4, 7, 10 and k₀ = 1).
impl crate::lookahead::ByPositions for GeneralizedBloomFilter {
    const WINDOW_KS: u32 = 1 << 5 | 1 << 8 | 1 << 11;
    type Extra = ();
    crate::lookahead::one_array_positions!(bits, set_hashes + reset_hashes);
    #[inline(always)]
    fn contains_at(&self, ps: &[u64], _: ()) -> bool {
        holds_at(ps, self.set_hashes as usize, |p| self.bits.get(p))
    }
    #[inline(always)]
    fn insert_at(&mut self, ps: &[u64], _: ()) -> bool {
        self.add_at(ps)
    }
}

/// [`holds`] over positions already computed: the first `k1` bits all 1, the others 0
/// unless among the first `k1`.
#[inline(always)]
fn holds_at(ps: &[u64], k1: usize, bit: impl Fn(u64) -> bool) -> bool {
    let (ones, zeros) = ps.split_at(k1);
    ones.iter().all(|&p| bit(p)) && zeros.iter().all(|&p| !bit(p) || ones.contains(&p))
}

crate::registry::registered!(
    GeneralizedBloomFilter,
    {
        name: "generalized",
        summary: "Generalized Bloom filter (Laufer et al. 2005): k1 hashes set bits, k0 reset \
                  them; false positives bounded at any fill, false negatives by design.",
        grow: false,
        forgets: true,
        index_scheme: true,
    }
);

crate::filter::collection_impls!(
    /// Collects items into a filter sized for their number at ε = 1% (k₀ = 1).
    ///
    /// ```
    /// use bloomkit::GeneralizedBloomFilter;
    /// let filter: GeneralizedBloomFilter = ["a"].into_iter().collect();
    /// assert!(filter.contains("a"));
    /// ```
    GeneralizedBloomFilter
);

/// Builds a [`GeneralizedBloomFilter`].
///
/// ```
/// use bloomkit::GeneralizedBloomFilter;
/// let f = GeneralizedBloomFilter::builder().capacity(100).reset_hashes(3).build()?;
/// assert_eq!(f.reset_hashes(), 3);
/// assert!(GeneralizedBloomFilter::builder().capacity(100).num_hashes(60).reset_hashes(5).build().is_err());
/// # Ok::<(), bloomkit::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
#[must_use = "a builder does nothing until .build() is called"]
pub struct GeneralizedBloomFilterBuilder {
    capacity: Option<u64>,
    fpp: Option<f64>,
    num_bits: Option<u64>,
    set_hashes: Option<u32>,
    reset_hashes: Option<u32>,
    hashing: HashingChoice,
}

impl GeneralizedBloomFilterBuilder {
    crate::hash::hashing_setters!(index_scheme);

    crate::sizing::capacity_and_fpp_setters!();

    crate::sizing::num_cells_setter!(num_bits, "bits");

    crate::sizing::setters! {
        /// m, the number of bits, instead of deriving it from capacity and ε.
        num_bits: u64;

        /// k₁, the hash functions that set bits (default: the classic optimum).
        set_hashes: u32;
    }

    /// The same as [`set_hashes`](Self::set_hashes): k of the other array-shaped kinds.
    pub fn num_hashes(self, k1: u32) -> Self {
        self.set_hashes(k1)
    }

    crate::sizing::setters! {
        /// k₀, the hash functions that reset bits (default 1; 0 makes a classic filter).
        reset_hashes: u32;
    }

    /// Validates the parameters and allocates the filter. k₁ ≥ 1 and k₀ + k₁ ≤ 64.
    pub fn build(self) -> Result<GeneralizedBloomFilter, Error> {
        let reset = self.reset_hashes.unwrap_or(DEFAULT_RESET_HASHES);
        // k₁ shares the 64 hash functions with k₀: a k₁ derived from a tiny ε stops at
        // 64 − k₀ and m grows instead (a k₁ given is checked below).
        let max_set = MAX_NUM_HASHES.saturating_sub(reset);
        let d = sizing::dimensions_up_to(
            self.capacity,
            self.fpp,
            self.num_bits,
            self.set_hashes,
            1,
            max_set,
        )?;
        check_hashes(d.num_hashes, reset).map_err(|reason| Error::InvalidParameter {
            parameter: "reset hashes",
            reason,
        })?;
        let target = params::generalized_fpp(d.num_cells, d.num_hashes, reset, d.capacity);
        Ok(GeneralizedBloomFilter {
            bits: BitVec::zeros(d.num_cells)?,
            set_hashes: d.num_hashes,
            reset_hashes: reset,
            hashing: self.hashing.resolve()?,
            capacity: d.capacity,
            target_fpp: target.clamp(f64::MIN_POSITIVE, 1.0 - f64::EPSILON),
            inserted: 0,
        })
    }
}

/// k₁ ≥ 1 and k₀ + k₁ ≤ [`MAX_NUM_HASHES`].
fn check_hashes(set: u32, reset: u32) -> Result<(), String> {
    if set == 0 || set.saturating_add(reset) > MAX_NUM_HASHES {
        return Err(format!(
            "k1 = {set} and k0 = {reset}: k1 must be at least 1 and k0 + k1 at most \
             {MAX_NUM_HASHES}"
        ));
    }
    Ok(())
}

crate::codec::stored! {
    /// The generalized filter's parameters on disk (44 bytes): k₁ (set) and k₀ (reset).
    /// Payload: the bits as `BitVec` words.
    struct Stored of f: GeneralizedBloomFilter {
        num_bits: u64 = f.num_bits() => check_num_bits,
        set_hashes: u32 = f.set_hashes,
        reset_hashes: u32 = f.reset_hashes,
        capacity: u64 = f.capacity => check_capacity,
        target_fpp: f64 = f.target_fpp => check_target_fpp,
        inserted: u64 = f.inserted,
    }
    persist Generalized, payload bits;
}

impl GeneralizedBloomFilter {
    fn decode(parts: &Parts<'_>) -> Result<Self, DecodeError> {
        let Shape { stored, hashing } = ViewShape::read(parts)?;
        let Stored {
            num_bits,
            set_hashes,
            reset_hashes,
            capacity,
            target_fpp,
            inserted,
        } = stored;
        let bits = BitVec::from_le_bytes(num_bits, parts.payload)?;
        Ok(GeneralizedBloomFilter {
            bits,
            set_hashes,
            reset_hashes,
            hashing,
            capacity,
            target_fpp,
            inserted,
        })
    }
}

/// A generalized filter as loading and a read-only view
/// ([`format::view`](crate::format::view)) read it: the stored parameters, checked, and the
/// query over the bits the view fetches from the file. Loading refuses a bit set past m in
/// the last word; the view checks that word when it opens ([`KindView::check_opened`]).
type ViewShape = Shape<Stored>;

impl KindView for ViewShape {
    fn read(parts: &Parts<'_>) -> Result<Self, DecodeError> {
        parts.expect_kind(Kind::Generalized)?;
        let stored = Stored::read(parts.params)?;
        check_hashes(stored.set_hashes, stored.reset_hashes)
            .map_err(|reason| invalid("hashes", reason))?;
        // The payload's length against m, before anything is allocated.
        BitVec::check_encoded_len(stored.num_bits, parts.payload.len())?;
        Ok(Shape::of(stored, parts))
    }

    fn facts(&self) -> ViewFacts {
        let s = &self.stored;
        view_facts!(s, s.num_bits, s.set_hashes + s.reset_hashes)
    }

    fn contains(&self, bytes: &[u8], view: &FilterView) -> Result<bool, Error> {
        let s = &self.stored;
        let k = s.set_hashes + s.reset_hashes;
        let positions = self.hashing.positions(bytes, k, s.num_bits);
        holds(positions, s.set_hashes, |p| view.bit(p))
    }

    /// The bits set, counted over the payload; the rest as the loaded filter works it out.
    fn summary(&self, view: &FilterView) -> Result<Summary, Error> {
        let s = &self.stored;
        let ones = view.count_ones()?;
        let (m, k1, k0) = (s.num_bits, s.set_hashes, s.reset_hashes);
        Ok(view.summary_of(
            None,
            properties(s, ones),
            estimated_len(ones, m, k1, k0),
            expected_fpp(ones, m, k1, k0),
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

    /// Both insert paths — the set positions kept inline (k₁ ≤ 16) and derived twice
    /// (k₁ > 16) — leave the item's set bits 1 and its other reset bits 0, in a filter
    /// small enough that every item's positions collide with earlier items'.
    #[test]
    fn an_item_is_present_right_after_its_insert_at_any_k() {
        for (set, reset) in [(7, 1), (16, 3), (17, 3), (30, 5)] {
            let mut f = GeneralizedBloomFilter::builder()
                .num_bits(256)
                .set_hashes(set)
                .reset_hashes(reset)
                .build()
                .unwrap();
            for i in 0..2_000u64 {
                f.insert(&i);
                assert!(f.contains(&i), "k1 = {set}, k0 = {reset}, item {i}");
            }
        }
    }

    #[test]
    fn resets_make_earlier_items_disappear() {
        let mut f = GeneralizedBloomFilter::builder()
            .num_bits(64)
            .set_hashes(2)
            .reset_hashes(2)
            .build()
            .unwrap();
        f.insert(&0u32);
        assert!(f.contains(&0u32));
        // Some later item resets one of 0's ones (or sets one of its zeros).
        let lost = (1u32..1_000).any(|x| {
            f.insert(&x);
            !f.contains(&0u32)
        });
        assert!(lost);
    }

    #[test]
    fn without_resets_it_is_the_classic_filter() {
        let mut g = GeneralizedBloomFilter::builder()
            .capacity(500)
            .reset_hashes(0)
            .build()
            .unwrap();
        let mut c = crate::BloomFilter::with_capacity(500, 0.01).unwrap();
        for x in 0..2_000u32 {
            assert_eq!(g.insert(&x), c.insert(&x));
        }
        for x in 0..5_000u32 {
            assert_eq!(g.contains(&x), c.contains(&x));
        }
    }

    #[test]
    fn bad_hash_counts_are_errors() {
        let b = || GeneralizedBloomFilter::builder().capacity(10);
        assert!(matches!(
            b().set_hashes(40).reset_hashes(25).build(),
            Err(Error::InvalidParameter { .. })
        ));
        assert_eq!(b().set_hashes(0).build().unwrap_err(), Error::ZeroHashes);
        assert!(b().set_hashes(32).reset_hashes(32).build().is_ok());
    }

    /// Below ε ≈ 2⁻⁶³ the classic optimum k₁ would leave no room for k₀ within 64: k₁
    /// stops at 64 − k₀ and m grows until the filter's own rate at capacity meets ε.
    #[test]
    fn a_tiny_fpp_is_met_with_k1_and_k0_within_64() {
        for (fpp, reset) in [(1e-30, 1), (1e-30, 4), (1e-20, 1), (1e-100, 2)] {
            let g = GeneralizedBloomFilter::builder()
                .capacity(1_000)
                .fpp(fpp)
                .reset_hashes(reset)
                .build()
                .unwrap();
            assert_eq!(
                g.set_hashes() + g.reset_hashes(),
                MAX_NUM_HASHES,
                "ε = {fpp}"
            );
            let rate = params::generalized_fpp(g.num_bits(), g.set_hashes(), reset, 1_000);
            assert!(rate <= fpp, "ε = {fpp}, k0 = {reset}: rate {rate}");
        }
    }
}
