//! The Redis side of memory: the limits in force ([`ServerLimit`], the rule is in
//! [`config`]) and the count of the bytes filters hold ([`stored`], [`freed`]). Safe
//! policy only: the server's flags, its `INFO memory` and its events come through
//! `glue::server`, and the global allocator that makes filters count in Redis's
//! `used_memory` is `glue::alloc::Allocator`.
//!
//! # What the server holds, kept current cheaply
//!
//! The server-wide rule needs Redis's `used_memory` at every allocation of filter memory.
//! The module API gives it only through `RedisModule_GetServerInfo(NULL, "memory")`
//! (`RedisModule_GetUsedMemoryRatio` is 0 without `maxmemory`, and `CONFIG GET`/`INFO`
//! through `RedisModule_Call` need a client), which generates and parses the whole
//! `INFO memory` text. So the module reads it every [`REFRESH_MS`], from Redis's cron
//! (the `REDISMODULE_EVENT_CRON_LOOP` server event, between commands, so that no
//! command's temporary buffers — a RESTORE payload being decoded, say — are taken for
//! memory held), and between two reads follows its own allocations exactly:
//!
//! * [`STORED`] is the sum of the [`Footprint`]s of every filter value Redis holds (its
//!   `memory_bytes`, `BF.INFO` "Size"; a cuckoo filter's also counts its in-memory
//!   bookkeeping beyond `CF.INFO` "Size"): added when a value is handed to Redis (a command storing it, an RDB
//!   or RESTORE load, COPY), when a stored filter grows ([`Limit::grew`]), taken off when a
//!   cuckoo compaction drops sub-filters and when Redis frees a value (`DEL`, overwrite,
//!   `FLUSHALL`, also from the lazy-free thread, hence atomics).
//! * At each read, `OTHER` = `used_memory` − `mem_not_counted_for_evict` − [`STORED`]:
//!   everything else the server holds (other keys, clients' buffers, the allocator's
//!   rounding of the filters' blocks). Between reads, what the server holds is
//!   `OTHER + STORED`: a burst of `BF.RESERVE`s is counted one by one, a `DEL` frees room at
//!   once, and any drift of the count is corrected at the next read.
//!
//! What a burst between two reads does not see: other keys written meanwhile, and the
//! allocator's rounding of the new filters' blocks to its size classes (jemalloc spaces
//! large classes a quarter of a power of two apart, so up to 25 % more: a 2.96 GB layer
//! takes 3.22 GB). Both are in the next read, at most 100 ms later; within one, the
//! budget's margin (the quarter of the machine left out, or Redis refusing writes once past
//! `maxmemory`) absorbs them.
//!
//! Cost: commands that allocate nothing (`BF.ADD` to a filter with room, every query)
//! never look at any of this. An allocation's check reads a few atomics and
//! `RedisModule_GetContextFlags(NULL)` (a handful of loads in Redis): 30–45 ns in all,
//! measured in a loop of 20 000 inside a release build loaded into Redis 7.0.15. The
//! `INFO memory` read costs 19–23 µs there, so it is made ten times a second (0.02 % of a
//! core) instead of once per allocation, where it would make a `BF.ADD` that creates its
//! key (a few µs) several times slower. While the server loads, the cron does not run and
//! the read waits; the server-wide rule does not apply then anyway.
//!
//! `maxmemory`, its policy and the physical memory come from the same read, also made
//! when the module loads and after every `CONFIG SET` (the `REDISMODULE_EVENT_CONFIG`
//! server event), so a new `maxmemory` is in force at once.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

use redis_module::key::RedisKeyWritable;
use redis_module::native_types::RedisType;
use redis_module::{raw, Context, RedisError};

use crate::bf::Chain;
use crate::cf::Cuckoo;
use crate::cms::Sketch;
use crate::config::{self, Limit, Refusal};
use crate::glue;
use crate::glue::server::{Event, ServerInfo};
use crate::tdigest::TDigest;
use crate::topk::Topk;

