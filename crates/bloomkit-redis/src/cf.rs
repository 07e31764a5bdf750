//! RedisBloom 2.4's cuckoo filter, byte for byte: one-byte fingerprints, its bucket and
//! alternate-index rules, growth by sub-filters, eviction with rollback, compaction, and
//! the SCANDUMP header and chunks.
//!
//! Why not the library's [`bloomkit::CuckooFilter`] as it is: RedisBloom's filter differs
//! in how it changes — evictions are deterministic (the slot index cycles) and are rolled
//! back instead of using a victim slot, and a full filter grows by adding sub-filters —
//! and a filter made by RedisBloom must grow, evict and answer as there. The library's cuckoo filter of RedisBloom's layout ([`bloomkit::cuckoo::Layout`])
//! holds the same slots for `bloomkit export --to redis`/`import --from redis`; the hash,
//! fingerprint and alternate-index rule are the library's ([`bloomkit::cuckoo::redisbloom_hash`],
//! [`bloomkit::cuckoo::redisbloom_alt_index`]), one copy in the workspace; the growth by
//! sub-filters, the deterministic evictions with rollback and the memory limits are the
//! module's own.
//!
//! Filters that RedisBloom 1.1 to 2.0 wrote (RDB encoding version 3) keep that version's
//! hashing, 32-bit MurmurHash2 with other fingerprint and alternate-index rules: see
//! [`Hashing::Murmur2`], and [`Cuckoo::save`] for how they are saved.

use bloomkit::cuckoo::{redisbloom_alt_index, redisbloom_hash};
use bloomkit::hash::murmur2;

use crate::config::{Limit, Refusal};
use crate::rdb::{Sink, Source};

/// `CF.ADD` on a missing key creates a filter of this capacity.
pub const DEFAULT_CAPACITY: u64 = 1024;
/// Default and limits of the options.
pub const DEFAULT_BUCKET_SIZE: u16 = 2;
/// Default number of evictions before an insert gives up on a sub-filter.
pub const DEFAULT_MAX_ITERATIONS: u16 = 20;
/// Default expansion (sub-filter j has buckets · expansionʲ buckets).
pub const DEFAULT_EXPANSION: u16 = 1;
/// The largest bucket size.
pub const MAX_BUCKET_SIZE: u16 = 255;
/// The largest MAXITERATIONS.
pub const MAX_ITERATIONS: u16 = 65535;
/// The largest EXPANSION.
pub const MAX_EXPANSION: u16 = 32768;

/// The newest RDB encoding version of `MBbloomCF` (2.2 and later: with deletes, bucket
/// size, max iterations, expansion and per-sub-filter bucket counts). Version 3 (RedisBloom
/// 1.1 to 2.0, the only older version any release wrote for cuckoo filters) holds
/// sub-filter count, buckets and items, then the sub-filters' buffers, and its filters
/// hash as [`Hashing::Murmur2`]; versions 0–2 are read the same way.
pub const ENCODING_VERSION: i32 = 4;

/// What `CF.ADD` gave up after in RedisBloom 1.1–2.0 (a constant there, `MAX_ITERATIONS`
/// in `src/cuckoo.c`): the max iterations of a filter loaded from encoding version 3.
pub const LEGACY_MAX_ITERATIONS: u16 = 500;

/// The first field of an encoding-4 record of a [`Hashing::Murmur2`] filter: a sub-filter
/// count of 0, which no filter has. RedisBloom 2.4 refuses such a record (its loader
/// returns no value when the count is 0: Redis stops loading the RDB, RESTORE answers "Bad
/// data format"), and RedisBloom 2.2 reads seven numbers and no sub-filter, after which
/// Redis finds no end-of-value marker and refuses it too. After it come the hashing's id
/// ([`Hashing::id`]) and the record as for any filter.
const HASHING_MARK: u64 = 0;

/// The most buckets a sub-filter may have: RedisBloom stores the count in 56 bits.
pub const MAX_NUM_BUCKETS: u64 = (1 << 56) - 1;
/// The most sub-filters a filter may have: RedisBloom stores the count in 16 bits.
pub const MAX_NUM_FILTERS: usize = u16::MAX as usize;

use bloomkit::interop::redisbloom::CuckooHeader;
/// The size of the SCANDUMP header, and the largest data chunk SCANDUMP returns (the
/// library's: one copy of RedisBloom's layout in the workspace).
pub use bloomkit::interop::redisbloom::{CUCKOO_HEADER_BYTES as HEADER_BYTES, MAX_CHUNK_BYTES};

/// RedisBloom's `sizeof(CuckooFilter)` and `sizeof(SubCF)`, counted by `CF.INFO Size`.
const FILTER_STRUCT_BYTES: u64 = 40;
const SUBFILTER_STRUCT_BYTES: u64 = 16;

/// The empty slot.
const EMPTY: u8 = 0;

/// The result of an insert.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Insert {
    /// Stored.
    Inserted,
    /// Already there (only for unique inserts).
    Exists,
    /// No room, and the filter may not grow (EXPANSION 0).
    NoSpace,
    /// No room, and no sub-filter can be added: there are already 65,535 (RedisBloom's
    /// limit, a 16-bit count) or the next would have more than 2⁵⁶ − 1 buckets (its 56-bit
    /// field). RedisBloom calls this a failed allocation.
    CannotGrow,
    /// Growing would pass a memory limit.
    TooLarge(Refusal),
}

/// Why a filter cannot be created.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CreateError {
    /// Capacity below 2 × bucket size, more than [`MAX_NUM_BUCKETS`] buckets, or a size
    /// that does not fit in memory.
    Invalid,
    /// The filter would pass a memory limit.
    TooLarge(Refusal),
}

/// How a filter maps an item to its fingerprint and buckets. A filter keeps the hashing it
/// was written with: its fingerprints are all that is stored, so it cannot be rehashed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Hashing {
    /// RedisBloom 2.2 and later: `h = MurmurHash64A(item, 0)`, `fp = h mod 255 + 1`,
    /// buckets `h mod n` and `alt(fp, h) mod n`.
    #[default]
    Murmur64A,
    /// RedisBloom 1.1 to 2.0 (`src/cuckoo.h`, `src/cuckoo.c` of its 2.0 branch), the
    /// filters of encoding version 3: `h = MurmurHash2(item, 0)` (32 bits), `fp = h >> 24`
    /// (0 → 7), buckets `h mod n` and `(u32)(i ⊕ fp·0x5bd1e995) mod n`, and `CF.COUNT`
    /// counts an item's bucket once when both of its buckets are one.
    ///
    /// Such a filter also keeps that version's table rules, which decide how it grows (its
    /// sub-filters and memory) but no answer: an insert takes a free slot in the newest
    /// sub-filter only, a delete looks in the oldest sub-filter first, and a compaction goes
    /// on past a sub-filter it cannot empty. No answer depends on them, nor on which
    /// evictions 2.0 made (it chose victims with `rand()`): its sub-filters all have the
    /// first one's bucket count, and under the xor alternate index two items with one
    /// fingerprint have the same pair of buckets or disjoint ones, so what an item's
    /// queries see is the number of copies of its fingerprint in its pair, whichever
    /// sub-filter or bucket of the pair holds them.
    Murmur2,
}

