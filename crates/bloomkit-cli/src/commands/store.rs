//! Filter options shared by the verbs (kind, hashing, kind-specific options), and
//! creating, opening, saving and describing filters.
//!
//! Every verb works on [`AnyFilter`]. The kinds come from the library's registry
//! ([`Kind::ALL`]): `--kind` accepts every name there, and what a kind can do is asked of
//! [`Kind`]. A new kind needs nothing here unless it has options of its own: then an arm
//! in [`new_filter`] (its builder), and its flags in [`kind_only_options`].

use std::path::Path;

use anyhow::{bail, Context, Result};
use bloomkit::{
    AnyFilter, BlockedBloomFilter, BlockedBloomFilterBuilder, BloomFilter, CompressedBloomFilter,
    CompressedBloomFilterBuilder, CountingBloomFilter, CountingBloomFilterBuilder, CuckooFilter,
    CuckooFilterBuilder, DeletableBloomFilter, DeletableBloomFilterBuilder, Filter,
    GeneralizedBloomFilter, GeneralizedBloomFilterBuilder, IndexScheme, Kind, Persist,
    RobustBloomFilter, RobustBloomFilterBuilder, ScalableBloomFilter, ScalableBloomFilterBuilder,
    SpectralBloomFilter, SpectralBloomFilterBuilder, SpectralMethod, SplitBlockBloomFilter,
    SplitBlockBloomFilterBuilder, StableBloomFilter, StableBloomFilterBuilder,
    VariableIncrementBloomFilter, VariableIncrementBloomFilterBuilder, WeightedBloomFilter,
    WeightedBloomFilterBuilder,
};
use clap::{Args, ValueEnum};

/// The hash function and index scheme as named on the command line, shared with `bloomkit
/// experiment fpr`.
pub use bloomkit_experiments::{HashArg, SchemeArg};

/// `--kind`: any kind of the library's registry, by its name; the help lists each with
/// its one-line summary. Nothing here names a kind: a kind added to the registry appears
/// on the command line by itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KindArg(pub Kind);

impl Default for KindArg {
    fn default() -> Self {
        KindArg(Kind::Bloom)
    }
}

impl std::fmt::Display for KindArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.name())
    }
}

impl ValueEnum for KindArg {
    fn value_variants<'a>() -> &'a [Self] {
        static ALL: std::sync::OnceLock<Vec<KindArg>> = std::sync::OnceLock::new();
        ALL.get_or_init(|| Kind::ALL.iter().copied().map(KindArg).collect())
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.0.name()).help(self.0.summary()))
    }
}

impl KindArg {
    /// The name on the command line (the library's [`Kind::name`]).
    pub fn name(self) -> &'static str {
        self.0.name()
    }
}

/// "`a`, `b` or `c`": the names of the kinds that pass `test`.
pub fn kinds_that(test: impl Fn(Kind) -> bool) -> String {
    let names: Vec<&str> = Kind::ALL
        .iter()
        .filter(|k| test(**k))
        .map(|k| k.name())
        .collect();
    or_list(&names)
}

