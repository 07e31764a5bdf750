//! The partitioned Bloom filter (Chang, Feng & Li, INFOCOM 2004; the layer of Almeida et
//! al.'s scalable filter, IPL 2007).
//!
//! The m bits are split into k slices of s = m/k bits, and hash function i sets its bit in
//! slice i. An item's k bits therefore never collide with each other, every slice fills at
//! the same rate, and a slice's fill says directly how many items it holds. The price is a
//! slightly higher rate than the classic filter's for the same m and k (see
//! [`theory`](self::theory)); `with_capacity` sizes the slices so that the exact rate meets ε.
//! Like the classic filter it cannot remove; two filters with the same layout merge by OR.
//!
//! This kind is its folder, one line in the registry and one line in the kinds' module
//! list: the CLI, the studies, the Python package and the conformance suite find it there.

mod options;
pub mod theory;

use crate::any::Summary;
use crate::bits::BitVec;
use crate::codec::{invalid, Parts};
use crate::error::{DecodeError, Error};
use crate::filter::{Filter, Kind};
use crate::format::view::{view_facts, FilterView, KindView, Shape, ViewFacts};
use crate::hash::{Hashing, HashingChoice, Item};
use crate::params::MAX_NUM_BITS;

/// The partitioned Bloom filter: k slices, one bit of each item per slice.
///
/// ```
/// use bloomkit::{Filter, PartitionedBloomFilter};
/// let mut filter = PartitionedBloomFilter::with_capacity(1_000, 0.01)?;
/// filter.insert("dist");
/// assert!(filter.contains("dist"));
/// assert_eq!(filter.num_bits(), filter.slice_bits() * filter.num_hashes() as u64);
/// # Ok::<(), bloomkit::Error>(())
/// ```
#[derive(Clone, PartialEq)]
pub struct PartitionedBloomFilter {
    bits: BitVec,
    slice_bits: u64,
    num_hashes: u32,
    hashing: Hashing,
    capacity: u64,
    target_fpp: f64,
    inserted: u64,
}

impl PartitionedBloomFilter {
    /// A filter for `capacity` items at false-positive probability `fpp`, sized by
    /// [`partitioned_dimensions`](crate::params::partitioned_dimensions), default hashing.
    pub fn with_capacity(capacity: impl crate::params::ItemCount, fpp: f64) -> Result<Self, Error> {
        Self::builder().capacity(capacity).fpp(fpp).build()
    }

    /// A builder for explicit sizes and hashing.
    pub fn builder() -> PartitionedBloomFilterBuilder {
        PartitionedBloomFilterBuilder::default()
    }

    /// The item's bit in each slice: position i of the k from one digest, offset into slice
    /// i.
    fn positions<'a>(&self, bytes: &'a [u8]) -> impl Iterator<Item = u64> + 'a + use<'a> {
        positions(self.hashing, self.slice_bits, self.num_hashes, bytes)
    }

    /// Adds an item; `true` if one of its bits was 0 (it was certainly new).
    pub fn insert<I: Item + ?Sized>(&mut self, item: &I) -> bool {
        let changed = item.with_bytes(|bytes| {
            self.positions(bytes)
                .fold(false, |changed, p| self.bits.set(p) | changed)
        });
        self.inserted += changed as u64;
        changed
    }

    /// `false` if the item is certainly absent, `true` if it may be present.
    pub fn contains<I: Item + ?Sized>(&self, item: &I) -> bool {
        item.with_bytes(|bytes| self.positions(bytes).all(|p| self.bits.get(p)))
    }

    /// m, the bits of all slices.
    pub fn num_bits(&self) -> u64 {
        self.bits.len()
    }

    crate::sizing::getters! {
        /// s, the bits of one slice.
        slice_bits: u64;

        /// k, the number of slices and of hash functions.
        num_hashes: u32;

        /// n, the number of items the filter was sized for.
        capacity: u64;

        /// ε, the false-positive probability the filter was sized for.
        target_fpp: f64;
    }

    /// The number of bits set.
    pub fn count_ones(&self) -> u64 {
        self.bits.count_ones()
    }

    fn layout(&self) -> String {
        format!(
            "s = {}, k = {}, {}",
            self.slice_bits, self.num_hashes, self.hashing
        )
    }

    fn recount(&mut self) {
        let estimate = Filter::estimated_len(self);
        self.inserted = crate::params::count_from_estimate(estimate);
    }
}

