//! Generalized Bloom filter (Laufer, Velloso, Cunha & Duarte, 2005/2011): k₁ hashes set
//! bits, k₀ reset them. Its false-positive rate against the number of items, bounded by
//! `(k₁/(k₀+k₁))^k₁ (k₀/(k₀+k₁))^k₀` however far it is filled, and its false-negative rate —
//! the price — against theory, beside the classic filter (k₀ = 0) of the same m and k₁.
//!
//! For each k₀ and each n: a filter of m bits with k₁ = 5 takes n distinct keys, then is
//! asked Q keys never inserted (false positives) and its own n keys (false negatives), and
//! both rates are set beside `params::generalized_fpp` and `params::generalized_fnr`.

use anyhow::Result;
use bloomkit::hash::mix64;
use bloomkit::params::{generalized_fnr, generalized_fpp, generalized_fpp_bound};
use bloomkit::stats::{wilson_interval, Z_95};
use bloomkit::GeneralizedBloomFilter;
use clap::Args;

use super::plot::{self, Axis, Figure, Legend, Point, Series, Style};
use super::report::{Report, ReportTable};
use super::verdict::{binomial_sd, Check, Verdict};
use super::{progress, sig, StudyArgs, Table};

/// k₁, the hash functions that set bits.
const SET_HASHES: u32 = 5;
/// The k₀ compared: 0 is the classic filter.
const RESETS: [u32; 3] = [0, 1, 2];
/// The numbers of items, as fractions of m.
const LOADS: [f64; 8] = [0.02, 0.05, 0.1, 0.2, 0.35, 0.5, 1.0, 2.0];

/// Arguments of `bloomkit experiment generalized`.
#[derive(Debug, Args)]
pub struct GeneralizedArgs {
    /// The options every study has.
    #[command(flatten)]
    pub common: StudyArgs,
}

#[derive(Debug, Clone)]
struct Row {
    reset: u32,
    m: u64,
    n: u64,
    false_positives: u64,
    queries: u64,
    lost: u64,
}

impl Row {
    fn fpr(&self) -> f64 {
        self.false_positives as f64 / self.queries as f64
    }
    fn fpr_interval(&self) -> (f64, f64) {
        wilson_interval(self.false_positives, self.queries, Z_95)
    }
    fn fpr_theory(&self) -> f64 {
        generalized_fpp(self.m, SET_HASHES, self.reset, self.n)
    }
    fn fnr(&self) -> f64 {
        self.lost as f64 / self.n as f64
    }
    fn fnr_interval(&self) -> (f64, f64) {
        wilson_interval(self.lost, self.n, Z_95)
    }
    fn fnr_theory(&self) -> f64 {
        generalized_fnr(self.m, SET_HASHES, self.reset, self.n)
    }
    /// The false-positive rate against `p^k₁ (1 − p)^k₀`: one filter, so σ holds the
    /// queries' binomial spread and the filter's own ([`filter_sd`]). The one independent
    /// check of the filter.
    fn fpr_check(&self) -> Check {
        let theory = self.fpr_theory();
        let trials = self.queries as f64;
        Check {
            label: format!("FPR, k0 = {}, n = {}", self.reset, self.n),
            measured: self.fpr(),
            theory,
            sd: binomial_sd(theory, trials)
                .hypot(filter_sd(self.m, SET_HASHES, self.reset, self.n)),
            trials,
            independent: true,
        }
    }
    /// The false-negative rate against the mean of `1 − A^k₁ B^k₀`: an item is lost when
    /// later insertions hit its own bits, nearly independently of the other items, so σ is
    /// binomial over the n items. It shares the filter with the false-positive check (a
    /// filter with fewer ones loses more items and has fewer false positives), so it is not
    /// an independent test.
    fn fnr_check(&self) -> Check {
        let theory = self.fnr_theory();
        let trials = self.n as f64;
        Check {
            independent: false,
            ..Check::binomial(
                format!("FNR, k0 = {}, n = {}", self.reset, self.n),
                self.fnr(),
                theory,
                trials,
            )
        }
    }
}

