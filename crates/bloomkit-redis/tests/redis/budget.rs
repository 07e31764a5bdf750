//! The server-wide memory budget (see the module's `config` docs): a stream of large
//! reserves, each under the per-key limit, stops with errors once the server could not
//! hold the next one; the server stays up with every key; freeing keys makes room again.
//!
//! Each server here holds at most about 256 MB (the cuckoo filters' pages are never
//! written, the Bloom layers' are zero-filled), and counts every byte asked for in Redis's
//! `used_memory`, which is what the budget is about.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;

use redis::{Connection, Value};

use crate::harness::Server;
use crate::util::{err, q};

/// `BF.RESERVE k 0.01 20000000`: 27 569 480 bytes.
const BF_BYTES: u64 = 27_569_480;
/// `CF.RESERVE k 16777216 BUCKETSIZE 255`: 2¹⁷ buckets of 255 slots, 33 423 416 bytes by
/// `CF.INFO Size` and 80 of bookkeeping beside (the struct's 48 beyond RedisBloom's 40, the
/// sub-filter's entry's 24 beyond its 16, one word of bitset), which the limits count (the
/// issue's `BUCKETSIZE 255` reserve, scaled down).
const CF_BYTES: u64 = 33_423_416 + 80;
/// The budget of these tests: 256 MiB, as `maxmemory` or as `MAX_MEMORY`.
const BUDGET: u64 = 256 << 20;

/// One reply of a pipeline: a status or integer as text, or an error's text.
type Reply = Result<String, String>;

/// Sends `commands` in one write, so that Redis runs them back to back, and reads one
/// reply per command (statuses, errors, integers and bulk strings).
fn pipeline(port: u16, commands: &[Vec<Vec<u8>>]) -> Vec<Reply> {
    let (mut reader, count) = send(port, commands, false);
    (0..count).map(|_| read_reply(&mut reader)).collect()
}

/// Runs `commands` in one MULTI/EXEC, so that Redis's cron, which reads `used_memory`
/// again, cannot run between them however long a large argument takes to arrive; the
/// replies of the commands.
fn transaction(port: u16, commands: &[Vec<Vec<u8>>]) -> Vec<Reply> {
    let (mut reader, _) = send(port, commands, true);
    assert_eq!(read_reply(&mut reader), Ok("OK".into()), "MULTI");
    for _ in commands {
        assert_eq!(read_reply(&mut reader), Ok("QUEUED".into()));
    }
    let mut line = String::new();
    reader.read_line(&mut line).expect("EXEC reply");
    assert_eq!(line.trim_end(), format!("*{}", commands.len()), "EXEC");
    commands.iter().map(|_| read_reply(&mut reader)).collect()
}

fn send(port: u16, commands: &[Vec<Vec<u8>>], multi: bool) -> (BufReader<TcpStream>, usize) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    let mut all: Vec<Vec<Vec<u8>>> = Vec::new();
    if multi {
        all.push(args(&["MULTI"]));
    }
    all.extend(commands.iter().cloned());
    if multi {
        all.push(args(&["EXEC"]));
    }
    let mut request = Vec::new();
    for args in &all {
        request.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
        for a in args {
            request.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            request.extend_from_slice(a);
            request.extend_from_slice(b"\r\n");
        }
    }
    stream.write_all(&request).expect("send");
    (BufReader::new(stream), all.len())
}

/// One status, error, integer or bulk-string reply.
fn read_reply(reader: &mut BufReader<TcpStream>) -> Reply {
    let mut line = String::new();
    reader.read_line(&mut line).expect("reply");
    let line = line.trim_end().to_string();
    match line.as_bytes().first() {
        Some(b'-') => Err(line[1..].to_string()),
        Some(b'$') => {
            let len: i64 = line[1..].parse().expect("bulk length");
            if len < 0 {
                return Ok(String::new());
            }
            let mut data = vec![0; len as usize + 2];
            reader.read_exact(&mut data).expect("bulk");
            Ok(String::from_utf8_lossy(&data[..len as usize]).into_owned())
        }
        Some(b'+' | b':') => Ok(line[1..].to_string()),
        _ => panic!("unexpected reply {line:?}"),
    }
}

fn args(words: &[&str]) -> Vec<Vec<u8>> {
    words.iter().map(|w| w.as_bytes().to_vec()).collect()
}

fn bf_reserve(key: &str) -> Vec<Vec<u8>> {
    args(&["BF.RESERVE", key, "0.01", "20000000"])
}

/// `BF.RESERVE probe 0.01 30000000`: 41 354 176 bytes.
fn probe() -> Vec<Vec<u8>> {
    args(&["BF.RESERVE", "probe", "0.01", "30000000"])
}

