//! The blocked Bloom filter: every bit of an item in one 64-byte cache line (Putze, Sanders
//! & Singler, "Cache-, Hash- and Space-Efficient Bloom Filters", WEA 2007 / ACM JEA 2009).
//!
//! # Structure
//!
//! The m bits are cut into b blocks of B = 512 bits (8 words of 64 bits), each block
//! 64-byte aligned, so a block is exactly one cache line. An item is hashed once to a
//! 128-bit digest `(lo, hi)`:
//!
//! * `hi` chooses the block: `block = ⌊hi · b / 2⁶⁴⌋` ([`reduce`], multiply-shift);
//! * the item's k bits are dealt round-robin to the 8 words of the block — bit t goes to
//!   word `t mod 8` — and each bit's place in its word is a 6-bit field of the digest:
//!   round 0 (bits 0…7) takes the fields `(lo >> 6w) & 63`, w = 0…7; a filter with k > 8
//!   takes the eight fields of round r ≥ 1 from `mix(lo ⊕ rotl(hi, 29) ⊕ r·φ)` (`mix` is
//!   SplitMix64's finaliser, φ the golden-ratio constant).
//!
//! The k bits of one item form a 512-bit mask (`[u64; 8]`). A query is
//! `mask & !block == 0` over the 8 words and an insert is `block |= mask`: straight-line
//! word operations over one cache line, no data-dependent branch, exactly one cache miss.
//! The classic filter instead touches k random words of the whole array — k cache misses
//! once the filter is larger than the cache.
//!
//! **Why this scheme.** The word of each bit is fixed by its index, so building the mask is
//! eight independent lanes of `1 << field` with constant word indexes: the mask lives in
//! registers, and the compiler vectorises the lanes where the target has per-lane shifts
//! (AVX2). A first version let each of the k bits fall anywhere in the 512 (9-bit fields):
//! 2% less memory at ε = 1%, but the mask had to be built through a stack array indexed by
//! data, which made a query 4–5 times slower (measured: 15 ns against 3 ns for the hashing
//! and test alone, in cache). Fields of the digest rather than a multiplier per lane (as in
//! Parquet's split block filter, `(h · c_w) >> 58`) because fields are exactly independent
//! and uniform, so the filter meets the formula below *exactly* (tested at the 99.9% level)
//! for every k, and a shift costs less than a multiply.
//!
//! # Sizing: the blocking penalty, computed
//!
//! Blocks are not equally loaded: the number of items that share a query's block is
//! (nearly) Poisson with mean `λ = n·B/m`, and the FPR of one block is convex in its load,
//! so the overfull blocks cost more than the underfull ones save:
//!
//! ```text
//!     FPR = Σ_{i ≥ 0}  Poisson(i; λ) · Π_{w=0..7} f_64(j_w, i)      (Putze et al., §3)
//! ```
//!
//! with `f_64(j, i)` the exact rate of one 64-bit word that holds j bits of each of i items
//! (`j_w = ⌊k/8⌋` or `⌈k/8⌉`). [`params::fpp_blocked`] evaluates it;
//! [`params::blocked_dimensions`] searches, for each k, the smallest number of blocks that
//! meets the requested ε, and keeps the k that needs the fewest. The result: k = 8 and
//! 10.1 bits per item at ε = 1% (classic filter: 9.6, +5%), k = 8 and 15.7 bits at
//! ε = 0.1% (classic: 14.4, +9%).
//!
//! # Fast paths
//!
//! * [`BlockedBloomFilter::insert_u64`] / [`contains_u64`](BlockedBloomFilter::contains_u64):
//!   integer keys hashed by [`hash::digest_u64`], the same digest as the [`Item`] path
//!   computes for a `u64` (its little-endian bytes), with the 8-byte case of the hash written
//!   out. `insert_u64(x)` and `insert(&x)` are interchangeable. For the default hash
//!   ([`HashFunction::Fold2`]) and XXH3-128 a single call is **one kernel call**: the hash,
//!   the block and the test compiled together into one `#[target_feature]` function, chosen
//!   once when the filter is made (for its CPU level, hash and whether k = 8) and called
//!   through a pointer, as sbbf-rs does ([`arch::block512::KeyedKernels`]); no test of level,
//!   hash or k per query.
//!
//! # Hash
//!
//! New filters hash with [`HashFunction::Fold2`] (two multiply-folds; [`hash::fold2_128`]),
//! the cheapest digest that keeps the filter inside its formula's interval on structured
//! keys ([`theory`] gives the argument, `tests/suite/blocked.rs` the measurements). Files
//! store their hash's tag: filters saved with XXH3-128 (the default before) or
//! MurmurHash3 load and answer as they did; `.hash_function(…)` builds either.
//! * [`contains_batch`](BlockedBloomFilter::contains_batch) /
//!   [`insert_batch`](BlockedBloomFilter::insert_batch) (and `_u64` variants): each item is
//!   hashed and its block prefetched a window of items before it is tested or set
//!   ([`lookahead`]), so that many cache misses are always in flight; the
//!   items are used in order. The answers are those of the single calls, item by item.
//!
//! ```
//! use bloomkit::{BlockedBloomFilter, Persist};
//!
//! let mut filter = BlockedBloomFilter::with_capacity(100_000, 0.01)?;
//! filter.insert("dist");
//! filter.insert_u64(42);
//! assert!(filter.contains("dist"));
//! assert!(filter.contains(&42u64)); // the integer fast path hashes like the Item path
//! assert!(!filter.contains("fkuv")); // definitely not (with probability 99%)
//! assert_eq!(filter.contains_batch(&[41u64, 42, 43]), vec![false, true, false]);
//!
//! let copy = BlockedBloomFilter::from_bytes(&filter.to_bytes())?;
//! assert_eq!(copy, filter);
//! # Ok::<(), bloomkit::Error>(())
//! ```

mod options;
pub mod theory;

use crate::any::Summary;
use crate::arch::block512::{KeyedKernels, LocateKey};
use crate::arch::{self, Supported};
use crate::codec::{Parts, Persist};
use crate::error::{DecodeError, Error};
use crate::filter::{Filter, Kind, Mergeable};
use crate::format::view::{view_facts, FilterView, KindView, Shape, ViewFacts};
use crate::hash::{self, reduce, Hashing, IndexScheme, Item};
use crate::hash::{HashFunction, HashingChoice};
use crate::lookahead;
use crate::params::{self, BLOCK_BITS, MAX_NUM_BLOCKS, MAX_NUM_HASHES};

/// 64-bit words per block.
const WORDS: usize = (BLOCK_BITS / 64) as usize;

/// One 512-bit block, aligned to a 64-byte cache line.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
#[repr(align(64))]
struct Block([u64; WORDS]);

impl AsRef<[u64; WORDS]> for Block {
    fn as_ref(&self) -> &[u64; WORDS] {
        &self.0
    }
}

impl AsMut<[u64; WORDS]> for Block {
    fn as_mut(&mut self) -> &mut [u64; WORDS] {
        &mut self.0
    }
}

