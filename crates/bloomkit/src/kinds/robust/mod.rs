//! robustBF, the 2D Bloom filter (Nayak & Patgiri, "robustBF: A High Accuracy and Memory
//! Efficient 2D Bloom Filter", arXiv:2106.04365, 2021; cited by the TU Bergakademie Freiberg lecture "Bloom-Filter").
//!
//! # What it is
//!
//! A matrix of X rows by Y columns of 64-bit words, all 0 at first, X and Y two primes. An
//! item is hashed k times (k = 3 in the paper); each hash value h names one word,
//! `(h mod X, h mod Y)`, and one bit in it, `h mod 61`, which is set. A query answers
//! "maybe" when all k bits are 1. Bits are never cleared, so an inserted item is always
//! found, and there is no remove.
//!
//! # Its rate (theory next to the code)
//!
//! For pairwise coprime X, Y and 61, `h ↦ (h mod X, h mod Y, h mod 61)` is a bijection of
//! `h mod 61XY` (Chinese remainder theorem). This type draws each h uniformly from
//! `[0, 61XY)` through the crate's [`IndexScheme`](crate::IndexScheme), so cell and bit are
//! exactly the paper's and are uniform and independent: robustBF *is* a classic Bloom filter
//! of `M = 61·X·Y` bits with k hashes, and its rate is
//!
//! ```text
//!     FPP = (1 − (1 − 1/M)^(kn))^k        (params::fpp_robust)
//! ```
//!
//! The filter reports that rate at its capacity as its [`target_fpp`](Filter::target_fpp);
//! the ε it was asked for is kept as [`asked_fpp`](RobustBloomFilter::asked_fpp).
//!
//! # How it is sized: to meet ε
//!
//! [`with_capacity(n, ε)`](RobustBloomFilter::with_capacity) keeps the promise every kind
//! keeps: filled with n distinct items, the false-positive rate is at most ε. The formula
//! above, solved for M, gives the usable bits k hashes need, `M_k = 1/(1 − (1 −
//! ε^(1/k))^(1/(kn)))`; k is the integer for which M_k is least (7 at ε = 1%, 10 at
//! 0.1%), and X, Y are primes other than 61 with `61·X·Y ≥ M_k`, checked against the
//! exact formula ([`params::robust_dimensions_for_fpp`]; the derivation is in
//! `kinds/robust/theory.rs`). Memory is the classic filter's plus 4.9% (3 of every 64
//! bits unused) and the rounding to primes: 10.1 bits per item at ε = 1%. Measured
//! (`tests/suite/robust.rs`, n = 10⁵, 10⁶ absent keys): 0.969% at ε = 1% (formula 0.975%)
//! and 0.095% at 0.1% (formula 0.096%), where the paper's sizing measures about 11%.
//!
//! # The paper's sizing, on request
//!
//! [`RobustBloomFilterBuilder::paper_sizing`] builds the paper's construction instead:
//! from the classic size `m = −n ln ε / (ln 2)²`, a matrix of about m/128 words — X and Y
//! the primes three places above and below the first prime past `√(m/128)`
//! ([`params::robust_dimensions`]) — and k = 3. That holds **half the bits** of the classic
//! filter, only 61 of each 64 used, with a k far below the optimum, so its rate is about
//! 10.5% at ε = 1% and 4.4% at ε = 0.1% (n = 10⁷). It is kept so that the paper's claim
//! can be reproduced and measured (`bloomkit experiment robust`); such a filter's
//! [`target_fpp`](Filter::target_fpp) says the rate it really has.
//!
//! # Do the paper's claims hold?
//!
//! The paper claims "nearly zero false positive probability with more than 10× … lower
//! memory consumption than standard Bloom filter". Measured here (`tests/suite/robust.rs`,
//! uniform hashing): the memory of its sizing is ½ of the classic filter's at the same ε
//! (not 10×), and the false-positive rate is the formula above — ten times the classic
//! filter's at ε = 1%. At equal *measured* accuracy a classic filter is smaller: it needs
//! `−ln FPP / (ln 2)²` ≈ 6.5 bits per item for robustBF's 4.4% at ε = 0.1% (n = 10⁷, the
//! paper's run), where robustBF spends 7.2 (`bloomkit experiment robust` shows every ε). The claims do not hold with a uniform hash.
//!
//! The paper's "nearly zero" comes from its hash: its "modified murmur", as the authors'
//! published implementation (github.com/patgiri/robustBF) has it, is MurmurHash2 with
//! the block loop advancing 7 bytes while reading 4, and a tail that handles only 1 to 3
//! remaining bytes. Bytes 4–6 of every 7 are never read, and keys of 4 to 6 bytes hash to
//! a value that depends only on their length. On the paper's keys (the decimal numbers 0
//! to 10⁷ − 1) about 10⁴ distinct values result, so the filter holds a thousandth of the
//! items it was given and is nearly empty for other queries. `tests/suite/robust.rs` reproduces
//! this collapse. This type does not use that hash.
//!
//! # Layout
//!
//! The words are stored row by row (`word = row·Y + col`) in one bit array of 64·X·Y bits;
//! bits 61–63 of every word are always 0 (the decoder refuses a file where one is not).

