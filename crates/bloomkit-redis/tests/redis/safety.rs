//! Never crash, never lose a key: corrupted DUMP payloads get an error with the server up;
//! every value the module holds — whatever command wrote it, forged LOADCHUNK headers
//! included — survives DUMP/RESTORE, DEBUG RELOAD, an AOF rewrite and a restart, bit for
//! bit.

use redis::{Connection, Value};

use crate::command;
use crate::harness::Server;
use crate::payload::{seal, unseal, Pipe};
use crate::util::{err, items, q};

/// DUMP of a key, as bytes.
fn dump(c: &mut Connection, key: &str) -> Vec<u8> {
    q::<Vec<u8>, _>(c, &["DUMP", key])
}

fn restore(c: &mut Connection, key: &str, payload: &[u8]) -> redis::RedisResult<String> {
    redis::cmd("RESTORE").arg(key).arg(0).arg(payload).query(c)
}

#[test]
fn a_corrupted_bloom_payload_is_refused_and_the_server_stays_up() {
    let s = Server::start();
    let c = &mut s.conn();
    q::<String, _>(c, &["BF.RESERVE", "b", "0.01", "10"]);
    let (mut body, version) = unseal(&dump(c, "b"));
    body[12] ^= 0xff;
    let result = restore(c, "b2", &seal(&body, version));
    assert!(result.is_err(), "got {result:?}");
    assert_eq!(q::<String, _>(c, &["PING"]), "PONG", "{}", s.log());
    // A truncated value (the module's read runs past its end) is refused too.
    let (body, version) = unseal(&dump(c, "b"));
    let result = restore(c, "b3", &seal(&body[..body.len() / 2], version));
    assert!(result.is_err(), "got {result:?}");
    assert_eq!(q::<String, _>(c, &["PING"]), "PONG", "{}", s.log());
}

/// Keys of every layout, small enough that every byte can be mutated.
fn small_layouts(c: &mut Connection) -> Vec<&'static str> {
    let plan: &[(&str, &[&str], u32)] = &[
        ("bf:one", &["BF.RESERVE", "bf:one", "0.1", "8"], 3),
        ("bf:chain", &["BF.RESERVE", "bf:chain", "0.1", "2"], 20),
        (
            "bf:exp3",
            &["BF.RESERVE", "bf:exp3", "0.05", "2", "EXPANSION", "3"],
            12,
        ),
        (
            "bf:fixed",
            &["BF.RESERVE", "bf:fixed", "0.1", "8", "NONSCALING"],
            5,
        ),
        (
            "cf:b1",
            &[
                "CF.RESERVE",
                "cf:b1",
                "2",
                "BUCKETSIZE",
                "1",
                "MAXITERATIONS",
                "3",
            ],
            12,
        ),
        ("cf:b2", &["CF.RESERVE", "cf:b2", "8"], 30),
        (
            "cf:b4e2",
            &[
                "CF.RESERVE",
                "cf:b4e2",
                "8",
                "BUCKETSIZE",
                "4",
                "EXPANSION",
                "2",
            ],
            40,
        ),
        (
            "cf:e0",
            &[
                "CF.RESERVE",
                "cf:e0",
                "8",
                "EXPANSION",
                "0",
                "MAXITERATIONS",
                "5",
            ],
            12,
        ),
        (
            "cf:b3e4",
            &[
                "CF.RESERVE",
                "cf:b3e4",
                "6",
                "BUCKETSIZE",
                "3",
                "EXPANSION",
                "4",
            ],
            30,
        ),
    ];
    let mut keys = Vec::new();
    for (key, reserve, n) in plan {
        q::<String, _>(c, reserve);
        let add = if key.starts_with("bf") {
            "BF.ADD"
        } else {
            "CF.ADD"
        };
        for item in items("x", 0..*n) {
            let _ = redis::cmd(add).arg(*key).arg(item).query::<Value>(c);
        }
        keys.push(*key);
    }
    // Deletes (and the compaction they trigger) leave their own counts.
    for item in items("x", 0..10) {
        q::<i64, _>(c, &["CF.DEL", "cf:b4e2", &item]);
    }
    keys
}

