//! `bloomkit import --from spark|guava|redis FILE -o OUT`: a filter another system wrote,
//! turned into a bloomkit file that answers as it does.
//!
//! * `redis`: RedisBloom `SCANDUMP` output (RESP replies, `LOADCHUNK` commands, or what
//!   `redis-cli --no-raw BF.SCANDUMP key ITER` prints, call after call:
//!   [`bloomkit::interop::redisbloom::parse_scandump`]). A one-layer Bloom filter becomes
//!   a classic filter with RedisBloom's hashing, one grown to several layers a scalable
//!   filter with RedisBloom's growth, a cuckoo filter a cuckoo filter of RedisBloom's
//!   layout with every sub-filter it grew (both grow on as RedisBloom's would); the
//!   others are refused with the reason.
//! * `spark`, `guava`: the bytes of `BloomFilter.writeTo`. The bits are kept as they are,
//!   with the hashing of the format; the file then answers for items as their bytes (a
//!   string as its UTF-8, Guava's byte-array funnel, Spark's `putBinary`; a `long` would be
//!   its 8 little-endian bytes, which a line cannot spell: query such filters with `check
//!   --format … --items long`).

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use bloomkit::interop::guava::GuavaBloomFilter;
use bloomkit::interop::redisbloom;
use bloomkit::interop::spark::SparkBloomFilter;
use bloomkit::AnyFilter;
use clap::Args;

use super::foreign::{read_file, Foreign};
use super::store;

/// Arguments of `bloomkit import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The format of the input.
    #[arg(long, value_enum)]
    pub from: Foreign,

    /// The foreign filter: a Spark or Guava `writeTo` file, or RedisBloom SCANDUMP output.
    #[arg(value_name = "FILE")]
    pub input: PathBuf,

    /// The bloomkit file to write (replaced if it exists).
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
}

/// Reads the foreign filter, converts it, saves it, and says what it wrote.
pub fn run(args: ImportArgs) -> Result<()> {
    let bytes = read_file(&args.input)?;
    let name = args.input.display();
    let filter: AnyFilter = match args.from {
        Foreign::Redis => redisbloom::parse_scandump(&bytes)
            .with_context(|| format!("{name} is not a valid RedisBloom dump"))?
            .into_filter()
            .with_context(|| format!("{name} cannot be imported"))?,
        Foreign::Guava => GuavaBloomFilter::read_from(&bytes)
            .with_context(|| format!("{name} is not a valid Guava filter"))?
            .into_filter()
            .with_context(|| format!("{name} cannot be imported"))?,
        Foreign::Spark => SparkBloomFilter::read_from(&bytes)
            .with_context(|| format!("{name} is not a valid Spark filter"))?
            .into_filter()
            .with_context(|| format!("{name} cannot be imported"))?,
    };
    store::save(&filter, &args.output)?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "imported {name} -> {}: {}",
        args.output.display(),
        filter.describe()
    )?;
    out.flush()?;
    Ok(())
}
