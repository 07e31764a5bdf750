use bloomkit::{BloomierFilter, BloomierLayout, HashFunction};
fn fnv(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf29ce484222325u64, |h, &x| {
        (h ^ x as u64).wrapping_mul(0x100000001b3)
    })
}
fn main() {
    let mut acc = Vec::new();
    for seed in 0..300u64 {
        for (r, c) in [(0u32, 8u32), (4, 6)] {
            let t = BloomierFilter::builder()
                .value_bits(r)
                .check_bits(c)
                .layout(BloomierLayout::Fuse)
                .seed(seed)
                .build((0..1000u64).map(|i| (i * 31 + seed, i & if r == 0 { 0 } else { 15 })))
                .unwrap();
            if t.attempt() > 0 {
                println!(
                    "retry seed {seed} r {r}: attempt {} {:016x}",
                    t.attempt(),
                    fnv(&t.to_bytes())
                );
            }
            acc.extend(t.to_bytes());
        }
    }
    println!("seeds: {:016x}", fnv(&acc));
    for n in [1u64, 150, 2_000, 100_000, 1_000_000] {
        for (r, c, layout, f) in [
            (0u32, 8u32, BloomierLayout::Fuse, HashFunction::Fold2),
            (0, 8, BloomierLayout::Fuse, HashFunction::Murmur3),
            (0, 16, BloomierLayout::Fuse, HashFunction::Fold2),
            (0, 7, BloomierLayout::Fuse, HashFunction::Xxh3),
            (12, 8, BloomierLayout::Fuse, HashFunction::Murmur3),
            (8, 8, BloomierLayout::Fuse, HashFunction::Murmur3),
            (3, 5, BloomierLayout::Fuse, HashFunction::SparkMurmur3Pair),
            (0, 8, BloomierLayout::ThreeSegments, HashFunction::Murmur3),
            (10, 6, BloomierLayout::ThreeSegments, HashFunction::Murmur3),
        ] {
            if n == 1_000_000 && layout == BloomierLayout::ThreeSegments {
                continue;
            }
            let mask = if r == 0 { 0 } else { (1u64 << r) - 1 };
            let mut keys: Vec<(u64, u64)> = (0..n)
                .map(|i| (i.wrapping_mul(0x9e3779b97f4a7c15) ^ 77, (i * 7919) & mask))
                .collect();
            // some duplicates
            let d: Vec<_> = keys.iter().step_by(97).cloned().collect();
            keys.extend(d);
            let t = BloomierFilter::builder()
                .value_bits(r)
                .check_bits(c)
                .layout(layout)
                .hash_function(f)
                .seed(n ^ 5)
                .build(keys.iter().cloned())
                .unwrap();
            let s = BloomierFilter::builder()
                .value_bits(r)
                .check_bits(c)
                .layout(layout)
                .hash_function(f)
                .build(keys.iter().map(|&(k, v)| (format!("k{k}"), v)))
                .unwrap();
            println!(
                "n {n} r {r} c {c} {layout:?} {f:?}: attempt {} {:016x} | str attempt {} {:016x}",
                t.attempt(),
                fnv(&t.to_bytes()),
                s.attempt(),
                fnv(&s.to_bytes())
            );
        }
    }
}
