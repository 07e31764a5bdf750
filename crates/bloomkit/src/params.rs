//! Sizing and theory of the classic Bloom filter.
//!
//! Notation as in the seeds and the literature: m bits, n items, k hash functions,
//! ε the false-positive probability (FPP).
//!
//! After n insertions with k independent, uniform hash functions, a given bit is still 0
//! with probability `(1 − 1/m)^(kn)`; a query for an absent item is a false positive when
//! all k of its bits are 1 (Bloom 1970; the seeds' formula):
//!
//! ```text
//!     FPP = (1 − (1 − 1/m)^(kn))^k  ≈  (1 − e^(−kn/m))^k
//! ```
//!
//! The approximation is minimised by `k = (m/n) ln 2`, where each bit is 1 with
//! probability 1/2 and `FPP = 2^(−k)`; solving for m gives the seeds' sizing rule
//! `m = −n ln ε / (ln 2)²` (about 9.6 bits per item at ε = 1%).
//!
//! Strictly, `(1 − (1 − 1/m)^(kn))^k` assumes the k bits of a query are independent; it
//! slightly underestimates the true rate for very small m (Bose et al. 2008), which does not
//! matter at the sizes filters are used at.

use crate::error::Error;

/// ε when none is given: 1%, the rate the seeds' examples and most libraries default to
/// (about 9.6 bits per item in a classic filter).
pub const DEFAULT_FPP: f64 = 0.01;

/// The largest filter this crate builds: 2⁴⁰ bits (128 GiB). Beyond it a size is almost
/// certainly a mistake (an ε of 1e-300, a capacity in the quintillions).
pub const MAX_NUM_BITS: u64 = 1 << 40;

/// The most hash functions a filter may use. The optimal k is 1.44·log₂(1/ε), so 64
/// covers every ε down to 10⁻¹⁹.
pub const MAX_NUM_HASHES: u32 = 64;

/// Checks that `fpp` is a probability strictly between 0 and 1 (NaN is not).
pub fn validate_fpp(fpp: f64) -> Result<f64, Error> {
    if fpp > 0.0 && fpp < 1.0 {
        Ok(fpp)
    } else {
        Err(Error::InvalidFpp(fpp))
    }
}

/// The optimal number of bits for `capacity` items at false-positive probability `fpp`:
/// `m = ⌈−n ln ε / (ln 2)²⌉`.
///
/// The seeds' own program truncated instead of rounding up, so its table shows one bit
/// less (194 658 for n = 58 110 and ε = 0.2, where this gives 194 659).
///
/// ```
/// use bloomkit::params::optimal_num_bits;
/// assert_eq!(optimal_num_bits(58_110, 0.001).unwrap(), 835_482);
/// assert!(optimal_num_bits(0, 0.01).is_err());
/// assert!(optimal_num_bits(100, 1.5).is_err());
/// ```
pub fn optimal_num_bits(capacity: u64, fpp: f64) -> Result<u64, Error> {
    let fpp = validate_fpp(fpp)?;
    if capacity == 0 {
        return Err(Error::ZeroCapacity);
    }
    let ln2 = std::f64::consts::LN_2;
    let bits = (-(capacity as f64) * fpp.ln() / (ln2 * ln2)).ceil();
    // `as u64` saturates, so an absurd size stays absurd instead of wrapping.
    let bits = bits as u64;
    if bits > MAX_NUM_BITS {
        return Err(Error::TooLarge {
            bits,
            max: MAX_NUM_BITS,
        });
    }
    Ok(bits.max(1))
}

/// The optimal number of hash functions for `num_bits` bits and `capacity` items:
/// `k = max(1, round((m/n) ln 2))`, capped at [`MAX_NUM_HASHES`].
///
/// ```
/// use bloomkit::params::optimal_num_hashes;
/// assert_eq!(optimal_num_hashes(835_482, 58_110), 10);
/// assert_eq!(optimal_num_hashes(1, 1_000), 1);
/// ```
pub fn optimal_num_hashes(num_bits: u64, capacity: u64) -> u32 {
    let k = (num_bits as f64 / capacity.max(1) as f64 * std::f64::consts::LN_2).round();
    (k as u32).clamp(1, MAX_NUM_HASHES)
}

/// The exact false-positive probability after `items` insertions into `num_bits` bits with
/// `num_hashes` hash functions: `(1 − (1 − 1/m)^(kn))^k`.
///
/// Computed as `exp(kn · ln1p(−1/m))` so that it stays accurate for m in the billions,
/// where `1 − 1/m` would round.
///
/// ```
/// use bloomkit::params::fpp_exact;
/// let p = fpp_exact(835_482, 10, 58_110);
/// assert!((p - 0.001).abs() < 0.00002);
/// ```
pub fn fpp_exact(num_bits: u64, num_hashes: u32, items: u64) -> f64 {
    if num_bits == 0 {
        return 1.0;
    }
    let k = num_hashes as f64;
    let zero_fraction = (k * items as f64 * (-1.0 / num_bits as f64).ln_1p()).exp();
    (1.0 - zero_fraction).powf(k)
}

/// The usual approximation of [`fpp_exact`]: `(1 − e^(−kn/m))^k`.
pub fn fpp_approx(num_bits: u64, num_hashes: u32, items: u64) -> f64 {
    if num_bits == 0 {
        return 1.0;
    }
    let k = num_hashes as f64;
    (1.0 - (-k * items as f64 / num_bits as f64).exp()).powf(k)
}

/// The false-positive probability of a filter as it is now, from the number of bits set:
/// a random absent item hits k bits that are each set with probability X/m, so
/// `FPP ≈ (X/m)^k`. Unlike [`fpp_exact`], it needs no item count, so it stays right after
/// unions, duplicates and overfilling.
pub fn fpp_from_fill(set_bits: u64, num_bits: u64, num_hashes: u32) -> f64 {
    if num_bits == 0 {
        return 1.0;
    }
    (set_bits as f64 / num_bits as f64).powi(num_hashes as i32)
}

/// The number of distinct items a filter holds, estimated from the number of set bits X:
/// `n* = −(m/k) ln(1 − X/m)` (Swamidass & Baldi, "Mathematical correction for fingerprint
/// similarity measures to improve chemical retrieval", 2007). Inverts the expected fill
/// `m (1 − e^(−kn/m))`. A full filter gives `f64::INFINITY`.
///
/// ```
/// use bloomkit::params::estimate_items;
/// assert_eq!(estimate_items(0, 1000, 7), 0.0);
/// assert!(estimate_items(1000, 1000, 7).is_infinite());
/// ```
pub fn estimate_items(set_bits: u64, num_bits: u64, num_hashes: u32) -> f64 {
    if num_bits == 0 || num_hashes == 0 {
        return 0.0;
    }
    if set_bits >= num_bits {
        return f64::INFINITY;
    }
    let m = num_bits as f64;
    -(m / num_hashes as f64) * (-(set_bits as f64) / m).ln_1p()
}

/// An item count from an estimate such as [`estimate_items`], for the `len` of a filter
/// whose exact count is lost (after a union or intersection): rounded, and `u64::MAX` for a
/// full filter's infinite estimate.
pub fn count_from_estimate(estimate: f64) -> u64 {
    if estimate.is_finite() {
        estimate.round() as u64
    } else {
        u64::MAX
    }
}

/// The expected number of set bits after `items` insertions: `m (1 − (1 − 1/m)^(kn))`.
pub fn expected_set_bits(num_bits: u64, num_hashes: u32, items: u64) -> f64 {
    let m = num_bits as f64;
    m * (1.0 - (num_hashes as f64 * items as f64 * (-1.0 / m).ln_1p()).exp())
}

