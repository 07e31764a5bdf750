//! How a study judges its measurements against theory: each point's deviation in standard
//! deviations (σ), and one χ² test of the whole set.
//!
//! A point is a measured rate `p̂` with its theoretical value `p` and the standard deviation
//! `σ` that `p̂` has if the theory is right. Its deviation is `z = (p̂ − p)/σ`. For the set:
//!
//! * the **largest |z|**, with its two-sided p-value corrected for the number of points
//!   (Šidák: `1 − (1 − 2Φ(−|z|))^N`), so that one point of many at 2.5σ is not an alarm;
//! * **χ² = Σ z²** over the points that are independent of each other, a χ² variable with
//!   as many degrees of freedom as points when the theory is right (Pearson); its upper
//!   tail is the p-value. Only points with at least 5 expected events of each outcome
//!   enter it (the textbook condition for the normal approximation of a binomial count);
//!   the others still count for the largest |z|.
//!
//! The set is *on theory* when both p-values are at least [`ALPHA`]: either test rejecting
//! decides, and the sentence names which one did. Points that are
//! trivially on theory — a rate of exactly 0 where theory expects fewer than 0.05 events,
//! or exactly 1 where it expects fewer than 0.05 non-events — are left out of both and
//! counted apart: they show nothing about the formula.
//!
//! Where σ comes from matters as much as the formula:
//!
//! * queries to **one filter** are binomial given that filter, but the filter itself
//!   deviates from the average filter (how many of its bits happen to be set). A study
//!   with one filter per point adds that filter-to-filter variance ([`filter_sd`]) to the
//!   binomial one ([`one_filter_sd`]);
//! * a rate pooled over **repetitions with fresh hash seeds** has the variance theory gives
//!   it — binomial plus the filters' variance over the number of repetitions — where a
//!   model of the filters' variance exists, and the spread between repetitions where none
//!   does ([`clustered_sd`]: taking the larger of the two made σ about 20% too large);
//! * **filters that share hash seed and keys** have correlated fills (the same digests,
//!   scaled to each m), so a study gives every point's filter its own hash seed: otherwise
//!   Σ z² over its points spreads wider than a χ² does;
//! * **checkpoints of one filter** (the same filter asked as it fills) share that filter,
//!   so they are not independent tests: a study marks one checkpoint per filter as
//!   independent, and the χ² is computed over those.
//!
//! ```
//! use bloomkit_experiments::verdict::{Check, Verdict};
//! let mut verdict = Verdict::new();
//! // 1 010 false positives in 100 000 queries of a filter of m = 958 506 bits, k = 7,
//! // n = 100 000 (theory: 0.01004).
//! verdict.add(Check::classic("ε = 0.01".into(), 1_010, 100_000, (958_506, 7, 100_000)));
//! // A rate of 0 where theory expects 10⁻⁹ of an event: trivial, left out.
//! verdict.add(Check::classic("ε = 1e-12".into(), 0, 1_000, (10_000_000, 40, 100)));
//! let summary = verdict.summary();
//! assert_eq!((summary.judged, summary.trivial, summary.dof), (1, 1, 1));
//! assert!(summary.on_theory());
//! assert!(verdict.sentence("rate", "why").starts_with("rate: on theory — largest deviation"));
//! ```

use super::sig;

/// The significance level below which a set of points is called off theory: one chance in
/// a thousand that a set truly on theory looks this far off. Strict, because the report has
/// about a dozen such verdicts and each should be trustworthy alone.
pub const ALPHA: f64 = 0.001;

/// One measured point against its theory.
#[derive(Debug, Clone)]
pub struct Check {
    /// What the point is (`n = 1000, ρ = 3`).
    pub label: String,
    /// The measured rate.
    pub measured: f64,
    /// The theoretical rate.
    pub theory: f64,
    /// The standard deviation of the measured rate if the theory is right.
    pub sd: f64,
    /// The number of trials (queries, items) behind the rate.
    pub trials: f64,
    /// Whether the point is independent of the other independent points (enters the χ²).
    pub independent: bool,
}

