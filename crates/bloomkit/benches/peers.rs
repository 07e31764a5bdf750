//! bloomkit's classic and blocked filters side by side with the Rust peers, on the same u64
//! keys at the same requested ε, with the floor no query can beat: random 64-byte reads
//! from a buffer as large as the filter.
//!
//! ```text
//! cargo bench -p bloomkit --bench peers                                # n = 10⁶, ε = 1% and 0.1%
//! BLOOMKIT_BENCH_N=100000000 cargo bench -p bloomkit --bench peers     # n = 10⁸ (about 15 min)
//! BLOOMKIT_BENCH_FPP=0.01 BLOOMKIT_BENCH_REPEAT=7 cargo bench -p bloomkit --bench peers
//! ```
//!
//! Environment: `BLOOMKIT_BENCH_N` (items, default 1 000 000), `BLOOMKIT_BENCH_FPP`
//! (comma-separated ε, default `0.01,0.001`), `BLOOMKIT_BENCH_QUERIES` (queries per
//! measurement, default min(n, 1 000 000)), `BLOOMKIT_BENCH_REPEAT` (repetitions of every
//! measurement, the median is reported; default 5, or 3 past n = 10⁷ for the queries and
//! 1 for the inserts), `BLOOMKIT_BENCH_ONLY` (comma-separated substrings of the filter
//! names to run), `BLOOMKIT_BENCH_OUT` (a directory: write `peers-n{n}.csv` with every row
//! and `pareto-n{n}.svg`, ns per query against bits per key for the rows whose measured FPR
//! is at most `BLOOMKIT_BENCH_PARETO_EPS`, default 0.01; run several ε with
//! `BLOOMKIT_BENCH_FPP` to give each filter several points), `BLOOMKIT_BENCH_FROM_CSV` (a
//! `peers-n{n}.csv` this bench wrote: redraw its figure next to it and measure nothing).
//!
//! As a user gets it: `cargo bench` (baseline x86-64; bloomkit picks AVX2/AVX-512 kernels at
//! run time). With the CPU's own features at compile time:
//! `RUSTFLAGS="-C target-cpu=native" CARGO_TARGET_DIR=target/native cargo bench …`.
//!
//! This is a plain timing harness (`harness = false`), not criterion: at n = 10⁸ each
//! filter takes tens of seconds to build and criterion's sampling of every function would
//! make one run last hours. Each figure is the median over the repetitions of one timed
//! loop over all the keys (`Instant` around the loop, divided by the count).
//!
//! What is measured, per filter:
//! * **insert**: building the filter from all n keys, per key (fresh filter each time;
//!   for xorf BinaryFuse8 and bloomkit's Bloomier filter, which are static, the
//!   construction from the key slice);
//! * **positive** / **negative query**: `contains` of Q inserted / never-inserted keys, one
//!   call per key, in a plain loop (the CPU overlaps what it can);
//! * **batch insert** (bloomkit only): building the filter by its `insert_batch`, per key;
//! * **batch** (bloomkit only): `contains_batch` over the same Q keys;
//! * **floor**: Q random 64-byte-line reads (one load each, the line indexes computed
//!   beforehand) from a buffer of the filter's size, in one loop of independent loads, the
//!   buffer allocated as bloomkit's filters are (huge pages advised past 2 MiB); **floor 4K**:
//!   the same from a plain vector (4 KiB pages where THP is in `madvise` mode);
//! * **FPR**: the measured false-positive rate over the Q negative keys;
//! * **bits/key**: the filter's heap memory (its bit or fingerprint array) · 8 / n.
//!
//! Subjects: bloomkit's classic, blocked, split-block, cuckoo and Bloomier filters with their
//! own paths (the blocked filter also with sbbf-rs-safe's memory, to meet that peer at its
//! own bits per key), every other kind of the registry through its type (`Registry`), and
//! the peers.
//!
//! Keys are SplitMix64 outputs of 0..n (inserted) and n..n+Q (absent): distinct by
//! construction. Peers use their default hashers (fastbloom, bloomfilter, cuckoofilter,
//! growable-bloom-filter: SipHash-1-3, seeded), sbbf-rs-safe (which takes a hash) gets
//! XXH3-64 of the key's bytes, xorf takes the keys themselves.

use std::hint::black_box;
use std::time::Instant;

use bloomkit::params::{fpp_blocked, BLOCK_BITS};
use bloomkit::registry::Registered;
use bloomkit::{
    BlockedBloomFilter, BloomFilter, CompressedBloomFilter, CountingBloomFilter,
    DeletableBloomFilter, Filter, GeneralizedBloomFilter, RobustBloomFilter, ScalableBloomFilter,
    SpectralBloomFilter, SplitBlockBloomFilter, StableBloomFilter, VariableIncrementBloomFilter,
    WeightedBloomFilter,
};
use xorf::Filter as _;

/// SplitMix64: distinct, well-spread keys from a counter.
fn key(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(v) => v
            .replace('_', "")
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v} is not valid")),
        Err(_) => default,
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Median ns per operation of `reps` runs of `f`, which performs `ops` operations.
fn time_ns(reps: usize, ops: usize, mut f: impl FnMut() -> u64) -> f64 {
    let samples = (0..reps.max(1))
        .map(|_| {
            let start = Instant::now();
            black_box(f());
            start.elapsed().as_nanos() as f64 / ops as f64
        })
        .collect();
    median(samples)
}

/// A filter under test: built from keys, queried one key at a time. Every implementation
/// marks `contains` `#[inline(always)]`, so that each filter's query is compiled into the
/// timing loop (`count_present`) as it would be in a user's loop.
trait Subject: Sized {
    fn build(keys: &[u64], fpp: f64) -> Self;
    fn contains(&self, key: u64) -> bool;
    fn memory_bytes(&self) -> usize;
    /// `contains` of every key into `out`, when the filter has a batch call.
    fn batch(&self, _keys: &[u64], _out: &mut Vec<bool>) -> bool {
        false
    }
    /// The filter built by its batch insert, when it has one.
    fn build_batch(_keys: &[u64], _fpp: f64) -> Option<Self> {
        None
    }
    /// Bits per item k, when the filter has one.
    fn hashes(&self) -> Option<u32> {
        None
    }
    /// Inserts the filter refused while being built (a kind that can be full).
    fn refused(&self) -> u64 {
        0
    }
    /// Whether the filter forgets items by design (false negatives are its nature).
    fn forgets() -> bool {
        false
    }
}

