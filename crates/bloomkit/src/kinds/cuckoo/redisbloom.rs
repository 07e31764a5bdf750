//! RedisBloom 2.4's growing cuckoo filter, slot for slot: one-byte fingerprints, its bucket
//! and alternate-index rules, growth by sub-filters, deterministic evictions with
//! rollback, deletes newest sub-filter first and compaction. The one copy in the
//! workspace: the [`CuckooFilter`](super::CuckooFilter) of [`Layout::RedisBloom`](super::Layout)
//! keeps its table in one, `bloomkit import/export` read and write its `CF.SCANDUMP`
//! bytes, and the Redis module (`crates/bloomkit-redis`, `src/cf.rs`) answers `CF.*`
//! commands with it, adding only its Redis glue (replies, RDB, memory accounting).
//!
//! # The rules
//!
//! From RedisBloom's documentation of `CF.RESERVE`/`CF.ADD`/`CF.DEL`/`CF.COMPACT` and its
//! dump layout, and its 2.4 branch's `src/cuckoo.c` read for the facts (collected in the
//! workspace's `shared/redisbloom-2.4.md`; no code taken):
//!
//! ```text
//!     h   = MurmurHash64A(item, 0);  fp = h mod 255 + 1      (one byte, never 0)
//!     sub-filter j has B·eʲ buckets of b slots               (B = nextpow2(n / b))
//!     i₁  = h mod Bⱼ,   i₂ = (h ⊕ fp·0x5bd1e995) mod Bⱼ
//! ```
//!
//! * A query looks in both buckets of every sub-filter; a count adds their copies.
//! * An insert takes the first free slot of i₁ or i₂ in the newest sub-filter that has
//!   one, looking from the newest back to the oldest. Else it evicts along a path in the
//!   newest sub-filter, at most `max_iterations` times: the victim slot of each bucket is
//!   0, 1, 2, … in turn (mod b), starting at i₁; a path that finds no free slot is walked
//!   back, so the table is as before. Then, with an expansion e > 0, a sub-filter of
//!   B·e^(j+1) buckets is added and the insert tried again; with e = 0 the filter is full.
//! * A delete removes one copy from the newest sub-filter that holds one; when there is
//!   more than one sub-filter and deletes pass 10% of the items, the filter compacts:
//!   fingerprints of the newest sub-filter move into free slots of older ones (oldest
//!   first), an emptied newest sub-filter is dropped, and the compaction stops at the
//!   first one it cannot empty.
//!
//! Every fingerprint stays in one of its two buckets of the sub-filter holding it, so no
//! insert, eviction, rollback or compaction loses an item.
//!
//! Filters that RedisBloom 1.1 to 2.0 wrote keep that version's hashing and table rules:
//! see [`Hashing::Murmur2`].
//!
//! ```
//! use bloomkit::cuckoo::redisbloom::{Insert, RedisBloomCuckoo, Unlimited};
//!
//! // CF.RESERVE k 8 BUCKETSIZE 2 MAXITERATIONS 20 EXPANSION 2: 4 buckets of 2 slots.
//! let mut cf = RedisBloomCuckoo::new(8, 2, 20, 2, &Unlimited).unwrap();
//! for i in 0..40u32 {
//!     assert_eq!(cf.insert_with(&i.to_le_bytes(), &Unlimited), Insert::Inserted);
//! }
//! assert!((0..40u32).all(|i| cf.contains(&i.to_le_bytes())));
//! let buckets: Vec<u64> = cf.filters().iter().map(|f| f.num_buckets()).collect();
//! assert_eq!(buckets[..3], [4, 8, 16]); // each sub-filter twice the one before
//! assert!(cf.delete(&7u32.to_le_bytes()));
//! assert_eq!((cf.num_items(), cf.num_deletes()), (39, 1));
//! ```

use super::{redisbloom_alt_index, redisbloom_hash, REDISBLOOM_MAX_BUCKETS};
use crate::hash::murmur2;

/// The most buckets a sub-filter may have: RedisBloom stores the count in 56 bits.
pub const MAX_NUM_BUCKETS: u64 = REDISBLOOM_MAX_BUCKETS;
/// The most sub-filters a filter may have: RedisBloom stores the count in 16 bits.
pub const MAX_NUM_FILTERS: usize = u16::MAX as usize;
/// The largest bucket size.
pub const MAX_BUCKET_SIZE: u16 = 255;
/// The largest MAXITERATIONS.
pub const MAX_ITERATIONS: u16 = 65535;
/// The largest EXPANSION `CF.RESERVE` takes (a header may hold any 16-bit number).
pub const MAX_EXPANSION: u16 = 32768;

/// RedisBloom's `sizeof(CuckooFilter)` and `sizeof(SubCF)`, counted by `CF.INFO Size`
/// ([`RedisBloomCuckoo::memory_bytes`]).
pub const FILTER_STRUCT_BYTES: u64 = 40;
/// See [`FILTER_STRUCT_BYTES`].
pub const SUBFILTER_STRUCT_BYTES: u64 = 16;

/// What a filter may take before it allocates: the Redis module's memory limits, the
/// library's size limit. `held` is the filter's size now (0 for one not made yet),
/// `needed` its size after the allocation, both as [`RedisBloomCuckoo::footprint_bytes`]
/// counts them: what it holds in memory, RedisBloom's count
/// ([`memory_bytes`](RedisBloomCuckoo::memory_bytes)) and this filter's bookkeeping
/// ([`bookkeeping_bytes`](RedisBloomCuckoo::bookkeeping_bytes)).
pub trait GrowthBudget {
    /// Why an allocation is refused.
    type Refusal;
    /// Whether a filter of `held` bytes may grow to `needed`.
    fn check(&self, held: u64, needed: u64) -> Result<(), Self::Refusal>;
    /// A filter grew by `bytes`, after [`check`](Self::check) admitted it.
    fn grew(&self, _bytes: u64) {}
}

/// A budget that admits everything (allocations that fail are still refused, as
/// [`Insert::CannotGrow`] or [`CreateError::Invalid`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Unlimited;

impl GrowthBudget for Unlimited {
    type Refusal = std::convert::Infallible;
    fn check(&self, _: u64, _: u64) -> Result<(), Self::Refusal> {
        Ok(())
    }
}

/// A budget of at most this many bytes in all.
impl GrowthBudget for u64 {
    type Refusal = u64;
    /// Refused with the bytes that were needed.
    fn check(&self, _: u64, needed: u64) -> Result<(), u64> {
        if needed > *self {
            Err(needed)
        } else {
            Ok(())
        }
    }
}

/// The numbers of a filter that its `CF.SCANDUMP` header and RDB record hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Items inserted less deleted (a counter; not checked against the slots).
    pub items: u64,
    /// Buckets of the first sub-filter.
    pub buckets: u64,
    /// Deletes since the last compaction (a counter).
    pub deletes: u64,
    /// Sub-filters.
    pub filters: u64,
    /// Slots per bucket.
    pub bucket_size: u64,
    /// Evictions before an insert gives up on a sub-filter.
    pub max_iterations: u64,
    /// Sub-filter j has `buckets · expansionʲ` buckets.
    pub expansion: u64,
}

/// The empty slot.
const EMPTY: u8 = 0;

/// The result of an insert; `R` is the [`GrowthBudget`]'s refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Insert<R> {
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
    TooLarge(R),
}

