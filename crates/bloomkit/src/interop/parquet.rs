//! The split block Bloom filters of Parquet files: read per row group and column chunk, and
//! added to (or replaced in) a copy of a file without decoding or re-encoding its pages.
//!
//! Sources: Apache parquet-format's `BloomFilter.md` (the filter, its hash, its header) and
//! `parquet.thrift` (`ColumnMetaData.bloom_filter_offset` = field 14, `bloom_filter_length` =
//! field 15; `BloomFilterHeader`), `Encodings.md` (the plain encoding that is hashed); the
//! footer, the schema and the pages are read and the footer written by arrow-rs's `parquet`
//! crate. Tested against files written by pyarrow, DuckDB and parquet-rs, and against
//! DuckDB's `parquet_bloom_probe` and parquet-rs's reader (`tests/interop/parquet.rs`).
//!
//! # Where a filter lives
//!
//! Each column chunk's `ColumnMetaData` may name a byte range: `bloom_filter_offset` (and,
//! since parquet-format 2.10, `bloom_filter_length`). There the file holds a Thrift
//! compact-protocol `BloomFilterHeader` followed by the bitset:
//!
//! | field | Thrift | meaning |
//! |---|---|---|
//! | 1 `numBytes` | i32 | bytes of the bitset: 32·z for z blocks |
//! | 2 `algorithm` | union | field 1, `BLOCK`: the split block filter (the only one defined) |
//! | 3 `hash` | union | field 1, `XXHASH`: XXH64, seed 0 (the only one defined) |
//! | 4 `compression` | union | field 1, `UNCOMPRESSED` (the only one defined) |
//!
//! The bitset is [`SplitBlockBloomFilter`]'s ([`to_parquet_bitset`]), bit for bit; any
//! other algorithm, hash or compression is an error here, as it is for other readers.
//!
//! # What is hashed
//!
//! A value is hashed as XXH64 (seed 0) of its plain encoding, without the length prefix that
//! the plain encoding gives byte arrays:
//!
//! | physical type | bytes hashed |
//! |---|---|
//! | `BOOLEAN` | one byte, 0 or 1 (as parquet-rs writes; arrow C++ writes no filter for it) |
//! | `INT32` (also `DATE` days, `DECIMAL` unscaled, `TIME(MILLIS)`) | 4 bytes, little-endian |
//! | `INT64` (also `TIMESTAMP`, `TIME(MICROS/NANOS)`, `DECIMAL` unscaled) | 8 bytes, little-endian |
//! | `INT96` (legacy timestamps) | 12 bytes: nanoseconds of the day (8), Julian day (4), little-endian |
//! | `FLOAT`, `DOUBLE` | 4 or 8 bytes, IEEE 754, little-endian (so `-0.0` ≠ `0.0`) |
//! | `BYTE_ARRAY` (strings, binary, JSON, `DECIMAL`) | the bytes themselves |
//! | `FIXED_LEN_BYTE_ARRAY` (`DECIMAL`, `UUID`, …) | the bytes themselves |
//!
//! [`ParquetColumn::encode`] turns a value written as text into those bytes by the column's
//! physical and logical type: `42`, `2024-03-01` for a date, `2024-03-01 12:00:00.5` for a
//! timestamp (in the column's unit; `Z` or `±HH:MM` shifts a UTC-adjusted one), `-12.50`
//! for a decimal (scaled by the column's scale, stored as the column stores it), a UUID in
//! its 36-character form.
//!
//! # Adding filters
//!
//! [`add_filters`] copies every byte before the footer unchanged (pages, indexes, existing
//! filters), appends one new filter per chosen column chunk, and writes a new footer in which
//! only those chunks' `bloom_filter_offset`/`bloom_filter_length` differ. Since nothing moves,
//! every other offset in the footer stays right. A replaced filter's old bytes stay in the
//! file, unreferenced. The new filter is sized for the chunk's distinct values (read and
//! hashed, not re-encoded) or for a given count, at a given ε ([`FilterSizing`]).
//!
//! ```
//! use bloomkit::interop::parquet::{add_filters, FilterSizing, ParquetBloomFile};
//! use bloomkit::interop::parquet::parquet_rs::{
//!     data_type::Int64Type, file::properties::WriterProperties,
//!     file::writer::SerializedFileWriter, schema::parser::parse_message_type,
//! };
//! use std::sync::Arc;
//!
//! let dir = tempfile::tempdir()?;
//! let (plain, with_filter) = (dir.path().join("a.parquet"), dir.path().join("b.parquet"));
//! // A file of one INT64 column `id`, 0..1000, without Bloom filters (written by parquet-rs).
//! let schema = Arc::new(parse_message_type("message m { required int64 id; }")?);
//! let mut writer = SerializedFileWriter::new(
//!     std::fs::File::create(&plain)?, schema, Arc::new(WriterProperties::default()))?;
//! let mut row_group = writer.next_row_group()?;
//! let mut column = row_group.next_column()?.unwrap();
//! column.typed::<Int64Type>().write_batch(&(0..1000).collect::<Vec<i64>>(), None, None)?;
//! column.close()?;
//! row_group.close()?;
//! writer.close()?;
//!
//! add_filters(&plain, &with_filter, &["id"], FilterSizing::distinct(0.01))?;
//! let file = ParquetBloomFile::open(&with_filter)?;
//! let id = file.column("id")?;
//! let chunk = file.bloom_filter(0, id.index())?.expect("a filter was added");
//! assert!(chunk.filter.contains(&42i64.to_le_bytes()[..]));
//! assert_eq!(file.row_groups_maybe_holding(&id, &id.encode("42")?)?, vec![0]);
//! assert!(file.row_groups_maybe_holding(&id, &id.encode("-5")?)?.is_empty()); // ε = 1%
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`to_parquet_bitset`]: SplitBlockBloomFilter::to_parquet_bitset

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The arrow-rs `parquet` crate this module reads and writes with, re-exported so that a
/// caller (a test writing a file, a program building metadata) uses the same version.
pub use ::parquet as parquet_rs;

use ::parquet::basic::{ConvertedType, LogicalType, TimeUnit, Type as PhysicalType};
use ::parquet::column::reader::{ColumnReader, ColumnReaderImpl};
use ::parquet::data_type::{AsBytes, DataType};
use ::parquet::errors::ParquetError;
use ::parquet::file::metadata::{ParquetMetaData, ParquetMetaDataWriter};
use ::parquet::file::reader::{FileReader, SerializedFileReader};
use ::parquet::schema::types::ColumnDescPtr;

use crate::{Filter, SplitBlockBloomFilter};

