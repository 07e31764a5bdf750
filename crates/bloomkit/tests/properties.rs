//! Property tests of the classic Bloom filter: the guarantees that hold for every set of
//! items and every choice of parameters, checked on random ones.
//!
//! * no false negatives, whatever the sizing, hashing and seed;
//! * union and intersection keep every item they must, bit for bit;
//! * the file format (bytes and files) gives back an equal filter with the same answers;
//! * the decoders never panic on arbitrary input, and accept only what the encoder writes.
//!
//! Case counts are modest so that the whole file runs in a few seconds.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use bloomkit::{
    AnyFilter, BloomFilter, Error, Filter, HashFunction, IndexScheme, Kind, Mergeable, Persist,
};
use proptest::collection::vec;
use proptest::prelude::*;

/// `cases` random cases; failures are reported with their inputs, not written to files.
fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// The parameters a filter is built from.
#[derive(Clone, Copy, Debug)]
struct Params {
    capacity: u64,
    fpp: f64,
    function: HashFunction,
    scheme: IndexScheme,
    seed: u64,
}

impl Params {
    fn build(self) -> BloomFilter {
        BloomFilter::builder()
            .capacity(self.capacity)
            .fpp(self.fpp)
            .hash_function(self.function)
            .index_scheme(self.scheme)
            .seed(self.seed)
            .build()
            .expect("capacity in 1..5000 and fpp in [1e-4, 0.5] are valid")
    }
}

/// Capacity 1..5000, ε log-uniform in [1e-4, 0.5], both hash functions, both index
/// schemes, any seed.
fn params() -> impl Strategy<Value = Params> {
    (
        1u64..5000,
        (1e-4f64.ln()..=0.5f64.ln()).prop_map(|x| x.exp().clamp(1e-4, 0.5)),
        prop_oneof![Just(HashFunction::Murmur3), Just(HashFunction::Xxh3)],
        prop_oneof![
            Just(IndexScheme::EnhancedDoubleHashing),
            Just(IndexScheme::SeededHashes)
        ],
        any::<u64>(),
    )
        .prop_map(|(capacity, fpp, function, scheme, seed)| Params {
            capacity,
            fpp,
            function,
            scheme,
            seed,
        })
}

/// Byte-string items, the empty one included.
fn item() -> impl Strategy<Value = Vec<u8>> {
    vec(any::<u8>(), 0..24)
}

fn items(max: usize) -> impl Strategy<Value = Vec<Vec<u8>>> {
    vec(item(), 0..max)
}

fn filled(p: Params, items: &[Vec<u8>]) -> BloomFilter {
    let mut filter = p.build();
    for it in items {
        filter.insert(it.as_slice());
    }
    filter
}

/// The payload (bit array) of an encoded Bloom filter: after the 28-byte header, the
/// 36 bytes of parameters and the 8-byte payload length; before the 8-byte checksum.
fn payload(encoded: &[u8]) -> &[u8] {
    &encoded[28 + 36 + 8..encoded.len() - 8]
}

/// A fresh path in a directory of its own, removed when dropped.
struct TempPath {
    dir: PathBuf,
    path: PathBuf,
}

impl TempPath {
    fn new(name: &str) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "bloomkit-properties-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).expect("create a temporary directory");
        let path = dir.join(name);
        Self { dir, path }
    }
}

