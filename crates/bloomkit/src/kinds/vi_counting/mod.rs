//! The variable-increment counting Bloom filter (Rottenstreich, Kanizo & Keslassy, "The
//! Variable-Increment Counting Bloom Filter", IEEE/ACM Transactions on Networking 22(4),
//! 2014; first at IEEE INFOCOM 2012) — a counting Bloom filter that adds hashed amounts
//! instead of 1, so that the exact counter values, not only their positiveness, rule items
//! out.
//!
//! # Structure
//!
//! m counters of w bits and k hash functions. For an item x, hash function i gives a
//! position `h_i(x)` in `[0, m)` (from [`Hashing::positions`], as in every kind) and an
//! **increment** `v_i(x)` in `D_L = {L, L+1, …, 2L−1}` (L = 4 by default, so 4 to 7).
//! Inserting x adds `v_i(x)` to counter `h_i(x)`; removing subtracts it. A counter thus
//! holds a sum of increments, and every increment is at least L. A query for x looks at
//! each counter value c with its own increment v = `v_i(x)`:
//!
//! * `c = 0` → absent (nothing hashed here);
//! * `c < v` → absent (x would have added v);
//! * `c > v` and `c − v < L` → absent (the rest would be a sum of increments, each ≥ L);
//! * otherwise (`c = v`, or `c − v ≥ L`) → maybe.
//!
//! The item is reported present when every one of its k counters says maybe. A classic
//! counting filter would accept any positive counter; here a counter holding a single
//! other item's increment rejects the query with probability `1 − 1/L`, and one holding
//! two rejects it with probability `(L² − 1)/(6L²)`. That is where the lower
//! false-positive rate comes from.
//!
//! # The increments
//!
//! The increments must be uniform over `D_L`, independent of each other and independent of
//! the positions (the analysis assumes all three). They come from a 128-bit digest's two
//! 64-bit halves g and δ, XOR-folded into a state `s = g ⊕ δ`, through SplitMix64's
//! output function `mix64` (Steele, Lea & Flood, "Fast Splittable Pseudorandom Number
//! Generators", OOPSLA 2014): a bijection of 64-bit words whose every output bit depends on
//! every input bit. (Reducing the double-hashing values themselves to L would not do:
//! `a + i·b` modulo a small range is an arithmetic progression, so the increments of one
//! item would be correlated.) Which digest, and how many mixes, is the filter's
//! [`IncrementHashing`], stored in its file:
//!
//! * [`IncrementHashing::PackedDigest`], new filters: the digest the positions come from,
//!   **mixed once** for all k increments. With `T` a fixed constant of the file format
//!   ([`PACKED_INCREMENT_TWEAK`]) and L = 2^b, the word `z = mix64(s ⊕ T)` gives
//!
//!   ```text
//!       v_i = L + ((z >> (i·b)) & (L − 1)),   i = 0, 1, …, k − 1   (k·b ≤ 64)
//!   ```
//!
//!   successive b-bit fields from the low end (L = 4: two bits each, k up to 32 from one
//!   word). *Uniform and independent of each other:* for a uniform digest, s is uniform,
//!   and so is z (`mix64` and `⊕ T` are bijections); the bits of a uniform word are
//!   independent fair coins, so disjoint fields are independent and each is uniform over
//!   `[0, L)` — exactly, not approximately. *Independent of the positions:* the positions
//!   are g and δ combined linearly (enhanced double hashing's `g + iδ + (i³ − i)/6`, or
//!   the Java schemes' 32-bit halves) and then cut to their top bits by a multiply-shift,
//!   while z is a non-linear avalanche of g ⊕ δ: knowing where an item lands (a few dozen
//!   bits of linear combinations of g and δ) leaves z's 64 bits as good as uniform, the
//!   same argument as the position digest's below, and the same tests (chi-square of
//!   position against increment; the measured false-positive rate against the formula,
//!   which the conformance suite holds every kind to). T keeps z off the SplitMix64
//!   sequence `mix64(s + (i+1)γ)` of the position digest, so that the two sources give
//!   unrelated increments for an item.
//!
//!   When the fields run out (k·b > 64) another word is mixed: word j is
//!   `mix64((s ⊕ T) + j·γ)`, ⌊64/b⌋ fields each. For an L that is not a power of two, each
//!   word gives base-L digits from the top by multiply-shift (`⌊z·L / 2⁶⁴⌋`, then
//!   `z ← z·L mod 2⁶⁴`), d of them for the largest d with L^d ≤ 2³²: d digits are the
//!   base-L expansion of `⌊z·L^d / 2⁶⁴⌋`, which each of its L^d values takes for
//!   ⌊2⁶⁴/L^d⌋ or ⌈2⁶⁴/L^d⌉ words z, so any d-tuple's probability is within a factor
//!   `1 ± 2⁻³²` of uniform. One hash call and one mix per operation where the position
//!   digest mixes k times.
//! * [`IncrementHashing::PositionDigest`], filters made before the packed digest existed:
//!   the same state s seeds a SplitMix64 sequence, and output i reduced to `[0, L)` by
//!   [`reduce`] gives `v_i = L + reduce(mix64(s + (i+1)γ), L)`: one mix per increment.
//!   Such files (`increment_hashing = 1`) load with it and answer as they did.
//! * [`IncrementHashing::SecondDigest`], every file saved before the choice existed: a
//!   second digest of the item under the seed `seed ^ INCREMENT_SEED_TWEAK` (a fixed
//!   constant of the file format) seeds that sequence: two hash calls per operation. Such
//!   files load with it and answer as they did.
//!
//! # False-positive rate and sizing
//!
//! A counter gets j ~ Binomial(nk, 1/m) increments. A query passes it never for j = 0,
//! with probability 1/L for j = 1, `1 − (L² − 1)/(6L²)` for j = 2 and always for j ≥ 3;
//! with the k counters treated as independent, the paper's approximation is
//!
//! ```text
//!     FPP = ( 1 − p₀ − p₁·(1 − 1/L) − p₂·(L² − 1)/(6L²) )^k,   p_j = P(j increments)
//! ```
//!
//! ([`params::vi_fpp`], with the derivation). There is no closed-form optimum, so
//! [`VariableIncrementBloomFilter::with_capacity`] **searches**: the smallest m for which
//! the best k reaches ε ([`params::vi_optimal_num_counters`],
//! [`params::vi_optimal_num_hashes`]). The best k is a little below the classic
//! `(m/n) ln 2`. The tests check the measured rate against this formula.
//!
//! # Counter width and saturation
//!
//! Counters are 8 bits by default (the library's default for L = 4): a sum of increments of
//! at most 2L − 1 = 7 saturates 255 only after 37 increments land on one counter, while
//! the mean is about 1 at the design load — far rarer than 4-bit overflow in a classic
//! counting filter. This is also the setting of the equal-memory comparison in the tests:
//! a VI filter of 8-bit counters against a classic counting filter of 4-bit counters with
//! twice as many. Any width from 2 to 16 bits can be chosen, as long as one increment
//! stays below the maximum (`2L − 1 < 2^w − 1`).
//!
//! Saturation follows [`CountingBloomFilter`](crate::CountingBloomFilter): a counter that
//! reaches its maximum `2^w − 1` stays there, is never decremented again (its true value
//! is unknown) and always answers "maybe", so a remove can never cause a false negative.
//!
//! # Removing
//!
//! [`VariableIncrementBloomFilter::remove`] checks before it changes anything: for every
//! counter of the item that is not saturated, the sum s of the item's increments there
//! (more than one when a position repeats) must fit, `c ≥ s`, and what remains must be 0 or
//! at least L. Otherwise the item is certainly absent: [`Error::NotPresent`], filter
//! unchanged. (This is the membership test applied to the item's total at each counter; it
//! rejects everything [`contains`](VariableIncrementBloomFilter::contains) rejects and, for
//! repeated positions, a little more.)
//!
//! ```
//! use bloomkit::{Error, Persist, VariableIncrementBloomFilter};
//!
//! let mut filter = VariableIncrementBloomFilter::with_capacity(10_000, 0.01)?;
//! assert_eq!((filter.increment_base(), filter.counter_width()), (4, 8));
//! filter.insert("dist");
//! filter.insert("bloom");
//! assert!(filter.contains("dist"));
//! assert_eq!(filter.remove("dist"), Ok(true));
//! assert!(filter.contains("bloom"));
//! assert_eq!(filter.remove("cuckoo"), Err(Error::NotPresent));
//!
//! let copy = VariableIncrementBloomFilter::from_bytes(&filter.to_bytes())?;
//! assert_eq!(copy, filter);
//! # Ok::<(), bloomkit::Error>(())
//! ```

mod options;
pub mod theory;

use crate::any::Summary;
use crate::bits::{ByShifts, CounterSpan, Locate, PackedCounters};
use crate::codec::{check_num_counters, invalid, Parts};
use crate::error::{DecodeError, Error};
use crate::filter::{Filter, Kind};
use crate::format::view::{try_all, FilterView, KindView, ViewFacts};
use crate::hash::HashingChoice;
use crate::hash::{mix64, mix64_unfinished, GOLDEN_GAMMA};
use crate::hash::{reduce, EnhancedDouble, Hashing, IndexScheme, Item, Positions};
use crate::params::{self, MAX_NUM_BITS, MAX_NUM_HASHES};
use crate::registry::ParametersBlock;

/// L, the smallest increment, unless another is chosen: increments are 4 to 7.
pub const DEFAULT_INCREMENT_BASE: u32 = 4;

/// The counter width unless another is chosen: 8 bits (see the module docs).
pub const DEFAULT_COUNTER_WIDTH: u32 = 8;

/// XORed into the filter's seed for the digest the increments come from, so that they are
/// independent of the positions. Part of the file format: never change it.
pub const INCREMENT_SEED_TWEAK: u64 = 0x5649_2d43_4246_2d4c; // "VI-CBF-L"

/// XORed into the digest's state g ⊕ δ before the one mix of
/// [`IncrementHashing::PackedDigest`], so that its word is not an output of the SplitMix64
/// sequence [`IncrementHashing::PositionDigest`] draws from the same state (the two
/// sources give unrelated increments). Part of the file format: never change it.
pub const PACKED_INCREMENT_TWEAK: u64 = 0x5649_2d50_4143_4b44; // "VI-PACKD"

/// Which digest of an item its increments come from, and how (see the module docs). Part
/// of the file format: a file records [`PositionDigest`](Self::PositionDigest) or
/// [`PackedDigest`](Self::PackedDigest) in a parameter that files of
/// [`SecondDigest`](Self::SecondDigest) do not have.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum IncrementHashing {
    /// A second digest of the item, under the seed `seed ^` [`INCREMENT_SEED_TWEAK`]: two
    /// hash calls per operation. What every filter saved before the choice existed has
    /// (44 bytes of parameters); chosen for a new filter only to match such files.
    SecondDigest,
    /// The digest the positions come from, one SplitMix64 output per increment: one hash
    /// call per operation under the digest index schemes (the seeded scheme hashes once
    /// per position and once more for the increments). Stored as the parameter
    /// `increment_hashing = 1`; new filters chose it before
    /// [`PackedDigest`](Self::PackedDigest) existed, and its files keep it.
    PositionDigest,
    /// The digest the positions come from, mixed once for all k increments: for L = 2^b
    /// and k·b ≤ 64 the increments are successive b-bit fields of one mixed word. New
    /// filters use it; stored as the parameter `increment_hashing = 2`.
    #[default]
    PackedDigest,
}

impl IncrementHashing {
    /// The value stored after the other parameters for the position digest (none for
    /// `SecondDigest`).
    const STORED_POSITION_DIGEST: u32 = 1;
    /// The value stored after the other parameters for the packed digest.
    const STORED_PACKED_DIGEST: u32 = 2;

    /// A short lower-case name, for `bloomkit info` and the layout check.
    pub fn name(self) -> &'static str {
        match self {
            Self::SecondDigest => "second-digest",
            Self::PositionDigest => "position-digest",
            Self::PackedDigest => "packed-digest",
        }
    }

    /// The value stored after the other parameters, `None` for `SecondDigest` (nothing).
    fn stored(self) -> Option<u32> {
        match self {
            Self::SecondDigest => None,
            Self::PositionDigest => Some(Self::STORED_POSITION_DIGEST),
            Self::PackedDigest => Some(Self::STORED_PACKED_DIGEST),
        }
    }

    /// The source a stored value names.
    fn from_stored(value: u32) -> Option<Self> {
        match value {
            Self::STORED_POSITION_DIGEST => Some(Self::PositionDigest),
            Self::STORED_PACKED_DIGEST => Some(Self::PackedDigest),
            _ => None,
        }
    }
}

/// The k increments of one item, in `D_L`; see the module docs.
#[derive(Clone, Debug)]
struct Increments {
    state: u64,
    base: u32,
    left: u32,
}

/// `reduce(mix64(state), base)`, the offset of an increment in `D_L` (L = `base`), where
/// `shift` is 64 − log₂ L for an L that is a power of two from 2 up, and 0 for any other L.
///
/// For L = 2^b the multiply-shift `reduce(z, L)` is `z >> (64 − b)`, the top b bits of z,
/// and for b ≤ 31 (L is at most 2¹⁵: one increment fits a 16-bit counter) those are the
/// top bits of [`mix64_unfinished`]: the same values with a multiply-high, a shift and an
/// xor fewer an increment — the paper's values, which the file format fixes, drawn with
/// less work.
#[inline(always)]
fn offset(state: u64, base: u32, shift: u32) -> u32 {
    let z = mix64_unfinished(state);
    if shift != 0 {
        (z >> shift) as u32
    } else {
        reduce(z ^ (z >> 31), base as u64) as u32
    }
}

