//! Filter options shared by the verbs (kind, sizing, hashing, the options of some kinds),
//! and creating, opening and saving filters.
//!
//! Nothing here names a kind. `--kind` accepts every name of the library's registry
//! ([`Kind::ALL`]); the options only some kinds take are made at run time from what each
//! kind declares ([`Kind::options`]), help texts included; the library builds the filter
//! ([`AnyFilter::build`]) and refuses an option a kind does not take, naming the kinds that
//! take it. A new kind, with its options, needs nothing here.

use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};
use bloomkit::format::view::FilterView;
use bloomkit::registry::{self, BuildSpec, OptionInfo, ValueType, COMMON_OPTIONS, HASH};
use bloomkit::{AnyFilter, Filter, Kind, Persist};
use clap::builder::{PossibleValue, PossibleValuesParser};
use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches, ValueEnum, ValueHint};

/// The hash function and index scheme as named on the command line, shared with `bloomkit
/// experiment fpr`; the value parser of every count (`-n`, `-m`, `-k`, `--seed`, …), shared
/// with every study's `--seed`.
pub use bloomkit_experiments::{count, count_u32, HashArg, SchemeArg};

/// Texts shared with the library's descriptions.
pub use bloomkit::registry::text::{human_bytes, list, probability};

/// `--kind`: any kind of the library's registry, by its name; the help lists each with
/// its one-line summary. Nothing here names a kind: a kind added to the registry appears
/// on the command line by itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct KindArg(pub Kind);

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

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.0.name()).help(self.0.summary()))
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
    list(names, "or")
}

/// The help of a common option ([`COMMON_OPTIONS`]): `text`, then what the option means for
/// the kinds with a note on it, then the kinds that do not take it — all from the registry.
pub fn common_help(option: &str, text: &str) -> String {
    let mut help = text.to_owned();
    let takers: Vec<(Kind, OptionInfo)> = Kind::ALL
        .iter()
        .filter_map(|&k| Some((k, k.options().into_iter().find(|o| o.name == option)?)))
        .collect();
    if option == registry::BITS {
        // What a cell is, kind by kind: "bits for a and b; counters for c".
        let mut units: Vec<(&str, Vec<&str>)> = Vec::new();
        for (kind, info) in &takers {
            match units.iter_mut().find(|(unit, _)| *unit == info.help) {
                Some((_, kinds)) => kinds.push(kind.name()),
                None => units.push((info.help, vec![kind.name()])),
            }
        }
        let units: Vec<String> = units
            .iter()
            .map(|(unit, kinds)| format!("{unit} for {}", list(kinds, "and")))
            .collect();
        help = format!("{help}: the number of cells — {}", units.join("; "));
    } else {
        let notes: Vec<String> = takers
            .iter()
            .filter(|(_, info)| !info.help.is_empty())
            .map(|(kind, info)| format!("{kind}: {}", info.help))
            .collect();
        if !notes.is_empty() {
            help = format!("{help} ({})", notes.join("; "));
        }
    }
    let refused = kinds_that(|k| !k.takes(option));
    if !refused.is_empty() {
        help = format!("{help}. Not for {refused} filters");
    }
    help
}

/// `-e`/`--fpp` of the verbs that size a filter for the lines of a file (`build`, `ssd
/// build`).
#[derive(Debug, Args, Clone, Copy)]
pub struct EpsilonArg {
    /// ε, the false-positive probability wanted once every line is in.
    #[arg(
        short = 'e',
        long,
        value_name = "E",
        default_value_t = 0.01,
        allow_negative_numbers = true
    )]
    pub fpp: f64,
}

