//! A filter file opened without reading it: a read-only view over a memory map.
//!
//! [`AnyFilter::load`](crate::AnyFilter) reads the whole file and copies the payload into the
//! filter's own memory: a 1.2 GB filter costs 2.4 GB of reads and copies, and as much
//! resident memory, before it answers one question. A [`FilterView`] maps the file
//! read-only ([`arch::mmap`](crate::arch::mmap)) and answers queries from the mapped pages,
//! so a query costs the pages it touches. What a report needs from every bit — the fill,
//! the estimated items, the expected rate now: [`FilterView::summary`], what `bloomkit info`
//! prints — is read once in 1 MiB pieces into one buffer, so it too costs a few MiB of
//! memory whatever the file's size (`bloomkit info` of a 343 MiB classic filter: 6.5 MB
//! resident, against 707 MB when it loaded the filter; BENCHMARKS.md, "`bloomkit info` of a
//! large file").
//!
//! # Which kinds
//!
//! The kinds whose payload is one flat array that a query reads at computed places
//! ([`Kind::can_view`]):
//!
//! * bit arrays: the classic filter (k bits of one bit array), the partitioned filter (one
//!   bit in each of k slices), the blocked filter (one 64-byte block), the split block
//!   filter (one 32-byte block), the deletable filter (k data bits; its collision bitmap,
//!   the first r bits of the same array, only for the summary), the generalized filter (k₁
//!   bits that must be 1 and k₀ that must be 0) and robustBF (k bits, each in the word of
//!   its row and column), and the weighted filter (k_x bits, k_x from its weight table,
//!   which follows the bits in the payload and which a query searches in the file);
//! * packed counters (⌊64/w⌋ counters of w bits to a 64-bit word): the counting filter (k
//!   counters, none 0), the spectral filter (k primary counters, none 0, under every
//!   method; recurring minimum's secondary counters follow the primary ones and only count
//!   and the summary read them), the stable filter (K cells, none 0) and the
//!   variable-increment filter (k counters, each passing the paper's test for the item's
//!   increment, from the file's increment source).
//!
//! Each answers through its kind's own code (the `KindView` its `options.rs` declares as
//! `Declared::VIEW`: the same parameter checks as loading, the same positions and kernels;
//! the counter kinds' query is one function over "a way to read cell i", which the loaded
//! filter calls with its array and the view with [`FilterView`]'s checked reads), so a kind
//! becomes viewable by that one line. A kind that counts answers its count the same way
//! ([`FilterView::count`]: the spectral filter's count, under every method, is one function
//! over its counters), so `bloomkit check --count` reads only the counters its items touch.
//!
//! What loading checks in the payload is checked by the view before it answers from it:
//!
//! * **per chunk** (`KindView::check_piece`, when a chunk's checksum is checked — a query's
//!   first touch, a summary's pieces; for version 1 the whole payload at open, in the pass
//!   that computes the checksum): the padding bits past the last counter of every word of
//!   packed counters (zero; widths that do not divide 64 leave some), in both of a spectral
//!   filter's arrays; robustBF's unused bits 61 to 63 of every word (zero);
//! * **at open** (`KindView::check_opened`): the bits past m in the last word of a bit
//!   array (classic, partitioned, deletable, generalized);
//! * **with the parameters** (`KindView::read`, shared with loading): every stored
//!   parameter and the payload's exact length. Nothing else in these payloads can be
//!   invalid: any counter value, any bitmap, any fill is a filter loading accepts.
//!
//! The others are not viewable, for these reasons: the cuckoo filter keeps a victim and the
//! scalable filter a list of filters of varying size; the compressed filter is
//! arithmetic-coded (no bit can be read without decoding what precedes it).
//!
//! The weighted filter's table is read in place too: a query finds its item's key by a
//! search over the file's 9-byte entries, interpolating between the keys (they are
//! digests); an entry may straddle two chunks, and its read takes both ([`FilterView`]'s
//! reads of everything else never cross a chunk). What loading checks across the whole
//! table (keys strictly increasing, every k valid) the view checks when it opens, reading
//! the table's chunks and not the bits.
//!
//! # The checksum still guards every answer
//!
//! * A **version-2 file** ([`format`](super) module docs) has a checksum per 64 KiB chunk of
//!   its payload and a checksum over its header, chunk table included. The view checks the
//!   header when it opens the file, and each chunk the first time a query touches it
//!   (a flag per chunk remembers that it passed). The first chunks a view touches, up to
//!   [`COPY_BUDGET`] bytes, are read with `pread` into memory of the view's own and checked
//!   there, and their queries read the copy: reading them through the map would make the
//!   kernel map whole page-cache folios around each touched place (tens of MB resident for
//!   a few queries against a file just written); past the budget chunks are checked in the
//!   map and read from it. A query that touches a corrupted chunk
//!   fails with [`DecodeError::ChunkChecksumMismatch`], naming the file and the chunk, every
//!   time it is asked; queries that touch only good chunks answer. No answer is ever read
//!   from an unchecked byte.
//! * A **version-1 file** has one checksum over all of it: the view checks it when it opens
//!   the file, reading the file in 1 MiB pieces through a buffer (the whole file is read,
//!   as loading reads it, but it is not copied and the resident memory stays small).
//!
//! # Files that change underneath
//!
//! The crate's writers replace a file by renaming a new one over it, and never write a
//! filter file in place ([`arch::mmap`](crate::arch::mmap) says why that makes the map safe).
//! A view keeps the inode it mapped: a `bloomkit add` that saves while a view is open
//! leaves the view answering from the old file, whole and checked; open a new view to see
//! the new file. A program that writes the mapped file **in place** (`cp` over it,
//! `truncate`, `dd`) is outside this contract: bytes changed after their chunk was checked
//! can change answers, and a file cut short raises `SIGBUS` on the next touch of a page
//! past its new end. Replace filter files by rename (`mv`, or the crate's writers).
//!
//! ```
//! use bloomkit::format::view::FilterView;
//! use bloomkit::{BloomFilter, Persist};
//! # let dir = tempfile::tempdir()?;
//! # let path = dir.path().join("words.bloom");
//! let mut filter = BloomFilter::with_capacity(10_000, 0.01)?;
//! filter.insert("dist");
//! filter.save_chunked(&path)?; // format version 2: a checksum per chunk
//!
//! let view = FilterView::open(&path)?;
//! assert!(view.contains("dist")?);
//! assert_eq!(view.contains("fkuv")?, filter.contains("fkuv"));
//! assert_eq!(view.len(), 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::OnceLock;

