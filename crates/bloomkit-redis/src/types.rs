//! The data types `MBbloom--` (Bloom) and `MBbloomCF` (cuckoo), encoding version 4, and
//! their callbacks: RDB save/load in RedisBloom 2.4's field order, AOF rewrite as a
//! LOADCHUNK sequence, MEMORY USAGE, COPY and free.
//!
//! This is the one place with `unsafe`: Redis calls these functions through C pointers
//! and hands over values as `void *`.

use std::ffi::CString;
use std::os::raw::{c_char, c_int, c_longlong, c_void};

use redis_module::native_types::RedisType;
use redis_module::raw;

use crate::bf::{Chain, Layer};
use crate::cf::Cuckoo;

/// RedisBloom 2.4's encoding version for both types.
pub const ENCODING_VERSION: i32 = 4;

const fn methods(
    rdb_load: raw::RedisModuleTypeLoadFunc,
    rdb_save: raw::RedisModuleTypeSaveFunc,
    aof_rewrite: raw::RedisModuleTypeRewriteFunc,
    mem_usage: raw::RedisModuleTypeMemUsageFunc,
    free: raw::RedisModuleTypeFreeFunc,
    copy: raw::RedisModuleTypeCopyFunc,
) -> raw::RedisModuleTypeMethods {
    raw::RedisModuleTypeMethods {
        version: raw::REDISMODULE_TYPE_METHOD_VERSION as u64,
        rdb_load,
        rdb_save,
        aof_rewrite,
        mem_usage,
        digest: None,
        free,
        aux_load: None,
        aux_save: None,
        aux_save2: None,
        aux_save_triggers: 0,
        free_effort: None,
        unlink: None,
        copy,
        defrag: None,
        copy2: None,
        free_effort2: None,
        mem_usage2: None,
        unlink2: None,
    }
}

/// RedisBloom's Bloom filter type.
pub static BLOOM_TYPE: RedisType = RedisType::new(
    "MBbloom--",
    ENCODING_VERSION,
    methods(
        Some(bloom_rdb_load),
        Some(bloom_rdb_save),
        Some(bloom_aof_rewrite),
        Some(bloom_mem_usage),
        Some(free::<Chain>),
        Some(copy::<Chain>),
    ),
);

/// RedisBloom's cuckoo filter type.
pub static CUCKOO_TYPE: RedisType = RedisType::new(
    "MBbloomCF",
    ENCODING_VERSION,
    methods(
        Some(cuckoo_rdb_load),
        Some(cuckoo_rdb_save),
        Some(cuckoo_aof_rewrite),
        Some(cuckoo_mem_usage),
        Some(free::<Cuckoo>),
        Some(copy::<Cuckoo>),
    ),
);

/// Frees a value made by `Box::into_raw`.
unsafe extern "C" fn free<T>(value: *mut c_void) {
    // SAFETY: Redis passes back a pointer this module made with Box::into_raw(Box<T>) for
    // this type, and calls free exactly once.
    drop(unsafe { Box::from_raw(value.cast::<T>()) });
}

/// COPY: a deep clone.
unsafe extern "C" fn copy<T: Clone>(
    _from: *mut raw::RedisModuleString,
    _to: *mut raw::RedisModuleString,
    value: *const c_void,
) -> *mut c_void {
    // SAFETY: `value` is a live T owned by the source key for the duration of the call.
    let value = unsafe { &*value.cast::<T>() };
    Box::into_raw(Box::new(value.clone())).cast()
}

unsafe extern "C" fn bloom_mem_usage(value: *const c_void) -> usize {
    // SAFETY: `value` is a live Chain owned by a key for the duration of the call.
    let chain = unsafe { &*value.cast::<Chain>() };
    chain.memory_bytes() as usize
}

