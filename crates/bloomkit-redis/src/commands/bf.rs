//! `BF.*`: RedisBloom 2.4's Bloom filter commands.

use redis_module::{Context, RedisError, RedisResult, RedisString, RedisValue};

use std::ffi::CStr;

use super::{
    arg_index, error, first_letter, float, growth_refused, integer, is, replied, status,
    wrong_type, Arg, Reply,
};
use crate::bf::{BfError, Chain, ChunkError, HeaderError};
use crate::config::{self, Config, Limit};
use crate::memory::{self, ServerLimit};
use crate::types::BLOOM_TYPE;

/// RedisBloom's default expansion.
const DEFAULT_EXPANSION: u32 = 2;

/// The reply to an add that could not be done (an error element inside MADD/INSERT arrays).
fn add_error(e: &BfError) -> &'static CStr {
    match e {
        BfError::NonScalingFull => c"ERR non scaling filter is full",
        BfError::TooLarge(refusal) => growth_refused(
            refusal,
            c"ERR adding a layer would pass the per-key memory limit (module argument MAX_KEY_MEMORY)",
            c"ERR adding a layer would pass the server's memory limit (maxmemory with noeviction, \
              module argument MAX_MEMORY, or three quarters of the machine's memory)",
        ),
        BfError::CannotGrow => c"ERR could not add a layer to the filter (capacity or error rate out of range)",
        BfError::OutOfMemory => c"ERR could not allocate memory for the filter",
    }
}

/// One item's answer to an add: 1 added, 0 present. A layer that cannot be made (an
/// expansion of 0, a capacity that overflows) answers 1 and stores nothing: RedisBloom's
/// add returns −1 there and its reply is `!!rv`.
fn add_answer(chain: &mut Chain, item: &RedisString, limit: impl Limit) -> Result<i64, BfError> {
    match chain.add(item.as_slice(), limit) {
        Ok(added) => Ok(added as i64),
        Err(BfError::CannotGrow) => Ok(1),
        Err(e) => Err(e),
    }
}

fn too_large(refusal: config::Refusal) -> RedisError {
    super::too_large(refusal, "ask for a smaller capacity or a larger error rate")
}

fn create_error(e: BfError) -> RedisError {
    match e {
        BfError::TooLarge(refusal) => too_large(refusal),
        _ => error("ERR could not create filter"),
    }
}

/// `BF.RESERVE key error_rate capacity [EXPANSION expansion] [NONSCALING]`
///
/// As RedisBloom reads it: 4 to 7 arguments; the rate, then the capacity, are checked
/// first; `NONSCALING` and `EXPANSION` are found wherever they are (the key included, see
/// [`arg_index`]) and anything else is ignored. The expansion is any integer, kept as C's
/// `unsigned` keeps it (modulo 2³²): 0 makes a filter that never adds a layer, whose adds
/// then answer 1 without storing anything, as RedisBloom's do.
pub fn bf_reserve(ctx: &Context, args: &[Arg]) -> RedisResult {
    if !(4..=7).contains(&args.len()) {
        return Err(RedisError::WrongArity);
    }
    let rate = float(&args[2]).ok_or_else(|| error("ERR bad error rate"))?;
    if !(rate > 0.0 && rate < 1.0) {
        return Err(error("ERR (0 < error rate range < 1) "));
    }
    let capacity = integer(&args[3]).ok_or_else(|| error("ERR bad capacity"))?;
    if capacity <= 0 {
        return Err(error("ERR (capacity should be larger than 0)"));
    }
    let nonscaling = arg_index(args, "NONSCALING").is_some();
    let mut expansion = DEFAULT_EXPANSION;
    if let Some(at) = arg_index(args, "EXPANSION") {
        let value = args.get(at + 1).ok_or_else(|| error("ERR no expansion"))?;
        if nonscaling {
            return Err(error("Nonscaling filters cannot expand"));
        }
        expansion = integer(value).ok_or_else(|| error("ERR bad expansion"))? as u32;
    }
    let key = ctx.open_key_writable(&args[1]);
    if key
        .get_value::<Chain>(&BLOOM_TYPE)
        .map_err(wrong_type)?
        .is_some()
    {
        return Err(error("ERR item exists"));
    }
    let chain = Chain::new(capacity as u64, rate, expansion, nonscaling, ServerLimit)
        .map_err(create_error)?;
    memory::store(&key, &BLOOM_TYPE, chain)?;
    ctx.replicate_verbatim();
    Ok(RedisValue::SimpleStringStatic("OK"))
}

/// How to create a missing filter on an add.
struct Create {
    capacity: u64,
    rate: f64,
    expansion: u32,
    nonscaling: bool,
}

impl Create {
    /// The module's defaults (`config` is read once per command: it is behind a lock).
    fn defaults(c: &Config) -> Self {
        Self {
            capacity: c.initial_size,
            rate: c.error_rate,
            expansion: DEFAULT_EXPANSION,
            nonscaling: false,
        }
    }
}