/// The `shift` of [`offset`] for L = `base`.
#[inline(always)]
fn offset_shift(base: u32) -> u32 {
    if base >= 2 && base.is_power_of_two() {
        64 - base.trailing_zeros()
    } else {
        0
    }
}

impl Increments {
    /// The increments whose SplitMix64 sequence this digest seeds.
    #[inline(always)]
    fn from_digest(digest: u128, base: u32, num_hashes: u32) -> Self {
        Self::from_seed(Self::seed(digest), base, num_hashes)
    }

    /// The SplitMix64 state a digest seeds: g ⊕ δ, its two halves (the batch window keeps
    /// it with the item's positions).
    #[inline(always)]
    fn seed(digest: u128) -> u64 {
        (digest as u64) ^ ((digest >> 64) as u64)
    }

    /// The increments of the SplitMix64 sequence from this state ([`seed`](Self::seed)).
    #[inline(always)]
    fn from_seed(state: u64, base: u32, num_hashes: u32) -> Self {
        Increments {
            state,
            base,
            left: num_hashes,
        }
    }

    /// The increments of an item's bytes under [`IncrementHashing::SecondDigest`].
    #[inline]
    fn second_digest(hashing: &Hashing, bytes: &[u8], base: u32, num_hashes: u32) -> Self {
        let digest = hashing
            .function
            .digest(bytes, hashing.seed ^ INCREMENT_SEED_TWEAK);
        Self::from_digest(digest, base, num_hashes)
    }
}

impl Iterator for Increments {
    type Item = u32;

    #[inline(always)]
    fn next(&mut self) -> Option<u32> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        self.state = self.state.wrapping_add(GOLDEN_GAMMA);
        let offset = reduce(mix64(self.state), self.base as u64) as u32;
        Some(self.base + offset)
    }
}

/// [`Increments`] for an L that is a power of two from 2 up: the same values, each by
/// [`offset`]'s shift (`shift` = [`offset_shift`]`(base)`, not 0). A type of its own, chosen
/// once per item ([`holds_with_seed`](VariableIncrementBloomFilter::holds_with_seed)), rather
/// than a `shift` field of [`Increments`] tested at every draw: that fold was measured at
/// 385.9 instructions a single insert and 269.6 a single query, against 365.8 and 245.9
/// (`kind_cost vi-counting 100000 100000` under callgrind, 2026-11-27).
#[derive(Clone, Debug)]
struct PowerIncrements {
    state: u64,
    base: u32,
    shift: u32,
    left: u32,
}

impl Iterator for PowerIncrements {
    type Item = u32;

    #[inline(always)]
    fn next(&mut self) -> Option<u32> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        self.state = self.state.wrapping_add(GOLDEN_GAMMA);
        Some(self.base + offset(self.state, self.base, self.shift))
    }
}

/// The first mixed word of [`IncrementHashing::PackedDigest`] for the digest state
/// `seed` ([`Increments::seed`], g ⊕ δ): `mix64(seed ⊕` [`PACKED_INCREMENT_TWEAK`]`)`.
#[inline(always)]
fn packed_word(seed: u64) -> u64 {
    mix64(seed ^ PACKED_INCREMENT_TWEAK)
}

/// Whether one packed word holds all `k` increments for L = `base`: L = 2^b with k·b ≤ 64
/// (L = 4 up to k = 32).
#[inline(always)]
fn fields_fit(base: u32, k: u32) -> bool {
    base.is_power_of_two() && k * base.trailing_zeros() <= 64
}

/// How many increments one mixed word gives under [`IncrementHashing::PackedDigest`]:
/// ⌊64 / b⌋ b-bit fields for L = 2^b (b ≥ 1; any number for L = 1, whose offsets are all
/// 0), else the largest d with L^d ≤ 2³² (base-L digits by multiply-shift; at least 2, as
/// L ≤ 2¹⁵ for any counter width).
fn digits_per_word(base: u32) -> u32 {
    if base.is_power_of_two() {
        64 / base.trailing_zeros().max(1)
    } else {
        let (mut d, mut power) = (0, 1u64);
        while power * base as u64 <= 1 << 32 {
            power *= base as u64;
            d += 1;
        }
        d
    }
}

/// The increments of one packed word, for L = 2^b when the k of them fit it
/// ([`fields_fit`]): `v_i = L + ((z >> i·b) & (L − 1))`, the word shifted along as they are
/// drawn. Endless: the positions it is zipped with count k.
#[derive(Clone, Copy, Debug)]
struct Fields {
    word: u64,
    base: u32,
}

impl Fields {
    #[inline(always)]
    fn new(word: u64, base: u32) -> Self {
        debug_assert!(base.is_power_of_two());
        Fields { word, base }
    }
}

impl Iterator for Fields {
    type Item = u32;

    #[inline(always)]
    fn next(&mut self) -> Option<u32> {
        let v = self.base + (self.word as u32 & (self.base - 1));
        self.word >>= self.base.trailing_zeros();
        Some(v)
    }
}

/// The k increments of [`IncrementHashing::PackedDigest`] for any L and k (see the module
/// docs): [`digits_per_word`] of them from each mixed word, word j being
/// `mix64((seed ⊕ T) + j·γ)`; from a word, b-bit fields from the low end for L = 2^b
/// (as [`Fields`]), else base-L digits from the top by multiply-shift
/// (`⌊z·L / 2⁶⁴⌋`, then z ← z·L mod 2⁶⁴).
#[derive(Clone, Debug)]
struct PackedIncrements {
    word: u64,
    /// The state the next word is mixed from.
    next: u64,
    base: u32,
    per_word: u32,
    in_word: u32,
    left: u32,
}

impl PackedIncrements {
    /// The increments of the item whose digest state is `seed` ([`Increments::seed`]).
    fn from_seed(seed: u64, base: u32, num_hashes: u32) -> Self {
        let state = seed ^ PACKED_INCREMENT_TWEAK;
        let per_word = digits_per_word(base);
        PackedIncrements {
            word: mix64(state),
            next: state.wrapping_add(GOLDEN_GAMMA),
            base,
            per_word,
            in_word: per_word,
            left: num_hashes,
        }
    }
}

impl Iterator for PackedIncrements {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        if self.in_word == 0 {
            self.word = mix64(self.next);
            self.next = self.next.wrapping_add(GOLDEN_GAMMA);
            self.in_word = self.per_word;
        }
        self.in_word -= 1;
        let offset = if self.base.is_power_of_two() {
            let offset = self.word as u32 & (self.base - 1);
            self.word >>= self.base.trailing_zeros();
            offset
        } else {
            let offset = reduce(self.word, self.base as u64) as u32;
            self.word = self.word.wrapping_mul(self.base as u64);
            offset
        };
        Some(self.base + offset)
    }
}

/// The increments of an item as the general paths draw them (views, `remove`, `slots`,
/// the k without an array insert): the source's iterator.
#[derive(Clone, Debug)]
enum Draws {
    Sequence(Increments),
    Packed(PackedIncrements),
}

impl Iterator for Draws {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        match self {
            Draws::Sequence(increments) => increments.next(),
            Draws::Packed(increments) => increments.next(),
        }
    }
}

/// A variable-increment counting Bloom filter: a counting filter whose counters add hashed
/// increments from `{L, …, 2L − 1}`, with fewer false positives for the same memory.
///
/// ```
/// use bloomkit::VariableIncrementBloomFilter;
///
/// let mut filter = VariableIncrementBloomFilter::with_capacity(1_000, 0.01)?;
/// filter.insert(&7u64);
/// filter.insert(&7u64);
/// filter.remove(&7u64)?;
/// assert!(filter.contains(&7u64));
/// // About 33 bits per item at ε = 1%, against 38.3 for 4-bit counting.
/// assert!(filter.num_counters() * 8 < 35 * 1_000);
/// # Ok::<(), bloomkit::Error>(())
/// ```
#[derive(Clone, PartialEq)]
pub struct VariableIncrementBloomFilter {
    counters: PackedCounters,
    num_hashes: u32,
    base: u32,
    hashing: Hashing,
    increment_hashing: IncrementHashing,
    capacity: u64,
    target_fpp: f64,
    len: u64,
}

/// Checks that increments `L..=2L−1` fit counters whose maximum is `max_counter`: one
/// increment must stay below the maximum.
fn validate_base(base: u32, max_counter: u32) -> Result<u32, Error> {
    if base >= 1 && 2 * (base as u64) - 1 < max_counter as u64 {
        Ok(base)
    } else {
        Err(Error::InvalidIncrementBase { base, max_counter })
    }
}

impl VariableIncrementBloomFilter {
    /// A filter for `capacity` items at false-positive probability `fpp`, with L = 4,
    /// 8-bit counters, the smallest m (and its best k) for which [`params::vi_fpp`] reaches
    /// `fpp`, and the default hashing (MurmurHash3, enhanced double hashing, seed 0).
    ///
    /// ```
    /// use bloomkit::VariableIncrementBloomFilter;
    /// let f = VariableIncrementBloomFilter::with_capacity(10_000, 0.01)?;
    /// assert!(bloomkit::params::vi_fpp(f.num_counters(), f.num_hashes(), 10_000, 4) <= 0.01);
    /// assert!(VariableIncrementBloomFilter::with_capacity(0, 0.01).is_err());
    /// assert!(VariableIncrementBloomFilter::with_capacity(10, 2.0).is_err());
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn with_capacity(capacity: impl crate::params::ItemCount, fpp: f64) -> Result<Self, Error> {
        Self::builder().capacity(capacity).fpp(fpp).build()
    }

    /// A builder for every other choice: explicit m and k, L, counter width, hashing.
    pub fn builder() -> VariableIncrementBloomFilterBuilder {
        VariableIncrementBloomFilterBuilder::default()
    }

    /// The k (position, increment) pairs of an item.
    #[inline]
    fn probe(&self, bytes: &[u8], out: &mut [(u64, u32); MAX_NUM_HASHES as usize]) {
        let (positions, increments) = self.pairs(bytes);
        for (slot, pair) in out.iter_mut().zip(positions.zip(increments)) {
            *slot = pair;
        }
    }

