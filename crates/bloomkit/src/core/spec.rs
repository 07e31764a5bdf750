//! Building a filter of any kind from one description, and what each kind declares for
//! it: the options its builder takes, and the few things a program that learns the kind at
//! run time needs beyond [`Filter`] (batches, counts, a one-line description).
//!
//! A [`BuildSpec`] says what a filter should be: capacity, ε, the options several kinds
//! share (m, k, index scheme, hash function, seed) and any kind's own options by name, as
//! `(name, value)` strings. [`AnyFilter::build`](crate::AnyFilter::build) hands it to the
//! kind's builder. Which options a kind takes is declared next to the kind, in
//! `kinds/<kind>/options.rs`, as a list of [`KindOption`]s: the name (spelled as the
//! command line spells the flag), the value's type, a help text, the default, and the
//! builder method that applies it. An option the kind does not take is an
//! [`Error::OptionNotTaken`] that names the kinds that do take it — from these lists, so
//! that the answer is never out of date.
//!
//! The CLI builds its `--kind` options from [`Kind::options`], so a new kind's options
//! reach the command line without a change there.

use std::path::Path;

use crate::error::Error;
use crate::filter::Kind;
use crate::hash::{HashFunction, IndexScheme};
use crate::registry::Registered;

/// The option m: the number of cells (bits, counters, cells — each kind says which), instead
/// of deriving it from capacity and ε.
pub const BITS: &str = "bits";
/// The option k: the number of hash functions, instead of the best one.
pub const HASHES: &str = "hashes";
/// The option that chooses how k positions are derived from a digest ([`IndexScheme`]).
pub const SCHEME: &str = "scheme";
/// The option that chooses the 128-bit hash function ([`HashFunction`]).
pub const HASH: &str = "hash";

/// The options that several kinds share, beside capacity, ε and the seed (which every kind
/// takes). A [`BuildSpec`] has a typed field for each; every kind declares which of them it
/// takes, as it declares its own options.
pub const COMMON_OPTIONS: [&str; 4] = [BITS, HASHES, SCHEME, HASH];

/// What a filter should be, for [`AnyFilter::build`](crate::AnyFilter::build): any field
/// left out is the kind's default.
///
/// ```
/// use bloomkit::registry::BuildSpec;
/// use bloomkit::{AnyFilter, Error, Filter, Kind};
///
/// let spec = BuildSpec::new(1_000, 0.01).option("counter-width", "8");
/// let counting = AnyFilter::build(Kind::Counting, &spec)?;
/// assert!(counting.properties().contains(&("counter width", "8 bits".into())));
/// // A classic filter has no counters: the error names the kinds that have.
/// let refused = AnyFilter::build(Kind::Bloom, &spec).unwrap_err();
/// assert!(matches!(refused, Error::OptionNotTaken { .. }));
/// assert!(refused.to_string().contains("counting, vi-counting or spectral"));
/// # Ok::<(), Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BuildSpec {
    /// n, the number of items expected.
    pub capacity: Option<u64>,
    /// ε, the false-positive probability wanted at capacity.
    pub fpp: Option<f64>,
    /// m, the number of cells (option [`BITS`]).
    pub num_cells: Option<u64>,
    /// k, the number of hash functions (option [`HASHES`]).
    pub num_hashes: Option<u32>,
    /// How positions are derived (option [`SCHEME`]).
    pub index_scheme: Option<IndexScheme>,
    /// The hash function (option [`HASH`]).
    pub hash_function: Option<HashFunction>,
    /// The per-filter hash seed.
    pub seed: Option<u64>,
    /// Draw the seed from the operating system's random generator.
    pub random_seed: bool,
    /// The kind's own options, `(name, value)`, as [`Kind::options`] lists them (the common
    /// ones may be given here too, by name).
    pub options: Vec<(String, String)>,
}

impl BuildSpec {
    /// A filter for `capacity` items at false-positive probability `fpp`.
    pub fn new(capacity: u64, fpp: f64) -> Self {
        BuildSpec {
            capacity: Some(capacity),
            fpp: Some(fpp),
            ..BuildSpec::default()
        }
    }

    /// The spec with the option `name` set to `value`.
    pub fn option(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.options.push((name.into(), value.into()));
        self
    }

    /// Every option given, the typed common ones first, with their values.
    fn given(&self) -> Vec<(&str, Value<'_>)> {
        let mut given = Vec::new();
        if let Some(m) = self.num_cells {
            given.push((BITS, Value::U64(m)));
        }
        if let Some(k) = self.num_hashes {
            given.push((HASHES, Value::U32(k)));
        }
        if let Some(scheme) = self.index_scheme {
            given.push((SCHEME, Value::Scheme(scheme)));
        }
        if let Some(function) = self.hash_function {
            given.push((HASH, Value::Hash(function)));
        }
        given.extend(
            self.options
                .iter()
                .map(|(name, value)| (name.as_str(), Value::Text(value.as_str()))),
        );
        given
    }
}

/// The type of an option's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ValueType {
    /// A whole number up to 2³² − 1.
    U32,
    /// A whole number up to 2⁶⁴ − 1.
    U64,
    /// A number (decimal or scientific notation).
    F64,
    /// An index scheme, by its [name](IndexScheme::name).
    IndexScheme,
    /// A hash function, by its [name](HashFunction::name).
    HashFunction,
    /// One of a list of names.
    Choice(&'static [Choice]),
    /// The path of a file the option reads.
    File,
}

