//! The sub-filters' slots, and what is kept about them in memory only: how many slots of
//! each sub-filter are in use, and a bitset of the sub-filters that still have a free slot.
//!
//! An insert takes the first free slot of its two buckets in the newest sub-filter that has
//! one. A full sub-filter has none in any bucket, so the search may pass it without looking:
//! [`SubFilters::open_newest_first`] walks the bitset down a 64-bit word at a time. A filter
//! grown to its 65535 sub-filters by one item (`CF.RESERVE cf 2 BUCKETSIZE 1 EXPANSION 1`,
//! then 140000 × the same item: RedisBloom 2.4's flow test) has every sub-filter but the
//! newest full, and each insert read all of them before: quadratic, 20–50 s for that
//! command; the bitset leaves 1024 words per insert to read.
//!
//! Nothing here is saved (an RDB record, a dump and a bloomkit file hold the slots alone):
//! a sub-filter counts its slots in use when it is made ([`SubFilter::with_data`]). The
//! slots are private to this module, where two functions write them: [`SubFilters::set`]
//! (one slot) and [`SubFilters::write_with`] (a run of slots); both keep the count and the
//! bit, so no path that changes a slot — insert, eviction and its rollback, delete,
//! compaction, `CF.LOADCHUNK`, clear — can leave them behind. The cost: 8 bytes per
//! sub-filter for the count and 1 bit for the bitset, beside the 32 of its struct and
//! its slots' allocation. [`memory_bytes`](super::RedisBloomCuckoo::memory_bytes) counts
//! RedisBloom's structs, as `CF.INFO Size` reports them, 16 bytes per sub-filter;
//! [`bookkeeping_bytes`](SubFilters::bookkeeping_bytes) counts the rest of the list's and
//! the bitset's allocations, whose capacities grow by the rule of [`grown`] so that a
//! growth's bytes are known before anything is allocated.

use std::mem::size_of;

use super::{bucket_index, Hashing, Lookup, EMPTY, MAX_NUM_FILTERS, SUBFILTER_STRUCT_BYTES};

/// The capacity a list of capacity `cap` takes to hold `needed` entries: `cap` while it
/// does, else twice `cap` (at least `needed`), at most `max`. Growth by one sub-filter
/// reserves this, so the list of a filter grown to its 65535 sub-filters one at a time is
/// exactly as long as they are (and its bitset 1024 words), as after a load.
pub(super) fn grown(cap: usize, needed: usize, max: usize) -> usize {
    if needed <= cap {
        cap
    } else {
        cap.saturating_mul(2).min(max).max(needed)
    }
}

/// The words of the bitset for `n` sub-filters.
fn words(n: usize) -> usize {
    n.div_ceil(64)
}

/// The bytes of a list of `cap` sub-filters holding `len`, and a bitset of `word_cap` words,
/// beyond RedisBloom's 16 per sub-filter.
fn list_bytes_beyond(cap: usize, len: usize, word_cap: usize) -> u64 {
    (cap * size_of::<SubFilter>() + word_cap * size_of::<u64>()) as u64
        - SUBFILTER_STRUCT_BYTES * len as u64
}

/// One sub-filter: `num_buckets` buckets of `bucket_size` one-byte slots.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubFilter {
    num_buckets: u64,
    data: Vec<u8>,
    /// Slots not [`EMPTY`]: counted when made, kept by the writes of [`SubFilters`].
    used: u64,
}

/// The slots in use among `slots`.
fn count_used(slots: &[u8]) -> u64 {
    slots.iter().filter(|&&s| s != EMPTY).count() as u64
}

impl SubFilter {
    /// An empty sub-filter. The caller has checked its size against the memory limit (an
    /// allocation Redis cannot serve aborts the server, so the limit is the only guard);
    /// the zeroed allocation lets the allocator hand out fresh pages without writing them.
    pub(super) fn zeroed(num_buckets: u64, bucket_size: u16) -> Option<Self> {
        let len = usize::try_from(num_buckets.checked_mul(bucket_size as u64)?).ok()?;
        Some(Self {
            num_buckets,
            data: vec![EMPTY; len],
            used: 0,
        })
    }

    /// A sub-filter of these slots (read from a record or dump): counts those in use.
    pub(super) fn with_data(num_buckets: u64, data: Vec<u8>) -> Self {
        let used = count_used(&data);
        Self {
            num_buckets,
            data,
            used,
        }
    }

    /// The number of buckets.
    pub fn num_buckets(&self) -> u64 {
        self.num_buckets
    }

