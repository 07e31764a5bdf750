//! `bloomkit check`: ask a filter about items.
//!
//! Output, one line per item: `ITEM<TAB>maybe` or `ITEM<TAB>no`; with `--present` only the
//! items that may be present, with `--absent` only the ones that are certainly absent (the
//! item alone, so the output can feed another program).

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use bloomkit::Filter;
use clap::Args;

use super::input::{self, ItemArgs, ItemSource};
use super::store;

/// Arguments of `bloomkit check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The filter file.
    #[arg(value_name = "FILE")]
    pub filter: PathBuf,

    #[command(flatten)]
    pub items: ItemArgs,

    /// Print only the items that may be present (without the answer).
    #[arg(long, conflicts_with = "absent")]
    pub present: bool,

    /// Print only the items that are certainly absent (without the answer).
    #[arg(long)]
    pub absent: bool,
}

/// Answers for every item. For a single item given as an argument the exit code is the
/// answer: success for "maybe", 1 for "no".
pub fn run(args: CheckArgs) -> Result<ExitCode> {
    let filter = store::open(&args.filter)?;
    let source = args.items.source();
    let single = matches!(&source, ItemSource::Args(items) if items.len() == 1);
    let mut out = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let mut last_answer = true;
    input::for_each_item(source, "checking", |item| {
        let maybe = filter.contains(item);
        last_answer = maybe;
        if args.present || args.absent {
            if maybe == args.present {
                out.write_all(item)?;
                out.write_all(b"\n")?;
            }
        } else {
            out.write_all(item)?;
            out.write_all(if maybe { b"\tmaybe\n" } else { b"\tno\n" })?;
        }
        Ok(())
    })?;
    out.flush()?;
    Ok(if single && !last_answer {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
