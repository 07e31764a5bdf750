//! Seed 002, figures 2, 3 and 5: the "forgotten password" scenario.
//!
//! n (user name, e-mail) lines are written to a real file on disk. 2n user names are then
//! asked, the n in the file and n others, in random order. Each query asks the filter
//! first and reads the file only on "maybe": the file is opened and read from the start,
//! line by line, until the name is found or the file ends — the seed's `grep`. The study
//! counts the disk lookups against the n + n·FPP that theory expects, the lookups saved,
//! the false positives (a "maybe" whose lookup finds nothing), the filter's size in bytes,
//! and the mean time of a filter query and of a disk lookup.
//!
//! # Cold or warm
//!
//! A file just written sits in the operating system's page cache, so ordinary reads of it
//! never reach the disk ("warm"). By default each lookup therefore opens the file with
//! `O_DIRECT` (Linux), which bypasses the page cache: every read goes to the device
//! ("cold" for this machine's cache; a disk or hypervisor cache below may still help). Where
//! `O_DIRECT` is not available (another OS, or a file system such as tmpfs that refuses
//! it) the study says so and reads through the page cache. `--cache buffered` asks for
//! page-cache reads. The report states which one was used.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use bloomkit::params::fpp_exact;
use bloomkit::stats::{wilson_interval, Z_95};
use bloomkit::{BloomFilter, Filter};
use clap::{Args, ValueEnum};

use super::corpus::{self, SplitMix64};
use super::plot::{Axis, Figure, Legend, Point, Series, Style};
use super::report::{Report, ReportTable};
use super::rho::{num_bits, num_hashes, NS, RHOS};
use super::verdict::{Check, Verdict};
use super::{mean_sd, progress, sig, Size, StudyArgs, Table};

/// Bytes read per system call, a multiple of every block size `O_DIRECT` may require.
const CHUNK: usize = 64 * 1024;

/// The alignment of `O_DIRECT` buffers and reads (the largest logical block size in
/// common use).
pub const ALIGN: usize = 4096;

/// How reads reach the file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum CacheArg {
    /// Bypass the page cache with O_DIRECT where possible (cold reads from the device).
    #[default]
    Direct,
    /// Ordinary reads, served by the page cache (warm: the file was just written).
    Buffered,
}

/// Arguments of `bloomkit experiment disk`.
#[derive(Debug, Args)]
pub struct DiskArgs {
    /// The options every study has.
    #[command(flatten)]
    pub common: StudyArgs,

    /// How lookups read the file.
    #[arg(long, value_enum, default_value_t)]
    pub cache: CacheArg,

    /// Where to write the user files [default: the system's temporary directory]. They
    /// are removed at the end.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

impl DiskArgs {
    /// The study's defaults with these common options.
    pub fn with_common(common: StudyArgs) -> Self {
        DiskArgs {
            common,
            cache: CacheArg::default(),
            dir: None,
        }
    }
}

/// `O_DIRECT` for the platforms whose value this build knows.
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "x86", target_arch = "riscv64")
))]
const O_DIRECT: Option<i32> = Some(0o40000);
#[cfg(all(target_os = "linux", any(target_arch = "aarch64", target_arch = "arm")))]
const O_DIRECT: Option<i32> = Some(0o200000);
#[cfg(not(all(
    target_os = "linux",
    any(
        target_arch = "x86_64",
        target_arch = "x86",
        target_arch = "riscv64",
        target_arch = "aarch64",
        target_arch = "arm"
    )
)))]
const O_DIRECT: Option<i32> = None;

/// A read buffer whose start is aligned for `O_DIRECT`, in safe code: a larger vector and
/// the offset of its first aligned byte.
pub struct AlignedBuffer {
    bytes: Vec<u8>,
    offset: usize,
}

impl AlignedBuffer {
    /// A buffer of `len` usable bytes.
    pub fn new(len: usize) -> Self {
        let bytes = vec![0u8; len + ALIGN];
        let address = bytes.as_ptr() as usize;
        let offset = (ALIGN - address % ALIGN) % ALIGN;
        AlignedBuffer { bytes, offset }
    }

    /// The first `len` usable bytes, aligned.
    pub fn slice(&mut self, len: usize) -> &mut [u8] {
        &mut self.bytes[self.offset..self.offset + len]
    }
}

/// The file of (user name, e-mail) lines and how it is read.
struct UserFile {
    path: PathBuf,
    direct: bool,
    buffer: AlignedBuffer,
    carry: Vec<u8>,
}

