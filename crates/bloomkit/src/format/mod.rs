//! The versioned file format shared by every filter kind.
//!
//! # Version 1: one checksum over the whole file
//!
//! ```text
//! offset  size  field
//!      0     8  magic "BLOOMKIT"
//!      8     2  format version (little-endian u16): 1
//!     10     1  kind tag (see `Kind`)
//!     11     1  hash function id (see `HashFunction`)
//!     12     1  index scheme id (see `IndexScheme`)
//!     13     3  reserved, zero
//!     16     8  seed (u64)
//!     24     4  length P of the kind's parameters (u32)
//!     28     P  parameters, kind-specific, little-endian
//!   28+P     8  length L of the payload (u64)
//!   36+P     L  payload (the kind's storage)
//! 36+P+L     8  checksum: XXH3-64 (seed 0) of every byte before it
//! ```
//!
//! # Version 2: a checksum per chunk, for reading a file without reading all of it
//!
//! The same first `36+P` bytes (with version 2), then:
//!
//! ```text
//!   36+P     1  chunk shift s: the payload is cut into chunks of 2^s bytes (12 <= s <= 30),
//!               the last one shorter; C = ceil(L / 2^s) chunks
//!   37+P   8·C  chunk checksums: chunk i's is XXH3-64 of its bytes with seed i (so two
//!               chunks swapped do not pass)
//!      …     Z  zero bytes, so that the payload starts at a multiple of 64 bytes
//!      …     8  header checksum: XXH3-64 (seed 0) of every byte before it
//!   H = 64·j L  payload (the kind's storage, exactly as in version 1)
//! ```
//!
//! Every byte is under a checksum: the header (parameters, chunk table, padding) under the
//! header checksum, each chunk of the payload under its own. Loading ([`Persist::load`],
//! [`Parts::parse`]) checks them all, as it checks version 1's one checksum, and hands the
//! kind the same payload: a kind's decoder does not know which version it reads. A
//! read-only view ([`view::FilterView`]) checks the header when it opens the file and each
//! chunk when a query first touches it, so a query against a 1 GB filter reads a few
//! chunks. The payload's 64-byte alignment lets a block of the blocked kinds (a 64-byte
//! cache line) lie inside one chunk and one cache line of the mapped file.
//!
//! **Which version is written.** [`Persist::to_bytes`], [`Persist::write_to`] and
//! [`Persist::save`] write version 1, as every earlier build did: a build before version 2
//! refuses a version-2 file (`unsupported format version 2`), so writing it by default
//! would break every reader that has not been updated (older CLIs and libraries, Python
//! wheels, and the bytes they keep: the Python package's `to_bytes`, serde's output). Version 2 is asked for:
//! [`Persist::to_bytes_chunked`], [`Persist::save_chunked`] (what the CLI writes for a new
//! file; `--format-version 1` there writes version 1). This
//! build reads both everywhere.
//!
//! All integers are little-endian. Decoding checks every length against the bytes actually
//! present before it slices or allocates, so a hostile header claiming terabytes fails
//! with [`DecodeError::Truncated`] instead of an allocation; the checksum is verified before
//! any field past the header is interpreted. Every failure is a typed [`DecodeError`].
//!
//! [`Persist::save`] writes to a temporary file in the same directory, syncs it, and
//! renames it over the target, so a crash or a full disk leaves the old file whole.

pub mod lock;
pub mod view;

use std::io::Write;
use std::path::Path;

use crate::error::{DecodeError, Error};
use crate::filter::{Filter, Kind};
use crate::hash::{HashFunction, Hashing, IndexScheme};

/// The eight bytes every bloomkit filter file starts with.
pub const MAGIC: &[u8; 8] = b"BLOOMKIT";
/// The format version this build writes by default (one checksum over the whole file).
pub const FORMAT_VERSION: u16 = 1;
/// The format version with a checksum per chunk of the payload, written on request
/// ([`Persist::to_bytes_chunked`]); this build reads both.
pub const CHUNKED_FORMAT_VERSION: u16 = 2;
/// The chunk size version 2 is written with: 2^16 bytes (64 KiB). A query through a view
/// checks the chunks it touches, each once: a few microseconds of hashing per chunk, and a
/// table of 8 bytes per chunk (150 KB for a 1.2 GB filter) checked when the view opens.
pub const DEFAULT_CHUNK_SHIFT: u8 = 16;
/// The smallest and largest chunk shift a version-2 file may have (4 KiB to 1 GiB chunks).
pub const CHUNK_SHIFTS: std::ops::RangeInclusive<u8> = 12..=30;
/// The payload of a version-2 file starts at a multiple of this many bytes.
pub const PAYLOAD_ALIGN: usize = 64;
/// Size of the fixed header up to and including the parameter length.
const HEADER_LEN: usize = 28;

/// Saving and loading a filter in the bloomkit file format.
///
/// ```
/// use bloomkit::{BloomFilter, Persist};
///
/// let mut filter = BloomFilter::with_capacity(1000, 0.01)?;
/// filter.insert("dist");
/// let bytes = filter.to_bytes();
/// let back = BloomFilter::from_bytes(&bytes)?;
/// assert!(back.contains("dist"));
/// assert!(BloomFilter::from_bytes(&bytes[..bytes.len() - 1]).is_err());
/// # Ok::<(), bloomkit::Error>(())
/// ```
pub trait Persist: Filter + Sized {
    /// Appends the kind-specific parameters.
    fn encode_params(&self, out: &mut Vec<u8>);

    /// Appends the kind's storage.
    fn encode_payload(&self, out: &mut Vec<u8>);

