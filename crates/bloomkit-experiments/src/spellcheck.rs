//! Spell checking, the application Bloom (1970) built the filter for: a dictionary held as
//! a Bloom filter checks a text, and every word the filter has never seen is flagged.
//!
//! Seed 001 (001_ddd529f7662cd0cb.txt) says the filter was "1970 von Burton H. Bloom zur
//! Rechtschreibkontrolle und zur Worttrennung am Zeilenende entwickelt" (developed in 1970
//! by Burton H. Bloom for spell checking and end-of-line hyphenation); seed 004
//! (004_e380dc037116baf2.txt) lists "Rechtschreibprüfung" (spell checking) among the
//! applications.
//!
//! The dictionary is the built-in corpus of pseudo-words (the fpr study's). The text draws
//! its words from it with Zipf frequencies (the r-th most common word has weight 1/r, as in
//! natural text), and a share of them is misspelled by one random edit — a letter
//! substituted, deleted, inserted, or two neighbours swapped. A misspelling that happens to
//! be another dictionary word (a "real-word error") cannot be caught by any dictionary and
//! is counted apart. The filter flags a word when it answers "no": it never flags a correct
//! word (no false negatives), and it lets a misspelling through with the probability of a
//! false positive, `(1 − (1 − 1/m)^(kn))^k` — Bloom's "allowable errors". The rate is
//! judged per distinct misspelling (repeated ones ask the filter the same question).

use std::collections::HashSet;

use anyhow::{bail, Result};
use bloomkit::params::fpp_exact;
use bloomkit::stats::{wilson_interval, Z_95};
use bloomkit::{BloomFilter, Filter};
use clap::Args;

use super::corpus::{self, SplitMix64};
use super::plot::{self, Axis, Figure, Legend, Point, Series, Style};
use super::report::{Report, ReportTable};
use super::verdict::{Check, Verdict};
use super::{sig, StudyArgs, Table};
use bloomkit::stats::Zipf;

/// The error rates the dictionary filter is sized for.
pub const FPPS: [f64; 4] = [0.1, 0.01, 0.001, 0.0001];

/// The share of the text's words that are misspelled.
pub const MISSPELLED: f64 = 0.05;

/// Arguments of `bloomkit experiment spellcheck`.
#[derive(Debug, Args)]
pub struct SpellcheckArgs {
    /// The options every study has.
    #[command(flatten)]
    pub common: StudyArgs,
}

/// The text: its words, and which of them were misspelled.
pub struct Text {
    /// The words, in order.
    pub words: Vec<Vec<u8>>,
    /// Whether each word was misspelled (edited).
    pub edited: Vec<bool>,
}

/// Draws a text of `len` words from `dictionary` with Zipf weights 1/r, misspelling each
/// with probability [`MISSPELLED`] by one random edit.
pub fn make_text(dictionary: &[Vec<u8>], len: usize, seed: u64) -> Text {
    let mut rng = SplitMix64::new(seed);
    let zipf = Zipf::new(dictionary.len(), 1.0);
    let mut words = Vec::with_capacity(len);
    let mut edited = Vec::with_capacity(len);
    for _ in 0..len {
        let mut word = dictionary[zipf.rank(rng.unit())].clone();
        let misspell = rng.unit() < MISSPELLED;
        if misspell {
            word = misspell_once(&word, &mut rng);
        }
        words.push(word);
        edited.push(misspell);
    }
    Text { words, edited }
}

