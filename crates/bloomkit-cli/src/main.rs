//! `bloomkit`: create, fill, query, remove from, inspect and merge filter files, and rerun
//! the seed studies.
//!
//! This file only parses the command line and dispatches; each verb lives in
//! [`commands`], and `experiment` calls the seed studies' crate, [`bloomkit_experiments`].
//!
//! Exit codes: 0 on success; 1 when `check` was asked about a single item that is
//! definitely absent; 2 on any error (bad arguments, unreadable or corrupted files, …).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod commands;

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Approximate-membership filters on the command line.
#[derive(Debug, Parser)]
#[command(
    name = "bloomkit",
    version,
    about = "Approximate-membership filters (Bloom filters and kin) on the command line"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Create an empty filter file sized for a capacity and false-positive probability.
    Create(commands::create::CreateArgs),
    /// Add items (arguments, lines of standard input, or lines of a file) to a filter file.
    ///
    /// If an insert fails (a filter of a kind that can fill up, when it is full), the items
    /// added before the failure are saved with the old ones, and the error says how many
    /// were added and which item failed (exit code 2).
    Add(commands::add::AddArgs),
    /// Build a filter file from a file of lines, sized for the number of lines.
    Build(commands::build::BuildArgs),
    /// Ask a filter whether items may be in it ("maybe") or are certainly not ("no"); with
    /// --count, how often a filter that counts estimates each was added.
    Check(commands::check::CheckArgs),
    /// Remove items from a filter file of a kind that can.
    #[command(about = commands::remove::about(), long_about = format!(
        "{}.\n\nPrints `ITEM<TAB>removed`, `ITEM<TAB>kept` (the filter could not clear any of \
         its cells: still reported present) or `ITEM<TAB>absent` (certainly not in the \
         filter; nothing changed) for each item, then a summary on standard error. Remove \
         only items that were added: removing a false positive can take other items out.",
        commands::remove::about()
    ))]
    Remove(commands::remove::RemoveArgs),
    /// Show a filter's parameters and current state.
    Info(commands::info::InfoVerbArgs),
    /// Write the union of two or more filters of the same kind and parameters.
    #[command(about = commands::merge::about())]
    Merge(commands::merge::MergeArgs),
    /// Rewrite a filter for sending.
    #[command(about = commands::export::about())]
    Export(commands::export::ExportArgs),
    /// Turn a filter another system wrote (Spark's sketch, Guava's BloomFilter, a RedisBloom
    /// SCANDUMP) into a bloomkit file that answers as it does.
    Import(commands::import::ImportArgs),
    /// Build and query a Bloomier filter: a static map from keys to r-bit values, built
    /// once from all of them (`bloomier build KEYS_VALUES.tsv -o F`, `bloomier get F KEY…`).
    ///
    /// `get` prints `KEY<TAB>VALUE` or `KEY<TAB>absent`; for a single absent key the exit
    /// code is 1.
    #[command(subcommand)]
    Bloomier(commands::bloomier::BloomierCommand),
    /// A filter larger than memory, on disk in pages, inserts buffered in memory (the
    /// buffered Bloom filter on SSD): build, add, check, info.
    #[command(subcommand)]
    Ssd(commands::ssd::SsdCommand),
    /// The Bloom filters inside Parquet files: `parquet info FILE`, `parquet check FILE
    /// --column C VALUE…` (which row groups may hold each value) and `parquet add-filters IN
    /// -o OUT --column C` (a copy with filters added, its pages untouched).
    #[command(subcommand)]
    Parquet(commands::parquet::ParquetCommand),
    /// Rerun the seed studies and print (and optionally save) their tables.
    #[command(subcommand)]
    Experiment(bloomkit_experiments::ExperimentCommand),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Create(args) => commands::create::run(args).map(|()| ExitCode::SUCCESS),
        Command::Add(args) => commands::add::run(args).map(|()| ExitCode::SUCCESS),
        Command::Build(args) => commands::build::run(args).map(|()| ExitCode::SUCCESS),
        Command::Check(args) => commands::check::run(args),
        Command::Remove(args) => commands::remove::run(args).map(|()| ExitCode::SUCCESS),
        Command::Info(args) => commands::info::run(args).map(|()| ExitCode::SUCCESS),
        Command::Merge(args) => commands::merge::run(args).map(|()| ExitCode::SUCCESS),
        Command::Export(args) => commands::export::run(args).map(|()| ExitCode::SUCCESS),
        Command::Import(args) => commands::import::run(args).map(|()| ExitCode::SUCCESS),
        Command::Bloomier(command) => commands::bloomier::run(command),
        Command::Ssd(command) => commands::ssd::run(command),
        Command::Parquet(command) => commands::parquet::run(command),
        Command::Experiment(command) => {
            bloomkit_experiments::run(command).map(|()| ExitCode::SUCCESS)
        }
    };
    result.unwrap_or_else(report)
}

/// Prints an error with its chain of causes and returns the error exit code. A closed
/// output pipe (`bloomkit check … | head`) is not an error: the reader had enough.
fn report(error: anyhow::Error) -> ExitCode {
    let broken_pipe = error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    });
    if broken_pipe {
        return ExitCode::SUCCESS;
    }
    let _ = writeln!(std::io::stderr(), "error: {error:#}");
    ExitCode::from(commands::EXIT_ERROR)
}
