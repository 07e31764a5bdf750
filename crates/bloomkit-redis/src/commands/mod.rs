//! Command handlers: argument parsing, key access, replies and replication.
//!
//! Arguments are read as RedisBloom 2.4 reads them, quirks included, so that every reply
//! is the same:
//!
//! * `BF.RESERVE` and `CF.RESERVE` look their keywords up with [`arg_index`]: the first
//!   argument equal to the keyword, counting from the command name, so a key or a value
//!   spelled like a keyword is taken as that keyword, a repeated option's first value wins
//!   and unknown arguments are ignored;
//! * `BF.INSERT` and `CF.INSERT` read options left to right by their first letters
//!   ([`first_letter`]), so `I`, `CAP`, `E`, `NX`, `NOC` or `ERR` are options too, and a
//!   repeated option's last value wins.

pub mod bf;
pub mod cf;
pub mod cms;
pub mod tdigest;
pub mod topk;

pub use crate::glue::reply::{Canned, Status};
pub use crate::glue::Arg;

use std::ffi::CStr;

use redis_module::{Context, RedisError, RedisResult, RedisString, RedisValue};

use crate::config::Refusal;
use crate::glue;

/// An error reply with exactly this text (RedisBloom sends some without the `ERR` prefix).
pub fn error(text: &str) -> RedisError {
    RedisError::String(text.to_string())
}

/// A filter refused for its memory (see the config module): what it would use, against
/// which limit, and `hint` (what to ask for instead).
pub fn too_large(refusal: Refusal, hint: &str) -> RedisError {
    match refusal {
        Refusal::PerKey { needed, limit } => error(&format!(
            "ERR the filter would use {needed} bytes, more than the per-key limit of {limit} \
             bytes (module argument MAX_KEY_MEMORY); {hint}"
        )),
        Refusal::Server {
            request,
            held,
            budget,
            bound,
        } => error(&format!(
            "ERR the filter would use {request} bytes, but the server holds {held} of the \
             {budget} bytes it may hold ({}); {hint}, or free memory",
            bound.describe()
        )),
    }
}

/// A growth refused for its memory, as an error element (of an add's reply array):
/// `per_key` or `server` by the limit that refused it.
pub fn growth_refused(
    refusal: &Refusal,
    per_key: &'static CStr,
    server: &'static CStr,
) -> &'static CStr {
    match refusal {
        Refusal::PerKey { .. } => per_key,
        Refusal::Server { .. } => server,
    }
}

/// Maps redis-module's "Existing key has wrong Redis type" to Redis's own WRONGTYPE reply.
pub fn wrong_type(_: RedisError) -> RedisError {
    RedisError::WrongType
}

/// Whether an argument equals a keyword, ignoring ASCII case.
pub fn is(arg: &RedisString, keyword: &str) -> bool {
    arg.as_slice().eq_ignore_ascii_case(keyword.as_bytes())
}

/// The position of the first argument equal to `keyword` (ASCII case ignored), counting the
/// command name as 0 — RedisBloom's keyword search for the RESERVE commands.
pub fn arg_index(args: &[Arg], keyword: &str) -> Option<usize> {
    args.iter().position(|a| is(a, keyword))
}

/// The `n`th byte (0-based) of an argument in lower case, or `None` past its end — how
/// RedisBloom's INSERT commands tell their options apart.
pub fn first_letter(arg: &RedisString, n: usize) -> Option<u8> {
    arg.as_slice().get(n).map(u8::to_ascii_lowercase)
}

/// An integer argument (Redis's own parsing), or `None`.
#[inline]
pub fn integer(arg: &RedisString) -> Option<i64> {
    glue::long_long(arg)
}

