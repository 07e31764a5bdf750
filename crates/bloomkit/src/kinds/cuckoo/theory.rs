//! Theory of the cuckoo filter: the formulas its builder sizes with and its
//! `Filter::fpp_at` answers with.

/// The load factor α a cuckoo filter is sized for: with buckets of 4 slots, partial-key
/// cuckoo hashing fills about 95% of the slots before an insertion fails (Fan, Andersen,
/// Kaminsky & Mitzenmacher, "Cuckoo Filter: Practically Better Than Bloom", CoNEXT 2014,
/// where it measures the load factor).
pub const CUCKOO_TARGET_LOAD: f64 = 0.95;

/// The load factor a cuckoo filter of more than [`CUCKOO_LARGE_TABLE_ITEMS`] items is sized
/// for: 0.94 (see [`cuckoo_sizing_load`]).
pub const CUCKOO_LARGE_TABLE_LOAD: f64 = 0.94;

/// The capacity past which [`cuckoo_sizing_load`] gives [`CUCKOO_LARGE_TABLE_LOAD`].
pub const CUCKOO_LARGE_TABLE_ITEMS: u64 = 10_000_000;

/// The load factor the builder sizes a table of `capacity` items for:
/// [`CUCKOO_TARGET_LOAD`] (0.95) up to [`CUCKOO_LARGE_TABLE_ITEMS`], then
/// [`CUCKOO_LARGE_TABLE_LOAD`] (0.94).
///
/// Why lower for large tables: an insert fails when its chain of up to 500 kicks finds no
/// free slot, and the chance that one insert needs more grows steeply with the load; a
/// large table makes many inserts near its final load, so it meets that tail sooner.
/// Measured with `cargo run --release -p bloomkit --example cuckoo_load -- large`
/// (4-slot buckets): sized for 0.95, a table of 10⁷ items took all of them, one of 10⁸
/// refused its first insert at 99.82% of its capacity (load 0.948) and 176 026 inserts in
/// all; sized for 0.945 or 0.94, the table of 10⁸ took all its items.
///
/// ```
/// use bloomkit::params::{cuckoo_sizing_load, CUCKOO_LARGE_TABLE_ITEMS};
/// assert_eq!(cuckoo_sizing_load(1_000), 0.95);
/// assert_eq!(cuckoo_sizing_load(CUCKOO_LARGE_TABLE_ITEMS), 0.95);
/// assert_eq!(cuckoo_sizing_load(CUCKOO_LARGE_TABLE_ITEMS + 1), 0.94);
/// ```
pub fn cuckoo_sizing_load(capacity: u64) -> f64 {
    if capacity > CUCKOO_LARGE_TABLE_ITEMS {
        CUCKOO_LARGE_TABLE_LOAD
    } else {
        CUCKOO_TARGET_LOAD
    }
}

/// The fingerprint widths (in bits) a cuckoo filter supports: 4 to 16. Slots are packed
/// into 64-bit words without straddling, ⌊64/f⌋ per word, so the widths that use the
/// memory best are those where ⌊64/f⌋ changes: 4–10, 12 and 16.
pub const CUCKOO_FINGERPRINT_BITS: std::ops::RangeInclusive<u32> = 4..=16;

/// The narrowest fingerprint [`cuckoo_fingerprint_bits`] chooses, whatever ε: 8 bits. An
/// item's alternate bucket is one of only 2^f − 1 offsets from its first, and with fewer
/// offsets than that a large table stops filling early (Fan et al., CoNEXT 2014, on the
/// fingerprint size partial-key hashing needs). Measured with `cargo run --release -p
/// bloomkit --example cuckoo_load`: with 5-bit fingerprints 134 of 200 tables of 10⁵ items
/// failed before holding them, with the widths ε chooses none did. Narrower widths (down to
/// 4) remain available through the builder.
pub const CUCKOO_MIN_CHOSEN_FINGERPRINT_BITS: u32 = 8;

