//! CF.*: every command, option, error string, wrong type and arity; dumps, golden bytes,
//! DEBUG RELOAD.

use redis::{Connection, Value};

use crate::harness::Server;
use crate::util::{err, items, q, raw_reply, v};

/// `CF.SCANDUMP` from 0 to the end: the (iterator, data) pairs, header first.
pub fn scandump(c: &mut Connection, key: &str) -> Vec<(i64, Vec<u8>)> {
    let mut out = Vec::new();
    let mut iter = 0i64;
    loop {
        let (next, data): (i64, Option<Vec<u8>>) = redis::cmd("CF.SCANDUMP")
            .arg(key)
            .arg(iter)
            .query(c)
            .unwrap();
        if next == 0 {
            assert_eq!(data, None, "the end is [0, nil]");
            return out;
        }
        out.push((next, data.expect("a chunk")));
        iter = next;
    }
}

fn loadchunks(c: &mut Connection, key: &str, dump: &[(i64, Vec<u8>)]) {
    for (iter, data) in dump {
        let ok: String = redis::cmd("CF.LOADCHUNK")
            .arg(key)
            .arg(*iter)
            .arg(&data[..])
            .query(c)
            .unwrap();
        assert_eq!(ok, "OK");
    }
}

fn answers(c: &mut Connection, key: &str, n: u32) -> (Vec<i64>, Vec<i64>) {
    let mut args = vec!["CF.MEXISTS".to_string(), key.to_string()];
    args.extend(items("in-", 0..n));
    args.extend(items("out-", 0..n));
    let exists = q(c, &args);
    let counts = items("in-", 0..n.min(200))
        .iter()
        .map(|i| q::<i64, _>(c, &["CF.COUNT", key, i]))
        .collect();
    (exists, counts)
}

#[test]
fn add_exists_count_del_happy_path() {
    let s = Server::start();
    let c = &mut s.conn();
    assert_eq!(q::<String, _>(c, &["CF.RESERVE", "f", "1000"]), "OK");
    assert_eq!(q::<i64, _>(c, &["CF.ADD", "f", "apple"]), 1);
    assert_eq!(q::<i64, _>(c, &["CF.ADD", "f", "apple"]), 1, "a multiset");
    assert_eq!(q::<i64, _>(c, &["CF.COUNT", "f", "apple"]), 2);
    assert_eq!(q::<i64, _>(c, &["CF.ADDNX", "f", "apple"]), 0);
    assert_eq!(q::<i64, _>(c, &["CF.ADDNX", "f", "pear"]), 1);
    assert_eq!(q::<i64, _>(c, &["CF.EXISTS", "f", "pear"]), 1);
    assert_eq!(q::<i64, _>(c, &["CF.EXISTS", "f", "kiwi"]), 0);
    assert_eq!(
        q::<Vec<i64>, _>(c, &["CF.MEXISTS", "f", "pear", "kiwi"]),
        [1, 0]
    );
    assert_eq!(q::<i64, _>(c, &["CF.DEL", "f", "apple"]), 1);
    assert_eq!(q::<i64, _>(c, &["CF.COUNT", "f", "apple"]), 1);
    assert_eq!(q::<i64, _>(c, &["CF.DEL", "f", "kiwi"]), 0);
    assert_eq!(q::<String, _>(c, &["CF.COMPACT", "f"]), "OK");
    // Missing keys.
    assert_eq!(q::<i64, _>(c, &["CF.EXISTS", "none", "x"]), 0);
    assert_eq!(
        q::<Vec<i64>, _>(c, &["CF.MEXISTS", "none", "x", "y"]),
        [0, 0]
    );
    assert_eq!(q::<i64, _>(c, &["CF.COUNT", "none", "x"]), 0);
    assert_eq!(err(c, &["CF.DEL", "none", "x"]), "Not found");
    assert_eq!(
        err(c, &["CF.COMPACT", "none"]),
        "Cuckoo filter was not found"
    );
    assert_eq!(err(c, &["CF.INFO", "none"]), "ERR not found");
    assert_eq!(err(c, &["CF.DEBUG", "none"]), "ERR not found");
    assert_eq!(err(c, &["CF.SCANDUMP", "none", "0"]), "ERR not found");
    // ADD on a missing key: capacity 1024, bucket size 2 → 512 buckets.
    assert_eq!(q::<i64, _>(c, &["CF.ADD", "auto", "x"]), 1);
    assert_eq!(
        q::<String, _>(c, &["CF.DEBUG", "auto"]),
        "bktsize:2 buckets:512 items:1 deletes:0 filters:1 max_iterations:20 expansion:1"
    );
}