/// One random edit of a word: substitute, delete, insert or swap neighbours.
pub fn misspell_once(word: &[u8], rng: &mut SplitMix64) -> Vec<u8> {
    const LETTERS: &[u8] = b"abcdefghijklmnopqrstuvwxyz";
    let mut out = word.to_vec();
    let len = out.len();
    let letter = |rng: &mut SplitMix64| LETTERS[rng.below(LETTERS.len())];
    match rng.below(4) {
        0 if len > 0 => {
            let at = rng.below(len);
            let old = out[at];
            // A different letter, so that the edit changes the word.
            let mut new = letter(rng);
            while new == old {
                new = letter(rng);
            }
            out[at] = new;
        }
        1 if len > 1 => {
            out.remove(rng.below(len));
        }
        3 if len > 1 && out.windows(2).any(|w| w[0] != w[1]) => loop {
            let at = rng.below(len - 1);
            if out[at] != out[at + 1] {
                out.swap(at, at + 1);
                break;
            }
        },
        _ => {
            let at = rng.below(len + 1);
            out.insert(at, letter(rng));
        }
    }
    out
}

/// What one dictionary filter did to the text.
#[derive(Debug, Clone)]
pub struct Check1 {
    /// ε the filter was sized for.
    pub fpp: f64,
    /// m.
    pub num_bits: u64,
    /// k.
    pub num_hashes: u32,
    /// Dictionary words inserted.
    pub words: u64,
    /// The filter's memory in bytes.
    pub filter_bytes: u64,
    /// Correct words flagged (must be 0).
    pub correct_flagged: u64,
    /// Misspelled words in the text that are not dictionary words (occurrences).
    pub misspellings: u64,
    /// Of those, flagged.
    pub flagged: u64,
    /// Distinct misspellings asked.
    pub distinct: u64,
    /// Distinct misspellings let through (false positives).
    pub distinct_through: u64,
    /// A few misspellings let through, for the page.
    pub examples: Vec<String>,
}

impl Check1 {
    fn rate(&self) -> f64 {
        self.distinct_through as f64 / self.distinct.max(1) as f64
    }
    fn theory(&self) -> f64 {
        fpp_exact(self.num_bits, self.num_hashes, self.words)
    }
    fn check(&self) -> Check {
        Check::classic(
            format!("ε = {}", self.fpp),
            self.distinct_through,
            self.distinct,
            (self.num_bits, self.num_hashes, self.words),
        )
    }
}

