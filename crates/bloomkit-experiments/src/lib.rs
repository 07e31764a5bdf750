//! The seed studies, rerun on the `bloomkit` library's filters: the library behind
//! `bloomkit experiment` (the CLI parses [`ExperimentCommand`] and calls [`run`]).
//!
//! Each study is a subcommand of `bloomkit experiment` with its own module. It returns a
//! [`report::Report`]: tables (printed on standard output; with `--csv FILE` the main one
//! is also written as CSV), figures (with `--out DIR`, every table is written there as CSV
//! and every figure as SVG and PNG, see [`plot`]) and notes on how the measurements compare
//! with theory. `bloomkit experiment all --out DIR` runs them all and writes
//! `DIR/index.html`.
//!
//! Every study takes the same common options ([`StudyArgs`]): `--seed N` (everything random
//! is drawn from it, so counts and rates repeat exactly), `--full` for the seeds' own sizes
//! (default sizes run in seconds), and a hidden `--tiny` for the tests.
//!
//! A new study adds a module with `study(&Args) -> Result<Report>`, a variant to
//! [`ExperimentCommand`] and a line to [`all`].
//!
//! What the studies write is generated output: `scripts/run` writes `report/`, which git
//! ignores.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod all;
pub mod bloomier;
pub mod claims;
pub mod compressed;
pub mod corpus;
pub mod deletion;
pub mod disk;
pub mod fpr;
pub mod generalized;
pub mod hashing;
pub mod kinds;
pub mod overview;
pub mod plot;
pub mod report;
pub mod rho;
pub mod robust;
pub mod spectral;
pub mod spellcheck;
pub mod ssd;
pub mod sstable;
pub mod summary_cache;
pub mod timing;
pub mod variants;
pub mod verdict;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use bloomkit::registry::{parse_whole_number, WholeNumberError};
use bloomkit::{HashFunction, IndexScheme};
use clap::{Args, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};

use report::Report;

/// The studies.
#[derive(Debug, Subcommand)]
pub enum ExperimentCommand {
    /// Seed 000: measured against calibrated false-positive rates, on a word list and its
    /// Caesar-shifted words.
    Fpr(fpr::FprArgs),
    /// Seed 002, figures 1 and 4: the false-positive rate against ρ = m/n, measured over
    /// repetitions, over its theoretical curve.
    Rho(rho::RhoArgs),
    /// Seed 002, figures 2, 3 and 5: the forgotten-password scenario, a filter in front of
    /// a file on disk: disk reads done and saved, filter size, query times.
    Disk(disk::DiskArgs),
    /// Seed 004: insert time per item against the number of items, for every kind.
    Timing(timing::TimingArgs),
    /// Seed 004: false-positive rate against items inserted, every kind side by side,
    /// filled to twice its capacity.
    Variants(variants::VariantsArgs),
    /// Removal: deletable fraction of the deletable filter, false negatives after removes,
    /// counter saturation.
    Deletion(deletion::DeletionArgs),
    /// Hashing: seeded k hashes against double hashing, MurmurHash3 against XXH3: false
    /// positives down to ε = 10⁻⁶ and the cost per item.
    Hashing(hashing::HashingArgs),
    /// Seed 003: its quantitative claims (bits per item, 120 MB for 10⁸ URLs, counting
    /// filters' memory, 4-bit counter overflow), computed.
    Claims(claims::ClaimsArgs),
    /// The seeds' Bigtable example: sorted runs on disk with a filter each; disk reads per
    /// lookup with and without the filters.
    Sstable(sstable::SstableArgs),
    /// Spell checking (Bloom 1970; seeds 001, 004): a dictionary filter checks a text with
    /// misspellings; those it finds and those it lets through against ε.
    Spellcheck(spellcheck::SpellcheckArgs),
    /// Summary Cache (Fan et al.; seeds 001, 003, 004): proxies exchange counting-filter
    /// summaries in the file format; false, missed and remote hits and bytes exchanged
    /// against URL lists and ICP.
    SummaryCache(summary_cache::SummaryCacheArgs),
    /// The Bloomier filter: bits per key against 1.23·w, build time, and the
    /// false-positive rate of its "not in set" check against 2^−c.
    Bloomier(bloomier::BloomierArgs),
    /// The compressed Bloom filter: transmitted bits per item against ε — compressed,
    /// uncompressed and the entropy bound — and Mitzenmacher's tables on real filters.
    Compressed(compressed::CompressedArgs),
    /// Seed 004: robustBF against the classic filter at equal ε — memory and false
    /// positives, against the paper's claims.
    Robust(robust::RobustArgs),
    /// Seed 001: the buffered Bloom filter on SSD — page reads and writes per insert
    /// against the insert buffer, per query.
    Ssd(ssd::SsdArgs),
    /// Issue 14: a spectral Bloom filter's wrong frequency estimates on Zipf streams —
    /// minimum selection, minimal increase, recurring minimum — over theory.
    Spectral(spectral::SpectralArgs),
    /// Issue 14: a generalized Bloom filter's false-positive rate, bounded at any fill, and
    /// its false-negative rate, against items inserted and theory.
    Generalized(generalized::GeneralizedArgs),
    /// Every study, into DIR (CSV, SVG, PNG) with DIR/index.html showing them all.
    All(all::AllArgs),
}

