//! The weighted Bloom filter (Bruck, Gao & Jiang, "Weighted Bloom Filter", IEEE
//! International Symposium on Information Theory (ISIT) 2006, pp. 2304–2308,
//! doi:10.1109/ISIT.2006.261978) — a Bloom filter that spends more hash functions on the
//! items that are queried often and fewer on the rare ones.
//!
//! # Why
//!
//! A classic filter gives every item the same k, so every absent item is a false positive
//! with the same probability ε. But queries are rarely uniform: a few items are asked for
//! again and again (popular URLs, hot keys), most almost never. What a user sees is the
//! false-positive rate *of the query stream*, `F = Σ q_x · P(x is a false positive)` over
//! the absent items x with query frequencies q_x. Bruck, Gao & Jiang minimise that F with
//! the same m bits by letting k depend on the item:
//!
//! ```text
//!     k_x  =  k̄ + log₂(w_x / w̄),      w_x = q_x (1 − p_x) / p_x,      k̄ = (m/n) ln 2
//! ```
//!
//! where p_x is how likely x is to be in the set and `log₂ w̄` the membership-weighted mean
//! of `log₂ w_x` ([`params::weighted_num_hashes`] explains the derivation). An item
//! queried twice as often as the average gets one more hash function, which halves its
//! false-positive probability; an item queried half as often gets one fewer. Inserted
//! items keep k̄ hash functions on average, so the filter fills to the classic half and
//! the same m bits hold the same n items — at a lower F for the stream
//! ([`params::weighted_fpp`]; `tests/suite/weighted.rs` measures the gain on a Zipf stream).
//!
//! # What the filter stores
//!
//! Insert and query must agree on each item's k, so the filter keeps its **weight table**:
//! the items given a weight when it was built (by a 64-bit key derived from their digest)
//! and their k, where it differs from the k of every other item. Items not in the table are
//! *ordinary*: query frequency 1 (the unit of the weights) and the membership likelihood
//! that the rest of the set implies. The table costs 9 bytes per weighted item in the file
//! (16 in memory) — list the items whose frequency is known to differ, not the whole
//! universe, where memory matters.
//!
//! The weights are fixed when the filter is built; the filter promises no false negatives
//! (an item is always probed with the same k_x), merges with a filter of the same table,
//! and cannot remove.
//!
//! ```
//! use bloomkit::WeightedBloomFilter;
//!
//! // A cache of 1 000 keys; "home" and "search" are asked for 100× as often as others.
//! let mut cache = WeightedBloomFilter::builder()
//!     .capacity(1_000)
//!     .fpp(0.01)
//!     .universe(100_000)
//!     .query_frequency("home", 100.0)
//!     .query_frequency("search", 100.0)
//!     .build()?;
//! assert_eq!(cache.num_hashes_of("about"), 7);  // an ordinary item: the classic k
//! assert_eq!(cache.num_hashes_of("home"), 13);  // k̄ + log₂ 100 = 6.64 + 6.64 → 13
//! cache.insert("about");
//! assert!(cache.contains("about"));
//! # Ok::<(), bloomkit::Error>(())
//! ```

mod options;
pub mod theory;

use crate::any::Summary;
use crate::bits::BitVec;
use crate::codec::{invalid, EntryStream, Parts, Persist};
use crate::error::{DecodeError, Error};
use crate::filter::{Filter, Kind};
use crate::format::view::{infallible, view_facts, FilterView, KindView, Shape, ViewFacts};
use crate::hash::{Hashing, HashingChoice, Item, Positions};
use crate::params::{self, MAX_NUM_HASHES};
use crate::sizing;

/// A weighted Bloom filter: k per item from its query frequency and membership likelihood
/// (see the [module docs](self)).
#[derive(Clone, PartialEq)]
pub struct WeightedBloomFilter {
    bits: BitVec,
    /// k of the ordinary items (those not in the table).
    default_hashes: u32,
    /// (key, k), sorted by key, strictly increasing; k ≠ `default_hashes`.
    table: Vec<(u64, u8)>,
    hashing: Hashing,
    capacity: u64,
    target_fpp: f64,
    inserted: u64,
}

/// The table key of an item: its digest folded to 64 bits.
fn key_of(hashing: Hashing, bytes: &[u8]) -> u64 {
    key_of_digest(hashing.digest(bytes))
}

fn key_of_digest(d: u128) -> u64 {
    (d as u64) ^ ((d >> 64) as u64).rotate_left(29)
}

