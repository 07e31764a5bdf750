//! The buffered Bloom filter on disk (Canim et al., ADMS 2010): its page I/O counted
//! against the expected numbers, its false-positive rate against the paged formula, its
//! file kept whole through failed flushes, hostile files refused, and the promises as
//! properties: no false negatives, and the file is the same whatever the buffer.

use crate::conformance;

use bloomkit::buffered::journal_path;
use bloomkit::params::{buffered_distinct_pages_variance, buffered_io_per_insert, fpp_paged};
use bloomkit::stats::{binomial_acceptance, Z_99_9};
use bloomkit::{
    AnyFilter, BloomFilter, BufferedBloomFilter, BufferedOpenOptions, Error, IoStats, Persist,
};
use conformance::{config, key, TempPath};
use proptest::prelude::*;
use std::collections::HashSet;
use std::ops::Range;
use std::path::Path;
use std::thread::JoinHandle;
use std::time::Duration;

fn create(tmp: &TempPath, capacity: u64, fpp: f64, budget: u64) -> BufferedBloomFilter {
    BufferedBloomFilter::builder()
        .capacity(capacity)
        .fpp(fpp)
        .memory_budget(budget)
        .seed(0xd15c)
        .create(&tmp.path)
        .unwrap()
}

/// Inserts `items` into an open filter and flushes them, the flush failing after two
/// pages were written in place: the file holds half-written pages and the flush's whole
/// journal. The filter stays open, mid-flush (`abandon` it: its process died).
fn interrupt_a_flush(filter: &mut BufferedBloomFilter, items: Range<u64>) {
    for i in items {
        filter.insert(&key(i)).unwrap();
    }
    filter.fail_in_place_writes_after(2);
    assert!(filter.flush().is_err());
}

/// The file of a filter whose writer died mid-flush: 1,000 items written, then the flush
/// of 2,000 more interrupted ([`interrupt_a_flush`]). Returns the journal it left.
fn a_file_with_an_interrupted_flush(tmp: &TempPath) -> Vec<u8> {
    let mut filter = create(tmp, 50_000, 0.01, 1 << 20);
    for i in 0..1_000 {
        filter.insert(&key(i)).unwrap();
    }
    filter.close().unwrap();
    let mut writer = BufferedBloomFilter::open(&tmp.path, 1 << 20).unwrap();
    interrupt_a_flush(&mut writer, 1_000..3_000);
    writer.abandon();
    std::fs::read(journal_path(&tmp.path)).unwrap()
}

/// The filter counts `n` insertions and holds the items `0..n`.
#[track_caller]
fn assert_holds_the_first(filter: &mut BufferedBloomFilter, n: u64) {
    assert_eq!(filter.len(), n);
    for i in 0..n {
        assert!(filter.contains(&key(i)).unwrap(), "item {i} of {n} lost");
    }
}

/// An open of `path` with `options` on another thread (as another process's would be),
/// found still waiting 200 ms later for the lock that the caller holds. Join the thread,
/// once the caller has let the file go, for what the open returned.
fn open_waiting(
    path: &Path,
    options: BufferedOpenOptions,
) -> JoinHandle<Result<BufferedBloomFilter, Error>> {
    let (returned, has_returned) = std::sync::mpsc::channel();
    let path = path.to_path_buf();
    let waiter = std::thread::spawn(move || {
        let opened = options.open(&path);
        // Unheard once the 200 ms are over.
        let _ = returned.send(());
        opened
    });
    assert!(
        has_returned
            .recv_timeout(Duration::from_millis(200))
            .is_err(),
        "the open returned while the file was held"
    );
    waiter
}

/// Without a buffer every insert reads its page and writes it back (journaled, with the
/// header), and every query reads one page.
#[test]
fn unbuffered_inserts_cost_one_read_and_one_write_each() {
    let tmp = TempPath::new("unbuffered.bkb");
    let mut filter = create(&tmp, 10_000, 0.01, 0);
    for i in 0..300 {
        filter.insert(&key(i)).unwrap();
    }
    let expected = IoStats {
        page_reads: 300,
        page_writes: 300,
        header_writes: 300,
        journal_pages: 600,
        flushes: 300,
    };
    assert_eq!(filter.stats(), expected);
    assert_eq!(filter.pending(), 0);
    for i in 0..300 {
        assert!(filter.contains(&key(i)).unwrap());
    }
    assert_eq!(filter.stats().page_reads, 600, "one page per query");
    assert_eq!(filter.stats().page_writes, 300, "queries write nothing");
}

