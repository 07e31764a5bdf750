//! `bloomkit ssd`: the buffered Bloom filter on disk (Canim et al., ADMS 2010), for filters
//! larger than memory. It is its own verb rather than a `--kind`: the filter lives in its
//! file and is changed in place, page by page, instead of being loaded, changed and saved
//! whole as the registry's kinds are.
//!
//! * `ssd build INPUT -o FILE --memory 64MiB` — a filter sized for the lines of INPUT,
//!   filled with them through an insert buffer of the given size;
//! * `ssd add FILE [ITEM…]` — more items, through the same buffer;
//! * `ssd check FILE [ITEM…]` — `ITEM<TAB>maybe` / `ITEM<TAB>no`, one page read each;
//! * `ssd info FILE [--json]` — its parameters (the seed as given and as hashed with, as
//!   `info` shows them) and its state.
//!
//! Each prints the page reads and writes it did, the measure the paper is about.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use bloomkit::{BufferedBloomFilter, BufferedOpenOptions, IoStats};
use clap::{Args, Subcommand};

use super::info;
use super::input::{self, ItemArgs};
use super::store::{self, HashArg};

/// The verbs of `bloomkit ssd`.
#[derive(Debug, Subcommand)]
pub enum SsdCommand {
    /// Build an on-disk filter from the lines of a file, with a memory budget for the
    /// insert buffer.
    Build(BuildArgs),
    /// Add items (arguments, or lines of standard input or of --from FILE) to an on-disk
    /// filter.
    Add(AddArgs),
    /// Ask an on-disk filter about items: `ITEM<TAB>maybe` or `ITEM<TAB>no`; for a single
    /// item the exit code is 1 for "no".
    Check(CheckArgs),
    /// Show an on-disk filter's parameters (pages, k, capacity, ε, hashing and seed) and
    /// state, as `info` does for a filter file.
    Info(InfoVerbArgs),
}

/// The memory for pending inserts (16 bytes each): `64MiB`, `512KiB`, `1GiB`, or bytes.
#[derive(Debug, Args)]
pub struct MemoryArg {
    /// Memory for the insert buffer: a byte count with an optional binary unit (KiB, MiB,
    /// GiB). 0 writes every insert at once.
    #[arg(long, value_name = "SIZE", default_value = "64MiB", value_parser = parse_size)]
    pub memory: u64,
}

/// Arguments of `bloomkit ssd build`.
#[derive(Debug, Args)]
pub struct BuildArgs {
    /// The file of items, one per line; "-" reads standard input (spooled to a temporary
    /// file beside the output, since the input is read twice).
    #[arg(value_name = "INPUT")]
    pub input: PathBuf,

    /// The filter file to write (replaced if it exists).
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,

    #[command(flatten)]
    pub epsilon: store::EpsilonArg,

    /// The page size in bytes: a power of two from 128 to 1 MiB.
    #[arg(long, value_name = "BYTES", default_value_t = bloomkit::buffered::DEFAULT_PAGE_SIZE,
          value_parser = store::count_u32, allow_negative_numbers = true)]
    pub page_size: u32,

    #[command(flatten)]
    pub memory: MemoryArg,

    /// The 128-bit hash function.
    #[arg(long = "hash", value_enum, default_value_t)]
    pub function: HashArg,

    /// The per-filter hash seed. With MurmurHash3, seeds 1 to 8 hash items of up to 8 bytes
    /// poorly, so they are hashed (and stored) as the seed + 2⁶³.
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = store::count,
          allow_negative_numbers = true)]
    pub seed: u64,
}

/// Arguments of `bloomkit ssd add`.
#[derive(Debug, Args)]
pub struct AddArgs {
    /// The on-disk filter file.
    #[arg(value_name = "FILE")]
    pub filter: PathBuf,

    #[command(flatten)]
    pub items: ItemArgs,

    #[command(flatten)]
    pub memory: MemoryArg,

    #[command(flatten)]
    pub writer: store::WriterArgs,
}

