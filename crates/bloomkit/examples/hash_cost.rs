//! What a cheaper hash would buy the split-block filter's single queries, and what it
//! would cost in accuracy: the measurement behind BENCHMARKS.md's answer to issue 11's
//! single-query target (≤ 0.8× sbbf-rs-safe).
//!
//! ```sh
//! cargo run --release -p bloomkit --example hash_cost -- speed 1000000     # or 100000000
//! cargo run --release -p bloomkit --example hash_cost -- fpr
//! ```
//!
//! `speed N`: N random `u64` keys in split-block filters of sbbf-rs-safe's size (11 bits per
//! key), each filled and queried through `insert_hash` / `contains_hash` with one hash:
//! XXH64 (Parquet's, what `contains_u64` computes), XXH3-64 (what the peers bench gives
//! sbbf-rs-safe), two rounds of a 64×64→128-bit multiply folded by XOR (wyhash's and
//! rapidhash's mixing step), and one such round. Prints ns per query (median of 7 runs of
//! 10⁶ absent and 10⁶ present keys) next to sbbf-rs-safe with XXH3-64, in the same run, and
//! (on Linux) how much of bloomkit's filters the kernel backs with huge pages; run it with
//! `BLOOMKIT_NO_HUGE_PAGES=1` to compare without them.
//!
//! `fpr`: the same hashes on structured keys (consecutive, strided, byte-swapped, digit
//! strings, a 2-D grid) in a filter of 10⁶ keys at 11 bits per key; the measured FPR over
//! 4·10⁶ absent keys of the same structure, in standard deviations from the formula's rate.
//! A hash good enough for a Bloom filter stays within about ±3 on every row.

use std::hint::black_box;
use std::time::Instant;

use bloomkit::SplitBlockBloomFilter;

mod common;
use common::key as random_key;

/// The 128-bit product of `a` and `b`, its halves folded by XOR.
#[inline(always)]
fn fold_multiply(a: u64, b: u64) -> u64 {
    let product = a as u128 * b as u128;
    (product as u64) ^ ((product >> 64) as u64)
}

// The constants are rapidhash's published secrets (any odd, dense constants would do).
#[inline(always)]
fn one_round(key: u64) -> u64 {
    fold_multiply(key ^ 0x2d35_8dcc_aa6c_78a5, 0x8bb8_4b93_962e_acc9)
}

#[inline(always)]
fn two_rounds(key: u64) -> u64 {
    fold_multiply(
        one_round(key) ^ 0x4b33_a62e_d433_d4a3,
        0x4d5a_2da5_1de1_aa47,
    )
}

#[inline(always)]
fn xxh3(key: u64) -> u64 {
    xxhash_rust::xxh3::xxh3_64(&key.to_le_bytes())
}

#[inline(always)]
fn xxh64(key: u64) -> u64 {
    bloomkit::hash::xxh64_u64(key, 0)
}

/// A 64-bit hash of a `u64` key.
type Hash = fn(u64) -> u64;

const HASHES: [(&str, Hash); 4] = [
    ("XXH64 (Parquet's)", xxh64),
    ("XXH3-64", xxh3),
    ("2 multiply-folds", two_rounds),
    ("1 multiply-fold", one_round),
];

/// One query loop per hash, each compiled on its own (as the peers bench does), so that
/// the code around one cannot slow another.
#[inline(never)]
fn count_with<const H: usize>(filter: &SplitBlockBloomFilter, keys: &[u64]) -> usize {
    let hash = HASHES[H].1;
    keys.iter()
        .filter(|&&k| filter.contains_hash(hash(k)))
        .count()
}

#[inline(never)]
fn count_peer(filter: &sbbf_rs_safe::Filter, keys: &[u64]) -> usize {
    keys.iter()
        .filter(|&&k| filter.contains_hash(xxh3(k)))
        .count()
}

/// Median ns per key of 7 runs of `count`.
fn time(keys: &[u64], count: impl Fn(&[u64]) -> usize) -> f64 {
    let mut runs: Vec<f64> = (0..7)
        .map(|_| {
            let start = Instant::now();
            black_box(count(keys));
            start.elapsed().as_secs_f64() * 1e9 / keys.len() as f64
        })
        .collect();
    runs.sort_by(f64::total_cmp);
    runs[3]
}

