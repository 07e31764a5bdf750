//! The contract every filter kind keeps, written once and run by every kind
//! (`tests/suite/every_kind.rs`), and the helpers the kind-specific test files share.
//!
//! Each check is a generic function over [`Subject`] (a filter the suite can build, copy
//! and snapshot) and the traits the kind implements: [`Filter`], [`Persist`],
//! [`Removable`], [`Mergeable`]. They return `Err(TestCaseError)` so that proptest can
//! shrink a failing case; the random cases come from fixed seeds ([`config`]), so every
//! run checks the same cases.
//!
//! * [`inserts`] — `try_insert`'s answer is `Ok(!contains before)`, the item is found right
//!   after, `len` follows the kind's counting rule, a refused insert changes nothing, and no
//!   inserted item is ever reported absent (except by the stable filter, which forgets);
//! * [`round_trip`] — `to_bytes` → `from_bytes`, directly and through [`AnyFilter`], gives
//!   the same answers, length and bytes, and the copy continues exactly as the original;
//! * [`corruption_is_refused`] — every flipped byte, every cut and a trailing byte are
//!   typed decode errors; [`resealed_corruption`] — edits behind a valid checksum decode to
//!   an error or to a canonical, usable filter;
//! * [`merges`] — union holds both inputs (it is the filter that inserting both builds),
//!   intersection keeps the common items, and filters of another size or hashing are
//!   refused with [`Error::Incompatible`], unchanged;
//! * [`removes`] — removing a random sub-multiset of what was inserted keeps every item
//!   still held; removing a certainly absent item is [`Error::NotPresent`], unchanged;
//! * [`try_extend_stops_at_the_first_error`] — `try_extend` is `try_insert` item by item,
//!   stopping at the first error with the items before it kept.
#![allow(dead_code)] // each test file uses the part it needs

use std::collections::HashMap;
use std::fmt::Debug;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use bloomkit::registry::{BuildSpec, COMMON_OPTIONS};
use bloomkit::{
    AnyFilter, BlockedBloomFilter, BloomFilter, CompressedBloomFilter, ConcurrentBloomFilter,
    CountingBloomFilter, CuckooFilter, DecodeError, DeletableBloomFilter, Error, Filter,
    GeneralizedBloomFilter, HashFunction, IndexScheme, Kind, Mergeable, Persist, Removable,
    RobustBloomFilter, ScalableBloomFilter, SpectralBloomFilter, SpectralMethod,
    SplitBlockBloomFilter, StableBloomFilter, VariableIncrementBloomFilter, WeightedBloomFilter,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestCaseError};

// ---------------------------------------------------------------------------------------
// Helpers shared by the test files
// ---------------------------------------------------------------------------------------

/// The blocked and split-block filters' `u64` batches, which run through the lookahead
/// window (`bloomkit::lookahead::WINDOW` inputs located ahead), against their single calls
/// over many windows: the same bits and count of changes, every answer in its place.
/// `$build` makes an empty filter (two are made).
#[allow(unused_macros)]
macro_rules! batches_match_single_calls {
    ($build:expr) => {{
        let (mut single, mut batch) = ($build, $build);
        const { assert!(bloomkit::lookahead::WINDOW < 1000) };
        let keys: Vec<u64> = (0..30_000u64)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .collect();
        let changed = keys.iter().filter(|&&k| single.insert_u64(k)).count() as u64;
        assert_eq!(batch.insert_batch_u64(&keys), changed);
        assert!(single == batch);
        // Absent and present keys alternate, so an answer out of place shows.
        let queries: Vec<u64> = keys.iter().flat_map(|&k| [k ^ 1, k]).collect();
        let answers: Vec<bool> = queries.iter().map(|&q| single.contains_u64(q)).collect();
        let mut out = Vec::new();
        batch.contains_batch_u64(&queries, &mut out);
        assert_eq!(out, answers);
        assert_eq!(batch.contains_batch(&queries), answers);
    }};
}
#[allow(unused_imports)]
pub(crate) use batches_match_single_calls;

/// `cases` random cases from a fixed seed (every run checks the same cases); failures are
/// reported with their inputs, not written to files.
pub fn config(cases: u32) -> Config {
    Config {
        cases,
        rng_seed: RngSeed::Fixed(0xb100_c0de),
        failure_persistence: None,
        ..Config::default()
    }
}

/// Fails unless `count` events in `trials` lie in the 99.9% acceptance interval of the
/// theoretical probability `p` ([`bloomkit::stats::binomial_acceptance`]); the message
/// says `what`, the count and the interval.
pub fn assert_rate(count: u64, trials: u64, p: f64, what: &str) {
    use bloomkit::stats::{binomial_acceptance, Z_99_9};
    let (low, high) = binomial_acceptance(p, trials, Z_99_9);
    assert!(
        (low..=high).contains(&(count as f64)),
        "{what}: {count} of {trials}, theory {:.1} (99.9%: {low:.1} – {high:.1})",
        p * trials as f64
    );
}

/// Recomputes the trailing checksum after a deliberate change, so that decoding reaches
/// the field checks instead of stopping at the checksum.
pub fn reseal(bytes: &mut [u8]) {
    if bytes.len() >= 8 {
        let n = bytes.len();
        let sum = xxhash_rust::xxh3::xxh3_64(&bytes[..n - 8]);
        bytes[n - 8..].copy_from_slice(&sum.to_le_bytes());
    }
}