/// Buffered, a flush of B pending inserts reads and writes each distinct page once: the
/// counters equal the distinct pages of each batch, computed here from the items, and the
/// cost per insert matches `D/B` of the occupancy formula within its 99.9% interval — far
/// below the unbuffered filter's one read and one write.
#[test]
fn buffered_inserts_cost_one_read_and_write_per_distinct_page_per_batch() {
    let tmp = TempPath::new("buffered.bkb");
    let batch = 1_000u64;
    let batches = 20u64;
    let mut filter = create(&tmp, 2_000_000, 0.01, batch * 16);
    assert_eq!(filter.buffer_capacity(), batch);
    let pages = filter.num_pages();
    assert!((500..700).contains(&pages), "{pages} pages");

    let mut distinct_total = 0;
    for b in 0..batches {
        let mut distinct = HashSet::new();
        for i in b * batch..(b + 1) * batch {
            distinct.insert(filter.page_of(&key(i)));
            filter.insert(&key(i)).unwrap();
        }
        distinct_total += distinct.len() as u64;
        // The batch was flushed when the buffer filled.
        assert_eq!(filter.pending(), 0);
        assert_eq!(filter.stats().page_reads, distinct_total, "batch {b}");
        assert_eq!(filter.stats().page_writes, distinct_total, "batch {b}");
        assert_eq!(filter.stats().flushes, b + 1);
    }
    // One journaled group per flush (fewer than 256 pages): the pages and the header.
    assert_eq!(filter.stats().header_writes, batches);
    assert_eq!(filter.stats().journal_pages, distinct_total + batches);

    // Against theory: E[D] = N(1 − (1 − 1/N)^B) per batch.
    let inserts = (batch * batches) as f64;
    let mean = buffered_io_per_insert(pages, batch) * inserts;
    let sd = (batches as f64 * buffered_distinct_pages_variance(pages, batch)).sqrt();
    let measured = distinct_total as f64;
    assert!(
        (measured - mean).abs() <= Z_99_9 * sd + 1.0,
        "{measured} page reads for {inserts} inserts, theory {mean:.1} ± {sd:.1}"
    );
    // About 0.48 reads and 0.48 writes per insert here, against 1 and 1 unbuffered.
    assert!(measured / inserts < 0.55, "{}", measured / inserts);
    for i in 0..batch * batches {
        assert!(filter.contains(&key(i)).unwrap());
    }
}

/// A query reads its one page and sees the inserts still pending for that page: no false
/// negative before a flush, and the false-positive rate at capacity is the paged formula.
#[test]
fn queries_read_one_page_and_the_rate_is_the_paged_formula() {
    let tmp = TempPath::new("rate.bkb");
    let n = 20_000u64;
    let mut filter = create(&tmp, n, 0.02, n * 16);
    for i in 0..n - 1 {
        filter.insert(&key(i)).unwrap();
    }
    assert_eq!(filter.pending(), n - 1, "nothing flushed yet");
    for i in 0..n - 1 {
        assert!(filter.contains(&key(i)).unwrap(), "pending item {i} missed");
    }
    assert_eq!(filter.stats().page_reads, n - 1);
    assert_eq!(filter.stats().page_writes, 0);
    filter.insert(&key(n - 1)).unwrap();
    assert_eq!(filter.pending(), 0, "the buffer filled and was flushed");

    let queries = 50_000u64;
    let reads = filter.stats().page_reads;
    let false_positives = (n..n + queries)
        .filter(|&i| filter.contains(&key(i)).unwrap())
        .count() as f64;
    assert_eq!(filter.stats().page_reads - reads, queries);
    let theory = fpp_paged(
        filter.num_pages(),
        filter.page_bits(),
        filter.num_hashes(),
        n,
    );
    assert!(theory <= 0.02 && theory > 0.015, "{theory}");
    let (low, high) = binomial_acceptance(theory, queries, Z_99_9);
    assert!(
        (low..=high).contains(&false_positives),
        "{false_positives} false positives in {queries}, theory {theory:.5}: [{low:.0}, {high:.0}]"
    );
}

