//! Spark's `org.apache.spark.util.sketch.BloomFilter`, read and written bit for bit, both
//! binary versions.
//!
//! Source: Spark's `common/sketch/src/main/java/org/apache/spark/util/sketch/`:
//! `BloomFilter.java` (`create`, `readFrom`, `optimalNumOfBits`, `optimalNumOfHashFunctions`),
//! `BloomFilterBase.java`, `BloomFilterImpl.java` (version 1), `BloomFilterImplV2.java`
//! (version 2, Spark 4.1 on),
//! `BitArray.java`, `Murmur3_x86_32.java`; tested against the `spark-sketch` jar of pyspark
//! 4.3.0 (`tests/interop/`).
//!
//! # The bytes of `writeTo`
//!
//! All fields big-endian (`DataOutputStream`):
//!
//! | bytes | field |
//! |---|---|
//! | 4 | the version: 1 or 2 |
//! | 4 | the number of hash functions k |
//! | 4 | version 2 only: the seed (an `int`; `create` uses 0) |
//! | 4 | the number of 64-bit words w |
//! | 8·w | the words; bit `i` of the filter is bit `i % 64` of word `i / 64` |
//!
//! # Hashing
//!
//! A `long` is hashed as two 32-bit blocks (low half first) by Spark's MurmurHash3 x86_32
//! (`hashLong`); a string as its UTF-8 bytes and a byte array as itself by `hashUnsafeBytes`,
//! which is MurmurHash3 x86_32 on the 4-byte blocks but mixes each trailing byte (sign-extended)
//! as a block of its own — not the reference tail. h1 = hash(item, seed), h2 = hash(item, h1).
//!
//! * Version 1 (seed 0): for i = 1 … k, the 32-bit `h1 + i·h2`, bits flipped if negative,
//!   modulo m.
//! * Version 2: a 64-bit `c = h1·(2³¹−1)`; k times `c += h2` (wrapping), then bit
//!   `(c < 0 ? !c : c) % m`, the flip not carried into the next step. (The
//!   `scatterHashAndSetAllBits` of the 4.3.0 jar; an earlier `BloomFilterImplV2.java` kept the
//!   flipped value, which the jar does not.)

use std::io::{self, Write};

use super::{zeroed_words, BeReader};
use crate::error::{DecodeError, Error};

/// The most 64-bit words a Spark filter has (its word count is a Java `int`).
pub const MAX_WORDS: u64 = i32::MAX as u64;

/// The most hash functions this reader accepts. Spark stores any positive `int`; its `create`
/// never picks more than about a thousand, and a hostile file with 2³¹ would make each query
/// take seconds.
pub const MAX_HASH_FUNCTIONS: u32 = 1 << 16;

/// The binary version of a Spark filter (the first `int` of its bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SparkVersion {
    /// Version 1 (Spark up to 4.0): 32-bit index arithmetic, no seed.
    V1,
    /// Version 2 (Spark 4.1 on, `create`'s default): 64-bit index arithmetic and a seed.
    V2,
}

impl SparkVersion {
    /// The version's number in the bytes: 1 or 2.
    pub fn number(self) -> i32 {
        match self {
            SparkVersion::V1 => 1,
            SparkVersion::V2 => 2,
        }
    }
}

/// A Spark `util.sketch.BloomFilter`: what `BloomFilter.writeTo` writes,
/// [`read_from`](Self::read_from) reads, and what [`write_to`](Self::write_to) writes,
/// `BloomFilter.readFrom` reads. Its answers are Spark's `mightContainLong`,
/// `mightContainString` and `mightContainBinary`, item for item.
///
/// ```
/// use bloomkit::interop::spark::{SparkBloomFilter, SparkVersion};
/// let mut filter = SparkBloomFilter::with_capacity(1000, 0.03)?; // version 2, seed 0
/// filter.put_long(42);
/// filter.put_str("hello");
/// assert!(filter.might_contain_long(42) && filter.might_contain_str("hello"));
/// assert_eq!(filter.version(), SparkVersion::V2);
/// let bytes = filter.to_bytes(); // Spark's `BloomFilter.readFrom` reads these
/// assert_eq!(SparkBloomFilter::read_from(&bytes)?, filter);
/// # Ok::<(), bloomkit::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SparkBloomFilter {
    version: SparkVersion,
    num_hash_functions: u32,
    seed: i32,
    words: Vec<u64>,
}

