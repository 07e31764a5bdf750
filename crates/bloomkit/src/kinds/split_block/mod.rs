//! The split block Bloom filter of Apache Parquet, bit for bit.
//!
//! Parquet's specification (`BloomFilter.md` of apache/parquet-format, "Technical Approach")
//! defines the layout this filter keeps, so that a bitset read from a Parquet file's Bloom
//! filter answers here exactly as Parquet's readers answer, and a bitset written here is one
//! they can read:
//!
//! * an item is hashed to 64 bits by **XXH64 with seed 0** of its bytes (its plain encoding:
//!   a string's or byte array's bytes, an integer's little-endian bytes);
//! * the filter is z blocks of **256 bits, eight 32-bit words** (1 ≤ z < 2³¹);
//! * the block of hash h is `((h >> 32) · z) >> 32`, the upper 32 bits reduced by
//!   multiply-shift;
//! * in that block, word i gets the bit `(x · salt[i] mod 2³²) >> 27` of `x = h mod 2³²`,
//!   with the specification's eight odd `salt` constants ([`arch::block256::SALT`]).
//!
//! So an item sets exactly one bit in each of its block's eight words (k = 8). The kernels
//! live in [`arch::block256`] (AVX2 where present, a scalar twin held to the same bits).
//!
//! # Sizing
//!
//! The specification gives no closed form, only examples. With n items in z blocks, the
//! number of items sharing a query's block is (nearly) Poisson with mean `λ = n/z`, and a
//! word that holds i items has each of its bits set with probability `1 − (31/32)^i`, so
//!
//! ```text
//!     FPR = Σ_{i ≥ 0} Poisson(i; λ) · (1 − (31/32)^i)^8
//! ```
//!
//! ([`fpp`]; Putze, Sanders & Singler's blocked sum with the split block's in-block rate).
//! [`SplitBlockBloomFilter::with_capacity`] takes the fewest blocks that meet ε by it. The
//! formula reproduces the specification's examples (1024 blocks and 26 214 items: 1.26%)
//! and its table of bits per item (10.5 bits for 1%, 16.9 for 0.1%), see the tests. The
//! specification asks nothing more of z; writers that want a power-of-two size (as
//! parquet-mr and arrow-rs write) can give [`num_bytes`](SplitBlockBloomFilterBuilder::num_bytes).
//!
//! ```
//! use bloomkit::{Persist, SplitBlockBloomFilter};
//!
//! let mut filter = SplitBlockBloomFilter::with_capacity(100_000, 0.01)?;
//! filter.insert("dist");
//! filter.insert_u64(42);
//! assert!(filter.contains("dist") && filter.contains(&42u64));
//! assert!(!filter.contains("fkuv"));
//!
//! // The bitset is Parquet's: what a Parquet column chunk stores after its header.
//! let bitset = filter.to_parquet_bitset();
//! let same = SplitBlockBloomFilter::from_parquet_bitset(&bitset)?;
//! assert!(same.contains("dist"));
//! let copy = SplitBlockBloomFilter::from_bytes(&filter.to_bytes())?;
//! assert_eq!(copy, filter);
//! # Ok::<(), bloomkit::Error>(())
//! ```

mod options;

use crate::any::Summary;
use crate::arch::{self, block256};
use crate::codec::{Parts, Persist};
use crate::error::{DecodeError, Error};
use crate::filter::{Filter, Kind, Mergeable};
use crate::format::view::{view_facts, FilterView, KindView, Shape, ViewFacts};
use crate::hash::{self, HashFunction, Hashing, IndexScheme, Item};
use crate::lookahead;

/// Bits per block.
pub const BLOCK_BITS: u64 = 256;
/// Bytes per block.
pub const BLOCK_BYTES: u64 = BLOCK_BITS / 8;
/// The most blocks the specification allows: z < 2³¹.
pub const MAX_NUM_BLOCKS: u64 = (1 << 31) - 1;
/// One 256-bit block, 32-byte aligned so that it never straddles a cache line.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
#[repr(align(32))]
struct Block([u32; block256::WORDS]);

/// XXH64 of an item's bytes with `seed` (a free function so that a batch insert can hash
/// while the filter is borrowed mutably).
#[inline]
fn item_hash<I: Item + ?Sized>(item: &I, seed: u64) -> u64 {
    item.with_bytes(|bytes| xxhash_rust::xxh64::xxh64(bytes, seed))
}