// ---------------------------------------------------------------------------------------
// Counting Bloom filter
// ---------------------------------------------------------------------------------------

/// An upper bound on the probability that some counter of a counting Bloom filter reaches
/// `threshold` after `items` insertions into `num_counters` counters with `num_hashes`
/// hash functions:
///
/// ```text
///     P(max_i c(i) ≥ j)  ≤  m · (e·nk / (j·m))^j
/// ```
///
/// A counter receives Binomial(nk, 1/m) increments, so `P(c(i) ≥ j) ≤ C(nk, j)·m^(−j) ≤
/// (e·nk / (j·m))^j`, and a union bound over the m counters gives the formula (Fan, Cao,
/// Almeida & Broder, "Summary Cache: A Scalable Wide-Area Web Cache Sharing Protocol",
/// IEEE/ACM Transactions on Networking 8(3), 2000). At the optimal `k = (m/n) ln 2` the
/// ratio nk/m is ln 2, and for 4-bit counters (j = 16) the bound is
/// `(e ln 2 / 16)^16 ≈ 1.37·10⁻¹⁵` per counter — the paper's reason why 4 bits suffice.
/// The result is capped at 1.
///
/// ```
/// use bloomkit::params::counter_overflow_bound;
/// // 10⁹ counters for 10⁸ items at the optimal k = 7: some counter reaches 16 with
/// // probability below 10⁻⁵ (about 1.6·10⁻⁶).
/// let (m, n) = (1_000_000_000u64, 100_000_000u64);
/// let k = (m as f64 / n as f64 * std::f64::consts::LN_2).round() as u32;
/// assert!(counter_overflow_bound(m, k, n, 16) < 1e-5);
/// ```
pub fn counter_overflow_bound(
    num_counters: u64,
    num_hashes: u32,
    items: u64,
    threshold: u32,
) -> f64 {
    if num_counters == 0 || threshold == 0 {
        return 1.0;
    }
    let m = num_counters as f64;
    let j = threshold as f64;
    let load = num_hashes as f64 * items as f64 / m;
    // m · (e·load/j)^j, in logarithms so that large j cannot overflow.
    let log_bound = m.ln() + j * (std::f64::consts::E * load / j).ln();
    log_bound.exp().min(1.0)
}

// ---------------------------------------------------------------------------------------
// Variable-increment counting Bloom filter
// ---------------------------------------------------------------------------------------

/// The probability that a query passes the test of one counter of a VI-CBF when that
/// counter holds exactly two increments, `1 − (L² − 1) / (6L²)`; see [`vi_fpp`].
fn vi_two_increment_pass(base: u32) -> f64 {
    let l = base as f64;
    1.0 - (l * l - 1.0) / (6.0 * l * l)
}

/// The false-positive probability of a variable-increment counting Bloom filter with
/// increments `D_L = {L, …, 2L − 1}` (Rottenstreich, Kanizo & Keslassy, "The
/// Variable-Increment Counting Bloom Filter", IEEE/ACM Transactions on Networking 22(4),
/// 2014; INFOCOM 2012), after `items` insertions into `num_counters` counters with
/// `num_hashes` hash functions, increments uniform on D_L and no counter saturated.
///
/// A query with increment v looks at a counter that received j ~ Binomial(nk, 1/m)
/// increments and passes it (answers "maybe" there) when the value c is v or `c − v ≥ L`:
///
/// * j = 0: c = 0, never passes.
/// * j = 1: c is one increment v′ ∈ D_L; `c − v ≤ L − 1`, so it passes only if v′ = v:
///   probability 1/L.
/// * j = 2: c = v₁ + v₂ ≥ 2L > v; it fails when `v₁ + v₂ − v < L`. Writing a, b, d for the
///   offsets of v₁, v₂, v in `{0, …, L−1}`, that is `d > a + b`, which
///   `Σ_{d<L} d(d+1)/2 = (L−1)L(L+1)/6` of the L³ triples satisfy: it passes with
///   probability `1 − (L² − 1)/(6L²)`.
/// * j ≥ 3: `c − v ≥ 3L − (2L − 1) > L`, always passes.
///
/// With p_j = C(nk, j)·m^(−j)·(1 − 1/m)^(nk−j) and the k counters of a query treated as
/// independent (as in Bloom's formula), the paper's approximation is
///
/// ```text
///     FPP = ( 1 − p₀ − p₁·(1 − 1/L) − p₂·(L² − 1)/(6L²) )^k
/// ```
///
/// For L = 1 (the single increment 1) it is the classic Bloom/CBF rate `(1 − p₀)^k`.
///
/// ```
/// use bloomkit::params::{fpp_exact, vi_fpp};
/// // Same number of counters, same k: the VI test rejects more.
/// assert!(vi_fpp(100_000, 5, 10_000, 4) < fpp_exact(100_000, 5, 10_000) / 3.0);
/// // L = 1 is the counting Bloom filter.
/// let (v, c) = (vi_fpp(1000, 3, 100, 1), fpp_exact(1000, 3, 100));
/// assert!((v - c).abs() < 1e-12);
/// ```
pub fn vi_fpp(num_counters: u64, num_hashes: u32, items: u64, base: u32) -> f64 {
    if num_counters == 0 || base == 0 {
        return 1.0;
    }
    let l = base as f64;
    let n_inc = num_hashes as f64 * items as f64; // nk increments in all
    let (p0, p1, p2) = if num_counters == 1 {
        // Every increment lands on the one counter: j = nk exactly.
        let is = |j: f64| if n_inc == j { 1.0 } else { 0.0 };
        (is(0.0), is(1.0), is(2.0))
    } else {
        let q = 1.0 / num_counters as f64;
        let ln_rest = (-q).ln_1p();
        (
            (n_inc * ln_rest).exp(),
            n_inc * q * ((n_inc - 1.0) * ln_rest).exp(),
            n_inc * (n_inc - 1.0) / 2.0 * q * q * ((n_inc - 2.0) * ln_rest).exp(),
        )
    };
    let pass = 1.0 - p0 - p1 * (1.0 - 1.0 / l) - p2 * (1.0 - vi_two_increment_pass(base));
    pass.clamp(0.0, 1.0).powi(num_hashes as i32)
}

/// How many of the L increments of `D_L = {L, …, 2L − 1}` pass the VI-CBF membership test
/// of a counter holding `value` (not saturated): v passes when `value = v` or
/// `value − v ≥ L`. A filter's false-positive probability now is the mean of
/// `vi_increments_passing / L` over its counters, to the power k (with saturated counters
/// passing every increment).
///
/// ```
/// use bloomkit::params::vi_increments_passing;
/// assert_eq!(vi_increments_passing(0, 4), 0);
/// assert_eq!(vi_increments_passing(5, 4), 1); // only v = 5
/// assert_eq!(vi_increments_passing(9, 4), 2); // v = 4 (9 − 4 ≥ 4) and v = 5
/// assert_eq!(vi_increments_passing(30, 4), 4);
/// ```
pub fn vi_increments_passing(value: u32, base: u32) -> u32 {
    if value == 0 || base == 0 {
        return 0;
    }
    let (low, high) = (base, 2 * base - 1);
    let exact = u32::from((low..=high).contains(&value));
    // v ≤ value − L, within D_L (and v = value is never in this range).
    let below = match value.checked_sub(base) {
        Some(limit) if limit >= low => limit.min(high) - low + 1,
        _ => 0,
    };
    exact + below
}