/// The false-positive probability of a cuckoo filter with `fingerprint_bits`-bit
/// fingerprints (f), buckets of `bucket_size` slots (b) and load factor `load` (α):
///
/// ```text
///     ε = 1 − (1 − 1/2^f)^(2bα)
/// ```
///
/// A query compares its fingerprint with the 2bα occupied slots (on average) of its two
/// buckets, each a match with probability 2^−f (Fan et al., CoNEXT 2014, with
/// the occupancy α). At full load it is at most `2b / 2^f` ([`cuckoo_fpp_bound`]).
///
/// ```
/// use bloomkit::params::cuckoo_fpp;
/// let p = cuckoo_fpp(8, 4, 0.95);
/// assert!((p - 0.0293).abs() < 1e-4);
/// assert_eq!(cuckoo_fpp(12, 4, 0.0), 0.0);
/// ```
pub fn cuckoo_fpp(fingerprint_bits: u32, bucket_size: u32, load: f64) -> f64 {
    let per_slot = (-(fingerprint_bits as f64)).exp2();
    // `load` is one table's load factor (at most 1), or, for a filter grown to several
    // sub-filters, their load factors summed: a query compares 2b slots in each.
    let compared = 2.0 * bucket_size as f64 * load.max(0.0);
    -(compared * (-per_slot).ln_1p()).exp_m1()
}

/// The upper bound `2b / 2^f` on a cuckoo filter's false-positive probability: 2b slots are
/// compared, each a match with probability 2^−f (Fan et al., CoNEXT 2014).
///
/// ```
/// use bloomkit::params::cuckoo_fpp_bound;
/// assert_eq!(cuckoo_fpp_bound(8, 4), 8.0 / 256.0);
/// ```
pub fn cuckoo_fpp_bound(fingerprint_bits: u32, bucket_size: u32) -> f64 {
    2.0 * bucket_size as f64 / (fingerprint_bits as f64).exp2()
}

/// The false-positive probability of a cuckoo table in RedisBloom's layout (its `CF.*`
/// filters) at load factor α: `1 − (1 − 1/255)^(2bα)`. Its fingerprints are `h mod 255 + 1`,
/// 255 values in one byte, so a slot matches an absent item's fingerprint with probability
/// 1/255 rather than 2⁻⁸ (the same reasoning as [`cuckoo_fpp`], Fan et al., CoNEXT 2014).
///
/// ```
/// use bloomkit::params::redisbloom_cuckoo_fpp;
/// let full = redisbloom_cuckoo_fpp(2, 1.0);   // CF.RESERVE's bucket size 2, every slot used
/// assert!((full - 4.0 / 255.0).abs() < 1e-4);
/// ```
pub fn redisbloom_cuckoo_fpp(bucket_size: u32, load: f64) -> f64 {
    // `load` is one table's load factor (at most 1), or, for a filter grown to several
    // sub-filters, their load factors summed: a query compares 2b slots in each.
    let compared = 2.0 * bucket_size as f64 * load.max(0.0);
    -(compared * (-1.0f64 / 255.0).ln_1p()).exp_m1()
}

/// The fingerprint width for ε: the smallest f with `2b / 2^f ≤ fpp` (the bound
/// f ≥ log₂(2b/ε) of Fan et al., CoNEXT 2014), then widened to the widest fingerprint that
/// packs as many slots into a 64-bit word, `⌊64 / ⌊64/f⌋⌋` — 11 bits take a 12-bit slot's
/// room (5 per word), so they become 12 and answer 2× more accurately for the same memory.
/// `None` if even 16 bits do not reach `fpp`.
///
/// ```
/// use bloomkit::params::cuckoo_fingerprint_bits;
/// assert_eq!(cuckoo_fingerprint_bits(0.05, 4), Some(8));   // 2·4/2⁸ ≈ 3.1%
/// assert_eq!(cuckoo_fingerprint_bits(0.3, 4), Some(8));    // never narrower than 8
/// assert_eq!(cuckoo_fingerprint_bits(0.01, 4), Some(10));  // 2·4/2¹⁰ ≈ 0.78%, 6 per word
/// assert_eq!(cuckoo_fingerprint_bits(0.005, 4), Some(12)); // 11 bits widened: 5 per word
/// assert_eq!(cuckoo_fingerprint_bits(0.001, 4), Some(16)); // 13 bits widened: 4 per word
/// assert_eq!(cuckoo_fingerprint_bits(1e-5, 4), None);
/// ```
pub fn cuckoo_fingerprint_bits(fpp: f64, bucket_size: u32) -> Option<u32> {
    (CUCKOO_MIN_CHOSEN_FINGERPRINT_BITS..=*CUCKOO_FINGERPRINT_BITS.end())
        .find(|&f| cuckoo_fpp_bound(f, bucket_size) <= fpp)
        .map(|f| 64 / (64 / f))
}