#[test]
fn reserve_options_info_and_errors() {
    let s = Server::start();
    let c = &mut s.conn();
    q::<String, _>(
        c,
        &[
            "CF.RESERVE",
            "f",
            "1000",
            "BUCKETSIZE",
            "4",
            "MAXITERATIONS",
            "50",
            "EXPANSION",
            "3",
        ],
    );
    q::<i64, _>(c, &["CF.ADD", "f", "x"]);
    q::<i64, _>(c, &["CF.ADD", "f", "y"]);
    q::<i64, _>(c, &["CF.DEL", "f", "y"]);
    assert_eq!(
        raw_reply(s.port, &[b"CF.INFO", b"f"]),
        "*16\r\n+Size\r\n:1080\r\n+Number of buckets\r\n:256\r\n+Number of filters\r\n:1\r\n\
         +Number of items inserted\r\n:1\r\n+Number of items deleted\r\n:1\r\n+Bucket size\r\n:4\r\n\
         +Expansion rate\r\n:4\r\n+Max iterations\r\n:50\r\n"
    );
    for (args, want) in [
        (&["CF.RESERVE", "f", "1000"][..], "ERR item exists"),
        (&["CF.RESERVE", "g", "lots"], "Bad capacity"),
        (
            &["CF.RESERVE", "g", "3"],
            "Capacity must be at least (BucketSize * 2)",
        ),
        (
            &["CF.RESERVE", "g", "10", "BUCKETSIZE", "8"],
            "Capacity must be at least (BucketSize * 2)",
        ),
        (
            &["CF.RESERVE", "g", "100", "BUCKETSIZE", "x"],
            "Couldn't parse BUCKETSIZE",
        ),
        (
            &["CF.RESERVE", "g", "100", "BUCKETSIZE", "0"],
            "BUCKETSIZE: value must be an integer between 1 and 255, inclusive.",
        ),
        (
            &["CF.RESERVE", "g", "100", "BUCKETSIZE", "256"],
            "BUCKETSIZE: value must be an integer between 1 and 255, inclusive.",
        ),
        (
            &["CF.RESERVE", "g", "100", "MAXITERATIONS", "x"],
            "Couldn't parse MAXITERATIONS",
        ),
        (
            &["CF.RESERVE", "g", "100", "MAXITERATIONS", "0"],
            "MAXITERATIONS: value must be an integer between 1 and 65535, inclusive.",
        ),
        (
            &["CF.RESERVE", "g", "100", "MAXITERATIONS", "65536"],
            "MAXITERATIONS: value must be an integer between 1 and 65535, inclusive.",
        ),
        (
            &["CF.RESERVE", "g", "100", "EXPANSION", "x"],
            "Couldn't parse EXPANSION",
        ),
        (
            &["CF.RESERVE", "g", "100", "EXPANSION", "-1"],
            "EXPANSION: value must be an integer between 0 and 32768, inclusive.",
        ),
        (
            &["CF.RESERVE", "g", "100", "EXPANSION", "32769"],
            "EXPANSION: value must be an integer between 0 and 32768, inclusive.",
        ),
        (
            &["CF.RESERVE", "g"],
            "ERR wrong number of arguments for 'cf.reserve' command",
        ),
        (
            &["CF.RESERVE", "g", "100", "EXPANSION"],
            "ERR wrong number of arguments for 'cf.reserve' command",
        ),
    ] {
        assert_eq!(err(c, args), want, "{args:?}");
    }
    assert_eq!(q::<i64, _>(c, &["EXISTS", "g"]), 0);
}

