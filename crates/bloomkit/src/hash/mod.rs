//! Stable hashing of items, and the derivation of bit positions from a hash.
//!
//! Every filter in this crate sees an item only through the bytes it hashes to a
//! 128-bit digest. The digest of an item must be the same on every platform, in every
//! process and in every version of this crate — filters are saved to files and read back
//! elsewhere — so only fixed, published functions are used:
//!
//! * **MurmurHash3 x64_128** (Appleby, SMHasher), the hash the textbook construction names ("murmur with
//!   a different seed per hash function"). Implemented here; checked against SMHasher's
//!   verification value and an independent implementation in the tests.
//! * **XXH3-128** (Collet), faster on long items; from the `xxhash-rust` crate.
//! * **fold2-128** ([`fold2_128`]): two multiply-folds (wyhash's and rapidhash's mixing
//!   step) over items of up to 16 bytes, XXH3-128 first for longer ones; the blocked
//!   filter's default, the cheapest digest here for integers and short keys.
//!
//! # From one item to k positions
//!
//! Two [`IndexScheme`]s turn an item into k positions in `[0, m)`:
//!
//! * [`IndexScheme::SeededHashes`] is the textbook construction: hash function i is the
//!   same hash with its own seed, `h_i(x) = H(x, s_i)` with `s_i = fmix64(seed + i)`
//!   (see [`seeded_hash_seed`] for why the seeds are mixed), so k hashes cost k passes
//!   over the item.
//! * [`IndexScheme::EnhancedDoubleHashing`] (the default) hashes the item once and derives
//!   all k positions from the two 64-bit halves `a`, `b` of the digest:
//!   `g_0 = a`, `g_{i+1} = g_i + b_i`, `b_{i+1} = b_i + i` (wrapping), Dillinger & Manolios,
//!   "Bloom Filters in Probabilistic Verification" (FMCAD 2004). Kirsch & Mitzenmacher,
//!   "Less Hashing, Same Performance" (ESA 2006) show that two hashes lose nothing
//!   asymptotically; the quadratic term of the *enhanced* variant removes the correlation
//!   of plain double hashing when `b` is small.
//!
//! # Range reduction
//!
//! A 64-bit value `g` is reduced to `[0, m)` by multiply-shift, `⌊g · m / 2⁶⁴⌋`
//! (Lemire, "A fast alternative to the modulo reduction", 2016): one multiplication
//! instead of a division, and unbiased up to `m / 2⁶⁴`. Positions are `u64` end to end,
//! so a filter of more than 2³² bits keeps its false-positive rate (reducing a 32-bit
//! hash would leave all but the first 2³² bits unused).
//!
//! # Items
//!
//! The [`Item`] trait says which bytes stand for an item: strings and byte slices are
//! their bytes, integers their little-endian bytes at their own width (`usize`/`isize` as
//! 64-bit values), tuples their length-prefixed elements; its documentation has the whole
//! table and the rule for integer widths. Any other `T: Hash` can be wrapped in
//! [`Hashed`], which feeds it through a stable byte-collecting [`std::hash::Hasher`]
//! (never `RandomState` or `DefaultHasher`, whose output changes between processes or
//! releases).

use std::hash::{Hash, Hasher};

use crate::error::Error;

/// The 128-bit hash function applied to an item's bytes.
///
/// The numeric value of each variant is written into filter files and must never change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum HashFunction {
    /// MurmurHash3 x64_128, the textbook's hash.
    #[default]
    Murmur3 = 1,
    /// XXH3 128-bit.
    Xxh3 = 2,
    /// RedisBloom's pair of MurmurHash64A values: `a = MurmurHash64A(item, seed)` in the low
    /// 64 bits and `b = MurmurHash64A(item, a)` in the high 64 bits. With the seed
    /// [`REDISBLOOM_SEED`] and [`IndexScheme::DoubleHashing`] a [`crate::BloomFilter`] sets
    /// exactly the bits a RedisBloom filter of the same size sets.
    Murmur64APair = 3,
    /// XXH64 (Collet; the specification's 64-bit xxHash) in the low 64 bits, and in the high
    /// 64 bits SplitMix64's finaliser of it. The low half is the hash Apache Parquet's Bloom
    /// filters use (with seed 0), so the
    /// [`SplitBlockBloomFilter`](crate::SplitBlockBloomFilter) reads it alone.
    Xxh64 = 4,
    /// Spark's pair of MurmurHash3 x86_32 values (`Murmur3_x86_32.hashUnsafeBytes`, which
    /// mixes each trailing byte as a block of its own): `h1 = hash(item, seed)` in bits 0–31,
    /// `h2 = hash(item, h1)` in bits 64–95; the seed is the low 32 bits of the filter's seed.
    /// With [`IndexScheme::SparkV1`] or [`IndexScheme::SparkV2`] a [`crate::BloomFilter`]
    /// sets exactly the bits Spark's `util.sketch.BloomFilter` sets
    /// (`interop::spark`, feature `spark`).
    SparkMurmur3Pair = 5,
    /// Two multiply-folds (wyhash's and rapidhash's mixing step, `fold(a, b) = lo(a·b) ⊕
    /// hi(a·b)` of the 128-bit product): the cheapest digest here that keeps a blocked
    /// filter at its formula's rate on structured keys; see [`fold2_128`]. Items of more
    /// than 16 bytes are first reduced to 128 bits by XXH3-128.
    Fold2 = 6,
}

impl HashFunction {
    /// The stable identifier stored in filter files.
    pub fn id(self) -> u8 {
        self as u8
    }

    /// The function with the given stored identifier.
    pub fn from_id(id: u8) -> Result<Self, Error> {
        match id {
            1 => Ok(Self::Murmur3),
            2 => Ok(Self::Xxh3),
            3 => Ok(Self::Murmur64APair),
            4 => Ok(Self::Xxh64),
            5 => Ok(Self::SparkMurmur3Pair),
            6 => Ok(Self::Fold2),
            other => Err(Error::UnknownHashFunction(other)),
        }
    }

    /// A short lower-case name, as shown by `bloomkit info`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Murmur3 => "murmur3-x64-128",
            Self::Xxh3 => "xxh3-128",
            Self::Murmur64APair => "murmur64a-pair",
            Self::Xxh64 => "xxh64",
            Self::SparkMurmur3Pair => "spark-murmur3-x86-32-pair",
            Self::Fold2 => "fold2-128",
        }
    }

    /// The 128-bit digest of `bytes` under `seed`.
    #[inline]
    pub fn digest(self, bytes: &[u8], seed: u64) -> u128 {
        // Eight bytes (a `u64`, `i64`, `f64` item): the written-out 8-byte path, the same
        // value. Where the length is known at compile time the test folds away.
        if let Ok(word) = <[u8; 8]>::try_from(bytes) {
            return digest_u64(self, u64::from_le_bytes(word), seed);
        }
        self.digest_bytes(bytes, seed)
    }

    /// [`digest`](Self::digest) through each function's general entry point.
    #[inline]
    fn digest_bytes(self, bytes: &[u8], seed: u64) -> u128 {
        match self {
            Self::Murmur3 => murmur3_x64_128(bytes, seed),
            Self::Xxh3 => xxhash_rust::xxh3::xxh3_128_with_seed(bytes, seed),
            Self::Murmur64APair => {
                let a = murmur64a(bytes, seed);
                let b = murmur64a(bytes, a);
                (a as u128) | ((b as u128) << 64)
            }
            Self::Xxh64 => widen_xxh64(xxhash_rust::xxh64::xxh64(bytes, seed)),
            Self::SparkMurmur3Pair => {
                let h1 = spark_murmur3_x86_32(bytes, seed as u32 as i32);
                let h2 = spark_murmur3_x86_32(bytes, h1);
                (h1 as u32 as u128) | ((h2 as u32 as u128) << 64)
            }
            Self::Fold2 => fold2_128(bytes, seed),
        }
    }
}

/// How the k positions of an item are derived.
///
/// The index schemes the kinds' property tests draw from: the three that take positions
/// from one digest first (so `[..3]` are those), then the seeded one.
#[cfg(test)]
pub(crate) const TESTED_SCHEMES: [IndexScheme; 4] = [
    IndexScheme::EnhancedDoubleHashing,
    IndexScheme::DoubleHashing,
    IndexScheme::GuavaMitz64,
    IndexScheme::SeededHashes,
];

/// The numeric value of each variant is written into filter files and must never change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum IndexScheme {
    /// One digest, k positions by enhanced double hashing (the default; one pass over the item).
    #[default]
    EnhancedDoubleHashing = 1,
    /// k independent digests, one seed each (the textbook construction; k passes).
    SeededHashes = 2,
    /// Plain double hashing with modulo reduction, RedisBloom's scheme: from the digest's
    /// halves `a` (low) and `b` (high), position i is `(a + i·b) mod m` (wrapping 64-bit
    /// arithmetic before the modulo). Weaker than the enhanced scheme when `b` is small; it
    /// exists for data compatibility with RedisBloom.
    DoubleHashing = 3,
    /// Guava's `MURMUR128_MITZ_64`: from the digest's halves `a` (low) and `b` (high),
    /// position i is `((a + i·b) & (2⁶³ − 1)) mod m` (wrapping). With MurmurHash3 and seed 0
    /// a [`crate::BloomFilter`] of m = 64·w bits sets exactly the bits Guava's `BloomFilter`
    /// sets (`interop::guava`, feature `guava`).
    GuavaMitz64 = 4,
    /// Spark's `BloomFilterImpl` (binary version 1), on [`HashFunction::SparkMurmur3Pair`]'s
    /// `h1`, `h2`: for i = 1 … k the 32-bit `h1 + i·h2` (wrapping), its bits flipped if
    /// negative, `mod m`.
    SparkV1 = 5,
    /// Spark's `BloomFilterImplV2` (binary version 2, Spark 4.1 on): a 64-bit `c = h1 ·
    /// (2³¹ − 1)`; k times `c += h2`, position `(c < 0 ? !c : c) mod m` (the flip not kept).
    SparkV2 = 6,
}

impl IndexScheme {
    /// The stable identifier stored in filter files.
    pub fn id(self) -> u8 {
        self as u8
    }

    /// The scheme with the given stored identifier.
    pub fn from_id(id: u8) -> Result<Self, Error> {
        match id {
            1 => Ok(Self::EnhancedDoubleHashing),
            2 => Ok(Self::SeededHashes),
            3 => Ok(Self::DoubleHashing),
            4 => Ok(Self::GuavaMitz64),
            5 => Ok(Self::SparkV1),
            6 => Ok(Self::SparkV2),
            other => Err(Error::UnknownIndexScheme(other)),
        }
    }

    /// A short lower-case name, as shown by `bloomkit info`.
    pub fn name(self) -> &'static str {
        match self {
            Self::EnhancedDoubleHashing => "enhanced-double",
            Self::SeededHashes => "seeded-k",
            Self::DoubleHashing => "double-mod",
            Self::GuavaMitz64 => "guava-mitz64",
            Self::SparkV1 => "spark-v1",
            Self::SparkV2 => "spark-v2",
        }
    }
}

