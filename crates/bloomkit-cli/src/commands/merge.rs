//! `bloomkit merge`: the union of two filter files of a mergeable kind
//! ([`Kind::can_merge`](bloomkit::Kind::can_merge)), with the same parameters.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;

use super::store;

/// Arguments of `bloomkit merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The first filter file.
    #[arg(value_name = "A")]
    pub first: PathBuf,

    /// The second filter file (same kind, size, number of hashes and hashing as A).
    #[arg(value_name = "B")]
    pub second: PathBuf,

    /// The filter file to write: it answers "maybe" for every item of A and of B.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,

    #[command(flatten)]
    pub writer: store::WriterArgs,
}

/// The one-line help of `merge`: the kinds it works for, from the registry.
pub fn about() -> String {
    format!(
        "Write the union of two filters of the same kind and parameters (the kinds that can: \
         {})",
        store::kinds_that(bloomkit::Kind::can_merge)
    )
}

/// Loads both filters, unions them and saves the result.
pub fn run(args: MergeArgs) -> Result<()> {
    // Merging into an existing file (often A itself: `merge A B -o A`) is a read-modify-write
    // of it: hold its lock from before the inputs are read until the save, as `add` does.
    let _lock = if args.output.exists() {
        Some(store::lock_for_update(&args.output, &args.writer)?)
    } else {
        None
    };
    let mut merged = store::open(&args.first)?;
    let other = store::open(&args.second)?;
    let cannot = || {
        format!(
            "cannot merge {} and {}",
            args.first.display(),
            args.second.display()
        )
    };
    match merged.union(&other) {
        Err(error @ bloomkit::Error::Unsupported { .. }) => bail!(
            "{}: {error}; merge works for {} filters",
            cannot(),
            store::kinds_that(bloomkit::Kind::can_merge)
        ),
        result => result.with_context(cannot)?,
    }
    store::save(&merged, &args.output)?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "merged {} and {} into {}: {}",
        args.first.display(),
        args.second.display(),
        args.output.display(),
        merged.describe()
    )?;
    out.flush()?;
    Ok(())
}
