//! Sizing and theory of the classic Bloom filter.
//!
//! Notation as in the seeds and the literature: m bits, n items, k hash functions,
//! ε the false-positive probability (FPP).
//!
//! After n insertions with k independent, uniform hash functions, a given bit is still 0
//! with probability `(1 − 1/m)^(kn)`; a query for an absent item is a false positive when
//! all k of its bits are 1 (Bloom 1970; the seeds' formula):
//!
//! ```text
//!     FPP = (1 − (1 − 1/m)^(kn))^k  ≈  (1 − e^(−kn/m))^k
//! ```
//!
//! The approximation is minimised by `k = (m/n) ln 2`, where each bit is 1 with
//! probability 1/2 and `FPP = 2^(−k)`; solving for m gives the seeds' sizing rule
//! `m = −n ln ε / (ln 2)²` (about 9.6 bits per item at ε = 1%).
//!
//! Strictly, `(1 − (1 − 1/m)^(kn))^k` assumes the k bits of a query are independent; it
//! slightly underestimates the true rate for very small m (Bose et al. 2008), which does not
//! matter at the sizes filters are used at.

use crate::error::Error;

/// The largest filter this crate builds: 2⁴⁰ bits (128 GiB). Beyond it a size is almost
/// certainly a mistake (an ε of 1e-300, a capacity in the quintillions).
pub const MAX_NUM_BITS: u64 = 1 << 40;

/// The most hash functions a filter may use. The optimal k is 1.44·log₂(1/ε), so 64
/// covers every ε down to 10⁻¹⁹.
pub const MAX_NUM_HASHES: u32 = 64;

/// Checks that `fpp` is a probability strictly between 0 and 1 (NaN is not).
pub fn validate_fpp(fpp: f64) -> Result<f64, Error> {
    if fpp > 0.0 && fpp < 1.0 {
        Ok(fpp)
    } else {
        Err(Error::InvalidFpp(fpp))
    }
}

/// The optimal number of bits for `capacity` items at false-positive probability `fpp`:
/// `m = ⌈−n ln ε / (ln 2)²⌉`.
///
/// The seeds' own program truncated instead of rounding up, so its table shows one bit
/// less (194 658 for n = 58 110 and ε = 0.2, where this gives 194 659).
///
/// ```
/// use bloomkit::params::optimal_num_bits;
/// assert_eq!(optimal_num_bits(58_110, 0.001).unwrap(), 835_482);
/// assert!(optimal_num_bits(0, 0.01).is_err());
/// assert!(optimal_num_bits(100, 1.5).is_err());
/// ```
pub fn optimal_num_bits(capacity: u64, fpp: f64) -> Result<u64, Error> {
    let fpp = validate_fpp(fpp)?;
    if capacity == 0 {
        return Err(Error::ZeroCapacity);
    }
    let ln2 = std::f64::consts::LN_2;
    let bits = (-(capacity as f64) * fpp.ln() / (ln2 * ln2)).ceil();
    // `as u64` saturates, so an absurd size stays absurd instead of wrapping.
    let bits = bits as u64;
    if bits > MAX_NUM_BITS {
        return Err(Error::TooLarge {
            bits,
            max: MAX_NUM_BITS,
        });
    }
    Ok(bits.max(1))
}

/// The optimal number of hash functions for `num_bits` bits and `capacity` items:
/// `k = max(1, round((m/n) ln 2))`, capped at [`MAX_NUM_HASHES`].
///
/// ```
/// use bloomkit::params::optimal_num_hashes;
/// assert_eq!(optimal_num_hashes(835_482, 58_110), 10);
/// assert_eq!(optimal_num_hashes(1, 1_000), 1);
/// ```
pub fn optimal_num_hashes(num_bits: u64, capacity: u64) -> u32 {
    let k = (num_bits as f64 / capacity.max(1) as f64 * std::f64::consts::LN_2).round();
    (k as u32).clamp(1, MAX_NUM_HASHES)
}

