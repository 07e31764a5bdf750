//! Integration tests: real `redis-server` processes (Debian's 7.0) with the module loaded,
//! on free loopback ports, started and killed by the tests themselves (see `harness`).

mod bf;
mod budget;
mod cf;
mod distributed;
mod dumps;
mod harness;
mod huge_pages;
mod older;
mod older_rdb;
mod parity;
mod payload;
mod persistence;
mod safety;
mod sketch_rdb;
mod sketch_safety;
mod sketches;
mod tdigest;
mod transcript;
mod util;