/// The k that minimises [`vi_fpp`] for `num_counters` counters and `capacity` items,
/// searched over `1..=MAX_NUM_HASHES` (the VI-CBF has no closed form for it; its optimum
/// is a little below the classic `(m/n) ln 2`).
///
/// ```
/// use bloomkit::params::vi_optimal_num_hashes;
/// assert_eq!(vi_optimal_num_hashes(50_000, 10_000, 4), 6);
/// ```
pub fn vi_optimal_num_hashes(num_counters: u64, capacity: u64, base: u32) -> u32 {
    (1..=MAX_NUM_HASHES)
        .map(|k| (k, vi_fpp(num_counters, k, capacity, base)))
        .fold(
            (1, f64::INFINITY),
            |best, (k, p)| if p < best.1 { (k, p) } else { best },
        )
        .0
}

/// The smallest number of counters m for which a VI-CBF with increments D_L, holding
/// `capacity` items with `num_hashes` hash functions or, if `None`, its best k for each m
/// ([`vi_optimal_num_hashes`]), has [`vi_fpp`] at most `fpp`. Found by binary search: the
/// rate falls as m grows, and the classic Bloom size [`optimal_num_bits`] is nearly always
/// enough with the best k, since a VI counter rejects every query a zero bit rejects and
/// more (the search doubles it when not, up to [`MAX_NUM_BITS`]).
///
/// ```
/// use bloomkit::params::{optimal_num_bits, vi_fpp, vi_optimal_num_counters, vi_optimal_num_hashes};
/// let m = vi_optimal_num_counters(10_000, 0.01, 4, None)?;
/// let k = vi_optimal_num_hashes(m, 10_000, 4);
/// assert!(vi_fpp(m, k, 10_000, 4) <= 0.01);
/// assert!(vi_fpp(m - 1, vi_optimal_num_hashes(m - 1, 10_000, 4), 10_000, 4) > 0.01);
/// assert!(m < optimal_num_bits(10_000, 0.01)? / 2);
/// # Ok::<(), bloomkit::Error>(())
/// ```
pub fn vi_optimal_num_counters(
    capacity: u64,
    fpp: f64,
    base: u32,
    num_hashes: Option<u32>,
) -> Result<u64, Error> {
    let fpp = validate_fpp(fpp)?;
    if capacity == 0 {
        return Err(Error::ZeroCapacity);
    }
    let best = |m: u64| {
        let k = num_hashes.unwrap_or_else(|| vi_optimal_num_hashes(m, capacity, base));
        vi_fpp(m, k, capacity, base)
    };
    let mut high = optimal_num_bits(capacity, fpp)?;
    while best(high) > fpp {
        if high >= MAX_NUM_BITS {
            return Err(Error::TooLarge {
                bits: high.saturating_mul(2),
                max: MAX_NUM_BITS,
            });
        }
        high = (high * 2).min(MAX_NUM_BITS);
    }
    // Invariant: best(high) ≤ fpp; every m below `low` fails.
    let mut low = 1;
    while low < high {
        let mid = low + (high - low) / 2;
        if best(mid) <= fpp {
            high = mid;
        } else {
            low = mid + 1;
        }
    }
    Ok(high)
}

/// The largest number of items a VI-CBF of `num_counters` counters can hold while
/// [`vi_fpp`] stays at most `fpp`, with `num_hashes` hash functions or, if `None`, the best
/// k for each candidate n. At least 1 (a filter too small for even one item at `fpp` is
/// still sized for one). Binary search: the rate grows with n.
///
/// ```
/// use bloomkit::params::{vi_capacity, vi_fpp};
/// let n = vi_capacity(100_000, Some(6), 0.01, 4);
/// assert!(vi_fpp(100_000, 6, n, 4) <= 0.01 && vi_fpp(100_000, 6, n + 1, 4) > 0.01);
/// ```
pub fn vi_capacity(num_counters: u64, num_hashes: Option<u32>, fpp: f64, base: u32) -> u64 {
    let rate = |n: u64| {
        let k = num_hashes.unwrap_or_else(|| vi_optimal_num_hashes(num_counters, n, base));
        vi_fpp(num_counters, k, n, base)
    };
    if rate(1) > fpp {
        return 1;
    }
    // Invariant: rate(low) ≤ fpp < rate(high) (or high is past any useful size).
    let (mut low, mut high) = (1u64, num_counters.max(2));
    while rate(high) <= fpp && high < u64::MAX / 4 {
        low = high;
        high *= 2;
    }
    while high - low > 1 {
        let mid = low + (high - low) / 2;
        if rate(mid) <= fpp {
            low = mid;
        } else {
            high = mid;
        }
    }
    low
}

// ---------------------------------------------------------------------------------------
// Deletable Bloom filter
// ---------------------------------------------------------------------------------------

/// The probability that an inserted item of a deletable Bloom filter can be removed: that at
/// least one of its k bits lies in a collision-free region.
///
/// `num_bits` is m, the whole array *including* the r-bit collision bitmap; the data part
/// has `m' = m − r` bits in r regions of `s = m'/r` bits (Rothenberg, Macapuna, Verdi &
/// Magalhães, "The Deletable Bloom Filter: A New Member of the Bloom Family", IEEE
/// Communications Letters 14(6), 2010).
///
/// # Model and derivation
///
/// The paper's model: an item x is deletable when at least one of its k bits lies in a
/// region in which no insertion ever found its bit already set. A region is collision-free
/// exactly when each of its cells was hit at most once by all `kn` bit settings. Fix x and
/// let the `T = k(n − 1)` settings of the other items be independent and uniform over the
/// m' data cells. Per cell (binomial occupancy):
///
/// ```text
///     q₀ = (1 − 1/m')^T                 no other setting hits the cell
///     q₁ = q₀ · (1 + T/(m' − 1))        at most one does  [= q₀ + T/m' (1 − 1/m')^(T−1)]
/// ```
///
/// If c of x's own k bits fall into a region, that region is collision-free when those c
/// cells are distinct, no other setting hits them, and each of the other `s − c` cells is
/// hit at most once; treating cells as independent,
///
/// ```text
///     p(c) = ∏_{i<c} (1 − i/s) · q₀^c · q₁^(s−c)
/// ```
///
/// With one bit per region (c = 1) and independent regions this is the paper's closed form
/// `P_d = 1 − (1 − p_c)^k` with `p_c = q₀ q₁^(s−1)` ([`deletable_probability_approx`]).
/// That form ignores that several of x's k bits often share a region (with r = 12
/// regions and k = 7 some two bits share one with probability 0.89), which makes their
/// "collision-free" events the same event and lowers the true P_d by up to about 0.07.
/// This function averages over where x's bits fall instead: the numbers `(c_1, …, c_r)` of
/// x's bits per region are multinomial(k; 1/r, …, 1/r), and with regions independent
///
/// ```text
///     1 − P_d = E[ ∏_j (1 − p(c_j)) ]   (the factor is 1 for c_j = 0)
///             = k! · [z^k] ( Σ_{c=0..k} (1 − p(c)) (z/r)^c / c! )^r
/// ```
///
/// (the exponential generating function of the multinomial), computed by raising a
/// polynomial truncated at degree k to the power r by repeated squaring: O(k² log r).
/// The remaining approximations — cells and regions treated as independent, regions of
/// equal size — are checked by the paper test in `tests/deletable.rs`: with k independent
/// hashes the measured fraction is within 0.007 of this value; enhanced double hashing,
/// whose k positions are correlated, lowers it by up to 0.011 when r is small.
///
/// `items = 0` is treated as a single item. Returns a value in [0, 1].
///
/// ```
/// use bloomkit::params::deletable_probability;
/// // Few items in small regions: nearly everything can be removed.
/// assert!(deletable_probability(16_384 + 2_048, 7, 100, 2_048) > 0.999);
/// // Sixteen regions of ~600 bits at capacity: almost nothing can.
/// assert!(deletable_probability(9_586 + 16, 7, 1_000, 16) < 1e-6);
/// ```
pub fn deletable_probability(num_bits: u64, num_hashes: u32, items: u64, regions: u64) -> f64 {
    let Some(cells) = DeletableCells::new(num_bits, num_hashes, items, regions) else {
        return 0.0;
    };
    let k = num_hashes as usize;
    let r = regions as f64;
    // b_c = (1 − p(c)) / (c! r^c): the EGF of one region, scaled so that B(z)^r needs no r^k.
    let mut base = vec![0.0; k + 1];
    let mut scale = 1.0; // 1 / (c! r^c)
    for (c, b) in base.iter_mut().enumerate() {
        if c > 0 {
            scale /= c as f64 * r;
        }
        let fail = if c == 0 {
            1.0
        } else {
            1.0 - cells.region_free(c as u32)
        };
        *b = fail * scale;
    }
    let product = truncated_power(&base, regions);
    let factorial: f64 = (1..=k).map(|i| i as f64).product();
    (1.0 - factorial * product[k]).clamp(0.0, 1.0)
}

