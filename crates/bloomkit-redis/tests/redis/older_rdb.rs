//! RDB files written by real RedisBloom servers (`fixtures/`, see its README): 2.0, whose
//! cuckoo filters (encoding version 3) hash with 32-bit MurmurHash2, and 2.2.18 (encoding
//! 4). Each loads here, every item added and not deleted answers 1, and every reply the
//! writing server gave after loading the same file — CF.MEXISTS, CF.COUNT, CF.DEL, CF.ADD,
//! CF.ADDNX, CF.INSERT, CF.INSERTNX, BF.MEXISTS, BF.MADD, recorded in the `.answers` file
//! beside it — is given here too, also after DEBUG RELOAD, DUMP + RESTORE, SCANDUMP +
//! LOADCHUNK and an AOF rewrite with a restart.
//!
//! With `REDISBLOOM_REFERENCE=/path/to/redisbloom.so` (a RedisBloom 2.2 or later build), a
//! filter with 2.0's hashing, re-saved here, is also offered to that module: its RESTORE
//! must fail rather than load a filter that would answer with other hashing.

use std::path::{Path, PathBuf};

use redis::{Connection, Value};

use crate::harness::Server;
use crate::persistence::wait_for_rewrite;
use crate::util::{cmd, error_text, q};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/redis/fixtures")
        .join(name)
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    /// The command with the items appended.
    Mexists,
    /// The command once per item.
    Each,
    /// The command alone.
    Cmd,
}

#[derive(Debug)]
struct Step {
    kind: Kind,
    cmd: Vec<String>,
    items: Vec<String>,
    reply: String,
}

#[derive(Default)]
struct Answers {
    /// Per key, the items added and not deleted.
    present: Vec<(String, Vec<String>)>,
    before: Vec<Step>,
    changes: Vec<Step>,
    after: Vec<Step>,
}

/// `prefix:start:end …` → the item names.
fn expand(ranges: &str) -> Vec<String> {
    ranges
        .split_whitespace()
        .flat_map(|spec| {
            let mut parts = spec.rsplitn(3, ':');
            let end: u32 = parts.next().unwrap().parse().unwrap();
            let start: u32 = parts.next().unwrap().parse().unwrap();
            let prefix = parts.next().unwrap().to_string();
            (start..end).map(move |i| format!("{prefix}{i}"))
        })
        .collect()
}

fn read_answers(path: &Path) -> Answers {
    let text = std::fs::read_to_string(path).expect("read the answers file");
    let mut answers = Answers::default();
    let mut phase = "";
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        if let Some(p) = line.strip_prefix("phase ") {
            phase = match p {
                "before" | "changes" | "after" => p,
                other => panic!("unknown phase {other}"),
            };
            continue;
        }
        let fields: Vec<&str> = line.split('\t').collect();
        if fields[0] == "present" {
            answers
                .present
                .push((fields[1].to_string(), expand(fields[2])));
            continue;
        }
        let kind = match fields[0] {
            "mexists" => Kind::Mexists,
            "each" => Kind::Each,
            "cmd" => Kind::Cmd,
            other => panic!("unknown step {other}"),
        };
        let step = Step {
            kind,
            cmd: fields[1].split(' ').map(str::to_string).collect(),
            items: expand(fields[2]),
            reply: fields[3].to_string(),
        };
        match phase {
            "before" => answers.before.push(step),
            "changes" => answers.changes.push(step),
            "after" => answers.after.push(step),
            _ => panic!("a step before any phase"),
        }
    }
    answers
}

/// A reply as the answers file writes it: integers (an array's space-separated), `nil`,
/// `S:string`, `E:error`.
fn text(reply: redis::RedisResult<Value>) -> String {
    match reply {
        Err(e) => format!("E:{}", error_text(&e)),
        Ok(Value::Int(n)) => n.to_string(),
        Ok(Value::Nil) => "nil".into(),
        Ok(Value::Okay) => "S:OK".into(),
        Ok(Value::SimpleString(s)) => format!("S:{s}"),
        Ok(Value::BulkString(b)) => format!("S:{}", String::from_utf8_lossy(&b)),
        Ok(Value::Array(a)) => a
            .into_iter()
            .map(|v| match v {
                Value::Int(n) => n.to_string(),
                other => panic!("an array element {other:?}"),
            })
            .collect::<Vec<_>>()
            .join(" "),
        Ok(other) => panic!("unexpected reply {other:?}"),
    }
}

