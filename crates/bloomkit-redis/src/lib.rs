//! # bloomkit-redis
//!
//! A Redis module that is a drop-in, data-compatible replacement for RedisBloom 2.4's Bloom
//! (`BF.*`) and cuckoo (`CF.*`) commands: same syntax, replies, error strings, hashing,
//! sizing, SCANDUMP/LOADCHUNK bytes and RDB encoding (types `MBbloom--` and `MBbloomCF`,
//! encoding version 4, and the older versions RedisBloom 2.4 loads), so data written by
//! RedisBloom loads here and answers the same; likewise its count-min sketch (`CMS.*`, type
//! `CMSk-TYPE`) and top-k (`TOPK.*`, type `TopK-TYPE`), both encoding version 0, and its
//! t-digest (`TDIGEST.*`, type `TDIS-TYPE`, below).
//!
//! ```text
//! cargo build --release -p bloomkit-redis
//! redis-server --loadmodule target/release/libbloomkit_redis.so [MAX_KEY_MEMORY 134217728] [MAX_MEMORY 8589934592]
//! ```
//!
//! * [`bf`] and [`cf`] hold RedisBloom's layouts as plain Rust (no Redis API), built on the
//!   library's bit vector and MurmurHash64A; [`cms`] and [`topk`] its count-min sketch and
//!   HeavyKeeper top-k, with their papers and error bounds; all are unit-tested without a
//!   server.
//! * [`tdigest`] holds RedisBloom 2.4's t-digest (`TDIGEST.*`, type `TDIS-TYPE`, encoding
//!   version 0): its t-digest-c's arithmetic, float for float, and its RDB record.
//! * [`murmur`] hashes an item under every row's seed in one pass (the sketches' rows).
//! * [`numbers`] reads and writes doubles as Redis does (`strtod`, `%.17g`), on a short path.
//! * [`config`] parses the module arguments and holds the memory limits' rule (per key and
//!   server-wide, checked before every allocation of filter memory).
//! * The library's huge-page advice (`bloomkit::arch`, for arrays written whole) is turned
//!   off when Redis loads the module ([`bloomkit::arch::forbid_huge_pages`]).
//! * The command handlers, their C entry points and the data-type callbacks (`commands`,
//!   `glue`, `types`), and the memory limits and the replication check that read the
//!   server's state (`memory`, `replication`, through `glue::server`) are the only code that
//!   touches the Redis module API; they are exercised by the integration tests, which start
//!   real `redis-server` processes.

// Unsafe code in three modules, none of it in a public API, each block with its
// `// SAFETY:` comment: the Redis module API's glue (`glue`: the commands' C entry points,
// replies, keys, replication, the server's flags, INFO and events, and the allocator that
// calls into Redis), the data-type callbacks (`types`), which Redis calls with raw
// pointers, and the C library's calls (`clib`: `rand()`, and the unit tests' `snprintf`
// and `strtod` reference, compiled without a server where the glue is not). Everything
// else, the command handlers, the memory limits and the replication policy included, is
// safe Rust.
#![deny(unsafe_code)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod bf;
pub mod cf;
// The C library's calls (see above): compiled in unit tests too, as their reference.
#[allow(unsafe_code)]
mod clib;
pub mod cms;
pub mod config;
pub mod murmur;
pub mod numbers;
pub mod rdb;
pub mod tdigest;
pub mod topk;

// The Redis side: a global allocator that calls into Redis, so it is compiled out of unit
// tests (which run without a server). The integration tests load the cdylib into a real
// redis-server instead.
#[cfg(not(test))]
mod commands;
#[cfg(not(test))]
// The Redis module API's glue: the commands' C entry points (arguments borrowed from
// Redis, not copied), the server's state and events, the allocator.
#[allow(unsafe_code)]
mod glue;
#[cfg(not(test))]
mod memory;
#[cfg(not(test))]
mod replication;
#[cfg(not(test))]
#[allow(unsafe_code)]
mod types;

