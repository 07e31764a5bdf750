//! `bloomkit bloomier build | get`: the Bloomier filter, a static map from keys to r-bit
//! values built once from all of them (so it has verbs of its own instead of being a
//! `--kind` of `create`/`add`/`check`, which add items one at a time).
//!
//! * `build INPUT -o FILE`: INPUT holds `KEY<TAB>VALUE` lines (the key is everything before
//!   the last tab, the value a decimal integer), or with `--keys-only` one key per line
//!   (membership mode: no value bits). Standard input is `-`.
//! * `get FILE [KEY…]`: prints `KEY<TAB>VALUE`, or `KEY<TAB>absent` for a key certainly not
//!   in the set; keys from the arguments, else `--from FILE` or standard input. For a single
//!   key argument the exit code is 1 when it is absent, as for `check`.

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use bloomkit::{BloomierFilter, BloomierLayout, HashFunction};
use clap::{Args, Subcommand, ValueEnum};

use super::input::{self, ItemArgs, ItemSource};
use super::store::{self, HashArg};

/// The verbs of `bloomkit bloomier`.
#[derive(Debug, Subcommand)]
pub enum BloomierCommand {
    /// Build a Bloomier filter from `KEY<TAB>VALUE` lines (or keys alone with --keys-only).
    Build(BuildArgs),
    /// Look keys up: prints `KEY<TAB>VALUE`, or `KEY<TAB>absent` when certainly not in the set.
    Get(GetArgs),
}

/// Arguments of `bloomkit bloomier build`.
#[derive(Debug, Args)]
pub struct BuildArgs {
    /// The file of `KEY<TAB>VALUE` lines ("-" for standard input).
    #[arg(value_name = "INPUT")]
    pub input: PathBuf,

    /// Every line is a key, with no value (membership mode: r = 0).
    #[arg(long, conflicts_with = "value_bits")]
    pub keys_only: bool,

    /// r, the bits of each value [default: the fewest that hold the largest value].
    #[arg(long, value_name = "R", value_parser = store::count_u32, allow_negative_numbers = true)]
    pub value_bits: Option<u32>,

    /// c, the check bits: a key outside the set passes with probability 2^−c [default: from
    /// --fpp].
    #[arg(long, value_name = "C", conflicts_with = "fpp", value_parser = store::count_u32,
          allow_negative_numbers = true)]
    pub check_bits: Option<u32>,

    /// ε, the false-positive probability wanted: c = ⌈log₂(1/ε)⌉ [default: 0.01].
    #[arg(short = 'e', long, value_name = "E", allow_negative_numbers = true)]
    pub fpp: Option<f64>,

    /// Where a key's three cells lie: `fuse` (small segments, a key's cells in three
    /// adjacent ones: about 1.125 cells per key for large sets, fast queries) or
    /// `three-segments` (the first layout, 1.23 cells per key, readable by older builds)
    /// [default: the one of fewer cells — fuse from about 20 000 keys on].
    #[arg(long, value_enum)]
    pub layout: Option<LayoutArg>,

    /// The 128-bit hash function [default: the library's: fold2-128 for membership tables
    /// (`--keys-only`), murmur3 for tables with values].
    #[arg(long = "hash", value_enum)]
    pub function: Option<HashArg>,

    /// The hash seed (default 0).
    #[arg(long, value_name = "N", conflicts_with = "random_seed", value_parser = store::count,
          allow_negative_numbers = true)]
    pub seed: Option<u64>,

    /// Draw the seed from the operating system's random generator.
    #[arg(long)]
    pub random_seed: bool,

    /// The file to write (replaced if it exists).
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
}

/// `--layout` of `bloomkit bloomier build`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LayoutArg {
    /// Spatially coupled segments (the default).
    Fuse,
    /// Three segments of equal length (the first layout).
    ThreeSegments,
}

impl From<LayoutArg> for BloomierLayout {
    fn from(layout: LayoutArg) -> Self {
        match layout {
            LayoutArg::Fuse => BloomierLayout::Fuse,
            LayoutArg::ThreeSegments => BloomierLayout::ThreeSegments,
        }
    }
}

