//! Older data: hand-built DUMP payloads of the RDB encodings RedisBloom wrote before 2.2
//! (Bloom versions 0–3, cuckoo version 3), with 32-bit-hash and power-of-two layers, load
//! and answer as RedisBloom 2.4 answers them.
//!
//! The bits of each layer are set here by this file's own reading of RedisBloom's rule:
//! a chain without `FORCE64` hashes with 32-bit MurmurHash2 (`a = h(item, 0x9747b28c)`,
//! `b = h(item, a)`), with it MurmurHash64A (`a = h(item, 0xc6a4a7935bd1e995)`, `b =
//! h(item, a)`); bit i is `(a + i·b) mod 2⁶⁴` modulo `2ⁿ²` when the layer has `n2 > 0`,
//! else modulo its bits. With `REDISBLOOM_REFERENCE=/path/to/redisbloom.so` the same
//! payloads are also sent to that module and every answer compared.

use bloomkit::hash::{murmur2, murmur64a, REDISBLOOM_SEED};
use redis::{Connection, Value};

use crate::harness::Server;
use crate::payload::{module_payload, Field};
use crate::util::{items, q, v};

const FORCE64: u64 = 4;
/// libbloom's ln 2 as written there (k rounds with it).
#[allow(clippy::approx_constant)]
pub const LN2: f64 = 0.693147180559945;
const LN2_SQUARED: f64 = 0.480453013918201;

/// One layer as stored: its capacity, error, `n2`, stored bits field and bytes.
struct LayerSpec {
    entries: u64,
    error: f64,
    bpe: f64,
    n2: u64,
    bits_field: u64,
    bytes: usize,
    items: std::ops::Range<u32>,
}

impl LayerSpec {
    fn hashes(&self) -> u64 {
        (LN2 * self.bpe).ceil() as u64
    }

    fn positions(&self, options: u64, item: &[u8]) -> Vec<u64> {
        let (a, b) = if options & FORCE64 != 0 {
            let a = murmur64a(item, REDISBLOOM_SEED);
            (a, murmur64a(item, a))
        } else {
            let a = murmur2(item, 0x9747_b28c);
            (a as u64, murmur2(item, a) as u64)
        };
        let m = if self.n2 > 0 {
            1u64 << self.n2
        } else {
            self.bytes as u64 * 8
        };
        (0..self.hashes())
            .map(|i| a.wrapping_add(i.wrapping_mul(b)) % m)
            .collect()
    }

    fn data(&self, options: u64) -> Vec<u8> {
        let mut data = vec![0u8; self.bytes];
        for item in items("in", self.items.clone()) {
            for p in self.positions(options, item.as_bytes()) {
                data[(p / 8) as usize] |= 1 << (p % 8);
            }
        }
        data
    }

    fn contains(&self, options: u64, data: &[u8], item: &str) -> bool {
        self.positions(options, item.as_bytes())
            .iter()
            .all(|&p| data[(p / 8) as usize] & (1 << (p % 8)) != 0)
    }
}

fn layer(
    entries: u64,
    error: f64,
    n2: u64,
    bits_field: u64,
    bytes: usize,
    items: std::ops::Range<u32>,
) -> LayerSpec {
    LayerSpec {
        entries,
        error,
        bpe: -error.ln() / LN2_SQUARED,
        n2,
        bits_field,
        bytes,
        items,
    }
}

/// A Bloom record of encoding version `encver` with these layers, and what every
/// `in*`/`out*` item should answer.
fn bloom_payload(encver: u64, options: u64, layers: &[LayerSpec]) -> (Vec<u8>, Vec<i64>) {
    let size: u64 = layers.iter().map(|l| l.items.len() as u64).sum();
    let mut fields = vec![Field::Unsigned(size), Field::Unsigned(layers.len() as u64)];
    if encver >= 2 {
        fields.push(Field::Unsigned(options));
    }
    if encver >= 4 {
        fields.push(Field::Unsigned(2));
    }
    let datas: Vec<Vec<u8>> = layers.iter().map(|l| l.data(options)).collect();
    for (l, data) in layers.iter().zip(&datas) {
        fields.push(Field::Unsigned(l.entries));
        fields.push(Field::Double(l.error));
        fields.push(Field::Unsigned(l.hashes()));
        fields.push(Field::Double(l.bpe));
        if encver > 0 {
            fields.push(Field::Unsigned(l.bits_field));
            fields.push(Field::Unsigned(l.n2));
        }
        fields.push(Field::Buffer(data.clone()));
        fields.push(Field::Unsigned(l.items.len() as u64));
    }
    let expected = probe_items()
        .iter()
        .map(|item| {
            layers
                .iter()
                .zip(&datas)
                .any(|(l, d)| l.contains(options, d, item)) as i64
        })
        .collect();
    (module_payload("MBbloom--", encver, &fields), expected)
}

