//! The commands' C entry points.
//!
//! redis-module's own command glue turns every call's arguments into a fresh
//! `Vec<RedisString>`: one allocation, and a reference-count increment and decrement (two
//! calls into Redis) per argument. Measured with callgrind, that was most of the ~600
//! instructions per call this module spent beyond RedisBloom's own handlers. Here the
//! handlers get the arguments Redis passed, borrowed for the call: up to
//! [`INLINE_ARGS`] in an array on the stack, more in one vector.
//!
//! Besides: the replies ([`reply`]), the keys ([`Key`]), the replication calls, the
//! server's flags, `INFO` sections and events ([`server`], for the memory budget and the
//! replication check) and the global allocator ([`alloc`]).
//!
//! One of the three modules with `unsafe` (with `types` and `clib`; `lib.rs` lists them
//! and says why): outside the data-type callbacks, every call through the Redis module
//! API's raw function pointers is made here, behind a safe function, each `unsafe` block
//! with its `// SAFETY:` comment; the rest of the module calls these and redis-module's
//! safe API.

use std::ffi::{c_char, c_int, CStr};
use std::mem::{ManuallyDrop, MaybeUninit};

use redis_module::native_types::RedisType;
use redis_module::{raw, Context, RedisResult, RedisString};

pub mod alloc;
pub mod server;

/// A command argument: the string Redis passed, neither retained nor freed (it lives until
/// the command returns, which is as long as a handler can see it).
pub type Arg = ManuallyDrop<RedisString>;

/// A command handler.
pub type Handler = fn(&Context, &[Arg]) -> RedisResult;

/// Calls with at most this many arguments (the command name included) allocate nothing:
/// 32 slots (512 bytes of stack, written only as far as the call's arguments) cover the
/// multi-item calls people make (`CMS.INCRBY` of four pairs is 10 arguments; with 8 slots
/// its vector cost ~220 instructions a call, 5% of the handler, under callgrind).
pub const INLINE_ARGS: usize = 32;

/// Runs `handler` on the call's arguments and sends its reply. Inlined into each command's
/// entry point, so that the handler is called directly (not through a pointer) and its
/// result's checks fold into it.
#[inline(always)]
pub fn call(
    ctx: *mut raw::RedisModuleCtx,
    argv: *mut *mut raw::RedisModuleString,
    argc: c_int,
    handler: Handler,
) -> c_int {
    let context = Context::new(ctx);
    let argv: &[*mut raw::RedisModuleString] = match usize::try_from(argc) {
        Ok(len) if !argv.is_null() => {
            // SAFETY: Redis passes `argc` valid string pointers in `argv`, which stay alive
            // (and are not modified) until the command returns; the slice does not outlive
            // this call.
            unsafe { std::slice::from_raw_parts(argv, len) }
        }
        _ => &[],
    };
    let view = |p| ManuallyDrop::new(RedisString::from_redis_module_string(ctx, p));
    let response = if argv.len() <= INLINE_ARGS {
        // Only the call's arguments are written (not all INLINE_ARGS slots).
        let mut inline = [const { MaybeUninit::<Arg>::uninit() }; INLINE_ARGS];
        for (slot, &p) in inline.iter_mut().zip(argv) {
            slot.write(view(p));
        }
        // SAFETY: the first `argv.len()` slots were written just above, and an `Arg` needs
        // no drop (a `ManuallyDrop` of two pointers), so the slots are never dropped.
        let args = unsafe { std::slice::from_raw_parts(inline.as_ptr().cast::<Arg>(), argv.len()) };
        handler(&context, args)
    } else {
        let args: Vec<Arg> = argv.iter().map(|&p| view(p)).collect();
        handler(&context, &args)
    };
    match response {
        // A handler that replied through `Reply` has nothing left to send: skip the
        // conversion and the drop of a `RedisValue` (both out of line, 0.2% of the server's
        // time under BF.INFO).
        Ok(redis_module::RedisValue::NoReply) => {
            // Nothing to drop (the out-of-line drop of the `Result` was called here).
            std::mem::forget(response);
            raw::REDISMODULE_OK as c_int
        }
        // redis-module sends a static status through a `CString` made for the call (an
        // allocation, a copy and a free: ~200 instructions of each `TDIGEST.ADD` under
        // callgrind); "OK" is the only one the handlers return.
        Ok(redis_module::RedisValue::SimpleStringStatic("OK")) => {
            reply::status(&context, &crate::commands::status::OK);
            raw::REDISMODULE_OK as c_int
        }
        response => context.reply(response) as c_int,
    }
}