/// The hashing options of `create` and `build`.
#[derive(Debug, Args, Default)]
pub struct HashingArgs {
    /// The 128-bit hash function.
    #[arg(long = "hash", value_enum, value_name = "FUNCTION",
          help = common_help(HASH, "The 128-bit hash function [default: the kind's own; murmur3 for most]"))]
    pub function: Option<HashArg>,

    /// How the k bit positions are derived from an item.
    #[arg(long, value_enum, help = common_help(
        registry::SCHEME,
        "How the k bit positions are derived from an item [default: double]"
    ))]
    pub scheme: Option<SchemeArg>,

    /// The per-filter hash seed (default 0). With MurmurHash3, seeds 1 to 8 hash items of up
    /// to 8 bytes poorly, so they are hashed (and stored) as the seed + 2⁶³; `info` shows
    /// the seed given and the one hashed with.
    #[arg(long, value_name = "N", conflicts_with = "random_seed", value_parser = count,
          allow_negative_numbers = true)]
    pub seed: Option<u64>,

    /// Draw the seed from the operating system's random generator.
    #[arg(long)]
    pub random_seed: bool,

    /// Hash as RedisBloom does (MurmurHash64A pair, seed 0xc6a4a7935bd1e995, bit i at
    /// (a + i·b) mod m) and, from -n and -e, size as `BF.RESERVE KEY E N NONSCALING` does
    /// (m = ⌊n·bpe⌋ rounded up to 64, k = ⌈ln 2 · bpe⌉); with --kind cuckoo, RedisBloom's CF
    /// table sized as `CF.RESERVE KEY N/0.65` (--layout redisbloom): a filter `export --to redis`
    /// can load into RedisBloom.
    #[arg(long, conflicts_with_all = ["function", "scheme", "seed", "random_seed"])]
    pub redisbloom: bool,
}

/// The heading of the options of some kinds in `--help`.
const KIND_OPTIONS: &str = "Options of some kinds";

/// The options of `create` and `build` that only some kinds take, as `(name, value)`: one
/// flag for each option any kind of the registry declares beyond the common ones, with its
/// help made from the declarations (the kinds that take it, what it sets, their defaults).
/// The values are checked for their type here; whether the kind takes the option, and
/// whether it takes the value, the library says.
#[derive(Debug, Default, Clone)]
pub struct KindOptions(pub Vec<(String, String)>);

/// Every option of some kind, in the order of the registry, with each kind that takes it
/// and its declaration there.
fn options_of_some_kinds() -> Vec<(OptionInfo, Vec<(Kind, OptionInfo)>)> {
    let mut options: Vec<(OptionInfo, Vec<(Kind, OptionInfo)>)> = Vec::new();
    for &kind in Kind::ALL {
        for option in kind.options() {
            if COMMON_OPTIONS.contains(&option.name) {
                continue;
            }
            match options.iter_mut().find(|(o, _)| o.name == option.name) {
                Some((_, takers)) => takers.push((kind, option)),
                None => options.push((option, vec![(kind, option)])),
            }
        }
    }
    options
}

/// The flag of an option of some kinds: "a, b: what it sets [default: …]".
fn option_arg(option: OptionInfo, takers: &[(Kind, OptionInfo)]) -> Arg {
    let names: Vec<&str> = takers.iter().map(|(kind, _)| kind.name()).collect();
    let mut help = format!("{}: {}", names.join(", "), option.help);
    let defaults: Vec<(Kind, &str)> = takers
        .iter()
        .filter(|(_, o)| !o.default.is_empty())
        .map(|(kind, o)| (*kind, o.default))
        .collect();
    if let Some((_, first)) = defaults.first() {
        if defaults.len() == takers.len() && defaults.iter().all(|(_, d)| d == first) {
            help = format!("{help} [default: {first}]");
        } else {
            let each: Vec<String> = defaults
                .iter()
                .map(|(k, d)| format!("{d} for {k}"))
                .collect();
            help = format!("{help} [default: {}]", each.join(", "));
        }
    }
    let arg = Arg::new(option.name)
        .long(option.name)
        .value_name(option.value_name)
        .help(help)
        .help_heading(KIND_OPTIONS)
        .action(ArgAction::Set);
    // A negative number is a value for the library to refuse in words (`--growth -2`),
    // not a flag clap does not know.
    let arg = match option.value {
        ValueType::U32 | ValueType::U64 | ValueType::F64 => arg.allow_negative_numbers(true),
        _ => arg,
    };
    match option.value {
        ValueType::Choice(choices) => arg.value_parser(PossibleValuesParser::new(
            choices
                .iter()
                .map(|choice| PossibleValue::new(choice.name).help(choice.help)),
        )),
        ValueType::File => arg.value_hint(ValueHint::FilePath),
        _ => arg.value_parser(move |value: &str| {
            // A count says what is wrong with it ("1.5 is not a whole number"), as the
            // typed counts do; the library reads it with the same parser.
            match option.value {
                ValueType::U32 => drop(count_u32(value).map_err(|e| e.to_string())?),
                ValueType::U64 => drop(count(value).map_err(|e| e.to_string())?),
                _ => {}
            }
            match option.check(value) {
                Ok(()) => Ok(value.to_owned()),
                Err(bloomkit::Error::InvalidOptionValue { expected, .. }) => {
                    Err(format!("expected {expected}"))
                }
                Err(other) => Err(other.to_string()),
            }
        }),
    }
}