/// Runs the study.
pub fn study(args: &SpellcheckArgs) -> Result<Report> {
    let start = super::stopwatch();
    let size = args.common.size();
    let seed = args.common.seed;
    let mut dictionary = corpus::builtin();
    dictionary.truncate(size.pick(5_000, dictionary.len(), dictionary.len()));
    let len: usize = size.pick(20_000, 1_000_000, 5_000_000);
    let text = make_text(&dictionary, len, corpus::subseed(seed, &[80]));
    let known: HashSet<&[u8]> = dictionary.iter().map(Vec::as_slice).collect();
    let real_word_errors = text
        .words
        .iter()
        .zip(&text.edited)
        .filter(|(w, &e)| e && known.contains(w.as_slice()))
        .count();
    let dictionary_bytes: usize = dictionary.iter().map(|w| w.len() + 1).sum();

    let mut results = Vec::new();
    for fpp in FPPS {
        let mut filter = BloomFilter::builder()
            .capacity(dictionary.len() as u64)
            .fpp(fpp)
            .seed(corpus::subseed(seed, &[81]))
            .build()?;
        for word in &dictionary {
            filter.insert(word);
        }
        let mut result = Check1 {
            fpp,
            num_bits: filter.num_bits(),
            num_hashes: filter.num_hashes(),
            words: dictionary.len() as u64,
            filter_bytes: filter.memory_bytes() as u64,
            correct_flagged: 0,
            misspellings: 0,
            flagged: 0,
            distinct: 0,
            distinct_through: 0,
            examples: Vec::new(),
        };
        let mut asked: HashSet<&[u8]> = HashSet::new();
        for word in &text.words {
            let maybe = filter.contains(word);
            if known.contains(word.as_slice()) {
                // A dictionary word (correct, or a real-word error): never flagged.
                result.correct_flagged += u64::from(!maybe);
                continue;
            }
            result.misspellings += 1;
            result.flagged += u64::from(!maybe);
            if asked.insert(word.as_slice()) {
                result.distinct += 1;
                if maybe {
                    result.distinct_through += 1;
                    if result.examples.len() < 5 {
                        result
                            .examples
                            .push(String::from_utf8_lossy(word).into_owned());
                    }
                }
            }
        }
        if result.correct_flagged > 0 {
            bail!(
                "broken promise: the dictionary filter at ε = {fpp} flagged {} correct words",
                result.correct_flagged
            );
        }
        results.push(result);
    }

    let mut verdict = Verdict::new();
    for r in &results {
        verdict.add(r.check());
    }
    let misspelled = text.edited.iter().filter(|&&e| e).count();
    let examples = results
        .first()
        .map_or(String::new(), |r| r.examples.join(", "));
    let mut report = Report {
        study: "spellcheck",
        title: "spellcheck — Bloom's own application: a dictionary filter checks a text".into(),
        summary: "Seeds 001 (001_ddd529f7662cd0cb.txt: \"1970 von Burton H. Bloom zur \
                  Rechtschreibkontrolle … entwickelt\", developed in 1970 for spell checking) \
                  and 004 (004_e380dc037116baf2.txt: \"Rechtschreibprüfung\"): a Bloom filter \
                  of the dictionary checks a text with misspellings; the misspellings it finds, \
                  and the ones it lets through against ε."
            .into(),
        command: args.common.command("spellcheck"),
        facts: vec![
            format!(
                "Dictionary: {} pseudo-words of the built-in corpus ({dictionary_bytes} bytes as \
                 a word list).",
                dictionary.len()
            ),
            format!(
                "Text: {len} words drawn with Zipf frequencies (weight 1/rank), {misspelled} of \
                 them ({:.1}%) misspelled by one random edit; {real_word_errors} of those edits \
                 made another dictionary word (real-word errors: no dictionary can catch them, \
                 so they are left out below).",
                100.0 * misspelled as f64 / len.max(1) as f64
            ),
            format!("Misspellings let through at ε = {}: {examples}.", FPPS[0]),
        ],
        tables: vec![ReportTable {
            name: "main".into(),
            title: "Misspellings found and let through, per ε of the dictionary filter".into(),
            display: table(&results, dictionary_bytes, false),
            csv: table(&results, dictionary_bytes, true),
        }],
        figures: vec![figure(&results)],
        verdicts: vec![verdict.judge(
            "Distinct misspellings let through against (1 − (1 − 1/m)^kn)^k (σ: the \
                 queries' and the filter's own spread)",
            "The edits make near neighbours of dictionary words; hashing that correlates \
                 the positions of similar strings would let more through.",
        )],
        notes: vec![
            "No correct word was flagged at any ε: the filter has no false negatives, so a \
             spell checker built on it never complains about a word it was given. What it \
             trades is the other side — the share of misspellings it stays silent about, which \
             is ε, bought with the filter's bits per word."
                .into(),
        ],
        seconds: 0.0,
    };
    report.seconds = start.elapsed().as_secs_f64();
    Ok(report)
}

