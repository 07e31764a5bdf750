//! BF.*: every command, option, error string, wrong type and arity; dumps, golden bytes,
//! DEBUG RELOAD, the memory limit.

use redis::{Connection, Value};

use crate::harness::Server;
use crate::util::{err, items, q, v};

fn bulk(value: &Value) -> Vec<u8> {
    match value {
        Value::BulkString(b) => b.clone(),
        Value::Nil => Vec::new(),
        other => panic!("expected a bulk string, got {other:?}"),
    }
}

/// `BF.SCANDUMP` from 0 to the end: the (iterator, data) pairs, header first.
fn scandump(c: &mut Connection, key: &str) -> Vec<(i64, Vec<u8>)> {
    let mut out = Vec::new();
    let mut iter = 0i64;
    loop {
        let (next, data): (i64, Value) = redis::cmd("BF.SCANDUMP")
            .arg(key)
            .arg(iter)
            .query(c)
            .unwrap();
        if next == 0 {
            assert!(bulk(&data).is_empty(), "the end is [0, \"\"]");
            return out;
        }
        out.push((next, bulk(&data)));
        iter = next;
    }
}

fn loadchunks(c: &mut Connection, key: &str, dump: &[(i64, Vec<u8>)]) {
    for (iter, data) in dump {
        let ok: String = redis::cmd("BF.LOADCHUNK")
            .arg(key)
            .arg(*iter)
            .arg(&data[..])
            .query(c)
            .unwrap();
        assert_eq!(ok, "OK");
    }
}

/// Every answer a filter gives on inserted and absent items.
fn answers(c: &mut Connection, key: &str, n: u32) -> Vec<i64> {
    let mut args = vec!["BF.MEXISTS".to_string(), key.to_string()];
    args.extend(items("in-", 0..n));
    args.extend(items("out-", 0..n));
    q(c, &args)
}

#[test]
fn reserve_add_exists_card_happy_path() {
    let s = Server::start();
    let c = &mut s.conn();
    assert_eq!(
        q::<String, _>(c, &["BF.RESERVE", "f", "0.01", "1000"]),
        "OK"
    );
    assert_eq!(q::<i64, _>(c, &["BF.ADD", "f", "apple"]), 1);
    assert_eq!(q::<i64, _>(c, &["BF.ADD", "f", "apple"]), 0);
    assert_eq!(
        q::<Vec<i64>, _>(c, &["BF.MADD", "f", "apple", "pear", "plum"]),
        [0, 1, 1]
    );
    assert_eq!(q::<i64, _>(c, &["BF.EXISTS", "f", "pear"]), 1);
    assert_eq!(q::<i64, _>(c, &["BF.EXISTS", "f", "kiwi"]), 0);
    assert_eq!(
        q::<Vec<i64>, _>(c, &["BF.MEXISTS", "f", "plum", "kiwi"]),
        [1, 0]
    );
    assert_eq!(q::<i64, _>(c, &["BF.CARD", "f"]), 3);
    // Missing keys: EXISTS 0, MEXISTS zeros, CARD 0; ADD creates with the defaults.
    assert_eq!(q::<i64, _>(c, &["BF.EXISTS", "none", "x"]), 0);
    assert_eq!(
        q::<Vec<i64>, _>(c, &["BF.MEXISTS", "none", "x", "y"]),
        [0, 0]
    );
    assert_eq!(q::<i64, _>(c, &["BF.CARD", "none"]), 0);
    assert_eq!(q::<i64, _>(c, &["BF.ADD", "auto", "x"]), 1);
    assert_eq!(q::<Vec<i64>, _>(c, &["BF.INFO", "auto", "CAPACITY"]), [100]);
    assert_eq!(q::<Vec<i64>, _>(c, &["BF.MADD", "auto2", "x", "y"]), [1, 1]);
    assert_eq!(q::<Vec<i64>, _>(c, &["BF.INFO", "auto2", "EXPANSION"]), [2]);
    // Binary items are items.
    let ok: i64 = redis::cmd("BF.ADD")
        .arg("f")
        .arg(&[0u8, 255, 10, 13][..])
        .query(c)
        .unwrap();
    assert_eq!(ok, 1);
    let there: i64 = redis::cmd("BF.EXISTS")
        .arg("f")
        .arg(&[0u8, 255, 10, 13][..])
        .query(c)
        .unwrap();
    assert_eq!(there, 1);
}

