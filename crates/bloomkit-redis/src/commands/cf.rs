//! `CF.*`: RedisBloom 2.4's cuckoo filter commands.

use redis_module::{Context, RedisError, RedisResult, RedisString, RedisValue};

use super::{error, integer, is, wrong_type};
use crate::cf::{
    CreateError, Cuckoo, Insert, DEFAULT_BUCKET_SIZE, DEFAULT_CAPACITY, DEFAULT_EXPANSION,
    DEFAULT_MAX_ITERATIONS, HEADER_BYTES, MAX_BUCKET_SIZE, MAX_EXPANSION, MAX_ITERATIONS,
};
use crate::config;
use crate::memory::KeyLimit;
use crate::types::CUCKOO_TYPE;

fn too_large(needed: u64, limit: u64) -> RedisError {
    error(&format!(
        "ERR the filter would use {needed} bytes, more than the per-key limit of {limit} bytes \
         (module argument MAX_KEY_MEMORY); ask for a smaller capacity"
    ))
}

fn create_error(e: CreateError) -> RedisError {
    match e {
        CreateError::TooLarge { needed, limit } => too_large(needed, limit),
        CreateError::Invalid => error("ERR Insufficient memory to create filter"),
    }
}

/// An insert that did not store the item, as an error reply.
fn insert_error(status: Insert) -> &'static str {
    match status {
        Insert::NoSpace => "Filter is full",
        Insert::MaxExpansions => "Maximum expansions reached",
        Insert::TooLarge { .. } => {
            "ERR adding a sub-filter would pass the per-key memory limit (module argument MAX_KEY_MEMORY)"
        }
        Insert::Inserted | Insert::Exists => "Memory allocation failure",
    }
}

/// A ranged option value: "Couldn't parse NAME" or "NAME: value must be an integer
/// between min and max, inclusive."
fn option_value(arg: &RedisString, name: &str, min: i64, max: i64) -> Result<u16, RedisError> {
    let value = integer(arg).ok_or_else(|| error(&format!("Couldn't parse {name}")))?;
    if !(min..=max).contains(&value) {
        return Err(error(&format!(
            "{name}: value must be an integer between {min} and {max}, inclusive."
        )));
    }
    Ok(value as u16)
}

/// `CF.RESERVE key capacity [BUCKETSIZE b] [MAXITERATIONS i] [EXPANSION e]`
pub fn cf_reserve(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    if args.len() < 3 || args.len() % 2 == 0 {
        return Err(RedisError::WrongArity);
    }
    let capacity = integer(&args[2]).ok_or_else(|| error("Bad capacity"))?;
    let mut bucket_size = DEFAULT_BUCKET_SIZE;
    let mut max_iterations = DEFAULT_MAX_ITERATIONS;
    let mut expansion = DEFAULT_EXPANSION;
    for pair in args[3..].chunks_exact(2) {
        let (name, value) = (&pair[0], &pair[1]);
        if is(name, "BUCKETSIZE") {
            bucket_size = option_value(value, "BUCKETSIZE", 1, MAX_BUCKET_SIZE as i64)?;
        } else if is(name, "MAXITERATIONS") {
            max_iterations = option_value(value, "MAXITERATIONS", 1, MAX_ITERATIONS as i64)?;
        } else if is(name, "EXPANSION") {
            expansion = option_value(value, "EXPANSION", 0, MAX_EXPANSION as i64)?;
        } else {
            return Err(error("ERR unknown argument received"));
        }
    }
    if capacity < bucket_size as i64 * 2 {
        return Err(error("Capacity must be at least (BucketSize * 2)"));
    }
    let key = ctx.open_key_writable(&args[1]);
    if key
        .get_value::<Cuckoo>(&CUCKOO_TYPE)
        .map_err(wrong_type)?
        .is_some()
    {
        return Err(error("ERR item exists"));
    }
    let cf = Cuckoo::new(
        capacity as u64,
        bucket_size,
        max_iterations,
        expansion,
        KeyLimit,
    )
    .map_err(create_error)?;
    key.set_value(&CUCKOO_TYPE, cf)?;
    ctx.replicate_verbatim();
    Ok(RedisValue::SimpleStringStatic("OK"))
}