/// "a", "a or b", "a, b or c".
fn or_list(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// The hashing options of `create` and `build`.
#[derive(Debug, Args, Default)]
pub struct HashingArgs {
    /// The 128-bit hash function.
    #[arg(long = "hash", value_enum, default_value_t)]
    pub function: HashArg,

    /// How the k bit positions are derived from an item [default: double]. Not for cuckoo
    /// filters, which take their bucket and fingerprint from one digest.
    #[arg(long, value_enum)]
    pub scheme: Option<SchemeArg>,

    /// The per-filter hash seed (default 0).
    #[arg(long, value_name = "N", conflicts_with = "random_seed")]
    pub seed: Option<u64>,

    /// Draw the seed from the operating system's random generator.
    #[arg(long)]
    pub random_seed: bool,
}

/// The heading of the kind-specific options in `--help`.
const KIND_OPTIONS: &str = "Options of some kinds";

/// The options of `create` and `build` that only some kinds use. Each is an error for the
/// other kinds; the library validates the values.
#[derive(Debug, Args, Default)]
pub struct KindOptions {
    /// counting, vi-counting, spectral: bits per counter, 1 to 16 [default: 4 for counting,
    /// 8 for vi-counting, 16 for spectral].
    #[arg(long, help_heading = KIND_OPTIONS, value_name = "W")]
    pub counter_width: Option<u32>,

    /// spectral: how counts are kept and read — ms (minimum selection), mi (minimal
    /// increase: most accurate, no remove), rm (recurring minimum) [default: ms].
    #[arg(long, help_heading = KIND_OPTIONS, value_enum)]
    pub method: Option<MethodArg>,

    /// vi-counting: L, the smallest increment; increments are L to 2L − 1, and 2L − 1 must
    /// stay below the counter maximum [default: 4].
    #[arg(long, help_heading = KIND_OPTIONS, value_name = "L")]
    pub increment_base: Option<u32>,

    /// deletable: r, the number of regions (and of collision-bitmap bits) [default: one per
    /// 8 data bits].
    #[arg(long, help_heading = KIND_OPTIONS, value_name = "R")]
    pub regions: Option<u64>,

    /// generalized: k0, the hash functions that reset bits to 0 on each insert (--hashes is
    /// k1, those that set bits) [default: 1].
    #[arg(long, help_heading = KIND_OPTIONS, value_name = "K0")]
    pub reset_hashes: Option<u32>,

    /// weighted: a file of `ITEM<TAB>QUERY-FREQUENCY[<TAB>MEMBERSHIP]` lines: how often each
    /// listed item is queried relative to an unlisted one, and optionally how likely it is
    /// to be a member (0 to 1). Frequent items get more hash functions, rare ones fewer.
    #[arg(long, help_heading = KIND_OPTIONS, value_name = "FILE")]
    pub weights: Option<std::path::PathBuf>,

    /// weighted: N, the number of distinct items queries and members come from [default:
    /// the listed items, at least the capacity].
    #[arg(long, help_heading = KIND_OPTIONS, value_name = "N")]
    pub universe: Option<u64>,

    /// scalable: s, the factor by which each layer's capacity grows: 2 or 4 [default: 2].
    #[arg(long, help_heading = KIND_OPTIONS, value_name = "S")]
    pub growth: Option<u32>,

    /// scalable: r, the factor by which each layer's error shrinks, strictly between 0 and 1
    /// [default: 0.5].
    #[arg(long, help_heading = KIND_OPTIONS, value_name = "R")]
    pub tightening: Option<f64>,

    /// scalable: the most layers the filter may have; past them `add` fails [default: no
    /// limit].
    #[arg(long, help_heading = KIND_OPTIONS, value_name = "N")]
    pub max_layers: Option<u32>,

    /// stable: d, the bits per cell, 1 to 16 [default: 3].
    #[arg(long, help_heading = KIND_OPTIONS, value_name = "D")]
    pub cell_width: Option<u32>,

    /// stable: P, the cells decremented per insertion [default: derived from ε].
    #[arg(long, help_heading = KIND_OPTIONS, value_name = "P")]
    pub decrements: Option<u64>,

    /// cuckoo: b, the slots per bucket: 2, 4 or 8 [default: 4].
    #[arg(long, help_heading = KIND_OPTIONS, value_name = "B")]
    pub bucket_size: Option<u32>,

    /// cuckoo: f, the fingerprint width: 8, 12 or 16 bits [default: the smallest that reaches
    /// ε].
    #[arg(long, help_heading = KIND_OPTIONS, value_name = "F")]
    pub fingerprint_bits: Option<u32>,

    /// cuckoo: the most evictions per insert before the filter counts as full [default: 500].
    #[arg(long, help_heading = KIND_OPTIONS, value_name = "N")]
    pub max_kicks: Option<u32>,

    /// compressed: the most bits per item the array may take in memory; larger caps send
    /// less [default: 4 × the classic filter's].
    #[arg(long, help_heading = KIND_OPTIONS, value_name = "B")]
    pub max_bits_per_item: Option<f64>,
}

/// `--method` of a spectral filter, by the library's short names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum MethodArg {
    /// Minimum selection: every counter +1, the estimate is the smallest.
    Ms,
    /// Minimal increase: only the smallest counters +1 (no remove).
    Mi,
    /// Recurring minimum: a secondary filter for items without a recurring minimum.
    Rm,
}