/// What one lookup did.
#[derive(Debug, Clone, Copy, Default)]
struct Lookup {
    found: bool,
    bytes: u64,
}

/// Opens a file for reading, with `O_DIRECT` (bypassing the page cache) when `direct`
/// and the platform has it.
pub fn open_for_reads(path: &Path, direct: bool) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    if direct {
        use std::os::unix::fs::OpenOptionsExt;
        if let Some(flag) = O_DIRECT {
            options.custom_flags(flag);
        }
    }
    #[cfg(not(unix))]
    let _ = direct;
    options.open(path)
}

impl UserFile {
    fn open(&self) -> io::Result<File> {
        open_for_reads(&self.path, self.direct)
    }

    /// Opens the file and reads it from the start until a line `name …` is found.
    fn lookup(&mut self, name: &[u8]) -> io::Result<Lookup> {
        let mut file = self.open()?;
        let mut result = Lookup::default();
        self.carry.clear();
        loop {
            let chunk = self.buffer.slice(CHUNK);
            let got = read_full(&mut file, chunk)?;
            if got == 0 {
                break;
            }
            result.bytes += got as u64;
            let data = &chunk[..got];
            let mut start = 0;
            while let Some(end) = data[start..].iter().position(|&b| b == b'\n') {
                let end = start + end;
                let found = if self.carry.is_empty() {
                    line_is(&data[start..end], name)
                } else {
                    self.carry.extend_from_slice(&data[start..end]);
                    let found = line_is(&self.carry, name);
                    self.carry.clear();
                    found
                };
                if found {
                    result.found = true;
                    return Ok(result);
                }
                start = end + 1;
            }
            self.carry.extend_from_slice(&data[start..]);
            if got < CHUNK {
                break;
            }
        }
        result.found = !self.carry.is_empty() && line_is(&self.carry, name);
        Ok(result)
    }
}

/// Whether a line holds the record of `name` (`name`, a space, the e-mail).
fn line_is(line: &[u8], name: &[u8]) -> bool {
    line.len() > name.len() && line.starts_with(name) && line[name.len()] == b' '
}