#[test]
fn info_and_debug_report_redisbloom_fields() {
    let s = Server::start();
    let c = &mut s.conn();
    q::<String, _>(c, &["BF.RESERVE", "f", "0.01", "100"]);
    for item in items("i", 0..150) {
        q::<i64, _>(c, &["BF.ADD", "f", &item]);
    }
    let card: i64 = q(c, &["BF.CARD", "f"]);
    let info = v(c, &["BF.INFO", "f"]);
    let Value::Array(fields) = info else {
        panic!("{info:?}")
    };
    let labels: Vec<String> = fields
        .iter()
        .step_by(2)
        .map(|f| match f {
            Value::SimpleString(s) => s.clone(),
            other => panic!("label {other:?}"),
        })
        .collect();
    assert_eq!(
        labels,
        [
            "Capacity",
            "Size",
            "Number of filters",
            "Number of items inserted",
            "Expansion rate"
        ]
    );
    // Two layers: 100 + 200 capacity; sizes 144 + 2 · ⌈…⌉ bytes; 32 + 64 per layer.
    let debug: Vec<String> = q(c, &["BF.DEBUG", "f"]);
    assert_eq!(debug.len(), 3);
    assert_eq!(debug[0], format!("size:{card}"));
    assert!(
        debug[1].starts_with(
            "bytes:144 bits:1152 hashes:8 hashwidth:64 capacity:100 size:100 ratio:0.005"
        ),
        "{}",
        debug[1]
    );
    assert!(debug[2].contains("capacity:200"), "{}", debug[2]);
    assert!(debug[2].ends_with("ratio:0.0025"), "{}", debug[2]);
    let layer2_bytes: i64 = debug[2]
        .split_whitespace()
        .next()
        .and_then(|b| b.strip_prefix("bytes:"))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(q::<Vec<i64>, _>(c, &["BF.INFO", "f", "capacity"]), [300]);
    assert_eq!(
        q::<Vec<i64>, _>(c, &["BF.INFO", "f", "SIZE"]),
        [32 + 128 + 144 + layer2_bytes]
    );
    assert_eq!(q::<Vec<i64>, _>(c, &["BF.INFO", "f", "FILTERS"]), [2]);
    assert_eq!(q::<Vec<i64>, _>(c, &["BF.INFO", "f", "ITEMS"]), [card]);
    assert_eq!(q::<Vec<i64>, _>(c, &["BF.INFO", "f", "EXPANSION"]), [2]);
    assert_eq!(
        err(c, &["BF.INFO", "f", "COLOUR"]),
        "Invalid information value"
    );
    assert_eq!(err(c, &["BF.INFO", "none"]), "ERR not found");
    assert_eq!(err(c, &["BF.DEBUG", "none"]), "ERR not found");
    // NONSCALING: expansion is nil, the layer has ε itself.
    q::<String, _>(c, &["BF.RESERVE", "n", "0.01", "100", "NONSCALING"]);
    assert_eq!(
        v(c, &["BF.INFO", "n", "EXPANSION"]),
        Value::Array(vec![Value::Nil])
    );
    let debug: Vec<String> = q(c, &["BF.DEBUG", "n"]);
    assert!(
        debug[1].ends_with("capacity:100 size:0 ratio:0.01"),
        "{}",
        debug[1]
    );
    // MEMORY USAGE counts at least the filter's size.
    let usage: i64 = q(c, &["MEMORY", "USAGE", "f"]);
    assert!(usage >= 32 + 128 + 144 + layer2_bytes, "{usage}");
}

