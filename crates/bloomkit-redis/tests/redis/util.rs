//! Small helpers to send commands and read replies.

use redis::{Connection, FromRedisValue, ToRedisArgs, Value};

/// A command from string-ish arguments.
pub fn cmd<A: ToRedisArgs>(args: &[A]) -> redis::Cmd {
    let mut c = redis::Cmd::new();
    for a in args {
        c.arg(a);
    }
    c
}

/// Runs a command that must succeed and converts the reply.
#[track_caller]
pub fn q<T: FromRedisValue, A: ToRedisArgs + std::fmt::Debug>(c: &mut Connection, args: &[A]) -> T {
    match cmd(args).query(c) {
        Ok(v) => v,
        Err(e) => panic!("{args:?} failed: {e}"),
    }
}

/// Runs a command that must fail and returns the error text as the server sent it.
#[track_caller]
pub fn err<A: ToRedisArgs + std::fmt::Debug>(c: &mut Connection, args: &[A]) -> String {
    match cmd(args).query::<Value>(c) {
        Ok(v) => panic!("{args:?} should fail, got {v:?}"),
        Err(e) => error_text(&e),
    }
}

/// The full text of a server error ("ERR bad capacity", "Bad capacity", "WRONGTYPE …").
pub fn error_text(e: &redis::RedisError) -> String {
    match (e.code(), e.detail()) {
        (Some(code), Some(detail)) => format!("{code} {detail}"),
        (Some(code), None) => code.to_string(),
        _ => e.to_string(),
    }
}

/// The raw reply of a command that must succeed.
#[track_caller]
pub fn v<A: ToRedisArgs + std::fmt::Debug>(c: &mut Connection, args: &[A]) -> Value {
    q(c, args)
}

/// `n` distinct item names with a prefix.
pub fn items(prefix: &str, range: std::ops::Range<u32>) -> Vec<String> {
    range.map(|i| format!("{prefix}{i}")).collect()
}

/// Sends one command over a plain TCP connection and returns the raw RESP2 reply, for the
/// replies the client library would turn into an error as a whole (arrays holding error
/// elements) and to check exact wire types.
pub fn raw_reply(port: u16, args: &[&[u8]]) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    let mut request = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        request.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        request.extend_from_slice(a);
        request.extend_from_slice(b"\r\n");
    }
    stream.write_all(&request).expect("send");
    stream
        .set_read_timeout(Some(std::time::Duration::from_millis(300)))
        .expect("timeout");
    let mut reply = Vec::new();
    let mut buf = [0u8; 4096];
    // Read until the server has been quiet for a moment (replies here are small).
    while let Ok(n) = stream.read(&mut buf) {
        if n == 0 {
            break;
        }
        reply.extend_from_slice(&buf[..n]);
        stream
            .set_read_timeout(Some(std::time::Duration::from_millis(50)))
            .expect("timeout");
    }
    String::from_utf8_lossy(&reply).into_owned()
}
