//! The buffered Bloom filter on solid-state storage (Canim, Mihaila, Bhattacharjee, Lang &
//! Ross, "Buffered Bloom Filters on Solid State Storage", First International Workshop on
//! Accelerating Data Management Systems Using Modern Processor and Storage Architectures,
//! ADMS 2010; cited by the German Wikipedia article "Bloomfilter").
//!
//! # What it is
//!
//! A Bloom filter larger than memory lives in a file, cut into pages of P bytes (4 KiB by
//! default, a flash page). Each item is hashed once to a 128-bit digest; the digest picks
//! one page, and all k bits of the item lie in that page — so any operation on an item
//! touches exactly one page. Inserts are not written at once: they wait in a buffer in
//! memory, kept per page, and when the buffer holds as many inserts as the memory budget
//! allows, every page with pending inserts is read once, updated with all of them, and
//! written once. Random single-bit writes, which flash storage does badly, become a batch
//! of whole-page writes, each serving many inserts. A query reads its one page (and adds the
//! bits of that page's pending inserts, so the answer is the one the fully written filter
//! would give: no false negatives).
//!
//! # Theory (next to the code: `structures/buffered/theory.rs`)
//!
//! * False positives: each page is a classic filter of b = 8(P − 8) bits; with
//!   λ = n/N items per page on average, `FPR = Σ Poisson(i; λ)·(1 − (1 − 1/b)^(ki))^k`
//!   ([`params::fpp_paged`]); the sizing picks the fewest pages that meet ε.
//! * Page I/O: an unbuffered filter (a budget of 0) reads and writes one page per insert.
//!   Flushing batches of B inserts over N pages touches `D = N(1 − (1 − 1/N)^B)` distinct
//!   pages, so an insert costs D/B reads and D/B writes ([`params::buffered_io_per_insert`]).
//!   The counters in [`IoStats`] record every page read and written, so tests hold the
//!   measured cost to these numbers (`tests/suite/buffered.rs`).
//!
//! # Not a registry kind
//!
//! This filter does not implement [`Filter`](crate::Filter): its insert does not know
//! whether the item was new (that would cost the page read buffering avoids), its queries
//! read the disk and can fail, and it is not a value in memory that `Clone` or the
//! in-memory file format could hold. It is its own type with its own file, which carries
//! the crate's magic, format version and kind tag 16, and is refused by `AnyFilter`.
//!
//! # The file, and crash safety
//!
//! ```text
//! page 0      header: magic "BLOOMKIT", version, kind tag 16, hash function, scheme, seed,
//!             page size, N, k, capacity, ε, items written; XXH3-64 of those 64 bytes
//! page 1 + i  data page i: P − 8 bytes of bits, then XXH3-64 of them seeded with i
//! ```
//!
//! Every page read is checked against its checksum (a damaged or misplaced page is an
//! error, never a silent answer). A flush never destroys the old file: the new images of
//! the pages it will write (and of the header) first go to a journal, `FILE.journal`
//! beside the file itself (a symbolic link to it resolved, [`journal_of`], so that the
//! file opened by any of its names finds it), which is synced; only then are the pages overwritten in place, synced, and the journal
//! removed. Opening a filter whose journal is complete replays it (the pages were being
//! written); an incomplete journal (the crash came before the journal was whole) is
//! discarded, and the file is the one before the flush. New files are written to a
//! temporary file and renamed, as every save of the crate is (after removing any journal
//! an earlier file of that name left, which belongs to that file).
//!
//! # One writer at a time
//!
//! An open filter holds a lock on its file ([`FileLock`](crate::FileLock)'s `flock`, taken on
//! the very file it reads and writes) until it is dropped: an exclusive one when opened for
//! writing, a shared one when opened read-only ([`BufferedOpenOptions::read_only`]). So
//! while one handle writes, no other — in another process, or in this one, since the lock
//! belongs to the open file — opens the file: an opener would otherwise replay a journal
//! over pages written since, or remove the journal of a flush that is being written. An
//! open waits for the lock, or with [`BufferedOpenOptions::wait`]`(false)` fails at once
//! with [`Error::Locked`]. [`create`](BufferedBloomFilterBuilder::create) holds the lock
//! of the file it replaces while it removes that file's journal and renames the new file
//! over it.

pub mod theory;

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::codec::Reader;
use crate::error::{DecodeError, Error};
use crate::format::lock::{open_locked, Mode};
use crate::hash::{self, Hashing, HashingChoice, IndexScheme, Item, Positions};
use crate::params;

/// The kind tag of a buffered filter's file (the registry's tags stop below it; issue #14
/// reserves 16 for this filter).
pub const BUFFERED_TAG: u8 = 16;

/// The default page: 4 KiB, the page size of most flash devices and file systems.
pub const DEFAULT_PAGE_SIZE: u32 = 4096;

/// The smallest page accepted: 128 bytes.
pub const MIN_PAGE_SIZE: u32 = 128;

/// The largest page accepted: 1 MiB.
pub const MAX_PAGE_SIZE: u32 = 1 << 20;

/// Memory per pending insert: its 128-bit digest (the buffer's map adds a little per page).
pub const PENDING_ENTRY_BYTES: u64 = 16;

/// The fewest pages a flush journals and writes as one group (256 pages of 4 KiB: 1 MiB
/// of page images in memory while they are written).
pub const MIN_GROUP_PAGES: u64 = 256;

/// Bytes at the end of every page for its checksum.
const CHECKSUM_BYTES: usize = 8;

/// b, the filter bits one page of `page_size` bytes holds: `8·(P − 8)` (its last 8 bytes
/// hold the page's checksum).
///
/// ```
/// assert_eq!(bloomkit::buffered::page_data_bits(4096), 32_704);
/// ```
pub const fn page_data_bits(page_size: u32) -> u64 {
    8 * (page_size as u64 - CHECKSUM_BYTES as u64)
}

