//! `bloomkit info`: a filter's parameters and current state.
//!
//! The first block is the seeds' `PARAMETERS` block, exactly as their program printed it;
//! more lines follow, aligned with it.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use bloomkit::{AnyFilter, Filter};
use clap::Args;

use super::store::{self, human_bytes, probability};

/// Arguments of `bloomkit info`.
#[derive(Debug, Args)]
pub struct InfoArgs {
    /// The filter file.
    #[arg(value_name = "FILE")]
    pub filter: PathBuf,

    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// The seeds' parameter block: n, ε, k and m of a Bloom filter.
pub fn parameters_block(capacity: u64, fpp: f64, num_hashes: u32, num_bits: u64) -> String {
    format!(
        "----- PARAMETERS -----\n\
         Number of elements in filter:          {capacity}\n\
         Calibrated probability of false positives: {fpp:.6}\n\
         Amount of hash functions:             {num_hashes}\n\
         Filter size:                          {num_bits}\n\
         -----\n"
    )
}

/// Prints the filter's description.
pub fn run(args: InfoArgs) -> Result<()> {
    let filter = store::open(&args.filter)?;
    let file_bytes = std::fs::metadata(&args.filter).map(|m| m.len()).ok();
    let facts = Facts::of(&filter, file_bytes);
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

/// Everything `info` reports about a filter.
struct Facts {
    kind: String,
    /// The Bloom parameters (n, ε, k, m), for the kinds that have them.
    bloom: Option<BloomFacts>,
    /// The kind's own facts, for the kinds without the Bloom parameters.
    properties: Vec<(&'static str, String)>,
    capacity: u64,
    bits_per_item: f64,
    memory_bytes: u64,
    file_bytes: Option<u64>,
    hash_function: &'static str,
    index_scheme: &'static str,
    seed: u64,
    len: u64,
    estimated_len: f64,
    expected_fpp: f64,
}

struct BloomFacts {
    capacity: u64,
    target_fpp: f64,
    num_hashes: u32,
    num_bits: u64,
    fill_ratio: f64,
}

impl Facts {
    fn of(filter: &AnyFilter, file_bytes: Option<u64>) -> Self {
        let bloom = match filter {
            AnyFilter::Bloom(f) => Some(BloomFacts {
                capacity: f.capacity(),
                target_fpp: f.target_fpp(),
                num_hashes: f.num_hashes(),
                num_bits: f.num_bits(),
                fill_ratio: f.fill_ratio(),
            }),
            _ => None,
        };
        let properties = if bloom.is_some() {
            Vec::new()
        } else {
            filter.properties()
        };
        let hashing = filter.hashing();
        Facts {
            kind: filter.kind().name().to_owned(),
            bloom,
            properties,
            capacity: filter.capacity(),
            bits_per_item: filter.bits_per_item(),
            memory_bytes: filter.memory_bytes() as u64,
            file_bytes,
            hash_function: hashing.function.name(),
            index_scheme: hashing.scheme.name(),
            seed: hashing.seed,
            len: filter.len(),
            estimated_len: filter.estimated_len(),
            expected_fpp: filter.expected_fpp(),
        }
    }

    fn text(&self) -> String {
        let mut text = String::new();
        if let Some(b) = &self.bloom {
            text.push_str(&parameters_block(
                b.capacity,
                b.target_fpp,
                b.num_hashes,
                b.num_bits,
            ));
        }
        let mut line = |label: &str, value: String| {
            text.push_str(&format!("{:<38}{value}\n", format!("{label}:")));
        };
        line("Kind", self.kind.clone());
        line(
            "Size in bytes",
            format!("{} ({})", self.memory_bytes, human_bytes(self.memory_bytes)),
        );
        if let Some(bytes) = self.file_bytes {
            line("File size in bytes", bytes.to_string());
        }
        if self.bloom.is_none() {
            line("Capacity", self.capacity.to_string());
        }
        line("Bits per item", format!("{:.2}", self.bits_per_item));
        for (label, value) in &self.properties {
            line(&capitalized(label), value.clone());
        }
        line("Hash function", self.hash_function.to_owned());
        line("Index scheme", self.index_scheme.to_owned());
        line("Seed", self.seed.to_string());
        line("Items inserted", self.len.to_string());
        if let Some(b) = &self.bloom {
            line("Fill ratio", format!("{:.6}", b.fill_ratio));
        }
        let estimate = if self.estimated_len.is_finite() {
            format!("{:.1}", self.estimated_len)
        } else {
            "unbounded (every bit is set)".to_owned()
        };
        line("Estimated items (Swamidass-Baldi)", estimate);
        line("Expected FPP now", probability(self.expected_fpp));
        text
    }

    fn json(&self) -> String {
        let mut fields: Vec<(&str, String)> = vec![("kind", json_string(&self.kind))];
        if let Some(b) = &self.bloom {
            fields.extend([
                ("target_fpp", json_number(b.target_fpp)),
                ("num_hashes", b.num_hashes.to_string()),
                ("num_bits", b.num_bits.to_string()),
                ("fill_ratio", json_number(b.fill_ratio)),
            ]);
        }
        for (label, value) in &self.properties {
            fields.push((label, json_string(value)));
        }
        fields.extend([
            ("capacity", self.capacity.to_string()),
            ("bits_per_item", json_number(self.bits_per_item)),
            ("memory_bytes", self.memory_bytes.to_string()),
            (
                "file_bytes",
                self.file_bytes.map_or("null".to_owned(), |b| b.to_string()),
            ),
            ("hash_function", json_string(self.hash_function)),
            ("index_scheme", json_string(self.index_scheme)),
            ("seed", self.seed.to_string()),
            ("len", self.len.to_string()),
            ("estimated_len", json_number(self.estimated_len)),
            ("expected_fpp", json_number(self.expected_fpp)),
        ]);
        let body: Vec<String> = fields
            .iter()
            .map(|(key, value)| format!("  {}: {value}", json_string(key)))
            .collect();
        format!("{{\n{}\n}}\n", body.join(",\n"))
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
fn json_number(x: f64) -> String {
    if x == 0.0 || (1e-5..1e15).contains(&x.abs()) {
        format!("{x}")
    } else if x.is_finite() {
        format!("{x:e}")
    } else {
        "null".to_owned()
    }
}

/// A JSON string literal.
fn json_string(s: &str) -> String {
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
    fn parameters_block_matches_the_seed() {
        let expected = "----- PARAMETERS -----\n\
            Number of elements in filter:          58110\n\
            Calibrated probability of false positives: 0.001000\n\
            Amount of hash functions:             10\n\
            Filter size:                          835481\n\
            -----\n";
        assert_eq!(parameters_block(58_110, 0.001, 10, 835_481), expected);
    }

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

    #[test]
    fn small_probabilities_stay_visible() {}
}
