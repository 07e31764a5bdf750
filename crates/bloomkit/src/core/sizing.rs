//! What the builders of the array-shaped kinds share: resolving m, k, the capacity and the
//! target ε from what the user gave (written once; the classic, counting, deletable and
//! stable builders call it).
//!
//! A builder may be given the capacity n, ε, the number of cells m, the number of hash
//! functions k, or any mix. The rules:
//!
//! * **ε**: as given, or [`DEFAULT_FPP`]; strictly between 0 and 1.
//! * **m**: as given (at least 1, and at most [`MAX_NUM_BITS`] bits of storage), else the
//!   standard `m = ⌈−n ln ε / (ln 2)²⌉` for n. Neither m nor n is an error: there is nothing
//!   to size from.
//! * **k**: as given (1 to [`MAX_NUM_HASHES`]), else the optimum for m and n,
//!   `k = round((m/n) ln 2)`; with m alone, the k that is optimal for ε itself,
//!   `k = log₂(1/ε)` rounded (a filter sized for ε at the optimum has `(m/n) ln 2 =
//!   log₂(1/ε)`).
//! * **capacity**: as given, else the n for which m and k are optimal, `⌊m ln 2 / k⌋`.
//! * **target ε**: the ε asked for when the builder sized the filter itself; the exact
//!   rate `(1 − (1 − 1/m)^{kn})^k` of the m, k and capacity when the user fixed m or k,
//!   since the ε asked for then need not be what these dimensions give.

use crate::error::Error;
use crate::params::{self, DEFAULT_FPP, MAX_NUM_BITS, MAX_NUM_HASHES};

/// ε as given, or the default; checked.
pub(crate) fn fpp(given: Option<f64>) -> Result<f64, Error> {
    params::validate_fpp(given.unwrap_or(DEFAULT_FPP))
}

/// A capacity of 0 is refused before anything else.
pub(crate) fn check_capacity(capacity: Option<u64>) -> Result<(), Error> {
    match capacity {
        Some(0) => Err(Error::ZeroCapacity),
        _ => Ok(()),
    }
}

/// m: the cells given, else sized for the capacity at ε; `cell_bits` bits each must fit in
/// [`MAX_NUM_BITS`].
pub(crate) fn num_cells(
    given: Option<u64>,
    capacity: Option<u64>,
    fpp: f64,
    cell_bits: u32,
) -> Result<u64, Error> {
    let m = match (given, capacity) {
        (Some(0), _) => return Err(Error::ZeroBits),
        (Some(m), _) => m,
        (None, Some(n)) => params::optimal_num_bits(n, fpp)?,
        (None, None) => return Err(Error::ZeroCapacity),
    };
    let bits = m.saturating_mul(u64::from(cell_bits));
    if bits > MAX_NUM_BITS {
        return Err(Error::TooLarge {
            bits,
            max: MAX_NUM_BITS,
        });
    }
    Ok(m)
}

/// A k the user gave: 1 to [`MAX_NUM_HASHES`].
pub(crate) fn check_num_hashes(given: Option<u32>) -> Result<(), Error> {
    match given {
        Some(0) => Err(Error::ZeroHashes),
        Some(k) if k > MAX_NUM_HASHES => Err(Error::TooManyHashes {
            got: u64::from(k),
            max: MAX_NUM_HASHES,
        }),
        _ => Ok(()),
    }
}

/// k: as given (checked), else optimal for m cells and the capacity, else for ε alone.
pub(crate) fn num_hashes(
    given: Option<u32>,
    cells: u64,
    capacity: Option<u64>,
    fpp: f64,
) -> Result<u32, Error> {
    check_num_hashes(given)?;
    Ok(match (given, capacity) {
        (Some(k), _) => k,
        (None, Some(n)) => params::optimal_num_hashes(cells, n),
        (None, None) => ((-fpp.log2()).round() as u32).clamp(1, MAX_NUM_HASHES),
    })
}

/// The capacity given, or the n at which m cells and k hashes are optimal.
pub(crate) fn capacity(given: Option<u64>, cells: u64, hashes: u32) -> u64 {
    given.unwrap_or_else(|| {
        ((cells as f64 * std::f64::consts::LN_2 / f64::from(hashes)).floor() as u64).max(1)
    })
}

/// The ε the filter answers for: `fpp` when the builder chose m and k, else the exact
/// rate of the dimensions the user fixed, at the capacity.
pub(crate) fn target_fpp(user_fixed_dimensions: bool, fpp: f64, m: u64, k: u32, n: u64) -> f64 {
    if user_fixed_dimensions {
        params::fpp_exact(m, k, n)
    } else {
        fpp
    }
}