/// The block of the hash `h` among `blocks`: `((h >> 32) · z) >> 32`.
#[inline(always)]
fn block_of(hash: u64, blocks: usize) -> usize {
    (((hash >> 32) * blocks as u64) >> 32) as usize
}

/// A hash's block, prefetched, and the 32 bits its mask is made of: what the batch calls
/// locate ahead.
#[inline(always)]
fn locate(blocks: &[Block], hash: u64) -> (usize, u32) {
    let i = block_of(hash, blocks.len());
    if let Some(block) = blocks.get(i) {
        arch::prefetch(block);
    }
    (i, hash as u32)
}

/// The batch queries' stages: level, the blocks; the answers are the state (see the
/// blocked filter's `Queries` for why).
struct Queries<'a>(arch::Supported, &'a [Block]);

impl lookahead::Stages<u64> for Queries<'_> {
    type State = Vec<bool>;
    type Located = (usize, u32);
    #[inline(always)]
    fn locate(&self, _: &Vec<bool>, hash: u64) -> (usize, u32) {
        locate(self.1, hash)
    }
    #[inline(always)]
    fn used(&mut self, out: &mut Vec<bool>, (i, x): (usize, u32)) {
        out.push(block256::has_with(self.0, &self.1[i].0, x));
    }
}

/// The batch inserts' stages: level, the count of inserts that changed the filter.
struct Inserts(arch::Supported, u64);

impl lookahead::Stages<u64> for Inserts {
    type State = [Block];
    type Located = (usize, u32);
    #[inline(always)]
    fn locate(&self, blocks: &[Block], hash: u64) -> (usize, u32) {
        locate(blocks, hash)
    }
    #[inline(always)]
    fn used(&mut self, blocks: &mut [Block], (i, x): (usize, u32)) {
        self.1 += block256::set_with(self.0, &mut blocks[i].0, x) as u64;
    }
}

/// Apache Parquet's split block Bloom filter (see the module docs).
#[derive(Clone, PartialEq)]
pub struct SplitBlockBloomFilter {
    blocks: Vec<Block>,
    /// The kernels' level, detected once when the filter is made: a field of the filter, not
    /// a global, so that a loop of single queries reads it once (5–10% faster single queries,
    /// `examples/hash_cost.rs`).
    level: arch::Supported,
    seed: u64,
    capacity: u64,
    target_fpp: f64,
    inserted: u64,
}

/// The false-positive probability of a split block filter of `num_blocks` blocks holding
/// `items` items: `Σ_i Poisson(i; n/z) · (1 − (31/32)^i)^8` (module docs). 1 for no blocks.
///
/// ```
/// use bloomkit::split_block::fpp;
/// let p = fpp(1024, 26_214); // the specification's example: "around 1.26%"
/// assert!((p - 0.0126).abs() < 0.0005, "{p}");
/// ```
pub fn fpp(num_blocks: u64, items: u64) -> f64 {
    if num_blocks == 0 {
        return 1.0;
    }
    if items == 0 {
        return 0.0;
    }
    let lambda = items as f64 / num_blocks as f64;
    if lambda > 4000.0 {
        // Past 4000 items per block every word is full but for (31/32)^~3700 < 1e-50.
        return 1.0;
    }
    let miss = (31.0f64 / 32.0).ln();
    // Sum the Poisson terms outwards from the mode until they stop mattering.
    let term = |i: u64| {
        let ln_p = -lambda + i as f64 * lambda.ln() - ln_factorial(i);
        ln_p.exp() * (-(miss * i as f64).exp_m1()).powi(8)
    };
    let mode = lambda.floor() as u64;
    let mut sum = 0.0;
    let mut i = mode;
    loop {
        let t = term(i);
        sum += t;
        if (t < sum * 1e-17 && i > mode + 10) || i > mode + 100_000 {
            break;
        }
        i += 1;
    }
    for i in (0..mode).rev() {
        let t = term(i);
        sum += t;
        if t < sum * 1e-17 && i + 10 < mode {
            break;
        }
    }
    sum.min(1.0)
}

/// ln(i!) by summation for small i, Stirling's series past 64.
fn ln_factorial(i: u64) -> f64 {
    if i < 64 {
        (2..=i).map(|j| (j as f64).ln()).sum()
    } else {
        let x = i as f64;
        x * x.ln() - x + 0.5 * (2.0 * std::f64::consts::PI * x).ln() + 1.0 / (12.0 * x)
            - 1.0 / (360.0 * x * x * x)
    }
}

