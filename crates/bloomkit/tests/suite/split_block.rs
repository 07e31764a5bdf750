//! The split block filter against Apache Parquet's specification and an independent
//! implementation of it (sbbf-rs-safe): the same bits for the same hashes, the same answers,
//! the specification's sizing examples; plus round trips, corruption, false negatives and
//! the measured false-positive rate against the formula.

use crate::conformance;

use bloomkit::split_block::{fpp, num_blocks_for};
use bloomkit::stats::{binomial_acceptance, Z_99_9};
use bloomkit::{AnyFilter, Filter, HashFunction, Kind, Mergeable, Persist, SplitBlockBloomFilter};
use proptest::collection::vec;
use proptest::prelude::*;

use conformance::config;

fn xxh64(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh64::xxh64(bytes, 0)
}

proptest! {
    #![proptest_config(config(64))]

    /// sbbf-rs-safe sized by bits per key and key count; ours given its byte count. The same
    /// hashes inserted in both leave the same bytes, and both answer every probe alike.
    #[test]
    fn same_bits_and_answers_as_sbbf_rs_safe(
        bits_per_key in 1usize..24,
        keys in 1usize..3000,
        hashes in vec(any::<u64>(), 0..3000),
        probes in vec(any::<u64>(), 0..500),
    ) {
        let mut theirs = sbbf_rs_safe::Filter::new(bits_per_key, keys);
        let mut ours = SplitBlockBloomFilter::builder()
            .num_bytes(theirs.as_bytes().len() as u64)
            .build()
            .unwrap();
        for &h in &hashes {
            // sbbf-rs-safe returns "was already there"; ours returns "changed".
            prop_assert_eq!(ours.insert_hash(h), !theirs.insert_hash(h));
        }
        prop_assert_eq!(ours.to_parquet_bitset(), theirs.as_bytes().to_vec());
        for &h in hashes.iter().chain(&probes) {
            prop_assert_eq!(ours.contains_hash(h), theirs.contains_hash(h));
        }
        // A bitset written by the other implementation answers the same here.
        let read = SplitBlockBloomFilter::from_parquet_bitset(theirs.as_bytes()).unwrap();
        for &h in hashes.iter().chain(&probes) {
            prop_assert_eq!(read.contains_hash(h), theirs.contains_hash(h));
        }
    }

    /// Items hash with XXH64, seed 0, of their bytes; every path finds every inserted item,
    /// and batches answer exactly like single calls.
    #[test]
    fn items_are_xxh64_of_their_bytes_and_never_missed(
        items in vec(vec(any::<u8>(), 0..24), 0..400),
        keys in vec(any::<u64>(), 0..400),
        capacity in 1u64..2000,
    ) {
        let mut f = SplitBlockBloomFilter::with_capacity(capacity, 0.01).unwrap();
        let mut by_hash = f.clone();
        for item in &items {
            f.insert(item);
            by_hash.insert_hash(xxh64(item));
        }
        f.insert_batch_u64(&keys);
        for &k in &keys {
            by_hash.insert_hash(xxh64(&k.to_le_bytes()));
        }
        prop_assert_eq!(&f, &by_hash);
        prop_assert!(items.iter().all(|i| f.contains(i)));
        prop_assert!(keys.iter().all(|&k| f.contains_u64(k) && f.contains(&k)));
        let mut out = Vec::new();
        f.contains_batch_u64(&keys, &mut out);
        prop_assert!(out.iter().all(|&b| b));
        prop_assert!(f.contains_batch(&items).into_iter().all(|b| b));
    }

    #[test]
    fn round_trip_keeps_every_bit_and_answer(
        items in vec(any::<u64>(), 0..500),
        capacity in 1u64..2000,
        seed in any::<u64>(),
    ) {
        let mut f = SplitBlockBloomFilter::builder().capacity(capacity).seed(seed).build().unwrap();
        f.extend(items.iter().copied());
        let back = SplitBlockBloomFilter::from_bytes(&f.to_bytes()).unwrap();
        prop_assert_eq!(&back, &f);
        let any = AnyFilter::from_bytes(&f.to_bytes()).unwrap();
        prop_assert_eq!(any.kind(), Kind::SplitBlock);
        prop_assert!(items.iter().all(|i| any.contains(i)));
    }
}

