//! x86-64 SIMD kernels. Each is a safe `#[target_feature]` function; calling one is `unsafe`
//! (the CPU must have the feature), which the dispatchers in `block512` and `block256` do only
//! after [`super::cpu_level`] has seen the feature. Their scalar twins are the definitions.

use std::arch::x86_64::*;

use super::block256::SALT;
use super::block512::{fields, LocateKey};
use super::{AtLevel, SimdLevel, Supported};

/// `work.run(Avx2)` compiled with AVX2 (see `super::dispatch`).
#[target_feature(enable = "avx2")]
pub(super) fn run_avx2<W: AtLevel>(work: W) -> W::Output {
    work.run(Supported(SimdLevel::Avx2))
}

/// `work.run(Avx512)` compiled with AVX-512F and AVX2 (see `super::dispatch`).
#[target_feature(enable = "avx512f,avx2")]
pub(super) fn run_avx512<W: AtLevel>(work: W) -> W::Output {
    work.run(Supported(SimdLevel::Avx512))
}

/// The two 256-bit halves of an item's 512-bit mask (AVX2): per round, the eight 6-bit
/// fields shifted down into lanes (`vpsrlvq`), masked to 0…63, and `1 << field` (`vpsllvq`);
/// lanes past k in the last round are cleared by a compare against the lane number.
#[inline]
#[target_feature(enable = "avx2")]
fn block512_mask_avx2(lo: u64, hi: u64, num_hashes: u32) -> (__m256i, __m256i) {
    let shifts_lo = _mm256_setr_epi64x(0, 6, 12, 18);
    let shifts_hi = _mm256_setr_epi64x(24, 30, 36, 42);
    let lanes_lo = _mm256_setr_epi64x(0, 1, 2, 3);
    let lanes_hi = _mm256_setr_epi64x(4, 5, 6, 7);
    let low6 = _mm256_set1_epi64x(63);
    let one = _mm256_set1_epi64x(1);
    let full = |f: u64| {
        let f = _mm256_set1_epi64x(f as i64);
        (
            _mm256_sllv_epi64(one, _mm256_and_si256(_mm256_srlv_epi64(f, shifts_lo), low6)),
            _mm256_sllv_epi64(one, _mm256_and_si256(_mm256_srlv_epi64(f, shifts_hi), low6)),
        )
    };
    if num_hashes == 8 {
        // The sizing's usual k: one full round, no lanes to clear.
        return full(lo);
    }
    let (mut m0, mut m1) = (_mm256_setzero_si256(), _mm256_setzero_si256());
    for round in 0..num_hashes.div_ceil(8) {
        let f = _mm256_set1_epi64x(fields(lo, hi, round) as i64);
        let mut b0 =
            _mm256_sllv_epi64(one, _mm256_and_si256(_mm256_srlv_epi64(f, shifts_lo), low6));
        let mut b1 =
            _mm256_sllv_epi64(one, _mm256_and_si256(_mm256_srlv_epi64(f, shifts_hi), low6));
        let lanes = num_hashes - round * 8;
        if lanes < 8 {
            let n = _mm256_set1_epi64x(lanes as i64);
            b0 = _mm256_and_si256(b0, _mm256_cmpgt_epi64(n, lanes_lo));
            b1 = _mm256_and_si256(b1, _mm256_cmpgt_epi64(n, lanes_hi));
        }
        m0 = _mm256_or_si256(m0, b0);
        m1 = _mm256_or_si256(m1, b1);
    }
    (m0, m1)
}

#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn block512_has_avx2(block: &[u64; 8], lo: u64, hi: u64, num_hashes: u32) -> bool {
    let (m0, m1) = block512_mask_avx2(lo, hi, num_hashes);
    let p = block.as_ptr().cast::<__m256i>();
    // SAFETY: `block` is 64 readable bytes; the unaligned loads read bytes 0..32 and 32..64.
    let (b0, b1) = unsafe { (_mm256_loadu_si256(p), _mm256_loadu_si256(p.add(1))) };
    // testc(b, m) = 1 iff m & !b == 0: every bit of the mask is in the block.
    (_mm256_testc_si256(b0, m0) & _mm256_testc_si256(b1, m1)) != 0
}

