//! Property tests of the classic Bloom filter: the guarantees that hold for every set of
//! items and every choice of parameters, checked on random ones, beyond the contract every
//! kind keeps (checked by the conformance suite, `every_kind.rs`).
//!
//! * `extend` and `try_insert` build the filter that `insert` builds;
//! * intersection is the bitwise AND of the inputs;
//! * the decoders never panic on arbitrary input, and accept only what the encoder writes.
//!
//! Case counts are modest so that the whole file runs in a few seconds.

use crate::conformance;

use bloomkit::{
    AnyFilter, BloomFilter, Error, Filter, HashFunction, IndexScheme, Kind, Mergeable, Persist,
};
use conformance::{config, payload, reseal, shape, Build, Shape};
use proptest::collection::vec;
use proptest::prelude::*;

/// Byte-string items, the empty one included.
fn item() -> impl Strategy<Value = Vec<u8>> {
    vec(any::<u8>(), 0..24)
}

fn items(max: usize) -> impl Strategy<Value = Vec<Vec<u8>>> {
    vec(item(), 0..max)
}

fn filled(p: Shape, items: &[Vec<u8>]) -> BloomFilter {
    let mut filter = BloomFilter::make(&p);
    for it in items {
        filter.insert(it.as_slice());
    }
    filter
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn extend_and_try_insert_find_every_item_like_insert(p in shape(), items in items(200)) {
        let by_insert = filled(p, &items);
        let mut by_extend = BloomFilter::make(&p);
        by_extend.extend(items.iter().map(Vec::as_slice));
        let mut by_try = BloomFilter::make(&p);
        for it in &items {
            by_try.try_insert(it.as_slice()).unwrap();
        }
        prop_assert_eq!(&by_extend, &by_insert);
        prop_assert_eq!(&by_try, &by_insert);
        for it in &items {
            prop_assert!(by_extend.contains(it.as_slice()));
        }
    }

    /// Intersection is bit for bit the AND of the inputs (that it keeps the common items is
    /// checked for every mergeable kind by the conformance suite).
    #[test]
    fn intersection_is_the_and_of_the_inputs(
        p in shape(),
        left in items(150),
        right in items(150),
    ) {
        let mut meet = filled(p, &left);
        let other = filled(p, &right);
        let expected: Vec<u8> = payload(&meet)
            .iter()
            .zip(payload(&other))
            .map(|(a, b)| a & b)
            .collect();
        meet.intersect(&other).unwrap();
        prop_assert_eq!(payload(&meet), expected);
    }
}

/// Decodes `bytes` with both decoders. Neither may panic (proptest turns a panic into a
/// failure); an accepted input must be exactly what the encoder writes for the filter
/// decoded, and the filter must answer queries. A mutation may turn the kind tag into
/// another kind's, which `AnyFilter` may then decode while `BloomFilter` must refuse it.
fn decode_arbitrary(bytes: &[u8]) -> Result<(), TestCaseError> {
    let bloom = BloomFilter::from_bytes(bytes);
    let any = AnyFilter::from_bytes(bytes);
    match (&bloom, &any) {
        (Ok(filter), Ok(AnyFilter::Bloom(same))) => {
            prop_assert_eq!(filter, same);
            prop_assert_eq!(
                filter.to_bytes(),
                bytes,
                "accepted a non-canonical encoding"
            );
            let _ = filter.contains("probe");
            let _ = filter.expected_fpp();
        }
        (Ok(_), _) => prop_assert!(
            false,
            "BloomFilter accepted what AnyFilter did not read as one"
        ),
        (Err(e), Ok(other)) => {
            prop_assert!(matches!(e, Error::Decode(_)), "not a decode error: {:?}", e);
            prop_assert_ne!(
                other.kind(),
                Kind::Bloom,
                "the decoders disagree on a bloom filter"
            );
            prop_assert_eq!(other.to_bytes(), bytes, "accepted a non-canonical encoding");
            let _ = other.contains("probe");
        }
        (Err(e), Err(f)) => {
            prop_assert!(matches!(e, Error::Decode(_)), "not a decode error: {:?}", e);
            prop_assert!(matches!(f, Error::Decode(_)), "not a decode error: {:?}", f);
        }
    }
    Ok(())
}

/// A small valid encoding to mutate.
fn small_encoding() -> impl Strategy<Value = Vec<u8>> {
    (
        1u64..300,
        prop_oneof![Just(0.5), Just(0.1), Just(0.01)],
        items(20),
    )
        .prop_map(|(capacity, fpp, items)| {
            let p = Shape {
                capacity,
                fpp,
                function: HashFunction::Xxh3,
                scheme: IndexScheme::EnhancedDoubleHashing,
                seed: 7,
                knob: 0,
            };
            filled(p, &items).to_bytes()
        })
}

/// Overwrites, inserts or removes a few bytes anywhere, then re-seals the checksum.
fn mutated_encoding() -> impl Strategy<Value = Vec<u8>> {
    (
        small_encoding(),
        vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..4), 1..6),
        any::<bool>(),
    )
        .prop_map(|(mut bytes, edits, reseal_it)| {
            for (at, value, op) in edits {
                let i = at.index(bytes.len());
                match op {
                    0 | 1 => bytes[i] = value,
                    2 => bytes.insert(i, value),
                    _ => {
                        bytes.remove(i);
                    }
                }
            }
            if reseal_it {
                reseal(&mut bytes);
            }
            bytes
        })
}

/// A valid header whose 8-byte little-endian fields (seed, params, lengths, payload) are
/// replaced by random small or extreme values, re-sealed: reaches every field check.
fn hostile_fields() -> impl Strategy<Value = Vec<u8>> {
    let value = prop_oneof![
        any::<u64>(),
        0u64..130,
        Just(u64::MAX),
        Just(1 << 40),
        Just((1 << 40) + 1),
        Just(f64::NAN.to_bits()),
        Just(1.0f64.to_bits()),
    ];
    (small_encoding(), vec((0usize..80, value), 1..4)).prop_map(|(mut bytes, fields)| {
        for (offset, v) in fields {
            let end = bytes.len() - 8;
            let at = offset.min(end);
            let width = 8.min(end - at);
            bytes[at..at + width].copy_from_slice(&v.to_le_bytes()[..width]);
        }
        reseal(&mut bytes);
        bytes
    })
}

proptest! {
    #![proptest_config(config(2048))]

    #[test]
    fn arbitrary_bytes_never_panic_the_decoders(bytes in vec(any::<u8>(), 0..600)) {
        decode_arbitrary(&bytes)?;
    }

    #[test]
    fn arbitrary_bytes_after_a_valid_magic_never_panic_the_decoders(
        version in prop_oneof![Just(1u16), any::<u16>()],
        tail in vec(any::<u8>(), 0..600),
    ) {
        let mut bytes = b"BLOOMKIT".to_vec();
        bytes.extend_from_slice(&version.to_le_bytes());
        bytes.extend_from_slice(&tail);
        decode_arbitrary(&bytes)?;
        // And once more with a matching checksum, so the fields behind it are read.
        reseal(&mut bytes);
        decode_arbitrary(&bytes)?;
    }

    #[test]
    fn mutated_encodings_never_panic_the_decoders(bytes in mutated_encoding()) {
        decode_arbitrary(&bytes)?;
    }

    #[test]
    fn hostile_field_values_never_panic_the_decoders(bytes in hostile_fields()) {
        decode_arbitrary(&bytes)?;
    }
}
