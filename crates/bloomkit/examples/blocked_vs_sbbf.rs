//! The blocked filter against sbbf-rs-safe, the peer issue 21 measures it by: bits per key,
//! measured false-positive rate and single-query time (the slower of present and absent
//! keys), side by side in one process, at n = 10⁶ and 10⁷ (and 10⁸ with `--large`).
//!
//! ```text
//! cargo run --release -p bloomkit --example blocked_vs_sbbf            # 10⁶ and 10⁷
//! cargo run --release -p bloomkit --example blocked_vs_sbbf -- --large # and 10⁸ (0.4 GB of filters)
//! cargo run --release -p bloomkit --example blocked_vs_sbbf -- whole blocked 1000000 20
//! ```
//!
//! Subjects: `blocked` (the blocked filter with sbbf-rs-safe's memory, 11 bits per key, and
//! its k = 8, the default hash, `contains_u64`), `blocked-xxh3` (the same with XXH3-128, the
//! default before), `blocked-1%` (`with_capacity(n, 0.01)`: 10.1 bits per key, the default
//! hash) and `sbbf-rs-safe` 0.3 at 11 bits per key with XXH3-64 of the key's bytes (as
//! `benches/peers.rs` gives it). Keys are SplitMix64 outputs of 0..n (inserted) and n..
//! (absent), as in the peers bench. Each time is the median of 7 timed loops over 10⁶
//! queries, the subjects taking turns (A B C A B C …) so that a change of the machine's speed
//! reaches all of them; the ratio column is the subject's slower query over sbbf-rs-safe's.
//!
//! `BLOOMKIT_SIMD=avx2` (or `scalar`) caps the blocked filter's kernels below the CPU's best,
//! to compare levels on the machine in use; the first line names the level used.
//!
//! `whole SUBJECT N ROUNDS`: builds the one subject and answers ROUNDS × 10⁶ queries (half
//! present), for timing whole processes against each other (`/usr/bin/time`, or any tool
//! that runs two commands in turn); prints only the count of positive answers.

use std::hint::black_box;
use std::time::Instant;

use bloomkit::{BlockedBloomFilter, Filter, HashFunction};

mod common;
use common::key;

enum Subject {
    Blocked(BlockedBloomFilter),
    Sbbf(sbbf_rs_safe::Filter),
}

#[inline(always)]
fn xxh3(key: u64) -> u64 {
    xxhash_rust::xxh3::xxh3_64(&key.to_le_bytes())
}

impl Subject {
    fn build(name: &str, n: u64) -> Subject {
        match name {
            "blocked" | "blocked-xxh3" | "blocked-1%" => {
                let mut builder = BlockedBloomFilter::builder().capacity(n);
                builder = match name {
                    // sbbf-rs-safe's memory, 11 bits per key, and its k.
                    "blocked" => builder.num_bits(11 * n).num_hashes(8),
                    "blocked-xxh3" => builder
                        .num_bits(11 * n)
                        .num_hashes(8)
                        .hash_function(HashFunction::Xxh3),
                    _ => builder.fpp(0.01),
                };
                let mut f = builder.build().expect("a valid size");
                for i in 0..n {
                    f.insert_u64(key(i));
                }
                Subject::Blocked(f)
            }
            "sbbf-rs-safe" => {
                let mut f = sbbf_rs_safe::Filter::new(11, n as usize);
                for i in 0..n {
                    f.insert_hash(xxh3(key(i)));
                }
                Subject::Sbbf(f)
            }
            other => panic!("unknown subject {other}: {}", SUBJECTS.join(", ")),
        }
    }

    fn bits_per_key(&self, n: u64) -> f64 {
        let bytes = match self {
            Subject::Blocked(f) => f.memory_bytes(),
            Subject::Sbbf(f) => f.as_bytes().len(),
        };
        bytes as f64 * 8.0 / n as f64
    }

