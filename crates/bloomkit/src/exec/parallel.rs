//! Inserting many items on all cores (cargo feature `rayon`).
//!
//! * [`BloomFilter::insert_parallel`] inserts a slice on rayon's thread pool and gives
//!   exactly what inserting the items one after another would: the same bits *and* the
//!   same count of inserts that changed the filter. `BloomFilter` also implements rayon's
//!   [`ParallelExtend`] (the parallel [`Extend`]), through it.
//! * [`ConcurrentBloomFilter::insert_parallel`] inserts any parallel iterator into a filter
//!   that other threads may be using at the same time, through its atomic bit array.
//!
//! # How the classic filter is filled in parallel
//!
//! Random writes into a bit array larger than the caches are what a Bloom filter build
//! costs: one cache (and often TLB) miss per bit. Two threads setting bits in one shared
//! atomic array halve the misses per thread but pay for an atomic read-modify-write per
//! bit; one private array per thread, merged by OR, avoids the atomics but multiplies the
//! memory and the misses (each private array is as large as the filter) and loses the
//! count. This module instead *partitions the work by bit range*, in batches of items:
//!
//! 1. **Hash** (parallel over groups of items): each item's k positions become entries
//!    `(item index, offset in region)`, sorted by region with a counting sort — the filter
//!    is cut into regions of at most 2²² bits (512 KiB, half of a common L2 cache).
//! 2. **Set** (parallel over regions): each region is owned by one thread, which replays
//!    the region's entries in item order with plain (non-atomic) writes that hit the
//!    cache, and marks the items that set a bit from 0 to 1.
//!
//! Within a region the entries are applied in the items' order, so an item sets a bit
//! from 0 to 1 in the parallel build exactly when it would in the sequential one; an item
//! changes the filter when it does so in any region. Hence the count, too, is the
//! sequential one, whatever the number of threads.
//!
//! Measured on the 2-core development machine (`cargo bench -p bloomkit --features rayon
//! --bench parallel`, 10⁷ u64 keys, ε = 1%, 12 MB filter; see the bench file for the
//! numbers), this was as fast as per-thread shards and clearly faster than the atomic
//! array, without shards' extra memory.
//!
//! ```
//! use bloomkit::BloomFilter;
//!
//! let words: Vec<String> = (0..100_000).map(|i| format!("word{i}")).collect();
//! let mut parallel = BloomFilter::with_capacity(100_000, 0.01)?;
//! parallel.insert_parallel(&words);
//!
//! let mut sequential = BloomFilter::with_capacity(100_000, 0.01)?;
//! sequential.extend(&words);
//! assert_eq!(parallel, sequential); // the same bits and the same count
//! # Ok::<(), bloomkit::Error>(())
//! ```

use rayon::prelude::*;

use crate::bloom::BloomFilter;
use crate::concurrent::ConcurrentBloomFilter;
use crate::hash::{Hashing, Item};

/// log₂ of the largest region in bits: 2²² bits = 512 KiB, half of a common L2 cache, so a
/// region stays cached while its entries stream past.
const MAX_REGION_SHIFT: u32 = 22;
/// log₂ of the smallest region (8 KiB): smaller ones cost more bookkeeping than they save.
const MIN_REGION_SHIFT: u32 = 16;
/// At most this many regions, so that per-group counters stay small and an offset within
/// a region fits in 32 bits even at the largest filter (2⁴⁰ bits / 2¹⁰ = 2³⁰).
const MAX_REGIONS: u64 = 1 << 10;
/// Entries (one per item and hash function) held in memory at once: 16 MiB.
const BATCH_ENTRIES: usize = 1 << 21;
/// Entries produced by one task of the hashing phase (256 KiB).
const TASK_ENTRIES: usize = 1 << 15;

/// How a filter's bits are cut into regions, and what an item hashes to.
struct Partition {
    hashing: Hashing,
    num_hashes: u32,
    num_bits: u64,
    /// A region is `1 << shift` bits.
    shift: u32,
    regions: usize,
}

