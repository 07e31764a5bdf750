//! The paper's table (Fan, Andersen, Kaminsky & Mitzenmacher, "Cuckoo Filter: Practically
//! Better Than Bloom", CoNEXT 2014): B buckets of b slots of f-bit fingerprints in one
//! packed array, partial-key cuckoo hashing, a breadth-first search for large tables, the
//! random walk of evictions and the victim slot. The rules are in the
//! [module documentation](super); this file is their code, and
//! [`CuckooFilter`](super::CuckooFilter) of [`Layout::Paper`](super::Layout::Paper) holds one
//! table of this kind.

use crate::bits::PackedCounters;
use crate::error::Error;
use crate::filter::Kind;
use crate::hash::{reduce, Hashing, Item};
use crate::lookahead;

use super::{LARGE_TABLE_BYTES, SEARCH_DEPTH};

/// ⌊2⁶⁴/φ⌋, the multiplier of the fingerprint hash h(fp) (Fibonacci hashing).
const FINGERPRINT_MULTIPLIER: u64 = 0x9E37_79B9_7F4A_7C15;

/// Mixed into the filter's seed to seed the eviction generator, so that it does not start
/// from the same state as anything else derived from the seed.
pub(super) const RNG_SALT: u64 = 0x6375_636b_6f6f_2121; // "cuckoo!!"

/// A fingerprint evicted when the kicks ran out, waiting outside the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Victim {
    /// One of the fingerprint's two buckets.
    pub(super) bucket: u64,
    pub(super) fingerprint: u32,
}

/// The paper's table, with what its inserts need: the shape, the hashing, the count, the
/// victim slot and the eviction generator.
#[derive(Clone, PartialEq)]
pub(super) struct PaperTable {
    /// `num_buckets · bucket_size` slots of `fingerprint_bits` bits; 0 is an empty slot.
    pub(super) slots: PackedCounters,
    pub(super) num_buckets: u64,
    pub(super) bucket_size: u32,
    pub(super) fingerprint_bits: u32,
    pub(super) max_kicks: u32,
    pub(super) hashing: Hashing,
    /// Fingerprints held, in the table and the victim slot.
    pub(super) len: u64,
    pub(super) victim: Option<Victim>,
    /// State of the splitmix64 generator that picks evictions.
    pub(super) rng: u64,
}

impl PaperTable {
    /// An empty table of `num_buckets · bucket_size` slots (the caller checked the shape);
    /// its eviction generator starts from the hashing's seed.
    pub(super) fn empty(
        num_buckets: u64,
        bucket_size: u32,
        fingerprint_bits: u32,
        max_kicks: u32,
        hashing: Hashing,
    ) -> Result<Self, Error> {
        Ok(PaperTable {
            slots: PackedCounters::zeros(num_buckets * bucket_size as u64, fingerprint_bits)?,
            num_buckets,
            bucket_size,
            fingerprint_bits,
            max_kicks,
            hashing,
            len: 0,
            victim: None,
            rng: hashing.seed ^ RNG_SALT,
        })
    }

    /// See [`CuckooFilter::insert`](super::CuckooFilter::insert).
    pub(super) fn insert(&mut self, bytes: &[u8]) -> Result<bool, Error> {
        if self.victim.is_some() {
            return Err(self.full_error());
        }
        let (bucket, fingerprint) = self.locate(bytes);
        let other = self.alt_bucket(bucket, fingerprint);
        let new = !self.holds_in(bucket, other, fingerprint);
        self.len += 1;
        self.place(bucket, other, fingerprint);
        Ok(new)
    }

    #[inline]
    pub(super) fn contains(&self, bytes: &[u8]) -> bool {
        let (i1, fingerprint) = self.locate(bytes);
        self.holds(i1, fingerprint)
    }

    /// See [`CuckooFilter::contains_batch_into`](super::CuckooFilter::contains_batch_into).
    pub(super) fn contains_batch_into<I: Item>(&self, items: &[I], out: &mut Vec<bool>) {
        lookahead::pipeline(&mut Queries(self), out, items);
    }

    /// See [`CuckooFilter::insert_batch`](super::CuckooFilter::insert_batch).
    pub(super) fn insert_batch<I: Item>(&mut self, items: &[I]) -> Result<u64, Error> {
        // Huge pages for a large table that this batch writes most pages of (the policy, in
        // `arch`): each insert writes one slot.
        self.slots.advise_bulk_write(items.len() as u64);
        if self.slots.memory_bytes() < LARGE_TABLE_BYTES {
            let mut new = 0;
            for item in items {
                new += item.with_bytes(|bytes| self.insert(bytes))? as u64;
            }
            return Ok(new);
        }
        let mut inserts = Inserts {
            new: 0,
            refused: false,
        };
        lookahead::pipeline(&mut inserts, self, items);
        if inserts.refused {
            return Err(self.full_error());
        }
        Ok(inserts.new)
    }

