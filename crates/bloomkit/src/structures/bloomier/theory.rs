//! Theory of the Bloomier filter: how many cells 3-hypergraph peeling needs in each of the
//! two layouts (three segments of equal length; the fuse layout of many small segments),
//! and the false-positive probability of its "not in set" check.

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

/// The largest fuse segment length, 2¹⁸ cells: Graf & Lemire's formula below would give
/// longer segments past n ≈ 10⁸, and the reference implementations (C `binaryfusefilter.h`,
/// xorf) stop at 2¹⁸ — 256 KiB of 8-bit cells, so a key's window of three segments still
/// fits a core's L2 cache.
pub const BLOOMIER_FUSE_MAX_SEGMENT_LEN: u64 = 1 << 18;

/// The fuse layout's segment length for `keys` keys: `2^⌊ln n / ln 3.33 + 2.25⌋`, at most
/// [`BLOOMIER_FUSE_MAX_SEGMENT_LEN`], and 4 for n ≤ 1.
///
/// In the fuse layout (Dietzfelbinger & Walzer, "Dense Peelable Random Uniform
/// Hypergraphs", ESA 2019 — *spatial coupling*) the table is a line of small segments and a
/// key's three cells lie in three consecutive segments, one in each. The segments at the
/// two ends of the line belong to fewer windows, so they hold fewer keys and peel first; the
/// peeling then runs inward from both ends like a wave, which is what lets the table be much
/// fuller than with cells anywhere. The wave needs segments that are neither too long
/// (fewer of them, a shorter line) nor too short (too few cells per segment for the
/// per-segment loads to concentrate); Graf & Lemire ("Binary Fuse Filters: Fast and Smaller
/// Than Xor Filters", ACM JEA 27, 2022, §3) fitted this power of two to n for arity 3 by
/// experiment. A power of two lets a cell's offset within its segment be a bit mask.
///
/// ```
/// use bloomkit::params::bloomier_fuse_segment_len;
/// assert_eq!(bloomier_fuse_segment_len(1_000_000), 8_192);
/// assert_eq!(bloomier_fuse_segment_len(100), 64);
/// assert_eq!(bloomier_fuse_segment_len(1), 4);
/// assert_eq!(bloomier_fuse_segment_len(1 << 40), 1 << 18);
/// ```
pub fn bloomier_fuse_segment_len(keys: u64) -> u64 {
    if keys <= 1 {
        return 4;
    }
    let exponent = ((keys as f64).ln() / 3.33f64.ln() + 2.25).floor() as u32;
    (1u64 << exponent.min(18)).min(BLOOMIER_FUSE_MAX_SEGMENT_LEN)
}

/// The fuse layout's cells per key before rounding to whole segments:
/// `max(1.125, 0.875 + 0.25·ln 10⁶ / ln n)` (Graf & Lemire 2022, arity 3).
///
/// Spatially coupled 3-uniform hypergraphs peel with high probability up to the
/// *orientability* threshold of ordinary ones, about 0.918 keys per cell, i.e. about
/// 1.089 cells per key, as the number of segments grows (Dietzfelbinger & Walzer 2019) —
/// against 1/0.8185 = 1.222 without coupling ([`BLOOMIER_CELLS_PER_KEY`]). Graf & Lemire
/// keep a margin above 1.089: 1.125 for large n, and more for small n, where there are few
/// segments and the threshold is not yet approached (1.125 from n = 10⁶ on; 1.625 at
/// n = 100).
///
/// ```
/// use bloomkit::params::bloomier_fuse_size_factor;
/// assert_eq!(bloomier_fuse_size_factor(1_000_000), 1.125);
/// assert_eq!(bloomier_fuse_size_factor(100_000_000), 1.125);
/// assert!((bloomier_fuse_size_factor(1_000) - 1.375).abs() < 1e-12);
/// ```
pub fn bloomier_fuse_size_factor(keys: u64) -> f64 {
    if keys <= 1 {
        return 0.0;
    }
    (0.875 + 0.25 * 1e6f64.ln() / (keys as f64).ln()).max(1.125)
}

/// The fuse layout for `keys` keys: `(segment_len, segment_count)`, where a key's window
/// starts in one of `segment_count` segments and the table has `segment_count + 2`
/// segments (the last window ends two segments later).
///
/// With `L` = [`bloomier_fuse_segment_len`] and capacity `C = round(n·f)`
/// ([`bloomier_fuse_size_factor`]; 0 for n ≤ 1), the table is `⌈C / L⌉` segments, of which
/// the first `⌈C / L⌉ − 2` (at least 1) start windows — Graf & Lemire's dimensions.
///
/// ```
/// use bloomkit::params::bloomier_fuse_layout;
/// assert_eq!(bloomier_fuse_layout(1_000_000), (8_192, 136)); // 138 segments, 1.1305 cells/key
/// assert_eq!(bloomier_fuse_layout(0), (4, 1));
/// ```
pub fn bloomier_fuse_layout(keys: u64) -> (u64, u64) {
    let segment_len = bloomier_fuse_segment_len(keys);
    let capacity = (keys as f64 * bloomier_fuse_size_factor(keys)).round() as u64;
    let segments = capacity.div_ceil(segment_len);
    (segment_len, segments.saturating_sub(2).max(1))
}

/// The bits per key of a fuse-layout Bloomier table of `width`-bit cells for `keys` keys:
/// `(segment_count + 2)·L·w / n`, which tends to `1.125·w` as n grows (plus at most one
/// segment of rounding).
///
/// ```
/// use bloomkit::params::bloomier_fuse_bits_per_key;
/// let b = bloomier_fuse_bits_per_key(1_000_000, 8);
/// assert!((b - 9.044).abs() < 0.001, "{b}");
/// ```
pub fn bloomier_fuse_bits_per_key(keys: u64, width: u32) -> f64 {
    let (segment_len, segment_count) = bloomier_fuse_layout(keys);
    ((segment_count + 2) * segment_len) as f64 * f64::from(width) / keys.max(1) as f64
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
    fn fuse_layout_holds_1_125_cells_per_key_in_power_of_two_segments() {
        for n in [
            0u64,
            1,
            2,
            3,
            10,
            100,
            1_000,
            12_345,
            1_000_000,
            50_000_000,
            1 << 34,
        ] {
            let (l, count) = bloomier_fuse_layout(n);
            assert!(
                l.is_power_of_two() && l <= BLOOMIER_FUSE_MAX_SEGMENT_LEN,
                "{n}: {l}"
            );
            assert!(count >= 1);
            let cells = (count + 2) * l;
            // At least the capacity n·f, and at most one segment more.
            let capacity = (n as f64 * bloomier_fuse_size_factor(n)).round() as u64;
            assert!(
                cells >= capacity && cells < capacity.max(3 * l) + l,
                "{n}: {cells}"
            );
            assert!(cells >= n, "{n}");
        }
        let large = bloomier_fuse_bits_per_key(100_000_000, 8) / 8.0;
        assert!((1.125..1.13).contains(&large), "{large}");
        assert!(bloomier_fuse_size_factor(1_000) > bloomier_fuse_size_factor(100_000));
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
