//! Prints the README's table of filter kinds: what each can do, and its memory per item
//! at ε = 1% for one million items, measured on filters built here.
//!
//! `cargo run --release -p bloomkit --example kinds`

use bloomkit::{AnyFilter, Error, Filter, Kind};

fn main() -> Result<(), Error> {
    let (n, fpp) = (1_000_000u64, 0.01);
    // Every kind the registry lists, in its order: a kind added later gets its row here.
    let kinds = Kind::ALL
        .iter()
        .map(|&kind| Ok((kind.type_name(), AnyFilter::with_capacity(kind, n, fpp)?)))
        .collect::<Result<Vec<_>, Error>>()?;
    println!("| kind | remove | grow | merge | false negatives | bits per item at ε = 1% |");
    println!("|---|---|---|---|---|---|");
    for (name, mut filter) in kinds {
        // Ask the filter itself what it can do: remove and merge are refused with
        // `Error::Unsupported` by the kinds that cannot.
        filter.try_insert("probe")?;
        let remove = !matches!(filter.remove("probe"), Err(Error::Unsupported { .. }));
        let copy = filter.clone();
        let merge = !matches!(filter.union(&copy), Err(Error::Unsupported { .. }));
        let kind = filter.kind();
        let grow = kind.can_grow();
        let false_negatives = if kind.forgets() {
            "yes, by design (forgets old items)"
        } else {
            "never"
        };
        let yes_no = |b: bool| if b { "yes" } else { "no" };
        println!(
            "| `{name}` (`{kind}`) | {} | {} | {} | {false_negatives} | {:.2} |",
            yes_no(remove),
            yes_no(grow),
            yes_no(merge),
            filter.bits_per_item()
        );
    }
    // The Bloomier filter is static (built once from all its keys), so it is not a `Kind`:
    // its row is built from the n keys themselves, in membership mode.
    let bloomier = bloomkit::BloomierFilter::membership(0..n, fpp)?;
    println!(
        "| `BloomierFilter` (`bloomkit bloomier`) | no | no | no | never (static: built once \
         from its keys) | {:.2} |",
        bloomier.bits_per_key()
    );
    Ok(())
}