/// The complete hashing configuration of a filter: function, index scheme and seed.
///
/// Two filters can only be merged when their `Hashing` is equal, since the same item
/// must land on the same positions in both.
///
/// ```
/// use bloomkit::{Hashing, HashFunction, IndexScheme};
///
/// let hashing = Hashing::default();
/// assert_eq!(hashing.function, HashFunction::Murmur3);
/// assert_eq!(hashing.scheme, IndexScheme::EnhancedDoubleHashing);
/// let positions: Vec<u64> = hashing.positions(b"dist", 2, 30).collect();
/// assert_eq!(positions.len(), 2);
/// assert!(positions.iter().all(|&p| p < 30));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Hashing {
    /// The 128-bit hash function.
    pub function: HashFunction,
    /// How k positions are derived from the item.
    pub scheme: IndexScheme,
    /// The per-filter seed. Different seeds give independent filters for the same items,
    /// and a secret random seed defends against inputs crafted to collide.
    pub seed: u64,
}

impl Hashing {
    /// The seed a builder was given, where it moved a weak MurmurHash3 seed
    /// ([`MURMUR3_WEAK_SEEDS`]) by [`MURMUR3_SEED_OFFSET`] before hashing with it; `None` for
    /// a seed that is hashed with as it was given. (A seed given as 2⁶³ + s hashes exactly as
    /// one given as s, so s is the seed to give again for the same filter either way.)
    ///
    /// ```
    /// use bloomkit::{BloomFilter, Filter};
    /// let filter = BloomFilter::builder().capacity(100).fpp(0.01).seed(5).build()?;
    /// assert_eq!(filter.hashing().seed, 5 + (1 << 63));
    /// assert_eq!(filter.hashing().seed_before_move(), Some(5));
    /// assert_eq!(filter.hashing().to_string(), "murmur3-x64-128, enhanced-double, seed 5 (hashed as 5 + 2⁶³)");
    /// let plain = BloomFilter::builder().capacity(100).fpp(0.01).seed(42).build()?;
    /// assert_eq!(plain.hashing().seed_before_move(), None);
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn seed_before_move(&self) -> Option<u64> {
        let given = self.seed.wrapping_sub(MURMUR3_SEED_OFFSET);
        (self.function == HashFunction::Murmur3 && MURMUR3_WEAK_SEEDS.contains(&given))
            .then_some(given)
    }

    /// The seed as a user gave it: `5 (hashed as 5 + 2⁶³)` for a weak MurmurHash3 seed a
    /// builder moved ([`seed_before_move`](Self::seed_before_move)), else the seed.
    pub fn seed_text(&self) -> String {
        match self.seed_before_move() {
            Some(given) => format!("{given} (hashed as {given} + 2⁶³)"),
            None => self.seed.to_string(),
        }
    }

    /// The default function and scheme with a fresh random seed from the operating system.
    pub fn with_random_seed() -> Result<Self, Error> {
        Ok(Self {
            seed: random_seed()?,
            ..Self::default()
        })
    }

    /// RedisBloom's Bloom hashing: [`HashFunction::Murmur64APair`] with the seed
    /// [`REDISBLOOM_SEED`] and [`IndexScheme::DoubleHashing`].
    ///
    /// ```
    /// use bloomkit::hash::{murmur64a, Hashing, REDISBLOOM_SEED};
    /// let a = murmur64a(b"item", REDISBLOOM_SEED);
    /// let b = murmur64a(b"item", a);
    /// let got: Vec<u64> = Hashing::redisbloom().positions(b"item", 3, 1152).collect();
    /// let want: Vec<u64> = (0..3u64).map(|i| a.wrapping_add(i.wrapping_mul(b)) % 1152).collect();
    /// assert_eq!(got, want);
    /// ```
    pub fn redisbloom() -> Self {
        Self {
            function: HashFunction::Murmur64APair,
            scheme: IndexScheme::DoubleHashing,
            seed: REDISBLOOM_SEED,
        }
    }

    /// RedisBloom's cuckoo (`CF.*`) hashing, as a [`crate::CuckooFilter`] stores it when it
    /// has RedisBloom's table layout: [`HashFunction::Murmur64APair`] with seed 0, whose low
    /// 64 bits are RedisBloom's `h = MurmurHash64A(item, 0)`, and [`IndexScheme::DoubleHashing`]
    /// as the mark of the layout (a cuckoo filter derives no positions, so its scheme is
    /// otherwise always the default; see the cuckoo module's "RedisBloom's layout").
    ///
    /// ```
    /// use bloomkit::hash::{murmur64a, Hashing};
    /// let h = Hashing::redisbloom_cuckoo();
    /// assert_eq!(h.digest(b"item") as u64, murmur64a(b"item", 0));
    /// ```
    pub fn redisbloom_cuckoo() -> Self {
        Self {
            function: HashFunction::Murmur64APair,
            scheme: IndexScheme::DoubleHashing,
            seed: 0,
        }
    }

    /// The 128-bit digest of an item's bytes under this configuration's function and seed.
    #[inline]
    pub fn digest(&self, bytes: &[u8]) -> u128 {
        self.function.digest(bytes, self.seed)
    }

    /// The `num_hashes` positions in `[0, num_bits)` of an item's bytes.
    ///
    /// `num_bits` must be at least 1.
    #[inline]
    pub fn positions<'a>(&self, bytes: &'a [u8], num_hashes: u32, num_bits: u64) -> Positions<'a> {
        self.positions_using(bytes, || self.digest(bytes), num_hashes, num_bits)
    }

    /// [`positions`](Self::positions) for a caller that has the item's
    /// [`digest`](Self::digest) already (a kind that also keys a table by it): the two
    /// digest schemes take it instead of hashing again; the seeded scheme hashes the bytes
    /// once per position as always.
    #[inline]
    pub(crate) fn positions_with_digest<'a>(
        &self,
        bytes: &'a [u8],
        digest: u128,
        num_hashes: u32,
        num_bits: u64,
    ) -> Positions<'a> {
        self.positions_using(bytes, || digest, num_hashes, num_bits)
    }

    #[inline]
    fn positions_using<'a>(
        &self,
        bytes: &'a [u8],
        digest: impl FnOnce() -> u128,
        num_hashes: u32,
        num_bits: u64,
    ) -> Positions<'a> {
        debug_assert!(num_bits > 0);
        let state = match self.scheme {
            IndexScheme::EnhancedDoubleHashing => {
                let digest = digest();
                PositionState::Double {
                    g: digest as u64,
                    delta: (digest >> 64) as u64,
                }
            }
            IndexScheme::DoubleHashing => {
                let digest = digest();
                PositionState::PlainDouble {
                    a: digest as u64,
                    b: (digest >> 64) as u64,
                }
            }
            IndexScheme::SeededHashes => PositionState::Seeded {
                bytes,
                function: self.function,
                seed: self.seed,
            },
            scheme @ (IndexScheme::GuavaMitz64 | IndexScheme::SparkV1 | IndexScheme::SparkV2) => {
                let digest = digest();
                let (a, b) = (digest as u64, (digest >> 64) as u64);
                PositionState::Java {
                    a,
                    b,
                    scheme,
                    // Spark version 2's running hash starts at h1 · Integer.MAX_VALUE.
                    combined: (a as u32 as i32 as i64).wrapping_mul(i32::MAX as i64),
                }
            }
        };
        Positions {
            state,
            index: 0,
            num_hashes,
            num_bits,
        }
    }
}

impl std::fmt::Display for Hashing {
    /// `murmur3-x64-128, enhanced-double, seed 0`; a moved weak seed as
    /// [`seed_text`](Hashing::seed_text) shows it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}, {}, seed {}",
            self.function.name(),
            self.scheme.name(),
            self.seed_text()
        )
    }
}

/// The hashing choices a builder collects: a [`Hashing`] and whether to replace its seed by a
/// random one when the filter is built. Every kind's builder holds one, and gets its
/// `hash_function`, `index_scheme`, `seed` and `random_seed` setters from one macro, so the
/// options behave alike in every kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HashingChoice {
    /// Function, scheme and the seed given with `seed` (0 by default).
    pub hashing: Hashing,
    /// Draw the seed from the operating system at build time instead.
    pub random_seed: bool,
}

/// The MurmurHash3 seeds a new filter does not hash with as given: 1 to 8.
///
/// MurmurHash3 x64_128 starts both lanes from the seed and mixes the length into both just
/// before the end. An item of at most 8 bytes touches only the first lane, so when the seed
/// equals the item's length the second lane is 0 there, both lanes reach the finaliser with
/// the same value, and the two halves of the digest come out as 2F and 3F of one F. The
/// positions of enhanced double hashing and the cuckoo filter's bucket and fingerprint then
/// depend on each other. Measured with `u64` items, n = 10⁵, ε = 1%: seed 8 hashed as given
/// gave the classic filter 15 811 false positives in 10⁶ queries (1.58%, theory 1.00%;
/// `tests/suite/statistics.rs`, `a_weak_murmur3_seed_keeps_the_false_positive_rate_of_u64_items`,
/// with the move below taken out), and cuckoo tables stopped filling early.
///
/// So a builder given one of these seeds hashes with it plus [`MURMUR3_SEED_OFFSET`]
/// (2⁶³), the seed the filter then reports and saves: distinct seeds stay distinct, and
/// filters built with the same seed still merge. Files saved before with seeds 1 to 8 keep
/// their seed and answer as they did (the loader takes the stored seed as it is). Seed 0 is
/// weak only for the empty item and is kept.
pub const MURMUR3_WEAK_SEEDS: std::ops::RangeInclusive<u64> = 1..=8;

/// What a seed in [`MURMUR3_WEAK_SEEDS`] is moved by: 2⁶³.
pub const MURMUR3_SEED_OFFSET: u64 = 1 << 63;

impl HashingChoice {
    /// The hashing to build with: the chosen one, with a fresh random seed if asked for,
    /// and a MurmurHash3 seed in [`MURMUR3_WEAK_SEEDS`] moved by [`MURMUR3_SEED_OFFSET`].
    pub fn resolve(self) -> Result<Hashing, Error> {
        let mut hashing = self.hashing;
        if self.random_seed {
            hashing.seed = random_seed()?;
        }
        if hashing.function == HashFunction::Murmur3 && MURMUR3_WEAK_SEEDS.contains(&hashing.seed) {
            hashing.seed += MURMUR3_SEED_OFFSET;
        }
        Ok(hashing)
    }
}

/// The hashing setters of a builder whose `hashing` field is a [`HashingChoice`]:
/// `hash_function`, `seed`, `random_seed`, and with `index_scheme` as argument also
/// `index_scheme` (the cuckoo filter has no use for one); with `seed` as argument only
/// `seed` and `random_seed` (for a builder that writes its own `hash_function`).
macro_rules! hashing_setters {
    (index_scheme) => {
        /// How k positions are derived (default enhanced double hashing).
        pub fn index_scheme(mut self, scheme: $crate::hash::IndexScheme) -> Self {
            self.hashing.hashing.scheme = scheme;
            self
        }
        $crate::hash::hashing_setters!();
    };
    () => {
        /// The 128-bit hash function (default MurmurHash3).
        pub fn hash_function(mut self, function: $crate::hash::HashFunction) -> Self {
            self.hashing.hashing.function = function;
            self
        }
        $crate::hash::hashing_setters!(seed);
    };
    (seed) => {
        /// The per-filter seed (default 0).
        pub fn seed(mut self, seed: u64) -> Self {
            self.hashing.hashing.seed = seed;
            self.hashing.random_seed = false;
            self
        }

        /// Draw the seed from the operating system's random generator at `build`.
        pub fn random_seed(mut self) -> Self {
            self.hashing.random_seed = true;
            self
        }
    };
}
pub(crate) use hashing_setters;