/// Bytes of the header that the header checksum covers.
const HEADER_BYTES: usize = 64;

/// The first bytes of a journal file.
const JOURNAL_MAGIC: &[u8; 8] = b"BKJOURNL";

/// The page I/O a buffered filter has done since it was opened, counted as it happens.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IoStats {
    /// Data pages read (by queries and by flushes).
    pub page_reads: u64,
    /// Data pages written in place (by flushes).
    pub page_writes: u64,
    /// Header pages written in place (one per flushed batch of pages).
    pub header_writes: u64,
    /// Pages written to the journal (every page written in place, header included, is
    /// first written there).
    pub journal_pages: u64,
    /// Completed flushes.
    pub flushes: u64,
}

/// A Bloom filter on disk in pages, inserts buffered in memory per page.
///
/// ```
/// use bloomkit::BufferedBloomFilter;
/// let dir = std::env::temp_dir().join(format!("bloomkit-doc-buffered-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("big.bkb");
///
/// // 100 000 items at 1%, with 16 KiB of buffer (1 024 pending inserts).
/// let mut filter = BufferedBloomFilter::builder()
///     .capacity(100_000)
///     .fpp(0.01)
///     .memory_budget(16 << 10)
///     .create(&path)?;
/// for i in 0..5_000u32 {
///     filter.insert(&i)?;
/// }
/// assert!(filter.contains(&42u32)?); // pending or written, never a false "no"
/// filter.close()?;
///
/// let mut again = BufferedBloomFilter::open(&path, 16 << 10)?;
/// assert_eq!(again.len(), 5_000);
/// assert!(again.contains(&4_999u32)?);
/// assert_eq!(again.stats().page_reads, 1); // a query reads one page
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), bloomkit::Error>(())
/// ```
#[derive(Debug)]
pub struct BufferedBloomFilter {
    /// The file, locked for as long as the filter is open: exclusively, or shared when
    /// `read_only`. Dropping it releases the lock.
    file: File,
    /// Opened read-only: inserts are refused, nothing is ever written.
    read_only: bool,
    path: PathBuf,
    /// The journal: beside the file itself, wherever a symbolic link to it was opened.
    journal: PathBuf,
    page_size: u32,
    num_pages: u64,
    num_hashes: u32,
    hashing: Hashing,
    capacity: u64,
    target_fpp: f64,
    /// Insertions written to the file.
    written: u64,
    /// Pending inserts: digests by page.
    pending: HashMap<u64, Vec<u128>>,
    pending_len: u64,
    memory_budget: u64,
    stats: IoStats,
    /// Test hook: in-place writes allowed before an injected failure.
    writes_before_failure: Option<u64>,
}

impl BufferedBloomFilter {
    /// A builder for a new file: capacity, ε, page size, memory budget, hashing.
    pub fn builder() -> BufferedBloomFilterBuilder {
        BufferedBloomFilterBuilder::default()
    }

    /// Opens a filter file for reading and writing, with `memory_budget` bytes for pending
    /// inserts (0: every insert is written at once), waiting while another open filter holds
    /// the file: [`options`](Self::options)`().memory_budget(memory_budget).open(path)`,
    /// where [`BufferedOpenOptions::open`] says what opening checks and what it locks.
    pub fn open(path: impl AsRef<Path>, memory_budget: u64) -> Result<Self, Error> {
        Self::options().memory_budget(memory_budget).open(path)
    }