fn cf_reserve(key: &str) -> Vec<Vec<u8>> {
    args(&["CF.RESERVE", key, "16777216", "BUCKETSIZE", "255"])
}

/// Sixteen reserves in a row, Bloom and cuckoo in turn (`b0`, `c1`, `b2`, …): the keys and
/// their replies.
fn reserve_stream(port: u16) -> Vec<(String, Reply)> {
    let keys: Vec<String> = (0..16)
        .map(|i| format!("{}{i}", if i % 2 == 0 { 'b' } else { 'c' }))
        .collect();
    let commands: Vec<_> = keys
        .iter()
        .map(|k| {
            if k.starts_with('b') {
                bf_reserve(k)
            } else {
                cf_reserve(k)
            }
        })
        .collect();
    keys.into_iter().zip(pipeline(port, &commands)).collect()
}

fn bytes_of(key: &str) -> u64 {
    if key.starts_with('b') {
        BF_BYTES
    } else {
        CF_BYTES
    }
}

fn used_memory(c: &mut Connection) -> u64 {
    let info: String = q(c, &["INFO", "memory"]);
    info.lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("used_memory in INFO memory")
}

/// Checks a stream's outcome against the budget: the first eight reserves fit (with any
/// baseline of a few MB the ninth would pass 256 MiB by about 22 MB), every later one is
/// refused with the server-wide error naming `bound`, the server's memory stays within
/// the budget, and every admitted filter answers. Returns the admitted keys.
fn check_stream(c: &mut Connection, stream: &[(String, Reply)], bound: &str) -> Vec<String> {
    let admitted: Vec<String> = stream
        .iter()
        .filter(|(_, r)| r.is_ok())
        .map(|(k, _)| k.clone())
        .collect();
    assert_eq!(
        admitted,
        ["b0", "c1", "b2", "c3", "b4", "c5", "b6", "c7"],
        "{stream:?}"
    );
    for (key, reply) in &stream[8..] {
        let e = reply.as_ref().expect_err(key);
        assert!(
            e.starts_with(&format!("ERR the filter would use {} bytes", bytes_of(key)))
                && e.contains("bytes it may hold")
                && e.contains(bound),
            "{key}: {e}"
        );
    }
    assert!(admitted.iter().map(|k| bytes_of(k)).sum::<u64>() <= BUDGET);
    let used = used_memory(c);
    assert!(used <= BUDGET, "used_memory {used} past the budget");
    assert_eq!(q::<String, _>(c, &["PING"]), "PONG");
    for key in &admitted {
        let family = if key.starts_with('b') { "BF" } else { "CF" };
        assert_eq!(q::<i64, _>(c, &[&format!("{family}.ADD"), key, "x"]), 1);
        assert_eq!(q::<i64, _>(c, &[&format!("{family}.EXISTS"), key, "x"]), 1);
    }
    for (key, _) in &stream[8..] {
        assert_eq!(q::<i64, _>(c, &["EXISTS", key]), 0, "{key}");
    }
    admitted
}

fn dump(c: &mut Connection, key: &str) -> Vec<u8> {
    redis::cmd("DUMP").arg(key).query(c).expect("DUMP")
}

