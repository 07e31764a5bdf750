//! The filter kinds as the studies build them, and their theoretical false-positive rate
//! as a function of the number of items, from [`bloomkit::params`].

use anyhow::Result;
use bloomkit::params::{cuckoo_fpp, fpp_blocked, fpp_exact, stable_fpp, vi_fpp};
use bloomkit::{
    AnyFilter, BlockedBloomFilter, BloomFilter, CountingBloomFilter, CuckooFilter,
    DeletableBloomFilter, ScalableBloomFilter, StableBloomFilter, VariableIncrementBloomFilter,
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

/// The parameters of a built filter that its theory needs.
// The fields are the letters of the formula each variant names.
#[allow(missing_docs)]
#[derive(Clone, Debug, PartialEq)]
pub enum Theory {
    /// `fpp_exact(m, k, n)` (classic, counting, and the deletable filter's data bits).
    Bloom { m: u64, k: u32 },
    /// `fpp_blocked(blocks, 512, k, n)` (Putze et al.'s Poisson sum, exact per block).
    Blocked { blocks: u64, k: u32 },
    /// `vi_fpp(m, k, n, L)`.
    Vi { m: u64, k: u32, base: u32 },
    /// One classic layer per (m, k, capacity), filled in turn.
    Scalable { layers: Vec<(u64, u32, u64)> },
    /// The stable point `stable_fpp(m, K, P, Max)`, reached after enough insertions.
    Stable {
        m: u64,
        k: u32,
        decrements: u64,
        max: u32,
    },
    /// `cuckoo_fpp(f, b, α)` with α the load after `min(n, accepted)` items.
    Cuckoo {
        f: u32,
        b: u32,
        slots: u64,
        accepted: u64,
    },
}

impl Theory {
    /// The theory of a filter as built (for the scalable filter, of the layers it has;
    /// for the cuckoo filter, with the number of items it accepted).
    pub fn of(filter: &AnyFilter, accepted: u64) -> Option<Theory> {
        Some(match filter {
            AnyFilter::Bloom(f) => Theory::Bloom {
                m: f.num_bits(),
                k: f.num_hashes(),
            },
            AnyFilter::Blocked(f) => Theory::Blocked {
                blocks: f.num_blocks(),
                k: f.num_hashes(),
            },
            AnyFilter::Counting(f) => Theory::Bloom {
                m: f.num_counters(),
                k: f.num_hashes(),
            },
            AnyFilter::VariableIncrement(f) => Theory::Vi {
                m: f.num_counters(),
                k: f.num_hashes(),
                base: f.increment_base(),
            },
            AnyFilter::Deletable(f) => Theory::Bloom {
                m: f.data_bits(),
                k: f.num_hashes(),
            },
            AnyFilter::Scalable(f) => Theory::Scalable {
                layers: f
                    .layers()
                    .iter()
                    .map(|l| (l.num_bits(), l.num_hashes(), l.capacity()))
                    .collect(),
            },
            AnyFilter::Stable(f) => Theory::Stable {
                m: f.num_cells(),
                k: f.num_hashes(),
                decrements: f.decrements(),
                max: f.max_value(),
            },
            AnyFilter::Cuckoo(f) => Theory::Cuckoo {
                f: f.fingerprint_bits(),
                b: f.bucket_size(),
                slots: f.num_slots(),
                accepted,
            },
            _ => return None,
        })
    }

    /// The false-positive probability after `n` insertions of distinct items.
    pub fn fpp(&self, n: u64) -> f64 {
        match *self {
            Theory::Bloom { m, k } => fpp_exact(m, k, n),
            Theory::Blocked { blocks, k } => fpp_blocked(blocks, 512, k, n),
            Theory::Vi { m, k, base } => vi_fpp(m, k, n, base),
            Theory::Scalable { ref layers } => {
                // Layers fill in turn; a query is a false positive when any layer says maybe.
                let mut left = n;
                let mut pass = 1.0;
                for &(m, k, capacity) in layers {
                    let here = left.min(capacity);
                    pass *= 1.0 - fpp_exact(m, k, here);
                    left -= here;
                    if left == 0 {
                        break;
                    }
                }
                1.0 - pass
            }
            Theory::Stable {
                m,
                k,
                decrements,
                max,
            } => stable_fpp(m, k, decrements, max),
            Theory::Cuckoo {
                f,
                b,
                slots,
                accepted,
            } => cuckoo_fpp(f, b, n.min(accepted) as f64 / slots.max(1) as f64),
        }
    }

    /// Whether the formula describes every n (the stable filter's is a limit only).
    pub fn is_exact_in_n(&self) -> bool {
        !matches!(self, Theory::Stable { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bloomkit::Filter;

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
        let theory = Theory::Scalable {
            layers: vec![(1000, 7, 100), (3000, 8, 200)],
        };
        assert!((theory.fpp(50) - fpp_exact(1000, 7, 50)).abs() < 1e-15);
        let both = 1.0 - (1.0 - fpp_exact(1000, 7, 100)) * (1.0 - fpp_exact(3000, 8, 50));
        assert!((theory.fpp(150) - both).abs() < 1e-15);
    }
}
