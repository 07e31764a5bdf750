//! Small statistics used to judge measured false-positive rates, and the skewed (Zipf)
//! streams the frequency-aware kinds are measured on.

/// The two-sided normal quantile for a 95% interval.
pub const Z_95: f64 = 1.959_963_984_540_054;
/// The two-sided normal quantile for a 99.9% interval.
pub const Z_99_9: f64 = 3.290_526_731_491_926;

/// The Wilson score interval for a binomial proportion: `successes` out of `trials`, at the
/// two-sided normal quantile `z` (Wilson, JASA 1927). Unlike the normal ("Wald") interval
/// it stays inside [0, 1] and is honest for rates near 0, such as false-positive rates of
/// 10⁻⁴ measured on 10⁵ trials.
///
/// ```
/// use bloomkit::stats::{wilson_interval, Z_95};
/// let (low, high) = wilson_interval(626, 58_000, Z_95);
/// assert!(low < 626.0 / 58_000.0 && 626.0 / 58_000.0 < high);
/// assert_eq!(wilson_interval(0, 0, Z_95), (0.0, 1.0));
/// ```
pub fn wilson_interval(successes: u64, trials: u64, z: f64) -> (f64, f64) {
    if trials == 0 {
        return (0.0, 1.0);
    }
    wilson(successes as f64 / trials as f64, trials as f64, z)
}

/// The Wilson interval of proportion `p` measured on `n` (possibly fractional, effective)
/// trials.
fn wilson(p: f64, n: f64, z: f64) -> (f64, f64) {
    let z2 = z * z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = z / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    // At 0 (or all) successes the bound is exactly 0 (or 1); say so rather than leave
    // the rounding residue of centre − half.
    let low = if p <= 0.0 {
        0.0
    } else {
        (centre - half).max(0.0)
    };
    let high = if p >= 1.0 {
        1.0
    } else {
        (centre + half).min(1.0)
    };
    (low, high)
}

/// The Wilson interval for a proportion measured in independent *clusters* of trials that
/// are correlated within a cluster — for example the items of one filter, which all see
/// that filter's state. `clusters` holds (successes, trials) per cluster.
///
/// Correlated trials carry less information than independent ones, so the plain Wilson
/// interval of the pooled counts is too narrow. The variance of the pooled proportion is
/// estimated from the spread between clusters (the ratio estimator's variance,
/// `C/(C−1) · Σ (sᵢ − p nᵢ)² / N²`), its ratio to the binomial variance `p(1−p)/N` is
/// the design effect `deff` (Kish, "Survey Sampling", 1965; at least 1), and the result
/// is the Wilson interval with the effective sample size `N / deff`. Independent trials
/// give `deff ≈ 1`, i.e. [`wilson_interval`] of the pooled counts. Needs a few dozen
/// clusters for the spread to be estimated well.
///
/// ```
/// use bloomkit::stats::{wilson_interval, wilson_interval_clustered, Z_95};
/// // Every cluster all-or-nothing: 10 clusters of 100 behave like 10 trials, not 1000.
/// let clusters: Vec<(u64, u64)> = (0..10).map(|i| (if i < 3 { 100 } else { 0 }, 100)).collect();
/// let (low, high) = wilson_interval_clustered(&clusters, Z_95);
/// let (plain_low, plain_high) = wilson_interval(300, 1000, Z_95);
/// assert!(high - low > 3.0 * (plain_high - plain_low));
/// ```
pub fn wilson_interval_clustered(clusters: &[(u64, u64)], z: f64) -> (f64, f64) {
    let successes: u64 = clusters.iter().map(|c| c.0).sum();
    let trials: u64 = clusters.iter().map(|c| c.1).sum();
    if trials == 0 {
        return (0.0, 1.0);
    }
    let n = trials as f64;
    let p = successes as f64 / n;
    let binomial = p * (1.0 - p) / n;
    let count = clusters.len() as f64;
    let design_effect = if clusters.len() >= 2 && binomial > 0.0 {
        let spread: f64 = clusters
            .iter()
            .map(|&(s, t)| (s as f64 - p * t as f64).powi(2))
            .sum();
        let variance = count / (count - 1.0) * spread / (n * n);
        (variance / binomial).max(1.0)
    } else {
        1.0
    };
    wilson(p, n / design_effect, z)
}

