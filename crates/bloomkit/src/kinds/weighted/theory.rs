//! Theory of the weighted Bloom filter: the number of hash functions per item, and the
//! false-positive rate a query stream sees.

use crate::params::MAX_NUM_HASHES;

/// The number of hash functions of an item of weight `w` in a weighted Bloom filter whose
/// items weigh `w̄` on (geometric) average and whose uniform optimum is `k̄ = (m/n) ln 2`:
///
/// ```text
///     k_x  =  k̄ + log₂(w_x / w̄),      w_x = q_x (1 − p_x) / p_x
/// ```
///
/// with q_x how often x is queried and p_x how likely it is to be in the set (Bruck, Gao &
/// Jiang, "Weighted Bloom Filter", ISIT 2006). Why: a query for x, absent, is a false
/// positive with probability `ρ^{k_x}`, ρ the fraction of ones; the cost to minimise is
/// `Σ q_x (1 − p_x) ρ^{k_x}` while the expected ones depend on `Σ p_x k_x`. Setting the
/// derivative in each k_x to zero (a Lagrange multiplier for the bits) gives
/// `q_x (1 − p_x) ρ^{k_x} ∝ p_x`, so k_x grows by one for every doubling of w_x; at the
/// optimum ρ = 1/2 as in the classic filter, so `Σ p_x k_x = m ln 2`, which fixes the
/// constant: `log₂ w̄ = Σ p_x log₂ w_x / Σ p_x`. An item queried twice as often as the
/// average gets one more hash function and half the false-positive probability.
///
/// Rounded to an integer and kept in `1..=64`: an item with no hash function at all would
/// be reported present in an empty filter.
///
/// ```
/// use bloomkit::params::weighted_num_hashes;
/// assert_eq!(weighted_num_hashes(6.64, 1.0), 7); // the average item: the classic k
/// assert_eq!(weighted_num_hashes(6.64, 8.0), 10); // queried 8× as often: 3 more
/// assert_eq!(weighted_num_hashes(6.64, 1.0 / 1024.0), 1);
/// ```
pub fn weighted_num_hashes(mean_hashes: f64, weight_ratio: f64) -> u32 {
    let k = (mean_hashes + weight_ratio.log2()).round();
    if k.is_nan() {
        return 1;
    }
    k.clamp(1.0, MAX_NUM_HASHES as f64) as u32
}

/// The false-positive rate a query stream sees: the items' query frequencies `q_x` and
/// hash-function counts `k_x`, for absent items, in a filter of m bits into which the
/// members put `member_hashes` = Σ_{x ∈ S} k_x bit sets:
///
/// ```text
///     F  =  Σ q_x ρ^{k_x} / Σ q_x,      ρ = 1 − (1 − 1/m)^{Σ_S k_x}
/// ```
///
/// ρ is the expected fraction of ones (each of the Σ k_x sets misses a given bit with
/// probability 1 − 1/m). For a classic filter every k_x = k and F is
/// [`fpp_exact`](crate::params::fpp_exact). Weights need not be normalised.
///
/// ```
/// use bloomkit::params::{fpp_exact, weighted_fpp};
/// let classic = weighted_fpp(9_586, 7 * 1_000, [(1.0, 7), (3.0, 7)]);
/// assert!((classic - fpp_exact(9_586, 7, 1_000)).abs() < 1e-15);
/// ```
pub fn weighted_fpp(
    num_bits: u64,
    member_hashes: u64,
    queries: impl IntoIterator<Item = (f64, u32)>,
) -> f64 {
    if num_bits == 0 {
        return 1.0;
    }
    let rho = 1.0 - (member_hashes as f64 * (-1.0 / num_bits as f64).ln_1p()).exp();
    let (mut cost, mut total) = (0.0, 0.0);
    for (q, k) in queries {
        cost += q * rho.powi(k as i32);
        total += q;
    }
    if total > 0.0 {
        cost / total
    } else {
        0.0
    }
}
