//! `TOPK.*`: RedisBloom 2.4's top-k commands, with its replies, error strings and order of
//! checks.
//!
//! Items come back as RedisBloom sends them, status strings (`+item`), except those a
//! status string cannot carry: an item holding a NUL, CR or LF comes back whole as a bulk
//! string (RedisBloom cuts it at the first NUL, and a CR LF in it breaks the reply stream).
//!
//! # Replicas and the AOF get the master's draws
//!
//! HeavyKeeper's decay draws from the C library's `rand()` ([`crate::topk`]), which each
//! server seeds for itself. RedisBloom replicates `TOPK.ADD` and `TOPK.INCRBY` as they were
//! called, so a replica, and a server replaying its AOF, draws again and ends with other
//! counts and another list (seen here: after 3 000 `TOPK.ADD`s of two items each, k = 3,
//! master `y6 221, y5 213, y12 201`, replica `y6 219, y3 214, y5 214`); a failover then
//! changes the answers. This module replicates a command that drew as
//! `bloomkit.topk.replay KEY DRAWS ADD item…` or `… INCRBY item increment …`, DRAWS the
//! values `rand()` gave, 4 bytes each, little-endian, in the order they were drawn; the
//! replay runs the same code taking its draws from DRAWS, so the replica holds the
//! master's bytes. A command that drew nothing (no decay decision: every item met its own
//! or an empty bucket) is replicated as it was called, as RedisBloom does, and so is every
//! command of a server that no replica or AOF file reads ([`crate::replication`]: the
//! replay costs several thousand instructions a command). RedisBloom does
//! not know the replay: loading such an AOF stops at it ("unknown command"), and a
//! RedisBloom replica of this module logs it and skips that add.
//! The replay is an ordinary command: its DRAWS are checked (whole 4-byte values of at most
//! `RAND_MAX`), and a replay that runs out of them draws `RAND_MAX`, which never decays.

use redis_module::{Context, RedisError, RedisResult, RedisValue};

use super::cms::refused;
use super::{canned, error, float, integer, replied, status, Arg, Reply, INLINE_VALUES};
use crate::glue::{self, Key};
use crate::memory::{self, ServerLimit};
use crate::topk::{
    CreateError, Item, Topk, DEFAULT_DECAY, DEFAULT_DEPTH, DEFAULT_WIDTH, MAX_INCREMENT, RAND_MAX,
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

/// The whole reply of an add of one item: `[nil]` in one piece when it expelled nothing
/// (the usual answer), else the one-element array of the expelled item.
#[inline(always)]
fn single_reply<'r>(reply: &'r Reply<'r>) -> impl FnOnce(Option<&Item>) + 'r {
    move |expelled| {
        if expelled.is_none() && reply.canned(&canned::NIL) {
            return;
        }
        reply.array(1);
        expelled_reply(reply)(expelled);
    }
}

/// One draw of `rand()` from the C library's generator, as RedisBloom draws its decay
/// decisions (no replica or AOF file reads this server's commands).
#[inline(always)]
fn drawn() -> u32 {
    crate::clib::rand()
}

/// [`drawn`], the value kept (4 bytes, little-endian) for the replication.
#[inline(always)]
fn kept(kept: &mut Vec<u8>) -> u32 {
    let value = crate::clib::rand();
    kept.extend_from_slice(&value.to_le_bytes());
    value
}

/// The next of a replay's draws; `RAND_MAX` (which never decays) once they run out.
#[inline(always)]
fn replayed(values: &mut std::slice::ChunksExact<u8>) -> u32 {
    values.next().map_or(RAND_MAX, draw_value)
}

/// A replay's draws, or `None` for bytes that are not whole 4-byte values of at most
/// `RAND_MAX`.
fn replay_values(bytes: &[u8]) -> Option<std::slice::ChunksExact<'_, u8>> {
    let values = bytes.chunks_exact(4);
    let valid = values.remainder().is_empty() && values.clone().all(|v| draw_value(v) <= RAND_MAX);
    valid.then_some(values)
}

/// Replicates a command run here that kept the values it drew (`kept`): as it was called
/// when it drew nothing, else as a replay of `op` on `rest` with those values.
fn replicate_kept(ctx: &Context, name: &Arg, kept: &[u8], op: &std::ffi::CStr, rest: &[Arg]) {
    if kept.is_empty() {
        glue::replicate_verbatim(ctx);
    } else {
        glue::replicate_topk_replay(ctx, name, kept, op, rest);
    }
}

/// A 4-byte little-endian draw.
fn draw_value(bytes: &[u8]) -> u32 {
    u32::from_le_bytes(bytes.try_into().expect("4 bytes"))
}

