//! RedisBloom 2.4's top-k (`TOPK.*`, module type `TopK-TYPE`): HeavyKeeper as RedisBloom
//! runs it, with its hashing, its heap, its decay table and its RDB record.
//!
//! # The algorithm (Gong et al., 2018)
//!
//! J. Gong, T. Yang, H. Zhang, H. Li, S. Uhlig, S. Chen, L. Uden, X. Li, "HeavyKeeper: An
//! Accurate Algorithm for Finding Top-k Elephant Flows", USENIX ATC 2018. HeavyKeeper keeps
//! `depth` arrays of `width` buckets, each a fingerprint and a counter, beside a min-heap of
//! the `k` largest items seen. An arrival of item `x` looks at one bucket per array
//! (`hᵢ(x)`):
//!
//! * an empty bucket takes `x`'s fingerprint and the increment;
//! * a bucket holding `x`'s fingerprint adds the increment;
//! * a bucket holding another fingerprint with count `C` is *decayed*: for each unit of the
//!   increment, with probability `decay^C` its count drops by one, and when it reaches 0
//!   the bucket is `x`'s, with the units of the increment not yet spent.
//!
//! The largest count `x` reached in its buckets is its estimate; when it is at least the
//! heap's smallest count, `x` enters the heap (replacing the smallest) or, already there,
//! takes the new estimate.
//!
//! What the decay buys ("count with exponential-weakening decay"): a count held by an item
//! is only ever raised by that item's own arrivals (fingerprints aside), so as long as no
//! other item shares its fingerprint in that bucket the estimate never passes the true
//! count — HeavyKeeper does not over-estimate, where a count-min sketch always may. Decay
//! is what it pays instead: a bucket's count `C` is lowered by another item's arrival with
//! probability `decay^C`, so pulling a count down from `C` to 0 takes, in expectation,
//! `Σ_{c=1..C} decay^(−c)` arrivals of colliding items — exponential in `C`. Small counts
//! (the many small items, "mice") are worn away quickly and their buckets reused, while a
//! large item ("elephant") that has built up a count keeps its bucket against all but an
//! exponentially growing number of collisions; and each item has `depth` buckets, so it
//! loses only if it loses all of them. The paper bounds the probability that an elephant's
//! estimate falls short of its size by a given fraction of the stream in terms of the
//! width and the decay base, and its experiments reach near-exact top-k lists with a few
//! kilobytes. The paper writes the decay probability as `b^(−C)` with `b` ≈ 1.08; RedisBloom
//! takes `decay = 1/b`, 0.9 by default.
//!
//! # As RedisBloom 2.4 runs it
//!
//! * Fingerprint: 32-bit MurmurHash2 of the item with seed 1919; bucket in array `i`:
//!   MurmurHash2 with seed `i`, modulo the width.
//! * `decay^C` comes from a table of 256 powers: `C < 256` reads entry `C`; larger counts
//!   take `table[255]^(C / 255) · table[C mod 255]`. A new top-k fills the table with
//!   `pow(decay, i)`; a loaded one (RDB, RESTORE, AOF rewrite) with running products
//!   (`table[i] = table[i−1]·decay`), which can differ in the last bits — both kept here.
//! * The decay decision is `rand() / RAND_MAX < decay^C`, drawn from the C library's
//!   generator, which Redis seeds at start-up and which every `rand()` caller in the process
//!   shares ([`Topk::add`] takes the draw as a function; the module passes libc's `rand`).
//!   Two servers given the same commands therefore agree only while no decay is drawn.
//!   Here, for `C < 256`, the same decision is an integer comparison, `rand() < limit[C]`,
//!   `limit[C]` being the number of draws whose quotient is below `table[C]` (the quotient
//!   grows with the draw, so those are the draws below it): the same answer for every draw,
//!   without a conversion and a division per draw ([`decay_limit`]).
//! * Counts are 32 bits and wrap (RedisBloom adds without a check; with increments of at
//!   most 100 000 it takes 43 000 of the largest to get there).
//! * The heap is an array of `k` slots, the smallest count first; an item replacing the
//!   smallest goes into slot 0 and sinks by RedisBloom's own sift-down (which moves a slot
//!   below children of equal count). An item is found in the heap by scanning from the
//!   last slot to the first, comparing fingerprint, length and bytes. `TOPK.LIST` sorts a
//!   copy of the slots by count, largest first, keeping equal counts in slot order (glibc's
//!   `qsort` is a merge sort, hence stable, as this one), and stops at the first count 0.
//!
//! # RDB record (encoding version 0)
//!
//! `k`, `width`, `depth` (unsigned), `decay` (double), then three kinds of string buffers:
//! the `width·depth` buckets (8 bytes each: fingerprint, count, little-endian `u32`s), the
//! `k` heap slots (24 bytes each, RedisBloom's `HeapBucket` as it lies in memory:
//! fingerprint `u32`, item length `u32`, the item's pointer (8 bytes), count `u32`, 4
//! bytes of padding), and one buffer per slot with the item and a terminating NUL (a lone
//! NUL for a slot without an item). The pointer and padding mean nothing to a reader; they
//! are kept as loaded (and written as zeros for slots filled here), so that a record loads
//! and saves back byte for byte.
//!
//! A load refuses sizes out of `u32` (RedisBloom truncates them), a zero `k`, width or
//! depth, a decay outside (0, 1], buffers of other lengths than the sizes say, an item
//! buffer without its NUL, and a top-k the memory limit refuses. Items are saved whole
//! (RedisBloom saves up to the first NUL, losing the rest of an item that holds one),
//! which RedisBloom loads as the same item.

use bloomkit::hash::murmur2;

use crate::config::{Limit, Refusal};
use crate::murmur::{murmur2_seeds, row_seeds, LANES};
use crate::rdb::{Sink, Source};

/// The RDB encoding version of `TopK-TYPE` (RedisBloom's `TOPK_ENC_VER`).
pub const ENCODING_VERSION: i32 = 0;

/// `TOPK.RESERVE`'s defaults.
pub const DEFAULT_WIDTH: u32 = 8;
/// See [`DEFAULT_WIDTH`].
pub const DEFAULT_DEPTH: u32 = 7;
/// See [`DEFAULT_WIDTH`].
pub const DEFAULT_DECAY: f64 = 0.9;

/// The C library's `RAND_MAX`: `rand()` draws from 0 to this.
pub const RAND_MAX: u32 = libc::RAND_MAX as u32;

/// The largest increment `TOPK.INCRBY` takes.
pub const MAX_INCREMENT: u32 = 100_000;

/// Entries of the decay table (RedisBloom's `TOPK_DECAY_LOOKUP_TABLE`).
pub const DECAY_TABLE: usize = 256;

/// The fingerprint's seed (RedisBloom's `GA`).
const FINGERPRINT_SEED: u32 = 1919;

/// RedisBloom's `sizeof(Bucket)` and `sizeof(HeapBucket)`: a bucket's and a heap slot's
/// bytes in the RDB record.
const BUCKET_BYTES: u64 = 8;
const SLOT_BYTES: u64 = 24;