/// The commands run on a value that RESTORE accepted: every read, every write, COPY,
/// and DUMP last.
fn exercise(key: &[u8]) -> Vec<Vec<Vec<u8>>> {
    let copy = [key, b":copy"].concat();
    vec![
        command!("BF.EXISTS", key, "x1"),
        command!("BF.MADD", key, "new1", "new2", "new3"),
        command!("BF.INFO", key),
        command!("BF.DEBUG", key),
        command!("BF.CARD", key),
        command!("BF.SCANDUMP", key, "0"),
        command!("BF.SCANDUMP", key, "1"),
        command!("CF.EXISTS", key, "x1"),
        command!("CF.ADD", key, "new1"),
        command!("CF.INSERT", key, "ITEMS", "new2", "new3", "new4", "new5"),
        command!("CF.ADDNX", key, "new6"),
        command!("CF.COUNT", key, "x1"),
        command!("CF.DEL", key, "x1"),
        command!("CF.DEL", key, "new1"),
        command!("CF.COMPACT", key),
        command!("CF.INFO", key),
        command!("CF.DEBUG", key),
        command!("CF.SCANDUMP", key, "0"),
        command!("CF.SCANDUMP", key, "1"),
        command!("MEMORY", "USAGE", key),
        command!("COPY", key, copy),
        command!("DUMP", key),
    ]
}

/// Every single-byte change (three ways) and every truncation of each layout's DUMP,
/// with the CRC recomputed so that Redis hands the bytes to the module. The server must
/// answer each RESTORE; every value it accepts must survive every command, DUMP and
/// RESTORE again to the same bytes; at the end all of them survive DEBUG RELOAD, an AOF
/// rewrite (LOADCHUNK) and a restart.
#[test]
fn every_mutation_and_truncation_of_every_layout_is_refused_or_reloads() {
    let mut s = Server::start_with(
        &["MAX_KEY_MEMORY", "1048576"],
        &["--appendonly", "yes", "--aof-use-rdb-preamble", "no"],
    );
    let c = &mut s.conn();
    let keys = small_layouts(c);
    // The older encodings, hand-built, with power-of-two and 32-bit-hash layers.
    let mut payloads: Vec<(String, Vec<u8>)> =
        keys.iter().map(|k| (k.to_string(), dump(c, k))).collect();
    for (name, payload, ..) in crate::older::older_bloom_cases() {
        payloads.push((format!("old:{name}"), payload));
    }
    let mut pipe = Pipe::connect(s.port);
    let mut accepted = 0usize;
    let mut tried = 0usize;
    for (key, payload) in &payloads {
        let (t, a) =
            crate::payload::restore_mutants(&mut pipe, &|| s.log(), key, payload, exercise);
        tried += t;
        accepted += a;
        assert_eq!(q::<String, _>(c, &["PING"]), "PONG");
    }
    eprintln!("{accepted} of {tried} mutated payloads loaded");
    assert!(accepted > 0 && accepted < tried, "{accepted} of {tried}");
    let before: i64 = q(c, &["DBSIZE"]);
    assert_eq!(q::<String, _>(c, &["DEBUG", "RELOAD"]), "OK", "{}", s.log());
    assert_eq!(q::<i64, _>(c, &["DBSIZE"]), before);
    q::<String, _>(c, &["BGREWRITEAOF"]);
    crate::persistence::wait_for_rewrite(c);
    s.restart();
    let c = &mut s.conn();
    assert_eq!(q::<i64, _>(c, &["DBSIZE"]), before, "{}", s.log());
}

/// A cuckoo header with any counts, bucket size 2, 20 iterations and expansion 1.
fn forged_cuckoo_header(items: u64, buckets: u64, deletes: u64, filters: u64) -> Vec<u8> {
    cuckoo_header([items, buckets, deletes, filters], [2, 20, 1])
}

/// A cuckoo header: items, buckets, deletes, sub-filters; bucket size, max iterations,
/// expansion.
fn cuckoo_header(counts: [u64; 4], params: [u16; 3]) -> Vec<u8> {
    let mut h = Vec::new();
    for v in counts {
        h.extend_from_slice(&v.to_le_bytes());
    }
    for v in params {
        h.extend_from_slice(&v.to_le_bytes());
    }
    h
}

#[test]
fn a_forged_cuckoo_count_then_an_add_survives_debug_reload() {
    let s = Server::start();
    let c = &mut s.conn();
    q::<String, _>(
        c,
        &[
            &b"CF.LOADCHUNK"[..],
            b"p",
            b"1",
            &forged_cuckoo_header(4, 2, 0, 1),
        ],
    );
    assert_eq!(q::<i64, _>(c, &["CF.ADD", "p", "a"]), 1);
    let before = dump(c, "p");
    assert_eq!(q::<String, _>(c, &["DEBUG", "RELOAD"]), "OK", "{}", s.log());
    assert_eq!(dump(c, "p"), before);
}

