//! RedisBloom 2.4's count-min sketch (`CMS.*`, module type `CMSk-TYPE`), bit for bit: its
//! hashing, its sizing from an error and a probability, its saturating counters, its merge
//! rule and its RDB record.
//!
//! # The sketch (Cormode & Muthukrishnan, 2005)
//!
//! G. Cormode and S. Muthukrishnan, "An improved data stream summary: the count-min sketch
//! and its applications", Journal of Algorithms 55(1), 2005. A sketch is `depth` rows of
//! `width` counters; row `i` has its own hash `hᵢ`. Adding `c` to item `x` adds `c` to
//! `row[i][hᵢ(x)]` in every row; the estimate of `x` is the smallest of its `depth` counters.
//!
//! Every counter of `x` holds `x`'s own count plus the counts of the other items hashed to
//! the same place, so (with non-negative increments, as here) the estimate never falls
//! short: `â(x) ≥ a(x)`. The excess in one row is, on average over the hash, at most
//! `N / width`, where `N` is the sum of all increments (`CMS.INFO`'s `count`). By Markov's
//! inequality one row's excess passes `ε·N` with probability at most `1 / (width·ε)`, and
//! the estimate errs by more than `ε·N` only when every row does, with probability at most
//! `(1 / (width·ε))^depth`. The paper takes `width = ⌈e/ε⌉` and `depth = ⌈ln 1/δ⌉`, so that
//! `â(x) ≤ a(x) + ε·N` with probability at least `1 − δ`.
//!
//! RedisBloom's `CMS.INITBYPROB key ε δ` takes `width = ⌈2/ε⌉` (each row errs by more than
//! `ε·N` with probability at most ½) and `depth = ⌈log₁₀ δ / log₁₀ ½⌉ = ⌈log₂ 1/δ⌉`, which
//! gives the same guarantee, `â(x) ≤ a(x) + ε·N` with probability at least `1 − δ`, with
//! wider rows and more of them than the paper's choice. [`dims_from_prob`] computes it as
//! RedisBloom does (the depth in single precision: `log10f`).
//!
//! # As RedisBloom 2.4 keeps it
//!
//! * Row `i` hashes with 32-bit MurmurHash2 seeded with `i`: the counter of `x` in row `i`
//!   is `i·width + MurmurHash2(x, i) mod width`.
//! * Counters are 32 bits; an increment that would pass `2³² − 1` leaves the counter at
//!   `2³² − 1` (saturates), and `CMS.INCRBY` answers "CMS: INCRBY overflow" for an item all
//!   of whose counters are saturated. The total `count` is 64 bits and wraps, as in
//!   RedisBloom (it would take increments summing past 1.8·10¹⁹).
//! * `CMS.MERGE dest n src… [WEIGHTS w…]` sets every counter of `dest` to `Σ wₖ·srcₖ` and its
//!   count to `Σ wₖ·countₖ`; weights may be negative, but a counter outside `0..=2³² − 1`,
//!   an intermediate product or sum outside 64 bits, or a negative count refuses the whole
//!   merge before anything changes ("CMS: MERGE overflow"). `dest` may be one of the
//!   sources (every counter is computed from the sources' same counter before it is
//!   written).
//!
//! # RDB record (encoding version 0)
//!
//! `width` (unsigned), `depth` (unsigned), `count` (unsigned), then one string buffer of
//! the `width·depth` counters, row after row, each a little-endian `u32` (RedisBloom writes
//! its `uint32_t` array as it lies in memory on x86-64). A load refuses a zero width or
//! depth, a product that overflows, a buffer of any other length, and a sketch the memory
//! limit refuses (checked before the buffer is read).

use crate::config::{Limit, Refusal};
use crate::murmur::{murmur2_seeds, row_seeds, LANES};
use crate::rdb::{Sink, Source};

/// The RDB encoding version of `CMSk-TYPE` (RedisBloom's `CMS_ENC_VER`).
pub const ENCODING_VERSION: i32 = 0;