/// RDB: size, layers, options, growth; per layer entries, error, hashes, bpe, bits, n2,
/// the bit buffer, size.
unsafe extern "C" fn bloom_rdb_save(rdb: *mut raw::RedisModuleIO, value: *mut c_void) {
    // SAFETY: `value` is a live Chain owned by a key for the duration of the call.
    let chain = unsafe { &*value.cast::<Chain>() };
    raw::save_unsigned(rdb, chain.size());
    raw::save_unsigned(rdb, chain.layers().len() as u64);
    raw::save_unsigned(rdb, chain.options() as u64);
    raw::save_unsigned(rdb, chain.growth() as u64);
    let mut buffer = Vec::new();
    for l in chain.layers() {
        raw::save_unsigned(rdb, l.entries());
        raw::save_double(rdb, l.error());
        raw::save_unsigned(rdb, l.hashes() as u64);
        raw::save_double(rdb, l.bpe());
        raw::save_unsigned(rdb, l.num_bits());
        raw::save_unsigned(rdb, l.n2() as u64);
        buffer.clear();
        l.bit_vec().write_le_bytes(&mut buffer);
        raw::save_slice(rdb, &buffer);
        raw::save_unsigned(rdb, l.size());
    }
}

fn load_chain(rdb: *mut raw::RedisModuleIO) -> Option<Chain> {
    let size = raw::load_unsigned(rdb).ok()?;
    let num_layers = raw::load_unsigned(rdb).ok()?;
    let options = u32::try_from(raw::load_unsigned(rdb).ok()?).ok()?;
    let growth = u32::try_from(raw::load_unsigned(rdb).ok()?).ok()?;
    let mut layers = Vec::new();
    for _ in 0..num_layers {
        let entries = raw::load_unsigned(rdb).ok()?;
        let error = raw::load_double(rdb).ok()?;
        let hashes = raw::load_unsigned(rdb).ok()?;
        let bpe = raw::load_double(rdb).ok()?;
        let bits = raw::load_unsigned(rdb).ok()?;
        let n2 = raw::load_unsigned(rdb).ok()?;
        let data = raw::load_string_buffer(rdb).ok()?;
        let layer_size = raw::load_unsigned(rdb).ok()?;
        layers.push(Layer::from_stored(
            entries,
            error,
            hashes,
            bpe,
            bits,
            n2,
            data.as_ref(),
            layer_size,
        )?);
    }
    Chain::from_parts(size, options, growth, layers)
}

unsafe extern "C" fn bloom_rdb_load(rdb: *mut raw::RedisModuleIO, encver: c_int) -> *mut c_void {
    if encver != ENCODING_VERSION {
        return std::ptr::null_mut();
    }
    match load_chain(rdb) {
        Some(chain) => Box::into_raw(Box::new(chain)).cast(),
        None => std::ptr::null_mut(),
    }
}

/// Emits `command key iter data` into the AOF being rewritten.
fn emit_loadchunk(
    aof: *mut raw::RedisModuleIO,
    command: &str,
    key: *mut raw::RedisModuleString,
    iter: u64,
    data: &[u8],
) {
    let command = CString::new(command).expect("no NUL in a command name");
    let format = CString::new("slb").expect("no NUL");
    let Some(emit) = (unsafe { raw::RedisModule_EmitAOF }) else {
        return;
    };
    // SAFETY: EmitAOF's format "slb" reads, in order, a RedisModuleString* (the key Redis
    // passed us), a long long, and a (const char*, size_t) buffer pair; the pointers are
    // valid for the duration of the call, which copies them.
    unsafe {
        emit(
            aof,
            command.as_ptr(),
            format.as_ptr(),
            key,
            iter as c_longlong,
            data.as_ptr().cast::<c_char>(),
            data.len(),
        );
    }
}

