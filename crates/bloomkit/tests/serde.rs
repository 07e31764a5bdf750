//! `Serialize`/`Deserialize` (cargo feature `serde`): every kind goes through serde as the
//! bytes of its file format, and comes back checked as a file is.
#![cfg(feature = "serde")]

use bloomkit::{AnyFilter, BloomFilter, CuckooFilter, Filter, Kind, Persist};

/// A filter of every kind with a few items in.
fn every_kind() -> Vec<AnyFilter> {
    Kind::ALL
        .iter()
        .map(|&kind| {
            let mut f = AnyFilter::with_capacity(kind, 200, 0.01).unwrap();
            for i in 0..100u32 {
                f.try_insert(&i).unwrap();
            }
            f
        })
        .collect()
}

#[test]
fn every_kind_round_trips_through_serde_as_its_file_format() {
    for filter in every_kind() {
        let json = serde_json::to_string(&filter).unwrap();
        let back: AnyFilter = serde_json::from_str(&json).unwrap();
        assert_eq!(back.kind(), filter.kind());
        assert_eq!(back.to_bytes(), filter.to_bytes(), "{}", filter.kind());
        // The same answers (every item, for the kinds that do not forget).
        assert!(
            (0..100u32).all(|i| back.contains(&i) == filter.contains(&i)),
            "{}",
            filter.kind()
        );
        assert!(
            filter.kind().forgets() || (0..100u32).all(|i| back.contains(&i)),
            "{}",
            filter.kind()
        );
        // The serialized value is the file format itself.
        let bytes: Vec<u8> = serde_json::from_str(&json).unwrap();
        assert_eq!(bytes, filter.to_bytes());
    }
    let mut bloom = BloomFilter::with_capacity(100, 0.01).unwrap();
    bloom.insert("dist");
    let back: BloomFilter = serde_json::from_str(&serde_json::to_string(&bloom).unwrap()).unwrap();
    assert_eq!(back, bloom);
}

#[test]
fn corrupted_or_foreign_bytes_are_errors_not_filters() {
    for filter in every_kind() {
        let bytes = filter.to_bytes();
        for at in (0..bytes.len()).step_by(7) {
            let mut bad = bytes.clone();
            bad[at] ^= 0x20;
            let json = serde_json::to_string(&bad).unwrap();
            assert!(
                serde_json::from_str::<AnyFilter>(&json).is_err(),
                "{}: flipped byte {at} accepted",
                filter.kind()
            );
        }
        let cut = serde_json::to_string(&bytes[..bytes.len() - 1]).unwrap();
        assert!(serde_json::from_str::<AnyFilter>(&cut).is_err());
    }
    // A cuckoo filter's bytes are not a Bloom filter.
    let cuckoo = CuckooFilter::with_capacity(100, 0.01).unwrap();
    let err = serde_json::from_str::<BloomFilter>(&serde_json::to_string(&cuckoo).unwrap())
        .unwrap_err()
        .to_string();
    assert!(err.contains("expected a bloom filter"), "{err}");
    assert!(serde_json::from_str::<BloomFilter>("\"not bytes\"").is_err());
}
