//! How often a cuckoo filter sized by `with_capacity(n, ε)` fails before holding its n
//! items, over many seeds: the measurement behind `params::cuckoo_num_buckets`' margin and
//! `params::CUCKOO_MIN_CHOSEN_FINGERPRINT_BITS`.
//!
//! ```sh
//! cargo run --release -p bloomkit --example cuckoo_load
//! cargo run --release -p bloomkit --example cuckoo_load -- large   # 10⁷ and 10⁸ items
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

/// One table of `n` items sized for `load`: how many inserts it refused, and when the first.
fn large(n: u64, load: f64) {
    let buckets = bloomkit::params::cuckoo_num_buckets(n, 4, load).unwrap();
    let build = CuckooFilter::builder()
        .capacity(n)
        .fpp(0.01)
        .num_buckets(buckets);
    let mut filter: CuckooFilter = build.build().unwrap();
    let (mut refused, mut first) = (0u64, None);
    for i in 0..n {
        if filter
            .try_insert(&(i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x1234))
            .is_err()
        {
            refused += 1;
            first.get_or_insert(i);
        }
    }
    let first = first.map_or("none".into(), |i| {
        format!("{:.2}% of n", 100.0 * i as f64 / n as f64)
    });
    println!("n = {n}, sized for load {load}: {refused} inserts refused, the first at {first}");
}

fn main() {
    // `-- large`: one table each of 10⁷ and 10⁸ items (about a minute, 160 MB).
    if std::env::args().nth(1).as_deref() == Some("large") {
        large(10_000_000, 0.95);
        for load in [0.95, 0.945, 0.94] {
            large(100_000_000, load);
        }
        return;
    }
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
