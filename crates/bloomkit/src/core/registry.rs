//! The kind registry: every filter kind of the crate, listed once.
//!
//! The one list of kinds is `every_kind!` in `kinds/mod.rs`, which also
//! declares each kind's module and re-exports its type and builder. Given to `kinds!` at the
//! bottom of this file, it yields
//! the [`Kind`] enum (with the tag each kind has in the file format), [`Kind::ALL`], the
//! [`AnyFilter`] enum with its `From` impls, and the dispatch from a
//! stored kind tag to the kind's decoder. What a kind can do — its name, whether it can
//! remove, merge or grow, whether it forgets — is said by the kind itself, in its own file,
//! as the [`Abilities`] of its [`Registered`] impl; `Kind` only looks them up.
//!
//! How a kind is built by name — the options its builder takes, with their help texts and
//! defaults — and the little more a program needs to use it without naming it (batches,
//! counts, a one-line description) the kind declares in its `options.rs`, as its `Declared`
//! impl ([`BuildSpec`], [`AnyFilter::build`], [`Kind::options`]).
//!
//! Adding a kind therefore touches its own folder (the type, its `Filter`, `Persist`,
//! `Registered` and `Declared` impls) and one line in that list. The CLI, the studies and the Redis
//! module ask `Kind` and `AnyFilter` instead of matching on kinds.

use crate::codec::{Parts, Persist};
use crate::core::spec::{self, Declared};
use crate::error::{DecodeError, Error};
use crate::filter::Filter;

pub use crate::core::spec::{
    parse_whole_number, text, BuildSpec, Choice, OptionInfo, ParametersBlock, ValueType,
    WholeNumberError, BITS, COMMON_OPTIONS, HASH, HASHES, SCHEME,
};

/// What a kind is and can do, as its own file declares it ([`Registered::ABILITIES`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Abilities {
    /// The name on the command line and in `info` (`bloom`, `vi-counting`, …).
    pub name: &'static str,
    /// One line for help texts: the structure, its paper, what it offers.
    pub summary: &'static str,
    /// Whether the kind implements [`Removable`](crate::Removable).
    pub remove: bool,
    /// Whether the kind implements [`Mergeable`](crate::Mergeable).
    pub merge: bool,
    /// Whether the kind grows past its capacity and keeps its error bound.
    pub grow: bool,
    /// Whether the kind forgets inserted items by design (false negatives).
    pub forgets: bool,
    /// Whether positions come from an [`IndexScheme`](crate::IndexScheme) (a cuckoo filter
    /// takes a bucket and a fingerprint from one digest instead).
    pub index_scheme: bool,
}

/// A kind in the registry: its abilities, and the run-time forms of `remove` and `union`
/// that [`AnyFilter`] dispatches to. The defaults refuse with
/// [`Error::Unsupported`]; a kind that can remove or merge forwards to its
/// [`Removable`](crate::Removable) or [`Mergeable`](crate::Mergeable) impl. A test holds
/// [`Abilities::remove`] and [`Abilities::merge`] to what these methods do.
pub trait Registered: Filter + Persist + Clone {
    /// What the kind is and can do.
    const ABILITIES: Abilities;

    /// A filter of the kind for `capacity` items at false-positive probability `fpp`, sized
    /// by the kind's own `with_capacity`.
    fn with_capacity(capacity: u64, fpp: f64) -> Result<Self, Error>;

    /// [`Removable::remove`](crate::Removable::remove) where the kind has it.
    fn remove_bytes(&mut self, item: &[u8]) -> Result<bool, Error> {
        let _ = item;
        Err(Error::Unsupported {
            kind: self.kind(),
            operation: "remove",
        })
    }

    /// [`Mergeable::union`](crate::Mergeable::union) where the kind has it.
    fn union_same(&mut self, other: &Self) -> Result<(), Error> {
        let _ = other;
        Err(Error::Unsupported {
            kind: self.kind(),
            operation: "merge",
        })
    }
}