/// Reduces a uniformly distributed 64-bit value to `[0, range)` by multiply-shift:
/// `⌊value · range / 2⁶⁴⌋`. Uses the high bits of `value`.
///
/// ```
/// use bloomkit::hash::reduce;
/// assert_eq!(reduce(0, 10), 0);
/// assert_eq!(reduce(u64::MAX, 10), 9);
/// assert_eq!(reduce(1 << 63, 1 << 34), 1 << 33);
/// ```
#[inline]
pub fn reduce(value: u64, range: u64) -> u64 {
    ((value as u128 * range as u128) >> 64) as u64
}

/// Iterator over the k positions of one item; see [`Hashing::positions`].
#[derive(Clone, Debug)]
pub struct Positions<'a> {
    state: PositionState<'a>,
    index: u32,
    num_hashes: u32,
    num_bits: u64,
}

#[derive(Clone, Debug)]
enum PositionState<'a> {
    Double {
        g: u64,
        delta: u64,
    },
    PlainDouble {
        a: u64,
        b: u64,
    },
    Seeded {
        bytes: &'a [u8],
        function: HashFunction,
        seed: u64,
    },
    /// Guava's and Spark's schemes (reduced by modulo, as there).
    Java {
        a: u64,
        b: u64,
        scheme: IndexScheme,
        combined: i64,
    },
}

impl Positions<'static> {
    /// The k positions in `[0, num_bits)` that enhanced double hashing derives from a
    /// digest already computed (`g` = its low half, `δ` = its high half): what
    /// [`Hashing::positions`] gives under [`IndexScheme::EnhancedDoubleHashing`], for kinds
    /// that keep digests rather than items (the buffered filter's insert buffer).
    pub(crate) fn from_digest(digest: u128, num_hashes: u32, num_bits: u64) -> Self {
        Positions {
            state: PositionState::Double {
                g: digest as u64,
                delta: (digest >> 64) as u64,
            },
            index: 0,
            num_hashes,
            num_bits,
        }
    }
}

/// The k positions of enhanced double hashing from a digest (g = its low half, δ = its
/// high half): what [`Positions`] gives under [`IndexScheme::EnhancedDoubleHashing`], as
/// a plain iterator with no scheme to match and no item bytes to keep, for the hot loops of
/// the classic filter (its single calls and its batches). Through `Positions` the classic
/// filter's lookahead window called `Positions::next` out of line twice per position (to
/// prefetch, then to read): `add_many` of a NumPy `int64` array at n = 10⁶ through the
/// Python package took 473 instructions per item, 289 with this iterator (callgrind).
///
/// ```
/// use bloomkit::{Hashing, hash::EnhancedDouble};
/// let hashing = Hashing::default();
/// let digest = hashing.digest(b"dist");
/// let fast: Vec<u64> = EnhancedDouble::new(digest, 7, 9_586).collect();
/// let general: Vec<u64> = hashing.positions(b"dist", 7, 9_586).collect();
/// assert_eq!(fast, general);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct EnhancedDouble {
    g: u64,
    delta: u64,
    index: u32,
    num_hashes: u32,
    num_bits: u64,
}

impl EnhancedDouble {
    /// The `num_hashes` positions in `[0, num_bits)` of the item with this digest
    /// (`num_bits` ≥ 1).
    #[inline(always)]
    pub fn new(digest: u128, num_hashes: u32, num_bits: u64) -> Self {
        EnhancedDouble {
            g: digest as u64,
            delta: (digest >> 64) as u64,
            index: 0,
            num_hashes,
            num_bits,
        }
    }
}

/// `f(k)`, with `k` a constant in the calls for the k of ε = 5%, 1% and 0.1% (4, 7 and 10;
/// 1% is bloomkit's default): a loop over [`EnhancedDouble`] inlined into `f` then unrolls,
/// without a counter, a compare and a branch per position. Any other k runs the same code as
/// a loop. The result is `f(k)` either way.
#[inline(always)]
pub fn with_common_k<R>(k: u32, f: impl FnOnce(u32) -> R) -> R {
    match k {
        7 => f(7),
        10 => f(10),
        4 => f(4),
        _ => f(k),
    }
}

impl Iterator for EnhancedDouble {
    type Item = u64;

    #[inline(always)]
    fn next(&mut self) -> Option<u64> {
        if self.index >= self.num_hashes {
            return None;
        }
        let value = enhanced_double_step(&mut self.g, &mut self.delta, self.index);
        self.index += 1;
        Some(reduce(value, self.num_bits))
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = (self.num_hashes - self.index) as usize;
        (left, Some(left))
    }
}

impl ExactSizeIterator for EnhancedDouble {}

/// One step of enhanced double hashing (Dillinger and Manolios, 2004): returns g_i and
/// moves to g_{i+1} = g_i + b_i, b_{i+1} = b_i + i.
#[inline(always)]
fn enhanced_double_step(g: &mut u64, delta: &mut u64, i: u32) -> u64 {
    let current = *g;
    *g = g.wrapping_add(*delta);
    *delta = delta.wrapping_add(i as u64);
    current
}

impl Iterator for Positions<'_> {
    type Item = u64;

    #[inline]
    fn next(&mut self) -> Option<u64> {
        if self.index >= self.num_hashes {
            return None;
        }
        let i = self.index;
        self.index += 1;
        let value = match &mut self.state {
            PositionState::Double { g, delta } => enhanced_double_step(g, delta, i),
            PositionState::PlainDouble { a, b } => {
                // RedisBloom: (a + i·b) mod m, reduced by modulo, not multiply-shift.
                return Some(a.wrapping_add((i as u64).wrapping_mul(*b)) % self.num_bits);
            }
            PositionState::Seeded {
                bytes,
                function,
                seed,
            } => function.digest(bytes, seeded_hash_seed(*seed, i)) as u64,
            PositionState::Java {
                a,
                b,
                scheme,
                combined,
            } => {
                let index = match scheme {
                    IndexScheme::GuavaMitz64 => {
                        a.wrapping_add((i as u64).wrapping_mul(*b)) & i64::MAX as u64
                    }
                    IndexScheme::SparkV1 => {
                        let (h1, h2) = (*a as u32 as i32, *b as u32 as i32);
                        let c = h1.wrapping_add(((i + 1) as i32).wrapping_mul(h2));
                        (if c < 0 { !c } else { c }) as u64
                    }
                    _ => {
                        *combined = combined.wrapping_add(*b as u32 as i32 as i64);
                        (if *combined < 0 { !*combined } else { *combined }) as u64
                    }
                };
                return Some(index % self.num_bits);
            }
        };
        Some(reduce(value, self.num_bits))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = (self.num_hashes - self.index) as usize;
        (left, Some(left))
    }

    /// What every kind's `contains` runs: written out so that the scheme is matched once per
    /// item, not once per position (through `next` the match stayed inside the loop, and
    /// the classic filter's query took 164 instructions). Same positions, same order, same
    /// early stop as the default method.
    #[inline]
    fn all<F: FnMut(u64) -> bool>(&mut self, mut test: F) -> bool {
        if let PositionState::Double { g, delta } = &mut self.state {
            while self.index < self.num_hashes {
                let i = self.index;
                self.index += 1;
                if !test(reduce(enhanced_double_step(g, delta, i), self.num_bits)) {
                    return false;
                }
            }
            return true;
        }
        for p in self.by_ref() {
            if !test(p) {
                return false;
            }
        }
        true
    }

    /// What every kind's `insert` runs (through `fold` or `for_each`), the scheme matched once
    /// as in [`all`](Self::all).
    #[inline]
    fn fold<B, F: FnMut(B, u64) -> B>(mut self, init: B, mut step: F) -> B {
        let mut acc = init;
        if let PositionState::Double { g, delta } = &mut self.state {
            for i in self.index..self.num_hashes {
                acc = step(
                    acc,
                    reduce(enhanced_double_step(g, delta, i), self.num_bits),
                );
            }
            return acc;
        }
        for p in self {
            acc = step(acc, p);
        }
        acc
    }
}

impl ExactSizeIterator for Positions<'_> {}

/// The seed of hash function i in the [`IndexScheme::SeededHashes`] scheme:
/// `fmix64(seed + i)`, MurmurHash3's finalizer applied to the filter seed plus i.
///
/// Why not `seed + i` itself: XXH3 folds the seed into short inputs almost linearly, so
/// seeds that differ in one low bit give correlated hashes of similar words — measured here,
/// k = 13 hashes with seeds `0..13` on 58 110 words gave 10× the theoretical false-positive
/// rate at ε = 10⁻⁴. Passing the seeds through a bijective mixer makes them differ in about
/// half their bits, which both functions handle as independent (see the statistical tests).
#[inline]
pub fn seeded_hash_seed(seed: u64, i: u32) -> u64 {
    fmix64(seed.wrapping_add(i as u64))
}

/// A fresh random 64-bit seed from the operating system's generator.
pub fn random_seed() -> Result<u64, Error> {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).map_err(|e| Error::RandomSeed(e.to_string()))?;
    Ok(u64::from_le_bytes(bytes))
}

/// The digest of an integer key's little-endian bytes, `function.digest(&key.to_le_bytes(),
/// seed)`, without going through a byte slice: the integer fast path of the filters
/// (`BlockedBloomFilter::insert_u64` …). It returns exactly what the [`Item`] path returns
/// for a `u64`, so a key inserted through either path is found through either.
///
/// For MurmurHash3 the 8-byte case of the reference is written out (no block loop, the
/// tail read as one word); XXH3 has its own short-input path already.
///
/// ```
/// use bloomkit::hash::digest_u64;
/// use bloomkit::HashFunction;
/// for f in [HashFunction::Murmur3, HashFunction::Xxh3] {
///     assert_eq!(digest_u64(f, 42, 7), f.digest(&42u64.to_le_bytes(), 7));
/// }
/// ```
#[inline(always)]
pub fn digest_u64(function: HashFunction, key: u64, seed: u64) -> u128 {
    match function {
        HashFunction::Murmur3 => murmur3_x64_128_u64(key, seed),
        HashFunction::Xxh3 => xxh3_128_u64(key, seed),
        HashFunction::Murmur64APair => function.digest_bytes(&key.to_le_bytes(), seed),
        HashFunction::Xxh64 => widen_xxh64(xxh64_u64(key, seed)),
        HashFunction::SparkMurmur3Pair => function.digest_bytes(&key.to_le_bytes(), seed),
        HashFunction::Fold2 => fold2_128_u64(key, seed),
    }
}

/// The multiply-fold: the 128-bit product of `a` and `b`, its halves XORed (wyhash's `mum`
/// step, Wang Yi; rapidhash's `rapid_mix`, De Carli).
#[inline(always)]
fn fold(a: u64, b: u64) -> u64 {
    let product = a as u128 * b as u128;
    (product as u64) ^ ((product >> 64) as u64)
}

// Dense odd constants: rapidhash's published default secrets (any such constants would do;
// these are the ones `examples/hash_cost.rs` measured).
const FOLD_K0: u64 = 0x2d35_8dcc_aa6c_78a5;
const FOLD_K1: u64 = 0x8bb8_4b93_962e_acc9;
const FOLD_K2: u64 = 0x4b33_a62e_d433_d4a3;
const FOLD_K3: u64 = 0x4d5a_2da5_1de1_aa47;

