//! How the registry builds a scalable filter by name ([`Declared`]): its options (its
//! layers are sized for it, so no m or k) and its one-line description.

use super::{ScalableBloomFilter, ScalableBloomFilterBuilder as B};
use crate::core::spec::{
    text::{count, probability},
    Apply, Declared, KindOption, BITS, HASHES,
};

crate::core::spec::spec_builder!(B => ScalableBloomFilter);

impl Declared for ScalableBloomFilter {
    type Builder = B;

    const OPTIONS: &'static [KindOption<B>] = &[
        KindOption::scheme(B::index_scheme),
        KindOption::hash_function(B::hash_function),
        KindOption::new(
            "growth",
            "S",
            "s, the factor by which each layer's capacity grows: 2 or 4",
            "2",
            "4",
            Apply::U32(B::growth_factor),
        ),
        KindOption::new(
            "tightening",
            "R",
            "r, the factor by which each layer's error shrinks, strictly between 0 and 1",
            "0.5",
            "0.8",
            Apply::F64(B::tightening_ratio),
        ),
        KindOption::new(
            "max-layers",
            "N",
            "the most layers the filter may have; past them `add` fails",
            "no limit",
            "3",
            Apply::U32(B::max_layers),
        ),
    ];

    const NOT_TAKEN: &'static [(&'static str, &'static str)] = &[
        (BITS, "its layers are sized from --capacity and --fpp"),
        (HASHES, "its layers are sized from --capacity and --fpp"),
    ];


    fn describe(&self) -> String {
        format!(
            "{}, first layer capacity {}, growth {}, tightening {}, ε ≤ {}",
            count(self.num_layers() as u64, "layer"),
            self.initial_capacity(),
            self.growth_factor(),
            self.tightening_ratio(),
            probability(self.target_fpp())
        )
    }
}