/// A flush that cannot write its journal fails before the file is touched: the file is
/// byte for byte the old one, the inserts stay pending (and found), and a later flush
/// writes them.
#[test]
fn a_flush_that_cannot_journal_leaves_the_file_untouched() {
    let tmp = TempPath::new("stuck.bkb");
    let mut filter = create(&tmp, 10_000, 0.01, 1 << 20);
    for i in 0..100 {
        filter.insert(&key(i)).unwrap();
    }
    filter.flush().unwrap();
    for i in 100..200 {
        filter.insert(&key(i)).unwrap();
    }
    let before = std::fs::read(&tmp.path).unwrap();
    // A directory where the journal should go: creating the journal fails.
    std::fs::create_dir(journal_path(&tmp.path)).unwrap();
    assert!(matches!(filter.flush(), Err(Error::Io { .. })));
    assert_eq!(std::fs::read(&tmp.path).unwrap(), before);
    assert_eq!((filter.pending(), filter.len()), (100, 200));
    assert!((0..200).all(|i| filter.contains(&key(i)).unwrap()));

    std::fs::remove_dir(journal_path(&tmp.path)).unwrap();
    filter.close().unwrap();
    let mut again = BufferedBloomFilter::open(&tmp.path, 0).unwrap();
    assert_eq!(again.len(), 200);
    assert!((0..200).all(|i| again.contains(&key(i)).unwrap()));
}

/// A flush that dies while overwriting pages in place (after the journal was synced)
/// leaves a file that opens whole: the journal is replayed, every item is there.
#[test]
fn a_flush_that_dies_mid_write_is_completed_from_the_journal() {
    let tmp = TempPath::new("torn.bkb");
    let mut filter = create(&tmp, 50_000, 0.01, 1 << 20);
    assert!(filter.num_pages() > 5);
    interrupt_a_flush(&mut filter, 0..3_000);
    assert!(journal_path(&tmp.path).exists());
    // The process "crashes": nothing more is written.
    filter.abandon();

    let mut again = BufferedBloomFilter::open(&tmp.path, 0).unwrap();
    assert!(!journal_path(&tmp.path).exists(), "replayed and removed");
    assert_holds_the_first(&mut again, 3_000);
}

/// A filter used through a symbolic link keeps its journal beside the file the link names.
/// A flush that dies while the filter is open through the link is completed when the file
/// is next opened by its own name; a journal left beside the link instead was found only
/// through the link, and replayed there over pages written since by the real name: with
/// `bloomkit ssd add`, 38,700 of 50,000 items added through the real name then answered
/// "no".
#[cfg(unix)]
#[test]
fn the_journal_of_a_filter_opened_through_a_link_lies_beside_the_real_file() {
    let tmp = TempPath::new("real.bkb");
    let link = tmp.dir.join("link.bkb");
    std::os::unix::fs::symlink(&tmp.path, &link).unwrap();
    let mut filter = create(&tmp, 50_000, 0.01, 1 << 20);
    for i in 0..100 {
        filter.insert(&key(i)).unwrap();
    }
    filter.close().unwrap();

    let mut through_link = BufferedBloomFilter::open(&link, 1 << 20).unwrap();
    interrupt_a_flush(&mut through_link, 100..3_000);
    // The process "crashes": nothing more is written.
    through_link.abandon();
    assert!(journal_path(&tmp.path).exists());
    assert!(!journal_path(&link).exists());

    // By its own name: the journal is replayed, then more items go in.
    let mut real = BufferedBloomFilter::open(&tmp.path, 1 << 20).unwrap();
    assert_eq!(real.len(), 3_000);
    for i in 3_000..6_000 {
        real.insert(&key(i)).unwrap();
    }
    real.close().unwrap();

    // Through the link again: nothing stale is replayed over them.
    let mut again = BufferedBloomFilter::open(&link, 0).unwrap();
    assert_holds_the_first(&mut again, 6_000);
    assert!(!journal_path(&tmp.path).exists() && !journal_path(&link).exists());
}