/// The paper's closed form of the deletable probability, `P_d = 1 − (1 − p_c)^k` with
/// `p_c = q₀ q₁^(s−1)` the probability that the region of one of the item's bits is
/// collision-free (see [`deletable_probability`] for q₀, q₁ and s). It treats the k bits as
/// lying in k different, independent regions, which overestimates P_d when r is small
/// compared with k²; kept for comparison.
pub fn deletable_probability_approx(
    num_bits: u64,
    num_hashes: u32,
    items: u64,
    regions: u64,
) -> f64 {
    let Some(cells) = DeletableCells::new(num_bits, num_hashes, items, regions) else {
        return 0.0;
    };
    let p_c = cells.region_free(1);
    (1.0 - (1.0 - p_c).powi(num_hashes as i32)).clamp(0.0, 1.0)
}

/// The per-cell quantities of the deletable-probability model.
struct DeletableCells {
    /// s, data bits per region.
    region_bits: f64,
    /// ln q₀.
    ln_q0: f64,
    /// ln q₁.
    ln_q1: f64,
}

impl DeletableCells {
    fn new(num_bits: u64, num_hashes: u32, items: u64, regions: u64) -> Option<Self> {
        if regions == 0 || num_hashes == 0 || num_bits <= regions {
            return None;
        }
        let data = (num_bits - regions) as f64;
        let others = num_hashes as f64 * items.saturating_sub(1) as f64;
        let (ln_q0, ln_q1) = if data <= 1.0 {
            // One data cell: any other setting hits it; two or more always collide.
            let q0: f64 = if others == 0.0 { 1.0 } else { 0.0 };
            let q1: f64 = if others <= 1.0 { 1.0 } else { 0.0 };
            (q0.ln(), q1.ln())
        } else {
            let ln_q0 = others * (-1.0 / data).ln_1p();
            (ln_q0, ln_q0 + (others / (data - 1.0)).ln_1p())
        };
        Some(Self {
            region_bits: data / regions as f64,
            ln_q0,
            ln_q1,
        })
    }

    /// p(c): the region holding c of the item's bits is collision-free.
    fn region_free(&self, c: u32) -> f64 {
        let s = self.region_bits;
        let c_f = c as f64;
        if c_f > s {
            return 0.0;
        }
        let distinct: f64 = (0..c).map(|i| (1.0 - i as f64 / s).max(0.0)).product();
        if distinct == 0.0 {
            return 0.0;
        }
        (distinct.ln() + c_f * self.ln_q0 + (s - c_f) * self.ln_q1).exp()
    }
}

/// `base(z)^power` truncated at the degree of `base`, by repeated squaring.
fn truncated_power(base: &[f64], mut power: u64) -> Vec<f64> {
    let degree = base.len();
    let multiply = |a: &[f64], b: &[f64]| {
        let mut out = vec![0.0; degree];
        for (i, &x) in a.iter().enumerate() {
            if x != 0.0 {
                for (j, &y) in b.iter().take(degree - i).enumerate() {
                    out[i + j] += x * y;
                }
            }
        }
        out
    };
    let mut result = vec![0.0; degree];
    result[0] = 1.0;
    let mut square = base.to_vec();
    while power > 0 {
        if power & 1 == 1 {
            result = multiply(&result, &square);
        }
        power >>= 1;
        if power > 0 {
            square = multiply(&square, &square);
        }
    }
    result
}

// ---------------------------------------------------------------------------------------
// Stable Bloom filter
// ---------------------------------------------------------------------------------------

/// The fraction of zero cells of a stable Bloom filter at its stable point (Deng &
/// Rafiei, "Approximately Detecting Duplicates for Streaming Data using Stable Bloom
/// Filters", SIGMOD 2006, the stable-point analysis):
///
/// ```text
///     Pr(0) = ( 1 / (1 + 1/(P (1/K − 1/m))) )^Max
/// ```
///
/// for m cells, K hash functions, P cells decremented per insertion and cells of d bits,
/// `Max = 2^d − 1`. Why: looking back in time from a cell, each insertion either sets it
/// to Max (probability K/m) or, failing that, decrements it (probability
/// `(1 − K/m) P/m`); the cell is 0 exactly when Max decrements come before the last set,
/// which happens with probability `(b/(a + b))^Max` for `a = K/m`,
/// `b = (1 − K/m) P/m`, and `a/b = 1/(P (1/K − 1/m))`. The limit is reached
/// exponentially fast and does not depend on the initial content.
///
/// Needs `m > K` (otherwise `1/K − 1/m ≤ 0` and every cell is set at every step: 0 is
/// returned).
///
/// ```
/// use bloomkit::params::stable_zero_fraction;
/// let p0 = stable_zero_fraction(100_000, 7, 64, 7);
/// assert!((p0 - 0.4835).abs() < 1e-3, "{p0}");
/// ```
pub fn stable_zero_fraction(num_cells: u64, num_hashes: u32, decrements: u64, max: u32) -> f64 {
    let (m, k, p) = (num_cells as f64, num_hashes as f64, decrements as f64);
    let x = p * (1.0 / k - 1.0 / m);
    if x.is_nan() || x <= 0.0 {
        return 0.0;
    }
    // (1/(1 + 1/x))^Max, as exp(−Max · ln(1 + 1/x)) for precision when x is large.
    (-(max as f64) * (1.0 / x).ln_1p()).exp()
}

/// The false-positive probability of a stable Bloom filter at its stable point: a fresh
/// item's K cells are all non-zero, `FPS = (1 − Pr(0))^K` (Deng & Rafiei 2006, eq. for
/// the stable-point FP rate), with [`stable_zero_fraction`] for Pr(0).
///
/// ```
/// use bloomkit::params::stable_fpp;
/// assert!((stable_fpp(100_000, 7, 64, 7) - 0.0098).abs() < 1e-4);
/// ```
pub fn stable_fpp(num_cells: u64, num_hashes: u32, decrements: u64, max: u32) -> f64 {
    (1.0 - stable_zero_fraction(num_cells, num_hashes, decrements, max)).powi(num_hashes as i32)
}

