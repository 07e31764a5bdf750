//! A filter that takes one item type only.
//!
//! Every kind hashes an item's bytes, and an item's bytes depend on its type: `1u32` is four
//! bytes, `1u64` eight, `"x"` the string's UTF-8 while `Hashed("x")` goes through `Hash`
//! (see [`Item`]). So a filter filled with `u32`s answers "no" for the same numbers asked
//! as `u64`s — correctly for its bytes, surprisingly for its user. [`Typed`] wraps any kind
//! and fixes the item type at compile time, so that mistake does not compile:
//!
//! ```compile_fail
//! use bloomkit::{BloomFilter, Typed};
//! let mut ids: Typed<u64, BloomFilter> = Typed::new(BloomFilter::with_capacity(100, 0.01)?);
//! ids.try_insert(&1u64)?;
//! ids.contains(&1u32); // error: expected `&u64`, found `&u32`
//! # Ok::<(), bloomkit::Error>(())
//! ```
//!
//! It adds nothing at run time: the same filter, the same bytes, the same file (save and
//! load the inner filter, then wrap it again).

use std::fmt;
use std::marker::PhantomData;

use crate::error::Error;
use crate::filter::{Filter, Removable};
use crate::hash::Item;

/// A filter of kind `F` whose items are all of type `T`.
///
/// ```
/// use bloomkit::prelude::*;
/// let mut words: Typed<str, _> = Typed::new(CountingBloomFilter::with_capacity(1_000, 0.01)?);
/// assert!(words.try_insert("apple")?);
/// assert!(words.contains("apple"));
/// words.remove("apple")?;
/// assert!(!words.contains("apple"));
/// assert_eq!(words.filter().len(), 0);
/// # Ok::<(), bloomkit::Error>(())
/// ```
pub struct Typed<T: ?Sized, F> {
    filter: F,
    item: PhantomData<fn(&T)>,
}

impl<T: Item + ?Sized, F: Filter> Typed<T, F> {
    /// Wraps a filter; from now on it takes items of type `T` only.
    pub fn new(filter: F) -> Self {
        Self {
            filter,
            item: PhantomData,
        }
    }

    /// Adds an item, as [`Filter::try_insert`]: whether it was new.
    pub fn try_insert(&mut self, item: &T) -> Result<bool, Error> {
        self.filter.try_insert(item)
    }

    /// Whether the item may be in the filter, as [`Filter::contains`].
    pub fn contains(&self, item: &T) -> bool {
        self.filter.contains(item)
    }

    /// The filter, for everything that does not take an item (`len`, `memory_bytes`,
    /// saving, …).
    pub fn filter(&self) -> &F {
        &self.filter
    }

    /// The filter, unwrapped.
    pub fn into_inner(self) -> F {
        self.filter
    }
}

impl<T: Item + ?Sized, F: Removable> Typed<T, F> {
    /// Removes one copy of an item, as [`Removable::remove`].
    pub fn remove(&mut self, item: &T) -> Result<bool, Error> {
        self.filter.remove(item)
    }
}

impl<T: Item + ?Sized, F: Filter> From<F> for Typed<T, F> {
    fn from(filter: F) -> Self {
        Self::new(filter)
    }
}

impl<T: ?Sized, F: Clone> Clone for Typed<T, F> {
    fn clone(&self) -> Self {
        Self {
            filter: self.filter.clone(),
            item: PhantomData,
        }
    }
}

impl<T: ?Sized, F: fmt::Debug> fmt::Debug for Typed<T, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Typed")
            .field("item", &std::any::type_name::<T>())
            .field("filter", &self.filter)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BloomFilter, Persist};

    #[test]
    fn a_typed_filter_is_its_inner_filter_bit_for_bit() {
        let mut plain = BloomFilter::with_capacity(500, 0.01).unwrap();
        let mut typed: Typed<u64, _> = BloomFilter::with_capacity(500, 0.01).unwrap().into();
        for i in 0..300u64 {
            assert_eq!(typed.try_insert(&i).unwrap(), plain.insert(&i));
        }
        assert!((0..300u64).all(|i| typed.contains(&i)));
        assert_eq!(typed.filter().to_bytes(), plain.to_bytes());
        assert_eq!(typed.clone().into_inner().to_bytes(), plain.to_bytes());
    }
}