/// The bytes of one weight-table entry in a file: the key (u64, little-endian), then k.
const ENTRY_BYTES: u64 = 9;

/// The index of `key` in a table of `len` keys in strictly increasing order, read through
/// `key_at(i)` (which may fail: a view reads the keys from the file), or `None`.
///
/// The keys are digests, spread evenly over 0..2⁶⁴, so the search interpolates: it guesses
/// the key's place from where it lies between the keys known to bound it, which takes about
/// log₂ log₂ n reads on even keys (Perl, Itai & Avni, "Interpolation search — a log log N
/// search", CACM 21(7), 1978) against log₂ n for bisection: 6.2 reads on average instead of
/// 20 in a table of 10⁶ (the test below). A guess that does not at least halve the range is
/// followed by one bisection, so a table of uneven keys (a hostile file) costs at most about
/// 2 log₂ n reads. That pays where a read is dear: a view's read checks its chunk first
/// (`bloomkit check` of 10⁵ weighted items against a table of 857 142 entries: 3,447
/// instructions per query through the view, against 5,215 bisecting; BENCHMARKS.md,
/// "`bloomkit check` of a weighted filter"). The loaded filter keeps the standard library's
/// branch-free bisection over its table in memory, where the first reads hit the same
/// cached entries for every key; timings of the two there did not separate on this machine.
fn find_key<E>(
    len: u64,
    key: u64,
    mut key_at: impl FnMut(u64) -> Result<u64, E>,
) -> Result<Option<u64>, E> {
    // The key, if present, is at an index in low..high, and every key there lies in
    // low_key..=high_key (which hold `key`).
    let (mut low, mut high) = (0, len);
    let (mut low_key, mut high_key) = (0u64, u64::MAX);
    let mut bisect = false;
    while low < high {
        let span = high - low;
        let at = if bisect {
            low + span / 2
        } else {
            // In floating point (a division of 128-bit integers is a slow library call);
            // rounding can only move the guess, which stays inside the range.
            let fraction = (key - low_key) as f64 / ((high_key - low_key) as f64 + 1.0);
            low + ((fraction * span as f64) as u64).min(span - 1)
        };
        let found = key_at(at)?;
        if found < key {
            (low, low_key) = (at + 1, found + 1);
        } else if found > key {
            (high, high_key) = (at, found - 1);
        } else {
            return Ok(Some(at));
        }
        bisect = !bisect && high - low > span / 2;
    }
    Ok(None)
}

/// An item's k_x positions in m bits: with an empty table the classic filter's k
/// positions; else one digest gives the table key, whose k (`k_of_key`, `None` for an
/// ordinary item) the positions then take, from the same digest under the digest schemes.
/// The loaded filter and a view both answer through it, with their ways of reading the
/// table.
fn positions_by<'a, E>(
    hashing: Hashing,
    num_bits: u64,
    default_hashes: u32,
    table_len: u64,
    bytes: &'a [u8],
    k_of_key: impl FnOnce(u64) -> Result<Option<u32>, E>,
) -> Result<Positions<'a>, E> {
    if table_len == 0 {
        return Ok(hashing.positions(bytes, default_hashes, num_bits));
    }
    let digest = hashing.digest(bytes);
    let k = k_of_key(key_of_digest(digest))?.unwrap_or(default_hashes);
    Ok(hashing.positions_with_digest(bytes, digest, k, num_bits))
}

/// Reads the weight table's entries from its bytes fed in pieces of any length (an entry
/// may be split between two), checking each as loading checks the table: keys strictly
/// increasing, k in 1..=64 and not the ordinary items' k. Loading feeds it the whole table
/// at once; a view feeds it the table's chunks as it reads them, when it opens.
struct TableReader {
    stream: EntryStream<{ ENTRY_BYTES as usize }>,
    default_hashes: u32,
    previous: Option<u64>,
}

impl TableReader {
    fn new(default_hashes: u32) -> Self {
        TableReader {
            stream: EntryStream::new(),
            default_hashes,
            previous: None,
        }
    }