impl Filter for PartitionedBloomFilter {
    crate::filter::filter_basics!(
        Partitioned: hashing, insert, contains, capacity, target_fpp,
        state(bits, inserted)
    );

    fn estimated_len(&self) -> f64 {
        theory::partitioned_estimate_items(self.count_ones(), self.slice_bits, self.num_hashes)
    }
    fn properties(&self) -> Vec<(&'static str, String)> {
        properties(&Stored::of(self))
    }
    /// Every slice holds the same items, so the rate is the mean fill to the k-th power.
    fn expected_fpp(&self) -> f64 {
        expected_fpp(self.count_ones(), self.slice_bits, self.num_hashes)
    }
    fn fpp_at(&self, n: u64) -> f64 {
        theory::partitioned_fpp(self.slice_bits, self.num_hashes, n)
    }
}

crate::registry::registered!(
    PartitionedBloomFilter,
    {
        name: "partitioned",
        summary: "Partitioned Bloom filter (Chang et al. 2004): one bit per slice; union.",
        grow: false,
        forgets: false,
        index_scheme: true,
    },
    merge
);

crate::filter::bit_array_mergeable!(
    /// Bitwise OR of filters with the same slices and hashing.
    PartitionedBloomFilter
);

crate::filter::collection_impls!(
    /// Collects items into a filter sized for their number at ε = 1%.
    PartitionedBloomFilter
);

/// Builds a [`PartitionedBloomFilter`] from a capacity and ε, or explicit m and k.
#[derive(Clone, Debug, Default)]
#[must_use = "a builder does nothing until .build() is called"]
pub struct PartitionedBloomFilterBuilder {
    capacity: Option<u64>,
    fpp: Option<f64>,
    num_bits: Option<u64>,
    num_hashes: Option<u32>,
    hashing: HashingChoice,
}

impl PartitionedBloomFilterBuilder {
    crate::sizing::array_setters! {
        num_bits, "bits (rounded up to k equal slices)";
        m "m, the bits of all slices (rounded up to a multiple of k), instead of deriving it.",
        k "k, the number of slices and hash functions, instead of the optimal one.";
    }

    /// Validates the parameters and allocates the filter. From capacity and ε alone the
    /// slices are sized by [`partitioned_dimensions`](crate::params::partitioned_dimensions);
    /// with m or k given, as the classic filter's builder sizes m and k, then m is split
    /// into k slices.
    pub fn build(self) -> Result<PartitionedBloomFilter, Error> {
        let hashing = self.hashing.resolve()?;
        let (slice_bits, num_hashes, capacity, target_fpp) =
            if self.num_bits.is_none() && self.num_hashes.is_none() {
                let capacity = self.capacity.ok_or(Error::ZeroCapacity)?;
                let fpp = self.fpp.unwrap_or(crate::params::DEFAULT_FPP);
                let (s, k) = theory::partitioned_dimensions(capacity, fpp)?;
                (s, k, capacity, fpp)
            } else {
                let d = crate::sizing::dimensions(
                    self.capacity,
                    self.fpp,
                    self.num_bits,
                    self.num_hashes,
                    1,
                )?;
                let s = d.num_cells.div_ceil(d.num_hashes as u64);
                let rate = theory::partitioned_fpp(s, d.num_hashes, d.capacity);
                (s, d.num_hashes, d.capacity, rate)
            };
        let num_bits = slice_bits
            .checked_mul(num_hashes as u64)
            .filter(|&m| m <= MAX_NUM_BITS)
            .ok_or(Error::TooLarge {
                bits: slice_bits.saturating_mul(num_hashes as u64),
                max: MAX_NUM_BITS,
            })?;
        Ok(PartitionedBloomFilter {
            bits: BitVec::zeros(num_bits)?,
            slice_bits,
            num_hashes,
            hashing,
            capacity,
            target_fpp,
            inserted: 0,
        })
    }
}

crate::codec::stored! {
    /// The partitioned filter's parameters on disk (36 bytes). Payload: the k slices' bits in
    /// order, 64-bit little-endian words.
    struct Stored of f: PartitionedBloomFilter {
        slice_bits: u64 = f.slice_bits,
        num_hashes: u32 = f.num_hashes => check_num_hashes,
        capacity: u64 = f.capacity => check_capacity,
        target_fpp: f64 = f.target_fpp => check_target_fpp,
        inserted: u64 = f.inserted,
    }
    persist Partitioned, payload bits;
}

