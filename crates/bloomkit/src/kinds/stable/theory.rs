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

/// The fewest cells m for which a stable Bloom filter of K hash functions and cell maximum
/// Max can settle at false-positive probability `fpp` with P ≤ m decrements per insertion
/// ([`stable_decrements_for_fpp`] at most m). From the formula for P, `P ≤ m` is
/// `m ≥ K (1 + 1/r)` with `r = (1 − FPS^(1/K))^(−1/Max) − 1`; for the classic K of ε this
/// is about 7 items' worth of cells whatever ε (71 cells for K = 7, Max = 7 at ε = 1%), so
/// a filter sized for fewer items than that needs more cells than a classic filter's.
/// `None` when `fpp` is not in (0, 1), K or Max is 0, or the result does not fit in `u64`.
///
/// ```
/// use bloomkit::params::{stable_decrements_for_fpp, stable_min_cells_for_fpp};
/// let m = stable_min_cells_for_fpp(7, 7, 0.01).unwrap();
/// assert_eq!(m, 71);
/// assert!(stable_decrements_for_fpp(m, 7, 7, 0.01).unwrap() <= m as f64);
/// assert!(stable_decrements_for_fpp(m - 1, 7, 7, 0.01).unwrap() > (m - 1) as f64);
/// ```
pub fn stable_min_cells_for_fpp(num_hashes: u32, max: u32, fpp: f64) -> Option<u64> {
    if !(fpp > 0.0 && fpp < 1.0) || num_hashes == 0 || max == 0 {
        return None;
    }
    let k = num_hashes as f64;
    let zero_fraction = -(fpp.ln() / k).exp_m1();
    let ratio = (-zero_fraction.ln() / max as f64).exp_m1();
    let estimate = (k * (1.0 + 1.0 / ratio)).ceil();
    if !(estimate.is_finite() && estimate < u64::MAX as f64) {
        return None;
    }
    // The estimate, then the exact condition in floating point: a step or two either way.
    let reaches =
        |m: u64| stable_decrements_for_fpp(m, num_hashes, max, fpp).is_some_and(|p| p <= m as f64);
    let mut m = (estimate as u64).max(num_hashes as u64 + 1);
    while m > num_hashes as u64 + 1 && reaches(m - 1) {
        m -= 1;
    }
    while !reaches(m) {
        m = m.checked_add(1)?;
    }
    Some(m)
}

/// The per-insertion chances, for one cell, that the insertion sets it (`s = K/m`, one of
/// the item's K distinct cells) and that it decrements it without setting it
/// (`d = (1 − K/m)·P/m`: the run of P consecutive cells from a uniform start covers it
/// with probability exactly P/m, independently of the item's hash) — Deng & Rafiei's a
/// and b, so that the limits below are exactly [`stable_fpp`] and [`stable_zero_fraction`].
fn stable_event_rates(num_cells: u64, num_hashes: u32, decrements: u64) -> (f64, f64) {
    let m = num_cells.max(1) as f64;
    let set = (f64::from(num_hashes) / m).min(1.0);
    let decrement = (1.0 - set) * (decrements as f64 / m).min(1.0);
    (set, decrement)
}

/// `Pr(Binomial(trials, p) ≥ i)` for every i in `1..=max`, summing the probabilities of
/// 0 … max − 1 successes in log space (each term `exp` of its own logarithm, so a tail over
/// a long stream neither underflows nor loses its small terms).
fn binomial_upper_tails(trials: u64, p: f64, max: u32) -> Vec<f64> {
    let t = trials as f64;
    let mut tails = Vec::with_capacity(max as usize);
    if p <= 0.0 {
        tails.resize(max as usize, 0.0);
        return tails;
    }
    if p >= 1.0 {
        tails.extend((1..=u64::from(max)).map(|i| if i <= trials { 1.0 } else { 0.0 }));
        return tails;
    }
    let odds = (p / (1.0 - p)).ln();
    let mut ln_pmf = t * (-p).ln_1p(); // ln Pr(0 successes)
    let mut below = 0.0; // Pr(< i successes)
    for i in 0..u64::from(max) {
        if i <= trials {
            below += ln_pmf.exp();
            ln_pmf += ((t - i as f64) / (i as f64 + 1.0)).ln() + odds;
        }
        tails.push((1.0 - below).clamp(0.0, 1.0));
    }
    tails
}