    /// An item's positions and increments, with one hash call under
    /// [`IncrementHashing::PositionDigest`] or [`IncrementHashing::PackedDigest`] and a
    /// digest scheme, two under [`IncrementHashing::SecondDigest`].
    #[inline(always)]
    fn pairs<'a>(&self, bytes: &'a [u8]) -> (Positions<'a>, Draws) {
        self.probes().pairs(bytes)
    }

    /// How this filter finds an item's counters and increments.
    #[inline(always)]
    fn probes(&self) -> Probes {
        Probes {
            hashing: self.hashing,
            increment_hashing: self.increment_hashing,
            base: self.base,
            num_hashes: self.num_hashes,
            num_counters: self.counters.len(),
            max: self.counters.max_value(),
        }
    }

    /// Whether every step of the item with this digest can be taken from the digest alone
    /// (the position or the packed digest for the increments and a digest index scheme).
    #[inline(always)]
    fn by_digest(&self) -> bool {
        self.increment_hashing != IncrementHashing::SecondDigest
            && crate::lookahead::unless_seeded(self.hashing).is_some()
    }

    /// Whether the increments are [`IncrementHashing::PackedDigest`]'s.
    #[inline(always)]
    fn packed(&self) -> bool {
        self.increment_hashing == IncrementHashing::PackedDigest
    }

    /// The query of the item with this digest ([`by_digest`](Self::by_digest) filters):
    /// the default scheme's positions as a plain loop ([`EnhancedDouble`]), unrolled for
    /// the k of ε = 5%, 1% and 0.1% (3, 5, 7), the other digest schemes' through
    /// [`Positions`].
    #[inline(always)]
    fn holds_digest(&self, digest: u128) -> bool {
        let (k, m) = (self.num_hashes, self.counters.len());
        if self.hashing.scheme == IndexScheme::EnhancedDoubleHashing {
            let holds = |k: u32| {
                self.holds_with_seed(
                    EnhancedDouble::new(digest, k, m),
                    Increments::seed(digest),
                    k,
                )
            };
            match k {
                5 => holds(5),
                3 => holds(3),
                7 => holds(7),
                k => holds(k),
            }
        } else {
            let positions = self.hashing.positions_with_digest(&[], digest, k, m);
            self.holds_located(positions, self.probes().draws(Increments::seed(digest)))
        }
    }

    /// [`holds_located`](Self::holds_located) with the `k` increments from this [`seed`](Increments::seed):
    /// [`PowerIncrements`] for an L that is a power of two from 2 up (the default 4), the
    /// test of L made once for the k of them, else [`Increments`].
    #[inline(always)]
    fn holds_with_seed(&self, positions: impl Iterator<Item = u64>, seed: u64, k: u32) -> bool {
        if self.packed() {
            return self.holds_packed(positions, seed, k);
        }
        let (base, shift) = (self.base, offset_shift(self.base));
        if base == DEFAULT_INCREMENT_BASE {
            // The same draws with L and the shift as constants once inlined.
            let increments = PowerIncrements {
                state: seed,
                base: DEFAULT_INCREMENT_BASE,
                shift: offset_shift(DEFAULT_INCREMENT_BASE),
                left: k,
            };
            self.holds_located(positions, increments)
        } else if shift != 0 {
            let increments = PowerIncrements {
                state: seed,
                base,
                shift,
                left: k,
            };
            self.holds_located(positions, increments)
        } else {
            self.holds_located(positions, Increments::from_seed(seed, base, k))
        }
    }

    /// [`holds_with_seed`](Self::holds_with_seed) under [`IncrementHashing::PackedDigest`]:
    /// the item's word mixed once and its fields taken in turn ([`Fields`]; L and its
    /// mask constants for the default L = 4) when they fit it, else [`PackedIncrements`].
    #[inline(always)]
    fn holds_packed(&self, positions: impl Iterator<Item = u64>, seed: u64, k: u32) -> bool {
        let base = self.base;
        if base == DEFAULT_INCREMENT_BASE && k <= 32 {
            let fields = Fields::new(packed_word(seed), DEFAULT_INCREMENT_BASE);
            self.holds_located(positions, fields)
        } else if fields_fit(base, k) {
            self.holds_located(positions, Fields::new(packed_word(seed), base))
        } else {
            self.holds_located(positions, PackedIncrements::from_seed(seed, base, k))
        }
    }

    /// Whether every (position, increment) pair passes the paper's test ([`passes`]), the
    /// one query of every path, the counters found by shifts when they are 8 bits wide (the
    /// default; [`ByShifts`](crate::bits::ByShifts)), else by the general arithmetic
    /// ([`ByDivision`](crate::bits::ByDivision)): the width
    /// tested once for the k counters.
    #[inline(always)]
    fn holds_located(
        &self,
        positions: impl Iterator<Item = u64>,
        increments: impl Iterator<Item = u32>,
    ) -> bool {
        let (base, max) = (self.base, self.counters.max_value());
        match self.bytes() {
            Some(at) => self.holds_by(at, positions, increments, move |c, v| {
                passes_below_saturation(c, v, base)
            }),
            None => self.holds_by(
                self.counters.by_division(),
                positions,
                increments,
                |c, v| passes(c, v, base, max),
            ),
        }
    }

    /// The fast way to the counters and their test, taken when the counters are 8 bits
    /// wide (the default) and L ≤ 85: each counter found by shifts
    /// ([`ByShifts`](crate::bits::ByShifts)) and tested by
    /// [`passes_below_saturation`], which holds for a maximum of at least 3L − 1 (255 ≥
    /// 3 · 85 − 1). `None` otherwise: the general arithmetic
    /// ([`ByDivision`](crate::bits::ByDivision)) and [`passes`]. Tested once per item.
    #[inline(always)]
    fn bytes(&self) -> Option<ByShifts<8>> {
        let at = self.counters.by_shifts::<8>()?;
        (3 * self.base - 1 <= at.max_value()).then_some(at)
    }

    /// [`holds_located`](Self::holds_located) with the counters found by `at`.
    #[inline(always)]
    fn holds_by(
        &self,
        at: impl Locate,
        positions: impl Iterator<Item = u64>,
        increments: impl Iterator<Item = u32>,
        passes: impl Fn(u32, u32) -> bool,
    ) -> bool {
        // A `for` loop, not `all`: `all` on the zip left its `try_fold` out of line (330
        // instructions a query against 246).
        for (p, v) in positions.zip(increments) {
            if !passes(self.counters.get_by(at, p), v) {
                return false;
            }
        }
        true
    }

    /// The insert of the item with this digest ([`by_digest`](Self::by_digest) filters), as
    /// [`holds_digest`](Self::holds_digest) reads it: at k = 3, 5 and 7 the positions and
    /// increments once, into arrays ([`add_k`](Self::add_k)).
    #[inline(always)]
    fn add_digest(&mut self, digest: u128) -> bool {
        match self.num_hashes {
            5 => return self.add_digest_k::<5>(digest),
            3 => return self.add_digest_k::<3>(digest),
            7 => return self.add_digest_k::<7>(digest),
            _ => {}
        }
        let (k, m) = (self.num_hashes, self.counters.len());
        let increments = self.probes().draws(Increments::seed(digest));
        if self.hashing.scheme == IndexScheme::EnhancedDoubleHashing {
            self.add(EnhancedDouble::new(digest, k, m), increments)
        } else {
            let positions = self.hashing.positions_with_digest(&[], digest, k, m);
            self.add(positions, increments)
        }
    }

    /// [`add_digest`](Self::add_digest) at k = `K`.
    #[inline(always)]
    fn add_digest_k<const K: usize>(&mut self, digest: u128) -> bool {
        let mut ps = [0u64; K];
        crate::lookahead::positions_into(self.hashing, digest, self.counters.len(), &mut ps);
        self.add_k(&ps, Increments::seed(digest))
    }

    /// The insert at these `K` positions, the increments from this
    /// [`seed`](Increments::seed): under [`IncrementHashing::PackedDigest`] the item's word
    /// mixed once and its fields taken in each pass ([`add_packed_k`](Self::add_packed_k));
    /// under [`IncrementHashing::PositionDigest`] each increment drawn once, into an array,
    /// where [`add`](Self::add) draws them again for its second pass (a SplitMix64 step
    /// each). The test reads every counter before any changes, as [`add`](Self::add)'s.
    #[inline(always)]
    fn add_k<const K: usize>(&mut self, ps: &[u64; K], seed: u64) -> bool {
        if self.packed() {
            return self.add_packed_k(ps, seed);
        }
        let (base, shift) = (self.base, offset_shift(self.base));
        let mut increments = [0u32; K];
        let mut state = seed;
        // `Increments`' draws, with the test of L's kind once for the K of them.
        if shift != 0 {
            for slot in &mut increments {
                state = state.wrapping_add(GOLDEN_GAMMA);
                *slot = base + offset(state, base, shift);
            }
        } else {
            for slot in &mut increments {
                state = state.wrapping_add(GOLDEN_GAMMA);
                *slot = base + offset(state, base, 0);
            }
        }
        self.add_increments(ps, increments.iter().copied())
    }

    /// [`add_k`](Self::add_k) under [`IncrementHashing::PackedDigest`]: the fields of one
    /// word ([`Fields`], L a constant for the default 4) when the `K` increments fit it,
    /// else the `K` drawn into an array by [`PackedIncrements`].
    #[inline(always)]
    fn add_packed_k<const K: usize>(&mut self, ps: &[u64; K], seed: u64) -> bool {
        let base = self.base;
        if base == DEFAULT_INCREMENT_BASE && K <= 32 {
            let fields = Fields::new(packed_word(seed), DEFAULT_INCREMENT_BASE);
            self.add_increments(ps, fields)
        } else if fields_fit(base, K as u32) {
            self.add_increments(ps, Fields::new(packed_word(seed), base))
        } else {
            let mut increments = [0u32; K];
            for (slot, v) in increments
                .iter_mut()
                .zip(PackedIncrements::from_seed(seed, base, K as u32))
            {
                *slot = v;
            }
            self.add_increments(ps, increments.iter().copied())
        }
    }

    /// [`add_packed_k`](Self::add_packed_k) for the default layout (L = 4, 8-bit counters,
    /// `at` their proof), the filter's tests of them made by the caller.
    #[inline(always)]
    fn add_default_k<const K: usize>(&mut self, at: ByShifts<8>, ps: &[u64; K], seed: u64) -> bool {
        const { assert!(K <= 32) };
        let fields = Fields::new(packed_word(seed), DEFAULT_INCREMENT_BASE);
        let most = K as u32 * (2 * DEFAULT_INCREMENT_BASE - 1);
        self.add_by_bytes(at, DEFAULT_INCREMENT_BASE, ps, fields, most)
    }

    /// The insert of these increments (the first `K` of them) at these `K` positions, by
    /// [`add_by`](Self::add_by) with the counters found by shifts when they are 8 bits
    /// wide, else by division.
    #[inline(always)]
    fn add_increments<const K: usize>(
        &mut self,
        ps: &[u64; K],
        increments: impl Iterator<Item = u32> + Clone,
    ) -> bool {
        let base = self.base;
        // The most the K increments can add up to: each is at most 2L − 1 (≤ 64 · (2¹⁶ − 1)).
        let most = K as u32 * (2 * base - 1);
        match self.bytes() {
            Some(at) => self.add_by_bytes(at, base, ps, increments, most),
            None => {
                let max = self.counters.max_value();
                let at = self.counters.by_division();
                self.add_by(at, ps, increments, most, |c, v| passes(c, v, base, max))
            }
        }
    }

    /// [`add_by`](Self::add_by) for the counters of [`bytes`](Self::bytes) (8 bits, L ≤ 85;
    /// L = `base`, a constant where the caller knows it): each read as a byte
    /// ([`ByteCounters`](crate::bits::ByteCounters), the slice of words taken once, so that
    /// the add's bounds check is the read's and goes) and tested by
    /// [`passes_below_saturation`], as the query does, and no places kept between the
    /// passes — the add finds each counter's word and byte again from its position (a shift
    /// and a rotate), where keeping them spilled registers.
    #[inline(always)]
    fn add_by_bytes<const K: usize>(
        &mut self,
        at: ByShifts<8>,
        base: u32,
        ps: &[u64; K],
        increments: impl Iterator<Item = u32> + Clone,
        most: u32,
    ) -> bool {
        let mut counters = self.counters.bytes_mut(at);
        let mut values = [0u32; K];
        let mut highest = 0u32;
        for (value, &p) in values.iter_mut().zip(ps) {
            *value = counters.get(p);
            highest |= *value;
        }
        let mut seen = true;
        for (&c, v) in values.iter().zip(increments.clone()) {
            if !passes_below_saturation(c, v, base) {
                seen = false;
                break;
            }
        }
        if highest + most <= at.max_value() {
            for (&p, v) in ps.iter().zip(increments) {
                counters.add(p, v);
            }
        } else {
            for (&p, v) in ps.iter().zip(increments) {
                counters.saturating_add(p, v);
            }
        }
        !seen
    }

    /// The insert of these `K` increments at these positions, each counter found by `at`
    /// once and read once: [`add`](Self::add)'s answer and counters, with one locate and
    /// one read per counter where `add` locates and reads each twice (the test, then the
    /// saturating add).
    ///
    /// All K counters are read before anything changes, and the test (stopping at the first
    /// that fails) runs on the values read. Then, when the largest value read, c*, and
    /// `most` ≥ the sum S of the K increments (K · (2L − 1), a constant of the filter) keep
    /// `c* + most` at most the maximum (c* bounded by the or of the values), no counter can
    /// saturate — each ends at most at its old value plus the item's increments there,
    /// `≤ c* + S`, even if every position were one — so each increment is added to its word
    /// as is (it stays in the counter's bits, and a counter named twice gets both).
    /// Otherwise (a counter near the maximum; rare with 8-bit counters, whose mean at the
    /// design load is about one increment) each counter is read again from its word and
    /// raised saturating, in turn, as `add` does.
    #[inline(always)]
    fn add_by<const K: usize>(
        &mut self,
        at: impl Locate,
        ps: &[u64; K],
        increments: impl Iterator<Item = u32> + Clone,
        most: u32,
        passes: impl Fn(u32, u32) -> bool,
    ) -> bool {
        let max = at.max_value();
        let mut places = [(0usize, 0u32); K];
        let mut values = [0u32; K];
        let mut highest = 0u32;
        for ((place, value), &p) in places.iter_mut().zip(&mut values).zip(ps) {
            *place = at.locate(p);
            *value = self.counters.value_in_word(at, *place);
            // The or of the values is at least their largest and at most the maximum
            // (they all fit w bits): one instruction where the largest takes two.
            highest |= *value;
        }
        // The test on the values read, stopping at the first that fails (an item not yet in
        // a filter at its design load fails the first in about two cases of three).
        // A `for` loop, not `all`: `all` on the zip with `Fields` left its `try_fold` out of
        // line (32 instructions an insert).
        let mut seen = true;
        for (&c, v) in values.iter().zip(increments.clone()) {
            if !passes(c, v) {
                seen = false;
                break;
            }
        }
        // c* ≤ 2¹⁶ − 1 and S ≤ 64 · (2¹⁶ − 1): the sum fits.
        if highest + most <= max {
            for (&place, v) in places.iter().zip(increments) {
                self.counters.add_at(at, place, v);
            }
        } else {
            for (&place, v) in places.iter().zip(increments) {
                self.counters.saturating_add_at(at, place, v);
            }
        }
        !seen
    }

    /// Adds every increment at its position (saturating); `true` when the item was
    /// certainly new, read before anything changes.
    #[inline(always)]
    fn add(
        &mut self,
        positions: impl Iterator<Item = u64> + Clone,
        increments: impl Iterator<Item = u32> + Clone,
    ) -> bool {
        // Both iterators hold their digest's state: cloned, they give the same pairs again
        // for the second pass without hashing again (cheaper than a buffer of 64 pairs).
        let pairs = positions.zip(increments);
        let seen = { pairs.clone() }.all(|(p, v)| self.passes(self.counters.get(p), v));
        for (p, v) in pairs {
            self.counters.saturating_add(p, v);
        }
        !seen
    }

    /// The paper's test of one counter: `true` ("maybe") unless the value rules out an
    /// item that would have added `increment` here.
    #[inline]
    fn passes(&self, value: u32, increment: u32) -> bool {
        self.probes().passes(value, increment)
    }

    /// Adds one copy of an item: counter `h_i(x)` goes up by `v_i(x)` for each i
    /// (stopping at the maximum, where the counter saturates). Returns `true` if the item
    /// was certainly new (the membership test rejected it), `false` if it was already
    /// reported present.
    pub fn insert<I: Item + ?Sized>(&mut self, item: &I) -> bool {
        let new = self.insert_uncounted(item);
        self.len = self.len.saturating_add(1);
        new
    }

    /// [`insert`](Self::insert) without the count of items (a batch adds its length once).
    #[inline]
    fn insert_uncounted<I: Item + ?Sized>(&mut self, item: &I) -> bool {
        item.with_bytes(|bytes| {
            if self.by_digest() {
                self.add_digest(self.hashing.digest(bytes))
            } else {
                let (positions, increments) = self.pairs(bytes);
                self.add(positions, increments)
            }
        })
    }

    /// `false` if the item is certainly absent (one of its counters rules it out by the
    /// paper's test, see the module docs), `true` if it may be present.
    #[inline]
    pub fn contains<I: Item + ?Sized>(&self, item: &I) -> bool {
        item.with_bytes(|bytes| {
            if self.by_digest() {
                self.holds_digest(self.hashing.digest(bytes))
            } else {
                let (positions, increments) = self.pairs(bytes);
                self.holds_located(positions, increments)
            }
        })
    }

    /// Removes one copy of an item: counter `h_i(x)` goes down by `v_i(x)` for each i,
    /// except saturated counters, which stay. `Ok(true)` when done.
    ///
    /// If the item is certainly absent — at some counter that is not saturated, the sum s
    /// of its increments there does not fit (`c < s`) or leaves a remainder between 1 and
    /// L − 1 — the result is [`Error::NotPresent`] and the filter is unchanged.
    ///
    /// Only remove items you inserted: a false positive passes the check, and removing it
    /// takes counts from other items.
    pub fn remove<I: Item + ?Sized>(&mut self, item: &I) -> Result<bool, Error> {
        let mut pairs = [(0u64, 0u32); MAX_NUM_HASHES as usize];
        item.with_bytes(|bytes| self.probe(bytes, &mut pairs));
        let pairs = &pairs[..self.num_hashes as usize];
        let max = self.counters.max_value();
        for &(p, _) in pairs {
            let value = self.counters.get(p);
            if value == max {
                continue;
            }
            let total: u32 = pairs
                .iter()
                .filter(|&&(q, _)| q == p)
                .map(|&(_, v)| v)
                .sum();
            let fits = value >= total && (value == total || value - total >= self.base);
            if !fits {
                return Err(Error::NotPresent);
            }
        }
        for &(p, v) in pairs {
            let value = self.counters.get(p);
            if value != max {
                self.counters.set(p, value - v);
            }
        }
        self.len = self.len.saturating_sub(1);
        Ok(true)
    }

    /// [`insert`](Self::insert) of every item in order; returns how many were certainly new.
    /// A filter past the L2 cache hashes each item once and prefetches its counters a
    /// window of items ahead ([`lookahead`](crate::lookahead)); the filter ends as after
    /// the single inserts.
    ///
    /// ```
    /// use bloomkit::VariableIncrementBloomFilter;
    /// let mut filter = VariableIncrementBloomFilter::with_capacity(1_000, 0.01)?;
    /// assert_eq!(filter.insert_batch(&["a", "b", "a"]), 2);
    /// let mut answers = Vec::new();
    /// filter.contains_batch_into(&["a", "b", "zz"], &mut answers);
    /// assert_eq!(answers, [true, true, false]);
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn insert_batch<I: Item>(&mut self, items: &[I]) -> u64 {
        use crate::lookahead::ByDigest;
        self.advise_batch_insert(items.len() as u64);
        let in_cache = self.batch_in_cache();
        self.insert_batch_in(items, in_cache)
    }

    /// [`insert_batch`](Self::insert_batch) with the filter's size decided by the caller
    /// (tests send small filters through the window): in the default layout through
    /// [`DefaultLayout`], whose inserts do not count items, the batch's length added once.
    #[inline]
    fn insert_batch_in<I: Item>(&mut self, items: &[I], in_cache: bool) -> u64 {
        use crate::lookahead::insert_by_positions_in;
        let new = match DefaultLayout::of(&mut *self) {
            Some(mut filter) => insert_by_positions_in(
                &mut filter,
                items,
                |f, item| f.filter.insert_uncounted(item),
                in_cache,
            ),
            None => return insert_by_positions_in(self, items, |f, item| f.insert(item), in_cache),
        };
        self.len = self.len.saturating_add(items.len() as u64);
        new
    }

    /// The answers of [`contains`](Self::contains) for every item, into `out` (cleared
    /// first), through the same window as [`insert_batch`](Self::insert_batch).
    pub fn contains_batch_into<I: Item>(&self, items: &[I], out: &mut Vec<bool>) {
        use crate::lookahead::ByDigest;
        self.contains_batch_in(items, out, self.batch_in_cache())
    }

    /// [`contains_batch_into`](Self::contains_batch_into) with the filter's size decided by
    /// the caller, as [`insert_batch_in`](Self::insert_batch_in).
    #[inline]
    fn contains_batch_in<I: Item>(&self, items: &[I], out: &mut Vec<bool>, in_cache: bool) {
        use crate::lookahead::contains_by_positions_in;
        match DefaultLayout::of(self) {
            Some(filter) => contains_by_positions_in(
                &filter,
                items,
                out,
                |f, item| f.filter.contains(item),
                in_cache,
            ),
            None => {
                contains_by_positions_in(self, items, out, |f, item| f.contains(item), in_cache)
            }
        }
    }

    /// The k (position, increment) pairs of an item, in hash-function order: where it adds
    /// what. For inspection and tests.
    ///
    /// ```
    /// use bloomkit::VariableIncrementBloomFilter;
    /// let f = VariableIncrementBloomFilter::with_capacity(100, 0.01)?;
    /// let pairs = f.slots("dist");
    /// assert_eq!(pairs.len(), f.num_hashes() as usize);
    /// assert!(pairs.iter().all(|&(p, v)| p < f.num_counters() && (4..=7).contains(&v)));
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn slots<I: Item + ?Sized>(&self, item: &I) -> Vec<(u64, u32)> {
        let mut pairs = [(0u64, 0u32); MAX_NUM_HASHES as usize];
        item.with_bytes(|bytes| self.probe(bytes, &mut pairs));
        pairs[..self.num_hashes as usize].to_vec()
    }

    crate::filter::counter_array_getters!();

    crate::sizing::getters! {
        /// k, the number of hash functions.
        num_hashes: u32;
    }

    /// L: increments are `L, L+1, …, 2L−1`.
    pub fn increment_base(&self) -> u32 {
        self.base
    }

    /// Which digest the increments come from, and how ([`IncrementHashing`]; new filters:
    /// [`IncrementHashing::PackedDigest`]).
    ///
    /// ```
    /// use bloomkit::vi_counting::IncrementHashing;
    /// use bloomkit::{Persist, VariableIncrementBloomFilter};
    /// let f = VariableIncrementBloomFilter::with_capacity(100, 0.01)?;
    /// assert_eq!(f.increment_hashing(), IncrementHashing::PackedDigest);
    /// let old = VariableIncrementBloomFilter::builder()
    ///     .capacity(100)
    ///     .increment_hashing(IncrementHashing::SecondDigest)
    ///     .build()?;
    /// // The choice is saved with the filter, in a parameter the older files do not have.
    /// assert_eq!(f.to_bytes().len(), old.to_bytes().len() + 4);
    /// let back = VariableIncrementBloomFilter::from_bytes(&old.to_bytes())?;
    /// assert_eq!(back.increment_hashing(), IncrementHashing::SecondDigest);
    /// let back = VariableIncrementBloomFilter::from_bytes(&f.to_bytes())?;
    /// assert_eq!(back.increment_hashing(), IncrementHashing::PackedDigest);
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn increment_hashing(&self) -> IncrementHashing {
        self.increment_hashing
    }

    crate::sizing::capacity_and_fpp_getters!();

    fn check_compatible(&self, other: &Self) -> Result<(), Error> {
        crate::filter::require_same_layout(self.kind(), self.layout(), other.layout())
    }

    /// The parameters that decide where an item lands, and the hashing, for
    /// [`require_same_layout`](crate::filter::require_same_layout).
    fn layout(&self) -> String {
        format!(
            "m = {}, k = {}, L = {}, {}-bit counters, increments from the {}, {}",
            self.num_counters(),
            self.num_hashes,
            self.base,
            self.counter_width(),
            self.increment_hashing.name(),
            self.hashing
        )
    }
}

