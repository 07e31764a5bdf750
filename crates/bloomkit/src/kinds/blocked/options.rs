//! How the registry builds a blocked filter by name ([`Declared`]): its options, its
//! one-line description, its batch and parallel inserts.

use super::{BlockedBloomFilter, BlockedBloomFilterBuilder as B};
use crate::core::spec::{text::at, Declared, KindOption, SCHEME};
use crate::format::view::{self, OpenView};

crate::core::spec::spec_builder!(B => BlockedBloomFilter);

impl Declared for BlockedBloomFilter {
    type Builder = B;

    const OPTIONS: &'static [KindOption<B>] = &[
        KindOption::bits("bits, rounded up to whole 512-bit blocks", B::num_cells),
        KindOption::hashes("", B::num_hashes),
        // The kind's default is fold2-128: the example is another one.
        KindOption::hash_function(B::hash_function).example("murmur3-x64-128"),
    ];

    const NOT_TAKEN: &'static [(&'static str, &'static str)] = &[(
        SCHEME,
        "a blocked filter derives all its positions inside one block from one digest",
    )];

    const PARALLEL_INSERT: bool = true;

    const VIEW: Option<OpenView> = Some(view::open::<super::ViewShape>);

    fn describe(&self) -> String {
        format!(
            "{} blocks of 512 bits (m = {}), k = {}, {}",
            self.num_blocks(),
            self.num_bits(),
            self.num_hashes(),
            at(self.capacity(), self.target_fpp())
        )
    }

    #[cfg(feature = "rayon")]
    fn insert_parallel_bytes(&mut self, items: &[&[u8]]) -> Result<(), crate::Error> {
        self.insert_parallel(items);
        Ok(())
    }
}
