//! Writes a large classic filter file for measuring `bloomkit check` through a view
//! (`scripts/bench-view`): capacity n at ε = 1%, holding the decimal strings `0` … `n − 1`
//! (what `bloomkit check 7 …` asks about), saved in format version 1 or 2.
//!
//! ```text
//! cargo run --release -p bloomkit --example view_file -- 100000000 /tmp/f.bloom v2
//! ```

use bloomkit::{BloomFilter, Persist};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [n, path, version] = &args[..] else {
        return Err("usage: view_file N PATH v1|v2".into());
    };
    let n: u64 = n.parse()?;
    let mut filter = BloomFilter::with_capacity(n, 0.01)?;
    let mut batch: Vec<String> = Vec::with_capacity(1 << 20);
    let mut next = 0u64;
    while next < n {
        batch.clear();
        let end = (next + (1 << 20)).min(n);
        batch.extend((next..end).map(|i| i.to_string()));
        filter.insert_batch(&batch);
        next = end;
    }
    match version.as_str() {
        "v1" => filter.save(path)?,
        "v2" => filter.save_chunked(path)?,
        other => return Err(format!("version {other}: v1 or v2").into()),
    }
    eprintln!(
        "{path}: {} items, m = {} bits, k = {}",
        n,
        filter.num_bits(),
        filter.num_hashes()
    );
    Ok(())
}