/// What finds an item's counters and increments and tests them: the loaded filter's
/// parameters, or a view's of the file. The query is written once here, over a way to read
/// counter p, so that the loaded filter (its array) and a view (the file's chunks) answer by
/// the same positions, increments and test.
#[derive(Clone, Copy, Debug)]
struct Probes {
    hashing: Hashing,
    increment_hashing: IncrementHashing,
    base: u32,
    num_hashes: u32,
    num_counters: u64,
    /// The counters' maximum, `2^w − 1`.
    max: u32,
}

impl Probes {
    /// An item's positions and increments, with one hash call under
    /// [`IncrementHashing::PositionDigest`] or [`IncrementHashing::PackedDigest`] and a
    /// digest scheme, two under [`IncrementHashing::SecondDigest`].
    #[inline(always)]
    fn pairs<'a>(&self, bytes: &'a [u8]) -> (Positions<'a>, Draws) {
        let (k, m) = (self.num_hashes, self.num_counters);
        if self.increment_hashing == IncrementHashing::SecondDigest {
            return (
                self.hashing.positions(bytes, k, m),
                Draws::Sequence(Increments::second_digest(
                    &self.hashing,
                    bytes,
                    self.base,
                    k,
                )),
            );
        }
        let digest = self.hashing.digest(bytes);
        (
            self.hashing.positions_with_digest(bytes, digest, k, m),
            self.draws(Increments::seed(digest)),
        )
    }

    /// The increments of the item whose position digest has this
    /// [`seed`](Increments::seed), under the position or the packed digest.
    #[inline(always)]
    fn draws(&self, seed: u64) -> Draws {
        let (base, k) = (self.base, self.num_hashes);
        match self.increment_hashing {
            IncrementHashing::PackedDigest => {
                Draws::Packed(PackedIncrements::from_seed(seed, base, k))
            }
            _ => Draws::Sequence(Increments::from_seed(seed, base, k)),
        }
    }

    /// Whether every (position, increment) pair passes [`passes`](Self::passes), the
    /// counters read by `counter`; stops at the first that does not.
    #[inline(always)]
    fn holds<E>(
        &self,
        positions: impl Iterator<Item = u64>,
        increments: impl Iterator<Item = u32>,
        mut counter: impl FnMut(u64) -> Result<u32, E>,
    ) -> Result<bool, E> {
        try_all(positions.zip(increments), |(p, v)| {
            Ok(self.passes(counter(p)?, v))
        })
    }

    /// The paper's test of one counter: `true` ("maybe") unless the value rules out an
    /// item that would have added `increment` here.
    #[inline(always)]
    fn passes(&self, value: u32, increment: u32) -> bool {
        passes(value, increment, self.base, self.max)
    }
}

/// The paper's test of one counter of value `value` against an item's `increment` there,
/// with L = `base` and the counters' maximum `max`: `true` ("maybe") when the counter is
/// saturated, holds exactly the increment, or holds it plus at least L (the rest a sum of
/// other items' increments, each ≥ L); `false` when the value rules the item out.
#[inline(always)]
fn passes(value: u32, increment: u32, base: u32, max: u32) -> bool {
    value == max || value == increment || (value > increment && value - increment >= base)
}

/// [`passes`] for counters whose maximum is at least 3L − 1, in two comparisons where
/// `passes` takes four: `value = v` or `value ≥ v + L`. For `value > v`, `value − v ≥ L` is
/// `value ≥ v + L`; and a saturated counter passes without a test of its own, since
/// `max ≥ 3L − 1 ≥ v + L` for every increment v ≤ 2L − 1. (8-bit counters with L up to 85;
/// a unit test holds it to `passes` for every value, increment and such L of 2- to 16-bit
/// counters.)
#[inline(always)]
fn passes_below_saturation(value: u32, increment: u32, base: u32) -> bool {
    value == increment || value >= increment + base
}

impl Filter for VariableIncrementBloomFilter {
    crate::filter::filter_basics!(
        VariableIncrement: hashing, insert, contains, capacity, target_fpp,
        state(
            counters,
            len,
            "Insertions minus successful removals (a multiset count: repeats count). After \
             an intersection, where it is unknown, the estimate from the counters."
        )
    );

    /// The number of distinct items, from the number of non-zero counters, which fill as
    /// the bits of a Bloom filter do ([`params::estimate_items`]).
    fn estimated_len(&self) -> f64 {
        params::estimate_items(
            self.nonzero_counters(),
            self.num_counters(),
            self.num_hashes,
        )
    }

    fn properties(&self) -> Vec<(&'static str, String)> {
        let probes = self.probes();
        let tally = (0..self.num_counters()).fold(Tally::default(), |t, i| {
            t.add(self.counters.get(i), &probes)
        });
        properties(&Stored::of(self), self.increment_hashing, &tally)
    }

    /// From the counters as they are: a random absent item passes a counter with value c
    /// for [`params::vi_increments_passing`]`(c, L)` of its L possible increments (all L
    /// if saturated); the mean of that fraction over the counters, to the power k.
    fn expected_fpp(&self) -> f64 {
        let probes = self.probes();
        (0..self.num_counters())
            .fold(Tally::default(), |t, i| {
                t.add(self.counters.get(i), &probes)
            })
            .expected_fpp(&probes)
    }

    fn fpp_at(&self, n: u64) -> f64 {
        params::vi_fpp(
            self.num_counters(),
            self.num_hashes(),
            n,
            self.increment_base(),
        )
    }
}