/// One of the values of a [`ValueType::Choice`] option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choice {
    /// The value as written.
    pub name: &'static str,
    /// What it means.
    pub help: &'static str,
}

/// An option of a kind, as [`Kind::options`] lists it: everything a command line needs to
/// offer it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OptionInfo {
    /// The name, as a command-line flag without its dashes (`counter-width`).
    pub name: &'static str,
    /// A short placeholder for the value in help texts (`W`).
    pub value_name: &'static str,
    /// The value's type.
    pub value: ValueType,
    /// What the option sets, for this kind. Kinds that share an option share its help,
    /// except for the common options ([`COMMON_OPTIONS`]), where it is the kind's own note
    /// (for [`BITS`], what a cell is).
    pub help: &'static str,
    /// The kind's default, in words (empty when there is nothing to say).
    pub default: &'static str,
    /// A value the kind takes, other than its default (for a file option, the content of a
    /// valid file). Tests build every kind with every option set to it.
    pub example: &'static str,
}

impl OptionInfo {
    /// Checks that `value` is of the option's type, as [`AnyFilter::build`] will read it
    /// (whether the kind accepts the value is for the kind's builder to say).
    ///
    /// [`AnyFilter::build`]: crate::AnyFilter::build
    pub fn check(&self, value: &str) -> Result<(), Error> {
        Value::Text(value).read(self).map(drop)
    }
}

/// An option's value, as given or as read.
#[derive(Clone, Copy, Debug)]
enum Value<'a> {
    /// As given in [`BuildSpec::options`]: still to be read as the option's type.
    Text(&'a str),
    U32(u32),
    U64(u64),
    F64(f64),
    Scheme(IndexScheme),
    Hash(HashFunction),
    File(&'a Path),
}

impl<'a> Value<'a> {
    /// The value as the option's type; an error naming the option if it is not one.
    fn read(self, option: &OptionInfo) -> Result<Value<'a>, Error> {
        let Value::Text(text) = self else {
            return Ok(self);
        };
        let invalid = |expected: String| Error::InvalidOptionValue {
            option: option.name.to_owned(),
            value: text.to_owned(),
            expected,
        };
        let trimmed = text.trim();
        match option.value {
            ValueType::U32 => parse_whole_number(trimmed, u32::MAX.into())
                .map(|n| Value::U32(n as u32))
                .map_err(|e| invalid(e.expected())),
            ValueType::U64 => parse_whole_number(trimmed, u64::MAX)
                .map(Value::U64)
                .map_err(|e| invalid(e.expected())),
            ValueType::F64 => trimmed
                .parse()
                .map(Value::F64)
                .map_err(|_| invalid("a number".to_owned())),
            ValueType::IndexScheme => (1..=u8::MAX)
                .map_while(|id| IndexScheme::from_id(id).ok())
                .find(|s| s.name() == trimmed)
                .map(Value::Scheme)
                .ok_or_else(|| invalid("an index scheme's name (enhanced-double, …)".into())),
            ValueType::HashFunction => (1..=u8::MAX)
                .map_while(|id| HashFunction::from_id(id).ok())
                .find(|f| f.name() == trimmed)
                .map(Value::Hash)
                .ok_or_else(|| invalid("a hash function's name (murmur3-x64-128, …)".into())),
            ValueType::Choice(choices) => choices
                .iter()
                .find(|c| c.name == trimmed)
                .map(|c| Value::Text(c.name))
                .ok_or_else(|| {
                    let names: Vec<&str> = choices.iter().map(|c| c.name).collect();
                    invalid(format!("one of {}", or_list(&names)))
                }),
            ValueType::File => Ok(Value::File(Path::new(text))),
        }
    }
}

