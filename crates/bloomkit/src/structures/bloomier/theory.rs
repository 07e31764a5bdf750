//! Theory of the Bloomier filter: how many cells 3-hypergraph peeling needs, and the
//! false-positive probability of its "not in set" check.

/// The cells per key of a 3-wise peeled table: `m ≥ 1.23·n`.
///
/// Each key is an edge of a random 3-uniform hypergraph on the m cells (one cell in each
/// third of the table). Peeling — repeatedly removing a cell that lies on exactly one
/// remaining edge — removes every edge exactly when the hypergraph has an empty 2-core, and
/// for a random 3-uniform hypergraph that happens with high probability when
/// `n/m < c₃ ≈ 0.8185` (Molloy, "Cores in random hypergraphs and Boolean formulas", Random
/// Structures & Algorithms 27(1), 2005; used for retrieval by Botelho, Pagh & Ziviani,
/// "Simple and space-efficient minimal perfect hash functions", WADS 2007). So
/// `m/n > 1/0.8185 = 1.2218`; Graf & Lemire's xor filters ("Xor Filters: Faster and Smaller
/// Than Bloom and Cuckoo Filters", ACM JEA 25, 2020) round it up to 1.23, and so does this
/// crate.
pub const BLOOMIER_CELLS_PER_KEY: f64 = 1.23;

/// Cells added to `1.23·n`: the threshold above is asymptotic, and a table for a few dozen
/// keys fails to peel often without slack. 32, as in Graf & Lemire's xor filters; it costs
/// nothing per key once n is in the thousands.
pub const BLOOMIER_EXTRA_CELLS: u64 = 32;

/// The length of each of the three segments of a Bloomier table for `keys` keys:
/// `⌈(⌊1.23·n⌋ + 32) / 3⌉` (the table has three times as many cells).
///
/// ```
/// use bloomkit::params::bloomier_segment_len;
/// assert_eq!(bloomier_segment_len(1_000_000), 410_011);
/// assert_eq!(bloomier_segment_len(0), 11);
/// ```
pub fn bloomier_segment_len(keys: u64) -> u64 {
    let cells = (keys as f64 * BLOOMIER_CELLS_PER_KEY).floor() as u64 + BLOOMIER_EXTRA_CELLS;
    cells.div_ceil(3)
}

/// The bits per key of a Bloomier table of `width`-bit cells for `keys` keys:
/// `3·segment·w / n`, which tends to `1.23·w` as n grows.
///
/// ```
/// use bloomkit::params::bloomier_bits_per_key;
/// let b = bloomier_bits_per_key(1_000_000, 8);
/// assert!((b - 1.23 * 8.0).abs() < 0.01, "{b}");
/// ```
pub fn bloomier_bits_per_key(keys: u64, width: u32) -> f64 {
    3.0 * bloomier_segment_len(keys) as f64 * f64::from(width) / keys.max(1) as f64
}

/// The probability that a key outside the set is not answered "not in set": `2^−c` for c
/// check bits. Its cell word — the xor of three table cells and a hash mask — is uniform
/// over `2^w` values, and the check passes when its top c bits are 0.
///
/// ```
/// use bloomkit::params::bloomier_fpp;
/// assert_eq!(bloomier_fpp(8), 1.0 / 256.0);
/// assert_eq!(bloomier_fpp(0), 1.0);
/// ```
pub fn bloomier_fpp(check_bits: u32) -> f64 {
    (-f64::from(check_bits)).exp2()
}

/// The fewest check bits c with `2^−c ≤ ε`: `⌈log₂(1/ε)⌉` (ε is validated by the caller).
///
/// ```
/// use bloomkit::params::bloomier_check_bits_for_fpp;
/// assert_eq!(bloomier_check_bits_for_fpp(0.01), 7);
/// assert_eq!(bloomier_check_bits_for_fpp(1.0 / 256.0), 8);
/// ```
pub fn bloomier_check_bits_for_fpp(fpp: f64) -> u32 {
    // The small tolerance keeps ε = 2^−c at c instead of c + 1 after rounding.
    ((-fpp.log2()) - 1e-9).ceil().max(0.0) as u32
}

#[cfg(test)]
mod tests {
    use crate::params::*;

    #[test]
    fn bits_per_key_tend_to_1_23_cells_per_key() {
        for w in [1, 8, 16] {
            let small = bloomier_bits_per_key(100, w);
            let large = bloomier_bits_per_key(10_000_000, w);
            assert!(small > large, "{small} {large}");
            assert!((large / f64::from(w) - 1.23).abs() < 1e-4, "{large}");
        }
        for n in [0u64, 1, 2, 3, 100, 12_345] {
            let s = bloomier_segment_len(n);
            assert!(
                3 * s >= (n as f64 * 1.23) as u64 + 32 && 3 * s < (n as f64 * 1.23) as u64 + 35
            );
        }
    }

    #[test]
    fn check_bits_reach_the_fpp() {
        for fpp in [0.5, 0.1, 0.01, 1e-3, 0.003_906_25, 1e-9] {
            let c = bloomier_check_bits_for_fpp(fpp);
            assert!(
                bloomier_fpp(c) <= fpp && bloomier_fpp(c - 1) > fpp,
                "{fpp}: {c}"
            );
        }
    }
}