/// What the facts of a filter need from its counters, counted in one pass (the loaded
/// filter's over its array, a view's over the file's pieces).
#[derive(Clone, Copy, Debug, Default)]
struct Tally {
    nonzero: u64,
    saturated: u64,
    /// Σ over the counters of how many of the L increments pass them
    /// ([`params::vi_increments_passing`]; all L at the maximum, none at 0).
    passing: u64,
}

impl Tally {
    /// The tally with one more counter of value `c`.
    #[inline]
    fn add(mut self, c: u32, probes: &Probes) -> Tally {
        self.nonzero += (c != 0) as u64;
        self.saturated += (c == probes.max) as u64;
        self.passing += match c {
            0 => 0,
            c if c == probes.max => probes.base as u64,
            c => params::vi_increments_passing(c, probes.base) as u64,
        };
        self
    }

    /// The mean passing fraction over the counters, to the power k.
    fn expected_fpp(&self, probes: &Probes) -> f64 {
        let fraction = self.passing as f64 / (probes.num_counters as f64 * probes.base as f64);
        fraction.powi(probes.num_hashes as i32)
    }
}

/// [`Filter::properties`] of a filter with these stored parameters and counts of its
/// counters (a view's summary gives the same).
fn properties(
    stored: &Stored,
    increment_hashing: IncrementHashing,
    tally: &Tally,
) -> Vec<(&'static str, String)> {
    let (m, base) = (stored.num_counters, stored.increment_base);
    vec![
        ("counters (m)", m.to_string()),
        ("counter width", format!("{} bits", stored.counter_width)),
        ("hash functions (k)", stored.num_hashes.to_string()),
        (
            "increments (D_L)",
            format!("L = {base}: {base}..={}", 2 * base - 1),
        ),
        ("increment hashing", increment_hashing.name().to_string()),
        ("target fpp", format!("{}", stored.target_fpp)),
        ("nonzero counters", tally.nonzero.to_string()),
        (
            "fill ratio",
            format!("{:.6}", tally.nonzero as f64 / m as f64),
        ),
        ("saturated counters", tally.saturated.to_string()),
    ]
}

impl crate::lookahead::ByDigest for VariableIncrementBloomFilter {
    fn digest_hashing(&self) -> Option<Hashing> {
        self.by_digest().then_some(self.hashing)
    }
    fn batch_bits(&self) -> u64 {
        self.counters.len() * self.counter_width() as u64
    }
    #[inline(always)]
    fn prefetch_query(&self, digest: u128) {
        let (k, m) = (self.num_hashes, self.counters.len());
        if self.hashing.scheme == IndexScheme::EnhancedDoubleHashing {
            EnhancedDouble::new(digest, k, m).for_each(|p| self.counters.prefetch(p));
        } else {
            let positions = self.hashing.positions_with_digest(&[], digest, k, m);
            positions.for_each(|p| self.counters.prefetch(p));
        }
    }
    #[inline(always)]
    fn contains_digest(&self, digest: u128) -> bool {
        self.holds_digest(digest)
    }
    #[inline(always)]
    fn insert_digest(&mut self, digest: u128) -> bool {
        self.len = self.len.saturating_add(1);
        self.add_digest(digest)
    }
    /// Each insert writes k counters raised.
    fn advise_batch_insert(&mut self, items: u64) {
        self.counters
            .advise_bulk_write(items.saturating_mul(u64::from(self.num_hashes)));
    }
}

/// The window by positions for the k of ε = 5%, 1% and 0.1% (3, 5 and 7 with L = 4; the
/// sizing picks fewer positions than the counting filter's, whose 4, 7, 10 the other kinds
/// take): each item's positions and the state its increments start from (its digest's
/// g ⊕ δ) kept in its slot.
impl crate::lookahead::ByPositions for VariableIncrementBloomFilter {
    const WINDOW_KS: u32 = 1 << 3 | 1 << 5 | 1 << 7;
    type Extra = u64;
    #[inline(always)]
    fn extra(&self, digest: u128) -> u64 {
        Increments::seed(digest)
    }
    fn position_range(&self) -> (u32, u64) {
        (self.num_hashes, self.counters.len())
    }
    /// Each counter's word by shifts when they are 8 bits wide (the default), as the step
    /// finds it, else by division.
    #[inline(always)]
    fn prefetch_query_at(&self, positions: &[u64]) {
        match self.counters.by_shifts::<8>() {
            Some(at) => self.counters.prefetch_all_by(at, positions),
            None => self.counters.prefetch_all(positions),
        }
    }
    #[inline(always)]
    fn contains_at(&self, ps: &[u64], seed: u64) -> bool {
        self.holds_with_seed(ps.iter().copied(), seed, ps.len() as u32)
    }
    #[inline(always)]
    fn insert_at(&mut self, ps: &[u64], seed: u64) -> bool {
        self.len = self.len.saturating_add(1);
        // The window's K is a constant here once inlined: one of these is taken.
        if let Ok(ps) = <&[u64; 5]>::try_from(ps) {
            return self.add_k(ps, seed);
        }
        if let Ok(ps) = <&[u64; 3]>::try_from(ps) {
            return self.add_k(ps, seed);
        }
        if let Ok(ps) = <&[u64; 7]>::try_from(ps) {
            return self.add_k(ps, seed);
        }
        let increments = self.probes().draws(seed);
        self.add(ps.iter().copied(), increments)
    }
}

/// A filter in the layout new filters have — the packed digest ([`Fields`]), L = 4, 8-bit
/// counters (found by shifts, read as bytes) — for the batch window: those choices made once
/// for the batch where the filter's own [`ByPositions`](crate::lookahead::ByPositions) tests
/// them at every item (the source, L and the width: three compares and branches an insert,
/// and the width again in the prefetch), and the count of items added once for the batch
/// (its inserts do not count: `insert_batch` adds the batch's length). `R` is `&mut` the
/// filter for inserts, `&` for queries.
struct DefaultLayout<R> {
    filter: R,
    at: ByShifts<8>,
}

/// How [`DefaultLayout`] holds its filter: `&mut` for inserts, `&` for queries.
trait Held: std::ops::Deref<Target = VariableIncrementBloomFilter> {
    /// The filter to insert into; only the `&mut` has one (a window of queries inserts
    /// nothing).
    fn writable(&mut self) -> &mut VariableIncrementBloomFilter;
}

impl Held for &VariableIncrementBloomFilter {
    fn writable(&mut self) -> &mut VariableIncrementBloomFilter {
        unreachable!("a batch query inserts nothing")
    }
}

impl Held for &mut VariableIncrementBloomFilter {
    #[inline(always)]
    fn writable(&mut self) -> &mut VariableIncrementBloomFilter {
        self
    }
}

impl<R: Held> DefaultLayout<R> {
    /// The filter, if it has the default layout.
    #[inline]
    fn of(filter: R) -> Option<Self> {
        if !filter.packed() || filter.base != DEFAULT_INCREMENT_BASE {
            return None;
        }
        let at = filter.bytes()?;
        Some(DefaultLayout { filter, at })
    }

    /// The increments of the item whose digest state is `seed`: the fields of its packed
    /// word, L = 4 (k ≤ 32 fit one word).
    #[inline(always)]
    fn fields(seed: u64) -> Fields {
        Fields::new(packed_word(seed), DEFAULT_INCREMENT_BASE)
    }
}

impl<R: Held> crate::lookahead::ByDigest for DefaultLayout<R> {
    fn digest_hashing(&self) -> Option<Hashing> {
        self.filter.digest_hashing()
    }
    fn batch_bits(&self) -> u64 {
        self.filter.batch_bits()
    }
    #[inline(always)]
    fn prefetch_query(&self, digest: u128) {
        self.filter.prefetch_query(digest)
    }
    #[inline(always)]
    fn contains_digest(&self, digest: u128) -> bool {
        self.filter.holds_digest(digest)
    }
    /// Not counted: see the type.
    #[inline(always)]
    fn insert_digest(&mut self, digest: u128) -> bool {
        self.filter.writable().add_digest(digest)
    }
    fn advise_batch_insert(&mut self, items: u64) {
        self.filter.writable().advise_batch_insert(items)
    }
}

impl<R: Held> crate::lookahead::ByPositions for DefaultLayout<R> {
    const WINDOW_KS: u32 =
        <VariableIncrementBloomFilter as crate::lookahead::ByPositions>::WINDOW_KS;
    type Extra = u64;
    #[inline(always)]
    fn extra(&self, digest: u128) -> u64 {
        Increments::seed(digest)
    }
    fn position_range(&self) -> (u32, u64) {
        (self.filter.num_hashes, self.filter.counters.len())
    }
    /// Each counter's word by shifts, prefetched without a bounds check: the positions are
    /// below m.
    #[inline(always)]
    fn prefetch_query_at(&self, positions: &[u64]) {
        self.filter.counters.prefetch_in_range(self.at, positions)
    }
    #[inline(always)]
    fn contains_at(&self, ps: &[u64], seed: u64) -> bool {
        let (filter, at) = (&*self.filter, self.at);
        for (&p, v) in ps.iter().zip(Self::fields(seed)) {
            if !passes_below_saturation(filter.counters.byte(at, p), v, DEFAULT_INCREMENT_BASE) {
                return false;
            }
        }
        true
    }
    /// Not counted: see the type.
    #[inline(always)]
    fn insert_at(&mut self, ps: &[u64], seed: u64) -> bool {
        let at = self.at;
        let filter = self.filter.writable();
        // The window's K is a constant here once inlined: one of these is taken.
        if let Ok(ps) = <&[u64; 5]>::try_from(ps) {
            return filter.add_default_k(at, ps, seed);
        }
        if let Ok(ps) = <&[u64; 3]>::try_from(ps) {
            return filter.add_default_k(at, ps, seed);
        }
        if let Ok(ps) = <&[u64; 7]>::try_from(ps) {
            return filter.add_default_k(at, ps, seed);
        }
        let increments = filter.probes().draws(seed);
        filter.add(ps.iter().copied(), increments)
    }
}

crate::registry::registered!(
    VariableIncrementBloomFilter,
    {
        name: "vi-counting",
        summary: "Variable-increment counting Bloom filter (Rottenstreich et al. 2014): remove, union, fewer false positives than `counting` in the same memory.",
        grow: false,
        forgets: false,
        index_scheme: true,
    }, remove, merge
);

crate::filter::counter_mergeable!(
    VariableIncrementBloomFilter,
    check_compatible,
    union {
    /// Adds the counters (saturating). A counter is a sum of increments, so the sum of two
    /// is exactly what inserting both multisets would have built (until a sum reaches the
    /// maximum and saturates). `len` becomes the sum of both.
    ///
    /// ```
    /// use bloomkit::{Mergeable, VariableIncrementBloomFilter};
    /// let mut a = VariableIncrementBloomFilter::with_capacity(100, 0.01)?;
    /// let mut b = a.clone();
    /// a.insert("left");
    /// b.insert("right");
    /// a.union(&b)?;
    /// assert!(a.contains("left") && a.contains("right"));
    /// a.remove("left")?;
    /// assert!(a.contains("right"));
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    }
    intersect {
    /// Element-wise minimum. Still sound for the variable-increment test: each filter's
    /// counter is S + R, where S is the sum over the items both hold and R a sum of
    /// increments of the others (0 or ≥ L), so the minimum is also S plus 0 or at least L,
    /// and a common item x sees `c − v_i(x)` = (S − v_i(x)) + R, a sum of two terms that
    /// are each 0 or ≥ L: it is still found, and can be removed. (A saturated counter
    /// yields to the other filter's exact one.) `len` becomes the estimate from the
    /// counters.
    }
);

crate::filter::collection_impls!(
    /// Collects items into a filter sized for their number at ε = 1% (L = 4, 8-bit counters).
    /// (The items are buffered to count them; use
    /// [`VariableIncrementBloomFilter::with_capacity`] and `extend` to choose ε or to stream.)
    ///
    /// ```
    /// use bloomkit::VariableIncrementBloomFilter;
    /// let filter: VariableIncrementBloomFilter = ["a", "b", "c"].into_iter().collect();
    /// assert!(filter.contains("b"));
    /// assert_eq!(filter.capacity(), 3);
    /// ```
    VariableIncrementBloomFilter
);

/// Builds a [`VariableIncrementBloomFilter`] from a capacity and ε, or from explicit m and
/// k; L and the counter width are chosen here too.
///
/// ```
/// use bloomkit::{HashFunction, VariableIncrementBloomFilter};
///
/// let f = VariableIncrementBloomFilter::builder()
///     .capacity(10_000)
///     .fpp(0.001)
///     .increment_base(8)
///     .counter_width(8)
///     .hash_function(HashFunction::Xxh3)
///     .build()?;
/// assert_eq!(f.increment_base(), 8);
///
/// // Explicit m and k; the capacity is the largest n that keeps the FPP at ε = 1%.
/// let g = VariableIncrementBloomFilter::builder().num_counters(50_000).num_hashes(6).build()?;
/// assert!(g.capacity() > 10_000);
///
/// // Increments 8..=15 do not fit 4-bit counters (maximum 15).
/// assert!(VariableIncrementBloomFilter::builder()
///     .capacity(10)
///     .increment_base(8)
///     .counter_width(4)
///     .build()
///     .is_err());
/// # Ok::<(), bloomkit::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
#[must_use = "a builder does nothing until .build() is called"]
pub struct VariableIncrementBloomFilterBuilder {
    capacity: Option<u64>,
    fpp: Option<f64>,
    num_counters: Option<u64>,
    num_hashes: Option<u32>,
    counter_width: Option<u32>,
    base: Option<u32>,
    increment_hashing: IncrementHashing,
    hashing: HashingChoice,
}