/// The blocked Bloom filter.
///
/// ```
/// use bloomkit::BlockedBloomFilter;
///
/// let mut filter = BlockedBloomFilter::with_capacity(58_110, 0.001)?;
/// assert_eq!(filter.num_hashes(), 8);
/// filter.insert("dist");
/// assert!(filter.contains("dist"));
/// # Ok::<(), bloomkit::Error>(())
/// ```
#[derive(Clone, PartialEq)]
pub struct BlockedBloomFilter {
    blocks: Vec<Block>,
    /// The kernels' level, detected once when the filter is made: a field of the filter, not
    /// a global, so that a loop of single queries reads it once (the split-block filter's
    /// single queries measured 5–10% faster so, `examples/hash_cost.rs`).
    level: Supported,
    /// The single `u64` query and insert as one kernel call each, chosen when the filter is
    /// made (for the hash functions that have them, see [`Keyed`]).
    keyed: Keyed,
    num_hashes: u32,
    hashing: Hashing,
    capacity: u64,
    target_fpp: f64,
    inserted: u64,
}

/// [`arch::block512::KeyedKernels`] of a filter whose hash has them ([`HashFunction::Fold2`],
/// the default, and [`HashFunction::Xxh3`], the default before it).
/// A function of the filter's level, hash and k, which the filter's equality compares
/// already, so it compares equal always.
#[derive(Clone, Copy, Debug)]
struct Keyed(Option<KeyedKernels<Block>>);

impl PartialEq for Keyed {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Keyed {
    fn new(level: Supported, hashing: Hashing, k: u32) -> Self {
        Keyed(match hashing.function {
            HashFunction::Fold2 => Some(KeyedKernels::new::<Fold2Locate>(level, hashing.seed, k)),
            HashFunction::Xxh3 => Some(KeyedKernels::new::<Xxh3Locate>(level, hashing.seed, k)),
            _ => None,
        })
    }
}

/// A `u64` key's block and digest halves under [`HashFunction::Xxh3`] (see [`Fold2Locate`]).
pub(crate) struct Xxh3Locate;

impl LocateKey for Xxh3Locate {
    fn prepare(seed: u64) -> [u64; 2] {
        [seed, 0]
    }
    #[inline(always)]
    fn locate(key: u64, prepared: [u64; 2], blocks: usize) -> (usize, u64, u64) {
        let (lo, hi) = halves(hash::digest_u64(HashFunction::Xxh3, key, prepared[0]));
        (block_of(hi, blocks), lo, hi)
    }
}

/// A `u64` key's block and digest halves under [`HashFunction::Fold2`]: the block by
/// multiply-shift of the digest's high half, as every path chooses it.
pub(crate) struct Fold2Locate;

impl LocateKey for Fold2Locate {
    fn prepare(seed: u64) -> [u64; 2] {
        hash::fold2_prepare_u64(seed)
    }
    #[inline(always)]
    fn locate(key: u64, prepared: [u64; 2], blocks: usize) -> (usize, u64, u64) {
        let (lo, hi) = halves(hash::fold2_128_u64_prepared(key, prepared));
        (block_of(hi, blocks), lo, hi)
    }
}

/// Whether every bit of the item's mask is set in `block` (SIMD where the CPU has it).
#[inline(always)]
fn block_has(level: Supported, block: &Block, lo: u64, hi: u64, num_hashes: u32) -> bool {
    arch::block512::has_with(level, &block.0, lo, hi, num_hashes)
}

/// Sets the bits of the item's mask; whether any was 0 before.
#[inline(always)]
fn block_set(level: Supported, block: &mut Block, lo: u64, hi: u64, num_hashes: u32) -> bool {
    arch::block512::set_with(level, &mut block.0, lo, hi, num_hashes)
}

/// How a batch's inputs become digests: items through their bytes ([`Hashing`]), `u64`
/// keys through the integer path ([`U64Keys`]).
trait Digester<In>: Copy {
    fn digest_of(&self, input: In) -> u128;
}

impl<I: Item + ?Sized> Digester<&I> for Hashing {
    #[inline(always)]
    fn digest_of(&self, item: &I) -> u128 {
        item.with_bytes(|bytes| self.digest(bytes))
    }
}

/// `u64` keys hashed by [`hash::digest_u64`] under a filter's hashing.
#[derive(Clone, Copy)]
struct U64Keys(Hashing);

impl Digester<u64> for U64Keys {
    #[inline(always)]
    fn digest_of(&self, key: u64) -> u128 {
        hash::digest_u64(self.0.function, key, self.0.seed)
    }
}

/// The batch queries' stages: level, k, the blocks, the digester. The answers are the
/// state, a separate `&mut`, so that pushing to them cannot change (and make the compiler
/// reload) the level, whose kernel is then chosen once for the whole loop.
struct Queries<'a, D>(Supported, u32, &'a [Block], D);

impl<In, D: Digester<In>> lookahead::Stages<In> for Queries<'_, D> {
    type State = Vec<bool>;
    type Located = (usize, u64, u64);
    #[inline(always)]
    fn locate(&self, _: &Vec<bool>, input: In) -> (usize, u64, u64) {
        locate(self.2, self.3.digest_of(input))
    }
    #[inline(always)]
    fn used(&mut self, out: &mut Vec<bool>, (i, lo, hi): (usize, u64, u64)) {
        out.push(block_has(self.0, &self.2[i], lo, hi, self.1));
    }
}

/// The batch inserts' stages: level, k, the digester, the count of inserts that changed
/// the filter.
struct Inserts<D>(Supported, u32, D, u64);

impl<In, D: Digester<In>> lookahead::Stages<In> for Inserts<D> {
    type State = [Block];
    type Located = (usize, u64, u64);
    #[inline(always)]
    fn locate(&self, blocks: &[Block], input: In) -> (usize, u64, u64) {
        locate(blocks, self.2.digest_of(input))
    }
    #[inline(always)]
    fn used(&mut self, blocks: &mut [Block], (i, lo, hi): (usize, u64, u64)) {
        self.3 += block_set(self.0, &mut blocks[i], lo, hi, self.1) as u64;
    }
}

/// The block of a digest whose high half is `hi`: multiply-shift into `[0, blocks)`.
#[inline(always)]
fn block_of(hi: u64, blocks: usize) -> usize {
    reduce(hi, blocks as u64) as usize
}

/// A digest's block (by multiply-shift of its high half, as the single calls choose it),
/// prefetched, with the halves the kernels take: what the batch calls locate ahead.
#[inline(always)]
fn locate(blocks: &[Block], digest: u128) -> (usize, u64, u64) {
    let (lo, hi) = halves(digest);
    let i = block_of(hi, blocks.len());
    if let Some(block) = blocks.get(i) {
        arch::prefetch(block);
    }
    (i, lo, hi)
}

#[inline(always)]
fn halves(digest: u128) -> (u64, u64) {
    (digest as u64, (digest >> 64) as u64)
}

