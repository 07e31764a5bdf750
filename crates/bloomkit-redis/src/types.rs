//! The data types `MBbloom--` (Bloom) and `MBbloomCF` (cuckoo), encoding version 4, and
//! their callbacks: RDB save/load in RedisBloom 2.4's field order (older encoding versions
//! load too, see [`Chain::load`] and [`Cuckoo::load`]), AOF rewrite as a LOADCHUNK
//! sequence, MEMORY USAGE, COPY, `DEBUG DIGEST` ([`Digested`]) and free. Beside them RedisBloom's count-min sketch
//! (`CMSk-TYPE`, [`Sketch::save`]), top-k (`TopK-TYPE`, [`Topk::save`]) and t-digest
//! (`TDIS-TYPE`, [`TDigest::save`]) types, encoding version 0 each, whose AOF rewrites are
//! `RESTORE`s.
//!
//! A load never takes the server down: the module declares
//! `REDISMODULE_OPTIONS_HANDLE_IO_ERRORS` at load time, so a short read or a wrong type
//! marker sets Redis's I/O error flag instead of aborting; every read checks the flag
//! (`RedisModule_IsIOError`), and a load returns NULL at the first error or inconsistency,
//! dropping what it had read. RESTORE then answers an error; an RDB load fails as a whole.
//!
//! One of the three modules with `unsafe` (with `glue` and `clib`; `lib.rs` lists them
//! and says why): Redis calls these functions through C pointers and hands over values as
//! `void *`.

use std::ffi::CString;
use std::os::raw::{c_char, c_int, c_longlong, c_void};

use redis_module::native_types::RedisType;
use redis_module::raw;

use crate::bf::Chain;
use crate::cf::{Cuckoo, Hashing};
use crate::cms::Sketch;
use crate::config::Limit;
use crate::memory::{self, Footprint, ServerLimit};
use crate::rdb::{Sink, Source};
use crate::tdigest::TDigest;
use crate::topk::Topk;

/// The module API's reads and writes of one value; every read is `None` once Redis has
/// flagged an I/O error.
struct Io(*mut raw::RedisModuleIO);

impl Source for Io {
    fn unsigned(&mut self) -> Option<u64> {
        raw::load_unsigned(self.0).ok()
    }
    fn double(&mut self) -> Option<f64> {
        raw::load_double(self.0).ok()
    }
    fn buffer(&mut self) -> Option<Vec<u8>> {
        raw::load_string_buffer(self.0)
            .ok()
            .map(|b| b.as_ref().to_vec())
    }
}

impl Sink for Io {
    fn unsigned(&mut self, value: u64) {
        raw::save_unsigned(self.0, value);
    }
    fn double(&mut self, value: f64) {
        raw::save_double(self.0, value);
    }
    fn buffer(&mut self, bytes: &[u8]) {
        raw::save_slice(self.0, bytes);
    }
}

/// `DEBUG DIGEST` and `DEBUG DIGEST-VALUE`: a value's fields, as its RDB save writes them,
/// fed to Redis's digest in order (a double by its bits), closed as one sequence. So two
/// values digest alike exactly when they save alike: an operator (or a test) compares a
/// primary with its replicas, or a key with its `RESTORE`d copy, by one 20-byte hash. (The
/// module API leaves this callback optional; RedisBloom 2.4 does not set it, and Redis then
/// digests a module value as nothing: every value of the type looks the same.)
struct DigestSink(*mut raw::RedisModuleDigest);

impl DigestSink {
    fn long_long(&mut self, value: i64) {
        // SAFETY: the module API's function pointers are written once, when the module
        // loads, before any callback runs.
        if let Some(add) = unsafe { raw::RedisModule_DigestAddLongLong } {
            // SAFETY: `self.0` is the digest Redis handed to the callback running now.
            unsafe { add(self.0, value) }
        }
    }
}

