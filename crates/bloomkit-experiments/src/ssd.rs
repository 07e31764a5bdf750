//! Seed 001's buffered Bloom filter on SSD (Canim, Mihaila, Bhattacharjee, Lang & Ross, ADMS
//! 2010): page reads and writes per insert against the size of the insert buffer.
//!
//! A [`BufferedBloomFilter`] file for n items at ε = 1% (N pages of 4 KiB) is filled through
//! buffers of B = 1 (unbuffered: every insert reads and writes its page) to thousands of
//! pending inserts, a whole number of batches each; then Q queries are asked. The filter's
//! own counters give the page reads and writes; theory gives `D/B` per insert with
//! `D = N(1 − (1 − 1/N)^B)` distinct pages per batch, and one page read per query.

use anyhow::Result;
use bloomkit::params::{buffered_distinct_pages_variance, buffered_io_per_insert};
use bloomkit::stats::Z_95;
use bloomkit::BufferedBloomFilter;
use clap::Args;

use super::plot::{self, Axis, Figure, Legend, Point, Series, Style};
use super::report::{Report, ReportTable};
use super::verdict::{Check, Verdict};
use super::{progress, sig, StudyArgs, Table};

/// The buffer sizes B, in pending inserts.
pub const BATCHES: [u64; 8] = [1, 4, 16, 64, 256, 1_024, 4_096, 16_384];

/// Arguments of `bloomkit experiment ssd`.
#[derive(Debug, Args)]
pub struct SsdArgs {
    /// The options every study has.
    #[command(flatten)]
    pub common: StudyArgs,
}

#[derive(Debug, Clone)]
struct Row {
    batch: u64,
    pages: u64,
    inserts: u64,
    reads: u64,
    writes: u64,
    queries: u64,
    query_reads: u64,
}

impl Row {
    fn per_insert(&self) -> f64 {
        self.reads as f64 / self.inserts as f64
    }
    fn theory(&self) -> f64 {
        buffered_io_per_insert(self.pages, self.batch)
    }
    /// The 95% interval of the page reads: the batches are independent, each D with
    /// the occupancy variance.
    fn interval(&self) -> (f64, f64) {
        let batches = (self.inserts / self.batch) as f64;
        let mean = self.theory() * self.inserts as f64;
        let sd = (batches * buffered_distinct_pages_variance(self.pages, self.batch)).sqrt();
        (mean - Z_95 * sd - 0.5, mean + Z_95 * sd + 0.5)
    }
    /// The point against theory: page reads per insert against `D/B`, σ from the
    /// batches' independent occupancy variances, `√(batches · Var D)/inserts`. Every
    /// buffer size has its own file and its own keys, so the points are independent.
    fn check(&self) -> Check {
        let batches = (self.inserts / self.batch) as f64;
        let sd = (batches * buffered_distinct_pages_variance(self.pages, self.batch)).sqrt()
            / self.inserts as f64;
        Check {
            label: format!("B = {}", self.batch),
            measured: self.per_insert(),
            theory: self.theory(),
            sd,
            trials: self.inserts as f64,
            independent: true,
        }
    }
}

