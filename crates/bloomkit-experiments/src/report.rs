//! What a study hands back — its tables, figures and findings as a [`Report`] — and the
//! ways a report goes out: printed, written as CSV, SVG and PNG, and gathered with the
//! others into `index.html` by `bloomkit experiment all`.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::overview;
use super::plot::{self, Figure};
use super::verdict::{self, Judgement};
use super::Table;

/// A table of a report: shown as text and HTML, written as CSV.
#[derive(Debug, Clone)]
pub struct ReportTable {
    /// The CSV file's name part: the study's main table (the first) is `STUDY.csv`, the
    /// others `STUDY_NAME.csv`.
    pub name: String,
    /// One line on what the table shows.
    pub title: String,
    /// The table as printed (rounded, readable).
    pub display: Table,
    /// The table as written to CSV (full precision, one value per column).
    pub csv: Table,
}

/// Everything a study found.
#[derive(Debug, Clone)]
pub struct Report {
    /// The subcommand (`rho`), also the prefix of every file the study writes.
    pub study: &'static str,
    /// The heading.
    pub title: String,
    /// One paragraph on what the study does and shows.
    pub summary: String,
    /// The exact command that reproduces this report's files.
    pub command: String,
    /// Conditions worth stating next to the numbers (sizes, seed, cache state, …).
    pub facts: Vec<String>,
    /// The tables; the first is the main one (the one `--csv` writes).
    pub tables: Vec<ReportTable>,
    /// The figures.
    pub figures: Vec<Figure>,
    /// The verdicts against theory: each is a box of the study's findings and a row of the
    /// page's table of verdicts, both made from the same [`Judgement`].
    pub verdicts: Vec<Judgement>,
    /// Further findings, after the verdicts.
    pub notes: Vec<String>,
    /// Wall-clock time the study took, in seconds.
    pub seconds: f64,
}

/// Which files a report was written to.
#[derive(Debug, Clone, Default)]
pub struct Written {
    /// The CSV files.
    pub csv: Vec<PathBuf>,
    /// The figure files (SVG and PNG), empty when no font was found.
    pub figures: Vec<PathBuf>,
    /// Why the figures were not drawn, if they were not.
    pub figures_skipped: Option<String>,
}

impl Report {
    /// Prints the report's facts, tables and notes on standard output.
    pub fn print(&self) -> Result<()> {
        let mut out = std::io::stdout().lock();
        writeln!(out, "== {} ==", self.title)?;
        for fact in &self.facts {
            writeln!(out, "{fact}")?;
        }
        for table in &self.tables {
            write!(out, "\n{}\n{}", table.title, table.display.render())?;
        }
        if !self.notes.is_empty() || !self.verdicts.is_empty() {
            writeln!(out)?;
        }
        for judgement in &self.verdicts {
            writeln!(out, "* {}", judgement.sentence)?;
        }
        for note in &self.notes {
            writeln!(out, "* {note}")?;
        }
        writeln!(out, "({:.1} s)", self.seconds)?;
        out.flush()?;
        Ok(())
    }

    /// Writes the main table to `csv` (when given) and, when `out` is given, every table as
    /// CSV and every figure as SVG and PNG into that directory (created if needed).
    pub fn write(
        &self,
        csv: Option<&Path>,
        out: Option<&Path>,
        font: Option<&Path>,
    ) -> Result<Written> {
        let mut written = Written::default();
        if let (Some(path), Some(main)) = (csv, self.tables.first()) {
            main.csv.write_csv(path)?;
            written.csv.push(path.to_path_buf());
        }
        let Some(dir) = out else {
            return Ok(written);
        };
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        for table in &self.tables {
            let path = dir.join(self.csv_name(table));
            table.csv.write_csv(&path)?;
            written.csv.push(path);
        }
        if plot::load_font(font)?.is_some() {
            for figure in &self.figures {
                written.figures.extend(plot::write(figure, dir)?);
            }
        } else if !self.figures.is_empty() {
            written.figures_skipped = Some(plot::font_missing_message());
        }
        Ok(written)
    }

    /// The CSV file name of one of this report's tables.
    pub fn csv_name(&self, table: &ReportTable) -> String {
        if self
            .tables
            .first()
            .is_some_and(|main| main.name == table.name)
        {
            format!("{}.csv", self.study)
        } else {
            format!("{}_{}.csv", self.study, table.name)
        }
    }

    /// The anchor of this report's `i`-th verdict box.
    pub fn verdict_anchor(&self, i: usize) -> String {
        format!("{}-verdict-{}", self.study, i + 1)
    }

