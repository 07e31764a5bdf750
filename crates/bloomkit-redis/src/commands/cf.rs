//! `CF.*`: RedisBloom 2.4's cuckoo filter commands.

use redis_module::{Context, RedisError, RedisResult, RedisString, RedisValue};

use std::ffi::CStr;

use super::{
    arg_index, error, first_letter, growth_refused, integer, replied, status, wrong_type, Arg,
    Reply,
};
use crate::cf::{
    CreateError, Cuckoo, Insert, DEFAULT_BUCKET_SIZE, DEFAULT_CAPACITY, DEFAULT_EXPANSION,
    DEFAULT_MAX_ITERATIONS, MAX_BUCKET_SIZE, MAX_EXPANSION, MAX_ITERATIONS,
};
use crate::config;
use crate::memory::{self, Footprint, ServerLimit};
use crate::types::CUCKOO_TYPE;

fn create_error(e: CreateError) -> RedisError {
    match e {
        CreateError::TooLarge(refusal) => super::too_large(refusal, "ask for a smaller capacity"),
        CreateError::Invalid => error("ERR Insufficient memory to create filter"),
    }
}

/// An insert that did not store the item, as an error reply.
fn insert_error(status: Insert) -> &'static CStr {
    match status {
        Insert::NoSpace => c"Filter is full",
        Insert::TooLarge(refusal) => growth_refused(
            &refusal,
            c"ERR adding a sub-filter would pass the per-key memory limit (module argument MAX_KEY_MEMORY)",
            c"ERR adding a sub-filter would pass the server's memory limit (maxmemory with \
              noeviction, module argument MAX_MEMORY, or three quarters of the machine's memory)",
        ),
        Insert::CannotGrow | Insert::Inserted | Insert::Exists => c"Memory allocation failure",
    }
}

/// A ranged `CF.RESERVE` option, found as RedisBloom finds it ([`arg_index`]):
/// "Couldn't parse NAME" or "NAME: value must be an integer between min and max,
/// inclusive.", or `default` when the keyword is absent. A keyword in last place has no
/// value: "Couldn't parse NAME" (RedisBloom reads past its arguments there).
fn reserve_option(
    args: &[Arg],
    name: &str,
    (min, max): (i64, i64),
    default: u16,
) -> Result<u16, RedisError> {
    let Some(at) = arg_index(args, name) else {
        return Ok(default);
    };
    let value = args
        .get(at + 1)
        .and_then(|value| integer(value))
        .ok_or_else(|| error(&format!("Couldn't parse {name}")))?;
    if !(min..=max).contains(&value) {
        return Err(error(&format!(
            "{name}: value must be an integer between {min} and {max}, inclusive."
        )));
    }
    Ok(value as u16)
}

/// `CF.RESERVE key capacity [BUCKETSIZE b] [MAXITERATIONS i] [EXPANSION e]`
///
/// As RedisBloom reads it: an odd number of arguments; the capacity; then MAXITERATIONS,
/// BUCKETSIZE and EXPANSION in that order, each the first argument spelled so (the key
/// included); other arguments are ignored.
pub fn cf_reserve(ctx: &Context, args: &[Arg]) -> RedisResult {
    if args.len() < 3 || args.len().is_multiple_of(2) {
        return Err(RedisError::WrongArity);
    }
    let capacity = integer(&args[2]).ok_or_else(|| error("Bad capacity"))?;
    let max_iterations = reserve_option(
        args,
        "MAXITERATIONS",
        (1, MAX_ITERATIONS as i64),
        DEFAULT_MAX_ITERATIONS,
    )?;
    let bucket_size = reserve_option(
        args,
        "BUCKETSIZE",
        (1, MAX_BUCKET_SIZE as i64),
        DEFAULT_BUCKET_SIZE,
    )?;
    let expansion = reserve_option(
        args,
        "EXPANSION",
        (0, MAX_EXPANSION as i64),
        DEFAULT_EXPANSION,
    )?;
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
        ServerLimit,
    )
    .map_err(create_error)?;
    memory::store(&key, &CUCKOO_TYPE, cf)?;
    ctx.replicate_verbatim();
    Ok(RedisValue::SimpleStringStatic("OK"))
}