#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn block512_set_avx2(block: &mut [u64; 8], lo: u64, hi: u64, num_hashes: u32) -> bool {
    let (m0, m1) = block512_mask_avx2(lo, hi, num_hashes);
    let p = block.as_mut_ptr().cast::<__m256i>();
    // SAFETY: `block` is 64 bytes borrowed mutably; the unaligned loads and stores touch bytes
    // 0..32 and 32..64 of it and nothing else.
    unsafe {
        let (b0, b1) = (_mm256_loadu_si256(p), _mm256_loadu_si256(p.add(1)));
        let full = _mm256_testc_si256(b0, m0) & _mm256_testc_si256(b1, m1);
        _mm256_storeu_si256(p, _mm256_or_si256(b0, m0));
        _mm256_storeu_si256(p.add(1), _mm256_or_si256(b1, m1));
        full == 0
    }
}

/// The 512-bit mask in one register (AVX-512F): the same fields and shifts as the AVX2
/// kernel, with the lanes past k zeroed by a write mask.
#[inline]
#[target_feature(enable = "avx512f")]
fn block512_mask_avx512(lo: u64, hi: u64, num_hashes: u32) -> __m512i {
    let shifts = _mm512_setr_epi64(0, 6, 12, 18, 24, 30, 36, 42);
    let low6 = _mm512_set1_epi64(63);
    let one = _mm512_set1_epi64(1);
    if num_hashes == 8 {
        let f = _mm512_set1_epi64(lo as i64);
        return _mm512_sllv_epi64(one, _mm512_and_si512(_mm512_srlv_epi64(f, shifts), low6));
    }
    let mut m = _mm512_setzero_si512();
    for round in 0..num_hashes.div_ceil(8) {
        let f = _mm512_set1_epi64(fields(lo, hi, round) as i64);
        let index = _mm512_and_si512(_mm512_srlv_epi64(f, shifts), low6);
        let lanes = num_hashes - round * 8;
        let keep: __mmask8 = if lanes >= 8 { 0xff } else { (1u8 << lanes) - 1 };
        m = _mm512_or_si512(m, _mm512_maskz_sllv_epi64(keep, one, index));
    }
    m
}

#[inline]
#[target_feature(enable = "avx512f")]
pub(super) fn block512_has_avx512(block: &[u64; 8], lo: u64, hi: u64, num_hashes: u32) -> bool {
    let m = block512_mask_avx512(lo, hi, num_hashes);
    // SAFETY: `block` is 64 readable bytes; the unaligned load reads exactly them.
    let b = unsafe { _mm512_loadu_si512(block.as_ptr().cast()) };
    let missing = _mm512_andnot_si512(b, m);
    _mm512_test_epi64_mask(missing, missing) == 0
}

#[inline]
#[target_feature(enable = "avx512f")]
pub(super) fn block512_set_avx512(block: &mut [u64; 8], lo: u64, hi: u64, num_hashes: u32) -> bool {
    let m = block512_mask_avx512(lo, hi, num_hashes);
    let p = block.as_mut_ptr();
    // SAFETY: `block` is 64 bytes borrowed mutably; the unaligned load and store touch
    // exactly them.
    unsafe {
        let b = _mm512_loadu_si512(p.cast());
        let missing = _mm512_andnot_si512(b, m);
        _mm512_storeu_si512(p.cast(), _mm512_or_si512(b, m));
        _mm512_test_epi64_mask(missing, missing) != 0
    }
}

/// The whole-`u64` kernels: `L::locate` (the filter's hash and block reduction, inlined
/// here) and the block test or set, in one call compiled with the features of the block
/// kernel it calls; with `K8`, k is the constant 8. One definition per (query or insert,
/// feature set), all four from this macro.
macro_rules! keyed_kernel {
    ($(#[$doc:meta] $name:ident($features:literal, $as:ident::$method:ident $(, $mutable:tt)?) -> $block:ident;)*) => {$(
        #[$doc]
        #[inline]
        #[target_feature(enable = $features)]
        pub(super) fn $name<B: $as<[u64; 8]>, L: LocateKey, const K8: bool>(
            blocks: &$($mutable)? [B],
            key: u64,
            p0: u64,
            p1: u64,
            k: u32,
        ) -> bool {
            let (i, lo, hi) = L::locate(key, [p0, p1], blocks.len());
            $block(blocks[i].$method(), lo, hi, if K8 { 8 } else { k })
        }
    )*};
}

