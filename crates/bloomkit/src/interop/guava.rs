//! Guava's `com.google.common.hash.BloomFilter`, read and written bit for bit.
//!
//! Source: Guava's `guava/src/com/google/common/hash/BloomFilter.java` (`create`, `writeTo`,
//! `readFrom`, `optimalNumOfBits`, `optimalNumOfHashFunctions`) and
//! `BloomFilterStrategies.java` (`MURMUR128_MITZ_64`, `LockFreeBitArray`); tested against
//! Debian's Guava 31.1 jar (`tests/interop/`).
//!
//! # The bytes of `writeTo`
//!
//! All fields big-endian (`DataOutputStream`):
//!
//! | bytes | field |
//! |---|---|
//! | 1 | the strategy's ordinal: 1 for `MURMUR128_MITZ_64` (0, `MURMUR128_MITZ_32`, is not read here) |
//! | 1 | the number of hash functions k, unsigned (1 to 255) |
//! | 4 | the number of 64-bit words w (a positive `int`) |
//! | 8·w | the words; bit `i` of the filter is bit `i % 64` of word `i / 64` |
//!
//! The funnel (how an item becomes bytes) is not in those bytes: the reader must know it.
//!
//! # Hashing
//!
//! An item is funnelled into bytes — a string as its UTF-8 bytes (`Funnels.stringFunnel(UTF_8)`),
//! a `long` as its 8 little-endian bytes (`Funnels.longFunnel()`), a byte array as itself
//! (`Funnels.byteArrayFunnel()`) — and hashed with MurmurHash3 x64_128, seed 0. With h1 and h2
//! the two 64-bit halves of the hash, the i-th bit (i = 0 … k−1) is
//! `((h1 + i·h2) & i64::MAX) % m`, additions wrapping, m = 64·w.

use std::io::{self, Write};

use super::{zeroed_words, BeReader};
use crate::error::{DecodeError, Error};
use crate::hash::murmur3_x64_128;

/// The ordinal of Guava's `MURMUR128_MITZ_64` strategy, the first byte of its filters.
pub const MURMUR128_MITZ_64: u8 = 1;

/// The most 64-bit words a Guava filter has (its word count is a Java `int`).
pub const MAX_WORDS: u64 = i32::MAX as u64;

/// How the items of a Guava filter were turned into bytes (Guava's `Funnel`). The funnel is
/// not stored in Guava's bytes; whoever reads the filter must know it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GuavaFunnel {
    /// `Funnels.stringFunnel(StandardCharsets.UTF_8)`: a string's UTF-8 bytes.
    Utf8,
    /// `Funnels.longFunnel()`: a `long`'s eight bytes, little-endian.
    Long,
    /// `Funnels.byteArrayFunnel()`: the bytes themselves.
    Bytes,
}

/// A Guava `BloomFilter` with the `MURMUR128_MITZ_64` strategy: what `BloomFilter.writeTo`
/// writes, [`read_from`](Self::read_from) reads, and what [`write_to`](Self::write_to) writes,
/// `BloomFilter.readFrom` reads. Its answers are Guava's `mightContain`, item for item.
///
/// ```
/// use bloomkit::interop::guava::GuavaBloomFilter;
/// let mut filter = GuavaBloomFilter::with_capacity(1000, 0.01)?;
/// filter.put_str("hello");
/// filter.put_long(42);
/// assert!(filter.might_contain_str("hello") && filter.might_contain_long(42));
/// let bytes = filter.to_bytes(); // Guava's `BloomFilter.readFrom` reads these
/// assert_eq!(bytes.len(), 6 + 8 * 150); // Guava's create(…, 1000, 0.01): 9,585 bits, k = 7
/// assert_eq!(GuavaBloomFilter::read_from(&bytes)?, filter);
/// # Ok::<(), bloomkit::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GuavaBloomFilter {
    num_hash_functions: u8,
    words: Vec<u64>,
}

impl GuavaBloomFilter {
    /// An empty filter sized as Guava's `BloomFilter.create(funnel, expected_insertions, fpp)`
    /// sizes it (Guava 31.1): m = ⌊−n·ln ε / ln² 2⌋ bits rounded up to whole 64-bit words,
    /// k = max(1, round(m/n · ln 2)), n = 0 taken as 1. The same errors as Guava's: ε outside
    /// (0, 1), zero bits, k above 255, more words than a Java `int` counts.
    pub fn with_capacity(expected_insertions: u64, fpp: f64) -> Result<Self, Error> {
        if !(fpp > 0.0 && fpp < 1.0) {
            return Err(Error::InvalidFpp(fpp));
        }
        let n = expected_insertions.max(1);
        let ln2 = std::f64::consts::LN_2;
        // Java: (long) (-n * Math.log(p) / (Math.log(2) * Math.log(2))), saturating.
        let num_bits = (-(n as f64) * fpp.ln() / (ln2 * ln2)) as u64;
        if num_bits == 0 {
            return Err(Error::ZeroBits);
        }
        // Java: Math.max(1, (int) Math.round((double) m / n * Math.log(2))).
        let k = ((num_bits as f64 / n as f64 * ln2).round() as u64).max(1);
        let words = num_bits.div_ceil(64);
        if words > MAX_WORDS {
            return Err(Error::TooLarge {
                bits: num_bits,
                max: MAX_WORDS * 64,
            });
        }
        Self::with_words(k, zeroed_words(words as usize)?)
    }

