//! `bloomkit export`: a filter file rewritten for sending.
//!
//! * Without `--to`: with `--compressed`, as the kind that is sent arithmetic-coded (the
//!   same bits; Mitzenmacher 2002), without it back as the plain kind
//!   ([`AnyFilter::into_compressed`], [`AnyFilter::into_uncompressed`]; the kinds with such
//!   a pair: [`Kind::exports`](bloomkit::Kind::exports)). Every command reads either file
//!   (`check`, `info`, `add`, `merge` …): the compressed file is a kind of its own that is
//!   the plain one in memory.
//! * `--to spark|guava -o OUT`: the bytes Spark's or Guava's `BloomFilter.readFrom` reads,
//!   for a filter hashed as that library hashes (one imported from it).
//! * `--to redis --key KEY`: the `BF.LOADCHUNK` commands (RESP, for `redis-cli --pipe`) that
//!   recreate the filter under KEY in RedisBloom 2.4 or bloomkit's Redis module, to `-o
//!   OUT` or standard output; `--to redis -o OUT` without a key writes the `SCANDUMP`
//!   replies instead, which `import --from redis` reads back; both streamed from the filter
//!   chunk by chunk, without a second copy of it. A classic filter with RedisBloom's
//!   hashing (`create --redisbloom`), a scalable filter with RedisBloom's growth (imported
//!   from a filter that grew in Redis) and a cuckoo filter of RedisBloom's layout (`create
//!   --kind cuckoo --redisbloom`) are RedisBloom filters; the library says why the others
//!   are not ([`bloomkit::interop::redisbloom::FilterDump::new`]).

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use bloomkit::interop::guava::GuavaBloomFilter;
use bloomkit::interop::redisbloom;
use bloomkit::interop::spark::SparkBloomFilter;
use bloomkit::{AnyFilter, Filter, Kind};
use clap::Args;

use super::foreign::Foreign;
use super::store;

/// Arguments of `bloomkit export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The filter file.
    #[arg(value_name = "FILE", help = format!(
        "The filter file: with --compressed, or without it to write the plain kind, a {} \
         filter; with --format-version alone, any kind",
        store::kinds_that(Kind::exports)
    ))]
    pub filter: PathBuf,

    /// Write the filter in another system's format: spark or guava (`writeTo` bytes), redis
    /// (with --key the LOADCHUNK commands that load it, else SCANDUMP replies).
    #[arg(long, value_enum, conflicts_with = "compressed")]
    pub to: Option<Foreign>,

    /// With --to redis: the key the commands load the filter under.
    #[arg(long, value_name = "KEY")]
    pub key: Option<String>,

    /// With --to redis: make a classic filter a scaling RedisBloom filter that adds layers
    /// of N times the capacity once full (without it, NONSCALING, as the bloomkit one); set
    /// a cuckoo filter's expansion to N (without it, its own: 0, never growing, unless it
    /// was made with --expansion or imported; one that has grown sub-filters keeps its own).
    #[arg(long, value_name = "N", value_parser = store::count_u32, allow_negative_numbers = true)]
    pub expansion: Option<u32>,

    /// Write the bit array arithmetic-coded; without it, write the plain kind.
    #[arg(long)]
    pub compressed: bool,

    /// Without --to: write the file in this format version (any kind; `export OLD -o NEW
    /// --format-version 2` gives a version-1 file the per-chunk checksums that let `check`
    /// read only what it needs). Without it, a new file is version 2 and an existing one
    /// keeps its version.
    #[arg(long, value_enum, value_name = "VERSION", conflicts_with = "to")]
    pub format_version: Option<store::FormatVersion>,

    #[command(flatten)]
    pub writer: store::WriterArgs,

    /// The file to write (replaced if it exists); with --to redis --key, standard output
    /// when left out.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// The one-line help of `export`: the kinds it converts, from the registry.
pub fn about() -> String {
    format!(
        "Rewrite a filter for sending: with --compressed as the kind sent arithmetic-coded (the \
         same bits), without it as the plain kind (the kinds that can: {}); with \
         --format-version in that version of bloomkit's format (any kind); with --to \
         spark|guava|redis in another system's format",
        store::kinds_that(Kind::exports)
    )
}