#[cfg(not(test))]
mod module {
    use redis_module::raw::ModuleOptions;
    use redis_module::{redis_module, Context, RedisString, Status};

    use crate::commands::bf::*;
    use crate::commands::cf::*;
    use crate::commands::cms::*;
    use crate::commands::tdigest::*;
    use crate::commands::topk::*;
    use crate::config;
    use crate::memory;
    use crate::types::{BLOOM_TYPE, CMS_TYPE, CUCKOO_TYPE, TDIGEST_TYPE, TOPK_TYPE};

    fn init(ctx: &Context, args: &[RedisString]) -> Status {
        // No huge-page advice from the library, ever, in Redis: keys are reserved large and
        // filled a few items per command, their memory is Redis's allocator's (jemalloc
        // manages its own pages), and a BGSAVE forks, after which each write to a huge page
        // copies 2 MiB instead of 4 KiB. Before anything allocates a filter.
        bloomkit::arch::forbid_huge_pages();
        // A short read or a corrupt field in an RDB value sets Redis's I/O error flag,
        // which the load callbacks check, instead of aborting the server.
        ctx.set_module_options(ModuleOptions::HANDLE_IO_ERRORS);
        crate::glue::reply::detect_double_format();
        if !memory::start(ctx) {
            ctx.log_warning("bloomkit: could not subscribe to configuration changes and the cron");
            return Status::Err;
        }
        if !crate::replication::start(ctx) {
            ctx.log_warning("bloomkit: could not subscribe to the fork event");
            return Status::Err;
        }
        match config::parse(args.iter().map(RedisString::as_slice)) {
            Ok(c) => {
                config::set(c);
                memory::limits_changed();
            }
            Err(e) => {
                ctx.log_warning(&format!("bloomkit: {e}"));
                return Status::Err;
            }
        }
        match register(ctx) {
            Ok(()) => {
                // Fixed status replies from Redis's own bytes (see `glue::reply::Status`);
                // without them the same bytes go the longer way.
                let made = crate::commands::status::prepare(ctx);
                if made < crate::commands::status::ALL.len() {
                    ctx.log_notice(&format!(
                        "bloomkit: {made} of {} status replies prepared (EVAL unavailable?); \
                         the rest are sent through RedisModule_ReplyWithSimpleString",
                        crate::commands::status::ALL.len()
                    ));
                }
                let made = crate::commands::canned::prepare(ctx);
                if made < crate::commands::canned::ALL.len() {
                    ctx.log_notice(&format!(
                        "bloomkit: {made} of {} whole replies prepared (EVAL unavailable?); \
                         the rest are sent element by element",
                        crate::commands::canned::ALL.len()
                    ));
                }
                Status::Ok
            }
            Err(e) => {
                ctx.log_warning(&format!("bloomkit: {e}"));
                Status::Err
            }
        }
    }

