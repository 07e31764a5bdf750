//! Theory of the variable-increment counting Bloom filter: the formulas its builder sizes with and its
//! `Filter::fpp_at` answers with.

use crate::error::Error;
use crate::kinds::bloom::theory::*;

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
            return Err(Error::CapacityTooLarge {
                capacity,
                fpp,
                max: MAX_NUM_BITS,
            });
        }
        high = (high * 2).min(MAX_NUM_BITS);
    }
    // best(high) ≤ fpp.
    Ok(crate::sizing::first_meeting(1, high, |m| best(m) <= fpp))
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
    crate::sizing::last_meeting(low, high - 1, |n| rate(n) <= fpp)
}

#[cfg(test)]
mod tests {
    use super::*;

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
            Err(Error::CapacityTooLarge {
                capacity: u64::MAX,
                ..
            })
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
            Err(Error::CapacityTooLarge { .. })
        ));
        assert_eq!(vi_capacity(1, Some(3), 1e-9, 4), 1);
    }
}