    /// A filter of k hash functions over the given 64-bit words (as Guava stores them).
    pub fn from_words(num_hash_functions: u32, words: Vec<u64>) -> Result<Self, Error> {
        Self::with_words(u64::from(num_hash_functions), words)
    }

    fn with_words(k: u64, words: Vec<u64>) -> Result<Self, Error> {
        if k == 0 {
            return Err(Error::ZeroHashes);
        }
        if k > 255 {
            return Err(Error::TooManyHashes { got: k, max: 255 });
        }
        if words.is_empty() {
            return Err(Error::ZeroBits);
        }
        if words.len() as u64 > MAX_WORDS {
            return Err(Error::TooLarge {
                bits: (words.len() as u64).saturating_mul(64),
                max: MAX_WORDS * 64,
            });
        }
        Ok(GuavaBloomFilter {
            num_hash_functions: k as u8,
            words,
        })
    }

    /// Reads what Guava's `BloomFilter.writeTo` wrote (strategy `MURMUR128_MITZ_64`). Every
    /// damaged input is an error: a short or long input, another strategy, k = 0, a word
    /// count that is not positive or that the input does not hold (checked before
    /// anything is allocated).
    pub fn read_from(bytes: &[u8]) -> Result<Self, Error> {
        let mut r = BeReader::new(bytes);
        let strategy = r.u8()?;
        if strategy != MURMUR128_MITZ_64 {
            return Err(DecodeError::InvalidField {
                field: "strategy",
                reason: match strategy {
                    0 => "Guava's MURMUR128_MITZ_32 (ordinal 0) is not supported; only \
                          MURMUR128_MITZ_64 (ordinal 1), Guava's default since 2013"
                        .to_string(),
                    other => format!("ordinal {other} names no Guava strategy"),
                },
            }
            .into());
        }
        let k = r.u8()?;
        if k == 0 {
            return Err(DecodeError::InvalidField {
                field: "numHashFunctions",
                reason: "0; a Guava filter has at least one".to_string(),
            }
            .into());
        }
        let len = r.i32()?;
        if len <= 0 {
            return Err(DecodeError::InvalidField {
                field: "data length",
                reason: format!("{len}; a Guava filter has at least one 64-bit word"),
            }
            .into());
        }
        let words = r.words(len as u64)?;
        r.finish()?;
        Ok(GuavaBloomFilter {
            num_hash_functions: k,
            words,
        })
    }

    /// Writes the filter as Guava's `BloomFilter.writeTo` does; `BloomFilter.readFrom` reads it.
    pub fn write_to<W: Write>(&self, mut out: W) -> io::Result<()> {
        out.write_all(&self.to_bytes())
    }