/// A floating-point argument (Redis's own parsing: no NaN), or `None`. A plain decimal
/// is read here, as Redis would read it ([`parse_plain`](crate::numbers::parse_plain)),
/// without the call into Redis and its `strtod`.
pub fn float(arg: &RedisString) -> Option<f64> {
    match crate::numbers::parse_plain(glue::bytes(arg)) {
        Some(value) => Some(value),
        None => arg.parse_float().ok().filter(|f| !f.is_nan()),
    }
}

/// Parses every argument with `parse`, stopping at the first error, and hands the values
/// to `f`: up to [`INLINE_VALUES`] in an array on the stack (no allocation for the common
/// short commands), more in a vector.
pub fn with_parsed<T: Copy + Default, R>(
    args: &[Arg],
    parse: impl Fn(&RedisString) -> Result<T, RedisError>,
    f: impl FnOnce(&[T]) -> RedisResult<R>,
) -> RedisResult<R> {
    if args.len() <= INLINE_VALUES {
        let mut values = [T::default(); INLINE_VALUES];
        for (value, arg) in values.iter_mut().zip(args) {
            *value = parse(arg)?;
        }
        f(&values[..args.len()])
    } else {
        let values = args
            .iter()
            .map(|a| parse(a))
            .collect::<Result<Vec<T>, _>>()?;
        f(&values)
    }
}

/// How many parsed values [`with_parsed`] keeps on the stack.
pub const INLINE_VALUES: usize = 8;

/// Replies written straight to the client through the module API, for the hot and the
/// many-element replies: building a `RedisValue` tree instead allocates a vector for every
/// array and a C string for every status label.
///
/// A handler that replies through this returns `Ok(RedisValue::NoReply)`.
pub struct Reply<'a>(&'a Context);

impl<'a> Reply<'a> {
    /// Replies go to this command's client.
    pub fn new(ctx: &'a Context) -> Self {
        Self(ctx)
    }

    /// Starts an array of `len` elements (the next `len` replies).
    pub fn array(&self, len: usize) {
        glue::reply::array(self.0, len);
    }

    /// An integer.
    pub fn int(&self, value: i64) {
        glue::reply::long_long(self.0, value);
    }

    /// A fixed status string (`+label`; see [`status`]).
    pub fn status(&self, status: &Status) {
        glue::reply::status(self.0, status);
    }

    /// An error (`-text`), as an element of an array or the whole reply.
    pub fn error(&self, text: &'static CStr) {
        glue::reply::error(self.0, text);
    }

    /// A whole fixed reply ([`canned`]); false, with nothing sent, when Redis did not make
    /// it at load (the caller then replies element by element).
    #[inline(always)]
    pub fn canned(&self, reply: &Canned) -> bool {
        glue::reply::canned(self.0, reply)
    }

    /// A null.
    pub fn null(&self) {
        glue::reply::null(self.0);
    }

    /// A status string of bytes that end in a NUL and hold no other NUL, CR or LF.
    pub fn simple_nul(&self, text: &[u8]) {
        glue::reply::simple_string_nul(self.0, text);
    }

    /// A bulk string.
    pub fn bulk(&self, bytes: &[u8]) {
        glue::reply::string_buffer(self.0, bytes);
    }

    /// A double, formatted by Redis.
    pub fn double(&self, value: f64) {
        glue::reply::double(self.0, value);
    }

    /// `(label, integer)` pairs as one flat array, as the INFO commands answer: label `i`
    /// with value `i`.
    #[inline(always)]
    pub fn pairs(&self, labels: &[&'static Status], values: &[i64]) {
        debug_assert_eq!(labels.len(), values.len());
        glue::reply::pairs(self.0, labels, values);
    }
}

/// What a handler that replied through [`Reply`] returns.
pub fn replied() -> RedisResult {
    Ok(RedisValue::NoReply)
}

/// Every fixed status reply the commands send: `+OK` and the INFO commands' labels, one
/// [`Status`] per text, sent from the protocol bytes Redis made for it when the module
/// loaded ([`prepare`](status::prepare)). A label several commands share (`Capacity`,
/// `Size`, `width`, …) is one status.
pub mod status {
    use super::Status;

