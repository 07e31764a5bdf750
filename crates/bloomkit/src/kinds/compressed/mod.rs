//! The compressed Bloom filter (Mitzenmacher, "Compressed Bloom Filters", IEEE/ACM
//! Transactions on Networking 10(5), 2002): a classic Bloom filter whose m and k are chosen
//! for the smallest size *sent* — the bit array after compression — rather than the
//! smallest size in memory, and whose file holds the array arithmetic-coded.
//!
//! # Why fewer hash functions
//!
//! A filter of m bits with k hashes holding n items has a fraction `p = e^(−kn/m)` of zero
//! bits and false-positive rate `f = (1 − p)^k`. The classic choice `k = (m/n) ln 2` makes
//! p = 1/2: the smallest m for ε, but every bit carries a full bit of entropy, so it does
//! not compress. Sent over a network, the array costs its entropy `z = m · H(p)` bits
//! instead of m; for a given ε, fewer hash functions and a larger, sparser array have a
//! smaller z. At ε = 1%: the classic filter (k = 7) sends 9.59 bits per item; k = 2 with
//! m/n = 19.0 sends 8.90; k = 1 with m/n = 99.5 sends 8.04; no structure can send less than
//! `log₂(1/ε)` = 6.64 ([`params::entropy_bound_bits_per_item`]). The price is memory at
//! both ends, so the builder chooses the (m, k) with the smallest z among those whose m/n
//! stays under a cap — by default [`params::DEFAULT_MEMORY_FACTOR`] = 4 times the classic
//! filter's ([`params::compressed_optimum`], with the formulas next to it).
//!
//! # In memory and on disk
//!
//! In memory it *is* a classic [`BloomFilter`] — the same inserts, queries, unions and
//! rates ([`as_bloom`](CompressedBloomFilter::as_bloom)). The file (kind tag 14) stores the
//! classic filter's parameters, the probability of a 0 bit measured when saving, and the bit
//! array coded with the crate's binary arithmetic coder ([`crate::arith`]) at that
//! probability, which comes within a fraction of a percent of `m · H(p)`. Reading it checks
//! the stated m against what the payload can code ([`arith::max_bits_in`]) before
//! allocating, and accepts only the coding the encoder writes for the bits it decodes, so
//! one filter has one file. Any classic filter
//! can be sent this way ([`from_bloom`](CompressedBloomFilter::from_bloom), `bloomkit export
//! --compressed`); one sized by this kind's builder is the one that compresses best.
//!
//! ```
//! use bloomkit::{CompressedBloomFilter, Filter, Persist};
//!
//! let mut filter = CompressedBloomFilter::with_capacity(10_000, 0.01)?;
//! assert_eq!(filter.num_hashes(), 2); // not 7: a sparse array compresses
//! for i in 0..10_000u32 {
//!     filter.insert(&i);
//! }
//! let sent = filter.to_bytes();
//! // About 8.9 bits per item sent, where the classic filter needs 9.59 (and 11 600 bytes).
//! assert!(sent.len() < 11_400, "{}", sent.len());
//! let received = CompressedBloomFilter::from_bytes(&sent)?;
//! assert!((0..10_000u32).all(|i| received.contains(&i)));
//! # Ok::<(), bloomkit::Error>(())
//! ```

mod options;
pub mod theory;

use crate::arith;
use crate::bits::BitVec;
use crate::bloom::BloomFilter;
use crate::codec::{invalid, Parts, Persist, Reader};
use crate::error::{DecodeError, Error};
use crate::filter::{Filter, Kind, Mergeable};
use crate::hash::{Hashing, HashingChoice, Item};
use crate::params::{self, MAX_NUM_BITS};

/// A Bloom filter sized for the smallest compressed size at ε, saved arithmetic-coded.
#[derive(Clone, PartialEq)]
pub struct CompressedBloomFilter {
    inner: BloomFilter,
}

impl CompressedBloomFilter {
    /// A filter for `capacity` items at false-positive probability `fpp`, with the m and
    /// k that minimise the compressed size under the default memory cap.
    ///
    /// ```
    /// use bloomkit::CompressedBloomFilter;
    /// let f = CompressedBloomFilter::with_capacity(1_000, 0.001)?;
    /// assert_eq!(f.num_hashes(), 3);
    /// assert!(CompressedBloomFilter::with_capacity(0, 0.01).is_err());
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn with_capacity(capacity: impl crate::params::ItemCount, fpp: f64) -> Result<Self, Error> {
        Self::builder().capacity(capacity).fpp(fpp).build()
    }

    /// A builder: memory cap, explicit m and k, hashing.
    pub fn builder() -> CompressedBloomFilterBuilder {
        CompressedBloomFilterBuilder::default()
    }