    /// Rebuilds the filter from a validated header's parts.
    fn decode_parts(parts: &Parts<'_>) -> Result<Self, DecodeError>;

    /// The filter in the bloomkit file format.
    fn to_bytes(&self) -> Vec<u8> {
        let mut params = Vec::new();
        self.encode_params(&mut params);
        encode(self.kind().tag(), self.hashing(), &params, |out| {
            self.encode_payload(out)
        })
    }

    /// The filter in format version 2 ([module docs](self)): a checksum per 64 KiB chunk of
    /// the payload, so that a [`FilterView`](view::FilterView) answers a query by reading
    /// and checking only the chunks it touches. Every reader of this build loads it as it
    /// loads version 1; builds before version 2 refuse it.
    ///
    /// ```
    /// use bloomkit::{BloomFilter, Persist};
    /// let mut filter = BloomFilter::with_capacity(1000, 0.01)?;
    /// filter.insert("dist");
    /// let bytes = filter.to_bytes_chunked();
    /// assert_eq!(u16::from_le_bytes([bytes[8], bytes[9]]), 2);
    /// assert_eq!(BloomFilter::from_bytes(&bytes)?, filter);
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    fn to_bytes_chunked(&self) -> Vec<u8> {
        let (header, payload) = self.chunked_parts(DEFAULT_CHUNK_SHIFT);
        let mut out = header;
        out.extend_from_slice(&payload);
        out
    }

    /// The header and the payload of the filter in format version 2 with chunks of
    /// 2^`chunk_shift` bytes (clamped to [`CHUNK_SHIFTS`]): written one after the other,
    /// they are the file.
    fn chunked_parts(&self, chunk_shift: u8) -> (Vec<u8>, Vec<u8>) {
        let mut params = Vec::new();
        self.encode_params(&mut params);
        let mut payload = Vec::new();
        self.encode_payload(&mut payload);
        let header = chunked_header(
            self.kind().tag(),
            self.hashing(),
            &params,
            &payload,
            chunk_shift,
        );
        (header, payload)
    }

    /// [`save`](Persist::save) in format version 2 (see
    /// [`to_bytes_chunked`](Persist::to_bytes_chunked)), atomically as `save` writes.
    fn save_chunked(&self, path: impl AsRef<Path>) -> Result<(), Error> {
        let (header, payload) = self.chunked_parts(DEFAULT_CHUNK_SHIFT);
        write_atomically_with(path.as_ref(), |file| {
            file.write_all(&header)?;
            file.write_all(&payload)
        })
    }

    /// Reads a filter of this kind from the bloomkit file format (either version).
    fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        Ok(Self::decode_parts(&Parts::parse(bytes)?)?)
    }

    /// Writes the filter in the bloomkit file format to any writer (a socket, a buffer, a
    /// compressor). For files, [`save`](Persist::save) also keeps the old file whole if
    /// the write fails.
    ///
    /// ```
    /// use bloomkit::{BloomFilter, Persist};
    /// let mut filter = BloomFilter::with_capacity(100, 0.01)?;
    /// filter.insert("dist");
    /// let mut wire = Vec::new();
    /// filter.write_to(&mut wire)?;
    /// let back = BloomFilter::read_from(&wire[..])?;
    /// assert!(back.contains("dist"));
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    fn write_to<W: std::io::Write>(&self, mut writer: W) -> Result<(), Error> {
        writer
            .write_all(&self.to_bytes())
            .and_then(|()| writer.flush())
            .map_err(|e| Error::io("writing a filter", e))
    }

    /// Reads one filter from any reader, consuming exactly its bytes (a stream may hold
    /// more after it). The lengths in the header are not trusted for allocation: the
    /// buffer grows only as bytes arrive, so a hostile header that claims terabytes costs
    /// what the stream really holds, then fails as truncated.
    fn read_from<R: std::io::Read>(reader: R) -> Result<Self, Error> {
        Self::from_bytes(&read_encoded(reader)?)
    }

    /// Writes the filter to `path` atomically: a crash or a failed write keeps the old file.
    fn save(&self, path: impl AsRef<Path>) -> Result<(), Error> {
        write_atomically(path.as_ref(), &self.to_bytes())
    }

    /// Reads a filter of this kind from a file.
    fn load(path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref();
        let bytes =
            std::fs::read(path).map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
        Self::from_bytes(&bytes).map_err(|e| with_path(e, path))
    }
}

/// The file of a structure with format tag `tag`: the header, `params`, the payload that
/// `payload` appends, and the checksum. [`Persist::to_bytes`] calls it for every registered
/// kind; a static structure outside the registry (the Bloomier filter) calls it with its own
/// tag.
pub(crate) fn encode(
    tag: u8,
    hashing: Hashing,
    params: &[u8],
    payload: impl FnOnce(&mut Vec<u8>),
) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + params.len() + 16);
    write_prefix(&mut out, tag, hashing);
    out.extend_from_slice(&(params.len() as u32).to_le_bytes());
    out.extend_from_slice(params);
    let length_at = out.len();
    out.extend_from_slice(&0u64.to_le_bytes());
    payload(&mut out);
    let payload_len = (out.len() - length_at - 8) as u64;
    out[length_at..length_at + 8].copy_from_slice(&payload_len.to_le_bytes());
    let checksum = xxhash_rust::xxh3::xxh3_64(&out);
    out.extend_from_slice(&checksum.to_le_bytes());
    out
}

/// The header of a version-2 file for `payload` (see the [module docs](self)): everything
/// before the payload, the chunk table and the header checksum included.
pub(crate) fn chunked_header(
    tag: u8,
    hashing: Hashing,
    params: &[u8],
    payload: &[u8],
    chunk_shift: u8,
) -> Vec<u8> {
    let shift = chunk_shift.clamp(*CHUNK_SHIFTS.start(), *CHUNK_SHIFTS.end());
    let chunks = payload.chunks(1 << shift);
    let mut out = Vec::with_capacity(HEADER_LEN + params.len() + 8 * chunks.len() + 128);
    write_prefix_version(&mut out, CHUNKED_FORMAT_VERSION, tag, hashing);
    out.extend_from_slice(&(params.len() as u32).to_le_bytes());
    out.extend_from_slice(params);
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.push(shift);
    for (i, chunk) in chunks.enumerate() {
        out.extend_from_slice(&chunk_checksum(i as u64, chunk).to_le_bytes());
    }
    out.resize(padded_header_len(out.len()) - 8, 0);
    let checksum = xxhash_rust::xxh3::xxh3_64(&out);
    out.extend_from_slice(&checksum.to_le_bytes());
    out
}

/// The checksum of chunk `index` of a version-2 payload: XXH3-64 seeded with the index.
pub(crate) fn chunk_checksum(index: u64, chunk: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64_with_seed(chunk, index)
}

/// The length of a version-2 header whose fields before the padding take `unpadded` bytes:
/// with the padding and the 8-byte header checksum, up to the next multiple of
/// [`PAYLOAD_ALIGN`].
fn padded_header_len(unpadded: usize) -> usize {
    (unpadded + 8).next_multiple_of(PAYLOAD_ALIGN)
}

