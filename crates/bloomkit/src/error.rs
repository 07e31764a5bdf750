//! The one error type of the crate.

use thiserror::Error as ThisError;

/// Everything that can go wrong in bloomkit. Each variant says what to fix.
#[derive(Debug, ThisError, Clone, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// The requested false-positive probability is not strictly between 0 and 1.
    #[error("false-positive probability must be strictly between 0 and 1, got {0}")]
    InvalidFpp(f64),
    /// The expected number of items is zero.
    #[error("capacity (expected number of items) must be at least 1")]
    ZeroCapacity,
    /// A filter of zero bits was requested.
    #[error("number of bits must be at least 1")]
    ZeroBits,
    /// A filter with zero hash functions was requested.
    #[error("number of hash functions must be at least 1")]
    ZeroHashes,
    /// Too many hash functions were requested.
    #[error("number of hash functions must be at most {max}, got {got}")]
    TooManyHashes {
        /// The number asked for.
        got: u64,
        /// The largest number allowed.
        max: u32,
    },
    /// The filter would be larger than this crate allows or than memory can hold.
    #[error("a filter of {bits} bits is too large (at most {max} bits)")]
    TooLarge {
        /// The size asked for, in bits (saturated at `u64::MAX`).
        bits: u64,
        /// The largest size allowed, in bits.
        max: u64,
    },
    /// A capacity that, at the ε asked, would need more bits than this crate builds (or
    /// than 64 bits can count): the error names what was asked, not a size that would
    /// saturate.
    #[error(
        "a filter for {capacity} items at ε = {} is too large: it would need more than the \
         {max} bits this crate builds; ask for fewer items or a larger ε",
        epsilon(*fpp)
    )]
    CapacityTooLarge {
        /// The capacity asked for, in items.
        capacity: u64,
        /// The ε asked for.
        fpp: f64,
        /// The largest size allowed, in bits.
        max: u64,
    },
    /// ε is a valid probability, but this kind cannot reach it (a cuckoo filter's widest
    /// fingerprint, a scalable filter whose next layer's error underflows to 0).
    #[error("a {kind} filter cannot reach ε = {fpp}: {reason}")]
    UnreachableFpp {
        /// The kind of the filter.
        kind: crate::filter::Kind,
        /// The ε asked for.
        fpp: f64,
        /// Why, and what would work.
        reason: String,
    },
    /// A size computed from the parameters does not fit in 64 bits (so no memory could
    /// hold it).
    #[error("{what} overflows 64 bits; choose smaller parameters")]
    SizeOverflow {
        /// The quantity that overflows ("the capacity of layer 70", …).
        what: String,
    },
    /// Memory for the filter could not be allocated.
    #[error("could not allocate {bytes} bytes for the filter")]
    OutOfMemory {
        /// The size of the failed allocation.
        bytes: u64,
    },
    /// A counter width outside 1 to 16 bits.
    #[error("counter width must be between 1 and 16 bits, got {0}")]
    InvalidCounterWidth(u32),
    /// Two filters with different sizes, hashing or kinds cannot be combined.
    #[error("filters are not compatible: {0}")]
    Incompatible(String),
    /// The filter's kind cannot do this (for example remove from a classic Bloom filter).
    #[error("a {kind} filter cannot {operation}")]
    Unsupported {
        /// The kind of the filter.
        kind: crate::filter::Kind,
        /// What was asked (`"remove"`, `"merge"`).
        operation: &'static str,
    },
    /// `remove` was asked for an item that is certainly not in the filter (one of its
    /// cells is empty); nothing was changed.
    #[error("the item is certainly not in the filter; nothing was removed")]
    NotPresent,
    /// A kind-specific parameter is outside what the kind can use.
    #[error("invalid {parameter}: {reason}")]
    InvalidParameter {
        /// The parameter's name (`"regions"`, `"growth factor"`, `"bucket size"`, …).
        parameter: &'static str,
        /// What is wrong and what would be valid.
        reason: String,
    },
    /// The filter cannot take another item; every item already in is kept.
    #[error("the {kind} filter is full: {reason}")]
    Full {
        /// The kind of the filter.
        kind: crate::filter::Kind,
        /// Why, and what to do about it.
        reason: String,
    },
    /// A stored hash-function identifier is unknown to this version.
    #[error("unknown hash function id {0}")]
    UnknownHashFunction(u8),
    /// A stored index-scheme identifier is unknown to this version.
    #[error("unknown index scheme id {0}")]
    UnknownIndexScheme(u8),
    /// The operating system's random generator failed.
    #[error("could not get a random seed: {0}")]
    RandomSeed(String),
    /// Encoded bytes are not a valid bloomkit filter.
    ///
    /// The message holds the [`DecodeError`]'s, so the variant gives no `source()`: a
    /// report that prints an error with its chain of causes (anyhow's `{:#}`) would say
    /// what is wrong twice.
    #[error("invalid filter data: {0}")]
    Decode(DecodeError),
    /// A file's content is not a valid encoded filter.
    #[error("{} is not a valid filter file: {error}", path.display())]
    InvalidFile {
        /// The file that was read.
        path: std::path::PathBuf,
        /// What is wrong with its content.
        error: DecodeError,
    },
    /// Reading or writing a file failed.
    #[error("{context}: {message}")]
    Io {
        /// What was being done (for example "writing /tmp/f.bloom").
        context: String,
        /// The operating system's message.
        message: String,
    },
    /// A file is locked by another handle, and the open was asked not to wait
    /// ([`BufferedOpenOptions::wait`](crate::buffered::BufferedOpenOptions::wait)): a writer
    /// has it open (another process, or a filter of this one still open on it), or readers
    /// do and this open is a writer's.
    #[error(
        "{} is in use: another open filter holds its lock (a writer, or readers when this \
         opens it for writing); try again when it is closed",
        path.display()
    )]
    Locked {
        /// The file.
        path: std::path::PathBuf,
    },
    /// A file opened read-only has the journal of a flush that was interrupted part-way:
    /// its pages may be half written until the journal is replayed, which needs the file
    /// opened for writing.
    #[error(
        "{}: a write to this file was interrupted, and its journal {} must be replayed \
         before the file can be read; that needs someone who can write the file to open it \
         for writing (which completes the write){}",
        path.display(),
        journal.display(),
        not_completed.as_deref().map_or(String::new(), |why| format!(
            "; this open tried, and could not open it for writing: {why}"
        ))
    )]
    InterruptedWrite {
        /// The file.
        path: std::path::PathBuf,
        /// Its journal.
        journal: std::path::PathBuf,
        /// Why this open did not complete the write itself, where it was asked to
        /// ([`complete_interrupted_write`]): the operating system's message on opening the
        /// file for writing ("Permission denied (os error 13)", "Read-only file system
        /// (os error 30)"). `None` where it was not asked to.
        ///
        /// [`complete_interrupted_write`]: crate::buffered::BufferedOpenOptions::complete_interrupted_write
        not_completed: Option<String>,
    },
    /// An option was given to a kind that does not take it ([`Kind::options`] lists what a
    /// kind takes).
    ///
    /// [`Kind::options`]: crate::Kind::options
    #[error(
        "a {kind} filter does not take the option {option}{}; {}",
        bracketed(why),
        takers_text(takers)
    )]
    OptionNotTaken {
        /// The kind asked for.
        kind: crate::filter::Kind,
        /// The option, by name.
        option: String,
        /// Why the kind does not take it, when it says (empty otherwise).
        why: &'static str,
        /// The kinds that take it, in the order of the registry (none for an unknown name).
        takers: Vec<crate::filter::Kind>,
    },
    /// An option's value is not of the option's type.
    #[error("invalid value {value:?} for the option {option}: expected {expected}")]
    InvalidOptionValue {
        /// The option, by name.
        option: String,
        /// The value given.
        value: String,
        /// What the option takes.
        expected: String,
    },
    /// The increment base L of a variable-increment counting filter does not fit its
    /// counters: increments are L to 2L − 1, and one must stay below the counter maximum.
    #[error(
        "increment base L must be at least 1 with 2L − 1 below the counter maximum \
         {max_counter} (choose a smaller L or wider counters), got L = {base}"
    )]
    InvalidIncrementBase {
        /// The L asked for.
        base: u32,
        /// The largest value a counter of the chosen width holds.
        max_counter: u32,
    },
}

