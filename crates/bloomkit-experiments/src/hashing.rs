//! Hashing: the four ways this crate can hash — MurmurHash3 or XXH3, with k positions by
//! enhanced double hashing from one digest or from k seeded digests (the seeds'
//! construction) — compared on false positives down to ε = 10⁻⁶ and on cost per item.
//!
//! For each configuration and ε: a Bloom filter for n items takes the decimal strings
//! "0" … "n−1" (short, structured items: the hard case for correlated hashes, which the
//! crate's statistics test uses too), then Q other decimal strings are asked. The rate is
//! judged against `fpp_exact(m, k, n)`; the time per insert and per query is the total
//! divided by the count.

use std::time::Instant;

use anyhow::Result;
use bloomkit::params::{fpp_exact, optimal_num_bits, optimal_num_hashes};
use bloomkit::stats::{wilson_interval, Z_95};
use bloomkit::{BloomFilter, HashFunction, IndexScheme};
use clap::Args;

use super::plot::{self, Axis, Figure, Legend, Point, Series, Style};
use super::report::{Report, ReportTable};
use super::verdict::{Check, Verdict};
use super::{corpus, progress, sig, Size, StudyArgs, Table};

/// The false-positive probabilities compared.
pub const FPPS: [f64; 6] = [1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6];

/// The hashing configurations: function and index scheme.
pub const CONFIGS: [(HashFunction, IndexScheme); 4] = [
    (HashFunction::Murmur3, IndexScheme::EnhancedDoubleHashing),
    (HashFunction::Murmur3, IndexScheme::SeededHashes),
    (HashFunction::Xxh3, IndexScheme::EnhancedDoubleHashing),
    (HashFunction::Xxh3, IndexScheme::SeededHashes),
];

/// Arguments of `bloomkit experiment hashing`.
#[derive(Debug, Args)]
pub struct HashingArgs {
    /// The options every study has.
    #[command(flatten)]
    pub common: StudyArgs,
}

#[derive(Debug, Clone)]
struct Row {
    config: usize,
    fpp: f64,
    m: u64,
    k: u32,
    n: u64,
    false_positives: u64,
    queries: u64,
    insert_ns: f64,
    query_ns: f64,
}

impl Row {
    fn measured(&self) -> f64 {
        self.false_positives as f64 / self.queries.max(1) as f64
    }
    fn interval(&self) -> (f64, f64) {
        wilson_interval(self.false_positives, self.queries, Z_95)
    }
    fn theory(&self) -> f64 {
        fpp_exact(self.m, self.k, self.n)
    }
    /// The point against theory: one filter, so σ holds the filter's own spread (its
    /// fill) as well as the queries' binomial one.
    fn check(&self) -> Check {
        Check::classic(
            format!("{}, ε = {}", config_label(self.config), self.fpp),
            self.false_positives,
            self.queries,
            (self.m, self.k, self.n),
        )
    }
}

fn config_label(config: usize) -> String {
    const LABELS: [&str; 4] = [
        "Murmur3, double hashing",
        "Murmur3, k seeded hashes",
        "XXH3, double hashing",
        "XXH3, k seeded hashes",
    ];
    LABELS[config % LABELS.len()].to_owned()
}