/// What a top-k takes in memory here, which [`Topk::memory_bytes`] counts: the struct
/// (with its decay table), a bucket (RedisBloom's 8 bytes), a heap slot (RedisBloom's 24
/// bytes and the item's address and length).
const STRUCT_MEMORY: u64 = std::mem::size_of::<Topk>() as u64;
const BUCKET_MEMORY: u64 = BUCKET_BYTES;
const SLOT_MEMORY: u64 = SLOT_BYTES + std::mem::size_of::<Option<Box<[u8]>>>() as u64;

#[inline]
fn u32_at(bytes: &[u8], at: usize) -> u32 {
    // One bounds check and one load (indexing the four bytes one by one checks each).
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

/// An item held in the heap, kept as its bytes, a NUL and a flag byte (1 when the item
/// holds no NUL, CR or LF, so that it can be sent as a status string): a reply hands the
/// stored bytes to Redis as a C string as they are, as RedisBloom does with its
/// NUL-terminated copies, with no copy, allocation or scan per reply. The bytes before the
/// flag are also what the RDB record holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item(Box<[u8]>);

/// Whether `item` can be sent as a status string (it holds no NUL, CR or LF).
fn plain(item: &[u8]) -> bool {
    !item.iter().any(|&b| b == 0 || b == b'\r' || b == b'\n')
}

impl Item {
    fn new(item: &[u8]) -> Self {
        let mut stored = Vec::with_capacity(item.len() + 2);
        stored.extend_from_slice(item);
        stored.push(0);
        stored.push(plain(item) as u8);
        Self(stored.into_boxed_slice())
    }

    /// Holds `item` instead, in the same storage, if it has the same length (no
    /// allocation); whether it did.
    fn overwrite(&mut self, item: &[u8]) -> bool {
        let Some((bytes, [nul, flag])) = self.0.split_last_chunk_mut::<2>() else {
            return false;
        };
        if bytes.len() != item.len() {
            return false;
        }
        bytes.copy_from_slice(item);
        (*nul, *flag) = (0, plain(item) as u8);
        true
    }

    /// The item's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.0[..self.0.len() - 2]
    }

    /// The item and its terminating NUL.
    fn with_nul(&self) -> &[u8] {
        &self.0[..self.0.len() - 1]
    }

    /// The item and its terminating NUL, if it can be sent as a status string (it holds no
    /// NUL, CR or LF).
    pub fn status_text(&self) -> Option<&[u8]> {
        (self.0[self.0.len() - 1] == 1).then(|| self.with_nul())
    }
}

#[inline]
fn set_u32(bytes: &mut [u8], at: usize, value: u32) {
    bytes[at..at + 4].copy_from_slice(&value.to_le_bytes());
}

/// The heap: RedisBloom's array of `HeapBucket`s as it lies in memory (24 bytes a slot:
/// fingerprint, item length, the item's pointer, count, padding — the pointer and padding
/// meaningless, kept as loaded), so that it is saved and loaded as it is, and each slot's
/// item.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Heap {
    raw: Vec<u8>,
    /// Each slot's fingerprint again, side by side: the scan for an item compares these,
    /// eight to a step ([`Topk::find`]). Written wherever `raw`'s fingerprints are.
    fps: Vec<u32>,
    /// `None` where RedisBloom's pointer is NULL (a slot never filled, or one loaded with
    /// an empty item).
    items: Vec<Option<Item>>,
}

const SLOT: usize = SLOT_BYTES as usize;
const FP_AT: usize = 0;
const ITEMLEN_AT: usize = 4;
const POINTER_AT: usize = 8;
const COUNT_AT: usize = 16;

impl Heap {
    fn new(k: usize) -> Self {
        Self {
            raw: vec![0; k * SLOT],
            fps: vec![0; k],
            items: vec![None; k],
        }
    }

    fn len(&self) -> usize {
        self.items.len()
    }

    fn fp(&self, slot: usize) -> u32 {
        self.fps[slot]
    }

    fn itemlen(&self, slot: usize) -> u32 {
        u32_at(&self.raw, slot * SLOT + ITEMLEN_AT)
    }

    fn count(&self, slot: usize) -> u32 {
        u32_at(&self.raw, slot * SLOT + COUNT_AT)
    }

    fn set_count(&mut self, slot: usize, count: u32) {
        set_u32(&mut self.raw, slot * SLOT + COUNT_AT, count);
    }

    /// The item's bytes (empty for none).
    fn item(&self, slot: usize) -> &[u8] {
        self.items[slot].as_ref().map_or(&[], Item::bytes)
    }

    /// Whether `slot` holds `item` (with fingerprint `fp`): RedisBloom compares the
    /// fingerprint, the stored length and the bytes; a slot whose stored length is not its
    /// item's (only from a forged record) matches nothing.
    fn holds(&self, slot: usize, item: &[u8], fp: u32) -> bool {
        self.fp(slot) == fp && self.itemlen(slot) as usize == item.len() && self.item(slot) == item
    }

    /// Puts `item` into `slot` with its fingerprint and count (the pointer bytes zeroed, the
    /// padding kept, as RedisBloom writes the fields). `leaving` is shown the item the slot
    /// held (`None` for none) before its storage is reused: an item of the same length is
    /// written over it, so that a top-k whose items have one length (fixed-width ids)
    /// allocates nothing when one item expels another. Returns what `leaving` returned and
    /// the length of the item that left.
    fn replace<R>(
        &mut self,
        slot: usize,
        item: &[u8],
        fp: u32,
        count: u32,
        leaving: impl FnOnce(Option<&Item>) -> R,
    ) -> (R, usize) {
        let at = slot * SLOT;
        set_u32(&mut self.raw, at + FP_AT, fp);
        self.fps[slot] = fp;
        set_u32(&mut self.raw, at + ITEMLEN_AT, item.len() as u32);
        self.raw[at + POINTER_AT..at + COUNT_AT].fill(0);
        set_u32(&mut self.raw, at + COUNT_AT, count);
        let stored = &mut self.items[slot];
        let left = leaving(stored.as_ref());
        let old_len = stored.as_ref().map_or(0, |old| old.bytes().len());
        if !stored.as_mut().is_some_and(|old| old.overwrite(item)) {
            *stored = Some(Item::new(item));
        }
        (left, old_len)
    }

    fn swap(&mut self, a: usize, b: usize) {
        if a == b {
            return;
        }
        let (low, high) = (a.min(b), a.max(b));
        let (front, back) = self.raw.split_at_mut(high * SLOT);
        front[low * SLOT..low * SLOT + SLOT].swap_with_slice(&mut back[..SLOT]);
        self.fps.swap(a, b);
        self.items.swap(a, b);
    }
}

/// Why a top-k was not made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CreateError {
    /// `width·depth` buckets do not fit in the address space: "ERR Insufficient memory to
    /// create topk data structure".
    Unaddressable,
    /// The memory limits refused it.
    TooLarge(Refusal),
}

