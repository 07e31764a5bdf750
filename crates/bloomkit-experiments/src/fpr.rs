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
use super::verdict::{one_filter_sd, p_text, Check, Verdict};
use super::{corpus, sig, step_progress, HashArg, SchemeArg, Size, StudyArgs, Table};

/// The false-positive probabilities of the seed's table.
pub const FPPS: [f64; 5] = [0.2, 0.05, 0.01, 0.001, 0.0001];

/// Seed 000's table 1 ("Szenarien"), as printed: the ε asked for, the filter size m, the
/// false positives counted and the rate the seed reports (false positives ÷ words).
pub const SEED_000: [(f64, u64, u64, f64); 5] = [
    (0.2, 194_658, 12_254, 0.2108),
    (0.05, 362_328, 2_961, 0.0509),
    (0.01, 556_987, 626, 0.0107),
    (0.001, 835_481, 60, 0.001033),
    (0.0001, 1_113_975, 4, 0.000069),
];

/// The words in seed 000's `words.txt` (its figure 1: "Number of elements in filter").
pub const SEED_000_WORDS: u64 = 58_110;

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
    #[arg(long, value_name = "N", hide = true, allow_negative_numbers = true,
          value_parser = |text: &str| super::count(text).map(|n| n as usize))]
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

    /// The point against its theory. One filter per ε, so σ holds the queries' binomial
    /// spread and the filter's own deviation from the average filter (its fill).
    pub fn check(&self) -> Check {
        Check::classic(
            format!("ε = {}", self.fpp),
            self.false_positives,
            self.negatives,
            (self.num_bits, self.num_hashes, self.words),
        )
    }
}

/// One row of seed 000's table, with what theory expects of it for one choice of k.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SeedRow {
    /// ε asked for.
    pub fpp: f64,
    /// The seed's m.
    pub num_bits: u64,
    /// The seed's false positives.
    pub false_positives: u64,
    /// The rate the seed printed.
    pub printed_rate: f64,
}

impl SeedRow {
    /// The rows of [`SEED_000`].
    pub fn all() -> Vec<SeedRow> {
        SEED_000
            .iter()
            .map(|&(fpp, num_bits, false_positives, printed_rate)| SeedRow {
                fpp,
                num_bits,
                false_positives,
                printed_rate,
            })
            .collect()
    }

    /// The seed's own formula for k, `(m/n) ln 2`, before rounding.
    pub fn real_k(&self) -> f64 {
        self.num_bits as f64 / SEED_000_WORDS as f64 * std::f64::consts::LN_2
    }

    /// The false positives theory expects with k hashes, taking the negatives tested as the
    /// n words (the seed asks one Caesar shift per word and drops those that are words; it
    /// does not say how many it dropped, so n is an upper bound), and their σ: binomial
    /// plus the filter's own spread ([`one_filter_sd`]).
    pub fn expected(&self, k: u32) -> (f64, f64) {
        let n = SEED_000_WORDS;
        let p = fpp_exact(self.num_bits, k, n);
        let sd = one_filter_sd(p, n as f64, self.num_bits, k, n) * n as f64;
        (p * n as f64, sd)
    }

    /// The deviation of the seed's count from theory with k hashes, in σ.
    pub fn z(&self, k: u32) -> f64 {
        let (mean, sd) = self.expected(k);
        (self.false_positives as f64 - mean) / sd
    }
}

/// The two readings of the seed's "k = (m/n) ln 2" for an integer k: rounded, or rounded up.
pub fn seed_ks(row: &SeedRow) -> (u32, u32) {
    let k = row.real_k();
    ((k.round() as u32).max(1), (k.ceil() as u32).max(1))
}

/// χ² of the seed's five counts against theory for one reading of k, and its p-value.
fn seed_chi2(pick: fn(&SeedRow) -> u32) -> (f64, f64) {
    let rows = SeedRow::all();
    let chi2: f64 = rows.iter().map(|r| r.z(pick(r)).powi(2)).sum();
    (chi2, super::verdict::chi2_sf(chi2, rows.len()))
}

/// Whether the seed's counts fit k rounded up better than k rounded (by their χ²).
pub fn seed_rounds_up() -> bool {
    seed_chi2(|r| seed_ks(r).1).1 > seed_chi2(|r| seed_ks(r).0).1
}