use crate::any::Summary;
use crate::arch::mmap::MappedFile;
use crate::bits::CounterSpan;
use crate::error::{DecodeError, Error};
use crate::filter::bits_per_item;
use crate::filter::Kind;
use crate::hash::{Hashing, Item};
use crate::registry::{AnyFilter, ParametersBlock};
use crate::Persist;

use super::{with_path, Chunks, Layout, Parts, Reader, CHUNKED_FORMAT_VERSION, FORMAT_VERSION};

impl Kind {
    /// Whether files of this kind can be opened as a [`FilterView`] (their payload is a flat
    /// array that a query reads at computed places): the classic, partitioned, blocked,
    /// split block, deletable, generalized, robustBF and weighted filters (bit arrays) and the
    /// counting, spectral, stable and variable-increment filters (packed counters). See the
    /// [module docs](self), "Which kinds".
    ///
    /// ```
    /// use bloomkit::Kind;
    /// assert!(Kind::Bloom.can_view());
    /// assert!(Kind::Counting.can_view());
    /// assert!(!Kind::Cuckoo.can_view());
    /// ```
    pub fn can_view(self) -> bool {
        self.view_opener().is_some()
    }
}

/// What a viewable kind declares (as `Declared::VIEW = Some(view::open::<S>)` in its
/// `options.rs`): its stored parameters, read and checked as loading reads them, and its
/// query over the payload bytes that the view fetches.
pub(crate) trait KindView: std::fmt::Debug + Send + Sync {
    /// The parameters of `parts`, checked as loading checks them, and the payload's length
    /// against them (its bytes are not read).
    fn read(parts: &Parts<'_>) -> Result<Self, DecodeError>
    where
        Self: Sized;

    /// The facts a view reports without a query.
    fn facts(&self) -> ViewFacts;

    /// The loaded filter's answer for the item with these bytes, from payload bytes
    /// fetched through [`FilterView::payload`].
    fn contains(&self, bytes: &[u8], view: &FilterView) -> Result<bool, Error>;

    /// The loaded filter's [`AnyFilter::count`] for the item with these bytes, for a kind
    /// that counts ([`Kind::counts`]); `None` for the others.
    fn count(&self, bytes: &[u8], view: &FilterView) -> Result<Option<u64>, Error> {
        let _ = (bytes, view);
        Ok(None)
    }

    /// The loaded filter's [`Summary`], its content read through
    /// [`FilterView::for_each_piece`] instead of loaded.
    fn summary(&self, view: &FilterView) -> Result<Summary, Error>;

    /// What loading checks in the payload beyond its length and that needs more than the
    /// bytes of one chunk (or is one place, as the classic filter's last word), checked
    /// when the view opens.
    fn check_opened(&self, view: &FilterView) -> Result<(), Error> {
        let _ = view;
        Ok(())
    }

    /// What loading checks in each word of the payload (the padding bits of packed
    /// counters): `bytes` are the payload's bytes from `offset`, whole 64-bit words (a
    /// chunk, or for version 1 a piece of [`PIECE_BYTES`]). A version-2 view checks each
    /// chunk so when it checks its checksum, the
    /// first time a query touches it (and in every piece a summary reads); a version-1 view
    /// checks the whole payload so when it opens, in the same pass as the file's checksum.
    /// A chunk that fails is never answered from.
    fn check_piece(&self, offset: usize, bytes: &[u8]) -> Result<(), DecodeError> {
        let _ = (offset, bytes);
        Ok(())
    }
}

/// `Iterator::all` with a test that can fail: `Ok` of whether every item passes (stopping
/// at the first that does not), or the test's first error. The kinds write their query
/// once over a fallible reader of cells: the loaded filter's reader cannot fail
/// ([`infallible`]), a view's fails on a chunk that does not match its checksum. Built on
/// `all`, so iterators that run their own `all` (the hashing's `Positions`) keep it.
#[inline(always)]
pub(crate) fn try_all<T, E>(
    mut items: impl Iterator<Item = T>,
    mut test: impl FnMut(T) -> Result<bool, E>,
) -> Result<bool, E> {
    let mut error = None;
    let all = items.all(|item| match test(item) {
        Ok(pass) => pass,
        Err(e) => {
            error = Some(e);
            false
        }
    });
    match error {
        Some(e) => Err(e),
        None => Ok(all),
    }
}

/// Whether every counter at `positions` is non-zero (stopping at the first 0), over a way
/// to read counter p: the query of the counting filter and of the spectral filter under
/// every method (a repeated position cannot change whether a counter is 0), by which the
/// loaded filter (its array, [`infallible`]) and a view (the file's checked chunks) answer.
#[inline(always)]
pub(crate) fn all_nonzero<E>(
    positions: impl Iterator<Item = u64>,
    mut counter: impl FnMut(u64) -> Result<u32, E>,
) -> Result<bool, E> {
    try_all(positions, |p| Ok(counter(p)? != 0))
}

/// The value of a result that cannot be an error (a query over the loaded filter's cells).
#[inline(always)]
pub(crate) fn infallible<T>(result: Result<T, std::convert::Infallible>) -> T {
    match result {
        Ok(value) => value,
        Err(never) => match never {},
    }
}

/// A viewable kind's parameters as loading and views read them: its stored record (the
/// kind's `Stored` declaration) and the hashing from the header. The kind implements
/// [`KindView`] for its `Shape<Stored>`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Shape<S> {
    pub(crate) stored: S,
    pub(crate) hashing: Hashing,
}

