//! Reply-for-reply parity with RedisBloom 2.4 where its rules are not the obvious ones:
//! where keywords are looked for, which of a repeated option counts, the order of checks,
//! which errors end a reply array, how keys of another type read, the growth limit of
//! cuckoo filters. Each expected reply here is what RedisBloom 2.4 answers (checked against
//! a build of it side by side); the one exception, a RESERVE keyword in last place, is
//! marked where it is tested.

use redis::{Connection, Value};

use crate::harness::Server;
use crate::util::{err, items, q, raw_reply, v};

/// `BF.INFO key` as (label, value) pairs.
fn bf_info(c: &mut Connection, key: &str) -> Vec<(String, Value)> {
    let flat: Vec<Value> = q(c, &["BF.INFO", key]);
    flat.chunks(2)
        .map(|p| match &p[0] {
            Value::SimpleString(s) => (s.clone(), p[1].clone()),
            other => panic!("label {other:?}"),
        })
        .collect()
}

fn bf_expansion(c: &mut Connection, key: &str) -> Value {
    bf_info(c, key).pop().expect("Expansion rate").1
}

/// `CF.INFO key`'s "Number of filters".
fn cf_filters(c: &mut Connection, key: &str) -> i64 {
    let info: Vec<Value> = q(c, &["CF.INFO", key]);
    match info[5] {
        Value::Int(n) => n,
        ref other => panic!("{other:?}"),
    }
}

#[test]
fn reserve_keywords_are_looked_for_from_the_command_name_on() {
    let s = Server::start();
    let c = &mut s.conn();
    // A key spelled NONSCALING makes the filter non-scaling.
    q::<String, _>(c, &["BF.RESERVE", "NONSCALING", "0.01", "100"]);
    assert_eq!(bf_expansion(c, "NONSCALING"), Value::Nil);
    // A key spelled EXPANSION takes the error rate as the expansion's value.
    assert_eq!(
        err(c, &["BF.RESERVE", "EXPANSION", "0.01", "100"]),
        "ERR bad expansion"
    );
    // CF.RESERVE: the capacity after a key spelled like an option is that option's value.
    assert_eq!(
        err(c, &["CF.RESERVE", "BUCKETSIZE", "1000"]),
        "BUCKETSIZE: value must be an integer between 1 and 255, inclusive."
    );
    q::<String, _>(c, &["CF.RESERVE", "MAXITERATIONS", "100"]);
    assert_eq!(
        q::<String, _>(c, &["CF.DEBUG", "MAXITERATIONS"]),
        "bktsize:2 buckets:64 items:0 deletes:0 filters:1 max_iterations:100 expansion:1"
    );
    q::<String, _>(c, &["CF.RESERVE", "EXPANSION", "100"]);
    assert_eq!(
        q::<String, _>(c, &["CF.DEBUG", "EXPANSION"]),
        "bktsize:2 buckets:64 items:0 deletes:0 filters:1 max_iterations:20 expansion:128"
    );
}

#[test]
fn reserve_ignores_unknown_arguments_and_takes_a_repeated_option_once() {
    let s = Server::start();
    let c = &mut s.conn();
    q::<String, _>(c, &["BF.RESERVE", "b", "0.01", "100", "colour", "red"]);
    assert_eq!(bf_expansion(c, "b"), Value::Int(2));
    // At most 7 arguments.
    assert_eq!(
        err(c, &["BF.RESERVE", "b2", "0.01", "100", "a", "b", "c", "d"]),
        "ERR wrong number of arguments for 'bf.reserve' command"
    );
    q::<String, _>(c, &["CF.RESERVE", "c", "100", "colour", "red"]);
    q::<String, _>(
        c,
        &[
            "CF.RESERVE",
            "c2",
            "100",
            "BUCKETSIZE",
            "4",
            "BUCKETSIZE",
            "8",
        ],
    );
    assert_eq!(
        q::<String, _>(c, &["CF.DEBUG", "c2"]),
        "bktsize:4 buckets:32 items:0 deletes:0 filters:1 max_iterations:20 expansion:1"
    );
}