#[test]
fn insert_and_insertnx_options_full_filters_and_growth() {
    let s = Server::start();
    let c = &mut s.conn();
    assert_eq!(
        q::<Vec<i64>, _>(
            c,
            &["CF.INSERT", "k", "CAPACITY", "100", "ITEMS", "a", "b", "a"]
        ),
        [1, 1, 1]
    );
    assert_eq!(
        q::<Vec<i64>, _>(c, &["CF.INSERTNX", "k", "ITEMS", "a", "c"]),
        [0, 1]
    );
    assert_eq!(
        q::<String, _>(c, &["CF.DEBUG", "k"]),
        "bktsize:2 buckets:64 items:4 deletes:0 filters:1 max_iterations:20 expansion:1"
    );
    assert_eq!(
        q::<Vec<i64>, _>(c, &["CF.INSERT", "k", "NOCREATE", "ITEMS", "d"]),
        [1]
    );
    assert_eq!(
        err(c, &["CF.INSERT", "none", "NOCREATE", "ITEMS", "d"]),
        "ERR not found"
    );
    assert_eq!(
        err(c, &["CF.INSERTNX", "none", "NOCREATE", "ITEMS", "d"]),
        "ERR not found"
    );
    assert_eq!(
        err(c, &["CF.INSERT", "z", "CAPACITY", "x", "ITEMS", "d"]),
        "Bad capacity"
    );
    assert_eq!(
        err(c, &["CF.INSERT", "z", "ZEBRA", "ITEMS", "d"]),
        "Unknown argument received"
    );
    assert_eq!(
        err(c, &["CF.INSERT", "z", "ITEMS"]),
        "ERR wrong number of arguments for 'cf.insert' command"
    );
    assert_eq!(
        err(c, &["CF.INSERTNX", "z", "CAPACITY", "10"]),
        "ERR wrong number of arguments for 'cf.insertnx' command"
    );
    assert_eq!(q::<i64, _>(c, &["EXISTS", "z"]), 0);
    // EXPANSION 0: a full filter answers -1 in arrays, "Filter is full" alone.
    q::<String, _>(
        c,
        &[
            "CF.RESERVE",
            "full",
            "8",
            "EXPANSION",
            "0",
            "MAXITERATIONS",
            "5",
        ],
    );
    let mut args = vec!["CF.INSERT".to_string(), "full".into(), "ITEMS".into()];
    args.extend(items("i", 0..40));
    let replies: Vec<i64> = q(c, &args);
    assert!(replies.contains(&-1), "{replies:?}");
    assert_eq!(
        err(c, &["CF.ADD", "full", "one-more-item"]),
        "Filter is full"
    );
    // Growth: sub-filters of buckets · expansionʲ; once there are CF_MAX_EXPANSIONS, the
    // next command is refused.
    let limited = Server::start_with(&["CF_MAX_EXPANSIONS", "2"], &[]);
    let lc = &mut limited.conn();
    q::<String, _>(
        lc,
        &[
            "CF.RESERVE",
            "g",
            "8",
            "EXPANSION",
            "2",
            "MAXITERATIONS",
            "5",
        ],
    );
    let mut failure = None;
    for item in items("i", 0..200) {
        if let Err(e) = redis::cmd("CF.ADD").arg("g").arg(&item).query::<i64>(lc) {
            failure = Some(crate::util::error_text(&e));
            break;
        }
    }
    assert_eq!(failure.as_deref(), Some("Maximum expansions reached"));
    let info: Vec<Value> = q(lc, &["CF.INFO", "g"]);
    assert_eq!(info[5], Value::Int(2), "two sub-filters");
    assert_eq!(info[1], Value::Int(40 + 2 * 16 + 4 * 2 + 8 * 2));
}

/// `CF.INFO Size` of a filter of 65535 sub-filters of 2 slots: RedisBloom's count.
const SIZE_65535: i64 = 40 + 65535 * (16 + 2);
/// What the module counts that filter for beyond it (`MEMORY USAGE`, its memory limits):
/// per sub-filter, its 40-byte entry in the list less RedisBloom's 16 (8 of the 24 count its
/// slots in use); the bitset of sub-filters with a free slot, 1024 words; the filter's
/// struct, 88 bytes less RedisBloom's 40. Grown one sub-filter at a time, the list and the
/// bitset end as long as after a load.
const BOOKKEEPING_65535: i64 = 65535 * 24 + 1024 * 8 + 48;