impl Check {
    /// A classic Bloom filter of m bits and k hashes holding n items, asked `queries`
    /// absent items of which `false_positives` came back "maybe": one filter, so σ holds
    /// the queries' binomial spread and the filter's own ([`one_filter_sd`]); the theory
    /// is `(1 − (1 − 1/m)^(kn))^k`.
    pub fn classic(
        label: String,
        false_positives: u64,
        queries: u64,
        (m, k, n): (u64, u32, u64),
    ) -> Check {
        let theory = bloomkit::params::fpp_exact(m, k, n);
        let trials = queries as f64;
        Check {
            label,
            measured: false_positives as f64 / trials.max(1.0),
            theory,
            sd: one_filter_sd(theory, trials, m, k, n),
            trials,
            independent: true,
        }
    }

    /// A rate from `trials` independent trials, each a success with probability `theory`
    /// if the theory is right: σ is the binomial spread alone (no filter-to-filter part).
    pub fn binomial(label: String, measured: f64, theory: f64, trials: f64) -> Check {
        Check {
            label,
            measured,
            theory,
            sd: binomial_sd(theory, trials),
            trials,
            independent: true,
        }
    }

    /// The deviation in standard deviations (0 when σ is 0 and the values agree).
    pub fn z(&self) -> f64 {
        let gap = self.measured - self.theory;
        if self.sd > 0.0 {
            gap / self.sd
        } else if gap.abs() < 1e-12 {
            0.0
        } else {
            f64::INFINITY.copysign(gap)
        }
    }

    /// Whether the point is trivially on theory: a rate of exactly 0 (or 1) where theory
    /// expects fewer than 0.05 events (or non-events).
    pub fn trivial(&self) -> bool {
        (self.measured == 0.0 && self.theory * self.trials < 0.05)
            || (self.measured == 1.0 && (1.0 - self.theory) * self.trials < 0.05)
    }

    /// Whether the point has at least 5 expected events of each outcome (enters the χ²).
    pub fn large(&self) -> bool {
        self.theory * self.trials >= 5.0 && (1.0 - self.theory) * self.trials >= 5.0
    }

    /// The cell a table shows in its verdict column: `trivial`, or the deviation in σ.
    pub fn cell(&self) -> String {
        if self.trivial() {
            "trivial".into()
        } else {
            sigma(self.z())
        }
    }
}

/// A set of points and the verdict on them.
#[derive(Debug, Clone, Default)]
pub struct Verdict {
    /// The points.
    pub checks: Vec<Check>,
}

/// The summary numbers of a verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Points judged (not trivial).
    pub judged: usize,
    /// Points left out as trivial.
    pub trivial: usize,
    /// The index of the point with the largest |z|, if any was judged.
    pub worst: Option<usize>,
    /// The Šidák-corrected two-sided p-value of the largest |z|.
    pub worst_p: f64,
    /// χ² over the independent, large points.
    pub chi2: f64,
    /// Its degrees of freedom (the number of those points).
    pub dof: usize,
    /// The χ² p-value (1 when there are no degrees of freedom).
    pub chi2_p: f64,
}

impl Summary {
    /// Whether the set is on theory at level [`ALPHA`].
    pub fn on_theory(&self) -> bool {
        self.worst_p >= ALPHA && self.chi2_p >= ALPHA
    }
}

impl Verdict {
    /// An empty verdict.
    pub fn new() -> Self {
        Verdict::default()
    }

    /// Adds a point.
    pub fn add(&mut self, check: Check) {
        self.checks.push(check);
    }

    /// The summary numbers.
    pub fn summary(&self) -> Summary {
        let judged: Vec<(usize, &Check)> = self
            .checks
            .iter()
            .enumerate()
            .filter(|(_, c)| !c.trivial())
            .collect();
        let worst = judged
            .iter()
            .max_by(|a, b| a.1.z().abs().total_cmp(&b.1.z().abs()))
            .map(|(i, _)| *i);
        let worst_p = worst.map_or(1.0, |i| {
            let single = 2.0 * normal_sf(self.checks[i].z().abs());
            // Šidák: the chance that the largest of N independent |z| is this large.
            1.0 - (1.0 - single).powf(judged.len() as f64)
        });
        let chi_points: Vec<&Check> = judged
            .iter()
            .map(|(_, c)| *c)
            .filter(|c| c.independent && c.large())
            .collect();
        let chi2: f64 = chi_points.iter().map(|c| c.z().powi(2)).sum();
        let dof = chi_points.len();
        Summary {
            judged: judged.len(),
            trivial: self.checks.len() - judged.len(),
            worst,
            worst_p,
            chi2,
            dof,
            chi2_p: if dof == 0 { 1.0 } else { chi2_sf(chi2, dof) },
        }
    }