/// The dimensions of a kind that is one array of m cells probed by k hash functions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Dimensions {
    /// m.
    pub num_cells: u64,
    /// k.
    pub num_hashes: u32,
    /// n.
    pub capacity: u64,
    /// ε at n.
    pub target_fpp: f64,
    /// The ε asked for (or the default), validated.
    pub fpp: f64,
}

/// Every rule above at once, for an array of m cells of `cell_bits` bits each.
pub(crate) fn dimensions(
    capacity: Option<u64>,
    fpp: Option<f64>,
    cells: Option<u64>,
    hashes: Option<u32>,
    cell_bits: u32,
) -> Result<Dimensions, Error> {
    dimensions_up_to(capacity, fpp, cells, hashes, cell_bits, MAX_NUM_HASHES)
}

/// [`dimensions`] for a kind whose k may not pass `max_hashes` (at most
/// [`MAX_NUM_HASHES`]; the generalized filter's k₁ shares the 64 with its k₀): a k the
/// builder derives stops there, and m grows to meet ε as it does at 64. A k the user gives
/// is the kind's to check.
pub(crate) fn dimensions_up_to(
    capacity: Option<u64>,
    fpp: Option<f64>,
    cells: Option<u64>,
    hashes: Option<u32>,
    cell_bits: u32,
    max_hashes: u32,
) -> Result<Dimensions, Error> {
    let max_hashes = max_hashes.clamp(1, MAX_NUM_HASHES);
    let fixed = cells.is_some() || hashes.is_some();
    let fpp = self::fpp(fpp)?;
    check_capacity(capacity)?;
    let mut m = num_cells(cells, capacity, fpp, cell_bits)?;
    if let (false, Some(n)) = (fixed, capacity) {
        m = cells_for_capped_hashes(m, n, fpp, cell_bits, max_hashes)?;
    }
    let mut k = num_hashes(hashes, m, capacity, fpp)?;
    if hashes.is_none() {
        k = k.min(max_hashes);
    }
    let n = self::capacity(capacity, m, k);
    Ok(Dimensions {
        num_cells: m,
        num_hashes: k,
        capacity: n,
        target_fpp: target_fpp(fixed, fpp, m, k, n),
        fpp,
    })
}

/// m for n items at ε when k stops at `max_hashes` (K, [`MAX_NUM_HASHES`] for most kinds):
/// the standard m has the optimal `k = (m/n) ln 2 = log₂(1/ε)`, which passes 64 for ε
/// below about 2⁻⁶⁴·⁵ (3.8·10⁻²⁰); with k held at K the standard m then misses ε (ε = 10⁻³⁰
/// at 143.8 bits per item gives 3·10⁻²⁹ with K = 64), so m grows to the fewest cells whose
/// exact rate with K hash functions, `(1 − (1 − 1/m)^{Kn})^K`, reaches ε — compared in
/// logarithms, so that rates far below the smallest `f64` compare too (about
/// `m = −K n / ln(1 − ε^{1/K})`: 154.1 bits per item at 10⁻³⁰ with K = 64, 3.1·10⁶ at
/// 10⁻³⁰⁰). Otherwise `m` as it is.
fn cells_for_capped_hashes(
    m: u64,
    n: u64,
    fpp: f64,
    cell_bits: u32,
    max_hashes: u32,
) -> Result<u64, Error> {
    let optimal_k = m as f64 / n as f64 * std::f64::consts::LN_2;
    if optimal_k.round() <= f64::from(max_hashes) {
        return Ok(m);
    }
    let k = f64::from(max_hashes);
    let ln_rate = |cells: u64| params::ln_fpp_exact(cells, max_hashes, n);
    let max_cells = MAX_NUM_BITS / u64::from(cell_bits);
    let ln_fpp = fpp.ln();
    if ln_rate(max_cells) > ln_fpp {
        let wanted = -k * n as f64 / (-fpp.powf(1.0 / k)).ln_1p() * f64::from(cell_bits);
        return Err(Error::TooLarge {
            bits: wanted as u64,
            max: MAX_NUM_BITS,
        });
    }
    Ok(first_meeting(m, max_cells, |cells| {
        ln_rate(cells) <= ln_fpp
    }))
}

