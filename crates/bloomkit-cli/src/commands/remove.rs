//! `bloomkit remove`: remove items from a filter file of a kind that can delete
//! ([`Kind::can_remove`](bloomkit::Kind::can_remove)).
//!
//! Output, one line per item:
//!
//! * `ITEM<TAB>removed` — taken out of the filter;
//! * `ITEM<TAB>kept` — the filter could not take it out (for a kind that removes what lies
//!   in collision-free regions, every one of its bits lies in a region with collisions): it
//!   is still reported present;
//! * `ITEM<TAB>absent` — certainly not in the filter; nothing changed.
//!
//! Then a summary on standard error. The file is replaced atomically once every item has
//! been processed, and only if something was removed. Remove only items that were added:
//! removing a false positive takes away what belongs to other items.

use std::io::{BufWriter, Write};
use std::path::PathBuf;

use anyhow::{anyhow, bail, Context, Result};
use bloomkit::{Error, Filter};
use clap::Args;

use super::input::{self, ItemArgs};
use super::store;

/// Arguments of `bloomkit remove`.
#[derive(Debug, Args)]
pub struct RemoveArgs {
    /// The filter file; it is replaced atomically once every item has been processed.
    #[arg(value_name = "FILE", help = format!(
        "The filter file ({}); it is replaced atomically once every item has been processed",
        store::kinds_that(bloomkit::Kind::can_remove)
    ))]
    pub filter: PathBuf,

    #[command(flatten)]
    pub items: ItemArgs,

    #[command(flatten)]
    pub writer: store::WriterArgs,
}

/// The one-line help of `remove`: the kinds it works for, from the registry.
pub fn about() -> String {
    format!(
        "Remove items from a filter file (the kinds that can: {})",
        store::kinds_that(bloomkit::Kind::can_remove)
    )
}

/// Loads the filter, removes the items, prints what happened to each and saves the filter.
pub fn run(args: RemoveArgs) -> Result<()> {
    // Held until the save: another writer of the file waits (see `store::lock_for_update`).
    let _lock = store::lock_for_update(&args.filter, &args.writer)?;
    let mut filter = store::open(&args.filter)?;
    let kind = filter.kind();
    if !kind.can_remove() {
        bail!(
            "{}: a {kind} filter cannot remove; use --kind {}",
            args.filter.display(),
            store::kinds_that(bloomkit::Kind::can_remove)
        );
    }
    let (mut removed, mut kept, mut absent) = (0u64, 0u64, 0u64);
    let mut out = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    input::for_each_item(args.items.source(), "removing", |item| {
        let answer: &[u8] = match filter.remove(item) {
            Ok(true) => {
                removed += 1;
                b"\tremoved\n"
            }
            Ok(false) => {
                kept += 1;
                b"\tkept\n"
            }
            Err(Error::NotPresent) => {
                absent += 1;
                b"\tabsent\n"
            }
            Err(e) => return Err(e.into()),
        };
        out.write_all(item)
            .and_then(|()| out.write_all(answer))
            .map_err(standard_output)
    })
    .and_then(|_| out.flush().map_err(standard_output))
    .with_context(|| format!("{} is unchanged", args.filter.display()))?;
    if removed > 0 {
        store::save(&filter, &args.filter)?;
    }
    let unchanged = if removed == 0 {
        " (file unchanged)"
    } else {
        ""
    };
    let mut err = std::io::stderr().lock();
    writeln!(
        err,
        "{}: removed {removed}, kept {kept}, absent {absent}{unchanged}",
        args.filter.display()
    )?;
    Ok(())
}

/// A failed write of the answers. Unlike for `check`, a closed pipe is an error here: the
/// filter is then not saved, and the exit code must say so.
fn standard_output(error: std::io::Error) -> anyhow::Error {
    anyhow!("writing to standard output: {error}")
}