impl Hashing {
    /// The id saved with a [`Hashing::Murmur2`] filter (the RDB record after
    /// `HASHING_MARK`, and the 39th byte of its SCANDUMP header).
    pub fn id(self) -> u8 {
        match self {
            Hashing::Murmur64A => 0,
            Hashing::Murmur2 => 1,
        }
    }

    /// The alternate bucket's hash of a fingerprint in the bucket of `index`.
    #[inline]
    fn alt(self, fp: u8, index: u64) -> u64 {
        match self {
            Hashing::Murmur64A => alt_hash(fp, index),
            Hashing::Murmur2 => (index as u32 ^ (fp as u32).wrapping_mul(0x5bd1_e995)) as u64,
        }
    }
}

/// An item's lookup parameters: its hash, the alternate hash, and its fingerprint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lookup {
    h1: u64,
    h2: u64,
    fp: u8,
}

impl Lookup {
    /// An item's parameters under a hashing (see [`Hashing`]).
    #[inline]
    pub fn of(item: &[u8], hashing: Hashing) -> Self {
        match hashing {
            Hashing::Murmur64A => {
                let (h1, fp) = redisbloom_hash(item);
                Self {
                    h1,
                    h2: alt_hash(fp, h1),
                    fp,
                }
            }
            Hashing::Murmur2 => {
                let h1 = murmur2(item, 0);
                let fp = match (h1 >> 24) as u8 {
                    EMPTY => 7,
                    fp => fp,
                };
                Self {
                    h1: h1 as u64,
                    h2: hashing.alt(fp, h1 as u64),
                    fp,
                }
            }
        }
    }

    /// The fingerprint.
    pub fn fingerprint(&self) -> u8 {
        self.fp
    }
}

/// The alternate index: `index ⊕ fp·0x5bd1e995`, the product taken as C computes it for a
/// byte times an `int` constant (32-bit, then widened with its sign). Modulo a power of two
/// up to 2³² — every table the memory limit allows — this is `index ⊕ (fp·0x5bd1e995 mod
/// buckets)`, as documented.
///
/// The library's rule ([`bloomkit::cuckoo::redisbloom_alt_index`], which its cuckoo filter of
/// RedisBloom's layout and `bloomkit export --to redis` use): one copy in the workspace.
#[inline]
pub fn alt_hash(fp: u8, index: u64) -> u64 {
    redisbloom_alt_index(fp, index)
}

/// The next power of two ≥ n, with 0 → 0 (RedisBloom's `getNextN2`).
/// `hash mod n`, RedisBloom's bucket index. Every sub-filter RedisBloom makes has a power of
/// two buckets (`nextpow2(cap / b)`, times a power-of-two expansion), where the modulo is a
/// mask: a 64-bit division costs tens of cycles, and a query takes two to four of them. A
/// loaded header with any other count (`n` > 0) takes the division.
#[inline]
fn bucket_index(hash: u64, n: u64) -> u64 {
    if n.is_power_of_two() {
        hash & (n - 1)
    } else {
        hash % n
    }
}

fn next_pow2(n: u64) -> u64 {
    if n == 0 {
        0
    } else {
        n.checked_next_power_of_two().unwrap_or(0)
    }
}

/// One sub-filter: `num_buckets` buckets of `bucket_size` one-byte slots.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubFilter {
    num_buckets: u64,
    data: Vec<u8>,
}

impl SubFilter {
    /// An empty sub-filter. The caller has checked its size against the memory limit (an
    /// allocation Redis cannot serve aborts the server, so the limit is the only guard);
    /// the zeroed allocation lets the allocator hand out fresh pages without writing them.
    fn zeroed(num_buckets: u64, bucket_size: u16) -> Option<Self> {
        let len = usize::try_from(num_buckets.checked_mul(bucket_size as u64)?).ok()?;
        Some(Self {
            num_buckets,
            data: vec![EMPTY; len],
        })
    }

    /// The number of buckets.
    pub fn num_buckets(&self) -> u64 {
        self.num_buckets
    }

