//! Theory of the compressed Bloom filter (Mitzenmacher, "Compressed Bloom Filters",
//! IEEE/ACM Transactions on Networking 10(5), 2002): the size of a filter's bit array after
//! compression, and the m and k that make it smallest at a given ε.
//!
//! After n insertions with k hashes into m bits, a bit is 0 with probability
//! `p = e^(−kn/m)`, and the bits are close to independent, so an ideal compressor sends
//! the array in `z = m · H(p)` bits, `H(p) = −p log₂ p − (1 − p) log₂(1 − p)`. The
//! false-positive rate is `f = (1 − p)^k`. At the k that is optimal for an uncompressed
//! filter, p = 1/2 and H(p) = 1: nothing to gain. Mitzenmacher's point is that for the
//! *transmitted* size the optimum lies elsewhere: fewer hash functions and a larger, sparser
//! array whose entropy per bit is low. For a given ε and k, `m = −kn / ln(1 − ε^(1/k))`,
//! and `z/n = (m/n) · H(p)` falls as k falls, towards `log₂(1/ε)` bits per item — the
//! information-theoretic floor of any structure with false-positive rate ε (Carter, Floyd,
//! Gill, Markowsky & Wegman, STOC 1978) — against `log₂(1/ε)/ln 2 ≈ 1.44·log₂(1/ε)` for
//! the uncompressed filter. The price is memory at both ends (m grows to about `k/ε^(1/k)`
//! bits per item), so the choice is made under a cap on m/n.

/// The memory an uncompressed compressed-optimal filter may take by default, as a multiple
/// of the classic filter's `1.44·log₂(1/ε)` bits per item. 4 lets ε = 1% use k = 2 with
/// m/n ≈ 19 (8.90 transmitted bits per item instead of 9.59) and ε = 0.1% k = 3 with
/// m/n ≈ 31.
pub const DEFAULT_MEMORY_FACTOR: f64 = 4.0;

/// Mitzenmacher 2002, Tables 1 and 2, as printed: (m/n, k, z/n, f) at about 8 and 16
/// transmitted bits per item. The first row of each is the classic filter, sent as it is
/// (z/n = m/n); the others are sparser arrays, compressed, with fewer false positives for
/// the same bits sent. The tests and the `compressed` study rebuild them.
pub const MITZENMACHER_TABLES: [(u64, u32, f64, f64); 6] = [
    (8, 6, 8.0, 0.0216),
    (14, 2, 7.923, 0.0177),
    (92, 1, 7.923, 0.0108),
    (16, 11, 16.0, 4.59e-4),
    (28, 4, 15.846, 3.14e-4),
    (48, 3, 15.829, 2.22e-4),
];

/// The binary entropy `H(p) = −p log₂ p − (1 − p) log₂(1 − p)`, 0 at p = 0 and 1.
///
/// ```
/// use bloomkit::params::binary_entropy;
/// assert_eq!(binary_entropy(0.5), 1.0);
/// assert_eq!(binary_entropy(0.0), 0.0);
/// assert!((binary_entropy(0.11) - 0.4999).abs() < 1e-3);
/// ```
pub fn binary_entropy(p: f64) -> f64 {
    if p <= 0.0 || p >= 1.0 {
        return 0.0;
    }
    -(p * p.log2() + (1.0 - p) * (1.0 - p).log2())
}

/// `z/n`, the compressed bits per item of a filter with `bits_per_item` = m/n and k hashes
/// once it holds its n items: `(m/n) · H(e^(−k/(m/n)))` (Mitzenmacher 2002, section 3).
///
/// ```
/// use bloomkit::params::compressed_bits_per_item;
/// // Mitzenmacher's Table 1, z/n ≈ 8: m/n = 14 with k = 2 sends 7.923 bits per item.
/// assert!((compressed_bits_per_item(14.0, 2) - 7.923).abs() < 1e-3);
/// ```
pub fn compressed_bits_per_item(bits_per_item: f64, num_hashes: u32) -> f64 {
    let p = (-f64::from(num_hashes) / bits_per_item).exp();
    bits_per_item * binary_entropy(p)
}

/// The false-positive rate `(1 − e^(−k/(m/n)))^k` of a filter of m/n bits per item and k
/// hashes at its n items.
///
/// ```
/// use bloomkit::params::fpp_per_item;
/// // Table 1 again: m/n = 14, k = 2 gives 0.0177; m/n = 92, k = 1 gives 0.0108.
/// assert!((fpp_per_item(14.0, 2) - 0.0177).abs() < 1e-4);
/// assert!((fpp_per_item(92.0, 1) - 0.0108).abs() < 1e-4);
/// ```
pub fn fpp_per_item(bits_per_item: f64, num_hashes: u32) -> f64 {
    (1.0 - (-f64::from(num_hashes) / bits_per_item).exp()).powi(num_hashes as i32)
}