impl Args for KindOptions {
    fn augment_args(command: Command) -> Command {
        options_of_some_kinds()
            .into_iter()
            .fold(command, |command, (option, takers)| {
                command.arg(option_arg(option, &takers))
            })
    }

    fn augment_args_for_update(command: Command) -> Command {
        Self::augment_args(command)
    }
}

impl FromArgMatches for KindOptions {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let given = options_of_some_kinds()
            .into_iter()
            .filter_map(|(option, _)| {
                let value = matches.get_one::<String>(option.name)?;
                Some((option.name.to_owned(), value.clone()))
            })
            .collect();
        Ok(KindOptions(given))
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

/// A new, empty filter of `kind`: `spec` (capacity, ε, m and k as given) with the hashing
/// and the options of some kinds, built by the library. An option the kind does not take is
/// refused in the command line's words (`--name`, `--kind`); the other errors are the
/// library's.
pub fn new_filter(
    kind: KindArg,
    spec: BuildSpec,
    hashing: &HashingArgs,
    options: &KindOptions,
) -> Result<AnyFilter> {
    let kind = kind.0;
    let spec = if hashing.redisbloom {
        redisbloom_spec(kind, spec)?
    } else {
        spec
    };
    // Without --hash, the kind's own default function (the library's: MurmurHash3 for
    // most kinds, a faster one where a kind was measured to gain from it).
    let spec = BuildSpec {
        index_scheme: hashing.scheme.map(Into::into).or(spec.index_scheme),
        hash_function: hashing.function.map(Into::into).or(spec.hash_function),
        seed: hashing.seed.or(spec.seed),
        random_seed: hashing.random_seed,
        options: [spec.options.clone(), options.0.clone()].concat(),
        ..spec
    };
    AnyFilter::build(kind, &spec).map_err(|error| match error {
        bloomkit::Error::OptionNotTaken {
            kind,
            option,
            why,
            takers,
        } => {
            let why = if why.is_empty() {
                String::new()
            } else {
                format!(" ({why})")
            };
            let takers = kinds_that(|k| takers.contains(&k));
            if takers.is_empty() {
                anyhow!("--{option} does not apply to a {kind} filter{why}; no kind takes it")
            } else {
                anyhow!(
                    "--{option} does not apply to a {kind} filter{why}; it is for --kind {takers}"
                )
            }
        }
        other => anyhow::Error::new(other).context(format!("cannot create a {kind} filter")),
    })
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
    take_in_turn(path, writer, |wait| {
        if wait {
            bloomkit::FileLock::exclusive(path).map(Some)
        } else {
            bloomkit::FileLock::try_exclusive(path)
        }
    })
}

/// Takes what only one command at a time may hold of the file at `path` — its lock, or a
/// filter opened with it (`bloomkit ssd`, whose library open locks the file itself):
/// `take(false)` tries at once (`None`: another command holds it); then, with `--no-wait`,
/// fails, and otherwise says on standard error that it waits, and waits (`take(true)`).
pub fn take_in_turn<T>(
    path: &Path,
    writer: &WriterArgs,
    take: impl Fn(bool) -> std::result::Result<Option<T>, bloomkit::Error>,
) -> Result<T> {
    if let Some(taken) = take(false)? {
        return Ok(taken);
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
    take(true)?.with_context(|| format!("{}: the lock was not taken", path.display()))
}

/// `--redisbloom`: the library's [`bloomkit::interop::redisbloom::redisbloom_spec`]
/// (RedisBloom's hashing and `BF.RESERVE … NONSCALING`'s m and k, or RedisBloom's cuckoo
/// layout sized as `CF.RESERVE` for n / 0.65 items).
fn redisbloom_spec(kind: Kind, spec: BuildSpec) -> Result<BuildSpec> {
    Ok(bloomkit::interop::redisbloom::redisbloom_spec(kind, spec)?)
}

/// Reads a filter file of any kind. The library's error already names the file and what is
/// wrong with it ("F is not a valid filter file: truncated: …").
pub fn open(path: &Path) -> Result<AnyFilter> {
    AnyFilter::load(path).map_err(not_ours)
}

/// The library's error for a file that is not a bloomkit file at all (no bloomkit magic),
/// with where the command line reads the foreign filters it may be instead; other errors
/// as they are.
pub fn not_ours(error: bloomkit::Error) -> anyhow::Error {
    match error {
        bloomkit::Error::InvalidFile {
            error: bloomkit::DecodeError::BadMagic,
            ..
        } => anyhow!(
            "{error}. If it is Spark's or Guava's `writeTo` bytes, `info` and `check` read it \
             with --format spark|guava; `bloomkit import --from spark|guava|redis FILE -o OUT` \
             turns it, or a RedisBloom SCANDUMP, into a bloomkit file"
        ),
        other => other.into(),
    }
}

/// A filter to ask about items: a read-only view over the file where the library can view
/// the kind ([`Kind::can_view`]: the file is mapped, and a query reads and checks only the
/// chunks it touches), else the filter loaded whole.
pub enum Queried {
    /// The file, mapped.
    View(FilterView),
    /// The filter, loaded.
    Loaded(AnyFilter),
}

impl Queried {
    /// The filter's kind.
    pub fn kind(&self) -> Kind {
        match self {
            Queried::View(view) => view.kind(),
            Queried::Loaded(filter) => filter.kind(),
        }
    }

    /// Whether the item may be present (an error only from a view that meets a corrupted
    /// chunk).
    pub fn contains(&self, item: &[u8]) -> Result<bool> {
        Ok(match self {
            Queried::View(view) => view.contains(item)?,
            Queried::Loaded(filter) => filter.contains(item),
        })
    }

    /// [`contains`](Self::contains) of every item, in order.
    pub fn contains_batch(&self, items: &[&[u8]]) -> Result<Vec<bool>> {
        Ok(match self {
            Queried::View(view) => view.contains_batch(items)?,
            Queried::Loaded(filter) => filter.contains_batch(items),
        })
    }

    /// How often the item was added, for a filter of a kind that counts (an error from a
    /// view that meets a corrupted chunk, or for a kind that does not count).
    pub fn count(&self, item: &[u8]) -> Result<u64> {
        Ok(match self {
            Queried::View(view) => view.count(item)?,
            Queried::Loaded(filter) => filter.count(item)?,
        })
    }
}

/// Opens a filter file to ask it about items: as a view where the kind allows it and
/// `view` is true, else loaded (see [`Queried`]).
pub fn open_for_queries(path: &Path, view: bool) -> Result<Queried> {
    if view {
        match FilterView::open(path) {
            Ok(view) => return Ok(Queried::View(view)),
            Err(bloomkit::Error::Unsupported { .. }) => {}
            Err(e) => return Err(not_ours(e)),
        }
    }
    Ok(Queried::Loaded(open(path)?))
}

/// The [`Summary`](bloomkit::any::Summary) of the filter file at `path`, read through a
/// [`FilterView`] piece by piece where its kind allows (a few MiB of memory for a file of
/// any size), else from the loaded filter.
pub fn summary(path: &Path) -> Result<bloomkit::any::Summary> {
    match FilterView::open(path) {
        Ok(view) => Ok(view.summary()?),
        Err(bloomkit::Error::Unsupported { .. }) => Ok(open(path)?.summary()),
        Err(e) => Err(not_ours(e)),
    }
}

/// Writes a filter file atomically: on any failure the old file, if any, is left as it was.
/// A new file is written in format version 2 (a checksum per chunk, so that `check` reads
/// only what its queries touch); an existing bloomkit file keeps its version, so that a
/// version-1 file, which bloomkit builds before version 2 read too, stays readable by them.
pub fn save(filter: &AnyFilter, path: &Path) -> Result<()> {
    let version = match file_version(path) {
        Some(bloomkit::codec::FORMAT_VERSION) => FormatVersion::V1,
        _ => FormatVersion::V2,
    };
    save_as(filter, path, version)
}

/// [`save`] in the given format version.
pub fn save_as(filter: &AnyFilter, path: &Path, version: FormatVersion) -> Result<()> {
    if path.as_os_str().is_empty() {
        bail!("the output file name is empty");
    }
    match version {
        FormatVersion::V2 => Ok(filter.save_chunked(path)?),
        FormatVersion::V1 => Ok(filter.save(path)?),
    }
}

/// The format version of the bloomkit file at `path`, if it is one.
fn file_version(path: &Path) -> Option<u16> {
    use std::io::Read;
    let mut prefix = [0u8; 10];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut prefix))
        .ok()?;
    (prefix[..8] == *bloomkit::codec::MAGIC).then(|| u16::from_le_bytes([prefix[8], prefix[9]]))
}

