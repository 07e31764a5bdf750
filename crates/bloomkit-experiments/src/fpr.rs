//! Seed 000's study: does a Bloom filter sized for ε show a false-positive rate of ε?
//!
//! For each ε in [`FPPS`]: size a filter for the word list, insert every word, make sure
//! each is found (a miss would break the filter's one promise, so it aborts the study),
//! then ask for every word's Caesar shift by 2 that is not itself a word, and count the
//! "maybe"s. The rate is false positives ÷ negatives tested (the seed divided by the
//! number of words instead), judged against the theoretical
//! `(1 − (1 − 1/m)^(kn))^k` with a 95% Wilson interval.

use std::collections::HashSet;
use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Result};
use bloomkit::params::{fpp_exact, optimal_num_bits, optimal_num_hashes};
use bloomkit::stats::{wilson_interval, Z_95};
use bloomkit::{BloomFilter, Hashing};
use clap::Args;

use super::plot::{self, Axis, Figure, Legend, Point, Series, Style};
use super::report::{Report, ReportTable};
use super::{agreement, corpus, step_progress, HashArg, SchemeArg, Size, StudyArgs, Table};

/// The false-positive probabilities of the seed's table.
pub const FPPS: [f64; 5] = [0.2, 0.05, 0.01, 0.001, 0.0001];

/// The Caesar shift that turns words into negatives, as in the seed.
pub const SHIFT: u8 = 2;

/// How many steps pass between two moves of a progress bar.
const PROGRESS_STEP: u64 = 1 << 12;

/// How many words `--tiny` keeps.
const TINY_WORDS: usize = 2_000;

/// Arguments of `bloomkit experiment fpr`.
#[derive(Debug, Args)]
pub struct FprArgs {
    /// A word list, one word per line [default: a built-in corpus of 58 110 pseudo-words].
    #[arg(long, value_name = "FILE")]
    pub words: Option<PathBuf>,

    /// The options every study has.
    #[command(flatten)]
    pub common: StudyArgs,

    /// How the k bit positions are derived from a word.
    #[arg(long, value_enum, default_value_t)]
    pub scheme: SchemeArg,

    /// The 128-bit hash function.
    #[arg(long = "hash", value_enum, default_value_t)]
    pub function: HashArg,

    /// Use only the first N words (to keep tests fast).
    #[arg(long, value_name = "N", hide = true)]
    pub limit: Option<usize>,
}

impl FprArgs {
    /// The study's defaults with these common options.
    pub fn with_common(common: StudyArgs) -> Self {
        FprArgs {
            words: None,
            common,
            scheme: SchemeArg::default(),
            function: HashArg::default(),
            limit: None,
        }
    }
}

/// What one filter showed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measurement {
    /// ε, the probability the filter was sized for.
    pub fpp: f64,
    /// m.
    pub num_bits: u64,
    /// k.
    pub num_hashes: u32,
    /// n, the words inserted.
    pub words: u64,
    /// Negatives the filter answered "maybe" for.
    pub false_positives: u64,
    /// Negatives asked.
    pub negatives: u64,
}

impl Measurement {
    /// The measured false-positive rate: false positives ÷ negatives tested.
    pub fn measured(&self) -> f64 {
        if self.negatives == 0 {
            0.0
        } else {
            self.false_positives as f64 / self.negatives as f64
        }
    }

    /// The 95% Wilson interval of the measured rate.
    pub fn interval(&self) -> (f64, f64) {
        wilson_interval(self.false_positives, self.negatives, Z_95)
    }

    /// The theoretical rate of a filter of these m and k holding n items.
    pub fn theory(&self) -> f64 {
        fpp_exact(self.num_bits, self.num_hashes, self.words)
    }

    /// Whether the theoretical rate lies inside the 95% interval.
    pub fn theory_inside(&self) -> bool {
        let (low, high) = self.interval();
        (low..=high).contains(&self.theory())
    }
}

/// The study's inputs and measurements.
struct Run {
    facts: Vec<String>,
    measurements: Vec<Measurement>,
}