/// Every other kind of the registry through its own type (`Registered::with_capacity`,
/// `Filter::try_insert`, `Filter::contains` of the `u64` key), so that the Pareto figure has
/// every kind; the classic, blocked, split-block and cuckoo filters have their own subjects
/// above (with their integer fast paths).
struct Registry<F>(F, u64);
impl<F: Registered> Subject for Registry<F> {
    fn build(keys: &[u64], fpp: f64) -> Self {
        let mut f = F::with_capacity(keys.len() as u64, fpp).unwrap();
        let refused = keys.iter().filter(|k| f.try_insert(*k).is_err()).count();
        Self(f, refused as u64)
    }
    #[inline(always)]
    fn contains(&self, key: u64) -> bool {
        self.0.contains(&key)
    }
    fn memory_bytes(&self) -> usize {
        self.0.memory_bytes()
    }
    fn refused(&self) -> u64 {
        self.1
    }
    fn forgets() -> bool {
        F::ABILITIES.forgets
    }
}

/// bloomkit's blocked filter on its `u64` fast path, sized by `S`.
struct BlockedFast<S>(BlockedBloomFilter, std::marker::PhantomData<S>);

/// How a blocked subject is sized for n keys at ε.
trait BlockedSize {
    fn empty(keys: &[u64], fpp: f64) -> BlockedBloomFilter;
}

/// `with_capacity(n, ε)`, as a user sizes it.
struct AtEps;
impl BlockedSize for AtEps {
    fn empty(keys: &[u64], fpp: f64) -> BlockedBloomFilter {
        BlockedBloomFilter::with_capacity(keys.len() as u64, fpp).unwrap()
    }
}

/// sbbf-rs-safe's memory (the blocked filter's bits per key at ε rounded up to whole bits,
/// as `SbbfSameMemory` takes them) and the best k for that size: the point that answers the
/// peer at its own bits per key in the same run (at ε = 1%: 11 bits per key, where
/// `with_capacity` takes 10.1).
struct SbbfMemory;
impl BlockedSize for SbbfMemory {
    fn empty(keys: &[u64], fpp: f64) -> BlockedBloomFilter {
        let n = keys.len() as u64;
        BlockedBloomFilter::builder()
            .capacity(n)
            .num_bits(sbbf_same_memory_bits_per_key(keys.len(), fpp) as u64 * n)
            .build()
            .unwrap()
    }
}

impl<S: BlockedSize> Subject for BlockedFast<S> {
    fn build(keys: &[u64], fpp: f64) -> Self {
        let mut f = S::empty(keys, fpp);
        for &k in keys {
            f.insert_u64(k);
        }
        Self(f, std::marker::PhantomData)
    }
    fn build_batch(keys: &[u64], fpp: f64) -> Option<Self> {
        let mut f = S::empty(keys, fpp);
        f.insert_batch_u64(keys);
        Some(Self(f, std::marker::PhantomData))
    }
    #[inline(always)]
    fn contains(&self, key: u64) -> bool {
        self.0.contains_u64(key)
    }
    fn memory_bytes(&self) -> usize {
        self.0.memory_bytes()
    }
    fn batch(&self, keys: &[u64], out: &mut Vec<bool>) -> bool {
        self.0.contains_batch_u64(keys, out);
        true
    }
    fn hashes(&self) -> Option<u32> {
        Some(self.0.num_hashes())
    }
}

struct BlockedItem(BlockedBloomFilter);
impl Subject for BlockedItem {
    fn build(keys: &[u64], fpp: f64) -> Self {
        let mut f = BlockedBloomFilter::with_capacity(keys.len() as u64, fpp).unwrap();
        for k in keys {
            f.insert(k);
        }
        Self(f)
    }
    fn build_batch(keys: &[u64], fpp: f64) -> Option<Self> {
        let mut f = BlockedBloomFilter::with_capacity(keys.len() as u64, fpp).unwrap();
        f.insert_batch(keys);
        Some(Self(f))
    }
    #[inline(always)]
    fn contains(&self, key: u64) -> bool {
        self.0.contains(&key)
    }
    fn memory_bytes(&self) -> usize {
        self.0.memory_bytes()
    }
    fn batch(&self, keys: &[u64], out: &mut Vec<bool>) -> bool {
        self.0.contains_batch_into(keys, out);
        true
    }
    fn hashes(&self) -> Option<u32> {
        Some(self.0.num_hashes())
    }
}

struct SplitBlock(SplitBlockBloomFilter);
impl Subject for SplitBlock {
    fn build(keys: &[u64], fpp: f64) -> Self {
        let mut f = SplitBlockBloomFilter::with_capacity(keys.len() as u64, fpp).unwrap();
        for &k in keys {
            f.insert_u64(k);
        }
        Self(f)
    }
    fn build_batch(keys: &[u64], fpp: f64) -> Option<Self> {
        let mut f = SplitBlockBloomFilter::with_capacity(keys.len() as u64, fpp).unwrap();
        f.insert_batch_u64(keys);
        Some(Self(f))
    }
    #[inline(always)]
    fn contains(&self, key: u64) -> bool {
        self.0.contains_u64(key)
    }
    fn memory_bytes(&self) -> usize {
        self.0.memory_bytes()
    }
    fn batch(&self, keys: &[u64], out: &mut Vec<bool>) -> bool {
        self.0.contains_batch_u64(keys, out);
        true
    }
    fn hashes(&self) -> Option<u32> {
        Some(8)
    }
}

