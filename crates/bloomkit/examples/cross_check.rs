//! The Rust side of the Python package's cross-language tests
//! (crates/bloomkit-py/tests/test_rust.py): the same values as Rust items, so that pytest can
//! hold Python's item bytes and filters to the library's. It uses the library alone, so it
//! lives among the library's examples: as an example of the Python crate, `cargo test` built
//! that crate and PyO3 once more in the test profile only to link this program.
//!
//! ```text
//! cross_check bytes              one line per value: NAME<TAB>hex of its Item bytes
//! cross_check write KIND FILE    a KIND filter (1000 items, ε = 1e-3) holding every value
//! cross_check read FILE          loads a filter of any kind: NAME<TAB>yes|no for every value
//!                                and every absent probe
//! ```

use bloomkit::{AnyFilter, Filter, Item, Kind, Persist};

/// The bytes of a Rust item (an item *is* its bytes: a filter holding them holds the item).
fn bytes_of<I: Item + ?Sized>(item: &I) -> Vec<u8> {
    item.with_bytes(|b| b.to_vec())
}

/// The items the tests share with Python (tests/test_rust.py lists the same names with the
/// Python values).
fn items() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("str", bytes_of("héllo wörld")),
        ("empty str", bytes_of("")),
        ("bytes", bytes_of(&b"\x00\xffraw"[..])),
        ("negative int", bytes_of(&-5i64)),
        ("min i64", bytes_of(&i64::MIN)),
        ("small int", bytes_of(&42u64)),
        ("large int", bytes_of(&((1u64 << 63) + 5))),
        ("max u64", bytes_of(&u64::MAX)),
        ("true", bytes_of(&true)),
        ("false", bytes_of(&false)),
        ("pair", bytes_of(&("user", 7u64))),
        ("nested", bytes_of(&(("a", -1i64), &b"z"[..], true))),
        ("four", bytes_of(&(1u64, "two", &b"3"[..], -4i64))),
    ]
}

/// Values no filter of the tests holds.
fn absent() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("absent str", bytes_of("hello world")),
        ("absent int", bytes_of(&43u64)),
        ("absent pair", bytes_of(&("user", 8u64))),
        ("absent swapped pair", bytes_of(&("a", "bc"))),
    ]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let all = || items().into_iter().chain(absent());
    match args.as_slice() {
        ["bytes"] => {
            for (name, bytes) in all() {
                let hex: String = bytes.iter().map(|x| format!("{x:02x}")).collect();
                println!("{name}\t{hex}");
            }
        }
        ["write", kind, path] => {
            let kind = Kind::from_name(kind).expect("a kind's name");
            let mut filter = AnyFilter::with_capacity(kind, 1_000, 1e-3).expect("a filter");
            for (_, bytes) in items() {
                filter.try_insert(&bytes[..]).expect("inserted");
            }
            filter.save(path).expect("saved");
        }
        ["read", path] => {
            let filter = AnyFilter::load(path).expect("a filter file");
            for (name, bytes) in all() {
                let answer = if filter.contains(&bytes[..]) {
                    "yes"
                } else {
                    "no"
                };
                println!("{name}\t{answer}");
            }
        }
        _ => {
            eprintln!("usage: cross_check bytes | write KIND FILE | read FILE");
            std::process::exit(2);
        }
    }
}