/// An encoded filter with any kind tag, parameters and payload (hashing: MurmurHash3,
/// enhanced double hashing, seed 0) and a valid checksum: what a hostile writer can
/// produce.
pub fn raw_file(kind: u8, params: &[u8], payload: &[u8]) -> Vec<u8> {
    let mut out = b"BLOOMKIT".to_vec();
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&[kind, 1, 1, 0, 0, 0]);
    out.extend_from_slice(&0u64.to_le_bytes());
    out.extend_from_slice(&(params.len() as u32).to_le_bytes());
    out.extend_from_slice(params);
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(payload);
    let sum = xxhash_rust::xxh3::xxh3_64(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

/// Item `i` of a fixed pseudo-random sequence of distinct keys: the SplitMix64 finaliser
/// is a bijection of u64, so distinct `i` give distinct keys.
pub fn key(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The payload (the kind's storage) of a filter, as its encoder writes it.
pub fn payload<F: Persist>(filter: &F) -> Vec<u8> {
    let mut out = Vec::new();
    filter.encode_payload(&mut out);
    out
}

/// A fresh path in a directory of its own, removed when dropped.
pub struct TempPath {
    pub dir: PathBuf,
    pub path: PathBuf,
}

impl TempPath {
    pub fn new(name: &str) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "bloomkit-tests-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).expect("create a temporary directory");
        let path = dir.join(name);
        Self { dir, path }
    }
}

impl Drop for TempPath {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

// ---------------------------------------------------------------------------------------
// What the suite needs of a kind
// ---------------------------------------------------------------------------------------

/// The parameters of a filter, for any kind: each kind reads what applies to it and maps
/// `knob` to its own choices (counter width, bucket size, growth, …).
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub capacity: u64,
    pub fpp: f64,
    pub function: HashFunction,
    pub scheme: IndexScheme,
    pub seed: u64,
    pub knob: u8,
}

impl Shape {
    /// The same shape with another seed.
    pub fn reseeded(self) -> Shape {
        Shape {
            seed: self.seed.wrapping_add(1),
            ..self
        }
    }

    /// The same shape with another hash function.
    pub fn rehashed(self) -> Shape {
        let function = match self.function {
            HashFunction::Murmur3 => HashFunction::Xxh3,
            _ => HashFunction::Murmur3,
        };
        Shape { function, ..self }
    }

    /// The same shape sized for many more items: a larger filter.
    pub fn resized(self) -> Shape {
        Shape {
            capacity: self.capacity * 2 + 2_000,
            ..self
        }
    }
}

/// Small shapes (capacity 1 to 2 000, so tiny filters with repeated positions and
/// saturated counters too), ε log-uniform in [10⁻³, 0.5], every hash function and index
/// scheme, any seed.
pub fn shape() -> impl Strategy<Value = Shape> {
    (
        prop_oneof![1u64..20, 1u64..2_000],
        (1e-3f64.ln()..=0.5f64.ln()).prop_map(|x| x.exp().clamp(1e-3, 0.5)),
        prop_oneof![
            Just(HashFunction::Murmur3),
            Just(HashFunction::Xxh3),
            Just(HashFunction::Murmur64APair),
            Just(HashFunction::SparkMurmur3Pair),
            Just(HashFunction::Fold2)
        ],
        prop_oneof![
            Just(IndexScheme::EnhancedDoubleHashing),
            Just(IndexScheme::SeededHashes),
            Just(IndexScheme::DoubleHashing),
            Just(IndexScheme::GuavaMitz64),
            Just(IndexScheme::SparkV1),
            Just(IndexScheme::SparkV2)
        ],
        any::<u64>(),
        any::<u8>(),
    )
        .prop_map(|(capacity, fpp, function, scheme, seed, knob)| Shape {
            capacity,
            fpp,
            function,
            scheme,
            seed,
            knob,
        })
}

/// Items: small numbers, so that the same item comes several times.
pub fn items(max: usize) -> impl Strategy<Value = Vec<u32>> {
    prop::collection::vec(0u32..400, 0..max)
}

/// Items never drawn by [`items`].
pub fn fresh(n: u32) -> impl Iterator<Item = u32> {
    1_000_000..1_000_000 + n
}

/// A kind the suite can build from a [`Shape`].
pub trait Build: Sized {
    fn make(shape: &Shape) -> Self;
}

/// What the suite needs beyond [`Filter`]: a copy, and the whole state as bytes to tell
/// whether an operation changed the filter.
pub trait Subject: Filter + Debug + Sized {
    fn copy(&self) -> Self;
    fn state(&self) -> Vec<u8>;
}

impl<T: Filter + Persist + Clone + Debug> Subject for T {
    fn copy(&self) -> Self {
        self.clone()
    }
    fn state(&self) -> Vec<u8> {
        self.to_bytes()
    }
}

/// A filter of `kind` for `shape` through the registry, as a program that knows the kind
/// only by name builds it (`AnyFilter::build`): the shape's capacity, ε, hash function,
/// seed, and index scheme where the kind has one; bit i of the knob sets the kind's i-th
/// own option to the other value it declares (`OptionInfo::example`). A kind with no
/// hand-written `Build` is built this way.
pub fn by_spec<T: TryFrom<AnyFilter, Error = AnyFilter>>(kind: Kind, s: &Shape) -> T {
    let mut spec = BuildSpec {
        hash_function: Some(s.function),
        index_scheme: kind.uses_index_scheme().then_some(s.scheme),
        seed: Some(s.seed),
        ..BuildSpec::new(s.capacity, s.fpp)
    };
    let own = kind
        .options()
        .into_iter()
        .filter(|o| !COMMON_OPTIONS.contains(&o.name));
    for (i, option) in own.enumerate() {
        if s.knob >> (i % 8) & 1 == 1 {
            spec = spec.option(option.name, option.example);
        }
    }
    let built =
        AnyFilter::build(kind, &spec).unwrap_or_else(|e| panic!("{kind} from {spec:?}: {e}"));
    T::try_from(built).unwrap_or_else(|f| panic!("{kind} built a {}", f.kind()))
}

/// Kinds that keep a copy per insertion (`Ok(false)` still adds one, and each `remove`
/// takes one out); the others hold a set.
pub fn is_multiset(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::Counting | Kind::VariableIncrement | Kind::Cuckoo | Kind::Spectral
    )
}

/// Kinds that forget items by design (the stable filter forgets old items) promise no
/// absence of false negatives, only that an item just inserted is found: what the kind
/// declares in its `Abilities`.
pub fn forgets(kind: Kind) -> bool {
    kind.forgets()
}

impl Build for BloomFilter {
    fn make(s: &Shape) -> Self {
        BloomFilter::builder()
            .capacity(s.capacity)
            .fpp(s.fpp)
            .hash_function(s.function)
            .index_scheme(s.scheme)
            .seed(s.seed)
            .build()
            .unwrap()
    }
}

/// The knob picks the memory cap, so the suite sees several k: the classic filter's own
/// memory (k as classic), the default cap, and no practical cap (k = 1).
impl Build for CompressedBloomFilter {
    fn make(s: &Shape) -> Self {
        // The m/n of the classic k = round(log₂(1/ε)), the least any cap must allow.
        let k = (-s.fpp.log2()).round().max(1.0) as u32;
        let classic = bloomkit::params::bits_per_item_for(s.fpp, k);
        let cap = [1.0001 * classic, 4.0 * classic, 1e6][usize::from(s.knob) % 3];
        CompressedBloomFilter::builder()
            .capacity(s.capacity)
            .fpp(s.fpp)
            .max_bits_per_item(cap)
            .hash_function(s.function)
            .index_scheme(s.scheme)
            .seed(s.seed)
            .build()
            .unwrap()
    }
}

impl Build for ConcurrentBloomFilter {
    fn make(s: &Shape) -> Self {
        ConcurrentBloomFilter::from_bloom(BloomFilter::make(s))
    }
}

impl Build for BlockedBloomFilter {
    fn make(s: &Shape) -> Self {
        BlockedBloomFilter::builder()
            .capacity(s.capacity)
            .fpp(s.fpp)
            .hash_function(s.function)
            .seed(s.seed)
            .build()
            .unwrap()
    }
}

impl Build for SplitBlockBloomFilter {
    /// Parquet's layout fixes the hash (XXH64) and the index scheme; the seed varies.
    fn make(s: &Shape) -> Self {
        SplitBlockBloomFilter::builder()
            .capacity(s.capacity)
            .fpp(s.fpp)
            .seed(s.seed)
            .build()
            .unwrap()
    }
}

impl Build for CountingBloomFilter {
    fn make(s: &Shape) -> Self {
        const WIDTHS: [u32; 6] = [1, 2, 3, 4, 8, 16];
        CountingBloomFilter::builder()
            .capacity(s.capacity)
            .fpp(s.fpp)
            .counter_width(WIDTHS[s.knob as usize % WIDTHS.len()])
            .hash_function(s.function)
            .index_scheme(s.scheme)
            .seed(s.seed)
            .build()
            .unwrap()
    }
}

impl Build for VariableIncrementBloomFilter {
    fn make(s: &Shape) -> Self {
        // (counter width, L): 2L − 1 below the counter maximum.
        const CHOICES: [(u32, u32); 8] = [
            (2, 1),
            (4, 1),
            (4, 4),
            (4, 7),
            (5, 3),
            (8, 4),
            (8, 127),
            (16, 1000),
        ];
        let (width, base) = CHOICES[s.knob as usize % CHOICES.len()];
        VariableIncrementBloomFilter::builder()
            .capacity(s.capacity)
            .fpp(s.fpp)
            .counter_width(width)
            .increment_base(base)
            .hash_function(s.function)
            .index_scheme(s.scheme)
            .seed(s.seed)
            .build()
            .unwrap()
    }
}

impl Build for DeletableBloomFilter {
    /// Regions of 1 to 32 data bits: from many collision-free regions to few.
    fn make(s: &Shape) -> Self {
        DeletableBloomFilter::builder()
            .capacity(s.capacity)
            .fpp(s.fpp)
            .region_bits([1, 4, 8, 32][s.knob as usize % 4])
            .hash_function(s.function)
            .index_scheme(s.scheme)
            .seed(s.seed)
            .build()
            .unwrap()
    }
}

impl Build for StableBloomFilter {
    /// Cell widths 1 to 3. A stable filter needs enough cells for the decrements its ε asks
    /// for; where the shape has too few, the filter is sized for 1 000 items at ε = 1%.
    fn make(s: &Shape) -> Self {
        let build = |capacity: u64, fpp: f64| {
            StableBloomFilter::builder()
                .capacity(capacity)
                .fpp(fpp)
                .cell_width(1 + s.knob as u32 % 3)
                .hash_function(s.function)
                .index_scheme(s.scheme)
                .seed(s.seed)
                .build()
        };
        build(s.capacity, s.fpp)
            .or_else(|_| build(s.capacity.max(1_000), 0.01))
            .unwrap()
    }
}

impl Build for SpectralBloomFilter {
    /// The three methods, counter widths from 1 bit (saturating at once) to 16.
    fn make(s: &Shape) -> Self {
        spectral(s, SpectralMethod::ALL[s.knob as usize % 3])
    }
}

/// A spectral filter of `shape` with `method`; the counter width from the knob.
pub fn spectral(s: &Shape, method: SpectralMethod) -> SpectralBloomFilter {
    SpectralBloomFilter::builder()
        .capacity(s.capacity)
        .fpp(s.fpp)
        .method(method)
        .counter_width([1, 2, 4, 8, 16][s.knob as usize / 3 % 5])
        .hash_function(s.function)
        .index_scheme(s.scheme)
        .seed(s.seed)
        .build()
        .unwrap()
}

/// A spectral filter that can merge: minimum selection.
pub fn mergeable_spectral(s: &Shape) -> SpectralBloomFilter {
    spectral(s, SpectralMethod::MinimumSelection)
}

/// A spectral filter that can remove: minimum selection or recurring minimum (minimal
/// increase refuses removes, see `SpectralBloomFilter::remove`).
pub fn removable_spectral(s: &Shape) -> SpectralBloomFilter {
    let method = [
        SpectralMethod::MinimumSelection,
        SpectralMethod::RecurringMinimum,
    ];
    spectral(s, method[s.knob as usize % 2])
}

impl Build for WeightedBloomFilter {
    /// Up to 63 of the suite's items weighted, query frequencies from 1/8 to 8 (so k from
    /// 1 to k̄ + 3), in a universe of the 400 items the suite draws from (or more).
    fn make(s: &Shape) -> Self {
        let mut builder = WeightedBloomFilter::builder()
            .capacity(s.capacity)
            .fpp(s.fpp)
            .universe(400.max(2 * s.capacity))
            .hash_function(s.function)
            .index_scheme(s.scheme)
            .seed(s.seed);
        for i in 0..u32::from(s.knob % 64) {
            builder = builder.query_frequency(&(i * 5), 2f64.powi(i as i32 % 7 - 3));
        }
        builder.build().unwrap()
    }
}

impl Build for GeneralizedBloomFilter {
    /// k₀ from 0 (a classic filter) to 4.
    fn make(s: &Shape) -> Self {
        GeneralizedBloomFilter::builder()
            .capacity(s.capacity)
            .fpp(s.fpp)
            .reset_hashes(u32::from(s.knob % 5))
            .hash_function(s.function)
            .index_scheme(s.scheme)
            .seed(s.seed)
            .build()
            .unwrap()
    }
}

impl Build for ScalableBloomFilter {
    /// A third of the shapes may not grow past two layers, so that inserts are refused.
    fn make(s: &Shape) -> Self {
        let mut builder = ScalableBloomFilter::builder()
            .capacity(s.capacity)
            .fpp(s.fpp.min(0.2))
            .growth_factor([2, 4][s.knob as usize % 2])
            .tightening_ratio([0.5, 0.9][s.knob as usize / 2 % 2])
            .hash_function(s.function)
            .index_scheme(s.scheme)
            .seed(s.seed);
        if s.knob.is_multiple_of(3) {
            builder = builder.max_layers(2);
        }
        builder.build().unwrap()
    }
}

impl Build for RobustBloomFilter {
    /// By the knob: dimensions sized to meet the shape's ε (k chosen by the builder, or
    /// given), the paper's dimensions, or (knob odd) explicit primes: 3, 5 or 7 rows and the
    /// first prime past `rows + n/64` columns (a tiny, crowded matrix); k from 1 to 4.
    fn make(s: &Shape) -> Self {
        let mut builder = RobustBloomFilter::builder()
            .capacity(s.capacity)
            .fpp(s.fpp)
            .hash_function(s.function)
            .index_scheme(s.scheme)
            .seed(s.seed);
        if !s.knob.is_multiple_of(8) {
            builder = builder.num_hashes(1 + s.knob as u32 / 2 % 4);
        }
        if s.knob % 4 == 2 {
            builder = builder.paper_sizing();
        }
        if s.knob % 2 == 1 {
            let rows = [3, 5, 7][s.knob as usize % 3];
            let cols = (rows + 1 + s.capacity / 64..)
                .find(|&p| bloomkit::params::is_prime(p) && p != 61)
                .unwrap();
            builder = builder.dimensions(rows, cols);
        }
        builder.build().unwrap()
    }
}

impl Build for CuckooFilter {
    /// Small tables fill: inserts are refused once the victim slot is taken.
    fn make(s: &Shape) -> Self {
        CuckooFilter::builder()
            .capacity(s.capacity)
            .fpp(s.fpp.clamp(0.01, 0.5))
            .bucket_size([2, 4, 8][s.knob as usize % 3])
            .max_kicks([0, 3, 500][s.knob as usize / 3 % 3])
            .hash_function(s.function)
            .seed(s.seed)
            .build()
            .unwrap()
    }
}

// ---------------------------------------------------------------------------------------
// The properties
// ---------------------------------------------------------------------------------------

/// Inserts `items` one at a time and checks the insert contract at every step:
///
/// * `Ok(new)` with `new == !contains(item)` just before (both directions: `Ok(true)` only
///   for an item reported absent, `Ok(false)` only for one reported present);
/// * the item is found right after (every kind, the stable filter included);
/// * `len` grows by one per insertion in a multiset kind, by `new` in a set-like kind;
/// * an error is `Full` or `TooLarge` and leaves the filter unchanged;
///
/// and at the end that no accepted item is reported absent (not for the stable filter,
/// which forgets: it is checked right after each insertion only). Returns the accepted
/// items, in order, with repeats.
pub fn inserts<F: Subject>(filter: &mut F, items: &[u32]) -> Result<Vec<u32>, TestCaseError> {
    let kind = filter.kind();
    let mut accepted = Vec::new();
    for x in items {
        let (before, len, state) = (filter.contains(x), filter.len(), filter.state());
        match filter.try_insert(x) {
            Ok(new) => {
                prop_assert_eq!(
                    new,
                    !before,
                    "{}: try_insert({}) vs contains before",
                    kind,
                    x
                );
                prop_assert!(
                    filter.contains(x),
                    "{kind}: {x} not found right after insert"
                );
                let grown = if is_multiset(kind) { 1 } else { new as u64 };
                prop_assert_eq!(
                    filter.len(),
                    len + grown,
                    "{}: len after inserting {}",
                    kind,
                    x
                );
                accepted.push(*x);
            }
            Err(e) => {
                prop_assert!(
                    matches!(e, Error::Full { .. } | Error::TooLarge { .. }),
                    "{kind}: insert refused with {e:?}"
                );
                prop_assert!(
                    filter.state() == state,
                    "{kind}: a refused insert changed it"
                );
            }
        }
    }
    if !forgets(kind) {
        for x in &accepted {
            prop_assert!(filter.contains(x), "{kind}: false negative for {x}");
        }
    }
    Ok(accepted)
}

/// `try_extend` is `try_insert` item by item: the same filter afterwards (byte for byte),
/// the number of new items, or the first error with every item before it in. Returns the
/// error, if any.
pub fn try_extend_stops_at_the_first_error<F: Subject>(
    filter: &F,
    items: &[u32],
) -> Result<Option<Error>, TestCaseError> {
    let kind = filter.kind();
    let mut one_by_one = filter.copy();
    let (mut new, mut failed) = (0u64, None);
    let mut kept = 0;
    for x in items {
        match one_by_one.try_insert(x) {
            Ok(n) => {
                new += n as u64;
                kept += 1;
            }
            Err(e) => {
                failed = Some(e);
                break;
            }
        }
    }
    let mut extended = filter.copy();
    let result = extended.try_extend(items.iter());
    match &failed {
        None => prop_assert_eq!(result, Ok(new), "{}", kind),
        Some(e) => prop_assert_eq!(result, Err(e.clone()), "{}", kind),
    }
    prop_assert!(
        extended.state() == one_by_one.state(),
        "{kind}: try_extend built another filter than try_insert item by item"
    );
    if !forgets(kind) {
        for x in &items[..kept] {
            prop_assert!(extended.contains(x), "{kind}: {x}, before the error, lost");
        }
    }
    Ok(failed)
}

/// Checks that `copy` answers as `original` on `inserted` and `fresh` items, with the same
/// kind, hashing and length.
fn same_answers<F: Filter, G: Filter>(
    original: &F,
    copy: &G,
    inserted: &[u32],
    what: &str,
) -> Result<(), TestCaseError> {
    let kind = original.kind();
    prop_assert_eq!(copy.kind(), kind, "{}", what);
    prop_assert_eq!(copy.hashing(), original.hashing(), "{}: {}", kind, what);
    prop_assert_eq!(copy.len(), original.len(), "{}: {}", kind, what);
    for x in inserted.iter().copied().chain(fresh(300)) {
        prop_assert_eq!(
            copy.contains(&x),
            original.contains(&x),
            "{}: {} answers differently for {}",
            kind,
            what,
            x
        );
    }
    Ok(())
}

/// `to_bytes` → `from_bytes`, directly and through [`AnyFilter`]: the same answers on the
/// inserted and on fresh items, the same length and hashing, the same bytes again; and
/// the decoded filter continues exactly as the original (generator states included).
pub fn round_trip<F: Subject + Persist>(filter: &F, inserted: &[u32]) -> Result<(), TestCaseError> {
    let kind = filter.kind();
    let bytes = filter.to_bytes();
    let back = F::from_bytes(&bytes).map_err(|e| TestCaseError::fail(format!("{kind}: {e}")))?;
    same_answers(filter, &back, inserted, "the decoded copy")?;
    prop_assert!(
        back.to_bytes() == bytes,
        "{kind}: re-encoding changed the bytes"
    );
    let any =
        AnyFilter::from_bytes(&bytes).map_err(|e| TestCaseError::fail(format!("{kind}: {e}")))?;
    same_answers(filter, &any, inserted, "AnyFilter")?;
    prop_assert!(
        any.to_bytes() == bytes,
        "{kind}: AnyFilter re-encoded differently"
    );
    // Format version 2 (a checksum per chunk) decodes to the same filter, from bytes and
    // from a stream that holds more after it.
    let chunked = filter.to_bytes_chunked();
    let back2 =
        F::from_bytes(&chunked).map_err(|e| TestCaseError::fail(format!("{kind} v2: {e}")))?;
    prop_assert!(
        back2.to_bytes() == bytes,
        "{kind}: the version-2 file decoded to another filter"
    );
    let mut stream = chunked.clone();
    stream.extend_from_slice(b"tail");
    let mut reader = &stream[..];
    let streamed =
        F::read_from(&mut reader).map_err(|e| TestCaseError::fail(format!("{kind} v2: {e}")))?;
    prop_assert!(streamed.to_bytes() == bytes, "{kind}: v2 stream");
    prop_assert_eq!(reader, &b"tail"[..], "{}: v2 stream read too much", kind);
    // The copy goes on as the original would.
    let (mut original, mut copy) = (filter.copy(), back);
    for x in fresh(50).chain(inserted.iter().copied()) {
        prop_assert_eq!(copy.try_insert(&x), original.try_insert(&x), "{}", kind);
    }
    prop_assert!(
        copy.state() == original.state(),
        "{kind}: the copy diverged"
    );
    Ok(())
}

/// Saving to a file and loading it back gives the same bytes, directly and through
/// [`AnyFilter`]; saving over it replaces it and leaves no other file.
pub fn save_and_load<F: Subject + Persist>(filter: &F) {
    let kind = filter.kind();
    let tmp = TempPath::new("filter.bloom");
    filter.save(&tmp.path).unwrap();
    assert_eq!(
        std::fs::read(&tmp.path).unwrap(),
        filter.to_bytes(),
        "{kind}"
    );
    assert_eq!(
        F::load(&tmp.path).unwrap().to_bytes(),
        filter.to_bytes(),
        "{kind}"
    );
    assert_eq!(
        AnyFilter::load(&tmp.path).unwrap().to_bytes(),
        filter.to_bytes(),
        "{kind}"
    );
    let mut other = filter.copy();
    let _ = other.try_insert("one more");
    other.clear();
    other.save(&tmp.path).unwrap();
    assert_eq!(
        F::load(&tmp.path).unwrap().to_bytes(),
        other.to_bytes(),
        "{kind}"
    );
    assert_eq!(std::fs::read_dir(&tmp.dir).unwrap().count(), 1, "{kind}");
    std::fs::write(&tmp.path, b"BLOOMKIT").unwrap();
    assert!(
        matches!(F::load(&tmp.path), Err(Error::InvalidFile { .. })),
        "{kind}"
    );
}

/// Every flipped byte (three masks), every cut and one byte appended: a typed decode error
/// from the kind's decoder and from [`AnyFilter`], never a filter and never a panic.
pub fn corruption_is_refused<F: Persist + Debug>(filter: &F) {
    corruption_of_bytes_is_refused(filter, &filter.to_bytes());
    corruption_of_bytes_is_refused(filter, &filter.to_bytes_chunked());
}

/// [`corruption_is_refused`] for one encoding of `filter` (format version 1 or 2).
fn corruption_of_bytes_is_refused<F: Persist + Debug>(filter: &F, bytes: &[u8]) {
    let kind = filter.kind();
    let bytes = bytes.to_vec();
    let refused = |bad: &[u8], what: &str| {
        let direct = F::from_bytes(bad);
        assert!(
            matches!(direct, Err(Error::Decode(_))),
            "{kind}, {what}: {direct:?}"
        );
        let any = AnyFilter::from_bytes(bad);
        assert!(
            matches!(any, Err(Error::Decode(_))),
            "{kind}, {what}: AnyFilter gave {any:?}"
        );
    };
    for i in 0..bytes.len() {
        for mask in [0x01u8, 0x80, 0xff] {
            let mut bad = bytes.clone();
            bad[i] ^= mask;
            refused(&bad, &format!("byte {i} ^ {mask:#04x}"));
        }
        refused(&bytes[..i], &format!("cut at {i}"));
    }
    let mut longer = bytes.clone();
    longer.push(0);
    refused(&longer, "one byte appended");
}

/// Uses a filter in every way, to show that whatever decodes does not panic later, and
/// that `clear` empties it: afterwards no item is reported and `len` is 0.
pub fn exercise<F: Subject + Persist>(filter: &mut F) -> Result<(), TestCaseError> {
    let kind = filter.kind();
    let _ = (
        filter.properties(),
        filter.expected_fpp(),
        filter.estimated_len(),
        filter.bits_per_item(),
        filter.capacity(),
        format!("{filter:?}"),
    );
    for x in 0..100u32 {
        let _ = filter.try_insert(&x);
    }
    let back = F::from_bytes(&filter.to_bytes());
    prop_assert!(
        back.is_ok(),
        "{kind}: a used filter does not decode: {back:?}"
    );
    filter.clear();
    prop_assert_eq!(filter.len(), 0, "{}: len after clear", kind);
    prop_assert!(filter.is_empty());
    for x in (0..100u32).chain(fresh(100)) {
        prop_assert!(!filter.contains(&x), "{kind}: {x} reported after clear");
    }
    Ok(())
}

/// Edits a valid encoding at `edits` (position, new byte) and repairs the checksum, so
/// that the kind's field checks run: the result is a decode error, or a filter whose
/// encoding is exactly the input (nothing accepted is silently changed) and that can be
/// used.
pub fn resealed_corruption<F: Subject + Persist>(
    filter: &F,
    edits: &[(prop::sample::Index, u8)],
) -> Result<(), TestCaseError> {
    let kind = filter.kind();
    let mut bytes = filter.to_bytes();
    let body = bytes.len() - 8;
    for (at, value) in edits {
        bytes[at.index(body)] = *value;
    }
    reseal(&mut bytes);
    canonical_and_usable(F::from_bytes(&bytes), &bytes, kind)?;
    canonical_and_usable(AnyFilter::from_bytes(&bytes), &bytes, kind)?;
    Ok(())
}

/// The pieces of an encoding: the 24-byte prefix (magic, version, tag, hashing ids,
/// reserved bytes, seed), the parameters and the payload.
pub fn frame_parts(bytes: &[u8]) -> (&[u8], &[u8], &[u8]) {
    let params_len = u32::from_le_bytes(bytes[24..28].try_into().unwrap()) as usize;
    let params = &bytes[28..28 + params_len];
    let at = 28 + params_len;
    let payload_len = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize;
    (&bytes[..24], params, &bytes[at + 8..at + 8 + payload_len])
}

/// A valid frame around any parameters and payload: `prefix` (magic, version, kind tag,
/// hashing), both lengths right, and a correct checksum — what reaches a kind's decoder.
pub fn frame(prefix: &[u8], params: &[u8], payload: &[u8]) -> Vec<u8> {
    let mut out = prefix.to_vec();
    out.extend_from_slice(&(params.len() as u32).to_le_bytes());
    out.extend_from_slice(params);
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(payload);
    let sum = xxhash_rust::xxh3::xxh3_64(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

/// How [`hostile_fields`] makes a field from the real one.
#[derive(Clone, Copy, Debug)]
pub enum Hostile {
    /// Random bytes, as many as the real field has.
    SameLength,
    /// Random bytes, any length up to twice the real one and a few more.
    AnyLength(prop::sample::Index),
    /// The real field with a few bytes replaced.
    Edited,
    /// The real field unchanged.
    Kept,
}

/// One field built as `how` says from `real`: random bytes come from a SplitMix64
/// generator seeded with `fill`, edits are (position, byte) pairs.
fn hostile_field(
    real: &[u8],
    how: Hostile,
    fill: u64,
    edits: &[(prop::sample::Index, u8)],
) -> Vec<u8> {
    let mut rng = bloomkit::hash::SplitMix64::new(fill);
    let random = |len: usize, rng: &mut bloomkit::hash::SplitMix64| -> Vec<u8> {
        (0..len).map(|_| rng.next_u64() as u8).collect()
    };
    match how {
        Hostile::SameLength => random(real.len(), &mut rng),
        Hostile::AnyLength(len) => random(len.index(2 * real.len() + 17), &mut rng),
        Hostile::Edited => {
            let mut out = real.to_vec();
            if !out.is_empty() {
                for (at, value) in edits {
                    let i = at.index(out.len());
                    out[i] = *value;
                }
            }
            out
        }
        Hostile::Kept => real.to_vec(),
    }
}

/// Hostile parameters and payload inside a valid frame (the filter's own prefix: magic,
/// version, kind tag, hashing; right lengths; a correct checksum), so that the kind's
/// decoder — not the frame check — meets them: parameters and payload are each random
/// bytes of the real length or of any length, or the real ones with a few bytes edited,
/// or kept. The frame must parse (so the decoder is reached), and the kind's decoder and
/// [`AnyFilter`]'s must give a decode error or a filter that encodes to exactly these
/// bytes and can be used ([`exercise`]) — never a panic.
pub fn hostile_fields<F: Subject + Persist>(
    filter: &F,
    (params_how, payload_how): (Hostile, Hostile),
    (params_fill, payload_fill): (u64, u64),
    edits: &[(prop::sample::Index, u8)],
) -> Result<(), TestCaseError> {
    let kind = filter.kind();
    let real = filter.to_bytes();
    let (prefix, params, payload) = frame_parts(&real);
    let bytes = frame(
        prefix,
        &hostile_field(params, params_how, params_fill, edits),
        &hostile_field(payload, payload_how, payload_fill, edits),
    );
    let parts = bloomkit::codec::Parts::parse(&bytes);
    prop_assert!(
        parts.is_ok(),
        "{kind}: the frame itself was refused, so no decoder was reached: {parts:?}"
    );
    canonical_and_usable(F::from_bytes(&bytes), &bytes, kind)?;
    canonical_and_usable(AnyFilter::from_bytes(&bytes), &bytes, kind)
}

/// The ways [`hostile_fields`] builds a (parameters, payload) pair: something hostile in at
/// least one of them.
pub fn hostile() -> impl Strategy<Value = (Hostile, Hostile)> {
    let how = || {
        prop_oneof![
            Just(Hostile::SameLength),
            any::<prop::sample::Index>().prop_map(Hostile::AnyLength),
            Just(Hostile::Edited),
            Just(Hostile::Kept),
        ]
    };
    (how(), how()).prop_filter("something hostile", |pair| {
        !matches!(pair, (Hostile::Kept, Hostile::Kept))
    })
}

/// A decoding result: a decode error, or a filter that encodes to exactly `bytes` and can
/// be used.
fn canonical_and_usable<G: Subject + Persist>(
    decoded: Result<G, Error>,
    bytes: &[u8],
    kind: Kind,
) -> Result<(), TestCaseError> {
    match decoded {
        Ok(mut filter) => {
            prop_assert!(
                filter.to_bytes() == bytes,
                "{kind}: accepted a non-canonical encoding"
            );
            exercise(&mut filter)
        }
        Err(e) => {
            prop_assert!(matches!(e, Error::Decode(_)), "{kind}: {e:?}");
            Ok(())
        }
    }
}

/// Whether `bytes` are refused by the kind's decoder as an invalid field.
pub fn is_invalid_field<F: Persist + Debug>(bytes: &[u8]) -> bool {
    matches!(
        F::from_bytes(bytes),
        Err(Error::Decode(DecodeError::InvalidField { .. }))
    )
}

/// Counters that reached their maximum never go down (their true value is unknown): an
/// item inserted `times` times — enough to saturate its counters — is still reported
/// after as many removes, each `Ok(true)`, and the number of saturated counters reported
/// by `properties` does not change.
pub fn saturated_counters_never_decrement<F: Removable>(mut filter: F, times: u32) {
    let saturated = |f: &F| {
        f.properties()
            .into_iter()
            .find(|(label, _)| *label == "saturated counters")
            .map(|(_, value)| value.parse::<u64>().unwrap())
            .expect("a counting kind reports its saturated counters")
    };
    for _ in 0..times {
        filter.try_insert("hot").unwrap();
    }
    let before = saturated(&filter);
    assert!(before >= 1, "{}: nothing saturated", filter.kind());
    for _ in 0..times {
        assert_eq!(filter.remove("hot"), Ok(true));
    }
    assert!(filter.contains("hot"));
    assert_eq!(saturated(&filter), before);
}

/// Merges of filters built alike from `shape`: the union answers "maybe" for every item of
/// both and stores exactly what inserting both sets stores; the intersection keeps every
/// common item; filters of another seed, hash function or size are refused with
/// `Incompatible` by union and intersection, both ways, and nothing changes.
pub fn merges<F: Subject + Persist + Mergeable + Build>(
    shape: &Shape,
    common: &[u32],
    only_left: &[u32],
    only_right: &[u32],
) -> Result<(), TestCaseError> {
    merges_with(F::make, shape, common, only_left, only_right)
}

/// [`merges`] for the filters `make` builds: a kind that merges in some configurations
/// only (the spectral filter under minimum selection) passes those.
pub fn merges_with<F: Subject + Persist + Mergeable>(
    make: fn(&Shape) -> F,
    shape: &Shape,
    common: &[u32],
    only_left: &[u32],
    only_right: &[u32],
) -> Result<(), TestCaseError> {
    let build = |parts: &[&[u32]]| {
        let mut f = make(shape);
        for x in parts.iter().flat_map(|p| p.iter()) {
            f.try_insert(x).unwrap();
        }
        f
    };
    let left = build(&[common, only_left]);
    let right = build(&[common, only_right]);
    let both = build(&[common, only_left, common, only_right]);
    let kind = left.kind();

    let mut union = left.copy();
    union.union(&right).unwrap();
    for x in common.iter().chain(only_left).chain(only_right) {
        prop_assert!(union.contains(x), "{kind}: union lost {x}");
    }
    prop_assert!(
        payload(&union) == payload(&both),
        "{kind}: the union is not the filter that inserting both builds"
    );

    let mut meet = left.copy();
    meet.intersect(&right).unwrap();
    for x in common {
        prop_assert!(meet.contains(x), "{kind}: intersection lost {x}");
    }

    for (what, other) in [
        ("seed", shape.reseeded()),
        ("hash function", shape.rehashed()),
        ("size", shape.resized()),
    ] {
        let mut other = make(&other);
        if what == "hash function" && other.hashing() == left.hashing() {
            // A kind whose hash is fixed by its format (the split-block filter is XXH64,
            // as Parquet) ignores the hash function asked for: nothing differs to refuse.
            continue;
        }
        for x in only_right {
            other.try_insert(x).unwrap();
        }
        if what == "size" {
            prop_assert_ne!(other.memory_bytes(), left.memory_bytes());
        }
        for (a, b) in [(&left, &other), (&other, &left)] {
            let mut merged = a.copy();
            let r = merged.union(b);
            prop_assert!(
                matches!(r, Err(Error::Incompatible(_))),
                "{kind}, {what}: union gave {r:?}"
            );
            let r = merged.intersect(b);
            prop_assert!(
                matches!(r, Err(Error::Incompatible(_))),
                "{kind}, {what}: intersect gave {r:?}"
            );
            prop_assert!(
                merged.state() == a.state(),
                "{kind}, {what}: a refused merge changed it"
            );
        }
    }
    Ok(())
}

/// Inserts `ops`' items, then removes those flagged `true` in a shuffled order: a random
/// sub-multiset of what went in. Checks at every removal that
///
/// * removing an item still held is never `NotPresent`; it is `Ok(true)` in a multiset kind;
///   `Ok(false)` keeps the item held (and reported);
/// * `len` drops by one on `Ok(true)`, stays on `Ok(false)`;
/// * every item still held is reported present;
///
/// and, on the empty filter, after the inserts and at the end, that removing an item
/// reported absent is `Err(NotPresent)` with the filter unchanged.
pub fn removes<F: Subject + Removable>(
    mut filter: F,
    ops: &[(u32, bool)],
    order: &[prop::sample::Index],
) -> Result<(), TestCaseError> {
    let kind = filter.kind();
    let multiset = is_multiset(kind);
    absent_removes_change_nothing(&mut filter)?;
    let mut held: HashMap<u32, u32> = HashMap::new();
    let mut to_remove = Vec::new();
    for &(x, remove) in ops {
        if filter.try_insert(&x).is_ok() {
            let copies = held.entry(x).or_default();
            *copies = if multiset { *copies + 1 } else { 1 };
            if remove {
                to_remove.push(x);
            }
        }
    }
    absent_removes_change_nothing(&mut filter)?;
    for at in order {
        if to_remove.is_empty() {
            break;
        }
        let x = to_remove.swap_remove(at.index(to_remove.len()));
        if held.get(&x).copied().unwrap_or(0) == 0 {
            continue; // a set-like kind already took it out
        }
        let len = filter.len();
        match filter.remove(&x) {
            Ok(true) => {
                prop_assert_eq!(filter.len(), len.saturating_sub(1), "{}: len", kind);
                let copies = held.get_mut(&x).unwrap();
                *copies = if multiset { *copies - 1 } else { 0 };
            }
            Ok(false) => {
                prop_assert!(!multiset, "{kind}: Ok(false) removing {x}, which it holds");
                prop_assert_eq!(filter.len(), len, "{}: len", kind);
            }
            Err(e) => prop_assert!(false, "{kind}: removing {x}, which it holds: {e:?}"),
        }
        for (y, &copies) in &held {
            if copies > 0 {
                prop_assert!(filter.contains(y), "{kind}: removing {x} lost {y}");
            }
        }
    }
    absent_removes_change_nothing(&mut filter)
}

/// Removing items reported absent: `Err(NotPresent)` and the filter unchanged.
fn absent_removes_change_nothing<F: Subject + Removable>(
    filter: &mut F,
) -> Result<(), TestCaseError> {
    let kind = filter.kind();
    let state = filter.state();
    for x in fresh(50) {
        if !filter.contains(&x) {
            prop_assert_eq!(filter.remove(&x), Err(Error::NotPresent), "{}: {}", kind, x);
        }
    }
    prop_assert!(
        filter.state() == state,
        "{kind}: removing absent items changed it"
    );
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Views: a file opened over a memory map answers as the loaded filter.

/// Writes `filter` to `path` in format version 2 with chunks of 2^`shift` bytes; returns
/// where the payload starts in the file.
pub fn save_chunked_with<F: Persist>(filter: &F, path: &std::path::Path, shift: u8) -> usize {
    let (header, payload) = filter.chunked_parts(shift);
    let mut bytes = header.clone();
    bytes.extend_from_slice(&payload);
    std::fs::write(path, bytes).unwrap();
    header.len()
}

/// The file of `filter`, written in format version 1 and in version 2 with small chunks
/// (4 KiB, so that filters of a few hundred KiB have many), opened as a view: every item
/// of `probes` gets the loaded filter's answer, one by one and in a batch; the stored facts
/// and the summary (read piece by piece) are the loaded filter's, and the view loads to
/// the same filter.
pub fn view_answers_like_loaded(filter: &AnyFilter, probes: &[u32]) -> Result<(), TestCaseError> {
    use bloomkit::format::view::FilterView;
    let kind = filter.kind();
    let tmp = TempPath::new("view.bloom");
    let fail = |what: &str, e: Error| TestCaseError::fail(format!("{kind}, {what}: {e}"));
    for version in [1u16, 2] {
        if version == 1 {
            filter.save(&tmp.path).unwrap();
        } else {
            save_chunked_with(filter, &tmp.path, 12);
        }
        let loaded = AnyFilter::load(&tmp.path).map_err(|e| fail("load", e))?;
        let view = FilterView::open(&tmp.path).map_err(|e| fail("open", e))?;
        prop_assert_eq!(view.format_version(), version);
        prop_assert_eq!(view.kind(), kind);
        prop_assert_eq!(view.hashing(), loaded.hashing());
        prop_assert_eq!(view.len(), loaded.len());
        prop_assert_eq!(view.capacity(), loaded.capacity());
        prop_assert_eq!(view.target_fpp(), loaded.target_fpp());
        for x in probes {
            let answer = view.contains(x).map_err(|e| fail("contains", e))?;
            prop_assert_eq!(
                answer,
                loaded.contains(x),
                "{} v{}: item {}",
                kind,
                version,
                x
            );
            // A kind that counts counts through the view as loaded; the others refuse both.
            let count = view.count(x);
            if kind.counts() {
                let count = count.map_err(|e| fail("count", e))?;
                prop_assert_eq!(
                    count,
                    loaded.count(x).unwrap(),
                    "{} v{}: count of {}",
                    kind,
                    version,
                    x
                );
            } else {
                prop_assert!(
                    matches!(count, Err(Error::Unsupported { .. })) && loaded.count(x).is_err(),
                    "{kind} v{version}: a count of a kind that does not count"
                );
            }
        }
        let batch = view.contains_batch(probes).map_err(|e| fail("batch", e))?;
        prop_assert_eq!(
            batch,
            loaded.contains_batch(probes),
            "{} v{}",
            kind,
            version
        );
        let summary = view.summary().map_err(|e| fail("summary", e))?;
        prop_assert_eq!(summary, loaded.summary(), "{} v{}", kind, version);
        let reloaded = view.load().map_err(|e| fail("view.load", e))?;
        prop_assert!(
            reloaded.to_bytes() == filter.to_bytes(),
            "{kind} v{version}: the view loads another filter"
        );
    }
    Ok(())
}