/// Registers a kind: `registered!(Type, abilities, remove, merge)`. Listing `remove`
/// makes the kind's own `remove` its [`Removable`](crate::Removable) impl; listing `merge`
/// says it implements [`Mergeable`](crate::Mergeable); [`Registered::remove_bytes`] and
/// [`Registered::union_same`] forward to them.
macro_rules! registered {
    ($ty:ty, { $($field:ident: $value:expr),* $(,)? } $(, $op:ident)*) => {
        impl $crate::registry::Registered for $ty {
            // `remove` and `merge` follow from the operations listed, never from a second,
            // hand-kept flag: a kind can remove exactly when it forwards `remove`.
            const ABILITIES: $crate::registry::Abilities = $crate::registry::Abilities {
                $($field: $value,)*
                remove: $crate::registry::registered!(@lists remove; $($op)*),
                merge: $crate::registry::registered!(@lists merge; $($op)*),
            };
            fn with_capacity(capacity: u64, fpp: f64) -> Result<Self, $crate::error::Error> {
                <$ty>::with_capacity(capacity, fpp)
            }
            $($crate::registry::registered!(@op $op);)*
        }
        $($crate::registry::registered!(@impl $ty, $op);)*
    };
    (@impl $ty:ty, remove) => {
        impl $crate::filter::Removable for $ty {
            fn remove<I: $crate::hash::Item + ?Sized>(
                &mut self,
                item: &I,
            ) -> Result<bool, $crate::error::Error> {
                <$ty>::remove(self, item)
            }
        }
    };
    (@impl $ty:ty, merge) => {};
    (@lists remove; remove $($rest:ident)*) => { true };
    (@lists merge; merge $($rest:ident)*) => { true };
    (@lists $want:ident; $other:ident $($rest:ident)*) => {
        $crate::registry::registered!(@lists $want; $($rest)*)
    };
    (@lists $want:ident;) => { false };
    (@op remove) => {
        fn remove_bytes(&mut self, item: &[u8]) -> Result<bool, $crate::error::Error> {
            $crate::filter::Removable::remove(self, item)
        }
    };
    (@op merge) => {
        fn union_same(&mut self, other: &Self) -> Result<(), $crate::error::Error> {
            $crate::filter::Mergeable::union(self, other)
        }
    };
}
pub(crate) use registered;

