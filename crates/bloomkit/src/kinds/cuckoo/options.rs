//! How the registry builds a cuckoo filter by name ([`Declared`]): its options (it is sized
//! in buckets and fingerprints, and has no positions to derive), its one-line description,
//! its batch query and insert.

use super::{CuckooFilter, CuckooFilterBuilder as B, Layout};
use crate::core::spec::{
    text::{at, count},
    Apply, Choice, Declared, KindOption, BITS, HASHES, SCHEME,
};

/// The table layouts, by name.
const LAYOUTS: &[Choice] = &[
    Choice {
        name: "paper",
        help: "Fan et al.'s partial-key cuckoo hashing, fingerprints of f bits",
    },
    Choice {
        name: "redisbloom",
        help: "RedisBloom 2.4's CF table (one-byte fingerprints h mod 255 + 1, \
               CF.RESERVE's sizing), which `export --to redis` writes as CF.LOADCHUNK",
    },
];

crate::core::spec::spec_builder!(B => CuckooFilter);

impl Declared for CuckooFilter {
    type Builder = B;

    const OPTIONS: &'static [KindOption<B>] = &[
        KindOption::hash_function(B::hash_function),
        KindOption::new(
            "bucket-size",
            "B",
            "b, the slots per bucket: 2, 4 or 8",
            "4",
            "8",
            Apply::U32(B::bucket_size),
        ),
        KindOption::new(
            "fingerprint-bits",
            "F",
            "f, the fingerprint width: 8, 12 or 16 bits",
            "the smallest that reaches ε",
            "16",
            Apply::U32(B::fingerprint_bits),
        ),
        KindOption::new(
            "max-kicks",
            "N",
            "the most evictions per insert before the filter counts as full",
            "500",
            "100",
            Apply::U32(B::max_kicks),
        ),
        KindOption::new(
            "layout",
            "LAYOUT",
            "the table layout: paper, or redisbloom (RedisBloom's CF table)",
            "paper",
            "redisbloom",
            Apply::Choice(LAYOUTS, B::layout_named),
        ),
        KindOption::new(
            "expansion",
            "E",
            "with --layout redisbloom: grow by sub-filters of E times the newest one's \
             buckets when full, as CF.RESERVE … EXPANSION E (0 to 32768, rounded up to a \
             power of two; 0 never grows)",
            "0",
            "2",
            Apply::U32(B::expansion),
        ),
    ];

    const NOT_TAKEN: &'static [(&'static str, &'static str)] = &[
        (
            SCHEME,
            "a cuckoo filter takes its bucket and fingerprint from one digest; there are no \
             positions to derive",
        ),
        (
            BITS,
            "it is sized from --capacity and --fpp, with --bucket-size and --fingerprint-bits",
        ),
        (
            HASHES,
            "it is sized from --capacity and --fpp, with --bucket-size and --fingerprint-bits",
        ),
    ];

    const ESTIMATE: &'static str = "fingerprints held";

    fn describe(&self) -> String {
        let layout = match (self.layout(), self.num_sub_filters(), self.expansion()) {
            (Layout::Paper, ..) => String::new(),
            (Layout::RedisBloom, 1, 0) => " (RedisBloom's CF layout)".to_string(),
            (Layout::RedisBloom, 1, e) => format!(" (RedisBloom's CF layout, expansion {e})"),
            (Layout::RedisBloom, n, e) => {
                format!(" (RedisBloom's CF layout, {n} sub-filters, expansion {e})")
            }
        };
        format!(
            "{} of {} slots, {}-bit fingerprints{layout}, {}",
            count(self.num_buckets(), "bucket"),
            self.bucket_size(),
            self.fingerprint_bits(),
            at(self.capacity(), self.target_fpp())
        )
    }
}