/// Runs a study (or all of them).
pub fn run(command: ExperimentCommand) -> Result<()> {
    if let Some(common) = command.common() {
        common.check_outputs()?;
    }
    match command {
        ExperimentCommand::Fpr(args) => fpr::run(args),
        ExperimentCommand::Rho(args) => finish(rho::study(&args)?, &args.common),
        ExperimentCommand::Disk(args) => finish(disk::study(&args)?, &args.common),
        ExperimentCommand::Timing(args) => finish(timing::study(&args)?, &args.common),
        ExperimentCommand::Variants(args) => finish(variants::study(&args)?, &args.common),
        ExperimentCommand::Deletion(args) => finish(deletion::study(&args)?, &args.common),
        ExperimentCommand::Hashing(args) => finish(hashing::study(&args)?, &args.common),
        ExperimentCommand::Sstable(args) => finish(sstable::study(&args)?, &args.common),
        ExperimentCommand::Claims(args) => finish(claims::study(&args)?, &args.common),
        ExperimentCommand::Spellcheck(args) => finish(spellcheck::study(&args)?, &args.common),
        ExperimentCommand::SummaryCache(args) => finish(summary_cache::study(&args)?, &args.common),
        ExperimentCommand::Bloomier(args) => finish(bloomier::study(&args)?, &args.common),
        ExperimentCommand::Compressed(args) => finish(compressed::study(&args)?, &args.common),
        ExperimentCommand::Robust(args) => finish(robust::study(&args)?, &args.common),
        ExperimentCommand::Ssd(args) => finish(ssd::study(&args)?, &args.common),
        ExperimentCommand::Spectral(args) => finish(spectral::study(&args)?, &args.common),
        ExperimentCommand::Generalized(args) => finish(generalized::study(&args)?, &args.common),
        ExperimentCommand::All(args) => all::run(args),
    }
}

impl ExperimentCommand {
    /// The options every single study takes (`all` has its own).
    fn common(&self) -> Option<&StudyArgs> {
        Some(match self {
            ExperimentCommand::Fpr(args) => &args.common,
            ExperimentCommand::Rho(args) => &args.common,
            ExperimentCommand::Disk(args) => &args.common,
            ExperimentCommand::Timing(args) => &args.common,
            ExperimentCommand::Variants(args) => &args.common,
            ExperimentCommand::Deletion(args) => &args.common,
            ExperimentCommand::Hashing(args) => &args.common,
            ExperimentCommand::Sstable(args) => &args.common,
            ExperimentCommand::Claims(args) => &args.common,
            ExperimentCommand::Spellcheck(args) => &args.common,
            ExperimentCommand::SummaryCache(args) => &args.common,
            ExperimentCommand::Bloomier(args) => &args.common,
            ExperimentCommand::Compressed(args) => &args.common,
            ExperimentCommand::Robust(args) => &args.common,
            ExperimentCommand::Ssd(args) => &args.common,
            ExperimentCommand::Spectral(args) => &args.common,
            ExperimentCommand::Generalized(args) => &args.common,
            ExperimentCommand::All(_) => return None,
        })
    }
}

