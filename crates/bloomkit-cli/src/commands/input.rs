//! Reading items: from command-line arguments, from the lines of standard input, or from
//! the lines of a file; and the progress bars shown while reading.
//!
//! A line is one item, byte for byte, without its line ending (`\n` or `\r\n`). Items need
//! not be UTF-8. Every line counts, including empty ones; a final line without a newline is
//! an item too.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use anyhow::{bail, Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;

/// The size of the blocks input is read in: large enough to keep system calls rare and to
/// give every core enough work to share (about 250 000 short lines), small enough that
/// what a block's lines become (their slices, a filter's per-block work lists) stays in
/// the cache and reuses the same memory from one block to the next (8 MiB blocks made
/// building and checking 10⁷ lines measurably slower on two cores).
pub const BLOCK_SIZE: usize = 2 << 20;

/// Where a command's items come from: its arguments, else `--from FILE`, else standard input.
#[derive(Debug, Args)]
pub struct ItemArgs {
    /// Items to use; without any (or with a lone "-", as `build -` takes), items are read one
    /// per line from --from FILE or standard input.
    #[arg(value_name = "ITEM", allow_negative_numbers = true)]
    pub items: Vec<OsString>,

    /// Read items, one per line, from FILE ("-" for standard input).
    #[arg(long, value_name = "FILE", conflicts_with = "items")]
    pub from: Option<PathBuf>,
}

/// The resolved source of items.
#[derive(Debug)]
pub enum ItemSource {
    /// Items given on the command line.
    Args(Vec<OsString>),
    /// Lines of a file.
    File(PathBuf),
    /// Lines of standard input.
    Stdin,
}

impl ItemArgs {
    /// Decides where the items come from. A lone "-" is standard input, as `build -` and
    /// `--from -` read it: `cat items | bloomkit add F -` adds the lines, not the item "-"
    /// (which the lines of a file or of standard input can still hold).
    pub fn source(self) -> ItemSource {
        match self.from {
            Some(path) if path.as_os_str() == "-" => ItemSource::Stdin,
            Some(path) => ItemSource::File(path),
            None if self.items.is_empty() || self.items == ["-"] => ItemSource::Stdin,
            None => ItemSource::Args(self.items),
        }
    }
}

/// Calls `f` with every item of `source`, showing a progress bar (labelled `label`) while
/// reading a file or standard input. Returns the number of items.
pub fn for_each_item(
    source: ItemSource,
    label: &str,
    mut f: impl FnMut(&[u8]) -> Result<()>,
) -> Result<u64> {
    match source {
        ItemSource::Args(items) => {
            for item in &items {
                f(item.as_encoded_bytes())?;
            }
            Ok(items.len() as u64)
        }
        ItemSource::File(path) => with_line_input(Some(&path), label, |reader, progress| {
            for_each_line(reader, progress, f)
        }),
        ItemSource::Stdin => with_line_input(None, label, |reader, progress| {
            for_each_line(reader, progress, f)
        }),
    }
}

/// Calls `f` with the lines of a file (`Some`) or of standard input (`None`) as a reader,
/// with a progress bar labelled `label` (cleared afterwards); errors name the input.
pub fn with_line_input<T>(
    file: Option<&Path>,
    label: &str,
    f: impl FnOnce(Box<dyn Read + Send>, &ProgressBar) -> Result<T>,
) -> Result<T> {
    match file {
        Some(path) => {
            let (file, size) = open_input(path)?;
            let progress = byte_progress(Some(size), label);
            let result =
                f(Box::new(file), &progress).with_context(|| format!("reading {}", path.display()));
            progress.finish_and_clear();
            result
        }
        None => {
            let stdin = io::stdin();
            if stdin.is_terminal() {
                let _ = writeln!(
                    io::stderr(),
                    "reading items from standard input, one per line (end with Ctrl-D)"
                );
            }
            let progress = byte_progress(None, label);
            // `Stdin` rather than its lock, which cannot move to the reading thread.
            let result = f(Box::new(stdin), &progress).context("reading standard input");
            progress.finish_and_clear();
            result
        }
    }
}