mod options;
pub mod theory;

use crate::any::Summary;
use crate::bits::BitVec;
use crate::codec::{invalid, Parts};
use crate::error::{DecodeError, Error};
use crate::filter::{Filter, Kind};
use crate::format::view::{infallible, try_all, FilterView, KindView, Shape, ViewFacts};
use crate::hash::{Hashing, HashingChoice, Item};
use crate::params::{self, ROBUST_BITS_PER_WORD, ROBUST_NUM_HASHES};
use crate::sizing;

/// robustBF: a matrix of X × Y 64-bit words, k bits per item.
///
/// ```
/// use bloomkit::{Filter, RobustBloomFilter};
///
/// // 10⁶ items at ε = 1%: 439 × 359 words and k = 7, at most 1% at capacity.
/// let mut filter = RobustBloomFilter::with_capacity(1_000_000, 0.01)?;
/// assert_eq!((filter.rows(), filter.cols(), filter.num_hashes()), (439, 359, 7));
/// filter.insert("dist");
/// assert!(filter.contains("dist"));
/// assert!(filter.target_fpp() <= 0.01);
/// // The paper's sizing: 293 × 263 words and k = 3, half a classic filter, and the rate
/// // those dimensions really give at capacity (about 10.5%), not the 1% asked.
/// let paper = RobustBloomFilter::builder().capacity(1_000_000).fpp(0.01).paper_sizing().build()?;
/// assert_eq!((paper.rows(), paper.cols(), paper.num_hashes()), (293, 263, 3));
/// assert!(paper.target_fpp() > 0.1 && paper.asked_fpp() == 0.01);
/// # Ok::<(), bloomkit::Error>(())
/// ```
#[derive(Clone, PartialEq)]
pub struct RobustBloomFilter {
    bits: BitVec,
    rows: u64,
    cols: u64,
    num_hashes: u32,
    hashing: Hashing,
    capacity: u64,
    asked_fpp: f64,
    inserted: u64,
}

impl RobustBloomFilter {
    /// A robustBF for `capacity` items whose false-positive rate at capacity is at most
    /// `fpp` ([`params::robust_dimensions_for_fpp`]: k and X × Y from the exact rate), with
    /// the default hashing. The paper's own sizing is
    /// [`paper_sizing`](RobustBloomFilterBuilder::paper_sizing).
    ///
    /// ```
    /// use bloomkit::RobustBloomFilter;
    /// assert!(RobustBloomFilter::with_capacity(0, 0.01).is_err());
    /// assert!(RobustBloomFilter::with_capacity(10, 1.5).is_err());
    /// ```
    pub fn with_capacity(capacity: impl crate::params::ItemCount, fpp: f64) -> Result<Self, Error> {
        Self::builder().capacity(capacity).fpp(fpp).build()
    }

    /// A builder: explicit dimensions, k, hashing.
    pub fn builder() -> RobustBloomFilterBuilder {
        RobustBloomFilterBuilder::default()
    }

    /// The word and the bit in it for a position `h ∈ [0, 61XY)`: `(h mod X)·Y + h mod Y`
    /// and `h mod 61`, as a bit index in the array.
    #[inline]
    fn bit_of(&self, h: u64) -> u64 {
        bit_of(h, self.rows, self.cols)
    }

