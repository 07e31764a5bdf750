//! `bloomkit export`: a filter file rewritten for sending — with `--compressed`, as the kind
//! that is sent arithmetic-coded (the same bits; Mitzenmacher 2002), without it back as the
//! plain kind ([`AnyFilter::into_compressed`], [`AnyFilter::into_uncompressed`]; the kinds
//! with such a pair: [`Kind::exports`](bloomkit::Kind::exports)). Every command reads either
//! file (`check`, `info`, `add`, `merge` …): the compressed file is a kind of its own that is
//! the plain one in memory.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Result};
use bloomkit::{AnyFilter, Filter, Kind};
use clap::Args;

use super::store;

/// Arguments of `bloomkit export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The filter file.
    #[arg(value_name = "FILE", help = format!(
        "The filter file: a {} filter", store::kinds_that(Kind::exports)
    ))]
    pub filter: PathBuf,

    /// Write the bit array arithmetic-coded; without it, write the plain kind.
    #[arg(long)]
    pub compressed: bool,

    /// The file to write (replaced if it exists).
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
}

/// The one-line help of `export`: the kinds it converts, from the registry.
pub fn about() -> String {
    format!(
        "Rewrite a filter for sending: with --compressed as the kind sent arithmetic-coded (the \
         same bits), without it as the plain kind (the kinds that can: {}). Every command \
         reads both",
        store::kinds_that(Kind::exports)
    )
}

/// Reads the filter, converts it, saves it, and says what the sizes are.
pub fn run(args: ExportArgs) -> Result<()> {
    let filter = store::open(&args.filter)?;
    let kind = filter.kind();
    if !kind.exports() {
        bail!(
            "{} is a {kind} filter; export converts {} filters (a compressed filter is a plain \
             one sent arithmetic-coded)",
            args.filter.display(),
            store::kinds_that(Kind::exports)
        );
    }
    let out: AnyFilter = if args.compressed {
        filter.into_compressed()?
    } else {
        filter.into_uncompressed()?
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
        out.describe()
    )?;
    stdout.flush()?;
    Ok(())
}
