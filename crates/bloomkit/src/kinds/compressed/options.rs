//! How the registry builds a compressed Bloom filter by name ([`Declared`]): its options,
//! its one-line description, and the classic filter it is in memory.

use super::{CompressedBloomFilter, CompressedBloomFilterBuilder as B};
use crate::core::spec::{
    text::{at, human_bytes},
    Apply, Declared, KindOption,
};
use crate::filter::Filter;
use crate::AnyFilter;

crate::core::spec::spec_builder!(B => CompressedBloomFilter);

impl Declared for CompressedBloomFilter {
    type Builder = B;

    const OPTIONS: &'static [KindOption<B>] = crate::core::spec::array_options!(
        B,
        "bits",
        "",
        KindOption::new(
            "max-bits-per-item",
            "B",
            "the most bits per item the array may take in memory; larger caps send less",
            "4 × the classic filter's",
            "12",
            Apply::F64(B::max_bits_per_item),
        ),
    );

    const EXPORTS: bool = true;

    fn describe(&self) -> String {
        format!(
            "m = {} bits, k = {}, {}, saved arithmetic-coded ({} of payload)",
            self.num_bits(),
            self.num_hashes(),
            at(self.capacity(), self.target_fpp()),
            human_bytes(self.compressed_len() as u64)
        )
    }

    fn into_compressed(self) -> Result<AnyFilter, Self> {
        Ok(self.into())
    }

    fn into_uncompressed(self) -> Result<AnyFilter, Self> {
        Ok(self.into_bloom().into())
    }
}