/// Items that were added and items that were not.
fn probe_items() -> Vec<String> {
    let mut all = items("in", 0..200);
    all.extend(items("out", 0..2000));
    all
}

fn mexists(c: &mut Connection, key: &str) -> Vec<i64> {
    let mut args = vec!["BF.MEXISTS".to_string(), key.to_string()];
    args.extend(probe_items());
    q(c, &args)
}

/// Every older Bloom layout: version 0 (no bits field: bits = ⌊entries · bpe⌋), version 1
/// (RedisBloom 1.0: power-of-two layers stored with bits 0, 32-bit hashing), version 2
/// (options stored), version 3 (RedisBloom 1.1–2.0: FORCE64 without NOROUND).
pub fn older_bloom_cases() -> Vec<(&'static str, Vec<u8>, Vec<i64>, &'static str)> {
    let mut cases = Vec::new();
    // Version 0: 128 entries at 8 bits per entry, exactly 1024 bits.
    let mut l = layer(128, 0.01, 0, 0, 128, 0..100);
    l.bpe = 8.0;
    let (p, e) = bloom_payload(0, 0, &[l]);
    cases.push(("v0", p, e, "hashwidth:32"));
    // Version 1: two power-of-two layers of 2¹⁰ and 2⁹ bits, 32-bit hashing.
    let a = layer(100, 0.005, 10, 0, 128, 0..100);
    let b = layer(30, 0.0025, 9, 0, 64, 100..120);
    let (p, e) = bloom_payload(1, 0, &[a, b]);
    cases.push(("v1", p, e, "hashwidth:32"));
    // Version 2: options stored (none: 32-bit, rounded), a small 2⁵-bit layer whose 4
    // bytes RedisBloom 1.x wrote as 2⁵ / 8.
    let a = layer(60, 0.01, 10, 0, 128, 0..60);
    let b = layer(3, 0.005, 5, 0, 4, 60..63);
    let (p, e) = bloom_payload(2, 0, &[a, b]);
    cases.push(("v2", p, e, "hashwidth:32"));
    // Version 3: FORCE64, power-of-two layers (bits stored as 0).
    let a = layer(100, 0.005, 10, 0, 128, 0..100);
    let b = layer(200, 0.0025, 12, 0, 512, 100..200);
    let (p, e) = bloom_payload(3, FORCE64, &[a, b]);
    cases.push(("v3", p, e, "hashwidth:64"));
    // The same layouts with the bits field as 2.2 and later write it (bytes · 8), which
    // RedisBloom 2.4.23's integrity check also accepts.
    let a = layer(100, 0.005, 10, 1024, 128, 0..100);
    let b = layer(30, 0.0025, 9, 512, 64, 100..120);
    let (p, e) = bloom_payload(1, 0, &[a, b]);
    cases.push(("v1-bits", p, e, "hashwidth:32"));
    let a = layer(100, 0.005, 10, 1024, 128, 0..100);
    let b = layer(200, 0.0025, 12, 4096, 512, 100..200);
    let (p, e) = bloom_payload(3, FORCE64, &[a, b]);
    cases.push(("v3-bits", p, e, "hashwidth:64"));
    // Version 4 with a power-of-two FORCE64 layer (bits = bytes · 8, as 2.2+ writes).
    let a = layer(100, 0.005, 10, 1024, 128, 0..150);
    let (p, e) = bloom_payload(4, FORCE64, &[a]);
    cases.push(("v4-n2", p, e, "hashwidth:64"));
    cases
}

