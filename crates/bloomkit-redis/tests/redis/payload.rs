//! DUMP payloads built and taken apart by hand, and a raw pipelined RESP connection.
//!
//! A DUMP payload is an RDB object (type byte, then the object) followed by a 10-byte
//! trailer: the RDB version (2 bytes, little-endian) and the CRC-64 of everything before
//! it (8 bytes, little-endian). RESTORE checks both before it hands the object to the
//! module, so a corrupted payload must carry a recomputed CRC to reach the module's
//! loader. A module value is type 7 (`RDB_TYPE_MODULE_2`), the 64-bit module type id
//! (9 name characters of 6 bits each, then the 10-bit encoding version) as an RDB length,
//! then typed fields (opcode 2 unsigned, 4 double, 5 string), then opcode 0 (EOF).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;

/// Redis's CRC-64 (Jones polynomial 0xad93d23594c935a9, reflected in and out, initial
/// value 0, no final xor), as its crc64.c; table-driven with the reflected polynomial.
pub fn crc64(data: &[u8]) -> u64 {
    static TABLE: std::sync::OnceLock<[u64; 256]> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        const REFLECTED: u64 = 0x95ac_9329_ac4b_c9b5;
        let mut t = [0u64; 256];
        for (i, slot) in t.iter_mut().enumerate() {
            let mut c = i as u64;
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    (c >> 1) ^ REFLECTED
                } else {
                    c >> 1
                };
            }
            *slot = c;
        }
        t
    });
    data.iter().fold(0u64, |crc, &b| {
        table[((crc ^ b as u64) & 0xff) as usize] ^ (crc >> 8)
    })
}

/// Redis 7.0's RDB version.
pub const RDB_VERSION: u16 = 10;

/// The object of a payload (without its trailer) and its RDB version.
pub fn unseal(payload: &[u8]) -> (Vec<u8>, u16) {
    let (body, trailer) = payload.split_at(payload.len() - 10);
    (body.to_vec(), u16::from_le_bytes([trailer[0], trailer[1]]))
}

