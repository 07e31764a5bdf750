//! RedisBloom 2.4's cuckoo filter as the `CF.*` commands keep it: the table logic — one-byte
//! fingerprints, bucket and alternate-index rules, inserts with deterministic evictions and
//! rollback, growth by sub-filters, deletes and compaction, SCANDUMP chunks — is the
//! library's [`RedisBloomCuckoo`] (`bloomkit::cuckoo::redisbloom`), one copy in the
//! workspace, which `bloomkit import/export --to redis` and the library's cuckoo filter of
//! RedisBloom's layout use too. This file adds what only Redis needs: the memory limits
//! ([`Limit`] as the library's growth budget), the SCANDUMP header with the legacy hashing's
//! byte, the RDB record, `CF.DEBUG`'s line.
//!
//! Filters that RedisBloom 1.1 to 2.0 wrote (RDB encoding version 3) keep that version's
//! hashing, 32-bit MurmurHash2 with other fingerprint and alternate-index rules: see
//! [`Hashing::Murmur2`], and [`Cuckoo::save`] for how they are saved.

use bloomkit::cuckoo::redisbloom::{self as table, GrowthBudget, RedisBloomCuckoo, Shape};

use crate::config::{Limit, Refusal};
use crate::rdb::{Sink, Source};

pub use bloomkit::cuckoo::redisbloom::{
    alt_hash, Hashing, Lookup, SubFilter, MAX_BUCKET_SIZE, MAX_EXPANSION, MAX_ITERATIONS,
    MAX_NUM_BUCKETS, MAX_NUM_FILTERS,
};

/// `CF.ADD` on a missing key creates a filter of this capacity.
pub const DEFAULT_CAPACITY: u64 = 1024;
/// Default and limits of the options.
pub const DEFAULT_BUCKET_SIZE: u16 = 2;
/// Default number of evictions before an insert gives up on a sub-filter.
pub const DEFAULT_MAX_ITERATIONS: u16 = 20;
/// Default expansion (sub-filter j has buckets · expansionʲ buckets).
pub const DEFAULT_EXPANSION: u16 = 1;

/// The newest RDB encoding version of `MBbloomCF` (2.2 and later: with deletes, bucket
/// size, max iterations, expansion and per-sub-filter bucket counts). Version 3 (RedisBloom
/// 1.1 to 2.0, the only older version any release wrote for cuckoo filters) holds
/// sub-filter count, buckets and items, then the sub-filters' buffers, and its filters
/// hash as [`Hashing::Murmur2`]; versions 0–2 are read the same way.
pub const ENCODING_VERSION: i32 = 4;

/// What `CF.ADD` gave up after in RedisBloom 1.1–2.0 (a constant there, `MAX_ITERATIONS`
/// in `src/cuckoo.c`): the max iterations of a filter loaded from encoding version 3.
pub const LEGACY_MAX_ITERATIONS: u16 = 500;

/// The first field of an encoding-4 record of a [`Hashing::Murmur2`] filter: a sub-filter
/// count of 0, which no filter has. RedisBloom 2.4 refuses such a record (its loader
/// returns no value when the count is 0: Redis stops loading the RDB, RESTORE answers "Bad
/// data format"), and RedisBloom 2.2 reads seven numbers and no sub-filter, after which
/// Redis finds no end-of-value marker and refuses it too. After it come the hashing's id
/// ([`Hashing::id`]) and the record as for any filter.
const HASHING_MARK: u64 = 0;

use bloomkit::interop::redisbloom::CuckooHeader;
/// The size of the SCANDUMP header, and the largest data chunk SCANDUMP returns (the
/// library's: one copy of RedisBloom's layout in the workspace).
pub use bloomkit::interop::redisbloom::{CUCKOO_HEADER_BYTES as HEADER_BYTES, MAX_CHUNK_BYTES};

/// The result of an insert ([`table::Insert`] with the module's refusal).
pub type Insert = table::Insert<Refusal>;

/// Why a filter cannot be created ([`table::CreateError`] with the module's refusal).
pub type CreateError = table::CreateError<Refusal>;

