//! A filter of any kind, for code that learns the kind at run time (such as the CLI
//! reading a file). The enum itself, [`AnyFilter`], is generated from the kind list in
//! [`registry`](crate::registry); this file forwards the traits to whichever kind it holds.

pub use crate::registry::AnyFilter;

use crate::codec::{Parts, Persist};
use crate::error::{DecodeError, Error};
use crate::filter::{Filter, Kind};
use crate::hash::{Hashing, Item};

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
}
