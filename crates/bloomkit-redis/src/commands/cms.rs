//! `CMS.*`: RedisBloom 2.4's count-min sketch commands, with its replies, error strings
//! and order of checks.

use redis_module::{Context, RedisError, RedisResult, RedisValue};

use super::{
    arg_index, error, float, integer, replied, status, wrong_type, Arg, Reply, INLINE_VALUES,
};
use crate::cms::{dims_from_prob, CreateError, MergeSource, Sketch};
use crate::config::Refusal;
use crate::glue::{self, Key};
use crate::memory::{self, ServerLimit};
use crate::types::CMS_TYPE;

const NOT_FOUND: &str = "CMS: key does not exist";

/// Why the memory limits refused a value (`what`: "sketch", "top-k"), after RedisBloom's
/// own text for a failed allocation.
pub fn refused(prefix: &str, what: &str, refusal: Refusal) -> RedisError {
    error(&match refusal {
        Refusal::PerKey { needed, limit } => format!(
            "{prefix}: the {what} would use {needed} bytes, more than the per-key limit of \
             {limit} bytes (module argument MAX_KEY_MEMORY)"
        ),
        Refusal::Server {
            request,
            held,
            budget,
            bound,
        } => format!(
            "{prefix}: the {what} would use {request} bytes, but the server holds {held} of \
             the {budget} bytes it may hold ({})",
            bound.describe()
        ),
    })
}

/// The sketch at `key`: "CMS: key does not exist", WRONGTYPE.
#[inline(always)]
fn existing(key: &mut Key) -> Result<&mut Sketch, RedisError> {
    key.value::<Sketch>(&CMS_TYPE)
        .map_err(|_| RedisError::WrongType)?
        .ok_or_else(|| error(NOT_FOUND))
}

fn create_error(e: CreateError) -> RedisError {
    const NO_MEMORY: &str = "CMS: Insufficient memory to create the key";
    match e {
        CreateError::Invalid => error("CMS: invalid init arguments"),
        CreateError::Unaddressable => error(NO_MEMORY),
        CreateError::TooLarge(refusal) => refused(NO_MEMORY, "sketch", refusal),
    }
}

/// `CMS.INITBYDIM key width depth` / `CMS.INITBYPROB key error probability`. As
/// RedisBloom: an existing key of any type first ("CMS: key already exists"), then the
/// arguments.
fn create(ctx: &Context, args: &[Arg], by_prob: bool) -> RedisResult {
    if args.len() != 4 {
        return Err(RedisError::WrongArity);
    }
    let key = ctx.open_key_writable(&args[1]);
    if !key.is_empty() {
        return Err(error("CMS: key already exists"));
    }
    let (width, depth) = if by_prob {
        let error_rate = float(&args[2])
            .filter(|e| *e > 0.0 && *e < 1.0)
            .ok_or_else(|| error("CMS: invalid overestimation value"))?;
        let prob = float(&args[3])
            .filter(|p| *p > 0.0 && *p < 1.0)
            .ok_or_else(|| error("CMS: invalid prob value"))?;
        match dims_from_prob(error_rate, prob) {
            (Some(width), depth) => (width, depth),
            (None, _) => return Err(error("CMS: invalid init arguments")),
        }
    } else {
        let width = integer(&args[2])
            .filter(|w| *w >= 1)
            .ok_or_else(|| error("CMS: invalid width"))?;
        let depth = integer(&args[3])
            .filter(|d| *d >= 1)
            .ok_or_else(|| error("CMS: invalid depth"))?;
        (width as u64, depth as u64)
    };
    let sketch = Sketch::new(width, depth, ServerLimit).map_err(create_error)?;
    memory::store(&key, &CMS_TYPE, sketch)?;
    glue::replicate_verbatim(ctx);
    Ok(RedisValue::SimpleStringStatic("OK"))
}

/// `CMS.INITBYDIM key width depth`
pub fn cms_initbydim(ctx: &Context, args: &[Arg]) -> RedisResult {
    create(ctx, args, false)
}

/// `CMS.INITBYPROB key error probability`
pub fn cms_initbyprob(ctx: &Context, args: &[Arg]) -> RedisResult {
    create(ctx, args, true)
}

/// `CMS.INCRBY key item increment [item increment …]`: every pair is read (an integer ≥ 0)
/// before anything changes; then one estimate per item, or "CMS: INCRBY overflow" as the
/// element of an item whose counters all saturated (they stay saturated).
pub fn cms_incrby(ctx: &Context, args: &[Arg]) -> RedisResult {
    if args.len() < 4 || args.len() % 2 == 1 {
        return Err(RedisError::WrongArity);
    }
    let mut key = Key::open(ctx, &args[1], true);
    let sketch = existing(&mut key)?;
    let parse = |pair: &[Arg]| {
        let value = integer(&pair[1]).ok_or_else(|| error("CMS: Cannot parse number"))?;
        if value < 0 {
            return Err(error("CMS: Number cannot be negative"));
        }
        Ok(value as u64)
    };
    let mut inline = [0u64; INLINE_VALUES];
    let mut spilled = Vec::new();
    let pairs = args.len() / 2 - 1;
    let increments = if pairs <= INLINE_VALUES {
        &mut inline[..pairs]
    } else {
        spilled.resize(pairs, 0);
        &mut spilled[..]
    };
    for (increment, pair) in increments.iter_mut().zip(args[2..].chunks_exact(2)) {
        *increment = parse(pair)?;
    }
    let reply = Reply::new(ctx);
    reply.array(pairs);
    for (pair, &value) in args[2..].chunks_exact(2).zip(increments.iter()) {
        let estimate = sketch.incr_by(glue::bytes(&pair[0]), value);
        if estimate == u32::MAX {
            reply.error(c"CMS: INCRBY overflow");
        } else {
            reply.int(estimate as i64);
        }
    }
    glue::replicate_verbatim(ctx);
    replied()
}

