//! Kernels of Parquet's split block (256 bits: eight `u32` words).
//!
//! `mask(x)` sets, in word i, the bit `(x · salt[i] mod 2³²) >> 27` (Apache Parquet,
//! BloomFilter.md, "Technical Approach"). [`mask`] is the scalar definition; [`has`] and
//! [`set`] dispatch to the AVX2 kernel where the CPU has it.

use super::{SimdLevel, Supported};

/// 32-bit words per block.
pub const WORDS: usize = 8;

/// The eight odd constants of Parquet's specification, one per word.
pub const SALT: [u32; WORDS] = [
    0x47b6_137b,
    0x4497_4d91,
    0x8824_ad5b,
    0xa2b7_289d,
    0x7054_95c7,
    0x2df1_424b,
    0x9efc_4947,
    0x5c6b_fb31,
];

/// The block of one bit per word for the 32-bit value `x` (scalar twin; the definition).
#[inline(always)]
pub fn mask(x: u32) -> [u32; WORDS] {
    let mut mask = [0u32; WORDS];
    for (m, salt) in mask.iter_mut().zip(SALT) {
        *m = 1u32 << (x.wrapping_mul(salt) >> 27);
    }
    mask
}

/// Scalar twin of [`has`].
#[inline(always)]
pub fn has_scalar(block: &[u32; WORDS], x: u32) -> bool {
    let mut missing = 0u32;
    for (m, b) in mask(x).iter().zip(block) {
        missing |= m & !b;
    }
    missing == 0
}

/// Scalar twin of [`set`].
#[inline(always)]
pub fn set_scalar(block: &mut [u32; WORDS], x: u32) -> bool {
    let mut missing = 0u32;
    for (m, b) in mask(x).iter().zip(block.iter_mut()) {
        missing |= m & !*b;
        *b |= m;
    }
    missing != 0
}

/// Parquet's `block_check`: whether every bit of `mask(x)` is set in `block`.
#[inline(always)]
pub fn has(block: &[u32; WORDS], x: u32) -> bool {
    has_with(super::detected(), block, x)
}

/// Parquet's `block_insert`; returns whether any bit was 0 before.
#[inline(always)]
pub fn set(block: &mut [u32; WORDS], x: u32) -> bool {
    set_with(super::detected(), block, x)
}

/// [`has`] at `level`, a level this CPU was seen to run.
#[inline(always)]
pub(crate) fn has_with(level: Supported, block: &[u32; WORDS], x: u32) -> bool {
    #[cfg(target_arch = "x86_64")]
    if level.level() != SimdLevel::Scalar {
        // SAFETY: a `Supported` is made only from detection (`arch`'s constructors), so a SIMD
        // level here means the CPU was seen to have AVX2.
        return unsafe { super::x86::block256_has_avx2(block, x) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = level;
    has_scalar(block, x)
}

/// [`set`] at `level` (see `has_with`).
#[inline(always)]
pub(crate) fn set_with(level: Supported, block: &mut [u32; WORDS], x: u32) -> bool {
    #[cfg(target_arch = "x86_64")]
    if level.level() != SimdLevel::Scalar {
        // SAFETY: a `Supported` is made only from detection (`arch`'s constructors), so a SIMD
        // level here means the CPU was seen to have AVX2.
        return unsafe { super::x86::block256_set_avx2(block, x) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = level;
    set_scalar(block, x)
}

/// [`has`] at a given level, for the tests that hold the levels to the scalar twin: a level
/// this CPU lacks runs the scalar twin.
#[inline(always)]
pub fn has_at(level: SimdLevel, block: &[u32; WORDS], x: u32) -> bool {
    has_with(super::supported(level), block, x)
}

/// [`set`] at a given level, for the tests that hold the levels to the scalar twin: a level
/// this CPU lacks runs the scalar twin.
#[inline(always)]
pub fn set_at(level: SimdLevel, block: &mut [u32; WORDS], x: u32) -> bool {
    set_with(super::supported(level), block, x)
}