/// The fewest blocks (≤ [`MAX_NUM_BLOCKS`]) for which [`fpp`] at `capacity` items is at
/// most `target`.
pub fn num_blocks_for(capacity: u64, target: f64) -> Result<u64, Error> {
    let target = crate::params::validate_fpp(target)?;
    if capacity == 0 {
        return Err(Error::ZeroCapacity);
    }
    if fpp(MAX_NUM_BLOCKS, capacity) > target {
        // So many blocks that most hold no item and the rest one: a query then passes only
        // in a block with an item, whose 8 words each have the one bit it asks for with
        // probability 1/32, so `fpp ≈ (n/z)·32⁻⁸` and z ≈ n / (ε·32⁸) blocks (the size the
        // error names). Where that estimate does not hold (it is not past the limit: the
        // blocks are not that sparse) or passes what 64 bits count, the error names the
        // capacity asked instead.
        let bits = capacity as f64 / (target * 32f64.powi(8)) * BLOCK_BITS as f64;
        let max = (MAX_NUM_BLOCKS * BLOCK_BITS) as f64;
        if bits <= max || bits >= u64::MAX as f64 {
            return Err(Error::CapacityTooLarge {
                capacity,
                fpp: target,
                max: MAX_NUM_BLOCKS * BLOCK_BITS,
            });
        }
        return Err(Error::TooLarge {
            bits: bits as u64,
            max: MAX_NUM_BLOCKS * BLOCK_BITS,
        });
    }
    Ok(crate::sizing::first_meeting(1, MAX_NUM_BLOCKS, |blocks| {
        fpp(blocks, capacity) <= target
    }))
}

impl SplitBlockBloomFilter {
    /// A filter for `capacity` items at false-positive probability `fpp`: the fewest blocks
    /// that meet it by [`fpp`](fpp()); seed 0 (Parquet's).
    ///
    /// ```
    /// use bloomkit::SplitBlockBloomFilter;
    /// let f = SplitBlockBloomFilter::with_capacity(1_000_000, 0.01)?;
    /// let bits_per_item = f.num_bits() as f64 / 1e6;
    /// assert!(bits_per_item > 10.0 && bits_per_item < 10.7); // Parquet's table: 10.5
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn with_capacity(capacity: impl crate::params::ItemCount, fpp: f64) -> Result<Self, Error> {
        Self::builder().capacity(capacity).fpp(fpp).build()
    }

    /// A builder for an explicit size or a seed.
    pub fn builder() -> SplitBlockBloomFilterBuilder {
        SplitBlockBloomFilterBuilder::default()
    }

    /// A filter over a bitset as Parquet stores it (the bytes after the
    /// `BloomFilterHeader`: `numBytes` bytes, eight little-endian `u32` words per block).
    /// The capacity is the number of items the content holds by estimate (at least 1), and
    /// ε the false-positive probability at that count.
    pub fn from_parquet_bitset(bytes: &[u8]) -> Result<Self, Error> {
        let len = bytes.len() as u64;
        if len == 0 || !len.is_multiple_of(BLOCK_BYTES) || len / BLOCK_BYTES > MAX_NUM_BLOCKS {
            return Err(Error::Decode(DecodeError::InvalidField {
                field: "bitset",
                reason: format!(
                    "{len} bytes is not a whole number of 32-byte blocks between 1 and 2^31 - 1"
                ),
            }));
        }
        let mut filter = Self::empty(len / BLOCK_BYTES, 0, 1, 0.5)?;
        filter.fill_from(bytes);
        let estimate = filter.estimated_len();
        filter.capacity = if estimate.is_finite() {
            (estimate.round() as u64).max(1)
        } else {
            u64::MAX
        };
        filter.inserted = filter.capacity;
        filter.target_fpp =
            fpp(filter.num_blocks(), filter.capacity).clamp(f64::MIN_POSITIVE, 1.0 - f64::EPSILON);
        Ok(filter)
    }