/// The number of buckets, if they are addressable, and the memory of the struct, the
/// buckets and the heap.
fn sizes(k: u32, width: u32, depth: u32) -> Option<(u64, u64)> {
    let buckets = (width as u64).checked_mul(depth as u64)?;
    let bucket_memory = buckets
        .checked_mul(BUCKET_MEMORY)
        .filter(|&b| b <= isize::MAX as u64)?;
    Some((
        buckets,
        STRUCT_MEMORY + bucket_memory + k as u64 * SLOT_MEMORY,
    ))
}

/// A top-k as RedisBloom 2.4 keeps it.
#[derive(Clone, Debug, PartialEq)]
pub struct Topk {
    k: u32,
    width: u32,
    depth: u32,
    decay: f64,
    /// `width·depth` buckets as RedisBloom keeps them (fingerprint, count: little-endian
    /// `u32`s), saved and loaded as they are.
    buckets: Vec<u8>,
    heap: Heap,
    table: [f64; DECAY_TABLE],
    /// [`decay_limit`] of each entry of `table`.
    limits: [u32; DECAY_TABLE],
    /// The bytes of the items in the heap (for [`Topk::memory_bytes`]).
    item_bytes: u64,
}

impl Topk {
    /// An empty top-k (`TOPK.RESERVE`; the command checks that `k`, `width` and `depth` are
    /// at least 1 and `decay` in (0, 1]), if it is addressable and the limit admits it.
    pub fn new(
        k: u32,
        width: u32,
        depth: u32,
        decay: f64,
        limit: impl Limit,
    ) -> Result<Self, CreateError> {
        let (buckets, memory) = sizes(k, width, depth).ok_or(CreateError::Unaddressable)?;
        limit.check(0, memory).map_err(CreateError::TooLarge)?;
        let mut table = [0.0; DECAY_TABLE];
        for (i, entry) in table.iter_mut().enumerate() {
            // The C library's pow, as RedisBloom's TopK_Create.
            *entry = decay.powf(i as f64);
        }
        Ok(Self {
            k,
            width,
            depth,
            decay,
            buckets: vec![0; (buckets * BUCKET_BYTES) as usize],
            heap: Heap::new(k as usize),
            table,
            limits: table.map(decay_limit),
            item_bytes: 0,
        })
    }

    /// The table a loaded top-k computes: running products.
    fn loaded_table(decay: f64) -> [f64; DECAY_TABLE] {
        let mut table = [1.0; DECAY_TABLE];
        for i in 1..DECAY_TABLE {
            table[i] = table[i - 1] * decay;
        }
        table
    }

    /// The heap's size.
    pub fn k(&self) -> u32 {
        self.k
    }

    /// Buckets per array.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Arrays.
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// The decay base.
    pub fn decay(&self) -> f64 {
        self.decay
    }

    /// The bytes `MEMORY USAGE` and the memory limits count: the struct (with the decay
    /// table), the buckets, the heap slots and the items held in the heap.
    pub fn memory_bytes(&self) -> u64 {
        STRUCT_MEMORY
            + self.buckets.len() as u64
            + self.heap.len() as u64 * SLOT_MEMORY
            + self.item_bytes
    }

    /// Whether items of `bytes` in all may be added, checked before any is: the worst
    /// case, where every one of them enters the heap and is copied there. After the adds,
    /// the caller reports the change of [`memory_bytes`](Self::memory_bytes).
    pub fn admit_items(&self, bytes: u64, limit: &impl Limit) -> Result<(), Refusal> {
        let held = self.memory_bytes();
        limit.check(held, held.saturating_add(bytes))
    }

    /// `decay^count` as RedisBloom computes it from its table.
    #[inline]
    fn decay_at(table: &[f64; DECAY_TABLE], count: u32) -> f64 {
        if (count as usize) < DECAY_TABLE {
            table[count as usize]
        } else {
            let last = DECAY_TABLE as u32 - 1;
            table[last as usize].powf((count / last) as f64) * table[(count % last) as usize]
        }
    }

    /// Calls `f` with the bucket of `item` in each array, row by row: in array `row`,
    /// `row·width + MurmurHash2(item, row) mod width` (RedisBloom computes `row·width` in
    /// 32 bits). `first` is [`first_hashes`] of `item`; rows past the seventh are hashed
    /// here, eight at a time.
    #[inline(always)]
    fn for_each_bucket(
        item: &[u8],
        width: u32,
        depth: u32,
        first: &[u32; LANES],
        mut f: impl FnMut(usize),
    ) {
        let mut visit = |row: u32, hash: u32| {
            f(row.wrapping_mul(width) as usize + (hash % width) as usize);
        };
        for (row, &hash) in (0..depth).zip(&first[1..]) {
            visit(row, hash);
        }
        let mut row = LANES as u32 - 1;
        while row < depth {
            let hashes = murmur2_seeds(item, &row_seeds(row));
            for (row, &hash) in (row..depth).zip(&hashes) {
                visit(row, hash);
            }
            row = row.saturating_add(LANES as u32);
        }
    }

    /// The heap slot holding `item`, scanning from the last slot. The fingerprints are
    /// compared first, all `k` of them in one pass without an early exit (vector compares:
    /// about a tenth of the instructions of a slot-by-slot scan), which settles the common
    /// case, an item not in the heap; only when one matches are they scanned again from
    /// the back, a step at a time, and the matching slots' items compared.
    fn find(&self, item: &[u8], fp: u32) -> Option<usize> {
        const STEP: usize = 8;
        let fps = &self.heap.fps;
        if !fps.iter().fold(false, |any, &f| any | (f == fp)) {
            return None;
        }
        // From the last slot back, eight fingerprints at a time (one vector compare);
        // only a step with a match is looked at slot by slot.
        let mut end = fps.len();
        while end > 0 {
            let start = end.saturating_sub(STEP);
            let hit = match <&[u32; STEP]>::try_from(&fps[start..end]) {
                Ok(step) => step.iter().fold(false, |any, &f| any | (f == fp)),
                Err(_) => fps[start..end].contains(&fp),
            };
            if hit {
                if let Some(slot) = (start..end)
                    .rev()
                    .find(|&slot| self.heap.holds(slot, item, fp))
                {
                    return Some(slot);
                }
            }
            end = start;
        }
        None
    }

    /// Adds `increment` arrivals of `item`; `draw()` is one value of `rand()` (0 to
    /// [`RAND_MAX`]) for each decay decision. `expelled` is called once, with the item
    /// expelled from the heap if one was (`None` for none, and for a slot without an item,
    /// where RedisBloom answers nil), before that item's storage is reused; `add` returns
    /// what it returns.
    pub fn add<R>(
        &mut self,
        item: &[u8],
        increment: u32,
        draw: &mut impl FnMut() -> u32,
        expelled: impl FnOnce(Option<&Item>) -> R,
    ) -> R {
        let first = first_hashes(item);
        let max_count = self.arrive(item, &first, increment, draw);
        self.offer(item, first[0], max_count, expelled)
    }