/// A key opened for one command, closed when dropped: the value of a module type in two
/// calls into Redis (`RedisModule_ModuleTypeGetType`, which is NULL for an empty key or one
/// of a type that is not a module's, and `RedisModule_ModuleTypeGetValue`); the key's type
/// is asked only when the value is not of the expected type. redis-module's
/// `get_value` asks the key type first, then the module type, and builds and drops a
/// `RedisValue` for the check's `Ok` (about 60 instructions a command under callgrind).
pub struct Key {
    key: *mut raw::RedisModuleKey,
}

impl Key {
    /// Opens `name` for reading, or for reading and writing.
    #[inline]
    pub fn open(ctx: &Context, name: &RedisString, write: bool) -> Self {
        let mode = if write {
            raw::KeyMode::READ | raw::KeyMode::WRITE
        } else {
            raw::KeyMode::READ
        };
        Self {
            key: raw::open_key(ctx.ctx, name.inner, mode),
        }
    }

    /// The key's value of type `ty`: `Ok(None)` for a missing (empty) key, `Err(WrongType)`
    /// for a key of any other type.
    #[inline]
    pub fn value<T>(&mut self, ty: &RedisType) -> Result<Option<&mut T>, WrongType> {
        // SAFETY: the API's function pointers are set by `RedisModule_Init` before any
        // command runs; `self.key` is NULL (Redis 7.0 returns NULL for a missing key opened
        // for reading; the calls below accept it) or a key handle open until `drop`. A value
        // of `ty` is a `T` this module boxed (the type's callbacks only ever store `T`),
        // owned by the key, and borrowed here for as long as `self` is borrowed mutably:
        // commands run one at a time on the main thread, and nothing else refers to it.
        // `ty.raw_type` is written once, when the type is created at module load, and only
        // read afterwards (read here without the `RefCell`'s borrow count).
        unsafe {
            let (Some(get_type), Some(get_value)) = (
                raw::RedisModule_ModuleTypeGetType,
                raw::RedisModule_ModuleTypeGetValue,
            ) else {
                return Err(WrongType);
            };
            if self.key.is_null() {
                return Ok(None);
            }
            let found = get_type(self.key);
            if !found.is_null() && found == *ty.raw_type.as_ptr() {
                Ok(get_value(self.key).cast::<T>().as_mut())
            } else {
                self.not_of_type().map(|()| None)
            }
        }
    }

    /// [`value`](Self::value) for a key whose value is not of the type asked: `Ok` when
    /// the key is empty, else `WrongType`.
    #[cold]
    #[inline(never)]
    fn not_of_type(&self) -> Result<(), WrongType> {
        // SAFETY: as in `value`.
        let empty = unsafe {
            raw::RedisModule_KeyType.is_some_and(|key_type| {
                key_type(self.key) == raw::REDISMODULE_KEYTYPE_EMPTY as c_int
            })
        };
        if empty {
            Ok(())
        } else {
            Err(WrongType)
        }
    }
}

impl Drop for Key {
    #[inline]
    fn drop(&mut self) {
        raw::close_key(self.key);
    }
}

/// An argument's bytes (`RedisModule_StringPtrLen`), straight through the API's pointer
/// (redis-module's `as_slice` is an out-of-line call around the same call).
#[inline(always)]
pub fn bytes(arg: &RedisString) -> &[u8] {
    // SAFETY: as in `replicate_verbatim`; `arg.inner` is a string Redis passed to the
    // command, alive (and unmodified) until the command returns, which outlives the
    // borrow of `arg`; Redis returns its buffer and length.
    unsafe {
        let Some(ptr_len) = raw::RedisModule_StringPtrLen else {
            return &[];
        };
        let mut len = 0;
        let ptr = ptr_len(arg.inner, &mut len);
        if ptr.is_null() {
            &[]
        } else {
            std::slice::from_raw_parts(ptr.cast::<u8>(), len)
        }
    }
}

