//! RedisBloom 2.4's scalable Bloom filter, bit for bit: its layer sizing, hashing, growth
//! rule, SCANDUMP header and chunks.
//!
//! The bits live in the library's [`BitVec`] (whose little-endian byte image is exactly
//! RedisBloom's byte buffer: bit x is bit x mod 8 of byte x / 8) and positions come from the
//! library's [`bloomkit::Hashing::redisbloom`] (MurmurHash64A pair, `(a + i·b) mod bits`), or,
//! for chains without 64-bit hashing, from 32-bit MurmurHash2 ([`hash_pair`]). What is
//! here is only what RedisBloom does differently from [`bloomkit::ScalableBloomFilter`]:
//!
//! * layer sizing: `bpe = −ln ε / ln²2`, `bits = ⌊n·bpe⌋` rounded up to a multiple of 64,
//!   `hashes = ⌈ln 2 · bpe⌉` (the library rounds k to nearest and does not pad m);
//! * the first layer has ε/2 (ε when NONSCALING), each next layer n·expansion and ε/2;
//! * layers loaded from a dump keep whatever parameters they were stored with (the
//!   library's scalable filter derives every layer's shape from its parameters, so it
//!   cannot hold a dump of a filter made elsewhere).
//!
//! # Older data
//!
//! RedisBloom before 2.2 wrote other layouts, which 2.4 still loads and queries; so does
//! this module ([`Chain::load`]):
//!
//! * encoding versions 0–3 of the RDB record: version 0 stores no `bits` and `n2` (bits are
//!   `⌊entries · bpe⌋`), versions below 2 no options (0: 32-bit hashing), versions below 4
//!   no growth (2);
//! * chains without `FORCE64` hash with 32-bit MurmurHash2 ([`bloomkit::hash::murmur2`]): `a = h(item,
//!   0x9747b28c)`, `b = h(item, a)`;
//! * layers with `n2 > 0` (their size was rounded up to a power of two, `2ⁿ²` bits) take
//!   positions modulo `2ⁿ²` instead of modulo `bits`; such layers were written with
//!   `bits = 0` before 2.2, and are loaded with `bits = bytes · 8` (what 2.2 and later
//!   write, and what RedisBloom 2.4's own integrity check asks for);
//! * chains without `NOROUND` add power-of-two layers when they grow ([`layer_for`]).
//!
//! # Counts
//!
//! The stored counts must survive every command: whatever the module saves, it loads. The
//! chain's item count is the sum of its layers' counts (checked on every load, so a
//! SCANDUMP/AOF rewrite always loads back); an add past `u64::MAX` items leaves both counts
//! as they are (saturates) rather than breaking that sum. Sums over layers (capacity,
//! bytes) saturate.

use bloomkit::bits::BitVec;
use bloomkit::hash::{murmur2, murmur64a, REDISBLOOM_SEED};

use crate::config::{Limit, Refusal};
use crate::rdb::{Sink, Source};

// The SCANDUMP layout, the option bits, RedisBloom's sizing and its integrity check of a
// layer are the library's (`bloomkit::interop::redisbloom`, which `bloomkit export --to
// redis` and `import --from redis` use): one copy of RedisBloom's bytes in the workspace.
pub use bloomkit::interop::redisbloom::{
    hashes_for, layer_shape, BLOOM_HEADER_FIXED_BYTES as HEADER_FIXED_BYTES,
    BLOOM_HEADER_LAYER_BYTES as HEADER_LAYER_BYTES, MAX_CHUNK_BYTES, MAX_HASHES, OPT_ENTS_IS_BITS,
    OPT_FORCE64, OPT_NOROUND, OPT_NO_SCALING,
};
use bloomkit::interop::redisbloom::{BloomHeader, BloomLayerHeader as LayerRecord, LN2_SQUARED};

/// RedisBloom's `sizeof(SBChain)` and `sizeof(SBLink)`, counted by `BF.INFO Size`.
const CHAIN_STRUCT_BYTES: u64 = 32;
const LINK_STRUCT_BYTES: u64 = 64;

/// The newest RDB encoding version of `MBbloom--` (2.2 and later: with growth).
pub const ENCODING_VERSION: i32 = 4;
/// From this version on the record holds the options.
const MIN_OPTIONS_ENCODING: i32 = 2;

/// The seed of the first 32-bit hash of chains without `FORCE64`.
const LEGACY_SEED: u32 = 0x9747_b28c;

/// An item's hash pair `(a, b)` under a chain's options: with `FORCE64` MurmurHash64A with
/// seed [`REDISBLOOM_SEED`] then seed `a`; without it 32-bit [`murmur2`] with seed
/// 0x9747b28c then seed `a`. Bit `i` of a layer is `(a + i·b) mod 2⁶⁴ mod m`.
pub fn hash_pair(options: u32, item: &[u8]) -> (u64, u64) {
    if options & OPT_FORCE64 != 0 {
        let a = murmur64a(item, REDISBLOOM_SEED);
        (a, murmur64a(item, a))
    } else {
        let a = murmur2(item, LEGACY_SEED);
        (a as u64, murmur2(item, a) as u64)
    }
}

