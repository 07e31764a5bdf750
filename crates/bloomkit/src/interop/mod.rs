//! Filters other systems make, read and written bit for bit: one file per foreign format,
//! each behind its own cargo feature, its source named at the top.
//!
//! * `guava` (feature `guava`) — Guava's `com.google.common.hash.BloomFilter`
//!   (`writeTo`/`readFrom`, strategy `MURMUR128_MITZ_64`).
//! * `spark` (feature `spark`) — Spark's `org.apache.spark.util.sketch.BloomFilter`
//!   (binary versions 1 and 2).
//! * `redisbloom` (feature `redisbloom`) — RedisBloom 2.4's `SCANDUMP`/`LOADCHUNK` dumps of
//!   Bloom and cuckoo filters, and the RESP command stream that loads them.
//! * `parquet` (feature `parquet`) — the split block Bloom filters of Apache Parquet files,
//!   read per column chunk and added to a copy of a file without re-encoding its pages.

#[cfg(feature = "guava")]
#[cfg_attr(docsrs, doc(cfg(feature = "guava")))]
pub mod guava;
#[cfg(feature = "parquet")]
#[cfg_attr(docsrs, doc(cfg(feature = "parquet")))]
pub mod parquet;
#[cfg(feature = "redisbloom")]
#[cfg_attr(docsrs, doc(cfg(feature = "redisbloom")))]
pub mod redisbloom;
#[cfg(feature = "spark")]
#[cfg_attr(docsrs, doc(cfg(feature = "spark")))]
pub mod spark;

#[cfg(any(feature = "guava", feature = "spark"))]
use crate::error::{DecodeError, Error};

/// The bits set in a Java filter's `long[]` (Guava's `bitCount()`, Spark's
/// `cardinality()`).
#[cfg(any(feature = "guava", feature = "spark"))]
pub(crate) fn ones(words: &[u64]) -> u64 {
    words.iter().map(|w| u64::from(w.count_ones())).sum()
}

/// `expectedFpp()` as Guava and Spark both compute it: `Math.pow(bits set / m, k)`.
#[cfg(any(feature = "guava", feature = "spark"))]
pub(crate) fn java_expected_fpp(words: &[u64], k: u32) -> f64 {
    (ones(words) as f64 / (words.len() as f64 * 64.0)).powf(f64::from(k))
}

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

/// A classic filter holding a Java filter's words (bit `i` is bit `i % 64` of word `i / 64`,
/// the same as bloomkit's bit arrays) with `hashing`: sized for the n at which m bits and
/// k hashes reach the optimal fill (`m ln 2 / k`), its count estimated from the fill (the
/// Java formats store no count).
#[cfg(any(feature = "guava", feature = "spark"))]
pub(crate) fn classic_from_words(
    words: &[u64],
    num_hashes: u32,
    hashing: crate::Hashing,
) -> Result<crate::BloomFilter, Error> {
    use crate::params;
    let m = words.len() as u64 * 64;
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(words.len() * 8)
        .map_err(|_| Error::OutOfMemory { bytes: m / 8 })?;
    for w in words {
        bytes.extend_from_slice(&w.to_le_bytes());
    }
    let bits = crate::bits::BitVec::from_le_bytes(m, &bytes)?;
    let capacity = ((m as f64 * std::f64::consts::LN_2 / num_hashes as f64).round() as u64).max(1);
    let target_fpp = params::fpp_exact(m, num_hashes, capacity).clamp(f64::MIN_POSITIVE, 0.5);
    let ones = bits.count_ones();
    let inserted = params::count_from_estimate(params::estimate_items(ones, m, num_hashes));
    Ok(crate::BloomFilter {
        bits,
        num_hashes,
        hashing,
        capacity,
        target_fpp,
        inserted,
    })
}

/// The words of a classic filter that hashes with `hashing` — the Java format's words
/// (m a multiple of 64) — or an error saying why the filter is not one (`format` names it).
#[cfg(any(feature = "guava", feature = "spark"))]
pub(crate) fn words_of_classic(
    filter: &crate::AnyFilter,
    format: &str,
    accepts: impl Fn(crate::Hashing) -> bool,
    create: &str,
) -> Result<(Vec<u64>, u32, crate::Hashing), Error> {
    use crate::Filter;
    let unsupported = |reason: String| Error::InvalidParameter {
        parameter: "filter",
        reason,
    };
    let plain;
    let filter = if filter.kind().exports() {
        plain = filter.clone().into_uncompressed()?;
        &plain
    } else {
        filter
    };
    let crate::AnyFilter::Bloom(f) = filter else {
        return Err(unsupported(format!(
            "a {} filter is not a {format} filter, which is a classic Bloom filter with \
             {format}'s hashing: {create}",
            filter.kind()
        )));
    };
    if !accepts(f.hashing) {
        return Err(unsupported(format!(
            "it hashes with {}, not as {format} does: {create}",
            f.hashing
        )));
    }
    let m = f.num_bits();
    if !m.is_multiple_of(64) {
        return Err(unsupported(format!(
            "it has {m} bits; a {format} filter has whole 64-bit words"
        )));
    }
    let mut bytes = Vec::with_capacity((m / 8) as usize);
    f.bits.write_le_bytes(&mut bytes);
    let words = bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect();
    Ok((words, f.num_hashes, f.hashing))
}

#[cfg(all(test, any(feature = "guava", feature = "spark")))]
mod java_fill_tests {
    /// 8 bits set of 128, k = 2: (8/128)² = 1/256, as `Math.pow` gives it.
    #[test]
    fn expected_fpp_is_the_fill_to_the_power_k() {
        let words = [0xff, 0];
        assert_eq!(super::ones(&words), 8);
        assert_eq!(super::java_expected_fpp(&words, 2), 1.0 / 256.0);
        assert_eq!(super::java_expected_fpp(&[0, 0], 3), 0.0);
    }
}