/// Runs the study.
pub fn study(args: &HashingArgs) -> Result<Report> {
    let start = super::stopwatch();
    let size = args.common.size();
    let seed = args.common.seed;
    let n: u64 = size.pick(2_000, 100_000, 1_000_000);
    let queries: u64 = size.pick(20_000, 1_000_000, 20_000_000);

    // Items "0" … "n−1"; queries the decimal strings from n on.
    let items: Vec<Vec<u8>> = (0..n).map(|i| i.to_string().into_bytes()).collect();
    let asked: Vec<Vec<u8>> = (n..n + queries)
        .map(|i| i.to_string().into_bytes())
        .collect();

    let mut rows = Vec::new();
    let total = (CONFIGS.len() * FPPS.len()) as u64;
    let bar = progress(total, "hashing: filters");
    for (config, &(function, scheme)) in CONFIGS.iter().enumerate() {
        for fpp in FPPS {
            let mut filter = BloomFilter::builder()
                .capacity(n)
                .fpp(fpp)
                .hash_function(function)
                .index_scheme(scheme)
                // Its own hash seed per filter: filters of one seed over the same items have
                // correlated fills (the same digests, scaled to each m), so their points would
                // not be independent tests.
                .seed(corpus::subseed(seed, &[config as u64, fpp.to_bits()]))
                .build()?;
            let t = Instant::now();
            for item in &items {
                filter.insert(item);
            }
            let insert = t.elapsed().as_secs_f64();
            let t = Instant::now();
            let false_positives = asked.iter().filter(|q| filter.contains(*q)).count() as u64;
            let query = t.elapsed().as_secs_f64();
            rows.push(Row {
                config,
                fpp,
                m: filter.num_bits(),
                k: filter.num_hashes(),
                n,
                false_positives,
                queries,
                insert_ns: insert * 1e9 / n as f64,
                query_ns: query * 1e9 / queries as f64,
            });
            bar.inc(1);
        }
    }
    bar.finish_and_clear();

    let mut verdict = Verdict::new();
    for row in &rows {
        verdict.add(row.check());
    }
    let mut report =
        Report {
            study: "hashing",
            title: "hashing — seeded k hashes against double hashing, Murmur3 against XXH3".into(),
            summary: format!(
            "A Bloom filter for the n = {n} decimal strings \"0\" … \"{}\" at ε from 0.1 down to \
             10⁻⁶, asked {queries} other decimal strings, for each hash function and index \
             scheme; false-positive rate and cost per item.",
            n - 1
        ),
            command: args.common.command("hashing"),
            facts: vec![format!(
                "n = {n}, {queries} queries per filter, each filter its own hash seed drawn from seed {seed}; times on this machine."
            )],
            tables: vec![ReportTable {
                name: "main".into(),
                title: "False-positive rate and cost per item, per configuration and ε".into(),
                display: display_table(&rows),
                csv: csv_table(&rows),
            }],
            figures: vec![
                fpr_figure(&rows, n, queries),
                cost_figure(&rows, true),
                cost_figure(&rows, false),
            ],
            verdicts: vec![verdict.judge(
                "Measured rate against (1 − (1 − 1/m)^kn)^k for every configuration (σ: the \
                 queries' binomial spread and the filter's own)",
                "A configuration whose points sit above the curve at small ε has correlated \
                 positions for similar items (the seeded scheme once did: 10× the rate at 10⁻⁴).",
            )],
            notes: vec![
            format!(
                "At ε = 10⁻⁶ the expected number of false positives among {queries} queries is \
                 about {:.0}: those points have wide intervals{}.",
                1e-6 * queries as f64,
                if size == Size::Full { "" } else { "; --full asks 20 times more" }
            ),
            "Each point is one filter: its 95% interval in the table covers the sampling of the \
             queries only, while the deviation in σ also counts the filter's own deviation from \
             the average filter (how many of its bits happen to be set), which at large ε and \
             millions of queries is the larger of the two."
                .into(),
            "Cost: double hashing computes one 128-bit digest per item whatever k is; the seeded \
             scheme computes one digest per position, so its cost grows with k (ε = 10⁻⁶ needs \
             k = 20). A query for an absent item stops at its first zero bit, so queries cost \
             less than inserts."
                .into(),
        ],
            seconds: 0.0,
        };
    report.seconds = start.elapsed().as_secs_f64();
    Ok(report)
}

