//! Writes a large filter file for measuring `bloomkit check` through a view
//! (`scripts/bench-view`): capacity n at ε = 1%, holding the decimal strings `0` … `n − 1`
//! (what `bloomkit check 7 …` asks about), saved in format version 1 or 2.
//!
//! ```text
//! cargo run --release -p bloomkit --features rayon --example view_file -- 100000000 /tmp/f.bloom v2
//! cargo run --release -p bloomkit --features rayon --example view_file -- 100000000 /tmp/b.bloom v2 blocked
//! ```
//!
//! The filter is made as `bloomkit build` makes it from a file of those n lines: the kind
//! (default `bloom`, any name of the registry) built from capacity n and ε = 1%
//! (`AnyFilter::build` of `BuildSpec::new(n, 0.01)`), the lines inserted in blocks on every
//! core with `AnyFilter::insert_parallel` (the same bits as inserting them one by one; without
//! the `rayon` feature, one batch insert per block on one core), then saved. Only the
//! 10 GB file of lines is left out.

use std::time::Instant;

use bloomkit::registry::BuildSpec;
use bloomkit::{AnyFilter, Kind, Persist};

/// Items per block: the lines of about 40 MB of decimal strings.
const BLOCK: u64 = 1 << 22;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (n, path, version, kind) = match &args[..] {
        [n, path, version] => (n, path, version, "bloom"),
        [n, path, version, kind] => (n, path, version, kind.as_str()),
        _ => return Err("usage: view_file N PATH v1|v2 [KIND]".into()),
    };
    let n: u64 = n.parse()?;
    let kind = Kind::from_name(kind).ok_or_else(|| format!("no kind named {kind}"))?;
    let started = Instant::now();
    let mut filter = AnyFilter::build(kind, &BuildSpec::new(n, 0.01))?;
    let mut batch: Vec<String> = Vec::with_capacity(BLOCK as usize);
    let mut next = 0u64;
    while next < n {
        batch.clear();
        let end = (next + BLOCK).min(n);
        batch.extend((next..end).map(|i| i.to_string()));
        let lines: Vec<&[u8]> = batch.iter().map(|s| s.as_bytes()).collect();
        insert(&mut filter, &lines)?;
        next = end;
        if next.is_multiple_of(BLOCK * 24) {
            eprintln!("{next} items in {:.0} s", started.elapsed().as_secs_f64());
        }
    }
    let inserted = started.elapsed();
    match version.as_str() {
        "v1" => filter.save(path)?,
        "v2" => filter.save_chunked(path)?,
        other => return Err(format!("version {other}: v1 or v2").into()),
    }
    eprintln!(
        "{path}: {n} items inserted in {:.1} s, saved in {:.1} s: {}",
        inserted.as_secs_f64(),
        (started.elapsed() - inserted).as_secs_f64(),
        filter.describe()
    );
    Ok(())
}

#[cfg(feature = "rayon")]
fn insert(filter: &mut AnyFilter, lines: &[&[u8]]) -> Result<(), bloomkit::Error> {
    filter.insert_parallel(lines)
}

#[cfg(not(feature = "rayon"))]
fn insert(filter: &mut AnyFilter, lines: &[&[u8]]) -> Result<(), bloomkit::Error> {
    filter.insert_batch(lines).map(drop)
}