/// What can go wrong with a Parquet file, each error naming the file and, where there is
/// one, the row group and column.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ParquetFileError {
    /// The file could not be opened, read or written.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The operating system's error.
        source: io::Error,
    },
    /// The file is not a Parquet file, or its footer is damaged.
    #[error("{}: not a readable Parquet file: {reason}", path.display())]
    NotParquet {
        /// The file.
        path: PathBuf,
        /// What the footer reader said.
        reason: String,
    },
    /// No leaf column has that name or path.
    #[error("{}: no column {column:?}; its columns are {available}", path.display())]
    NoSuchColumn {
        /// The file.
        path: PathBuf,
        /// The name asked for.
        column: String,
        /// The leaf columns' paths, comma-separated.
        available: String,
    },
    /// A column chunk's Bloom filter is damaged or of an unknown algorithm, hash or
    /// compression.
    #[error("{}: row group {row_group}, column {column}: damaged Bloom filter: {reason}", path.display())]
    DamagedFilter {
        /// The file.
        path: PathBuf,
        /// The row group.
        row_group: usize,
        /// The column's path.
        column: String,
        /// What is wrong.
        reason: String,
    },
    /// A column chunk's pages could not be read.
    #[error("{}: row group {row_group}, column {column}: cannot read its values: {reason}", path.display())]
    DamagedData {
        /// The file.
        path: PathBuf,
        /// The row group.
        row_group: usize,
        /// The column's path.
        column: String,
        /// What the page reader said.
        reason: String,
    },
    /// A value given as text does not fit the column's type.
    #[error("column {column} ({column_type}): cannot read {value:?}: {reason}")]
    BadValue {
        /// The column's path.
        column: String,
        /// The column's type, as [`ParquetColumn::type_name`] gives it.
        column_type: String,
        /// The text given.
        value: String,
        /// What was expected.
        reason: String,
    },
    /// An option that cannot be honoured (the output is the input, ε out of range, …).
    #[error("{0}")]
    Invalid(String),
    /// Building a filter failed (ε or the size out of range, memory).
    #[error(transparent)]
    Filter(#[from] crate::Error),
}

type Result<T, E = ParquetFileError> = std::result::Result<T, E>;

fn io_error(context: impl FnOnce() -> String) -> impl FnOnce(io::Error) -> ParquetFileError {
    move |source| ParquetFileError::Io {
        context: context(),
        source,
    }
}

/// A leaf column of a Parquet file's schema: its position, path and types.
#[derive(Clone, Debug)]
pub struct ParquetColumn {
    index: usize,
    descr: ColumnDescPtr,
}

/// How a column's values are written as text (derived from its physical, logical and
/// converted types).
#[derive(Clone, Copy, Debug, PartialEq)]
enum ValueKind {
    Bool,
    Int { bits: u8, signed: bool },
    Float,
    Double,
    Date,
    Time(Unit),
    Timestamp { unit: Unit, utc: bool },
    Int96Timestamp,
    Decimal { scale: u32, precision: u32 },
    Uuid,
    Float16,
    Bytes,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Unit {
    Millis,
    Micros,
    Nanos,
}

impl Unit {
    fn of(unit: &TimeUnit) -> Unit {
        match unit {
            TimeUnit::MILLIS => Unit::Millis,
            TimeUnit::MICROS => Unit::Micros,
            TimeUnit::NANOS => Unit::Nanos,
        }
    }

    fn nanos(self) -> i128 {
        match self {
            Unit::Millis => 1_000_000,
            Unit::Micros => 1_000,
            Unit::Nanos => 1,
        }
    }
}

impl ParquetColumn {
    /// The column's position among the leaf columns (the column chunk's index in a row
    /// group).
    pub fn index(&self) -> usize {
        self.index
    }

    /// The column's dotted path (`id`, `address.city`, `tags.list.element`).
    pub fn path(&self) -> String {
        self.descr.path().string()
    }

    /// The physical type, and the logical (or converted) type when there is one:
    /// `INT64`, `INT32 (DATE)`, `FIXED_LEN_BYTE_ARRAY(16) (DECIMAL(38,2))`.
    pub fn type_name(&self) -> String {
        let physical = match self.descr.physical_type() {
            PhysicalType::FIXED_LEN_BYTE_ARRAY => {
                format!("FIXED_LEN_BYTE_ARRAY({})", self.descr.type_length())
            }
            other => other.to_string(),
        };
        let unit = |u: Unit| match u {
            Unit::Millis => "MILLIS",
            Unit::Micros => "MICROS",
            Unit::Nanos => "NANOS",
        };
        let logical = match self.kind() {
            ValueKind::Decimal { scale, precision } => {
                Some(format!("DECIMAL({precision},{scale})"))
            }
            ValueKind::Date => Some("DATE".into()),
            ValueKind::Time(u) => Some(format!("TIME({})", unit(u))),
            ValueKind::Timestamp { unit: u, utc } => Some(format!(
                "TIMESTAMP({}, {})",
                unit(u),
                if utc { "UTC" } else { "local" }
            )),
            ValueKind::Uuid => Some("UUID".into()),
            ValueKind::Float16 => Some("FLOAT16".into()),
            ValueKind::Int { bits, signed } => match self.descr.converted_type() {
                ConvertedType::NONE if self.descr.logical_type_ref().is_none() => None,
                _ => Some(format!(
                    "INT({bits}, {})",
                    if signed { "signed" } else { "unsigned" }
                )),
            },
            _ => match (self.descr.logical_type_ref(), self.descr.converted_type()) {
                (Some(LogicalType::String), _) => Some("STRING".into()),
                (Some(LogicalType::Enum), _) => Some("ENUM".into()),
                (Some(LogicalType::Json), _) => Some("JSON".into()),
                (Some(LogicalType::Bson), _) => Some("BSON".into()),
                (Some(l), _) => Some(format!("{l:?}")),
                (None, ConvertedType::NONE) => None,
                (None, c) => Some(c.to_string()),
            },
        };
        match logical {
            Some(l) => format!("{physical} ({l})"),
            None => physical,
        }
    }

    fn kind(&self) -> ValueKind {
        let d = &self.descr;
        let decimal = || ValueKind::Decimal {
            scale: d.type_scale().max(0) as u32,
            precision: d.type_precision().max(0) as u32,
        };
        let logical = d.logical_type_ref();
        let converted = d.converted_type();
        match d.physical_type() {
            PhysicalType::BOOLEAN => ValueKind::Bool,
            PhysicalType::FLOAT => ValueKind::Float,
            PhysicalType::DOUBLE => ValueKind::Double,
            PhysicalType::INT96 => ValueKind::Int96Timestamp,
            p @ (PhysicalType::INT32 | PhysicalType::INT64) => {
                let width = if p == PhysicalType::INT32 { 32 } else { 64 };
                match (logical, converted) {
                    (Some(LogicalType::Date), _) | (None, ConvertedType::DATE) => ValueKind::Date,
                    (Some(LogicalType::Decimal(_)), _) | (None, ConvertedType::DECIMAL) => {
                        decimal()
                    }
                    (Some(LogicalType::Time(t)), _) => ValueKind::Time(Unit::of(&t.unit)),
                    (None, ConvertedType::TIME_MILLIS) => ValueKind::Time(Unit::Millis),
                    (None, ConvertedType::TIME_MICROS) => ValueKind::Time(Unit::Micros),
                    (Some(LogicalType::Timestamp(t)), _) => ValueKind::Timestamp {
                        unit: Unit::of(&t.unit),
                        utc: t.is_adjusted_to_u_t_c,
                    },
                    (None, ConvertedType::TIMESTAMP_MILLIS) => ValueKind::Timestamp {
                        unit: Unit::Millis,
                        utc: true,
                    },
                    (None, ConvertedType::TIMESTAMP_MICROS) => ValueKind::Timestamp {
                        unit: Unit::Micros,
                        utc: true,
                    },
                    (Some(LogicalType::Integer(i)), _) => ValueKind::Int {
                        bits: i.bit_width.clamp(8, width) as u8,
                        signed: i.is_signed,
                    },
                    (None, c) => match c {
                        ConvertedType::INT_8 => int(8, true),
                        ConvertedType::INT_16 => int(16, true),
                        ConvertedType::UINT_8 => int(8, false),
                        ConvertedType::UINT_16 => int(16, false),
                        ConvertedType::UINT_32 => int(32, false),
                        ConvertedType::UINT_64 => int(64, false),
                        _ => int(width as u8, true),
                    },
                    _ => int(width as u8, true),
                }
            }
            PhysicalType::BYTE_ARRAY | PhysicalType::FIXED_LEN_BYTE_ARRAY => {
                match (logical, converted) {
                    (Some(LogicalType::Decimal(_)), _) | (None, ConvertedType::DECIMAL) => {
                        decimal()
                    }
                    (Some(LogicalType::Uuid), _) => ValueKind::Uuid,
                    (Some(LogicalType::Float16), _) => ValueKind::Float16,
                    _ => ValueKind::Bytes,
                }
            }
        }
    }