/// Runs a step and compares its reply; on a difference, names the items that differ.
fn run(c: &mut Connection, when: &str, step: &Step) {
    let got = match step.kind {
        Kind::Cmd => text(cmd(&step.cmd).query(c)),
        Kind::Mexists => {
            let mut args = step.cmd.clone();
            args.extend(step.items.iter().cloned());
            text(cmd(&args).query(c))
        }
        Kind::Each => {
            let mut pipe = redis::pipe();
            for item in &step.items {
                pipe.add_command(cmd(&step.cmd)).arg(item);
            }
            let replies: Vec<i64> = pipe.query(c).expect("pipelined commands");
            replies
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(" ")
        }
    };
    if got != step.reply {
        let (g, w): (Vec<&str>, Vec<&str>) =
            (got.split(' ').collect(), step.reply.split(' ').collect());
        let differ: Vec<String> = (0..g.len().max(w.len()))
            .filter(|&i| g.get(i) != w.get(i))
            .map(|i| {
                format!(
                    "{} got {:?} want {:?}",
                    step.items.get(i).map_or("-", String::as_str),
                    g.get(i),
                    w.get(i)
                )
            })
            .collect();
        panic!(
            "{when}: {} {:?}: {} of {} replies differ, first: {:?}",
            step.cmd.join(" "),
            step.kind,
            differ.len(),
            w.len(),
            &differ[..differ.len().min(5)]
        );
    }
}

fn run_all(c: &mut Connection, when: &str, steps: &[Step]) {
    for step in steps {
        run(c, when, step);
    }
}

/// Zero false negatives: every item added and not deleted answers 1.
fn check_present(c: &mut Connection, answers: &Answers) {
    for (key, items) in answers.present.iter().filter(|(_, i)| !i.is_empty()) {
        let command = if key.starts_with("bf") {
            "BF.MEXISTS"
        } else {
            "CF.MEXISTS"
        };
        let mut args = vec![command.to_string(), key.clone()];
        args.extend(items.iter().cloned());
        let found: Vec<i64> = q(c, &args);
        let missing: Vec<&String> = items
            .iter()
            .zip(&found)
            .filter(|(_, &f)| f != 1)
            .map(|(i, _)| i)
            .collect();
        assert!(
            missing.is_empty(),
            "{key}: {} of {} items added answer 0, e.g. {:?}",
            missing.len(),
            items.len(),
            &missing[..missing.len().min(5)]
        );
    }
}

fn keys(c: &mut Connection) -> Vec<String> {
    let mut keys: Vec<String> = q(c, &["KEYS", "*"]);
    keys.sort();
    keys
}

/// Every key through DUMP, DEL and RESTORE.
fn dump_restore(c: &mut Connection) {
    for key in keys(c) {
        let payload: Vec<u8> = q(c, &["DUMP", &key]);
        q::<i64, _>(c, &["DEL", &key]);
        let ok: String = redis::cmd("RESTORE")
            .arg(&key)
            .arg(0)
            .arg(&payload)
            .query(c)
            .unwrap_or_else(|e| panic!("RESTORE {key}: {e}"));
        assert_eq!(ok, "OK");
    }
}

/// Every non-empty cuckoo filter through CF.SCANDUMP, DEL and CF.LOADCHUNK.
fn scandump_loadchunk(c: &mut Connection) {
    for key in keys(c).into_iter().filter(|k| k.starts_with("cf")) {
        let mut chunks = Vec::new();
        let mut iter = 0i64;
        loop {
            let (next, data): (i64, Option<Vec<u8>>) = redis::cmd("CF.SCANDUMP")
                .arg(&key)
                .arg(iter)
                .query(c)
                .unwrap();
            if next == 0 {
                break;
            }
            chunks.push((next, data.unwrap()));
            iter = next;
        }
        if chunks.is_empty() {
            continue; // an empty filter has no dump
        }
        q::<i64, _>(c, &["DEL", &key]);
        for (next, data) in chunks {
            let ok: String = redis::cmd("CF.LOADCHUNK")
                .arg(&key)
                .arg(next)
                .arg(data)
                .query(c)
                .unwrap_or_else(|e| panic!("CF.LOADCHUNK {key} {next}: {e}"));
            assert_eq!(ok, "OK");
        }
    }
}

fn debug_reload(c: &mut Connection) {
    assert_eq!(q::<String, _>(c, &["DEBUG", "RELOAD"]), "OK");
}