#[test]
fn expansion_and_nonscaling_options() {
    let s = Server::start();
    let c = &mut s.conn();
    q::<String, _>(c, &["BF.RESERVE", "e", "0.01", "10", "EXPANSION", "4"]);
    for item in items("i", 0..60) {
        q::<i64, _>(c, &["BF.ADD", "e", &item]);
    }
    assert_eq!(
        q::<Vec<i64>, _>(c, &["BF.INFO", "e", "CAPACITY"]),
        [10 + 40 + 160]
    );
    q::<String, _>(c, &["BF.RESERVE", "ns", "0.01", "5", "nonscaling"]);
    let mut results = Vec::new();
    for item in items("i", 0..40) {
        results.push(
            redis::cmd("BF.ADD")
                .arg("ns")
                .arg(&item)
                .query::<i64>(c)
                .map_err(|e| crate::util::error_text(&e)),
        );
    }
    assert!(
        results.contains(&Err("ERR non scaling filter is full".to_string())),
        "{results:?}"
    );
    assert_eq!(q::<i64, _>(c, &["BF.CARD", "ns"]), 5);
    // In arrays the failure is an error element; the other items still answer.
    let reply = crate::util::raw_reply(s.port, &[b"BF.MADD", b"ns", b"i0", b"brand-new-item-xyz"]);
    assert_eq!(reply, "*2\r\n:0\r\n-ERR non scaling filter is full\r\n");
}

#[test]
fn insert_options_and_errors() {
    let s = Server::start();
    let c = &mut s.conn();
    assert_eq!(
        q::<Vec<i64>, _>(
            c,
            &[
                "BF.INSERT",
                "k",
                "CAPACITY",
                "1000",
                "ERROR",
                "0.001",
                "EXPANSION",
                "3",
                "ITEMS",
                "a",
                "b",
                "a"
            ]
        ),
        [1, 1, 0]
    );
    assert_eq!(q::<Vec<i64>, _>(c, &["BF.INFO", "k", "CAPACITY"]), [1000]);
    assert_eq!(q::<Vec<i64>, _>(c, &["BF.INFO", "k", "EXPANSION"]), [3]);
    let debug: Vec<String> = q(c, &["BF.DEBUG", "k"]);
    assert!(debug[1].ends_with("ratio:0.0005"), "{}", debug[1]);
    assert_eq!(
        q::<Vec<i64>, _>(c, &["BF.INSERT", "k", "NOCREATE", "ITEMS", "c"]),
        [1]
    );
    assert_eq!(q::<Vec<i64>, _>(c, &["BF.INSERT", "d", "ITEMS", "x"]), [1]);
    assert_eq!(q::<Vec<i64>, _>(c, &["BF.INFO", "d", "CAPACITY"]), [100]);
    assert_eq!(
        q::<Vec<i64>, _>(c, &["BF.INSERT", "ns", "NONSCALING", "ITEMS", "x"]),
        [1]
    );
    assert_eq!(
        v(c, &["BF.INFO", "ns", "EXPANSION"]),
        Value::Array(vec![Value::Nil])
    );
    assert_eq!(
        err(c, &["BF.INSERT", "missing", "NOCREATE", "ITEMS", "x"]),
        "ERR not found"
    );
    assert_eq!(q::<i64, _>(c, &["EXISTS", "missing"]), 0);
    assert_eq!(
        err(c, &["BF.INSERT", "z", "CAPACITY", "lots", "ITEMS", "x"]),
        "Bad capacity"
    );
    assert_eq!(
        err(c, &["BF.INSERT", "z", "CAPACITY", "0", "ITEMS", "x"]),
        "Bad argument received"
    );
    assert_eq!(
        err(c, &["BF.INSERT", "z", "ERROR", "x", "ITEMS", "x"]),
        "Bad error rate"
    );
    assert_eq!(
        err(c, &["BF.INSERT", "z", "ERROR", "1.5", "ITEMS", "x"]),
        "Bad argument received"
    );
    assert_eq!(
        err(c, &["BF.INSERT", "z", "EXPANSION", "x", "ITEMS", "x"]),
        "Bad expansion"
    );
    assert_eq!(
        err(c, &["BF.INSERT", "z", "ZEBRA", "red", "ITEMS", "x"]),
        "Unknown argument received"
    );
    assert_eq!(
        err(
            c,
            &["BF.INSERT", "z", "NOCREATE", "CAPACITY", "10", "ITEMS", "x"]
        ),
        "ERR not found"
    );
    let arity = "ERR wrong number of arguments for 'bf.insert' command";
    assert_eq!(err(c, &["BF.INSERT", "z", "ITEMS"]), arity);
    assert_eq!(err(c, &["BF.INSERT", "z", "CAPACITY", "10"]), arity);
    assert_eq!(err(c, &["BF.INSERT", "z", "NOCREATE", "NONSCALING"]), arity);
    assert_eq!(
        q::<i64, _>(c, &["EXISTS", "z"]),
        0,
        "failed inserts create nothing"
    );
}

