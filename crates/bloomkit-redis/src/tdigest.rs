//! RedisBloom 2.4's t-digest (`TDIGEST.*`, module type `TDIS-TYPE`), computed exactly as it
//! computes it: the merging t-digest of its t-digest-c library (at the commit its 2.4
//! branch pins), same capacity, same buffer, same sort, same merge rule and the same
//! floating-point operations in the same order, so that centroids, answers and saved bytes
//! are identical, bit for bit.
//!
//! # The merging t-digest (Dunning & Ertl, "Computing extremely accurate quantiles using
//! t-digests", 2019)
//!
//! A digest summarises `n` weighted points by a sorted list of *centroids* `(mean, weight)`.
//! Centroids near the median may hold many points, centroids near the tails few, so that
//! extreme quantiles stay accurate while the list stays short. New points go to an
//! *unmerged* buffer at the end of the same arrays; when the arrays are nearly full (or an
//! answer is asked for) the whole list is sorted by mean and merged in one pass left to
//! right ([`TDigest::compress`]): each centroid is folded into the one before it while the
//! result stays within the size bound, else it starts a new centroid.
//!
//! **The size bound (scale function).** Dunning & Ertl bound a centroid's size through a
//! scale function `k(q)`: a centroid spanning quantiles `q₀…q₂` may hold its points only
//! while `k(q₂) − k(q₀) ≤ 1`. For the logistic-shaped scale functions (`k₂`, `k₃`),
//! `dk/dq ∝ 1/(q(1 − q))`, so the bound reads `Δq ≲ Z · q(1 − q) / δ` — centroid sizes
//! proportional to `q(1 − q)`, small at both tails. t-digest-c checks that form directly,
//! with the normaliser `Z(n) = 2π · n · ln n` and the compression `δ`:
//!
//! ```text
//!     normalizer = δ / (2π · n · ln n)              (n: total weight, merged + unmerged)
//!     z  = (w_cur + w_i) · normalizer               (the merged centroid's weight, scaled)
//!     q₀ = W / n,  q₂ = (W + w_cur + w_i) / n       (W: weight of the centroids before it)
//!     merge  ⇔  z ≤ q₀(1 − q₀)  and  z ≤ q₂(1 − q₂)
//! ```
//!
//! A merge moves the mean by `(mean_i − mean_cur) · w_i / w_cur` (`w_cur` already
//! increased). The number of centroids stays a small multiple of `δ`; the arrays hold
//! `6δ + 10` of them (merged and unmerged together), and a merge runs when an add would
//! leave fewer than two free.
//!
//! **Answers.** Quantiles and the CDF interpolate linearly between centroid means, each
//! centroid's weight taken as spread half on either side of its mean; the minimum and
//! maximum are kept exactly and bound the first and last half-centroids; a centroid of
//! weight 1 is a single point and is not interpolated across.
//!
//! # RedisBloom's quirks, kept
//!
//! * Answers compress the digest first, so a query changes what `TDIGEST.INFO` reports
//!   (and the centroids later adds merge into), as in RedisBloom.
//! * [`TDigest::compress`] does nothing while the total weight is at most 1, so a digest
//!   holding one point keeps it unmerged, answers NaN for quantiles and CDF, and is saved
//!   without it ([`TDigest::save`] writes only merged centroids): after a reload it keeps
//!   its count, minimum and maximum and an unmerged centroid of mean 0 and weight 0.
//! * `TDIGEST.QUANTILE` uses the batch quantile routine, which lacks the single routine's
//!   "below the first point: the minimum" rule (`TDIGEST.BYRANK` uses the single one).
//! * Weights are 64-bit integers but are saved as doubles (exact up to 2⁵³).
//! * C conversions from double to `long long` (x86-64 `cvttsd2si`): NaN and values out of
//!   range become `i64::MIN` ([`c_ll`]); RedisBloom's 64-bit integer overflows wrap.
//!
//! Nothing here panics on any input: integer arithmetic that C could overflow wraps, and
//! every index is bounded by the array capacity, which [`TDigest::load`] checks.

use crate::config::{Limit, Refusal};
use crate::rdb::{Sink, Source};

/// The RDB encoding version of `TDIS-TYPE`.
pub const ENCODING_VERSION: i32 = 0;
/// The compression of `TDIGEST.CREATE key` without `COMPRESSION`.
pub const DEFAULT_COMPRESSION: i64 = 100;
/// The largest compression: its capacity, `6c + 10`, is the largest that fits RedisBloom's
/// C `int` (RedisBloom truncates larger ones and writes past its arrays).
pub const MAX_COMPRESSION: i64 = (i32::MAX as i64 - 10) / 6;
/// Above this, t-digest-c's capacity computation gives 0 and RedisBloom answers that the
/// allocation failed (`SIZE_MAX / sizeof(double) / 6 - 10`).
const C_MAX_COMPRESSION: u64 = u64::MAX / 8 / 6 - 10;
/// `2π` as t-digest-c's `2 * MM_PI`.
const TWO_PI: f64 = 2.0 * std::f64::consts::PI;
/// The bytes RedisBloom counts for the digest itself in `MEMORY USAGE` and `TDIGEST.INFO`
/// (`sizeof` of a pointer: it measures the pointer, not the struct).
const REDISBLOOM_STRUCT_BYTES: u64 = 8;

