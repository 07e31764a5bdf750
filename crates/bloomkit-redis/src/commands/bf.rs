//! `BF.*`: RedisBloom 2.4's Bloom filter commands.

use redis_module::{Context, RedisError, RedisResult, RedisString, RedisValue};

use super::{error, float, integer, is, wrong_type};
use crate::bf::{BfError, Chain, ChunkError, HeaderError};
use crate::config;
use crate::memory::KeyLimit;
use crate::types::BLOOM_TYPE;

/// RedisBloom's default expansion.
const DEFAULT_EXPANSION: u32 = 2;

/// The reply to an add that could not be done (an error element inside MADD/INSERT arrays).
fn add_error(e: &BfError) -> &'static str {
    match e {
        BfError::NonScalingFull => "ERR non scaling filter is full",
        BfError::TooLarge { .. } => {
            "ERR adding a layer would pass the per-key memory limit (module argument MAX_KEY_MEMORY)"
        }
        BfError::CannotGrow => "ERR could not add a layer to the filter (capacity or error rate out of range)",
        BfError::OutOfMemory => "ERR could not allocate memory for the filter",
    }
}

fn too_large(needed: u64, limit: u64) -> RedisError {
    error(&format!(
        "ERR the filter would use {needed} bytes, more than the per-key limit of {limit} bytes \
         (module argument MAX_KEY_MEMORY); ask for a smaller capacity or a larger error rate"
    ))
}

fn create_error(e: BfError) -> RedisError {
    match e {
        BfError::TooLarge { needed, limit } => too_large(needed, limit),
        _ => error("ERR could not create filter"),
    }
}

/// `BF.RESERVE key error_rate capacity [EXPANSION expansion] [NONSCALING]`
pub fn bf_reserve(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    if args.len() < 4 {
        return Err(RedisError::WrongArity);
    }
    let rate = float(&args[2]).ok_or_else(|| error("ERR bad error rate"))?;
    let capacity = integer(&args[3]).ok_or_else(|| error("ERR bad capacity"))?;
    if !(rate > 0.0 && rate < 1.0) {
        return Err(error("ERR (0 < error rate range < 1) "));
    }
    if capacity <= 0 {
        return Err(error("ERR (capacity should be larger than 0)"));
    }
    let mut expansion = None;
    let mut nonscaling = false;
    let mut i = 4;
    while i < args.len() {
        if is(&args[i], "EXPANSION") {
            let value = args.get(i + 1).ok_or_else(|| error("ERR no expansion"))?;
            expansion = Some(parse_expansion(value).ok_or_else(|| error("ERR bad expansion"))?);
            i += 2;
        } else if is(&args[i], "NONSCALING") {
            nonscaling = true;
            i += 1;
        } else {
            return Err(error("ERR unknown argument received"));
        }
    }
    if nonscaling && expansion.is_some() {
        return Err(error("Nonscaling filters cannot expand"));
    }
    let key = ctx.open_key_writable(&args[1]);
    if key
        .get_value::<Chain>(&BLOOM_TYPE)
        .map_err(wrong_type)?
        .is_some()
    {
        return Err(error("ERR item exists"));
    }
    let chain = Chain::new(
        capacity as u64,
        rate,
        expansion.unwrap_or(DEFAULT_EXPANSION),
        nonscaling,
        KeyLimit,
    )
    .map_err(create_error)?;
    key.set_value(&BLOOM_TYPE, chain)?;
    ctx.replicate_verbatim();
    Ok(RedisValue::SimpleStringStatic("OK"))
}

fn parse_expansion(arg: &RedisString) -> Option<u32> {
    integer(arg)
        .filter(|&n| n >= 1)
        .and_then(|n| u32::try_from(n).ok())
}

/// How to create a missing filter on an add.
struct Create {
    capacity: u64,
    rate: f64,
    expansion: u32,
    nonscaling: bool,
}

impl Create {
    fn defaults() -> Self {
        let c = config::get();
        Self {
            capacity: c.initial_size,
            rate: c.error_rate,
            expansion: DEFAULT_EXPANSION,
            nonscaling: false,
        }
    }
}