    /// The report as a section of the HTML page.
    pub fn html(&self, figures_drawn: bool) -> String {
        let mut html = String::new();
        let _ = writeln!(
            html,
            "<section id=\"{study}\">\n<h2>{title}</h2>\n<p>{summary}</p>\n\
             <p class=\"cmd\">Made by <code>{command}</code> ({seconds:.1} s).</p>",
            study = self.study,
            title = escape(&self.title),
            summary = escape(&self.summary),
            command = escape(&self.command),
            seconds = self.seconds,
        );
        if let Some(files) = overview::credit(self.study) {
            let _ = writeln!(
                html,
                "<p class=\"seeds\">Seed document(s): {}</p>",
                escape(&files)
            );
        }
        if !self.facts.is_empty() {
            html.push_str("<ul class=\"facts\">\n");
            for fact in &self.facts {
                let _ = writeln!(html, "<li>{}</li>", escape(fact));
            }
            html.push_str("</ul>\n");
        }
        if !self.notes.is_empty() || !self.verdicts.is_empty() {
            html.push_str(
                "<div class=\"notes\"><b>Findings (verdicts against theory first):</b><ul>\n",
            );
            for (i, judgement) in self.verdicts.iter().enumerate() {
                let _ = writeln!(
                    html,
                    "<li class=\"verdict\" id=\"{}\" data-verdict=\"{}\">{}</li>",
                    self.verdict_anchor(i),
                    judgement.word(),
                    escape(&judgement.sentence)
                );
            }
            for note in &self.notes {
                let _ = writeln!(html, "<li>{}</li>", escape(note));
            }
            html.push_str("</ul></div>\n");
        }
        for figure in &self.figures {
            let name = escape(&figure.name);
            if figures_drawn {
                let _ = writeln!(
                    html,
                    "<figure><a href=\"{name}.png\"><img src=\"{name}.svg\" alt=\"{alt}\" \
                     width=\"{w}\" height=\"{h}\"></a>\n<figcaption>{caption} \
                     (<a href=\"{name}.svg\">SVG</a>, <a href=\"{name}.png\">PNG</a>)\
                     </figcaption></figure>",
                    alt = escape(&figure.title),
                    w = plot::size(figure).0,
                    h = plot::size(figure).1,
                    caption = escape(&figure.caption),
                );
            } else {
                let _ = writeln!(
                    html,
                    "<p class=\"missing\">Figure {name} not drawn: {} — {}</p>",
                    escape(&plot::font_missing_message()),
                    escape(&figure.caption)
                );
            }
        }
        for table in &self.tables {
            let _ = writeln!(
                html,
                "<h3>{title}</h3>\n<p class=\"csv\"><a href=\"{csv}\">{csv}</a></p>",
                title = escape(&table.title),
                csv = escape(&self.csv_name(table)),
            );
            // Long tables fold away; the CSV has them whole.
            if table.display.rows.len() > 40 {
                let _ = writeln!(
                    html,
                    "<details><summary>{} rows (show)</summary>",
                    table.display.rows.len()
                );
                html.push_str(&table_html(&table.display));
                html.push_str("</details>\n");
            } else {
                html.push_str(&table_html(&table.display));
            }
        }
        html.push_str("</section>\n");
        html
    }
}

