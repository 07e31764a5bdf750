//! Hostile count-min sketch and top-k payloads: every single-byte change and every
//! truncation of small DUMPs, and forged records (sizes that overflow or cannot fit, sizes
//! that do not match the buffers). The server stays up; each payload is refused with an
//! error or loads as a value that answers every command and saves and loads again.

use crate::command;
use crate::harness::Server;
use crate::payload::{module_payload, Field};
use crate::transcript::Session;

/// Small keys of each layout, and their DUMPs.
fn small_layouts(c: &mut Session) -> Vec<(String, Vec<u8>)> {
    let setup = [
        command!("CMS.INITBYDIM", "cms", "3", "2"),
        command!(
            "CMS.INCRBY",
            "cms",
            "a",
            "3",
            "b",
            "70000",
            "c",
            "4294967295"
        ),
        command!("CMS.INITBYDIM", "cms:1", "1", "1"),
        command!("TOPK.RESERVE", "topk", "2", "3", "2", "0.5"),
        command!("TOPK.ADD", "topk", "a", "bb", "a", "ccc", "a"),
        command!("TOPK.INCRBY", "topk", "bb", "300"),
        command!("TOPK.RESERVE", "topk:empty", "1", "1", "1", "1"),
    ];
    for reply in c.run(&setup).unwrap() {
        assert!(!reply.starts_with('-'), "{reply}");
    }
    ["cms", "cms:1", "topk", "topk:empty"]
        .into_iter()
        .map(|key| {
            let reply = c.run(&[command!("DUMP", key)]).unwrap().remove(0);
            (key.to_string(), unrender_bulk(&reply))
        })
        .collect()
}

/// The bytes of a rendered bulk reply.
fn unrender_bulk(reply: &str) -> Vec<u8> {
    let text = reply.strip_prefix('$').expect("a bulk reply");
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            out.push(u8::from_str_radix(&text[i + 1..i + 3], 16).unwrap());
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    out
}

/// Every command run on a value RESTORE accepted, DUMP last.
fn exercise(key: &[u8]) -> Vec<Vec<Vec<u8>>> {
    let copy = [key, b":copy"].concat();
    vec![
        command!("CMS.INFO", key),
        command!("CMS.QUERY", key, "a", "b", "zz"),
        command!("CMS.INCRBY", key, "a", "1", "new", "4294967295"),
        command!("CMS.MERGE", key, "2", key, key, "WEIGHTS", "1", "1"),
        command!("CMS.MERGE", key, "1", key, "WEIGHTS", "-1"),
        command!("TOPK.INFO", key),
        command!("TOPK.LIST", key, "WITHCOUNT"),
        command!("TOPK.QUERY", key, "a", "bb", ""),
        command!("TOPK.COUNT", key, "a", "bb", ""),
        command!("TOPK.ADD", key, "a", "new", "bb", "", "a"),
        command!("TOPK.INCRBY", key, "bb", "100000", "x", "7"),
        command!("TOPK.LIST", key),
        command!("MEMORY", "USAGE", key),
        command!("COPY", key, copy),
        command!("DUMP", key),
    ]
}

#[test]
fn every_mutation_and_truncation_is_refused_or_loads_and_reloads() {
    let mut s = Server::start_with(
        &["MAX_KEY_MEMORY", "1048576"],
        &["--appendonly", "yes", "--aof-use-rdb-preamble", "no"],
    );
    let mut c = Session::connect(s.port);
    let layouts = small_layouts(&mut c);
    let (mut tried, mut accepted) = (0usize, 0usize);
    for (key, payload) in &layouts {
        let mutants = crate::payload::mutants(payload);
        tried += mutants.len();
        let names: Vec<Vec<u8>> = (0..mutants.len())
            .map(|i| format!("{key}:m{i}").into_bytes())
            .collect();
        let restores: Vec<_> = names
            .iter()
            .zip(&mutants)
            .map(|(name, p)| command!("RESTORE", name, "0", p))
            .collect();
        let replies = c
            .run(&restores)
            .unwrap_or_else(|e| panic!("{key}: the server died on RESTORE ({e}):\n{}", s.log()));
        assert!(
            replies.iter().all(|r| r == "+OK" || r.starts_with('-')),
            "{replies:?}"
        );
        let ok: Vec<&Vec<u8>> = names
            .iter()
            .zip(&replies)
            .filter(|(_, r)| *r == "+OK")
            .map(|(n, _)| n)
            .collect();
        accepted += ok.len();
        let commands: Vec<_> = ok.iter().flat_map(|k| exercise(k)).collect();
        let replies = c.run(&commands).unwrap_or_else(|e| {
            panic!(
                "{key}: the server died on a restored value ({e}):\n{}",
                s.log()
            )
        });
        let per_key = exercise(b"k").len();
        let dumps: Vec<Vec<u8>> = replies
            .chunks(per_key)
            .map(|r| unrender_bulk(r.last().unwrap()))
            .collect();
        let again: Vec<_> = ok
            .iter()
            .zip(&dumps)
            .flat_map(|(k, d)| {
                let name = [&k[..], b":again"].concat();
                [command!("RESTORE", name, "0", d), command!("DUMP", name)]
            })
            .collect();
        let replies = c.run(&again).expect("the server answers");
        for (pair, d) in replies.chunks(2).zip(&dumps) {
            assert_eq!(pair[0], "+OK", "a DUMP the module made loads");
            assert_eq!(
                unrender_bulk(&pair[1]),
                *d,
                "DUMP → RESTORE → DUMP is stable"
            );
        }
    }
    eprintln!("{accepted} of {tried} mutated sketch and top-k payloads loaded");
    assert!(accepted > 0 && accepted < tried, "{accepted} of {tried}");
    let dbsize = c.one(&[b"DBSIZE"]);
    assert_eq!(c.one(&[b"DEBUG", b"RELOAD"]), "+OK", "{}", s.log());
    assert_eq!(c.one(&[b"DBSIZE"]), dbsize);
    assert_eq!(
        c.one(&[b"BGREWRITEAOF"]),
        "+Background append only file rewriting started"
    );
    crate::persistence::wait_for_rewrite(&mut s.conn());
    s.restart();
    let mut c = Session::connect(s.port);
    assert_eq!(c.one(&[b"DBSIZE"]), dbsize, "{}", s.log());
}