/// A new file written where an older one was (`bloomkit ssd build -o F` again) does not
/// take the journal an interrupted flush of the old file left. Replayed into the new file,
/// its pages and header made a file of the same size hold the old file's items and count,
/// and a larger file unreadable (its header then named the old file's pages).
#[test]
fn a_new_file_never_replays_the_journal_of_the_file_it_replaces() {
    for capacity in [50_000, 200_000] {
        let tmp = TempPath::new("again.bkb");
        let mut old = create(&tmp, 50_000, 0.01, 1 << 20);
        interrupt_a_flush(&mut old, 0..3_000);
        old.abandon();
        assert!(journal_path(&tmp.path).exists());

        let mut new = create(&tmp, capacity, 0.01, 1 << 20);
        assert!(!journal_path(&tmp.path).exists());
        assert_eq!((new.len(), new.capacity()), (0, capacity));
        new.insert(&key(1)).unwrap();
        new.close().unwrap();
        let mut again = BufferedBloomFilter::open(&tmp.path, 0).unwrap();
        assert_eq!((again.len(), again.capacity()), (1, capacity));
        assert!(again.contains(&key(1)).unwrap());
    }
}

/// A journal cut short (the crash came while it was written) is discarded: the file opens
/// as it was before that flush.
#[test]
fn an_incomplete_journal_is_discarded() {
    let tmp = TempPath::new("cut.bkb");
    let mut filter = create(&tmp, 10_000, 0.01, 1 << 20);
    for i in 0..50 {
        filter.insert(&key(i)).unwrap();
    }
    filter.close().unwrap();
    let before = std::fs::read(&tmp.path).unwrap();

    let mut filter = BufferedBloomFilter::open(&tmp.path, 1 << 20).unwrap();
    for i in 50..100 {
        filter.insert(&key(i)).unwrap();
    }
    filter.fail_in_place_writes_after(0);
    assert!(filter.flush().is_err());
    filter.abandon();
    let journal = std::fs::read(journal_path(&tmp.path)).unwrap();
    assert_eq!(
        std::fs::read(&tmp.path).unwrap(),
        before,
        "nothing written in place"
    );
    for cut in [0, 8, journal.len() / 2, journal.len() - 1] {
        std::fs::write(journal_path(&tmp.path), &journal[..cut]).unwrap();
        let mut again = BufferedBloomFilter::open(&tmp.path, 0).unwrap();
        assert_eq!(again.len(), 50, "cut {cut}");
        assert!((0..50).all(|i| again.contains(&key(i)).unwrap()));
        drop(again);
        assert_eq!(std::fs::read(&tmp.path).unwrap(), before, "cut {cut}");
        assert!(!journal_path(&tmp.path).exists());
    }
}

/// An open filter holds its file's lock until it is dropped: a second open (a thread here,
/// as another process would) waits for it, or with `wait(false)` fails at once with
/// `Error::Locked`, as does `create` over the file; readers share the file with each
/// other, never with a writer.
#[test]
fn a_file_in_use_is_opened_again_only_once_it_is_closed() {
    let tmp = TempPath::new("busy.bkb");
    let mut writer = create(&tmp, 10_000, 0.01, 1 << 20);
    writer.insert(&key(1)).unwrap(); // pending: written when the writer closes
    let no_wait = || BufferedBloomFilter::options().wait(false);
    let locked = |result: Result<BufferedBloomFilter, Error>| matches!(result, Err(Error::Locked { ref path }) if *path == tmp.path);
    assert!(locked(no_wait().open(&tmp.path)));
    assert!(locked(no_wait().read_only(true).open(&tmp.path)));
    let replace = BufferedBloomFilter::builder().capacity(10).wait(false);
    assert!(locked(replace.create(&tmp.path)));

    // A waiting open returns once the writer has closed, and finds what it wrote.
    let waiter = open_waiting(&tmp.path, BufferedBloomFilter::options().memory_budget(0));
    writer.close().unwrap();
    let mut opened = waiter.join().unwrap().unwrap();
    assert_eq!((opened.len(), opened.contains(&key(1)).unwrap()), (1, true));
    drop(opened);

    // Readers together, and no writer beside them.
    let reader = || BufferedBloomFilter::options().read_only(true).wait(false);
    let (mut a, mut b) = (
        reader().open(&tmp.path).unwrap(),
        reader().open(&tmp.path).unwrap(),
    );
    assert!(a.contains(&key(1)).unwrap() && b.contains(&key(1)).unwrap());
    assert!(locked(no_wait().open(&tmp.path)));
    drop((a, b));
    assert_eq!(no_wait().open(&tmp.path).unwrap().len(), 1);
}