/// Adds items to the filter at `key` (created when missing, if `create` says how) and
/// replies with one integer, or an array when `multi`.
fn add_items(
    ctx: &Context,
    key_name: &RedisString,
    items: &[RedisString],
    create: Option<Create>,
    multi: bool,
) -> RedisResult {
    let limit = KeyLimit;
    let key = ctx.open_key_writable(key_name);
    let chain = match key.get_value::<Chain>(&BLOOM_TYPE).map_err(wrong_type)? {
        Some(chain) => chain,
        None => {
            let Some(c) = create else {
                return Err(error("ERR not found"));
            };
            let chain = Chain::new(c.capacity, c.rate, c.expansion, c.nonscaling, limit)
                .map_err(create_error)?;
            key.set_value(&BLOOM_TYPE, chain)?;
            key.get_value::<Chain>(&BLOOM_TYPE)?
                .ok_or_else(|| error("ERR could not create filter"))?
        }
    };
    let mut replies = Vec::with_capacity(items.len());
    for item in items {
        replies.push(match chain.add(item.as_slice(), limit) {
            Ok(added) => RedisValue::Integer(added as i64),
            Err(e) if multi => RedisValue::StaticError(add_error(&e)),
            Err(e) => {
                ctx.replicate_verbatim();
                return Err(error(add_error(&e)));
            }
        });
    }
    ctx.replicate_verbatim();
    if multi {
        Ok(RedisValue::Array(replies))
    } else {
        Ok(replies.pop().unwrap_or(RedisValue::Integer(0)))
    }
}

/// `BF.ADD key item`
pub fn bf_add(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    add_items(ctx, &args[1], &args[2..], Some(Create::defaults()), false)
}

/// `BF.MADD key item [item …]`
pub fn bf_madd(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    if args.len() < 3 {
        return Err(RedisError::WrongArity);
    }
    add_items(ctx, &args[1], &args[2..], Some(Create::defaults()), true)
}

/// `BF.INSERT key [CAPACITY c] [ERROR e] [EXPANSION n] [NOCREATE] [NONSCALING] ITEMS item…`
pub fn bf_insert(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    if args.len() < 4 {
        return Err(RedisError::WrongArity);
    }
    let mut create = Create::defaults();
    let mut nocreate = false;
    let (mut sized, mut expanded) = (false, false);
    let mut items = None;
    let mut i = 2;
    while i < args.len() {
        let arg = &args[i];
        if is(arg, "ITEMS") {
            items = Some(i + 1);
            break;
        } else if is(arg, "NOCREATE") {
            nocreate = true;
            i += 1;
        } else if is(arg, "NONSCALING") {
            create.nonscaling = true;
            i += 1;
        } else if is(arg, "CAPACITY") || is(arg, "ERROR") || is(arg, "EXPANSION") {
            let value = args.get(i + 1).ok_or(RedisError::WrongArity)?;
            if is(arg, "CAPACITY") {
                create.capacity = integer(value)
                    .filter(|&c| c > 0)
                    .ok_or_else(|| error("Bad capacity"))? as u64;
                sized = true;
            } else if is(arg, "ERROR") {
                create.rate = float(value)
                    .filter(|&e| e > 0.0 && e < 1.0)
                    .ok_or_else(|| error("Bad error rate"))?;
                sized = true;
            } else {
                create.expansion = parse_expansion(value).ok_or_else(|| error("Bad expansion"))?;
                expanded = true;
            }
            i += 2;
        } else {
            return Err(error("Unknown argument received"));
        }
    }
    let items = match items {
        Some(start) if start < args.len() => &args[start..],
        _ => return Err(RedisError::WrongArity),
    };
    if nocreate && (sized || expanded || create.nonscaling) {
        return Err(error("Bad argument received"));
    }
    if create.nonscaling && expanded {
        return Err(error("Nonscaling filters cannot expand"));
    }
    add_items(ctx, &args[1], items, (!nocreate).then_some(create), true)
}

/// Opens a filter for reading: `None` when the key is missing, WRONGTYPE for other types.
fn with_chain<R>(
    ctx: &Context,
    key_name: &RedisString,
    f: impl FnOnce(Option<&Chain>) -> Result<R, RedisError>,
) -> Result<R, RedisError> {
    let key = ctx.open_key(key_name);
    let chain = key.get_value::<Chain>(&BLOOM_TYPE).map_err(wrong_type)?;
    f(chain)
}

/// `BF.EXISTS key item`
pub fn bf_exists(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    with_chain(ctx, &args[1], |chain| {
        Ok(RedisValue::Integer(
            chain.is_some_and(|c| c.contains(args[2].as_slice())) as i64,
        ))
    })
}

/// `BF.MEXISTS key item [item …]`
pub fn bf_mexists(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    if args.len() < 3 {
        return Err(RedisError::WrongArity);
    }
    with_chain(ctx, &args[1], |chain| {
        Ok(RedisValue::Array(
            args[2..]
                .iter()
                .map(|item| {
                    RedisValue::Integer(chain.is_some_and(|c| c.contains(item.as_slice())) as i64)
                })
                .collect(),
        ))
    })
}

