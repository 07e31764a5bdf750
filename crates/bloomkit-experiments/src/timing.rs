//! Seed 004: time per insertion against the number of items inserted, for every kind.
//!
//! For each N (1 000 to 1 000 000 by default, 10 000 000 with `--full`) and each kind: a
//! filter sized for N items at ε = 1% takes N random 64-bit keys, timed as a whole and
//! divided by N; then the same N keys are asked (all "maybe"), timed the same way. The
//! filter is cleared and filled again for several passes (the first, which pays the page
//! faults of fresh memory, is not counted); the median and quartiles over passes are
//! reported. The seeds' claim is O(k) per operation, independent of N; what the figure
//! shows besides is the memory hierarchy: once a filter outgrows the CPU caches, each of
//! its k probes is a cache miss.

use std::time::Instant;

use anyhow::{bail, Result};
use bloomkit::Filter;
use clap::Args;

use super::corpus::{self, SplitMix64};
use super::kinds::Variant;
use super::plot::{Axis, Figure, Legend, Point, Series, Style};
use super::report::{Report, ReportTable};
use super::{mean_sd, progress, sig, StudyArgs, Table};

/// The false-positive probability every filter is sized for.
pub const FPP: f64 = 0.01;

/// The fewest timed passes per kind and N.
const PASSES: u64 = 5;

