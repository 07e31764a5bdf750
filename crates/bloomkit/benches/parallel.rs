//! Parallel insertion into the classic filter: three ways to do it, next to the sequential
//! loop, at n = 10⁶ (1.2 MB filter, about the size of a core's L2) and n = 10⁷ (12 MB, past
//! it), ε = 0.01, u64 keys, the default hashing:
//!
//! * `sequential` — `extend` on one thread;
//! * `partitioned` — [`BloomFilter::insert_parallel`], what the library does: positions
//!   sorted by bit region, each region set by one thread (exact sequential result);
//! * `atomic` — [`ConcurrentBloomFilter::insert_parallel`]: one shared array of atomic
//!   words, a `fetch_or` per bit;
//! * `shards` — one private filter per thread (`par_chunks`), merged by `union` (OR),
//!   written here with the public API only.
//!
//! Each iteration builds the whole filter from empty; times are per build.
//!
//! ```text
//! cargo bench -p bloomkit --features rayon --bench parallel
//! ```

use std::hint::black_box;
use std::time::Duration;

use bloomkit::{BloomFilter, ConcurrentBloomFilter, Mergeable};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use rayon::prelude::*;

const FPP: f64 = 0.01;

/// SplitMix64: distinct, well-spread keys from a counter.
fn key(i: u64) -> u64 {
    bloomkit::hash::SplitMix64::new(i).next_u64()
}

fn shards(empty: &BloomFilter, keys: &[u64]) -> BloomFilter {
    let per_thread = keys.len().div_ceil(rayon::current_num_threads());
    keys.par_chunks(per_thread)
        .map(|chunk| {
            let mut shard = empty.clone();
            shard.extend(chunk);
            shard
        })
        .reduce_with(|mut a, b| {
            a.union(&b).expect("same parameters");
            a
        })
        .unwrap_or_else(|| empty.clone())
}

fn parallel(c: &mut Criterion) {
    for n in [1_000_000u64, 10_000_000] {
        let keys: Vec<u64> = (0..n).map(key).collect();
        let empty = BloomFilter::with_capacity(n, FPP).unwrap();
        let mut group = c.benchmark_group(format!("build/{n}"));
        group.throughput(Throughput::Elements(n));
        group.sample_size(10);
        group.measurement_time(Duration::from_secs(if n > 1_000_000 { 20 } else { 5 }));
        group.bench_function("sequential", |b| {
            b.iter_batched_ref(
                || empty.clone(),
                |f| f.extend(black_box(&keys)),
                BatchSize::LargeInput,
            )
        });
        group.bench_function("partitioned", |b| {
            b.iter_batched_ref(
                || empty.clone(),
                |f| f.insert_parallel(black_box(&keys)),
                BatchSize::LargeInput,
            )
        });
        group.bench_function("atomic", |b| {
            b.iter_batched(
                || ConcurrentBloomFilter::from(empty.clone()),
                |f| f.insert_parallel(black_box(&keys)),
                BatchSize::LargeInput,
            )
        });
        group.bench_function("shards", |b| b.iter(|| shards(&empty, black_box(&keys))));
        group.finish();
    }
}

criterion_group!(benches, parallel);
criterion_main!(benches);
