//! The cuckoo filter: short fingerprints in a cuckoo hash table, with remove. It follows
//! Fan, Andersen, Kaminsky & Mitzenmacher, "Cuckoo Filter: Practically Better Than Bloom",
//! CoNEXT 2014 (ACM), and, for the victim slot, the authors' reference implementation.
//!
//! # Structure
//!
//! A table of B buckets (any B ≥ 1), each of b slots (b = 4 by default; 2 or 8 on
//! request). A slot holds an f-bit fingerprint of an item (4 ≤ f ≤ 16, chosen from ε), or
//! 0 for "empty". The table is one [`PackedCounters`] of B·b slots of f bits, bucket after
//! bucket (slot j of bucket i is counter `i·b + j`); a slot never straddles two 64-bit
//! words, so a word holds ⌊64/f⌋ slots: 8- and 16-bit fingerprints waste nothing, 10-bit
//! ones fill 60 of each word's 64 bits (10.7 bits per slot), 12-bit ones 60 (12.8).
//!
//! # Partial-key cuckoo hashing
//!
//! An item's bytes are hashed once to a 128-bit digest ([`Hashing::digest`]):
//!
//! ```text
//!     i₁ = the top log₂B bits of the low 64 bits of the digest
//!     fp = the top f bits of the high 64 bits, with 0 mapped to 1 (0 marks an empty slot)
//!     h(fp) = ⌊B · (fp · 0x9E37_79B9_7F4A_7C15 mod 2⁶⁴) / 2⁶⁴⌋, in [0, B)
//!     i₂ = i₁ ⊕ h(fp)             if B is a power of two
//!     i₂ = (h(fp) − i₁) mod B     otherwise
//! ```
//!
//! h is Fibonacci hashing (Knuth, TAOCP vol. 3, 6.4), multiplication by ⌊2⁶⁴/φ⌋, which
//! spreads even consecutive small fingerprints over all buckets. Both maps are involutions:
//! `i₁ = i₂ ⊕ h(fp)`, and `(h − ((h − i₁) mod B)) mod B = i₁`. So either bucket of a stored
//! fingerprint follows from the other and the fingerprint alone, which is what lets an
//! insert move a fingerprint without knowing its item (the paper's partial-key cuckoo
//! hashing). The paper's ⊕ needs B to be a power of two, which can leave a table sized for
//! n items only half full at n; the subtraction map works for every B (the same idea as
//! Fan et al.'s; Graf & Lemire's binary fuse and Dillinger's "prefix" cuckoo variants use
//! such maps), so the table is sized to exactly the load it is meant for. Power-of-two
//! tables keep ⊕, so every file written before the change answers as it did.
//!
//! The mapping 0 → 1 makes the fingerprint 1 twice as likely as the others; it raises the
//! chance that two fingerprints match from 2^−f to (2^f + 2)/4^f, less than 1% more for
//! f = 8 and nothing measurable for 12 or 16.
//!
//! # Insert, the victim slot, and when the filter is full
//!
//! An insert puts fp into a free slot of i₁ or i₂. If both buckets are full and the table
//! is larger than the caches hold ([`LARGE_TABLE_BYTES`], 8 MiB), it first searches
//! breadth-first for the shortest chain of at most [`SEARCH_DEPTH`] = 3 moves that frees a
//! slot in one of them (each fingerprint on the chain moving to its own other bucket),
//! reading each level's buckets at once so that their cache misses overlap (Li, Andersen,
//! Kaminsky & Freedman, EuroSys 2014). Otherwise, or when no such chain exists, it takes
//! the paper's random walk: evict a random fingerprint of one bucket, put fp in its
//! place, and move the evicted one to its own other bucket, up to `max_kicks` times (500,
//! as in the paper). The walk waits for one cache miss per kick; filling a table of 10⁸
//! items to 94%, the search cut the last tenth of the inserts from 1038 to 428 ns each
//! (`cargo run --release -p bloomkit --example cuckoo_batch -- 100000000`, built as is
//! and with [`SEARCH_DEPTH`] set to 0). If the kicks
//! run out, the last evicted fingerprint is kept in a one-entry *victim* slot, as the
//! reference implementation does: the insert has succeeded and nothing is lost. While the
//! victim slot is occupied, further inserts fail with [`Error::Full`] and change nothing; a
//! successful remove frees a slot and tries again to place the victim in the table.
//! Queries, counts and removes consult the victim too.
//!
//! The random choices come from a splitmix64 generator kept in the filter (and in its file),
//! seeded from the filter's seed, so a filter behaves the same on every run.
//!
//! [`CuckooFilter::insert_batch`] and [`CuckooFilter::contains_batch`] prefetch both buckets
//! of each item a window of items ahead ([`lookahead`]), so that the
//! reads of many items overlap; they answer and insert exactly as the single calls.
//!
//! Items are a multiset: inserting an item twice stores two copies of its fingerprint, and
//! [`CuckooFilter::count`] reports them. An item's two buckets hold at most 2b copies, so
//! inserting one item more than 2b times fills the filter.
//!
//! # Sizing and false-positive probability
//!
//! A query for an absent item compares its fingerprint with the occupied slots of its two
//! buckets, 2bα of them on average at load factor α, each a match with probability 2^−f:
//!
//! ```text
//!     ε = 1 − (1 − 2^−f)^(2bα)  ≤  2b / 2^f
//! ```
//!
//! (the paper's analysis of the bucket size; [`params::cuckoo_fpp`],
//! [`params::cuckoo_fpp_bound`]). So [`CuckooFilter::with_capacity`]`(n, ε)` takes the
//! smallest f with `2b/2^f ≤ ε`, widened to the widest f that packs as many slots per word
//! ([`params::cuckoo_fingerprint_bits`]: 10 bits for ε = 1% with b = 4; an error if 16 bits
//! cannot reach ε), and `B = ⌈n / (b · 0.95)⌉` buckets plus a margin of `⌈2√(n/b)⌉` for the
//! table-to-table variation of small tables ([`params::cuckoo_num_buckets`]): with b = 4 the
//! paper measures that about 95% of the slots fill before an insert fails, so 95% is the
//! target load ([`params::CUCKOO_TARGET_LOAD`]); past 10⁷ items the target is 94%, since a
//! table of 10⁸ items sized for 95% refused inserts from 99.8% of its capacity on
//! ([`params::cuckoo_sizing_load`]). At ε = 1% and n = 10⁶ that is 11.3 bits per item,
//! within 1.07× of the f/α = 10.5 the structure needs.
//!
//! # Remove, and what it cannot know
//!
//! A remove deletes one copy of the item's fingerprint from i₁, i₂ or the victim slot. Any
//! copy will do: a fingerprint fp in bucket i₁ or i₂ belongs to an item whose buckets are
//! exactly {i₁, i₂}, so the copies are interchangeable. An item whose fingerprint is in
//! neither bucket is certainly absent; removing it is [`Error::NotPresent`] and changes
//! nothing. But a filter cannot tell an inserted item from a false positive: removing an
//! item that was never inserted, yet is reported present, deletes another item's copy and
//! makes that item a false negative. Remove only what was inserted (the paper's discussion of deletion).
//!
//! # RedisBloom's layout
//!
//! Built with [`Layout::RedisBloom`] (`bloomkit create --kind cuckoo --redisbloom`), the
//! table is the one RedisBloom 2.4's `CF.*` commands keep, slot for slot, so that its bytes
//! are a `CF.SCANDUMP` sub-filter (`interop::redisbloom`, feature `redisbloom`). The rules,
//! from RedisBloom's documentation of `CF.RESERVE` and its dump layout (collected in the
//! workspace's `shared/redisbloom-2.4.md`):
//!
//! ```text
//!     h   = MurmurHash64A(item, seed 0)
//!     fp  = h mod 255 + 1                    (one byte, never 0)
//!     i₁  = h mod B                          (B a power of two)
//!     i₂  = (i₁ ⊕ fp·0x5bd1e995) mod B       (the product a 32-bit int, sign-extended)
//! ```
//!
//! with buckets of b = 1 to 255 one-byte slots (2 by default, as `CF.RESERVE`) and
//! `max_kicks` its MAXITERATIONS ([`REDISBLOOM_MAX_KICKS`] by default). Such a filter
//! holds RedisBloom's whole growing filter ([`redisbloom::RedisBloomCuckoo`]) and every
//! operation is RedisBloom's: deterministic evictions that roll back when they fail, a new
//! sub-filter of e times the newest one's buckets when none has room (`expansion`, 0 by
//! default: never grows), deletes from the newest sub-filter first. It has no victim
//! slot. The stored hashing is [`Hashing::redisbloom_cuckoo`], whose scheme marks the
//! layout.
//!
//! # Where the code is
//!
//! `mod.rs` (this file) is the filter as users see it, its builder and its file format; it
//! hands each operation to the layout's table: `paper.rs` (the paper's table, its search,
//! walk and victim slot) or `redisbloom.rs` (RedisBloom's growing filter, which the Redis
//! module uses too). `theory.rs` has the sizing and the false-positive rates.
//!
//! Cuckoo filters are not mergeable: two tables cannot be combined slot by slot, and
//! re-inserting one filter's fingerprints into the other can overflow it.
//!
//! ```
//! use bloomkit::{CuckooFilter, Filter};
//!
//! let mut filter = CuckooFilter::with_capacity(10_000, 0.01)?;
//! assert_eq!(filter.fingerprint_bits(), 10); // 2·4 / 2¹⁰ ≈ 0.78% ≤ 1%
//! assert_eq!(filter.num_buckets(), 2732);    // ⌈10 000 / 3.8⌉ + a margin of ⌈2·√2 500⌉
//!
//! filter.insert("dist")?;
//! filter.insert("dist")?;
//! assert!(filter.contains("dist"));
//! assert_eq!(filter.count("dist"), 2);
//! filter.remove("dist")?;
//! assert_eq!(filter.count("dist"), 1);
//! assert!(filter.remove("never inserted").is_err()); // certainly absent: nothing changes
//! assert_eq!(filter.len(), 1);
//! # Ok::<(), bloomkit::Error>(())
//! ```

mod options;
mod paper;
pub mod redisbloom;
pub mod theory;

use crate::bits::PackedCounters;
use crate::bloom::DEFAULT_FPP;
use crate::codec::{invalid, Parts, Persist};
use crate::error::{DecodeError, Error};
use crate::filter::{Filter, Kind};
use crate::hash::HashingChoice;
use crate::hash::{Hashing, IndexScheme, Item};
use crate::lookahead;
use crate::params::{self, CUCKOO_FINGERPRINT_BITS, CUCKOO_TARGET_LOAD, MAX_NUM_BITS};
use paper::{PaperTable, Victim, RNG_SALT};
use redisbloom::{Insert as RedisInsert, RedisBloomCuckoo};

/// The default number of slots per bucket, b = 4: the paper's choice, which reaches a load
/// factor of about 95%.
pub const DEFAULT_BUCKET_SIZE: u32 = 4;

/// The bucket sizes a cuckoo filter supports.
pub const BUCKET_SIZES: [u32; 3] = [2, 4, 8];