/// How big a study runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    /// For the tests: a second or less.
    Tiny,
    /// The default: seconds, enough for the figures to be clear.
    Default,
    /// The seeds' own sizes (`--full`): minutes.
    Full,
}

impl Size {
    /// One of three values, by size.
    pub fn pick<T>(self, tiny: T, default: T, full: T) -> T {
        match self {
            Size::Tiny => tiny,
            Size::Default => default,
            Size::Full => full,
        }
    }
}

/// The 128-bit hash function, as named on the command line (`experiment fpr --hash`, and
/// the CLI's `create` and `build`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum HashArg {
    /// MurmurHash3 x64_128 (the seeds' hash).
    #[default]
    Murmur3,
    /// XXH3-128 (faster on long items).
    Xxh3,
    /// fold2-128: two multiply-folds, the cheapest for integers and short items (the
    /// library's default for the blocked kind).
    Fold2,
}

impl From<HashArg> for HashFunction {
    fn from(arg: HashArg) -> Self {
        match arg {
            HashArg::Murmur3 => HashFunction::Murmur3,
            HashArg::Xxh3 => HashFunction::Xxh3,
            HashArg::Fold2 => HashFunction::Fold2,
        }
    }
}

/// How the k positions of an item are derived, as named on the command line
/// (`experiment fpr --scheme`, and the CLI's `create` and `build`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum SchemeArg {
    /// One digest, k positions by enhanced double hashing.
    #[default]
    Double,
    /// k independent seeded digests (the seeds' construction).
    Seeded,
}

impl From<SchemeArg> for IndexScheme {
    fn from(arg: SchemeArg) -> Self {
        match arg {
            SchemeArg::Double => IndexScheme::EnhancedDoubleHashing,
            SchemeArg::Seeded => IndexScheme::SeededHashes,
        }
    }
}

/// The value parser of every option that takes a count or another whole number, here and
/// in the `bloomkit` command line (`-n`, `-m`, `--seed`, `--limit`, …): the library's
/// [`parse_whole_number`], so that `1e6`, `2.5e3` and `1_000_000` are read as the kinds'
/// own options read them, and `1.5`, `1e-3`, `-1` or `1e400` are refused saying why and
/// what the option takes (the error's one message).
///
/// ```
/// use bloomkit_experiments::{count, count_u32};
/// assert_eq!(count("1e6"), Ok(1_000_000));
/// assert_eq!(count_u32("1_000"), Ok(1_000));
/// assert!(count_u32("5e9").unwrap_err().to_string().starts_with("5e9 is more than 4294967295"));
/// ```
///
/// [`parse_whole_number`]: bloomkit::registry::parse_whole_number
pub fn count(text: &str) -> Result<u64, WholeNumberError> {
    parse_whole_number(text, u64::MAX)
}

/// [`count`] for the options whose value is at most 2³² − 1 (`-k`, `--page-size`, …).
pub fn count_u32(text: &str) -> Result<u32, WholeNumberError> {
    parse_whole_number(text, u32::MAX.into()).map(|n| n as u32)
}

/// Options every study has.
#[derive(Debug, Clone, Default, Args)]
pub struct StudyArgs {
    /// Also write the main results table to FILE as CSV (with a header row).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,

    /// Write every table as CSV and every figure as SVG and PNG into DIR (created if
    /// needed).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Run at the seed papers' sizes (minutes instead of seconds).
    #[arg(long, conflicts_with = "tiny")]
    pub full: bool,