    /// The bytes Parquet hashes for `value`, written as text and read by the column's type
    /// (module docs): an integer's little-endian bytes, a string's bytes, a date's days, a
    /// timestamp in the column's unit, a decimal's unscaled value as the column stores it.
    ///
    /// ```
    /// use bloomkit::interop::parquet::ParquetBloomFile;
    /// use bloomkit::interop::parquet::parquet_rs::{
    ///     file::writer::SerializedFileWriter, schema::parser::parse_message_type,
    /// };
    /// use std::sync::Arc;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("t.parquet");
    /// let schema = "message m { required int32 day (DATE); required int64 price (DECIMAL(12,2)); \
    ///               required binary name (UTF8); }";
    /// let schema = Arc::new(parse_message_type(schema)?);
    /// SerializedFileWriter::new(std::fs::File::create(&path)?, schema, Default::default())?
    ///     .close()?; // no rows: the schema is what matters here
    /// let file = ParquetBloomFile::open(&path)?;
    /// // 2024-03-01 is day 19,783 after 1970-01-01, stored as an INT32.
    /// assert_eq!(file.column("day")?.encode("2024-03-01")?, 19_783i32.to_le_bytes());
    /// // -12.50 at scale 2 is the unscaled -1250, stored as an INT64.
    /// assert_eq!(file.column("price")?.encode("-12.50")?, (-1250i64).to_le_bytes());
    /// assert_eq!(file.column("name")?.encode("Zoë")?, "Zoë".as_bytes());
    /// assert!(file.column("day")?.encode("2023-02-29").is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn encode(&self, value: &str) -> Result<Vec<u8>> {
        let bad = |reason: String| ParquetFileError::BadValue {
            column: self.path(),
            column_type: self.type_name(),
            value: value.to_string(),
            reason,
        };
        let text = value.trim();
        let physical = self.descr.physical_type();
        // A value of the column's physical width: INT32 or INT64 as stored.
        let int_bytes = |v: i128| -> Result<Vec<u8>> {
            match physical {
                PhysicalType::INT32 => i32::try_from(v)
                    .map(|x| x.to_le_bytes().to_vec())
                    .map_err(|_| bad(format!("{v} does not fit the column's 32 bits"))),
                _ => i64::try_from(v)
                    .map(|x| x.to_le_bytes().to_vec())
                    .map_err(|_| bad(format!("{v} does not fit the column's 64 bits"))),
            }
        };
        match self.kind() {
            ValueKind::Bool => match text {
                "true" | "1" => Ok(vec![1]),
                "false" | "0" => Ok(vec![0]),
                _ => Err(bad("expected true or false".into())),
            },
            ValueKind::Int { bits, signed } => {
                let v: i128 = text
                    .parse()
                    .map_err(|_| bad("expected an integer".into()))?;
                let (lo, hi) = if signed {
                    (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
                } else {
                    (0, (1i128 << bits) - 1)
                };
                if v < lo || v > hi {
                    return Err(bad(format!("out of the range {lo}..={hi}")));
                }
                // Unsigned values are stored as the same bits in a signed field.
                let stored = match (physical, signed) {
                    (PhysicalType::INT32, false) => v as u32 as i32 as i128,
                    (_, false) => v as u64 as i64 as i128,
                    _ => v,
                };
                int_bytes(stored)
            }
            ValueKind::Float => text
                .parse::<f32>()
                .map(|x| x.to_le_bytes().to_vec())
                .map_err(|_| bad("expected a number".into())),
            ValueKind::Double => text
                .parse::<f64>()
                .map(|x| x.to_le_bytes().to_vec())
                .map_err(|_| bad("expected a number".into())),
            ValueKind::Date => {
                let days = match text.parse::<i64>() {
                    Ok(d) => d,
                    Err(_) => parse_date(text).map_err(bad)?,
                };
                int_bytes(days as i128)
            }
            ValueKind::Time(unit) => {
                let v = match text.parse::<i64>() {
                    Ok(v) => v as i128,
                    Err(_) => {
                        let nanos = parse_time(text).map_err(bad)?;
                        in_unit(nanos, unit).map_err(bad)?
                    }
                };
                int_bytes(v)
            }
            ValueKind::Timestamp { unit, utc } => {
                let v = match text.parse::<i64>() {
                    Ok(v) => v as i128,
                    Err(_) => {
                        let nanos = parse_timestamp(text, utc).map_err(bad)?;
                        in_unit(nanos, unit).map_err(bad)?
                    }
                };
                int_bytes(v)
            }
            ValueKind::Int96Timestamp => {
                let nanos = parse_timestamp(text, true).map_err(bad)?;
                let day = nanos.div_euclid(NANOS_PER_DAY);
                let of_day = nanos.rem_euclid(NANOS_PER_DAY) as i64;
                let julian = i32::try_from(day + JULIAN_DAY_OF_EPOCH)
                    .map_err(|_| bad("out of INT96's range".into()))?;
                let mut out = of_day.to_le_bytes().to_vec();
                out.extend_from_slice(&julian.to_le_bytes());
                Ok(out)
            }
            ValueKind::Decimal { scale, precision } => {
                let unscaled = parse_decimal(text, scale, precision).map_err(bad)?;
                match physical {
                    PhysicalType::INT32 | PhysicalType::INT64 => int_bytes(unscaled),
                    PhysicalType::FIXED_LEN_BYTE_ARRAY => {
                        let len = self.descr.type_length().max(0) as usize;
                        fixed_be(unscaled, len)
                            .ok_or_else(|| bad(format!("does not fit the column's {len} bytes")))
                    }
                    _ => Ok(minimal_be(unscaled)),
                }
            }
            ValueKind::Uuid => parse_uuid(text).map_err(bad),
            ValueKind::Float16 => Err(bad(
                "FLOAT16 values are not parsed here; no filter writer tested supports them".into(),
            )),
            ValueKind::Bytes => {
                // Strings and binary: the bytes as given (not trimmed).
                let bytes = value.as_bytes().to_vec();
                if physical == PhysicalType::FIXED_LEN_BYTE_ARRAY
                    && bytes.len() != self.descr.type_length().max(0) as usize
                {
                    return Err(bad(format!(
                        "{} bytes, the column holds exactly {}",
                        bytes.len(),
                        self.descr.type_length()
                    )));
                }
                Ok(bytes)
            }
        }
    }

