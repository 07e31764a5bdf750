//! Replication (a replica answers as its primary, LOADCHUNK included, sketches, top-k and
//! t-digests too) and Redis Cluster (three primaries, keys of all five types in different
//! slots, reached by a cluster client; a slot with one key of each type migrated to another
//! primary).

use std::time::{Duration, Instant};

use redis::Value;

use crate::harness::Server;
use crate::persistence::{read_answers, write_filters};
use crate::util::{items, q, v};

/// Runs a command through the cluster client; it must succeed.
#[track_caller]
fn cq<T: redis::FromRedisValue>(cc: &mut redis::cluster::ClusterConnection, args: &[&str]) -> T {
    match crate::util::cmd(args).query(cc) {
        Ok(v) => v,
        Err(e) => panic!("{args:?} failed: {e}"),
    }
}

#[test]
fn a_replica_answers_the_same_as_its_primary() {
    let (primary, replica) = primary_and_replica(&[]);
    let c = &mut primary.conn();
    let r = &mut replica.conn();
    write_filters(c);
    // LOADCHUNK into new keys must replicate too.
    for (scan, load, src, dst) in [
        ("BF.SCANDUMP", "BF.LOADCHUNK", "bf:scaling", "bf:loaded"),
        ("CF.SCANDUMP", "CF.LOADCHUNK", "cf:grown", "cf:loaded"),
    ] {
        let mut iter = 0i64;
        loop {
            let (next, data): (i64, Option<Vec<u8>>) =
                redis::cmd(scan).arg(src).arg(iter).query(c).unwrap();
            let Some(data) = data.filter(|d| next != 0 && !d.is_empty()) else {
                break;
            };
            let _: String = redis::cmd(load)
                .arg(dst)
                .arg(next)
                .arg(data)
                .query(c)
                .unwrap();
            iter = next;
        }
    }
    q::<i64, _>(c, &["CF.DEL", "cf:auto", "in-9"]);
    q::<String, _>(c, &["CF.COMPACT", "cf:grown"]);
    write_sketches(c);
    assert_eq!(q::<i64, _>(c, &["WAIT", "1", "5000"]), 1);
    assert_eq!(read_answers(r), read_answers(c));
    for (i, (a, b)) in read_sketches(r).iter().zip(read_sketches(c)).enumerate() {
        assert!(*a == b, "answer {i} of the replica differs");
    }
    for key in ["bf:loaded", "cf:loaded"] {
        assert_eq!(q::<i64, _>(r, &["EXISTS", key]), 1, "{key} replicated");
    }
    let mut args = vec!["BF.MEXISTS".to_string(), "bf:loaded".into()];
    args.extend(items("in-", 0..500));
    assert_eq!(v(r, &args), v(c, &args));
    let mut args = vec!["CF.MEXISTS".to_string(), "cf:loaded".into()];
    args.extend(items("in-", 0..500));
    assert_eq!(v(r, &args), v(c, &args));
    // The replica refuses writes, and readonly commands work on it.
    assert!(redis::cmd("BF.ADD")
        .arg("bf:auto")
        .arg("x")
        .query::<i64>(r)
        .is_err());
    assert_eq!(q::<i64, _>(r, &["BF.EXISTS", "bf:auto", "in-1"]), 1);
}