    /// Reads the entries `bytes` complete, calling `each(key, k)` for every one.
    fn feed(&mut self, bytes: &[u8], mut each: impl FnMut(u64, u8)) -> Result<(), DecodeError> {
        let TableReader {
            stream,
            default_hashes,
            previous,
        } = self;
        stream.feed(bytes, |entry| {
            let key = u64::from_le_bytes(entry[..8].try_into().expect("8 bytes"));
            let k = entry[8];
            if previous.is_some_and(|p| p >= key) {
                return Err(invalid("table", "keys are not strictly increasing".into()));
            }
            if k == 0 || u32::from(k) > MAX_NUM_HASHES || u32::from(k) == *default_hashes {
                return Err(invalid(
                    "table",
                    format!("k = {k} is not in 1..={MAX_NUM_HASHES} or is the default"),
                ));
            }
            *previous = Some(key);
            each(key, k);
            Ok(())
        })
    }
}

/// The facts [`Filter::properties`] reports (a view's summary gives the same): m, the
/// ordinary items' k, the table's size and its range of k (with the ordinary k), ε, the fill.
fn properties(
    num_bits: u64,
    default_hashes: u32,
    table_len: u64,
    (min, max): (u32, u32),
    target_fpp: f64,
    ones: u64,
) -> Vec<(&'static str, String)> {
    vec![
        ("bits (m)", num_bits.to_string()),
        (
            "hash functions of ordinary items",
            default_hashes.to_string(),
        ),
        ("weighted items", table_len.to_string()),
        ("hash functions (min..max)", format!("{min}..{max}")),
        ("target fpp", format!("{target_fpp}")),
        (
            "fill ratio",
            format!("{:.6}", ones as f64 / num_bits as f64),
        ),
    ]
}

impl WeightedBloomFilter {
    /// A filter for `capacity` items at false-positive probability `fpp` with no weights:
    /// every item gets the classic k (a classic filter, until weights are given with the
    /// [`builder`](Self::builder)).
    ///
    /// ```
    /// use bloomkit::WeightedBloomFilter;
    /// let f = WeightedBloomFilter::with_capacity(1_000, 0.01)?;
    /// assert_eq!((f.num_bits(), f.num_hashes_of("any")), (9_586, 7));
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn with_capacity(capacity: impl crate::params::ItemCount, fpp: f64) -> Result<Self, Error> {
        Self::builder().capacity(capacity).fpp(fpp).build()
    }

    /// A builder: capacity and ε (or m), the universe, and the items' weights.
    pub fn builder() -> WeightedBloomFilterBuilder {
        WeightedBloomFilterBuilder::default()
    }

    fn hashes_of_bytes(&self, bytes: &[u8]) -> u32 {
        if self.table.is_empty() {
            return self.default_hashes;
        }
        self.hashes_of_digest(self.hashing.digest(bytes))
    }

    /// k_x from the item's digest: its entry in the weight table, else the default k.
    fn hashes_of_digest(&self, digest: u128) -> u32 {
        infallible(self.k_of_key(key_of_digest(digest))).unwrap_or(self.default_hashes)
    }

    /// The k of a table key, if the table has it.
    fn k_of_key(&self, key: u64) -> Result<Option<u32>, std::convert::Infallible> {
        let found = self.table.binary_search_by_key(&key, |&(k, _)| k).ok();
        Ok(found.map(|i| u32::from(self.table[i].1)))
    }

    /// An item's k_x positions, from one digest of its bytes (the table key and, under the
    /// digest schemes, the positions too). Borrows the bytes only, so an insert can set
    /// the bits while it walks them.
    fn positions_of<'a>(&self, bytes: &'a [u8]) -> Positions<'a> {
        let (m, k, len) = (self.bits.len(), self.default_hashes, self.table.len());
        infallible(positions_by(self.hashing, m, k, len as u64, bytes, |key| {
            self.k_of_key(key)
        }))
    }

    /// k_x, the number of hash functions the filter uses for an item.
    pub fn num_hashes_of<I: Item + ?Sized>(&self, item: &I) -> u32 {
        item.with_bytes(|bytes| self.hashes_of_bytes(bytes))
    }

    /// Adds an item: sets its k_x bits. Returns `true` if it was certainly new.
    pub fn insert<I: Item + ?Sized>(&mut self, item: &I) -> bool {
        let new = item.with_bytes(|bytes| {
            let positions = self.positions_of(bytes);
            positions.fold(false, |new, p| self.bits.set(p) | new)
        });
        self.inserted += u64::from(new);
        new
    }

    /// `false` if the item is certainly absent (one of its k_x bits is 0).
    pub fn contains<I: Item + ?Sized>(&self, item: &I) -> bool {
        item.with_bytes(|bytes| self.positions_of(bytes).all(|p| self.bits.get(p)))
    }

    /// m, the number of bits.
    pub fn num_bits(&self) -> u64 {
        self.bits.len()
    }

    crate::sizing::getters! {
        /// k of the ordinary items (not in the weight table).
        default_hashes: u32;
    }

    /// The number of items with a k of their own.
    pub fn weighted_items(&self) -> usize {
        self.table.len()
    }

    crate::sizing::getters! {
        /// n, the number of items the filter was sized for.
        capacity: u64;

        /// ε, the false-positive probability of an ordinary item at capacity.
        target_fpp: f64;
    }

    /// The number of bits set.
    pub fn count_ones(&self) -> u64 {
        self.bits.count_ones()
    }

    fn layout(&self) -> String {
        let mut table = Vec::with_capacity(self.table.len() * 9);
        for &(key, k) in &self.table {
            table.extend_from_slice(&key.to_le_bytes());
            table.push(k);
        }
        format!(
            "m = {}, k = {}, {} weighted items (table {:016x}), {}",
            self.num_bits(),
            self.default_hashes,
            self.table.len(),
            xxhash_rust::xxh3::xxh3_64(&table),
            self.hashing
        )
    }

    fn recount(&mut self) {
        self.inserted = params::count_from_estimate(Filter::estimated_len(self));
    }
}