    /// XXH64 (seed 0) of [`encode`](Self::encode)'s bytes: the hash Parquet's filters hold.
    pub fn hash(&self, value: &str) -> Result<u64> {
        Ok(xxhash_rust::xxh64::xxh64(&self.encode(value)?, 0))
    }
}

fn int(bits: u8, signed: bool) -> ValueKind {
    ValueKind::Int { bits, signed }
}

const NANOS_PER_DAY: i128 = 86_400 * 1_000_000_000;
/// The Julian day number of 1970-01-01 (INT96 timestamps count Julian days).
const JULIAN_DAY_OF_EPOCH: i128 = 2_440_588;

/// Days from 1970-01-01 to a proleptic Gregorian date: Howard Hinnant's `days_from_civil`
/// ("chrono-Compatible Low-Level Date Algorithms"): years shifted to start in March, so the
/// leap day ends the year, then 400-year eras of 146,097 days.
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month as i64 + 9) % 12; // March = 0
    let doy = (153 * mp + 2) / 5 + day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn parse_date(text: &str) -> Result<i64, String> {
    let expected = || "expected a date YYYY-MM-DD or a number of days".to_string();
    let (neg, rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text),
    };
    let mut parts = rest.splitn(3, '-');
    let (y, m, d) = match (parts.next(), parts.next(), parts.next()) {
        (Some(y), Some(m), Some(d)) if !y.is_empty() && m.len() == 2 && d.len() == 2 => (y, m, d),
        _ => return Err(expected()),
    };
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if !(digits(y) && digits(m) && digits(d)) || y.len() > 6 {
        return Err(expected());
    }
    let year: i64 = y.parse().map_err(|_| expected())?;
    let year = if neg { -year } else { year };
    let (month, day): (u32, u32) = (m.parse().unwrap_or(0), d.parse().unwrap_or(0));
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days_in = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return Err(format!("month {month} is not 1 to 12")),
    };
    if day == 0 || day > days_in {
        return Err(format!("day {day} is not in month {month} of {year}"));
    }
    Ok(days_from_civil(year, month, day))
}

/// `HH:MM:SS[.fraction]` as nanoseconds since midnight.
fn parse_time(text: &str) -> Result<i128, String> {
    let expected = || "expected HH:MM:SS[.fraction] or a number in the column's unit".to_string();
    let (hms, frac) = match text.split_once('.') {
        Some((a, b)) => (a, Some(b)),
        None => (text, None),
    };
    let parts: Vec<&str> = hms.split(':').collect();
    if parts.len() != 3
        || parts
            .iter()
            .any(|p| p.len() != 2 || !p.bytes().all(|b| b.is_ascii_digit()))
    {
        return Err(expected());
    }
    let (h, m, s): (i128, i128, i128) = (
        parts[0].parse().map_err(|_| expected())?,
        parts[1].parse().map_err(|_| expected())?,
        parts[2].parse().map_err(|_| expected())?,
    );
    if h > 23 || m > 59 || s > 60 {
        return Err(expected());
    }
    let mut nanos = ((h * 60 + m) * 60 + s) * 1_000_000_000;
    if let Some(f) = frac {
        if f.is_empty() || f.len() > 9 || !f.bytes().all(|b| b.is_ascii_digit()) {
            return Err("a fraction of 1 to 9 digits".into());
        }
        let padded = format!("{f:0<9}");
        nanos += padded.parse::<i128>().map_err(|_| expected())?;
    }
    Ok(nanos)
}

/// `YYYY-MM-DD[( |T)HH:MM:SS[.fraction]][Z|±HH:MM]` as nanoseconds since 1970-01-01T00:00;
/// an offset is subtracted (only for a UTC-adjusted column, where it means something).
fn parse_timestamp(text: &str, utc: bool) -> Result<i128, String> {
    let (date, rest) = if text.len() > 10 && text.is_char_boundary(10) {
        (&text[..10], &text[10..])
    } else {
        (text, "")
    };
    let days = parse_date(date)?;
    let mut nanos = days as i128 * NANOS_PER_DAY;
    if rest.is_empty() {
        return Ok(nanos);
    }
    let rest = rest
        .strip_prefix(' ')
        .or_else(|| rest.strip_prefix('T'))
        .ok_or("expected a space or T between date and time")?;
    let (time, offset) = if let Some(t) = rest.strip_suffix('Z') {
        (t, 0i128)
    } else if rest.len() > 6
        && (rest.as_bytes()[rest.len() - 6] == b'+' || rest.as_bytes()[rest.len() - 6] == b'-')
    {
        let (t, o) = rest.split_at(rest.len() - 6);
        let sign = if o.starts_with('-') { -1 } else { 1 };
        let (h, m) = o[1..].split_once(':').ok_or("expected an offset ±HH:MM")?;
        let h: i128 = h.parse().map_err(|_| "expected an offset ±HH:MM")?;
        let m: i128 = m.parse().map_err(|_| "expected an offset ±HH:MM")?;
        (t, sign * (h * 3600 + m * 60) * 1_000_000_000)
    } else {
        (rest, 0)
    };
    if offset != 0 && !utc {
        return Err(
            "the column is not adjusted to UTC; give its local time without an offset".into(),
        );
    }
    nanos += parse_time(time)?;
    Ok(nanos - offset)
}

fn in_unit(nanos: i128, unit: Unit) -> Result<i128, String> {
    if nanos % unit.nanos() != 0 {
        return Err(format!("more precise than the column's unit ({unit:?})"));
    }
    Ok(nanos / unit.nanos())
}

/// A decimal written as text, as its unscaled integer at `scale`, checked against
/// `precision` digits.
fn parse_decimal(text: &str, scale: u32, precision: u32) -> Result<i128, String> {
    let expected = || "expected a decimal number such as -12.50".to_string();
    let (neg, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let (int_part, frac) = digits.split_once('.').unwrap_or((digits, ""));
    if (int_part.is_empty() && frac.is_empty())
        || !int_part
            .bytes()
            .chain(frac.bytes())
            .all(|b| b.is_ascii_digit())
    {
        return Err(expected());
    }
    let frac = frac.trim_end_matches('0');
    if frac.len() > scale as usize {
        return Err(format!(
            "more than the column's {scale} digits after the point"
        ));
    }
    let too_big = || format!("more than the column's {precision} digits");
    let mut v: i128 = 0;
    for b in int_part.bytes().chain(frac.bytes()) {
        v = v
            .checked_mul(10)
            .and_then(|v| v.checked_add((b - b'0') as i128))
            .ok_or_else(too_big)?;
    }
    for _ in frac.len()..scale as usize {
        v = v.checked_mul(10).ok_or_else(too_big)?;
    }
    if precision < 39 && v >= 10i128.pow(precision) {
        return Err(too_big());
    }
    Ok(if neg { -v } else { v })
}

/// Big-endian two's complement in exactly `len` bytes (sign-extended), if it fits.
fn fixed_be(v: i128, len: usize) -> Option<Vec<u8>> {
    let full = v.to_be_bytes();
    if len >= 16 {
        let fill = if v < 0 { 0xff } else { 0 };
        let mut out = vec![fill; len - 16];
        out.extend_from_slice(&full);
        return Some(out);
    }
    let out = full[16 - len..].to_vec();
    // It fits if sign-extending the kept bytes gives the value back.
    let mut back = [if v < 0 { 0xffu8 } else { 0 }; 16];
    back[16 - len..].copy_from_slice(&out);
    (len > 0 && i128::from_be_bytes(back) == v && (out[0] & 0x80 != 0) == (v < 0)).then_some(out)
}

/// Big-endian two's complement in the fewest bytes (Java's `BigInteger.toByteArray`).
fn minimal_be(v: i128) -> Vec<u8> {
    let full = v.to_be_bytes();
    let mut start = 0;
    while start < 15 {
        let (b, next) = (full[start], full[start + 1]);
        if (b == 0 && next & 0x80 == 0) || (b == 0xff && next & 0x80 != 0) {
            start += 1;
        } else {
            break;
        }
    }
    full[start..].to_vec()
}

fn parse_uuid(text: &str) -> Result<Vec<u8>, String> {
    let hex: String = text.chars().filter(|&c| c != '-').collect();
    if hex.len() != 32 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err("expected a UUID such as 123e4567-e89b-12d3-a456-426614174000".into());
    }
    (0..16)
        .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|e| e.to_string()))
        .collect()
}