#[test]
fn reserve_errors() {
    let s = Server::start();
    let c = &mut s.conn();
    q::<String, _>(c, &["BF.RESERVE", "f", "0.01", "100"]);
    for (args, want) in [
        (&["BF.RESERVE", "f", "0.01", "100"][..], "ERR item exists"),
        (&["BF.RESERVE", "g", "abc", "100"], "ERR bad error rate"),
        (&["BF.RESERVE", "g", "0.01", "abc"], "ERR bad capacity"),
        (
            &["BF.RESERVE", "g", "0", "100"],
            "ERR (0 < error rate range < 1) ",
        ),
        (
            &["BF.RESERVE", "g", "1", "100"],
            "ERR (0 < error rate range < 1) ",
        ),
        (
            &["BF.RESERVE", "g", "0.01", "0"],
            "ERR (capacity should be larger than 0)",
        ),
        (
            &["BF.RESERVE", "g", "0.01", "-5"],
            "ERR (capacity should be larger than 0)",
        ),
        (
            &["BF.RESERVE", "g", "0.01", "100", "EXPANSION"],
            "ERR no expansion",
        ),
        (
            &["BF.RESERVE", "g", "0.01", "100", "EXPANSION", "x"],
            "ERR bad expansion",
        ),
        (
            &[
                "BF.RESERVE",
                "g",
                "0.01",
                "100",
                "EXPANSION",
                "2",
                "NONSCALING",
            ],
            "Nonscaling filters cannot expand",
        ),
        (
            &["BF.RESERVE", "g", "0.01"],
            "ERR wrong number of arguments for 'bf.reserve' command",
        ),
    ] {
        assert_eq!(err(c, args), want, "{args:?}");
    }
    assert_eq!(q::<i64, _>(c, &["EXISTS", "g"]), 0);
}

#[test]
fn wrong_types_and_arity() {
    let s = Server::start();
    let c = &mut s.conn();
    q::<String, _>(c, &["SET", "str", "x"]);
    let wrongtype = "WRONGTYPE Operation against a key holding the wrong kind of value";
    for args in [
        &["BF.RESERVE", "str", "0.01", "100"][..],
        &["BF.ADD", "str", "x"],
        &["BF.MADD", "str", "x"],
        &["BF.INSERT", "str", "ITEMS", "x"],
        &["BF.CARD", "str"],
        &["BF.INFO", "str"],
        &["BF.DEBUG", "str"],
        &["BF.SCANDUMP", "str", "0"],
        &["BF.LOADCHUNK", "str", "1", "x"],
    ] {
        assert_eq!(err(c, args), wrongtype, "{args:?}");
    }
    for (args, name) in [
        (&["BF.ADD", "k"][..], "bf.add"),
        (&["BF.ADD", "k", "a", "b"], "bf.add"),
        (&["BF.MADD", "k"], "bf.madd"),
        (&["BF.EXISTS", "k"], "bf.exists"),
        (&["BF.MEXISTS", "k"], "bf.mexists"),
        (&["BF.CARD"], "bf.card"),
        (&["BF.INFO"], "bf.info"),
        (&["BF.INFO", "k", "a", "b"], "bf.info"),
        (&["BF.DEBUG"], "bf.debug"),
        (&["BF.SCANDUMP", "k"], "bf.scandump"),
        (&["BF.LOADCHUNK", "k", "1"], "bf.loadchunk"),
    ] {
        assert_eq!(
            err(c, args),
            format!("ERR wrong number of arguments for '{name}' command"),
            "{args:?}"
        );
    }
}

