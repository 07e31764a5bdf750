//! Recorded replies (`fixtures/rb24-sketches.*`, written by `make_sketch_fixtures.py`
//! against RedisBloom 2.4): lines `COMMAND<TAB>REPLY`, and a byte-safe pipelined RESP
//! session that renders replies the same way, so that a recorded reply and a reply of this
//! module compare as text.
//!
//! A command is its arguments separated by spaces; a reply is `+status`, `-error`,
//! `:integer`, `$bulk`, `nil` or `[element, element, …]`. Bytes outside printable ASCII,
//! `%`, and in arguments a space, in replies `,` `[` `]`, are written `%XX`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};

/// A fixture file's path.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/redis/fixtures")
        .join(name)
}

/// One recorded command and the reply it got.
#[derive(Clone, Debug)]
pub struct Line {
    pub command: Vec<Vec<u8>>,
    pub reply: String,
}

/// A recorded file: its lines by phase (`""` before any `phase` line), in order.
pub fn read(path: &Path) -> Vec<(String, Vec<Line>)> {
    let text = std::fs::read_to_string(path).expect("read the recorded file");
    let mut phases: Vec<(String, Vec<Line>)> = vec![(String::new(), Vec::new())];
    for line in text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        if let Some(name) = line.strip_prefix("phase ") {
            phases.push((name.to_string(), Vec::new()));
            continue;
        }
        let (command, reply) = line.split_once('\t').expect("COMMAND<TAB>REPLY");
        phases.last_mut().unwrap().1.push(Line {
            command: command.split(' ').map(unescape).collect(),
            reply: reply.to_string(),
        });
    }
    phases.retain(|(name, lines)| !name.is_empty() || !lines.is_empty());
    phases
}

/// The lines of one phase.
pub fn phase<'a>(phases: &'a [(String, Vec<Line>)], name: &str) -> &'a [Line] {
    &phases
        .iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no phase {name}"))
        .1
}

fn unescape(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap();
            out.push(u8::from_str_radix(hex, 16).unwrap());
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    out
}

fn escape(bytes: &[u8], special: &[u8]) -> String {
    let mut out = String::new();
    for &b in bytes {
        if (0x20..0x7f).contains(&b) && !special.contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Arguments as a recorded command.
pub fn command_text(command: &[Vec<u8>]) -> String {
    command
        .iter()
        .map(|a| escape(a, b"% "))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A plain RESP connection that pipelines commands and renders every reply as text.
pub struct Session {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Session {
    pub fn connect(port: u16) -> Self {
        let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        stream
            .set_read_timeout(Some(std::time::Duration::from_secs(60)))
            .expect("timeout");
        Self {
            reader: BufReader::new(stream.try_clone().expect("clone")),
            writer: stream,
        }
    }

    /// Sends the commands (in batches), then reads and renders one reply each. An I/O
    /// error (the server died) is returned as such.
    pub fn run(&mut self, commands: &[Vec<Vec<u8>>]) -> std::io::Result<Vec<String>> {
        let mut replies = Vec::with_capacity(commands.len());
        for batch in commands.chunks(500) {
            let mut out = Vec::new();
            for c in batch {
                out.extend_from_slice(format!("*{}\r\n", c.len()).as_bytes());
                for a in c {
                    out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
                    out.extend_from_slice(a);
                    out.extend_from_slice(b"\r\n");
                }
            }
            self.writer.write_all(&out)?;
            for _ in batch {
                replies.push(self.read()?);
            }
        }
        Ok(replies)
    }

    /// One command's rendered reply.
    pub fn one(&mut self, command: &[&[u8]]) -> String {
        let command: Vec<Vec<u8>> = command.iter().map(|a| a.to_vec()).collect();
        self.run(&[command]).expect("the server answers").remove(0)
    }

    fn read(&mut self) -> std::io::Result<String> {
        let mut line = Vec::new();
        if self.reader.read_until(b'\n', &mut line)? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        line.truncate(line.len().saturating_sub(2));
        let (kind, rest) = line.split_first().expect("a reply line");
        let number = || -> i64 { std::str::from_utf8(rest).unwrap().parse().unwrap() };
        Ok(match kind {
            b'+' => format!("+{}", escape(rest, b"%,[]")),
            b'-' => format!("-{}", escape(rest, b"%,[]")),
            b':' => format!(":{}", number()),
            b'$' if number() < 0 => "nil".into(),
            b'$' => {
                let mut data = vec![0u8; number() as usize + 2];
                self.reader.read_exact(&mut data)?;
                data.truncate(data.len() - 2);
                format!("${}", escape(&data, b"%,[]"))
            }
            b'*' if number() < 0 => "nil".into(),
            b'*' => {
                let n = number();
                let elements = (0..n).map(|_| self.read()).collect::<Result<Vec<_>, _>>()?;
                format!("[{}]", elements.join(", "))
            }
            _ => panic!("unexpected reply line {line:?}"),
        })
    }
}

/// Runs recorded lines and compares every reply; panics naming the first differences.
#[track_caller]
pub fn replay(session: &mut Session, when: &str, lines: &[Line]) {
    let commands: Vec<Vec<Vec<u8>>> = lines.iter().map(|l| l.command.clone()).collect();
    let got = session
        .run(&commands)
        .unwrap_or_else(|e| panic!("{when}: the server died ({e})"));
    let differ: Vec<String> = lines
        .iter()
        .zip(&got)
        .filter(|(l, g)| l.reply != **g)
        .map(|(l, g)| {
            let cut = |s: &str| s.chars().take(240).collect::<String>();
            format!(
                "{}\n    recorded {}\n    got      {}",
                cut(&command_text(&l.command)),
                cut(&l.reply),
                cut(g)
            )
        })
        .collect();
    assert!(
        differ.is_empty(),
        "{when}: {} of {} replies differ:\n{}",
        differ.len(),
        lines.len(),
        differ[..differ.len().min(5)].join("\n")
    );
}
