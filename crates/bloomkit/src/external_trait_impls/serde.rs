//! `Serialize` and `Deserialize` (cargo feature `serde`) for every kind and for
//! [`AnyFilter`](crate::AnyFilter).
//!
//! A filter is serialized as one byte string: its bloomkit file format
//! ([`Persist::to_bytes`]), the same bytes [`Persist::save`] writes. Not field by field,
//! because:
//!
//! * **one representation**: a filter sent through JSON, bincode or a message queue is
//!   the file a `bloomkit info` reads, versioned, with its kind and hashing named in it;
//! * **checked on the way in**: deserializing runs the same decoder as loading a file —
//!   checksum, every length before allocating, every parameter's range — so hostile or
//!   corrupted input is an error, never a filter whose fields contradict each other (which
//!   `#[derive(Deserialize)]` of the fields would accept);
//! * **stable**: the format promises that files keep loading; a struct's fields do not.
//!
//! Formats without a byte type (JSON) carry the bytes as an array of numbers; the visitor
//! accepts both.
//!
//! ```
//! use bloomkit::{AnyFilter, BloomFilter, Filter};
//! let mut filter = BloomFilter::with_capacity(100, 0.01)?;
//! filter.insert("dist");
//! let json = serde_json::to_string(&filter).unwrap();
//! let back: BloomFilter = serde_json::from_str(&json).unwrap();
//! assert_eq!(back, filter);
//! // Any kind, learnt at run time:
//! let any: AnyFilter = serde_json::from_str(&json).unwrap();
//! assert!(any.contains("dist"));
//! # Ok::<(), bloomkit::Error>(())
//! ```

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::ser::Serializer;

use crate::codec::Persist;

/// Serializes a filter as the bytes of its file format.
pub(crate) fn serialize<F: Persist, S: Serializer>(filter: &F, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_bytes(&filter.to_bytes())
}

/// Deserializes a filter from the bytes of its file format, checked as a file is.
pub(crate) fn deserialize<'de, F: Persist, D: Deserializer<'de>>(d: D) -> Result<F, D::Error> {
    d.deserialize_bytes(FilterBytes(PhantomData))
}

struct FilterBytes<F>(PhantomData<F>);

impl<'de, F: Persist> Visitor<'de> for FilterBytes<F> {
    type Value = F;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the bytes of a bloomkit filter")
    }

    fn visit_bytes<E: de::Error>(self, bytes: &[u8]) -> Result<F, E> {
        F::from_bytes(bytes).map_err(E::custom)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<F, A::Error> {
        // The hint comes from the input: cap it, and let the vector grow with what arrives.
        let mut bytes = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 16));
        while let Some(b) = seq.next_element::<u8>()? {
            bytes.push(b);
        }
        self.visit_bytes(&bytes)
    }
}

/// `Serialize`/`Deserialize` through the file format for the listed types (the registry
/// invokes it with every kind and `AnyFilter`).
macro_rules! via_persist {
    ($($ty:ty),* $(,)?) => {$(
        #[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                $crate::external_trait_impls::serde::serialize(self, s)
            }
        }

        #[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                $crate::external_trait_impls::serde::deserialize(d)
            }
        }
    )*};
}
pub(crate) use via_persist;