/// The counter width a builder was given, or the kind's default: 1 to 16 bits (the widths
/// packed counters take), else [`Error::InvalidCounterWidth`].
pub(crate) fn counter_width(given: Option<u32>, default: u32) -> Result<u32, Error> {
    let width = given.unwrap_or(default);
    if !(1..=16).contains(&width) {
        return Err(Error::InvalidCounterWidth(width));
    }
    Ok(width)
}

/// The `capacity` and `fpp` setters every builder has (fields `capacity: Option<u64>` and
/// `fpp: Option<f64>`), with the usual documentation or the kind's own.
macro_rules! capacity_and_fpp_setters {
    () => {
        $crate::sizing::capacity_and_fpp_setters!(
            "n, the number of items expected.",
            "ε, the false-positive probability wanted at capacity (default 1%)."
        );
    };
    ($capacity_doc:literal, $fpp_doc:literal) => {
        #[doc = $capacity_doc]
        pub fn capacity(mut self, capacity: impl $crate::params::ItemCount) -> Self {
            self.capacity = Some(capacity.items());
            self
        }

        #[doc = $fpp_doc]
        pub fn fpp(mut self, fpp: f64) -> Self {
            self.fpp = Some(fpp);
            self
        }
    };
}
pub(crate) use capacity_and_fpp_setters;

