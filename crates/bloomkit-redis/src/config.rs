//! Module arguments: `--loadmodule libbloomkit_redis.so [NAME value]…`.
//!
//! | name | meaning | default |
//! |---|---|---|
//! | `ERROR_RATE` | error rate of Bloom filters made by `BF.ADD`/`BF.INSERT` | 0.01 |
//! | `INITIAL_SIZE` | capacity of Bloom filters made by `BF.ADD`/`BF.INSERT` | 100 |
//! | `CF_MAX_EXPANSIONS` | the most sub-filters a cuckoo filter may have | 32 |
//! | `MAX_KEY_MEMORY` | the most bytes one filter may use (creation, growth, loading, COPY) | see below |
//! | `MAX_MEMORY` | the most bytes the whole server may hold once a filter's memory is allocated | see below |
//!
//! # Two memory limits
//!
//! Redis's allocator aborts the whole server when an allocation fails, and the kernel's
//! out-of-memory killer ends it when the machine runs out: either way every key is lost.
//! So every allocation of filter memory — `BF.RESERVE`, the filter `BF.ADD`/`BF.INSERT`
//! create, a Bloom layer added by scaling, `CF.RESERVE`, the filter `CF.ADD`/`CF.INSERT`
//! create, a cuckoo sub-filter added by growth, a `LOADCHUNK` header, a value loaded from
//! an RDB or a `RESTORE` payload, a `COPY` — is checked against two limits before the
//! memory is asked for; what passes either is refused with an error and nothing changes.
//!
//! **Per key.** The filter's whole size may not pass `MAX_KEY_MEMORY`, or by default
//! ([`auto_limit`]) Redis's `maxmemory` when it is set, else three quarters of the
//! machine's physical memory. A filter that large cannot be held by the server at all.
//!
//! **Server-wide ([`budget`], [`admit`]).** The per-key limit alone lets every request
//! through on its own, so a dozen legal `BF.RESERVE`s of a few GB each grow the server past
//! the machine. "Cannot fit" has to mean: cannot fit beside what the server already holds.
//! A request of `r` more bytes is admitted when `held + r ≤ budget`:
//!
//! * `held` is Redis's `used_memory` less `mem_not_counted_for_evict` (the replication and
//!   AOF buffers) — what Redis itself compares with `maxmemory`. It counts every key, not
//!   only filters, and it counts a filter's *requested* bytes in full from the start, not
//!   the pages written so far (RSS): Bloom layers and cuckoo filters are allocated zeroed
//!   (calloc) and their untouched pages cost the machine nothing until they fill, but then
//!   they will. (How
//!   `held` is kept current without generating `INFO` on every allocation: see the
//!   `memory` module.)
//! * `budget` is the smallest of the bounds that apply:
//!   - `maxmemory`, when it is set with `maxmemory-policy noeviction`: the server may not
//!     go past it, and nothing will be evicted to make room;
//!   - `MAX_MEMORY`, when given: a total for the server set by the operator;
//!   - with neither `maxmemory` nor `MAX_MEMORY`, three quarters of the physical memory
//!     (`total_system_memory`): the rest is left to the operating system, the process
//!     itself and the copy-on-write pages of a background save;
//!   - none when none applies: no server-wide check.
//! * With `maxmemory` set and a policy that evicts, `maxmemory` is no bound here: Redis
//!   evicts other keys before every command to bring `used_memory` back under `maxmemory`,
//!   so `used_memory` sits at `maxmemory` on a full cache and counting it would refuse
//!   every new filter, even one of 240 bytes. There a filter needs only fit in `maxmemory`
//!   (the per-key default), and the overshoot is at most that one request until the next
//!   command evicts, as for any command under eviction.
//! * The server-wide check is not made while the server loads (an RDB at start-up, an AOF,
//!   a full sync from a master, `DEBUG RELOAD`) nor on a replica: the values were held by
//!   the server that wrote them or are held by the master, refusing one fails the whole
//!   load (a server that ran would not start again, and a server emptied by `DEBUG RELOAD`
//!   would stay empty) or makes a replica differ from its master; and Redis too loads and
//!   replicates past `maxmemory`. What is loaded is counted, and commands after it see it.
//!   The per-key limit applies everywhere.

use std::sync::OnceLock;

/// The module's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    /// Default Bloom error rate.
    pub error_rate: f64,
    /// Default Bloom capacity.
    pub initial_size: u64,
    /// The most sub-filters of a cuckoo filter.
    pub cf_max_expansions: u64,
    /// The per-key memory limit in bytes set by `MAX_KEY_MEMORY`; `None`: [`auto_limit`].
    pub max_key_memory: Option<u64>,
    /// The server-wide total in bytes set by `MAX_MEMORY`; `None`: see [`budget`].
    pub max_memory: Option<u64>,
}