/// The median and the quartiles of some values (sorted copy).
fn quartiles(values: &[f64]) -> (f64, f64, f64) {
    if values.is_empty() {
        return (0.0, 0.0, 0.0);
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let at = |q: f64| {
        let pos = q * (sorted.len() - 1) as f64;
        let (low, high) = (pos.floor() as usize, pos.ceil() as usize);
        sorted[low] + (sorted[high] - sorted[low]) * (pos - low as f64)
    };
    (at(0.25), at(0.5), at(0.75))
}

/// Arguments of `bloomkit experiment timing`.
#[derive(Debug, Args)]
pub struct TimingArgs {
    /// The options every study has.
    #[command(flatten)]
    pub common: StudyArgs,
}

/// The measurements for one kind and N.
#[derive(Debug, Clone)]
struct Cell {
    variant: Variant,
    n: u64,
    bytes: u64,
    insert_ns: Vec<f64>,
    query_ns: Vec<f64>,
}

/// Runs the study.
pub fn study(args: &TimingArgs) -> Result<Report> {
    let start = super::stopwatch();
    let size = args.common.size();
    let seed = args.common.seed;
    let ns: Vec<u64> = size.pick(
        vec![1_000, 10_000],
        vec![1_000, 3_000, 10_000, 30_000, 100_000, 300_000, 1_000_000],
        vec![
            1_000, 3_000, 10_000, 30_000, 100_000, 300_000, 1_000_000, 3_000_000, 10_000_000,
        ],
    );
    // Every (kind, N) is timed over at least PASSES passes and at least about
    // `per_cell` inserts, on one filter cleared between passes (so that page faults of the
    // first touch of its memory are not counted, except in the warm-up pass, dropped).
    let per_cell: u64 = size.pick(20_000, 300_000, 1_000_000);
    let variants = Variant::EVERY;

    let mut cells: Vec<Cell> = Vec::new();
    let passes_for = |n: u64| PASSES.max(per_cell.div_ceil(n));
    let total: u64 =
        ns.iter().map(|&n| n * (passes_for(n) + 1)).sum::<u64>() * variants.len() as u64;
    let bar = progress(total, "timing: inserts");
    for &n in &ns {
        let mut rng = SplitMix64::new(corpus::subseed(seed, &[40, n]));
        let keys: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
        for (v, &variant) in variants.iter().enumerate() {
            let mut cell = Cell {
                variant,
                n,
                bytes: 0,
                insert_ns: Vec::new(),
                query_ns: Vec::new(),
            };
            let mut filter = variant.build(n, FPP, corpus::subseed(seed, &[41, v as u64]))?;
            for pass in 0..=passes_for(n) {
                filter.clear();
                let t = Instant::now();
                for key in &keys {
                    if let Err(e) = filter.try_insert(key) {
                        bail!(
                            "{} filter for {n} items refused an insert: {e}",
                            variant.label()
                        );
                    }
                }
                let insert = t.elapsed().as_secs_f64();
                let t = Instant::now();
                let mut found = 0u64;
                for key in &keys {
                    found += u64::from(filter.contains(key));
                }
                let query = t.elapsed().as_secs_f64();
                std::hint::black_box(found);
                bar.inc(n);
                if pass == 0 {
                    continue; // warm-up
                }
                cell.bytes = filter.memory_bytes() as u64;
                cell.insert_ns.push(insert * 1e9 / n as f64);
                cell.query_ns.push(query * 1e9 / n as f64);
            }
            cells.push(cell);
        }
    }
    bar.finish_and_clear();

    let mut report = Report {
        study: "timing",
        title: "timing — seed 004: time per insertion against the number of items".into(),
        summary: "Each kind, sized for N items at ε = 1%, takes N random 64-bit keys; the time \
                  per insert and per query (of the inserted keys) is the total divided by N."
            .into(),
        command: args.common.command("timing"),
        facts: vec![
            format!(
                "N ∈ {{{}}}; each point is the median of at least {PASSES} timed passes (and at \
                 least {per_cell} items) after a warm-up pass, on one filter cleared between \
                 passes; seed {seed}; times on this machine, not deterministic.",
                ns.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
            ),
            "Every kind of the library's registry (bloomkit::Kind::ALL), with its defaults.".into(),
        ],
        tables: vec![ReportTable {
            name: "main".into(),
            title: "Time per insert and per query (ns, median and quartiles over timed passes)"
                .into(),
            display: display_table(&cells),
            csv: csv_table(&cells),
        }],
        figures: vec![figure(&cells, &ns, true), figure(&cells, &ns, false)],
        verdicts: Vec::new(),
        notes: vec![
            "No theory curve: the seeds' analysis says O(k) per insert and per query, \
             independent of N. That holds while the filter fits in the CPU caches; past them \
             (a few MB) each of the k probes is a cache miss and the time per item rises — \
             the step in the curves."
                .into(),
        ],
        seconds: 0.0,
    };
    report.seconds = start.elapsed().as_secs_f64();
    Ok(report)
}

fn figure(cells: &[Cell], ns: &[u64], insert: bool) -> Figure {
    let series = Variant::EVERY
        .iter()
        .enumerate()
        .map(|(i, &variant)| {
            let points = cells
                .iter()
                .filter(|c| c.variant == variant)
                .map(|c| {
                    let (low, median, high) =
                        quartiles(if insert { &c.insert_ns } else { &c.query_ns });
                    Point::with_bar(c.n as f64, median, low, high)
                })
                .collect();
            Series::new(variant.label(), Style::MeasuredLine, i, points)
        })
        .collect::<Vec<_>>();
    // Small multiples, one kind per panel on shared axes (fifteen lines in one plot tangle),
    // each with the first kind (the classic Bloom filter) dashed as a yardstick.
    let mut series = series;
    if let Some(first) = series.first() {
        let yardstick = Series::new(
            format!("{} (in every panel)", first.label),
            Style::Reference,
            super::plot::BLACK_INDEX,
            first.points.iter().map(|p| Point::new(p.x, p.y)).collect(),
        );
        series.insert(0, yardstick);
    }
    let (name, title, what) = if insert {
        ("timing_insert", "Seed 004: time per insertion", "insert")
    } else {
        ("timing_query", "Time per query (inserted keys)", "query")
    };
    let largest = ns.last().copied().unwrap_or(1);
    Figure {
        name: name.into(),
        title: title.into(),
        caption: format!(
            "Median time per {what} over the timed passes (bars: quartiles of at least \
             {PASSES} passes) against the number of items N the filter was sized for and \
             filled with, N up to {largest}, every kind at ε = 1%; one panel per kind on \
             shared axes, the classic Bloom filter dashed in each for comparison."
        ),
        x: Axis::log("items inserted N"),
        // Room above the data for each panel's legend, no more: the axis should fit the data.
        y: Axis::log(format!("time per {what} (ns)")).headroom(0.3),
        series,
        legend: Legend::Panels,
    }
}

fn display_table(cells: &[Cell]) -> Table {
    let mut table = Table::new([
        "kind",
        "N",
        "memory (bytes)",
        "bits/item",
        "passes",
        "insert (ns)",
        "quartiles",
        "query (ns)",
        "quartiles",
    ]);
    for c in cells {
        let (i25, insert, i75) = quartiles(&c.insert_ns);
        let (q25, query, q75) = quartiles(&c.query_ns);
        table.push(vec![
            c.variant.label(),
            c.n.to_string(),
            c.bytes.to_string(),
            format!("{:.2}", c.bytes as f64 * 8.0 / c.n as f64),
            c.insert_ns.len().to_string(),
            // Times vary from pass to pass by more than 1%: two significant digits.
            sig(insert, 2),
            format!("[{}, {}]", sig(i25, 2), sig(i75, 2)),
            sig(query, 2),
            format!("[{}, {}]", sig(q25, 2), sig(q75, 2)),
        ]);
    }
    table
}

fn csv_table(cells: &[Cell]) -> Table {
    let mut table = Table::new([
        "kind",
        "n",
        "passes",
        "memory_bytes",
        "insert_ns_median",
        "insert_ns_q1",
        "insert_ns_q3",
        "insert_ns_mean",
        "insert_ns_sd",
        "query_ns_median",
        "query_ns_q1",
        "query_ns_q3",
    ]);
    for c in cells {
        let (i25, insert, i75) = quartiles(&c.insert_ns);
        let (mean, sd) = mean_sd(&c.insert_ns);
        let (q25, query, q75) = quartiles(&c.query_ns);
        table.push(vec![
            c.variant.label(),
            c.n.to_string(),
            c.insert_ns.len().to_string(),
            c.bytes.to_string(),
            insert.to_string(),
            i25.to_string(),
            i75.to_string(),
            mean.to_string(),
            sd.to_string(),
            query.to_string(),
            q25.to_string(),
            q75.to_string(),
        ]);
    }
    table
}
