//! `TDIGEST.*`: RedisBloom 2.4's replies and errors; its RDB file loads here and answers as
//! it answered, and what this module writes loads there (`REDISBLOOM_REFERENCE`); every
//! write path survives every way of saving and loading; hostile payloads are refused or
//! load into values that save and load again; absurd sizes are errors.
//!
//! Replies are compared as text in the fixture script's format (see
//! `fixtures/make_tdigest_fixture.py`): doubles are the bulk strings Redis formats with
//! `%.17g`, so equal text is an identical double.

use std::path::{Path, PathBuf};

use redis::Connection;

use crate::command;
use crate::harness::Server;
use crate::payload::{module_payload, Field, Pipe, Reply};
use crate::persistence::wait_for_rewrite;
use crate::util::q;

/// A reply in the fixture script's format: `+status`, `-error`, `:integer`, `$text`
/// (printable bulk without `|`), `#hex` (other bulk), `$-` (nil), `*N[a|b|…]`.
fn text(reply: &Reply) -> String {
    match reply {
        Reply::Status(s) => format!("+{s}"),
        Reply::Error(e) => format!("-{e}"),
        Reply::Int(i) => format!(":{i}"),
        Reply::Bulk(None) | Reply::Array(None) => "$-".into(),
        Reply::Bulk(Some(b)) if b.iter().all(|&c| (0x21..0x7f).contains(&c) && c != b'|') => {
            format!("${}", String::from_utf8_lossy(b))
        }
        Reply::Bulk(Some(b)) => format!(
            "#{}",
            b.iter().map(|c| format!("{c:02x}")).collect::<String>()
        ),
        Reply::Array(Some(items)) => format!(
            "*{}[{}]",
            items.len(),
            items.iter().map(text).collect::<Vec<_>>().join("|")
        ),
    }
}

/// A command line of space-separated words.
fn words(line: &str) -> Vec<Vec<u8>> {
    line.split(' ').map(|w| w.as_bytes().to_vec()).collect()
}

/// Sends every command (pipelined) and returns the replies as text.
fn run(port: u16, commands: &[Vec<Vec<u8>>]) -> Vec<String> {
    let replies = Pipe::connect(port)
        .run(commands)
        .unwrap_or_else(|e| panic!("the server died ({e})"));
    replies.iter().map(text).collect()
}

/// One recorded command and its reply.
#[derive(Clone)]
struct Step {
    line: usize,
    command: String,
    reply: String,
}

/// The sections of `rb24_tdigest.answers`.
struct Answers {
    /// Run on an empty server before its SAVE.
    populate: Vec<Step>,
    /// Run on a server started from that RDB file.
    loaded: Vec<Step>,
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/redis/fixtures")
        .join(name)
}

fn answers() -> Answers {
    let path = fixture("rb24_tdigest.answers");
    let content = std::fs::read_to_string(&path).expect("the answers fixture");
    let mut sections: Vec<Vec<Step>> = Vec::new();
    for (i, line) in content.lines().enumerate() {
        if line.starts_with('#') {
            sections.push(Vec::new());
            continue;
        }
        let (command, reply) = line.split_once('\t').expect("command TAB reply");
        sections.last_mut().expect("a section").push(Step {
            line: i + 1,
            command: command.into(),
            reply: reply.into(),
        });
    }
    let [populate, loaded]: [Vec<Step>; 2] = sections.try_into().ok().expect("two sections");
    Answers { populate, loaded }
}