/// How many `in*` items each case holds.
fn payload_items(name: &str) -> usize {
    match name {
        "v0" => 100,
        "v1" | "v1-bits" => 120,
        "v2" => 63,
        "v3" | "v3-bits" => 200,
        _ => 150,
    }
}

#[test]
fn older_bloom_encodings_load_and_answer_as_redisbloom() {
    let mut s = Server::start();
    let reference = std::env::var_os("REDISBLOOM_REFERENCE")
        .map(|path| Server::start_module(std::path::Path::new(&path), &[], &[]));
    let cases = older_bloom_cases();
    let mut answers = Vec::new();
    {
        let c = &mut s.conn();
        for (name, payload, expected, width) in &cases {
            let restored: String = redis::cmd("RESTORE")
                .arg(*name)
                .arg(0)
                .arg(payload)
                .query(c)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(restored, "OK");
            let got = mexists(c, name);
            assert_eq!(&got, expected, "{name}");
            let inserted = payload_items(name);
            assert!(
                got[..inserted].iter().all(|&x| x == 1),
                "{name}: no false negative"
            );
            assert!(
                got.iter().filter(|&&x| x == 1).count() < 400,
                "{name}: few positives"
            );
            let debug: Vec<String> = q(c, &["BF.DEBUG", name]);
            assert!(debug[1].contains(width), "{name}: {debug:?}");
            // Adds land in the old layers' scheme, and a full chain grows by a layer of
            // its own kind (a power of two of bits without NOROUND).
            let mut madd = vec!["BF.MADD".to_string(), name.to_string()];
            madd.extend(items("more", 0..400));
            let added: Vec<Value> = q(c, &madd);
            let mut exists = vec!["BF.MEXISTS".to_string(), name.to_string()];
            exists.extend(items("more", 0..400));
            assert!(
                q::<Vec<i64>, _>(c, &exists).iter().all(|&x| x == 1),
                "{name}"
            );
            let debug: Vec<String> = q(c, &["BF.DEBUG", name]);
            let newest = debug.last().unwrap();
            let bits: u64 = newest
                .split_whitespace()
                .find_map(|f| f.strip_prefix("bits:"))
                .and_then(|b| b.parse().ok())
                .unwrap();
            assert!(
                debug.len() > 2 && bits.is_power_of_two(),
                "{name}: {debug:?}"
            );
            answers.push((got, added, debug, v(c, &["BF.INFO", name])));
        }
        // The DUMP the module writes back (version 4) reloads with the same answers.
        let before: Vec<Vec<i64>> = cases.iter().map(|(n, ..)| mexists(c, n)).collect();
        assert_eq!(q::<String, _>(c, &["DEBUG", "RELOAD"]), "OK", "{}", s.log());
        let after: Vec<Vec<i64>> = cases.iter().map(|(n, ..)| mexists(c, n)).collect();
        assert_eq!(after, before);
        assert_eq!(q::<String, _>(c, &["SAVE"]), "OK");
    }
    // And from the RDB file after a restart.
    let before: Vec<Vec<i64>> = {
        let c = &mut s.conn();
        cases.iter().map(|(n, ..)| mexists(c, n)).collect()
    };
    s.restart();
    {
        let c = &mut s.conn();
        let after: Vec<Vec<i64>> = cases.iter().map(|(n, ..)| mexists(c, n)).collect();
        assert_eq!(after, before, "{}", s.log());
    }
    if let Some(r) = reference {
        let c = &mut r.conn();
        for ((name, payload, ..), mine) in cases.iter().zip(&answers) {
            let restored: redis::RedisResult<String> = redis::cmd("RESTORE")
                .arg(*name)
                .arg(0)
                .arg(payload)
                .query(c);
            // RedisBloom 2.4.23 refuses layers stored with bits 0 (its integrity check came
            // after the releases that wrote them); the module loads them.
            if ["v1", "v2", "v3"].contains(name) {
                assert!(restored.is_err(), "{name}");
                continue;
            }
            assert_eq!(restored.as_deref(), Ok("OK"), "{name}");
            assert_eq!(mexists(c, name), mine.0, "{name} against the reference");
            let mut madd = vec!["BF.MADD".to_string(), name.to_string()];
            madd.extend(items("more", 0..400));
            assert_eq!(q::<Vec<Value>, _>(c, &madd), mine.1, "{name}");
            assert_eq!(
                q::<Vec<String>, _>(c, &["BF.DEBUG", name]),
                mine.2,
                "{name}"
            );
            assert_eq!(v(c, &["BF.INFO", name]), mine.3, "{name}");
        }
    }
}