/// The smallest `x` in `lo..=hi` for which `meets(x)`, where `meets` is monotone — false,
/// then true from some point on — and `meets(hi)` holds (else `hi` is returned). Every
/// sizing rule that asks "the fewest cells that reach ε" (blocked, split-block,
/// variable-increment, buffered) is this search over a rate that falls as the size grows.
pub(crate) fn first_meeting(mut lo: u64, mut hi: u64, mut meets: impl FnMut(u64) -> bool) -> u64 {
    // Invariant: every x below lo fails; hi meets.
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if meets(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

/// The largest `x` in `lo..=hi` for which `meets(x)`, where `meets` is monotone — true,
/// then false from some point on — and `meets(lo)` holds (else `lo` is returned). The
/// capacity rules ("the most items this size holds at ε") are this search over a rate that
/// grows with the number of items.
pub(crate) fn last_meeting(mut lo: u64, mut hi: u64, mut meets: impl FnMut(u64) -> bool) -> u64 {
    // Invariant: lo meets; every x above hi fails.
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if meets(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

/// A builder's plain setters: `name: Type;` becomes `pub fn name(mut self, name: Type) ->
/// Self` that stores `Some(name)` in the field of that name, with the doc comment written
/// above it. Validation waits for `build`, where every parameter is seen together.
macro_rules! setters {
    ($($(#[$doc:meta])* $name:ident: $ty:ty;)*) => {
        $(
            $(#[$doc])*
            pub fn $name(mut self, $name: $ty) -> Self {
                self.$name = Some($name);
                self
            }
        )*
    };
}
pub(crate) use setters;

/// A type's plain getters: `name: Type;` becomes `pub fn name(&self) -> Type` returning
/// the (`Copy`) field of that name, with the doc comment written above it.
macro_rules! getters {
    ($($(#[$doc:meta])* $name:ident: $ty:ty;)*) => {
        $(
            $(#[$doc])*
            pub fn $name(&self) -> $ty {
                self.$name
            }
        )*
    };
}
pub(crate) use getters;

/// The `capacity` and `target_fpp` getters of a kind sized for n items at ε (fields
/// `capacity: u64` and `target_fpp: f64`), the getters' twins of
/// [`capacity_and_fpp_setters!`].
macro_rules! capacity_and_fpp_getters {
    () => {
        $crate::sizing::getters! {
            /// n, the number of items the filter was sized for.
            capacity: u64;

            /// ε, the false-positive probability the filter was sized for (at `capacity`
            /// items).
            target_fpp: f64;
        }
    };
}
pub(crate) use capacity_and_fpp_getters;

/// `num_cells(m)`: the one name every array-shaped kind's builder gives its explicit size
/// m, forwarding to the kind's own unit-named setter (`num_bits`, `num_counters`, …).
/// Generic code — the CLI's `--bits`, a study that sweeps m — calls `num_cells` on any of
/// them.
macro_rules! num_cells_setter {
    ($method:ident, $unit:literal) => {
        #[doc = concat!(
            "m, the number of cells — for this kind, ", $unit, " — instead of deriving it from ",
            "capacity and ε. The name every array-shaped kind's builder shares; the same as [`",
            stringify!($method), "`](Self::", stringify!($method), ")."
        )]
        pub fn num_cells(self, m: u64) -> Self {
            self.$method(m)
        }
    };
}
pub(crate) use num_cells_setter;

/// The setters of an array-shaped kind's builder that take the common options: the
/// hashing ([`hashing_setters!`](crate::hash::hashing_setters) with the index scheme),
/// capacity and ε, m by its unit's name (`$cells`, also as `num_cells`) and k
/// (`num_hashes`), then the kind's own plain setters as in [`setters!`]. The doc comments
/// of m and k are the usual ones unless given (`m "…" k "…"` before the kind's own).
macro_rules! array_setters {
    (@ $cells:ident, $unit:literal, ($($m_doc:tt)*), ($($k_doc:tt)*), $($rest:tt)*) => {
        $crate::hash::hashing_setters!(index_scheme);

        $crate::sizing::capacity_and_fpp_setters!();

        $crate::sizing::num_cells_setter!($cells, $unit);

        $crate::sizing::setters! {
            #[doc = $($m_doc)*]
            $cells: u64;

            #[doc = $($k_doc)*]
            num_hashes: u32;

            $($rest)*
        }
    };
    ($cells:ident, $unit:literal; m $m_doc:literal, k $k_doc:literal; $($rest:tt)*) => {
        $crate::sizing::array_setters!(@ $cells, $unit, ($m_doc), ($k_doc), $($rest)*);
    };
    ($cells:ident, $unit:literal; $($rest:tt)*) => {
        $crate::sizing::array_setters!(
            @ $cells, $unit,
            (concat!("m, the number of ", $unit, ", instead of deriving it from capacity and ε.")),
            ("k, the number of hash functions, instead of the optimal one."),
            $($rest)*
        );
    };
}
pub(crate) use array_setters;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_searches_find_the_threshold_a_scan_finds() {
        for threshold in 0..40u64 {
            for lo in 0..12u64 {
                for hi in lo..45u64 {
                    let from = |x: u64| x >= threshold;
                    let scan = (lo..=hi).find(|&x| from(x)).unwrap_or(hi);
                    assert_eq!(first_meeting(lo, hi, from), scan, "{threshold} {lo}..={hi}");
                    let until = |x: u64| x <= threshold;
                    let scan = (lo..=hi).rev().find(|&x| until(x)).unwrap_or(lo);
                    assert_eq!(last_meeting(lo, hi, until), scan, "{threshold} {lo}..={hi}");
                }
            }
        }
    }

    #[test]
    fn sized_for_n_and_epsilon_as_the_seeds_say() {
        // The row ε = 0.001 of Grützner, Möller & Weber ("Bloom Filter", 2021) for its 58,110 words: m = 835,482 bits, k = 10.
        let d = dimensions(Some(58_110), Some(0.001), None, None, 1).unwrap();
        assert_eq!(
            (d.num_cells, d.num_hashes, d.capacity),
            (835_482, 10, 58_110)
        );
        assert_eq!(d.target_fpp, 0.001);
    }

    /// Below about 3.8·10⁻²⁰ the optimal k passes 64, where k stops: m grows to the fewest
    /// cells whose exact rate with 64 hash functions reaches ε (one cell fewer misses it),
    /// so the filter meets the ε it reports; a size past the limit is an error. Above that
    /// ε, m is the standard one.
    #[test]
    fn an_epsilon_past_64_hash_functions_grows_m_until_the_rate_meets_it() {
        // ln of the exact rate, as fpp_exact computes it but without underflow.
        let ln_rate = |m: u64, n: u64| {
            let k = f64::from(MAX_NUM_HASHES);
            k * (-(k * n as f64 * (-1.0 / m as f64).ln_1p()).exp_m1()).ln()
        };
        for n in [1_000u64, 58_110, 1_000_000] {
            for fpp in [1e-20, 1e-30, 1e-100, 1e-300] {
                let d = match dimensions(Some(n), Some(fpp), None, None, 1) {
                    Ok(d) => d,
                    Err(e) => {
                        // Only 10⁶ items at 10⁻³⁰⁰ need more than 2⁴⁰ bits (3.1·10¹² bits).
                        assert_eq!((n, fpp), (1_000_000, 1e-300), "{e}");
                        assert!(
                            matches!(e, Error::TooLarge { bits, .. } if bits > 3 * 10u64.pow(12))
                        );
                        continue;
                    }
                };
                assert_eq!(d.num_hashes, MAX_NUM_HASHES, "n {n}, ε {fpp}");
                let standard = params::optimal_num_bits(n, fpp).unwrap();
                assert!(d.num_cells > standard, "n {n}, ε {fpp}: m {}", d.num_cells);
                assert!(ln_rate(d.num_cells, n) <= fpp.ln(), "n {n}, ε {fpp}");
                assert!(ln_rate(d.num_cells - 1, n) > fpp.ln(), "n {n}, ε {fpp}");
                assert_eq!(d.target_fpp, fpp);
            }
            let d = dimensions(Some(n), Some(1e-19), None, None, 1).unwrap();
            assert_eq!(d.num_cells, params::optimal_num_bits(n, 1e-19).unwrap());
            assert_eq!(d.num_hashes, 63);
        }
        // ε = 10⁻³⁰ for 1 000 items: 154.1 bits per item (the standard 143.8 gives 3·10⁻²⁹).
        let d = dimensions(Some(1_000), Some(1e-30), None, None, 1).unwrap();
        assert_eq!(d.num_cells / 100, 1_541);
        assert!(params::fpp_exact(143_776, 64, 1_000) > 2e-29);
        // Counters: the cells grow, and their bits are held to the limit.
        let d = dimensions(Some(1_000), Some(1e-30), None, None, 4).unwrap();
        assert_eq!(d.num_cells / 100, 1_541);
    }

    #[test]
    fn fixed_dimensions_report_their_own_rate() {
        let d = dimensions(None, Some(0.01), Some(1_000), None, 1).unwrap();
        // k = log₂(100) ≈ 6.64 → 7; n = ⌊1000 ln 2 / 7⌋ = 99.
        assert_eq!((d.num_hashes, d.capacity), (7, 99));
        assert_eq!(d.target_fpp, params::fpp_exact(1_000, 7, 99));
        let d = dimensions(Some(100), None, None, Some(3), 1).unwrap();
        assert_eq!(d.target_fpp, params::fpp_exact(d.num_cells, 3, 100));
    }

    #[test]
    fn bad_requests_are_errors() {
        let e = |c, f, m, k, w| dimensions(c, f, m, k, w).unwrap_err();
        assert_eq!(e(Some(0), None, None, None, 1), Error::ZeroCapacity);
        assert_eq!(e(None, None, None, None, 1), Error::ZeroCapacity);
        assert_eq!(e(None, None, Some(0), None, 1), Error::ZeroBits);
        assert_eq!(e(Some(10), None, None, Some(0), 1), Error::ZeroHashes);
        assert!(matches!(
            e(Some(10), None, None, Some(MAX_NUM_HASHES + 1), 1),
            Error::TooManyHashes { .. }
        ));
        assert!(matches!(
            e(Some(10), Some(1.0), None, None, 1),
            Error::InvalidFpp(_)
        ));
        assert_eq!(
            e(None, None, Some(MAX_NUM_BITS / 4 + 1), None, 4),
            Error::TooLarge {
                bits: (MAX_NUM_BITS / 4 + 1) * 4,
                max: MAX_NUM_BITS
            }
        );
        assert!(dimensions(None, None, Some(MAX_NUM_BITS / 4), None, 4).is_ok());
    }

    #[test]
    fn num_cells_is_the_unit_named_setter_in_every_array_shaped_builder() {
        use crate::*;
        let m = 1_000;
        let bloom = BloomFilter::builder().num_cells(m).build().unwrap();
        assert_eq!(bloom.num_bits(), m);
        let counting = CountingBloomFilter::builder().num_cells(m).build().unwrap();
        assert_eq!(counting.num_counters(), m);
        let vi = VariableIncrementBloomFilter::builder()
            .num_cells(m)
            .build()
            .unwrap();
        assert_eq!(vi.num_counters(), m);
        let deletable = DeletableBloomFilter::builder()
            .num_cells(m)
            .build()
            .unwrap();
        assert_eq!(deletable.num_bits(), m);
        let stable = StableBloomFilter::builder()
            .num_cells(10 * m)
            .build()
            .unwrap();
        assert_eq!(stable.num_cells(), 10 * m);
        // The block kinds round m up to whole blocks: 2 of 512 bits, 4 of 256.
        let blocked = BlockedBloomFilter::builder().num_cells(m).build().unwrap();
        assert_eq!(blocked.num_bits(), 1_024);
        let sbbf = SplitBlockBloomFilter::builder()
            .num_cells(m)
            .build()
            .unwrap();
        assert_eq!(sbbf.num_bits(), 1_024);
    }
}