/// Arguments of `bloomkit ssd check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The on-disk filter file.
    #[arg(value_name = "FILE")]
    pub filter: PathBuf,

    #[command(flatten)]
    pub items: ItemArgs,

    #[command(flatten)]
    pub writer: store::WriterArgs,
}

/// Arguments of `bloomkit ssd info`.
#[derive(Debug, Args)]
pub struct InfoVerbArgs {
    #[command(flatten)]
    pub info: info::InfoArgs,

    #[command(flatten)]
    pub writer: store::WriterArgs,
}

/// Runs one `ssd` verb.
pub fn run(command: SsdCommand) -> Result<ExitCode> {
    match command {
        SsdCommand::Build(args) => build(args).map(|()| ExitCode::SUCCESS),
        SsdCommand::Add(args) => add(args).map(|()| ExitCode::SUCCESS),
        SsdCommand::Check(args) => check(args),
        SsdCommand::Info(args) => info(args).map(|()| ExitCode::SUCCESS),
    }
}

fn build(args: BuildArgs) -> Result<()> {
    let started = Instant::now();
    let input = input::TwiceReadable::new(&args.input, &args.output)?;
    let (file, size) = input::open_input(input.path())?;
    let progress = input::byte_progress(Some(size), "counting");
    let count = input::count_file_lines(file, size, &progress);
    progress.finish_and_clear();
    let count = count.with_context(|| format!("reading {}", input.name()))?;
    if count == 0 {
        bail!(
            "{} is empty: there are no lines to build a filter from",
            input.name()
        );
    }
    let builder = BufferedBloomFilter::builder()
        .capacity(count)
        .fpp(args.epsilon.fpp)
        .page_size(args.page_size)
        .memory_budget(args.memory.memory)
        .hash_function(args.function.into())
        .seed(args.seed);
    // A file already there is replaced once no other command has it open (the library
    // takes its lock); meanwhile this says that it waits.
    let wait = store::WriterArgs { no_wait: false };
    let mut filter = store::take_in_turn(&args.output, &wait, |wait| {
        unless_locked(builder.clone().wait(wait).create(&args.output))
    })
    .with_context(|| format!("cannot create {}", args.output.display()))?;
    let (file, size) = input::open_input(input.path())?;
    let progress = input::byte_progress(Some(size), "inserting");
    let inserted = input::for_each_line(file, &progress, |line| Ok(filter.insert(line)?));
    progress.finish_and_clear();
    inserted.with_context(|| format!("reading {}", input.name()))?;
    filter.flush()?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "built {} from {count} lines of {} in {:.2} s: {}",
        args.output.display(),
        input.name(),
        started.elapsed().as_secs_f64(),
        describe(&filter)
    )?;
    writeln!(out, "{}", io_line(filter.stats(), count, "insert"))?;
    out.flush()?;
    Ok(filter.close()?)
}

/// Opens an on-disk filter. The library locks the file for as long as the filter is open
/// (exclusively to write, shared to read): if another command has it, this says that it
/// waits, or with `--no-wait` fails (`store::take_in_turn`). No lock of the command's own
/// is taken besides: it would conflict with the library's, even within one process.
fn open(
    path: &Path,
    writer: &store::WriterArgs,
    options: BufferedOpenOptions,
) -> Result<BufferedBloomFilter> {
    store::take_in_turn(path, writer, |wait| {
        unless_locked(options.clone().wait(wait).open(path))
    })
}

/// `None` for a file that another open filter holds.
fn unless_locked<T>(result: Result<T, bloomkit::Error>) -> Result<Option<T>, bloomkit::Error> {
    match result {
        Err(bloomkit::Error::Locked { .. }) => Ok(None),
        other => other.map(Some),
    }
}

fn add(args: AddArgs) -> Result<()> {
    // The file is changed in place, page by page: two writers at once would interleave
    // their pages, so the open holds the file's lock until `close`.
    let options = BufferedBloomFilter::options().memory_budget(args.memory.memory);
    let mut filter = open(&args.filter, &args.writer, options)?;
    let added = input::for_each_item(args.items.source(), "adding", |item| {
        Ok(filter.insert(item)?)
    })?;
    filter.flush()?;
    let mut err = std::io::stderr().lock();
    writeln!(err, "{}: added {added}", args.filter.display())?;
    writeln!(err, "{}", io_line(filter.stats(), added, "insert"))?;
    Ok(filter.close()?)
}