#[test]
fn scandump_loadchunk_reproduces_every_answer_small_and_multi_layer() {
    let s = Server::start();
    let c = &mut s.conn();
    q::<String, _>(c, &["BF.RESERVE", "src", "0.001", "50", "EXPANSION", "2"]);
    let mut args = vec!["BF.MADD".to_string(), "src".into()];
    args.extend(items("in-", 0..3000));
    q::<Vec<i64>, _>(c, &args);
    let dump = scandump(c, "src");
    let layers = q::<Vec<i64>, _>(c, &["BF.INFO", "src", "FILTERS"])[0];
    assert!(layers >= 6);
    assert_eq!(
        dump.len() as i64,
        1 + layers,
        "one header and one chunk per layer"
    );
    loadchunks(c, "copy", &dump);
    assert_eq!(answers(c, "copy", 3000), answers(c, "src", 3000));
    assert_eq!(v(c, &["BF.INFO", "copy"]), v(c, &["BF.INFO", "src"]));
    assert_eq!(scandump(c, "copy"), dump);
    // Past the end, and an empty (new) filter: the header then [0, ""].
    let end: (i64, Vec<u8>) = redis::cmd("BF.SCANDUMP")
        .arg("src")
        .arg(1i64 << 40)
        .query(c)
        .unwrap();
    assert_eq!(end, (0, Vec::new()));
}

#[test]
fn scandump_of_a_large_filter_takes_several_chunks_of_at_most_16_mib() {
    let s = Server::start();
    let c = &mut s.conn();
    // ~18 MB in one layer: two chunks.
    q::<String, _>(c, &["BF.RESERVE", "big", "0.01", "15000000", "NONSCALING"]);
    let mut args = vec!["BF.MADD".to_string(), "big".into()];
    args.extend(items("in-", 0..2000));
    q::<Vec<i64>, _>(c, &args);
    let dump = scandump(c, "big");
    assert_eq!(dump.len(), 3);
    assert_eq!(dump[1].1.len(), 16 << 20);
    assert_eq!(dump[1].0, 1 + (16 << 20));
    loadchunks(c, "copy", &dump);
    assert_eq!(answers(c, "copy", 2000), answers(c, "big", 2000));
}

#[test]
fn loadchunk_errors_leave_keys_as_they_were() {
    let s = Server::start();
    let c = &mut s.conn();
    q::<String, _>(c, &["BF.RESERVE", "src", "0.01", "100"]);
    q::<Vec<i64>, _>(c, &["BF.MADD", "src", "a", "b", "c"]);
    let dump = scandump(c, "src");
    let header = &dump[0].1;
    let load = |c: &mut Connection, key: &str, iter: i64, data: &[u8]| {
        redis::cmd("BF.LOADCHUNK")
            .arg(key)
            .arg(iter)
            .arg(data)
            .query::<String>(c)
            .map_err(|e| crate::util::error_text(&e))
    };
    assert_eq!(
        load(c, "x", 1, &header[..header.len() - 1]),
        Err("ERR received bad data".into())
    );
    let mut corrupt = header.clone();
    corrupt[20 + 40..20 + 44].fill(0); // hashes = 0 in the first layer record
    assert_eq!(
        load(c, "x", 1, &corrupt),
        Err("ERR received bad data".into())
    );
    assert_eq!(q::<i64, _>(c, &["EXISTS", "x"]), 0);
    assert_eq!(
        load(c, "x", dump[1].0, &dump[1].1),
        Err("ERR not found".into()),
        "a chunk before its header"
    );
    // Iterator 1 on an existing key is a chunk, not a header (as RedisBloom).
    assert_eq!(
        load(c, "src", 1, header),
        Err("ERR received bad data".into())
    );
    assert_eq!(
        err(c, &["BF.LOADCHUNK", "src", "one", "x"]),
        "ERR Second argument must be numeric"
    );
    assert_eq!(
        load(c, "src", 10_000, b"xyz"),
        Err("ERR invalid offset - no link found".into())
    );
    assert_eq!(
        load(c, "src", 1 + 144 + 1, b"ab"),
        Err("ERR invalid chunk - Too big for current filter".into())
    );
    assert_eq!(scandump(c, "src"), dump, "refused chunks change nothing");
    assert_eq!(
        err(c, &["BF.SCANDUMP", "src", "x"]),
        "Second argument must be numeric"
    );
    assert_eq!(err(c, &["BF.SCANDUMP", "none", "0"]), "ERR not found");
}

