//! The filter kinds as the studies build them, and their theoretical false-positive rate
//! as a function of the number of items, from [`bloomkit::params`].

use anyhow::Result;
use bloomkit::registry::BuildSpec;
use bloomkit::{AnyFilter, Filter, Kind};

/// A kind with the choices a study makes for it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Variant {
    /// A kind of the library's registry, with the library's defaults.
    Kind(Kind),
    /// The deletable Bloom filter with r regions (seed 004's 12 and 16).
    DeletableRegions(u64),
}

impl Variant {
    /// One of each kind of the registry ([`Kind::ALL`]), with the library's defaults: a kind
    /// added to the library joins the studies that compare every kind by itself.
    pub const EVERY: [Variant; Kind::ALL.len()] = {
        let mut every = [Variant::Kind(Kind::ALL[0]); Kind::ALL.len()];
        let mut i = 0;
        while i < every.len() {
            every[i] = Variant::Kind(Kind::ALL[i]);
            i += 1;
        }
        every
    };

    /// The classic Bloom filter.
    pub const BLOOM: Variant = Variant::Kind(Kind::Bloom);
    /// The blocked Bloom filter (512-bit blocks).
    pub const BLOCKED: Variant = Variant::Kind(Kind::Blocked);
    /// The counting Bloom filter (4-bit counters).
    pub const COUNTING: Variant = Variant::Kind(Kind::Counting);
    /// The variable-increment counting Bloom filter (L = 4, 8-bit counters).
    pub const VI_COUNTING: Variant = Variant::Kind(Kind::VariableIncrement);
    /// The deletable Bloom filter with the library's default of one region per 8 data bits.
    pub const DELETABLE: Variant = Variant::Kind(Kind::Deletable);
    /// The scalable Bloom filter (growth 2, tightening 0.5).
    pub const SCALABLE: Variant = Variant::Kind(Kind::Scalable);
    /// The stable Bloom filter (3-bit cells).
    pub const STABLE: Variant = Variant::Kind(Kind::Stable);
    /// The cuckoo filter (buckets of 4).
    pub const CUCKOO: Variant = Variant::Kind(Kind::Cuckoo);

    /// The kind built.
    pub fn kind(self) -> Kind {
        match self {
            Variant::Kind(kind) => kind,
            Variant::DeletableRegions(_) => Kind::Deletable,
        }
    }

    /// The name in tables and legends.
    pub fn label(self) -> String {
        match self {
            Variant::Kind(kind) => kind.name().to_owned(),
            Variant::DeletableRegions(r) => format!("{} ({r} regions)", self.kind()),
        }
    }

    /// A filter of this kind for `capacity` items at `fpp`, hash seed `seed`, from the
    /// library's registry ([`AnyFilter::build`]).
    pub fn build(self, capacity: u64, fpp: f64, seed: u64) -> Result<AnyFilter> {
        let mut spec = BuildSpec {
            seed: Some(seed),
            ..BuildSpec::new(capacity, fpp)
        };
        if let Variant::DeletableRegions(r) = self {
            spec = spec.option("regions", r.to_string());
        }
        Ok(AnyFilter::build(self.kind(), &spec)?)
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
            .chain([Variant::DeletableRegions(16)])
        {
            let mut filter = variant.build(1_000, 0.01, 1).unwrap();
            for i in 0..1_000u64 {
                filter.try_insert(&i).unwrap();
            }
            let theory = Theory::of(&filter, 1_000).unwrap();
            // At capacity, the rate the kind was built for (robustBF's sizing, from its paper,
            // gives more than the ε asked for: its own target says so).
            let p = theory.fpp(1_000);
            let target = filter.target_fpp().max(0.01);
            assert!(
                p > 0.0 && p <= 1.25 * target,
                "{} {p} (target {target})",
                variant.label()
            );
        }
    }

    #[test]
    fn scalable_theory_adds_layers() {
        // Layer 0 holds n₀ items at ε₀ = ε(1 − r); layer 1 holds 2n₀ at ε₀·r. Past n₀ the
        // rate is that of both layers, each at its own fill.
        let filter = Variant::SCALABLE.build(100, 0.01, 1).unwrap();
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
