//! `TOPK.*`: RedisBloom 2.4's top-k commands, with its replies, error strings and order of
//! checks.
//!
//! Items come back as RedisBloom sends them, status strings (`+item`), except those a
//! status string cannot carry: an item holding a NUL, CR or LF comes back whole as a bulk
//! string (RedisBloom cuts it at the first NUL, and a CR LF in it breaks the reply stream).

use redis_module::{Context, RedisError, RedisResult, RedisValue};

use super::cms::refused;
use super::{error, float, integer, replied, status, Arg, Reply, INLINE_VALUES};
use crate::glue::{self, c_rand_unit, Key};
use crate::memory::{self, ServerLimit};
use crate::topk::{
    CreateError, Item, Topk, DEFAULT_DECAY, DEFAULT_DEPTH, DEFAULT_WIDTH, MAX_INCREMENT,
};
use crate::types::TOPK_TYPE;

const NOT_FOUND: &str = "TopK: key does not exist";

/// RedisBloom's text, a C string literal continued over a line inside the string: the
/// backslash and the newline go, the spaces around them stay.
const BAD_INCREMENT: &std::ffi::CStr = c"TopK: increment must be an integer greater or equal to 0                            and smaller or equal to 100,000";

/// An item as a reply element (see the module docs); a slot without an item answers an
/// empty status string. The item goes to Redis as the top-k stores it, NUL-terminated,
/// without a copy.
#[inline(always)]
fn item_reply(reply: &Reply, item: Option<&Item>) {
    match item {
        None => reply.status(&status::EMPTY),
        Some(item) => match item.status_text() {
            Some(text) => reply.simple_nul(text),
            None => reply.bulk(item.bytes()),
        },
    }
}

/// A whole-range `u32` argument of at least 1, or `what` as the error.
fn positive_u32(arg: &Arg, what: &str) -> Result<u32, RedisError> {
    integer(arg)
        .filter(|v| (1..=u32::MAX as i64).contains(v))
        .map(|v| v as u32)
        .ok_or_else(|| error(what))
}

/// `TOPK.RESERVE key k [width depth decay]`: an existing key of any type first ("TopK: key
/// already exists"), then `k`, width, depth (1 to 2³² − 1) and decay (in (0, 1]).
pub fn topk_reserve(ctx: &Context, args: &[Arg]) -> RedisResult {
    if args.len() != 3 && args.len() != 6 {
        return Err(RedisError::WrongArity);
    }
    let key = ctx.open_key_writable(&args[1]);
    if !key.is_empty() {
        return Err(error("TopK: key already exists"));
    }
    let k = positive_u32(&args[2], "TopK: invalid k")?;
    let (width, depth, decay) = if args.len() == 6 {
        (
            positive_u32(&args[3], "TopK: invalid width")?,
            positive_u32(&args[4], "TopK: invalid depth")?,
            float(&args[5])
                .filter(|d| *d > 0.0 && *d <= 1.0)
                .ok_or_else(|| error("TopK: invalid decay value. must be '<= 1' & '> 0'"))?,
        )
    } else {
        (DEFAULT_WIDTH, DEFAULT_DEPTH, DEFAULT_DECAY)
    };
    const NO_MEMORY: &str = "ERR Insufficient memory to create topk data structure";
    let topk = Topk::new(k, width, depth, decay, ServerLimit).map_err(|e| match e {
        CreateError::Unaddressable => error(NO_MEMORY),
        CreateError::TooLarge(refusal) => refused(NO_MEMORY, "top-k", refusal),
    })?;
    memory::store(&key, &TOPK_TYPE, topk)?;
    glue::replicate_verbatim(ctx);
    Ok(RedisValue::SimpleStringStatic("OK"))
}

/// The top-k at `key`: "TopK: key does not exist", WRONGTYPE.
#[inline(always)]
fn existing(key: &mut Key) -> Result<&mut Topk, RedisError> {
    key.value::<Topk>(&TOPK_TYPE)
        .map_err(|_| RedisError::WrongType)?
        .ok_or_else(|| error(NOT_FOUND))
}