/// While a writer is in the middle of a flush (its journal half written, or whole with
/// pages half overwritten), an open by anyone else cannot get the lock and touches
/// nothing: an open that could used to remove the half-written journal, or replay a stale
/// one over pages written since. Once the writer dies, the journal completes its flush.
#[test]
fn an_open_that_cannot_get_the_lock_leaves_a_flush_in_progress_alone() {
    let tmp = TempPath::new("midflush.bkb");
    let mut writer = create(&tmp, 50_000, 0.01, 1 << 20);
    interrupt_a_flush(&mut writer, 0..3_000); // the writer still has the file: "mid-flush"
    let journal = std::fs::read(journal_path(&tmp.path)).unwrap();
    let file = std::fs::read(&tmp.path).unwrap();
    for cut in [journal.len() / 2, journal.len()] {
        std::fs::write(journal_path(&tmp.path), &journal[..cut]).unwrap();
        for read_only in [false, true] {
            let opened = BufferedBloomFilter::options()
                .read_only(read_only)
                .wait(false)
                .open(&tmp.path);
            assert!(matches!(opened, Err(Error::Locked { .. })), "{read_only}");
            let left = std::fs::read(journal_path(&tmp.path));
            assert_eq!(
                left.ok().as_deref(),
                Some(&journal[..cut]),
                "{cut} {read_only}"
            );
            assert_eq!(std::fs::read(&tmp.path).unwrap(), file);
        }
    }
    writer.abandon(); // the writer's process dies
    let mut again = BufferedBloomFilter::open(&tmp.path, 0).unwrap();
    assert!(!journal_path(&tmp.path).exists());
    assert_holds_the_first(&mut again, 3_000);
}

