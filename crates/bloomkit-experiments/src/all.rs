//! `bloomkit experiment all --out DIR`: every study at one size and seed, its tables and
//! figures written into DIR, and DIR/index.html showing them all, each with the one-line
//! description of what it shows and the command that remakes it alone.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use super::report::{page_chi2, write_index, Report};
use super::{
    bloomier, claims, compressed, deletion, disk, fpr, generalized, hashing, plot, rho, robust,
    spectral, spellcheck, ssd, sstable, summary_cache, timing, variants, Size, StudyArgs,
};

/// Arguments of `bloomkit experiment all`.
#[derive(Debug, Args)]
pub struct AllArgs {
    /// The directory for the report: index.html, and every table (CSV) and figure (SVG,
    /// PNG). Created if needed; files of the same names are replaced.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,

    /// Run every study at the seed papers' sizes (long).
    #[arg(long, conflicts_with = "tiny")]
    pub full: bool,

    /// Run every study at a tiny size (for tests).
    #[arg(long, hide = true)]
    pub tiny: bool,

    /// The seed every random choice is drawn from.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seed: u64,

    /// A TrueType font for the figures' text [default: DejaVu Sans, or $BLOOMKIT_FONT].
    #[arg(long, value_name = "FILE")]
    pub font: Option<PathBuf>,
}

/// The studies in the order of the report.
pub const STUDIES: [&str; 17] = [
    "fpr",
    "rho",
    "disk",
    "claims",
    "timing",
    "variants",
    "deletion",
    "hashing",
    "spectral",
    "generalized",
    "bloomier",
    "compressed",
    "robust",
    "ssd",
    "sstable",
    "spellcheck",
    "summary-cache",
];

/// Runs one study by name with the common options.
pub fn study(name: &str, common: &StudyArgs) -> Result<Report> {
    let common = common.clone();
    match name {
        "fpr" => fpr::study(&fpr::FprArgs::with_common(common)),
        "rho" => rho::study(&rho::RhoArgs { common }),
        "disk" => disk::study(&disk::DiskArgs::with_common(common)),
        "timing" => timing::study(&timing::TimingArgs { common }),
        "variants" => variants::study(&variants::VariantsArgs { common }),
        "deletion" => deletion::study(&deletion::DeletionArgs { common }),
        "hashing" => hashing::study(&hashing::HashingArgs { common }),
        "sstable" => sstable::study(&sstable::SstableArgs::with_common(common)),
        "claims" => claims::study(&claims::ClaimsArgs { common }),
        "spellcheck" => spellcheck::study(&spellcheck::SpellcheckArgs { common }),
        "summary-cache" => summary_cache::study(&summary_cache::SummaryCacheArgs { common }),
        "bloomier" => bloomier::study(&bloomier::BloomierArgs { common }),
        "compressed" => compressed::study(&compressed::CompressedArgs { common }),
        "robust" => robust::study(&robust::RobustArgs { common }),
        "ssd" => ssd::study(&ssd::SsdArgs { common }),
        "spectral" => spectral::study(&spectral::SpectralArgs { common }),
        "generalized" => generalized::study(&generalized::GeneralizedArgs { common }),
        other => anyhow::bail!("no study named {other}"),
    }
}

/// Runs every study and writes the report.
pub fn run(args: AllArgs) -> Result<()> {
    let start = super::stopwatch();
    let common = StudyArgs {
        csv: None,
        out: Some(args.out.clone()),
        full: args.full,
        tiny: args.tiny,
        seed: args.seed,
        font: args.font.clone(),
    };
    // Fail early on an --out that cannot be written and on a bad --font; warn once when
    // there is no font.
    common.check_outputs()?;
    let figures_drawn = plot::load_font(args.font.as_deref())?.is_some();
    if !figures_drawn {
        eprintln!("warning: {}", plot::font_missing_message());
    }
    let mut command = String::from("bloomkit experiment all");
    match common.size() {
        Size::Tiny => command.push_str(" --tiny"),
        Size::Full => command.push_str(" --full"),
        Size::Default => {}
    }
    if args.seed != 0 {
        command.push_str(&format!(" --seed {}", args.seed));
    }
    command.push_str(&format!(
        " --out {}",
        super::shell_quote(&args.out.display().to_string())
    ));

    let mut reports = Vec::with_capacity(STUDIES.len());
    for (index, name) in STUDIES.iter().enumerate() {
        eprintln!("[{}/{}] {name}", index + 1, STUDIES.len());
        let report = study(name, &common)?;
        report.print()?;
        println!();
        report.write(None, common.out.as_deref(), common.font.as_deref())?;
        reports.push(report);
    }
    let seconds = start.elapsed().as_secs_f64();
    let index = write_index(&args.out, &reports, &command, seconds, figures_drawn)?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "All {} studies in {seconds:.1} s; report: {}",
        reports.len(),
        index.display()
    )?;
    for report in &reports {
        writeln!(out, "  {:>13}  {:6.1} s", report.study, report.seconds)?;
    }
    let page = page_chi2(&reports);
    writeln!(
        out,
        "The verdicts' χ²: {:.1} on {} independent points, P(χ² ≥) {}, P(χ² ≤) {}{}",
        page.chi2,
        page.dof,
        super::verdict::p_text(page.upper_p),
        super::verdict::p_text(page.lower_p),
        if page.passes() {
            ""
        } else {
            " — the page FAILS its own check of σ"
        }
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A CSV column that holds a measured time (ns, µs, seconds), which no seed repeats.
    fn is_time(column: &str) -> bool {
        column.contains("_ns") || column.ends_with("_us") || column.contains("_us_")
    }

    /// Every table of a report as CSV text, time columns blanked and rows that compare a
    /// time or a ratio of times ("time of a disk lookup", "disk ÷ filter" in seed 002's
    /// comparison) left out.
    fn tables_without_times(report: &Report) -> Vec<(String, String)> {
        report
            .tables
            .iter()
            .map(|t| {
                let mut csv = t.csv.clone();
                let keep: Vec<bool> = csv.header.iter().map(|c| !is_time(c)).collect();
                csv.rows.retain(|row| {
                    !row.first()
                        .is_some_and(|c| c.starts_with("time") || c == "disk ÷ filter")
                });
                for row in &mut csv.rows {
                    for (cell, &keep) in row.iter_mut().zip(&keep) {
                        if !keep {
                            cell.clear();
                        }
                    }
                }
                (t.name.clone(), csv.to_csv())
            })
            .collect()
    }

    /// The report's claim "every study is deterministic by its seed": each study, run twice
    /// in one process (so that anything taken from a per-process or per-map random state,
    /// such as a HashMap's iteration order, differs between the runs), writes the same
    /// tables to the last digit, times aside.
    #[test]
    fn every_study_repeats_its_tables_exactly_from_its_seed() {
        let common = StudyArgs {
            tiny: true,
            seed: 3,
            ..StudyArgs::default()
        };
        for name in STUDIES {
            let first = tables_without_times(&study(name, &common).unwrap());
            let second = tables_without_times(&study(name, &common).unwrap());
            assert!(!first.is_empty(), "{name} wrote no tables");
            for ((table, a), (_, b)) in first.iter().zip(&second) {
                assert_eq!(a, b, "study {name}, table {table}: two runs differ");
            }
        }
    }
}