#[test]
fn reserve_checks_its_arguments_in_redisbloom_order() {
    let s = Server::start();
    let c = &mut s.conn();
    for (args, want) in [
        // The rate's range comes before the capacity is read.
        (
            &["BF.RESERVE", "k", "2", "y"][..],
            "ERR (0 < error rate range < 1) ",
        ),
        // "no expansion" first, then NONSCALING, then the expansion's value.
        (
            &["BF.RESERVE", "k", "0.01", "100", "NONSCALING", "EXPANSION"],
            "ERR no expansion",
        ),
        (
            &[
                "BF.RESERVE",
                "k",
                "0.01",
                "100",
                "EXPANSION",
                "x",
                "NONSCALING",
            ],
            "Nonscaling filters cannot expand",
        ),
        // CF: MAXITERATIONS, then BUCKETSIZE, then EXPANSION, then the capacity's minimum.
        (
            &[
                "CF.RESERVE",
                "k",
                "100",
                "BUCKETSIZE",
                "0",
                "MAXITERATIONS",
                "0",
            ],
            "MAXITERATIONS: value must be an integer between 1 and 65535, inclusive.",
        ),
        (
            &[
                "CF.RESERVE",
                "k",
                "100",
                "EXPANSION",
                "-1",
                "BUCKETSIZE",
                "0",
            ],
            "BUCKETSIZE: value must be an integer between 1 and 255, inclusive.",
        ),
        (
            &[
                "CF.RESERVE",
                "k",
                "100",
                "EXPANSION",
                "x",
                "MAXITERATIONS",
                "y",
            ],
            "Couldn't parse MAXITERATIONS",
        ),
        (
            &["CF.RESERVE", "k", "3", "BUCKETSIZE", "0"],
            "BUCKETSIZE: value must be an integer between 1 and 255, inclusive.",
        ),
        (
            &["CF.RESERVE", "k", "3", "EXPANSION", "40000"],
            "EXPANSION: value must be an integer between 0 and 32768, inclusive.",
        ),
    ] {
        assert_eq!(err(c, args), want, "{args:?}");
    }
    assert_eq!(q::<i64, _>(c, &["EXISTS", "k"]), 0);
}

#[test]
fn a_reserve_keyword_in_last_place_has_no_value() {
    // RedisBloom reads past its arguments here (and the server dies); we answer that the
    // value cannot be parsed. The one deliberate difference in this file.
    let s = Server::start();
    let c = &mut s.conn();
    assert_eq!(
        err(c, &["CF.RESERVE", "k", "100", "x", "MAXITERATIONS"]),
        "Couldn't parse MAXITERATIONS"
    );
    assert_eq!(q::<String, _>(c, &["PING"]), "PONG");
}

#[test]
fn bf_reserve_keeps_any_expansion_as_a_32_bit_unsigned() {
    let s = Server::start();
    let c = &mut s.conn();
    q::<String, _>(c, &["BF.RESERVE", "neg", "0.01", "100", "EXPANSION", "-1"]);
    assert_eq!(bf_expansion(c, "neg"), Value::Int(4294967295));
    q::<String, _>(
        c,
        &["BF.RESERVE", "big", "0.01", "2", "EXPANSION", "4294967298"],
    );
    assert_eq!(bf_expansion(c, "big"), Value::Int(2));
    // EXPANSION 0: the filter never grows; adds past its capacity answer 1, store nothing.
    q::<String, _>(c, &["BF.RESERVE", "zero", "0.01", "2", "EXPANSION", "0"]);
    assert_eq!(bf_expansion(c, "zero"), Value::Int(0));
    assert_eq!(
        q::<Vec<i64>, _>(c, &["BF.MADD", "zero", "a", "b", "c", "d"]),
        [1, 1, 1, 1]
    );
    assert_eq!(q::<i64, _>(c, &["BF.ADD", "zero", "e"]), 1);
    assert_eq!(q::<i64, _>(c, &["BF.CARD", "zero"]), 2);
    assert_eq!(
        q::<Vec<i64>, _>(c, &["BF.MEXISTS", "zero", "a", "b", "c", "d", "e"]),
        [1, 1, 0, 0, 0]
    );
    // BF.INSERT checks EXPANSION ≥ 1 first, then keeps it modulo 2³² as well.
    q::<Vec<i64>, _>(
        c,
        &["BF.INSERT", "wrap", "EXPANSION", "4294967296", "ITEMS", "a"],
    );
    assert_eq!(bf_expansion(c, "wrap"), Value::Int(0));
}