    /// The buckets' part of [`add`](Self::add): `increment` arrivals of `item` (`first`:
    /// [`first_hashes`] of it) in each of its buckets; the largest count it reached.
    #[inline(always)]
    fn arrive(
        &mut self,
        item: &[u8],
        first: &[u32; LANES],
        increment: u32,
        draw: &mut impl FnMut() -> u32,
    ) -> u32 {
        let fp = first[0];
        let mut max_count = 0u32;
        let (buckets, table, limits) = (&mut self.buckets, &self.table, &self.limits);
        Self::for_each_bucket(item, self.width, self.depth, first, |bucket| {
            let at = bucket * BUCKET_BYTES as usize;
            let cell: &mut [u8; 8] = (&mut buckets[at..at + 8]).try_into().expect("8 bytes");
            arrive_at(cell, fp, increment, (table, limits), draw, &mut max_count);
        });
        max_count
    }

    /// The heap's part of [`add`](Self::add): `item` (fingerprint `fp`) with its largest
    /// count `max_count`, into the heap or updated there when it reaches the heap's
    /// smallest count.
    #[inline(always)]
    fn offer<R>(
        &mut self,
        item: &[u8],
        fp: u32,
        max_count: u32,
        expelled: impl FnOnce(Option<&Item>) -> R,
    ) -> R {
        if max_count < self.heap.count(0) {
            return expelled(None);
        }
        if let Some(at) = self.find(item, fp) {
            // Not the larger of the two: the count may have decayed.
            self.heap.set_count(at, max_count);
            heapify_down(&mut self.heap, at);
            return expelled(None);
        }
        let (answer, old_len) = self.heap.replace(0, item, fp, max_count, expelled);
        self.item_bytes = self.item_bytes + item.len() as u64 - old_len as u64;
        heapify_down(&mut self.heap, 0);
        answer
    }

    /// Whether `item` is in the heap (`TOPK.QUERY`).
    pub fn query(&self, item: &[u8]) -> bool {
        self.find(item, murmur2(item, FINGERPRINT_SEED)).is_some()
    }

    /// `TOPK.COUNT`: the largest count among `item`'s buckets that hold its fingerprint;
    /// for an item in the heap, only counts at least the heap's smallest.
    pub fn count(&self, item: &[u8]) -> u32 {
        let first = first_hashes(item);
        let fp = first[0];
        let heap_min = self.heap.count(0);
        let in_heap = self.find(item, fp).is_some();
        let mut max = 0;
        Self::for_each_bucket(item, self.width, self.depth, &first, |bucket| {
            let (bucket_fp, count) = bucket_at(&self.buckets, bucket * BUCKET_BYTES as usize);
            if bucket_fp == fp && (!in_heap || count >= heap_min) {
                max = max.max(count);
            }
        });
        max
    }

    /// `TOPK.LIST`: the heap's items (`None` for a slot without one, an empty item) and
    /// counts by count, largest first, equal counts in slot order, up to the first count 0.
    pub fn list(&self) -> Vec<(Option<&Item>, u32)> {
        let mut slots: Vec<(Option<&Item>, u32)> = self
            .heap
            .items
            .iter()
            .zip(self.heap.raw.chunks_exact(SLOT))
            .map(|(item, raw)| (item.as_ref(), u32_at(raw, COUNT_AT)))
            .collect();
        // A stable sort, as glibc's qsort (a merge sort) is.
        slots.sort_by_key(|&(_, count)| std::cmp::Reverse(count));
        let listed = slots.iter().take_while(|&&(_, count)| count != 0).count();
        slots.truncate(listed);
        slots
    }

    /// The RDB record (see the module docs): the buckets and heap as they are kept.
    pub fn save(&self, out: &mut impl Sink) {
        out.unsigned(self.k as u64);
        out.unsigned(self.width as u64);
        out.unsigned(self.depth as u64);
        out.double(self.decay);
        out.buffer(&self.buckets);
        out.buffer(&self.heap.raw);
        for item in &self.heap.items {
            out.buffer(item.as_ref().map_or(&[0], Item::with_nul));
        }
    }

    /// Reads an RDB record; `None` for a version it does not know, a short or corrupt
    /// record, inconsistent sizes, or a top-k the limit refuses.
    pub fn load(src: &mut impl Source, encver: i32, limit: impl Limit) -> Option<Self> {
        if encver != ENCODING_VERSION {
            return None;
        }
        let narrow = |v: u64| u32::try_from(v).ok().filter(|&v| v > 0);
        let k = narrow(src.unsigned()?)?;
        let width = narrow(src.unsigned()?)?;
        let depth = narrow(src.unsigned()?)?;
        let decay = src.double()?;
        if !(decay > 0.0 && decay <= 1.0) {
            return None;
        }
        let (bucket_count, fixed) = sizes(k, width, depth)?;
        limit.check(0, fixed).ok()?;
        let buckets = src.buffer()?;
        if buckets.len() as u64 != bucket_count * BUCKET_BYTES {
            return None;
        }
        let raw = src.buffer()?;
        if raw.len() as u64 != k as u64 * SLOT_BYTES {
            return None;
        }
        let fps = raw
            .chunks_exact(SLOT)
            .map(|slot| u32_at(slot, FP_AT))
            .collect();
        let mut heap = Heap {
            raw,
            fps,
            items: vec![None; k as usize],
        };
        let mut item_bytes = 0u64;
        for slot in &mut heap.items {
            let mut item = src.buffer()?;
            if item.pop() != Some(0) {
                return None;
            }
            item_bytes += item.len() as u64;
            limit.check(0, fixed.saturating_add(item_bytes)).ok()?;
            *slot = (!item.is_empty()).then(|| Item::new(&item));
        }
        let table = Self::loaded_table(decay);
        Some(Self {
            k,
            width,
            depth,
            decay,
            buckets,
            heap,
            table,
            limits: table.map(decay_limit),
            item_bytes,
        })
    }
}

/// The seeds of [`first_hashes`]: the fingerprint's, then rows 0 to 6.
const FIRST_SEEDS: [u32; LANES] = [FINGERPRINT_SEED, 0, 1, 2, 3, 4, 5, 6];

/// An item's fingerprint (MurmurHash2 with seed 1919) and its hashes for rows 0 to 6
/// (seed = row), in one pass over the item ([`murmur2_seeds`]).
#[inline]
fn first_hashes(item: &[u8]) -> [u32; LANES] {
    murmur2_seeds(item, &FIRST_SEEDS)
}

/// A bucket's fingerprint and count (one bounds check, one 8-byte load).
#[inline]
fn bucket_at(buckets: &[u8], at: usize) -> (u32, u32) {
    let bucket: [u8; 8] = buckets[at..at + 8].try_into().expect("8 bytes");
    let [a, b, c, d, e, f, g, h] = bucket;
    (
        u32::from_le_bytes([a, b, c, d]),
        u32::from_le_bytes([e, f, g, h]),
    )
}