    /// M = 61·X·Y, the range of the hash values.
    fn usable_bits(&self) -> u64 {
        ROBUST_BITS_PER_WORD * self.rows * self.cols
    }

    /// Adds an item; `true` if one of its bits was 0 (the item was certainly new).
    pub fn insert<I: Item + ?Sized>(&mut self, item: &I) -> bool {
        let (hashing, k, range) = (self.hashing, self.num_hashes, self.usable_bits());
        let mut changed = false;
        item.with_bytes(|bytes| {
            for h in hashing.positions(bytes, k, range) {
                let bit = self.bit_of(h);
                changed |= self.bits.set(bit);
            }
        });
        self.inserted += changed as u64;
        changed
    }

    /// `false` if the item is certainly absent, `true` if it may be present.
    pub fn contains<I: Item + ?Sized>(&self, item: &I) -> bool {
        item.with_bytes(|bytes| {
            let hashes = self
                .hashing
                .positions(bytes, self.num_hashes, self.usable_bits());
            infallible(holds(hashes, self.rows, self.cols, |p| {
                Ok(self.bits.get(p))
            }))
        })
    }

    /// X, the number of rows (a prime in the paper's sizing).
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Y, the number of columns (a prime in the paper's sizing).
    pub fn cols(&self) -> u64 {
        self.cols
    }

    /// k, the hash values per item (3 in the paper's sizing).
    pub fn num_hashes(&self) -> u32 {
        self.num_hashes
    }

    /// The ε the filter was sized from (default 1%). Its rate at capacity is
    /// [`target_fpp`](Filter::target_fpp): at most ε when the builder sized it for ε, more
    /// under [`paper_sizing`](RobustBloomFilterBuilder::paper_sizing).
    pub fn asked_fpp(&self) -> f64 {
        self.asked_fpp
    }

    /// The number of bits that are 1.
    pub fn count_ones(&self) -> u64 {
        self.bits.count_ones()
    }

    fn layout(&self) -> String {
        format!(
            "X = {}, Y = {}, k = {}, {}",
            self.rows, self.cols, self.num_hashes, self.hashing
        )
    }

    fn recount(&mut self) {
        self.inserted = params::count_from_estimate(Filter::estimated_len(self));
    }
}

/// The bit of hash value h in the array: word `(h mod X, h mod Y)` (row by row), bit
/// `h mod 61` in it.
#[inline]
fn bit_of(h: u64, rows: u64, cols: u64) -> u64 {
    let word = (h % rows) * cols + h % cols;
    word * 64 + h % ROBUST_BITS_PER_WORD
}

/// The query: the bits of all k hash values are 1. Over a way to read bit p, so that the
/// loaded filter (its array) and a view (the file's chunks) answer by this one function.
#[inline(always)]
fn holds<E>(
    hashes: impl Iterator<Item = u64>,
    rows: u64,
    cols: u64,
    mut bit: impl FnMut(u64) -> Result<bool, E>,
) -> Result<bool, E> {
    try_all(hashes, |h| bit(bit_of(h, rows, cols)))
}

/// [`Filter::properties`] of a filter with these stored parameters (a view's summary
/// gives the same).
fn properties(stored: &Stored) -> Vec<(&'static str, String)> {
    let (x, y, k) = (stored.rows, stored.cols, stored.num_hashes);
    vec![
        ("rows (X)", x.to_string()),
        ("columns (Y)", y.to_string()),
        (
            "usable bits (61·X·Y)",
            (ROBUST_BITS_PER_WORD * x * y).to_string(),
        ),
        ("hash functions (k)", k.to_string()),
        ("asked fpp", format!("{}", stored.asked_fpp)),
        (
            "target fpp",
            format!("{}", params::fpp_robust(x, y, k, stored.capacity)),
        ),
    ]
}

/// Fails if word `index` of the array sets one of its unused bits 61 to 63: what loading
/// refuses in every word.
fn check_word(index: u64, word: u64) -> Result<(), DecodeError> {
    if word >> ROBUST_BITS_PER_WORD != 0 {
        return Err(invalid(
            "payload",
            format!("word {index} has one of its unused bits 61 to 63 set"),
        ));
    }
    Ok(())
}

impl Filter for RobustBloomFilter {
    crate::filter::filter_basics!(
        Robust: hashing, insert, contains, capacity,
        state(bits, inserted),
        fill(count_ones, usable_bits, num_hashes)
    );

