//! The Redis side of memory: the per-key limit in force ([`KeyLimit`]) and the global
//! allocator ([`Allocator`]).
//!
//! # Where the default limit comes from
//!
//! [`config::auto_limit`] needs Redis's `maxmemory` and the machine's physical memory.
//! Both are read with `RedisModule_GetServerInfo(NULL, "memory")` (fields `maxmemory` and
//! `total_system_memory`, which Redis itself measures): once when the module loads and
//! again after every `CONFIG SET` (the `REDISMODULE_EVENT_CONFIG` server event), so the
//! value in force is the one used, at no cost per command. The alternatives are worse
//! here: `RedisModule_GetUsedMemoryRatio` gives a ratio, not the bytes; `CONFIG GET`
//! through `RedisModule_Call` needs a client context and may not run inside an RDB load
//! callback; and generating the INFO section on every allocation would cost microseconds
//! on every filter creation and every RDB value loaded.

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::CStr;
use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicU64, Ordering};

use redis_module::{raw, Context};

use crate::config::{self, Limit};

/// The default limit, as [`refresh`] last computed it.
static AUTO_LIMIT: AtomicU64 = AtomicU64::new(u64::MAX);

/// Reads `maxmemory` and `total_system_memory` from the server and recomputes the default
/// limit. Works in any context (no client needed).
pub fn refresh() {
    // SAFETY: the API pointers are set by RedisModule_Init before any module code runs;
    // GetServerInfo accepts a NULL context (it then does no automatic memory management)
    // and returns data that FreeServerInfo releases below; the field names are
    // NUL-terminated and `err` outlives the calls.
    unsafe {
        let (Some(get), Some(field), Some(free)) = (
            raw::RedisModule_GetServerInfo,
            raw::RedisModule_ServerInfoGetFieldUnsigned,
            raw::RedisModule_FreeServerInfo,
        ) else {
            return;
        };
        let info = get(std::ptr::null_mut(), c"memory".as_ptr());
        if info.is_null() {
            return;
        }
        let read = |name: &CStr| {
            let mut err: c_int = 0;
            let value = field(info, name.as_ptr(), &mut err);
            if err == raw::REDISMODULE_OK as c_int {
                value
            } else {
                0
            }
        };
        let maxmemory = read(c"maxmemory");
        let physical = read(c"total_system_memory");
        free(std::ptr::null_mut(), info);
        AUTO_LIMIT.store(config::auto_limit(maxmemory, physical), Ordering::Relaxed);
    }
}

/// The config-change server event: `maxmemory` may have changed.
unsafe extern "C" fn on_config_change(
    _ctx: *mut raw::RedisModuleCtx,
    _eid: raw::RedisModuleEvent,
    _subevent: u64,
    _data: *mut c_void,
) {
    refresh();
}

/// Computes the default limit and keeps it current. False if Redis refused the
/// subscription.
pub fn start(ctx: &Context) -> bool {
    refresh();
    // SAFETY: reading the API pointer, set by RedisModule_Init before `init` runs.
    let Some(subscribe) = (unsafe { raw::RedisModule_SubscribeToServerEvent }) else {
        return false;
    };
    let event = raw::RedisModuleEvent {
        id: raw::REDISMODULE_EVENT_CONFIG,
        dataver: 1,
    };
    // SAFETY: `ctx` is the module's load context; the callback is a plain function that
    // lives as long as the module.
    unsafe { subscribe(ctx.ctx, event, Some(on_config_change)) == raw::REDISMODULE_OK as c_int }
}

/// The per-key limit in force: `MAX_KEY_MEMORY` when given, else the default.
#[derive(Clone, Copy, Debug, Default)]
pub struct KeyLimit;

impl Limit for KeyLimit {
    fn bytes(&self) -> u64 {
        config::get()
            .max_key_memory
            .unwrap_or_else(|| AUTO_LIMIT.load(Ordering::Relaxed))
    }
}

/// Redis's allocator (so that filters count in `used_memory` and `maxmemory`), with
/// zeroed allocations served by `RedisModule_Calloc`: a large zeroed block then comes from
/// fresh pages that are not written, so a 4 GiB empty filter costs memory only as it is
/// filled. Sizes are rounded up to the alignment, which jemalloc's size classes then
/// honour (as `redis_module::alloc::RedisAlloc` does).
pub struct Allocator;

fn aligned_size(layout: Layout) -> usize {
    (layout.size() + layout.align() - 1) & !(layout.align() - 1)
}

// SAFETY: every method forwards to Redis's allocator (or to redis-module's `RedisAlloc`,
// which does the same) with the size rounded up to a multiple of the alignment. With
// Redis's default jemalloc, whose size classes are aligned to their size, that honours any
// alignment; with a libc-malloc build of Redis, alignments above 16 bytes would not be —
// and this crate allocates nothing aligned above 8 (bit vectors of u64, byte buffers).
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the same contract.
        unsafe { redis_module::alloc::RedisAlloc.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: RedisModule_Calloc is set before any allocation of the module's code
        // (the global allocator is only used once Redis has loaded the module).
        match unsafe { raw::RedisModule_Calloc } {
            // SAFETY: calloc returns zeroed memory of at least the rounded size, aligned
            // as the size class of a size that is a multiple of the alignment.
            Some(calloc) => unsafe { calloc(1, aligned_size(layout)).cast() },
            // SAFETY: forwarded with the same contract.
            None => unsafe { redis_module::alloc::RedisAlloc.alloc_zeroed(layout) },
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator, i.e. from Redis's.
        unsafe { redis_module::alloc::RedisAlloc.dealloc(ptr, layout) }
    }
}