/// The default number of evictions before an insert gives up and uses the victim slot:
/// 500, as in the paper and its reference implementation.
pub const DEFAULT_MAX_KICKS: u32 = 500;

/// The largest `max_kicks` a filter accepts, so that one insert stays cheap.
pub const MAX_KICKS_LIMIT: u32 = 1 << 16;

/// How a cuckoo filter maps an item to its fingerprint and buckets (see the module
/// documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Layout {
    /// Fan et al.'s partial-key cuckoo hashing with f-bit fingerprints from a 128-bit
    /// digest, any number of buckets.
    #[default]
    Paper,
    /// RedisBloom 2.4's `CF.*` table: one-byte fingerprints `h mod 255 + 1`, a power of two
    /// buckets, the alternate bucket `i ⊕ fp·0x5bd1e995`.
    RedisBloom,
}

impl Layout {
    /// The name on the command line (`--layout`).
    pub fn name(self) -> &'static str {
        match self {
            Layout::Paper => "paper",
            Layout::RedisBloom => "redisbloom",
        }
    }
}

/// The share of a [`Layout::RedisBloom`] table that a capacity is sized to fill: 0.45 with
/// one slot per bucket, 0.65 with more. Measured before sizing so (tables sized as
/// `CF.RESERVE n` sizes them, items added until the victim slot filled, with `bloomkit add`,
/// debug build, 500 kicks): buckets of 1 filled to 49.9% and 45.9% (4096 and 16384 slots),
/// buckets of 2 to 68.0%, 72.3% and 87.3% (256, 4096 and 8192 slots) — RedisBloom grows a
/// sub-filter there, this one-table filter cannot. `CF.RESERVE n` (buckets nextpow2(n / b))
/// would leave n items no room in such tables; n / (b · share) does, at the cost of up to
/// twice `CF.RESERVE`'s buckets.
fn redisbloom_load(bucket_size: u32) -> f64 {
    if bucket_size == 1 {
        0.45
    } else {
        0.65
    }
}

/// The most bytes a [`Layout::RedisBloom`] filter may grow to, as its growth budget counts
/// them ([`RedisBloomCuckoo::footprint_bytes`]: RedisBloom's count and the bookkeeping):
/// the bits any bloomkit filter may have.
pub(crate) const REDIS_TABLE_BYTES: u64 = MAX_NUM_BITS / 8;

/// `CF.RESERVE`'s default bucket size, the default of [`Layout::RedisBloom`].
pub const REDISBLOOM_BUCKET_SIZE: u32 = 2;
/// The default `max_kicks` of [`Layout::RedisBloom`]: the paper's 500, not `CF.RESERVE`'s
/// MAXITERATIONS of 20. RedisBloom adds a sub-filter when its kicks run out; with the
/// default expansion 0 this filter never does, it stays one table, and with buckets of 2 slots 20 kicks leave it full at about 70% of its slots
/// (3000 items into 4096 slots failed at 2805 in this module's tests), 500 near 90%. The
/// value is written as MAXITERATIONS (RedisBloom takes 1 to 65535).
pub const REDISBLOOM_MAX_KICKS: u32 = DEFAULT_MAX_KICKS;
/// The largest bucket size RedisBloom allows.
pub const REDISBLOOM_MAX_BUCKET_SIZE: u32 = 255;
/// The largest MAXITERATIONS RedisBloom allows (a 16-bit field of its dump).
pub const REDISBLOOM_MAX_KICKS_LIMIT: u32 = 65535;
/// The most buckets a RedisBloom sub-filter may have (a 56-bit field).
pub const REDISBLOOM_MAX_BUCKETS: u64 = (1 << 56) - 1;

/// RedisBloom's cuckoo hash and fingerprint of an item: `h = MurmurHash64A(item, 0)` and
/// `fp = h mod 255 + 1`. The one copy of the rule in the workspace (the Redis module calls
/// it).
///
/// ```
/// use bloomkit::cuckoo::redisbloom_hash;
/// use bloomkit::hash::murmur64a;
/// let (h, fp) = redisbloom_hash(b"item");
/// assert_eq!((h, fp as u64), (murmur64a(b"item", 0), murmur64a(b"item", 0) % 255 + 1));
/// ```
#[inline]
pub fn redisbloom_hash(item: &[u8]) -> (u64, u8) {
    let h = crate::hash::murmur64a(item, 0);
    (h, (h % 255 + 1) as u8)
}

/// RedisBloom's alternate index of a fingerprint held at `index` (or of the hash `h`),
/// before the reduction modulo the buckets: `index ⊕ fp·0x5bd1e995`, the product taken as C
/// computes a byte times an `int` constant (32 bits, then widened with its sign). Modulo a
/// power of two, its own inverse. The Redis module calls it too.
///
/// ```
/// use bloomkit::cuckoo::redisbloom_alt_index;
/// let n = 1024u64;
/// let i2 = redisbloom_alt_index(77, 5) % n;
/// assert_eq!(redisbloom_alt_index(77, i2) % n, 5);
/// ```
#[inline]
pub fn redisbloom_alt_index(fp: u8, index: u64) -> u64 {
    index ^ ((fp as i32).wrapping_mul(0x5bd1_e995) as i64 as u64)
}

/// The longest chain of moves an insert's breadth-first search looks for before the random
/// walk of evictions takes over (see `CuckooFilter::search_and_move`).
pub const SEARCH_DEPTH: u32 = 3;

/// Tables of at least this many bytes are out of the caches' reach: their inserts search
/// breadth-first before the random walk, and their batch inserts prefetch a window ahead.
/// Smaller tables only walk, since in the caches a kick costs less than looking at a whole
/// level of buckets, and their batch inserts are the single inserts in a loop.
///
/// Measured with `cargo run --release -p bloomkit --example cuckoo_batch -- N` before this
/// limit existed, built as is and with [`SEARCH_DEPTH`] set to 0 (2-core AMD EPYC, 512 KiB L2, 32 MiB L3). ns per single insert in
/// the last tenth of the fill, walk against search: 135 against 193 at 1.4 MB, 175 against
/// 207 at 4.2 MB, 1000 against 348 at 14 MB, 1038 against 428 at 142 MB. `insert_batch`
/// over the whole fill, walk against search: 142 against 72 ns at 14 MB, 163 against 86 ns
/// at 142 MB; and through the window against the single inserts' mean, in the caches: 50
/// against 43 ns at 1.4 MB, 56–61 against 52 at 4.2 MB.
pub const LARGE_TABLE_BYTES: usize = 8 << 20;

/// A cuckoo filter: f-bit fingerprints in buckets of b slots, with remove and counts.
///
/// ```
/// use bloomkit::{CuckooFilter, Error};
///
/// // A small table, filled until an insert fails: nothing inserted before is lost.
/// let mut filter = CuckooFilter::builder().num_buckets(64).fingerprint_bits(16).build()?;
/// let mut inserted = Vec::new();
/// for i in 0u32.. {
///     match filter.insert(&i) {
///         Ok(_) => inserted.push(i),
///         Err(Error::Full { .. }) => break,
///         Err(e) => return Err(e),
///     }
/// }
/// assert!(inserted.iter().all(|i| filter.contains(i)));
/// assert!(filter.load_factor() > 0.85, "{}", filter.load_factor());
/// # Ok::<(), bloomkit::Error>(())
/// ```
#[derive(Clone, PartialEq)]
pub struct CuckooFilter {
    /// n, the number of items the filter was sized for.
    capacity: u64,
    /// ε, the false-positive probability the filter was sized for.
    target_fpp: f64,
    /// Where the fingerprints live, by layout.
    table: Table,
}

/// A cuckoo filter's table: the paper's, or RedisBloom's growing filter of sub-filters.
#[derive(Clone, PartialEq)]
enum Table {
    /// [`Layout::Paper`]: one table, a victim slot and an eviction generator
    /// ([`paper::PaperTable`]).
    Paper(PaperTable),
    /// [`Layout::RedisBloom`]: RedisBloom's growing filter ([`RedisBloomCuckoo`]); every
    /// operation is its own.
    RedisBloom(Box<RedisBloomCuckoo>),
}

impl CuckooFilter {
    /// A filter for `capacity` items whose false-positive probability stays below `fpp`,
    /// with buckets of 4 slots: f is the smallest width with `8 / 2^f ≤ fpp`, widened to what
    /// a 64-bit word packs as many of ([`params::cuckoo_fingerprint_bits`]),
    /// and the number of buckets `⌈capacity / 3.8⌉` (95% load) plus a small margin.
    ///
    /// ```
    /// use bloomkit::{CuckooFilter, Error};
    /// assert_eq!(CuckooFilter::with_capacity(1_000, 0.05)?.fingerprint_bits(), 8);
    /// assert_eq!(CuckooFilter::with_capacity(1_000, 0.001)?.fingerprint_bits(), 16);
    /// assert!(matches!(
    ///     CuckooFilter::with_capacity(1_000, 1e-5),
    ///     Err(Error::UnreachableFpp { .. })
    /// ));
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn with_capacity(capacity: impl crate::params::ItemCount, fpp: f64) -> Result<Self, Error> {
        Self::builder().capacity(capacity).fpp(fpp).build()
    }

    /// A builder for every other choice: bucket size, fingerprint width, explicit number of
    /// buckets, kicks, hashing.
    pub fn builder() -> CuckooFilterBuilder {
        CuckooFilterBuilder::default()
    }

    /// Adds one copy of an item. `Ok(true)` if the item was certainly new (its fingerprint
    /// was in neither of its buckets), `Ok(false)` if it was already reported present — a
    /// copy is added either way, so that each `remove` takes one out.
    ///
    /// An error ([`Error::Full`]) while an evicted fingerprint waits in the victim slot;
    /// the filter is then unchanged. An insert that runs out of kicks still succeeds (its
    /// item is in) and fills the victim slot, so the *next* insert fails. (In
    /// [`Layout::RedisBloom`], [`Error::Full`] when no sub-filter has room and the filter
    /// may not grow; nothing changes then.)
    pub fn insert<I: Item + ?Sized>(&mut self, item: &I) -> Result<bool, Error> {
        match &mut self.table {
            Table::Paper(table) => item.with_bytes(|bytes| table.insert(bytes)),
            Table::RedisBloom(table) => item.with_bytes(|bytes| redis_insert(table, bytes)),
        }
    }

    /// `false` if the item is certainly absent, `true` if it may be present (its
    /// fingerprint is in one of its two buckets or in the victim slot).
    #[inline]
    pub fn contains<I: Item + ?Sized>(&self, item: &I) -> bool {
        match &self.table {
            Table::Paper(table) => item.with_bytes(|bytes| table.contains(bytes)),
            Table::RedisBloom(table) => item.with_bytes(|bytes| table.contains(bytes)),
        }
    }

