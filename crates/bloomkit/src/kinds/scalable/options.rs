//! How the registry builds a scalable filter by name ([`Declared`]): its options (its
//! layers are sized for it, so no m or k) and its one-line description.

use super::{GrowthRule, ScalableBloomFilter, ScalableBloomFilterBuilder as B};
use crate::core::spec::{
    text::{count, probability},
    Apply, Choice, Declared, KindOption, BITS, HASHES,
};

/// The growth rules, by name.
const RULES: &[Choice] = &[
    Choice {
        name: "paper",
        help: "Almeida et al.'s: layer i has n₀·sⁱ items at ε₀·rⁱ, ε₀ = ε(1 − r)",
    },
    Choice {
        name: "redisbloom",
        help: "RedisBloom 2.4's BF.RESERVE … EXPANSION s: the first layer n₀ items at ε/2, \
               each next s times the newest's items at half its error, libbloom's sizing; \
               RedisBloom's hashing; `export --to redis` writes it",
    },
];

crate::core::spec::spec_builder!(B => ScalableBloomFilter);

impl Declared for ScalableBloomFilter {
    type Builder = B;

    const OPTIONS: &'static [KindOption<B>] = &[
        KindOption::scheme(B::index_scheme),
        KindOption::hash_function(B::hash_function),
        KindOption::new(
            "growth",
            "S",
            "s, the factor by which each layer's capacity grows: 2 or 4 (any s ≥ 1 with --growth-rule redisbloom, as BF.RESERVE's EXPANSION)",
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
        KindOption::new(
            "growth-rule",
            "RULE",
            "how layers are sized: paper, or redisbloom (as BF.RESERVE … EXPANSION s)",
            "paper",
            "redisbloom",
            Apply::Choice(RULES, B::growth_rule_named),
        ),
    ];

    const NOT_TAKEN: &'static [(&'static str, &'static str)] = &[
        (BITS, "its layers are sized from --capacity and --fpp"),
        (HASHES, "its layers are sized from --capacity and --fpp"),
    ];

    fn describe(&self) -> String {
        if self.growth_rule() == GrowthRule::RedisBloom {
            return format!(
                "{}, first layer capacity {}, RedisBloom's growth (expansion {}), ε ≤ {}",
                count(self.num_layers() as u64, "layer"),
                self.initial_capacity(),
                self.growth_factor(),
                probability(self.target_fpp())
            );
        }
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