/// The defaults, as RedisBloom's; no fixed memory limits.
pub const DEFAULT: Config = Config {
    error_rate: 0.01,
    initial_size: 100,
    cf_max_expansions: 32,
    max_key_memory: None,
    max_memory: None,
};

/// The default per-key limit: what cannot fit is refused, nothing else.
///
/// * `maxmemory` set (non-zero): a key larger than `maxmemory` can never be held within it,
///   whatever else is evicted, so it is refused; anything smaller can fit once other keys
///   are evicted (and with `noeviction` the server-wide [`budget`] takes over).
/// * otherwise three quarters of the physical memory: the rest is left to the operating
///   system, Redis itself and the other keys; a larger filter could not be held alongside a
///   running server.
/// * neither known (`physical` 0): no limit, as RedisBloom.
pub fn auto_limit(maxmemory: u64, physical: u64) -> u64 {
    if maxmemory > 0 {
        maxmemory
    } else {
        share_of_physical(physical).unwrap_or(u64::MAX)
    }
}

/// Three quarters of the physical memory, if it is known.
fn share_of_physical(physical: u64) -> Option<u64> {
    (physical > 0).then_some(physical / 4 * 3)
}

/// What the server says about its memory (its `INFO memory` section).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Server {
    /// `maxmemory`; 0 when unset.
    pub maxmemory: u64,
    /// Whether `maxmemory-policy` evicts keys (anything but `noeviction`).
    pub evicts: bool,
    /// `total_system_memory`; 0 when unknown.
    pub physical: u64,
}

/// Where a server-wide budget comes from (named in the refusal).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// Redis's `maxmemory` (with `noeviction`).
    Maxmemory,
    /// The module argument `MAX_MEMORY`.
    MaxMemory,
    /// Three quarters of the machine's physical memory.
    Physical,
}

impl Bound {
    /// How a refusal names it.
    pub fn describe(self) -> &'static str {
        match self {
            Bound::Maxmemory => "maxmemory with maxmemory-policy noeviction",
            Bound::MaxMemory => "module argument MAX_MEMORY",
            Bound::Physical => {
                "three quarters of the machine's memory; module argument MAX_MEMORY sets another"
            }
        }
    }
}

/// The server-wide budget: the most bytes the server may hold once a filter's memory is
/// allocated, and where that number comes from; `None` when no bound applies. The
/// reasoning is in the module docs above: `maxmemory` counts only under `noeviction`,
/// `MAX_MEMORY` always, and three quarters of the physical memory only when neither
/// `maxmemory` nor `MAX_MEMORY` is set; the smallest of those that apply wins.
pub fn budget(max_memory: Option<u64>, server: &Server) -> Option<(u64, Bound)> {
    let maxmemory = (server.maxmemory > 0 && !server.evicts).then_some(server.maxmemory);
    let physical = if server.maxmemory == 0 && max_memory.is_none() {
        share_of_physical(server.physical)
    } else {
        None
    };
    [
        maxmemory.map(|b| (b, Bound::Maxmemory)),
        max_memory.map(|b| (b, Bound::MaxMemory)),
        physical.map(|b| (b, Bound::Physical)),
    ]
    .into_iter()
    .flatten()
    .min_by_key(|&(bytes, _)| bytes)
}

/// The server-wide rule: `request` more bytes are admitted when the server, holding `held`
/// bytes, stays within the budget: `held + request ≤ budget`.
pub fn admit(request: u64, held: u64, budget: Option<(u64, Bound)>) -> Result<(), Refusal> {
    match budget {
        Some((limit, bound)) if held.saturating_add(request) > limit => Err(Refusal::Server {
            request,
            held,
            budget: limit,
            bound,
        }),
        _ => Ok(()),
    }
}

/// Why an allocation of filter memory was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The filter would use `needed` bytes in all, more than the per-key `limit`.
    PerKey {
        /// Bytes the whole filter would use.
        needed: u64,
        /// The per-key limit.
        limit: u64,
    },
    /// The server holds `held` bytes and may hold `budget`: `request` more do not fit.
    Server {
        /// Bytes the allocation asks for.
        request: u64,
        /// Bytes the server holds.
        held: u64,
        /// The most bytes it may hold.
        budget: u64,
        /// Where `budget` comes from.
        bound: Bound,
    },
}