impl Filter for WeightedBloomFilter {
    // Read as a classic filter with the ordinary items' k (the members' k averages about
    // that); an item with k_x hash functions has the rate `(ones/m)^{k_x}`.
    crate::filter::filter_basics!(
        Weighted: hashing, insert, contains, capacity, target_fpp,
        fill(count_ones, num_bits, default_hashes), classic_rate(num_bits, default_hashes)
    );

    fn clear(&mut self) {
        self.bits.clear();
        self.inserted = 0;
    }

    /// The insertions that set at least one bit (a set).
    fn len(&self) -> u64 {
        self.inserted
    }

    fn memory_bytes(&self) -> usize {
        self.bits.memory_bytes() + self.table.len() * std::mem::size_of::<(u64, u8)>()
    }

    fn properties(&self) -> Vec<(&'static str, String)> {
        let range = self
            .table
            .iter()
            .map(|&(_, k)| u32::from(k))
            .fold((self.default_hashes, self.default_hashes), |(a, b), k| {
                (a.min(k), b.max(k))
            });
        properties(
            self.num_bits(),
            self.default_hashes,
            self.table.len() as u64,
            range,
            self.target_fpp,
            self.count_ones(),
        )
    }
}

crate::registry::registered!(
    WeightedBloomFilter,
    {
        name: "weighted",
        summary: "Weighted Bloom filter (Bruck, Gao & Jiang 2006): more hash functions for \
                  items queried often, fewer for rare ones; union.",
        grow: false,
        forgets: false,
        index_scheme: true,
    },
    merge
);

crate::filter::bit_array_mergeable!(
    /// Bitwise OR of two filters with the same m, weights and hashing: the filter that
    /// inserting both sets would have built.
    WeightedBloomFilter
);

crate::filter::collection_impls!(
    /// Collects items into a filter sized for their number at ε = 1%, with no weights.
    ///
    /// ```
    /// use bloomkit::WeightedBloomFilter;
    /// let filter: WeightedBloomFilter = ["a", "b"].into_iter().collect();
    /// assert!(filter.contains("a"));
    /// ```
    WeightedBloomFilter
);

/// An item's weight as given to the builder.
#[derive(Clone, Debug)]
struct Weighted {
    bytes: Vec<u8>,
    query_frequency: f64,
    membership: Option<f64>,
}

/// Builds a [`WeightedBloomFilter`]: size (capacity and ε, or m), the size N of the
/// universe the items come from, and the weights of the items whose query frequency (and
/// membership likelihood) is known.
///
/// Every item not listed is ordinary: query frequency 1 and the membership likelihood the
/// rest implies, `p₀ = (n − Σ given p_x) / (N − number of items with a given p_x)`. Items
/// listed with [`query_frequency`](Self::query_frequency) alone have p₀ too. (With no p_x
/// given at all, every item has the same p and only the query frequencies matter.) Then
/// `w_x = q_x (1 − p_x)/p_x`, `log₂ w̄ = Σ_universe p_x log₂ w_x / n`, and
/// `k_x = k̄ + log₂(w_x/w̄)` rounded into 1..=64 ([`params::weighted_num_hashes`]).
///
/// ```
/// use bloomkit::WeightedBloomFilter;
/// let f = WeightedBloomFilter::builder()
///     .capacity(1_000)
///     .universe(10_000)
///     .query_frequency("rare", 1.0 / 16.0)
///     .weight("likely member", 1.0, 0.9)
///     .build()?;
/// assert_eq!(f.num_hashes_of("rare"), 3);
/// assert!(f.num_hashes_of("likely member") < 3);
/// assert!(WeightedBloomFilter::builder().capacity(10).query_frequency("x", -1.0).build().is_err());
/// # Ok::<(), bloomkit::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
#[must_use = "a builder does nothing until .build() is called"]
pub struct WeightedBloomFilterBuilder {
    capacity: Option<u64>,
    fpp: Option<f64>,
    num_bits: Option<u64>,
    num_hashes: Option<u32>,
    universe: Option<u64>,
    weights: Vec<Weighted>,
    hashing: HashingChoice,
}