/// The false-positive probability of a stable Bloom filter that started empty, after
/// `items` insertions of distinct items: it rises from 0 to the stable point
/// [`stable_fpp`] and never passes it, so a filter built for ε is at most ε at every point
/// of the stream.
///
/// Why: look back in time from a cell. Each insertion sets it (probability s), or else
/// decrements it (d), or leaves it (module-private `stable_event_rates`). The cell is
/// non-zero now exactly when, among the events met going back, a set comes before Max
/// decrements — and it lies within the `items` insertions there have been (before them the
/// cell was 0). Event types are independent of their timing, so with c = s + d,
///
/// ```text
///     Pr(non-zero after t) = Σ_{i=1..Max} (d/c)^(i−1) (s/c) · Pr(Binomial(t, c) ≥ i),
///     FPR(t) = Pr(non-zero after t)^K
/// ```
///
/// (the K cells of a fresh item treated as independent, as in Deng & Rafiei's analysis).
/// Each term grows with t, and as t → ∞ the sum is `1 − (d/c)^Max = 1 − Pr(0)`: the
/// stable point. Measured in `tests/suite/stable.rs` (about 0.46 ε at t = n for a filter
/// of capacity n and 3-bit cells).
///
/// ```
/// use bloomkit::params::{stable_fpp, stable_fpp_after};
/// let (m, k, p, max) = (19_171, 7, 64, 7); // with_capacity(2_000, 0.01)
/// assert_eq!(stable_fpp_after(m, k, p, max, 0), 0.0);
/// let at_capacity = stable_fpp_after(m, k, p, max, 2_000);
/// assert!(at_capacity > 0.004 && at_capacity < 0.005, "{at_capacity}");
/// let late = stable_fpp_after(m, k, p, max, 1_000_000);
/// assert!((late - stable_fpp(m, k, p, max)).abs() < 1e-4 * late);
/// ```
pub fn stable_fpp_after(
    num_cells: u64,
    num_hashes: u32,
    decrements: u64,
    max: u32,
    items: u64,
) -> f64 {
    let (set, decrement) = stable_event_rates(num_cells, num_hashes, decrements);
    let event = set + decrement;
    if event <= 0.0 {
        return 0.0;
    }
    let tails = binomial_upper_tails(items, event, max);
    let (first_is_set, next_is_decrement) = (set / event, decrement / event);
    let nonzero: f64 = tails
        .iter()
        .enumerate()
        .map(|(i, tail)| next_is_decrement.powi(i as i32) * first_is_set * tail)
        .sum();
    nonzero.clamp(0.0, 1.0).powi(num_hashes as i32)
}