/// Read-only, a filter opens a file it may not write (mode 0444 here, which does not stop
/// root: the CLI's test runs its check as another user) and never writes: an insert is
/// refused, a journal cut short is left as it is, and a whole one — pages perhaps half
/// written — is an error that says to open the file for writing, which replays it.
#[cfg(unix)]
#[test]
fn a_read_only_open_reads_and_never_writes() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = TempPath::new("ro.bkb");
    let mut filter = create(&tmp, 50_000, 0.01, 1 << 20);
    for i in 0..1_000 {
        filter.insert(&key(i)).unwrap();
    }
    filter.close().unwrap();
    let set_read_only = |read_only: bool| {
        let mode = if read_only { 0o444 } else { 0o644 };
        std::fs::set_permissions(&tmp.path, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    let read_only = || BufferedBloomFilter::options().read_only(true);
    set_read_only(true);
    let mut reader = read_only().open(&tmp.path).unwrap();
    assert!(reader.is_read_only());
    assert!((0..1_000).all(|i| reader.contains(&key(i)).unwrap()));
    let refused = reader.insert(&key(5_000)).unwrap_err().to_string();
    assert!(refused.contains("read-only"), "{refused}");
    assert_eq!((reader.pending(), reader.len()), (0, 1_000));
    drop(reader);
    set_read_only(false);

    // A flush interrupted mid-write leaves its journal.
    let mut writer = BufferedBloomFilter::open(&tmp.path, 1 << 20).unwrap();
    interrupt_a_flush(&mut writer, 1_000..3_000);
    writer.abandon();
    let journal = std::fs::read(journal_path(&tmp.path)).unwrap();
    let file = std::fs::read(&tmp.path).unwrap();
    let error = read_only().open(&tmp.path).unwrap_err();
    assert!(matches!(error, Error::InterruptedWrite { .. }), "{error}");
    assert!(error.to_string().contains("for writing"), "{error}");
    // Cut short, a journal's flush had not begun to write the file: it is read as it is.
    let cut = &journal[..journal.len() - 1];
    std::fs::write(journal_path(&tmp.path), cut).unwrap();
    let mut reader = read_only().open(&tmp.path).unwrap();
    assert!((0..1_000).all(|i| reader.contains(&key(i)).unwrap()));
    drop(reader);
    assert_eq!(std::fs::read(journal_path(&tmp.path)).unwrap(), cut);
    assert_eq!(std::fs::read(&tmp.path).unwrap(), file);
    // Whole again: an open for writing replays it, and readers see the flush complete.
    std::fs::write(journal_path(&tmp.path), &journal).unwrap();
    drop(BufferedBloomFilter::open(&tmp.path, 0).unwrap());
    let mut reader = read_only().open(&tmp.path).unwrap();
    assert_holds_the_first(&mut reader, 3_000);
}

/// `complete_interrupted_write(true)` (what `bloomkit ssd check` asks): a read-only open
/// that finds the whole journal of an interrupted flush completes the flush, as an open for
/// writing does, under the file's exclusive lock — waiting for a reader that has the file,
/// or, not waiting, `Error::Locked` with the journal and the file untouched — and returns
/// the filter read-only, with the shared lock: readers open beside it, writers do not. A
/// file it cannot write it leaves as it is (checked only where the mode stops this user:
/// not root, whom the CLI's test runs as another user for this).
#[cfg(unix)]
#[test]
fn a_read_only_open_may_complete_an_interrupted_flush() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = TempPath::new("complete.bkb");
    let journal = a_file_with_an_interrupted_flush(&tmp);
    let file = std::fs::read(&tmp.path).unwrap();
    let completing = || {
        BufferedBloomFilter::options()
            .read_only(true)
            .complete_interrupted_write(true)
    };
    let untouched = || {
        assert_eq!(std::fs::read(journal_path(&tmp.path)).unwrap(), journal);
        assert_eq!(std::fs::read(&tmp.path).unwrap(), file);
    };

    // A file this user cannot write: refused as without the option.
    std::fs::set_permissions(&tmp.path, std::fs::Permissions::from_mode(0o444)).unwrap();
    if std::fs::OpenOptions::new()
        .write(true)
        .open(&tmp.path)
        .is_err()
    {
        let refused = completing().open(&tmp.path);
        assert!(
            matches!(
                &refused,
                Err(Error::InterruptedWrite { not_completed: Some(why), .. })
                    if why.contains("ermission denied")
            ),
            "{refused:?}"
        );
        untouched();
    }
    std::fs::set_permissions(&tmp.path, std::fs::Permissions::from_mode(0o644)).unwrap();

    // A reader that had the file open before the journal was there keeps the replay out.
    std::fs::remove_file(journal_path(&tmp.path)).unwrap();
    let reader = BufferedBloomFilter::options()
        .read_only(true)
        .open(&tmp.path)
        .unwrap();
    std::fs::write(journal_path(&tmp.path), &journal).unwrap();
    let refused = completing().wait(false).open(&tmp.path);
    assert!(matches!(refused, Err(Error::Locked { .. })));
    untouched();
    let waiter = open_waiting(&tmp.path, completing());
    untouched();
    drop(reader);
    let mut completed = waiter.join().unwrap().unwrap();
    assert!(!journal_path(&tmp.path).exists(), "replayed and removed");
    assert!(completed.is_read_only());
    assert_holds_the_first(&mut completed, 3_000);

    // Read-only, with the shared lock.
    let no_wait = || BufferedBloomFilter::options().wait(false);
    let mut beside = no_wait().read_only(true).open(&tmp.path).unwrap();
    assert_holds_the_first(&mut beside, 3_000);
    assert!(matches!(
        no_wait().open(&tmp.path),
        Err(Error::Locked { .. })
    ));
    drop((completed, beside));

    // The file is the one an open for writing completes.
    let by_a_writer = TempPath::new("by-a-writer.bkb");
    std::fs::write(&by_a_writer.path, &file).unwrap();
    std::fs::write(journal_path(&by_a_writer.path), &journal).unwrap();
    drop(BufferedBloomFilter::open(&by_a_writer.path, 0).unwrap());
    assert_eq!(
        std::fs::read(&tmp.path).unwrap(),
        std::fs::read(&by_a_writer.path).unwrap()
    );
}