fn speed(n: u64) {
    let keys: Vec<u64> = (0..n).map(random_key).collect();
    let absent: Vec<u64> = (n..n + 1_000_000).map(random_key).collect();
    let present: Vec<u64> = keys
        .iter()
        .step_by((n as usize / 1_000_000).max(1))
        .copied()
        .collect();
    let mut peer = sbbf_rs_safe::Filter::new(11, n as usize);
    for &k in &keys {
        peer.insert_hash(xxh3(k));
    }
    let blocks = peer.as_bytes().len() as u64 / 32;
    let filters: Vec<SplitBlockBloomFilter> = HASHES
        .iter()
        .map(|(_, hash)| {
            let mut f = SplitBlockBloomFilter::builder()
                .num_blocks(blocks)
                .build()
                .unwrap();
            keys.iter().for_each(|&k| {
                f.insert_hash(hash(k));
            });
            f
        })
        .collect();
    // How much of the filters the kernel backs with huge pages (Linux; the filters advise
    // them unless BLOOMKIT_NO_HUGE_PAGES is set): the figure BENCHMARKS.md quotes.
    if let Ok(rollup) = std::fs::read_to_string("/proc/self/smaps_rollup") {
        let huge_kib: Option<u64> = rollup
            .lines()
            .find_map(|l| l.strip_prefix("AnonHugePages:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok());
        let filters_mib = (filters.len() as u64 * blocks * 32) >> 20;
        match huge_kib {
            Some(kib) => println!(
                "huge pages in this process: {} MiB; bloomkit's filters: {filters_mib} MiB",
                kib >> 10
            ),
            None => println!("huge pages in this process: unknown"),
        }
    }
    let slower = |count: &dyn Fn(&[u64]) -> usize| time(&absent, count).max(time(&present, count));
    let reference = slower(&|k| count_peer(&peer, k));
    println!("n = {n}, {blocks} blocks (11 bits per key); ns per query, the slower of absent and present keys");
    println!("{:<33} {reference:6.2} ns", "sbbf-rs-safe 0.3, XXH3-64");
    let counts: [fn(&SplitBlockBloomFilter, &[u64]) -> usize; 4] = [
        count_with::<0>,
        count_with::<1>,
        count_with::<2>,
        count_with::<3>,
    ];
    for ((name, _), (filter, count)) in HASHES.iter().zip(filters.iter().zip(counts)) {
        let ns = slower(&|k| count(filter, k));
        let fpr = count(filter, &absent) as f64 / absent.len() as f64;
        println!(
            "bloomkit sbbf, {name:<18} {ns:6.2} ns  {:.2}×  FPR {fpr:.5}",
            ns / reference
        );
    }
}

fn fpr() {
    let structures: [(&str, Hash); 8] = [
        ("random", random_key),
        ("consecutive", |i| i),
        ("i · 1024", |i| i << 10),
        ("i · 2^20", |i| i << 20),
        ("i · 2^32", |i| i << 32),
        ("byte-swapped i", u64::swap_bytes),
        ("8 decimal digits", |i| {
            u64::from_le_bytes(
                *format!("{:08}", i % 100_000_000)
                    .as_bytes()
                    .first_chunk()
                    .unwrap(),
            )
        }),
        ("2-D grid", |i| ((i % 1000) << 32) | (i / 1000)),
    ];
    let n = 1_000_000u64;
    let queries = 4_000_000u64;
    let blocks = n * 11 / 256;
    let theory = bloomkit::split_block::fpp(blocks, n);
    let sd = (theory * (1.0 - theory) / queries as f64).sqrt();
    println!("n = {n}, {blocks} blocks; FPR by the formula {theory:.5}; cells: measured FPR (z)");
    print!("{:<18}", "keys");
    HASHES.iter().for_each(|(name, _)| print!(" {name:>22}"));
    println!();
    for (label, key) in structures {
        print!("{label:<18}");
        for (_, hash) in HASHES {
            let mut f = SplitBlockBloomFilter::builder()
                .num_blocks(blocks)
                .build()
                .unwrap();
            (0..n).for_each(|i| {
                f.insert_hash(hash(key(i)));
            });
            let hits = (n..n + queries)
                .filter(|&i| f.contains_hash(hash(key(i))))
                .count();
            let rate = hits as f64 / queries as f64;
            print!(" {:>13.5} ({:+6.1})", rate, (rate - theory) / sd);
        }
        println!();
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("fpr") => fpr(),
        Some("speed") | None => {
            let n = args.get(2).map_or(1_000_000, |s| s.parse().expect("N"));
            speed(n)
        }
        Some(other) => panic!("usage: hash_cost speed [N] | fpr (not {other:?})"),
    }
}