/// `CMS.QUERY key item…`
pub fn cms_query(ctx: &Context, args: &[Arg]) -> RedisResult {
    if args.len() < 3 {
        return Err(RedisError::WrongArity);
    }
    let mut key = Key::open(ctx, &args[1], false);
    let sketch = existing(&mut key)?;
    let reply = Reply::new(ctx);
    reply.array(args.len() - 2);
    for item in &args[2..] {
        reply.int(sketch.query(glue::bytes(item)) as i64);
    }
    replied()
}

/// A merge source as the command found it: the destination itself, or another key.
enum Found {
    Dest,
    Key(redis_module::key::RedisKey),
}

/// `CMS.MERGE dest numKeys src… [WEIGHTS w…]`, checked in RedisBloom's order: the
/// destination (it must exist), the key count, the argument count, then per source its
/// weight, its key and its dimensions; the merge then refuses an overflow before changing
/// anything. The destination may be among the sources.
pub fn cms_merge(ctx: &Context, args: &[Arg]) -> RedisResult {
    if args.len() < 4 {
        return Err(RedisError::WrongArity);
    }
    let dest_key = ctx.open_key_writable(&args[1]);
    let (width, depth) = match dest_key
        .get_value::<Sketch>(&CMS_TYPE)
        .map_err(wrong_type)?
    {
        Some(dest) => (dest.width(), dest.depth()),
        None => return Err(error(NOT_FOUND)),
    };
    let keys = integer(&args[2]).ok_or_else(|| error("CMS: invalid numkeys"))?;
    let rest = &args[3..];
    if keys <= 0 {
        return Err(error("CMS: Number of keys must be positive"));
    }
    let weights_at = arg_index(rest, "WEIGHTS");
    match weights_at {
        None if keys as u64 != rest.len() as u64 => {
            return Err(error("CMS: wrong number of keys"));
        }
        Some(at)
            if at as i64 != keys
                || keys.checked_mul(2).and_then(|n| n.checked_add(1))
                    != Some(rest.len() as i64) =>
        {
            return Err(error("CMS: wrong number of keys/weights"));
        }
        _ => {}
    }
    let keys = keys as usize;
    let mut found = Vec::with_capacity(keys);
    for i in 0..keys {
        let weight = match weights_at {
            None => 1,
            Some(_) => {
                integer(&rest[keys + 1 + i]).ok_or_else(|| error("CMS: invalid weight value"))?
            }
        };
        if rest[i].as_slice() == args[1].as_slice() {
            found.push((Found::Dest, weight));
            continue;
        }
        let key = ctx.open_key(&rest[i]);
        match key.get_value::<Sketch>(&CMS_TYPE).map_err(wrong_type)? {
            None => return Err(error(NOT_FOUND)),
            Some(s) if (s.width(), s.depth()) != (width, depth) => {
                return Err(error("CMS: width/depth is not equal"));
            }
            Some(_) => {}
        }
        found.push((Found::Key(key), weight));
    }
    let mut sources = Vec::with_capacity(keys);
    for (source, weight) in &found {
        let source = match source {
            Found::Dest => MergeSource::Dest,
            Found::Key(key) => MergeSource::Other(
                key.get_value::<Sketch>(&CMS_TYPE)?
                    .ok_or_else(|| error(NOT_FOUND))?,
            ),
        };
        sources.push((source, *weight));
    }
    let dest = dest_key
        .get_value::<Sketch>(&CMS_TYPE)?
        .ok_or_else(|| error(NOT_FOUND))?;
    dest.merge(&sources)
        .map_err(|_| error("CMS: MERGE overflow"))?;
    glue::replicate_verbatim(ctx);
    Ok(RedisValue::SimpleStringStatic("OK"))
}

/// `CMS.INFO key`: `width`, `depth`, `count`.
pub fn cms_info(ctx: &Context, args: &[Arg]) -> RedisResult {
    if args.len() != 2 {
        return Err(RedisError::WrongArity);
    }
    let mut key = Key::open(ctx, &args[1], false);
    let sketch = existing(&mut key)?;
    Reply::new(ctx).pairs(
        &[&status::WIDTH, &status::DEPTH, &status::COUNT],
        &[
            sketch.width() as i64,
            sketch.depth() as i64,
            sketch.count() as i64,
        ],
    );
    replied()
}