/// Why a digest cannot be made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CreateError {
    /// t-digest-c's capacity computation refuses the compression (above
    /// `SIZE_MAX / 48 − 10`): RedisBloom's "allocation failed".
    Unallocatable,
    /// The compression is above [`MAX_COMPRESSION`].
    CompressionTooLarge,
    /// The digest would pass a memory limit (per key, or the server's budget).
    TooLarge(Refusal),
}

/// An add or merge refused because a weight would overflow (RedisBloom's `EDOM`:
/// "overflow detected").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overflow;

/// `(long long)x` as C compiles it on x86-64 (`cvttsd2si`): truncation toward zero, and
/// `i64::MIN` for NaN and for values out of range.
pub fn c_ll(x: f64) -> i64 {
    // 2⁶³ is exactly representable; -2⁶³ itself converts exactly.
    if !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&x) {
        i64::MIN
    } else {
        x as i64
    }
}

/// t-digest-c's `q < 0.0 || q > 1.0`: false for NaN, unlike `!(0.0..=1.0).contains(&q)`.
#[allow(clippy::manual_range_contains)]
#[inline]
fn outside_unit(q: f64) -> bool {
    q < 0.0 || q > 1.0
}

/// C's `x > y ? x : y` (t-digest-c's `__td_max`; NaN handling differs from `f64::max`).
#[inline]
fn c_max(x: f64, y: f64) -> f64 {
    if x > y {
        x
    } else {
        y
    }
}

/// C's `x < y ? x : y` (`__td_min`).
#[inline]
fn c_min(x: f64, y: f64) -> f64 {
    if x < y {
        x
    } else {
        y
    }
}

fn weighted_average_sorted(x1: f64, w1: f64, x2: f64, w2: f64) -> f64 {
    let x = (x1 * w1 + x2 * w2) / (w1 + w2);
    c_max(x1, c_min(x, x2))
}

fn weighted_average(x1: f64, w1: f64, x2: f64, w2: f64) -> f64 {
    if x1 <= x2 {
        weighted_average_sorted(x1, w1, x2, w2)
    } else {
        weighted_average_sorted(x2, w2, x1, w1)
    }
}

/// t-digest-c's `_tdigest_long_long_add_safe`: whether `a + b` stays within `i64` (its
/// negative branch computes `LLONG_MAX - b`, which wraps in C as it does here).
fn add_safe(a: i64, b: i64) -> bool {
    if b < 0 {
        a >= i64::MAX.wrapping_sub(b)
    } else {
        a <= i64::MAX - b
    }
}

/// t-digest-c's overflow test of a new total weight.
fn td_overflow(unmerged_weight: f64, total_weight: f64) -> Result<(), Overflow> {
    if unmerged_weight == f64::INFINITY || total_weight == f64::INFINITY {
        return Err(Overflow);
    }
    if TWO_PI * total_weight * total_weight.ln() == f64::INFINITY {
        return Err(Overflow);
    }
    Ok(())
}

/// RedisBloom's rounding of a forward rank (`_halfRoundDown`): to the nearest integer, a
/// half rounded toward zero.
pub fn half_round_down(f: f64) -> f64 {
    // modf: the integral part, and a fraction of 0 for infinities.
    let int_part = f.trunc();
    let frac_part = if f.is_infinite() { 0.0 } else { f - int_part };
    if frac_part.abs() <= 0.5 {
        return int_part;
    }
    if int_part >= 0.0 {
        int_part + 1.0
    } else {
        int_part - 1.0
    }
}

/// t-digest-c's partition of `means[start..=end]` (and `weights` alike) around the value at
/// `pivot`: Lomuto's scheme, strict `<`.
fn partition(
    means: &mut [f64],
    weights: &mut [i64],
    start: usize,
    end: usize,
    pivot: usize,
) -> usize {
    let pivot_mean = means[pivot];
    means.swap(pivot, end);
    weights.swap(pivot, end);
    // `i` is the C `int i = start - 1`: one before the next slot for a smaller value.
    let mut next = start;
    for j in start..end {
        if means[j] < pivot_mean {
            means.swap(next, j);
            weights.swap(next, j);
            next += 1;
        }
    }
    means.swap(next, end);
    weights.swap(next, end);
    next
}

/// t-digest-c's quicksort of `means[start..=end]` carrying `weights` along: middle pivot,
/// two elements compared directly. Not stable: equal means keep the order this exact
/// sequence of swaps gives, which decides which centroid a point merges into.
///
/// The C version recurses on both sides; the sides are disjoint, so the order they are
/// sorted in does not change the result. Here the smaller side recurses and the larger one
/// loops, so the depth stays logarithmic (all-equal values make one side empty at every
/// step, which in C recurses as deep as the array is long).
fn sort(means: &mut [f64], weights: &mut [i64], mut start: usize, mut end: usize) {
    while start < end {
        if end - start == 1 {
            if means[start] > means[end] {
                means.swap(start, end);
                weights.swap(start, end);
            }
            return;
        }
        let pivot = partition(means, weights, start, end, start + (end - start) / 2);
        // Left side: start..=pivot-1 (when pivot > start); right side: pivot+1..=end.
        let left = pivot.saturating_sub(start);
        let right = end - pivot;
        if left <= right {
            if pivot > start {
                sort(means, weights, start, pivot - 1);
            }
            start = pivot + 1;
        } else {
            sort(means, weights, pivot + 1, end);
            end = pivot - 1;
        }
    }
}