/// `CF.RESERVE key 2 BUCKETSIZE 1 EXPANSION 1`, then one `CF.INSERT` of 140000 copies of
/// an item: the filter of 65535 sub-filters, every slot taken, and its checks.
fn grow_to_65535_sub_filters(c: &mut Connection, key: &str) {
    q::<String, _>(
        c,
        &["CF.RESERVE", key, "2", "BUCKETSIZE", "1", "EXPANSION", "1"],
    );
    let mut args = vec!["CF.INSERT", key, "ITEMS"];
    args.extend(std::iter::repeat_n("1 ", 140000));
    let replies: Vec<i64> = q(c, &args);
    assert_eq!(replies.len(), 140000);
    let ones = replies.iter().take_while(|&&r| r == 1).count();
    assert_eq!(ones, 131070, "stored until the 65535th sub-filter is full");
    assert!(replies[ones..].iter().all(|&r| r == -1), "then -1 for each");
}

/// The checks of a full filter of 65535 sub-filters, as built or loaded: the next insert
/// is refused as RedisBloom refuses it, the numbers, and `MEMORY USAGE` counting the
/// bookkeeping. Returns `MEMORY USAGE`.
fn check_65535_sub_filters(c: &mut Connection, key: &str, when: &str) -> i64 {
    assert_eq!(
        err(c, &["CF.INSERT", key, "ITEMS", "1 "]),
        "Maximum expansions reached",
        "{when}"
    );
    let info: Vec<Value> = q(c, &["CF.INFO", key]);
    assert_eq!(info[1], Value::Int(SIZE_65535), "Size, {when}");
    assert_eq!(info[5], Value::Int(65535), "sub-filters, {when}");
    assert_eq!(info[7], Value::Int(131070), "items, {when}");
    assert_eq!(q::<i64, _>(c, &["CF.COUNT", key, "1 "]), 131070, "{when}");
    let usage: i64 = q(c, &["MEMORY", "USAGE", key]);
    assert!(
        usage >= SIZE_65535 + BOOKKEEPING_65535,
        "MEMORY USAGE {usage} {when}: the bookkeeping is not counted"
    );
    usage
}

/// RedisBloom 2.4's flow test `test_counter_overflow_with_large_number_of_items`: one
/// `CF.INSERT` of 140000 copies of an item into a filter of 2 buckets of 1 slot, expansion 1.
/// Each sub-filter takes 2 copies and the filter grows to its 65535 sub-filters (131070 ×
/// `1`); the rest cannot be stored (8930 × `-1`), and the next command is refused, as
/// RedisBloom answers. Every insert but the first two of each sub-filter passes all the full
/// ones (the time is measured by hand, not here: README, "RedisBloom 2.4's own flow tests").
///
/// The filter then survives `DEBUG RELOAD` and `DUMP`/`RESTORE` (to another key, and to a
/// server whose `CF_MAX_EXPANSIONS` lets it change: RedisBloom's default of 32 refuses every
/// insert into it), where the bookkeeping kept in memory only is rebuilt: a slot freed by
/// `CF.DEL` is taken by the next insert, the count of what the value holds follows
/// compaction and growth.
#[test]
fn one_item_grows_the_filter_to_its_65535_sub_filters() {
    let s = Server::start();
    let c = &mut s.conn();
    grow_to_65535_sub_filters(c, "cf");
    let usage = check_65535_sub_filters(c, "cf", "as built");
    let info = v(c, &["CF.INFO", "cf"]);
    let dump: Vec<u8> = q(c, &["DUMP", "cf"]);

    assert_eq!(q::<String, _>(c, &["DEBUG", "RELOAD"]), "OK");
    assert_eq!(
        check_65535_sub_filters(c, "cf", "after DEBUG RELOAD"),
        usage
    );
    assert_eq!(v(c, &["CF.INFO", "cf"]), info);
    q::<String, _>(c, &[&b"RESTORE"[..], b"cg", b"0", &dump]);
    assert_eq!(check_65535_sub_filters(c, "cg", "restored"), usage);
    assert_eq!(v(c, &["CF.INFO", "cg"]), info);

    let open = Server::start_with(&["CF_MAX_EXPANSIONS", "65535"], &[]);
    let c = &mut open.conn();
    q::<String, _>(c, &[&b"RESTORE"[..], b"cf", b"0", &dump]);
    assert_eq!(check_65535_sub_filters(c, "cf", "restored, open"), usage);
    let sub_filters = |c: &mut Connection| q::<Vec<Value>, _>(c, &["CF.INFO", "cf"])[5].clone();
    // The newest sub-filter emptied and dropped: 2 bytes of slots fewer held (its entry
    // in the list stays allocated), 18 fewer in RedisBloom's count.
    assert_eq!(q::<i64, _>(c, &["CF.DEL", "cf", "1 "]), 1);
    assert_eq!(q::<i64, _>(c, &["CF.DEL", "cf", "1 "]), 1);
    assert_eq!(q::<String, _>(c, &["CF.COMPACT", "cf"]), "OK");
    assert_eq!(sub_filters(c), Value::Int(65534));
    let info: Vec<Value> = q(c, &["CF.INFO", "cf"]);
    assert_eq!(info[1], Value::Int(SIZE_65535 - 18));
    assert_eq!(q::<i64, _>(c, &["MEMORY", "USAGE", "cf"]), usage - 2);
    // A slot freed in the newest sub-filter left: the next copy takes it, without growth.
    assert_eq!(q::<i64, _>(c, &["CF.DEL", "cf", "1 "]), 1);
    assert_eq!(
        q::<Vec<i64>, _>(c, &["CF.INSERT", "cf", "ITEMS", "1 "]),
        [1]
    );
    assert_eq!(
        sub_filters(c),
        Value::Int(65534),
        "the freed slot was taken"
    );
    // The next grows the filter to its 65535 again: as much held as before.
    assert_eq!(
        q::<Vec<i64>, _>(c, &["CF.INSERT", "cf", "ITEMS", "1 "]),
        [1]
    );
    assert_eq!(sub_filters(c), Value::Int(65535));
    assert_eq!(q::<i64, _>(c, &["CF.COUNT", "cf", "1 "]), 131070 - 3 + 2);
    assert_eq!(q::<i64, _>(c, &["MEMORY", "USAGE", "cf"]), usage);
    assert_eq!(
        err(c, &["CF.INSERT", "cf", "ITEMS", "1 "]),
        "Maximum expansions reached"
    );
}