    /// The answers of [`contains`](Self::contains) for every item. Both buckets of each item
    /// are prefetched a window of items before they are read ([`lookahead`]), so that the
    /// reads of many items are in flight at once; the answers are those of the single calls.
    ///
    /// ```
    /// use bloomkit::CuckooFilter;
    /// let mut filter = CuckooFilter::with_capacity(1000, 0.01)?;
    /// filter.insert_batch(&[1u64, 2, 3])?;
    /// assert_eq!(filter.contains_batch(&[1u64, 2, 3]), vec![true, true, true]);
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn contains_batch<I: Item>(&self, items: &[I]) -> Vec<bool> {
        lookahead::answers(items.len(), |out| self.contains_batch_into(items, out))
    }

    /// [`contains_batch`](Self::contains_batch) into a vector that is cleared first.
    pub fn contains_batch_into<I: Item>(&self, items: &[I], out: &mut Vec<bool>) {
        lookahead::ready(out, items.len());
        match &self.table {
            Table::Paper(table) => table.contains_batch_into(items, out),
            Table::RedisBloom(table) => {
                out.extend(items.iter().map(|i| i.with_bytes(|b| table.contains(b))))
            }
        }
    }

    /// Inserts every item in order, as [`insert`](Self::insert) of each would; in a table of
    /// at least [`LARGE_TABLE_BYTES`], with both buckets of each item prefetched a window of
    /// items ahead ([`lookahead`]).
    ///
    /// `Ok(n)` when every item went in, `n` of them certainly new. At the first item the
    /// filter refuses, [`Error::Full`]: the items before it are in, it and the items after
    /// it are not (and [`len`](Filter::len) grew by the number that went in).
    ///
    /// ```
    /// use bloomkit::{CuckooFilter, Error, Filter};
    /// let mut filter = CuckooFilter::with_capacity(1000, 0.01)?;
    /// assert_eq!(filter.insert_batch(&["a", "b", "a"])?, 2);
    /// assert_eq!(filter.len(), 3); // a multiset: two copies of "a"
    ///
    /// let mut tiny = CuckooFilter::builder().num_buckets(4).fingerprint_bits(16).build()?;
    /// let items: Vec<u32> = (0..100).collect();
    /// assert!(matches!(tiny.insert_batch(&items), Err(Error::Full { .. })));
    /// let went_in = tiny.len() as usize;
    /// assert!(items[..went_in].iter().all(|i| tiny.contains(i)));
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn insert_batch<I: Item>(&mut self, items: &[I]) -> Result<u64, Error> {
        match &mut self.table {
            Table::Paper(table) => table.insert_batch(items),
            Table::RedisBloom(table) => {
                let mut new = 0;
                for item in items {
                    new += item.with_bytes(|bytes| redis_insert(table, bytes))? as u64;
                }
                Ok(new)
            }
        }
    }

    /// Removes one copy of an item, then tries to move a waiting victim into the table.
    /// `Ok(true)` when a copy was taken out (a cuckoo filter can always take it out: the
    /// `bool` is there for the contract every removable kind shares, see
    /// [`Removable::remove`](crate::Removable::remove)).
    ///
    /// [`Error::NotPresent`], with the filter unchanged, if the item is certainly absent.
    /// Remove only items that were inserted: removing a false positive deletes another
    /// item's fingerprint (see the module documentation).
    pub fn remove<I: Item + ?Sized>(&mut self, item: &I) -> Result<bool, Error> {
        match &mut self.table {
            Table::Paper(table) => item.with_bytes(|bytes| table.remove(bytes)),
            Table::RedisBloom(table) => match item.with_bytes(|bytes| table.delete(bytes)) {
                true => Ok(true),
                false => Err(Error::NotPresent),
            },
        }
    }

    /// The number of copies of the item's fingerprint in its two buckets and the victim
    /// slot: at least the number of times it was inserted and not removed, more if other
    /// items share its fingerprint and buckets.
    pub fn count<I: Item + ?Sized>(&self, item: &I) -> u32 {
        match &self.table {
            Table::Paper(table) => item.with_bytes(|bytes| table.count(bytes)),
            Table::RedisBloom(table) => item
                .with_bytes(|bytes| table.count(bytes))
                .min(u32::MAX as u64) as u32,
        }
    }

    /// B, the number of buckets (of the first sub-filter, in [`Layout::RedisBloom`]).
    pub fn num_buckets(&self) -> u64 {
        match &self.table {
            Table::Paper(table) => table.num_buckets,
            Table::RedisBloom(table) => table.num_buckets(),
        }
    }

    /// b, the number of slots per bucket.
    pub fn bucket_size(&self) -> u32 {
        match &self.table {
            Table::Paper(table) => table.bucket_size,
            Table::RedisBloom(table) => table.bucket_size() as u32,
        }
    }

    /// f, the width of a fingerprint in bits (8 in [`Layout::RedisBloom`]).
    pub fn fingerprint_bits(&self) -> u32 {
        match &self.table {
            Table::Paper(table) => table.fingerprint_bits,
            Table::RedisBloom(_) => 8,
        }
    }

    /// The most evictions of one insert's random walk before it uses the victim slot (it
    /// also bounds the length of the chain the breadth-first search looks for); in
    /// [`Layout::RedisBloom`], RedisBloom's MAXITERATIONS.
    pub fn max_kicks(&self) -> u32 {
        match &self.table {
            Table::Paper(table) => table.max_kicks,
            Table::RedisBloom(table) => table.max_iterations() as u32,
        }
    }

    crate::sizing::capacity_and_fpp_getters!();

    /// B · b, the number of slots.
    pub fn num_slots(&self) -> u64 {
        match &self.table {
            Table::Paper(table) => table.slots.len(),
            Table::RedisBloom(table) => table.num_slots(),
        }
    }

    /// The number of tables: 1, or in [`Layout::RedisBloom`] the sub-filters the filter
    /// grew (RedisBloom's `Number of filters`).
    pub fn num_sub_filters(&self) -> usize {
        self.redisbloom_table().map_or(1, |r| r.filters().len())
    }

    /// e, the factor by which each new sub-filter's buckets grow in [`Layout::RedisBloom`]
    /// (`CF.RESERVE … EXPANSION e`); 0 for a filter that never grows (and for the paper's
    /// layout, which never does).
    pub fn expansion(&self) -> u32 {
        self.redisbloom_table().map_or(0, |r| r.expansion() as u32)
    }

    /// The RedisBloom filter that is this filter's table in [`Layout::RedisBloom`] (its
    /// sub-filters, counts of items and deletes, expansion): what its `CF.SCANDUMP` holds.
    pub fn redisbloom_table(&self) -> Option<&RedisBloomCuckoo> {
        match &self.table {
            Table::Paper(_) => None,
            Table::RedisBloom(table) => Some(table),
        }
    }

    /// A filter of [`Layout::RedisBloom`] whose table is `table`, as it is: what a
    /// `CF.SCANDUMP` holds, with every sub-filter it grew. Its capacity is what
    /// `CF.RESERVE` was given as far as the first sub-filter tells (its slots), ε the rate
    /// at that load. The hashing must be RedisBloom 2.2's and later
    /// ([`redisbloom::Hashing::Murmur64A`]): no bloomkit filter hashes as 2.0 did.
    ///
    /// ```
    /// use bloomkit::cuckoo::redisbloom::{RedisBloomCuckoo, Unlimited};
    /// use bloomkit::cuckoo::CuckooFilter;
    /// let mut table = RedisBloomCuckoo::new(8, 2, 20, 1, &Unlimited).unwrap();
    /// for i in 0..30u32 {
    ///     table.insert_with(&i.to_le_bytes(), &Unlimited);
    /// }
    /// let f = CuckooFilter::from_redisbloom(table)?;
    /// assert!(f.num_sub_filters() > 1);
    /// assert!((0..30u32).all(|i| f.contains(&i.to_le_bytes())));
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn from_redisbloom(table: RedisBloomCuckoo) -> Result<Self, Error> {
        if table.hashing() != redisbloom::Hashing::Murmur64A {
            return Err(Error::InvalidParameter {
                parameter: "RedisBloom cuckoo filter",
                reason: "it hashes as RedisBloom 1.1 to 2.0 (32-bit MurmurHash2), which no \
                         bloomkit filter does"
                    .into(),
            });
        }
        Ok(Self::around(table, None))
    }

    /// The filter of [`Layout::RedisBloom`] around `table`, whose parameters it holds:
    /// capacity as given, else the first sub-filter's slots; ε the rate at that load.
    fn around(table: RedisBloomCuckoo, capacity_and_fpp: Option<(u64, f64)>) -> Self {
        let first_slots = table.num_buckets() * table.bucket_size() as u64;
        let (capacity, target_fpp) = capacity_and_fpp.unwrap_or_else(|| {
            let fpp = params::redisbloom_cuckoo_fpp(table.bucket_size() as u32, 1.0);
            (first_slots, fpp)
        });
        CuckooFilter {
            capacity,
            target_fpp,
            table: Table::RedisBloom(Box::new(table)),
        }
    }

    /// `2b / 2^f`, the bound on the false-positive probability at any load.
    /// (`2b / 255` in RedisBloom's layout, whose fingerprints take 255 values.)
    pub fn fpp_bound(&self) -> f64 {
        match self.layout() {
            Layout::Paper => params::cuckoo_fpp_bound(self.fingerprint_bits(), self.bucket_size()),
            Layout::RedisBloom => 2.0 * self.bucket_size() as f64 / 255.0,
        }
    }

    /// α, the fraction of the table's slots that hold a fingerprint (the victim slot is not
    /// part of the table).
    pub fn load_factor(&self) -> f64 {
        let in_table = match &self.table {
            Table::Paper(table) => table.in_table(),
            Table::RedisBloom(table) => table.used_slots(),
        };
        in_table as f64 / self.num_slots() as f64
    }

    /// Σ αⱼ, the load factors of the tables summed: a query compares its fingerprint with
    /// 2b slots of every sub-filter, so its false-positive rate is that of one table at
    /// this load, `1 − (1 − 1/255)^(2b·Σαⱼ)`.
    fn summed_load(&self) -> f64 {
        match &self.table {
            Table::Paper(_) => self.load_factor(),
            Table::RedisBloom(table) => table
                .filters()
                .iter()
                .map(|f| f.used_slots() as f64 / f.data().len() as f64)
                .sum(),
        }
    }

    /// Whether an evicted fingerprint waits in the victim slot; inserts fail until a
    /// remove makes room. (Never in [`Layout::RedisBloom`], which has no victim slot.)
    pub fn is_full(&self) -> bool {
        matches!(&self.table, Table::Paper(table) if table.victim.is_some())
    }

    /// How the filter maps items to fingerprints and buckets.
    #[inline]
    pub fn layout(&self) -> Layout {
        match &self.table {
            Table::Paper(_) => Layout::Paper,
            Table::RedisBloom(_) => Layout::RedisBloom,
        }
    }

    fn rate_at_load(&self, load: f64) -> f64 {
        match self.layout() {
            Layout::Paper => params::cuckoo_fpp(self.fingerprint_bits(), self.bucket_size(), load),
            Layout::RedisBloom => params::redisbloom_cuckoo_fpp(self.bucket_size(), load),
        }
    }

