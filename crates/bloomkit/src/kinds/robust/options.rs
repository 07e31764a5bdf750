//! How the registry builds a robustBF filter by name ([`Declared`]): its options (its
//! matrix is sized from n and ε, so no m) and its one-line description.

use super::{RobustBloomFilter, RobustBloomFilterBuilder as B};
use crate::core::spec::{
    text::{at, probability},
    Declared, KindOption, BITS,
};
use crate::filter::Filter;
use crate::format::view::{self, OpenView};

crate::core::spec::spec_builder!(B => RobustBloomFilter);

impl Declared for RobustBloomFilter {
    type Builder = B;

    const OPTIONS: &'static [KindOption<B>] = &[
        KindOption::hashes("", B::num_hashes).example("5"),
        KindOption::scheme(B::index_scheme),
        KindOption::hash_function(B::hash_function),
    ];

    const VIEW: Option<OpenView> = Some(view::open::<super::ViewShape>);

    const NOT_TAKEN: &'static [(&'static str, &'static str)] = &[(
        BITS,
        "its X × Y matrix of primes is sized from --capacity and --fpp to meet ε",
    )];

    fn describe(&self) -> String {
        format!(
            "{} × {} words of 64 bits (61 used), k = {}, {} (sized for ε = {})",
            self.rows(),
            self.cols(),
            self.num_hashes(),
            at(self.capacity(), self.target_fpp()),
            probability(self.asked_fpp())
        )
    }
}