/// SCANDUMP from iterator 0 to the end: the header and every chunk.
fn scandump(c: &mut Connection, command: &str, key: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let mut iter = 0i64;
    loop {
        let (next, data): (i64, Value) = redis::cmd(command).arg(key).arg(iter).query(c).unwrap();
        out.push(data);
        if next == 0 {
            return out;
        }
        iter = next;
    }
}

/// A header for a Bloom chain of 64-bit layers of 64 bits each, with any counts: the
/// chain's count is the sum of the layers' `(count, capacity)`.
fn forged_bloom_header(layers: &[(u64, u64)]) -> Vec<u8> {
    let size = layers.iter().fold(0u64, |a, l| a.wrapping_add(l.0));
    let mut h = Vec::new();
    h.extend_from_slice(&size.to_le_bytes());
    h.extend_from_slice(&(layers.len() as u32).to_le_bytes());
    h.extend_from_slice(&5u32.to_le_bytes()); // NOROUND | FORCE64
    h.extend_from_slice(&2u32.to_le_bytes());
    let bpe = -(0.01f64.ln()) / 0.480453013918201;
    for &(count, entries) in layers {
        h.extend_from_slice(&8u64.to_le_bytes()); // bytes
        h.extend_from_slice(&64u64.to_le_bytes()); // bits
        h.extend_from_slice(&count.to_le_bytes());
        h.extend_from_slice(&0.01f64.to_le_bytes());
        h.extend_from_slice(&bpe.to_le_bytes());
        h.extend_from_slice(&((crate::older::LN2 * bpe).ceil() as u32).to_le_bytes());
        h.extend_from_slice(&entries.to_le_bytes());
        h.push(0);
    }
    h
}