impl VariableIncrementBloomFilterBuilder {
    crate::sizing::array_setters! {
        num_counters, "counters";
        m "m, the number of counters, instead of the smallest that reaches ε.",
        k "k, the number of hash functions, instead of the best one for m and n.";

        /// The width of each counter in bits (default 8); `2L − 1` must stay below `2^w − 1`.
        counter_width: u32;
    }

    /// L, the smallest increment (default 4): increments are `L, …, 2L − 1`. Any L ≥ 1
    /// that fits the counters; L = 1 is the classic counting filter. Larger L rejects
    /// more but needs wider counters.
    pub fn increment_base(mut self, base: u32) -> Self {
        self.base = Some(base);
        self
    }

    /// Which digest the increments come from, and how (default
    /// [`IncrementHashing::PackedDigest`]: one hash call and one mix per operation);
    /// [`IncrementHashing::PositionDigest`] and [`IncrementHashing::SecondDigest`] build a
    /// filter that merges with files saved with them.
    pub fn increment_hashing(mut self, increment_hashing: IncrementHashing) -> Self {
        self.increment_hashing = increment_hashing;
        self
    }

    /// Validates the parameters and allocates the filter.
    ///
    /// * capacity (and ε): m is the smallest number of counters for which
    ///   [`params::vi_fpp`] reaches ε, with the given k or the best k for each m;
    /// * m and capacity: k is the best for them;
    /// * m without capacity: the capacity is the largest n for which the FPP stays at ε
    ///   (with the given k, or the best k);
    /// * neither: [`Error::ZeroCapacity`].
    ///
    /// The total size `m · width` must stay within [`MAX_NUM_BITS`].
    pub fn build(self) -> Result<VariableIncrementBloomFilter, Error> {
        let fpp = crate::sizing::fpp(self.fpp)?;
        let width = crate::sizing::counter_width(self.counter_width, DEFAULT_COUNTER_WIDTH)?;
        let base = validate_base(
            self.base.unwrap_or(DEFAULT_INCREMENT_BASE),
            (1u32 << width) - 1,
        )?;
        crate::sizing::check_capacity(self.capacity)?;
        crate::sizing::check_num_hashes(self.num_hashes)?;
        let num_counters = match (self.num_counters, self.capacity) {
            (Some(0), _) => return Err(Error::ZeroBits),
            (Some(m), _) => m,
            (None, Some(n)) => params::vi_optimal_num_counters(n, fpp, base, self.num_hashes)?,
            (None, None) => return Err(Error::ZeroCapacity),
        };
        let total_bits = num_counters.saturating_mul(width as u64);
        if total_bits > MAX_NUM_BITS {
            return Err(Error::TooLarge {
                bits: total_bits,
                max: MAX_NUM_BITS,
            });
        }
        let capacity = self
            .capacity
            .unwrap_or_else(|| params::vi_capacity(num_counters, self.num_hashes, fpp, base));
        let num_hashes = self
            .num_hashes
            .unwrap_or_else(|| params::vi_optimal_num_hashes(num_counters, capacity, base));
        let target_fpp = if self.num_counters.is_none() && self.num_hashes.is_none() {
            fpp
        } else {
            params::vi_fpp(num_counters, num_hashes, capacity, base)
        };
        let hashing = self.hashing.resolve()?;
        Ok(VariableIncrementBloomFilter {
            counters: PackedCounters::zeros(num_counters, width)?,
            num_hashes,
            base,
            hashing,
            increment_hashing: self.increment_hashing,
            capacity,
            target_fpp,
            len: 0,
        })
    }
}

crate::codec::stored! {
    /// The variable-increment filter's parameters on disk (44 bytes): the width is the
    /// counters' bits, the base L the smallest increment. Payload: the packed counters, 64-bit
    /// little-endian words of ⌊64/width⌋ counters each (see `PackedCounters`).
    struct Stored of f: VariableIncrementBloomFilter {
        num_counters: u64 = f.num_counters(),
        num_hashes: u32 = f.num_hashes => check_num_hashes,
        counter_width: u32 = f.counter_width() => check_counter_width,
        increment_base: u32 = f.base,
        capacity: u64 = f.capacity => check_capacity,
        target_fpp: f64 = f.target_fpp => check_target_fpp,
        len: u64 = f.len,
    }
}

/// The length of [`Stored`], the parameters of a file of [`IncrementHashing::SecondDigest`];
/// a file of [`IncrementHashing::PositionDigest`] or [`IncrementHashing::PackedDigest`] has
/// one u32 more after them ([`IncrementHashing::STORED_POSITION_DIGEST`],
/// [`IncrementHashing::STORED_PACKED_DIGEST`]).
const STORED_BYTES: usize = 44;

/// The stored parameters, then `increment_hashing = 1` for the position digest or 2 for the
/// packed digest (nothing for the second digest, so that a file saved before the choice
/// existed saves back to its bytes); the packed counters as the payload.
impl crate::codec::Persist for VariableIncrementBloomFilter {
    fn encode_params(&self, out: &mut Vec<u8>) {
        Stored::of(self).write(out);
        if let Some(value) = self.increment_hashing.stored() {
            out.extend_from_slice(&value.to_le_bytes());
        }
    }

    fn encode_payload(&self, out: &mut Vec<u8>) {
        self.counters.write_le_bytes(out);
    }

    fn decode_parts(parts: &Parts<'_>) -> Result<Self, DecodeError> {
        parts.expect_kind(crate::filter::Kind::VariableIncrement)?;
        Self::decode(parts)
    }
}

impl VariableIncrementBloomFilter {
    fn decode(parts: &Parts<'_>) -> Result<Self, DecodeError> {
        let view = ViewShape::read(parts)?;
        let Stored {
            num_counters,
            num_hashes,
            counter_width: width,
            increment_base: base,
            capacity,
            target_fpp,
            len,
        } = view.stored;
        let counters = PackedCounters::from_le_bytes(num_counters, width, parts.payload)?;
        Ok(VariableIncrementBloomFilter {
            counters,
            num_hashes,
            base,
            hashing: view.probes.hashing,
            increment_hashing: view.probes.increment_hashing,
            capacity,
            target_fpp,
            len,
        })
    }
}

/// A variable-increment filter as loading and a read-only view
/// ([`format::view`](crate::format::view)) read it: the stored parameters and increment
/// source, checked, and the query ([`Probes`]) over counters the view fetches from the
/// file. Loading checks the padding bits of every word; the view checks them in each chunk
/// when it first touches it ([`KindView::check_piece`]).
#[derive(Clone, Copy, Debug)]
struct ViewShape {
    stored: Stored,
    probes: Probes,
}

impl ViewShape {
    /// The counters in the payload: all of it.
    fn span(&self) -> CounterSpan {
        CounterSpan {
            at: 0,
            len: self.stored.num_counters,
            width: self.stored.counter_width,
        }
    }
}

impl KindView for ViewShape {
    fn read(parts: &Parts<'_>) -> Result<Self, DecodeError> {
        parts.expect_kind(Kind::VariableIncrement)?;
        let stored = Stored::read(&parts.params[..parts.params.len().min(STORED_BYTES)])?;
        let Stored {
            num_counters,
            num_hashes,
            counter_width: width,
            increment_base: base,
            ..
        } = stored;
        let increment_hashing = match &parts.params[STORED_BYTES.min(parts.params.len())..] {
            [] => IncrementHashing::SecondDigest,
            rest => match <[u8; 4]>::try_from(rest)
                .ok()
                .and_then(|b| IncrementHashing::from_stored(u32::from_le_bytes(b)))
            {
                Some(source) => source,
                None => {
                    return Err(invalid(
                        "increment_hashing",
                        format!(
                            "{} bytes after the parameters, expected none or the u32 {} or {}",
                            rest.len(),
                            IncrementHashing::STORED_POSITION_DIGEST,
                            IncrementHashing::STORED_PACKED_DIGEST
                        ),
                    ))
                }
            },
        };
        let max = (1u32 << width) - 1;
        validate_base(base, max).map_err(|e| invalid("increment_base", e.to_string()))?;
        check_num_counters(num_counters, 0, width)?;
        // The payload's length against m and the width, before anything is allocated.
        PackedCounters::check_encoded_len(num_counters, width, parts.payload.len())?;
        Ok(ViewShape {
            stored,
            probes: Probes {
                hashing: parts.hashing,
                increment_hashing,
                base,
                num_hashes,
                num_counters,
                max,
            },
        })
    }

    fn facts(&self) -> ViewFacts {
        let s = &self.stored;
        crate::format::view::view_facts!(s, s.num_counters, s.num_hashes, s.len)
    }

    fn contains(&self, bytes: &[u8], view: &FilterView) -> Result<bool, Error> {
        let span = self.span();
        let (positions, increments) = self.probes.pairs(bytes);
        self.probes
            .holds(positions, increments, |p| view.counter(&span, p))
    }

    /// The counters tallied over the payload in one pass; the rest as the loaded filter
    /// works it out from them.
    fn summary(&self, view: &FilterView) -> Result<Summary, Error> {
        let (s, probes) = (&self.stored, &self.probes);
        let mut tally = Tally::default();
        view.for_each_counter(&self.span(), |c| tally = tally.add(c, probes))?;
        let block = ParametersBlock::sized(s.capacity, s.target_fpp, s.num_hashes, s.num_counters);
        Ok(view.summary_of(
            Some(block),
            properties(s, probes.increment_hashing, &tally),
            params::estimate_items(tally.nonzero, s.num_counters, s.num_hashes),
            tally.expected_fpp(probes),
        ))
    }