/// The struct's bytes, counted by [`Sketch::memory_bytes`] with the counters.
const STRUCT_BYTES: u64 = std::mem::size_of::<Sketch>() as u64;

/// The bytes of one counter.
const CELL_BYTES: u64 = 4;

/// Why a sketch was not made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CreateError {
    /// Width or depth below 1, or `width·depth` past `i64::MAX`: "CMS: invalid init
    /// arguments".
    Invalid,
    /// `width·depth` counters do not fit in the address space: "CMS: Insufficient memory to
    /// create the key".
    Unaddressable,
    /// The memory limits refused it.
    TooLarge(Refusal),
}

/// The bytes of `width·depth` counters, if they are addressable.
fn cells_bytes(width: u64, depth: u64) -> Option<u64> {
    width
        .checked_mul(depth)?
        .checked_mul(CELL_BYTES)
        .filter(|&b| b <= isize::MAX as u64)
}

/// `CMS.INITBYPROB`'s dimensions for an over-estimation `error` (of the total count) and a
/// probability `prob` of passing it, both in (0, 1), as RedisBloom computes them:
/// `width = ⌈2/error⌉` in double precision, `depth = ⌈log10f(prob) / log10f(0.5)⌉` in single
/// precision. The width is `None` when it does not fit in an `i64` (RedisBloom's conversion
/// then gives a width it refuses as "CMS: invalid init arguments").
pub fn dims_from_prob(error: f64, prob: f64) -> (Option<u64>, u64) {
    let width = (2.0 / error).ceil();
    let width = (width < i64::MAX as f64).then_some(width as u64);
    // black_box: the half's logarithm is computed at run time by the C library's log10f,
    // as RedisBloom's is, not folded at compile time.
    let half = std::hint::black_box(0.5f32).log10();
    let depth = ((prob as f32).log10() / half).ceil();
    (width, depth as u64)
}

/// One source of a merge: the destination itself or another sketch.
#[derive(Clone, Copy, Debug)]
pub enum MergeSource<'a> {
    /// The sketch being merged into (its counters before the merge).
    Dest,
    /// Another sketch.
    Other(&'a Sketch),
}

/// A count-min sketch as RedisBloom 2.4 keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sketch {
    width: u64,
    depth: u64,
    count: u64,
    /// `width·depth` little-endian `u32` counters, row after row: RedisBloom's array as it
    /// lies in memory, so that it is saved and loaded as it is.
    cells: Vec<u8>,
}

impl Sketch {
    /// A zeroed sketch of `depth` rows of `width` counters, if the dimensions are valid
    /// (`CMS.INITBYDIM`'s rules) and the limit admits it.
    pub fn new(width: u64, depth: u64, limit: impl Limit) -> Result<Self, CreateError> {
        if width < 1 || depth < 1 || width > i64::MAX as u64 / depth {
            return Err(CreateError::Invalid);
        }
        let bytes = cells_bytes(width, depth).ok_or(CreateError::Unaddressable)?;
        limit
            .check(0, STRUCT_BYTES + bytes)
            .map_err(CreateError::TooLarge)?;
        Ok(Self {
            width,
            depth,
            count: 0,
            cells: vec![0; bytes as usize],
        })
    }

    /// Counters per row.
    pub fn width(&self) -> u64 {
        self.width
    }

    /// Rows.
    pub fn depth(&self) -> u64 {
        self.depth
    }

    /// The sum of all increments (`CMS.INFO`'s `count`), wrapping at 2⁶⁴ as RedisBloom's.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The bytes `MEMORY USAGE` and the memory limits count: the struct and the counters.
    pub fn memory_bytes(&self) -> u64 {
        STRUCT_BYTES + self.cells.len() as u64
    }

    #[inline]
    fn cell(&self, at: usize) -> u32 {
        let b: [u8; 4] = self.cells[at * 4..at * 4 + 4].try_into().expect("4 bytes");
        u32::from_le_bytes(b)
    }

