//! Replication (a replica answers as its primary, LOADCHUNK included) and Redis Cluster
//! (three primaries, filters on keys in different slots, reached by a cluster client).

use std::time::{Duration, Instant};

use redis::Value;

use crate::harness::Server;
use crate::persistence::{read_answers, write_filters};
use crate::util::{items, q, v};

#[test]
fn a_replica_answers_the_same_as_its_primary() {
    let primary = Server::start();
    let port = primary.port.to_string();
    let replica = Server::start_with(&[], &["--replicaof", "127.0.0.1", &port]);
    let c = &mut primary.conn();
    let r = &mut replica.conn();
    // Wait for the initial sync.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !q::<String, _>(r, &["INFO", "replication"]).contains("master_link_status:up") {
        assert!(Instant::now() < deadline, "replica did not connect");
        std::thread::sleep(Duration::from_millis(20));
    }
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
    assert_eq!(q::<i64, _>(c, &["WAIT", "1", "5000"]), 1);
    assert_eq!(read_answers(r), read_answers(c));
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
    assert_eq!(total, 60);
    let info: Value = redis::cmd("BF.INFO")
        .arg("bf:filter-0")
        .arg("ITEMS")
        .query(&mut cc)
        .unwrap();
    assert_eq!(info, Value::Array(vec![Value::Int(2)]));
}