/// Runs the study.
pub fn study(args: &SsdArgs) -> Result<Report> {
    let start = super::stopwatch();
    let size = args.common.size();
    let seed = args.common.seed;
    let n: u64 = size.pick(20_000, 1_000_000, 10_000_000);
    let least: u64 = size.pick(100, 1_000, 10_000);
    let queries: u64 = size.pick(100, 1_000, 10_000);
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("ssd.bkb");

    let bar = progress(BATCHES.len() as u64, "ssd: buffers");
    let mut rows = Vec::new();
    for (index, batch) in BATCHES.into_iter().enumerate() {
        // Keys of their own per buffer size (index · 2⁴⁸ + i), so that the buffer sizes
        // are independent tests rather than regroupings of the same keys' pages.
        let base = (index as u64) << 48;
        let mut filter = BufferedBloomFilter::builder()
            .capacity(n)
            .fpp(0.01)
            .memory_budget(batch * bloomkit::buffered::PENDING_ENTRY_BYTES)
            .seed(seed)
            .create(&path)?;
        // Whole batches: at least `least` inserts and at least four batches.
        let inserts = least.max(4 * batch).div_ceil(batch) * batch;
        for i in 0..inserts {
            filter.insert(&(base + i))?;
        }
        let stats = filter.stats();
        for i in inserts..inserts + queries {
            filter.contains(&(base + i))?;
        }
        rows.push(Row {
            batch,
            pages: filter.num_pages(),
            inserts,
            reads: stats.page_reads,
            writes: stats.page_writes,
            queries,
            query_reads: filter.stats().page_reads - stats.page_reads,
        });
        filter.close()?;
        bar.inc(1);
    }
    bar.finish_and_clear();

    let pages = rows[0].pages;
    let mut verdict = Verdict::new();
    for r in &rows {
        verdict.add(r.check());
    }
    let one_read = rows.iter().all(|r| r.query_reads == r.queries);
    let best = rows.last().expect("rows");
    let mut report = Report {
        study: "ssd",
        title: "ssd — page I/O of the buffered Bloom filter against its buffer".into(),
        summary: format!(
            "A Bloom filter on disk for n = {n} items at ε = 1%: {pages} pages of 4 KiB, each \
             item's bits in one page. Inserts wait in a buffer of B pending inserts and are \
             written a page at a time; the filter counts every page it reads and writes. \
             Unbuffered (B = 1) an insert reads and writes one page; with B = {} it reads and \
             writes {} pages per insert.",
            best.batch,
            sig(best.per_insert(), 3)
        ),
        command: args.common.command("ssd"),
        facts: vec![format!(
            "n = {n}, N = {pages} pages, inserts per buffer size: a whole number of batches, at \
             least {least} and 4 batches; {queries} queries each; hash seed {seed}; flushes \
             journaled and synced."
        )],
        tables: vec![ReportTable {
            name: "main".into(),
            title: "Page reads and writes per insert by buffer size, and per query".into(),
            display: display_table(&rows),
            csv: csv_table(&rows),
        }],
        figures: vec![figure(&rows, pages)],
        verdicts: vec![verdict.judge(
            "Page reads per insert against N(1 − (1 − 1/N)^B)/B (σ from the occupancy \
                 variance of each batch; B = 1 reads exactly one page per insert, trivially)",
            "A point outside means the page of an item is not uniform, or a flush read a \
                 page twice.",
        )],
        notes: vec![
            format!(
                "Writes equal reads at every buffer size (a flushed page is read once and \
                 written once){}; queries read {} page each.",
                if rows.iter().all(|r| r.reads == r.writes) {
                    ""
                } else {
                    " — NOT here"
                },
                if one_read { "exactly one" } else { "NOT one" }
            ),
            "Every flushed group is also written to the journal first (one more page per page, \
             plus the header): the price of a file that survives a failed flush. The paper \
             counts device I/O without it."
                .into(),
        ],
        seconds: 0.0,
    };
    report.seconds = start.elapsed().as_secs_f64();
    Ok(report)
}

fn figure(rows: &[Row], pages: u64) -> Figure {
    let grid = plot::geometric(1.0, BATCHES[BATCHES.len() - 1] as f64, 60);
    let series = vec![
        Series::curve("theory D/B", 0, grid.iter().copied(), |b| {
            buffered_io_per_insert(pages, b.round() as u64)
        }),
        Series::new(
            "measured page reads per insert",
            Style::Measured,
            1,
            rows.iter()
                .map(|r| Point::new(r.batch as f64, r.per_insert()))
                .collect(),
        ),
    ];
    Figure {
        name: "ssd_io".into(),
        title: format!("Page reads per insert against the insert buffer ({pages} pages)"),
        caption: "Page reads per insert (writes are equal) measured by the filter's counters, \
                  over the occupancy theory N(1 − (1 − 1/N)^B)/B."
            .into(),
        x: Axis::log("buffer B (pending inserts)"),
        y: Axis::log("page reads per insert"),
        series,
        legend: Legend::UpperRight,
    }
}

fn display_table(rows: &[Row]) -> Table {
    let mut table = Table::new([
        "buffer B",
        "inserts",
        "page reads",
        "page writes",
        "reads/insert",
        "theory",
        "deviation",
        "reads/query",
    ]);
    for r in rows {
        table.push(vec![
            r.batch.to_string(),
            r.inserts.to_string(),
            r.reads.to_string(),
            r.writes.to_string(),
            sig(r.per_insert(), 3),
            sig(r.theory(), 3),
            r.check().cell(),
            sig(r.query_reads as f64 / r.queries as f64, 3),
        ]);
    }
    table
}

fn csv_table(rows: &[Row]) -> Table {
    let mut table = Table::new([
        "batch",
        "pages",
        "inserts",
        "page_reads",
        "page_writes",
        "reads_per_insert",
        "theory",
        "low",
        "high",
        "queries",
        "query_reads",
    ]);
    for r in rows {
        let (low, high) = r.interval();
        table.push(vec![
            r.batch.to_string(),
            r.pages.to_string(),
            r.inserts.to_string(),
            r.reads.to_string(),
            r.writes.to_string(),
            r.per_insert().to_string(),
            r.theory().to_string(),
            low.to_string(),
            high.to_string(),
            r.queries.to_string(),
            r.query_reads.to_string(),
        ]);
    }
    table
}