/// Loads the fixture and replays its recorded answers through every way the data can be
/// saved and loaded again. Returns the server (holding the data after the changes).
fn replay(rdb: &str, answers: &str) -> Server {
    let answers = read_answers(&fixture(answers));
    assert!(!answers.before.is_empty() && !answers.after.is_empty());
    let mut s = Server::start_from_rdb(&fixture(rdb), &[]);
    {
        let c = &mut s.conn();
        assert!(q::<i64, _>(c, &["DBSIZE"]) > 0, "{}", s.log());
        check_present(c, &answers);
        run_all(c, "loaded", &answers.before);
        debug_reload(c);
        run_all(c, "after DEBUG RELOAD", &answers.before);
        dump_restore(c);
        run_all(c, "after DUMP/RESTORE", &answers.before);
        scandump_loadchunk(c);
        run_all(c, "after SCANDUMP/LOADCHUNK", &answers.before);
        run_all(c, "changes", &answers.changes);
        run_all(c, "after the changes", &answers.after);
        debug_reload(c);
        run_all(c, "changed, after DEBUG RELOAD", &answers.after);
        dump_restore(c);
        run_all(c, "changed, after DUMP/RESTORE", &answers.after);
        // AOF rewrite through the LOADCHUNK commands, then a restart from the AOF alone.
        q::<String, _>(c, &["CONFIG", "SET", "aof-use-rdb-preamble", "no"]);
        q::<String, _>(c, &["CONFIG", "SET", "appendonly", "yes"]);
        wait_for_rewrite(c);
    }
    std::fs::remove_file(s.dir().join("dump.rdb")).expect("remove the RDB file");
    s.add_config(&["--appendonly", "yes", "--aof-use-rdb-preamble", "no"]);
    s.restart();
    let c = &mut s.conn();
    run_all(c, "changed, after AOF rewrite and restart", &answers.after);
    s
}

/// The base AOF file's bytes.
fn base_aof(s: &Server) -> Vec<u8> {
    let dir = s.dir().join("appendonlydir");
    let base = std::fs::read_dir(&dir)
        .expect("appendonlydir")
        .filter_map(Result::ok)
        .find(|e| e.file_name().to_string_lossy().contains(".base."))
        .expect("a base AOF");
    std::fs::read(base.path()).unwrap()
}

/// RedisBloom 2.0's RDB: its cuckoo filters answer as 2.0 answered.
#[test]
fn redisbloom_2_0_rdb_answers_as_redisbloom_2_0() {
    let s = replay("rb20.rdb", "rb20.answers");
    // The rewrite marked the 2.0-hashing filters for RedisBloom to refuse.
    let aof = base_aof(&s);
    let marked = aof
        .windows(b"BLOOMKIT.CF.LOADCHUNK".len())
        .filter(|w| *w == b"BLOOMKIT.CF.LOADCHUNK")
        .count();
    assert_eq!(marked, 6, "one per cuckoo filter");

    let c = &mut s.conn();
    // Its SCANDUMP header carries the hashing.
    let (_, header): (i64, Vec<u8>) = redis::cmd("CF.SCANDUMP")
        .arg("cf20:a")
        .arg(0)
        .query(c)
        .unwrap();
    assert_eq!((header.len(), header[38]), (39, 1));

    // A RedisBloom build, if given, refuses the re-saved filter instead of loading it.
    if let Some(reference) = std::env::var_os("REDISBLOOM_REFERENCE") {
        let payload: Vec<u8> = q(c, &["DUMP", "cf20:a"]);
        let r = Server::start_module(Path::new(&reference), &[], &[]);
        let rc = &mut r.conn();
        let restored = redis::cmd("RESTORE")
            .arg("k")
            .arg(0)
            .arg(&payload)
            .query::<String>(rc);
        assert!(restored.is_err(), "RedisBloom loaded a 2.0-hashing filter");
        let loaded = redis::cmd("CF.LOADCHUNK")
            .arg("k")
            .arg(1)
            .arg(&header)
            .query::<String>(rc);
        assert_eq!(
            loaded.map_err(|e| error_text(&e)),
            Err("Invalid header".to_string())
        );
    }
}

/// RedisBloom 2.2.18's RDB (encoding 4, bucket sizes 1 to 8, expansions 0 to 4): today's
/// hashing, the same answers.
#[test]
fn redisbloom_2_2_rdb_answers_as_redisbloom_2_2() {
    let s = replay("rb22.rdb", "rb22.answers");
    let aof = base_aof(&s);
    assert!(!aof.windows(b"BLOOMKIT".len()).any(|w| w == b"BLOOMKIT"));
}