fn fpr_figure(rows: &[Row], n: u64, queries: u64) -> Figure {
    let grid = plot::geometric(5e-7, 0.2, 80);
    let mut series = vec![
        Series::curve("requested = measured", 7, grid.iter().copied(), |e| e)
            .with_style(Style::Reference),
        Series::curve(
            "theory (1 − (1 − 1/m)^kn)^k",
            7,
            grid.iter().copied(),
            |e| {
                optimal_num_bits(n, e)
                    .map(|m| fpp_exact(m, optimal_num_hashes(m, n), n))
                    .unwrap_or(f64::NAN)
            },
        ),
    ];
    let middle = (CONFIGS.len() as f64 - 1.0) / 2.0;
    for config in 0..CONFIGS.len() {
        let shift = 1.12f64.powf(config as f64 - middle);
        let points = rows
            .iter()
            .filter(|r| r.config == config)
            .map(|r| {
                let (low, high) = r.interval();
                Point::with_bar(r.fpp * shift, r.measured(), low, high)
            })
            .collect();
        series.push(Series::new(
            config_label(config),
            Style::Measured,
            config,
            points,
        ));
    }
    Figure {
        name: "hashing_fpr".into(),
        title: format!("False-positive rate by hashing (n = {n} decimal strings)"),
        caption: format!(
            "Measured rate on {queries} decimal strings (95% Wilson intervals; points offset \
             slightly in ε per configuration; zero counts drawn as their bar alone) against ε, \
             over the exact theory."
        ),
        x: Axis::log("requested ε"),
        y: Axis::log("false-positive rate").from(1e-7),
        series,
        legend: Legend::UpperLeft,
    }
}

fn cost_figure(rows: &[Row], insert: bool) -> Figure {
    let series = (0..CONFIGS.len())
        .map(|config| {
            let points = rows
                .iter()
                .filter(|r| r.config == config)
                .map(|r| Point::new(r.fpp, if insert { r.insert_ns } else { r.query_ns }))
                .collect();
            Series::new(config_label(config), Style::MeasuredLine, config, points)
        })
        .collect();
    let (name, title, what) = if insert {
        (
            "hashing_insert_cost",
            "Cost of an insert by hashing",
            "insert",
        )
    } else {
        (
            "hashing_query_cost",
            "Cost of a query (absent items) by hashing",
            "query",
        )
    };
    Figure {
        name: name.into(),
        title: title.into(),
        caption: format!(
            "Mean time per {what} against ε (k grows as ε falls): one digest for double hashing, \
             k digests for the seeded scheme."
        ),
        x: Axis::log("requested ε"),
        y: Axis::linear(format!("time per {what} (ns)"))
            .from(0.0)
            .headroom(0.35),
        series,
        legend: Legend::UpperRight,
    }
}

fn display_table(rows: &[Row]) -> Table {
    let mut table = Table::new([
        "hashing",
        "ε",
        "m",
        "k",
        "false pos.",
        "measured",
        "95% interval",
        "theory",
        "deviation",
        "insert (ns)",
        "query (ns)",
    ]);
    for r in rows {
        let (low, high) = r.interval();
        table.push(vec![
            config_label(r.config),
            super::eps(r.fpp),
            r.m.to_string(),
            r.k.to_string(),
            r.false_positives.to_string(),
            sig(r.measured(), 4),
            format!("[{}, {}]", sig(low, 4), sig(high, 4)),
            sig(r.theory(), 4),
            r.check().cell(),
            // Times vary from run to run: two significant digits.
            super::sig(r.insert_ns, 2),
            super::sig(r.query_ns, 2),
        ]);
    }
    table
}

fn csv_table(rows: &[Row]) -> Table {
    let mut table = Table::new([
        "hash",
        "scheme",
        "fpp",
        "m",
        "k",
        "n",
        "false_positives",
        "queries",
        "measured",
        "ci_low",
        "ci_high",
        "theory",
        "insert_ns",
        "query_ns",
    ]);
    for r in rows {
        let (low, high) = r.interval();
        let (function, scheme) = CONFIGS[r.config];
        table.push(vec![
            function.name().into(),
            scheme.name().into(),
            r.fpp.to_string(),
            r.m.to_string(),
            r.k.to_string(),
            r.n.to_string(),
            r.false_positives.to_string(),
            r.queries.to_string(),
            r.measured().to_string(),
            low.to_string(),
            high.to_string(),
            r.theory().to_string(),
            r.insert_ns.to_string(),
            r.query_ns.to_string(),
        ]);
    }
    table
}
