//! A classic Bloom filter that many threads fill and query at once, without a lock.
//!
//! [`ConcurrentBloomFilter`] is the [`BloomFilter`] of Bloom ("Space/Time Trade-offs in Hash
//! Coding with Allowable Errors", CACM 1970) with its bit array made of atomic words
//! ([`AtomicBitVec`]): `insert` and `contains` take `&self`, so one filter can be shared
//! through an [`Arc`](std::sync::Arc) (or borrowed by scoped threads) and used from every
//! thread at the same time. Everything else is the classic filter's: the same m and k for
//! the same capacity and ε, the same hashing, the same k positions per item. That is what
//! makes [`into_bloom`](ConcurrentBloomFilter::into_bloom) and
//! [`from_bloom`](ConcurrentBloomFilter::from_bloom) free of rehashing — they move the words
//! from one vector to the other — and what makes a filter filled concurrently bit for bit
//! the filter that inserting the same items one after another would have built (setting
//! bits is an OR, and OR does not care about order).
//!
//! # What a query sees
//!
//! Inserting sets k bits with one atomic `fetch_or` each, `Relaxed` (see [`AtomicBitVec`]
//! for why nothing stronger is needed). A query is guaranteed to find an item when the
//! insert *happened before* it: in the inserting thread itself, after joining that thread,
//! or after any synchronisation with it (a channel message, a mutex, a `Release`/`Acquire`
//! pair). A query racing with the insert of the same item may answer either way, since it
//! may see some of the item's k bits and not others; once it answers "maybe" it always
//! will, because bits are never cleared through `&self`. There are no false negatives for
//! any insert that has completed in this sense.
//!
//! # The count of inserted items
//!
//! [`len`](Filter::len) means what it means for [`BloomFilter`]: the number of `insert`
//! calls that changed the filter (set at least one bit from 0 to 1). Each bit's change from
//! 0 to 1 is credited to exactly one call, whichever thread's `fetch_or` came first. From
//! one thread this is exactly the classic filter's count. With racing threads the calls
//! are ordered by when their atomic operations happened, so the count can differ from a
//! sequential pass over the same items by the few items whose bits were set by others in
//! the meantime — two threads inserting the *same* item at once may both count it, and an
//! item whose bits were all set first by racing inserts counts for none. It always lies
//! between ⌈ones / k⌉ and the number of `insert` calls. The count is kept in a few
//! cache-line-sized stripes (each thread adds to its own), so counting does not make the
//! threads fight over one cache line.
//!
//! # Saving
//!
//! A concurrent filter has no file kind of its own: convert it with
//! [`into_bloom`](ConcurrentBloomFilter::into_bloom) (free, when no thread uses it any more)
//! or [`snapshot`](ConcurrentBloomFilter::snapshot) (a copy, while others go on inserting)
//! and save the [`BloomFilter`]. The file is a plain `bloom` file, readable by every tool
//! that reads the classic filter. A separate kind would only have duplicated the classic
//! format and its hardened decoder for the same bytes: atomicity is a property of how the
//! bits are accessed in memory, not of what they mean.
//!
//! ```
//! use std::sync::Arc;
//! use bloomkit::{ConcurrentBloomFilter, Persist};
//!
//! let filter = Arc::new(ConcurrentBloomFilter::with_capacity(10_000, 0.01)?);
//! let workers: Vec<_> = (0..4u64)
//!     .map(|t| {
//!         let filter = Arc::clone(&filter);
//!         std::thread::spawn(move || {
//!             for i in t * 1000..(t + 1) * 1000 {
//!                 filter.insert(&i);
//!             }
//!         })
//!     })
//!     .collect();
//! for worker in workers {
//!     worker.join().unwrap();
//! }
//! // Every insert happened before this point: every item is found.
//! assert!((0..4000u64).all(|i| filter.contains(&i)));
//!
//! // Saved as a plain bloom file.
//! let bloom = Arc::into_inner(filter).unwrap().into_bloom();
//! let bytes = bloom.to_bytes();
//! assert!(bloomkit::BloomFilter::from_bytes(&bytes)?.contains(&1234u64));
//! # Ok::<(), bloomkit::Error>(())
//! ```