impl<S> Shape<S> {
    /// The shape of a stored record read (and checked) from `parts`, with their hashing.
    pub(crate) fn of(stored: S, parts: &Parts<'_>) -> Self {
        Shape {
            stored,
            hashing: parts.hashing,
        }
    }
}

/// What a view reports about its filter: the loaded filter's getters.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ViewFacts {
    pub(crate) inserted: u64,
    pub(crate) capacity: u64,
    pub(crate) target_fpp: f64,
    pub(crate) num_bits: u64,
    pub(crate) num_hashes: u32,
}

/// The [`ViewFacts`] of a record with the fields `inserted`, `capacity` and `target_fpp` (a
/// viewable kind's `Stored`), and the given m and k.
macro_rules! view_facts {
    ($record:expr, $num_bits:expr, $num_hashes:expr) => {{
        let record = &$record;
        $crate::format::view::view_facts!(record, $num_bits, $num_hashes, record.inserted)
    }};
    ($record:expr, $num_bits:expr, $num_hashes:expr, $inserted:expr) => {{
        let record = &$record;
        $crate::format::view::ViewFacts {
            inserted: $inserted,
            capacity: record.capacity,
            target_fpp: record.target_fpp,
            num_bits: $num_bits,
            num_hashes: $num_hashes,
        }
    }};
}
pub(crate) use view_facts;

/// A viewable kind's reader of its parts ([`open`] of its [`KindView`]).
pub(crate) type OpenView = fn(&Parts<'_>) -> Result<Box<dyn KindView>, DecodeError>;

/// The [`OpenView`] of the kind whose view is `S`.
pub(crate) fn open<S: KindView + 'static>(
    parts: &Parts<'_>,
) -> Result<Box<dyn KindView>, DecodeError> {
    Ok(Box::new(S::read(parts)?))
}

/// The size of the pieces [`FilterView::summary`] reads the payload in: 1 MiB, a multiple
/// of every chunk size below it and of every block.
pub const PIECE_BYTES: usize = 1 << 20;

/// A chunk not checked yet.
const UNCHECKED: u8 = 0;
/// A chunk that matched its checksum.
const GOOD: u8 = 1;

/// How many bytes of checked chunks a view keeps as copies of its own (read with `pread`,
/// not through the map) before it answers from the map instead: 16 MiB, 256 chunks of
/// 64 KiB.
///
/// A query that reads a mapped page makes the kernel map the whole page-cache folio around
/// it into the process, and a file that was just written sits in large folios: on the
/// machine of BENCHMARKS.md (Linux 6.18) `bloomkit check` of 10 items against a 1.2 GB
/// file just written was 95 MB resident through the map, for about 45 chunks (2.9 MB)
/// read, and 10 MB with the copies. A chunk read with `pread` is copied out of the page
/// cache without mapping anything, so a view answering a few queries (each touching at
/// most k chunks) stays at the size of the chunks it read. Past the budget — a view asked
/// many questions, which touch most of the file anyway — the map is the cheaper way.
pub const COPY_BUDGET: usize = 16 << 20;

/// A filter file opened read-only over a memory map; queries read (and check) only what
/// they touch. See the [module docs](self).
///
/// A `FilterView` is `Send + Sync`: threads may query one view at once (a chunk two of them
/// touch first is checked by both, with the same result).
pub struct FilterView {
    map: MappedFile,
    path: PathBuf,
    kind: Kind,
    hashing: Hashing,
    version: u16,
    shape: Box<dyn KindView>,
    facts: ViewFacts,
    payload_at: usize,
    payload_len: usize,
    /// Version 2: where the chunk table starts in the file, and the chunk shift.
    table_at: usize,
    chunk_shift: u8,
    /// Version 2: one flag per chunk, [`UNCHECKED`] or [`GOOD`] (checked in the map, and
    /// answered from it). Empty for version 1, whose whole checksum was verified when the
    /// view opened.
    checked: Box<[AtomicU8]>,
    /// Version 2: the chunks read with `pread` into memory of their own and checked there,
    /// one slot per chunk; a query reads such a chunk from its copy, never from the map.
    copies: Box<[OnceLock<Box<[u8]>>]>,
    /// How many chunks may still be copied ([`COPY_BUDGET`]).
    copies_left: AtomicUsize,
    /// The file, for `pread` of chunks.
    file: File,
}

