//! An exclusive lock on a filter file for a whole read-modify-write.
//!
//! Saves are atomic (a temporary file renamed over the target), so a reader never sees half a
//! file. Two *writers* are another matter: each reads the file, changes its copy and saves it,
//! and the second save replaces the first — every item the first one added is gone, and both
//! report success. A writer therefore holds a [`FileLock`] from before it reads until after it
//! has saved, as sqlite and git do.
//!
//! # How it works
//!
//! The lock is an advisory `flock`-style lock (`std::fs::File::lock`) on the file itself: no
//! lock file is left behind and a crashed writer's lock goes with its process. Because a save
//! renames a *new* file over the path, a waiter that was blocked on the old file wakes up
//! holding a lock on a file that is no longer there. So after locking, the lock compares the
//! file it holds with what the path names now (device and inode on Unix) and starts again on
//! the new file when they differ; it returns only once the locked file is the one at the path.
//! Every writer of the crate's tools takes the lock, so while it is held nobody renames
//! another file over the path.
//!
//! A [`BufferedBloomFilter`](crate::BufferedBloomFilter), changed in place, takes this lock
//! itself on the file it opens and holds it while it is open (a shared one when opened
//! read-only, so readers run together and never beside a writer). Do not hold a `FileLock`
//! on such a file while opening it: the lock belongs to an open file, not to a process, so
//! the two conflict even within one process and the open would wait for ever (or, not
//! waiting, report the file locked).
//!
//! ```
//! use bloomkit::{AnyFilter, BloomFilter, Filter, FileLock, Persist};
//! # let dir = tempfile::tempdir()?;
//! # let path = dir.path().join("words.bloom");
//! BloomFilter::with_capacity(1_000, 0.01)?.save(&path)?;
//!
//! let lock = FileLock::exclusive(&path)?; // waits while another writer holds it
//! let mut filter = AnyFilter::load(&path)?;
//! filter.try_insert("dist")?;
//! filter.save(&path)?;
//! drop(lock); // the next writer reads a file that holds "dist"
//!
//! // A second lock on the same file is refused at once by `try_exclusive`:
//! let first = FileLock::exclusive(&path)?;
//! assert!(FileLock::try_exclusive(&path)?.is_none());
//! drop(first);
//! assert!(FileLock::try_exclusive(&path)?.is_some());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

use crate::Error;

/// An exclusive lock on an existing file, released when dropped. See the [module
/// docs](self) for why and how.
#[derive(Debug)]
pub struct FileLock {
    // Held only for its lock: closing the file releases it.
    _file: File,
    path: PathBuf,
}

impl FileLock {
    /// Locks `path` exclusively, waiting while another writer holds it.
    ///
    /// # Errors
    /// [`Error::Io`] if the file cannot be opened (for example it does not exist) or locked.
    pub fn exclusive(path: impl AsRef<Path>) -> Result<FileLock, Error> {
        Self::acquire(path.as_ref(), true).map(|lock| lock.expect("a blocking lock waits"))
    }

    /// Locks `path` exclusively if no other writer holds it; `Ok(None)` if one does.
    ///
    /// # Errors
    /// [`Error::Io`] if the file cannot be opened or locked.
    pub fn try_exclusive(path: impl AsRef<Path>) -> Result<Option<FileLock>, Error> {
        Self::acquire(path.as_ref(), false)
    }

    /// The locked path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn acquire(path: &Path, wait: bool) -> Result<Option<FileLock>, Error> {
        let file = open_locked(path, OpenOptions::new().read(true), Mode::Exclusive, wait)
            .map_err(|e| Error::io(format!("locking {}", path.display()), e))?;
        Ok(file.map(|file| FileLock {
            _file: file,
            path: path.to_path_buf(),
        }))
    }
}

/// How [`open_locked`] locks a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Alone: no other lock of either mode (a writer).
    Exclusive,
    /// Beside other shared locks, never beside an exclusive one (a reader).
    Shared,
}

/// Opens `path` with `options` and locks the open file (`mode`), waiting while another
/// holds a lock that conflicts (`wait`) or returning `Ok(None)` at once; the file returned is
/// locked and is the one at `path` now (see the [module docs](self): after a wait the path
/// may name a new file, which is then opened and locked in its turn).
///
/// The lock belongs to the returned file's open file description: closing the file releases
/// it, and another open of the same file — in this process too — conflicts with it.
pub(crate) fn open_locked(
    path: &Path,
    options: &OpenOptions,
    mode: Mode,
    wait: bool,
) -> std::io::Result<Option<File>> {
    loop {
        let file = options.open(path)?;
        let taken = match (mode, wait) {
            (Mode::Exclusive, true) => file.lock().map(|()| true),
            (Mode::Shared, true) => file.lock_shared().map(|()| true),
            (Mode::Exclusive, false) => refused_if_held(file.try_lock()),
            (Mode::Shared, false) => refused_if_held(file.try_lock_shared()),
        }?;
        if !taken {
            return Ok(None);
        }
        // The holder before us may have renamed a new file over the path: then the file
        // we hold is not the one a reader would open, so lock the new one instead.
        if same_file(&file, &std::fs::metadata(path)?)? {
            return Ok(Some(file));
        }
    }
}

/// `Ok(false)` for a lock that another holder refused, `Ok(true)` for one taken.
fn refused_if_held(result: Result<(), TryLockError>) -> std::io::Result<bool> {
    match result {
        Ok(()) => Ok(true),
        Err(TryLockError::WouldBlock) => Ok(false),
        Err(TryLockError::Error(e)) => Err(e),
    }
}

#[cfg(unix)]
fn same_file(held: &File, now: &std::fs::Metadata) -> std::io::Result<bool> {
    use std::os::unix::fs::MetadataExt;
    let held = held.metadata()?;
    Ok(held.dev() == now.dev() && held.ino() == now.ino())
}

/// Without inode numbers in std, other platforms trust the path (their `rename` over an open
/// file fails on Windows, which keeps the held file at the path).
#[cfg(not(unix))]
fn same_file(_held: &File, _now: &std::fs::Metadata) -> std::io::Result<bool> {
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::write_atomically;

    #[test]
    fn a_held_lock_refuses_a_second_writer() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"one").unwrap();
        let held = FileLock::exclusive(&path).unwrap();
        assert!(FileLock::try_exclusive(&path).unwrap().is_none());
        drop(held);
        assert!(FileLock::try_exclusive(&path).unwrap().is_some());
    }

    #[cfg(unix)]
    #[test]
    fn a_waiter_locks_the_file_that_replaced_the_one_it_waited_for() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"old").unwrap();
        let held = FileLock::exclusive(&path).unwrap();
        let waiter = {
            let path = path.clone();
            std::thread::spawn(move || {
                let lock = FileLock::exclusive(&path).unwrap();
                // Holding the lock, the path must still name the file it locked.
                let content = std::fs::read(&path).unwrap();
                (lock, content)
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(50));
        write_atomically(&path, b"new").unwrap();
        drop(held);
        let (lock, content) = waiter.join().unwrap();
        assert_eq!(content, b"new");
        // The waiter's lock is on the new file: a third writer is kept out.
        assert!(FileLock::try_exclusive(&path).unwrap().is_none());
        drop(lock);
    }

    #[test]
    fn a_missing_file_is_an_error_that_names_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("absent.bloom");
        let error = FileLock::exclusive(&path).unwrap_err().to_string();
        assert!(error.contains("absent.bloom"), "{error}");
    }
}