/// The memory limits a filter allocation is checked against, asked only when an allocation
/// is about to happen (the commands pass one that reads the server's state; unit tests pass
/// a number, which is a per-key limit alone).
pub trait Limit {
    /// Whether a filter that holds `held` bytes (0: one not stored yet) may grow to
    /// `needed` bytes in all: the whole size against the per-key limit, the difference
    /// against the server's budget.
    fn check(&self, held: u64, needed: u64) -> Result<(), Refusal>;

    /// A stored filter grew by `bytes`, after [`check`](Self::check) admitted it (the
    /// server-wide count follows).
    fn grew(&self, _bytes: u64) {}
}

impl Limit for u64 {
    fn check(&self, _held: u64, needed: u64) -> Result<(), Refusal> {
        if needed > *self {
            Err(Refusal::PerKey {
                needed,
                limit: *self,
            })
        } else {
            Ok(())
        }
    }
}

impl<L: Limit + ?Sized> Limit for &L {
    fn check(&self, held: u64, needed: u64) -> Result<(), Refusal> {
        (**self).check(held, needed)
    }
    fn grew(&self, bytes: u64) {
        (**self).grew(bytes)
    }
}

/// Set once, when the module loads, and read by every command: a `OnceLock` read is one
/// atomic load, where a lock would cost a compare-and-swap and a release per command.
static CONFIG: OnceLock<Config> = OnceLock::new();

/// The settings in force (the defaults until the module has loaded).
pub fn get() -> Config {
    *current()
}

/// The configuration in force, borrowed (no copy of the whole struct for one field).
pub fn current() -> &'static Config {
    CONFIG.get().unwrap_or(&DEFAULT)
}

/// Parses `NAME value` pairs (names case-insensitive) over the defaults.
pub fn parse<'a>(args: impl IntoIterator<Item = &'a [u8]>) -> Result<Config, String> {
    let mut config = DEFAULT;
    let mut args = args.into_iter();
    while let Some(name) = args.next() {
        let name = String::from_utf8_lossy(name).to_ascii_uppercase();
        let value = args
            .next()
            .ok_or_else(|| format!("module argument {name} needs a value"))?;
        let text = std::str::from_utf8(value)
            .map_err(|_| format!("module argument {name}: the value is not text"))?;
        let bad = |what: &str| format!("module argument {name}: {text:?} is not {what}");
        match name.as_str() {
            "ERROR_RATE" => {
                config.error_rate = text
                    .parse::<f64>()
                    .ok()
                    .filter(|e| *e > 0.0 && *e < 1.0)
                    .ok_or_else(|| bad("a number strictly between 0 and 1"))?
            }
            "INITIAL_SIZE" => {
                config.initial_size = text
                    .parse::<u64>()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| bad("a positive integer"))?
            }
            "CF_MAX_EXPANSIONS" => {
                config.cf_max_expansions = text
                    .parse::<u64>()
                    .ok()
                    .filter(|n| (1..=65535).contains(n))
                    .ok_or_else(|| bad("an integer from 1 to 65535"))?
            }
            "MAX_KEY_MEMORY" => {
                config.max_key_memory = Some(
                    text.parse::<u64>()
                        .ok()
                        .filter(|n| *n >= 1024)
                        .ok_or_else(|| bad("a number of bytes, at least 1024"))?,
                )
            }
            "MAX_MEMORY" => {
                config.max_memory = Some(
                    text.parse::<u64>()
                        .ok()
                        .filter(|n| *n >= 1 << 20)
                        .ok_or_else(|| bad("a number of bytes, at least 1048576"))?,
                )
            }
            _ => {
                return Err(format!(
                    "unknown module argument {name} (known: ERROR_RATE, INITIAL_SIZE, \
                     CF_MAX_EXPANSIONS, MAX_KEY_MEMORY, MAX_MEMORY)"
                ))
            }
        }
    }
    Ok(config)
}