/// Why a filter cannot be created or grown.
#[derive(Debug, Clone, PartialEq)]
pub enum BfError {
    /// The filter (or the layer to add) would pass a memory limit.
    TooLarge(Refusal),
    /// A NONSCALING filter's only layer is full.
    NonScalingFull,
    /// The next layer's parameters are not representable (capacity overflow, error 0,
    /// growth 0).
    CannotGrow,
    /// The allocation failed.
    OutOfMemory,
}

/// One layer: a classic Bloom filter with RedisBloom's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Layer {
    bits: BitVec,
    hashes: u32,
    entries: u64,
    error: f64,
    bpe: f64,
    size: u64,
    n2: u8,
}

/// A new layer's shape under a chain's options, as RedisBloom's `bloom_init`: `(bits,
/// hashes, bpe, entries, n2)` — `entries` may grow and `n2` is set when the size is rounded
/// to a power of two. `None` where the parameters are out of range.
///
/// * `NOROUND` (what 2.2 and later write): [`layer_shape`].
/// * `ENTS_IS_BITS`: `entries` (≤ 63 here) is `n2`; the layer has `2ⁿ²` bits and
///   `⌊2ⁿ² / bpe⌋` entries.
/// * neither (RedisBloom 1.x): `n2 = ⌊log₂(entries · bpe)⌋ + 1`, `2ⁿ²` bits, and the entries
///   grow by the items the extra bits hold, `⌊⌊2ⁿ² − entries · bpe⌋ / bpe⌋`.
///
/// Either way the bits are padded to a multiple of 64.
pub fn layer_for(entries: u64, error: f64, options: u32) -> Option<(u64, u32, f64, u64, u8)> {
    if options & (OPT_ENTS_IS_BITS | OPT_NOROUND) == OPT_NOROUND {
        let (bits, hashes, bpe) = layer_shape(entries, error)?;
        return Some((bits, hashes, bpe, entries, 0));
    }
    if entries == 0 || !(error > 0.0 && error < 1.0) {
        return None;
    }
    let bpe = -error.ln() / LN2_SQUARED;
    let (n2, entries) = if options & OPT_ENTS_IS_BITS != 0 {
        if entries > 63 {
            return None;
        }
        (entries as u8, ((1u64 << entries) as f64 / bpe) as u64)
    } else {
        let x = entries as f64 * bpe;
        if !x.is_normal() {
            return None;
        }
        // logb: the binary exponent of a normal double, exactly.
        let exponent = ((x.to_bits() >> 52) & 0x7ff) as i64 - 1023;
        if !(-1..=62).contains(&exponent) {
            return None;
        }
        let n2 = (exponent + 1) as u8;
        let spare_bits = ((1u64 << n2) as f64 - x) as u64;
        let extra = (spare_bits as f64 / bpe) as u64;
        (n2, entries.checked_add(extra)?)
    };
    let bits = (1u64 << n2).div_ceil(64) * 64;
    Some((bits, hashes_for(bpe)?, bpe, entries, n2))
}

impl Layer {
    fn new(entries: u64, error: f64, options: u32) -> Result<Self, BfError> {
        let (bits, hashes, bpe, entries, n2) =
            layer_for(entries, error, options).ok_or(BfError::CannotGrow)?;
        let bits = BitVec::zeros(bits).map_err(|_| BfError::OutOfMemory)?;
        Ok(Self {
            bits,
            hashes,
            entries,
            error,
            bpe,
            size: 0,
            n2,
        })
    }

    /// The number of bytes of the bit array.
    pub fn bytes(&self) -> u64 {
        self.bits.len() / 8
    }

    /// The number of bits.
    pub fn num_bits(&self) -> u64 {
        self.bits.len()
    }

    /// The number of hash functions.
    pub fn hashes(&self) -> u32 {
        self.hashes
    }

    /// The capacity ("entries").
    pub fn entries(&self) -> u64 {
        self.entries
    }

    /// The error rate the layer was sized for.
    pub fn error(&self) -> f64 {
        self.error
    }

    /// Bits per entry.
    pub fn bpe(&self) -> f64 {
        self.bpe
    }

    /// Items added to this layer.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// log₂ of the bits when rounded to a power of two (layers of RedisBloom 1.x); 0
    /// otherwise (2.2 and later never round).
    pub fn n2(&self) -> u8 {
        self.n2
    }

    /// What bit positions are taken modulo: `2ⁿ²` for power-of-two layers, else the bits.
    fn modulus(&self) -> u64 {
        if self.n2 > 0 {
            1 << self.n2
        } else {
            self.bits.len()
        }
    }

    /// The bit array.
    pub fn bit_vec(&self) -> &BitVec {
        &self.bits
    }

    /// The bit positions of a hash pair ([`hash_pair`]) in this layer: `(a + i·b) mod 2⁶⁴
    /// mod m` for `i < hashes`, `m` = `2ⁿ²` or the bits. Always below the bits: `2ⁿ² ≤
    /// bits` is checked when a layer is loaded.
    pub fn positions(&self, (a, b): (u64, u64)) -> impl Iterator<Item = u64> {
        let m = self.modulus();
        (0..self.hashes as u64).map(move |i| a.wrapping_add(i.wrapping_mul(b)) % m)
    }

    fn contains(&self, hash: (u64, u64)) -> bool {
        self.positions(hash).all(|p| self.bits.get(p))
    }