/// Where the parts of a file lie, read from its header (either version) and checked against
/// the length of the file, and for version 2 with the header checksum verified. Nothing of
/// the payload is read.
#[derive(Debug, Clone)]
pub(crate) struct Layout<'a> {
    /// The format version (1 or 2).
    pub version: u16,
    /// The format tag.
    pub tag: u8,
    /// The hash function id, not yet checked.
    pub function: u8,
    /// The index scheme id, not yet checked.
    pub scheme: u8,
    /// The seed.
    pub seed: u64,
    /// The structure's parameters.
    pub params: &'a [u8],
    /// Where the payload starts.
    pub payload_at: usize,
    /// The payload's length.
    pub payload_len: usize,
    /// Version 2's chunks; `None` for version 1, whose checksum follows the payload.
    pub chunks: Option<Chunks<'a>>,
}

/// The chunk table of a version-2 file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Chunks<'a> {
    /// Chunks are 2^shift bytes.
    pub shift: u8,
    /// Where the table starts in the file.
    pub table_at: usize,
    /// The checksums, 8 little-endian bytes each.
    pub table: &'a [u8],
}

impl Chunks<'_> {
    /// The number of chunks.
    pub fn count(&self) -> usize {
        self.table.len() / 8
    }

    /// The byte range of chunk `index` within a payload of `payload_len` bytes.
    pub fn range(&self, index: usize, payload_len: usize) -> std::ops::Range<usize> {
        let start = index << self.shift;
        start..(start + (1 << self.shift)).min(payload_len)
    }

    /// Checks chunk `index`, whose bytes are `chunk`, against its stored checksum.
    pub fn check(&self, index: usize, chunk: &[u8]) -> Result<(), DecodeError> {
        let at = index * 8;
        let stored = u64::from_le_bytes(self.table[at..at + 8].try_into().expect("8 bytes"));
        let computed = chunk_checksum(index as u64, chunk);
        if stored == computed {
            Ok(())
        } else {
            Err(DecodeError::ChunkChecksumMismatch {
                chunk: index as u64,
                offset: (index as u64) << self.shift,
                stored,
                computed,
            })
        }
    }
}

/// A file's first bytes: the magic, then a format version this build reads (returned).
pub(crate) fn read_magic_and_version(r: &mut Reader<'_>) -> Result<u16, DecodeError> {
    if r.take(MAGIC.len())? != MAGIC {
        return Err(DecodeError::BadMagic);
    }
    let version = r.u16()?;
    if version != FORMAT_VERSION && version != CHUNKED_FORMAT_VERSION {
        return Err(DecodeError::UnsupportedVersion(
            version,
            CHUNKED_FORMAT_VERSION,
        ));
    }
    Ok(version)
}

impl<'a> Layout<'a> {
    /// Reads the layout of the file `bytes`: magic, version, every length (against the bytes
    /// present), for version 2 the chunk shift, the zero padding and the header checksum.
    pub(crate) fn read(bytes: &'a [u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(bytes);
        let version = read_magic_and_version(&mut r)?;
        let tag = r.u8()?;
        let function = r.u8()?;
        let scheme = r.u8()?;
        if r.take(3)? != [0, 0, 0] {
            return Err(invalid("reserved", "must be zero".into()));
        }
        let seed = r.u64()?;
        let params_len = r.u32()? as u64;
        let params = r.take_u64(params_len)?;
        let payload_len = r.u64()?;
        let mut chunks = None;
        if version == CHUNKED_FORMAT_VERSION {
            let shift = r.u8()?;
            if !CHUNK_SHIFTS.contains(&shift) {
                return Err(invalid(
                    "chunk shift",
                    format!("{shift} is not in {CHUNK_SHIFTS:?}"),
                ));
            }
            // At most 2⁶⁴ / 2¹² chunks: 8 bytes each cannot overflow.
            let count = payload_len.div_ceil(1 << shift);
            let table_at = r.position();
            let table = r.take_u64(count * 8)?;
            let padding = padded_header_len(r.position()) - 8 - r.position();
            if r.take(padding)?.iter().any(|&b| b != 0) {
                return Err(invalid("header padding", "must be zero".into()));
            }
            let body_end = r.position();
            let stored = r.u64()?;
            let computed = xxhash_rust::xxh3::xxh3_64(&bytes[..body_end]);
            if stored != computed {
                return Err(DecodeError::ChecksumMismatch { stored, computed });
            }
            chunks = Some(Chunks {
                shift,
                table_at,
                table,
            });
        }
        let payload_at = r.position();
        r.take_u64(payload_len)?;
        if version == FORMAT_VERSION {
            r.u64()?;
        }
        if !r.is_at_end() {
            return Err(DecodeError::TrailingBytes(r.remaining()));
        }
        Ok(Layout {
            version,
            tag,
            function,
            scheme,
            seed,
            params,
            payload_at,
            payload_len: payload_len as usize,
            chunks,
        })
    }

    /// The hashing the header names, checked.
    pub(crate) fn hashing(&self) -> Result<Hashing, DecodeError> {
        let invalid = |field, e: Error| DecodeError::InvalidField {
            field,
            reason: e.to_string(),
        };
        Ok(Hashing {
            function: HashFunction::from_id(self.function)
                .map_err(|e| invalid("hash function", e))?,
            scheme: IndexScheme::from_id(self.scheme).map_err(|e| invalid("index scheme", e))?,
            seed: self.seed,
        })
    }
}

/// Format tags of structures that are not filter kinds (static, built once from a set, so
/// without `Filter::insert`) and live outside the registry, with their names: `Parts` refuses
/// them with a message that says how to read them instead. The tag numbers are shared with
/// [`Kind`] and never reused.
const STATIC_TAGS: &[(u8, &str)] = &[
    (
        crate::bloomier::FORMAT_TAG,
        "a Bloomier filter (a static function, not a filter kind); read it with \
         `BloomierFilter::from_bytes` or `bloomkit bloomier get`",
    ),
    (
        crate::buffered::BUFFERED_TAG,
        "a buffered Bloom filter on disk (read page by page, not loaded whole); open it \
         with `BufferedBloomFilter::open` or `bloomkit ssd check` (`bloomkit ssd info` \
         for its parameters)",
    ),
];

/// The kind a file's tag names; a static structure's tag is refused with a message that
/// says how to read it instead, any other tag as unknown.
pub(crate) fn kind_of_tag(tag: u8) -> Result<Kind, DecodeError> {
    if let Some((_, what)) = STATIC_TAGS.iter().find(|(t, _)| *t == tag) {
        return Err(DecodeError::InvalidField {
            field: "kind",
            reason: format!("tag {tag} is {what}"),
        });
    }
    Kind::from_tag(tag).ok_or(DecodeError::UnknownKind(tag))
}

