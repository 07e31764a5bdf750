//! Count-min sketches and top-k: every reply RedisBloom 2.4 gave to a transcript of
//! commands (errors and their order included), the deliberate differences, and every
//! write path through DUMP/RESTORE, DEBUG RELOAD, a restart, an AOF rewrite, AOF replay
//! and COPY.

use crate::command;
use crate::harness::Server;
use crate::persistence::wait_for_rewrite;
use crate::transcript::{fixture, phase, read, replay, Session};
use crate::util::q;

/// Every command of `rb24-sketches.transcript` answers as RedisBloom 2.4.20 answered it:
/// arity, missing keys, keys of other types, argument errors in RedisBloom's order,
/// INITBYPROB's sizing, saturation and "CMS: INCRBY overflow", every MERGE error and
/// weights, the sketches' DUMP payloads byte for byte, TOPK.RESERVE's checks, TOPK.LIST's
/// keyword, TOPK.INFO's decay, and top-k lists, queries and counts where the decay is
/// certain (decay 1) or never drawn (no collisions).
#[test]
fn every_recorded_reply_of_redisbloom_is_given() {
    let s = Server::start();
    let lines = read(&fixture("rb24-sketches.transcript"));
    let mut session = Session::connect(s.port);
    replay(&mut session, "transcript", phase(&lines, ""));
    assert_eq!(session.one(&[b"PING"]), "+PONG", "{}", s.log());
}

/// `TOPK.INCRBY` with a bad increment before its last pair: RedisBloom answers the error
/// and stops, sending fewer elements than the array it announced (the client then reads
/// the next reply as the missing elements). Here the array is whole: the pairs before
/// the bad one are added, it and every pair after it answer the error and are not added.
#[test]
fn a_bad_increment_answers_a_whole_array() {
    let s = Server::start();
    let mut c = Session::connect(s.port);
    assert_eq!(
        c.one(&[b"TOPK.RESERVE", b"t", b"5", b"100", b"3", b"1"]),
        "+OK"
    );
    let bad =
        "-TopK: increment must be an integer greater or equal to 0                            \
               and smaller or equal to 100%2C000";
    assert_eq!(
        c.one(&[
            b"TOPK.INCRBY",
            b"t",
            b"a",
            b"2",
            b"b",
            b"x",
            b"c",
            b"3",
            b"d",
            b"-1"
        ]),
        format!("[nil, {bad}, {bad}, {bad}]")
    );
    assert_eq!(c.one(&[b"TOPK.LIST", b"t", b"WITHCOUNT"]), "[+a, :2]");
    assert_eq!(c.one(&[b"PING"]), "+PONG");
}

/// Items a status reply cannot carry (NUL, CR, LF) come back whole as bulk strings; the
/// rest as RedisBloom sends them, status strings. An item with a NUL is kept whole through
/// a reload (RedisBloom saves it up to the NUL), and an empty one lists as RedisBloom lists
/// it after a reload.
#[test]
fn items_a_status_reply_cannot_carry_come_back_whole() {
    let s = Server::start();
    let mut c = Session::connect(s.port);
    assert_eq!(
        c.one(&[b"TOPK.RESERVE", b"t", b"2", b"1000", b"3", b"1"]),
        "+OK"
    );
    assert_eq!(
        c.one(&[b"TOPK.ADD", b"t", b"a\r\nb", b"x\0y", b"plain"]),
        "[nil, nil, $a%0D%0Ab]"
    );
    assert_eq!(
        c.one(&[b"TOPK.LIST", b"t", b"WITHCOUNT"]),
        "[$x%00y, :1, +plain, :1]"
    );
    assert_eq!(c.one(&[b"DEBUG", b"RELOAD"]), "+OK");
    assert_eq!(c.one(&[b"TOPK.QUERY", b"t", b"x\0y", b"x"]), "[:1, :0]");
    // An empty item: saved as a lone NUL, loaded as no item, listed as "".
    assert_eq!(c.one(&[b"TOPK.INCRBY", b"t", b"", b"5"]), "[$x%00y]");
    assert_eq!(c.one(&[b"DEBUG", b"RELOAD"]), "+OK");
    assert_eq!(
        c.one(&[b"TOPK.LIST", b"t", b"WITHCOUNT"]),
        "[+, :5, +plain, :1]"
    );
}