/// A table as HTML. A column that holds prose (a quote, a reason: some cell over 30
/// characters) is left-aligned, header included; numbers stay right-aligned.
pub fn table_html(table: &Table) -> String {
    let text: Vec<bool> = (0..table.header.len())
        .map(|c| table.rows.iter().any(|row| row[c].chars().count() > 30))
        .collect();
    let class = |c: usize| if text[c] { " class=\"text\"" } else { "" };
    let mut html = String::from("<div class=\"table\"><table>\n<tr>");
    for (c, cell) in table.header.iter().enumerate() {
        let _ = write!(html, "<th{}>{}</th>", class(c), escape(cell));
    }
    html.push_str("</tr>\n");
    for row in &table.rows {
        html.push_str("<tr>");
        for (c, cell) in row.iter().enumerate() {
            let _ = write!(
                html,
                "<td{}>{}</td>",
                class(c),
                escape(&super::group_thousands(cell))
            );
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</table></div>\n");
    html
}

/// Text made safe for HTML.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Writes `dir/index.html`: every report's section, after a header naming the command
/// that made the page.
pub fn write_index(
    dir: &Path,
    reports: &[Report],
    command: &str,
    seconds: f64,
    figures_drawn: bool,
) -> Result<PathBuf> {
    let mut html = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>bloomkit: the seed studies</title>\n<style>\n\
         body { font-family: sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em; \
         color: #222; line-height: 1.45; }\n\
         code { background: #f3f3f3; padding: 0 0.25em; }\n\
         figure { margin: 1.5em 0; } img { max-width: 100%; height: auto; border: 1px solid #ddd; }\n\
         figcaption { font-size: 0.95em; color: #444; }\n\
         .table { overflow-x: auto; } table { border-collapse: collapse; font-size: 0.85em; }\n\
         th, td { border: 1px solid #ccc; padding: 0.15em 0.5em; text-align: right; }\n\
         th { background: #f0f0f0; }\n\
         .notes { background: #fffbe6; border-left: 4px solid #e0c000; padding: 0.3em 1em; }\n\
         .missing { color: #a00; } .facts { color: #444; } .seeds { color: #555; font-style: italic; }\n\
         td { max-width: 28em; } td.text, th.text { text-align: left; }\n\
         td.off { color: #a00; font-weight: bold; } td.on { color: #060; }\n\
         .glance td:first-child, .glance td:nth-child(5), .glance th:nth-child(5) \
         { white-space: nowrap; overflow-wrap: normal; }\n\
         .rule, .page-chi2 { background: #eef4ff; border-left: 4px solid #4070c0; padding: 0.3em 1em; }\n\
         @media print {\n\
         /* Paper has no scrolling: a wide table shrinks and wraps instead of losing its \
         right-hand columns under a scrollbar. */\n\
         body { max-width: none; margin: 0; padding: 0; font-size: 10pt; }\n\
         .table { overflow: visible; }\n\
         table { width: 100%; font-size: 7pt; }\n\
         th, td { max-width: none; padding: 0.1em 0.25em; overflow-wrap: anywhere; }\n\
         /* A number breaks at its spaces only, never inside its digits (its thousands are \
         joined by no-break spaces). */\n\
         td:not(.text) { overflow-wrap: normal; }\n\
         tr, figure, img, .notes li { break-inside: avoid; }\n\
         /* A figure of many panels is taller than a page: it shrinks to fit one page \
         rather than being cut at its foot. */\n\
         img { max-height: 24cm; width: auto; }\n\
         h2, h3 { break-after: avoid; }\n\
         a { color: inherit; text-decoration: none; }\n\
         }\n\
         </style>\n</head>\n<body>\n<h1>bloomkit: the seed studies</h1>\n",
    );
    let _ = writeln!(
        html,
        "<p>Made by <code>{}</code> in {seconds:.0} s. Every study is deterministic by its \
         seed (counts, rates and figures of rates repeat exactly); times are measurements of \
         this machine and vary from run to run. Each section names the command that remakes \
         its files alone.</p>",
        escape(command)
    );
    if !figures_drawn {
        let _ = writeln!(
            html,
            "<p class=\"missing\">{}</p>",
            escape(&plot::font_missing_message())
        );
    }
    html.push_str(&glance_html(reports));
    html.push_str(
        "<ul>\n<li><a href=\"#overview\">The seeds, the kinds, the applications</a></li>\n",
    );
    for report in reports {
        let _ = writeln!(
            html,
            "<li><a href=\"#{}\">{}</a></li>",
            report.study,
            escape(&report.title)
        );
    }
    html.push_str("</ul>\n");
    let studies: Vec<&str> = reports.iter().map(|r| r.study).collect();
    html.push_str(&overview::html(&studies, table_html));
    for report in reports {
        html.push_str(&report.html(figures_drawn));
    }
    html.push_str("</body>\n</html>\n");
    let path = dir.join("index.html");
    std::fs::write(&path, html).with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

/// The whole page's χ²: the sum of every verdict's χ², its degrees of freedom, and both
/// tails — the upper (σ too small or the theory off somewhere) and the lower (σ too generous:
/// the points sit closer to theory than their σ says they can).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PageChi2 {
    /// Σ χ² over the verdicts.
    pub chi2: f64,
    /// Σ degrees of freedom.
    pub dof: usize,
    /// P(χ² ≥ the sum).
    pub upper_p: f64,
    /// P(χ² ≤ the sum).
    pub lower_p: f64,
}

impl PageChi2 {
    /// Whether both tails are at least [`verdict::ALPHA`].
    pub fn passes(&self) -> bool {
        self.upper_p >= verdict::ALPHA && self.lower_p >= verdict::ALPHA
    }
}

/// The whole page's χ² over the verdicts of `reports`.
pub fn page_chi2(reports: &[Report]) -> PageChi2 {
    let (chi2, dof) = reports
        .iter()
        .flat_map(|r| &r.verdicts)
        .fold((0.0, 0), |(x, d), j| {
            (x + j.summary.chi2, d + j.summary.dof)
        });
    let upper_p = verdict::chi2_sf(chi2, dof);
    PageChi2 {
        chi2,
        dof,
        upper_p,
        lower_p: verdict::chi2_cdf(chi2, dof),
    }
}

/// The opening of the page: the rule every verdict follows, the whole page's χ², and one
/// table with a row per verdict box, made from the same [`Judgement`]s as the boxes.
pub fn glance_html(reports: &[Report]) -> String {
    let alpha = verdict::ALPHA;
    let mut html = String::from("<section id=\"verdicts\">\n<h2>The verdicts at a glance</h2>\n");
    let _ = writeln!(
        html,
        "<p class=\"rule\"><b>The rule.</b> Each measured point has the σ it would have if \
         the theory were right, and its deviation z = (measured − theory)/σ. A set of points \
         is <i>on theory</i> unless one of two tests rejects it at α = {alpha}: the \
         <b>largest |z|</b>, its two-sided p corrected for the number of points (Šidák), \
         which catches one far point; and <b>χ² = Σ z²</b>, which catches a modest shift \
         shared by many points. Either rejecting decides, and the box names which did. The \
         χ² takes only points that are independent of each other — one checkpoint per \
         filter, because later checkpoints of the same filter share its bits and their z's \
         move together, so their Σ z² would not follow a χ² law — and only points with at \
         least 5 expected events of each outcome, where z is close to normal. Every judged \
         point counts for the largest |z|; rates of exactly 0 or 1 where theory expects \
         almost no event are left out as trivial.</p>"
    );
    let page = page_chi2(reports);
    let _ = writeln!(
        html,
        "<p class=\"page-chi2\"><b>The page checks its own σ:</b> the verdicts' χ² add up \
         to {:.1} on {} independent points (expected {} ± {:.0}); P(χ² ≥ this) {}, \
         P(χ² ≤ this) {} — {}.</p>",
        page.chi2,
        page.dof,
        page.dof,
        (2.0 * page.dof as f64).sqrt(),
        verdict::p_text(page.upper_p),
        verdict::p_text(page.lower_p),
        if page.passes() {
            format!("both tails at least {alpha}: the σ are neither too tight nor too generous")
        } else if page.lower_p < alpha {
            "FAILS: the points sit closer to theory than their σ allow (σ too generous)".into()
        } else {
            "FAILS: the points sit farther from theory than their σ allow".into()
        }
    );
    html.push_str(
        "<div class=\"table\"><table class=\"glance\">\n<tr><th class=\"text\">Study</th>\
         <th class=\"text\">Seed and its claim</th><th>The seed\u{2019}s number (theory, \
         at the largest deviation)</th><th>Ours (measured ± σ)</th><th>Verdict</th>\
         <th class=\"text\">Deciding test and its p</th></tr>\n",
    );
    for report in reports {
        for (i, j) in report.verdicts.iter().enumerate() {
            let seed = overview::credit(report.study)
                .map_or_else(|| "—".to_owned(), |files| format!("seed {files}"));
            let (seed_number, ours) = j.worst.as_ref().map_or(("—".into(), "—".into()), |c| {
                let (measured, theory) = verdict::sig_pair(c.measured, c.theory);
                (
                    format!("{theory} ({})", escape(&c.label)),
                    format!(
                        "{measured} ± {} ({})",
                        super::sig(c.sd, 2),
                        verdict::sigma(c.z())
                    ),
                )
            });
            let s = &j.summary;
            let test = if s.judged == 0 {
                "—".to_owned()
            } else if !s.on_theory() && s.chi2_p < alpha && s.worst_p >= alpha {
                format!(
                    "χ² = {:.1} on {}: p {}",
                    s.chi2,
                    s.dof,
                    verdict::p_text(s.chi2_p)
                )
            } else {
                let chi = if s.dof == 0 {
                    "no χ² points".to_owned()
                } else {
                    format!(
                        "χ² = {:.1} on {}: p {}",
                        s.chi2,
                        s.dof,
                        verdict::p_text(s.chi2_p)
                    )
                };
                format!(
                    "largest |z| of {}: p {}; {chi}",
                    s.judged,
                    verdict::p_text(s.worst_p)
                )
            };
            let class = if s.on_theory() { "on" } else { "off" };
            let _ = writeln!(
                html,
                "<tr data-verdict=\"{word}\"><td class=\"text\"><a href=\"#{anchor}\">{study}</a></td>\
                 <td class=\"text\">{seed}: {what}</td><td>{seed_number}</td><td>{ours}</td>\
                 <td class=\"{class}\">{word}</td><td class=\"text\">{test}</td></tr>",
                word = j.word(),
                anchor = report.verdict_anchor(i),
                study = escape(report.study),
                seed = escape(&seed),
                what = escape(&j.what),
            );
        }
    }
    html.push_str("</table></div>\n</section>\n");
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_is_escaped() {
        assert_eq!(escape("a<b & \"c\"'"), "a&lt;b &amp; &quot;c&quot;&#39;");
    }

    #[test]
    fn tables_become_html_rows() {
        let mut table = Table::new(["ε", "m"]);
        table.push(vec!["0.01".into(), "<9>".into()]);
        let html = table_html(&table);
        assert!(html.contains("<th>ε</th><th>m</th>"));
        assert!(html.contains("<td>0.01</td><td>&lt;9&gt;</td>"));
    }
}
