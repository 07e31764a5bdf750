//! `TDIGEST.*`: RedisBloom 2.4's t-digest commands, read and answered as it does.
//!
//! Every command checks its arity, then its key (a missing key: "ERR T-Digest: key does
//! not exist"; another type: `WRONGTYPE`), then its arguments left to right, and stops at
//! the first error. Doubles are answered with `RedisModule_ReplyWithDouble` (RESP2: bulk
//! strings of `%.17g`, `inf`, `-inf`, `nan`), as RedisBloom answers them.
//!
//! The queries compress the digest they read, as RedisBloom's do, on a key opened for
//! reading ([`glue::with_read_value`]).

use redis_module::{Context, RedisError, RedisResult, RedisString, RedisValue};

use super::{
    arg_index, error, float, integer, replied, status, with_parsed, wrong_type, Arg, Reply,
};
use crate::glue;
use crate::memory::{self, ServerLimit};
use crate::tdigest::{
    c_ll, half_round_down, CreateError, TDigest, DEFAULT_COMPRESSION, MAX_COMPRESSION,
};
use crate::types::TDIGEST_TYPE;

const MISSING: &str = "ERR T-Digest: key does not exist";
const OVERFLOW: &str = "ERR T-Digest: overflow detected";

/// Runs `f` on the digest at `name`, opened for reading (see the module docs).
#[inline(always)]
fn read(
    ctx: &Context,
    name: &RedisString,
    f: impl FnOnce(&mut TDigest) -> RedisResult,
) -> RedisResult {
    let mut key = glue::Key::open(ctx, name, false);
    match key.value::<TDigest>(&TDIGEST_TYPE) {
        Ok(Some(td)) => f(td),
        Ok(None) => Err(error(MISSING)),
        Err(_) => Err(RedisError::WrongType),
    }
}

/// The compression of the digest at `name`: `Ok(None)` when the key is missing.
fn compression_of(ctx: &Context, name: &RedisString) -> Result<Option<i64>, RedisError> {
    glue::with_read_value(ctx, name, &TDIGEST_TYPE, |td: Option<&mut TDigest>| {
        td.map(|td| td.compression())
    })
    .map_err(|_| RedisError::WrongType)
}

/// A `COMPRESSION` value: a positive 64-bit integer.
fn parse_compression(arg: &RedisString) -> Result<i64, RedisError> {
    let c =
        integer(arg).ok_or_else(|| error("ERR T-Digest: error parsing compression parameter"))?;
    if c <= 0 {
        return Err(error(
            "ERR T-Digest: compression parameter needs to be a positive integer",
        ));
    }
    Ok(c)
}

/// A digest that cannot be made; `unallocatable` is RedisBloom's text for a compression
/// its capacity computation refuses.
fn create_error(e: CreateError, unallocatable: &str) -> RedisError {
    match e {
        CreateError::Unallocatable => error(unallocatable),
        CreateError::CompressionTooLarge => error(&format!(
            "ERR T-Digest: compression parameter needs to be at most {MAX_COMPRESSION}"
        )),
        CreateError::TooLarge(refusal) => {
            super::too_large(refusal, "ask for a smaller compression")
        }
    }
}

/// `TDIGEST.CREATE key [COMPRESSION c]`: the key is checked first; with four arguments,
/// `COMPRESSION` may be either of the last two, the value is the last one.
pub fn tdigest_create(ctx: &Context, args: &[Arg]) -> RedisResult {
    if args.len() != 2 && args.len() != 4 {
        return Err(RedisError::WrongArity);
    }
    let key = ctx.open_key_writable(&args[1]);
    if key
        .get_value::<TDigest>(&TDIGEST_TYPE)
        .map_err(wrong_type)?
        .is_some()
    {
        return Err(error("ERR T-Digest: key already exists"));
    }
    let mut compression = DEFAULT_COMPRESSION;
    if args.len() == 4 {
        if arg_index(&args[2..], "COMPRESSION").is_none() {
            return Err(error("ERR T-Digest: wrong keyword"));
        }
        compression = parse_compression(&args[3])?;
    }
    let td = TDigest::new(compression, ServerLimit)
        .map_err(|e| create_error(e, "ERR T-Digest: allocation failed"))?;
    memory::store(&key, &TDIGEST_TYPE, td)?;
    glue::replicate_verbatim(ctx);
    Ok(RedisValue::SimpleStringStatic("OK"))
}

/// Runs `f` on the digest at `name`, opened for writing.
fn write(
    ctx: &Context,
    name: &RedisString,
    f: impl FnOnce(&mut TDigest) -> RedisResult,
) -> RedisResult {
    let mut key = glue::Key::open(ctx, name, true);
    let td = key
        .value::<TDigest>(&TDIGEST_TYPE)
        .map_err(|_| RedisError::WrongType)?
        .ok_or_else(|| error(MISSING))?;
    f(td)
}

