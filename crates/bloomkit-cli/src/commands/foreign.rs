//! The filters other systems write, as `import`, `export`, `check` and `info` name them:
//! Spark's sketch and Guava's `BloomFilter` (files of their `writeTo` bytes) and
//! RedisBloom's dumps (`SCANDUMP` output; the `LOADCHUNK` commands). The formats themselves
//! live in the library ([`bloomkit::interop`]); here is only how the command line names
//! them and turns a line of input into the bytes each hashes.

use std::path::Path;

use anyhow::{bail, Context, Result};
use bloomkit::interop::guava::{GuavaBloomFilter, GuavaFunnel};
use bloomkit::interop::spark::SparkBloomFilter;
use clap::ValueEnum;

/// A foreign format of `import --from` and `export --to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Foreign {
    /// Spark's `org.apache.spark.util.sketch.BloomFilter` (`writeTo` bytes, versions 1 and 2).
    Spark,
    /// Guava's `BloomFilter` (`writeTo` bytes, strategy MURMUR128_MITZ_64).
    Guava,
    /// RedisBloom 2.4's dump: `SCANDUMP` output in, `LOADCHUNK` commands (RESP) out.
    Redis,
}

/// The format of a file `check` and `info` open.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum FileFormat {
    /// A bloomkit filter file.
    #[default]
    Bloomkit,
    /// Spark's sketch (`writeTo` bytes).
    Spark,
    /// Guava's `BloomFilter` (`writeTo` bytes).
    Guava,
}

/// How a line of input becomes the bytes a Java filter hashes (Guava's funnel; Spark's
/// `putString`/`putLong`/`putBinary`). Not stored in either format: the reader says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum ItemsArg {
    /// The line as a string (its UTF-8 bytes): Guava's `Funnels.stringFunnel(UTF_8)`,
    /// Spark's `putString`.
    #[default]
    Utf8,
    /// The line as a decimal `long` (8 bytes, little-endian): Guava's `Funnels.longFunnel()`,
    /// Spark's `putLong`.
    Long,
    /// The line's bytes as they are: Guava's `Funnels.byteArrayFunnel()`, Spark's `putBinary`.
    Bytes,
}

impl From<ItemsArg> for GuavaFunnel {
    fn from(items: ItemsArg) -> Self {
        match items {
            ItemsArg::Utf8 => GuavaFunnel::Utf8,
            ItemsArg::Long => GuavaFunnel::Long,
            ItemsArg::Bytes => GuavaFunnel::Bytes,
        }
    }
}

/// A Spark or Guava filter opened as it is.
pub enum JavaFilter {
    /// Spark's sketch.
    Spark(SparkBloomFilter),
    /// Guava's filter.
    Guava(GuavaBloomFilter),
}

/// Reads a whole input file, naming it in the error.
pub fn read_file(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))
}

impl JavaFilter {
    /// Opens a file of `format` (not bloomkit's own).
    pub fn open(path: &Path, format: FileFormat) -> Result<Self> {
        let bytes = read_file(path)?;
        let what = |name: &str| format!("{} is not a valid {name} filter", path.display());
        Ok(match format {
            FileFormat::Spark => JavaFilter::Spark(
                SparkBloomFilter::read_from(&bytes).with_context(|| what("Spark"))?,
            ),
            FileFormat::Guava => JavaFilter::Guava(
                GuavaBloomFilter::read_from(&bytes).with_context(|| what("Guava"))?,
            ),
            FileFormat::Bloomkit => unreachable!("bloomkit files are opened by store::open"),
        })
    }

    /// The answer of `mightContain` for one line read as `items`.
    pub fn might_contain(&self, line: &[u8], items: ItemsArg) -> Result<bool> {
        Ok(match items {
            ItemsArg::Long => {
                let v = parse_long(line)?;
                match self {
                    JavaFilter::Spark(f) => f.might_contain_long(v),
                    JavaFilter::Guava(f) => f.might_contain_long(v),
                }
            }
            ItemsArg::Utf8 if std::str::from_utf8(line).is_err() => {
                bail!(
                    "{:?} is not UTF-8; --items bytes takes any bytes",
                    String::from_utf8_lossy(line)
                )
            }
            ItemsArg::Utf8 | ItemsArg::Bytes => match self {
                JavaFilter::Spark(f) => f.might_contain_bytes(line),
                JavaFilter::Guava(f) => f.might_contain_bytes(line),
            },
        })
    }

    /// The facts `info` prints, as `(label, value)`.
    pub fn facts(&self) -> Vec<(&'static str, String)> {
        match self {
            JavaFilter::Spark(f) => vec![
                ("Format", "Spark util.sketch.BloomFilter".to_owned()),
                ("Version", f.version().number().to_string()),
                ("Bits (m)", f.bit_size().to_string()),
                ("Hash functions (k)", f.num_hash_functions().to_string()),
                ("Seed", f.seed().to_string()),
                ("Bits set", f.cardinality().to_string()),
                ("Expected FPP", format!("{:.6e}", f.expected_fpp())),
            ],
            JavaFilter::Guava(f) => vec![
                ("Format", "Guava BloomFilter (MURMUR128_MITZ_64)".to_owned()),
                ("Bits (m)", f.bit_size().to_string()),
                ("Hash functions (k)", f.num_hash_functions().to_string()),
                ("Bits set", f.bit_count().to_string()),
                ("Expected FPP", format!("{:.6e}", f.expected_fpp())),
            ],
        }
    }
}

/// A line as a decimal `long`.
pub fn parse_long(line: &[u8]) -> Result<i64> {
    std::str::from_utf8(line)
        .ok()
        .and_then(|s| s.trim().parse::<i64>().ok())
        .with_context(|| {
            format!(
                "{:?} is not a long (--items long reads each line as a decimal 64-bit integer)",
                String::from_utf8_lossy(line)
            )
        })
}