impl BlockedBloomFilter {
    /// A filter for `capacity` items at false-positive probability `fpp`, with the fewest
    /// blocks that meet `fpp` by [`params::fpp_blocked`] (default hashing: fold2-128,
    /// seed 0; see [`BlockedBloomFilterBuilder`]).
    ///
    /// ```
    /// use bloomkit::BlockedBloomFilter;
    /// let filter = BlockedBloomFilter::with_capacity(1_000_000, 0.01)?;
    /// assert_eq!(filter.num_hashes(), 8);
    /// let bits_per_item = filter.num_bits() as f64 / 1e6;
    /// assert!(bits_per_item < 1.06 * 9.5851); // the classic filter: 9.585
    /// assert!(BlockedBloomFilter::with_capacity(0, 0.01).is_err());
    /// assert!(BlockedBloomFilter::with_capacity(10, f64::NAN).is_err());
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn with_capacity(capacity: impl crate::params::ItemCount, fpp: f64) -> Result<Self, Error> {
        Self::builder().capacity(capacity).fpp(fpp).build()
    }

    /// A builder for every other choice: explicit size and k, hash function, seed.
    pub fn builder() -> BlockedBloomFilterBuilder {
        BlockedBloomFilterBuilder::default()
    }

    /// Adds an item. Returns `true` if the filter changed (the item was certainly new).
    #[inline]
    pub fn insert<I: Item + ?Sized>(&mut self, item: &I) -> bool {
        let digest = item.with_bytes(|bytes| self.hashing.digest(bytes));
        self.insert_digest(digest)
    }

    /// `false` if the item is certainly absent, `true` if it may be present.
    #[inline]
    pub fn contains<I: Item + ?Sized>(&self, item: &I) -> bool {
        let digest = item.with_bytes(|bytes| self.hashing.digest(bytes));
        self.contains_digest(digest)
    }

    /// [`insert`](Self::insert) for a `u64` key without the byte-slice detour: the same
    /// digest ([`hash::digest_u64`]), so `insert_u64(x)` and `insert(&x)` are the same.
    #[inline]
    pub fn insert_u64(&mut self, key: u64) -> bool {
        let changed = match self.keyed.0 {
            // One kernel call, the hash inlined into it.
            Some(kernels) => kernels.set(&mut self.blocks, key, self.num_hashes),
            None => {
                let digest = hash::digest_u64(self.hashing.function, key, self.hashing.seed);
                return self.insert_digest(digest);
            }
        };
        self.inserted += changed as u64;
        changed
    }

    /// [`contains`](Self::contains) for a `u64` key; the same answer as `contains(&key)`.
    #[inline]
    pub fn contains_u64(&self, key: u64) -> bool {
        match self.keyed.0 {
            // One kernel call per query, the hash inlined into it.
            Some(kernels) => kernels.has(&self.blocks, key, self.num_hashes),
            None => {
                let digest = hash::digest_u64(self.hashing.function, key, self.hashing.seed);
                self.contains_digest(digest)
            }
        }
    }

    /// The answers of [`contains`](Self::contains) for every item, each item's block
    /// prefetched a window of items ahead so that the cache misses overlap (see the module
    /// docs).
    ///
    /// ```
    /// use bloomkit::BlockedBloomFilter;
    /// let mut filter = BlockedBloomFilter::with_capacity(1000, 0.01)?;
    /// filter.insert_batch(&["a", "b"]);
    /// assert_eq!(filter.contains_batch(&["a", "b"]), vec![true, true]);
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn contains_batch<I: Item>(&self, items: &[I]) -> Vec<bool> {
        lookahead::answers(items.len(), |out| self.contains_batch_into(items, out))
    }

    /// [`contains_batch`](Self::contains_batch) into a vector that is cleared first (reuse it
    /// across calls to avoid an allocation per batch).
    pub fn contains_batch_into<I: Item>(&self, items: &[I], out: &mut Vec<bool>) {
        lookahead::ready(out, items.len());
        self.contains_all(items.iter(), self.hashing, out);
    }

    /// [`contains_batch_into`](Self::contains_batch_into) for `u64` keys through the integer
    /// fast path; the same answers as [`contains_u64`](Self::contains_u64).
    pub fn contains_batch_u64(&self, keys: &[u64], out: &mut Vec<bool>) {
        lookahead::ready(out, keys.len());
        self.contains_all(keys.iter().copied(), U64Keys(self.hashing), out);
    }

    /// Inserts every item, each block prefetched ahead as in
    /// [`contains_batch`](Self::contains_batch).
    /// The filter ends exactly as after [`insert`](Self::insert) of each item in order;
    /// returns how many of those inserts changed the filter.
    pub fn insert_batch<I: Item>(&mut self, items: &[I]) -> u64 {
        let hashing = self.hashing;
        self.insert_all(items.iter(), hashing)
    }

    /// [`insert_batch`](Self::insert_batch) for `u64` keys through the integer fast path.
    pub fn insert_batch_u64(&mut self, keys: &[u64]) -> u64 {
        let keyed = U64Keys(self.hashing);
        self.insert_all(keys.iter().copied(), keyed)
    }

    #[inline(always)]
    fn block_index(&self, hi: u64) -> usize {
        block_of(hi, self.blocks.len())
    }

    #[inline(always)]
    fn insert_digest(&mut self, digest: u128) -> bool {
        let (lo, hi) = halves(digest);
        let index = self.block_index(hi);
        let changed = block_set(self.level, &mut self.blocks[index], lo, hi, self.num_hashes);
        self.inserted += changed as u64;
        changed
    }

    #[inline(always)]
    fn contains_digest(&self, digest: u128) -> bool {
        let (lo, hi) = halves(digest);
        let block = &self.blocks[self.block_index(hi)];
        block_has(self.level, block, lo, hi, self.num_hashes)
    }