/// `TDIGEST.RESET key`
pub fn tdigest_reset(ctx: &Context, args: &[Arg]) -> RedisResult {
    if args.len() != 2 {
        return Err(RedisError::WrongArity);
    }
    write(ctx, &args[1], |td| {
        td.reset();
        glue::replicate_verbatim(ctx);
        Ok(RedisValue::SimpleStringStatic("OK"))
    })
}

/// `TDIGEST.ADD key value…`: every value is checked (a number, not NaN, finite) before
/// any is added, each of weight 1. An overflow stops the adds there ("overflow detected");
/// the values added before it stay, and the command is replicated when any was added
/// (RedisBloom does not replicate it then, and its replicas miss those values).
pub fn tdigest_add(ctx: &Context, args: &[Arg]) -> RedisResult {
    if args.len() < 3 {
        return Err(RedisError::WrongArity);
    }
    write(ctx, &args[1], |td| {
        let parse = |a: &RedisString| {
            let v = float(a).ok_or_else(|| error("ERR T-Digest: error parsing val parameter"))?;
            if !(-f64::MAX..=f64::MAX).contains(&v) {
                return Err(error(
                    "ERR T-Digest: val parameter needs to be a finite number",
                ));
            }
            Ok(v)
        };
        with_parsed(&args[2..], parse, |values| {
            for (i, &v) in values.iter().enumerate() {
                if td.add(v, 1).is_err() {
                    if i > 0 {
                        glue::replicate_verbatim(ctx);
                    }
                    return Err(error(OVERFLOW));
                }
            }
            glue::replicate_verbatim(ctx);
            Reply::new(ctx).status(&status::OK);
            replied()
        })
    })
}

/// `TDIGEST.MERGE destination numkeys source… [COMPRESSION c] [OVERRIDE]`, in RedisBloom
/// 2.4's order: the destination's type; `numkeys` (an integer, positive, at most the
/// arguments left); the options after the sources, each found anywhere there
/// (`COMPRESSION` needs a value after it; neither found: "wrong keyword"); the sources,
/// each a digest. The new digest's compression: `COMPRESSION`, else the destination's
/// when it exists and `OVERRIDE` is absent, else the largest of the sources'. It takes the
/// destination's centroids (unless `OVERRIDE`), then each source's in order; merging
/// compresses each source in place, as RedisBloom does.
pub fn tdigest_merge(ctx: &Context, args: &[Arg]) -> RedisResult {
    if args.len() < 4 {
        return Err(RedisError::WrongArity);
    }
    let dest = &args[1];
    let dest_compression = compression_of(ctx, dest)?;
    let numkeys = integer(&args[2]).ok_or_else(|| error("ERR T-Digest: error parsing numkeys"))?;
    if numkeys <= 0 {
        return Err(error(
            "ERR T-Digest: numkeys needs to be a positive integer",
        ));
    }
    if numkeys > args.len() as i64 - 3 {
        return Err(RedisError::WrongArity);
    }
    let mut compression = dest_compression.unwrap_or(0);
    let mut use_max = dest_compression.is_none();
    let mut replace = false;
    let rest = numkeys as usize + 3;
    if rest < args.len() {
        let compression_at = arg_index(&args[rest..], "COMPRESSION");
        if let Some(at) = compression_at {
            use_max = false;
            let value = args.get(rest + at + 1).ok_or(RedisError::WrongArity)?;
            compression = parse_compression(value)?;
        }
        let override_at = arg_index(&args[rest..], "OVERRIDE");
        if override_at.is_some() {
            replace = true;
            if compression_at.is_none() {
                use_max = true;
                compression = 0;
            }
        }
        if compression_at.is_none() && override_at.is_none() {
            return Err(error("ERR T-Digest: wrong keyword"));
        }
    }
    let sources = &args[3..rest];
    for source in sources {
        let c = compression_of(ctx, source)?.ok_or_else(|| error(MISSING))?;
        if use_max && c > compression {
            compression = c;
        }
    }
    let mut to = TDigest::new(compression, ServerLimit)
        .map_err(|e| create_error(e, "ERR T-Digest: allocation of destination digest failed"))?;
    if dest_compression.is_some() && !replace {
        // RedisBloom ignores an overflow here.
        let _ = read(ctx, dest, |td| {
            let _ = to.merge(td);
            Ok(RedisValue::NoReply)
        });
    }
    for source in sources {
        read(ctx, source, |td| {
            to.merge(td)
                .map(|()| RedisValue::NoReply)
                .map_err(|_| error(OVERFLOW))
        })?;
    }
    // The destination's old digest, if any, is freed (and uncounted) as it is replaced.
    let key = ctx.open_key_writable(dest);
    memory::store(&key, &TDIGEST_TYPE, to)?;
    glue::replicate_verbatim(ctx);
    Ok(RedisValue::SimpleStringStatic("OK"))
}