impl PartitionedBloomFilter {
    fn decode(parts: &Parts<'_>) -> Result<Self, DecodeError> {
        let ViewShape { stored: p, hashing } = ViewShape::read(parts)?;
        Ok(PartitionedBloomFilter {
            // from_le_bytes checks the payload's length against m before it allocates.
            bits: BitVec::from_le_bytes(p.num_bits(), parts.payload)?,
            slice_bits: p.slice_bits,
            num_hashes: p.num_hashes,
            hashing,
            capacity: p.capacity,
            target_fpp: p.target_fpp,
            inserted: p.inserted,
        })
    }
}

/// The positions of an item's bytes: position i of k in slice i of s bits.
fn positions(
    hashing: Hashing,
    slice_bits: u64,
    num_hashes: u32,
    bytes: &[u8],
) -> impl Iterator<Item = u64> + '_ {
    hashing
        .positions(bytes, num_hashes, slice_bits)
        .zip(0u64..)
        .map(move |(p, slice)| slice * slice_bits + p)
}

/// [`Filter::properties`] of a filter with these stored parameters.
fn properties(stored: &Stored) -> Vec<(&'static str, String)> {
    vec![
        ("slices (k)", stored.num_hashes.to_string()),
        ("bits per slice (s)", stored.slice_bits.to_string()),
        ("target fpp", format!("{}", stored.target_fpp)),
    ]
}

/// The mean fill of k slices of s bits with `ones` set, to the k-th power.
fn expected_fpp(ones: u64, slice_bits: u64, num_hashes: u32) -> f64 {
    let num_bits = slice_bits * num_hashes as u64;
    (ones as f64 / num_bits as f64).powi(num_hashes as i32)
}

impl Stored {
    /// m = k·s, checked when the parameters were read ([`ViewShape::read`]).
    fn num_bits(&self) -> u64 {
        self.slice_bits * self.num_hashes as u64
    }
}

/// A partitioned filter as loading and a read-only view
/// ([`format::view`](crate::format::view)) read it: the stored parameters, checked, and the
/// query over the bits the view fetches from the file.
type ViewShape = Shape<Stored>;

impl KindView for ViewShape {
    fn read(parts: &Parts<'_>) -> Result<Self, DecodeError> {
        parts.expect_kind(Kind::Partitioned)?;
        let stored = Stored::read(parts.params)?;
        let num_bits = stored
            .slice_bits
            .checked_mul(stored.num_hashes as u64)
            .filter(|&m| (1..=MAX_NUM_BITS).contains(&m))
            .ok_or_else(|| {
                invalid(
                    "slice_bits",
                    format!(
                        "{} slices of {} bits are not in 1..={MAX_NUM_BITS} bits",
                        stored.num_hashes, stored.slice_bits
                    ),
                )
            })?;
        BitVec::check_encoded_len(num_bits, parts.payload.len())?;
        Ok(Shape::of(stored, parts))
    }

    fn facts(&self) -> ViewFacts {
        view_facts!(self.stored, self.stored.num_bits(), self.stored.num_hashes)
    }

    /// Whether the item's bit in every slice is 1; stops at the first 0.
    fn contains(&self, bytes: &[u8], view: &FilterView) -> Result<bool, Error> {
        let Stored {
            slice_bits,
            num_hashes,
            ..
        } = self.stored;
        view.all_bits(positions(self.hashing, slice_bits, num_hashes, bytes))
    }

    /// The bits set, counted over the payload; the rest as the loaded filter works it out.
    fn summary(&self, view: &FilterView) -> Result<Summary, Error> {
        let Stored {
            slice_bits,
            num_hashes,
            ..
        } = self.stored;
        let ones = view.count_ones()?;
        Ok(view.summary_of(
            None,
            properties(&self.stored),
            theory::partitioned_estimate_items(ones, slice_bits, num_hashes),
            expected_fpp(ones, slice_bits, num_hashes),
        ))
    }

    /// Loading refuses a set bit past m in the last word; so does the view.
    fn check_opened(&self, view: &FilterView) -> Result<(), Error> {
        view.check_last_word(self.stored.num_bits())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_slice_gets_exactly_one_bit_of_an_item() {
        let mut filter = PartitionedBloomFilter::with_capacity(1_000, 0.01).unwrap();
        filter.insert("dist");
        let s = filter.slice_bits();
        for slice in 0..filter.num_hashes() as u64 {
            let ones = (slice * s..(slice + 1) * s)
                .filter(|&p| filter.bits.get(p))
                .count();
            assert_eq!(ones, 1, "slice {slice}");
        }
    }
}