/// With `maxmemory` and `noeviction`, a stream of reserves ends in clear errors at the
/// budget, and so do RESTORE, COPY and a LOADCHUNK header; deleting keys makes room at
/// once (in the same transaction, before the module reads `used_memory` again).
#[test]
fn reserves_stop_at_maxmemory_and_freed_keys_make_room_again() {
    let s = Server::start_with(&[], &["--maxmemory", "256mb"]);
    let c = &mut s.conn();
    let stream = reserve_stream(s.port);
    let admitted = check_stream(c, &stream, "maxmemory");

    // Every other way of making a filter is refused too, and the server stays up.
    let payload = dump(c, "b0");
    let header: Vec<Value> = q(c, &["BF.SCANDUMP", "b0", "0"]);
    let Value::BulkString(header) = header[1].clone() else {
        panic!("{header:?}")
    };
    let e = redis::cmd("RESTORE")
        .arg("restored")
        .arg(0)
        .arg(&payload[..])
        .query::<String>(c)
        .unwrap_err();
    assert!(
        crate::util::error_text(&e).contains("Bad data format"),
        "{e}"
    );
    assert_eq!(
        err(c, &["COPY", "b0", "copied"]),
        "ERR module key failed to copy"
    );
    let e = redis::cmd("BF.LOADCHUNK")
        .arg("loaded")
        .arg(1)
        .arg(&header[..])
        .query::<String>(c)
        .unwrap_err();
    assert!(
        crate::util::error_text(&e).contains("bytes it may hold"),
        "{e}"
    );
    assert_eq!(
        q::<i64, _>(c, &["EXISTS", "restored", "copied", "loaded"]),
        0
    );

    // Deleting three filters makes room for three more, in the same transaction.
    let replies = transaction(
        s.port,
        &[
            args(&["DEL", "b0", "c1", "b2"]),
            bf_reserve("again0"),
            cf_reserve("again1"),
            bf_reserve("again2"),
            bf_reserve("again3"),
        ],
    );
    assert_eq!(replies[0], Ok("3".to_string()));
    assert_eq!(
        replies[1..4],
        [Ok("OK".into()), Ok("OK".into()), Ok("OK".into())]
    );
    assert!(replies[4].is_err(), "{replies:?}");
    // Then a copy, a restore and a LOADCHUNK header fit in what another delete frees, and
    // are counted at once: a reserve right after them is refused.
    let replies = transaction(
        s.port,
        &[
            args(&["DEL", "again0", "again2", "b4"]),
            args(&["COPY", "b6", "copied"]),
            vec![
                b"RESTORE".to_vec(),
                b"restored".to_vec(),
                b"0".to_vec(),
                payload,
            ],
            vec![
                b"BF.LOADCHUNK".to_vec(),
                b"loaded".to_vec(),
                b"1".to_vec(),
                header,
            ],
            bf_reserve("after"),
        ],
    );
    assert_eq!(
        replies[..4],
        [
            Ok("3".into()),
            Ok("1".into()),
            Ok("OK".into()),
            Ok("OK".into())
        ]
    );
    let e = replies[4].as_ref().expect_err("no room left after them");
    assert!(e.contains("bytes it may hold"), "{e}");
    assert_eq!(&admitted[3..], ["c3", "b4", "c5", "b6", "c7"]);
    for key in [
        "c3", "c5", "b6", "c7", "again1", "copied", "restored", "loaded",
    ] {
        assert_eq!(q::<i64, _>(c, &["EXISTS", key]), 1, "{key}");
    }
    assert!(used_memory(c) <= BUDGET);
}

/// Adds items `prefix0`, `prefix1`, … one command each until one is refused; returns the
/// refused item and the error.
fn add_until_refused(
    c: &mut Connection,
    command: &str,
    key: &str,
    prefix: &str,
) -> (String, String) {
    for i in 0..100_000 {
        let item = format!("{prefix}{i}");
        if let Err(e) = redis::cmd(command).arg(key).arg(&item).query::<i64>(c) {
            return (item, crate::util::error_text(&e));
        }
    }
    panic!("{command} {key}: nothing refused");
}

/// Without `maxmemory`, the module argument `MAX_MEMORY` is the budget (in place of three
/// quarters of the machine's memory): the stream stops at it, and so does the growth of a
/// scaling Bloom filter and of a cuckoo filter, until deleted keys make room.
#[test]
fn max_memory_bounds_reserves_and_growth_without_maxmemory() {
    let s = Server::start_with(&["MAX_MEMORY", &BUDGET.to_string()], &[]);
    let c = &mut s.conn();
    // Small filters whose next layer / sub-filter is large: 100 × 500 000 items at
    // ε = 0.0025 (about 78 MB) and 1024 · 16384 buckets of 2 (32 MiB).
    q::<String, _>(
        c,
        &["BF.RESERVE", "grows", "0.01", "100", "EXPANSION", "500000"],
    );
    q::<String, _>(c, &["CF.RESERVE", "cgrows", "2048", "EXPANSION", "16384"]);
    let stream = reserve_stream(s.port);
    check_stream(c, &stream, "MAX_MEMORY");

    let (bf_item, e) = add_until_refused(c, "BF.ADD", "grows", "i");
    assert!(
        e.contains("adding a layer would pass the server's memory limit"),
        "{e}"
    );
    assert_eq!(q::<Vec<i64>, _>(c, &["BF.INFO", "grows", "FILTERS"]), [1]);
    let (cf_item, e) = add_until_refused(c, "CF.ADD", "cgrows", "i");
    assert!(
        e.contains("adding a sub-filter would pass the server's memory limit"),
        "{e}"
    );
    let cf_info: Vec<Value> = q(c, &["CF.INFO", "cgrows"]);
    assert_eq!(cf_info[5], Value::Int(1), "{cf_info:?}");
    assert_eq!(q::<String, _>(c, &["PING"]), "PONG");

    // Four deleted reserves (122 MB) make room for both growths (111 MB). The growths are
    // counted at once: what they took is not there for a reserve sent right after them
    // (about 24 MB are left and the probe asks for 41 MB; had the growths not been
    // counted, 135 MB would seem free).
    let replies = transaction(
        s.port,
        &[
            args(&["DEL", "b0", "c1", "b2", "c3"]),
            args(&["BF.ADD", "grows", &bf_item]),
            args(&["CF.ADD", "cgrows", &cf_item]),
            probe(),
        ],
    );
    assert_eq!(
        replies[..3],
        [Ok("4".into()), Ok("1".into()), Ok("1".into())]
    );
    let e = replies[3].as_ref().expect_err("no room left for the probe");
    assert!(e.contains("bytes it may hold"), "{e}");
    assert_eq!(q::<Vec<i64>, _>(c, &["BF.INFO", "grows", "FILTERS"]), [2]);
    let cf_info: Vec<Value> = q(c, &["CF.INFO", "cgrows"]);
    assert_eq!(cf_info[5], Value::Int(2), "{cf_info:?}");

    // Deletes compact the cuckoo filter back into its first sub-filter: the 32 MiB of the
    // second are freed at once, and the probe fits.
    let mut commands: Vec<_> = (0..1000)
        .map(|i| args(&["CF.DEL", "cgrows", &format!("i{i}")]))
        .collect();
    commands.push(args(&["CF.COMPACT", "cgrows"]));
    commands.push(probe());
    let replies = transaction(s.port, &commands);
    assert!(replies[..1000].iter().all(|r| r == &Ok("1".into())));
    assert_eq!(replies[1000..], [Ok("OK".into()), Ok("OK".into())]);
    let cf_info: Vec<Value> = q(c, &["CF.INFO", "cgrows"]);
    assert_eq!(cf_info[5], Value::Int(1), "{cf_info:?}");
    assert_eq!(q::<i64, _>(c, &["CF.EXISTS", "cgrows", &cf_item]), 1);
    assert!(used_memory(c) <= BUDGET);
}