    /// The verdict as the report carries it: the sentence of [`Verdict::sentence`] with the
    /// numbers behind it, so that the page's table of verdicts and the study's own box are
    /// made from the same values.
    pub fn judge(&self, what: &str, why: &str) -> Judgement {
        let summary = self.summary();
        Judgement {
            what: what.to_owned(),
            sentence: self.sentence(what, why),
            worst: summary.worst.map(|i| self.checks[i].clone()),
            worst_in_chi2: summary.worst.is_some_and(|i| {
                let c = &self.checks[i];
                c.independent && c.large()
            }),
            summary,
        }
    }

    /// The sentence the report shows: `what`, on theory or not, the largest deviation, the
    /// χ² test, the trivial points left out; `why` appended when off theory.
    pub fn sentence(&self, what: &str, why: &str) -> String {
        let s = self.summary();
        if s.judged == 0 {
            return format!("{what}: nothing to judge ({} trivial point(s)).", s.trivial);
        }
        let worst = s.worst.map(|i| &self.checks[i]);
        let largest = worst.map_or(String::new(), |c| {
            let (measured, theory) = sig_pair(c.measured, c.theory);
            format!(
                "largest deviation {} ({}: measured {}, theory {}; p {} for the largest of \
                 {} points)",
                sigma(c.z()),
                c.label,
                measured,
                theory,
                p_text(s.worst_p),
                s.judged
            )
        });
        let chi = if s.dof == 0 {
            "no point large enough for a χ² test".to_owned()
        } else {
            format!(
                "χ² = {:.1} on {} independent point(s), p {}",
                s.chi2,
                s.dof,
                p_text(s.chi2_p)
            )
        };
        let trivial = if s.trivial == 0 {
            String::new()
        } else {
            format!(
                "; {} trivial point(s) (a rate of exactly 0 or 1 where theory says so) left out",
                s.trivial
            )
        };
        if s.on_theory() {
            return format!("{what}: on theory — {largest}; {chi}{trivial}.");
        }
        let by_worst = s.worst_p < ALPHA;
        let by_chi2 = s.chi2_p < ALPHA;
        let test = match (by_worst, by_chi2) {
            (true, true) => "both tests",
            (true, false) => "the largest deviation",
            _ => "the χ²",
        };
        // The rule: either test rejecting decides. Where the largest deviation rejects and
        // the χ² does not, say why the χ² does not see that point.
        let unseen = match worst {
            Some(c) if by_worst && !by_chi2 && !c.independent => {
                " The χ² does not see that point: it is a checkpoint of a filter whose \
                 independent checkpoint is another one."
            }
            Some(c) if by_worst && !by_chi2 && !c.large() => {
                " The χ² does not see that point: it has fewer than 5 expected events of one \
                 outcome."
            }
            Some(_) if by_worst && !by_chi2 => {
                " One far point among many moves the χ² less than it moves the largest \
                 deviation."
            }
            _ => "",
        };
        format!(
            "{what}: NOT on theory (p < {ALPHA} by {test}) — {largest}; {chi}{trivial}.{unseen} \
             {why}"
        )
    }
}

/// A verdict as a report carries it: what was judged, the sentence its box shows and the
/// numbers behind both.
#[derive(Debug, Clone)]
pub struct Judgement {
    /// What was judged (the sentence's opening words).
    pub what: String,
    /// The sentence of the study's box.
    pub sentence: String,
    /// The summary numbers.
    pub summary: Summary,
    /// The point with the largest |z|, if any was judged.
    pub worst: Option<Check>,
    /// Whether that point is one of the χ²'s points.
    pub worst_in_chi2: bool,
}