impl FilterView {
    /// Opens the filter file at `path` as a view.
    ///
    /// Reads the header with an ordinary read and maps the file only if it holds a kind
    /// that [can be viewed](Kind::can_view). Checks what loading checks before it answers:
    /// magic, version, every length and the kind's parameters; for version 2 the header
    /// checksum (the payload's chunks are checked as queries touch them, with what loading
    /// checks in their words; the chunk holding a bit array's last word is checked here, for
    /// the padding bits loading refuses); for version 1 the checksum over the whole file and,
    /// in the same pass, what loading checks in every word.
    ///
    /// # Errors
    /// [`Error::Io`] if the file cannot be read or mapped; [`Error::InvalidFile`] (naming the
    /// file) if it is not a valid filter file; [`Error::Unsupported`] for a kind that cannot
    /// be viewed (load it with [`AnyFilter::load`](crate::AnyFilter) instead).
    pub fn open(path: impl AsRef<Path>) -> Result<FilterView, Error> {
        let path = path.as_ref();
        let context = || format!("reading {}", path.display());
        let mut file = File::open(path).map_err(|e| Error::io(context(), e))?;
        let kind = viewable_kind(&mut file, path)?;
        let map = MappedFile::map(&file)
            .map_err(|e| Error::io(format!("mapping {}", path.display()), e))?;
        let file_for_view = file.try_clone().map_err(|e| Error::io(context(), e))?;
        let view = Self::over(map, file_for_view, path, kind).map_err(|e| with_path(e, path))?;
        if view.version == FORMAT_VERSION {
            check_whole(
                &mut file,
                view.payload_at,
                view.payload_len,
                |offset, bytes| view.shape.check_piece(offset, bytes),
            )
            .map_err(|e| with_path(e, path))?;
        }
        // After the checksum of a version-1 file: a bad checksum is reported before what
        // the kind finds in bytes it cannot trust, as loading reports it.
        view.shape
            .check_opened(&view)
            .map_err(|e| with_path(e, path))?;
        Ok(view)
    }

    /// The view of the mapped file `map` (open as `file`), whose prefix said it holds a
    /// `kind` filter.
    fn over(map: MappedFile, file: File, path: &Path, kind: Kind) -> Result<FilterView, Error> {
        let bytes = map.bytes();
        let layout = Layout::read(bytes)?;
        let hashing = layout.hashing()?;
        let payload = &bytes[layout.payload_at..layout.payload_at + layout.payload_len];
        let parts = Parts {
            kind,
            hashing,
            params: layout.params,
            payload,
        };
        let open = kind
            .view_opener()
            .expect("viewable_kind admits only viewable kinds");
        let shape = open(&parts)?;
        let (table_at, chunk_shift, count) = match &layout.chunks {
            Some(chunks) => (chunks.table_at, chunks.shift, chunks.count()),
            None => (0, 0, 0),
        };
        let view = FilterView {
            path: path.to_path_buf(),
            kind,
            hashing,
            version: layout.version,
            facts: shape.facts(),
            shape,
            payload_at: layout.payload_at,
            payload_len: layout.payload_len,
            table_at,
            chunk_shift,
            checked: (0..count).map(|_| AtomicU8::new(UNCHECKED)).collect(),
            copies: (0..count).map(|_| OnceLock::new()).collect(),
            copies_left: AtomicUsize::new(if cfg!(unix) {
                COPY_BUDGET >> chunk_shift
            } else {
                0
            }),
            file,
            map,
        };
        Ok(view)
    }

    /// The kind of the filter.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The hashing the filter was built with.
    pub fn hashing(&self) -> Hashing {
        self.hashing
    }

    /// The file's format version: 1 (checked whole when the view opened) or 2 (checked per
    /// chunk).
    pub fn format_version(&self) -> u16 {
        self.version
    }

    /// The number of items inserted, as stored: what the loaded filter's
    /// [`len`](crate::Filter::len) returns.
    pub fn len(&self) -> u64 {
        self.facts.inserted
    }

    /// Whether no item was inserted.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The capacity the filter was sized for: the loaded filter's
    /// [`capacity`](crate::Filter::capacity).
    pub fn capacity(&self) -> u64 {
        self.facts.capacity
    }

    /// The false-positive probability the filter was sized for: the loaded filter's
    /// [`target_fpp`](crate::Filter::target_fpp).
    pub fn target_fpp(&self) -> f64 {
        self.facts.target_fpp
    }

    /// m, the size of the filter's array: its bits, or for the counter kinds its counters
    /// (cells).
    pub fn num_bits(&self) -> u64 {
        self.facts.num_bits
    }

    /// The number of hash functions, the places of the array a query reads: k (8 for the
    /// split block filter, k₁ + k₀ for the generalized filter).
    pub fn num_hashes(&self) -> u32 {
        self.facts.num_hashes
    }

    /// The payload's size in bytes (what loading would copy into memory).
    pub fn payload_bytes(&self) -> u64 {
        self.payload_len as u64
    }

    /// The size of one checked chunk in bytes (version 2); `None` for version 1.
    pub fn chunk_bytes(&self) -> Option<u64> {
        (self.version == CHUNKED_FORMAT_VERSION).then(|| 1u64 << self.chunk_shift)
    }

    /// How many chunks the payload has, and how many of them queries have checked so far
    /// (version 2; `(0, 0)` for version 1).
    pub fn chunks_checked(&self) -> (usize, usize) {
        let good = self
            .checked
            .iter()
            .zip(self.copies.iter())
            .filter(|(c, copy)| c.load(Ordering::Relaxed) == GOOD || copy.get().is_some())
            .count();
        (self.checked.len(), good)
    }

