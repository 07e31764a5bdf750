//! Theory of the blocked Bloom filter: the formulas its builder sizes with and its
//! `Filter::fpp_at` answers with, and why its default digest meets them.
//!
//! # The false-positive rate, B = 512
//!
//! With b blocks of B = 512 bits (W = 8 words of 64), n items, k bits per item dealt
//! round-robin to the words ([`fpp_blocked`] has the derivation, after Putze, Sanders &
//! Singler, JEA 2009, §3):
//!
//! ```text
//!     FPR(b, k, n) = Σ_{i ≥ 0}  e^{−λ} λ^i / i!  ·  Π_{w=0..7} f_64(j_w, i),    λ = n / b,
//!     j_w = ⌊k/8⌋ + [w < k mod 8],   f_64(j, i) = the exact rate of a 64-bit word holding
//!                                                 j bits of each of i items.
//! ```
//!
//! At k = 8 every word holds one bit per item and `f_64(1, i) = 1 − (63/64)^i`, so
//! `FPR = Σ_i Poisson(i; λ) · (1 − (63/64)^i)^8`: 10.1 bits per item (λ = 50.7) give 1.0%,
//! 11 bits (λ = 46.5, sbbf-rs-safe's memory) 0.66% — under the 0.82% (measured 0.81%) of
//! Parquet's 256-bit split block at the same memory, whose words are 32 bits wide and whose blocks hold
//! half as many items (`(1 − (31/32)^i)^8` with λ = 23.3): wider words lose less to
//! collisions within a word than smaller blocks lose to the spread of their loads.
//!
//! # What the formula assumes of the digest, and why fold2-128 meets it
//!
//! The sum holds when (A1) each item's block is uniform on the b blocks and independent of
//! the other items' blocks, and (A2) a query's eight 6-bit fields are uniform, independent
//! of each other, of the block, and of the fields of the items in that block. A digest is
//! "uniform enough" when the measured rate of absent keys stays inside the binomial
//! interval of this formula for key sets with structure — consecutive integers, multiples of
//! 2²⁰ and 2³², keys one bit away from present ones, byte-swapped counters
//! (`tests/suite/blocked.rs`, `…_on_structured_keys`); random keys say nothing about a hash.
//!
//! [`HashFunction::Fold2`](crate::HashFunction::Fold2) (the default of new blocked filters)
//! is two multiply-folds, `fold(a, b) = lo(a·b) ⊕ hi(a·b)` of the full 128-bit product —
//! wyhash's `mum` (Wang Yi) and rapidhash's `rapid_mix` (De Carli) — on a `u64` key k with
//! the seed s:
//!
//! ```text
//!     x = fold(k ⊕ s ⊕ K0, k ⊕ s ⊕ K1 ⊕ 8)        fields: the low 48 bits of x
//!     h = fold(x ⊕ K2, K3)                       block:  ⌊h · b / 2⁶⁴⌋
//! ```
//!
//! * Why not one multiply by a constant: `k·c mod 2⁶⁴` is linear, so a lattice of keys
//!   (i·2²⁰) maps to a lattice, and bit j of the product depends only on bits ≤ j of k —
//!   the low fields of keys i·2²⁰ are all equal. Measured: a single fold reached 6.4% at a
//!   formula of 0.8% on keys i·2²⁰ (BENCHMARKS.md, "What a cheaper hash would buy"), and
//!   taking block and fields from one fold here puts sequential keys at 1.8% for 1.0%
//!   (the test above, mutated).
//! * The first fold multiplies two key-dependent factors: the product is quadratic in k,
//!   and XOR-ing its high half into the low half makes every bit of x depend on every bit
//!   of k through the carries of the 64×64 multiplication (the high half is the carry-out of
//!   all partial products). That breaks lattices and single-bit differences.
//! * The block comes from the second fold h, not from x: (A2) asks the fields to be
//!   independent of the block. With fields and block cut from one 64-bit value the two would
//!   share bits once `48 + log₂ b > 64` (b > 2¹⁶, about 3.4·10⁶ items at 10 bits each), and
//!   items of one block would share their top field bits. h is a fold of all 64 bits of x,
//!   the 16 that the fields do not use included, so items with equal fields land in
//!   unrelated blocks; the tests run past 2¹⁶ blocks (8·10⁶ keys) for this reason.
//! * The seed enters both factors, so the fold's known degenerate input (a factor of zero
//!   collapses the product: `k = s ⊕ K0`) is a different key for every seed; a random seed
//!   (`random_seed()`) keeps an adversary from aiming at it.
//! * Cost: two 64×64→128 multiplications and five XORs, against XXH3-128's three
//!   multiplications, shifts and a byte swap of the seed on its 8-byte path.
//!
//! What this does *not* give: a 64-bit key has 64 bits of entropy, so digests of two keys
//! collide with probability 2⁻⁶⁴, not 2⁻¹²⁸ — irrelevant next to ε. Items of 17 bytes or
//! more are first reduced by XXH3-128, so their quality is XXH3's.

