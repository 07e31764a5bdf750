//! Theory of the stable Bloom filter: the formulas its builder sizes with and its
//! `Filter::fpp_at` answers with.

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

#[cfg(test)]
mod tests {
    use crate::params::*;

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
}