/// An object with a valid trailer.
pub fn seal(body: &[u8], version: u16) -> Vec<u8> {
    let mut out = body.to_vec();
    out.extend_from_slice(&version.to_le_bytes());
    let crc = crc64(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// One typed field of a module value.
#[derive(Clone, Debug, PartialEq)]
pub enum Field {
    Unsigned(u64),
    Double(f64),
    Buffer(Vec<u8>),
}

/// An RDB length: 6-bit, 14-bit, 32-bit or 64-bit form.
fn rdb_len(out: &mut Vec<u8>, n: u64) {
    if n < 1 << 6 {
        out.push(n as u8);
    } else if n < 1 << 14 {
        out.push(0x40 | (n >> 8) as u8);
        out.push(n as u8);
    } else if n <= u32::MAX as u64 {
        out.push(0x80);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    } else {
        out.push(0x81);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

/// The 64-bit module type id of a 9-character type name and an encoding version.
pub fn module_type_id(name: &str, encver: u64) -> u64 {
    const CHARSET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    assert_eq!(name.len(), 9);
    let id = name.bytes().fold(0u64, |id, c| {
        let pos = CHARSET.iter().position(|&x| x == c).expect("charset");
        (id << 6) | pos as u64
    });
    (id << 10) | encver
}

/// A complete DUMP payload of a module value.
pub fn module_payload(type_name: &str, encver: u64, fields: &[Field]) -> Vec<u8> {
    let mut body = vec![7u8];
    rdb_len(&mut body, module_type_id(type_name, encver));
    for f in fields {
        match f {
            Field::Unsigned(v) => {
                body.push(2);
                rdb_len(&mut body, *v);
            }
            Field::Double(v) => {
                body.push(4);
                body.extend_from_slice(&v.to_le_bytes());
            }
            Field::Buffer(b) => {
                body.push(5);
                rdb_len(&mut body, b.len() as u64);
                body.extend_from_slice(b);
            }
        }
    }
    body.push(0);
    seal(&body, RDB_VERSION)
}

/// A RESP2 reply.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    Status(String),
    Error(String),
    Int(i64),
    Bulk(Option<Vec<u8>>),
    Array(Option<Vec<Reply>>),
}

impl Reply {
    /// The bytes of a bulk reply.
    pub fn bytes(&self) -> Option<&[u8]> {
        match self {
            Reply::Bulk(Some(b)) => Some(b),
            _ => None,
        }
    }
    pub fn is_error(&self) -> bool {
        matches!(self, Reply::Error(_))
    }
}

/// A plain RESP connection that sends many commands before reading their replies.
pub struct Pipe {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Pipe {
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

    /// Sends every command, then reads one reply for each. An I/O error (the server
    /// died) is returned as such.
    pub fn run(&mut self, commands: &[Vec<Vec<u8>>]) -> std::io::Result<Vec<Reply>> {
        let mut out = Vec::new();
        for c in commands {
            out.extend_from_slice(format!("*{}\r\n", c.len()).as_bytes());
            for a in c {
                out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
                out.extend_from_slice(a);
                out.extend_from_slice(b"\r\n");
            }
        }
        self.writer.write_all(&out)?;
        commands.iter().map(|_| self.read()).collect()
    }

    fn line(&mut self) -> std::io::Result<String> {
        let mut line = String::new();
        if self.reader.read_line(&mut line)? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        Ok(line.trim_end_matches("\r\n").to_string())
    }

    fn read(&mut self) -> std::io::Result<Reply> {
        let line = self.line()?;
        let (kind, rest) = line.split_at(1);
        let number = || rest.parse::<i64>().expect("a number");
        Ok(match kind {
            "+" => Reply::Status(rest.to_string()),
            "-" => Reply::Error(rest.to_string()),
            ":" => Reply::Int(number()),
            "$" if number() < 0 => Reply::Bulk(None),
            "$" => {
                let mut data = vec![0u8; number() as usize + 2];
                self.reader.read_exact(&mut data)?;
                data.truncate(data.len() - 2);
                Reply::Bulk(Some(data))
            }
            "*" if number() < 0 => Reply::Array(None),
            "*" => Reply::Array(Some(
                (0..number())
                    .map(|_| self.read())
                    .collect::<Result<_, _>>()?,
            )),
            _ => panic!("unexpected reply line {line:?}"),
        })
    }
}

/// A command from string-ish and byte arguments.
#[macro_export]
macro_rules! command {
    ($($arg:expr),* $(,)?) => {
        vec![$(AsRef::<[u8]>::as_ref(&$arg).to_vec()),*]
    };
}

/// Every one-byte change (flipping bit 0, bit 7 or all bits of each byte) and every
/// truncation of a DUMP payload's body, each sealed again with a correct footer so that it
/// reaches the module's loader rather than Redis's checksum.
pub fn mutants(payload: &[u8]) -> Vec<Vec<u8>> {
    let (body, version) = unseal(payload);
    let mut mutants = Vec::new();
    for i in 0..body.len() {
        for flip in [0x01u8, 0x80, 0xff] {
            let mut m = body.clone();
            m[i] ^= flip;
            mutants.push(seal(&m, version));
        }
    }
    for len in 0..body.len() {
        mutants.push(seal(&body[..len], version));
    }
    mutants
}

/// RESTOREs every mutant of `payload` under `key:mN`; each must be refused or load. Every
/// loaded one then goes through `exercise` (whose last command must be its DUMP), and that
/// DUMP must RESTORE and DUMP again to the same bytes. `log` gives the server's log for a
/// failure message. Returns (mutants tried, mutants loaded).
pub fn restore_mutants(
    pipe: &mut Pipe,
    log: &dyn Fn() -> String,
    key: &str,
    payload: &[u8],
    exercise: fn(&[u8]) -> Vec<Vec<Vec<u8>>>,
) -> (usize, usize) {
    let mutants = mutants(payload);
    let names: Vec<Vec<u8>> = (0..mutants.len())
        .map(|i| format!("{key}:m{i}").into_bytes())
        .collect();
    let restores: Vec<_> = names
        .iter()
        .zip(&mutants)
        .map(|(name, p)| crate::command!("RESTORE", name, "0", p))
        .collect();
    let replies = pipe
        .run(&restores)
        .unwrap_or_else(|e| panic!("{key}: the server died on RESTORE ({e}); log:\n{}", log()));
    let ok: Vec<&Vec<u8>> = names
        .iter()
        .zip(&replies)
        .filter(|(_, r)| **r == Reply::Status("OK".into()))
        .map(|(n, _)| n)
        .collect();
    assert!(
        replies
            .iter()
            .all(|r| r.is_error() || *r == Reply::Status("OK".into())),
        "{replies:?}"
    );
    let commands: Vec<_> = ok.iter().flat_map(|k| exercise(k)).collect();
    let replies = pipe.run(&commands).unwrap_or_else(|e| {
        panic!(
            "{key}: the server died on a restored value ({e}); log:\n{}",
            log()
        )
    });
    let per_key = exercise(b"k").len();
    let dumps: Vec<&[u8]> = replies
        .chunks(per_key)
        .map(|r| {
            r.last()
                .and_then(Reply::bytes)
                .expect("DUMP of a loaded value")
        })
        .collect();
    let again: Vec<_> = ok
        .iter()
        .zip(&dumps)
        .flat_map(|(k, d)| {
            let name = [&k[..], b":again"].concat();
            [
                crate::command!("RESTORE", name, "0", d),
                crate::command!("DUMP", name),
            ]
        })
        .collect();
    let replies = pipe.run(&again).expect("the server answers");
    for (pair, d) in replies.chunks(2).zip(&dumps) {
        assert_eq!(
            pair[0],
            Reply::Status("OK".into()),
            "a DUMP the module made"
        );
        assert_eq!(pair[1].bytes(), Some(*d), "DUMP → RESTORE → DUMP is stable");
    }
    (mutants.len(), ok.len())
}