impl Partition {
    fn new(filter: &BloomFilter, threads: usize) -> Self {
        let num_bits = filter.num_bits();
        // A few regions per thread, each at most MAX_REGION_SHIFT, at most MAX_REGIONS.
        let wanted = (num_bits / (4 * threads.max(1) as u64)).max(1);
        let mut shift = wanted.ilog2().clamp(MIN_REGION_SHIFT, MAX_REGION_SHIFT);
        while num_bits.div_ceil(1 << shift) > MAX_REGIONS {
            shift += 1;
        }
        Self {
            hashing: filter.hashing,
            num_hashes: filter.num_hashes,
            num_bits,
            shift,
            regions: num_bits.div_ceil(1 << shift) as usize,
        }
    }

    /// Phase 1 for one group of items, the first of which has index `first` in its batch:
    /// writes their entries, `index << 32 | offset in region`, into `out` (k per item)
    /// grouped by region and in item order within a region. Returns where each region's
    /// entries start in `out` (and, last, their end).
    fn hash<I: Item>(
        &self,
        items: &[I],
        first: usize,
        out: &mut [u64],
        positions: &mut Vec<u64>,
    ) -> Vec<u32> {
        positions.clear();
        let mut starts = vec![0u32; self.regions + 1];
        for item in items {
            item.with_bytes(|bytes| {
                for p in self
                    .hashing
                    .positions(bytes, self.num_hashes, self.num_bits)
                {
                    starts[(p >> self.shift) as usize + 1] += 1;
                    positions.push(p);
                }
            });
        }
        for r in 0..self.regions {
            starts[r + 1] += starts[r];
        }
        let mut next = starts.clone();
        let in_region = (1u64 << self.shift) - 1;
        for (j, item_positions) in positions.chunks_exact(self.num_hashes as usize).enumerate() {
            let index = ((first + j) as u64) << 32;
            for &p in item_positions {
                let slot = &mut next[(p >> self.shift) as usize];
                out[*slot as usize] = index | (p & in_region);
                *slot += 1;
            }
        }
        starts
    }
}

/// Phase 2 for region `region`, whose words are `words`: sets the bits of its entries from
/// every group, in order, and returns a bitmap of the batch's items that set a bit from 0
/// to 1 here.
fn set_region(
    words: &mut [u64],
    region: usize,
    groups: &[(&[u64], Vec<u32>)],
    items: usize,
) -> Vec<u64> {
    let mut changed = vec![0u64; items.div_ceil(64)];
    for (entries, starts) in groups {
        let (mut flag_word, mut flags) = (0usize, 0u64);
        for &entry in &entries[starts[region] as usize..starts[region + 1] as usize] {
            let (index, offset) = ((entry >> 32) as usize, entry & 0xffff_ffff);
            let word = &mut words[(offset >> 6) as usize];
            let mask = 1u64 << (offset & 63);
            let was_clear = *word & mask == 0;
            *word |= mask;
            // Entries come in item order: gather an item's flag in a register until the
            // items move on to the next flag word (no branch on the bit's old value).
            if index >> 6 != flag_word {
                changed[flag_word] |= flags;
                (flag_word, flags) = (index >> 6, 0);
            }
            flags |= u64::from(was_clear) << (index & 63);
        }
        if let Some(word) = changed.get_mut(flag_word) {
            *word |= flags;
        }
    }
    changed
}

impl BloomFilter {
    /// Inserts every item on rayon's thread pool and returns how many inserts changed the
    /// filter. The result — bits and count — is exactly that of inserting the items one
    /// after another (see the [module docs](crate::parallel) for how).
    ///
    /// ```
    /// use bloomkit::BloomFilter;
    /// let mut filter = BloomFilter::with_capacity(10_000, 0.01)?;
    /// let items: Vec<u64> = (0..10_000).collect();
    /// filter.insert_parallel(&items);
    /// assert!(items.iter().all(|i| filter.contains(i)));
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn insert_parallel<I: Item + Sync>(&mut self, items: &[I]) -> u64 {
        let partition = Partition::new(self, rayon::current_num_threads());
        let k = self.num_hashes as usize;
        // Huge pages for a large array that these inserts write most pages of (the policy,
        // in `arch`), as the batch insert does.
        self.bits
            .advise_bulk_write((items.len() as u64).saturating_mul(k as u64));
        let (batch_items, group_items) = ((BATCH_ENTRIES / k).max(1), (TASK_ENTRIES / k).max(1));
        let region_words = 1usize << (partition.shift - 6);
        let mut entries = vec![0u64; items.len().min(batch_items) * k];
        let mut changed = 0;
        for batch in items.chunks(batch_items) {
            let entries = &mut entries[..batch.len() * k];
            let starts: Vec<Vec<u32>> = batch
                .par_chunks(group_items)
                .zip(entries.par_chunks_mut(group_items * k))
                .enumerate()
                .map_init(Vec::new, |positions, (g, (items, out))| {
                    partition.hash(items, g * group_items, out, positions)
                })
                .collect();
            let groups: Vec<(&[u64], Vec<u32>)> =
                entries.chunks(group_items * k).zip(starts).collect();
            let flags = self
                .bits
                .words_mut()
                .par_chunks_mut(region_words)
                .enumerate()
                .map(|(region, words)| set_region(words, region, &groups, batch.len()))
                .reduce_with(|mut a, b| {
                    a.iter_mut().zip(&b).for_each(|(a, b)| *a |= b);
                    a
                });
            let batch_changed: u64 =
                flags.map_or(0, |f| f.iter().map(|w| u64::from(w.count_ones())).sum());
            // Counted batch by batch, so that a panic in an item's hashing leaves a count
            // that matches the bits.
            self.inserted += batch_changed;
            changed += batch_changed;
        }
        changed
    }
}