/// Golden bytes from the documented layout (redisbloom-2.4.md), derived here by hand:
/// bpe = −ln ε / ln²2, bits = ⌊n·bpe⌋ rounded up to 64, hashes = ⌈ln 2·bpe⌉; the header
/// fields packed little-endian; bit i of an item = (a + i·b) mod bits with
/// a = MurmurHash64A(item, 0xc6a4a7935bd1e995), b = MurmurHash64A(item, a), bit x being
/// bit x mod 8 of byte x / 8.
#[test]
fn golden_header_chunk_and_bit_positions() {
    use bloomkit::hash::murmur64a;
    // RedisBloom (after libbloom) writes ln²2 and ln 2 with 15 digits.
    const LN2_SQUARED: f64 = 0.480453013918201;
    #[allow(clippy::approx_constant)]
    const LN2: f64 = 0.693147180559945;
    let s = Server::start();
    let c = &mut s.conn();
    for (key, rate, capacity, nonscaling, items) in [
        ("g1", 0.01, 100u64, false, &["foo", "bar"][..]),
        (
            "g2",
            0.001,
            1000,
            true,
            &["hello", "", "a much longer item that spans several blocks"][..],
        ),
    ] {
        let mut reserve = vec![
            "BF.RESERVE".to_string(),
            key.into(),
            rate.to_string(),
            capacity.to_string(),
        ];
        if nonscaling {
            reserve.push("NONSCALING".into());
        }
        q::<String, _>(c, &reserve);
        for item in items {
            assert_eq!(q::<i64, _>(c, &["BF.ADD", key, item]), 1);
        }
        let error: f64 = if nonscaling { rate } else { rate / 2.0 };
        let bpe = -error.ln() / LN2_SQUARED;
        let bits = ((capacity as f64 * bpe) as u64).div_ceil(64) * 64;
        let bytes = bits / 8;
        let hashes = (LN2 * bpe).ceil() as u32;
        let mut header = Vec::new();
        header.extend_from_slice(&(items.len() as u64).to_le_bytes()); // size
        header.extend_from_slice(&1u32.to_le_bytes()); // layers
        header.extend_from_slice(&(if nonscaling { 5u32 | 8 } else { 5 }).to_le_bytes());
        header.extend_from_slice(&2u32.to_le_bytes()); // growth
        header.extend_from_slice(&bytes.to_le_bytes());
        header.extend_from_slice(&bits.to_le_bytes());
        header.extend_from_slice(&(items.len() as u64).to_le_bytes());
        header.extend_from_slice(&error.to_le_bytes());
        header.extend_from_slice(&bpe.to_le_bytes());
        header.extend_from_slice(&hashes.to_le_bytes());
        header.extend_from_slice(&capacity.to_le_bytes());
        header.push(0); // n2
        let mut data = vec![0u8; bytes as usize];
        for item in items {
            let a = murmur64a(item.as_bytes(), 0xc6a4_a793_5bd1_e995);
            let b = murmur64a(item.as_bytes(), a);
            for i in 0..hashes as u64 {
                let x = a.wrapping_add(i.wrapping_mul(b)) % bits;
                data[(x / 8) as usize] |= 1 << (x % 8);
            }
        }
        let dump = scandump(c, key);
        assert_eq!(dump, vec![(1, header), (1 + bytes as i64, data)], "{key}");
    }
    // The documented example: ε = 0.01, n = 100 → 1152 bits, 8 hashes.
    let debug: Vec<String> = q(c, &["BF.DEBUG", "g1"]);
    assert!(
        debug[1].starts_with("bytes:144 bits:1152 hashes:8 "),
        "{}",
        debug[1]
    );
}

#[test]
fn debug_reload_keeps_every_answer() {
    let s = Server::start();
    let c = &mut s.conn();
    q::<String, _>(c, &["BF.RESERVE", "f", "0.01", "100", "EXPANSION", "3"]);
    q::<String, _>(c, &["BF.RESERVE", "n", "0.05", "500", "NONSCALING"]);
    for key in ["f", "n"] {
        let mut args = vec!["BF.MADD".to_string(), key.into()];
        args.extend(items("in-", 0..400));
        q::<Value, _>(c, &args);
    }
    let before: Vec<_> = ["f", "n"]
        .iter()
        .map(|k| (answers(c, k, 400), v(c, &["BF.INFO", k]), scandump(c, k)))
        .collect();
    assert_eq!(q::<String, _>(c, &["DEBUG", "RELOAD"]), "OK");
    let after: Vec<_> = ["f", "n"]
        .iter()
        .map(|k| (answers(c, k, 400), v(c, &["BF.INFO", k]), scandump(c, k)))
        .collect();
    assert_eq!(before, after);
}

