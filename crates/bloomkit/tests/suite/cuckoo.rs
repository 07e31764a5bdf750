//! Property tests and the paper's experiments for the cuckoo filter. The contract every
//! kind keeps (no false negatives, removes keep the others, round trip, corrupt bytes
//! refused, `try_extend` stopping when full) is checked by the conformance suite,
//! `every_kind.rs`.

use crate::conformance;

use std::collections::HashMap;

use bloomkit::cuckoo::Layout;
use bloomkit::params;
use bloomkit::stats::{binomial_acceptance, wilson_interval, Z_99_9};
use bloomkit::{CuckooFilter, Error, Filter, Kind, Persist, Removable};
use conformance::{config, reseal};
use proptest::prelude::*;

/// Inserts 0, 1, 2, … until the first insert fails; returns the filter and the items in.
fn fill_until_full(mut filter: CuckooFilter) -> (CuckooFilter, u64) {
    let mut next = 0u64;
    loop {
        match filter.insert(&next) {
            Ok(_) => next += 1,
            Err(Error::Full {
                kind: Kind::Cuckoo, ..
            }) => return (filter, next),
            Err(e) => panic!("unexpected error {e}"),
        }
    }
}

/// Removes every tenth of the items 0 … inserted − 1 from a full filter: the victim moves
/// in, the filter is no longer full, and every other item is still there.
fn free_a_tenth_and_check_the_rest(filter: &mut CuckooFilter, inserted: u64) {
    for i in (0..inserted).step_by(10) {
        filter.remove(&i).unwrap();
    }
    assert!(!filter.is_full());
    assert!((0..inserted)
        .filter(|i| i % 10 != 0)
        .all(|i| filter.contains(&i)));
}

fn table(num_buckets: u64, fingerprint_bits: u32, seed: u64) -> CuckooFilter {
    CuckooFilter::builder()
        .num_buckets(num_buckets)
        .fingerprint_bits(fingerprint_bits)
        .seed(seed)
        .build()
        .unwrap()
}

/// Fan et al. (2014): with buckets of 4 slots, partial-key cuckoo
/// hashing fills about 95% of the table before the first insert fails.
#[test]
fn buckets_of_four_fill_at_least_95_percent_before_the_first_failure() {
    for (buckets, bits) in [
        (1u64 << 12, 8u32),
        (1 << 12, 12),
        (1 << 16, 8),
        (1 << 16, 12),
        (1 << 16, 16),
        // Any bucket count (the subtraction map), and the widths ε picks.
        (3_001, 10),
        (65_537, 9),
        (50_000, 12),
    ] {
        let (filter, inserted) = fill_until_full(table(buckets, bits, 1));
        let load = filter.load_factor();
        eprintln!(
            "b = 4, f = {bits}, {buckets} buckets: first failure after {inserted} items, \
             load factor {:.4}",
            load
        );
        assert!(
            load >= 0.95,
            "load factor {load} with {buckets} buckets, f = {bits}"
        );
    }
}

/// Once the filter is full, nothing that went in before is lost.
#[test]
fn after_the_first_failed_insert_every_earlier_item_is_found() {
    for bucket_size in [2, 4, 8] {
        let filter = CuckooFilter::builder()
            .num_buckets(1 << 10)
            .bucket_size(bucket_size)
            .fingerprint_bits(16)
            .build()
            .unwrap();
        let (mut filter, inserted) = fill_until_full(filter);
        assert!(filter.is_full());
        assert_eq!(filter.len(), inserted);
        assert!(
            (0..inserted).all(|i| filter.contains(&i)),
            "b = {bucket_size}"
        );
        // More failed inserts change nothing.
        let before = filter.clone();
        for i in inserted..inserted + 100 {
            assert!(filter.insert(&i).is_err());
        }
        assert_eq!(filter, before);
        // Removing items makes room (the victim moves in), and the rest are all still there.
        free_a_tenth_and_check_the_rest(&mut filter, inserted);
    }
}