    /// The slots, bucket after bucket.
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// The slots in use.
    pub fn used_slots(&self) -> u64 {
        self.used
    }

    /// Whether any slot is free.
    fn is_open(&self) -> bool {
        self.used < self.data.len() as u64
    }

    #[inline]
    fn bucket_range(&self, hash: u64, bucket_size: u16) -> std::ops::Range<usize> {
        let start = (bucket_index(hash, self.num_buckets) * bucket_size as u64) as usize;
        start..start + bucket_size as usize
    }

    fn bucket(&self, hash: u64, bucket_size: u16) -> &[u8] {
        &self.data[self.bucket_range(hash, bucket_size)]
    }

    /// Whether either bucket holds the fingerprint. A plain loop over the few slots: a
    /// bucket is 1 to 255 bytes, 2 by default, where `<[u8]>::contains` calls `memchr` with
    /// its set-up for long inputs (callgrind, `CF.INSERTNX` of 4 items: 18 instructions per
    /// item fewer with the loop).
    #[allow(clippy::manual_contains)]
    pub(super) fn contains(&self, p: &Lookup, bs: u16) -> bool {
        let has = |h| self.bucket(h, bs).iter().any(|&s| s == p.fp);
        has(p.h1) || has(p.h2)
    }

    /// Copies of the fingerprint in the item's two buckets; with `once`, a bucket that is
    /// both of them is counted once (RedisBloom 2.0), else twice (2.2 and later).
    pub(super) fn count(&self, p: &Lookup, bs: u16, once: bool) -> u64 {
        let count = |b: &[u8]| b.iter().filter(|&&s| s == p.fp).count() as u64;
        let first = count(self.bucket(p.h1, bs));
        if once && bucket_index(p.h1, self.num_buckets) == bucket_index(p.h2, self.num_buckets) {
            return first;
        }
        first + count(self.bucket(p.h2, bs))
    }

    /// What [`contains`](Self::contains) and [`find_available`](Self::find_available) answer
    /// together, with the two buckets located once: whether either holds the fingerprint,
    /// else the first free slot of the first bucket, else of the second (`CF.ADDNX` and
    /// `CF.INSERTNX` ask both of every sub-filter).
    #[allow(clippy::manual_contains)]
    #[inline(always)]
    pub(super) fn scan(&self, p: &Lookup, bs: u16) -> (bool, Option<usize>) {
        let (first, second) = (self.bucket_range(p.h1, bs), self.bucket_range(p.h2, bs));
        let (a, b) = (&self.data[first.clone()], &self.data[second.clone()]);
        if a.iter().any(|&s| s == p.fp) || b.iter().any(|&s| s == p.fp) {
            return (true, None);
        }
        let free = match a.iter().position(|&s| s == EMPTY) {
            Some(i) => Some(first.start + i),
            None => b.iter().position(|&s| s == EMPTY).map(|i| second.start + i),
        };
        (false, free)
    }

    /// The index of a free slot in the item's first bucket, else its second.
    pub(super) fn find_available(&self, p: &Lookup, bs: u16) -> Option<usize> {
        [p.h1, p.h2].into_iter().find_map(|h| {
            let range = self.bucket_range(h, bs);
            let start = range.start;
            self.data[range]
                .iter()
                .position(|&s| s == EMPTY)
                .map(|i| start + i)
        })
    }

    /// The index of a slot holding the fingerprint, in the item's first bucket, else its
    /// second.
    fn find(&self, p: &Lookup, bs: u16) -> Option<usize> {
        [p.h1, p.h2].into_iter().find_map(|h| {
            let range = self.bucket_range(h, bs);
            let start = range.start;
            self.data[range]
                .iter()
                .position(|&s| s == p.fp)
                .map(|i| start + i)
        })
    }
}

/// The sub-filters, oldest first, with the bitset of those that have a free slot.
///
/// Invariants, kept by every method that changes a slot ([`set`](Self::set) and
/// [`write_with`](Self::write_with)) or the list: each sub-filter's `used` is its slots
/// not [`EMPTY`]; bit j of `open` is set exactly when sub-filter j has a free slot (no bit
/// past the last sub-filter); `slots` is the sum of the sub-filters' slots.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub(super) struct SubFilters {
    list: Vec<SubFilter>,
    /// Bit j % 64 of word j / 64: sub-filter j has a free slot.
    open: Vec<u64>,
    /// Slots in all sub-filters.
    slots: u64,
}