    /// See [`CuckooFilter::remove`](super::CuckooFilter::remove).
    pub(super) fn remove(&mut self, bytes: &[u8]) -> Result<bool, Error> {
        let (i1, fingerprint) = self.locate(bytes);
        let i2 = self.alt_bucket(i1, fingerprint);
        if self.victim_matches(i1, i2, fingerprint) {
            self.victim = None;
            self.len -= 1;
            return Ok(true);
        }
        let slot = self
            .find_in_bucket(i1, fingerprint)
            .or_else(|| self.find_in_bucket(i2, fingerprint))
            .ok_or(Error::NotPresent)?;
        self.slots.set(slot, 0);
        self.len -= 1;
        if let Some(victim) = self.victim.take() {
            // A slot is free now (perhaps not in the victim's buckets; the kicks may find
            // a path). If not, some fingerprint ends up in the victim slot again.
            let other = self.alt_bucket(victim.bucket, victim.fingerprint);
            self.place(victim.bucket, other, victim.fingerprint);
        }
        Ok(true)
    }

    /// See [`CuckooFilter::count`](super::CuckooFilter::count).
    pub(super) fn count(&self, bytes: &[u8]) -> u32 {
        let (i1, fingerprint) = self.locate(bytes);
        let i2 = self.alt_bucket(i1, fingerprint);
        let mut copies = self.count_in_bucket(i1, fingerprint);
        if i2 != i1 {
            copies += self.count_in_bucket(i2, fingerprint);
        }
        copies + self.victim_matches(i1, i2, fingerprint) as u32
    }

    /// Empties the table and the victim slot and restarts the eviction generator.
    pub(super) fn clear(&mut self) {
        self.slots.clear();
        self.victim = None;
        self.len = 0;
        self.rng = self.hashing.seed ^ RNG_SALT;
    }

    /// Fingerprints in the table (not the victim slot).
    pub(super) fn in_table(&self) -> u64 {
        self.len - self.victim.is_some() as u64
    }