    fn properties(&self) -> Vec<(&'static str, String)> {
        properties(&Stored::of(self))
    }

    fn target_fpp(&self) -> f64 {
        self.fpp_at(self.capacity)
    }

    fn fpp_at(&self, n: u64) -> f64 {
        params::fpp_robust(self.rows, self.cols, self.num_hashes, n)
    }
}

crate::registry::registered!(
    RobustBloomFilter,
    {
        name: "robust",
        summary: "robustBF (Nayak & Patgiri 2021): a 2D matrix of 64-bit words, sized to meet \
                  ε (the paper's half-size sizing on request); union.",
        grow: false,
        forgets: false,
        index_scheme: true,
    },
    merge
);

crate::filter::bit_array_mergeable!(
    /// Bitwise OR of the matrices: the filter that inserting both sets builds.
    ///
    /// ```
    /// use bloomkit::{Mergeable, RobustBloomFilter};
    /// let mut a = RobustBloomFilter::with_capacity(100, 0.01)?;
    /// let mut b = a.clone();
    /// a.insert("left");
    /// b.insert("right");
    /// a.union(&b)?;
    /// assert!(a.contains("left") && a.contains("right"));
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    RobustBloomFilter
);

crate::filter::collection_impls!(
    /// Collects items into a robustBF sized for their number at ε = 1%.
    ///
    /// ```
    /// use bloomkit::RobustBloomFilter;
    /// let filter: RobustBloomFilter = ["a", "b"].into_iter().collect();
    /// assert!(filter.contains("a"));
    /// ```
    RobustBloomFilter
);

/// Builds a [`RobustBloomFilter`]: dimensions that meet ε for a capacity, the paper's
/// dimensions ([`paper_sizing`](Self::paper_sizing)), or explicit ones.
///
/// ```
/// use bloomkit::{Filter, RobustBloomFilter};
/// let f = RobustBloomFilter::builder().dimensions(101, 103).capacity(5_000).build()?;
/// assert_eq!(f.memory_bytes(), 101 * 103 * 8);
/// // Dimensions sharing a factor (or with 61) would tie an item's row, column and bit.
/// assert!(RobustBloomFilter::builder().dimensions(6, 9).build().is_err());
/// # Ok::<(), bloomkit::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
#[must_use = "a builder does nothing until .build() is called"]
pub struct RobustBloomFilterBuilder {
    capacity: Option<u64>,
    fpp: Option<f64>,
    dimensions: Option<(u64, u64)>,
    num_hashes: Option<u32>,
    paper_sizing: bool,
    hashing: HashingChoice,
}

impl RobustBloomFilterBuilder {
    crate::hash::hashing_setters!(index_scheme);

    crate::sizing::capacity_and_fpp_setters!();

    /// X × Y words instead of sizing them from capacity and ε. They must be pairwise
    /// coprime with each other and with 61 (primes other than 61 are the paper's choice).
    /// Without a capacity, the filter is sized for the n at which M = 61XY bits and k are
    /// optimal, `⌊M ln 2 / k⌋`.
    pub fn dimensions(mut self, rows: u64, cols: u64) -> Self {
        self.dimensions = Some((rows, cols));
        self
    }

    /// k, the hash values per item. Default: the k that needs the fewest bits for ε; 3
    /// (the paper's) under [`paper_sizing`](Self::paper_sizing) or with explicit
    /// [`dimensions`](Self::dimensions). Sized for ε, the matrix is made large enough for
    /// this k to meet ε.
    pub fn num_hashes(mut self, num_hashes: u32) -> Self {
        self.num_hashes = Some(num_hashes);
        self
    }

    /// The paper's sizing instead of one that meets ε: about m/128 words for the classic
    /// m of capacity and ε ([`params::robust_dimensions`]) and k = 3 — half a classic
    /// filter's bits, at about ten times ε (module docs). For reproducing the paper's
    /// measurements; the filter's [`target_fpp`](Filter::target_fpp) is the rate it really
    /// has.
    ///
    /// ```
    /// use bloomkit::{Filter, RobustBloomFilter};
    /// let paper = RobustBloomFilter::builder().capacity(100_000).fpp(0.01).paper_sizing().build()?;
    /// assert_eq!((paper.rows(), paper.cols(), paper.num_hashes()), (103, 73, 3));
    /// assert!(paper.target_fpp() > 0.1);
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn paper_sizing(mut self) -> Self {
        self.paper_sizing = true;
        self
    }