/// Keys written through every command path, forged headers included, and each path
/// pushed to its counters' ends.
fn write_every_path(c: &mut Connection) -> Vec<String> {
    let mut keys = Vec::new();
    let mut k = |name: &str| {
        keys.push(name.to_string());
        name.to_string()
    };
    // Bloom: RESERVE (scaling, expansion, nonscaling), ADD/MADD/INSERT with creation,
    // growth, LOADCHUNK of a dump and of forged headers.
    q::<String, _>(
        c,
        &["BF.RESERVE", &k("bf:r"), "0.01", "10", "EXPANSION", "3"],
    );
    q::<String, _>(c, &["BF.RESERVE", &k("bf:n"), "0.001", "20", "NONSCALING"]);
    q::<i64, _>(c, &["BF.ADD", &k("bf:add"), "one"]);
    let mut madd = vec!["BF.MADD".to_string(), k("bf:madd")];
    madd.extend(items("m", 0..300));
    q::<Value, _>(c, &madd);
    let mut insert = vec![
        "BF.INSERT".to_string(),
        k("bf:ins"),
        "CAPACITY".into(),
        "5".into(),
        "ERROR".into(),
        "0.2".into(),
        "EXPANSION".into(),
        "4".into(),
        "ITEMS".into(),
    ];
    insert.extend(items("i", 0..100));
    q::<Value, _>(c, &insert);
    for key in ["bf:r", "bf:n"] {
        let mut m = vec!["BF.MADD".to_string(), key.to_string()];
        m.extend(items("g", 0..60));
        let _ = redis::cmd("BF.MADD").arg(&m[1..]).query::<Value>(c);
    }
    let dumped = scandump(c, "BF.SCANDUMP", "bf:madd");
    let copy = k("bf:loaded");
    let mut iter = 1i64;
    for (i, chunk) in dumped.iter().enumerate() {
        let Value::BulkString(bytes) = chunk else {
            continue;
        };
        if bytes.is_empty() {
            break;
        }
        if i > 0 {
            iter += bytes.len() as i64;
        }
        q::<String, _>(
            c,
            &[
                &b"BF.LOADCHUNK"[..],
                copy.as_bytes(),
                iter.to_string().as_bytes(),
                bytes,
            ],
        );
    }
    // Counts at the top of their range: the add saturates instead of wrapping.
    let max = u64::MAX;
    for (name, layers) in [
        ("bf:full-count", vec![(max, 1), (0, 100)]),
        ("bf:near-full-count", vec![(max - 2, 1), (0, 100)]),
        ("bf:huge-capacity", vec![(0, max), (0, max)]),
    ] {
        let header = forged_bloom_header(&layers);
        q::<String, _>(
            c,
            &[&b"BF.LOADCHUNK"[..], k(name).as_bytes(), b"1", &header],
        );
        for item in ["a", "b", "c"] {
            q::<i64, _>(c, &["BF.ADD", name, item]);
        }
        q::<Value, _>(c, &["BF.INFO", name]);
        q::<Value, _>(c, &["BF.DEBUG", name]);
    }
    // u64::MAX items, as RedisBloom's replies show an unsigned count (as a signed one).
    assert_eq!(q::<i64, _>(c, &["BF.CARD", "bf:full-count"]), -1);
    assert_eq!(q::<i64, _>(c, &["BF.CARD", "bf:near-full-count"]), -1);
    assert_eq!(q::<i64, _>(c, &["BF.CARD", "bf:huge-capacity"]), 3);
    assert_eq!(
        q::<Vec<i64>, _>(c, &["BF.INFO", "bf:huge-capacity", "CAPACITY"]),
        [-1]
    );
    q::<i64, _>(c, &["COPY", "bf:madd", &k("bf:copied")]);

    // Cuckoo: RESERVE, ADD/ADDNX/INSERT/INSERTNX with creation, growth, DEL (with the
    // compaction it triggers), COMPACT, LOADCHUNK of forged headers.
    q::<String, _>(
        c,
        &[
            "CF.RESERVE",
            &k("cf:r"),
            "16",
            "BUCKETSIZE",
            "4",
            "EXPANSION",
            "2",
        ],
    );
    q::<i64, _>(c, &["CF.ADD", &k("cf:add"), "one"]);
    q::<i64, _>(c, &["CF.ADDNX", &k("cf:addnx"), "one"]);
    for (cmd, key) in [("CF.INSERT", k("cf:ins")), ("CF.INSERTNX", k("cf:insnx"))] {
        let mut args = vec![
            cmd.to_string(),
            key,
            "CAPACITY".into(),
            "8".into(),
            "ITEMS".into(),
        ];
        args.extend(items("i", 0..80));
        q::<Value, _>(c, &args);
    }
    let mut grow = vec!["CF.INSERT".to_string(), "cf:r".into(), "ITEMS".into()];
    grow.extend(items("g", 0..200));
    q::<Value, _>(c, &grow);
    for item in items("g", 0..150) {
        q::<i64, _>(c, &["CF.DEL", "cf:r", &item]);
    }
    q::<Value, _>(c, &grow);
    q::<String, _>(c, &["CF.COMPACT", "cf:ins"]);
    for (name, header, adds, dels) in [
        // The issue's case: 4 slots, 4 items claimed, then one more.
        ("cf:forged", forged_cuckoo_header(4, 2, 0, 1), 1, 0),
        (
            "cf:max-items",
            forged_cuckoo_header(u64::MAX, 4, u64::MAX, 1),
            3,
            0,
        ),
        ("cf:no-items", forged_cuckoo_header(0, 4, 0, 2), 5, 0),
        ("cf:zero-then-del", forged_cuckoo_header(0, 4, 0, 1), 0, 0),
        // An expansion that is not a power of two (RedisBloom accepts it in a header):
        // sub-filters of 2, 6, 18… buckets, and growth by the same rule.
        (
            "cf:expansion3",
            cuckoo_header([0, 2, 0, 2], [1, 2, 3]),
            40,
            20,
        ),
    ] {
        q::<String, _>(
            c,
            &[&b"CF.LOADCHUNK"[..], k(name).as_bytes(), b"1", &header],
        );
        for item in items("a", 0..adds) {
            q::<Value, _>(c, &["CF.ADD", name, &item]);
        }
        for item in items("a", 0..dels) {
            q::<Value, _>(c, &["CF.DEL", name, &item]);
        }
    }
    // A chunk with fingerprints the count does not know of, then deletes: the count stays
    // at 0 instead of wrapping.
    q::<String, _>(
        c,
        &[
            "CF.LOADCHUNK",
            "cf:zero-then-del",
            "9",
            "\x01\x02\x03\x04\x05\x06\x07\x08",
        ],
    );
    for fp in 0..300u32 {
        let _ = q::<i64, _>(c, &["CF.DEL", "cf:zero-then-del", &format!("d{fp}")]);
    }
    q::<i64, _>(c, &["COPY", "cf:r", &k("cf:copied")]);
    keys
}

