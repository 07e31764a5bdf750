//! How the registry builds a generalized filter by name ([`Declared`]): its options (k is
//! k1, the hashes that set bits; k0 its own option) and its one-line description.

use super::{GeneralizedBloomFilter, GeneralizedBloomFilterBuilder as B};
use crate::core::spec::{
    text::{at, probability},
    Apply, Declared, KindOption,
};

use crate::format::view::{self, OpenView};

crate::core::spec::spec_builder!(B => GeneralizedBloomFilter);

impl Declared for GeneralizedBloomFilter {
    type Builder = B;

    const OPTIONS: &'static [KindOption<B>] = &[
        KindOption::bits("bits", B::num_cells),
        KindOption::hashes("k1, those that set bits", B::set_hashes),
        KindOption::scheme(B::index_scheme),
        KindOption::hash_function(B::hash_function),
        KindOption::new(
            "reset-hashes",
            "K0",
            "k0, the hash functions that reset bits to 0 on each insert (--hashes is k1, those \
             that set bits)",
            "1",
            "2",
            Apply::U32(B::reset_hashes),
        ),
    ];

    const VIEW: Option<OpenView> = Some(view::open::<super::ViewShape>);

    fn describe(&self) -> String {
        format!(
            "m = {} bits, k1 = {} set, k0 = {} reset, {}, fpp ≤ {} at any fill",
            self.num_bits(),
            self.set_hashes(),
            self.reset_hashes(),
            at(self.capacity(), self.target_fpp()),
            probability(self.false_positive_bound())
        )
    }
}
