//! Theory and sizing of robustBF, the 2D Bloom filter of Nayak & Patgiri ("robustBF: A High
//! Accuracy and Memory Efficient 2D Bloom Filter", arXiv:2106.04365, 2021): the dimensions
//! its construction chooses and the false-positive probability those dimensions give.
//!
//! # The paper's sizing
//!
//! robustBF starts from the classic filter's size for n items at ε,
//! `m = −n ln ε / (ln 2)²` bits, and builds a matrix of X × Y words of 64 bits with
//!
//! ```text
//!     f = ⌊√(m / (2·64))⌋,   p_i = the first prime above f,   X = p_{i+3},   Y = p_{i−3}
//! ```
//!
//! (the authors' construction: two primes three places either side of the square root, so
//! that X·Y ≈ m/128 words). The matrix therefore holds about **m/2 bits**: half the
//! classic filter's memory at the same ε, by construction. Each word uses only its low
//! [`ROBUST_BITS_PER_WORD`] = 61 bits (the bit index is `h mod 61`), and k =
//! [`ROBUST_NUM_HASHES`] = 3 hash values place an item.
//!
//! # Its false-positive probability
//!
//! A hash value h selects the cell `(h mod X, h mod Y)` and the bit `h mod 61`. For
//! pairwise coprime X, Y and 61 the Chinese remainder theorem makes this a bijection
//! between `h mod 61XY` and the triples, so with h uniform the three are independent and
//! uniform: robustBF is a classic Bloom filter of `M = 61·X·Y` usable bits and k = 3
//! hashes, whose rate after n items is the classic one ([`fpp_robust`]):
//!
//! ```text
//!     FPP = (1 − (1 − 1/M)^(3n))³,   M = 61·X·Y ≈ (61/64)·(m/2), about 0.48 m
//! ```
//!
//! At ε = 1% that is M ≈ 4.7 bits per item and FPP ≈ 0.105 — ten times the ε the size
//! was derived from; at ε = 0.1% (the paper's run, n = 10⁷), FPP ≈ 0.044. A classic filter reaches
//! those rates with fewer bits than robustBF's 64·X·Y (at FPP = 0.044 it needs 6.5 bits per
//! item against robustBF's 7.2). See `tests/suite/robust.rs`, which measures both and explains where the
//! paper's "nearly zero" rate came from.

use crate::error::Error;
use crate::params::{fpp_exact, optimal_num_bits, MAX_NUM_BITS};

/// The bits of each 64-bit word that robustBF uses: the bit index is `h mod 61`, as the
/// authors' implementation computes it, so bits 61 to 63 of every word stay 0.
pub const ROBUST_BITS_PER_WORD: u64 = 61;

/// The number of hash values per item in the paper's construction (three seeded hashes).
pub const ROBUST_NUM_HASHES: u32 = 3;

/// How many primes away from the square root the two dimensions lie (`X = p_{i+3}`,
/// `Y = p_{i−3}`).
pub const ROBUST_PRIME_OFFSET: usize = 3;

/// The largest number of words a robustBF matrix may have (`MAX_NUM_BITS / 64`).
pub const MAX_ROBUST_WORDS: u64 = MAX_NUM_BITS / 64;

/// Whether `x` is prime (trial division; the dimensions are at most about 2¹⁷).
pub fn is_prime(x: u64) -> bool {
    if x < 2 {
        return false;
    }
    let mut d = 2u64;
    while d.saturating_mul(d) <= x {
        if x.is_multiple_of(d) {
            return false;
        }
        d += 1;
    }
    true
}

/// The greatest common divisor (Euclid).
pub fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Whether X, Y and 61 are pairwise coprime: what makes `h ↦ (h mod X, h mod Y, h mod 61)`
/// a bijection of `h mod 61XY` (the Chinese remainder theorem), so that an item's cell and
/// bit are independent and uniform.
pub fn robust_dimensions_valid(rows: u64, cols: u64) -> bool {
    rows >= 1
        && cols >= 1
        && gcd(rows, cols) == 1
        && gcd(rows, ROBUST_BITS_PER_WORD) == 1
        && gcd(cols, ROBUST_BITS_PER_WORD) == 1
}