/// Reads the filter, converts it, saves it, and says what the sizes are.
pub fn run(args: ExportArgs) -> Result<()> {
    if args.to != Some(Foreign::Redis) && (args.key.is_some() || args.expansion.is_some()) {
        bail!("--key and --expansion are for --to redis");
    }
    if let Some(to) = args.to {
        return foreign(&args, to);
    }
    let Some(output) = &args.output else {
        bail!("export needs -o FILE (the file to write)");
    };
    // Writing over an existing file (often the input itself, `export A -o A
    // --format-version 2`) is a read-modify-write of it: hold its lock from before the
    // input is read until the save, as `add` and `merge` do.
    let _lock = if output.exists() {
        Some(store::lock_for_update(output, &args.writer)?)
    } else {
        None
    };
    let filter = store::open(&args.filter)?;
    let kind = filter.kind();
    let out: AnyFilter = if kind.exports() {
        if args.compressed {
            filter.into_compressed()?
        } else {
            filter.into_uncompressed()?
        }
    } else if args.format_version.is_some() && !args.compressed {
        // Only the format version changes: the same filter, written again.
        filter
    } else {
        bail!(
            "{} is a {kind} filter; export converts {} filters (a compressed filter is a plain \
             one sent arithmetic-coded), rewrites any kind with --format-version, or writes \
             other systems' formats with --to",
            args.filter.display(),
            store::kinds_that(Kind::exports)
        );
    };
    match args.format_version {
        Some(version) => store::save_as(&out, output, version)?,
        None => store::save(&out, output)?,
    }
    report(&args.filter, output, &out.describe())
}

/// `export --to`: the foreign bytes, written atomically to `-o`, or the Redis commands to
/// standard output.
fn foreign(args: &ExportArgs, to: Foreign) -> Result<()> {
    let filter = store::open(&args.filter)?;
    let name = args.filter.display();
    let (bytes, what) = match to {
        Foreign::Spark => {
            let f = SparkBloomFilter::from_filter(&filter)
                .with_context(|| format!("{name} cannot be written as a Spark filter"))?;
            let what = format!(
                "Spark BloomFilter version {}, m = {}, k = {}",
                f.version().number(),
                f.bit_size(),
                f.num_hash_functions()
            );
            (f.to_bytes(), what)
        }
        Foreign::Guava => {
            let f = GuavaBloomFilter::from_filter(&filter)
                .with_context(|| format!("{name} cannot be written as a Guava filter"))?;
            let what = format!(
                "Guava BloomFilter, m = {}, k = {}",
                f.bit_size(),
                f.num_hash_functions()
            );
            (f.to_bytes(), what)
        }
        Foreign::Redis => return redis(args, filter),
    };
    let Some(output) = &args.output else {
        bail!("export --to needs -o FILE (only --to redis --key writes to standard output)");
    };
    if output.as_os_str().is_empty() {
        bail!("the output file name is empty");
    }
    bloomkit::codec::write_atomically(output, &bytes)
        .with_context(|| format!("cannot write {}", output.display()))?;
    report(&args.filter, output, &what)
}

/// `export --to redis`: the commands (with --key) or the SCANDUMP replies, streamed from the
/// filter chunk by chunk ([`redisbloom::FilterDump`]) to standard output or into the output
/// file (written atomically: a failed export leaves an old file as it was).
fn redis(args: &ExportArgs, filter: AnyFilter) -> Result<()> {
    let name = args.filter.display();
    let items = filter.len();
    let filter = if filter.kind().exports() {
        filter.into_uncompressed()?
    } else {
        filter
    };
    let dump = redisbloom::FilterDump::new(&filter, args.expansion)
        .with_context(|| format!("{name} cannot be written for RedisBloom"))?;
    let write = |out: &mut dyn Write| match &args.key {
        Some(key) => dump.write_commands(key.as_bytes(), out),
        None => dump.write_scandump(out),
    };
    let what = match &args.key {
        Some(key) => format!(
            "{} commands loading key {key:?} ({items} items)",
            dump.load_command()
        ),
        None => format!("RedisBloom SCANDUMP replies ({items} items)"),
    };
    match &args.output {
        None if args.key.is_some() => {
            let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
            write(&mut stdout)?;
            Ok(())
        }
        None => {
            bail!("export --to needs -o FILE (only --to redis --key writes to standard output)")
        }
        Some(output) if output.as_os_str().is_empty() => bail!("the output file name is empty"),
        Some(output) => {
            bloomkit::codec::write_atomically_with(output, |file| {
                let mut out = std::io::BufWriter::new(file);
                write(&mut out)?;
                out.flush()
            })
            .with_context(|| format!("cannot write {}", output.display()))?;
            report(&args.filter, output, &what)
        }
    }
}

fn report(input: &Path, output: &Path, what: &str) -> Result<()> {
    let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    let mut stdout = std::io::stdout().lock();
    writeln!(
        stdout,
        "{} ({}) -> {} ({}): {what}",
        input.display(),
        store::human_bytes(size(input)),
        output.display(),
        store::human_bytes(size(output)),
    )?;
    stdout.flush()?;
    Ok(())
}