    fn insert(&mut self, hash: (u64, u64)) {
        // The iterator holds copies of m and k, not a borrow of the layer.
        for p in self.positions(hash) {
            self.bits.set(p);
        }
    }

    /// The bit array's bytes (exactly [`Layer::bytes`] of them).
    pub fn data(&self) -> Vec<u8> {
        let mut data = vec![0u8; self.bytes() as usize];
        self.bits
            .read_le_bytes_at(0, &mut data)
            .expect("a layer's bytes are within its words");
        data
    }

    /// The layer's record in a SCANDUMP header.
    fn record(&self) -> LayerRecord {
        LayerRecord {
            bytes: self.bytes(),
            bits: self.num_bits(),
            size: self.size,
            error: self.error,
            bpe: self.bpe,
            hashes: self.hashes,
            entries: self.entries,
            n2: self.n2,
        }
    }

    /// An all-zero layer with a header record's parameters, after checking them.
    fn zeroed(r: &LayerRecord) -> Option<Self> {
        if !r.is_consistent() {
            return None;
        }
        Some(Self {
            bits: BitVec::zeros(r.bits).ok()?,
            hashes: r.hashes,
            entries: r.entries,
            error: r.error,
            bpe: r.bpe,
            size: r.size,
            n2: r.n2,
        })
    }
}

/// Options RedisBloom 2.4 accepts in a header: any of NOROUND, ENTS_IS_BITS, FORCE64 and
/// NO_SCALING. The RDB loader asks the same, so that what it loads can be dumped (and
/// AOF-rewritten) as a header that loads again.
fn valid_options(options: u32) -> bool {
    options & !(OPT_NOROUND | OPT_ENTS_IS_BITS | OPT_FORCE64 | OPT_NO_SCALING) == 0
}

/// Why a SCANDUMP header was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderError {
    /// Not a valid header.
    Invalid,
    /// The filter it describes would pass a memory limit.
    TooLarge(Refusal),
}

/// RedisBloom's scalable Bloom filter (its `SBChain`).
#[derive(Clone, Debug, PartialEq)]
pub struct Chain {
    layers: Vec<Layer>,
    size: u64,
    options: u32,
    growth: u32,
}

impl Chain {
    /// A filter as `BF.RESERVE key error capacity [EXPANSION growth] [NONSCALING]` makes it,
    /// refused when `limit` does not admit its first layer.
    pub fn new(
        capacity: u64,
        error: f64,
        growth: u32,
        nonscaling: bool,
        limit: impl Limit,
    ) -> Result<Self, BfError> {
        let first_error = if nonscaling { error } else { error * 0.5 };
        let (bits, _, _) = layer_shape(capacity, first_error).ok_or(BfError::CannotGrow)?;
        let needed = CHAIN_STRUCT_BYTES + LINK_STRUCT_BYTES + bits / 8;
        limit.check(0, needed).map_err(BfError::TooLarge)?;
        let mut options = OPT_NOROUND | OPT_FORCE64;
        if nonscaling {
            options |= OPT_NO_SCALING;
        }
        let layer = Layer::new(capacity, first_error, options)?;
        Ok(Self {
            layers: vec![layer],
            size: 0,
            options,
            growth,
        })
    }

    /// Whether the item may be in the filter.
    pub fn contains(&self, item: &[u8]) -> bool {
        let hash = hash_pair(self.options, item);
        self.layers.iter().rev().any(|l| l.contains(hash))
    }

    /// Adds an item: `Ok(true)` if added, `Ok(false)` if some layer already has it. Adds a
    /// layer first when the newest is full, if `limit` admits it (and tells `limit` it grew).
    /// At `u64::MAX` items the counts stay as they are (the item's bits are still set).
    pub fn add(&mut self, item: &[u8], limit: impl Limit) -> Result<bool, BfError> {
        let hash = hash_pair(self.options, item);
        if self.layers.iter().rev().any(|l| l.contains(hash)) {
            return Ok(false);
        }
        let newest = self.layers.last().expect("a chain has a layer");
        if newest.size >= newest.entries {
            if self.is_nonscaling() {
                return Err(BfError::NonScalingFull);
            }
            let entries = newest
                .entries
                .checked_mul(self.growth as u64)
                .ok_or(BfError::CannotGrow)?;
            let error = newest.error * 0.5;
            let (bits, ..) = layer_for(entries, error, self.options).ok_or(BfError::CannotGrow)?;
            let held = self.memory_bytes();
            let needed = held.saturating_add(LINK_STRUCT_BYTES + bits / 8);
            limit.check(held, needed).map_err(BfError::TooLarge)?;
            let layer = Layer::new(entries, error, self.options)?;
            self.layers.push(layer);
            limit.grew(self.memory_bytes() - held);
        }
        let newest = self.layers.last_mut().expect("a chain has a layer");
        newest.insert(hash);
        // Each layer's count is at most the total (their sum), so when the total can take
        // one more, so can the layer; at u64::MAX neither moves and the sum still holds.
        if self.size < u64::MAX {
            newest.size += 1;
            self.size += 1;
        }
        Ok(true)
    }

