//! Filters other systems make, read and written bit for bit: one file per foreign format,
//! each behind its own cargo feature, its source named at the top.
//!
//! * `guava` (feature `guava`) — Guava's `com.google.common.hash.BloomFilter`
//!   (`writeTo`/`readFrom`, strategy `MURMUR128_MITZ_64`).
//! * `spark` (feature `spark`) — Spark's `org.apache.spark.util.sketch.BloomFilter`
//!   (binary versions 1 and 2).
//! * `parquet` (feature `parquet`) — the split block Bloom filters of Apache Parquet files,
//!   read per column chunk and added to a copy of a file without re-encoding its pages.

#[cfg(feature = "guava")]
#[cfg_attr(docsrs, doc(cfg(feature = "guava")))]
pub mod guava;
#[cfg(feature = "parquet")]
#[cfg_attr(docsrs, doc(cfg(feature = "parquet")))]
pub mod parquet;
#[cfg(feature = "spark")]
#[cfg_attr(docsrs, doc(cfg(feature = "spark")))]
pub mod spark;

#[cfg(any(feature = "guava", feature = "spark"))]
use crate::error::{DecodeError, Error};

/// Reads big-endian fields from a byte slice, every short read an error.
#[cfg(any(feature = "guava", feature = "spark"))]
pub(crate) struct BeReader<'a> {
    bytes: &'a [u8],
    offset: usize,
}

#[cfg(any(feature = "guava", feature = "spark"))]
impl<'a> BeReader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        BeReader { bytes, offset: 0 }
    }

    fn take(&mut self, needed: usize) -> Result<&'a [u8], Error> {
        let available = self.bytes.len() - self.offset;
        if available < needed {
            return Err(DecodeError::Truncated {
                offset: self.offset,
                needed: needed as u64,
                available,
            }
            .into());
        }
        let out = &self.bytes[self.offset..self.offset + needed];
        self.offset += needed;
        Ok(out)
    }

    pub(crate) fn u8(&mut self) -> Result<u8, Error> {
        Ok(self.take(1)?[0])
    }

    pub(crate) fn i32(&mut self) -> Result<i32, Error> {
        Ok(i32::from_be_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }

    /// `count` big-endian 64-bit words, the length checked against the input before
    /// anything is allocated.
    pub(crate) fn words(&mut self, count: u64) -> Result<Vec<u64>, Error> {
        let available = self.bytes.len() - self.offset;
        let needed = count.saturating_mul(8);
        if (available as u64) < needed {
            return Err(DecodeError::Truncated {
                offset: self.offset,
                needed,
                available,
            }
            .into());
        }
        let raw = self.take(needed as usize)?;
        Ok(raw
            .chunks_exact(8)
            .map(|w| u64::from_be_bytes(w.try_into().expect("8 bytes")))
            .collect())
    }

    /// An error if bytes are left.
    pub(crate) fn finish(&self) -> Result<(), Error> {
        let left = self.bytes.len() - self.offset;
        if left > 0 {
            return Err(DecodeError::TrailingBytes(left).into());
        }
        Ok(())
    }
}

/// A zeroed word array, its allocation failure an error rather than an abort.
#[cfg(any(feature = "guava", feature = "spark"))]
pub(crate) fn zeroed_words(count: usize) -> Result<Vec<u64>, Error> {
    let mut words = Vec::new();
    words
        .try_reserve_exact(count)
        .map_err(|_| Error::OutOfMemory {
            bytes: (count as u64).saturating_mul(8),
        })?;
    words.resize(count, 0);
    Ok(words)
}
