//! Whether what this server executes is read again elsewhere: by a replica, now or after a
//! partial resynchronisation, or from an AOF file. The top-k's replay of its draws
//! (`commands::topk`) is needed only then, and costs several thousand instructions a
//! command (`RedisModule_Replicate` builds and propagates a new command, where
//! `RedisModule_ReplicateVerbatim` passes the running one on), so it is asked for only
//! then.
//!
//! The answer is kept in one flag, set (and never cleared: a backlog outlives its
//! replicas, and a server may turn AOF on again) when
//!
//! * the AOF is on (`REDISMODULE_CTX_FLAGS_AOF`): when the module loads and after every
//!   `CONFIG SET`;
//! * the server keeps a replication backlog (`INFO replication`: `repl_backlog_active:1`),
//!   which Redis creates when the first replica asks to synchronise and which every
//!   propagated command enters: read when the module loads, at each of the memory module's
//!   reads (ten times a second, from the cron), and when a child process is forked. The
//!   fork is the one read that must not be missed: a full synchronisation sends the
//!   replica a snapshot taken by a fork, then every command propagated after it, so a
//!   command is replayed correctly on the replica if the flag is set by the time the fork
//!   returns — which the fork event (fired in the parent, before the server executes
//!   anything else) guarantees.
//!
//! A server that is itself a replica has a backlog too (for its own replicas and for a
//! promotion), so a promoted replica replays from its first command as a primary.

use std::sync::atomic::{AtomicBool, Ordering};

use redis_module::{raw, Context};

use crate::glue;
use crate::glue::server::{Event, ServerInfo};

static READ_ELSEWHERE: AtomicBool = AtomicBool::new(false);

/// Whether this server's commands are, or may later be, read by a replica or from an AOF
/// file (see the module docs).
#[inline(always)]
pub fn read_elsewhere() -> bool {
    READ_ELSEWHERE.load(Ordering::Relaxed)
}

/// Looks again: sets the flag if the AOF is on or the server keeps a replication backlog.
/// Works in any context, on Redis's main thread.
pub fn refresh() {
    if read_elsewhere() {
        return;
    }
    if aof_on() || backlog_active() {
        READ_ELSEWHERE.store(true, Ordering::Relaxed);
    }
}

fn aof_on() -> bool {
    // Without the call, assume the worst: the replay is correct everywhere.
    glue::server::context_flags().is_none_or(|flags| flags & raw::REDISMODULE_CTX_FLAGS_AOF != 0)
}

/// `INFO replication`'s `repl_backlog_active` is 1 (or unknown: assume the worst).
fn backlog_active() -> bool {
    ServerInfo::read(c"replication")
        .and_then(|info| info.unsigned(c"repl_backlog_active"))
        .is_none_or(|active| active != 0)
}

/// The fork server event: a full synchronisation's snapshot is being taken (or any other
/// child forked): look again before the server executes another command.
fn on_fork() {
    refresh();
}

/// Looks once, and subscribes to the fork event. False if Redis refused the subscription.
pub fn start(ctx: &Context) -> bool {
    refresh();
    glue::server::subscribe(ctx, Event::ForkChildBorn, on_fork)
}