    /// The padding bits of every word are zero, as loading requires.
    fn check_piece(&self, offset: usize, bytes: &[u8]) -> Result<(), DecodeError> {
        self.span().check_words(offset, bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::Persist;
    use crate::filter::Mergeable;

    fn explicit(m: u64, k: u32) -> VariableIncrementBloomFilter {
        VariableIncrementBloomFilter::builder()
            .num_counters(m)
            .num_hashes(k)
            .build()
            .unwrap()
    }

    /// Chi-square of 40 000 items' cells over `cells` equally likely ones.
    fn chi2(counts: &[u64]) -> f64 {
        let expected = counts.iter().sum::<u64>() as f64 / counts.len() as f64;
        counts
            .iter()
            .map(|&c| (c as f64 - expected).powi(2) / expected)
            .sum()
    }

    proptest::proptest! {
        /// The offsets drawn by shifts for an L that is a power of two are the paper's
        /// `reduce(mix64(state), L)` for every L from 1 to 2¹⁵ (the largest an increment
        /// of a 16-bit counter can be) and any state; other L take `reduce` itself.
        #[test]
        fn offsets_are_the_reduced_mix_of_the_state(
            state in proptest::num::u64::ANY,
            bits in 0u32..=15,
            odd in 1u32..1000,
        ) {
            for base in [1 << bits, odd, (1 << bits) + 1, (1u32 << bits).saturating_sub(1).max(1)] {
                let expected = reduce(mix64(state), base as u64) as u32;
                proptest::prop_assert_eq!(offset(state, base, offset_shift(base)), expected, "L = {}", base);
            }
            // And the draws of an item, as `Increments` gives them, L = 4 and 2^bits.
            for base in [4, (1 << bits).max(2)] {
                let drawn: Vec<u32> = Increments::from_seed(state, base, 7).collect();
                let mut s = state;
                let paper: Vec<u32> = (0..7).map(|_| {
                    s = s.wrapping_add(GOLDEN_GAMMA);
                    base + reduce(mix64(s), base as u64) as u32
                }).collect();
                proptest::prop_assert_eq!(drawn, paper);
            }
        }
    }

    proptest::proptest! {
        /// The packed digest's increments are the b-bit fields of `mix64(s ⊕ T)` from the
        /// low end for L = 2^b and k·b ≤ 64, as [`Fields`] takes them (the fast paths) and
        /// as [`PackedIncrements`] does (the general ones); past 64 bits the fields of
        /// `mix64((s ⊕ T) + j·γ)`, word j; for any other L the base-L digits of each word
        /// from the top, `⌊z·L^(t+1) / 2⁶⁴⌋ mod L`, [`digits_per_word`] to a word.
        #[test]
        fn packed_increments_are_the_fields_of_the_mixed_words(
            seed in proptest::num::u64::ANY,
            bits in 0u32..=15,
            other in 3u32..1000,
            k in 1u32..=64,
        ) {
            let word = |j: u64| mix64((seed ^ PACKED_INCREMENT_TWEAK).wrapping_add(j.wrapping_mul(GOLDEN_GAMMA)));
            let base = 1u32 << bits;
            let drawn: Vec<u32> = PackedIncrements::from_seed(seed, base, k).collect();
            let per_word = 64u32.checked_div(bits).unwrap_or(64);
            let expected: Vec<u32> = (0..k)
                .map(|i| {
                    let z = word((i / per_word) as u64);
                    let at = (i % per_word) * bits;
                    base + ((z >> at) & (base as u64 - 1)) as u32
                })
                .collect();
            proptest::prop_assert_eq!(&drawn, &expected, "L = {}", base);
            if fields_fit(base, k) {
                let fields: Vec<u32> = Fields::new(packed_word(seed), base).take(k as usize).collect();
                proptest::prop_assert_eq!(&fields, &expected, "L = {}", base);
            }
            let base = if other.is_power_of_two() { other + 1 } else { other };
            let d = digits_per_word(base);
            proptest::prop_assert!(u128::from(base).pow(d) <= 1 << 32 && u128::from(base).pow(d + 1) > 1 << 32);
            let drawn: Vec<u32> = PackedIncrements::from_seed(seed, base, k).collect();
            let expected: Vec<u32> = (0..k)
                .map(|i| {
                    let z = word((i / d) as u64) as u128;
                    let t = i % d + 1;
                    base + (((z * u128::from(base).pow(t)) >> 64) % u128::from(base)) as u32
                })
                .collect();
            proptest::prop_assert_eq!(drawn, expected, "L = {}", base);
        }
    }

    #[test]
    fn increments_are_in_d_l_and_uniform_and_independent_of_each_other() {
        // 40 000 items × 2 hash functions: the pair (v_0, v_1) must be uniform over the
        // 16 combinations (chi-square, 15 degrees of freedom; 0.9999 quantile ≈ 44), from
        // every source.
        for source in [
            IncrementHashing::PackedDigest,
            IncrementHashing::PositionDigest,
            IncrementHashing::SecondDigest,
        ] {
            let f = VariableIncrementBloomFilter::builder()
                .num_counters(1000)
                .num_hashes(2)
                .increment_hashing(source)
                .build()
                .unwrap();
            let mut cells = [0u64; 16];
            for item in 0u64..40_000 {
                let v: Vec<u32> = f.slots(&item).iter().map(|&(_, v)| v).collect();
                assert!(v.iter().all(|x| (4..=7).contains(x)));
                cells[((v[0] - 4) * 4 + (v[1] - 4)) as usize] += 1;
            }
            assert!(chi2(&cells) < 44.0, "{source:?}: {cells:?}");
        }
    }

    /// From the position digest (packed or not), an item's first increment tells nothing of
    /// where it lands: over 40 000 items, (position of hash 0 in 8 equal ranges) × (v_0 − L)
    /// is uniform over its 32 cells (chi-square, 31 degrees of freedom; 0.9999 quantile ≈
    /// 67), and so is (position of hash 1) × (v_1 − L), under both digest index schemes
    /// that take g and δ apart.
    #[test]
    fn increments_from_the_position_digest_do_not_follow_the_positions() {
        for source in [
            IncrementHashing::PackedDigest,
            IncrementHashing::PositionDigest,
        ] {
            for scheme in [
                IndexScheme::EnhancedDoubleHashing,
                IndexScheme::DoubleHashing,
            ] {
                let f = VariableIncrementBloomFilter::builder()
                    .num_counters(8_000)
                    .num_hashes(2)
                    .increment_hashing(source)
                    .index_scheme(scheme)
                    .build()
                    .unwrap();
                for i in 0..2 {
                    let mut cells = [0u64; 32];
                    for item in 0u64..40_000 {
                        let (p, v) = f.slots(&item)[i];
                        cells[(p / 1000 * 4 + u64::from(v - 4)) as usize] += 1;
                    }
                    let what = format!("{source:?}, {scheme:?}, hash {i}");
                    assert!(chi2(&cells) < 67.0, "{what}: {cells:?}");
                }
            }
        }
    }

    /// The packed digest past one word's fields and for an L that is not a power of two:
    /// over 40 000 items, the pair of increments that straddles the first two words at
    /// L = 4 (v_31, v_32 of k = 33; 16 cells, 0.9999 quantile ≈ 44), the first two digits
    /// at L = 3 and L = 5 (9 and 25 cells, 8 and 24 degrees of freedom: ≈ 32 and ≈ 59) and
    /// the last digit of the first word and the first of the second at L = 3 (d = 20
    /// digits a word: v_19, v_20 of k = 21) are uniform, and each increment is in `D_L`.
    #[test]
    fn packed_increments_past_one_word_and_for_any_l_are_uniform_and_independent() {
        for (base, k, i, limit) in [
            (4u32, 33u32, 31usize, 44.0),
            (3, 2, 0, 32.0),
            (5, 2, 0, 59.0),
            (3, 21, 19, 32.0),
        ] {
            let f = VariableIncrementBloomFilter::builder()
                .num_counters(1000)
                .num_hashes(k)
                .increment_base(base)
                .build()
                .unwrap();
            let mut cells = vec![0u64; (base * base) as usize];
            for item in 0u64..40_000 {
                let v: Vec<u32> = f.slots(&item).iter().map(|&(_, v)| v).collect();
                assert!(v.iter().all(|x| (base..2 * base).contains(x)), "{v:?}");
                cells[((v[i] - base) * base + (v[i + 1] - base)) as usize] += 1;
            }
            assert!(
                chi2(&cells) < limit,
                "L = {base}, k = {k}, v_{i} and v_{}: {cells:?}",
                i + 1
            );
        }
        assert_eq!(
            [3, 4, 5, 7, 8, 2, 1].map(digits_per_word),
            [20, 32, 13, 11, 21, 64, 64]
        );
    }

    /// Any two of the three sources give other increments (so they must not merge), the
    /// same positions.
    #[test]
    fn the_increment_source_changes_the_increments_and_blocks_merging() {
        let with = |source| {
            VariableIncrementBloomFilter::builder()
                .num_counters(1000)
                .num_hashes(5)
                .increment_hashing(source)
                .build()
                .unwrap()
        };
        let pairs = |f: &VariableIncrementBloomFilter| -> Vec<(u64, u32)> {
            (0..50u32).flat_map(|i| f.slots(&i)).collect()
        };
        let sources = [
            IncrementHashing::PackedDigest,
            IncrementHashing::PositionDigest,
            IncrementHashing::SecondDigest,
        ];
        assert_eq!(explicit(1000, 5).increment_hashing(), sources[0]);
        for (i, &one) in sources.iter().enumerate() {
            for &other in &sources[i + 1..] {
                let (mut new, old) = (with(one), with(other));
                let (a, b) = (pairs(&new), pairs(&old));
                assert!(a.iter().zip(&b).all(|(x, y)| x.0 == y.0));
                let same = a.iter().zip(&b).filter(|(x, y)| x.1 == y.1).count();
                // About a quarter agree by chance (L = 4); far from all.
                assert!(same < a.len() / 2, "{one:?} and {other:?}: {same}");
                assert!(matches!(new.union(&old), Err(Error::Incompatible(_))));
                assert!(matches!(new.intersect(&old), Err(Error::Incompatible(_))));
            }
        }
    }

    /// A packed-digest file carries `increment_hashing = 2` after the 44 bytes of the
    /// others, a position-digest file `increment_hashing = 1`, and each loads back to the
    /// same filter, answering the same; anything else there is refused.
    #[test]
    fn the_increment_source_is_stored_and_a_bad_one_refused() {
        use crate::format::Parts;
        for (source, stored) in [
            (IncrementHashing::PackedDigest, 2u32),
            (IncrementHashing::PositionDigest, 1),
        ] {
            let mut f = VariableIncrementBloomFilter::builder()
                .capacity(100)
                .increment_hashing(source)
                .build()
                .unwrap();
            f.extend(0..50u32);
            let bytes = f.to_bytes();
            let parts = Parts::parse(&bytes).unwrap();
            assert_eq!(parts.params.len(), STORED_BYTES + 4);
            assert_eq!(parts.params[STORED_BYTES..], stored.to_le_bytes());
            let back = VariableIncrementBloomFilter::from_bytes(&bytes).unwrap();
            assert_eq!(back, f);
            assert_eq!(back.increment_hashing(), source);
            assert!((0..2000u32).all(|i| back.contains(&i) == f.contains(&i)));
            assert!((0..20u32).all(|i| back.slots(&i) == f.slots(&i)));
        }
        let mut f = VariableIncrementBloomFilter::with_capacity(100, 0.01).unwrap();
        f.extend(0..50u32);
        let bytes = f.to_bytes();
        let parts = Parts::parse(&bytes).unwrap();
        let payload = parts.payload.to_vec();
        for tail in [
            &[3u8, 0, 0, 0][..],
            &[0, 0, 0, 0],
            &[1, 0, 0],
            &[1, 0, 0, 0, 0],
        ] {
            let mut params = parts.params[..STORED_BYTES].to_vec();
            params.extend_from_slice(tail);
            let bad = crate::format::encode(parts.kind.tag(), parts.hashing, &params, |out| {
                out.extend_from_slice(&payload)
            });
            let err = VariableIncrementBloomFilter::from_bytes(&bad).unwrap_err();
            assert!(
                err.to_string().contains("increment_hashing"),
                "{tail:?}: {err}"
            );
        }
    }

    #[test]
    fn increments_do_not_depend_on_the_position_scheme_but_on_the_seed() {
        let a = explicit(1000, 5);
        let b = VariableIncrementBloomFilter::builder()
            .num_counters(1000)
            .num_hashes(5)
            .index_scheme(IndexScheme::SeededHashes)
            .build()
            .unwrap();
        let c = VariableIncrementBloomFilter::builder()
            .num_counters(1000)
            .num_hashes(5)
            .seed(1)
            .build()
            .unwrap();
        let incs = |f: &VariableIncrementBloomFilter| -> Vec<u32> {
            (0..20u32)
                .flat_map(|i| f.slots(&i))
                .map(|(_, v)| v)
                .collect()
        };
        assert_eq!(incs(&a), incs(&b));
        assert_ne!(incs(&a), incs(&c));
    }

    /// `passes_below_saturation` is `passes` at every width from 2 to 16 bits, for every L
    /// up to 40 whose 3L − 1 the maximum reaches and the largest such L, every increment in
    /// `D_L` (the ends of it for the largest L) and every counter value up to 3L + 2 and the
    /// top three (between those both pass: `c − v ≥ L`); and it is not for 8-bit counters
    /// with L = 86, where 3L − 1 passes 255 (so `bytes` refuses that L).
    #[test]
    fn the_short_test_is_the_paper_s_below_saturation() {
        for width in 2..=16u32 {
            let max = (1u32 << width) - 1;
            let top = (max + 1) / 3;
            for base in (1..=top.min(40)).chain([top]) {
                let increments: Vec<u32> = if base <= 40 {
                    (base..2 * base).collect()
                } else {
                    vec![base, base + 1, 2 * base - 2, 2 * base - 1]
                };
                let values = (0..=(3 * base + 2).min(max)).chain(max - 2..=max);
                for c in values {
                    for &v in &increments {
                        assert_eq!(
                            passes_below_saturation(c, v, base),
                            passes(c, v, base, max),
                            "w = {width}, L = {base}, v = {v}, c = {c}"
                        );
                    }
                }
            }
        }
        let (base, v) = (86, 171);
        assert!(passes(255, v, base, 255) && !passes_below_saturation(255, v, base));
        let f = VariableIncrementBloomFilter::builder()
            .num_counters(10)
            .num_hashes(2)
            .increment_base(86)
            .build()
            .unwrap();
        assert!(f.bytes().is_none());
        assert!(explicit(10, 2).bytes().is_some());
    }

    #[test]
    fn the_membership_test_follows_the_paper() {
        let f = explicit(10, 1);
        // L = 4; query increment 5.
        for (c, want) in [
            (0, false),
            (4, false),  // c < v
            (5, true),   // c = v
            (6, false),  // 0 < c − v < L
            (8, false),  // c − v = 3 < L
            (9, true),   // c − v = 4 = L
            (12, true),  // another item's 7
            (255, true), // saturated
        ] {
            assert_eq!(f.passes(c, 5), want, "c = {c}");
        }
    }

    #[test]
    fn inserted_items_are_found_and_removed_items_are_not() {
        let mut f = VariableIncrementBloomFilter::with_capacity(1000, 0.01).unwrap();
        f.extend(0..1000u32);
        assert!((0..1000u32).all(|i| f.contains(&i)));
        for i in 0..500u32 {
            assert_eq!(f.remove(&i), Ok(true));
        }
        assert!((500..1000u32).all(|i| f.contains(&i)));
        let left = (0..500u32).filter(|i| f.contains(i)).count();
        assert!(left < 25, "{left} of 500 removed items still reported");
        assert_eq!(Filter::len(&f), 500);
        for i in 500..1000u32 {
            f.remove(&i).unwrap();
        }
        assert_eq!(f.nonzero_counters(), 0);
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(64))]

        /// An insert into an empty filter adds each of the item's increments (`slots`, drawn
        /// by `Increments`) at its position and nothing elsewhere: at k = 3, 5 and 7 (the array inserts, whose increments for an L that is a power
        /// of two are drawn by shifts) and k = 4, for L a power of two and not, 8-bit and
        /// 16-bit counters, both increment sources.
        #[test]
        fn an_insert_adds_the_items_increments(
            item in proptest::num::u64::ANY,
            k in proptest::sample::select(vec![3u32, 5, 7, 4]),
            base in proptest::sample::select(vec![4u32, 2, 8, 3, 5]),
            wide in proptest::bool::ANY,
            source in proptest::sample::select(vec![
                IncrementHashing::PackedDigest, IncrementHashing::PositionDigest, IncrementHashing::SecondDigest,
            ]),
        ) {
            let mut f = VariableIncrementBloomFilter::builder()
                .num_counters(100_000)
                .num_hashes(k)
                .increment_base(base)
                .counter_width(if wide { 16 } else { 8 })
                .increment_hashing(source)
                .build()
                .unwrap();
            let slots = f.slots(&item);
            let mut expected = std::collections::BTreeMap::new();
            for &(p, v) in &slots {
                proptest::prop_assert!((base..2 * base).contains(&v));
                *expected.entry(p).or_insert(0) += v;
            }
            proptest::prop_assert!(f.insert(&item));
            for (&p, &sum) in &expected {
                proptest::prop_assert_eq!(f.counter(p), sum);
            }
            proptest::prop_assert_eq!(f.nonzero_counters(), expected.len() as u64);
            proptest::prop_assert!(f.contains(&item));
            proptest::prop_assert!(!f.insert(&item));
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(96))]