/// A t-digest, field for field as t-digest-c's `td_histogram`.
#[derive(Clone, Debug)]
pub struct TDigest {
    /// δ, an integer ≥ 1 stored as a double.
    compression: f64,
    /// The smallest point added (`f64::MAX` when none).
    min: f64,
    /// The largest point added (`-f64::MAX` when none).
    max: f64,
    /// Capacity of the arrays: `6δ + 10`.
    cap: i32,
    /// Merged centroids at the front of the arrays.
    merged_nodes: i32,
    /// Points (or centroids, from a merge) buffered after them.
    unmerged_nodes: i32,
    /// Merges run so far.
    total_compressions: i64,
    merged_weight: i64,
    unmerged_weight: i64,
    means: Vec<f64>,
    weights: Vec<i64>,
}

/// The capacity t-digest-c gives a compression (`cap_from_compression`): `6δ + 10`, or 0 when
/// that would not fit `size_t` bytes of doubles. `δ` is truncated to an integer first.
fn c_capacity(compression: f64) -> u64 {
    // (size_t)compression: callers pass a positive finite compression.
    let whole = compression as u64;
    if whole > C_MAX_COMPRESSION {
        return 0;
    }
    6 * whole + 10
}

/// What `TDIGEST.INFO` reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Info {
    /// Compression.
    pub compression: i64,
    /// Capacity.
    pub capacity: i64,
    /// Merged nodes.
    pub merged_nodes: i64,
    /// Unmerged nodes.
    pub unmerged_nodes: i64,
    /// Merged weight.
    pub merged_weight: i64,
    /// Unmerged weight.
    pub unmerged_weight: i64,
    /// Observations (merged + unmerged weight).
    pub observations: i64,
    /// Total compressions.
    pub total_compressions: i64,
    /// Memory usage, as RedisBloom counts it.
    pub memory_usage: i64,
}

impl TDigest {
    /// The bytes a digest of capacity `cap` uses: the struct and its two arrays.
    fn footprint(cap: u64) -> u64 {
        std::mem::size_of::<Self>() as u64 + 16 * cap
    }

    /// An empty digest (`td_init`), checked against the memory limits (the per-key limit
    /// and the server's budget, as for the filters) before anything is allocated.
    /// `compression` is positive and finite.
    fn with_compression(compression: f64, limit: impl Limit) -> Result<Self, CreateError> {
        let cap = c_capacity(compression);
        if cap == 0 {
            return Err(CreateError::Unallocatable);
        }
        if cap > i32::MAX as u64 {
            return Err(CreateError::CompressionTooLarge);
        }
        limit
            .check(0, Self::footprint(cap))
            .map_err(CreateError::TooLarge)?;
        Ok(Self {
            compression,
            min: f64::MAX,
            max: -f64::MAX,
            cap: cap as i32,
            merged_nodes: 0,
            unmerged_nodes: 0,
            total_compressions: 0,
            merged_weight: 0,
            unmerged_weight: 0,
            means: vec![0.0; cap as usize],
            weights: vec![0; cap as usize],
        })
    }

    /// An empty digest of compression `compression` (a positive integer, as the commands
    /// parse it).
    pub fn new(compression: i64, limit: impl Limit) -> Result<Self, CreateError> {
        if compression <= 0 {
            return Err(CreateError::Unallocatable);
        }
        Self::with_compression(compression as f64, limit)
    }

    /// The compression, as C converts it to `long long`.
    pub fn compression(&self) -> i64 {
        c_ll(self.compression)
    }

    /// The bytes this digest uses (what the memory limits count).
    pub fn memory_bytes(&self) -> u64 {
        Self::footprint(self.cap as u64)
    }

    /// The size RedisBloom reports (`MEMORY USAGE`, `TDIGEST.INFO`): a pointer's 8 bytes
    /// and the two arrays.
    pub fn redisbloom_memory_usage(&self) -> u64 {
        REDISBLOOM_STRUCT_BYTES + 2 * (self.cap as u64 * 8)
    }

    /// The total weight (`td_size`).
    pub fn size(&self) -> i64 {
        self.merged_weight.wrapping_add(self.unmerged_weight)
    }

    /// The smallest point (`f64::MAX` when empty).
    pub fn min(&self) -> f64 {
        self.min
    }

    /// The largest point (`-f64::MAX` when empty).
    pub fn max(&self) -> f64 {
        self.max
    }

    /// `TDIGEST.INFO`'s numbers.
    pub fn info(&self) -> Info {
        Info {
            compression: self.compression(),
            capacity: self.cap as i64,
            merged_nodes: self.merged_nodes as i64,
            unmerged_nodes: self.unmerged_nodes as i64,
            merged_weight: self.merged_weight,
            unmerged_weight: self.unmerged_weight,
            observations: self.unmerged_weight.wrapping_add(self.merged_weight),
            total_compressions: self.total_compressions,
            memory_usage: self.redisbloom_memory_usage() as i64,
        }
    }

