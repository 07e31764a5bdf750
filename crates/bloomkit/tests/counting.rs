//! Property and behaviour tests of the counting Bloom filter.

use std::collections::HashMap;

use bloomkit::params::{fpp_exact, optimal_num_bits, optimal_num_hashes};
use bloomkit::stats::{binomial_acceptance, Z_99_9};
use bloomkit::{
    AnyFilter, CountingBloomFilter, Error, Filter, Kind, Mergeable, Persist, Removable,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};

fn config(cases: u32) -> Config {
    Config {
        cases,
        rng_seed: RngSeed::Fixed(0xc0_0417),
        failure_persistence: None,
        ..Config::default()
    }
}

/// An encoded filter with any kind tag, parameters and payload, and a valid checksum: what
/// a hostile writer can produce.
fn raw_file(kind: u8, params: &[u8], payload: &[u8]) -> Vec<u8> {
    let mut out = b"BLOOMKIT".to_vec();
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&[kind, 1, 1, 0, 0, 0]);
    out.extend_from_slice(&0u64.to_le_bytes());
    out.extend_from_slice(&(params.len() as u32).to_le_bytes());
    out.extend_from_slice(params);
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(payload);
    let sum = xxhash_rust::xxh3::xxh3_64(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

/// Parameters in the counting filter's layout.
fn params(m: u64, k: u32, width: u32, capacity: u64, fpp: f64, len: u64) -> Vec<u8> {
    let mut p = Vec::new();
    p.extend_from_slice(&m.to_le_bytes());
    p.extend_from_slice(&k.to_le_bytes());
    p.extend_from_slice(&width.to_le_bytes());
    p.extend_from_slice(&capacity.to_le_bytes());
    p.extend_from_slice(&fpp.to_le_bytes());
    p.extend_from_slice(&len.to_le_bytes());
    p
}

#[derive(Clone, Debug)]
enum Op {
    Insert(u8),
    /// Remove the model item at this index (modulo the number present), if any.
    Remove(usize),
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(
        prop_oneof![
            3 => (0u8..40).prop_map(Op::Insert),
            2 => any::<usize>().prop_map(Op::Remove),
        ],
        0..200,
    )
}

proptest! {
    #![proptest_config(config(300))]

    /// Random insert/remove sequences on small filters (repeated positions, saturation):
    /// after every step each item the model multiset holds is reported present, removing
    /// an item the model holds succeeds, and len is the model's size.
    #[test]
    fn removes_never_break_the_membership_of_items_still_in(
        m in 1u64..120,
        k in 1u32..8,
        width in prop::sample::select(vec![1u32, 2, 4, 8, 16]),
        seed in any::<u64>(),
        ops in ops(),
    ) {
        let mut filter = CountingBloomFilter::builder()
            .num_counters(m)
            .num_hashes(k)
            .counter_width(width)
            .seed(seed)
            .build()
            .unwrap();
        let mut model: HashMap<u8, u32> = HashMap::new();
        let mut size = 0u64;
        for op in ops {
            match op {
                Op::Insert(x) => {
                    filter.insert(&x);
                    *model.entry(x).or_default() += 1;
                    size += 1;
                }
                Op::Remove(i) => {
                    let mut present: Vec<u8> = model.keys().copied().collect();
                    if present.is_empty() {
                        continue;
                    }
                    present.sort_unstable();
                    let x = present[i % present.len()];
                    prop_assert_eq!(filter.remove(&x), Ok(true));
                    let c = model.get_mut(&x).unwrap();
                    *c -= 1;
                    if *c == 0 {
                        model.remove(&x);
                    }
                    size -= 1;
                }
            }
            for x in model.keys() {
                prop_assert!(filter.contains(x), "{} lost", x);
            }
            prop_assert_eq!(filter.len(), size);
        }
    }

    /// A filter sized for a random set finds every member.
    #[test]
    fn no_false_negatives(items in prop::collection::hash_set(any::<u64>(), 1..500), fpp in 0.001f64..0.5) {
        let mut filter = CountingBloomFilter::with_capacity(items.len() as u64, fpp).unwrap();
        filter.extend(items.iter());
        prop_assert!(items.iter().all(|x| filter.contains(x)));
    }

    /// Encoding and decoding keeps the filter and every answer.
    #[test]
    fn encode_decode_keeps_every_answer(
        items in prop::collection::vec(any::<u32>(), 0..300),
        width in prop::sample::select(vec![1u32, 3, 4, 8, 16]),
        seed in any::<u64>(),
    ) {
        let mut filter = CountingBloomFilter::builder()
            .capacity(200)
            .counter_width(width)
            .seed(seed)
            .build()
            .unwrap();
        filter.extend(items.iter());
        let bytes = filter.to_bytes();
        let back = CountingBloomFilter::from_bytes(&bytes).unwrap();
        prop_assert_eq!(&back, &filter);
        prop_assert!((0..2000u32).all(|x| back.contains(&x) == filter.contains(&x)));
        prop_assert_eq!(back.to_bytes(), bytes);
    }

    /// Arbitrary bytes are an error, never a panic.
    #[test]
    fn arbitrary_bytes_are_rejected(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        prop_assert!(CountingBloomFilter::from_bytes(&bytes).is_err());
    }

    /// Arbitrary parameters and payload behind a valid header and checksum: the decoder
    /// validates every field and never panics or allocates what the input does not hold.
    #[test]
    fn arbitrary_fields_with_a_valid_checksum_never_panic(
        m in prop_oneof![0u64..100, any::<u64>()],
        k in prop_oneof![0u32..70, any::<u32>()],
        width in prop_oneof![0u32..20, any::<u32>()],
        capacity in any::<u64>(),
        fpp in any::<f64>(),
        payload in prop::collection::vec(any::<u8>(), 0..80),
        extra in prop::collection::vec(any::<u8>(), 0..3),
    ) {
        let mut p = params(m, k, width, capacity, fpp, 0);
        p.extend_from_slice(&extra);
        let _ = CountingBloomFilter::from_bytes(&raw_file(3, &p, &payload));
        let _ = AnyFilter::from_bytes(&raw_file(3, &p, &payload));
    }
}

#[test]
fn every_flipped_byte_and_every_cut_is_an_error() {
    let mut filter = CountingBloomFilter::builder()
        .num_counters(40)
        .num_hashes(3)
        .build()
        .unwrap();
    filter.extend(["a", "b", "c"]);
    let bytes = filter.to_bytes();
    for i in 0..bytes.len() {
        let mut bad = bytes.clone();
        bad[i] ^= 0x5a;
        assert!(
            CountingBloomFilter::from_bytes(&bad).is_err(),
            "flip at {i}"
        );
        assert!(
            CountingBloomFilter::from_bytes(&bytes[..i]).is_err(),
            "cut at {i}"
        );
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(CountingBloomFilter::from_bytes(&longer).is_err());
}

#[test]
fn hostile_fields_are_typed_errors_before_any_allocation() {
    let invalid = |p: Vec<u8>, payload: &[u8]| {
        matches!(
            CountingBloomFilter::from_bytes(&raw_file(3, &p, payload)),
            Err(Error::Decode(bloomkit::DecodeError::InvalidField { .. }))
        )
    };
    // 2⁴⁰ bits of counters claimed, 8 bytes present.
    assert!(invalid(params(1 << 38, 3, 4, 10, 0.01, 0), &[0; 8]));
    assert!(invalid(params(u64::MAX, 3, 4, 10, 0.01, 0), &[0; 8]));
    assert!(invalid(params(16, 3, 4, 10, 0.01, 0), &[0; 16])); // 16 counters need 8 bytes
    assert!(invalid(params(0, 3, 4, 10, 0.01, 0), &[]));
    assert!(invalid(params(16, 0, 4, 10, 0.01, 0), &[0; 8]));
    assert!(invalid(params(16, 65, 4, 10, 0.01, 0), &[0; 8]));
    assert!(invalid(params(16, 3, 0, 10, 0.01, 0), &[0; 8]));
    assert!(invalid(params(16, 3, 17, 10, 0.01, 0), &[0; 8]));
    assert!(invalid(params(16, 3, 4, 0, 0.01, 0), &[0; 8]));
    assert!(invalid(params(16, 3, 4, 10, f64::NAN, 0), &[0; 8]));
    assert!(invalid(params(16, 3, 4, 10, 1.0, 0), &[0; 8]));
    // Bits outside any counter (15 counters of 4 bits leave the top 4 bits unused).
    let mut payload = [0u8; 8];
    payload[7] = 0xf0;
    assert!(invalid(params(15, 3, 4, 10, 0.01, 0), &payload));
    // A valid counting file with the Bloom tag is not a Bloom filter.
    assert!(bloomkit::BloomFilter::from_bytes(&raw_file(
        1,
        &params(16, 3, 4, 10, 0.01, 0),
        &[0; 8]
    ))
    .is_err());
    // And the same bytes with the right tag are fine.
    assert!(
        CountingBloomFilter::from_bytes(&raw_file(3, &params(16, 3, 4, 10, 0.01, 0), &[0; 8]))
            .is_ok()
    );
}

/// The documented, safe behaviour: a counter that reached 15 stays, so an item inserted
/// 20 times into 4-bit counters is still reported after 20 removes.
#[test]
fn saturated_counters_never_decrement() {
    let mut filter = CountingBloomFilter::with_capacity(1000, 0.01).unwrap();
    assert_eq!(filter.counter_width(), 4);
    for _ in 0..20 {
        filter.insert("hot");
    }
    assert!(filter.saturated_counters() >= 1);
    let saturated = filter.saturated_counters();
    for _ in 0..20 {
        assert_eq!(filter.remove("hot"), Ok(true));
    }
    assert!(filter.contains("hot"));
    assert_eq!(filter.saturated_counters(), saturated);
    assert!(filter
        .properties()
        .iter()
        .any(|(label, value)| *label == "saturated counters" && *value == saturated.to_string()));
}

#[test]
fn removing_an_absent_item_is_an_error_and_changes_nothing() {
    let mut filter = CountingBloomFilter::with_capacity(1000, 0.01).unwrap();
    filter.extend(0..500u32);
    let before = filter.to_bytes();
    let absent = (1000u32..).find(|x| !filter.contains(x)).unwrap();
    assert_eq!(filter.remove(&absent), Err(Error::NotPresent));
    assert_eq!(filter.to_bytes(), before);
    let mut empty = CountingBloomFilter::with_capacity(10, 0.01).unwrap();
    let before = empty.to_bytes();
    assert_eq!(Removable::remove(&mut empty, "x"), Err(Error::NotPresent));
    assert_eq!(empty.to_bytes(), before);
}

/// The counting filter answers as a Bloom filter of m bits: its measured false-positive
/// rate matches `(1 − (1 − 1/m)^(kn))^k` within a 99.9% interval.
#[test]
fn measured_fpr_matches_the_classic_formula() {
    let n = 20_000u64;
    let mut filter = CountingBloomFilter::with_capacity(n, 0.01).unwrap();
    assert_eq!(filter.num_counters(), optimal_num_bits(n, 0.01).unwrap());
    assert_eq!(
        filter.num_hashes(),
        optimal_num_hashes(filter.num_counters(), n)
    );
    filter.extend(0..n);
    let queries = 200_000u64;
    let fp = (n..n + queries).filter(|x| filter.contains(x)).count() as u64;
    let p = fpp_exact(filter.num_counters(), filter.num_hashes(), n);
    let (low, high) = binomial_acceptance(p, queries, Z_99_9);
    println!(
        "counting: {fp} false positives of {queries} (theory {:.0})",
        p * queries as f64
    );
    assert!(
        (low..=high).contains(&(fp as f64)),
        "{fp} not in [{low}, {high}]"
    );
}

#[test]
fn any_filter_reads_removes_and_merges_counting_filters() {
    let mut a = CountingBloomFilter::with_capacity(100, 0.01).unwrap();
    let mut b = a.clone();
    a.insert("left");
    b.insert("right");
    let mut any = AnyFilter::from_bytes(&a.to_bytes()).unwrap();
    assert_eq!(any.kind(), Kind::Counting);
    assert_eq!(any.kind().name(), "counting");
    assert_eq!(Kind::from_tag(3), Some(Kind::Counting));
    any.union(&AnyFilter::from(b.clone())).unwrap();
    assert!(any.contains("left") && any.contains("right"));
    assert_eq!(any.remove("left"), Ok(true));
    assert!(!any.contains("left"));
    assert_eq!(any.remove("left"), Err(Error::NotPresent));
    let bloom = AnyFilter::from(bloomkit::BloomFilter::with_capacity(100, 0.01).unwrap());
    assert!(matches!(any.union(&bloom), Err(Error::Incompatible(_))));
    // The trait path agrees with the inherent one.
    assert!(Mergeable::union(&mut a, &b).is_ok());
    assert!(Filter::contains(&a, "right"));
}