/// The information-theoretic floor: `log₂(1/ε)` bits per item for any structure that
/// answers "maybe" for its n items and for a fraction ε of the others.
pub fn entropy_bound_bits_per_item(fpp: f64) -> f64 {
    -fpp.log2()
}

/// The m/n that k hashes need for false-positive rate ε: `k / −ln(1 − ε^(1/k))`.
pub fn bits_per_item_for(fpp: f64, num_hashes: u32) -> f64 {
    let k = f64::from(num_hashes);
    // f = (1 − p)^k with p = e^(−k/(m/n)) the fraction of zeros, so p = 1 − ε^(1/k)
    // (computed as −expm1(ln ε / k), precise when ε^(1/k) is close to 1) and
    // m/n = k / −ln p.
    let zeros = -(fpp.ln() / k).exp_m1();
    k / -zeros.ln()
}

/// The (m/n, k) that minimise the transmitted size `z/n` at false-positive rate ε, with
/// m/n at most `max_bits_per_item`: every k from 1 to `⌈log₂(1/ε)⌉ + 1` with its
/// [`bits_per_item_for`], the smallest [`compressed_bits_per_item`] among those within the
/// cap. The classic optimum `k = log₂(1/ε)` (at `1.44·log₂(1/ε)` bits per item) is always
/// among them, so any cap at least that large has an answer; `None` otherwise.
///
/// ```
/// use bloomkit::params::compressed_optimum;
/// // ε = 1%: with m/n up to 20, k = 2 (m/n ≈ 19.0) sends 8.90 bits per item; with no
/// // practical cap, k = 1 (m/n ≈ 99.5) sends 8.04 — near the floor log₂(100) = 6.64.
/// let (m_n, k) = compressed_optimum(0.01, 20.0).unwrap();
/// assert_eq!(k, 2);
/// assert!((m_n - 18.98).abs() < 0.01);
/// assert_eq!(compressed_optimum(0.01, 1000.0).unwrap().1, 1);
/// assert_eq!(compressed_optimum(0.01, 5.0), None);
/// ```
pub fn compressed_optimum(fpp: f64, max_bits_per_item: f64) -> Option<(f64, u32)> {
    let most = (-fpp.log2()).ceil() as u32 + 1;
    (1..=most.min(crate::params::MAX_NUM_HASHES))
        .map(|k| (bits_per_item_for(fpp, k), k))
        .filter(|&(b, _)| b.is_finite() && b <= max_bits_per_item)
        .min_by(|a, b| {
            compressed_bits_per_item(a.0, a.1).total_cmp(&compressed_bits_per_item(b.0, b.1))
        })
}

#[cfg(test)]
mod tests {
    use crate::params::*;

    /// Mitzenmacher 2002, Tables 1 and 2 (transmitted bits per item z/n ≈ 8 and 16):
    /// (m/n, k, z/n, f) as printed.
    #[test]
    fn formulas_reproduce_mitzenmachers_tables() {
        for (m_n, k, z_n, f) in MITZENMACHER_TABLES {
            let m_n = m_n as f64;
            let z = compressed_bits_per_item(m_n, k);
            if z_n == m_n {
                // The paper sends the classic-optimal rows uncompressed: at p ≈ 1/2,
                // H(p) ≈ 1 and compression would save less than 0.3%.
                assert!(z <= m_n && z > 0.99 * m_n, "{m_n} {k}: {z}");
            } else {
                assert!((z - z_n).abs() < 1e-3, "{m_n} {k}: {z}");
            }
            assert!(
                (fpp_per_item(m_n, k) - f).abs() < 0.005 * f + 1e-6,
                "{m_n} {k}"
            );
        }
    }

    #[test]
    fn the_optimum_falls_towards_the_entropy_bound_as_the_cap_rises() {
        for fpp in [0.1, 0.01, 0.001] {
            let classic = bits_per_item_for(fpp, (-fpp.log2()).round() as u32);
            let mut last = f64::INFINITY;
            for cap in [1.0, 2.0, 4.0, 16.0, 1e4] {
                let (m_n, k) = compressed_optimum(fpp, classic * cap).unwrap();
                let z = compressed_bits_per_item(m_n, k);
                assert!(
                    z <= last + 1e-9 && z >= entropy_bound_bits_per_item(fpp),
                    "{fpp}"
                );
                assert!((fpp_per_item(m_n, k) - fpp).abs() < 1e-9 * fpp.max(1e-3));
                last = z;
            }
            // k = 1 at no cap: z/n → log₂(1/ε) + log₂ e as ε → 0 (H(ε)/ε).
            assert!(
                last < entropy_bound_bits_per_item(fpp) + 1.45,
                "{fpp}: {last}"
            );
        }
    }
}