/// The interval in which the number of successes of `trials` Bernoulli trials with
/// probability `p` falls with the confidence of quantile `z` (normal approximation with a
/// continuity correction, widened by one count each side). Used by tests that check a
/// measured count against a theoretical rate.
pub fn binomial_acceptance(p: f64, trials: u64, z: f64) -> (f64, f64) {
    let n = trials as f64;
    let mean = n * p;
    let sd = (n * p * (1.0 - p)).sqrt();
    ((mean - z * sd - 1.5).max(0.0), mean + z * sd + 1.5)
}

/// The upper tail of the standard normal distribution, `Pr(Z > z)`, as `erfc(z/√2)/2`
/// with `erfc` from the `statrs` crate (a kept implementation, accurate to about 1e-10
/// relative, rather than one written here).
///
/// ```
/// use bloomkit::stats::{normal_upper_tail, Z_99_9};
/// assert!((normal_upper_tail(0.0) - 0.5).abs() < 1e-12);
/// assert!((normal_upper_tail(Z_99_9) - 0.0005).abs() < 1e-12);
/// assert!((normal_upper_tail(-Z_99_9) - 0.9995).abs() < 1e-12);
/// ```
pub fn normal_upper_tail(z: f64) -> f64 {
    if z.is_nan() {
        return f64::NAN;
    }
    0.5 * statrs::function::erf::erfc(z / std::f64::consts::SQRT_2)
}

/// The one-sided critical value that keeps the family-wise error rate at `alpha` over
/// `tests` independent tests (Šidák, JASA 1967): each test is run at
/// `1 − (1 − alpha)^(1/tests)`, and the result is the z whose upper normal tail is that,
/// `z = √2 · erfc⁻¹(2 · per_test)` (the inverse from `statrs`, which keeps its digits for
/// the small tails a many-test family asks for). A test suite that judges many measured
/// rates at once uses it so that the whole suite, not each rate, fails by chance with
/// probability `alpha`. `alpha` outside (0, 1) is clamped to its nearest usable value.
///
/// ```
/// use bloomkit::stats::{sidak_z, Z_99_9};
/// // One test at α = 0.0005 one-sided is the two-sided 99.9% quantile.
/// assert!((sidak_z(0.0005, 1) - Z_99_9).abs() < 1e-9);
/// // Thirty tests at a family-wise 0.1% need about 4 σ each.
/// let z = sidak_z(0.001, 30);
/// assert!(z > 3.9 && z < 4.1, "{z}");
/// ```
pub fn sidak_z(alpha: f64, tests: u32) -> f64 {
    let alpha = if alpha.is_nan() {
        0.5
    } else {
        alpha.clamp(f64::MIN_POSITIVE, 1.0 - f64::EPSILON)
    };
    // 1 − (1 − α)^(1/tests) = −expm1(ln(1 − α)/tests), without cancellation.
    let per_test = -((-alpha).ln_1p() / f64::from(tests.max(1))).exp_m1();
    std::f64::consts::SQRT_2 * statrs::function::erf::erfc_inv(2.0 * per_test)
}

/// Zipf's law over the ranks `0..n`: rank r is drawn with probability proportional to
/// `1/(r + 1)^s` (s = 1 is the classic law of word and web-request frequencies). The
/// skewed streams on which the spectral and weighted filters are measured.
///
/// Sampling inverts the cumulative distribution by binary search (O(log n) per draw) on
/// the uniform numbers of a [`SplitMix64`](crate::hash::SplitMix64) generator, so a stream
/// is reproducible from its seed.
///
/// ```
/// use bloomkit::stats::Zipf;
/// let zipf = Zipf::new(1_000, 1.0);
/// // p(0) = 1/H(1000) ≈ 0.1336, and rank 1 half as likely.
/// assert!((zipf.probability(0) - 0.1336).abs() < 1e-4);
/// assert!((zipf.probability(1) * 2.0 - zipf.probability(0)).abs() < 1e-12);
/// let draws: Vec<usize> = zipf.stream(7).take(10_000).collect();
/// let zeros = draws.iter().filter(|&&r| r == 0).count();
/// assert!((1_200..1_480).contains(&zeros), "{zeros}");
/// ```
#[derive(Clone, Debug)]
pub struct Zipf {
    cumulative: Vec<f64>,
}