use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crate::bits::AtomicBitVec;
use crate::bloom::BloomFilter;
use crate::codec::{Parts, Persist};
use crate::error::{DecodeError, Error};
use crate::filter::{Filter, Kind};
use crate::hash::{Hashing, Item};
use crate::params;

/// A classic Bloom filter whose `insert` and `contains` take `&self`, for sharing between
/// threads without a lock. See the [module docs](self) for what a query sees and what
/// `len` counts.
///
/// ```
/// use bloomkit::{BloomFilter, ConcurrentBloomFilter, HashFunction};
///
/// // Any classic filter converts, with every choice its builder offers.
/// let filter = ConcurrentBloomFilter::from_bloom(
///     BloomFilter::builder().capacity(1000).fpp(0.001).hash_function(HashFunction::Xxh3).build()?,
/// );
/// std::thread::scope(|s| {
///     s.spawn(|| filter.insert("left"));
///     s.spawn(|| filter.insert("right"));
/// });
/// assert!(filter.contains("left") && filter.contains("right"));
/// # Ok::<(), bloomkit::Error>(())
/// ```
pub struct ConcurrentBloomFilter {
    bits: AtomicBitVec,
    num_hashes: u32,
    hashing: Hashing,
    capacity: u64,
    target_fpp: f64,
    inserted: StripedCounter,
}

impl ConcurrentBloomFilter {
    /// A filter for `capacity` items at false-positive probability `fpp`, sized and hashed
    /// exactly as [`BloomFilter::with_capacity`].
    ///
    /// ```
    /// use bloomkit::ConcurrentBloomFilter;
    /// let filter = ConcurrentBloomFilter::with_capacity(1_000, 0.01)?;
    /// assert_eq!((filter.num_bits(), filter.num_hashes()), (9_586, 7));
    /// assert!(ConcurrentBloomFilter::with_capacity(0, 0.01).is_err());
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn with_capacity(capacity: impl crate::params::ItemCount, fpp: f64) -> Result<Self, Error> {
        BloomFilter::with_capacity(capacity, fpp).map(Self::from_bloom)
    }

    /// The concurrent form of a classic filter: its words move over, no item is rehashed.
    /// (Build the classic filter with [`BloomFilter::builder`] for explicit m and k, another
    /// hash function, index scheme or seed.)
    pub fn from_bloom(filter: BloomFilter) -> Self {
        let inserted = StripedCounter::default();
        inserted.add(filter.inserted);
        Self {
            bits: filter.bits.into(),
            num_hashes: filter.num_hashes,
            hashing: filter.hashing,
            capacity: filter.capacity,
            target_fpp: filter.target_fpp,
            inserted,
        }
    }

    /// The classic filter with the same bits and count: its words move back, no item is
    /// rehashed. Save the result to write a `bloom` file.
    pub fn into_bloom(self) -> BloomFilter {
        let inserted = self.inserted.total();
        BloomFilter {
            bits: self.bits.into(),
            num_hashes: self.num_hashes,
            hashing: self.hashing,
            capacity: self.capacity,
            target_fpp: self.target_fpp,
            inserted,
        }
    }

    /// A classic filter with a copy of the bits, taken while other threads may go on
    /// inserting: it holds every insert that happened before the call (and perhaps some
    /// that raced with it).
    pub fn snapshot(&self) -> BloomFilter {
        BloomFilter {
            bits: self.bits.snapshot(),
            num_hashes: self.num_hashes,
            hashing: self.hashing,
            capacity: self.capacity,
            target_fpp: self.target_fpp,
            inserted: self.inserted.total(),
        }
    }