/// The insert's breadth-first search finds chains of up to `SEARCH_DEPTH` moves where a
/// random walk of as many kicks gives up: with `max_kicks` = 3, tables of at least
/// `LARGE_TABLE_BYTES` still fill past 90% before the first failure, and nothing that went
/// in is lost, nor after removes let the victim back in. Smaller tables only walk, and 3
/// kicks leave them far emptier (43% measured).
#[test]
fn the_search_fills_large_tables_that_a_few_kicks_alone_cannot() {
    let three_kicks = |buckets| {
        CuckooFilter::builder()
            .num_buckets(buckets)
            .fingerprint_bits(16)
            .max_kicks(bloomkit::cuckoo::SEARCH_DEPTH)
            .seed(3)
            .build()
            .unwrap()
    };
    // 8 bytes a bucket: 2^20 buckets are exactly 8 MiB; 1 100 001 is not a power of two.
    for buckets in [1u64 << 20, 1_100_001] {
        let filter = three_kicks(buckets);
        assert!(filter.memory_bytes() >= bloomkit::cuckoo::LARGE_TABLE_BYTES);
        let (mut filter, inserted) = fill_until_full(filter);
        let load = filter.load_factor();
        eprintln!("{buckets} buckets, 3 kicks: load {load:.4} at the first failure");
        assert!(load >= 0.90, "load {load} with {buckets} buckets");
        assert!((0..inserted).all(|i| filter.contains(&i)));
        free_a_tenth_and_check_the_rest(&mut filter, inserted);
    }
    let (small, _) = fill_until_full(three_kicks(1 << 12));
    assert!(small.memory_bytes() < bloomkit::cuckoo::LARGE_TABLE_BYTES);
    assert!(small.load_factor() < 0.8, "load {}", small.load_factor());
}

/// `insert_batch` leaves the filter exactly as the single inserts in order do (the table,
/// the victim, the generator), reports the same new items, and is refused at the same
/// item; `contains_batch` answers as `contains`. Tables that fill up, that do not, and one
/// larger than the caches' first two levels.
#[test]
fn batch_calls_answer_and_insert_exactly_like_single_calls() {
    let key = |i: u64| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5bd1_e995;
    for (buckets, bits, count) in [
        (1_000u64, 12u32, 5_000u64), // past full: refused part way
        (20_000, 10, 60_000),
        (400_000, 16, 200_000),   // 3.2 MB
        (1 << 20, 16, 4_500_000), // 8 MiB: the windowed batch insert, refused part way
    ] {
        let empty = table(buckets, bits, 5);
        let items: Vec<u64> = (0..count).map(key).collect();
        let mut single = empty.clone();
        let mut new = 0u64;
        let mut refused_at = None;
        for (j, item) in items.iter().enumerate() {
            match single.insert(item) {
                Ok(is_new) => new += is_new as u64,
                Err(Error::Full { .. }) => {
                    refused_at = Some(j);
                    break;
                }
                Err(e) => panic!("{e}"),
            }
        }
        let mut batch = empty.clone();
        let result = batch.insert_batch(&items);
        assert_eq!(
            batch, single,
            "{buckets} buckets: the batch left another table"
        );
        match refused_at {
            Some(j) => {
                assert!(matches!(result, Err(Error::Full { .. })), "{result:?}");
                assert_eq!(batch.len(), j as u64);
            }
            None => assert_eq!(result.unwrap(), new),
        }
        let queries: Vec<u64> = (count / 2..count + count / 2).map(key).collect();
        let expected: Vec<bool> = queries.iter().map(|q| single.contains(q)).collect();
        assert_eq!(batch.contains_batch(&queries), expected);
        assert!(expected.iter().any(|&b| b) && expected.iter().any(|&b| !b));
    }
}