/// What a key holds: DUMP plus the SCANDUMP sequence of its type.
fn state(c: &mut Connection, key: &str) -> (Vec<u8>, Vec<Value>) {
    let command = if key.starts_with("bf") {
        "BF.SCANDUMP"
    } else {
        "CF.SCANDUMP"
    };
    (dump(c, key), scandump(c, command, key))
}

#[test]
fn every_write_path_survives_debug_reload_and_restart_bit_for_bit() {
    let mut s = Server::start();
    let (keys, before) = {
        let c = &mut s.conn();
        let keys = write_every_path(c);
        let before: Vec<_> = keys.iter().map(|k| state(c, k)).collect();
        // Each value also RESTOREs from its own DUMP.
        for (k, (d, _)) in keys.iter().zip(&before) {
            restore(c, &format!("{k}:restored"), d).unwrap();
            assert_eq!(&dump(c, &format!("{k}:restored")), d);
        }
        assert_eq!(q::<String, _>(c, &["DEBUG", "RELOAD"]), "OK", "{}", s.log());
        let after: Vec<_> = keys.iter().map(|k| state(c, k)).collect();
        assert_eq!(after, before, "DEBUG RELOAD");
        assert_eq!(q::<String, _>(c, &["SAVE"]), "OK");
        (keys, before)
    };
    s.restart();
    let c = &mut s.conn();
    let after: Vec<_> = keys.iter().map(|k| state(c, k)).collect();
    assert_eq!(after, before, "restart on the RDB; log:\n{}", s.log());

    // The same values through an AOF rewrite (a LOADCHUNK sequence each) and a restart.
    let mut aof = Server::start_with(
        &[],
        &["--appendonly", "yes", "--aof-use-rdb-preamble", "no"],
    );
    {
        let c = &mut aof.conn();
        for (k, (d, _)) in keys.iter().zip(&before) {
            restore(c, k, d).unwrap();
        }
        q::<String, _>(c, &["BGREWRITEAOF"]);
        crate::persistence::wait_for_rewrite(c);
    }
    aof.restart();
    let c = &mut aof.conn();
    let after: Vec<_> = keys.iter().map(|k| state(c, k)).collect();
    assert_eq!(
        after,
        before,
        "restart on the rewritten AOF; log:\n{}",
        aof.log()
    );
}

#[test]
fn loadchunk_and_scandump_errors_follow_redisbloom() {
    let s = Server::start();
    let c = &mut s.conn();
    q::<String, _>(c, &["BF.RESERVE", "b", "0.01", "100"]);
    assert_eq!(
        q::<(i64, Vec<u8>), _>(c, &["BF.SCANDUMP", "b", "-1"]),
        (0, Vec::new())
    );
    assert_eq!(err(c, &["BF.SCANDUMP", "missing", "x"]), "ERR not found");
    assert_eq!(
        err(c, &["BF.SCANDUMP", "b", "x"]),
        "Second argument must be numeric"
    );
    assert_eq!(
        err(c, &["BF.LOADCHUNK", "b", "0", "xx"]),
        "ERR received bad data"
    );
    assert_eq!(
        err(c, &["BF.LOADCHUNK", "b", "-5", "xx"]),
        "ERR received bad data"
    );
    assert_eq!(
        err(c, &["BF.LOADCHUNK", "b", "1", "xx"]),
        "ERR received bad data"
    );
    assert_eq!(
        err(c, &["BF.LOADCHUNK", "b", "1", "x"]),
        "ERR invalid offset - no link found"
    );
    assert_eq!(
        err(c, &["BF.LOADCHUNK", "missing", "0", "xx"]),
        "ERR not found"
    );
    assert_eq!(
        err(c, &["BF.LOADCHUNK", "new", "1", "xx"]),
        "ERR received bad data"
    );

    let header = forged_cuckoo_header(0, 0, 0, 1);
    assert_eq!(
        err(c, &[&b"CF.LOADCHUNK"[..], b"c", b"1", &header]),
        "Couldn't create filter!"
    );
    assert_eq!(
        err(c, &[&b"CF.LOADCHUNK"[..], b"c", b"1", &header[..37]]),
        "Invalid header"
    );
    assert_eq!(
        err(c, &["CF.LOADCHUNK", "c", "0", "xx"]),
        "Invalid position"
    );
    q::<String, _>(
        c,
        &[
            &b"CF.LOADCHUNK"[..],
            b"c",
            b"1",
            &forged_cuckoo_header(1, 4, 0, 1),
        ],
    );
    assert_eq!(
        err(c, &[&b"CF.LOADCHUNK"[..], b"c", b"1", &header]),
        "ERR item exists"
    );
    assert_eq!(
        err(c, &["CF.LOADCHUNK", "c", "-3", "x"]),
        "Couldn't load chunk!"
    );
    // A chunk past the end is refused (RedisBloom would write it over the last sub-filter).
    assert_eq!(
        err(c, &["CF.LOADCHUNK", "c", "100", "xx"]),
        "Couldn't load chunk!"
    );
    assert_eq!(q::<String, _>(c, &["CF.LOADCHUNK", "c", "3", "xx"]), "OK");
}