impl From<MethodArg> for SpectralMethod {
    fn from(method: MethodArg) -> Self {
        match method {
            MethodArg::Ms => SpectralMethod::MinimumSelection,
            MethodArg::Mi => SpectralMethod::MinimalIncrease,
            MethodArg::Rm => SpectralMethod::RecurringMinimum,
        }
    }
}

/// How big a new filter is: from a capacity and ε, or explicit bits and hashes (the
/// library fills in whatever is left out).
#[derive(Debug, Clone, Copy, Default)]
pub struct Sizing {
    /// n, the number of items expected.
    pub capacity: Option<u64>,
    /// ε, the false-positive probability wanted at capacity.
    pub fpp: Option<f64>,
    /// m, the number of cells (every builder's `num_cells`): bits (bloom, blocked, deletable,
    /// sbbf), counters (counting, vi-counting, spectral) or cells (stable).
    pub bits: Option<u64>,
    /// k, the number of hash functions.
    pub hashes: Option<u32>,
}

/// An option that only some kinds use.
struct KindOnly {
    /// The option as written on the command line.
    flag: &'static str,
    /// Whether it was given.
    given: bool,
    /// The kinds that use it.
    kinds: &'static [Kind],
}

/// Every option that only some kinds use, whether it was given, and which kinds use it.
fn kind_only_options(sizing: &Sizing, hashing: &HashingArgs, o: &KindOptions) -> [KindOnly; 19] {
    use Kind::{
        Blocked, Bloom, Compressed, Counting, Cuckoo, Deletable, Generalized, Robust, Scalable,
        Spectral, Stable, Weighted,
    };
    const VI: Kind = Kind::VariableIncrement;
    // The kinds with one array of m slots and k hash functions.
    const SIZED: &[Kind] = &[
        Bloom,
        Blocked,
        Counting,
        VI,
        Deletable,
        Stable,
        Spectral,
        Weighted,
        Generalized,
        Compressed,
        Robust,
    ];
    // The kinds sized in bits alone (k is fixed).
    const BITS: &[Kind] = &[
        Bloom,
        Blocked,
        Counting,
        VI,
        Deletable,
        Stable,
        Kind::SplitBlock,
        Spectral,
        Weighted,
        Generalized,
        Compressed,
    ];
    // Every kind that derives k positions from an item.
    const POSITIONS: &[Kind] = &[
        Bloom,
        Counting,
        VI,
        Deletable,
        Scalable,
        Stable,
        Spectral,
        Weighted,
        Generalized,
        Compressed,
        Robust,
    ];
    let only = |flag, given, kinds| KindOnly { flag, given, kinds };
    [
        only("--bits", sizing.bits.is_some(), BITS),
        only("--hashes", sizing.hashes.is_some(), SIZED),
        only("--scheme", hashing.scheme.is_some(), POSITIONS),
        only(
            "--counter-width",
            o.counter_width.is_some(),
            &[Counting, VI, Spectral],
        ),
        only("--method", o.method.is_some(), &[Spectral]),
        only("--weights", o.weights.is_some(), &[Weighted]),
        only("--reset-hashes", o.reset_hashes.is_some(), &[Generalized]),
        only("--universe", o.universe.is_some(), &[Weighted]),
        only("--increment-base", o.increment_base.is_some(), &[VI]),
        only("--regions", o.regions.is_some(), &[Deletable]),
        only("--growth", o.growth.is_some(), &[Scalable]),
        only("--tightening", o.tightening.is_some(), &[Scalable]),
        only("--max-layers", o.max_layers.is_some(), &[Scalable]),
        only("--cell-width", o.cell_width.is_some(), &[Stable]),
        only("--decrements", o.decrements.is_some(), &[Stable]),
        only("--bucket-size", o.bucket_size.is_some(), &[Cuckoo]),
        only(
            "--fingerprint-bits",
            o.fingerprint_bits.is_some(),
            &[Cuckoo],
        ),
        only("--max-kicks", o.max_kicks.is_some(), &[Cuckoo]),
        only(
            "--max-bits-per-item",
            o.max_bits_per_item.is_some(),
            &[Compressed],
        ),
    ]
}

