//! Theory and sizing of robustBF, the 2D Bloom filter of Nayak & Patgiri ("robustBF: A High
//! Accuracy and Memory Efficient 2D Bloom Filter", arXiv:2106.04365, 2021): the false-positive
//! probability of its matrix, the dimensions that meet the ε asked for (what
//! `with_capacity` builds), and the dimensions its paper chooses (what `paper_sizing`
//! builds, and why they miss ε).
//!
//! # Its false-positive probability
//!
//! robustBF is a matrix of X × Y words of 64 bits. Each word uses only its low
//! [`ROBUST_BITS_PER_WORD`] = 61 bits (the bit index is `h mod 61`, as the authors'
//! implementation computes it), and k hash values place an item (k =
//! [`ROBUST_NUM_HASHES`] = 3 in the paper). A hash value h selects the cell
//! `(h mod X, h mod Y)` and the bit `h mod 61`. For pairwise coprime X, Y and 61 the
//! Chinese remainder theorem makes this a bijection between `h mod 61XY` and the triples,
//! so with h uniform on `[0, 61XY)` the three are independent and uniform: robustBF is a
//! classic Bloom filter of `M = 61·X·Y` usable bits and k hashes, whose rate after n items
//! is the classic one ([`fpp_robust`]):
//!
//! ```text
//!     FPP(X, Y, k, n) = (1 − (1 − 1/M)^(kn))^k,   M = 61·X·Y
//! ```
//!
//! The 2D layout changes where the bits are, not how many an item may hit; nothing about
//! the matrix makes it more accurate than a classic filter of M bits. Measured at n = 10⁵
//! against this formula (`tests/suite/robust.rs`, 10⁶ absent keys, 99.9% intervals): at
//! both sizings below, every measured rate lies in the interval of the formula.
//!
//! # Sizing that meets ε ([`robust_dimensions_for_fpp`], `with_capacity`)
//!
//! A user who asks for ε gets a matrix whose `FPP(X, Y, k, n) ≤ ε`. Solving the formula
//! for M at a given k (RocksDB's `util/bloom_impl.h` reasons the same way for its
//! layouts: the rate of the structure actually built, solved for its size):
//!
//! ```text
//!     (1 − (1 − 1/M)^(kn))^k ≤ ε
//!  ⇔  (1 − 1/M)^(kn) ≥ 1 − ε^(1/k)
//!  ⇔  M ≥ M_k = 1 / (1 − (1 − ε^(1/k))^(1/(kn)))  ≈  kn / −ln(1 − ε^(1/k))
//! ```
//!
//! ([`robust_usable_bits_for_fpp`]). M_k is smallest at the integer k next to log₂(1/ε),
//! where it is the classic `−n ln ε / (ln 2)²` (up to the rounding of k: 9.593 bits per
//! item at ε = 1% with k = 7, against the continuous 9.585). So, unless k is given:
//!
//! 1. k = the integer minimising M_k (7 at ε = 1%, 10 at 0.1%);
//! 2. W = ⌈M_k / 61⌉ words;
//! 3. Y = a prime in [√W/2, √W] and X the first prime with X·Y ≥ W (X > Y, neither 61,
//!    so X, Y and 61 are pairwise coprime; X/Y below about 4); of the eight largest such
//!    Y, the one with the fewest words X·Y;
//! 4. if the exact formula at (X, Y, k, n) still exceeds ε (floating-point rounding at the
//!    boundary), W grows by one and step 3 is repeated — so `FPP ≤ ε` holds by
//!    construction, checked against the same [`fpp_robust`] that the filter reports.
//!
//! Memory is then `64·X·Y ≈ (64/61)·M_k`: the classic filter's bits plus 4.9% for the
//! three unused bits of every word, plus the rounding of X·Y to primes (at most 2% from
//! W ≈ 10⁴ words, n ≈ 6·10⁴ at ε = 1%; up to 7% in small matrices): about 10.1 bits per
//! item at ε = 1% and 15.1 at 0.1%. With k given (`num_hashes(3)`,
//! the paper's k), step 1 is skipped and M_k is that k's: 12.4 usable bits per item at
//! ε = 1% and 28.5 at 0.1% — k = 3 is far from the optimum below ε ≈ 12%.
//!
//! # The paper's sizing, and why it misses ([`robust_dimensions`], `paper_sizing`)
//!
//! robustBF's paper starts from the classic filter's size for n items at ε,
//! `m = −n ln ε / (ln 2)²` bits, and builds a matrix with
//!
//! ```text
//!     f = ⌊√(m / (2·64))⌋,   p_i = the first prime above f,   X = p_{i+3},   Y = p_{i−3}
//! ```
//!
//! (two primes three places either side of the square root, so that X·Y ≈ m/128 words),
//! and k = 3. Three things separate that from ε, and they multiply:
//!
//! * **half the bits**: X·Y ≈ m/128 words of 64 bits is m/2 bits, by the factor 2 in
//!   `2·64` — the paper's memory saving;
//! * **61 of 64 bits**: M = 61·X·Y ≈ (61/64)·(m/2) ≈ 0.48 m usable bits;
//! * **k = 3**: the optimum for m bits is k = log₂(1/ε) (6.6 at 1%, 10 at 0.1%); even with
//!   all m bits, k = 3 gives 1.9% at ε = 1%.
//!
//! Together: M ≈ 4.6 bits per item at ε = 1%, and `FPP ≈ (1 − e^(−3/4.6))³ ≈ 0.105` — ten
//! times ε; at ε = 0.1% (the paper's run, n = 10⁷), FPP ≈ 0.044. A classic filter reaches
//! those rates with fewer bits than robustBF's 64·X·Y (at FPP = 0.044 it needs 6.5 bits per
//! item against robustBF's 7.2). See `tests/suite/robust.rs`, which measures both sizings
//! and explains where the paper's "nearly zero" rate came from, and `bloomkit experiment
//! robust`, which reproduces the paper's sizing against the classic filter.