    /// Adds every item of a classic filter with the same parameters and hashing, through
    /// `&self`, while other threads go on inserting and querying: each word is ORed in
    /// atomically, so nothing anyone inserted is lost. The item count grows to the estimate
    /// from the fill (it never shrinks, as other threads may be counting too).
    ///
    /// ```
    /// use bloomkit::{BloomFilter, ConcurrentBloomFilter, Filter};
    /// let shared = ConcurrentBloomFilter::with_capacity(1_000, 0.01)?;
    /// let mut other = BloomFilter::with_capacity(1_000, 0.01)?;
    /// other.insert("from elsewhere");
    /// std::thread::scope(|s| {
    ///     s.spawn(|| shared.insert("here"));
    ///     s.spawn(|| shared.union(&other).unwrap());
    /// });
    /// assert!(shared.contains("here") && shared.contains("from elsewhere"));
    /// // A filter of other parameters is refused, and nothing changes.
    /// assert!(shared.union(&BloomFilter::with_capacity(10, 0.01)?).is_err());
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn union(&self, other: &BloomFilter) -> Result<(), Error> {
        crate::filter::require_same_layout(Kind::Bloom, self.layout(), other.layout())?;
        self.bits.union_with(&other.bits);
        let estimate = params::count_from_estimate(Filter::estimated_len(self));
        let now = self.inserted.total();
        if estimate > now {
            self.inserted.add(estimate - now);
        }
        Ok(())
    }

    /// The parameters that decide where an item lands, and the hashing, as the classic
    /// filter describes them (so that the two merge with one check).
    fn layout(&self) -> String {
        crate::bloom::layout(self.num_bits(), self.num_hashes, self.hashing)
    }

    /// Adds an item. Returns `true` if this call set at least one of the item's bits from 0
    /// to 1, `false` if all were already set (by earlier or racing inserts).
    #[inline]
    pub fn insert<I: Item + ?Sized>(&self, item: &I) -> bool {
        let changed = self.insert_uncounted(item);
        if changed {
            self.inserted.add(1);
        }
        changed
    }

    /// [`insert`](Self::insert) without updating the count, for callers that count many
    /// inserts themselves and add the total once ([`add_inserted`](Self::add_inserted)).
    #[inline]
    pub(crate) fn insert_uncounted<I: Item + ?Sized>(&self, item: &I) -> bool {
        let bits = &self.bits;
        item.with_bytes(|bytes| {
            self.hashing
                .positions(bytes, self.num_hashes, bits.len())
                .fold(false, |changed, p| bits.set(p) | changed)
        })
    }

    /// Adds `count` changed inserts, counted by the caller, to [`len`](Filter::len).
    #[cfg_attr(not(feature = "rayon"), allow(dead_code))]
    pub(crate) fn add_inserted(&self, count: u64) {
        self.inserted.add(count);
    }

    /// `false` if the item is certainly absent, `true` if it may be present. Finds every
    /// item whose insert happened before this call (see the [module docs](self)).
    #[inline]
    pub fn contains<I: Item + ?Sized>(&self, item: &I) -> bool {
        item.with_bytes(|bytes| {
            self.hashing
                .positions(bytes, self.num_hashes, self.bits.len())
                .all(|p| self.bits.get(p))
        })
    }

    /// m, the number of bits.
    pub fn num_bits(&self) -> u64 {
        self.bits.len()
    }

    crate::sizing::getters! {
        /// k, the number of hash functions.
        num_hashes: u32;

        /// n, the number of items the filter was sized for.
        capacity: u64;

        /// ε, the false-positive probability the filter was sized for (at `capacity` items).
        target_fpp: f64;
    }

    /// The number of bits that are 1 (while others insert: some value in between).
    pub fn count_ones(&self) -> u64 {
        self.bits.count_ones()
    }

    /// The fraction of bits that are 1.
    pub fn fill_ratio(&self) -> f64 {
        self.count_ones() as f64 / self.num_bits() as f64
    }
}

/// A copy of the current bits (see [`snapshot`](ConcurrentBloomFilter::snapshot)), shared
/// by nothing.
impl Clone for ConcurrentBloomFilter {
    fn clone(&self) -> Self {
        Self::from_bloom(self.snapshot())
    }
}

/// The classic filter's file format, byte for byte: a concurrent filter saves as a `bloom`
/// file (taking a copy of the bits as they are, while other threads may go on inserting)
/// and any `bloom` file loads as a concurrent filter.
///
/// ```
/// use bloomkit::{BloomFilter, ConcurrentBloomFilter, Persist};
/// let shared = ConcurrentBloomFilter::with_capacity(1_000, 0.01)?;
/// shared.insert("dist");
/// let bytes = shared.to_bytes();
/// assert_eq!(bytes, shared.snapshot().to_bytes());
/// assert!(ConcurrentBloomFilter::from_bytes(&bytes)?.contains("dist"));
/// assert!(BloomFilter::from_bytes(&bytes)?.contains("dist"));
/// # Ok::<(), bloomkit::Error>(())
/// ```
impl Persist for ConcurrentBloomFilter {
    fn encode_params(&self, out: &mut Vec<u8>) {
        self.snapshot().encode_params(out)
    }