#[test]
fn a_full_nonscaling_filter_ends_the_reply_array_at_its_first_error() {
    let s = Server::start();
    let c = &mut s.conn();
    q::<String, _>(c, &["BF.RESERVE", "ns", "0.01", "2", "NONSCALING"]);
    assert_eq!(
        raw_reply(s.port, &[b"BF.MADD", b"ns", b"a", b"b", b"c", b"d", b"e"]),
        "*3\r\n:1\r\n:1\r\n-ERR non scaling filter is full\r\n"
    );
    assert_eq!(
        raw_reply(s.port, &[b"BF.INSERT", b"ns", b"ITEMS", b"a", b"q", b"r"]),
        "*2\r\n:0\r\n-ERR non scaling filter is full\r\n"
    );
    assert_eq!(
        err(c, &["BF.ADD", "ns", "zz"]),
        "ERR non scaling filter is full"
    );
    assert_eq!(q::<i64, _>(c, &["BF.CARD", "ns"]), 2);
}

#[test]
fn a_layer_has_at_least_64_bits() {
    let s = Server::start();
    let c = &mut s.conn();
    q::<String, _>(c, &["BF.RESERVE", "k", "0.99", "3", "NONSCALING"]);
    assert_eq!(
        q::<Vec<String>, _>(c, &["BF.DEBUG", "k"]),
        [
            "size:0",
            "bytes:8 bits:64 hashes:1 hashwidth:64 capacity:3 size:0 ratio:0.99"
        ]
    );
    assert_eq!(q::<i64, _>(c, &["BF.ADD", "k", "1"]), 1);
    q::<String, _>(
        c,
        &[
            "BF.RESERVE",
            "k2",
            "0.9999999999999999",
            "100",
            "NONSCALING",
        ],
    );
    assert_eq!(q::<i64, _>(c, &["BF.ADD", "k2", "1"]), 1);
}