/// The probability that a stable Bloom filter no longer finds an item `later` insertions
/// (of other items) after its own: its false-negative rate at that age. It rises from 0
/// (an item is always found right after its insertion) to `1 − FPS`, when the item is
/// found only as often as one never inserted.
///
/// Why: right after the insertion each of the item's K cells is at Max. Looking back from
/// `later` insertions on, a cell is 0 exactly when Max decrements come before any set
/// (of another item) — and within those `later` insertions:
///
/// ```text
///     Pr(cell 0 after j) = (d/c)^Max · Pr(Binomial(j, c) ≥ Max),
///     FNR(j) = 1 − (1 − Pr(cell 0 after j))^K
/// ```
///
/// with s, d, c as in [`stable_fpp_after`] (a cell set again by another item counts as
/// found, as a query sees it). This is the horizon `with_capacity(n, ε)` promises: with
/// 3-bit cells about 1% of items are lost n/4 insertions later, a quarter n/2 later, and
/// nine in ten n later (`tests/suite/stable.rs` measures it).
///
/// ```
/// use bloomkit::params::{stable_fnr_after, stable_fpp};
/// let (m, k, p, max) = (19_171, 7, 64, 7); // with_capacity(2_000, 0.01)
/// assert_eq!(stable_fnr_after(m, k, p, max, 0), 0.0);
/// let half = stable_fnr_after(m, k, p, max, 1_000);
/// assert!(half > 0.2 && half < 0.3, "{half}");
/// let forgotten = stable_fnr_after(m, k, p, max, 1_000_000);
/// assert!((forgotten - (1.0 - stable_fpp(m, k, p, max))).abs() < 1e-6);
/// ```
pub fn stable_fnr_after(
    num_cells: u64,
    num_hashes: u32,
    decrements: u64,
    max: u32,
    later: u64,
) -> f64 {
    if max == 0 {
        return 1.0;
    }
    let (set, decrement) = stable_event_rates(num_cells, num_hashes, decrements);
    let event = set + decrement;
    if event <= 0.0 {
        return 0.0;
    }
    let reached = binomial_upper_tails(later, event, max)[max as usize - 1];
    let zero = (decrement / event).powi(max as i32) * reached;
    1.0 - (1.0 - zero).powi(num_hashes as i32)
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
    fn binomial_tails_match_a_direct_sum() {
        let tails = super::binomial_upper_tails(10, 0.3, 4);
        let pmf = |i: u64| {
            let choose = (0..i).fold(1.0, |acc, j| acc * (10 - j) as f64 / (j + 1) as f64);
            choose * 0.3f64.powi(i as i32) * 0.7f64.powi(10 - i as i32)
        };
        for (i, tail) in tails.iter().enumerate() {
            let below: f64 = (0..=i as u64).map(pmf).sum();
            assert!((tail - (1.0 - below)).abs() < 1e-12, "{i}: {tail}");
        }
        // Fewer trials than successes asked: impossible.
        assert_eq!(super::binomial_upper_tails(2, 0.5, 4)[3], 0.0);
        // A long stream: the tail is 1 without underflow trouble.
        assert!((super::binomial_upper_tails(10_000_000, 0.01, 7)[6] - 1.0).abs() < 1e-12);
    }

    #[test]
    fn the_rate_rises_to_the_stable_point_and_the_losses_to_all_but_it() {
        for (m, k, p, max) in [
            (19_171u64, 7u32, 64u64, 7u32),
            (19_171, 7, 7, 1),
            (5_000, 3, 20, 15),
        ] {
            let fps = stable_fpp(m, k, p, max);
            let mut last = (0.0, 0.0);
            for t in [0u64, 10, 100, 1_000, 10_000, 100_000, 10_000_000] {
                let (fpr, fnr) = (
                    stable_fpp_after(m, k, p, max, t),
                    stable_fnr_after(m, k, p, max, t),
                );
                assert!(fpr >= last.0 && fnr >= last.1, "{m} {k} {p} {max} at {t}");
                assert!(fpr <= fps * (1.0 + 1e-9), "{fpr} > {fps}");
                last = (fpr, fnr);
            }
            assert!((last.0 - fps).abs() < 1e-6 * fps);
            assert!((last.1 - (1.0 - fps)).abs() < 1e-6);
        }
        // Max = 1: one decrement before any set kills a cell, Pr(0 after j) = d/c · (1 − (1 − c)^j).
        let (s, d) = super::stable_event_rates(1_000, 2, 5);
        let c = s + d;
        let zero = d / c * (1.0 - (1.0 - c).powi(300));
        let expected = 1.0 - (1.0 - zero).powi(2);
        assert!((stable_fnr_after(1_000, 2, 5, 1, 300) - expected).abs() < 1e-12);
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