/// Fan et al. (2014): at load α a query compares its fingerprint with 2bα
/// slots, so ε = 1 − (1 − 2^−f)^(2bα) ≤ 2b/2^f.
fn check_fpr_at_full_load(buckets: u64, bits: u32, queries: u64) {
    let (filter, inserted) = fill_until_full(table(buckets, bits, 2));
    let false_positives = (0..queries)
        .filter(|i| filter.contains(&((1u64 << 40) + i)))
        .count() as u64;
    let rate = false_positives as f64 / queries as f64;
    let load = filter.load_factor();
    let theory = params::cuckoo_fpp(bits, 4, load);
    let bound = params::cuckoo_fpp_bound(bits, 4);
    let (low, high) = wilson_interval(false_positives, queries, Z_99_9);
    eprintln!(
        "f = {bits}: {inserted} items, load {load:.4}, {false_positives} false positives in \
         {queries}: measured {rate:.3e} (99.9% Wilson {low:.3e}–{high:.3e}), theory \
         1 − (1 − 2^−f)^(2bα) = {theory:.3e}, bound 2b/2^f = {bound:.3e}; {:.2} bits per item",
        filter.memory_bytes() as f64 * 8.0 / inserted as f64
    );
    let (min, max) = binomial_acceptance(theory, queries, Z_99_9);
    assert!(
        (min..=max).contains(&(false_positives as f64)),
        "{false_positives} false positives, theory {:.0} ({min:.0}–{max:.0})",
        theory * queries as f64
    );
    assert!(low < bound, "measured rate significantly above 2b/2^f");
}

#[test]
fn fpr_at_full_load_matches_theory_with_8_bit_fingerprints() {
    check_fpr_at_full_load(1 << 14, 8, 500_000);
}

#[test]
fn fpr_at_full_load_matches_theory_with_12_bit_fingerprints() {
    check_fpr_at_full_load(1 << 14, 12, 1_000_000);
}

#[test]
fn fpr_at_full_load_matches_theory_with_16_bit_fingerprints() {
    check_fpr_at_full_load(1 << 14, 16, 2_000_000);
}

#[test]
fn fpr_at_full_load_matches_theory_with_10_bit_fingerprints_in_any_table() {
    check_fpr_at_full_load(15_013, 10, 1_000_000);
}