/// An argument as a 64-bit integer (`RedisModule_StringToLongLong`: Redis's own parsing),
/// or `None`; straight through the API's pointer.
#[inline(always)]
pub fn long_long(arg: &RedisString) -> Option<i64> {
    // SAFETY: as in `bytes`; `value` outlives the call.
    unsafe {
        let to_long_long = raw::RedisModule_StringToLongLong?;
        let mut value = 0;
        (to_long_long(arg.inner, &mut value) == raw::REDISMODULE_OK as c_int).then_some(value)
    }
}

/// Replicates the command as it was called (`RedisModule_ReplicateVerbatim`), straight
/// through the API's pointer: redis-module's `Context::replicate_verbatim` is an
/// out-of-line call around the same call.
#[inline]
pub fn replicate_verbatim(ctx: &Context) {
    // SAFETY: the API's function pointers are written once by `RedisModule_Init` and only
    // read afterwards on Redis's main thread, where commands run; `ctx.ctx` is the running
    // command's context.
    if let Some(replicate) = unsafe { raw::RedisModule_ReplicateVerbatim } {
        // SAFETY: as above.
        unsafe { replicate(ctx.ctx) };
    }
}

/// A C entry point, as `RedisModule_CreateCommand` takes it.
pub type Entry =
    extern "C" fn(*mut raw::RedisModuleCtx, *mut *mut raw::RedisModuleString, c_int) -> c_int;

/// Registers one command whose key is its first argument (first = last = step = 1, so
/// cluster routing works per key).
pub fn create_command(
    ctx: &Context,
    name: &CStr,
    entry: Entry,
    flags: &CStr,
) -> Result<(), String> {
    // SAFETY: the API's function pointers are written once by `RedisModule_Init` (before
    // `init`, which calls this) and only read afterwards, on Redis's main thread.
    let create =
        unsafe { raw::RedisModule_CreateCommand }.ok_or("RedisModule_CreateCommand is missing")?;
    // SAFETY: `ctx.ctx` is the module's load context; `name` and `flags` are NUL-terminated
    // and Redis copies them; `entry` is a plain function that lives as long as the module.
    let status = unsafe { create(ctx.ctx, name.as_ptr(), Some(entry), flags.as_ptr(), 1, 1, 1) };
    if status == raw::REDISMODULE_OK as c_int {
        Ok(())
    } else {
        Err(format!(
            "could not create command {}",
            name.to_string_lossy()
        ))
    }
}

/// Registers the commands: `name => handler, "flags";` each, with its own entry point.
#[macro_export]
macro_rules! register_commands {
    ($ctx:expr, $( $name:literal => $handler:path, $flags:literal; )*) => {{
        let mut result = Ok(());
        $(
            if result.is_ok() {
                extern "C" fn entry(
                    ctx: *mut redis_module::raw::RedisModuleCtx,
                    argv: *mut *mut redis_module::raw::RedisModuleString,
                    argc: std::ffi::c_int,
                ) -> std::ffi::c_int {
                    $crate::glue::call(ctx, argv, argc, $handler)
                }
                result = $crate::glue::create_command($ctx, $name, entry, $flags);
            }
        )*
        result
    }};
}

/// The reply calls of [`Reply`](crate::commands::Reply), straight through the module API's
/// function pointers. redis-module's wrappers turn each call's C status into its `Status`
/// enum with a `from_i32(..).unwrap()` that is not inlined: under `CF.INFO` (17 reply calls)
/// that conversion alone was 0.8% of the server's time (`perf record -e cpu-clock` on the
/// server during `redis-benchmark … CF.INFO cf`), more than RedisBloom's whole handler
/// (0.3%). The reply functions only report OK, so the status is dropped.
pub mod reply {
    use std::ffi::{c_int, c_long, c_longlong, CStr};
    use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

    use redis_module::{raw, Context};