/// `TDIGEST.MIN key` / `TDIGEST.MAX key`: NaN when empty.
fn min_max(ctx: &Context, args: &[Arg], max: bool) -> RedisResult {
    if args.len() != 2 {
        return Err(RedisError::WrongArity);
    }
    read(ctx, &args[1], |td| {
        let value = match (td.size() > 0, max) {
            (false, _) => f64::NAN,
            (true, false) => td.min(),
            (true, true) => td.max(),
        };
        Reply::new(ctx).double(value);
        replied()
    })
}

/// `TDIGEST.MIN key`
pub fn tdigest_min(ctx: &Context, args: &[Arg]) -> RedisResult {
    min_max(ctx, args, false)
}

/// `TDIGEST.MAX key`
pub fn tdigest_max(ctx: &Context, args: &[Arg]) -> RedisResult {
    min_max(ctx, args, true)
}

/// An array of doubles, each `value(argument)` in order.
fn reply_doubles<T: Copy>(ctx: &Context, args: &[T], mut value: impl FnMut(T) -> f64) {
    let reply = Reply::new(ctx);
    reply.array(args.len());
    for &a in args {
        reply.double(value(a));
    }
}

/// `TDIGEST.QUANTILE key q…`: each `q` a number in `[0, 1]`; each run of non-decreasing
/// fractions is answered by one walk over the centroids (t-digest-c's `td_quantiles`).
pub fn tdigest_quantile(ctx: &Context, args: &[Arg]) -> RedisResult {
    if args.len() < 3 {
        return Err(RedisError::WrongArity);
    }
    read(ctx, &args[1], |td| {
        let parse = |a: &RedisString| {
            let q = float(a).ok_or_else(|| error("ERR T-Digest: error parsing quantile"))?;
            if !(0.0..=1.0).contains(&q) {
                return Err(error("ERR T-Digest: quantile should be in [0,1]"));
            }
            Ok(q)
        };
        with_parsed(&args[2..], parse, |qs| {
            let mut inline = [0.0; super::INLINE_VALUES];
            let mut spilled = Vec::new();
            let values = if qs.len() <= inline.len() {
                &mut inline[..qs.len()]
            } else {
                spilled.resize(qs.len(), 0.0);
                &mut spilled[..]
            };
            let mut start = 0;
            while start < qs.len() {
                let mut end = start;
                while end + 1 < qs.len() && qs[end] <= qs[end + 1] {
                    end += 1;
                }
                td.quantiles(&qs[start..=end], &mut values[start..=end]);
                start = end + 1;
            }
            reply_doubles(ctx, values, |v| v);
            replied()
        })
    })
}

/// `TDIGEST.CDF key value…`
pub fn tdigest_cdf(ctx: &Context, args: &[Arg]) -> RedisResult {
    if args.len() < 3 {
        return Err(RedisError::WrongArity);
    }
    read(ctx, &args[1], |td| {
        let parse =
            |a: &RedisString| float(a).ok_or_else(|| error("ERR T-Digest: error parsing cdf"));
        with_parsed(&args[2..], parse, |vals| {
            reply_doubles(ctx, vals, |v| td.cdf(v));
            replied()
        })
    })
}

/// `TDIGEST.TRIMMED_MEAN key low high`: both in `[0, 1]`, `low < high`.
pub fn tdigest_trimmed_mean(ctx: &Context, args: &[Arg]) -> RedisResult {
    if args.len() != 4 {
        return Err(RedisError::WrongArity);
    }
    read(ctx, &args[1], |td| {
        let low = float(&args[2])
            .ok_or_else(|| error("ERR T-Digest: error parsing low_cut_percentile"))?;
        let high = float(&args[3])
            .ok_or_else(|| error("ERR T-Digest: error parsing high_cut_percentile"))?;
        if !(0.0..=1.0).contains(&low) || !(0.0..=1.0).contains(&high) {
            return Err(error(
                "ERR T-Digest: low_cut_percentile and high_cut_percentile should be in [0,1]",
            ));
        }
        if low >= high {
            return Err(error(
                "ERR T-Digest: low_cut_percentile should be lower than high_cut_percentile",
            ));
        }
        Reply::new(ctx).double(td.trimmed_mean(low, high));
        replied()
    })
}