    /// The slots, bucket after bucket.
    pub fn data(&self) -> &[u8] {
        &self.data
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
    fn contains(&self, p: &Lookup, bs: u16) -> bool {
        let has = |h| self.bucket(h, bs).iter().any(|&s| s == p.fp);
        has(p.h1) || has(p.h2)
    }

    /// Copies of the fingerprint in the item's two buckets; with `once`, a bucket that is
    /// both of them is counted once (RedisBloom 2.0), else twice (2.2 and later).
    fn count(&self, p: &Lookup, bs: u16, once: bool) -> u64 {
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
    fn scan(&self, p: &Lookup, bs: u16) -> (bool, Option<usize>) {
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
    fn find_available(&self, p: &Lookup, bs: u16) -> Option<usize> {
        [p.h1, p.h2].into_iter().find_map(|h| {
            let range = self.bucket_range(h, bs);
            let start = range.start;
            self.data[range]
                .iter()
                .position(|&s| s == EMPTY)
                .map(|i| start + i)
        })
    }

    fn delete(&mut self, p: &Lookup, bs: u16) -> bool {
        for h in [p.h1, p.h2] {
            let range = self.bucket_range(h, bs);
            if let Some(slot) = self.data[range].iter_mut().find(|s| **s == p.fp) {
                *slot = EMPTY;
                return true;
            }
        }
        false
    }

    /// Evicts fingerprints along the item's cuckoo path, up to `max_iterations` times;
    /// when that fails, walks the path back so that the table is as it was.
    fn kick_insert(&mut self, p: &Lookup, bs: u16, max_iterations: u16, hashing: Hashing) -> bool {
        let n = self.num_buckets;
        let bs64 = bs as u64;
        let mut fp = p.fp;
        let mut victim = 0u64;
        let mut index = bucket_index(p.h1, n);
        for _ in 0..max_iterations {
            std::mem::swap(&mut self.data[(index * bs64 + victim) as usize], &mut fp);
            index = bucket_index(hashing.alt(fp, index), n);
            let start = (index * bs64) as usize;
            if let Some(slot) = self.data[start..start + bs as usize]
                .iter_mut()
                .find(|s| **s == EMPTY)
            {
                *slot = fp;
                return true;
            }
            victim = (victim + 1) % bs64;
        }
        for _ in 0..max_iterations {
            victim = (victim + bs64 - 1) % bs64;
            index = bucket_index(hashing.alt(fp, index), n);
            std::mem::swap(&mut self.data[(index * bs64 + victim) as usize], &mut fp);
        }
        false
    }
}

/// RedisBloom's cuckoo filter (its `CuckooFilter`).
///
/// The counts of items and deletes are counters, not facts about the table: a header may
/// claim any numbers, and no command can check them against the slots. They are only
/// reported and decide when a delete compacts, so loads accept any value and every change
/// saturates (an add at `u64::MAX` items, a delete at 0) instead of wrapping.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cuckoo {
    num_buckets: u64,
    num_items: u64,
    num_deletes: u64,
    bucket_size: u16,
    max_iterations: u16,
    expansion: u16,
    hashing: Hashing,
    filters: Vec<SubFilter>,
}

impl Cuckoo {
    /// A filter as `CF.RESERVE key capacity BUCKETSIZE b MAXITERATIONS i EXPANSION e`
    /// makes it: nextpow2(capacity / b) buckets, the expansion rounded up to a power of two.
    /// More than [`MAX_NUM_BUCKETS`] buckets is [`CreateError::Invalid`] whatever the memory
    /// limit (RedisBloom answers "Insufficient memory to create filter").
    pub fn new(
        capacity: u64,
        bucket_size: u16,
        max_iterations: u16,
        expansion: u16,
        limit: impl Limit,
    ) -> Result<Self, CreateError> {
        if bucket_size == 0 || capacity < bucket_size as u64 * 2 {
            return Err(CreateError::Invalid);
        }
        let num_buckets = next_pow2(capacity / bucket_size as u64).max(1);
        if num_buckets > MAX_NUM_BUCKETS {
            return Err(CreateError::Invalid);
        }
        let needed = (num_buckets as u128 * bucket_size as u128)
            + (FILTER_STRUCT_BYTES + SUBFILTER_STRUCT_BYTES) as u128;
        let needed = u64::try_from(needed).unwrap_or(u64::MAX);
        limit.check(0, needed).map_err(CreateError::TooLarge)?;
        let first = SubFilter::zeroed(num_buckets, bucket_size).ok_or(CreateError::Invalid)?;
        Ok(Self {
            num_buckets,
            num_items: 0,
            num_deletes: 0,
            bucket_size,
            max_iterations,
            expansion: next_pow2(expansion as u64) as u16,
            hashing: Hashing::Murmur64A,
            filters: vec![first],
        })
    }

    /// The buckets of sub-filter `index`: buckets · expansion^index, if representable.
    fn sub_filter_buckets(&self, index: usize) -> Option<u64> {
        let growth = (self.expansion as u64).checked_pow(u32::try_from(index).ok()?)?;
        self.num_buckets.checked_mul(growth)
    }

    /// Whether the item may be in the filter.
    pub fn contains(&self, item: &[u8]) -> bool {
        let p = Lookup::of(item, self.hashing);
        self.filters
            .iter()
            .any(|f| f.contains(&p, self.bucket_size))
    }

    /// How many copies of the item's fingerprint are in its buckets (an upper bound on how
    /// often it was added).
    pub fn count(&self, item: &[u8]) -> u64 {
        let p = Lookup::of(item, self.hashing);
        let once = self.hashing == Hashing::Murmur2;
        self.filters
            .iter()
            .map(|f| f.count(&p, self.bucket_size, once))
            .sum()
    }

    /// Adds an item (again, if it is there already), adding sub-filters as needed. There is
    /// no limit on sub-filters per item here: RedisBloom refuses a whole command when the
    /// filter already has `CF_MAX_EXPANSIONS` sub-filters (the caller checks that first),
    /// and within a command grows as far as [`MAX_NUM_FILTERS`] and `limit` bytes allow.
    pub fn insert(&mut self, item: &[u8], limit: impl Limit) -> Insert {
        let p = Lookup::of(item, self.hashing);
        self.insert_lookup(&p, limit)
    }

    /// Adds an item unless it may be there already.
    pub fn insert_unique(&mut self, item: &[u8], limit: impl Limit) -> Insert {
        let p = Lookup::of(item, self.hashing);
        // As a check of every sub-filter followed by `insert`, in one pass: the newest
        // sub-filter with a free slot takes the fingerprint, as `insert_lookup` would choose.
        let mut target = None;
        let first_free = self.first_to_fill();
        for (index, f) in self.filters.iter().enumerate().rev() {
            let (found, free) = f.scan(&p, self.bucket_size);
            if found {
                return Insert::Exists;
            }
            if target.is_none() && index >= first_free {
                target = free.map(|slot| (index, slot));
            }
        }
        match target {
            Some((index, slot)) => {
                self.filters[index].data[slot] = p.fp;
                self.num_items = self.num_items.saturating_add(1);
                Insert::Inserted
            }
            None => self.insert_lookup(&p, limit),
        }
    }

    /// The oldest sub-filter whose free slots an insert may take: any (2.2 and later), or
    /// only the newest (RedisBloom 2.0, [`Hashing::Murmur2`]).
    fn first_to_fill(&self) -> usize {
        match self.hashing {
            Hashing::Murmur64A => 0,
            Hashing::Murmur2 => self.filters.len() - 1,
        }
    }

    fn insert_lookup(&mut self, p: &Lookup, limit: impl Limit) -> Insert {
        let bs = self.bucket_size;
        loop {
            let first_free = self.first_to_fill();
            for f in self.filters[first_free..].iter_mut().rev() {
                if let Some(slot) = f.find_available(p, bs) {
                    f.data[slot] = p.fp;
                    self.num_items = self.num_items.saturating_add(1);
                    return Insert::Inserted;
                }
            }
            let last = self.filters.last_mut().expect("a filter has a sub-filter");
            if last.kick_insert(p, bs, self.max_iterations, self.hashing) {
                self.num_items = self.num_items.saturating_add(1);
                return Insert::Inserted;
            }
            if self.expansion == 0 {
                return Insert::NoSpace;
            }
            if self.filters.len() >= MAX_NUM_FILTERS {
                return Insert::CannotGrow;
            }
            let Some(buckets) = self
                .sub_filter_buckets(self.filters.len())
                .filter(|&b| b <= MAX_NUM_BUCKETS)
            else {
                return Insert::CannotGrow;
            };
            let held = self.memory_bytes();
            let needed = buckets
                .checked_mul(bs as u64)
                .and_then(|b| b.checked_add(held + SUBFILTER_STRUCT_BYTES))
                .unwrap_or(u64::MAX);
            if let Err(refusal) = limit.check(held, needed) {
                return Insert::TooLarge(refusal);
            }
            match SubFilter::zeroed(buckets, bs) {
                Some(f) => self.filters.push(f),
                None => return Insert::CannotGrow,
            }
            limit.grew(self.memory_bytes() - held);
        }
    }

    /// Removes one copy of the item's fingerprint, newest sub-filter first (oldest first
    /// under [`Hashing::Murmur2`], as RedisBloom 2.0 did); compacts when there is more than
    /// one sub-filter and deletes pass 10% of the items (RedisBloom 2.0 went on past a
    /// sub-filter it could not empty; 2.2 and later stop there).
    pub fn delete(&mut self, item: &[u8]) -> bool {
        let p = Lookup::of(item, self.hashing);
        let bs = self.bucket_size;
        let n = self.filters.len();
        let legacy = self.hashing == Hashing::Murmur2;
        for k in 0..n {
            let i = if legacy { k } else { n - 1 - k };
            if self.filters[i].delete(&p, bs) {
                self.num_items = self.num_items.saturating_sub(1);
                self.num_deletes = self.num_deletes.saturating_add(1);
                if self.filters.len() > 1 && self.num_deletes as f64 > self.num_items as f64 * 0.10
                {
                    self.compact(legacy);
                }
                return true;
            }
        }
        false
    }

    /// Moves fingerprints from newer sub-filters into free slots of older ones, newest
    /// first, and drops the newest when it is emptied. With `cont`, goes on past a
    /// sub-filter that could not be emptied. Resets the delete count.
    pub fn compact(&mut self, cont: bool) {
        for index in (1..self.filters.len()).rev() {
            if !self.compact_one(index) && !cont {
                break;
            }
        }
        self.num_deletes = 0;
    }

    fn compact_one(&mut self, index: usize) -> bool {
        let bs = self.bucket_size;
        let hashing = self.hashing;
        let (older, newer) = self.filters.split_at_mut(index);
        let current = &mut newer[0];
        let mut all_moved = true;
        for bucket in 0..current.num_buckets {
            for slot in 0..bs as u64 {
                let at = (bucket * bs as u64 + slot) as usize;
                let fp = current.data[at];
                if fp == EMPTY {
                    continue;
                }
                let p = Lookup {
                    h1: bucket,
                    h2: hashing.alt(fp, bucket),
                    fp,
                };
                let target = older
                    .iter_mut()
                    .find_map(|f| f.find_available(&p, bs).map(|s| (f, s)));
                match target {
                    Some((f, s)) => {
                        f.data[s] = fp;
                        current.data[at] = EMPTY;
                    }
                    None => all_moved = false,
                }
            }
        }
        if all_moved && index == self.filters.len() - 1 {
            self.filters.pop();
        }
        all_moved
    }

    /// `CF.INFO Size` and `MEMORY USAGE`'s part: 40 + 16·sub-filters + Σ buckets · size.
    pub fn memory_bytes(&self) -> u64 {
        FILTER_STRUCT_BYTES
            + self
                .filters
                .iter()
                .map(|f| SUBFILTER_STRUCT_BYTES + f.data.len() as u64)
                .sum::<u64>()
    }

    /// Buckets of the first sub-filter.
    pub fn num_buckets(&self) -> u64 {
        self.num_buckets
    }
    /// Items in the filter.
    pub fn num_items(&self) -> u64 {
        self.num_items
    }
    /// Deletes since the last compaction.
    pub fn num_deletes(&self) -> u64 {
        self.num_deletes
    }
    /// Slots per bucket.
    pub fn bucket_size(&self) -> u16 {
        self.bucket_size
    }
    /// Evictions before giving up on a sub-filter.
    pub fn max_iterations(&self) -> u16 {
        self.max_iterations
    }
    /// The expansion factor (a power of two, or 0).
    pub fn expansion(&self) -> u16 {
        self.expansion
    }
    /// The sub-filters, oldest first.
    pub fn filters(&self) -> &[SubFilter] {
        &self.filters
    }
    /// How items map to fingerprints and buckets.
    pub fn hashing(&self) -> Hashing {
        self.hashing
    }

    /// `CF.DEBUG`'s line.
    pub fn debug_line(&self) -> String {
        format!(
            "bktsize:{} buckets:{} items:{} deletes:{} filters:{} max_iterations:{} expansion:{}",
            self.bucket_size,
            self.num_buckets,
            self.num_items,
            self.num_deletes,
            self.filters.len(),
            self.max_iterations,
            self.expansion
        )
    }

    /// The 38-byte SCANDUMP header; 39 bytes, the last the hashing's id, for a
    /// [`Hashing::Murmur2`] filter — RedisBloom's `CF.LOADCHUNK` refuses that length
    /// ("Invalid header") instead of making a filter that would answer with other hashing.
    pub fn header(&self) -> Vec<u8> {
        let mut out = CuckooHeader {
            items: self.num_items,
            buckets: self.num_buckets,
            deletes: self.num_deletes,
            filters: self.filters.len() as u64,
            bucket_size: self.bucket_size,
            max_iterations: self.max_iterations,
            expansion: self.expansion,
        }
        .to_bytes();
        if self.hashing != Hashing::Murmur64A {
            out.push(self.hashing.id());
        }
        out
    }

    /// Whether a SCANDUMP header of `len` bytes may be valid (38, or 39 with the hashing).
    pub fn header_len_ok(len: usize) -> bool {
        len == HEADER_BYTES || len == HEADER_BYTES + 1
    }

    /// Parameters shared by a header and an RDB record, checked, the bucket counts of the
    /// sub-filters, and the memory they need.
    ///
    /// The checks are RedisBloom 2.4's (`CuckooFilter_ValidateIntegrity`), which are also
    /// what memory safety needs: buckets a power of two (at most 2⁵⁶ − 1), bucket size 1 to
    /// 255, at least one iteration, 1 to 65535 sub-filters, and more than one only with an
    /// expansion (sub-filter j has buckets · expansionʲ buckets, representable). The
    /// expansion is any 16-bit number as there (`CF.RESERVE` rounds it to a power of two;
    /// a header may not). The counts of items and deletes are not checked (see
    /// [`Cuckoo`]).
    #[allow(clippy::too_many_arguments)]
    fn shell(
        num_items: u64,
        num_buckets: u64,
        num_deletes: u64,
        num_filters: u64,
        bucket_size: u64,
        max_iterations: u64,
        expansion: u64,
    ) -> Option<(Self, Vec<u64>, u64)> {
        let valid = num_buckets.is_power_of_two()
            && num_buckets <= MAX_NUM_BUCKETS
            && (1..=MAX_BUCKET_SIZE as u64).contains(&bucket_size)
            && (1..=MAX_ITERATIONS as u64).contains(&max_iterations)
            && expansion <= u16::MAX as u64
            && (1..=u16::MAX as u64).contains(&num_filters)
            && (num_filters == 1 || expansion > 0);
        if !valid {
            return None;
        }
        let shell = Self {
            num_buckets,
            num_items,
            num_deletes,
            bucket_size: bucket_size as u16,
            max_iterations: max_iterations as u16,
            expansion: expansion as u16,
            hashing: Hashing::Murmur64A,
            filters: Vec::new(),
        };
        let mut needed = FILTER_STRUCT_BYTES;
        let mut sizes = Vec::new();
        for j in 0..num_filters as usize {
            let buckets = shell
                .sub_filter_buckets(j)
                .filter(|&b| b <= MAX_NUM_BUCKETS)?;
            needed = needed
                .checked_add(SUBFILTER_STRUCT_BYTES)?
                .checked_add(buckets.checked_mul(bucket_size)?)?;
            sizes.push(buckets);
        }
        Some((shell, sizes, needed))
    }

    /// A filter with empty sub-filters from a SCANDUMP header; checks it and the memory it
    /// asks for before allocating. `Invalid` for a header of the wrong length or with
    /// parameters that do not make a filter.
    pub fn from_header(header: &[u8], limit: impl Limit) -> Result<Self, CreateError> {
        let hashing = match header.len() {
            HEADER_BYTES => Hashing::Murmur64A,
            n if n == HEADER_BYTES + 1 && header[HEADER_BYTES] == Hashing::Murmur2.id() => {
                Hashing::Murmur2
            }
            _ => return Err(CreateError::Invalid),
        };
        // The layout and RedisBloom's integrity checks: the library's (shared with `bloomkit
        // import --from redis`); `shell` checks the same again for the RDB path.
        let h = CuckooHeader::parse(&header[..HEADER_BYTES]).map_err(|_| CreateError::Invalid)?;
        let (mut cf, sizes, needed) = Self::shell(
            h.items,
            h.buckets,
            h.deletes,
            h.filters,
            h.bucket_size as u64,
            h.max_iterations as u64,
            h.expansion as u64,
        )
        .ok_or(CreateError::Invalid)?;
        cf.hashing = hashing;
        limit.check(0, needed).map_err(CreateError::TooLarge)?;
        for b in sizes {
            cf.filters
                .push(SubFilter::zeroed(b, cf.bucket_size).ok_or(CreateError::Invalid)?);
        }
        Ok(cf)
    }

    /// Writes the RDB record of encoding version [`ENCODING_VERSION`]: sub-filters,
    /// buckets, items, deletes, bucket size, max iterations, expansion; per sub-filter its
    /// bucket count and slots. A [`Hashing::Murmur2`] filter's record starts with
    /// `HASHING_MARK` and the hashing's id: Redis stamps every value of a type with one
    /// encoding version, so version 3 cannot be written for it, and RedisBloom refuses the
    /// mark instead of answering with other hashing.
    pub fn save(&self, out: &mut impl Sink) {
        if self.hashing != Hashing::Murmur64A {
            out.unsigned(HASHING_MARK);
            out.unsigned(self.hashing.id() as u64);
        }
        out.unsigned(self.filters.len() as u64);
        out.unsigned(self.num_buckets);
        out.unsigned(self.num_items);
        out.unsigned(self.num_deletes);
        out.unsigned(self.bucket_size as u64);
        out.unsigned(self.max_iterations as u64);
        out.unsigned(self.expansion as u64);
        for f in &self.filters {
            out.unsigned(f.num_buckets);
            out.buffer(&f.data);
        }
    }

    /// Reads an RDB record of encoding version `encver` (0 to [`ENCODING_VERSION`]).
    /// `None` — and nothing kept — at the first short read, on parameters a header would
    /// not be accepted with, on sub-filters of another size than the parameters give, or
    /// when `limit` does not admit the filter: that is checked before any slot is read.
    ///
    /// A record of version 3 or below was written by RedisBloom 1.1 to 2.0: it loads with
    /// [`Hashing::Murmur2`], bucket size 2, [`LEGACY_MAX_ITERATIONS`], expansion 1 (every
    /// sub-filter as large as the first) and no deletes (that version did not save them).
    /// RedisBloom 2.2 and later load it with their own hashing, and then most of its items
    /// answer 0.
    pub fn load(src: &mut impl Source, encver: i32, limit: impl Limit) -> Option<Self> {
        if !(0..=ENCODING_VERSION).contains(&encver) {
            return None;
        }
        let mut hashing = if encver < ENCODING_VERSION {
            Hashing::Murmur2
        } else {
            Hashing::Murmur64A
        };
        let mut num_filters = src.unsigned()?;
        if encver == ENCODING_VERSION && num_filters == HASHING_MARK {
            if src.unsigned()? != Hashing::Murmur2.id() as u64 {
                return None;
            }
            hashing = Hashing::Murmur2;
            num_filters = src.unsigned()?;
        }
        let num_buckets = src.unsigned()?;
        let num_items = src.unsigned()?;
        let [num_deletes, bucket_size, max_iterations, expansion] = if encver < ENCODING_VERSION {
            [
                0,
                DEFAULT_BUCKET_SIZE as u64,
                LEGACY_MAX_ITERATIONS as u64,
                DEFAULT_EXPANSION as u64,
            ]
        } else {
            [
                src.unsigned()?,
                src.unsigned()?,
                src.unsigned()?,
                src.unsigned()?,
            ]
        };
        let (mut cf, sizes, needed) = Self::shell(
            num_items,
            num_buckets,
            num_deletes,
            num_filters,
            bucket_size,
            max_iterations,
            expansion,
        )?;
        cf.hashing = hashing;
        limit.check(0, needed).ok()?;
        for want in sizes {
            let buckets = if encver < ENCODING_VERSION {
                num_buckets
            } else {
                src.unsigned()?
            };
            let data = src.buffer()?;
            if buckets != want || data.len() as u64 != buckets * bucket_size {
                return None;
            }
            cf.filters.push(SubFilter {
                num_buckets: buckets,
                data,
            });
        }
        Some(cf)
    }

    /// The data chunk at SCANDUMP iterator `iter` ≥ 1 and the next iterator, or `None` past
    /// the end. A chunk never crosses a sub-filter.
    pub fn chunk(&self, iter: u64) -> Option<(u64, &[u8])> {
        let mut offset = iter.checked_sub(1)?;
        for f in &self.filters {
            let len = f.data.len() as u64;
            if offset < len {
                let n = (len - offset).min(MAX_CHUNK_BYTES);
                let start = offset as usize;
                return Some((iter + n, &f.data[start..start + n as usize]));
            }
            offset -= len;
        }
        None
    }

    /// Writes a data chunk that SCANDUMP returned with iterator `iter` (it starts at byte
    /// `iter − len − 1`); false, changing nothing, if it is empty, `iter` is not positive,
    /// or it does not fit one sub-filter (RedisBloom writes a chunk whose offset is past
    /// the end into the last sub-filter, over other bytes; that is refused here).
    pub fn load_chunk(&mut self, iter: i64, data: &[u8]) -> bool {
        let Ok(iter) = u64::try_from(iter) else {
            return false;
        };
        let Some(mut offset) = iter.checked_sub(data.len() as u64 + 1) else {
            return false;
        };
        if data.is_empty() {
            return false;
        }
        for f in &mut self.filters {
            let len = f.data.len() as u64;
            if offset < len {
                if offset + data.len() as u64 > len {
                    return false;
                }
                let start = offset as usize;
                f.data[start..start + data.len()].copy_from_slice(data);
                return true;
            }
            offset -= len;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bloomkit::hash::murmur64a;

    #[test]
    fn bucket_index_is_the_modulo_for_every_bucket_count() {
        let mut h = 0x243f_6a88_85a3_08d3u64;
        for n in (1..=70u64).chain([1 << 20, (1 << 20) + 1, 3 << 30, 1 << 55, (1 << 56) - 1]) {
            for _ in 0..200 {
                h = h.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17) ^ n;
                assert_eq!(bucket_index(h, n), h % n, "hash {h:#x}, {n} buckets");
            }
        }
    }

    const NO_LIMIT: u64 = u64::MAX;

    #[test]
    fn default_shape_and_documented_formulas() {
        let cf = Cuckoo::new(1024, 2, 20, 1, NO_LIMIT).unwrap();
        assert_eq!(cf.num_buckets(), 512);
        assert_eq!(cf.memory_bytes(), 40 + 16 + 1024);
        assert_eq!(
            cf.debug_line(),
            "bktsize:2 buckets:512 items:0 deletes:0 filters:1 max_iterations:20 expansion:1"
        );
        assert_eq!(
            Cuckoo::new(1000, 4, 20, 3, NO_LIMIT).unwrap().num_buckets(),
            256
        );
        assert_eq!(
            Cuckoo::new(1000, 4, 20, 3, NO_LIMIT).unwrap().expansion(),
            4
        );
        assert_eq!(
            Cuckoo::new(3, 2, 20, 1, NO_LIMIT),
            Err(CreateError::Invalid)
        );
        let p = Lookup::of(b"item", Hashing::Murmur64A);
        let h = murmur64a(b"item", 0);
        assert_eq!(p.fingerprint() as u64, h % 255 + 1);
        // The alternate bucket of the alternate bucket is the first one.
        for n in [1u64, 2, 512, 1 << 20] {
            let i1 = h % n;
            let i2 = alt_hash(p.fp, i1) % n;
            assert_eq!(alt_hash(p.fp, i2) % n, i1);
            assert_eq!(i2, (i1 ^ ((p.fp as u64 * 0x5bd1_e995) % n)) % n);
        }
    }

    #[test]
    fn inserts_are_found_counted_and_deleted() {
        let mut cf = Cuckoo::new(1000, 2, 20, 1, NO_LIMIT).unwrap();
        for i in 0..800u32 {
            assert_eq!(cf.insert(&i.to_le_bytes(), NO_LIMIT), Insert::Inserted);
        }
        assert!((0..800u32).all(|i| cf.contains(&i.to_le_bytes())));
        assert_eq!(cf.insert(b"twice", NO_LIMIT), Insert::Inserted);
        assert_eq!(cf.insert(b"twice", NO_LIMIT), Insert::Inserted);
        assert!(cf.count(b"twice") >= 2);
        assert_eq!(cf.insert_unique(b"twice", NO_LIMIT), Insert::Exists);
        assert!(cf.delete(b"twice"));
        assert!(cf.contains(b"twice"));
        assert!(cf.delete(b"twice"));
        assert_eq!(cf.num_items(), 800);
        assert_eq!(cf.num_deletes(), 2);
    }

    /// `insert_unique` scans each bucket once; it must answer and write exactly as a check
    /// of every sub-filter followed by `insert`, on filters with several sub-filters and
    /// holes left by deletes in older ones (where the newest free slot is not the first).
    #[test]
    fn insert_unique_is_a_check_then_an_insert() {
        let mut rng = bloomkit::hash::SplitMix64::new(7);
        for bucket_size in [1u16, 2, 4] {
            let mut cf = Cuckoo::new(16, bucket_size, 8, 2, NO_LIMIT).unwrap();
            for round in 0..3000u32 {
                let item = (rng.next_u64() % 400).to_le_bytes();
                if round % 5 == 4 {
                    cf.delete(&item);
                    continue;
                }
                let mut reference = cf.clone();
                let expected = if reference.contains(&item) {
                    Insert::Exists
                } else {
                    reference.insert(&item, NO_LIMIT)
                };
                assert_eq!(cf.insert_unique(&item, NO_LIMIT), expected);
                assert_eq!(cf, reference, "bucket size {bucket_size}, round {round}");
            }
            assert!(cf.filters().len() > 2);
        }
    }

    #[test]
    fn a_full_filter_grows_by_sub_filters_without_a_per_item_limit() {
        let mut cf = Cuckoo::new(8, 2, 5, 2, NO_LIMIT).unwrap();
        let mut i = 0u32;
        while cf.filters().len() < 6 {
            assert_eq!(cf.insert(&i.to_le_bytes(), NO_LIMIT), Insert::Inserted);
            i += 1;
        }
        let sizes: Vec<u64> = cf.filters().iter().map(SubFilter::num_buckets).collect();
        assert_eq!(sizes, [4, 8, 16, 32, 64, 128]);
        assert!(
            (0..i).all(|i| cf.contains(&i.to_le_bytes())),
            "nothing lost"
        );
    }

    #[test]
    fn more_buckets_than_56_bits_hold_is_refused() {
        assert_eq!(
            Cuckoo::new(i64::MAX as u64, 2, 20, 1, u64::MAX),
            Err(CreateError::Invalid)
        );
        assert_eq!(
            Cuckoo::new((MAX_NUM_BUCKETS + 1) * 2, 2, 20, 1, u64::MAX),
            Err(CreateError::Invalid)
        );
    }

    #[test]
    fn deletes_compact_into_older_sub_filters() {
        let mut cf = Cuckoo::new(16, 2, 5, 1, NO_LIMIT).unwrap();
        let mut i = 0u32;
        while cf.filters().len() < 2 {
            cf.insert(&i.to_le_bytes(), NO_LIMIT);
            i += 1;
        }
        // Delete most items: compaction moves the rest down and drops the second filter.
        for k in 0..i - 2 {
            assert!(cf.delete(&k.to_le_bytes()));
        }
        assert_eq!(cf.filters().len(), 1);
        assert!(cf.contains(&(i - 1).to_le_bytes()));
        assert!(cf.contains(&(i - 2).to_le_bytes()));
    }

    #[test]
    fn header_and_chunks_round_trip_and_bad_ones_are_refused() {
        let mut cf = Cuckoo::new(64, 4, 10, 2, NO_LIMIT).unwrap();
        for i in 0..300u32 {
            cf.insert(&i.to_le_bytes(), NO_LIMIT);
        }
        assert!(cf.filters().len() > 1);
        let header = cf.header();
        assert_eq!(header.len(), 38);
        let mut copy = Cuckoo::from_header(&header, NO_LIMIT).unwrap();
        let mut iter = 1;
        while let Some((next, data)) = cf.chunk(iter) {
            assert!(copy.load_chunk(next as i64, data));
            iter = next;
        }
        assert_eq!(copy, cf);
        assert_eq!(
            Cuckoo::from_header(&header[..37], NO_LIMIT),
            Err(CreateError::Invalid)
        );
        let mut bad = header.clone();
        bad[8] = 3; // 3 buckets: not a power of two
        assert_eq!(
            Cuckoo::from_header(&bad, NO_LIMIT),
            Err(CreateError::Invalid)
        );
        assert!(matches!(
            Cuckoo::from_header(&header, 100),
            Err(CreateError::TooLarge(Refusal::PerKey { limit: 100, .. }))
        ));
        assert!(!copy.load_chunk(1 << 40, &[1]));
        assert_eq!(copy.filters()[0].data().len(), 64);
        assert!(
            !copy.load_chunk(63 + 2 + 1, &[1, 2]),
            "crosses a sub-filter"
        );
        assert_eq!(copy, cf);
    }

    use crate::rdb::{Field, Fields};

    #[test]
    fn counts_saturate_and_any_count_loads_back() {
        // 4 slots claiming 4 items (a forged header): one more add, and it still loads.
        let mut header = Vec::new();
        for v in [4u64, 2, 0, 1] {
            header.extend_from_slice(&v.to_le_bytes());
        }
        for v in [2u16, 20, 1] {
            header.extend_from_slice(&v.to_le_bytes());
        }
        let mut cf = Cuckoo::from_header(&header, NO_LIMIT).unwrap();
        assert_eq!(cf.insert(b"a", NO_LIMIT), Insert::Inserted);
        assert_eq!(cf.num_items(), 5);
        let mut out = Fields::default();
        cf.save(&mut out);
        assert_eq!(
            Cuckoo::load(&mut Fields::new(out.fields), ENCODING_VERSION, NO_LIMIT).as_ref(),
            Some(&cf)
        );
        assert!(Cuckoo::from_header(&cf.header(), NO_LIMIT).is_ok());
        // At the ends of the range the counts stay put.
        cf.num_items = u64::MAX;
        cf.num_deletes = u64::MAX;
        assert_eq!(cf.insert(b"b", NO_LIMIT), Insert::Inserted);
        assert_eq!(cf.num_items(), u64::MAX);
        cf.num_items = 0;
        assert!(cf.delete(b"b"));
        assert_eq!((cf.num_items(), cf.num_deletes()), (0, u64::MAX));
    }

    #[test]
    fn what_is_saved_loads_back_and_truncations_are_refused() {
        let mut cf = Cuckoo::new(16, 4, 10, 2, NO_LIMIT).unwrap();
        for i in 0..100u32 {
            cf.insert(&i.to_le_bytes(), NO_LIMIT);
        }
        let mut out = Fields::default();
        cf.save(&mut out);
        let fields = out.fields;
        let back = Cuckoo::load(&mut Fields::new(fields.clone()), ENCODING_VERSION, NO_LIMIT);
        assert_eq!(back.as_ref(), Some(&cf));
        for len in 0..fields.len() {
            let mut short = Fields::new(fields[..len].to_vec());
            assert_eq!(Cuckoo::load(&mut short, ENCODING_VERSION, NO_LIMIT), None);
        }
        assert_eq!(
            Cuckoo::load(&mut Fields::new(fields), ENCODING_VERSION, 100),
            None
        );
    }

    /// A filter as RedisBloom 2.0 leaves it after loading (its parameters, its hashing).
    fn legacy(capacity: u64) -> Cuckoo {
        let mut cf = Cuckoo::new(capacity, 2, LEGACY_MAX_ITERATIONS, 1, NO_LIMIT).unwrap();
        cf.hashing = Hashing::Murmur2;
        cf
    }

    #[test]
    fn older_encodings_decode_with_redisbloom_2_0_parameters_and_hashing() {
        let mut cf = legacy(32);
        for i in 0..60u32 {
            cf.insert(&i.to_le_bytes(), NO_LIMIT);
        }
        assert!(cf.filters().len() > 1);
        // Version 3: sub-filters, buckets, items, then the slots only.
        let mut fields = vec![
            Field::Unsigned(cf.filters().len() as u64),
            Field::Unsigned(cf.num_buckets()),
            Field::Unsigned(cf.num_items()),
        ];
        fields.extend(
            cf.filters()
                .iter()
                .map(|f| Field::Buffer(f.data().to_vec())),
        );
        for encver in 0..ENCODING_VERSION {
            let back = Cuckoo::load(&mut Fields::new(fields.clone()), encver, NO_LIMIT);
            assert_eq!(back.as_ref(), Some(&cf), "version {encver}");
        }
        // A buffer of another size than the buckets give is refused.
        fields[3] = Field::Buffer(vec![0; 3]);
        assert_eq!(Cuckoo::load(&mut Fields::new(fields), 3, NO_LIMIT), None);
    }

    #[test]
    fn growth_stops_at_the_memory_limit() {
        let mut cf = Cuckoo::new(64, 2, 5, 1, 200).unwrap();
        let mut i = 0u32;
        let status = loop {
            match cf.insert(&i.to_le_bytes(), 200) {
                Insert::Inserted => i += 1,
                other => break other,
            }
        };
        assert!(matches!(
            status,
            Insert::TooLarge(Refusal::PerKey { limit: 200, .. })
        ));
        assert!(cf.memory_bytes() <= 200);
    }

    /// A limit that admits everything and records what it was asked and told.
    #[derive(Default)]
    struct Recorder {
        checks: std::cell::RefCell<Vec<(u64, u64)>>,
        grown: std::cell::Cell<u64>,
    }

    impl Limit for Recorder {
        fn check(&self, held: u64, needed: u64) -> Result<(), Refusal> {
            self.checks.borrow_mut().push((held, needed));
            Ok(())
        }
        fn grew(&self, bytes: u64) {
            self.grown.set(self.grown.get() + bytes);
        }
    }

    #[test]
    fn growth_is_checked_from_the_size_held_and_reported_to_the_limit() {
        let limit = Recorder::default();
        let mut cf = Cuckoo::new(8, 2, 5, 2, &limit).unwrap();
        let created = cf.memory_bytes();
        assert_eq!(*limit.checks.borrow(), vec![(0, created)]);
        for i in 0..200u32 {
            assert_eq!(cf.insert(&i.to_le_bytes(), &limit), Insert::Inserted);
        }
        assert!(cf.filters().len() > 2);
        let checks = limit.checks.borrow();
        assert_eq!(checks.len(), cf.filters().len());
        for pair in checks.windows(2) {
            assert_eq!(pair[1].0, pair[0].1, "{checks:?}");
        }
        assert_eq!(checks.last().unwrap().1, cf.memory_bytes());
        assert_eq!(limit.grown.get(), cf.memory_bytes() - created);
    }
}

#[cfg(test)]
mod legacy_tests {
    use super::*;
    use crate::rdb::{Field, Fields};

    const NO_LIMIT: u64 = u64::MAX;

    fn legacy(capacity: u64) -> Cuckoo {
        let mut cf = Cuckoo::new(capacity, 2, LEGACY_MAX_ITERATIONS, 1, NO_LIMIT).unwrap();
        cf.hashing = Hashing::Murmur2;
        cf
    }

    /// RedisBloom 2.0's rule, written out from its `getLookupParams` and `getAltIndex`.
    #[test]
    fn lookup_is_redisbloom_2_0s() {
        for item in [&b""[..], b"a", b"item", b"a-2570", b"0123456789abcdef"] {
            let h = murmur2(item, 0);
            let p = Lookup::of(item, Hashing::Murmur2);
            let fp = if h >> 24 == 0 { 7 } else { (h >> 24) as u8 };
            assert_eq!(p.fingerprint(), fp);
            for n in [1u64, 2, 8, 1024, 1 << 20, 1 << 33] {
                let i1 = h as u64 % n;
                let i2 = ((i1 ^ (fp as u32).wrapping_mul(0x5bd1_e995) as u64) as u32) as u64 % n;
                assert_eq!(bucket_index(p.h1, n), i1);
                assert_eq!(bucket_index(p.h2, n), i2);
                assert_eq!(bucket_index(Hashing::Murmur2.alt(fp, i2), n), i1);
            }
        }
        // A zero top byte becomes 7: find such an item.
        let zero = (0u32..)
            .map(|i| i.to_le_bytes())
            .find(|b| murmur2(b, 0) >> 24 == 0)
            .unwrap();
        assert_eq!(Lookup::of(&zero, Hashing::Murmur2).fingerprint(), 7);
    }

    #[test]
    fn a_legacy_filter_finds_counts_and_deletes_what_it_was_given() {
        let mut cf = legacy(16);
        for i in 0..200u32 {
            assert_eq!(cf.insert(&i.to_le_bytes(), NO_LIMIT), Insert::Inserted);
        }
        assert!(cf.filters().len() > 3);
        assert!(cf.filters().iter().all(|f| f.num_buckets() == 8));
        assert!((0..200u32).all(|i| cf.contains(&i.to_le_bytes())));
        for i in 0..100u32 {
            assert!(cf.delete(&i.to_le_bytes()));
        }
        assert!((100..200u32).all(|i| cf.contains(&i.to_le_bytes())));
        assert_eq!(cf.num_items(), 100);
    }

    /// Where an item's two buckets are one, 2.0 counts it once (2.2 and later twice).
    #[test]
    fn count_takes_a_shared_bucket_once() {
        let mut cf = legacy(4); // 2 buckets: an even fingerprint maps both to one bucket
        let item = (0u32..)
            .map(|i| i.to_le_bytes())
            .find(|b| {
                Lookup::of(b, Hashing::Murmur2)
                    .fingerprint()
                    .is_multiple_of(2)
            })
            .unwrap();
        cf.insert(&item, NO_LIMIT);
        assert_eq!(cf.count(&item), 1);
        let mut current = Cuckoo::new(4, 2, 20, 1, NO_LIMIT).unwrap();
        let item = (0u32..)
            .map(|i| i.to_le_bytes())
            .find(|b| {
                Lookup::of(b, Hashing::Murmur64A)
                    .fingerprint()
                    .is_multiple_of(2)
            })
            .unwrap();
        current.insert(&item, NO_LIMIT);
        assert_eq!(current.count(&item), 2);
    }

    /// Saved in encoding 4 behind the mark, a legacy filter loads back with its hashing; so
    /// does its SCANDUMP header (39 bytes). A mark with an unknown hashing is refused.
    #[test]
    fn the_hashing_survives_save_and_scandump() {
        let mut cf = legacy(64);
        for i in 0..300u32 {
            cf.insert(&i.to_le_bytes(), NO_LIMIT);
        }
        let mut out = Fields::default();
        cf.save(&mut out);
        assert_eq!(out.fields[..2], [Field::Unsigned(0), Field::Unsigned(1)]);
        let back = Cuckoo::load(
            &mut Fields::new(out.fields.clone()),
            ENCODING_VERSION,
            NO_LIMIT,
        );
        assert_eq!(back.as_ref(), Some(&cf));
        let mut bad = out.fields.clone();
        bad[1] = Field::Unsigned(2);
        assert_eq!(
            Cuckoo::load(&mut Fields::new(bad), ENCODING_VERSION, NO_LIMIT),
            None
        );
        // Without the mark the same fields are a 64-bit-hashing filter.
        let plain = Cuckoo::load(&mut Fields::new(out.fields[2..].to_vec()), 4, NO_LIMIT).unwrap();
        assert_eq!(plain.hashing(), Hashing::Murmur64A);

        let header = cf.header();
        assert_eq!((header.len(), header[38]), (39, 1));
        let mut copy = Cuckoo::from_header(&header, NO_LIMIT).unwrap();
        let mut iter = 1;
        while let Some((next, data)) = cf.chunk(iter) {
            assert!(copy.load_chunk(next as i64, data));
            iter = next;
        }
        assert_eq!(copy, cf);
        let mut bad = header.clone();
        bad[38] = 0;
        assert_eq!(
            Cuckoo::from_header(&bad, NO_LIMIT),
            Err(CreateError::Invalid)
        );
    }
}

#[cfg(test)]
mod legacy_growth_tests {
    use super::*;

    /// RedisBloom 2.0 fills only the newest sub-filter: a slot freed in an older one stays
    /// free when items are added.
    #[test]
    fn inserts_fill_the_newest_sub_filter_only() {
        let mut cf = Cuckoo::new(16, 2, LEGACY_MAX_ITERATIONS, 1, u64::MAX).unwrap();
        cf.hashing = Hashing::Murmur2;
        let mut i = 0u32;
        while cf.filters().len() < 2 {
            cf.insert(&i.to_le_bytes(), u64::MAX);
            i += 1;
        }
        let used = |cf: &Cuckoo| {
            cf.filters()[0]
                .data()
                .iter()
                .filter(|&&s| s != EMPTY)
                .count()
        };
        let before = used(&cf);
        assert!((0..i).any(|k| cf.filters[0].delete(&Lookup::of(&k.to_le_bytes(), cf.hashing), 2)));
        let mut k = 1000u32;
        while cf.filters().len() < 5 {
            cf.insert(&k.to_le_bytes(), u64::MAX);
            k += 1;
        }
        assert_eq!(used(&cf), before - 1);
    }
}