    /// The batch loops, each run whole at the kernels' level ([`arch::dispatch`]), so that
    /// the kernels inline into them; each input is hashed and its block prefetched a window
    /// of inputs ahead ([`lookahead`]). The hashing happens in the `locate` stage, not in an
    /// iterator's closure, for the reason [`lookahead::Stages`] gives.
    fn contains_all<In, D: Digester<In>>(
        &self,
        inputs: impl Iterator<Item = In>,
        digester: D,
        out: &mut Vec<bool>,
    ) {
        struct Work<'a, It, D>(&'a BlockedBloomFilter, It, D, &'a mut Vec<bool>);
        impl<In, It: Iterator<Item = In>, D: Digester<In>> arch::AtLevel for Work<'_, It, D> {
            type Output = ();
            #[inline(always)]
            fn run(self, level: Supported) {
                let Work(filter, inputs, digester, out) = self;
                let k = filter.num_hashes;
                let mut stages = Queries(level, k, &filter.blocks, digester);
                lookahead::pipeline(&mut stages, out, inputs);
            }
        }
        arch::dispatch(Work(self, inputs, digester, out))
    }

    fn insert_all<In, D: Digester<In>>(
        &mut self,
        inputs: impl Iterator<Item = In>,
        digester: D,
    ) -> u64 {
        struct Work<'a, It, D>(&'a mut BlockedBloomFilter, It, D);
        impl<In, It: Iterator<Item = In>, D: Digester<In>> arch::AtLevel for Work<'_, It, D> {
            type Output = u64;
            #[inline(always)]
            fn run(self, level: Supported) -> u64 {
                let Work(filter, inputs, digester) = self;
                let mut stages = Inserts(level, filter.num_hashes, digester, 0);
                lookahead::pipeline(&mut stages, &mut filter.blocks[..], inputs);
                stages.3
            }
        }
        let changed = arch::dispatch(Work(self, inputs, digester));
        self.inserted += changed;
        changed
    }

    /// b, the number of 512-bit blocks.
    pub fn num_blocks(&self) -> u64 {
        self.blocks.len() as u64
    }

    /// m, the number of bits (`512 · b`).
    pub fn num_bits(&self) -> u64 {
        self.num_blocks() * BLOCK_BITS
    }

    crate::sizing::getters! {
        /// k, the number of bits set per item (all in the item's block).
        num_hashes: u32;
    }

    crate::sizing::capacity_and_fpp_getters!();

    /// The false-positive probability at `capacity` items by the blocked formula
    /// ([`params::fpp_blocked`]); at most [`target_fpp`](Self::target_fpp) when the filter
    /// was sized from a capacity and ε.
    pub fn fpp_at_capacity(&self) -> f64 {
        params::fpp_blocked(
            self.num_blocks(),
            BLOCK_BITS,
            self.num_hashes,
            self.capacity,
        )
    }

    /// The number of bits that are 1.
    pub fn count_ones(&self) -> u64 {
        self.blocks
            .iter()
            .map(|b| b.0.iter().map(|w| w.count_ones() as u64).sum::<u64>())
            .sum()
    }

    /// The fraction of bits that are 1.
    pub fn fill_ratio(&self) -> f64 {
        self.count_ones() as f64 / self.num_bits() as f64
    }

    fn block_ones(block: &Block) -> u32 {
        block.0.iter().map(|w| w.count_ones()).sum()
    }

    /// The facts of the content, block by block.
    fn census(&self) -> Census {
        let mut census = Census::new(self.num_blocks(), self.num_hashes);
        for block in self.blocks.iter() {
            census.add(Self::block_ones(block));
        }
        census
    }

    fn check_compatible(&self, other: &Self) -> Result<(), Error> {
        crate::filter::require_same_layout(self.kind(), self.layout(), other.layout())
    }

    /// The parameters that decide where an item lands, and the hashing, for
    /// [`require_same_layout`](crate::filter::require_same_layout).
    fn layout(&self) -> String {
        format!(
            "b = {}, k = {}, {}",
            self.num_blocks(),
            self.num_hashes,
            self.hashing
        )
    }

    fn recount(&mut self) {
        let estimate = Filter::estimated_len(self);
        self.inserted = if estimate.is_finite() {
            estimate.round() as u64
        } else {
            u64::MAX
        };
    }
}

impl Filter for BlockedBloomFilter {
    crate::filter::filter_basics!(Blocked: hashing, insert, contains, capacity, target_fpp);

    fn clear(&mut self) {
        self.blocks.fill(Block::default());
        self.inserted = 0;
    }

    fn len(&self) -> u64 {
        self.inserted
    }

    /// The sum over blocks of the fill estimate `−(B/k) ln(1 − x/B)` of each block's x set
    /// bits (Swamidass & Baldi's estimate, [`params::estimate_items`], applied per block,
    /// since the fill of a block is a non-linear function of its own load). Infinite if a
    /// block is full.
    fn estimated_len(&self) -> f64 {
        self.census().estimated_len
    }

    fn memory_bytes(&self) -> usize {
        self.blocks.len() * std::mem::size_of::<Block>()
    }

    fn properties(&self) -> Vec<(&'static str, String)> {
        self.census().properties(&Stored::of(self))
    }

    /// Exact for the current content: a random absent item falls into a uniform block and
    /// hits k uniform bits of it, so `FPP = (1/b) Σ_blocks (x_block / B)^k`.
    fn expected_fpp(&self) -> f64 {
        self.census().expected_fpp()
    }

    fn fpp_at(&self, n: u64) -> f64 {
        params::fpp_blocked(self.num_blocks(), params::BLOCK_BITS, self.num_hashes(), n)
    }
}

crate::registry::registered!(
    BlockedBloomFilter,
    {
        name: "blocked",
        summary: "Blocked Bloom filter: all k bits of an item in one 64-byte cache line (one cache miss per query); union.",
        grow: false,
        forgets: false,
        index_scheme: false,
    }, merge
);

impl Mergeable for BlockedBloomFilter {
    /// Bitwise OR: exactly the filter that inserting both sets would have built.
    ///
    /// ```
    /// use bloomkit::{BlockedBloomFilter, Mergeable};
    /// let mut a = BlockedBloomFilter::with_capacity(100, 0.01)?;
    /// let mut b = BlockedBloomFilter::with_capacity(100, 0.01)?;
    /// a.insert("left");
    /// b.insert("right");
    /// a.union(&b)?;
    /// assert!(a.contains("left") && a.contains("right"));
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    fn union(&mut self, other: &Self) -> Result<(), Error> {
        self.check_compatible(other)?;
        for (a, b) in self.blocks.iter_mut().zip(&other.blocks) {
            for w in 0..WORDS {
                a.0[w] |= b.0[w];
            }
        }
        self.recount();
        Ok(())
    }

    /// Bitwise AND.
    fn intersect(&mut self, other: &Self) -> Result<(), Error> {
        self.check_compatible(other)?;
        for (a, b) in self.blocks.iter_mut().zip(&other.blocks) {
            for w in 0..WORDS {
                a.0[w] &= b.0[w];
            }
        }
        self.recount();
        Ok(())
    }
}

crate::filter::collection_impls!(
    /// Collects items into a filter sized for their number at ε = 1%. (The items are
    /// buffered to count them; use [`BlockedBloomFilter::with_capacity`] and `extend` to
    /// choose ε.)
    ///
    /// ```
    /// use bloomkit::BlockedBloomFilter;
    /// let filter: BlockedBloomFilter = (0..100u64).collect();
    /// assert!(filter.contains(&7u64));
    /// assert_eq!(filter.capacity(), 100);
    /// ```
    BlockedBloomFilter
);