    /// The bitset as Parquet stores it: each block's eight words, little-endian.
    pub fn to_parquet_bitset(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.memory_bytes());
        for block in &self.blocks {
            for w in block.0 {
                out.extend_from_slice(&w.to_le_bytes());
            }
        }
        out
    }

    fn empty(num_blocks: u64, seed: u64, capacity: u64, target_fpp: f64) -> Result<Self, Error> {
        let bytes = num_blocks.saturating_mul(BLOCK_BYTES);
        let len = usize::try_from(num_blocks).map_err(|_| Error::OutOfMemory { bytes })?;
        Ok(Self {
            blocks: arch::zeroed_vec(len).ok_or(Error::OutOfMemory { bytes })?,
            level: arch::detected(),
            seed,
            capacity,
            target_fpp,
            inserted: 0,
        })
    }

    /// Copies a bitset of exactly `32 · z` bytes into the blocks.
    fn fill_from(&mut self, bytes: &[u8]) {
        for (block, chunk) in self.blocks.iter_mut().zip(bytes.chunks_exact(32)) {
            for (w, word) in block.0.iter_mut().zip(chunk.chunks_exact(4)) {
                *w = u32::from_le_bytes(word.try_into().expect("chunks of 4"));
            }
        }
    }

    /// The 64-bit hash of an item: XXH64 of its bytes with the filter's seed.
    #[inline]
    pub fn hash<I: Item + ?Sized>(&self, item: &I) -> u64 {
        item_hash(item, self.seed)
    }

    /// Adds an item. Returns `true` if the filter changed (the item was certainly new).
    #[inline]
    pub fn insert<I: Item + ?Sized>(&mut self, item: &I) -> bool {
        self.insert_hash(self.hash(item))
    }

    /// `false` if the item is certainly absent, `true` if it may be present.
    #[inline]
    pub fn contains<I: Item + ?Sized>(&self, item: &I) -> bool {
        self.contains_hash(self.hash(item))
    }

    /// [`insert`](Self::insert) of a `u64` key (the same hash as `insert(&key)`, with
    /// XXH64's 8-byte path written out).
    #[inline]
    pub fn insert_u64(&mut self, key: u64) -> bool {
        self.insert_hash(hash::xxh64_u64(key, self.seed))
    }

    /// [`contains`](Self::contains) of a `u64` key.
    #[inline]
    pub fn contains_u64(&self, key: u64) -> bool {
        self.contains_hash(hash::xxh64_u64(key, self.seed))
    }

    /// Parquet's `filter_insert` of a 64-bit hash; whether any bit changed.
    #[inline]
    pub fn insert_hash(&mut self, hash: u64) -> bool {
        let i = self.block_index(hash);
        let changed = block256::set_with(self.level, &mut self.blocks[i].0, hash as u32);
        self.inserted += changed as u64;
        changed
    }

    /// Parquet's `filter_check` of a 64-bit hash.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        block256::has_with(
            self.level,
            &self.blocks[self.block_index(hash)].0,
            hash as u32,
        )
    }

    /// `((h >> 32) · z) >> 32`.
    #[inline(always)]
    fn block_index(&self, hash: u64) -> usize {
        block_of(hash, self.blocks.len())
    }

    /// The answers of [`contains`](Self::contains) for every item, each item's block
    /// located and prefetched a window of items before it is tested
    /// ([`lookahead`]), so that that many cache misses are in flight.
    pub fn contains_batch<I: Item>(&self, items: &[I]) -> Vec<bool> {
        lookahead::answers(items.len(), |out| {
            self.contains_hashes(items.iter().map(|item| self.hash(item)), out)
        })
    }

    /// [`contains_batch`](Self::contains_batch) of `u64` keys into `out` (cleared first).
    pub fn contains_batch_u64(&self, keys: &[u64], out: &mut Vec<bool>) {
        lookahead::ready(out, keys.len());
        let seed = self.seed;
        self.contains_hashes(keys.iter().map(|&k| hash::xxh64_u64(k, seed)), out);
    }

    /// Inserts every item, each block prefetched ahead as in
    /// [`contains_batch`](Self::contains_batch); the filter ends as after
    /// [`insert`](Self::insert) of each in order, and the count of changes is the same.
    pub fn insert_batch<I: Item>(&mut self, items: &[I]) -> u64 {
        let seed = self.seed;
        self.insert_hashes(items.iter().map(|item| item_hash(item, seed)))
    }

    /// [`insert_batch`](Self::insert_batch) of `u64` keys.
    pub fn insert_batch_u64(&mut self, keys: &[u64]) -> u64 {
        let seed = self.seed;
        self.insert_hashes(keys.iter().map(|&k| hash::xxh64_u64(k, seed)))
    }

    /// The batch loops, each run whole at the kernels' level ([`arch::dispatch`]): the
    /// kernels inline into the loop, and its constants stay in registers.
    fn contains_hashes(&self, hashes: impl Iterator<Item = u64>, out: &mut Vec<bool>) {
        struct Work<'a, H>(&'a SplitBlockBloomFilter, H, &'a mut Vec<bool>);
        impl<H: Iterator<Item = u64>> arch::AtLevel for Work<'_, H> {
            type Output = ();
            #[inline(always)]
            fn run(self, level: arch::Supported) {
                let Work(filter, hashes, out) = self;
                let mut stages = Queries(level, &filter.blocks);
                lookahead::pipeline(&mut stages, out, hashes);
            }
        }
        arch::dispatch(Work(self, hashes, out))
    }

    fn insert_hashes(&mut self, hashes: impl Iterator<Item = u64>) -> u64 {
        struct Work<'a, H>(&'a mut SplitBlockBloomFilter, H);
        impl<H: Iterator<Item = u64>> arch::AtLevel for Work<'_, H> {
            type Output = u64;
            #[inline(always)]
            fn run(self, level: arch::Supported) -> u64 {
                let Work(filter, hashes) = self;
                let mut stages = Inserts(level, 0);
                lookahead::pipeline(&mut stages, &mut filter.blocks[..], hashes);
                stages.1
            }
        }
        let changed = arch::dispatch(Work(self, hashes));
        self.inserted += changed;
        changed
    }

    /// z, the number of 256-bit blocks.
    pub fn num_blocks(&self) -> u64 {
        self.blocks.len() as u64
    }

    /// m = 256 · z.
    pub fn num_bits(&self) -> u64 {
        self.num_blocks() * BLOCK_BITS
    }

    /// Parquet's `numBytes`: 32 · z.
    pub fn num_bytes(&self) -> u64 {
        self.num_blocks() * BLOCK_BYTES
    }

    crate::sizing::getters! {
        /// The hash seed (0 for Parquet compatibility).
        seed: u64;

        /// n, the number of items the filter was sized for.
        capacity: u64;

        /// ε, the false-positive probability wanted at capacity.
        target_fpp: f64;
    }

    /// [`fpp`](fpp()) at capacity.
    pub fn fpp_at_capacity(&self) -> f64 {
        fpp(self.num_blocks(), self.capacity)
    }

    /// The number of bits that are 1.
    pub fn count_ones(&self) -> u64 {
        self.blocks.iter().map(|b| block_ones(b) as u64).sum()
    }

    /// The facts of the content, block by block.
    fn census(&self) -> Census {
        let mut census = Census::new(self.num_blocks());
        for block in self.blocks.iter() {
            census.add(&block.0);
        }
        census
    }

    fn layout(&self) -> String {
        format!("z = {}, {}", self.num_blocks(), Filter::hashing(self))
    }

    fn check_compatible(&self, other: &Self) -> Result<(), Error> {
        crate::filter::require_same_layout(Kind::SplitBlock, self.layout(), other.layout())
    }

    fn recount(&mut self) {
        self.inserted = crate::params::count_from_estimate(self.estimated_len());
    }

    /// Inserts `items` on rayon's threads, partitioned by block: the same bits, and the same
    /// count of changing inserts, as [`insert`](Self::insert) of each in order (see
    /// [`crate::blocked`]'s `insert_parallel`). Requires the `rayon` feature.
    #[cfg(feature = "rayon")]
    #[cfg_attr(docsrs, doc(cfg(feature = "rayon")))]
    pub fn insert_parallel<I: Item + Sync>(&mut self, items: &[I]) -> u64 {
        let (seed, z, level) = (self.seed, self.blocks.len(), self.level);
        let changed = crate::blocked::insert_partitioned(
            &mut self.blocks,
            items,
            |item| {
                let h = item_hash(item, seed);
                (block_of(h, z), h as u32)
            },
            |block: &mut Block, x| block256::set_with(level, &mut block.0, x),
        );
        self.inserted += changed;
        changed
    }
}

