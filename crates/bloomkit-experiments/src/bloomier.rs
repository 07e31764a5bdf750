//! The Bloomier filter: bits per key against the `1.125·w` of the fuse layout and the
//! `1.23·w` of three segments, build time, the retries peeling needs, and the
//! false-positive rate of the "not in set" check against `2^−c`.
//!
//! For each n, each table layout (fuse, three segments) and each cell layout (r value bits,
//! c check bits): a table of the keys `key(0..n)` with values from another key, built by
//! peeling; then Q keys outside the set are asked. Bits per key are the table's memory over
//! n; the theory is `(segment_count + 2)·L·w / n` in the fuse layout (Graf & Lemire 2022's
//! dimensions, → 1.125·w) and `3·⌈(⌊1.23n⌋ + 32)/3⌉·w / n` (→ 1.23·w) in three segments.
//! Membership rows (r = 0) are set beside the classic Bloom filter, which needs
//! `1.44·log₂(1/ε)` bits per key for the same ε.

use std::time::Instant;

use anyhow::Result;
use bloomkit::params::{bloomier_bits_per_key, bloomier_fpp, bloomier_fuse_bits_per_key};
use bloomkit::stats::{wilson_interval, Z_95};
use bloomkit::{BloomierFilter, BloomierLayout};
use clap::Args;

use super::corpus::key;
use super::plot::{Axis, Figure, Legend, Point, Series, Style};
use super::report::{Report, ReportTable};
use super::verdict::{Check, Verdict};
use super::{progress, sig, StudyArgs, Table};

/// The cell layouts: (r value bits, c check bits).
pub const LAYOUTS: [(u32, u32); 6] = [(0, 4), (0, 8), (0, 16), (4, 8), (16, 8), (32, 0)];

/// The table layouts: the fuse layout (the default) and the first one, three segments.
pub const TABLE_LAYOUTS: [BloomierLayout; 2] =
    [BloomierLayout::Fuse, BloomierLayout::ThreeSegments];

fn layout_name(layout: BloomierLayout) -> &'static str {
    match layout {
        BloomierLayout::Fuse => "fuse",
        BloomierLayout::ThreeSegments => "three segments",
    }
}

/// Arguments of `bloomkit experiment bloomier`.
#[derive(Debug, Args)]
pub struct BloomierArgs {
    /// The options every study has.
    #[command(flatten)]
    pub common: StudyArgs,
}

#[derive(Debug, Clone)]
struct Row {
    n: u64,
    layout: BloomierLayout,
    value_bits: u32,
    check_bits: u32,
    cells: u64,
    bits_per_key: f64,
    build_ns: f64,
    query_ns: f64,
    attempts: u32,
    passed: u64,
    queries: u64,
}

impl Row {
    fn width(&self) -> u32 {
        self.value_bits + self.check_bits
    }
    fn theory_bits(&self) -> f64 {
        match self.layout {
            BloomierLayout::Fuse => bloomier_fuse_bits_per_key(self.n, self.width()),
            BloomierLayout::ThreeSegments => bloomier_bits_per_key(self.n, self.width()),
        }
    }
    fn interval(&self) -> (f64, f64) {
        wilson_interval(self.passed, self.queries, Z_95)
    }
    /// The rate of outside keys passing the check against `2^−c`. Given the table, each
    /// outside key's word is an independent uniform c-bit draw, so σ is binomial: there is
    /// no filter-to-filter spread to add (every table has the same `2^−c`).
    fn check(&self, independent: bool) -> Check {
        let theory = bloomier_fpp(self.check_bits);
        let trials = self.queries as f64;
        Check {
            independent,
            ..Check::binomial(
                format!(
                    "n = {}, {}, r = {}, c = {}",
                    self.n,
                    layout_name(self.layout),
                    self.value_bits,
                    self.check_bits
                ),
                self.passed as f64 / trials.max(1.0),
                theory,
                trials,
            )
        }
    }
}

