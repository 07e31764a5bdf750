//! How the registry builds a stable filter by name ([`Declared`]): its options and its
//! one-line description.

use super::{StableBloomFilter, StableBloomFilterBuilder as B};
use crate::core::spec::{text::probability, Apply, Declared, KindOption};
use crate::format::view::{self, OpenView};

crate::core::spec::spec_builder!(B => StableBloomFilter);

impl Declared for StableBloomFilter {
    type Builder = B;

    const OPTIONS: &'static [KindOption<B>] = crate::core::spec::array_options!(
        B,
        "cells",
        "",
        KindOption::new(
            "cell-width",
            "D",
            "d, the bits per cell, 1 to 16",
            "3",
            "2",
            Apply::U32(B::cell_width),
        ),
        KindOption::new(
            "decrements",
            "P",
            "P, the cells decremented per insertion",
            "derived from ε",
            "5",
            Apply::U64(B::decrements),
        ),
    );

    const VIEW: Option<OpenView> = Some(view::open::<super::ViewShape>);

    fn describe(&self) -> String {
        format!(
            "m = {} cells of {} bits, K = {}, P = {}, capacity {} at stable ε = {}",
            self.num_cells(),
            self.cell_width(),
            self.num_hashes(),
            self.decrements(),
            self.capacity(),
            probability(self.target_fpp())
        )
    }
}