#[test]
fn a_cluster_client_reaches_filters_in_every_slot() {
    let config = [
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        "nodes.conf",
        "--cluster-node-timeout",
        "5000",
    ];
    let nodes: Vec<Server> = (0..3).map(|_| Server::start_with(&[], &config)).collect();
    let addresses: Vec<String> = nodes
        .iter()
        .map(|n| format!("127.0.0.1:{}", n.port))
        .collect();
    let out = std::process::Command::new("redis-cli")
        .args(["--cluster", "create"])
        .args(&addresses)
        .args(["--cluster-replicas", "0", "--cluster-yes"])
        .output()
        .expect("run redis-cli --cluster create (redis-tools)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    for node in &nodes {
        let c = &mut node.conn();
        while !q::<String, _>(c, &["CLUSTER", "INFO"]).contains("cluster_state:ok") {
            assert!(Instant::now() < deadline, "cluster did not become ok");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    let urls: Vec<String> = nodes.iter().map(Server::url).collect();
    let client = redis::cluster::ClusterClient::new(urls).unwrap();
    let mut cc = client.get_connection().unwrap();
    // Keys spread over slots, hence over the three primaries.
    let keys: Vec<String> = (0..30).map(|i| format!("filter-{i}")).collect();
    for key in &keys {
        let bf = format!("bf:{key}");
        let cf = format!("cf:{key}");
        let _: String = redis::cmd("BF.RESERVE")
            .arg(&bf)
            .arg(0.01)
            .arg(100)
            .query(&mut cc)
            .unwrap();
        let added: Vec<i64> = redis::cmd("BF.MADD")
            .arg(&bf)
            .arg("a")
            .arg("b")
            .query(&mut cc)
            .unwrap();
        assert_eq!(added, [1, 1]);
        let _: i64 = redis::cmd("CF.ADD")
            .arg(&cf)
            .arg("a")
            .query(&mut cc)
            .unwrap();
        let cms = format!("cms:{key}");
        let topk = format!("topk:{key}");
        let td = format!("td:{key}");
        cq::<String>(&mut cc, &["CMS.INITBYDIM", &cms, "100", "4"]);
        assert_eq!(
            cq::<Vec<i64>>(&mut cc, &["CMS.INCRBY", &cms, "a", "3", "b", "1"]),
            [3, 1]
        );
        cq::<String>(&mut cc, &["TOPK.RESERVE", &topk, "2"]);
        cq::<Value>(&mut cc, &["TOPK.ADD", &topk, "a", "b", "a", "c", "a"]);
        cq::<String>(&mut cc, &["TDIGEST.CREATE", &td]);
        cq::<String>(&mut cc, &["TDIGEST.ADD", &td, "1", "2", "3", "4"]);
    }
    for key in &keys {
        let there: Vec<i64> = redis::cmd("BF.MEXISTS")
            .arg(format!("bf:{key}"))
            .arg("a")
            .arg("z")
            .query(&mut cc)
            .unwrap();
        assert_eq!(there, [1, 0]);
        let count: i64 = redis::cmd("CF.COUNT")
            .arg(format!("cf:{key}"))
            .arg("a")
            .query(&mut cc)
            .unwrap();
        assert_eq!(count, 1);
        let cms = format!("cms:{key}");
        let topk = format!("topk:{key}");
        let td = format!("td:{key}");
        assert_eq!(
            cq::<Vec<i64>>(&mut cc, &["CMS.QUERY", &cms, "a", "b", "z"]),
            [3, 1, 0]
        );
        assert_eq!(
            cq::<Vec<i64>>(&mut cc, &["TOPK.QUERY", &topk, "a", "z"]),
            [1, 0]
        );
        assert_eq!(cq::<Vec<String>>(&mut cc, &["TOPK.LIST", &topk])[0], "a");
        assert_eq!(
            cq::<Vec<String>>(&mut cc, &["TDIGEST.QUANTILE", &td, "0", "1"]),
            ["1", "4"]
        );
        assert_eq!(
            cq::<Vec<String>>(&mut cc, &["TDIGEST.CDF", &td, "0", "10"]),
            ["0", "1"]
        );
    }
    // Every primary holds some of the filters.
    for node in &nodes {
        let size: i64 = q(&mut node.conn(), &["DBSIZE"]);
        assert!(size > 0, "node {} holds no key", node.port);
    }
    let total: i64 = nodes
        .iter()
        .map(|n| q::<i64, _>(&mut n.conn(), &["DBSIZE"]))
        .sum();
    assert_eq!(total, 150);
    // Merges of keys in one slot (hash tags) work on whichever primary holds it.
    cq::<String>(&mut cc, &["CMS.INITBYDIM", "{m}cms:a", "100", "4"]);
    cq::<String>(&mut cc, &["CMS.INITBYDIM", "{m}cms:b", "100", "4"]);
    cq::<Value>(&mut cc, &["CMS.INCRBY", "{m}cms:a", "x", "5"]);
    cq::<Value>(&mut cc, &["CMS.INCRBY", "{m}cms:b", "x", "2"]);
    cq::<String>(
        &mut cc,
        &["CMS.MERGE", "{m}cms:b", "2", "{m}cms:a", "{m}cms:b"],
    );
    assert_eq!(
        cq::<Vec<i64>>(&mut cc, &["CMS.QUERY", "{m}cms:b", "x"]),
        [7]
    );
    cq::<String>(&mut cc, &["TDIGEST.CREATE", "{m}td:a"]);
    cq::<String>(&mut cc, &["TDIGEST.ADD", "{m}td:a", "10", "20"]);
    cq::<String>(&mut cc, &["TDIGEST.MERGE", "{m}td:b", "1", "{m}td:a"]);
    assert_eq!(cq::<String>(&mut cc, &["TDIGEST.MAX", "{m}td:b"]), "20");
    // As RedisBloom registers them, the merges declare the destination alone as a key, so
    // the cluster routes them by it and cannot refuse sources of other slots: those must
    // share its slot, by a hash tag.
    for merge in ["CMS.MERGE", "TDIGEST.MERGE"] {
        let keys: Vec<String> = q(
            &mut nodes[0].conn(),
            &["COMMAND", "GETKEYS", merge, "d", "2", "a", "b"],
        );
        assert_eq!(keys, ["d"], "{merge}");
    }
    // Migrate the slot of `{m}` (one key of each type) to another primary, as
    // `redis-cli --cluster reshard` does: the keys travel as DUMP/RESTORE payloads.
    cq::<String>(&mut cc, &["BF.RESERVE", "{m}bf", "0.01", "100"]);
    cq::<Value>(&mut cc, &["BF.MADD", "{m}bf", "a", "b"]);
    cq::<i64>(&mut cc, &["CF.ADD", "{m}cf", "a"]);
    cq::<String>(&mut cc, &["TOPK.RESERVE", "{m}topk", "2"]);
    cq::<Value>(&mut cc, &["TOPK.ADD", "{m}topk", "a", "a", "b"]);
    let mut before = Vec::new();
    let reads: [&[&str]; 6] = [
        &["BF.MEXISTS", "{m}bf", "a", "b", "z"],
        &["CF.COUNT", "{m}cf", "a"],
        &["CMS.QUERY", "{m}cms:b", "x", "z"],
        &["TOPK.LIST", "{m}topk", "WITHCOUNT"],
        &["TDIGEST.QUANTILE", "{m}td:b", "0", "0.5", "1"],
        &["TDIGEST.INFO", "{m}td:a"],
    ];
    for args in reads {
        before.push(cq::<Value>(&mut cc, args));
    }
    let slot: i64 = q(&mut nodes[0].conn(), &["CLUSTER", "KEYSLOT", "{m}"]);
    let ids: Vec<String> = nodes
        .iter()
        .map(|n| q(&mut n.conn(), &["CLUSTER", "MYID"]))
        .collect();
    let from = (0..3)
        .find(|&i| {
            q::<i64, _>(
                &mut nodes[i].conn(),
                &["CLUSTER", "COUNTKEYSINSLOT", &slot.to_string()],
            ) > 0
        })
        .expect("a primary holds the slot");
    let to = (from + 1) % 3;
    let slot = slot.to_string();
    let (src, dst) = (&mut nodes[from].conn(), &mut nodes[to].conn());
    q::<String, _>(dst, &["CLUSTER", "SETSLOT", &slot, "IMPORTING", &ids[from]]);
    q::<String, _>(src, &["CLUSTER", "SETSLOT", &slot, "MIGRATING", &ids[to]]);
    let keys: Vec<String> = q(src, &["CLUSTER", "GETKEYSINSLOT", &slot, "100"]);
    assert_eq!(keys.len(), 7, "{keys:?}");
    let mut args = vec![
        "MIGRATE".to_string(),
        "127.0.0.1".into(),
        nodes[to].port.to_string(),
    ];
    args.extend(["".into(), "0".into(), "5000".into(), "KEYS".into()]);
    args.extend(keys);
    q::<String, _>(src, &args);
    for node in &nodes {
        q::<String, _>(
            &mut node.conn(),
            &["CLUSTER", "SETSLOT", &slot, "NODE", &ids[to]],
        );
    }
    assert_eq!(q::<i64, _>(src, &["CLUSTER", "COUNTKEYSINSLOT", &slot]), 0);
    assert_eq!(q::<i64, _>(dst, &["CLUSTER", "COUNTKEYSINSLOT", &slot]), 7);
    // The client follows the MOVED redirection; the keys answer as before and take writes.
    let mut after = Vec::new();
    for args in reads {
        after.push(cq::<Value>(&mut cc, args));
    }
    assert_eq!(after, before);
    assert_eq!(
        cq::<Vec<i64>>(&mut cc, &["CMS.INCRBY", "{m}cms:b", "x", "1"]),
        [8]
    );
    cq::<String>(&mut cc, &["TDIGEST.ADD", "{m}td:b", "30"]);
    assert_eq!(cq::<String>(&mut cc, &["TDIGEST.MAX", "{m}td:b"]), "30");
    assert_eq!(cq::<i64>(&mut cc, &["BF.ADD", "{m}bf", "c"]), 1);
    let info: Value = redis::cmd("BF.INFO")
        .arg("bf:filter-0")
        .arg("ITEMS")
        .query(&mut cc)
        .unwrap();
    assert_eq!(info, Value::Array(vec![Value::Int(2)]));
}

/// A primary (with these config directives) and its replica, once the replica has
/// finished its first sync.
fn primary_and_replica(config: &[&str]) -> (Server, Server) {
    let primary = Server::start_with(&[], config);
    let port = primary.port.to_string();
    let replica = Server::start_with(&[], &["--replicaof", "127.0.0.1", &port]);
    let r = &mut replica.conn();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !q::<String, _>(r, &["INFO", "replication"]).contains("master_link_status:up") {
        assert!(Instant::now() < deadline, "replica did not connect");
        std::thread::sleep(Duration::from_millis(20));
    }
    (primary, replica)
}

/// A top-k of 3 × 8 buckets fed 40 items: almost every add meets another item's bucket and
/// draws from `rand()` for the decay.
fn write_a_decaying_top_k(c: &mut redis::Connection) {
    q::<String, _>(c, &["TOPK.RESERVE", "topk:decay", "3", "8", "3", "0.9"]);
    let mut pipe = redis::pipe();
    for i in 0..1_500u32 {
        let (a, b) = (format!("x{}", (i * 7919) % 31), format!("y{}", i % 9));
        pipe.cmd("TOPK.ADD")
            .arg("topk:decay")
            .arg(a)
            .arg(b)
            .ignore();
        if i % 5 == 0 {
            let z = format!("z{}", i % 17);
            pipe.cmd("TOPK.INCRBY")
                .arg("topk:decay")
                .arg(z)
                .arg(3)
                .arg("w")
                .arg(2);
            pipe.ignore();
        }
    }
    pipe.query::<()>(c).unwrap();
}

/// The top-k's bytes (`DUMP`) and its list with counts.
fn top_k_state(c: &mut redis::Connection) -> (Vec<u8>, Value) {
    let dump: Vec<u8> = q(c, &["DUMP", "topk:decay"]);
    (dump, v(c, &["TOPK.LIST", "topk:decay", "WITHCOUNT"]))
}

/// RedisBloom replicates a top-k add as it was called, and the replica's own `rand()` then
/// decays other buckets; this module sends the master's draws (`bloomkit.topk.replay`), so
/// the replica, and the primary replaying its AOF after a restart, hold the same bytes.
#[test]
fn a_replica_and_the_aof_hold_the_primarys_top_k_when_its_decay_draws() {
    // Every write in the AOF file before the reply (everysec may hold writes back).
    let aof = ["--appendonly", "yes", "--appendfsync", "always"];
    let (mut primary, replica) = primary_and_replica(&aof);
    let r = &mut replica.conn();
    let before = {
        let c = &mut primary.conn();
        write_a_decaying_top_k(c);
        assert_eq!(q::<i64, _>(c, &["WAIT", "1", "5000"]), 1);
        top_k_state(c)
    };
    assert!(before.0.len() > 100, "a top-k was written");
    assert_eq!(top_k_state(r), before, "the replica's top-k");
    let aof: Vec<u8> = std::fs::read_dir(primary.dir().join("appendonlydir"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains(".incr.aof"))
        .flat_map(|p| std::fs::read(p).unwrap())
        .collect();
    let replays = aof
        .windows(20)
        .filter(|w| w == b"bloomkit.topk.replay")
        .count();
    assert!(replays > 100, "adds that drew are replayed: {replays}");
    primary.restart();
    let c = &mut primary.conn();
    assert_eq!(top_k_state(c), before, "after the AOF is replayed");
}

/// Without an AOF the primary keeps the draws only once a replica attaches (the backlog
/// Redis then keeps, seen at the snapshot's fork): the replica still holds its bytes, and a
/// lone server replicates as RedisBloom does (nothing to keep the draws for).
#[test]
fn a_replica_of_a_primary_without_an_aof_holds_its_top_k_when_its_decay_draws() {
    let (primary, replica) = primary_and_replica(&[]);
    let r = &mut replica.conn();
    let c = &mut primary.conn();
    write_a_decaying_top_k(c);
    assert_eq!(q::<i64, _>(c, &["WAIT", "1", "5000"]), 1);
    assert_eq!(top_k_state(r), top_k_state(c), "the replica's top-k");
}

/// A write that the primary runs right after the fork of a full synchronisation's snapshot,
/// before its cron runs again, still reaches the replica with the primary's draws: the
/// replica replays every command after the snapshot, so the primary looks for its new
/// backlog at the fork itself (the server event of the child's birth). The replica here is
/// the test, which reads the stream: while the server sleeps (`DEBUG SLEEP`) it sends the
/// replica's `PSYNC`, then a `TOPK.ADD` that draws, so that the server reads both in one
/// turn of its event loop — the add after the fork, and before any cron. (The cron's read,
/// ten times a second, finds the backlog too, but later: the other replication tests give
/// it that time, and stayed green with the check of the fork event inverted.)
#[test]
fn a_write_right_after_the_fork_of_a_full_sync_is_replicated_with_its_draws() {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpStream;
    let primary = Server::start();
    let c = &mut primary.conn();
    // One bucket, held by "a": an add of "b" meets it and draws for the decay.
    q::<String, _>(c, &["TOPK.RESERVE", "topk:fork", "1", "1", "1", "0.9"]);
    q::<Value, _>(c, &["TOPK.ADD", "topk:fork", "a"]);
    let line = |from: &mut BufReader<TcpStream>| {
        let mut line = String::new();
        from.read_line(&mut line).expect("a line from the primary");
        line
    };
    let connect = || {
        let mut stream = TcpStream::connect(("127.0.0.1", primary.port)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        // Answered: the server has taken the connection (and follows its reads).
        stream.write_all(b"PING\r\n").unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        assert_eq!(line(&mut reader), "+PONG\r\n");
        (stream, reader)
    };
    let (mut sleeper, mut sleeper_reads) = connect();
    let (mut replica, mut stream) = connect();
    let (mut writer, _) = connect();
    sleeper.write_all(b"DEBUG SLEEP 1\r\n").unwrap();
    std::thread::sleep(Duration::from_millis(300));
    replica.write_all(b"PSYNC ? -1\r\n").unwrap();
    std::thread::sleep(Duration::from_millis(50));
    writer.write_all(b"TOPK.ADD topk:fork b\r\n").unwrap();
    assert_eq!(line(&mut sleeper_reads), "+OK\r\n");

    // A full resynchronisation: the snapshot (after newlines while it is taken), then the
    // commands run since the fork.
    let reply = line(&mut stream);
    assert!(reply.starts_with("+FULLRESYNC "), "{reply:?}");
    let length = loop {
        match line(&mut stream) {
            newline if newline == "\n" => continue,
            header => break header[1..].trim_end().parse::<usize>().expect(&header),
        }
    };
    stream.read_exact(&mut vec![0; length]).unwrap();
    let mut command = || {
        let count: usize = line(&mut stream)[1..].trim_end().parse().unwrap();
        (0..count)
            .map(|_| {
                let length: usize = line(&mut stream)[1..].trim_end().parse().unwrap();
                let mut arg = vec![0; length + 2];
                stream.read_exact(&mut arg).unwrap();
                arg.truncate(length);
                String::from_utf8_lossy(&arg).into_owned()
            })
            .collect::<Vec<_>>()
    };
    let add = loop {
        let next = command();
        if !["SELECT", "MULTI", "PING"].contains(&next[0].to_uppercase().as_str()) {
            break next;
        }
    };
    assert_eq!(add[0], "bloomkit.topk.replay", "{add:?}");
    assert_eq!(add[1], "topk:fork", "{add:?}");
}

/// Count-min sketches, top-k lists and t-digests built by each of their write commands.
fn write_sketches(c: &mut redis::Connection) {
    q::<String, _>(c, &["CMS.INITBYDIM", "cms:a", "200", "5"]);
    q::<String, _>(c, &["CMS.INITBYPROB", "cms:b", "0.01", "0.01"]);
    q::<String, _>(c, &["CMS.INITBYDIM", "cms:m", "200", "5"]);
    for i in 0..200 {
        let item = format!("in-{}", i % 37);
        q::<Value, _>(c, &["CMS.INCRBY", "cms:a", &item, "3", "in-0", "1"]);
    }
    q::<String, _>(c, &["CMS.MERGE", "cms:m", "1", "cms:a", "WEIGHTS", "2"]);
    q::<String, _>(c, &["TOPK.RESERVE", "topk:a", "5", "1000", "4", "0.9"]);
    for i in 0..300 {
        let item = format!("in-{}", (i * i) % 23);
        q::<Value, _>(c, &["TOPK.ADD", "topk:a", &item]);
    }
    q::<Value, _>(c, &["TOPK.INCRBY", "topk:a", "heavy", "40"]);
    q::<String, _>(c, &["TDIGEST.CREATE", "td:a", "COMPRESSION", "50"]);
    q::<String, _>(c, &["TDIGEST.CREATE", "td:b"]);
    let values: Vec<String> = (0..500).map(|i| ((i * 7919) % 1000).to_string()).collect();
    let mut args = vec!["TDIGEST.ADD".to_string(), "td:a".into()];
    args.extend(values);
    q::<String, _>(c, &args);
    q::<String, _>(c, &["TDIGEST.ADD", "td:b", "-5", "2.5"]);
    q::<String, _>(c, &["TDIGEST.MERGE", "td:m", "2", "td:a", "td:b"]);
    q::<String, _>(c, &["TDIGEST.RESET", "td:b"]);
}

/// What the keys of `write_sketches` answer.
fn read_sketches(c: &mut redis::Connection) -> Vec<Value> {
    let mut out = Vec::new();
    for key in ["cms:a", "cms:b", "cms:m"] {
        let mut args = vec!["CMS.QUERY".to_string(), key.to_string()];
        args.extend(items("in-", 0..40));
        out.push(v(c, &args));
        out.push(v(c, &["CMS.INFO", key]));
    }
    out.push(v(c, &["TOPK.LIST", "topk:a", "WITHCOUNT"]));
    out.push(v(c, &["TOPK.INFO", "topk:a"]));
    let mut args = vec!["TOPK.COUNT".to_string(), "topk:a".into()];
    args.extend(items("in-", 0..23));
    out.push(v(c, &args));
    for key in ["td:a", "td:b", "td:m"] {
        out.push(v(c, &["TDIGEST.INFO", key]));
        out.push(v(
            c,
            &["TDIGEST.QUANTILE", key, "0", "0.1", "0.5", "0.99", "1"],
        ));
        out.push(v(c, &["TDIGEST.CDF", key, "-5", "100", "500", "999"]));
        out.push(v(c, &["TDIGEST.TRIMMED_MEAN", key, "0.1", "0.9"]));
    }
    // Not the top-k's DUMP: its decay draws from each server's own `rand()` (as
    // RedisBloom's does, and it too replicates TOPK.ADD as sent), so colliding items may
    // leave different counters behind on the replica.
    for key in ["cms:a", "cms:m", "td:a", "td:m"] {
        out.push(v(c, &["DUMP", key]));
    }
    out
}

/// `DEBUG DIGEST-VALUE` of a key (40 hex digits).
fn value_digest(c: &mut redis::Connection, key: &str) -> String {
    let digests: Vec<String> = q(c, &["DEBUG", "DIGEST-VALUE", key]);
    digests.into_iter().next().expect("one digest per key")
}

/// Replaces the placeholder `K` in a command with `key`.
fn on_key(args: &[&str], key: &str) -> Vec<String> {
    args.iter()
        .map(|a| if *a == "K" { key } else { a }.to_string())
        .collect()
}

#[test]
fn debug_digest_tells_values_of_every_type_apart_and_a_replica_matches_its_primary() {
    let (primary, replica) = primary_and_replica(&[]);
    let c = &mut primary.conn();
    let r = &mut replica.conn();
    // Per type: how a key is made, two adds that make two keys differ, and a later change.
    type Case<'a> = (&'a str, &'a [&'a str], [&'a [&'a str]; 2], &'a [&'a str]);
    let cases: [Case; 5] = [
        (
            "bf",
            &["BF.RESERVE", "K", "0.01", "1000"],
            [&["BF.ADD", "K", "a"], &["BF.ADD", "K", "b"]],
            &["BF.ADD", "K", "c"],
        ),
        (
            "cf",
            &["CF.RESERVE", "K", "1000"],
            [&["CF.ADD", "K", "a"], &["CF.ADD", "K", "b"]],
            &["CF.ADD", "K", "c"],
        ),
        (
            "cms",
            &["CMS.INITBYDIM", "K", "100", "4"],
            [
                &["CMS.INCRBY", "K", "a", "1"],
                &["CMS.INCRBY", "K", "b", "1"],
            ],
            &["CMS.INCRBY", "K", "a", "1"],
        ),
        (
            "topk",
            &["TOPK.RESERVE", "K", "5"],
            [&["TOPK.ADD", "K", "a"], &["TOPK.ADD", "K", "b"]],
            &["TOPK.ADD", "K", "c"],
        ),
        (
            "td",
            &["TDIGEST.CREATE", "K"],
            [
                &["TDIGEST.ADD", "K", "1.5", "1"],
                &["TDIGEST.ADD", "K", "2.5", "1"],
            ],
            &["TDIGEST.ADD", "K", "7", "1"],
        ),
    ];
    for (ty, create, adds, _) in cases {
        for (i, add) in adds.into_iter().enumerate() {
            let key = format!("{ty}:{i}");
            q::<Value, _>(c, &on_key(create, &key));
            q::<Value, _>(c, &on_key(add, &key));
        }
    }
    // Before anything compresses a t-digest on the primary alone (a query or a DUMP does,
    // as in RedisBloom, and its replicas then hold other centroids: the README says so).
    assert_eq!(q::<i64, _>(c, &["WAIT", "1", "5000"]), 1);
    let (p, rd): (String, String) = (q(c, &["DEBUG", "DIGEST"]), q(r, &["DEBUG", "DIGEST"]));
    assert_eq!(
        p, rd,
        "the replica's keys digest otherwise than the primary's"
    );
    for (ty, ..) in cases {
        let key = format!("{ty}:0");
        assert_eq!(
            value_digest(r, &key),
            value_digest(c, &key),
            "{ty} on the replica"
        );
    }

    for (ty, _, _, change) in cases {
        let (k0, k1) = (format!("{ty}:0"), format!("{ty}:1"));
        // DEBUG DIGEST leaves a t-digest as it was (its points unmerged).
        let info = (ty == "td").then(|| q::<Value, _>(c, &["TDIGEST.INFO", &k0]));
        let (d0, d1) = (value_digest(c, &k0), value_digest(c, &k1));
        assert_ne!(d0, "0".repeat(40), "{ty}: a value digests as nothing");
        assert_ne!(d0, d1, "{ty}: values holding other items digest alike");
        if let Some(info) = info {
            let after = q::<Value, _>(c, &["TDIGEST.INFO", &k0]);
            assert_eq!(after, info, "DEBUG DIGEST changed a t-digest");
        }
        // A RESTOREd copy digests as its source.
        let dump: Vec<u8> = redis::cmd("DUMP").arg(&k0).query(c).unwrap();
        let copy = format!("{ty}:copy");
        redis::cmd("RESTORE")
            .arg(&copy)
            .arg(0)
            .arg(dump)
            .query::<()>(c)
            .unwrap();
        assert_eq!(
            value_digest(c, &copy),
            d0,
            "{ty}: a RESTOREd copy digests otherwise"
        );
        q::<Value, _>(c, &on_key(change, &k0));
        assert_ne!(
            value_digest(c, &k0),
            d0,
            "{ty}: a changed value digests as before"
        );
    }
}
