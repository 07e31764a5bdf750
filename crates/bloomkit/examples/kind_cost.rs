//! Instructions per insert and per query of any registered kind, for
//! `valgrind --tool=callgrind` (repeatable on a loaded machine, unlike wall-clock time):
//! builds the kind by name at ε = 1% for n u64 keys, inserts them in `measured_insert`,
//! then answers Q queries (half inserted keys, half absent) in `measured_query`; callgrind
//! counts one of the two with `--toggle-collect`. Without valgrind it prints nanoseconds per
//! operation, which a loaded machine disturbs.
//!
//! ```text
//! cargo build --release -p bloomkit --example kind_cost
//! valgrind --tool=callgrind --toggle-collect='kind_cost::measured_query*' --callgrind-out-file=/dev/null \
//!     target/release/examples/kind_cost stable 100000 100000
//! ```
//!
//! Arguments: kind (its registry name, `bloomkit kinds`), n, Q, and optionally `batch`:
//! then the keys go in through `AnyFilter::insert_batch_u64` and the queries through
//! `contains_batch_u64` (one call each, in `measured_insert_batch` and
//! `measured_query_batch`), the lookahead window of the kinds that have one. Divide
//! callgrind's `Collected` by n (insert) or Q (query). The line printed also gives the kind's probes per
//! item (k, or what the kind touches instead), so time per memory probe compares across
//! kinds.
//!
//! A fifth argument, after `batch` or `single`, sizes the filter for that many items
//! instead of n: `kind_cost spectral 1000 1000 single 100000000` is a filter reserved for
//! 10⁸ items that takes a thousand, the case whose memory the huge-page policy must not
//! grow (peak RSS under `/usr/bin/time -v`, with and without `BLOOMKIT_NO_HUGE_PAGES=1`).

use std::hint::black_box;
use std::time::Instant;

use bloomkit::{AnyFilter, Filter, Kind};

mod common;
use common::key;

#[inline(never)]
fn measured_insert(filter: &mut AnyFilter, keys: &[u64]) {
    for k in keys {
        black_box(
            filter
                .try_insert(k)
                .expect("the filter was sized for these keys"),
        );
    }
}

#[inline(never)]
fn measured_query(filter: &AnyFilter, queries: &[u64]) -> usize {
    queries.iter().filter(|&k| filter.contains(k)).count()
}

#[inline(never)]
fn measured_insert_batch(filter: &mut AnyFilter, keys: &[u64]) {
    black_box(
        filter
            .insert_batch_u64(keys)
            .expect("the filter was sized for these keys"),
    );
}

#[inline(never)]
fn measured_query_batch(filter: &AnyFilter, queries: &[u64]) -> usize {
    let mut answers = Vec::new();
    filter.contains_batch_u64(queries, &mut answers);
    answers.iter().filter(|&&hit| hit).count()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: kind_cost KIND N Q [batch|single [CAPACITY]]";
    let kind = Kind::from_name(args.get(1).ok_or(usage)?).ok_or("unknown kind")?;
    let n: u64 = args.get(2).ok_or(usage)?.parse()?;
    let q: u64 = args.get(3).ok_or(usage)?.parse()?;
    let batch = match args.get(4).map(String::as_str) {
        None => false,
        Some("batch") => true,
        Some("single") => false,
        Some(_) => return Err(usage.into()),
    };
    let capacity: u64 = match args.get(5) {
        Some(c) => c.parse()?,
        None => n,
    };
    let keys: Vec<u64> = (0..n).map(key).collect();
    let queries: Vec<u64> = (0..q)
        .map(|i| if i % 2 == 0 { key(i % n) } else { key(n + i) })
        .collect();
    let mut filter = AnyFilter::with_capacity(kind, capacity, 0.01)?;
    let t = Instant::now();
    if batch {
        measured_insert_batch(&mut filter, &keys);
    } else {
        measured_insert(&mut filter, &keys);
    }
    let insert_ns = t.elapsed().as_nanos() as f64 / n as f64;
    let t = Instant::now();
    let hits = black_box(if batch {
        measured_query_batch(&filter, &queries)
    } else {
        measured_query(&filter, &queries)
    });
    let query_ns = t.elapsed().as_nanos() as f64 / q as f64;
    println!(
        "{}{} n={n} q={q}: insert {insert_ns:.1} ns, query {query_ns:.1} ns, {hits} hits; {}",
        kind.name(),
        if batch { " (batch)" } else { "" },
        filter.describe()
    );
    Ok(())
}