    /// Options for opening a filter file: the memory budget, read-only or not, and whether
    /// to wait for the file's lock.
    ///
    /// ```
    /// use bloomkit::{BufferedBloomFilter, Error};
    /// # let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("big.bkb");
    /// let mut writer = BufferedBloomFilter::builder().capacity(10_000).create(&path)?;
    /// writer.insert("x")?;
    ///
    /// // While the writer has the file open, another open fails at once instead of waiting.
    /// let busy = BufferedBloomFilter::options().wait(false).open(&path);
    /// assert!(matches!(busy, Err(Error::Locked { .. })));
    /// writer.close()?;
    ///
    /// // Readers share the file (and need no write permission for it).
    /// let mut a = BufferedBloomFilter::options().read_only(true).open(&path)?;
    /// let mut b = BufferedBloomFilter::options().read_only(true).wait(false).open(&path)?;
    /// assert!(a.contains("x")? && b.contains("x")?);
    /// assert!(a.insert("y").is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn options() -> BufferedOpenOptions {
        BufferedOpenOptions::default()
    }

    fn open_with(path: &Path, options: &BufferedOpenOptions) -> Result<Self, Error> {
        loop {
            match Self::open_once(path, options) {
                Err(Error::InterruptedWrite { path, journal, .. })
                    if options.complete_interrupted_write =>
                {
                    if let Err(denied) = complete_interrupted_write(&path, options.wait)? {
                        return Err(Error::InterruptedWrite {
                            path,
                            journal,
                            not_completed: Some(denied.to_string()),
                        });
                    }
                    // Completed, and the exclusive lock released: open again as asked. A
                    // writer may have gone first and died mid-flush in turn, so the
                    // journal is looked at again, under the lock of this open.
                }
                opened => return opened,
            }
        }
    }

    /// One open as `options` say, a read-only one refusing a whole journal
    /// ([`Error::InterruptedWrite`]) whatever `complete_interrupted_write` says.
    fn open_once(path: &Path, options: &BufferedOpenOptions) -> Result<Self, Error> {
        let path = path.to_path_buf();
        let context = |what: &str| format!("{what} {}", path.display());
        let (mode, mut how) = (options.mode(), OpenOptions::new());
        how.read(true).write(!options.read_only);
        let mut file = open_locked(&path, &how, mode, options.wait)
            .map_err(|e| Error::io(context("opening"), e))?
            .ok_or_else(|| Error::Locked { path: path.clone() })?;
        let journal = journal_of(&path);
        if options.read_only {
            refuse_journal(&path, &journal, &file)?;
        } else {
            replay_journal(&journal, &mut file)?;
        }
        let file_len = file
            .metadata()
            .map_err(|e| Error::io(context("reading"), e))?
            .len();
        let mut header = [0u8; HEADER_BYTES + CHECKSUM_BYTES];
        file.seek(SeekFrom::Start(0))
            .and_then(|_| read_up_to(&mut file, &mut header))
            .map_err(|e| Error::io(context("reading"), e))
            .and_then(|got| {
                decode_header(&header[..got], file_len).map_err(|error| Error::InvalidFile {
                    path: path.clone(),
                    error,
                })
            })
            .map(|h| BufferedBloomFilter {
                file,
                read_only: options.read_only,
                path: path.clone(),
                journal,
                page_size: h.page_size,
                num_pages: h.num_pages,
                num_hashes: h.num_hashes,
                hashing: h.hashing,
                capacity: h.capacity,
                target_fpp: h.target_fpp,
                written: h.written,
                pending: HashMap::new(),
                pending_len: 0,
                memory_budget: options.memory_budget,
                stats: IoStats::default(),
                writes_before_failure: None,
            })
    }

    /// The page an item's bits lie in: `reduce(mix64(lo ⊕ rotl(hi, 32)), N)` of its digest,
    /// a mix of both halves, so that the page does not repeat the in-page positions (which
    /// enhanced double hashing takes from `lo` and `hi` themselves).
    pub fn page_of<I: Item + ?Sized>(&self, item: &I) -> u64 {
        self.page_of_digest(self.digest(item))
    }

    fn digest<I: Item + ?Sized>(&self, item: &I) -> u128 {
        item.with_bytes(|bytes| self.hashing.digest(bytes))
    }

    fn page_of_digest(&self, digest: u128) -> u64 {
        let (lo, hi) = (digest as u64, (digest >> 64) as u64);
        hash::reduce(hash::mix64(lo ^ hi.rotate_left(32)), self.num_pages)
    }

    /// b, the bits of one page: `8·(P − 8)` (the last 8 bytes hold its checksum).
    pub fn page_bits(&self) -> u64 {
        page_data_bits(self.page_size)
    }

    /// Sets an item's k bits in a page image.
    fn apply(&self, image: &mut [u8], digest: u128) {
        for p in Positions::from_digest(digest, self.num_hashes, self.page_bits()) {
            image[(p / 8) as usize] |= 1 << (p % 8);
        }
    }

    /// Whether an item's k bits are all set in a page image.
    fn holds(&self, image: &[u8], digest: u128) -> bool {
        Positions::from_digest(digest, self.num_hashes, self.page_bits())
            .all(|p| image[(p / 8) as usize] & (1 << (p % 8)) != 0)
    }

    /// The pending inserts the memory budget holds: `budget / 16` (at least one: a budget
    /// of 0 writes every insert at once).
    pub fn buffer_capacity(&self) -> u64 {
        (self.memory_budget / PENDING_ENTRY_BYTES).max(1)
    }

    /// Adds an item: into the buffer, and when the buffer is full, a [`flush`](Self::flush).
    /// An error comes from that flush; the item and every other pending insert stay in the
    /// buffer (nothing is lost), and the file is as before or recoverable from the journal.
    ///
    /// # Errors
    /// Besides a flush's, an [`Error::Io`] for a filter opened
    /// [read-only](BufferedOpenOptions::read_only); the item is not kept.
    pub fn insert<I: Item + ?Sized>(&mut self, item: &I) -> Result<(), Error> {
        if self.read_only {
            return Err(Error::io(
                format!("adding to {}", self.path.display()),
                std::io::Error::other("the filter was opened read-only"),
            ));
        }
        let digest = self.digest(item);
        let page = self.page_of_digest(digest);
        self.pending.entry(page).or_default().push(digest);
        self.pending_len += 1;
        if self.pending_len >= self.buffer_capacity() {
            self.flush()?;
        }
        Ok(())
    }

    /// `false` if the item is certainly absent, `true` if it may be present. Reads the
    /// item's one page and adds that page's pending inserts, so the answer is the fully
    /// written filter's.
    pub fn contains<I: Item + ?Sized>(&mut self, item: &I) -> Result<bool, Error> {
        let digest = self.digest(item);
        let page = self.page_of_digest(digest);
        let mut image = self.read_page(page)?;
        for &pending in self.pending.get(&page).into_iter().flatten() {
            self.apply(&mut image, pending);
        }
        Ok(self.holds(&image, digest))
    }

    /// Writes every pending insert: each page with pending inserts is read once, updated,
    /// journaled and written once; pages go in order of their place in the file, in groups
    /// of as many pages as the memory budget holds (at least [`MIN_GROUP_PAGES`]), each
    /// group journaled on its own; the header (with the count of items written) goes with
    /// the last group. A crash between groups keeps every group written before it (and
    /// the journaled one), with the header's count from the flush before.
    pub fn flush(&mut self) -> Result<(), Error> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let mut pages: Vec<u64> = self.pending.keys().copied().collect();
        pages.sort_unstable();
        let group = (self.memory_budget / self.page_size as u64).max(MIN_GROUP_PAGES) as usize;
        let groups = pages.len().div_ceil(group);
        for (g, chunk) in pages.chunks(group).enumerate() {
            let last = g + 1 == groups;
            let mut images = Vec::with_capacity(chunk.len() + 1);
            let mut items = 0;
            for &page in chunk {
                let mut image = self.read_page(page)?;
                let digests = &self.pending[&page];
                for &digest in digests {
                    self.apply(&mut image, digest);
                }
                items += digests.len() as u64;
                seal_page(&mut image, page);
                images.push((page + 1, image));
            }
            if last {
                let written = self.written + self.pending_len;
                images.push((0, self.header_page(written)));
            }
            self.write_journal(&images)?;
            for (file_page, image) in &images {
                self.write_in_place(*file_page, image)?;
            }
            self.file
                .sync_all()
                .map_err(|e| Error::io(format!("syncing {}", self.path.display()), e))?;
            let _ = std::fs::remove_file(&self.journal);
            self.stats.page_writes += chunk.len() as u64;
            self.stats.header_writes += last as u64;
            for page in chunk {
                self.pending.remove(page);
            }
            self.pending_len -= items;
            self.written += items;
        }
        self.stats.flushes += 1;
        Ok(())
    }

    /// Flushes and closes the file, reporting any error (dropping the filter flushes too,
    /// but cannot report a failure).
    pub fn close(mut self) -> Result<(), Error> {
        self.flush()
    }

    crate::sizing::getters! {
        /// The page I/O done since the filter was opened.
        stats: IoStats;
    }

    /// The number of insertions, pending ones included (repeats count: an insert does not
    /// read its page, so it cannot know whether the item was new).
    pub fn len(&self) -> u64 {
        self.written + self.pending_len
    }

    /// Whether nothing was ever inserted.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Inserts waiting in memory.
    pub fn pending(&self) -> u64 {
        self.pending_len
    }

    crate::sizing::getters! {
        /// N, the data pages.
        num_pages: u64;

        /// P, the bytes of a page.
        page_size: u32;

        /// k, the bits per item (all in its page).
        num_hashes: u32;

        /// The hashing (the positions are always enhanced double hashing of the digest).
        hashing: Hashing;

        /// n, the items the filter was sized for.
        capacity: u64;

        /// ε, the false-positive probability at capacity.
        target_fpp: f64;
    }

    /// The false-positive probability after n items ([`params::fpp_paged`]).
    pub fn fpp_at(&self, n: u64) -> f64 {
        params::fpp_paged(self.num_pages, self.page_bits(), self.num_hashes, n)
    }

    crate::sizing::getters! {
        /// The bytes for pending inserts.
        memory_budget: u64;
    }

    /// The size of the file: the header page and N data pages.
    pub fn file_bytes(&self) -> u64 {
        (self.num_pages + 1) * self.page_size as u64
    }

    /// Whether the filter was opened read-only ([`BufferedOpenOptions::read_only`]).
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// Test hook: closes the file without writing what is pending, as a process that dies
    /// does (its lock goes with the file; a journal stays as it is).
    #[doc(hidden)]
    pub fn abandon(mut self) {
        self.pending.clear();
        self.pending_len = 0;
    }

    /// Test hook: let `writes` more in-place page writes succeed, then fail every one (as
    /// a full disk or a pulled cable would), to check that the file survives.
    #[doc(hidden)]
    pub fn fail_in_place_writes_after(&mut self, writes: u64) {
        self.writes_before_failure = Some(writes);
    }

    /// Reads and checks data page `page`.
    fn read_page(&mut self, page: u64) -> Result<Vec<u8>, Error> {
        let mut image = vec![0u8; self.page_size as usize];
        let offset = (page + 1) * self.page_size as u64;
        self.file
            .seek(SeekFrom::Start(offset))
            .and_then(|_| self.file.read_exact(&mut image))
            .map_err(|e| Error::io(format!("reading {}", self.path.display()), e))?;
        self.stats.page_reads += 1;
        let (bits, stored) = image.split_at(image.len() - CHECKSUM_BYTES);
        let computed = xxhash_rust::xxh3::xxh3_64_with_seed(bits, page);
        if stored != computed.to_le_bytes() {
            return Err(Error::InvalidFile {
                path: self.path.clone(),
                error: crate::codec::invalid(
                    "page",
                    format!("page {page} does not match its checksum"),
                ),
            });
        }
        Ok(image)
    }

    /// The header page with `written` insertions.
    fn header_page(&self, written: u64) -> Vec<u8> {
        let mut page = Header {
            hashing: self.hashing,
            page_size: self.page_size,
            num_pages: self.num_pages,
            num_hashes: self.num_hashes,
            capacity: self.capacity,
            target_fpp: self.target_fpp,
            written,
        }
        .encode();
        page.resize(self.page_size as usize, 0);
        page
    }

    /// Writes the journal of a group of page images and syncs it.
    fn write_journal(&mut self, images: &[(u64, Vec<u8>)]) -> Result<(), Error> {
        let path = &self.journal;
        let mut bytes = Vec::with_capacity(images.len() * (self.page_size as usize + 8) + 28);
        bytes.extend_from_slice(JOURNAL_MAGIC);
        bytes.extend_from_slice(&self.page_size.to_le_bytes());
        bytes.extend_from_slice(&(images.len() as u64).to_le_bytes());
        for (file_page, image) in images {
            bytes.extend_from_slice(&file_page.to_le_bytes());
            bytes.extend_from_slice(image);
        }
        let sum = xxhash_rust::xxh3::xxh3_64(&bytes);
        bytes.extend_from_slice(&sum.to_le_bytes());
        File::create(path)
            .and_then(|mut f| f.write_all(&bytes).and_then(|()| f.sync_all()))
            .map_err(|e| Error::io(format!("writing {}", path.display()), e))?;
        self.stats.journal_pages += images.len() as u64;
        Ok(())
    }

    fn write_in_place(&mut self, file_page: u64, image: &[u8]) -> Result<(), Error> {
        let context = || format!("writing {}", self.path.display());
        if let Some(left) = self.writes_before_failure.as_mut() {
            if *left == 0 {
                return Err(Error::io(
                    context(),
                    std::io::Error::other("injected write failure"),
                ));
            }
            *left -= 1;
        }
        self.file
            .seek(SeekFrom::Start(file_page * self.page_size as u64))
            .and_then(|_| self.file.write_all(image))
            .map_err(|e| Error::io(context(), e))
    }
}

