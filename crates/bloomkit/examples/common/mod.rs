//! What the measuring examples share: the keys they insert and query.

/// The i-th key: SplitMix64's output function of `i`, so keys are distinct, spread over
/// all 64 bits and the same in every example and run.
pub fn key(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
