//! # bloomkit-redis
//!
//! A Redis module that is a drop-in, data-compatible replacement for RedisBloom 2.4's Bloom
//! (`BF.*`) and cuckoo (`CF.*`) commands: same syntax, replies, error strings, hashing,
//! sizing, SCANDUMP/LOADCHUNK bytes and RDB encoding (types `MBbloom--` and `MBbloomCF`,
//! encoding version 4, and the older versions RedisBloom 2.4 loads), so data written by
//! RedisBloom loads here and answers the same.
//!
//! ```text
//! cargo build --release -p bloomkit-redis
//! redis-server --loadmodule target/release/libbloomkit_redis.so [MAX_KEY_MEMORY 134217728]
//! ```
//!
//! * [`bf`] and [`cf`] hold RedisBloom's layouts as plain Rust (no Redis API), built on the
//!   library's bit vector and MurmurHash64A; they are unit-tested without a server.
//! * [`config`] parses the module arguments.
//! * The command handlers and the data-type callbacks (`commands`, `types`) are the only
//!   code that touches the Redis module API; they are exercised by the integration tests,
//!   which start real `redis-server` processes.

// Unsafe code only where Redis hands over raw pointers: the data-type callbacks (`types`)
// and the allocator that calls into Redis (`memory`). Everything else, the commands
// included, goes through the safe API of the redis-module crate.
#![deny(unsafe_code)]

pub mod bf;
pub mod cf;
pub mod config;
pub mod rdb;

// The Redis side: a global allocator that calls into Redis, so it is compiled out of unit
// tests (which run without a server). The integration tests load the cdylib into a real
// redis-server instead.
#[cfg(not(test))]
mod commands;
#[cfg(not(test))]
#[allow(unsafe_code)]
mod memory;
#[cfg(not(test))]
#[allow(unsafe_code)]
mod types;

#[cfg(not(test))]
mod module {
    use redis_module::raw::ModuleOptions;
    use redis_module::{redis_module, Context, RedisString, Status};

    use crate::commands::bf::*;
    use crate::commands::cf::*;
    use crate::config;
    use crate::memory;
    use crate::types::{BLOOM_TYPE, CUCKOO_TYPE};

    fn init(ctx: &Context, args: &[RedisString]) -> Status {
        // A short read or a corrupt field in an RDB value sets Redis's I/O error flag,
        // which the load callbacks check, instead of aborting the server.
        ctx.set_module_options(ModuleOptions::HANDLE_IO_ERRORS);
        if !memory::start(ctx) {
            ctx.log_warning("bloomkit: could not subscribe to configuration changes");
            return Status::Err;
        }
        match config::parse(args.iter().map(RedisString::as_slice)) {
            Ok(c) => {
                config::set(c);
                Status::Ok
            }
            Err(e) => {
                ctx.log_warning(&format!("bloomkit: {e}"));
                Status::Err
            }
        }
    }

    // Flags: every command takes one key at argument 1 (first = last = step = 1), so
    // cluster routing works per key. The ACL-category string must stay empty: Redis 7.0
    // refuses the module otherwise.
    redis_module! {
        name: "bf",
        version: 20423,
        allocator: (crate::memory::Allocator, crate::memory::Allocator),
        data_types: [BLOOM_TYPE, CUCKOO_TYPE],
        init: init,
        commands: [
            ["bf.reserve", bf_reserve, "write deny-oom", 1, 1, 1, ""],
            ["bf.add", bf_add, "write deny-oom", 1, 1, 1, ""],
            ["bf.madd", bf_madd, "write deny-oom", 1, 1, 1, ""],
            ["bf.insert", bf_insert, "write deny-oom", 1, 1, 1, ""],
            ["bf.exists", bf_exists, "readonly fast", 1, 1, 1, ""],
            ["bf.mexists", bf_mexists, "readonly fast", 1, 1, 1, ""],
            ["bf.card", bf_card, "readonly fast", 1, 1, 1, ""],
            ["bf.info", bf_info, "readonly fast", 1, 1, 1, ""],
            ["bf.debug", bf_debug, "readonly fast", 1, 1, 1, ""],
            ["bf.scandump", bf_scandump, "readonly", 1, 1, 1, ""],
            ["bf.loadchunk", bf_loadchunk, "write deny-oom", 1, 1, 1, ""],
            ["cf.reserve", cf_reserve, "write deny-oom", 1, 1, 1, ""],
            ["cf.add", cf_add, "write deny-oom", 1, 1, 1, ""],
            ["cf.addnx", cf_addnx, "write deny-oom", 1, 1, 1, ""],
            ["cf.insert", cf_insert, "write deny-oom", 1, 1, 1, ""],
            ["cf.insertnx", cf_insertnx, "write deny-oom", 1, 1, 1, ""],
            ["cf.exists", cf_exists, "readonly fast", 1, 1, 1, ""],
            ["cf.mexists", cf_mexists, "readonly fast", 1, 1, 1, ""],
            ["cf.count", cf_count, "readonly fast", 1, 1, 1, ""],
            ["cf.del", cf_del, "write fast", 1, 1, 1, ""],
            ["cf.compact", cf_compact, "write", 1, 1, 1, ""],
            ["cf.info", cf_info, "readonly fast", 1, 1, 1, ""],
            ["cf.debug", cf_debug, "readonly fast", 1, 1, 1, ""],
            ["cf.scandump", cf_scandump, "readonly", 1, 1, 1, ""],
            ["cf.loadchunk", cf_loadchunk, "write deny-oom", 1, 1, 1, ""],
        ],
    }
}
