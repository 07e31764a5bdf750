//! Theory of the scalable Bloom filter: the formulas its builder sizes with and its
//! `Filter::fpp_at` answers with.

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

/// libbloom's ln² 2 and ln 2 to 15 digits, as RedisBloom's layer sizing uses them (kept as
/// written, not `std::f64::consts::LN_2`, so that bits per entry and k round exactly as
/// there).
pub const REDISBLOOM_LN2_SQUARED: f64 = 0.480453013918201;
/// See [`REDISBLOOM_LN2_SQUARED`].
#[allow(clippy::approx_constant)]
pub const REDISBLOOM_LN2: f64 = 0.693147180559945;
/// The most hash functions a RedisBloom layer may have: `⌈ln 2 · bpe⌉` for the smallest
/// positive error (4.9·10⁻³²⁴) is 1075; more only comes from damaged data.
pub const REDISBLOOM_MAX_HASHES: u32 = 1100;

/// The number of hash functions RedisBloom derives from bits per entry, `⌈ln 2 · bpe⌉`
/// (C's `(int)ceil(…)`), or `None` where that is negative, not a number or above
/// [`REDISBLOOM_MAX_HASHES`].
///
/// ```
/// use bloomkit::params::redisbloom_hashes_for;
/// assert_eq!(redisbloom_hashes_for(-(0.005f64).ln() / 0.480453013918201), Some(8));
/// assert_eq!(redisbloom_hashes_for(f64::NAN), None);
/// ```
pub fn redisbloom_hashes_for(bpe: f64) -> Option<u32> {
    let k = (REDISBLOOM_LN2 * bpe).ceil();
    (k >= 0.0 && k <= REDISBLOOM_MAX_HASHES as f64).then_some(k as u32)
}

/// A RedisBloom layer's size from its capacity and error, as `BF.RESERVE` makes it and as
/// a RedisBloom filter adds layers (libbloom's `bloom_init` with 64-bit hashing and no
/// rounding to a power of two): `(bits, hashes, bpe)` with `bpe = −ln ε / ln² 2`, `bits =
/// ⌊n · bpe⌋` (at least 1) rounded up to a multiple of 64, `hashes = ⌈ln 2 · bpe⌉` (at
/// least 1). `None` when the error is not in (0, 1), the capacity is 0, or the size
/// overflows. A scalable filter with RedisBloom's growth sizes its new layers so.
///
/// ```
/// use bloomkit::params::redisbloom_layer_shape;
/// // BF.RESERVE k 0.01 100: the first layer has ε/2 = 0.005.
/// let (bits, hashes, _) = redisbloom_layer_shape(100, 0.005).unwrap();
/// assert_eq!((bits, hashes), (1152, 8));
/// assert_eq!(redisbloom_layer_shape(0, 0.01), None);
/// ```
pub fn redisbloom_layer_shape(entries: u64, error: f64) -> Option<(u64, u32, f64)> {
    if entries == 0 || !(error > 0.0 && error < 1.0) {
        return None;
    }
    let bpe = -error.ln() / REDISBLOOM_LN2_SQUARED;
    let bits = entries as f64 * bpe;
    if !bits.is_finite() || bits >= (1u64 << 62) as f64 {
        return None;
    }
    // At least one bit (a tiny bpe times a small capacity rounds down to 0), which the
    // rounding below makes one 64-bit word: `BF.RESERVE k 0.99 3 NONSCALING` has 64 bits.
    let bits = (bits as u64).max(1);
    let bytes = bits.div_ceil(64) * 8;
    let hashes = (REDISBLOOM_LN2 * bpe).ceil();
    if bytes == 0 || hashes > REDISBLOOM_MAX_HASHES as f64 {
        return None;
    }
    Some((bytes * 8, hashes.max(1.0) as u32, bpe))
}

#[cfg(test)]
mod tests {
    use crate::params::*;

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
}
