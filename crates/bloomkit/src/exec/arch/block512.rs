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

/// Where a `u64` key's bits are in a filter of `blocks` blocks under `seed`: the block's
/// index (below `blocks`) and the digest halves `(lo, hi)` the kernels take. The filter
/// implements it for a hash function, so that [`KeyedKernels`] hash, locate and test in one
/// call with the hash compiled into the kernel.
pub trait LocateKey: 'static {
    /// What `locate` takes for the filter's seed: the seed with what the hash mixes into it
    /// for every key done once.
    fn prepare(seed: u64) -> [u64; 2];
    /// `(block, lo, hi)` of `key`, `prepared` being [`prepare`](Self::prepare) of the seed.
    fn locate(key: u64, prepared: [u64; 2], blocks: usize) -> (usize, u64, u64);
}

/// Scalar twin of a keyed query: [`LocateKey::locate`] (`[p0, p1]` the prepared seed),
/// then [`has_scalar`] on that block.
pub fn has_key_scalar<B: AsRef<[u64; WORDS]>, L: LocateKey>(
    blocks: &[B],
    key: u64,
    p0: u64,
    p1: u64,
    k: u32,
) -> bool {
    let (i, lo, hi) = L::locate(key, [p0, p1], blocks.len());
    has_scalar(blocks[i].as_ref(), lo, hi, k)
}

/// Scalar twin of a keyed insert.
pub fn set_key_scalar<B: AsMut<[u64; WORDS]>, L: LocateKey>(
    blocks: &mut [B],
    key: u64,
    p0: u64,
    p1: u64,
    k: u32,
) -> bool {
    let n = blocks.len();
    let (i, lo, hi) = L::locate(key, [p0, p1], n);
    set_scalar(blocks[i].as_mut(), lo, hi, k)
}

type HasKey<B> = unsafe fn(&[B], u64, u64, u64, u32) -> bool;
type SetKey<B> = unsafe fn(&mut [B], u64, u64, u64, u32) -> bool;

/// A whole `u64` query and insert, each one function chosen once (for a level, a
/// [`LocateKey`] and whether k is 8) and called through a pointer: a loop of single
/// queries makes one call per query and no test of level, hash or k (sbbf-rs's design).
/// The hash is inlined into the `#[target_feature]` function with the block test.
///
/// ```
/// use bloomkit::arch::block512::{KeyedKernels, LocateKey};
/// use bloomkit::arch::{simd_level, SimdLevel};
///
/// /// fold2-128's digest, the block by multiply-shift of its high half.
/// struct Fold2;
/// impl LocateKey for Fold2 {
///     fn prepare(seed: u64) -> [u64; 2] {
///         bloomkit::hash::fold2_prepare_u64(seed)
///     }
///     fn locate(key: u64, prepared: [u64; 2], blocks: usize) -> (usize, u64, u64) {
///         let d = bloomkit::hash::fold2_128_u64_prepared(key, prepared);
///         let (lo, hi) = (d as u64, (d >> 64) as u64);
///         (bloomkit::hash::reduce(hi, blocks as u64) as usize, lo, hi)
///     }
/// }
///
/// #[derive(Clone, Copy)]
/// struct Block([u64; 8]);
/// impl AsRef<[u64; 8]> for Block { fn as_ref(&self) -> &[u64; 8] { &self.0 } }
/// impl AsMut<[u64; 8]> for Block { fn as_mut(&mut self) -> &mut [u64; 8] { &mut self.0 } }
///
/// let mut blocks = vec![Block([0; 8]); 100];
/// let kernels = KeyedKernels::<Block>::at::<Fold2>(simd_level(), 7, 8);
/// assert!(kernels.set(&mut blocks, 42, 8)); // new: some bit was 0
/// assert!(kernels.has(&blocks, 42, 8));
/// let scalar = KeyedKernels::<Block>::at::<Fold2>(SimdLevel::Scalar, 7, 8);
/// assert!(scalar.has(&blocks, 42, 8)); // every level sets and finds the same bits
/// ```
pub struct KeyedKernels<B: 'static> {
    has: HasKey<B>,
    set: SetKey<B>,
    /// The filter's seed, [`LocateKey::prepare`]d.
    prepared: [u64; 2],
}

impl<B> Clone for KeyedKernels<B> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<B> Copy for KeyedKernels<B> {}

impl<B> std::fmt::Debug for KeyedKernels<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KeyedKernels")
    }
}

impl<B: AsRef<[u64; WORDS]> + AsMut<[u64; WORDS]> + 'static> KeyedKernels<B> {
    /// The kernels for `level`, digests located by `L` under `seed`, and `k` bits per item
    /// (k = 8, the sizing's usual k, gets kernels with k a constant).
    pub fn new<L: LocateKey>(level: Supported, seed: u64, k: u32) -> Self {
        let (has, set) = Self::chosen::<L>(level, k);
        Self {
            has,
            set,
            prepared: L::prepare(seed),
        }
    }

    fn chosen<L: LocateKey>(level: Supported, k: u32) -> (HasKey<B>, SetKey<B>) {
        #[cfg(target_arch = "x86_64")]
        {
            use super::x86;
            match (level.level(), k == 8) {
                (SimdLevel::Avx512, true) => {
                    return (
                        x86::block512_has_key_avx512::<B, L, true>,
                        x86::block512_set_key_avx512::<B, L, true>,
                    )
                }
                (SimdLevel::Avx512, false) => {
                    return (
                        x86::block512_has_key_avx512::<B, L, false>,
                        x86::block512_set_key_avx512::<B, L, false>,
                    )
                }
                (SimdLevel::Avx2, true) => {
                    return (
                        x86::block512_has_key_avx2::<B, L, true>,
                        x86::block512_set_key_avx2::<B, L, true>,
                    )
                }
                (SimdLevel::Avx2, false) => {
                    return (
                        x86::block512_has_key_avx2::<B, L, false>,
                        x86::block512_set_key_avx2::<B, L, false>,
                    )
                }
                (SimdLevel::Scalar, _) => {}
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = level;
        (has_key_scalar::<B, L>, set_key_scalar::<B, L>)
    }

    /// The kernels at a given level, for the tests that hold the levels to the scalar twin:
    /// a level this CPU lacks gets the scalar twins.
    pub fn at<L: LocateKey>(level: SimdLevel, seed: u64, k: u32) -> Self {
        Self::new::<L>(super::supported(level), seed, k)
    }

    /// Whether every bit of `key`'s mask is set in its block. `k` must be the k the kernels
    /// were chosen for.
    #[inline(always)]
    pub fn has(&self, blocks: &[B], key: u64, k: u32) -> bool {
        // SAFETY: `new` chose the function for a `Supported` level, which only detection
        // makes: the CPU runs the features the function was compiled with. Its arguments
        // are plain values and a borrowed slice.
        unsafe { (self.has)(blocks, key, self.prepared[0], self.prepared[1], k) }
    }

    /// Sets `key`'s bits in its block; whether any was 0 before (see [`has`](Self::has)).
    #[inline(always)]
    pub fn set(&self, blocks: &mut [B], key: u64, k: u32) -> bool {
        // SAFETY: as in `has`.
        unsafe { (self.set)(blocks, key, self.prepared[0], self.prepared[1], k) }
    }
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