    /// The commands, each with its own C entry point (see `glue`). Flags: every command
    /// takes one key at argument 1 (first = last = step = 1), so cluster routing works per
    /// key.
    fn register(ctx: &Context) -> Result<(), String> {
        crate::register_commands!(ctx,
            c"bf.reserve" => bf_reserve, c"write deny-oom";
            c"bf.add" => bf_add, c"write deny-oom";
            c"bf.madd" => bf_madd, c"write deny-oom";
            c"bf.insert" => bf_insert, c"write deny-oom";
            c"bf.exists" => bf_exists, c"readonly fast";
            c"bf.mexists" => bf_mexists, c"readonly fast";
            c"bf.card" => bf_card, c"readonly fast";
            c"bf.info" => bf_info, c"readonly fast";
            c"bf.debug" => bf_debug, c"readonly fast";
            c"bf.scandump" => bf_scandump, c"readonly";
            c"bf.loadchunk" => bf_loadchunk, c"write deny-oom";
            c"cf.reserve" => cf_reserve, c"write deny-oom";
            c"cf.add" => cf_add, c"write deny-oom";
            c"cf.addnx" => cf_addnx, c"write deny-oom";
            c"cf.insert" => cf_insert, c"write deny-oom";
            c"cf.insertnx" => cf_insertnx, c"write deny-oom";
            c"cf.exists" => cf_exists, c"readonly fast";
            c"cf.mexists" => cf_mexists, c"readonly fast";
            c"cf.count" => cf_count, c"readonly fast";
            c"cf.del" => cf_del, c"write fast";
            c"cf.compact" => cf_compact, c"write";
            c"cf.info" => cf_info, c"readonly fast";
            c"cf.debug" => cf_debug, c"readonly fast";
            c"cf.scandump" => cf_scandump, c"readonly";
            c"cf.loadchunk" => cf_loadchunk, c"write deny-oom";
            // CF.LOADCHUNK under a name RedisBloom lacks: the AOF rewrite of a filter with
            // RedisBloom 2.0's hashing starts with it, so that a server running RedisBloom
            // stops at that AOF ("Unknown command") instead of dropping the key, whose
            // header its CF.LOADCHUNK refuses, and answering 0 for its items.
            c"bloomkit.cf.loadchunk" => cf_loadchunk, c"write deny-oom";
        )?;
        crate::register_commands!(ctx,
            c"cms.initbydim" => cms_initbydim, c"write deny-oom";
            c"cms.initbyprob" => cms_initbyprob, c"write deny-oom";
            c"cms.incrby" => cms_incrby, c"write deny-oom";
            c"cms.query" => cms_query, c"readonly";
            c"cms.merge" => cms_merge, c"write deny-oom";
            c"cms.info" => cms_info, c"readonly";
            c"topk.reserve" => topk_reserve, c"write deny-oom";
            c"topk.add" => topk_add, c"write deny-oom";
            c"topk.incrby" => topk_incrby, c"write deny-oom";
            // What this module replicates for a TOPK.ADD or TOPK.INCRBY whose decay drew
            // from rand(): the same adds with the master's draws (commands::topk).
            c"bloomkit.topk.replay" => topk_replay, c"write deny-oom";
            c"topk.query" => topk_query, c"readonly";
            // RedisBloom 2.4 registers TOPK.COUNT as a write (refused on a read-only
            // replica); it writes nothing, and later RedisBloom releases made it readonly.
            c"topk.count" => topk_count, c"readonly";
            c"topk.list" => topk_list, c"readonly";
            c"topk.info" => topk_info, c"readonly";
        )?;
        // The t-digest commands, flagged as RedisBloom 2.4 flags them (its queries are
        // "readonly" although they compress the digest they read).
        crate::register_commands!(ctx,
            c"tdigest.create" => tdigest_create, c"write deny-oom";
            c"tdigest.add" => tdigest_add, c"write deny-oom";
            c"tdigest.reset" => tdigest_reset, c"write deny-oom";
            c"tdigest.merge" => tdigest_merge, c"write deny-oom";
            c"tdigest.min" => tdigest_min, c"readonly";
            c"tdigest.max" => tdigest_max, c"readonly";
            c"tdigest.quantile" => tdigest_quantile, c"readonly";
            c"tdigest.byrank" => tdigest_byrank, c"readonly";
            c"tdigest.byrevrank" => tdigest_byrevrank, c"readonly";
            c"tdigest.rank" => tdigest_rank, c"readonly";
            c"tdigest.revrank" => tdigest_revrank, c"readonly";
            c"tdigest.cdf" => tdigest_cdf, c"readonly";
            c"tdigest.trimmed_mean" => tdigest_trimmed_mean, c"readonly";
            c"tdigest.info" => tdigest_info, c"readonly";
        )
    }

    redis_module! {
        name: "bf",
        version: 20423,
        allocator: (crate::glue::alloc::Allocator, crate::glue::alloc::Allocator),
        data_types: [BLOOM_TYPE, CUCKOO_TYPE, CMS_TYPE, TOPK_TYPE, TDIGEST_TYPE],
        init: init,
    }
}