    /// Empties the digest (`td_reset`); the arrays keep their stale contents, which are
    /// never read.
    pub fn reset(&mut self) {
        self.min = f64::MAX;
        self.max = -self.min;
        self.merged_nodes = 0;
        self.merged_weight = 0;
        self.unmerged_nodes = 0;
        self.unmerged_weight = 0;
        self.total_compressions = 0;
    }

    fn next_node(&self) -> i32 {
        self.merged_nodes + self.unmerged_nodes
    }

    /// Adds a point (or a centroid) of weight `weight` (`td_add`).
    pub fn add(&mut self, mean: f64, weight: i64) -> Result<(), Overflow> {
        if self.next_node() >= self.cap - 1 {
            self.compress()?;
        }
        let pos = self.next_node();
        if pos >= self.cap {
            return Err(Overflow);
        }
        if !add_safe(self.unmerged_weight, weight) {
            return Err(Overflow);
        }
        let new_unmerged_weight = self.unmerged_weight.wrapping_add(weight);
        if !add_safe(new_unmerged_weight, self.merged_weight) {
            return Err(Overflow);
        }
        let new_total_weight = new_unmerged_weight.wrapping_add(self.merged_weight);
        td_overflow(new_unmerged_weight as f64, new_total_weight as f64)?;
        if mean < self.min {
            self.min = mean;
        }
        if mean > self.max {
            self.max = mean;
        }
        self.means[pos as usize] = mean;
        self.weights[pos as usize] = weight;
        self.unmerged_nodes += 1;
        self.unmerged_weight = new_unmerged_weight;
        Ok(())
    }

    /// Sorts and merges every centroid (`td_compress`); see the module docs for the rule.
    pub fn compress(&mut self) -> Result<(), Overflow> {
        if self.unmerged_nodes == 0 {
            return Ok(());
        }
        let n = self.next_node() as usize;
        sort(&mut self.means, &mut self.weights, 0, n - 1);
        let total_weight = self.merged_weight as f64 + self.unmerged_weight as f64;
        td_overflow(self.unmerged_weight as f64, total_weight)?;
        if total_weight <= 1.0 {
            return Ok(());
        }
        let denom = TWO_PI * total_weight * total_weight.ln();
        if denom == f64::INFINITY {
            return Err(Overflow);
        }
        let normalizer = self.compression / denom;
        if normalizer == f64::INFINITY {
            return Err(Overflow);
        }
        let (means, weights) = (&mut self.means, &mut self.weights);
        let mut cur = 0usize;
        let mut weight_so_far = 0.0f64;
        for i in 1..n {
            let proposed_weight = weights[cur] as f64 + weights[i] as f64;
            let z = proposed_weight * normalizer;
            let q0 = weight_so_far / total_weight;
            let q2 = (weight_so_far + proposed_weight) / total_weight;
            if z <= q0 * (1.0 - q0) && z <= q2 * (1.0 - q2) {
                weights[cur] = weights[cur].wrapping_add(weights[i]);
                let delta = means[i] - means[cur];
                let weighted_delta = (delta * weights[i] as f64) / weights[cur] as f64;
                means[cur] += weighted_delta;
            } else {
                weight_so_far += weights[cur] as f64;
                cur += 1;
                weights[cur] = weights[i];
                means[cur] = means[i];
            }
            if cur != i {
                weights[i] = 0;
                means[i] = 0.0;
            }
        }
        self.merged_nodes = cur as i32 + 1;
        self.merged_weight = c_ll(total_weight);
        self.unmerged_nodes = 0;
        self.unmerged_weight = 0;
        self.total_compressions = self.total_compressions.wrapping_add(1);
        Ok(())
    }

    /// Adds every centroid of `from` to this digest, compressing both first (`td_merge`).
    /// On overflow the centroids added so far stay.
    pub fn merge(&mut self, from: &mut TDigest) -> Result<(), Overflow> {
        self.compress()?;
        from.compress()?;
        for i in 0..from.next_node() as usize {
            self.add(from.means[i], from.weights[i])?;
        }
        Ok(())
    }