struct Classic(BloomFilter);
impl Subject for Classic {
    fn build(keys: &[u64], fpp: f64) -> Self {
        let mut f = BloomFilter::with_capacity(keys.len() as u64, fpp).unwrap();
        for k in keys {
            f.insert(k);
        }
        Self(f)
    }
    fn build_batch(keys: &[u64], fpp: f64) -> Option<Self> {
        let mut f = BloomFilter::with_capacity(keys.len() as u64, fpp).unwrap();
        f.insert_batch(keys);
        Some(Self(f))
    }
    #[inline(always)]
    fn contains(&self, key: u64) -> bool {
        self.0.contains(&key)
    }
    fn memory_bytes(&self) -> usize {
        self.0.memory_bytes()
    }
    fn batch(&self, keys: &[u64], out: &mut Vec<bool>) -> bool {
        self.0.contains_batch_into(keys, out);
        true
    }
    fn hashes(&self) -> Option<u32> {
        Some(self.0.num_hashes())
    }
}

struct FastBloom(fastbloom::BloomFilter);
impl Subject for FastBloom {
    fn build(keys: &[u64], fpp: f64) -> Self {
        let mut f = fastbloom::BloomFilter::with_false_pos(fpp)
            .seed(&42)
            .expected_items(keys.len());
        for k in keys {
            f.insert(k);
        }
        Self(f)
    }
    #[inline(always)]
    fn contains(&self, key: u64) -> bool {
        self.0.contains(&key)
    }
    fn memory_bytes(&self) -> usize {
        self.0.num_bits() / 8
    }
    fn hashes(&self) -> Option<u32> {
        Some(self.0.num_hashes())
    }
}

fn xxh3(key: u64) -> u64 {
    xxhash_rust::xxh3::xxh3_64(&key.to_le_bytes())
}

/// The blocked filter's bits per key at ε, rounded up to whole bits (sbbf-rs-safe takes
/// an integer `bits_per_key`).
fn sbbf_same_memory_bits_per_key(n: usize, fpp: f64) -> usize {
    let blocked = BlockedBloomFilter::with_capacity(n as u64, fpp).unwrap();
    (blocked.num_bits() as f64 / n as f64).ceil() as usize
}

/// sbbf-rs-safe with the memory of bloomkit's blocked filter at the same ε (its
/// `bits_per_key` is an integer: the blocked filter's bits per key rounded up).
struct SbbfSameMemory(sbbf_rs_safe::Filter);
impl Subject for SbbfSameMemory {
    fn build(keys: &[u64], fpp: f64) -> Self {
        let bits = sbbf_same_memory_bits_per_key(keys.len(), fpp);
        let mut f = sbbf_rs_safe::Filter::new(bits, keys.len());
        for &k in keys {
            f.insert_hash(xxh3(k));
        }
        Self(f)
    }
    #[inline(always)]
    fn contains(&self, key: u64) -> bool {
        self.0.contains_hash(xxh3(key))
    }
    fn memory_bytes(&self) -> usize {
        self.0.as_bytes().len()
    }
    fn hashes(&self) -> Option<u32> {
        Some(8)
    }
}

/// The FPR of a split-block filter (Parquet's: 256-bit blocks of eight 32-bit words, one bit
/// per word) at `bits_per_key`, by the Putze et al. sum with the split block's own in-block
/// rate `(1 − (1 − 1/32)^i)^8`.
fn sbbf_fpr(bits_per_key: f64) -> f64 {
    let lambda = 256.0 / bits_per_key;
    let (mut ln_p, mut sum) = (-lambda, 0.0);
    for i in 1..(lambda * 4.0 + 60.0) as u64 {
        ln_p += lambda.ln() - (i as f64).ln();
        sum += ln_p.exp() * (1.0 - (1.0 - 1.0 / 32.0f64).powi(i as i32)).powi(8);
    }
    sum
}

/// sbbf-rs-safe with the fewest whole bits per key that meet ε by its own formula.
struct SbbfMeetsEps(sbbf_rs_safe::Filter);
impl Subject for SbbfMeetsEps {
    fn build(keys: &[u64], fpp: f64) -> Self {
        let bits = (1..64).find(|&b| sbbf_fpr(b as f64) <= fpp).unwrap_or(64);
        let mut f = sbbf_rs_safe::Filter::new(bits, keys.len());
        for &k in keys {
            f.insert_hash(xxh3(k));
        }
        Self(f)
    }
    #[inline(always)]
    fn contains(&self, key: u64) -> bool {
        self.0.contains_hash(xxh3(key))
    }
    fn memory_bytes(&self) -> usize {
        self.0.as_bytes().len()
    }
    fn hashes(&self) -> Option<u32> {
        Some(8)
    }
}

struct BloomfilterCrate(bloomfilter::Bloom<u64>);
impl Subject for BloomfilterCrate {
    fn build(keys: &[u64], fpp: f64) -> Self {
        let mut f =
            bloomfilter::Bloom::new_for_fp_rate_with_seed(keys.len(), fpp, &[7; 32]).unwrap();
        for k in keys {
            f.set(k);
        }
        Self(f)
    }
    #[inline(always)]
    fn contains(&self, key: u64) -> bool {
        self.0.check(&key)
    }
    fn memory_bytes(&self) -> usize {
        (self.0.len() / 8) as usize
    }
    fn hashes(&self) -> Option<u32> {
        Some(self.0.number_of_hash_functions())
    }
}

struct Fuse8(xorf::BinaryFuse8);
impl Subject for Fuse8 {
    fn build(keys: &[u64], _fpp: f64) -> Self {
        Self(xorf::BinaryFuse8::try_from(keys).unwrap())
    }
    #[inline(always)]
    fn contains(&self, key: u64) -> bool {
        self.0.contains(&key)
    }
    fn memory_bytes(&self) -> usize {
        self.0.fingerprints.len()
    }
}

