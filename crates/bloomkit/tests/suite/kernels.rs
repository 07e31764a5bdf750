//! The SIMD kernels of `bloomkit::arch` against their scalar twins: on random blocks and
//! random items, every level this CPU runs gives the scalar answer and leaves the same bits,
//! and an item set by one level is found by every level (no false negatives on any path);
//! on random byte strings and seeds, every level hashes as the scalar twin of `murmur2x8`.

use bloomkit::arch::murmur2x8::{murmur2x8_at, murmur2x8_scalar};
use bloomkit::arch::{available_levels, block256, block512};
use bloomkit::hash::murmur2;
use proptest::prelude::*;

use crate::conformance;

/// 2 000 cases from the suite's fixed seed.
fn config() -> ProptestConfig {
    conformance::config(2000)
}

/// Sparse and dense blocks alike: each word is a random word ANDed or ORed with another, so
/// that tests see mostly-empty, mostly-full and in-between blocks.
fn words64() -> impl Strategy<Value = [u64; 8]> {
    (any::<[u64; 8]>(), any::<[u64; 8]>(), 0u8..3).prop_map(|(a, b, how)| {
        let mut w = a;
        for (x, y) in w.iter_mut().zip(b) {
            *x = match how {
                0 => *x & y,
                1 => *x | y,
                _ => *x,
            };
        }
        w
    })
}

fn words32() -> impl Strategy<Value = [u32; 8]> {
    words64().prop_map(|w| std::array::from_fn(|i| (w[i] ^ (w[i] >> 32)) as u32))
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn block512_simd_answers_and_sets_bits_like_scalar(
        block in words64(), lo in any::<u64>(), hi in any::<u64>(),
        k in prop_oneof![Just(8u32), 1u32..=64],
    ) {
        let want = block512::has_scalar(&block, lo, hi, k);
        let mut want_block = block;
        let want_changed = block512::set_scalar(&mut want_block, lo, hi, k);
        for level in available_levels() {
            prop_assert_eq!(block512::has_at(level, &block, lo, hi, k), want, "{:?}", level);
            let mut got = block;
            prop_assert_eq!(block512::set_at(level, &mut got, lo, hi, k), want_changed);
            prop_assert_eq!(got, want_block, "{:?}: different bits", level);
            // What one level set, every level finds.
            for reader in available_levels() {
                prop_assert!(block512::has_at(reader, &got, lo, hi, k));
            }
        }
    }

    #[test]
    fn block256_simd_answers_and_sets_bits_like_scalar(block in words32(), x in any::<u32>()) {
        let want = block256::has_scalar(&block, x);
        let mut want_block = block;
        let want_changed = block256::set_scalar(&mut want_block, x);
        for level in available_levels() {
            prop_assert_eq!(block256::has_at(level, &block, x), want, "{:?}", level);
            let mut got = block;
            prop_assert_eq!(block256::set_at(level, &mut got, x), want_changed);
            prop_assert_eq!(got, want_block, "{:?}: different bits", level);
            for reader in available_levels() {
                prop_assert!(block256::has_at(reader, &got, x));
            }
        }
    }

    /// Each case checks the string and its three shorter prefixes, so every case sees all
    /// four tail lengths (0–3 bytes after the 4-byte blocks); lengths run 0 to 64.
    #[test]
    fn murmur2x8_simd_hashes_like_scalar_for_every_tail_length(
        bytes in proptest::collection::vec(any::<u8>(), 0..=64),
        seeds in any::<[u32; 8]>(),
    ) {
        for len in bytes.len().saturating_sub(3)..=bytes.len() {
            let item = &bytes[..len];
            let want = murmur2x8_scalar(item, &seeds);
            prop_assert_eq!(want, seeds.map(|seed| murmur2(item, seed)), "scalar, len {}", len);
            for level in available_levels() {
                prop_assert_eq!(murmur2x8_at(level, item, &seeds), want, "{:?}, len {}", level, len);
            }
        }
    }
}