/// Sets the settings, at module load. Redis loads a module once per process, so there is
/// no second call; one would leave the first settings in force.
pub fn set(config: Config) {
    let _ = CONFIG.set(config);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_override_defaults_and_bad_ones_are_refused() {
        let c = parse([&b"error_rate"[..], b"0.001", b"MAX_KEY_MEMORY", b"4096"]).unwrap();
        assert_eq!(c.error_rate, 0.001);
        assert_eq!(c.max_key_memory, Some(4096));
        assert_eq!(DEFAULT.max_key_memory, None);
        assert_eq!(c.initial_size, 100);
        assert!(parse([&b"ERROR_RATE"[..], b"2"]).is_err());
        assert!(parse([&b"ERROR_RATE"[..]]).is_err());
        assert!(parse([&b"NOPE"[..], b"1"]).is_err());
        assert!(parse([&b"INITIAL_SIZE"[..], b"0"]).is_err());
        assert!(parse([&b"MAX_KEY_MEMORY"[..], b"1023"]).is_err());
        let c = parse([&b"max_memory"[..], b"268435456"]).unwrap();
        assert_eq!(c.max_memory, Some(256 << 20));
        assert_eq!(DEFAULT.max_memory, None);
        assert!(parse([&b"MAX_MEMORY"[..], b"1048575"]).is_err());
        assert!(parse([&b"MAX_MEMORY"[..], b"-1"]).is_err());
    }

    #[test]
    fn the_default_limit_is_maxmemory_else_three_quarters_of_physical_memory() {
        assert_eq!(auto_limit(1 << 30, 24 << 30), 1 << 30);
        assert_eq!(auto_limit(0, 24 << 30), 18 << 30);
        assert_eq!(auto_limit(0, 0), u64::MAX);
        // What RedisBloom's own tests allocate fits on a 24 GiB machine by default.
        assert!(auto_limit(0, 24 << 30) > 4 << 30);
    }

    const GIB: u64 = 1 << 30;

    fn server(maxmemory: u64, evicts: bool, physical: u64) -> Server {
        Server {
            maxmemory,
            evicts,
            physical,
        }
    }

    #[test]
    fn the_budget_is_maxmemory_under_noeviction_else_max_memory_else_a_share_of_the_machine() {
        // maxmemory with noeviction: nothing will make room.
        let noeviction = server(GIB, false, 24 * GIB);
        assert_eq!(budget(None, &noeviction), Some((GIB, Bound::Maxmemory)));
        // MAX_MEMORY and maxmemory together: the smaller.
        assert_eq!(
            budget(Some(GIB / 2), &noeviction),
            Some((GIB / 2, Bound::MaxMemory))
        );
        assert_eq!(
            budget(Some(2 * GIB), &noeviction),
            Some((GIB, Bound::Maxmemory))
        );
        // Neither: three quarters of the machine.
        assert_eq!(
            budget(None, &server(0, false, 24 * GIB)),
            Some((18 * GIB, Bound::Physical))
        );
        // MAX_MEMORY replaces the share, also when it is larger.
        assert_eq!(
            budget(Some(20 * GIB), &server(0, false, 24 * GIB)),
            Some((20 * GIB, Bound::MaxMemory))
        );
        // An evicting policy makes room: maxmemory is no server-wide bound, and neither is
        // the machine's share (maxmemory is the operator's word on memory).
        assert_eq!(budget(None, &server(GIB, true, 24 * GIB)), None);
        assert_eq!(
            budget(Some(GIB / 2), &server(GIB, true, 24 * GIB)),
            Some((GIB / 2, Bound::MaxMemory))
        );
        // Nothing known, nothing set: no bound, as RedisBloom.
        assert_eq!(budget(None, &server(0, false, 0)), None);
    }

    #[test]
    fn a_request_is_admitted_when_it_fits_beside_what_the_server_holds() {
        let b = Some((1000, Bound::Maxmemory));
        assert_eq!(admit(400, 600, b), Ok(()));
        assert_eq!(
            admit(401, 600, b),
            Err(Refusal::Server {
                request: 401,
                held: 600,
                budget: 1000,
                bound: Bound::Maxmemory
            })
        );
        // Already over (another command took it there): nothing more, however small.
        assert!(admit(1, 1001, b).is_err());
        assert_eq!(admit(0, 1000, b), Ok(()));
        assert!(admit(u64::MAX, u64::MAX, b).is_err(), "no overflow");
        assert_eq!(admit(u64::MAX, u64::MAX, None), Ok(()));
        // The case: a dozen reserves of 2.96 GB each (BF.RESERVE k 0.01
        // 2147483648), every one under the per-key default of 18 GiB on a 24 GiB machine,
        // now stop at the share of the machine instead of reaching the OOM killer.
        let machine = budget(None, &server(0, false, 24 * GIB));
        let request = 2_960_240_120u64;
        let mut held = 5 << 20;
        let mut admitted = 0;
        for _ in 0..12 {
            if admit(request, held, machine).is_ok() {
                held += request;
                admitted += 1;
            }
        }
        assert!(request < auto_limit(0, 24 * GIB));
        assert_eq!(admitted, 6);
        assert!(held <= 18 * GIB);
    }

    #[test]
    fn a_number_is_a_per_key_limit_alone() {
        assert_eq!(4096u64.check(0, 4096), Ok(()));
        assert_eq!(
            4096u64.check(4000, 4097),
            Err(Refusal::PerKey {
                needed: 4097,
                limit: 4096
            })
        );
    }
}