#[test]
fn wrong_types_and_arity() {
    let s = Server::start();
    let c = &mut s.conn();
    q::<String, _>(c, &["SET", "str", "x"]);
    q::<i64, _>(c, &["BF.ADD", "bloom", "x"]);
    let wrongtype = "WRONGTYPE Operation against a key holding the wrong kind of value";
    for key in ["str", "bloom"] {
        for args in [
            &["CF.RESERVE", key, "100"][..],
            &["CF.ADD", key, "x"],
            &["CF.ADDNX", key, "x"],
            &["CF.INSERT", key, "ITEMS", "x"],
            &["CF.INSERTNX", key, "ITEMS", "x"],
            &["CF.INFO", key],
            &["CF.DEBUG", key],
            &["CF.SCANDUMP", key, "0"],
            &["CF.LOADCHUNK", key, "1", "x"],
        ] {
            assert_eq!(err(c, args), wrongtype, "{args:?}");
        }
    }
    q::<i64, _>(c, &["CF.ADD", "cuckoo", "x"]);
    assert_eq!(err(c, &["BF.ADD", "cuckoo", "x"]), wrongtype);
    for (args, name) in [
        (&["CF.ADD", "k"][..], "cf.add"),
        (&["CF.ADDNX", "k", "a", "b"], "cf.addnx"),
        (&["CF.EXISTS", "k"], "cf.exists"),
        (&["CF.MEXISTS", "k"], "cf.mexists"),
        (&["CF.COUNT", "k"], "cf.count"),
        (&["CF.DEL", "k"], "cf.del"),
        (&["CF.COMPACT"], "cf.compact"),
        (&["CF.INFO"], "cf.info"),
        (&["CF.DEBUG"], "cf.debug"),
        (&["CF.SCANDUMP", "k"], "cf.scandump"),
        (&["CF.LOADCHUNK", "k", "1"], "cf.loadchunk"),
    ] {
        assert_eq!(
            err(c, args),
            format!("ERR wrong number of arguments for '{name}' command"),
            "{args:?}"
        );
    }
}