/// Runs the study.
pub fn study(args: &BloomierArgs) -> Result<Report> {
    let start = super::stopwatch();
    let size = args.common.size();
    let seed = args.common.seed;
    let sizes: Vec<u64> = size.pick(
        vec![1_000, 10_000],
        vec![10_000, 100_000, 1_000_000],
        vec![10_000, 100_000, 1_000_000, 10_000_000],
    );
    let queries: u64 = size.pick(20_000, 1_000_000, 4_000_000);
    let bar = progress(
        (sizes.len() * TABLE_LAYOUTS.len() * LAYOUTS.len()) as u64,
        "bloomier: tables",
    );
    let mut rows = Vec::new();
    let cases = TABLE_LAYOUTS
        .iter()
        .flat_map(|&l| LAYOUTS.iter().map(move |&rc| (l, rc)));
    for &n in &sizes {
        for (layout, (value_bits, check_bits)) in cases.clone() {
            let mask = u64::MAX.checked_shr(64 - value_bits).unwrap_or(0);
            let t = Instant::now();
            let table = BloomierFilter::builder()
                .value_bits(value_bits)
                .check_bits(check_bits)
                .seed(seed)
                .layout(layout)
                .build((0..n).map(|i| (key(i), key(!i) & mask)))?;
            let build = t.elapsed().as_secs_f64();
            let t = Instant::now();
            let passed = (n..n + queries)
                .filter(|&i| table.contains(&key(i)))
                .count() as u64;
            let query = t.elapsed().as_secs_f64();
            rows.push(Row {
                n,
                layout,
                value_bits,
                check_bits,
                cells: table.num_cells(),
                bits_per_key: table.bits_per_key(),
                build_ns: build * 1e9 / n as f64,
                query_ns: query * 1e9 / queries as f64,
                attempts: table.attempt() + 1,
                passed,
                queries,
            });
            bar.inc(1);
        }
    }
    bar.finish_and_clear();

    // Tables of the same n and table layout share their keys and hash seed, and with them
    // the hypergraph and the check words: cell layouts with the same c may pass the same
    // outside keys. Only the first of each (n, table layout, c) enters the χ²; all count
    // for the largest deviation.
    let mut verdict = Verdict::new();
    for (i, r) in rows.iter().enumerate().filter(|(_, r)| r.check_bits > 0) {
        let first = !rows[..i]
            .iter()
            .any(|o| o.n == r.n && o.layout == r.layout && o.check_bits == r.check_bits);
        verdict.add(r.check(first));
    }
    let largest = *sizes.last().expect("sizes");
    let worst_overhead = |layout| {
        rows.iter()
            .filter(|r| r.n == largest && r.layout == layout)
            .map(|r| r.bits_per_key / f64::from(r.width()))
            .fold(0.0, f64::max)
    };
    let retried = |layout| {
        rows.iter()
            .filter(|r| r.layout == layout && r.attempts > 1)
            .count()
    };
    let per_layout = rows.len() / TABLE_LAYOUTS.len();
    let mut report = Report {
        study: "bloomier",
        title: "Bloomier filter — bits per key, build time and false positives against theory"
            .into(),
        summary: format!(
            "Tables of n keys (n = {}) with r value bits and c check bits, in the fuse layout \
             and in three segments, built by 3-hypergraph peeling, then asked {queries} keys \
             outside the set: bits per key against the layouts' theory (→ 1.125·(r + c) and \
             1.23·(r + c)), the construction's cost and retries, and the rate at which \
             outside keys pass the check against 2^−c.",
            sizes
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        command: args.common.command("bloomier"),
        facts: vec![format!(
            "{queries} queries per table, hash seed {seed}; times on this machine, one core."
        )],
        tables: vec![ReportTable {
            name: "main".into(),
            title: "Bits per key, build and query cost, false-positive rate per n and layout"
                .into(),
            display: display_table(&rows),
            csv: csv_table(&rows),
        }],
        figures: vec![bits_figure(&rows, largest)],
        verdicts: vec![verdict.judge(
            "Measured rate of outside keys passing the check against 2^−c (binomial σ; \
                 χ² over one layout per n and c)",
            "A rate above 2^−c means the key's word is not uniform: the mask or the cells \
                 are correlated with the key set.",
        )],
        notes: vec![
            format!(
                "At n = {largest} every fuse table costs at most {:.4}·w bits per key (theory: \
                 Graf & Lemire's size factor, 1.125 from n = 10⁶ on and more below, plus the \
                 rounding to whole segments), every three-segment table at most {:.4}·w \
                 (1.23·w plus 32 spare cells), both plus the rounding to 64-bit words.",
                worst_overhead(BloomierLayout::Fuse),
                worst_overhead(BloomierLayout::ThreeSegments),
            ),
            format!(
                "Tables that needed a second attempt: {} of {per_layout} in the fuse layout, \
                 {} of {per_layout} in three segments. Both thresholds are asymptotic \
                 (1/0.8185 = 1.222 cells per key without coupling, about 1.09 with it), so \
                 small sets retry now and then and large ones almost never.",
                retried(BloomierLayout::Fuse),
                retried(BloomierLayout::ThreeSegments),
            ),
            "Membership rows (r = 0) against the classic Bloom filter: c check bits give \
             ε = 2^−c at 1.125·c bits per key in the fuse layout (1.23·c in three segments) \
             where a Bloom filter needs 1.44·c — 22% less, at the price of being static."
                .into(),
        ],
        seconds: 0.0,
    };
    report.seconds = start.elapsed().as_secs_f64();
    Ok(report)
}

fn bits_figure(rows: &[Row], n: u64) -> Figure {
    let points = |membership: bool| -> Vec<Point> {
        rows.iter()
            .filter(|r| {
                r.n == n && r.layout == BloomierLayout::Fuse && (r.value_bits == 0) == membership
            })
            .map(|r| Point::new(f64::from(r.width()), r.bits_per_key))
            .collect()
    };
    // The Bloom filter compares only with membership layouts (r = 0, w = c): a layout with
    // value bits stores r bits per key that a Bloom filter does not store at all. So its
    // line is drawn over the membership layouts' widths only.
    let membership_widths = rows
        .iter()
        .filter(|r| r.n == n && r.value_bits == 0)
        .map(Row::width)
        .max()
        .unwrap_or(0);
    let widths = (1..=32).map(f64::from);
    Figure {
        name: "bloomier_bits".into(),
        title: format!("Bloomier filter: bits per key against cell width (n = {n})"),
        caption: "Measured bits per key of each cell layout (w = r + c) in the fuse layout, \
                  over 1.125·w (its cost at large n) and 1.23·w (three segments, the first \
                  layout). The dashed 1.44·c is what a classic Bloom filter needs for \
                  ε = 2^−c; it is drawn only beside the membership layouts (r = 0, circles), \
                  the only ones it compares with: layouts with value bits (squares) also \
                  store r bits per key that a Bloom filter cannot."
            .into(),
        x: Axis::linear("cell width w = r + c (bits)").from(0.0),
        y: Axis::linear("bits per key").from(0.0).headroom(0.2),
        series: vec![
            Series::curve(
                "1.44·c: Bloom filter at ε = 2^−c (compares with r = 0 only)",
                2,
                (1..=membership_widths).map(f64::from),
                |w| w / std::f64::consts::LN_2,
            )
            .with_style(Style::Reference),
            Series::curve("1.23·w (three segments)", 1, widths.clone(), |w| 1.23 * w),
            Series::curve("1.125·w (fuse layout, large n)", 3, widths, |w| 1.125 * w),
            Series::new(
                "membership layouts (r = 0)",
                Style::Measured,
                0,
                points(true),
            ),
            Series::new(
                "layouts with value bits (r > 0)",
                Style::Measured,
                0,
                points(false),
            ),
        ],
        legend: Legend::UpperLeft,
    }
}

fn display_table(rows: &[Row]) -> Table {
    let mut table = Table::new([
        "n",
        "layout",
        "r",
        "c",
        "cells",
        "bits/key",
        "theory",
        "build (ns/key)",
        "query (ns)",
        "attempts",
        "passed",
        "95% interval",
        "2^−c",
        "deviation",
    ]);
    for r in rows {
        let (low, high) = r.interval();
        let checked = r.check_bits > 0;
        table.push(vec![
            r.n.to_string(),
            layout_name(r.layout).into(),
            r.value_bits.to_string(),
            r.check_bits.to_string(),
            r.cells.to_string(),
            format!("{:.3}", r.bits_per_key),
            format!("{:.3}", r.theory_bits()),
            // Times vary from run to run: two significant digits.
            super::sig(r.build_ns, 2),
            super::sig(r.query_ns, 2),
            r.attempts.to_string(),
            sig(r.passed as f64 / r.queries as f64, 3),
            format!("[{}, {}]", sig(low, 3), sig(high, 3)),
            sig(bloomier_fpp(r.check_bits), 3),
            if checked {
                r.check(false).cell()
            } else {
                "—".into()
            },
        ]);
    }
    table
}

fn csv_table(rows: &[Row]) -> Table {
    let mut table = Table::new([
        "n",
        "layout",
        "value_bits",
        "check_bits",
        "cells",
        "bits_per_key",
        "theory_bits_per_key",
        "build_ns_per_key",
        "query_ns",
        "attempts",
        "passed",
        "queries",
        "theory_fpp",
    ]);
    for r in rows {
        table.push(vec![
            r.n.to_string(),
            layout_name(r.layout).into(),
            r.value_bits.to_string(),
            r.check_bits.to_string(),
            r.cells.to_string(),
            r.bits_per_key.to_string(),
            r.theory_bits().to_string(),
            r.build_ns.to_string(),
            r.query_ns.to_string(),
            r.attempts.to_string(),
            r.passed.to_string(),
            r.queries.to_string(),
            bloomier_fpp(r.check_bits).to_string(),
        ]);
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiny_study_sits_on_theory() {
        let common = StudyArgs {
            tiny: true,
            ..StudyArgs::default()
        };
        let report = study(&BloomierArgs { common }).unwrap();
        assert_eq!(
            report.tables[0].csv.rows.len(),
            2 * TABLE_LAYOUTS.len() * LAYOUTS.len()
        );
        assert!(
            report.verdicts[0].sentence.contains(": on theory"),
            "{}",
            report.verdicts[0].sentence
        );
    }
}