    /// Validates the parameters and allocates the matrix.
    pub fn build(self) -> Result<RobustBloomFilter, Error> {
        let fpp = sizing::fpp(self.fpp)?;
        sizing::check_capacity(self.capacity)?;
        sizing::check_num_hashes(self.num_hashes)?;
        let paper_k = self.num_hashes.unwrap_or(ROBUST_NUM_HASHES);
        let (rows, cols, num_hashes) = match (self.dimensions, self.capacity) {
            (Some((rows, cols)), _) => (rows, cols, paper_k),
            (None, Some(n)) if self.paper_sizing => {
                let (rows, cols) = params::robust_dimensions(n, fpp)?;
                (rows, cols, paper_k)
            }
            (None, Some(n)) => params::robust_dimensions_for_fpp(n, fpp, self.num_hashes)?,
            (None, None) => return Err(Error::ZeroCapacity),
        };
        if !params::robust_dimensions_valid(rows, cols) {
            return Err(Error::InvalidParameter {
                parameter: "dimensions",
                reason: format!(
                    "{rows} × {cols}: X and Y must be at least 1 and pairwise coprime with \
                     each other and with 61 (two primes other than 61 are)"
                ),
            });
        }
        let words = params::check_robust_size(rows, cols)?;
        let capacity = sizing::capacity(self.capacity, ROBUST_BITS_PER_WORD * words, num_hashes);
        Ok(RobustBloomFilter {
            bits: BitVec::zeros(words * 64)?,
            rows,
            cols,
            num_hashes,
            hashing: self.hashing.resolve()?,
            capacity,
            asked_fpp: fpp,
            inserted: 0,
        })
    }
}

crate::codec::stored! {
    /// The robust filter's parameters on disk (44 bytes): the X × Y matrix and the ε asked
    /// for. Payload: the X·Y words row by row, little-endian (bits 61 to 63 of each zero).
    struct Stored of f: RobustBloomFilter {
        rows: u64 = f.rows,
        cols: u64 = f.cols,
        num_hashes: u32 = f.num_hashes => check_num_hashes,
        capacity: u64 = f.capacity => check_capacity,
        asked_fpp: f64 = f.asked_fpp,
        inserted: u64 = f.inserted,
    }
    persist Robust, payload bits;
}

impl RobustBloomFilter {
    fn decode(parts: &Parts<'_>) -> Result<Self, DecodeError> {
        let Shape { stored, hashing } = ViewShape::read(parts)?;
        let Stored {
            rows,
            cols,
            num_hashes,
            capacity,
            asked_fpp,
            inserted,
        } = stored;
        let bits = BitVec::from_le_bytes(rows * cols * 64, parts.payload)?;
        for (index, &word) in bits.words().iter().enumerate() {
            check_word(index as u64, word)?;
        }
        Ok(RobustBloomFilter {
            bits,
            rows,
            cols,
            num_hashes,
            hashing,
            capacity,
            asked_fpp,
            inserted,
        })
    }
}

/// A robustBF filter as loading and a read-only view ([`format::view`](crate::format::view))
/// read it: the stored parameters, checked, and the query over the bits the view fetches
/// from the file. Loading refuses a word with one of its unused bits 61 to 63 set; the view
/// checks every word of a chunk when it first touches it ([`KindView::check_piece`]).
type ViewShape = Shape<Stored>;

impl KindView for ViewShape {
    fn read(parts: &Parts<'_>) -> Result<Self, DecodeError> {
        parts.expect_kind(Kind::Robust)?;
        let stored = Stored::read(parts.params)?;
        let Stored {
            rows,
            cols,
            asked_fpp,
            ..
        } = stored;
        if !params::robust_dimensions_valid(rows, cols) {
            return Err(invalid(
                "dimensions",
                format!("{rows} × {cols} are not pairwise coprime with each other and 61"),
            ));
        }
        let words = params::check_robust_size(rows, cols)
            .map_err(|e| invalid("dimensions", e.to_string()))?;
        crate::codec::check_probability("asked_fpp", asked_fpp)?;
        // The payload's length against 64·X·Y, before anything is allocated.
        BitVec::check_encoded_len(words * 64, parts.payload.len())?;
        Ok(Shape::of(stored, parts))
    }