/// Runs the study and prints the seed's blocks and the table.
pub fn run(args: FprArgs) -> Result<()> {
    let start = super::stopwatch();
    let run = measure_all(&args)?;
    // The seed's blocks first; the report after them repeats the facts with the table.
    let mut out = std::io::stdout().lock();
    for m in &run.measurements {
        write!(
            out,
            "{}\n{}\n",
            parameters_block(m.words, m.fpp, m.num_hashes, m.num_bits),
            results_block(m.false_positives, m.measured())
        )?;
    }
    drop(out);
    let mut report = to_report(run, &args);
    report.seconds = start.elapsed().as_secs_f64();
    super::finish(report, &args.common)
}

/// Runs the study and returns its report.
pub fn study(args: &FprArgs) -> Result<Report> {
    let start = super::stopwatch();
    let run = measure_all(args)?;
    let mut report = to_report(run, args);
    report.seconds = start.elapsed().as_secs_f64();
    Ok(report)
}

fn measure_all(args: &FprArgs) -> Result<Run> {
    let (mut words, source) = match &args.words {
        Some(path) => (corpus::load_words(path)?, path.display().to_string()),
        None => (
            corpus::builtin(),
            "built-in corpus of pseudo-words".to_owned(),
        ),
    };
    let limit = match (args.limit, args.common.size()) {
        (Some(0), _) => bail!("--limit must be at least 1"),
        (Some(limit), _) => Some(limit),
        (None, Size::Tiny) => Some(TINY_WORDS),
        (None, _) => None,
    };
    if let Some(limit) = limit {
        words.truncate(limit);
    }
    let hashing = Hashing {
        function: args.function.into(),
        scheme: args.scheme.into(),
        seed: args.common.seed,
    };
    let negatives = negatives(&words);
    let facts = vec![
        format!("Words: {} distinct, from {source}", words.len()),
        format!(
            "Negatives: {} (Caesar shift by {SHIFT} of each word, less those that are words)",
            negatives.len()
        ),
        format!(
            "Hashing: {}, {}, seed {}",
            hashing.function.name(),
            hashing.scheme.name(),
            hashing.seed
        ),
    ];
    let mut measurements = Vec::with_capacity(FPPS.len());
    for fpp in FPPS {
        measurements.push(measure(&words, &negatives, fpp, hashing)?);
    }
    Ok(Run {
        facts,
        measurements,
    })
}