/// The bytes of one encoded filter from `reader`: the fixed header, the parameters and the
/// payload whose lengths it gives, and the checksum — no byte past them.
fn read_encoded(reader: impl std::io::Read) -> Result<Vec<u8>, Error> {
    use std::io::Read;
    let mut reader = reader;
    let mut bytes = Vec::with_capacity(HEADER_LEN);
    // Reads exactly `len` more bytes (or fails as truncated), growing the buffer as data
    // arrives rather than by the claimed length.
    let mut take = |bytes: &mut Vec<u8>, len: u64| -> Result<(), Error> {
        let start = bytes.len();
        (&mut reader)
            .take(len)
            .read_to_end(bytes)
            .map_err(|e| Error::io("reading a filter", e))?;
        let got = (bytes.len() - start) as u64;
        if got < len {
            return Err(Error::Decode(DecodeError::Truncated {
                offset: start,
                needed: len,
                available: got as usize,
            }));
        }
        Ok(())
    };
    take(&mut bytes, HEADER_LEN as u64)?;
    let params_len = u32::from_le_bytes(bytes[HEADER_LEN - 4..].try_into().expect("4 bytes"));
    take(&mut bytes, u64::from(params_len) + 8)?;
    let at = bytes.len() - 8;
    let payload_len = u64::from_le_bytes(bytes[at..].try_into().expect("8 bytes"));
    if u16::from_le_bytes([bytes[8], bytes[9]]) == CHUNKED_FORMAT_VERSION {
        // Version 2: the chunk shift, the chunk table, the padding and the header checksum
        // come before the payload, and nothing after it. A shift out of range is refused
        // by `Layout::read` after these bytes; it only bounds the table here.
        take(&mut bytes, 1)?;
        let shift = (*bytes.last().expect("one byte")).clamp(1, 63);
        let table = payload_len.div_ceil(1 << shift).saturating_mul(8);
        take(&mut bytes, table)?;
        let rest = padded_header_len(bytes.len()) - bytes.len();
        take(&mut bytes, rest as u64)?;
        take(&mut bytes, payload_len)?;
    } else {
        take(&mut bytes, payload_len.saturating_add(8))?;
    }
    Ok(bytes)
}

/// The first 24 bytes of every bloomkit file (the in-memory kinds' and the buffered
/// filter's on-disk file): magic, format version, kind tag, hash function id, index scheme
/// id, three reserved zero bytes, seed.
pub(crate) fn write_prefix(out: &mut Vec<u8>, tag: u8, hashing: Hashing) {
    write_prefix_version(out, FORMAT_VERSION, tag, hashing)
}

/// [`write_prefix`] with another format version.
fn write_prefix_version(out: &mut Vec<u8>, version: u16, tag: u8, hashing: Hashing) {
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&version.to_le_bytes());
    out.push(tag);
    out.push(hashing.function.id());
    out.push(hashing.scheme.id());
    out.extend_from_slice(&[0, 0, 0]);
    out.extend_from_slice(&hashing.seed.to_le_bytes());
}

/// Reads [`write_prefix`]'s 24 bytes, checking the magic, the version and the reserved
/// bytes; returns the kind tag, the hash function and index scheme ids (for the caller to
/// check) and the seed.
pub(crate) fn read_prefix(r: &mut Reader<'_>) -> Result<(u8, u8, u8, u64), DecodeError> {
    if r.take(MAGIC.len())? != MAGIC {
        return Err(DecodeError::BadMagic);
    }
    let version = r.u16()?;
    if version != FORMAT_VERSION {
        return Err(DecodeError::UnsupportedVersion(version, FORMAT_VERSION));
    }
    let tag = r.u8()?;
    let function = r.u8()?;
    let scheme = r.u8()?;
    if r.take(3)? != [0, 0, 0] {
        return Err(invalid("reserved", "must be zero".into()));
    }
    Ok((tag, function, scheme, r.u64()?))
}

/// Adds the file name to a decoding error, so the CLI can say which file is bad.
pub(crate) fn with_path(error: Error, path: &Path) -> Error {
    match error {
        Error::Decode(error) => Error::InvalidFile {
            path: path.to_path_buf(),
            error,
        },
        other => other,
    }
}

/// The validated pieces of an encoded filter, handed to a kind's decoder.
#[derive(Debug, Clone)]
pub struct Parts<'a> {
    /// The kind tag.
    pub kind: Kind,
    /// The hashing configuration from the header.
    pub hashing: Hashing,
    /// The kind-specific parameters.
    pub params: &'a [u8],
    /// The kind's storage.
    pub payload: &'a [u8],
}

impl<'a> Parts<'a> {
    /// Splits and checks an encoded filter: magic, version, identifiers, every length, and
    /// the checksum. Nothing is allocated.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, DecodeError> {
        let frame = Frame::parse(bytes, |tag| kind_of_tag(tag).map(|_| ()))?;
        Ok(Parts {
            kind: Kind::from_tag(frame.tag).expect("checked by the closure"),
            hashing: frame.hashing,
            params: frame.params,
            payload: frame.payload,
        })
    }

    /// Fails unless the parts are of the `expected` kind.
    pub fn expect_kind(&self, expected: Kind) -> Result<(), DecodeError> {
        if self.kind == expected {
            Ok(())
        } else {
            Err(DecodeError::InvalidField {
                field: "kind",
                reason: format!("expected a {expected} filter, found a {} filter", self.kind),
            })
        }
    }
}

/// The validated pieces of an encoded structure of any tag: what [`Parts`] is made from, and
/// what a static structure outside the registry decodes from.
#[derive(Debug, Clone)]
pub(crate) struct Frame<'a> {
    /// The format tag.
    pub tag: u8,
    /// The hashing configuration from the header.
    pub hashing: Hashing,
    /// The structure's parameters.
    pub params: &'a [u8],
    /// The structure's storage.
    pub payload: &'a [u8],
}

impl<'a> Frame<'a> {
    /// Splits and checks an encoded structure: magic, version, every length, the checksum
    /// (version 1) or the header's and every chunk's (version 2), then the tag (with
    /// `check_tag`) and the hashing identifiers. Nothing is allocated.
    pub(crate) fn parse(
        bytes: &'a [u8],
        check_tag: impl FnOnce(u8) -> Result<(), DecodeError>,
    ) -> Result<Self, DecodeError> {
        let layout = Layout::read(bytes)?;
        let payload = &bytes[layout.payload_at..layout.payload_at + layout.payload_len];
        match layout.chunks {
            None => {
                let body_end = layout.payload_at + layout.payload_len;
                let stored =
                    u64::from_le_bytes(bytes[body_end..].try_into().expect("checked by Layout"));
                let computed = xxhash_rust::xxh3::xxh3_64(&bytes[..body_end]);
                if stored != computed {
                    return Err(DecodeError::ChecksumMismatch { stored, computed });
                }
            }
            Some(chunks) => {
                for index in 0..chunks.count() {
                    chunks.check(index, &payload[chunks.range(index, payload.len())])?;
                }
            }
        }
        check_tag(layout.tag)?;
        Ok(Frame {
            tag: layout.tag,
            hashing: layout.hashing()?,
            params: layout.params,
            payload,
        })
    }
}