impl Drop for BufferedBloomFilter {
    /// Writes what is pending; errors cannot be reported here (use
    /// [`close`](BufferedBloomFilter::close) to see them), and a failed flush leaves the
    /// file as before or recoverable from its journal.
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

/// How to open an existing [`BufferedBloomFilter`] file ([`BufferedBloomFilter::options`]):
/// its memory budget, for writing or read-only, and whether to wait for its lock.
///
/// ```
/// use bloomkit::BufferedBloomFilter;
/// # let dir = tempfile::tempdir()?;
/// # let path = dir.path().join("f.bkb");
/// # BufferedBloomFilter::builder().capacity(1_000).create(&path)?.close()?;
/// let filter = BufferedBloomFilter::options()
///     .memory_budget(64 << 20) // 4 Mi pending inserts
///     .wait(false)             // Error::Locked, not a wait, if the file is in use
///     .open(&path)?;
/// assert_eq!(filter.buffer_capacity(), 4 << 20);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
#[must_use = "options do nothing until .open() is called"]
pub struct BufferedOpenOptions {
    memory_budget: u64,
    read_only: bool,
    complete_interrupted_write: bool,
    wait: bool,
}

impl Default for BufferedOpenOptions {
    /// A 1 MiB budget, for writing, waiting for the lock.
    fn default() -> Self {
        BufferedOpenOptions {
            memory_budget: 1 << 20,
            read_only: false,
            complete_interrupted_write: false,
            wait: true,
        }
    }
}

impl BufferedOpenOptions {
    /// The bytes of memory for pending inserts (16 per insert; default 1 MiB). 0 writes
    /// every insert at once.
    pub fn memory_budget(mut self, bytes: u64) -> Self {
        self.memory_budget = bytes;
        self
    }