/// `--format-version` of the verbs that write a new file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatVersion {
    /// One checksum over the whole file: every bloomkit build reads it, and `check` reads
    /// the whole file once to verify it.
    #[value(name = "1")]
    V1,
    /// A checksum per 64 KiB chunk: `check` reads and verifies only the chunks its queries
    /// touch. bloomkit builds before it cannot read it.
    #[default]
    #[value(name = "2")]
    V2,
}

/// Arguments of the verbs that write a new filter file: its format version.
#[derive(clap::Args, Debug, Clone)]
pub struct FormatArgs {
    /// The file's format version: 2 (default) has a checksum per 64 KiB chunk, so that
    /// `check` reads only the chunks a query touches; 1 has one checksum over the whole
    /// file, for bloomkit builds before version 2. `add`, `remove` and `merge` into an
    /// existing file keep its version.
    #[arg(long, value_enum, default_value = "2", value_name = "VERSION")]
    pub format_version: FormatVersion,

    /// Accepted for scripts written when version 2 had to be asked for; it is the default.
    #[arg(long, hide = true)]
    pub chunked: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_read_as_english() {
        assert_eq!(or_list(&["a"]), "a");
        assert_eq!(or_list(&["a", "b"]), "a or b");
        assert_eq!(or_list(&["a", "b", "c"]), "a, b or c");
        assert_eq!(list(&["a", "b", "c"], "and"), "a, b and c");
        let removable: Vec<&str> = Kind::ALL
            .iter()
            .filter(|k| k.can_remove())
            .map(|k| k.name())
            .collect();
        assert_eq!(kinds_that(Kind::can_remove), or_list(&removable));
    }

