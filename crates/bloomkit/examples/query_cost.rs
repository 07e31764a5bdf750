//! Instructions per query, for `valgrind --tool=callgrind` (repeatable on a loaded machine,
//! unlike wall-clock time): builds a filter of n u64 keys at ε = 1%, then answers Q queries
//! (half inserted keys, half absent) in one function, `measured`, which callgrind counts
//! alone with `--toggle-collect`.
//!
//! ```text
//! cargo build --release -p bloomkit --example query_cost
//! valgrind --tool=callgrind --toggle-collect='query_cost::measured*' --callgrind-out-file=/dev/null \
//!     target/release/examples/query_cost blocked single 1000000 100000
//! ```
//!
//! Arguments: kind (`blocked` with its default hash, `blocked-fold2`, `blocked-xxh3`, `blocked-murmur3`, `sbbf`, `classic`, or the peer
//! `sbbf-rs-safe` at 11 bits per key with XXH3-64 as in `benches/peers.rs`), path (`single` or
//! `batch`), n, Q. Divide the `Collected` instruction count by Q. `BLOOMKIT_FORCE_SCALAR=1`
//! measures the scalar kernels.

use std::hint::black_box;

use bloomkit::{BlockedBloomFilter, BloomFilter, Filter, HashFunction, SplitBlockBloomFilter};

mod common;
use common::key;

enum Subject {
    Blocked(BlockedBloomFilter),
    Sbbf(SplitBlockBloomFilter),
    Classic(BloomFilter),
    /// The peer, hashed with XXH3-64 as in `benches/peers.rs`.
    SbbfRs(sbbf_rs_safe::Filter),
}

#[inline(never)]
fn measured(filter: &Subject, batch: bool, queries: &[u64], out: &mut Vec<bool>) -> usize {
    match (filter, batch) {
        (Subject::Blocked(f), false) => queries.iter().filter(|&&k| f.contains_u64(k)).count(),
        (Subject::Sbbf(f), false) => queries.iter().filter(|&&k| f.contains_u64(k)).count(),
        (Subject::Classic(f), false) => queries.iter().filter(|&k| f.contains(k)).count(),
        (Subject::SbbfRs(f), _) => queries
            .iter()
            .filter(|&&k| f.contains_hash(xxhash_rust::xxh3::xxh3_64(&k.to_le_bytes())))
            .count(),
        (Subject::Blocked(f), true) => {
            f.contains_batch_u64(queries, out);
            out.iter().filter(|&&b| b).count()
        }
        (Subject::Sbbf(f), true) => {
            f.contains_batch_u64(queries, out);
            out.iter().filter(|&&b| b).count()
        }
        (Subject::Classic(f), true) => {
            f.contains_batch_into(queries, out);
            out.iter().filter(|&&b| b).count()
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage =
        "usage: query_cost blocked|blocked-fold2|blocked-xxh3|blocked-murmur3|sbbf|classic|sbbf-rs-safe single|batch N Q";
    let [_, kind, path, n, q] = &args[..] else {
        panic!("{usage}")
    };
    let (n, q): (u64, u64) = (n.parse().expect(usage), q.parse().expect(usage));
    let keys: Vec<u64> = (0..n).map(key).collect();
    let filter = match kind.as_str() {
        "blocked" | "blocked-fold2" | "blocked-xxh3" | "blocked-murmur3" => {
            let function = match kind.as_str() {
                "blocked" => {
                    BlockedBloomFilter::with_capacity(1, 0.5)
                        .unwrap()
                        .hashing()
                        .function
                }
                "blocked-fold2" => HashFunction::Fold2,
                "blocked-xxh3" => HashFunction::Xxh3,
                _ => HashFunction::Murmur3,
            };
            let mut f = BlockedBloomFilter::builder()
                .capacity(n)
                .fpp(0.01)
                .hash_function(function)
                .build()
                .unwrap();
            f.insert_batch_u64(&keys);
            Subject::Blocked(f)
        }
        "sbbf" => {
            let mut f = SplitBlockBloomFilter::with_capacity(n, 0.01).unwrap();
            f.insert_batch_u64(&keys);
            Subject::Sbbf(f)
        }
        "sbbf-rs-safe" => {
            let mut f = sbbf_rs_safe::Filter::new(11, n as usize);
            for k in &keys {
                f.insert_hash(xxhash_rust::xxh3::xxh3_64(&k.to_le_bytes()));
            }
            Subject::SbbfRs(f)
        }
        "classic" => {
            let mut f = BloomFilter::with_capacity(n, 0.01).unwrap();
            f.extend(keys.iter().copied());
            Subject::Classic(f)
        }
        _ => panic!("{usage}"),
    };
    let queries: Vec<u64> = (0..q)
        .map(|i| {
            if i % 2 == 0 {
                keys[(i / 2 % n) as usize]
            } else {
                key(n + i)
            }
        })
        .collect();
    let mut out = Vec::with_capacity(queries.len());
    let found = measured(&filter, path == "batch", &queries, &mut out);
    println!(
        "{kind} {path}: {} of {q} maybe, kernels {}",
        black_box(found),
        bloomkit::arch::simd_level().name()
    );
}