/// Fixed-size entries from bytes fed in pieces of any length. An entry split between two
/// pieces is put together before it is handed on, so a table reads the same whether it comes
/// whole (a file loaded) or chunk by chunk (a view opening, each chunk checked against its
/// checksum as it is read). The weighted filter's weight table (9-byte entries) and the
/// spectral filter's overflow tables (12-byte entries) are read through it; each kind checks
/// its own entries in the closure.
pub(crate) struct EntryStream<const N: usize> {
    partial: [u8; N],
    have: usize,
}

impl<const N: usize> EntryStream<N> {
    pub(crate) const fn new() -> Self {
        EntryStream {
            partial: [0; N],
            have: 0,
        }
    }

    /// Hands `each` every entry that `bytes` completes, in order; the bytes of an entry not
    /// yet complete are kept for the next piece. Stops at the first error `each` returns.
    pub(crate) fn feed<E>(
        &mut self,
        mut bytes: &[u8],
        mut each: impl FnMut(&[u8; N]) -> Result<(), E>,
    ) -> Result<(), E> {
        if self.have > 0 {
            let take = (N - self.have).min(bytes.len());
            self.partial[self.have..self.have + take].copy_from_slice(&bytes[..take]);
            (self.have, bytes) = (self.have + take, &bytes[take..]);
            if self.have < N {
                return Ok(());
            }
            self.have = 0;
            let entry = self.partial;
            each(&entry)?;
        }
        let (entries, rest) = bytes.as_chunks::<N>();
        for entry in entries {
            each(entry)?;
        }
        self.partial[..rest.len()].copy_from_slice(rest);
        self.have = rest.len();
        Ok(())
    }

    /// Whether the bytes fed so far end inside an entry.
    pub(crate) fn inside_an_entry(&self) -> bool {
        self.have != 0
    }
}

/// A bounds-checked little-endian reader over a byte slice. Every read that would pass the
/// end is a [`DecodeError::Truncated`]. (Public for the workspace's Redis module, which
/// reads RedisBloom's headers with it; not part of the documented API.)
#[doc(hidden)]
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    bytes: &'a [u8],
    position: usize,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, position: 0 }
    }

    /// The offset of the next byte to read.
    pub fn position(&self) -> usize {
        self.position
    }

    /// How many bytes are left.
    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.position
    }

    /// Whether every byte has been read.
    pub fn is_at_end(&self) -> bool {
        self.remaining() == 0
    }

    /// The next `len` bytes.
    pub fn take(&mut self, len: usize) -> Result<&'a [u8], DecodeError> {
        self.take_u64(len as u64)
    }

    /// The next `len` bytes, for a length read from the input (checked before use).
    pub fn take_u64(&mut self, len: u64) -> Result<&'a [u8], DecodeError> {
        if len > self.remaining() as u64 {
            return Err(DecodeError::Truncated {
                offset: self.position,
                needed: len,
                available: self.remaining(),
            });
        }
        let start = self.position;
        self.position += len as usize;
        Ok(&self.bytes[start..self.position])
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        Ok(self.take(N)?.try_into().expect("take returns N bytes"))
    }

    /// A `u8`.
    pub fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.array::<1>()?[0])
    }

    /// A little-endian `u16`.
    pub fn u16(&mut self) -> Result<u16, DecodeError> {
        Ok(u16::from_le_bytes(self.array()?))
    }

    /// A little-endian `u32`.
    pub fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    /// A little-endian `u64`.
    pub fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    /// A little-endian IEEE-754 `f64`.
    pub fn f64(&mut self) -> Result<f64, DecodeError> {
        Ok(f64::from_le_bytes(self.array()?))
    }

    /// Fails unless every byte has been read.
    pub fn finish(&self, what: &'static str) -> Result<(), DecodeError> {
        if self.is_at_end() {
            Ok(())
        } else {
            Err(DecodeError::InvalidField {
                field: what,
                reason: format!("{} unexpected trailing bytes", self.remaining()),
            })
        }
    }
}

/// Declares the parameters a kind stores, once, and what follows from them: the struct;
/// its bytes on disk — each field little-endian in the order written (`u8`, `u16`, `u32`,
/// `u64`, `f64`), read back with every declared check (`field: u32 = … => check_num_hashes`,
/// a check from this module, run after the whole record has been read and found to be
/// exactly its length); `Stored::of(&filter)`, the record of a filter, each field taken by
/// the expression after `=`; and the kind's `Debug`, which shows that record and the
/// hashing. A kind's `Persist` then writes `Stored::of(self)` and reads `Stored::read` to
/// load, and the layout is stated in one place, next to the code that uses it. A kind whose
/// payload is one array (with `write_le_bytes`) ends the declaration with
/// `persist Variant, payload bits;` and gets that `Persist`: the record, the array, and, for
/// a file of its kind, its own `fn decode(parts) -> Result<Self, DecodeError>` to load.
///
/// ```text
/// crate::codec::stored! {
///     /// The classic filter's parameters on disk (36 bytes).
///     struct Stored of f: BloomFilter {
///         num_bits: u64 = f.num_bits() => check_num_bits,
///         num_hashes: u32 = f.num_hashes => check_num_hashes,
///         capacity: u64 = f.capacity => check_capacity,
///         target_fpp: f64 = f.target_fpp => check_target_fpp,
///         inserted: u64 = f.inserted,
///     }
/// }
/// ```
macro_rules! stored {
    (
        $(#[$meta:meta])*
        struct $name:ident of $f:ident: $kind:ident {
            $($field:ident: $ty:ident = $get:expr $(=> $check:ident)?),* $(,)?
        }
        $(persist $variant:ident, payload $payload:ident;)?
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq)]
        struct $name {
            $($field: $ty,)*
        }

        impl $name {
            /// The record of a filter, as saved.
            fn of($f: &$kind) -> Self {
                $name { $($field: $get,)* }
            }

            /// Appends the fields, little-endian, in declaration order.
            fn write(&self, out: &mut Vec<u8>) {
                $(out.extend_from_slice(&self.$field.to_le_bytes());)*
            }

            /// Reads exactly the declared fields, then runs their checks.
            fn read(bytes: &[u8]) -> Result<Self, $crate::error::DecodeError> {
                let mut r = $crate::codec::Reader::new(bytes);
                let stored = $name {
                    $($field: r.$ty()?,)*
                };
                r.finish("parameters")?;
                $($($crate::codec::$check(stored.$field)?;)?)*
                Ok(stored)
            }
        }

        /// The stored parameters and the hashing.
        impl ::core::fmt::Debug for $kind {
            fn fmt(&self, out: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                let stored = $name::of(self);
                out.debug_struct(stringify!($kind))
                    $(.field(stringify!($field), &stored.$field))*
                    .field("hashing", &$crate::filter::Filter::hashing(self))
                    .finish()
            }
        }

        $(
            /// The record, the one array as its payload, and the kind's own decoder for its files.
            impl $crate::codec::Persist for $kind {
                fn encode_params(&self, out: &mut Vec<u8>) {
                    $name::of(self).write(out);
                }

                fn encode_payload(&self, out: &mut Vec<u8>) {
                    self.$payload.write_le_bytes(out);
                }

                fn decode_parts(
                    parts: &$crate::codec::Parts<'_>,
                ) -> Result<Self, $crate::error::DecodeError> {
                    parts.expect_kind($crate::filter::Kind::$variant)?;
                    Self::decode(parts)
                }
            }
        )?
    };
}
pub(crate) use stored;