/// Adds items to the filter at `key`, created with `capacity` when missing (if allowed).
/// Replies 1/0 for one item, or an array of 1 / 0 / −1 (not stored) for several.
///
/// A filter that already has `CF_MAX_EXPANSIONS` sub-filters refuses the whole command
/// ("Maximum expansions reached"), checked once before any item, as RedisBloom does; the
/// items of one command may then grow it further.
fn add_items(
    ctx: &Context,
    key_name: &RedisString,
    items: &[Arg],
    capacity: Option<u64>,
    unique: bool,
    multi: bool,
) -> RedisResult {
    let c = config::get();
    // The key as `glue::Key` (two API calls for the value); a filter made here is stored
    // through a second handle, which the filter then borrows from.
    let mut key = crate::glue::Key::open(ctx, key_name, true);
    let created;
    let cf = match key
        .value::<Cuckoo>(&CUCKOO_TYPE)
        .map_err(|_| RedisError::WrongType)?
    {
        Some(cf) => cf,
        None => {
            let Some(capacity) = capacity else {
                return Err(error("ERR not found"));
            };
            if capacity < DEFAULT_BUCKET_SIZE as u64 * 2 {
                return Err(error("ERR Could not create filter"));
            }
            let cf = Cuckoo::new(
                capacity,
                DEFAULT_BUCKET_SIZE,
                DEFAULT_MAX_ITERATIONS,
                DEFAULT_EXPANSION,
                ServerLimit,
            )
            .map_err(create_error)?;
            created = ctx.open_key_writable(key_name);
            memory::store(&created, &CUCKOO_TYPE, cf)?;
            created
                .get_value::<Cuckoo>(&CUCKOO_TYPE)?
                .ok_or_else(|| error("ERR Insufficient memory to create filter"))?
        }
    };
    if cf.filters().len() as u64 >= c.cf_max_expansions {
        return Err(error("Maximum expansions reached"));
    }
    // Inlined into both loops below: as a closure it was a call per item (callgrind: 20
    // instructions per item of `CF.INSERTNX` spent entering and leaving it).
    #[inline(always)]
    fn insert(cf: &mut Cuckoo, item: &RedisString, unique: bool) -> Insert {
        if unique {
            cf.insert_unique(item.as_slice(), ServerLimit)
        } else {
            cf.insert(item.as_slice(), ServerLimit)
        }
    }
    if !multi {
        let reply = match insert(cf, &items[0], unique) {
            Insert::Inserted => Ok(RedisValue::Integer(1)),
            Insert::Exists => Ok(RedisValue::Integer(0)),
            other => Err(error(&insert_error(other).to_string_lossy())),
        };
        // Replicated either way, as the command ran (a refused add changes nothing, and
        // the replica refuses it too).
        ctx.replicate_verbatim();
        return reply;
    }
    let reply = Reply::new(ctx);
    reply.array(items.len());
    for item in items {
        match insert(cf, item, unique) {
            Insert::Inserted => reply.int(1),
            Insert::Exists => reply.int(0),
            Insert::NoSpace | Insert::CannotGrow => reply.int(-1),
            other => reply.error(insert_error(other)),
        }
    }
    ctx.replicate_verbatim();
    replied()
}

