//! How the registry builds a deletable filter by name ([`Declared`]): its options, its
//! one-line description and the parameters block (n, ε, k, m).

use super::{DeletableBloomFilter, DeletableBloomFilterBuilder as B};
use crate::core::spec::{text::at, Apply, Declared, KindOption, ParametersBlock};
use crate::format::view::{self, OpenView};

crate::core::spec::spec_builder!(B => DeletableBloomFilter);

impl Declared for DeletableBloomFilter {
    type Builder = B;

    const OPTIONS: &'static [KindOption<B>] = crate::core::spec::array_options!(
        B,
        "bits, the collision bitmap included",
        "",
        KindOption::new(
            "regions",
            "R",
            "r, the number of regions (and of collision-bitmap bits)",
            "one per 8 data bits",
            "100",
            Apply::U64(B::regions),
        ),
    );

    const VIEW: Option<OpenView> = Some(view::open::<super::ViewShape>);

    fn describe(&self) -> String {
        format!(
            "m = {} bits in {} regions, k = {}, {}",
            self.num_bits(),
            self.regions(),
            self.num_hashes(),
            at(self.capacity(), self.target_fpp())
        )
    }

    fn parameters_block(&self) -> Option<ParametersBlock> {
        Some(ParametersBlock::of(
            self,
            self.num_hashes(),
            self.num_bits(),
        ))
    }
}
