//! How the registry builds a variable-increment counting filter by name ([`Declared`]):
//! its options, its one-line description and the parameters block (n, ε, k, m).

use super::{VariableIncrementBloomFilter, VariableIncrementBloomFilterBuilder as B};
use crate::core::spec::{text::at, Apply, Declared, KindOption, ParametersBlock};
use crate::counting::options::counter_width;
use crate::format::view::{self, OpenView};

crate::core::spec::spec_builder!(B => VariableIncrementBloomFilter);

impl Declared for VariableIncrementBloomFilter {
    type Builder = B;

    const OPTIONS: &'static [KindOption<B>] =
        crate::core::spec::array_options!(
        B, "counters", "",
        counter_width("8", B::counter_width).example("10"),
        KindOption::new(
            "increment-base",
            "L",
            "L, the smallest increment; increments are L to 2L − 1, and 2L − 1 must stay below \
             the counter maximum",
            "4",
            "2",
            Apply::U32(B::increment_base),
        ),
    );

    const VIEW: Option<OpenView> = Some(view::open::<super::ViewShape>);

    fn describe(&self) -> String {
        format!(
            "m = {} counters of {} bits, k = {}, increments {}..={}, {}",
            self.num_counters(),
            self.counter_width(),
            self.num_hashes(),
            self.increment_base(),
            2 * self.increment_base() - 1,
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