/// [`HashFunction::Fold2`]'s digest of an item's bytes under `seed`.
///
/// The item's bytes become two words `a`, `b` as wyhash reads short inputs: none (0, 0);
/// 1–3 bytes `(first << 16 | middle << 8 | last, 0)`; 4–7 bytes the first and the last four
/// bytes; 8–16 bytes the first and the last eight (little-endian, overlapping below 16); past
/// 16 bytes the two halves of XXH3-128 of the bytes under `seed`. Then, with `n` the length,
///
/// ```text
///     x  = fold(a ⊕ seed ⊕ K0, b ⊕ seed ⊕ K1 ⊕ n)   first fold: quadratic in the key
///     h  = fold(x ⊕ K2, K3)                      second fold
///     digest = x  (low 64 bits)  |  h  (high 64 bits)
/// ```
///
/// A `u64` item (8 bytes, `a = b = key`) costs two 64×64→128 multiplications. The blocked
/// filter takes its block from `h` and its eight 6-bit fields from `x` (the theory in
/// [`crate::kinds::blocked::theory`] gives why that is uniform enough, and the tests
/// measure it on structured keys).
///
/// ```
/// use bloomkit::hash::fold2_128;
/// use bloomkit::HashFunction;
/// let d = fold2_128(b"dist", 0);
/// assert_eq!(d, HashFunction::Fold2.digest(b"dist", 0));
/// assert_ne!(d, fold2_128(b"dist", 1));
/// assert_ne!(fold2_128(&[0; 8], 0), fold2_128(&[0; 16], 0)); // the length is mixed in
/// ```
pub fn fold2_128(bytes: &[u8], seed: u64) -> u128 {
    let n = bytes.len();
    let le32 =
        |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes")) as u64;
    let le64 = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
    let (a, b) = match n {
        0 => (0, 0),
        1..=3 => (
            (bytes[0] as u64) << 16 | (bytes[n / 2] as u64) << 8 | bytes[n - 1] as u64,
            0,
        ),
        4..=7 => (le32(0), le32(n - 4)),
        8..=16 => (le64(0), le64(n - 8)),
        _ => {
            let d = xxhash_rust::xxh3::xxh3_128_with_seed(bytes, seed);
            (d as u64, (d >> 64) as u64)
        }
    };
    fold2_finish(a, b, seed, n as u64)
}

/// The high half of a fold2-128 digest from its low half: the second fold, `fold(x ⊕ K2,
/// K3)`. The whole digest is thus a function of its low 64 bits (whatever the item, the
/// length and the seed), which lets a construction keep 8 bytes per key instead of 16.
#[inline(always)]
pub(crate) fn fold2_high_of(low: u64) -> u64 {
    fold(low ^ FOLD_K2, FOLD_K3)
}

/// The two folds of [`fold2_128`] from the item's words.
#[inline(always)]
fn fold2_finish(a: u64, b: u64, seed: u64, len: u64) -> u128 {
    let x = fold(a ^ seed ^ FOLD_K0, b ^ seed ^ FOLD_K1 ^ len);
    let h = fold2_high_of(x);
    (x as u128) | ((h as u128) << 64)
}

/// [`fold2_128`] of the 8 little-endian bytes of `key`, written out.
#[inline(always)]
pub fn fold2_128_u64(key: u64, seed: u64) -> u128 {
    fold2_finish(key, key, seed, 8)
}

/// What [`fold2_128_u64_prepared`] takes for `seed`: the constant parts of the first fold's
/// two factors (`seed ⊕ K0`, `seed ⊕ K1 ⊕ 8`), done once per filter instead of once per key.
#[inline(always)]
pub fn fold2_prepare_u64(seed: u64) -> [u64; 2] {
    [seed ^ FOLD_K0, seed ^ FOLD_K1 ^ 8]
}

/// [`fold2_128_u64`] with the seed [`fold2_prepare_u64`]d: the same digest.
///
/// ```
/// use bloomkit::hash::{fold2_128_u64, fold2_128_u64_prepared, fold2_prepare_u64};
/// assert_eq!(fold2_128_u64_prepared(42, fold2_prepare_u64(7)), fold2_128_u64(42, 7));
/// ```
#[inline(always)]
pub fn fold2_128_u64_prepared(key: u64, prepared: [u64; 2]) -> u128 {
    let x = fold(key ^ prepared[0], key ^ prepared[1]);
    let h = fold2_high_of(x);
    (x as u128) | ((h as u128) << 64)
}

/// fold2-128 of 8-byte items under one seed, the seed's constant parts worked out once
/// ([`fold2_prepare_u64`]): the shortcut of the `u64` fast paths, which a filter keeps from
/// [`Hashing::fold2_u64`]. Its digests are exactly [`HashFunction::Fold2`]'s.
///
/// ```
/// use bloomkit::hash::{Fold2U64, Hashing};
/// use bloomkit::HashFunction;
/// let hashing = Hashing { function: HashFunction::Fold2, seed: 7, ..Hashing::default() };
/// let fold2 = hashing.fold2_u64().unwrap();
/// assert_eq!(fold2, Fold2U64::new(7));
/// assert_eq!(fold2.digest(42), HashFunction::Fold2.digest(&42u64.to_le_bytes(), 7));
/// assert_eq!(fold2.digest_bytes(&42u64.to_le_bytes()), Some(fold2.digest(42)));
/// assert_eq!(fold2.digest_bytes(b"four"), None); // not 8 bytes: the general path
/// assert_eq!(Hashing::default().fold2_u64(), None); // MurmurHash3
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fold2U64 {
    prepared: [u64; 2],
}

impl Fold2U64 {
    /// The shortcut for `seed`.
    pub fn new(seed: u64) -> Self {
        Fold2U64 {
            prepared: fold2_prepare_u64(seed),
        }
    }

    /// The digest of `key`'s 8 little-endian bytes: [`fold2_128_u64_prepared`].
    #[inline(always)]
    pub fn digest(self, key: u64) -> u128 {
        fold2_128_u64_prepared(key, self.prepared)
    }

    /// The digest of an item's bytes when they are 8 (a `u64`, `i64` or `f64` item), else
    /// `None` (the caller hashes them the general way). Where the length is known at
    /// compile time the test folds away.
    #[inline(always)]
    pub fn digest_bytes(self, bytes: &[u8]) -> Option<u128> {
        let word = <[u8; 8]>::try_from(bytes).ok()?;
        Some(self.digest(u64::from_le_bytes(word)))
    }
}

impl Hashing {
    /// The fold2-128 shortcut for 8-byte items ([`Fold2U64`]) when this hashing's function
    /// is [`HashFunction::Fold2`], else `None`.
    pub fn fold2_u64(&self) -> Option<Fold2U64> {
        (self.function == HashFunction::Fold2).then(|| Fold2U64::new(self.seed))
    }
}

/// The 128-bit digest of [`HashFunction::Xxh64`]: the XXH64 value `h` and, above it,
/// SplitMix64's finaliser of `h` (a bijection, so the halves are as independent as one
/// 64-bit hash allows).
#[inline]
fn widen_xxh64(h: u64) -> u128 {
    let mut z = h ^ 0x9e37_79b9_7f4a_7c15;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (h as u128) | (((z ^ (z >> 31)) as u128) << 64)
}

/// XXH64 of the 8 little-endian bytes of `key`: the specification's path for an input of
/// one 8-byte lane and no stripes (0.1.1, "Step 1 … Step 6").
#[inline]
pub fn xxh64_u64(key: u64, seed: u64) -> u64 {
    const P1: u64 = 0x9e37_79b1_85eb_ca87;
    const P2: u64 = 0xc2b2_ae3d_27d4_eb4f;
    const P3: u64 = 0x1656_67b1_9e37_79f9;
    const P4: u64 = 0x85eb_ca77_c2b2_ae63;
    const P5: u64 = 0x27d4_eb2f_1656_67c5;
    let mut acc = seed.wrapping_add(P5).wrapping_add(8);
    acc ^= key.wrapping_mul(P2).rotate_left(31).wrapping_mul(P1);
    acc = acc.rotate_left(27).wrapping_mul(P1).wrapping_add(P4);
    acc ^= acc >> 33;
    acc = acc.wrapping_mul(P2);
    acc ^= acc >> 29;
    acc = acc.wrapping_mul(P3);
    acc ^ (acc >> 32)
}

/// XXH3-128 of the 8 little-endian bytes of `key`: the specification's 4-to-8-byte path
/// written out (one 64×64→128 multiply and two avalanches; the crate's generic entry point
/// first branches on the length and is not inlined). `flip` is bytes 16..32 of XXH3's
/// default secret, folded by XOR.
#[inline]
fn xxh3_128_u64(key: u64, seed: u64) -> u128 {
    const FLIP: u64 = 0xc4f0_2334_4dc9_94ac;
    const PRIME64_1_PLUS_32: u64 = 0x9e37_79b1_85eb_caa7;
    let seed = seed ^ (((seed as u32).swap_bytes() as u64) << 32);
    let keyed = key ^ FLIP.wrapping_add(seed);
    let product = keyed as u128 * PRIME64_1_PLUS_32 as u128;
    let (mut lo, mut hi) = (product as u64, (product >> 64) as u64);
    hi = hi.wrapping_add(lo << 1);
    lo ^= hi >> 3;
    lo ^= lo >> 35;
    lo = lo.wrapping_mul(0x9fb2_1c65_1e98_df25);
    lo ^= lo >> 28;
    hi ^= hi >> 37;
    hi = hi.wrapping_mul(0x1656_6791_9e37_79f9);
    hi ^= hi >> 32;
    (lo as u128) | ((hi as u128) << 64)
}

/// [`murmur3_x64_128`] of the 8 little-endian bytes of `key`: the reference with its
/// empty block loop dropped and its tail (k1 = the key, no k2) read at once.
#[inline]
fn murmur3_x64_128_u64(key: u64, seed: u64) -> u128 {
    const C1: u64 = 0x87c3_7b91_1142_53d5;
    const C2: u64 = 0x4cf5_ad43_2745_937f;
    let mut h1 = seed ^ key.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2);
    let mut h2 = seed;
    h1 ^= 8;
    h2 ^= 8;
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    h1 = fmix64(h1);
    h2 = fmix64(h2);
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    (h1 as u128) | ((h2 as u128) << 64)
}

// ---------------------------------------------------------------------------------------
// Items
// ---------------------------------------------------------------------------------------