/// The number of buckets for `capacity` items in buckets of `bucket_size` slots at load
/// factor `load`: `⌈n / (b·α)⌉` plus a margin of `⌈2·√(n/b)⌉` buckets, or `None` past
/// `2⁶³`.
///
/// Any count works: the alternate-bucket map is an involution for every B (see
/// [`crate::cuckoo`]), so the table is not rounded up to a power of two, which used to
/// leave it between 47.5% and 95% full at capacity. The margin is for small tables: the
/// load at the first failed insert varies from table to table by about 1/√slots around its
/// median. Measured with `cargo run --release -p bloomkit --example
/// cuckoo_load`: without the margin, 8 of 200 tables of 30 items failed before holding them
/// all (none of 200 at 10, 100, 10³, 10⁴ or 10⁵ items); with it, none did. The margin
/// costs 12% of the buckets at 10³ items, 1.2% at 10⁵ and 0.4% at 10⁶.
///
/// ```
/// use bloomkit::params::cuckoo_num_buckets;
/// assert_eq!(cuckoo_num_buckets(1, 4, 0.95), Some(2)); // 1 + ⌈2·√0.25⌉
/// assert_eq!(cuckoo_num_buckets(1_000_000, 4, 0.95), Some(263_158 + 1_000));
/// ```
pub fn cuckoo_num_buckets(capacity: u64, bucket_size: u32, load: f64) -> Option<u64> {
    let per_bucket = bucket_size.max(1) as f64;
    let needed = (capacity as f64 / (per_bucket * load)).ceil();
    let margin = (2.0 * (capacity as f64 / per_bucket).sqrt()).ceil();
    let total = needed + margin;
    if total.is_nan() || total >= 9.2e18 {
        return None;
    }
    Some((total as u64).max(1))
}

#[cfg(test)]
mod tests {
    use crate::params::*;

    #[test]
    fn cuckoo_fpp_matches_the_paper() {
        // At full load the exact form is just under the bound 2b/2^f.
        for f in CUCKOO_FINGERPRINT_BITS {
            for b in [2, 4, 8] {
                if cuckoo_fpp_bound(f, b) > 0.05 {
                    continue; // the bound is a first-order one: only tight when small
                }
                let exact = cuckoo_fpp(f, b, 1.0);
                let bound = cuckoo_fpp_bound(f, b);
                assert!(exact < bound && exact > bound * 0.9, "f {f} b {b}");
            }
        }
        // Half the load, about half the rate.
        let ratio = cuckoo_fpp(12, 4, 0.5) / cuckoo_fpp(12, 4, 1.0);
        assert!((ratio - 0.5).abs() < 1e-3, "{ratio}");
        assert_eq!(cuckoo_fingerprint_bits(0.0313, 4), Some(8));
        assert_eq!(cuckoo_fingerprint_bits(0.03, 4), Some(9));
        assert_eq!(cuckoo_fingerprint_bits(0.01, 2), Some(9));
        assert_eq!(cuckoo_fingerprint_bits(0.01, 8), Some(12));
    }

    #[test]
    fn cuckoo_buckets_are_the_fewest_with_room_for_the_items() {
        for n in [1u64, 2, 3, 4, 100, 3_800, 1_000_000, 123_456_789] {
            let buckets = cuckoo_num_buckets(n, 4, CUCKOO_TARGET_LOAD).unwrap();
            assert!(buckets as f64 * 4.0 * CUCKOO_TARGET_LOAD >= n as f64, "{n}");
            let margin = (2.0 * (n as f64 / 4.0).sqrt()).ceil() as u64;
            assert!(
                (buckets - margin - 1) as f64 * 4.0 * CUCKOO_TARGET_LOAD < n as f64,
                "{n}"
            );
        }
        assert_eq!(cuckoo_num_buckets(u64::MAX, 2, 0.5), None);
    }

    #[test]
    fn fingerprints_are_widened_to_what_a_word_packs() {
        for fpp in [0.3, 0.1, 0.03, 0.01, 3e-3, 1e-3, 3e-4, 1.3e-4] {
            for b in [2, 4, 8] {
                let Some(f) = cuckoo_fingerprint_bits(fpp, b) else {
                    assert!(cuckoo_fpp_bound(16, b) > fpp);
                    continue;
                };
                assert!(cuckoo_fpp_bound(f, b) <= fpp, "ε {fpp} b {b}");
                // No narrower width reaches ε, and no wider one packs as many per word.
                let narrowest = (CUCKOO_MIN_CHOSEN_FINGERPRINT_BITS..=16)
                    .find(|&g| cuckoo_fpp_bound(g, b) <= fpp)
                    .unwrap();
                assert_eq!(64 / f, 64 / narrowest, "ε {fpp} b {b}");
                assert!(f == 16 || 64 / (f + 1) < 64 / f, "ε {fpp} b {b}");
            }
        }
    }
}