/// The k the seed's counts imply: the reading of `(m/n) ln 2` they fit better.
pub fn seed_k(row: &SeedRow) -> u32 {
    let (round, ceil) = seed_ks(row);
    if seed_rounds_up() {
        ceil
    } else {
        round
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
    let mut verdict = Verdict::new();
    for m in ms {
        verdict.add(m.check());
    }
    let grid = plot::geometric(5e-5, 0.5, 60);
    let figure = Figure {
        name: "fpr_measured".into(),
        title: format!("Seed 000: measured against requested ε (n = {n} words)"),
        caption: "Measured false-positive rate (95% Wilson intervals) against the ε the filter \
                  was sized for, over the exact theory for the m and k that sizing gives; seed \
                  000's own table 1 beside it (offset slightly to the right)."
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
            Series::new(
                "seed 000's table 1 (its false positives ÷ its 58110 words)",
                Style::Measured,
                3,
                SeedRow::all()
                    .iter()
                    .map(|r| {
                        let rate = r.false_positives as f64 / SEED_000_WORDS as f64;
                        let (low, high) = wilson_interval(r.false_positives, SEED_000_WORDS, Z_95);
                        // A little to the right, so that its bars stay apart from ours.
                        Point::with_bar(r.fpp * 1.08, rate, low, high)
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
    let first = SeedRow::all()[0];
    let (k_round, k_up) = seed_ks(&first);
    let ratio = Figure {
        name: "fpr_ratio".into(),
        title: "Seed 000: measured ÷ requested ε".into(),
        caption: format!(
            "The same measurements as a ratio to the requested ε (95% Wilson intervals): the \
             theory line wiggles because k is rounded to an integer and m up. Seed 000's table \
             1 beside them (slightly to the right), with what theory expects for its m and its \
             k read both ways: its ε = {} row is {} from k = {k_round} (rounded) and \
             {} from k = {k_up} (rounded up).",
            first.fpp,
            super::verdict::sigma(first.z(k_round)),
            super::verdict::sigma(first.z(k_up)),
        ),
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
            Series::new(
                "theory ÷ ε, seed 000's m, k rounded",
                Style::Measured,
                1,
                seed_theory(|r| seed_ks(r).0),
            ),
            Series::new(
                "theory ÷ ε, seed 000's m, k rounded up",
                Style::Measured,
                2,
                seed_theory(|r| seed_ks(r).1),
            ),
            Series::new(
                "seed 000's table 1 ÷ ε (÷ its 58110 words)",
                Style::Measured,
                3,
                SeedRow::all()
                    .iter()
                    .map(|r| {
                        let rate = r.false_positives as f64 / SEED_000_WORDS as f64;
                        let (low, high) = wilson_interval(r.false_positives, SEED_000_WORDS, Z_95);
                        Point::with_bar(r.fpp * 1.08, rate / r.fpp, low / r.fpp, high / r.fpp)
                    })
                    .collect(),
            ),
        ],
        legend: Legend::UpperRight,
    };
    Report {
        study: "fpr",
        title: "fpr — seed 000: measured against requested false-positive rate".into(),
        summary: "Seed 000 (000_02f71fb1b6dcd284.txt, German): a Bloom filter sized for the \
                  word list at each ε, every word inserted; the Caesar shifts by 2 that are not \
                  words are asked, and the \"maybe\"s counted. Its table 1 is set beside ours \
                  below, with the k its counts imply."
            .into(),
        command: args.common.command("fpr"),
        facts: run.facts,
        tables: vec![
            ReportTable {
                name: "main".into(),
                title: "False positives among the shifted words, per requested ε".into(),
                display: display_table(ms),
                csv: csv_table(ms),
            },
            ReportTable {
                name: "seed000".into(),
                title: "Seed 000's table 1 (\"Szenarien\") beside ours, row by row".into(),
                display: seed_table(ms, false),
                csv: seed_table(ms, true),
            },
            ReportTable {
                name: "seed000_k".into(),
                title: "Which k seed 000 used: its counts against theory for k = (m/n) ln 2 \
                        rounded and rounded up (negatives taken as its n = 58110 words)"
                    .into(),
                display: seed_k_table(false),
                csv: seed_k_table(true),
            },
        ],
        figures: vec![figure, ratio],
        verdicts: vec![verdict.judge(
            "Measured rate against (1 − (1 − 1/m)^kn)^k (σ: the queries' binomial spread \
                 and the filter's own, from its fill)",
            "The word list or the hashing breaks the model's assumption of independent, \
                 uniform positions.",
        )],
        notes: seed_notes(),
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
        if step.is_multiple_of(PROGRESS_STEP) {
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

/// The summary table as printed: rates with four significant digits, and each row's
/// deviation from theory in σ (queries and filter spread, see [`Measurement::check`]).
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
        "deviation",
    ]);
    for m in measurements {
        let (low, high) = m.interval();
        table.push(vec![
            super::eps(m.fpp),
            m.num_bits.to_string(),
            m.num_hashes.to_string(),
            m.false_positives.to_string(),
            m.negatives.to_string(),
            sig(m.measured(), 4),
            format!("[{}, {}]", sig(low, 4), sig(high, 4)),
            sig(m.theory(), 4),
            m.check().cell(),
        ]);
    }
    table
}

/// Seed 000's table beside ours: m, k, false positives and both rates (÷ words as the seed
/// divides, ÷ negatives as a rate is defined).
pub fn seed_table(measurements: &[Measurement], csv: bool) -> Table {
    let mut table = Table::new(if csv {
        [
            "fpp",
            "seed_m",
            "our_m",
            "seed_k_implied",
            "our_k",
            "seed_false_positives",
            "our_false_positives",
            "seed_rate_per_word",
            "our_rate_per_word",
            "our_negatives",
            "our_rate_per_negative",
            "seed_printed_rate",
        ]
    } else {
        [
            "ε",
            "m (seed)",
            "m (ours)",
            if seed_rounds_up() {
                "k (seed: ⌈(m/n) ln 2⌉, which its counts fit)"
            } else {
                "k (seed: (m/n) ln 2 rounded, which its counts fit)"
            },
            "k (ours)",
            "false pos. (seed)",
            "false pos. (ours)",
            "÷ words (seed)",
            "÷ words (ours)",
            "negatives (ours)",
            "÷ negatives (ours)",
            "printed by seed",
        ]
    });
    for row in SeedRow::all() {
        let Some(ours) = measurements.iter().find(|m| m.fpp == row.fpp) else {
            continue;
        };
        let seed_rate = row.false_positives as f64 / SEED_000_WORDS as f64;
        let our_rate = ours.false_positives as f64 / ours.words as f64;
        let number = |x: f64| if csv { x.to_string() } else { sig(x, 4) };
        table.push(vec![
            if csv {
                row.fpp.to_string()
            } else {
                super::eps(row.fpp)
            },
            row.num_bits.to_string(),
            ours.num_bits.to_string(),
            seed_k(&row).to_string(),
            ours.num_hashes.to_string(),
            row.false_positives.to_string(),
            ours.false_positives.to_string(),
            number(seed_rate),
            number(our_rate),
            ours.negatives.to_string(),
            number(ours.measured()),
            row.printed_rate.to_string(),
        ]);
    }
    table
}

/// Seed 000's counts against theory for both readings of its k.
pub fn seed_k_table(csv: bool) -> Table {
    let mut table = Table::new(if csv {
        [
            "fpp",
            "m",
            "real_k",
            "false_positives",
            "k_round",
            "expected_round",
            "z_round",
            "k_ceil",
            "expected_ceil",
            "z_ceil",
        ]
    } else {
        [
            "ε",
            "m",
            "(m/n) ln 2",
            "false pos. (seed)",
            "k rounded",
            "expected",
            "deviation",
            "k rounded up",
            "expected",
            "deviation",
        ]
    });
    for row in SeedRow::all() {
        let (round, ceil) = seed_ks(&row);
        let (e_round, _) = row.expected(round);
        let (e_ceil, _) = row.expected(ceil);
        table.push(if csv {
            vec![
                row.fpp.to_string(),
                row.num_bits.to_string(),
                row.real_k().to_string(),
                row.false_positives.to_string(),
                round.to_string(),
                e_round.to_string(),
                row.z(round).to_string(),
                ceil.to_string(),
                e_ceil.to_string(),
                row.z(ceil).to_string(),
            ]
        } else {
            vec![
                super::eps(row.fpp),
                row.num_bits.to_string(),
                format!("{:.3}", row.real_k()),
                row.false_positives.to_string(),
                round.to_string(),
                format!("{e_round:.1}"),
                super::verdict::sigma(row.z(round)),
                ceil.to_string(),
                format!("{e_ceil:.1}"),
                super::verdict::sigma(row.z(ceil)),
            ]
        });
    }
    table
}

/// What seed 000's numbers say: how it divides, which k fits, which rows do not.
pub fn seed_notes() -> Vec<String> {
    let rows = SeedRow::all();
    let (chi_round, p_round) = seed_chi2(|r| seed_ks(r).0);
    let (chi_ceil, p_ceil) = seed_chi2(|r| seed_ks(r).1);
    let m_formula = rows.iter().all(|r| {
        optimal_num_bits(SEED_000_WORDS, r.fpp).is_ok_and(|m| m.abs_diff(r.num_bits) <= 1)
    });
    let off: Vec<String> = rows
        .iter()
        .filter(|r| r.z(seed_ks(r).0).abs() > 3.0)
        .map(|r| {
            let (k, up) = seed_ks(r);
            format!(
                "ε = {}: {} false positives where k = {k} predicts about {:.0} ({}; \
                 k = {up} predicts {:.0}, {})",
                r.fpp,
                r.false_positives,
                r.expected(k).0,
                super::verdict::sigma(r.z(k)),
                r.expected(up).0,
                super::verdict::sigma(r.z(up))
            )
        })
        .collect();
    let mut notes = vec![
        "Seed 000 divides by the words inserted, not by the negatives tested: \"Am Schluss \
         teilen wir dann die Anzahl an false-positives durch die Anzahl an Wörtern im Filter, \
         was uns die Fehler-Wahrscheinlichkeit ergibt\" (\"Finally we divide the number of \
         false positives by the number of words in the filter, which gives us the error \
         probability\"). Its printed rates are its counts ÷ 58110, cut to four decimals \
         (0.2108 for 0.21087); ours are shown both ways. Dividing by n overstates the rate by n ÷ negatives (the shifts that are words \
         are not tested)."
            .into(),
        format!(
            "Its m are the formula m = −n ln ε / (ln 2)² for n = 58110 ({}); bloomkit rounds m \
             up, so ours are 1 bit larger or equal. Its k is printed only for ε = 0.001 (10, \
             its figure 1), which both readings of k = (m/n) ln 2 give.",
            if m_formula {
                "every row to within one bit"
            } else {
                "NOT every row"
            }
        ),
        format!(
            "Which k: with k rounded, χ² = {chi_round:.1} on 5 rows (p {}); with k rounded \
             up, χ² = {chi_ceil:.1} (p {}). {}",
            p_text(p_round),
            p_text(p_ceil),
            {
                let differ: Vec<String> = rows
                    .iter()
                    .filter(|r| seed_ks(r).0 != seed_ks(r).1)
                    .map(|r| r.fpp.to_string())
                    .collect();
                let fit = if p_ceil > p_round {
                    "The seed's counts fit k rounded up (⌈(m/n) ln 2⌉) better"
                } else {
                    "The seed's counts fit k rounded better"
                };
                format!(
                    "{fit}; the two readings differ at ε = {} only.",
                    differ.join(", ")
                )
            }
        ),
    ];
    if !off.is_empty() {
        notes.push(format!(
            "Seed rows that do not fit theory with k rounded (|z| > 3): {}. The seed does not \
             say how many negatives it tested; fewer than n would only lower the expectation \
             and widen the gap.",
            off.join("; ")
        ));
    }
    notes
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

/// Theory ÷ ε at each of seed 000's rows (its m, the k `k_of` picks), per word of its list,
/// drawn beside the row's ε.
fn seed_theory(k_of: impl Fn(&SeedRow) -> u32) -> Vec<Point> {
    SeedRow::all()
        .iter()
        .map(|r| {
            Point::new(
                r.fpp * 1.08,
                r.expected(k_of(r)).0 / SEED_000_WORDS as f64 / r.fpp,
            )
        })
        .collect()
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
    fn seed_000_rows_against_theory() {
        let rows = SeedRow::all();
        // ε = 0.2: k = round(2.32) = 2 predicts about 11 740 false positives; the seed's
        // 12 254 is about 5σ above.
        let first = rows[0];
        assert_eq!(seed_ks(&first), (2, 3));
        let (expected, _) = first.expected(2);
        assert!((expected - 11_740.0).abs() < 15.0, "{expected}");
        assert!(first.z(2) > 4.5 && first.z(2) < 5.5, "{}", first.z(2));
        // ε = 0.001: the seed prints k = 10, which both readings give.
        assert_eq!(seed_ks(&rows[3]), (10, 10));
        // Its printed rates are its counts ÷ its words (cut, not rounded, to 4 decimals).
        for row in &rows {
            let rate = row.false_positives as f64 / SEED_000_WORDS as f64;
            assert!((rate - row.printed_rate).abs() < 1e-4, "{row:?}");
        }
        let notes = seed_notes().join(" ");
        assert!(notes.contains("ε = 0.2: 12254 false positives"), "{notes}");
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
        assert!(
            m.check().z().abs() < 3.0,
            "{:?} vs {}",
            m.interval(),
            m.theory()
        );
        let far = Measurement {
            false_positives: 600,
            ..m
        };
        assert!(far.check().z().abs() > 3.0);
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