    /// Opens the file for reading only (default `false`): it need not be writable (a file
    /// of mode 0444, a read-only mount), inserts are refused, nothing is ever written, and
    /// the lock taken is a shared one, so any number of readers have the file open together
    /// — but never beside a writer. A journal of an interrupted flush cannot be replayed
    /// this way: if one is whole, the open fails with [`Error::InterruptedWrite`] (the file
    /// may hold half-written pages), and it takes an open for writing, by someone who can
    /// write the file, to complete that flush — or a read-only open that may do so,
    /// [`complete_interrupted_write`](Self::complete_interrupted_write). A journal cut short
    /// is left alone (the flush that wrote it never touched the file; the next open for
    /// writing removes it).
    pub fn read_only(mut self, read_only: bool) -> Self {
        self.read_only = read_only;
        self
    }

    /// Whether a [read-only](Self::read_only) open that finds the whole journal of an
    /// interrupted flush completes that flush when this user can write the file (default
    /// `false`: it fails with [`Error::InterruptedWrite`]). It then does what an open for
    /// writing does first: takes the file's exclusive lock (waiting for it unless
    /// [`wait`](Self::wait)`(false)`, which fails with [`Error::Locked`] instead), replays
    /// the journal and removes it; then it releases that lock and opens the file read-only
    /// as asked, with the shared lock — the filter returned is read-only, and other readers
    /// share the file with it as with any reader. (Keeping the exclusive lock would keep
    /// every other reader out for as long as the filter is open; `flock` cannot turn it
    /// into a shared one without letting go of it either.) A writer that takes the file in
    /// between and is interrupted in turn leaves its own journal, which this open finds and
    /// completes too.
    ///
    /// A file this user cannot open for writing (its mode, a read-only mount) is not
    /// touched: the open fails with [`Error::InterruptedWrite`], as without this option,
    /// with the operating system's reason in `not_completed`.
    /// An open for writing replays a whole journal anyway, so the option changes only
    /// read-only opens.
    ///
    /// ```
    /// use bloomkit::{BufferedBloomFilter, Error};
    /// # let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("big.bkb");
    /// let mut writer = BufferedBloomFilter::builder().capacity(10_000).create(&path)?;
    /// writer.insert("x")?;
    /// // The writer's process dies in the middle of a flush (simulated: a failed page
    /// // write, then the file closed without another): its journal stays behind.
    /// writer.fail_in_place_writes_after(1);
    /// assert!(writer.flush().is_err());
    /// writer.abandon();
    ///
    /// let reader = || BufferedBloomFilter::options().read_only(true);
    /// assert!(matches!(reader().open(&path), Err(Error::InterruptedWrite { .. })));
    /// let mut filter = reader().complete_interrupted_write(true).open(&path)?;
    /// assert!(filter.is_read_only());
    /// assert!(filter.contains("x")?);
    /// assert!(!bloomkit::buffered::journal_of(&path).exists());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn complete_interrupted_write(mut self, complete: bool) -> Self {
        self.complete_interrupted_write = complete;
        self
    }

    /// Whether to wait while another open filter holds the file's lock (default `true`),
    /// or fail at once with [`Error::Locked`]. A writer waits for everyone else, a reader
    /// for writers only. Note that a second open of a file this thread already has open
    /// waits for ever: the lock is per open file, so it conflicts within one process too.
    pub fn wait(mut self, wait: bool) -> Self {
        self.wait = wait;
        self
    }

    /// Opens the filter file at `path`. A complete journal left by an interrupted flush is
    /// replayed first; an incomplete one is discarded (read-only: see
    /// [`read_only`](Self::read_only)). The header is checked before anything is trusted:
    /// magic, version, kind, checksum, and its sizes against the file's real length.
    ///
    /// The file is locked before its journal is looked at, and stays locked until the
    /// filter is dropped ([module docs](crate::buffered#one-writer-at-a-time)). Do not hold a
    /// [`FileLock`](crate::FileLock) on the file while opening it (the two locks conflict).
    ///
    /// The journal lies beside the file itself: a `path` that is a symbolic link is
    /// resolved ([`journal_of`]), so that the file opened by any of its names finds the
    /// journal of an interrupted flush. A *hard* link is another name of the file that
    /// nothing leads back from: a flush interrupted while the file was open by one name
    /// leaves its journal beside that name, which an open by another name does not see — it
    /// may read pages of that flush half written (an error: each page has its checksum),
    /// and once it has written pages of its own, an open by the first name replays the old
    /// journal over them. Open a file that has hard links by one of its names only (or
    /// give the others as symbolic links).
    ///
    /// # Errors
    /// [`Error::Locked`] if the file is in use and not waiting; [`Error::InterruptedWrite`]
    /// read-only with a journal to replay (unless
    /// [`complete_interrupted_write`](Self::complete_interrupted_write) and the file is
    /// writable); [`Error::Io`] if the file cannot be opened (it
    /// does not exist, or is not writable and not opened read-only), read or, replaying
    /// its journal, written; [`Error::InvalidFile`] for a file that is not a valid filter.
    pub fn open(&self, path: impl AsRef<Path>) -> Result<BufferedBloomFilter, Error> {
        BufferedBloomFilter::open_with(path.as_ref(), self)
    }

