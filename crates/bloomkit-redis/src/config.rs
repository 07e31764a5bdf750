//! Module arguments: `--loadmodule libbloomkit_redis.so [NAME value]…`.
//!
//! | name | meaning | default |
//! |---|---|---|
//! | `ERROR_RATE` | error rate of Bloom filters made by `BF.ADD`/`BF.INSERT` | 0.01 |
//! | `INITIAL_SIZE` | capacity of Bloom filters made by `BF.ADD`/`BF.INSERT` | 100 |
//! | `CF_MAX_EXPANSIONS` | the most sub-filters a cuckoo filter may have | 32 |
//! | `MAX_KEY_MEMORY` | the most bytes one filter may use (creation, growth, loading, COPY) | see below |
//!
//! # The per-key memory limit
//!
//! Redis's allocator aborts the whole server when an allocation fails, so the limit is the
//! only guard against a filter that cannot fit: every allocation of filter memory (creation,
//! growth, a LOADCHUNK header, an RDB load, COPY) is checked against it first. Without
//! `MAX_KEY_MEMORY` the limit refuses only what cannot fit ([`auto_limit`]): Redis's
//! `maxmemory` when it is set, else three quarters of the machine's physical memory. The
//! module argument replaces that default with a fixed number of bytes.

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
}

/// The defaults, as RedisBloom's; no fixed memory limit.
pub const DEFAULT: Config = Config {
    error_rate: 0.01,
    initial_size: 100,
    cf_max_expansions: 32,
    max_key_memory: None,
};

/// The default per-key limit: what cannot fit is refused, nothing else.
///
/// * `maxmemory` set (non-zero): a key larger than `maxmemory` can never be held within it,
///   whatever else is evicted, so it is refused; anything smaller can fit once other keys
///   are evicted (and with `noeviction` Redis's own out-of-memory refusal takes over).
/// * otherwise three quarters of the physical memory: the rest is left to the operating
///   system, Redis itself and the other keys; a larger filter could not be held alongside a
///   running server.
/// * neither known (`physical` 0): no limit, as RedisBloom.
pub fn auto_limit(maxmemory: u64, physical: u64) -> u64 {
    if maxmemory > 0 {
        maxmemory
    } else if physical > 0 {
        physical / 4 * 3
    } else {
        u64::MAX
    }
}

/// A memory limit in bytes, asked for only when an allocation is about to happen (the
/// commands pass one that reads the server's state; unit tests pass a number).
pub trait Limit {
    /// The most bytes the filter may use.
    fn bytes(&self) -> u64;
}

impl Limit for u64 {
    fn bytes(&self) -> u64 {
        *self
    }
}

impl<L: Limit + ?Sized> Limit for &L {
    fn bytes(&self) -> u64 {
        (**self).bytes()
    }
}

/// Set once, when the module loads, and read by every command: a `OnceLock` read is one
/// atomic load, where a lock would cost a compare-and-swap and a release per command.
static CONFIG: OnceLock<Config> = OnceLock::new();

/// The settings in force (the defaults until the module has loaded).
pub fn get() -> Config {
    *CONFIG.get().unwrap_or(&DEFAULT)
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
            _ => {
                return Err(format!(
                    "unknown module argument {name} (known: ERROR_RATE, INITIAL_SIZE, \
                     CF_MAX_EXPANSIONS, MAX_KEY_MEMORY)"
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
    }

    #[test]
    fn the_default_limit_is_maxmemory_else_three_quarters_of_physical_memory() {
        assert_eq!(auto_limit(1 << 30, 24 << 30), 1 << 30);
        assert_eq!(auto_limit(0, 24 << 30), 18 << 30);
        assert_eq!(auto_limit(0, 0), u64::MAX);
        // What RedisBloom's own tests allocate fits on a 24 GiB machine by default.
        assert!(auto_limit(0, 24 << 30) > 4 << 30);
    }
}