/// The facts of a split block filter's content, gathered block by block in block order —
/// by the loaded filter over its blocks and by a view over the file's pieces, so that both
/// report the same numbers.
struct Census {
    num_blocks: u64,
    /// Per block, the items that leave x of its 256 bits set on average: each item sets one
    /// bit in each 32-bit word, so `x = 256 (1 − (31/32)^i)` and `i = ln(1 − x/256) /
    /// ln(31/32)`; summed over the blocks. Infinite if a block is full.
    estimated_len: f64,
    /// `Σ_blocks Π_w (ones_w / 32)`.
    fpp_sum: f64,
}

impl Census {
    fn new(num_blocks: u64) -> Self {
        Census {
            num_blocks,
            estimated_len: 0.0,
            fpp_sum: 0.0,
        }
    }

    /// Adds a block of these eight words.
    fn add(&mut self, words: &[u32; block256::WORDS]) {
        let ones: u32 = words.iter().map(|w| w.count_ones()).sum();
        self.estimated_len += (-(ones as f64) / 256.0).ln_1p() / (31.0f64 / 32.0).ln();
        self.fpp_sum += words
            .iter()
            .map(|w| w.count_ones() as f64 / 32.0)
            .product::<f64>();
    }

    /// `(1/z) Σ_blocks Π_w (ones_w / 32)` ([`Filter::expected_fpp`]).
    fn expected_fpp(&self) -> f64 {
        self.fpp_sum / self.num_blocks as f64
    }
}