impl BlockedBloomFilter {
    /// Inserts `items` on rayon's threads: the same bits, and the same count of inserts that
    /// changed the filter, as [`insert`](Self::insert) of each in order (the items are
    /// partitioned by block range, one range per thread). Requires the `rayon` feature.
    ///
    /// ```
    /// use bloomkit::BlockedBloomFilter;
    /// let words: Vec<String> = (0..50_000).map(|i| format!("w{i}")).collect();
    /// let mut parallel = BlockedBloomFilter::with_capacity(50_000, 0.01)?;
    /// let mut sequential = parallel.clone();
    /// assert_eq!(parallel.insert_parallel(&words), sequential.insert_batch(&words));
    /// assert_eq!(parallel, sequential);
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    #[cfg(feature = "rayon")]
    #[cfg_attr(docsrs, doc(cfg(feature = "rayon")))]
    pub fn insert_parallel<I: Item + Sync>(&mut self, items: &[I]) -> u64 {
        let (hashing, k, b) = (self.hashing, self.num_hashes, self.blocks.len());
        let level = self.level;
        let changed = insert_partitioned(
            &mut self.blocks,
            items,
            |item| {
                let (lo, hi) = halves(item.with_bytes(|bytes| hashing.digest(bytes)));
                (block_of(hi, b), (lo, hi))
            },
            |block: &mut Block, (lo, hi)| block_set(level, block, lo, hi, k),
        );
        self.inserted += changed;
        changed
    }
}

/// Inserting into a filter of independent blocks on all cores, partitioned by block (no
/// atomics, no copies of the filter):
///
/// 1. **Locate** (parallel over chunks of the items, in order): each item becomes an entry
///    `(block, in-block data)`, appended to the list of the block range it falls in.
/// 2. **Set** (parallel over the block ranges): each range's thread owns its blocks and
///    replays the range's entries chunk by chunk, in item order, prefetching a few ahead.
///
/// Every block sees its items in the sequential order, so an insert changes a block exactly
/// when it would sequentially: the bits and the returned count of changing inserts are the
/// sequential ones whatever the number of threads.
#[cfg(feature = "rayon")]
pub(crate) fn insert_partitioned<I, B, E>(
    blocks: &mut [B],
    items: &[I],
    locate: impl Fn(&I) -> (usize, E) + Sync,
    apply: impl Fn(&mut B, E) -> bool + Sync,
) -> u64
where
    I: Sync,
    B: Send,
    E: Copy + Send + Sync,
{
    use rayon::prelude::*;
    /// Entries replayed ahead of their prefetch.
    const AHEAD: usize = 8;
    let threads = rayon::current_num_threads();
    if threads == 1 || items.len() < 1 << 12 || blocks.len() < 2 {
        return items
            .iter()
            .map(|item| {
                let (i, e) = locate(item);
                apply(&mut blocks[i], e) as u64
            })
            .sum();
    }
    let parts = (4 * threads).min(blocks.len());
    let per = blocks.len().div_ceil(parts);
    let chunk = items.len().div_ceil(4 * threads);
    let lists: Vec<Vec<Vec<(usize, E)>>> = items
        .par_chunks(chunk)
        .map(|chunk| {
            let mut lists: Vec<Vec<(usize, E)>> = (0..parts)
                .map(|_| Vec::with_capacity(chunk.len() / parts + 16))
                .collect();
            for item in chunk {
                let (i, e) = locate(item);
                lists[i / per].push((i, e));
            }
            lists
        })
        .collect();
    blocks
        .par_chunks_mut(per)
        .enumerate()
        .map(|(p, mine)| {
            let base = p * per;
            let mut changed = 0u64;
            for lists in &lists {
                let entries = &lists[p];
                for (j, &(i, e)) in entries.iter().enumerate() {
                    if let Some(&(ahead, _)) = entries.get(j + AHEAD) {
                        arch::prefetch(&mine[ahead - base]);
                    }
                    changed += apply(&mut mine[i - base], e) as u64;
                }
            }
            changed
        })
        .sum()
}

/// Allocates `count` zero blocks (on huge pages when large, see [`arch::zeroed_vec`]);
/// failure is an error, not an abort.
fn zero_blocks(count: u64) -> Result<Vec<Block>, Error> {
    let bytes = count.saturating_mul(BLOCK_BITS / 8);
    let len = usize::try_from(count).map_err(|_| Error::OutOfMemory { bytes })?;
    arch::zeroed_vec(len).ok_or(Error::OutOfMemory { bytes })
}

/// Builds a [`BlockedBloomFilter`] from a capacity and ε, or from an explicit size.
///
/// The blocked filter derives all k positions from one digest by its own scheme (see the
/// module docs); the textbook k-seeded-hashes scheme does not apply, so the builder has no
/// index-scheme option and the filter's [`Hashing::scheme`] is always
/// [`IndexScheme::EnhancedDoubleHashing`] (the one-digest scheme id in files).
///
/// ```
/// use bloomkit::{BlockedBloomFilter, HashFunction};
///
/// let filter = BlockedBloomFilter::builder()
///     .capacity(1_000_000)
///     .fpp(0.001)
///     .hash_function(HashFunction::Xxh3)
///     .random_seed()
///     .build()?;
/// assert_eq!(filter.num_hashes(), 8);
///
/// // An explicit size: m is rounded up to whole 512-bit blocks.
/// let explicit = BlockedBloomFilter::builder().num_bits(1000).num_hashes(5).build()?;
/// assert_eq!(explicit.num_bits(), 1024);
/// # Ok::<(), bloomkit::Error>(())
/// ```
#[derive(Clone, Debug)]
#[must_use = "a builder does nothing until .build() is called"]
pub struct BlockedBloomFilterBuilder {
    capacity: Option<u64>,
    fpp: Option<f64>,
    num_blocks: Option<u64>,
    num_hashes: Option<u32>,
    hashing: HashingChoice,
}

/// The default hash function of a blocked filter is fold2-128 ([`HashFunction::Fold2`]), not
/// the crate-wide MurmurHash3: the filter exists for speed, and on an 8-byte key fold2's
/// digest is two multiplies (XXH3-128's, the default before it, three; MurmurHash3's six in
/// one chain). Files say which function they were built with, so filters saved with XXH3 or
/// MurmurHash3 load and answer as before; `.hash_function(HashFunction::Xxh3)` builds one.
impl Default for BlockedBloomFilterBuilder {
    fn default() -> Self {
        let mut hashing = HashingChoice::default();
        hashing.hashing.function = HashFunction::Fold2;
        Self {
            capacity: None,
            fpp: None,
            num_blocks: None,
            num_hashes: None,
            hashing,
        }
    }
}

impl BlockedBloomFilterBuilder {
    // No index scheme: every position comes from one digest (see the module docs).
    crate::hash::hashing_setters!();

    crate::sizing::capacity_and_fpp_setters!();

    crate::sizing::setters! {
        /// b, the number of 512-bit blocks, instead of deriving it from capacity and ε.
        num_blocks: u64;
    }

    crate::sizing::num_cells_setter!(num_bits, "bits, rounded up to whole 512-bit blocks");

    /// m, the number of bits, rounded up to whole blocks (`b = ⌈m / 512⌉`).
    pub fn num_bits(mut self, num_bits: u64) -> Self {
        self.num_blocks = Some(num_bits.div_ceil(BLOCK_BITS));
        self
    }

    crate::sizing::setters! {
        /// k, the bits per item, instead of the best one for the size.
        num_hashes: u32;
    }

