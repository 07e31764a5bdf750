//! Batch calls on [`AnyFilter`]: many items per call, through the kind's own batch
//! (prefetching) path where it has one — the classic, blocked, split-block, cuckoo,
//! counting, variable-increment, deletable, stable, spectral and generalized filters — and
//! one item at a time otherwise. Bindings that hand over many items at once
//! (the Python package) call these.

use crate::error::Error;
use crate::filter::Filter;
use crate::hash::Item;
use crate::registry::AnyFilter;

impl AnyFilter {
    /// Inserts every item in order, as [`try_insert`](Filter::try_insert) of each would;
    /// returns how many were certainly new. At the first item the filter refuses (a full
    /// cuckoo filter, a scalable filter at its last layer) the error is returned: the items
    /// before it are in, it and the items after it are not.
    ///
    /// ```
    /// use bloomkit::{AnyFilter, Filter, Kind};
    /// for &kind in Kind::ALL {
    ///     let mut filter = AnyFilter::with_capacity(kind, 1_000, 0.01)?;
    ///     let new = filter.insert_batch(&["a", "b", "a"])?;
    ///     assert!(new >= 2, "{kind}");
    ///     let mut answers = Vec::new();
    ///     filter.contains_batch_into(&["a", "b"], &mut answers);
    ///     assert_eq!(answers, [true, true]);
    /// }
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn insert_batch<I: Item>(&mut self, items: &[I]) -> Result<u64, Error> {
        match self {
            AnyFilter::Bloom(f) => Ok(f.insert_batch(items)),
            AnyFilter::Blocked(f) => Ok(f.insert_batch(items)),
            AnyFilter::SplitBlock(f) => Ok(f.insert_batch(items)),
            AnyFilter::Cuckoo(f) => f.insert_batch(items),
            AnyFilter::VariableIncrement(f) => Ok(f.insert_batch(items)),
            AnyFilter::Generalized(f) => Ok(f.insert_batch(items)),
            AnyFilter::Spectral(f) => Ok(f.insert_batch(items)),
            AnyFilter::Stable(f) => Ok(f.insert_batch(items)),
            AnyFilter::Deletable(f) => Ok(f.insert_batch(items)),
            AnyFilter::Counting(f) => Ok(f.insert_batch(items)),
            other => {
                let mut new = 0;
                for item in items {
                    new += u64::from(other.try_insert(item)?);
                }
                Ok(new)
            }
        }
    }

    /// The answers of [`contains`](Filter::contains) for every item, into `out` (cleared
    /// first).
    pub fn contains_batch_into<I: Item>(&self, items: &[I], out: &mut Vec<bool>) {
        match self {
            AnyFilter::Bloom(f) => f.contains_batch_into(items, out),
            AnyFilter::Blocked(f) => f.contains_batch_into(items, out),
            AnyFilter::SplitBlock(f) => {
                out.clear();
                out.extend(f.contains_batch(items));
            }
            AnyFilter::Cuckoo(f) => f.contains_batch_into(items, out),
            AnyFilter::VariableIncrement(f) => f.contains_batch_into(items, out),
            AnyFilter::Generalized(f) => f.contains_batch_into(items, out),
            AnyFilter::Spectral(f) => f.contains_batch_into(items, out),
            AnyFilter::Stable(f) => f.contains_batch_into(items, out),
            AnyFilter::Deletable(f) => f.contains_batch_into(items, out),
            AnyFilter::Counting(f) => f.contains_batch_into(items, out),
            other => {
                out.clear();
                out.extend(items.iter().map(|item| other.contains(item)));
            }
        }
    }

    /// [`insert_batch`](Self::insert_batch) of `u64` keys (each the item `key`, its 8
    /// little-endian bytes), through the integer fast path of the kinds that have one.
    pub fn insert_batch_u64(&mut self, keys: &[u64]) -> Result<u64, Error> {
        match self {
            AnyFilter::Blocked(f) => Ok(f.insert_batch_u64(keys)),
            AnyFilter::SplitBlock(f) => Ok(f.insert_batch_u64(keys)),
            other => other.insert_batch(keys),
        }
    }

