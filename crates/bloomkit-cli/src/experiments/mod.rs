//! The seed studies, rerun on this crate's filters.
//!
//! Each study is a subcommand of `bloomkit experiment` with its own module: it prints what
//! it measured as a [`Table`] on standard output and, with `--csv FILE`, writes the same
//! data as CSV. A new study adds a variant to [`ExperimentCommand`] and a module.

pub mod corpus;
pub mod fpr;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Args, Subcommand};

/// The studies.
#[derive(Debug, Subcommand)]
pub enum ExperimentCommand {
    /// Seed 000: measured against calibrated false-positive rates, on a word list and its
    /// Caesar-shifted words.
    Fpr(fpr::FprArgs),
}

/// Options every study has.
#[derive(Debug, Args)]
pub struct OutputArgs {
    /// Also write the results table to FILE as CSV (with a header row).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
}

/// Runs a study.
pub fn run(command: ExperimentCommand) -> Result<()> {
    match command {
        ExperimentCommand::Fpr(args) => fpr::run(args),
    }
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
    fn text_columns_are_aligned() {
        let text = sample().render();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "  name  value");
        assert_eq!(lines[1], "------  -----");
        assert_eq!(lines[2], "     a      1");
        assert_eq!(lines[3], "b, \"c\"     22");
    }
}