/// A value a filter can hold: it names the bytes that are hashed for it.
///
/// An item *is* its bytes: two values are the same item exactly when they give the same
/// bytes, whatever their types. The bytes are part of every saved filter, so they never
/// change between versions or platforms.
///
/// | type | bytes |
/// | --- | --- |
/// | `str`, `String`, `[u8]`, `[u8; N]`, `Vec<u8>` | their bytes (`"ab"` and `b"ab"` are one item) |
/// | `u8` … `u128`, `i8` … `i128` | little-endian, at the type's own width |
/// | `usize`, `isize` | as `u64`, `i64`: 8 bytes on every target |
/// | `bool` | one byte, 0 or 1 (as `0u8`, `1u8`) |
/// | `char` | its UTF-8 encoding (`'é'` is the item `"é"`) |
/// | `&T`, `Box<T>`, `Rc<T>`, `Arc<T>`, `Cow<T>` | those of `T` (`Box<str>`, `Arc<[u8]>`, …) |
/// | tuples of items, arity 1 to 4 | each element's length as a little-endian `u64`, then its bytes |
///
/// **Integer widths.** An integer hashes at its own width, so `1u32` and `1u64` are
/// *different* items: a filter built with `u32` items must be asked with `u32`s. This is
/// how filters were always built, and widening the narrow types would change the answers of
/// every saved filter that holds them. `usize` and `isize` are the exception that keeps
/// this rule platform-independent: they hash as `u64` / `i64` (so `1usize` is `1u64`), and
/// a filter built on a 32-bit target answers the same on a 64-bit one. The sign is not
/// part of the bytes: `-1i64` and `u64::MAX` are one item.
///
/// **Tuples.** The length prefixes make the encoding of a tuple decodable, so
/// `("ab", "c")` and `("a", "bc")` are different items, as are tuples of different arities.
/// A tuple item is not the same as the [`Hashed`] tuple, which goes through `Hash`.
///
/// Wrap any other `T: Hash` in [`Hashed`], or implement `Item` for your type.
///
/// ```
/// use bloomkit::{BloomFilter, Hashed};
///
/// let mut filter = BloomFilter::with_capacity(100, 0.01).unwrap();
/// filter.insert("a string");
/// filter.insert(&b"some bytes"[..]);
/// filter.insert(&42u64);
/// filter.insert(&("user", 7u32));
/// filter.insert(&Hashed(vec!["any", "Hash", "value"]));
/// assert!(filter.contains("a string"));
/// assert!(filter.contains(&("user", 7u32)));
///
/// // Integer widths: each type hashes at its own width, usize/isize as u64/i64.
/// assert!(filter.contains(&42usize)); // 42usize is the item 42u64
/// assert!(!filter.contains(&42u32)); // a different item (4 bytes, not 8)
/// assert!(!filter.contains(&("user", 7u64)));
///
/// // Owned and shared strings are their bytes.
/// let shared: std::sync::Arc<str> = "a string".into();
/// assert!(filter.contains(&shared));
/// assert!(filter.contains(&std::borrow::Cow::Borrowed("a string")));
/// ```
///
/// A type that is neither an item nor wrapped says so:
///
/// ```compile_fail
/// struct Point { x: i32, y: i32 }
/// let mut filter = bloomkit::BloomFilter::with_capacity(100, 0.01).unwrap();
/// filter.insert(&Point { x: 1, y: 2 }); // error: `Point` is not a filter item
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a filter item (`bloomkit::Item`)",
    label = "not a `bloomkit::Item`",
    note = "wrap any `T: Hash` in `bloomkit::Hashed(…)`, or implement `bloomkit::Item` to name its bytes",
    note = "items are strings, byte slices, integers, `bool`, `char`, smart pointers to items and tuples of items"
)]
pub trait Item {
    /// Calls `f` with the bytes that stand for this item.
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R;
}

impl Item for [u8] {
    #[inline]
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(self)
    }
}

impl<const N: usize> Item for [u8; N] {
    #[inline]
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(self)
    }
}

impl Item for Vec<u8> {
    #[inline]
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(self)
    }
}

impl Item for str {
    #[inline]
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(self.as_bytes())
    }
}

impl Item for String {
    #[inline]
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(self.as_bytes())
    }
}

impl Item for char {
    #[inline]
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(self.encode_utf8(&mut [0; 4]).as_bytes())
    }
}

impl Item for bool {
    #[inline]
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(&[u8::from(*self)])
    }
}

/// The pointers and borrows that stand for the item they point at.
macro_rules! item_through_deref {
    ($($(#[$attr:meta])* impl [$($gen:tt)*] for $t:ty;)*) => {$(
        $(#[$attr])*
        impl<$($gen)*> Item for $t {
            #[inline]
            fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
                (**self).with_bytes(f)
            }
        }
    )*};
}
item_through_deref! {
    impl [T: Item + ?Sized] for &T;
    impl [T: Item + ?Sized] for Box<T>;
    impl [T: Item + ?Sized] for std::rc::Rc<T>;
    impl [T: Item + ?Sized] for std::sync::Arc<T>;
    impl ['a, T: Item + ToOwned + ?Sized] for std::borrow::Cow<'a, T>;
}

macro_rules! item_for_integers {
    ($($t:ty),*) => {$(
        impl Item for $t {
            #[inline]
            fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
                f(&self.to_le_bytes())
            }
        }
    )*};
}
item_for_integers!(u8, u16, u32, u64, u128, i8, i16, i32, i64, i128);

impl Item for usize {
    #[inline]
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        (*self as u64).with_bytes(f)
    }
}

impl Item for isize {
    #[inline]
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        (*self as i64).with_bytes(f)
    }
}

/// Tuples of items: each element's length (a little-endian `u64`), then its bytes.
macro_rules! item_for_tuples {
    ($(($($name:ident),+))*) => {$(
        impl<$($name: Item),+> Item for ($($name,)+) {
            fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
                #[allow(non_snake_case)]
                let ($($name,)+) = self;
                let mut bytes = Vec::new();
                $($name.with_bytes(|b| {
                    bytes.extend_from_slice(&(b.len() as u64).to_le_bytes());
                    bytes.extend_from_slice(b);
                });)+
                f(&bytes)
            }
        }
    )*};
}
item_for_tuples!((A)(A, B)(A, B, C)(A, B, C, D));

/// Wraps any `T: Hash` so that it can be used as an [`Item`].
///
/// The item's bytes are the bytes `T`'s `Hash` implementation writes, recorded by
/// [`StableHasher`]. What is promised, and what is not:
///
/// * **The hasher's part is fixed.** Every integer written through `write_u16` …
///   `write_i128` is recorded little-endian at its width; `write_usize` and `write_isize`
///   record 8 bytes (as `u64` / `i64`) on every target, so the length prefixes of strings,
///   slices and collections, enum discriminants (which `derive(Hash)` writes as `isize`, or
///   as the `repr` type) and `usize` fields give the same bytes on 32- and 64-bit platforms
///   and on big- and little-endian ones.
/// * **`derive(Hash)`** on your own types writes the fields in declaration order, each by
///   its own `Hash` (an enum first writes its discriminant). Reordering, adding or retyping
///   fields changes the items.
/// * **std's `Hash` implementations** decide the rest, and Rust does not promise them
///   stable across releases (they have not changed in years): a `str` is its bytes and a
///   `0xff` terminator (so `Hashed("x")` is not the item `"x"`), a slice or `Vec` its
///   length then its elements, `char` its `u32`, `bool` one byte.
/// * **Not covered:** std writes a slice or array *of integers* (`Vec<u32>`, `[usize; 4]`,
///   …) as its memory in one `write` call — native byte order, and 4 bytes per `usize` on
///   32-bit targets — which no `Hasher` can correct. Convert such fields to `u64` and
///   little-endian yourself, or implement [`Item`] for the type, when filters travel between
///   platforms. `HashMap`/`HashSet` fields iterate in a random order: never hash them.
///
/// For items whose bytes must outlive everything, the [`Item`] impls of this crate (whose
/// bytes it documents and tests) or an `Item` impl of your own are the firmer ground.
///
/// ```
/// use bloomkit::{BloomFilter, Hashed};
///
/// #[derive(Hash)]
/// struct Visit {
///     user: usize, // 8 bytes on every target
///     page: &'static str,
/// }
///
/// let mut filter = BloomFilter::with_capacity(100, 0.01).unwrap();
/// filter.insert(&Hashed(Visit { user: 7, page: "/home" }));
/// assert!(filter.contains(&Hashed(Visit { user: 7, page: "/home" })));
/// assert!(!filter.contains(&Hashed(Visit { user: 8, page: "/home" })));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Hashed<T>(pub T);

impl<T: Hash> Item for Hashed<T> {
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        let mut hasher = StableHasher::default();
        self.0.hash(&mut hasher);
        f(&hasher.bytes)
    }
}

/// A [`Hasher`] that records the bytes written to it, every integer little-endian and
/// `usize`/`isize` as 8 bytes; used by [`Hashed`] (which says what that does and does not
/// make platform-independent). Its `finish` is the low 64 bits of the MurmurHash3 digest of the
/// recorded bytes with seed 0.
#[derive(Clone, Debug, Default)]
pub struct StableHasher {
    bytes: Vec<u8>,
}

impl StableHasher {
    /// The bytes recorded so far.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

impl Hasher for StableHasher {
    fn finish(&self) -> u64 {
        murmur3_x64_128(&self.bytes, 0) as u64
    }
    fn write(&mut self, bytes: &[u8]) {
        self.bytes.extend_from_slice(bytes);
    }
    fn write_u8(&mut self, i: u8) {
        self.bytes.push(i);
    }
    fn write_u16(&mut self, i: u16) {
        self.write(&i.to_le_bytes());
    }
    fn write_u32(&mut self, i: u32) {
        self.write(&i.to_le_bytes());
    }
    fn write_u64(&mut self, i: u64) {
        self.write(&i.to_le_bytes());
    }
    fn write_u128(&mut self, i: u128) {
        self.write(&i.to_le_bytes());
    }
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }
    fn write_i8(&mut self, i: i8) {
        self.write_u8(i as u8);
    }
    fn write_i16(&mut self, i: i16) {
        self.write_u16(i as u16);
    }
    fn write_i32(&mut self, i: i32) {
        self.write_u32(i as u32);
    }
    fn write_i64(&mut self, i: i64) {
        self.write_u64(i as u64);
    }
    fn write_i128(&mut self, i: i128) {
        self.write_u128(i as u128);
    }
    fn write_isize(&mut self, i: isize) {
        self.write_u64(i as i64 as u64);
    }
}

// ---------------------------------------------------------------------------------------
// MurmurHash3 x64_128
// ---------------------------------------------------------------------------------------

/// MurmurHash3 x64_128 of `bytes` with a 64-bit seed, as a `u128` whose low 64 bits are
/// the first half (`h1`) of the reference implementation's output and the high 64 bits the
/// second (`h2`).
///
/// The reference takes a 32-bit seed and starts both lanes from it; a 64-bit seed starts
/// both lanes from the 64-bit value, which equals the reference for every seed below 2³².
///
/// ```
/// use bloomkit::hash::murmur3_x64_128;
/// assert_eq!(murmur3_x64_128(b"", 0), 0);
/// ```
pub fn murmur3_x64_128(bytes: &[u8], seed: u64) -> u128 {
    const C1: u64 = 0x87c3_7b91_1142_53d5;
    const C2: u64 = 0x4cf5_ad43_2745_937f;

    let mut h1 = seed;
    let mut h2 = seed;
    let mut blocks = bytes.chunks_exact(16);
    for block in &mut blocks {
        let k1 = u64::from_le_bytes(block[..8].try_into().expect("8-byte half"));
        let k2 = u64::from_le_bytes(block[8..].try_into().expect("8-byte half"));

        h1 ^= k1.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2);
        h1 = h1.rotate_left(27).wrapping_add(h2);
        h1 = h1.wrapping_mul(5).wrapping_add(0x52dc_e729);

        h2 ^= k2.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1);
        h2 = h2.rotate_left(31).wrapping_add(h1);
        h2 = h2.wrapping_mul(5).wrapping_add(0x3849_5ab5);
    }

    let tail = blocks.remainder();
    if tail.len() > 8 {
        let k2 = le_partial(&tail[8..]);
        h2 ^= k2.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1);
    }
    if !tail.is_empty() {
        let k1 = le_partial(&tail[..tail.len().min(8)]);
        h1 ^= k1.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2);
    }

    let len = bytes.len() as u64;
    h1 ^= len;
    h2 ^= len;
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    h1 = fmix64(h1);
    h2 = fmix64(h2);
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    (h1 as u128) | ((h2 as u128) << 64)
}