impl WeightedBloomFilterBuilder {
    crate::sizing::array_setters! {
        num_bits, "bits";
        m "m, the number of bits, instead of deriving it from capacity and ε.",
        k "k̄, the hash functions of an average item, instead of `(m/n) ln 2`.";

        /// N, the number of distinct items queries and members come from (default: the
        /// number of listed items, at least the capacity).
        universe: u64;
    }

    /// An item queried `query_frequency` times as often as an ordinary item, as likely to
    /// be a member as one.
    pub fn query_frequency<I: Item + ?Sized>(self, item: &I, query_frequency: f64) -> Self {
        self.push(item, query_frequency, None)
    }

    /// An item queried `query_frequency` times as often as an ordinary item and in the set
    /// with probability `membership` (strictly between 0 and 1).
    pub fn weight<I: Item + ?Sized>(self, item: &I, query_frequency: f64, membership: f64) -> Self {
        self.push(item, query_frequency, Some(membership))
    }

    fn push<I: Item + ?Sized>(mut self, item: &I, q: f64, p: Option<f64>) -> Self {
        let bytes = item.with_bytes(<[u8]>::to_vec);
        self.weights.push(Weighted {
            bytes,
            query_frequency: q,
            membership: p,
        });
        self
    }

    /// Validates the parameters, computes every listed item's k and allocates the filter.
    pub fn build(self) -> Result<WeightedBloomFilter, Error> {
        let bad = |parameter, reason: String| Error::InvalidParameter { parameter, reason };
        let d = sizing::dimensions(self.capacity, self.fpp, self.num_bits, self.num_hashes, 1)?;
        let hashing = self.hashing.resolve()?;
        let n = d.capacity as f64;
        // k̄: the uniform optimum (m/n) ln 2, or the k given.
        let mean_k = match self.num_hashes {
            Some(k) => f64::from(k),
            None => d.num_cells as f64 * std::f64::consts::LN_2 / n,
        };
        let listed = self.weights.len() as u64;
        let universe = self.universe.unwrap_or(listed.max(d.capacity));
        if self.universe.is_some() && universe < listed.max(d.capacity) {
            return Err(bad(
                "universe",
                format!(
                    "{universe} items cannot hold {listed} weighted items and a set of {}",
                    d.capacity
                ),
            ));
        }
        let (mut given_p, mut with_p) = (0.0, 0u64);
        for w in &self.weights {
            if !(w.query_frequency.is_finite() && w.query_frequency > 0.0) {
                return Err(bad(
                    "query frequency",
                    format!("{} is not a positive number", w.query_frequency),
                ));
            }
            if let Some(p) = w.membership {
                if !(p > 0.0 && p < 1.0) {
                    return Err(bad("membership", format!("{p} is not in (0, 1)")));
                }
                given_p += p;
                with_p += 1;
            }
        }
        // p₀: the membership mass the given p_x leave, spread over the other items. With no
        // p_x given every item is as likely a member, and (1 − p)/p is the same factor in
        // every weight: any p₀ gives the same k.
        let rest = universe - with_p;
        let p0 = if with_p == 0 || rest == 0 {
            0.5
        } else {
            (n - given_p) / rest as f64
        };
        if !(p0 > 0.0 && p0 < 1.0) {
            return Err(bad(
                "membership",
                format!(
                    "the other {rest} items of the universe would be members with probability \
                     {p0:.4}; it must be in (0, 1): adjust the universe, capacity or memberships"
                ),
            ));
        }
        let log_w = |q: f64, p: f64| (q * (1.0 - p) / p).log2();
        let ordinary = log_w(1.0, p0);
        // log₂ w̄ = Σ p_x log₂ w_x / Σ p_x over the universe.
        let (mut sum, mut mass) = (0.0, 0.0);
        for w in &self.weights {
            let p = w.membership.unwrap_or(p0);
            sum += p * log_w(w.query_frequency, p);
            mass += p;
        }
        let unlisted = (universe - listed) as f64;
        sum += unlisted * p0 * ordinary;
        mass += unlisted * p0;
        let mean_log_w = if mass > 0.0 { sum / mass } else { ordinary };
        let default_hashes = params::weighted_num_hashes(mean_k, (ordinary - mean_log_w).exp2());
        let mut table: Vec<(u64, u8)> = Vec::with_capacity(self.weights.len());
        for w in &self.weights {
            let p = w.membership.unwrap_or(p0);
            let k = params::weighted_num_hashes(
                mean_k,
                (log_w(w.query_frequency, p) - mean_log_w).exp2(),
            );
            if k != default_hashes {
                table.push((key_of(hashing, &w.bytes), k as u8));
            }
        }
        // One k per key: the last given wins, as a later setter does.
        table.reverse();
        table.sort_by_key(|&(key, _)| key);
        table.dedup_by_key(|&mut (key, _)| key);
        debug_assert!(default_hashes <= MAX_NUM_HASHES);
        Ok(WeightedBloomFilter {
            bits: BitVec::zeros(d.num_cells)?,
            default_hashes,
            table,
            hashing,
            capacity: d.capacity,
            target_fpp: params::fpp_exact(d.num_cells, default_hashes, d.capacity),
            inserted: 0,
        })
    }
}