    fn mode(&self) -> Mode {
        if self.read_only {
            Mode::Shared
        } else {
            Mode::Exclusive
        }
    }
}

/// Builds a new [`BufferedBloomFilter`] file.
///
/// ```
/// use bloomkit::BufferedBloomFilter;
/// let path = std::env::temp_dir().join(format!("bloomkit-doc-builder-{}.bkb", std::process::id()));
/// let filter = BufferedBloomFilter::builder().capacity(1_000_000).fpp(0.01).create(&path)?;
/// // 4 KiB pages; about 9.7 bits per item, a classic filter's 9.6 plus the paging penalty.
/// assert_eq!(filter.page_size(), 4096);
/// assert!(filter.file_bytes() < 1_000_000 * 10 / 8 + 2 * 4096);
/// # drop(filter);
/// # std::fs::remove_file(&path).unwrap();
/// # Ok::<(), bloomkit::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
#[must_use = "a builder does nothing until .create() is called"]
pub struct BufferedBloomFilterBuilder {
    capacity: Option<u64>,
    fpp: Option<f64>,
    page_size: Option<u32>,
    memory_budget: Option<u64>,
    hashing: HashingChoice,
    no_wait: bool,
}

impl BufferedBloomFilterBuilder {
    crate::hash::hashing_setters!();

    crate::sizing::capacity_and_fpp_setters!();

    crate::sizing::setters! {
        /// P, the bytes of a page: a power of two from 128 bytes to 1 MiB (default 4 KiB).
        page_size: u32;

        /// The bytes of memory for pending inserts (16 per insert; default 1 MiB). 0 writes
        /// every insert at once: the unbuffered filter.
        memory_budget: u64;
    }

    /// Whether [`create`](Self::create) waits while an open filter holds the file it would
    /// replace (default `true`), or fails at once with [`Error::Locked`], replacing nothing.
    pub fn wait(mut self, wait: bool) -> Self {
        self.no_wait = !wait;
        self
    }

    /// Sizes the filter and writes its empty file at `path` (atomically: a temporary file
    /// renamed into place), then opens it for writing.
    ///
    /// A file already at `path` is replaced once nobody has it open: its lock is taken
    /// (waiting, unless [`wait`](Self::wait)`(false)`) and held while its journal is
    /// removed and the new file is renamed over it.
    pub fn create(self, path: impl AsRef<Path>) -> Result<BufferedBloomFilter, Error> {
        let path = path.as_ref();
        let fpp = crate::sizing::fpp(self.fpp)?;
        let capacity = self.capacity.ok_or(Error::ZeroCapacity)?;
        let page_size = self.page_size.unwrap_or(DEFAULT_PAGE_SIZE);
        check_page_size(page_size).map_err(|reason| Error::InvalidParameter {
            parameter: "page size",
            reason,
        })?;
        let page_bits = page_data_bits(page_size);
        let (num_pages, num_hashes) = params::buffered_dimensions(capacity, fpp, page_bits)?;
        let hashing = self.hashing.resolve()?;
        let mut header = Header {
            hashing,
            page_size,
            num_pages,
            num_hashes,
            capacity,
            target_fpp: fpp,
            written: 0,
        }
        .encode();
        header.resize(page_size as usize, 0);
        // The file this one replaces may be open: wait until it is not, and keep others out
        // until the new file is in its place (they then wait for the new file's lock,
        // which its open below takes). No file there needs no lock; one this user cannot
        // open cannot be locked, and is replaced as before.
        let mut how = OpenOptions::new();
        how.read(true);
        let replaced = match open_locked(path, &how, Mode::Exclusive, !self.no_wait) {
            Ok(Some(file)) => Some(file),
            Ok(None) => return Err(Error::Locked { path: path.into() }),
            Err(_) => None,
        };
        // A journal left by an interrupted flush of an earlier file of this name belongs to
        // that file: replayed into the new one when it opens, it would put the old file's
        // pages and header there (and a header of other sizes makes the file unreadable).
        let journal = journal_of(path);
        match std::fs::remove_file(&journal) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(Error::io(format!("removing {}", journal.display()), e))
            }
            _ => {}
        }
        crate::codec::write_atomically_with(path, |file| {
            let mut out = std::io::BufWriter::new(file);
            out.write_all(&header)?;
            let mut page = vec![0u8; page_size as usize];
            for i in 0..num_pages {
                page.fill(0);
                seal_page(&mut page, i);
                out.write_all(&page)?;
            }
            out.flush()
        })?;
        let filter = BufferedBloomFilter::options()
            .memory_budget(self.memory_budget.unwrap_or(1 << 20))
            .open(path);
        drop(replaced);
        filter
    }
}

/// Writes the checksum of data page `page` into its last 8 bytes.
fn seal_page(image: &mut [u8], page: u64) {
    let at = image.len() - CHECKSUM_BYTES;
    let sum = xxhash_rust::xxh3::xxh3_64_with_seed(&image[..at], page);
    image[at..].copy_from_slice(&sum.to_le_bytes());
}