    /// The bytes [`write_to`](Self::write_to) writes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(6 + 8 * self.words.len());
        out.push(MURMUR128_MITZ_64);
        out.push(self.num_hash_functions);
        out.extend_from_slice(&(self.words.len() as i32).to_be_bytes());
        for w in &self.words {
            out.extend_from_slice(&w.to_be_bytes());
        }
        out
    }

    /// The number of hash functions k.
    pub fn num_hash_functions(&self) -> u32 {
        u32::from(self.num_hash_functions)
    }

    /// The number of bits m (64 per word).
    pub fn bit_size(&self) -> u64 {
        self.words.len() as u64 * 64
    }

    /// The 64-bit words, as Guava stores them.
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// The number of bits set.
    pub fn bit_count(&self) -> u64 {
        super::ones(&self.words)
    }

    /// Guava's `expectedFpp()`: (bits set / m)^k.
    pub fn expected_fpp(&self) -> f64 {
        super::java_expected_fpp(&self.words, u32::from(self.num_hash_functions))
    }

    /// Adds an item funnelled by `funnel`'s rules (`bytes` are the funnelled bytes); true if
    /// a bit changed, as Guava's `put`.
    pub fn put_funnelled(&mut self, bytes: &[u8]) -> bool {
        let m = self.bit_size();
        let mut changed = false;
        for index in Self::indexes(bytes, self.num_hash_functions, m) {
            let (word, mask) = ((index >> 6) as usize, 1u64 << (index & 63));
            changed |= self.words[word] & mask == 0;
            self.words[word] |= mask;
        }
        changed
    }

    /// Guava's `mightContain` for an item whose funnelled bytes are `bytes`.
    pub fn might_contain_funnelled(&self, bytes: &[u8]) -> bool {
        let m = self.bit_size();
        Self::indexes(bytes, self.num_hash_functions, m)
            .all(|index| self.words[(index >> 6) as usize] & (1u64 << (index & 63)) != 0)
    }

    /// `put` with `Funnels.stringFunnel(UTF_8)`.
    pub fn put_str(&mut self, item: &str) -> bool {
        self.put_funnelled(item.as_bytes())
    }

    /// `put` with `Funnels.longFunnel()`.
    pub fn put_long(&mut self, item: i64) -> bool {
        self.put_funnelled(&item.to_le_bytes())
    }

    /// `put` with `Funnels.byteArrayFunnel()`.
    pub fn put_bytes(&mut self, item: &[u8]) -> bool {
        self.put_funnelled(item)
    }

    /// `mightContain` with `Funnels.stringFunnel(UTF_8)`.
    pub fn might_contain_str(&self, item: &str) -> bool {
        self.might_contain_funnelled(item.as_bytes())
    }

    /// `mightContain` with `Funnels.longFunnel()`.
    pub fn might_contain_long(&self, item: i64) -> bool {
        self.might_contain_funnelled(&item.to_le_bytes())
    }

    /// `mightContain` with `Funnels.byteArrayFunnel()`.
    pub fn might_contain_bytes(&self, item: &[u8]) -> bool {
        self.might_contain_funnelled(item)
    }

    /// The k bit indexes of `MURMUR128_MITZ_64` for funnelled bytes.
    fn indexes(bytes: &[u8], k: u8, m: u64) -> impl Iterator<Item = u64> + use<> {
        let digest = murmur3_x64_128(bytes, 0);
        // Guava's lowerEight/upperEight: the hash's first and second 8 bytes, little-endian.
        let (h1, h2) = (digest as u64, (digest >> 64) as u64);
        (0..u64::from(k)).map(move |i| (h1.wrapping_add(i.wrapping_mul(h2)) & i64::MAX as u64) % m)
    }
}

impl GuavaBloomFilter {
    /// The library hashing that sets Guava's bits: MurmurHash3 x64_128, seed 0,
    /// [`IndexScheme::GuavaMitz64`](crate::IndexScheme::GuavaMitz64).
    pub fn hashing() -> crate::Hashing {
        crate::Hashing {
            function: crate::HashFunction::Murmur3,
            scheme: crate::IndexScheme::GuavaMitz64,
            seed: 0,
        }
    }

    /// The same filter as a bloomkit classic filter with [`hashing`](Self::hashing): it
    /// answers as this one for items given as their funnelled bytes (a string's UTF-8, a
    /// byte array; a `long` as its 8 little-endian bytes). Sized for `m ln 2 / k` items, its
    /// count estimated from the fill (Guava's bytes hold neither).
    ///
    /// ```
    /// use bloomkit::interop::guava::GuavaBloomFilter;
    /// use bloomkit::Filter;
    /// let mut g = GuavaBloomFilter::with_capacity(1000, 0.01)?;
    /// g.put_str("hello");
    /// let f = g.clone().into_filter()?;
    /// assert!(f.contains("hello"));
    /// assert_eq!(GuavaBloomFilter::from_filter(&f)?, g);
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn into_filter(self) -> Result<crate::AnyFilter, Error> {
        let k = u32::from(self.num_hash_functions);
        Ok(super::classic_from_words(&self.words, k, Self::hashing())?.into())
    }

    /// The Guava filter holding a bloomkit filter's bits, if it is one: a classic filter
    /// with [`hashing`](Self::hashing), whole 64-bit words and k ≤ 255 (one imported from
    /// Guava). Anything else is an error saying why.
    pub fn from_filter(filter: &crate::AnyFilter) -> Result<Self, Error> {
        let (words, k, _) = super::words_of_classic(
            filter,
            "Guava",
            |h| h == Self::hashing(),
            "import one with `bloomkit import --from guava`",
        )?;
        Self::from_words(k, words)
    }
}

impl GuavaFunnel {
    /// The funnel's name on the command line: `utf8`, `long`, `bytes`.
    pub fn name(self) -> &'static str {
        match self {
            GuavaFunnel::Utf8 => "utf8",
            GuavaFunnel::Long => "long",
            GuavaFunnel::Bytes => "bytes",
        }
    }
}
