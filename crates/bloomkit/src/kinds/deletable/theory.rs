//! Theory of the deletable Bloom filter: the formulas its builder sizes with and its
//! `Filter::fpp_at` answers with.

/// The probability that an inserted item of a deletable Bloom filter can be removed: that at
/// least one of its k bits lies in a collision-free region.
///
/// `num_bits` is m, the whole array *including* the r-bit collision bitmap; the data part
/// has `m' = m − r` bits in r regions of `s = m'/r` bits (Rothenberg, Macapuna, Verdi &
/// Magalhães, "The Deletable Bloom Filter: A New Member of the Bloom Family", IEEE
/// Communications Letters 14(6), 2010).
///
/// # Model and derivation
///
/// The paper's model: an item x is deletable when at least one of its k bits lies in a
/// region in which no insertion ever found its bit already set. A region is collision-free
/// exactly when each of its cells was hit at most once by all `kn` bit settings. Fix x and
/// let the `T = k(n − 1)` settings of the other items be independent and uniform over the
/// m' data cells. Per cell (binomial occupancy):
///
/// ```text
///     q₀ = (1 − 1/m')^T                 no other setting hits the cell
///     q₁ = q₀ · (1 + T/(m' − 1))        at most one does  [= q₀ + T/m' (1 − 1/m')^(T−1)]
/// ```
///
/// If c of x's own k bits fall into a region, that region is collision-free when those c
/// cells are distinct, no other setting hits them, and each of the other `s − c` cells is
/// hit at most once; treating cells as independent,
///
/// ```text
///     p(c) = ∏_{i<c} (1 − i/s) · q₀^c · q₁^(s−c)
/// ```
///
/// With one bit per region (c = 1) and independent regions this is the paper's closed form
/// `P_d = 1 − (1 − p_c)^k` with `p_c = q₀ q₁^(s−1)` ([`deletable_probability_approx`]).
/// That form ignores that several of x's k bits often share a region (with r = 12
/// regions and k = 7 some two bits share one with probability 0.89), which makes their
/// "collision-free" events the same event and lowers the true P_d by up to about 0.07.
/// This function averages over where x's bits fall instead: the numbers `(c_1, …, c_r)` of
/// x's bits per region are multinomial(k; 1/r, …, 1/r), and with regions independent
///
/// ```text
///     1 − P_d = E[ ∏_j (1 − p(c_j)) ]   (the factor is 1 for c_j = 0)
///             = k! · [z^k] ( Σ_{c=0..k} (1 − p(c)) (z/r)^c / c! )^r
/// ```
///
/// (the exponential generating function of the multinomial), computed by raising a
/// polynomial truncated at degree k to the power r by repeated squaring: O(k² log r).
/// The remaining approximations — cells and regions treated as independent, regions of
/// equal size — are checked by the paper test in `tests/suite/deletable.rs`: with k independent
/// hashes the measured fraction is within 0.007 of this value; enhanced double hashing,
/// whose k positions are correlated, lowers it by up to 0.011 when r is small.
///
/// `items = 0` is treated as a single item. Returns a value in [0, 1].
///
/// ```
/// use bloomkit::params::deletable_probability;
/// // Few items in small regions: nearly everything can be removed.
/// assert!(deletable_probability(16_384 + 2_048, 7, 100, 2_048) > 0.999);
/// // Sixteen regions of ~600 bits at capacity: almost nothing can.
/// assert!(deletable_probability(9_586 + 16, 7, 1_000, 16) < 1e-6);
/// ```
pub fn deletable_probability(num_bits: u64, num_hashes: u32, items: u64, regions: u64) -> f64 {
    let Some(cells) = DeletableCells::new(num_bits, num_hashes, items, regions) else {
        return 0.0;
    };
    let k = num_hashes as usize;
    let r = regions as f64;
    // b_c = (1 − p(c)) / (c! r^c): the EGF of one region, scaled so that B(z)^r needs no r^k.
    let mut base = vec![0.0; k + 1];
    let mut scale = 1.0; // 1 / (c! r^c)
    for (c, b) in base.iter_mut().enumerate() {
        if c > 0 {
            scale /= c as f64 * r;
        }
        let fail = if c == 0 {
            1.0
        } else {
            1.0 - cells.region_free(c as u32)
        };
        *b = fail * scale;
    }
    let product = truncated_power(&base, regions);
    let factorial: f64 = (1..=k).map(|i| i as f64).product();
    (1.0 - factorial * product[k]).clamp(0.0, 1.0)
}

/// The paper's closed form of the deletable probability, `P_d = 1 − (1 − p_c)^k` with
/// `p_c = q₀ q₁^(s−1)` the probability that the region of one of the item's bits is
/// collision-free (see [`deletable_probability`] for q₀, q₁ and s). It treats the k bits as
/// lying in k different, independent regions, which overestimates P_d when r is small
/// compared with k²; kept for comparison.
pub fn deletable_probability_approx(
    num_bits: u64,
    num_hashes: u32,
    items: u64,
    regions: u64,
) -> f64 {
    let Some(cells) = DeletableCells::new(num_bits, num_hashes, items, regions) else {
        return 0.0;
    };
    let p_c = cells.region_free(1);
    (1.0 - (1.0 - p_c).powi(num_hashes as i32)).clamp(0.0, 1.0)
}

/// The per-cell quantities of the deletable-probability model.
struct DeletableCells {
    /// s, data bits per region.
    region_bits: f64,
    /// ln q₀.
    ln_q0: f64,
    /// ln q₁.
    ln_q1: f64,
}