use crate::error::Error;
use crate::params::{fpp_exact, optimal_num_bits, validate_fpp, MAX_NUM_BITS, MAX_NUM_HASHES};

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

/// The paper's dimensions (X, Y) for `capacity` items at ε = `fpp` — which, with the
/// paper's k = 3, give about ten times ε (module docs); [`robust_dimensions_for_fpp`]
/// gives the ones that meet it. From the classic
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

/// How many of a word's bits robustBF uses, as a float.
const BITS_PER_WORD: f64 = ROBUST_BITS_PER_WORD as f64;

/// M_k: the fewest usable bits M for which robustBF (a classic filter of M bits) with k
/// hash values has a false-positive probability of at most ε after n items, as a real
/// number — `1 / (1 − (1 − ε^(1/k))^(1/(kn)))`, the exact formula solved for M (module
/// docs). Infinite when ε, k or n make it so (ε ≥ 1, k or n of 0 give infinity too).
///
/// ```
/// use bloomkit::params::{fpp_exact, robust_usable_bits_for_fpp};
/// // k = 7 at ε = 1%: 9.593 bits per item, a hair above the continuous optimum 9.585.
/// let m = robust_usable_bits_for_fpp(1_000_000, 0.01, 7);
/// assert!((m / 1e6 - 9.593).abs() < 1e-3, "{m}");
/// assert!(fpp_exact(m.ceil() as u64, 7, 1_000_000) <= 0.01);
/// assert!(fpp_exact(m.ceil() as u64 - 20, 7, 1_000_000) > 0.01);
/// // The paper's k = 3 needs 12.4 bits per item for the same ε.
/// assert!((robust_usable_bits_for_fpp(1_000_000, 0.01, 3) / 1e6 - 12.37).abs() < 0.01);
/// ```
pub fn robust_usable_bits_for_fpp(capacity: u64, fpp: f64, num_hashes: u32) -> f64 {
    if !(fpp > 0.0 && fpp < 1.0) || num_hashes == 0 || capacity == 0 {
        return f64::INFINITY;
    }
    let kn = f64::from(num_hashes) * capacity as f64;
    // 1 − ε^(1/k), then (1 − ε^(1/k))^(1/(kn)) = exp(ln(1 − ε^(1/k)) / kn), and 1 minus
    // that as −expm1(…): each step without cancellation.
    let zeros = -(fpp.ln() / f64::from(num_hashes)).exp_m1();
    let per_bit = -(zeros.ln() / kn).exp_m1();
    // For ε far below 2^-k, ε^(1/k) is below the rounding of 1 − ε^(1/k) = 1: no size
    // reaches ε with so few hash values (−0 here, which would be −∞ bits).
    if per_bit > 0.0 {
        1.0 / per_bit
    } else {
        f64::INFINITY
    }
}

/// The X × Y matrix, two primes other than 61 with X > Y, of at least `words` words and
/// close to square: for each of the eight largest primes Y in [√words / 2, √words] (2 when
/// √words < 2; Bertrand's postulate puts a prime in every such range), X is the first prime
/// ≥ ⌈words / Y⌉ above Y, so X/Y stays below about 4; the pair with the fewest words wins
/// (the squarer one on a tie).
fn robust_grid(words: u64) -> (u64, u64) {
    let usable = |p: u64| is_prime(p) && p != ROBUST_BITS_PER_WORD;
    let mut best: Option<(u64, u64)> = None;
    let mut tried = 0;
    let root = words.isqrt().max(2);
    let lowest = root.div_ceil(2).max(2);
    let mut y = root;
    while y >= lowest && tried < 8 {
        if usable(y) {
            tried += 1;
            let mut x = words.div_ceil(y).max(y + 1);
            while !usable(x) {
                x += 1;
            }
            if best.is_none_or(|(bx, by)| x * y < bx * by) {
                best = Some((x, y));
            }
        }
        y -= 1;
    }
    best.expect("the prime 2 is always tried")
}

