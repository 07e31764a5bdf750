//! The filter kinds as the studies build them, and their theoretical false-positive rate
//! as a function of the number of items, from [`bloomkit::params`].

use anyhow::Result;
use bloomkit::{
    AnyFilter, BlockedBloomFilter, BloomFilter, CountingBloomFilter, CuckooFilter,
    DeletableBloomFilter, Filter, ScalableBloomFilter, StableBloomFilter,
    VariableIncrementBloomFilter,
};

/// A kind with the choices a study makes for it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Variant {
    /// The classic Bloom filter.
    Bloom,
    /// The blocked Bloom filter (512-bit blocks).
    Blocked,
    /// The counting Bloom filter (4-bit counters).
    Counting,
    /// The variable-increment counting Bloom filter (L = 4, 8-bit counters).
    ViCounting,
    /// The deletable Bloom filter with r regions (`None`: the library's default of one
    /// region per 8 data bits).
    Deletable(Option<u64>),
    /// The scalable Bloom filter (growth 2, tightening 0.5).
    Scalable,
    /// The stable Bloom filter (3-bit cells).
    Stable,
    /// The cuckoo filter (buckets of 4).
    Cuckoo,
}

impl Variant {
    /// One of each kind, with the library's defaults.
    pub const EVERY: [Variant; 8] = [
        Variant::Bloom,
        Variant::Blocked,
        Variant::Counting,
        Variant::ViCounting,
        Variant::Deletable(None),
        Variant::Scalable,
        Variant::Stable,
        Variant::Cuckoo,
    ];

    /// The name in tables and legends.
    pub fn label(self) -> String {
        match self {
            Variant::Bloom => "bloom".into(),
            Variant::Blocked => "blocked".into(),
            Variant::Counting => "counting".into(),
            Variant::ViCounting => "vi-counting".into(),
            Variant::Deletable(None) => "deletable".into(),
            Variant::Deletable(Some(r)) => format!("deletable ({r} regions)"),
            Variant::Scalable => "scalable".into(),
            Variant::Stable => "stable".into(),
            Variant::Cuckoo => "cuckoo".into(),
        }
    }

    /// A filter of this kind for `capacity` items at `fpp`, hash seed `seed`.
    pub fn build(self, capacity: u64, fpp: f64, seed: u64) -> Result<AnyFilter> {
        Ok(match self {
            Variant::Bloom => BloomFilter::builder()
                .capacity(capacity)
                .fpp(fpp)
                .seed(seed)
                .build()?
                .into(),
            Variant::Blocked => BlockedBloomFilter::builder()
                .capacity(capacity)
                .fpp(fpp)
                .seed(seed)
                .build()?
                .into(),
            Variant::Counting => CountingBloomFilter::builder()
                .capacity(capacity)
                .fpp(fpp)
                .seed(seed)
                .build()?
                .into(),
            Variant::ViCounting => VariableIncrementBloomFilter::builder()
                .capacity(capacity)
                .fpp(fpp)
                .seed(seed)
                .build()?
                .into(),
            Variant::Deletable(regions) => {
                let mut builder = DeletableBloomFilter::builder()
                    .capacity(capacity)
                    .fpp(fpp)
                    .seed(seed);
                if let Some(r) = regions {
                    builder = builder.regions(r);
                }
                builder.build()?.into()
            }
            Variant::Scalable => ScalableBloomFilter::builder()
                .capacity(capacity)
                .fpp(fpp)
                .seed(seed)
                .build()?
                .into(),
            Variant::Stable => StableBloomFilter::builder()
                .capacity(capacity)
                .fpp(fpp)
                .seed(seed)
                .build()?
                .into(),
            Variant::Cuckoo => CuckooFilter::builder()
                .capacity(capacity)
                .fpp(fpp)
                .seed(seed)
                .build()?
                .into(),
        })
    }
}

/// The theory of a built filter: the library's [`Filter::fpp_at`] — each kind's formula,
/// kept next to its code — for the filter's parameters, with n capped at the items the
/// filter accepted (a cuckoo filter refuses items once full; the rest hold what they took).
#[derive(Clone, Debug)]
pub struct Theory {
    filter: AnyFilter,
    accepted: u64,
}

impl Theory {
    /// The theory of a filter as built, which accepted `accepted` items.
    pub fn of(filter: &AnyFilter, accepted: u64) -> Option<Theory> {
        Some(Theory {
            filter: filter.clone(),
            accepted,
        })
    }

    /// The false-positive probability after `n` insertions of distinct items.
    pub fn fpp(&self, n: u64) -> f64 {
        self.filter.fpp_at(n.min(self.accepted))
    }

    /// Whether the formula describes every n (the stable filter's is a limit only).
    pub fn is_exact_in_n(&self) -> bool {
        !self.filter.kind().forgets()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bloomkit::params::fpp_exact;

    #[test]
    fn every_kind_builds_and_has_a_theory() {
        for variant in Variant::EVERY
            .into_iter()
            .chain([Variant::Deletable(Some(16))])
        {
            let mut filter = variant.build(1_000, 0.01, 1).unwrap();
            for i in 0..1_000u64 {
                filter.try_insert(&i).unwrap();
            }
            let theory = Theory::of(&filter, 1_000).unwrap();
            let p = theory.fpp(1_000);
            assert!(p > 0.0 && p <= 0.0125, "{} {p}", variant.label());
        }
    }

    #[test]
    fn scalable_theory_adds_layers() {
        // Layer 0 holds n₀ items at ε₀ = ε(1 − r); layer 1 holds 2n₀ at ε₀·r. Past n₀ the
        // rate is that of both layers, each at its own fill.
        let filter = Variant::Scalable.build(100, 0.01, 1).unwrap();
        let theory = Theory::of(&filter, u64::MAX).unwrap();
        let AnyFilter::Scalable(f) = &filter else {
            unreachable!()
        };
        let first = &f.layers()[0];
        let one = fpp_exact(first.num_bits(), first.num_hashes(), 50);
        assert!((theory.fpp(50) - one).abs() < 1e-15);
        assert!(theory.fpp(150) > theory.fpp(100));
        assert!(
            theory.fpp(1_000) <= 0.01,
            "the bound holds at 10× the capacity"
        );
    }
}