/// Refuses an option that `kind` does not use, rather than ignoring it.
fn check_options(
    kind: KindArg,
    sizing: &Sizing,
    hashing: &HashingArgs,
    options: &KindOptions,
) -> Result<()> {
    for option in kind_only_options(sizing, hashing, options) {
        if option.given && !option.kinds.contains(&kind.0) {
            let why = match (option.flag, kind.0) {
                ("--scheme", Kind::Blocked) => {
                    " (a blocked filter derives all its positions inside one block from one \
                     digest)"
                }
                ("--scheme", Kind::Cuckoo) => {
                    " (a cuckoo filter takes its bucket and fingerprint from one digest; there \
                     are no positions to derive)"
                }
                ("--bits" | "--hashes", Kind::Scalable) => {
                    " (its layers are sized from --capacity and --fpp)"
                }
                ("--bits", Kind::Robust) => {
                    " (its X × Y matrix is sized from --capacity and --fpp as the robustBF paper \
                     does)"
                }
                ("--bits" | "--hashes", Kind::Cuckoo) => {
                    " (it is sized from --capacity and --fpp, with --bucket-size and \
                     --fingerprint-bits)"
                }
                _ => "",
            };
            let names: Vec<&str> = option.kinds.iter().map(|k| k.name()).collect();
            bail!(
                "{} does not apply to a {} filter{why}; it is for --kind {}",
                option.flag,
                kind.name(),
                or_list(&names)
            );
        }
    }
    Ok(())
}

/// `builder.method(value)` when the value was given, else the builder unchanged.
fn set<B, T>(builder: B, value: Option<T>, method: impl FnOnce(B, T) -> B) -> B {
    match value {
        Some(value) => method(builder, value),
        None => builder,
    }
}

/// Applies what every builder shares: capacity, ε, hash function, seed.
macro_rules! common {
    ($builder:expr, $sizing:expr, $hashing:expr) => {{
        let mut builder = $builder.hash_function($hashing.function.into());
        if let Some(n) = $sizing.capacity {
            builder = builder.capacity(n);
        }
        if let Some(fpp) = $sizing.fpp {
            builder = builder.fpp(fpp);
        }
        if let Some(seed) = $hashing.seed {
            builder = builder.seed(seed);
        }
        if $hashing.random_seed {
            builder = builder.random_seed();
        }
        builder
    }};
}

/// `common!`, then the options of a kind with m cells, k hash functions and a choice of
/// index scheme: `--scheme`, `--bits` (m) and `--hashes` (k).
macro_rules! array_kind {
    ($builder:expr, $sizing:expr, $hashing:expr, $scheme:expr) => {{
        let b = common!($builder, $sizing, $hashing);
        let b = set(b, $scheme, |b, s| b.index_scheme(s));
        let b = set(b, $sizing.bits, |b, m| b.num_cells(m));
        set(b, $sizing.hashes, |b, k| b.num_hashes(k))
    }};
}

