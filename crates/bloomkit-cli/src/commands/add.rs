//! `bloomkit add`: add items to a filter file.
//!
//! Some kinds can refuse an item: those that can fill up, when they are full (or at a limit
//! they were given). Then nothing is lost: the items added before the failure are saved
//! with the old ones, and the error says how many were added and which item failed (exit 2).

use std::io::Write;
use std::path::PathBuf;

use anyhow::{anyhow, bail, Result};
use bloomkit::Filter;
use clap::Args;

use super::input::{self, ItemArgs};
use super::store;

/// Arguments of `bloomkit add`.
#[derive(Debug, Args)]
pub struct AddArgs {
    /// The filter file; it is replaced atomically once every item is in (or, if an insert
    /// fails, with the items added before the failure).
    #[arg(value_name = "FILE")]
    pub filter: PathBuf,

    #[command(flatten)]
    pub items: ItemArgs,

    #[command(flatten)]
    pub writer: store::WriterArgs,
}

/// Loads the filter, inserts the items, saves it and says how many were new.
pub fn run(args: AddArgs) -> Result<()> {
    // Held until the save below: a second writer of the file waits and then reads this one's
    // items with the file.
    let _lock = store::lock_for_update(&args.filter, &args.writer)?;
    let mut filter = store::open(&args.filter)?;
    let (mut added, mut present) = (0u64, 0u64);
    // The item whose insert failed, and why.
    let mut refused: Option<(Vec<u8>, bloomkit::Error)> = None;
    let read = input::for_each_item(args.items.source(), "adding", |item| {
        match filter.try_insert(item) {
            Ok(true) => added += 1,
            Ok(false) => present += 1,
            Err(error) => {
                refused = Some((item.to_vec(), error));
                return Err(anyhow!("an insert failed"));
            }
        }
        Ok(())
    });
    if let Some((item, error)) = refused {
        // Every insert before this one succeeded (and a failed insert changes nothing):
        // keep them.
        if added + present > 0 {
            store::save(&filter, &args.filter)?;
        }
        let item = String::from_utf8_lossy(&item);
        let file = args.filter.display();
        let error = refusal(&filter, &error);
        if added + present == 0 {
            bail!(
                "{file}: could not add {item:?}: {error}. Nothing was added; the file is unchanged"
            );
        }
        bail!(
            "{file}: could not add {item:?}: {error}. Saved, from before it: {added} added, \
             {present} already present; {item:?} and the items after it were not added"
        );
    }
    read?;
    store::save(&filter, &args.filter)?;
    let full = past_capacity(&filter);
    let mut out = std::io::stdout().lock();
    // Past capacity most "already present" answers are false positives: say so rather than
    // call them present.
    let present_label = if full.is_some() {
        "answered maybe-present"
    } else {
        "already present"
    };
    writeln!(
        out,
        "{}: added {added}, {present_label} {present}",
        args.filter.display()
    )?;
    out.flush()?;
    if let Some(warning) = full {
        eprintln!("{}: warning: {warning}", args.filter.display());
    }
    Ok(())
}

/// The library's error for an insert the filter refused, in the command line's words: a
/// filter that grows but was built with a limit of layers (`--max-layers`) says which flag
/// to give `create`/`build` instead of the library's builder option.
fn refusal(filter: &bloomkit::AnyFilter, error: &bloomkit::Error) -> String {
    const LIMIT: &str = "max-layers";
    match error {
        bloomkit::Error::Full { kind, reason } if filter.grows() && kind.takes(LIMIT) => {
            let facts = reason
                .split_once(';')
                .map_or(reason.as_str(), |(facts, _)| facts);
            format!(
                "the {kind} filter is full: {facts}. A file's limit cannot be raised: create \
                 a new filter with a larger --{LIMIT} (or without it: no limit) and add the \
                 items again, e.g. `bloomkit build ITEMS.txt --kind {kind} -o NEW`"
            )
        }
        other => other.to_string(),
    }
}

/// Why the filter's answers are no longer worth what it was built for, if they are not.
/// A filter that cannot grow is past capacity when it holds more items than it was built
/// for or its false-positive probability now is more than twice its ε. A filter that
/// grows (as the filter itself says, [`Filter::grows`]: a cuckoo filter grows in
/// RedisBloom's layout only) is never full; it is worth a warning only when growing has
/// raised its rate past twice its ε. Kinds that forget have a stable rate.
fn past_capacity(filter: &bloomkit::AnyFilter) -> Option<String> {
    if filter.kind().forgets() {
        return None;
    }
    let (len, capacity) = (filter.len(), filter.capacity());
    let (now, target) = (filter.expected_fpp(), filter.target_fpp());
    let grows = filter.grows();
    if now <= 2.0 * target && (grows || len <= capacity) {
        return None;
    }
    let (now, target) = (store::probability(now), store::probability(target));
    if grows {
        return Some(format!(
            "the filter grew past the {capacity} items it was built for and holds {len}; \
             a query for an absent item now answers \"maybe\" with probability {now} (it \
             was built for {target}), since every part it grew adds false positives. Build \
             a larger filter (create -n N and add the items again, or build from a file of \
             them) to bring the rate back"
        ));
    }
    Some(format!(
        "the filter is full: it holds {len} items, past the {capacity} it was built for, and \
         a query for an absent item now answers \"maybe\" with probability {now} (it was built \
         for {target}). Answers of \"already present\" are then mostly false positives. Build a \
         larger filter (create -n N and add the items again, or build from a file of them), \
         or use a kind that grows and keeps its rate (--kind {})",
        store::kinds_that(bloomkit::Kind::can_grow),
    ))
}