/// Generates [`Kind`], [`AnyFilter`] and the dispatch between them from
/// the list of kinds.
macro_rules! kinds {
    ($($(#[$doc:meta])* $variant:ident = $tag:literal: $module:ident::{$ty:ident, $builder:ident},)*) => {
        use crate::kinds::{$($ty),*};

        /// The kinds of filter, with the tag that identifies each in the file format.
        ///
        /// Tags are stable: a tag once given is never reused for another kind. What a kind
        /// can do is asked here ([`can_remove`](Kind::can_remove), …), not matched on.
        ///
        /// ```
        /// use bloomkit::Kind;
        /// let removable: Vec<&str> =
        ///     Kind::ALL.iter().filter(|k| k.can_remove()).map(|k| k.name()).collect();
        /// assert_eq!(removable, ["counting", "vi-counting", "deletable", "cuckoo", "spectral"]);
        /// assert_eq!(Kind::from_name("scalable"), Some(Kind::Scalable));
        /// assert!(Kind::Scalable.can_grow() && !Kind::Scalable.can_merge());
        /// ```
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        #[repr(u8)]
        pub enum Kind {
            $($(#[$doc])* $variant = $tag,)*
        }

        impl Kind {
            /// Every kind this build knows, in the order of the registry.
            pub const ALL: &'static [Kind] = &[$(Kind::$variant),*];

            /// What the kind declares about itself.
            pub fn abilities(self) -> &'static Abilities {
                match self {
                    $(Kind::$variant => &<$ty as Registered>::ABILITIES,)*
                }
            }

            /// What the kind declares for building it by name and using it at run time
            /// (its `options.rs`).
            fn declaration(self) -> &'static spec::Declaration {
                match self {
                    $(Kind::$variant => &<$ty as spec::DeclaredFacts>::FACTS,)*
                }
            }

            /// The name of the kind's Rust type (`"BloomFilter"`, `"CuckooFilter"`, …), for
            /// bindings that give each kind a class of that name.
            ///
            /// ```
            /// use bloomkit::Kind;
            /// assert_eq!(Kind::Bloom.type_name(), "BloomFilter");
            /// assert_eq!(Kind::SplitBlock.type_name(), "SplitBlockBloomFilter");
            /// ```
            pub fn type_name(self) -> &'static str {
                match self {
                    $(Kind::$variant => stringify!($ty),)*
                }
            }
        }

        /// One of the crate's filter kinds, chosen at run time.
        ///
        /// ```
        /// use bloomkit::{AnyFilter, BloomFilter, Filter, Persist};
        ///
        /// let mut bloom = BloomFilter::with_capacity(100, 0.01)?;
        /// bloom.insert("dist");
        /// let any = AnyFilter::from_bytes(&bloom.to_bytes())?;
        /// assert_eq!(any.kind().name(), "bloom");
        /// assert!(any.contains("dist"));
        /// // Back to its own type (a filter of another kind is handed back as the error).
        /// let back = BloomFilter::try_from(any).expect("a classic filter");
        /// assert!(back.contains("dist"));
        /// # Ok::<(), bloomkit::Error>(())
        /// ```
        #[derive(Clone, Debug)]
        #[non_exhaustive]
        pub enum AnyFilter {
            $($(#[$doc])* $variant($ty),)*
        }

        $(impl From<$ty> for AnyFilter {
            fn from(filter: $ty) -> Self {
                AnyFilter::$variant(filter)
            }
        }

        /// The filter as its own type, when it is of this kind; otherwise the error is the
        /// filter, unchanged.
        impl TryFrom<AnyFilter> for $ty {
            type Error = AnyFilter;

            fn try_from(filter: AnyFilter) -> Result<Self, AnyFilter> {
                match filter {
                    AnyFilter::$variant(f) => Ok(f),
                    other => Err(other),
                }
            }
        })*

        impl AnyFilter {
            /// The filter, whatever its kind, as the object-safe [`Erased`] view.
            pub(crate) fn erased(&self) -> &dyn Erased {
                match self {
                    $(AnyFilter::$variant(f) => f,)*
                }
            }

            /// The filter, whatever its kind, as the mutable [`Erased`] view.
            pub(crate) fn erased_mut(&mut self) -> &mut dyn Erased {
                match self {
                    $(AnyFilter::$variant(f) => f,)*
                }
            }

            /// `union` of two filters of the same kind; `None` when the kinds differ.
            pub(crate) fn union_same_kind(&mut self, other: &AnyFilter) -> Option<Result<(), Error>> {
                match (self, other) {
                    $((AnyFilter::$variant(a), AnyFilter::$variant(b)) => Some(a.union_same(b)),)*
                    _ => None,
                }
            }

            /// A filter of `kind` for `capacity` items at false-positive probability `fpp`,
            /// as that kind's `with_capacity` sizes it.
            ///
            /// ```
            /// use bloomkit::{AnyFilter, Filter, Kind};
            /// for &kind in Kind::ALL {
            ///     let mut filter = AnyFilter::with_capacity(kind, 1_000, 0.01)?;
            ///     filter.try_insert("dist")?;
            ///     assert!(filter.contains("dist"));
            ///     assert_eq!(filter.kind(), kind);
            /// }
            /// # Ok::<(), bloomkit::Error>(())
            /// ```
            pub fn with_capacity(
                kind: Kind,
                capacity: impl $crate::params::ItemCount,
                fpp: f64,
            ) -> Result<AnyFilter, Error> {
                match kind {
                    $(Kind::$variant => <$ty as Registered>::with_capacity(capacity.items(), fpp).map(AnyFilter::$variant),)*
                }
            }

            /// A filter of `kind` as `spec` describes it, from the kind's builder: options
            /// left out are the kind's defaults. An option the kind does not take is
            /// [`Error::OptionNotTaken`], which names the kinds that take it; a value of the
            /// wrong type is [`Error::InvalidOptionValue`]; the builder's own checks follow.
            ///
            /// ```
            /// use bloomkit::registry::BuildSpec;
            /// use bloomkit::{AnyFilter, Error, Filter, Kind};
            /// for &kind in Kind::ALL {
            ///     let filter = AnyFilter::build(kind, &BuildSpec::new(1_000, 0.01))?;
            ///     assert_eq!(filter.kind(), kind);
            /// }
            /// let spec = BuildSpec {
            ///     num_cells: Some(4_096),
            ///     ..BuildSpec::new(1_000, 0.01).option("bucket-size", "8")
            /// };
            /// let Err(Error::OptionNotTaken { option, takers, .. }) = AnyFilter::build(Kind::Cuckoo, &spec)
            /// else {
            ///     panic!("a cuckoo filter is sized in buckets, not in cells")
            /// };
            /// assert_eq!(option, "bits");
            /// assert!(takers.contains(&Kind::Bloom) && !takers.contains(&Kind::Cuckoo));
            /// # Ok::<(), bloomkit::Error>(())
            /// ```
            pub fn build(kind: Kind, spec: &BuildSpec) -> Result<AnyFilter, Error> {
                match kind {
                    $(Kind::$variant => spec::build::<$ty>(spec).map(AnyFilter::$variant),)*
                }
            }

            /// The filter as the kind that is sent arithmetic-coded (a classic filter as a
            /// `compressed` one, which stays itself); [`Error::Unsupported`] for the kinds
            /// with no such form ([`Kind::exports`]).
            pub fn into_compressed(self) -> Result<AnyFilter, Error> {
                let kind = self.kind();
                let converted = match self {
                    $(AnyFilter::$variant(f) => <$ty as Declared>::into_compressed(f).ok(),)*
                };
                converted.ok_or(Error::Unsupported { kind, operation: "be exported" })
            }

            /// The filter as the kind it is in memory (a `compressed` filter as the classic
            /// one, which stays itself); [`Error::Unsupported`] for the kinds with no
            /// compressed form ([`Kind::exports`]).
            pub fn into_uncompressed(self) -> Result<AnyFilter, Error> {
                let kind = self.kind();
                let converted = match self {
                    $(AnyFilter::$variant(f) => <$ty as Declared>::into_uncompressed(f).ok(),)*
                };
                converted.ok_or(Error::Unsupported { kind, operation: "be exported" })
            }

            /// Decodes the parts of a file with the decoder of the kind its tag names.
            pub(crate) fn decode_kind(parts: &Parts<'_>) -> Result<AnyFilter, DecodeError> {
                match parts.kind {
                    $(Kind::$variant => <$ty>::decode_parts(parts).map(AnyFilter::$variant),)*
                }
            }
        }

        #[cfg(feature = "serde")]
        $crate::external_trait_impls::serde::via_persist!(AnyFilter $(, $ty)*);
    };
}

/// The object-safe part of a filter that [`AnyFilter`] forwards to: the public
/// [`DynFilter`](crate::DynFilter) (insert and query on bytes, size, saving), and the rest of
/// [`Filter`], the file format's parts and the registry's `remove`. Every registered kind has
/// it through the blanket impl.
pub(crate) trait Erased: crate::filter::DynFilter {
    fn filter_hashing(&self) -> crate::Hashing;
    fn remove_bytes(&mut self, item: &[u8]) -> Result<bool, Error>;
    fn clear_all(&mut self);
    fn estimated_count(&self) -> f64;
    fn sized_for(&self) -> u64;
    fn grows_now(&self) -> bool;
    fn facts(&self) -> Vec<(&'static str, String)>;
    fn fpp_target(&self) -> f64;
    fn fpp_after(&self, n: u64) -> f64;
    fn params_into(&self, out: &mut Vec<u8>);
    fn payload_into(&self, out: &mut Vec<u8>);
    fn describe_kind(&self) -> String;
    fn parameters_block(&self) -> Option<ParametersBlock>;
    fn count_bytes(&self, item: &[u8]) -> Option<u64>;
    #[cfg(feature = "rayon")]
    fn insert_parallel_bytes(&mut self, items: &[&[u8]]) -> Result<(), Error>;
}

impl<T: Declared> Erased for T {
    fn filter_hashing(&self) -> crate::Hashing {
        self.hashing()
    }
    fn remove_bytes(&mut self, item: &[u8]) -> Result<bool, Error> {
        Registered::remove_bytes(self, item)
    }
    fn clear_all(&mut self) {
        self.clear()
    }
    fn estimated_count(&self) -> f64 {
        self.estimated_len()
    }
    fn sized_for(&self) -> u64 {
        Filter::capacity(self)
    }
    fn grows_now(&self) -> bool {
        Filter::grows(self)
    }
    fn facts(&self) -> Vec<(&'static str, String)> {
        self.properties()
    }
    fn fpp_target(&self) -> f64 {
        Filter::target_fpp(self)
    }
    fn fpp_after(&self, n: u64) -> f64 {
        Filter::fpp_at(self, n)
    }
    fn params_into(&self, out: &mut Vec<u8>) {
        self.encode_params(out)
    }
    fn payload_into(&self, out: &mut Vec<u8>) {
        self.encode_payload(out)
    }
    fn describe_kind(&self) -> String {
        Declared::describe(self)
    }
    fn parameters_block(&self) -> Option<ParametersBlock> {
        Declared::parameters_block(self)
    }
    fn count_bytes(&self, item: &[u8]) -> Option<u64> {
        Declared::count_bytes(self, item)
    }
    #[cfg(feature = "rayon")]
    fn insert_parallel_bytes(&mut self, items: &[&[u8]]) -> Result<(), Error> {
        Declared::insert_parallel_bytes(self, items)
    }
}

impl Kind {
    /// The tag stored in files.
    pub fn tag(self) -> u8 {
        self as u8
    }

    /// The kind with a stored tag, if this build knows it.
    pub fn from_tag(tag: u8) -> Option<Kind> {
        Self::ALL.iter().copied().find(|k| k.tag() == tag)
    }

    /// The name used on the command line and in `info` (`bloom`, …).
    pub fn name(self) -> &'static str {
        self.abilities().name
    }

    /// The kind with this name (as [`Kind::name`] gives it), if any.
    pub fn from_name(name: &str) -> Option<Kind> {
        Self::ALL.iter().copied().find(|k| k.name() == name)
    }

    /// One line describing the kind, for help texts.
    pub fn summary(self) -> &'static str {
        self.abilities().summary
    }

    /// Whether filters of this kind can remove items (implement `Removable`).
    pub fn can_remove(self) -> bool {
        self.abilities().remove
    }

    /// Whether two filters of this kind can be merged (implement `Mergeable`).
    pub fn can_merge(self) -> bool {
        self.abilities().merge
    }

    /// Whether filters of this kind grow past their capacity.
    pub fn can_grow(self) -> bool {
        self.abilities().grow
    }

    /// Whether filters of this kind forget items by design (false negatives).
    pub fn forgets(self) -> bool {
        self.abilities().forgets
    }

    /// Whether positions come from an index scheme of the caller's choice (the kinds that
    /// take the option [`SCHEME`]).
    pub fn uses_index_scheme(self) -> bool {
        self.abilities().index_scheme
    }

    /// The options the kind's builder takes beyond capacity, ε and the seed, in the order
    /// the kind declares them: those of [`COMMON_OPTIONS`] it takes, and its own.
    ///
    /// ```
    /// use bloomkit::Kind;
    /// let names: Vec<&str> = Kind::Cuckoo.options().iter().map(|o| o.name).collect();
    /// assert_eq!(names, ["hash", "bucket-size", "fingerprint-bits", "max-kicks", "layout", "expansion"]);
    /// ```
    pub fn options(self) -> Vec<OptionInfo> {
        (self.declaration().options)()
    }

    /// Whether the kind takes the option `name` ([`Kind::options`]).
    pub fn takes(self, name: &str) -> bool {
        self.options().iter().any(|o| o.name == name)
    }

    /// Why the kind does not take the common option `name`, when it says (a phrase).
    pub fn why_not(self, name: &str) -> Option<&'static str> {
        let not_taken = self.declaration().not_taken;
        not_taken
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, why)| *why)
    }

    /// Whether the kind counts how often each item was inserted
    /// ([`AnyFilter::count`](crate::AnyFilter::count)): a repeated item is then not a
    /// duplicate but the point.
    pub fn counts(self) -> bool {
        self.declaration().counts
    }

    /// Whether `AnyFilter::insert_parallel` (with the `rayon` feature) uses every core for
    /// this kind. Such a kind's insert only sets bits, so inserting an item again
    /// changes nothing.
    pub fn inserts_in_parallel(self) -> bool {
        self.declaration().parallel_insert
    }

    /// How the kind estimates the number of items it holds
    /// ([`Filter::estimated_len`]), for reports.
    pub fn estimate_method(self) -> &'static str {
        self.declaration().estimate
    }

    /// Whether the kind has a form sent arithmetic-coded, or is one
    /// ([`AnyFilter::into_compressed`], [`AnyFilter::into_uncompressed`]).
    pub fn exports(self) -> bool {
        self.declaration().exports
    }

    /// How a view reads the kind's files, if it can ([`Declared::VIEW`]).
    pub(crate) fn view_opener(self) -> Option<crate::format::view::OpenView> {
        self.declaration().view
    }
}

