//! Theory of the cuckoo filter: the formulas its builder sizes with and its
//! `Filter::fpp_at` answers with.

/// The load factor α a cuckoo filter is sized for: with buckets of 4 slots, partial-key
/// cuckoo hashing fills about 95% of the slots before an insertion fails (Fan, Andersen,
/// Kaminsky & Mitzenmacher, "Cuckoo Filter: Practically Better Than Bloom", CoNEXT 2014,
/// where it measures the load factor).
pub const CUCKOO_TARGET_LOAD: f64 = 0.95;

/// The fingerprint widths (in bits) a cuckoo filter supports.
pub const CUCKOO_FINGERPRINT_BITS: [u32; 3] = [8, 12, 16];

/// The false-positive probability of a cuckoo filter with `fingerprint_bits`-bit
/// fingerprints (f), buckets of `bucket_size` slots (b) and load factor `load` (α):
///
/// ```text
///     ε = 1 − (1 − 1/2^f)^(2bα)
/// ```
///
/// A query compares its fingerprint with the 2bα occupied slots (on average) of its two
/// buckets, each a match with probability 2^−f (Fan et al., CoNEXT 2014, with
/// the occupancy α). At full load it is at most `2b / 2^f` ([`cuckoo_fpp_bound`]).
///
/// ```
/// use bloomkit::params::cuckoo_fpp;
/// let p = cuckoo_fpp(8, 4, 0.95);
/// assert!((p - 0.0293).abs() < 1e-4);
/// assert_eq!(cuckoo_fpp(12, 4, 0.0), 0.0);
/// ```
pub fn cuckoo_fpp(fingerprint_bits: u32, bucket_size: u32, load: f64) -> f64 {
    let per_slot = (-(fingerprint_bits as f64)).exp2();
    let compared = 2.0 * bucket_size as f64 * load.clamp(0.0, 1.0);
    -(compared * (-per_slot).ln_1p()).exp_m1()
}

/// The upper bound `2b / 2^f` on a cuckoo filter's false-positive probability: 2b slots are
/// compared, each a match with probability 2^−f (Fan et al., CoNEXT 2014).
///
/// ```
/// use bloomkit::params::cuckoo_fpp_bound;
/// assert_eq!(cuckoo_fpp_bound(8, 4), 8.0 / 256.0);
/// ```
pub fn cuckoo_fpp_bound(fingerprint_bits: u32, bucket_size: u32) -> f64 {
    2.0 * bucket_size as f64 / (fingerprint_bits as f64).exp2()
}

/// The smallest supported fingerprint width f ∈ {8, 12, 16} with `2b / 2^f ≤ fpp`, or
/// `None` if even 16 bits do not reach `fpp` (the bound f ≥ log₂(2b/ε) of Fan et al.,
/// CoNEXT 2014).
///
/// ```
/// use bloomkit::params::cuckoo_fingerprint_bits;
/// assert_eq!(cuckoo_fingerprint_bits(0.05, 4), Some(8));
/// assert_eq!(cuckoo_fingerprint_bits(0.01, 4), Some(12));
/// assert_eq!(cuckoo_fingerprint_bits(0.001, 4), Some(16));
/// assert_eq!(cuckoo_fingerprint_bits(1e-5, 4), None);
/// ```
pub fn cuckoo_fingerprint_bits(fpp: f64, bucket_size: u32) -> Option<u32> {
    CUCKOO_FINGERPRINT_BITS
        .into_iter()
        .find(|&f| cuckoo_fpp_bound(f, bucket_size) <= fpp)
}

/// The number of buckets for `capacity` items in buckets of `bucket_size` slots at load
/// factor `load`: the next power of two `≥ ⌈n / (b·α)⌉` (a power of two so that the
/// alternate bucket `i ⊕ h(fp)` stays in range), or `None` past `2⁶³`.
///
/// ```
/// use bloomkit::params::cuckoo_num_buckets;
/// assert_eq!(cuckoo_num_buckets(1, 4, 0.95), Some(1));
/// assert_eq!(cuckoo_num_buckets(3_891, 4, 0.95), Some(1024)); // 1024 · 4 · 0.95 = 3 891.2
/// assert_eq!(cuckoo_num_buckets(3_892, 4, 0.95), Some(2048));
/// ```
pub fn cuckoo_num_buckets(capacity: u64, bucket_size: u32, load: f64) -> Option<u64> {
    let needed = (capacity as f64 / (bucket_size.max(1) as f64 * load)).ceil();
    if needed.is_nan() || needed >= 9.2e18 {
        return None;
    }
    (needed as u64).max(1).checked_next_power_of_two()
}

#[cfg(test)]
mod tests {
    use crate::params::*;

    #[test]
    fn cuckoo_fpp_matches_the_paper() {
        // At full load the exact form is just under the bound 2b/2^f.
        for f in CUCKOO_FINGERPRINT_BITS {
            for b in [2, 4, 8] {
                let exact = cuckoo_fpp(f, b, 1.0);
                let bound = cuckoo_fpp_bound(f, b);
                assert!(exact < bound && exact > bound * 0.9, "f {f} b {b}");
            }
        }
        // Half the load, about half the rate.
        let ratio = cuckoo_fpp(12, 4, 0.5) / cuckoo_fpp(12, 4, 1.0);
        assert!((ratio - 0.5).abs() < 1e-3, "{ratio}");
        assert_eq!(cuckoo_fingerprint_bits(0.0313, 4), Some(8));
        assert_eq!(cuckoo_fingerprint_bits(0.03, 4), Some(12));
        assert_eq!(cuckoo_fingerprint_bits(0.01, 2), Some(12));
        assert_eq!(cuckoo_fingerprint_bits(0.01, 8), Some(12));
    }

    #[test]
    fn cuckoo_buckets_are_powers_of_two_with_room_for_the_items() {
        for n in [1u64, 2, 3, 4, 100, 3_800, 1_000_000, 123_456_789] {
            let buckets = cuckoo_num_buckets(n, 4, CUCKOO_TARGET_LOAD).unwrap();
            assert!(buckets.is_power_of_two());
            assert!(buckets as f64 * 4.0 * CUCKOO_TARGET_LOAD >= n as f64, "{n}");
            assert!(buckets == 1 || (buckets / 2) as f64 * 4.0 * CUCKOO_TARGET_LOAD < n as f64);
        }
        assert_eq!(cuckoo_num_buckets(u64::MAX, 4, 0.95), Some(1 << 63));
        assert_eq!(cuckoo_num_buckets(u64::MAX, 2, 0.5), None);
    }
    /// One block of one 64-bit word, k = 2, one item of 2 settings: X = 1 set bit with
    /// probability 1/64, 2 with 63/64, so the exact rate is E[(X/64)²] = 253/262144, where
    /// the classic expression says (1 − (63/64)²)² = 16129/16777216. With λ tiny the
    /// Poisson sum is λe^(−λ)·f(1) to first order.
    #[test]
    fn exact_in_block_rate_matches_enumeration() {
        let blocks = 1_000_000u64;
        let lambda = 1.0 / blocks as f64;
        let p1 = lambda * (-lambda).exp();
        let exact = fpp_blocked(blocks, 64, 2, 1);
        let putze = fpp_blocked_putze(blocks, 64, 2, 1);
        // i = 2 adds about λ²/2 · f(2) < 10⁻¹².
        assert!((exact - p1 * 253.0 / 262_144.0).abs() < 1e-14, "{exact}");
        assert!(
            (putze - p1 * 16_129.0 / 16_777_216.0).abs() < 1e-14,
            "{putze}"
        );
    }
}