/// Why a filter cannot be created; `R` is the [`GrowthBudget`]'s refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CreateError<R> {
    /// Capacity below 2 × bucket size, more than [`MAX_NUM_BUCKETS`] buckets, or a size
    /// that does not fit in memory.
    Invalid,
    /// The filter would pass a memory limit.
    TooLarge(R),
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
/// [`redisbloom_alt_index`]: one copy of the rule in the workspace.
#[inline]
pub fn alt_hash(fp: u8, index: u64) -> u64 {
    redisbloom_alt_index(fp, index)
}

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

/// The next power of two ≥ n, with 0 → 0 (RedisBloom's `getNextN2`).
pub(crate) fn next_pow2(n: u64) -> u64 {
    if n == 0 {
        0
    } else {
        n.checked_next_power_of_two().unwrap_or(0)
    }
}

mod slots;

pub use slots::SubFilter;
use slots::SubFilters;

/// The bytes of [`RedisBloomCuckoo`]'s struct beyond RedisBloom's `CuckooFilter`, which
/// [`memory_bytes`](RedisBloomCuckoo::memory_bytes) counts.
const STRUCT_BYTES_BEYOND: u64 =
    (std::mem::size_of::<RedisBloomCuckoo>() as u64).saturating_sub(FILTER_STRUCT_BYTES);

/// RedisBloom's cuckoo filter (its `CuckooFilter`).
///
/// The counts of items and deletes are counters, not facts about the table: a header may
/// claim any numbers, and no command can check them against the slots. They are only
/// reported and decide when a delete compacts, so loads accept any value and every change
/// saturates (an add at `u64::MAX` items, a delete at 0) instead of wrapping.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedisBloomCuckoo {
    num_buckets: u64,
    num_items: u64,
    num_deletes: u64,
    bucket_size: u16,
    max_iterations: u16,
    expansion: u16,
    hashing: Hashing,
    filters: SubFilters,
}

impl RedisBloomCuckoo {
    /// A filter as `CF.RESERVE key capacity BUCKETSIZE b MAXITERATIONS i EXPANSION e`
    /// makes it: nextpow2(capacity / b) buckets, the expansion rounded up to a power of two.
    /// More than [`MAX_NUM_BUCKETS`] buckets is [`CreateError::Invalid`] whatever the memory
    /// limit (RedisBloom answers "Insufficient memory to create filter").
    pub fn new<B: GrowthBudget>(
        capacity: u64,
        bucket_size: u16,
        max_iterations: u16,
        expansion: u16,
        budget: &B,
    ) -> Result<Self, CreateError<B::Refusal>> {
        if bucket_size == 0 || capacity < bucket_size as u64 * 2 {
            return Err(CreateError::Invalid);
        }
        let num_buckets = next_pow2(capacity / bucket_size as u64).max(1);
        if num_buckets > MAX_NUM_BUCKETS {
            return Err(CreateError::Invalid);
        }
        let needed = (num_buckets as u128 * bucket_size as u128)
            + (FILTER_STRUCT_BYTES + SUBFILTER_STRUCT_BYTES) as u128
            + (STRUCT_BYTES_BEYOND + SubFilters::bookkeeping_bytes_exact(1)) as u128;
        let needed = u64::try_from(needed).unwrap_or(u64::MAX);
        budget.check(0, needed).map_err(CreateError::TooLarge)?;
        let first = SubFilter::zeroed(num_buckets, bucket_size).ok_or(CreateError::Invalid)?;
        let mut filters = SubFilters::default();
        filters
            .try_reserve_exact(1)
            .map_err(|_| CreateError::Invalid)?;
        filters.push(first);
        Ok(Self {
            num_buckets,
            num_items: 0,
            num_deletes: 0,
            bucket_size,
            max_iterations,
            expansion: next_pow2(expansion as u64) as u16,
            hashing: Hashing::Murmur64A,
            filters,
        })
    }

    /// The buckets of sub-filter `index`: buckets · expansion^index, if representable.
    fn sub_filter_buckets(&self, index: usize) -> Option<u64> {
        let growth = (self.expansion as u64).checked_pow(u32::try_from(index).ok()?)?;
        self.num_buckets.checked_mul(growth)
    }

    /// Whether the item may be in the filter.
    pub fn contains(&self, item: &[u8]) -> bool {
        self.holds(&Lookup::of(item, self.hashing))
    }

    /// Whether a sub-filter holds the fingerprint in one of the lookup's buckets.
    fn holds(&self, p: &Lookup) -> bool {
        self.filters()
            .iter()
            .any(|f| f.contains(p, self.bucket_size))
    }

    /// How many copies of the item's fingerprint are in its buckets (an upper bound on how
    /// often it was added).
    pub fn count(&self, item: &[u8]) -> u64 {
        let p = Lookup::of(item, self.hashing);
        let once = self.hashing == Hashing::Murmur2;
        self.filters()
            .iter()
            .map(|f| f.count(&p, self.bucket_size, once))
            .sum()
    }

    /// Adds an item (again, if it is there already), adding sub-filters as needed. There is
    /// no limit on sub-filters per item here: RedisBloom refuses a whole command when the
    /// filter already has `CF_MAX_EXPANSIONS` sub-filters (the caller checks that first),
    /// and within a command grows as far as [`MAX_NUM_FILTERS`] and the budget allow.
    pub fn insert_with<B: GrowthBudget>(&mut self, item: &[u8], budget: &B) -> Insert<B::Refusal> {
        let p = Lookup::of(item, self.hashing);
        self.insert_lookup(&p, budget)
    }

    /// [`insert_with`](Self::insert_with), also saying whether the item was certainly new
    /// (no sub-filter held its fingerprint before), with one hashing for both.
    pub(crate) fn insert_noting_new<B: GrowthBudget>(
        &mut self,
        item: &[u8],
        budget: &B,
    ) -> (bool, Insert<B::Refusal>) {
        let p = Lookup::of(item, self.hashing);
        (!self.holds(&p), self.insert_lookup(&p, budget))
    }

