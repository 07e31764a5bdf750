//! Inserting many items on all cores (cargo feature `rayon`).
//!
//! [`BloomFilter::insert_parallel`] and [`ConcurrentBloomFilter::insert_parallel`] take any
//! rayon parallel iterator (a slice, `par_iter()`, `par_chunks(..).flat_map_iter(..)`, …) and
//! insert its items on rayon's thread pool; both filters also implement rayon's
//! [`ParallelExtend`], the parallel counterpart of [`Extend`].
//!
//! # How
//!
//! The classic filter's words move into an [`AtomicBitVec`](crate::bits::AtomicBitVec) (no
//! copy, no rehash: see [`ConcurrentBloomFilter::from_bloom`]), every worker sets its items'
//! bits with atomic ORs, and the words move back. Setting bits is an OR, which does not
//! depend on order, so the result is bit for bit the filter that inserting the items one
//! after another would have built.
//!
//! The other way to parallelise a Bloom filter build is one private bit array per thread,
//! merged by OR at the end. It avoids the atomic instructions but needs one more copy of
//! the filter per thread and a merge pass over all of them, and it makes the count of
//! changed inserts meaningless (each thread only sees its own bits). Measured on the
//! 2-core machine this crate is developed on (`cargo bench -p bloomkit --features rayon
//! --bench parallel`), the atomic path was as fast or faster in the run recorded in the
//! bench file, so it is the one kept.
//!
//! # The count
//!
//! `len` grows by the number of inserts that set at least one bit from 0 to 1, each bit
//! credited to the one insert whose atomic OR set it first, as in [`ConcurrentBloomFilter`].
//! The bits never depend on the schedule; this count can: it may differ from a sequential
//! pass over the same items by the few items whose bits were set by other threads' items
//! at about the same time (see the [`concurrent`](crate::concurrent) module docs). With a
//! one-thread pool it is exactly the sequential count.
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
//! assert_eq!(parallel.count_ones(), sequential.count_ones());
//! assert!(words.iter().all(|w| parallel.contains(w)));
//! # Ok::<(), bloomkit::Error>(())
//! ```

use rayon::iter::{IntoParallelIterator, ParallelExtend, ParallelIterator};

use crate::bloom::BloomFilter;
use crate::concurrent::ConcurrentBloomFilter;
use crate::hash::Item;

impl ConcurrentBloomFilter {
    /// Inserts every item on rayon's thread pool and returns how many inserts changed the
    /// filter. Other threads may insert and query meanwhile.
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

impl BloomFilter {
    /// Inserts every item on rayon's thread pool and returns how many inserts changed the
    /// filter. The bits are exactly those of inserting the items one by one; for the count,
    /// see the [module docs](crate::parallel).
    ///
    /// ```
    /// use bloomkit::BloomFilter;
    /// let mut filter = BloomFilter::with_capacity(10_000, 0.01)?;
    /// let items: Vec<u64> = (0..10_000).collect();
    /// filter.insert_parallel(&items);
    /// assert!(items.iter().all(|i| filter.contains(i)));
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn insert_parallel<T>(&mut self, items: T) -> u64
    where
        T: IntoParallelIterator,
        T::Item: Item,
    {
        let concurrent = ConcurrentBloomFilter::from_bloom(BloomFilter {
            bits: std::mem::take(&mut self.bits),
            ..*self
        });
        // Put the bits back even if an item's `Hash` implementation panics.
        let restore = Restore {
            filter: self,
            concurrent: Some(concurrent),
        };
        restore
            .concurrent
            .as_ref()
            .map_or(0, |c| c.insert_parallel(items))
    }
}

/// Moves the bits (and the count) of a temporarily concurrent filter back into the
/// classic filter when dropped.
struct Restore<'a> {
    filter: &'a mut BloomFilter,
    concurrent: Option<ConcurrentBloomFilter>,
}

impl Drop for Restore<'_> {
    fn drop(&mut self) {
        if let Some(concurrent) = self.concurrent.take() {
            let back = concurrent.into_bloom();
            self.filter.bits = back.bits;
            self.filter.inserted = back.inserted;
        }
    }
}