/// [`Filter::properties`] of a split block filter with these stored parameters (none
/// depends on the content).
fn properties(stored: &Stored) -> Vec<(&'static str, String)> {
    vec![
        ("blocks (z)", stored.num_blocks.to_string()),
        (
            "block size",
            "256 bits: eight 32-bit words, one bit per word per item".into(),
        ),
        (
            "bytes (Parquet numBytes)",
            (stored.num_blocks * BLOCK_BYTES).to_string(),
        ),
        ("bits (m)", (stored.num_blocks * BLOCK_BITS).to_string()),
        ("target fpp", format!("{}", stored.target_fpp)),
        (
            "fpp at capacity (split-block theory)",
            format!("{:.6e}", fpp(stored.num_blocks, stored.capacity)),
        ),
        (
            "layout",
            "Apache Parquet split block (XXH64, salted multiply-shift)".into(),
        ),
    ]
}

fn block_ones(block: &Block) -> u32 {
    block.0.iter().map(|w| w.count_ones()).sum()
}

impl Filter for SplitBlockBloomFilter {
    crate::filter::filter_basics!(SplitBlock: insert, contains, capacity, target_fpp);

    /// XXH64 (the low half of [`HashFunction::Xxh64`]) with the filter's seed; the index
    /// scheme id is the one-digest id, as for the blocked filter.
    fn hashing(&self) -> Hashing {
        Hashing {
            function: HashFunction::Xxh64,
            scheme: IndexScheme::EnhancedDoubleHashing,
            seed: self.seed,
        }
    }

    fn clear(&mut self) {
        self.blocks.fill(Block::default());
        self.inserted = 0;
    }

    fn len(&self) -> u64 {
        self.inserted
    }

    /// Per block, the items that leave x of its 256 bits set on average: each item sets one
    /// bit in each 32-bit word, so `x = 256 (1 − (31/32)^i)` and `i = ln(1 − x/256) /
    /// ln(31/32)`; summed over the blocks. Infinite if a block is full.
    fn estimated_len(&self) -> f64 {
        self.census().estimated_len
    }

    fn memory_bytes(&self) -> usize {
        self.blocks.len() * std::mem::size_of::<Block>()
    }

    fn properties(&self) -> Vec<(&'static str, String)> {
        properties(&Stored::of(self))
    }

    /// Exact for the current content: a random absent hash falls into a uniform block and
    /// needs its one bit in each word, `FPP = (1/z) Σ_blocks Π_w (ones_w / 32)`.
    fn expected_fpp(&self) -> f64 {
        self.census().expected_fpp()
    }

    fn fpp_at(&self, n: u64) -> f64 {
        fpp(self.num_blocks(), n)
    }
}

crate::registry::registered!(
    SplitBlockBloomFilter,
    {
        name: "sbbf",
        summary:
            "Apache Parquet's split block Bloom filter, bit for bit (XXH64, 256-bit blocks); union.",
        grow: false,
        forgets: false,
        index_scheme: false,
    },
    merge
);

impl Mergeable for SplitBlockBloomFilter {
    /// Bitwise OR: exactly the filter that inserting both sets would have built.
    fn union(&mut self, other: &Self) -> Result<(), Error> {
        self.check_compatible(other)?;
        for (a, b) in self.blocks.iter_mut().zip(&other.blocks) {
            for (x, y) in a.0.iter_mut().zip(b.0) {
                *x |= y;
            }
        }
        self.recount();
        Ok(())
    }