    /// Run at a tiny size (for tests; the figures are not meaningful).
    #[arg(long, hide = true)]
    pub tiny: bool,

    /// The seed every random choice is drawn from.
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = count,
          allow_negative_numbers = true)]
    pub seed: u64,

    /// A TrueType font for the figures' text [default: DejaVu Sans, or $BLOOMKIT_FONT].
    #[arg(long, value_name = "FILE")]
    pub font: Option<PathBuf>,
}

impl StudyArgs {
    /// Checks, before a study runs (minutes with `--full`), what would otherwise fail only
    /// once its results are ready to be written: `--out` must be a directory that can be
    /// created and written in, `--csv` must not name a directory, and a `--font` given for
    /// the figures must load.
    pub fn check_outputs(&self) -> Result<()> {
        if let Some(csv) = self.csv.as_deref().filter(|csv| csv.is_dir()) {
            anyhow::bail!(
                "--csv {}: that is a directory; name the CSV file to write",
                csv.display()
            );
        }
        if let Some(dir) = &self.out {
            if dir.exists() && !dir.is_dir() {
                anyhow::bail!(
                    "--out {}: that is a file, not a directory; name a directory for the \
                     CSV files and figures (it is created if needed)",
                    dir.display()
                );
            }
            std::fs::create_dir_all(dir)
                .with_context(|| format!("--out {}: cannot create the directory", dir.display()))?;
            tempfile::tempfile_in(dir).with_context(|| {
                format!("--out {}: cannot write in the directory", dir.display())
            })?;
            plot::load_font(self.font.as_deref())?;
        }
        Ok(())
    }

    /// The size chosen.
    pub fn size(&self) -> Size {
        if self.tiny {
            Size::Tiny
        } else if self.full {
            Size::Full
        } else {
            Size::Default
        }
    }

    /// The command that runs `study` with these options and writes into `--out`.
    pub fn command(&self, study: &str) -> String {
        let mut command = format!("bloomkit experiment {study}");
        match self.size() {
            Size::Tiny => command.push_str(" --tiny"),
            Size::Full => command.push_str(" --full"),
            Size::Default => {}
        }
        if self.seed != 0 {
            let _ = write!(command, " --seed {}", self.seed);
        }
        if let Some(dir) = &self.out {
            let _ = write!(
                command,
                " --out {}",
                shell_quote(&dir.display().to_string())
            );
        }
        command
    }
}

/// A word quoted for a POSIX shell when it needs to be.
pub fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// The command line this process was started with, as one would type it.
pub fn this_command() -> String {
    let mut words: Vec<String> = std::env::args().map(|a| shell_quote(&a)).collect();
    if let Some(first) = words.first_mut() {
        let name = Path::new(first.as_str())
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name == "bloomkit" {
            *first = name;
        }
    }
    words.join(" ")
}

/// Prints a study's report and writes its files, as a standalone subcommand does.
pub fn finish(mut report: Report, common: &StudyArgs) -> Result<()> {
    report.command = this_command();
    report.print()?;
    let written = report.write(
        common.csv.as_deref(),
        common.out.as_deref(),
        common.font.as_deref(),
    )?;
    let mut err = std::io::stderr().lock();
    use std::io::Write as _;
    for path in written.csv.iter().chain(&written.figures) {
        writeln!(err, "wrote {}", path.display())?;
    }
    if let Some(why) = written.figures_skipped {
        writeln!(err, "warning: {why}")?;
    } else if common.out.is_none() && !report.figures.is_empty() {
        writeln!(
            err,
            "({} figure(s) not drawn: add --out DIR to write them with the CSV files)",
            report.figures.len()
        )?;
    }
    Ok(())
}

/// A progress bar on standard error (hidden when it is not a terminal), labelled `label`.
pub fn progress(total: u64, label: &str) -> ProgressBar {
    labelled_progress(total, label, 22)
}