/// The error for a stored field that no valid filter has: every decoder's one way to say
/// so.
pub(crate) fn invalid(field: &'static str, reason: String) -> DecodeError {
    DecodeError::InvalidField { field, reason }
}

/// Decoding check shared by the kinds stored as whole blocks (blocked, split-block): the
/// number of blocks in `1..=max`, and a payload of exactly that many blocks of
/// `block_bytes`, checked before anything is allocated or read.
pub(crate) fn check_blocks(
    num_blocks: u64,
    max: u64,
    block_bytes: u64,
    payload_len: usize,
) -> Result<(), DecodeError> {
    if num_blocks == 0 || num_blocks > max {
        return Err(invalid(
            "num_blocks",
            format!("{num_blocks} is not in 1..={max}"),
        ));
    }
    if Some(payload_len as u64) != num_blocks.checked_mul(block_bytes) {
        return Err(invalid(
            "payload",
            format!(
                "{payload_len} bytes cannot hold exactly {num_blocks} blocks of {block_bytes} \
                 bytes"
            ),
        ));
    }
    Ok(())
}

/// Decoding check shared by the kinds: k is in `1..=MAX_NUM_HASHES`.
pub fn check_num_hashes(num_hashes: u32) -> Result<(), DecodeError> {
    use crate::params::MAX_NUM_HASHES;
    if num_hashes == 0 || num_hashes > MAX_NUM_HASHES {
        return Err(DecodeError::InvalidField {
            field: "num_hashes",
            reason: format!("{num_hashes} is not in 1..={MAX_NUM_HASHES}"),
        });
    }
    Ok(())
}

/// Decoding check shared by the kinds whose storage is one bit array: m is in
/// `1..=MAX_NUM_BITS`.
pub(crate) fn check_num_bits(num_bits: u64) -> Result<(), DecodeError> {
    use crate::params::MAX_NUM_BITS;
    if num_bits == 0 || num_bits > MAX_NUM_BITS {
        return Err(invalid(
            "num_bits",
            format!("{num_bits} is not in 1..={MAX_NUM_BITS}"),
        ));
    }
    Ok(())
}

/// Decoding check shared by the counter kinds: a counter width in `1..=16`.
pub(crate) fn check_counter_width(width: u32) -> Result<(), DecodeError> {
    check_width_in_range("counter_width", width)
}

/// A stored cell width (`field`) in `1..=16`, the widths packed counters take.
pub(crate) fn check_width_in_range(field: &'static str, width: u32) -> Result<(), DecodeError> {
    if !(1..=16).contains(&width) {
        return Err(invalid(field, format!("{width} is not in 1..=16")));
    }
    Ok(())
}

/// Decoding check shared by the counter kinds: at least one counter, and the
/// `num_counters + extra` counters of `width` bits (`extra`: a second array's, or 0) within
/// `MAX_NUM_BITS`, before anything is allocated.
pub(crate) fn check_num_counters(
    num_counters: u64,
    extra: u64,
    width: u32,
) -> Result<(), DecodeError> {
    use crate::params::MAX_NUM_BITS;
    let cells = num_counters.saturating_add(extra);
    if num_counters == 0 || cells.saturating_mul(u64::from(width)) > MAX_NUM_BITS {
        return Err(invalid(
            "num_counters",
            format!("{num_counters} counters of {width} bits are not in 1..={MAX_NUM_BITS} bits"),
        ));
    }
    Ok(())
}

/// Decoding check shared by the kinds: a capacity of at least one item.
pub fn check_capacity(capacity: u64) -> Result<(), DecodeError> {
    check_positive("capacity", capacity)
}

/// Decoding check shared by the kinds: a target false-positive probability in [0, 1].
///
/// Closed, unlike a requested ε: a filter whose dimensions the user fixed reports their
/// exact rate, which is 1 for one bit and one hash (m = k = 1) and underflows to 0 for huge
/// m and k, and whatever a builder makes must load back. Nothing computes with the stored
/// value; it is reported.
pub fn check_target_fpp(target_fpp: f64) -> Result<(), DecodeError> {
    if !(0.0..=1.0).contains(&target_fpp) {
        return Err(invalid(
            "target_fpp",
            format!("{target_fpp} is not in [0, 1]"),
        ));
    }
    Ok(())
}

/// A stored count that must be at least 1 (a capacity, under whatever name the kind's
/// layout gives it).
pub(crate) fn check_positive(field: &'static str, value: u64) -> Result<(), DecodeError> {
    if value == 0 {
        return Err(invalid(field, "must be at least 1".into()));
    }
    Ok(())
}

/// A stored probability that must lie strictly between 0 and 1 (NaN does not).
pub(crate) fn check_probability(field: &'static str, value: f64) -> Result<(), DecodeError> {
    if !(value > 0.0 && value < 1.0) {
        return Err(invalid(field, format!("{value} is not in (0, 1)")));
    }
    Ok(())
}