keyed_kernel! {
    /// A whole `u64` query (AVX2).
    block512_has_key_avx2("avx2", AsRef::as_ref) -> block512_has_avx2;
    /// A whole `u64` insert (AVX2).
    block512_set_key_avx2("avx2", AsMut::as_mut, mut) -> block512_set_avx2;
    /// A whole `u64` query (AVX-512F).
    block512_has_key_avx512("avx512f,avx2", AsRef::as_ref) -> block512_has_avx512;
    /// A whole `u64` insert (AVX-512F).
    block512_set_key_avx512("avx512f,avx2", AsMut::as_mut, mut) -> block512_set_avx512;
}

/// Parquet's mask for `x` (AVX2): `x · salt` in eight 32-bit lanes (`vpmulld`, the low 32
/// bits of each product), `>> 27`, then `1 << that` (`vpsllvd`).
#[inline]
#[target_feature(enable = "avx2")]
fn block256_mask_avx2(x: u32) -> __m256i {
    let salt = _mm256_setr_epi32(
        SALT[0] as i32,
        SALT[1] as i32,
        SALT[2] as i32,
        SALT[3] as i32,
        SALT[4] as i32,
        SALT[5] as i32,
        SALT[6] as i32,
        SALT[7] as i32,
    );
    let product = _mm256_mullo_epi32(_mm256_set1_epi32(x as i32), salt);
    _mm256_sllv_epi32(_mm256_set1_epi32(1), _mm256_srli_epi32::<27>(product))
}

#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn block256_has_avx2(block: &[u32; 8], x: u32) -> bool {
    let m = block256_mask_avx2(x);
    // SAFETY: `block` is 32 readable bytes; the unaligned load reads exactly them.
    let b = unsafe { _mm256_loadu_si256(block.as_ptr().cast()) };
    _mm256_testc_si256(b, m) != 0
}

#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn block256_set_avx2(block: &mut [u32; 8], x: u32) -> bool {
    let m = block256_mask_avx2(x);
    let p = block.as_mut_ptr().cast::<__m256i>();
    // SAFETY: `block` is 32 bytes borrowed mutably; the unaligned load and store touch
    // exactly them.
    unsafe {
        let b = _mm256_loadu_si256(p);
        _mm256_storeu_si256(p, _mm256_or_si256(b, m));
        _mm256_testc_si256(b, m) == 0
    }
}

/// [`super::murmur2x8::murmur2x8`] with the eight states in one register: each block mixed
/// once (scalar), then `h ← h·m ⊕ k` in all lanes (`vpmulld`, `vpxor`); the avalanche on
/// all lanes at once.
#[inline(never)]
#[target_feature(enable = "avx2")]
pub(super) fn murmur2x8_avx2(bytes: &[u8], seeds: &[u32; 8]) -> [u32; 8] {
    use super::murmur2x8::{mix, tail_word, M};
    let m = _mm256_set1_epi32(M as i32);
    // SAFETY: `seeds` is 32 readable bytes; the unaligned load reads exactly them.
    let seeds = unsafe { _mm256_loadu_si256(seeds.as_ptr().cast()) };
    let mut h = _mm256_xor_si256(seeds, _mm256_set1_epi32(bytes.len() as u32 as i32));
    let mut blocks = bytes.chunks_exact(4);
    for block in &mut blocks {
        let k = _mm256_set1_epi32(mix(block) as i32);
        h = _mm256_xor_si256(_mm256_mullo_epi32(h, m), k);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        let t = _mm256_set1_epi32(tail_word(tail) as i32);
        h = _mm256_mullo_epi32(_mm256_xor_si256(h, t), m);
    }
    h = _mm256_xor_si256(h, _mm256_srli_epi32::<13>(h));
    h = _mm256_mullo_epi32(h, m);
    h = _mm256_xor_si256(h, _mm256_srli_epi32::<15>(h));
    let mut out = [0u32; 8];
    // SAFETY: `out` is 32 writable bytes; the unaligned store writes exactly them.
    unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), h) };
    out
}
