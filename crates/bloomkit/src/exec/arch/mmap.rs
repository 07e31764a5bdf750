//! Read-only memory maps of filter files, for [`FilterView`](crate::format::view::FilterView).
//!
//! Mapping a file is `unsafe` in Rust (memmap2's `Mmap::map`) for one reason: the map hands
//! out a `&[u8]` whose bytes another writer could change, or cut short, while it is borrowed,
//! and Rust assumes the bytes behind a shared reference do not change. This module is where
//! the crate takes that on, under a rule the rest of the crate keeps:
//!
//! * **The crate's writers never change a filter file in place.** Every save writes a new
//!   file and renames it over the path ([`write_atomically`](crate::format::write_atomically));
//!   writers that read-modify-write also hold the exclusive [`FileLock`](crate::FileLock)
//!   for the whole cycle. A map made before the rename keeps the old inode, whose bytes
//!   nobody writes again; the kernel frees it when the last map and descriptor are gone. So
//!   a view sees one version of the file, whole, against every bloomkit tool.
//! * **The one filter file written in place**, the buffered filter's (`structures/buffered`),
//!   is never mapped: a view reads a file's header with an ordinary read and maps only the
//!   kinds whose payload is a flat array.
//! * **Other programs** that write a mapped file in place (`cp` over it, `truncate`, an
//!   editor saving in place, a `dd` into it) break the rule, as they would for any program
//!   that maps its data (databases, `ripgrep`, linkers): bytes that change after a chunk was
//!   checked can change answers, and a file cut short makes the next touch of a page past
//!   its end raise `SIGBUS`. [`FilterView`](crate::format::view::FilterView)'s docs say so.

use std::fs::File;

/// A read-only, shared memory map of a whole file.
#[derive(Debug)]
pub struct MappedFile {
    map: memmap2::Mmap,
}

impl MappedFile {
    /// Maps all of `file` read-only, and advises the kernel that it will be read at random
    /// places (no read-ahead of neighbouring pages a query does not need).
    ///
    /// The caller keeps the module's rule: `file` is a filter file that is replaced by
    /// rename, never written in place (see the module docs).
    pub fn map(file: &File) -> std::io::Result<MappedFile> {
        // SAFETY: memmap2 requires that the mapped file is not modified or truncated while
        // the map lives. The crate's writers never write a filter file in place: they write a
        // new file and rename it over the path, so the inode mapped here keeps its bytes for
        // the life of the map (module docs). Writers outside the crate are outside that
        // contract, which `FilterView`'s docs state; the map is read-only (PROT_READ), so
        // nothing in this process writes through it.
        let map = unsafe { memmap2::Mmap::map(file)? };
        #[cfg(unix)]
        {
            // Advice only: failure changes nothing but read-ahead.
            let _ = map.advise(memmap2::Advice::Random);
        }
        Ok(MappedFile { map })
    }

    /// Asks the kernel to read `len` bytes at `offset` in one request (`MADV_WILLNEED`), ahead
    /// of reading them all: a view checks a whole chunk when a query first touches it, and
    /// with the map advised for random access each page would otherwise be its own read.
    /// Advice only: a failure changes nothing but speed.
    pub fn will_need(&self, offset: usize, len: usize) {
        #[cfg(unix)]
        {
            let _ = self
                .map
                .advise_range(memmap2::Advice::WillNeed, offset, len);
        }
        #[cfg(not(unix))]
        let _ = (offset, len);
    }

    /// The file's bytes.
    #[inline(always)]
    pub fn bytes(&self) -> &[u8] {
        &self.map
    }
}