    /// The eviction generator's state and the victim slot, as stored: RedisBloom's layout
    /// has neither, and stores the state a seed of 0 gives and an empty slot.
    fn walk(&self) -> (u64, Option<Victim>) {
        match &self.table {
            Table::Paper(table) => (table.rng, table.victim),
            Table::RedisBloom(_) => (RNG_SALT, None),
        }
    }

    /// The paper's table, for the tests that look inside it.
    #[cfg(test)]
    fn paper(&mut self) -> &mut PaperTable {
        match &mut self.table {
            Table::Paper(table) => table,
            Table::RedisBloom(_) => panic!("a filter of RedisBloom's layout"),
        }
    }
}

/// Adds an item to a RedisBloom table: `Ok(true)` if it was certainly new.
fn redis_insert(table: &mut RedisBloomCuckoo, bytes: &[u8]) -> Result<bool, Error> {
    let (new, inserted) = table.insert_noting_new(bytes, &REDIS_TABLE_BYTES);
    let full = |reason: String| Error::Full {
        kind: Kind::Cuckoo,
        reason,
    };
    match inserted {
        RedisInsert::Inserted => Ok(new),
        RedisInsert::Exists => Ok(false),
        RedisInsert::NoSpace => Err(full(format!(
            "{} evictions found no free slot and the filter never grows (expansion 0, as \
             RedisBloom's CF.RESERVE … EXPANSION 0); nothing changed: build it with an \
             expansion, or larger",
            table.max_iterations()
        ))),
        RedisInsert::CannotGrow => Err(full(format!(
            "no sub-filter can be added after {} (RedisBloom's limits: 65535 sub-filters \
             of fewer than 2^56 buckets)",
            table.filters().len()
        ))),
        RedisInsert::TooLarge(needed) => Err(Error::TooLarge {
            bits: needed.saturating_mul(8),
            max: MAX_NUM_BITS,
        }),
    }
}

impl Filter for CuckooFilter {
    crate::filter::filter_basics!(Cuckoo: try_insert, contains, capacity, target_fpp);

    /// The paper's layout: the hashing it was built with. RedisBloom's:
    /// [`Hashing::redisbloom_cuckoo`], whose scheme marks the layout.
    fn hashing(&self) -> Hashing {
        match &self.table {
            Table::Paper(table) => table.hashing,
            Table::RedisBloom(_) => Hashing::redisbloom_cuckoo(),
        }
    }

    /// Empties the table and the victim slot and restarts the eviction generator, as
    /// after `build` (in RedisBloom's layout: one empty sub-filter, as `CF.RESERVE` made).
    fn clear(&mut self) {
        match &mut self.table {
            Table::Paper(table) => table.clear(),
            Table::RedisBloom(table) => table.clear(),
        }
    }

    /// The number of fingerprints held: insertions less removals.
    fn len(&self) -> u64 {
        match &self.table {
            Table::Paper(table) => table.len,
            Table::RedisBloom(table) => table.num_items(),
        }
    }

    /// Exact: every insertion stores one fingerprint.
    fn estimated_len(&self) -> f64 {
        Filter::len(self) as f64
    }

    fn memory_bytes(&self) -> usize {
        match &self.table {
            Table::Paper(table) => table.slots.memory_bytes(),
            Table::RedisBloom(table) => table.num_slots() as usize,
        }
    }

    /// The facts of the filter's layout: the paper's table and victim slot, or RedisBloom's
    /// sub-filters (what `CF.INFO` reports: sub-filters, expansion, buckets, bucket size,
    /// max iterations, items inserted and deleted).
    fn properties(&self) -> Vec<(&'static str, String)> {
        let mut facts = vec![
            ("layout", self.layout().name().to_string()),
            ("bucket size (b)", self.bucket_size().to_string()),
            ("fingerprint bits (f)", self.fingerprint_bits().to_string()),
        ];
        let load = format!("{:.6}", self.load_factor());
        let bound = format!("{:.6e}", self.fpp_bound());
        let target = format!("{}", self.target_fpp);
        let redis = match &self.table {
            Table::Paper(table) => {
                facts.extend([
                    ("buckets", table.num_buckets.to_string()),
                    ("slots", self.num_slots().to_string()),
                    ("load factor", load),
                    ("target load", format!("{CUCKOO_TARGET_LOAD}")),
                    ("target fpp", target),
                    ("fpp bound (2b/2^f)", bound),
                    ("max kicks", table.max_kicks.to_string()),
                    ("victim slot", table.victim_state().to_string()),
                ]);
                return facts;
            }
            Table::RedisBloom(redis) => redis,
        };
        let all_buckets: u64 = redis.filters().iter().map(|f| f.num_buckets()).sum();
        let expansion = match redis.expansion() {
            0 => "0 (never grows: inserts fail when the table is full)".to_string(),
            e => format!("{e} (each new sub-filter has {e} times the newest one's buckets)"),
        };
        facts.extend([
            ("sub-filters", redis.filters().len().to_string()),
            ("expansion", expansion),
            (
                "buckets (first sub-filter)",
                redis.num_buckets().to_string(),
            ),
            ("buckets (all sub-filters)", all_buckets.to_string()),
            ("slots", self.num_slots().to_string()),
            ("load factor", load),
            ("target fpp", target),
            ("fpp bound per sub-filter (2b/255)", bound),
            ("max iterations", redis.max_iterations().to_string()),
            (
                "items (CF.INFO's items inserted)",
                redis.num_items().to_string(),
            ),
            ("items deleted", redis.num_deletes().to_string()),
        ]);
        facts
    }

    /// In RedisBloom's layout with an expansion, the filter adds sub-filters when full
    /// (its rate rises with them: see [`expected_fpp`](Filter::expected_fpp)); otherwise
    /// a full table refuses inserts.
    fn grows(&self) -> bool {
        self.expansion() > 0
    }

    /// `1 − (1 − 2^−f)^(2bα)` at the current load factor α (`1 − (1 − 1/255)^(2bα)` in
    /// RedisBloom's layout).
    fn expected_fpp(&self) -> f64 {
        self.rate_at_load(self.summed_load())
    }

    /// The rate with n items in the tables there are, filled oldest first (n past their
    /// slots fills them all).
    fn fpp_at(&self, n: u64) -> f64 {
        let Some(redis) = self.redisbloom_table() else {
            return self
                .rate_at_load(n.min(self.num_slots()) as f64 / self.num_slots().max(1) as f64);
        };
        let (mut left, mut load) = (n, 0.0);
        for f in redis.filters() {
            let slots = f.data().len() as u64;
            load += left.min(slots) as f64 / slots as f64;
            left -= left.min(slots);
        }
        self.rate_at_load(load)
    }
}

crate::registry::registered!(
    CuckooFilter,
    {
        name: "cuckoo",
        summary:
            "Cuckoo filter (Fan et al. 2014): fingerprints in buckets; remove; can become full.",
        grow: false,
        forgets: false,
        index_scheme: false,
    },
    remove
);

/// Collects items into a filter at ε = 1% sized for their number, as a set: an item
/// already reported present is not stored again, so no item can fill its two buckets. The
/// items are buffered; if an insert still fails (a rare eviction cycle), the filter is
/// rebuilt with twice the buckets, so collecting does not fail (short of a table past
/// [`MAX_NUM_BITS`], where it panics) and the filter returned accepts further inserts.
///
/// ```
/// use bloomkit::{CuckooFilter, Filter};
/// let filter: CuckooFilter = ["a", "b", "c", "a"].into_iter().collect();
/// assert!(filter.contains("b"));
/// assert_eq!(filter.len(), 3);
/// ```
impl<I: Item> FromIterator<I> for CuckooFilter {
    fn from_iter<T: IntoIterator<Item = I>>(iter: T) -> Self {
        let items: Vec<I> = iter.into_iter().collect();
        let mut num_buckets = None;
        loop {
            let mut builder = CuckooFilter::builder()
                .capacity(items.len().max(1) as u64)
                .fpp(DEFAULT_FPP);
            if let Some(buckets) = num_buckets {
                builder = builder.num_buckets(buckets);
            }
            let mut filter = builder
                .build()
                .expect("ε = 1% is valid and any in-memory collection fits");
            let stored = items
                .iter()
                .all(|item| filter.contains(item) || filter.insert(item).is_ok());
            if stored && !filter.is_full() {
                return filter;
            }
            num_buckets = Some(filter.num_buckets() * 2);
        }
    }
}

/// Builds a [`CuckooFilter`] from a capacity and ε, or from an explicit table shape.
///
/// ```
/// use bloomkit::{CuckooFilter, HashFunction};
///
/// let filter = CuckooFilter::builder()
///     .capacity(1_000_000)
///     .fpp(0.001)
///     .bucket_size(8)
///     .hash_function(HashFunction::Xxh3)
///     .random_seed()
///     .build()?;
/// assert_eq!(filter.fingerprint_bits(), 16); // 2·8 / 2^16 ≈ 0.02% ≤ 0.1%
/// assert_eq!(filter.num_buckets(), 131_579 + 708); // ⌈10⁶ / (8 · 0.95)⌉ + ⌈2·√(10⁶/8)⌉
///
/// let explicit = CuckooFilter::builder().num_buckets(1024).fingerprint_bits(8).build()?;
/// assert_eq!(explicit.capacity(), 3_891); // ⌊1024 · 4 · 0.95⌋
/// # Ok::<(), bloomkit::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
#[must_use = "a builder does nothing until .build() is called"]
pub struct CuckooFilterBuilder {
    capacity: Option<u64>,
    fpp: Option<f64>,
    bucket_size: Option<u32>,
    fingerprint_bits: Option<u32>,
    num_buckets: Option<u64>,
    max_kicks: Option<u32>,
    layout: Option<Layout>,
    expansion: Option<u32>,
    hashing: HashingChoice,
}

impl CuckooFilterBuilder {
    crate::hash::hashing_setters!();

    crate::sizing::capacity_and_fpp_setters!(
        "n, the number of items expected.",
        "ε, the false-positive probability wanted (default 1%); chooses f."
    );

    crate::sizing::setters! {
        /// b, the slots per bucket: 2, 4 (the default) or 8.
        bucket_size: u32;

        /// f, the fingerprint width: 8, 12 or 16 bits, instead of deriving it from ε.
        fingerprint_bits: u32;

        /// B, the number of buckets (any B ≥ 1), instead of deriving it from the capacity.
        num_buckets: u64;

        /// The most evictions of an insert's random walk before the victim slot is used
        /// (default 500, at most [`MAX_KICKS_LIMIT`]); it also bounds the breadth-first search's
        /// chains, which are at most [`SEARCH_DEPTH`] moves long anyway.
        max_kicks: u32;
    }