/// The number P of cells to decrement per insertion for which a stable Bloom filter of m
/// cells, K hash functions and cell maximum Max settles at false-positive probability
/// `fpp` — [`stable_fpp`] solved for P (Deng & Rafiei 2006, the formula for P given FPS):
///
/// ```text
///     P = 1 / ( ( (1 − FPS^(1/K))^(−1/Max) − 1 ) · (1/K − 1/m) )
/// ```
///
/// A real number; a filter rounds it up (at least 1), so that its stable FPR is at most ε.
/// `None` when `m ≤ K`, when `fpp` is not in (0, 1), or when the result is not finite.
///
/// ```
/// use bloomkit::params::{stable_decrements_for_fpp, stable_fpp};
/// let p = stable_decrements_for_fpp(100_000, 7, 7, 0.01).unwrap();
/// assert!((p - 63.7).abs() < 0.1, "{p}");
/// let rounded_up = stable_fpp(100_000, 7, p.ceil() as u64, 7);
/// assert!(rounded_up <= 0.01 && rounded_up > 0.0097, "{rounded_up}");
/// ```
pub fn stable_decrements_for_fpp(
    num_cells: u64,
    num_hashes: u32,
    max: u32,
    fpp: f64,
) -> Option<f64> {
    if !(fpp > 0.0 && fpp < 1.0) || num_hashes == 0 || num_cells <= num_hashes as u64 || max == 0 {
        return None;
    }
    let (m, k) = (num_cells as f64, num_hashes as f64);
    // 1 − FPS^(1/K) = Pr(0); (Pr(0))^(−1/Max) − 1 = expm1(−ln Pr(0) / Max).
    let zero_fraction = -(fpp.ln() / k).exp_m1();
    let ratio = (-zero_fraction.ln() / max as f64).exp_m1();
    let p = 1.0 / (ratio * (1.0 / k - 1.0 / m));
    (p.is_finite() && p > 0.0).then_some(p)
}

// ---------------------------------------------------------------------------------------
// Scalable Bloom filter
// ---------------------------------------------------------------------------------------

/// The error ε₀ of the first layer of a scalable Bloom filter that must stay below `fpp`
/// overall with tightening ratio `tightening` (r): `ε₀ = ε (1 − r)`.
///
/// Layer i has error `ε₀ rⁱ`; a query is a false positive when some layer says "maybe", so
/// by the union bound the compound error is at most `Σ ε₀ rⁱ = ε₀ / (1 − r)`, which this
/// choice makes equal to ε (Almeida, Baquero, Preguiça & Hutchison, "Scalable Bloom
/// Filters", Information Processing Letters 101(6), 2007).
///
/// ```
/// use bloomkit::params::scalable_initial_fpp;
/// assert!((scalable_initial_fpp(0.01, 0.5) - 0.005).abs() < 1e-15);
/// assert!((scalable_initial_fpp(0.01, 0.9) - 0.001).abs() < 1e-15);
/// ```
pub fn scalable_initial_fpp(fpp: f64, tightening: f64) -> f64 {
    fpp * (1.0 - tightening)
}

/// The error of layer `layer` (counted from 0) of a scalable Bloom filter: `ε₀ · rⁱ`
/// (Almeida et al. 2007). Computed by repeated multiplication so that a filter and its
/// decoded copy get bit-identical values.
pub fn scalable_layer_fpp(initial_fpp: f64, tightening: f64, layer: u32) -> f64 {
    (0..layer).fold(initial_fpp, |fpp, _| fpp * tightening)
}

/// The capacity of layer `layer` (counted from 0) of a scalable Bloom filter: `n₀ · sⁱ`
/// (Almeida et al. 2007), or `None` if it does not fit in a `u64`.
///
/// ```
/// use bloomkit::params::scalable_layer_capacity;
/// assert_eq!(scalable_layer_capacity(1000, 2, 3), Some(8000));
/// assert_eq!(scalable_layer_capacity(1000, 4, 2), Some(16_000));
/// assert_eq!(scalable_layer_capacity(1000, 2, 64), None);
/// ```
pub fn scalable_layer_capacity(initial_capacity: u64, growth: u32, layer: u32) -> Option<u64> {
    (growth as u64)
        .checked_pow(layer)
        .and_then(|g| g.checked_mul(initial_capacity))
}

/// The bound on the false-positive probability of a scalable Bloom filter with `layers`
/// layers: `Σ_{i<L} ε₀ rⁱ = ε₀ (1 − r^L) / (1 − r)`, which stays below `ε₀ / (1 − r)` however
/// many layers are added (union bound; Almeida et al. 2007). The union bound
/// holds whether or not the layers' answers are independent.
///
/// ```
/// use bloomkit::params::scalable_fpp_bound;
/// assert!((scalable_fpp_bound(0.005, 0.5, 1) - 0.005).abs() < 1e-15);
/// assert!((scalable_fpp_bound(0.005, 0.5, 2) - 0.0075).abs() < 1e-15);
/// assert!(scalable_fpp_bound(0.005, 0.5, 60) <= 0.01);
/// ```
pub fn scalable_fpp_bound(initial_fpp: f64, tightening: f64, layers: u32) -> f64 {
    (0..layers)
        .map(|i| scalable_layer_fpp(initial_fpp, tightening, i))
        .sum()
}

/// The number of layers a scalable Bloom filter needs for `items` insertions that each
/// changed it, when a layer is full once it has taken its capacity: the smallest `L ≥ 1`
/// with `n₀ (s^L − 1) / (s − 1) ≥ items` (the total capacity of L layers of capacities
/// `n₀, n₀s, …, n₀s^(L−1)`). Growth factors below 2 are treated as 2.
///
/// ```
/// use bloomkit::params::scalable_num_layers;
/// assert_eq!(scalable_num_layers(0, 1000, 2), 1);
/// assert_eq!(scalable_num_layers(1000, 1000, 2), 1);
/// assert_eq!(scalable_num_layers(1001, 1000, 2), 2);
/// assert_eq!(scalable_num_layers(100_000, 1000, 2), 7); // 1000 · (2⁷ − 1) = 127 000
/// assert_eq!(scalable_num_layers(85_000, 1000, 4), 4); // 1000 · (4⁴ − 1) / 3 = 85 000
/// assert_eq!(scalable_num_layers(100_000, 1000, 4), 5);
/// ```
pub fn scalable_num_layers(items: u64, initial_capacity: u64, growth: u32) -> u32 {
    let initial_capacity = initial_capacity.max(1);
    let growth = growth.max(2) as u64;
    let (mut layers, mut total, mut next) = (1u32, initial_capacity, initial_capacity);
    while total < items {
        next = next.saturating_mul(growth);
        total = total.saturating_add(next);
        layers += 1;
    }
    layers
}

// ---------------------------------------------------------------------------------------
// Cuckoo filter
// ---------------------------------------------------------------------------------------

/// The load factor α a cuckoo filter is sized for: with buckets of 4 slots, partial-key
/// cuckoo hashing fills about 95% of the slots before an insertion fails (Fan, Andersen,
/// Kaminsky & Mitzenmacher, "Cuckoo Filter: Practically Better Than Bloom", CoNEXT 2014,
/// where it measures the load factor).
pub const CUCKOO_TARGET_LOAD: f64 = 0.95;

/// The fingerprint widths (in bits) a cuckoo filter supports.
pub const CUCKOO_FINGERPRINT_BITS: [u32; 3] = [8, 12, 16];

