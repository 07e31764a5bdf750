//! The seeds' Bigtable example: sorted runs on disk, each with its Bloom filter.
//!
//! An LSM store keeps its data in sorted runs (SSTables): each is a file of records sorted
//! by key, in 4 KiB blocks, with an index of the first key of every block in memory. A
//! lookup asks the runs from the newest to the oldest; in each, the one block that could
//! hold the key is read from disk and searched. With a filter per run, a run whose filter
//! says "no" is skipped without a read. (Real stores also skip a run whose key range does
//! not cover the key; with uniformly random keys every run covers nearly the whole key
//! space, so that check would save a read about once in S lookups — it is left out, which
//! keeps the reads without filters exact.)
//!
//! For R runs of S keys each (R = 1 … 8 by default), the study looks up N keys that are in
//! the store (uniformly over all runs) and N that are not, with and without the filters,
//! and counts the block reads. Theory: a present key in the j-th newest run costs j reads
//! without filters and `1 + (j − 1)·ε` with them; an absent key costs R reads without and
//! R·ε with (ε the runs' `fpp_exact`). Reads go to a real file; like the disk study, they
//! bypass the page cache with `O_DIRECT` where possible and the report says which.

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use bloomkit::params::fpp_exact;
use bloomkit::stats::{wilson_interval, Z_95};
use bloomkit::BloomFilter;
use clap::Args;

use super::corpus::{self, SplitMix64};
use super::disk::{choose_cache, open_for_reads, AlignedBuffer, CacheArg, ALIGN};
use super::plot::{self, Axis, Figure, Legend, Point, Series, Style};
use super::report::{Report, ReportTable};
use super::verdict::{Check, Verdict};
use super::{mean_sd, progress, sig, StudyArgs, Table};

/// The false-positive probability of every run's filter.
pub const FPP: f64 = 0.01;

/// A record: 16 hexadecimal digits of key, a space, 14 bytes of value, a newline.
const RECORD: usize = 32;

/// A block: what one disk read fetches.
const BLOCK: usize = 4096;

/// Records per block.
const PER_BLOCK: usize = BLOCK / RECORD;

/// Arguments of `bloomkit experiment sstable`.
#[derive(Debug, Args)]
pub struct SstableArgs {
    /// The options every study has.
    #[command(flatten)]
    pub common: StudyArgs,

    /// How the runs' blocks are read.
    #[arg(long, value_enum, default_value_t)]
    pub cache: CacheArg,
}

impl SstableArgs {
    /// The study's defaults with these common options.
    pub fn with_common(common: StudyArgs) -> Self {
        SstableArgs {
            common,
            cache: CacheArg::default(),
        }
    }
}

/// One sorted run on disk.
struct Run {
    file: File,
    /// The first key of each block.
    index: Vec<u64>,
    filter: BloomFilter,
}

impl Run {
    /// Writes `keys` sorted to `path` and builds the run's index and filter.
    fn create(
        path: &Path,
        mut keys: Vec<u64>,
        seed: u64,
        cache: CacheArg,
        direct: Option<bool>,
    ) -> Result<(Run, bool)> {
        keys.sort_unstable();
        let mut filter = BloomFilter::builder()
            .capacity(keys.len() as u64)
            .fpp(FPP)
            .seed(seed)
            .build()?;
        let mut index = Vec::with_capacity(keys.len() / PER_BLOCK + 1);
        {
            let file =
                File::create(path).with_context(|| format!("creating {}", path.display()))?;
            let mut out = BufWriter::new(file);
            for (i, &key) in keys.iter().enumerate() {
                if i % PER_BLOCK == 0 {
                    index.push(key);
                }
                filter.insert(&key);
                writeln!(out, "{key:016x} value{:09}", i % 1_000_000_000)?;
            }
            let file = out.into_inner().map_err(|e| e.into_error())?;
            file.sync_all()?;
        }
        let direct = match direct {
            Some(direct) => direct,
            None => choose_cache(cache, path).0,
        };
        let file =
            open_for_reads(path, direct).with_context(|| format!("opening {}", path.display()))?;
        Ok((
            Run {
                file,
                index,
                filter,
            },
            direct,
        ))
    }

