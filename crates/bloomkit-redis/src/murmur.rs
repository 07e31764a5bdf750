//! MurmurHash2 of one item under several seeds at once, for the count-min sketch and the
//! top-k, which hash every item once per row (seed = row) and the top-k once more for its
//! fingerprint (seed 1919), as RedisBloom 2.4 does.
//!
//! # Why the seeds can share one pass
//!
//! MurmurHash2 (Appleby; the 32-bit variant, [`bloomkit::hash::murmur2`]) runs each 4-byte
//! block `k` of the input through `k ← k·m; k ← k ⊕ (k ≫ 24); k ← k·m` and only then into
//! the state, `h ← h·m ⊕ k`; the seed enters only as the state's start, `h = seed ⊕ len`.
//! The mixed blocks are therefore the same for every seed: one pass over the item mixes
//! each block once and folds it into all the states, and only the two state steps per block
//! and the final avalanche (`h ⊕= h ≫ 13; h ← h·m; h ⊕= h ≫ 15`) are made once per seed.
//! For a 12-byte item and the eight hashes of a depth-7 top-k that is about a third of
//! the instructions of eight separate calls in scalar code, and with AVX2 (eight states in
//! one register) about a seventh; every result bit for bit the same (the tests hold it
//! against [`bloomkit::hash::murmur2`]).

/// How many seeds one pass hashes under.
pub const LANES: usize = bloomkit::arch::murmur2x8::LANES;

/// `murmur2(bytes, seeds[i])` for every `i`, in one pass over `bytes`: the library's
/// kernel ([`bloomkit::arch::murmur2x8`]: the eight states in one AVX2 register where the
/// CPU has AVX2, its scalar twin elsewhere).
///
/// ```no_run
/// // (Not run: this crate's global allocator is Redis's, absent outside a server.)
/// use bloomkit::hash::murmur2;
/// use bloomkit_redis::murmur::murmur2_seeds;
///
/// let seeds = [1919, 0, 1, 2, 3, 4, 5, 6];
/// let hashes = murmur2_seeds(b"an item", &seeds);
/// for (hash, seed) in hashes.iter().zip(seeds) {
///     assert_eq!(*hash, murmur2(b"an item", seed));
/// }
/// ```
#[inline(always)]
pub fn murmur2_seeds(bytes: &[u8], seeds: &[u32; LANES]) -> [u32; LANES] {
    bloomkit::arch::murmur2x8::murmur2x8(bytes, seeds)
}

/// The seeds `first, first + 1, …` (wrapping), [`LANES`] of them: rows `first..` of a
/// sketch.
#[inline]
pub fn row_seeds(first: u32) -> [u32; LANES] {
    std::array::from_fn(|i| first.wrapping_add(i as u32))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bloomkit::hash::murmur2;

    /// Every length from 0 to 40 (each tail length, several blocks) and seeds that include
    /// 0, the top-k's 1919 and the top of the range: each lane is murmur2 under its seed.
    #[test]
    fn every_lane_is_murmur2_under_its_seed() {
        let data: Vec<u8> = (0..40u32)
            .map(|i| (i.wrapping_mul(97) ^ 0xa5) as u8)
            .collect();
        let seed_sets = [
            [1919, 0, 1, 2, 3, 4, 5, 6],
            row_seeds(0),
            row_seeds(u32::MAX - 3),
            [0x9747_b28c, 7, 0, u32::MAX, 1 << 31, 12345, 1919, 2],
        ];
        for len in 0..=data.len() {
            let item = &data[..len];
            for seeds in &seed_sets {
                let expected = seeds.map(|seed| murmur2(item, seed));
                assert_eq!(murmur2_seeds(item, seeds), expected, "len {len}, {seeds:?}");
            }
        }
    }

    #[test]
    fn row_seeds_count_up_and_wrap() {
        assert_eq!(row_seeds(3), [3, 4, 5, 6, 7, 8, 9, 10]);
        assert_eq!(row_seeds(u32::MAX)[..2], [u32::MAX, 0]);
    }
}