/// Arguments of `bloomkit bloomier get`.
#[derive(Debug, Args)]
pub struct GetArgs {
    /// The Bloomier filter file.
    #[arg(value_name = "FILE")]
    pub filter: PathBuf,

    #[command(flatten)]
    pub keys: ItemArgs,
}

/// Runs a `bloomier` verb.
pub fn run(command: BloomierCommand) -> Result<ExitCode> {
    match command {
        BloomierCommand::Build(args) => build(args).map(|()| ExitCode::SUCCESS),
        BloomierCommand::Get(args) => get(args),
    }
}

/// `KEY<TAB>VALUE`: the key (everything before the last tab) and the value.
fn split_line(line: &[u8], number: u64) -> Result<(Vec<u8>, u64)> {
    let Some(tab) = line.iter().rposition(|&b| b == b'\t') else {
        bail!("line {number} has no tab between key and value (use --keys-only for keys alone)");
    };
    let value = std::str::from_utf8(&line[tab + 1..])
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .with_context(|| {
            format!(
                "line {number}: the value {:?} is not a non-negative integer below 2^64",
                String::from_utf8_lossy(&line[tab + 1..])
            )
        })?;
    Ok((line[..tab].to_vec(), value))
}

fn build(args: BuildArgs) -> Result<()> {
    // Refused before the input is read and the table peeled.
    if args.output.as_os_str().is_empty() {
        bail!("the output file name is empty");
    }
    input::refuse_output_over_input(&args.input, &args.output)?;
    let source = if args.input.as_os_str() == "-" {
        ItemSource::Stdin
    } else {
        ItemSource::File(args.input.clone())
    };
    let mut pairs = Vec::new();
    let mut number = 0;
    input::for_each_item(source, "reading", |line| {
        number += 1;
        pairs.push(if args.keys_only {
            (line.to_vec(), 0)
        } else {
            split_line(line, number)?
        });
        Ok(())
    })?;
    let mut builder = BloomierFilter::builder();
    if let Some(function) = args.function {
        builder = builder.hash_function(HashFunction::from(function));
    }
    if let Some(layout) = args.layout {
        builder = builder.layout(layout.into());
    }
    if args.keys_only {
        builder = builder.value_bits(0);
    }
    if let Some(r) = args.value_bits {
        builder = builder.value_bits(r);
    }
    if let Some(c) = args.check_bits {
        builder = builder.check_bits(c);
    }
    if let Some(fpp) = args.fpp {
        builder = builder.fpp(fpp);
    }
    if let Some(seed) = args.seed {
        builder = builder.seed(seed);
    }
    if args.random_seed {
        builder = builder.random_seed();
    }
    let started = std::time::Instant::now();
    let table = builder
        .build(pairs)
        .context("cannot build the Bloomier filter")?;
    let elapsed = started.elapsed();
    table.save(&args.output)?;
    let _ = writeln!(
        std::io::stderr(),
        "{} keys, {} cells of {} bits ({} value + {} check, {} layout), {:.2} bits per key, \
         ε = 2^−{}, built in {:.1?} (attempt {}) -> {}",
        table.len(),
        table.num_cells(),
        table.cell_width(),
        table.value_bits(),
        table.check_bits(),
        match table.layout() {
            BloomierLayout::Fuse => "fuse",
            BloomierLayout::ThreeSegments => "three-segment",
        },
        table.bits_per_key(),
        table.check_bits(),
        elapsed,
        table.attempt() + 1,
        args.output.display()
    );
    Ok(())
}

fn get(args: GetArgs) -> Result<ExitCode> {
    let table = BloomierFilter::load(&args.filter)?;
    let mut out = BufWriter::new(std::io::stdout().lock());
    let source = args.keys.source();
    let single = matches!(&source, ItemSource::Args(keys) if keys.len() == 1);
    let mut last = None;
    input::for_each_item(source, "looking up", |key| {
        out.write_all(key)?;
        last = table.get(key);
        match last {
            Some(value) => writeln!(out, "\t{value}")?,
            None => out.write_all(b"\tabsent\n")?,
        }
        Ok(())
    })?;
    out.flush()?;
    Ok(if single && last.is_none() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