impl Zipf {
    /// Zipf's law with exponent `s` ≥ 0 over `n` ≥ 1 ranks.
    ///
    /// # Panics
    ///
    /// If `n` is 0 or `s` is negative or not finite (a study's constant, not user input).
    pub fn new(n: usize, s: f64) -> Self {
        assert!(
            n > 0 && s.is_finite() && s >= 0.0,
            "Zipf needs n ≥ 1 and s ≥ 0"
        );
        let mut total = 0.0;
        let mut cumulative: Vec<f64> = (0..n)
            .map(|r| {
                total += ((r + 1) as f64).powf(-s);
                total
            })
            .collect();
        for c in &mut cumulative {
            *c /= total;
        }
        Zipf { cumulative }
    }

    /// The number of ranks.
    pub fn len(&self) -> usize {
        self.cumulative.len()
    }

    /// Whether there are no ranks (never: `new` needs one).
    pub fn is_empty(&self) -> bool {
        self.cumulative.is_empty()
    }

    /// The probability of rank `r`.
    pub fn probability(&self, r: usize) -> f64 {
        self.cumulative[r] - if r == 0 { 0.0 } else { self.cumulative[r - 1] }
    }

    /// The rank for a uniform `u` in [0, 1).
    pub fn rank(&self, u: f64) -> usize {
        self.cumulative
            .partition_point(|&c| c <= u)
            .min(self.cumulative.len() - 1)
    }

    /// An endless stream of ranks drawn from a generator seeded with `seed`.
    pub fn stream(&self, seed: u64) -> impl Iterator<Item = usize> + '_ {
        let mut rng = crate::hash::SplitMix64::new(seed);
        std::iter::repeat_with(move || {
            self.rank((rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_matches_a_textbook_value() {
        // 81 of 263 at 95%: Newcombe (1998) gives 0.2553 – 0.3662.
        let (low, high) = wilson_interval(81, 263, Z_95);
        assert!((low - 0.2553).abs() < 5e-4, "{low}");
        assert!((high - 0.3662).abs() < 5e-4, "{high}");
    }

    #[test]
    fn zero_successes_still_give_a_positive_upper_bound() {
        let (low, high) = wilson_interval(0, 1000, Z_95);
        assert_eq!(low, 0.0);
        assert!(high > 0.003 && high < 0.004, "{high}");
    }

    #[test]
    fn clustered_interval_equals_wilson_for_independent_looking_clusters() {
        // Identical clusters: no spread, design effect 1.
        let clusters = vec![(10u64, 100u64); 20];
        assert_eq!(
            wilson_interval_clustered(&clusters, Z_95),
            wilson_interval(200, 2000, Z_95)
        );
        assert_eq!(wilson_interval_clustered(&[], Z_95), (0.0, 1.0));
        assert_eq!(wilson_interval_clustered(&[(0, 50), (0, 50)], Z_95).0, 0.0);
    }

    #[test]
    fn normal_tail_and_sidak_match_tables() {
        // Φ̄(1) = 0.158655253931457, Φ̄(3) = 0.00134989803163009, Φ̄(6) = 9.86587645037698e-10
        // (Abramowitz & Stegun table 26.1 and its extensions).
        let close = |got: f64, table: f64| (got / table - 1.0).abs() < 1e-9;
        assert!(close(normal_upper_tail(1.0), 0.158_655_253_931_457));
        assert!(close(normal_upper_tail(3.0), 0.001_349_898_031_630_09));
        assert!(close(normal_upper_tail(6.0), 9.865_876_450_376_98e-10));
        assert!(close(normal_upper_tail(-1.0), 0.841_344_746_068_543));
        // Z_95 is the 2.5% point; Šidák with one test at α = 0.025 returns it.
        assert!((sidak_z(0.025, 1) - Z_95).abs() < 1e-9);
        // 10 tests at α = 0.05: per test 0.0051162741; its z is 2.568 (to 4 digits).
        assert!((sidak_z(0.05, 10) - 2.5683).abs() < 5e-4);
        assert!(sidak_z(f64::NAN, 3).is_finite() && sidak_z(2.0, 3).is_finite());
    }

    #[test]
    fn acceptance_interval_contains_the_mean() {
        let (low, high) = binomial_acceptance(0.01, 100_000, Z_99_9);
        assert!(low < 1000.0 && 1000.0 < high);
        assert!(high - low < 250.0);
    }
}