/// Adds items to the filter at `key` (created when missing, if `create` says how) and
/// replies with one integer, or an array when `multi`. The array stops after the first
/// "non scaling filter is full", as RedisBloom's does.
fn add_items(
    ctx: &Context,
    key_name: &RedisString,
    items: &[Arg],
    create: Option<Create>,
    multi: bool,
) -> RedisResult {
    let limit = ServerLimit;
    // The key as `glue::Key` (two API calls for the value); a filter made here is stored
    // through a second handle, which the filter then borrows from.
    let mut key = crate::glue::Key::open(ctx, key_name, true);
    let created;
    let chain = match key
        .value::<Chain>(&BLOOM_TYPE)
        .map_err(|_| RedisError::WrongType)?
    {
        Some(chain) => chain,
        None => {
            let Some(c) = create else {
                return Err(error("ERR not found"));
            };
            let chain = Chain::new(c.capacity, c.rate, c.expansion, c.nonscaling, limit)
                .map_err(create_error)?;
            created = ctx.open_key_writable(key_name);
            memory::store(&created, &BLOOM_TYPE, chain)?;
            created
                .get_value::<Chain>(&BLOOM_TYPE)?
                .ok_or_else(|| error("ERR could not create filter"))?
        }
    };
    let reply = Reply::new(ctx);
    if !multi {
        let answer = add_answer(chain, &items[0], limit);
        ctx.replicate_verbatim();
        return match answer {
            Ok(n) => Ok(RedisValue::Integer(n)),
            Err(e) => Err(error(&add_error(&e).to_string_lossy())),
        };
    }
    if chain.is_nonscaling() {
        // The array ends at the first "full", so its length is known only at the end.
        let mut answers = Vec::with_capacity(items.len());
        let mut full = None;
        for item in items {
            match add_answer(chain, item, limit) {
                Ok(n) => answers.push(n),
                Err(e) => {
                    full = Some(e);
                    break;
                }
            }
        }
        reply.array(answers.len() + full.is_some() as usize);
        answers.into_iter().for_each(|n| reply.int(n));
        if let Some(e) = full {
            reply.error(add_error(&e));
        }
    } else {
        reply.array(items.len());
        for item in items {
            match add_answer(chain, item, limit) {
                Ok(n) => reply.int(n),
                Err(e) => reply.error(add_error(&e)),
            }
        }
    }
    ctx.replicate_verbatim();
    replied()
}

/// `BF.ADD key item`
pub fn bf_add(ctx: &Context, args: &[Arg]) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    let c = config::get();
    let create = Some(Create::defaults(&c));
    add_items(ctx, &args[1], &args[2..], create, false)
}

/// `BF.MADD key item [item …]`
pub fn bf_madd(ctx: &Context, args: &[Arg]) -> RedisResult {
    if args.len() < 3 {
        return Err(RedisError::WrongArity);
    }
    let c = config::get();
    let create = Some(Create::defaults(&c));
    add_items(ctx, &args[1], &args[2..], create, true)
}

/// `BF.INSERT key [CAPACITY c] [ERROR e] [EXPANSION n] [NOCREATE] [NONSCALING] ITEMS item…`
///
/// Options are read left to right by their first letters, as RedisBloom does: `i…` starts
/// the items, `c…` is the capacity, `er…` the error rate and any other `e…` the expansion,
/// `n?c…` NOCREATE and any other `n…` NONSCALING; a repeated option's last value wins.
/// Values are range-checked only after the items are found ("Bad argument received"), and
/// no combination of options is refused.
pub fn bf_insert(ctx: &Context, args: &[Arg]) -> RedisResult {
    if args.len() < 4 {
        return Err(RedisError::WrongArity);
    }
    let c = config::get();
    let mut create = Create::defaults(&c);
    let (mut capacity, mut expansion) = (create.capacity as i64, create.expansion as i64);
    let mut nocreate = false;
    let mut items = None;
    let mut i = 2;
    while i < args.len() && items.is_none() {
        let arg = &args[i];
        i += 1;
        match first_letter(arg, 0) {
            Some(b'i') => items = Some(i),
            Some(b'n') => {
                if first_letter(arg, 2) == Some(b'c') {
                    nocreate = true;
                } else {
                    create.nonscaling = true;
                }
            }
            Some(letter @ (b'c' | b'e')) => {
                let value = args.get(i).ok_or(RedisError::WrongArity)?;
                i += 1;
                if letter == b'c' {
                    capacity = integer(value).ok_or_else(|| error("Bad capacity"))?;
                } else if first_letter(arg, 1) == Some(b'r') {
                    create.rate = float(value).ok_or_else(|| error("Bad error rate"))?;
                } else {
                    expansion = integer(value).ok_or_else(|| error("Bad expansion"))?;
                }
            }
            _ => return Err(error("Unknown argument received")),
        }
    }
    let items = match items {
        Some(start) if start < args.len() => &args[start..],
        _ => return Err(RedisError::WrongArity),
    };
    if !(create.rate > 0.0 && create.rate < 1.0) || capacity < 1 || expansion < 1 {
        return Err(error("Bad argument received"));
    }
    create.capacity = capacity as u64;
    create.expansion = expansion as u32;
    let create = (!nocreate).then_some(create);
    add_items(ctx, &args[1], items, create, true)
}