/// The default per-key limit refuses only what cannot fit: with no `maxmemory`, what
/// RedisBloom's own tests build (a 1.13 GB BF.RESERVE, a 4 GiB cuckoo header) is
/// accepted on a machine of 24 GiB; with `maxmemory` set (read again after CONFIG SET)
/// a filter larger than it is refused, as with the module argument.
#[test]
fn the_default_memory_limit_refuses_only_what_cannot_fit() {
    let s = Server::start();
    let c = &mut s.conn();
    // ≈ 1.2 GB: 5·10⁸ items at 0.01 % error.
    q::<String, _>(c, &["BF.RESERVE", "big", "0.0001", "500000000"]);
    let size: Vec<i64> = q(c, &["BF.INFO", "big", "SIZE"]);
    assert!(size[0] > 1_130_000_000, "{size:?}");
    q::<i64, _>(c, &["DEL", "big"]);
    // 2³¹ buckets of 2 slots: 4 GiB, zeroed lazily.
    let header = forged_cuckoo_header(1, 1 << 31, 0, 1);
    q::<String, _>(c, &[&b"CF.LOADCHUNK"[..], b"huge", b"1", &header]);
    q::<i64, _>(c, &["DEL", "huge"]);

    // A full 128 MiB cuckoo filter (2²⁶ buckets of 2 slots, every slot taken, one
    // iteration) grows by a second 128 MiB sub-filter.
    let header = cuckoo_header([1 << 27, 1 << 26, 0, 1], [2, 1, 1]);
    q::<String, _>(c, &[&b"CF.LOADCHUNK"[..], b"grows", b"1", &header]);
    let chunk = vec![1u8; 16 << 20];
    for i in 0..8i64 {
        let iter = 1 + (i + 1) * chunk.len() as i64;
        q::<String, _>(
            c,
            &[
                &b"CF.LOADCHUNK"[..],
                b"grows",
                iter.to_string().as_bytes(),
                &chunk,
            ],
        );
    }
    assert_eq!(q::<i64, _>(c, &["CF.ADD", "grows", "one more"]), 1);
    let info: Vec<Value> = q(c, &["CF.INFO", "grows"]);
    assert_eq!(info[5], Value::Int(2), "two sub-filters: {info:?}");
    assert!(
        matches!(info[1], Value::Int(n) if n > 256 << 20),
        "{info:?}"
    );
    q::<i64, _>(c, &["DEL", "grows"]);
    let header = forged_cuckoo_header(1, 1 << 31, 0, 1);

    q::<String, _>(c, &["CONFIG", "SET", "maxmemory", "100mb"]);
    let e = err(c, &["BF.RESERVE", "over", "0.0001", "50000000"]);
    assert!(e.contains("per-key limit of 104857600 bytes"), "{e}");
    let e = err(c, &[&b"CF.LOADCHUNK"[..], b"over", b"1", &header]);
    assert!(e.contains("per-key limit"), "{e}");
    q::<String, _>(c, &["BF.RESERVE", "under", "0.01", "1000000"]);
    q::<String, _>(c, &["CONFIG", "SET", "maxmemory", "0"]);
    q::<String, _>(c, &["BF.RESERVE", "over", "0.0001", "50000000"]);

    let fixed = Server::start_with(&["MAX_KEY_MEMORY", "4096"], &[]);
    let c = &mut fixed.conn();
    let e = err(c, &["BF.RESERVE", "k", "0.01", "10000"]);
    assert!(e.contains("per-key limit of 4096 bytes"), "{e}");
    // An RDB value over the limit is refused before its bytes are read.
    let big = {
        let s2 = Server::start();
        let c2 = &mut s2.conn();
        q::<String, _>(c2, &["BF.RESERVE", "k", "0.01", "10000"]);
        dump(c2, "k")
    };
    assert!(restore(c, "k", &big).is_err());
    assert_eq!(q::<String, _>(c, &["PING"]), "PONG");
}