    /// The table layout: the paper's (the default) or RedisBloom's `CF.*` table, sized as
    /// `CF.RESERVE n' BUCKETSIZE b MAXITERATIONS k` sizes it for n' = n / 0.65 (0.45 with
    /// b = 1: the share of the slots such a table fills, see `redisbloom_load` in the
    /// source): B = nextpow2(n' / b), b = 2 and
    /// k = [`REDISBLOOM_MAX_KICKS`] by default; 8-bit fingerprints; MurmurHash64A with seed 0, so no other hash
    /// function; a seed given is not used, since RedisBloom's evictions are deterministic). Given ε and no bucket size, b is 2
    /// if the rate at n items, `1 − (1 − 1/255)^(2bα)`, reaches ε, else 1; an ε that b
    /// cannot reach is [`Error::UnreachableFpp`].
    ///
    /// ```
    /// use bloomkit::cuckoo::{CuckooFilter, Layout};
    /// let f = CuckooFilter::builder().layout(Layout::RedisBloom).capacity(1000).build()?;
    /// assert_eq!((f.num_buckets(), f.bucket_size(), f.fingerprint_bits()), (1024, 2, 8));
    /// assert_eq!(f.max_kicks(), 500);
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn layout(mut self, layout: Layout) -> Self {
        self.layout = Some(layout);
        self
    }

    /// e, for [`Layout::RedisBloom`]: when an insert finds no room, a sub-filter of e times
    /// the newest one's buckets is added, as `CF.RESERVE … EXPANSION e` makes RedisBloom
    /// do (rounded up to a power of two as there; 0 to 32768). The default 0 never grows:
    /// such an insert fails with [`Error::Full`], changing nothing. Only RedisBloom's
    /// layout grows: an expansion without a layout chooses it, with the paper's it is an
    /// error.
    ///
    /// ```
    /// use bloomkit::cuckoo::{CuckooFilter, Layout};
    /// let mut f = CuckooFilter::builder()
    ///     .layout(Layout::RedisBloom).capacity(64).expansion(2).build()?;
    /// for i in 0..1000u32 {
    ///     f.insert(&i)?;
    /// }
    /// assert!(f.num_sub_filters() > 1);
    /// assert!((0..1000u32).all(|i| f.contains(&i)));
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn expansion(mut self, expansion: u32) -> Self {
        self.expansion = Some(expansion);
        self
    }

    /// [`layout`](Self::layout) by its name (the registry's `layout` option).
    pub(crate) fn layout_named(self, name: &str) -> Self {
        self.layout(if name == Layout::RedisBloom.name() {
            Layout::RedisBloom
        } else {
            Layout::Paper
        })
    }

    /// Validates the parameters and allocates the table.
    ///
    /// With neither capacity nor number of buckets, the error is [`Error::ZeroCapacity`].
    /// With buckets but no capacity, the capacity is `⌊B · b · 0.95⌋` (`B · b` in
    /// RedisBloom's layout).
    pub fn build(self) -> Result<CuckooFilter, Error> {
        let grows = self.expansion.is_some() && self.layout.is_none();
        if self.layout == Some(Layout::RedisBloom) || grows {
            return self.build_redisbloom();
        }
        if let Some(e) = self.expansion {
            return Err(Error::InvalidParameter {
                parameter: "expansion",
                reason: format!(
                    "{e}: only RedisBloom's layout grows by sub-filters (--layout redisbloom)"
                ),
            });
        }
        let bucket_size = check_bucket_size(self.bucket_size.unwrap_or(DEFAULT_BUCKET_SIZE))?;
        let fpp = crate::sizing::fpp(self.fpp)?;
        let fingerprint_bits = match self.fingerprint_bits {
            Some(bits) => {
                let bits = check_fingerprint_bits(bits)?;
                let bound = params::cuckoo_fpp_bound(bits, bucket_size);
                if self.fpp.is_some() && bound > fpp {
                    return Err(Error::UnreachableFpp {
                        kind: Kind::Cuckoo,
                        fpp,
                        reason: format!(
                            "{bits}-bit fingerprints in buckets of {bucket_size} give ε up to \
                             {bound:.3e}, more than the requested {fpp}; leave the width to \
                             the builder or ask for a larger ε"
                        ),
                    });
                }
                bits
            }
            None => params::cuckoo_fingerprint_bits(fpp, bucket_size).ok_or_else(|| {
                Error::UnreachableFpp {
                    kind: Kind::Cuckoo,
                    fpp,
                    reason: format!(
                        "a cuckoo filter with buckets of {bucket_size} reaches at best ε = \
                         2b/2^16 = {:.3e} (16-bit fingerprints), more than the requested \
                         {fpp}; ask for a larger ε, use smaller buckets, or use a Bloom \
                         filter",
                        params::cuckoo_fpp_bound(16, bucket_size)
                    ),
                }
            })?,
        };
        crate::sizing::check_capacity(self.capacity)?;
        // A table sized for a capacity too large is refused in the capacity's words: the
        // slots it would need may pass what 64 bits count.
        let capacity_too_large = |capacity| Error::CapacityTooLarge {
            capacity,
            fpp,
            max: MAX_NUM_BITS,
        };
        let num_buckets = match (self.num_buckets, self.capacity) {
            (Some(buckets), _) => check_num_buckets(buckets)?,
            (None, Some(n)) => {
                params::cuckoo_num_buckets(n, bucket_size, params::cuckoo_sizing_load(n))
                    .ok_or_else(|| capacity_too_large(n))?
            }
            (None, None) => return Err(Error::ZeroCapacity),
        };
        let num_slots = check_table_size(num_buckets, bucket_size, fingerprint_bits).map_err(
            |error| match (error, self.num_buckets, self.capacity) {
                (Error::TooLarge { .. }, None, Some(n)) => capacity_too_large(n),
                (error, ..) => error,
            },
        )?;
        let capacity = self
            .capacity
            .unwrap_or_else(|| ((num_slots as f64 * CUCKOO_TARGET_LOAD).floor() as u64).max(1));
        let target_fpp = match (self.fpp, self.fingerprint_bits) {
            // The rate with every slot full: just under 2b/2^f, and below 1 even where that
            // bound is not (4-bit fingerprints in buckets of 8).
            (None, Some(bits)) => params::cuckoo_fpp(bits, bucket_size, 1.0),
            _ => fpp,
        };
        let max_kicks = self.max_kicks.unwrap_or(DEFAULT_MAX_KICKS);
        if max_kicks > MAX_KICKS_LIMIT {
            return Err(Error::InvalidParameter {
                parameter: "max kicks",
                reason: format!("must be at most {MAX_KICKS_LIMIT}, got {max_kicks}"),
            });
        }
        // The builder offers no scheme setter, so the scheme is the default one.
        let hashing = self.hashing.resolve()?;
        let table = PaperTable::empty(
            num_buckets,
            bucket_size,
            fingerprint_bits,
            max_kicks,
            hashing,
        )?;
        Ok(CuckooFilter {
            capacity,
            target_fpp,
            table: Table::Paper(table),
        })
    }
}

impl CuckooFilterBuilder {
    /// [`build`](Self::build) for [`Layout::RedisBloom`], with `CF.RESERVE`'s checks.
    fn build_redisbloom(self) -> Result<CuckooFilter, Error> {
        let bad = |parameter, reason: String| Error::InvalidParameter { parameter, reason };
        // A seed, given or drawn, is not used: RedisBloom's hash has seed 0 and its
        // evictions are deterministic.
        if self.hashing.hashing.function != Hashing::default().function
            || self.hashing.hashing.scheme != Hashing::default().scheme
        {
            return Err(bad(
                "hashing",
                "RedisBloom's cuckoo layout hashes with MurmurHash64A(item, 0); it takes no \
                 other hash function"
                    .into(),
            ));
        }
        let bucket_size = match (self.bucket_size, self.fpp, self.num_buckets, self.capacity) {
            (Some(b), ..) => b,
            // ε and n alone: CF.RESERVE's 2 slots per bucket where they reach ε, else 1.
            (None, Some(fpp), None, Some(n)) => [REDISBLOOM_BUCKET_SIZE, 1]
                .into_iter()
                .find(|&b| {
                    let buckets = (n as f64 / (b as f64 * redisbloom_load(b))).ceil() as u64;
                    buckets.checked_next_power_of_two().is_some_and(|buckets| {
                        let load = n as f64 / (buckets as f64 * b as f64);
                        params::redisbloom_cuckoo_fpp(b, load) <= fpp
                    })
                })
                .unwrap_or(1),
            _ => REDISBLOOM_BUCKET_SIZE,
        };
        check_redisbloom_bucket_size(bucket_size)?;
        if let Some(bits) = self.fingerprint_bits.filter(|&b| b != 8) {
            return Err(bad(
                "fingerprint bits",
                format!("RedisBloom's cuckoo layout has 8-bit fingerprints, not {bits}"),
            ));
        }
        crate::sizing::check_capacity(self.capacity)?;
        // A table sized for a capacity too large is refused in the capacity's words, as the
        // native layout refuses it: at the ε asked, or else the one the layout's sizing load
        // gives.
        let capacity_too_large = |capacity| Error::CapacityTooLarge {
            capacity,
            fpp: self.fpp.unwrap_or_else(|| {
                params::redisbloom_cuckoo_fpp(bucket_size, redisbloom_load(bucket_size))
            }),
            max: MAX_NUM_BITS,
        };
        let num_buckets = match (self.num_buckets, self.capacity) {
            (Some(buckets), _) => check_redisbloom_buckets(buckets)?,
            (None, Some(n)) => {
                if n < 2 * bucket_size as u64 {
                    return Err(bad(
                        "capacity",
                        format!(
                            "{n} is less than 2 × the bucket size {bucket_size} (CF.RESERVE \
                             refuses it too)"
                        ),
                    ));
                }
                let buckets = ((n as f64 / (bucket_size as f64 * redisbloom_load(bucket_size)))
                    .ceil() as u64)
                    .checked_next_power_of_two()
                    .filter(|&b| b <= REDISBLOOM_MAX_BUCKETS)
                    .ok_or_else(|| capacity_too_large(n))?;
                check_redisbloom_buckets(buckets)?
            }
            (None, None) => return Err(Error::ZeroCapacity),
        };
        let num_slots = check_table_size(num_buckets, bucket_size, 8).map_err(|error| {
            match (error, self.num_buckets, self.capacity) {
                (Error::TooLarge { .. }, None, Some(n)) => capacity_too_large(n),
                (error, ..) => error,
            }
        })?;
        let capacity = self.capacity.unwrap_or(num_slots);
        let at_capacity =
            params::redisbloom_cuckoo_fpp(bucket_size, capacity as f64 / num_slots as f64);
        let target_fpp = match self.fpp {
            None => at_capacity,
            Some(_) => {
                let fpp = crate::sizing::fpp(self.fpp)?;
                if fpp < at_capacity {
                    return Err(Error::UnreachableFpp {
                        kind: Kind::Cuckoo,
                        fpp,
                        reason: format!(
                            "RedisBloom's one-byte fingerprints in buckets of {bucket_size} \
                             give ε = 1 − (1 − 1/255)^(2bα) = {at_capacity:.3e} at {capacity} \
                             items in {num_slots} slots; ask for a larger ε or use smaller \
                             buckets (--bucket-size 1)"
                        ),
                    });
                }
                fpp
            }
        };
        let max_kicks = self.max_kicks.unwrap_or(REDISBLOOM_MAX_KICKS);
        if !(1..=REDISBLOOM_MAX_KICKS_LIMIT).contains(&max_kicks) {
            return Err(bad(
                "max kicks",
                format!(
                    "RedisBloom's MAXITERATIONS is 1 to {REDISBLOOM_MAX_KICKS_LIMIT}, got \
                     {max_kicks}"
                ),
            ));
        }
        let expansion = self.expansion.unwrap_or(0);
        if expansion > redisbloom::MAX_EXPANSION as u32 {
            return Err(bad(
                "expansion",
                format!(
                    "RedisBloom's EXPANSION is 0 to {}, got {expansion}",
                    redisbloom::MAX_EXPANSION
                ),
            ));
        }
        let shape = redisbloom::Shape {
            items: 0,
            buckets: num_buckets,
            deletes: 0,
            filters: 1,
            bucket_size: bucket_size as u64,
            max_iterations: max_kicks as u64,
            // CF.RESERVE's rounding: a power of two, or 0.
            expansion: redisbloom::next_pow2(expansion as u64),
        };
        let table =
            RedisBloomCuckoo::zeroed(&shape, redisbloom::Hashing::Murmur64A, &REDIS_TABLE_BYTES)
                .map_err(|_| Error::TooLarge {
                    bits: num_slots.saturating_mul(8),
                    max: MAX_NUM_BITS,
                })?;
        Ok(CuckooFilter::around(table, Some((capacity, target_fpp))))
    }
}