    /// The victim slot, for reports.
    pub(super) fn victim_state(&self) -> &'static str {
        if self.victim.is_some() {
            "occupied (inserts fail until a remove)"
        } else {
            "empty"
        }
    }

    fn full_error(&self) -> Error {
        let slots = self.slots.len();
        Error::Full {
            kind: Kind::Cuckoo,
            reason: format!(
                "an evicted fingerprint waits in the victim slot ({} of {slots} slots used, \
                 load {:.1}%); remove an item or build a larger filter",
                self.in_table(),
                100.0 * self.in_table() as f64 / slots as f64
            ),
        }
    }

    /// The first bucket and the fingerprint of an item's bytes.
    #[inline]
    pub(super) fn locate(&self, bytes: &[u8]) -> (u64, u32) {
        let digest = self.hashing.digest(bytes);
        let bucket = reduce(digest as u64, self.num_buckets);
        let high = (digest >> 64) as u64;
        let fingerprint = (high >> (64 - self.fingerprint_bits)) as u32;
        (bucket, fingerprint.max(1))
    }

    /// The other bucket of a fingerprint stored in `bucket`: `bucket ⊕ h(fp)` for a
    /// power-of-two B, else `(h(fp) − bucket) mod B` (both are their own inverse).
    #[inline]
    pub(super) fn alt_bucket(&self, bucket: u64, fingerprint: u32) -> u64 {
        let n = self.num_buckets;
        let h = reduce((fingerprint as u64).wrapping_mul(FINGERPRINT_MULTIPLIER), n);
        if n.is_power_of_two() {
            bucket ^ h
        } else if h >= bucket {
            h - bucket
        } else {
            h + n - bucket
        }
    }

    /// An item's first bucket, fingerprint and second bucket, with both buckets prefetched:
    /// what the batch calls locate ahead.
    #[inline]
    fn locate_ahead(&self, bytes: &[u8]) -> (u64, u32, u64) {
        let (i1, fingerprint) = self.locate(bytes);
        let i2 = self.alt_bucket(i1, fingerprint);
        let size = self.bucket_size as u64;
        self.slots.prefetch(i1 * size);
        self.slots.prefetch(i2 * size);
        (i1, fingerprint, i2)
    }

    /// Whether `fingerprint` is in bucket `i1`, in its alternate bucket or in the victim slot.
    #[inline]
    fn holds(&self, i1: u64, fingerprint: u32) -> bool {
        self.holds_in(i1, self.alt_bucket(i1, fingerprint), fingerprint)
    }

    /// [`holds`](Self::holds) with the alternate bucket `i2` known.
    #[inline]
    fn holds_in(&self, i1: u64, i2: u64, fingerprint: u32) -> bool {
        // Both buckets read, their slots compared without a branch: the two cache misses
        // overlap, and no branch on a fingerprint match waits for the first.
        let has = |bucket: u64| {
            self.slots_of(bucket).fold(false, |found, slot| {
                found | (self.slots.get(slot) == fingerprint)
            })
        };
        has(i1) | has(i2) | self.victim_matches(i1, i2, fingerprint)
    }

    #[inline]
    fn slots_of(&self, bucket: u64) -> std::ops::Range<u64> {
        let first = bucket * self.bucket_size as u64;
        first..first + self.bucket_size as u64
    }

    #[inline]
    fn find_in_bucket(&self, bucket: u64, fingerprint: u32) -> Option<u64> {
        self.slots_of(bucket)
            .find(|&slot| self.slots.get(slot) == fingerprint)
    }

    fn count_in_bucket(&self, bucket: u64, fingerprint: u32) -> u32 {
        self.slots_of(bucket)
            .filter(|&slot| self.slots.get(slot) == fingerprint)
            .count() as u32
    }

    #[inline]
    fn victim_matches(&self, i1: u64, i2: u64, fingerprint: u32) -> bool {
        self.victim
            .is_some_and(|v| v.fingerprint == fingerprint && (v.bucket == i1 || v.bucket == i2))
    }

    /// Puts the fingerprint into a free slot of `bucket`; false if the bucket is full.
    fn try_put(&mut self, bucket: u64, fingerprint: u32) -> bool {
        match self.find_in_bucket(bucket, 0) {
            Some(slot) => {
                self.slots.set(slot, fingerprint);
                true
            }
            None => false,
        }
    }

    /// Stores a fingerprint whose buckets are `bucket` and its alternate `other`: in a free slot of
    /// either; else, in a table of at least [`LARGE_TABLE_BYTES`], along the shortest chain of
    /// moves that frees one, if a breadth-first search finds one within [`SEARCH_DEPTH`]
    /// moves ([`search_and_move`](Self::search_and_move));
    /// else by the random walk of evictions, and when its kicks run out the last evicted
    /// fingerprint goes to the (empty) victim slot. Never loses a fingerprint.
    fn place(&mut self, bucket: u64, other: u64, fingerprint: u32) {
        debug_assert!(self.victim.is_none());
        debug_assert_eq!(other, self.alt_bucket(bucket, fingerprint));
        if self.try_put(bucket, fingerprint)
            || self.try_put(other, fingerprint)
            || (self.slots.memory_bytes() >= LARGE_TABLE_BYTES
                && self.bucket_size <= 8
                && self.search_and_move(bucket, other, fingerprint))
        {
            return;
        }
        let (mut bucket, mut fingerprint) = if self.next_random() & 1 == 0 {
            (bucket, fingerprint)
        } else {
            (other, fingerprint)
        };
        for _ in 0..self.max_kicks {
            let j = reduce(self.next_random(), self.bucket_size as u64);
            let slot = bucket * self.bucket_size as u64 + j;
            let evicted = self.slots.get(slot);
            self.slots.set(slot, fingerprint);
            fingerprint = evicted;
            bucket = self.alt_bucket(bucket, fingerprint);
            if self.try_put(bucket, fingerprint) {
                return;
            }
        }
        self.victim = Some(Victim {
            bucket,
            fingerprint,
        });
    }

    /// Looks breadth-first for the shortest chain of moves that frees a slot in bucket `b1`
    /// or `b2` (both full), and makes it: the search tree's nodes are buckets, and a node's
    /// children are the other buckets of the fingerprints it holds. The first bucket found
    /// with a free slot ends the chain; each fingerprint on the chain moves into the slot
    /// its successor freed, and `fingerprint` takes the slot freed in `b1` or `b2`. A chain
    /// never visits a bucket twice (so no move overwrites another), and every moved
    /// fingerprint goes to its own other bucket. Each level's buckets are prefetched before
    /// any is read, so their cache misses overlap, where a random walk waits for one miss
    /// per kick (Li, Andersen, Kaminsky & Freedman, "Algorithmic Improvements for Fast
    /// Concurrent Cuckoo Hashing", EuroSys 2014, §4.2, for the idea). Depth 3 reaches
    /// 2 + 2b + 2b² + 2b³ buckets (170 with b = 4); at most `max_kicks` moves.
    fn search_and_move(&mut self, b1: u64, b2: u64, fingerprint: u32) -> bool {
        let depth = SEARCH_DEPTH.min(self.max_kicks);
        if depth == 0 {
            return false;
        }
        let size = self.bucket_size as u64;
        let mut tree = vec![Reached {
            bucket: b1,
            parent: ROOT,
            slot: 0,
        }];
        if b2 != b1 {
            tree.push(Reached {
                bucket: b2,
                parent: ROOT,
                slot: 0,
            });
        }
        let mut level = 0..tree.len();
        for _ in 0..depth {
            let next = tree.len();
            for node in level {
                let from = tree[node].bucket;
                for slot in self.slots_of(from) {
                    let to = self.alt_bucket(from, self.slots.get(slot));
                    if !on_chain(&tree, node, to) {
                        self.slots.prefetch(to * size);
                        tree.push(Reached {
                            bucket: to,
                            parent: node,
                            slot,
                        });
                    }
                }
            }
            level = next..tree.len();
            for node in level.clone() {
                if let Some(free) = self.find_in_bucket(tree[node].bucket, 0) {
                    self.move_along(&tree, node, free, fingerprint);
                    return true;
                }
            }
        }
        false
    }

    /// Makes the chain that ends at `node`, whose bucket has the free slot `free`: from the
    /// end up, each fingerprint moves into the slot below it, and `fingerprint` takes the
    /// root's freed slot.
    fn move_along(&mut self, tree: &[Reached], mut node: usize, mut free: u64, fingerprint: u32) {
        while tree[node].parent != ROOT {
            let slot = tree[node].slot;
            let moved = self.slots.get(slot);
            self.slots.set(free, moved);
            free = slot;
            node = tree[node].parent;
        }
        self.slots.set(free, fingerprint);
    }

    /// splitmix64 (Steele, Lea & Flood, "Fast Splittable Pseudorandom Number Generators",
    /// OOPSLA 2014).
    fn next_random(&mut self) -> u64 {
        let mut rng = crate::hash::SplitMix64::new(self.rng);
        let out = rng.next_u64();
        self.rng = rng.state();
        out
    }
}