#[cfg(feature = "rayon")]
#[test]
fn parallel_insert_is_the_sequential_filter() {
    let keys: Vec<u64> = (0..200_000u64)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .collect();
    let mut sequential = SplitBlockBloomFilter::with_capacity(100_000, 0.01).unwrap();
    let mut parallel = sequential.clone();
    let changed: u64 = keys.iter().map(|k| sequential.insert(k) as u64).sum();
    assert_eq!(parallel.insert_parallel(&keys), changed);
    assert_eq!(parallel, sequential);
}

/// BloomFilter.md, "Sizing an SBBF": 1024 blocks with 26 214 hashes, "around 1.26%"; twice
/// as many, 18%; half as many, 0.04%. And its table of bits per insert.
#[test]
fn sizing_reproduces_the_specification_examples() {
    let close = |got: f64, want: f64, tolerance: f64| {
        assert!(
            (got - want).abs() <= tolerance * want,
            "got {got}, the specification says {want}"
        );
    };
    close(fpp(1024, 26_214), 0.0126, 0.03);
    close(fpp(1024, 52_428), 0.18, 0.05);
    close(fpp(1024, 13_107), 0.0004, 0.15);
    // (bits per insert, FPR): the table's values are rounded to about two digits.
    for (bits, want) in [
        (6.0, 0.10),
        (10.5, 0.01),
        (16.9, 0.001),
        (26.4, 0.0001),
        (41.0, 0.00001),
    ] {
        let blocks = 1u64 << 16;
        let items = (blocks as f64 * 256.0 / bits) as u64;
        close(fpp(blocks, items), want, 0.12);
    }
    // Sizing takes the fewest blocks that meet ε.
    for (n, eps) in [
        (1u64, 0.5),
        (1000, 0.01),
        (1_000_000, 0.01),
        (1_000_000, 0.001),
    ] {
        let z = num_blocks_for(n, eps).unwrap();
        assert!(
            fpp(z, n) <= eps && (z == 1 || fpp(z - 1, n) > eps),
            "n {n} ε {eps}"
        );
        let f = SplitBlockBloomFilter::with_capacity(n, eps).unwrap();
        assert_eq!(f.num_blocks(), z);
    }
    assert!(num_blocks_for(u64::MAX, 1e-9).is_err());
    // Past the largest filter, the error names the size ε would take: z ≈ n / (ε·32⁸)
    // blocks once blocks hold an item or none (1 000 items at 10⁻²⁰: 2.3·10¹³ bits).
    match num_blocks_for(1_000, 1e-20) {
        Err(bloomkit::Error::TooLarge { bits, max }) => {
            assert!(
                bits > max && (2e13..3e13).contains(&(bits as f64)),
                "{bits}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(SplitBlockBloomFilter::builder()
        .num_blocks(1 << 31)
        .build()
        .is_err());
    assert!(SplitBlockBloomFilter::builder()
        .num_bytes(0)
        .build()
        .is_err());
    assert!(SplitBlockBloomFilter::builder()
        .num_bytes(48)
        .build()
        .is_err());
    assert!(SplitBlockBloomFilter::with_capacity(0, 0.01).is_err());
    assert!(SplitBlockBloomFilter::with_capacity(10, 1.0).is_err());
}

#[test]
fn false_positive_rate_matches_the_formula() {
    for eps in [0.01, 0.001] {
        let n = 100_000u64;
        let mut f = SplitBlockBloomFilter::with_capacity(n, eps).unwrap();
        f.insert_batch_u64(&(0..n).collect::<Vec<_>>());
        let queries = 2_000_000u64;
        let fp = (n..n + queries).filter(|&k| f.contains_u64(k)).count() as f64;
        let theory = fpp(f.num_blocks(), n);
        let (low, high) = binomial_acceptance(theory, queries, Z_99_9);
        assert!(
            (low..=high).contains(&fp),
            "ε {eps}: {fp} false positives, theory [{low:.0}, {high:.0}]"
        );
        assert!(theory <= eps);
        let expected = f.expected_fpp();
        assert!(
            (expected - theory).abs() < 0.05 * theory,
            "{expected} vs {theory}"
        );
        assert!((f.estimated_len() - n as f64).abs() < 0.02 * n as f64);
    }
}

fn small_filter() -> SplitBlockBloomFilter {
    let mut f = SplitBlockBloomFilter::with_capacity(20, 0.1).unwrap();
    f.extend(["a", "b", "c"]);
    f
}

/// The file's checksum and field checks refuse every flipped byte and every cut.
#[test]
fn every_flipped_byte_and_every_cut_is_refused() {
    let bytes = small_filter().to_bytes();
    for i in 0..bytes.len() {
        for flip in [0x01u8, 0x80, 0xff] {
            let mut corrupt = bytes.clone();
            corrupt[i] ^= flip;
            assert!(
                SplitBlockBloomFilter::from_bytes(&corrupt).is_err(),
                "byte {i} ^ {flip:#x}"
            );
            assert!(
                AnyFilter::from_bytes(&corrupt).is_err(),
                "byte {i} ^ {flip:#x}"
            );
        }
    }
    for len in 0..bytes.len() {
        assert!(
            SplitBlockBloomFilter::from_bytes(&bytes[..len]).is_err(),
            "cut at {len}"
        );
    }
}

/// Bytes re-sealed with a valid checksum but lying fields are still refused.
#[test]
fn lying_fields_are_refused_after_the_checksum() {
    let reseal = |edit: &dyn Fn(&mut Vec<u8>)| {
        let mut b = small_filter().to_bytes();
        b.truncate(b.len() - 8);
        edit(&mut b);
        let sum = xxhash_rust::xxh3::xxh3_64(&b);
        b.extend_from_slice(&sum.to_le_bytes());
        b
    };
    // Hash function murmur3 instead of xxh64.
    let b = reseal(&|b| b[11] = HashFunction::Murmur3.id());
    assert!(SplitBlockBloomFilter::from_bytes(&b).is_err());
    // num_blocks (first parameter, at 28) claims more blocks than the payload holds.
    let b = reseal(&|b| b[28] = b[28].wrapping_add(1));
    assert!(SplitBlockBloomFilter::from_bytes(&b).is_err());
    // num_blocks of 2^40: refused before any allocation.
    let b = reseal(&|b| b[28..36].copy_from_slice(&(1u64 << 40).to_le_bytes()));
    assert!(SplitBlockBloomFilter::from_bytes(&b).is_err());
    // A bitset that is not whole blocks.
    assert!(SplitBlockBloomFilter::from_parquet_bitset(&[0; 33]).is_err());
    assert!(SplitBlockBloomFilter::from_parquet_bitset(&[]).is_err());
}

#[test]
fn union_is_inserting_both_and_mismatches_are_errors() {
    let mut a = SplitBlockBloomFilter::with_capacity(1000, 0.01).unwrap();
    let mut b = a.clone();
    let mut both = a.clone();
    a.extend(0..300u32);
    b.extend(200..500u32);
    both.extend(0..500u32);
    let mut u = a.clone();
    u.union(&b).unwrap();
    assert_eq!(u.to_parquet_bitset(), both.to_parquet_bitset());
    let mut i = a.clone();
    i.intersect(&b).unwrap();
    assert!((200..300u32).all(|x| i.contains(&x)));
    let other_size = SplitBlockBloomFilter::with_capacity(5000, 0.01).unwrap();
    let other_seed = SplitBlockBloomFilter::builder()
        .capacity(1000)
        .seed(1)
        .build()
        .unwrap();
    assert!(a.union(&other_size).is_err());
    assert!(a.union(&other_seed).is_err());
    let mut any = AnyFilter::from(a.clone());
    assert!(any.union(&AnyFilter::from(b)).is_ok());
}

/// Batches run through the lookahead window: over many windows they set the bits of the
/// single inserts, count the same changes, and give every answer in its place.
#[test]
fn batches_over_many_windows_match_single_calls() {
    conformance::batches_match_single_calls!(SplitBlockBloomFilter::builder()
        .num_cells(1 << 24)
        .build()
        .unwrap());
}