impl SubFilters {
    /// The sub-filters, oldest first.
    pub(super) fn as_slice(&self) -> &[SubFilter] {
        &self.list
    }

    pub(super) fn len(&self) -> usize {
        self.list.len()
    }

    /// Sub-filter `j`.
    pub(super) fn get(&self, j: usize) -> &SubFilter {
        &self.list[j]
    }

    /// Slots in all sub-filters.
    pub(super) fn num_slots(&self) -> u64 {
        self.slots
    }

    /// Room for `n` more sub-filters, or an error if it cannot be had.
    pub(super) fn try_reserve_exact(&mut self, n: usize) -> Result<(), ()> {
        let words = words(self.list.len() + n).saturating_sub(self.open.len());
        self.list.try_reserve_exact(n).map_err(|_| ())?;
        self.open.try_reserve_exact(words).map_err(|_| ())
    }

    /// The list's and the bitset's capacities once there is room for one more sub-filter
    /// ([`grown`]).
    fn capacities_for_one_more(&self) -> (usize, usize) {
        let n = self.list.len() + 1;
        (
            grown(self.list.capacity(), n, MAX_NUM_FILTERS),
            grown(self.open.capacity(), words(n), words(MAX_NUM_FILTERS)),
        )
    }

    /// Room for one more sub-filter, as [`bookkeeping_bytes_with_one_more`](Self::bookkeeping_bytes_with_one_more)
    /// counts it, or an error if it cannot be had (what was had is kept, and counted).
    pub(super) fn reserve_one(&mut self) -> Result<(), ()> {
        let (list, open) = self.capacities_for_one_more();
        self.list
            .try_reserve_exact(list - self.list.len())
            .map_err(|_| ())?;
        self.open
            .try_reserve_exact(open - self.open.len())
            .map_err(|_| ())
    }

    /// What the list and the bitset hold beyond RedisBloom's 16 bytes per sub-filter: the
    /// list's whole allocation (each entry a [`SubFilter`]: buckets, the slots' `Vec`, the
    /// count of slots in use; spare capacity included) less 16 per sub-filter, and the
    /// bitset's words (spare capacity included).
    pub(super) fn bookkeeping_bytes(&self) -> u64 {
        list_bytes_beyond(self.list.capacity(), self.list.len(), self.open.capacity())
    }

    /// [`bookkeeping_bytes`](Self::bookkeeping_bytes) after [`reserve_one`](Self::reserve_one)
    /// and a push: known before either allocates.
    pub(super) fn bookkeeping_bytes_with_one_more(&self) -> u64 {
        let (list, open) = self.capacities_for_one_more();
        list_bytes_beyond(list, self.list.len() + 1, open)
    }

    /// [`bookkeeping_bytes`](Self::bookkeeping_bytes) of `n` sub-filters in a list and a
    /// bitset reserved for exactly them (a filter made or loaded whole).
    pub(super) fn bookkeeping_bytes_exact(n: usize) -> u64 {
        list_bytes_beyond(n, n, words(n))
    }

    /// Sets bit `j` of the bitset to whether sub-filter `j` has a free slot.
    #[inline]
    fn mark(&mut self, j: usize) {
        let bit = 1u64 << (j % 64);
        if self.list[j].is_open() {
            self.open[j / 64] |= bit;
        } else {
            self.open[j / 64] &= !bit;
        }
    }

    /// Adds a newest sub-filter.
    pub(super) fn push(&mut self, f: SubFilter) {
        let j = self.list.len();
        self.slots += f.data.len() as u64;
        self.list.push(f);
        if j.is_multiple_of(64) {
            self.open.push(0);
        }
        self.mark(j);
    }

    /// Drops the newest sub-filter.
    pub(super) fn pop(&mut self) {
        let Some(f) = self.list.pop() else {
            return;
        };
        self.slots -= f.data.len() as u64;
        let j = self.list.len();
        self.open[j / 64] &= !(1u64 << (j % 64));
        if j.is_multiple_of(64) {
            self.open.pop();
        }
    }

    /// Keeps the `n` oldest sub-filters.
    pub(super) fn truncate(&mut self, n: usize) {
        while self.list.len() > n {
            self.pop();
        }
    }

    /// Writes `fp` into slot `at` of sub-filter `j` and returns what it held: the one write
    /// of a single slot.
    #[inline]
    pub(super) fn set(&mut self, j: usize, at: usize, fp: u8) -> u8 {
        let f = &mut self.list[j];
        let old = std::mem::replace(&mut f.data[at], fp);
        if (old == EMPTY) != (fp == EMPTY) {
            if fp == EMPTY {
                f.used -= 1;
            } else {
                f.used += 1;
            }
            self.mark(j);
        }
        old
    }