/// The dimensions (X, Y) and k of a robustBF that meets ε: after `capacity` items its
/// false-positive probability [`fpp_robust`] is at most `fpp`. k is `num_hashes` when
/// given, else the integer that needs the fewest bits ([`robust_usable_bits_for_fpp`]);
/// X and Y are primes other than 61, X > Y, with `61·X·Y ≥ M_k` and X·Y as small as the
/// search in the module docs finds. [`Error::CapacityTooLarge`] when the matrix would exceed
/// [`MAX_NUM_BITS`].
///
/// ```
/// use bloomkit::params::{fpp_robust, robust_dimensions, robust_dimensions_for_fpp};
/// // One million items at 1%: k = 7 and 439 × 359 words, where the paper takes
/// // 293 × 263 words and k = 3.
/// let (x, y, k) = robust_dimensions_for_fpp(1_000_000, 0.01, None)?;
/// assert_eq!((x, y, k), (439, 359, 7));
/// assert!(fpp_robust(x, y, k, 1_000_000) <= 0.01);
/// assert_eq!(robust_dimensions(1_000_000, 0.01)?, (293, 263));
/// assert!(fpp_robust(293, 263, 3, 1_000_000) > 0.1);
/// // The paper's k = 3, sized to meet ε: about 30% more memory than k = 7.
/// let (x3, y3, _) = robust_dimensions_for_fpp(1_000_000, 0.01, Some(3))?;
/// assert!(fpp_robust(x3, y3, 3, 1_000_000) <= 0.01);
/// assert!((x3 * y3) as f64 > 1.25 * (x * y) as f64);
/// # Ok::<(), bloomkit::Error>(())
/// ```
pub fn robust_dimensions_for_fpp(
    capacity: u64,
    fpp: f64,
    num_hashes: Option<u32>,
) -> Result<(u64, u64, u32), Error> {
    let fpp = validate_fpp(fpp)?;
    if capacity == 0 {
        return Err(Error::ZeroCapacity);
    }
    let num_hashes = match num_hashes {
        Some(k) => k,
        // M_k is convex in k with its minimum near log₂(1/ε), or at 64 for ε below about
        // 2⁻⁶⁴; the first minimum wins, so ties go to fewer hashes.
        None => {
            (1..=MAX_NUM_HASHES)
                .map(|k| (k, robust_usable_bits_for_fpp(capacity, fpp, k)))
                .fold(
                    (1, f64::INFINITY),
                    |best, (k, m)| {
                        if m < best.1 {
                            (k, m)
                        } else {
                            best
                        }
                    },
                )
                .0
        }
    };
    let usable = robust_usable_bits_for_fpp(capacity, fpp, num_hashes);
    let words = (usable / BITS_PER_WORD).ceil();
    if !words.is_finite() || words > MAX_ROBUST_WORDS as f64 {
        // In the capacity's words: the words needed may pass what 64 bits count.
        return Err(Error::CapacityTooLarge {
            capacity,
            fpp,
            max: MAX_NUM_BITS,
        });
    }
    let mut words = (words as u64).max(1);
    loop {
        let (rows, cols) = robust_grid(words);
        check_robust_size(rows, cols)?;
        if fpp_robust(rows, cols, num_hashes, capacity) <= fpp {
            return Ok((rows, cols, num_hashes));
        }
        words = rows * cols + 1;
    }
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
    fn sized_for_fpp_the_rate_is_at_most_fpp_with_little_to_spare() {
        for n in [
            1u64, 2, 10, 99, 1_000, 20_000, 123_457, 1_000_000, 10_000_000,
        ] {
            for fpp in [0.5, 0.2, 0.1, 0.05, 0.01, 0.003, 0.001, 1e-4, 1e-6, 1e-9] {
                let (x, y, k) = robust_dimensions_for_fpp(n, fpp, None).unwrap();
                let what = format!("n = {n}, ε = {fpp}: {x} × {y}, k = {k}");
                assert!(is_prime(x) && is_prime(y) && x > y, "{what}");
                assert!(robust_dimensions_valid(x, y), "{what}");
                let rate = fpp_robust(x, y, k, n);
                assert!(rate <= fpp, "{what}: {rate}");
                // k is the one needing the fewest bits, and the matrix holds them.
                let m = robust_usable_bits_for_fpp(n, fpp, k);
                for other in 1..=MAX_NUM_HASHES {
                    assert!(
                        robust_usable_bits_for_fpp(n, fpp, other) >= m,
                        "{what}: {other}"
                    );
                }
                let words = (x * y) as f64;
                assert!(61.0 * words >= m, "{what}");
                // Little to spare: from 10⁵ items on, within 2% of the words M_k needs,
                // and a matrix with 3% fewer usable bits misses ε.
                if n >= 100_000 {
                    assert!(words <= 1.02 * (m / 61.0).ceil(), "{what}");
                    let smaller = (0.97 * 61.0 * words) as u64;
                    assert!(fpp_exact(smaller, k, n) > fpp, "{what}");
                }
            }
        }
        // The paper's k, sized to meet ε.
        for fpp in [0.1, 0.01, 0.001] {
            let (x, y, k) = robust_dimensions_for_fpp(50_000, fpp, Some(3)).unwrap();
            assert_eq!(k, 3);
            assert!(fpp_robust(x, y, 3, 50_000) <= fpp);
        }
    }

    #[test]
    fn the_papers_sizing_misses_fpp_and_ours_does_not() {
        for (n, fpp) in [(100_000u64, 0.01), (10_000_000, 0.001)] {
            let (x, y) = robust_dimensions(n, fpp).unwrap();
            assert!(fpp_robust(x, y, ROBUST_NUM_HASHES, n) > 10.0 * fpp * 0.4);
            let (x, y, k) = robust_dimensions_for_fpp(n, fpp, None).unwrap();
            assert!(fpp_robust(x, y, k, n) <= fpp);
        }
    }

    #[test]
    fn sizing_for_fpp_refuses_what_it_cannot_build() {
        assert_eq!(
            robust_dimensions_for_fpp(0, 0.01, None),
            Err(Error::ZeroCapacity)
        );
        assert!(matches!(
            robust_dimensions_for_fpp(10, 1.0, None),
            Err(Error::InvalidFpp(_))
        ));
        assert!(matches!(
            robust_dimensions_for_fpp(1 << 39, 1e-9, None),
            Err(Error::CapacityTooLarge { .. })
        ));
        assert_eq!(robust_usable_bits_for_fpp(10, 0.01, 0), f64::INFINITY);
        assert_eq!(robust_grid(1), (3, 2));
        // Of the eight largest primes Y ≤ 60, Y = 41 with X = 89 wastes the fewest words.
        assert_eq!(robust_grid(3_600), (89, 41));
        // Near square, and few words more than asked: 7% from 700 words on, 2% from
        // 10 000 (the primes thin out the choice in small matrices).
        assert_eq!(robust_grid(787), (47, 17));
        for words in 1..30_000 {
            let (x, y) = robust_grid(words);
            assert!(x * y >= words && x > y && x != 61 && y != 61, "{words}");
            assert!(robust_dimensions_valid(x, y), "{words}");
            assert!(x <= 4 * y + 8, "{words}: {x} × {y}");
            let over = (x * y) as f64 / words as f64;
            assert!(words < 700 || over <= 1.07, "{words}: {x} × {y}");
            assert!(words < 10_000 || over <= 1.02, "{words}: {x} × {y}");
        }
    }

    /// Far below 2⁻⁶⁴ few hash values reach ε at no size (their M_k is +∞, never −∞ or
    /// negative), so the sizing takes k = 64 and meets ε; where that too is past the limit
    /// the error names the capacity asked.
    #[test]
    fn a_tiny_epsilon_is_met_with_64_hash_values_or_refused_by_its_size() {
        for fpp in [1e-20, 1e-30, 1e-100, 1e-300] {
            for k in 1..=MAX_NUM_HASHES {
                let bits = robust_usable_bits_for_fpp(1_000, fpp, k);
                assert!(bits > 0.0, "ε {fpp}, k {k}: {bits}");
            }
            let (x, y, k) = robust_dimensions_for_fpp(1_000, fpp, None).unwrap();
            assert_eq!(k, MAX_NUM_HASHES, "ε {fpp}");
            assert!(fpp_robust(x, y, k, 1_000) <= fpp, "ε {fpp}");
        }
        match robust_dimensions_for_fpp(1_000_000, 1e-300, None) {
            Err(Error::CapacityTooLarge { capacity, .. }) => assert_eq!(capacity, 1_000_000),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn absurd_sizes_are_errors() {
        assert!(matches!(
            robust_dimensions(1 << 39, 1e-9),
            Err(Error::CapacityTooLarge { .. })
        ));
        assert!(check_robust_size(u64::MAX, 3).is_err());
        assert!(robust_dimensions(0, 0.01).is_err());
    }
}