    /// Calls the API function `$f` with the context and `$args`, if Redis provided it.
    macro_rules! api {
        ($ctx:expr, $f:ident $(, $arg:expr)*) => {
            // SAFETY: the API's function pointers are written once by `RedisModule_Init`
            // and only read afterwards on Redis's main thread, where commands run.
            let f = unsafe { raw::$f };
            if let Some(f) = f {
                // SAFETY: `$ctx` is the live context of the running command, and the
                // arguments are plain values or NUL-terminated strings that Redis copies
                // before returning.
                unsafe { f($ctx.ctx $(, $arg)*) };
            }
        };
    }

    /// Starts an array of `len` elements.
    #[inline]
    pub fn array(ctx: &Context, len: usize) {
        api!(ctx, RedisModule_ReplyWithArray, len as c_long);
    }

    /// An integer.
    #[inline]
    pub fn long_long(ctx: &Context, value: i64) {
        api!(ctx, RedisModule_ReplyWithLongLong, value as c_longlong);
    }

    /// A status string.
    #[inline]
    pub fn simple_string(ctx: &Context, text: &CStr) {
        api!(ctx, RedisModule_ReplyWithSimpleString, text.as_ptr());
    }

    /// A status string from bytes that end in a NUL (the first NUL ends the string), handed
    /// to Redis as they are, without the copy a `CStr` would need. Bytes without a final NUL
    /// send nothing (callers pass stored, NUL-terminated items).
    #[inline]
    pub fn simple_string_nul(ctx: &Context, text: &[u8]) {
        debug_assert_eq!(text.last(), Some(&0));
        if text.last() == Some(&0) {
            // The pointer is to NUL-terminated bytes, which Redis reads up to that NUL.
            api!(ctx, RedisModule_ReplyWithSimpleString, text.as_ptr().cast());
        }
    }