    #[inline]
    fn set_cell(&mut self, at: usize, value: u32) {
        self.cells[at * 4..at * 4 + 4].copy_from_slice(&value.to_le_bytes());
    }

    /// Calls `f` with the counter of `item` in each row, row by row: in `row`,
    /// `row·width + MurmurHash2(item, row) mod width` (RedisBloom passes the row as the
    /// hash's 32-bit seed). The rows' hashes are computed eight at a time, in one pass over
    /// the item each ([`murmur2_seeds`]).
    #[inline(always)]
    fn for_each_index(item: &[u8], width: u64, depth: u64, mut f: impl FnMut(usize)) {
        // Rows 0 to 7 (every sketch of depth ≤ 8: δ ≥ 1/256) from one pass with the seeds
        // fixed at build time.
        const FIRST_ROWS: [u32; LANES] = [0, 1, 2, 3, 4, 5, 6, 7];
        let hashes = murmur2_seeds(item, &FIRST_ROWS);
        for (row, &h) in (0..depth).zip(&hashes) {
            f((h as u64 % width + row * width) as usize);
        }
        let mut row = LANES as u64;
        while row < depth {
            let hashes = murmur2_seeds(item, &row_seeds(row as u32));
            for (row, &h) in (row..depth).zip(&hashes) {
                f((h as u64 % width + row * width) as usize);
            }
            row = row.saturating_add(LANES as u64);
        }
    }

    /// Adds `value` to every counter of `item` (each saturating at `u32::MAX`) and to the
    /// count; returns the item's new estimate, `u32::MAX` when every counter saturated.
    pub fn incr_by(&mut self, item: &[u8], value: u64) -> u32 {
        let mut min = u32::MAX;
        let cells = &mut self.cells;
        Self::for_each_index(item, self.width, self.depth, |at| {
            // One bounds check, one load and one store per counter.
            let cell: &mut [u8; 4] = (&mut cells[at * 4..at * 4 + 4])
                .try_into()
                .expect("4 bytes");
            let sum = u64::from(u32::from_le_bytes(*cell)).saturating_add(value);
            let new = sum.min(u32::MAX as u64) as u32;
            *cell = new.to_le_bytes();
            min = min.min(new);
        });
        self.count = self.count.wrapping_add(value);
        min
    }

    /// The estimate of `item`: the smallest of its counters.
    pub fn query(&self, item: &[u8]) -> u32 {
        let mut min = u32::MAX;
        Self::for_each_index(item, self.width, self.depth, |at| {
            min = min.min(self.cell(at));
        });
        min
    }