impl Judgement {
    /// `on theory` or `NOT on theory`.
    pub fn word(&self) -> &'static str {
        if self.summary.judged == 0 {
            "nothing to judge"
        } else if self.summary.on_theory() {
            "on theory"
        } else {
            "NOT on theory"
        }
    }
}

/// A deviation in σ with one decimal and its sign, never "−0.0σ": a deviation that rounds
/// to zero is "0.0σ".
pub fn sigma(z: f64) -> String {
    let shown = format!("{z:+.1}");
    if shown == "+0.0" || shown == "-0.0" {
        "0.0σ".into()
    } else {
        format!("{shown}σ")
    }
}

/// A p-value as text with its relation, to follow "p" or "P(…)": `= ` and two significant
/// digits, or `< 1e-15` below what doubles resolve (never "p = < 1e-15").
pub fn p_text(p: f64) -> String {
    if p < 1e-15 {
        "< 1e-15".into()
    } else if p >= 0.01 {
        format!("= {p:.2}")
    } else {
        format!("= {}", sig(p, 2))
    }
}

/// σ of a rate measured on `trials` independent trials of probability `p`: `√(p(1−p)/N)`.
pub fn binomial_sd(p: f64, trials: f64) -> f64 {
    if trials <= 0.0 {
        return 0.0;
    }
    (p * (1.0 - p) / trials).max(0.0).sqrt()
}

/// σ of the false-positive rate of one filter of m bits and k hashes holding n items,
/// across filters (hash seeds): the rate of a filter is `(X/m)^k` with X its set bits, so
/// by the delta method `σ ≈ k q^(k−1) σ_X / m` with `q = 1 − (1 − 1/m)^(kn)` the expected
/// fill and, for kn independent uniform positions,
/// `Var X = m(m−1)(1 − 2/m)^(kn) + m(1 − 1/m)^(kn) − m²(1 − 1/m)^(2kn)`
/// (the occupancy variance, e.g. Mitzenmacher & Upfal, "Probability and Computing", 5.4).
pub fn filter_sd(m: u64, k: u32, n: u64) -> f64 {
    if m < 2 {
        return 0.0;
    }
    let mf = m as f64;
    let kn = k as f64 * n as f64;
    let empty1 = (kn * (-1.0 / mf).ln_1p()).exp();
    let empty2 = (kn * (-2.0 / mf).ln_1p()).exp();
    let var_x = (mf * (mf - 1.0) * empty2 + mf * empty1 - mf * mf * empty1 * empty1).max(0.0);
    let q = 1.0 - empty1;
    k as f64 * q.powi(k as i32 - 1) * var_x.sqrt() / mf
}

/// σ of a rate measured by one filter on `queries` queries: the binomial σ of the queries
/// and the filter-to-filter σ of [`filter_sd`], added in quadrature.
pub fn one_filter_sd(p: f64, queries: f64, m: u64, k: u32, n: u64) -> f64 {
    binomial_sd(p, queries).hypot(filter_sd(m, k, n))
}

