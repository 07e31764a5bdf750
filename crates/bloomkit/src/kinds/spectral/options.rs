//! How the registry builds a spectral filter by name ([`Declared`]): its options, its
//! one-line description, and its counts (the kind counts how often each item was
//! inserted).

use super::{SpectralBloomFilter, SpectralBloomFilterBuilder as B, SpectralLayout, SpectralMethod};
use crate::core::spec::{text::at, Apply, Choice, Declared, KindOption};
use crate::counting::options::counter_width;
use crate::format::view::{self, OpenView};

crate::core::spec::spec_builder!(B => SpectralBloomFilter);

/// The values of `method`: [`SpectralMethod`]'s short names.
const METHODS: &[Choice] = &[
    Choice {
        name: "ms",
        help: "Minimum selection: every counter +1, the estimate is the smallest",
    },
    Choice {
        name: "mi",
        help: "Minimal increase: only the smallest counters +1 (no remove)",
    },
    Choice {
        name: "rm",
        help: "Recurring minimum: a secondary filter for items without a recurring minimum",
    },
];

/// The values of `counter-layout`: [`SpectralLayout`]'s short names.
const LAYOUTS: &[Choice] = &[
    Choice {
        name: "compact",
        help: "4-bit nibbles, the counts of 15 or more in a table (a quarter of 16-bit counters)",
    },
    Choice {
        name: "fixed",
        help: "every counter its full width",
    },
];

impl Declared for SpectralBloomFilter {
    type Builder = B;

    const OPTIONS: &'static [KindOption<B>] = crate::core::spec::array_options!(
        B,
        "counters",
        "",
        counter_width("16", B::counter_width),
        KindOption::new(
            "method",
            "METHOD",
            "how counts are kept and read — ms (minimum selection), mi (minimal increase: most \
             accurate, no remove), rm (recurring minimum)",
            "ms",
            "mi",
            Apply::Choice(METHODS, |builder, name| {
                builder.method(SpectralMethod::from_name(name).expect("a declared method"))
            }),
        ),
        KindOption::new(
            "counter-layout",
            "LAYOUT",
            "how counters are stored — compact (4-bit nibbles and a table of the counts of 15 \
             or more: the same answers in a quarter of the memory of 16-bit counters) or fixed \
             (every counter its full width); counters of 4 bits or fewer are always fixed",
            "compact",
            "fixed",
            Apply::Choice(LAYOUTS, |builder, name| {
                builder.counter_layout(SpectralLayout::from_name(name).expect("a declared layout"))
            }),
        ),
    );

    const VIEW: Option<OpenView> = Some(view::open::<super::ViewShape>);

    const COUNTS: bool = true;

    fn describe(&self) -> String {
        format!(
            "m = {} counters of {} bits{}, {} layout, k = {}, method {}, {}",
            self.num_counters(),
            self.counter_width(),
            match self.secondary_counters() {
                0 => String::new(),
                s => format!(" (+ {s} secondary)"),
            },
            super::layout_text(self.counter_layout(), self.escaped_counters()),
            self.num_hashes(),
            self.method(),
            at(self.capacity(), self.target_fpp())
        )
    }

    fn count_bytes(&self, item: &[u8]) -> Option<u64> {
        Some(self.count(item))
    }
}