    /// Bitwise AND.
    fn intersect(&mut self, other: &Self) -> Result<(), Error> {
        self.check_compatible(other)?;
        for (a, b) in self.blocks.iter_mut().zip(&other.blocks) {
            for (x, y) in a.0.iter_mut().zip(b.0) {
                *x &= y;
            }
        }
        self.recount();
        Ok(())
    }
}

crate::filter::collection_impls!(
    /// Collects items into a filter sized for their number at ε = 1%.
    ///
    /// ```
    /// use bloomkit::SplitBlockBloomFilter;
    /// let filter: SplitBlockBloomFilter = (0..100u64).collect();
    /// assert!(filter.contains(&7u64));
    /// ```
    SplitBlockBloomFilter
);

/// Builds a [`SplitBlockBloomFilter`] from a capacity and ε, or an explicit size.
///
/// ```
/// use bloomkit::SplitBlockBloomFilter;
/// // A power-of-two size, as parquet-mr and arrow-rs write.
/// let f = SplitBlockBloomFilter::builder().num_bytes(1 << 20).build()?;
/// assert_eq!(f.num_bytes(), 1 << 20);
/// assert!(SplitBlockBloomFilter::builder().num_bytes(33).build().is_err());
/// # Ok::<(), bloomkit::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
#[must_use = "a builder does nothing until .build() is called"]
pub struct SplitBlockBloomFilterBuilder {
    capacity: Option<u64>,
    fpp: Option<f64>,
    num_blocks: Option<u64>,
    num_bytes: Option<u64>,
    seed: u64,
    random_seed: bool,
}

impl SplitBlockBloomFilterBuilder {
    crate::sizing::capacity_and_fpp_setters!();

    crate::sizing::setters! {
        /// z, the number of blocks, in 1 ..= 2³¹ − 1.
        num_blocks: u64;

        /// Parquet's `numBytes`: a positive multiple of 32.
        num_bytes: u64;
    }

    crate::sizing::num_cells_setter!(num_bits, "bits, rounded up to whole 256-bit blocks");

    /// m, bits, rounded up to whole 256-bit blocks.
    pub fn num_bits(mut self, num_bits: u64) -> Self {
        self.num_blocks = Some(num_bits.div_ceil(BLOCK_BITS));
        self
    }

    /// The XXH64 seed (default 0, which Parquet requires).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self.random_seed = false;
        self
    }

    /// A random seed from the operating system (not readable by Parquet).
    pub fn random_seed(mut self) -> Self {
        self.random_seed = true;
        self
    }

    /// Validates the parameters and allocates the filter.
    pub fn build(self) -> Result<SplitBlockBloomFilter, Error> {
        let fpp = crate::sizing::fpp(self.fpp)?;
        crate::sizing::check_capacity(self.capacity)?;
        let explicit = match (self.num_blocks, self.num_bytes) {
            (_, Some(bytes)) if !bytes.is_multiple_of(BLOCK_BYTES) => {
                return Err(Error::InvalidParameter {
                    parameter: "number of bytes",
                    reason: format!("{bytes} is not a multiple of the 32-byte block"),
                })
            }
            (_, Some(bytes)) => Some(bytes / BLOCK_BYTES),
            (blocks, None) => blocks,
        };
        let num_blocks = match (explicit, self.capacity) {
            (Some(0), _) => return Err(Error::ZeroBits),
            (Some(z), _) if z > MAX_NUM_BLOCKS => {
                return Err(Error::TooLarge {
                    bits: z.saturating_mul(BLOCK_BITS),
                    max: MAX_NUM_BLOCKS * BLOCK_BITS,
                })
            }
            (Some(z), _) => z,
            (None, Some(n)) => num_blocks_for(n, fpp)?,
            (None, None) => return Err(Error::ZeroCapacity),
        };
        let (capacity, target_fpp) = match self.capacity {
            Some(n) if explicit.is_none() => (n, fpp),
            Some(n) => (n, fpp_clamped(num_blocks, n)),
            None => (largest_capacity(num_blocks, fpp), fpp),
        };
        let seed = if self.random_seed {
            hash::random_seed()?
        } else {
            self.seed
        };
        SplitBlockBloomFilter::empty(num_blocks, seed, capacity, target_fpp)
    }
}