/// σ of a rate pooled over clusters (repetitions, each its own filter and hash seed):
/// `clusters` holds (events, trials) per cluster; `filter_var` is the variance of one
/// filter's rate across filters that theory expects, `None` where no model is at hand.
///
/// * **With a model**, σ is the one the pooled rate has if the theory is right,
///   `√(p(1−p)/N + filter_var/C)` — the σ a verdict asks for, known rather than estimated.
///   The spread between clusters is *not* taken as well: an earlier version used the larger
///   of the two, and the larger of an unbiased estimate and the true value is biased
///   upwards. With C = 8 … 40 clusters it made σ² 8–15% too large on average, so E[z²]
///   was 0.85–0.93 instead of 1 (the unit test `clustered_sd_has_the_variance_it_claims`
///   simulates it), and the page's χ² summed to about two thirds of its degrees of freedom.
///   A study whose clusters spread more than its model says shows it as deviations, as it
///   should: the model is part of the theory judged.
/// * **Without a model**, the spread between clusters estimates the variance (the ratio
///   estimator's, `C/(C−1) · Σ (sᵢ − p̂ nᵢ)² / N²`), floored at the queries' binomial
///   variance `p(1−p)/N`, which is always there (a spread of a few clusters can be 0 when
///   every cluster saw no event).
pub fn clustered_sd(clusters: &[(u64, u64)], p: f64, filter_var: Option<f64>) -> f64 {
    let events: u64 = clusters.iter().map(|c| c.0).sum();
    let trials: u64 = clusters.iter().map(|c| c.1).sum();
    if trials == 0 {
        return 0.0;
    }
    let n = trials as f64;
    let count = clusters.len() as f64;
    let binomial = binomial_sd(p, n);
    if let Some(filter_var) = filter_var {
        return (binomial.powi(2) + filter_var / count).sqrt();
    }
    if clusters.len() < 2 {
        return binomial;
    }
    let mean = events as f64 / n;
    let spread: f64 = clusters
        .iter()
        .map(|&(s, t)| (s as f64 - mean * t as f64).powi(2))
        .sum();
    let variance = count / (count - 1.0) * spread / (n * n);
    variance.sqrt().max(binomial)
}

/// Two values with enough significant digits (4 to 8) that they differ in print where
/// they differ in value: 0.99995 against 1 prints as 0.99995 and 1.0000, not both as 1.000.
pub fn sig_pair(a: f64, b: f64) -> (String, String) {
    for digits in 4..=8 {
        let (x, y) = (sig(a, digits), sig(b, digits));
        let shown = |t: &str| t.parse::<f64>().unwrap_or(f64::NAN);
        if shown(&x) != shown(&y) || a == b {
            return (x, y);
        }
    }
    (sig(a, 8), sig(b, 8))
}

/// The upper tail of the standard normal distribution, `P(Z > z) = erfc(z/√2)/2`, with
/// `erfc` from `statrs` (a kept, widely used implementation, rather than one written here).
pub fn normal_sf(z: f64) -> f64 {
    if z.is_nan() {
        return f64::NAN;
    }
    0.5 * statrs::function::erf::erfc(z / std::f64::consts::SQRT_2)
}

/// The upper tail of the χ² distribution with `dof` degrees of freedom:
/// `P(χ² > x) = Q(dof/2, x/2)`, the regularized upper incomplete gamma function
/// (`statrs::function::gamma::gamma_ur`).
pub fn chi2_sf(x: f64, dof: usize) -> f64 {
    if dof == 0 || x <= 0.0 {
        return 1.0;
    }
    if x.is_nan() {
        return f64::NAN;
    }
    if x.is_infinite() {
        return 0.0;
    }
    statrs::function::gamma::gamma_ur(dof as f64 / 2.0, x / 2.0)
}

