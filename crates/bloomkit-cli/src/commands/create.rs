//! `bloomkit create`: an empty filter file.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use bloomkit::registry::{BuildSpec, BITS, HASHES};
use clap::{ArgGroup, Args};

use super::store::{self, common_help, HashingArgs, KindArg, KindOptions};

/// Arguments of `bloomkit create`.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("size").required(true).multiple(true).args(["capacity", "bits"])))]
pub struct CreateArgs {
    /// The kind of filter.
    #[arg(long, value_enum, default_value_t)]
    pub kind: KindArg,

    /// n, the number of items the filter is sized for.
    #[arg(short = 'n', long, value_name = "N", value_parser = store::count,
          allow_negative_numbers = true)]
    pub capacity: Option<u64>,

    /// ε, the false-positive probability wanted at capacity [default: 0.01].
    #[arg(short = 'e', long, value_name = "E", allow_negative_numbers = true)]
    pub fpp: Option<f64>,

    /// m, the number of cells, instead of deriving it from the capacity and ε.
    #[arg(short = 'm', long, value_name = "M", value_parser = store::count,
          allow_negative_numbers = true,
          help = common_help(BITS, "m, instead of deriving it from the capacity and ε"))]
    pub bits: Option<u64>,

    /// k, the number of hash functions, instead of the optimal one.
    #[arg(short = 'k', long, value_name = "K", value_parser = store::count_u32,
          allow_negative_numbers = true,
          help = common_help(HASHES, "k, the number of hash functions, instead of the optimal one"))]
    pub hashes: Option<u32>,

    #[command(flatten)]
    pub hashing: HashingArgs,

    #[command(flatten)]
    pub options: KindOptions,

    /// The filter file to write (replaced if it exists).
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,

    #[command(flatten)]
    pub format: store::FormatArgs,
}

/// Creates the filter and prints a one-line summary.
pub fn run(args: CreateArgs) -> Result<()> {
    let spec = BuildSpec {
        capacity: args.capacity,
        fpp: args.fpp,
        num_cells: args.bits,
        num_hashes: args.hashes,
        ..BuildSpec::default()
    };
    let filter = store::new_filter(args.kind, spec, &args.hashing, &args.options)?;
    store::save_as(&filter, &args.output, args.format.format_version)?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "created {}: {}",
        args.output.display(),
        filter.describe()
    )?;
    out.flush()?;
    Ok(())
}
