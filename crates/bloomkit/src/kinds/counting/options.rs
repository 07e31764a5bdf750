//! How the registry builds a counting filter by name ([`Declared`]): its options, its
//! one-line description and the parameters block (n, ε, k, m).

use super::{CountingBloomFilter, CountingBloomFilterBuilder as B};
use crate::core::spec::{text::at, Apply, Declared, KindOption, ParametersBlock};
use crate::format::view::{self, OpenView};

crate::core::spec::spec_builder!(B => CountingBloomFilter);

/// `counter-width`, as the counting kinds declare it (with their own defaults).
pub(crate) const fn counter_width<T>(
    default: &'static str,
    apply: fn(T, u32) -> T,
) -> KindOption<T> {
    KindOption::new(
        "counter-width",
        "W",
        "bits per counter, 1 to 16",
        default,
        "6",
        Apply::U32(apply),
    )
}

impl Declared for CountingBloomFilter {
    type Builder = B;

    const OPTIONS: &'static [KindOption<B>] =
        crate::core::spec::array_options!(B, "counters", "", counter_width("4", B::counter_width),);

    const VIEW: Option<OpenView> = Some(view::open::<super::ViewShape>);

    fn describe(&self) -> String {
        format!(
            "m = {} counters of {} bits, k = {}, {}",
            self.num_counters(),
            self.counter_width(),
            self.num_hashes(),
            at(self.capacity(), self.target_fpp())
        )
    }

    fn parameters_block(&self) -> Option<ParametersBlock> {
        Some(ParametersBlock::of(
            self,
            self.num_hashes(),
            self.num_counters(),
        ))
    }
}
