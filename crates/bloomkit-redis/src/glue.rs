//! The commands' C entry points.
//!
//! redis-module's own command glue turns every call's arguments into a fresh
//! `Vec<RedisString>`: one allocation, and a reference-count increment and decrement (two
//! calls into Redis) per argument. Measured with callgrind, that was most of the ~600
//! instructions per call this module spent beyond RedisBloom's own handlers. Here the
//! handlers get the arguments Redis passed, borrowed for the call: up to
//! [`INLINE_ARGS`] in an array on the stack, more in one vector.
//!
//! One of the three modules with `unsafe` (with `types` and `memory`; `lib.rs` lists them
//! and says why): reading the `argv` array Redis passes and registering the entry points.

use std::ffi::{c_int, CStr};
use std::mem::ManuallyDrop;

use redis_module::native_types::RedisType;
use redis_module::{raw, Context, RedisResult, RedisString};

/// A command argument: the string Redis passed, neither retained nor freed (it lives until
/// the command returns, which is as long as a handler can see it).
pub type Arg = ManuallyDrop<RedisString>;

/// A command handler.
pub type Handler = fn(&Context, &[Arg]) -> RedisResult;

/// Calls with at most this many arguments (the command name included) allocate nothing.
pub const INLINE_ARGS: usize = 8;

/// Runs `handler` on the call's arguments and sends its reply.
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
        // One pass: each slot is the argument Redis passed, or a null view past the end
        // (never handed to the handler).
        let inline: [Arg; INLINE_ARGS] =
            std::array::from_fn(|i| view(argv.get(i).copied().unwrap_or(std::ptr::null_mut())));
        handler(&context, &inline[..argv.len()])
    } else {
        let args: Vec<Arg> = argv.iter().map(|&p| view(p)).collect();
        handler(&context, &args)
    };
    match response {
        // A handler that replied through `Reply` has nothing left to send: skip the
        // conversion and the drop of a `RedisValue` (both out of line, 0.2% of the server's
        // time under BF.INFO).
        Ok(redis_module::RedisValue::NoReply) => raw::REDISMODULE_OK as c_int,
        response => context.reply(response) as c_int,
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
    use std::ffi::{c_long, c_longlong, CStr};

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

    /// A double, as Redis formats it (RESP2: a bulk string of `%.17g`, `inf`, `-inf`,
    /// `nan`; RESP3: a double).
    #[inline]
    pub fn double(ctx: &Context, value: f64) {
        api!(ctx, RedisModule_ReplyWithDouble, value);
    }
}

/// One draw of the C library's `rand()` over `RAND_MAX`, as RedisBloom's top-k draws its
/// decay decisions: the process-wide generator that Redis seeds at start-up.
pub fn c_rand_unit() -> f64 {
    // SAFETY: rand() takes no arguments and only touches the C library's generator state,
    // which glibc guards with a lock.
    let r = unsafe { libc::rand() };
    r as f64 / libc::RAND_MAX as f64
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
    // Redis 7.0 returns NULL for a missing key opened for reading; the API's calls below
    // accept NULL (an empty key).
    let key = raw::open_key(ctx.ctx, name.inner, raw::KeyMode::READ);
    // SAFETY: the API's function pointers are set by `RedisModule_Init` before any command
    // runs; `key` is NULL or a key handle open until `close_key` below. A value of `ty`
    // is a `T` this module boxed (the type's callbacks only ever store `T`), owned by the
    // key and not referenced anywhere else while the command runs (commands run one at a
    // time on the main thread, and this borrow ends before the key is closed).
    let result = unsafe {
        let (Some(key_type), Some(get_type), Some(get_value)) = (
            raw::RedisModule_KeyType,
            raw::RedisModule_ModuleTypeGetType,
            raw::RedisModule_ModuleTypeGetValue,
        ) else {
            raw::close_key(key);
            return Err(WrongType);
        };
        if key.is_null() || key_type(key) == raw::REDISMODULE_KEYTYPE_EMPTY as c_int {
            Ok(f(None))
        } else if get_type(key) != *ty.raw_type.borrow() {
            Err(WrongType)
        } else {
            let value = get_value(key).cast::<T>();
            Ok(f(value.as_mut()))
        }
    };
    raw::close_key(key);
    result
}
