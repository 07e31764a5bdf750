//! Theory of the buffered Bloom filter on solid-state storage (Canim, Mihaila,
//! Bhattacharjee, Lang & Ross, "Buffered Bloom Filters on Solid State Storage", ADMS 2010):
//! its false-positive rate, its sizing, and the page I/O it costs.
//!
//! # False positives
//!
//! The filter is N pages of b bits; an item picks one page uniformly and sets k bits in it.
//! The number of items sharing a page is Binomial(n, 1/N), close to Poisson with mean
//! `λ = n/N`, and a page holding i items is a classic filter of b bits, so
//!
//! ```text
//!     FPR = Σ_i Poisson(i; λ) · (1 − (1 − 1/b)^(k·i))^k        (fpp_paged)
//! ```
//!
//! — Putze, Sanders & Singler's blocked-filter formula (WEA 2007) with a page as the block.
//! For pages of thousands of bits the penalty over a classic filter of N·b bits is small
//! (λ is large, so the load hardly varies between pages).
//!
//! # Page I/O
//!
//! Unbuffered, an insert reads its page, sets its bits and writes the page back: one read
//! and one write per insert. Buffered, inserts wait in memory until B of them are pending,
//! then each page with pending inserts is read and written once. The B pending items fall
//! on `D = N·(1 − (1 − 1/N)^B)` distinct pages on average (occupancy), so an insert costs
//! `D/B` reads and `D/B` writes ([`buffered_io_per_insert`]): about `1 − (B − 1)/(2N)` while
//! B ≪ N and `N/B` once B ≫ N — the paper's point: with a buffer of a few items per page
//! the cost per insert falls far below one page. A query reads its one page.

use crate::error::Error;
use crate::params::{fpp_exact, optimal_num_bits, optimal_num_hashes, validate_fpp, MAX_NUM_BITS};

/// The false-positive probability of N pages of b bits, k bits per item in its one page,
/// after n insertions (the module docs give the formula). Summed over
/// `i ≤ λ + 12√λ + 40` (the Poisson tail past it is below 10⁻³⁰), weights in log space.
///
/// ```
/// use bloomkit::params::{fpp_exact, fpp_paged};
/// // 4 KiB pages (32 704 bits each after the checksum), 10 bits per item, k = 7.
/// let (pages, bits, k, n) = (306, 32_704, 7, 1_000_000);
/// let paged = fpp_paged(pages, bits, k, n);
/// let classic = fpp_exact(pages * bits, k, n);
/// assert!(paged > classic && paged < 1.05 * classic);
/// ```
pub fn fpp_paged(num_pages: u64, page_bits: u64, num_hashes: u32, items: u64) -> f64 {
    if num_pages == 0 || page_bits == 0 {
        return 1.0;
    }
    if items == 0 {
        return 0.0;
    }
    if num_pages == 1 {
        return fpp_exact(page_bits, num_hashes, items);
    }
    let lambda = items as f64 / num_pages as f64;
    let last = (lambda + 12.0 * lambda.sqrt() + 40.0).ceil() as u64;
    let (ln_lambda, mut ln_p, mut sum) = (lambda.ln(), -lambda, 0.0);
    for i in 1..=last {
        ln_p += ln_lambda - (i as f64).ln();
        sum += ln_p.exp() * fpp_exact(page_bits, num_hashes, i);
    }
    sum.min(1.0)
}

/// The size of a paged filter for n items at ε: k optimal for the classic filter of the
/// same ε, and the smallest number of pages N (from the classic `⌈m/b⌉` up) for which
/// [`fpp_paged`] is at most ε. Returns (N, k).
///
/// ```
/// use bloomkit::params::{buffered_dimensions, fpp_paged};
/// let (pages, k) = buffered_dimensions(1_000_000, 0.01, 32_704)?;
/// assert!(fpp_paged(pages, 32_704, k, 1_000_000) <= 0.01);
/// assert!(fpp_paged(pages - 1, 32_704, k, 1_000_000) > 0.01);
/// # Ok::<(), bloomkit::Error>(())
/// ```
pub fn buffered_dimensions(capacity: u64, fpp: f64, page_bits: u64) -> Result<(u64, u32), Error> {
    let fpp = validate_fpp(fpp)?;
    let m = optimal_num_bits(capacity, fpp)?;
    let k = optimal_num_hashes(m, capacity);
    let meets = |pages: u64| fpp_paged(pages, page_bits, k, capacity) <= fpp;
    // Double the step until the rate is met, then bisect between the last two sizes.
    let mut low = m.div_ceil(page_bits).max(1);
    if meets(low) {
        return Ok((low, k));
    }
    let mut step = (low / 100).max(1);
    let mut high = low + step;
    while !meets(high) {
        low = high;
        step *= 2;
        high = low.saturating_add(step);
        if high.saturating_mul(page_bits) > MAX_NUM_BITS {
            return Err(Error::TooLarge {
                bits: high.saturating_mul(page_bits),
                max: MAX_NUM_BITS,
            });
        }
    }
    // low fails, high meets.
    Ok((crate::sizing::first_meeting(low + 1, high, meets), k))
}