/// `BF.CARD key`
pub fn bf_card(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    if args.len() != 2 {
        return Err(RedisError::WrongArity);
    }
    with_chain(ctx, &args[1], |chain| {
        Ok(RedisValue::Integer(chain.map_or(0, |c| c.size() as i64)))
    })
}

/// `BF.INFO key [CAPACITY | SIZE | FILTERS | ITEMS | EXPANSION]`
pub fn bf_info(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    if !(2..=3).contains(&args.len()) {
        return Err(RedisError::WrongArity);
    }
    with_chain(ctx, &args[1], |chain| {
        let chain = chain.ok_or_else(|| error("ERR not found"))?;
        let expansion = if chain.is_nonscaling() {
            RedisValue::Null
        } else {
            RedisValue::Integer(chain.growth() as i64)
        };
        let fields = [
            (
                "Capacity",
                "CAPACITY",
                RedisValue::Integer(chain.capacity() as i64),
            ),
            (
                "Size",
                "SIZE",
                RedisValue::Integer(chain.memory_bytes() as i64),
            ),
            (
                "Number of filters",
                "FILTERS",
                RedisValue::Integer(chain.layers().len() as i64),
            ),
            (
                "Number of items inserted",
                "ITEMS",
                RedisValue::Integer(chain.size() as i64),
            ),
            ("Expansion rate", "EXPANSION", expansion),
        ];
        if let Some(wanted) = args.get(2) {
            let (_, _, value) = fields
                .into_iter()
                .find(|(_, name, _)| is(wanted, name))
                .ok_or_else(|| error("Invalid information value"))?;
            return Ok(RedisValue::Array(vec![value]));
        }
        Ok(RedisValue::Array(
            fields
                .into_iter()
                .flat_map(|(label, _, value)| [RedisValue::SimpleStringStatic(label), value])
                .collect(),
        ))
    })
}

/// `BF.DEBUG key`
pub fn bf_debug(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    if args.len() != 2 {
        return Err(RedisError::WrongArity);
    }
    with_chain(ctx, &args[1], |chain| {
        let chain = chain.ok_or_else(|| error("ERR not found"))?;
        Ok(RedisValue::Array(
            chain
                .debug_lines()
                .into_iter()
                .map(|l| RedisValue::StringBuffer(l.into_bytes()))
                .collect(),
        ))
    })
}

/// `BF.SCANDUMP key iterator`: the key is looked up first; iterator 0 answers `[1,
/// header]`, a position in the layers `[next, chunk]`, anything else (the end, a negative
/// iterator) `[0, ""]`.
pub fn bf_scandump(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    with_chain(ctx, &args[1], |chain| {
        let chain = chain.ok_or_else(|| error("ERR not found"))?;
        let iter = integer(&args[2]).ok_or_else(|| error("Second argument must be numeric"))?;
        let (next, data) = if iter == 0 {
            (1, chain.header())
        } else {
            u64::try_from(iter)
                .ok()
                .and_then(|iter| chain.chunk(iter))
                .unwrap_or((0, Vec::new()))
        };
        Ok(RedisValue::Array(vec![
            RedisValue::Integer(next as i64),
            RedisValue::StringBuffer(data),
        ]))
    })
}

/// `BF.LOADCHUNK key iterator data`: iterator 1 on a missing key is the header; anything
/// else writes a chunk into an existing filter (so iterator 1 on an existing key is a
/// chunk too, and bad data unless it is at most one byte long).
pub fn bf_loadchunk(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    if args.len() != 4 {
        return Err(RedisError::WrongArity);
    }
    let iter = integer(&args[2]).ok_or_else(|| error("ERR Second argument must be numeric"))?;
    let data = args[3].as_slice();
    let key = ctx.open_key_writable(&args[1]);
    match key.get_value::<Chain>(&BLOOM_TYPE).map_err(wrong_type)? {
        None if iter == 1 => {
            let chain = Chain::from_header(data, KeyLimit).map_err(|e| match e {
                HeaderError::Invalid => error("ERR received bad data"),
                HeaderError::TooLarge { needed, limit } => too_large(needed, limit),
            })?;
            key.set_value(&BLOOM_TYPE, chain)?;
        }
        None => return Err(error("ERR not found")),
        Some(chain) => chain.load_chunk(iter, data).map_err(|e| match e {
            ChunkError::BadData => error("ERR received bad data"),
            ChunkError::NoLink => error("ERR invalid offset - no link found"),
            ChunkError::TooBig => error("ERR invalid chunk - Too big for current filter"),
        })?,
    }
    ctx.replicate_verbatim();
    Ok(RedisValue::SimpleStringStatic("OK"))
}