crate::codec::stored! {
    /// The weighted filter's parameters on disk (44 bytes). Payload: the bits as `BitVec`
    /// words, then the table: `table_len` entries of (key u64, k u8), keys strictly increasing,
    /// k in 1..=64 and not the default.
    struct Stored of f: WeightedBloomFilter {
        num_bits: u64 = f.num_bits() => check_num_bits,
        default_hashes: u32 = f.default_hashes => check_num_hashes,
        capacity: u64 = f.capacity => check_capacity,
        target_fpp: f64 = f.target_fpp => check_target_fpp,
        inserted: u64 = f.inserted,
        table_len: u64 = f.table.len() as u64,
    }
}

impl Persist for WeightedBloomFilter {
    fn encode_params(&self, out: &mut Vec<u8>) {
        Stored::of(self).write(out);
    }

    fn encode_payload(&self, out: &mut Vec<u8>) {
        self.bits.write_le_bytes(out);
        for &(key, k) in &self.table {
            out.extend_from_slice(&key.to_le_bytes());
            out.push(k);
        }
    }

    fn decode_parts(parts: &Parts<'_>) -> Result<Self, DecodeError> {
        let Shape { stored, hashing } = ViewShape::read(parts)?;
        let bits_len = BitVec::encoded_len(stored.num_bits) as usize;
        let (bits, table_bytes) = parts.payload.split_at(bits_len);
        let bits = BitVec::from_le_bytes(stored.num_bits, bits)?;
        let mut table = Vec::with_capacity(stored.table_len as usize);
        TableReader::new(stored.default_hashes).feed(table_bytes, |key, k| table.push((key, k)))?;
        Ok(WeightedBloomFilter {
            bits,
            default_hashes: stored.default_hashes,
            table,
            hashing,
            capacity: stored.capacity,
            target_fpp: stored.target_fpp,
            inserted: stored.inserted,
        })
    }
}

/// A weighted filter as loading and a read-only view ([`format::view`](crate::format::view))
/// read it: the stored parameters, checked with the payload's length. A view answers from
/// the bits and the weight table in the file: a query looks its item's key up in the table
/// by an interpolation search ([`find_key`]) over the file's entries (an entry may
/// straddle two chunks; the read takes both), then reads its k_x bits. What loading checks in the table — keys strictly
/// increasing, every k valid — needs all of it, so the view checks the whole table when it
/// opens (reading the table's chunks, not the bits), with the bit past m in the last word.
type ViewShape = Shape<Stored>;

impl ViewShape {
    /// The payload offset of the table (after the bits) and its length in bytes.
    fn table_span(&self) -> (usize, usize) {
        let s = &self.stored;
        let at = BitVec::encoded_len(s.num_bits) as usize;
        (at, (s.table_len * ENTRY_BYTES) as usize)
    }