    /// Items added (`BF.CARD`, "Number of items inserted").
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The sum of the layers' capacities (`BF.INFO Capacity`), saturating.
    pub fn capacity(&self) -> u64 {
        self.layers
            .iter()
            .fold(0u64, |sum, l| sum.saturating_add(l.entries))
    }

    /// The layers, oldest first.
    pub fn layers(&self) -> &[Layer] {
        &self.layers
    }

    /// The options bit set (`NOROUND | FORCE64`, plus `NO_SCALING`; older data may have
    /// others, see [`layer_for`]).
    pub fn options(&self) -> u32 {
        self.options
    }

    /// The expansion factor.
    pub fn growth(&self) -> u32 {
        self.growth
    }

    /// Whether the filter never adds a layer.
    pub fn is_nonscaling(&self) -> bool {
        self.options & OPT_NO_SCALING != 0
    }

    /// `BF.INFO Size` and `MEMORY USAGE`'s part: 32 + 64·layers + Σ layer bytes.
    pub fn memory_bytes(&self) -> u64 {
        self.layers.iter().fold(CHAIN_STRUCT_BYTES, |sum, l| {
            sum.saturating_add(LINK_STRUCT_BYTES + l.bytes())
        })
    }

    /// `BF.DEBUG`'s lines.
    pub fn debug_lines(&self) -> Vec<String> {
        let mut lines = vec![format!("size:{}", self.size)];
        let width = if self.options & OPT_FORCE64 != 0 {
            64
        } else {
            32
        };
        for l in &self.layers {
            lines.push(format!(
                "bytes:{} bits:{} hashes:{} hashwidth:{width} capacity:{} size:{} ratio:{}",
                l.bytes(),
                l.num_bits(),
                l.hashes,
                l.entries,
                l.size,
                format_g(l.error)
            ));
        }
        lines
    }

    /// The SCANDUMP header (`[1, header]` answers iterator 0), in the library's layout.
    pub fn header(&self) -> Vec<u8> {
        BloomHeader {
            size: self.size,
            options: self.options,
            growth: self.growth,
            layers: self.layers.iter().map(Layer::record).collect(),
        }
        .to_bytes()
    }

    /// A filter with all bits zero from a SCANDUMP header. Checks the whole header (the
    /// library's [`BloomHeader::parse`]: RedisBloom's integrity checks), and the memory it
    /// asks for against `limit`, before allocating anything.
    pub fn from_header(header: &[u8], limit: impl Limit) -> Result<Self, HeaderError> {
        let h = BloomHeader::parse(header).map_err(|_| HeaderError::Invalid)?;
        let needed = h.layers.iter().fold(CHAIN_STRUCT_BYTES, |sum, l| {
            sum.saturating_add(LINK_STRUCT_BYTES + l.bytes)
        });
        limit.check(0, needed).map_err(HeaderError::TooLarge)?;
        let layers = h
            .layers
            .iter()
            .map(Layer::zeroed)
            .collect::<Option<Vec<_>>>()
            .ok_or(HeaderError::Invalid)?;
        Ok(Self {
            layers,
            size: h.size,
            options: h.options,
            growth: h.growth,
        })
    }

    /// Writes the RDB record of encoding version [`ENCODING_VERSION`]: size, layers,
    /// options, growth; per layer entries, error, hashes, bpe, bits, n2, the bit bytes,
    /// size.
    pub fn save(&self, out: &mut impl Sink) {
        out.unsigned(self.size);
        out.unsigned(self.layers.len() as u64);
        out.unsigned(self.options as u64);
        out.unsigned(self.growth as u64);
        for l in &self.layers {
            out.unsigned(l.entries);
            out.double(l.error);
            out.unsigned(l.hashes as u64);
            out.double(l.bpe);
            out.unsigned(l.num_bits());
            out.unsigned(l.n2 as u64);
            out.buffer(&l.data());
            out.unsigned(l.size);
        }
    }