/// A progress bar with a narrower label, for the fpr study's steps (`ε = 0.01`).
pub fn step_progress(total: u64, label: &str) -> ProgressBar {
    labelled_progress(total, label, 14)
}

/// A progress bar whose label is right-aligned in `width` columns.
fn labelled_progress(total: u64, label: &str, width: usize) -> ProgressBar {
    let bar = ProgressBar::new(total);
    let template = format!("{{msg:>{width}}} [{{bar:40}}] {{pos}}/{{len}} ({{eta}})");
    let style = ProgressStyle::with_template(&template)
        .map(|s| s.progress_chars("=> "))
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar.set_message(label.to_owned());
    bar
}

/// A stopwatch for a report's `seconds`.
pub fn stopwatch() -> Instant {
    Instant::now()
}

/// Mean and sample standard deviation (0 for fewer than two values).
pub fn mean_sd(values: &[f64]) -> (f64, f64) {
    if values.is_empty() {
        return (0.0, 0.0);
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    if values.len() < 2 {
        return (mean, 0.0);
    }
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var.sqrt())
}

/// `x` written with `digits` significant digits, in scientific notation when small.
pub fn sig(x: f64, digits: usize) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let magnitude = x.abs().log10().floor() as i32;
    if !(-3..6).contains(&magnitude) {
        format!("{x:.prec$e}", prec = digits.saturating_sub(1))
    } else {
        let decimals = (digits as i32 - 1 - magnitude).max(0) as usize;
        format!("{x:.decimals$}")
    }
}

/// A requested ε as a table shows it, in the one notation `sig` uses for rates: decimals
/// from 0.001 up (0.2, 0.01, 0.001), powers of ten below (1e-4, 1e-6; 2.5e-5), so that an
/// ε column never mixes 0.000001 with 1.00e-4.
pub fn eps(x: f64) -> String {
    if x >= 1e-3 || x <= 0.0 || !x.is_finite() {
        x.to_string()
    } else {
        format!("{x:e}")
    }
}

/// Whole numbers of five digits or more in `text` grouped by thousands with a narrow
/// no-break space (U+202F, the SI's thin space): `428006` → `428 006`. Digits that are a
/// decimal fraction, an exponent or part of a word (`0.000012345`, `1e12345`, `x86_64`,
/// `02f71fb1b6dcd284`) are left alone; four-digit numbers (years, 2048) too.
pub fn group_thousands(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + 8);
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_ascii_digit() {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && chars[i].is_ascii_digit() {
            i += 1;
        }
        let run = &chars[start..i];
        let word = |c: char| c.is_alphanumeric() || c == '_';
        let before = start.checked_sub(1).map(|b| chars[b]);
        let exponent = before.is_some_and(|c| c == '+' || c == '-')
            && start >= 2
            && matches!(chars[start - 2], 'e' | 'E');
        let joined = before.is_some_and(|c| word(c) || matches!(c, '.' | ',' | '^' | '/'))
            || exponent
            || chars.get(i).is_some_and(|&c| word(c));
        if run.len() < 5 || joined {
            out.extend(run);
            continue;
        }
        for (j, &d) in run.iter().enumerate() {
            if j > 0 && (run.len() - j).is_multiple_of(3) {
                out.push('\u{202F}');
            }
            out.push(d);
        }
    }
    out
}