/// The exact false-positive probability after `items` insertions into `num_bits` bits with
/// `num_hashes` hash functions: `(1 − (1 − 1/m)^(kn))^k`.
///
/// Computed as `exp(kn · ln1p(−1/m))` so that it stays accurate for m in the billions,
/// where `1 − 1/m` would round.
///
/// ```
/// use bloomkit::params::fpp_exact;
/// let p = fpp_exact(835_482, 10, 58_110);
/// assert!((p - 0.001).abs() < 0.00002);
/// ```
pub fn fpp_exact(num_bits: u64, num_hashes: u32, items: u64) -> f64 {
    if num_bits == 0 {
        return 1.0;
    }
    let k = num_hashes as f64;
    let zero_fraction = (k * items as f64 * (-1.0 / num_bits as f64).ln_1p()).exp();
    (1.0 - zero_fraction).powf(k)
}

/// The usual approximation of [`fpp_exact`]: `(1 − e^(−kn/m))^k`.
pub fn fpp_approx(num_bits: u64, num_hashes: u32, items: u64) -> f64 {
    if num_bits == 0 {
        return 1.0;
    }
    let k = num_hashes as f64;
    (1.0 - (-k * items as f64 / num_bits as f64).exp()).powf(k)
}

/// The false-positive probability of a filter as it is now, from the number of bits set:
/// a random absent item hits k bits that are each set with probability X/m, so
/// `FPP ≈ (X/m)^k`. Unlike [`fpp_exact`], it needs no item count, so it stays right after
/// unions, duplicates and overfilling.
pub fn fpp_from_fill(set_bits: u64, num_bits: u64, num_hashes: u32) -> f64 {
    if num_bits == 0 {
        return 1.0;
    }
    (set_bits as f64 / num_bits as f64).powi(num_hashes as i32)
}

/// The number of distinct items a filter holds, estimated from the number of set bits X:
/// `n* = −(m/k) ln(1 − X/m)` (Swamidass & Baldi, "Mathematical correction for fingerprint
/// similarity measures to improve chemical retrieval", 2007). Inverts the expected fill
/// `m (1 − e^(−kn/m))`. A full filter gives `f64::INFINITY`.
///
/// ```
/// use bloomkit::params::estimate_items;
/// assert_eq!(estimate_items(0, 1000, 7), 0.0);
/// assert!(estimate_items(1000, 1000, 7).is_infinite());
/// ```
pub fn estimate_items(set_bits: u64, num_bits: u64, num_hashes: u32) -> f64 {
    if num_bits == 0 || num_hashes == 0 {
        return 0.0;
    }
    if set_bits >= num_bits {
        return f64::INFINITY;
    }
    let m = num_bits as f64;
    -(m / num_hashes as f64) * (-(set_bits as f64) / m).ln_1p()
}

/// The expected number of set bits after `items` insertions: `m (1 − (1 − 1/m)^(kn))`.
pub fn expected_set_bits(num_bits: u64, num_hashes: u32, items: u64) -> f64 {
    let m = num_bits as f64;
    m * (1.0 - (num_hashes as f64 * items as f64 * (-1.0 / m).ln_1p()).exp())
}

// ---------------------------------------------------------------------------------------
// Scalable Bloom filter
// ---------------------------------------------------------------------------------------

/// The error ε₀ of the first layer of a scalable Bloom filter that must stay below `fpp`
/// overall with tightening ratio `tightening` (r): `ε₀ = ε (1 − r)`.
///
/// Layer i has error `ε₀ rⁱ`; a query is a false positive when some layer says "maybe", so
/// by the union bound the compound error is at most `Σ ε₀ rⁱ = ε₀ / (1 − r)`, which this
/// choice makes equal to ε (Almeida, Baquero, Preguiça & Hutchison, "Scalable Bloom
/// Filters", Information Processing Letters 101(6), 2007).
///
/// ```
/// use bloomkit::params::scalable_initial_fpp;
/// assert!((scalable_initial_fpp(0.01, 0.5) - 0.005).abs() < 1e-15);
/// assert!((scalable_initial_fpp(0.01, 0.9) - 0.001).abs() < 1e-15);
/// ```
pub fn scalable_initial_fpp(fpp: f64, tightening: f64) -> f64 {
    fpp * (1.0 - tightening)
}

/// The error of layer `layer` (counted from 0) of a scalable Bloom filter: `ε₀ · rⁱ`
/// (Almeida et al. 2007). Computed by repeated multiplication so that a filter and its
/// decoded copy get bit-identical values.
pub fn scalable_layer_fpp(initial_fpp: f64, tightening: f64, layer: u32) -> f64 {
    (0..layer).fold(initial_fpp, |fpp, _| fpp * tightening)
}

