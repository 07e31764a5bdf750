//! How the registry builds a split block Bloom filter by name ([`Declared`]): its options
//! (Parquet fixes the hash and k), its one-line description, its batch and parallel
//! inserts.

use super::{SplitBlockBloomFilter, SplitBlockBloomFilterBuilder as B};
use crate::core::spec::{text::at, Declared, KindOption, HASH, HASHES, SCHEME};
use crate::format::view::{self, OpenView};

crate::core::spec::spec_builder!(B => SplitBlockBloomFilter);

impl Declared for SplitBlockBloomFilter {
    type Builder = B;

    const VIEW: Option<OpenView> = Some(view::open::<super::ViewShape>);

    const OPTIONS: &'static [KindOption<B>] = &[KindOption::bits(
        "bits, rounded up to whole 256-bit blocks",
        B::num_cells,
    )];

    const NOT_TAKEN: &'static [(&'static str, &'static str)] = &[
        (HASH, "it hashes with XXH64, as Parquet"),
        (
            SCHEME,
            "it sets one bit in each of the eight words of one block, from one digest, as \
             Parquet",
        ),
        (
            HASHES,
            "k is 8, one bit in each word of a 256-bit block, as Parquet",
        ),
    ];

    const PARALLEL_INSERT: bool = true;

    fn describe(&self) -> String {
        format!(
            "Parquet split block, {} blocks of 256 bits ({} bytes), k = 8, {}",
            self.num_blocks(),
            self.num_bytes(),
            at(self.capacity(), self.target_fpp())
        )
    }

    #[cfg(feature = "rayon")]
    fn insert_parallel_bytes(&mut self, items: &[&[u8]]) -> Result<(), crate::Error> {
        self.insert_parallel(items);
        Ok(())
    }
}