fn fpp_clamped(num_blocks: u64, items: u64) -> f64 {
    fpp(num_blocks, items).clamp(f64::MIN_POSITIVE, 1.0 - f64::EPSILON)
}

/// The largest n (at least 1) that `num_blocks` blocks hold at ε.
fn largest_capacity(num_blocks: u64, target: f64) -> u64 {
    crate::sizing::last_meeting(1, num_blocks.saturating_mul(256), |items| {
        fpp(num_blocks, items) <= target
    })
}

crate::codec::stored! {
    /// The split block filter's parameters on disk (32 bytes). Payload: Parquet's bitset (each
    /// block's eight words, little-endian u32).
    struct Stored of f: SplitBlockBloomFilter {
        num_blocks: u64 = f.num_blocks(),
        capacity: u64 = f.capacity => check_capacity,
        target_fpp: f64 = f.target_fpp => check_target_fpp,
        inserted: u64 = f.inserted,
    }
}

impl Persist for SplitBlockBloomFilter {
    fn encode_params(&self, out: &mut Vec<u8>) {
        Stored::of(self).write(out);
    }

    fn encode_payload(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_parquet_bitset());
    }

    fn decode_parts(parts: &Parts<'_>) -> Result<Self, DecodeError> {
        let ViewShape { stored, hashing } = ViewShape::read(parts)?;
        let mut filter = SplitBlockBloomFilter::empty(
            stored.num_blocks,
            hashing.seed,
            stored.capacity,
            stored.target_fpp,
        )
        .map_err(|e| DecodeError::InvalidField {
            field: "num_blocks",
            reason: e.to_string(),
        })?;
        filter.fill_from(parts.payload);
        filter.inserted = stored.inserted;
        Ok(filter)
    }
}

/// A split block filter as loading and a read-only view ([`format::view`](crate::format::view))
/// read it: the stored parameters, checked, and the query over a block the view fetches from
/// the file.
type ViewShape = Shape<Stored>;

impl KindView for ViewShape {
    fn read(parts: &Parts<'_>) -> Result<Self, DecodeError> {
        parts.expect_kind(Kind::SplitBlock)?;
        let invalid = |field, reason: String| DecodeError::InvalidField { field, reason };
        if parts.hashing.function != HashFunction::Xxh64
            || parts.hashing.scheme != IndexScheme::EnhancedDoubleHashing
        {
            return Err(invalid(
                "hashing",
                format!(
                    "a split block filter hashes with xxh64 and one digest, not {}",
                    parts.hashing
                ),
            ));
        }
        let stored = Stored::read(parts.params)?;
        crate::codec::check_blocks(
            stored.num_blocks,
            MAX_NUM_BLOCKS,
            BLOCK_BYTES,
            parts.payload.len(),
        )?;
        Ok(Shape::of(stored, parts))
    }

    fn facts(&self) -> ViewFacts {
        let num_bits = self.stored.num_blocks * BLOCK_BITS;
        view_facts!(self.stored, num_bits, block256::WORDS as u32)
    }

    /// The words of each block, read from the payload ([`Census`]).
    fn summary(&self, view: &FilterView) -> Result<Summary, Error> {
        let mut census = Census::new(self.stored.num_blocks);
        view.for_each_piece(|bytes| {
            for block in bytes.chunks_exact(BLOCK_BYTES as usize) {
                census.add(&std::array::from_fn(|w| {
                    u32::from_le_bytes(block[4 * w..4 * w + 4].try_into().expect("4 bytes"))
                }));
            }
            Ok(())
        })?;
        Ok(view.summary_of(
            None,
            properties(&self.stored),
            census.estimated_len,
            census.expected_fpp(),
        ))
    }

    /// Parquet's `filter_check` with the loaded filter's kernel, over the 32 little-endian
    /// bytes of the block the view fetches.
    #[inline]
    fn contains(&self, bytes: &[u8], view: &FilterView) -> Result<bool, Error> {
        let hash = xxhash_rust::xxh64::xxh64(bytes, self.hashing.seed);
        let len = BLOCK_BYTES as usize;
        let block = block_of(hash, self.stored.num_blocks as usize);
        let bytes = view.payload(block * len, len)?;
        let words: [u32; block256::WORDS] = std::array::from_fn(|w| {
            u32::from_le_bytes(bytes[4 * w..4 * w + 4].try_into().expect("4 bytes"))
        });
        Ok(block256::has_with(arch::detected(), &words, hash as u32))
    }
}