/// A new, empty filter of `kind`, from its builder. Options that `kind` does not use are an
/// error; values the kind cannot take are the library's errors.
pub fn new_filter(
    kind: KindArg,
    sizing: Sizing,
    hashing: &HashingArgs,
    options: &KindOptions,
) -> Result<AnyFilter> {
    check_options(kind, &sizing, hashing, options)?;
    let scheme = hashing.scheme.map(IndexScheme::from);
    let o = options;
    let built: Result<AnyFilter, bloomkit::Error> = match kind.0 {
        Kind::Bloom => {
            let b = array_kind!(BloomFilter::builder(), sizing, hashing, scheme);
            b.build().map(AnyFilter::from)
        }
        Kind::Blocked => {
            type B = BlockedBloomFilterBuilder;
            let b = common!(BlockedBloomFilter::builder(), sizing, hashing);
            let b = set(b, sizing.bits, B::num_cells);
            let b = set(b, sizing.hashes, B::num_hashes);
            b.build().map(AnyFilter::from)
        }
        Kind::Counting => {
            type B = CountingBloomFilterBuilder;
            let b = array_kind!(CountingBloomFilter::builder(), sizing, hashing, scheme);
            let b = set(b, o.counter_width, B::counter_width);
            b.build().map(AnyFilter::from)
        }
        Kind::VariableIncrement => {
            type B = VariableIncrementBloomFilterBuilder;
            let b = array_kind!(
                VariableIncrementBloomFilter::builder(),
                sizing,
                hashing,
                scheme
            );
            let b = set(b, o.counter_width, B::counter_width);
            let b = set(b, o.increment_base, B::increment_base);
            b.build().map(AnyFilter::from)
        }
        Kind::Deletable => {
            type B = DeletableBloomFilterBuilder;
            let b = array_kind!(DeletableBloomFilter::builder(), sizing, hashing, scheme);
            let b = set(b, o.regions, B::regions);
            b.build().map(AnyFilter::from)
        }
        Kind::Scalable => {
            type B = ScalableBloomFilterBuilder;
            let b = common!(ScalableBloomFilter::builder(), sizing, hashing);
            let b = set(b, scheme, B::index_scheme);
            let b = set(b, o.growth, B::growth_factor);
            let b = set(b, o.tightening, B::tightening_ratio);
            let b = set(b, o.max_layers, B::max_layers);
            b.build().map(AnyFilter::from)
        }
        Kind::Stable => {
            type B = StableBloomFilterBuilder;
            let b = array_kind!(StableBloomFilter::builder(), sizing, hashing, scheme);
            let b = set(b, o.cell_width, B::cell_width);
            let b = set(b, o.decrements, B::decrements);
            b.build().map(AnyFilter::from)
        }
        Kind::SplitBlock => {
            // Parquet's hash is XXH64; --hash picks among the 128-bit functions.
            if hashing.function != HashArg::default() {
                bail!("--hash does not apply to an sbbf filter: it hashes with XXH64, as Parquet");
            }
            type B = SplitBlockBloomFilterBuilder;
            let mut b = SplitBlockBloomFilter::builder();
            b = set(b, sizing.capacity, B::capacity);
            b = set(b, sizing.fpp, B::fpp);
            b = set(b, sizing.bits, B::num_cells);
            b = set(b, hashing.seed, B::seed);
            if hashing.random_seed {
                b = b.random_seed();
            }
            b.build().map(AnyFilter::from)
        }
        Kind::Compressed => {
            type B = CompressedBloomFilterBuilder;
            let b = array_kind!(CompressedBloomFilter::builder(), sizing, hashing, scheme);
            let b = set(b, o.max_bits_per_item, B::max_bits_per_item);
            b.build().map(AnyFilter::from)
        }
        Kind::Cuckoo => {
            type B = CuckooFilterBuilder;
            let b = common!(CuckooFilter::builder(), sizing, hashing);
            let b = set(b, o.bucket_size, B::bucket_size);
            let b = set(b, o.fingerprint_bits, B::fingerprint_bits);
            let b = set(b, o.max_kicks, B::max_kicks);
            b.build().map(AnyFilter::from)
        }
        Kind::Spectral => {
            type B = SpectralBloomFilterBuilder;
            let b = array_kind!(SpectralBloomFilter::builder(), sizing, hashing, scheme);
            let b = set(b, o.counter_width, B::counter_width);
            let b = set(b, o.method.map(SpectralMethod::from), B::method);
            b.build().map(AnyFilter::from)
        }
        Kind::Generalized => {
            type B = GeneralizedBloomFilterBuilder;
            let b = common!(GeneralizedBloomFilter::builder(), sizing, hashing);
            let b = set(b, scheme, B::index_scheme);
            let b = set(b, sizing.bits, B::num_cells);
            let b = set(b, sizing.hashes, B::set_hashes);
            let b = set(b, o.reset_hashes, B::reset_hashes);
            b.build().map(AnyFilter::from)
        }
        Kind::Weighted => {
            type B = WeightedBloomFilterBuilder;
            let b = array_kind!(WeightedBloomFilter::builder(), sizing, hashing, scheme);
            let mut b = set(b, o.universe, B::universe);
            if let Some(path) = &o.weights {
                for (item, q, p) in read_weights(path)? {
                    b = match p {
                        Some(p) => b.weight(&item[..], q, p),
                        None => b.query_frequency(&item[..], q),
                    };
                }
            }
            b.build().map(AnyFilter::from)
        }
        Kind::Robust => {
            type B = RobustBloomFilterBuilder;
            let b = common!(RobustBloomFilter::builder(), sizing, hashing);
            let b = set(b, scheme, B::index_scheme);
            let b = set(b, sizing.hashes, B::num_hashes);
            b.build().map(AnyFilter::from)
        }
        // A kind with no options of its own: sized by the registry.
        other => match sizing.capacity {
            Some(n) => AnyFilter::with_capacity(other, n, sizing.fpp.unwrap_or(0.01)),
            None => Err(bloomkit::Error::ZeroCapacity),
        },
    };
    built.with_context(|| format!("cannot create a {} filter", kind.name()))
}

