//! Instructions per key of building and per query of the Bloomier filter in membership mode
//! with 8-bit fingerprints, beside xorf's BinaryFuse8, for `valgrind --tool=callgrind`
//! (repeatable on a loaded machine, unlike wall-clock time). The build from the key slice
//! runs in `measured_build`, Q queries (half inserted keys, half absent) in
//! `measured_query`; callgrind counts one of them with `--toggle-collect`.
//!
//! ```text
//! cargo build --release -p bloomkit --example bloomier_cost
//! valgrind --tool=callgrind --toggle-collect='bloomier_cost::measured_query*' \
//!     --callgrind-out-file=/dev/null target/release/examples/bloomier_cost fuse 1000000 100000
//! ```
//!
//! Arguments: subject (`fuse`: the Bloomier filter's default fuse layout; `three`: its
//! three-segment layout; `xorf`: xorf's BinaryFuse8), n, Q, and the Bloomier filter's hash
//! function (`murmur3`, the default here and the default of tables saved before fold2-128
//! became the membership default; `xxh3`; `xxh64`; `fold2`, what
//! `BloomierFilter::membership` and `value_bits(0)` now choose), and the check bits c (8
//! unless given: 16 gives 16-bit cells, other widths packed ones). Divide the `Collected`
//! instruction count by n (build) or Q (query).

use std::hint::black_box;

use bloomkit::{BloomierFilter, BloomierLayout, HashFunction};
use xorf::Filter as _;

mod common;
use common::key;

enum Subject {
    Bloomier(BloomierFilter),
    Xorf(xorf::BinaryFuse8),
}

#[inline(never)]
fn measured_build(name: &str, keys: &[u64], function: HashFunction, check_bits: u32) -> Subject {
    let layout = match name {
        "xorf" => return Subject::Xorf(xorf::BinaryFuse8::try_from(keys).unwrap()),
        "three" => BloomierLayout::ThreeSegments,
        _ => BloomierLayout::Fuse,
    };
    let table = BloomierFilter::builder()
        .value_bits(0)
        .check_bits(check_bits)
        .layout(layout)
        .hash_function(function)
        .build(keys.iter().map(|k| (k, 0)))
        .unwrap();
    Subject::Bloomier(table)
}

#[inline(never)]
fn measured_query(filter: &Subject, queries: &[u64]) -> usize {
    match filter {
        Subject::Bloomier(f) => queries.iter().filter(|&&k| f.contains(&k)).count(),
        Subject::Xorf(f) => queries.iter().filter(|&&k| f.contains(&k)).count(),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: bloomier_cost fuse|three|xorf N Q [murmur3|xxh3|xxh64|fold2 [C]]";
    let name = args.get(1).expect(usage).as_str();
    let n: u64 = args.get(2).expect(usage).parse().expect(usage);
    let q: u64 = args.get(3).expect(usage).parse().expect(usage);
    let keys: Vec<u64> = (0..n).map(key).collect();
    let function = match args.get(4).map(String::as_str) {
        Some("xxh3") => HashFunction::Xxh3,
        Some("xxh64") => HashFunction::Xxh64,
        Some("fold2") => HashFunction::Fold2,
        _ => HashFunction::Murmur3,
    };
    let check_bits: u32 = args.get(5).map_or(8, |c| c.parse().expect(usage));
    let filter = measured_build(name, black_box(&keys), function, check_bits);
    let queries: Vec<u64> = (0..q)
        .map(|i| if i % 2 == 0 { key(i % n) } else { key(n + i) })
        .collect();
    let hits = measured_query(&filter, black_box(&queries));
    println!("{name}: n = {n}, {hits} of {q} queries answered present");
}