unsafe extern "C" fn bloom_aof_rewrite(
    aof: *mut raw::RedisModuleIO,
    key: *mut raw::RedisModuleString,
    value: *mut c_void,
) {
    // SAFETY: `value` is a live Chain owned by the key for the duration of the call.
    let chain = unsafe { &*value.cast::<Chain>() };
    emit_loadchunk(aof, "BF.LOADCHUNK", key, 1, &chain.header());
    let mut iter = 1;
    while let Some((next, data)) = chain.chunk(iter) {
        emit_loadchunk(aof, "BF.LOADCHUNK", key, next, &data);
        iter = next;
    }
}

unsafe extern "C" fn cuckoo_mem_usage(value: *const c_void) -> usize {
    // SAFETY: `value` is a live Cuckoo owned by a key for the duration of the call.
    let cf = unsafe { &*value.cast::<Cuckoo>() };
    cf.memory_bytes() as usize
}

/// RDB: sub-filters, buckets, items, deletes, bucket size, max iterations, expansion; per
/// sub-filter its bucket count and buffer.
unsafe extern "C" fn cuckoo_rdb_save(rdb: *mut raw::RedisModuleIO, value: *mut c_void) {
    // SAFETY: `value` is a live Cuckoo owned by a key for the duration of the call.
    let cf = unsafe { &*value.cast::<Cuckoo>() };
    raw::save_unsigned(rdb, cf.filters().len() as u64);
    raw::save_unsigned(rdb, cf.num_buckets());
    raw::save_unsigned(rdb, cf.num_items());
    raw::save_unsigned(rdb, cf.num_deletes());
    raw::save_unsigned(rdb, cf.bucket_size() as u64);
    raw::save_unsigned(rdb, cf.max_iterations() as u64);
    raw::save_unsigned(rdb, cf.expansion() as u64);
    for f in cf.filters() {
        raw::save_unsigned(rdb, f.num_buckets());
        raw::save_slice(rdb, f.data());
    }
}

fn load_cuckoo(rdb: *mut raw::RedisModuleIO) -> Option<Cuckoo> {
    let num_filters = raw::load_unsigned(rdb).ok()?;
    let num_buckets = raw::load_unsigned(rdb).ok()?;
    let num_items = raw::load_unsigned(rdb).ok()?;
    let num_deletes = raw::load_unsigned(rdb).ok()?;
    let bucket_size = raw::load_unsigned(rdb).ok()?;
    let max_iterations = raw::load_unsigned(rdb).ok()?;
    let expansion = raw::load_unsigned(rdb).ok()?;
    let mut filters = Vec::new();
    for _ in 0..num_filters.min(u16::MAX as u64 + 1) {
        let buckets = raw::load_unsigned(rdb).ok()?;
        let data = raw::load_string_buffer(rdb).ok()?;
        filters.push((buckets, data.as_ref().to_vec()));
    }
    Cuckoo::from_parts(
        num_filters,
        num_buckets,
        num_items,
        num_deletes,
        bucket_size,
        max_iterations,
        expansion,
        filters,
    )
}

unsafe extern "C" fn cuckoo_rdb_load(rdb: *mut raw::RedisModuleIO, encver: c_int) -> *mut c_void {
    if encver != ENCODING_VERSION {
        return std::ptr::null_mut();
    }
    match load_cuckoo(rdb) {
        Some(cf) => Box::into_raw(Box::new(cf)).cast(),
        None => std::ptr::null_mut(),
    }
}

unsafe extern "C" fn cuckoo_aof_rewrite(
    aof: *mut raw::RedisModuleIO,
    key: *mut raw::RedisModuleString,
    value: *mut c_void,
) {
    // SAFETY: `value` is a live Cuckoo owned by the key for the duration of the call.
    let cf = unsafe { &*value.cast::<Cuckoo>() };
    // Unlike SCANDUMP, the rewrite also keeps empty filters (their parameters matter).
    emit_loadchunk(aof, "CF.LOADCHUNK", key, 1, &cf.header());
    let mut iter = 1;
    while let Some((next, data)) = cf.chunk(iter) {
        emit_loadchunk(aof, "CF.LOADCHUNK", key, next, data);
        iter = next;
    }
}