/// A module memory limit as the library's growth budget.
struct Budget<L>(L);

impl<L: Limit> GrowthBudget for Budget<L> {
    type Refusal = Refusal;
    fn check(&self, held: u64, needed: u64) -> Result<(), Refusal> {
        self.0.check(held, needed)
    }
    fn grew(&self, bytes: u64) {
        self.0.grew(bytes)
    }
}

/// RedisBloom's cuckoo filter (its `CuckooFilter`): the library's [`RedisBloomCuckoo`]
/// (whose methods it has, through `Deref`), made, grown and loaded within the module's
/// memory limits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cuckoo(RedisBloomCuckoo);

impl std::ops::Deref for Cuckoo {
    type Target = RedisBloomCuckoo;
    fn deref(&self) -> &RedisBloomCuckoo {
        &self.0
    }
}

impl std::ops::DerefMut for Cuckoo {
    fn deref_mut(&mut self) -> &mut RedisBloomCuckoo {
        &mut self.0
    }
}

impl Cuckoo {
    /// A filter as `CF.RESERVE key capacity BUCKETSIZE b MAXITERATIONS i EXPANSION e`
    /// makes it ([`RedisBloomCuckoo::new`]), within `limit`.
    pub fn new(
        capacity: u64,
        bucket_size: u16,
        max_iterations: u16,
        expansion: u16,
        limit: impl Limit,
    ) -> Result<Self, CreateError> {
        RedisBloomCuckoo::new(
            capacity,
            bucket_size,
            max_iterations,
            expansion,
            &Budget(limit),
        )
        .map(Self)
    }

    /// Adds an item (again, if it is there already), adding sub-filters within `limit`
    /// ([`RedisBloomCuckoo::insert_with`]).
    pub fn insert(&mut self, item: &[u8], limit: impl Limit) -> Insert {
        self.0.insert_with(item, &Budget(limit))
    }

    /// Adds an item unless it may be there already
    /// ([`RedisBloomCuckoo::insert_unique_with`]).
    pub fn insert_unique(&mut self, item: &[u8], limit: impl Limit) -> Insert {
        self.0.insert_unique_with(item, &Budget(limit))
    }

    /// `CF.DEBUG`'s line.
    pub fn debug_line(&self) -> String {
        format!(
            "bktsize:{} buckets:{} items:{} deletes:{} filters:{} max_iterations:{} expansion:{}",
            self.bucket_size(),
            self.num_buckets(),
            self.num_items(),
            self.num_deletes(),
            self.filters().len(),
            self.max_iterations(),
            self.expansion()
        )
    }

    /// The 38-byte SCANDUMP header; 39 bytes, the last the hashing's id, for a
    /// [`Hashing::Murmur2`] filter — RedisBloom's `CF.LOADCHUNK` refuses that length
    /// ("Invalid header") instead of making a filter that would answer with other hashing.
    pub fn header(&self) -> Vec<u8> {
        let mut out = CuckooHeader {
            items: self.num_items(),
            buckets: self.num_buckets(),
            deletes: self.num_deletes(),
            filters: self.filters().len() as u64,
            bucket_size: self.bucket_size(),
            max_iterations: self.max_iterations(),
            expansion: self.expansion(),
        }
        .to_bytes();
        if self.hashing() != Hashing::Murmur64A {
            out.push(self.hashing().id());
        }
        out
    }

    /// Whether a SCANDUMP header of `len` bytes may be valid (38, or 39 with the hashing).
    pub fn header_len_ok(len: usize) -> bool {
        len == HEADER_BYTES || len == HEADER_BYTES + 1
    }

