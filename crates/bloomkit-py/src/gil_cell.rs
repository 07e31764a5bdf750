//! [`GilCell`]: a value that Python threads share, reached with no atomic read-modify-write
//! by a call that holds the GIL and waits for no one.
//!
//! The filters' single calls (`add`, `x in f`, …) run with the GIL held and touch the
//! filter for a few hundred instructions; the batch calls give the GIL up while they work,
//! so that other Python threads run. A `RwLock` per call made thread safety cost two
//! locked instructions per `x in f` (acquire, release), and a locked instruction waits
//! for the memory reads before it: the previous call's cache misses, which would otherwise
//! overlap with the interpreter's work on the next call.
//!
//! Here the lock is taken only by the users that run *without* the GIL ("away": the batch
//! calls, and a single call that found one of them at work). Each of them counts itself in
//! `away` while it holds the GIL, before giving the GIL up and touching the value, and
//! counts itself out after it is done with the value. So a thread that holds the GIL and
//! reads `away == 0` knows that no other thread is touching the value, and that none can
//! start while it keeps the GIL (starting needs the GIL, to count itself in): it has the
//! value to itself, as long as it neither gives the GIL up nor runs Python code (which can
//! switch threads) meanwhile. The closures given to [`read`](GilCell::read) and
//! [`write`](GilCell::write) are plain Rust on the filter; they do neither.
//!
//! The memory order: the counting-out (a release) follows the away user's last access to
//! the value, and the GIL holder's load of `away` is an acquire, so the GIL holder sees
//! the away user's writes; the away user's own reads follow its counting-in and the GIL
//! release, which follow every earlier GIL holder's writes.
//!
//! The package is built for CPython's stable ABI, which free-threaded builds (no GIL) do
//! not load.

#![allow(unsafe_code)]

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{PoisonError, RwLock};

use pyo3::Python;

/// A value shared by Python threads: reached directly by a GIL holder when no thread works
/// on it without the GIL, under a lock otherwise (see the module's documentation).
pub struct GilCell<T> {
    value: UnsafeCell<T>,
    /// Taken by the users without the GIL, for reading or writing.
    lock: RwLock<()>,
    /// How many users are counted in to work without the GIL (counted in with the GIL).
    away: AtomicUsize,
}

// SAFETY: `value` is reached only (a) by a thread holding the GIL while `away` is 0, which
// no other thread can touch meanwhile (module documentation), or (b) under `lock`, shared
// for `&T` and exclusive for `&mut T`. `T: Send` lets `&mut T` be used on another thread,
// `T: Sync` lets `&T` be shared by several readers.
unsafe impl<T: Send + Sync> Sync for GilCell<T> {}

/// One user counted in `away` for as long as it lives.
struct Away<'a>(&'a AtomicUsize);

impl<'a> Away<'a> {
    /// Counts a user in; called with the GIL held.
    fn count_in(away: &'a AtomicUsize, _py: Python<'_>) -> Away<'a> {
        away.fetch_add(1, Ordering::AcqRel);
        Away(away)
    }
}

impl Drop for Away<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Release);
    }
}

impl<T: Send + Sync> GilCell<T> {
    /// A cell holding `value`.
    pub fn new(value: T) -> GilCell<T> {
        GilCell {
            value: UnsafeCell::new(value),
            lock: RwLock::new(()),
            away: AtomicUsize::new(0),
        }
    }

    /// Whether the GIL holder has the value to itself: no user is away.
    #[inline(always)]
    fn alone(&self, _py: Python<'_>) -> bool {
        self.away.load(Ordering::Acquire) == 0
    }

    /// `f(&value)`, with the GIL held: directly when no user is away, else waiting for the
    /// lock without the GIL. `f` must not run Python code, which could give the GIL up
    /// while `f` holds the reference: a condition on the callers, not checked here, which
    /// is why the cell stays private to this crate, whose closures are plain Rust on the
    /// filter.
    #[inline(always)]
    pub fn read<R: Send>(&self, py: Python<'_>, f: impl FnOnce(&T) -> R + Send) -> R {
        if self.alone(py) {
            // SAFETY: the GIL is held (`py`) and no user is away, so no other thread
            // touches the value until this thread gives the GIL up, which `f` (plain
            // Rust) does not do.
            return f(unsafe { &*self.value.get() });
        }
        self.read_detached(py, f)
    }

    /// `f(&mut value)`, as [`read`](Self::read).
    #[inline(always)]
    pub fn write<R: Send>(&self, py: Python<'_>, f: impl FnOnce(&mut T) -> R + Send) -> R {
        if self.alone(py) {
            // SAFETY: as in `read`; and this thread holds no other reference to the value
            // (every access is within one such call, none of which calls another).
            return f(unsafe { &mut *self.value.get() });
        }
        self.write_detached(py, f)
    }

    /// `f(&value)` without the GIL, under the lock shared: other Python threads run
    /// meanwhile.
    pub fn read_detached<R: Send>(&self, py: Python<'_>, f: impl FnOnce(&T) -> R + Send) -> R {
        let _away = Away::count_in(&self.away, py);
        py.detach(|| {
            let _shared = self.lock.read().unwrap_or_else(PoisonError::into_inner);
            // SAFETY: counted in `away` (no GIL holder touches the value) and holding the
            // lock shared (no away user writes it).
            f(unsafe { &*self.value.get() })
        })
    }

    /// `f(&mut value)` without the GIL, under the lock exclusive.
    pub fn write_detached<R: Send>(&self, py: Python<'_>, f: impl FnOnce(&mut T) -> R + Send) -> R {
        let _away = Away::count_in(&self.away, py);
        py.detach(|| {
            let _exclusive = self.lock.write().unwrap_or_else(PoisonError::into_inner);
            // SAFETY: counted in `away` (no GIL holder touches the value) and holding the
            // lock exclusive (no other away user touches it).
            f(unsafe { &mut *self.value.get() })
        })
    }
}