/// `increment` arrivals of an item with fingerprint `fp` at one bucket (`cell`: its
/// fingerprint and count, little-endian), read in one load and written back in one store,
/// only if it changed; `max_count` is raised to the count the item reached there.
#[inline(always)]
fn arrive_at(
    cell: &mut [u8; 8],
    fp: u32,
    increment: u32,
    (table, limits): (&[f64; DECAY_TABLE], &[u32; DECAY_TABLE]),
    draw: &mut impl FnMut() -> u32,
    max_count: &mut u32,
) {
    let word = u64::from_le_bytes(*cell);
    let (bucket_fp, count) = (word as u32, (word >> 32) as u32);
    let new = if count == 0 {
        *max_count = (*max_count).max(increment);
        Some((fp, increment))
    } else if bucket_fp == fp {
        let count = count.wrapping_add(increment);
        *max_count = (*max_count).max(count);
        Some((fp, count))
    } else {
        // One draw per unit of the increment, as RedisBloom draws, until the count reaches
        // 0.
        let (mut count, mut left, mut new) = (count, increment, None);
        while left > 0 {
            let decays = match limits.get(count as usize) {
                Some(&limit) => draw() < limit,
                None => decays(draw(), Topk::decay_at(table, count)),
            };
            if decays {
                count -= 1;
                if count == 0 {
                    *max_count = (*max_count).max(left);
                    new = Some((fp, left));
                    break;
                }
                new = Some((bucket_fp, count));
            }
            left -= 1;
        }
        new
    };
    if let Some((fp, count)) = new {
        *cell = ((count as u64) << 32 | fp as u64).to_le_bytes();
    }
}

/// A draw over [`RAND_MAX`]: RedisBloom's `rand() / (double)RAND_MAX`.
#[inline(always)]
fn unit(draw: u32) -> f64 {
    f64::from(draw) / RAND_MAX as f64
}

/// RedisBloom's decision: whether `draw` decays a count whose decay probability is `decay`
/// (false for NaN).
#[inline(always)]
fn decays(draw: u32, decay: f64) -> bool {
    unit(draw) < decay
}

/// How many draws of `rand()` decay a count whose decay probability is `decay`: those
/// with `unit(draw) < decay`. A quotient by a positive constant never falls as the
/// numerator grows (each is rounded to the nearest double, and rounding keeps the order), so
/// these are the draws below the limit returned, and `draw < limit` decides as
/// `unit(draw) < decay` does, for every draw. Computed for the 256 entries when a top-k is
/// made or loaded: `decay · RAND_MAX` rounded up, then [`settle`]d by that comparison.
fn decay_limit(decay: f64) -> u32 {
    // NaN (never here) and negatives go to 0.
    let guess = ((decay * RAND_MAX as f64).ceil().max(0.0) as u64).min(RAND_MAX as u64 + 1);
    settle(decay, guess)
}

/// The first draw that does not decay under `decay` (RAND_MAX + 1, 2³¹ with glibc and
/// musl, when every draw does), walked to from `start`: down while the draw below does not
/// decay, up while the draw itself does. From [`decay_limit`]'s guess that is a step or
/// none (sampling found the guess exact every time); the walk makes the limit exact
/// whatever the guess.
fn settle(decay: f64, start: u64) -> u32 {
    let mut limit = start.min(RAND_MAX as u64 + 1);
    while limit > 0 && !decays((limit - 1) as u32, decay) {
        limit -= 1;
    }
    while limit <= RAND_MAX as u64 && decays(limit as u32, decay) {
        limit += 1;
    }
    limit as u32
}