/// Damaged and foreign files are errors, never a panic or a huge allocation.
#[test]
fn hostile_files_are_errors() {
    let tmp = TempPath::new("hostile.bkb");
    let mut filter = create(&tmp, 5_000, 0.01, 0);
    filter.insert("x").unwrap();
    let page = filter.page_of("x");
    drop(filter);
    let good = std::fs::read(&tmp.path).unwrap();
    let page_size = 4096usize;

    // Every byte of the header, flipped.
    for i in 0..72 {
        let mut bad = good.clone();
        bad[i] ^= 0x41;
        std::fs::write(&tmp.path, &bad).unwrap();
        assert!(
            BufferedBloomFilter::open(&tmp.path, 0).is_err(),
            "header byte {i}"
        );
    }
    // Cut by a page, or by a byte.
    for cut in [good.len() - page_size, good.len() - 1, 100, 10, 0] {
        std::fs::write(&tmp.path, &good[..cut]).unwrap();
        assert!(
            BufferedBloomFilter::open(&tmp.path, 0).is_err(),
            "cut {cut}"
        );
    }
    // A data page damaged: the query on it fails, it does not answer.
    let mut bad = good.clone();
    bad[(page as usize + 1) * page_size + 17] ^= 0x01;
    std::fs::write(&tmp.path, &bad).unwrap();
    let mut opened = BufferedBloomFilter::open(&tmp.path, 0).unwrap();
    assert!(matches!(
        opened.contains("x"),
        Err(Error::InvalidFile { .. })
    ));
    drop(opened);
    // An in-memory filter's file is not a buffered one, and the other way round.
    BloomFilter::with_capacity(100, 0.01)
        .unwrap()
        .save(&tmp.path)
        .unwrap();
    assert!(BufferedBloomFilter::open(&tmp.path, 0).is_err());
    std::fs::write(&tmp.path, &good).unwrap();
    assert!(AnyFilter::load(&tmp.path).is_err());
    // Absurd sizes are refused before anything is written.
    let absurd = BufferedBloomFilter::builder()
        .capacity(u64::MAX / 4)
        .fpp(1e-9)
        .create(tmp.dir.join("absurd.bkb"));
    assert!(matches!(
        absurd,
        Err(Error::TooLarge { .. } | Error::CapacityTooLarge { .. })
    ));
    assert!(!tmp.dir.join("absurd.bkb").exists());
    let bad_page = BufferedBloomFilter::builder()
        .capacity(10)
        .page_size(1000)
        .create(tmp.dir.join("page.bkb"));
    assert!(matches!(bad_page, Err(Error::InvalidParameter { .. })));
}

proptest! {
    #![proptest_config(config(16))]

    /// Whatever the buffer, no inserted item is ever reported absent (pending or written,
    /// before and after reopening), and the file ends the same as the unbuffered filter's:
    /// a flush only ORs bits in.
    #[test]
    fn the_buffer_changes_the_io_never_the_filter(
        items in prop::collection::vec(0u64..5_000, 0..200),
        budget in prop::sample::select(vec![0u64, 16, 160, 1_600, 16_000, 1 << 20]),
        page_size in prop::sample::select(vec![128u32, 512, 4096]),
    ) {
        let (a, b) = (TempPath::new("a.bkb"), TempPath::new("b.bkb"));
        let build = |tmp: &TempPath, budget: u64| {
            BufferedBloomFilter::builder()
                .capacity(2_000)
                .fpp(0.01)
                .page_size(page_size)
                .memory_budget(budget)
                .create(&tmp.path)
                .unwrap()
        };
        let (mut buffered, mut unbuffered) = (build(&a, budget), build(&b, 0));
        for (n, x) in items.iter().enumerate() {
            buffered.insert(x).unwrap();
            unbuffered.insert(x).unwrap();
            if n % 37 == 0 {
                for y in &items[..=n] {
                    prop_assert!(buffered.contains(y).unwrap(), "{} lost", y);
                }
            }
        }
        buffered.close().unwrap();
        unbuffered.close().unwrap();
        prop_assert_eq!(std::fs::read(&a.path).unwrap(), std::fs::read(&b.path).unwrap());
        let mut reopened = BufferedBloomFilter::open(&a.path, budget).unwrap();
        prop_assert_eq!(reopened.len(), items.len() as u64);
        for x in &items {
            prop_assert!(reopened.contains(x).unwrap());
        }
    }
}