#[test]
fn scandump_loadchunk_reproduces_every_answer() {
    let s = Server::start();
    let c = &mut s.conn();
    q::<String, _>(
        c,
        &[
            "CF.RESERVE",
            "src",
            "64",
            "BUCKETSIZE",
            "4",
            "EXPANSION",
            "2",
        ],
    );
    let mut args = vec!["CF.INSERT".to_string(), "src".into(), "ITEMS".into()];
    args.extend(items("in-", 0..2000));
    q::<Vec<i64>, _>(c, &args);
    let filters = q::<Vec<Value>, _>(c, &["CF.INFO", "src"])[5].clone();
    let Value::Int(filters) = filters else {
        panic!()
    };
    assert!(filters >= 4);
    let dump = scandump(c, "src");
    assert_eq!(
        dump.len() as i64,
        1 + filters,
        "a header and one chunk per sub-filter"
    );
    assert_eq!(dump[0].1.len(), 38);
    loadchunks(c, "copy", &dump);
    assert_eq!(answers(c, "copy", 2000), answers(c, "src", 2000));
    assert_eq!(v(c, &["CF.INFO", "copy"]), v(c, &["CF.INFO", "src"]));
    assert_eq!(scandump(c, "copy"), dump);
    // An empty filter dumps as [0, nil] at once.
    q::<String, _>(c, &["CF.RESERVE", "empty", "100"]);
    assert_eq!(
        raw_reply(s.port, &[b"CF.SCANDUMP", b"empty", b"0"]),
        "*2\r\n:0\r\n$-1\r\n"
    );
    // A large filter: chunks of at most 16 MiB, never across a sub-filter.
    q::<String, _>(c, &["CF.RESERVE", "big", "40000000", "BUCKETSIZE", "1"]);
    q::<Vec<i64>, _>(c, &["CF.INSERT", "big", "ITEMS", "a", "b", "c"]);
    let dump = scandump(c, "big");
    let sizes: Vec<usize> = dump.iter().map(|(_, d)| d.len()).collect();
    // 2²⁶ one-byte buckets: four chunks of 16 MiB.
    assert_eq!(sizes, [38, 16 << 20, 16 << 20, 16 << 20, 16 << 20]);
    loadchunks(c, "bigcopy", &dump);
    assert_eq!(
        q::<Vec<i64>, _>(c, &["CF.MEXISTS", "bigcopy", "a", "b", "c", "d"]),
        [1, 1, 1, 0]
    );
}

#[test]
fn loadchunk_errors_leave_keys_as_they_were() {
    let s = Server::start();
    let c = &mut s.conn();
    q::<Vec<i64>, _>(
        c,
        &["CF.INSERT", "src", "CAPACITY", "100", "ITEMS", "a", "b"],
    );
    let dump = scandump(c, "src");
    let header = dump[0].1.clone();
    let load = |c: &mut Connection, key: &str, iter: i64, data: &[u8]| {
        redis::cmd("CF.LOADCHUNK")
            .arg(key)
            .arg(iter)
            .arg(data)
            .query::<String>(c)
            .map_err(|e| crate::util::error_text(&e))
    };
    assert_eq!(load(c, "x", 1, &header[..37]), Err("Invalid header".into()));
    let mut bad = header.clone();
    bad[32] = 0; // bucket size 0
    assert_eq!(load(c, "x", 1, &bad), Err("Couldn't create filter!".into()));
    assert_eq!(q::<i64, _>(c, &["EXISTS", "x"]), 0);
    assert_eq!(
        load(c, "x", dump[1].0, &dump[1].1),
        Err("ERR not found".into())
    );
    assert_eq!(load(c, "src", 1, &header), Err("ERR item exists".into()));
    assert_eq!(
        err(c, &["CF.LOADCHUNK", "src", "one", "x"]),
        "Invalid position"
    );
    assert_eq!(err(c, &["CF.SCANDUMP", "src", "one"]), "Invalid position");
    assert_eq!(
        load(c, "src", 100_000, b"xyz"),
        Err("Couldn't load chunk!".into())
    );
    assert_eq!(
        load(c, "src", 128 + 2, b"abc"),
        Err("Couldn't load chunk!".into())
    );
    assert_eq!(scandump(c, "src"), dump);
}