fn table(results: &[Check1], dictionary_bytes: usize, csv: bool) -> Table {
    let mut table = Table::new(if csv {
        vec![
            "fpp",
            "m",
            "k",
            "filter_bytes",
            "dictionary_bytes",
            "misspellings",
            "flagged",
            "let_through",
            "distinct_misspellings",
            "distinct_let_through",
            "rate",
            "ci_low",
            "ci_high",
            "theory",
        ]
    } else {
        vec![
            "ε",
            "m",
            "k",
            "filter bytes",
            "÷ word list",
            "misspellings",
            "flagged",
            "let through",
            "distinct",
            "distinct let through",
            "rate",
            "95% interval",
            "theory",
            "deviation",
        ]
    });
    for r in results {
        let (low, high) = wilson_interval(r.distinct_through, r.distinct, Z_95);
        let through = r.misspellings - r.flagged;
        table.push(if csv {
            vec![
                r.fpp.to_string(),
                r.num_bits.to_string(),
                r.num_hashes.to_string(),
                r.filter_bytes.to_string(),
                dictionary_bytes.to_string(),
                r.misspellings.to_string(),
                r.flagged.to_string(),
                through.to_string(),
                r.distinct.to_string(),
                r.distinct_through.to_string(),
                r.rate().to_string(),
                low.to_string(),
                high.to_string(),
                r.theory().to_string(),
            ]
        } else {
            vec![
                super::eps(r.fpp),
                r.num_bits.to_string(),
                r.num_hashes.to_string(),
                r.filter_bytes.to_string(),
                format!("{:.3}", r.filter_bytes as f64 / dictionary_bytes as f64),
                r.misspellings.to_string(),
                r.flagged.to_string(),
                through.to_string(),
                r.distinct.to_string(),
                r.distinct_through.to_string(),
                sig(r.rate(), 4),
                format!("[{}, {}]", sig(low, 4), sig(high, 4)),
                sig(r.theory(), 4),
                r.check().cell(),
            ]
        });
    }
    table
}

fn figure(results: &[Check1]) -> Figure {
    let grid = plot::geometric(5e-5, 0.2, 60);
    Figure {
        name: "spellcheck_through".into(),
        title: "Spell checking: misspellings let through against ε".into(),
        caption: "The share of distinct misspellings the dictionary filter answers \"maybe\" for \
                  (95% Wilson intervals) against the ε it was sized for, over the line \
                  measured = ε."
            .into(),
        x: Axis::log("ε of the dictionary filter"),
        y: Axis::log("misspellings let through"),
        series: vec![
            Series::curve("let through = ε", 7, grid, |e| e).with_style(Style::Reference),
            Series::new(
                "measured",
                Style::Measured,
                0,
                results
                    .iter()
                    .map(|r| {
                        let (low, high) = wilson_interval(r.distinct_through, r.distinct, Z_95);
                        Point::with_bar(r.fpp, r.rate(), low, high)
                    })
                    .collect(),
            ),
        ],
        legend: Legend::UpperLeft,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_edit_changes_the_word() {
        let mut rng = SplitMix64::new(7);
        for word in ["a", "ab", "aa", "hello", "mississippi"] {
            for _ in 0..200 {
                assert_ne!(misspell_once(word.as_bytes(), &mut rng), word.as_bytes());
            }
        }
    }

    #[test]
    fn the_text_follows_zipf_and_misspells_about_five_percent() {
        let dictionary: Vec<Vec<u8>> = corpus::builtin()[..1_000].to_vec();
        let text = make_text(&dictionary, 50_000, 3);
        let edited = text.edited.iter().filter(|&&e| e).count() as f64 / 50_000.0;
        assert!((edited - MISSPELLED).abs() < 0.005, "{edited}");
        // The most common word: weight 1 of H(1000) ≈ 7.49, about 13% of the words.
        let first = text.words.iter().filter(|w| **w == dictionary[0]).count() as f64;
        assert!((first / 50_000.0 - 0.1335).abs() < 0.01, "{first}");
    }

    #[test]
    fn tiny_study_finds_misspellings_and_never_flags_a_word() {
        let args = SpellcheckArgs {
            common: StudyArgs {
                tiny: true,
                ..StudyArgs::default()
            },
        };
        let report = study(&args).unwrap();
        let csv = &report.tables[0].csv;
        assert_eq!(csv.rows.len(), FPPS.len());
        // At ε = 0.1 some misspellings get through; most are flagged.
        let flagged: u64 = csv.rows[0][6].parse().unwrap();
        let misspellings: u64 = csv.rows[0][5].parse().unwrap();
        assert!(flagged > misspellings / 2, "{flagged} of {misspellings}");
        assert!(
            report.verdicts[0].sentence.contains("on theory"),
            "{:?}",
            report.verdicts
        );
    }
}