impl Sink for DigestSink {
    fn unsigned(&mut self, value: u64) {
        self.long_long(value as i64);
    }
    fn double(&mut self, value: f64) {
        self.long_long(value.to_bits() as i64);
    }
    fn buffer(&mut self, bytes: &[u8]) {
        // SAFETY: written once at load, as above.
        if let Some(add) = unsafe { raw::RedisModule_DigestAddStringBuffer } {
            // SAFETY: `self.0` is the digest of the running callback; `bytes` is a live
            // slice of `bytes.len()` bytes, which Redis reads and does not keep.
            unsafe { add(self.0, bytes.as_ptr().cast(), bytes.len()) }
        }
    }
}

/// What `DEBUG DIGEST` reads of a value: the fields its RDB save writes.
trait Digested {
    /// Writes the value's RDB fields to `sink` without changing the value.
    fn fields(&self, sink: &mut DigestSink);
}

macro_rules! digested_as_saved {
    ($($t:ty),*) => {$(
        impl Digested for $t {
            fn fields(&self, sink: &mut DigestSink) {
                self.save(sink);
            }
        }
    )*};
}
digested_as_saved!(Chain, Cuckoo, Sketch, Topk);

impl Digested for TDigest {
    /// A t-digest's save compresses it first; the digest compresses a copy, so that
    /// `DEBUG DIGEST` leaves `TDIGEST.INFO` as it was.
    fn fields(&self, sink: &mut DigestSink) {
        self.clone().save(sink);
    }
}

/// The digest callback of every type ([`Digested`]).
unsafe extern "C" fn digest<T: Digested>(md: *mut raw::RedisModuleDigest, value: *mut c_void) {
    // SAFETY: `value` is a live T owned by a key for the duration of the call.
    let value = unsafe { &*value.cast::<T>() };
    let mut sink = DigestSink(md);
    value.fields(&mut sink);
    // SAFETY: written once at load, as above.
    if let Some(end) = unsafe { raw::RedisModule_DigestEndSequence } {
        // SAFETY: `md` is the digest Redis handed to this callback.
        unsafe { end(md) }
    }
}