#[test]
fn bf_insert_reads_options_by_their_first_letters() {
    let s = Server::start();
    let c = &mut s.conn();
    let insert = |c: &mut Connection, key: &str, opts: &[&str]| -> Vec<i64> {
        let mut args = vec!["BF.INSERT", key];
        args.extend_from_slice(opts);
        q(c, &args)
    };
    assert_eq!(insert(c, "i", &["I", "x"]), [1]);
    insert(c, "cap", &["CAP", "10", "ITEMS", "x"]);
    assert_eq!(q::<Vec<i64>, _>(c, &["BF.INFO", "cap", "CAPACITY"]), [10]);
    insert(c, "e", &["E", "3", "ITEMS", "x"]);
    assert_eq!(bf_expansion(c, "e"), Value::Int(3));
    insert(c, "err", &["ERR", "0.1", "ITEMS", "x"]);
    let debug: Vec<String> = q(c, &["BF.DEBUG", "err"]);
    assert!(debug[1].ends_with("ratio:0.05"), "{debug:?}");
    // NOC… is NOCREATE; any other N… (NX, N, NO) is NONSCALING.
    assert_eq!(
        err(c, &["BF.INSERT", "noc", "NOC", "ITEMS", "x"]),
        "ERR not found"
    );
    for (key, word) in [("nx", "NX"), ("n", "N"), ("no", "NO")] {
        insert(c, key, &[word, "ITEMS", "x"]);
        assert_eq!(bf_expansion(c, key), Value::Nil, "{word}");
    }
    // The last of a repeated option wins.
    insert(
        c,
        "rep",
        &["CAPACITY", "10", "CAPACITY", "20", "ITEMS", "x"],
    );
    assert_eq!(q::<Vec<i64>, _>(c, &["BF.INFO", "rep", "CAPACITY"]), [20]);
    // No combination is refused: NONSCALING with EXPANSION makes a non-scaling filter.
    insert(c, "mix", &["NONSCALING", "EXPANSION", "5", "ITEMS", "x"]);
    assert_eq!(bf_expansion(c, "mix"), Value::Nil);
    assert_eq!(
        err(
            c,
            &[
                "BF.INSERT",
                "gone",
                "NOCREATE",
                "CAPACITY",
                "10",
                "ITEMS",
                "x"
            ]
        ),
        "ERR not found"
    );
    // Values that parse but are out of range: one error, after the items are found.
    for opts in [
        &["ERROR", "0", "ITEMS", "x"][..],
        &["ERROR", "1", "ITEMS", "x"],
        &["CAPACITY", "0", "ITEMS", "x"],
        &["CAPACITY", "-1", "ITEMS", "x"],
        &["EXPANSION", "0", "ITEMS", "x"],
        &["EXPANSION", "-3", "ITEMS", "x"],
    ] {
        let mut args = vec!["BF.INSERT", "bad"];
        args.extend_from_slice(opts);
        assert_eq!(err(c, &args), "Bad argument received", "{opts:?}");
    }
    // Values that do not parse fail at once, before any range check.
    assert_eq!(
        err(
            c,
            &[
                "BF.INSERT",
                "bad",
                "ERROR",
                "0",
                "CAPACITY",
                "x",
                "ITEMS",
                "x"
            ]
        ),
        "Bad capacity"
    );
    assert_eq!(
        err(c, &["BF.INSERT", "bad", "ERROR", "abc", "ITEMS", "x"]),
        "Bad error rate"
    );
    assert_eq!(
        err(c, &["BF.INSERT", "bad", "EXPANSION", "abc", "ITEMS", "x"]),
        "Bad expansion"
    );
    for word in ["", "ZZ", "Q"] {
        assert_eq!(
            err(c, &["BF.INSERT", "bad", word, "ITEMS", "x"]),
            "Unknown argument received"
        );
    }
    assert_eq!(q::<i64, _>(c, &["EXISTS", "bad", "noc", "gone"]), 0);
}

#[test]
fn cf_insert_reads_options_by_their_first_letters() {
    let s = Server::start();
    let c = &mut s.conn();
    assert_eq!(q::<Vec<i64>, _>(c, &["CF.INSERT", "i", "I", "x"]), [1]);
    q::<Vec<i64>, _>(c, &["CF.INSERT", "cap", "CAP", "100", "ITEMS", "x"]);
    assert_eq!(
        q::<String, _>(c, &["CF.DEBUG", "cap"]),
        "bktsize:2 buckets:64 items:1 deletes:0 filters:1 max_iterations:20 expansion:1"
    );
    // Any N… is NOCREATE.
    for word in ["NX", "NOC", "N"] {
        assert_eq!(
            err(c, &["CF.INSERTNX", "none", word, "ITEMS", "x"]),
            "ERR not found",
            "{word}"
        );
    }
    // The capacity is checked as it is read; the last one wins; an existing key ignores it.
    assert_eq!(
        err(c, &["CF.INSERT", "small", "CAPACITY", "3", "ITEMS", "x"]),
        "Capacity must be at least (BucketSize * 2)"
    );
    assert_eq!(
        err(c, &["CF.INSERT", "small", "CAPACITY", "-3", "ITEMS", "x"]),
        "Capacity must be at least (BucketSize * 2)"
    );
    assert_eq!(
        err(c, &["CF.INSERT", "small", "COLOUR", "red", "ITEMS", "x"]),
        "Bad capacity"
    );
    q::<Vec<i64>, _>(
        c,
        &[
            "CF.INSERT",
            "rep",
            "CAPACITY",
            "100",
            "CAPACITY",
            "5000",
            "ITEMS",
            "x",
        ],
    );
    q::<Vec<i64>, _>(c, &["CF.INSERT", "rep", "CAPACITY", "8", "ITEMS", "y"]);
    assert_eq!(
        q::<String, _>(c, &["CF.DEBUG", "rep"]),
        "bktsize:2 buckets:4096 items:2 deletes:0 filters:1 max_iterations:20 expansion:1"
    );
    assert_eq!(
        err(c, &["CF.INSERT", "small", "", "ITEMS", "x"]),
        "Unknown argument received"
    );
    assert_eq!(q::<i64, _>(c, &["EXISTS", "none", "small"]), 0);
}

