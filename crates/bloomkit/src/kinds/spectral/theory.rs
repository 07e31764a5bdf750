//! Theory of the spectral Bloom filter: the error probability of its frequency estimates.

/// The probability that the minimum-selection estimate of an inserted item is wrong
/// (larger than its true count), for m counters, k hash functions and n distinct items in
/// the filter:
///
/// ```text
///     E_b  =  (1 − (1 − 1/m)^(k(n−1)))^k
/// ```
///
/// Each counter of x holds f_x plus the counts of the other items hashed there, so the
/// minimum is f_x unless *every* one of x's k counters also received another item — the
/// event that x is a false positive of a Bloom filter holding the other n − 1 items
/// (Cohen & Matias, "Spectral Bloom Filters", SIGMOD 2003: the error probability of MS is
/// the Bloom error E_b). It does not depend on the frequencies, only on the number of
/// distinct items. Minimal increase and recurring minimum err less often; the paper
/// measures how much, and so does this crate's `tests/suite/spectral.rs`.
///
/// ```
/// use bloomkit::params::{fpp_exact, spectral_error_probability};
/// // Sized for 1 000 distinct items at ε = 1%: about one estimate in a hundred is high.
/// let e = spectral_error_probability(9_586, 7, 1_000);
/// assert!((e - 0.01).abs() < 0.001);
/// assert_eq!(e, fpp_exact(9_586, 7, 999));
/// assert_eq!(spectral_error_probability(9_586, 7, 1), 0.0);
/// ```
pub fn spectral_error_probability(num_counters: u64, num_hashes: u32, distinct_items: u64) -> f64 {
    crate::params::fpp_exact(num_counters, num_hashes, distinct_items.saturating_sub(1))
}