/// xorf's Xor8 (Graf & Lemire, "Xor Filters", JEA 2020): three cells anywhere in a table
/// of 1.23·n 8-bit fingerprints, the layout bloomkit's Bloomier filter had first.
struct XorFilter8(xorf::Xor8);
impl Subject for XorFilter8 {
    fn build(keys: &[u64], _fpp: f64) -> Self {
        Self(xorf::Xor8::from(keys))
    }
    #[inline(always)]
    fn contains(&self, key: u64) -> bool {
        self.0.contains(&key)
    }
    fn memory_bytes(&self) -> usize {
        self.0.fingerprints.len()
    }
}

/// bloomkit's Bloomier filter in membership mode (no value bits, c check bits): in its
/// default fuse layout the same kind of table as xorf's BinaryFuse8, about 1.125·c bits per
/// key at large n.
struct Bloomier(bloomkit::BloomierFilter);
impl Subject for Bloomier {
    fn build(keys: &[u64], fpp: f64) -> Self {
        Self(bloomkit::BloomierFilter::membership(keys, fpp).unwrap())
    }
    #[inline(always)]
    fn contains(&self, key: u64) -> bool {
        self.0.contains(&key)
    }
    fn memory_bytes(&self) -> usize {
        self.0.memory_bytes()
    }
}

/// The Bloomier filter with 8-bit fingerprints whatever ε, like BinaryFuse8.
struct Bloomier8(bloomkit::BloomierFilter);
impl Subject for Bloomier8 {
    fn build(keys: &[u64], _fpp: f64) -> Self {
        let b = bloomkit::BloomierFilter::builder()
            .value_bits(0)
            .check_bits(8);
        Self(b.build(keys.iter().map(|k| (k, 0))).unwrap())
    }
    #[inline(always)]
    fn contains(&self, key: u64) -> bool {
        self.0.contains(&key)
    }
    fn memory_bytes(&self) -> usize {
        self.0.memory_bytes()
    }
}

/// The same in the first layout (three segments of equal length, 1.23 cells per key), to
/// compare the layouts in one run.
struct Bloomier8ThreeSegments(bloomkit::BloomierFilter);
impl Subject for Bloomier8ThreeSegments {
    fn build(keys: &[u64], _fpp: f64) -> Self {
        let b = bloomkit::BloomierFilter::builder()
            .value_bits(0)
            .check_bits(8)
            .layout(bloomkit::BloomierLayout::ThreeSegments);
        Self(b.build(keys.iter().map(|k| (k, 0))).unwrap())
    }
    #[inline(always)]
    fn contains(&self, key: u64) -> bool {
        self.0.contains(&key)
    }
    fn memory_bytes(&self) -> usize {
        self.0.memory_bytes()
    }
}

/// bloomkit's cuckoo filter sized for the keys at ε (fingerprint width from ε, any number
/// of buckets); the second field counts failed inserts (none expected at capacity).
struct BloomkitCuckoo(bloomkit::CuckooFilter, u64);
impl Subject for BloomkitCuckoo {
    fn build(keys: &[u64], fpp: f64) -> Self {
        let mut f = bloomkit::CuckooFilter::with_capacity(keys.len(), fpp).unwrap();
        let mut failed = 0;
        for k in keys {
            failed += f.insert(k).is_err() as u64;
        }
        Self(f, failed)
    }
    fn build_batch(keys: &[u64], fpp: f64) -> Option<Self> {
        let mut f = bloomkit::CuckooFilter::with_capacity(keys.len(), fpp).unwrap();
        let refused = match f.insert_batch(keys) {
            Ok(_) => 0,
            Err(_) => keys.len() as u64 - bloomkit::Filter::len(&f),
        };
        Some(Self(f, refused))
    }
    #[inline(always)]
    fn contains(&self, key: u64) -> bool {
        bloomkit::Filter::contains(&self.0, &key)
    }
    fn batch(&self, keys: &[u64], out: &mut Vec<bool>) -> bool {
        self.0.contains_batch_into(keys, out);
        true
    }
    fn memory_bytes(&self) -> usize {
        bloomkit::Filter::memory_bytes(&self.0)
    }
    fn refused(&self) -> u64 {
        self.1
    }
}

struct Cuckoo(
    cuckoofilter::CuckooFilter<std::collections::hash_map::DefaultHasher>,
    u64,
);
impl Subject for Cuckoo {
    fn build(keys: &[u64], _fpp: f64) -> Self {
        let mut f = cuckoofilter::CuckooFilter::with_capacity(keys.len());
        let mut failed = 0;
        for k in keys {
            failed += f.add(k).is_err() as u64;
        }
        Self(f, failed)
    }
    #[inline(always)]
    fn contains(&self, key: u64) -> bool {
        self.0.contains(&key)
    }
    fn memory_bytes(&self) -> usize {
        self.0.memory_usage()
    }
}

struct Growable(growable_bloom_filter::GrowableBloom, f64);
impl Subject for Growable {
    fn build(keys: &[u64], fpp: f64) -> Self {
        let mut f = growable_bloom_filter::GrowableBloom::new(fpp, keys.len());
        for k in keys {
            f.insert(k);
        }
        Self(f, fpp)
    }
    #[inline(always)]
    fn contains(&self, key: u64) -> bool {
        self.0.contains(key)
    }
    fn memory_bytes(&self) -> usize {
        // The crate exposes no size. n items fill exactly its first stage, which its own
        // sizing makes ⌈log₂(1/ε)⌉ slices of ⌈n / ln 2⌉ bits.
        // (One stage: the capacity is the n it was created for, and it never grew.)
        let slices = (1.0 / self.1).log2().ceil();
        let slice_bits = (self.0.capacity() as f64 / std::f64::consts::LN_2).ceil();
        (slices * slice_bits / 8.0).ceil() as usize
    }
}

/// One row of the table.
struct Row {
    name: String,
    bits_per_key: f64,
    k: Option<u32>,
    insert: f64,
    batch_insert: Option<f64>,
    positive: f64,
    negative: f64,
    batch_positive: Option<f64>,
    batch_negative: Option<f64>,
    floor: f64,
    floor_small_pages: f64,
    fpr: f64,
    /// Inserted keys the filter answers "absent" for (kinds that forget, refused inserts).
    missed: u64,
    note: String,
}