/// One column chunk's Bloom filter as the file stores it.
#[derive(Clone, Debug)]
pub struct ChunkFilter {
    /// `bloom_filter_offset`: where the header starts.
    pub offset: u64,
    /// The header's length in bytes.
    pub header_bytes: u64,
    /// The filter, its bitset as read (its capacity estimated from the bits set).
    pub filter: SplitBlockBloomFilter,
}

impl ChunkFilter {
    /// The bitset's bytes (`numBytes`: 32 per block).
    pub fn num_bytes(&self) -> u64 {
        self.filter.num_bytes()
    }

    /// The bits that are 1.
    pub fn bits_set(&self) -> u64 {
        self.filter.count_ones()
    }

    /// Whether a value whose plain bytes are `bytes` ([`ParquetColumn::encode`]) may be in
    /// the chunk: Parquet's `filter_check` of their XXH64.
    pub fn might_contain(&self, bytes: &[u8]) -> bool {
        self.filter
            .contains_hash(xxhash_rust::xxh64::xxh64(bytes, 0))
    }

    /// The distinct values the bits set imply: Σ over blocks of ln(1 − x/256)/ln(31/32)
    /// for x bits set in a block (see [`SplitBlockBloomFilter`]'s `estimated_len`).
    pub fn implied_distinct_values(&self) -> f64 {
        self.filter.estimated_len()
    }

    /// The false-positive rate of the filter as it is: a random absent value's chance of
    /// finding its bit set in all eight words of its block, averaged over the blocks.
    pub fn false_positive_rate(&self) -> f64 {
        self.filter.expected_fpp()
    }
}

/// A Parquet file opened for its Bloom filters.
pub struct ParquetBloomFile {
    path: PathBuf,
    file: File,
    /// Where the footer (the Thrift `FileMetaData`) starts: nothing a filter names lies past it.
    footer_start: u64,
    reader: SerializedFileReader<File>,
}

impl std::fmt::Debug for ParquetBloomFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParquetBloomFile")
            .field("path", &self.path)
            .field("row_groups", &self.num_row_groups())
            .finish()
    }
}

/// The most bytes a Bloom filter header is read with when the footer gives no length: the
/// four defined fields take at most 19 bytes; unknown optional fields may follow.
const HEADER_READ_LIMIT: u64 = 256;

