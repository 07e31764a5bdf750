//! How the registry builds a classic filter by name ([`Declared`]): its options, its
//! one-line description, its batch and parallel inserts, the parameters block (n, ε, k, m), and
//! its compressed form for sending.

use super::{BloomFilter, BloomFilterBuilder as B};
use crate::compressed::CompressedBloomFilter;
use crate::core::spec::{text::at, Declared, KindOption, ParametersBlock};
use crate::format::view::{self, OpenView};
use crate::AnyFilter;

crate::core::spec::spec_builder!(B => BloomFilter);

impl Declared for BloomFilter {
    type Builder = B;

    const OPTIONS: &'static [KindOption<B>] = crate::core::spec::array_options!(B, "bits", "");

    const PARALLEL_INSERT: bool = true;
    const EXPORTS: bool = true;

    const VIEW: Option<OpenView> = Some(view::open::<super::ViewShape>);

    fn describe(&self) -> String {
        format!(
            "m = {} bits, k = {}, {}",
            self.num_bits(),
            self.num_hashes(),
            at(self.capacity(), self.target_fpp())
        )
    }

    fn parameters_block(&self) -> Option<ParametersBlock> {
        Some(ParametersBlock {
            classic_fill_ratio: Some(self.fill_ratio()),
            ..ParametersBlock::of(self, self.num_hashes(), self.num_bits())
        })
    }

    #[cfg(feature = "rayon")]
    fn insert_parallel_bytes(&mut self, items: &[&[u8]]) -> Result<(), crate::Error> {
        self.insert_parallel(items);
        Ok(())
    }

    fn into_compressed(self) -> Result<AnyFilter, Self> {
        Ok(CompressedBloomFilter::from_bloom(self).into())
    }

    fn into_uncompressed(self) -> Result<AnyFilter, Self> {
        Ok(self.into())
    }
}