impl DeletableCells {
    fn new(num_bits: u64, num_hashes: u32, items: u64, regions: u64) -> Option<Self> {
        if regions == 0 || num_hashes == 0 || num_bits <= regions {
            return None;
        }
        let data = (num_bits - regions) as f64;
        let others = num_hashes as f64 * items.saturating_sub(1) as f64;
        let (ln_q0, ln_q1) = if data <= 1.0 {
            // One data cell: any other setting hits it; two or more always collide.
            let q0: f64 = if others == 0.0 { 1.0 } else { 0.0 };
            let q1: f64 = if others <= 1.0 { 1.0 } else { 0.0 };
            (q0.ln(), q1.ln())
        } else {
            let ln_q0 = others * (-1.0 / data).ln_1p();
            (ln_q0, ln_q0 + (others / (data - 1.0)).ln_1p())
        };
        Some(Self {
            region_bits: data / regions as f64,
            ln_q0,
            ln_q1,
        })
    }

    /// p(c): the region holding c of the item's bits is collision-free.
    fn region_free(&self, c: u32) -> f64 {
        let s = self.region_bits;
        let c_f = c as f64;
        if c_f > s {
            return 0.0;
        }
        let distinct: f64 = (0..c).map(|i| (1.0 - i as f64 / s).max(0.0)).product();
        if distinct == 0.0 {
            return 0.0;
        }
        (distinct.ln() + c_f * self.ln_q0 + (s - c_f) * self.ln_q1).exp()
    }
}

/// `base(z)^power` truncated at the degree of `base`, by repeated squaring.
fn truncated_power(base: &[f64], mut power: u64) -> Vec<f64> {
    let degree = base.len();
    let multiply = |a: &[f64], b: &[f64]| {
        let mut out = vec![0.0; degree];
        for (i, &x) in a.iter().enumerate() {
            if x != 0.0 {
                for (j, &y) in b.iter().take(degree - i).enumerate() {
                    out[i + j] += x * y;
                }
            }
        }
        out
    };
    let mut result = vec![0.0; degree];
    result[0] = 1.0;
    let mut square = base.to_vec();
    while power > 0 {
        if power & 1 == 1 {
            result = multiply(&result, &square);
        }
        power >>= 1;
        if power > 0 {
            square = multiply(&square, &square);
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use crate::params::*;

    #[test]
    fn deletable_probability_matches_hand_computed_cases() {
        // One item, no other settings: deletable unless its own bits collide.
        // m' = 1000 data bits in r = 1000 regions of one bit: p(1) = 1, p(2) = 0.
        // k = 2: not deletable only if both bits hit the same cell: 1/1000.
        let p = deletable_probability(2000, 2, 1, 1000);
        assert!((p - 0.999).abs() < 1e-9, "{p}");
        // One region (r = 1): the item is deletable iff the whole data part is
        // collision-free: P_d = p(k) exactly.
        let (m, k, n) = (1001u64, 3u32, 5u64);
        let data = 1000.0f64;
        let t = (k as f64) * (n - 1) as f64;
        let q0 = (1.0 - 1.0 / data).powf(t);
        let q1 = q0 + t / data * (1.0 - 1.0 / data).powf(t - 1.0);
        let want = (1.0 - 1.0 / data) * (1.0 - 2.0 / data) * q0.powi(3) * q1.powf(data - 3.0);
        let got = deletable_probability(m, k, n, 1);
        assert!((got - want).abs() < 1e-12, "{got} vs {want}");
    }

    #[test]
    fn deletable_probability_falls_with_load_and_rises_with_regions() {
        let (m_data, k) = (16_384u64, 7u32);
        let mut last = 1.0;
        for n in [1u64, 50, 100, 200, 400, 800, 1700] {
            let p = deletable_probability(m_data + 64, k, n, 64);
            assert!(p <= last + 1e-12, "n = {n}: {p} > {last}");
            assert!((0.0..=1.0).contains(&p));
            last = p;
        }
        let few = deletable_probability(m_data + 16, k, 400, 16);
        let many = deletable_probability(m_data + 2048, k, 400, 2048);
        assert!(few < 0.01 && many > 0.99, "{few} {many}");
    }

    #[test]
    fn deletable_approximation_agrees_when_regions_are_many() {
        // r ≫ k²: the item's bits almost never share a region.
        let (m, k, n, r) = (1_000_000u64 + 100_000, 7u32, 60_000u64, 100_000u64);
        let exact = deletable_probability(m, k, n, r);
        let approx = deletable_probability_approx(m, k, n, r);
        assert!((exact - approx).abs() < 1e-3, "{exact} vs {approx}");
        // r = 12, k = 7: the approximation is visibly too optimistic.
        let exact = deletable_probability(16_384 + 12, 7, 100, 12);
        let approx = deletable_probability_approx(16_384 + 12, 7, 100, 12);
        assert!(approx - exact > 0.03, "{exact} vs {approx}");
    }

    #[test]
    fn deletable_probability_of_degenerate_inputs_is_zero() {
        assert_eq!(deletable_probability(10, 3, 5, 0), 0.0);
        assert_eq!(deletable_probability(10, 0, 5, 2), 0.0);
        assert_eq!(deletable_probability(10, 3, 5, 10), 0.0);
        assert_eq!(deletable_probability_approx(10, 3, 5, 10), 0.0);
        // Huge inputs stay finite.
        let p = deletable_probability(MAX_NUM_BITS, 64, u64::MAX, 1 << 30);
        assert!((0.0..=1.0).contains(&p), "{p}");
    }
}