    /// [`contains_batch_into`](Self::contains_batch_into) of `u64` keys.
    ///
    /// ```
    /// use bloomkit::{AnyFilter, Filter, Kind};
    /// for &kind in Kind::ALL {
    ///     let mut filter = AnyFilter::with_capacity(kind, 1_000, 0.01)?;
    ///     filter.insert_batch_u64(&[7, 8])?;
    ///     let mut answers = Vec::new();
    ///     filter.contains_batch_u64(&[7, 8], &mut answers);
    ///     assert_eq!(answers, [true, true]);
    ///     assert!(filter.contains(&7u64));
    /// }
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn contains_batch_u64(&self, keys: &[u64], out: &mut Vec<bool>) {
        match self {
            AnyFilter::Blocked(f) => f.contains_batch_u64(keys, out),
            AnyFilter::SplitBlock(f) => f.contains_batch_u64(keys, out),
            other => other.contains_batch_into(keys, out),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{AnyFilter, Filter, Kind, Persist};

    /// Every kind's batch calls leave the filter as the single calls do and give their
    /// answers, for items and for `u64` keys.
    #[test]
    fn batches_match_single_calls_for_every_kind() {
        let words: Vec<String> = (0..3_000).map(|i| format!("w{}", i % 2_000)).collect();
        let keys: Vec<u64> = (0..3_000u64).map(|i| i % 2_000).collect();
        let probes: Vec<String> = (0..4_000).map(|i| format!("w{i}")).collect();
        let probe_keys: Vec<u64> = (0..4_000).collect();
        for &kind in Kind::ALL {
            let mut single = AnyFilter::with_capacity(kind, 10_000, 0.01).unwrap();
            let mut batch = single.clone();
            let mut new = 0;
            for w in &words {
                new += u64::from(single.try_insert(w).unwrap());
            }
            for k in &keys {
                new += u64::from(single.try_insert(k).unwrap());
            }
            let batch_new =
                batch.insert_batch(&words).unwrap() + batch.insert_batch_u64(&keys).unwrap();
            assert_eq!(batch_new, new, "{kind}");
            assert_eq!(batch.len(), single.len(), "{kind}");
            let mut answers = Vec::new();
            batch.contains_batch_into(&probes, &mut answers);
            let expected: Vec<bool> = probes.iter().map(|p| single.contains(p)).collect();
            assert_eq!(answers, expected, "{kind}");
            batch.contains_batch_u64(&probe_keys, &mut answers);
            let expected: Vec<bool> = probe_keys.iter().map(|k| single.contains(k)).collect();
            assert_eq!(answers, expected, "{kind}");
        }
    }

    /// A filter of `kind` whose array spans at least `bytes` (capacities doubled from 2¹⁶).
    fn at_least(kind: Kind, bytes: usize) -> AnyFilter {
        let mut n = 1u64 << 16;
        loop {
            let filter = AnyFilter::with_capacity(kind, n, 0.01).unwrap();
            if filter.memory_bytes() >= bytes {
                return filter;
            }
            n *= 2;
        }
    }

    /// The huge-page policy's batch half: a filter reserved for 10⁸ items that takes a
    /// batch of a thousand is not advised (whatever its kind: the Redis module's large
    /// `BF.RESERVE` filled a few items at a time is this case), and a batch that writes two
    /// cells per 4 KiB page of a large array is, for every kind whose batch insert writes
    /// its own array. `BLOOMKIT_NO_HUGE_PAGES=1`: no advice at all.
    #[test]
    fn a_batch_advises_huge_pages_only_when_it_writes_most_pages_of_a_large_array() {
        use crate::arch::{advised_on_this_thread, huge_pages_enabled, SMALL_PAGE_BYTES};
        let thousand: Vec<u64> = (0..1_000).collect();
        for &kind in Kind::ALL {
            if matches!(kind, Kind::Blocked | Kind::SplitBlock) {
                // Their arrays are written whole, and advised, when they are made.
                continue;
            }
            let mut reserved = AnyFilter::with_capacity(kind, 100_000_000, 0.01).unwrap();
            let before = advised_on_this_thread();
            reserved.insert_batch_u64(&thousand).unwrap();
            assert_eq!(advised_on_this_thread(), before, "{kind}");
        }
        let batched = [
            Kind::Bloom,
            Kind::Counting,
            Kind::VariableIncrement,
            Kind::Deletable,
            Kind::Stable,
            Kind::Cuckoo,
            Kind::Spectral,
            Kind::Generalized,
        ];
        for kind in batched {
            let mut filter = at_least(kind, 8 << 20);
            // Two items per page: at least two cell writes per page for every kind.
            let pages = (filter.memory_bytes() as u64).div_ceil(SMALL_PAGE_BYTES);
            let keys: Vec<u64> = (0..2 * pages + 1).collect();
            let before = advised_on_this_thread();
            filter.insert_batch_u64(&keys).unwrap();
            let advised = advised_on_this_thread() - before;
            if huge_pages_enabled() {
                assert!(advised >= 3 << 21, "{kind}: {advised}");
            } else {
                assert_eq!(advised, 0, "{kind}");
            }
        }
    }

    /// The huge-page policy's decoding half: every kind decodes its array into one advised
    /// to use huge pages when it spans them, since decoding writes it whole (the compressed
    /// filter too: it decodes its coded bits into words, then those as a classic filter's).
    #[test]
    fn decoding_a_large_filter_advises_huge_pages() {
        use crate::arch::{advised_on_this_thread, huge_pages_enabled};
        for &kind in Kind::ALL {
            let filter = at_least(kind, 8 << 20);
            let bytes = filter.to_bytes();
            let before = advised_on_this_thread();
            let back = AnyFilter::from_bytes(&bytes).unwrap();
            let advised = advised_on_this_thread() - before;
            assert_eq!(back.memory_bytes(), filter.memory_bytes(), "{kind}");
            if huge_pages_enabled() {
                assert!(advised >= 3 << 21, "{kind}: {advised}");
            } else {
                assert_eq!(advised, 0, "{kind}");
            }
        }
    }
}