/// TOPK.COUNT writes nothing: registered read-only (RedisBloom 2.4 registers it as a
/// write, so a read-only replica refuses it; later releases fixed that).
#[test]
fn topk_count_is_a_read() {
    let s = Server::start();
    let mut c = Session::connect(s.port);
    let info = c.one(&[
        b"COMMAND",
        b"INFO",
        b"topk.count",
        b"cms.query",
        b"cms.incrby",
    ]);
    assert!(
        info.starts_with("[[$topk.count, :-1, [+readonly, +module]"),
        "{info}"
    );
    assert!(
        info.contains("[$cms.query, :-1, [+readonly, +module]"),
        "{info}"
    );
    assert!(
        info.contains("[$cms.incrby, :-1, [+write, +denyoom, +module]"),
        "{info}"
    );
}

/// Sketches and top-k that would not fit are refused with an error, before any memory is
/// asked for: at creation, at an add whose items could take a top-k past the limit, at a
/// RESTORE.
#[test]
fn what_passes_the_memory_limit_is_refused() {
    let s = Server::start_with(&["MAX_KEY_MEMORY", "1048576"], &[]);
    let mut c = Session::connect(s.port);
    let refused = c.one(&[b"CMS.INITBYDIM", b"c", b"1000", b"1000"]);
    assert_eq!(
        refused,
        "-CMS: Insufficient memory to create the key: the sketch would use 4000048 bytes%2C \
         more than the per-key limit of 1048576 bytes (module argument MAX_KEY_MEMORY)"
    );
    let refused = c.one(&[b"CMS.INITBYPROB", b"c", b"0.000001", b"0.5"]);
    assert!(
        refused.starts_with("-CMS: Insufficient memory"),
        "{refused}"
    );
    // 100 000 heap slots of 40 bytes (RedisBloom's 24 and the item's address and length).
    let refused = c.one(&[b"TOPK.RESERVE", b"t", b"100000"]);
    let per_key = "bytes%2C more than the per-key limit of 1048576 bytes (module argument \
                   MAX_KEY_MEMORY)";
    assert!(
        refused.starts_with(
            "-ERR Insufficient memory to create topk data structure: the top-k would use 400"
        ) && refused.ends_with(per_key),
        "{refused}"
    );
    assert_eq!(c.one(&[b"CMS.INITBYDIM", b"c", b"1000", b"200"]), "+OK");
    assert_eq!(c.one(&[b"TOPK.RESERVE", b"t", b"2"]), "+OK");
    let big = vec![b'x'; 600_000];
    let mut bigger = big.clone();
    bigger.push(b'y');
    let refused = c.one(&[b"TOPK.ADD", b"t", b"a", &big, &bigger]);
    assert!(
        refused.starts_with("-ERR these items: the top-k would use 120")
            && refused.ends_with(per_key),
        "{refused}"
    );
    assert_eq!(c.one(&[b"TOPK.LIST", b"t"]), "[]", "nothing was added");
    assert_eq!(c.one(&[b"TOPK.ADD", b"t", b"a", &big]), "[nil, nil]");
    // A RESTORE of a value past the limit: the payload of a server without one.
    let free = Server::start();
    let mut f = Session::connect(free.port);
    assert_eq!(f.one(&[b"CMS.INITBYDIM", b"c", b"1000", b"1000"]), "+OK");
    let dump = q::<Vec<u8>, _>(&mut free.conn(), &["DUMP", "c"]);
    let restored = c.one(&[b"RESTORE", b"big", b"0", &dump]);
    assert!(restored.starts_with("-"), "{restored}");
    // Without MAX_KEY_MEMORY, what cannot fit in the machine is refused.
    assert!(f
        .one(&[b"CMS.INITBYDIM", b"huge", b"1099511627776", b"4"])
        .starts_with("-CMS: Insufficient memory to create the key: the sketch would use"));
    assert!(f
        .one(&[b"TOPK.RESERVE", b"huge", b"4294967295"])
        .starts_with("-ERR Insufficient memory to create topk data structure: the top-k would"));
    assert_eq!(c.one(&[b"PING"]), "+PONG");
    assert_eq!(f.one(&[b"PING"]), "+PONG");
}