fn check_redisbloom_bucket_size(bucket_size: u32) -> Result<u32, Error> {
    if (1..=REDISBLOOM_MAX_BUCKET_SIZE).contains(&bucket_size) {
        Ok(bucket_size)
    } else {
        Err(Error::InvalidParameter {
            parameter: "bucket size",
            reason: format!(
                "RedisBloom's is 1 to {REDISBLOOM_MAX_BUCKET_SIZE} slots, got {bucket_size}"
            ),
        })
    }
}

fn check_redisbloom_buckets(num_buckets: u64) -> Result<u64, Error> {
    if num_buckets.is_power_of_two() && num_buckets <= REDISBLOOM_MAX_BUCKETS {
        Ok(num_buckets)
    } else {
        Err(Error::InvalidParameter {
            parameter: "number of buckets",
            reason: format!("RedisBloom's is a power of two below 2^56, got {num_buckets}"),
        })
    }
}

fn check_bucket_size(bucket_size: u32) -> Result<u32, Error> {
    if BUCKET_SIZES.contains(&bucket_size) {
        Ok(bucket_size)
    } else {
        Err(Error::InvalidParameter {
            parameter: "bucket size",
            reason: format!("must be 2, 4 or 8 slots, got {bucket_size}"),
        })
    }
}

fn check_fingerprint_bits(bits: u32) -> Result<u32, Error> {
    if CUCKOO_FINGERPRINT_BITS.contains(&bits) {
        Ok(bits)
    } else {
        Err(Error::InvalidParameter {
            parameter: "fingerprint bits",
            reason: format!("must be 4 to 16, got {bits}"),
        })
    }
}

fn check_num_buckets(num_buckets: u64) -> Result<u64, Error> {
    if num_buckets > 0 {
        Ok(num_buckets)
    } else {
        Err(Error::InvalidParameter {
            parameter: "number of buckets",
            reason: "must be at least 1".into(),
        })
    }
}

/// The number of slots, if the table's storage fits in [`MAX_NUM_BITS`].
fn check_table_size(
    num_buckets: u64,
    bucket_size: u32,
    fingerprint_bits: u32,
) -> Result<u64, Error> {
    let too_large = |bits| Error::TooLarge {
        bits,
        max: MAX_NUM_BITS,
    };
    let slots = num_buckets
        .checked_mul(bucket_size as u64)
        .ok_or(too_large(u64::MAX))?;
    let bits = PackedCounters::encoded_len(slots, fingerprint_bits).saturating_mul(8);
    if bits > MAX_NUM_BITS {
        return Err(too_large(bits));
    }
    Ok(slots)
}

crate::codec::stored! {
    /// The cuckoo filter's parameters on disk (64 bytes), the kick generator's state and the
    /// victim slot (bucket 0 and fingerprint 0 when empty) included, so a loaded filter goes
    /// on as the saved one would. Payload: the table, `PackedCounters` words (little-endian
    /// u64), slot j of bucket i at counter i·b + j, ⌊64/f⌋ slots per word from the low bits up.
    struct Stored of f: CuckooFilter {
        num_buckets: u64 = f.num_buckets(),
        bucket_size: u32 = f.bucket_size(),
        fingerprint_bits: u32 = f.fingerprint_bits(),
        max_kicks: u32 = f.max_kicks(),
        capacity: u64 = f.capacity => check_capacity,
        target_fpp: f64 = f.target_fpp => check_target_fpp,
        len: u64 = Filter::len(f),
        rng: u64 = f.walk().0,
        victim_bucket: u64 = f.walk().1.map_or(0, |v| v.bucket),
        victim_fingerprint: u32 = f.walk().1.map_or(0, |v| v.fingerprint),
    }
}

impl Persist for CuckooFilter {
    /// In [`Layout::RedisBloom`], the parameters are followed by the mark 1 (u32), the
    /// expansion (u32), the deletes since the last compaction (u64) and the number of
    /// sub-filters (u64), 88 bytes in all; the payload is then every sub-filter's slots,
    /// one byte each, oldest sub-filter first (what its `CF.SCANDUMP` chunks hold), and the
    /// stored count is RedisBloom's count of items. Files written before sub-filters were
    /// kept (64 bytes of parameters, the table as packed counters) load as one sub-filter
    /// that never grows (expansion 0); a fingerprint waiting in their victim slot is put
    /// into the table by RedisBloom's insert, or, where that finds no room, into a second
    /// sub-filter (the filter then grows with expansion 1).
    fn encode_params(&self, out: &mut Vec<u8>) {
        Stored::of(self).write(out);
        if let Some(redis) = self.redisbloom_table() {
            out.extend_from_slice(&REDIS_SUB_FILTERS_MARK.to_le_bytes());
            out.extend_from_slice(&(redis.expansion() as u32).to_le_bytes());
            out.extend_from_slice(&redis.num_deletes().to_le_bytes());
            out.extend_from_slice(&(redis.filters().len() as u64).to_le_bytes());
        }
    }

    fn encode_payload(&self, out: &mut Vec<u8>) {
        match &self.table {
            Table::Paper(table) => table.slots.write_le_bytes(out),
            Table::RedisBloom(table) => {
                for f in table.filters() {
                    out.extend_from_slice(f.data());
                }
            }
        }
    }

    fn decode_parts(parts: &Parts<'_>) -> Result<Self, DecodeError> {
        parts.expect_kind(Kind::Cuckoo)?;
        if parts.params.len() > STORED_BYTES {
            return decode_sub_filters(parts);
        }
        let layout = if parts.hashing == Hashing::redisbloom_cuckoo() {
            Layout::RedisBloom
        } else {
            Layout::Paper
        };
        if layout == Layout::Paper && parts.hashing.scheme != IndexScheme::default() {
            return Err(invalid(
                "index scheme",
                format!(
                    "a cuckoo filter uses one digest, stored as scheme {}, found {}",
                    IndexScheme::default().name(),
                    parts.hashing.scheme.name()
                ),
            ));
        }
        let Stored {
            num_buckets,
            bucket_size,
            fingerprint_bits,
            max_kicks,
            capacity,
            target_fpp,
            len,
            rng,
            victim_bucket,
            victim_fingerprint,
        } = Stored::read(parts.params)?;
        match layout {
            Layout::Paper => {
                check_bucket_size(bucket_size)
                    .map_err(|e| invalid("bucket_size", e.to_string()))?;
                check_fingerprint_bits(fingerprint_bits)
                    .map_err(|e| invalid("fingerprint_bits", e.to_string()))?;
                check_num_buckets(num_buckets)
                    .map_err(|e| invalid("num_buckets", e.to_string()))?;
            }
            Layout::RedisBloom => {
                check_redisbloom_bucket_size(bucket_size)
                    .map_err(|e| invalid("bucket_size", e.to_string()))?;
                if fingerprint_bits != 8 {
                    return Err(invalid(
                        "fingerprint_bits",
                        format!("{fingerprint_bits} in RedisBloom's layout, which has 8"),
                    ));
                }
                check_redisbloom_buckets(num_buckets)
                    .map_err(|e| invalid("num_buckets", e.to_string()))?;
                if !(1..=REDISBLOOM_MAX_KICKS_LIMIT).contains(&max_kicks) {
                    return Err(invalid(
                        "max_kicks",
                        format!("{max_kicks} in RedisBloom's layout, whose range is 1 to 65535"),
                    ));
                }
            }
        }
        let num_slots = check_table_size(num_buckets, bucket_size, fingerprint_bits)
            .map_err(|e| invalid("num_buckets", e.to_string()))?;
        if max_kicks > MAX_KICKS_LIMIT {
            return Err(invalid(
                "max_kicks",
                format!("{max_kicks} is more than {MAX_KICKS_LIMIT}"),
            ));
        }
        let victim = match victim_fingerprint {
            0 if victim_bucket == 0 => None,
            0 => return Err(invalid("victim", "a bucket without a fingerprint".into())),
            fp if fp >> fingerprint_bits != 0 => {
                return Err(invalid(
                    "victim",
                    format!("fingerprint {fp} is wider than {fingerprint_bits} bits"),
                ))
            }
            _ if victim_bucket >= num_buckets => {
                return Err(invalid(
                    "victim",
                    format!("bucket {victim_bucket} of {num_buckets}"),
                ))
            }
            fingerprint => Some(Victim {
                bucket: victim_bucket,
                fingerprint,
            }),
        };
        // Check the payload length against the parameters before anything is allocated.
        let expected = PackedCounters::encoded_len(num_slots, fingerprint_bits);
        if parts.payload.len() as u64 != expected {
            return Err(invalid(
                "payload",
                format!(
                    "{} bytes, the parameters imply {expected}",
                    parts.payload.len()
                ),
            ));
        }
        let table = PackedCounters::from_le_bytes(num_slots, fingerprint_bits, parts.payload)?;
        let held = table.count_nonzero() + victim.is_some() as u64;
        if held != len {
            return Err(invalid(
                "len",
                format!("{len}, but the table and victim slot hold {held} fingerprints"),
            ));
        }
        if layout == Layout::RedisBloom {
            return Ok(upgrade_one_table(
                &table,
                num_buckets,
                bucket_size,
                max_kicks,
                victim,
                capacity,
                target_fpp,
            ));
        }
        Ok(CuckooFilter {
            capacity,
            target_fpp,
            table: Table::Paper(PaperTable {
                slots: table,
                num_buckets,
                bucket_size,
                fingerprint_bits,
                max_kicks,
                hashing: parts.hashing,
                len,
                victim,
                rng,
            }),
        })
    }
}