use crate::error::Error;
use crate::kinds::bloom::theory::*;

/// B, the bits in one block of the blocked Bloom filter: one 64-byte cache line.
pub const BLOCK_BITS: u64 = 512;

/// The largest number of blocks a blocked filter may have (`MAX_NUM_BITS / B`).
pub const MAX_NUM_BLOCKS: u64 = MAX_NUM_BITS / BLOCK_BITS;

/// Bits in one word of a block: item bit t goes to word `t mod (B/64)`.
pub const WORD_BITS: u64 = 64;

/// The false-positive probability of a blocked Bloom filter of `num_blocks` blocks of
/// `block_bits` bits each (a multiple of 64), `num_hashes` bits per item (all in the item's
/// one block, bit t of an item in word `t mod (B/64)` of it), after `items` insertions.
///
/// Putze, Sanders & Singler, "Cache-, Hash- and Space-Efficient Bloom Filters" (WEA 2007;
/// JEA 2009), section 3: each item picks a block uniformly, so the number of items that
/// share the block of a query is Binomial(n, 1/b), which they approximate by a Poisson
/// distribution of mean `λ = n·B/m = n/b`. Within its block an item behaves as a small
/// filter, so
///
/// ```text
///     FPR = Σ_{i ≥ 0}  Poisson(i; λ) · f(k, i)
/// ```
///
/// where `f(k, i)` is the false-positive rate of one block holding i items. Here a block
/// is *split* into W = B/64 words and an item's k bits are dealt round-robin to the words
/// (Putze et al.'s "multi-blocking" with one word per bit group, as in Parquet's split
/// block filter), so a word w receives `j_w = ⌊k/W⌋` or `⌈k/W⌉` bits per item and the
/// words are independent small filters: `f(k, i) = Π_w f_64(j_w, i)`.
///
/// For `f_64` Putze et al. use the classic `(1 − (1 − 1/64)^(j·i))^j`
/// ([`fpp_blocked_putze`]); that expression treats the j bits of a query as independent and
/// so *underestimates* the rate of a small filter (Bose et al., "On the false-positive
/// rate of Bloom filters", IPL 2008) — by a few percent here, enough for a filter sized by
/// it to miss its ε. This function uses the exact rate instead:
///
/// ```text
///     f_64(j, i) = Σ_d  P(the j query bits are d distinct bits) ·
///                       P(d given bits are all set after t = j·i random bit-settings)
/// ```
///
/// with both probabilities computed by small dynamic programmes (over the j query picks,
/// and over the t settings with the count of the d given bits already hit), so there is no
/// alternating sum and no cancellation. Cost: O(j³·λ), a fraction of a millisecond.
///
/// The sum is higher than the classic `(1 − e^(−kn/m))^k` at the same m and k because
/// the FPR of a block is convex in its load: overfull blocks cost more than underfull ones
/// save — the *blocking penalty*, computed here rather than guessed. The Poisson law has
/// a slightly larger variance than the exact binomial one, so for filters of very few blocks
/// this formula errs on the safe (higher) side; from a few hundred blocks on the two agree
/// to many digits.
///
/// The terms are summed over `i ≤ λ + 12√λ + 40`, past which the Poisson tail is below
/// 10⁻³⁰, with the Poisson weights in log space so that a large λ does not underflow.
/// Saturated filters (`kλ/B ≥ 40`) return 1.
///
/// ```
/// use bloomkit::params::{fpp_blocked, fpp_blocked_putze, fpp_exact};
/// // About 10 bits per item, k = 8: 512-bit blocks pay a penalty over the classic filter.
/// let (blocks, k, n) = (19_532, 8, 1_000_000);
/// let blocked = fpp_blocked(blocks, 512, k, n);
/// let classic = fpp_exact(blocks * 512, k, n);
/// assert!(blocked > classic && blocked < 1.5 * classic);
/// assert!(fpp_blocked_putze(blocks, 512, k, n) < blocked);
/// ```
pub fn fpp_blocked(num_blocks: u64, block_bits: u64, num_hashes: u32, items: u64) -> f64 {
    blocked_sum(num_blocks, block_bits, num_hashes, items, true)
}