fn check_page_size(page_size: u32) -> Result<(), String> {
    if !page_size.is_power_of_two() || !(MIN_PAGE_SIZE..=MAX_PAGE_SIZE).contains(&page_size) {
        return Err(format!(
            "{page_size} is not a power of two from {MIN_PAGE_SIZE} to {MAX_PAGE_SIZE}"
        ));
    }
    Ok(())
}

/// The journal of a filter file: the same name with `.journal` appended.
pub fn journal_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".journal");
    PathBuf::from(name)
}

/// The journal a [`BufferedBloomFilter`] opened at `path` uses: [`journal_path`] of the
/// file itself, `path` with every symbolic link resolved (`path` as given if it cannot be
/// resolved). A journal named after a link would be found only through that link: a flush
/// interrupted there would not be completed when the file is next opened by its own name,
/// and its stale pages would be replayed over newer ones once the link was used again.
pub fn journal_of(path: &Path) -> PathBuf {
    journal_path(&std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()))
}

/// What the header page says.
struct Header {
    hashing: Hashing,
    page_size: u32,
    num_pages: u64,
    num_hashes: u32,
    capacity: u64,
    target_fpp: f64,
    written: u64,
}

impl Header {
    /// The header's 64 bytes and their checksum (72 bytes).
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER_BYTES + CHECKSUM_BYTES);
        let hashing = Hashing {
            scheme: IndexScheme::EnhancedDoubleHashing,
            ..self.hashing
        };
        crate::codec::write_prefix(&mut out, BUFFERED_TAG, hashing);
        out.extend_from_slice(&self.page_size.to_le_bytes());
        out.extend_from_slice(&self.num_pages.to_le_bytes());
        out.extend_from_slice(&self.num_hashes.to_le_bytes());
        out.extend_from_slice(&self.capacity.to_le_bytes());
        out.extend_from_slice(&self.target_fpp.to_le_bytes());
        out.extend_from_slice(&self.written.to_le_bytes());
        debug_assert_eq!(out.len(), HEADER_BYTES);
        let sum = xxhash_rust::xxh3::xxh3_64(&out);
        out.extend_from_slice(&sum.to_le_bytes());
        out
    }
}

/// Checks a header against itself and against the file's real length.
fn decode_header(bytes: &[u8], file_len: u64) -> Result<Header, DecodeError> {
    if let Some(error) = another_bloomkit_file(bytes) {
        return Err(error);
    }
    let mut r = Reader::new(bytes);
    let (tag, function, scheme, seed) = crate::codec::read_prefix(&mut r)?;
    if tag != BUFFERED_TAG {
        return Err(crate::codec::invalid(
            "kind",
            format!("tag {tag} is not a buffered (on-disk) filter, whose tag is {BUFFERED_TAG}"),
        ));
    }
    let page_size = r.u32()?;
    let num_pages = r.u64()?;
    let num_hashes = r.u32()?;
    let capacity = r.u64()?;
    let target_fpp = r.f64()?;
    let written = r.u64()?;
    let stored = r.u64()?;
    let computed = xxhash_rust::xxh3::xxh3_64(&bytes[..HEADER_BYTES]);
    if stored != computed {
        return Err(DecodeError::ChecksumMismatch { stored, computed });
    }
    let invalid = |field, e: Error| crate::codec::invalid(field, e.to_string());
    let function =
        hash::HashFunction::from_id(function).map_err(|e| invalid("hash function", e))?;
    if scheme != IndexScheme::EnhancedDoubleHashing.id() {
        return Err(crate::codec::invalid(
            "index scheme",
            "a buffered filter uses enhanced double hashing".into(),
        ));
    }
    check_page_size(page_size).map_err(|reason| crate::codec::invalid("page_size", reason))?;
    let page_bits = page_data_bits(page_size);
    if num_pages == 0 || num_pages.saturating_mul(page_bits) > params::MAX_NUM_BITS {
        return Err(crate::codec::invalid(
            "num_pages",
            format!("{num_pages} pages of {page_size} bytes"),
        ));
    }
    let expected_len = (num_pages + 1) * page_size as u64;
    if expected_len != file_len {
        return Err(DecodeError::Truncated {
            offset: 0,
            needed: expected_len,
            available: file_len.min(usize::MAX as u64) as usize,
        });
    }
    crate::codec::check_num_hashes(num_hashes)?;
    crate::codec::check_capacity(capacity)?;
    crate::codec::check_target_fpp(target_fpp)?;
    Ok(Header {
        hashing: Hashing {
            function,
            scheme: IndexScheme::EnhancedDoubleHashing,
            seed,
        },
        page_size,
        num_pages,
        num_hashes,
        capacity,
        target_fpp,
        written,
    })
}

/// The error for a file that is another structure in one of bloomkit's own formats (a filter
/// kind of the registry in format version 1 or 2, or a Bloomier filter) rather than a
/// buffered filter: it says what the file is and how to ask it, instead of the version or
/// tag the buffered header does not accept. `None` for anything else (a buffered file, or
/// bytes that are not bloomkit's), which the header's own checks judge.
fn another_bloomkit_file(bytes: &[u8]) -> Option<DecodeError> {
    use crate::codec::{CHUNKED_FORMAT_VERSION, FORMAT_VERSION, MAGIC};
    if bytes.get(..MAGIC.len())? != MAGIC {
        return None;
    }
    let at = MAGIC.len();
    let version = u16::from_le_bytes(bytes.get(at..at + 2)?.try_into().ok()?);
    let tag = *bytes.get(at + 2)?;
    if tag == BUFFERED_TAG || (version != FORMAT_VERSION && version != CHUNKED_FORMAT_VERSION) {
        return None;
    }
    let what = if tag == crate::bloomier::FORMAT_TAG {
        "a Bloomier filter (read it with `bloomkit bloomier get`)".to_owned()
    } else {
        let kind = crate::Kind::from_tag(tag)?;
        format!(
            "a {} filter in bloomkit's format version {version}, loaded whole (ask it with \
             `bloomkit check`, or `AnyFilter::load` / `FilterView::open`)",
            kind.name()
        )
    };
    Some(crate::codec::invalid(
        "kind",
        format!(
            "the file is {what}, not a buffered Bloom filter on disk (which `bloomkit ssd \
             build` and `BufferedBloomFilter::builder` make)"
        ),
    ))
}