fn cms(width: u64, depth: u64, count: u64, cells: usize) -> Vec<u8> {
    module_payload(
        "CMSk-TYPE",
        0,
        &[
            Field::Unsigned(width),
            Field::Unsigned(depth),
            Field::Unsigned(count),
            Field::Buffer(vec![1; cells]),
        ],
    )
}

fn topk(k: u64, width: u64, depth: u64, decay: f64, buffers: &[Vec<u8>]) -> Vec<u8> {
    let mut fields = vec![
        Field::Unsigned(k),
        Field::Unsigned(width),
        Field::Unsigned(depth),
        Field::Double(decay),
    ];
    fields.extend(buffers.iter().cloned().map(Field::Buffer));
    module_payload("TopK-TYPE", 0, &fields)
}

/// Forged records: sizes whose product overflows, that could never fit in memory (refused
/// before any buffer is read), that do not match their buffers, or are truncated.
#[test]
fn forged_records_are_errors() {
    let s = Server::start();
    let mut c = Session::connect(s.port);
    let ok =
        |c: &mut Session, payload: &[u8]| c.one(&[b"RESTORE", b"k", b"0", payload, b"REPLACE"]);
    assert_eq!(ok(&mut c, &cms(2, 3, 5, 24)), "+OK");
    assert_eq!(
        c.one(&[b"CMS.INFO", b"k"]),
        "[+width, :2, +depth, :3, +count, :5]"
    );
    assert_eq!(
        ok(
            &mut c,
            &topk(1, 1, 1, 0.9, &[vec![0; 8], vec![0; 24], vec![0]])
        ),
        "+OK"
    );
    let refused = [
        cms(u32::MAX as u64, u32::MAX as u64, 0, 24),
        cms(1 << 62, 1 << 2, 0, 24),
        cms(u64::MAX, u64::MAX, 0, 24),
        cms(1 << 40, 1 << 10, 0, 24),
        cms(0, 3, 0, 0),
        cms(2, 3, 5, 23),
        cms(2, 3, 5, 25),
        topk(1 << 32, 1, 1, 0.9, &[vec![0; 8], vec![0; 24], vec![0]]),
        topk(
            u32::MAX as u64,
            u32::MAX as u64,
            u32::MAX as u64,
            0.9,
            &[vec![0; 8]],
        ),
        topk(
            u32::MAX as u64,
            1,
            1,
            0.9,
            &[vec![0; 8], vec![0; 24], vec![0]],
        ),
        topk(1, 1 << 31, 1 << 31, 0.9, &[vec![0; 8]]),
        topk(1, 1, 1, 0.9, &[vec![0; 9], vec![0; 24], vec![0]]),
        topk(2, 1, 1, 0.9, &[vec![0; 8], vec![0; 24], vec![0], vec![0]]),
        topk(1, 1, 1, 0.9, &[vec![0; 8], vec![0; 24]]),
        topk(1, 1, 1, 0.9, &[vec![0; 8], vec![0; 24], b"no-nul".to_vec()]),
        topk(1, 1, 1, f64::NAN, &[vec![0; 8], vec![0; 24], vec![0]]),
        topk(1, 1, 1, 2.0, &[vec![0; 8], vec![0; 24], vec![0]]),
        topk(0, 1, 1, 0.9, &[vec![0; 8], vec![], vec![0]]),
    ];
    for (i, payload) in refused.iter().enumerate() {
        let reply = ok(&mut c, payload);
        assert!(reply.starts_with('-'), "forged record {i}: {reply}");
        assert_eq!(c.one(&[b"PING"]), "+PONG", "{}", s.log());
    }
    let mut c2 = Session::connect(s.port);
    assert_eq!(c2.one(&[b"DBSIZE"]), ":1");
}
