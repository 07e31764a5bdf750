//! How the registry builds a weighted filter by name ([`Declared`]): its options — the
//! universe, and a file of items with their query frequencies and membership likelihoods —
//! and its one-line description.

use std::path::Path;

use super::{WeightedBloomFilter, WeightedBloomFilterBuilder as B};
use crate::core::spec::{text::at, Apply, Declared, KindOption};
use crate::error::Error;
use crate::format::view::{self, OpenView};

crate::core::spec::spec_builder!(B => WeightedBloomFilter);

impl Declared for WeightedBloomFilter {
    type Builder = B;

    const OPTIONS: &'static [KindOption<B>] =
        crate::core::spec::array_options!(
        B, "bits", "",
        KindOption::new(
            "weights",
            "FILE",
            "a file of `ITEM<TAB>QUERY-FREQUENCY[<TAB>MEMBERSHIP]` lines: how often each listed \
             item is queried relative to an unlisted one, and optionally how likely it is to be \
             a member (0 to 1). Frequent items get more hash functions, rare ones fewer",
            "",
            // Queried so much more often than the rest that the universe matters.
            "home\t1e18\nsearch\t1e18\nabout\t1e18\nrare\t0.125\n",
            Apply::File(read_weights),
        ),
        KindOption::new(
            "universe",
            "N",
            "N, the number of distinct items queries and members come from",
            "the listed items, at least the capacity",
            "100000",
            Apply::U64(B::universe),
        ),
    );

    const VIEW: Option<OpenView> = Some(view::open::<super::ViewShape>);

    fn describe(&self) -> String {
        format!(
            "m = {} bits, k = {} for ordinary items, {} weighted items, {}",
            self.num_bits(),
            self.default_hashes(),
            self.weighted_items(),
            at(self.capacity(), self.target_fpp())
        )
    }
}

/// Adds to `builder` the items of a `--weights` file: `ITEM<TAB>QUERY-FREQUENCY` or
/// `ITEM<TAB>QUERY-FREQUENCY<TAB>MEMBERSHIP` lines (empty lines skipped, a `\r` before the
/// newline dropped). Here only the form is checked; `build` checks the values.
fn read_weights(mut builder: B, path: &Path) -> Result<B, Error> {
    let text = std::fs::read(path).map_err(|e| Error::Io {
        context: format!("reading {}", path.display()),
        message: e.to_string(),
    })?;
    let wrong = |line: usize, what: String| Error::InvalidParameter {
        parameter: "weights",
        reason: format!("{} line {line}: {what}", path.display()),
    };
    for (i, line) in text.split(|&b| b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            continue;
        }
        let number = |field: &[u8], what: &str| {
            std::str::from_utf8(field)
                .ok()
                .and_then(|s| s.trim().parse::<f64>().ok())
                .ok_or_else(|| wrong(i + 1, format!("the {what} is not a number")))
        };
        let fields: Vec<&[u8]> = line.split(|&b| b == b'\t').collect();
        builder = match fields[..] {
            [item, q] => builder.query_frequency(item, number(q, "query frequency")?),
            [item, q, p] => builder.weight(
                item,
                number(q, "query frequency")?,
                number(p, "membership")?,
            ),
            _ => {
                return Err(wrong(
                    i + 1,
                    "expected ITEM<TAB>QUERY-FREQUENCY[<TAB>MEMBERSHIP]".to_owned(),
                ))
            }
        };
    }
    Ok(builder)
}
