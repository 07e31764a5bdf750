//! `bloomkit parquet`: the Bloom filters inside Parquet files (the library's
//! [`bloomkit::interop::parquet`]).
//!
//! * `parquet info FILE` — per row group and column: whether the chunk has a filter, its
//!   bytes, the bits set, the distinct values that fill implies and the false-positive rate
//!   it gives, as tab-separated lines under a header line;
//! * `parquet check FILE --column C [VALUE…]` (or values on standard input, one a line) —
//!   `VALUE<TAB>no`, or `VALUE<TAB>maybe<TAB>0,2` naming the row groups that may hold it (a
//!   row group without a filter for the column is always among them): the pruning a query
//!   engine does. Values are read by the column's type (`42`, `2024-03-01`, `-12.50`, text);
//!   for a single value given as an argument the exit code is 1 for "no";
//! * `parquet add-filters IN -o OUT --column C [--fpp ε] [--ndv N]` — a copy of IN with a new
//!   filter in every chunk of the named columns (the pages copied as they are).

use std::io::{BufRead, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use bloomkit::interop::parquet::{add_filters, FilterSizing, ParquetBloomFile};
use clap::{Args, Subcommand};

use super::store;

/// The verbs of `bloomkit parquet`.
#[derive(Debug, Subcommand)]
pub enum ParquetCommand {
    /// Show each row group's and column's Bloom filter: present, bytes, bits set, the
    /// distinct values its fill implies and its false-positive rate (tab-separated).
    Info(InfoArgs),
    /// Which row groups may hold each value: `VALUE<TAB>no` or `VALUE<TAB>maybe<TAB>0,2`.
    /// Values are read by the column's type; without values, lines of standard input.
    Check(CheckArgs),
    /// Write a copy of a Parquet file with split block Bloom filters added (or replaced)
    /// for the named columns, without re-encoding its pages.
    AddFilters(AddFiltersArgs),
}

/// Arguments of `bloomkit parquet info`.
#[derive(Debug, Args)]
pub struct InfoArgs {
    /// The Parquet file.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Only these columns (dotted path or name; repeatable).
    #[arg(long, value_name = "C")]
    pub column: Vec<String>,
}

/// Arguments of `bloomkit parquet check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The Parquet file.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// The column the values belong to (dotted path, or a leaf name if only one has it).
    #[arg(long, value_name = "C")]
    pub column: String,

    /// The values; without any, lines of standard input. Negative numbers are values, not
    /// options.
    #[arg(value_name = "VALUE", allow_negative_numbers = true)]
    pub values: Vec<String>,
}

/// Arguments of `bloomkit parquet add-filters`.
#[derive(Debug, Args)]
pub struct AddFiltersArgs {
    /// The Parquet file to copy (never changed).
    #[arg(value_name = "IN")]
    pub input: PathBuf,

    /// The copy to write (written whole to a temporary file, then renamed into place).
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,

    /// A column to give filters (repeatable, or comma-separated).
    #[arg(long, value_name = "C", required = true, value_delimiter = ',')]
    pub column: Vec<String>,

    /// ε, the false-positive probability of each filter at its number of distinct values.
    #[arg(
        long,
        value_name = "ε",
        default_value_t = 0.01,
        allow_negative_numbers = true
    )]
    pub fpp: f64,

    /// Size every filter for N distinct values (default: each chunk's own count of distinct
    /// values, read from its pages).
    #[arg(long, value_name = "N", value_parser = store::count, allow_negative_numbers = true)]
    pub ndv: Option<u64>,
}

/// Runs a `bloomkit parquet` verb.
pub fn run(command: ParquetCommand) -> Result<ExitCode> {
    match command {
        ParquetCommand::Info(args) => info(args).map(|()| ExitCode::SUCCESS),
        ParquetCommand::Check(args) => check(args),
        ParquetCommand::AddFilters(args) => add(args).map(|()| ExitCode::SUCCESS),
    }
}

fn info(args: InfoArgs) -> Result<()> {
    let file = ParquetBloomFile::open(&args.file)?;
    let columns = if args.column.is_empty() {
        file.columns()
    } else {
        args.column
            .iter()
            .map(|c| file.column(c))
            .collect::<Result<_, _>>()?
    };
    let mut out = BufWriter::new(std::io::stdout().lock());
    writeln!(
        out,
        "row_group\tcolumn\ttype\trows\tfilter\tbytes\tbits_set\tdistinct_implied\tfpr"
    )?;
    for rg in 0..file.num_row_groups() {
        for column in &columns {
            let head = format!(
                "{rg}\t{}\t{}\t{}",
                column.path(),
                column.type_name(),
                file.row_group_rows(rg)
            );
            match file.bloom_filter(rg, column.index())? {
                None => writeln!(out, "{head}\tno\t-\t-\t-\t-")?,
                Some(chunk) => {
                    let implied = chunk.implied_distinct_values();
                    let implied = if implied.is_finite() {
                        format!("{implied:.0}")
                    } else {
                        "full".to_string()
                    };
                    writeln!(
                        out,
                        "{head}\tyes\t{}\t{}\t{implied}\t{:.3e}",
                        chunk.num_bytes(),
                        chunk.bits_set(),
                        chunk.false_positive_rate()
                    )?
                }
            }
        }
    }
    out.flush()?;
    Ok(())
}

fn check(args: CheckArgs) -> Result<ExitCode> {
    let file = ParquetBloomFile::open(&args.file)?;
    let column = file.column(&args.column)?;
    let filters = (0..file.num_row_groups())
        .map(|rg| file.bloom_filter(rg, column.index()))
        .collect::<Result<Vec<_>, _>>()?;
    let mut out = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let mut answer = |value: &str| -> Result<bool> {
        let bytes = column.encode(value)?;
        let groups: Vec<String> = filters
            .iter()
            .enumerate()
            .filter(|(_, f)| f.as_ref().is_none_or(|f| f.might_contain(&bytes)))
            .map(|(rg, _)| rg.to_string())
            .collect();
        if groups.is_empty() {
            writeln!(out, "{value}\tno")?;
        } else {
            writeln!(out, "{value}\tmaybe\t{}", groups.join(","))?;
        }
        Ok(!groups.is_empty())
    };
    if !args.values.is_empty() {
        let mut maybe = true;
        for value in &args.values {
            maybe = answer(value)?;
        }
        out.flush()?;
        return Ok(if args.values.len() == 1 && !maybe {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        });
    }
    let stdin = std::io::stdin().lock();
    for (n, line) in stdin.split(b'\n').enumerate() {
        let mut line = line.context("reading standard input")?;
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        let Ok(value) = std::str::from_utf8(&line) else {
            bail!("standard input, line {}: not UTF-8", n + 1);
        };
        answer(value)?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

fn add(args: AddFiltersArgs) -> Result<()> {
    let sizing = match args.ndv {
        Some(n) => FilterSizing::for_ndv(n, args.fpp),
        None => FilterSizing::distinct(args.fpp),
    };
    let columns: Vec<&str> = args.column.iter().map(String::as_str).collect();
    let added = add_filters(&args.input, &args.output, &columns, sizing)?;
    let mut err = std::io::stderr().lock();
    for a in &added {
        writeln!(
            err,
            "row group {}, {}: {} distinct values, {} bytes{}",
            a.row_group,
            a.column,
            a.distinct_values,
            a.num_bytes,
            if a.replaced { " (replaced)" } else { "" }
        )?;
    }
    writeln!(
        err,
        "wrote {} with {} filters at ε = {}",
        args.output.display(),
        added.len(),
        args.fpp
    )?;
    Ok(())
}