/// Spark's `Murmur3_x86_32.hashUnsafeBytes(bytes, seed)`: MurmurHash3 x86_32 over the
/// 4-byte little-endian blocks, then each trailing byte, sign-extended, mixed as a block of
/// its own (not the reference tail), finalised with the length. On a multiple of 4 bytes it
/// is the reference MurmurHash3 x86_32; on 8 bytes it is Spark's `hashLong`.
///
/// ```
/// use bloomkit::hash::spark_murmur3_x86_32;
/// // MurmurHash3 x86_32 of the empty input with seed 0 is 0.
/// assert_eq!(spark_murmur3_x86_32(b"", 0), 0);
/// ```
pub fn spark_murmur3_x86_32(bytes: &[u8], seed: i32) -> i32 {
    const C1: u32 = 0xcc9e_2d51;
    const C2: u32 = 0x1b87_3593;
    let mix_k1 = |k1: u32| k1.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
    let mix_h1 = |h1: u32, k1: u32| {
        (h1 ^ k1)
            .rotate_left(13)
            .wrapping_mul(5)
            .wrapping_add(0xe654_6b64)
    };
    let mut h1 = seed as u32;
    let mut blocks = bytes.chunks_exact(4);
    for block in &mut blocks {
        h1 = mix_h1(
            h1,
            mix_k1(u32::from_le_bytes(block.try_into().expect("4 bytes"))),
        );
    }
    for &b in blocks.remainder() {
        h1 = mix_h1(h1, mix_k1(i32::from(b as i8) as u32));
    }
    h1 ^= bytes.len() as u32;
    h1 ^= h1 >> 16;
    h1 = h1.wrapping_mul(0x85eb_ca6b);
    h1 ^= h1 >> 13;
    h1 = h1.wrapping_mul(0xc2b2_ae35);
    (h1 ^ (h1 >> 16)) as i32
}

/// The seed RedisBloom hashes Bloom filter items with (MurmurHash64A's own multiplier).
pub const REDISBLOOM_SEED: u64 = 0xc6a4_a793_5bd1_e995;

/// MurmurHash64A (Appleby's MurmurHash2 for 64-bit platforms) of `bytes` with a 64-bit
/// seed, reading 8-byte blocks little-endian as the reference does on x86-64. RedisBloom
/// hashes Bloom items with it (see [`Hashing::redisbloom`]) and cuckoo items with seed 0.
/// Checked against SMHasher's verification value in the tests.
///
/// ```
/// use bloomkit::hash::murmur64a;
/// assert_eq!(murmur64a(b"", 0), 0);
/// ```
pub fn murmur64a(bytes: &[u8], seed: u64) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    let mut h = seed ^ (bytes.len() as u64).wrapping_mul(M);
    let mut blocks = bytes.chunks_exact(8);
    for block in &mut blocks {
        let mut k = u64::from_le_bytes(block.try_into().expect("8-byte block"));
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        h ^= le_partial(tail);
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

/// The 0 to 8 bytes of `bytes` as a little-endian integer (byte i at bits 8i..8i+8), as the
/// Murmur hashes' tail switches assemble it, without a loop over the bytes: 4 to 8 bytes are
/// two 4-byte reads, the second shifted onto the first where they overlap (the overlapping
/// bytes are the same, so OR-ing them changes nothing); 1 to 3 bytes are the first, middle
/// and last byte, which cover every position. Items are short, so the tail is a large share
/// of a hash: 12-byte keys spent a third of MurmurHash64A in the bytewise loop.
#[inline]
fn le_partial(bytes: &[u8]) -> u64 {
    let n = bytes.len();
    debug_assert!(n <= 8);
    if n >= 4 {
        let u32_at =
            |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().expect("4 bytes")) as u64;
        u32_at(0) | u32_at(n - 4) << (8 * (n - 4))
    } else if n > 0 {
        let byte_at = |i: usize| (bytes[i] as u64) << (8 * i);
        byte_at(0) | byte_at(n / 2) | byte_at(n - 1)
    } else {
        0
    }
}

/// MurmurHash2, 32-bit (Appleby), of `bytes` with a 32-bit seed, reading 4-byte blocks
/// little-endian as the reference does on x86: the hash of RedisBloom 1.x's Bloom chains
/// (`a = h(item, 0x9747b28c)`, `b = h(item, a)`), which RedisBloom 2.4 still answers from.
/// Checked against SMHasher's verification value in the tests.
///
/// ```
/// use bloomkit::hash::murmur2;
/// assert_eq!(murmur2(b"", 0), 0);
/// ```
pub fn murmur2(bytes: &[u8], seed: u32) -> u32 {
    const M: u32 = 0x5bd1_e995;
    // The reference mixes in the length as a C `int` converted to `uint32_t`.
    let mut h = seed ^ bytes.len() as u32;
    let mut blocks = bytes.chunks_exact(4);
    for block in &mut blocks {
        let mut k = u32::from_le_bytes(block.try_into().expect("4-byte block"));
        k = k.wrapping_mul(M);
        k ^= k >> 24;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M) ^ k;
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        for (i, &byte) in tail.iter().enumerate() {
            h ^= (byte as u32) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^ (h >> 15)
}

/// MurmurHash3's 64-bit finalizer: every input bit affects every output bit.
#[inline]
fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^= k >> 33;
    k
}

/// The SplitMix64 increment γ: 2⁶⁴ divided by the golden ratio, made odd (Steele, Lea &
/// Flood, "Fast Splittable Pseudorandom Number Generators", OOPSLA 2014).
pub const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// SplitMix64's output function: Stafford's "Mix13" variant of the MurmurHash3 finaliser,
/// a bijection of 64-bit words whose every output bit depends on every input bit.
#[inline]
pub fn mix64(z: u64) -> u64 {
    let z = mix64_unfinished(z);
    z ^ (z >> 31)
}

/// [`mix64`] without its last step, `z ^ (z >> 31)`, which leaves the top 31 bits as they
/// are: so the top b ≤ 31 bits of this are those of `mix64(z)` (the variable-increment
/// filter draws its increments from them).
#[inline(always)]
pub(crate) fn mix64_unfinished(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb)
}