/// A whole number from 0 to `max` as a person writes a count: digits, with `_` between
/// them (`1_000_000`), or a decimal or scientific number that is exactly a whole number
/// (`1e6`, `2.5e3`, `1.0`). Every count an option or a command line takes is read by it.
/// The error ([`WholeNumberError`]) says what is wrong with `text` (not a number, negative,
/// not a whole number, more than `max`) and what would do, in one message.
///
/// ```
/// use bloomkit::registry::parse_whole_number;
/// for text in ["1000000", "1e6", "1E+6", "1_000_000", "1.0e6", "0.001e9"] {
///     assert_eq!(parse_whole_number(text, u64::MAX), Ok(1_000_000), "{text}");
/// }
/// assert_eq!(parse_whole_number("2.5e3", u64::MAX), Ok(2_500));
/// assert_eq!(parse_whole_number("18446744073709551615", u64::MAX), Ok(u64::MAX));
/// let why = |text, max| parse_whole_number(text, max).unwrap_err().reason().to_owned();
/// assert_eq!(why("1.5", u64::MAX), "1.5 is not a whole number");
/// assert_eq!(why("1e-3", u64::MAX), "1e-3 is not a whole number");
/// assert_eq!(why("-1", u64::MAX), "-1 is negative");
/// assert_eq!(why("1e400", u64::MAX), "1e400 is more than 18446744073709551615");
/// assert_eq!(why("5e9", u32::MAX.into()), "5e9 is more than 4294967295");
/// assert_eq!(why("1__0", u64::MAX), "1__0 is not a number");
/// // The message: what is wrong, then what would do.
/// assert_eq!(
///     parse_whole_number("1.5", 100).unwrap_err().to_string(),
///     "1.5 is not a whole number; expected a whole number from 0 to 100 \
///      (1000000, 1e6 and 1_000_000 are read alike)"
/// );
/// ```
pub fn parse_whole_number(text: &str, max: u64) -> Result<u64, WholeNumberError> {
    let text = text.trim();
    let error = |reason: String| WholeNumberError { reason, max };
    let not_a_number = || error(format!("{text} is not a number"));
    // Digits, with each `_` between two digits; `None` for anything else.
    let digits = |part: &str| -> Option<String> {
        let bytes = part.as_bytes();
        let fine = bytes.iter().enumerate().all(|(i, &b)| {
            b.is_ascii_digit()
                || (b == b'_'
                    && i > 0
                    && bytes[i - 1].is_ascii_digit()
                    && bytes.get(i + 1).is_some_and(u8::is_ascii_digit))
        });
        fine.then(|| part.replace('_', ""))
    };
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (mantissa, exponent) = match unsigned.split_once(['e', 'E']) {
        Some((mantissa, exponent)) => (mantissa, Some(exponent)),
        None => (unsigned, None),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let (Some(whole), Some(fraction)) = (digits(whole), digits(fraction)) else {
        return Err(not_a_number());
    };
    if whole.is_empty() && fraction.is_empty() {
        return Err(not_a_number());
    }
    // The exponent, held to ±10⁹: past that, any digit but 0 is out of range either way.
    let exponent: i64 = match exponent {
        None => 0,
        Some(e) => {
            let (sign, magnitude) = match e.strip_prefix('-') {
                Some(m) => (-1, m),
                None => (1, e.strip_prefix('+').unwrap_or(e)),
            };
            if magnitude.is_empty() || !magnitude.bytes().all(|b| b.is_ascii_digit()) {
                return Err(not_a_number());
            }
            sign * magnitude
                .parse::<i64>()
                .unwrap_or(i64::MAX)
                .min(1_000_000_000)
        }
    };
    // The value is `significant × 10^shift`, its digits without leading zeros.
    let all = format!("{whole}{fraction}");
    let significant = all.trim_start_matches('0');
    if significant.is_empty() {
        return Ok(0);
    }
    if negative {
        return Err(error(format!("{text} is negative")));
    }
    let mut shift = exponent - fraction.len() as i64;
    let mut significant = significant;
    if shift < 0 {
        // The digits after the point must be zeros.
        let dropped = usize::try_from(-shift).unwrap_or(usize::MAX);
        let kept = significant.len().saturating_sub(dropped);
        if kept == 0 || significant[kept..].bytes().any(|b| b != b'0') {
            return Err(error(format!("{text} is not a whole number")));
        }
        significant = &significant[..kept];
        shift = 0;
    }
    let too_large = || error(format!("{text} is more than {max}"));
    // u64::MAX has 20 digits.
    if significant.len() as i64 + shift > 20 {
        return Err(too_large());
    }
    let value = significant
        .parse::<u128>()
        .ok()
        .and_then(|v| v.checked_mul(10u128.pow(shift as u32)))
        .ok_or_else(too_large)?;
    u64::try_from(value)
        .ok()
        .filter(|&v| v <= max)
        .ok_or_else(too_large)
}

/// Why a text is not a whole number from 0 to some maximum ([`parse_whole_number`]). Its
/// message says both what is wrong and what would do: "1.5 is not a whole number; expected
/// a whole number from 0 to 4294967295 (1000000, 1e6 and 1_000_000 are read alike)", so a
/// command line or an option reader shows it as it is.
///
/// ```
/// use bloomkit::registry::parse_whole_number;
/// let error = parse_whole_number("-1", 10).unwrap_err();
/// assert_eq!(error.reason(), "-1 is negative");
/// assert_eq!(
///     error.expected(),
///     "a whole number from 0 to 10 (1000000, 1e6 and 1_000_000 are read alike)"
/// );
/// assert_eq!(error.to_string(), format!("{}; expected {}", error.reason(), error.expected()));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{reason}; expected {}", self.expected())]
pub struct WholeNumberError {
    reason: String,
    max: u64,
}

impl WholeNumberError {
    /// What is wrong with the text ("1.5 is not a whole number", "-1 is negative", "5e9 is
    /// more than 4294967295", "lots is not a number").
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// What [`parse_whole_number`] would have taken: "a whole number from 0 to `max`
    /// (1000000, 1e6 and 1_000_000 are read alike)".
    pub fn expected(&self) -> String {
        format!(
            "a whole number from 0 to {} (1000000, 1e6 and 1_000_000 are read alike)",
            self.max
        )
    }
}

/// How an option sets a builder `B`: the builder method, by the type of its value.
pub(crate) enum Apply<B> {
    U32(fn(B, u32) -> B),
    U64(fn(B, u64) -> B),
    F64(fn(B, f64) -> B),
    Scheme(fn(B, IndexScheme) -> B),
    Hash(fn(B, HashFunction) -> B),
    /// The value is one of the names (checked before the call).
    Choice(&'static [Choice], fn(B, &str) -> B),
    /// The value is a file to read.
    File(fn(B, &Path) -> Result<B, Error>),
}

/// An option of a kind whose builder is `B`: what [`Kind::options`] shows of it, and the
/// builder method that applies it. Declared in each kind's `options.rs`.
pub(crate) struct KindOption<B> {
    pub(crate) name: &'static str,
    pub(crate) value_name: &'static str,
    pub(crate) help: &'static str,
    pub(crate) default: &'static str,
    pub(crate) example: &'static str,
    pub(crate) apply: Apply<B>,
}

impl<B> KindOption<B> {
    /// An option of the kind's own.
    pub(crate) const fn new(
        name: &'static str,
        value_name: &'static str,
        help: &'static str,
        default: &'static str,
        example: &'static str,
        apply: Apply<B>,
    ) -> Self {
        KindOption {
            name,
            value_name,
            help,
            default,
            example,
            apply,
        }
    }

    /// [`BITS`]: `unit` says what a cell of the kind is ("bits", "counters", …).
    pub(crate) const fn bits(unit: &'static str, apply: fn(B, u64) -> B) -> Self {
        Self::new(BITS, "M", unit, "", "4096", Apply::U64(apply))
    }

    /// [`HASHES`]; `note` is what k means for the kind when it is not the usual k.
    pub(crate) const fn hashes(note: &'static str, apply: fn(B, u32) -> B) -> Self {
        Self::new(HASHES, "K", note, "", "3", Apply::U32(apply))
    }

    /// [`SCHEME`].
    pub(crate) const fn scheme(apply: fn(B, IndexScheme) -> B) -> Self {
        Self::new(SCHEME, "SCHEME", "", "", "seeded-k", Apply::Scheme(apply))
    }

    /// [`HASH`].
    pub(crate) const fn hash_function(apply: fn(B, HashFunction) -> B) -> Self {
        Self::new(HASH, "FUNCTION", "", "", "xxh3-128", Apply::Hash(apply))
    }

    /// The same option with another example value.
    pub(crate) const fn example(mut self, example: &'static str) -> Self {
        self.example = example;
        self
    }

    /// What [`Kind::options`] shows.
    pub(crate) const fn info(&self) -> OptionInfo {
        let value = match self.apply {
            Apply::U32(_) => ValueType::U32,
            Apply::U64(_) => ValueType::U64,
            Apply::F64(_) => ValueType::F64,
            Apply::Scheme(_) => ValueType::IndexScheme,
            Apply::Hash(_) => ValueType::HashFunction,
            Apply::Choice(choices, _) => ValueType::Choice(choices),
            Apply::File(_) => ValueType::File,
        };
        OptionInfo {
            name: self.name,
            value_name: self.value_name,
            value,
            help: self.help,
            default: self.default,
            example: self.example,
        }
    }

    /// Sets the option to `value` (already [read](Value::read) as its type).
    fn apply(&self, builder: B, value: Value<'_>) -> Result<B, Error> {
        Ok(match (&self.apply, value) {
            (Apply::U32(set), Value::U32(v)) => set(builder, v),
            (Apply::U64(set), Value::U64(v)) => set(builder, v),
            (Apply::U64(set), Value::U32(v)) => set(builder, u64::from(v)),
            (Apply::F64(set), Value::F64(v)) => set(builder, v),
            (Apply::Scheme(set), Value::Scheme(v)) => set(builder, v),
            (Apply::Hash(set), Value::Hash(v)) => set(builder, v),
            (Apply::Choice(_, set), Value::Text(v)) => set(builder, v),
            (Apply::File(set), Value::File(path)) => set(builder, path)?,
            _ => unreachable!("option {}: a value of another type", self.name),
        })
    }
}

/// What every builder has, whatever its kind: a default (the kind's `builder()`), the
/// setters of capacity, ε and the seed, and `build`.
pub(crate) trait SpecBuilder: Sized + Default {
    /// The kind the builder builds.
    type Filter;
    /// Validates the parameters and builds (the builder's own `build`).
    fn finish(self) -> Result<Self::Filter, Error>;
    fn set_capacity(self, capacity: u64) -> Self;
    fn set_fpp(self, fpp: f64) -> Self;
    fn set_seed(self, seed: u64) -> Self;
    fn set_random_seed(self) -> Self;
}

/// Implements [`SpecBuilder`] for a kind's builder through its own `build`, `capacity`,
/// `fpp`, `seed` and `random_seed`: `spec_builder!(Builder => Kind)`.
macro_rules! spec_builder {
    ($builder:ty => $kind:ty) => {
        impl $crate::core::spec::SpecBuilder for $builder {
            type Filter = $kind;
            fn finish(self) -> Result<$kind, $crate::error::Error> {
                self.build()
            }
            fn set_capacity(self, capacity: u64) -> Self {
                self.capacity(capacity)
            }
            fn set_fpp(self, fpp: f64) -> Self {
                self.fpp(fpp)
            }
            fn set_seed(self, seed: u64) -> Self {
                self.seed(seed)
            }
            fn set_random_seed(self) -> Self {
                self.random_seed()
            }
        }
    };
}
pub(crate) use spec_builder;

/// The options of an array-shaped kind's builder (the setters of
/// [`array_setters!`](crate::sizing::array_setters)): m, its cells named by `$unit`; k,
/// with `$k_help` ("" for the usual help); the index scheme; the hash function; then the
/// kind's own, in order. `array_options!(B, "bits", "", own…)`.
macro_rules! array_options {
    ($builder:ident, $unit:literal, $k_help:literal $(, $own:expr)* $(,)?) => {
        &[
            $crate::core::spec::KindOption::bits($unit, $builder::num_cells),
            $crate::core::spec::KindOption::hashes($k_help, $builder::num_hashes),
            $crate::core::spec::KindOption::scheme($builder::index_scheme),
            $crate::core::spec::KindOption::hash_function($builder::hash_function),
            $($own,)*
        ]
    };
}
pub(crate) use array_options;

/// n, ε, k and m of a kind sized like the classic filter — one array of m cells and k hash
/// functions for n items at ε: the `PARAMETERS` block a textbook Bloom filter program prints.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParametersBlock {
    /// n, the items the filter was sized for.
    pub capacity: u64,
    /// ε at capacity.
    pub target_fpp: f64,
    /// k.
    pub num_hashes: u32,
    /// m: bits, or counters.
    pub num_cells: u64,
    /// For the classic filter itself, its fill ratio: the textbook program reported that
    /// filter by the block and its fill ratio alone, and `bloomkit info` still does. `None`
    /// for the kinds whose other facts follow the block.
    pub classic_fill_ratio: Option<f64>,
}

impl ParametersBlock {
    /// The block of a filter with k hash functions over m cells, sized for its capacity at
    /// its ε, whose other facts follow the block.
    pub(crate) fn of<F: crate::filter::Filter>(
        filter: &F,
        num_hashes: u32,
        num_cells: u64,
    ) -> Self {
        Self::sized(
            filter.capacity(),
            filter.target_fpp(),
            num_hashes,
            num_cells,
        )
    }

    /// The block of k hash functions over m cells sized for `capacity` at `target_fpp`
    /// (a view's, from the stored record), with no classic fill ratio.
    pub(crate) fn sized(capacity: u64, target_fpp: f64, num_hashes: u32, num_cells: u64) -> Self {
        ParametersBlock {
            capacity,
            target_fpp,
            num_hashes,
            num_cells,
            classic_fill_ratio: None,
        }
    }
}

/// What a kind declares for building it by name and using it through
/// [`AnyFilter`](crate::AnyFilter), in its `options.rs`. Only the builder, its options and
/// `build` are required; the rest has defaults that fit a kind with nothing special.
pub(crate) trait Declared: Registered {
    /// The kind's builder.
    type Builder: SpecBuilder<Filter = Self> + 'static;

    /// The options the builder takes beyond capacity, ε and the seed: the common ones it
    /// takes ([`COMMON_OPTIONS`]) and its own. Names are unique within a kind; an option
    /// that several kinds have has the same value type, placeholder and help in each (a
    /// test holds them to that).
    const OPTIONS: &'static [KindOption<Self::Builder>];

    /// Common options the kind does not take, with why (a phrase, shown in brackets after
    /// the refusal). Those left out are refused without a reason.
    const NOT_TAKEN: &'static [(&'static str, &'static str)] = &[];

    /// Whether the kind counts how often each item was inserted: then a repeated item is
    /// not a duplicate to skip but the point ([`count_bytes`](Self::count_bytes)).
    const COUNTS: bool = false;

    /// Whether [`insert_parallel_bytes`](Self::insert_parallel_bytes) uses every core. Only
    /// for kinds whose insert sets bits and nothing else, so that inserting an item again
    /// changes nothing: such kinds are filled with every line, repeats included (a test
    /// holds them to that).
    const PARALLEL_INSERT: bool = false;

    /// How [`Filter::estimated_len`] estimates, for reports.
    const ESTIMATE: &'static str = "Swamidass-Baldi";

    /// The kind's parameters in one line, after "NAME filter: " (the hashing and memory
    /// follow). By default its [properties](Filter::properties).
    fn describe(&self) -> String {
        let facts: Vec<String> = self
            .properties()
            .into_iter()
            .map(|(label, value)| format!("{label} {value}"))
            .collect();
        facts.join(", ")
    }

    /// The `PARAMETERS` block (n, ε, k, m), for the kinds sized like the classic filter.
    fn parameters_block(&self) -> Option<ParametersBlock> {
        None
    }

    /// How often the item was inserted, for the kinds that count ([`COUNTS`](Self::COUNTS)).
    fn count_bytes(&self, item: &[u8]) -> Option<u64> {
        let _ = item;
        None
    }

    /// Inserts `items` on every core, with the result of inserting them in order: the
    /// kinds with [`PARALLEL_INSERT`](Self::PARALLEL_INSERT) forward to their parallel
    /// insert. [`AnyFilter::insert_parallel`](crate::AnyFilter::insert_parallel) sends the
    /// other kinds through its batch insert instead; this default is their plain loop.
    #[cfg(feature = "rayon")]
    fn insert_parallel_bytes(&mut self, items: &[&[u8]]) -> Result<(), Error> {
        for item in items {
            self.try_insert(*item)?;
        }
        Ok(())
    }

    /// The filter as the kind that is sent arithmetic-coded, for the kinds that have one
    /// (`Err(self)` for the others).
    fn into_compressed(self) -> Result<crate::AnyFilter, Self> {
        Err(self)
    }

    /// The filter as the kind it is in memory, for a kind sent compressed or the kind it
    /// compresses (`Err(self)` for the others).
    fn into_uncompressed(self) -> Result<crate::AnyFilter, Self> {
        Err(self)
    }

    /// Whether [`into_compressed`](Self::into_compressed) and
    /// [`into_uncompressed`](Self::into_uncompressed) convert this kind.
    const EXPORTS: bool = false;

    /// How a [`FilterView`](crate::format::view::FilterView) reads files of this kind, for
    /// the kinds whose payload a query reads at computed places: `Some(view::open::<S>)`,
    /// `S` the kind's [`KindView`](crate::format::view::KindView). `None`: not viewable.
    const VIEW: Option<crate::format::view::OpenView> = None;
}

/// A kind's declaration without its builder type, for [`Kind`]'s lookups.
pub(crate) struct Declaration {
    pub(crate) options: fn() -> Vec<OptionInfo>,
    pub(crate) not_taken: &'static [(&'static str, &'static str)],
    pub(crate) counts: bool,
    pub(crate) parallel_insert: bool,
    pub(crate) estimate: &'static str,
    pub(crate) exports: bool,
    pub(crate) view: Option<crate::format::view::OpenView>,
}

/// Every [`Declared`] kind's [`Declaration`].
pub(crate) trait DeclaredFacts {
    const FACTS: Declaration;
}

impl<T: Declared> DeclaredFacts for T {
    const FACTS: Declaration = Declaration {
        options: options_of::<T>,
        not_taken: T::NOT_TAKEN,
        counts: T::COUNTS,
        parallel_insert: T::PARALLEL_INSERT,
        estimate: T::ESTIMATE,
        exports: T::EXPORTS,
        view: T::VIEW,
    };
}

/// Builds a filter of kind `T` from `spec`: every option given is first checked to be one
/// `T` takes and of its type, then applied in order.
pub(crate) fn build<T: Declared>(spec: &BuildSpec) -> Result<T, Error> {
    let kind = T::ABILITIES.name;
    let mut chosen = Vec::new();
    for (name, value) in spec.given() {
        let Some(option) = T::OPTIONS.iter().find(|o| o.name == name) else {
            let takers = crate::registry::kinds_taking(name);
            let why = T::NOT_TAKEN
                .iter()
                .find(|(n, _)| *n == name)
                .map_or("", |(_, why)| why);
            let kind = Kind::from_name(kind).expect("a registered kind");
            return Err(Error::OptionNotTaken {
                kind,
                option: name.to_owned(),
                why,
                takers,
            });
        };
        chosen.push((option, value));
    }
    let mut builder = T::Builder::default();
    if let Some(capacity) = spec.capacity {
        builder = builder.set_capacity(capacity);
    }
    if let Some(fpp) = spec.fpp {
        builder = builder.set_fpp(fpp);
    }
    if let Some(seed) = spec.seed {
        builder = builder.set_seed(seed);
    }
    if spec.random_seed {
        builder = builder.set_random_seed();
    }
    let read: Vec<_> = chosen
        .into_iter()
        .map(|(option, value)| Ok((option, value.read(&option.info())?)))
        .collect::<Result<_, Error>>()?;
    for (option, value) in read {
        builder = option.apply(builder, value)?;
    }
    builder.finish()
}

/// The [`OptionInfo`] of each of `T`'s options.
pub(crate) fn options_of<T: Declared>() -> Vec<OptionInfo> {
    T::OPTIONS.iter().map(KindOption::info).collect()
}

/// "a", "a or b", "a, b or c".
pub(crate) fn or_list(names: &[&str]) -> String {
    text::list(names, "or")
}

/// Texts for describing filters: the parts of [`AnyFilter::describe`](crate::AnyFilter::describe)
/// that every kind's line shares.
pub mod text {
    /// Names as a sentence lists them, joined by `word` before the last: "a", "a or b",
    /// "a, b or c" (or "and", …): how every message and help text names several kinds.
    ///
    /// ```
    /// use bloomkit::registry::text::list;
    /// assert_eq!(list(&["bloom", "cuckoo", "compressed"], "or"), "bloom, cuckoo or compressed");
    /// assert_eq!(list(&["bits"], "and"), "bits");
    /// ```
    pub fn list(names: &[&str], word: &str) -> String {
        match names {
            [] => String::new(),
            [one] => (*one).to_owned(),
            [rest @ .., last] => format!("{} {word} {last}", rest.join(", ")),
        }
    }

    /// "capacity N at ε = P".
    pub fn at(capacity: u64, fpp: f64) -> String {
        format!("capacity {capacity} at ε = {}", probability(fpp))
    }

    /// "1 layer", "2 layers".
    pub fn count(n: u64, noun: &str) -> String {
        if n == 1 {
            format!("1 {noun}")
        } else {
            format!("{n} {noun}s")
        }
    }

    /// A probability with six decimals, or in scientific notation when that would hide it.
    ///
    /// ```
    /// use bloomkit::registry::text::probability;
    /// assert_eq!(probability(0.01), "0.010000");
    /// assert_eq!(probability(0.0), "0.000000");
    /// assert_eq!(probability(1.5e-9), "1.500e-9");
    /// ```
    pub fn probability(p: f64) -> String {
        if p == 0.0 || p >= 1e-4 {
            format!("{p:.6}")
        } else {
            format!("{p:.3e}")
        }
    }

    /// A byte count in binary units ("1.5 MiB").
    ///
    /// ```
    /// use bloomkit::registry::text::human_bytes;
    /// assert_eq!(human_bytes(0), "0 B");
    /// assert_eq!(human_bytes(1023), "1023 B");
    /// assert_eq!(human_bytes(1536), "1.5 KiB");
    /// assert_eq!(human_bytes(12 << 20), "12.0 MiB");
    /// ```
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AnyFilter, Filter, Persist};

    /// The spec every test starts from: fixed seed, so that two builds compare.
    fn base() -> BuildSpec {
        BuildSpec {
            seed: Some(7),
            ..BuildSpec::new(1_000, 0.01)
        }
    }

    /// `spec` with each option set to its example: for a file option, a file holding it.
    fn with_examples(mut spec: BuildSpec, options: &[OptionInfo], dir: &Path) -> BuildSpec {
        for option in options {
            let value = if option.value == ValueType::File {
                let path = dir.join(option.name);
                std::fs::write(&path, option.example).unwrap();
                path.to_str().unwrap().to_owned()
            } else {
                option.example.to_owned()
            };
            spec = spec.option(option.name, value);
        }
        spec
    }

    fn with_example(option: &OptionInfo, dir: &Path) -> BuildSpec {
        with_examples(base(), std::slice::from_ref(option), dir)
    }

    /// What tells two filters apart: their bytes, description and properties.
    fn fingerprint(spec: &BuildSpec, kind: Kind) -> (Vec<u8>, String, Vec<(&'static str, String)>) {
        let filter = AnyFilter::build(kind, spec)
            .unwrap_or_else(|e| panic!("{kind} with {:?}: {e}", spec.options));
        assert_eq!(filter.kind(), kind);
        (filter.to_bytes(), filter.describe(), filter.properties())
    }

    /// Each option, set to its example, builds and makes a difference: alone, or beside
    /// one of the kind's other options (an option may matter only with another, as a
    /// weighted filter's universe only with weighted items).
    #[test]
    fn every_declared_option_applies_with_its_example_value() {
        let dir = tempfile::tempdir().unwrap();
        for &kind in Kind::ALL {
            let options = kind.options();
            for option in &options {
                let alone = fingerprint(&with_example(option, dir.path()), kind);
                let matters = std::iter::once(None)
                    .chain(options.iter().filter(|o| o.name != option.name).map(Some))
                    .any(|other| {
                        let context: Vec<OptionInfo> = other.into_iter().copied().collect();
                        let before = with_examples(base(), &context, dir.path());
                        let after = with_examples(before.clone(), &[*option], dir.path());
                        fingerprint(&before, kind) != fingerprint(&after, kind)
                    });
                assert!(
                    matters,
                    "{kind}: --{} {:?} changes nothing",
                    option.name, option.example
                );
                assert_eq!(alone.0[..4], *b"BLOO");
                option.check(option.example).unwrap();
            }
        }
    }

    #[test]
    fn every_choice_of_an_option_builds() {
        for &kind in Kind::ALL {
            for option in kind.options() {
                if let ValueType::Choice(choices) = option.value {
                    for choice in choices {
                        let spec = base().option(option.name, choice.name);
                        AnyFilter::build(kind, &spec).unwrap();
                    }
                    let wrong = AnyFilter::build(kind, &base().option(option.name, "nope"));
                    assert!(
                        matches!(wrong, Err(Error::InvalidOptionValue { .. })),
                        "{wrong:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn an_option_means_one_thing_in_every_kind_that_has_it() {
        let mut seen: Vec<(Kind, OptionInfo)> = Vec::new();
        for &kind in Kind::ALL {
            let options = kind.options();
            for (i, option) in options.iter().enumerate() {
                assert!(
                    options[..i].iter().all(|o| o.name != option.name),
                    "{kind} declares {} twice",
                    option.name
                );
                for (other, earlier) in seen.iter().filter(|(_, o)| o.name == option.name) {
                    assert_eq!(
                        (option.value, option.value_name),
                        (earlier.value, earlier.value_name),
                        "{} in {kind} and {other}",
                        option.name
                    );
                    if !COMMON_OPTIONS.contains(&option.name) {
                        assert_eq!(option.help, earlier.help, "{}", option.name);
                    }
                }
                assert!(
                    COMMON_OPTIONS.contains(&option.name) || !option.help.is_empty(),
                    "{kind}: {} has no help",
                    option.name
                );
                seen.push((kind, *option));
            }
            for option in COMMON_OPTIONS.iter().filter(|o| kind.why_not(o).is_some()) {
                let (name, why) = (option, kind.why_not(option).unwrap());
                assert!(COMMON_OPTIONS.contains(name), "{kind}: {name}");
                assert!(!kind.takes(name), "{kind} takes {name} and says why not");
                assert!(!why.is_empty());
            }
        }
    }

    #[test]
    fn an_option_a_kind_does_not_take_is_refused_naming_the_kinds_that_do() {
        let mut names: Vec<&str> = Kind::ALL
            .iter()
            .flat_map(|k| k.options())
            .map(|o| o.name)
            .collect();
        names.sort_unstable();
        names.dedup();
        let dir = tempfile::tempdir().unwrap();
        for name in names {
            let takers = crate::registry::kinds_taking(name);
            let example = Kind::ALL
                .iter()
                .flat_map(|k| k.options())
                .find(|o| o.name == name)
                .unwrap();
            for &kind in Kind::ALL {
                let built = AnyFilter::build(kind, &with_example(&example, dir.path()));
                if takers.contains(&kind) {
                    continue;
                }
                let Err(Error::OptionNotTaken {
                    kind: refused,
                    option,
                    why,
                    takers: named,
                }) = built
                else {
                    panic!("{kind} took --{name}: {built:?}");
                };
                assert_eq!((refused, option.as_str()), (kind, name));
                assert_eq!(named, takers, "{name}");
                assert_eq!(Some(why).filter(|w| !w.is_empty()), kind.why_not(name));
            }
        }
        let unknown = AnyFilter::build(Kind::Bloom, &base().option("colour", "blue"));
        assert_eq!(
            unknown.unwrap_err().to_string(),
            "a bloom filter does not take the option colour; no kind takes an option of that name"
        );
        // The typed common fields are checked the same way.
        let typed = BuildSpec {
            index_scheme: Some(IndexScheme::SeededHashes),
            ..base()
        };
        let refused = AnyFilter::build(Kind::Cuckoo, &typed).unwrap_err();
        assert!(
            refused.to_string().starts_with(
                "a cuckoo filter does not take the option scheme (a cuckoo filter takes its \
                 bucket and fingerprint from one digest"
            ),
            "{refused}"
        );
    }

    #[test]
    fn values_of_the_wrong_type_are_refused_before_building() {
        let spec = base().option("counter-width", "wide");
        assert_eq!(
            AnyFilter::build(Kind::Counting, &spec).unwrap_err(),
            Error::InvalidOptionValue {
                option: "counter-width".into(),
                value: "wide".into(),
                expected: "a whole number from 0 to 4294967295 (1000000, 1e6 and 1_000_000 \
                           are read alike)"
                    .into(),
            }
        );
        // The value's type is the option's; the builder judges the value.
        let spec = base().option("counter-width", "17");
        assert_eq!(
            AnyFilter::build(Kind::Counting, &spec).unwrap_err(),
            Error::InvalidCounterWidth(17)
        );
    }

    #[test]
    fn declared_abilities_agree_with_the_declared_options_and_hooks() {
        for &kind in Kind::ALL {
            assert_eq!(
                kind.uses_index_scheme(),
                kind.takes(SCHEME),
                "{kind}: Abilities::index_scheme and the scheme option disagree"
            );
            let mut filter = AnyFilter::build(kind, &base()).unwrap();
            for _ in 0..3 {
                filter.try_insert("x").unwrap();
            }
            match filter.count("x") {
                Ok(n) => {
                    assert!(kind.counts(), "{kind} counts without saying so");
                    assert_eq!(n, 3, "{kind}");
                }
                Err(e) => {
                    assert!(!kind.counts(), "{kind}: {e}");
                    assert_eq!(
                        e,
                        Error::Unsupported {
                            kind,
                            operation: "count"
                        }
                    );
                }
            }
            assert!(
                filter.describe().starts_with(&format!("{kind} filter: ")),
                "{}",
                filter.describe()
            );
            let exported = filter.clone().into_compressed();
            assert_eq!(exported.is_ok(), kind.exports(), "{kind}");
            assert_eq!(filter.clone().into_uncompressed().is_ok(), kind.exports());
            if let Ok(compressed) = exported {
                let back = compressed.into_uncompressed().unwrap();
                assert!(back.contains("x") && back.kind().exports());
            }
            assert!(!kind.estimate_method().is_empty());
        }
    }

    #[test]
    fn batches_answer_and_fill_as_one_item_at_a_time() {
        let items: Vec<Vec<u8>> = (0..3_000u32)
            .map(|i| format!("item-{}", i % 2_000).into_bytes())
            .collect();
        let items: Vec<&[u8]> = items.iter().map(Vec::as_slice).collect();
        let spec = BuildSpec {
            seed: Some(7),
            ..BuildSpec::new(4_000, 0.01)
        };
        for &kind in Kind::ALL {
            let mut one_by_one = AnyFilter::build(kind, &spec).unwrap();
            for item in &items {
                one_by_one.try_insert(*item).unwrap();
            }
            let mut batched = AnyFilter::build(kind, &spec).unwrap();
            batched.insert_batch(&items).unwrap();
            assert!(
                batched.to_bytes() == one_by_one.to_bytes(),
                "{kind}: insert_batch"
            );
            let asked: Vec<Vec<u8>> = (0..4_000u32)
                .map(|i| format!("item-{i}").into_bytes())
                .collect();
            let asked: Vec<&[u8]> = asked.iter().map(Vec::as_slice).collect();
            let expected: Vec<bool> = asked.iter().map(|i| one_by_one.contains(*i)).collect();
            assert_eq!(one_by_one.contains_batch(&asked), expected, "{kind}");
            #[cfg(feature = "rayon")]
            {
                let mut parallel = AnyFilter::build(kind, &spec).unwrap();
                parallel.insert_parallel(&items).unwrap();
                assert!(
                    parallel.to_bytes() == one_by_one.to_bytes(),
                    "{kind}: parallel"
                );
            }
        }
    }

    /// The kinds filled on every core are filled with repeated lines as they come: that is
    /// only right if inserting an item again changes nothing.
    #[test]
    fn kinds_that_insert_in_parallel_do_not_change_on_a_repeat() {
        for &kind in Kind::ALL.iter().filter(|k| k.inserts_in_parallel()) {
            let mut once = AnyFilter::build(kind, &base()).unwrap();
            let mut twice = once.clone();
            for i in 0..500u32 {
                once.try_insert(&i).unwrap();
                twice.try_insert(&i).unwrap();
                twice.try_insert(&i).unwrap();
            }
            assert!(once.to_bytes() == twice.to_bytes(), "{kind}");
        }
    }
}