impl Drop for TempPath {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Checks that `copy` answers exactly as `original` for every item given.
fn same_answers<F: Filter>(
    original: &BloomFilter,
    copy: &F,
    inserted: &[Vec<u8>],
    others: &[Vec<u8>],
) -> Result<(), TestCaseError> {
    for it in inserted {
        prop_assert!(
            copy.contains(it.as_slice()),
            "inserted item {it:?} lost in the copy"
        );
    }
    for it in others {
        prop_assert_eq!(
            copy.contains(it.as_slice()),
            original.contains(it.as_slice()),
            "answers differ for {:?}",
            it
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn inserted_items_are_never_reported_absent(p in params(), items in items(300)) {
        let mut filter = p.build();
        for it in &items {
            filter.insert(it.as_slice());
            // Right after its own insertion …
            prop_assert!(filter.contains(it.as_slice()));
        }
        // … and after every other insertion too, through both entry points.
        for it in &items {
            prop_assert!(filter.contains(it.as_slice()), "false negative for {:?}", it);
            prop_assert!(Filter::contains(&filter, it.as_slice()));
        }
        prop_assert!(Filter::len(&filter) <= items.len() as u64);
    }

    #[test]
    fn extend_and_try_insert_find_every_item_like_insert(p in params(), items in items(200)) {
        let by_insert = filled(p, &items);
        let mut by_extend = p.build();
        by_extend.extend(items.iter().map(Vec::as_slice));
        let mut by_try = p.build();
        for it in &items {
            by_try.try_insert(it.as_slice()).unwrap();
        }
        prop_assert_eq!(&by_extend, &by_insert);
        prop_assert_eq!(&by_try, &by_insert);
        for it in &items {
            prop_assert!(by_extend.contains(it.as_slice()));
        }
    }

    #[test]
    fn union_reports_every_item_of_both_inputs_and_equals_inserting_both(
        p in params(),
        left in items(200),
        right in items(200),
    ) {
        let mut union = filled(p, &left);
        let other = filled(p, &right);
        union.union(&other).unwrap();
        for it in left.iter().chain(&right) {
            prop_assert!(union.contains(it.as_slice()), "union lost {:?}", it);
        }
        // Bit for bit the filter that inserting both sets builds.
        let both = filled(p, &[left.clone(), right.clone()].concat());
        let (union_bytes, both_bytes) = (union.to_bytes(), both.to_bytes());
        prop_assert_eq!(payload(&union_bytes), payload(&both_bytes));
        prop_assert_eq!(union.count_ones(), both.count_ones());
    }

    #[test]
    fn intersection_reports_every_item_common_to_both_inputs(
        p in params(),
        common in items(150),
        only_left in items(150),
        only_right in items(150),
    ) {
        let mut meet = filled(p, &[common.clone(), only_left].concat());
        let other = filled(p, &[common.clone(), only_right].concat());
        let (left_bytes, right_bytes) = (meet.to_bytes(), other.to_bytes());
        meet.intersect(&other).unwrap();
        for it in &common {
            prop_assert!(meet.contains(it.as_slice()), "intersection lost {:?}", it);
        }
        // Bit for bit the AND of the inputs.
        let expected: Vec<u8> = payload(&left_bytes)
            .iter()
            .zip(payload(&right_bytes))
            .map(|(a, b)| a & b)
            .collect();
        let meet_bytes = meet.to_bytes();
        prop_assert_eq!(payload(&meet_bytes), expected.as_slice());
    }

    #[test]
    fn filters_with_different_hashing_or_size_do_not_merge(p in params(), other_seed in any::<u64>()) {
        prop_assume!(other_seed != p.seed);
        let mut a = p.build();
        let reseeded = Params { seed: other_seed, ..p }.build();
        let resized = Params { capacity: p.capacity + 100, ..p }.build();
        let before = a.clone();
        for other in [&reseeded, &resized] {
            prop_assert!(matches!(a.union(other), Err(Error::Incompatible(_))));
            prop_assert!(matches!(a.intersect(other), Err(Error::Incompatible(_))));
        }
        prop_assert_eq!(a, before);
    }

    #[test]
    fn encoding_round_trips_to_an_equal_filter_with_the_same_answers(
        p in params(),
        inserted in items(300),
        others in items(300),
    ) {
        let filter = filled(p, &inserted);
        let bytes = filter.to_bytes();

        let back = BloomFilter::from_bytes(&bytes).unwrap();
        prop_assert_eq!(&back, &filter);
        same_answers(&filter, &back, &inserted, &others)?;
        prop_assert_eq!(back.to_bytes(), bytes.clone(), "re-encoding changed the bytes");

        let any = AnyFilter::from_bytes(&bytes).unwrap();
        prop_assert_eq!(any.kind(), bloomkit::Kind::Bloom);
        prop_assert_eq!(any.hashing(), filter.hashing());
        prop_assert_eq!(any.len(), Filter::len(&filter));
        same_answers(&filter, &any, &inserted, &others)?;
        prop_assert_eq!(any.to_bytes(), bytes);
        match any {
            AnyFilter::Bloom(inner) => prop_assert_eq!(inner, filter),
            other => prop_assert!(false, "decoded as another kind: {:?}", other),
        }
    }

}

proptest! {
    // Each save syncs the file and its directory to disk: few cases.
    #![proptest_config(config(32))]

    #[test]
    fn save_and_load_through_a_file_give_an_equal_filter(
        p in params(),
        inserted in items(200),
        others in items(200),
    ) {
        let filter = filled(p, &inserted);
        let tmp = TempPath::new("filter.bloom");
        filter.save(&tmp.path).unwrap();
        prop_assert_eq!(std::fs::read(&tmp.path).unwrap(), filter.to_bytes());

        let back = BloomFilter::load(&tmp.path).unwrap();
        prop_assert_eq!(&back, &filter);
        same_answers(&filter, &back, &inserted, &others)?;

        let any = AnyFilter::load(&tmp.path).unwrap();
        same_answers(&filter, &any, &inserted, &others)?;

        // Saving over an existing file replaces it and leaves nothing else behind.
        let mut bigger = filter.clone();
        bigger.insert("one more");
        bigger.save(&tmp.path).unwrap();
        prop_assert_eq!(BloomFilter::load(&tmp.path).unwrap(), bigger);
        prop_assert_eq!(std::fs::read_dir(&tmp.dir).unwrap().count(), 1);
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

/// Recomputes the trailing checksum so that a mutated encoding reaches the field checks.
fn reseal(bytes: &mut [u8]) {
    if bytes.len() >= 8 {
        let n = bytes.len();
        let sum = xxhash_rust::xxh3::xxh3_64(&bytes[..n - 8]);
        bytes[n - 8..].copy_from_slice(&sum.to_le_bytes());
    }
}

/// A small valid encoding to mutate.
fn small_encoding() -> impl Strategy<Value = Vec<u8>> {
    (
        1u64..300,
        prop_oneof![Just(0.5), Just(0.1), Just(0.01)],
        items(20),
    )
        .prop_map(|(capacity, fpp, items)| {
            let p = Params {
                capacity,
                fpp,
                function: HashFunction::Xxh3,
                scheme: IndexScheme::EnhancedDoubleHashing,
                seed: 7,
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
