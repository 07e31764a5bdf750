//! A filter of any kind, for code that learns the kind at run time (such as the CLI
//! reading a file). The enum itself, [`AnyFilter`], is generated from the kind list in
//! [`registry`](crate::registry); this file forwards the traits to whichever kind it holds.

pub use crate::registry::AnyFilter;

use crate::codec::{Parts, Persist};
use crate::error::{DecodeError, Error};
use crate::filter::{Filter, Kind};
use crate::hash::{Hashing, Item};
use crate::registry::text::{at, human_bytes};
use crate::registry::ParametersBlock;

impl Filter for AnyFilter {
    fn kind(&self) -> Kind {
        self.erased().kind()
    }
    fn hashing(&self) -> Hashing {
        self.erased().filter_hashing()
    }
    fn try_insert<I: Item + ?Sized>(&mut self, item: &I) -> Result<bool, Error> {
        item.with_bytes(|bytes| self.erased_mut().insert_bytes(bytes))
    }
    fn contains<I: Item + ?Sized>(&self, item: &I) -> bool {
        item.with_bytes(|bytes| self.erased().contains_bytes(bytes))
    }
    fn clear(&mut self) {
        self.erased_mut().clear_all()
    }
    fn len(&self) -> u64 {
        self.erased().len()
    }
    fn estimated_len(&self) -> f64 {
        self.erased().estimated_count()
    }
    fn memory_bytes(&self) -> usize {
        self.erased().memory_bytes()
    }
    fn capacity(&self) -> u64 {
        self.erased().sized_for()
    }
    fn grows(&self) -> bool {
        self.erased().grows_now()
    }
    fn properties(&self) -> Vec<(&'static str, String)> {
        self.erased().facts()
    }
    fn expected_fpp(&self) -> f64 {
        self.erased().expected_fpp()
    }
    fn target_fpp(&self) -> f64 {
        self.erased().fpp_target()
    }
    fn fpp_at(&self, n: u64) -> f64 {
        self.erased().fpp_after(n)
    }
}

impl Persist for AnyFilter {
    fn encode_params(&self, out: &mut Vec<u8>) {
        self.erased().params_into(out)
    }
    fn encode_payload(&self, out: &mut Vec<u8>) {
        self.erased().payload_into(out)
    }
    fn decode_parts(parts: &Parts<'_>) -> Result<Self, DecodeError> {
        AnyFilter::decode_kind(parts)
    }
}

impl AnyFilter {
    /// Unions `other` into `self` when both are of the same mergeable kind.
    pub fn union(&mut self, other: &AnyFilter) -> Result<(), Error> {
        let (ours, theirs) = (self.kind(), other.kind());
        self.union_same_kind(other).unwrap_or_else(|| {
            Err(Error::Incompatible(format!(
                "a {ours} filter cannot be merged with a {theirs} filter"
            )))
        })
    }

    /// Removes an item when the kind can remove (see [`Removable`](crate::Removable));
    /// [`Error::Unsupported`] for the kinds that cannot.
    pub fn remove<I: Item + ?Sized>(&mut self, item: &I) -> Result<bool, Error> {
        item.with_bytes(|bytes| self.erased_mut().remove_bytes(bytes))
    }

    /// How often `item` was inserted, as the kind estimates it, for the kinds that count
    /// ([`Kind::counts`]); [`Error::Unsupported`] for the others.
    ///
    /// ```
    /// use bloomkit::registry::BuildSpec;
    /// use bloomkit::{AnyFilter, Filter, Kind};
    /// let mut counter = AnyFilter::build(Kind::Spectral, &BuildSpec::new(100, 0.01))?;
    /// for word in ["to", "be", "or", "not", "to", "be"] {
    ///     counter.try_insert(word)?;
    /// }
    /// assert_eq!(counter.count("to")?, 2);
    /// assert_eq!(counter.count("hamlet")?, 0);
    /// let set = AnyFilter::with_capacity(Kind::Bloom, 100, 0.01)?;
    /// assert!(set.count("to").is_err());
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn count<I: Item + ?Sized>(&self, item: &I) -> Result<u64, Error> {
        item.with_bytes(|bytes| self.erased().count_bytes(bytes))
            .ok_or(Error::Unsupported {
                kind: self.kind(),
                operation: "count",
            })
    }