struct Setup {
    n: usize,
    present: Vec<u64>,
    positive: Vec<u64>,
    negative: Vec<u64>,
    reps: usize,
    insert_reps: usize,
}

/// Q random 64-byte reads from a buffer of `bytes` bytes, in one loop: ns per read. With
/// `huge_pages`, the buffer is allocated as the filters allocate theirs
/// (`bloomkit::arch::zeroed_vec`, which advises transparent huge pages past 2 MiB); without,
/// as a plain vector (4 KiB pages where THP is in `madvise` mode).
fn floor_ns(bytes: usize, queries: &[u64], reps: usize, huge_pages: bool) -> f64 {
    let lines = bytes.div_ceil(64).max(1);
    // Written, so that every page is really mapped (a zeroed allocation may share a page).
    let buffer: Vec<u64> = if huge_pages {
        let mut v: Vec<u64> = bloomkit::arch::zeroed_vec(lines * 8).unwrap();
        for (i, w) in v.iter_mut().enumerate() {
            *w = i as u64 | 1;
        }
        v
    } else {
        (0..lines as u64 * 8).map(|i| i | 1).collect()
    };
    let index: Vec<usize> = queries
        .iter()
        .map(|&q| (((q as u128 * lines as u128) >> 64) as usize) * 8)
        .collect();
    time_ns(reps, index.len(), || {
        let mut sum = 0u64;
        for &i in &index {
            sum = sum.wrapping_add(buffer[i]);
        }
        sum
    })
}

/// The timed query loop, compiled on its own for each filter (`inline(never)`), so that
/// what the compiler does with it does not depend on the rest of `run`: left inside `run`,
/// the same blocked filter's queries measured 3.6 or 4.6 ns depending on unrelated code
/// there.
#[inline(never)]
fn count_present<S: Subject>(filter: &S, keys: &[u64]) -> u64 {
    keys.iter().filter(|&&k| filter.contains(k)).count() as u64
}

fn run<S: Subject>(name: &str, setup: &Setup, fpp: f64, note: impl Fn(&S) -> String) -> Row {
    let mut filter = None;
    let insert = time_ns(setup.insert_reps, setup.n, || {
        filter = None; // free the previous one first
        filter = Some(S::build(&setup.present, fpp));
        1
    });
    let filter = filter.unwrap();
    let count = |keys: &[u64]| count_present(&filter, keys);
    let positive = time_ns(setup.reps, setup.positive.len(), || count(&setup.positive));
    let negative = time_ns(setup.reps, setup.negative.len(), || count(&setup.negative));
    // bloomkit's filters must never miss; a peer that does (cuckoofilter 0.5 drops an item
    // when an insert fails) is reported in the note rather than stopping the run.
    let missed = setup.positive.len() as u64 - count(&setup.positive);
    assert!(
        missed == 0 || !name.starts_with("bloomkit") || S::forgets() || filter.refused() > 0,
        "{name}: {missed} false negatives"
    );
    let false_positives = count(&setup.negative);
    let mut out = Vec::with_capacity(setup.negative.len());
    let (batch_positive, batch_negative) = if filter.batch(&setup.positive[..1], &mut out) {
        let mut batch = |keys: &[u64]| {
            time_ns(setup.reps, keys.len(), || {
                filter.batch(keys, &mut out);
                out.iter().filter(|&&b| b).count() as u64
            })
        };
        let p = batch(&setup.positive);
        let q = batch(&setup.negative);
        filter.batch(&setup.negative, &mut out);
        assert_eq!(
            out.iter().filter(|&&b| b).count() as u64,
            false_positives,
            "{name}: batch answers differ"
        );
        (Some(p), Some(q))
    } else {
        (None, None)
    };
    let batch_insert = S::build_batch(&setup.present[..1], fpp).map(|_| {
        let mut built = None;
        let ns = time_ns(setup.insert_reps, setup.n, || {
            built = None;
            built = S::build_batch(&setup.present, fpp);
            1
        });
        let built = built.expect("a batch build");
        let answers = |f: &S| setup.positive.iter().filter(|&&k| f.contains(k)).count();
        assert_eq!(
            answers(&built),
            answers(&filter),
            "{name}: batch build differs"
        );
        ns
    });
    let memory = filter.memory_bytes();
    let floor = floor_ns(memory, &setup.negative, setup.reps, true);
    let floor_small_pages = floor_ns(memory, &setup.negative, setup.reps, false);
    let row = Row {
        name: name.to_string(),
        bits_per_key: memory as f64 * 8.0 / setup.n as f64,
        k: filter.hashes(),
        insert,
        batch_insert,
        positive,
        negative,
        batch_positive,
        batch_negative,
        floor,
        floor_small_pages,
        fpr: false_positives as f64 / setup.negative.len() as f64,
        missed,
        note: {
            let mut text = note(&filter);
            let mut add = |more: String| {
                text = if text.is_empty() {
                    more
                } else {
                    format!("{text}; {more}")
                }
            };
            if filter.refused() > 0 {
                add(format!("{} inserts refused", filter.refused()));
            }
            if missed > 0 && S::forgets() {
                add(format!("{missed} forgotten (by design)"));
            } else if missed > 0 {
                add(format!("{missed} FALSE NEGATIVES"));
            }
            text
        },
    };
    eprintln!(
        "  {name}: insert {:.1} ns, +query {:.1} ns, -query {:.1} ns, floor {:.1} ns, fpr {:.5}",
        row.insert, row.positive, row.negative, row.floor, row.fpr
    );
    row
}

fn opt(v: Option<f64>) -> String {
    v.map_or("—".into(), |x| format!("{x:.1}"))
}

fn ratio(v: Option<f64>, floor: f64) -> String {
    v.map_or("—".into(), |x| format!("{:.2}", x / floor))
}