    /// Adds an item unless it may be there already.
    pub fn insert_unique_with<B: GrowthBudget>(
        &mut self,
        item: &[u8],
        budget: &B,
    ) -> Insert<B::Refusal> {
        let p = Lookup::of(item, self.hashing);
        // As a check of every sub-filter followed by `insert`, in one pass: the newest
        // sub-filter with a free slot takes the fingerprint, as `insert_lookup` would choose.
        let mut target = None;
        let first_free = self.first_to_fill();
        for (index, f) in self.filters().iter().enumerate().rev() {
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
                self.filters.set(index, slot, p.fp);
                self.num_items = self.num_items.saturating_add(1);
                Insert::Inserted
            }
            None => self.insert_lookup(&p, budget),
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

    fn insert_lookup<B: GrowthBudget>(&mut self, p: &Lookup, budget: &B) -> Insert<B::Refusal> {
        let bs = self.bucket_size;
        loop {
            // The newest sub-filter with a free slot in one of the item's buckets: a full
            // sub-filter has none, and the bitset passes it unread.
            let free = self
                .filters
                .open_newest_first(self.first_to_fill())
                .find_map(|j| self.filters.get(j).find_available(p, bs).map(|s| (j, s)));
            if let Some((j, slot)) = free {
                self.filters.set(j, slot, p.fp);
                self.num_items = self.num_items.saturating_add(1);
                return Insert::Inserted;
            }
            let last = self.filters.len() - 1;
            if self
                .filters
                .kick_insert(last, p, bs, self.max_iterations, self.hashing)
            {
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
            // Checked before anything is allocated: the new sub-filter's slots and struct,
            // and the bookkeeping with one more sub-filter (the list and the bitset, which
            // may double).
            let held = self.footprint_bytes();
            let needed = buckets
                .checked_mul(bs as u64)
                .and_then(|b| {
                    b.checked_add(
                        self.memory_bytes()
                            + SUBFILTER_STRUCT_BYTES
                            + STRUCT_BYTES_BEYOND
                            + self.filters.bookkeeping_bytes_with_one_more(),
                    )
                })
                .unwrap_or(u64::MAX);
            if let Err(refusal) = budget.check(held, needed) {
                return Insert::TooLarge(refusal);
            }
            let added = match SubFilter::zeroed(buckets, bs) {
                Some(f) if self.filters.reserve_one().is_ok() => {
                    self.filters.push(f);
                    true
                }
                _ => false,
            };
            // Also what a reservation that failed half-way kept.
            let grown = self.footprint_bytes().saturating_sub(held);
            if grown > 0 {
                budget.grew(grown);
            }
            if !added {
                return Insert::CannotGrow;
            }
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
            if self.filters.remove(i, &p, bs) {
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
        let mut all_moved = true;
        for bucket in 0..self.filters.get(index).num_buckets() {
            for slot in 0..bs as u64 {
                let at = (bucket * bs as u64 + slot) as usize;
                let fp = self.filters.get(index).data()[at];
                if fp == EMPTY {
                    continue;
                }
                let p = Lookup {
                    h1: bucket,
                    h2: hashing.alt(fp, bucket),
                    fp,
                };
                // The oldest sub-filter with a free slot in one of the buckets (the bitset
                // passes the full ones).
                let target = self
                    .filters
                    .open_oldest_first(index)
                    .find_map(|j| self.filters.get(j).find_available(&p, bs).map(|s| (j, s)));
                match target {
                    Some((j, s)) => {
                        self.filters.set(j, s, fp);
                        self.filters.set(index, at, EMPTY);
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

    /// `CF.INFO Size`, RedisBloom 2.4's count: 40 + 16·sub-filters + Σ buckets · size
    /// (kept, not summed: a filter of 65535 sub-filters asks it at each growth). What this
    /// filter holds besides is [`bookkeeping_bytes`](Self::bookkeeping_bytes).
    pub fn memory_bytes(&self) -> u64 {
        FILTER_STRUCT_BYTES
            + SUBFILTER_STRUCT_BYTES * self.filters.len() as u64
            + self.filters.num_slots()
    }

    /// The bytes this filter holds in memory that [`memory_bytes`](Self::memory_bytes)
    /// (RedisBloom's count, of its own structs) leaves out:
    ///
    /// * the struct's bytes beyond RedisBloom's 40 (`size_of::<RedisBloomCuckoo>()`, 88 on a
    ///   64-bit target, counted where it lives: on the heap in the Redis module);
    /// * per sub-filter, the list entry's bytes beyond RedisBloom's 16
    ///   (`size_of::<SubFilter>()`, 40 on a 64-bit target: buckets, the slots' `Vec` and
    ///   the count of slots in use), and the list's spare capacity;
    /// * the bitset of sub-filters with a free slot, one bit each in 64-bit words, spare
    ///   capacity included.
    ///
    /// The count of slots in use and the bitset are kept in memory only (no save holds
    /// them; a load rebuilds them). Not counted: the allocator's rounding of each
    /// allocation to its size classes, which RedisBloom's count leaves out too. A filter
    /// grown one sub-filter at a time to its 65535 (`CF.RESERVE cf 2 BUCKETSIZE 1 EXPANSION
    /// 1`, then one item 131070 times) holds 1 581 080 bytes of it on a 64-bit target
    /// (65535 × 24 + 1024 × 8 + 48), beside its `memory_bytes` of 1 179 670.
    ///
    /// ```
    /// use bloomkit::cuckoo::redisbloom::{RedisBloomCuckoo, Unlimited};
    ///
    /// let mut cf = RedisBloomCuckoo::new(2, 1, 20, 1, &Unlimited).unwrap();
    /// while cf.filters().len() < 3 {
    ///     let _ = cf.insert_with(b"one item", &Unlimited);
    /// }
    /// assert_eq!(cf.memory_bytes(), 40 + 3 * (16 + 2));
    /// // Each sub-filter's 8-byte count of slots in use, among the rest.
    /// assert!(cf.bookkeeping_bytes() >= 3 * 8);
    /// assert_eq!(cf.footprint_bytes(), cf.memory_bytes() + cf.bookkeeping_bytes());
    /// ```
    pub fn bookkeeping_bytes(&self) -> u64 {
        STRUCT_BYTES_BEYOND + self.filters.bookkeeping_bytes()
    }

    /// What this filter holds in memory: [`memory_bytes`](Self::memory_bytes) +
    /// [`bookkeeping_bytes`](Self::bookkeeping_bytes). A [`GrowthBudget`] is asked in these
    /// bytes, and the Redis module counts a cuckoo value for them (`MEMORY USAGE`, its
    /// memory limits); `CF.INFO Size` stays RedisBloom's `memory_bytes`.
    ///
    /// ```
    /// use bloomkit::cuckoo::redisbloom::{Insert, RedisBloomCuckoo, Unlimited};
    ///
    /// let mut cf = RedisBloomCuckoo::new(2, 1, 20, 1, &Unlimited).unwrap();
    /// // RedisBloom's count of the filter with a second sub-filter (2 slots): a budget of
    /// // that admits the copies of one item the first sub-filter holds...
    /// let by_redisbloom = cf.memory_bytes() + 16 + 2;
    /// let refused = loop {
    ///     match cf.insert_with(b"x", &by_redisbloom) {
    ///         Insert::Inserted => continue,
    ///         other => break other,
    ///     }
    /// };
    /// // ... but not the second sub-filter with its bookkeeping, refused before anything
    /// // is allocated.
    /// assert!(matches!(refused, Insert::TooLarge(needed) if needed > by_redisbloom));
    /// assert_eq!(cf.filters().len(), 1);
    /// assert!(cf.footprint_bytes() > cf.memory_bytes());
    /// ```
    pub fn footprint_bytes(&self) -> u64 {
        self.memory_bytes() + self.bookkeeping_bytes()
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
        self.filters.as_slice()
    }
    /// How items map to fingerprints and buckets.
    pub fn hashing(&self) -> Hashing {
        self.hashing
    }

    /// The filter a header or RDB record describes, its sub-filters' bucket counts and the
    /// bytes it needs ([`footprint_bytes`](Self::footprint_bytes) of it made whole),
    /// checked before anything is allocated.
    ///
    /// The checks are RedisBloom 2.4's (`CuckooFilter_ValidateIntegrity`), which are also
    /// what memory safety needs: buckets a power of two (at most 2⁵⁶ − 1), bucket size 1 to
    /// 255, at least one iteration, 1 to 65535 sub-filters, and more than one only with an
    /// expansion (sub-filter j has buckets · expansionʲ buckets, representable). The
    /// expansion is any 16-bit number as there (`CF.RESERVE` rounds it to a power of two;
    /// a header may not). The counts of items and deletes are not checked (see
    /// [`RedisBloomCuckoo`]).
    fn shell(shape: &Shape, hashing: Hashing) -> Option<(Self, Vec<u64>, u64)> {
        let Shape {
            items,
            buckets,
            deletes,
            filters,
            bucket_size,
            max_iterations,
            expansion,
        } = *shape;
        let valid = buckets.is_power_of_two()
            && buckets <= MAX_NUM_BUCKETS
            && (1..=MAX_BUCKET_SIZE as u64).contains(&bucket_size)
            && (1..=MAX_ITERATIONS as u64).contains(&max_iterations)
            && expansion <= u16::MAX as u64
            && (1..=MAX_NUM_FILTERS as u64).contains(&filters)
            && (filters == 1 || expansion > 0);
        if !valid {
            return None;
        }
        let shell = Self {
            num_buckets: buckets,
            num_items: items,
            num_deletes: deletes,
            bucket_size: bucket_size as u16,
            max_iterations: max_iterations as u16,
            expansion: expansion as u16,
            hashing,
            filters: SubFilters::default(),
        };
        let mut needed = FILTER_STRUCT_BYTES
            + STRUCT_BYTES_BEYOND
            + SubFilters::bookkeeping_bytes_exact(filters as usize);
        let mut sizes = Vec::new();
        for j in 0..filters as usize {
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

    /// The bucket counts of the sub-filters a shape describes, oldest first, if it
    /// describes a filter (see [`zeroed`](Self::zeroed) for the checks).
    pub fn sub_filter_buckets_of(shape: &Shape) -> Option<Vec<u64>> {
        Self::shell(shape, Hashing::Murmur64A).map(|(_, sizes, _)| sizes)
    }

    /// A filter of the shape with every slot empty (what `CF.LOADCHUNK key 1 header`
    /// makes, before its data chunks): the shape and the memory it asks for are checked
    /// before anything is allocated. [`CreateError::Invalid`] for a shape that is no
    /// filter: buckets not a power of two or past 2⁵⁶ − 1, a bucket size outside 1 to 255,
    /// no iterations, no or more than 65535 sub-filters, several without an expansion, a
    /// sub-filter too large to count.
    ///
    /// ```
    /// use bloomkit::cuckoo::redisbloom::{CreateError, Hashing, RedisBloomCuckoo, Shape};
    /// let shape = Shape { items: 0, buckets: 4, deletes: 0, filters: 3, bucket_size: 2,
    ///                     max_iterations: 20, expansion: 2 };
    /// let cf = RedisBloomCuckoo::zeroed(&shape, Hashing::Murmur64A, &u64::MAX).unwrap();
    /// assert_eq!(cf.memory_bytes(), 40 + 3 * 16 + (4 + 8 + 16) * 2);
    /// let no_growth = Shape { expansion: 0, ..shape };
    /// assert_eq!(RedisBloomCuckoo::zeroed(&no_growth, Hashing::Murmur64A, &u64::MAX),
    ///            Err(CreateError::Invalid));
    /// // The budget is asked for what the filter will hold, its bookkeeping included.
    /// assert_eq!(RedisBloomCuckoo::zeroed(&shape, Hashing::Murmur64A, &100u64),
    ///            Err(CreateError::TooLarge(cf.footprint_bytes())));
    /// ```
    pub fn zeroed<B: GrowthBudget>(
        shape: &Shape,
        hashing: Hashing,
        budget: &B,
    ) -> Result<Self, CreateError<B::Refusal>> {
        let (mut cf, sizes, needed) = Self::shell(shape, hashing).ok_or(CreateError::Invalid)?;
        budget.check(0, needed).map_err(CreateError::TooLarge)?;
        cf.filters
            .try_reserve_exact(sizes.len())
            .map_err(|_| CreateError::Invalid)?;
        for b in sizes {
            let f = SubFilter::zeroed(b, cf.bucket_size).ok_or(CreateError::Invalid)?;
            cf.filters.push(f);
        }
        Ok(cf)
    }

    /// A filter of the shape whose sub-filters `read` supplies, oldest first: it is asked
    /// for each with the bucket count the shape gives it and answers `(buckets, slots)`
    /// (an RDB record's, a dump's). `None` — and nothing kept — for a shape that is no
    /// filter, one the budget refuses (checked before the first `read`), a `read` that
    /// fails, or a sub-filter of another size than the shape gives.
    pub fn from_sub_filters<B: GrowthBudget>(
        shape: &Shape,
        hashing: Hashing,
        budget: &B,
        mut read: impl FnMut(u64) -> Option<(u64, Vec<u8>)>,
    ) -> Option<Self> {
        let (mut cf, sizes, needed) = Self::shell(shape, hashing)?;
        budget.check(0, needed).ok()?;
        cf.filters.try_reserve_exact(sizes.len()).ok()?;
        for want in sizes {
            let (buckets, data) = read(want)?;
            if buckets != want || data.len() as u64 != buckets * shape.bucket_size {
                return None;
            }
            cf.filters.push(SubFilter::with_data(buckets, data));
        }
        Some(cf)
    }

    /// The shape: what a `CF.SCANDUMP` header holds.
    pub fn shape(&self) -> Shape {
        Shape {
            items: self.num_items,
            buckets: self.num_buckets,
            deletes: self.num_deletes,
            filters: self.filters.len() as u64,
            bucket_size: self.bucket_size as u64,
            max_iterations: self.max_iterations as u64,
            expansion: self.expansion as u64,
        }
    }

    /// The same table read with another hashing: for an empty filter, the one RedisBloom
    /// 1.1 to 2.0 would have reserved ([`Hashing::Murmur2`]). Fingerprints cannot be
    /// rehashed, so a filter with items then answers for other items.
    pub fn with_hashing(mut self, hashing: Hashing) -> Self {
        self.hashing = hashing;
        self
    }

    /// Sets the counts of items and deletes: counters, which a header may claim anything
    /// for (see [`RedisBloomCuckoo`]).
    pub fn set_counts(&mut self, items: u64, deletes: u64) {
        self.num_items = items;
        self.num_deletes = deletes;
    }

    /// Slots in all sub-filters.
    pub fn num_slots(&self) -> u64 {
        self.filters.num_slots()
    }

    /// Slots in use, in all sub-filters.
    pub fn used_slots(&self) -> u64 {
        self.filters().iter().map(SubFilter::used_slots).sum()
    }

    /// Inserts a fingerprint held in `bucket` of the first sub-filter (as an item whose
    /// hash is `bucket`), with the expansion set to `expansion` first: whether it went in.
    /// For a table written without RedisBloom's rules (a bloomkit file's victim slot).
    pub(crate) fn insert_fingerprint(&mut self, bucket: u64, fp: u8, expansion: u16) -> bool {
        self.expansion = expansion;
        let p = Lookup {
            h1: bucket,
            h2: self.hashing.alt(fp, bucket),
            fp,
        };
        matches!(self.insert_lookup(&p, &Unlimited), Insert::Inserted)
    }

    /// Empties every slot, drops every sub-filter but the first and zeroes the counts, as a
    /// filter just reserved.
    pub fn clear(&mut self) {
        self.filters.truncate(1);
        let len = self.filters.get(0).data().len();
        self.filters
            .write_with(0, 0..len, |slots| slots.fill(EMPTY));
        self.num_items = 0;
        self.num_deletes = 0;
    }

    /// The data chunk at SCANDUMP iterator `iter` ≥ 1 and the next iterator, or `None` past
    /// the end. A chunk never crosses a sub-filter and has at most `max_chunk` bytes.
    pub fn chunk(&self, iter: u64, max_chunk: u64) -> Option<(u64, &[u8])> {
        let (j, offset) = self.locate(iter.checked_sub(1)?)?;
        let data = self.filters.get(j).data();
        let n = (data.len() as u64 - offset).min(max_chunk.max(1));
        let start = offset as usize;
        Some((iter + n, &data[start..start + n as usize]))
    }

    /// The sub-filter holding byte `offset` of the sub-filters' slots laid end to end, and
    /// the offset within it. Sub-filter j has buckets · expansionʲ buckets (growth makes it
    /// so, loads refuse any other size): with expansion 1 every one has the first one's
    /// size, and the sub-filter is a division away — a filter of 65535 sub-filters has as
    /// many SCANDUMP chunks, and a walk from the first for each took 2.9 s of server time
    /// for the whole SCANDUMP (`INFO commandstats`). With a larger expansion there are at
    /// most 57 sub-filters (each at least twice the one before, up to 2⁵⁶ buckets).
    fn locate(&self, mut offset: u64) -> Option<(usize, u64)> {
        if self.expansion == 1 {
            let len = self.filters.get(0).data().len() as u64;
            let j = usize::try_from(offset.checked_div(len)?).ok()?;
            let within = offset % len;
            // Every path that makes a filter gives it these sizes; the test keeps a
            // sub-filter of any other size from being read past its end.
            return (j < self.filters.len() && within < self.filters.get(j).data().len() as u64)
                .then_some((j, within));
        }
        for (j, f) in self.filters().iter().enumerate() {
            let len = f.data().len() as u64;
            if offset < len {
                return Some((j, offset));
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
        let Some(offset) = iter.checked_sub(data.len() as u64 + 1) else {
            return false;
        };
        if data.is_empty() {
            return false;
        }
        let Some((j, offset)) = self.locate(offset) else {
            return false;
        };
        if offset + data.len() as u64 > self.filters.get(j).data().len() as u64 {
            return false;
        }
        let start = offset as usize;
        self.filters
            .write_with(j, start..start + data.len(), |slots| {
                slots.copy_from_slice(data)
            });
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// What a filter holds beyond RedisBloom's count: loaded whole, its list and bitset as
    /// long as they must be; grown, each doubled when full (and never past 65535 entries
    /// and 1024 words, so a filter grown to its 65535 holds what one loaded does).
    #[test]
    fn bookkeeping_is_the_struct_the_list_and_the_bitset_beyond_redisbloom_s_count() {
        use std::mem::size_of;
        let entry = size_of::<SubFilter>() as u64;
        let beyond = size_of::<RedisBloomCuckoo>() as u64 - FILTER_STRUCT_BYTES;
        let shape = Shape {
            items: 0,
            buckets: 2,
            deletes: 0,
            filters: 65535,
            bucket_size: 1,
            max_iterations: 20,
            expansion: 1,
        };
        let loaded = RedisBloomCuckoo::zeroed(&shape, Hashing::Murmur64A, &Unlimited).unwrap();
        assert_eq!(loaded.memory_bytes(), 40 + 65535 * (16 + 2));
        assert_eq!(
            loaded.bookkeeping_bytes(),
            beyond + 65535 * (entry - 16) + 1024 * 8
        );
        #[cfg(target_pointer_width = "64")]
        assert_eq!(
            (entry, beyond, loaded.bookkeeping_bytes()),
            (40, 48, 1_581_080),
            "the numbers the docs give"
        );
        assert_eq!(slots::grown(32768, 32769, MAX_NUM_FILTERS), MAX_NUM_FILTERS);
        assert_eq!(slots::grown(512, 513, MAX_NUM_FILTERS.div_ceil(64)), 1024);

        // One item grows the filter by a sub-filter of 2 slots each 2 copies (or 1).
        let mut cf = RedisBloomCuckoo::new(2, 1, 20, 1, &Unlimited).unwrap();
        assert_eq!(cf.bookkeeping_bytes(), beyond + (entry - 16) + 8);
        while cf.filters().len() < 1000 {
            assert_eq!(cf.insert_with(b"1 ", &Unlimited), Insert::Inserted);
        }
        assert_eq!(
            cf.bookkeeping_bytes(),
            beyond + 1024 * entry - 1000 * 16 + 16 * 8,
            "a list of 1024 entries, 16 words"
        );
        assert_eq!(
            cf.footprint_bytes(),
            cf.memory_bytes() + cf.bookkeeping_bytes()
        );
        // A compaction drops sub-filters, not the list's capacity.
        let before = cf.bookkeeping_bytes();
        while cf.filters().len() == 1000 {
            assert!(cf.delete(b"1 "));
        }
        assert!(cf.filters().len() < 1000);
        assert_eq!(
            cf.bookkeeping_bytes(),
            before + 16 * (1000 - cf.filters().len() as u64)
        );
        // A load holds what it must.
        let n = cf.filters().len() as u64;
        let mut next = cf.filters().iter();
        let back =
            RedisBloomCuckoo::from_sub_filters(&cf.shape(), cf.hashing(), &Unlimited, |_| {
                next.next().map(|f| (f.num_buckets(), f.data().to_vec()))
            })
            .unwrap();
        assert_eq!(
            back.bookkeeping_bytes(),
            beyond + n * (entry - 16) + n.div_ceil(64) * 8
        );
    }

    /// RedisBloom 2.0 fills only the newest sub-filter: a slot freed in an older one stays
    /// free when items are added.
    #[test]
    fn inserts_fill_the_newest_sub_filter_only() {
        let mut cf = RedisBloomCuckoo::new(16, 2, 500, 1, &Unlimited)
            .unwrap()
            .with_hashing(Hashing::Murmur2);
        let mut i = 0u32;
        while cf.filters().len() < 2 {
            cf.insert_with(&i.to_le_bytes(), &Unlimited);
            i += 1;
        }
        let used = |cf: &RedisBloomCuckoo| cf.filters()[0].used_slots();
        let before = used(&cf);
        assert!((0..i).any(|k| cf
            .filters
            .remove(0, &Lookup::of(&k.to_le_bytes(), cf.hashing), 2)));
        let mut k = 1000u32;
        while cf.filters().len() < 5 {
            cf.insert_with(&k.to_le_bytes(), &Unlimited);
            k += 1;
        }
        assert_eq!(used(&cf), before - 1);
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use crate::codec::Persist;
    use crate::cuckoo::{CuckooFilter, Layout};
    use proptest::prelude::*;
    use std::collections::HashMap;

    /// Random adds and deletes of added items on small filters that grow many times: every
    /// item added more often than deleted is found and counted at least that often — no
    /// eviction, rollback, growth, delete or compaction loses one — and the count of items
    /// is the slots in use.
    fn check_no_item_is_lost(
        bucket_size: u16,
        expansion: u16,
        max_iterations: u16,
        ops: &[(bool, u16)],
    ) -> Result<(), TestCaseError> {
        let mut cf =
            RedisBloomCuckoo::new(8, bucket_size, max_iterations, expansion, &Unlimited).unwrap();
        let mut held: HashMap<u16, u64> = HashMap::new();
        for &(add, item) in ops {
            let bytes = item.to_le_bytes();
            if add || held.get(&item).copied().unwrap_or(0) == 0 {
                prop_assert_eq!(cf.insert_with(&bytes, &Unlimited), Insert::Inserted);
                *held.entry(item).or_default() += 1;
            } else {
                prop_assert!(cf.delete(&bytes), "{item} was added and is not deleted");
                *held.get_mut(&item).unwrap() -= 1;
            }
        }
        for (item, &n) in &held {
            let bytes = item.to_le_bytes();
            prop_assert!(n == 0 || cf.contains(&bytes), "{item} lost");
            prop_assert!(cf.count(&bytes) >= n, "{item}: {} < {n}", cf.count(&bytes));
        }
        prop_assert_eq!(cf.num_items(), held.values().sum::<u64>());
        prop_assert_eq!(cf.used_slots(), cf.num_items());
        // Sub-filter j has buckets · expansionʲ buckets.
        for (j, f) in cf.filters().iter().enumerate() {
            prop_assert_eq!(
                f.num_buckets(),
                cf.num_buckets() * (cf.expansion() as u64).pow(j as u32)
            );
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn no_added_item_is_lost_across_growth_deletes_and_compaction(
            bucket_size in 1u16..=4,
            expansion in prop::sample::select(vec![1u16, 2, 4]),
            max_iterations in 1u16..=30,
            ops in prop::collection::vec((prop::bool::weighted(0.7), 0u16..300), 1..400),
        ) {
            check_no_item_is_lost(bucket_size, expansion, max_iterations, &ops)?;
        }

        /// A grown filter saved in a bloomkit file loads back equal (every sub-filter, the
        /// counts, the expansion), answers the same, and grows on as the original does.
        #[test]
        fn a_grown_filter_round_trips_through_its_file_and_grows_on_alike(
            bucket_size in 1u32..=4,
            expansion in prop::sample::select(vec![1u32, 2, 4]),
            items in 20u32..300,
            deletes in 0u32..20,
        ) {
            let mut f = CuckooFilter::builder()
                .layout(Layout::RedisBloom)
                .num_buckets(4)
                .bucket_size(bucket_size)
                .max_kicks(20)
                .expansion(expansion)
                .build()
                .unwrap();
            for i in 0..items {
                f.insert(&i).unwrap();
            }
            for i in 0..deletes.min(items) {
                f.remove(&(i * 3 % items)).ok();
            }
            prop_assert!(items < 40 || f.num_sub_filters() > 1);
            let mut back = CuckooFilter::from_bytes(&f.to_bytes()).unwrap();
            prop_assert!(back == f);
            prop_assert!((0..2 * items).all(|i| back.contains(&i) == f.contains(&i)));
            for i in 1000..1100u32 {
                f.insert(&i).unwrap();
                back.insert(&i).unwrap();
            }
            prop_assert!(back == f);
        }

    }

    /// Shapes a header or file may claim, every combination of edge values: any that is no
    /// filter is refused before anything is allocated (no panic, no abort); what is
    /// accepted has the sub-filters the shape gives, within the budget.
    #[test]
    fn hostile_shapes_are_refused_before_allocating() {
        let budget = 1u64 << 20;
        for buckets in [
            0u64,
            1,
            2,
            3,
            4,
            1 << 20,
            1 << 40,
            1 << 55,
            (1 << 56) - 1,
            1 << 56,
            u64::MAX,
        ] {
            for filters in [0u64, 1, 2, 3, 17, 40, 65535, 65536, u64::MAX] {
                for bucket_size in [0u64, 1, 2, 255, 256, u64::MAX] {
                    for max_iterations in [0u64, 1, 65535, 65536] {
                        for expansion in [0u64, 1, 2, 3, 4, 32768, 65535, 65536] {
                            let shape = Shape {
                                items: 0,
                                buckets,
                                deletes: 0,
                                filters,
                                bucket_size,
                                max_iterations,
                                expansion,
                            };
                            let valid = buckets.is_power_of_two()
                                && buckets < 1 << 56
                                && (1..=255).contains(&bucket_size)
                                && (1..=65535).contains(&max_iterations)
                                && (1..=65535).contains(&filters)
                                && (filters == 1 || expansion > 0)
                                && expansion <= 65535;
                            match RedisBloomCuckoo::zeroed(&shape, Hashing::Murmur64A, &budget) {
                                Ok(cf) => {
                                    assert!(valid, "{shape:?}");
                                    assert_eq!(cf.filters().len() as u64, filters);
                                    assert!(cf.memory_bytes() <= budget);
                                }
                                Err(CreateError::TooLarge(needed)) => {
                                    assert!(valid && needed > budget, "{shape:?}")
                                }
                                // Valid fields can still describe sub-filters past 2⁵⁶ buckets.
                                Err(CreateError::Invalid) => assert!(
                                    !valid
                                        || RedisBloomCuckoo::sub_filter_buckets_of(&shape)
                                            .is_none(),
                                    "{shape:?}"
                                ),
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn deletes_never_take_another_items_copy() {
        // Every item added twice, then each deleted once: all still there, counted once more.
        let mut cf = RedisBloomCuckoo::new(8, 2, 20, 2, &Unlimited).unwrap();
        for round in 0..2 {
            for i in 0..200u32 {
                assert_eq!(
                    cf.insert_with(&i.to_le_bytes(), &Unlimited),
                    Insert::Inserted,
                    "{round}"
                );
            }
        }
        assert!(cf.filters().len() > 3);
        for i in 0..200u32 {
            assert!(cf.delete(&i.to_le_bytes()));
        }
        assert!((0..200u32).all(|i| cf.contains(&i.to_le_bytes())));
        assert_eq!(cf.num_items(), 200);
    }

    #[test]
    fn a_grown_files_damaged_parameters_and_payload_are_refused() {
        let mut f = CuckooFilter::builder()
            .layout(Layout::RedisBloom)
            .num_buckets(4)
            .expansion(2)
            .build()
            .unwrap();
        for i in 0..100u32 {
            f.insert(&i).unwrap();
        }
        assert!(f.num_sub_filters() > 2);
        let good = f.to_bytes();
        // Every truncation is an error, never a panic.
        for len in 0..good.len() {
            assert!(CuckooFilter::from_bytes(&good[..len]).is_err(), "{len}");
        }
        // Every single byte flipped: an error (the checksum) or, never, a panic.
        for at in 0..good.len() {
            let mut bad = good.clone();
            bad[at] ^= 0x5a;
            let _ = CuckooFilter::from_bytes(&bad);
        }
    }
}

/// The filter against a model written from the rules alone — every search a plain scan of
/// every sub-filter, newest to oldest (oldest first for compaction), nothing kept beside the
/// slots — over random inserts, unique inserts, deletes, compactions and reloads on small
/// filters that grow to many sub-filters: the same reply and the same slots after every
/// step, so the bitset of open sub-filters ([`slots`]) changes no choice.
#[cfg(test)]
mod model {
    use super::*;
    use proptest::prelude::*;

    /// Sub-filters as (buckets, slots), oldest first, and the counters; the capacities of
    /// the filter's list of sub-filters and of its bitset (in words).
    #[derive(Clone, Debug)]
    struct Model {
        filters: Vec<(u64, Vec<u8>)>,
        list_cap: usize,
        word_cap: usize,
        buckets: u64,
        bs: u16,
        max_iterations: u16,
        expansion: u16,
        legacy: bool,
        items: u64,
        deletes: u64,
    }

    impl Model {
        fn memory(&self) -> u64 {
            40 + self
                .filters
                .iter()
                .map(|f| 16 + f.1.len() as u64)
                .sum::<u64>()
        }

        /// What the filter holds: RedisBloom's count, then the struct, the list and the
        /// bitset beyond it.
        fn footprint(&self) -> u64 {
            let entry = std::mem::size_of::<SubFilter>() as u64;
            self.memory() + std::mem::size_of::<RedisBloomCuckoo>() as u64 - 40
                + self.list_cap as u64 * entry
                + self.word_cap as u64 * 8
                - 16 * self.filters.len() as u64
        }

        /// The capacities with room for one more sub-filter: each doubled when full (at
        /// least what it must hold), at most 65535 entries and 1024 words.
        fn capacities_with_one_more(&self) -> (usize, usize) {
            let n = self.filters.len() + 1;
            let double = |cap: usize, need: usize, max: usize| {
                if need <= cap {
                    cap
                } else {
                    (cap * 2).min(max).max(need)
                }
            };
            (
                double(self.list_cap, n, 65535),
                double(self.word_cap, n.div_ceil(64), 1024),
            )
        }

        /// A load: the list and the bitset exactly as long as they must be.
        fn reloaded(&mut self) {
            self.list_cap = self.filters.len();
            self.word_cap = self.filters.len().div_ceil(64);
        }

        /// The first free slot of bucket h₁, else h₂, of sub-filter j.
        fn free_slot(&self, j: usize, p: &Lookup) -> Option<usize> {
            let (n, data) = &self.filters[j];
            let bs = self.bs as usize;
            [p.h1, p.h2].into_iter().find_map(|h| {
                let start = bucket_index(h, *n) as usize * bs;
                (start..start + bs).find(|&at| data[at] == EMPTY)
            })
        }

        fn holds(&self, p: &Lookup) -> bool {
            let bs = self.bs as usize;
            self.filters.iter().any(|(n, data)| {
                [p.h1, p.h2].into_iter().any(|h| {
                    let start = bucket_index(h, *n) as usize * bs;
                    data[start..start + bs].contains(&p.fp)
                })
            })
        }

        fn kick(&mut self, p: &Lookup) -> bool {
            let hashing = if self.legacy {
                Hashing::Murmur2
            } else {
                Hashing::Murmur64A
            };
            let bs = self.bs as u64;
            let (n, data) = self.filters.last_mut().unwrap();
            let n = *n;
            let (mut fp, mut victim, mut index) = (p.fp, 0u64, bucket_index(p.h1, n));
            for _ in 0..self.max_iterations {
                std::mem::swap(&mut data[(index * bs + victim) as usize], &mut fp);
                index = bucket_index(hashing.alt(fp, index), n);
                let start = (index * bs) as usize;
                if let Some(at) = (start..start + bs as usize).find(|&at| data[at] == EMPTY) {
                    data[at] = fp;
                    return true;
                }
                victim = (victim + 1) % bs;
            }
            for _ in 0..self.max_iterations {
                victim = (victim + bs - 1) % bs;
                index = bucket_index(hashing.alt(fp, index), n);
                std::mem::swap(&mut data[(index * bs + victim) as usize], &mut fp);
            }
            false
        }

        fn insert(&mut self, p: &Lookup, budget: u64) -> Insert<u64> {
            loop {
                let lowest = if self.legacy {
                    self.filters.len() - 1
                } else {
                    0
                };
                for j in (lowest..self.filters.len()).rev() {
                    if let Some(at) = self.free_slot(j, p) {
                        self.filters[j].1[at] = p.fp;
                        self.items = self.items.saturating_add(1);
                        return Insert::Inserted;
                    }
                }
                if self.kick(p) {
                    self.items = self.items.saturating_add(1);
                    return Insert::Inserted;
                }
                if self.expansion == 0 {
                    return Insert::NoSpace;
                }
                if self.filters.len() >= MAX_NUM_FILTERS {
                    return Insert::CannotGrow;
                }
                let buckets = self.buckets * (self.expansion as u64).pow(self.filters.len() as u32);
                let mut grown = self.clone();
                (grown.list_cap, grown.word_cap) = self.capacities_with_one_more();
                grown
                    .filters
                    .push((buckets, vec![EMPTY; (buckets * self.bs as u64) as usize]));
                let needed = grown.footprint();
                if needed > budget {
                    return Insert::TooLarge(needed);
                }
                *self = grown;
            }
        }

        fn delete(&mut self, p: &Lookup) -> bool {
            let n = self.filters.len();
            let bs = self.bs as usize;
            for k in 0..n {
                let j = if self.legacy { k } else { n - 1 - k };
                let (buckets, data) = &mut self.filters[j];
                let slot = [p.h1, p.h2].into_iter().find_map(|h| {
                    let start = bucket_index(h, *buckets) as usize * bs;
                    (start..start + bs).find(|&at| data[at] == p.fp)
                });
                if let Some(at) = slot {
                    data[at] = EMPTY;
                    self.items = self.items.saturating_sub(1);
                    self.deletes = self.deletes.saturating_add(1);
                    if n > 1 && self.deletes as f64 > self.items as f64 * 0.10 {
                        self.compact(self.legacy);
                    }
                    return true;
                }
            }
            false
        }

        fn compact(&mut self, cont: bool) {
            for index in (1..self.filters.len()).rev() {
                let mut all_moved = true;
                let (n, bs) = (self.filters[index].0, self.bs as u64);
                for at in 0..(n * bs) as usize {
                    let fp = self.filters[index].1[at];
                    if fp == EMPTY {
                        continue;
                    }
                    let bucket = at as u64 / bs;
                    let hashing = if self.legacy {
                        Hashing::Murmur2
                    } else {
                        Hashing::Murmur64A
                    };
                    let p = Lookup {
                        h1: bucket,
                        h2: hashing.alt(fp, bucket),
                        fp,
                    };
                    match (0..index).find_map(|j| self.free_slot(j, &p).map(|s| (j, s))) {
                        Some((j, s)) => {
                            self.filters[j].1[s] = fp;
                            self.filters[index].1[at] = EMPTY;
                        }
                        None => all_moved = false,
                    }
                }
                if all_moved && index == self.filters.len() - 1 {
                    self.filters.pop();
                }
                if !all_moved && !cont {
                    break;
                }
            }
            self.deletes = 0;
        }
    }

    #[derive(Clone, Copy, Debug)]
    enum Op {
        Add(u8),
        AddUnique(u8),
        Delete(u8),
        Compact(bool),
        /// Saved and loaded back: as an RDB record (whole sub-filters), or as SCANDUMP
        /// chunks of at most this many bytes into an empty filter of the header's shape.
        Reload(Option<u64>),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            12 => any::<u8>().prop_map(Op::Add),
            2 => any::<u8>().prop_map(Op::AddUnique),
            3 => any::<u8>().prop_map(Op::Delete),
            1 => any::<bool>().prop_map(Op::Compact),
            1 => prop::option::of(1u64..6).prop_map(Op::Reload),
        ]
    }

    fn reload(cf: &RedisBloomCuckoo, chunk: Option<u64>) -> RedisBloomCuckoo {
        let shape = cf.shape();
        match chunk {
            None => {
                let mut next = cf.filters().iter();
                RedisBloomCuckoo::from_sub_filters(&shape, cf.hashing(), &Unlimited, |_| {
                    next.next().map(|f| (f.num_buckets(), f.data().to_vec()))
                })
                .unwrap()
            }
            Some(max) => {
                let mut back = RedisBloomCuckoo::zeroed(&shape, cf.hashing(), &Unlimited).unwrap();
                let mut iter = 1;
                while let Some((next, data)) = cf.chunk(iter, max) {
                    assert!(back.load_chunk(next as i64, data));
                    iter = next;
                }
                back
            }
        }
    }

    /// A filter to test: `CF.RESERVE` of capacity 2·bs (4·bs if `double`), items of
    /// `distinct` values, growth within `budget` bytes; `legacy`: RedisBloom 2.0's hashing
    /// and table rules.
    #[derive(Clone, Copy, Debug)]
    struct Setup {
        bs: u16,
        double: bool,
        expansion: u16,
        max_iterations: u16,
        legacy: bool,
        budget: u64,
        distinct: u8,
    }

    /// A budget of at most `limit` bytes that adds up the growth it is told of, as the
    /// Redis module counts what its values hold.
    struct Counting {
        limit: u64,
        grown: std::cell::Cell<u64>,
    }

    impl GrowthBudget for Counting {
        type Refusal = u64;
        fn check(&self, held: u64, needed: u64) -> Result<(), u64> {
            self.limit.check(held, needed)
        }
        fn grew(&self, bytes: u64) {
            self.grown.set(self.grown.get() + bytes);
        }
    }

    fn check_against_model(setup: Setup, ops: &[Op]) -> Result<(), TestCaseError> {
        let Setup {
            bs,
            double,
            expansion,
            max_iterations,
            legacy,
            budget,
            distinct,
        } = setup;
        let hashing = if legacy {
            Hashing::Murmur2
        } else {
            Hashing::Murmur64A
        };
        let capacity = 2 * bs as u64 * if double { 2 } else { 1 };
        let mut cf = RedisBloomCuckoo::new(capacity, bs, max_iterations, expansion, &Unlimited)
            .unwrap()
            .with_hashing(hashing);
        let mut model = Model {
            filters: vec![(cf.num_buckets(), cf.filters()[0].data().to_vec())],
            list_cap: 1,
            word_cap: 1,
            buckets: cf.num_buckets(),
            bs,
            max_iterations,
            expansion: cf.expansion(),
            legacy,
            items: 0,
            deletes: 0,
        };
        let budget = Counting {
            limit: budget,
            grown: Default::default(),
        };
        // What the Redis module would count the filter for: its footprint when made, plus
        // each growth the budget is told of, less what a delete or compaction drops (the
        // module measures around them), and the footprint of a filter loaded.
        let mut counted = cf.footprint_bytes();
        for (step, &op) in ops.iter().enumerate() {
            let lookup = |item: u8| Lookup::of(&[item, 1], hashing);
            let before = cf.footprint_bytes();
            budget.grown.set(0);
            // Items of `distinct` values: few, and their copies fill sub-filter after
            // sub-filter.
            let op = match op {
                Op::Add(item) => Op::Add(item % distinct),
                Op::AddUnique(item) => Op::AddUnique(item % distinct),
                Op::Delete(item) => Op::Delete(item % distinct),
                other => other,
            };
            match op {
                Op::Add(item) => {
                    let p = lookup(item);
                    prop_assert_eq!(
                        cf.insert_with(&[item, 1], &budget),
                        model.insert(&p, budget.limit)
                    );
                }
                Op::AddUnique(item) => {
                    let p = lookup(item);
                    let want = if model.holds(&p) {
                        Insert::Exists
                    } else {
                        model.insert(&p, budget.limit)
                    };
                    prop_assert_eq!(cf.insert_unique_with(&[item, 1], &budget), want);
                }
                Op::Delete(item) => {
                    prop_assert_eq!(cf.delete(&[item, 1]), model.delete(&lookup(item)));
                    counted -= before - cf.footprint_bytes();
                }
                Op::Compact(cont) => {
                    cf.compact(cont);
                    model.compact(cont);
                    counted -= before - cf.footprint_bytes();
                }
                Op::Reload(chunk) => {
                    let back = reload(&cf, chunk);
                    prop_assert!(back.filters.bookkeeping_holds(), "step {}: loaded", step);
                    prop_assert!(back == cf, "step {}: the load differs", step);
                    cf = back;
                    model.reloaded();
                    counted = cf.footprint_bytes();
                }
            }
            counted += budget.grown.get();
            prop_assert_eq!(
                cf.footprint_bytes(),
                model.footprint(),
                "step {}: {:?}",
                step,
                op
            );
            prop_assert_eq!(
                cf.footprint_bytes(),
                cf.memory_bytes() + cf.bookkeeping_bytes()
            );
            prop_assert_eq!(counted, cf.footprint_bytes(), "step {}: {:?}", step, op);
            prop_assert!(cf.filters.bookkeeping_holds(), "step {}: {:?}", step, op);
            prop_assert_eq!(
                cf.filters().len(),
                model.filters.len(),
                "step {}: {:?}",
                step,
                op
            );
            for (f, (n, data)) in cf.filters().iter().zip(&model.filters) {
                prop_assert_eq!(f.num_buckets(), *n);
                prop_assert_eq!(f.data(), &data[..], "step {}: {:?}", step, op);
            }
            prop_assert_eq!(
                (cf.num_items(), cf.num_deletes()),
                (model.items, model.deletes)
            );
            prop_assert_eq!(cf.memory_bytes(), model.memory());
            prop_assert_eq!(
                cf.num_slots(),
                model.memory() - 40 - 16 * model.filters.len() as u64
            );
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]

        #[test]
        fn the_open_sub_filters_bitset_chooses_the_slots_a_full_scan_does(
            bs in 1u16..=4,
            double in any::<bool>(),
            expansion in 1u16..=2,
            max_iterations in 1u16..=6,
            legacy in prop::bool::weighted(0.2),
            budget in 300u64..8000,
            distinct in 1u8..24,
            ops in prop::collection::vec(op(), 1..700),
        ) {
            let setup = Setup { bs, double, expansion, max_iterations, legacy, budget, distinct };
            check_against_model(setup, &ops)?;
        }
    }

    /// One item added until the filter may not grow (the flow test's shape, smaller): every
    /// sub-filter but the newest is full, across several words of the bitset.
    #[test]
    fn one_item_fills_many_sub_filters_as_the_model_does() {
        let setup = Setup {
            bs: 1,
            double: false,
            expansion: 1,
            max_iterations: 20,
            legacy: false,
            // 256 sub-filters of 2 slots fit with their bookkeeping (a list of 256 entries,
            // 4 words of bitset: 10 872 bytes), not a 257th (the list doubles to 512).
            budget: 11_000,
            distinct: 255,
        };
        let ops = vec![Op::Add(7); 600];
        check_against_model(setup, &ops).unwrap();
        let mut ops = vec![Op::Add(7); 300];
        ops.extend([Op::Delete(7); 40]);
        ops.extend([Op::Add(7), Op::Add(9), Op::Reload(Some(3)), Op::Add(7)]);
        check_against_model(setup, &ops).unwrap();
    }
}