/// Opens a filter for reading: `None` when the key is missing, WRONGTYPE for other types.
fn with_chain<R>(
    ctx: &Context,
    key_name: &RedisString,
    f: impl FnOnce(Option<&Chain>) -> Result<R, RedisError>,
) -> Result<R, RedisError> {
    let mut key = crate::glue::Key::open(ctx, key_name, false);
    let chain = key
        .value::<Chain>(&BLOOM_TYPE)
        .map_err(|_| RedisError::WrongType)?;
    f(chain.map(|v| &*v))
}

/// The filter at `key` for `BF.EXISTS`/`BF.MEXISTS`: a key of another type reads as
/// missing (every item 0), as in RedisBloom.
fn with_chain_or_none<R>(
    ctx: &Context,
    key_name: &RedisString,
    f: impl FnOnce(Option<&Chain>) -> R,
) -> R {
    let mut key = crate::glue::Key::open(ctx, key_name, false);
    f(key.value::<Chain>(&BLOOM_TYPE).ok().flatten().map(|v| &*v))
}

/// `BF.EXISTS key item`
pub fn bf_exists(ctx: &Context, args: &[Arg]) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    with_chain_or_none(ctx, &args[1], |chain| {
        Ok(RedisValue::Integer(
            chain.is_some_and(|c| c.contains(args[2].as_slice())) as i64,
        ))
    })
}

/// `BF.MEXISTS key item [item …]`
pub fn bf_mexists(ctx: &Context, args: &[Arg]) -> RedisResult {
    if args.len() < 3 {
        return Err(RedisError::WrongArity);
    }
    with_chain_or_none(ctx, &args[1], |chain| {
        let reply = Reply::new(ctx);
        reply.array(args.len() - 2);
        for item in &args[2..] {
            reply.int(chain.is_some_and(|c| c.contains(item.as_slice())) as i64);
        }
        replied()
    })
}

/// `BF.CARD key`
pub fn bf_card(ctx: &Context, args: &[Arg]) -> RedisResult {
    if args.len() != 2 {
        return Err(RedisError::WrongArity);
    }
    with_chain(ctx, &args[1], |chain| {
        Ok(RedisValue::Integer(chain.map_or(0, |c| c.size() as i64)))
    })
}

/// `BF.INFO key [CAPACITY | SIZE | FILTERS | ITEMS | EXPANSION]`
pub fn bf_info(ctx: &Context, args: &[Arg]) -> RedisResult {
    if !(2..=3).contains(&args.len()) {
        return Err(RedisError::WrongArity);
    }
    with_chain(ctx, &args[1], |chain| {
        let chain = chain.ok_or_else(|| error("ERR not found"))?;
        let expansion = (!chain.is_nonscaling()).then(|| chain.growth() as i64);
        let fields = [
            (&status::CAPACITY, "CAPACITY", Some(chain.capacity() as i64)),
            (&status::SIZE, "SIZE", Some(chain.memory_bytes() as i64)),
            (
                &status::NUMBER_OF_FILTERS,
                "FILTERS",
                Some(chain.layers().len() as i64),
            ),
            (
                &status::NUMBER_OF_ITEMS_INSERTED,
                "ITEMS",
                Some(chain.size() as i64),
            ),
            (&status::EXPANSION_RATE, "EXPANSION", expansion),
        ];
        let reply = Reply::new(ctx);
        let value = |v: Option<i64>| v.map_or_else(|| reply.null(), |n| reply.int(n));
        if let Some(wanted) = args.get(2) {
            let (_, _, v) = fields
                .into_iter()
                .find(|(_, name, _)| is(wanted, name))
                .ok_or_else(|| error("Invalid information value"))?;
            reply.array(1);
            value(v);
            return replied();
        }
        reply.array(fields.len() * 2);
        for (label, _, v) in fields {
            reply.status(label);
            value(v);
        }
        replied()
    })
}

/// `BF.DEBUG key`
pub fn bf_debug(ctx: &Context, args: &[Arg]) -> RedisResult {
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
pub fn bf_scandump(ctx: &Context, args: &[Arg]) -> RedisResult {
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
pub fn bf_loadchunk(ctx: &Context, args: &[Arg]) -> RedisResult {
    if args.len() != 4 {
        return Err(RedisError::WrongArity);
    }
    let iter = integer(&args[2]).ok_or_else(|| error("ERR Second argument must be numeric"))?;
    let data = args[3].as_slice();
    let key = ctx.open_key_writable(&args[1]);
    match key.get_value::<Chain>(&BLOOM_TYPE).map_err(wrong_type)? {
        None if iter == 1 => {
            let chain = Chain::from_header(data, ServerLimit).map_err(|e| match e {
                HeaderError::Invalid => error("ERR received bad data"),
                HeaderError::TooLarge(refusal) => too_large(refusal),
            })?;
            memory::store(&key, &BLOOM_TYPE, chain)?;
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
