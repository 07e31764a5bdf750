//! The library advises huge pages for arrays written whole (a filter loaded from a file, a
//! batch that writes most of a large array); in Redis never: a key is reserved large and
//! filled a few items per command, its memory is Redis's allocator's, and after a BGSAVE's
//! fork each write to a huge page copies 2 MiB. The module turns the advice off when Redis
//! loads it (`bloomkit::arch::forbid_huge_pages`).

use crate::harness::Server;
use crate::util::{items, q};

/// The mappings of a process that carry the huge-page advice (`hg` among the `VmFlags` of
/// `/proc/<pid>/smaps`): what `madvise(MADV_HUGEPAGE)` records, whether or not the kernel
/// then finds huge pages to give.
fn advised_mappings(pid: u32) -> Vec<String> {
    let smaps = std::fs::read_to_string(format!("/proc/{pid}/smaps")).expect("read smaps");
    let mut mapping = "";
    let mut advised = Vec::new();
    for line in smaps.lines() {
        if let Some(flags) = line.strip_prefix("VmFlags:") {
            if flags.split_whitespace().any(|f| f == "hg") {
                advised.push(mapping.to_string());
            }
        } else if line
            .split_whitespace()
            .next()
            .is_some_and(|r| r.contains('-'))
        {
            mapping = line;
        }
    }
    advised
}

/// Large Bloom and cuckoo filters, reserved, filled by many-item commands, saved and loaded
/// whole (DEBUG RELOAD: each Bloom layer's bits come back in one write, which the library
/// would advise), and restored from a DUMP: no mapping of the server carries the advice.
#[cfg(target_os = "linux")]
#[test]
fn no_filter_memory_in_redis_is_advised_to_use_huge_pages() {
    let s = Server::start();
    let c = &mut s.conn();
    // 10^7 items at 1%: a layer of 11.4 MiB; 10^6 cuckoo buckets of 4 slots: 4 MiB.
    q::<String, _>(c, &["BF.RESERVE", "bf", "0.01", "10000000"]);
    q::<String, _>(c, &["CF.RESERVE", "cf", "4000000"]);
    for chunk in items("x", 0..40_000).chunks(10_000) {
        let mut args = vec!["BF.MADD", "bf"];
        args.extend(chunk.iter().map(String::as_str));
        q::<Vec<bool>, _>(c, &args);
        let mut args = vec!["CF.INSERT", "cf", "ITEMS"];
        args.extend(chunk.iter().map(String::as_str));
        q::<Vec<i64>, _>(c, &args);
    }
    q::<String, _>(c, &["DEBUG", "RELOAD"]);
    let dump: Vec<u8> = q(c, &["DUMP", "bf"]);
    redis::cmd("RESTORE")
        .arg("bf2")
        .arg(0)
        .arg(dump)
        .query::<String>(c)
        .unwrap();
    assert_eq!(q::<i64, _>(c, &["BF.EXISTS", "bf2", "x7"]), 1);
    assert_eq!(q::<i64, _>(c, &["CF.EXISTS", "cf", "x7"]), 1);
    let advised = advised_mappings(s.pid());
    assert!(advised.is_empty(), "advised: {advised:?}");
}
