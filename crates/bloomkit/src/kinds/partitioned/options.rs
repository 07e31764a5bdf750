//! How the registry builds a partitioned filter by name ([`Declared`]).

use super::{PartitionedBloomFilter, PartitionedBloomFilterBuilder as B};
use crate::core::spec::{text::at, Declared, KindOption};
use crate::format::view::{self, OpenView};

crate::core::spec::spec_builder!(B => PartitionedBloomFilter);

impl Declared for PartitionedBloomFilter {
    type Builder = B;

    const OPTIONS: &'static [KindOption<B>] = crate::core::spec::array_options!(
        B,
        "bits (rounded up to k equal slices)",
        "the number of slices"
    );

    const ESTIMATE: &'static str = "slice fill";

    const VIEW: Option<OpenView> = Some(view::open::<super::ViewShape>);

    fn describe(&self) -> String {
        format!(
            "k = {} slices of {} bits, {}",
            self.num_hashes(),
            self.slice_bits(),
            at(self.capacity(), self.target_fpp())
        )
    }
}