    /// `CMS.MERGE`: every counter becomes `Σ wₖ·sourceₖ`, the count `Σ wₖ·countₖ`. The
    /// sources must have this sketch's dimensions (the command checks them first). Refused,
    /// with nothing changed, when a counter would leave `0..=u32::MAX`, a product or sum leave
    /// `i64`, or the count be negative (RedisBloom's overflow check).
    pub fn merge(&mut self, sources: &[(MergeSource<'_>, i64)]) -> Result<(), MergeOverflow> {
        let cells = self.cells.len() / 4;
        let value = |this: &Self, source: &MergeSource<'_>, at: usize| match source {
            MergeSource::Dest => this.cell(at),
            MergeSource::Other(other) => other.cell(at),
        };
        for (source, _) in sources {
            if let MergeSource::Other(other) = source {
                if (other.width, other.depth) != (self.width, self.depth) {
                    return Err(MergeOverflow);
                }
            }
        }
        // First pass: every counter and the count are checked before anything changes.
        for at in 0..cells {
            let mut sum = 0i64;
            for (source, weight) in sources {
                sum = (value(self, source, at) as i64)
                    .checked_mul(*weight)
                    .and_then(|p| sum.checked_add(p))
                    .ok_or(MergeOverflow)?;
            }
            if !(0..=u32::MAX as i64).contains(&sum) {
                return Err(MergeOverflow);
            }
        }
        let mut count = 0i64;
        for (source, weight) in sources {
            let c = match source {
                MergeSource::Dest => self.count,
                MergeSource::Other(other) => other.count,
            };
            let product = i64::try_from(c as i128 * *weight as i128).map_err(|_| MergeOverflow)?;
            count = count.checked_add(product).ok_or(MergeOverflow)?;
        }
        if count < 0 {
            return Err(MergeOverflow);
        }
        // Second pass: each counter from the sources' same counter, read before it is
        // written (the destination may be a source).
        for at in 0..cells {
            let sum: i64 = sources
                .iter()
                .map(|(source, weight)| value(self, source, at) as i64 * weight)
                .sum();
            self.set_cell(at, sum as u32);
        }
        self.count = count as u64;
        Ok(())
    }

    /// The RDB record (see the module docs).
    pub fn save(&self, out: &mut impl Sink) {
        out.unsigned(self.width);
        out.unsigned(self.depth);
        out.unsigned(self.count);
        out.buffer(&self.cells);
    }

    /// Reads an RDB record; `None` for a version it does not know, a short or corrupt
    /// record, inconsistent sizes, or a sketch the limit refuses.
    pub fn load(src: &mut impl Source, encver: i32, limit: impl Limit) -> Option<Self> {
        if encver != ENCODING_VERSION {
            return None;
        }
        let width = src.unsigned()?;
        let depth = src.unsigned()?;
        let count = src.unsigned()?;
        if width == 0 || depth == 0 {
            return None;
        }
        let bytes = cells_bytes(width, depth)?;
        limit.check(0, STRUCT_BYTES + bytes).ok()?;
        let cells = src.buffer()?;
        if cells.len() as u64 != bytes {
            return None;
        }
        Some(Self {
            width,
            depth,
            count,
            cells,
        })
    }
}

/// A merge refused: "CMS: MERGE overflow".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MergeOverflow;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rdb::{Field, Fields};
    use bloomkit::hash::murmur2;

    const NO_LIMIT: u64 = u64::MAX;

    #[test]
    fn counters_are_placed_by_murmurhash2_seeded_with_the_row() {
        let mut s = Sketch::new(10, 3, NO_LIMIT).unwrap();
        s.incr_by(b"a", 5);
        for row in 0..3u64 {
            let at = (murmur2(b"a", row as u32) as u64 % 10 + row * 10) as usize;
            assert_eq!(s.cell(at), 5);
        }
        assert_eq!(s.cells.iter().map(|&b| b as u64).sum::<u64>(), 15);
        assert_eq!(s.query(b"a"), 5);
        assert_eq!(s.count(), 5);
    }

    /// Every depth from 1 to 20: the first eight rows (hashed in one pass with fixed
    /// seeds) and the rows after them (eight more a pass) each hold the item's counter at
    /// its own row's hash, and nothing else is touched.
    #[test]
    fn every_row_of_a_deep_sketch_is_placed_by_its_own_seed() {
        for depth in 1..=20u64 {
            for item in [&b""[..], b"a", b"an item of some length"] {
                let mut s = Sketch::new(13, depth, NO_LIMIT).unwrap();
                assert_eq!(s.incr_by(item, 3), 3);
                let mut expected = vec![0u32; (13 * depth) as usize];
                for row in 0..depth {
                    expected[(murmur2(item, row as u32) as u64 % 13 + row * 13) as usize] = 3;
                }
                let cells: Vec<u32> = (0..expected.len()).map(|at| s.cell(at)).collect();
                assert_eq!(cells, expected, "depth {depth}");
                assert_eq!(s.query(item), 3, "depth {depth}");
            }
        }
    }