    /// The fraction of the weight at or below `val` (`td_cdf`); NaN when nothing is
    /// merged.
    pub fn cdf(&mut self, val: f64) -> f64 {
        let _ = self.compress();
        if self.merged_nodes == 0 {
            return f64::NAN;
        }
        if val < self.min {
            return 0.0;
        }
        if val > self.max {
            return 1.0;
        }
        if self.merged_nodes == 1 {
            let width = self.max - self.min;
            return if val - self.min <= width {
                0.5
            } else {
                (val - self.min) / width
            };
        }
        let n = self.merged_nodes as usize;
        // Cut to the merged centroids, so that the walk below indexes without checks.
        let (means, weights) = (&self.means[..n], &self.weights[..n]);
        let merged_weight = self.merged_weight as f64;
        let left_mean = means[0];
        let left_weight = weights[0] as f64;
        if val < left_mean {
            let width = left_mean - self.min;
            if width > 0.0 {
                if val == self.min {
                    return 0.5 / merged_weight;
                }
                return (1.0 + (val - self.min) / width * (left_weight / 2.0 - 1.0))
                    / merged_weight;
            }
            return 0.0;
        }
        let right_mean = means[n - 1];
        let right_weight = weights[n - 1] as f64;
        if val > right_mean {
            let width = self.max - right_mean;
            if width > 0.0 {
                if val == self.max {
                    return 1.0 - 0.5 / merged_weight;
                }
                let dq =
                    (1.0 + (self.max - val) / width * (right_weight / 2.0 - 1.0)) / merged_weight;
                return 1.0 - dq;
            }
            return 1.0;
        }
        let mut weight_so_far = 0.0f64;
        let mut it = 0usize;
        while it + 1 < n {
            if means[it] == val {
                // One or more centroids exactly at `val`, taken as one.
                let mut dw = 0.0f64;
                while it < n && means[it] == val {
                    dw += weights[it] as f64;
                    it += 1;
                }
                return (weight_so_far + dw / 2.0) / self.merged_weight as f64;
            } else if means[it] <= val && val < means[it + 1] {
                let node_weight = weights[it] as f64;
                let node_weight_next = weights[it + 1] as f64;
                let node_mean = means[it];
                let node_mean_next = means[it + 1];
                if node_mean_next - node_mean > 0.0 {
                    // A centroid of weight 1 is a point: not interpolated across.
                    let mut left_excluded = 0.0;
                    let mut right_excluded = 0.0;
                    if node_weight == 1.0 {
                        if node_weight_next == 1.0 {
                            return (weight_so_far + 1.0) / merged_weight;
                        }
                        left_excluded = 0.5;
                    } else if node_weight_next == 1.0 {
                        right_excluded = 0.5;
                    }
                    let dw = (node_weight + node_weight_next) / 2.0;
                    let dw_no_singleton = dw - left_excluded - right_excluded;
                    let base = weight_so_far + node_weight / 2.0 + left_excluded;
                    return (base
                        + dw_no_singleton * (val - node_mean) / (node_mean_next - node_mean))
                        / merged_weight;
                }
                let dw = (node_weight + node_weight_next) / 2.0;
                return (weight_so_far + dw) / merged_weight;
            } else {
                weight_so_far += weights[it] as f64;
            }
            it += 1;
        }
        1.0 - 0.5 / merged_weight
    }

    /// The value at weight `index` (`td_internal_iterate_centroids_to_index`), walking the
    /// centroids from `state` (weight so far, centroid position), which a batch of
    /// increasing quantiles carries from one to the next.
    fn value_at(&self, index: f64, left_weight: f64, n: usize, state: &mut (f64, usize)) -> f64 {
        // Cut to the merged centroids, so that the walk below indexes without checks.
        let (means, weights) = (&self.means[..n], &self.weights[..n]);
        if left_weight > 1.0 && index < left_weight / 2.0 {
            // One point sits at the minimum: interpolate with the rest of the first half.
            return self.min + (index - 1.0) / (left_weight / 2.0 - 1.0) * (means[0] - self.min);
        }
        if index > self.merged_weight.wrapping_sub(1) as f64 {
            return self.max;
        }
        let right_weight = weights[n - 1] as f64;
        let right_mean = means[n - 1];
        let merged_weight = self.merged_weight as f64;
        if right_weight > 1.0 && merged_weight - index <= right_weight / 2.0 {
            return self.max
                - (merged_weight - index - 1.0) / (right_weight / 2.0 - 1.0)
                    * (self.max - right_mean);
        }
        let (weight_so_far, pos) = state;
        while *pos + 1 < n {
            let i = *pos;
            let node_weight = weights[i] as f64;
            let node_weight_next = weights[i + 1] as f64;
            let node_mean = means[i];
            let node_mean_next = means[i + 1];
            let dw = (node_weight + node_weight_next) / 2.0;
            if *weight_so_far + dw > index {
                // Centroids i and i + 1 bracket the index.
                let mut left_unit = 0.0;
                if node_weight == 1.0 {
                    if index - *weight_so_far < 0.5 {
                        return node_mean;
                    }
                    left_unit = 0.5;
                }
                let mut right_unit = 0.0;
                if node_weight_next == 1.0 {
                    if *weight_so_far + dw - index <= 0.5 {
                        return node_mean_next;
                    }
                    right_unit = 0.5;
                }
                let z1 = index - *weight_so_far - left_unit;
                let z2 = *weight_so_far + dw - index - right_unit;
                return weighted_average(node_mean, z2, node_mean_next, z1);
            }
            *weight_so_far += dw;
            *pos += 1;
        }
        // Past the last centroid's middle: interpolate out to the maximum.
        let z1 = index - merged_weight - right_weight / 2.0;
        let z2 = right_weight / 2.0 - z1;
        weighted_average(right_mean, z1, self.max, z2)
    }

    /// The value below which a fraction `q` of the weight lies (`td_quantile`, used by
    /// `TDIGEST.BYRANK`): NaN outside `[0, 1]` or when nothing is merged.
    pub fn quantile(&mut self, q: f64) -> f64 {
        let _ = self.compress();
        if outside_unit(q) || self.merged_nodes == 0 {
            return f64::NAN;
        }
        if self.merged_nodes == 1 {
            return self.means[0];
        }
        let index = q * self.merged_weight as f64;
        if index < 1.0 {
            return self.min;
        }
        let left_weight = self.weights[0] as f64;
        let mut state = (left_weight / 2.0, 0usize);
        self.value_at(index, left_weight, self.merged_nodes as usize, &mut state)
    }