    /// Declares the statuses and [`ALL`], the list the module's load prepares.
    macro_rules! statuses {
        ($($(#[$doc:meta])* $name:ident = $text:literal;)*) => {
            $($(#[$doc])* pub static $name: Status = Status::new($text);)*
            /// Every status above.
            pub static ALL: &[&Status] = &[$(&$name),*];
        };
    }

    statuses! {
        /// `+OK`.
        OK = c"OK";
        /// The empty status (a top-k slot that holds no item).
        EMPTY = c"";
        /// BF.INFO and TDIGEST.INFO.
        CAPACITY = c"Capacity";
        /// BF.INFO and CF.INFO.
        SIZE = c"Size";
        /// BF.INFO and CF.INFO.
        NUMBER_OF_FILTERS = c"Number of filters";
        /// BF.INFO and CF.INFO.
        NUMBER_OF_ITEMS_INSERTED = c"Number of items inserted";
        /// BF.INFO and CF.INFO.
        EXPANSION_RATE = c"Expansion rate";
        /// CF.INFO.
        NUMBER_OF_BUCKETS = c"Number of buckets";
        /// CF.INFO.
        NUMBER_OF_ITEMS_DELETED = c"Number of items deleted";
        /// CF.INFO.
        BUCKET_SIZE = c"Bucket size";
        /// CF.INFO.
        MAX_ITERATIONS = c"Max iterations";
        /// CMS.INFO and TOPK.INFO.
        WIDTH = c"width";
        /// CMS.INFO and TOPK.INFO.
        DEPTH = c"depth";
        /// CMS.INFO.
        COUNT = c"count";
        /// TOPK.INFO.
        K = c"k";
        /// TOPK.INFO.
        DECAY = c"decay";
        /// TDIGEST.INFO.
        COMPRESSION = c"Compression";
        /// TDIGEST.INFO.
        MERGED_NODES = c"Merged nodes";
        /// TDIGEST.INFO.
        UNMERGED_NODES = c"Unmerged nodes";
        /// TDIGEST.INFO.
        MERGED_WEIGHT = c"Merged weight";
        /// TDIGEST.INFO.
        UNMERGED_WEIGHT = c"Unmerged weight";
        /// TDIGEST.INFO.
        OBSERVATIONS = c"Observations";
        /// TDIGEST.INFO.
        TOTAL_COMPRESSIONS = c"Total compressions";
        /// TDIGEST.INFO.
        MEMORY_USAGE = c"Memory usage";
    }

    /// Has Redis make every status's reply (see [`Status`]); returns how many of
    /// [`ALL`] it made.
    pub fn prepare(ctx: &redis_module::Context) -> usize {
        crate::glue::reply::prepare_statuses(ctx, ALL)
    }
}

/// The whole replies sent in one piece ([`Canned`]): the usual answers of the single-item
/// `TOPK.QUERY` (`[0]`, `[1]`), `TOPK.ADD` and `TOPK.INCRBY` (`[nil]`).
pub mod canned {
    use super::Canned;

    /// `[0]`.
    pub static ZERO: Canned = Canned::new(c"return {0}", b"*1\r\n:0\r\n", None);
    /// `[1]`.
    pub static ONE: Canned = Canned::new(c"return {1}", b"*1\r\n:1\r\n", None);
    /// `[nil]`: a null bulk string in RESP2, RESP3's null in RESP3.
    pub static NIL: Canned = Canned::new(c"return {false}", b"*1\r\n$-1\r\n", Some(b"*1\r\n_\r\n"));

    /// Every canned reply.
    pub static ALL: &[&Canned] = &[&ZERO, &ONE, &NIL];

    /// Has Redis make every canned reply; returns how many of [`ALL`] it made.
    pub fn prepare(ctx: &redis_module::Context) -> usize {
        crate::glue::reply::prepare_canned(ctx, ALL)
    }
}