/// Reads as many bytes as there are, up to the buffer's length.
fn read_up_to(file: &mut File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match file.read(&mut buf[got..])? {
            0 => break,
            n => got += n,
        }
    }
    Ok(got)
}

/// For a file opened read-only: an error if its journal is whole (a flush was writing the
/// pages it holds, which only a replay makes whole again), nothing if there is no journal or
/// one cut short (its flush never touched the file).
fn refuse_journal(path: &Path, journal: &Path, file: &File) -> Result<(), Error> {
    let bytes = match std::fs::read(journal) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io(format!("reading {}", journal.display()), e)),
    };
    let file_len = file
        .metadata()
        .map_err(|e| Error::io(format!("reading {}", path.display()), e))?
        .len();
    match parse_journal(&bytes, file_len) {
        Some(_) => Err(Error::InterruptedWrite {
            path: path.to_path_buf(),
            journal: journal.to_path_buf(),
            not_completed: None,
        }),
        None => Ok(()),
    }
}

/// For a read-only open that found a whole journal and may complete its flush
/// ([`BufferedOpenOptions::complete_interrupted_write`]): what an open for writing does
/// first — the file opened for writing and locked exclusively (`wait`ing for the lock, or
/// [`Error::Locked`]), the journal replayed — then the lock released. `Ok(Err(why))`,
/// touching nothing, when this user cannot open the file for writing.
fn complete_interrupted_write(
    path: &Path,
    wait: bool,
) -> Result<Result<(), std::io::Error>, Error> {
    use std::io::ErrorKind::{PermissionDenied, ReadOnlyFilesystem};
    let mut how = OpenOptions::new();
    how.read(true).write(true);
    let mut file = match open_locked(path, &how, Mode::Exclusive, wait) {
        Ok(Some(file)) => file,
        Ok(None) => return Err(Error::Locked { path: path.into() }),
        Err(e) if matches!(e.kind(), PermissionDenied | ReadOnlyFilesystem) => return Ok(Err(e)),
        Err(e) => return Err(Error::io(format!("opening {}", path.display()), e)),
    };
    replay_journal(&journal_of(path), &mut file)?;
    Ok(Ok(()))
}

/// Replays a complete journal into the file (the flush that wrote it was interrupted after
/// the journal was whole) or discards an incomplete one (the file was not yet touched).
fn replay_journal(journal: &Path, file: &mut File) -> Result<(), Error> {
    let bytes = match std::fs::read(journal) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io(format!("reading {}", journal.display()), e)),
    };
    let context = || format!("replaying {}", journal.display());
    let file_len = file.metadata().map_err(|e| Error::io(context(), e))?.len();
    if let Some(images) = parse_journal(&bytes, file_len) {
        for (offset, image) in images {
            file.seek(SeekFrom::Start(offset))
                .and_then(|_| file.write_all(image))
                .map_err(|e| Error::io(context(), e))?;
        }
        file.sync_all().map_err(|e| Error::io(context(), e))?;
    }
    std::fs::remove_file(journal).map_err(|e| Error::io(context(), e))
}

/// The (offset, image) pairs of a whole, checksummed journal whose pages all lie inside a
/// file of `file_len` bytes; `None` for anything else.
fn parse_journal(bytes: &[u8], file_len: u64) -> Option<Vec<(u64, &[u8])>> {
    let body = bytes.len().checked_sub(CHECKSUM_BYTES)?;
    let stored = u64::from_le_bytes(bytes[body..].try_into().ok()?);
    if xxhash_rust::xxh3::xxh3_64(&bytes[..body]) != stored {
        return None;
    }
    let mut r = Reader::new(&bytes[..body]);
    if r.take(JOURNAL_MAGIC.len()).ok()? != JOURNAL_MAGIC {
        return None;
    }
    let page_size = r.u32().ok()?;
    check_page_size(page_size).ok()?;
    let count = r.u64().ok()?;
    let mut images = Vec::new();
    for _ in 0..count {
        let file_page = r.u64().ok()?;
        let image = r.take(page_size as usize).ok()?;
        let offset = file_page.checked_mul(page_size as u64)?;
        if offset.checked_add(page_size as u64)? > file_len {
            return None;
        }
        images.push((offset, image));
    }
    r.is_at_end().then_some(images)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_journal_that_is_not_whole_is_never_replayed() {
        let images = [(1u64, vec![7u8; 128])];
        let mut bytes = JOURNAL_MAGIC.to_vec();
        bytes.extend_from_slice(&128u32.to_le_bytes());
        bytes.extend_from_slice(&1u64.to_le_bytes());
        for (p, image) in &images {
            bytes.extend_from_slice(&p.to_le_bytes());
            bytes.extend_from_slice(image);
        }
        let sum = xxhash_rust::xxh3::xxh3_64(&bytes);
        bytes.extend_from_slice(&sum.to_le_bytes());
        assert_eq!(parse_journal(&bytes, 256).unwrap().len(), 1);
        // Past the end of the file: refused.
        assert!(parse_journal(&bytes, 255).is_none());
        for cut in 0..bytes.len() {
            assert!(parse_journal(&bytes[..cut], 256).is_none(), "cut {cut}");
        }
        let mut flipped = bytes.clone();
        flipped[20] ^= 1;
        assert!(parse_journal(&flipped, 256).is_none());
    }

    #[test]
    fn page_sizes_are_powers_of_two_in_range() {
        assert!(check_page_size(4096).is_ok());
        for bad in [0, 64, 100, 4095, 1 << 21] {
            assert!(check_page_size(bad).is_err(), "{bad}");
        }
    }
}