    #[test]
    fn every_kind_has_a_name_on_the_command_line() {
        let names: Vec<String> = KindArg::value_variants()
            .iter()
            .map(|kind| {
                let value = kind.to_possible_value().expect("no kind is hidden");
                assert_eq!(value.get_name(), kind.0.name());
                value.get_name().to_owned()
            })
            .collect();
        let registry: Vec<String> = Kind::ALL.iter().map(|k| k.name().to_owned()).collect();
        assert_eq!(names, registry);
    }

    /// Every option any kind declares is a flag, once, under "Options of some kinds", and
    /// its help names exactly the kinds that take it.
    #[test]
    fn every_declared_option_is_a_flag_naming_its_kinds() {
        let command = KindOptions::augment_args(Command::new("test"));
        for &kind in Kind::ALL {
            for option in kind.options() {
                if COMMON_OPTIONS.contains(&option.name) {
                    continue;
                }
                let arg = command
                    .get_arguments()
                    .find(|a| a.get_id() == option.name)
                    .unwrap_or_else(|| panic!("no --{}", option.name));
                assert_eq!(arg.get_long(), Some(option.name));
                assert_eq!(arg.get_help_heading(), Some(KIND_OPTIONS));
                let help = arg.get_help().unwrap().to_string();
                let takers: Vec<&str> = registry::kinds_taking(option.name)
                    .iter()
                    .map(|k| k.name())
                    .collect();
                assert!(
                    help.starts_with(&format!("{}: {}", takers.join(", "), option.help)),
                    "{help}"
                );
            }
        }
    }
}
