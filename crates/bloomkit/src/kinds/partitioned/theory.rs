//! Sizing and false-positive rate of the partitioned Bloom filter.
//!
//! The m bits are k slices of s bits; hash function i sets one bit in slice i only. After n
//! distinct items a given bit of a slice is still 0 with probability `(1 − 1/s)^n`, and the
//! slices are independent, so an absent item is a false positive with probability
//!
//! ```text
//!     FPP = (1 − (1 − 1/s)^n)^k,   s = m/k
//! ```
//!
//! (Chang, Feng & Li, "Approximate caches for packet classification", INFOCOM 2004; Almeida
//! et al., "Scalable Bloom Filters", IPL 2007, who use it for every layer). With s = m/k this
//! is `(1 − (1 − k/m)^n)^k`, a hair above the classic filter's `(1 − (1 − 1/m)^(kn))^k` for
//! the same m and k — the price of never letting two of an item's bits share a slice — so
//! the sizing below starts from the classic m and k and grows the slices until the exact rate
//! is at most ε.

use crate::error::Error;
use crate::params::{optimal_num_bits, optimal_num_hashes, validate_fpp, MAX_NUM_BITS};

/// `(1 − (1 − 1/s)^n)^k`: the false-positive probability of k slices of `slice_bits` bits
/// holding `items` distinct items.
///
/// ```
/// use bloomkit::params::{fpp_exact, partitioned_fpp};
/// // 7 slices of 1 370 bits against the classic filter's 9 590 bits, 1 000 items.
/// let (partitioned, classic) = (partitioned_fpp(1_370, 7, 1_000), fpp_exact(9_590, 7, 1_000));
/// assert!(partitioned > classic && partitioned < classic * 1.01);
/// ```
pub fn partitioned_fpp(slice_bits: u64, num_hashes: u32, items: u64) -> f64 {
    if slice_bits == 0 {
        return 1.0;
    }
    // (1 − 1/s)^n = exp(n · ln(1 − 1/s)), accurate for large s.
    let zero = (items as f64 * (-1.0 / slice_bits as f64).ln_1p()).exp();
    (1.0 - zero).powi(num_hashes as i32)
}

/// The items a filter of k slices of s bits holds, estimated from its set bits: each slice
/// fills as `1 − (1 − 1/s)^n`, so `n = ln(1 − X/m) / ln(1 − 1/s)` with X of the m bits set.
pub fn partitioned_estimate_items(set_bits: u64, slice_bits: u64, num_hashes: u32) -> f64 {
    let m = slice_bits as f64 * num_hashes as f64;
    if slice_bits <= 1 || set_bits as f64 >= m {
        return f64::INFINITY;
    }
    (-(set_bits as f64) / m).ln_1p() / (-1.0 / slice_bits as f64).ln_1p()
}

/// `(s, k)` for `capacity` items at `fpp`: k from the classic filter's optimum, then the
/// fewest bits per slice whose exact rate ([`partitioned_fpp`]) is at most ε.
///
/// ```
/// use bloomkit::params::{partitioned_dimensions, partitioned_fpp};
/// let (s, k) = partitioned_dimensions(1_000, 0.01)?;
/// assert_eq!(k, 7);
/// assert!(partitioned_fpp(s, k, 1_000) <= 0.01 && partitioned_fpp(s - 1, k, 1_000) > 0.01);
/// # Ok::<(), bloomkit::Error>(())
/// ```
pub fn partitioned_dimensions(capacity: u64, fpp: f64) -> Result<(u64, u32), Error> {
    let fpp = validate_fpp(fpp)?;
    if capacity == 0 {
        return Err(Error::ZeroCapacity);
    }
    let m = optimal_num_bits(capacity, fpp)?;
    let k = optimal_num_hashes(m, capacity);
    let limit = MAX_NUM_BITS / k as u64;
    let meets = |s: u64| partitioned_fpp(s, k, capacity) <= fpp;
    if !meets(limit) {
        return Err(Error::CapacityTooLarge {
            capacity,
            fpp,
            max: MAX_NUM_BITS,
        });
    }
    // The classic m split in k is within a few bits per slice of the answer: search below
    // it if it meets ε, else step up from it (doubling the step) and search the last step.
    let start = m.div_ceil(k as u64).min(limit);
    if meets(start) {
        return Ok((crate::sizing::first_meeting(1, start, meets), k));
    }
    let (mut failed, mut step) = (start, 1u64);
    loop {
        let next = failed.saturating_add(step).min(limit);
        if meets(next) {
            return Ok((crate::sizing::first_meeting(failed + 1, next, meets), k));
        }
        failed = next;
        step = step.saturating_mul(2);
    }
}
