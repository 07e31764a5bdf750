//! MurmurHash2 (32-bit, [`crate::hash::murmur2`]) of one input under eight seeds at once:
//! what a sketch with one hash per row computes for every item (RedisBloom's count-min
//! sketch and top-k hash an item once per row, with the row as the seed).
//!
//! MurmurHash2 mixes each 4-byte block `k` on its own (`k ← k·m; k ← k ⊕ k ≫ 24;
//! k ← k·m`) and only then folds it into the state (`h ← h·m ⊕ k`); the seed enters only
//! as the state's start, `h = seed ⊕ len`. So one pass over the input mixes each block once
//! and folds it into eight states, which AVX2 keeps in one register (`vpmulld`, `vpxor`),
//! and the final avalanche (`h ⊕= h ≫ 13; h ← h·m; h ⊕= h ≫ 15`) runs on all eight at once.
//! [`murmur2x8_scalar`] is the scalar twin (the definition); [`murmur2x8`] dispatches.

use super::{SimdLevel, Supported};

/// Seeds per call.
pub const LANES: usize = 8;

/// MurmurHash2's multiplier.
pub(super) const M: u32 = 0x5bd1_e995;

/// One 4-byte block, mixed (little-endian, as the reference reads it on x86).
#[inline(always)]
pub(super) fn mix(block: &[u8]) -> u32 {
    let mut k = u32::from_le_bytes(block.try_into().expect("4-byte block"));
    k = k.wrapping_mul(M);
    k ^= k >> 24;
    k.wrapping_mul(M)
}

/// The last 1–3 bytes, as the reference folds them in (`h ^= tail; h *= m`).
#[inline(always)]
pub(super) fn tail_word(tail: &[u8]) -> u32 {
    tail.iter()
        .enumerate()
        .fold(0u32, |t, (i, &byte)| t | (byte as u32) << (8 * i))
}

/// `murmur2(bytes, seeds[i])` for each `i` (scalar twin; the definition).
#[inline(always)]
pub fn murmur2x8_scalar(bytes: &[u8], seeds: &[u32; LANES]) -> [u32; LANES] {
    // The reference mixes in the length as a C `int` converted to `uint32_t`.
    let len = bytes.len() as u32;
    let mut h = seeds.map(|seed| seed ^ len);
    let mut blocks = bytes.chunks_exact(4);
    for block in &mut blocks {
        let k = mix(block);
        for h in &mut h {
            *h = h.wrapping_mul(M) ^ k;
        }
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        let t = tail_word(tail);
        for h in &mut h {
            *h = (*h ^ t).wrapping_mul(M);
        }
    }
    h.map(|mut h| {
        h ^= h >> 13;
        h = h.wrapping_mul(M);
        h ^ (h >> 15)
    })
}

/// `murmur2(bytes, seeds[i])` for each `i`, at the detected level.
///
/// ```
/// use bloomkit::arch::murmur2x8::murmur2x8;
/// use bloomkit::hash::murmur2;
///
/// let seeds = [1919, 0, 1, 2, 3, 4, 5, 6];
/// let hashes = murmur2x8(b"an item", &seeds);
/// for (hash, seed) in hashes.iter().zip(seeds) {
///     assert_eq!(*hash, murmur2(b"an item", seed));
/// }
/// ```
#[inline(always)]
pub fn murmur2x8(bytes: &[u8], seeds: &[u32; LANES]) -> [u32; LANES] {
    murmur2x8_with(super::detected(), bytes, seeds)
}

/// [`murmur2x8`] at `level`, a level this CPU was seen to run.
#[inline(always)]
pub(crate) fn murmur2x8_with(level: Supported, bytes: &[u8], seeds: &[u32; LANES]) -> [u32; LANES] {
    #[cfg(target_arch = "x86_64")]
    if level.level() != SimdLevel::Scalar {
        // SAFETY: a `Supported` is made only from detection (`arch`'s constructors), so a SIMD
        // level here means the CPU was seen to have AVX2.
        return unsafe { super::x86::murmur2x8_avx2(bytes, seeds) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = level;
    murmur2x8_scalar(bytes, seeds)
}

/// [`murmur2x8`] at a given level, for the tests that hold the levels to the scalar twin: a
/// level this CPU lacks runs the scalar twin.
#[inline]
pub fn murmur2x8_at(level: SimdLevel, bytes: &[u8], seeds: &[u32; LANES]) -> [u32; LANES] {
    murmur2x8_with(super::supported(level), bytes, seeds)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::available_levels;
    use crate::hash::murmur2;

    /// Every length from 0 to 70 (each tail length, many blocks) and seed sets with 0, the
    /// top of the range and consecutive rows: every level gives murmur2 under each seed.
    #[test]
    fn every_level_gives_murmur2_under_each_seed() {
        let data: Vec<u8> = (0..70u32)
            .map(|i| (i.wrapping_mul(151) ^ 0x5a) as u8)
            .collect();
        let seed_sets = [
            [1919, 0, 1, 2, 3, 4, 5, 6],
            [0, 1, 2, 3, 4, 5, 6, 7],
            [u32::MAX, 0x9747_b28c, 1 << 31, 7, 0, 12345, u32::MAX - 1, 2],
        ];
        for level in available_levels() {
            for len in 0..=data.len() {
                let item = &data[..len];
                for seeds in &seed_sets {
                    let expected = seeds.map(|seed| murmur2(item, seed));
                    assert_eq!(murmur2x8_scalar(item, seeds), expected, "scalar, len {len}");
                    assert_eq!(
                        murmur2x8_at(level, item, seeds),
                        expected,
                        "{}, len {len}, {seeds:?}",
                        level.name()
                    );
                }
            }
        }
    }
}