/// `CF.ADD key item`
pub fn cf_add(ctx: &Context, args: &[Arg]) -> RedisResult {
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
pub fn cf_addnx(ctx: &Context, args: &[Arg]) -> RedisResult {
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

/// `CF.INSERT`/`CF.INSERTNX key [CAPACITY c] [NOCREATE] ITEMS item…`, read as RedisBloom
/// reads them: by first letter, left to right (`c…` capacity, checked at once; `i…` the
/// items; any `n…` NOCREATE); a repeated CAPACITY's last value wins; the capacity only
/// matters when the key is created.
fn insert_common(ctx: &Context, args: &[Arg], unique: bool) -> RedisResult {
    if args.len() < 4 {
        return Err(RedisError::WrongArity);
    }
    let mut capacity = DEFAULT_CAPACITY as i64;
    let mut nocreate = false;
    let mut items = None;
    let mut i = 2;
    while i < args.len() && items.is_none() {
        let arg = &args[i];
        i += 1;
        match first_letter(arg, 0) {
            Some(b'c') => {
                let value = args.get(i).ok_or(RedisError::WrongArity)?;
                i += 1;
                capacity = integer(value).ok_or_else(|| error("Bad capacity"))?;
                if capacity < DEFAULT_BUCKET_SIZE as i64 * 2 {
                    return Err(error("Capacity must be at least (BucketSize * 2)"));
                }
            }
            Some(b'i') => items = Some(i),
            Some(b'n') => nocreate = true,
            _ => return Err(error("Unknown argument received")),
        }
    }
    let items = match items {
        Some(start) if start < args.len() => &args[start..],
        _ => return Err(RedisError::WrongArity),
    };
    let capacity = (!nocreate).then_some(capacity as u64);
    add_items(ctx, &args[1], items, capacity, unique, true)
}

/// `CF.INSERT key [CAPACITY c] [NOCREATE] ITEMS item…`
pub fn cf_insert(ctx: &Context, args: &[Arg]) -> RedisResult {
    insert_common(ctx, args, false)
}

/// `CF.INSERTNX key [CAPACITY c] [NOCREATE] ITEMS item…`
pub fn cf_insertnx(ctx: &Context, args: &[Arg]) -> RedisResult {
    insert_common(ctx, args, true)
}

/// The filter at `key` for `CF.EXISTS`/`CF.MEXISTS`/`CF.COUNT`: a key of another type
/// reads as missing (0), as in RedisBloom.
fn with_cuckoo_or_none<R>(
    ctx: &Context,
    key_name: &RedisString,
    f: impl FnOnce(Option<&Cuckoo>) -> R,
) -> R {
    let mut key = crate::glue::Key::open(ctx, key_name, false);
    f(key
        .value::<Cuckoo>(&CUCKOO_TYPE)
        .ok()
        .flatten()
        .map(|v| &*v))
}

fn with_cuckoo<R>(
    ctx: &Context,
    key_name: &RedisString,
    f: impl FnOnce(Option<&Cuckoo>) -> Result<R, RedisError>,
) -> Result<R, RedisError> {
    let mut key = crate::glue::Key::open(ctx, key_name, false);
    let cf = key
        .value::<Cuckoo>(&CUCKOO_TYPE)
        .map_err(|_| RedisError::WrongType)?;
    f(cf.map(|v| &*v))
}

/// `CF.EXISTS key item`
pub fn cf_exists(ctx: &Context, args: &[Arg]) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    with_cuckoo_or_none(ctx, &args[1], |cf| {
        Ok(RedisValue::Integer(
            cf.is_some_and(|c| c.contains(args[2].as_slice())) as i64,
        ))
    })
}

/// `CF.MEXISTS key item [item …]`
pub fn cf_mexists(ctx: &Context, args: &[Arg]) -> RedisResult {
    if args.len() < 3 {
        return Err(RedisError::WrongArity);
    }
    with_cuckoo_or_none(ctx, &args[1], |cf| {
        let reply = Reply::new(ctx);
        reply.array(args.len() - 2);
        for item in &args[2..] {
            reply.int(cf.is_some_and(|c| c.contains(item.as_slice())) as i64);
        }
        replied()
    })
}

/// `CF.COUNT key item`
pub fn cf_count(ctx: &Context, args: &[Arg]) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    with_cuckoo_or_none(ctx, &args[1], |cf| {
        Ok(RedisValue::Integer(
            cf.map_or(0, |c| c.count(args[2].as_slice()) as i64),
        ))
    })
}

/// A compaction may drop sub-filters (never the first): their bytes come off the count of
/// what filters hold, as the [`Footprint`] measures them. Only a filter of more than one
/// sub-filter is measured, so a `CF.DEL` on a filter of one costs nothing more.
struct Shrink {
    filters: usize,
    bytes: u64,
}