    /// Validates the parameters and allocates the filter.
    ///
    /// * capacity and ε: the fewest blocks and the best k ([`params::blocked_dimensions`]);
    ///   with k given, the fewest blocks for that k;
    /// * blocks (or bits) given: k is the given one, or the best for the capacity, or
    ///   `round(log₂(1/ε))` without a capacity; a missing capacity is the largest n the
    ///   blocks hold at ε ([`params::blocked_capacity`]).
    pub fn build(self) -> Result<BlockedBloomFilter, Error> {
        let fpp = crate::sizing::fpp(self.fpp)?;
        crate::sizing::check_capacity(self.capacity)?;
        crate::sizing::check_num_hashes(self.num_hashes)?;
        let (num_blocks, num_hashes) = match (self.num_blocks, self.capacity, self.num_hashes) {
            (Some(0), _, _) => return Err(Error::ZeroBits),
            (Some(b), _, _) if b > MAX_NUM_BLOCKS => {
                return Err(Error::TooLarge {
                    bits: b.saturating_mul(BLOCK_BITS),
                    max: params::MAX_NUM_BITS,
                })
            }
            (Some(b), _, Some(k)) => (b, k),
            (Some(b), Some(n), None) => (b, params::blocked_best_num_hashes(b, n)),
            (Some(b), None, None) => (b, ((-fpp.log2()).round() as u32).clamp(1, MAX_NUM_HASHES)),
            (None, Some(n), Some(k)) => (params::blocked_num_blocks(n, fpp, k)?, k),
            (None, Some(n), None) => params::blocked_dimensions(n, fpp)?,
            (None, None, _) => return Err(Error::ZeroCapacity),
        };
        let capacity = self
            .capacity
            .unwrap_or_else(|| params::blocked_capacity(num_blocks, num_hashes, fpp));
        let target_fpp = if self.num_blocks.is_none() {
            fpp
        } else {
            params::fpp_blocked(num_blocks, BLOCK_BITS, num_hashes, capacity)
                .clamp(f64::MIN_POSITIVE, 1.0 - f64::EPSILON)
        };
        // The builder has no scheme setter, so the scheme is the default one-digest scheme.
        let hashing = self.hashing.resolve()?;
        let level = arch::detected();
        Ok(BlockedBloomFilter {
            blocks: zero_blocks(num_blocks)?,
            level,
            keyed: Keyed::new(level, hashing, num_hashes),
            num_hashes,
            hashing,
            capacity,
            target_fpp,
            inserted: 0,
        })
    }
}

crate::codec::stored! {
    /// The blocked filter's parameters on disk (36 bytes). Payload: the blocks in order, each
    /// as 8 little-endian u64 words (64 bytes per block).
    struct Stored of f: BlockedBloomFilter {
        num_blocks: u64 = f.num_blocks(),
        num_hashes: u32 = f.num_hashes => check_num_hashes,
        capacity: u64 = f.capacity => check_capacity,
        target_fpp: f64 = f.target_fpp => check_target_fpp,
        inserted: u64 = f.inserted,
    }
}

impl Persist for BlockedBloomFilter {
    fn encode_params(&self, out: &mut Vec<u8>) {
        Stored::of(self).write(out);
    }

    fn encode_payload(&self, out: &mut Vec<u8>) {
        out.reserve(self.memory_bytes());
        for block in &self.blocks {
            for w in block.0 {
                out.extend_from_slice(&w.to_le_bytes());
            }
        }
    }

    fn decode_parts(parts: &Parts<'_>) -> Result<Self, DecodeError> {
        let Shape { stored, hashing } = ViewShape::read(parts)?;
        let invalid = |field, reason: String| DecodeError::InvalidField { field, reason };
        let mut blocks =
            zero_blocks(stored.num_blocks).map_err(|e| invalid("num_blocks", e.to_string()))?;
        for (block, bytes) in blocks
            .iter_mut()
            .zip(parts.payload.chunks_exact(BLOCK_BYTES))
        {
            block.0 = block_from_le_bytes(bytes);
        }
        let level = arch::detected();
        Ok(BlockedBloomFilter {
            blocks,
            level,
            keyed: Keyed::new(level, hashing, stored.num_hashes),
            num_hashes: stored.num_hashes,
            hashing,
            capacity: stored.capacity,
            target_fpp: stored.target_fpp,
            inserted: stored.inserted,
        })
    }
}

/// Bytes per block on disk.
const BLOCK_BYTES: usize = (BLOCK_BITS / 8) as usize;

/// A block's words from its 64 little-endian bytes.
#[inline(always)]
fn block_from_le_bytes(bytes: &[u8]) -> [u64; WORDS] {
    std::array::from_fn(|w| {
        u64::from_le_bytes(bytes[8 * w..8 * w + 8].try_into().expect("8 bytes"))
    })
}

/// A blocked filter as loading and a read-only view ([`format::view`](crate::format::view))
/// read it: the stored parameters, checked, and the query over a block the view fetches
/// from the file.
type ViewShape = Shape<Stored>;

/// The facts of a blocked filter's content, gathered one block's count of set bits at a
/// time, in block order — by the loaded filter over its blocks and by a view over the
/// file's pieces, so that both report the same numbers.
struct Census {
    num_blocks: u64,
    num_hashes: u32,
    ones: u64,
    fullest: u32,
    /// The sum over blocks of the fill estimate `−(B/k) ln(1 − x/B)` of each block's x set
    /// bits (Swamidass & Baldi's estimate, [`params::estimate_items`], applied per block,
    /// since the fill of a block is a non-linear function of its own load). Infinite if a
    /// block is full.
    estimated_len: f64,
    /// `Σ_blocks (x_block / B)^k`.
    fpp_sum: f64,
}

impl Census {
    fn new(num_blocks: u64, num_hashes: u32) -> Self {
        Census {
            num_blocks,
            num_hashes,
            ones: 0,
            fullest: 0,
            estimated_len: 0.0,
            fpp_sum: 0.0,
        }
    }

    fn add(&mut self, ones: u32) {
        self.ones += ones as u64;
        self.fullest = self.fullest.max(ones);
        self.estimated_len += params::estimate_items(ones as u64, BLOCK_BITS, self.num_hashes);
        self.fpp_sum += (ones as f64 / BLOCK_BITS as f64).powi(self.num_hashes as i32);
    }

    /// `(1/b) Σ_blocks (x_block / B)^k` ([`Filter::expected_fpp`]).
    fn expected_fpp(&self) -> f64 {
        self.fpp_sum / self.num_blocks as f64
    }