/// Refuses, before anything changes, items whose copies could take the top-k past the
/// memory limits if every one of them entered the heap (each copy is made only when an
/// item enters it).
fn admit_items<'a>(topk: &Topk, items: impl Iterator<Item = &'a [u8]>) -> Result<(), RedisError> {
    let bytes = items.fold(0u64, |n, item| n.saturating_add(item.len() as u64));
    topk.admit_items(bytes, &ServerLimit)
        .map_err(|refusal| refused("ERR these items", "top-k", refusal))
}

/// One add's reply element: the expelled item (sent before the top-k reuses its storage),
/// or nil.
#[inline(always)]
fn expelled_reply<'r>(reply: &'r Reply<'r>) -> impl FnOnce(Option<&Item>) + 'r {
    move |expelled| match expelled {
        None => reply.null(),
        item => item_reply(reply, item),
    }
}

/// `TOPK.ADD key item…`: per item, the item it expelled from the list, or nil.
pub fn topk_add(ctx: &Context, args: &[Arg]) -> RedisResult {
    let [_, name, items @ ..] = args else {
        return Err(RedisError::WrongArity);
    };
    if items.is_empty() {
        return Err(RedisError::WrongArity);
    }
    let mut key = Key::open(ctx, name, true);
    // Each item's bytes asked of Redis once, for the check and the add: one item (the
    // common call) as it is, up to INLINE_VALUES on the stack, more in a vector.
    match items {
        [item] => add_items(ctx, existing(&mut key)?, &[glue::bytes(item)]),
        _ => {
            let topk = existing(&mut key)?;
            if items.len() <= INLINE_VALUES {
                let mut inline: [&[u8]; INLINE_VALUES] = [&[]; INLINE_VALUES];
                for (slot, item) in inline.iter_mut().zip(items) {
                    *slot = glue::bytes(item);
                }
                add_items(ctx, topk, &inline[..items.len()])
            } else {
                let spilled: Vec<&[u8]> = items.iter().map(|item| glue::bytes(item)).collect();
                add_items(ctx, topk, &spilled)
            }
        }
    }
}

/// `TOPK.ADD`'s work once its items are read: the memory check, the adds and their reply,
/// the count of the bytes held, the replication.
#[inline(always)]
fn add_items(ctx: &Context, topk: &mut Topk, items: &[&[u8]]) -> RedisResult {
    admit_items(topk, items.iter().copied())?;
    let before = topk.memory_bytes();
    let reply = Reply::new(ctx);
    reply.array(items.len());
    let mut chance = c_rand_unit;
    for item in items {
        topk.add(item, 1, &mut chance, expelled_reply(&reply));
    }
    memory::resized(before, topk.memory_bytes());
    glue::replicate_verbatim(ctx);
    replied()
}

/// `TOPK.INCRBY key item increment [item increment …]`, increments from 0 to 100 000. As
/// RedisBloom, pairs are added in order up to one with a bad increment, which answers the
/// error; the pairs after it are not added and answer the same error (RedisBloom sends no
/// element for them, leaving the reply array short), and the command is replicated as it
/// ran.
pub fn topk_incrby(ctx: &Context, args: &[Arg]) -> RedisResult {
    if args.len() < 4 || args.len() % 2 == 1 {
        return Err(RedisError::WrongArity);
    }
    let mut key = Key::open(ctx, &args[1], true);
    let topk = existing(&mut key)?;
    // Each pair read once (the item's bytes, the increment if valid): one pair (the common
    // call) as it is, up to INLINE_VALUES on the stack, more in a vector.
    fn read(pair: &[Arg]) -> (&[u8], Option<u32>) {
        let increment = integer(&pair[1]).filter(|v| (0..=MAX_INCREMENT as i64).contains(v));
        (glue::bytes(&pair[0]), increment.map(|v| v as u32))
    }
    let pairs = &args[2..];
    if pairs.len() == 2 {
        incr_pairs(ctx, topk, &[read(pairs)])
    } else if pairs.len() / 2 <= INLINE_VALUES {
        let mut inline: [(&[u8], Option<u32>); INLINE_VALUES] = [(&[], None); INLINE_VALUES];
        for (slot, pair) in inline.iter_mut().zip(pairs.chunks_exact(2)) {
            *slot = read(pair);
        }
        incr_pairs(ctx, topk, &inline[..pairs.len() / 2])
    } else {
        let spilled: Vec<_> = pairs.chunks_exact(2).map(read).collect();
        incr_pairs(ctx, topk, &spilled)
    }
}