    /// A filter with empty sub-filters from a SCANDUMP header; checks it and the memory it
    /// asks for before allocating ([`RedisBloomCuckoo::zeroed`]). `Invalid` for a header of
    /// the wrong length or with parameters that do not make a filter.
    pub fn from_header(header: &[u8], limit: impl Limit) -> Result<Self, CreateError> {
        let hashing = match header.len() {
            HEADER_BYTES => Hashing::Murmur64A,
            n if n == HEADER_BYTES + 1 && header[HEADER_BYTES] == Hashing::Murmur2.id() => {
                Hashing::Murmur2
            }
            _ => return Err(CreateError::Invalid),
        };
        // The layout and RedisBloom's integrity checks: the library's (shared with `bloomkit
        // import --from redis`); `zeroed` checks the same again, as for the RDB path.
        let h = CuckooHeader::parse(&header[..HEADER_BYTES]).map_err(|_| CreateError::Invalid)?;
        let shape = h.shape();
        RedisBloomCuckoo::zeroed(&shape, hashing, &Budget(limit)).map(Self)
    }

    /// The data chunk at SCANDUMP iterator `iter` ≥ 1 and the next iterator, or `None` past
    /// the end: at most [`MAX_CHUNK_BYTES`], never crossing a sub-filter.
    pub fn chunk(&self, iter: u64) -> Option<(u64, &[u8])> {
        self.0.chunk(iter, MAX_CHUNK_BYTES)
    }

    /// Writes the RDB record of encoding version [`ENCODING_VERSION`]: sub-filters,
    /// buckets, items, deletes, bucket size, max iterations, expansion; per sub-filter its
    /// bucket count and slots. A [`Hashing::Murmur2`] filter's record starts with
    /// `HASHING_MARK` and the hashing's id: Redis stamps every value of a type with one
    /// encoding version, so version 3 cannot be written for it, and RedisBloom refuses the
    /// mark instead of answering with other hashing.
    pub fn save(&self, out: &mut impl Sink) {
        if self.hashing() != Hashing::Murmur64A {
            out.unsigned(HASHING_MARK);
            out.unsigned(self.hashing().id() as u64);
        }
        out.unsigned(self.filters().len() as u64);
        out.unsigned(self.num_buckets());
        out.unsigned(self.num_items());
        out.unsigned(self.num_deletes());
        out.unsigned(self.bucket_size() as u64);
        out.unsigned(self.max_iterations() as u64);
        out.unsigned(self.expansion() as u64);
        for f in self.filters() {
            out.unsigned(f.num_buckets());
            out.buffer(f.data());
        }
    }