fn to_report(run: Run, args: &FprArgs) -> Report {
    let ms = &run.measurements;
    let n = ms.first().map_or(1, |m| m.words);
    let inside = ms.iter().filter(|m| m.theory_inside()).count();
    let grid = plot::geometric(5e-5, 0.5, 60);
    let figure = Figure {
        name: "fpr_measured".into(),
        title: format!("Seed 000: measured against requested ε (n = {n} words)"),
        caption: "Measured false-positive rate (95% Wilson intervals) against the ε the filter \
                  was sized for, over the exact theory for the m and k that sizing gives."
            .into(),
        x: Axis::log("requested ε"),
        y: Axis::log("false-positive rate"),
        series: vec![
            Series::curve("requested = measured", 7, grid.iter().copied(), |e| e)
                .with_style(Style::Reference),
            Series::curve(
                "theory (1 − (1 − 1/m)^kn)^k",
                0,
                grid.iter().copied(),
                |e| {
                    optimal_num_bits(n, e)
                        .map(|m| fpp_exact(m, optimal_num_hashes(m, n), n))
                        .unwrap_or(f64::NAN)
                },
            ),
            Series::new(
                "measured",
                Style::Measured,
                0,
                ms.iter()
                    .map(|m| {
                        let (low, high) = m.interval();
                        Point::with_bar(m.fpp, m.measured(), low, high)
                    })
                    .collect(),
            ),
        ],
        legend: Legend::UpperLeft,
    };
    let theory_ratio = |e: f64| {
        optimal_num_bits(n, e)
            .map(|m| fpp_exact(m, optimal_num_hashes(m, n), n) / e)
            .unwrap_or(f64::NAN)
    };
    let ratio = Figure {
        name: "fpr_ratio".into(),
        title: "Seed 000: measured ÷ requested ε".into(),
        caption: "The same measurements as a ratio to the requested ε (95% Wilson intervals): \
                  the theory line wiggles because k is rounded to an integer and m up."
            .into(),
        x: Axis::log("requested ε"),
        y: Axis::linear("false-positive rate ÷ requested ε").from(0.0),
        series: vec![
            Series::curve("requested", 7, grid.iter().copied(), |_| 1.0)
                .with_style(Style::Reference),
            Series::curve("theory ÷ ε", 0, grid.iter().copied(), theory_ratio),
            Series::new(
                "measured ÷ ε",
                Style::Measured,
                0,
                ms.iter()
                    .map(|m| {
                        let (low, high) = m.interval();
                        Point::with_bar(m.fpp, m.measured() / m.fpp, low / m.fpp, high / m.fpp)
                    })
                    .collect(),
            ),
        ],
        legend: Legend::UpperLeft,
    };
    Report {
        study: "fpr",
        title: "fpr — seed 000: measured against requested false-positive rate".into(),
        summary: "A Bloom filter sized for the word list at each ε, every word inserted; the \
                  Caesar shifts by 2 that are not words are asked, and the \"maybe\"s counted."
            .into(),
        command: args.common.command("fpr"),
        facts: run.facts,
        tables: vec![ReportTable {
            name: "main".into(),
            title: "False positives among the shifted words, per requested ε".into(),
            display: display_table(ms),
            csv: csv_table(ms),
        }],
        figures: vec![figure, ratio],
        notes: vec![agreement(
            "Measured rate against (1 − (1 − 1/m)^kn)^k",
            inside,
            ms.len(),
            "The word list or the hashing breaks the model's assumption of independent, \
             uniform positions.",
        )],
        seconds: 0.0,
    }
}

/// The words' Caesar shifts that are not themselves words: items certainly not inserted.
/// (The shift is a bijection, so distinct words give distinct negatives.)
pub fn negatives(words: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let set: HashSet<&[u8]> = words.iter().map(Vec::as_slice).collect();
    words
        .iter()
        .map(|w| corpus::caesar(w, SHIFT))
        .filter(|n| !set.contains(n.as_slice()))
        .collect()
}

/// Builds a filter for `words` at `fpp`, checks that it finds them all, and counts its
/// false positives on `negatives`.
pub fn measure(
    words: &[Vec<u8>],
    negatives: &[Vec<u8>],
    fpp: f64,
    hashing: Hashing,
) -> Result<Measurement> {
    let mut filter = BloomFilter::builder()
        .capacity(words.len() as u64)
        .fpp(fpp)
        .hash_function(hashing.function)
        .index_scheme(hashing.scheme)
        .seed(hashing.seed)
        .build()?;
    let steps = 2 * words.len() as u64 + negatives.len() as u64;
    let progress = step_progress(steps, &format!("ε = {fpp}"));
    let mut step = 0u64;
    let mut advance = || {
        step += 1;
        if step % PROGRESS_STEP == 0 {
            progress.set_position(step);
        }
    };

    for word in words {
        filter.insert(word);
        advance();
    }
    for word in words {
        if !filter.contains(word) {
            progress.finish_and_clear();
            bail!(
                "broken invariant: the filter for ε = {fpp} does not find the inserted word {:?}",
                String::from_utf8_lossy(word)
            );
        }
        advance();
    }
    let mut false_positives = 0u64;
    for negative in negatives {
        false_positives += u64::from(filter.contains(negative));
        advance();
    }
    progress.finish_and_clear();

    Ok(Measurement {
        fpp,
        num_bits: filter.num_bits(),
        num_hashes: filter.num_hashes(),
        words: words.len() as u64,
        false_positives,
        negatives: negatives.len() as u64,
    })
}