impl SparkBloomFilter {
    /// An empty filter as Spark's `BloomFilter.create(expectedNumItems, fpp)` makes it:
    /// version 2, seed 0, m = ⌊−n·ln ε / ln² 2⌋ bits (rounded up to whole words),
    /// k = max(1, round(m/n · ln 2)).
    pub fn with_capacity(expected_items: u64, fpp: f64) -> Result<Self, Error> {
        if !(fpp > 0.0 && fpp < 1.0) {
            return Err(Error::InvalidFpp(fpp));
        }
        if expected_items == 0 {
            return Err(Error::ZeroCapacity);
        }
        Self::create(
            SparkVersion::V2,
            expected_items,
            optimal_num_of_bits(expected_items, fpp),
            0,
        )
    }

    /// Spark's `BloomFilter.create(version, expectedNumItems, numBits, seed)`: k chosen for
    /// n items in `num_bits` bits. A version 1 filter has no seed: `seed` must be 0.
    pub fn create(
        version: SparkVersion,
        expected_items: u64,
        num_bits: u64,
        seed: i32,
    ) -> Result<Self, Error> {
        if expected_items == 0 {
            return Err(Error::ZeroCapacity);
        }
        if num_bits == 0 {
            return Err(Error::ZeroBits);
        }
        let k = ((num_bits as f64 / expected_items as f64 * std::f64::consts::LN_2).round() as u64)
            .max(1);
        let words = num_bits.div_ceil(64);
        if words > MAX_WORDS {
            return Err(Error::TooLarge {
                bits: num_bits,
                max: MAX_WORDS * 64,
            });
        }
        Self::from_words(version, k, seed, zeroed_words(words as usize)?)
    }

    /// A filter of the given version, k and seed over 64-bit words as Spark stores them.
    pub fn from_words(
        version: SparkVersion,
        num_hash_functions: u64,
        seed: i32,
        words: Vec<u64>,
    ) -> Result<Self, Error> {
        if num_hash_functions == 0 {
            return Err(Error::ZeroHashes);
        }
        if num_hash_functions > u64::from(MAX_HASH_FUNCTIONS) {
            return Err(Error::TooManyHashes {
                got: num_hash_functions,
                max: MAX_HASH_FUNCTIONS,
            });
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
        if version == SparkVersion::V1 && seed != 0 {
            return Err(Error::InvalidParameter {
                parameter: "seed",
                reason: format!("{seed}: a version 1 Spark filter has no seed (0)"),
            });
        }
        Ok(SparkBloomFilter {
            version,
            num_hash_functions: num_hash_functions as u32,
            seed,
            words,
        })
    }

    /// Reads what Spark's `BloomFilter.writeTo` wrote, version 1 or 2. Every damaged input is
    /// an error: a short or long input, an unknown version, k outside 1 to
    /// [`MAX_HASH_FUNCTIONS`], a word count that is not positive or that the input does not
    /// hold (checked before anything is allocated).
    pub fn read_from(bytes: &[u8]) -> Result<Self, Error> {
        let mut r = BeReader::new(bytes);
        let version = match r.i32()? {
            1 => SparkVersion::V1,
            2 => SparkVersion::V2,
            other => {
                return Err(DecodeError::InvalidField {
                    field: "version",
                    reason: format!("{other}; Spark's Bloom filters are versions 1 and 2"),
                }
                .into())
            }
        };
        let k = r.i32()?;
        if k <= 0 || k as u32 > MAX_HASH_FUNCTIONS {
            return Err(DecodeError::InvalidField {
                field: "numHashFunctions",
                reason: format!("{k}; expected 1 to {MAX_HASH_FUNCTIONS}"),
            }
            .into());
        }
        let seed = match version {
            SparkVersion::V1 => 0,
            SparkVersion::V2 => r.i32()?,
        };
        let len = r.i32()?;
        if len <= 0 {
            return Err(DecodeError::InvalidField {
                field: "numWords",
                reason: format!("{len}; a usable Spark filter has at least one 64-bit word"),
            }
            .into());
        }
        let words = r.words(len as u64)?;
        r.finish()?;
        Ok(SparkBloomFilter {
            version,
            num_hash_functions: k as u32,
            seed,
            words,
        })
    }

    /// Writes the filter as Spark's `BloomFilter.writeTo` does; `BloomFilter.readFrom` reads it.
    pub fn write_to<W: Write>(&self, mut out: W) -> io::Result<()> {
        out.write_all(&self.to_bytes())
    }

    /// The bytes [`write_to`](Self::write_to) writes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16 + 8 * self.words.len());
        out.extend_from_slice(&self.version.number().to_be_bytes());
        out.extend_from_slice(&(self.num_hash_functions as i32).to_be_bytes());
        if self.version == SparkVersion::V2 {
            out.extend_from_slice(&self.seed.to_be_bytes());
        }
        out.extend_from_slice(&(self.words.len() as i32).to_be_bytes());
        for w in &self.words {
            out.extend_from_slice(&w.to_be_bytes());
        }
        out
    }