    /// The answers of [`contains`](Filter::contains) for `items`, in order. The kinds with a
    /// batch query (which fetches the memory of many items at once) answer through it
    /// ([`contains_batch_into`](Self::contains_batch_into)).
    pub fn contains_batch<I: Item>(&self, items: &[I]) -> Vec<bool> {
        let mut out = Vec::with_capacity(items.len());
        self.contains_batch_into(items, &mut out);
        out
    }

    /// Inserts `items` on every core for the kinds that can ([`Kind::inserts_in_parallel`]),
    /// with exactly the result of inserting them in order; the other kinds take them
    /// through [`insert_batch`](Self::insert_batch), one batch.
    #[cfg(feature = "rayon")]
    #[cfg_attr(docsrs, doc(cfg(feature = "rayon")))]
    pub fn insert_parallel(&mut self, items: &[&[u8]]) -> Result<(), Error> {
        if self.kind().inserts_in_parallel() {
            self.erased_mut().insert_parallel_bytes(items)
        } else {
            self.insert_batch(items).map(drop)
        }
    }

    /// The filter's parameters in one line: "NAME filter: " and the kind's own parameters,
    /// then the hashing and the memory.
    ///
    /// ```
    /// use bloomkit::{AnyFilter, Kind};
    /// let filter = AnyFilter::with_capacity(Kind::Bloom, 1_000, 0.01)?;
    /// assert_eq!(
    ///     filter.describe(),
    ///     "bloom filter: m = 9586 bits, k = 7, capacity 1000 at ε = 0.010000, \
    ///      murmur3-x64-128, enhanced-double, seed 0, 1.2 KiB in memory"
    /// );
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn describe(&self) -> String {
        let kind = self.kind();
        let hashing = self.hashing();
        let scheme = if kind.uses_index_scheme() {
            format!("{}, ", hashing.scheme.name())
        } else {
            String::new()
        };
        let own = self.erased().describe_kind();
        let own = if own.is_empty() {
            at(self.capacity(), self.target_fpp())
        } else {
            own
        };
        format!(
            "{kind} filter: {own}, {}, {scheme}seed {}, {} in memory",
            hashing.function.name(),
            hashing.seed_text(),
            human_bytes(self.memory_bytes() as u64)
        )
    }

    /// The `PARAMETERS` block (n, ε, k, m) that the textbook program prints for the kinds sized like the classic
    /// filter; `None` for the others.
    pub fn parameters_block(&self) -> Option<ParametersBlock> {
        self.erased().parameters_block()
    }
}

/// What `bloomkit info` reports about a filter: its parameters and the facts of its
/// content, from a loaded filter ([`AnyFilter::summary`]) or from a file opened as a view
/// ([`FilterView::summary`](crate::codec::view::FilterView::summary)), which reads the file
/// piece by piece instead of holding it. Both give the same summary of the same filter.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// The kind.
    pub kind: Kind,
    /// The hashing it was built with.
    pub hashing: Hashing,
    /// n, the items it was sized for.
    pub capacity: u64,
    /// [`Filter::len`]: items inserted (less those removed, for the kinds that remove).
    pub len: u64,
    /// [`Filter::memory_bytes`].
    pub memory_bytes: u64,
    /// [`Filter::bits_per_item`].
    pub bits_per_item: f64,
    /// [`AnyFilter::parameters_block`].
    pub parameters_block: Option<ParametersBlock>,
    /// [`Filter::properties`].
    pub properties: Vec<(&'static str, String)>,
    /// [`Filter::estimated_len`].
    pub estimated_len: f64,
    /// [`Filter::expected_fpp`].
    pub expected_fpp: f64,
}

impl AnyFilter {
    /// The filter's [`Summary`].
    ///
    /// ```
    /// use bloomkit::{AnyFilter, Filter, Kind};
    /// let mut f = AnyFilter::with_capacity(Kind::Blocked, 1000, 0.01)?;
    /// f.try_insert("a")?;
    /// let s = f.summary();
    /// assert_eq!((s.kind, s.len, s.capacity), (Kind::Blocked, 1, 1000));
    /// assert!(s.properties.iter().any(|(label, _)| *label == "fullest block"));
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn summary(&self) -> Summary {
        Summary {
            kind: self.kind(),
            hashing: self.hashing(),
            capacity: self.capacity(),
            len: self.len(),
            memory_bytes: self.memory_bytes() as u64,
            bits_per_item: self.bits_per_item(),
            parameters_block: self.parameters_block(),
            properties: self.properties(),
            estimated_len: self.estimated_len(),
            expected_fpp: self.expected_fpp(),
        }
    }
}