fn print_table(fpp: f64, setup: &Setup, rows: &[Row]) {
    println!();
    println!(
        "### n = {}, ε = {fpp}, {} queries, median of {} runs ({} for inserts)",
        setup.n,
        setup.negative.len(),
        setup.reps,
        setup.insert_reps
    );
    println!();
    println!(
        "| filter | bits/key | k | insert ns | batch insert ns | +query ns | −query ns | batch + ns | batch − ns \
         | floor ns | floor 4K ns | +/floor | −/floor | batch −/floor | measured FPR | FPR/ε | note |"
    );
    println!(
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
    );
    for r in rows {
        println!(
            "| {} | {:.2} | {} | {:.1} | {} | {:.1} | {:.1} | {} | {} | {:.1} | {:.1} | {:.2} | {:.2} | {} | {:.5} | {:.2} | {} |",
            r.name,
            r.bits_per_key,
            r.k.map_or("—".into(), |k| k.to_string()),
            r.insert,
            opt(r.batch_insert),
            r.positive,
            r.negative,
            opt(r.batch_positive),
            opt(r.batch_negative),
            r.floor,
            r.floor_small_pages,
            r.positive / r.floor,
            r.negative / r.floor,
            ratio(r.batch_negative, r.floor),
            r.fpr,
            r.fpr / fpp,
            r.note
        );
    }
}

fn main() {
    // BLOOMKIT_BENCH_FROM_CSV=report/bench/peers-n100000000.csv: redraw that run's figure
    // (next to the CSV) without measuring.
    if let Ok(csv) = std::env::var("BLOOMKIT_BENCH_FROM_CSV") {
        let path = std::path::Path::new(&csv);
        let (n, rows) = read_csv(path);
        let eps: f64 = env_or("BLOOMKIT_BENCH_PARETO_EPS", 0.01);
        let dir = path.parent().unwrap_or(std::path::Path::new("."));
        write_svg(dir, n, eps, &rows).unwrap_or_else(|e| panic!("writing to {dir:?}: {e}"));
        return;
    }
    // `cargo bench` passes `--bench`; `cargo test --benches` runs the binary without it:
    // then only check that it builds and runs on a tiny size.
    let benching = std::env::args().any(|a| a == "--bench");
    let n: usize = if benching {
        env_or("BLOOMKIT_BENCH_N", 1_000_000)
    } else {
        10_000
    };
    let queries: usize = env_or("BLOOMKIT_BENCH_QUERIES", n.min(1_000_000));
    let big = n > 10_000_000;
    let reps: usize = env_or("BLOOMKIT_BENCH_REPEAT", if big { 3 } else { 5 });
    let insert_reps = if big { 1 } else { reps };
    let fpps: Vec<f64> = std::env::var("BLOOMKIT_BENCH_FPP")
        .unwrap_or_else(|_| "0.01,0.001".into())
        .split(',')
        .map(|s| {
            s.trim()
                .parse()
                .expect("BLOOMKIT_BENCH_FPP: comma-separated numbers")
        })
        .collect();
    let only: Vec<String> = std::env::var("BLOOMKIT_BENCH_ONLY")
        .map(|s| s.split(',').map(|x| x.trim().to_string()).collect())
        .unwrap_or_default();
    let wanted = |name: &str| only.is_empty() || only.iter().any(|o| name.contains(o.as_str()));

    eprintln!("generating {n} keys and {queries} queries");
    let present: Vec<u64> = (0..n as u64).map(key).collect();
    // Inserted keys in an order unrelated to insertion: a stride through all of them.
    let stride = 0x9e37_79b9u64 | 1;
    let positive: Vec<u64> = (0..queries as u64)
        .map(|j| present[((j.wrapping_mul(stride)) % n as u64) as usize])
        .collect();
    let negative: Vec<u64> = (n as u64..(n + queries) as u64).map(key).collect();
    let setup = Setup {
        n,
        present,
        positive,
        negative,
        reps,
        insert_reps,
    };

    println!(
        "## Peers: n = {n}; bloomkit kernels: {}; huge pages: {}; built {}",
        bloomkit::arch::simd_level().name(),
        if bloomkit::arch::huge_pages_enabled() {
            "advised"
        } else {
            "off"
        },
        if cfg!(target_feature = "avx2") {
            "with AVX2 enabled at compile time (target-cpu)"
        } else {
            "for baseline x86-64 (as a user gets it)"
        }
    );
    let mut all_rows: Vec<(f64, Row)> = Vec::new();
    for &fpp in &fpps {
        eprintln!("ε = {fpp}");
        let mut rows = Vec::new();
        macro_rules! subject {
            ($name:expr, $t:ty) => {
                subject!($name, $t, |_: &$t| String::new())
            };
            ($name:expr, $t:ty, $note:expr) => {
                if wanted($name) {
                    rows.push(run::<$t>($name, &setup, fpp, $note));
                }
            };
        }
        subject!(
            "bloomkit blocked (u64 fast path)",
            BlockedFast<AtEps>,
            |f: &BlockedFast<AtEps>| {
                format!(
                    "theory {:.5}",
                    fpp_blocked(f.0.num_blocks(), BLOCK_BITS, f.0.num_hashes(), n as u64)
                )
            }
        );
        subject!("bloomkit blocked (Item path)", BlockedItem);
        subject!(
            "bloomkit blocked (sbbf-rs's memory)",
            BlockedFast<SbbfMemory>,
            |f: &BlockedFast<SbbfMemory>| {
                format!(
                    "k = {}; theory {:.5}",
                    f.0.num_hashes(),
                    fpp_blocked(f.0.num_blocks(), BLOCK_BITS, f.0.num_hashes(), n as u64)
                )
            }
        );
        subject!(
            "bloomkit sbbf (u64 fast path)",
            SplitBlock,
            |f: &SplitBlock| { format!("theory {:.5}", f.0.fpp_at_capacity()) }
        );
        subject!("bloomkit classic", Classic, |f: &Classic| {
            format!("m = {}", f.0.num_bits())
        });
        subject!("fastbloom 0.17", FastBloom);
        subject!("sbbf-rs-safe 0.3 (same memory)", SbbfSameMemory);
        subject!("sbbf-rs-safe 0.3 (meets ε)", SbbfMeetsEps);
        subject!("bloomfilter 3", BloomfilterCrate, |f: &BloomfilterCrate| {
            format!("m = {}", f.0.len())
        });
        subject!("xorf BinaryFuse8 0.13", Fuse8, |_: &Fuse8| {
            "static; ε fixed ≈ 1/256".into()
        });
        subject!("xorf Xor8 0.13", XorFilter8, |_: &XorFilter8| {
            "static; ε fixed ≈ 1/256".into()
        });
        subject!(
            "bloomkit bloomier (membership, 8 bits)",
            Bloomier8,
            |_: &Bloomier8| { "static; ε fixed = 1/256".into() }
        );
        subject!(
            "bloomkit bloomier (membership, 8 bits, three segments)",
            Bloomier8ThreeSegments,
            |_: &Bloomier8ThreeSegments| { "static; first layout; ε fixed = 1/256".into() }
        );
        subject!(
            "bloomkit bloomier (membership, meets ε)",
            Bloomier,
            |f: &Bloomier| { format!("static; c = {} check bits", f.0.check_bits()) }
        );
        subject!("bloomkit cuckoo", BloomkitCuckoo, |f: &BloomkitCuckoo| {
            format!(
                "f = {} bits, {} buckets; {} inserts failed",
                f.0.fingerprint_bits(),
                f.0.num_buckets(),
                f.1
            )
        });
        subject!("cuckoofilter 0.5", Cuckoo, |f: &Cuckoo| {
            format!("ε fixed (8-bit fingerprints); {} inserts failed", f.1)
        });
        subject!("growable-bloom-filter 2", Growable, |_: &Growable| {
            "bits/key from its sizing formula".into()
        });
        macro_rules! registry {
            ($($t:ty),*) => {$(
                let name = format!("bloomkit {}", <$t as Registered>::ABILITIES.name);
                subject!(name.as_str(), Registry<$t>);
            )*};
        }
        registry!(
            CountingBloomFilter,
            VariableIncrementBloomFilter,
            DeletableBloomFilter,
            ScalableBloomFilter,
            StableBloomFilter,
            SpectralBloomFilter,
            WeightedBloomFilter,
            GeneralizedBloomFilter,
            CompressedBloomFilter,
            RobustBloomFilter
        );
        print_table(fpp, &setup, &rows);
        all_rows.extend(rows.into_iter().map(|r| (fpp, r)));
    }
    if let Ok(dir) = std::env::var("BLOOMKIT_BENCH_OUT") {
        let eps: f64 = env_or("BLOOMKIT_BENCH_PARETO_EPS", 0.01);
        write_pareto(std::path::Path::new(&dir), n, eps, &all_rows)
            .unwrap_or_else(|e| panic!("writing to {dir}: {e}"));
    }
}