/// Putze et al.'s formula as published: [`fpp_blocked`] with the classic
/// `(1 − (1 − 1/64)^(j·i))^j` as the rate of a word holding i items' j bits. Cheaper
/// (O(λ)), and a slight underestimate (see [`fpp_blocked`]); the sizing uses it to find
/// the region of the answer before it refines with the exact rate.
pub fn fpp_blocked_putze(num_blocks: u64, block_bits: u64, num_hashes: u32, items: u64) -> f64 {
    blocked_sum(num_blocks, block_bits, num_hashes, items, false)
}

/// The rates `f_64(j, i)` of a 64-bit word with j bits per item, for i = 1, 2, … in turn.
struct WordRates {
    j: usize,
    /// P(the j query picks are d distinct bits), d = 0 … j.
    distinct: Vec<f64>,
    /// `hit[d][s]`: P(exactly s of d given bits are set so far).
    hit: Vec<Vec<f64>>,
}

impl WordRates {
    fn new(j: usize) -> Self {
        let b = WORD_BITS as f64;
        let mut distinct = vec![0.0f64; j + 1];
        distinct[0] = 1.0;
        for pick in 0..j {
            for d in (1..=pick + 1).rev() {
                distinct[d] =
                    distinct[d] * (d as f64 / b) + distinct[d - 1] * ((b - (d - 1) as f64) / b);
            }
            distinct[0] = 0.0;
        }
        let hit = (0..=j)
            .map(|d| {
                let mut v = vec![0.0; d + 1];
                v[0] = 1.0;
                v
            })
            .collect();
        Self { j, distinct, hit }
    }

    /// Adds one item (j more bit-settings) and returns the rate with the items so far.
    fn next(&mut self) -> f64 {
        let b = WORD_BITS as f64;
        let j = self.j;
        for (d, v) in self.hit.iter_mut().enumerate().skip(1) {
            if self.distinct[d] < 1e-300 {
                continue;
            }
            for _ in 0..j {
                for s in (1..=d).rev() {
                    v[s] = v[s] * (1.0 - (d - s) as f64 / b) + v[s - 1] * ((d - s + 1) as f64 / b);
                }
                v[0] *= 1.0 - d as f64 / b;
            }
        }
        (1..=j).map(|d| self.distinct[d] * self.hit[d][d]).sum()
    }
}