/// Replays `steps` and checks every reply against the recorded one.
#[track_caller]
fn replay(port: u16, what: &str, steps: &[Step]) {
    let commands: Vec<_> = steps.iter().map(|s| words(&s.command)).collect();
    let replies = run(port, &commands);
    let wrong: Vec<(&Step, &String)> = steps
        .iter()
        .zip(&replies)
        .filter(|(s, r)| s.reply != **r)
        .collect();
    if let Some((step, got)) = wrong.first() {
        panic!(
            "{what}: {} of {} replies differ from RedisBloom 2.4's; the first, line {}: {}\n  \
             here:       {}\n  RedisBloom: {}",
            wrong.len(),
            steps.len(),
            step.line,
            step.command,
            &got[..got.len().min(400)],
            &step.reply[..step.reply.len().min(400)],
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

/// Switches AOF on without the RDB preamble (the rewrite writes each key's commands),
/// waits for the rewrite, removes the RDB file and restarts from the AOF alone.
fn aof_rewrite_and_restart(s: &mut Server) {
    {
        let c = &mut s.conn();
        q::<String, _>(c, &["CONFIG", "SET", "aof-use-rdb-preamble", "no"]);
        q::<String, _>(c, &["CONFIG", "SET", "appendonly", "yes"]);
        wait_for_rewrite(c);
    }
    let _ = std::fs::remove_file(s.dir().join("dump.rdb"));
    s.add_config(&["--appendonly", "yes", "--aof-use-rdb-preamble", "no"]);
    s.restart();
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

/// The last queries of every key (from the last `DUMP td:empty` on): after them every
/// digest is compressed, so running them again must give the same replies.
fn final_queries(loaded: &[Step]) -> &[Step] {
    let start = loaded
        .iter()
        .rposition(|s| s.command == "DUMP td:empty")
        .expect("final queries");
    &loaded[start..]
}

/// RedisBloom 2.4.20 wrote `rb24_tdigest.rdb`: loaded here — directly, after DEBUG
/// RELOAD, after DUMP/RESTORE of every key, after an AOF rewrite and restart — every digest
/// answers every recorded command as RedisBloom did, bit for bit (DUMP bytes included),
/// through the recorded changes (adds, merges, a reset, a weight overflow); afterwards the
/// changed digests survive the same round trips.
#[test]
fn redisbloom_2_4_rdb_t_digests_answer_as_redisbloom_2_4() {
    let answers = answers();
    let rdb = fixture("rb24_tdigest.rdb");
    type Prepare = fn(&mut Server);
    let ways: [(&str, Prepare); 4] = [
        ("loaded", |_| {}),
        ("after DEBUG RELOAD", |s| {
            assert_eq!(q::<String, _>(&mut s.conn(), &["DEBUG", "RELOAD"]), "OK")
        }),
        ("after DUMP/RESTORE", |s| dump_restore(&mut s.conn())),
        ("after AOF rewrite and restart", aof_rewrite_and_restart),
    ];
    let mut last = None;
    for (what, prepare) in ways {
        let mut s = Server::start_from_rdb(&rdb, &[]);
        assert_eq!(q::<i64, _>(&mut s.conn(), &["DBSIZE"]), 14, "{}", s.log());
        prepare(&mut s);
        replay(s.port, what, &answers.loaded);
        last = Some(s);
    }
    let mut s = last.expect("a server");
    let finals = final_queries(&answers.loaded);
    assert_eq!(q::<String, _>(&mut s.conn(), &["DEBUG", "RELOAD"]), "OK");
    replay(s.port, "changed, after DEBUG RELOAD", finals);
    dump_restore(&mut s.conn());
    replay(s.port, "changed, after DUMP/RESTORE", finals);
    aof_rewrite_and_restart(&mut s);
    replay(s.port, "changed, after AOF rewrite and restart", finals);
}

/// The commands that made the fixture give RedisBloom's replies here, and the RDB file
/// this module then saves loads into the same answers — DUMP bytes included, so the
/// records are RedisBloom's own. With `REDISBLOOM_REFERENCE=/path/to/redisbloom.so`,
/// RedisBloom 2.4 loads that file and answers the same too.
#[test]
fn t_digests_saved_here_are_what_redisbloom_2_4_saves() {
    let answers = answers();
    let mut s = Server::start();
    replay(s.port, "populate", &answers.populate);
    assert_eq!(q::<String, _>(&mut s.conn(), &["SAVE"]), "OK");
    let rdb = s.dir().join("dump.rdb");
    let saved = std::fs::read(&rdb).expect("the saved RDB");
    s.restart();
    replay(s.port, "loaded from this module's RDB", &answers.loaded);
    if let Some(reference) = std::env::var_os("REDISBLOOM_REFERENCE") {
        let copy = tempfile::tempdir().unwrap();
        let path = copy.path().join("ours.rdb");
        std::fs::write(&path, &saved).unwrap();
        let r = Server::start_module_from_rdb(Path::new(&reference), &path, &[]);
        assert_eq!(q::<i64, _>(&mut r.conn(), &["DBSIZE"]), 14, "{}", r.log());
        replay(
            r.port,
            "RedisBloom, loaded from this module's RDB",
            &answers.loaded,
        );
        eprintln!("RedisBloom at {reference:?} loaded this module's t-digests");
    }
}

/// Replies and errors, recorded from RedisBloom 2.4.20 on Redis 7.0.15 (one server, in
/// this order): arity, keys missing or of another type, every argument error, parsing
/// quirks (`TDIGEST.CREATE` takes its value from the last argument wherever `COMPRESSION`
/// is; `TDIGEST.MERGE` finds its options anywhere after the sources), empty, one-point
/// (rank −2⁶³: C's conversion of NaN) and merged digests, MEMORY USAGE; a merge compresses
/// its sources; queries compress too but leave a `WATCH` on the key standing (RedisBloom
/// opens their keys for reading), writes break it.
const PARITY: &[(&str, &str)] = &[
        ("TDIGEST.CREATE", "-ERR wrong number of arguments for 'tdigest.create' command"),
        ("TDIGEST.CREATE t 1 2 3", "-ERR wrong number of arguments for 'tdigest.create' command"),
        ("TDIGEST.CREATE t COMPRESSION", "-ERR wrong number of arguments for 'tdigest.create' command"),
        ("TDIGEST.CREATE t COMPRESSION x", "-ERR T-Digest: error parsing compression parameter"),
        ("TDIGEST.CREATE t COMPRESSION 0", "-ERR T-Digest: compression parameter needs to be a positive integer"),
        ("TDIGEST.CREATE t COMPRESSION -1", "-ERR T-Digest: compression parameter needs to be a positive integer"),
        ("TDIGEST.CREATE t COMPRESSION 100000000000000000000", "-ERR T-Digest: error parsing compression parameter"),
        ("TDIGEST.CREATE t COMPRESSION 9223372036854775807", "-ERR T-Digest: allocation failed"),
        ("TDIGEST.CREATE t NOPE 10", "-ERR T-Digest: wrong keyword"),
        ("TDIGEST.CREATE t 10 COMPRESSION", "-ERR T-Digest: error parsing compression parameter"),
        ("TDIGEST.CREATE t compression 1.5", "-ERR T-Digest: error parsing compression parameter"),
        ("TDIGEST.CREATE t compression 2", "+OK"),
        ("TDIGEST.CREATE t", "-ERR T-Digest: key already exists"),
        ("TDIGEST.CREATE t COMPRESSION 2", "-ERR T-Digest: key already exists"),
        ("SET s x", "+OK"),
        ("TDIGEST.CREATE s", "-WRONGTYPE Operation against a key holding the wrong kind of value"),
        ("TDIGEST.RESET", "-ERR wrong number of arguments for 'tdigest.reset' command"),
        ("TDIGEST.RESET t x", "-ERR wrong number of arguments for 'tdigest.reset' command"),
        ("TDIGEST.RESET missing", "-ERR T-Digest: key does not exist"),
        ("TDIGEST.RESET s", "-WRONGTYPE Operation against a key holding the wrong kind of value"),
        ("TDIGEST.ADD t", "-ERR wrong number of arguments for 'tdigest.add' command"),
        ("TDIGEST.ADD missing 1", "-ERR T-Digest: key does not exist"),
        ("TDIGEST.ADD s 1", "-WRONGTYPE Operation against a key holding the wrong kind of value"),
        ("TDIGEST.ADD t 1 x", "-ERR T-Digest: error parsing val parameter"),
        ("TDIGEST.ADD t nan", "-ERR T-Digest: error parsing val parameter"),
        ("TDIGEST.ADD t 1 inf", "-ERR T-Digest: val parameter needs to be a finite number"),
        ("TDIGEST.ADD t -inf", "-ERR T-Digest: val parameter needs to be a finite number"),
        ("TDIGEST.ADD t 1e400", "-ERR T-Digest: error parsing val parameter"),
        ("TDIGEST.ADD t 1e-400", "-ERR T-Digest: error parsing val parameter"),
        ("TDIGEST.ADD t 0x10", "+OK"),
        ("TDIGEST.ADD t 1.5abc", "-ERR T-Digest: error parsing val parameter"),
        ("TDIGEST.MIN t", "$16"),
        ("TDIGEST.MAX t", "$16"),
        ("TDIGEST.MIN t x", "-ERR wrong number of arguments for 'tdigest.min' command"),
        ("TDIGEST.MAX missing", "-ERR T-Digest: key does not exist"),
        ("TDIGEST.MIN s", "-WRONGTYPE Operation against a key holding the wrong kind of value"),
        ("TDIGEST.QUANTILE t 0.5", "*1[$nan]"),
        ("TDIGEST.CDF t 1", "*1[$nan]"),
        ("TDIGEST.RANK t 1", "*1[:-1]"),
        ("TDIGEST.REVRANK t 1", "*1[:1]"),
        ("TDIGEST.BYRANK t 0 1", "*2[$16|$inf]"),
        ("TDIGEST.BYREVRANK t 0 1", "*2[$16|$-inf]"),
        ("TDIGEST.TRIMMED_MEAN t 0.1 0.9", "$nan"),
        ("TDIGEST.INFO t", "*18[+Compression|:2|+Capacity|:22|+Merged nodes|:0|+Unmerged nodes|:1|+Merged weight|:0|+Unmerged weight|:1|+Observations|:1|+Total compressions|:0|+Memory usage|:360]"),
        ("TDIGEST.ADD t 10", "+OK"),
        ("TDIGEST.MIN t", "$10"),
        ("TDIGEST.QUANTILE t 0 0.5 1", "*3[$10|$16|$16]"),
        ("TDIGEST.CDF t 10 9 11", "*3[$0.25|$0|$0.5]"),
        ("TDIGEST.RANK t 10 9 11", "*3[:0|:-1|:1]"),
        ("TDIGEST.REVRANK t 10 9 11", "*3[:1|:2|:1]"),
        ("TDIGEST.BYRANK t 0 1 2", "*3[$10|$16|$inf]"),
        ("TDIGEST.BYREVRANK t 0 1 2", "*3[$16|$10|$-inf]"),
        ("TDIGEST.TRIMMED_MEAN t 0.1 0.9", "$13"),
        ("TDIGEST.INFO t", "*18[+Compression|:2|+Capacity|:22|+Merged nodes|:2|+Unmerged nodes|:0|+Merged weight|:2|+Unmerged weight|:0|+Observations|:2|+Total compressions|:1|+Memory usage|:360]"),
        ("TDIGEST.ADD t 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20", "+OK"),
        ("TDIGEST.INFO t", "*18[+Compression|:2|+Capacity|:22|+Merged nodes|:5|+Unmerged nodes|:1|+Merged weight|:21|+Unmerged weight|:1|+Observations|:22|+Total compressions|:2|+Memory usage|:360]"),
        ("TDIGEST.ADD t -5.25 1e-300 -0 17.125 3 3 3", "+OK"),
        ("TDIGEST.INFO t", "*18[+Compression|:2|+Capacity|:22|+Merged nodes|:5|+Unmerged nodes|:8|+Merged weight|:21|+Unmerged weight|:8|+Observations|:29|+Total compressions|:2|+Memory usage|:360]"),
        ("TDIGEST.QUANTILE t 0 0.01 0.1 0.5 0.9 0.99 1", "*7[$-5.25|$-5.25|$-0.86944444444444391|$8.893245614035088|$17.794548872180453|$20|$20]"),
        ("TDIGEST.QUANTILE t 1 0.5 0 0.5 0.25", "*5[$20|$8.893245614035088|$-5.25|$8.893245614035088|$3.9034649122807021]"),
        ("TDIGEST.QUANTILE t 0.5 x", "-ERR T-Digest: error parsing quantile"),
        ("TDIGEST.QUANTILE t 2 x", "-ERR T-Digest: quantile should be in [0,1]"),
        ("TDIGEST.QUANTILE t -0.5", "-ERR T-Digest: quantile should be in [0,1]"),
        ("TDIGEST.QUANTILE t -0", "*1[$-5.25]"),
        ("TDIGEST.QUANTILE t", "-ERR wrong number of arguments for 'tdigest.quantile' command"),
        ("TDIGEST.QUANTILE missing 0.5", "-ERR T-Digest: key does not exist"),
        ("TDIGEST.QUANTILE s 0.5", "-WRONGTYPE Operation against a key holding the wrong kind of value"),
        ("TDIGEST.QUANTILE missing x", "-ERR T-Digest: key does not exist"),
        ("TDIGEST.CDF t -10 -5.25 0 1 3 3.5 10 20 21 inf -inf", "*11[$0|$0.017241379310344827|$0.11300373909430828|$0.1279601163273785|$0.20473423752054637|$0.22978543865971679|$0.55545105346893209|$0.98275862068965514|$1|$1|$0]"),
        ("TDIGEST.CDF t x", "-ERR T-Digest: error parsing cdf"),
        ("TDIGEST.CDF t nan", "-ERR T-Digest: error parsing cdf"),
        ("TDIGEST.CDF t", "-ERR wrong number of arguments for 'tdigest.cdf' command"),
        ("TDIGEST.RANK t -10 -5.25 0 1 3 3.5 10 20 21 inf", "*10[:-1|:0|:3|:4|:6|:7|:16|:28|:29|:29]"),
        ("TDIGEST.REVRANK t -10 -5.25 0 1 3 3.5 10 20 21 inf", "*10[:29|:28|:26|:25|:23|:22|:13|:0|:-1|:-1]"),
        ("TDIGEST.RANK t x", "-ERR T-Digest: error parsing value"),
        ("TDIGEST.REVRANK t nan", "-ERR T-Digest: error parsing value"),
        ("TDIGEST.RANK t", "-ERR wrong number of arguments for 'tdigest.rank' command"),
        ("TDIGEST.BYRANK t 0 1 2 5 13 26 27 28 1000", "*9[$-5.25|$-5.25|$-2.9444444444444446|$2.3549122807017544|$7.8608771929824561|$17.716165413533833|$18.5|$20|$inf]"),
        ("TDIGEST.BYREVRANK t 0 1 2 5 13 26 27 28 1000", "*9[$20|$18.5|$17.716165413533833|$15.364661654135338|$9.2373684210526328|$-2.9444444444444446|$-5.25|$-5.25|$-inf]"),
        ("TDIGEST.BYRANK t 1 -1", "-ERR T-Digest: rank needs to be non negative"),
        ("TDIGEST.BYRANK t 1 x", "-ERR T-Digest: error parsing rank"),
        ("TDIGEST.BYREVRANK t 1.5", "-ERR T-Digest: error parsing rank"),
        ("TDIGEST.BYRANK t", "-ERR wrong number of arguments for 'tdigest.byrank' command"),
        ("TDIGEST.TRIMMED_MEAN t 0 1", "$8.8577586206896548"),
        ("TDIGEST.TRIMMED_MEAN t 0.1 0.9", "$8.8783333333333339"),
        ("TDIGEST.TRIMMED_MEAN t 0.5 0.51", "$10.269736842105264"),
        ("TDIGEST.TRIMMED_MEAN t 0.5 0.5", "-ERR T-Digest: low_cut_percentile should be lower than high_cut_percentile"),
        ("TDIGEST.TRIMMED_MEAN t 0.6 0.5", "-ERR T-Digest: low_cut_percentile should be lower than high_cut_percentile"),
        ("TDIGEST.TRIMMED_MEAN t -0.1 0.5", "-ERR T-Digest: low_cut_percentile and high_cut_percentile should be in [0,1]"),
        ("TDIGEST.TRIMMED_MEAN t 0.1 1.1", "-ERR T-Digest: low_cut_percentile and high_cut_percentile should be in [0,1]"),
        ("TDIGEST.TRIMMED_MEAN t x 0.5", "-ERR T-Digest: error parsing low_cut_percentile"),
        ("TDIGEST.TRIMMED_MEAN t 0.1 x", "-ERR T-Digest: error parsing high_cut_percentile"),
        ("TDIGEST.TRIMMED_MEAN t 2 x", "-ERR T-Digest: error parsing high_cut_percentile"),
        ("TDIGEST.TRIMMED_MEAN t 0.1", "-ERR wrong number of arguments for 'tdigest.trimmed_mean' command"),
        ("TDIGEST.TRIMMED_MEAN missing x y", "-ERR T-Digest: key does not exist"),
        ("TDIGEST.INFO", "-ERR wrong number of arguments for 'tdigest.info' command"),
        ("TDIGEST.INFO t x", "-ERR wrong number of arguments for 'tdigest.info' command"),
        ("TDIGEST.INFO missing", "-ERR T-Digest: key does not exist"),
        ("TDIGEST.INFO s", "-WRONGTYPE Operation against a key holding the wrong kind of value"),
        ("TDIGEST.CREATE u COMPRESSION 7", "+OK"),
        ("TDIGEST.ADD u 100 200 300", "+OK"),
        ("TDIGEST.MERGE", "-ERR wrong number of arguments for 'tdigest.merge' command"),
        ("TDIGEST.MERGE d 1", "-ERR wrong number of arguments for 'tdigest.merge' command"),
        ("TDIGEST.MERGE d x t", "-ERR T-Digest: error parsing numkeys"),
        ("TDIGEST.MERGE d 0 t", "-ERR T-Digest: numkeys needs to be a positive integer"),
        ("TDIGEST.MERGE d -1 t", "-ERR T-Digest: numkeys needs to be a positive integer"),
        ("TDIGEST.MERGE d 2 t", "-ERR wrong number of arguments for 'tdigest.merge' command"),
        ("TDIGEST.MERGE d 1 t NOPE", "-ERR T-Digest: wrong keyword"),
        ("TDIGEST.MERGE d 1 t COMPRESSION", "-ERR wrong number of arguments for 'tdigest.merge' command"),
        ("TDIGEST.MERGE d 1 t COMPRESSION x", "-ERR T-Digest: error parsing compression parameter"),
        ("TDIGEST.MERGE d 1 t COMPRESSION 0", "-ERR T-Digest: compression parameter needs to be a positive integer"),
        ("TDIGEST.MERGE d 1 t COMPRESSION 10000000000000000000", "-ERR T-Digest: error parsing compression parameter"),
        ("TDIGEST.MERGE d 2 t missing", "-ERR T-Digest: key does not exist"),
        ("TDIGEST.MERGE d 2 t s", "-WRONGTYPE Operation against a key holding the wrong kind of value"),
        ("TDIGEST.MERGE s 1 t", "-WRONGTYPE Operation against a key holding the wrong kind of value"),
        ("TDIGEST.MERGE d 1 d", "-ERR T-Digest: key does not exist"),
        ("TDIGEST.MERGE d 1 x COMPRESSION 5", "-ERR T-Digest: key does not exist"),
        ("TDIGEST.MERGE d 2 t u", "+OK"),
        ("TDIGEST.INFO d", "*18[+Compression|:7|+Capacity|:52|+Merged nodes|:5|+Unmerged nodes|:3|+Merged weight|:29|+Unmerged weight|:3|+Observations|:32|+Total compressions|:1|+Memory usage|:840]"),
        ("TDIGEST.QUANTILE d 0 0.5 1", "*3[$-5.25|$9.9256140350877189|$300]"),
        ("TDIGEST.MERGE d 1 u", "+OK"),
        ("TDIGEST.INFO d", "*18[+Compression|:7|+Capacity|:52|+Merged nodes|:6|+Unmerged nodes|:3|+Merged weight|:32|+Unmerged weight|:3|+Observations|:35|+Total compressions|:1|+Memory usage|:840]"),
        ("TDIGEST.MERGE d 1 u OVERRIDE", "+OK"),
        ("TDIGEST.INFO d", "*18[+Compression|:7|+Capacity|:52|+Merged nodes|:0|+Unmerged nodes|:3|+Merged weight|:0|+Unmerged weight|:3|+Observations|:3|+Total compressions|:0|+Memory usage|:840]"),
        ("TDIGEST.MERGE d 2 u t OVERRIDE COMPRESSION 3", "+OK"),
        ("TDIGEST.INFO d", "*18[+Compression|:3|+Capacity|:28|+Merged nodes|:3|+Unmerged nodes|:5|+Merged weight|:3|+Unmerged weight|:29|+Observations|:32|+Total compressions|:1|+Memory usage|:456]"),
        ("TDIGEST.MERGE d 1 t junk OVERRIDE", "+OK"),
        ("TDIGEST.INFO d", "*18[+Compression|:2|+Capacity|:22|+Merged nodes|:0|+Unmerged nodes|:5|+Merged weight|:0|+Unmerged weight|:29|+Observations|:29|+Total compressions|:0|+Memory usage|:360]"),
        ("TDIGEST.MERGE d 3 d d d", "+OK"),
        ("TDIGEST.INFO d", "*18[+Compression|:2|+Capacity|:22|+Merged nodes|:5|+Unmerged nodes|:5|+Merged weight|:87|+Unmerged weight|:29|+Observations|:116|+Total compressions|:3|+Memory usage|:360]"),
        ("TDIGEST.QUANTILE d 0 0.25 0.5 0.75 1", "*5[$-5.25|$3.6062209930701257|$8.844867230381249|$14.421428571428571|$20]"),
        ("TDIGEST.MERGE e 2 u u COMPRESSION 1 OVERRIDE", "+OK"),
        ("TDIGEST.INFO e", "*18[+Compression|:1|+Capacity|:16|+Merged nodes|:3|+Unmerged nodes|:3|+Merged weight|:3|+Unmerged weight|:3|+Observations|:6|+Total compressions|:1|+Memory usage|:264]"),
        ("TDIGEST.RESET t", "+OK"),
        ("TDIGEST.INFO t", "*18[+Compression|:2|+Capacity|:22|+Merged nodes|:0|+Unmerged nodes|:0|+Merged weight|:0|+Unmerged weight|:0|+Observations|:0|+Total compressions|:0|+Memory usage|:360]"),
        ("TDIGEST.MIN t", "$nan"),
        ("TDIGEST.MAX t", "$nan"),
        ("TDIGEST.QUANTILE t 0.5", "*1[$nan]"),
        ("TDIGEST.RANK t 1", "*1[:-2]"),
        ("TDIGEST.BYRANK t 0 1", "*2[$nan|$nan]"),
        ("TDIGEST.TRIMMED_MEAN t 0.1 0.2", "$nan"),
        ("TDIGEST.CREATE v", "+OK"),
        ("TDIGEST.ADD v 1 1 1 1 1 1 1 1 1 1", "+OK"),
        ("TDIGEST.QUANTILE v 0 0.5 1", "*3[$1|$1|$1]"),
        ("TDIGEST.CDF v 0 1 2", "*3[$0|$0.5|$1]"),
        ("TDIGEST.RANK v 0 1 2", "*3[:-1|:5|:10]"),
        ("TDIGEST.REVRANK v 0 1 2", "*3[:10|:5|:-1]"),
        ("TDIGEST.TRIMMED_MEAN v 0.1 0.9", "$1"),
        ("TDIGEST.INFO v", "*18[+Compression|:100|+Capacity|:610|+Merged nodes|:10|+Unmerged nodes|:0|+Merged weight|:10|+Unmerged weight|:0|+Observations|:10|+Total compressions|:1|+Memory usage|:9768]"),
        ("MEMORY USAGE v", ":9800"),
        ("TDIGEST.CREATE p", "+OK"),
        ("TDIGEST.ADD p 3", "+OK"),
        ("TDIGEST.RANK p 3 2 4", "*3[:-9223372036854775808|:-1|:1]"),
        ("TDIGEST.REVRANK p 3 2 4", "*3[:-9223372036854775808|:1|:-1]"),
        ("TDIGEST.QUANTILE p 0 0.5 1", "*3[$nan|$nan|$nan]"),
        ("TDIGEST.CDF p 3", "*1[$nan]"),
        ("TDIGEST.BYRANK p 0 1 2", "*3[$3|$inf|$inf]"),
        ("TDIGEST.BYREVRANK p 0 1 2", "*3[$3|$-inf|$-inf]"),
        ("TDIGEST.TRIMMED_MEAN p 0 1", "$nan"),
        ("TDIGEST.INFO p", "*18[+Compression|:100|+Capacity|:610|+Merged nodes|:0|+Unmerged nodes|:1|+Merged weight|:0|+Unmerged weight|:1|+Observations|:1|+Total compressions|:0|+Memory usage|:9768]"),
        ("TDIGEST.ADD u 1 2 3 4 5", "+OK"),
        ("TDIGEST.INFO u", "*18[+Compression|:7|+Capacity|:52|+Merged nodes|:3|+Unmerged nodes|:5|+Merged weight|:3|+Unmerged weight|:5|+Observations|:8|+Total compressions|:1|+Memory usage|:840]"),
        ("TDIGEST.MERGE f 1 u", "+OK"),
        ("TDIGEST.INFO u", "*18[+Compression|:7|+Capacity|:52|+Merged nodes|:6|+Unmerged nodes|:0|+Merged weight|:8|+Unmerged weight|:0|+Observations|:8|+Total compressions|:2|+Memory usage|:840]"),
        ("TDIGEST.ADD u 6 7", "+OK"),
        ("WATCH p u", "+OK"),
        ("TDIGEST.QUANTILE p 0.5", "*1[$nan]"),
        ("TDIGEST.CDF u 1", "*1[$0.050000000000000003]"),
        ("TDIGEST.RANK u 1", "*1[:0]"),
        ("TDIGEST.BYRANK u 1", "*1[$2]"),
        ("TDIGEST.TRIMMED_MEAN u 0.1 0.9", "$40.875"),
        ("TDIGEST.INFO u", "*18[+Compression|:7|+Capacity|:52|+Merged nodes|:6|+Unmerged nodes|:0|+Merged weight|:10|+Unmerged weight|:0|+Observations|:10|+Total compressions|:3|+Memory usage|:840]"),
        ("TDIGEST.MIN u", "$1"),
        ("TDIGEST.MAX u", "$300"),
        ("MULTI", "+OK"),
        ("PING", "+QUEUED"),
        ("EXEC", "*1[+PONG]"),
        ("WATCH p", "+OK"),
        ("TDIGEST.RESET p", "+OK"),
        ("MULTI", "+OK"),
        ("PING", "+QUEUED"),
        ("EXEC", "$-"),
];

#[test]
fn replies_and_errors_are_redisbloom_2_4_s() {
    let s = Server::start();
    let commands: Vec<_> = PARITY.iter().map(|(c, _)| words(c)).collect();
    let replies = run(s.port, &commands);
    for ((command, expected), got) in PARITY.iter().zip(&replies) {
        assert_eq!(got, expected, "{command}");
    }
}

/// Where this module refuses what RedisBloom accepts and cannot hold: compressions whose
/// capacity passes a C `int` (RedisBloom truncates it and writes past its arrays, or
/// aborts the server asking for the memory) and digests past the memory limit.
#[test]
fn absurd_compressions_and_the_memory_limit_are_errors() {
    let s = Server::start_with(&["MAX_KEY_MEMORY", "65536"], &[]);
    let c = &mut s.conn();
    let too_large = "ERR T-Digest: compression parameter needs to be at most 357913939";
    for compression in ["4294967295", "357913940", "384307168202282315"] {
        let e = crate::util::err(c, &["TDIGEST.CREATE", "t", "COMPRESSION", compression]);
        assert_eq!(e, too_large);
    }
    // Larger ones RedisBloom itself refuses, with its words.
    let e = crate::util::err(
        c,
        &["TDIGEST.CREATE", "t", "COMPRESSION", "400000000000000000"],
    );
    assert_eq!(e, "ERR T-Digest: allocation failed");
    q::<String, _>(c, &["TDIGEST.CREATE", "t", "COMPRESSION", "100"]);
    q::<String, _>(c, &["TDIGEST.ADD", "t", "1", "2"]);
    let e = crate::util::err(
        c,
        &["TDIGEST.MERGE", "m", "1", "t", "COMPRESSION", "4294967295"],
    );
    assert_eq!(e, too_large);
    // 16 bytes a centroid slot: compression 1000 has 6,010 slots, past 65,536 bytes.
    let e = crate::util::err(c, &["TDIGEST.CREATE", "big", "COMPRESSION", "1000"]);
    assert!(e.starts_with("ERR the filter would use 96"), "{e}");
    assert!(e.contains("per-key limit of 65536 bytes"), "{e}");
    let e = crate::util::err(c, &["TDIGEST.MERGE", "m", "1", "t", "COMPRESSION", "1000"]);
    assert!(e.starts_with("ERR the filter would use"), "{e}");
    // A payload of that size is refused at load.
    let payload = module_payload("TDIS-TYPE", 0, &digest_fields(1000.0, 6010, &[]));
    let restored = redis::cmd("RESTORE")
        .arg("big")
        .arg(0)
        .arg(&payload)
        .query::<String>(c);
    assert!(restored.is_err(), "{restored:?}");
    let payload = module_payload("TDIS-TYPE", 0, &digest_fields(100.0, 610, &[]));
    let restored = redis::cmd("RESTORE")
        .arg("ok")
        .arg(0)
        .arg(&payload)
        .query::<String>(c);
    assert_eq!(restored.ok().as_deref(), Some("OK"));
    assert_eq!(q::<i64, _>(c, &["EXISTS", "big", "m"]), 0);
    assert_eq!(q::<String, _>(c, &["PING"]), "PONG");
}

/// The fields of a digest record: compression, min, max, cap, merged, unmerged, total
/// compressions, merged weight, unmerged weight, then the centroids' means and weights.
fn digest_fields(compression: f64, cap: u64, centroids: &[(f64, f64)]) -> Vec<Field> {
    let weight: f64 = centroids.iter().map(|c| c.1).sum();
    let (min, max) = centroids.iter().fold((f64::MAX, -f64::MAX), |(lo, hi), c| {
        (lo.min(c.0), hi.max(c.0))
    });
    let mut f = vec![
        Field::Double(compression),
        Field::Double(min),
        Field::Double(max),
        Field::Unsigned(cap),
        Field::Unsigned(centroids.len() as u64),
        Field::Unsigned(0),
        Field::Unsigned(1),
        Field::Double(weight),
        Field::Double(0.0),
    ];
    f.extend(centroids.iter().map(|c| Field::Double(c.0)));
    f.extend(centroids.iter().map(|c| Field::Double(c.1)));
    f
}

/// Every query of a key and its `DUMP` (first, so that the digest is compressed before
/// it is read) and `MEMORY USAGE`.
fn snapshot_commands(key: &str) -> Vec<Vec<Vec<u8>>> {
    [
        format!("DUMP {key}"),
        format!("TDIGEST.INFO {key}"),
        format!("TDIGEST.MIN {key}"),
        format!("TDIGEST.MAX {key}"),
        format!("TDIGEST.QUANTILE {key} 0 0.01 0.1 0.5 0.9 0.99 1 0.3"),
        format!("TDIGEST.CDF {key} -1000 -1 0 1 2.5 5 10 99.5 1000"),
        format!("TDIGEST.RANK {key} -1 0 1 2.5 5 10 99.5"),
        format!("TDIGEST.REVRANK {key} -1 0 1 2.5 5 10 99.5"),
        format!("TDIGEST.BYRANK {key} 0 1 2 10 50 100 1000"),
        format!("TDIGEST.BYREVRANK {key} 0 1 2 10 50 100 1000"),
        format!("TDIGEST.TRIMMED_MEAN {key} 0.1 0.9"),
        format!("MEMORY USAGE {key}"),
    ]
    .iter()
    .map(|l| words(l))
    .collect()
}

/// Keys written by every write path: CREATE (default and given compression), ADD (one
/// point, and enough to merge), RESET and adds after it, MERGE (a new key, into an
/// existing one, OVERRIDE with COMPRESSION, a key into itself), RESTORE, COPY, and a digest
/// in database 1. No query runs between the writes: queries compress, and are neither
/// replicated nor written to the AOF (in RedisBloom neither), so an AOF replay merges
/// points in other batches.
fn write_every_path(port: u16) -> Vec<&'static str> {
    let mut commands: Vec<String> = vec![
        "TDIGEST.CREATE w:empty".into(),
        "TDIGEST.CREATE w:c7 COMPRESSION 7".into(),
        "TDIGEST.CREATE w:one".into(),
        "TDIGEST.ADD w:one 5".into(),
        "TDIGEST.CREATE w:reset COMPRESSION 3".into(),
    ];
    for batch in 0..6 {
        let values: Vec<String> = (0..50)
            .map(|i| format!("{}", ((batch * 50 + i) * 37 % 101) as f64 / 4.0 - 3.0))
            .collect();
        commands.push(format!("TDIGEST.ADD w:c7 {}", values.join(" ")));
        commands.push(format!("TDIGEST.ADD w:reset {}", values.join(" ")));
    }
    commands.extend(
        [
            "TDIGEST.RESET w:reset",
            "TDIGEST.ADD w:reset 3 1 2",
            "TDIGEST.MERGE w:merged 2 w:c7 w:one",
            "TDIGEST.CREATE w:into COMPRESSION 20",
            "TDIGEST.ADD w:into 100 -100 0.5",
            "TDIGEST.MERGE w:into 1 w:c7",
            "TDIGEST.CREATE w:over",
            "TDIGEST.ADD w:over 1",
            "TDIGEST.MERGE w:over 2 w:c7 w:reset OVERRIDE COMPRESSION 9",
            "TDIGEST.CREATE w:self COMPRESSION 2",
            "TDIGEST.ADD w:self 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20",
            "TDIGEST.MERGE w:self 3 w:self w:self w:self",
            "COPY w:into w:copy",
            "SELECT 1",
            "TDIGEST.CREATE w:db1 COMPRESSION 5",
            "TDIGEST.ADD w:db1 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24",
            "SELECT 0",
        ]
        .map(String::from),
    );
    let commands: Vec<_> = commands.iter().map(|l| words(l)).collect();
    for (command, reply) in commands.iter().zip(run(port, &commands)) {
        assert!(
            reply.starts_with('+') || reply == ":1",
            "{:?}: {reply}",
            String::from_utf8_lossy(&command.concat())
        );
    }
    // RESTORE of another key's DUMP (the DUMP compresses w:c7; the snapshot does too).
    let c = &mut redis::Client::open(format!("redis://127.0.0.1:{port}/"))
        .unwrap()
        .get_connection()
        .unwrap();
    let payload: Vec<u8> = q(c, &["DUMP", "w:c7"]);
    let ok: String = redis::cmd("RESTORE")
        .arg("w:restored")
        .arg(0)
        .arg(&payload)
        .query(c)
        .unwrap();
    assert_eq!(ok, "OK");
    vec![
        "w:empty",
        "w:c7",
        "w:one",
        "w:reset",
        "w:merged",
        "w:into",
        "w:over",
        "w:self",
        "w:copy",
        "w:restored",
    ]
}

/// Every answer of every key written by [`write_every_path`], database 1 included.
fn snapshot(port: u16, keys: &[&str]) -> Vec<String> {
    let mut commands: Vec<_> = keys.iter().flat_map(|k| snapshot_commands(k)).collect();
    commands.push(command!("SELECT", "1"));
    commands.extend(snapshot_commands("w:db1"));
    commands.push(command!("SELECT", "0"));
    let replies = run(port, &commands);
    assert!(!replies.iter().any(|r| r.starts_with('-')), "{replies:?}");
    replies
}

#[test]
fn every_write_path_survives_every_way_of_saving_and_loading() {
    let mut s = Server::start_with(
        &[],
        &["--appendonly", "yes", "--aof-use-rdb-preamble", "no"],
    );
    let keys = write_every_path(s.port);
    let before = snapshot(s.port, &keys);
    let check = |s: &Server, what: &str| {
        let now = snapshot(s.port, &keys);
        let differ: Vec<_> = before.iter().zip(&now).filter(|(a, b)| a != b).collect();
        assert!(
            differ.is_empty(),
            "{what}: {} answers differ, first {:?}",
            differ.len(),
            differ[0]
        );
    };
    // The AOF as written: the commands, replayed.
    s.restart();
    check(&s, "after a restart from the AOF");
    assert_eq!(q::<String, _>(&mut s.conn(), &["DEBUG", "RELOAD"]), "OK");
    check(&s, "after DEBUG RELOAD");
    dump_restore(&mut s.conn());
    {
        let c = &mut s.conn();
        q::<String, _>(c, &["SELECT", "1"]);
        dump_restore(c);
    }
    check(&s, "after DUMP/RESTORE");
    {
        let c = &mut s.conn();
        q::<String, _>(c, &["BGREWRITEAOF"]);
        wait_for_rewrite(c);
    }
    let aof = base_aof(&s);
    let count = |needle: &[u8]| aof.windows(needle.len()).filter(|w| *w == needle).count();
    assert_eq!(count(b"RESTORE"), keys.len() + 1, "one RESTORE a key");
    assert_eq!(count(b"TDIGEST"), 0);
    s.restart();
    check(
        &s,
        "after an AOF rewrite (RESTORE) and a restart, database 1 included",
    );
    assert_eq!(q::<String, _>(&mut s.conn(), &["SAVE"]), "OK");
    std::fs::remove_dir_all(s.dir().join("appendonlydir")).unwrap();
    s.add_config(&["--appendonly", "no"]);
    s.restart();
    check(&s, "after SAVE and a restart from the RDB file");
    // COPY gives the same bytes.
    let c = &mut s.conn();
    for key in &keys {
        let copy = format!("{key}:copied");
        assert_eq!(q::<i64, _>(c, &["COPY", key, &copy]), 1);
        let a: Vec<u8> = q(c, &["DUMP", key]);
        let b: Vec<u8> = q(c, &["DUMP", &copy]);
        assert_eq!(a, b, "COPY of {key}");
    }
}

/// Small digests of every shape, for the mutation sweep: empty, one point (kept
/// unmerged), singletons, merged centroids, a merge of both.
fn small_digests(port: u16) -> Vec<&'static str> {
    let setup = [
        "TDIGEST.CREATE s:empty COMPRESSION 1",
        "TDIGEST.CREATE s:one COMPRESSION 1",
        "TDIGEST.ADD s:one 2.5",
        "TDIGEST.CREATE s:four COMPRESSION 2",
        "TDIGEST.ADD s:four 1 2 3 -4",
        "TDIGEST.CREATE s:many COMPRESSION 1",
        "TDIGEST.ADD s:many 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25",
        "TDIGEST.MERGE s:both 2 s:four s:many COMPRESSION 1",
    ];
    let commands: Vec<_> = setup.iter().map(|l| words(l)).collect();
    assert!(run(port, &commands).iter().all(|r| r == "+OK"));
    vec!["s:empty", "s:one", "s:four", "s:many", "s:both"]
}

/// Every command on a value RESTORE accepted, DUMP last.
fn exercise(key: &[u8]) -> Vec<Vec<Vec<u8>>> {
    let copy = [key, b":copy"].concat();
    let merged = [key, b":merged"].concat();
    vec![
        command!("TDIGEST.INFO", key),
        command!("TDIGEST.MIN", key),
        command!("TDIGEST.MAX", key),
        command!("TDIGEST.QUANTILE", key, "0", "0.3", "0.5", "1", "0.1"),
        command!("TDIGEST.CDF", key, "-1", "0", "2.5", "10", "inf"),
        command!("TDIGEST.RANK", key, "-1", "0", "2.5", "10"),
        command!("TDIGEST.REVRANK", key, "-1", "0", "2.5", "10"),
        command!("TDIGEST.BYRANK", key, "0", "1", "3", "100"),
        command!("TDIGEST.BYREVRANK", key, "0", "1", "3", "100"),
        command!("TDIGEST.TRIMMED_MEAN", key, "0.1", "0.9"),
        command!(
            "TDIGEST.ADD",
            key,
            "1",
            "2",
            "3",
            "4",
            "5",
            "6",
            "7",
            "8",
            "9",
            "10"
        ),
        command!("TDIGEST.MERGE", merged, "2", key, key),
        command!("TDIGEST.MERGE", key, "1", key),
        command!("TDIGEST.QUANTILE", key, "0.5"),
        command!("MEMORY", "USAGE", key),
        command!("COPY", key, copy),
        command!("DUMP", key),
    ]
}

/// Forged records: each field out of what RedisBloom 2.4 writes, and short records. Each
/// is refused and the server stays up.
#[test]
fn forged_t_digest_records_are_refused() {
    let s = Server::start();
    let c = &mut s.conn();
    let good = digest_fields(2.0, 22, &[(1.0, 1.0), (2.0, 3.0), (3.0, 1.0)]);
    let ok: String = redis::cmd("RESTORE")
        .arg("good")
        .arg(0)
        .arg(module_payload("TDIS-TYPE", 0, &good))
        .query(c)
        .unwrap();
    assert_eq!(ok, "OK");
    let with = |i: usize, f: Field| {
        let mut v = good.clone();
        v[i] = f;
        v
    };
    let mut forged = vec![
        ("compression NaN", with(0, Field::Double(f64::NAN))),
        ("compression 0", with(0, Field::Double(0.0))),
        ("compression -2", with(0, Field::Double(-2.0))),
        ("compression 2.5", with(0, Field::Double(2.5))),
        ("compression 2³²−1", with(0, Field::Double(4294967295.0))),
        (
            "compression infinite",
            with(0, Field::Double(f64::INFINITY)),
        ),
        ("min NaN", with(1, Field::Double(f64::NAN))),
        ("capacity other than 6c+10", with(3, Field::Unsigned(23))),
        ("capacity huge", with(3, Field::Unsigned(u64::MAX / 2))),
        ("capacity negative", with(3, Field::Unsigned(u64::MAX))),
        (
            "more merged centroids than the capacity",
            with(4, Field::Unsigned(23)),
        ),
        (
            "merged centroids negative",
            with(4, Field::Unsigned(u64::MAX)),
        ),
        ("unmerged past the capacity", with(5, Field::Unsigned(20))),
        (
            "total compressions negative",
            with(6, Field::Unsigned(u64::MAX)),
        ),
        ("merged weight negative", with(7, Field::Double(-5.0))),
        ("merged weight NaN", with(7, Field::Double(f64::NAN))),
        ("merged weight 2⁶³", with(7, Field::Double(2f64.powi(63)))),
        ("unmerged weight fractional", with(8, Field::Double(0.5))),
        ("a weight negative", with(12, Field::Double(-1.0))),
        ("a weight NaN", with(13, Field::Double(f64::NAN))),
        ("a weight infinite", with(14, Field::Double(f64::INFINITY))),
        ("weights whose sum overflows", {
            let mut v = with(12, Field::Double(9e18));
            v[13] = Field::Double(9e18);
            v
        }),
        ("a count as a double", with(4, Field::Double(3.0))),
        ("a double as a count", with(0, Field::Unsigned(2))),
        ("more centroids than written", with(4, Field::Unsigned(4))),
    ];
    for len in 0..good.len() {
        forged.push(("truncated", good[..len].to_vec()));
    }
    for (what, fields) in forged {
        let payload = module_payload("TDIS-TYPE", 0, &fields);
        let restored = redis::cmd("RESTORE")
            .arg("k")
            .arg(0)
            .arg(&payload)
            .query::<String>(c);
        assert!(restored.is_err(), "{what}: {restored:?}");
        assert_eq!(q::<String, _>(c, &["PING"]), "PONG", "{what}");
    }
    // Another encoding version is not a t-digest this module knows.
    let payload = module_payload("TDIS-TYPE", 1, &good);
    assert!(redis::cmd("RESTORE")
        .arg("k")
        .arg(0)
        .arg(&payload)
        .query::<String>(c)
        .is_err());
    assert_eq!(q::<i64, _>(c, &["EXISTS", "k"]), 0);
}

/// Every single-byte change (three ways) and every truncation of small digests' DUMPs,
/// CRC recomputed so that Redis hands the bytes to the module: every RESTORE is answered;
/// every value accepted survives every command, and its DUMP restores to the same bytes;
/// at the end all of them survive DEBUG RELOAD, an AOF rewrite and a restart.
#[test]
fn every_mutation_and_truncation_is_refused_or_reloads() {
    let mut s = Server::start_with(
        &["MAX_KEY_MEMORY", "1048576"],
        &["--appendonly", "yes", "--aof-use-rdb-preamble", "no"],
    );
    let c = &mut s.conn();
    let keys = small_digests(s.port);
    let mut pipe = Pipe::connect(s.port);
    let (mut tried, mut accepted) = (0usize, 0usize);
    for key in keys {
        let payload: Vec<u8> = q(c, &["DUMP", key]);
        let (t, a) =
            crate::payload::restore_mutants(&mut pipe, &|| s.log(), key, &payload, exercise);
        tried += t;
        accepted += a;
        assert_eq!(q::<String, _>(c, &["PING"]), "PONG");
    }
    eprintln!("{accepted} of {tried} mutated t-digest payloads loaded");
    assert!(accepted > 0 && accepted < tried, "{accepted} of {tried}");
    let before: i64 = q(c, &["DBSIZE"]);
    assert_eq!(q::<String, _>(c, &["DEBUG", "RELOAD"]), "OK", "{}", s.log());
    assert_eq!(q::<i64, _>(c, &["DBSIZE"]), before);
    q::<String, _>(c, &["BGREWRITEAOF"]);
    wait_for_rewrite(c);
    s.restart();
    assert_eq!(
        q::<i64, _>(&mut s.conn(), &["DBSIZE"]),
        before,
        "{}",
        s.log()
    );
}

/// Digests count against the server-wide budget as filters do: creations and merges are
/// refused once the server could not hold the next one, deleting digests makes room again,
/// and the server stays within the budget.
#[test]
fn t_digests_count_against_the_server_budget() {
    const BUDGET: u64 = 256 << 20;
    let s = Server::start_with(&["MAX_MEMORY", &BUDGET.to_string()], &[]);
    let c = &mut s.conn();
    // Compression 400 000: 2 400 010 centroid slots of 16 bytes, about 38.4 MB (zeroed
    // pages, never written here). Six fit in 256 MiB beside the server, a seventh does not.
    let create = |c: &mut Connection, key: &str| {
        redis::cmd("TDIGEST.CREATE")
            .arg(key)
            .arg("COMPRESSION")
            .arg(400_000)
            .query::<String>(c)
            .map_err(|e| crate::util::error_text(&e))
    };
    let results: Vec<_> = (0..7).map(|i| create(c, &format!("t{i}"))).collect();
    assert!(
        results[..6].iter().all(|r| r.as_deref() == Ok("OK")),
        "{results:?}"
    );
    let e = results[6].as_ref().expect_err("the seventh does not fit");
    assert!(e.contains("bytes it may hold"), "{e}");
    q::<String, _>(c, &["TDIGEST.ADD", "t0", "1", "2", "3"]);
    let e = crate::util::err(
        c,
        &["TDIGEST.MERGE", "m", "1", "t0", "COMPRESSION", "400000"],
    );
    assert!(e.contains("bytes it may hold"), "{e}");
    // A small merge still fits; deleting two digests makes room for two more.
    q::<String, _>(c, &["TDIGEST.MERGE", "m", "1", "t0", "COMPRESSION", "100"]);
    assert_eq!(q::<i64, _>(c, &["DEL", "t1", "t2"]), 2);
    assert_eq!(create(c, "t7").as_deref(), Ok("OK"));
    q::<String, _>(c, &["TDIGEST.MERGE", "t8", "1", "t0"]);
    assert!(create(c, "t9").is_err());
    // Restored digests count at once: two restores fill the room two deletes made, and a
    // creation in the same transaction (no cron reading used_memory in between) is refused.
    let payload: Vec<u8> = q(c, &["DUMP", "t0"]);
    assert!(payload.len() < 200, "a small payload, a large digest");
    let replies = Pipe::connect(s.port)
        .run(&[
            command!("DEL", "t7", "t8"),
            command!("MULTI"),
            command!("RESTORE", "r1", "0", payload),
            command!("RESTORE", "r2", "0", payload),
            command!("TDIGEST.CREATE", "t10", "COMPRESSION", "400000"),
            command!("EXEC"),
        ])
        .expect("the server answers");
    let Reply::Array(Some(exec)) = &replies[5] else {
        panic!("{replies:?}");
    };
    assert_eq!(
        exec[..2],
        [Reply::Status("OK".into()), Reply::Status("OK".into())]
    );
    assert!(
        matches!(&exec[2], Reply::Error(e) if e.contains("bytes it may hold")),
        "{exec:?}"
    );
    let info: String = q(c, &["INFO", "memory"]);
    let used: u64 = info
        .lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("used_memory");
    assert!(used <= BUDGET, "{used}");
    assert_eq!(q::<String, _>(c, &["PING"]), "PONG");
}