/// σ across filters (hash seeds) of the false-positive rate of one generalized filter of m
/// bits, k₁ set and k₀ reset hashes after n insertions: its rate is `f(X) = X^k₁ (1 − X)^k₀`
/// with X its fraction of ones, so by the delta method `σ ≈ |f′(p)| σ_X`. A bit is 1 when
/// it was touched and its last touch was a set, probability `q = k₁/(k₀ + k₁)` given it was
/// touched, independently between bits; with T = (k₀ + k₁)n uniform touches,
/// `Var(ones) = m p + m(m − 1) q² (1 − 2(1 − 1/m)^T + (1 − 2/m)^T) − m² p²`,
/// `p = q(1 − (1 − 1/m)^T)`. With k₀ = 0 it is [`super::verdict::filter_sd`]; at the
/// stationary fill p = q, f′ vanishes and only the binomial spread is left.
fn filter_sd(m: u64, set_hashes: u32, reset_hashes: u32, n: u64) -> f64 {
    let total = set_hashes + reset_hashes;
    if m < 2 || total == 0 {
        return 0.0;
    }
    let mf = m as f64;
    let touches = f64::from(total) * n as f64;
    let q = f64::from(set_hashes) / f64::from(total);
    let empty1 = (touches * (-1.0 / mf).ln_1p()).exp();
    let empty2 = (touches * (-2.0 / mf).ln_1p()).exp();
    let p = q * (1.0 - empty1);
    // The same as m p + m(m − 1) q² (1 − 2e₁ + e₂) − m² p², with the m² terms subtracted
    // before they are formed (they nearly cancel).
    let both = 1.0 - 2.0 * empty1 + empty2;
    let var_ones =
        (mf * p - mf * q * q * both + mf * mf * q * q * (empty2 - empty1 * empty1)).max(0.0);
    let (k1, k0) = (set_hashes as i32, reset_hashes as i32);
    let slope = f64::from(set_hashes) * p.powi(k1 - 1) * (1.0 - p).powi(k0)
        - if k0 > 0 {
            f64::from(reset_hashes) * p.powi(k1) * (1.0 - p).powi(k0 - 1)
        } else {
            0.0
        };
    slope.abs() * var_ones.sqrt() / mf
}

fn label(reset: u32) -> String {
    if reset == 0 {
        "k0 = 0 (classic)".into()
    } else {
        format!("k0 = {reset}")
    }
}

/// Runs the study.
pub fn study(args: &GeneralizedArgs) -> Result<Report> {
    let start = super::stopwatch();
    let size = args.common.size();
    let seed = args.common.seed;
    let m: u64 = size.pick(2_000, 10_000, 100_000);
    let queries: u64 = size.pick(20_000, 200_000, 1_000_000);

    let mut rows = Vec::new();
    let bar = progress((RESETS.len() * LOADS.len()) as u64, "generalized: filters");
    for reset in RESETS {
        for load in LOADS {
            let n = (load * m as f64) as u64;
            let mut filter = GeneralizedBloomFilter::builder()
                .num_bits(m)
                .set_hashes(SET_HASHES)
                .reset_hashes(reset)
                .seed(seed)
                .build()?;
            let run = mix64(seed ^ n << 8 ^ u64::from(reset));
            for i in 0..n {
                filter.insert(&mix64(i ^ run));
            }
            let lost = (0..n)
                .filter(|&i| !filter.contains(&mix64(i ^ run)))
                .count() as u64;
            let false_positives = (n..n + queries)
                .filter(|&i| filter.contains(&mix64(i ^ run)))
                .count() as u64;
            rows.push(Row {
                reset,
                m,
                n,
                false_positives,
                queries,
                lost,
            });
            bar.inc(1);
        }
    }
    bar.finish_and_clear();

    // Every filter has its own keys: its false-positive check is independent of the other
    // filters'; its false-negative check shares the filter (see `Row::fnr_check`).
    let mut verdict = Verdict::new();
    for r in &rows {
        verdict.add(r.fpr_check());
        verdict.add(r.fnr_check());
    }
    let bounds: Vec<String> = RESETS
        .iter()
        .filter(|&&r| r > 0)
        .map(|&r| {
            format!(
                "{} for k0 = {r}",
                sig(generalized_fpp_bound(SET_HASHES, r), 3)
            )
        })
        .collect();
    let mut report = Report {
        study: "generalized",
        title: "generalized — bounded false positives, paid in false negatives".into(),
        summary: format!(
            "Generalized Bloom filters of m = {m} bits with k1 = {SET_HASHES} set hashes and \
             k0 = 0 (the classic filter), 1 and 2 reset hashes take n keys for n from {} to \
             {}; their false-positive rate on {queries} other keys and the share of their own \
             keys they no longer find, over the formulas.",
            rows.first().map_or(0, |r| r.n),
            rows.last().map_or(0, |r| r.n)
        ),
        command: args.common.command("generalized"),
        facts: vec![format!(
            "m = {m}, k1 = {SET_HASHES}, {queries} queries per filter, hash seed {seed}."
        )],
        tables: vec![ReportTable {
            name: "main".into(),
            title: "False-positive and false-negative rates per k0 and n".into(),
            display: display_table(&rows),
            csv: csv_table(&rows),
        }],
        figures: vec![fpr_figure(&rows, m), fnr_figure(&rows, m)],
        verdicts: vec![verdict.judge(
            "Both rates against p^k1 (1 − p)^k0 and the mean of 1 − A^k1 B^k0 (σ of the \
                 false-positive rate from the queries and the filter's own fill, of the \
                 false-negative rate binomial over the items; χ² over the false-positive \
                 rates, one per filter)",
            "See the deviation columns: the formulas take every bit's last touch as \
                 independent of the others' and the order of sets and resets within an \
                 insertion as immaterial.",
        )],
        notes: vec![format!(
            "The classic filter's rate climbs towards 1 as it is overfilled; with resets \
                 the rate stops at the bound ({}) and stays there — at the price of losing \
                 most of the items inserted more than about m/(k0+k1) items ago.",
            bounds.join(", ")
        )],
        seconds: 0.0,
    };
    report.seconds = start.elapsed().as_secs_f64();
    Ok(report)
}

