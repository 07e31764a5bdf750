//! Command handlers: argument parsing, key access, replies and replication.

pub mod bf;
pub mod cf;

use redis_module::{RedisError, RedisString};

/// An error reply with exactly this text (RedisBloom sends some without the `ERR` prefix).
pub fn error(text: &str) -> RedisError {
    RedisError::String(text.to_string())
}

/// Maps redis-module's "Existing key has wrong Redis type" to Redis's own WRONGTYPE reply.
pub fn wrong_type(_: RedisError) -> RedisError {
    RedisError::WrongType
}

/// Whether an argument equals a keyword, ignoring ASCII case.
pub fn is(arg: &RedisString, keyword: &str) -> bool {
    arg.as_slice().eq_ignore_ascii_case(keyword.as_bytes())
}

/// An integer argument (Redis's own parsing), or `None`.
pub fn integer(arg: &RedisString) -> Option<i64> {
    arg.parse_integer().ok()
}

/// A floating-point argument (Redis's own parsing: no NaN), or `None`.
pub fn float(arg: &RedisString) -> Option<f64> {
    arg.parse_float().ok().filter(|f| !f.is_nan())
}