fn blocked_sum(num_blocks: u64, block_bits: u64, num_hashes: u32, items: u64, exact: bool) -> f64 {
    if num_blocks == 0 || block_bits < WORD_BITS || num_hashes == 0 {
        return 1.0;
    }
    if items == 0 {
        return 0.0;
    }
    let lambda = items as f64 / num_blocks as f64;
    let k = num_hashes as usize;
    let words = (block_bits / WORD_BITS) as usize;
    // Saturated blocks: at kλ/B ≥ 40 a bit of an average block is 0 with probability
    // e^(−40) ≈ 4·10⁻¹⁸, and a block with half the mean load (Poisson probability below
    // e^(−50) at such λ) still has each bit 0 with probability under 10⁻⁸: the rate is 1
    // to within 10⁻⁶, and summing ~λ terms of a huge λ would take forever.
    if k as f64 * lambda / block_bits as f64 >= 40.0 {
        return 1.0;
    }
    // Words with ⌈k/W⌉ bits per item (`rich` of them) and with ⌊k/W⌋.
    let (low_j, rich) = (k / words, k % words);
    let last = (lambda + 12.0 * lambda.sqrt() + 40.0).ceil() as u64;
    let ln_lambda = lambda.ln();
    let mut ln_p = -lambda; // ln Poisson(0; λ)
    let mut sum = 0.0;
    let word_b = WORD_BITS as f64;
    let classic = |j: usize, i: u64| -> f64 {
        if j == 0 {
            return 1.0;
        }
        let zero = ((j as u64 * i) as f64 * (-1.0 / word_b).ln_1p()).exp();
        (1.0 - zero).powi(j as i32)
    };
    let mut low_rates = (low_j > 0).then(|| WordRates::new(low_j));
    let mut high_rates = (rich > 0).then(|| WordRates::new(low_j + 1));
    for i in 1..=last {
        ln_p += ln_lambda - (i as f64).ln();
        let (low, high) = if exact {
            (
                low_rates.as_mut().map_or(1.0, WordRates::next),
                high_rates.as_mut().map_or(1.0, WordRates::next),
            )
        } else {
            (classic(low_j, i), classic(low_j + 1, i))
        };
        let in_block = low.powi((words - rich) as i32) * high.powi(rich as i32);
        sum += ln_p.exp() * in_block;
    }
    sum.min(1.0)
}

/// The size of a blocked filter for `capacity` items at false-positive probability `fpp`:
/// the smallest number of [`BLOCK_BITS`]-bit blocks, and with it the number of bits per item
/// k, for which [`fpp_blocked`] is at most `fpp`.
///
/// For each k from 1 to `⌈log₂(1/ε)⌉ + 2` (past the classic optimum `log₂(1/ε)`, the blocked
/// optimum is never larger) the smallest block count is found by doubling and bisection
/// (the FPR falls as blocks are added); the k with the fewest blocks wins, the smaller k on
/// a tie (fewer bits to touch per query). A filter sized so is about 5% larger than a
/// classic one at ε = 1% and 9% at ε = 0.1% (the penalty grows as ε shrinks).
///
/// ```
/// use bloomkit::params::{blocked_dimensions, fpp_blocked, BLOCK_BITS};
/// let (blocks, k) = blocked_dimensions(1_000_000, 0.01)?;
/// assert!(fpp_blocked(blocks, BLOCK_BITS, k, 1_000_000) <= 0.01);
/// assert!(fpp_blocked(blocks - 1, BLOCK_BITS, k, 1_000_000) > 0.01);
/// # Ok::<(), bloomkit::Error>(())
/// ```
pub fn blocked_dimensions(capacity: u64, fpp: f64) -> Result<(u64, u32), Error> {
    let fpp = validate_fpp(fpp)?;
    if capacity == 0 {
        return Err(Error::ZeroCapacity);
    }
    // Stage 1, with Putze's cheap formula: the best k roughly.
    let max_k = ((-fpp.log2()).ceil() as u32 + 2).clamp(1, MAX_NUM_HASHES);
    let mut rough: Option<(u64, u32)> = None;
    for k in 1..=max_k {
        let limit = rough.map_or(MAX_NUM_BLOCKS, |(b, _)| b - 1);
        if let Some(blocks) = smallest_num_blocks(capacity, fpp, k, limit, false) {
            rough = Some((blocks, k));
        }
    }
    let Some((_, rough_k)) = rough else {
        return Err(too_large_for(capacity, fpp));
    };
    // Stage 2, exact: that k and its neighbours (the exact rate is a few percent higher
    // and can move the optimum by one).
    let mut best: Option<(u64, u32)> = None;
    for k in rough_k.saturating_sub(1).max(1)..=(rough_k + 1).min(MAX_NUM_HASHES) {
        let limit = best.map_or(MAX_NUM_BLOCKS, |(b, _)| b - 1);
        if let Some(blocks) = smallest_num_blocks(capacity, fpp, k, limit, true) {
            best = Some((blocks, k));
        }
    }
    best.ok_or_else(|| too_large_for(capacity, fpp))
}

