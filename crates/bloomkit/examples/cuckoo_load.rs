//! How often a cuckoo filter sized by `with_capacity(n, ε)` fails before holding its n
//! items, over many seeds: the measurement behind `params::cuckoo_num_buckets`' margin and
//! `params::CUCKOO_MIN_CHOSEN_FINGERPRINT_BITS`.
//!
//! ```sh
//! cargo run --release -p bloomkit --example cuckoo_load
//! ```
//!
//! Prints, per (n, ε), the tables that failed early, with the library's sizing, and with
//! explicit layouts the library no longer chooses: no margin (B = ⌈n / 3.8⌉), and 5-bit
//! fingerprints. Seed 8 is skipped: with `u64` items it is one of MurmurHash3's weak seeds,
//! which the builder moves but an explicit table here would not show separately.

use bloomkit::{CuckooFilter, CuckooFilterBuilder, Filter};

/// How many of `seeds` tables from `build` fail before `n` items are in.
fn failures(n: u64, seeds: u64, build: impl Fn(u64) -> CuckooFilterBuilder) -> u64 {
    (0..seeds)
        .filter(|&s| s != 8)
        .filter(|&seed| {
            let mut filter: CuckooFilter = build(seed).seed(seed).build().unwrap();
            (0..n).any(|k| filter.try_insert(&(k + seed * 1_000_000_000)).is_err())
        })
        .count() as u64
}

fn main() {
    let seeds = 201;
    for (n, fpp) in [
        (10u64, 0.01),
        (30, 0.01),
        (100, 0.01),
        (1_000, 0.01),
        (10_000, 0.01),
        (100_000, 0.01),
    ] {
        let no_margin = (n as f64 / 3.8).ceil() as u64;
        println!(
            "n = {n}, ε = {fpp}, {} seeds: failed early — with_capacity {}, no margin ({no_margin} buckets) {}, 5-bit fingerprints {}",
            seeds - 1,
            failures(n, seeds, |_| CuckooFilter::builder().capacity(n).fpp(fpp)),
            failures(n, seeds, |_| CuckooFilter::builder().num_buckets(no_margin).capacity(n)),
            failures(n, seeds, |_| {
                let b = CuckooFilter::builder().capacity(n).fpp(0.5);
                b.fingerprint_bits(5)
            }),
        );
    }
}