impl ParquetBloomFile {
    /// Opens `path` and reads its footer (with arrow-rs's footer reader). Not a Parquet
    /// file, an encrypted footer or a damaged one: an error.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        let open = || File::open(&path).map_err(io_error(|| format!("opening {}", path.display())));
        let file = open()?;
        let file_len = file
            .metadata()
            .map_err(io_error(|| format!("reading {}", path.display())))?
            .len();
        let not_parquet = |reason: String| ParquetFileError::NotParquet {
            path: path.clone(),
            reason,
        };
        let mut tail = [0u8; 8];
        if file_len < 12 {
            return Err(not_parquet(format!("{file_len} bytes is too short")));
        }
        (&file)
            .seek(SeekFrom::Start(file_len - 8))
            .and_then(|_| (&file).read_exact(&mut tail))
            .map_err(io_error(|| format!("reading {}", path.display())))?;
        if &tail[4..] != b"PAR1" {
            return Err(not_parquet(if &tail[4..] == b"PARE" {
                "the footer is encrypted (PARE), which this build does not read".into()
            } else {
                "it does not end in the magic bytes PAR1".into()
            }));
        }
        let metadata_len = u32::from_le_bytes(tail[..4].try_into().expect("4 bytes")) as u64;
        if metadata_len + 8 > file_len - 4 {
            return Err(not_parquet(format!(
                "its footer claims {metadata_len} bytes, more than the file holds"
            )));
        }
        let footer_start = file_len - 8 - metadata_len;
        let reader =
            guard(|| SerializedFileReader::new(open()?).map_err(|e| not_parquet(e.to_string())))
                .map_err(|e| match e {
                Panicked(reason) => not_parquet(reason),
            })??;
        Ok(ParquetBloomFile {
            path,
            file,
            footer_start,
            reader,
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's metadata, as arrow-rs's reader parsed it.
    pub fn metadata(&self) -> &ParquetMetaData {
        self.reader.metadata()
    }

    /// The number of row groups.
    pub fn num_row_groups(&self) -> usize {
        self.metadata().num_row_groups()
    }

    /// The number of rows in row group `row_group`.
    pub fn row_group_rows(&self, row_group: usize) -> i64 {
        self.metadata().row_group(row_group).num_rows()
    }

    /// The leaf columns, in the order of the column chunks.
    pub fn columns(&self) -> Vec<ParquetColumn> {
        self.metadata()
            .file_metadata()
            .schema_descr()
            .columns()
            .iter()
            .enumerate()
            .map(|(index, descr)| ParquetColumn {
                index,
                descr: descr.clone(),
            })
            .collect()
    }

    /// The leaf column of dotted path `name`, or else the only leaf column whose own name is
    /// `name`; an error naming the columns there are.
    pub fn column(&self, name: &str) -> Result<ParquetColumn> {
        let columns = self.columns();
        if let Some(c) = columns.iter().find(|c| c.path() == name) {
            return Ok(c.clone());
        }
        let by_name: Vec<&ParquetColumn> =
            columns.iter().filter(|c| c.descr.name() == name).collect();
        if let [only] = by_name[..] {
            return Ok(only.clone());
        }
        Err(ParquetFileError::NoSuchColumn {
            path: self.path.clone(),
            column: name.to_string(),
            available: columns
                .iter()
                .map(|c| c.path())
                .collect::<Vec<_>>()
                .join(", "),
        })
    }

    fn damaged(
        &self,
        row_group: usize,
        column: usize,
        reason: impl Into<String>,
    ) -> ParquetFileError {
        ParquetFileError::DamagedFilter {
            path: self.path.clone(),
            row_group,
            column: self.columns()[column].path(),
            reason: reason.into(),
        }
    }

    fn read_at(&self, offset: u64, len: u64) -> Result<Vec<u8>> {
        let mut buf = vec![0u8; len as usize];
        (&self.file)
            .seek(SeekFrom::Start(offset))
            .and_then(|_| (&self.file).read_exact(&mut buf))
            .map_err(io_error(|| format!("reading {}", self.path.display())))?;
        Ok(buf)
    }

    /// The Bloom filter of row group `row_group`, column `column` (its index), or `None` if
    /// the chunk has none. A filter that lies outside the file's data, has a damaged header,
    /// another algorithm, hash or compression, or a bitset that is not whole 32-byte blocks,
    /// is an error. Panics if `row_group` or `column` is out of range.
    pub fn bloom_filter(&self, row_group: usize, column: usize) -> Result<Option<ChunkFilter>> {
        let meta = self.metadata().row_group(row_group).column(column);
        let Some(offset) = meta.bloom_filter_offset() else {
            return Ok(None);
        };
        let declared = meta.bloom_filter_length();
        let damaged = |reason: String| self.damaged(row_group, column, reason);
        if offset < 4 || offset as u64 >= self.footer_start {
            return Err(damaged(format!(
                "bloom_filter_offset {offset} is outside the data (4..{})",
                self.footer_start
            )));
        }
        let offset = offset as u64;
        let room = self.footer_start - offset;
        let head_len = match declared {
            Some(len) if len <= 0 || len as u64 > room => {
                return Err(damaged(format!(
                    "bloom_filter_length {len} at offset {offset} runs past the data ({room} bytes left)"
                )))
            }
            Some(len) => (len as u64).min(HEADER_READ_LIMIT),
            None => room.min(HEADER_READ_LIMIT),
        };
        let head = self.read_at(offset, head_len)?;
        let header = BloomFilterHeader::parse(&head).map_err(damaged)?;
        let num_bytes = header.num_bytes as u64;
        let total = header.len as u64 + num_bytes;
        match declared {
            Some(len) if len as u64 != total => {
                return Err(damaged(format!(
                    "bloom_filter_length is {len}, the header and its {num_bytes}-byte bitset take {total}"
                )))
            }
            None if total > room => {
                return Err(damaged(format!(
                    "its {num_bytes}-byte bitset runs past the data ({room} bytes left)"
                )))
            }
            _ => {}
        }
        let bitset = self.read_at(offset + header.len as u64, num_bytes)?;
        let filter = SplitBlockBloomFilter::from_parquet_bitset(&bitset)
            .map_err(|e| damaged(e.to_string()))?;
        Ok(Some(ChunkFilter {
            offset,
            header_bytes: header.len as u64,
            filter,
        }))
    }

    /// The row groups that may hold a value whose plain bytes are `bytes`
    /// ([`ParquetColumn::encode`]): those whose filter for the column says maybe, and those
    /// with no filter for it (nothing rules them out). The pruning a query engine does.
    pub fn row_groups_maybe_holding(
        &self,
        column: &ParquetColumn,
        bytes: &[u8],
    ) -> Result<Vec<usize>> {
        let hash = xxhash_rust::xxh64::xxh64(bytes, 0);
        let mut out = Vec::new();
        for rg in 0..self.num_row_groups() {
            let maybe = match self.bloom_filter(rg, column.index)? {
                Some(chunk) => chunk.filter.contains_hash(hash),
                None => true,
            };
            if maybe {
                out.push(rg);
            }
        }
        Ok(out)
    }

    /// The distinct hashes (XXH64 of the plain bytes, module docs) of the non-null values of
    /// a column chunk, read through arrow-rs's page reader (decoded, never re-encoded).
    pub fn value_hashes(&self, row_group: usize, column: usize) -> Result<HashSet<u64>> {
        let descr = self.columns()[column].descr.clone();
        let damaged = |reason: String| ParquetFileError::DamagedData {
            path: self.path.clone(),
            row_group,
            column: descr.path().string(),
            reason,
        };
        // The chunk's pages must lie inside the data (parquet-rs asserts they start at a
        // non-negative offset; a damaged footer is an error here instead).
        let meta = self.metadata().row_group(row_group).column(column);
        let start = meta
            .dictionary_page_offset()
            .unwrap_or(meta.data_page_offset());
        let len = meta.compressed_size();
        if start < 4 || len < 0 || (start as u64).saturating_add(len as u64) > self.footer_start {
            return Err(damaged(format!(
                "its pages ({len} bytes at offset {start}) lie outside the data (4..{})",
                self.footer_start
            )));
        }
        let read = || -> Result<HashSet<u64>, ParquetError> {
            let rg = self.reader.get_row_group(row_group)?;
            let (def, rep) = (descr.max_def_level() > 0, descr.max_rep_level() > 0);
            let mut out = HashSet::new();
            match rg.get_column_reader(column)? {
                ColumnReader::BoolColumnReader(r) => drain(r, def, rep, &mut out)?,
                ColumnReader::Int32ColumnReader(r) => drain(r, def, rep, &mut out)?,
                ColumnReader::Int64ColumnReader(r) => drain(r, def, rep, &mut out)?,
                ColumnReader::Int96ColumnReader(r) => drain(r, def, rep, &mut out)?,
                ColumnReader::FloatColumnReader(r) => drain(r, def, rep, &mut out)?,
                ColumnReader::DoubleColumnReader(r) => drain(r, def, rep, &mut out)?,
                ColumnReader::ByteArrayColumnReader(r) => drain(r, def, rep, &mut out)?,
                ColumnReader::FixedLenByteArrayColumnReader(r) => drain(r, def, rep, &mut out)?,
            }
            Ok(out)
        };
        match guard(read) {
            Ok(Ok(set)) => Ok(set),
            Ok(Err(e)) => Err(damaged(e.to_string())),
            Err(Panicked(reason)) => Err(damaged(reason)),
        }
    }
}

/// Every non-null value of a column chunk, hashed as Parquet's filters hash it: parquet-rs's
/// `AsBytes` of each physical type is its plain encoding without a length prefix (INT96 its
/// twelve bytes, a boolean one byte).
fn drain<T: DataType>(
    mut reader: ColumnReaderImpl<T>,
    def: bool,
    rep: bool,
    out: &mut HashSet<u64>,
) -> Result<(), ParquetError>
where
    T::T: AsBytes,
{
    const BATCH: usize = 8192;
    let (mut values, mut defs, mut reps) = (Vec::new(), Vec::new(), Vec::new());
    loop {
        values.clear();
        defs.clear();
        reps.clear();
        let (records, _, levels) = reader.read_records(
            BATCH,
            def.then_some(&mut defs),
            rep.then_some(&mut reps),
            &mut values,
        )?;
        out.extend(
            values
                .iter()
                .map(|v| xxhash_rust::xxh64::xxh64(v.as_bytes(), 0)),
        );
        if records == 0 && levels == 0 && values.is_empty() {
            return Ok(());
        }
    }
}

/// A panic inside the foreign reader, turned into an error.
struct Panicked(String);

/// Runs `f`, turning a panic inside arrow-rs's readers on a damaged file into an error: the
/// footer and page readers are meant to return errors, and this holds the promise that a
/// damaged file never aborts a caller even where one does not. The default hook still prints
/// the panic message; the mutation sweep in the tests counts how often this is reached.
fn guard<T>(f: impl FnOnce() -> T) -> Result<T, Panicked> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|payload| {
        let what = payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "a panic".to_string());
        Panicked(format!("the Parquet reader failed: {what}"))
    })
}

/// A parsed `BloomFilterHeader` and the bytes it took.
#[derive(Debug)]
struct BloomFilterHeader {
    num_bytes: u32,
    len: usize,
}

impl BloomFilterHeader {
    /// Reads the header (Thrift compact protocol) at the start of `bytes`. `numBytes` must be
    /// a positive multiple of 32; `algorithm`, `hash` and `compression` must each be their
    /// union's field 1 (`BLOCK`, `XXHASH`, `UNCOMPRESSED`); unknown fields are skipped.
    fn parse(bytes: &[u8]) -> Result<Self, String> {
        let mut r = Compact { bytes, at: 0 };
        let mut num_bytes = None;
        let mut seen = [false; 3];
        let mut last = 0i16;
        while let Some((id, ty)) = r.field_header(&mut last)? {
            match (id, ty) {
                (1, I32) => {
                    let n = r.zigzag()?;
                    if n <= 0 || n % 32 != 0 || n > i32::MAX as i64 {
                        return Err(format!(
                            "numBytes {n} is not a positive multiple of the 32-byte block"
                        ));
                    }
                    num_bytes = Some(n as u32);
                }
                (2..=4, STRUCT) => {
                    let which = r.union_member()?;
                    let name = ["algorithm", "hash", "compression"][id as usize - 2];
                    let known = ["BLOCK", "XXHASH", "UNCOMPRESSED"][id as usize - 2];
                    if which != 1 {
                        return Err(format!(
                            "{name} is member {which} of its union; only 1 ({known}) is defined and read"
                        ));
                    }
                    seen[id as usize - 2] = true;
                }
                (1..=4, _) => {
                    return Err(format!("field {id} has Thrift type {ty}, not the spec's"))
                }
                _ => r.skip(ty, 0)?,
            }
        }
        let num_bytes = num_bytes.ok_or("the header has no numBytes")?;
        for (i, name) in ["algorithm", "hash", "compression"].iter().enumerate() {
            if !seen[i] {
                return Err(format!("the header has no {name}"));
            }
        }
        Ok(BloomFilterHeader {
            num_bytes,
            len: r.at,
        })
    }