    /// How many of the [checked chunks](Self::chunks_checked) were read into memory of the
    /// view's own (with `pread`, up to [`COPY_BUDGET`] bytes) and are answered from there;
    /// the others are answered from the map. 0 for version 1.
    pub fn chunks_copied(&self) -> usize {
        self.copies.iter().filter(|c| c.get().is_some()).count()
    }

    /// `false` if the item is certainly absent, `true` if it may be present: the loaded
    /// filter's [`contains`](crate::Filter::contains), read from the file.
    ///
    /// # Errors
    /// [`Error::InvalidFile`] with [`DecodeError::ChunkChecksumMismatch`] if the query
    /// touches a chunk that does not match its checksum.
    #[inline]
    pub fn contains<I: Item + ?Sized>(&self, item: &I) -> Result<bool, Error> {
        item.with_bytes(|bytes| self.contains_bytes(bytes))
    }

    /// [`contains`](Self::contains) of every item, in order; the first error ends it.
    pub fn contains_batch<I: Item>(&self, items: &[I]) -> Result<Vec<bool>, Error> {
        items.iter().map(|item| self.contains(item)).collect()
    }

    fn contains_bytes(&self, bytes: &[u8]) -> Result<bool, Error> {
        self.shape.contains(bytes, self)
    }

    /// How often the item was inserted, as the loaded filter estimates it
    /// ([`AnyFilter::count`]), read from the counters the item touches: for a kind that
    /// counts ([`Kind::counts`], the spectral filter), else [`Error::Unsupported`]. The same
    /// chunk errors as [`contains`](Self::contains).
    ///
    /// ```
    /// use bloomkit::format::view::FilterView;
    /// use bloomkit::{Persist, SpectralBloomFilter};
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("words.spectral");
    /// let mut filter = SpectralBloomFilter::with_capacity(1_000, 0.01)?;
    /// for word in ["to", "be", "or", "not", "to", "be"] {
    ///     filter.insert(word);
    /// }
    /// filter.save_chunked(&path)?;
    /// let view = FilterView::open(&path)?;
    /// assert_eq!(view.count("to")?, filter.count("to"));
    /// assert!(view.count("to")? >= 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn count<I: Item + ?Sized>(&self, item: &I) -> Result<u64, Error> {
        item.with_bytes(|bytes| self.shape.count(bytes, self))?
            .ok_or(Error::Unsupported {
                kind: self.kind(),
                operation: "count",
            })
    }

    /// Checks every chunk not checked yet (version 2; nothing to do for version 1), in the
    /// map: no chunk is copied for it, and a chunk checked only as a copy is checked again
    /// in the map, from which [`load`](Self::load) decodes.
    pub fn check_all(&self) -> Result<(), Error> {
        for index in 0..self.checked.len() {
            self.check_chunk(index)?;
        }
        Ok(())
    }

    /// The filter, loaded: every chunk checked, then decoded by the kind's decoder from the
    /// mapped bytes — the filter [`AnyFilter::load`](crate::AnyFilter) returns for the file.
    pub fn load(&self) -> Result<AnyFilter, Error> {
        self.check_all()?;
        let bytes = self.map.bytes();
        let layout = Layout::read(bytes).map_err(|e| self.invalid(e))?;
        let parts = Parts {
            kind: self.kind,
            hashing: self.hashing,
            params: layout.params,
            payload: &bytes[self.payload_at..self.payload_at + self.payload_len],
        };
        AnyFilter::decode_parts(&parts).map_err(|e| self.invalid(e))
    }

    /// The filter's [`Summary`] (what `bloomkit info` prints), the same as the loaded
    /// filter's, from the payload read once in pieces of about 1 MiB ([`PIECE_BYTES`]) with
    /// `pread`, each chunk checked as it is read: the file is neither loaded nor mapped, so
    /// a summary of a 10 GB filter takes a few MiB of memory.
    ///
    /// ```
    /// use bloomkit::codec::view::FilterView;
    /// use bloomkit::{AnyFilter, Filter, Kind, Persist};
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("f.bk");
    /// let mut f = AnyFilter::with_capacity(Kind::Bloom, 10_000, 0.01)?;
    /// for i in 0..5_000u32 {
    ///     f.try_insert(&i)?;
    /// }
    /// f.save_chunked(&path)?;
    /// assert_eq!(FilterView::open(&path)?.summary()?, f.summary());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::Io`] if the file cannot be read; [`Error::InvalidFile`] if a chunk does not
    /// match its checksum.
    pub fn summary(&self) -> Result<Summary, Error> {
        self.shape.summary(self)
    }

    /// A [`Summary`] of this view's filter with the facts every view knows (kind, hashing,
    /// capacity, count, memory: the payload's bytes) and the kind's facts of its content.
    pub(crate) fn summary_of(
        &self,
        parameters_block: Option<ParametersBlock>,
        properties: Vec<(&'static str, String)>,
        estimated_len: f64,
        expected_fpp: f64,
    ) -> Summary {
        let memory_bytes = self.payload_len as u64;
        Summary {
            kind: self.kind,
            hashing: self.hashing,
            capacity: self.facts.capacity,
            len: self.facts.inserted,
            memory_bytes,
            bits_per_item: bits_per_item(memory_bytes, self.facts.capacity),
            parameters_block,
            properties,
            estimated_len,
            expected_fpp,
        }
    }

    /// Calls `each` with the whole payload in order, in pieces of [`PIECE_BYTES`] (or one
    /// chunk, if chunks are larger; the last piece may be shorter) read into one buffer
    /// that is reused, every chunk of a version-2 file checked against its checksum before
    /// its piece is handed on (a version-1 file was checked whole when the view opened). A
    /// piece starts at a multiple of [`PIECE_BYTES`], so it holds whole words and blocks.
    pub(crate) fn for_each_piece(
        &self,
        mut each: impl FnMut(&[u8]) -> Result<(), Error>,
    ) -> Result<(), Error> {
        self.for_each_piece_at(|_, bytes| each(bytes))
    }

    /// [`for_each_piece`](Self::for_each_piece), each piece with its offset in the payload.
    pub(crate) fn for_each_piece_at(
        &self,
        each: impl FnMut(usize, &[u8]) -> Result<(), Error>,
    ) -> Result<(), Error> {
        self.for_each_piece_in(0..self.payload_len, each)
    }

    /// [`for_each_piece_at`](Self::for_each_piece_at) over the payload bytes in `range`
    /// only: the pieces that hold them are read and checked, and `each` gets the part of
    /// each piece inside the range, with its offset (the weighted filter's table, after its
    /// bits, read without the bits).
    pub(crate) fn for_each_piece_in(
        &self,
        range: std::ops::Range<usize>,
        mut each: impl FnMut(usize, &[u8]) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let mut pieces = self.pieces();
        let mut at = range.start;
        while at < range.end.min(self.payload_len) {
            let (start, bytes) = pieces.piece_holding(at)?;
            let end = (start + bytes.len()).min(range.end);
            each(at, &bytes[at - start..end - start])?;
            at = end;
        }
        Ok(())
    }

    /// Fills `out` with the payload bytes at `offset`, from checked chunks, as
    /// [`payload`](Self::payload) reads them but allowed to cross from one chunk into the
    /// next (a 9-byte entry of the weighted filter's table may).
    pub(crate) fn payload_into(&self, mut offset: usize, out: &mut [u8]) -> Result<(), Error> {
        let mut done = 0;
        while done < out.len() {
            let room = if self.checked.is_empty() {
                out.len()
            } else {
                let chunk = 1usize << self.chunk_shift;
                chunk - (offset & (chunk - 1))
            };
            let n = room.min(out.len() - done);
            out[done..done + n].copy_from_slice(self.payload(offset, n)?);
            (done, offset) = (done + n, offset + n);
        }
        Ok(())
    }

    /// A reader of the payload in checked pieces ([`Pieces`]), for a pass that reads a
    /// second place of the payload as it goes (the deletable filter's region bits).
    pub(crate) fn pieces(&self) -> Pieces<'_> {
        let chunk = if self.checked.is_empty() {
            PIECE_BYTES
        } else {
            1 << self.chunk_shift
        };
        let piece = PIECE_BYTES.max(chunk);
        Pieces {
            view: self,
            chunk,
            piece,
            buffer: vec![0u8; piece.min(self.payload_len)],
            start: usize::MAX,
            len: 0,
        }
    }

    /// Counter `index` of the packed counter array `span` of the payload, from a checked
    /// chunk (whose words were checked as loading checks them).
    #[inline]
    pub(crate) fn counter(&self, span: &CounterSpan, index: u64) -> Result<u32, Error> {
        let (at, shift) = span.locate(index);
        let word = self.payload(at, 8)?;
        let word = u64::from_le_bytes(word.try_into().expect("8 bytes"));
        Ok(CounterSpan::value_in(word, shift, span.width))
    }

    /// Calls `each` with every counter of the array `span`, in order, read in pieces
    /// ([`for_each_piece_at`](Self::for_each_piece_at)).
    pub(crate) fn for_each_counter(
        &self,
        span: &CounterSpan,
        mut each: impl FnMut(u32),
    ) -> Result<(), Error> {
        self.for_each_piece_at(|offset, bytes| {
            span.for_each_in(offset, bytes, &mut each);
            Ok(())
        })
    }

    /// Bit `p` of a payload that is one bit array in 64-bit little-endian words (the
    /// classic and partitioned filters'), from a checked chunk.
    #[inline]
    pub(crate) fn bit(&self, p: u64) -> Result<bool, Error> {
        let word = self.payload((p >> 6) as usize * 8, 8)?;
        Ok(u64::from_le_bytes(word.try_into().expect("8 bytes")) & (1 << (p & 63)) != 0)
    }

    /// Whether the bits at `positions` of such a payload are all 1; stops at the first 0
    /// (the classic filter's query, and the partitioned filter's).
    pub(crate) fn all_bits(&self, positions: impl IntoIterator<Item = u64>) -> Result<bool, Error> {
        for p in positions {
            if !self.bit(p)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The set bits of a payload that is one bit array in 64-bit words, counted over the
    /// whole payload ([`for_each_piece`](Self::for_each_piece)).
    pub(crate) fn count_ones(&self) -> Result<u64, Error> {
        let mut ones = 0u64;
        self.for_each_piece(|bytes| {
            ones += bytes
                .chunks_exact(8)
                .map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")).count_ones() as u64)
                .sum::<u64>();
            Ok(())
        })?;
        Ok(ones)
    }

    /// What loading checks in the last word of a bit array of `num_bits` bits: no bit set
    /// past m ([`BitVec::check_last_word`](crate::bits::BitVec::check_last_word)).
    pub(crate) fn check_last_word(&self, num_bits: u64) -> Result<(), Error> {
        let word = self.payload((num_bits - 1) as usize / 64 * 8, 8)?;
        crate::bits::BitVec::check_last_word(
            num_bits,
            u64::from_le_bytes(word.try_into().expect("8 bytes")),
        )?;
        Ok(())
    }

    /// Fills `buffer` with the payload's bytes at `offset`: with `pread`, or where there is
    /// none, from the map.
    fn read_payload(&self, offset: usize, buffer: &mut [u8]) -> Result<(), Error> {
        let at = self.payload_at + offset;
        if cfg!(unix) {
            read_at(&self.file, buffer, at as u64)
                .map_err(|e| Error::io(format!("reading {}", self.path.display()), e))
        } else {
            buffer.copy_from_slice(&self.map.bytes()[at..at + buffer.len()]);
            Ok(())
        }
    }

    /// The `len` payload bytes at `offset`, from a checked chunk. A read never crosses a
    /// chunk: the kinds read aligned words or blocks of at most 64 bytes, and chunks are
    /// 2¹² bytes or more.
    ///
    /// A chunk's first touch checks it: read into a copy of the view's own and checked there
    /// while [`COPY_BUDGET`] lasts (later reads come from the copy), else checked in the map.
    #[inline]
    pub(crate) fn payload(&self, offset: usize, len: usize) -> Result<&[u8], Error> {
        if !self.checked.is_empty() {
            let index = offset >> self.chunk_shift;
            let within = offset - (index << self.chunk_shift);
            if let Some(copy) = self.copies[index].get() {
                return Ok(&copy[within..within + len]);
            }
            if self.checked[index].load(Ordering::Acquire) != GOOD {
                if let Some(copy) = self.copy_chunk(index)? {
                    return Ok(&copy[within..within + len]);
                }
                self.check_chunk(index)?;
            }
        }
        let start = self.payload_at + offset;
        Ok(&self.map.bytes()[start..start + len])
    }

    /// Reads chunk `index` with `pread` into memory of its own and checks it there, if the
    /// [`COPY_BUDGET`] has room for it: the checked copy, or `None` (no room; check it in
    /// the map). A chunk that fails its check is not kept (and gives the budget back), so it
    /// fails again the next time it is asked.
    #[cold]
    fn copy_chunk(&self, index: usize) -> Result<Option<&[u8]>, Error> {
        let took = self
            .copies_left
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |left| {
                left.checked_sub(1)
            });
        if took.is_err() {
            return Ok(None);
        }
        let give_back = || self.copies_left.fetch_add(1, Ordering::AcqRel);
        let range = self.chunk_range(index);
        let mut copy = vec![0u8; range.end - range.start].into_boxed_slice();
        if let Err(e) = read_at(
            &self.file,
            &mut copy,
            (self.payload_at + range.start) as u64,
        ) {
            give_back();
            return Err(Error::io(format!("reading {}", self.path.display()), e));
        }
        let checked = self.chunks().check(index, &copy);
        if let Err(e) = checked.and_then(|()| self.shape.check_piece(range.start, &copy)) {
            give_back();
            return Err(self.invalid(e));
        }
        let mut ours = Some(copy);
        let kept = self.copies[index].get_or_init(|| ours.take().expect("taken once"));
        if ours.is_some() {
            // Another thread copied it first: its copy is kept, and this one's place in the
            // budget is given back.
            give_back();
        }
        Ok(Some(kept))
    }

    /// The chunk table.
    fn chunks(&self) -> Chunks<'_> {
        let count = self.checked.len();
        Chunks {
            shift: self.chunk_shift,
            table_at: self.table_at,
            table: &self.map.bytes()[self.table_at..self.table_at + 8 * count],
        }
    }

    /// The payload byte range of chunk `index`.
    fn chunk_range(&self, index: usize) -> std::ops::Range<usize> {
        self.chunks().range(index, self.payload_len)
    }

    /// Checks chunk `index` against its checksum unless it passed before.
    #[inline]
    fn check_chunk(&self, index: usize) -> Result<(), Error> {
        let flag = &self.checked[index];
        if flag.load(Ordering::Acquire) == GOOD {
            return Ok(());
        }
        let bytes = self.map.bytes();
        let payload = &bytes[self.payload_at..self.payload_at + self.payload_len];
        let range = self.chunk_range(index);
        self.map
            .will_need(self.payload_at + range.start, range.end - range.start);
        self.chunks()
            .check(index, &payload[range.clone()])
            .and_then(|()| self.shape.check_piece(range.start, &payload[range]))
            .map_err(|e| self.invalid(e))?;
        flag.store(GOOD, Ordering::Release);
        Ok(())
    }

    fn invalid(&self, error: DecodeError) -> Error {
        Error::InvalidFile {
            path: self.path.clone(),
            error,
        }
    }
}