/// One line of a `--weights` file: the item, its query frequency, its membership likelihood.
type WeightLine = (Vec<u8>, f64, Option<f64>);

/// The lines of a `--weights` file: `ITEM<TAB>QUERY-FREQUENCY[<TAB>MEMBERSHIP]`. The
/// library checks the values; here only their form.
fn read_weights(path: &Path) -> Result<Vec<WeightLine>> {
    let text = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in super::input::lines(&text).enumerate() {
        if line.is_empty() {
            continue;
        }
        let fields: Vec<&[u8]> = line.split(|&b| b == b'\t').collect();
        let number = |field: &[u8], what: &str| -> Result<f64> {
            std::str::from_utf8(field)
                .ok()
                .and_then(|s| s.trim().parse().ok())
                .with_context(|| {
                    format!(
                        "{} line {}: the {what} is not a number",
                        path.display(),
                        i + 1
                    )
                })
        };
        match fields[..] {
            [item, q] => out.push((item.to_vec(), number(q, "query frequency")?, None)),
            [item, q, p] => out.push((
                item.to_vec(),
                number(q, "query frequency")?,
                Some(number(p, "membership")?),
            )),
            _ => bail!(
                "{} line {}: expected ITEM<TAB>QUERY-FREQUENCY[<TAB>MEMBERSHIP]",
                path.display(),
                i + 1
            ),
        }
    }
    Ok(out)
}

/// How a command that rewrites a filter file waits for another writer of the same file.
#[derive(Debug, Args)]
pub struct WriterArgs {
    /// Fail at once if another bloomkit command is changing the file, instead of waiting
    /// for it to finish.
    #[arg(long)]
    pub no_wait: bool,
}