/// RedisBloom's sift-down of slot `start` in a heap of the smallest count first. Its first
/// step moves the slot below its smaller child also when their counts are equal; later
/// steps only past strictly smaller children.
fn heapify_down(heap: &mut Heap, start: usize) {
    let len = heap.len();
    if len < 2 || (len - 2) / 2 < start {
        return;
    }
    let smaller_child = |heap: &Heap, parent: usize| {
        let child = 2 * parent + 1;
        if child + 1 < len && heap.count(child) > heap.count(child + 1) {
            child + 1
        } else {
            child
        }
    };
    let mut child = smaller_child(heap, start);
    let top = heap.count(start);
    if heap.count(child) > top {
        return;
    }
    // The slot sinks: each smaller child moves up into its place.
    let mut at = start;
    loop {
        heap.swap(at, child);
        at = child;
        if (len - 2) / 2 < child {
            break;
        }
        child = smaller_child(heap, child);
        if heap.count(child) >= top {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rdb::{Field, Fields};

    const NO_LIMIT: u64 = u64::MAX;

    /// Draws that never decay (`RAND_MAX / RAND_MAX` = 1.0 is below no power of a decay
    /// ≤ 1).
    fn never() -> impl FnMut() -> u32 {
        || RAND_MAX
    }

    /// The draw whose quotient is about `p` (just below it).
    fn at(p: f64) -> u32 {
        (p * RAND_MAX as f64) as u32
    }

    fn names(t: &Topk) -> Vec<(String, u32)> {
        t.list()
            .iter()
            .map(|&(item, count)| {
                let item = item.map_or(&[][..], Item::bytes);
                (String::from_utf8_lossy(item).into_owned(), count)
            })
            .collect()
    }

    #[test]
    fn an_item_written_over_one_of_its_length_is_stored_as_if_new() {
        // The storage of an expelled item is reused for one of the same length: the bytes,
        // the NUL and the status flag must be the new item's, whichever way the flag goes.
        let mut h = Heap::new(1);
        let mut seen = Vec::new();
        for item in [&b"a\rb"[..], b"abc", b"a\nb", b"xyz", b"lo", b"longer"] {
            let (_, old_len) = h.replace(0, item, 7, 1, |old| {
                seen.push(old.map(|o| o.bytes().to_vec()));
            });
            assert_eq!(old_len, seen.last().unwrap().as_ref().map_or(0, Vec::len));
            let stored = h.items[0].as_ref().unwrap();
            assert_eq!(stored, &Item::new(item), "{item:?}");
            assert_eq!(h.item(0), item);
        }
        // Each item is shown to `leaving` before it is overwritten.
        assert_eq!(
            seen,
            [
                None,
                Some(b"a\rb".to_vec()),
                Some(b"abc".to_vec()),
                Some(b"a\nb".to_vec()),
                Some(b"xyz".to_vec()),
                Some(b"lo".to_vec())
            ]
        );
    }

    #[test]
    fn only_items_without_nul_cr_or_lf_go_as_status_text() {
        for item in [&b"a\rb"[..], b"a\nb", b"a\0b", b"\r", b"\n", b"\0"] {
            let stored = Item::new(item);
            assert_eq!(stored.bytes(), item);
            assert_eq!(stored.status_text(), None, "{item:?}");
        }
        for item in [&b"plain"[..], b"", b"\xff s\tp"] {
            let stored = Item::new(item);
            assert_eq!(stored.bytes(), item);
            let with_nul = [item, &[0][..]].concat();
            assert_eq!(stored.status_text(), Some(&with_nul[..]), "{item:?}");
        }
    }

    #[test]
    fn the_stepped_heap_scan_finds_what_a_slot_by_slot_scan_finds() {
        // k = 21: two full steps of eight fingerprints and a short one of five.
        let mut t = Topk::new(21, 64, 3, 0.9, NO_LIMIT).unwrap();
        let items: Vec<Vec<u8>> = (0..60).map(|i| format!("item{i}").into_bytes()).collect();
        for (i, item) in items.iter().enumerate() {
            t.add(item, 1 + (i as u32 % 7), &mut never(), |_| ());
        }
        // Also one item held twice (only a forged record does that): the last slot wins.
        let twice = t.heap.item(3).to_vec();
        let fp = murmur2(&twice, FINGERPRINT_SEED);
        t.heap.replace(17, &twice, fp, t.heap.count(17), |_| ());
        let mut found = 0;
        for item in &items {
            let fp = murmur2(item, FINGERPRINT_SEED);
            let by_slot = (0..t.heap.len())
                .rev()
                .find(|&slot| t.heap.holds(slot, item, fp));
            assert_eq!(t.find(item, fp), by_slot, "{item:?}");
            found += by_slot.is_some() as usize;
        }
        assert!(found >= 20, "{found} items in the heap");
        assert_eq!(t.find(&twice, fp), Some(17));
    }

    #[test]
    fn the_heaviest_items_are_listed_largest_first() {
        let mut t = Topk::new(3, 8, 7, 0.9, NO_LIMIT).unwrap();
        let mut coin = never();
        for (item, n) in [("a", 5), ("b", 3), ("c", 9), ("d", 1)] {
            for _ in 0..n {
                t.add(item.as_bytes(), 1, &mut coin, |_| ());
            }
        }
        assert_eq!(
            names(&t),
            [("c".to_string(), 9), ("a".into(), 5), ("b".into(), 3)]
        );
        assert!(t.query(b"a") && !t.query(b"d"));
        assert_eq!(t.count(b"c"), 9);
    }

    #[test]
    fn the_first_items_fill_the_heap_and_the_next_expels_the_smallest() {
        // The sequence checked against RedisBloom 2.4: TOPK.RESERVE t 3; TOPK.ADD t a b c
        // d a answers nil nil nil a c, and TOPK.LIST t WITHCOUNT a 2 d 1 b 1.
        let mut t = Topk::new(3, 8, 7, 0.9, NO_LIMIT).unwrap();
        let mut coin = never();
        let replies: Vec<Option<Vec<u8>>> = ["a", "b", "c", "d", "a"]
            .iter()
            .map(|i| {
                t.add(i.as_bytes(), 1, &mut coin, |expelled| {
                    expelled.map(|item| item.bytes().to_vec())
                })
            })
            .collect();
        assert_eq!(
            replies,
            [None, None, None, Some(b"a".to_vec()), Some(b"c".to_vec())]
        );
        assert_eq!(
            names(&t),
            [("a".to_string(), 2), ("d".into(), 1), ("b".into(), 1)]
        );
        assert_eq!(
            t.memory_bytes(),
            STRUCT_MEMORY + 56 * BUCKET_MEMORY + 3 * SLOT_MEMORY + 3
        );
    }

    #[test]
    fn a_colliding_bucket_decays_with_the_table_and_is_taken_at_zero() {
        // One bucket: every item collides.
        let mut t = Topk::new(1, 1, 1, 0.5, NO_LIMIT).unwrap();
        let mut coin = never();
        t.add(b"x", 3, &mut coin, |_| ());
        assert_eq!(u32_at(&t.buckets, 4), 3);
        // Draws of 0.2: below 0.5³ = 0.125? no; so the first unit does not decay ...
        let mut draws = [0.2, 0.1, 0.2, 0.2].map(at).into_iter();
        let mut coin = || draws.next().unwrap();
        t.add(b"y", 4, &mut coin, |_| ());
        // 0.2 ≥ 0.125: no; 0.1 < 0.125: count 2; 0.2 < 0.25: count 1; 0.2 < 0.5: count 0,
        // taken with the one unit left.
        assert_eq!(u32_at(&t.buckets, 4), 1);
        assert_eq!(u32_at(&t.buckets, 0), murmur2(b"y", FINGERPRINT_SEED));
        assert_eq!(t.count(b"y"), 1);
    }

    #[test]
    fn a_bucket_decayed_short_of_zero_keeps_its_item_with_the_lower_count() {
        let mut t = Topk::new(1, 1, 1, 0.5, NO_LIMIT).unwrap();
        t.add(b"x", 5, &mut never(), |_| ());
        // 0.0 < 0.5⁵: count 4; 0.99 ≥ 0.5⁴: no change. x keeps the bucket, at 4.
        let mut draws = [0.0, 0.99].map(at).into_iter();
        t.add(b"y", 2, &mut || draws.next().unwrap(), |_| ());
        assert_eq!(
            (u32_at(&t.buckets, 0), u32_at(&t.buckets, 4)),
            (murmur2(b"x", FINGERPRINT_SEED), 4)
        );
        assert_eq!(t.count(b"y"), 0);
    }

    #[test]
    fn a_draw_of_rand_max_never_decays_even_at_decay_1() {
        // rand() / RAND_MAX is 1.0 once in 2³¹ draws, and 1.0 < decay^C is false even for
        // decay 1: the bucket keeps its count.
        let mut t = Topk::new(1, 1, 1, 1.0, NO_LIMIT).unwrap();
        t.add(b"x", 3, &mut never(), |_| ());
        t.add(b"y", 5, &mut never(), |_| ());
        assert_eq!(u32_at(&t.buckets, 4), 3);
        assert_eq!(u32_at(&t.buckets, 0), murmur2(b"x", FINGERPRINT_SEED));
        // Any other draw decays it: the third of five units takes it to 0, and y takes the
        // bucket with the units left, that one included (RedisBloom's rule).
        t.add(b"y", 5, &mut || at(0.999), |_| ());
        assert_eq!(
            (u32_at(&t.buckets, 0), u32_at(&t.buckets, 4)),
            (murmur2(b"y", FINGERPRINT_SEED), 3)
        );
    }

    #[test]
    fn an_item_held_twice_updates_its_last_slot() {
        // Only a forged record holds an item twice; RedisBloom scans from the last slot.
        let mut t = Topk::new(3, 100, 2, 0.9, NO_LIMIT).unwrap();
        let fp = murmur2(b"a", FINGERPRINT_SEED);
        t.heap.replace(1, b"a", fp, 4, |_| ());
        t.heap.replace(2, b"a", fp, 6, |_| ());
        t.heap.set_count(0, 1);
        t.add(b"a", 9, &mut never(), |_| ());
        assert_eq!((t.heap.count(1), t.heap.count(2)), (4, 9));
    }

    #[test]
    fn a_slot_filled_here_saves_a_zero_pointer_and_keeps_its_padding() {
        let mut t = Topk::new(1, 4, 1, 0.9, NO_LIMIT).unwrap();
        t.heap.raw[POINTER_AT..POINTER_AT + 8].fill(7);
        t.heap.raw[20..24].fill(9);
        t.add(b"a", 1, &mut never(), |_| ());
        assert_eq!(&t.heap.raw[POINTER_AT..POINTER_AT + 8], &[0; 8]);
        assert_eq!(&t.heap.raw[20..24], &[9; 4]);
    }

    #[test]
    fn large_counts_decay_by_table_powers() {
        let t = Topk::new(1, 1, 1, 0.9, NO_LIMIT).unwrap();
        let d = Topk::decay_at(&t.table, 600);
        let expected = t.table[255].powf(2.0) * t.table[600 % 255];
        assert_eq!(d, expected);
        assert!((d - 0.9f64.powi(600)).abs() < 1e-30);
        // The loaded table is running products.
        let loaded = Topk::loaded_table(0.9);
        assert_eq!(loaded[0], 1.0);
        assert_eq!(loaded[2], 0.9 * 0.9);
        assert!((loaded[255] - t.table[255]).abs() < 1e-15);
    }

    #[test]
    fn a_new_table_holds_powers_and_a_loaded_one_running_products() {
        let decay = 0.9;
        let t = Topk::new(1, 1, 1, decay, NO_LIMIT).unwrap();
        let loaded = Topk::loaded_table(decay);
        let mut product = 1.0f64;
        let mut differ = 0;
        for (i, (&new, &load)) in t.table.iter().zip(&loaded).enumerate() {
            assert_eq!(new, decay.powf(i as f64), "entry {i}");
            assert_eq!(load, product, "entry {i}");
            differ += (new != load) as usize;
            product *= decay;
        }
        // The two differ in the last bits for some entries: which one a top-k holds shows.
        assert!(differ > 0);
        let mut f = Fields::default();
        t.save(&mut f);
        let reloaded = Topk::load(&mut Fields::new(f.fields), 0, NO_LIMIT).unwrap();
        assert_eq!(reloaded.table, loaded);
    }

    #[test]
    fn the_sift_down_moves_past_equal_children_only_at_its_first_step() {
        let heap = |counts: &[u32]| {
            let mut h = Heap::new(counts.len());
            for (slot, &c) in counts.iter().enumerate() {
                h.set_count(slot, c);
            }
            h
        };
        let counts = |h: &Heap| (0..h.len()).map(|s| h.count(s)).collect::<Vec<_>>();
        let mut h = heap(&[5, 5, 7]);
        h.replace(0, b"x", 1, 5, |_| ());
        heapify_down(&mut h, 0);
        assert_eq!(counts(&h), [5, 5, 7]);
        assert_eq!(
            (h.fp(1), h.item(1)),
            (1, &b"x"[..]),
            "moved below an equal child"
        );
        let mut h = heap(&[9, 1, 2, 3, 3, 4, 9]);
        heapify_down(&mut h, 0);
        assert_eq!(counts(&h), [1, 3, 2, 9, 3, 4, 9]);
    }

    #[test]
    fn the_rdb_record_round_trips_byte_for_byte() {
        let mut t = Topk::new(4, 5, 3, 0.8, NO_LIMIT).unwrap();
        let mut coin = never();
        for item in ["alpha", "beta", "", "g\0mma", "alpha"] {
            t.add(item.as_bytes(), 2, &mut coin, |_| ());
        }
        let mut f = Fields::default();
        t.save(&mut f);
        assert_eq!(f.fields.len(), 4 + 2 + 4);
        assert_eq!(f.fields[3], Field::Double(0.8));
        let loaded = Topk::load(&mut Fields::new(f.fields.clone()), 0, NO_LIMIT).unwrap();
        let mut g = Fields::default();
        loaded.save(&mut g);
        assert_eq!(f, g);
        assert_eq!(names(&loaded), names(&t));
        assert!(loaded.query(b"g\0mma"));
        // Pointer and padding bytes survive.
        let mut fields = f.fields.clone();
        if let Field::Buffer(heap) = &mut fields[5] {
            heap[8..16].copy_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]);
            heap[20..24].copy_from_slice(&[9, 9, 9, 9]);
        }
        let odd = Topk::load(&mut Fields::new(fields.clone()), 0, NO_LIMIT).unwrap();
        let mut h = Fields::default();
        odd.save(&mut h);
        assert_eq!(h.fields, fields);
    }

    #[test]
    fn hostile_records_are_refused() {
        let t = Topk::new(2, 3, 2, 0.9, NO_LIMIT).unwrap();
        let mut f = Fields::default();
        t.save(&mut f);
        let with = |i: usize, field: Field| {
            let mut g = f.fields.clone();
            g[i] = field;
            Topk::load(&mut Fields::new(g), 0, NO_LIMIT)
        };
        assert!(with(0, Field::Unsigned(2)).is_some());
        for (i, v) in [(0, 0), (1, 0), (2, 0), (0, 1 << 32), (1, (1 << 32) + 3)] {
            assert!(with(i, Field::Unsigned(v)).is_none(), "field {i} = {v}");
        }
        for d in [0.0, -0.5, 1.5, f64::NAN, f64::INFINITY] {
            assert!(with(3, Field::Double(d)).is_none(), "decay {d}");
        }
        assert!(with(4, Field::Buffer(vec![0; 47])).is_none());
        assert!(with(5, Field::Buffer(vec![0; 47])).is_none());
        assert!(with(6, Field::Buffer(vec![])).is_none());
        assert!(with(6, Field::Buffer(b"ab".to_vec())).is_none());
        assert!(with(6, Field::Buffer(b"ab\0".to_vec())).is_some());
        assert!(with(0, Field::Unsigned(3)).is_none(), "k past the heap");
        for n in 0..f.fields.len() {
            assert!(Topk::load(&mut Fields::new(f.fields[..n].to_vec()), 0, NO_LIMIT).is_none());
        }
        assert!(Topk::load(&mut Fields::new(f.fields.clone()), 1, NO_LIMIT).is_none());
        let need = t.memory_bytes();
        assert!(Topk::load(&mut Fields::new(f.fields.clone()), 0, need).is_some());
        assert!(Topk::load(&mut Fields::new(f.fields.clone()), 0, need - 1).is_none());
        // Items count against the limit too.
        assert!(with(6, Field::Buffer(vec![b'x', 0])).is_some());
        let mut g = f.fields.clone();
        g[6] = Field::Buffer(vec![b'x', 0]);
        assert!(Topk::load(&mut Fields::new(g), 0, need).is_none());
    }

    /// A fixed-seed SplitMix64 stream.
    fn stream(seed: u64) -> impl FnMut() -> u64 {
        let mut rng = bloomkit::hash::SplitMix64::new(seed);
        move || rng.next_u64()
    }

    #[test]
    fn a_decay_limit_splits_the_draws_where_the_quotient_does() {
        let mut next = stream(11);
        let mut decays = vec![0.5, 0.9, 0.925, 0.999, 1.0, 1e-300, f64::MIN_POSITIVE];
        decays.extend((0..40).map(|_| (next() >> 11) as f64 / (1u64 << 53) as f64 + 1e-9));
        for decay in decays {
            let t = Topk::new(1, 1, 1, decay, NO_LIMIT).unwrap();
            let loaded = Topk::loaded_table(decay);
            for (i, &d) in t.table.iter().chain(&loaded).enumerate() {
                let limit = decay_limit(d);
                // Every draw below the limit decays, and none from it on.
                assert!(
                    limit == 0 || unit(limit - 1) < d,
                    "{decay} entry {i}: {limit}"
                );
                assert!(
                    limit > RAND_MAX || unit(limit) >= d,
                    "{decay} entry {i}: {limit}"
                );
            }
            assert_eq!(t.limits, t.table.map(decay_limit));
            let mut f = Fields::default();
            t.save(&mut f);
            let reloaded = Topk::load(&mut Fields::new(f.fields), 0, NO_LIMIT).unwrap();
            assert_eq!(reloaded.limits, loaded.map(decay_limit), "{decay}");
        }
        // Decays on a draw's quotient and one step of a double either side of it: the
        // boundary cases, and the walk from a start off the boundary.
        for _ in 0..20_000 {
            let draw = (next() % (RAND_MAX as u64 + 1)) as u32;
            let on = unit(draw);
            for d in [
                on,
                f64::from_bits(on.to_bits() + 1),
                f64::from_bits(on.to_bits() - 1),
            ] {
                let limit = decay_limit(d);
                assert!(limit == 0 || unit(limit - 1) < d, "{d:e}: {limit}");
                assert!(limit > RAND_MAX || unit(limit) >= d, "{d:e}: {limit}");
            }
            assert_eq!(
                decay_limit(on),
                draw,
                "the draw on the decay does not decay"
            );
            // The walk reaches the boundary from either side of it.
            let exact = u64::from(draw);
            for start in [
                exact.saturating_sub(3),
                exact + 3,
                exact.saturating_sub(1),
                exact + 1,
            ] {
                assert_eq!(u64::from(settle(on, start)), exact, "{on:e} from {start}");
            }
        }
    }

    /// RedisBloom's bucket loop as it is written: per bucket, per unit of the increment, a
    /// draw and the comparison of its quotient with `decay_at`; the largest count reached.
    fn model_arrive(
        (table, width, depth): ([f64; DECAY_TABLE], u32, u32),
        buckets: &mut [u8],
        item: &[u8],
        increment: u32,
        draw: &mut impl FnMut() -> u32,
    ) -> u32 {
        let fp = murmur2(item, FINGERPRINT_SEED);
        let mut max_count = 0;
        for row in 0..depth {
            let at = (row * width + murmur2(item, row) % width) as usize * 8;
            let (mut bucket_fp, mut count) = bucket_at(buckets, at);
            if count == 0 {
                (bucket_fp, count) = (fp, increment);
                max_count = max_count.max(count);
            } else if bucket_fp == fp {
                count = count.wrapping_add(increment);
                max_count = max_count.max(count);
            } else {
                let mut left = increment;
                while left > 0 {
                    let decay = Topk::decay_at(&table, count);
                    if unit(draw()) < decay {
                        count -= 1;
                        if count == 0 {
                            (bucket_fp, count) = (fp, left);
                            max_count = max_count.max(count);
                            break;
                        }
                    }
                    left -= 1;
                }
            }
            set_u32(buckets, at, bucket_fp);
            set_u32(buckets, at + 4, count);
        }
        max_count
    }

    #[test]
    fn adds_decide_by_limits_as_the_unit_by_unit_model_does_by_quotients() {
        // Random small top-ks (new and loaded tables), buckets seeded with small counts,
        // counts past the table (255 and beyond: the powers' path) and counts about to wrap
        // at u32::MAX; increments from 0 to 100 000; draws from a fixed-seed stream, half of
        // them on or next to a limit, where a comparison off by one shows.
        let mut next = stream(24);
        let items: Vec<Vec<u8>> = (0..12).map(|i| format!("item{i}").into_bytes()).collect();
        let mut draws_seen = 0u64;
        for case in 0..300 {
            let decay = match next() % 6 {
                0 => 0.5,
                1 => 0.9,
                2 => 0.925,
                3 => 0.999,
                4 => 1.0,
                _ => (next() >> 11) as f64 / (1u64 << 53) as f64 + 1e-9,
            };
            let (k, width, depth) = (1 + next() % 6, 1 + next() % 6, 1 + next() % 10);
            let mut fast =
                Topk::new(k as u32, width as u32, depth as u32, decay, NO_LIMIT).unwrap();
            if next().is_multiple_of(2) {
                let mut f = Fields::default();
                fast.save(&mut f);
                fast = Topk::load(&mut Fields::new(f.fields), 0, NO_LIMIT).unwrap();
            }
            for _ in 0..next() % 12 {
                let bucket = (next() % (width * depth)) as usize * 8;
                let item = &items[(next() % items.len() as u64) as usize];
                let count = match next() % 5 {
                    0 => 1 + next() as u32 % 5,
                    1 => 250 + next() as u32 % 20,
                    2 => 255 * (2 + next() as u32 % 3) + next() as u32 % 3,
                    3 => u32::MAX - next() as u32 % 4,
                    _ => 1 + next() as u32 % 100_000,
                };
                set_u32(&mut fast.buckets, bucket, murmur2(item, FINGERPRINT_SEED));
                set_u32(&mut fast.buckets, bucket + 4, count);
            }
            let mut model = fast.clone();
            let limits = fast.limits;
            for op in 0..40 {
                let item = &items[(next() % items.len() as u64) as usize];
                let increment = match next() % 8 {
                    0 => next() as u32 % 300,
                    1 if op % 10 == 0 => next() as u32 % (MAX_INCREMENT + 1),
                    _ => next() as u32 % 7,
                };
                // One stream of draws, handed to both in the same order.
                let seed = next();
                let draws = move || {
                    let mut next = stream(seed);
                    let mut taken = 0u64;
                    move || {
                        taken += 1;
                        let value = if next().is_multiple_of(2) {
                            let limit = limits[(next() % DECAY_TABLE as u64) as usize] as i64;
                            (limit - 1 + (next() % 3) as i64).clamp(0, RAND_MAX as i64) as u32
                        } else {
                            (next() % (RAND_MAX as u64 + 1)) as u32
                        };
                        (value, taken)
                    }
                };
                let (mut fast_draws, mut model_draws) = (draws(), draws());
                let (mut fast_taken, mut model_taken) = (0, 0);
                let answer = fast.add(
                    item,
                    increment,
                    &mut || {
                        let (value, taken) = fast_draws();
                        fast_taken = taken;
                        value
                    },
                    |e| e.map(|i| i.bytes().to_vec()),
                );
                let sizes = (model.table, model.width, model.depth);
                let max_count =
                    model_arrive(sizes, &mut model.buckets, item, increment, &mut || {
                        let (value, taken) = model_draws();
                        model_taken = taken;
                        value
                    });
                let fp = murmur2(item, FINGERPRINT_SEED);
                let expected = model.offer(item, fp, max_count, |e| e.map(|i| i.bytes().to_vec()));
                assert_eq!(fast_taken, model_taken, "case {case} op {op}: draws");
                assert_eq!(answer, expected, "case {case} op {op}: expelled");
                assert!(fast == model, "case {case} op {op}: {item:?} +{increment}");
                draws_seen += fast_taken;
            }
        }
        assert!(draws_seen > 100_000, "{draws_seen} draws");
    }

    #[test]
    fn sizes_are_checked_before_allocating() {
        assert_eq!(
            Topk::new(1, u32::MAX, u32::MAX, 0.9, NO_LIMIT),
            Err(CreateError::Unaddressable)
        );
        assert!(matches!(
            Topk::new(u32::MAX, 8, 7, 0.9, 1u64 << 30),
            Err(CreateError::TooLarge(_))
        ));
    }
}