    /// Lets `write` change the slots `range` of sub-filter `j` (a chunk loaded, a filter
    /// cleared), counting them before and after: the one write of a run of slots.
    pub(super) fn write_with(
        &mut self,
        j: usize,
        range: std::ops::Range<usize>,
        write: impl FnOnce(&mut [u8]),
    ) {
        let f = &mut self.list[j];
        let before = count_used(&f.data[range.clone()]);
        write(&mut f.data[range.clone()]);
        f.used = f.used - before + count_used(&f.data[range]);
        self.mark(j);
    }

    /// The sub-filters from the newest down to `lowest` that have a free slot (those a
    /// newest-first search for one can find it in), newest first.
    #[inline]
    pub(super) fn open_newest_first(&self, lowest: usize) -> impl Iterator<Item = usize> + '_ {
        // Words still to read: those below `next`.
        let mut next = self.list.len().div_ceil(64);
        let (mut base, mut word) = (0, 0u64);
        std::iter::from_fn(move || {
            while word == 0 {
                if next == 0 || next * 64 <= lowest {
                    return None;
                }
                next -= 1;
                base = next * 64;
                word = self.open[next];
            }
            let bit = 63 - word.leading_zeros() as usize;
            word ^= 1 << bit;
            let j = base + bit;
            if j < lowest {
                (next, word) = (0, 0);
                return None;
            }
            Some(j)
        })
    }

    /// The sub-filters older than `below` that have a free slot, oldest first.
    pub(super) fn open_oldest_first(&self, below: usize) -> impl Iterator<Item = usize> + '_ {
        let words = below.min(self.list.len()).div_ceil(64);
        let (mut next, mut base, mut word) = (0, 0, 0u64);
        std::iter::from_fn(move || {
            while word == 0 {
                if next >= words {
                    return None;
                }
                base = next * 64;
                word = self.open[next];
                next += 1;
            }
            let j = base + word.trailing_zeros() as usize;
            word &= word - 1;
            if j >= below {
                (next, word) = (words, 0);
                return None;
            }
            Some(j)
        })
    }

    /// Removes one copy of the fingerprint from the item's buckets of sub-filter `j`
    /// (the first bucket's first, else the second's): whether it held one.
    pub(super) fn remove(&mut self, j: usize, p: &Lookup, bs: u16) -> bool {
        match self.list[j].find(p, bs) {
            Some(at) => {
                self.set(j, at, EMPTY);
                true
            }
            None => false,
        }
    }

    /// Evicts fingerprints along the item's cuckoo path in sub-filter `j`, up to
    /// `max_iterations` times; when that fails, walks the path back so that the table is as
    /// it was.
    pub(super) fn kick_insert(
        &mut self,
        j: usize,
        p: &Lookup,
        bs: u16,
        max_iterations: u16,
        hashing: Hashing,
    ) -> bool {
        let n = self.list[j].num_buckets;
        let bs64 = bs as u64;
        let mut fp = p.fp;
        let mut victim = 0u64;
        let mut index = bucket_index(p.h1, n);
        for _ in 0..max_iterations {
            fp = self.set(j, (index * bs64 + victim) as usize, fp);
            index = bucket_index(hashing.alt(fp, index), n);
            let start = (index * bs64) as usize;
            let free = self.list[j].data[start..start + bs as usize]
                .iter()
                .position(|&s| s == EMPTY);
            if let Some(i) = free {
                self.set(j, start + i, fp);
                return true;
            }
            victim = (victim + 1) % bs64;
        }
        for _ in 0..max_iterations {
            victim = (victim + bs64 - 1) % bs64;
            index = bucket_index(hashing.alt(fp, index), n);
            fp = self.set(j, (index * bs64 + victim) as usize, fp);
        }
        false
    }

    /// Whether the kept counts, bitset and slot total are what the slots give (tests).
    #[cfg(test)]
    pub(super) fn bookkeeping_holds(&self) -> bool {
        let mut open = vec![0u64; self.list.len().div_ceil(64)];
        for (j, f) in self.list.iter().enumerate() {
            if f.used != count_used(&f.data) {
                return false;
            }
            if count_used(&f.data) < f.data.len() as u64 {
                open[j / 64] |= 1 << (j % 64);
            }
        }
        open == self.open
            && self.slots == self.list.iter().map(|f| f.data.len() as u64).sum::<u64>()
    }
}
