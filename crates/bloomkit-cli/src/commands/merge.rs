//! `bloomkit merge`: the union of two or more filter files of a mergeable kind
//! ([`Kind::can_merge`](bloomkit::Kind::can_merge)), with the same parameters.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;

use super::store;

/// Arguments of `bloomkit merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The filter files: two or more, of the same kind, size, number of hashes and hashing.
    #[arg(value_name = "FILE", num_args = 2.., required = true)]
    pub inputs: Vec<PathBuf>,

    /// The filter file to write: it answers "maybe" for every item of every input (written
    /// whole or not at all: on any error an existing file is left as it was). A new file is
    /// in format version 2; an existing one keeps its version, as with `add`.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,

    #[command(flatten)]
    pub writer: store::WriterArgs,
}

/// The one-line help of `merge`: the kinds it works for, from the registry.
pub fn about() -> String {
    format!(
        "Write the union of two or more filters of the same kind and parameters (the kinds \
         that can: {})",
        store::kinds_that(bloomkit::Kind::can_merge)
    )
}

/// Loads the filters one after the other, unions each into the first, and saves the result.
pub fn run(args: MergeArgs) -> Result<()> {
    // Merging into an existing file (often the first input itself: `merge A B -o A`) is a
    // read-modify-write of it: hold its lock from before the inputs are read until the
    // save, as `add` does.
    let _lock = if args.output.exists() {
        Some(store::lock_for_update(&args.output, &args.writer)?)
    } else {
        None
    };
    let (first, rest) = args
        .inputs
        .split_first()
        .context("merge needs two or more filter files")?;
    let mut merged = store::open(first)?;
    for path in rest {
        let other = store::open(path)?;
        // Every input must match the first one's kind and parameters, as the union does.
        let cannot = || format!("cannot merge {} and {}", first.display(), path.display());
        match merged.union(&other) {
            Err(error @ bloomkit::Error::Unsupported { .. }) => bail!(
                "{}: {error}; merge works for {} filters",
                cannot(),
                store::kinds_that(bloomkit::Kind::can_merge)
            ),
            result => result.with_context(cannot)?,
        }
    }
    store::save(&merged, &args.output)?;
    let names: Vec<String> = args
        .inputs
        .iter()
        .map(|path| path.display().to_string())
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "merged {} into {}: {}",
        store::list(&names, "and"),
        args.output.display(),
        merged.describe()
    )?;
    out.flush()?;
    Ok(())
}