    /// The header as this module writes it: numBytes, then each union's field 1, an empty
    /// struct.
    fn write(num_bytes: u32, out: &mut Vec<u8>) {
        out.push(0x10 | I32);
        let mut z = ((num_bytes as i32 as i64) << 1 ^ ((num_bytes as i32 as i64) >> 63)) as u64;
        loop {
            let b = (z & 0x7f) as u8;
            z >>= 7;
            if z == 0 {
                out.push(b);
                break;
            }
            out.push(b | 0x80);
        }
        for _ in 0..3 {
            // Field +1, a struct (the union); in it field 1, an empty struct; two stops.
            out.extend_from_slice(&[0x10 | STRUCT, 0x10 | STRUCT, 0, 0]);
        }
        out.push(0);
    }
}

const I32: u8 = 5;
const STRUCT: u8 = 12;

/// The Thrift compact protocol, as much of it as a header needs (reading, with skipping of
/// unknown fields to a bounded depth). Every short read is an error.
struct Compact<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Compact<'_> {
    fn byte(&mut self) -> Result<u8, String> {
        let b = *self
            .bytes
            .get(self.at)
            .ok_or_else(|| format!("the header is cut short at byte {}", self.at))?;
        self.at += 1;
        Ok(b)
    }

    fn varint(&mut self) -> Result<u64, String> {
        let mut v = 0u64;
        for shift in (0..70).step_by(7) {
            let b = self.byte()?;
            if shift == 63 && b > 1 {
                return Err("a varint overflows 64 bits".into());
            }
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("a varint runs past 10 bytes".into())
    }

    fn zigzag(&mut self) -> Result<i64, String> {
        let v = self.varint()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    /// The next field's id and type, or `None` at the struct's stop.
    fn field_header(&mut self, last: &mut i16) -> Result<Option<(i16, u8)>, String> {
        let b = self.byte()?;
        if b == 0 {
            return Ok(None);
        }
        let ty = b & 0x0f;
        let delta = (b >> 4) as i16;
        let id = if delta == 0 {
            i16::try_from(self.zigzag()?).map_err(|_| "a field id overflows".to_string())?
        } else {
            last.checked_add(delta).ok_or("a field id overflows")?
        };
        *last = id;
        Ok(Some((id, ty)))
    }

    /// A union of empty structs: which member it holds (its one field's id).
    fn union_member(&mut self) -> Result<i16, String> {
        let mut last = 0;
        let (id, ty) = self.field_header(&mut last)?.ok_or("an empty union")?;
        if ty != STRUCT {
            return Err(format!(
                "union member {id} has Thrift type {ty}, not a struct"
            ));
        }
        self.skip(STRUCT, 1)?;
        if self.field_header(&mut last)?.is_some() {
            return Err("a union holds more than one member".into());
        }
        Ok(id)
    }

    fn skip(&mut self, ty: u8, depth: u32) -> Result<(), String> {
        if depth > 32 {
            return Err("Thrift structures nest too deep".into());
        }
        match ty {
            1 | 2 => Ok(()), // booleans are in the type nibble
            3 => self.byte().map(drop),
            4..=6 => self.varint().map(drop),
            7 => (0..8).try_for_each(|_| self.byte().map(drop)),
            8 => {
                let n = self.varint()?;
                let end = (self.at as u64)
                    .checked_add(n)
                    .filter(|&e| e <= self.bytes.len() as u64);
                self.at = end.ok_or("a binary field runs past the header")? as usize;
                Ok(())
            }
            9 | 10 => {
                let b = self.byte()?;
                let n = if b >> 4 == 15 {
                    self.varint()?
                } else {
                    (b >> 4) as u64
                };
                let elem = b & 0x0f;
                for _ in 0..n {
                    if self.at >= self.bytes.len() {
                        return Err("a list runs past the header".into());
                    }
                    self.skip_element(elem, depth + 1)?;
                }
                Ok(())
            }
            11 => {
                let n = self.varint()?;
                if n == 0 {
                    return Ok(());
                }
                let kv = self.byte()?;
                for _ in 0..n {
                    if self.at >= self.bytes.len() {
                        return Err("a map runs past the header".into());
                    }
                    self.skip_element(kv >> 4, depth + 1)?;
                    self.skip_element(kv & 0x0f, depth + 1)?;
                }
                Ok(())
            }
            STRUCT => {
                let mut last = 0;
                while let Some((_, t)) = self.field_header(&mut last)? {
                    self.skip(t, depth + 1)?;
                }
                Ok(())
            }
            other => Err(format!("unknown Thrift type {other}")),
        }
    }

    /// An element of a list, set or map: booleans take a byte there.
    fn skip_element(&mut self, ty: u8, depth: u32) -> Result<(), String> {
        if ty == 1 || ty == 2 {
            return self.byte().map(drop);
        }
        self.skip(ty, depth)
    }
}

/// How [`add_filters`] sizes each new filter: ε, and the number of distinct values it is
/// sized for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FilterSizing {
    /// The false-positive probability wanted at that count.
    pub fpp: f64,
    /// The count of distinct values; `None`: each chunk's own count of distinct values (read
    /// and hashed).
    pub ndv: Option<u64>,
}

impl FilterSizing {
    /// Each chunk's filter sized for its own distinct values at ε.
    pub fn distinct(fpp: f64) -> Self {
        FilterSizing { fpp, ndv: None }
    }

    /// Every chunk's filter sized for `ndv` distinct values at ε.
    pub fn for_ndv(ndv: u64, fpp: f64) -> Self {
        FilterSizing {
            fpp,
            ndv: Some(ndv),
        }
    }
}

/// What [`add_filters`] wrote for one column chunk.
#[derive(Clone, Debug, PartialEq)]
pub struct AddedFilter {
    /// The row group.
    pub row_group: usize,
    /// The column's path.
    pub column: String,
    /// The distinct values found in the chunk.
    pub distinct_values: u64,
    /// The bitset's bytes (32 per block).
    pub num_bytes: u64,
    /// Whether the chunk had a filter before (now unreferenced).
    pub replaced: bool,
}

