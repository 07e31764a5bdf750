//! `bloomkit info`: a filter's parameters and current state, for every kind.
//!
//! For the kinds sized like the classic filter — one array of m slots (bits or counters)
//! and k hash functions, for n items at ε ([`AnyFilter::parameters_block`]) — the first
//! block is the seeds' `PARAMETERS` block, exactly as their program printed it. Then come
//! the lines every kind has (kind, memory, bits per item), the kind's own facts
//! ([`Filter::properties`]), the hashing, and the state now (items, estimated items,
//! expected FPP), aligned with the block.
//!
//! With `--format spark|guava` the file is a Spark sketch or a Guava filter (their
//! `writeTo` bytes): its version, m, k, seed, bits set and expected FPP.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use bloomkit::any::Summary;
use bloomkit::registry::{ParametersBlock, SCHEME};
use bloomkit::Kind;
use bloomkit_experiments::fpr::parameters_block;
use clap::Args;

use super::foreign::{FileFormat, JavaFilter};
use super::store::{self, human_bytes, probability};

/// The file and the form of the answer, for `info` and `ssd info`.
#[derive(Debug, Args)]
pub struct InfoArgs {
    /// The filter file.
    #[arg(value_name = "FILE")]
    pub filter: PathBuf,

    /// Print one JSON object instead of text (a kind's own facts under "properties"; `ssd
    /// info` has the keys of `info --json` where they apply).
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `bloomkit info`.
#[derive(Debug, Args)]
pub struct InfoVerbArgs {
    #[command(flatten)]
    pub info: InfoArgs,