    /// The k of a table key, read from the view's file.
    fn k_in_file(&self, view: &FilterView, key: u64) -> Result<Option<u32>, Error> {
        let (at, _) = self.table_span();
        let entry = |i: u64| at + (i * ENTRY_BYTES) as usize;
        let found = find_key(self.stored.table_len, key, |i| {
            let mut bytes = [0; 8];
            view.payload_into(entry(i), &mut bytes)?;
            Ok::<_, Error>(u64::from_le_bytes(bytes))
        })?;
        let Some(i) = found else { return Ok(None) };
        let mut k = [0];
        view.payload_into(entry(i) + 8, &mut k)?;
        Ok(Some(u32::from(k[0])))
    }
}

impl KindView for ViewShape {
    fn read(parts: &Parts<'_>) -> Result<Self, DecodeError> {
        parts.expect_kind(Kind::Weighted)?;
        let stored = Stored::read(parts.params)?;
        // Both lengths against the bytes present, before anything is allocated.
        let bits_len = BitVec::encoded_len(stored.num_bits);
        let table_bytes = stored.table_len.checked_mul(ENTRY_BYTES);
        let len = parts.payload.len();
        if table_bytes.and_then(|t| t.checked_add(bits_len)) != Some(len as u64) {
            return Err(invalid(
                "payload",
                format!(
                    "{len} bytes do not hold {} bits and {} table entries",
                    stored.num_bits, stored.table_len
                ),
            ));
        }
        Ok(Shape::of(stored, parts))
    }

    fn facts(&self) -> ViewFacts {
        let s = &self.stored;
        view_facts!(s, s.num_bits, s.default_hashes)
    }

    fn contains(&self, bytes: &[u8], view: &FilterView) -> Result<bool, Error> {
        let s = &self.stored;
        let positions = positions_by(
            self.hashing,
            s.num_bits,
            s.default_hashes,
            s.table_len,
            bytes,
            |key| self.k_in_file(view, key),
        )?;
        view.all_bits(positions)
    }

    /// One pass over the payload: the bits set, and the table's range of k; the rest as
    /// the loaded filter works it out (its memory counts the table's in-memory entries).
    fn summary(&self, view: &FilterView) -> Result<Summary, Error> {
        let s = &self.stored;
        let (table_at, _) = self.table_span();
        let (mut ones, mut range) = (0u64, (s.default_hashes, s.default_hashes));
        let mut table = TableReader::new(s.default_hashes);
        view.for_each_piece_at(|offset, bytes| {
            let split = table_at.saturating_sub(offset).min(bytes.len());
            let (bits, entries) = bytes.split_at(split);
            ones += bits
                .chunks_exact(8)
                .map(|w| u64::from(u64::from_le_bytes(w.try_into().expect("8 bytes")).count_ones()))
                .sum::<u64>();
            table.feed(entries, |_, k| {
                range = (range.0.min(u32::from(k)), range.1.max(u32::from(k)));
            })?;
            Ok(())
        })?;
        let (m, k) = (s.num_bits, s.default_hashes);
        let summary = view.summary_of(
            None,
            properties(m, k, s.table_len, range, s.target_fpp, ones),
            params::estimate_items(ones, m, k),
            params::fpp_from_fill(ones, m, k),
        );
        let memory_bytes =
            BitVec::encoded_len(m) + s.table_len * std::mem::size_of::<(u64, u8)>() as u64;
        Ok(Summary {
            memory_bytes,
            bits_per_item: crate::filter::bits_per_item(memory_bytes, s.capacity),
            ..summary
        })
    }