/// The false-positive probability of a cuckoo filter with `fingerprint_bits`-bit
/// fingerprints (f), buckets of `bucket_size` slots (b) and load factor `load` (α):
///
/// ```text
///     ε = 1 − (1 − 1/2^f)^(2bα)
/// ```
///
/// A query compares its fingerprint with the 2bα occupied slots (on average) of its two
/// buckets, each a match with probability 2^−f (Fan et al., CoNEXT 2014, with
/// the occupancy α). At full load it is at most `2b / 2^f` ([`cuckoo_fpp_bound`]).
///
/// ```
/// use bloomkit::params::cuckoo_fpp;
/// let p = cuckoo_fpp(8, 4, 0.95);
/// assert!((p - 0.0293).abs() < 1e-4);
/// assert_eq!(cuckoo_fpp(12, 4, 0.0), 0.0);
/// ```
pub fn cuckoo_fpp(fingerprint_bits: u32, bucket_size: u32, load: f64) -> f64 {
    let per_slot = (-(fingerprint_bits as f64)).exp2();
    let compared = 2.0 * bucket_size as f64 * load.clamp(0.0, 1.0);
    -(compared * (-per_slot).ln_1p()).exp_m1()
}

/// The upper bound `2b / 2^f` on a cuckoo filter's false-positive probability: 2b slots are
/// compared, each a match with probability 2^−f (Fan et al., CoNEXT 2014).
///
/// ```
/// use bloomkit::params::cuckoo_fpp_bound;
/// assert_eq!(cuckoo_fpp_bound(8, 4), 8.0 / 256.0);
/// ```
pub fn cuckoo_fpp_bound(fingerprint_bits: u32, bucket_size: u32) -> f64 {
    2.0 * bucket_size as f64 / (fingerprint_bits as f64).exp2()
}

/// The smallest supported fingerprint width f ∈ {8, 12, 16} with `2b / 2^f ≤ fpp`, or
/// `None` if even 16 bits do not reach `fpp` (the bound f ≥ log₂(2b/ε) of Fan et al.,
/// CoNEXT 2014).
///
/// ```
/// use bloomkit::params::cuckoo_fingerprint_bits;
/// assert_eq!(cuckoo_fingerprint_bits(0.05, 4), Some(8));
/// assert_eq!(cuckoo_fingerprint_bits(0.01, 4), Some(12));
/// assert_eq!(cuckoo_fingerprint_bits(0.001, 4), Some(16));
/// assert_eq!(cuckoo_fingerprint_bits(1e-5, 4), None);
/// ```
pub fn cuckoo_fingerprint_bits(fpp: f64, bucket_size: u32) -> Option<u32> {
    CUCKOO_FINGERPRINT_BITS
        .into_iter()
        .find(|&f| cuckoo_fpp_bound(f, bucket_size) <= fpp)
}

/// The number of buckets for `capacity` items in buckets of `bucket_size` slots at load
/// factor `load`: the next power of two `≥ ⌈n / (b·α)⌉` (a power of two so that the
/// alternate bucket `i ⊕ h(fp)` stays in range), or `None` past `2⁶³`.
///
/// ```
/// use bloomkit::params::cuckoo_num_buckets;
/// assert_eq!(cuckoo_num_buckets(1, 4, 0.95), Some(1));
/// assert_eq!(cuckoo_num_buckets(3_891, 4, 0.95), Some(1024)); // 1024 · 4 · 0.95 = 3 891.2
/// assert_eq!(cuckoo_num_buckets(3_892, 4, 0.95), Some(2048));
/// ```
pub fn cuckoo_num_buckets(capacity: u64, bucket_size: u32, load: f64) -> Option<u64> {
    let needed = (capacity as f64 / (bucket_size.max(1) as f64 * load)).ceil();
    if needed.is_nan() || needed >= 9.2e18 {
        return None;
    }
    (needed as u64).max(1).checked_next_power_of_two()
}

// ---------------------------------------------------------------------------------------
// Blocked Bloom filter
// ---------------------------------------------------------------------------------------

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
/// [`Error::TooLarge`] if more than [`MAX_NUM_BLOCKS`] would be needed.
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
    let (mut low, mut high) = (1u64, num_blocks.saturating_mul(BLOCK_BITS).max(2));
    if !meets(low) {
        return 1;
    }
    if meets(high) {
        return high;
    }
    // low meets, high fails.
    while high - low > 1 {
        let mid = low + (high - low) / 2;
        if meets(mid) {
            low = mid;
        } else {
            high = mid;
        }
    }
    low
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
    while high - low > 1 {
        let mid = low + (high - low) / 2;
        if meets(mid) {
            high = mid;
        } else {
            low = mid;
        }
    }
    Some(high)
}

