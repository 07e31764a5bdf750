//! Theory of the generalized Bloom filter: how its bits evolve, and its false-positive
//! and false-negative probabilities.
//!
//! Notation: m bits, k₁ hash functions that set bits to 1 and k₀ that reset bits to 0 per
//! insertion (resets first, so a bit named by both ends at 1), n insertions. For one bit
//! and one insertion, with positions independent and uniform:
//!
//! ```text
//!     s = 1 − (1 − 1/m)^k₁                  the insertion sets it
//!     r = (1 − (1 − 1/m)^k₀)(1 − 1/m)^k₁    it resets it and does not set it
//!     u = (1 − 1/m)^(k₀ + k₁)               it leaves it alone
//! ```
//!
//! The last insertion that touches a bit decides it, so a bit that is b now is still b after
//! j more insertions with probability `u^j + (s or r)·(1 − u^j)/(1 − u)` (Laufer, Velloso,
//! Cunha & Duarte, "Generalized Bloom Filters", 2005; Computer Networks 2011 — the same
//! recurrences, there for an arbitrary initial state).

fn rates(num_bits: u64, set_hashes: u32, reset_hashes: u32) -> (f64, f64, f64) {
    let keep = (-1.0 / num_bits.max(1) as f64).ln_1p(); // ln(1 − 1/m)
    let untouched_by_sets = (f64::from(set_hashes) * keep).exp();
    let untouched_by_resets = (f64::from(reset_hashes) * keep).exp();
    let s = 1.0 - untouched_by_sets;
    let r = (1.0 - untouched_by_resets) * untouched_by_sets;
    let u = untouched_by_sets * untouched_by_resets;
    (s, r, u)
}

/// The probability that a bit that is `b` (0 or 1) is still `b` after `later` insertions;
/// `u^j + c·(1 − u^j)/(1 − u)` with c = s for a 1 and r for a 0 (see the module docs).
fn kept(s: f64, r: f64, u: f64, one: bool, later: u64) -> f64 {
    let uj = u.powf(later as f64);
    let c = if one { s } else { r };
    if u >= 1.0 {
        return 1.0;
    }
    uj + c * (1.0 - uj) / (1.0 - u)
}

/// The probability that a bit of a generalized Bloom filter is 1 after `items` insertions
/// into m bits that were all 0: `s·(1 − uⁿ)/(1 − u)`. It tends to `s/(s + r) ≈ k₁/(k₀ + k₁)`,
/// whatever the number of insertions — the filter never fills up.
///
/// ```
/// use bloomkit::params::generalized_one_probability;
/// assert_eq!(generalized_one_probability(1_000, 4, 1, 0), 0.0);
/// let late = generalized_one_probability(1_000, 4, 1, 1_000_000);
/// assert!((late - 0.8).abs() < 0.001, "{late}");
/// ```
pub fn generalized_one_probability(
    num_bits: u64,
    set_hashes: u32,
    reset_hashes: u32,
    items: u64,
) -> f64 {
    let (s, _, u) = rates(num_bits, set_hashes, reset_hashes);
    if u >= 1.0 {
        return 0.0;
    }
    s * (1.0 - u.powf(items as f64)) / (1.0 - u)
}

/// The false-positive probability of a generalized Bloom filter after `items` insertions
/// into m zero bits: an absent item needs its k₁ bits at 1 and its k₀ bits at 0,
/// `p^k₁ (1 − p)^k₀` with p = [`generalized_one_probability`].
///
/// ```
/// use bloomkit::params::{fpp_exact, generalized_fpp};
/// // With no resets it is the classic filter.
/// assert!((generalized_fpp(9_586, 7, 0, 1_000) - fpp_exact(9_586, 7, 1_000)).abs() < 1e-12);
/// ```
pub fn generalized_fpp(num_bits: u64, set_hashes: u32, reset_hashes: u32, items: u64) -> f64 {
    let p = generalized_one_probability(num_bits, set_hashes, reset_hashes, items);
    p.powi(set_hashes as i32) * (1.0 - p).powi(reset_hashes as i32)
}

/// The bound on the false-positive probability that holds at every fill, and so for any
/// number of insertions and any initial state: `p^k₁ (1 − p)^k₀` is largest at
/// `p = k₁/(k₀ + k₁)`, so
///
/// ```text
///     FPP  ≤  (k₁/(k₀ + k₁))^k₁ · (k₀/(k₀ + k₁))^k₀
/// ```
///
/// (Laufer et al.'s bound: the false-positive rate is bounded however the filter was
/// filled, which a classic filter — k₀ = 0, bound 1 — cannot say.)
///
/// ```
/// use bloomkit::params::generalized_fpp_bound;
/// assert_eq!(generalized_fpp_bound(1, 1), 0.25);
/// assert_eq!(generalized_fpp_bound(4, 0), 1.0);
/// ```
pub fn generalized_fpp_bound(set_hashes: u32, reset_hashes: u32) -> f64 {
    let (k1, k0) = (f64::from(set_hashes), f64::from(reset_hashes));
    let total = k1 + k0;
    if total == 0.0 {
        return 1.0;
    }
    (k1 / total).powf(k1) * (k0 / total).powf(k0)
}

/// The probability that an item is no longer found after `later` insertions of other
/// items: one of its k₁ ones reset or one of its k₀ zeros set (and not restored since),
/// `1 − A^k₁ B^k₀` with A, B the chances that a 1 and a 0 are kept (module docs).
///
/// ```
/// use bloomkit::params::generalized_fnr_after;
/// assert_eq!(generalized_fnr_after(1_000, 4, 1, 0), 0.0);
/// assert_eq!(generalized_fnr_after(1_000, 4, 0, 1_000), 0.0); // no resets, no losses
/// assert!(generalized_fnr_after(1_000, 4, 1, 1_000) > 0.5);
/// ```
pub fn generalized_fnr_after(num_bits: u64, set_hashes: u32, reset_hashes: u32, later: u64) -> f64 {
    let rates = rates(num_bits, set_hashes, reset_hashes);
    fnr_after(rates, set_hashes, reset_hashes, later)
}

/// [`generalized_fnr_after`] with the per-insertion rates already computed.
fn fnr_after((s, r, u): (f64, f64, f64), set_hashes: u32, reset_hashes: u32, later: u64) -> f64 {
    let ones = kept(s, r, u, true, later);
    let zeros = kept(s, r, u, false, later);
    1.0 - ones.powi(set_hashes as i32) * zeros.powi(reset_hashes as i32)
}

/// The false-negative rate over all items of a filter after `items` insertions: item i has
/// `items − 1 − i` later insertions, so the mean of [`generalized_fnr_after`] over
/// j = 0 … n − 1.
pub fn generalized_fnr(num_bits: u64, set_hashes: u32, reset_hashes: u32, items: u64) -> f64 {
    if items == 0 {
        return 0.0;
    }
    let rates = rates(num_bits, set_hashes, reset_hashes);
    let total: f64 = (0..items)
        .map(|j| fnr_after(rates, set_hashes, reset_hashes, j))
        .sum();
    total / items as f64
}