/// The scalar twin of the 512-bit block sets exactly k bits per item when they do not
/// collide, one word per bit in turn, at the 6-bit fields of the digest.
#[test]
fn block512_mask_is_the_documented_fields() {
    let lo = 0x0123_4567_89ab_cdefu64;
    let mask = block512::mask(lo, 0, 5);
    for (w, &m) in mask.iter().enumerate() {
        let want = if w < 5 {
            1u64 << ((lo >> (6 * w)) & 63)
        } else {
            0
        };
        assert_eq!(m, want, "word {w}");
    }
}

/// Parquet's mask: word i holds the bit (x · salt[i]) >> 27 (BloomFilter.md).
#[test]
fn block256_mask_is_the_specification() {
    let x = 0xdead_beefu32;
    let mask = block256::mask(x);
    for (i, &m) in mask.iter().enumerate() {
        let bit = x.wrapping_mul(block256::SALT[i]) >> 27;
        assert_eq!(m, 1 << bit, "word {i}");
    }
    assert_eq!(block256::SALT[0], 0x47b6_137b);
    assert_eq!(block256::SALT[7], 0x5c6b_fb31);
}

#[test]
fn this_machine_runs_a_simd_level_where_it_has_one() {
    // On the x86-64 development and CI machines AVX2 is present; the comparison above is
    // only meaningful when it is. Elsewhere the scalar level alone is compared.
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        assert!(available_levels().len() >= 2);
    }
    assert_eq!(available_levels()[0], bloomkit::arch::SimdLevel::Scalar);
}

/// A test's `LocateKey`: fold2-128's digest and the blocked filter's multiply-shift block.
struct Fold2Blocks;

impl block512::LocateKey for Fold2Blocks {
    fn prepare(seed: u64) -> [u64; 2] {
        bloomkit::hash::fold2_prepare_u64(seed)
    }
    fn locate(key: u64, prepared: [u64; 2], blocks: usize) -> (usize, u64, u64) {
        let d = bloomkit::hash::fold2_128_u64_prepared(key, prepared);
        let (lo, hi) = (d as u64, (d >> 64) as u64);
        (bloomkit::hash::reduce(hi, blocks as u64) as usize, lo, hi)
    }
}

/// Blocks of 64-bit words as a filter holds them.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Words([u64; 8]);
impl AsRef<[u64; 8]> for Words {
    fn as_ref(&self) -> &[u64; 8] {
        &self.0
    }
}
impl AsMut<[u64; 8]> for Words {
    fn as_mut(&mut self) -> &mut [u64; 8] {
        &mut self.0
    }
}

proptest! {
    #![proptest_config(conformance::config(500))]

    /// The keyed kernels (hash, block and test in one call, chosen once) at every level
    /// answer and set bits like the scalar twin: locate, then the block's scalar test.
    #[test]
    fn block512_keyed_kernels_answer_and_set_bits_like_scalar(
        blocks in proptest::collection::vec(words64(), 1..8),
        keys in proptest::collection::vec(any::<u64>(), 1..20),
        seed in any::<u64>(),
        k in prop_oneof![Just(8u32), 1u32..=64],
    ) {
        let blocks: Vec<Words> = blocks.into_iter().map(Words).collect();
        let prepared = <Fold2Blocks as block512::LocateKey>::prepare(seed);
        for level in available_levels() {
            let kernels = block512::KeyedKernels::<Words>::at::<Fold2Blocks>(level, seed, k);
            let mut want = blocks.clone();
            let mut got = blocks.clone();
            for &key in &keys {
                prop_assert_eq!(
                    kernels.has(&blocks, key, k),
                    block512::has_key_scalar::<Words, Fold2Blocks>(&blocks, key, prepared[0], prepared[1], k),
                    "{:?}", level
                );
                let changed = block512::set_key_scalar::<Words, Fold2Blocks>(&mut want, key, prepared[0], prepared[1], k);
                prop_assert_eq!(kernels.set(&mut got, key, k), changed, "{:?}", level);
                prop_assert!(kernels.has(&got, key, k), "{:?}: a set key is missed", level);
            }
            prop_assert_eq!(&got, &want, "{:?}: different bits", level);
        }
    }
}
