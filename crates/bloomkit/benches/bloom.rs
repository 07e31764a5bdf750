//! The classic Bloom filter at n = 1 000 000, ε = 0.01 (m ≈ 9.6 Mbit = 1.2 MB, k = 7):
//! insert, positive query and negative query, per item, for u64 keys and 16-byte string
//! keys, under both hash functions and both index schemes. Then the blocked filter at the
//! same n and ε (u64 keys: the Item path and the integer fast path), and the batch
//! queries of both kinds (`batch-query-*`).
//!
//! For the side-by-side comparison with the peer crates see `benches/peers.rs`.
//!
//! Each iteration handles a batch of keys taken in turn from a million pre-generated
//! ones, so the accesses spread over the whole filter as they do in use; the throughput
//! is reported per item.
//!
//! ```text
//! cargo bench -p bloomkit --bench bloom                 # full run
//! cargo bench -p bloomkit --bench bloom -- --quick      # a quick look
//! cargo bench -p bloomkit --bench bloom -- 'query-negative/u64'
//! ```

use std::hint::black_box;
use std::time::Duration;

use bloomkit::{BlockedBloomFilter, BloomFilter, HashFunction, IndexScheme, Item};
use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};

const ITEMS: u64 = 1_000_000;
const FPP: f64 = 0.01;
/// Items per iteration.
const BATCH: usize = 1024;

const CONFIGS: [(HashFunction, IndexScheme); 4] = [
    (HashFunction::Murmur3, IndexScheme::EnhancedDoubleHashing),
    (HashFunction::Xxh3, IndexScheme::EnhancedDoubleHashing),
    (HashFunction::Murmur3, IndexScheme::SeededHashes),
    (HashFunction::Xxh3, IndexScheme::SeededHashes),
];

/// SplitMix64: distinct, well-spread keys from a counter.
fn key(i: u64) -> u64 {
    bloomkit::hash::SplitMix64::new(i).next_u64()
}

/// Keys of one type: `ITEMS` to insert (and query positively) and `ITEMS` others.
struct Keys<K> {
    present: Vec<K>,
    absent: Vec<K>,
}

impl<K> Keys<K> {
    fn new(make: impl Fn(u64) -> K) -> Self {
        Self {
            present: (0..ITEMS).map(&make).collect(),
            absent: (ITEMS..2 * ITEMS).map(&make).collect(),
        }
    }
}

fn build(function: HashFunction, scheme: IndexScheme) -> BloomFilter {
    BloomFilter::builder()
        .capacity(ITEMS)
        .fpp(FPP)
        .hash_function(function)
        .index_scheme(scheme)
        .seed(42)
        .build()
        .expect("valid parameters")
}

/// `function/scheme`, the benchmark's name within a group.
fn config_name(function: HashFunction, scheme: IndexScheme) -> String {
    format!("{}/{}", function.name(), scheme.name())
}

/// The next batch of `keys`, cycling through them.
fn next_batch<'a, K>(keys: &'a [K], cursor: &mut usize) -> &'a [K] {
    if *cursor + BATCH > keys.len() {
        *cursor = 0;
    }
    let batch = &keys[*cursor..*cursor + BATCH];
    *cursor += BATCH;
    batch
}

/// A group `op/key_name`, with throughput counted in items.
fn group_for<'a>(c: &'a mut Criterion, op: &str, key_name: &str) -> BenchmarkGroup<'a, WallTime> {
    let mut group = c.benchmark_group(format!("{op}/{key_name}"));
    group.throughput(Throughput::Elements(BATCH as u64));
    group
}