/// A bucket the insert's search reached: the other bucket of the fingerprint in `slot` of
/// its `parent` node's bucket (`parent` is [`ROOT`] for the item's own two buckets).
#[derive(Clone, Copy)]
pub(super) struct Reached {
    pub(super) bucket: u64,
    pub(super) parent: usize,
    pub(super) slot: u64,
}

/// The parent of the search's two roots.
pub(super) const ROOT: usize = usize::MAX;

/// Whether `bucket` is the bucket of `node` or of one of its ancestors. A chain that came
/// back to a bucket could, past three moves, carry a fingerprint out of a slot that an
/// earlier move of the same chain refilled, into a bucket that is not its own.
pub(super) fn on_chain(tree: &[Reached], mut node: usize, bucket: u64) -> bool {
    while node != ROOT {
        if tree[node].bucket == bucket {
            return true;
        }
        node = tree[node].parent;
    }
    false
}

/// The batch queries' stages: the table; the answers are the state.
struct Queries<'a>(&'a PaperTable);

impl<'i, I: Item> lookahead::Stages<&'i I> for Queries<'_> {
    type State = Vec<bool>;
    type Located = (u64, u32, u64);
    #[inline(always)]
    fn locate(&self, _: &Vec<bool>, item: &'i I) -> (u64, u32, u64) {
        item.with_bytes(|bytes| self.0.locate_ahead(bytes))
    }
    #[inline(always)]
    fn used(&mut self, out: &mut Vec<bool>, (i1, fingerprint, i2): (u64, u32, u64)) {
        out.push(self.0.holds_in(i1, i2, fingerprint));
    }
}

/// The batch inserts' stages: how many were new, and whether one was refused (after which
/// nothing more goes in).
struct Inserts {
    new: u64,
    refused: bool,
}

impl<'i, I: Item> lookahead::Stages<&'i I> for Inserts {
    type State = PaperTable;
    type Located = (u64, u32, u64);
    #[inline(always)]
    fn locate(&self, table: &PaperTable, item: &'i I) -> (u64, u32, u64) {
        item.with_bytes(|bytes| table.locate_ahead(bytes))
    }
    #[inline(always)]
    fn used(&mut self, table: &mut PaperTable, (i1, fingerprint, i2): (u64, u32, u64)) {
        if self.refused || table.victim.is_some() {
            self.refused = true;
            return;
        }
        self.new += !table.holds_in(i1, i2, fingerprint) as u64;
        table.len += 1;
        table.place(i1, i2, fingerprint);
    }
}