/// The file, kind, version and chunks (not the map's bytes or every chunk's flag).
impl std::fmt::Debug for FilterView {
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (chunks, checked) = self.chunks_checked();
        out.debug_struct("FilterView")
            .field("path", &self.path)
            .field("kind", &self.kind)
            .field("format_version", &self.version)
            .field("payload_bytes", &self.payload_len)
            .field("chunks", &chunks)
            .field("chunks_checked", &checked)
            .field("chunks_copied", &self.chunks_copied())
            .finish()
    }
}

/// Fills `buffer` with the bytes of `file` at `offset` (`pread`: the file's position is
/// not used, so threads may read at once).
#[cfg(unix)]
fn read_at(file: &File, buffer: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buffer, offset)
}

/// Not reached: without `pread` the copy budget is 0 and every chunk is checked in the map.
#[cfg(not(unix))]
fn read_at(_: &File, _: &mut [u8], _: u64) -> std::io::Result<()> {
    Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
}

/// Reads the first bytes of `file` (with an ordinary read, before anything is mapped) and
/// returns the kind they name if it can be viewed.
fn viewable_kind(file: &mut File, path: &Path) -> Result<Kind, Error> {
    let mut prefix = Vec::with_capacity(16);
    file.by_ref()
        .take(16)
        .read_to_end(&mut prefix)
        .map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
    let check = || -> Result<u8, DecodeError> {
        let mut r = Reader::new(&prefix);
        super::read_magic_and_version(&mut r)?;
        r.u8()
    };
    let tag = check().map_err(|e| with_path(Error::Decode(e), path))?;
    match super::kind_of_tag(tag) {
        Ok(kind) if kind.can_view() => Ok(kind),
        Ok(kind) => Err(Error::Unsupported {
            kind,
            operation: "be opened as a view (its kind does not answer from a flat array \
                        read in place); load it",
        }),
        Err(e) => Err(with_path(Error::Decode(e), path)),
    }
}