    /// Any classic filter, to be sent compressed: the same bits, hashing and counts.
    pub fn from_bloom(filter: BloomFilter) -> Self {
        CompressedBloomFilter { inner: filter }
    }

    /// The classic filter this one is in memory.
    pub fn as_bloom(&self) -> &BloomFilter {
        &self.inner
    }

    /// The classic filter, to be saved uncompressed.
    pub fn into_bloom(self) -> BloomFilter {
        self.inner
    }

    /// Adds an item; `true` if it was certainly new ([`BloomFilter::insert`]).
    #[inline]
    pub fn insert<I: Item + ?Sized>(&mut self, item: &I) -> bool {
        self.inner.insert(item)
    }

    /// `false` if the item is certainly absent ([`BloomFilter::contains`]).
    #[inline]
    pub fn contains<I: Item + ?Sized>(&self, item: &I) -> bool {
        self.inner.contains(item)
    }

    /// m, the number of bits in memory.
    pub fn num_bits(&self) -> u64 {
        self.inner.num_bits()
    }

    /// k, the number of hash functions.
    pub fn num_hashes(&self) -> u32 {
        self.inner.num_hashes()
    }

    /// The probability of a 0 bit the coder uses, in units of 2⁻¹²: the filter's own
    /// fraction of zeros.
    fn prob_zero(&self) -> u16 {
        arith::prob_zero_for(self.inner.count_ones(), self.num_bits())
    }

    /// The bytes of the arithmetic-coded bit array as it is now (what `to_bytes` sends,
    /// less about 80 bytes of header). Codes the array to count them: O(m).
    pub fn compressed_len(&self) -> usize {
        let mut out = Vec::new();
        self.encode_payload(&mut out);
        out.len()
    }

    /// Transmitted bits per item at capacity by the theory, `(m/n)·H(e^(−kn/m))`
    /// ([`params::compressed_bits_per_item`]).
    pub fn theoretical_bits_sent_per_item(&self) -> f64 {
        let m_n = self.num_bits() as f64 / self.inner.capacity() as f64;
        params::compressed_bits_per_item(m_n, self.num_hashes())
    }
}

impl std::fmt::Debug for CompressedBloomFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("CompressedBloomFilter")
            .field(&self.inner)
            .finish()
    }
}

/// Forwards a `Filter` method to the classic filter inside.
macro_rules! forward {
    ($($name:ident($($arg:ident: $ty:ty),*) -> $ret:ty;)*) => {
        $(fn $name(&self, $($arg: $ty),*) -> $ret {
            Filter::$name(&self.inner, $($arg),*)
        })*
    };
}

impl Filter for CompressedBloomFilter {
    crate::filter::filter_basics!(Compressed);

    fn try_insert<I: Item + ?Sized>(&mut self, item: &I) -> Result<bool, Error> {
        Ok(self.inner.insert(item))
    }

    fn contains<I: Item + ?Sized>(&self, item: &I) -> bool {
        self.inner.contains(item)
    }

    fn clear(&mut self) {
        self.inner.clear();
    }

    forward! {
        hashing() -> Hashing;
        len() -> u64;
        estimated_len() -> f64;
        memory_bytes() -> usize;
        capacity() -> u64;
        expected_fpp() -> f64;
        target_fpp() -> f64;
        fpp_at(n: u64) -> f64;
    }

    fn properties(&self) -> Vec<(&'static str, String)> {
        let mut facts = self.inner.properties();
        let sent = self.compressed_len();
        facts.extend([
            ("compressed payload", format!("{sent} bytes")),
            (
                "sent bits per item now",
                format!("{:.3}", sent as f64 * 8.0 / Filter::len(self).max(1) as f64),
            ),
            (
                "sent bits per item at capacity (theory)",
                format!("{:.3}", self.theoretical_bits_sent_per_item()),
            ),
            (
                "entropy bound",
                format!(
                    "{:.3} bits per item",
                    params::entropy_bound_bits_per_item(self.inner.target_fpp())
                ),
            ),
        ]);
        facts
    }
}

crate::filter::collection_impls!(CompressedBloomFilter);

crate::registry::registered!(
    CompressedBloomFilter,
    {
        name: "compressed",
        summary: "Compressed Bloom filter (Mitzenmacher 2002): m, k for the smallest \
                  arithmetic-coded file; union.",
        grow: false,
        forgets: false,
        index_scheme: true,
    },
    merge
);

impl Mergeable for CompressedBloomFilter {
    /// The classic filters' union ([`BloomFilter`]'s `Mergeable`).
    fn union(&mut self, other: &Self) -> Result<(), Error> {
        self.inner.union(&other.inner)
    }

