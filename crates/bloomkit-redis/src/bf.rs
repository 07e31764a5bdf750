//! RedisBloom 2.4's scalable Bloom filter, bit for bit: its layer sizing, hashing, growth
//! rule, SCANDUMP header and chunks.
//!
//! The bits live in the library's [`BitVec`] (whose little-endian byte image is exactly
//! RedisBloom's byte buffer: bit x is bit x mod 8 of byte x / 8) and positions come from the
//! library's [`Hashing::redisbloom`] (MurmurHash64A pair, `(a + i·b) mod bits`). What is
//! here is only what RedisBloom does differently from [`bloomkit::ScalableBloomFilter`]:
//!
//! * layer sizing: `bpe = −ln ε / ln²2`, `bits = ⌊n·bpe⌋` rounded up to a multiple of 64,
//!   `hashes = ⌈ln 2 · bpe⌉` (the library rounds k to nearest and does not pad m);
//! * the first layer has ε/2 (ε when NONSCALING), each next layer n·expansion and ε/2;
//! * layers loaded from a dump keep whatever parameters they were stored with (the
//!   library's scalable filter derives every layer's shape from its parameters, so it
//!   cannot hold a dump of a filter made elsewhere).

use bloomkit::bits::BitVec;
use bloomkit::Hashing;

/// `BLOOM_OPT_NOROUND`: bits are not rounded to a power of two.
pub const OPT_NOROUND: u32 = 1;
/// `BLOOM_OPT_FORCE64`: 64-bit hashing.
pub const OPT_FORCE64: u32 = 4;
/// `BLOOM_OPT_NO_SCALING`: the filter never adds a layer.
pub const OPT_NO_SCALING: u32 = 8;

/// RedisBloom's `sizeof(SBChain)` and `sizeof(SBLink)`, counted by `BF.INFO Size`.
const CHAIN_STRUCT_BYTES: u64 = 32;
const LINK_STRUCT_BYTES: u64 = 64;

/// The fixed part of the SCANDUMP header and the size of one layer's record in it.
pub const HEADER_FIXED_BYTES: usize = 20;
pub const HEADER_LAYER_BYTES: usize = 53;

/// The largest data chunk SCANDUMP returns.
pub const MAX_CHUNK_BYTES: u64 = 16 * 1024 * 1024;

/// The most hash functions a layer may have: ⌈ln 2 · bpe⌉ for the smallest positive error
/// (4.9·10⁻³²⁴) is 1075; more can only come from corrupted data.
pub const MAX_HASHES: u32 = 1100;

/// libbloom's constants, which RedisBloom's sizing uses: ln²2 and ln 2 to 15 digits. Kept
/// as written (not `std::f64::consts::LN_2`) so that bpe and k round exactly as there.
const LN2_SQUARED: f64 = 0.480453013918201;
#[allow(clippy::approx_constant)]
const LN2: f64 = 0.693147180559945;

/// Why a filter cannot be created or grown.
#[derive(Debug, Clone, PartialEq)]
pub enum BfError {
    /// The filter (or the layer to add) would pass the per-key memory limit.
    TooLarge {
        /// Bytes the whole filter would need.
        needed: u64,
        /// The limit.
        limit: u64,
    },
    /// A NONSCALING filter's only layer is full.
    NonScalingFull,
    /// The next layer's parameters are not representable (capacity overflow, error 0).
    CannotGrow,
    /// The allocation failed.
    OutOfMemory,
}

/// An item's two hashes, `a = MurmurHash64A(item, 0xc6a4a7935bd1e995)` and
/// `b = MurmurHash64A(item, a)`: bit i of a layer of m bits is `(a + i·b) mod m` (the sum
/// taken modulo 2⁶⁴, as [`Hashing::redisbloom`] and RedisBloom take it). Computed once per
/// item and shared by every layer, for the check and the insert alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ItemHash {
    a: u64,
    b: u64,
}

