//! How the registry builds a spectral filter by name ([`Declared`]): its options, its
//! one-line description, and its counts (the kind counts how often each item was
//! inserted).

use super::{SpectralBloomFilter, SpectralBloomFilterBuilder as B, SpectralMethod};
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

impl Declared for SpectralBloomFilter {
    type Builder = B;

    const OPTIONS: &'static [KindOption<B>] =
        crate::core::spec::array_options!(
        B, "counters", "",
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
    );

    const VIEW: Option<OpenView> = Some(view::open::<super::ViewShape>);

    const COUNTS: bool = true;

    fn describe(&self) -> String {
        format!(
            "m = {} counters of {} bits{}, k = {}, method {}, {}",
            self.num_counters(),
            self.counter_width(),
            match self.secondary_counters() {
                0 => String::new(),
                s => format!(" (+ {s} secondary)"),
            },
            self.num_hashes(),
            self.method(),
            at(self.capacity(), self.target_fpp())
        )
    }

    fn count_bytes(&self, item: &[u8]) -> Option<u64> {
        Some(self.count(item))
    }
}
