//! Property and behaviour tests of the counting Bloom filter.
//!
//! The contract every kind keeps (no false negatives, removes keep the others, round trip,
//! corrupt bytes refused, merges) is checked by the conformance suite, `every_kind.rs`.

use crate::conformance;

use bloomkit::params::{fpp_exact, optimal_num_bits, optimal_num_hashes};
use bloomkit::stats::{binomial_acceptance, Z_99_9};
use bloomkit::{AnyFilter, CountingBloomFilter, Persist};
use conformance::{config, is_invalid_field, raw_file};
use proptest::prelude::*;

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

proptest! {
    #![proptest_config(config(300))]

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
fn hostile_fields_are_typed_errors_before_any_allocation() {
    let invalid = |p: Vec<u8>, payload: &[u8]| {
        is_invalid_field::<CountingBloomFilter>(&raw_file(3, &p, payload))
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
    assert!(invalid(params(16, 3, 4, 10, 1.5, 0), &[0; 8]));
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

/// A stored counter width outside 1..=16, and more counters than the crate allows, are
/// refused under their own field names (the checks the counter kinds share), not as a
/// payload that happens not to fit.
#[test]
fn counter_width_and_count_are_refused_by_name() {
    let field = |p: Vec<u8>, payload: &[u8]| match CountingBloomFilter::from_bytes(&raw_file(
        3, &p, payload,
    )) {
        Err(bloomkit::Error::Decode(bloomkit::DecodeError::InvalidField { field, .. })) => field,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        field(params(16, 3, 0, 10, 0.01, 0), &[0; 8]),
        "counter_width"
    );
    assert_eq!(
        field(params(16, 3, 17, 10, 0.01, 0), &[0; 8]),
        "counter_width"
    );
    assert_eq!(field(params(0, 3, 4, 10, 0.01, 0), &[0; 8]), "num_counters");
    assert_eq!(
        field(params(1 << 40, 3, 4, 10, 0.01, 0), &[0; 8]),
        "num_counters"
    );
}

/// The documented, safe behaviour: a counter that reached 15 stays, so an item inserted
/// 20 times into 4-bit counters is still reported after 20 removes.
#[test]
fn saturated_counters_never_decrement() {
    let filter = CountingBloomFilter::with_capacity(1000, 0.01).unwrap();
    assert_eq!(filter.counter_width(), 4);
    conformance::saturated_counters_never_decrement(filter, 20);
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