/// Checks a version-1 file's one checksum, reading `file` from the start through a 1 MiB
/// buffer: the header's `payload_at` bytes, the payload's `payload_len` in pieces of
/// [`PIECE_BYTES`] (each handed to `piece` with its offset in the payload, for the kind's
/// checks of its words: one pass over the file for both), then the checksum.
fn check_whole(
    file: &mut File,
    payload_at: usize,
    payload_len: usize,
    mut piece: impl FnMut(usize, &[u8]) -> Result<(), DecodeError>,
) -> Result<(), Error> {
    use std::io::{Seek, SeekFrom};
    let io = |e| Error::io("reading a filter file", e);
    file.seek(SeekFrom::Start(0)).map_err(io)?;
    let mut hasher = xxhash_rust::xxh3::Xxh3Default::new();
    let mut buffer = vec![0u8; PIECE_BYTES];
    let mut header = vec![0u8; payload_at];
    file.read_exact(&mut header).map_err(io)?;
    hasher.update(&header);
    let mut offset = 0;
    let mut pieces_ok = Ok(());
    while offset < payload_len {
        let n = (payload_len - offset).min(buffer.len());
        file.read_exact(&mut buffer[..n]).map_err(io)?;
        hasher.update(&buffer[..n]);
        if pieces_ok.is_ok() {
            pieces_ok = piece(offset, &buffer[..n]);
        }
        offset += n;
    }
    let mut stored = [0u8; 8];
    file.read_exact(&mut stored).map_err(io)?;
    let stored = u64::from_le_bytes(stored);
    let computed = hasher.digest();
    if stored != computed {
        return Err(Error::Decode(DecodeError::ChecksumMismatch {
            stored,
            computed,
        }));
    }
    // A bad checksum is reported before what the kind found in bytes it cannot trust.
    pieces_ok.map_err(Error::Decode)
}