fn check(args: CheckArgs) -> Result<ExitCode> {
    // Read-only, with a shared lock: checks run together, need no write permission, and
    // wait for a writer (an `ssd add` flushing), whose half-written pages and journal they
    // never see. The journal of a flush that was interrupted the library replays when this
    // user can write the file; else it says that someone who can must.
    let reader = BufferedBloomFilter::options()
        .memory_budget(0)
        .read_only(true)
        .complete_interrupted_write(true);
    let mut filter = open(&args.filter, &args.writer, reader).map_err(|e| match e
        .downcast_ref::<bloomkit::Error>()
    {
        Some(bloomkit::Error::InterruptedWrite { .. }) => {
            anyhow!("{e}: run `bloomkit ssd check` on it as a user who can write it")
        }
        _ => e,
    })?;
    let mut out = BufWriter::new(std::io::stdout().lock());
    let (mut last, mut buffer) = (true, Vec::new());
    let source = args.items.source();
    let single = matches!(&source, input::ItemSource::Args(items) if items.len() == 1);
    let queries = input::for_each_item(source, "checking", |item| {
        last = filter.contains(item)?;
        buffer.clear();
        buffer.extend_from_slice(item);
        buffer.extend_from_slice(if last { b"\tmaybe\n" } else { b"\tno\n" });
        Ok(out.write_all(&buffer)?)
    })?;
    out.flush()?;
    writeln!(
        std::io::stderr().lock(),
        "{}",
        io_line(filter.stats(), queries, "query")
    )?;
    Ok(if single && !last {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `ssd info`: opened read-only, with a shared lock, as `check` opens it.
fn info(args: InfoVerbArgs) -> Result<()> {
    let reader = BufferedBloomFilter::options()
        .memory_budget(0)
        .read_only(true);
    let filter = open(&args.info.filter, &args.writer, reader)?;
    let hashing = filter.hashing();
    // The seed as given, and as hashed with (moved where MurmurHash3 would hash poorly).
    let seed = hashing.seed_before_move().unwrap_or(hashing.seed);
    let expected_fpp = filter.fpp_at(filter.len());
    // Each fact once: its JSON key, its label in the text (none for a fact the text shows
    // inside another), its value.
    let facts = [
        (
            "kind",
            Some("Kind"),
            Fact::Text {
                json: info::json_string("ssd"),
                text: "buffered Bloom filter on disk (ssd)".to_owned(),
            },
        ),
        ("num_pages", Some("Pages"), Fact::Whole(filter.num_pages())),
        (
            "page_size",
            Some("Page size in bytes"),
            Fact::Whole(filter.page_size().into()),
        ),
        (
            "num_hashes",
            Some("Number of hashes (k)"),
            Fact::Whole(filter.num_hashes().into()),
        ),
        ("capacity", Some("Capacity"), Fact::Whole(filter.capacity())),
        (
            "target_fpp",
            Some("Target FPP"),
            Fact::Probability(filter.target_fpp()),
        ),
        (
            "file_bytes",
            Some("File size in bytes"),
            Fact::Whole(filter.file_bytes()),
        ),
        (
            "hash_function",
            Some("Hash function"),
            Fact::Text {
                json: info::json_string(hashing.function.name()),
                text: hashing.function.name().to_owned(),
            },
        ),
        (
            "seed",
            Some("Seed"),
            Fact::Text {
                json: seed.to_string(),
                text: info::seed_text(seed, hashing.seed),
            },
        ),
        ("hashed_seed", None, Fact::Whole(hashing.seed)),
        ("len", Some("Items inserted"), Fact::Whole(filter.len())),
        (
            "expected_fpp",
            Some("Expected FPP now"),
            Fact::Probability(expected_fpp),
        ),
    ];
    let text = if args.info.json {
        let fields: Vec<(&str, String)> = facts
            .iter()
            .map(|(key, _, fact)| (*key, fact.json()))
            .collect();
        info::json_object(&fields)
    } else {
        facts
            .iter()
            .filter_map(|(_, label, fact)| Some(info::text_line((*label)?, &fact.text())))
            .collect()
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(filter.close()?)
}

/// A value `ssd info` shows, as JSON and as text.
enum Fact {
    /// A count: the same digits in both.
    Whole(u64),
    /// A probability: a JSON number, or the text `info` shows for one.
    Probability(f64),
    /// Anything else, in each form.
    Text { json: String, text: String },
}

impl Fact {
    fn json(&self) -> String {
        match self {
            Fact::Whole(n) => n.to_string(),
            Fact::Probability(p) => info::json_number(*p),
            Fact::Text { json, .. } => json.clone(),
        }
    }

    fn text(&self) -> String {
        match self {
            Fact::Whole(n) => n.to_string(),
            Fact::Probability(p) => store::probability(*p),
            Fact::Text { text, .. } => text.clone(),
        }
    }
}

/// One line about an on-disk filter's parameters.
fn describe(filter: &BufferedBloomFilter) -> String {
    format!(
        "buffered filter on disk: {} pages of {} bytes, k = {}, capacity {} at ε = {}, seed {}, \
         file {}, buffer {} ({} inserts)",
        filter.num_pages(),
        filter.page_size(),
        filter.num_hashes(),
        filter.capacity(),
        store::probability(filter.target_fpp()),
        filter.hashing().seed_text(),
        store::human_bytes(filter.file_bytes()),
        store::human_bytes(filter.memory_budget()),
        filter.buffer_capacity()
    )
}

/// "page reads 12, page writes 12 (0.120 and 0.120 per insert), 1 flush".
fn io_line(stats: IoStats, operations: u64, what: &str) -> String {
    let per = |count: u64| count as f64 / operations.max(1) as f64;
    format!(
        "page reads {}, page writes {} ({:.3} and {:.3} per {what}), {} flushes",
        stats.page_reads,
        stats.page_writes,
        per(stats.page_reads),
        per(stats.page_writes),
        stats.flushes
    )
}

/// A size with an optional binary unit: `64MiB`, `512KiB`, `1GiB`, `4096`. The number is a
/// count as every other count is read ([`store::count`]: `1e6`, `1_000_000`).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    // The unit is the letters at the end (no unit starts with the `e` of `1e6`).
    let number_end = text
        .trim_end_matches(|c: char| c.is_ascii_alphabetic())
        .len();
    let (number, unit) = text.split_at(number_end);
    let shift = match unit {
        "" | "B" => 0,
        "KiB" | "K" | "k" => 10,
        "MiB" | "M" => 20,
        "GiB" | "G" => 30,
        "TiB" | "T" => 40,
        other => {
            return Err(format!(
                "unknown unit {other:?}: use B, KiB, MiB, GiB or TiB"
            ))
        }
    };
    if number.trim().is_empty() {
        return Err(format!("{text:?} is not a size such as 64MiB or 4096"));
    }
    store::count(number)
        .map_err(|e| format!("{text:?} is not a size such as 64MiB or 4096: {e}"))?
        .checked_mul(1 << shift)
        .ok_or_else(|| format!("{text} is too large"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_with_binary_units() {
        assert_eq!(parse_size("64MiB"), Ok(64 << 20));
        assert_eq!(parse_size("512KiB"), Ok(512 << 10));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        // The number is a count as every other: scientific and underscored forms too.
        assert_eq!(parse_size("1e6"), Ok(1_000_000));
        assert_eq!(parse_size("1_000_000"), Ok(1_000_000));
        assert_eq!(parse_size("2e3KiB"), Ok(2_000 << 10));
        assert_eq!(parse_size("64 MiB"), Ok(64 << 20));
        let error = parse_size("1.5MiB").unwrap_err();
        assert!(error.contains("1.5 is not a whole number"), "{error}");
        assert!(parse_size("-1").is_err());
        assert!(parse_size("").is_err());
        assert!(parse_size("MiB").is_err());
        assert!(parse_size("3 parsecs").is_err());
        assert!(parse_size("99999999999999TiB").is_err());
    }
}