    /// Loading refuses a set bit past m in the last word and a table whose keys are not
    /// strictly increasing or whose k is not valid; so does the view, reading the table's
    /// chunks (each checked against its checksum) when it opens.
    fn check_opened(&self, view: &FilterView) -> Result<(), Error> {
        view.check_last_word(self.stored.num_bits)?;
        let (at, len) = self.table_span();
        let mut table = TableReader::new(self.stored.default_hashes);
        view.for_each_piece_in(at..at + len, |_, bytes| Ok(table.feed(bytes, |_, _| {})?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// [`find_key`] over a table in memory, with the number of keys it read.
    fn search(keys: &[u64], key: u64) -> (Option<u64>, u32) {
        let mut reads = 0;
        let found = infallible(find_key(keys.len() as u64, key, |i| {
            reads += 1;
            Ok(keys[i as usize])
        }));
        (found, reads)
    }

    proptest! {
        /// The search finds every key of the table at its index and no other key, on even
        /// keys and on keys bunched near 0 (where interpolating guesses badly).
        #[test]
        fn the_search_finds_exactly_the_keys_of_the_table(
            mut keys in proptest::collection::vec(any::<u64>(), 0..300),
            probes in proptest::collection::vec(any::<u64>(), 0..50),
            bunched in any::<bool>(),
        ) {
            if bunched {
                keys.iter_mut().for_each(|k| *k >>= 50);
            }
            keys.sort_unstable();
            keys.dedup();
            let edges = [0, 1, u64::MAX, u64::MAX - 1];
            for &probe in probes.iter().chain(&keys).chain(&edges) {
                let expected = keys.binary_search(&probe).ok().map(|i| i as u64);
                prop_assert_eq!(search(&keys, probe).0, expected, "key {}", probe);
            }
        }
    }

    /// On digests (even keys) a search reads about log₂ log₂ n keys: at most 8 on average
    /// in a table of 10⁶, where bisection reads 20; on the worst keys for interpolating
    /// (all bunched at the bottom but the last, at the top) it reads at most 2 log₂ n + 2.
    #[test]
    fn the_search_reads_few_keys_and_never_many() {
        let mut rng = crate::hash::SplitMix64::new(7);
        let mut keys: Vec<u64> = (0..1_000_000).map(|_| rng.next_u64()).collect();
        keys.sort_unstable();
        keys.dedup();
        let (mut total, mut most) = (0, 0);
        for (i, &key) in keys.iter().enumerate().step_by(97) {
            let (found, reads) = search(&keys, key);
            assert_eq!(found, Some(i as u64));
            (total, most) = (total + reads, most.max(reads));
        }
        let mean = f64::from(total) / keys.len().div_ceil(97) as f64;
        assert!(mean <= 8.0 && most <= 41, "mean {mean:.2}, most {most}");

        let n = 1u64 << 16;
        let bound = 2 * 17 + 2;
        let worst: Vec<u64> = (0..n - 1).chain([u64::MAX]).collect();
        for key in (0..n).chain([u64::MAX, u64::MAX - 1, n + 5]) {
            let (found, reads) = search(&worst, key);
            assert_eq!(found, worst.binary_search(&key).ok().map(|i| i as u64));
            assert!(reads <= bound, "key {key}: {reads} reads");
        }
    }

    #[test]
    fn hot_items_get_more_hash_functions_and_cold_ones_fewer() {
        let f = WeightedBloomFilter::builder()
            .capacity(1_000)
            .universe(1_000_000)
            .query_frequency("hot", 64.0)
            .query_frequency("cold", 1.0 / 8.0)
            .build()
            .unwrap();
        assert_eq!(f.default_hashes(), 7);
        assert_eq!(f.num_hashes_of("hot"), 13);
        assert_eq!(f.num_hashes_of("cold"), 4);
        assert_eq!(f.weighted_items(), 2);
    }

    #[test]
    fn the_reference_weight_is_the_membership_weighted_mean() {
        // Half the universe queried 4× as often: log₂ w̄ = 1, so those items get k̄ + 1
        // and the others k̄ − 1, and the members still average k̄.
        let mut b = WeightedBloomFilter::builder()
            .capacity(100)
            .num_bits(1_000)
            .universe(400);
        for i in 0..200u32 {
            b = b.query_frequency(&i, 4.0);
        }
        let f = b.build().unwrap();
        let mean_k = 1_000.0 * std::f64::consts::LN_2 / 100.0; // 6.93
        assert_eq!(f.num_hashes_of(&0u32), (mean_k + 1.0).round() as u32);
        assert_eq!(f.default_hashes(), (mean_k - 1.0).round() as u32);
    }

    #[test]
    fn bad_weights_are_errors() {
        let b = || WeightedBloomFilter::builder().capacity(100);
        for q in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(matches!(
                b().query_frequency("x", q).build(),
                Err(Error::InvalidParameter { .. })
            ));
        }
        for p in [0.0, 1.0, 1.5, f64::NAN] {
            assert!(matches!(
                b().weight("x", 1.0, p).build(),
                Err(Error::InvalidParameter { .. })
            ));
        }
        // A universe no larger than the set leaves no room for non-members.
        assert!(matches!(
            b().universe(100).weight("x", 2.0, 0.5).build(),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(matches!(
            b().universe(10).build(),
            Err(Error::InvalidParameter { .. })
        ));
        assert_eq!(
            WeightedBloomFilter::builder().build().unwrap_err(),
            Error::ZeroCapacity
        );
    }
}