/// The bytes of the stored parameters (`Stored`).
const STORED_BYTES: usize = 64;
/// The u32 after the parameters of a filter of [`Layout::RedisBloom`] that keeps its
/// sub-filters.
const REDIS_SUB_FILTERS_MARK: u32 = 1;
/// The bytes after `Stored` in that case: the mark, expansion u32, deletes u64, sub-filters u64.
const REDIS_EXTRA_BYTES: usize = 24;

/// A file of [`Layout::RedisBloom`] written before sub-filters were kept: its one table (as
/// packed 8-bit counters) as one sub-filter that never grows, and a fingerprint in its
/// victim slot put into it by RedisBloom's insert (or into a second sub-filter, the filter
/// then growing with expansion 1, when the table has no room for it).
fn upgrade_one_table(
    table: &PackedCounters,
    num_buckets: u64,
    bucket_size: u32,
    max_kicks: u32,
    victim: Option<Victim>,
    capacity: u64,
    target_fpp: f64,
) -> CuckooFilter {
    let slots: Vec<u8> = (0..table.len()).map(|i| table.get(i) as u8).collect();
    let shape = redisbloom::Shape {
        items: table.count_nonzero(),
        buckets: num_buckets,
        deletes: 0,
        filters: 1,
        bucket_size: bucket_size as u64,
        max_iterations: max_kicks as u64,
        expansion: 0,
    };
    let mut slots = Some(slots);
    let mut redis = RedisBloomCuckoo::from_sub_filters(
        &shape,
        redisbloom::Hashing::Murmur64A,
        &redisbloom::Unlimited,
        |buckets| Some((buckets, slots.take()?)),
    )
    .expect("the parameters were checked as RedisBloom checks them");
    if let Some(v) = victim
        && !redis.insert_fingerprint(v.bucket, v.fingerprint as u8, 0)
    {
        let placed = redis.insert_fingerprint(v.bucket, v.fingerprint as u8, 1);
        debug_assert!(placed, "an empty second sub-filter takes it");
    }
    CuckooFilter::around(redis, Some((capacity, target_fpp)))
}