    fn encode_payload(&self, out: &mut Vec<u8>) {
        self.snapshot().encode_payload(out)
    }

    fn decode_parts(parts: &Parts<'_>) -> Result<Self, DecodeError> {
        BloomFilter::decode_parts(parts).map(Self::from_bloom)
    }

    /// One copy of the bits, for the parameters and the payload alike.
    fn to_bytes(&self) -> Vec<u8> {
        self.snapshot().to_bytes()
    }
}

#[cfg(feature = "serde")]
crate::external_trait_impls::serde::via_persist!(ConcurrentBloomFilter);

impl From<BloomFilter> for ConcurrentBloomFilter {
    fn from(filter: BloomFilter) -> Self {
        Self::from_bloom(filter)
    }
}

impl From<ConcurrentBloomFilter> for BloomFilter {
    fn from(filter: ConcurrentBloomFilter) -> Self {
        filter.into_bloom()
    }
}

/// The [`Filter`] view; `try_insert` takes `&mut self` there, which a concurrent filter
/// does not need but can of course give.
impl Filter for ConcurrentBloomFilter {
    /// [`Kind::Bloom`]: the layout, and the file it is saved as, are the classic filter's.
    fn kind(&self) -> Kind {
        Kind::Bloom
    }

    fn hashing(&self) -> Hashing {
        self.hashing
    }

    fn try_insert<I: Item + ?Sized>(&mut self, item: &I) -> Result<bool, Error> {
        Ok(self.insert(item))
    }

    fn contains<I: Item + ?Sized>(&self, item: &I) -> bool {
        ConcurrentBloomFilter::contains(self, item)
    }

    fn clear(&mut self) {
        self.bits.clear();
        self.inserted = StripedCounter::default();
    }

    fn len(&self) -> u64 {
        self.inserted.total()
    }

    fn estimated_len(&self) -> f64 {
        params::estimate_items(self.count_ones(), self.num_bits(), self.num_hashes)
    }

    fn memory_bytes(&self) -> usize {
        self.bits.memory_bytes()
    }

    fn capacity(&self) -> u64 {
        self.capacity
    }

    fn properties(&self) -> Vec<(&'static str, String)> {
        vec![
            ("bits (m)", self.num_bits().to_string()),
            ("hash functions (k)", self.num_hashes.to_string()),
            ("target fpp", format!("{}", self.target_fpp)),
            ("fill ratio", format!("{:.6}", self.fill_ratio())),
            ("concurrent", "yes (atomic bit array)".into()),
        ]
    }

    fn expected_fpp(&self) -> f64 {
        params::fpp_from_fill(self.count_ones(), self.num_bits(), self.num_hashes)
    }

    fn target_fpp(&self) -> f64 {
        ConcurrentBloomFilter::target_fpp(self)
    }

    fn fpp_at(&self, n: u64) -> f64 {
        params::fpp_exact(self.num_bits(), self.num_hashes, n)
    }
}

impl<I: Item> Extend<I> for ConcurrentBloomFilter {
    fn extend<T: IntoIterator<Item = I>>(&mut self, iter: T) {
        let changed = iter
            .into_iter()
            .filter(|item| self.insert_uncounted(item))
            .count();
        self.inserted.add(changed as u64);
    }
}

/// Collects items into a filter sized for their number at ε = 1%, as
/// [`BloomFilter`]'s `FromIterator` does.
impl<I: Item> FromIterator<I> for ConcurrentBloomFilter {
    fn from_iter<T: IntoIterator<Item = I>>(iter: T) -> Self {
        BloomFilter::from_iter(iter).into()
    }
}

impl fmt::Debug for ConcurrentBloomFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConcurrentBloomFilter")
            .field("num_bits", &self.num_bits())
            .field("num_hashes", &self.num_hashes)
            .field("capacity", &self.capacity)
            .field("target_fpp", &self.target_fpp)
            .field("inserted", &self.inserted.total())
            .field("ones", &self.count_ones())
            .field("hashing", &self.hashing)
            .finish()
    }
}