/// Keys written by every write path of both types: creation by dimensions and by
/// probability, increments (saturating ones too), merges (weighted, negative weights,
/// into a source), top-k with defaults and with parameters, adds and increments with
/// decays, a decay-1 top-k, items of any bytes, COPY and RESTORE.
fn write_every_path(c: &mut Session) -> Vec<&'static str> {
    let mut commands: Vec<Vec<Vec<u8>>> = vec![
        command!("CMS.INITBYDIM", "cms:dim", "50", "4"),
        command!("CMS.INITBYDIM", "cms:dim2", "50", "4"),
        command!("CMS.INITBYPROB", "cms:prob", "0.05", "0.01"),
        command!("CMS.INITBYDIM", "cms:sat", "3", "2"),
        command!("CMS.INITBYDIM", "cms:merged", "50", "4"),
        command!("CMS.INCRBY", "cms:sat", "x", "4294967295", "y", "7"),
        command!("TOPK.RESERVE", "topk:def", "5"),
        command!("TOPK.RESERVE", "topk:wide", "10", "1000", "4", "0.9"),
        command!("TOPK.RESERVE", "topk:d1", "4", "8", "3", "1"),
        command!("TOPK.RESERVE", "topk:empty", "3"),
    ];
    for i in 0..200u32 {
        let item = format!("i{}", (i * i) % 97);
        let count = (i % 9).to_string();
        commands.push(command!("CMS.INCRBY", "cms:dim", item, count));
        commands.push(command!(
            "CMS.INCRBY",
            "cms:prob",
            item,
            count,
            "other",
            "1"
        ));
        commands.push(command!("CMS.INCRBY", "cms:dim2", item, "1"));
        for key in ["topk:def", "topk:wide", "topk:d1"] {
            if i % 5 == 0 {
                commands.push(command!("TOPK.INCRBY", key, item, count));
            } else {
                commands.push(command!("TOPK.ADD", key, item, "j1", format!("j{}", i % 7)));
            }
        }
    }
    commands.extend([
        command!("TOPK.ADD", "topk:wide", b"x\0y", b"a\r\nb", "", b"\xff"),
        command!(
            "CMS.MERGE",
            "cms:merged",
            "2",
            "cms:dim",
            "cms:dim2",
            "WEIGHTS",
            "2",
            "1"
        ),
        command!(
            "CMS.MERGE",
            "cms:merged",
            "2",
            "cms:merged",
            "cms:dim2",
            "WEIGHTS",
            "1",
            "-1"
        ),
        command!("COPY", "cms:dim", "cms:copy"),
        command!("COPY", "topk:def", "topk:copy"),
        command!("CMS.INCRBY", "cms:copy", "only-in-copy", "5"),
        command!("TOPK.INCRBY", "topk:copy", "only-in-copy", "100"),
    ]);
    let replies = c.run(&commands).expect("the server answers");
    for (command, reply) in commands.iter().zip(&replies) {
        assert!(
            !reply.starts_with('-') && !reply.contains(", -"),
            "{}: {reply}",
            crate::transcript::command_text(command)
        );
    }
    let dump = c.one(&[b"DUMP", b"topk:wide"]);
    assert!(dump.starts_with('$'));
    vec![
        "cms:dim",
        "cms:dim2",
        "cms:prob",
        "cms:sat",
        "cms:merged",
        "cms:copy",
        "topk:def",
        "topk:wide",
        "topk:d1",
        "topk:empty",
        "topk:copy",
    ]
}

/// Every answer of the keys: INFO, queries, counts, lists and the DUMP payload.
fn answers(c: &mut Session, keys: &[&str]) -> Vec<String> {
    let mut probe: Vec<Vec<u8>> = (0..97).map(|i| format!("i{i}").into_bytes()).collect();
    probe.extend(["j1", "only-in-copy", "x", "y", "absent"].map(|s| s.as_bytes().to_vec()));
    probe.extend([b"x\0y".to_vec(), b"a\r\nb".to_vec(), vec![], vec![0xff]]);
    let mut commands = Vec::new();
    for key in keys {
        let with = |name: &str| {
            let mut c = vec![name.as_bytes().to_vec(), key.as_bytes().to_vec()];
            c.extend(probe.iter().cloned());
            c
        };
        if key.starts_with("cms") {
            commands.push(command!("CMS.INFO", key));
            commands.push(with("CMS.QUERY"));
        } else {
            commands.push(command!("TOPK.INFO", key));
            commands.push(command!("TOPK.LIST", key, "WITHCOUNT"));
            commands.push(with("TOPK.QUERY"));
            commands.push(with("TOPK.COUNT"));
        }
        commands.push(command!("DUMP", key));
    }
    c.run(&commands).expect("the server answers")
}