/// The command `$op` (`ADD` or `INCRBY`) of `$args` (`TOPK.$op key rest…`): runs
/// `$work(ctx, name, rest, chance)` (`add` or `incrby`) with draws from the C library's
/// generator, kept only where a replica or an AOF file reads this server's commands, and
/// replicates it: with its draws when it kept some, else as it was called (RedisBloom's
/// command). A macro because `$work` is generic over the draws.
macro_rules! run_and_replicate {
    ($ctx:expr, $args:expr, $op:expr, $work:ident) => {{
        let [_, name, rest @ ..] = $args else {
            return Err(RedisError::WrongArity);
        };
        if crate::replication::read_elsewhere() {
            let mut values = Vec::new();
            $work($ctx, name, rest, &mut || kept(&mut values))?;
            replicate_kept($ctx, name, &values, $op, rest);
        } else {
            $work($ctx, name, rest, &mut drawn)?;
            glue::replicate_verbatim($ctx);
        }
        replied()
    }};
}

/// `TOPK.ADD key item…`: per item, the item it expelled from the list, or nil.
pub fn topk_add(ctx: &Context, args: &[Arg]) -> RedisResult {
    run_and_replicate!(ctx, args, c"ADD", add)
}

/// `TOPK.ADD`'s work on `items`, drawing with `chance`; replies, does not replicate.
#[inline(always)]
fn add(
    ctx: &Context,
    name: &Arg,
    items: &[Arg],
    chance: &mut impl FnMut() -> u32,
) -> Result<(), RedisError> {
    if items.is_empty() {
        return Err(RedisError::WrongArity);
    }
    let mut key = Key::open(ctx, name, true);
    // Each item's bytes asked of Redis once, for the check and the add: one item (the
    // common call) as it is, up to INLINE_VALUES on the stack, more in a vector.
    match items {
        [item] => add_items(ctx, existing(&mut key)?, &[glue::bytes(item)], chance),
        _ => {
            let topk = existing(&mut key)?;
            if items.len() <= INLINE_VALUES {
                let mut inline: [&[u8]; INLINE_VALUES] = [&[]; INLINE_VALUES];
                for (slot, item) in inline.iter_mut().zip(items) {
                    *slot = glue::bytes(item);
                }
                add_items(ctx, topk, &inline[..items.len()], chance)
            } else {
                let spilled: Vec<&[u8]> = items.iter().map(|item| glue::bytes(item)).collect();
                add_items(ctx, topk, &spilled, chance)
            }
        }
    }
}

/// `TOPK.ADD`'s work once its items are read: the memory check, the adds and their reply,
/// the count of the bytes held.
#[inline(always)]
fn add_items(
    ctx: &Context,
    topk: &mut Topk,
    items: &[&[u8]],
    chance: &mut impl FnMut() -> u32,
) -> Result<(), RedisError> {
    admit_items(topk, items.iter().copied())?;
    let before = topk.memory_bytes();
    let reply = Reply::new(ctx);
    if let [item] = items {
        topk.add(item, 1, chance, single_reply(&reply));
    } else {
        reply.array(items.len());
        for item in items {
            topk.add(item, 1, chance, expelled_reply(&reply));
        }
    }
    memory::resized(before, topk.memory_bytes());
    Ok(())
}

/// `TOPK.INCRBY key item increment [item increment …]`, increments from 0 to 100 000. As
/// RedisBloom, pairs are added in order up to one with a bad increment, which answers the
/// error; the pairs after it are not added and answer the same error (RedisBloom sends no
/// element for them, leaving the reply array short), and the command is replicated as it
/// ran.
pub fn topk_incrby(ctx: &Context, args: &[Arg]) -> RedisResult {
    run_and_replicate!(ctx, args, c"INCRBY", incrby)
}