fn too_large_for(capacity: u64, fpp: f64) -> Error {
    let classic = -(capacity as f64) * fpp.ln() / (std::f64::consts::LN_2.powi(2));
    Error::TooLarge {
        bits: (classic as u64).max(MAX_NUM_BITS.saturating_add(1)),
        max: MAX_NUM_BITS,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seed 000, table 1: n = 58 110 words. The seed's program truncated m; the formula
    /// rounded up gives one more bit.
    #[test]
    fn sizing_matches_seed_000_table() {
        let n = 58_110;
        let table = [
            (0.2, 194_658u64),
            (0.05, 362_328),
            (0.01, 556_987),
            (0.001, 835_481),
            (0.0001, 1_113_975),
        ];
        for (fpp, seed_m) in table {
            assert_eq!(optimal_num_bits(n, fpp).unwrap(), seed_m + 1, "ε = {fpp}");
        }
        let m = optimal_num_bits(n, 0.001).unwrap();
        assert_eq!(optimal_num_hashes(m, n), 10);
    }

    #[test]
    fn optimal_parameters_reach_the_requested_fpp() {
        for fpp in [0.5, 0.1, 0.01, 1e-3, 1e-4, 1e-6] {
            let n = 10_000;
            let m = optimal_num_bits(n, fpp).unwrap();
            let k = optimal_num_hashes(m, n);
            let p = fpp_exact(m, k, n);
            // Rounding k costs a little; 10% relative is far more than it can.
            assert!(p < fpp * 1.1, "ε = {fpp}: m = {m}, k = {k}, p = {p}");
            assert!(p > fpp * 0.8, "ε = {fpp}: m = {m}, k = {k}, p = {p}");
        }
    }

    #[test]
    fn exact_and_approximate_fpp_agree_for_large_m() {
        let (m, k, n) = (10_000_000, 7, 1_000_000);
        let (e, a) = (fpp_exact(m, k, n), fpp_approx(m, k, n));
        assert!((e - a).abs() / e < 1e-5, "{e} vs {a}");
    }

    #[test]
    fn exact_fpp_differs_from_the_approximation_for_tiny_m() {
        // m = 2, k = 1, n = 1: exactly 1/2; the approximation says 1 − e^(−1/2) ≈ 0.393.
        assert!((fpp_exact(2, 1, 1) - 0.5).abs() < 1e-12);
        assert!((fpp_approx(2, 1, 1) - 0.393_469).abs() < 1e-6);
    }

    #[test]
    fn estimate_inverts_the_expected_fill() {
        for n in [1u64, 10, 1000, 50_000] {
            let (m, k) = (1_000_000, 5);
            let x = expected_set_bits(m, k, n);
            let est = estimate_items(x.round() as u64, m, k);
            assert!(
                (est - n as f64).abs() <= 1.0 + n as f64 * 1e-4,
                "n {n}: est {est}"
            );
        }
    }

    #[test]
    fn degenerate_inputs_are_errors() {
        for fpp in [0.0, 1.0, -0.1, 1.5, f64::NAN, f64::INFINITY] {
            assert!(
                matches!(optimal_num_bits(10, fpp), Err(Error::InvalidFpp(_))),
                "ε = {fpp}"
            );
        }
        assert_eq!(optimal_num_bits(0, 0.1), Err(Error::ZeroCapacity));
        assert!(matches!(
            optimal_num_bits(u64::MAX, 1e-300),
            Err(Error::TooLarge { .. })
        ));
        assert!(matches!(
            optimal_num_bits(1 << 40, 0.01),
            Err(Error::TooLarge { .. })
        ));
    }

    #[test]
    fn overflow_bound_matches_fan_et_al_for_4_bit_counters() {
        // m = 1, nk/m = ln 2 (the optimal k), j = 16: (e ln 2 / 16)^16 ≈ 1.37e-15.
        let per_counter = {
            let x: f64 = std::f64::consts::E * std::f64::consts::LN_2 / 16.0;
            x.powi(16)
        };
        assert!((per_counter - 1.37e-15).abs() < 0.01e-15, "{per_counter}");
        // 10⁶ counters at k = (m/n) ln 2 exactly (n chosen so that nk/m = ln 2 with k = 7).
        let (m, k) = (1_000_000u64, 7u32);
        let n = (m as f64 * std::f64::consts::LN_2 / k as f64).round() as u64;
        let bound = counter_overflow_bound(m, k, n, 16);
        assert!(
            (bound / (per_counter * m as f64) - 1.0).abs() < 1e-3,
            "{bound}"
        );
        assert_eq!(counter_overflow_bound(10, 50, 1000, 2), 1.0);
    }

    /// The constants of `vi_fpp` follow from the membership rule itself: averaging
    /// `vi_increments_passing` over every counter made of one (two) increments gives 1/L
    /// (1 − (L² − 1)/(6L²)).
    #[test]
    fn vi_pass_probabilities_follow_from_the_membership_rule() {
        for base in 1u32..=9 {
            let l = base as f64;
            let d = base..2 * base;
            let one: f64 = d
                .clone()
                .map(|c| vi_increments_passing(c, base) as f64)
                .sum::<f64>()
                / (l * l);
            assert!((one - 1.0 / l).abs() < 1e-12, "L = {base}: {one}");
            let two: f64 = d
                .clone()
                .flat_map(|a| d.clone().map(move |b| a + b))
                .map(|c| vi_increments_passing(c, base) as f64)
                .sum::<f64>()
                / (l * l * l);
            assert!(
                (two - vi_two_increment_pass(base)).abs() < 1e-12,
                "L = {base}: {two}"
            );
            // Three or more increments always pass.
            assert_eq!(vi_increments_passing(3 * base, base), base);
        }
    }

    #[test]
    fn vi_fpp_is_below_the_counting_rate_at_the_same_counters_and_falls_with_m() {
        for k in 1..10 {
            let (v, c) = (vi_fpp(50_000, k, 10_000, 4), fpp_exact(50_000, k, 10_000));
            assert!(v < c, "k = {k}: {v} vs {c}");
            assert!(vi_fpp(60_000, k, 10_000, 4) < v);
        }
        assert_eq!(vi_fpp(1, 1, 1, 4), 0.25);
        assert_eq!(vi_fpp(1, 1, 0, 4), 0.0);
        assert_eq!(vi_fpp(1, 1, 3, 4), 1.0);
        assert_eq!(vi_fpp(0, 1, 3, 4), 1.0);
    }

    #[test]
    fn vi_sizing_reaches_the_target_and_no_smaller_m_does() {
        for fpp in [0.1, 0.01, 0.001] {
            let n = 5_000;
            let m = vi_optimal_num_counters(n, fpp, 4, None).unwrap();
            let k = vi_optimal_num_hashes(m, n, 4);
            assert!(vi_fpp(m, k, n, 4) <= fpp);
            let k1 = vi_optimal_num_hashes(m - 1, n, 4);
            assert!(vi_fpp(m - 1, k1, n, 4) > fpp);
            let cap = vi_capacity(m, Some(k), fpp, 4);
            assert!(cap >= n, "ε = {fpp}: capacity {cap}");
        }
        assert!(matches!(
            vi_optimal_num_counters(u64::MAX, 0.01, 4, None),
            Err(Error::TooLarge { .. })
        ));
        assert_eq!(
            vi_optimal_num_counters(0, 0.01, 4, None),
            Err(Error::ZeroCapacity)
        );
        assert!(vi_optimal_num_counters(10, f64::NAN, 4, None).is_err());
        // A fixed k: the smallest m for that k.
        let m = vi_optimal_num_counters(1000, 0.01, 4, Some(2)).unwrap();
        assert!(vi_fpp(m, 2, 1000, 4) <= 0.01 && vi_fpp(m - 1, 2, 1000, 4) > 0.01);
        assert!(matches!(
            vi_optimal_num_counters(1 << 30, 1e-15, 4, Some(1)),
            Err(Error::TooLarge { .. })
        ));
        assert_eq!(vi_capacity(1, Some(3), 1e-9, 4), 1);
    }

    #[test]
    fn deletable_probability_matches_hand_computed_cases() {
        // One item, no other settings: deletable unless its own bits collide.
        // m' = 1000 data bits in r = 1000 regions of one bit: p(1) = 1, p(2) = 0.
        // k = 2: not deletable only if both bits hit the same cell: 1/1000.
        let p = deletable_probability(2000, 2, 1, 1000);
        assert!((p - 0.999).abs() < 1e-9, "{p}");
        // One region (r = 1): the item is deletable iff the whole data part is
        // collision-free: P_d = p(k) exactly.
        let (m, k, n) = (1001u64, 3u32, 5u64);
        let data = 1000.0f64;
        let t = (k as f64) * (n - 1) as f64;
        let q0 = (1.0 - 1.0 / data).powf(t);
        let q1 = q0 + t / data * (1.0 - 1.0 / data).powf(t - 1.0);
        let want = (1.0 - 1.0 / data) * (1.0 - 2.0 / data) * q0.powi(3) * q1.powf(data - 3.0);
        let got = deletable_probability(m, k, n, 1);
        assert!((got - want).abs() < 1e-12, "{got} vs {want}");
    }

    #[test]
    fn deletable_probability_falls_with_load_and_rises_with_regions() {
        let (m_data, k) = (16_384u64, 7u32);
        let mut last = 1.0;
        for n in [1u64, 50, 100, 200, 400, 800, 1700] {
            let p = deletable_probability(m_data + 64, k, n, 64);
            assert!(p <= last + 1e-12, "n = {n}: {p} > {last}");
            assert!((0.0..=1.0).contains(&p));
            last = p;
        }
        let few = deletable_probability(m_data + 16, k, 400, 16);
        let many = deletable_probability(m_data + 2048, k, 400, 2048);
        assert!(few < 0.01 && many > 0.99, "{few} {many}");
    }

    #[test]
    fn deletable_approximation_agrees_when_regions_are_many() {
        // r ≫ k²: the item's bits almost never share a region.
        let (m, k, n, r) = (1_000_000u64 + 100_000, 7u32, 60_000u64, 100_000u64);
        let exact = deletable_probability(m, k, n, r);
        let approx = deletable_probability_approx(m, k, n, r);
        assert!((exact - approx).abs() < 1e-3, "{exact} vs {approx}");
        // r = 12, k = 7: the approximation is visibly too optimistic.
        let exact = deletable_probability(16_384 + 12, 7, 100, 12);
        let approx = deletable_probability_approx(16_384 + 12, 7, 100, 12);
        assert!(approx - exact > 0.03, "{exact} vs {approx}");
    }

    #[test]
    fn deletable_probability_of_degenerate_inputs_is_zero() {
        assert_eq!(deletable_probability(10, 3, 5, 0), 0.0);
        assert_eq!(deletable_probability(10, 0, 5, 2), 0.0);
        assert_eq!(deletable_probability(10, 3, 5, 10), 0.0);
        assert_eq!(deletable_probability_approx(10, 3, 5, 10), 0.0);
        // Huge inputs stay finite.
        let p = deletable_probability(MAX_NUM_BITS, 64, u64::MAX, 1 << 30);
        assert!((0.0..=1.0).contains(&p), "{p}");
    }

    #[test]
    fn stable_point_formulas_invert_each_other() {
        for (m, k, max, fpp) in [
            (100_000u64, 7u32, 7u32, 0.01),
            (10_000, 3, 1, 0.1),
            (1 << 30, 10, 15, 0.001),
            (50, 4, 3, 0.2),
        ] {
            let p = stable_decrements_for_fpp(m, k, max, fpp).unwrap();
            // stable_fpp takes an integer P; evaluate the paper's formula at the real P.
            let x = p * (1.0 / k as f64 - 1.0 / m as f64);
            let p0 = (1.0 / (1.0 + 1.0 / x)).powi(max as i32);
            let back = (1.0 - p0).powi(k as i32);
            assert!(
                (back - fpp).abs() < 1e-9 * fpp.max(1e-3),
                "{m} {k} {max} {fpp}: {back}"
            );
        }
        assert_eq!(stable_decrements_for_fpp(7, 7, 7, 0.01), None);
        assert_eq!(stable_decrements_for_fpp(100, 7, 7, 0.0), None);
        assert_eq!(stable_decrements_for_fpp(100, 7, 7, f64::NAN), None);
        assert_eq!(stable_zero_fraction(7, 7, 3, 7), 0.0);
    }

    #[test]
    fn stable_zero_fraction_behaves_at_the_extremes() {
        // More decrements: more zeros; larger Max: fewer zeros.
        let base = stable_zero_fraction(10_000, 5, 10, 3);
        assert!(stable_zero_fraction(10_000, 5, 100, 3) > base);
        assert!(stable_zero_fraction(10_000, 5, 10, 7) < base);
        // Max = 1: Pr(0) = b/(a + b) = P(1/K − 1/m) / (1 + P(1/K − 1/m)).
        let x = 10.0 * (1.0 / 5.0 - 1.0 / 10_000.0);
        assert!((stable_zero_fraction(10_000, 5, 10, 1) - x / (1.0 + x)).abs() < 1e-12);
        assert!(stable_fpp(10_000, 5, 10, 3) > 0.0 && stable_fpp(10_000, 5, 10, 3) < 1.0);
    }

    #[test]
    fn scalable_bound_never_passes_the_requested_fpp() {
        for (fpp, r) in [(0.01, 0.5), (0.001, 0.5), (0.01, 0.9), (0.1, 0.25)] {
            let e0 = scalable_initial_fpp(fpp, r);
            let mut previous = 0.0;
            for layers in 1..80 {
                let bound = scalable_fpp_bound(e0, r, layers);
                assert!(bound <= fpp * (1.0 + 1e-12), "ε {fpp}, r {r}, L {layers}");
                assert!(bound >= previous);
                previous = bound;
            }
            // It approaches ε: with r = 0.5, 20 layers are within 10⁻⁶ relative.
            if r == 0.5 {
                assert!(scalable_fpp_bound(e0, r, 20) > fpp * (1.0 - 1e-6));
            }
        }
    }

    #[test]
    fn scalable_layer_count_follows_the_growth_law() {
        for (n0, s) in [(1u64, 2u32), (1000, 2), (1000, 4), (7, 4)] {
            for items in [0u64, 1, n0, n0 + 1, 10 * n0, 100 * n0, 12345] {
                let layers = scalable_num_layers(items, n0, s);
                let total = |l: u32| (0..l).map(|i| n0 * (s as u64).pow(i)).sum::<u64>();
                assert!(total(layers) >= items, "{n0} {s} {items}");
                assert!(layers == 1 || total(layers - 1) < items, "{n0} {s} {items}");
            }
        }
        assert_eq!(scalable_layer_capacity(u64::MAX, 2, 1), None);
        assert_eq!(scalable_layer_capacity(5, 4, 0), Some(5));
    }

    #[test]
    fn cuckoo_fpp_matches_the_paper() {
        // At full load the exact form is just under the bound 2b/2^f.
        for f in CUCKOO_FINGERPRINT_BITS {
            for b in [2, 4, 8] {
                let exact = cuckoo_fpp(f, b, 1.0);
                let bound = cuckoo_fpp_bound(f, b);
                assert!(exact < bound && exact > bound * 0.9, "f {f} b {b}");
            }
        }
        // Half the load, about half the rate.
        let ratio = cuckoo_fpp(12, 4, 0.5) / cuckoo_fpp(12, 4, 1.0);
        assert!((ratio - 0.5).abs() < 1e-3, "{ratio}");
        assert_eq!(cuckoo_fingerprint_bits(0.0313, 4), Some(8));
        assert_eq!(cuckoo_fingerprint_bits(0.03, 4), Some(12));
        assert_eq!(cuckoo_fingerprint_bits(0.01, 2), Some(12));
        assert_eq!(cuckoo_fingerprint_bits(0.01, 8), Some(12));
    }

    #[test]
    fn cuckoo_buckets_are_powers_of_two_with_room_for_the_items() {
        for n in [1u64, 2, 3, 4, 100, 3_800, 1_000_000, 123_456_789] {
            let buckets = cuckoo_num_buckets(n, 4, CUCKOO_TARGET_LOAD).unwrap();
            assert!(buckets.is_power_of_two());
            assert!(buckets as f64 * 4.0 * CUCKOO_TARGET_LOAD >= n as f64, "{n}");
            assert!(buckets == 1 || (buckets / 2) as f64 * 4.0 * CUCKOO_TARGET_LOAD < n as f64);
        }
        assert_eq!(cuckoo_num_buckets(u64::MAX, 4, 0.95), Some(1 << 63));
        assert_eq!(cuckoo_num_buckets(u64::MAX, 2, 0.5), None);
    }
    /// One block of one 64-bit word, k = 2, one item of 2 settings: X = 1 set bit with
    /// probability 1/64, 2 with 63/64, so the exact rate is E[(X/64)²] = 253/262144, where
    /// the classic expression says (1 − (63/64)²)² = 16129/16777216. With λ tiny the
    /// Poisson sum is λe^(−λ)·f(1) to first order.
    #[test]
    fn exact_in_block_rate_matches_enumeration() {
        let blocks = 1_000_000u64;
        let lambda = 1.0 / blocks as f64;
        let p1 = lambda * (-lambda).exp();
        let exact = fpp_blocked(blocks, 64, 2, 1);
        let putze = fpp_blocked_putze(blocks, 64, 2, 1);
        // i = 2 adds about λ²/2 · f(2) < 10⁻¹².
        assert!((exact - p1 * 253.0 / 262_144.0).abs() < 1e-14, "{exact}");
        assert!(
            (putze - p1 * 16_129.0 / 16_777_216.0).abs() < 1e-14,
            "{putze}"
        );
    }

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
            Err(Error::TooLarge { .. })
        ));
    }
}
