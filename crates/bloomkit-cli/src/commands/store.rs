//! Filter options shared by the verbs (kind, hashing), and creating, opening, saving and
//! describing filters.
//!
//! Every verb works on [`AnyFilter`], so a new filter kind plugs in by adding a variant to
//! [`KindArg`] and an arm to [`new_filter`] (and to the kind-specific parts of `info`).

use std::path::Path;

use anyhow::{bail, Result};
use bloomkit::{
    AnyFilter, BlockedBloomFilter, BloomFilter, Filter, HashFunction, IndexScheme, Persist,
};
use clap::{Args, ValueEnum};

/// The kinds of filter the CLI can create.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum KindArg {
    /// The classic Bloom filter.
    #[default]
    Bloom,
    /// The blocked Bloom filter: all bits of an item in one 64-byte cache line.
    Blocked,
}

/// The 128-bit hash function, as named on the command line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum HashArg {
    /// MurmurHash3 x64_128 (the seeds' hash).
    #[default]
    Murmur3,
    /// XXH3-128 (faster on long items).
    Xxh3,
}

impl From<HashArg> for HashFunction {
    fn from(arg: HashArg) -> Self {
        match arg {
            HashArg::Murmur3 => HashFunction::Murmur3,
            HashArg::Xxh3 => HashFunction::Xxh3,
        }
    }
}

/// How the k positions of an item are derived, as named on the command line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum SchemeArg {
    /// One digest, k positions by enhanced double hashing.
    #[default]
    Double,
    /// k independent seeded digests (the seeds' construction).
    Seeded,
}

impl From<SchemeArg> for IndexScheme {
    fn from(arg: SchemeArg) -> Self {
        match arg {
            SchemeArg::Double => IndexScheme::EnhancedDoubleHashing,
            SchemeArg::Seeded => IndexScheme::SeededHashes,
        }
    }
}

/// The hashing options of `create` and `build`.
#[derive(Debug, Args)]
pub struct HashingArgs {
    /// The 128-bit hash function.
    #[arg(long = "hash", value_enum, default_value_t)]
    pub function: HashArg,

    /// How the k bit positions are derived from an item.
    #[arg(long, value_enum, default_value_t)]
    pub scheme: SchemeArg,

    /// The per-filter hash seed (default 0).
    #[arg(long, value_name = "N", conflicts_with = "random_seed")]
    pub seed: Option<u64>,

    /// Draw the seed from the operating system's random generator.
    #[arg(long)]
    pub random_seed: bool,
}

/// How big a new filter is: from a capacity and ε, or explicit bits and hashes (the
/// library fills in whatever is left out).
#[derive(Debug, Clone, Copy, Default)]
pub struct Sizing {
    /// n, the number of items expected.
    pub capacity: Option<u64>,
    /// ε, the false-positive probability wanted at capacity.
    pub fpp: Option<f64>,
    /// m, the number of bits.
    pub bits: Option<u64>,
    /// k, the number of hash functions.
    pub hashes: Option<u32>,
}

/// A new, empty filter of `kind`.
pub fn new_filter(kind: KindArg, sizing: Sizing, hashing: &HashingArgs) -> Result<AnyFilter> {
    match kind {
        KindArg::Bloom => {
            let mut builder = BloomFilter::builder()
                .hash_function(hashing.function.into())
                .index_scheme(hashing.scheme.into());
            if let Some(n) = sizing.capacity {
                builder = builder.capacity(n);
            }
            if let Some(fpp) = sizing.fpp {
                builder = builder.fpp(fpp);
            }
            if let Some(m) = sizing.bits {
                builder = builder.num_bits(m);
            }
            if let Some(k) = sizing.hashes {
                builder = builder.num_hashes(k);
            }
            if let Some(seed) = hashing.seed {
                builder = builder.seed(seed);
            }
            if hashing.random_seed {
                builder = builder.random_seed();
            }
            Ok(builder.build()?.into())
        }
        KindArg::Blocked => {
            if hashing.scheme == SchemeArg::Seeded {
                bail!(
                    "the blocked filter derives all positions from one digest; \
                     --scheme seeded is not available for it"
                );
            }
            let mut builder = BlockedBloomFilter::builder().hash_function(hashing.function.into());
            if let Some(n) = sizing.capacity {
                builder = builder.capacity(n);
            }
            if let Some(fpp) = sizing.fpp {
                builder = builder.fpp(fpp);
            }
            if let Some(m) = sizing.bits {
                builder = builder.num_bits(m);
            }
            if let Some(k) = sizing.hashes {
                builder = builder.num_hashes(k);
            }
            if let Some(seed) = hashing.seed {
                builder = builder.seed(seed);
            }
            if hashing.random_seed {
                builder = builder.random_seed();
            }
            Ok(builder.build()?.into())
        }
    }
}

/// Reads a filter file of any kind. The library's error already names the file and what is
/// wrong with it ("F is not a valid filter file: truncated: …").
pub fn open(path: &Path) -> Result<AnyFilter> {
    Ok(AnyFilter::load(path)?)
}

/// Writes a filter file atomically: on any failure the old file, if any, is left as it was.
pub fn save(filter: &AnyFilter, path: &Path) -> Result<()> {
    if path.as_os_str().is_empty() {
        bail!("the output file name is empty");
    }
    Ok(filter.save(path)?)
}

/// A one-line description of a filter's parameters.
pub fn describe(filter: &AnyFilter) -> String {
    let hashing = filter.hashing();
    let common = format!(
        "{}, {}, seed {}, {} in memory",
        hashing.function.name(),
        hashing.scheme.name(),
        hashing.seed,
        human_bytes(filter.memory_bytes() as u64)
    );
    match filter {
        AnyFilter::Bloom(f) => format!(
            "bloom filter: m = {} bits, k = {}, capacity {} at ε = {}, {common}",
            f.num_bits(),
            f.num_hashes(),
            f.capacity(),
            probability(f.target_fpp())
        ),
        AnyFilter::Blocked(f) => format!(
            "blocked filter: {} blocks of 512 bits (m = {}), k = {}, capacity {} at ε = {}, \
             {common}",
            f.num_blocks(),
            f.num_bits(),
            f.num_hashes(),
            f.capacity(),
            probability(f.target_fpp())
        ),
        other => format!("{} filter: {common}", other.kind()),
    }
}

/// A probability with six decimals, or in scientific notation when that would hide it.
pub fn probability(p: f64) -> String {
    if p == 0.0 || p >= 1e-4 {
        format!("{p:.6}")
    } else {
        format!("{p:.3e}")
    }
}

/// A byte count in binary units ("1.5 MiB").
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_bytes_uses_binary_units() {
        assert_eq!(human_bytes(0), "0 B");
        assert_eq!(human_bytes(1023), "1023 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(12 << 20), "12.0 MiB");
    }

    #[test]
    fn small_probabilities_stay_visible() {
        assert_eq!(probability(0.01), "0.010000");
        assert_eq!(probability(0.0), "0.000000");
        assert_eq!(probability(1.5e-9), "1.500e-9");
    }
}