/// " (why)", or nothing.
fn bracketed(why: &str) -> String {
    if why.is_empty() {
        String::new()
    } else {
        format!(" ({why})")
    }
}

/// "it is for the kinds a, b or c", or that no kind takes the option.
fn takers_text(takers: &[crate::filter::Kind]) -> String {
    if takers.is_empty() {
        return "no kind takes an option of that name".to_owned();
    }
    let names: Vec<&str> = takers.iter().map(|k| k.name()).collect();
    format!("it is for {}", crate::core::spec::or_list(&names))
}

/// Why a byte string is not a valid encoded filter.
#[derive(Debug, ThisError, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeError {
    /// The input ends before the structure it describes.
    #[error("truncated: needed {needed} bytes at offset {offset}, only {available} available")]
    Truncated {
        /// Where the missing part starts.
        offset: usize,
        /// How many bytes were needed there.
        needed: u64,
        /// How many bytes were left.
        available: usize,
    },
    /// The input does not start with the bloomkit magic.
    #[error("not a bloomkit filter (bad magic bytes)")]
    BadMagic,
    /// The format version is newer than this build understands.
    #[error("unsupported format version {0} (this build reads versions 1 to {1})")]
    UnsupportedVersion(u16, u16),
    /// The kind tag names no known filter kind.
    #[error("unknown filter kind tag {0}")]
    UnknownKind(u8),
    /// The stored checksum does not match the content.
    #[error(
        "checksum mismatch: stored {stored:#018x}, computed {computed:#018x} (file corrupted)"
    )]
    ChecksumMismatch {
        /// The checksum read from the input.
        stored: u64,
        /// The checksum of the bytes actually read.
        computed: u64,
    },
    /// A chunk of a version-2 payload does not match its stored checksum: found when the
    /// file is loaded, or by a view's query that touches the chunk.
    #[error(
        "checksum mismatch in chunk {chunk} (payload bytes from {offset}): stored \
         {stored:#018x}, computed {computed:#018x} (file corrupted)"
    )]
    ChunkChecksumMismatch {
        /// The chunk's index.
        chunk: u64,
        /// Where the chunk starts in the payload.
        offset: u64,
        /// The checksum read from the chunk table.
        stored: u64,
        /// The checksum of the chunk's bytes.
        computed: u64,
    },
    /// A field holds a value that no valid filter has.
    #[error("invalid field {field}: {reason}")]
    InvalidField {
        /// The field's name.
        field: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// Bytes follow the end of the encoded filter.
    #[error("{0} unexpected bytes after the end of the filter")]
    TrailingBytes(usize),
}

