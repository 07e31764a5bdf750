//! `bloomkit check`: ask a filter about items.
//!
//! Output, one line per item: `ITEM<TAB>maybe` or `ITEM<TAB>no`; with `--present` only the
//! items that may be present, with `--absent` only the ones that are certainly absent (the
//! item alone, so the output can feed another program). With `--count` (the kinds that count
//! how often each item was added, [`Kind::counts`]) `ITEM<TAB>COUNT`, 0 for an absent item.
//!
//! The kinds the library can view ([`Kind::can_view`]) are answered from a read-only memory
//! map of the file, which reads (and checks) only the chunks the queries touch: a few
//! items against a filter of gigabytes cost milliseconds (format version 2, the default of
//! `create` and `build`; a version-1 file is checked whole first). `--load` loads the filter instead.
//!
//! With `--format spark|guava` the file is a Spark sketch or a Guava filter as their
//! `writeTo` wrote it, answered as their `mightContain` answers; `--items utf8|long|bytes`
//! says how a line becomes the item (Guava's funnel, Spark's `put…` method).

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Result};
use bloomkit::Kind;
use clap::Args;
use rayon::prelude::*;

use super::foreign::{FileFormat, ItemsArg, JavaFilter};
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

    /// Print how often each item was added, as the filter estimates it.
    #[arg(long, conflicts_with_all = ["present", "absent"], help = format!(
        "Print how often each item was added, as the filter estimates it (`ITEM<TAB>COUNT`; 0 \
         when certainly absent). Only for --kind {}",
        store::kinds_that(Kind::counts)
    ))]
    pub count: bool,

    /// Load the whole filter instead of opening the file as a view (the kinds that can be
    /// viewed are otherwise answered from a read-only memory map of the file, which reads
    /// only the chunks the queries touch).
    #[arg(long)]
    pub load: bool,

    /// The file's format: a bloomkit file, or the bytes of Spark's or Guava's `writeTo`.
    #[arg(long, value_enum, default_value_t)]
    pub format: FileFormat,

    /// With --format spark|guava: how a line becomes an item — utf8 (a string), long (a
    /// decimal 64-bit integer) or bytes (a byte array); Guava's funnel, Spark's put method.
    #[arg(long = "items", id = "items_as", value_enum, value_name = "AS")]
    pub items_as: Option<ItemsArg>,
}

/// Answers for every item. For a single item given as an argument the exit code is the
/// answer: success for "maybe", 1 for "no".
///
/// Lines from a file or standard input are answered on all cores, a block at a time: the
/// block is cut into pieces of whole lines, each piece's answers are written to a buffer of
/// its own, and the buffers are written out in order, so the output is the same as a
/// line-by-line loop would give.
pub fn run(args: CheckArgs) -> Result<ExitCode> {
    if args.format != FileFormat::Bloomkit {
        return run_java(args);
    }
    if args.items_as.is_some() {
        bail!("--items is for --format spark|guava (a bloomkit file hashes a line's bytes)");
    }
    let counts = args.count;
    // A view reads only the chunks the queries touch, for answers and counts alike.
    let filter = store::open_for_queries(&args.filter, !args.load)?;
    if counts && !Kind::counts(filter.kind()) {
        bail!(
            "{}: a {} filter does not count items; --count is for --kind {}",
            args.filter.display(),
            filter.kind(),
            store::kinds_that(Kind::counts)
        );
    }
    let format = Format {
        present: args.present,
        absent: args.absent,
    };
    let answer = |item: &[u8], out: &mut Vec<u8>| -> Result<bool> {
        if counts {
            // The kind counts (checked above); an error is a damaged chunk, never a 0.
            let n = filter.count(item)?;
            out.extend_from_slice(item);
            out.extend_from_slice(format!("\t{n}\n").as_bytes());
            Ok(n > 0)
        } else {
            let maybe = filter.contains(item)?;
            format.append(item, maybe, out);
            Ok(maybe)
        }
    };
    let mut out = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let file = match args.items.source() {
        ItemSource::Args(items) => {
            let (mut buffer, mut maybe) = (Vec::new(), true);
            for item in &items {
                maybe = answer(item.as_encoded_bytes(), &mut buffer)?;
            }
            out.write_all(&buffer)?;
            out.flush()?;
            let single_no = items.len() == 1 && !maybe;
            return Ok(if single_no {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            });
        }
        ItemSource::File(path) => Some(path),
        ItemSource::Stdin => None,
    };
    let threads = rayon::current_num_threads();
    input::with_line_input(file.as_deref(), "checking", |reader, progress| {
        input::for_each_block(reader, progress, |block| {
            let answers: Vec<Vec<u8>> = input::pieces(block, 4 * threads)
                .into_par_iter()
                .map(|piece| -> Result<Vec<u8>> {
                    let mut buffer = Vec::with_capacity(piece.len() + piece.len() / 2);
                    if counts {
                        for item in input::lines(piece) {
                            answer(item, &mut buffer)?;
                        }
                    } else {
                        let items: Vec<&[u8]> = input::lines(piece).collect();
                        for (item, maybe) in items.iter().zip(filter.contains_batch(&items)?) {
                            format.append(item, maybe, &mut buffer);
                        }
                    }
                    Ok(buffer)
                })
                .collect::<Result<_>>()?;
            for answer in answers {
                out.write_all(&answer)?;
            }
            Ok(())
        })
    })?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// `check --format spark|guava`: the Java filter's answers, line after line.
fn run_java(args: CheckArgs) -> Result<ExitCode> {
    if args.count {
        bail!("--count is for bloomkit filters that count; a Spark or Guava filter does not");
    }
    let filter = JavaFilter::open(&args.filter, args.format)?;
    let items = args.items_as.unwrap_or_default();
    let format = Format {
        present: args.present,
        absent: args.absent,
    };
    let mut out = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let file = match args.items.source() {
        ItemSource::Args(list) => {
            let (mut buffer, mut maybe) = (Vec::new(), true);
            for item in &list {
                maybe = filter.might_contain(item.as_encoded_bytes(), items)?;
                format.append(item.as_encoded_bytes(), maybe, &mut buffer);
            }
            out.write_all(&buffer)?;
            out.flush()?;
            return Ok(if list.len() == 1 && !maybe {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            });
        }
        ItemSource::File(path) => Some(path),
        ItemSource::Stdin => None,
    };
    input::with_line_input(file.as_deref(), "checking", |reader, progress| {
        input::for_each_block(reader, progress, |block| {
            let mut buffer = Vec::with_capacity(block.len() + block.len() / 2);
            for item in input::lines(block) {
                let maybe = filter.might_contain(item, items)?;
                format.append(item, maybe, &mut buffer);
            }
            out.write_all(&buffer)?;
            Ok(())
        })
    })?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// What is printed for an item: `ITEM<TAB>maybe` / `ITEM<TAB>no`, or with `--present` /
/// `--absent` only the matching items.
#[derive(Clone, Copy)]
struct Format {
    present: bool,
    absent: bool,
}

impl Format {
    /// Appends the output for `item`, whose answer is `maybe`.
    fn append(self, item: &[u8], maybe: bool, out: &mut Vec<u8>) {
        if self.present || self.absent {
            if maybe == self.present {
                out.extend_from_slice(item);
                out.push(b'\n');
            }
        } else {
            out.extend_from_slice(item);
            out.extend_from_slice(if maybe { b"\tmaybe\n" } else { b"\tno\n" });
        }
    }
}