/// A cuckoo filter of encoding version 3 (RedisBloom 1.1 to 2.0: sub-filter count,
/// buckets, items, then each sub-filter's slots) loads with that version's parameters —
/// bucket size 2, 500 iterations, expansion 1, no deletes — and its hashing (32-bit
/// MurmurHash2), which it keeps through DUMP and RESTORE. (Files written by RedisBloom 2.0
/// itself: `older_rdb`.)
#[test]
fn an_older_cuckoo_encoding_loads_with_redisbloom_2_0_parameters() {
    let s = Server::start();
    let c = &mut s.conn();
    // A filter with RedisBloom 1.x's parameters, grown to three sub-filters.
    q::<String, _>(c, &["CF.RESERVE", "new", "64"]);
    let mut insert = vec!["CF.INSERT".to_string(), "new".into(), "ITEMS".into()];
    insert.extend(items("in", 0..200));
    q::<Value, _>(c, &insert);
    let info: Vec<Value> = q(c, &["CF.INFO", "new"]);
    let field = |info: &[Value], name: &str| -> u64 {
        let at = info
            .iter()
            .position(|v| *v == Value::SimpleString(name.into()))
            .unwrap();
        match info[at + 1] {
            Value::Int(n) => n as u64,
            _ => panic!(),
        }
    };
    let (filters, buckets, count) = (
        field(&info, "Number of filters"),
        field(&info, "Number of buckets"),
        field(&info, "Number of items inserted"),
    );
    assert!(filters >= 2);
    let mut fields = vec![
        Field::Unsigned(filters),
        Field::Unsigned(buckets),
        Field::Unsigned(count),
    ];
    let mut iter = 1i64;
    loop {
        let (next, data): (i64, Vec<u8>) = redis::cmd("CF.SCANDUMP")
            .arg("new")
            .arg(iter)
            .query(c)
            .unwrap();
        if next == 0 {
            break;
        }
        assert_eq!(data.len() as u64, buckets * 2, "one chunk per sub-filter");
        fields.push(Field::Buffer(data));
        iter = next;
    }
    let payload = module_payload("MBbloomCF", 3, &fields);
    assert_eq!(
        redis::cmd("RESTORE")
            .arg("old")
            .arg(0)
            .arg(&payload)
            .query::<String>(c)
            .unwrap(),
        "OK"
    );
    let old: Vec<Value> = q(c, &["CF.INFO", "old"]);
    for (name, want) in [
        ("Number of filters", filters),
        ("Number of buckets", buckets),
        ("Number of items inserted", count),
        ("Number of items deleted", 0),
        ("Bucket size", 2),
        ("Expansion rate", 1),
        ("Max iterations", 500),
    ] {
        assert_eq!(field(&old, name), want, "{name}");
    }
    // The slots are the same, the hashing is not: the items, hashed as today, are mostly
    // not found under the old hashing.
    let mut probe = vec!["CF.MEXISTS".to_string(), "old".into()];
    probe.extend(items("in", 0..200));
    let found: Vec<i64> = q(c, &probe);
    assert!(found.iter().sum::<i64>() < 100, "{found:?}");
    // DUMP keeps the hashing: RESTORE gives the same answers, and the payload differs
    // from the same slots under today's hashing.
    let dumped: Vec<u8> = q(c, &["DUMP", "old"]);
    assert_ne!(dumped, q::<Vec<u8>, _>(c, &["DUMP", "new"]));
    redis::cmd("RESTORE")
        .arg("again")
        .arg(0)
        .arg(&dumped)
        .query::<String>(c)
        .unwrap();
    probe[1] = "again".into();
    assert_eq!(q::<Vec<i64>, _>(c, &probe), found);
    // A payload of a version newer than 4 is refused.
    let newer = module_payload("MBbloomCF", 5, &fields);
    assert!(redis::cmd("RESTORE")
        .arg("newer")
        .arg(0)
        .arg(&newer)
        .query::<String>(c)
        .is_err());
}