    /// [`Filter::properties`] of a filter with these stored parameters and this content.
    fn properties(&self, stored: &Stored) -> Vec<(&'static str, String)> {
        let num_bits = self.num_blocks * BLOCK_BITS;
        let at_capacity = params::fpp_blocked(
            self.num_blocks,
            BLOCK_BITS,
            self.num_hashes,
            stored.capacity,
        );
        let classic = params::fpp_exact(num_bits, self.num_hashes, stored.capacity);
        vec![
            ("blocks (b)", self.num_blocks.to_string()),
            (
                "block size (B)",
                format!("{BLOCK_BITS} bits (one 64-byte cache line)"),
            ),
            ("bits (m)", num_bits.to_string()),
            ("bits per item (k)", self.num_hashes.to_string()),
            ("target fpp", format!("{}", stored.target_fpp)),
            (
                "fpp at capacity (blocked theory)",
                format!("{at_capacity:.6e}"),
            ),
            (
                "blocking penalty (vs classic at same m, k)",
                format!("{:.3}x", at_capacity / classic),
            ),
            (
                "fill ratio",
                format!("{:.6}", self.ones as f64 / num_bits as f64),
            ),
            (
                "fullest block",
                format!("{} of {BLOCK_BITS} bits", self.fullest),
            ),
            (
                "in-block positions",
                "bit t in word t mod 8, 6-bit fields of one 128-bit digest".into(),
            ),
        ]
    }
}

impl KindView for ViewShape {
    /// The parameters of `parts`, checked, and the payload's length against them (its bytes
    /// are not read).
    fn read(parts: &Parts<'_>) -> Result<Self, DecodeError> {
        parts.expect_kind(Kind::Blocked)?;
        let invalid = |field, reason: String| DecodeError::InvalidField { field, reason };
        if parts.hashing.scheme != IndexScheme::EnhancedDoubleHashing {
            return Err(invalid(
                "index scheme",
                format!(
                    "a blocked filter derives its positions from one digest; {} is not used",
                    parts.hashing.scheme.name()
                ),
            ));
        }
        let stored = Stored::read(parts.params)?;
        crate::codec::check_blocks(
            stored.num_blocks,
            MAX_NUM_BLOCKS,
            BLOCK_BYTES as u64,
            parts.payload.len(),
        )?;
        Ok(Shape::of(stored, parts))
    }

    fn facts(&self) -> ViewFacts {
        let num_bits = self.stored.num_blocks * BLOCK_BITS;
        view_facts!(self.stored, num_bits, self.stored.num_hashes)
    }

    /// The set bits of each block, counted over the payload ([`Census`]).
    fn summary(&self, view: &FilterView) -> Result<Summary, Error> {
        let mut census = Census::new(self.stored.num_blocks, self.stored.num_hashes);
        view.for_each_piece(|bytes| {
            for block in bytes.chunks_exact(BLOCK_BYTES) {
                census.add(
                    block_from_le_bytes(block)
                        .iter()
                        .map(|w| w.count_ones())
                        .sum(),
                );
            }
            Ok(())
        })?;
        Ok(view.summary_of(
            None,
            census.properties(&self.stored),
            census.estimated_len,
            census.expected_fpp(),
        ))
    }

