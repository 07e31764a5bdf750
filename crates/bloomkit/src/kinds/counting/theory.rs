//! Theory of the counting Bloom filter: the formulas its builder sizes with and its
//! `Filter::fpp_at` answers with.

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

#[cfg(test)]
mod tests {
    use crate::params::*;

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
}