/// The paper's dimensions (X, Y) for `capacity` items at ε = `fpp`: from the classic
/// `m = ⌈−n ln ε / (ln 2)²⌉`, `f = ⌊√(m/128)⌋`, the first prime `p_i > f`, then
/// `X = p_{i+3}` and `Y = p_{i−3}`. For tiny m, where fewer than three primes lie below
/// `p_i`, Y is the smallest prime, 2 (X still grows with m). The prime 61 — the bits per word — is skipped
/// (the next prime outward is taken), since a dimension of 61 would tie the cell to the
/// bit.
///
/// ```
/// use bloomkit::params::{robust_dimensions, optimal_num_bits};
/// // One million items at 1%: m = 9 585 059, √(m/128) ≈ 273.6, p_i = 277,
/// // X = 3 primes above it = 293, Y = 3 primes below it = 263.
/// assert_eq!(robust_dimensions(1_000_000, 0.01)?, (293, 263));
/// // 77 059 words: about m/128, so half the classic filter's bits.
/// assert!((293 * 263 * 64) as f64 / optimal_num_bits(1_000_000, 0.01)? as f64 - 0.5 < 0.03);
/// # Ok::<(), bloomkit::Error>(())
/// ```
pub fn robust_dimensions(capacity: u64, fpp: f64) -> Result<(u64, u64), Error> {
    let m = optimal_num_bits(capacity, fpp)?;
    let f = ((m / 128) as f64).sqrt().floor() as u64;
    // The primes up to three past the first one above f.
    let mut primes = Vec::new();
    let mut candidate = 2u64;
    let mut above = 0;
    while above <= ROBUST_PRIME_OFFSET {
        if is_prime(candidate) && candidate != ROBUST_BITS_PER_WORD {
            primes.push(candidate);
            if candidate > f {
                above += 1;
            }
        }
        candidate += 1;
    }
    let first_above = primes.iter().position(|&p| p > f).expect("found above");
    let (rows, cols) = (
        primes[first_above + ROBUST_PRIME_OFFSET],
        primes[first_above.saturating_sub(ROBUST_PRIME_OFFSET)],
    );
    check_robust_size(rows, cols)?;
    Ok((rows, cols))
}

/// X·Y words of 64 bits must fit in [`MAX_NUM_BITS`].
pub(crate) fn check_robust_size(rows: u64, cols: u64) -> Result<u64, Error> {
    let words = rows.saturating_mul(cols);
    if words > MAX_ROBUST_WORDS {
        return Err(Error::TooLarge {
            bits: words.saturating_mul(64),
            max: MAX_NUM_BITS,
        });
    }
    Ok(words)
}

/// The false-positive probability of a robustBF of X × Y words with k hash values after
/// `items` insertions: the classic `(1 − (1 − 1/M)^(kn))^k` with `M = 61·X·Y` usable bits
/// (the module docs derive why).
///
/// ```
/// use bloomkit::params::fpp_robust;
/// // The paper's sizing at ε = 1% for 10⁶ items: about 10.5%, not 1%.
/// let p = fpp_robust(293, 263, 3, 1_000_000);
/// assert!((p - 0.105).abs() < 0.001, "{p}");
/// ```
pub fn fpp_robust(rows: u64, cols: u64, num_hashes: u32, items: u64) -> f64 {
    fpp_exact(
        ROBUST_BITS_PER_WORD * rows.saturating_mul(cols),
        num_hashes,
        items,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dimensions_are_coprime_primes_around_the_square_root() {
        for (n, fpp) in [(1u64, 0.5), (10, 0.1), (1_000, 0.01), (10_000_000, 0.001)] {
            let (x, y) = robust_dimensions(n, fpp).unwrap();
            assert!(is_prime(x) && is_prime(y), "{n}: {x} × {y}");
            assert!(robust_dimensions_valid(x, y), "{n}: {x} × {y}");
            assert!(x > y);
        }
        // The tiny cases: no three primes below p_i, so Y = 2; X still grows with m.
        assert_eq!(robust_dimensions(1, 0.5).unwrap(), (7, 2));
        assert_eq!(robust_dimensions(2_002, 0.5).unwrap(), (13, 2));
        // 10⁷ at 0.1% (the paper's own run): m = 143 775 876, √(m/128) ≈ 1059.8.
        assert_eq!(robust_dimensions(10_000_000, 0.001).unwrap(), (1087, 1039));
    }

    #[test]
    fn the_prime_61_is_never_a_dimension() {
        // f between 50 and 70 would otherwise put 61 among the candidates.
        for n in (30_000..70_000).step_by(1_000) {
            let (x, y) = robust_dimensions(n, 0.01).unwrap();
            assert!(x != 61 && y != 61, "{n}: {x} × {y}");
        }
        assert!(!robust_dimensions_valid(61, 7));
        assert!(!robust_dimensions_valid(6, 9));
        assert!(robust_dimensions_valid(1, 1));
    }

    #[test]
    fn absurd_sizes_are_errors() {
        assert!(matches!(
            robust_dimensions(1 << 39, 1e-9),
            Err(Error::TooLarge { .. })
        ));
        assert!(check_robust_size(u64::MAX, 3).is_err());
        assert!(robust_dimensions(0, 0.01).is_err());
    }
}