impl ItemHash {
    /// The hashes of an item's bytes.
    #[inline]
    pub fn of(item: &[u8]) -> Self {
        let digest = Hashing::redisbloom().digest(item);
        Self {
            a: digest as u64,
            b: (digest >> 64) as u64,
        }
    }
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

/// A layer's size from its capacity and error: `(bits, hashes, bpe)`, or `None` when the
/// parameters are out of range (error not in (0, 1), capacity 0, overflow). Never fewer
/// than 64 bits.
pub fn layer_shape(entries: u64, error: f64) -> Option<(u64, u32, f64)> {
    if entries == 0 || !(error > 0.0 && error < 1.0) {
        return None;
    }
    let bpe = -error.ln() / LN2_SQUARED;
    let bits = entries as f64 * bpe;
    if !bits.is_finite() || bits >= (1u64 << 62) as f64 {
        return None;
    }
    // At least one bit (a tiny bpe times a small capacity rounds down to 0), which the
    // rounding below makes one 64-bit word: `BF.RESERVE k 0.99 3 NONSCALING` has 64 bits.
    let bits = (bits as u64).max(1);
    let bytes = bits.div_ceil(64) * 8;
    let hashes = (LN2 * bpe).ceil();
    if bytes == 0 || hashes > MAX_HASHES as f64 {
        return None;
    }
    Some((bytes * 8, hashes.max(1.0) as u32, bpe))
}

impl Layer {
    fn new(entries: u64, error: f64) -> Result<Self, BfError> {
        let (bits, hashes, bpe) = layer_shape(entries, error).ok_or(BfError::CannotGrow)?;
        let bits = BitVec::zeros(bits).map_err(|_| BfError::OutOfMemory)?;
        Ok(Self {
            bits,
            hashes,
            entries,
            error,
            bpe,
            size: 0,
            n2: 0,
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

    /// log₂ of the bits when rounded to a power of two; 0 (RedisBloom 2.4 never rounds).
    pub fn n2(&self) -> u8 {
        self.n2
    }

    /// The bit array.
    pub fn bit_vec(&self) -> &BitVec {
        &self.bits
    }

    /// The bit positions of an item in this layer.
    pub fn positions<'a>(&self, item: &'a [u8]) -> impl Iterator<Item = u64> + 'a {
        Hashing::redisbloom().positions(item, self.hashes, self.bits.len())
    }

    /// Whether every one of the item's bits is set (stops at the first clear bit).
    fn contains_hash(&self, h: ItemHash) -> bool {
        let num_bits = self.bits.len();
        let mut x = h.a;
        for _ in 0..self.hashes {
            if !self.bits.get(x % num_bits) {
                return false;
            }
            x = x.wrapping_add(h.b);
        }
        true
    }

    fn insert_hash(&mut self, h: ItemHash) {
        let num_bits = self.bits.len();
        let mut x = h.a;
        for _ in 0..self.hashes {
            self.bits.set(x % num_bits);
            x = x.wrapping_add(h.b);
        }
    }

    /// A layer from stored parameters and bit bytes (RDB). `None` if they are inconsistent.
    #[allow(clippy::too_many_arguments)]
    pub fn from_stored(
        entries: u64,
        error: f64,
        hashes: u64,
        bpe: f64,
        bits: u64,
        n2: u64,
        data: &[u8],
        size: u64,
    ) -> Option<Self> {
        let mut layer = Self::zeroed(&LayerRecord {
            bytes: data.len() as u64,
            bits,
            size,
            error,
            bpe,
            hashes: u32::try_from(hashes).ok()?,
            entries,
            n2: u8::try_from(n2).ok()?,
        })?;
        layer.bits.write_le_bytes_at(0, data).ok()?;
        Some(layer)
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

/// One layer's record in the SCANDUMP header.
#[derive(Clone, Copy, Debug, PartialEq)]
struct LayerRecord {
    bytes: u64,
    bits: u64,
    size: u64,
    error: f64,
    bpe: f64,
    hashes: u32,
    entries: u64,
    n2: u8,
}

impl LayerRecord {
    /// Whether the record describes a layer this module can use (64-bit hashing, bits a
    /// multiple of 64, no power-of-two rounding, sane parameters).
    fn is_consistent(&self) -> bool {
        self.bits > 0
            && self.bits % 64 == 0
            && self.bytes.checked_mul(8) == Some(self.bits)
            && (1..=MAX_HASHES).contains(&self.hashes)
            && self.entries > 0
            && self.error > 0.0
            && self.error < 1.0
            && self.bpe.is_finite()
            && self.bpe > 0.0
            && self.n2 == 0
    }
}

/// Options RedisBloom 2.4 writes: NOROUND | FORCE64, with or without NO_SCALING.
fn valid_options(options: u32) -> bool {
    options & !(OPT_NOROUND | OPT_FORCE64 | OPT_NO_SCALING) == 0
        && options & (OPT_NOROUND | OPT_FORCE64) == OPT_NOROUND | OPT_FORCE64
}

/// Why a SCANDUMP header was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderError {
    /// Not a valid header.
    Invalid,
    /// The filter it describes would pass the memory limit.
    TooLarge {
        /// Bytes the filter would need.
        needed: u64,
        /// The limit.
        limit: u64,
    },
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
    /// refused when its first layer would pass `limit` bytes.
    pub fn new(
        capacity: u64,
        error: f64,
        growth: u32,
        nonscaling: bool,
        limit: u64,
    ) -> Result<Self, BfError> {
        let first_error = if nonscaling { error } else { error * 0.5 };
        let (bits, _, _) = layer_shape(capacity, first_error).ok_or(BfError::CannotGrow)?;
        let needed = CHAIN_STRUCT_BYTES + LINK_STRUCT_BYTES + bits / 8;
        if needed > limit {
            return Err(BfError::TooLarge { needed, limit });
        }
        let layer = Layer::new(capacity, first_error)?;
        let mut options = OPT_NOROUND | OPT_FORCE64;
        if nonscaling {
            options |= OPT_NO_SCALING;
        }
        Ok(Self {
            layers: vec![layer],
            size: 0,
            options,
            growth,
        })
    }

    /// Whether the item may be in the filter.
    pub fn contains(&self, item: &[u8]) -> bool {
        self.contains_hash(ItemHash::of(item))
    }

    /// Whether some layer, newest first, has all of the item's bits.
    fn contains_hash(&self, h: ItemHash) -> bool {
        self.layers.iter().rev().any(|l| l.contains_hash(h))
    }

    /// Adds an item: `Ok(true)` if added, `Ok(false)` if some layer already has it. Adds a
    /// layer first when the newest is full; that layer may not pass `limit` bytes in total.
    pub fn add(&mut self, item: &[u8], limit: u64) -> Result<bool, BfError> {
        let h = ItemHash::of(item);
        if self.contains_hash(h) {
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
            let (bits, _, _) = layer_shape(entries, error).ok_or(BfError::CannotGrow)?;
            let needed = self.memory_bytes() + LINK_STRUCT_BYTES + bits / 8;
            if needed > limit {
                return Err(BfError::TooLarge { needed, limit });
            }
            let layer = Layer::new(entries, error)?;
            self.layers.push(layer);
        }
        let newest = self.layers.last_mut().expect("a chain has a layer");
        newest.insert_hash(h);
        newest.size += 1;
        self.size += 1;
        Ok(true)
    }

    /// Items added (`BF.CARD`, "Number of items inserted").
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The sum of the layers' capacities (`BF.INFO Capacity`).
    pub fn capacity(&self) -> u64 {
        self.layers.iter().map(|l| l.entries).sum()
    }

    /// The layers, oldest first.
    pub fn layers(&self) -> &[Layer] {
        &self.layers
    }

    /// The options bit set (`NOROUND | FORCE64`, plus `NO_SCALING`).
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
        CHAIN_STRUCT_BYTES
            + self
                .layers
                .iter()
                .map(|l| LINK_STRUCT_BYTES + l.bytes())
                .sum::<u64>()
    }

    /// `BF.DEBUG`'s lines.
    pub fn debug_lines(&self) -> Vec<String> {
        let mut lines = vec![format!("size:{}", self.size)];
        for l in &self.layers {
            lines.push(format!(
                "bytes:{} bits:{} hashes:{} hashwidth:64 capacity:{} size:{} ratio:{}",
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

    /// The SCANDUMP header (`[1, header]` answers iterator 0).
    pub fn header(&self) -> Vec<u8> {
        let mut out =
            Vec::with_capacity(HEADER_FIXED_BYTES + HEADER_LAYER_BYTES * self.layers.len());
        out.extend_from_slice(&self.size.to_le_bytes());
        out.extend_from_slice(&(self.layers.len() as u32).to_le_bytes());
        out.extend_from_slice(&self.options.to_le_bytes());
        out.extend_from_slice(&self.growth.to_le_bytes());
        for l in &self.layers {
            out.extend_from_slice(&l.bytes().to_le_bytes());
            out.extend_from_slice(&l.num_bits().to_le_bytes());
            out.extend_from_slice(&l.size.to_le_bytes());
            out.extend_from_slice(&l.error.to_le_bytes());
            out.extend_from_slice(&l.bpe.to_le_bytes());
            out.extend_from_slice(&l.hashes.to_le_bytes());
            out.extend_from_slice(&l.entries.to_le_bytes());
            out.push(l.n2);
        }
        out
    }

    /// A filter with all bits zero from a SCANDUMP header. Checks the whole header, and
    /// the memory it asks for against `limit`, before allocating anything.
    pub fn from_header(header: &[u8], limit: u64) -> Result<Self, HeaderError> {
        use HeaderError::Invalid;
        let mut r = ByteReader(header);
        let size = r.u64().ok_or(Invalid)?;
        let num_layers = r.u32().ok_or(Invalid)? as usize;
        let options = r.u32().ok_or(Invalid)?;
        let growth = r.u32().ok_or(Invalid)?;
        if num_layers == 0
            || header.len() != HEADER_FIXED_BYTES + HEADER_LAYER_BYTES * num_layers
            || !valid_options(options)
        {
            return Err(Invalid);
        }
        let mut records = Vec::with_capacity(num_layers);
        let mut needed = CHAIN_STRUCT_BYTES;
        let mut sizes = 0u64;
        for _ in 0..num_layers {
            let record = LayerRecord {
                bytes: r.u64().ok_or(Invalid)?,
                bits: r.u64().ok_or(Invalid)?,
                size: r.u64().ok_or(Invalid)?,
                error: r.f64().ok_or(Invalid)?,
                bpe: r.f64().ok_or(Invalid)?,
                hashes: r.u32().ok_or(Invalid)?,
                entries: r.u64().ok_or(Invalid)?,
                n2: r.u8().ok_or(Invalid)?,
            };
            needed = needed.saturating_add(LINK_STRUCT_BYTES + record.bytes);
            sizes = sizes.checked_add(record.size).ok_or(Invalid)?;
            records.push(record);
        }
        if sizes != size || records.iter().any(|r| !r.is_consistent()) {
            return Err(Invalid);
        }
        if needed > limit {
            return Err(HeaderError::TooLarge { needed, limit });
        }
        let layers = records
            .iter()
            .map(Layer::zeroed)
            .collect::<Option<Vec<_>>>()
            .ok_or(Invalid)?;
        Ok(Self {
            layers,
            size,
            options,
            growth,
        })
    }

    /// Builds a chain from RDB parts; `None` if inconsistent.
    pub fn from_parts(size: u64, options: u32, growth: u32, layers: Vec<Layer>) -> Option<Self> {
        let sizes = layers.iter().try_fold(0u64, |a, l| a.checked_add(l.size))?;
        if layers.is_empty() || !valid_options(options) || sizes != size {
            return None;
        }
        Some(Self {
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
    /// `iter − len − 1`).
    pub fn load_chunk(&mut self, iter: u64, data: &[u8]) -> Result<(), ChunkError> {
        let mut offset = iter
            .checked_sub(data.len() as u64 + 1)
            .ok_or(ChunkError::NoLink)?;
        for l in &mut self.layers {
            if offset < l.bytes() {
                if offset + data.len() as u64 > l.bytes() {
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
    /// The offset is past every layer.
    NoLink,
    /// The chunk crosses the end of its layer.
    TooBig,
}

/// A little-endian reader over a byte slice.
pub struct ByteReader<'a>(pub &'a [u8]);

impl ByteReader<'_> {
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, rest) = self.0.split_first_chunk::<N>()?;
        self.0 = rest;
        Some(*head)
    }
    /// A byte.
    pub fn u8(&mut self) -> Option<u8> {
        self.take::<1>().map(|b| b[0])
    }
    /// A little-endian u16.
    pub fn u16(&mut self) -> Option<u16> {
        self.take().map(u16::from_le_bytes)
    }
    /// A little-endian u32.
    pub fn u32(&mut self) -> Option<u32> {
        self.take().map(u32::from_le_bytes)
    }
    /// A little-endian u64.
    pub fn u64(&mut self) -> Option<u64> {
        self.take().map(u64::from_le_bytes)
    }
    /// A little-endian f64.
    pub fn f64(&mut self) -> Option<f64> {
        self.take().map(f64::from_le_bytes)
    }
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
            for p in chain.layers()[0].positions(item.as_bytes()) {
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
        assert!(matches!(err, BfError::TooLarge { limit: 400, .. }));
        assert_eq!(chain.layers().len(), 1);
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
            copy.load_chunk(next, &data).unwrap();
            iter = next;
        }
        assert_eq!(copy, chain);
        assert_eq!(
            Chain::from_header(&header[..header.len() - 1], u64::MAX),
            Err(HeaderError::Invalid)
        );
        assert!(matches!(
            Chain::from_header(&header, 100),
            Err(HeaderError::TooLarge { .. })
        ));
        assert_eq!(copy.load_chunk(1 << 40, &[0]), Err(ChunkError::NoLink));
        let first = chain.layers()[0].bytes();
        assert_eq!(copy.load_chunk(first + 2, &[0, 0]), Err(ChunkError::TooBig));
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