impl From<DecodeError> for Error {
    fn from(error: DecodeError) -> Self {
        Error::Decode(error)
    }
}

impl Error {
    /// An [`Error::Io`] from an I/O error and a description of what was being done.
    pub fn io(context: impl Into<String>, error: std::io::Error) -> Self {
        Error::Io {
            context: context.into(),
            message: error.to_string(),
        }
    }
}

/// ε as a message shows it: `0.01`, or `1e-300` where the decimals would run long.
fn epsilon(fpp: f64) -> String {
    if fpp >= 1e-4 || fpp == 0.0 {
        fpp.to_string()
    } else {
        format!("{fpp:e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error printed with its chain of causes, as the command line prints it (anyhow's
    /// `{:#}`): each cause's message after the one before.
    fn with_causes(error: &dyn std::error::Error) -> String {
        let mut text = error.to_string();
        let mut cause = error.source();
        while let Some(c) = cause {
            text.push_str(": ");
            text.push_str(&c.to_string());
            cause = c.source();
        }
        text
    }

    /// `bloomkit import --from guava cut.bin` said "invalid filter data: truncated: needed
    /// 16 bytes …: truncated: needed 16 bytes …": the cause was both in the message and
    /// its source.
    #[test]
    fn a_decode_error_names_its_cause_once_with_its_chain() {
        let cause = DecodeError::Truncated {
            offset: 6,
            needed: 16,
            available: 2,
        };
        let error = Error::from(cause.clone());
        let text = with_causes(&error);
        assert_eq!(text.matches(&cause.to_string()).count(), 1, "{text}");
        assert_eq!(text, format!("invalid filter data: {cause}"));
    }
}
