//! Reading items: from command-line arguments, from the lines of standard input, or from
//! the lines of a file; and the progress bars shown while reading.
//!
//! A line is one item, byte for byte, without its line ending (`\n` or `\r\n`). Items need
//! not be UTF-8. Every line counts, including empty ones; a final line without a newline is
//! an item too.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufRead, BufReader, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

/// Buffer size for reading lines: large reads keep system calls rare.
pub const READ_BUFFER: usize = 1 << 20;

/// How often, in bytes read, a progress bar is moved on (moving it takes a lock).
const PROGRESS_STEP: u64 = 1 << 20;

/// Where a command's items come from: its arguments, else `--from FILE`, else standard input.
#[derive(Debug, Args)]
pub struct ItemArgs {
    /// Items to use; without any, items are read one per line from --from FILE or standard input.
    #[arg(value_name = "ITEM")]
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
    /// Decides where the items come from.
    pub fn source(self) -> ItemSource {
        match self.from {
            Some(path) if path.as_os_str() == "-" => ItemSource::Stdin,
            Some(path) => ItemSource::File(path),
            None if self.items.is_empty() => ItemSource::Stdin,
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
        ItemSource::File(path) => {
            let (file, size) = open_input(&path)?;
            let progress = byte_progress(Some(size), label);
            let result = for_each_line(file, &progress, f)
                .with_context(|| format!("reading {}", path.display()));
            progress.finish_and_clear();
            result
        }
        ItemSource::Stdin => {
            let stdin = io::stdin();
            if stdin.is_terminal() {
                let _ = writeln!(
                    io::stderr(),
                    "reading items from standard input, one per line (end with Ctrl-D)"
                );
            }
            let progress = byte_progress(None, label);
            let result =
                for_each_line(stdin.lock(), &progress, f).context("reading standard input");
            progress.finish_and_clear();
            result
        }
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
    reader: impl Read,
    progress: &ProgressBar,
    mut f: impl FnMut(&[u8]) -> Result<()>,
) -> Result<u64> {
    let mut reader = BufReader::with_capacity(READ_BUFFER, reader);
    let mut line = Vec::new();
    let (mut lines, mut bytes, mut shown) = (0u64, 0u64, 0u64);
    loop {
        line.clear();
        let read = reader.read_until(b'\n', &mut line)?;
        if read == 0 {
            break;
        }
        bytes += read as u64;
        lines += 1;
        f(strip_line_ending(&line))?;
        if bytes - shown >= PROGRESS_STEP {
            progress.set_position(bytes);
            shown = bytes;
        }
    }
    progress.set_position(bytes);
    Ok(lines)
}

/// Counts the lines of `reader` as [`for_each_line`] would see them, reading it in large
/// chunks without splitting it.
pub fn count_lines(mut reader: impl Read, progress: &ProgressBar) -> io::Result<u64> {
    let mut buffer = vec![0u8; READ_BUFFER];
    let (mut newlines, mut bytes) = (0u64, 0u64);
    let mut last = b'\n';
    loop {
        let read = match reader.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => read,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let chunk = &buffer[..read];
        newlines += chunk.iter().filter(|&&b| b == b'\n').count() as u64;
        last = chunk[read - 1];
        bytes += read as u64;
        progress.set_position(bytes);
    }
    // A last line without a newline is a line too.
    Ok(newlines + u64::from(last != b'\n'))
}

/// The line without its trailing `\n` or `\r\n`.
pub fn strip_line_ending(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
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

/// A progress bar on standard error that counts steps (hidden when not a terminal).
pub fn step_progress(total: u64, label: &str) -> ProgressBar {
    let bar = ProgressBar::new(total);
    let style = ProgressStyle::with_template("{msg:>14} [{bar:40}] {pos}/{len} ({eta})")
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
        let n = for_each_line(input, &ProgressBar::hidden(), |line| {
            out.push(line.to_vec());
            Ok(())
        })
        .unwrap();
        assert_eq!(n as usize, out.len());
        assert_eq!(count_lines(input, &ProgressBar::hidden()).unwrap(), n);
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
}