/// The seed's parameter block: n, ε, k and m of a Bloom filter (also `bloomkit info`'s
/// first lines for the classic kinds).
pub fn parameters_block(capacity: u64, fpp: f64, num_hashes: u32, num_bits: u64) -> String {
    format!(
        "----- PARAMETERS -----\n\
         Number of elements in filter:          {capacity}\n\
         Calibrated probability of false positives: {fpp:.6}\n\
         Amount of hash functions:             {num_hashes}\n\
         Filter size:                          {num_bits}\n\
         -----\n"
    )
}

/// The seed's results block.
pub fn results_block(false_positives: u64, rate: f64) -> String {
    format!(
        "----- RESULTS -----\n\
         Number of false positives:             {false_positives}\n\
         Actual probability of false positives: {rate:.6}\n\
         -----\n"
    )
}

/// The summary table as printed.
pub fn display_table(measurements: &[Measurement]) -> Table {
    let mut table = Table::new([
        "ε",
        "m",
        "k",
        "false positives",
        "negatives tested",
        "measured rate",
        "95% Wilson interval",
        "theoretical FPP",
        "theory inside",
    ]);
    for m in measurements {
        let (low, high) = m.interval();
        table.push(vec![
            m.fpp.to_string(),
            m.num_bits.to_string(),
            m.num_hashes.to_string(),
            m.false_positives.to_string(),
            m.negatives.to_string(),
            format!("{:.6}", m.measured()),
            format!("[{low:.6}, {high:.6}]"),
            format!("{:.6}", m.theory()),
            if m.theory_inside() { "yes" } else { "no" }.to_owned(),
        ]);
    }
    table
}

/// The summary table as written to CSV: full precision, the interval in two columns.
pub fn csv_table(measurements: &[Measurement]) -> Table {
    let mut table = Table::new([
        "fpp",
        "m",
        "k",
        "false_positives",
        "negatives",
        "measured",
        "wilson_low",
        "wilson_high",
        "theory",
    ]);
    for m in measurements {
        let (low, high) = m.interval();
        table.push(vec![
            m.fpp.to_string(),
            m.num_bits.to_string(),
            m.num_hashes.to_string(),
            m.false_positives.to_string(),
            m.negatives.to_string(),
            m.measured().to_string(),
            low.to_string(),
            high.to_string(),
            m.theory().to_string(),
        ]);
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_block_matches_the_seed() {
        let expected = "----- PARAMETERS -----\n\
            Number of elements in filter:          58110\n\
            Calibrated probability of false positives: 0.001000\n\
            Amount of hash functions:             10\n\
            Filter size:                          835481\n\
            -----\n";
        assert_eq!(parameters_block(58_110, 0.001, 10, 835_481), expected);
    }

    #[test]
    fn negatives_skip_shifted_words_that_are_words() {
        let words: Vec<Vec<u8>> = ["ab", "cd", "xy"].map(|w| w.as_bytes().to_vec()).into();
        // "ab" shifts to "cd", a word; "cd" to "ef"; "xy" to "za".
        assert_eq!(negatives(&words), vec![b"ef".to_vec(), b"za".to_vec()]);
    }

    #[test]
    fn measured_rate_divides_by_negatives() {
        let m = Measurement {
            fpp: 0.001,
            num_bits: 835_482,
            num_hashes: 10,
            words: 58_110,
            false_positives: 60,
            negatives: 50_000,
        };
        assert_eq!(m.measured(), 60.0 / 50_000.0);
        let (low, high) = m.interval();
        assert!(low < m.measured() && m.measured() < high);
        assert!(m.theory_inside(), "{:?} vs {}", m.interval(), m.theory());
        let far = Measurement {
            false_positives: 600,
            ..m
        };
        assert!(!far.theory_inside());
    }

    #[test]
    fn a_small_study_finds_plausible_rates() {
        let words = corpus::builtin()[..5_000].to_vec();
        let negatives = negatives(&words);
        let m = measure(&words, &negatives, 0.05, Hashing::default()).unwrap();
        assert_eq!(m.words, 5_000);
        assert!(m.negatives > 4_900, "{m:?}");
        assert!((0.02..0.1).contains(&m.measured()), "{m:?}");
    }
}