    /// [`quantile`](Self::quantile) of each of an increasing run of fractions in `[0, 1]`,
    /// walking the centroids once (`td_quantiles`, used by `TDIGEST.QUANTILE`). Unlike the
    /// single version, an index below 1 is not taken as the minimum.
    pub fn quantiles(&mut self, qs: &[f64], out: &mut [f64]) {
        let _ = self.compress();
        let n = self.merged_nodes as usize;
        if n == 0 {
            out.iter_mut().for_each(|v| *v = f64::NAN);
            return;
        }
        if n == 1 {
            for (v, q) in out.iter_mut().zip(qs) {
                *v = if outside_unit(*q) {
                    f64::NAN
                } else {
                    self.means[0]
                };
            }
            return;
        }
        let left_weight = self.weights[0] as f64;
        let mut state = (left_weight / 2.0, 0usize);
        for (v, q) in out.iter_mut().zip(qs) {
            let index = q * self.merged_weight as f64;
            *v = self.value_at(index, left_weight, n, &mut state);
        }
    }

    /// The mean of the weight between the fractions `low` and `high` (`td_trimmed_mean`):
    /// NaN when empty or when a cut is outside `[0, 1]`.
    pub fn trimmed_mean(&mut self, low: f64, high: f64) -> f64 {
        let _ = self.compress();
        if self.merged_nodes == 0 || outside_unit(low) || outside_unit(high) {
            return f64::NAN;
        }
        if self.merged_nodes == 1 {
            return self.means[0];
        }
        let leftmost = (self.merged_weight as f64 * low).floor();
        let rightmost = (self.merged_weight as f64 * high).ceil();
        let mut count_done = 0.0f64;
        let mut trimmed_sum = 0.0f64;
        let mut trimmed_count = 0.0f64;
        let n = self.merged_nodes as usize;
        // Cut to the merged centroids, so that the walk below indexes without checks.
        let (means, weights) = (&self.means[..n], &self.weights[..n]);
        for i in 0..n {
            let weight = weights[i] as f64;
            let mut count_add = weight;
            count_add -= c_min(c_max(0.0, leftmost - count_done), count_add);
            count_add = c_min(c_max(0.0, rightmost - count_done), count_add);
            count_done += weight;
            trimmed_sum += means[i] * count_add;
            trimmed_count += count_add;
            if count_done >= rightmost {
                break;
            }
        }
        trimmed_sum / trimmed_count
    }

    /// The RDB record, in RedisBloom 2.4's order, after compressing (as it does): doubles
    /// compression, min, max; signed cap, merged nodes, unmerged nodes, total compressions;
    /// doubles merged weight, unmerged weight; then the merged centroids' means and their
    /// weights (as doubles). Unmerged centroids (a digest of total weight ≤ 1, or one whose
    /// merge overflowed) are not written, only counted.
    pub fn save(&mut self, out: &mut impl Sink) {
        let _ = self.compress();
        out.double(self.compression);
        out.double(self.min);
        out.double(self.max);
        for signed in [
            self.cap as i64,
            self.merged_nodes as i64,
            self.unmerged_nodes as i64,
            self.total_compressions,
        ] {
            out.unsigned(signed as u64);
        }
        out.double(self.merged_weight as f64);
        out.double(self.unmerged_weight as f64);
        let merged = self.merged_nodes as usize;
        for &mean in &self.means[..merged] {
            out.double(mean);
        }
        for &weight in &self.weights[..merged] {
            out.double(weight as f64);
        }
    }

    /// Reads an RDB record ([`save`](Self::save)'s layout). Every field is checked against
    /// what RedisBloom 2.4 can write, the size against `limit` before anything is
    /// allocated; `None` at the first short read or inconsistency:
    ///
    /// * compression: an integer from 1 to [`MAX_COMPRESSION`]; cap: exactly `6δ + 10`;
    /// * min and max: not NaN (centroid means may be anything: RedisBloom's merge can
    ///   overflow them to infinities and NaN);
    /// * merged and unmerged nodes: non-negative, together at most the capacity;
    /// * total compressions: non-negative;
    /// * weights (total and per centroid): integers from 0 to 2⁶³ − 1, and the centroids'
    ///   together too.
    ///
    /// Unmerged nodes get mean 0 and weight 0, as RedisBloom's zeroed arrays give them.
    pub fn load(src: &mut impl Source, encver: i32, limit: impl Limit) -> Option<Self> {
        if encver != ENCODING_VERSION {
            return None;
        }
        let compression = src.double()?;
        if !(compression >= 1.0
            && compression <= MAX_COMPRESSION as f64
            && compression.fract() == 0.0)
        {
            return None;
        }
        let min = src.double()?;
        let max = src.double()?;
        let cap = src.unsigned()? as i64;
        let merged_nodes = src.unsigned()? as i64;
        let unmerged_nodes = src.unsigned()? as i64;
        let total_compressions = src.unsigned()? as i64;
        let merged_weight = weight(src.double()?)?;
        let unmerged_weight = weight(src.double()?)?;
        if min.is_nan()
            || max.is_nan()
            || cap as u64 != c_capacity(compression)
            || !(0..=cap).contains(&merged_nodes)
            || !(0..=cap - merged_nodes).contains(&unmerged_nodes)
            || total_compressions < 0
        {
            return None;
        }
        let mut td = Self::with_compression(compression, limit).ok()?;
        td.min = min;
        td.max = max;
        td.merged_nodes = merged_nodes as i32;
        td.unmerged_nodes = unmerged_nodes as i32;
        td.total_compressions = total_compressions;
        td.merged_weight = merged_weight;
        td.unmerged_weight = unmerged_weight;
        let merged = merged_nodes as usize;
        for mean in &mut td.means[..merged] {
            *mean = src.double()?;
        }
        let mut sum = 0i64;
        for w in &mut td.weights[..merged] {
            *w = weight(src.double()?)?;
            sum = sum.checked_add(*w)?;
        }
        Some(td)
    }
}