impl Shrink {
    fn of(cf: &Cuckoo) -> Self {
        let filters = cf.filters().len();
        let bytes = if filters > 1 { cf.footprint() } else { 0 };
        Self { filters, bytes }
    }

    fn count(self, cf: &Cuckoo) {
        if cf.filters().len() < self.filters {
            memory::resized(self.bytes, cf.footprint());
        }
    }
}

/// `CF.DEL key item`: "Not found" for a missing key or a key of another type.
pub fn cf_del(ctx: &Context, args: &[Arg]) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    let key = ctx.open_key_writable(&args[1]);
    let cf = key
        .get_value::<Cuckoo>(&CUCKOO_TYPE)
        .ok()
        .flatten()
        .ok_or_else(|| error("Not found"))?;
    let shrink = Shrink::of(cf);
    let deleted = cf.delete(args[2].as_slice());
    shrink.count(cf);
    ctx.replicate_verbatim();
    Ok(RedisValue::Integer(deleted as i64))
}

/// `CF.COMPACT key`: "Cuckoo filter was not found" for a missing key or another type.
pub fn cf_compact(ctx: &Context, args: &[Arg]) -> RedisResult {
    if args.len() != 2 {
        return Err(RedisError::WrongArity);
    }
    let key = ctx.open_key_writable(&args[1]);
    let cf = key
        .get_value::<Cuckoo>(&CUCKOO_TYPE)
        .ok()
        .flatten()
        .ok_or_else(|| error("Cuckoo filter was not found"))?;
    let shrink = Shrink::of(cf);
    cf.compact(true);
    shrink.count(cf);
    ctx.replicate_verbatim();
    Ok(RedisValue::SimpleStringStatic("OK"))
}

/// `CF.INFO key`
pub fn cf_info(ctx: &Context, args: &[Arg]) -> RedisResult {
    if args.len() != 2 {
        return Err(RedisError::WrongArity);
    }
    with_cuckoo(ctx, &args[1], |cf| {
        let cf = cf.ok_or_else(|| error("ERR not found"))?;
        Reply::new(ctx).pairs(
            &[
                &status::SIZE,
                &status::NUMBER_OF_BUCKETS,
                &status::NUMBER_OF_FILTERS,
                &status::NUMBER_OF_ITEMS_INSERTED,
                &status::NUMBER_OF_ITEMS_DELETED,
                &status::BUCKET_SIZE,
                &status::EXPANSION_RATE,
                &status::MAX_ITERATIONS,
            ],
            &[
                cf.memory_bytes() as i64,
                cf.num_buckets() as i64,
                cf.filters().len() as i64,
                cf.num_items() as i64,
                cf.num_deletes() as i64,
                cf.bucket_size() as i64,
                cf.expansion() as i64,
                cf.max_iterations() as i64,
            ],
        );
        replied()
    })
}

/// `CF.DEBUG key`
pub fn cf_debug(ctx: &Context, args: &[Arg]) -> RedisResult {
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
pub fn cf_scandump(ctx: &Context, args: &[Arg]) -> RedisResult {
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
/// exists"), the header 38 bytes long, or 39 with RedisBloom 2.0's hashing ("Invalid
/// header"; see [`Cuckoo::header`]), and make a filter ("Couldn't
/// create filter!"); elsewhere the chunk must fit a sub-filter ("Couldn't load chunk!").
pub fn cf_loadchunk(ctx: &Context, args: &[Arg]) -> RedisResult {
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
        if !Cuckoo::header_len_ok(data.len()) {
            return Err(error("Invalid header"));
        }
        let cf = Cuckoo::from_header(data, ServerLimit).map_err(|e| match e {
            CreateError::Invalid => error("Couldn't create filter!"),
            CreateError::TooLarge(refusal) => {
                super::too_large(refusal, "ask for a smaller capacity")
            }
        })?;
        memory::store(&key, &CUCKOO_TYPE, cf)?;
    } else {
        let cf = existing?.ok_or_else(|| error("ERR not found"))?;
        if !cf.load_chunk(iter, data) {
            return Err(error("Couldn't load chunk!"));
        }
    }
    ctx.replicate_verbatim();
    Ok(RedisValue::SimpleStringStatic("OK"))
}