/// The lower tail of the χ² distribution, `P(χ² ≤ x) = P(dof/2, x/2)`
/// (`statrs::function::gamma::gamma_lr`), computed directly rather than as `1 − chi2_sf`,
/// which loses its digits when the upper tail is near 1.
pub fn chi2_cdf(x: f64, dof: usize) -> f64 {
    if dof == 0 || x.is_infinite() {
        return 1.0;
    }
    if x.is_nan() {
        return f64::NAN;
    }
    if x <= 0.0 {
        return 0.0;
    }
    statrs::function::gamma::gamma_lr(dof as f64 / 2.0, x / 2.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A p-value reads "p = 0.12" or "p < 1e-15", never "p = < 1e-15".
    #[test]
    fn p_values_carry_their_relation() {
        assert_eq!(format!("p {}", p_text(0.123)), "p = 0.12");
        assert_eq!(format!("p {}", p_text(0.00123)), "p = 0.0012");
        assert_eq!(format!("p {}", p_text(1e-300)), "p < 1e-15");
        assert_eq!(format!("p {}", p_text(0.0)), "p < 1e-15");
    }

    #[test]
    fn normal_tail_matches_tables() {
        assert!((normal_sf(0.0) - 0.5).abs() < 1e-12);
        assert!((normal_sf(1.959_963_984_540_054) - 0.025).abs() < 1e-9);
        assert!((normal_sf(3.0) - 0.001_349_898).abs() < 1e-8);
        assert!((normal_sf(-1.0) - 0.841_344_746).abs() < 1e-8);
    }

    #[test]
    fn chi2_tail_matches_tables() {
        // χ²(1) at 3.841 → 0.05; χ²(10) at 18.307 → 0.05; χ²(10) at 29.588 → 0.001.
        assert!((chi2_sf(3.841_458_820_694_124, 1) - 0.05).abs() < 1e-9);
        assert!((chi2_sf(18.307_038_053_275_146, 10) - 0.05).abs() < 1e-9);
        assert!((chi2_sf(29.588_298_445_074_4, 10) - 0.001).abs() < 1e-9);
        assert!((chi2_sf(2.0, 2) - (-1.0f64).exp()).abs() < 1e-12);
        assert_eq!(chi2_sf(0.0, 3), 1.0);
    }

    #[test]
    fn deviations_never_print_a_negative_zero() {
        assert_eq!(sigma(-0.04), "0.0σ");
        assert_eq!(sigma(0.04), "0.0σ");
        assert_eq!(sigma(-1.26), "-1.3σ");
        assert_eq!(sigma(2.0), "+2.0σ");
    }

    #[test]
    fn chi2_lower_tail_matches_tables_and_the_upper() {
        // χ²(218) at 148.5: the issue's whole-page sum, a lower tail of about 1e-4.
        let low = chi2_cdf(148.5, 218);
        assert!(low > 1e-5 && low < 1e-3, "{low}");
        // χ²(5) at 1.145 → 0.05 (lower 5% point); complements the upper tail.
        assert!((chi2_cdf(1.145_476_226_061_769, 5) - 0.05).abs() < 1e-9);
        for (x, dof) in [(0.5, 1), (7.0, 4), (230.0, 218)] {
            assert!((chi2_cdf(x, dof) + chi2_sf(x, dof) - 1.0).abs() < 1e-12);
        }
        assert_eq!(chi2_cdf(0.0, 3), 0.0);
        assert_eq!(chi2_sf(f64::INFINITY, 3), 0.0);
    }

    fn check(measured: f64, theory: f64, trials: f64) -> Check {
        Check::binomial(format!("{measured}"), measured, theory, trials)
    }

    #[test]
    fn a_set_on_theory_passes_and_one_far_point_fails_it() {
        let mut verdict = Verdict::new();
        for i in 0..20 {
            // ±1σ alternately.
            let sign = if i % 2 == 0 { 1.0 } else { -1.0 };
            verdict.add(check(0.1 + sign * 0.003, 0.1, 10_000.0));
        }
        let s = verdict.summary();
        assert_eq!(s.dof, 20);
        assert!((s.chi2 - 20.0).abs() < 1e-9, "{s:?}");
        assert!(s.on_theory(), "{s:?}");
        assert!(verdict.sentence("x", "why").contains("on theory"));
        // One point at 6σ.
        verdict.add(check(0.118, 0.1, 10_000.0));
        let s = verdict.summary();
        assert!(!s.on_theory(), "{s:?}");
        assert!(verdict.sentence("x", "because").contains("because"));
    }

    #[test]
    fn trivial_points_are_left_out() {
        let mut verdict = Verdict::new();
        verdict.add(check(0.0, 1e-9, 1_000.0));
        verdict.add(check(1.0, 1.0 - 1e-12, 1_000.0));
        let s = verdict.summary();
        assert_eq!((s.judged, s.trivial), (0, 2));
        // A zero where theory expects 30 events is not trivial, and far off.
        verdict.add(check(0.0, 0.03, 1_000.0));
        let s = verdict.summary();
        assert_eq!((s.judged, s.trivial), (1, 2));
        assert!(!s.on_theory());
    }

    #[test]
    fn dependent_points_stay_out_of_the_chi2() {
        let mut verdict = Verdict::new();
        let mut c = check(0.1 + 0.006, 0.1, 10_000.0);
        c.independent = false;
        verdict.add(c);
        let s = verdict.summary();
        assert_eq!(s.dof, 0);
        assert_eq!(s.chi2_p, 1.0);
    }

    #[test]
    fn filter_spread_matches_a_simulation_scale() {
        // m = 1000, k = 2, n = 250: fill ≈ 0.39, σ_X ≈ 11.5 bits, σ of the rate ≈ 0.009.
        let sd = filter_sd(1_000, 2, 250);
        assert!(sd > 0.005 && sd < 0.015, "{sd}");
        assert_eq!(filter_sd(1, 1, 5), 0.0);
    }

    #[test]
    fn clustered_sd_floors_at_the_binomial() {
        let same = vec![(10u64, 100u64); 20];
        assert!((clustered_sd(&same, 0.1, None) - binomial_sd(0.1, 2_000.0)).abs() < 1e-15);
        let spread: Vec<(u64, u64)> = (0..20)
            .map(|i| (if i < 10 { 0 } else { 20 }, 100))
            .collect();
        assert!(clustered_sd(&spread, 0.1, None) > 2.0 * binomial_sd(0.1, 2_000.0));
        // All clusters empty, but theory says one filter in thirty has a rate of 0.3: the
        // model's σ holds the filters' variance.
        let empty = vec![(0u64, 100u64); 20];
        let filter_var: f64 = 0.3f64.powi(2) / 30.0;
        let sd = clustered_sd(&empty, 0.01, Some(filter_var));
        assert!(sd > (filter_var / 20.0).sqrt() * 0.999, "{sd}");
    }

    /// A standard normal draw (Box–Muller) from a seeded generator.
    fn gaussian(rng: &mut crate::corpus::SplitMix64) -> f64 {
        let u = rng.unit().max(1e-300);
        let v = rng.unit();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    /// Simulates pooled rates of C clusters whose filters' rates vary by a known variance
    /// around p, each asked q binomial queries: σ² must average the true variance of the
    /// pooled rate, and z² must average 1.
    #[test]
    fn clustered_sd_has_the_variance_it_claims() {
        let mut rng = crate::corpus::SplitMix64::new(7);
        for (clusters, queries, p, filter_sd) in
            [(8usize, 20_000u64, 0.01, 0.002), (40, 2_000, 0.05, 0.01)]
        {
            let truth = (p * (1.0 - p) / (clusters as u64 * queries) as f64
                + filter_sd * filter_sd / clusters as f64)
                .sqrt();
            let trials = 4_000;
            let (mut var_sum, mut z2_sum) = (0.0, 0.0);
            for _ in 0..trials {
                let sample: Vec<(u64, u64)> = (0..clusters)
                    .map(|_| {
                        let rate = (p + filter_sd * gaussian(&mut rng)).clamp(0.0, 1.0);
                        // The binomial count by its normal approximation (np ≥ 20 here).
                        let mean = rate * queries as f64;
                        let sd = (mean * (1.0 - rate)).sqrt();
                        let count = (mean + sd * gaussian(&mut rng)).round().max(0.0);
                        (count as u64, queries)
                    })
                    .collect();
                let sd = clustered_sd(&sample, p, Some(filter_sd * filter_sd));
                let pooled = sample.iter().map(|c| c.0).sum::<u64>() as f64
                    / (clusters as u64 * queries) as f64;
                var_sum += sd * sd;
                z2_sum += ((pooled - p) / sd).powi(2);
            }
            let var_ratio = var_sum / trials as f64 / (truth * truth);
            let z2 = z2_sum / trials as f64;
            // 4000 draws: the mean of z² has a standard error of √(2/4000) ≈ 0.022.
            assert!(
                (var_ratio - 1.0).abs() < 0.02,
                "σ² / true variance = {var_ratio}"
            );
            assert!((z2 - 1.0).abs() < 0.08, "E[z²] = {z2}");
        }
    }

    #[test]
    fn pairs_print_apart() {
        assert_eq!(sig_pair(1.0, 0.99995), ("1.0000".into(), "0.99995".into()));
        assert_eq!(sig_pair(1.0, 0.9), ("1.000".into(), "0.9000".into()));
        assert_eq!(sig_pair(0.1234, 0.5), ("0.1234".into(), "0.5000".into()));
    }
}