/// A counter that threads add to without sharing a cache line: each thread adds to one of
/// [`STRIPES`] counters (chosen once per thread), and the total is their sum.
#[derive(Default)]
struct StripedCounter {
    stripes: [Stripe; STRIPES],
}

/// The number of stripes: more than the threads that usually insert at once.
const STRIPES: usize = 16;

/// One counter alone on its cache line (128 bytes: adjacent-line prefetchers pair lines).
#[derive(Default)]
#[repr(align(128))]
struct Stripe(AtomicU64);

impl StripedCounter {
    #[inline]
    fn add(&self, count: u64) {
        self.stripes[stripe_of_this_thread()]
            .0
            .fetch_add(count, Ordering::Relaxed);
    }

    fn total(&self) -> u64 {
        self.stripes
            .iter()
            .map(|s| s.0.load(Ordering::Relaxed))
            .fold(0, u64::wrapping_add)
    }
}

/// The stripe of the calling thread: threads get stripes round-robin as they first count.
#[inline]
fn stripe_of_this_thread() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static STRIPE: usize = NEXT.fetch_add(1, Ordering::Relaxed) % STRIPES;
    }
    STRIPE.with(|stripe| *stripe)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_through_a_shared_reference_loses_no_concurrent_insert() {
        let shared = ConcurrentBloomFilter::with_capacity(40_000, 0.01).unwrap();
        let mut other = BloomFilter::with_capacity(40_000, 0.01).unwrap();
        for i in 20_000..30_000u32 {
            other.insert(&i);
        }
        std::thread::scope(|s| {
            s.spawn(|| {
                (0..10_000u32).for_each(|i| {
                    shared.insert(&i);
                })
            });
            s.spawn(|| {
                (10_000..20_000u32).for_each(|i| {
                    shared.insert(&i);
                })
            });
            s.spawn(|| shared.union(&other).unwrap());
        });
        assert!((0..30_000u32).all(|i| shared.contains(&i)));
        // The same bits as the classic union of the same three sets.
        let mut classic = BloomFilter::with_capacity(40_000, 0.01).unwrap();
        (0..20_000u32).for_each(|i| {
            classic.insert(&i);
        });
        crate::Mergeable::union(&mut classic, &other).unwrap();
        let payload = |f: &dyn Fn(&mut Vec<u8>)| {
            let mut out = Vec::new();
            f(&mut out);
            out
        };
        assert_eq!(
            payload(&|out| shared.encode_payload(out)),
            payload(&|out| classic.encode_payload(out)),
            "the union's bits are the classic union's (the counts may differ: estimates)"
        );
        // A mismatched filter is refused and changes nothing.
        let before = shared.to_bytes();
        let seeded = BloomFilter::builder()
            .capacity(40_000)
            .seed(1)
            .build()
            .unwrap();
        assert!(matches!(shared.union(&seeded), Err(Error::Incompatible(_))));
        assert_eq!(shared.to_bytes(), before);
    }

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn is_send_and_sync() {
        assert_send_sync::<ConcurrentBloomFilter>();
    }

    #[test]
    fn same_parameters_give_the_same_bits_and_count_as_the_classic_filter() {
        for (capacity, fpp) in [(1000, 0.01), (5000, 0.001), (1, 0.5)] {
            let mut classic = BloomFilter::with_capacity(capacity, fpp).unwrap();
            let concurrent = ConcurrentBloomFilter::with_capacity(capacity, fpp).unwrap();
            assert_eq!(concurrent.num_bits(), classic.num_bits());
            assert_eq!(concurrent.num_hashes(), classic.num_hashes());
            for i in 0..capacity * 2 {
                assert_eq!(concurrent.insert(&i), classic.insert(&i), "item {i}");
            }
            assert_eq!(concurrent.len(), Filter::len(&classic));
            assert_eq!(concurrent.snapshot(), classic);
            assert_eq!(concurrent.into_bloom(), classic);
        }
    }

    #[test]
    fn conversion_from_a_filled_classic_filter_keeps_every_answer() {
        let mut classic = BloomFilter::builder()
            .capacity(2000)
            .fpp(0.01)
            .seed(7)
            .build()
            .unwrap();
        classic.extend(0..1000u32);
        let concurrent = ConcurrentBloomFilter::from(classic.clone());
        assert!((0..3000u32).all(|i| concurrent.contains(&i) == classic.contains(&i)));
        assert_eq!(concurrent.len(), Filter::len(&classic));
        assert!(!concurrent.insert(&5u32));
        assert_eq!(BloomFilter::from(concurrent), classic);
    }

    #[test]
    fn inserts_are_seen_by_the_inserter_at_once_and_by_everyone_after_joining() {
        let filter = ConcurrentBloomFilter::with_capacity(40_000, 0.01).unwrap();
        let per_thread = 10_000u64;
        let stop = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            let inserters: Vec<_> = (0..4u64)
                .map(|t| {
                    let filter = &filter;
                    s.spawn(move || {
                        for i in t * per_thread..(t + 1) * per_thread {
                            filter.insert(&i);
                            // Program order: the thread's own insert is visible to it.
                            assert!(filter.contains(&i), "thread {t} lost its own {i}");
                        }
                    })
                })
                .collect();
            for q in 0..2u64 {
                let (filter, stop) = (&filter, &stop);
                s.spawn(move || {
                    // Queries racing with the inserts: an answer may be either, but once an
                    // item is seen it stays seen (bits are never cleared).
                    let mut seen = vec![false; (4 * per_thread) as usize];
                    while !stop.load(Ordering::Relaxed) {
                        for i in (q..4 * per_thread).step_by(7) {
                            let found = filter.contains(&i);
                            assert!(found || !seen[i as usize], "{i} disappeared");
                            seen[i as usize] |= found;
                        }
                    }
                });
            }
            for inserter in inserters {
                inserter.join().unwrap();
            }
            // Every insert happened before this point.
            assert!((0..4 * per_thread).all(|i| filter.contains(&i)));
            stop.store(true, Ordering::Relaxed);
        });
        let count = filter.len();
        let ones = filter.count_ones();
        let k = filter.num_hashes() as u64;
        assert!(
            (ones.div_ceil(k)..=4 * per_thread).contains(&count),
            "{count}"
        );
        // Bit for bit the filter a single thread would have built.
        let mut classic = BloomFilter::with_capacity(40_000, 0.01).unwrap();
        classic.extend(0..4 * per_thread);
        assert_eq!(filter.into_bloom().bits, classic.bits);
    }

    #[test]
    fn an_insert_sent_through_a_channel_is_seen_by_the_receiver() {
        let filter = std::sync::Arc::new(ConcurrentBloomFilter::with_capacity(1000, 0.01).unwrap());
        let (tx, rx) = std::sync::mpsc::channel();
        let writer = {
            let filter = std::sync::Arc::clone(&filter);
            std::thread::spawn(move || {
                for i in 0..1000u32 {
                    filter.insert(&i);
                    tx.send(i).unwrap();
                }
            })
        };
        for i in rx {
            assert!(filter.contains(&i), "{i} was sent after its insert");
        }
        writer.join().unwrap();
    }

    #[test]
    fn the_filter_trait_view_matches_the_inherent_methods() {
        let mut f = ConcurrentBloomFilter::with_capacity(100, 0.01).unwrap();
        f.try_insert("a").unwrap();
        f.extend(["b", "c", "c"]);
        assert_eq!(Filter::len(&f), 3);
        assert_eq!(f.kind(), Kind::Bloom);
        assert!(Filter::contains(&f, "b"));
        assert!(f.properties().iter().any(|(k, _)| *k == "bits (m)"));
        assert!(f.expected_fpp() > 0.0 && f.estimated_len() > 2.0);
        f.clear();
        assert!(Filter::is_empty(&f) && !f.contains("a") && f.count_ones() == 0);
        let collected: ConcurrentBloomFilter = (0..10u8).collect();
        assert!(collected.contains(&3u8));
    }

    #[test]
    fn debug_shows_the_parameters() {
        let f = ConcurrentBloomFilter::with_capacity(1000, 0.01).unwrap();
        let s = format!("{f:?}");
        for needle in ["num_bits: 9586", "num_hashes: 7", "capacity: 1000"] {
            assert!(s.contains(needle), "{s}");
        }
    }
}