/// `with_capacity(n, ε)` sizes the table to 95% load at n, not to the next power of two:
/// every one of the n items goes in, the measured rate is not significantly above ε, and
/// the memory is within 1.1× of f/α bits per item (Fan et al.'s space per item).
#[test]
fn with_capacity_holds_its_items_at_its_rate_in_little_more_than_f_over_alpha_bits() {
    let queries = 400_000u64;
    for (n, fpp) in [
        (1_000u64, 0.01),
        (100_003, 0.01),
        (100_003, 0.001),
        (30_000, 0.05),
    ] {
        let mut filter = CuckooFilter::with_capacity(n, fpp).unwrap();
        filter.try_extend(0..n).unwrap();
        assert_eq!(filter.len(), n, "n {n} ε {fpp}");
        let false_positives = (0..queries)
            .filter(|i| filter.contains(&((1u64 << 40) + i)))
            .count() as u64;
        let (low, _) = wilson_interval(false_positives, queries, Z_99_9);
        assert!(
            low <= fpp,
            "n {n} ε {fpp}: {false_positives} false positives"
        );
        let f = filter.fingerprint_bits() as f64;
        let bits_per_item = filter.memory_bytes() as f64 * 8.0 / n as f64;
        let ideal = f / params::CUCKOO_TARGET_LOAD;
        eprintln!("n {n} ε {fpp}: f = {f}, {bits_per_item:.2} bits per item, f/α = {ideal:.2}");
        // Tiny tables pay for a last, partly used word; from 10⁵ items on the bound is tight.
        if n >= 100_000 {
            assert!(
                bits_per_item <= 1.1 * ideal,
                "n {n} ε {fpp}: {bits_per_item}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------

#[derive(Clone, Debug)]
enum Op {
    Insert(u32),
    /// Removes an item of the model (skipped if the model has none of it).
    Remove(u32),
    /// Removes an item never inserted (skipped if it is a false positive).
    RemoveAbsent(u32),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..40u32).prop_map(Op::Insert),
        3 => (0..40u32).prop_map(Op::Remove),
        1 => (1_000..1_100u32).prop_map(Op::RemoveAbsent),
    ]
}

fn small_filter() -> impl Strategy<Value = CuckooFilter> {
    (
        prop::sample::select(vec![1u64, 2, 3, 4, 5, 7, 8, 16]),
        prop::sample::select(vec![2u32, 4, 8]),
        prop::sample::select(vec![4u32, 8, 10, 12, 16]),
        prop::sample::select(vec![0u32, 3, 500]),
        any::<u64>(),
    )
        .prop_map(|(buckets, bucket_size, bits, kicks, seed)| {
            CuckooFilter::builder()
                .num_buckets(buckets)
                .bucket_size(bucket_size)
                .fingerprint_bits(bits)
                .max_kicks(kicks)
                .seed(seed)
                .build()
                .unwrap()
        })
}

/// Every item of the model is present with at least its multiplicity, and the filter holds
/// exactly as many fingerprints as the model has copies.
fn check_against_model(
    filter: &CuckooFilter,
    model: &HashMap<u32, u32>,
) -> Result<(), TestCaseError> {
    for (&item, &copies) in model {
        if copies > 0 {
            prop_assert!(
                filter.contains(&item),
                "{item} ({copies} copies) is missing"
            );
            prop_assert!(filter.count(&item) >= copies, "count({item}) < {copies}");
        }
    }
    prop_assert_eq!(filter.len(), model.values().map(|&c| c as u64).sum::<u64>());
    Ok(())
}

proptest! {
    #![proptest_config(config(256))]

    /// Interleaved inserts and removes against a model multiset: every copy stays counted
    /// (`count` is at least the model's), and the file format keeps the counts.
    #[test]
    fn random_inserts_and_removes_never_lose_an_item(
        mut filter in small_filter(),
        ops in prop::collection::vec(op(), 0..200),
    ) {
        let mut model: HashMap<u32, u32> = HashMap::new();
        for op in ops {
            match op {
                Op::Insert(item) => {
                    let before = filter.clone();
                    match filter.insert(&item) {
                        Ok(_) => *model.entry(item).or_default() += 1,
                        Err(Error::Full { .. }) => {
                            prop_assert!(before.is_full());
                            prop_assert_eq!(&filter, &before, "a failed insert changed the filter");
                        }
                        Err(e) => return Err(TestCaseError::fail(format!("insert: {e}"))),
                    }
                }
                Op::Remove(item) => {
                    let copies = model.entry(item).or_default();
                    if *copies > 0 {
                        prop_assert_eq!(Removable::remove(&mut filter, &item), Ok(true));
                        *copies -= 1;
                    }
                }
                Op::RemoveAbsent(item) => {
                    if !filter.contains(&item) {
                        let before = filter.clone();
                        prop_assert_eq!(
                            filter.remove(&item),
                            Err(Error::NotPresent)
                        );
                        prop_assert_eq!(&filter, &before);
                    }
                }
            }
            check_against_model(&filter, &model)?;
        }
        // The file format keeps every answer, the counts, and the state of the generator.
        let back = CuckooFilter::from_bytes(&filter.to_bytes()).unwrap();
        prop_assert_eq!(&back, &filter);
        for item in (0..40u32).chain(1_000..1_100) {
            prop_assert_eq!(back.contains(&item), filter.contains(&item));
            prop_assert_eq!(back.count(&item), filter.count(&item));
        }
    }

}

/// Overwrites the parameter bytes at `offset` (from the start of the parameters) and
/// reseals.
fn patch_params(filter: &CuckooFilter, offset: usize, value: &[u8]) -> Vec<u8> {
    let mut bytes = filter.to_bytes();
    let at = 28 + offset;
    bytes[at..at + value.len()].copy_from_slice(value);
    reseal(&mut bytes);
    bytes
}

#[test]
fn lying_fields_are_typed_decode_errors() {
    let mut filter = table(8, 16, 4);
    filter.try_extend(0..10u32).unwrap();
    let decode = |bytes: &[u8]| match CuckooFilter::from_bytes(bytes) {
        Err(Error::Decode(e)) => e.to_string(),
        other => panic!("expected a decode error, got {other:?}"),
    };
    // Parameter offsets: num_buckets 0, bucket_size 8, fingerprint_bits 12, max_kicks 16,
    // capacity 20, target_fpp 28, len 36, rng 44, victim bucket 52, victim fingerprint 60.
    let cases: Vec<(usize, Vec<u8>, &str)> = vec![
        (0, 1u64.to_le_bytes().to_vec(), "payload"), // fewer buckets than the table
        (0, 0u64.to_le_bytes().to_vec(), "at least 1"),
        (0, 9u64.to_le_bytes().to_vec(), "payload"), // any count, but not this table's
        (0, (1u64 << 62).to_le_bytes().to_vec(), "too large"),
        (8, 5u32.to_le_bytes().to_vec(), "bucket_size"),
        (12, 17u32.to_le_bytes().to_vec(), "fingerprint_bits"),
        (12, 3u32.to_le_bytes().to_vec(), "fingerprint_bits"),
        (16, u32::MAX.to_le_bytes().to_vec(), "max_kicks"),
        (20, 0u64.to_le_bytes().to_vec(), "capacity"),
        (28, f64::NAN.to_le_bytes().to_vec(), "target_fpp"),
        (36, 11u64.to_le_bytes().to_vec(), "len"),
        (36, u64::MAX.to_le_bytes().to_vec(), "len"),
        (52, 3u64.to_le_bytes().to_vec(), "victim"), // a bucket without a fingerprint
        (60, 1u32.to_le_bytes().to_vec(), "len"),    // a victim the count does not know
        (60, 0x1_0000u32.to_le_bytes().to_vec(), "victim"), // wider than 16 bits
    ];
    for (offset, value, needle) in cases {
        let message = decode(&patch_params(&filter, offset, &value));
        assert!(message.contains(needle), "offset {offset}: {message}");
    }
    // A victim in a bucket past the table.
    let mut bytes = patch_params(&filter, 52, &100u64.to_le_bytes());
    bytes[28 + 60..28 + 64].copy_from_slice(&7u32.to_le_bytes());
    reseal(&mut bytes);
    assert!(decode(&bytes).contains("victim"));
    // The k-hash index scheme does not apply to a cuckoo filter.
    let mut bytes = filter.to_bytes();
    bytes[12] = 2;
    reseal(&mut bytes);
    assert!(decode(&bytes).contains("index scheme"));
}

/// RedisBloom's layout refused an absurd capacity with "the number of buckets for …
/// items overflows 64 bits" (`Error::SizeOverflow`), and one past the crate's size
/// limit in bits; both layouts, like every kind, name the capacity asked for.
#[test]
fn an_absurd_capacity_is_too_large_in_either_layout() {
    for layout in [Layout::Paper, Layout::RedisBloom] {
        for (capacity, fpp) in [(u64::MAX, None), (1 << 62, Some(0.5)), (1 << 45, None)] {
            let mut b = CuckooFilter::builder().layout(layout).capacity(capacity);
            if let Some(fpp) = fpp {
                b = b.fpp(fpp);
            }
            match b.build() {
                Err(Error::CapacityTooLarge {
                    capacity: c,
                    fpp: e,
                    max: params::MAX_NUM_BITS,
                }) => {
                    assert_eq!(c, capacity, "{layout:?}");
                    assert!(e > 0.0 && e < 1.0, "{layout:?} {capacity}: ε = {e}");
                    if let Some(fpp) = fpp {
                        assert_eq!(e, fpp, "{layout:?}");
                    }
                }
                other => panic!("{layout:?} {capacity}: {other:?}"),
            }
        }
    }
}