const fn methods(
    rdb_load: raw::RedisModuleTypeLoadFunc,
    rdb_save: raw::RedisModuleTypeSaveFunc,
    aof_rewrite: raw::RedisModuleTypeRewriteFunc,
    mem_usage: raw::RedisModuleTypeMemUsageFunc,
    free: raw::RedisModuleTypeFreeFunc,
    copy: raw::RedisModuleTypeCopyFunc,
    digest: raw::RedisModuleTypeDigestFunc,
) -> raw::RedisModuleTypeMethods {
    raw::RedisModuleTypeMethods {
        version: raw::REDISMODULE_TYPE_METHOD_VERSION as u64,
        rdb_load,
        rdb_save,
        aof_rewrite,
        mem_usage,
        digest,
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
    crate::bf::ENCODING_VERSION,
    methods(
        Some(bloom_rdb_load),
        Some(bloom_rdb_save),
        Some(bloom_aof_rewrite),
        Some(bloom_mem_usage),
        Some(free::<Chain>),
        Some(copy::<Chain>),
        Some(digest::<Chain>),
    ),
);

/// RedisBloom's cuckoo filter type.
pub static CUCKOO_TYPE: RedisType = RedisType::new(
    "MBbloomCF",
    crate::cf::ENCODING_VERSION,
    methods(
        Some(cuckoo_rdb_load),
        Some(cuckoo_rdb_save),
        Some(cuckoo_aof_rewrite),
        Some(cuckoo_mem_usage),
        Some(free::<Cuckoo>),
        Some(copy::<Cuckoo>),
        Some(digest::<Cuckoo>),
    ),
);

/// RedisBloom's t-digest type (`TDIS-TYPE`, encoding version 0).
pub static TDIGEST_TYPE: RedisType = RedisType::new(
    "TDIS-TYPE",
    crate::tdigest::ENCODING_VERSION,
    methods(
        Some(tdigest_rdb_load),
        Some(tdigest_rdb_save),
        Some(tdigest_aof_rewrite),
        Some(tdigest_mem_usage),
        Some(free::<TDigest>),
        Some(copy::<TDigest>),
        Some(digest::<TDigest>),
    ),
);

/// Frees a value made by `Box::into_raw`, and takes it off the count of stored bytes.
/// May run on Redis's lazy-free thread (`FLUSHALL ASYNC`).
unsafe extern "C" fn free<T: Footprint>(value: *mut c_void) {
    // SAFETY: Redis passes back a pointer this module made with Box::into_raw(Box<T>) for
    // this type, and calls free exactly once.
    let value = unsafe { Box::from_raw(value.cast::<T>()) };
    memory::freed(value.footprint());
    drop(value);
}

/// Hands a value to Redis, counted.
fn hand_over<T: Footprint>(value: T) -> *mut c_void {
    memory::stored(value.footprint());
    Box::into_raw(Box::new(value)).cast()
}

/// COPY: a deep clone, refused (NULL: Redis answers an error) when the limits in force do
/// not admit it (the per-key limit may have been lowered since the source was made, and
/// the copy needs room beside what the server holds).
unsafe extern "C" fn copy<T: Clone + Footprint>(
    _from: *mut raw::RedisModuleString,
    _to: *mut raw::RedisModuleString,
    value: *const c_void,
) -> *mut c_void {
    // SAFETY: `value` is a live T owned by the source key for the duration of the call.
    let value = unsafe { &*value.cast::<T>() };
    if ServerLimit.check(0, value.footprint()).is_err() {
        return std::ptr::null_mut();
    }
    hand_over(value.clone())
}

unsafe extern "C" fn bloom_mem_usage(value: *const c_void) -> usize {
    // SAFETY: `value` is a live Chain owned by a key for the duration of the call.
    let chain = unsafe { &*value.cast::<Chain>() };
    chain.memory_bytes() as usize
}

/// RDB: [`Chain::save`].
unsafe extern "C" fn bloom_rdb_save(rdb: *mut raw::RedisModuleIO, value: *mut c_void) {
    // SAFETY: `value` is a live Chain owned by a key for the duration of the call.
    let chain = unsafe { &*value.cast::<Chain>() };
    chain.save(&mut Io(rdb));
}

/// RDB: [`Chain::load`], any encoding version RedisBloom 2.4 loads.
unsafe extern "C" fn bloom_rdb_load(rdb: *mut raw::RedisModuleIO, encver: c_int) -> *mut c_void {
    match Chain::load(&mut Io(rdb), encver, ServerLimit) {
        Some(chain) => hand_over(chain),
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
    // SAFETY: the API's function pointers are written once by `RedisModule_Init`, before
    // any callback can run, and only read afterwards, on Redis's main thread.
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

/// MEMORY USAGE: the filter's [`Footprint`], its bookkeeping included.
unsafe extern "C" fn cuckoo_mem_usage(value: *const c_void) -> usize {
    // SAFETY: `value` is a live Cuckoo owned by a key for the duration of the call.
    let cf = unsafe { &*value.cast::<Cuckoo>() };
    cf.footprint() as usize
}

/// RDB: [`Cuckoo::save`].
unsafe extern "C" fn cuckoo_rdb_save(rdb: *mut raw::RedisModuleIO, value: *mut c_void) {
    // SAFETY: `value` is a live Cuckoo owned by a key for the duration of the call.
    let cf = unsafe { &*value.cast::<Cuckoo>() };
    cf.save(&mut Io(rdb));
}

/// RDB: [`Cuckoo::load`], any encoding version RedisBloom 2.4 loads.
unsafe extern "C" fn cuckoo_rdb_load(rdb: *mut raw::RedisModuleIO, encver: c_int) -> *mut c_void {
    match Cuckoo::load(&mut Io(rdb), encver, ServerLimit) {
        Some(cf) => hand_over(cf),
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
    // A filter with RedisBloom 2.0's hashing starts with a command RedisBloom does not
    // know (see `bloomkit.cf.loadchunk` in lib.rs).
    let first = match cf.hashing() {
        Hashing::Murmur64A => "CF.LOADCHUNK",
        Hashing::Murmur2 => "BLOOMKIT.CF.LOADCHUNK",
    };
    emit_loadchunk(aof, first, key, 1, &cf.header());
    let mut iter = 1;
    while let Some((next, data)) = cf.chunk(iter) {
        emit_loadchunk(aof, "CF.LOADCHUNK", key, next, data);
        iter = next;
    }
}

/// RedisBloom's count-min sketch type.
pub static CMS_TYPE: RedisType = RedisType::new(
    "CMSk-TYPE",
    crate::cms::ENCODING_VERSION,
    methods(
        Some(cms_rdb_load),
        Some(cms_rdb_save),
        Some(cms_aof_rewrite),
        Some(mem_usage::<Sketch>),
        Some(free::<Sketch>),
        Some(copy::<Sketch>),
        Some(digest::<Sketch>),
    ),
);

/// RedisBloom's top-k type.
pub static TOPK_TYPE: RedisType = RedisType::new(
    "TopK-TYPE",
    crate::topk::ENCODING_VERSION,
    methods(
        Some(topk_rdb_load),
        Some(topk_rdb_save),
        Some(topk_aof_rewrite),
        Some(mem_usage::<Topk>),
        Some(free::<Topk>),
        Some(copy::<Topk>),
        Some(digest::<Topk>),
    ),
);

/// MEMORY USAGE: the value's [`Footprint`].
unsafe extern "C" fn mem_usage<T: Footprint>(value: *const c_void) -> usize {
    // SAFETY: `value` is a live T owned by a key for the duration of the call.
    let value = unsafe { &*value.cast::<T>() };
    value.footprint() as usize
}

/// RDB: [`Sketch::save`].
unsafe extern "C" fn cms_rdb_save(rdb: *mut raw::RedisModuleIO, value: *mut c_void) {
    // SAFETY: `value` is a live Sketch owned by a key for the duration of the call.
    let sketch = unsafe { &*value.cast::<Sketch>() };
    sketch.save(&mut Io(rdb));
}

/// RDB: [`Sketch::load`].
unsafe extern "C" fn cms_rdb_load(rdb: *mut raw::RedisModuleIO, encver: c_int) -> *mut c_void {
    match Sketch::load(&mut Io(rdb), encver, ServerLimit) {
        Some(sketch) => hand_over(sketch),
        None => std::ptr::null_mut(),
    }
}

/// MEMORY USAGE: RedisBloom's count (a pointer and the two arrays).
unsafe extern "C" fn tdigest_mem_usage(value: *const c_void) -> usize {
    // SAFETY: `value` is a live TDigest owned by a key for the duration of the call.
    let td = unsafe { &*value.cast::<TDigest>() };
    td.redisbloom_memory_usage() as usize
}

/// RDB: [`TDigest::save`], which compresses the digest first, as RedisBloom does (so a
/// `DUMP` or a foreground save changes what `TDIGEST.INFO` shows, as there).
unsafe extern "C" fn tdigest_rdb_save(rdb: *mut raw::RedisModuleIO, value: *mut c_void) {
    // SAFETY: `value` is a live TDigest owned by a key, not otherwise borrowed while
    // Redis runs this callback.
    let td = unsafe { &mut *value.cast::<TDigest>() };
    td.save(&mut Io(rdb));
}

/// RDB: [`TDigest::load`].
unsafe extern "C" fn tdigest_rdb_load(rdb: *mut raw::RedisModuleIO, encver: c_int) -> *mut c_void {
    match TDigest::load(&mut Io(rdb), encver, ServerLimit) {
        Some(td) => hand_over(td),
        None => std::ptr::null_mut(),
    }
}

/// RDB: [`Topk::save`].
unsafe extern "C" fn topk_rdb_save(rdb: *mut raw::RedisModuleIO, value: *mut c_void) {
    // SAFETY: `value` is a live Topk owned by a key for the duration of the call.
    let topk = unsafe { &*value.cast::<Topk>() };
    topk.save(&mut Io(rdb));
}

/// RDB: [`Topk::load`].
unsafe extern "C" fn topk_rdb_load(rdb: *mut raw::RedisModuleIO, encver: c_int) -> *mut c_void {
    match Topk::load(&mut Io(rdb), encver, ServerLimit) {
        Some(topk) => hand_over(topk),
        None => std::ptr::null_mut(),
    }
}

/// AOF rewrite of a sketch: `RESTORE key 0 payload`, the value's `DUMP` payload, as
/// RedisBloom rewrites it — but built from the value itself, as the t-digest's below (see
/// there why RedisBloom's way, a `DUMP` call from a context of database 0, loses keys of
/// other databases).
unsafe extern "C" fn cms_aof_rewrite(
    aof: *mut raw::RedisModuleIO,
    key: *mut raw::RedisModuleString,
    value: *mut c_void,
) {
    // SAFETY: `value` is a live Sketch owned by the key for the duration of the call.
    let sketch = unsafe { &*value.cast::<Sketch>() };
    emit_restore(aof, key, b"CMSk-TYPE", crate::cms::ENCODING_VERSION, |f| {
        sketch.save(f)
    });
}

/// AOF rewrite of a top-k: as [`cms_aof_rewrite`].
unsafe extern "C" fn topk_aof_rewrite(
    aof: *mut raw::RedisModuleIO,
    key: *mut raw::RedisModuleString,
    value: *mut c_void,
) {
    // SAFETY: `value` is a live Topk owned by the key for the duration of the call.
    let topk = unsafe { &*value.cast::<Topk>() };
    emit_restore(aof, key, b"TopK-TYPE", crate::topk::ENCODING_VERSION, |f| {
        topk.save(f)
    });
}

/// Emits `RESTORE key 0 payload` for a value whose RDB record `save` writes.
fn emit_restore(
    aof: *mut raw::RedisModuleIO,
    key: *mut raw::RedisModuleString,
    type_name: &[u8; 9],
    encver: i32,
    save: impl FnOnce(&mut crate::rdb::Fields),
) {
    let mut fields = crate::rdb::Fields::default();
    save(&mut fields);
    let payload = crate::rdb::dump_payload(type_name, encver, &fields.fields);
    emit_loadchunk(aof, "RESTORE", key, 0, &payload);
}

/// AOF rewrite: `RESTORE key 0 payload`, the digest's `DUMP` payload, as RedisBloom
/// rewrites it. RedisBloom makes the payload by calling `DUMP` from a context of
/// database 0, so its rewrite of a digest in another database dumps the wrong key (or
/// none); here the payload is built from the value itself ([`crate::rdb::dump_payload`]).
unsafe extern "C" fn tdigest_aof_rewrite(
    aof: *mut raw::RedisModuleIO,
    key: *mut raw::RedisModuleString,
    value: *mut c_void,
) {
    // SAFETY: `value` is a live TDigest owned by the key, not otherwise borrowed while
    // Redis runs this callback.
    let td = unsafe { &mut *value.cast::<TDigest>() };
    let mut fields = crate::rdb::Fields::default();
    td.save(&mut fields);
    let payload = crate::rdb::dump_payload(
        b"TDIS-TYPE",
        crate::tdigest::ENCODING_VERSION,
        &fields.fields,
    );
    emit_loadchunk(aof, "RESTORE", key, 0, &payload);
}