    #[test]
    fn estimates_never_fall_short_and_stay_within_the_bound_mostly() {
        // ε = 0.01, δ = 0.01: width 200, depth 7.
        let (w, d) = dims_from_prob(0.01, 0.01);
        assert_eq!((w, d), (Some(200), 7));
        let mut s = Sketch::new(w.unwrap(), d, NO_LIMIT).unwrap();
        let mut truth = std::collections::HashMap::new();
        for i in 0u64..20_000 {
            let item = format!("i{}", (i * 2_654_435_761) % 3_000);
            let c = 1 + i % 3;
            s.incr_by(item.as_bytes(), c);
            *truth.entry(item).or_insert(0u64) += c;
        }
        let n = s.count() as f64;
        let mut over = 0;
        for (item, &a) in &truth {
            let est = s.query(item.as_bytes()) as u64;
            assert!(est >= a, "{item}: {est} < {a}");
            if est as f64 > a as f64 + 0.01 * n {
                over += 1;
            }
        }
        // At most δ of the items may pass ε·N; allow slack for one run.
        assert!(over <= truth.len() / 50, "{over} of {}", truth.len());
    }

    #[test]
    fn counters_saturate_and_the_count_wraps() {
        let mut s = Sketch::new(4, 2, NO_LIMIT).unwrap();
        assert_eq!(s.incr_by(b"x", u32::MAX as u64 - 1), u32::MAX - 1);
        assert_eq!(s.incr_by(b"x", 5), u32::MAX);
        assert_eq!(s.incr_by(b"y", 1 << 40), u32::MAX);
        assert_eq!(s.query(b"x"), u32::MAX);
        s.count = u64::MAX;
        s.incr_by(b"z", 2);
        assert_eq!(s.count(), 1);
    }

    #[test]
    fn sizes_are_checked_before_allocating() {
        assert_eq!(Sketch::new(0, 1, NO_LIMIT), Err(CreateError::Invalid));
        assert_eq!(
            Sketch::new(u32::MAX as u64, u32::MAX as u64, NO_LIMIT),
            Err(CreateError::Invalid)
        );
        assert_eq!(
            Sketch::new(1 << 62, 1, NO_LIMIT),
            Err(CreateError::Unaddressable)
        );
        assert_eq!(
            Sketch::new(1 << 30, 4, 1u64 << 32),
            Err(CreateError::TooLarge(Refusal::PerKey {
                needed: STRUCT_BYTES + (1 << 34),
                limit: 1 << 32
            }))
        );
        let bytes = STRUCT_BYTES + 2000;
        assert_eq!(Sketch::new(100, 5, bytes).unwrap().memory_bytes(), bytes);
        assert!(Sketch::new(100, 5, bytes - 1).is_err());
    }

    #[test]
    fn dims_from_prob_is_redisblooms_arithmetic() {
        assert_eq!(dims_from_prob(0.001, 0.01), (Some(2000), 7));
        assert_eq!(dims_from_prob(0.5, 0.5), (Some(4), 1));
        assert_eq!(dims_from_prob(0.1, 0.999), (Some(20), 1));
        assert_eq!(dims_from_prob(1e-300, 0.5).0, None);
        // Probabilities just below a power of ½: in single precision (RedisBloom's log10f)
        // they round to it; in double precision the depth would be one more.
        assert_eq!(dims_from_prob(0.1, 0.124999999).1, 3);
        assert_eq!(dims_from_prob(0.1, 0.49999999).1, 1);
        assert_eq!(dims_from_prob(0.1, 0.0009765624).1, 10);
    }

    fn sketch(items: &[(&str, u64)]) -> Sketch {
        let mut s = Sketch::new(8, 3, NO_LIMIT).unwrap();
        for (item, c) in items {
            s.incr_by(item.as_bytes(), *c);
        }
        s
    }