#[test]
fn keys_of_another_type_read_as_missing_for_queries_only() {
    let s = Server::start();
    let c = &mut s.conn();
    q::<String, _>(c, &["SET", "str", "x"]);
    q::<String, _>(c, &["CF.RESERVE", "cuckoo", "100"]);
    q::<String, _>(c, &["BF.RESERVE", "bloom", "0.01", "100"]);
    q::<i64, _>(c, &["CF.ADD", "cuckoo", "x"]);
    q::<i64, _>(c, &["BF.ADD", "bloom", "x"]);
    for key in ["str", "cuckoo"] {
        assert_eq!(q::<i64, _>(c, &["BF.EXISTS", key, "x"]), 0);
        assert_eq!(q::<Vec<i64>, _>(c, &["BF.MEXISTS", key, "x", "y"]), [0, 0]);
    }
    for key in ["str", "bloom"] {
        assert_eq!(q::<i64, _>(c, &["CF.EXISTS", key, "x"]), 0);
        assert_eq!(q::<Vec<i64>, _>(c, &["CF.MEXISTS", key, "x", "y"]), [0, 0]);
        assert_eq!(q::<i64, _>(c, &["CF.COUNT", key, "x"]), 0);
        assert_eq!(err(c, &["CF.DEL", key, "x"]), "Not found");
        assert_eq!(err(c, &["CF.COMPACT", key]), "Cuckoo filter was not found");
    }
    // Writes and the other reads still say WRONGTYPE.
    let wrongtype = "WRONGTYPE Operation against a key holding the wrong kind of value";
    assert_eq!(err(c, &["BF.ADD", "cuckoo", "x"]), wrongtype);
    assert_eq!(err(c, &["BF.CARD", "str"]), wrongtype);
    assert_eq!(err(c, &["CF.ADD", "bloom", "x"]), wrongtype);
    assert_eq!(err(c, &["CF.INFO", "str"]), wrongtype);
    // Nothing was changed.
    assert_eq!(q::<String, _>(c, &["GET", "str"]), "x");
    assert_eq!(q::<i64, _>(c, &["BF.CARD", "bloom"]), 1);
    assert_eq!(q::<i64, _>(c, &["CF.COUNT", "cuckoo", "x"]), 1);
}

#[test]
fn the_cuckoo_growth_limit_is_checked_once_before_each_command() {
    let s = Server::start();
    let c = &mut s.conn();
    // 4 slots per sub-filter, expansion 1: every CF.ADD until the filter has 32 sub-filters
    // answers 1; the first command after that is refused, whatever it is.
    q::<String, _>(c, &["CF.RESERVE", "m", "4"]);
    let mut added = 0;
    let refusal = loop {
        let item = format!("i{added}");
        match redis::cmd("CF.ADD").arg("m").arg(&item).query::<i64>(c) {
            Ok(reply) => {
                assert_eq!(reply, 1, "{item}");
                added += 1;
            }
            Err(e) => break crate::util::error_text(&e),
        }
        assert!(added < 1000, "no refusal");
    };
    assert_eq!(refusal, "Maximum expansions reached");
    assert_eq!(cf_filters(c, "m"), 32);
    for args in [
        &["CF.ADD", "m", "new"][..],
        &["CF.ADDNX", "m", "new"],
        &["CF.INSERT", "m", "ITEMS", "a", "b"],
        &["CF.INSERT", "m", "CAPACITY", "1000", "ITEMS", "a"],
        &["CF.INSERTNX", "m", "CAPACITY", "1000", "ITEMS", "a"],
    ] {
        assert_eq!(err(c, args), "Maximum expansions reached", "{args:?}");
    }
    let info: Vec<Value> = q(c, &["CF.INFO", "m"]);
    assert_eq!(info[7], Value::Int(added), "refused commands store nothing");
    assert_eq!(q::<i64, _>(c, &["CF.EXISTS", "m", "i0"]), 1);

    // Within one command the filter grows past the limit: the check is not per item.
    let limited = Server::start_with(&["CF_MAX_EXPANSIONS", "3"], &[]);
    let lc = &mut limited.conn();
    q::<String, _>(lc, &["CF.RESERVE", "g", "4"]);
    let mut args = vec!["CF.INSERT".to_string(), "g".into(), "ITEMS".into()];
    args.extend(items("i", 0..60));
    assert_eq!(q::<Vec<i64>, _>(lc, &args), vec![1; 60]);
    assert!(
        cf_filters(lc, "g") > 3,
        "grew past the limit in one command"
    );
    assert_eq!(err(lc, &["CF.ADD", "g", "x"]), "Maximum expansions reached");
}

