//! `bloomkit create`: an empty filter file.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use clap::{ArgGroup, Args};

use super::store::{self, HashingArgs, KindArg, KindOptions, Sizing};

/// Arguments of `bloomkit create`.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("size").required(true).multiple(true).args(["capacity", "bits"])))]
pub struct CreateArgs {
    /// The kind of filter.
    #[arg(long, value_enum, default_value_t)]
    pub kind: KindArg,

    /// n, the number of items the filter is sized for.
    #[arg(short = 'n', long, value_name = "N")]
    pub capacity: Option<u64>,

    /// ε, the false-positive probability wanted at capacity [default: 0.01].
    #[arg(short = 'e', long, value_name = "E")]
    pub fpp: Option<f64>,

    /// m, instead of deriving it from the capacity and ε: the number of bits (bloom;
    /// blocked and sbbf, rounded up to whole blocks; deletable, collision bitmap included),
    /// counters (counting, vi-counting) or cells (stable). Not for scalable or cuckoo filters.
    #[arg(short = 'm', long, value_name = "M")]
    pub bits: Option<u64>,

    /// k, the number of hash functions, instead of the optimal one. Not for scalable or
    /// cuckoo filters.
    #[arg(short = 'k', long, value_name = "K")]
    pub hashes: Option<u32>,

    #[command(flatten)]
    pub hashing: HashingArgs,

    #[command(flatten)]
    pub options: KindOptions,

    /// The filter file to write (replaced if it exists).
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
}

/// Creates the filter and prints a one-line summary.
pub fn run(args: CreateArgs) -> Result<()> {
    let sizing = Sizing {
        capacity: args.capacity,
        fpp: args.fpp,
        bits: args.bits,
        hashes: args.hashes,
    };
    let filter = store::new_filter(args.kind, sizing, &args.hashing, &args.options)?;
    store::save(&filter, &args.output)?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "created {}: {}",
        args.output.display(),
        store::describe(&filter)
    )?;
    out.flush()?;
    Ok(())
}
