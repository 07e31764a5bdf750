//! What filling a cuckoo filter costs, tenth by tenth of its capacity, and what its batch
//! calls save: the measurements behind the insert's breadth-first search and the batch
//! calls' lookahead window.
//!
//! ```sh
//! cargo run --release -p bloomkit --example cuckoo_batch -- 100000000   # n (default 10⁶)
//! ```
//!
//! For `CuckooFilter::with_capacity(n, 0.01)` and n random `u64` keys it prints the mean ns
//! per single insert over each tenth of the fill, the same fill by `insert_batch`, and ns per
//! absent-key query by `contains` in a loop and by `contains_batch_into` (the best of three
//! alternating runs each), with the measured FPR.
//! One run each: a tenth of 10⁸ inserts is ten million, so the deciles are stable to a few
//! percent, but the machine should be idle.

use std::time::Instant;

use bloomkit::{CuckooFilter, Filter};

/// SplitMix64's finaliser of i: distinct, random-looking keys.
mod common;
use common::key;

fn ns_per(start: Instant, ops: u64) -> f64 {
    start.elapsed().as_secs_f64() * 1e9 / ops as f64
}

fn main() {
    let n: u64 = match std::env::args().nth(1) {
        Some(arg) => arg.parse().expect("usage: cuckoo_batch [N]"),
        None => 1_000_000,
    };
    assert!(n >= 10, "n must be at least 10");
    let keys: Vec<u64> = (0..n).map(key).collect();
    let absent: Vec<u64> = (n..n + 1_000_000).map(key).collect();

    let mut single = CuckooFilter::with_capacity(n, 0.01).unwrap();
    let tenth = n / 10;
    let mut deciles = Vec::new();
    let mut refused = 0u64;
    for part in keys.chunks(tenth as usize) {
        let start = Instant::now();
        for k in part {
            refused += single.insert(k).is_err() as u64;
        }
        deciles.push(format!("{:.0}", ns_per(start, part.len() as u64)));
    }
    println!(
        "n = {n}: {} buckets of {} slots, f = {} bits, {:.1} MB, load {:.3}, {refused} refused",
        single.num_buckets(),
        single.bucket_size(),
        single.fingerprint_bits(),
        single.memory_bytes() as f64 / 1e6,
        single.load_factor()
    );
    println!(
        "single inserts, ns per insert by tenth of the fill: {}",
        deciles.join(" ")
    );

    let mut batch = CuckooFilter::with_capacity(n, 0.01).unwrap();
    let start = Instant::now();
    let result = batch.insert_batch(&keys);
    println!(
        "insert_batch: {:.1} ns per insert ({})",
        ns_per(start, n),
        if result.is_ok() { "all in" } else { "refused" }
    );

    // Each way three times, alternating; the best of each.
    let (mut looped, mut batched) = (f64::MAX, f64::MAX);
    let (mut positives, mut answers) = (0, Vec::new());
    for _ in 0..3 {
        let start = Instant::now();
        positives = absent.iter().filter(|k| batch.contains(*k)).count();
        looped = looped.min(ns_per(start, absent.len() as u64));
        let start = Instant::now();
        batch.contains_batch_into(&absent, &mut answers);
        batched = batched.min(ns_per(start, absent.len() as u64));
    }
    assert_eq!(answers.iter().filter(|&&b| b).count(), positives);
    println!(
        "absent queries: contains {looped:.1} ns, contains_batch {batched:.1} ns; FPR {:.5}",
        positives as f64 / absent.len() as f64
    );
    let missing = keys
        .iter()
        .step_by(97)
        .filter(|k| !batch.contains(*k))
        .count();
    assert_eq!(missing, 0, "a cuckoo filter must find every item it took");
}