    /// Reads an RDB record of encoding version `encver` (0 to [`ENCODING_VERSION`]).
    /// `None` — and nothing kept — at the first short read, on parameters a header would
    /// not be accepted with, on sub-filters of another size than the parameters give, or
    /// when `limit` does not admit the filter: that is checked before any slot is read.
    ///
    /// A record of version 3 or below was written by RedisBloom 1.1 to 2.0: it loads with
    /// [`Hashing::Murmur2`], bucket size 2, [`LEGACY_MAX_ITERATIONS`], expansion 1 (every
    /// sub-filter as large as the first) and no deletes (that version did not save them).
    /// RedisBloom 2.2 and later load it with their own hashing, and then most of its items
    /// answer 0.
    pub fn load(src: &mut impl Source, encver: i32, limit: impl Limit) -> Option<Self> {
        if !(0..=ENCODING_VERSION).contains(&encver) {
            return None;
        }
        let mut hashing = if encver < ENCODING_VERSION {
            Hashing::Murmur2
        } else {
            Hashing::Murmur64A
        };
        let mut num_filters = src.unsigned()?;
        if encver == ENCODING_VERSION && num_filters == HASHING_MARK {
            if src.unsigned()? != Hashing::Murmur2.id() as u64 {
                return None;
            }
            hashing = Hashing::Murmur2;
            num_filters = src.unsigned()?;
        }
        let num_buckets = src.unsigned()?;
        let num_items = src.unsigned()?;
        let [num_deletes, bucket_size, max_iterations, expansion] = if encver < ENCODING_VERSION {
            [
                0,
                DEFAULT_BUCKET_SIZE as u64,
                LEGACY_MAX_ITERATIONS as u64,
                DEFAULT_EXPANSION as u64,
            ]
        } else {
            [
                src.unsigned()?,
                src.unsigned()?,
                src.unsigned()?,
                src.unsigned()?,
            ]
        };
        let shape = Shape {
            items: num_items,
            buckets: num_buckets,
            deletes: num_deletes,
            filters: num_filters,
            bucket_size,
            max_iterations,
            expansion,
        };
        let legacy = encver < ENCODING_VERSION;
        RedisBloomCuckoo::from_sub_filters(&shape, hashing, &Budget(limit), |_| {
            let buckets = if legacy { num_buckets } else { src.unsigned()? };
            Some((buckets, src.buffer()?))
        })
        .map(Self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bloomkit::hash::murmur64a;

    const NO_LIMIT: u64 = u64::MAX;

    #[test]
    fn default_shape_and_documented_formulas() {
        let cf = Cuckoo::new(1024, 2, 20, 1, NO_LIMIT).unwrap();
        assert_eq!(cf.num_buckets(), 512);
        assert_eq!(cf.memory_bytes(), 40 + 16 + 1024);
        assert_eq!(
            cf.debug_line(),
            "bktsize:2 buckets:512 items:0 deletes:0 filters:1 max_iterations:20 expansion:1"
        );
        assert_eq!(
            Cuckoo::new(1000, 4, 20, 3, NO_LIMIT).unwrap().num_buckets(),
            256
        );
        assert_eq!(
            Cuckoo::new(1000, 4, 20, 3, NO_LIMIT).unwrap().expansion(),
            4
        );
        assert_eq!(
            Cuckoo::new(3, 2, 20, 1, NO_LIMIT),
            Err(CreateError::Invalid)
        );
        let p = Lookup::of(b"item", Hashing::Murmur64A);
        let h = murmur64a(b"item", 0);
        assert_eq!(p.fingerprint() as u64, h % 255 + 1);
        // The alternate bucket of the alternate bucket is the first one.
        for n in [1u64, 2, 512, 1 << 20] {
            let i1 = h % n;
            let i2 = alt_hash(p.fingerprint(), i1) % n;
            assert_eq!(alt_hash(p.fingerprint(), i2) % n, i1);
            assert_eq!(i2, (i1 ^ ((p.fingerprint() as u64 * 0x5bd1_e995) % n)) % n);
        }
    }

    #[test]
    fn inserts_are_found_counted_and_deleted() {
        let mut cf = Cuckoo::new(1000, 2, 20, 1, NO_LIMIT).unwrap();
        for i in 0..800u32 {
            assert_eq!(cf.insert(&i.to_le_bytes(), NO_LIMIT), Insert::Inserted);
        }
        assert!((0..800u32).all(|i| cf.contains(&i.to_le_bytes())));
        assert_eq!(cf.insert(b"twice", NO_LIMIT), Insert::Inserted);
        assert_eq!(cf.insert(b"twice", NO_LIMIT), Insert::Inserted);
        assert!(cf.count(b"twice") >= 2);
        assert_eq!(cf.insert_unique(b"twice", NO_LIMIT), Insert::Exists);
        assert!(cf.delete(b"twice"));
        assert!(cf.contains(b"twice"));
        assert!(cf.delete(b"twice"));
        assert_eq!(cf.num_items(), 800);
        assert_eq!(cf.num_deletes(), 2);
    }

    /// `insert_unique` scans each bucket once; it must answer and write exactly as a check
    /// of every sub-filter followed by `insert`, on filters with several sub-filters and
    /// holes left by deletes in older ones (where the newest free slot is not the first).
    #[test]
    fn insert_unique_is_a_check_then_an_insert() {
        let mut rng = bloomkit::hash::SplitMix64::new(7);
        for bucket_size in [1u16, 2, 4] {
            let mut cf = Cuckoo::new(16, bucket_size, 8, 2, NO_LIMIT).unwrap();
            for round in 0..3000u32 {
                let item = (rng.next_u64() % 400).to_le_bytes();
                if round % 5 == 4 {
                    cf.delete(&item);
                    continue;
                }
                let mut reference = cf.clone();
                let expected = if reference.contains(&item) {
                    Insert::Exists
                } else {
                    reference.insert(&item, NO_LIMIT)
                };
                assert_eq!(cf.insert_unique(&item, NO_LIMIT), expected);
                assert_eq!(cf, reference, "bucket size {bucket_size}, round {round}");
            }
            assert!(cf.filters().len() > 2);
        }
    }

    #[test]
    fn a_full_filter_grows_by_sub_filters_without_a_per_item_limit() {
        let mut cf = Cuckoo::new(8, 2, 5, 2, NO_LIMIT).unwrap();
        let mut i = 0u32;
        while cf.filters().len() < 6 {
            assert_eq!(cf.insert(&i.to_le_bytes(), NO_LIMIT), Insert::Inserted);
            i += 1;
        }
        let sizes: Vec<u64> = cf.filters().iter().map(SubFilter::num_buckets).collect();
        assert_eq!(sizes, [4, 8, 16, 32, 64, 128]);
        assert!(
            (0..i).all(|i| cf.contains(&i.to_le_bytes())),
            "nothing lost"
        );
    }

    #[test]
    fn more_buckets_than_56_bits_hold_is_refused() {
        assert_eq!(
            Cuckoo::new(i64::MAX as u64, 2, 20, 1, u64::MAX),
            Err(CreateError::Invalid)
        );
        assert_eq!(
            Cuckoo::new((MAX_NUM_BUCKETS + 1) * 2, 2, 20, 1, u64::MAX),
            Err(CreateError::Invalid)
        );
    }

    #[test]
    fn deletes_compact_into_older_sub_filters() {
        let mut cf = Cuckoo::new(16, 2, 5, 1, NO_LIMIT).unwrap();
        let mut i = 0u32;
        while cf.filters().len() < 2 {
            cf.insert(&i.to_le_bytes(), NO_LIMIT);
            i += 1;
        }
        // Delete most items: compaction moves the rest down and drops the second filter.
        for k in 0..i - 2 {
            assert!(cf.delete(&k.to_le_bytes()));
        }
        assert_eq!(cf.filters().len(), 1);
        assert!(cf.contains(&(i - 1).to_le_bytes()));
        assert!(cf.contains(&(i - 2).to_le_bytes()));
    }

    #[test]
    fn header_and_chunks_round_trip_and_bad_ones_are_refused() {
        let mut cf = Cuckoo::new(64, 4, 10, 2, NO_LIMIT).unwrap();
        for i in 0..300u32 {
            cf.insert(&i.to_le_bytes(), NO_LIMIT);
        }
        assert!(cf.filters().len() > 1);
        let header = cf.header();
        assert_eq!(header.len(), 38);
        let mut copy = Cuckoo::from_header(&header, NO_LIMIT).unwrap();
        let mut iter = 1;
        while let Some((next, data)) = cf.chunk(iter) {
            assert!(copy.load_chunk(next as i64, data));
            iter = next;
        }
        assert_eq!(copy, cf);
        assert_eq!(
            Cuckoo::from_header(&header[..37], NO_LIMIT),
            Err(CreateError::Invalid)
        );
        let mut bad = header.clone();
        bad[8] = 3; // 3 buckets: not a power of two
        assert_eq!(
            Cuckoo::from_header(&bad, NO_LIMIT),
            Err(CreateError::Invalid)
        );
        assert!(matches!(
            Cuckoo::from_header(&header, 100),
            Err(CreateError::TooLarge(Refusal::PerKey { limit: 100, .. }))
        ));
        assert!(!copy.load_chunk(1 << 40, &[1]));
        assert_eq!(copy.filters()[0].data().len(), 64);
        assert!(
            !copy.load_chunk(63 + 2 + 1, &[1, 2]),
            "crosses a sub-filter"
        );
        assert_eq!(copy, cf);
    }

    use crate::rdb::{Field, Fields};

    #[test]
    fn counts_saturate_and_any_count_loads_back() {
        // 4 slots claiming 4 items (a forged header): one more add, and it still loads.
        let mut header = Vec::new();
        for v in [4u64, 2, 0, 1] {
            header.extend_from_slice(&v.to_le_bytes());
        }
        for v in [2u16, 20, 1] {
            header.extend_from_slice(&v.to_le_bytes());
        }
        let mut cf = Cuckoo::from_header(&header, NO_LIMIT).unwrap();
        assert_eq!(cf.insert(b"a", NO_LIMIT), Insert::Inserted);
        assert_eq!(cf.num_items(), 5);
        let mut out = Fields::default();
        cf.save(&mut out);
        assert_eq!(
            Cuckoo::load(&mut Fields::new(out.fields), ENCODING_VERSION, NO_LIMIT).as_ref(),
            Some(&cf)
        );
        assert!(Cuckoo::from_header(&cf.header(), NO_LIMIT).is_ok());
        // At the ends of the range the counts stay put.
        cf.set_counts(u64::MAX, u64::MAX);
        assert_eq!(cf.insert(b"b", NO_LIMIT), Insert::Inserted);
        assert_eq!(cf.num_items(), u64::MAX);
        cf.set_counts(0, u64::MAX);
        assert!(cf.delete(b"b"));
        assert_eq!((cf.num_items(), cf.num_deletes()), (0, u64::MAX));
    }

    #[test]
    fn what_is_saved_loads_back_and_truncations_are_refused() {
        let mut cf = Cuckoo::new(16, 4, 10, 2, NO_LIMIT).unwrap();
        for i in 0..100u32 {
            cf.insert(&i.to_le_bytes(), NO_LIMIT);
        }
        let mut out = Fields::default();
        cf.save(&mut out);
        let fields = out.fields;
        let back = Cuckoo::load(&mut Fields::new(fields.clone()), ENCODING_VERSION, NO_LIMIT);
        assert_eq!(back.as_ref(), Some(&cf));
        for len in 0..fields.len() {
            let mut short = Fields::new(fields[..len].to_vec());
            assert_eq!(Cuckoo::load(&mut short, ENCODING_VERSION, NO_LIMIT), None);
        }
        assert_eq!(
            Cuckoo::load(&mut Fields::new(fields), ENCODING_VERSION, 100),
            None
        );
    }

    /// A filter as RedisBloom 2.0 leaves it after loading (its parameters, its hashing).
    fn legacy(capacity: u64) -> Cuckoo {
        let cf = Cuckoo::new(capacity, 2, LEGACY_MAX_ITERATIONS, 1, NO_LIMIT).unwrap();
        Cuckoo(cf.0.with_hashing(Hashing::Murmur2))
    }

    #[test]
    fn older_encodings_decode_with_redisbloom_2_0_parameters_and_hashing() {
        let mut cf = legacy(32);
        for i in 0..60u32 {
            cf.insert(&i.to_le_bytes(), NO_LIMIT);
        }
        assert!(cf.filters().len() > 1);
        // Version 3: sub-filters, buckets, items, then the slots only.
        let mut fields = vec![
            Field::Unsigned(cf.filters().len() as u64),
            Field::Unsigned(cf.num_buckets()),
            Field::Unsigned(cf.num_items()),
        ];
        fields.extend(
            cf.filters()
                .iter()
                .map(|f| Field::Buffer(f.data().to_vec())),
        );
        for encver in 0..ENCODING_VERSION {
            let back = Cuckoo::load(&mut Fields::new(fields.clone()), encver, NO_LIMIT);
            assert_eq!(back.as_ref(), Some(&cf), "version {encver}");
        }
        // A buffer of another size than the buckets give is refused.
        fields[3] = Field::Buffer(vec![0; 3]);
        assert_eq!(Cuckoo::load(&mut Fields::new(fields), 3, NO_LIMIT), None);
    }

    #[test]
    fn growth_stops_at_the_memory_limit() {
        let mut cf = Cuckoo::new(64, 2, 5, 1, 200).unwrap();
        let mut i = 0u32;
        let status = loop {
            match cf.insert(&i.to_le_bytes(), 200) {
                Insert::Inserted => i += 1,
                other => break other,
            }
        };
        assert!(matches!(
            status,
            Insert::TooLarge(Refusal::PerKey { limit: 200, .. })
        ));
        assert!(cf.footprint_bytes() <= 200);
    }

    /// A limit that admits everything and records what it was asked and told.
    #[derive(Default)]
    struct Recorder {
        checks: std::cell::RefCell<Vec<(u64, u64)>>,
        grown: std::cell::Cell<u64>,
    }

    impl Limit for Recorder {
        fn check(&self, held: u64, needed: u64) -> Result<(), Refusal> {
            self.checks.borrow_mut().push((held, needed));
            Ok(())
        }
        fn grew(&self, bytes: u64) {
            self.grown.set(self.grown.get() + bytes);
        }
    }

    /// The limit is asked in the bytes the filter holds, its bookkeeping included
    /// ([`Footprint`](crate::memory::Footprint)), before each growth allocates, and told of
    /// each growth in the same bytes: what the module counts the value for.
    #[test]
    fn growth_is_checked_from_the_size_held_and_reported_to_the_limit() {
        let limit = Recorder::default();
        let mut cf = Cuckoo::new(8, 2, 5, 2, &limit).unwrap();
        let created = cf.footprint_bytes();
        assert_eq!(*limit.checks.borrow(), vec![(0, created)]);
        for i in 0..200u32 {
            assert_eq!(cf.insert(&i.to_le_bytes(), &limit), Insert::Inserted);
        }
        assert!(cf.filters().len() > 2);
        let checks = limit.checks.borrow();
        assert_eq!(checks.len(), cf.filters().len());
        for pair in checks.windows(2) {
            assert_eq!(pair[1].0, pair[0].1, "{checks:?}");
        }
        assert_eq!(checks.last().unwrap().1, cf.footprint_bytes());
        assert_eq!(limit.grown.get(), cf.footprint_bytes() - created);
        assert!(cf.footprint_bytes() >= cf.memory_bytes() + 8 * cf.filters().len() as u64);
    }

    /// A per-key limit above what RedisBloom's count (`CF.INFO Size`) of the grown filter
    /// needs, below what it would hold with its bookkeeping: the growth is refused before
    /// it allocates, with the bytes it would hold; at exactly those bytes it is admitted.
    #[test]
    fn a_growth_whose_bookkeeping_would_pass_the_limit_is_refused() {
        let mut cf = Cuckoo::new(2, 1, 20, 1, NO_LIMIT).unwrap();
        // RedisBloom's count of the filter with a second sub-filter of 2 slots.
        let by_redisbloom = cf.memory_bytes() + 16 + 2;
        // Copies of one item until the first sub-filter is full and a second is asked for.
        let (refused, before) = loop {
            let before = (cf.clone(), cf.footprint_bytes());
            match cf.insert(b"x", by_redisbloom) {
                Insert::Inserted => {}
                other => break (other, before),
            }
        };
        assert_eq!(
            cf.filters().len(),
            1,
            "admitted under a limit its bookkeeping passes"
        );
        let Insert::TooLarge(Refusal::PerKey { needed, limit }) = refused else {
            panic!("{refused:?}");
        };
        assert_eq!(limit, by_redisbloom);
        assert!(needed > by_redisbloom, "{needed}");
        assert_eq!(
            (&*cf, cf.footprint_bytes()),
            (&*before.0, before.1),
            "nothing changed"
        );
        assert_eq!(cf.insert(b"x", needed - 1), {
            Insert::TooLarge(Refusal::PerKey {
                needed,
                limit: needed - 1,
            })
        });
        assert_eq!(cf.insert(b"x", needed), Insert::Inserted);
        assert_eq!(cf.filters().len(), 2);
        assert_eq!(
            cf.footprint_bytes(),
            needed,
            "what was asked is what is held"
        );
        assert!(cf.memory_bytes() <= by_redisbloom);
    }
}

#[cfg(test)]
mod legacy_tests {
    use super::*;
    use crate::rdb::{Field, Fields};

    const NO_LIMIT: u64 = u64::MAX;

    fn legacy(capacity: u64) -> Cuckoo {
        let cf = Cuckoo::new(capacity, 2, LEGACY_MAX_ITERATIONS, 1, NO_LIMIT).unwrap();
        Cuckoo(cf.0.with_hashing(Hashing::Murmur2))
    }

    #[test]
    fn a_legacy_filter_finds_counts_and_deletes_what_it_was_given() {
        let mut cf = legacy(16);
        for i in 0..200u32 {
            assert_eq!(cf.insert(&i.to_le_bytes(), NO_LIMIT), Insert::Inserted);
        }
        assert!(cf.filters().len() > 3);
        assert!(cf.filters().iter().all(|f| f.num_buckets() == 8));
        assert!((0..200u32).all(|i| cf.contains(&i.to_le_bytes())));
        for i in 0..100u32 {
            assert!(cf.delete(&i.to_le_bytes()));
        }
        assert!((100..200u32).all(|i| cf.contains(&i.to_le_bytes())));
        assert_eq!(cf.num_items(), 100);
    }

    /// Where an item's two buckets are one, 2.0 counts it once (2.2 and later twice).
    #[test]
    fn count_takes_a_shared_bucket_once() {
        let mut cf = legacy(4); // 2 buckets: an even fingerprint maps both to one bucket
        let item = (0u32..)
            .map(|i| i.to_le_bytes())
            .find(|b| {
                Lookup::of(b, Hashing::Murmur2)
                    .fingerprint()
                    .is_multiple_of(2)
            })
            .unwrap();
        cf.insert(&item, NO_LIMIT);
        assert_eq!(cf.count(&item), 1);
        let mut current = Cuckoo::new(4, 2, 20, 1, NO_LIMIT).unwrap();
        let item = (0u32..)
            .map(|i| i.to_le_bytes())
            .find(|b| {
                Lookup::of(b, Hashing::Murmur64A)
                    .fingerprint()
                    .is_multiple_of(2)
            })
            .unwrap();
        current.insert(&item, NO_LIMIT);
        assert_eq!(current.count(&item), 2);
    }

    /// Saved in encoding 4 behind the mark, a legacy filter loads back with its hashing; so
    /// does its SCANDUMP header (39 bytes). A mark with an unknown hashing is refused.
    #[test]
    fn the_hashing_survives_save_and_scandump() {
        let mut cf = legacy(64);
        for i in 0..300u32 {
            cf.insert(&i.to_le_bytes(), NO_LIMIT);
        }
        let mut out = Fields::default();
        cf.save(&mut out);
        assert_eq!(out.fields[..2], [Field::Unsigned(0), Field::Unsigned(1)]);
        let back = Cuckoo::load(
            &mut Fields::new(out.fields.clone()),
            ENCODING_VERSION,
            NO_LIMIT,
        );
        assert_eq!(back.as_ref(), Some(&cf));
        let mut bad = out.fields.clone();
        bad[1] = Field::Unsigned(2);
        assert_eq!(
            Cuckoo::load(&mut Fields::new(bad), ENCODING_VERSION, NO_LIMIT),
            None
        );
        // Without the mark the same fields are a 64-bit-hashing filter.
        let plain = Cuckoo::load(&mut Fields::new(out.fields[2..].to_vec()), 4, NO_LIMIT).unwrap();
        assert_eq!(plain.hashing(), Hashing::Murmur64A);

        let header = cf.header();
        assert_eq!((header.len(), header[38]), (39, 1));
        let mut copy = Cuckoo::from_header(&header, NO_LIMIT).unwrap();
        let mut iter = 1;
        while let Some((next, data)) = cf.chunk(iter) {
            assert!(copy.load_chunk(next as i64, data));
            iter = next;
        }
        assert_eq!(copy, cf);
        let mut bad = header.clone();
        bad[38] = 0;
        assert_eq!(
            Cuckoo::from_header(&bad, NO_LIMIT),
            Err(CreateError::Invalid)
        );
    }
}
