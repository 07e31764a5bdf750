//! An RDB file written by RedisBloom 2.4.20 (`fixtures/rb24-sketches.rdb`, see the README
//! there) with count-min sketches (`CMSk-TYPE`) and top-k (`TopK-TYPE`) of every shape its
//! commands make: it loads here, every value is the same bytes as in the file, every reply
//! RedisBloom gave after loading it (`rb24-sketches.answers`) is given here too — before
//! and after changes, and after DEBUG RELOAD, DUMP/RESTORE and an AOF rewrite with a
//! restart.
//!
//! With `REDISBLOOM_REFERENCE=/path/to/redisbloom.so` (a RedisBloom 2.4 build), the RDB
//! this module then writes is loaded by RedisBloom, which must give the same answers (and
//! the same DUMP payloads for the sketches).

use std::path::Path;

use crate::harness::Server;
use crate::persistence::wait_for_rewrite;
use crate::transcript::{fixture, phase, read, replay, Session};

const KEYS: [&str; 12] = [
    "cms:dim",
    "cms:prob",
    "cms:sat",
    "cms:merged",
    "cms:empty",
    "cms:other",
    "topk:def",
    "topk:wide",
    "topk:d1",
    "topk:k1",
    "topk:empty",
    "topk:odd",
];

/// DUMP of a key, as bytes.
fn dump(s: &Server, key: &str) -> Vec<u8> {
    crate::util::q(&mut s.conn(), &["DUMP", key])
}

/// Every key through DUMP, DEL and RESTORE.
fn dump_restore(s: &Server) {
    let mut c = Session::connect(s.port);
    for key in KEYS {
        let payload = dump(s, key);
        assert_eq!(c.one(&[b"DEL", key.as_bytes()]), ":1");
        assert_eq!(c.one(&[b"RESTORE", key.as_bytes(), b"0", &payload]), "+OK");
    }
}

#[test]
fn redisbloom_2_4_sketches_and_top_k_load_bit_for_bit_and_answer_as_there() {
    let answers = read(&fixture("rb24-sketches.answers"));
    let (before, changes, after) = (
        phase(&answers, "before"),
        phase(&answers, "changes"),
        phase(&answers, "after"),
    );
    let rdb = std::fs::read(fixture("rb24-sketches.rdb")).unwrap();
    let mut s = Server::start_from_rdb(&fixture("rb24-sketches.rdb"), &[]);
    {
        let mut c = Session::connect(s.port);
        assert_eq!(
            c.one(&[b"DBSIZE"]),
            format!(":{}", KEYS.len()),
            "{}",
            s.log()
        );
        replay(&mut c, "loaded", before);
        // Bit for bit: each value as this module saves it (its DUMP without the RDB version
        // and checksum, after the type byte) is the value RedisBloom wrote after the key in
        // the file — top-k heap slots included, whose pointer bytes RedisBloom writes too.
        for key in KEYS {
            let payload = dump(&s, key);
            let value = &payload[1..payload.len() - 10];
            let mut record = vec![7u8, key.len() as u8];
            record.extend_from_slice(key.as_bytes());
            record.extend_from_slice(value);
            assert!(
                rdb.windows(record.len()).any(|w| w == record),
                "{key}: the value saved here is not the bytes RedisBloom wrote"
            );
        }
        assert_eq!(c.one(&[b"DEBUG", b"RELOAD"]), "+OK");
        replay(&mut c, "after DEBUG RELOAD", before);
        dump_restore(&s);
        replay(&mut c, "after DUMP/RESTORE", before);
        replay(&mut c, "changes", changes);
        replay(&mut c, "after the changes", after);
        assert_eq!(c.one(&[b"DEBUG", b"RELOAD"]), "+OK");
        replay(&mut c, "changed, after DEBUG RELOAD", after);
        dump_restore(&s);
        replay(&mut c, "changed, after DUMP/RESTORE", after);
        assert_eq!(c.one(&[b"SAVE"]), "+OK");
        assert_eq!(
            c.one(&[b"CONFIG", b"SET", b"aof-use-rdb-preamble", b"no"]),
            "+OK"
        );
        assert_eq!(c.one(&[b"CONFIG", b"SET", b"appendonly", b"yes"]), "+OK");
        wait_for_rewrite(&mut s.conn());
    }
    let saved = s.dir().join("saved.rdb");
    std::fs::rename(s.dir().join("dump.rdb"), &saved).expect("keep the RDB file");
    s.add_config(&["--appendonly", "yes", "--aof-use-rdb-preamble", "no"]);
    s.restart();
    let mut c = Session::connect(s.port);
    replay(&mut c, "changed, after an AOF rewrite and a restart", after);

    // The other way: RedisBloom loads the RDB written here and answers the same.
    if let Some(reference) = std::env::var_os("REDISBLOOM_REFERENCE") {
        let dir = tempfile::tempdir().unwrap();
        std::fs::copy(&saved, dir.path().join("dump.rdb")).unwrap();
        let r = Server::start_module(
            Path::new(&reference),
            &[],
            &["--dir", dir.path().to_str().unwrap()],
        );
        let mut rc = Session::connect(r.port);
        replay(&mut rc, "RedisBloom, loading the RDB written here", after);
        // And a DUMP of this module's RESTOREs there.
        for key in KEYS {
            let payload = dump(&s, key);
            let name = format!("{key}:restored");
            assert_eq!(
                rc.one(&[b"RESTORE", name.as_bytes(), b"0", &payload]),
                "+OK"
            );
        }
        let renamed: Vec<_> = after
            .iter()
            .filter(|l| l.command[0] != b"DUMP")
            .map(|l| {
                let mut l = l.clone();
                let key = [&l.command[1][..], b":restored"].concat();
                l.command[1] = key;
                l
            })
            .collect();
        replay(
            &mut rc,
            "RedisBloom, RESTOREs of this module's DUMPs",
            &renamed,
        );
    }
}