#[test]
fn a_cuckoo_filter_too_large_to_address_is_insufficient_memory() {
    let s = Server::start();
    let c = &mut s.conn();
    assert_eq!(
        err(c, &["CF.RESERVE", "cf", "9223372036854775807"]),
        "ERR Insufficient memory to create filter"
    );
    assert_eq!(q::<i64, _>(c, &["EXISTS", "cf"]), 0);
}

#[test]
fn module_list_reports_version_20423() {
    let s = Server::start();
    let c = &mut s.conn();
    let list = v(c, &["MODULE", "LIST"]);
    let Value::Array(modules) = list else {
        panic!("{list:?}")
    };
    let Value::Array(fields) = &modules[0] else {
        panic!("{modules:?}")
    };
    assert_eq!(fields[1], Value::BulkString(b"bf".to_vec()));
    assert_eq!(fields[3], Value::Int(20423));
}

/// The fixed status replies (`+OK`, the INFO commands' labels) go out as the protocol bytes
/// Redis made for them when the module loaded; with `EVAL` renamed away Redis cannot make
/// them and the module sends the same text the longer way. Either way the bytes on the wire
/// are RedisBloom's, and a server where Redis could make them says nothing about it.
#[test]
fn fixed_status_replies_are_the_same_bytes_whether_or_not_redis_made_them_at_load() {
    let prepared = Server::start();
    let fallback = Server::start_with(&[], &["--rename-command", "EVAL", ""]);
    let notice = "status replies prepared";
    assert!(!prepared.log().contains(notice), "{}", prepared.log());
    assert!(fallback.log().contains(notice), "{}", fallback.log());
    let script: &[&[&[u8]]] = &[
        &[b"BF.RESERVE", b"bf", b"0.01", b"100"],
        &[b"CF.RESERVE", b"cf", b"1000"],
        &[b"CMS.INITBYDIM", b"cms", b"10", b"3"],
        &[b"TOPK.RESERVE", b"topk", b"3"],
        &[b"TDIGEST.CREATE", b"td"],
        &[b"TDIGEST.ADD", b"td", b"1.5"],
        &[b"BF.INFO", b"bf"],
        &[b"CF.INFO", b"cf"],
        &[b"CMS.INFO", b"cms"],
        &[b"TOPK.INFO", b"topk"],
        &[b"TOPK.LIST", b"topk"],
        &[b"TDIGEST.INFO", b"td"],
    ];
    let replies =
        |s: &Server| -> Vec<String> { script.iter().map(|args| raw_reply(s.port, args)).collect() };
    let (a, b) = (replies(&prepared), replies(&fallback));
    assert_eq!(a, b);
    assert_eq!(a[0], "+OK\r\n");
    assert_eq!(a[5], "+OK\r\n");
    assert!(
        a[6].starts_with("*10\r\n+Capacity\r\n:100\r\n+Size\r\n"),
        "{}",
        a[6]
    );
    assert_eq!(
        a[8],
        "*6\r\n+width\r\n:10\r\n+depth\r\n:3\r\n+count\r\n:0\r\n"
    );
    assert_eq!(a[9], "*8\r\n+k\r\n:3\r\n+width\r\n:8\r\n+depth\r\n:7\r\n+decay\r\n$19\r\n0.90000000000000002\r\n");
    assert!(
        a[11].starts_with("*18\r\n+Compression\r\n:100\r\n+Capacity\r\n"),
        "{}",
        a[11]
    );
}
