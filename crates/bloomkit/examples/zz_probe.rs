use bloomkit::BlockedBloomFilter;
#[inline(never)]
pub fn blocked_batch(f: &BlockedBloomFilter, q: &[u64], out: &mut Vec<bool>) {
    f.contains_batch_u64(q, out)
}
fn main() {
    let b = BlockedBloomFilter::with_capacity(1000u64, 0.01).unwrap();
    let q: Vec<u64> = (0..100).collect();
    let mut out = Vec::new();
    blocked_batch(&b, &q, &mut out);
    println!("{}", out.len());
}
