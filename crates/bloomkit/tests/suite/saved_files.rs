//! Files saved by earlier builds load, answer as they did, and save back byte for byte.
//!
//! `tests/fixtures/` holds one small file per kind (and a few non-default hashings), saved
//! by the build that added them. Each must load through its own type and through
//! `AnyFilter`, hold every item it was built with, and encode again to exactly the bytes on
//! disk: the proof that a change to how a kind declares or encodes its fields left the
//! format alone. (Sizing may change — `with_capacity` of a later build may choose other
//! dimensions — so the files are not compared with what today's build would make.) A new kind gets its file by running this test once with
//! `BLOOMKIT_WRITE_FIXTURES=1` (which writes only the files that are missing); a file
//! that exists is never rewritten by the test.

use std::path::PathBuf;

use bloomkit::vi_counting::IncrementHashing;
use bloomkit::{
    AnyFilter, BloomFilter, Filter, HashFunction, IndexScheme, Kind, Persist, SpectralBloomFilter,
    SpectralLayout, SpectralMethod,
};

/// The items every fixture was filled with, and the ones removed again where the kind can.
fn items() -> impl Iterator<Item = String> {
    (0..150).map(|i| format!("saved-{i}"))
}
fn removed() -> impl Iterator<Item = String> {
    (0..10).map(|i| format!("saved-{i}"))
}

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// What each fixture is: its file name and how it was made.
fn fixtures() -> Vec<(String, AnyFilter)> {
    let mut out = Vec::new();
    for &kind in Kind::ALL {
        let mut filter = AnyFilter::with_capacity(kind, 200, 0.01).unwrap();
        for item in items() {
            filter.try_insert(item.as_str()).unwrap();
        }
        if kind.can_remove() {
            for item in removed() {
                filter.remove(item.as_str()).unwrap();
            }
        }
        out.push((format!("{}.bk", kind.name()), filter));
    }
    // The classic filter with every hashing choice that is not the default.
    let mut seeded = BloomFilter::builder()
        .capacity(200)
        .fpp(0.001)
        .hash_function(HashFunction::Xxh3)
        .index_scheme(IndexScheme::SeededHashes)
        .seed(0x5eed)
        .build()
        .unwrap();
    for item in items() {
        seeded.insert(item.as_str());
    }
    out.push(("bloom-xxh3-seeded.bk".into(), seeded.into()));
    // The blocked filter with each hash it has had as its default: `blocked.bk` was saved
    // with XXH3-128 (id 2), this one with fold2-128 (id 6).
    let mut fold2 = bloomkit::BlockedBloomFilter::builder()
        .capacity(200)
        .fpp(0.01)
        .hash_function(HashFunction::Fold2)
        .seed(0x5eed)
        .build()
        .unwrap();
    for item in items() {
        fold2.insert(item.as_str());
    }
    out.push(("blocked-fold2.bk".into(), fold2.into()));
    // The variable-increment filter with each source of increments it has had:
    // `vi-counting.bk` was saved with the second digest, these with the position digest and
    // the packed digest (the default from then on).
    for (source, file) in [
        (
            IncrementHashing::PositionDigest,
            "vi-counting-position-digest.bk",
        ),
        (
            IncrementHashing::PackedDigest,
            "vi-counting-packed-digest.bk",
        ),
    ] {
        let mut vi = bloomkit::VariableIncrementBloomFilter::builder()
            .capacity(200)
            .fpp(0.01)
            .increment_hashing(source)
            .build()
            .unwrap();
        for item in items() {
            vi.insert(item.as_str());
        }
        for item in removed() {
            vi.remove(item.as_str()).unwrap();
        }
        out.push((file.into(), vi.into()));
    }
    // The spectral filter in the compact layout (`spectral.bk` was saved in the fixed one,
    // before it), under minimum selection and recurring minimum, with the first 20 items
    // inserted 40 times more: counters past 15 in the tables of both of RM's arrays.
    for (method, file) in [
        (SpectralMethod::MinimumSelection, "spectral-compact.bk"),
        (SpectralMethod::RecurringMinimum, "spectral-compact-rm.bk"),
    ] {
        out.push((file.into(), spectral_compact(method).into()));
    }
    out
}

/// The filter of a `spectral-compact*.bk` fixture.
fn spectral_compact(method: SpectralMethod) -> SpectralBloomFilter {
    let mut f = SpectralBloomFilter::builder()
        .capacity(200)
        .fpp(0.01)
        .method(method)
        .counter_layout(SpectralLayout::Compact)
        .build()
        .unwrap();
    for item in items() {
        f.insert(item.as_str());
    }
    for _ in 0..40 {
        for item in items().take(20) {
            f.insert(item.as_str());
        }
    }
    for item in removed() {
        f.remove(item.as_str()).unwrap();
    }
    f
}

#[test]
fn files_saved_by_earlier_builds_load_and_save_back_byte_for_byte() {
    let write = std::env::var_os("BLOOMKIT_WRITE_FIXTURES").is_some();
    let mut checked = 0;
    for (name, made) in fixtures() {
        let path = dir().join(&name);
        if !path.exists() {
            assert!(
                write,
                "{name}: no saved file; run with BLOOMKIT_WRITE_FIXTURES=1 once to add it"
            );
            std::fs::create_dir_all(dir()).unwrap();
            made.save(&path).unwrap();
        }
        let bytes = std::fs::read(&path).unwrap();
        let loaded = AnyFilter::from_bytes(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            loaded.to_bytes(),
            bytes,
            "{name}: saves back to other bytes"
        );
        let kind = loaded.kind();
        for item in items() {
            let gone = kind.can_remove() && removed().any(|r| r == item);
            if !gone && !kind.forgets() {
                assert!(loaded.contains(item.as_str()), "{name}: lost {item}");
            }
        }
        let false_positives = (0..1000)
            .filter(|i| loaded.contains(format!("absent-{i}").as_str()))
            .count();
        assert!(
            false_positives < 100,
            "{name}: {false_positives} of 1000 absent items"
        );
        checked += 1;
    }
    assert_eq!(checked, Kind::ALL.len() + 6);
}