/// Writes `peers-n{n}.csv` (every row of every ε) and `pareto-n{n}.svg`: ns per query (the
/// slower of positive and negative single queries) against bits per key, for every row
/// whose *measured* FPR is at most `eps` and that found every inserted key (so not the
/// kinds that forget), one polyline per filter, sorted by bits per key.
/// The SVG is written by hand (lines, circles, text): no font is needed to lay it out.
fn write_pareto(
    dir: &std::path::Path,
    n: usize,
    eps: f64,
    rows: &[(f64, Row)],
) -> std::io::Result<()> {
    use std::fmt::Write as _;
    std::fs::create_dir_all(dir)?;
    let mut csv = String::from(
        "n,requested_fpp,filter,bits_per_key,insert_ns,batch_insert_ns,positive_ns,negative_ns,\
         batch_positive_ns,batch_negative_ns,floor_ns,floor_4k_ns,measured_fpr,missed\n",
    );
    for (fpp, r) in rows {
        let o = |v: Option<f64>| v.map_or(String::new(), |x| format!("{x:.2}"));
        writeln!(
            csv,
            "{n},{fpp},\"{}\",{:.4},{:.2},{},{:.2},{:.2},{},{},{:.2},{:.2},{:.6},{}",
            r.name,
            r.bits_per_key,
            r.insert,
            o(r.batch_insert),
            r.positive,
            r.negative,
            o(r.batch_positive),
            o(r.batch_negative),
            r.floor,
            r.floor_small_pages,
            r.fpr,
            r.missed
        )
        .unwrap();
    }
    std::fs::write(dir.join(format!("peers-n{n}.csv")), csv)?;
    write_svg(dir, n, eps, rows)
}

/// The rows of a `peers-n{n}.csv` this bench wrote (the columns the figure needs; the
/// others are zero), with their n: to redraw a figure without measuring again.
fn read_csv(path: &std::path::Path) -> (usize, Vec<(f64, Row)>) {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("a header line").split(',').collect();
    let column = |name: &str| header.iter().position(|h| *h == name);
    let at = |name: &str| column(name).unwrap_or_else(|| panic!("no column {name}"));
    let mut n = 0;
    let rows = lines
        .map(|line| {
            // The filter's name is quoted (it may hold commas); nothing else is.
            let (before, rest) = line.split_once(",\"").expect("a quoted name");
            let (name, after) = rest.split_once("\",").expect("a quoted name");
            let f: Vec<&str> = before
                .split(',')
                .chain([name])
                .chain(after.split(','))
                .collect();
            let num = |name: &str| f[at(name)].parse::<f64>().expect("a number");
            n = num("n") as usize;
            let row = Row {
                name: f[at("filter")].to_string(),
                bits_per_key: num("bits_per_key"),
                k: None,
                insert: num("insert_ns"),
                batch_insert: None,
                positive: num("positive_ns"),
                negative: num("negative_ns"),
                batch_positive: None,
                batch_negative: None,
                floor: num("floor_ns"),
                floor_small_pages: num("floor_4k_ns"),
                fpr: num("measured_fpr"),
                missed: column("missed").map_or(0, |i| f[i].parse().expect("a count")),
                note: String::new(),
            };
            (num("requested_fpp"), row)
        })
        .collect();
    (n, rows)
}