/// `TOPK.INCRBY`'s work on `pairs`, drawing with `chance`; replies, does not replicate.
#[inline(always)]
fn incrby(
    ctx: &Context,
    name: &Arg,
    pairs: &[Arg],
    chance: &mut impl FnMut() -> u32,
) -> Result<(), RedisError> {
    if pairs.len() < 2 || pairs.len() % 2 == 1 {
        return Err(RedisError::WrongArity);
    }
    let mut key = Key::open(ctx, name, true);
    let topk = existing(&mut key)?;
    // Each pair read once (the item's bytes, the increment if valid): one pair (the common
    // call) as it is, up to INLINE_VALUES on the stack, more in a vector.
    fn read(pair: &[Arg]) -> (&[u8], Option<u32>) {
        let increment = integer(&pair[1]).filter(|v| (0..=MAX_INCREMENT as i64).contains(v));
        (glue::bytes(&pair[0]), increment.map(|v| v as u32))
    }
    if pairs.len() == 2 {
        incr_pairs(ctx, topk, &[read(pairs)], chance)
    } else if pairs.len() / 2 <= INLINE_VALUES {
        let mut inline: [(&[u8], Option<u32>); INLINE_VALUES] = [(&[], None); INLINE_VALUES];
        for (slot, pair) in inline.iter_mut().zip(pairs.chunks_exact(2)) {
            *slot = read(pair);
        }
        incr_pairs(ctx, topk, &inline[..pairs.len() / 2], chance)
    } else {
        let spilled: Vec<_> = pairs.chunks_exact(2).map(read).collect();
        incr_pairs(ctx, topk, &spilled, chance)
    }
}

/// `TOPK.INCRBY`'s work once its pairs are read (`None`: an increment out of range).
#[inline(always)]
fn incr_pairs(
    ctx: &Context,
    topk: &mut Topk,
    pairs: &[(&[u8], Option<u32>)],
    chance: &mut impl FnMut() -> u32,
) -> Result<(), RedisError> {
    admit_items(topk, pairs.iter().map(|&(item, _)| item))?;
    let before = topk.memory_bytes();
    let reply = Reply::new(ctx);
    if let [(item, Some(increment))] = *pairs {
        topk.add(item, increment, chance, single_reply(&reply));
        memory::resized(before, topk.memory_bytes());
        return Ok(());
    }
    reply.array(pairs.len());
    let mut failed = false;
    for &(item, increment) in pairs {
        match increment {
            Some(increment) if !failed => topk.add(item, increment, chance, expelled_reply(&reply)),
            _ => {
                failed = true;
                reply.error(BAD_INCREMENT);
            }
        }
    }
    memory::resized(before, topk.memory_bytes());
    Ok(())
}

/// `bloomkit.topk.replay key draws ADD item…` / `… INCRBY item increment …`: what a master
/// replicates in place of a `TOPK.ADD` or `TOPK.INCRBY` that drew (see the module docs):
/// the same work and reply, its decay draws taken from `draws`. Replicated as it was
/// called.
pub fn topk_replay(ctx: &Context, args: &[Arg]) -> RedisResult {
    let [_, name, draws, op, rest @ ..] = args else {
        return Err(RedisError::WrongArity);
    };
    let mut values = replay_values(glue::bytes(draws)).ok_or_else(|| {
        error("ERR bloomkit.topk.replay: the draws are not 4-byte values of at most RAND_MAX")
    })?;
    let chance = &mut || replayed(&mut values);
    match glue::bytes(op) {
        op if op.eq_ignore_ascii_case(b"ADD") => add(ctx, name, rest, chance)?,
        op if op.eq_ignore_ascii_case(b"INCRBY") => incrby(ctx, name, rest, chance)?,
        _ => return Err(error("ERR bloomkit.topk.replay: ADD or INCRBY expected")),
    }
    glue::replicate_verbatim(ctx);
    replied()
}

/// `TOPK.QUERY key item…`: 1 for an item in the list, else 0.
pub fn topk_query(ctx: &Context, args: &[Arg]) -> RedisResult {
    let [_, name, item] = args else {
        return per_item(ctx, args, |topk, item| topk.query(item) as i64);
    };
    // One item (the common call): `[0]` or `[1]` in one piece.
    let mut key = Key::open(ctx, name, false);
    let found = existing(&mut key)?.query(glue::bytes(item));
    let reply = Reply::new(ctx);
    if !reply.canned(if found { &canned::ONE } else { &canned::ZERO }) {
        reply.array(1);
        reply.int(found as i64);
    }
    replied()
}

/// `TOPK.COUNT key item…`: each item's estimate.
pub fn topk_count(ctx: &Context, args: &[Arg]) -> RedisResult {
    per_item(ctx, args, |topk, item| topk.count(item) as i64)
}

/// `TOPK.QUERY` and `TOPK.COUNT` (`key item…`): an array of `answer(topk, item)`, an
/// integer per item.
#[inline(always)]
fn per_item(ctx: &Context, args: &[Arg], answer: impl Fn(&Topk, &[u8]) -> i64) -> RedisResult {
    if args.len() < 3 {
        return Err(RedisError::WrongArity);
    }
    let mut key = Key::open(ctx, &args[1], false);
    let topk = existing(&mut key)?;
    let reply = Reply::new(ctx);
    reply.array(args.len() - 2);
    for item in &args[2..] {
        reply.int(answer(topk, glue::bytes(item)));
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