/// `TDIGEST.RANK` / `TDIGEST.REVRANK key value…`: −2 when empty; below the minimum −1
/// (reverse: the count), above the maximum the count (reverse: −1); else the CDF times the
/// count, rounded half down (reverse: the count less it rounded half away from zero).
fn rank(ctx: &Context, args: &[Arg], reverse: bool) -> RedisResult {
    if args.len() < 3 {
        return Err(RedisError::WrongArity);
    }
    read(ctx, &args[1], |td| {
        let parse =
            |a: &RedisString| float(a).ok_or_else(|| error("ERR T-Digest: error parsing value"));
        with_parsed(&args[2..], parse, |vals| {
            let size = td.size() as f64;
            let (min, max) = (td.min(), td.max());
            let reply = Reply::new(ctx);
            reply.array(vals.len());
            for &v in vals {
                let rank = {
                    if size == 0.0 {
                        -2.0
                    } else if v < min {
                        if reverse {
                            size
                        } else {
                            -1.0
                        }
                    } else if v > max {
                        if reverse {
                            -1.0
                        } else {
                            size
                        }
                    } else {
                        let prior = td.cdf(v) * size;
                        if reverse {
                            (size - prior.round()).round()
                        } else {
                            half_round_down(prior)
                        }
                    }
                };
                reply.int(c_ll(rank));
            }
            replied()
        })
    })
}

/// `TDIGEST.RANK key value…`
pub fn tdigest_rank(ctx: &Context, args: &[Arg]) -> RedisResult {
    rank(ctx, args, false)
}

/// `TDIGEST.REVRANK key value…`
pub fn tdigest_revrank(ctx: &Context, args: &[Arg]) -> RedisResult {
    rank(ctx, args, true)
}

/// `TDIGEST.BYRANK` / `TDIGEST.BYREVRANK key rank…`: NaN when empty; rank 0 the minimum
/// (reverse: the maximum); a rank at or past the count `inf` (reverse: `-inf`); else the
/// quantile at rank / count (reverse: (count − rank − 1) / count).
fn by_rank(ctx: &Context, args: &[Arg], reverse: bool) -> RedisResult {
    if args.len() < 3 {
        return Err(RedisError::WrongArity);
    }
    read(ctx, &args[1], |td| {
        let parse = |a: &RedisString| {
            let r = integer(a).ok_or_else(|| error("ERR T-Digest: error parsing rank"))?;
            if r < 0 {
                return Err(error("ERR T-Digest: rank needs to be non negative"));
            }
            Ok(r)
        };
        with_parsed(&args[2..], parse, |ranks| {
            let size = td.size() as f64;
            let (min, max) = (td.min(), td.max());
            reply_doubles(ctx, ranks, |r| {
                let r = r as f64;
                if size == 0.0 {
                    f64::NAN
                } else if r == 0.0 {
                    if reverse {
                        max
                    } else {
                        min
                    }
                } else if r >= size {
                    if reverse {
                        f64::NEG_INFINITY
                    } else {
                        f64::INFINITY
                    }
                } else {
                    let rank = if reverse { size - r - 1.0 } else { r };
                    td.quantile(rank / size)
                }
            });
            replied()
        })
    })
}

/// `TDIGEST.BYRANK key rank…`
pub fn tdigest_byrank(ctx: &Context, args: &[Arg]) -> RedisResult {
    by_rank(ctx, args, false)
}

/// `TDIGEST.BYREVRANK key rank…`
pub fn tdigest_byrevrank(ctx: &Context, args: &[Arg]) -> RedisResult {
    by_rank(ctx, args, true)
}

/// `TDIGEST.INFO key`: nine labelled integers (the digest is not compressed).
pub fn tdigest_info(ctx: &Context, args: &[Arg]) -> RedisResult {
    if args.len() != 2 {
        return Err(RedisError::WrongArity);
    }
    read(ctx, &args[1], |td| {
        let i = td.info();
        Reply::new(ctx).pairs(
            &[
                &status::COMPRESSION,
                &status::CAPACITY,
                &status::MERGED_NODES,
                &status::UNMERGED_NODES,
                &status::MERGED_WEIGHT,
                &status::UNMERGED_WEIGHT,
                &status::OBSERVATIONS,
                &status::TOTAL_COMPRESSIONS,
                &status::MEMORY_USAGE,
            ],
            &[
                i.compression,
                i.capacity,
                i.merged_nodes,
                i.unmerged_nodes,
                i.merged_weight,
                i.unmerged_weight,
                i.observations,
                i.total_compressions,
                i.memory_usage,
            ],
        );
        replied()
    })
}