impl ConcurrentBloomFilter {
    /// Inserts every item of a parallel iterator on rayon's thread pool, through the atomic
    /// bit array, and returns how many inserts changed the filter. Other threads may insert
    /// and query meanwhile; the count is as described in the [`concurrent`](crate::concurrent)
    /// module docs.
    pub fn insert_parallel<T>(&self, items: T) -> u64
    where
        T: IntoParallelIterator,
        T::Item: Item,
    {
        let changed = items
            .into_par_iter()
            .filter(|item| self.insert_uncounted(item))
            .count() as u64;
        self.add_inserted(changed);
        changed
    }
}

/// `filter.par_extend(parallel_iterator)`: collects the items, then
/// [`BloomFilter::insert_parallel`] (exactly the sequential result).
impl<I: Item + Send + Sync> ParallelExtend<I> for BloomFilter {
    fn par_extend<T: IntoParallelIterator<Item = I>>(&mut self, items: T) {
        let items: Vec<I> = items.into_par_iter().collect();
        self.insert_parallel(&items);
    }
}

/// `filter.par_extend(parallel_iterator)`: [`ConcurrentBloomFilter::insert_parallel`].
impl<I: Item + Send> ParallelExtend<I> for ConcurrentBloomFilter {
    fn par_extend<T: IntoParallelIterator<Item = I>>(&mut self, items: T) {
        self.insert_parallel(items);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::Filter;
    use crate::hash::{HashFunction, IndexScheme};

    fn words(n: u64) -> Vec<Vec<u8>> {
        (0..n)
            .map(|i| format!("{i:x}-{}", i % 7).into_bytes())
            .collect()
    }

    /// The parallel insert takes the batch insert's huge-page policy: a thousand items into
    /// a filter reserved for 10⁸ are not advised; enough to write two bits per 4 KiB page
    /// of a 12 MiB array are (when huge pages are on).
    #[test]
    fn a_parallel_insert_advises_huge_pages_only_when_it_writes_most_pages() {
        use crate::arch::{advised_on_this_thread, huge_pages_enabled};
        let mut reserved = BloomFilter::with_capacity(100_000_000, 0.01).unwrap();
        let before = advised_on_this_thread();
        reserved.insert_parallel(&words(1_000));
        assert_eq!(advised_on_this_thread(), before);
        let mut built = BloomFilter::with_capacity(10_000_000, 0.01).unwrap();
        let pages = (built.memory_bytes() as u64).div_ceil(4096);
        built.insert_parallel(&words(2 * pages / u64::from(built.num_hashes()) + 1));
        let advised = advised_on_this_thread() - before;
        if huge_pages_enabled() {
            assert!(advised >= 3 << 21, "{advised}");
        } else {
            assert_eq!(advised, 0);
        }
    }

    fn on_threads<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(f)
    }