/// Adds items to the filter at `key`, created with `capacity` when missing (if allowed).
/// Replies 1/0 for one item, or an array of 1 / 0 / −1 (full) for several.
fn add_items(
    ctx: &Context,
    key_name: &RedisString,
    items: &[RedisString],
    capacity: Option<u64>,
    unique: bool,
    multi: bool,
) -> RedisResult {
    let c = config::get();
    let key = ctx.open_key_writable(key_name);
    let cf = match key.get_value::<Cuckoo>(&CUCKOO_TYPE).map_err(wrong_type)? {
        Some(cf) => cf,
        None => {
            let Some(capacity) = capacity else {
                return Err(error("ERR not found"));
            };
            if capacity < DEFAULT_BUCKET_SIZE as u64 * 2 {
                return Err(error("Capacity must be at least (BucketSize * 2)"));
            }
            let cf = Cuckoo::new(
                capacity,
                DEFAULT_BUCKET_SIZE,
                DEFAULT_MAX_ITERATIONS,
                DEFAULT_EXPANSION,
                KeyLimit,
            )
            .map_err(create_error)?;
            key.set_value(&CUCKOO_TYPE, cf)?;
            key.get_value::<Cuckoo>(&CUCKOO_TYPE)?
                .ok_or_else(|| error("ERR Insufficient memory to create filter"))?
        }
    };
    let mut replies = Vec::with_capacity(items.len());
    for item in items {
        let status = if unique {
            cf.insert_unique(item.as_slice(), KeyLimit, c.cf_max_expansions)
        } else {
            cf.insert(item.as_slice(), KeyLimit, c.cf_max_expansions)
        };
        replies.push(match status {
            Insert::Inserted => RedisValue::Integer(1),
            Insert::Exists => RedisValue::Integer(0),
            Insert::NoSpace if multi => RedisValue::Integer(-1),
            other if multi => RedisValue::StaticError(insert_error(other)),
            other => {
                ctx.replicate_verbatim();
                return Err(error(insert_error(other)));
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

/// `CF.ADD key item`
pub fn cf_add(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    add_items(
        ctx,
        &args[1],
        &args[2..],
        Some(DEFAULT_CAPACITY),
        false,
        false,
    )
}

/// `CF.ADDNX key item`
pub fn cf_addnx(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    add_items(
        ctx,
        &args[1],
        &args[2..],
        Some(DEFAULT_CAPACITY),
        true,
        false,
    )
}

fn insert_common(ctx: &Context, args: Vec<RedisString>, unique: bool) -> RedisResult {
    if args.len() < 4 {
        return Err(RedisError::WrongArity);
    }
    let mut capacity = Some(DEFAULT_CAPACITY);
    let mut nocreate = false;
    let mut items = None;
    let mut i = 2;
    while i < args.len() {
        if is(&args[i], "ITEMS") {
            items = Some(i + 1);
            break;
        } else if is(&args[i], "NOCREATE") {
            nocreate = true;
            i += 1;
        } else if is(&args[i], "CAPACITY") {
            let value = args.get(i + 1).ok_or(RedisError::WrongArity)?;
            capacity = Some(
                integer(value)
                    .filter(|&c| c > 0)
                    .ok_or_else(|| error("Bad capacity"))? as u64,
            );
            i += 2;
        } else {
            return Err(error("Unknown argument received"));
        }
    }
    let items = match items {
        Some(start) if start < args.len() => &args[start..],
        _ => return Err(RedisError::WrongArity),
    };
    if nocreate {
        capacity = None;
    }
    add_items(ctx, &args[1], items, capacity, unique, true)
}

/// `CF.INSERT key [CAPACITY c] [NOCREATE] ITEMS item…`
pub fn cf_insert(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    insert_common(ctx, args, false)
}

/// `CF.INSERTNX key [CAPACITY c] [NOCREATE] ITEMS item…`
pub fn cf_insertnx(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    insert_common(ctx, args, true)
}

fn with_cuckoo<R>(
    ctx: &Context,
    key_name: &RedisString,
    f: impl FnOnce(Option<&Cuckoo>) -> Result<R, RedisError>,
) -> Result<R, RedisError> {
    let key = ctx.open_key(key_name);
    let cf = key.get_value::<Cuckoo>(&CUCKOO_TYPE).map_err(wrong_type)?;
    f(cf)
}

/// `CF.EXISTS key item`
pub fn cf_exists(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    with_cuckoo(ctx, &args[1], |cf| {
        Ok(RedisValue::Integer(
            cf.is_some_and(|c| c.contains(args[2].as_slice())) as i64,
        ))
    })
}

/// `CF.MEXISTS key item [item …]`
pub fn cf_mexists(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    if args.len() < 3 {
        return Err(RedisError::WrongArity);
    }
    with_cuckoo(ctx, &args[1], |cf| {
        Ok(RedisValue::Array(
            args[2..]
                .iter()
                .map(|i| RedisValue::Integer(cf.is_some_and(|c| c.contains(i.as_slice())) as i64))
                .collect(),
        ))
    })
}

/// `CF.COUNT key item`
pub fn cf_count(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    with_cuckoo(ctx, &args[1], |cf| {
        Ok(RedisValue::Integer(
            cf.map_or(0, |c| c.count(args[2].as_slice()) as i64),
        ))
    })
}

/// `CF.DEL key item`
pub fn cf_del(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    let key = ctx.open_key_writable(&args[1]);
    let cf = key
        .get_value::<Cuckoo>(&CUCKOO_TYPE)
        .map_err(wrong_type)?
        .ok_or_else(|| error("Not found"))?;
    let deleted = cf.delete(args[2].as_slice());
    ctx.replicate_verbatim();
    Ok(RedisValue::Integer(deleted as i64))
}

/// `CF.COMPACT key`
pub fn cf_compact(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    if args.len() != 2 {
        return Err(RedisError::WrongArity);
    }
    let key = ctx.open_key_writable(&args[1]);
    let cf = key
        .get_value::<Cuckoo>(&CUCKOO_TYPE)
        .map_err(wrong_type)?
        .ok_or_else(|| error("Cuckoo filter was not found"))?;
    cf.compact(true);
    ctx.replicate_verbatim();
    Ok(RedisValue::SimpleStringStatic("OK"))
}

/// `CF.INFO key`
pub fn cf_info(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    if args.len() != 2 {
        return Err(RedisError::WrongArity);
    }
    with_cuckoo(ctx, &args[1], |cf| {
        let cf = cf.ok_or_else(|| error("ERR not found"))?;
        let fields: [(&'static str, u64); 8] = [
            ("Size", cf.memory_bytes()),
            ("Number of buckets", cf.num_buckets()),
            ("Number of filters", cf.filters().len() as u64),
            ("Number of items inserted", cf.num_items()),
            ("Number of items deleted", cf.num_deletes()),
            ("Bucket size", cf.bucket_size() as u64),
            ("Expansion rate", cf.expansion() as u64),
            ("Max iterations", cf.max_iterations() as u64),
        ];
        Ok(RedisValue::Array(
            fields
                .into_iter()
                .flat_map(|(label, value)| {
                    [
                        RedisValue::SimpleStringStatic(label),
                        RedisValue::Integer(value as i64),
                    ]
                })
                .collect(),
        ))
    })
}

/// `CF.DEBUG key`
pub fn cf_debug(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    if args.len() != 2 {
        return Err(RedisError::WrongArity);
    }
    with_cuckoo(ctx, &args[1], |cf| {
        let cf = cf.ok_or_else(|| error("ERR not found"))?;
        Ok(RedisValue::StringBuffer(cf.debug_line().into_bytes()))
    })
}

/// `CF.SCANDUMP key iterator`: `[1, header]` at 0, then `[next, chunk]`, then `[0, nil]`;
/// an empty filter answers `[0, nil]` at once.
pub fn cf_scandump(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    let iter = integer(&args[2])
        .filter(|&i| i >= 0)
        .ok_or_else(|| error("Invalid position"))?;
    with_cuckoo(ctx, &args[1], |cf| {
        let cf = cf.ok_or_else(|| error("ERR not found"))?;
        let end = || {
            Ok(RedisValue::Array(vec![
                RedisValue::Integer(0),
                RedisValue::Null,
            ]))
        };
        if cf.num_items() == 0 {
            return end();
        }
        if iter == 0 {
            return Ok(RedisValue::Array(vec![
                RedisValue::Integer(1),
                RedisValue::StringBuffer(cf.header()),
            ]));
        }
        match cf.chunk(iter as u64) {
            Some((next, data)) => Ok(RedisValue::Array(vec![
                RedisValue::Integer(next as i64),
                RedisValue::StringBuffer(data.to_vec()),
            ])),
            None => end(),
        }
    })
}

/// `CF.LOADCHUNK key iterator data`, with RedisBloom's checks in its order: the position
/// (0 or not a number: "Invalid position"); at 1 the key must be missing ("ERR item
/// exists"), the header 38 bytes long ("Invalid header") and make a filter ("Couldn't
/// create filter!"); elsewhere the chunk must fit a sub-filter ("Couldn't load chunk!").
pub fn cf_loadchunk(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    if args.len() != 4 {
        return Err(RedisError::WrongArity);
    }
    let key = ctx.open_key_writable(&args[1]);
    let existing = key.get_value::<Cuckoo>(&CUCKOO_TYPE).map_err(wrong_type);
    let iter = integer(&args[2])
        .filter(|&i| i != 0)
        .ok_or_else(|| error("Invalid position"))?;
    let data = args[3].as_slice();
    if iter == 1 {
        if existing?.is_some() {
            return Err(error("ERR item exists"));
        }
        if data.len() != HEADER_BYTES {
            return Err(error("Invalid header"));
        }
        let cf = Cuckoo::from_header(data, KeyLimit).map_err(|e| match e {
            CreateError::Invalid => error("Couldn't create filter!"),
            CreateError::TooLarge { needed, limit } => too_large(needed, limit),
        })?;
        key.set_value(&CUCKOO_TYPE, cf)?;
    } else {
        let cf = existing?.ok_or_else(|| error("ERR not found"))?;
        if !cf.load_chunk(iter, data) {
            return Err(error("Couldn't load chunk!"));
        }
    }
    ctx.replicate_verbatim();
    Ok(RedisValue::SimpleStringStatic("OK"))
}