/// Draws `pareto-n{n}.svg` from the rows (see [`write_pareto`]).
fn write_svg(
    dir: &std::path::Path,
    n: usize,
    eps: f64,
    rows: &[(f64, Row)],
) -> std::io::Result<()> {
    use std::fmt::Write as _;

    let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for (_, r) in rows.iter().filter(|(_, r)| r.fpr <= eps && r.missed == 0) {
        let point = (r.bits_per_key, r.positive.max(r.negative));
        match series.iter_mut().find(|(name, _)| *name == r.name) {
            Some((_, points)) => points.push(point),
            None => series.push((r.name.clone(), vec![point])),
        }
    }
    for (_, points) in &mut series {
        points.sort_by(|a, b| a.partial_cmp(b).unwrap());
    }
    // Both axes logarithmic: the kinds span 4 to 230 bits per key and 3 to 350 ns, and the
    // region where the fast filters compete (8–20 bits, 2–40 ns) must not be squeezed into
    // a corner by the counting kinds.
    let points = series.iter().flat_map(|(_, p)| p.iter().copied());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, 0.0f64, f64::MAX, 0.0f64);
    for (x, y) in points {
        (x0, x1, y0, y1) = (x0.min(x), x1.max(x), y0.min(y), y1.max(y));
    }
    if series.is_empty() {
        (x0, x1, y0, y1) = (1.0, 10.0, 1.0, 10.0);
    }
    let (lx0, lx1) = ((x0 / 1.1).log10(), (x1 * 1.1).log10());
    let (ly0, ly1) = ((y0 / 1.2).log10(), (y1 * 1.2).log10());
    let (w, h, left, right, top, bottom) = (1000.0, 640.0, 70.0, 330.0, 40.0, 60.0);
    let px = |x: f64| left + (x.log10() - lx0) / (lx1 - lx0) * (w - left - right);
    let py = |y: f64| h - bottom - (y.log10() - ly0) / (ly1 - ly0) * (h - top - bottom);
    // 1, 2, 3, 5 × 10^d inside [10^lo, 10^hi] (a range of one decade or so still gets a
    // tick every few tenths of its height; the ends with a little slack for rounding).
    let ticks = |lo: f64, hi: f64| -> Vec<f64> {
        (lo.floor() as i32..=hi.ceil() as i32)
            .flat_map(|d| [1.0, 2.0, 3.0, 5.0].map(|m| m * 10f64.powi(d)))
            .filter(|v| (lo - 1e-9..=hi + 1e-9).contains(&v.log10()))
            .collect()
    };
    let colors = [
        "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
        "#bcbd22", "#17becf", "#000000",
    ];
    // A marker per series: the colour cycles, and the shape changes with each cycle, so
    // that no two series look alike.
    let marker = |i: usize, x: f64, y: f64| {
        let c = colors[i % colors.len()];
        match (i / colors.len()) % 3 {
            0 => format!("<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"4\" fill=\"{c}\"/>"),
            1 => format!(
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"8\" height=\"8\" fill=\"{c}\"/>",
                x - 4.0,
                y - 4.0
            ),
            _ => format!(
                "<polygon points=\"{x:.1},{:.1} {:.1},{:.1} {:.1},{:.1}\" fill=\"{c}\"/>",
                y - 5.0,
                x - 5.0,
                y + 4.0,
                x + 5.0,
                y + 4.0
            ),
        }
    };
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" \
         font-family=\"sans-serif\" font-size=\"13\">\n<rect width=\"100%\" height=\"100%\" \
         fill=\"white\"/>\n<text x=\"{left}\" y=\"24\" font-size=\"16\">n = {n}: ns per query \
         (slower of ± single queries) vs bits per key, log scales, measured FPR ≤ {eps}</text>\n"
    );
    let (bx, by) = (h - bottom, w - right);
    writeln!(
        svg,
        "<line x1=\"{left}\" y1=\"{bx}\" x2=\"{by}\" y2=\"{bx}\" stroke=\"black\"/>"
    )
    .unwrap();
    writeln!(
        svg,
        "<line x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" y2=\"{bx}\" stroke=\"black\"/>"
    )
    .unwrap();
    for x in ticks(lx0, lx1) {
        writeln!(
            svg,
            "<text x=\"{0:.1}\" y=\"{1:.1}\" text-anchor=\"middle\">{x}</text>\
             <line x1=\"{0:.1}\" y1=\"{top}\" x2=\"{0:.1}\" y2=\"{bx}\" stroke=\"#eee\"/>",
            px(x),
            bx + 18.0
        )
        .unwrap();
    }
    for y in ticks(ly0, ly1) {
        writeln!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{y}</text>\
             <line x1=\"{left}\" y1=\"{2:.1}\" x2=\"{by}\" y2=\"{2:.1}\" stroke=\"#ddd\"/>",
            left - 6.0,
            py(y) + 4.0,
            py(y)
        )
        .unwrap();
    }
    writeln!(
        svg,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">bits per key</text>",
        (left + by) / 2.0,
        h - 15.0
    )
    .unwrap();
    writeln!(svg, "<text x=\"18\" y=\"{:.1}\" transform=\"rotate(-90 18 {0:.1})\" text-anchor=\"middle\">ns per query</text>", (top + bx) / 2.0).unwrap();
    for (i, (name, points)) in series.iter().enumerate() {
        let c = colors[i % colors.len()];
        let path: Vec<String> = points
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
            .collect();
        writeln!(
            svg,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{c}\" stroke-width=\"1.5\"/>",
            path.join(" ")
        )
        .unwrap();
        for &(x, y) in points {
            writeln!(svg, "{}", marker(i, px(x), py(y))).unwrap();
        }
        let ly = top + 20.0 * i as f64 + 10.0;
        writeln!(
            svg,
            "{}<text x=\"{:.1}\" y=\"{:.1}\">{name}</text>",
            marker(i, by + 20.0, ly),
            by + 30.0,
            ly + 4.0
        )
        .unwrap();
    }
    svg.push_str("</svg>\n");
    std::fs::write(dir.join(format!("pareto-n{n}.svg")), svg)
}