/// Takes the exclusive lock on a filter file that a command is about to read, change and
/// save ([`bloomkit::FileLock`]); hold it until the save is done. Two writers of one file
/// then run one after the other, and the second one reads what the first one saved: nothing
/// is lost. Waits for another writer (saying so on standard error), or with `--no-wait`
/// fails at once.
pub fn lock_for_update(path: &Path, writer: &WriterArgs) -> Result<bloomkit::FileLock> {
    if let Some(lock) = bloomkit::FileLock::try_exclusive(path)? {
        return Ok(lock);
    }
    if writer.no_wait {
        bail!(
            "{}: another bloomkit command is changing this file; try again when it has \
             finished (or leave out --no-wait to wait for it)",
            path.display()
        );
    }
    eprintln!(
        "{}: waiting for another bloomkit command that is changing this file…",
        path.display()
    );
    Ok(bloomkit::FileLock::exclusive(path)?)
}

/// Reads a filter file of any kind. The library's error already names the file and what is
/// wrong with it ("F is not a valid filter file: truncated: …").
pub fn open(path: &Path) -> Result<AnyFilter> {
    Ok(AnyFilter::load(path)?)
}

/// Writes a filter file atomically: on any failure the old file, if any, is left as it was.
pub fn save(filter: &AnyFilter, path: &Path) -> Result<()> {
    if path.as_os_str().is_empty() {
        bail!("the output file name is empty");
    }
    Ok(filter.save(path)?)
}

/// A one-line description of a filter's parameters.
pub fn describe(filter: &AnyFilter) -> String {
    let hashing = filter.hashing();
    let scheme = if filter.kind().uses_index_scheme() {
        format!("{}, ", hashing.scheme.name())
    } else {
        String::new()
    };
    let common = format!(
        "{}, {scheme}seed {}, {} in memory",
        hashing.function.name(),
        hashing.seed,
        human_bytes(filter.memory_bytes() as u64)
    );
    let at = |capacity: u64, fpp: f64| format!("capacity {capacity} at ε = {}", probability(fpp));
    match filter {
        AnyFilter::Bloom(f) => format!(
            "bloom filter: m = {} bits, k = {}, {}, {common}",
            f.num_bits(),
            f.num_hashes(),
            at(f.capacity(), f.target_fpp())
        ),
        AnyFilter::Blocked(f) => format!(
            "blocked filter: {} blocks of 512 bits (m = {}), k = {}, {}, {common}",
            f.num_blocks(),
            f.num_bits(),
            f.num_hashes(),
            at(f.capacity(), f.target_fpp())
        ),
        AnyFilter::Counting(f) => format!(
            "counting filter: m = {} counters of {} bits, k = {}, {}, {common}",
            f.num_counters(),
            f.counter_width(),
            f.num_hashes(),
            at(f.capacity(), f.target_fpp())
        ),
        AnyFilter::VariableIncrement(f) => format!(
            "vi-counting filter: m = {} counters of {} bits, k = {}, increments {}..={}, {}, \
             {common}",
            f.num_counters(),
            f.counter_width(),
            f.num_hashes(),
            f.increment_base(),
            2 * f.increment_base() - 1,
            at(f.capacity(), f.target_fpp())
        ),
        AnyFilter::Deletable(f) => format!(
            "deletable filter: m = {} bits in {} regions, k = {}, {}, {common}",
            f.num_bits(),
            f.regions(),
            f.num_hashes(),
            at(f.capacity(), f.target_fpp())
        ),
        AnyFilter::Scalable(f) => format!(
            "scalable filter: {}, first layer capacity {}, growth {}, tightening {}, \
             ε ≤ {}, {common}",
            count(f.num_layers() as u64, "layer"),
            f.initial_capacity(),
            f.growth_factor(),
            f.tightening_ratio(),
            probability(f.target_fpp())
        ),
        AnyFilter::Stable(f) => format!(
            "stable filter: m = {} cells of {} bits, K = {}, P = {}, capacity {} at stable ε = \
             {}, {common}",
            f.num_cells(),
            f.cell_width(),
            f.num_hashes(),
            f.decrements(),
            f.capacity(),
            probability(f.target_fpp())
        ),
        AnyFilter::Cuckoo(f) => format!(
            "cuckoo filter: {} of {} slots, {}-bit fingerprints, {}, {common}",
            count(f.num_buckets(), "bucket"),
            f.bucket_size(),
            f.fingerprint_bits(),
            at(f.capacity(), f.target_fpp())
        ),
        AnyFilter::SplitBlock(f) => format!(
            "sbbf filter: Parquet split block, {} blocks of 256 bits ({} bytes), k = 8, {}, \
             {common}",
            f.num_blocks(),
            f.num_bytes(),
            at(f.capacity(), f.target_fpp())
        ),
        AnyFilter::Spectral(f) => format!(
            "spectral filter: m = {} counters of {} bits{}, k = {}, method {}, {}, {common}",
            f.num_counters(),
            f.counter_width(),
            match f.secondary_counters() {
                0 => String::new(),
                s => format!(" (+ {s} secondary)"),
            },
            f.num_hashes(),
            f.method(),
            at(f.capacity(), f.target_fpp())
        ),
        AnyFilter::Generalized(f) => format!(
            "generalized filter: m = {} bits, k1 = {} set, k0 = {} reset, {}, fpp ≤ {} at any \
             fill, {common}",
            f.num_bits(),
            f.set_hashes(),
            f.reset_hashes(),
            at(f.capacity(), f.target_fpp()),
            probability(f.false_positive_bound())
        ),
        AnyFilter::Weighted(f) => format!(
            "weighted filter: m = {} bits, k = {} for ordinary items, {} weighted items, {}, \
             {common}",
            f.num_bits(),
            f.default_hashes(),
            f.weighted_items(),
            at(f.capacity(), f.target_fpp())
        ),
        AnyFilter::Compressed(f) => format!(
            "compressed filter: m = {} bits, k = {}, {}, saved arithmetic-coded ({} of \
             payload), {common}",
            f.num_bits(),
            f.num_hashes(),
            at(f.capacity(), f.target_fpp()),
            human_bytes(f.compressed_len() as u64)
        ),
        AnyFilter::Robust(f) => format!(
            "robust filter: {} × {} words of 64 bits (61 used), k = {}, {} (sized by the paper \
             for ε = {}), {common}",
            f.rows(),
            f.cols(),
            f.num_hashes(),
            at(f.capacity(), f.target_fpp()),
            probability(f.asked_fpp())
        ),
        other => format!("{} filter: {common}", other.kind()),
    }
}