    /// The classic filters' intersection.
    fn intersect(&mut self, other: &Self) -> Result<(), Error> {
        self.inner.intersect(&other.inner)
    }
}

/// The choices of a compressed filter. With capacity and ε (and no m or k), m and k are
/// [`params::compressed_optimum`]'s under the memory cap; with m or k given, the classic
/// builder's rules apply ([`BloomFilterBuilder`](crate::BloomFilterBuilder)).
///
/// ```
/// use bloomkit::CompressedBloomFilter;
/// // No cap on memory: k = 1, about 1/ε bits per item in memory, 8.04 sent at ε = 1%.
/// let f = CompressedBloomFilter::builder()
///     .capacity(1_000)
///     .fpp(0.01)
///     .max_bits_per_item(1_000.0)
///     .build()?;
/// assert_eq!(f.num_hashes(), 1);
/// // Mitzenmacher's Table 1: m/n = 14, k = 2.
/// let t = CompressedBloomFilter::builder().capacity(1_000).num_bits(14_000).num_hashes(2).build()?;
/// assert!((t.theoretical_bits_sent_per_item() - 7.923).abs() < 1e-3);
/// assert!(CompressedBloomFilter::builder().capacity(10).fpp(0.01).max_bits_per_item(2.0).build().is_err());
/// # Ok::<(), bloomkit::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
#[must_use = "a builder does nothing until .build() is called"]
pub struct CompressedBloomFilterBuilder {
    capacity: Option<u64>,
    fpp: Option<f64>,
    num_bits: Option<u64>,
    num_hashes: Option<u32>,
    max_bits_per_item: Option<f64>,
    hashing: HashingChoice,
}

impl CompressedBloomFilterBuilder {
    crate::sizing::array_setters! {
        num_bits, "bits";
        m "m, the number of bits, instead of the compressed optimum.",
        k "k, the number of hash functions, instead of the compressed optimum.";

        /// The most bits per item the array may take in memory (default
        /// [`params::DEFAULT_MEMORY_FACTOR`] times the classic filter's `1.44·log₂(1/ε)`).
        /// Larger caps send less; it must allow at least the classic filter.
        max_bits_per_item: f64;
    }

    /// Validates the parameters and allocates the filter.
    pub fn build(self) -> Result<CompressedBloomFilter, Error> {
        let chosen = self.hashing.hashing;
        let mut bloom = crate::BloomFilter::builder()
            .hash_function(chosen.function)
            .index_scheme(chosen.scheme)
            .seed(chosen.seed);
        if self.hashing.random_seed {
            bloom = bloom.random_seed();
        }
        if let Some(n) = self.capacity {
            bloom = bloom.capacity(n);
        }
        if let Some(fpp) = self.fpp {
            bloom = bloom.fpp(fpp);
        }
        if self.num_bits.is_some() || self.num_hashes.is_some() {
            if let Some(m) = self.num_bits {
                bloom = bloom.num_bits(m);
            }
            if let Some(k) = self.num_hashes {
                bloom = bloom.num_hashes(k);
            }
            return Ok(CompressedBloomFilter::from_bloom(bloom.build()?));
        }
        crate::sizing::check_capacity(self.capacity)?;
        let n = self.capacity.ok_or(Error::ZeroCapacity)?;
        let fpp = crate::sizing::fpp(self.fpp)?;
        let classic = params::bits_per_item_for(fpp, (-fpp.log2()).round().max(1.0) as u32);
        let cap = self
            .max_bits_per_item
            .unwrap_or(params::DEFAULT_MEMORY_FACTOR * classic);
        let (bits_per_item, k) =
            params::compressed_optimum(fpp, cap).ok_or_else(|| Error::InvalidParameter {
                parameter: "max bits per item",
                reason: format!(
                    "{cap} bits per item cannot reach ε = {fpp}; the classic filter needs \
                     {classic:.2}"
                ),
            })?;
        let m = (bits_per_item * n as f64).ceil();
        if m > MAX_NUM_BITS as f64 {
            // In the capacity's words: m may pass what 64 bits count.
            return Err(Error::CapacityTooLarge {
                capacity: n,
                fpp,
                max: MAX_NUM_BITS,
            });
        }
        let mut filter = bloom.num_bits(m as u64).num_hashes(k).build()?;
        // Sized by the optimum for ε itself: the target is ε, as for the classic sizing.
        filter.target_fpp = fpp;
        Ok(CompressedBloomFilter::from_bloom(filter))
    }
}