/// Writes to `output` a copy of the Parquet file `input` in which every chunk of the named
/// `columns` has a new split block Bloom filter, sized by `sizing`; see the module docs for
/// what is copied and what changes. The data pages are copied as bytes, never decoded into
/// new ones; the values are read only to be hashed.
///
/// The output is written to a temporary file and renamed into place: a failure leaves any
/// old `output` as it was. `output` may not be `input` (an error, checked before anything
/// is written). An unknown column, a file that is not Parquet, or a damaged chunk: an error.
pub fn add_filters(
    input: impl AsRef<Path>,
    output: impl AsRef<Path>,
    columns: &[&str],
    sizing: FilterSizing,
) -> Result<Vec<AddedFilter>> {
    let (input, output) = (input.as_ref(), output.as_ref());
    crate::params::validate_fpp(sizing.fpp)?;
    if sizing.ndv == Some(0) {
        return Err(ParquetFileError::Invalid(
            "the number of distinct values must be at least 1".into(),
        ));
    }
    if columns.is_empty() {
        return Err(ParquetFileError::Invalid("no column named".into()));
    }
    if same_file(input, output) {
        return Err(ParquetFileError::Invalid(format!(
            "the output {} is the input; write the copy elsewhere",
            output.display()
        )));
    }
    let file = ParquetBloomFile::open(input)?;
    let mut chosen = Vec::new();
    for name in columns {
        let c = file.column(name)?;
        if !chosen.iter().any(|x: &ParquetColumn| x.index == c.index) {
            chosen.push(c);
        }
    }

    // The filters, each as header + bitset, placed after the copied bytes.
    let mut appended = Vec::new();
    let mut report = Vec::new();
    let mut placed = Vec::new(); // (row group, column, offset, length)
    for rg in 0..file.num_row_groups() {
        for column in &chosen {
            let hashes = file.value_hashes(rg, column.index)?;
            let ndv = sizing.ndv.unwrap_or(hashes.len() as u64).max(1);
            let mut filter = SplitBlockBloomFilter::with_capacity(ndv, sizing.fpp)?;
            for &h in &hashes {
                filter.insert_hash(h);
            }
            let bitset = filter.to_parquet_bitset();
            let offset = file.footer_start + appended.len() as u64;
            let start = appended.len();
            BloomFilterHeader::write(bitset.len() as u32, &mut appended);
            appended.extend_from_slice(&bitset);
            let length = (appended.len() - start) as u64;
            if i32::try_from(length).is_err() || i64::try_from(offset).is_err() {
                return Err(ParquetFileError::Invalid(format!(
                    "a {length}-byte filter at offset {offset} does not fit Parquet's fields"
                )));
            }
            placed.push((rg, column.index, offset as i64, length as i32));
            report.push(AddedFilter {
                row_group: rg,
                column: column.path(),
                distinct_values: hashes.len() as u64,
                num_bytes: bitset.len() as u64,
                replaced: file
                    .metadata()
                    .row_group(rg)
                    .column(column.index)
                    .bloom_filter_offset()
                    .is_some(),
            });
        }
    }

    // The footer: the same metadata, the chosen chunks pointing at their new filters.
    let mut builder = file.metadata().clone().into_builder().set_page_index(None);
    let row_groups = builder.take_row_groups();
    let mut new_groups = Vec::with_capacity(row_groups.len());
    for (rg, group) in row_groups.into_iter().enumerate() {
        let mut group_builder = group.into_builder();
        let chunks = group_builder.take_columns();
        let mut new_chunks = Vec::with_capacity(chunks.len());
        for (ci, chunk) in chunks.into_iter().enumerate() {
            match placed.iter().find(|p| p.0 == rg && p.1 == ci) {
                Some(&(_, _, offset, length)) => new_chunks.push(
                    chunk
                        .into_builder()
                        .set_bloom_filter_offset(Some(offset))
                        .set_bloom_filter_length(Some(length))
                        .build()
                        .map_err(|e| ParquetFileError::Invalid(e.to_string()))?,
                ),
                None => new_chunks.push(chunk),
            }
        }
        new_groups.push(
            group_builder
                .set_column_metadata(new_chunks)
                .build()
                .map_err(|e| ParquetFileError::Invalid(e.to_string()))?,
        );
    }
    let metadata = builder.set_row_groups(new_groups).build();
    let mut footer = Vec::new();
    ParquetMetaDataWriter::new(&mut footer, &metadata)
        .finish()
        .map_err(|e| ParquetFileError::Invalid(format!("writing the footer: {e}")))?;

    let copy_len = file.footer_start;
    crate::format::write_atomically_with(output, |out| {
        let mut source = File::open(input)?;
        let copied = io::copy(&mut (&mut source).take(copy_len), out)?;
        if copied != copy_len {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("{} shrank while it was copied", input.display()),
            ));
        }
        out.write_all(&appended)?;
        out.write_all(&footer)
    })?;
    Ok(report)
}

/// Whether `a` and `b` name the same existing file (by canonical path, and on Unix by
/// device and inode, which also catches hard links).
fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) if x == y => return true,
        _ => {}
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return x.dev() == y.dev() && x.ino() == y.ino();
        }
    }
    false
}

/// The filters of the file at `path`: for each row group, for each leaf column (in order),
/// the chunk's filter if it has one. The library's "filters out of a file" in one call.
pub fn read_filters(path: impl AsRef<Path>) -> Result<Vec<Vec<Option<SplitBlockBloomFilter>>>> {
    let file = ParquetBloomFile::open(path)?;
    let n = file.columns().len();
    (0..file.num_row_groups())
        .map(|rg| {
            (0..n)
                .map(|c| Ok(file.bloom_filter(rg, c)?.map(|chunk| chunk.filter)))
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_written_is_read_back() {
        for n in [32u32, 64, 1 << 20, 128 << 20] {
            let mut out = Vec::new();
            BloomFilterHeader::write(n, &mut out);
            let h = BloomFilterHeader::parse(&out).unwrap();
            assert_eq!((h.num_bytes, h.len), (n, out.len()));
            for cut in 0..out.len() {
                assert!(BloomFilterHeader::parse(&out[..cut]).is_err(), "cut {cut}");
            }
        }
    }

    #[test]
    fn header_rejects_other_algorithms_and_odd_sizes() {
        let mut good = Vec::new();
        BloomFilterHeader::write(64, &mut good);
        // numBytes 64 is zigzag 128: two varint bytes; the algorithm union's member id byte
        // follows the union's field header.
        let member = 1 + 2 + 1;
        for (at, value) in [(member, 0x2c), (member + 4, 0x2c), (member + 8, 0x2c)] {
            let mut bad = good.clone();
            bad[at] = value;
            assert!(BloomFilterHeader::parse(&bad)
                .unwrap_err()
                .contains("only 1"));
        }
        for n in [0u32, 31, 33] {
            let mut bad = Vec::new();
            BloomFilterHeader::write(n.max(32), &mut bad);
            bad[1] = (n * 2) as u8; // one-byte zigzag varint
            bad.remove(2);
            assert!(BloomFilterHeader::parse(&bad).is_err(), "{n}");
        }
    }

    #[test]
    fn dates_and_decimals_are_encoded_as_stored() {
        assert_eq!(parse_date("1970-01-01"), Ok(0));
        assert_eq!(parse_date("2000-03-01"), Ok(11_017));
        assert_eq!(parse_date("1969-12-31"), Ok(-1));
        assert!(parse_date("2023-02-29").is_err());
        assert_eq!(parse_decimal("-12.5", 2, 9), Ok(-1250));
        assert_eq!(parse_decimal("12.500", 2, 9), Ok(1250));
        assert!(parse_decimal("12.505", 2, 9).is_err());
        assert!(parse_decimal("1000", 0, 3).is_err());
        assert_eq!(minimal_be(-1250), vec![0xfb, 0x1e]);
        assert_eq!(minimal_be(128), vec![0x00, 0x80]);
        assert_eq!(minimal_be(0), vec![0]);
        assert_eq!(fixed_be(-1250, 4), Some(vec![0xff, 0xff, 0xfb, 0x1e]));
        assert_eq!(fixed_be(40_000, 2), None);
        assert_eq!(
            parse_timestamp("1970-01-02 00:00:01.5", false),
            Ok(86_401_500_000_000)
        );
        assert_eq!(parse_timestamp("1970-01-01T01:00:00+01:00", true), Ok(0));
    }
}