    fn k(&self) -> u32 {
        match self {
            Subject::Blocked(f) => f.num_hashes(),
            Subject::Sbbf(_) => 8,
        }
    }

    fn hash_name(&self) -> String {
        match self {
            Subject::Blocked(f) => f.hashing().function.name().to_string(),
            Subject::Sbbf(_) => "xxh3-64".to_string(),
        }
    }
}

/// The positive answers among `queries`, one single query each (each subject's loop
/// compiled on its own, as a user's loop would be).
#[inline(never)]
fn count(subject: &Subject, queries: &[u64]) -> usize {
    match subject {
        Subject::Blocked(f) => queries.iter().filter(|&&k| f.contains_u64(k)).count(),
        Subject::Sbbf(f) => queries
            .iter()
            .filter(|&&k| f.contains_hash(xxh3(k)))
            .count(),
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).expect("times are numbers"));
    v[v.len() / 2]
}

const QUERIES: u64 = 1_000_000;
const SUBJECTS: [&str; 4] = ["blocked", "blocked-xxh3", "blocked-1%", "sbbf-rs-safe"];

fn compare(n: u64) {
    let q = QUERIES.min(n);
    let present: Vec<u64> = (0..q).map(|i| key(i * (n / q))).collect();
    let absent: Vec<u64> = (n..n + q).map(key).collect();
    let subjects: Vec<Subject> = SUBJECTS.iter().map(|s| Subject::build(s, n)).collect();
    let mut times = vec![(Vec::new(), Vec::new()); subjects.len()];
    for _ in 0..7 {
        for (subject, (plus, minus)) in subjects.iter().zip(times.iter_mut()) {
            let t = Instant::now();
            let found = black_box(count(subject, &present));
            plus.push(t.elapsed().as_nanos() as f64 / q as f64);
            assert_eq!(found as u64, q, "a present key was not found");
            let t = Instant::now();
            black_box(count(subject, &absent));
            minus.push(t.elapsed().as_nanos() as f64 / q as f64);
        }
    }
    let slower: Vec<(f64, f64, f64)> = times
        .into_iter()
        .map(|(p, m)| {
            let (p, m) = (median(p), median(m));
            (p, m, p.max(m))
        })
        .collect();
    let peer = slower[SUBJECTS.len() - 1].2;
    println!("\nn = {n}, ε = 1%, {q} present and {q} absent keys, median of 7");
    println!(
        "| subject | hash | k | bits/key | FPR | +query ns | −query ns | slower / sbbf-rs-safe |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|");
    for ((name, subject), (p, m, s)) in SUBJECTS.iter().zip(&subjects).zip(slower) {
        let fpr = count(subject, &absent) as f64 / q as f64;
        println!(
            "| {name} | {} | {} | {:.2} | {fpr:.5} | {p:.2} | {m:.2} | {:.2}× |",
            subject.hash_name(),
            subject.k(),
            subject.bits_per_key(n),
            s / peer
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("whole") {
        let usage = "usage: blocked_vs_sbbf whole SUBJECT N ROUNDS";
        let [_, name, n, rounds] = &args[..] else {
            panic!("{usage}")
        };
        let (n, rounds): (u64, u64) = (n.parse().expect(usage), rounds.parse().expect(usage));
        let subject = Subject::build(name, n);
        let queries: Vec<u64> = (0..QUERIES)
            .map(|i| if i % 2 == 0 { key(i % n) } else { key(n + i) })
            .collect();
        let found: usize = (0..rounds).map(|_| count(&subject, &queries)).sum();
        println!("{}", black_box(found));
        return;
    }
    println!(
        "kernels: {}, built for {}",
        bloomkit::arch::simd_level().name(),
        if cfg!(target_feature = "avx2") {
            "the host CPU's features"
        } else {
            "baseline x86-64"
        }
    );
    let mut sizes = vec![1_000_000, 10_000_000];
    if args.iter().any(|a| a == "--large") {
        sizes.push(100_000_000);
    }
    for n in sizes {
        compare(n);
    }
}
