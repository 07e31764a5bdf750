//! Persistence: RDB (SAVE, restart), AOF (appendonly, BGREWRITEAOF through LOADCHUNK,
//! restart): every answer the same afterwards.

use redis::{Connection, Value};

use crate::harness::Server;
use crate::util::{items, q, v};

/// Filters of every shape, and a function that reads every answer they give.
pub fn write_filters(c: &mut Connection) {
    q::<String, _>(
        c,
        &["BF.RESERVE", "bf:scaling", "0.01", "50", "EXPANSION", "3"],
    );
    q::<String, _>(
        c,
        &["BF.RESERVE", "bf:fixed", "0.001", "1000", "NONSCALING"],
    );
    for key in ["bf:scaling", "bf:fixed", "bf:auto"] {
        let mut args = vec!["BF.MADD".to_string(), key.to_string()];
        args.extend(items("in-", 0..500));
        q::<Value, _>(c, &args);
    }
    q::<String, _>(
        c,
        &[
            "CF.RESERVE",
            "cf:grown",
            "64",
            "BUCKETSIZE",
            "4",
            "EXPANSION",
            "2",
        ],
    );
    q::<String, _>(c, &["CF.RESERVE", "cf:empty", "1000", "MAXITERATIONS", "7"]);
    for key in ["cf:grown", "cf:auto"] {
        let mut args = vec!["CF.INSERT".to_string(), key.to_string(), "ITEMS".into()];
        args.extend(items("in-", 0..500));
        q::<Value, _>(c, &args);
        q::<i64, _>(c, &["CF.DEL", key, "in-7"]);
    }
}

/// The keys [`write_filters`] makes.
pub const KEYS: usize = 6;

/// Every answer: membership of inserted and absent items, INFO, the whole dump.
pub fn read_answers(c: &mut Connection) -> Vec<Value> {
    let mut out = Vec::new();
    for key in ["bf:scaling", "bf:fixed", "bf:auto"] {
        let mut args = vec!["BF.MEXISTS".to_string(), key.to_string()];
        args.extend(items("in-", 0..500));
        args.extend(items("out-", 0..500));
        out.push(v(c, &args));
        out.push(v(c, &["BF.INFO", key]));
        out.push(v(c, &["BF.DEBUG", key]));
        let mut iter = 0i64;
        loop {
            let (next, data): (i64, Value) = redis::cmd("BF.SCANDUMP")
                .arg(key)
                .arg(iter)
                .query(c)
                .unwrap();
            out.push(data);
            if next == 0 {
                break;
            }
            iter = next;
        }
    }
    for key in ["cf:grown", "cf:empty", "cf:auto"] {
        let mut args = vec!["CF.MEXISTS".to_string(), key.to_string()];
        args.extend(items("in-", 0..500));
        args.extend(items("out-", 0..500));
        out.push(v(c, &args));
        out.push(v(c, &["CF.COUNT", key, "in-1"]));
        out.push(v(c, &["CF.INFO", key]));
        out.push(v(c, &["CF.DEBUG", key]));
        let mut iter = 0i64;
        loop {
            let (next, data): (i64, Value) = redis::cmd("CF.SCANDUMP")
                .arg(key)
                .arg(iter)
                .query(c)
                .unwrap();
            out.push(data);
            if next == 0 {
                break;
            }
            iter = next;
        }
    }
    out
}

#[test]
fn rdb_save_and_restart_keep_every_answer() {
    let mut s = Server::start();
    let before = {
        let c = &mut s.conn();
        write_filters(c);
        assert_eq!(q::<String, _>(c, &["SAVE"]), "OK");
        read_answers(c)
    };
    s.restart();
    let c = &mut s.conn();
    assert_eq!(q::<i64, _>(c, &["DBSIZE"]), KEYS as i64, "{}", s.log());
    assert_eq!(read_answers(c), before);
}

/// Waits until no AOF rewrite runs or is scheduled.
pub fn wait_for_rewrite(c: &mut Connection) {
    for _ in 0..500 {
        let info: String = q(c, &["INFO", "persistence"]);
        if info.contains("aof_rewrite_in_progress:0") && info.contains("aof_rewrite_scheduled:0") {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    panic!("BGREWRITEAOF did not finish");
}

#[test]
fn aof_rewrite_emits_loadchunk_and_restart_keeps_every_answer() {
    let mut s = Server::start_with(
        &[],
        &["--appendonly", "yes", "--aof-use-rdb-preamble", "no"],
    );
    let before = {
        let c = &mut s.conn();
        write_filters(c);
        q::<String, _>(c, &["BGREWRITEAOF"]);
        wait_for_rewrite(c);
        // Written after the rewrite: lands in the incremental AOF as BF.ADD.
        q::<i64, _>(c, &["BF.ADD", "bf:auto", "after-rewrite"]);
        read_answers(c)
    };
    let base: String = std::fs::read_dir(s.dir().join("appendonlydir"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains(".base.aof"))
        .map(|p| String::from_utf8_lossy(&std::fs::read(p).unwrap()).into_owned())
        .collect();
    assert!(
        base.contains("BF.LOADCHUNK"),
        "the rewritten AOF loads filters by LOADCHUNK"
    );
    s.restart();
    let c = &mut s.conn();
    assert_eq!(read_answers(c), before, "{}", s.log());
    assert_eq!(
        q::<i64, _>(c, &["BF.EXISTS", "bf:auto", "after-rewrite"]),
        1
    );
}