/// A weight as RedisBloom saves it (a double holding a `long long`): an integer from 0 to
/// 2⁶³ − 1, else `None`.
fn weight(w: f64) -> Option<i64> {
    ((0.0..9_223_372_036_854_775_808.0).contains(&w) && w.fract() == 0.0).then_some(w as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rdb::{Field, Fields};

    fn digest(compression: i64) -> TDigest {
        TDigest::new(compression, u64::MAX).unwrap()
    }

    fn fields(td: &mut TDigest) -> Vec<Field> {
        let mut out = Fields::default();
        td.save(&mut out);
        out.fields
    }

    /// A direct transcription of t-digest-c's recursive sort, to compare with [`sort`].
    fn sort_recursive(means: &mut [f64], weights: &mut [i64], start: usize, end: usize) {
        if start < end {
            if end - start == 1 {
                if means[start] > means[end] {
                    means.swap(start, end);
                    weights.swap(start, end);
                }
                return;
            }
            let p = partition(means, weights, start, end, (end + start) / 2);
            if p > start {
                sort_recursive(means, weights, start, p - 1);
            }
            sort_recursive(means, weights, p + 1, end);
        }
    }

    #[test]
    fn the_sort_permutes_as_the_recursive_c_sort_does() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for len in [1usize, 2, 3, 5, 17, 100, 611] {
            for distinct in [1u64, 3, 1000] {
                let mut means = Vec::new();
                for _ in 0..len {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    means.push((state % distinct) as f64);
                }
                let weights: Vec<i64> = (0..len as i64).collect();
                let (mut m1, mut w1) = (means.clone(), weights.clone());
                let (mut m2, mut w2) = (means, weights);
                sort(&mut m1, &mut w1, 0, len - 1);
                sort_recursive(&mut m2, &mut w2, 0, len - 1);
                assert_eq!(w1, w2, "len {len}, {distinct} distinct");
                assert!(m1.windows(2).all(|w| w[0] <= w[1]));
            }
        }
        // All equal: the case that recursed as deep as the array in C (and is quadratic).
        let n = 5_000;
        let (mut m, mut w) = (vec![1.0; n], (0..n as i64).collect::<Vec<_>>());
        sort(&mut m, &mut w, 0, n - 1);
    }

    #[test]
    fn capacity_and_sizes_are_redisbloom_s() {
        let td = digest(100);
        assert_eq!(td.info().capacity, 610);
        assert_eq!(td.redisbloom_memory_usage(), 9768);
        assert_eq!(digest(1).info().capacity, 16);
        assert_eq!(
            TDigest::new(MAX_COMPRESSION, 0u64).unwrap_err(),
            CreateError::TooLarge(Refusal::PerKey {
                needed: TDigest::footprint(6 * MAX_COMPRESSION as u64 + 10),
                limit: 0
            })
        );
        assert_eq!(
            TDigest::new(MAX_COMPRESSION + 1, u64::MAX).unwrap_err(),
            CreateError::CompressionTooLarge
        );
        assert_eq!(
            TDigest::new(i64::MAX, u64::MAX).unwrap_err(),
            CreateError::Unallocatable
        );
        assert!(TDigest::new(100, 9000u64).is_err());
    }

    #[test]
    fn one_point_stays_unmerged_answers_nan_and_reloads_as_a_zero_centroid() {
        let mut td = digest(100);
        td.add(5.0, 1).unwrap();
        assert!(td.quantile(0.5).is_nan());
        assert!(td.cdf(5.0).is_nan());
        let info = td.info();
        assert_eq!((info.merged_nodes, info.unmerged_nodes), (0, 1));
        let saved = fields(&mut td);
        assert_eq!(saved.len(), 9);
        let mut loaded = TDigest::load(&mut Fields::new(saved), 0, u64::MAX).unwrap();
        assert_eq!((loaded.min(), loaded.max(), loaded.size()), (5.0, 5.0, 1));
        loaded.add(7.0, 1).unwrap();
        // The zero centroid takes part: 0 and 7 are the two centroids now.
        assert_eq!(loaded.quantile(0.0), 5.0);
        let mut out = [0.0; 3];
        loaded.quantiles(&[0.0, 0.5, 1.0], &mut out);
        assert_eq!(out, [7.0, 7.0, 7.0]);
        assert_eq!(loaded.info().merged_nodes, 2);
    }

    #[test]
    fn small_digests_answer_as_computed_by_hand() {
        let mut td = digest(100);
        for v in [1.0, 2.0, 3.0, 4.0] {
            td.add(v, 1).unwrap();
        }
        // Four singletons: nothing merges (q0 = 0 at the first step).
        assert_eq!(td.cdf(2.5), 0.5);
        assert_eq!(td.cdf(1.0), 0.125);
        assert_eq!(td.cdf(4.0), 0.875);
        assert_eq!(td.cdf(0.0), 0.0);
        assert_eq!(td.quantile(0.5), 3.0);
        assert_eq!(td.trimmed_mean(0.25, 0.75), 2.5);
        assert_eq!(td.info().total_compressions, 1);
        // Half-round-down ranks.
        assert_eq!(half_round_down(2.5), 2.0);
        assert_eq!(half_round_down(2.51), 3.0);
        assert_eq!(half_round_down(-2.5), -2.0);
        assert!(half_round_down(f64::NAN).is_nan());
        assert_eq!(c_ll(f64::NAN), i64::MIN);
        assert_eq!(c_ll(1e19), i64::MIN);
        assert_eq!(c_ll(-2.9), -2);
    }

    #[test]
    fn adds_merge_when_the_buffer_fills_and_weights_overflow_as_errors() {
        let mut td = digest(1); // capacity 16
        for i in 0..15 {
            td.add(i as f64, 1).unwrap();
        }
        assert_eq!(td.info().unmerged_nodes, 15);
        td.add(15.0, 1).unwrap();
        let info = td.info();
        assert_eq!(info.total_compressions, 1);
        assert_eq!(info.merged_weight + info.unmerged_weight, 16);
        let mut big = digest(1);
        big.add(1.0, i64::MAX).unwrap();
        assert_eq!(big.add(1.0, 1), Err(Overflow));
        let mut into = digest(1);
        into.add(0.0, 1).unwrap();
        assert_eq!(into.merge(&mut big), Err(Overflow));
    }

    #[test]
    fn save_and_load_keep_every_field() {
        let mut td = digest(20);
        let mut x = 0.5f64;
        for _ in 0..1000 {
            x = (x * 3.9 * (1.0 - x)).abs();
            td.add(x * 1000.0 - 300.0, 1).unwrap();
        }
        let saved = fields(&mut td);
        let mut loaded = TDigest::load(&mut Fields::new(saved.clone()), 0, u64::MAX).unwrap();
        assert_eq!(fields(&mut loaded), saved);
        assert_eq!(loaded.info(), td.info());
        for q in [0.0, 0.01, 0.5, 0.99, 1.0] {
            assert_eq!(loaded.quantile(q).to_bits(), td.quantile(q).to_bits());
        }
    }

    #[test]
    fn forged_records_are_refused() {
        let mut td = digest(10);
        for v in 0..50 {
            td.add(v as f64, 1).unwrap();
        }
        let good = fields(&mut td);
        let merged = match good[4] {
            Field::Unsigned(n) => n as usize,
            _ => unreachable!(),
        };
        let with = |i: usize, f: Field| {
            let mut v = good.clone();
            v[i] = f;
            TDigest::load(&mut Fields::new(v), 0, u64::MAX)
        };
        assert!(TDigest::load(&mut Fields::new(good.clone()), 0, u64::MAX).is_some());
        assert!(TDigest::load(&mut Fields::new(good.clone()), 1, u64::MAX).is_none());
        assert!(TDigest::load(&mut Fields::new(good.clone()), 0, 100u64).is_none());
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 10.5, 4294967295.0] {
            assert!(with(0, Field::Double(bad)).is_none(), "compression {bad}");
        }
        assert!(with(1, Field::Double(f64::NAN)).is_none());
        assert!(with(3, Field::Unsigned(71)).is_none());
        assert!(with(3, Field::Unsigned(u64::MAX)).is_none());
        assert!(with(4, Field::Unsigned(71)).is_none());
        assert!(with(4, Field::Unsigned(u64::MAX)).is_none());
        assert!(with(5, Field::Unsigned(70)).is_none());
        assert!(with(6, Field::Unsigned(u64::MAX)).is_none());
        for bad in [-1.0, f64::NAN, 0.5, 1e19] {
            assert!(with(7, Field::Double(bad)).is_none(), "merged weight {bad}");
            let last = 9 + 2 * merged - 1;
            assert!(with(last, Field::Double(bad)).is_none(), "weight {bad}");
        }
        // Means may be anything RedisBloom's arithmetic gives.
        assert!(with(9, Field::Double(f64::NAN)).is_some());
        // Centroid weights whose sum overflows.
        let mut v = good.clone();
        v[9 + merged] = Field::Double(9.2e18);
        v[9 + merged + 1] = Field::Double(9.2e18);
        assert!(TDigest::load(&mut Fields::new(v), 0, u64::MAX).is_none());
        for len in 0..good.len() {
            let v = good[..len].to_vec();
            assert!(TDigest::load(&mut Fields::new(v), 0, u64::MAX).is_none());
        }
    }
}