// Parameters on disk: the classic filter's parameters (length u32, then as `BloomFilter`
// writes them: num_bits u64, num_hashes u32, capacity u64, target_fpp f64, inserted u64),
// then the coder's probability of a 0 bit (u16, 1..=4095, in units of 2⁻¹²). Payload: the
// m bits, bit i of the classic filter's array in order, arithmetic-coded ([`arith`]).
impl Persist for CompressedBloomFilter {
    fn encode_params(&self, out: &mut Vec<u8>) {
        let mut inner = Vec::new();
        self.inner.encode_params(&mut inner);
        out.extend_from_slice(&(inner.len() as u32).to_le_bytes());
        out.extend_from_slice(&inner);
        out.extend_from_slice(&self.prob_zero().to_le_bytes());
    }

    fn encode_payload(&self, out: &mut Vec<u8>) {
        let bits = &self.inner.bits;
        let p0 = u32::from(self.prob_zero());
        arith::encode(bits.len(), |i| bits.get(i), p0, out);
    }

    fn decode_parts(parts: &Parts<'_>) -> Result<Self, DecodeError> {
        parts.expect_kind(Kind::Compressed)?;
        let mut r = Reader::new(parts.params);
        let inner_len = r.u32()?;
        let inner = r.take_u64(u64::from(inner_len))?;
        let p0 = arith::check_prob_zero(r.u16()?)?;
        r.finish("parameters")?;
        let num_bits = Reader::new(inner).u64()?;
        let most = arith::max_bits_in(parts.payload.len() as u64, p0).min(MAX_NUM_BITS);
        if num_bits == 0 || num_bits > most {
            return Err(invalid(
                "num_bits",
                format!(
                    "{num_bits} bits cannot come from {} compressed bytes (at most {most})",
                    parts.payload.len()
                ),
            ));
        }
        let mut bits = BitVec::zeros(num_bits).map_err(|e| invalid("num_bits", e.to_string()))?;
        arith::decode(parts.payload, num_bits, p0, |i| {
            bits.set(i);
        })?;
        let mut words = Vec::new();
        bits.write_le_bytes(&mut words);
        drop(bits);
        let inner = BloomFilter::decode_parts(&Parts {
            kind: Kind::Bloom,
            hashing: parts.hashing,
            params: inner,
            payload: &words,
        })?;
        // One filter, one file: the stored probability must be the one its bits give, and
        // the code the one the encoder writes for them (an arithmetic code has slack in its
        // last bytes that a decoder would otherwise accept).
        let filter = CompressedBloomFilter { inner };
        let mut canonical = Vec::with_capacity(parts.payload.len());
        filter.encode_payload(&mut canonical);
        if filter.prob_zero() as u32 != p0 || canonical != parts.payload {
            return Err(invalid(
                "compressed bits",
                "not the coding this filter's bits are written with".into(),
            ));
        }
        Ok(filter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_holds_the_same_filter_in_less_than_its_memory() {
        let mut f = CompressedBloomFilter::with_capacity(20_000, 0.01).unwrap();
        for i in 0..20_000u32 {
            f.insert(&i);
        }
        let bytes = f.to_bytes();
        let back = CompressedBloomFilter::from_bytes(&bytes).unwrap();
        assert_eq!(back, f);
        // 8.90 bits per item by the theory, against 18.98 in memory.
        let sent = f.compressed_len() as f64 * 8.0 / 20_000.0;
        let theory = f.theoretical_bits_sent_per_item();
        assert!(
            sent > theory * 0.98 && sent < theory * 1.02,
            "{sent} vs {theory}"
        );
        assert!(f.memory_bytes() as f64 * 8.0 / 20_000.0 > 18.9);
    }

    #[test]
    fn a_classic_filter_goes_through_unchanged() {
        let mut bloom = BloomFilter::with_capacity(1_000, 0.05).unwrap();
        bloom.insert("a");
        let sent = CompressedBloomFilter::from_bloom(bloom.clone()).to_bytes();
        let back = CompressedBloomFilter::from_bytes(&sent)
            .unwrap()
            .into_bloom();
        assert_eq!(back, bloom);
    }

    #[test]
    fn a_stated_size_the_payload_cannot_hold_is_refused_before_allocating() {
        let f = CompressedBloomFilter::with_capacity(100, 0.01).unwrap();
        let mut inner = Vec::new();
        f.inner.encode_params(&mut inner);
        inner[..8].copy_from_slice(&(1u64 << 39).to_le_bytes());
        let mut params = (inner.len() as u32).to_le_bytes().to_vec();
        params.extend_from_slice(&inner);
        params.extend_from_slice(&4095u16.to_le_bytes());
        let payload = [0u8; 16];
        let parts = Parts {
            kind: Kind::Compressed,
            hashing: f.hashing(),
            params: &params,
            payload: &payload,
        };
        let e = CompressedBloomFilter::decode_parts(&parts).unwrap_err();
        assert!(
            e.to_string()
                .contains("cannot come from 16 compressed bytes"),
            "{e}"
        );
    }
}