/// `filter.par_extend(items.par_iter())`: [`BloomFilter::insert_parallel`].
impl<I: Item + Send> ParallelExtend<I> for BloomFilter {
    fn par_extend<T: IntoParallelIterator<Item = I>>(&mut self, items: T) {
        self.insert_parallel(items);
    }
}

/// `filter.par_extend(items.par_iter())`: [`ConcurrentBloomFilter::insert_parallel`].
impl<I: Item + Send> ParallelExtend<I> for ConcurrentBloomFilter {
    fn par_extend<T: IntoParallelIterator<Item = I>>(&mut self, items: T) {
        self.insert_parallel(items);
    }
}

#[cfg(test)]
mod tests {
    use rayon::prelude::*;

    use super::*;
    use crate::filter::Filter;
    use crate::hash::{HashFunction, IndexScheme};

    fn words(n: u64) -> Vec<Vec<u8>> {
        (0..n)
            .map(|i| format!("{i:x}-{}", i % 7).into_bytes())
            .collect()
    }

    #[test]
    fn parallel_insertion_sets_exactly_the_bits_of_sequential_insertion() {
        let items = words(30_000);
        for scheme in [
            IndexScheme::EnhancedDoubleHashing,
            IndexScheme::SeededHashes,
        ] {
            let build = || {
                BloomFilter::builder()
                    .capacity(20_000)
                    .fpp(0.01)
                    .hash_function(HashFunction::Xxh3)
                    .index_scheme(scheme)
                    .seed(3)
                    .build()
                    .unwrap()
            };
            let mut sequential = build();
            sequential.extend(&items);
            let mut parallel = build();
            let changed = parallel.insert_parallel(&items);
            assert_eq!(parallel.bits, sequential.bits, "{scheme:?}");
            assert_eq!(Filter::len(&parallel), changed);
            // The count differs from the sequential one only by racing inserts.
            let k = u64::from(parallel.num_hashes());
            assert!((parallel.count_ones().div_ceil(k)..=30_000).contains(&changed));
            let seq_len = Filter::len(&sequential);
            assert!(changed.abs_diff(seq_len) <= 300, "{changed} vs {seq_len}");
        }
    }

    #[test]
    fn on_a_one_thread_pool_the_count_is_the_sequential_count() {
        let items = words(5000);
        let mut sequential = BloomFilter::with_capacity(3000, 0.05).unwrap();
        sequential.extend(&items);
        let mut parallel = BloomFilter::with_capacity(3000, 0.05).unwrap();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        pool.install(|| parallel.insert_parallel(&items));
        assert_eq!(parallel, sequential);
    }

    #[test]
    fn parallel_extend_adds_to_what_was_there() {
        let mut filter = BloomFilter::with_capacity(10_000, 0.01).unwrap();
        filter.insert("before");
        filter.par_extend((0..5000u32).into_par_iter());
        let mut concurrent = ConcurrentBloomFilter::from(filter);
        concurrent.par_extend(vec!["x", "y"]);
        assert!(concurrent.contains("before") && concurrent.contains("y"));
        assert!((0..5000u32).all(|i| concurrent.contains(&i)));
        assert!(concurrent.len() >= 4900 && concurrent.len() <= 5003);
    }

    #[test]
    fn a_panicking_item_leaves_the_filter_usable() {
        struct Explosive(u32);
        impl std::hash::Hash for Explosive {
            fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
                assert!(self.0 != 777, "boom");
                self.0.hash(state);
            }
        }
        let mut filter = BloomFilter::with_capacity(1000, 0.01).unwrap();
        let items: Vec<_> = (0..1000).map(|i| crate::Hashed(Explosive(i))).collect();
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            filter.insert_parallel(&items);
        }));
        assert!(result.is_err());
        assert_eq!(filter.num_bits(), 9586);
        assert!(filter.insert("after") || filter.contains("after"));
    }
}