/// With an evicting policy, Redis makes room by evicting before every command, so a full
/// cache still takes new filters (counting `used_memory` against `maxmemory` there would
/// refuse them all); and a load is never refused for the budget: `DEBUG RELOAD` of more
/// than `maxmemory` keeps every key, and the loaded filters count against what comes next.
#[test]
fn eviction_makes_room_and_loads_are_not_refused() {
    let s = Server::start_with(
        &[],
        &["--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru"],
    );
    let c = &mut s.conn();
    q::<String, _>(c, &["DEBUG", "POPULATE", "100", "fill", "1000000"]);
    // The cache is full (Redis evicts down to 64 MiB before each command), and a 6.9 MB
    // filter is taken all the same, again and again, as are small ones.
    for i in 0..5 {
        let key = format!("new{i}");
        q::<String, _>(c, &["BF.RESERVE", &key, "0.01", "5000000"]);
        q::<String, _>(c, &["CF.RESERVE", &format!("c{key}"), "4194304"]);
        assert_eq!(q::<i64, _>(c, &["BF.ADD", &format!("small{i}"), "x"]), 1);
        assert_eq!(q::<i64, _>(c, &["CF.ADD", &format!("csmall{i}"), "x"]), 1);
    }
    q::<String, _>(c, &["PING"]);
    assert!(used_memory(c) <= 66 << 20);

    let s = Server::start();
    let c = &mut s.conn();
    for key in ["b0", "b1", "b2", "b3"] {
        q::<String, _>(c, &["BF.RESERVE", key, "0.01", "20000000"]);
    }
    // 110 MB held, 64 MiB allowed from now on: the reload keeps every filter.
    q::<String, _>(c, &["CONFIG", "SET", "maxmemory", "64mb"]);
    assert_eq!(q::<String, _>(c, &["DEBUG", "RELOAD"]), "OK");
    assert_eq!(q::<i64, _>(c, &["EXISTS", "b0", "b1", "b2", "b3"]), 4);
    // Past maxmemory Redis refuses writes itself; 16 MiB above what is held, the module
    // refuses a filter that would not fit beside the loaded ones and takes a small one.
    let room = (used_memory(c) + (16 << 20)).to_string();
    q::<String, _>(c, &["CONFIG", "SET", "maxmemory", &room]);
    let e = err(c, &["BF.RESERVE", "big", "0.01", "20000000"]);
    assert!(e.contains("bytes it may hold (maxmemory"), "{e}");
    q::<String, _>(c, &["CF.RESERVE", "small", "1024"]);
    q::<i64, _>(c, &["DEL", "b0"]);
    q::<String, _>(c, &["BF.RESERVE", "big", "0.01", "20000000"]);
}