        /// The insert that reads each counter once (`add_k` → `add_by`: by shifts for 8-bit
        /// counters, by division for the others; single and through the window's
        /// `insert_at`) against the general `add` (the test, then a saturating add per
        /// counter), and the query by shifts against the general one (`Probes::holds`, by
        /// division), on random sequences of inserts and removes of a dozen items into at
        /// most 40 counters, so that positions repeat within an item and narrow counters
        /// saturate: the same answers and the same filter after every step, at k = 3, 5
        /// and 7, L a power of two and not, 8-, 4-, 3- and 16-bit counters, the packed and the
        /// position digest.
        #[test]
        fn an_insert_reading_each_counter_once_is_the_general_insert(
            k in proptest::sample::select(vec![3u32, 5, 7]),
            base in proptest::sample::select(vec![4u32, 2, 3]),
            width in proptest::sample::select(vec![8u32, 4, 3, 16]),
            m in 1..40u64,
            ops in proptest::collection::vec((0u64..12, 0u8..4), 1..150),
            packed in proptest::bool::ANY,
        ) {
            let source = if packed { IncrementHashing::PackedDigest } else { IncrementHashing::PositionDigest };
            let Ok(mut fast) = VariableIncrementBloomFilter::builder()
                .num_counters(m)
                .num_hashes(k)
                .increment_base(base)
                .counter_width(width)
                .increment_hashing(source)
                .build()
            else {
                // L = 4 does not fit 3-bit counters.
                proptest::prop_assert!(width == 3 && base == 4);
                return Ok(());
            };
            let mut slow = fast.clone();
            for (item, op) in ops {
                match op {
                    0..=2 => {
                        let got = if op == 2 {
                            let ps: Vec<u64> = fast.slots(&item).iter().map(|&(p, _)| p).collect();
                            let seed = item.with_bytes(|b| Increments::seed(fast.hashing.digest(b)));
                            crate::lookahead::ByPositions::insert_at(&mut fast, &ps, seed)
                        } else {
                            fast.insert(&item)
                        };
                        let want = item.with_bytes(|b| {
                            let (positions, increments) = slow.pairs(b);
                            slow.add(positions, increments)
                        });
                        slow.len += 1;
                        proptest::prop_assert_eq!(got, want);
                    }
                    _ => proptest::prop_assert_eq!(fast.remove(&item), slow.remove(&item)),
                }
                proptest::prop_assert_eq!(&fast, &slow);
                for other in 0u64..12 {
                    let general = other.with_bytes(|b| {
                        let (positions, increments) = fast.pairs(b);
                        let read = |p| Ok(fast.counters.get(p));
                        crate::format::view::infallible(fast.probes().holds(positions, increments, read))
                    });
                    proptest::prop_assert_eq!(fast.contains(&other), general);
                }
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(64))]

        /// The batches of a filter in the default layout (packed digest, L = 4, 8-bit
        /// counters: [`DefaultLayout`]) through the window (forced, whatever its size) leave
        /// it as the single calls do — counters, count of items, the count of new ones — and
        /// answer as they do: at the k of the window by positions (3, 5, 7) and others (the
        /// window by digests), four index schemes (the seeded one runs the single calls),
        /// from a few counters up (positions repeat, counters saturate), repeated items,
        /// batches shorter and longer than the window; and a filter of another layout does
        /// not take it.
        #[test]
        fn batches_in_the_default_layout_are_the_single_calls(
            m in 8u64..3_000,
            k in proptest::sample::select(vec![5u32, 3, 7, 4, 12]),
            scheme_at in 0usize..4,
            seed in proptest::num::u64::ANY,
            items in proptest::collection::vec(0u64..300, 0..300),
            probes in proptest::collection::vec(proptest::num::u64::ANY, 0..200),
        ) {
            let scheme = crate::hash::TESTED_SCHEMES[scheme_at];
            let mut filter = VariableIncrementBloomFilter::builder()
                .num_counters(m).num_hashes(k).index_scheme(scheme).seed(seed).build().unwrap();
            proptest::prop_assert!(DefaultLayout::of(&filter).is_some());
            filter.insert(&u64::MAX);
            let mut single = filter.clone();
            let new_single: u64 = items.iter().map(|i| u64::from(single.insert(i))).sum();
            let mut windowed = filter;
            let new_windowed = windowed.insert_batch_in(&items, false);
            proptest::prop_assert_eq!(new_windowed, new_single);
            proptest::prop_assert_eq!(Filter::len(&windowed), items.len() as u64 + 1);
            proptest::prop_assert!(windowed == single, "filters differ");
            let mut answers = vec![true; 3]; // cleared first
            windowed.contains_batch_in(&probes, &mut answers, false);
            let expected: Vec<bool> = probes.iter().map(|p| single.contains(p)).collect();
            proptest::prop_assert_eq!(&answers, &expected);
            windowed.contains_batch_in(&items, &mut answers, false);
            proptest::prop_assert!(answers.iter().all(|&a| a), "a false negative");
        }
    }

    #[test]
    fn only_the_default_layout_takes_its_window() {
        let built = |base: u32, width: u32, source: IncrementHashing| {
            VariableIncrementBloomFilter::builder()
                .num_counters(100)
                .num_hashes(5)
                .increment_base(base)
                .counter_width(width)
                .increment_hashing(source)
                .build()
                .unwrap()
        };
        let packed = IncrementHashing::PackedDigest;
        assert!(DefaultLayout::of(&built(4, 8, packed)).is_some());
        assert!(DefaultLayout::of(&built(2, 8, packed)).is_none());
        assert!(DefaultLayout::of(&built(4, 16, packed)).is_none());
        assert!(DefaultLayout::of(&built(4, 8, IncrementHashing::PositionDigest)).is_none());
        assert!(DefaultLayout::of(&built(4, 8, IncrementHashing::SecondDigest)).is_none());
    }

    #[test]
    fn a_repeated_position_gets_both_increments_and_loses_both() {
        // m = 2, k = 3: some position repeats for every item.
        let mut f = explicit(2, 3);
        f.insert("x");
        let added: u32 = f.slots("x").iter().map(|&(_, v)| v).sum();
        assert_eq!(f.counter(0) + f.counter(1), added);
        assert_eq!(f.remove("x"), Ok(true));
        assert_eq!((f.counter(0), f.counter(1)), (0, 0));
        assert_eq!(f.remove("x"), Err(Error::NotPresent));
    }

    #[test]
    fn remove_checks_the_sum_at_a_repeated_position() {
        // An item whose two increments at one counter are v₁ and v₂, with the counter set to
        // v₁ + v₂ − 1: each increment alone may pass (contains can say maybe), but the item
        // cannot have been inserted, so remove refuses and changes nothing.
        let mut f = explicit(2, 2);
        let item = (0u32..)
            .find(|i| {
                let s = f.slots(i);
                s[0].0 == s[1].0
            })
            .unwrap();
        let s = f.slots(&item);
        let (p, total) = (s[0].0, s[0].1 + s[1].1);
        f.counters.set(p, total - 1);
        let before = f.to_bytes();
        assert_eq!(f.remove(&item), Err(Error::NotPresent));
        assert_eq!(f.to_bytes(), before);
        f.counters.set(p, total);
        assert_eq!(f.remove(&item), Ok(true));
        assert_eq!(f.counter(p), 0);
    }

    #[test]
    fn saturated_counters_stay_and_keep_the_item() {
        let mut f = VariableIncrementBloomFilter::builder()
            .num_counters(1000)
            .num_hashes(3)
            .counter_width(4)
            .build()
            .unwrap();
        for _ in 0..20 {
            f.insert("hot");
        }
        assert!(f.saturated_counters() >= 1);
        for _ in 0..20 {
            assert_eq!(f.remove("hot"), Ok(true));
        }
        assert!(f.contains("hot"));
    }

    #[test]
    fn expected_fpp_from_the_counters_agrees_with_the_theory() {
        let n = 20_000;
        let mut f = VariableIncrementBloomFilter::with_capacity(n, 0.01).unwrap();
        f.extend(0..n);
        let theory = params::vi_fpp(f.num_counters(), f.num_hashes(), n, 4);
        let now = f.expected_fpp();
        assert!((now / theory - 1.0).abs() < 0.1, "{now} vs {theory}");
    }

    #[test]
    fn union_adds_and_intersection_keeps_common_items_removable() {
        let mut a = VariableIncrementBloomFilter::with_capacity(1000, 0.001).unwrap();
        let mut b = a.clone();
        a.extend(0..300u32);
        b.extend(200..500u32);
        let mut u = a.clone();
        u.union(&b).unwrap();
        assert_eq!(Filter::len(&u), 600);
        for i in 0..300u32 {
            u.remove(&i).unwrap();
        }
        assert!((200..500u32).all(|i| u.contains(&i)));
        a.intersect(&b).unwrap();
        assert!((200..300u32).all(|i| a.contains(&i)));
        let others = (0..200u32)
            .chain(300..500)
            .filter(|i| a.contains(i))
            .count();
        assert!(others < 100, "{others}");
        for i in 200..300u32 {
            assert_eq!(a.remove(&i), Ok(true));
            assert!((i + 1..300).all(|j| a.contains(&j)), "after removing {i}");
        }
    }

    #[test]
    fn mismatched_filters_cannot_be_combined() {
        let mut a = VariableIncrementBloomFilter::with_capacity(1000, 0.01).unwrap();
        let m = a.num_counters();
        let k = a.num_hashes();
        let other_base = VariableIncrementBloomFilter::builder()
            .num_counters(m)
            .num_hashes(k)
            .increment_base(5)
            .build()
            .unwrap();
        let other_width = VariableIncrementBloomFilter::builder()
            .num_counters(m)
            .num_hashes(k)
            .counter_width(16)
            .build()
            .unwrap();
        let other_seed = VariableIncrementBloomFilter::builder()
            .num_counters(m)
            .num_hashes(k)
            .seed(3)
            .build()
            .unwrap();
        for other in [&other_base, &other_width, &other_seed] {
            assert!(matches!(a.union(other), Err(Error::Incompatible(_))));
            assert!(matches!(a.intersect(other), Err(Error::Incompatible(_))));
        }
    }

    #[test]
    fn degenerate_parameters_are_errors() {
        let b = VariableIncrementBloomFilter::builder;
        assert_eq!(b().build().unwrap_err(), Error::ZeroCapacity);
        assert_eq!(b().num_counters(0).build().unwrap_err(), Error::ZeroBits);
        assert_eq!(
            b().capacity(10).num_hashes(0).build().unwrap_err(),
            Error::ZeroHashes
        );
        assert!(matches!(
            b().num_counters(10).num_hashes(65).build(),
            Err(Error::TooManyHashes { .. })
        ));
        assert_eq!(
            b().capacity(10).counter_width(0).build().unwrap_err(),
            Error::InvalidCounterWidth(0)
        );
        assert_eq!(
            b().capacity(10).increment_base(0).build().unwrap_err(),
            Error::InvalidIncrementBase {
                base: 0,
                max_counter: 255
            }
        );
        assert!(b().capacity(10).increment_base(127).build().is_ok());
        assert!(matches!(
            b().capacity(10).increment_base(128).build(),
            Err(Error::InvalidIncrementBase { .. })
        ));
        assert!(matches!(
            b().capacity(10).increment_base(u32::MAX).build(),
            Err(Error::InvalidIncrementBase { .. })
        ));
        assert!(matches!(
            b().capacity(10).counter_width(1).increment_base(1).build(),
            Err(Error::InvalidIncrementBase { .. })
        ));
        assert!(matches!(
            b().num_counters(MAX_NUM_BITS / 8 + 1).build(),
            Err(Error::TooLarge { .. })
        ));
        assert!(matches!(
            VariableIncrementBloomFilter::with_capacity(u64::MAX, 0.01),
            Err(Error::CapacityTooLarge {
                capacity: u64::MAX,
                ..
            })
        ));
        for fpp in [0.0, 1.0, -1.0, f64::NAN] {
            assert!(matches!(
                VariableIncrementBloomFilter::with_capacity(10, fpp),
                Err(Error::InvalidFpp(_))
            ));
        }
    }

    #[test]
    fn base_one_is_the_classic_counting_filter() {
        let mut vi = VariableIncrementBloomFilter::builder()
            .num_counters(5000)
            .num_hashes(4)
            .increment_base(1)
            .build()
            .unwrap();
        let mut cbf = crate::CountingBloomFilter::builder()
            .num_counters(5000)
            .num_hashes(4)
            .counter_width(8)
            .build()
            .unwrap();
        vi.extend(0..1000u32);
        cbf.extend(0..1000u32);
        assert!((0..5000).all(|i| vi.counter(i) == cbf.counter(i)));
        assert!((1000..20_000u32).all(|i| vi.contains(&i) == cbf.contains(&i)));
    }

    #[test]
    fn debug_shows_the_parameters() {
        let f = VariableIncrementBloomFilter::with_capacity(1000, 0.01).unwrap();
        let s = format!("{f:?}");
        for needle in [
            "num_counters: ",
            "counter_width: 8",
            "increment_base: 4",
            "capacity: 1000",
            "target_fpp: 0.01",
        ] {
            assert!(s.contains(needle), "{s}");
        }
    }
}