/// The capacity of layer `layer` (counted from 0) of a scalable Bloom filter: `n₀ · sⁱ`
/// (Almeida et al. 2007), or `None` if it does not fit in a `u64`.
///
/// ```
/// use bloomkit::params::scalable_layer_capacity;
/// assert_eq!(scalable_layer_capacity(1000, 2, 3), Some(8000));
/// assert_eq!(scalable_layer_capacity(1000, 4, 2), Some(16_000));
/// assert_eq!(scalable_layer_capacity(1000, 2, 64), None);
/// ```
pub fn scalable_layer_capacity(initial_capacity: u64, growth: u32, layer: u32) -> Option<u64> {
    (growth as u64)
        .checked_pow(layer)
        .and_then(|g| g.checked_mul(initial_capacity))
}

/// The bound on the false-positive probability of a scalable Bloom filter with `layers`
/// layers: `Σ_{i<L} ε₀ rⁱ = ε₀ (1 − r^L) / (1 − r)`, which stays below `ε₀ / (1 − r)` however
/// many layers are added (union bound; Almeida et al. 2007). The union bound
/// holds whether or not the layers' answers are independent.
///
/// ```
/// use bloomkit::params::scalable_fpp_bound;
/// assert!((scalable_fpp_bound(0.005, 0.5, 1) - 0.005).abs() < 1e-15);
/// assert!((scalable_fpp_bound(0.005, 0.5, 2) - 0.0075).abs() < 1e-15);
/// assert!(scalable_fpp_bound(0.005, 0.5, 60) <= 0.01);
/// ```
pub fn scalable_fpp_bound(initial_fpp: f64, tightening: f64, layers: u32) -> f64 {
    (0..layers)
        .map(|i| scalable_layer_fpp(initial_fpp, tightening, i))
        .sum()
}

/// The number of layers a scalable Bloom filter needs for `items` insertions that each
/// changed it, when a layer is full once it has taken its capacity: the smallest `L ≥ 1`
/// with `n₀ (s^L − 1) / (s − 1) ≥ items` (the total capacity of L layers of capacities
/// `n₀, n₀s, …, n₀s^(L−1)`). Growth factors below 2 are treated as 2.
///
/// ```
/// use bloomkit::params::scalable_num_layers;
/// assert_eq!(scalable_num_layers(0, 1000, 2), 1);
/// assert_eq!(scalable_num_layers(1000, 1000, 2), 1);
/// assert_eq!(scalable_num_layers(1001, 1000, 2), 2);
/// assert_eq!(scalable_num_layers(100_000, 1000, 2), 7); // 1000 · (2⁷ − 1) = 127 000
/// assert_eq!(scalable_num_layers(85_000, 1000, 4), 4); // 1000 · (4⁴ − 1) / 3 = 85 000
/// assert_eq!(scalable_num_layers(100_000, 1000, 4), 5);
/// ```
pub fn scalable_num_layers(items: u64, initial_capacity: u64, growth: u32) -> u32 {
    let initial_capacity = initial_capacity.max(1);
    let growth = growth.max(2) as u64;
    let (mut layers, mut total, mut next) = (1u32, initial_capacity, initial_capacity);
    while total < items {
        next = next.saturating_mul(growth);
        total = total.saturating_add(next);
        layers += 1;
    }
    layers
}