    /// The binary version.
    pub fn version(&self) -> SparkVersion {
        self.version
    }

    /// The number of hash functions k.
    pub fn num_hash_functions(&self) -> u32 {
        self.num_hash_functions
    }

    /// The seed (0 for version 1).
    pub fn seed(&self) -> i32 {
        self.seed
    }

    /// The number of bits m (64 per word).
    pub fn bit_size(&self) -> u64 {
        self.words.len() as u64 * 64
    }

    /// The 64-bit words, as Spark stores them.
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// The number of bits set (Spark's `cardinality()`).
    pub fn cardinality(&self) -> u64 {
        super::ones(&self.words)
    }

    /// Spark's `expectedFpp()`: (bits set / m)^k.
    pub fn expected_fpp(&self) -> f64 {
        super::java_expected_fpp(&self.words, self.num_hash_functions)
    }

    /// Spark's `putLong` (also what `put` does with a byte, short or int); true if a bit changed.
    pub fn put_long(&mut self, item: i64) -> bool {
        let h1 = hash_long(item, self.seed);
        let h2 = hash_long(item, h1);
        self.set(h1, h2)
    }

    /// Spark's `putString`: the string's UTF-8 bytes, as `putBinary`.
    pub fn put_str(&mut self, item: &str) -> bool {
        self.put_bytes(item.as_bytes())
    }

    /// Spark's `putBinary`.
    pub fn put_bytes(&mut self, item: &[u8]) -> bool {
        let h1 = hash_bytes(item, self.seed);
        let h2 = hash_bytes(item, h1);
        self.set(h1, h2)
    }

    /// Spark's `mightContainLong`.
    pub fn might_contain_long(&self, item: i64) -> bool {
        let h1 = hash_long(item, self.seed);
        let h2 = hash_long(item, h1);
        self.get(h1, h2)
    }

    /// Spark's `mightContainString`.
    pub fn might_contain_str(&self, item: &str) -> bool {
        self.might_contain_bytes(item.as_bytes())
    }

    /// Spark's `mightContainBinary`.
    pub fn might_contain_bytes(&self, item: &[u8]) -> bool {
        let h1 = hash_bytes(item, self.seed);
        let h2 = hash_bytes(item, h1);
        self.get(h1, h2)
    }

    fn set(&mut self, h1: i32, h2: i32) -> bool {
        let mut changed = false;
        for index in self.indexes(h1, h2) {
            let (word, mask) = ((index >> 6) as usize, 1u64 << (index & 63));
            changed |= self.words[word] & mask == 0;
            self.words[word] |= mask;
        }
        changed
    }

    fn get(&self, h1: i32, h2: i32) -> bool {
        self.indexes(h1, h2)
            .all(|index| self.words[(index >> 6) as usize] & (1u64 << (index & 63)) != 0)
    }

    /// The k bit indexes of the filter's version for the hashes h1 and h2.
    fn indexes(&self, h1: i32, h2: i32) -> impl Iterator<Item = u64> + use<> {
        let m = self.bit_size();
        let k = self.num_hash_functions;
        let v2 = self.version == SparkVersion::V2;
        // Version 2's running 64-bit hash (Integer.MAX_VALUE scrambles its high half).
        let mut combined = i64::from(h1).wrapping_mul(i64::from(i32::MAX));
        (1..=k).map(move |i| {
            if v2 {
                combined = combined.wrapping_add(i64::from(h2));
                // The flipped value indexes; the running hash goes on unflipped.
                let index = if combined < 0 { !combined } else { combined };
                index as u64 % m
            } else {
                let mut c = h1.wrapping_add((i as i32).wrapping_mul(h2));
                if c < 0 {
                    c = !c;
                }
                c as u64 % m
            }
        })
    }
}

