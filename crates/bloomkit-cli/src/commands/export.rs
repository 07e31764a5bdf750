//! `bloomkit export`: a classic Bloom filter file rewritten for sending — with
//! `--compressed`, as a compressed Bloom filter (the same bits, arithmetic-coded; Mitzenmacher
//! 2002), without it back as a plain classic filter. Every command reads either file
//! (`check`, `info`, `add`, `merge` …): the compressed file is a kind of its own, `compressed`,
//! that is a classic filter in memory.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Result};
use bloomkit::{AnyFilter, CompressedBloomFilter, Filter};
use clap::Args;

use super::store;

/// Arguments of `bloomkit export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The filter file: a `bloom` or `compressed` filter.
    #[arg(value_name = "FILE")]
    pub filter: PathBuf,

    /// Write the bit array arithmetic-coded (kind `compressed`); without it, write a plain
    /// classic filter (kind `bloom`).
    #[arg(long)]
    pub compressed: bool,

    /// The file to write (replaced if it exists).
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
}

/// Reads the filter, converts it, saves it, and says what the sizes are.
pub fn run(args: ExportArgs) -> Result<()> {
    let filter = store::open(&args.filter)?;
    let bloom = match filter {
        AnyFilter::Bloom(f) => f,
        AnyFilter::Compressed(f) => f.into_bloom(),
        other => bail!(
            "{} is a {} filter; export converts bloom and compressed filters (a compressed \
             filter is a classic one sent arithmetic-coded)",
            args.filter.display(),
            other.kind()
        ),
    };
    let out: AnyFilter = if args.compressed {
        CompressedBloomFilter::from_bloom(bloom).into()
    } else {
        bloom.into()
    };
    store::save(&out, &args.output)?;
    let before = std::fs::metadata(&args.filter)
        .map(|m| m.len())
        .unwrap_or(0);
    let after = std::fs::metadata(&args.output)
        .map(|m| m.len())
        .unwrap_or(0);
    let mut stdout = std::io::stdout().lock();
    writeln!(
        stdout,
        "{} ({}) -> {} ({}): {}",
        args.filter.display(),
        store::human_bytes(before),
        args.output.display(),
        store::human_bytes(after),
        store::describe(&out)
    )?;
    stdout.flush()?;
    Ok(())
}
