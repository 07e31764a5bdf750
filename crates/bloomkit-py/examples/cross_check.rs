//! The Rust side of the Python package's cross-language tests (tests/test_rust.py): the
//! same values as Rust items, so that pytest can hold Python's item bytes and filters to
//! the library's.
//!
//! ```text
//! cross_check bytes              one line per value: NAME<TAB>hex of its Item bytes
//! cross_check write KIND FILE    a KIND filter (1000 items, ε = 1e-3) holding every value
//! cross_check read FILE          loads a filter of any kind: NAME<TAB>yes|no for every value
//!                                and every absent probe
//! ```

use bloomkit::{AnyFilter, Filter, Item, Kind, Persist};

/// Calls `f` with the name and the Rust value of every item the tests share with Python
/// (tests/test_rust.py lists the same names with the Python values).
fn each_item(mut f: impl FnMut(&str, &dyn Fn(&mut dyn FnMut(&[u8])))) {
    macro_rules! items {
        ($($name:literal => $value:expr,)*) => {$(
            f($name, &|g: &mut dyn FnMut(&[u8])| $value.with_bytes(|b| g(b)));
        )*};
    }
    items! {
        "str" => "héllo wörld",
        "empty str" => "",
        "bytes" => &b"\x00\xffraw"[..],
        "negative int" => -5i64,
        "min i64" => i64::MIN,
        "small int" => 42u64,
        "large int" => (1u64 << 63) + 5,
        "max u64" => u64::MAX,
        "true" => true,
        "false" => false,
        "pair" => ("user", 7u64),
        "nested" => (("a", -1i64), &b"z"[..], true),
        "four" => (1u64, "two", &b"3"[..], -4i64),
    }
}

/// Values no filter of the tests holds.
fn each_absent(mut f: impl FnMut(&str, &dyn Fn(&mut dyn FnMut(&[u8])))) {
    macro_rules! items {
        ($($name:literal => $value:expr,)*) => {$(
            f($name, &|g: &mut dyn FnMut(&[u8])| $value.with_bytes(|b| g(b)));
        )*};
    }
    items! {
        "absent str" => "hello world",
        "absent int" => 43u64,
        "absent pair" => ("user", 8u64),
        "absent swapped pair" => ("a", "bc"),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match args.as_slice() {
        ["bytes"] => {
            let mut print = |name: &str, with: &dyn Fn(&mut dyn FnMut(&[u8]))| {
                with(&mut |b: &[u8]| {
                    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
                    println!("{name}\t{hex}");
                })
            };
            each_item(&mut print);
            each_absent(&mut print);
        }
        ["write", kind, path] => {
            let kind = Kind::from_name(kind).expect("a kind's name");
            let mut filter = AnyFilter::with_capacity(kind, 1_000, 1e-3).expect("a filter");
            each_item(|_, with| {
                with(&mut |b: &[u8]| {
                    filter.try_insert(b).expect("inserted");
                })
            });
            filter.save(path).expect("saved");
        }
        ["read", path] => {
            let filter = AnyFilter::load(path).expect("a filter file");
            let mut print = |name: &str, with: &dyn Fn(&mut dyn FnMut(&[u8]))| {
                with(&mut |b: &[u8]| {
                    let answer = if filter.contains(b) { "yes" } else { "no" };
                    println!("{name}\t{answer}");
                })
            };
            each_item(&mut print);
            each_absent(&mut print);
        }
        _ => {
            eprintln!("usage: cross_check bytes | write KIND FILE | read FILE");
            std::process::exit(2);
        }
    }
}