    /// The file's format: a bloomkit file, or the bytes of Spark's or Guava's `writeTo`.
    #[arg(long, value_enum, default_value_t)]
    pub format: FileFormat,
}

/// Prints the filter's description.
pub fn run(args: InfoVerbArgs) -> Result<()> {
    if args.format != FileFormat::Bloomkit {
        return run_java(&args.info, args.format);
    }
    let args = args.info;
    let summary = store::summary(&args.filter)?;
    let file_bytes = std::fs::metadata(&args.filter).map(|m| m.len()).ok();
    let facts = Facts::of(summary, file_bytes);
    let text = if args.json {
        facts.json()
    } else {
        facts.text()
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// `info --format spark|guava`: the Java filter's facts, as text or one JSON object.
fn run_java(args: &InfoArgs, format: FileFormat) -> Result<()> {
    let filter = JavaFilter::open(&args.filter, format)?;
    let mut facts = filter.facts();
    if let Ok(m) = std::fs::metadata(&args.filter) {
        facts.push(("File size in bytes", m.len().to_string()));
    }
    let text = if args.json {
        let fields: Vec<String> = facts
            .iter()
            .map(|(k, v)| {
                let key = k.to_lowercase().replace([' ', '(', ')'], "_");
                let key = key.trim_end_matches('_').replace("__", "_");
                match v.parse::<f64>() {
                    Ok(_) => format!("\"{key}\": {v}"),
                    Err(_) => format!("\"{key}\": \"{v}\""),
                }
            })
            .collect();
        format!("{{{}}}\n", fields.join(", "))
    } else {
        facts.iter().map(|(k, v)| text_line(k, v)).collect()
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// Everything `info` reports about a filter.
struct Facts {
    kind: Kind,
    /// The seeds' parameters (n, ε, k, m), for the kinds sized like the classic filter; for
    /// the classic filter itself its fill ratio too, and then they are all its facts.
    parameters: Option<ParametersBlock>,
    /// The kind's facts ([`Filter::properties`]).
    properties: Vec<(&'static str, String)>,
    capacity: u64,
    bits_per_item: f64,
    memory_bytes: u64,
    file_bytes: Option<u64>,
    hash_function: &'static str,
    /// `None` for the kinds that take no index scheme.
    index_scheme: Option<&'static str>,
    /// The seed as given to `create`/`build` (`--seed`).
    seed: u64,
    /// The seed hashed with and stored: the given one, or a weak MurmurHash3 seed moved by
    /// 2⁶³ ([`bloomkit::hash::MURMUR3_WEAK_SEEDS`]).
    hashed_seed: u64,
    len: u64,
    estimated_len: f64,
    expected_fpp: f64,
}

impl Facts {
    fn of(summary: Summary, file_bytes: Option<u64>) -> Self {
        let Summary {
            kind,
            hashing,
            capacity,
            len,
            memory_bytes,
            bits_per_item,
            parameters_block,
            properties,
            estimated_len,
            expected_fpp,
        } = summary;
        Facts {
            kind,
            parameters: parameters_block,
            properties,
            capacity,
            bits_per_item,
            memory_bytes,
            file_bytes,
            hash_function: hashing.function.name(),
            index_scheme: kind.uses_index_scheme().then(|| hashing.scheme.name()),
            seed: hashing.seed_before_move().unwrap_or(hashing.seed),
            hashed_seed: hashing.seed,
            len,
            estimated_len,
            expected_fpp,
        }
    }

    /// The classic filter's fill ratio, when its facts are the seeds' block and that.
    fn classic_fill_ratio(&self) -> Option<f64> {
        self.parameters.and_then(|p| p.classic_fill_ratio)
    }

    fn text(&self) -> String {
        let mut text = String::new();
        if let Some(p) = &self.parameters {
            text.push_str(&parameters_block(
                p.capacity,
                p.target_fpp,
                p.num_hashes,
                p.num_cells,
            ));
        }
        let mut line = |label: &str, value: String| text.push_str(&text_line(label, &value));
        line("Kind", self.kind.name().to_owned());
        line(
            "Size in bytes",
            format!("{} ({})", self.memory_bytes, human_bytes(self.memory_bytes)),
        );
        if let Some(bytes) = self.file_bytes {
            line("File size in bytes", bytes.to_string());
        }
        if self.parameters.is_none() {
            line("Capacity", self.capacity.to_string());
        }
        line("Bits per item", format!("{:.2}", self.bits_per_item));
        // The classic filter's facts are the block above and its fill ratio, below.
        if self.classic_fill_ratio().is_none() {
            for (label, value) in &self.properties {
                line(&capitalized(label), value.clone());
            }
        }
        line("Hash function", self.hash_function.to_owned());
        let scheme = match (self.index_scheme, self.kind.why_not(SCHEME)) {
            (Some(scheme), _) => scheme.to_owned(),
            (None, Some(why)) => format!("none ({why})"),
            (None, None) => "none".to_owned(),
        };
        line("Index scheme", scheme);
        line("Seed", seed_text(self.seed, self.hashed_seed));
        let items = if self.kind.can_remove() {
            "Items held (inserted - removed)"
        } else {
            "Items inserted"
        };
        line(items, self.len.to_string());
        if let Some(fill_ratio) = self.classic_fill_ratio() {
            line("Fill ratio", format!("{fill_ratio:.6}"));
        }
        let estimate = if self.estimated_len.is_finite() {
            format!("{:.1}", self.estimated_len)
        } else {
            "unbounded (every bit is set)".to_owned()
        };
        let method = format!("Estimated items ({})", self.kind.estimate_method());
        line(&method, estimate);
        line("Expected FPP now", probability(self.expected_fpp));
        text
    }

    fn json(&self) -> String {
        let mut fields: Vec<(&str, String)> = vec![("kind", json_string(self.kind.name()))];
        if let (Some(p), Some(fill_ratio)) = (&self.parameters, self.classic_fill_ratio()) {
            fields.extend([
                ("target_fpp", json_number(p.target_fpp)),
                ("num_hashes", p.num_hashes.to_string()),
                ("num_bits", p.num_cells.to_string()),
                ("fill_ratio", json_number(fill_ratio)),
            ]);
        }
        let properties: Vec<String> = self
            .properties
            .iter()
            .map(|(label, value)| format!("    {}: {}", json_string(label), json_string(value)))
            .collect();
        let properties = if properties.is_empty() {
            "{}".to_owned()
        } else {
            format!("{{\n{}\n  }}", properties.join(",\n"))
        };
        fields.extend([
            ("capacity", self.capacity.to_string()),
            ("bits_per_item", json_number(self.bits_per_item)),
            ("memory_bytes", self.memory_bytes.to_string()),
            (
                "file_bytes",
                self.file_bytes.map_or("null".to_owned(), |b| b.to_string()),
            ),
            ("hash_function", json_string(self.hash_function)),
            (
                "index_scheme",
                self.index_scheme.map_or("null".to_owned(), json_string),
            ),
            ("seed", self.seed.to_string()),
            ("hashed_seed", self.hashed_seed.to_string()),
            ("len", self.len.to_string()),
            ("estimated_len", json_number(self.estimated_len)),
            ("expected_fpp", json_number(self.expected_fpp)),
            ("properties", properties),
        ]);
        json_object(&fields)
    }
}

/// A line of `info`'s text: the label and a colon, padded to 38 columns, then the value.
pub fn text_line(label: &str, value: &str) -> String {
    format!("{:<38}{value}\n", format!("{label}:"))
}

/// One JSON object, a member per line, from keys and their values already in JSON.
pub fn json_object(fields: &[(&str, String)]) -> String {
    let body: Vec<String> = fields
        .iter()
        .map(|(key, value)| format!("  {}: {value}", json_string(key)))
        .collect();
    format!("{{\n{}\n}}\n", body.join(",\n"))
}

/// The seed as `info` shows it: as given, and the one hashed with where the library moved
/// a weak MurmurHash3 seed (shared with `ssd info`).
pub fn seed_text(seed: u64, hashed_seed: u64) -> String {
    if seed == hashed_seed {
        seed.to_string()
    } else {
        format!(
            "{seed} (hashed as {seed} + 2⁶³ = {hashed_seed}: MurmurHash3 hashes items of up to \
             8 bytes poorly with seeds 1 to 8, so those are moved)"
        )
    }
}

/// The label with its first letter in upper case.
fn capitalized(label: &str) -> String {
    let mut chars = label.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// A JSON number; `null` for the values JSON cannot hold (infinity, NaN).
pub fn json_number(x: f64) -> String {
    if x == 0.0 || (1e-5..1e15).contains(&x.abs()) {
        format!("{x}")
    } else if x.is_finite() {
        format!("{x:e}")
    } else {
        "null".to_owned()
    }
}

/// A JSON string literal.
pub fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_capitalized() {
        assert_eq!(capitalized("fill ratio"), "Fill ratio");
        assert_eq!(capitalized(""), "");
    }

    #[test]
    fn json_helpers_escape_and_refuse_infinity() {
        assert_eq!(json_string("a\"b\\c\n\u{1}"), r#""a\"b\\c\n\u0001""#);
        assert_eq!(json_number(f64::INFINITY), "null");
        assert_eq!(json_number(0.5), "0.5");
        assert_eq!(json_number(3.5e-42), "3.5e-42");
    }
}