impl SparkBloomFilter {
    /// The library hashing that sets this filter's bits:
    /// [`HashFunction::SparkMurmur3Pair`](crate::HashFunction::SparkMurmur3Pair) with the
    /// filter's seed and [`IndexScheme::SparkV1`](crate::IndexScheme::SparkV1) or
    /// [`SparkV2`](crate::IndexScheme::SparkV2) by version.
    pub fn hashing(&self) -> crate::Hashing {
        crate::Hashing {
            function: crate::HashFunction::SparkMurmur3Pair,
            scheme: match self.version {
                SparkVersion::V1 => crate::IndexScheme::SparkV1,
                SparkVersion::V2 => crate::IndexScheme::SparkV2,
            },
            seed: self.seed as u32 as u64,
        }
    }

    /// The same filter as a bloomkit classic filter with [`hashing`](Self::hashing): it
    /// answers as this one for strings and byte arrays given as their bytes (and a `long`
    /// as its 8 little-endian bytes, which Spark's `hashLong` hashes alike). Sized for
    /// `m ln 2 / k` items, its count estimated from the fill.
    ///
    /// ```
    /// use bloomkit::interop::spark::SparkBloomFilter;
    /// use bloomkit::Filter;
    /// let mut s = SparkBloomFilter::with_capacity(1000, 0.01)?;
    /// s.put_str("hello");
    /// s.put_long(42);
    /// let f = s.clone().into_filter()?;
    /// assert!(f.contains("hello") && f.contains(&42i64));
    /// assert_eq!(SparkBloomFilter::from_filter(&f)?, s);
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn into_filter(self) -> Result<crate::AnyFilter, Error> {
        let hashing = self.hashing();
        Ok(super::classic_from_words(&self.words, self.num_hash_functions, hashing)?.into())
    }

    /// The Spark filter holding a bloomkit filter's bits, if it is one: a classic filter
    /// with Spark's hashing (either version; version 1 with seed 0) and whole 64-bit words
    /// (one imported from Spark). Anything else is an error saying why.
    pub fn from_filter(filter: &crate::AnyFilter) -> Result<Self, Error> {
        use crate::{HashFunction, IndexScheme};
        let (words, k, hashing) = super::words_of_classic(
            filter,
            "Spark",
            |h| {
                h.function == HashFunction::SparkMurmur3Pair
                    && matches!(h.scheme, IndexScheme::SparkV1 | IndexScheme::SparkV2)
                    && h.seed <= u32::MAX as u64
            },
            "import one with `bloomkit import --from spark`",
        )?;
        let version = if hashing.scheme == IndexScheme::SparkV1 {
            SparkVersion::V1
        } else {
            SparkVersion::V2
        };
        Self::from_words(version, u64::from(k), hashing.seed as u32 as i32, words)
    }
}

/// Spark's `BloomFilter.optimalNumOfBits(n, p)`: ⌊−n·ln p / ln² 2⌋ (saturating).
pub fn optimal_num_of_bits(expected_items: u64, fpp: f64) -> u64 {
    let ln2 = std::f64::consts::LN_2;
    (-(expected_items as f64) * fpp.ln() / (ln2 * ln2)) as u64
}

const C1: u32 = 0xcc9e_2d51;
const C2: u32 = 0x1b87_3593;

fn mix_k1(k1: u32) -> u32 {
    k1.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2)
}

fn mix_h1(h1: u32, k1: u32) -> u32 {
    (h1 ^ k1)
        .rotate_left(13)
        .wrapping_mul(5)
        .wrapping_add(0xe654_6b64)
}

fn fmix(mut h1: u32, length: u32) -> u32 {
    h1 ^= length;
    h1 ^= h1 >> 16;
    h1 = h1.wrapping_mul(0x85eb_ca6b);
    h1 ^= h1 >> 13;
    h1 = h1.wrapping_mul(0xc2b2_ae35);
    h1 ^ (h1 >> 16)
}

/// Spark's `Murmur3_x86_32.hashLong`: the low 32 bits, then the high, as two blocks.
pub fn hash_long(item: i64, seed: i32) -> i32 {
    let v = item as u64;
    let h1 = mix_h1(seed as u32, mix_k1(v as u32));
    let h1 = mix_h1(h1, mix_k1((v >> 32) as u32));
    fmix(h1, 8) as i32
}

/// Spark's `Murmur3_x86_32.hashUnsafeBytes`: 4-byte little-endian blocks, then each trailing
/// byte, sign-extended, mixed as a block of its own.
pub fn hash_bytes(item: &[u8], seed: i32) -> i32 {
    crate::hash::spark_murmur3_x86_32(item, seed)
}