/// The smallest number of blocks for which a blocked filter with a given k holds
/// `capacity` items at false-positive probability at most `fpp` (see [`fpp_blocked`]);
/// [`Error::CapacityTooLarge`] if more than [`MAX_NUM_BLOCKS`] would be needed.
///
/// ```
/// use bloomkit::params::blocked_num_blocks;
/// let with_k_8 = blocked_num_blocks(1_000_000, 0.01, 8)?;
/// let with_k_6 = blocked_num_blocks(1_000_000, 0.01, 6)?;
/// assert!(with_k_8 < with_k_6); // 8 is the best k for split 512-bit blocks at ε = 1%
/// # Ok::<(), bloomkit::Error>(())
/// ```
pub fn blocked_num_blocks(capacity: u64, fpp: f64, num_hashes: u32) -> Result<u64, Error> {
    let fpp = validate_fpp(fpp)?;
    if capacity == 0 {
        return Err(Error::ZeroCapacity);
    }
    if num_hashes == 0 {
        return Err(Error::ZeroHashes);
    }
    smallest_num_blocks(capacity, fpp, num_hashes, MAX_NUM_BLOCKS, true)
        .ok_or_else(|| too_large_for(capacity, fpp))
}

/// The largest number of items that `num_blocks` blocks with k bits per item hold at
/// false-positive probability at most `fpp` (at least 1): the capacity of a blocked filter
/// whose size was given explicitly.
pub fn blocked_capacity(num_blocks: u64, num_hashes: u32, fpp: f64) -> u64 {
    let meets = |n: u64| fpp_blocked(num_blocks, BLOCK_BITS, num_hashes, n) <= fpp;
    let (low, high) = (1u64, num_blocks.saturating_mul(BLOCK_BITS).max(2));
    if !meets(low) {
        return 1;
    }
    if meets(high) {
        return high;
    }
    // low meets, high fails.
    crate::sizing::last_meeting(low, high - 1, meets)
}

/// The k with the lowest FPR for a given size and load (ranked by [`fpp_blocked_putze`],
/// which orders the k as the exact rate does).
pub fn blocked_best_num_hashes(num_blocks: u64, capacity: u64) -> u32 {
    (1..=MAX_NUM_HASHES)
        .map(|k| (k, fpp_blocked_putze(num_blocks, BLOCK_BITS, k, capacity)))
        .fold(
            (1, f64::INFINITY),
            |best, (k, p)| if p < best.1 { (k, p) } else { best },
        )
        .0
}

/// Doubling from a lower bound, then bisection: the smallest block count in `1..=limit`
/// that meets `fpp` with k bits per item by [`fpp_blocked`] (`exact`) or
/// [`fpp_blocked_putze`], if any. The exact search starts from Putze's answer, which is
/// never larger, so it needs only a few evaluations of the dearer formula.
fn smallest_num_blocks(
    capacity: u64,
    fpp: f64,
    num_hashes: u32,
    limit: u64,
    exact: bool,
) -> Option<u64> {
    if limit == 0 {
        return None;
    }
    let meets = |blocks: u64| {
        let rate = if exact {
            fpp_blocked(blocks, BLOCK_BITS, num_hashes, capacity)
        } else {
            fpp_blocked_putze(blocks, BLOCK_BITS, num_hashes, capacity)
        };
        rate <= fpp
    };
    let start = if exact {
        // Putze's answer fails or just meets; go up from it in small steps.
        smallest_num_blocks(capacity, fpp, num_hashes, limit, false)?
    } else {
        // The classic filter's size: the blocked one never needs less.
        (-(capacity as f64) * fpp.ln()
            / (std::f64::consts::LN_2 * std::f64::consts::LN_2)
            / BLOCK_BITS as f64)
            .ceil()
            .clamp(1.0, limit as f64) as u64
    };
    let mut low = start.saturating_sub(1); // fails (or is no filter at all)
    let mut high = start;
    let mut step = if exact { (start / 64).max(1) } else { start };
    while !meets(high) {
        if high >= limit {
            return None;
        }
        low = high;
        high = high.saturating_add(step).min(limit);
        step = step.saturating_mul(2);
    }
    // low fails, high meets.
    Some(crate::sizing::first_meeting(low + 1, high, meets))
}