/// A table of results: a header row and rows of already formatted cells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    /// The column titles.
    pub header: Vec<String>,
    /// The rows; each has as many cells as the header.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// An empty table with these column titles.
    pub fn new<S: Into<String>>(header: impl IntoIterator<Item = S>) -> Self {
        Table {
            header: header.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row.
    pub fn push(&mut self, row: Vec<String>) {
        debug_assert_eq!(row.len(), self.header.len());
        self.rows.push(row);
    }

    /// The table as aligned text: right-aligned columns separated by two spaces, and a rule
    /// under the header.
    pub fn render(&self) -> String {
        let widths: Vec<usize> = (0..self.header.len())
            .map(|c| {
                std::iter::once(&self.header[c])
                    .chain(self.rows.iter().map(|row| &row[c]))
                    .map(|cell| cell.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut text = String::new();
        let mut line = |cells: &[String]| {
            let padded: Vec<String> = cells
                .iter()
                .zip(&widths)
                .map(|(cell, &width)| format!("{cell:>width$}"))
                .collect();
            let _ = writeln!(text, "{}", padded.join("  ").trim_end());
        };
        line(&self.header);
        line(&widths.iter().map(|&w| "-".repeat(w)).collect::<Vec<_>>());
        for row in &self.rows {
            line(row);
        }
        text
    }

    /// The table as CSV: a header row, then the rows, cells quoted where needed (RFC 4180,
    /// with `\n` line ends).
    pub fn to_csv(&self) -> String {
        let mut csv = String::new();
        for row in std::iter::once(&self.header).chain(&self.rows) {
            let cells: Vec<String> = row.iter().map(|cell| csv_cell(cell)).collect();
            csv.push_str(&cells.join(","));
            csv.push('\n');
        }
        csv
    }

    /// Writes the table as CSV to `path`.
    pub fn write_csv(&self, path: &Path) -> Result<()> {
        std::fs::write(path, self.to_csv()).with_context(|| format!("writing {}", path.display()))
    }
}

/// A CSV cell, quoted when it holds a comma, a quote or a line break.
fn csv_cell(cell: &str) -> String {
    if cell.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", cell.replace('"', "\"\""))
    } else {
        cell.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let mut table = Table::new(["name", "value"]);
        table.push(vec!["a".into(), "1".into()]);
        table.push(vec!["b, \"c\"".into(), "22".into()]);
        table
    }

    #[test]
    fn csv_quotes_only_where_needed() {
        assert_eq!(sample().to_csv(), "name,value\na,1\n\"b, \"\"c\"\"\",22\n");
    }

    #[test]
    fn shell_words_are_quoted_only_when_needed() {
        assert_eq!(shell_quote("report/dir-1"), "report/dir-1");
        assert_eq!(shell_quote("my report"), "'my report'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
    }

    #[test]
    fn mean_and_sd() {
        assert_eq!(mean_sd(&[]), (0.0, 0.0));
        assert_eq!(mean_sd(&[2.0]), (2.0, 0.0));
        let (m, s) = mean_sd(&[1.0, 2.0, 3.0]);
        assert_eq!(m, 2.0);
        assert!((s - 1.0).abs() < 1e-12);
    }

    #[test]
    fn eps_uses_one_notation() {
        let shown: Vec<String> = [0.2, 0.01, 0.001, 1e-4, 1e-6, 2.5e-5].map(eps).to_vec();
        assert_eq!(shown, ["0.2", "0.01", "0.001", "1e-4", "1e-6", "2.5e-5"]);
    }

    #[test]
    fn thousands_are_grouped_in_whole_numbers_only() {
        let n = '\u{202F}';
        assert_eq!(
            group_thousands("428006 (86.7%)"),
            format!("428{n}006 (86.7%)")
        );
        assert_eq!(group_thousands("1113975"), format!("1{n}113{n}975"));
        assert_eq!(group_thousands("12345.25"), format!("12{n}345.25"));
        for same in [
            "2048",
            "0.000012345",
            "1e-12345",
            "x86_64",
            "02f71fb1b6dcd284",
            "a12345",
        ] {
            assert_eq!(group_thousands(same), same);
        }
    }

    #[test]
    fn significant_digits() {
        assert_eq!(sig(0.012345, 3), "0.0123");
        assert_eq!(sig(123.456, 3), "123");
        assert_eq!(sig(1.5e-5, 2), "1.5e-5");
    }

    #[test]
    fn text_columns_are_aligned() {
        let text = sample().render();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "  name  value");
        assert_eq!(lines[1], "------  -----");
        assert_eq!(lines[2], "     a      1");
        assert_eq!(lines[3], "b, \"c\"     22");
    }
}
