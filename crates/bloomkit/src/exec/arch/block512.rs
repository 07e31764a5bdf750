//! Kernels of the blocked filter's 512-bit block (eight `u64` words).
//!
//! An item is given by its digest halves `(lo, hi)` and k. Bit t (t = 0 … k−1) goes to word
//! `t mod 8` at the 6-bit field `(fields_r >> 6(t mod 8)) & 63` of its round r = ⌊t/8⌋, where
//! `fields_0 = lo` and `fields_r = more_fields(lo, hi, r)` for r ≥ 1. [`mask`] is the scalar
//! definition; [`has`] and [`set`] dispatch to the SIMD kernels where the CPU has them.

use super::{SimdLevel, Supported};

/// 64-bit words per block.
pub const WORDS: usize = 8;

/// Fresh 64 bits for the fields of round r ≥ 1 (k > 8): SplitMix64's finaliser (Steele, Lea &
/// Flood, OOPSLA 2014) of the digest and the round.
#[inline(always)]
pub fn more_fields(lo: u64, hi: u64, round: u64) -> u64 {
    let mut z = lo ^ hi.rotate_left(29) ^ round.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The fields word of round r.
#[inline(always)]
pub(super) fn fields(lo: u64, hi: u64, round: u32) -> u64 {
    if round == 0 {
        lo
    } else {
        more_fields(lo, hi, round as u64)
    }
}

/// The 512-bit mask of an item's k bits (scalar twin; the definition).
#[inline(always)]
pub fn mask(lo: u64, hi: u64, num_hashes: u32) -> [u64; WORDS] {
    let mut mask = [0u64; WORDS];
    let rounds = num_hashes.div_ceil(WORDS as u32);
    for round in 0..rounds {
        let f = fields(lo, hi, round);
        let lanes = (num_hashes - round * WORDS as u32).min(WORDS as u32) as usize;
        for (w, m) in mask.iter_mut().enumerate().take(lanes) {
            *m |= 1u64 << ((f >> (6 * w)) & 63);
        }
    }
    mask
}

/// Scalar twin of [`has`].
#[inline(always)]
pub fn has_scalar(block: &[u64; WORDS], lo: u64, hi: u64, num_hashes: u32) -> bool {
    let mask = mask(lo, hi, num_hashes);
    let mut missing = 0u64;
    for (m, b) in mask.iter().zip(block) {
        missing |= m & !b;
    }
    missing == 0
}

/// Scalar twin of [`set`].
#[inline(always)]
pub fn set_scalar(block: &mut [u64; WORDS], lo: u64, hi: u64, num_hashes: u32) -> bool {
    let mask = mask(lo, hi, num_hashes);
    let mut missing = 0u64;
    for (m, b) in mask.iter().zip(block.iter_mut()) {
        missing |= m & !*b;
        *b |= m;
    }
    missing != 0
}

/// Whether every bit of the item's mask is set in `block`.
#[inline(always)]
pub fn has(block: &[u64; WORDS], lo: u64, hi: u64, num_hashes: u32) -> bool {
    has_with(super::detected(), block, lo, hi, num_hashes)
}

/// Sets the item's bits in `block`; whether any of them was 0 before.
#[inline(always)]
pub fn set(block: &mut [u64; WORDS], lo: u64, hi: u64, num_hashes: u32) -> bool {
    set_with(super::detected(), block, lo, hi, num_hashes)
}

/// [`has`] at `level`, a level this CPU was seen to run.
#[inline(always)]
pub(crate) fn has_with(level: Supported, block: &[u64; WORDS], lo: u64, hi: u64, k: u32) -> bool {
    #[cfg(target_arch = "x86_64")]
    match level.level() {
        // SAFETY: a `Supported` is made only from detection (`arch`'s constructors), so
        // AVX-512 here means the CPU was seen to have AVX-512F and AVX2.
        SimdLevel::Avx512 => return unsafe { super::x86::block512_has_avx512(block, lo, hi, k) },
        // SAFETY: as above, AVX2 or above only when the CPU was seen to have AVX2.
        SimdLevel::Avx2 => return unsafe { super::x86::block512_has_avx2(block, lo, hi, k) },
        SimdLevel::Scalar => {}
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = level;
    has_scalar(block, lo, hi, k)
}

/// [`set`] at `level` (see `has_with`).
#[inline(always)]
pub(crate) fn set_with(
    level: Supported,
    block: &mut [u64; WORDS],
    lo: u64,
    hi: u64,
    k: u32,
) -> bool {
    #[cfg(target_arch = "x86_64")]
    match level.level() {
        // SAFETY: a `Supported` is made only from detection (`arch`'s constructors), so
        // AVX-512 here means the CPU was seen to have AVX-512F and AVX2.
        SimdLevel::Avx512 => return unsafe { super::x86::block512_set_avx512(block, lo, hi, k) },
        // SAFETY: as above, AVX2 or above only when the CPU was seen to have AVX2.
        SimdLevel::Avx2 => return unsafe { super::x86::block512_set_avx2(block, lo, hi, k) },
        SimdLevel::Scalar => {}
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = level;
    set_scalar(block, lo, hi, k)
}

/// [`has`] at a given level, for the tests that hold the levels to the scalar twin: a level
/// this CPU lacks runs the scalar twin.
#[inline(always)]
pub fn has_at(level: SimdLevel, block: &[u64; WORDS], lo: u64, hi: u64, k: u32) -> bool {
    has_with(super::supported(level), block, lo, hi, k)
}

/// [`set`] at a given level, for the tests that hold the levels to the scalar twin: a level
/// this CPU lacks runs the scalar twin.
#[inline(always)]
pub fn set_at(level: SimdLevel, block: &mut [u64; WORDS], lo: u64, hi: u64, k: u32) -> bool {
    set_with(super::supported(level), block, lo, hi, k)
}