/// `TOPK.INCRBY`'s work once its pairs are read (`None`: an increment out of range).
#[inline(always)]
fn incr_pairs(ctx: &Context, topk: &mut Topk, pairs: &[(&[u8], Option<u32>)]) -> RedisResult {
    admit_items(topk, pairs.iter().map(|&(item, _)| item))?;
    let before = topk.memory_bytes();
    let reply = Reply::new(ctx);
    reply.array(pairs.len());
    let mut chance = c_rand_unit;
    let mut failed = false;
    for &(item, increment) in pairs {
        match increment {
            Some(increment) if !failed => {
                topk.add(item, increment, &mut chance, expelled_reply(&reply))
            }
            _ => {
                failed = true;
                reply.error(BAD_INCREMENT);
            }
        }
    }
    memory::resized(before, topk.memory_bytes());
    glue::replicate_verbatim(ctx);
    replied()
}

/// `TOPK.QUERY key item…`: 1 for an item in the list, else 0.
pub fn topk_query(ctx: &Context, args: &[Arg]) -> RedisResult {
    if args.len() < 3 {
        return Err(RedisError::WrongArity);
    }
    let mut key = Key::open(ctx, &args[1], false);
    let topk = existing(&mut key)?;
    let reply = Reply::new(ctx);
    reply.array(args.len() - 2);
    for item in &args[2..] {
        reply.int(topk.query(glue::bytes(item)) as i64);
    }
    replied()
}

/// `TOPK.COUNT key item…`: each item's estimate.
pub fn topk_count(ctx: &Context, args: &[Arg]) -> RedisResult {
    if args.len() < 3 {
        return Err(RedisError::WrongArity);
    }
    let mut key = Key::open(ctx, &args[1], false);
    let topk = existing(&mut key)?;
    let reply = Reply::new(ctx);
    reply.array(args.len() - 2);
    for item in &args[2..] {
        reply.int(topk.count(glue::bytes(item)) as i64);
    }
    replied()
}

/// `TOPK.LIST key [WITHCOUNT]`: the items, largest count first (with their counts). The
/// keyword is checked before the key, and as RedisBloom compares it any prefix of
/// `WITHCOUNT` is taken for it, the empty string too.
pub fn topk_list(ctx: &Context, args: &[Arg]) -> RedisResult {
    if args.len() != 2 && args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    let with_count = match args.get(2) {
        None => false,
        Some(arg) => {
            let arg = glue::bytes(arg);
            if arg.len() <= 9 && b"WITHCOUNT"[..arg.len()].eq_ignore_ascii_case(arg) {
                true
            } else {
                return Err(error("WITHCOUNT keyword expected"));
            }
        }
    };
    let mut key = Key::open(ctx, &args[1], false);
    let topk = existing(&mut key)?;
    let list = topk.list();
    let reply = Reply::new(ctx);
    reply.array(list.len() * if with_count { 2 } else { 1 });
    for (item, count) in list {
        item_reply(&reply, item);
        if with_count {
            reply.int(count as i64);
        }
    }
    replied()
}

/// `TOPK.INFO key`: `k`, `width`, `depth` and `decay` (a double: a bulk string in RESP2).
pub fn topk_info(ctx: &Context, args: &[Arg]) -> RedisResult {
    if args.len() != 2 {
        return Err(RedisError::WrongArity);
    }
    let mut key = Key::open(ctx, &args[1], false);
    let topk = existing(&mut key)?;
    let reply = Reply::new(ctx);
    reply.array(8);
    for (label, value) in [
        (&status::K, topk.k()),
        (&status::WIDTH, topk.width()),
        (&status::DEPTH, topk.depth()),
    ] {
        reply.status(label);
        reply.int(value as i64);
    }
    reply.status(&status::DECAY);
    reply.double(topk.decay());
    replied()
}