/// The error for a capacity the blocks cannot hold at ε: said in its words, since the
/// classic size it is measured by may pass 2⁶⁴ bits.
fn too_large_for(capacity: u64, fpp: f64) -> Error {
    Error::CapacityTooLarge {
        capacity,
        fpp,
        max: MAX_NUM_BITS,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Putze et al. sum, evaluated here without its Poisson shortcut (the exact binomial
    /// load of a block), must agree with it for many blocks, and lie above the classic FPR.
    #[test]
    fn blocked_fpp_matches_the_binomial_sum_and_exceeds_the_classic_rate() {
        let (blocks, k, n) = (2_000u64, 8u32, 100_000u64);
        let p = 1.0 / blocks as f64;
        let mut ln_pmf = n as f64 * (-p).ln_1p(); // Binomial(0; n, p)
        let mut binomial = 0.0;
        for i in 1..=400u64 {
            ln_pmf += ((n - i + 1) as f64).ln() - (i as f64).ln() + p.ln() - (-p).ln_1p();
            // k = 8 bits in 8 words: one bit per word, (1 − (1 − 1/64)^i)^8.
            binomial += ln_pmf.exp() * (1.0 - (1.0 - 1.0 / 64.0f64).powi(i as i32)).powi(8);
        }
        let poisson = fpp_blocked_putze(blocks, BLOCK_BITS, k, n);
        assert!(
            (poisson - binomial).abs() / binomial < 2e-3,
            "{poisson} vs {binomial}"
        );
        // With one bit per word (k = 8) the classic expression is exact; with two (k = 16)
        // the exact rate is a little higher.
        let exact = fpp_blocked(blocks, BLOCK_BITS, k, n);
        assert!(
            (exact - poisson).abs() / poisson < 1e-12,
            "{exact} vs {poisson}"
        );
        let (exact, putze) = (
            fpp_blocked(blocks, BLOCK_BITS, 16, n),
            fpp_blocked_putze(blocks, BLOCK_BITS, 16, n),
        );
        assert!(
            exact > putze * 1.005 && exact < putze * 1.1,
            "{exact} vs {putze}"
        );
        let classic = fpp_exact(blocks * BLOCK_BITS, k, n);
        assert!(poisson > classic * 1.05, "{poisson} vs classic {classic}");
    }

    /// One block that holds every item (λ = n) is a classic filter of B bits with n items
    /// only on average: the Poisson mixture averages the classic rate over the load.
    #[test]
    fn blocked_fpp_of_an_empty_or_huge_filter() {
        assert_eq!(fpp_blocked(10, 512, 7, 0), 0.0);
        assert!(fpp_blocked(1_000_000, 512, 7, 1) < 1e-12);
        assert!(fpp_blocked(1, 512, 7, 10_000) > 0.999);
        // A huge λ (ε near 1 sizing) neither underflows nor returns NaN.
        let p = fpp_blocked(10, 512, 1, 100_000);
        assert!(p.is_finite() && p > 0.99, "{p}");
    }

    #[test]
    fn blocked_dimensions_are_minimal_and_pay_a_small_penalty() {
        for (fpp, k_expected) in [(0.01, 8), (0.001, 8)] {
            let n = 1_000_000;
            let (blocks, k) = blocked_dimensions(n, fpp).unwrap();
            assert_eq!(k, k_expected, "ε = {fpp}");
            assert!(fpp_blocked(blocks, BLOCK_BITS, k, n) <= fpp);
            // No k does it with one block less.
            for other in 1..=20 {
                assert!(
                    fpp_blocked(blocks - 1, BLOCK_BITS, other, n) > fpp,
                    "k = {other}"
                );
            }
            let classic = optimal_num_bits(n, fpp).unwrap() as f64;
            let ratio = (blocks * BLOCK_BITS) as f64 / classic;
            assert!(ratio > 1.0 && ratio < 1.12, "ε = {fpp}: {ratio}");
        }
        assert_eq!(blocked_dimensions(1, 0.5).unwrap(), (1, 1));
        assert_eq!(blocked_dimensions(0, 0.5), Err(Error::ZeroCapacity));
        assert!(matches!(
            blocked_dimensions(10, f64::NAN),
            Err(Error::InvalidFpp(_))
        ));
        assert!(matches!(
            blocked_dimensions(1 << 40, 0.01),
            Err(Error::CapacityTooLarge { .. })
        ));
    }
}