    /// `(label, integer)` pairs as one flat array (the INFO commands' replies): the API
    /// pointers read once, not once a call.
    #[inline]
    pub fn pairs(ctx: &Context, labels: &[&'static Status], values: &[i64]) {
        // SAFETY: as in `api!`.
        let pointers = unsafe {
            (
                raw::RedisModule_ReplyWithArray,
                raw::RedisModule_ReplyWithLongLong,
            )
        };
        let (Some(array), Some(int)) = pointers else {
            return;
        };
        let len = labels.len().min(values.len());
        // SAFETY: as in `api!`.
        unsafe { array(ctx.ctx, (len * 2) as c_long) };
        for (label, &value) in labels.iter().zip(values) {
            status(ctx, label);
            // SAFETY: as in `api!`.
            unsafe { int(ctx.ctx, value as c_longlong) };
        }
    }

    /// A status reply whose text is fixed when the module is built: `+OK` and the INFO
    /// commands' labels.
    ///
    /// `RedisModule_ReplyWithSimpleString` makes an `sds` copy of the text, scans it for
    /// CR and LF, writes three pieces and frees the copy: ~880 instructions a label on
    /// Redis 7.0.15 (callgrind), 70% of `TDIGEST.INFO`'s handler, in both this module and
    /// RedisBloom. `RedisModule_ReplyWithCallReply` writes a reply's protocol bytes in one
    /// piece. So [`prepare_statuses`] has Redis make each status once, when the module
    /// loads (a read-only `EVAL` of `redis.status_reply`, whose reply is exactly
    /// `+text\r\n`), and keeps that reply for the life of the process; [`status`] then
    /// sends it. The bytes on the wire are the same either way (`scripts/compare-redis-replies`
    /// holds both servers to it, RESP2 and RESP3); when Redis would not make the reply (EVAL
    /// renamed away, an API without `RedisModule_Call`), the text goes through
    /// `RedisModule_ReplyWithSimpleString` as before.
    pub struct Status {
        text: &'static CStr,
        /// Redis's reply `+text\r\n`, made at load; null until then, or if Redis did not
        /// make it. Written only by `prepare_statuses`, on the main thread, before any
        /// command runs; never freed.
        proto: AtomicPtr<raw::RedisModuleCallReply>,
    }

    impl Status {
        /// The status `+text`; `text` must not hold CR or LF (a status cannot).
        pub const fn new(text: &'static CStr) -> Self {
            Self {
                text,
                proto: AtomicPtr::new(std::ptr::null_mut()),
            }
        }

        /// Whether Redis made this status's reply at load (so [`status`] sends it whole).
        pub fn prepared(&self) -> bool {
            !self.proto.load(Ordering::Relaxed).is_null()
        }
    }

    /// Sends a fixed status: Redis's own reply bytes if [`prepare_statuses`] got them, else
    /// through `RedisModule_ReplyWithSimpleString`.
    #[inline]
    pub fn status(ctx: &Context, status: &Status) {
        let proto = status.proto.load(Ordering::Relaxed);
        if !proto.is_null() {
            // SAFETY: as in `api!`.
            if let Some(f) = unsafe { raw::RedisModule_ReplyWithCallReply } {
                // SAFETY: `ctx.ctx` is the running command's context, and `proto` a reply
                // that `RedisModule_Call` returned and nothing frees (see `Status`). The
                // call fails, writing nothing, only for a RESP3 reply to a RESP2 client,
                // and this reply was made in RESP2.
                if unsafe { f(ctx.ctx, proto) } == raw::REDISMODULE_OK as c_int {
                    return;
                }
            }
        }
        simple_string(ctx, status.text);
    }

    /// The script whose reply is the status named by its one argument.
    const STATUS_SCRIPT: &CStr = c"return redis.status_reply(ARGV[1])";

    /// Has Redis make each status's reply once (see [`Status`]); returns how many it made.
    /// A reply that is not exactly `+text\r\n` is freed and not used. Call it once, from
    /// the module's load, before any command runs.
    pub fn prepare_statuses(ctx: &Context, statuses: &[&'static Status]) -> usize {
        // SAFETY: as in `api!`.
        let api = unsafe {
            (
                raw::RedisModule_Call,
                raw::RedisModule_CallReplyProto,
                raw::RedisModule_FreeCallReply,
                raw::RedisModule_ReplyWithCallReply,
            )
        };
        let (Some(call), Some(proto_of), Some(free), Some(_)) = api else {
            return 0;
        };
        let mut made = 0;
        for status in statuses {
            if status.prepared() {
                made += 1;
                continue;
            }
            // SAFETY: `ctx.ctx` is the load's context; the format "ccc" says three C
            // strings follow, and all three are NUL-terminated and live through the call.
            let reply = unsafe {
                call(
                    ctx.ctx,
                    c"EVAL".as_ptr(),
                    c"ccc".as_ptr(),
                    STATUS_SCRIPT.as_ptr(),
                    c"0".as_ptr(),
                    status.text.as_ptr(),
                )
            };
            if reply.is_null() {
                // EVAL is not there (renamed, or refused): every status falls back alike.
                break;
            }
            let mut len = 0usize;
            // SAFETY: `reply` is the live reply just returned; Redis writes its length.
            let bytes = unsafe { proto_of(reply, &mut len) };
            let text = status.text.to_bytes();
            let matches = !bytes.is_null() && len == text.len() + 3 && {
                // SAFETY: Redis's protocol buffer of `len` bytes, alive while `reply` is.
                let bytes = unsafe { std::slice::from_raw_parts(bytes.cast::<u8>(), len) };
                bytes[0] == b'+' && &bytes[1..len - 2] == text && &bytes[len - 2..] == b"\r\n"
            };
            if matches {
                status.proto.store(reply, Ordering::Relaxed);
                made += 1;
            } else {
                // SAFETY: `reply` came from `RedisModule_Call` and is freed once.
                unsafe { free(reply) };
            }
        }
        made
    }

    /// A whole reply fixed when the module is built (a one-element array: `[0]`, `[1]`,
    /// `[nil]`), sent in one piece: the single-item `TOPK.QUERY`, `TOPK.ADD` and
    /// `TOPK.INCRBY` answer one of these nearly every time.
    ///
    /// An array and its element through `RedisModule_ReplyWithArray` and
    /// `RedisModule_ReplyWithLongLong` (or `…WithNull`) cost ~320 instructions on Redis
    /// 7.0.15 (callgrind), each call preparing the client for writing again;
    /// `RedisModule_ReplyWithCallReply` of Redis's own reply bytes ~155. As for [`Status`],
    /// Redis makes each reply once, when the module loads (a read-only `EVAL` of a script
    /// that returns it), and it is kept for the life of the process.
    ///
    /// A reply whose bytes differ between RESP2 and RESP3 (a null: `$-1` against `_`) is
    /// made twice, the second time with `RedisModule_Call`'s `3` flag and parsed, which
    /// marks it RESP3. [`canned`] sends the RESP3 one first: Redis refuses a RESP3 reply to a
    /// RESP2 client without writing anything (checked once at load, on the load's own
    /// RESP2 client), and the RESP2 one then goes out. That refusal is Redis's cheapest
    /// answer to "which protocol?": ~20 instructions on Redis 7.0.15 (the reply client, its
    /// `resp`, `callReplyIsResp3`), no allocation, nothing written. Asking first with
    /// `RedisModule_GetContextFlags` and sending the one right reply costs more, since that
    /// call computes every flag (`getMaxmemoryState` among them, ~110 instructions): the
    /// single-item `TOPK.ADD` handler took 2,425 instructions that way against 2,280, and
    /// `TOPK.INCRBY` 3,519 against 3,417 (callgrind, both ways in one build, 2026-11-27;
    /// BENCHMARKS.md). When Redis would not make a reply
    /// (EVAL renamed away, an API without the `3` flag), [`canned`] sends nothing and
    /// returns false, and the caller replies element by element as before.
    pub struct Canned {
        /// The Lua script whose reply this is.
        script: &'static CStr,
        /// The reply's bytes in RESP2, and in RESP3 where they differ.
        resp2: &'static [u8],
        resp3: Option<&'static [u8]>,
        /// Redis's replies, made at load; null until then, or if Redis did not make them.
        /// Written only by `prepare_canned`, on the main thread, before any command runs;
        /// never freed.
        made2: AtomicPtr<raw::RedisModuleCallReply>,
        made3: AtomicPtr<raw::RedisModuleCallReply>,
    }

    impl Canned {
        /// The reply `script` returns: `resp2`'s bytes, `resp3`'s to a RESP3 client when
        /// they differ.
        pub const fn new(
            script: &'static CStr,
            resp2: &'static [u8],
            resp3: Option<&'static [u8]>,
        ) -> Self {
            Self {
                script,
                resp2,
                resp3,
                made2: AtomicPtr::new(std::ptr::null_mut()),
                made3: AtomicPtr::new(std::ptr::null_mut()),
            }
        }

        /// Whether Redis made this reply at load (so [`canned`] sends it).
        pub fn prepared(&self) -> bool {
            !self.made2.load(Ordering::Relaxed).is_null()
                && (self.resp3.is_none() || !self.made3.load(Ordering::Relaxed).is_null())
        }
    }

    /// Sends `canned` whole, in the client's protocol; false, with nothing sent, when it
    /// was not made at load. The protocol is the client's at this reply (a client may
    /// switch with `HELLO` between two commands), so nothing about it is kept.
    #[inline]
    pub fn canned(ctx: &Context, canned: &Canned) -> bool {
        let two = canned.made2.load(Ordering::Relaxed);
        if two.is_null() {
            return false;
        }
        // SAFETY: as in `api!`.
        let Some(f) = (unsafe { raw::RedisModule_ReplyWithCallReply }) else {
            return false;
        };
        let three = canned.made3.load(Ordering::Relaxed);
        if canned.resp3.is_some() {
            if three.is_null() {
                return false;
            }
            // SAFETY: `ctx.ctx` is the running command's context, and `three` a reply that
            // `RedisModule_Call` returned and nothing frees (see `Canned`). Redis refuses
            // it, writing nothing, when the client speaks RESP2.
            if unsafe { f(ctx.ctx, three) } == raw::REDISMODULE_OK as c_int {
                return true;
            }
        }
        // SAFETY: as above; a RESP2 reply (not marked RESP3) is never refused.
        let sent = unsafe { f(ctx.ctx, two) };
        sent == raw::REDISMODULE_OK as c_int
    }

    /// Has Redis make each canned reply (see [`Canned`]); returns how many it made. A reply
    /// whose bytes are not the expected ones, or a RESP3 reply that Redis would send to a
    /// RESP2 client, is freed and not used. Call it once, from the module's load (whose
    /// client speaks RESP2), before any command runs.
    pub fn prepare_canned(ctx: &Context, all: &[&'static Canned]) -> usize {
        // SAFETY: as in `api!`.
        let api = unsafe {
            (
                raw::RedisModule_Call,
                raw::RedisModule_CallReplyProto,
                raw::RedisModule_CallReplyType,
                raw::RedisModule_FreeCallReply,
                raw::RedisModule_ReplyWithCallReply,
            )
        };
        let (Some(call), Some(proto_of), Some(type_of), Some(free), Some(reply_with)) = api else {
            return 0;
        };
        // One script's reply (`fmt`: "cc", or "3cc" for RESP3), kept if its bytes are
        // `expected`.
        let make = |fmt: &CStr, script: &CStr, expected: &[u8]| {
            // SAFETY: `ctx.ctx` is the load's context; the format's flag (if any) is `3`
            // and its two conversions are C strings, both NUL-terminated and alive through
            // the call.
            let reply = unsafe {
                call(
                    ctx.ctx,
                    c"EVAL".as_ptr(),
                    fmt.as_ptr(),
                    script.as_ptr(),
                    c"0".as_ptr(),
                )
            };
            if reply.is_null() {
                return None;
            }
            let mut len = 0usize;
            // SAFETY: `reply` is the live reply just returned; Redis writes its length.
            let bytes = unsafe { proto_of(reply, &mut len) };
            // SAFETY: Redis's protocol buffer of `len` bytes, alive while `reply` is.
            let same = !bytes.is_null()
                && unsafe { std::slice::from_raw_parts(bytes.cast::<u8>(), len) } == expected;
            if same {
                Some(reply)
            } else {
                // SAFETY: `reply` came from `RedisModule_Call` and is freed once.
                unsafe { free(reply) };
                None
            }
        };
        let mut made = 0;
        for canned in all {
            if canned.prepared() {
                made += 1;
                continue;
            }
            let Some(two) = make(c"cc", canned.script, canned.resp2) else {
                continue;
            };
            if let Some(resp3) = canned.resp3 {
                let Some(three) = make(c"3cc", canned.script, resp3) else {
                    // SAFETY: `two` came from `RedisModule_Call` and is freed once.
                    unsafe { free(two) };
                    continue;
                };
                // SAFETY: `three` is a live reply; its type is asked to have Redis parse it,
                // which marks it RESP3; then it is sent to the load's client, which speaks
                // RESP2 and must refuse it (writing nothing).
                let refused = unsafe {
                    type_of(three);
                    reply_with(ctx.ctx, three) != raw::REDISMODULE_OK as c_int
                };
                if !refused {
                    // SAFETY: both came from `RedisModule_Call` and are freed once.
                    unsafe {
                        free(three);
                        free(two);
                    }
                    continue;
                }
                canned.made3.store(three, Ordering::Relaxed);
            }
            canned.made2.store(two, Ordering::Relaxed);
            made += 1;
        }
        made
    }

    /// An error.
    #[inline]
    pub fn error(ctx: &Context, text: &CStr) {
        api!(ctx, RedisModule_ReplyWithError, text.as_ptr());
    }

    /// A null.
    #[inline]
    pub fn null(ctx: &Context) {
        api!(ctx, RedisModule_ReplyWithNull);
    }

    /// A bulk string of any bytes.
    #[inline]
    pub fn string_buffer(ctx: &Context, bytes: &[u8]) {
        api!(
            ctx,
            RedisModule_ReplyWithStringBuffer,
            bytes.as_ptr().cast(),
            bytes.len()
        );
    }

    /// Whether this server formats doubles with `%.17g` (Redis before 7.2; see
    /// [`double`]), as found when the module loaded.
    static G17_DOUBLES: AtomicBool = AtomicBool::new(false);

    /// Finds out how the server formats doubles, once, when the module loads: Redis 7.2
    /// replaced `%.17g` in `addReplyDouble` by the shortest round-trip form (grisu2,
    /// redis/redis#10587), so the short path of [`double`] is for servers before 7.2 only
    /// (`RedisModule_GetServerVersion`, Redis 6.0.9 and later; the versions without it
    /// format with `%.17g`).
    pub fn detect_double_format() {
        // SAFETY: the API's pointers are set by `RedisModule_Init` before `init` calls
        // this; the call takes no arguments.
        let version = unsafe { raw::RedisModule_GetServerVersion.map(|version| version()) };
        G17_DOUBLES.store(version.is_none_or(|v| v < 0x00_07_02_00), Ordering::Relaxed);
    }

    /// A double, as Redis formats it (RESP2: a bulk string of `%.17g` before Redis 7.2,
    /// `inf`, `-inf`, `nan`; RESP3: a double). To a RESP2 client of a server that formats
    /// with `%.17g`, a finite value goes as the bulk string of
    /// [`format_g17`](crate::numbers::format_g17), the same bytes without glibc's
    /// `snprintf`; the rest through `RedisModule_ReplyWithDouble`.
    #[inline]
    pub fn double(ctx: &Context, value: f64) {
        let mut buf = [0; crate::numbers::G17_MAX];
        match crate::numbers::format_g17(value, &mut buf) {
            Some(text) if G17_DOUBLES.load(Ordering::Relaxed) && !resp3(ctx) => {
                string_buffer(ctx, text)
            }
            _ => {
                api!(ctx, RedisModule_ReplyWithDouble, value);
            }
        }
    }

    /// Whether the command's client speaks RESP3 (`RedisModule_GetContextFlags`; an
    /// unknown answer counts as RESP3, which leaves the reply to Redis).
    fn resp3(ctx: &Context) -> bool {
        // SAFETY: as in `api!`: the pointer is set by `RedisModule_Init`, and `ctx.ctx` is
        // the running command's context.
        match unsafe { raw::RedisModule_GetContextFlags } {
            Some(flags) => {
                // SAFETY: as above.
                let flags = unsafe { flags(ctx.ctx) };
                flags as u32 & raw::REDISMODULE_CTX_FLAGS_RESP3 != 0
            }
            None => true,
        }
    }
}

/// Replicates `bloomkit.topk.replay KEY DRAWS OP ARGS…` in place of the running command
/// (`RedisModule_Replicate`, format `sbcv`: a string, a buffer, a C string, a vector of
/// strings), straight through the API's pointer. See `commands::topk` for the command.
pub fn replicate_topk_replay(ctx: &Context, key: &Arg, draws: &[u8], op: &CStr, rest: &[Arg]) {
    let strings: Vec<*mut raw::RedisModuleString> = rest.iter().map(|arg| arg.inner).collect();
    // SAFETY: as in `replicate_verbatim`.
    if let Some(replicate) = unsafe { raw::RedisModule_Replicate } {
        // SAFETY: `ctx.ctx` is the running command's context; the format's four
        // conversions get, in order, a string Redis passed to the command (alive until
        // it returns), a buffer and its length, a NUL-terminated string, and an array of
        // strings Redis passed to the command with its length. Redis copies what it
        // propagates before returning.
        unsafe {
            replicate(
                ctx.ctx,
                c"bloomkit.topk.replay".as_ptr(),
                c"sbcv".as_ptr(),
                key.inner,
                draws.as_ptr().cast::<c_char>(),
                draws.len(),
                op.as_ptr(),
                strings.as_ptr(),
                strings.len(),
            )
        };
    }
}

/// A key that holds a value of another type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WrongType;

/// Opens `name` for reading only and lends its value of type `ty` mutably to `f` (`None`
/// for a missing key), for the t-digest queries: RedisBloom's compress the digest they
/// read, on a key opened for reading, so the key is not signalled as modified (a `WATCH`
/// on it holds, client-side caches stay valid) and the command needs no write access.
pub fn with_read_value<T, R>(
    ctx: &Context,
    name: &RedisString,
    ty: &RedisType,
    f: impl FnOnce(Option<&mut T>) -> R,
) -> Result<R, WrongType> {
    let mut key = Key::open(ctx, name, false);
    key.value(ty).map(f)
}