#[test]
fn copy_rename_del_and_expiry_work_as_for_any_key() {
    let s = Server::start();
    let c = &mut s.conn();
    q::<Vec<i64>, _>(c, &["BF.MADD", "a", "x", "y"]);
    assert_eq!(q::<i64, _>(c, &["COPY", "a", "b"]), 1);
    q::<i64, _>(c, &["BF.ADD", "b", "z"]);
    assert_eq!(
        q::<Vec<i64>, _>(c, &["BF.MEXISTS", "a", "x", "z"]),
        [1, 0],
        "the copy is independent"
    );
    assert_eq!(q::<Vec<i64>, _>(c, &["BF.MEXISTS", "b", "x", "z"]), [1, 1]);
    q::<String, _>(c, &["RENAME", "b", "c"]);
    assert_eq!(q::<i64, _>(c, &["BF.EXISTS", "c", "z"]), 1);
    assert_eq!(q::<String, _>(c, &["TYPE", "c"]), "MBbloom--");
    assert_eq!(q::<i64, _>(c, &["DEL", "c"]), 1);
    assert_eq!(q::<i64, _>(c, &["BF.CARD", "c"]), 0);
    q::<i64, _>(c, &["PEXPIRE", "a", "50"]);
    std::thread::sleep(std::time::Duration::from_millis(120));
    assert_eq!(q::<i64, _>(c, &["EXISTS", "a"]), 0);
}

#[test]
fn multi_exec_runs_bloom_commands() {
    let s = Server::start();
    let c = &mut s.conn();
    let (added, there): (i64, i64) = redis::pipe()
        .atomic()
        .cmd("BF.ADD")
        .arg("m")
        .arg("x")
        .cmd("BF.EXISTS")
        .arg("m")
        .arg("x")
        .query(c)
        .unwrap();
    assert_eq!((added, there), (1, 1));
}

#[test]
fn the_per_key_memory_limit_refuses_oversized_filters() {
    let s = Server::start_with(&["MAX_KEY_MEMORY", "134217728"], &[]);
    let c = &mut s.conn();
    let e = err(c, &["BF.RESERVE", "huge", "0.0001", "1000000000"]);
    assert!(
        e.starts_with("ERR the filter would use ") && e.contains("134217728"),
        "{e}"
    );
    assert_eq!(q::<i64, _>(c, &["EXISTS", "huge"]), 0);
    assert_eq!(q::<String, _>(c, &["PING"]), "PONG");

    let small = Server::start_with(&["MAX_KEY_MEMORY", "4096"], &[]);
    let c = &mut small.conn();
    q::<String, _>(c, &["BF.RESERVE", "f", "0.01", "1000"]);
    let mut failure = None;
    for item in items("i", 0..20_000) {
        if let Err(e) = redis::cmd("BF.ADD").arg("f").arg(&item).query::<i64>(c) {
            failure = Some(crate::util::error_text(&e));
            break;
        }
    }
    let failure = failure.expect("growth past 4096 bytes is refused");
    assert!(failure.contains("memory limit"), "{failure}");
    let size = q::<Vec<i64>, _>(c, &["BF.INFO", "f", "SIZE"])[0];
    assert!(size <= 4096, "{size}");
    // A header asking for more than the limit is refused before anything is allocated.
    let big = Server::start();
    let bc = &mut big.conn();
    q::<String, _>(bc, &["BF.RESERVE", "f", "0.01", "10000"]);
    let header = scandump(bc, "f").remove(0).1;
    let e = redis::cmd("BF.LOADCHUNK")
        .arg("g")
        .arg(1)
        .arg(&header[..])
        .query::<String>(c)
        .unwrap_err();
    assert!(
        crate::util::error_text(&e).contains("per-key limit of 4096"),
        "{e}"
    );
}

#[test]
fn bad_module_arguments_refuse_to_load() {
    // The module refuses to load; the server exits at start.
    let module = crate::harness::module_path();
    let out = std::process::Command::new("redis-server")
        .args([
            "--port",
            &crate::harness::free_port().to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
        ])
        .arg("--loadmodule")
        .arg(module)
        .args(["ERROR_RATE", "7"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let log = String::from_utf8_lossy(&out.stdout);
    assert!(log.contains("ERROR_RATE"), "{log}");
}