/// The per-key default ([`config::auto_limit`]) as the last read computed it.
static AUTO_LIMIT: AtomicU64 = AtomicU64::new(u64::MAX);
/// `maxmemory`, whether its policy evicts, and the physical memory, as last read.
static MAXMEMORY: AtomicU64 = AtomicU64::new(0);
static EVICTS: AtomicBool = AtomicBool::new(false);
static PHYSICAL: AtomicU64 = AtomicU64::new(0);
/// Bytes of the filter values Redis holds.
static STORED: AtomicU64 = AtomicU64::new(0);
/// What else the server held at the last read.
static OTHER: AtomicU64 = AtomicU64::new(0);
/// When the last read was, in milliseconds since [`epoch`].
static READ_AT: AtomicU64 = AtomicU64::new(0);
/// The per-key limit and the server-wide budget in force (`u64::MAX`: none), computed
/// whenever what they are made of changes ([`limits_changed`]: at each read and once the
/// module's arguments are set), so that a check that admits reads four atomics and compares
/// twice, where computing the rule afresh cost ~60 instructions of every `TOPK.ADD`.
static KEY_LIMIT: AtomicU64 = AtomicU64::new(u64::MAX);
static BUDGET: AtomicU64 = AtomicU64::new(u64::MAX);

/// How often `INFO memory` is read (Redis's cron runs `hz` times a second, 10 by default;
/// a faster `hz` does not make the read more frequent).
pub const REFRESH_MS: u64 = 100;

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn now_ms() -> u64 {
    epoch().elapsed().as_millis() as u64
}

/// Reads `INFO memory` and recomputes the limits and what the server holds besides
/// filters. Works in any context (no client needed), on Redis's main thread.
pub fn refresh() {
    let Some(info) = ServerInfo::read(c"memory") else {
        return;
    };
    let read = |name| info.unsigned(name).unwrap_or(0);
    let used = read(c"used_memory").saturating_sub(read(c"mem_not_counted_for_evict"));
    let maxmemory = read(c"maxmemory");
    let physical = read(c"total_system_memory");
    let evicts = info
        .text(c"maxmemory_policy")
        .is_some_and(|policy| policy != c"noeviction");
    drop(info);
    MAXMEMORY.store(maxmemory, Ordering::Relaxed);
    EVICTS.store(evicts, Ordering::Relaxed);
    PHYSICAL.store(physical, Ordering::Relaxed);
    AUTO_LIMIT.store(config::auto_limit(maxmemory, physical), Ordering::Relaxed);
    OTHER.store(
        used.saturating_sub(STORED.load(Ordering::Relaxed)),
        Ordering::Relaxed,
    );
    READ_AT.store(now_ms(), Ordering::Relaxed);
    limits_changed();
}

/// Recomputes [`KEY_LIMIT`] and [`BUDGET`] from the configuration and the last read.
/// Called by [`refresh`] and after the module's arguments are set.
pub fn limits_changed() {
    KEY_LIMIT.store(key_limit(), Ordering::Relaxed);
    let budget = config::budget(config::current().max_memory, &server());
    BUDGET.store(
        budget.map_or(u64::MAX, |(bytes, _)| bytes),
        Ordering::Relaxed,
    );
}

/// The server's memory settings as last read.
fn server() -> config::Server {
    config::Server {
        maxmemory: MAXMEMORY.load(Ordering::Relaxed),
        evicts: EVICTS.load(Ordering::Relaxed),
        physical: PHYSICAL.load(Ordering::Relaxed),
    }
}

/// The config-change server event: `maxmemory` or its policy may have changed.
fn on_config_change() {
    refresh();
    // `appendonly` may have been turned on.
    crate::replication::refresh();
}

/// The cron server event: reads `INFO memory` when the last read is about [`REFRESH_MS`]
/// old (a tenth early, so that at the default `hz` of 10, whose ticks come every 100 ms
/// give or take a millisecond, every tick reads rather than every other).
fn on_cron() {
    if now_ms().saturating_sub(READ_AT.load(Ordering::Relaxed)) >= REFRESH_MS / 10 * 9 {
        refresh();
        crate::replication::refresh();
    }
}

/// Reads the server's memory state and keeps it current. False if Redis refused a
/// subscription.
pub fn start(ctx: &Context) -> bool {
    refresh();
    glue::server::subscribe(ctx, Event::ConfigChange, on_config_change)
        && glue::server::subscribe(ctx, Event::Cron, on_cron)
}

/// The per-key limit in force: `MAX_KEY_MEMORY` when given, else the default.
fn key_limit() -> u64 {
    config::current()
        .max_key_memory
        .unwrap_or_else(|| AUTO_LIMIT.load(Ordering::Relaxed))
}

/// Whether the server-wide rule applies now: not while the server loads (RDB, AOF, a full
/// sync) and not on a replica — see the config module for why.
fn server_rule_applies() -> bool {
    let Some(flags) = glue::server::context_flags() else {
        return true;
    };
    let exempt = raw::REDISMODULE_CTX_FLAGS_LOADING
        | raw::REDISMODULE_CTX_FLAGS_ASYNC_LOADING
        | raw::REDISMODULE_CTX_FLAGS_SLAVE;
    flags & exempt == 0
}