fn bench_key_type<K: Item>(c: &mut Criterion, key_name: &str, keys: &Keys<K>) {
    let mut group = group_for(c, "insert", key_name);
    for (function, scheme) in CONFIGS {
        let mut filter = build(function, scheme);
        let mut cursor = 0;
        group.bench_function(config_name(function, scheme), |b| {
            b.iter(|| {
                for k in next_batch(&keys.present, &mut cursor) {
                    black_box(filter.insert(k));
                }
            })
        });
    }
    group.finish();

    // The query benches share one full filter per configuration.
    let filters: Vec<BloomFilter> = CONFIGS
        .iter()
        .map(|&(function, scheme)| {
            let mut filter = build(function, scheme);
            for k in &keys.present {
                filter.insert(k);
            }
            filter
        })
        .collect();

    for (op, queried, all_hits) in [
        ("query-positive", &keys.present, true),
        ("query-negative", &keys.absent, false),
    ] {
        let mut group = group_for(c, op, key_name);
        for (filter, &(function, scheme)) in filters.iter().zip(&CONFIGS) {
            let mut cursor = 0;
            group.bench_function(config_name(function, scheme), |b| {
                b.iter(|| {
                    let mut hits = 0usize;
                    for k in next_batch(queried, &mut cursor) {
                        hits += filter.contains(black_box(k)) as usize;
                    }
                    hits
                })
            });
            // Not a timing check: the benchmark measured what its name says.
            let hits = queried.iter().take(10_000).filter(|k| filter.contains(*k));
            let hits = hits.count();
            if all_hits {
                assert_eq!(hits, 10_000, "positive queries must all hit");
            } else {
                assert!(hits < 500, "negative queries hit {hits} of 10 000");
            }
        }
        group.finish();
    }
}

/// The blocked filter (u64 keys) and the batch queries of both kinds.
fn blocked_and_batches(c: &mut Criterion, keys: &Keys<u64>) {
    let fresh = || BlockedBloomFilter::with_capacity(ITEMS, FPP).expect("valid parameters");
    let mut group = group_for(c, "insert", "u64");
    let mut filter = fresh();
    let mut cursor = 0;
    group.bench_function("blocked/item", |b| {
        b.iter(|| {
            for k in next_batch(&keys.present, &mut cursor) {
                black_box(filter.insert(k));
            }
        })
    });
    let mut filter = fresh();
    group.bench_function("blocked/u64-fast-path", |b| {
        b.iter(|| {
            for &k in next_batch(&keys.present, &mut cursor) {
                black_box(filter.insert_u64(k));
            }
        })
    });
    let mut filter = fresh();
    group.bench_function("blocked/batch-u64", |b| {
        b.iter(|| filter.insert_batch_u64(next_batch(&keys.present, &mut cursor)))
    });
    group.finish();

    let mut blocked = fresh();
    blocked.insert_batch_u64(&keys.present);
    let mut classic = build(HashFunction::Murmur3, IndexScheme::EnhancedDoubleHashing);
    classic.insert_batch(&keys.present);
    for (op, queried) in [("positive", &keys.present), ("negative", &keys.absent)] {
        let mut group = group_for(c, &format!("query-{op}"), "u64");
        group.bench_function("blocked/item", |b| {
            b.iter(|| {
                let batch = next_batch(queried, &mut cursor);
                batch
                    .iter()
                    .filter(|k| blocked.contains(black_box(*k)))
                    .count()
            })
        });
        group.bench_function("blocked/u64-fast-path", |b| {
            b.iter(|| {
                let batch = next_batch(queried, &mut cursor);
                batch
                    .iter()
                    .filter(|&&k| blocked.contains_u64(black_box(k)))
                    .count()
            })
        });
        group.finish();

        let mut group = group_for(c, &format!("batch-query-{op}"), "u64");
        let mut out = Vec::with_capacity(BATCH);
        group.bench_function("classic/item", |b| {
            b.iter(|| {
                classic.contains_batch_into(next_batch(queried, &mut cursor), &mut out);
                out.iter().filter(|&&x| x).count()
            })
        });
        group.bench_function("blocked/item", |b| {
            b.iter(|| {
                blocked.contains_batch_into(next_batch(queried, &mut cursor), &mut out);
                out.iter().filter(|&&x| x).count()
            })
        });
        group.bench_function("blocked/u64-fast-path", |b| {
            b.iter(|| {
                blocked.contains_batch_u64(next_batch(queried, &mut cursor), &mut out);
                out.iter().filter(|&&x| x).count()
            })
        });
        group.finish();
    }
}

fn bloom(c: &mut Criterion) {
    let integers = Keys::new(key);
    bench_key_type(c, "u64", &integers);
    blocked_and_batches(c, &integers);
    drop(integers);

    // 16-byte strings: the key in hexadecimal.
    let strings = Keys::new(|i| format!("{:016x}", key(i)));
    debug_assert!(strings.present.iter().all(|s| s.len() == 16));
    bench_key_type(c, "str16", &strings);
}

criterion_group! {
    name = benches;
    // Short defaults so that the whole set (24 benchmarks) takes about a minute; the
    // command line (--measurement-time, --warm-up-time, --quick) overrides them.
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(30);
    targets = bloom
}
criterion_main!(benches);