/// Writes `bytes` to `path` through a temporary file in the same directory: write, fsync,
/// rename over the target, fsync the directory. Readers see the old file or the new one,
/// never a mix; on failure the temporary file is removed and the old file is untouched.
///
/// A symbolic link at `path` is followed: the file it names is replaced and the link kept,
/// as writing to the link would (renaming over the link itself would leave the real file
/// without the change). The new file keeps the replaced file's permission bits and, where
/// the process may set them, its owner and group.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    write_atomically_with(path, |file| file.write_all(bytes))
}

/// [`write_atomically`] for content written piece by piece (a file larger than memory, as
/// the buffered filter's): `write` fills the temporary file, which is then synced and
/// renamed over `path`; on any failure the old file is untouched.
pub fn write_atomically_with(
    path: &Path,
    write: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> Result<(), Error> {
    replace_file_with(path, write).map_err(|e| Error::io(format!("writing {}", path.display()), e))
}

/// [`write_atomically_with`] with the operating system's error as it is (its
/// [`ErrorKind`](std::io::ErrorKind) kept, for callers that map kinds, as the Python
/// package does to `FileNotFoundError`, `PermissionError`, …).
///
/// ```
/// use std::io::Write;
/// # let dir = tempfile::tempdir()?;
/// let path = dir.path().join("f.bin");
/// bloomkit::codec::replace_file_with(&path, |file| file.write_all(b"old"))?;
/// bloomkit::codec::replace_file_with(&path, |file| file.write_all(b"new"))?;
/// assert_eq!(std::fs::read(&path)?, b"new");
/// // A directory that does not exist: the error keeps its kind.
/// let missing = dir.path().join("no-such-dir").join("f.bin");
/// let error = bloomkit::codec::replace_file_with(&missing, |_| Ok(())).unwrap_err();
/// assert_eq!(error.kind(), std::io::ErrorKind::NotFound);
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn replace_file_with(
    path: &Path,
    write: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let target = follow_symlinks(path)?;
    let path = target.as_path();
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    remove_abandoned_temporaries(&dir, name);
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    // Unique per process and per call, so concurrent saves never share a temporary file.
    static SAVES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = SAVES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    tmp_name.push(format!(".tmp-{}-{n}", std::process::id()));
    let tmp = dir.join(tmp_name);
    // The file being replaced, if any: its permissions (and owner) carry over.
    let old = std::fs::metadata(path).ok().filter(|m| m.is_file());

    let result = (|| {
        let mut file = std::fs::File::create(&tmp)?;
        write(&mut file)?;
        if let Some(old) = &old {
            keep_owner(&file, old);
            file.set_permissions(old.permissions())?;
        }
        file.sync_all()?;
        drop(file);
        std::fs::rename(&tmp, path)?;
        // Make the rename itself durable. Opening a directory for fsync is not supported
        // everywhere, so a failure here is not an error: the data is already in place.
        if let Ok(d) = std::fs::File::open(&dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Removes the temporary files that saves of the file `name` in `dir` left when their process
/// was killed mid-write (Ctrl-C, `ulimit -f`, the OOM killer): `.NAME.tmp-PID-N` whose process
/// PID no longer runs. Each may be as large as the filter, and nothing else would ever remove
/// it. Best effort, and only where a process's liveness can be read (Linux's `/proc`); a file
/// of a running process — another save in flight — is never touched. (A process of another
/// PID namespace, a container sharing the directory, looks gone: its save in flight would
/// then fail, keeping the old file, as a save that loses its temporary file does.)
fn remove_abandoned_temporaries(dir: &Path, name: &std::ffi::OsStr) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Some(name) = name.to_str() else { return };
    let prefix = format!(".{name}.tmp-");
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(rest) = file_name.to_str().and_then(|f| f.strip_prefix(&prefix)) else {
            continue;
        };
        let Some((pid, n)) = rest.split_once('-') else {
            continue;
        };
        let numeric = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if !(numeric(pid) && numeric(n)) || pid == std::process::id().to_string() {
            continue;
        }
        if !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// `path` with every symbolic link along its last component followed (relative links
/// resolved against the link's directory), so that a save replaces the file a reader of
/// `path` opens. A dangling link gives the path it names, created by the save.
fn follow_symlinks(path: &Path) -> std::io::Result<std::path::PathBuf> {
    // As the kernel does (ELOOP), give up on a chain of more than 40 links.
    const MAX_LINKS: usize = 40;
    let mut path = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let link = std::fs::read_link(&path)?;
                path = match path.parent() {
                    Some(dir) if link.is_relative() => dir.join(link),
                    _ => link,
                };
            }
            _ => return Ok(path),
        }
    }
    Err(std::io::Error::other(format!(
        "more than {MAX_LINKS} symbolic links to follow"
    )))
}

/// Gives the new file the replaced one's owner and group, best effort: only root may give a
/// file away, and a save by its owner already has the owner (the group is tried alone).
#[cfg(unix)]
fn keep_owner(file: &std::fs::File, old: &std::fs::Metadata) {
    use std::os::unix::fs::MetadataExt;
    if std::os::unix::fs::fchown(file, Some(old.uid()), Some(old.gid())).is_err() {
        let _ = std::os::unix::fs::fchown(file, None, Some(old.gid()));
    }
}

#[cfg(not(unix))]
fn keep_owner(_file: &std::fs::File, _old: &std::fs::Metadata) {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BloomFilter, CuckooFilter};

    /// A reader that hands out one byte per call, as a slow socket might.
    struct Trickle<'a>(&'a [u8]);

    impl std::io::Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            match (self.0.split_first(), buf.first_mut()) {
                (Some((&b, rest)), Some(slot)) => {
                    *slot = b;
                    self.0 = rest;
                    Ok(1)
                }
                _ => Ok(0),
            }
        }
    }

    #[test]
    fn read_from_takes_exactly_one_filter_from_a_stream() {
        let mut a = BloomFilter::with_capacity(100, 0.01).unwrap();
        a.insert("a");
        let mut b = CuckooFilter::with_capacity(100, 0.01).unwrap();
        b.insert("b").unwrap();
        let mut stream = Vec::new();
        a.write_to(&mut stream).unwrap();
        b.write_to(&mut stream).unwrap();
        stream.extend_from_slice(b"tail");
        let mut reader = &stream[..];
        assert_eq!(BloomFilter::read_from(&mut reader).unwrap(), a);
        let back = CuckooFilter::read_from(Trickle(reader)).unwrap();
        assert_eq!(back.to_bytes(), b.to_bytes());
        let mut reader = &stream[a.to_bytes().len() + b.to_bytes().len()..];
        let mut rest = Vec::new();
        std::io::Read::read_to_end(&mut reader, &mut rest).unwrap();
        assert_eq!(rest, b"tail");
    }

    #[test]
    fn read_from_refuses_every_cut_and_trusts_no_claimed_length() {
        let mut filter = BloomFilter::with_capacity(50, 0.01).unwrap();
        filter.insert("x");
        let bytes = filter.to_bytes();
        for cut in 0..bytes.len() {
            let err = BloomFilter::read_from(&bytes[..cut]).unwrap_err();
            assert!(
                matches!(err, Error::Decode(DecodeError::Truncated { .. })),
                "{cut}: {err}"
            );
        }
        // A header claiming a 2⁶⁴ − 1 byte payload over a stream of a few bytes: an error
        // after reading what is there, never an allocation of the claimed size.
        let mut hostile = bytes[..HEADER_LEN].to_vec();
        hostile[HEADER_LEN - 4..].copy_from_slice(&0u32.to_le_bytes());
        hostile.extend_from_slice(&u64::MAX.to_le_bytes());
        hostile.extend_from_slice(&[0; 16]);
        let err = BloomFilter::read_from(&hostile[..]).unwrap_err();
        assert!(
            matches!(err, Error::Decode(DecodeError::Truncated { .. })),
            "{err}"
        );
    }

    #[test]
    fn reader_refuses_to_read_past_the_end() {
        let mut r = Reader::new(&[1, 2, 3]);
        assert_eq!(r.u16().unwrap(), 0x0201);
        assert!(matches!(
            r.u16(),
            Err(DecodeError::Truncated {
                offset: 2,
                needed: 2,
                available: 1
            })
        ));
        assert!(r.take_u64(u64::MAX).is_err());
    }

    #[test]
    fn garbage_is_not_a_filter() {
        assert_eq!(
            Parts::parse(b"hello world, this is not a filter at all").unwrap_err(),
            DecodeError::BadMagic
        );
        assert!(matches!(
            Parts::parse(b""),
            Err(DecodeError::Truncated { .. })
        ));
    }

    #[test]
    fn atomic_write_replaces_the_file_and_leaves_no_temporary() {
        let dir = std::env::temp_dir().join(format!("bloomkit-codec-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f.bin");
        write_atomically(&path, b"old").unwrap();
        write_atomically(&path, b"new").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn failed_write_keeps_the_old_file() {
        let dir = std::env::temp_dir().join(format!("bloomkit-codec-fail-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f.bin");
        std::fs::write(&path, b"old").unwrap();
        // Writing into a directory that does not exist fails before the rename.
        let missing = dir.join("no-such-dir").join("f.bin");
        assert!(write_atomically(&missing, b"new").is_err());
        // A target that is a directory cannot be replaced by a file: the rename fails.
        let target_dir = dir.join("sub");
        std::fs::create_dir_all(&target_dir).unwrap();
        assert!(write_atomically(&target_dir, b"new").is_err());
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 2, "temporary left behind: {names:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A save killed mid-write leaves `.NAME.tmp-PID-N` behind; the next save of the file
    /// removes those whose process is gone, and keeps those of a running process (a save in
    /// flight), of this process, and every other file.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_save_removes_the_temporaries_that_killed_saves_left() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.bin");
        std::fs::write(&path, b"old").unwrap();
        // A process id that is not running: a child that has exited and been reaped.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let live = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let names = [
            format!(".f.bin.tmp-{dead}-0"),
            format!(".f.bin.tmp-{}-3", live.id()),
            format!(".f.bin.tmp-{}-99", std::process::id()),
            format!(".g.bin.tmp-{dead}-0"),
            format!(".f.bin.tmp-{dead}-x"),
            "f.bin.tmp-1-1".to_owned(),
        ];
        for name in &names {
            std::fs::write(dir.path().join(name), b"partial").unwrap();
        }
        write_atomically(&path, b"new").unwrap();
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        let mut expected: Vec<String> = names[1..].to_vec();
        expected.push("f.bin".to_owned());
        expected.sort();
        let mut live = live;
        let _ = live.kill();
        let _ = live.wait();
        assert_eq!(left, expected);
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
    }

    /// `bloomkit add link.bloom x`, where link.bloom is a symlink to the real filter: the save
    /// must land in the file the link names (the one a reader of either name opens), not
    /// replace the link with a new file and leave the real filter without the item.
    #[cfg(unix)]
    #[test]
    fn atomic_write_through_a_symlink_replaces_its_target_and_keeps_the_link() {
        let dir = tempfile::tempdir().unwrap();
        let real_dir = dir.path().join("data");
        std::fs::create_dir(&real_dir).unwrap();
        let real = real_dir.join("f.bin");
        std::fs::write(&real, b"old").unwrap();
        // A relative link to a relative link, as `ln -s` makes them.
        let link = dir.path().join("link.bin");
        std::os::unix::fs::symlink("data/f.bin", &link).unwrap();
        let link2 = dir.path().join("link2.bin");
        std::os::unix::fs::symlink("link.bin", &link2).unwrap();
        write_atomically(&link2, b"new").unwrap();
        assert_eq!(std::fs::read(&real).unwrap(), b"new");
        for l in [&link, &link2] {
            assert!(std::fs::symlink_metadata(l)
                .unwrap()
                .file_type()
                .is_symlink());
        }
        // No temporary left beside the link or the target.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 3);
        assert_eq!(std::fs::read_dir(&real_dir).unwrap().count(), 1);
        // A dangling link is written through too, creating the file it names.
        let dangling = dir.path().join("dangling.bin");
        std::os::unix::fs::symlink("data/g.bin", &dangling).unwrap();
        write_atomically(&dangling, b"g").unwrap();
        assert_eq!(std::fs::read(real_dir.join("g.bin")).unwrap(), b"g");
        assert!(std::fs::symlink_metadata(&dangling)
            .unwrap()
            .file_type()
            .is_symlink());
    }

    /// A save replaces the file but not its permissions: a private (0600) filter stays
    /// private, a group-writable one group-writable, after `bloomkit add`.
    #[cfg(unix)]
    #[test]
    fn atomic_write_keeps_the_replaced_files_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.bin");
        for mode in [0o600, 0o664, 0o440] {
            std::fs::write(&path, b"old").unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            write_atomically(&path, b"new").unwrap();
            assert_eq!(std::fs::read(&path).unwrap(), b"new");
            let now = std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
            assert_eq!(now, mode, "{mode:o} became {now:o}");
            std::fs::remove_file(&path).unwrap();
        }
    }
}