    #[test]
    fn merge_weighs_sources_and_may_merge_into_a_source() {
        let a = sketch(&[("a", 3), ("b", 1)]);
        let b = sketch(&[("a", 1), ("c", 2)]);
        let mut d = Sketch::new(8, 3, NO_LIMIT).unwrap();
        d.merge(&[(MergeSource::Other(&a), 2), (MergeSource::Other(&b), 1)])
            .unwrap();
        assert_eq!(d.count(), 2 * 4 + 3);
        assert!(d.query(b"a") >= 7);
        // Into a source: a = a + b.
        let mut a2 = a.clone();
        a2.merge(&[(MergeSource::Dest, 1), (MergeSource::Other(&b), 1)])
            .unwrap();
        assert_eq!(a2.count(), 7);
        for at in 0..24 {
            assert_eq!(a2.cell(at), a.cell(at) + b.cell(at));
        }
    }

    #[test]
    fn a_merge_that_overflows_changes_nothing() {
        let big = sketch(&[("a", u32::MAX as u64)]);
        let mut d = sketch(&[("a", 1)]);
        let before = d.clone();
        assert_eq!(
            d.merge(&[(MergeSource::Other(&big), 1), (MergeSource::Dest, 1)]),
            Err(MergeOverflow)
        );
        assert_eq!(d, before);
        // A negative counter is refused; a negative weight that leaves every counter ≥ 0
        // is not.
        let a = sketch(&[("a", 3)]);
        let b = sketch(&[("a", 1)]);
        assert_eq!(
            d.merge(&[(MergeSource::Other(&b), 1), (MergeSource::Other(&a), -1)]),
            Err(MergeOverflow)
        );
        assert_eq!(d, before);
        d.merge(&[(MergeSource::Other(&a), 1), (MergeSource::Other(&b), -1)])
            .unwrap();
        assert_eq!((d.query(b"a"), d.count()), (2, 2));
        // Weights whose products leave i64.
        assert_eq!(
            d.merge(&[(MergeSource::Other(&a), i64::MAX)]),
            Err(MergeOverflow)
        );
        let mut huge = a.clone();
        huge.count = u64::MAX;
        assert_eq!(
            d.merge(&[(MergeSource::Other(&huge), 1)]),
            Err(MergeOverflow),
            "a count past i64 is refused"
        );
    }

    #[test]
    fn the_rdb_record_round_trips_and_hostile_records_are_refused() {
        let s = sketch(&[("a", 3), ("b", 70_000)]);
        let mut f = Fields::default();
        s.save(&mut f);
        assert_eq!(f.fields[0], Field::Unsigned(8));
        assert_eq!(f.fields[1], Field::Unsigned(3));
        assert_eq!(f.fields[2], Field::Unsigned(70_003));
        let loaded = Sketch::load(&mut Fields::new(f.fields.clone()), 0, NO_LIMIT).unwrap();
        assert_eq!(loaded, s);
        assert!(Sketch::load(&mut Fields::new(f.fields.clone()), 1, NO_LIMIT).is_none());
        assert!(Sketch::load(&mut Fields::new(f.fields.clone()), 0, 100u64).is_none());
        let with = |i: usize, field: Field| {
            let mut g = f.fields.clone();
            g[i] = field;
            Sketch::load(&mut Fields::new(g), 0, NO_LIMIT)
        };
        assert!(with(0, Field::Unsigned(0)).is_none());
        assert!(with(1, Field::Unsigned(0)).is_none());
        assert!(with(0, Field::Unsigned(9)).is_none(), "buffer too short");
        assert!(with(0, Field::Unsigned(u64::MAX)).is_none());
        assert!(with(1, Field::Unsigned(1 << 62)).is_none());
        assert!(with(3, Field::Buffer(vec![0; 95])).is_none());
        assert!(with(2, Field::Double(1.0)).is_none());
        for n in 0..4 {
            assert!(Sketch::load(&mut Fields::new(f.fields[..n].to_vec()), 0, NO_LIMIT).is_none());
        }
        // Any counters and any count load: whatever RedisBloom could write.
        let odd = with(3, Field::Buffer(vec![0xff; 96])).unwrap();
        assert_eq!(odd.query(b"q"), u32::MAX);
    }
}