/// Golden bytes from the documented layout: buckets = nextpow2(cap / bucketsize),
/// h = MurmurHash64A(item, 0), fp = h mod 255 + 1, an item in an empty table goes to slot 0
/// of bucket h mod buckets; the 38-byte header packed little-endian.
#[test]
fn golden_header_and_chunk() {
    use bloomkit::hash::murmur64a;
    let s = Server::start();
    let c = &mut s.conn();
    q::<String, _>(
        c,
        &[
            "CF.RESERVE",
            "g",
            "1000",
            "BUCKETSIZE",
            "4",
            "MAXITERATIONS",
            "30",
            "EXPANSION",
            "3",
        ],
    );
    let buckets = 1000u64 / 4;
    let buckets = buckets.next_power_of_two(); // 256
    let mut data = vec![0u8; (buckets * 4) as usize];
    for item in ["foo", "bar", "baz"] {
        q::<i64, _>(c, &["CF.ADD", "g", item]);
        let h = murmur64a(item.as_bytes(), 0);
        let fp = (h % 255 + 1) as u8;
        let bucket = (h % buckets) as usize;
        let slot = data[bucket * 4..bucket * 4 + 4]
            .iter()
            .position(|&s| s == 0)
            .unwrap();
        data[bucket * 4 + slot] = fp;
    }
    let mut header = Vec::new();
    header.extend_from_slice(&3u64.to_le_bytes()); // items
    header.extend_from_slice(&buckets.to_le_bytes());
    header.extend_from_slice(&0u64.to_le_bytes()); // deletes
    header.extend_from_slice(&1u64.to_le_bytes()); // sub-filters
    header.extend_from_slice(&4u16.to_le_bytes());
    header.extend_from_slice(&30u16.to_le_bytes());
    header.extend_from_slice(&4u16.to_le_bytes()); // expansion 3 → 4
    assert_eq!(scandump(c, "g"), vec![(1, header), (1 + 1024, data)]);
}

#[test]
fn debug_reload_keeps_every_answer() {
    let s = Server::start();
    let c = &mut s.conn();
    q::<String, _>(c, &["CF.RESERVE", "f", "64", "EXPANSION", "2"]);
    let mut args = vec!["CF.INSERT".to_string(), "f".into(), "ITEMS".into()];
    args.extend(items("in-", 0..600));
    q::<Vec<i64>, _>(c, &args);
    q::<i64, _>(c, &["CF.DEL", "f", "in-3"]);
    let before = (
        answers(c, "f", 600),
        v(c, &["CF.INFO", "f"]),
        scandump(c, "f"),
    );
    assert_eq!(q::<String, _>(c, &["DEBUG", "RELOAD"]), "OK");
    let after = (
        answers(c, "f", 600),
        v(c, &["CF.INFO", "f"]),
        scandump(c, "f"),
    );
    assert_eq!(before, after);
    assert_eq!(q::<String, _>(c, &["TYPE", "f"]), "MBbloomCF");
    assert_eq!(q::<i64, _>(c, &["COPY", "f", "g"]), 1);
    q::<i64, _>(c, &["CF.DEL", "g", "in-5"]);
    assert_eq!(
        q::<i64, _>(c, &["CF.EXISTS", "f", "in-5"]),
        1,
        "the copy is independent"
    );
    let usage: i64 = q(c, &["MEMORY", "USAGE", "f"]);
    let Value::Int(size) = q::<Vec<Value>, _>(c, &["CF.INFO", "f"])[1].clone() else {
        panic!()
    };
    assert!(usage >= size, "{usage} < {size}");
}

#[test]
fn the_per_key_memory_limit_refuses_oversized_filters() {
    let s = Server::start_with(&["MAX_KEY_MEMORY", "134217728"], &[]);
    let c = &mut s.conn();
    let e = err(c, &["CF.RESERVE", "huge", "1000000000"]);
    assert!(
        e.starts_with("ERR the filter would use ") && e.contains("134217728"),
        "{e}"
    );
    assert_eq!(q::<i64, _>(c, &["EXISTS", "huge"]), 0);
    let small = Server::start_with(&["MAX_KEY_MEMORY", "2048"], &[]);
    let c = &mut small.conn();
    q::<String, _>(c, &["CF.RESERVE", "f", "1024", "MAXITERATIONS", "5"]);
    let mut failure = None;
    for item in items("i", 0..5000) {
        if let Err(e) = redis::cmd("CF.ADD").arg("f").arg(&item).query::<i64>(c) {
            failure = Some(crate::util::error_text(&e));
            break;
        }
    }
    assert!(failure.expect("growth is refused").contains("memory limit"));
}
