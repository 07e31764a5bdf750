//! `bloomkit add`: add items to a filter file.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use bloomkit::Filter;
use clap::Args;

use super::input::{self, ItemArgs};
use super::store;

/// Arguments of `bloomkit add`.
#[derive(Debug, Args)]
pub struct AddArgs {
    /// The filter file; it is replaced atomically once every item is in.
    #[arg(value_name = "FILE")]
    pub filter: PathBuf,

    #[command(flatten)]
    pub items: ItemArgs,
}

/// Loads the filter, inserts the items, saves it and says how many were new.
pub fn run(args: AddArgs) -> Result<()> {
    let mut filter = store::open(&args.filter)?;
    let (mut added, mut present) = (0u64, 0u64);
    input::for_each_item(args.items.source(), "adding", |item| {
        let before = filter.len();
        filter.try_insert(item)?;
        if filter.len() > before {
            added += 1;
        } else {
            present += 1;
        }
        Ok(())
    })?;
    store::save(&filter, &args.filter)?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{}: added {added}, already present {present}",
        args.filter.display()
    )?;
    out.flush()?;
    Ok(())
}