/// "1 layer", "2 layers".
fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// A probability with six decimals, or in scientific notation when that would hide it.
pub fn probability(p: f64) -> String {
    if p == 0.0 || p >= 1e-4 {
        format!("{p:.6}")
    } else {
        format!("{p:.3e}")
    }
}

/// A byte count in binary units ("1.5 MiB").
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_bytes_uses_binary_units() {
        assert_eq!(human_bytes(0), "0 B");
        assert_eq!(human_bytes(1023), "1023 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(12 << 20), "12.0 MiB");
    }

    #[test]
    fn lists_read_as_english() {
        assert_eq!(or_list(&["a"]), "a");
        assert_eq!(or_list(&["a", "b"]), "a or b");
        assert_eq!(or_list(&["a", "b", "c"]), "a, b or c");
        assert_eq!(
            kinds_that(Kind::can_remove),
            "counting, vi-counting, deletable, cuckoo or spectral"
        );
    }

    #[test]
    fn every_kind_has_a_name_on_the_command_line() {
        let names: Vec<String> = KindArg::value_variants()
            .iter()
            .map(|kind| {
                let value = kind.to_possible_value().expect("no kind is hidden");
                assert_eq!(value.get_name(), kind.name());
                value.get_name().to_owned()
            })
            .collect();
        let registry: Vec<String> = Kind::ALL.iter().map(|k| k.name().to_owned()).collect();
        assert_eq!(names, registry);
    }

    #[test]
    fn small_probabilities_stay_visible() {
        assert_eq!(probability(0.01), "0.010000");
        assert_eq!(probability(0.0), "0.000000");
        assert_eq!(probability(1.5e-9), "1.500e-9");
    }
}
