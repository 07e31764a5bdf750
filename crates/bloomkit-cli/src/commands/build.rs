//! `bloomkit build`: a filter sized for, and filled with, the lines of a file.
//!
//! The input is read twice: once to count its lines (the filter's capacity: on Unix the
//! file is read in parts on all cores, see [`input::count_file_lines`]), once to insert
//! them, in blocks of [`input::BLOCK_SIZE`] bytes read a block ahead on a thread of their
//! own. Both passes show a progress bar by bytes. Each block is split into lines by rayon's
//! threads and handed to the filter whole: the kinds that insert on all cores
//! ([`Kind::inserts_in_parallel`]) do, with exactly the result of inserting the lines one by
//! one; the others take the block through their batch insert.
//!
//! [`Kind::inserts_in_parallel`]: bloomkit::Kind::inserts_in_parallel

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use bloomkit::registry::BuildSpec;
use bloomkit::{AnyFilter, Filter, HashFunction};
use clap::Args;
use indicatif::ProgressBar;

use super::input;
use super::store::{self, HashingArgs, KindArg, KindOptions};

/// Arguments of `bloomkit build`.
#[derive(Debug, Args)]
pub struct BuildArgs {
    /// The file of items, one per line; "-" reads standard input (spooled to a temporary
    /// file beside the output, since the input is read twice).
    #[arg(value_name = "INPUT")]
    pub input: PathBuf,

    /// The kind of filter.
    #[arg(long, value_enum, default_value_t)]
    pub kind: KindArg,

    #[command(flatten)]
    pub epsilon: store::EpsilonArg,

    #[command(flatten)]
    pub hashing: HashingArgs,

    #[command(flatten)]
    pub options: KindOptions,

    /// The filter file to write (replaced if it exists).
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,

    #[command(flatten)]
    pub format: store::FormatArgs,
}

/// Counts the lines, sizes the filter, inserts every line, saves the filter.
pub fn run(args: BuildArgs) -> Result<()> {
    let started = Instant::now();
    let input = input::TwiceReadable::new(&args.input, &args.output)?;
    let path = input.path();
    let name = input.name();

    let (file, size) = input::open_input(path)?;
    let progress = input::byte_progress(Some(size), "counting");
    let count = input::count_file_lines(file, size, &progress);
    progress.finish_and_clear();
    let count = count.with_context(|| format!("reading {}", name))?;
    if count == 0 {
        bail!(
            "{} is empty: there are no lines to build a filter from",
            name
        );
    }

    let spec = BuildSpec::new(count, args.epsilon.fpp);
    let filter = store::new_filter(args.kind, spec, &args.hashing, &args.options)?;

    let (file, size) = input::open_input(path)?;
    let progress = input::byte_progress(Some(size), "inserting");
    let filled = insert_lines(filter, file, &progress);
    progress.finish_and_clear();
    let (filter, inserted) = filled.with_context(|| format!("reading {}", name))?;
    if inserted != count {
        bail!(
            "{} changed while it was read: {count} lines counted, then {inserted} read",
            name
        );
    }

    store::save_as(&filter, &args.output, args.format.format_version)?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "built {} from {} lines of {} ({} of them new to the filter) in {:.2} s: {}",
        args.output.display(),
        count,
        name,
        filter.len(),
        started.elapsed().as_secs_f64(),
        filter.describe()
    )?;
    out.flush()?;
    if filter.kind().forgets() {
        // A filter of a kind that forgets (stable, generalized) answers "no" for some of the
        // lines it was built from, by design: say so where a user of `build` expects a set.
        eprintln!(
            "note: a {} filter forgets by design: the lines read first may now answer \"no\" \
             (the newest are kept best); for a filter that finds every line, build one of \
             another kind",
            filter.kind().name()
        );
    }
    Ok(())
}

/// Inserts every line of `reader` into `filter`; returns the filter and the number of lines.
///
/// How repeated lines are taken depends on what the kind is, as the registry says:
///
/// * a kind that counts how often each item was inserted ([`Kind::counts`]) takes every
///   line, repeats included: they are what it counts (as `add` gives them);
/// * the other kinds read the file as a set: every distinct line is inserted exactly once.
///   The kinds that insert on all cores ([`Kind::inserts_in_parallel`]) need no help for
///   that — their insert only sets bits, so a repeat changes nothing — and take every line.
///   Every other kind goes through [`Distinct`], an exact set of the lines' 128-bit
///   digests. The filter's own "maybe" must never decide what is a repeat: a line that
///   happens to be a false positive when it is read would then never be inserted, and
///   removing another line that shares its counters (or its fingerprint) would make it
///   answer "no" — a false negative the removable kinds promise never to give.
///
/// [`Kind::counts`]: bloomkit::Kind::counts
/// [`Kind::inserts_in_parallel`]: bloomkit::Kind::inserts_in_parallel
fn insert_lines(
    mut filter: AnyFilter,
    reader: impl std::io::Read + Send + 'static,
    progress: &ProgressBar,
) -> Result<(AnyFilter, u64)> {
    let kind = filter.kind();
    let mut seen = (!kind.counts() && !kind.inserts_in_parallel()).then(Distinct::default);
    let count = input::for_each_block(reader, progress, |block| {
        let mut lines = Vec::new();
        input::par_lines_into(block, &mut lines);
        match &mut seen {
            Some(seen) => {
                let fresh: Vec<&[u8]> = lines
                    .iter()
                    .copied()
                    .filter(|line| seen.first_time(line))
                    .collect();
                filter.insert_batch(&fresh)?;
            }
            None if kind.counts() => {
                filter.insert_batch(&lines)?;
            }
            None => filter.insert_parallel(&lines)?,
        }
        Ok(())
    })?;
    Ok((filter, count))
}

/// The exact set of lines seen so far, kept as 128-bit XXH3 digests (16 bytes a line, not
/// the line itself). Two distinct lines share a digest with probability about d²/2¹²⁹ for d
/// distinct lines — below 10⁻¹⁸ for a billion lines — which is what "exact" means here.
#[derive(Default)]
struct Distinct(HashSet<u128, BuildHasherDefault<DigestHasher>>);

impl Distinct {
    /// Whether `line` is new; remembers it.
    fn first_time(&mut self, line: &[u8]) -> bool {
        self.0.insert(HashFunction::Xxh3.digest(line, 0))
    }
}

/// A `Hasher` for keys that are already uniform digests: it keeps 64 of their bits instead
/// of hashing them again.
#[derive(Default)]
struct DigestHasher(u64);

impl Hasher for DigestHasher {
    fn write(&mut self, bytes: &[u8]) {
        // Only reached for keys other than u128 (none here); fold the bytes in anyway.
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u128(&mut self, digest: u128) {
        self.0 = digest as u64;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}