/// The payload of a view read in checked pieces of [`PIECE_BYTES`] (or one chunk, if
/// chunks are larger) into one buffer: every chunk of a piece of a version-2 file checked
/// against its checksum and by the kind's [`check_piece`](KindView::check_piece) when the
/// piece is read (with `pread`: nothing is copied into the view or marked checked for
/// queries). A piece starts at a multiple of the piece size.
pub(crate) struct Pieces<'a> {
    view: &'a FilterView,
    chunk: usize,
    piece: usize,
    buffer: Vec<u8>,
    /// The payload offset of the piece in the buffer (`usize::MAX`: none yet), and its
    /// length.
    start: usize,
    len: usize,
}

impl Pieces<'_> {
    /// The piece that holds payload byte `offset` (read and checked unless it is the one
    /// read last), from its start.
    pub(crate) fn piece_at(&mut self, offset: usize) -> Result<&[u8], Error> {
        Ok(self.piece_holding(offset)?.1)
    }

    /// [`piece_at`](Self::piece_at), with the piece's offset in the payload.
    fn piece_holding(&mut self, offset: usize) -> Result<(usize, &[u8]), Error> {
        let start = offset / self.piece * self.piece;
        if start != self.start {
            let view = self.view;
            self.start = usize::MAX;
            let len = self.piece.min(view.payload_len - start);
            let bytes = &mut self.buffer[..len];
            view.read_payload(start, bytes)?;
            if !view.checked.is_empty() {
                let first = start >> view.chunk_shift;
                for (i, chunk_bytes) in bytes.chunks(self.chunk).enumerate() {
                    view.chunks()
                        .check(first + i, chunk_bytes)
                        .and_then(|()| view.shape.check_piece(start + i * self.chunk, chunk_bytes))
                        .map_err(|e| view.invalid(e))?;
                }
            }
            (self.start, self.len) = (start, len);
        }
        Ok((self.start, &self.buffer[..self.len]))
    }

    /// Bit `p` of a payload that is one bit array in 64-bit little-endian words.
    pub(crate) fn bit(&mut self, p: u64) -> Result<bool, Error> {
        let offset = (p >> 6) as usize * 8;
        let at = offset % self.piece;
        let piece = self.piece_at(offset)?;
        let word = u64::from_le_bytes(piece[at..at + 8].try_into().expect("8 bytes"));
        Ok(word & (1 << (p & 63)) != 0)
    }
}