    /// The loaded filter's answer: the same digest, the same block (multiply-shift of its
    /// high half) and the same kernel.
    fn contains(&self, bytes: &[u8], view: &FilterView) -> Result<bool, Error> {
        let (lo, hi) = halves(self.hashing.digest(bytes));
        let i = block_of(hi, self.stored.num_blocks as usize);
        let words = block_from_le_bytes(view.payload(i * BLOCK_BYTES, BLOCK_BYTES)?);
        Ok(arch::block512::has_with(
            arch::detected(),
            &words,
            lo,
            hi,
            self.stored.num_hashes,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::block512::more_fields;

    #[test]
    fn blocks_are_cache_lines() {
        assert_eq!(std::mem::size_of::<Block>(), 64);
        assert_eq!(std::mem::align_of::<Block>(), 64);
        let f = BlockedBloomFilter::with_capacity(1000, 0.01).unwrap();
        assert_eq!(f.blocks.as_ptr() as usize % 64, 0);
        assert_eq!(f.memory_bytes() as u64, f.num_blocks() * 64);
    }

    #[test]
    fn inserted_items_are_found_through_every_path() {
        let mut f = BlockedBloomFilter::with_capacity(2000, 0.01).unwrap();
        for i in 0..1000u64 {
            f.insert(&i);
        }
        for i in 1000..2000u64 {
            f.insert_u64(i);
        }
        assert!((0..2000u64).all(|i| f.contains(&i) && f.contains_u64(i)));
        let keys: Vec<u64> = (0..2000).collect();
        assert!(f.contains_batch(&keys).into_iter().all(|b| b));
        let mut out = Vec::new();
        f.contains_batch_u64(&keys, &mut out);
        assert!(out.iter().all(|&b| b));
    }

    #[test]
    fn batches_answer_exactly_like_single_calls() {
        let mut single = BlockedBloomFilter::with_capacity(5000, 0.02).unwrap();
        let mut batched = single.clone();
        let mut batched_u64 = single.clone();
        let keys: Vec<u64> = (0..5000u64).map(|i| i.wrapping_mul(0x9e37_79b9)).collect();
        let changed_single = keys.iter().filter(|&&k| single.insert(&k)).count() as u64;
        assert_eq!(batched.insert_batch(&keys), changed_single);
        assert_eq!(batched_u64.insert_batch_u64(&keys), changed_single);
        assert_eq!(batched, single);
        assert_eq!(batched_u64, single);
        // Odd lengths (not a multiple of the group) and absent keys.
        let queries: Vec<u64> = (0..20_003u64)
            .map(|i| i.wrapping_mul(0x9e37_79b9))
            .collect();
        let expected: Vec<bool> = queries.iter().map(|k| single.contains(k)).collect();
        assert_eq!(single.contains_batch(&queries), expected);
        let mut out = vec![true; 3];
        single.contains_batch_u64(&queries, &mut out);
        assert_eq!(out, expected);
        assert!(expected.iter().filter(|&&b| !b).count() > 14_000);
    }

    #[test]
    fn each_item_sets_k_bits_in_exactly_one_block() {
        for k in [1, 6, 7, 8, 9, 14, 15, 30, 64] {
            let mut f = BlockedBloomFilter::builder()
                .num_blocks(64)
                .num_hashes(k)
                .build()
                .unwrap();
            f.insert("one item");
            let touched: Vec<u32> = f
                .blocks
                .iter()
                .map(BlockedBloomFilter::block_ones)
                .filter(|&o| o > 0)
                .collect();
            assert_eq!(touched.len(), 1, "k = {k}");
            // k positions may coincide, but rarely all of them.
            assert!(
                touched[0] <= k && touched[0] + 3 >= k.min(20),
                "k = {k}: {touched:?}"
            );
        }
    }

    /// Bits past the eighth come from the refilled fields: each of the 512 values must
    /// be reachable from every field round (a bias would show as empty bits).
    #[test]
    fn every_bit_of_a_block_is_used_by_every_field_round() {
        let mut seen = [[0u32; 512]; 3];
        for i in 0..40_000u64 {
            let d = crate::hash::digest_u64(crate::HashFunction::Murmur3, i, 0);
            let (lo, hi) = halves(d);
            for (round, count) in seen.iter_mut().enumerate() {
                let fields = if round == 0 {
                    lo
                } else {
                    more_fields(lo, hi, round as u64)
                };
                count[(fields & 511) as usize] += 1;
            }
        }
        for (round, counts) in seen.iter().enumerate() {
            let (min, max) = (counts.iter().min().unwrap(), counts.iter().max().unwrap());
            // Mean 78; a Poisson count this far out has p < 1e-6 over 1536 cells.
            assert!(*min > 35 && *max < 130, "round {round}: {min}..{max}");
        }
    }

    #[test]
    fn sizing_meets_the_target_by_the_blocked_formula() {
        for (n, fpp) in [
            (1u64, 0.5),
            (100, 0.01),
            (1_000_000, 0.01),
            (1_000_000, 0.001),
        ] {
            let f = BlockedBloomFilter::with_capacity(n, fpp).unwrap();
            assert!(f.fpp_at_capacity() <= fpp, "n {n} ε {fpp}");
            assert_eq!(f.target_fpp(), fpp);
        }
        let f = BlockedBloomFilter::builder()
            .capacity(10_000)
            .fpp(0.01)
            .num_hashes(8)
            .build()
            .unwrap();
        assert_eq!(f.num_hashes(), 8);
        assert!(f.fpp_at_capacity() <= 0.01);
    }

    #[test]
    fn explicit_size_derives_k_and_capacity() {
        let f = BlockedBloomFilter::builder()
            .num_blocks(1000)
            .build()
            .unwrap();
        assert_eq!(f.num_hashes(), 7); // round(log2(100))
        assert!(f.fpp_at_capacity() <= 0.01 + 1e-12);
        let more = params::fpp_blocked(1000, BLOCK_BITS, 7, f.capacity() + 1);
        assert!(more > 0.01, "capacity is the largest n that meets ε");
        let g = BlockedBloomFilter::builder()
            .num_blocks(1000)
            .capacity(50_000)
            .build()
            .unwrap();
        assert_eq!(
            g.num_hashes(),
            params::blocked_best_num_hashes(1000, 50_000)
        );
        assert_eq!(g.target_fpp(), g.fpp_at_capacity());
    }

    #[test]
    fn degenerate_parameters_are_errors() {
        let b = BlockedBloomFilter::builder;
        assert_eq!(b().build().unwrap_err(), Error::ZeroCapacity);
        assert_eq!(b().num_blocks(0).build().unwrap_err(), Error::ZeroBits);
        assert_eq!(b().num_bits(0).build().unwrap_err(), Error::ZeroBits);
        assert_eq!(
            b().num_blocks(1).num_hashes(0).build().unwrap_err(),
            Error::ZeroHashes
        );
        assert!(matches!(
            b().num_blocks(1).num_hashes(65).build(),
            Err(Error::TooManyHashes { .. })
        ));
        assert!(matches!(
            b().num_bits(u64::MAX).build(),
            Err(Error::TooLarge { .. })
        ));
        assert!(matches!(
            b().num_blocks(MAX_NUM_BLOCKS + 1).build(),
            Err(Error::TooLarge { .. })
        ));
        assert!(matches!(
            BlockedBloomFilter::with_capacity(u64::MAX, 0.01),
            Err(Error::CapacityTooLarge {
                capacity: u64::MAX,
                ..
            })
        ));
        assert!(matches!(
            BlockedBloomFilter::with_capacity(1u64 << 39, 1e-300),
            Err(Error::CapacityTooLarge { .. })
        ));
        for fpp in [0.0, 1.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(matches!(
                BlockedBloomFilter::with_capacity(10, fpp),
                Err(Error::InvalidFpp(_))
            ));
        }
        assert_eq!(
            b().num_blocks(10).capacity(0).build().unwrap_err(),
            Error::ZeroCapacity
        );
    }

    #[test]
    fn union_and_intersection_follow_the_bits_and_check_compatibility() {
        let mut a = BlockedBloomFilter::with_capacity(1000, 0.01).unwrap();
        let mut b = a.clone();
        a.extend(0..300u32);
        b.extend(200..500u32);
        let mut u = a.clone();
        u.union(&b).unwrap();
        assert!((0..500u32).all(|i| u.contains(&i)));
        let mut i = a.clone();
        i.intersect(&b).unwrap();
        assert!((200..300u32).all(|x| i.contains(&x)));
        let c = BlockedBloomFilter::with_capacity(2000, 0.01).unwrap();
        let d = BlockedBloomFilter::builder()
            .capacity(1000)
            .seed(1)
            .build()
            .unwrap();
        assert!(matches!(a.union(&c), Err(Error::Incompatible(_))));
        assert!(matches!(a.union(&d), Err(Error::Incompatible(_))));
        assert!(matches!(a.intersect(&c), Err(Error::Incompatible(_))));
    }

    #[test]
    fn estimated_len_and_expected_fpp_follow_the_content() {
        let mut f = BlockedBloomFilter::with_capacity(20_000, 0.01).unwrap();
        assert_eq!(f.estimated_len(), 0.0);
        assert_eq!(f.expected_fpp(), 0.0);
        f.insert_batch_u64(&(0..20_000u64).collect::<Vec<_>>());
        let est = f.estimated_len();
        assert!((est - 20_000.0).abs() < 400.0, "{est}");
        let p = f.expected_fpp();
        assert!(
            (p - f.fpp_at_capacity()).abs() / p < 0.1,
            "{p} vs {}",
            f.fpp_at_capacity()
        );
        assert!(!Filter::is_empty(&f));
        f.clear();
        assert!(Filter::is_empty(&f) && f.count_ones() == 0);
    }

    #[test]
    fn debug_and_properties_show_the_parameters() {
        let f = BlockedBloomFilter::with_capacity(1000, 0.01).unwrap();
        let s = format!("{f:?}");
        for needle in [
            "num_blocks: 20",
            "num_hashes: 8",
            "capacity: 1000",
            "target_fpp: 0.01",
        ] {
            assert!(s.contains(needle), "{s}");
        }
        let props = f.properties();
        assert!(props.iter().any(|(k, _)| *k == "blocks (b)"));
        assert!(props
            .iter()
            .any(|(k, v)| k.starts_with("blocking penalty") && v.ends_with('x')));
    }

    #[test]
    fn decoding_checks_the_kind_scheme_and_payload() {
        let mut f = BlockedBloomFilter::with_capacity(100, 0.1).unwrap();
        f.insert("x");
        let bytes = f.to_bytes();
        assert_eq!(BlockedBloomFilter::from_bytes(&bytes).unwrap(), f);
        // A classic filter's file is not a blocked filter.
        let classic = crate::BloomFilter::with_capacity(100, 0.1)
            .unwrap()
            .to_bytes();
        assert!(BlockedBloomFilter::from_bytes(&classic).is_err());
        // The seeded scheme id is refused.
        let mut seeded = bytes.clone();
        seeded[12] = IndexScheme::SeededHashes.id();
        let n = seeded.len();
        let sum = xxhash_rust::xxh3::xxh3_64(&seeded[..n - 8]);
        seeded[n - 8..].copy_from_slice(&sum.to_le_bytes());
        assert!(matches!(
            BlockedBloomFilter::from_bytes(&seeded),
            Err(Error::Decode(DecodeError::InvalidField {
                field: "index scheme",
                ..
            }))
        ));
    }
}