    /// Looks `key` up: `None` when no read was needed, else whether the block read held it.
    fn get(
        &mut self,
        key: u64,
        use_filter: bool,
        buffer: &mut AlignedBuffer,
    ) -> io::Result<Option<bool>> {
        if use_filter && !self.filter.contains(&key) {
            return Ok(None);
        }
        let block = self
            .index
            .partition_point(|&first| first <= key)
            .saturating_sub(1);
        let bytes = buffer.slice(BLOCK);
        (&self.file).seek(SeekFrom::Start((block * BLOCK) as u64))?;
        let mut got = 0;
        while got < BLOCK {
            match (&self.file).read(&mut bytes[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        let wanted = format!("{key:016x}");
        let records = got / RECORD;
        let found = (0..records)
            .map(|r| &bytes[r * RECORD..r * RECORD + 16])
            .collect::<Vec<_>>()
            .binary_search(&wanted.as_bytes())
            .is_ok();
        Ok(Some(found))
    }
}

/// The four cases of the study.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Case {
    present: bool,
    filters: bool,
}

const CASES: [Case; 4] = [
    Case {
        present: false,
        filters: false,
    },
    Case {
        present: true,
        filters: false,
    },
    Case {
        present: true,
        filters: true,
    },
    Case {
        present: false,
        filters: true,
    },
];

impl Case {
    fn label(self) -> &'static str {
        match (self.present, self.filters) {
            (false, false) => "absent keys, no filters",
            (true, false) => "present keys, no filters",
            (true, true) => "present keys, with filters",
            (false, true) => "absent keys, with filters",
        }
    }

    /// Reads per lookup by the closed form, for R runs with filters of rate `fpp`.
    fn formula(self, runs: f64, fpp: f64) -> f64 {
        match (self.present, self.filters) {
            (false, false) => runs,
            (true, false) => (runs + 1.0) / 2.0,
            (true, true) => 1.0 + (runs - 1.0) / 2.0 * fpp,
            (false, true) => runs * fpp,
        }
    }
}

/// The measurements of one case for one number of runs.
#[derive(Debug, Clone)]
struct Row {
    runs: u64,
    case: Case,
    lookups: u64,
    reads: u64,
    /// Reads that every lookup of a present key needs (its own block).
    base: u64,
    /// Run checks that could have cost a read, besides the own block of a present key.
    trials: u64,
    /// Expected reads, given the runs each lookup went through.
    expected: f64,
    fpp: f64,
    seconds: Vec<f64>,
}

impl Row {
    fn mean(&self) -> f64 {
        self.reads as f64 / self.lookups.max(1) as f64
    }
    fn interval(&self) -> (f64, f64) {
        let extra = self.reads - self.base;
        let (low, high) = wilson_interval(extra, self.trials, Z_95);
        let n = self.lookups.max(1) as f64;
        (
            (self.base as f64 + self.trials as f64 * low) / n,
            (self.base as f64 + self.trials as f64 * high) / n,
        )
    }
    fn theory(&self) -> f64 {
        self.expected / self.lookups.max(1) as f64
    }
    /// The reads beyond the certain ones against theory: a rate of false-positive reads
    /// per run check, binomial. `None` without filters, where every read is certain and the
    /// count is exact by construction.
    fn check(&self) -> Option<Check> {
        if !self.case.filters || self.trials == 0 {
            return None;
        }
        let trials = self.trials as f64;
        let theory = (self.expected - self.base as f64) / trials;
        let keys = if self.case.present {
            "present"
        } else {
            "absent"
        };
        Some(Check::binomial(
            format!("R = {}, {keys} keys", self.runs),
            (self.reads - self.base) as f64 / trials,
            theory,
            trials,
        ))
    }
    fn micros(&self) -> (f64, f64) {
        let us: Vec<f64> = self.seconds.iter().map(|s| s * 1e6).collect();
        mean_sd(&us)
    }
}

/// Runs the study.
pub fn study(args: &SstableArgs) -> Result<Report> {
    let start = super::stopwatch();
    let size = args.common.size();
    let seed = args.common.seed;
    let run_keys: u64 = size.pick(1_000, 20_000, 100_000);
    let run_counts: Vec<u64> =
        size.pick(vec![1, 2, 4], vec![1, 2, 3, 4, 6, 8], vec![1, 2, 4, 8, 16]);
    let lookups: u64 = size.pick(200, 2_000, 20_000);

    let dir = tempfile::Builder::new()
        .prefix("bloomkit-sstable-")
        .tempdir()
        .context("creating a temporary directory")?;
    let mut rows = Vec::new();
    let mut cache_note = String::new();
    let total = run_counts.len() as u64 * CASES.len() as u64 * lookups;
    let bar = progress(total, "sstable: lookups");
    let mut buffer = AlignedBuffer::new(BLOCK.max(ALIGN));
    for &count in &run_counts {
        let mut rng = SplitMix64::new(corpus::subseed(seed, &[70, count]));
        let mut all = HashSet::with_capacity((count * run_keys) as usize);
        let mut keys = Vec::with_capacity((count * run_keys) as usize);
        while keys.len() < (count * run_keys) as usize {
            let key = rng.next_u64();
            if all.insert(key) {
                keys.push(key);
            }
        }
        // Run 0 is the oldest; lookups go from the newest.
        let mut runs = Vec::new();
        let mut direct = None;
        for (r, chunk) in keys.chunks(run_keys as usize).enumerate() {
            let path = dir.path().join(format!("run-{count}-{r}.sst"));
            let (run, used) = Run::create(
                &path,
                chunk.to_vec(),
                corpus::subseed(seed, &[71, r as u64]),
                args.cache,
                direct,
            )?;
            if direct.is_none() {
                cache_note = choose_cache(args.cache, &path).1;
            }
            direct = Some(used);
            runs.push(run);
        }
        let present: Vec<(u64, usize)> = (0..lookups)
            .map(|_| {
                let i = rng.below(keys.len());
                (keys[i], i / run_keys as usize)
            })
            .collect();
        let absent: Vec<u64> = std::iter::repeat_with(|| rng.next_u64())
            .filter(|k| !all.contains(k))
            .take(lookups as usize)
            .collect();
        for case in CASES {
            let mut row = Row {
                runs: count,
                case,
                lookups,
                reads: 0,
                base: 0,
                trials: 0,
                expected: 0.0,
                fpp: fpp_exact(
                    runs[0].filter.num_bits(),
                    runs[0].filter.num_hashes(),
                    run_keys,
                ),
                seconds: Vec::with_capacity(lookups as usize),
            };
            for i in 0..lookups as usize {
                let (key, home) = if case.present {
                    (present[i].0, Some(present[i].1))
                } else {
                    (absent[i], None)
                };
                let t = Instant::now();
                let mut found = false;
                for r in (0..runs.len()).rev() {
                    let own = home == Some(r);
                    if own {
                        row.base += 1;
                    } else {
                        row.trials += 1;
                        let filter = if case.filters {
                            fpp_exact(
                                runs[r].filter.num_bits(),
                                runs[r].filter.num_hashes(),
                                run_keys,
                            )
                        } else {
                            1.0
                        };
                        row.expected += filter;
                    }
                    match runs[r].get(key, case.filters, &mut buffer)? {
                        None => {
                            if own {
                                bail!("a present key was skipped by its own run");
                            }
                        }
                        Some(hit) => {
                            row.reads += 1;
                            if hit {
                                found = true;
                                break;
                            }
                        }
                    }
                }
                row.seconds.push(t.elapsed().as_secs_f64());
                if found != case.present {
                    bail!(
                        "a lookup of key {key:016x} found {found}, expected {}",
                        case.present
                    );
                }
            }
            row.expected += row.base as f64;
            rows.push(row);
            bar.inc(lookups);
        }
    }
    bar.finish_and_clear();
    drop(dir);

    let mut verdict = Verdict::new();
    for check in rows.iter().filter_map(Row::check) {
        verdict.add(check);
    }
    let fpp = rows.first().map_or(FPP, |r| r.fpp);
    let mut report = Report {
        study: "sstable",
        title: "sstable — the Bigtable example: sorted runs on disk with a filter each".into(),
        summary: format!(
            "Seed 003 (003_d5d061be399466f4.txt), its section 7.2 on Google Bigtable and \
             example 7.2.1 (three SSTables, two reads saved), and seed 001 \
             (001_ddd529f7662cd0cb.txt: Bigtable, HBase and Cassandra avoid disk reads for \
             absent keys): R sorted runs of {run_keys} keys in 4 KiB blocks on disk, each with a Bloom filter \
             (ε = {FPP}); {lookups} present and {lookups} absent keys looked up from the newest \
             run to the oldest, with and without the filters; block reads counted."
        ),
        command: args.common.command("sstable"),
        facts: vec![
            format!(
                "R ∈ {{{}}}, {run_keys} keys per run ({} KiB), seed {seed}",
                run_counts
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(", "),
                run_keys as usize * RECORD / 1024
            ),
            format!("Cache: {cache_note}"),
        ],
        tables: vec![ReportTable {
            name: "main".into(),
            title: "Disk reads per lookup, with and without filters".into(),
            display: display_table(&rows),
            csv: csv_table(&rows),
        }],
        figures: vec![reads_figure(&rows, &run_counts, fpp), time_figure(&rows)],
        verdicts: vec![verdict.judge(
                "Reads per lookup with filters against the expected reads, judged on the reads \
                 the filters let through per run checked (without filters the reads are exact)",
                "The filters' false positives do not follow their formula here.",
            )],
        notes: vec![
            "The expected reads in the table count, for each lookup, the runs it went through \
             (the newer runs for a present key; without filters each costs a read, with \
             filters a read with the filter's false-positive probability), so without filters \
             they are exact; the lines in the figure are the closed forms R, (R + 1)/2, \
             1 + (R − 1)ε/2 and Rε."
                .into(),
        ],
        seconds: 0.0,
    };
    report.seconds = start.elapsed().as_secs_f64();
    Ok(report)
}

fn reads_figure(rows: &[Row], run_counts: &[u64], fpp: f64) -> Figure {
    let largest = run_counts.last().copied().unwrap_or(1) as f64;
    let grid = plot::linear(1.0, largest, 100);
    let mut series = Vec::new();
    for (i, case) in CASES.iter().enumerate() {
        series.push(Series::curve("", i, grid.iter().copied(), |r| {
            case.formula(r, fpp)
        }));
    }
    series.push(Series::new(
        "theory: solid line in the case's colour",
        Style::Theory,
        plot::BLACK_INDEX,
        Vec::new(),
    ));
    for (i, case) in CASES.iter().enumerate() {
        let points = rows
            .iter()
            .filter(|r| r.case == *case)
            .map(|r| {
                let (low, high) = r.interval();
                Point::with_bar(r.runs as f64, r.mean(), low, high)
            })
            .collect();
        series.push(Series::new(case.label(), Style::Measured, i, points));
    }
    Figure {
        name: "sstable_reads".into(),
        title: format!("Disk reads per lookup in R sorted runs (filters at ε = {FPP})"),
        caption: "Block reads per lookup against the number of runs, for present and absent keys, \
                  with and without a Bloom filter per run: measured (95% intervals) over the \
                  closed forms."
            .into(),
        x: Axis::linear("sorted runs R").range(0.5, largest + 0.5),
        y: Axis::log("disk reads per lookup").range(1e-3, largest * 2.0),
        series,
        legend: Legend::LowerRight,
    }
}

fn time_figure(rows: &[Row]) -> Figure {
    let series = CASES
        .iter()
        .enumerate()
        .map(|(i, case)| {
            let points = rows
                .iter()
                .filter(|r| r.case == *case)
                .map(|r| {
                    let (mean, sd) = r.micros();
                    let half = 1.96 * sd / (r.seconds.len().max(1) as f64).sqrt();
                    Point::with_bar(r.runs as f64, mean, (mean - half).max(0.0), mean + half)
                })
                .collect();
            Series::new(case.label(), Style::MeasuredLine, i, points)
        })
        .collect();
    Figure {
        name: "sstable_time".into(),
        title: "Time per lookup in R sorted runs".into(),
        caption: "Mean time per lookup (95% interval of the mean) against the number of runs: the \
                  reads the filters save are the time they save."
            .into(),
        x: Axis::linear("sorted runs R"),
        y: Axis::linear("time per lookup (µs)")
            .from(0.0)
            .headroom(0.35),
        series,
        legend: Legend::UpperLeft,
    }
}

fn display_table(rows: &[Row]) -> Table {
    let mut table = Table::new([
        "runs",
        "lookups",
        "keys",
        "filters",
        "reads",
        "reads/lookup",
        "95% interval",
        "expected",
        "deviation",
        "µs/lookup",
    ]);
    for r in rows {
        let (low, high) = r.interval();
        table.push(vec![
            r.runs.to_string(),
            r.lookups.to_string(),
            if r.case.present { "present" } else { "absent" }.into(),
            if r.case.filters { "yes" } else { "no" }.into(),
            r.reads.to_string(),
            sig(r.mean(), 4),
            // Without filters the count is exact by construction: no interval to give.
            if r.check().is_some() {
                format!("[{}, {}]", sig(low, 4), sig(high, 4))
            } else {
                "— (exact count)".into()
            },
            sig(r.theory(), 4),
            r.check().map_or("exact".into(), |c| c.cell()),
            sig(r.micros().0, 2),
        ]);
    }
    table
}

fn csv_table(rows: &[Row]) -> Table {
    let mut table = Table::new([
        "runs",
        "present",
        "filters",
        "lookups",
        "reads",
        "reads_per_lookup",
        "ci_low",
        "ci_high",
        "expected_per_lookup",
        "formula_per_lookup",
        "filter_fpp",
        "lookup_us",
        "lookup_us_sd",
    ]);
    for r in rows {
        let (low, high) = r.interval();
        let (us, us_sd) = r.micros();
        table.push(vec![
            r.runs.to_string(),
            r.case.present.to_string(),
            r.case.filters.to_string(),
            r.lookups.to_string(),
            r.reads.to_string(),
            r.mean().to_string(),
            low.to_string(),
            high.to_string(),
            r.theory().to_string(),
            r.case.formula(r.runs as f64, r.fpp).to_string(),
            r.fpp.to_string(),
            us.to_string(),
            us_sd.to_string(),
        ]);
    }
    table
}