/// For each k₀: its theory curve (`theory(k₀, n)`), for the false-positive rate its bound
/// (dashed), and its measured points (`measured(row)`: the rate and its interval), against
/// n/m.
fn series(
    rows: &[Row],
    m: u64,
    points: usize,
    with_bound: bool,
    theory: impl Fn(u32, u64) -> f64,
    measured: impl Fn(&Row) -> (f64, (f64, f64)),
) -> Vec<Series> {
    let grid = plot::geometric(LOADS[0], LOADS[LOADS.len() - 1], points);
    let mut series = Vec::new();
    for (color, &reset) in RESETS.iter().enumerate() {
        series.push(Series::curve(
            format!("theory, {}", label(reset)),
            color,
            grid.iter().copied(),
            |x| theory(reset, (x * m as f64) as u64),
        ));
        if with_bound && reset > 0 {
            let bound = generalized_fpp_bound(SET_HASHES, reset);
            series.push(
                Series::curve(
                    format!("bound, {}", label(reset)),
                    color,
                    grid.iter().copied(),
                    |_| bound,
                )
                .with_style(Style::Reference),
            );
        }
        let points = rows
            .iter()
            .filter(|r| r.reset == reset)
            .map(|r| {
                let (rate, (low, high)) = measured(r);
                Point::with_bar(r.n as f64 / m as f64, rate, low, high)
            })
            .collect();
        series.push(Series::new(label(reset), Style::Measured, color, points));
    }
    series
}

fn fpr_figure(rows: &[Row], m: u64) -> Figure {
    Figure {
        name: "generalized_fpr".into(),
        title: format!("False-positive rate against items inserted (m = {m}, k1 = {SET_HASHES})"),
        caption: "Measured on keys never inserted (95% Wilson intervals), over p^k1 (1 − p)^k0 \
                  with p the expected fraction of ones; dashed: the bound at any fill."
            .into(),
        x: Axis::log("items inserted / m"),
        y: Axis::log("false-positive rate").from(1e-6),
        series: series(
            rows,
            m,
            60,
            true,
            |reset, n| generalized_fpp(m, SET_HASHES, reset, n),
            |r| (r.fpr(), r.fpr_interval()),
        ),
        legend: Legend::UpperLeft,
    }
}

fn fnr_figure(rows: &[Row], m: u64) -> Figure {
    Figure {
        name: "generalized_fnr".into(),
        title: format!("False-negative rate against items inserted (m = {m}, k1 = {SET_HASHES})"),
        caption: "Share of the inserted keys no longer found (95% Wilson intervals), over the \
                  mean over the items of 1 − A^k1 B^k0 (A, B: the chances that a 1 and a 0 \
                  survive the later insertions)."
            .into(),
        x: Axis::log("items inserted / m"),
        y: Axis::linear("false-negative rate").range(0.0, 1.0),
        series: series(
            rows,
            m,
            30,
            false,
            |reset, n| generalized_fnr(m, SET_HASHES, reset, n),
            |r| (r.fnr(), r.fnr_interval()),
        ),
        legend: Legend::UpperLeft,
    }
}

fn display_table(rows: &[Row]) -> Table {
    let mut table = Table::new([
        "k0",
        "n",
        "FPR",
        "95% interval",
        "theory",
        "deviation",
        "FNR",
        "95% interval",
        "theory",
        "deviation",
    ]);
    for r in rows {
        let ((a, b), (c, d)) = (r.fpr_interval(), r.fnr_interval());
        table.push(vec![
            r.reset.to_string(),
            r.n.to_string(),
            sig(r.fpr(), 3),
            format!("[{}, {}]", sig(a, 3), sig(b, 3)),
            sig(r.fpr_theory(), 3),
            r.fpr_check().cell(),
            sig(r.fnr(), 3),
            format!("[{}, {}]", sig(c, 3), sig(d, 3)),
            sig(r.fnr_theory(), 3),
            r.fnr_check().cell(),
        ]);
    }
    table
}

fn csv_table(rows: &[Row]) -> Table {
    let mut table = Table::new([
        "reset_hashes",
        "set_hashes",
        "m",
        "n",
        "false_positives",
        "queries",
        "fpr",
        "fpr_theory",
        "lost",
        "fnr",
        "fnr_theory",
    ]);
    for r in rows {
        table.push(vec![
            r.reset.to_string(),
            SET_HASHES.to_string(),
            r.m.to_string(),
            r.n.to_string(),
            r.false_positives.to_string(),
            r.queries.to_string(),
            r.fpr().to_string(),
            r.fpr_theory().to_string(),
            r.lost.to_string(),
            r.fnr().to_string(),
            r.fnr_theory().to_string(),
        ]);
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_spread_without_resets_is_the_classic_one() {
        for (m, n) in [(1_000u64, 100u64), (10_000, 2_000), (2_000, 4_000)] {
            let classic = super::super::verdict::filter_sd(m, SET_HASHES, n);
            let ours = filter_sd(m, SET_HASHES, 0, n);
            assert!((classic - ours).abs() <= 1e-6 * classic, "{classic} {ours}");
        }
    }
}
