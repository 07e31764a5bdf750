//! RedisBloom dumps built and read offline by the library (`bloomkit::interop::redisbloom`,
//! what `bloomkit export --to redis` and `import --from redis` use), against real servers:
//! a dump taken with `SCANDUMP` is assembled by the library, written back as its
//! `LOADCHUNK` command stream (RESP, as `redis-cli --pipe` sends it) under another key, and
//! the copy answers and dumps exactly as the original — Bloom filters that grew layers and
//! cuckoo filters that grew sub-filters and had deletes, which no bloomkit kind holds but the
//! dump carries as it is. With `REDISBLOOM_REFERENCE=/path/to/redisbloom.so` the same runs
//! against RedisBloom itself. (`scripts/test-redis-interop` drives the CLI the same way.)

use bloomkit::interop::redisbloom::{Dump, MAX_CHUNK_BYTES};
use redis::{Connection, Value};

use crate::harness::Server;
use crate::util::{items, q};

/// This module's server, and RedisBloom's when `REDISBLOOM_REFERENCE` names it.
fn servers() -> Vec<(&'static str, Server)> {
    let mut servers = vec![("bloomkit module", Server::start())];
    if let Some(path) = std::env::var_os("REDISBLOOM_REFERENCE") {
        servers.push((
            "RedisBloom",
            Server::start_module(std::path::Path::new(&path), &[], &[]),
        ));
    }
    servers
}

/// Every `(iterator, bytes)` pair `SCANDUMP` answers for a key, the final `(0, "")` too.
fn scandump(c: &mut Connection, command: &str, key: &str) -> Vec<(u64, Vec<u8>)> {
    let mut chunks = Vec::new();
    let mut iter = 0u64;
    loop {
        let reply: Value = redis::cmd(command).arg(key).arg(iter).query(c).unwrap();
        let Value::Array(parts) = reply else {
            panic!("{command}: {reply:?}")
        };
        let next: u64 = redis::from_redis_value(&parts[0]).unwrap();
        let data = match &parts[1] {
            Value::BulkString(d) => d.clone(),
            Value::Nil => Vec::new(),
            other => panic!("{command}: data {other:?}"),
        };
        chunks.push((next, data));
        if next == 0 {
            return chunks;
        }
        iter = next;
    }
}

/// Sends a RESP command stream as `redis-cli --pipe` does and returns the replies, one line
/// each (`+OK`, or `-ERR …`), reading until `count` have come.
fn pipe(port: u16, stream: &[u8], count: usize) -> Vec<String> {
    use std::io::{BufRead, BufReader, Write};
    let mut conn = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    conn.write_all(stream).expect("send");
    conn.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    let mut reader = BufReader::new(conn);
    (0..count)
        .map(|_| {
            let mut line = String::new();
            reader.read_line(&mut line).expect("a reply");
            line.trim_end().to_owned()
        })
        .collect()
}

/// The dump of `key` through the library, loaded under `copy` by its command stream.
fn copy_through_the_library(s: &Server, command: &str, key: &str, copy: &str) -> Dump {
    let c = &mut s.conn();
    let chunks = scandump(c, command, key);
    assert_eq!(chunks.last(), Some(&(0, Vec::new())));
    let dump = Dump::from_chunks(chunks.clone()).expect("a real dump assembles");
    // The library's chunks are the server's, byte for byte.
    let ours: Vec<(u64, Vec<u8>)> = dump.chunks().map(|(i, d)| (i, d.to_vec())).collect();
    assert_eq!(ours[..], chunks[..chunks.len() - 1]);
    let mut stream = Vec::new();
    dump.write_commands(copy.as_bytes(), &mut stream).unwrap();
    let replies = pipe(s.port, &stream, ours.len());
    assert!(replies.iter().all(|r| r == "+OK"), "{replies:?}");
    // Loading again under the same key is refused (the header creates it).
    let again = pipe(s.port, &stream, 1);
    assert!(again[0].starts_with('-'), "{again:?}");
    assert_eq!(scandump(c, command, copy), chunks);
    dump
}

#[test]
fn grown_bloom_dumps_load_back_through_the_library_command_stream() {
    for (name, s) in servers() {
        let c = &mut s.conn();
        let _: () = q(c, &["BF.RESERVE", "grown", "0.01", "200", "EXPANSION", "3"]);
        let added = items("b", 0..3000);
        let _: Vec<i64> = q(
            c,
            &[
                &["BF.MADD", "grown"][..],
                &added.iter().map(String::as_str).collect::<Vec<_>>(),
            ]
            .concat(),
        );
        let dump = copy_through_the_library(&s, "BF.SCANDUMP", "grown", "copy");
        let Dump::Bloom(b) = &dump else {
            panic!("{name}: not a Bloom dump")
        };
        assert!(
            b.header.layers.len() >= 3,
            "{name}: {} layers",
            b.header.layers.len()
        );
        let queries = items("b", 0..6000);
        let ask = |c: &mut Connection, key: &str| -> Vec<i64> {
            q(
                c,
                &[
                    &["BF.MEXISTS", key][..],
                    &queries.iter().map(String::as_str).collect::<Vec<_>>(),
                ]
                .concat(),
            )
        };
        let (original, copy) = (ask(c, "grown"), ask(c, "copy"));
        assert_eq!(original, copy, "{name}");
        assert!(original[..3000].iter().all(|&a| a == 1), "{name}");
        let info = |c: &mut Connection, key: &str| -> Vec<Value> { q(c, &["BF.INFO", key]) };
        assert_eq!(info(c, "grown"), info(c, "copy"), "{name}");
    }
}

#[test]
fn cuckoo_dumps_load_back_through_the_library_command_stream() {
    for (name, s) in servers() {
        let c = &mut s.conn();
        let _: () = q(
            c,
            &[
                "CF.RESERVE",
                "cf",
                "1000",
                "BUCKETSIZE",
                "4",
                "EXPANSION",
                "2",
            ],
        );
        for item in items("c", 0..3000) {
            let _: i64 = q(c, &["CF.ADD", "cf", &item]);
        }
        for item in items("c", 0..50) {
            let _: i64 = q(c, &["CF.DEL", "cf", &item]);
        }
        let dump = copy_through_the_library(&s, "CF.SCANDUMP", "cf", "copy");
        let Dump::Cuckoo(cf) = &dump else {
            panic!("{name}: not a cuckoo dump")
        };
        assert!(
            cf.header.filters >= 2,
            "{name}: {} sub-filters",
            cf.header.filters
        );
        assert_eq!(cf.header.deletes, 50, "{name}");
        assert!(cf.filters.iter().all(|f| f.len() as u64 <= MAX_CHUNK_BYTES));
        let queries = items("c", 0..6000);
        let ask = |c: &mut Connection, key: &str| -> Vec<i64> {
            queries
                .iter()
                .map(|i| q(c, &["CF.COUNT", key, i.as_str()]))
                .collect()
        };
        let (original, copy) = (ask(c, "cf"), ask(c, "copy"));
        assert_eq!(original, copy, "{name}");
        assert!(original[50..3000].iter().all(|&n| n >= 1), "{name}");
        let info = |c: &mut Connection, key: &str| -> Vec<Value> { q(c, &["CF.INFO", key]) };
        assert_eq!(info(c, "cf"), info(c, "copy"), "{name}");
    }
}