/// An input that a command reads twice (once to count its lines, once to use them): a file
/// as it is, or standard input ("-") spooled first to a temporary file beside `near` (the
/// output, so the copy goes to the disk the user chose for the result; it is removed when
/// this value is dropped). `cat log | bloomkit build - -o f` then works as it does with a
/// file.
pub struct TwiceReadable {
    path: PathBuf,
    name: String,
    _spool: Option<tempfile::TempPath>,
}

/// An error if `output` names the file `input` names (the same path, or another name for
/// it: a symbolic or hard link), or, for the input "-", the file standard input reads
/// (`bloomkit build - -o f < f`): a verb that builds a filter from a file of lines would
/// otherwise replace the lines with the filter.
pub fn refuse_output_over_input(input: &Path, output: &Path) -> Result<()> {
    let (read, name) = if input.as_os_str() == "-" {
        // Where standard input is a redirected file, this names it (Linux, the BSDs);
        // a pipe or a terminal is never an output file.
        (Path::new("/dev/stdin"), "standard input".to_owned())
    } else {
        (input, input.display().to_string())
    };
    let same = match (std::fs::metadata(read), std::fs::metadata(output)) {
        (Ok(a), Ok(b)) => same_file(&a, &b),
        _ => false,
    };
    if same {
        bail!(
            "the output {} is the input ({name}): writing the filter there would replace \
             the lines it is built from; write it elsewhere",
            output.display(),
        );
    }
    Ok(())
}

#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

/// Without inode numbers in std, other platforms cannot tell links apart: never the same.
#[cfg(not(unix))]
fn same_file(_a: &std::fs::Metadata, _b: &std::fs::Metadata) -> bool {
    false
}

impl TwiceReadable {
    /// Opens `input` for two passes; spools standard input when `input` is "-".
    pub fn new(input: &Path, near: &Path) -> Result<Self> {
        refuse_output_over_input(input, near)?;
        if input.as_os_str() != "-" {
            return Ok(TwiceReadable {
                path: input.to_path_buf(),
                name: input.display().to_string(),
                _spool: None,
            });
        }
        let dir = match near.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let mut spool = tempfile::Builder::new()
            .prefix(".bloomkit-stdin-")
            .tempfile_in(&dir)
            .with_context(|| format!("creating a temporary file in {}", dir.display()))?;
        let progress = byte_progress(None, "reading standard input");
        let mut reader = progress.wrap_read(io::stdin().lock());
        let copied = io::copy(&mut reader, spool.as_file_mut());
        progress.finish_and_clear();
        copied.with_context(|| format!("copying standard input to {}", dir.display()))?;
        Ok(TwiceReadable {
            path: spool.path().to_path_buf(),
            name: "standard input".into(),
            _spool: Some(spool.into_temp_path()),
        })
    }