    /// Bits and count equal to the sequential build, for one region (tiny filter), many
    /// regions, several batches (k = 64 makes a batch 32 768 items) and both schemes, on
    /// pools of 1 to 4 threads; duplicates make some inserts change nothing.
    #[test]
    fn parallel_insertion_gives_exactly_the_sequential_filter_and_count() {
        let items: Vec<Vec<u8>> = words(70_000).into_iter().chain(words(5_000)).collect();
        let shapes = [(1_000, 3), (700_000, 7), (3_000_000, 64), (1 << 17, 1)];
        for (num_bits, num_hashes) in shapes {
            for scheme in [
                IndexScheme::EnhancedDoubleHashing,
                IndexScheme::SeededHashes,
            ] {
                if scheme == IndexScheme::SeededHashes && num_hashes == 64 {
                    continue; // 64 hashes per item: slow and adds nothing
                }
                let empty = BloomFilter::builder()
                    .num_bits(num_bits)
                    .num_hashes(num_hashes)
                    .hash_function(HashFunction::Xxh3)
                    .index_scheme(scheme)
                    .seed(3)
                    .build()
                    .unwrap();
                let mut sequential = empty.clone();
                sequential.extend(&items);
                for threads in 1..=4 {
                    let mut parallel = empty.clone();
                    let changed = on_threads(threads, || parallel.insert_parallel(&items));
                    assert_eq!(changed, Filter::len(&sequential));
                    assert!(
                        parallel == sequential,
                        "m = {num_bits}, k = {num_hashes}, {scheme:?}, {threads} threads"
                    );
                }
            }
        }
    }

    #[test]
    fn parallel_insertion_adds_to_what_was_there() {
        let mut sequential = BloomFilter::with_capacity(20_000, 0.01).unwrap();
        let mut parallel = sequential.clone();
        let (first, second) = (words(10_000), words(15_000));
        sequential.extend(&first);
        sequential.extend(&second);
        parallel.insert_parallel(&first);
        let before = Filter::len(&parallel);
        assert_eq!(
            parallel.insert_parallel(&second),
            Filter::len(&sequential) - before
        );
        assert_eq!(parallel, sequential);
        assert_eq!(parallel.insert_parallel::<u8>(&[]), 0);
    }

    #[test]
    fn parallel_extend_takes_any_parallel_iterator() {
        let mut filter = BloomFilter::with_capacity(10_000, 0.01).unwrap();
        filter.insert("before");
        filter.par_extend((0..5000u32).into_par_iter());
        let mut expected = BloomFilter::with_capacity(10_000, 0.01).unwrap();
        expected.insert("before");
        expected.extend(0..5000u32);
        assert_eq!(filter, expected);

        let mut concurrent = ConcurrentBloomFilter::from(filter);
        concurrent.par_extend(vec!["x", "y"]);
        assert!(concurrent.contains("before") && concurrent.contains("y"));
        assert!((0..5000u32).all(|i| concurrent.contains(&i)));
    }

    /// The concurrent filter's parallel insert goes through the atomic array: the bits are
    /// the sequential ones, the count within its documented bounds.
    #[test]
    fn concurrent_parallel_insertion_sets_the_sequential_bits() {
        let items = words(30_000);
        let mut sequential = BloomFilter::with_capacity(20_000, 0.01).unwrap();
        sequential.extend(&items);
        let concurrent = ConcurrentBloomFilter::with_capacity(20_000, 0.01).unwrap();
        let changed = on_threads(3, || concurrent.insert_parallel(&items));
        assert_eq!(concurrent.len(), changed);
        let k = u64::from(concurrent.num_hashes());
        assert!((concurrent.count_ones().div_ceil(k)..=30_000).contains(&changed));
        assert_eq!(concurrent.into_bloom().bits, sequential.bits);
    }

    #[test]
    fn a_panicking_item_leaves_a_usable_filter_whose_count_matches_its_bits() {
        struct Explosive(u32);
        impl std::hash::Hash for Explosive {
            fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
                assert!(self.0 != 77_777, "boom");
                self.0.hash(state);
            }
        }
        // k = 64: batches of 32 768 items, so the first two batches go in before the panic.
        let mut filter = BloomFilter::builder()
            .num_bits(1 << 22)
            .num_hashes(64)
            .build()
            .unwrap();
        let items: Vec<_> = (0..100_000).map(|i| crate::Hashed(Explosive(i))).collect();
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            filter.insert_parallel(&items);
        }));
        assert!(result.is_err());
        let mut expected = BloomFilter::builder()
            .num_bits(1 << 22)
            .num_hashes(64)
            .build()
            .unwrap();
        expected.extend(&items[..2 * 32_768]);
        assert_eq!(filter, expected);
    }
}