/// Reads until `buffer` is full or the file ends (O_DIRECT reads may come back short).
fn read_full(file: &mut File, buffer: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        match file.read(&mut buffer[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Writes the n user lines and flushes them to the device.
fn write_users(path: &Path, names: &[Vec<u8>], seed: u64) -> Result<()> {
    let file = File::create(path).with_context(|| format!("creating {}", path.display()))?;
    let mut out = BufWriter::new(file);
    let mut rng = SplitMix64::new(seed);
    const LETTERS: &[u8] = b"abcdefghijklmnopqrstuvwxyz";
    for name in names {
        let mut email = Vec::with_capacity(24);
        for _ in 0..8 {
            email.push(LETTERS[rng.below(LETTERS.len())]);
        }
        email.extend_from_slice(b"@mail.example");
        out.write_all(name)?;
        out.write_all(b" ")?;
        out.write_all(&email)?;
        out.write_all(b"\n")?;
    }
    let file = out.into_inner().map_err(|e| e.into_error())?;
    file.sync_all()?;
    Ok(())
}

/// The results for one (n, ρ), summed over repetitions.
#[derive(Debug, Clone, Default)]
struct Cell {
    n: u64,
    rho: f64,
    m: u64,
    k: u32,
    filter_bytes: u64,
    queries: u64,
    present: u64,
    lookups: u64,
    false_positives: u64,
    bytes_read: u64,
    /// Nanoseconds per filter query, one value per timed pass over all 2n queries.
    filter_passes: Vec<f64>,
    /// Seconds of each disk lookup.
    lookup_seconds: Vec<f64>,
}

impl Cell {
    fn absent(&self) -> u64 {
        self.queries - self.present
    }
    fn fpp(&self) -> f64 {
        fpp_exact(self.m, self.k, self.n)
    }
    fn expected_lookups(&self) -> f64 {
        self.present as f64 + self.absent() as f64 * self.fpp()
    }
    /// The 95% interval of the lookups: the present ones plus the Wilson interval of the
    /// false positives among the absent ones.
    fn lookups_interval(&self) -> (f64, f64) {
        let (low, high) = wilson_interval(self.false_positives, self.absent(), Z_95);
        let absent = self.absent() as f64;
        (
            self.present as f64 + absent * low,
            self.present as f64 + absent * high,
        )
    }
    /// The false positives among the absent names against theory: one filter per cell, so
    /// σ holds the filter's own spread as well as the queries'.
    fn check(&self) -> Check {
        Check::classic(
            format!("n = {}, ρ = {}", self.n, self.rho),
            self.false_positives,
            self.absent(),
            (self.m, self.k, self.n),
        )
    }
    fn saved(&self) -> u64 {
        self.queries - self.lookups
    }
    /// Mean and sd of the time of one filter query, in nanoseconds (sd over passes).
    fn filter_ns(&self) -> (f64, f64) {
        mean_sd(&self.filter_passes)
    }
    /// Mean and sd of one disk lookup, in microseconds.
    fn lookup_us(&self) -> (f64, f64) {
        let us: Vec<f64> = self.lookup_seconds.iter().map(|s| s * 1e6).collect();
        mean_sd(&us)
    }
}

/// How many times the filter queries are timed per repetition.
const PASSES: usize = 3;

/// About how many filter queries one timed pass makes.
const QUERIES_PER_PASS: usize = 100_000;

/// Runs the study.
pub fn study(args: &DiskArgs) -> Result<Report> {
    let start = super::stopwatch();
    let size = args.common.size();
    let seed = args.common.seed;
    let ns: Vec<u64> = size.pick(vec![200, 500], vec![500, 1_000, 2_000], NS.to_vec());
    let rhos: Vec<f64> = size.pick(vec![0.1, 1.0, 5.0, 10.0], RHOS.to_vec(), RHOS.to_vec());
    // One repetition: the file reads dominate the time, and the rho study repeats the rates.
    let reps: u64 = 1;

    let base = match &args.dir {
        Some(dir) => dir.clone(),
        None => std::env::temp_dir(),
    };
    std::fs::create_dir_all(&base).with_context(|| format!("creating {}", base.display()))?;
    let workdir = tempfile::Builder::new()
        .prefix("bloomkit-disk-")
        .tempdir_in(&base)
        .with_context(|| format!("creating a directory in {}", base.display()))?;

    let mut cache_note = String::new();
    let mut cells: Vec<Cell> = Vec::new();
    let total: u64 = ns.iter().map(|n| 2 * n * rhos.len() as u64).sum::<u64>() * reps;
    let bar = progress(total, "disk: queries");
    for &n in &ns {
        for &rho in &rhos {
            cells.push(Cell {
                n,
                rho,
                m: num_bits(rho, n),
                k: num_hashes(rho),
                ..Cell::default()
            });
        }
        for rep in 0..reps {
            let names = corpus::random_names(2 * n as usize, corpus::subseed(seed, &[20, n, rep]));
            let path = workdir.path().join(format!("users-{n}-{rep}.txt"));
            write_users(
                &path,
                &names[..n as usize],
                corpus::subseed(seed, &[21, n, rep]),
            )?;
            let (direct, note) = choose_cache(args.cache, &path);
            if cache_note.is_empty() {
                cache_note = note;
            }
            let mut file = UserFile {
                path: path.clone(),
                direct,
                buffer: AlignedBuffer::new(CHUNK),
                carry: Vec::new(),
            };
            // The queries: every name, present (the first n) and absent, in random order.
            let mut order: Vec<usize> = (0..names.len()).collect();
            let mut rng = SplitMix64::new(corpus::subseed(seed, &[22, n, rep]));
            for i in (1..order.len()).rev() {
                order.swap(i, rng.below(i + 1));
            }
            for cell in cells.iter_mut().filter(|c| c.n == n) {
                let mut filter = BloomFilter::builder()
                    .num_bits(cell.m)
                    .num_hashes(cell.k)
                    // Its own hash seed per ρ: filters of one hash seed over the same names
                    // have correlated fills, so their points would not be independent tests.
                    .seed(corpus::subseed(seed, &[23, n, rep, cell.m]))
                    .build()?;
                for name in &names[..n as usize] {
                    filter.insert(name);
                }
                cell.filter_bytes = filter.memory_bytes() as u64;
                // The filter alone, timed over whole passes (one query is too short to time);
                // a pass repeats the 2n queries until about QUERIES_PER_PASS were asked.
                let maybes: Vec<bool> = order.iter().map(|&i| filter.contains(&names[i])).collect();
                let rounds = QUERIES_PER_PASS.div_ceil(order.len()).max(1);
                for _ in 0..PASSES {
                    let t = Instant::now();
                    let mut yes = 0usize;
                    for _ in 0..rounds {
                        for &i in &order {
                            yes += usize::from(filter.contains(&names[i]));
                        }
                    }
                    let seconds = t.elapsed().as_secs_f64();
                    std::hint::black_box(yes);
                    cell.filter_passes
                        .push(seconds * 1e9 / (rounds * order.len()) as f64);
                }
                cell.queries += order.len() as u64;
                cell.present += n;
                for (&i, &maybe) in order.iter().zip(&maybes) {
                    if !maybe {
                        if i < n as usize {
                            bail!("broken invariant: the filter does not find an inserted name");
                        }
                        continue;
                    }
                    let t = Instant::now();
                    let lookup = file
                        .lookup(&names[i])
                        .with_context(|| format!("reading {}", path.display()))?;
                    cell.lookup_seconds.push(t.elapsed().as_secs_f64());
                    cell.lookups += 1;
                    cell.bytes_read += lookup.bytes;
                    let present = i < n as usize;
                    if lookup.found != present {
                        bail!(
                            "the lookup of {} in {} gave {} for a name that is {}",
                            String::from_utf8_lossy(&names[i]),
                            path.display(),
                            lookup.found,
                            if present { "there" } else { "not there" }
                        );
                    }
                    if !present {
                        cell.false_positives += 1;
                    }
                }
                bar.inc(order.len() as u64);
            }
            std::fs::remove_file(&path).ok();
        }
    }
    bar.finish_and_clear();
    drop(workdir);

    let mut verdict = Verdict::new();
    for cell in &cells {
        verdict.add(cell.check());
    }
    let sizes_fact = if size == Size::Full {
        "Sizes: the seed's n = 1000 … 10000 (--full).".to_owned()
    } else {
        format!(
            "Sizes: n ∈ {{{}}} instead of the seed's 1000 … 10000 (those run with --full). Each \
             lookup reads the file from the start, like the seed's grep, so the study costs \
             about n² per (n, ρ): the seed's sizes take about {:.0} times as long as these, \
             minutes instead of seconds. The rates do not depend on n (the rho study runs the \
             seed's n).",
            join(&ns),
            NS.iter().map(|&n| (n * n) as f64).sum::<f64>()
                / ns.iter().map(|&n| (n * n) as f64).sum::<f64>().max(1.0)
        )
    };
    let mut report = Report {
        study: "disk",
        title: "disk — seed 002: a filter in front of a file on disk (figures 2, 3 and 5)".into(),
        summary:
            "Seed 002 (002_ee4b1f30388e0c8c.txt, Spanish), its forgotten-password scenario: n (user name, e-mail) lines in a file; 2n names \
                  asked, half of them present; the file is read (from the start until the name is \
                  found, like grep) only when the filter says \"maybe\"."
                .into(),
        command: args.common.command("disk"),
        facts: vec![
            format!(
                "n ∈ {{{}}}, ρ ∈ {{{}}}, k = ⌈ρ ln 2⌉, {reps} repetition(s), seed {seed}",
                join(&ns),
                join(&rhos)
            ),
            sizes_fact,
            format!("Cache: {cache_note}"),
            format!(
                "Files written under {} (removed afterwards); {} KiB read per call.",
                base.display(),
                CHUNK / 1024
            ),
        ],
        tables: vec![
            ReportTable {
                name: "main".into(),
                title: "Disk lookups, false positives, filter size and times per n and ρ".into(),
                display: display_table(&cells),
                csv: csv_table(&cells),
            },
            ReportTable {
                name: "seed002".into(),
                title: "Seed 002's times and sizes beside ours, and why they differ".into(),
                display: seed_table(&cells),
                csv: seed_table(&cells),
            },
        ],
        figures: vec![
            reads_figure(&cells, &ns),
            size_figure(&cells, &ns),
            time_figure(&cells, &ns, true),
            time_figure(&cells, &ns, false),
        ],
        verdicts: vec![verdict.judge(
                "Disk lookups against n + n·(1 − (1 − 1/m)^kn)^k, judged on the false positives \
                 among the n absent names (σ: the queries' and the filter's own spread)",
                "The filter's false positives do not follow the formula; see the rho study.",
            )],
        notes: vec![
            "Filter sizes are ⌈m/64⌉·8 bytes exactly (the bit array in 64-bit words), so those \
             points sit on their line by construction."
                .into(),
            "Times have no theory: a disk lookup costs about the same whatever ρ (it reads the \
             file until the name, or all of it for a false positive), and a filter query costs \
             tens of nanoseconds, growing slowly with k."
                .into(),
        ],
        seconds: 0.0,
    };
    report.seconds = start.elapsed().as_secs_f64();
    Ok(report)
}

/// Decides between O_DIRECT and the page cache for reading `path` (an existing, non-empty
/// file); says which and why.
pub fn choose_cache(asked: CacheArg, path: &Path) -> (bool, String) {
    let warm = "warm — reads are served by the page cache (the file was just written), \
                so no lookup waits for the device";
    if asked == CacheArg::Buffered {
        return (false, format!("{warm} (--cache buffered)."));
    }
    if O_DIRECT.is_none() {
        return (
            false,
            format!("{warm}: O_DIRECT is not available on this platform in this build."),
        );
    }
    let probe = open_for_reads(path, true).and_then(|mut file| {
        let mut buffer = AlignedBuffer::new(ALIGN);
        file.read(buffer.slice(ALIGN))
    });
    match probe {
        Ok(_) => (
            true,
            "cold — every read opens or uses the file with O_DIRECT, which bypasses the page \
             cache, so each read goes to the device (a disk or hypervisor cache below may still \
             help)."
                .into(),
        ),
        Err(e) => (
            false,
            format!("{warm}: this file system refused O_DIRECT ({e})."),
        ),
    }
}

fn join<T: std::fmt::Display>(values: &[T]) -> String {
    values
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The factor that moves the points of n number `i` of `count` a little along the log ρ
/// axis, to keep their bars apart.
fn shift(i: usize, count: usize) -> f64 {
    1.06f64.powf(i as f64 - (count as f64 - 1.0) / 2.0)
}

/// The ρ axis of every figure: logarithmic, so that the seed's ρ = 0.001 … 0.1 stand apart.
fn rho_axis() -> Axis {
    Axis::log("ρ = m/n (bits per item)").range(7e-4, 15.0)
}

/// Figure 2: disk lookups done and expected.
fn reads_figure(cells: &[Cell], ns: &[u64]) -> Figure {
    let mut series = Vec::new();
    for (i, &n) in ns.iter().enumerate() {
        let reps = cells
            .iter()
            .find(|c| c.n == n)
            .map_or(1, |c| c.queries / (2 * n).max(1));
        let grid = super::plot::geometric(0.001, 10.0, 300);
        series.push(Series::curve(format!("theory, n = {n}"), i, grid, |rho| {
            let fpp = fpp_exact(num_bits(rho, n), num_hashes(rho), n);
            (reps * n) as f64 * (1.0 + fpp)
        }));
    }
    for (i, &n) in ns.iter().enumerate() {
        let points = cells
            .iter()
            .filter(|c| c.n == n)
            .map(|c| {
                let (low, high) = c.lookups_interval();
                Point::with_bar(c.rho * shift(i, ns.len()), c.lookups as f64, low, high)
            })
            .collect();
        series.push(Series::new(
            format!("measured, n = {n}"),
            Style::Measured,
            i,
            points,
        ));
    }
    Figure {
        name: "disk_reads".into(),
        title: "Seed 002, fig. 2: disk lookups done and expected".into(),
        caption:
            "Disk lookups (file reads) for 2n queries against ρ: measured (95% intervals from \
                  the false positives) over the expected n + n·FPP; without a filter every query \
                  would read the file (2n)."
                .into(),
        x: rho_axis(),
        y: Axis::linear("disk lookups").from(0.0),
        series,
        legend: Legend::UpperRight,
    }
}

/// Figure 3: the filter's size.
fn size_figure(cells: &[Cell], ns: &[u64]) -> Figure {
    let mut series = Vec::new();
    for (i, &n) in ns.iter().enumerate() {
        let grid = super::plot::geometric(0.001, 10.0, 200);
        series.push(Series::curve(
            format!("⌈m/64⌉·8, n = {n}"),
            i,
            grid,
            |rho| (num_bits(rho, n).div_ceil(64) * 8) as f64,
        ));
    }
    for (i, &n) in ns.iter().enumerate() {
        let points = cells
            .iter()
            .filter(|c| c.n == n)
            .map(|c| Point::new(c.rho, c.filter_bytes as f64))
            .collect();
        series.push(Series::new(
            format!("measured, n = {n}"),
            Style::Measured,
            i,
            points,
        ));
    }
    Figure {
        name: "disk_size".into(),
        title: "Seed 002, fig. 3: filter size".into(),
        caption: "The filter's memory in bytes against ρ for each n: proportional to ρ and to n."
            .into(),
        x: rho_axis(),
        y: Axis::log("filter size (bytes)"),
        series,
        legend: Legend::UpperLeft,
    }
}

/// Figure 5: mean time of a disk lookup (a) or of a filter query (b).
fn time_figure(cells: &[Cell], ns: &[u64], disk: bool) -> Figure {
    let mut series = Vec::new();
    for (i, &n) in ns.iter().enumerate() {
        let points = cells
            .iter()
            .filter(|c| c.n == n)
            .filter_map(|c| {
                let x = c.rho * shift(i, ns.len());
                if disk {
                    let count = c.lookup_seconds.len();
                    (count > 0).then(|| {
                        let (mean, sd) = c.lookup_us();
                        let half = 1.96 * sd / (count as f64).sqrt();
                        Point::with_bar(x, mean, (mean - half).max(0.0), mean + half)
                    })
                } else {
                    let (mean, sd) = c.filter_ns();
                    Some(Point::with_bar(x, mean, (mean - sd).max(0.0), mean + sd))
                }
            })
            .collect();
        series.push(Series::new(
            format!("n = {n}"),
            Style::MeasuredLine,
            i,
            points,
        ));
    }
    let (name, title, caption, y) =
        if disk {
            (
            "disk_time_lookup",
            "Seed 002, fig. 5a: mean time of a disk lookup",
            "Mean time to open and read the file for one \"maybe\" (95% interval of the mean), \
             against ρ; it grows with n (longer file), not with ρ.",
            Axis::linear("time per disk lookup (µs)").from(0.0).headroom(0.3),
        )
        } else {
            (
            "disk_time_filter",
            "Seed 002, fig. 5b: mean time of a filter query",
            "Mean time of one filter query (± sd over 3 timed passes of about 100 000 queries), \
             against ρ: tens of nanoseconds, thousands of times less than a disk lookup.",
            Axis::linear("time per filter query (ns)").from(0.0).headroom(0.3),
        )
        };
    Figure {
        name: name.into(),
        title: title.into(),
        caption: caption.into(),
        x: rho_axis(),
        y,
        series,
        legend: Legend::UpperLeft,
    }
}

/// Seed 002's statements on time and size, quoted, beside what this run measured.
fn seed_table(cells: &[Cell]) -> Table {
    let mut table = Table::new([
        "quantity",
        "seed 002 says",
        "bloomkit measured",
        "why they differ",
    ]);
    let lookups: Vec<f64> = cells
        .iter()
        .flat_map(|c| c.lookup_seconds.iter().copied())
        .collect();
    let (lookup_mean, _) = mean_sd(&lookups);
    let filter: Vec<f64> = cells
        .iter()
        .flat_map(|c| c.filter_passes.iter().copied())
        .collect();
    let (filter_mean, _) = mean_sd(&filter);
    let largest = cells.iter().max_by_key(|c| (c.n, c.m));
    table.push(vec![
        "time of a disk lookup".into(),
        "\"el tiempo promedio de lectura en disco medido en 10⁻¹ (s)\" (fig. 5a: the mean disk \
         read time, in units of 10⁻¹ s): about 0.1 s"
            .into(),
        format!("{} µs (mean over every lookup)", sig(lookup_mean * 1e6, 3)),
        "The seed starts a grep process per lookup (os.system: a shell, a fork and exec, then \
         the read); bloomkit opens and reads the file in-process. The process start, not the \
         disk, is most of the seed's 0.1 s."
            .into(),
    ]);
    table.push(vec![
        "time of a filter lookup".into(),
        "\"medido en 10⁻⁵ (s)\" (fig. 5b, in units of 10⁻⁵ s): about 10 µs".into(),
        format!("{} ns (mean over every pass)", sig(filter_mean, 3)),
        "Python hashes and indexes object by object through the interpreter; bloomkit is \
         compiled and derives all k positions from one 128-bit hash."
            .into(),
    ]);
    table.push(vec![
        "disk ÷ filter".into(),
        "about 10⁴".into(),
        sig(lookup_mean * 1e9 / filter_mean.max(1e-9), 3),
        "Both faster; the filter far more.".into(),
    ]);
    if let Some(c) = largest {
        table.push(vec![
            "filter size".into(),
            "\"el tamaño en 10⁴ bytes de los filtros de Bloom\" (fig. 3: sizes in units of 10⁴ \
             bytes, measured with objsize; no values in the text)"
                .into(),
            format!(
                "{} bytes at n = {}, ρ = {} (⌈m/64⌉·8: the bit array alone); the seed's largest, \
                 n = 10000 and ρ = 10, would be {} bytes",
                c.filter_bytes,
                c.n,
                c.rho,
                num_bits(10.0, 10_000).div_ceil(64) * 8
            ),
            "objsize counts the Python objects around the bits (object headers, the list or \
             bitarray object, the hash functions' state); bloomkit's memory is the bit array \
             plus a few words."
                .into(),
        ]);
    }
    table
}

fn display_table(cells: &[Cell]) -> Table {
    let mut table = Table::new([
        "n",
        "ρ",
        "m",
        "k",
        "queries",
        "disk lookups",
        "expected",
        "saved",
        "false pos.",
        "filter bytes",
        "filter query (ns)",
        "disk lookup (µs)",
        "KiB read / lookup",
        "deviation",
    ]);
    for c in cells {
        table.push(vec![
            c.n.to_string(),
            c.rho.to_string(),
            c.m.to_string(),
            c.k.to_string(),
            c.queries.to_string(),
            c.lookups.to_string(),
            format!("{:.1}", c.expected_lookups()),
            c.saved().to_string(),
            c.false_positives.to_string(),
            c.filter_bytes.to_string(),
            // Times vary from run to run: two significant digits.
            super::sig(c.filter_ns().0, 2),
            super::sig(c.lookup_us().0, 2),
            format!(
                "{:.1}",
                c.bytes_read as f64 / 1024.0 / c.lookups.max(1) as f64
            ),
            c.check().cell(),
        ]);
    }
    table
}

fn csv_table(cells: &[Cell]) -> Table {
    let mut table = Table::new([
        "n",
        "rho",
        "m",
        "k",
        "queries",
        "present",
        "disk_lookups",
        "expected_lookups",
        "lookups_low",
        "lookups_high",
        "reads_saved",
        "false_positives",
        "theory_fpp",
        "filter_bytes",
        "filter_query_ns",
        "filter_query_ns_sd",
        "disk_lookup_us",
        "disk_lookup_us_sd",
        "bytes_read",
    ]);
    for c in cells {
        let (low, high) = c.lookups_interval();
        let (fq, fq_sd) = c.filter_ns();
        let (dl, dl_sd) = c.lookup_us();
        table.push(vec![
            c.n.to_string(),
            c.rho.to_string(),
            c.m.to_string(),
            c.k.to_string(),
            c.queries.to_string(),
            c.present.to_string(),
            c.lookups.to_string(),
            c.expected_lookups().to_string(),
            low.to_string(),
            high.to_string(),
            c.saved().to_string(),
            c.false_positives.to_string(),
            c.fpp().to_string(),
            c.filter_bytes.to_string(),
            fq.to_string(),
            fq_sd.to_string(),
            dl.to_string(),
            dl_sd.to_string(),
            c.bytes_read.to_string(),
        ]);
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups_find_exactly_the_names_in_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("users.txt");
        let names = corpus::random_names(3_000, 1);
        write_users(&path, &names[..2_000], 2).unwrap();
        for direct in [false, true] {
            let (direct, _) = if direct {
                choose_cache(CacheArg::Direct, &path)
            } else {
                (false, String::new())
            };
            let mut file = UserFile {
                path: path.clone(),
                direct,
                buffer: AlignedBuffer::new(CHUNK),
                carry: Vec::new(),
            };
            for (i, name) in names.iter().enumerate().step_by(37) {
                let lookup = file.lookup(name).unwrap();
                assert_eq!(lookup.found, i < 2_000, "{i} direct {direct}");
                assert!(lookup.bytes > 0);
            }
            // A prefix of a name is not the name.
            let prefix = &names[0][..names[0].len() - 1];
            assert!(!file.lookup(prefix).unwrap().found);
        }
    }

    #[test]
    fn aligned_buffers_are_aligned() {
        for _ in 0..4 {
            let mut buffer = AlignedBuffer::new(100);
            assert_eq!(buffer.slice(100).as_ptr() as usize % ALIGN, 0);
        }
    }
}