/// The SplitMix64 generator: state += γ, output mix64(state). The one pseudo-random
/// generator of the crate — the stable filter's decrements, the cuckoo filter's evictions,
/// the variable-increment filter's increments, and the keys of tests, studies and benches
/// — so that every one of them is reproducible from its seed and stored state.
///
/// ```
/// use bloomkit::hash::SplitMix64;
/// // Vigna's reference splitmix64.c, seed 0.
/// let mut rng = SplitMix64::new(0);
/// assert_eq!(rng.next_u64(), 0xe220_a839_7b1d_cdaf);
/// assert_eq!(rng.state(), bloomkit::hash::GOLDEN_GAMMA);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator whose state is `seed`.
    pub const fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    /// Advances the state by γ and returns the mixed state.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN_GAMMA);
        mix64(self.state)
    }

    /// The state (stored in the files of the kinds that keep a generator).
    pub const fn state(&self) -> u64 {
        self.state
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The halves of MurmurHash3 x64_128 for an item of `seed` bytes (≤ 8) are 2F and 3F of
    /// one value F — why new filters move those seeds — and for any other seed they are not.
    #[test]
    fn murmur3_weak_seeds_are_the_ones_whose_halves_are_2f_and_3f() {
        let halves = |bytes: &[u8], seed| {
            let d = murmur3_x64_128(bytes, seed);
            (d as u64, (d >> 64) as u64)
        };
        let related = |(a, b): (u64, u64)| {
            // a = 2F and b = 3F (mod 2⁶⁴) ⇔ 2b = 3a and a is even.
            b.wrapping_mul(2) == a.wrapping_mul(3) && a % 2 == 0
        };
        for seed in MURMUR3_WEAK_SEEDS {
            let item = vec![0xA5u8; seed as usize];
            assert!(related(halves(&item, seed)), "seed {seed}");
            assert!(!related(halves(&item, seed + 100)), "seed {seed}");
        }
        assert!(
            !related(halves(&[1; 9], 9)),
            "9 bytes reach the second lane"
        );
        let resolved = |function, seed| {
            HashingChoice {
                hashing: Hashing {
                    function,
                    seed,
                    ..Hashing::default()
                },
                random_seed: false,
            }
            .resolve()
            .unwrap()
            .seed
        };
        for seed in MURMUR3_WEAK_SEEDS {
            let moved = resolved(HashFunction::Murmur3, seed);
            assert_eq!(moved, seed + MURMUR3_SEED_OFFSET);
            let item = vec![0xA5u8; seed as usize];
            assert!(!related(halves(&item, moved)), "seed {seed}");
            assert_eq!(resolved(HashFunction::Xxh3, seed), seed);
        }
        assert_eq!(resolved(HashFunction::Murmur3, 0), 0);
        assert_eq!(resolved(HashFunction::Murmur3, 9), 9);
    }

    #[test]
    fn positions_from_a_known_digest_are_the_positions() {
        for scheme in [
            IndexScheme::EnhancedDoubleHashing,
            IndexScheme::DoubleHashing,
            IndexScheme::SeededHashes,
        ] {
            let hashing = Hashing {
                scheme,
                seed: 77,
                ..Hashing::default()
            };
            for item in [&b""[..], b"a", b"twelve bytes", &[7u8; 40]] {
                let digest = hashing.digest(item);
                let given: Vec<u64> = hashing
                    .positions_with_digest(item, digest, 9, 1_000_003)
                    .collect();
                let computed: Vec<u64> = hashing.positions(item, 9, 1_000_003).collect();
                assert_eq!(given, computed, "{scheme:?}");
            }
        }
    }

    /// The default scheme's plain iterator gives the positions of the general one, for
    /// digests with every kind of half (0, all ones, random), k from 0 to 40 and m from 1 to
    /// near 2⁶⁴.
    #[test]
    fn enhanced_double_gives_the_positions_of_the_general_iterator() {
        let mut rng = SplitMix64::new(20);
        let mut digests = vec![0u128, u128::MAX, 1, 1 << 64, u64::MAX as u128];
        digests.extend((0..200).map(|_| (rng.next_u64() as u128) << 64 | rng.next_u64() as u128));
        for digest in digests {
            for k in [0, 1, 2, 7, 13, 40] {
                for m in [1, 2, 63, 64, 9_586, 1 << 33, u64::MAX - 1] {
                    let fast: Vec<u64> = EnhancedDouble::new(digest, k, m).collect();
                    let general: Vec<u64> = Positions::from_digest(digest, k, m).collect();
                    // `collect` on the general iterator runs `next` (its written-out `fold`
                    // is a second route, also held to it).
                    let mut by_next = Positions::from_digest(digest, k, m);
                    let stepped: Vec<u64> = std::iter::from_fn(|| by_next.next()).collect();
                    assert_eq!(fast, stepped, "digest {digest:#x}, k {k}, m {m}");
                    assert_eq!(general, stepped, "digest {digest:#x}, k {k}, m {m}");
                    assert_eq!(EnhancedDouble::new(digest, k, m).len(), k as usize);
                }
            }
        }
    }

    #[test]
    fn le_partial_is_the_bytewise_little_endian_value() {
        let mut bytes = [0u8; 8];
        let mut state = 1u64;
        for _ in 0..200 {
            state = mix64(state.wrapping_add(GOLDEN_GAMMA));
            bytes.copy_from_slice(&state.to_le_bytes());
            for n in 0..=8 {
                let bytewise = bytes[..n]
                    .iter()
                    .enumerate()
                    .fold(0u64, |v, (i, &b)| v | (b as u64) << (8 * i));
                assert_eq!(le_partial(&bytes[..n]), bytewise, "{n} bytes of {state:#x}");
            }
        }
    }

    /// SMHasher's VerificationTest: hash keys {}, {0}, {0,1}, … {0..254} with seed
    /// 256 − len, concatenate the 16-byte outputs, hash that with seed 0 and read the first
    /// four bytes as a little-endian u32. The published value for MurmurHash3_x64_128 is
    /// 0x6384BA69.
    #[test]
    fn murmur3_passes_smhasher_verification() {
        let mut all = Vec::with_capacity(256 * 16);
        let mut key = Vec::with_capacity(256);
        for len in 0..256usize {
            key.clear();
            key.extend((0..len).map(|i| i as u8));
            let digest = murmur3_x64_128(&key, (256 - len) as u64);
            all.extend_from_slice(&(digest as u64).to_le_bytes());
            all.extend_from_slice(&((digest >> 64) as u64).to_le_bytes());
        }
        let final_digest = murmur3_x64_128(&all, 0);
        let verification =
            u32::from_le_bytes((final_digest as u64).to_le_bytes()[..4].try_into().unwrap());
        assert_eq!(verification, 0x6384_BA69);
    }

    /// SMHasher's VerificationTest for MurmurHash64A ("Murmur2B"): keys {}, {0}, … {0..254}
    /// hashed with seed 256 − len, the 8-byte outputs concatenated and hashed with seed 0;
    /// the first four bytes, little-endian, are the published 0x1F0D3804.
    #[test]
    fn murmur64a_passes_smhasher_verification() {
        let mut all = Vec::with_capacity(256 * 8);
        let mut key = Vec::with_capacity(256);
        for len in 0..256usize {
            key.clear();
            key.extend((0..len).map(|i| i as u8));
            all.extend_from_slice(&murmur64a(&key, (256 - len) as u64).to_le_bytes());
        }
        let verification = murmur64a(&all, 0) as u32;
        assert_eq!(verification, 0x1F0D_3804);
    }

    /// SMHasher's VerificationTest for 32-bit MurmurHash2: keys {}, {0}, … {0..254} hashed
    /// with seed 256 − len, the 4-byte outputs concatenated and hashed with seed 0; the
    /// published value is 0x27864C1E.
    #[test]
    fn murmur2_passes_smhasher_verification() {
        let mut all = Vec::with_capacity(256 * 4);
        let mut key = Vec::with_capacity(256);
        for len in 0..256usize {
            key.clear();
            key.extend((0..len).map(|i| i as u8));
            all.extend_from_slice(&murmur2(&key, (256 - len) as u32).to_le_bytes());
        }
        assert_eq!(murmur2(&all, 0), 0x2786_4C1E);
    }

    #[test]
    fn redisbloom_pair_chains_the_seeds_and_positions_use_modulo() {
        let h = Hashing::redisbloom();
        let a = murmur64a(b"foo", REDISBLOOM_SEED);
        let b = murmur64a(b"foo", a);
        assert_eq!(h.digest(b"foo"), (a as u128) | ((b as u128) << 64));
        let got: Vec<u64> = h.positions(b"foo", 5, 1000).collect();
        let want: Vec<u64> = (0..5u64)
            .map(|i| a.wrapping_add(i.wrapping_mul(b)) % 1000)
            .collect();
        assert_eq!(got, want);
    }

    /// Known outputs, as printed by the Python `mmh3` package (`mmh3.hash128(s, seed,
    /// signed=False)` gives `h1 | h2 << 64`), an implementation independent of this one.
    #[test]
    fn murmur3_matches_published_vectors() {
        for &(input, seed, expected) in MURMUR3_VECTORS {
            assert_eq!(
                murmur3_x64_128(input.as_bytes(), seed),
                expected,
                "mmh3.hash128({input:?}, {seed})"
            );
        }
    }

    /// Cross-check on random lengths against the `murmur3` crate (another independent
    /// implementation) for every tail length.
    #[test]
    fn murmur3_matches_murmur3_crate_on_every_tail_length() {
        let data: Vec<u8> = (0..200u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
            .collect();
        for len in 0..data.len() {
            for seed in [0u32, 1, 0xdead_beef] {
                let expected = murmur3::murmur3_x64_128(&mut &data[..len], seed).unwrap();
                // The crate returns h2 << 64 | h1 in its own order; normalise by halves.
                let ours = murmur3_x64_128(&data[..len], seed as u64);
                let ours_crate_order = ((ours as u64 as u128) << 64) | (ours >> 64);
                assert!(
                    expected == ours || expected == ours_crate_order,
                    "len {len} seed {seed}: crate {expected:032x}, ours {ours:032x}"
                );
            }
        }
    }

    /// XXH3-128 known outputs, as printed by the Python `xxhash` package
    /// (`xxhash.xxh3_128_intdigest(s, seed)`), including the empty input's published value.
    #[test]
    fn xxh3_matches_published_vectors() {
        for &(input, seed, expected) in XXH3_VECTORS {
            assert_eq!(
                HashFunction::Xxh3.digest(input.as_bytes(), seed),
                expected,
                "xxh3_128({input:?}, {seed})"
            );
        }
    }

    include!("vectors.rs");

    /// `fold2-128`'s values, computed independently from its definition (the `fold2_128`
    /// docs) with Python's integers: every length class of the short path, seeds, the
    /// 8-byte integer path and its prepared-seed form.
    #[test]
    fn fold2_matches_values_computed_from_its_definition() {
        let vectors: [(&[u8], u64, u128); 7] = [
            (b"", 0, 0x341960db6678ebb1ca813bf4c7abf0a9),
            (b"a", 0, 0x5874dd237265b35e38d422f1ec8386d8),
            (b"dist", 0, 0x7f6a397d645693e1b96c81219656f053),
            (b"bloomkit", 7, 0x85bef091b10d19a6b9da24c3811a0d79),
            (
                &[42, 0, 0, 0, 0, 0, 0, 0],
                0,
                0x6b6bd8b2bf13da5ac9df654b0a30da5b,
            ),
            (
                b"0123456789abcdef",
                0xdeadbeef,
                0x0f7f19463dc3d6bef0972a57f85c891f,
            ),
            (b"hello, world", 1, 0xcf8691de9d6fed78808b6a5eb0d522f9),
        ];
        for (bytes, seed, want) in vectors {
            assert_eq!(HashFunction::Fold2.digest(bytes, seed), want, "{bytes:?}");
            assert_eq!(fold2_128(bytes, seed), want, "{bytes:?}");
        }
        assert_eq!(fold2_128_u64(42, 0), 0x6b6bd8b2bf13da5ac9df654b0a30da5b);
        for (key, seed) in [(0u64, 0u64), (42, 7), (u64::MAX, u64::MAX)] {
            let fold2 = Fold2U64::new(seed);
            assert_eq!(fold2.digest(key), fold2_128(&key.to_le_bytes(), seed));
            assert_eq!(
                fold2.digest_bytes(&key.to_le_bytes()),
                Some(fold2.digest(key))
            );
            assert_eq!(fold2.digest_bytes(&key.to_le_bytes()[1..]), None);
        }
        // Past 16 bytes: XXH3-128's halves through the same two folds.
        let long = b"a longer item than sixteen bytes";
        let d = xxhash_rust::xxh3::xxh3_128_with_seed(long, 5);
        assert_eq!(
            fold2_128(long, 5),
            fold2_finish(d as u64, (d >> 64) as u64, 5, long.len() as u64)
        );
        assert_ne!(fold2_128(long, 5), fold2_128(long, 6));
        // The seed is in both factors: a first word equal to K0 does not zero the product
        // for every seed (wyhash's multiply-by-zero collapse needs the seed to aim at it).
        let aimed = |rest: u8, seed: u64| {
            let mut item = (FOLD_K0 ^ seed).to_le_bytes().to_vec();
            item.extend_from_slice(&[rest; 8]);
            fold2_128(&item, seed)
        };
        assert_eq!(aimed(1, 0), aimed(2, 0), "the collapse this guards against");
        assert_ne!(
            aimed(1, 0),
            fold2_128(&[&FOLD_K0.to_le_bytes()[..], &[1; 8]].concat(), 9)
        );
    }

    /// Items that read the same words but differ in length get different digests (the
    /// length is mixed in), and so do the length classes' boundaries.
    #[test]
    fn fold2_separates_lengths_that_read_the_same_words() {
        let mut seen = std::collections::HashSet::new();
        for len in 0..=40usize {
            assert!(
                seen.insert(fold2_128(&vec![0u8; len], 0)),
                "zeros of length {len}"
            );
        }
        assert_ne!(
            fold2_128(&[1, 2, 3, 4], 0),
            fold2_128(&[1, 2, 3, 4, 1, 2, 3, 4], 0)
        );
    }

    /// XXH64's published values (the specification's reference implementation, as printed by
    /// `xxhsum -H1` and the Python `xxhash` package): the empty input and "abc" with seed 0.
    #[test]
    fn xxh64_matches_published_vectors() {
        assert_eq!(
            HashFunction::Xxh64.digest(b"", 0) as u64,
            0xef46_db37_51d8_e999
        );
        assert_eq!(
            HashFunction::Xxh64.digest(b"abc", 0) as u64,
            0x44bc_2cf5_ad77_0999
        );
        for key in [0u64, 1, 0x0123_4567_89ab_cdef, u64::MAX] {
            for seed in [0u64, 7, u64::MAX] {
                assert_eq!(
                    xxh64_u64(key, seed),
                    xxhash_rust::xxh64::xxh64(&key.to_le_bytes(), seed)
                );
            }
        }
    }

    #[test]
    fn seeded_scheme_uses_one_seed_per_hash() {
        let hashing = Hashing {
            scheme: IndexScheme::SeededHashes,
            seed: 10,
            ..Hashing::default()
        };
        let m = 1_000_003;
        let got: Vec<u64> = hashing.positions(b"dist", 4, m).collect();
        let want: Vec<u64> = (0..4)
            .map(|i| reduce(murmur3_x64_128(b"dist", fmix64(10 + i)) as u64, m))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn double_hashing_follows_the_enhanced_recurrence() {
        let hashing = Hashing::default();
        let digest = hashing.digest(b"dist");
        let (mut g, mut b) = (digest as u64, (digest >> 64) as u64);
        let mut want = Vec::new();
        for i in 0..7u64 {
            want.push(reduce(g, 999));
            g = g.wrapping_add(b);
            b = b.wrapping_add(i);
        }
        let got: Vec<u64> = hashing.positions(b"dist", 7, 999).collect();
        assert_eq!(got, want);
    }

    /// A filter of m = 2³⁴ bits must use all of them: positions of many items, split into
    /// 64 equal ranges, must fill every range about equally (chi-square, 63 degrees of
    /// freedom; 140 is far beyond the 0.9999 quantile ≈ 114), and some positions must lie
    /// past 2³³ and 2³² (a 32-bit reduction would never get there).
    #[test]
    fn positions_spread_over_a_filter_past_two_to_the_32() {
        let m: u64 = 1 << 34;
        for scheme in [
            IndexScheme::EnhancedDoubleHashing,
            IndexScheme::SeededHashes,
        ] {
            let hashing = Hashing {
                scheme,
                ..Hashing::default()
            };
            let mut buckets = [0u64; 64];
            let mut max = 0;
            let mut total = 0u64;
            for item in 0u64..20_000 {
                for p in hashing.positions(&item.to_le_bytes(), 7, m) {
                    assert!(p < m);
                    max = max.max(p);
                    buckets[(p >> 28) as usize] += 1;
                    total += 1;
                }
            }
            let expected = total as f64 / 64.0;
            let chi2: f64 = buckets
                .iter()
                .map(|&c| (c as f64 - expected).powi(2) / expected)
                .sum();
            assert!(chi2 < 140.0, "{scheme:?}: chi2 {chi2}");
            assert!(max > (m / 64) * 63, "{scheme:?}: max {max}");
        }
    }

    #[test]
    fn integers_hash_their_little_endian_bytes() {
        let h = Hashing::default();
        assert_eq!(
            42u64.with_bytes(|b| h.digest(b)),
            h.digest(&[42, 0, 0, 0, 0, 0, 0, 0])
        );
        assert_ne!(
            1u32.with_bytes(|b| h.digest(b)),
            1u64.with_bytes(|b| h.digest(b))
        );
    }

    /// The bytes of an item, for comparing items.
    fn bytes_of<I: Item + ?Sized>(item: &I) -> Vec<u8> {
        item.with_bytes(|b| b.to_vec())
    }

    #[test]
    fn usize_and_isize_are_their_64_bit_values_on_every_target() {
        for v in [0usize, 1, 255, 256, usize::MAX] {
            assert_eq!(bytes_of(&v), (v as u64).to_le_bytes());
        }
        assert_eq!(bytes_of(&1usize), [1, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(bytes_of(&-1isize), [0xff; 8]);
        assert_eq!(bytes_of(&-2isize), (-2i64).to_le_bytes());
        assert_eq!(bytes_of(&isize::MIN), (isize::MIN as i64).to_le_bytes());
    }

    #[test]
    fn bool_is_one_byte_and_char_its_utf8() {
        assert_eq!(bytes_of(&false), [0]);
        assert_eq!(bytes_of(&true), [1]);
        assert_eq!(bytes_of(&'a'), b"a");
        assert_eq!(bytes_of(&'é'), [0xc3, 0xa9]);
        assert_eq!(bytes_of(&'🦀'), "🦀".as_bytes());
    }

    #[test]
    fn pointers_and_cows_are_the_item_they_point_at() {
        use std::borrow::Cow;
        use std::rc::Rc;
        use std::sync::Arc;
        let boxed: Box<str> = "abc".into();
        let arc: Arc<str> = "abc".into();
        let rc: Rc<str> = "abc".into();
        let cow: Cow<'_, str> = Cow::Owned("abc".to_string());
        let bytes_box: Box<[u8]> = b"abc".to_vec().into();
        let bytes_arc: Arc<[u8]> = b"abc".to_vec().into();
        let bytes_cow: Cow<'_, [u8]> = Cow::Borrowed(b"abc");
        for bytes in [
            bytes_of(&boxed),
            bytes_of(&arc),
            bytes_of(&rc),
            bytes_of(&cow),
            bytes_of(&bytes_box),
            bytes_of(&bytes_arc),
            bytes_of(&bytes_cow),
            bytes_of(&Box::new(7u8)),
        ] {
            assert_eq!(bytes, if bytes.len() == 1 { &[7][..] } else { b"abc" });
        }
    }

    #[test]
    fn tuples_length_prefix_every_element() {
        let mut expected = vec![2, 0, 0, 0, 0, 0, 0, 0];
        expected.extend_from_slice(b"ab");
        expected.extend_from_slice(&[4, 0, 0, 0, 0, 0, 0, 0]);
        expected.extend_from_slice(&[7, 0, 0, 0]);
        assert_eq!(bytes_of(&("ab", 7u32)), expected);
        assert_eq!(bytes_of(&(true,)), [1, 0, 0, 0, 0, 0, 0, 0, 1]);
        assert_eq!(
            bytes_of(&("a", 'b', 3usize, [9u8; 2])).len(),
            4 * 8 + 1 + 1 + 8 + 2
        );
    }

    #[test]
    fn tuples_that_concatenate_alike_are_different_items() {
        assert_ne!(bytes_of(&("ab", "c")), bytes_of(&("a", "bc")));
        assert_ne!(bytes_of(&("", "abc")), bytes_of(&("abc", "")));
        assert_ne!(bytes_of(&("a", "b")), bytes_of(&("a", "b", "")));
        assert_ne!(bytes_of(&(("a", "b"),)), bytes_of(&("a", "b")));
        assert_ne!(bytes_of(&("ab",)), bytes_of("ab"));
    }

    /// The same struct with a `usize` field and with a `u64` one; the byte sequence both
    /// must give is written out by hand from the rules in `Hashed`'s documentation.
    mod derived {
        #[derive(Hash)]
        pub struct WithUsize {
            pub id: usize,
            pub name: &'static str,
            pub tag: Option<u16>,
        }
        #[derive(Hash)]
        pub struct WithU64 {
            pub id: u64,
            pub name: &'static str,
            pub tag: Option<u16>,
        }
        pub fn expected() -> Vec<u8> {
            let mut bytes = vec![4, 3, 2, 1, 0, 0, 0, 0]; // id, 8 bytes
            bytes.extend_from_slice(b"dist\xff"); // the str and std's terminator
            bytes.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0]); // Some: discriminant 1, as isize
            bytes.extend_from_slice(&[7, 0]); // the u16
            bytes
        }
    }

    #[test]
    fn a_derived_struct_with_a_usize_field_hashes_like_one_with_u64() {
        use derived::*;
        let with_usize = Hashed(WithUsize {
            id: 0x0102_0304,
            name: "dist",
            tag: Some(7),
        });
        let with_u64 = Hashed(WithU64 {
            id: 0x0102_0304,
            name: "dist",
            tag: Some(7),
        });
        assert_eq!(bytes_of(&with_usize), expected());
        assert_eq!(bytes_of(&with_u64), expected());
    }

    /// Pins one `Hashed` digest: MurmurHash3 x64_128 (seed 0) of the bytes above, computed
    /// independently with Python's `mmh3.hash128(bytes, 0, True, signed=False)`.
    #[test]
    fn a_hashed_digest_is_pinned() {
        let item = Hashed(derived::WithUsize {
            id: 0x0102_0304,
            name: "dist",
            tag: Some(7),
        });
        let digest = item.with_bytes(|b| murmur3_x64_128(b, 0));
        assert_eq!(digest, 0xe917_4b58_064c_6c6a_2ae1_e6ba_ca2f_02bf);
        let mut hasher = StableHasher::default();
        std::hash::Hash::hash(&item.0, &mut hasher);
        assert_eq!(hasher.finish(), 0x2ae1_e6ba_ca2f_02bf);
    }

    /// The documented hole: std writes a slice of integers as its memory, so a `usize`
    /// element takes the platform's width (the length prefix is still 8 bytes).
    #[test]
    fn integer_slices_are_written_as_memory_as_documented() {
        let bytes = bytes_of(&Hashed(vec![1usize]));
        assert_eq!(bytes.len(), 8 + std::mem::size_of::<usize>());
        assert_eq!(bytes[..8], [1, 0, 0, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn hashed_values_do_not_depend_on_usize_width() {
        let bytes = Hashed(7usize).with_bytes(|b| b.to_vec());
        assert_eq!(bytes, 7u64.to_le_bytes());
    }

    #[test]
    fn strings_and_their_bytes_are_the_same_item() {
        let h = Hashing::default();
        assert_eq!(
            "abc".with_bytes(|b| h.digest(b)),
            b"abc".with_bytes(|b| h.digest(b))
        );
        assert_eq!(
            String::from("abc").with_bytes(|b| h.digest(b)),
            h.digest(b"abc")
        );
    }

    #[test]
    fn stored_identifiers_round_trip_and_unknown_ones_are_errors() {
        for f in [
            HashFunction::Murmur3,
            HashFunction::Xxh3,
            HashFunction::Murmur64APair,
            HashFunction::Xxh64,
            HashFunction::SparkMurmur3Pair,
            HashFunction::Fold2,
        ] {
            assert_eq!(HashFunction::from_id(f.id()).unwrap(), f);
        }
        for s in [
            IndexScheme::EnhancedDoubleHashing,
            IndexScheme::SeededHashes,
            IndexScheme::DoubleHashing,
        ] {
            assert_eq!(IndexScheme::from_id(s.id()).unwrap(), s);
        }
        assert_eq!(HashFunction::Fold2.id(), 6);
        assert!(HashFunction::from_id(0).is_err());
        assert!(HashFunction::from_id(7).is_err());
        assert!(IndexScheme::from_id(77).is_err());
    }

    /// `Positions` writes out `all` and `fold` (the scheme matched once per item); both
    /// must see the positions `next` gives, in its order, `all` stopping where `next`'s
    /// default `all` would, and leave the iterator where the default leaves it.
    #[test]
    fn written_out_all_and_fold_follow_next() {
        let mut rng = SplitMix64::new(11);
        for scheme in [
            IndexScheme::EnhancedDoubleHashing,
            IndexScheme::SeededHashes,
            IndexScheme::DoubleHashing,
        ] {
            for _ in 0..300 {
                let hashing = Hashing {
                    scheme,
                    seed: rng.next_u64(),
                    ..Hashing::default()
                };
                let bytes = rng.next_u64().to_le_bytes();
                let k = 1 + (rng.next_u64() % 20) as u32;
                let m = 1 + rng.next_u64() % 5_000;
                let by_next: Vec<u64> = std::iter::from_fn({
                    let mut p = hashing.positions(&bytes, k, m);
                    move || p.next()
                })
                .collect();
                let mut folded = Vec::new();
                hashing
                    .positions(&bytes, k, m)
                    .fold((), |(), p| folded.push(p));
                assert_eq!(folded, by_next, "{scheme:?}");
                let stop = rng.next_u64() % (m + 1);
                let mut seen = Vec::new();
                let mut written = hashing.positions(&bytes, k, m);
                let answer = written.all(|p| {
                    seen.push(p);
                    p < stop
                });
                let upto = by_next.iter().position(|&p| p >= stop);
                assert_eq!(answer, upto.is_none(), "{scheme:?}");
                assert_eq!(seen, by_next[..upto.map_or(by_next.len(), |i| i + 1)]);
                assert_eq!(written.collect::<Vec<u64>>(), by_next[seen.len()..]);
            }
        }
    }

    /// `digest` takes the written-out 8-byte path for every 8-byte item, so the written-out
    /// paths are held to each function's general entry point (and to the slice path of a
    /// longer and a shorter item, which must not take them).
    #[test]
    fn the_integer_fast_path_digests_exactly_like_the_item_path() {
        for function in [
            HashFunction::Murmur3,
            HashFunction::Xxh3,
            HashFunction::Murmur64APair,
            HashFunction::Xxh64,
            HashFunction::Fold2,
        ] {
            for (i, key) in [0u64, 1, 42, u64::MAX, 0x0123_4567_89ab_cdef]
                .into_iter()
                .chain((0..1000).map(|i: u64| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)))
                .enumerate()
            {
                let seed = (i as u64).wrapping_mul(0xdead_beef_1234_5678);
                let general = function.digest_bytes(&key.to_le_bytes(), seed);
                assert_eq!(
                    digest_u64(function, key, seed),
                    general,
                    "{function:?} key {key} seed {seed}"
                );
                assert_eq!(key.with_bytes(|b| function.digest(b, seed)), general);
                let nine = [&key.to_le_bytes()[..], &[7]].concat();
                assert_eq!(
                    function.digest(&nine, seed),
                    function.digest_bytes(&nine, seed)
                );
                let seven = &key.to_le_bytes()[..7];
                assert_eq!(
                    function.digest(seven, seed),
                    function.digest_bytes(seven, seed)
                );
            }
        }
    }
}
