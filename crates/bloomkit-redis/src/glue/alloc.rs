//! The module's global allocator: Redis's, so that every byte the module holds counts in
//! Redis's `used_memory` and against `maxmemory`. Unsafe by nature (`GlobalAlloc`), so it
//! lives in the glue; the memory limits' policy is `memory`'s.

use std::alloc::{GlobalAlloc, Layout};

use redis_module::raw;

/// Redis's allocator (so that filters count in `used_memory` and `maxmemory`), with
/// zeroed allocations served by `RedisModule_Calloc`: a large zeroed block then comes from
/// fresh pages that are not written, so a 4 GiB empty Bloom layer or cuckoo filter costs
/// memory only as it is filled (the library's bit vectors and tables are zeroed
/// allocations, not written zeros). Sizes are rounded up to the alignment, which jemalloc's
/// size classes then honour (as `redis_module::alloc::RedisAlloc` does).
pub struct Allocator;

/// Whether every allocator Redis may be built with honours the layout's alignment: glibc's
/// malloc aligns to 16 bytes, jemalloc's size classes to more. The module's own types never
/// ask for more (no `#[repr(align)]` blocks: those are the library's blocked and split-block
/// filters, which the module does not use); a debug build checks every allocation.
fn fits_any_redis_allocator(layout: Layout) -> bool {
    layout.align() <= 16
}

fn aligned_size(layout: Layout) -> usize {
    (layout.size() + layout.align() - 1) & !(layout.align() - 1)
}

// SAFETY: every method forwards to Redis's allocator (or to redis-module's `RedisAlloc`,
// which does the same) with the size rounded up to a multiple of the alignment. With
// Redis's default jemalloc, whose size classes are aligned to their size, that honours any
// alignment; with a libc-malloc build of Redis, alignments above 16 bytes would not be —
// and this crate allocates nothing aligned above 16 (bit vectors of u64, byte buffers, the
// standard library's tables), which `fits_any_redis_allocator` checks in debug builds.
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        debug_assert!(fits_any_redis_allocator(layout), "{layout:?}");
        // SAFETY: forwarded with the same contract.
        unsafe { redis_module::alloc::RedisAlloc.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        debug_assert!(fits_any_redis_allocator(layout), "{layout:?}");
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