/// What the server holds now: its other memory at the last read of `INFO memory` plus
/// the filters as counted since.
fn held() -> u64 {
    OTHER
        .load(Ordering::Relaxed)
        .saturating_add(STORED.load(Ordering::Relaxed))
}

/// The limits in force for an allocation of filter memory: the per-key limit, then the
/// server-wide rule ([`config::budget`], [`config::admit`]) for the bytes the allocation
/// adds. Reads nothing until it is asked.
#[derive(Clone, Copy, Debug, Default)]
pub struct ServerLimit;

impl Limit for ServerLimit {
    #[inline]
    fn check(&self, held: u64, needed: u64) -> Result<(), Refusal> {
        // What both rules admit, from the limits as last computed: the per-key limit
        // (`needed ≤ limit`) and the server's budget (`held + request ≤ budget`, as
        // `config::admit` has it). Anything else takes the full rule, which says why.
        let request = needed.saturating_sub(held);
        if needed <= KEY_LIMIT.load(Ordering::Relaxed)
            && self::held().saturating_add(request) <= BUDGET.load(Ordering::Relaxed)
        {
            return Ok(());
        }
        full_rule(held, needed)
    }

    fn grew(&self, bytes: u64) {
        stored(bytes);
    }
}

/// [`ServerLimit::check`]'s full rule, for a request its fast test did not admit: the
/// refusal, or `Ok` where the server-wide rule does not apply.
#[inline(never)]
#[cold]
fn full_rule(held: u64, needed: u64) -> Result<(), Refusal> {
    key_limit().check(held, needed)?;
    let server_held = self::held();
    let budget = config::budget(config::current().max_memory, &server());
    // The server's flags (a call into Redis, ~100 instructions with its
    // `getMaxmemoryState`) are asked only for a request the rule would refuse: it
    // admits every request while the server loads or on a replica.
    match config::admit(needed.saturating_sub(held), server_held, budget) {
        Err(refusal) if server_rule_applies() => Err(refusal),
        _ => Ok(()),
    }
}

/// A value Redis holds `bytes` more of (a value handed to it, or one grown).
pub fn stored(bytes: u64) {
    STORED.fetch_add(bytes, Ordering::Relaxed);
}

/// A value Redis holds `bytes` less of (a value freed, or a cuckoo filter compacted).
/// Never below zero, whatever a caller gets wrong.
pub fn freed(bytes: u64) {
    let _ = STORED.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
        Some(v.saturating_sub(bytes))
    });
}

/// The bytes a filter value is counted for, in `MEMORY USAGE` and in the memory limits:
/// its `memory_bytes` (`BF.INFO` "Size"); for a cuckoo filter, `CF.INFO` "Size" (RedisBloom
/// 2.4's count) and the bookkeeping it keeps beside it
/// ([`RedisBloomCuckoo::footprint_bytes`](bloomkit::cuckoo::redisbloom::RedisBloomCuckoo::footprint_bytes)).
/// Every change of a stored value's footprint is counted ([`resized`], [`Limit::grew`]).
pub trait Footprint {
    /// The bytes.
    fn footprint(&self) -> u64;
}

impl Footprint for Chain {
    fn footprint(&self) -> u64 {
        self.memory_bytes()
    }
}

impl Footprint for Cuckoo {
    fn footprint(&self) -> u64 {
        self.footprint_bytes()
    }
}

impl Footprint for Sketch {
    fn footprint(&self) -> u64 {
        self.memory_bytes()
    }
}

impl Footprint for TDigest {
    fn footprint(&self) -> u64 {
        self.memory_bytes()
    }
}

impl Footprint for Topk {
    fn footprint(&self) -> u64 {
        self.memory_bytes()
    }
}

/// A stored value that went from `before` to `after` bytes: the count follows.
pub fn resized(before: u64, after: u64) {
    if after == before {
        // Most adds change nothing: no atomic update.
    } else if after > before {
        stored(after - before);
    } else {
        freed(before - after);
    }
}

/// Stores a new filter at an empty key and counts it.
pub fn store<T: Footprint>(
    key: &RedisKeyWritable,
    redis_type: &RedisType,
    value: T,
) -> Result<(), RedisError> {
    let bytes = value.footprint();
    key.set_value(redis_type, value)?;
    stored(bytes);
    Ok(())
}