/// The kinds that take the option `name`, in the order of the registry.
///
/// ```
/// use bloomkit::registry::kinds_taking;
/// use bloomkit::Kind;
/// assert_eq!(kinds_taking("method"), [Kind::Spectral]);
/// assert!(kinds_taking("no-such-option").is_empty());
/// ```
pub fn kinds_taking(name: &str) -> Vec<Kind> {
    Kind::ALL
        .iter()
        .copied()
        .filter(|k| k.takes(name))
        .collect()
}

/// The kind `bloomkit create` makes when none is named: the first of the registry, the
/// classic Bloom filter.
impl Default for Kind {
    fn default() -> Self {
        Kind::ALL[0]
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

crate::kinds::every_kind!(kinds);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Filter;

    /// A small filter of every kind, with one item in.
    fn one_of_each() -> Vec<AnyFilter> {
        Kind::ALL
            .iter()
            .map(|&kind| {
                let mut filter = AnyFilter::with_capacity(kind, 100, 0.01).unwrap();
                filter.try_insert("x").unwrap();
                filter
            })
            .collect()
    }

    #[test]
    fn declared_abilities_match_what_remove_and_union_do() {
        for (mut a, b) in one_of_each().into_iter().zip(one_of_each()) {
            let kind = a.kind();
            let removed = a.remove("x");
            assert_eq!(
                !matches!(removed, Err(Error::Unsupported { .. })),
                kind.can_remove(),
                "{kind}: remove gave {removed:?}"
            );
            let merged = a.union(&b);
            assert_eq!(
                merged.is_ok(),
                kind.can_merge(),
                "{kind}: union gave {merged:?}"
            );
        }
    }

    #[test]
    fn type_names_are_unique_rust_type_names() {
        let mut names: Vec<&str> = Kind::ALL.iter().map(|k| k.type_name()).collect();
        assert!(names.iter().all(|n| n.ends_with("Filter")), "{names:?}");
        assert_eq!(Kind::Cuckoo.type_name(), "CuckooFilter");
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Kind::ALL.len());
    }

    #[test]
    fn tags_and_names_are_unique_and_round_trip() {
        for &kind in Kind::ALL {
            assert_eq!(Kind::from_tag(kind.tag()), Some(kind));
            assert_eq!(Kind::from_name(kind.name()), Some(kind));
            assert!(!kind.summary().is_empty());
        }
        let mut tags: Vec<u8> = Kind::ALL.iter().map(|k| k.tag()).collect();
        tags.sort_unstable();
        tags.dedup();
        assert_eq!(tags.len(), Kind::ALL.len());
        assert_eq!(Kind::from_tag(0), None);
        assert_eq!(Kind::from_name("nope"), None);
    }
}