    /// The file to read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How messages name the input: its path, or "standard input".
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// Opens a file for reading and returns it with its size in bytes.
pub fn open_input(path: &Path) -> Result<(File, u64)> {
    let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let size = file
        .metadata()
        .with_context(|| format!("reading the size of {}", path.display()))?
        .len();
    Ok((file, size))
}

/// Calls `f` with every line of `reader` (line ending removed) and moves `progress` on by
/// the bytes read. Returns the number of lines.
pub fn for_each_line(
    reader: impl Read + Send + 'static,
    progress: &ProgressBar,
    mut f: impl FnMut(&[u8]) -> Result<()>,
) -> Result<u64> {
    for_each_block(reader, progress, |block| lines(block).try_for_each(&mut f))
}

/// Counts the lines of `reader` as [`for_each_line`] would see them.
pub fn count_lines(reader: impl Read + Send + 'static, progress: &ProgressBar) -> Result<u64> {
    for_each_block(reader, progress, |_| Ok(()))
}

/// Counts the lines of a file of `size` bytes as [`for_each_line`] would see them.
///
/// On Unix the `size` bytes are read on all cores, each thread reading parts of
/// [`COUNT_PART`] bytes at their offsets (the copies out of the page cache are most of the
/// work); whatever follows them (the file grew since its size was taken) is then read in
/// order. A file that shrank meanwhile is counted again from the start, in order.
pub fn count_file_lines(file: File, size: u64, progress: &ProgressBar) -> Result<u64> {
    #[cfg(unix)]
    if let Some(lines) = count_file_lines_in_parallel(&file, size, COUNT_PART, progress)? {
        return Ok(lines);
    }
    let mut file = file;
    io::Seek::rewind(&mut file)?;
    progress.set_position(0);
    count_lines(file, progress)
}

/// The size of the parts [`count_file_lines`] reads on each core.
const COUNT_PART: usize = 1 << 20;

/// [`count_file_lines`] on all cores, in parts of `part_size` bytes; `None` if the file
/// turned out shorter than `size`.
#[cfg(unix)]
fn count_file_lines_in_parallel(
    file: &File,
    size: u64,
    part_size: usize,
    progress: &ProgressBar,
) -> Result<Option<u64>> {
    use std::os::unix::fs::FileExt;
    let part = part_size as u64;
    // Per part: its newlines, and its last byte.
    let counted = (0..size.div_ceil(part))
        .into_par_iter()
        .map_init(
            || vec![0u8; part_size],
            |buffer, i| {
                let start = i * part;
                let buffer = &mut buffer[..part.min(size - start) as usize];
                match file.read_exact_at(buffer, start) {
                    Ok(()) => {}
                    Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
                    Err(e) => return Err(e),
                }
                progress.inc(buffer.len() as u64);
                let newlines = memchr::memchr_iter(b'\n', buffer).count() as u64;
                Ok(Some((newlines, buffer.last().copied())))
            },
        )
        .collect::<io::Result<Option<Vec<(u64, Option<u8>)>>>>()?;
    let Some(counted) = counted else {
        return Ok(None);
    };
    let newlines: u64 = counted.iter().map(|&(n, _)| n).sum();
    let last = counted.last().and_then(|&(_, last)| last);
    // Lines of what follows the `size` bytes: the first continues a last line of theirs
    // that has no newline, so it is counted there.
    let mut rest = file.try_clone()?;
    io::Seek::seek(&mut rest, io::SeekFrom::Start(size))?;
    let more = count_lines(rest, &ProgressBar::hidden())?;
    let unfinished = last.is_some_and(|b| b != b'\n');
    Ok(Some(if more > 0 {
        newlines + more
    } else {
        newlines + u64::from(unfinished)
    }))
}

/// Calls `f` with consecutive blocks of whole lines of `reader`, each about
/// [`BLOCK_SIZE`] bytes, and moves `progress` on by the bytes read. Returns the number of
/// lines.
///
/// A block ends just after a newline, except the last block of the input when the input
/// does not end with one; the partial line at the end of a read is carried over to the
/// next block. (A line longer than a block makes the block grow to hold it.) Split a
/// block with [`lines`] or [`par_lines_into`].
///
/// The input is read on a thread of its own, a block ahead: while `f` works on one block
/// the next is being read (at most three blocks are in memory).
pub fn for_each_block(
    reader: impl Read + Send + 'static,
    progress: &ProgressBar,
    f: impl FnMut(&[u8]) -> Result<()>,
) -> Result<u64> {
    blocks_of_size(reader, BLOCK_SIZE, progress, f)
}

/// A block read by [`read_blocks`]: `buffer[..end]`, its number of lines, and the number of
/// bytes of input read so far.
struct Block {
    buffer: Vec<u8>,
    end: usize,
    lines: u64,
    bytes: u64,
}

/// [`for_each_block`] with blocks of `block_size` bytes.
fn blocks_of_size(
    reader: impl Read + Send + 'static,
    block_size: usize,
    progress: &ProgressBar,
    mut f: impl FnMut(&[u8]) -> Result<()>,
) -> Result<u64> {
    let (full_sender, full) = mpsc::sync_channel(1);
    let (free, free_receiver) = mpsc::channel();
    let reading = std::thread::Builder::new()
        .name("bloomkit-reader".into())
        .spawn(move || read_blocks(reader, block_size, &full_sender, &free_receiver))
        .context("starting the thread that reads the input")?;
    let mut lines = 0;
    let result = full.iter().try_for_each(|block: io::Result<Block>| {
        let block = block?;
        lines += block.lines;
        f(&block.buffer[..block.end])?;
        progress.set_position(block.bytes);
        // The reader may have stopped already (at the end of the input).
        let _ = free.send(block.buffer);
        Ok(())
    });
    // Closing both channels stops the reader at its next hand-over. After an error it is
    // not waited for: it may be waiting for input that never comes (a pipe kept open).
    drop((full, free));
    if result.is_ok() {
        // The blocks ended because the reader returned — or panicked, which must not pass
        // for the end of the input.
        if let Err(panic) = reading.join() {
            std::panic::resume_unwind(panic);
        }
    }
    result.map(|()| lines)
}

/// The reading side of [`blocks_of_size`]: reads `reader` into buffers of `block_size`
/// bytes, cuts each after its last newline, and sends the blocks to `full`, the partial
/// line at the end carried over to the next buffer (taken from `free`, or allocated while
/// there are fewer than three). Stops at the end of the input, after sending a read error,
/// or when the other side has closed the channels.
fn read_blocks(
    mut reader: impl Read,
    block_size: usize,
    full: &mpsc::SyncSender<io::Result<Block>>,
    free: &mpsc::Receiver<Vec<u8>>,
) {
    const BUFFERS: usize = 3;
    let (mut buffer, mut allocated) = (vec![0u8; block_size.max(1)], 1);
    let (mut filled, mut bytes) = (0usize, 0u64);
    loop {
        let read = match fill(&mut reader, &mut buffer[filled..]) {
            Ok(read) => read,
            Err(e) => {
                let _ = full.send(Err(e));
                return;
            }
        };
        bytes += read as u64;
        filled += read;
        // `fill` stops short of a full buffer only at the end of the input.
        let at_end = filled < buffer.len();
        let end = if at_end {
            filled
        } else {
            match memchr::memrchr(b'\n', &buffer[..filled]) {
                Some(newline) => newline + 1,
                None => {
                    // One line fills the whole buffer: make room for the rest of it.
                    buffer.resize(buffer.len() * 2, 0);
                    continue;
                }
            }
        };
        if at_end && end == 0 {
            return;
        }
        let mut next = Vec::new();
        if !at_end {
            next = match free.try_recv() {
                Ok(spare) => spare,
                Err(_) if allocated < BUFFERS => {
                    allocated += 1;
                    Vec::new()
                }
                Err(_) => match free.recv() {
                    Ok(spare) => spare,
                    Err(_) => return,
                },
            };
            next.resize(buffer.len(), 0);
            next[..filled - end].copy_from_slice(&buffer[end..filled]);
        }
        let lines = line_count(&buffer[..end]) as u64;
        let block = Block {
            buffer: std::mem::replace(&mut buffer, next),
            end,
            lines,
            bytes,
        };
        filled -= end;
        if full.send(Ok(block)).is_err() || at_end {
            return;
        }
    }
}

/// Reads until `buffer` is full or the input ends; returns the number of bytes read.
fn fill(reader: &mut impl Read, buffer: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        match reader.read(&mut buffer[filled..]) {
            Ok(0) => break,
            Ok(read) => filled += read,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// The lines of a block (see [`for_each_block`]), without their line endings.
pub fn lines(block: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = block;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let (line, next) = match memchr::memchr(b'\n', rest) {
            Some(newline) => (&rest[..newline], &rest[newline + 1..]),
            None => (rest, &rest[rest.len()..]),
        };
        rest = next;
        Some(line.strip_suffix(b"\r").unwrap_or(line))
    })
}

/// The number of lines of a block, as [`lines`] sees them.
pub fn line_count(block: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', block).count()
        + usize::from(block.last().is_some_and(|&b| b != b'\n'))
}

/// The lines of a block on all cores, in order, into `out` (cleared first; its allocation
/// is reused). The block is cut at newlines into a few pieces per thread; each piece's lines
/// are counted, then written straight into their own stretch of `out` — no per-piece
/// vectors to concatenate afterwards.
pub fn par_lines_into<'a>(block: &'a [u8], out: &mut Vec<&'a [u8]>) {
    let pieces = pieces(block, 4 * rayon::current_num_threads());
    let counts: Vec<usize> = pieces.par_iter().map(|piece| line_count(piece)).collect();
    out.clear();
    out.resize(counts.iter().sum(), &[]);
    let mut rest = &mut out[..];
    let mut stretches = Vec::with_capacity(pieces.len());
    for &count in &counts {
        let (stretch, next) = rest.split_at_mut(count);
        stretches.push(stretch);
        rest = next;
    }
    pieces
        .into_par_iter()
        .zip(stretches)
        .for_each(|(piece, stretch)| {
            for (slot, line) in stretch.iter_mut().zip(lines(piece)) {
                *slot = line;
            }
        });
}