/// Reads a filter of [`Layout::RedisBloom`] with its sub-filters (see
/// [`CuckooFilter::encode_params`]): the parameters checked as RedisBloom checks a dump's
/// header, the payload's length against the sub-filters' sizes before anything is
/// allocated, the count of items against the slots in use.
fn decode_sub_filters(parts: &Parts<'_>) -> Result<CuckooFilter, DecodeError> {
    if parts.hashing != Hashing::redisbloom_cuckoo() {
        return Err(invalid(
            "parameters",
            format!(
                "{} bytes of parameters, which only a filter of RedisBloom's layout has",
                parts.params.len()
            ),
        ));
    }
    let (params, extra) = parts.params.split_at(STORED_BYTES);
    let mut r = crate::format::Reader::new(extra);
    let (mark, expansion, deletes, filters) = (r.u32()?, r.u32()?, r.u64()?, r.u64()?);
    r.finish("parameters")?;
    if mark != REDIS_SUB_FILTERS_MARK || extra.len() != REDIS_EXTRA_BYTES {
        return Err(invalid(
            "sub-filters",
            format!("mark {mark} after the parameters; RedisBloom's sub-filters are marked 1"),
        ));
    }
    let Stored {
        num_buckets,
        bucket_size,
        fingerprint_bits,
        max_kicks,
        capacity,
        target_fpp,
        len,
        rng: _,
        victim_bucket,
        victim_fingerprint,
    } = Stored::read(params)?;
    if fingerprint_bits != 8 || victim_bucket != 0 || victim_fingerprint != 0 {
        return Err(invalid(
            "parameters",
            format!(
                "{fingerprint_bits}-bit fingerprints and a victim ({victim_bucket}, \
                 {victim_fingerprint}); RedisBloom's layout has 8 and none"
            ),
        ));
    }
    let shape = redisbloom::Shape {
        items: len,
        buckets: num_buckets,
        deletes,
        filters,
        bucket_size: bucket_size as u64,
        max_iterations: max_kicks as u64,
        expansion: expansion as u64,
    };
    let why = "the parameters describe no RedisBloom filter (buckets a power of two below \
               2^56, bucket size 1 to 255, max kicks 1 to 65535, 1 to 65535 sub-filters, more \
               than one only with an expansion of at most 65535, each countable)";
    let sizes = RedisBloomCuckoo::sub_filter_buckets_of(&shape)
        .ok_or_else(|| invalid("sub-filters", format!("{shape:?}: {why}")))?;
    let bytes = sizes
        .iter()
        .try_fold(0u64, |t, &b| {
            t.checked_add(b.checked_mul(bucket_size as u64)?)
        })
        .filter(|&t| t <= REDIS_TABLE_BYTES)
        .ok_or_else(|| invalid("sub-filters", format!("{shape:?} is too large")))?;
    if parts.payload.len() as u64 != bytes {
        return Err(invalid(
            "payload",
            format!(
                "{} bytes, the sub-filters have {bytes}",
                parts.payload.len()
            ),
        ));
    }
    let mut rest = parts.payload;
    let redis = RedisBloomCuckoo::from_sub_filters(
        &shape,
        redisbloom::Hashing::Murmur64A,
        &REDIS_TABLE_BYTES,
        |buckets| {
            let (data, tail) = rest.split_at((buckets * bucket_size as u64) as usize);
            rest = tail;
            Some((buckets, data.to_vec()))
        },
    )
    .ok_or_else(|| invalid("sub-filters", format!("{shape:?}: {why}")))?;
    let used = redis.used_slots();
    if used != len {
        return Err(invalid(
            "len",
            format!("{len}, but the sub-filters hold {used} fingerprints"),
        ));
    }
    Ok(CuckooFilter::around(redis, Some((capacity, target_fpp))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use paper::{on_chain, Reached, ROOT};

    fn small(num_buckets: u64, fingerprint_bits: u32) -> CuckooFilter {
        CuckooFilter::builder()
            .num_buckets(num_buckets)
            .fingerprint_bits(fingerprint_bits)
            .build()
            .unwrap()
    }

    /// Past 10⁷ items the builder sizes for the large-table load (0.94, see
    /// `params::cuckoo_sizing_load`), up to it for 0.95.
    #[test]
    fn large_tables_are_sized_for_the_lower_load() {
        let n = params::CUCKOO_LARGE_TABLE_ITEMS;
        let at = CuckooFilter::with_capacity(n, 0.01).unwrap();
        assert_eq!(
            Some(at.num_buckets()),
            params::cuckoo_num_buckets(n, 4, CUCKOO_TARGET_LOAD)
        );
        let past = CuckooFilter::with_capacity(n + 1, 0.01).unwrap();
        assert_eq!(
            Some(past.num_buckets()),
            params::cuckoo_num_buckets(n + 1, 4, params::CUCKOO_LARGE_TABLE_LOAD)
        );
        assert!(past.num_buckets() > at.num_buckets() * 100 / 99);
    }

    #[test]
    fn sizing_follows_the_paper() {
        let f = CuckooFilter::with_capacity(1_000_000, 0.01).unwrap();
        assert_eq!(f.bucket_size(), 4);
        assert_eq!(f.fingerprint_bits(), 10); // 8 / 2¹⁰ ≈ 0.78% ≤ 1%
        assert_eq!(f.num_buckets(), 263_158 + 1_000); // ⌈10⁶ / 3.8⌉ + ⌈2·√(10⁶/4)⌉
        assert_eq!(f.num_slots(), 1_056_632);
        // 10-bit slots, six to a word: 11.2 bits per item, 1.07× f/α.
        assert_eq!(f.memory_bytes() as u64, 1_056_632u64.div_ceil(6) * 8);
        let bits_per_item = f.memory_bytes() as f64 * 8.0 / 1e6;
        assert!(
            bits_per_item <= 1.1 * 10.0 / CUCKOO_TARGET_LOAD,
            "{bits_per_item}"
        );
        let f = CuckooFilter::builder()
            .capacity(100)
            .fpp(0.01)
            .bucket_size(2)
            .build()
            .unwrap();
        assert_eq!((f.fingerprint_bits(), f.num_buckets()), (9, 68)); // 4/2⁹ ≤ 1%, ⌈100/1.9⌉ + ⌈2·√50⌉
    }

    #[test]
    fn the_search_knows_a_chain_by_its_buckets() {
        let node = |bucket, parent| Reached {
            bucket,
            parent,
            slot: 0,
        };
        // Roots 10 and 20; 30 below 10; 40 below 30; 20 again below 10 (another branch).
        let tree = [
            node(10, ROOT),
            node(20, ROOT),
            node(30, 0),
            node(40, 2),
            node(20, 0),
        ];
        assert!(on_chain(&tree, 3, 40) && on_chain(&tree, 3, 30) && on_chain(&tree, 3, 10));
        assert!(
            !on_chain(&tree, 3, 20),
            "20 is a root, but not on this chain"
        );
        assert!(on_chain(&tree, 4, 20) && on_chain(&tree, 4, 10));
        assert!(!on_chain(&tree, 1, 10) && !on_chain(&tree, 4, 30));
    }

    #[test]
    fn alternate_bucket_is_an_involution() {
        for buckets in [1u64, 2, 3, 7, 1000, 1 << 10, 2632, 1 << 20, (1 << 20) + 1] {
            let mut f = small(buckets, 8);
            let f = f.paper();
            for i in [0, buckets / 3, buckets - 1] {
                for fp in [1u32, 2, 77, 255] {
                    let j = f.alt_bucket(i, fp);
                    assert!(j < buckets);
                    assert_eq!(f.alt_bucket(j, fp), i);
                }
            }
        }
    }

    #[test]
    fn fingerprints_are_never_zero_and_fit_their_width() {
        for bits in CUCKOO_FINGERPRINT_BITS {
            let mut f = small(1 << 8, bits);
            let f = f.paper();
            for i in 0..20_000u32 {
                let (bucket, fp) = f.locate(&i.to_le_bytes());
                assert!(bucket < 1 << 8);
                assert!(fp >= 1 && fp >> bits == 0, "{fp}");
            }
        }
    }

    #[test]
    fn duplicates_are_counted_and_removed_one_at_a_time() {
        let mut f = small(1 << 8, 16);
        for _ in 0..3 {
            f.insert("dup").unwrap();
        }
        assert_eq!(f.count("dup"), 3);
        f.remove("dup").unwrap();
        assert_eq!(f.count("dup"), 2);
        f.remove("dup").unwrap();
        f.remove("dup").unwrap();
        assert!(!f.contains("dup"));
        assert!(matches!(f.remove("dup"), Err(Error::NotPresent)));
        assert!(Filter::is_empty(&f));
    }

    #[test]
    fn one_item_fits_at_most_two_buckets_plus_the_victim() {
        let mut f = small(1 << 6, 16);
        for _ in 0..9 {
            f.insert("same").unwrap(); // 2b = 8 slots, the 9th copy ends in the victim slot
        }
        assert!(f.is_full());
        assert_eq!(f.count("same"), 9);
        let before = f.clone();
        assert!(matches!(
            f.insert("other"),
            Err(Error::Full {
                kind: Kind::Cuckoo,
                ..
            })
        ));
        assert_eq!(f, before);
        // The victim is a copy of "same": removing one copy empties the victim slot.
        f.remove("same").unwrap();
        assert!(!f.is_full());
        assert_eq!(f.count("same"), 8);
        f.insert("other").unwrap();
    }

    #[test]
    fn removing_an_absent_item_changes_nothing() {
        let mut f = small(1 << 4, 16);
        f.try_extend(0..40u32).unwrap();
        let before = f.clone();
        let absent = (1000..2000u32).find(|i| !f.contains(i)).unwrap();
        assert!(f.remove(&absent).is_err());
        assert_eq!(f, before);
    }

    #[test]
    fn without_kicks_the_first_collision_fills_the_victim_slot() {
        let mut f = CuckooFilter::builder()
            .num_buckets(1)
            .bucket_size(2)
            .fingerprint_bits(16)
            .max_kicks(0)
            .build()
            .unwrap();
        f.insert(&1u32).unwrap();
        f.insert(&2u32).unwrap();
        assert!(!f.is_full());
        f.insert(&3u32).unwrap();
        assert!(f.is_full());
        assert!((1..=3u32).all(|i| f.contains(&i)));
        assert!(f.insert(&4u32).is_err());
        assert_eq!(Filter::len(&f), 3);
    }

    /// The generator chooses which bucket a kick starts from and which fingerprint it
    /// evicts. Its state is the filter seed's (two seeds, two states, one of them the same
    /// after `clear`), it moves with every kick, and it decides where fingerprints end up:
    /// the same items into the same table from another generator state give another table.
    #[test]
    fn the_eviction_generator_is_seeded_from_the_filter_seed_and_steers_the_kicks() {
        let seeded = |seed| {
            CuckooFilter::builder()
                .num_buckets(1 << 4)
                .fingerprint_bits(8)
                .seed(seed)
                .build()
                .unwrap()
        };
        assert_ne!(seeded(1).walk().0, seeded(2).walk().0);
        let fill = |mut f: CuckooFilter| {
            let _ = f.try_extend(0..1000u32);
            assert!(f.is_full(), "the table must need kicks");
            f
        };
        let start = seeded(1).walk().0;
        let mut a = fill(seeded(1));
        assert_ne!(a.walk().0, start, "kicks draw from the generator");
        let mut other_state = seeded(1);
        other_state.paper().rng ^= 0x5555;
        let mut b = fill(other_state);
        assert_ne!(
            a.paper().slots,
            b.paper().slots,
            "the generator does not steer the kicks"
        );
        a.clear();
        assert_eq!(a.walk().0, start, "clear restarts the generator");
    }

    #[test]
    fn clear_restores_a_fresh_filter() {
        let fresh = small(1 << 4, 8);
        let mut f = fresh.clone();
        f.try_extend(0..1000u32).unwrap_err();
        assert!(f.is_full());
        f.clear();
        assert_eq!(f, fresh);
    }

    #[test]
    fn degenerate_parameters_are_errors() {
        let b = || CuckooFilter::builder().capacity(100);
        assert_eq!(
            CuckooFilter::builder().build().unwrap_err(),
            Error::ZeroCapacity
        );
        assert_eq!(b().capacity(0).build().unwrap_err(), Error::ZeroCapacity);
        for e in [0.0, 1.0, f64::NAN, -0.1, 1e-6] {
            assert!(b().fpp(e).build().is_err(), "{e}");
        }
        for s in [0, 1, 3, 16] {
            assert!(matches!(
                b().bucket_size(s).build(),
                Err(Error::InvalidParameter {
                    parameter: "bucket size",
                    ..
                })
            ));
        }
        for bits in [0, 1, 3, 17, 32] {
            assert!(matches!(
                b().fingerprint_bits(bits).build(),
                Err(Error::InvalidParameter {
                    parameter: "fingerprint bits",
                    ..
                })
            ));
        }
        assert!(matches!(
            b().fpp(0.001).fingerprint_bits(8).build(),
            Err(Error::UnreachableFpp {
                kind: Kind::Cuckoo,
                ..
            })
        ));
        assert!(matches!(
            b().num_buckets(0).build(),
            Err(Error::InvalidParameter {
                parameter: "number of buckets",
                ..
            })
        ));
        assert!(matches!(
            b().num_buckets(1 << 40).build(),
            Err(Error::TooLarge { .. })
        ));
        assert!(matches!(
            b().num_buckets(1 << 63).bucket_size(8).build(),
            Err(Error::TooLarge { .. })
        ));
        assert!(matches!(
            CuckooFilter::with_capacity(u64::MAX, 0.01),
            Err(Error::CapacityTooLarge {
                capacity: u64::MAX,
                ..
            })
        ));
        assert!(matches!(
            b().max_kicks(MAX_KICKS_LIMIT + 1).build(),
            Err(Error::InvalidParameter {
                parameter: "max kicks",
                ..
            })
        ));
    }

    #[test]
    fn debug_shows_the_parameters_not_the_table() {
        let f = CuckooFilter::with_capacity(1000, 0.01).unwrap();
        let s = format!("{f:?}");
        for needle in [
            "num_buckets: 296",
            "bucket_size: 4",
            "fingerprint_bits: 10",
            "capacity: 1000",
            "victim_fingerprint: 0",
        ] {
            assert!(s.contains(needle), "{s}");
        }
        assert!(s.len() < 400, "{s}");
    }

    #[test]
    fn round_trip_keeps_the_table_the_victim_and_the_generator() {
        let mut f = small(1 << 3, 12);
        f.try_extend(0..1000u32).unwrap_err();
        assert!(f.is_full());
        let mut back = CuckooFilter::from_bytes(&f.to_bytes()).unwrap();
        assert_eq!(back, f);
        // Same generator state: the same operations give the same filter.
        f.remove(&5u32).unwrap();
        back.remove(&5u32).unwrap();
        assert_eq!(back, f);
    }

    #[test]
    fn from_iterator_builds_a_set_that_still_accepts_inserts() {
        let items: Vec<u32> = (0..3_891).chain(0..100).collect();
        let mut f: CuckooFilter = items.iter().collect();
        // A set: the repeated items are not stored again (nor the rare distinct item that
        // was already reported present).
        let n = Filter::len(&f);
        assert!(n <= 3_891 && n > 3_850, "{n}");
        assert!(items.iter().all(|i| f.contains(i)));
        assert!(!f.is_full());
        f.insert("one more").unwrap();
    }
}

#[cfg(test)]
mod older_redisbloom_files {
    use super::*;
    use crate::codec::Parts;

    /// The 64 bytes of parameters a file of RedisBloom's layout had before sub-filters were
    /// kept, and its payload (the table as packed 8-bit counters).
    fn old_file(
        table: &PackedCounters,
        len: u64,
        victim: Option<(u64, u32)>,
    ) -> (Vec<u8>, Vec<u8>) {
        let mut params = Vec::new();
        params.extend_from_slice(&(table.len() / 2).to_le_bytes()); // buckets of 2 slots
        params.extend_from_slice(&2u32.to_le_bytes());
        params.extend_from_slice(&8u32.to_le_bytes());
        params.extend_from_slice(&500u32.to_le_bytes());
        params.extend_from_slice(&6u64.to_le_bytes()); // capacity
        params.extend_from_slice(&0.02f64.to_le_bytes());
        params.extend_from_slice(&len.to_le_bytes());
        params.extend_from_slice(&12345u64.to_le_bytes()); // the walk's generator
        let (vb, vf) = victim.unwrap_or((0, 0));
        params.extend_from_slice(&vb.to_le_bytes());
        params.extend_from_slice(&vf.to_le_bytes());
        assert_eq!(params.len(), STORED_BYTES);
        let mut payload = Vec::new();
        table.write_le_bytes(&mut payload);
        (params, payload)
    }

    fn load(params: &[u8], payload: &[u8]) -> Result<CuckooFilter, DecodeError> {
        CuckooFilter::decode_parts(&Parts {
            kind: Kind::Cuckoo,
            hashing: Hashing::redisbloom_cuckoo(),
            params,
            payload,
        })
    }

    /// Items placed as the one-table filter placed them (first bucket, else the other).
    fn table_of(items: &[u32]) -> (PackedCounters, Vec<u32>) {
        let mut table = PackedCounters::zeros(8, 8).unwrap();
        let mut placed = Vec::new();
        for &i in items {
            let (h, fp) = redisbloom_hash(&i.to_le_bytes());
            let b1 = h & 3;
            let b2 = redisbloom_alt_index(fp, b1) & 3;
            let free = [b1, b2]
                .into_iter()
                .flat_map(|b| [2 * b, 2 * b + 1])
                .find(|&s| table.get(s) == 0);
            if let Some(slot) = free {
                table.set(slot, fp as u32);
                placed.push(i);
            }
        }
        (table, placed)
    }

    #[test]
    fn a_one_table_file_loads_as_one_sub_filter_that_never_grows() {
        let (table, placed) = table_of(&[1, 2, 3, 4]);
        let (params, payload) = old_file(&table, placed.len() as u64, None);
        let f = load(&params, &payload).unwrap();
        assert_eq!(
            (f.num_sub_filters(), f.expansion(), f.capacity()),
            (1, 0, 6)
        );
        assert_eq!(Filter::len(&f), placed.len() as u64);
        assert!(placed.iter().all(|i| f.contains(&i.to_le_bytes())));
        // Saved again, it is the new form, and loads back equal.
        assert!(CuckooFilter::from_bytes(&f.to_bytes()).unwrap() == f);
        // A count the table denies is refused, as before.
        let (params, payload) = old_file(&table, placed.len() as u64 + 1, None);
        assert!(load(&params, &payload).is_err());
    }

    #[test]
    fn a_waiting_victim_goes_into_the_table_or_a_second_sub_filter() {
        // A full table (every slot a fingerprint) and one more waiting: no room, so a second
        // sub-filter takes it and the filter grows on with expansion 1.
        let mut table = PackedCounters::zeros(8, 8).unwrap();
        for s in 0..8 {
            table.set(s, 200 + s as u32);
        }
        let (params, payload) = old_file(&table, 9, Some((1, 77)));
        let f = load(&params, &payload).unwrap();
        assert_eq!(
            (f.num_sub_filters(), f.expansion(), Filter::len(&f)),
            (2, 1, 9)
        );
        let redis = f.redisbloom_table().unwrap();
        assert_eq!(
            redis.filters()[1]
                .data()
                .iter()
                .filter(|&&s| s == 77)
                .count(),
            1
        );
        // A victim with room in the table goes there.
        let (table, placed) = table_of(&[10, 11]);
        let (h, fp) = redisbloom_hash(&99u32.to_le_bytes());
        let (params, payload) = old_file(&table, placed.len() as u64 + 1, Some((h & 3, fp as u32)));
        let f = load(&params, &payload).unwrap();
        assert_eq!((f.num_sub_filters(), f.expansion()), (1, 0));
        assert!(f.contains(&99u32.to_le_bytes()));
        assert!(placed.iter().all(|i| f.contains(&i.to_le_bytes())));
    }
}
