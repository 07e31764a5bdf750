//! The server as a whole, outside any command: its flags, its `INFO` sections and its
//! events, as safe functions for the memory budget (`memory`) and the replication check
//! (`replication`), which hold the policy. Every call here works without a client (a NULL
//! context, Redis 6.2 and later), on Redis's main thread; none is made per command.

use std::ffi::{c_int, CStr};
use std::sync::OnceLock;

use redis_module::{raw, Context};

/// The server's context flags (`RedisModule_GetContextFlags(NULL)`: loading, replica, AOF
/// on…, the `REDISMODULE_CTX_FLAGS_*` bits), or `None` if the API lacks the call.
pub fn context_flags() -> Option<u32> {
    // SAFETY: the API's function pointers are written once by `RedisModule_Init`, before
    // any of the module's code runs, and only read afterwards.
    let get = unsafe { raw::RedisModule_GetContextFlags }?;
    // SAFETY: Redis 6.2 and later accept a NULL context (only the client-specific flags
    // need one, and they are then left out).
    let flags = unsafe { get(std::ptr::null_mut()) };
    Some(flags as u32)
}

/// One section of the server's `INFO` (`RedisModule_GetServerInfo(NULL, section)`), read
/// once and released when dropped (`RedisModule_FreeServerInfo`); its fields are read by
/// name.
pub struct ServerInfo {
    info: *mut raw::RedisModuleServerInfoData,
}

impl ServerInfo {
    /// Reads `section` (`"memory"`, `"replication"`…): Redis generates the section's whole
    /// text and parses it (about 20 µs for `memory`). `None` if the API lacks one of the
    /// four calls (they came together, in Redis 6.0) or Redis returned nothing.
    pub fn read(section: &CStr) -> Option<Self> {
        // SAFETY: as in `context_flags`.
        let api = unsafe {
            (
                raw::RedisModule_GetServerInfo,
                raw::RedisModule_ServerInfoGetFieldUnsigned,
                raw::RedisModule_ServerInfoGetFieldC,
                raw::RedisModule_FreeServerInfo,
            )
        };
        let (Some(get), Some(_), Some(_), Some(_)) = api else {
            return None;
        };
        // SAFETY: GetServerInfo accepts a NULL context (it then does no automatic memory
        // management: `drop` frees the data) and a NUL-terminated section name.
        let info = unsafe { get(std::ptr::null_mut(), section.as_ptr()) };
        (!info.is_null()).then_some(Self { info })
    }

    /// The field `name` as an unsigned integer; `None` if the section lacks it or it is
    /// not one.
    pub fn unsigned(&self, name: &CStr) -> Option<u64> {
        // SAFETY: as in `context_flags` (and `read` found the pointer set).
        let field = unsafe { raw::RedisModule_ServerInfoGetFieldUnsigned }?;
        let mut err: c_int = 0;
        // SAFETY: `self.info` is live until `drop`; `name` is NUL-terminated and `err`
        // outlives the call.
        let value = unsafe { field(self.info, name.as_ptr(), &mut err) };
        (err == raw::REDISMODULE_OK as c_int).then_some(value)
    }

    /// The field `name` as text; `None` if the section lacks it.
    pub fn text(&self, name: &CStr) -> Option<&CStr> {
        // SAFETY: as in `unsigned`.
        let field = unsafe { raw::RedisModule_ServerInfoGetFieldC }?;
        // SAFETY: as in `unsigned`.
        let text = unsafe { field(self.info, name.as_ptr()) };
        // SAFETY: a non-null result is a NUL-terminated string inside the section's data,
        // which lives until `drop`, and the returned borrow of `self` ends before that.
        (!text.is_null()).then(|| unsafe { CStr::from_ptr(text) })
    }
}

impl Drop for ServerInfo {
    fn drop(&mut self) {
        // SAFETY: as in `context_flags` (and `read` found the pointer set).
        if let Some(free) = unsafe { raw::RedisModule_FreeServerInfo } {
            // SAFETY: `self.info` came from GetServerInfo with a NULL context and is freed
            // once, here, with the same (NULL) context.
            unsafe { free(std::ptr::null_mut(), self.info) };
        }
    }
}

/// A server event the module follows, with its handler's meaning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A `CONFIG SET` changed the configuration (`REDISMODULE_EVENT_CONFIG`).
    ConfigChange,
    /// Redis's cron ran (`REDISMODULE_EVENT_CRON_LOOP`, `hz` times a second, between
    /// commands).
    Cron,
    /// A child process was forked (`REDISMODULE_EVENT_FORK_CHILD`, its `BORN` subevent;
    /// fired in the parent, before the server executes anything else).
    ForkChildBorn,
}

/// The handler of each [`Event`], in its order; set once, by [`subscribe`].
static HANDLERS: [OnceLock<fn()>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];

impl Event {
    const ALL: [Self; 3] = [Self::ConfigChange, Self::Cron, Self::ForkChildBorn];

    fn slot(self) -> &'static OnceLock<fn()> {
        &HANDLERS[self as usize]
    }

    /// The event as Redis names it.
    fn raw(self) -> raw::RedisModuleEvent {
        let id = match self {
            Self::ConfigChange => raw::REDISMODULE_EVENT_CONFIG,
            Self::Cron => raw::REDISMODULE_EVENT_CRON_LOOP,
            Self::ForkChildBorn => raw::REDISMODULE_EVENT_FORK_CHILD,
        };
        raw::RedisModuleEvent { id, dataver: 1 }
    }

    /// The event Redis reports as `eid` with `subevent`, if it is one of these.
    fn of(eid: &raw::RedisModuleEvent, subevent: u64) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|event| event.raw().id == eid.id)
            .filter(|&event| {
                event != Self::ForkChildBorn
                    || subevent == raw::REDISMODULE_SUBEVENT_FORK_CHILD_BORN
            })
    }
}

/// Calls `handler` at every `event` from now on, on Redis's main thread
/// (`RedisModule_SubscribeToServerEvent`, from the module's load). False if Redis refused,
/// or `event` already has a handler.
pub fn subscribe(ctx: &Context, event: Event, handler: fn()) -> bool {
    if event.slot().set(handler).is_err() {
        return false;
    }
    // SAFETY: as in `context_flags`.
    let Some(subscribe) = (unsafe { raw::RedisModule_SubscribeToServerEvent }) else {
        return false;
    };
    // SAFETY: `ctx.ctx` is the module's load context; `on_event` is a plain function that
    // lives as long as the module, and reads none of the pointers Redis passes it.
    unsafe { subscribe(ctx.ctx, event.raw(), Some(on_event)) == raw::REDISMODULE_OK as c_int }
}

/// The one callback of every subscription: calls the event's handler.
extern "C" fn on_event(
    _ctx: *mut raw::RedisModuleCtx,
    eid: raw::RedisModuleEvent,
    subevent: u64,
    _data: *mut std::ffi::c_void,
) {
    if let Some(handler) = Event::of(&eid, subevent).and_then(|event| event.slot().get()) {
        handler();
    }
}