/// `block` cut into about `count` pieces of whole lines (each cut is just after a newline),
/// in order.
pub fn pieces(block: &[u8], count: usize) -> Vec<&[u8]> {
    let target = block.len().div_ceil(count.max(1)).max(1);
    let mut pieces = Vec::with_capacity(count + 1);
    let mut rest = block;
    while rest.len() > target {
        let cut = memchr::memchr(b'\n', &rest[target - 1..]).map_or(rest.len(), |i| target + i);
        let (piece, next) = rest.split_at(cut);
        pieces.push(piece);
        rest = next;
    }
    if !rest.is_empty() {
        pieces.push(rest);
    }
    pieces
}

/// A progress bar on standard error that counts bytes: a bar when the total is known, a
/// spinner otherwise. It draws nothing when standard error is not a terminal.
pub fn byte_progress(total: Option<u64>, label: &str) -> ProgressBar {
    let (bar, template) = match total {
        Some(total) => (
            ProgressBar::new(total),
            "{msg:>10} [{bar:40}] {binary_bytes}/{binary_total_bytes} \
             ({binary_bytes_per_sec}, {eta})",
        ),
        None => (
            ProgressBar::new_spinner(),
            "{msg:>10} {spinner} {binary_bytes} ({binary_bytes_per_sec})",
        ),
    };
    let style = ProgressStyle::with_template(template)
        .map(|s| s.progress_chars("=> "))
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar.set_message(label.to_owned());
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_of(input: &[u8]) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let n = for_each_line(
            io::Cursor::new(input.to_vec()),
            &ProgressBar::hidden(),
            |line| {
                out.push(line.to_vec());
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(n as usize, out.len());
        let count = count_lines(io::Cursor::new(input.to_vec()), &ProgressBar::hidden());
        assert_eq!(count.unwrap(), n);
        out
    }

    #[test]
    fn lines_lose_their_endings_and_keep_their_bytes() {
        assert_eq!(
            lines_of(b"a\r\nb\n\nc\xff"),
            vec![
                b"a".to_vec(),
                b"b".to_vec(),
                b"".to_vec(),
                b"c\xff".to_vec()
            ]
        );
        assert_eq!(
            lines_of(b"one\ntwo\n"),
            vec![b"one".to_vec(), b"two".to_vec()]
        );
        assert!(lines_of(b"").is_empty());
        assert_eq!(lines_of(b"\n"), vec![b"".to_vec()]);
    }

    #[test]
    fn a_lone_carriage_return_is_part_of_the_item() {
        assert_eq!(lines_of(b"a\rb\n"), vec![b"a\rb".to_vec()]);
    }

    /// The lines of `input` the simple way: split at every newline, drop the empty piece
    /// after a final newline, strip one trailing `\r`.
    fn reference_lines(input: &[u8]) -> Vec<Vec<u8>> {
        let mut lines: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
        if input.is_empty() || input.ends_with(b"\n") {
            lines.pop();
        }
        lines
            .into_iter()
            .map(|l| l.strip_suffix(b"\r").unwrap_or(l).to_vec())
            .collect()
    }

    const AWKWARD: &[&[u8]] = &[
        b"",
        b"\n",
        b"\n\n\n",
        b"a",
        b"a\r\nbb\r\n\r\nccc\n",
        b"one\ntwo\nthree without newline",
        b"x\r",
        b"a long line that is longer than every small block size tried here\nshort\n",
        b"\xff\xfe\n\x00\n\r\r\n",
    ];

    #[test]
    fn blocks_of_every_size_give_the_same_lines_and_count() {
        for input in AWKWARD {
            let expected = reference_lines(input);
            for block_size in 1..=24 {
                let mut seen = Vec::new();
                let mut blocks = 0;
                let count = blocks_of_size(*input, block_size, &ProgressBar::hidden(), |block| {
                    blocks += 1;
                    assert!(!block.is_empty());
                    seen.extend(lines(block).map(<[u8]>::to_vec));
                    Ok(())
                })
                .unwrap();
                assert_eq!(seen, expected, "{input:?} in blocks of {block_size}");
                assert_eq!(count as usize, expected.len(), "{input:?} / {block_size}");
                assert!(blocks <= input.len(), "{blocks} blocks for {input:?}");
            }
        }
    }

    #[test]
    fn every_block_but_the_last_ends_with_a_newline() {
        let input: Vec<u8> = (0..500)
            .flat_map(|i| format!("{i}\n").into_bytes())
            .collect();
        let mut blocks: Vec<Vec<u8>> = Vec::new();
        let cut = io::Cursor::new(input[..input.len() - 1].to_vec());
        blocks_of_size(cut, 64, &ProgressBar::hidden(), |b| {
            blocks.push(b.to_vec());
            Ok(())
        })
        .unwrap();
        let (last, rest) = blocks.split_last().unwrap();
        assert!(rest.iter().all(|b| b.ends_with(b"\n") && b.len() <= 64));
        assert_eq!(last.last(), Some(&b'9'));
        assert_eq!(blocks.concat(), &input[..input.len() - 1]);
    }

    #[test]
    fn pieces_cut_only_after_newlines_and_cover_the_block() {
        for input in AWKWARD {
            for count in 1..=8 {
                let cut = pieces(input, count);
                assert_eq!(cut.concat(), *input);
                assert!(cut.iter().all(|p| !p.is_empty()));
                let (_, before_last) = cut.split_last().unwrap_or((&&b""[..], &[]));
                assert!(before_last.iter().all(|p| p.ends_with(b"\n")), "{cut:?}");
                let parallel: Vec<Vec<u8>> = cut
                    .iter()
                    .flat_map(|p| lines(p))
                    .map(<[u8]>::to_vec)
                    .collect();
                assert_eq!(parallel, reference_lines(input));
            }
            let mut parallel = Vec::new();
            par_lines_into(input, &mut parallel);
            let parallel: Vec<Vec<u8>> = parallel.into_iter().map(<[u8]>::to_vec).collect();
            assert_eq!(parallel, reference_lines(input));
        }
    }

    /// Inputs drawn from an alphabet of line parts and line endings, with a small
    /// deterministic generator: the lines through the reading thread, every block size and
    /// the parallel splitter are the serial reference's (CRLF, a lone `\r`, empty lines,
    /// no final newline, lines longer than a block and lines across every block boundary).
    #[test]
    fn random_inputs_split_like_the_serial_splitter() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        for _ in 0..400 {
            let len = next(200) as usize;
            let input: Vec<u8> = (0..len)
                .map(|_| [b'a', b'b', b'\r', b'\n', b'\n', 0xff][next(6) as usize])
                .collect();
            let expected = reference_lines(&input);
            let block_size = 1 + next(40) as usize;
            let mut seen = Vec::new();
            let reader = io::Cursor::new(input.clone());
            let count = blocks_of_size(reader, block_size, &ProgressBar::hidden(), |block| {
                let mut parallel = Vec::new();
                par_lines_into(block, &mut parallel);
                assert_eq!(parallel.len(), line_count(block));
                seen.extend(parallel.iter().map(|l| l.to_vec()));
                Ok(())
            })
            .unwrap();
            assert_eq!(seen, expected, "{input:?} in blocks of {block_size}");
            assert_eq!(count as usize, expected.len());
            for count in 1..=5 {
                let cut = pieces(&input, count);
                assert_eq!(cut.concat(), input);
                let by_piece: usize = cut.iter().map(|p| line_count(p)).sum();
                assert_eq!(by_piece, expected.len());
            }
        }
    }

    /// A reader that gives its bytes, then fails (`None`) or waits until it is told to
    /// end (`Some`: a message or a dropped sender), as a pipe kept open would.
    struct Then(&'static [u8], Option<mpsc::Receiver<()>>);

    impl Read for Then {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.0.is_empty() {
                let Some(go) = &self.1 else {
                    return Err(io::Error::other("disk on fire"));
                };
                let _ = go.recv();
                return Ok(0);
            }
            let n = buf.len().min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn a_read_error_comes_back_after_the_blocks_before_it() {
        let mut seen = Vec::new();
        let error = blocks_of_size(Then(b"a\nb\nc", None), 4, &ProgressBar::hidden(), |b| {
            seen.extend(lines(b).map(<[u8]>::to_vec));
            Ok(())
        })
        .unwrap_err();
        assert!(format!("{error:#}").contains("disk on fire"), "{error:#}");
        assert_eq!(seen, vec![b"a".to_vec(), b"b".to_vec()]);
    }

    #[test]
    fn an_error_from_the_caller_stops_the_reading_of_an_endless_input() {
        let mut blocks = 0;
        let error = blocks_of_size(io::repeat(b'\n'), 1 << 10, &ProgressBar::hidden(), |_| {
            blocks += 1;
            anyhow::bail!("enough")
        })
        .unwrap_err();
        assert_eq!(error.to_string(), "enough");
        assert_eq!(blocks, 1);
    }

    #[test]
    fn files_counted_in_parallel_parts_count_as_read_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lines");
        let grown: &[u8] = b"x\ny";
        for input in AWKWARD {
            std::fs::write(&path, input).unwrap();
            let expected = reference_lines(input).len() as u64;
            let hidden = ProgressBar::hidden();
            let size = input.len() as u64;
            let open = || File::open(&path).unwrap();
            assert_eq!(count_file_lines(open(), size, &hidden).unwrap(), expected);
            for part in 1..=6 {
                let parallel = count_file_lines_in_parallel(&open(), size, part, &hidden);
                assert_eq!(
                    parallel.unwrap(),
                    Some(expected),
                    "{input:?} in parts of {part}"
                );
                // Sizes taken before the file grew or shrank.
                let with_more = [*input, grown].concat();
                std::fs::write(&path, &with_more).unwrap();
                let more = reference_lines(&with_more).len() as u64;
                let counted = count_file_lines_in_parallel(&open(), size, part, &hidden);
                assert_eq!(
                    counted.unwrap(),
                    Some(more),
                    "{with_more:?} grown past {size}"
                );
                std::fs::write(&path, input).unwrap();
                if size > 0 {
                    let shrunk = count_file_lines_in_parallel(&open(), size + 1, part, &hidden);
                    assert_eq!(shrunk.unwrap(), None);
                    assert_eq!(
                        count_file_lines(open(), size + 1, &hidden).unwrap(),
                        expected
                    );
                }
            }
        }
    }

    #[test]
    fn an_error_from_the_caller_does_not_wait_for_input_that_does_not_come() {
        let (go, wait) = mpsc::channel();
        let reader = Then(b"a\nb\n", Some(wait));
        let error = blocks_of_size(reader, 4, &ProgressBar::hidden(), |_| anyhow::bail!("full"));
        assert_eq!(error.unwrap_err().to_string(), "full");
        drop(go);
    }
}
