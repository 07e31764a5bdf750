//! Sizing and theory of the classic Bloom filter.
//!
//! Notation as in the literature: m bits, n items, k hash functions,
//! ε the false-positive probability (FPP).
//!
//! After n insertions with k independent, uniform hash functions, a given bit is still 0
//! with probability `(1 − 1/m)^(kn)`; a query for an absent item is a false positive when
//! all k of its bits are 1 (Bloom 1970):
//!
//! ```text
//!     FPP = (1 − (1 − 1/m)^(kn))^k  ≈  (1 − e^(−kn/m))^k
//! ```
//!
//! The approximation is minimised by `k = (m/n) ln 2`, where each bit is 1 with
//! probability 1/2 and `FPP = 2^(−k)`; solving for m gives the standard sizing rule
//! `m = −n ln ε / (ln 2)²` (about 9.6 bits per item at ε = 1%).
//!
//! Strictly, `(1 − (1 − 1/m)^(kn))^k` assumes the k bits of a query are independent; it
//! slightly underestimates the true rate for very small m (Bose et al. 2008), which does not
//! matter at the sizes filters are used at.

use crate::error::Error;

/// A number of items, as every `with_capacity` and every builder's `capacity` take it:
/// `u64`, `usize` (a `len()`), `u32`, or `i32` — the type Rust gives an integer literal that
/// nothing else pins down, so `with_capacity(1_000, 0.01)` needs no suffix. A negative
/// `i32` counts as 0 items, which the builders refuse with [`Error::ZeroCapacity`].
///
/// ```
/// use bloomkit::{BloomFilter, Error};
/// let words = vec!["a", "b", "c"];
/// let a = BloomFilter::with_capacity(words.len(), 0.01)?; // usize
/// let b = BloomFilter::with_capacity(3u64, 0.01)?;
/// let c = BloomFilter::with_capacity(3, 0.01)?; // a literal
/// assert_eq!((a.capacity(), b.capacity()), (3, c.capacity()));
/// assert!(matches!(BloomFilter::with_capacity(-3, 0.01), Err(Error::ZeroCapacity)));
/// # Ok::<(), Error>(())
/// ```
pub trait ItemCount: Copy + item_count::Sealed {
    /// The count as a `u64` (negative values as 0).
    fn items(self) -> u64;
}

mod item_count {
    pub trait Sealed {}
}

macro_rules! item_count {
    ($($t:ty => $convert:expr;)*) => {$(
        impl item_count::Sealed for $t {}
        impl ItemCount for $t {
            fn items(self) -> u64 {
                let convert: fn($t) -> u64 = $convert;
                convert(self)
            }
        }
    )*};
}

item_count! {
    u64 => |n| n;
    usize => |n| n as u64;
    u32 => |n| n.into();
    i32 => |n| u64::try_from(n).unwrap_or(0);
}

/// ε when none is given: 1%, the rate most examples and libraries default to
/// (about 9.6 bits per item in a classic filter).
pub const DEFAULT_FPP: f64 = 0.01;

/// The largest filter this crate builds: 2⁴⁰ bits (128 GiB). Beyond it a size is almost
/// certainly a mistake (an ε of 1e-300, a capacity in the quintillions).
pub const MAX_NUM_BITS: u64 = 1 << 40;

/// The most hash functions a filter may use. The optimal k is log₂(1/ε) (it is m/n, the
/// bits per item, that is 1.44·log₂(1/ε)), so 64 covers every ε down to 2⁻⁶⁴ ≈ 5·10⁻²⁰.
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
/// The program of Grützner, Möller & Weber ("Bloom Filter", 2021) truncated instead of rounding up, so its table shows one bit
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
    if bits > MAX_NUM_BITS as f64 {
        // Said in the capacity's words: past 2⁶⁴ bits, `as u64` would saturate.
        return Err(Error::CapacityTooLarge {
            capacity,
            fpp,
            max: MAX_NUM_BITS,
        });
    }
    Ok((bits as u64).max(1))
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

/// The natural logarithm of [`fpp_exact`], `k · ln(1 − (1 − 1/m)^(kn))`, computed so that
/// rates far below the smallest `f64` (ε = 10⁻³⁰⁰ with k = 64, whose `fpp_exact` underflows
/// to 0 only past 10⁻³⁰⁸) still compare: the ones' fraction `1 − e^(kn·ln(1 − 1/m))` by
/// `expm1`, then its logarithm times k.
///
/// ```
/// use bloomkit::params::{fpp_exact, ln_fpp_exact};
/// let (m, k, n) = (835_482, 10, 58_110);
/// assert!((ln_fpp_exact(m, k, n) - fpp_exact(m, k, n).ln()).abs() < 1e-9);
/// // 64 hash functions over 3.1·10⁶ bits per item: about 10⁻³⁰⁰, past f64's smallest normal.
/// assert!((ln_fpp_exact(3_100_000_000, 64, 1_000) / std::f64::consts::LN_10 + 300.0).abs() < 1.0);
/// ```
pub fn ln_fpp_exact(num_bits: u64, num_hashes: u32, items: u64) -> f64 {
    if num_bits == 0 {
        return 0.0;
    }
    let k = f64::from(num_hashes);
    let ones = -(k * items as f64 * (-1.0 / num_bits as f64).ln_1p()).exp_m1();
    k * ones.ln()
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Grützner, Möller & Weber ("Bloom Filter", 2021), table 1: n = 58 110 words. Their program truncated m; the formula
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
            Err(Error::CapacityTooLarge {
                capacity: u64::MAX,
                ..
            })
        ));
        assert!(matches!(
            optimal_num_bits(1 << 40, 0.01),
            Err(Error::CapacityTooLarge { capacity, .. }) if capacity == 1 << 40
        ));
    }
}