    fn facts(&self) -> ViewFacts {
        let s = &self.stored;
        ViewFacts {
            inserted: s.inserted,
            capacity: s.capacity,
            target_fpp: params::fpp_robust(s.rows, s.cols, s.num_hashes, s.capacity),
            num_bits: s.rows * s.cols * 64,
            num_hashes: s.num_hashes,
        }
    }

    fn contains(&self, bytes: &[u8], view: &FilterView) -> Result<bool, Error> {
        let s = &self.stored;
        let usable = ROBUST_BITS_PER_WORD * s.rows * s.cols;
        let hashes = self.hashing.positions(bytes, s.num_hashes, usable);
        holds(hashes, s.rows, s.cols, |p| view.bit(p))
    }

    /// The bits set, counted over the payload (the unused ones are 0, checked); the rest
    /// as the loaded filter works it out.
    fn summary(&self, view: &FilterView) -> Result<Summary, Error> {
        let s = &self.stored;
        let ones = view.count_ones()?;
        let usable = ROBUST_BITS_PER_WORD * s.rows * s.cols;
        Ok(view.summary_of(
            None,
            properties(s),
            params::estimate_items(ones, usable, s.num_hashes),
            params::fpp_from_fill(ones, usable, s.num_hashes),
        ))
    }

    /// The unused bits 61 to 63 of every word are 0, as loading requires.
    fn check_piece(&self, offset: usize, bytes: &[u8]) -> Result<(), DecodeError> {
        for (i, word) in bytes.chunks_exact(8).enumerate() {
            let word = u64::from_le_bytes(word.try_into().expect("8 bytes"));
            check_word((offset / 8 + i) as u64, word)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::Persist;

    #[test]
    fn cell_and_bit_are_the_papers_remainders() {
        let f = RobustBloomFilter::builder()
            .dimensions(7, 5)
            .build()
            .unwrap();
        for h in 0..f.usable_bits() {
            let bit = f.bit_of(h);
            assert_eq!(bit / 64, (h % 7) * 5 + h % 5);
            assert_eq!(bit % 64, h % 61);
        }
        // The mapping is a bijection of [0, 61XY) onto the usable bits (CRT).
        let mut seen: Vec<u64> = (0..f.usable_bits()).map(|h| f.bit_of(h)).collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len() as u64, f.usable_bits());
    }

    #[test]
    fn bad_parameters_are_errors() {
        let b = RobustBloomFilter::builder;
        assert_eq!(b().build().unwrap_err(), Error::ZeroCapacity);
        assert!(matches!(
            b().dimensions(61, 7).build(),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(matches!(
            b().dimensions(0, 7).build(),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(matches!(
            b().dimensions(1 << 20, (1 << 20) + 1).build(),
            Err(Error::TooLarge { .. })
        ));
        assert!(matches!(
            b().capacity(10).num_hashes(0).build(),
            Err(Error::ZeroHashes)
        ));
        assert!(matches!(
            b().capacity(10).fpp(f64::NAN).build(),
            Err(Error::InvalidFpp(_))
        ));
    }

    #[test]
    fn unused_bits_in_a_file_are_refused() {
        let f = RobustBloomFilter::builder()
            .dimensions(3, 2)
            .build()
            .unwrap();
        let mut bytes = f.to_bytes();
        // The last word's byte 7 holds bits 56..63; set bit 62.
        let at = bytes.len() - 8 - 1;
        bytes[at] |= 0x40;
        let n = bytes.len();
        let sum = xxhash_rust::xxh3::xxh3_64(&bytes[..n - 8]);
        bytes[n - 8..].copy_from_slice(&sum.to_le_bytes());
        assert!(matches!(
            RobustBloomFilter::from_bytes(&bytes),
            Err(Error::Decode(DecodeError::InvalidField {
                field: "payload",
                ..
            }))
        ));
    }
}