    /// Reads an RDB record of encoding version `encver` (0 to [`ENCODING_VERSION`], see
    /// the module docs for the older layouts). `None` — and nothing kept — at the first
    /// short read, on an inconsistent record (the same checks as a SCANDUMP header), or
    /// when `limit` does not admit the layers: that is checked before each layer's bytes
    /// are read.
    pub fn load(src: &mut impl Source, encver: i32, limit: impl Limit) -> Option<Self> {
        if !(0..=ENCODING_VERSION).contains(&encver) {
            return None;
        }
        let size = src.unsigned()?;
        let num_layers = src.unsigned()?;
        let options = if encver >= MIN_OPTIONS_ENCODING {
            u32::try_from(src.unsigned()?).ok()?
        } else {
            0
        };
        let growth = if encver >= ENCODING_VERSION {
            u32::try_from(src.unsigned()?).ok()?
        } else {
            2
        };
        if num_layers == 0 || !valid_options(options) {
            return None;
        }
        let mut needed = CHAIN_STRUCT_BYTES;
        let mut layers = Vec::new();
        let mut sizes = 0u64;
        for _ in 0..num_layers {
            let entries = src.unsigned()?;
            let error = src.double()?;
            let hashes = u32::try_from(src.unsigned()?).ok()?;
            let bpe = src.double()?;
            let (mut bits, n2) = if encver == 0 {
                // Version 0 stored no bits: ⌊entries · bpe⌋, as C converts the product.
                let bits = entries as f64 * bpe;
                if !(0.0..18_446_744_073_709_551_616.0).contains(&bits) {
                    return None;
                }
                (bits as u64, 0)
            } else {
                (src.unsigned()?, u8::try_from(src.unsigned()?).ok()?)
            };
            // The least the bytes can be (2ⁿ² bits for the old power-of-two layers, which
            // stored bits = 0), checked before Redis is asked to read them.
            let least = if bits == 0 && n2 > 0 && n2 <= 63 {
                (1u64 << n2).div_ceil(8)
            } else {
                bits.div_ceil(8)
            };
            limit
                .check(0, needed.saturating_add(LINK_STRUCT_BYTES + least))
                .ok()?;
            let data = src.buffer()?;
            if encver < ENCODING_VERSION && bits == 0 && n2 > 0 {
                bits = (data.len() as u64).saturating_mul(8);
            }
            let record = LayerRecord {
                bytes: data.len() as u64,
                bits,
                size: src.unsigned()?,
                error,
                bpe,
                hashes,
                entries,
                n2,
            };
            needed = needed.saturating_add(LINK_STRUCT_BYTES + record.bytes);
            limit.check(0, needed).ok()?;
            sizes = sizes.checked_add(record.size)?;
            let mut layer = Layer::zeroed(&record)?;
            layer.bits.write_le_bytes_at(0, &data).ok()?;
            layers.push(layer);
        }
        // The count is the sum of the layers' counts: every writer keeps it so, and a
        // chain that broke it would dump a header that no LOADCHUNK (RedisBloom's either)
        // loads back.
        (sizes == size).then_some(Self {
            layers,
            size,
            options,
            growth,
        })
    }

    /// The data chunk at SCANDUMP iterator `iter` ≥ 1 and the iterator that follows it, or
    /// `None` past the end. A chunk is at most [`MAX_CHUNK_BYTES`] and never crosses a
    /// layer.
    pub fn chunk(&self, iter: u64) -> Option<(u64, Vec<u8>)> {
        let mut offset = iter.checked_sub(1)?;
        for l in &self.layers {
            if offset < l.bytes() {
                let len = (l.bytes() - offset).min(MAX_CHUNK_BYTES);
                let mut data = vec![0u8; len as usize];
                l.bits.read_le_bytes_at(offset, &mut data)?;
                return Some((iter + len, data));
            }
            offset -= l.bytes();
        }
        None
    }

    /// Writes a data chunk that SCANDUMP returned with iterator `iter` (so it starts at byte
    /// `iter − len − 1`), with RedisBloom's checks in its order: `iter` ≤ 0 or below the
    /// length is bad data; an offset before the first or past the last layer has no link;
    /// a chunk that crosses the end of its layer is too big. Nothing changes on an error.
    pub fn load_chunk(&mut self, iter: i64, data: &[u8]) -> Result<(), ChunkError> {
        let len = data.len() as u64;
        if iter <= 0 || (iter as u64) < len {
            return Err(ChunkError::BadData);
        }
        let mut offset = (iter as u64 - len)
            .checked_sub(1)
            .ok_or(ChunkError::NoLink)?;
        for l in &mut self.layers {
            if offset < l.bytes() {
                if len > l.bytes() - offset {
                    return Err(ChunkError::TooBig);
                }
                return l
                    .bits
                    .write_le_bytes_at(offset, data)
                    .map_err(|_| ChunkError::TooBig);
            }
            offset -= l.bytes();
        }
        Err(ChunkError::NoLink)
    }
}

/// Why LOADCHUNK refused a data chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkError {
    /// The iterator is not positive or is below the chunk's length.
    BadData,
    /// The offset is past every layer.
    NoLink,
    /// The chunk crosses the end of its layer.
    TooBig,
}

/// C's `%g`: 6 significant digits, trailing zeros removed, exponent form below 10⁻⁴ or from
/// 10⁶ (as `BF.DEBUG` prints the ratio).
pub fn format_g(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let exp = x.abs().log10().floor() as i32;
    // Round to 6 significant digits first; rounding may carry into the next power of ten.
    let sci = format!("{:.5e}", x);
    let (mantissa, e) = sci.split_once('e').expect("exponent");
    let e: i32 = e.parse().unwrap_or(exp);
    if !(-4..6).contains(&e) {
        let m = trim_zeros(mantissa);
        format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
    } else {
        let decimals = (5 - e).max(0) as usize;
        trim_zeros(&format!("{x:.decimals$}")).to_string()
    }
}

fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bloomkit::interop::redisbloom::LN2;

    #[test]
    fn default_first_layer_matches_the_documented_sizing() {
        // ε = 0.01 → first layer ε/2 = 0.005, n = 100.
        let bpe = -(0.005f64).ln() / (2f64.ln() * 2f64.ln());
        let bits = ((100.0 * bpe) as u64).div_ceil(64) * 64;
        let hashes = (2f64.ln() * bpe).ceil() as u32;
        let chain = Chain::new(100, 0.01, 2, false, u64::MAX).unwrap();
        let l = &chain.layers()[0];
        assert_eq!((l.num_bits(), l.hashes()), (bits, hashes));
        assert_eq!((bits, hashes), (1152, 8));
        assert_eq!(chain.memory_bytes(), 32 + 64 + 144);
    }

    #[test]
    fn layers_grow_by_expansion_and_halve_the_error() {
        let mut chain = Chain::new(10, 0.01, 3, false, u64::MAX).unwrap();
        let mut i = 0u32;
        while chain.size() < 45 {
            chain.add(&i.to_le_bytes(), u64::MAX).unwrap();
            i += 1;
        }
        let caps: Vec<u64> = chain.layers().iter().map(Layer::entries).collect();
        assert_eq!(caps, [10, 30, 90]);
        let errs: Vec<f64> = chain.layers().iter().map(Layer::error).collect();
        assert_eq!(errs, [0.005, 0.0025, 0.00125]);
        assert_eq!(chain.size(), 45);
        assert!((0..i).all(|i| chain.contains(&i.to_le_bytes())));
    }

    #[test]
    fn adds_set_exactly_the_library_positions_of_redisbloom_hashing() {
        let mut chain = Chain::new(1000, 0.001, 2, false, u64::MAX).unwrap();
        let mut want = BitVec::zeros(chain.layers()[0].num_bits()).unwrap();
        for i in 0..200u32 {
            let item = format!("item-{i}");
            chain.add(item.as_bytes(), u64::MAX).unwrap();
            let layer = &chain.layers()[0];
            let library = bloomkit::Hashing::redisbloom();
            for p in library.positions(item.as_bytes(), layer.hashes(), layer.num_bits()) {
                want.set(p);
            }
        }
        assert_eq!(chain.layers()[0].bit_vec(), &want);
        assert!((0..200).all(|i| chain.contains(format!("item-{i}").as_bytes())));
    }

    #[test]
    fn a_layer_has_at_least_one_word_of_bits() {
        // bpe = −ln 0.99 / ln²2 ≈ 0.021: 3 · bpe rounds down to 0 bits.
        let chain = Chain::new(3, 0.99, 2, true, u64::MAX).unwrap();
        let l = &chain.layers()[0];
        assert_eq!((l.num_bits(), l.hashes(), l.bytes()), (64, 1, 8));
        let tiny = layer_shape(100, 0.999_999_999_999_999_9).map(|(bits, k, _)| (bits, k));
        assert_eq!(tiny, Some((64, 1)));
    }

    #[test]
    fn nonscaling_filters_refuse_past_capacity() {
        let mut chain = Chain::new(5, 0.01, 2, true, u64::MAX).unwrap();
        assert_eq!(chain.layers()[0].error(), 0.01);
        let mut added = 0;
        let mut i = 0u32;
        while added < 5 {
            added += chain.add(&i.to_le_bytes(), u64::MAX).unwrap() as u32;
            i += 1;
        }
        let mut result = Ok(false);
        while result == Ok(false) {
            i += 1;
            result = chain.add(&i.to_le_bytes(), u64::MAX);
        }
        assert_eq!(result, Err(BfError::NonScalingFull));
    }

    #[test]
    fn the_memory_limit_refuses_creation_and_growth() {
        assert!(matches!(
            Chain::new(1 << 30, 0.001, 2, false, 128 << 20),
            Err(BfError::TooLarge { .. })
        ));
        let mut chain = Chain::new(100, 0.01, 2, false, 400).unwrap();
        let mut i = 0u32;
        let err = loop {
            match chain.add(&i.to_le_bytes(), 400) {
                Ok(_) => i += 1,
                Err(e) => break e,
            }
        };
        assert!(matches!(
            err,
            BfError::TooLarge(Refusal::PerKey { limit: 400, .. })
        ));
        assert_eq!(chain.layers().len(), 1);
    }

    /// A limit that admits everything and records what it was asked and told.
    #[derive(Default)]
    struct Recorder {
        checks: std::cell::RefCell<Vec<(u64, u64)>>,
        grown: std::cell::Cell<u64>,
    }

    impl Limit for Recorder {
        fn check(&self, held: u64, needed: u64) -> Result<(), Refusal> {
            self.checks.borrow_mut().push((held, needed));
            Ok(())
        }
        fn grew(&self, bytes: u64) {
            self.grown.set(self.grown.get() + bytes);
        }
    }

    #[test]
    fn growth_is_checked_from_the_size_held_and_reported_to_the_limit() {
        let limit = Recorder::default();
        let mut chain = Chain::new(10, 0.01, 4, false, &limit).unwrap();
        let created = chain.memory_bytes();
        assert_eq!(*limit.checks.borrow(), vec![(0, created)]);
        assert_eq!(
            limit.grown.get(),
            0,
            "creation is counted when the key stores it"
        );
        for i in 0..500u32 {
            chain.add(&i.to_le_bytes(), &limit).unwrap();
        }
        assert!(chain.layers().len() > 2);
        // Every growth asked from the size then held to the size after it…
        let checks = limit.checks.borrow();
        assert_eq!(checks.len(), chain.layers().len());
        for pair in checks.windows(2) {
            assert_eq!(pair[1].0, pair[0].1, "{checks:?}");
        }
        assert_eq!(checks.last().unwrap().1, chain.memory_bytes());
        // …and every byte added was reported.
        assert_eq!(limit.grown.get(), chain.memory_bytes() - created);
    }

    #[test]
    fn header_and_chunks_round_trip() {
        let mut chain = Chain::new(50, 0.001, 2, false, u64::MAX).unwrap();
        for i in 0..300u32 {
            chain.add(&i.to_le_bytes(), u64::MAX).unwrap();
        }
        let header = chain.header();
        assert_eq!(header.len(), 20 + 53 * chain.layers().len());
        let mut copy = Chain::from_header(&header, u64::MAX).unwrap();
        let mut iter = 1;
        while let Some((next, data)) = chain.chunk(iter) {
            copy.load_chunk(next as i64, &data).unwrap();
            iter = next;
        }
        assert_eq!(copy, chain);
        assert_eq!(
            Chain::from_header(&header[..header.len() - 1], u64::MAX),
            Err(HeaderError::Invalid)
        );
        assert!(matches!(
            Chain::from_header(&header, 100),
            Err(HeaderError::TooLarge(Refusal::PerKey { limit: 100, .. }))
        ));
        assert_eq!(copy.load_chunk(1 << 40, &[0]), Err(ChunkError::NoLink));
        let first = chain.layers()[0].bytes();
        assert_eq!(
            copy.load_chunk(first as i64 + 2, &[0, 0]),
            Err(ChunkError::TooBig)
        );
    }

    use crate::rdb::{Field, Fields};

    /// A chain's RDB record, read back as fields.
    fn saved(chain: &Chain) -> Fields {
        let mut out = Fields::default();
        chain.save(&mut out);
        Fields::new(out.fields)
    }

    #[test]
    fn what_is_saved_loads_back_and_truncations_are_refused() {
        let mut chain = Chain::new(20, 0.01, 3, false, u64::MAX).unwrap();
        for i in 0..200u32 {
            chain.add(&i.to_le_bytes(), u64::MAX).unwrap();
        }
        let fields = saved(&chain).fields;
        let back = Chain::load(&mut Fields::new(fields.clone()), ENCODING_VERSION, u64::MAX);
        assert_eq!(back.as_ref(), Some(&chain));
        for len in 0..fields.len() {
            let mut short = Fields::new(fields[..len].to_vec());
            assert_eq!(Chain::load(&mut short, ENCODING_VERSION, u64::MAX), None);
        }
        // The memory limit refuses the record before its layers' bytes are taken.
        assert_eq!(
            Chain::load(&mut Fields::new(fields.clone()), ENCODING_VERSION, 200),
            None
        );
        assert_eq!(Chain::load(&mut Fields::new(fields), 5, u64::MAX), None);
    }

    #[test]
    fn counts_saturate_and_sums_never_overflow() {
        // Layer counts u64::MAX - 1 and 0 (capacity 100): the chain's count is their sum.
        let mut chain = Chain::new(100, 0.01, 2, false, u64::MAX).unwrap();
        let mut second = chain.layers[0].clone();
        chain.layers[0].size = u64::MAX - 1;
        chain.layers[0].entries = 1;
        second.entries = u64::MAX;
        chain.layers.push(second);
        chain.size = u64::MAX - 1;
        assert_eq!(chain.add(b"a", u64::MAX), Ok(true));
        assert_eq!((chain.size(), chain.layers[1].size()), (u64::MAX, 1));
        assert_eq!(chain.add(b"b", u64::MAX), Ok(true));
        assert_eq!((chain.size(), chain.layers[1].size()), (u64::MAX, 1));
        assert!(chain.contains(b"b"));
        assert_eq!(chain.capacity(), u64::MAX);
        // Still loadable: the count is still the sum of the layers' counts.
        let back = Chain::load(&mut saved(&chain), ENCODING_VERSION, u64::MAX);
        assert_eq!(back, Some(chain.clone()));
        assert!(Chain::from_header(&chain.header(), u64::MAX).is_ok());
        // A full layer whose next capacity overflows is refused before anything changes.
        chain.layers[1].size = u64::MAX;
        chain.layers[0].size = 0;
        let before = chain.clone();
        assert_eq!(chain.add(b"c", u64::MAX), Err(BfError::CannotGrow));
        assert_eq!(chain, before);
    }

    /// A layer's fields in an old record: entries, error, hashes, bpe, [bits, n2], bytes,
    /// size.
    fn old_layer(
        encver: i32,
        entries: u64,
        bpe: f64,
        bits: u64,
        n2: u64,
        data: Vec<u8>,
    ) -> Vec<Field> {
        let mut f = vec![
            Field::Unsigned(entries),
            Field::Double(0.01),
            Field::Unsigned((LN2 * bpe).ceil() as u64),
            Field::Double(bpe),
        ];
        if encver > 0 {
            f.extend([Field::Unsigned(bits), Field::Unsigned(n2)]);
        }
        f.extend([Field::Buffer(data), Field::Unsigned(0)]);
        f
    }

    #[test]
    fn older_encodings_decode_with_their_defaults() {
        // Version 0: no options (32-bit), no growth (2), bits = entries * bpe.
        let mut fields = vec![Field::Unsigned(0), Field::Unsigned(1)];
        fields.extend(old_layer(0, 128, 8.0, 0, 0, vec![0; 128]));
        let chain = Chain::load(&mut Fields::new(fields), 0, u64::MAX).unwrap();
        assert_eq!((chain.options(), chain.growth()), (0, 2));
        assert_eq!(chain.layers()[0].num_bits(), 1024);
        assert!(chain.debug_lines()[1].contains("hashwidth:32"));
        // Version 0 whose entries * bpe is not the buffer's bits: refused, as RedisBloom.
        let mut fields = vec![Field::Unsigned(0), Field::Unsigned(1)];
        fields.extend(old_layer(0, 100, 8.0, 0, 0, vec![0; 128]));
        assert_eq!(Chain::load(&mut Fields::new(fields), 0, u64::MAX), None);
        // Version 1: a power-of-two layer stored with bits 0 gets bits = bytes * 8.
        let mut fields = vec![Field::Unsigned(0), Field::Unsigned(1)];
        fields.extend(old_layer(1, 100, 9.0, 0, 10, vec![0; 128]));
        let chain = Chain::load(&mut Fields::new(fields.clone()), 1, u64::MAX).unwrap();
        assert_eq!(
            (chain.layers()[0].num_bits(), chain.layers()[0].n2()),
            (1024, 10)
        );
        // ... but not in version 4, nor with fewer bytes than 2^n2 bits.
        let v4: Vec<Field> = [
            Field::Unsigned(0),
            Field::Unsigned(1),
            Field::Unsigned(4),
            Field::Unsigned(2),
        ]
        .into_iter()
        .chain(fields[2..].iter().cloned())
        .collect();
        assert_eq!(Chain::load(&mut Fields::new(v4), 4, u64::MAX), None);
        let mut fields = vec![Field::Unsigned(0), Field::Unsigned(1)];
        fields.extend(old_layer(1, 100, 9.0, 0, 11, vec![0; 128]));
        assert_eq!(Chain::load(&mut Fields::new(fields), 1, u64::MAX), None);
        // Version 3: options stored, growth not.
        let mut fields = vec![Field::Unsigned(0), Field::Unsigned(1), Field::Unsigned(4)];
        fields.extend(old_layer(3, 100, 9.0, 0, 10, vec![0; 128]));
        let mut chain = Chain::load(&mut Fields::new(fields), 3, u64::MAX).unwrap();
        assert_eq!((chain.options(), chain.growth()), (OPT_FORCE64, 2));
        // It grows by power-of-two layers (no NOROUND), answers, and saves as version 4.
        for i in 0..500u32 {
            chain.add(&i.to_le_bytes(), u64::MAX).unwrap();
        }
        assert!(chain.layers().len() > 1);
        assert!(chain.layers()[1..]
            .iter()
            .all(|l| l.n2() > 0 && l.num_bits().is_power_of_two()));
        assert!((0..500u32).all(|i| chain.contains(&i.to_le_bytes())));
        let back = Chain::load(&mut saved(&chain), ENCODING_VERSION, u64::MAX);
        assert_eq!(back, Some(chain));
    }

    #[test]
    fn power_of_two_layers_grow_as_bloom_init_rounds() {
        // floor(log2(100 * 9.585)) + 1 = 10: 1024 bits, 100 + (1024 - 958.5) / 9.585 entries.
        let (bits, hashes, bpe, entries, n2) = layer_for(100, 0.01, OPT_FORCE64).unwrap();
        assert_eq!((bits, hashes, n2), (1024, 7, 10));
        assert_eq!(
            entries,
            100 + ((1024.0 - 100.0 * bpe) as u64 as f64 / bpe) as u64
        );
        // ENTS_IS_BITS: entries is log2 of the bits.
        let (bits, _, bpe, entries, n2) = layer_for(12, 0.01, OPT_ENTS_IS_BITS).unwrap();
        assert_eq!((bits, n2, entries), (4096, 12, (4096.0 / bpe) as u64));
        assert_eq!(layer_for(64, 0.01, OPT_ENTS_IS_BITS), None);
        // NOROUND: as layer_shape.
        let (bits, hashes, bpe) = layer_shape(100, 0.01).unwrap();
        assert_eq!(
            layer_for(100, 0.01, OPT_NOROUND | OPT_FORCE64),
            Some((bits, hashes, bpe, 100, 0))
        );
    }

    #[test]
    fn legacy_positions_use_32_bit_murmur2_and_the_power_of_two_modulus() {
        let (a, b) = hash_pair(0, b"item");
        let a32 = murmur2(b"item", 0x9747_b28c);
        assert_eq!((a, b), (a32 as u64, murmur2(b"item", a32) as u64));
        let mut chain = Chain::new(100, 0.01, 2, false, u64::MAX).unwrap();
        chain.layers[0].n2 = 9;
        let got: Vec<u64> = chain.layers[0].positions((a, b)).collect();
        let want: Vec<u64> = (0..chain.layers[0].hashes() as u64)
            .map(|i| a.wrapping_add(i * b) % 512)
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn percent_g_formatting() {
        for (x, s) in [
            (0.005, "0.005"),
            (0.0025, "0.0025"),
            (0.01, "0.01"),
            (0.000625, "0.000625"),
            (3.125e-05, "3.125e-05"),
            (0.1, "0.1"),
            (1.0 / 3.0, "0.333333"),
            (1e-10, "1e-10"),
        ] {
            assert_eq!(format_g(x), s);
        }
    }
}