/// The expected page reads (and as many writes) per insert when inserts are flushed in
/// batches of `batch` into `num_pages` pages: `D/B` with `D = N·(1 − (1 − 1/N)^B)` the
/// expected number of distinct pages among B uniform picks. A batch of 1 is the unbuffered
/// filter: exactly 1.
///
/// ```
/// use bloomkit::params::buffered_io_per_insert;
/// assert_eq!(buffered_io_per_insert(1_000, 1), 1.0);
/// // Ten pending inserts per page: about a tenth of a page read per insert.
/// let cost = buffered_io_per_insert(1_000, 10_000);
/// assert!((cost - 0.1).abs() < 0.001, "{cost}");
/// ```
pub fn buffered_io_per_insert(num_pages: u64, batch: u64) -> f64 {
    if batch == 0 || num_pages == 0 {
        return 0.0;
    }
    let n = num_pages as f64;
    // 1 − e^x as −expm1(x), so that a batch of one is exactly one page.
    let distinct = -n * (batch as f64 * (-1.0 / n).ln_1p()).exp_m1();
    distinct / batch as f64
}

/// The variance of D, the number of distinct pages among B uniform picks of N pages (the
/// page reads of one flushed batch): `N(N−1)(1 − 2/N)^B + N(1 − 1/N)^B − N²(1 − 1/N)^(2B)`
/// (occupancy: D and the number of untouched pages have the same variance). With
/// [`buffered_io_per_insert`] it gives the interval a measured page count is judged by.
///
/// ```
/// use bloomkit::params::buffered_distinct_pages_variance;
/// assert_eq!(buffered_distinct_pages_variance(100, 1), 0.0); // one pick: one page
/// assert!(buffered_distinct_pages_variance(590, 1_000) > 40.0);
/// ```
pub fn buffered_distinct_pages_variance(num_pages: u64, batch: u64) -> f64 {
    let (n, b) = (num_pages as f64, batch as f64);
    let q1 = (b * (-1.0 / n).ln_1p()).exp();
    let q2 = (b * (-2.0 / n).ln_1p()).exp();
    (n * (n - 1.0) * q2 + n * q1 - n * n * q1 * q1).max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_page_is_a_classic_filter_and_many_pages_approach_one() {
        assert_eq!(fpp_paged(1, 10_000, 5, 700), fpp_exact(10_000, 5, 700));
        let (pages, bits, k, n) = (10_000, 32_704, 7, 30_000_000);
        let ratio = fpp_paged(pages, bits, k, n) / fpp_exact(pages * bits, k, n);
        assert!(ratio > 1.0 && ratio < 1.02, "{ratio}");
        assert_eq!(fpp_paged(10, 100, 3, 0), 0.0);
    }

    #[test]
    fn io_per_insert_falls_with_the_batch() {
        let costs: Vec<f64> = [1, 10, 100, 1_000, 10_000]
            .iter()
            .map(|&b| buffered_io_per_insert(1_000, b))
            .collect();
        assert!(costs.windows(2).all(|w| w[1] < w[0]), "{costs:?}");
        // B ≪ N: about 1 − (B − 1)/(2N).
        assert!(
            (costs[1] - (1.0 - 9.0 / 2_000.0)).abs() < 1e-4,
            "{}",
            costs[1]
        );
    }

    #[test]
    fn bad_sizes_are_errors() {
        assert!(buffered_dimensions(0, 0.01, 32_704).is_err());
        assert!(buffered_dimensions(10, 1.0, 32_704).is_err());
        assert!(buffered_dimensions(u64::MAX / 2, 1e-12, 32_704).is_err());
    }
}