/// The blocked filter's files keep the hash they were saved with: `blocked.bk` (saved when
/// XXH3-128 was the kind's default) answers with XXH3-128 after fold2-128 became the
/// default, and `blocked-fold2.bk` with fold2-128.
#[test]
fn blocked_files_keep_their_hash_tag() {
    for (name, function) in [
        ("blocked.bk", HashFunction::Xxh3),
        ("blocked-fold2.bk", HashFunction::Fold2),
    ] {
        let bytes = std::fs::read(dir().join(name)).unwrap();
        assert_eq!(bytes[11], function.id(), "{name}: the stored tag");
        let filter = bloomkit::BlockedBloomFilter::from_bytes(&bytes).unwrap();
        assert_eq!(filter.hashing().function, function, "{name}");
        assert!(items().all(|item| filter.contains(item.as_str())), "{name}");
    }
}

/// What a variable-increment filter answers about the items it was filled with and 4000
/// absent ones, with the (position, increment) pairs of the first 20: one line each.
fn vi_counting_answers(filter: &bloomkit::VariableIncrementBloomFilter) -> String {
    let mut out = String::new();
    for item in items().chain((0..4000).map(|i| format!("absent-{i}"))) {
        out.push_str(if filter.contains(item.as_str()) {
            "1\n"
        } else {
            "0\n"
        });
    }
    for item in items().take(20) {
        out.push_str(&format!("{:?}\n", filter.slots(item.as_str())));
    }
    out
}

/// `vi-counting.bk` was saved when the increments came from a second digest of the item
/// (seed ⊕ `INCREMENT_SEED_TWEAK`), `vi-counting-position-digest.bk` with them from the
/// positions' digest, one SplitMix64 output each, `vi-counting-packed-digest.bk` with them
/// packed into one mix of that digest: each loads with its own source, and answers every
/// item and every absent item, and gives every (position, increment) pair, exactly as the
/// build that saved it did (`*.answers`, written by that build).
#[test]
fn vi_counting_files_answer_as_the_build_that_saved_them() {
    let write = std::env::var_os("BLOOMKIT_WRITE_FIXTURES").is_some();
    for (name, source) in [
        ("vi-counting.bk", IncrementHashing::SecondDigest),
        (
            "vi-counting-position-digest.bk",
            IncrementHashing::PositionDigest,
        ),
        (
            "vi-counting-packed-digest.bk",
            IncrementHashing::PackedDigest,
        ),
    ] {
        let bytes = std::fs::read(dir().join(name)).unwrap();
        let filter = bloomkit::VariableIncrementBloomFilter::from_bytes(&bytes)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(filter.increment_hashing(), source, "{name}");
        let answers_path = dir().join(format!("{name}.answers"));
        if !answers_path.exists() {
            assert!(write, "{name}: no saved answers");
            std::fs::write(&answers_path, vi_counting_answers(&filter)).unwrap();
        }
        let expected = std::fs::read_to_string(&answers_path).unwrap();
        assert_eq!(
            vi_counting_answers(&filter),
            expected,
            "{name}: answers changed"
        );
    }
}

/// What a spectral filter answers about the items it was filled with and 4000 absent ones:
/// contains and count, one line each.
fn spectral_answers(filter: &SpectralBloomFilter) -> String {
    items()
        .chain((0..4000).map(|i| format!("absent-{i}")))
        .map(|item| {
            let (c, n) = (filter.contains(item.as_str()), filter.count(item.as_str()));
            format!("{} {n}\n", u8::from(c))
        })
        .collect()
}

/// `spectral.bk` (fixed layout, saved before the compact one) and the compact fixtures
/// answer every item and every absent item, contains and count, exactly as the build that
/// saved them (`*.answers`, written by that build), and in the layout they were saved in;
/// the compact ones hold counters past 15 (the first 20 items were inserted 41 times, less
/// one remove for the first 10).
#[test]
fn spectral_files_answer_as_the_build_that_saved_them() {
    let write = std::env::var_os("BLOOMKIT_WRITE_FIXTURES").is_some();
    for (name, layout, method) in [
        (
            "spectral.bk",
            SpectralLayout::Fixed,
            SpectralMethod::MinimumSelection,
        ),
        (
            "spectral-compact.bk",
            SpectralLayout::Compact,
            SpectralMethod::MinimumSelection,
        ),
        (
            "spectral-compact-rm.bk",
            SpectralLayout::Compact,
            SpectralMethod::RecurringMinimum,
        ),
    ] {
        let bytes = std::fs::read(dir().join(name)).unwrap();
        let filter =
            SpectralBloomFilter::from_bytes(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(filter.counter_layout(), layout, "{name}");
        assert_eq!(filter.method(), method, "{name}");
        let answers_path = dir().join(format!("{name}.answers"));
        if !answers_path.exists() {
            assert!(write, "{name}: no saved answers");
            std::fs::write(&answers_path, spectral_answers(&filter)).unwrap();
        }
        let expected = std::fs::read_to_string(&answers_path).unwrap();
        assert_eq!(
            spectral_answers(&filter),
            expected,
            "{name}: answers changed"
        );
        if layout == SpectralLayout::Compact {
            assert!(
                filter.escaped_counters() >= 20,
                "{name}: {}",
                filter.escaped_counters()
            );
            assert_eq!(filter.count("saved-3"), 40, "{name}");
            assert_eq!(filter.count("saved-15"), 41, "{name}");
        }
    }
}