#[test]
fn every_write_path_survives_dump_restore_reload_restart_and_aof_rewrite() {
    let mut s = Server::start();
    let (keys, before) = {
        let mut c = Session::connect(s.port);
        let keys = write_every_path(&mut c);
        let before = answers(&mut c, &keys);
        // The copy is a value of its own: CMS.QUERY of cms:dim and of cms:copy.
        assert_ne!(before[1], before[5 * 3 + 1], "cms:copy has its own counts");
        for key in &keys {
            let dump = q::<Vec<u8>, _>(&mut s.conn(), &["DUMP", key]);
            assert_eq!(c.one(&[b"DEL", key.as_bytes()]), ":1");
            assert_eq!(c.one(&[b"RESTORE", key.as_bytes(), b"0", &dump]), "+OK");
        }
        assert_eq!(answers(&mut c, &keys), before, "after DUMP/RESTORE");
        assert_eq!(c.one(&[b"DEBUG", b"RELOAD"]), "+OK");
        assert_eq!(answers(&mut c, &keys), before, "after DEBUG RELOAD");
        assert_eq!(c.one(&[b"SAVE"]), "+OK");
        (keys, before)
    };
    s.restart();
    {
        let mut c = Session::connect(s.port);
        assert_eq!(answers(&mut c, &keys), before, "after a restart");
        // AOF rewrite without the RDB preamble: RESTORE commands (as RedisBloom writes).
        let conn = &mut s.conn();
        q::<String, _>(conn, &["CONFIG", "SET", "aof-use-rdb-preamble", "no"]);
        q::<String, _>(conn, &["CONFIG", "SET", "appendonly", "yes"]);
        wait_for_rewrite(conn);
    }
    let base = std::fs::read_dir(s.dir().join("appendonlydir"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains(".base.aof"))
        .expect("a base AOF");
    let aof = std::fs::read(base).unwrap();
    let restores = aof.windows(7).filter(|w| w == b"RESTORE").count();
    assert_eq!(restores, keys.len(), "one RESTORE per key");
    std::fs::remove_file(s.dir().join("dump.rdb")).expect("remove the RDB file");
    s.add_config(&["--appendonly", "yes", "--aof-use-rdb-preamble", "no"]);
    s.restart();
    let mut c = Session::connect(s.port);
    assert_eq!(
        answers(&mut c, &keys),
        before,
        "after an AOF rewrite and a restart"
    );
}

/// With the AOF on, every write is logged as it ran and replayed at start-up: sketches,
/// and top-k whose decays are certain (decay 1) or never drawn, answer the same (a top-k
/// whose decay is drawn would draw again, from another seed, as in RedisBloom).
#[test]
fn aof_replay_gives_the_same_answers() {
    let mut s = Server::start_with(&[], &["--appendonly", "yes", "--appendfsync", "always"]);
    let keys = [
        "cms:dim",
        "cms:prob",
        "cms:sat",
        "cms:merged",
        "topk:d1",
        "topk:empty",
    ];
    let before = {
        let mut c = Session::connect(s.port);
        write_every_path(&mut c);
        answers(&mut c, &keys)
    };
    s.restart();
    let mut c = Session::connect(s.port);
    assert_eq!(answers(&mut c, &keys), before);
}

/// Sketches and top-k count in the server-wide budget as filters do: a stream of them
/// stops at `MAX_MEMORY` with an error naming it, and a deleted one makes room again.
#[test]
fn sketches_and_top_k_count_in_the_server_wide_budget() {
    let s = Server::start_with(&["MAX_MEMORY", &(256u64 << 20).to_string()], &[]);
    let mut c = Session::connect(s.port);
    // 32 MiB each: 8 Mi counters, or a heap of 819 Ki slots of 40 bytes.
    let mut admitted = Vec::new();
    let mut refusal = None;
    for i in 0..12 {
        let key = format!("k{i}");
        let reply = if i % 2 == 0 {
            c.one(&[b"CMS.INITBYDIM", key.as_bytes(), b"2097152", b"4"])
        } else {
            c.one(&[
                b"TOPK.RESERVE",
                key.as_bytes(),
                b"838860",
                b"8",
                b"7",
                b"0.9",
            ])
        };
        if reply == "+OK" {
            admitted.push(key);
        } else {
            refusal = Some(reply);
            break;
        }
    }
    let refusal = refusal.expect("the budget ends the stream");
    assert!((5..=8).contains(&admitted.len()), "{admitted:?}");
    assert!(
        refusal.contains("but the server holds") && refusal.contains("module argument MAX_MEMORY"),
        "{refusal}"
    );
    // Deleting two makes room for one (what the allocator rounds up is counted at the
    // next read of used_memory).
    assert_eq!(
        c.one(&[b"DEL", admitted[0].as_bytes(), admitted[1].as_bytes()]),
        ":2"
    );
    assert_eq!(
        c.one(&[b"CMS.INITBYDIM", b"again", b"2097152", b"4"]),
        "+OK"
    );
    // Full again: a RESTORE or a COPY of a 32 MiB sketch does not fit, until one goes.
    let fill = (0..4)
        .map(|i| {
            c.one(&[
                b"CMS.INITBYDIM",
                format!("fill{i}").as_bytes(),
                b"2097152",
                b"4",
            ])
        })
        .take_while(|r| r == "+OK")
        .count();
    assert!(fill < 4);
    let payload = q::<Vec<u8>, _>(&mut s.conn(), &["DUMP", "again"]);
    let restored = c.one(&[b"RESTORE", b"copy", b"0", &payload]);
    assert!(restored.starts_with('-'), "{restored}");
    let copied = c.one(&[b"COPY", b"again", b"copy"]);
    assert!(copied.starts_with('-'), "{copied}");
    assert_eq!(
        c.one(&[b"DEL", admitted[2].as_bytes(), admitted[3].as_bytes()]),
        ":2"
    );
    assert_eq!(c.one(&[b"RESTORE", b"copy", b"0", &payload]), "+OK");
    assert_eq!(c.one(&[b"COPY", b"again", b"copy2"]), ":1");
}

/// The AOF rewrite keeps sketches and top-k of every database: RedisBloom builds its
/// `RESTORE` payload by calling `DUMP` from a context of database 0, which loses a key of
/// another database (or dumps a namesake of database 0); here the payload is the value's.
#[test]
fn the_aof_rewrite_keeps_keys_of_other_databases() {
    let mut s = Server::start();
    let commands = [
        command!("SELECT", "3"),
        command!("CMS.INITBYDIM", "c", "10", "2"),
        command!("CMS.INCRBY", "c", "a", "7"),
        command!("TOPK.RESERVE", "t", "2", "50", "2", "1"),
        command!("TOPK.ADD", "t", "x", "x", "y"),
        command!("SELECT", "0"),
        command!("CMS.INITBYDIM", "c", "4", "1"),
    ];
    let queries = [
        command!("SELECT", "3"),
        command!("CMS.QUERY", "c", "a"),
        command!("CMS.INFO", "c"),
        command!("TOPK.LIST", "t", "WITHCOUNT"),
        command!("SELECT", "0"),
        command!("CMS.INFO", "c"),
    ];
    let before = {
        let mut c = Session::connect(s.port);
        c.run(&commands).unwrap();
        let before = c.run(&queries).unwrap();
        assert_eq!(before[1], "[:7]");
        let conn = &mut s.conn();
        q::<String, _>(conn, &["CONFIG", "SET", "aof-use-rdb-preamble", "no"]);
        q::<String, _>(conn, &["CONFIG", "SET", "appendonly", "yes"]);
        wait_for_rewrite(conn);
        before
    };
    std::fs::remove_file(s.dir().join("dump.rdb")).ok();
    s.add_config(&["--appendonly", "yes", "--aof-use-rdb-preamble", "no"]);
    s.restart();
    let mut c = Session::connect(s.port);
    assert_eq!(c.run(&queries).unwrap(), before, "{}", s.log());
}

/// `bloomkit.topk.replay` (what the module replicates for a top-k add that drew; see
/// `distributed.rs`) takes its draws from its argument: replayed on a copy of a top-k, the
/// draws a `TOPK.ADD` made give the bytes that add gave. Draws that are not whole 4-byte
/// values of at most `RAND_MAX`, an unknown operation, a missing key or a key of another
/// type are errors that change nothing; a replay that runs out of draws never decays.
#[test]
fn a_top_k_replay_applies_the_draws_it_is_given_and_refuses_bad_ones() {
    let s = Server::start();
    let c = &mut s.conn();
    q::<String, _>(c, &["TOPK.RESERVE", "tk", "2", "1", "1", "1"]);
    q::<redis::Value, _>(c, &["TOPK.INCRBY", "tk", "a", "3"]);
    let dump_of = |c: &mut redis::Connection, key: &str| q::<Vec<u8>, _>(c, &["DUMP", key]);
    let initial = dump_of(c, "tk");
    // Decay 1 and draws below RAND_MAX: each draw of "b" takes one from "a"'s count of 3.
    let draws =
        |values: &[u32]| -> Vec<u8> { values.iter().flat_map(|v| v.to_le_bytes()).collect() };
    let mut replay = redis::cmd("bloomkit.topk.replay");
    replay
        .arg("tk")
        .arg(draws(&[0, 5]))
        .arg("INCRBY")
        .arg("b")
        .arg(2);
    replay.query::<redis::Value>(c).unwrap();
    assert_eq!(q::<Vec<i64>, _>(c, &["TOPK.COUNT", "tk", "a", "b"]), [1, 0]);
    // No draws left: RAND_MAX is drawn, which never decays, even at decay 1.
    let mut replay = redis::cmd("bloomkit.topk.replay");
    replay.arg("tk").arg(Vec::<u8>::new()).arg("add").arg("b");
    replay.query::<redis::Value>(c).unwrap();
    assert_eq!(q::<Vec<i64>, _>(c, &["TOPK.COUNT", "tk", "a", "b"]), [1, 0]);
    let after = dump_of(c, "tk");
    assert_ne!(after, initial);
    for (args, error) in [
        (
            vec![
                b"tk".to_vec(),
                vec![1, 2, 3],
                b"ADD".to_vec(),
                b"x".to_vec(),
            ],
            "the draws",
        ),
        (
            vec![
                b"tk".to_vec(),
                draws(&[u32::MAX]),
                b"ADD".to_vec(),
                b"x".to_vec(),
            ],
            "the draws",
        ),
        (
            vec![b"tk".to_vec(), vec![], b"QUERY".to_vec(), b"x".to_vec()],
            "ADD or INCRBY",
        ),
        (
            vec![b"tk".to_vec(), vec![], b"ADD".to_vec()],
            "wrong number",
        ),
        (
            vec![b"tk".to_vec(), vec![], b"INCRBY".to_vec(), b"x".to_vec()],
            "wrong number",
        ),
        (
            vec![b"nokey".to_vec(), vec![], b"ADD".to_vec(), b"x".to_vec()],
            "does not exist",
        ),
    ] {
        let mut replay = redis::cmd("bloomkit.topk.replay");
        for arg in &args {
            replay.arg(arg.as_slice());
        }
        let e = replay.query::<redis::Value>(c).unwrap_err().to_string();
        assert!(e.contains(error), "{args:?}: {e}");
    }
    q::<String, _>(c, &["SET", "str", "v"]);
    let e = redis::cmd("bloomkit.topk.replay")
        .arg("str")
        .arg(Vec::<u8>::new())
        .arg("ADD")
        .arg("x")
        .query::<redis::Value>(c)
        .unwrap_err();
    assert_eq!(e.code(), Some("WRONGTYPE"));
    assert_eq!(dump_of(c, "tk"), after, "refused replays change nothing");
}

/// A command as a client writes it on the wire: a RESP array of bulk strings.
fn resp(words: &[&[u8]]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", words.len()).into_bytes();
    for w in words {
        out.extend_from_slice(format!("${}\r\n", w.len()).as_bytes());
        out.extend_from_slice(w);
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// A raw connection to the server on `port`, reads timing out after 10 s.
fn connect(port: u16) -> std::net::TcpStream {
    let conn = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    conn.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    conn
}

/// Sends `HELLO protocol` on `conn` and reads up to the PONG of a PING sent after it.
fn hello(conn: &mut std::net::TcpStream, protocol: &[u8]) {
    use std::io::{Read, Write};
    conn.write_all(&resp(&[b"HELLO", protocol])).unwrap();
    conn.write_all(&resp(&[b"PING"])).unwrap();
    let mut seen = Vec::new();
    while !seen.ends_with(b"+PONG\r\n") {
        let mut byte = [0];
        conn.read_exact(&mut byte).expect("HELLO's reply and PONG");
        seen.push(byte[0]);
    }
}

/// The single-item `TOPK.ADD`, `TOPK.INCRBY` and `TOPK.QUERY`, whose usual answers (`[nil]`,
/// `[0]`, `[1]`) the module sends as whole replies Redis made at load, byte for byte in
/// RESP2 and in RESP3 (a null is `$-1` in one and `_` in the other), beside the answers
/// sent element by element (an expelled item, a bad increment), inside MULTI, and to
/// scripts (whose own client speaks RESP2 unless the script asks for RESP3). The bytes are
/// those the module sent before the whole replies.
#[test]
fn single_item_top_k_replies_are_each_protocols_bytes() {
    use std::io::{Read, Write};
    let s = Server::start();
    const BAD: &[u8] = b"*1\r\n-TopK: increment must be an integer greater or equal to 0                            and smaller or equal to 100,000\r\n";
    for (protocol, key, nil) in [
        (b"2", b"t2", b"$-1\r\n".as_slice()),
        (b"3", b"t3", b"_\r\n".as_slice()),
    ] {
        let mut conn = connect(s.port);
        hello(&mut conn, protocol);
        let one_nil = [b"*1\r\n".as_slice(), nil].concat();
        let k: &[u8] = key;
        let exec = [b"*2\r\n*1\r\n".as_slice(), nil, b"*1\r\n:1\r\n"].concat();
        let steps: Vec<(Vec<&[u8]>, Vec<u8>)> = vec![
            (
                vec![b"TOPK.RESERVE", k, b"2", b"1000", b"3", b"0.9"],
                b"+OK\r\n".to_vec(),
            ),
            (vec![b"TOPK.ADD", k, b"a"], one_nil.clone()),
            (vec![b"TOPK.ADD", k, b"b"], one_nil.clone()),
            (vec![b"TOPK.ADD", k, b"c"], b"*1\r\n+a\r\n".to_vec()),
            (vec![b"TOPK.QUERY", k, b"c"], b"*1\r\n:1\r\n".to_vec()),
            (vec![b"TOPK.QUERY", k, b"a"], b"*1\r\n:0\r\n".to_vec()),
            (
                vec![b"TOPK.QUERY", k, b"c", b"a"],
                b"*2\r\n:1\r\n:0\r\n".to_vec(),
            ),
            (
                vec![b"TOPK.INCRBY", k, b"d", b"5"],
                b"*1\r\n+b\r\n".to_vec(),
            ),
            (
                vec![b"TOPK.INCRBY", k, b"e", b"1"],
                b"*1\r\n+c\r\n".to_vec(),
            ),
            (vec![b"TOPK.INCRBY", k, b"e", b"100001"], BAD.to_vec()),
            (vec![b"TOPK.INCRBY", k, b"e", b"10"], one_nil.clone()),
            (
                vec![b"TOPK.ADD", k, b"x", b"y"],
                [b"*2\r\n".as_slice(), nil, nil].concat(),
            ),
            (vec![b"MULTI"], b"+OK\r\n".to_vec()),
            (vec![b"TOPK.ADD", k, b"f"], b"+QUEUED\r\n".to_vec()),
            (vec![b"TOPK.QUERY", k, b"d"], b"+QUEUED\r\n".to_vec()),
            (vec![b"EXEC"], exec),
            (
                vec![
                    b"EVAL",
                    b"return redis.call('TOPK.ADD', KEYS[1], 'g')",
                    b"1",
                    k,
                ],
                one_nil.clone(),
            ),
            (
                vec![
                    b"EVAL",
                    b"return type(redis.call('TOPK.ADD', KEYS[1], 'h')[1])",
                    b"1",
                    k,
                ],
                b"$7\r\nboolean\r\n".to_vec(),
            ),
            (
                vec![
                    b"EVAL",
                    b"redis.setresp(3); return type(redis.call('TOPK.ADD', KEYS[1], 'i')[1])",
                    b"1",
                    k,
                ],
                b"$3\r\nnil\r\n".to_vec(),
            ),
            (
                vec![
                    b"EVAL",
                    b"return redis.call('TOPK.QUERY', KEYS[1], 'd')",
                    b"1",
                    k,
                ],
                b"*1\r\n:1\r\n".to_vec(),
            ),
            // Nothing more than each reply was sent: the next reply is PING's.
            (vec![b"PING"], b"+PONG\r\n".to_vec()),
        ];
        for (command, expected) in steps {
            conn.write_all(&resp(&command)).unwrap();
            let mut got = vec![0; expected.len()];
            conn.read_exact(&mut got).expect("the reply");
            assert_eq!(
                String::from_utf8_lossy(&got),
                String::from_utf8_lossy(&expected),
                "RESP{}: {}",
                protocol[0] as char,
                String::from_utf8_lossy(&command.join(&b' '))
            );
        }
    }
}

/// One connection that changes protocol between commands (`HELLO 3`, then `HELLO 2`) gets
/// each single-item `TOPK.ADD`'s `[nil]` in the protocol it speaks at that command: the
/// whole reply is chosen per reply, from the client as Redis has it then, never kept from
/// an earlier command of the same client (nor of another one, on the connection beside it).
#[test]
fn a_single_item_top_k_nil_follows_the_clients_protocol_from_command_to_command() {
    use std::io::{Read, Write};
    let s = Server::start();
    let expect =
        |conn: &mut std::net::TcpStream, command: &[&[u8]], expected: &[u8], what: &str| {
            conn.write_all(&resp(command)).unwrap();
            let mut got = vec![0; expected.len()];
            conn.read_exact(&mut got).expect("the reply");
            assert_eq!(
                String::from_utf8_lossy(&got),
                String::from_utf8_lossy(expected),
                "{what}"
            );
        };
    const NIL2: &[u8] = b"*1\r\n$-1\r\n";
    const NIL3: &[u8] = b"*1\r\n_\r\n";
    let mut a = connect(s.port);
    let mut b = connect(s.port);
    expect(
        &mut a,
        &[b"TOPK.RESERVE", b"t", b"1000", b"100", b"3", b"0.9"],
        b"+OK\r\n",
        "reserve",
    );
    let mut item = 0;
    let mut add = |conn: &mut std::net::TcpStream, nil: &[u8], what: &str| {
        item += 1;
        let name = format!("item{item}");
        expect(conn, &[b"TOPK.ADD", b"t", name.as_bytes()], nil, what);
    };
    add(&mut a, NIL2, "a, RESP2 before any HELLO");
    hello(&mut b, b"3");
    add(&mut b, NIL3, "b, RESP3");
    add(&mut a, NIL2, "a, RESP2, after b's RESP3 reply");
    hello(&mut a, b"3");
    add(&mut a, NIL3, "a, after HELLO 3");
    add(&mut a, NIL3, "a, RESP3 again");
    hello(&mut a, b"2");
    add(&mut a, NIL2, "a, after HELLO 2");
    add(&mut b, NIL3, "b, still RESP3, after a's RESP2 reply");
    expect(
        &mut a,
        &[b"TOPK.INCRBY", b"t", b"x", b"2"],
        NIL2,
        "a, TOPK.INCRBY, RESP2",
    );
    expect(
        &mut b,
        &[b"TOPK.INCRBY", b"t", b"y", b"2"],
        NIL3,
        "b, TOPK.INCRBY, RESP3",
    );
    // Nothing more than each reply was sent on either connection.
    expect(&mut a, &[b"PING"], b"+PONG\r\n", "a, the next reply");
    expect(&mut b, &[b"PING"], b"+PONG\r\n", "b, the next reply");
}