// ---------------------------------------------------------------------------------------
// Cuckoo filter
// ---------------------------------------------------------------------------------------

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
    use super::*;

    /// Seed 000, table 1: n = 58 110 words. The seed's program truncated m; the formula
    /// rounded up gives one more bit.
    #[test]
    fn sizing_matches_seed_000_table() {
        let n = 58_110;
        let table = [
            (0.2, 194_658u64),
            (0.05, 362_328),
            (0.01, 556_987),
            (0.001, 835_481),
            (0.0001, 1_113_975),
        ];
        for (fpp, seed_m) in table {
            assert_eq!(optimal_num_bits(n, fpp).unwrap(), seed_m + 1, "ε = {fpp}");
        }
        let m = optimal_num_bits(n, 0.001).unwrap();
        assert_eq!(optimal_num_hashes(m, n), 10);
    }

    #[test]
    fn optimal_parameters_reach_the_requested_fpp() {
        for fpp in [0.5, 0.1, 0.01, 1e-3, 1e-4, 1e-6] {
            let n = 10_000;
            let m = optimal_num_bits(n, fpp).unwrap();
            let k = optimal_num_hashes(m, n);
            let p = fpp_exact(m, k, n);
            // Rounding k costs a little; 10% relative is far more than it can.
            assert!(p < fpp * 1.1, "ε = {fpp}: m = {m}, k = {k}, p = {p}");
            assert!(p > fpp * 0.8, "ε = {fpp}: m = {m}, k = {k}, p = {p}");
        }
    }

    #[test]
    fn exact_and_approximate_fpp_agree_for_large_m() {
        let (m, k, n) = (10_000_000, 7, 1_000_000);
        let (e, a) = (fpp_exact(m, k, n), fpp_approx(m, k, n));
        assert!((e - a).abs() / e < 1e-5, "{e} vs {a}");
    }

    #[test]
    fn exact_fpp_differs_from_the_approximation_for_tiny_m() {
        // m = 2, k = 1, n = 1: exactly 1/2; the approximation says 1 − e^(−1/2) ≈ 0.393.
        assert!((fpp_exact(2, 1, 1) - 0.5).abs() < 1e-12);
        assert!((fpp_approx(2, 1, 1) - 0.393_469).abs() < 1e-6);
    }

    #[test]
    fn estimate_inverts_the_expected_fill() {
        for n in [1u64, 10, 1000, 50_000] {
            let (m, k) = (1_000_000, 5);
            let x = expected_set_bits(m, k, n);
            let est = estimate_items(x.round() as u64, m, k);
            assert!(
                (est - n as f64).abs() <= 1.0 + n as f64 * 1e-4,
                "n {n}: est {est}"
            );
        }
    }

    #[test]
    fn degenerate_inputs_are_errors() {
        for fpp in [0.0, 1.0, -0.1, 1.5, f64::NAN, f64::INFINITY] {
            assert!(
                matches!(optimal_num_bits(10, fpp), Err(Error::InvalidFpp(_))),
                "ε = {fpp}"
            );
        }
        assert_eq!(optimal_num_bits(0, 0.1), Err(Error::ZeroCapacity));
        assert!(matches!(
            optimal_num_bits(u64::MAX, 1e-300),
            Err(Error::TooLarge { .. })
        ));
        assert!(matches!(
            optimal_num_bits(1 << 40, 0.01),
            Err(Error::TooLarge { .. })
        ));
    }

    #[test]
    fn scalable_bound_never_passes_the_requested_fpp() {
        for (fpp, r) in [(0.01, 0.5), (0.001, 0.5), (0.01, 0.9), (0.1, 0.25)] {
            let e0 = scalable_initial_fpp(fpp, r);
            let mut previous = 0.0;
            for layers in 1..80 {
                let bound = scalable_fpp_bound(e0, r, layers);
                assert!(bound <= fpp * (1.0 + 1e-12), "ε {fpp}, r {r}, L {layers}");
                assert!(bound >= previous);
                previous = bound;
            }
            // It approaches ε: with r = 0.5, 20 layers are within 10⁻⁶ relative.
            if r == 0.5 {
                assert!(scalable_fpp_bound(e0, r, 20) > fpp * (1.0 - 1e-6));
            }
        }
    }

    #[test]
    fn scalable_layer_count_follows_the_growth_law() {
        for (n0, s) in [(1u64, 2u32), (1000, 2), (1000, 4), (7, 4)] {
            for items in [0u64, 1, n0, n0 + 1, 10 * n0, 100 * n0, 12345] {
                let layers = scalable_num_layers(items, n0, s);
                let total = |l: u32| (0..l).map(|i| n0 * (s as u64).pow(i)).sum::<u64>();
                assert!(total(layers) >= items, "{n0} {s} {items}");
                assert!(layers == 1 || total(layers - 1) < items, "{n0} {s} {items}");
            }
        }
        assert_eq!(scalable_layer_capacity(u64::MAX, 2, 1), None);
        assert_eq!(scalable_layer_capacity(5, 4, 0), Some(5));
    }

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
}
