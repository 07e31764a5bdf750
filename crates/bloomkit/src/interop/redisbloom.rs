//! RedisBloom 2.4's dumps, built and read offline: the `BF.SCANDUMP`/`CF.SCANDUMP` byte
//! layouts, the `BF.LOADCHUNK`/`CF.LOADCHUNK` command stream (RESP) that recreates a filter
//! in a server, and a classic [`BloomFilter`] with RedisBloom's hashing converted both ways.
//!
//! Source: RedisBloom 2.4's documentation of `BF.SCANDUMP`/`BF.LOADCHUNK` and
//! `CF.SCANDUMP`/`CF.LOADCHUNK`, and the layouts of its `src/sb.h` (`dumpedChainHeader`,
//! `dumpedChainLink`) and `src/cuckoo.h` (`CFHeader`), as collected in the workspace's
//! `shared/redisbloom-2.4.md`; the Redis module of this workspace (`crates/bloomkit-redis`)
//! writes and reads the same bytes with the header code of this file. Checked against a real
//! `redis-server` with that module and with RedisBloom 2.4.20's `redisbloom.so`
//! (`scripts/test-redis-interop`).
//!
//! # The dump of a Bloom filter (a chain of layers)
//!
//! `SCANDUMP key 0` answers `[1, header]`; the header, packed little-endian:
//!
//! | bytes | field |
//! |---|---|
//! | 8 | items in the chain (the sum of the layers' counts) |
//! | 4 | number of layers |
//! | 4 | options: 1 `NOROUND`, 2 `ENTS_IS_BITS`, 4 `FORCE64` (64-bit hashing), 8 `NO_SCALING` |
//! | 4 | growth (expansion) |
//! | 53 per layer | bytes u64, bits u64, items u64, error f64, bits per entry f64, hashes u32, capacity u64, n2 u8 |
//!
//! Then the layers' bit arrays, concatenated, in chunks of at most 16 MiB that never cross
//! a layer: a chunk of `len` bytes starting at byte `o` of the concatenation is answered as
//! `[o + 1 + len, bytes]`, and `LOADCHUNK key iter bytes` writes it back at `iter − len − 1`.
//! `LOADCHUNK key 1 header` creates the filter (the key must not exist). The end is `[0, ""]`.
//! Bit `x` of a layer is bit `x mod 8` of its byte `x / 8`.
//!
//! A layer's sizing (`BF.RESERVE`): bits per entry `bpe = −ln ε / ln² 2`, bits `⌊n · bpe⌋`
//! rounded up to a multiple of 64, hashes `⌈ln 2 · bpe⌉` ([`layer_shape`]). An item's bits:
//! `a = MurmurHash64A(item, 0xc6a4a7935bd1e995)`, `b = MurmurHash64A(item, a)`, bit `i` is
//! `(a + i·b) mod bits` — the library's [`Hashing::redisbloom`].
//!
//! # The dump of a cuckoo filter
//!
//! `[1, header]` with the 38-byte header: items u64, buckets u64, deletes u64, sub-filters
//! u64, bucket size u16, max iterations u16, expansion u16; then each sub-filter's slots
//! (one byte each, `buckets · expansionʲ · bucket size` for sub-filter `j`) in chunks as for
//! Bloom filters.
//!
//! # Which bloomkit filters are RedisBloom filters
//!
//! A classic [`BloomFilter`] hashed with [`Hashing::redisbloom`] whose bit count is a whole
//! number of bytes sets exactly the bits a one-layer RedisBloom filter sets
//! ([`BloomDump::from_bloom_filter`]); `bloomkit create --redisbloom` sizes one as
//! `BF.RESERVE … NONSCALING` does. A [`CuckooFilter`] of [`Layout::RedisBloom`](crate::cuckoo::Layout::RedisBloom) is
//! RedisBloom's cuckoo filter ([`crate::cuckoo::redisbloom::RedisBloomCuckoo`]): every
//! sub-filter it grew, its counts of items and deletes, its expansion, inserting, evicting,
//! deleting and growing as RedisBloom does ([`CuckooDump::from_cuckoo_filter`],
//! [`CuckooDump::to_cuckoo_filter`]); `bloomkit create --kind cuckoo --redisbloom` sizes one
//! as `CF.RESERVE` would for n / 0.65 items, with `--expansion e` one that grows. A Bloom filter that grew
//! to several layers is a [`ScalableBloomFilter`] with [`GrowthRule::RedisBloom`], every
//! layer a classic filter as dumped, new layers added as RedisBloom adds them
//! ([`BloomDump::to_scalable_filter`]); `bloomkit create --kind scalable --redisbloom` makes
//! one as `BF.RESERVE` does. Every other kind, growth or hashing puts items elsewhere.
//! Still refused, with the reason: RedisBloom 1.x's 32-bit hashing and power-of-two layers,
//! and headers whose counts the data deny.
//!
//! # Export without a second copy
//!
//! [`FilterDump`] writes a filter's `LOADCHUNK` commands or `SCANDUMP` replies reading the
//! bits (or slots) out of the filter one chunk at a time: one buffer of at most
//! [`MAX_CHUNK_BYTES`] besides the filter, however large it is.

use std::io::{self, Write};

use crate::bits::BitVec;
use crate::cuckoo::redisbloom::{Hashing as CuckooHashing, RedisBloomCuckoo, Shape};

use crate::error::{DecodeError, Error};
use crate::format::Reader;
use crate::hash::{Hashing, REDISBLOOM_SEED};
use crate::params;
use crate::registry::{BuildSpec, ValueType, BITS, HASHES, SCHEME};
use crate::scalable::GrowthRule;
use crate::{AnyFilter, BloomFilter, CuckooFilter, Filter, Kind, ScalableBloomFilter};

/// `BLOOM_OPT_NOROUND`: bits are not rounded up to a power of two.
pub const OPT_NOROUND: u32 = 1;
/// `BLOOM_OPT_ENTS_IS_BITS`: a new layer's capacity is log₂ of its bits (RedisBloom 1.x).
pub const OPT_ENTS_IS_BITS: u32 = 2;
/// `BLOOM_OPT_FORCE64`: 64-bit hashing (MurmurHash64A).
pub const OPT_FORCE64: u32 = 4;
/// `BLOOM_OPT_NO_SCALING`: the filter never adds a layer.
pub const OPT_NO_SCALING: u32 = 8;

/// The fixed part of a Bloom dump's header: items u64, layers u32, options u32, growth u32.
pub const BLOOM_HEADER_FIXED_BYTES: usize = 20;
/// One layer's record in a Bloom dump's header.
pub const BLOOM_HEADER_LAYER_BYTES: usize = 53;
/// A cuckoo dump's header.
pub const CUCKOO_HEADER_BYTES: usize = 38;
/// The largest data chunk `SCANDUMP` answers (and the export writes).
pub const MAX_CHUNK_BYTES: u64 = 16 * 1024 * 1024;

/// The most hash functions a layer may have (see [`params::REDISBLOOM_MAX_HASHES`]).
pub const MAX_HASHES: u32 = params::REDISBLOOM_MAX_HASHES;
/// The most buckets a cuckoo sub-filter may have: RedisBloom stores the count in 56 bits.
pub const MAX_CUCKOO_BUCKETS: u64 = (1 << 56) - 1;
/// The largest cuckoo bucket size.
pub const MAX_CUCKOO_BUCKET_SIZE: u16 = 255;

/// libbloom's ln² 2 to 15 digits ([`params::REDISBLOOM_LN2_SQUARED`]).
pub const LN2_SQUARED: f64 = params::REDISBLOOM_LN2_SQUARED;
/// libbloom's ln 2 to 15 digits ([`params::REDISBLOOM_LN2`]).
pub const LN2: f64 = params::REDISBLOOM_LN2;

/// The number of hash functions RedisBloom derives from bits per entry
/// ([`params::redisbloom_hashes_for`]).
///
/// ```
/// use bloomkit::interop::redisbloom::hashes_for;
/// assert_eq!(hashes_for(-(0.005f64).ln() / 0.480453013918201), Some(8));
/// assert_eq!(hashes_for(f64::NAN), None);
/// ```
pub fn hashes_for(bpe: f64) -> Option<u32> {
    params::redisbloom_hashes_for(bpe)
}

/// A layer's size from its capacity and error as `BF.RESERVE` makes it
/// ([`params::redisbloom_layer_shape`]).
///
/// ```
/// use bloomkit::interop::redisbloom::layer_shape;
/// let (bits, hashes, _) = layer_shape(100, 0.005).unwrap();
/// assert_eq!((bits, hashes), (1152, 8));
/// assert_eq!(layer_shape(0, 0.01), None);
/// ```
pub fn layer_shape(entries: u64, error: f64) -> Option<(u64, u32, f64)> {
    params::redisbloom_layer_shape(entries, error)
}

/// The choice of a kind's option that makes it RedisBloom's (the cuckoo filter's
/// `layout`, the scalable filter's `growth-rule`).
const REDISBLOOM_CHOICE: &str = "redisbloom";

/// Whether `kind` can be made as a RedisBloom filter: it takes an index scheme (and so
/// RedisBloom's Bloom hashing), or declares an option with a `redisbloom` choice.
pub fn kind_speaks_redisbloom(kind: Kind) -> bool {
    kind.takes(SCHEME) || redisbloom_option(kind).is_some()
}

/// The name of the kind's option that has a `redisbloom` choice, if any.
fn redisbloom_option(kind: Kind) -> Option<&'static str> {
    kind.options().iter().find_map(|o| {
        matches!(o.value, ValueType::Choice(c) if c.iter().any(|c| c.name == REDISBLOOM_CHOICE))
            .then_some(o.name)
    })
}

/// A build spec turned into one for a filter RedisBloom can hold (`bloomkit create/build
/// --redisbloom`): for a kind with a `redisbloom` choice, that choice — the cuckoo filter's
/// RedisBloom layout, sized as `CF.RESERVE` sizes it for n / 0.65 items (room for n in one
/// table), the scalable filter's RedisBloom growth (`BF.RESERVE KEY ε n EXPANSION s`'s
/// layers); for a kind that takes an index scheme (the scalable filter too), RedisBloom's
/// Bloom hashing ([`Hashing::redisbloom`]) and, for a filter sized from n and ε alone with
/// m and k, `BF.RESERVE KEY ε n NONSCALING`'s m and k ([`layer_shape`]). Other kinds are
/// refused with the reason.
///
/// ```
/// use bloomkit::interop::redisbloom::redisbloom_spec;
/// use bloomkit::registry::BuildSpec;
/// use bloomkit::{AnyFilter, Filter, Kind};
/// let spec = redisbloom_spec(Kind::Bloom, BuildSpec { capacity: Some(100), ..Default::default() })?;
/// assert_eq!((spec.num_cells, spec.num_hashes), (Some(960), Some(7)));
/// let spec = redisbloom_spec(Kind::Cuckoo, BuildSpec { capacity: Some(1000), ..Default::default() })?;
/// let cf = AnyFilter::build(Kind::Cuckoo, &spec)?;
/// assert!(cf.describe().contains("RedisBloom"));
/// assert!(redisbloom_spec(Kind::SplitBlock, BuildSpec::default()).is_err());
/// # Ok::<(), bloomkit::Error>(())
/// ```
pub fn redisbloom_spec(kind: Kind, mut spec: BuildSpec) -> Result<BuildSpec, Error> {
    if let Some(option) = redisbloom_option(kind) {
        spec.options
            .push((option.to_owned(), REDISBLOOM_CHOICE.to_owned()));
        if !kind.takes(SCHEME) {
            return Ok(spec);
        }
    }
    if !kind.takes(SCHEME) {
        let able: Vec<&str> = Kind::ALL
            .iter()
            .filter(|&&k| {
                kind_speaks_redisbloom(k) && (k.exports() || redisbloom_option(k).is_some())
            })
            .map(|k| k.name())
            .collect();
        return Err(Error::InvalidParameter {
            parameter: "--redisbloom",
            reason: format!(
                "a {kind} filter takes no index scheme, so it cannot hash as RedisBloom does; \
                 RedisBloom's filters are a classic Bloom filter and a cuckoo table (--kind {})",
                crate::core::spec::or_list(&able)
            ),
        });
    }
    let h = Hashing::redisbloom();
    spec.hash_function = Some(h.function);
    spec.index_scheme = Some(h.scheme);
    spec.seed = Some(h.seed);
    let sized_by_hand = spec.num_cells.is_some() || spec.num_hashes.is_some();
    if let (false, Some(n), true, true) = (
        sized_by_hand,
        spec.capacity,
        kind.takes(BITS),
        kind.takes(HASHES),
    ) {
        let fpp = spec.fpp.unwrap_or(0.01);
        let (bits, hashes, _) = layer_shape(n, fpp).ok_or_else(|| Error::InvalidParameter {
            parameter: "--redisbloom",
            reason: format!("RedisBloom cannot size a filter for {n} items at ε = {fpp}"),
        })?;
        spec.num_cells = Some(bits);
        spec.num_hashes = Some(hashes);
    }
    Ok(spec)
}

/// One layer's record in a Bloom dump's header.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BloomLayerHeader {
    /// Bytes of the bit array.
    pub bytes: u64,
    /// Bits of the bit array (`8 · bytes`).
    pub bits: u64,
    /// Items added to this layer.
    pub size: u64,
    /// The error rate the layer was sized for.
    pub error: f64,
    /// Bits per entry, from which the hashes follow.
    pub bpe: f64,
    /// The number of hash functions.
    pub hashes: u32,
    /// The capacity.
    pub entries: u64,
    /// log₂ of the bits for power-of-two layers (RedisBloom 1.x), else 0.
    pub n2: u8,
}

impl BloomLayerHeader {
    /// RedisBloom 2.4's integrity check of a layer (`bloom_validate_integrity`), which is
    /// also what memory safety needs: bits = bytes · 8 and not 0, `n2` ≤ 63 with `2ⁿ²` ≤
    /// bits (every position falls inside the array), the error in (0, 1), and `hashes =
    /// ⌈ln 2 · bpe⌉` (here also at most [`MAX_HASHES`]). The capacity and the count are any
    /// numbers: they only decide when the chain grows.
    pub fn is_consistent(&self) -> bool {
        self.reason_inconsistent().is_none()
    }

    fn reason_inconsistent(&self) -> Option<String> {
        if self.bits == 0 || self.bytes.checked_mul(8) != Some(self.bits) {
            return Some(format!(
                "{} bits in {} bytes; a layer has 8 bits per byte and at least one byte",
                self.bits, self.bytes
            ));
        }
        if self.n2 > 63 || (self.n2 > 0 && self.bits < 1 << self.n2) {
            return Some(format!("n2 = {} does not fit {} bits", self.n2, self.bits));
        }
        if !(self.error > 0.0 && self.error < 1.0) {
            return Some(format!("error rate {} is not in (0, 1)", self.error));
        }
        if hashes_for(self.bpe) != Some(self.hashes) {
            return Some(format!(
                "{} hashes where bits per entry {} give ⌈ln 2 · bpe⌉ = {:?}",
                self.hashes,
                self.bpe,
                hashes_for(self.bpe)
            ));
        }
        None
    }

    /// What bit positions are reduced modulo: `2ⁿ²` for power-of-two layers, else the bits.
    pub fn modulus(&self) -> u64 {
        if self.n2 > 0 {
            1 << self.n2
        } else {
            self.bits
        }
    }
}

/// The header of a Bloom filter's dump (`BF.SCANDUMP key 0`).
#[derive(Clone, Debug, PartialEq)]
pub struct BloomHeader {
    /// Items in the chain: the sum of the layers' counts.
    pub size: u64,
    /// The option bits ([`OPT_NOROUND`] …).
    pub options: u32,
    /// The expansion factor of a scaling filter.
    pub growth: u32,
    /// The layers, oldest first.
    pub layers: Vec<BloomLayerHeader>,
}

impl BloomHeader {
    /// The header's bytes, as `SCANDUMP` answers them.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(
            BLOOM_HEADER_FIXED_BYTES + BLOOM_HEADER_LAYER_BYTES * self.layers.len(),
        );
        out.extend_from_slice(&self.size.to_le_bytes());
        out.extend_from_slice(&(self.layers.len() as u32).to_le_bytes());
        out.extend_from_slice(&self.options.to_le_bytes());
        out.extend_from_slice(&self.growth.to_le_bytes());
        for l in &self.layers {
            out.extend_from_slice(&l.bytes.to_le_bytes());
            out.extend_from_slice(&l.bits.to_le_bytes());
            out.extend_from_slice(&l.size.to_le_bytes());
            out.extend_from_slice(&l.error.to_le_bytes());
            out.extend_from_slice(&l.bpe.to_le_bytes());
            out.extend_from_slice(&l.hashes.to_le_bytes());
            out.extend_from_slice(&l.entries.to_le_bytes());
            out.push(l.n2);
        }
        out
    }

    /// Reads a header and checks it as RedisBloom 2.4's `LOADCHUNK` does: the length
    /// matches the layer count (at least one), only known options, every layer consistent
    /// ([`BloomLayerHeader::is_consistent`]), the chain's count the sum of its layers'.
    ///
    /// ```
    /// use bloomkit::interop::redisbloom::{BloomHeader, BloomLayerHeader, layer_shape};
    /// let (bits, hashes, bpe) = layer_shape(100, 0.01).unwrap();
    /// let layer = BloomLayerHeader {
    ///     bytes: bits / 8, bits, size: 0, error: 0.01, bpe, hashes, entries: 100, n2: 0,
    /// };
    /// let header = BloomHeader { size: 0, options: 5 | 8, growth: 2, layers: vec![layer] };
    /// let bytes = header.to_bytes();
    /// assert_eq!(bytes.len(), 20 + 53);
    /// assert_eq!(BloomHeader::parse(&bytes)?, header);
    /// assert!(BloomHeader::parse(&bytes[..72]).is_err());
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn parse(bytes: &[u8]) -> Result<Self, DecodeError> {
        let invalid = |reason: String| DecodeError::InvalidField {
            field: "RedisBloom Bloom dump header",
            reason,
        };
        let mut r = Reader::new(bytes);
        let size = r.u64()?;
        let num_layers = r.u32()? as usize;
        let options = r.u32()?;
        let growth = r.u32()?;
        if num_layers == 0 {
            return Err(invalid("0 layers; a filter has at least one".into()));
        }
        let want = (num_layers as u64)
            .saturating_mul(BLOOM_HEADER_LAYER_BYTES as u64)
            .saturating_add(BLOOM_HEADER_FIXED_BYTES as u64);
        if bytes.len() as u64 != want {
            return Err(invalid(format!(
                "{} bytes; a header of {num_layers} layers has {want}",
                bytes.len()
            )));
        }
        if options & !(OPT_NOROUND | OPT_ENTS_IS_BITS | OPT_FORCE64 | OPT_NO_SCALING) != 0 {
            return Err(invalid(format!("unknown option bits in {options:#x}")));
        }
        let mut layers = Vec::with_capacity(num_layers);
        let mut sizes = 0u64;
        for i in 0..num_layers {
            let layer = BloomLayerHeader {
                bytes: r.u64()?,
                bits: r.u64()?,
                size: r.u64()?,
                error: r.f64()?,
                bpe: r.f64()?,
                hashes: r.u32()?,
                entries: r.u64()?,
                n2: r.u8()?,
            };
            if let Some(why) = layer.reason_inconsistent() {
                return Err(invalid(format!("layer {i}: {why}")));
            }
            sizes = sizes
                .checked_add(layer.size)
                .ok_or_else(|| invalid("the layers' item counts overflow".into()))?;
            layers.push(layer);
        }
        if sizes != size {
            return Err(invalid(format!(
                "the chain counts {size} items, its layers {sizes}"
            )));
        }
        Ok(Self {
            size,
            options,
            growth,
            layers,
        })
    }

    /// The bytes of all layers' bit arrays, summed (saturating).
    pub fn data_bytes(&self) -> u64 {
        self.layers
            .iter()
            .fold(0u64, |sum, l| sum.saturating_add(l.bytes))
    }
}

/// The header of a cuckoo filter's dump (`CF.SCANDUMP key 0`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CuckooHeader {
    /// Items in the filter.
    pub items: u64,
    /// Buckets of the first sub-filter (a power of two).
    pub buckets: u64,
    /// Items deleted.
    pub deletes: u64,
    /// Sub-filters.
    pub filters: u64,
    /// Slots per bucket (1 to 255).
    pub bucket_size: u16,
    /// Evictions before an insert gives up on a sub-filter.
    pub max_iterations: u16,
    /// Sub-filter `j` has `buckets · expansionʲ` buckets.
    pub expansion: u16,
}

impl CuckooHeader {
    /// The filter's shape as the header states it (its checks are the table's:
    /// [`RedisBloomCuckoo::zeroed`]).
    pub fn shape(&self) -> Shape {
        Shape {
            items: self.items,
            buckets: self.buckets,
            deletes: self.deletes,
            filters: self.filters,
            bucket_size: self.bucket_size as u64,
            max_iterations: self.max_iterations as u64,
            expansion: self.expansion as u64,
        }
    }

    /// The header's 38 bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(CUCKOO_HEADER_BYTES);
        for v in [self.items, self.buckets, self.deletes, self.filters] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for v in [self.bucket_size, self.max_iterations, self.expansion] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out
    }

    /// Reads the 38 bytes and checks them as RedisBloom 2.4 does
    /// (`CuckooFilter_ValidateIntegrity`): buckets a power of two (at most 2⁵⁶ − 1), bucket
    /// size 1 to 255, at least one iteration, 1 to 65535 sub-filters and more than one only
    /// with an expansion, every sub-filter's size representable.
    ///
    /// ```
    /// use bloomkit::interop::redisbloom::CuckooHeader;
    /// let h = CuckooHeader { items: 3, buckets: 512, deletes: 0, filters: 1,
    ///                        bucket_size: 2, max_iterations: 20, expansion: 1 };
    /// assert_eq!(CuckooHeader::parse(&h.to_bytes())?, h);
    /// let bad = CuckooHeader { buckets: 500, ..h };
    /// assert!(CuckooHeader::parse(&bad.to_bytes()).is_err());
    /// # Ok::<(), bloomkit::DecodeError>(())
    /// ```
    pub fn parse(bytes: &[u8]) -> Result<Self, DecodeError> {
        if bytes.len() != CUCKOO_HEADER_BYTES {
            return Err(DecodeError::InvalidField {
                field: "RedisBloom cuckoo dump header",
                reason: format!("{} bytes; it has {CUCKOO_HEADER_BYTES}", bytes.len()),
            });
        }
        let mut r = Reader::new(bytes);
        let header = Self {
            items: r.u64()?,
            buckets: r.u64()?,
            deletes: r.u64()?,
            filters: r.u64()?,
            bucket_size: r.u16()?,
            max_iterations: r.u16()?,
            expansion: r.u16()?,
        };
        header.sub_filter_sizes()?;
        Ok(header)
    }

    /// The bytes of each sub-filter (`buckets · expansionʲ · bucket size`), after the
    /// checks of [`parse`](Self::parse).
    pub fn sub_filter_sizes(&self) -> Result<Vec<u64>, DecodeError> {
        let invalid = |reason: String| DecodeError::InvalidField {
            field: "RedisBloom cuckoo dump header",
            reason,
        };
        if !self.buckets.is_power_of_two() || self.buckets > MAX_CUCKOO_BUCKETS {
            return Err(invalid(format!(
                "{} buckets; RedisBloom has a power of two below 2^56",
                self.buckets
            )));
        }
        if !(1..=MAX_CUCKOO_BUCKET_SIZE).contains(&self.bucket_size) {
            return Err(invalid(format!(
                "bucket size {}; RedisBloom's is 1 to 255",
                self.bucket_size
            )));
        }
        if self.max_iterations == 0 {
            return Err(invalid("max iterations 0".into()));
        }
        if !(1..=u16::MAX as u64).contains(&self.filters)
            || (self.filters > 1 && self.expansion == 0)
        {
            return Err(invalid(format!(
                "{} sub-filters with expansion {}",
                self.filters, self.expansion
            )));
        }
        let mut sizes = Vec::with_capacity(self.filters as usize);
        let mut buckets = self.buckets;
        for j in 0..self.filters {
            if j > 0 {
                buckets = buckets
                    .checked_mul(self.expansion as u64)
                    .filter(|&b| b <= MAX_CUCKOO_BUCKETS)
                    .ok_or_else(|| invalid(format!("sub-filter {j} is too large")))?;
            }
            sizes.push(buckets * self.bucket_size as u64);
        }
        Ok(sizes)
    }
}

/// A RedisBloom dump: the header and every layer's (or sub-filter's) bytes — what the
/// `SCANDUMP` replies of one key hold, and what its `LOADCHUNK` commands load back.
#[derive(Clone, Debug, PartialEq)]
pub enum Dump {
    /// A Bloom filter (`BF.*`).
    Bloom(BloomDump),
    /// A cuckoo filter (`CF.*`).
    Cuckoo(CuckooDump),
}

/// A Bloom filter's dump: its header and each layer's bit array.
#[derive(Clone, Debug, PartialEq)]
pub struct BloomDump {
    /// The header.
    pub header: BloomHeader,
    /// Each layer's bytes (`header.layers[i].bytes` of them).
    pub layers: Vec<Vec<u8>>,
}

/// A cuckoo filter's dump: its header and each sub-filter's slots.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CuckooDump {
    /// The header.
    pub header: CuckooHeader,
    /// Each sub-filter's slots, one byte each.
    pub filters: Vec<Vec<u8>>,
}

/// Zeroed buffers of the given sizes, with a refusal rather than an abort when they do not
/// fit in memory; `limit` bounds their sum (a dump cannot describe more data than it holds).
fn zeroed_buffers(sizes: &[u64], limit: u64) -> Result<Vec<Vec<u8>>, Error> {
    let total = sizes.iter().fold(0u64, |s, &b| s.saturating_add(b));
    if total > limit {
        return Err(DecodeError::InvalidField {
            field: "RedisBloom dump",
            reason: format!(
                "the header describes {total} bytes of data, but only {limit} bytes follow it"
            ),
        }
        .into());
    }
    sizes
        .iter()
        .map(|&n| {
            let mut v = Vec::new();
            v.try_reserve_exact(n as usize)
                .map_err(|_| Error::OutOfMemory { bytes: n })?;
            v.resize(n as usize, 0);
            Ok(v)
        })
        .collect()
}

impl Dump {
    /// Assembles a dump from `(iterator, bytes)` pairs in the order `SCANDUMP` answered them
    /// (or as `LOADCHUNK` commands carry them): first `(1, header)`, then data chunks; a
    /// final `(0, "")` is allowed. The header says which type it is (a cuckoo header has 38
    /// bytes, a Bloom header 20 + 53 per layer). Every chunk must fall inside one layer or
    /// sub-filter, and every data byte must be covered, else the dump is refused: nothing
    /// half-loaded comes out.
    ///
    /// ```
    /// use bloomkit::interop::redisbloom::{BloomDump, Dump};
    /// use bloomkit::{BloomFilter, Hashing};
    /// let mut f = BloomFilter::builder()
    ///     .num_bits(1024).num_hashes(7).capacity(100).fpp(0.01)
    ///     .hash_function(Hashing::redisbloom().function)
    ///     .index_scheme(Hashing::redisbloom().scheme)
    ///     .seed(Hashing::redisbloom().seed)
    ///     .build()?;
    /// f.insert("a");
    /// let dump = Dump::Bloom(BloomDump::from_bloom_filter(&f, None)?);
    /// let chunks: Vec<(u64, Vec<u8>)> =
    ///     dump.chunks().map(|(i, d)| (i, d.to_vec())).collect();
    /// assert_eq!(Dump::from_chunks(chunks.clone())?, dump);
    /// assert!(Dump::from_chunks(chunks[..1].to_vec()).is_err()); // the bits are missing
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn from_chunks<I>(chunks: I) -> Result<Self, Error>
    where
        I: IntoIterator<Item = (u64, Vec<u8>)>,
    {
        let invalid = |reason: String| -> Error {
            DecodeError::InvalidField {
                field: "RedisBloom dump",
                reason,
            }
            .into()
        };
        let mut chunks = chunks.into_iter();
        let Some((iter, header)) = chunks.next() else {
            return Err(invalid("empty: no header chunk".into()));
        };
        if iter != 1 {
            return Err(invalid(format!(
                "the first chunk has iterator {iter}; a dump starts with the header at 1"
            )));
        }
        let rest: Vec<(u64, Vec<u8>)> = chunks.collect();
        let data_len = rest
            .iter()
            .fold(0u64, |s, (_, d)| s.saturating_add(d.len() as u64));
        let (mut dump, sizes) = if header.len() == CUCKOO_HEADER_BYTES {
            let header = CuckooHeader::parse(&header)?;
            let sizes = header.sub_filter_sizes()?;
            let filters = zeroed_buffers(&sizes, data_len)?;
            (Dump::Cuckoo(CuckooDump { header, filters }), sizes)
        } else {
            let header = BloomHeader::parse(&header)?;
            let sizes: Vec<u64> = header.layers.iter().map(|l| l.bytes).collect();
            let layers = zeroed_buffers(&sizes, data_len)?;
            (Dump::Bloom(BloomDump { header, layers }), sizes)
        };
        let buffers = match &mut dump {
            Dump::Bloom(b) => &mut b.layers,
            Dump::Cuckoo(c) => &mut c.filters,
        };
        let mut covered = vec![0u64; buffers.len()];
        let mut ended = false;
        for (n, (iter, data)) in rest.into_iter().enumerate() {
            let n = n + 1;
            if ended {
                return Err(invalid(format!("chunk {n} follows the end marker")));
            }
            if iter == 0 {
                if !data.is_empty() {
                    return Err(invalid(format!(
                        "chunk {n}: iterator 0 (the end) with {} bytes",
                        data.len()
                    )));
                }
                ended = true;
                continue;
            }
            let len = data.len() as u64;
            let Some(mut offset) = iter.checked_sub(len + 1).filter(|_| len > 0) else {
                return Err(invalid(format!(
                    "chunk {n}: iterator {iter} with {len} bytes (a data chunk's iterator is \
                     its end offset plus one)"
                )));
            };
            let mut placed = false;
            for (j, size) in sizes.iter().enumerate() {
                if offset < *size {
                    if len > size - offset {
                        return Err(invalid(format!(
                            "chunk {n}: {len} bytes at offset {offset} cross the end of part \
                             {j} ({size} bytes)"
                        )));
                    }
                    let start = offset as usize;
                    buffers[j][start..start + len as usize].copy_from_slice(&data);
                    covered[j] += len;
                    placed = true;
                    break;
                }
                offset -= size;
            }
            if !placed {
                return Err(invalid(format!(
                    "chunk {n}: iterator {iter} is past the end of the data"
                )));
            }
        }
        for (j, (have, want)) in covered.iter().zip(&sizes).enumerate() {
            if have != want {
                return Err(invalid(format!(
                    "part {j} has {want} bytes, the chunks give {have} (a dump cut short, or \
                     chunks repeated)"
                )));
            }
        }
        Ok(dump)
    }

    /// The header's bytes.
    pub fn header_bytes(&self) -> Vec<u8> {
        match self {
            Dump::Bloom(b) => b.header.to_bytes(),
            Dump::Cuckoo(c) => c.header.to_bytes(),
        }
    }

    fn parts(&self) -> &[Vec<u8>] {
        match self {
            Dump::Bloom(b) => &b.layers,
            Dump::Cuckoo(c) => &c.filters,
        }
    }

    /// The data chunks as `SCANDUMP` answers them after the header: `(iterator, bytes)`,
    /// at most [`MAX_CHUNK_BYTES`] each, none crossing a layer or sub-filter.
    pub fn data_chunks(&self) -> impl Iterator<Item = (u64, &[u8])> {
        let mut base = 0u64;
        self.parts().iter().flat_map(move |part| {
            let start = base;
            base += part.len() as u64;
            part.chunks(MAX_CHUNK_BYTES as usize)
                .scan(start, |offset, chunk| {
                    *offset += chunk.len() as u64;
                    Some((*offset + 1, chunk))
                })
        })
    }

    /// Every chunk `SCANDUMP` answers: the header at iterator 1, then the data chunks (not
    /// the final `(0, "")`).
    pub fn chunks(&self) -> impl Iterator<Item = (u64, std::borrow::Cow<'_, [u8]>)> {
        std::iter::once((1, std::borrow::Cow::Owned(self.header_bytes()))).chain(
            self.data_chunks()
                .map(|(i, d)| (i, std::borrow::Cow::Borrowed(d))),
        )
    }

    /// The command that loads this dump's chunks: `BF.LOADCHUNK` or `CF.LOADCHUNK`.
    pub fn load_command(&self) -> &'static str {
        match self {
            Dump::Bloom(_) => "BF.LOADCHUNK",
            Dump::Cuckoo(_) => "CF.LOADCHUNK",
        }
    }

    /// Writes the commands that recreate the filter under `key`, in RESP (Redis's wire
    /// protocol, what `redis-cli --pipe` sends as it is): `LOADCHUNK key 1 header` — which
    /// creates the filter, and fails with "item exists" if the key is there — then one
    /// `LOADCHUNK key iterator bytes` per data chunk.
    ///
    /// ```
    /// use bloomkit::interop::redisbloom::{CuckooDump, CuckooHeader, Dump};
    /// let header = CuckooHeader { items: 0, buckets: 2, deletes: 0, filters: 1,
    ///                             bucket_size: 2, max_iterations: 20, expansion: 1 };
    /// let dump = Dump::Cuckoo(CuckooDump { header, filters: vec![vec![0; 4]] });
    /// let mut out = Vec::new();
    /// dump.write_commands(b"k", &mut out)?;
    /// assert!(out.starts_with(b"*4\r\n$12\r\nCF.LOADCHUNK\r\n$1\r\nk\r\n$1\r\n1\r\n$38\r\n"));
    /// assert!(out.ends_with(b"$1\r\n5\r\n$4\r\n\0\0\0\0\r\n"));
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn write_commands<W: Write>(&self, key: &[u8], mut out: W) -> io::Result<()> {
        let command = self.load_command().as_bytes();
        for (iter, data) in self.chunks() {
            let iter = iter.to_string();
            write_resp_array(&mut out, &[command, key, iter.as_bytes(), &data])?;
        }
        out.flush()
    }
}

impl Dump {
    /// Writes the dump as the `SCANDUMP` replies of one key, in RESP: `[1, header]`, each
    /// data chunk, and the final `[0, ""]` — a file [`parse_scandump`] reads back.
    pub fn write_scandump<W: Write>(&self, mut out: W) -> io::Result<()> {
        for (iter, data) in self
            .chunks()
            .chain(std::iter::once((0, Default::default())))
        {
            write!(out, "*2\r\n:{iter}\r\n${}\r\n", data.len())?;
            out.write_all(&data)?;
            out.write_all(b"\r\n")?;
        }
        out.flush()
    }

    /// The bloomkit filter that answers as the dumped one: a classic filter for a one-layer
    /// Bloom dump ([`BloomDump::to_bloom_filter`]), a scalable filter with RedisBloom's
    /// growth for one that grew layers ([`BloomDump::to_scalable_filter`]), a cuckoo filter of RedisBloom's layout
    /// for a one-sub-filter cuckoo dump ([`CuckooDump::to_cuckoo_filter`]); an error saying
    /// why for the others.
    pub fn into_filter(self) -> Result<AnyFilter, Error> {
        match self {
            Dump::Bloom(b) if b.header.layers.len() > 1 => {
                Ok(AnyFilter::from(b.to_scalable_filter()?))
            }
            Dump::Bloom(b) => Ok(AnyFilter::from(b.to_bloom_filter()?)),
            Dump::Cuckoo(c) => Ok(AnyFilter::from(c.to_cuckoo_filter()?)),
        }
    }
}

/// The dump of a bloomkit filter that RedisBloom can hold, as an owned [`Dump`] (the
/// bytes copied out of the filter; [`FilterDump`] writes the same without the copy): a
/// classic filter (or a compressed one, the same bits) hashed as RedisBloom hashes, as a
/// one-layer Bloom dump ([`BloomDump::from_bloom_filter`]; `growth` as there), or a cuckoo
/// filter of RedisBloom's layout ([`CuckooDump::from_cuckoo_filter`]; `growth` its
/// expansion). Any other kind is refused with the reason and what to build instead.
///
/// ```
/// use bloomkit::interop::redisbloom::dump_filter;
/// use bloomkit::{AnyFilter, Kind};
/// let other = AnyFilter::with_capacity(Kind::Cuckoo, 1000, 0.01)?;
/// let why = dump_filter(other, None).unwrap_err().to_string();
/// assert!(why.contains("--redisbloom"), "{why}");
/// # Ok::<(), bloomkit::Error>(())
/// ```
pub fn dump_filter(filter: AnyFilter, growth: Option<u32>) -> Result<Dump, Error> {
    let filter = uncompressed(filter)?;
    Ok(FilterDump::new(&filter, growth)?.to_dump())
}

/// The plain kind of a compressed filter (the same bits), any other filter as it is.
fn uncompressed(filter: AnyFilter) -> Result<AnyFilter, Error> {
    if filter.kind().exports() {
        filter.into_uncompressed()
    } else {
        Ok(filter)
    }
}

/// Where a [`FilterDump`] reads its data chunks from.
#[derive(Clone, Copy)]
enum Source<'a> {
    Bloom(&'a BloomFilter),
    Chain(&'a ScalableBloomFilter),
    Cuckoo(&'a CuckooFilter),
}

/// A bloomkit filter's RedisBloom dump, written straight from the filter: the header is
/// made up front, the data chunks are read out of the filter's bits (or slots) one at a
/// time into one reused buffer of at most [`MAX_CHUNK_BYTES`], so exporting a filter of
/// many gigabytes needs no second copy of it.
///
/// ```
/// use bloomkit::interop::redisbloom::{parse_scandump, FilterDump};
/// use bloomkit::cuckoo::{CuckooFilter, Layout};
/// use bloomkit::{AnyFilter, DynFilter};
/// let mut f = CuckooFilter::builder().layout(Layout::RedisBloom).capacity(1000).build()?;
/// f.insert("a")?;
/// let f = AnyFilter::from(f);
/// let mut replies = Vec::new();
/// FilterDump::new(&f, None)?.write_scandump(&mut replies)?;
/// let back = parse_scandump(&replies)?.into_filter()?;
/// assert!(back.contains_bytes(b"a"));
/// assert!(back.describe().contains("1024 buckets of 2 slots"), "{}", back.describe());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct FilterDump<'a> {
    header: Vec<u8>,
    source: Source<'a>,
    /// The bytes of each layer or sub-filter.
    parts: Vec<u64>,
}

impl<'a> FilterDump<'a> {
    /// The dump of `filter`: a classic filter with RedisBloom's hashing (one Bloom layer;
    /// `growth` `None` makes it `NONSCALING`, `Some(g)` a filter that adds layers of g
    /// times the capacity), or a cuckoo filter of
    /// [`Layout::RedisBloom`](crate::cuckoo::Layout::RedisBloom) (every sub-filter; `growth`
    /// `None` keeps its expansion, `Some(e)` makes it e, which only a filter of one
    /// sub-filter can change). Other filters are refused with the reason; a compressed
    /// filter must be uncompressed first ([`AnyFilter::into_uncompressed`]).
    pub fn new(filter: &'a AnyFilter, growth: Option<u32>) -> Result<Self, Error> {
        match filter {
            AnyFilter::Bloom(f) => {
                let header = bloom_header(f, growth)?;
                Ok(Self {
                    parts: vec![header.layers[0].bytes],
                    header: header.to_bytes(),
                    source: Source::Bloom(f),
                })
            }
            AnyFilter::Scalable(f) => {
                let header = chain_header(f)?;
                if growth.is_some_and(|g| g != f.growth_factor()) {
                    return Err(Error::InvalidParameter {
                        parameter: "expansion",
                        reason: format!(
                            "the filter grows by {}; --expansion cannot change that",
                            f.growth_factor()
                        ),
                    });
                }
                Ok(Self {
                    parts: header.layers.iter().map(|l| l.bytes).collect(),
                    header: header.to_bytes(),
                    source: Source::Chain(f),
                })
            }
            AnyFilter::Cuckoo(f) => {
                let header = cuckoo_header(f, growth)?;
                Ok(Self {
                    parts: header.sub_filter_sizes()?,
                    header: header.to_bytes(),
                    source: Source::Cuckoo(f),
                })
            }
            other => Err(Error::InvalidParameter {
                parameter: "filter for RedisBloom",
                reason: format!(
                    "a {} filter puts items where no RedisBloom filter looks; RedisBloom's \
                     Bloom filter is a classic one with its own hashing, its cuckoo filter a \
                     table of its own layout: build one with `bloomkit create --kind bloom \
                     --redisbloom` or `--kind cuckoo --redisbloom` (or `build … --redisbloom`)",
                    other.kind()
                ),
            }),
        }
    }

    /// The command that loads the chunks: `BF.LOADCHUNK` or `CF.LOADCHUNK`.
    pub fn load_command(&self) -> &'static str {
        match self.source {
            Source::Bloom(_) | Source::Chain(_) => "BF.LOADCHUNK",
            Source::Cuckoo(_) => "CF.LOADCHUNK",
        }
    }

    /// The header's bytes (`SCANDUMP key 0`'s data).
    pub fn header_bytes(&self) -> &[u8] {
        &self.header
    }

    /// Calls `each(iterator, bytes)` for the header and then every data chunk, as `SCANDUMP`
    /// answers them, reading each chunk out of the filter into one reused buffer.
    pub fn for_each_chunk<E>(
        &self,
        mut each: impl FnMut(u64, &[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        each(1, &self.header)?;
        let largest = self.parts.iter().copied().max().unwrap_or(0);
        let mut buf = vec![0u8; largest.min(MAX_CHUNK_BYTES) as usize];
        let mut base = 0u64;
        for (part, &size) in self.parts.iter().enumerate() {
            let mut offset = 0u64;
            while offset < size {
                let len = (size - offset).min(MAX_CHUNK_BYTES);
                let chunk = &mut buf[..len as usize];
                match self.source {
                    Source::Bloom(f) => f.bits.read_le_bytes_at(offset, chunk),
                    Source::Chain(f) => f.layers()[part].bits.read_le_bytes_at(offset, chunk),
                    Source::Cuckoo(f) => f
                        .redisbloom_table()
                        .and_then(|table| table.filters().get(part))
                        .and_then(|sub| sub.data().get(offset as usize..(offset + len) as usize))
                        .map(|slots| chunk.copy_from_slice(slots)),
                }
                .expect("a layer's bytes are within its words");
                offset += len;
                each(base + offset + 1, chunk)?;
            }
            base += size;
        }
        Ok(())
    }

    /// Writes the commands that recreate the filter under `key`, in RESP, as
    /// [`Dump::write_commands`] does.
    pub fn write_commands<W: Write>(&self, key: &[u8], mut out: W) -> io::Result<()> {
        let command = self.load_command().as_bytes();
        self.for_each_chunk(|iter, data| {
            let iter = iter.to_string();
            write_resp_array(&mut out, &[command, key, iter.as_bytes(), data])
        })?;
        out.flush()
    }

    /// Writes the `SCANDUMP` replies, in RESP, as [`Dump::write_scandump`] does.
    pub fn write_scandump<W: Write>(&self, mut out: W) -> io::Result<()> {
        self.for_each_chunk(|iter, data| write_reply(&mut out, iter, data))?;
        write_reply(&mut out, 0, &[])?;
        out.flush()
    }

    /// The owned [`Dump`]: the header and a copy of every byte.
    pub fn to_dump(&self) -> Dump {
        let mut parts: Vec<Vec<u8>> = self
            .parts
            .iter()
            .map(|&size| Vec::with_capacity(size as usize))
            .collect();
        let (mut part, mut header) = (0, true);
        let copied: Result<(), std::convert::Infallible> = self.for_each_chunk(|_, data| {
            if std::mem::take(&mut header) {
                return Ok(());
            }
            while parts[part].len() as u64 == self.parts[part] {
                part += 1;
            }
            parts[part].extend_from_slice(data);
            Ok(())
        });
        let Ok(()) = copied;
        match self.source {
            Source::Bloom(_) | Source::Chain(_) => Dump::Bloom(BloomDump {
                header: BloomHeader::parse(&self.header).expect("made consistent"),
                layers: parts,
            }),
            Source::Cuckoo(_) => Dump::Cuckoo(CuckooDump {
                header: CuckooHeader::parse(&self.header).expect("made consistent"),
                filters: parts,
            }),
        }
    }
}

fn write_reply<W: Write>(out: &mut W, iter: u64, data: &[u8]) -> io::Result<()> {
    write!(out, "*2\r\n:{iter}\r\n${}\r\n", data.len())?;
    out.write_all(data)?;
    out.write_all(b"\r\n")
}

/// One RESP array of bulk strings: `*n`, then `$len` and the bytes of each.
fn write_resp_array<W: Write>(out: &mut W, parts: &[&[u8]]) -> io::Result<()> {
    write!(out, "*{}\r\n", parts.len())?;
    for part in parts {
        write!(out, "${}\r\n", part.len())?;
        out.write_all(part)?;
        out.write_all(b"\r\n")?;
    }
    Ok(())
}

impl BloomDump {
    /// The dump of a classic filter hashed as RedisBloom hashes ([`Hashing::redisbloom`]):
    /// one layer holding its bits, its capacity and count. `growth` `None` makes a
    /// `NONSCALING` filter (it never adds a layer, as the bloomkit filter does not);
    /// `Some(g)` one that RedisBloom grows by layers of g times the capacity once it holds
    /// its capacity.
    ///
    /// The layer's error and bits per entry are the filter's target ε where `⌈ln 2 · bpe⌉`
    /// gives its k (RedisBloom checks that), else the bpe of k, `(k − ½) / ln 2`. The
    /// errors say why a filter cannot be exported: another hashing, or a bit count that is
    /// not a whole number of bytes.
    pub fn from_bloom_filter(filter: &BloomFilter, growth: Option<u32>) -> Result<Self, Error> {
        let header = bloom_header(filter, growth)?;
        let mut data = vec![0u8; header.layers[0].bytes as usize];
        filter
            .bits
            .read_le_bytes_at(0, &mut data)
            .expect("a filter's bytes are within its words");
        Ok(Self {
            header,
            layers: vec![data],
        })
    }
}

/// The one-layer header of a classic filter with RedisBloom's hashing (see
/// [`BloomDump::from_bloom_filter`]).
fn bloom_header(filter: &BloomFilter, growth: Option<u32>) -> Result<BloomHeader, Error> {
    // The layer's own checks (RedisBloom's hashing, whole bytes of bits) come first.
    let layer = layer_header(filter)?;
    if growth == Some(0) {
        return Err(Error::InvalidParameter {
            parameter: "filter for RedisBloom",
            reason: "expansion 0; a scaling filter grows by 1 or more".into(),
        });
    }
    let options = OPT_NOROUND | OPT_FORCE64 | if growth.is_none() { OPT_NO_SCALING } else { 0 };
    Ok(BloomHeader {
        size: filter.inserted,
        options,
        growth: growth.unwrap_or(2),
        layers: vec![layer],
    })
}

/// One layer's record for a classic filter with RedisBloom's hashing and whole bytes of
/// bits: its capacity and count, its k, and an error and bits per entry that give that k
/// (the filter's target ε where `⌈ln 2 · bpe⌉` is its k, else the bpe of k, `(k − ½) / ln 2`).
fn layer_header(filter: &BloomFilter) -> Result<BloomLayerHeader, Error> {
    let unsupported = |reason: String| Error::InvalidParameter {
        parameter: "filter for RedisBloom",
        reason,
    };
    if filter.hashing != Hashing::redisbloom() {
        return Err(unsupported(format!(
            "it hashes with {}; RedisBloom sets other bits (MurmurHash64A pair, seed \
             {REDISBLOOM_SEED:#x}, (a + i·b) mod m): create it with `bloomkit create \
             --redisbloom`",
            filter.hashing
        )));
    }
    let bits = filter.num_bits();
    if !bits.is_multiple_of(8) {
        return Err(unsupported(format!(
            "it has {bits} bits; RedisBloom's bit count is 8 × its bytes: create it with \
             `bloomkit create --redisbloom` (sized as BF.RESERVE) or -m a multiple of 64"
        )));
    }
    let k = filter.num_hashes;
    let (mut error, mut bpe) = (filter.target_fpp, -filter.target_fpp.ln() / LN2_SQUARED);
    if !(error > 0.0 && error < 1.0) || hashes_for(bpe) != Some(k) {
        bpe = (k as f64 - 0.5) / LN2;
        error = (-bpe * LN2_SQUARED).exp();
    }
    let layer = BloomLayerHeader {
        bytes: bits / 8,
        bits,
        size: filter.inserted,
        error,
        bpe,
        hashes: k,
        entries: filter.capacity.max(1),
        n2: 0,
    };
    if let Some(why) = layer.reason_inconsistent() {
        return Err(unsupported(format!("its layer cannot be described: {why}")));
    }
    Ok(layer)
}

/// The header of a scalable filter with RedisBloom's growth: every layer, its expansion.
fn chain_header(filter: &ScalableBloomFilter) -> Result<BloomHeader, Error> {
    if filter.growth_rule() != GrowthRule::RedisBloom {
        return Err(Error::InvalidParameter {
            parameter: "filter for RedisBloom",
            reason: "it is a scalable filter that sizes its layers by the paper's rule; \
                     RedisBloom sizes and hashes them otherwise: only one imported from a \
                     RedisBloom dump (or built from RedisBloom layers) grows as RedisBloom's"
                .into(),
        });
    }
    let layers = filter
        .layers()
        .iter()
        .map(layer_header)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(BloomHeader {
        size: layers.iter().map(|l| l.size).sum(),
        options: OPT_NOROUND | OPT_FORCE64,
        growth: filter.growth_factor(),
        layers,
    })
}

/// The header of a cuckoo filter of RedisBloom's layout: its sub-filters, its counts of
/// items and deletes, its max kicks as MAXITERATIONS, its expansion — or `growth` instead,
/// for a filter that has not grown past its first sub-filter (an expansion a filter of
/// several sub-filters has already used cannot change).
fn cuckoo_header(filter: &CuckooFilter, growth: Option<u32>) -> Result<CuckooHeader, Error> {
    let unsupported = |reason: String| Error::InvalidParameter {
        parameter: "filter for RedisBloom",
        reason,
    };
    let Some(table) = filter.redisbloom_table() else {
        return Err(unsupported(
            "it is a cuckoo filter of the paper's layout (f-bit fingerprints from a 128-bit \
             digest); RedisBloom's CF table is another: create it with `bloomkit create --kind \
             cuckoo --redisbloom`"
                .into(),
        ));
    };
    let own = table.expansion();
    let expansion = match growth {
        None => own,
        Some(e) if table.filters().len() > 1 && e != own as u32 => {
            return Err(Error::InvalidParameter {
                parameter: "expansion",
                reason: format!(
                    "the filter has grown {} sub-filters with expansion {own}; --expansion \
                     cannot change that",
                    table.filters().len()
                ),
            })
        }
        Some(e) => u16::try_from(e)
            .ok()
            .filter(|&e| e <= crate::cuckoo::redisbloom::MAX_EXPANSION)
            .ok_or_else(|| {
                unsupported(format!(
                    "expansion {e}; RedisBloom's is 0 to {}",
                    crate::cuckoo::redisbloom::MAX_EXPANSION
                ))
            })?,
    };
    let shape = table.shape();
    let header = CuckooHeader {
        items: shape.items,
        buckets: shape.buckets,
        deletes: shape.deletes,
        filters: shape.filters,
        bucket_size: shape.bucket_size as u16,
        max_iterations: shape.max_iterations as u16,
        expansion,
    };
    header.sub_filter_sizes()?;
    Ok(header)
}

impl CuckooDump {
    /// The dump of a cuckoo filter of [`Layout::RedisBloom`](crate::cuckoo::Layout::RedisBloom): every sub-filter, the counts
    /// as RedisBloom keeps them (see [`FilterDump::new`] for `growth`).
    pub fn from_cuckoo_filter(filter: &CuckooFilter, growth: Option<u32>) -> Result<Self, Error> {
        let header = cuckoo_header(filter, growth)?;
        let filters = filter
            .redisbloom_table()
            .expect("checked by cuckoo_header")
            .filters()
            .iter()
            .map(|f| f.data().to_vec())
            .collect();
        Ok(Self { header, filters })
    }

    /// The cuckoo filter of [`Layout::RedisBloom`](crate::cuckoo::Layout::RedisBloom) that answers as this dump's filter and
    /// grows as it would, with every sub-filter it grew ([`CuckooFilter::from_redisbloom`]).
    /// The errors say why a dump is not one: a header whose item count is not the number of
    /// slots in use (a damaged or forged header; RedisBloom's own filters keep them equal),
    /// sub-filters of other sizes than the header gives.
    pub fn to_cuckoo_filter(&self) -> Result<CuckooFilter, Error> {
        let unsupported = |reason: String| Error::InvalidParameter {
            parameter: "RedisBloom dump",
            reason,
        };
        let h = &self.header;
        let sizes = h.sub_filter_sizes()?;
        if sizes.len() != self.filters.len()
            || sizes
                .iter()
                .zip(&self.filters)
                .any(|(&s, f)| s != f.len() as u64)
        {
            return Err(unsupported(format!(
                "the header gives {} sub-filters of {sizes:?} bytes, the data {:?}",
                sizes.len(),
                self.filters.iter().map(Vec::len).collect::<Vec<_>>()
            )));
        }
        let used: u64 = self
            .filters
            .iter()
            .map(|f| f.iter().filter(|&&s| s != 0).count() as u64)
            .sum();
        if used != h.items {
            return Err(unsupported(format!(
                "the header counts {} items, but {used} slots are in use",
                h.items
            )));
        }
        let shape = h.shape();
        let mut parts = self.filters.iter();
        let table = RedisBloomCuckoo::from_sub_filters(
            &shape,
            CuckooHashing::Murmur64A,
            &crate::kinds::cuckoo::REDIS_TABLE_BYTES,
            |buckets| Some((buckets, parts.next()?.clone())),
        )
        .ok_or_else(|| {
            unsupported(format!(
                "the header {h:?} describes no filter bloomkit holds"
            ))
        })?;
        CuckooFilter::from_redisbloom(table)
    }
}

impl BloomDump {
    /// The classic filter that answers as this dump's filter: one layer with 64-bit
    /// hashing, positions reduced modulo its bits. The errors say why others cannot be:
    /// more than one layer (a scaling filter that grew: each layer has its own size and
    /// k), 32-bit hashing (RedisBloom before 2.0), power-of-two layers.
    pub fn to_bloom_filter(&self) -> Result<BloomFilter, Error> {
        let unsupported = |reason: String| Error::InvalidParameter {
            parameter: "RedisBloom dump",
            reason,
        };
        let h = &self.header;
        if h.layers.len() != 1 || self.layers.len() != 1 {
            return Err(unsupported(format!(
                "the filter has {} layers (it grew past its capacity); a bloomkit classic \
                 filter is one layer: dump a filter reserved with NONSCALING or a capacity its \
                 items never passed",
                h.layers.len()
            )));
        }
        if h.options & OPT_FORCE64 == 0 {
            return Err(unsupported(
                "it hashes with 32-bit MurmurHash2 (a filter made by RedisBloom before 2.0), \
                 which no bloomkit hashing does"
                    .into(),
            ));
        }
        layer_filter(0, &h.layers[0], &self.layers[0])
    }

    /// The scalable filter with RedisBloom's growth that answers as this dump's filter and
    /// grows as it would ([`ScalableBloomFilter::from_redisbloom_layers`]): every layer a
    /// classic filter with RedisBloom's hashing, as it is. The errors say why others cannot
    /// be: 32-bit hashing, power-of-two layers, layers whose capacity grew as log₂ of their
    /// bits (RedisBloom 1.x), a `NONSCALING` filter with more than one layer, expansion 0.
    pub fn to_scalable_filter(&self) -> Result<ScalableBloomFilter, Error> {
        let unsupported = |reason: String| Error::InvalidParameter {
            parameter: "RedisBloom dump",
            reason,
        };
        let h = &self.header;
        if h.options & OPT_FORCE64 == 0 {
            return Err(unsupported(
                "it hashes with 32-bit MurmurHash2 (a filter made by RedisBloom before 2.0), \
                 which no bloomkit hashing does"
                    .into(),
            ));
        }
        if h.options & OPT_ENTS_IS_BITS != 0 {
            return Err(unsupported(
                "its layers' capacities follow their bits (RedisBloom 1.x's ENTS_IS_BITS), \
                 which no bloomkit growth does"
                    .into(),
            ));
        }
        if h.options & OPT_NO_SCALING != 0 && h.layers.len() > 1 {
            return Err(unsupported(format!(
                "a NONSCALING filter with {} layers",
                h.layers.len()
            )));
        }
        if h.layers.len() != self.layers.len() {
            return Err(unsupported(format!(
                "{} layers in the header, {} of data",
                h.layers.len(),
                self.layers.len()
            )));
        }
        let layers = h
            .layers
            .iter()
            .zip(&self.layers)
            .enumerate()
            .map(|(i, (layer, data))| layer_filter(i, layer, data))
            .collect::<Result<Vec<_>, _>>()?;
        ScalableBloomFilter::from_redisbloom_layers(layers, h.growth)
    }
}

/// Layer `i` of a dump as a classic filter with RedisBloom's hashing.
fn layer_filter(i: usize, layer: &BloomLayerHeader, data: &[u8]) -> Result<BloomFilter, Error> {
    let unsupported = |reason: String| Error::InvalidParameter {
        parameter: "RedisBloom dump",
        reason,
    };
    if layer.modulus() != layer.bits {
        return Err(unsupported(format!(
            "layer {i} takes positions modulo 2^{} but has {} bits (RedisBloom 1.x)",
            layer.n2, layer.bits
        )));
    }
    if data.len() as u64 != layer.bytes {
        return Err(unsupported(format!(
            "layer {i} has {} bytes of data, its header {}",
            data.len(),
            layer.bytes
        )));
    }
    let mut bits = BitVec::zeros(layer.bits)?;
    bits.write_le_bytes_at(0, data)?;
    Ok(BloomFilter {
        bits,
        num_hashes: layer.hashes,
        hashing: Hashing::redisbloom(),
        capacity: layer.entries.max(1),
        target_fpp: layer.error,
        inserted: layer.size,
    })
}

/// Reads a file of `SCANDUMP` output in one of three forms (told apart by the first byte):
///
/// * RESP replies, as a client receives them: `*2\r\n:ITER\r\n$LEN\r\nBYTES\r\n` per call
///   (a nil `$-1` for the empty data of `CF.SCANDUMP`'s end);
/// * RESP commands `BF.LOADCHUNK key ITER BYTES` / `CF.LOADCHUNK …`: what
///   [`Dump::write_commands`] and an AOF hold;
/// * what `redis-cli --no-raw BF.SCANDUMP key ITER` prints for each call, concatenated:
///   `1) (integer) ITER` and `2) "BYTES"`, the bytes in redis-cli's quoting (`\xHH`, `\n`,
///   `\r`, `\t`, `\a`, `\b`, `\"`, `\\`; other printable bytes as they are), or `(nil)`.
///
/// ```
/// use bloomkit::interop::redisbloom::{parse_scandump, Dump};
/// // A cuckoo filter of two buckets of two slots: header, 4 bytes of slots, end.
/// let header = "\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x02\\x00\\x00\\x00\\x00\\x00\\x00\\x00\
///               \\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00\
///               \\x02\\x00\\x14\\x00\\x01\\x00";
/// let text = format!("1) (integer) 1\n2) \"{header}\"\n1) (integer) 5\n2) \"\\x00\\x00\\x07\\x00\"\n\
///                     1) (integer) 0\n2) \"\"\n");
/// let Dump::Cuckoo(cf) = parse_scandump(text.as_bytes())? else { panic!() };
/// assert_eq!(cf.filters, vec![vec![0, 0, 7, 0]]);
/// # Ok::<(), bloomkit::Error>(())
/// ```
pub fn parse_scandump(bytes: &[u8]) -> Result<Dump, Error> {
    let chunks = match bytes.first() {
        Some(b'*') => parse_resp(bytes)?,
        Some(_) => parse_redis_cli(bytes)?,
        None => {
            return Err(DecodeError::InvalidField {
                field: "SCANDUMP file",
                reason: "empty".into(),
            }
            .into())
        }
    };
    Dump::from_chunks(chunks)
}

fn bad(reason: String) -> Error {
    DecodeError::InvalidField {
        field: "SCANDUMP file",
        reason,
    }
    .into()
}

/// A RESP value of the few types a dump holds.
enum Resp {
    Integer(i64),
    Bulk(Option<Vec<u8>>),
}

struct RespReader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl RespReader<'_> {
    fn line(&mut self) -> Result<&[u8], Error> {
        let rest = &self.bytes[self.at..];
        let end = rest
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or_else(|| bad(format!("byte {}: a RESP line without \\r\\n", self.at)))?;
        self.at += end + 2;
        Ok(&rest[..end])
    }

    fn number(&mut self, what: &str) -> Result<i64, Error> {
        let at = self.at;
        let line = self.line()?;
        std::str::from_utf8(line)
            .ok()
            .and_then(|s| s.parse::<i64>().ok())
            .ok_or_else(|| bad(format!("byte {at}: {what} is not a number")))
    }

    fn value(&mut self) -> Result<Resp, Error> {
        let at = self.at;
        let Some(&tag) = self.bytes.get(self.at) else {
            return Err(bad(format!("byte {at}: the input ends inside a reply")));
        };
        self.at += 1;
        match tag {
            b':' => Ok(Resp::Integer(self.number("an integer")?)),
            b'$' => {
                let len = self.number("a bulk length")?;
                if len == -1 {
                    return Ok(Resp::Bulk(None));
                }
                let len = usize::try_from(len)
                    .ok()
                    .filter(|&l| l <= self.bytes.len() - self.at)
                    .ok_or_else(|| {
                        bad(format!(
                            "byte {at}: a bulk string of {len} bytes where {} are left",
                            self.bytes.len() - self.at
                        ))
                    })?;
                let data = self.bytes[self.at..self.at + len].to_vec();
                self.at += len;
                if self.bytes.get(self.at..self.at + 2) != Some(b"\r\n") {
                    return Err(bad(format!(
                        "byte {}: a bulk string without \\r\\n",
                        self.at
                    )));
                }
                self.at += 2;
                Ok(Resp::Bulk(Some(data)))
            }
            b'-' => {
                let line = self.line()?;
                Err(bad(format!(
                    "byte {at}: an error reply: {}",
                    String::from_utf8_lossy(line)
                )))
            }
            other => Err(bad(format!(
                "byte {at}: {:?} starts no reply a dump holds",
                other as char
            ))),
        }
    }
}

fn parse_resp(bytes: &[u8]) -> Result<Vec<(u64, Vec<u8>)>, Error> {
    let mut r = RespReader { bytes, at: 0 };
    let mut chunks = Vec::new();
    let mut key: Option<Vec<u8>> = None;
    while r.at < bytes.len() {
        let at = r.at;
        if bytes[r.at] != b'*' {
            return Err(bad(format!("byte {at}: expected a RESP array ('*')")));
        }
        r.at += 1;
        let n = r.number("an array length")?;
        let values: Vec<Resp> = match n {
            2 | 4 => (0..n).map(|_| r.value()).collect::<Result<_, _>>()?,
            _ => {
                return Err(bad(format!(
                    "byte {at}: an array of {n} elements; a SCANDUMP reply has 2, a LOADCHUNK \
                     command 4"
                )))
            }
        };
        let pair = match values.as_slice() {
            [Resp::Integer(i), Resp::Bulk(d)] => (*i, d.clone().unwrap_or_default()),
            [Resp::Bulk(Some(cmd)), Resp::Bulk(Some(k)), Resp::Bulk(Some(i)), Resp::Bulk(Some(d))]
                if cmd.eq_ignore_ascii_case(b"BF.LOADCHUNK")
                    || cmd.eq_ignore_ascii_case(b"CF.LOADCHUNK") =>
            {
                if key.get_or_insert_with(|| k.clone()) != k {
                    return Err(bad(format!("byte {at}: a LOADCHUNK for another key")));
                }
                let i = std::str::from_utf8(i)
                    .ok()
                    .and_then(|s| s.parse::<i64>().ok())
                    .ok_or_else(|| bad(format!("byte {at}: the iterator is not a number")))?;
                (i, d.clone())
            }
            _ => {
                return Err(bad(format!(
                    "byte {at}: neither a SCANDUMP reply (integer, bulk) nor a \
                     BF.LOADCHUNK/CF.LOADCHUNK command"
                )))
            }
        };
        let iter = u64::try_from(pair.0)
            .map_err(|_| bad(format!("byte {at}: negative iterator {}", pair.0)))?;
        chunks.push((iter, pair.1));
    }
    Ok(chunks)
}

fn parse_redis_cli(bytes: &[u8]) -> Result<Vec<(u64, Vec<u8>)>, Error> {
    let mut chunks = Vec::new();
    let mut pending: Option<u64> = None;
    for (n, line) in bytes.split(|&b| b == b'\n').enumerate() {
        let n = n + 1;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let line = line.trim_ascii();
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix(b"1) (integer) ") {
            if pending.is_some() {
                return Err(bad(format!(
                    "line {n}: an iterator where data was expected"
                )));
            }
            let iter = std::str::from_utf8(rest)
                .ok()
                .and_then(|s| s.parse::<u64>().ok())
                .ok_or_else(|| bad(format!("line {n}: the iterator is not a number")))?;
            pending = Some(iter);
        } else if let Some(rest) = line.strip_prefix(b"2) ") {
            let Some(iter) = pending.take() else {
                return Err(bad(format!("line {n}: data without an iterator before it")));
            };
            let data = if rest == b"(nil)" {
                Vec::new()
            } else {
                unquote(rest).map_err(|why| bad(format!("line {n}: {why}")))?
            };
            chunks.push((iter, data));
        } else if line.starts_with(b"(error)") {
            return Err(bad(format!("line {n}: {}", String::from_utf8_lossy(line))));
        } else {
            return Err(bad(format!(
                "line {n}: neither `1) (integer) N` nor `2) \"…\"` (redis-cli --no-raw \
                 SCANDUMP output), and the file is not RESP"
            )));
        }
    }
    if pending.is_some() {
        return Err(bad(
            "the file ends after an iterator, before its data".into()
        ));
    }
    Ok(chunks)
}

/// Undoes redis-cli's quoting of a bulk string (`sdscatrepr`).
fn unquote(quoted: &[u8]) -> Result<Vec<u8>, String> {
    let inner = quoted
        .strip_prefix(b"\"")
        .and_then(|q| q.strip_suffix(b"\""))
        .ok_or("data not in double quotes")?;
    let mut out = Vec::with_capacity(inner.len() / 2);
    let mut i = 0;
    while i < inner.len() {
        let c = inner[i];
        i += 1;
        if c != b'\\' {
            out.push(c);
            continue;
        }
        let Some(&e) = inner.get(i) else {
            return Err("a backslash at the end of the data".into());
        };
        i += 1;
        out.push(match e {
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'a' => 0x07,
            b'b' => 0x08,
            b'"' => b'"',
            b'\\' => b'\\',
            b'x' => {
                let hex = inner
                    .get(i..i + 2)
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .ok_or("\\x without two hex digits")?;
                i += 2;
                hex
            }
            other => return Err(format!("unknown escape \\{}", other as char)),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A filter's dump as `export --to redis` streams it, read back as `SCANDUMP` replies.
    fn streamed(any: &AnyFilter) -> Dump {
        let mut replies = Vec::new();
        FilterDump::new(any, None)
            .unwrap()
            .write_scandump(&mut replies)
            .unwrap();
        parse_scandump(&replies).unwrap()
    }
    use crate::cuckoo::Layout;
    use crate::format::Persist;

    fn redis_filter(bits: u64, k: u32) -> BloomFilter {
        let h = Hashing::redisbloom();
        BloomFilter::builder()
            .num_bits(bits)
            .num_hashes(k)
            .capacity(100)
            .fpp(0.01)
            .hash_function(h.function)
            .index_scheme(h.scheme)
            .seed(h.seed)
            .build()
            .unwrap()
    }

    #[test]
    fn a_redisbloom_hashed_filter_round_trips_through_its_dump() {
        let mut f = redis_filter(1152, 8);
        for i in 0..100u32 {
            f.insert(&format!("item-{i}"));
        }
        let dump = BloomDump::from_bloom_filter(&f, None).unwrap();
        assert_eq!(
            dump.header.options,
            OPT_NOROUND | OPT_FORCE64 | OPT_NO_SCALING
        );
        assert_eq!(dump.header.size, 100);
        let back = dump.to_bloom_filter().unwrap();
        assert_eq!(back.bits, f.bits);
        assert_eq!(back.num_hashes(), 8);
        assert!((0..100u32).all(|i| back.contains(&format!("item-{i}"))));
        let dump = Dump::Bloom(dump);
        let mut stream = Vec::new();
        dump.write_commands(b"key", &mut stream).unwrap();
        assert_eq!(parse_scandump(&stream).unwrap(), dump);
    }

    #[test]
    fn filters_redisbloom_cannot_hold_are_refused_with_the_reason() {
        let other = BloomFilter::with_capacity(100, 0.01).unwrap();
        let e = BloomDump::from_bloom_filter(&other, None).unwrap_err();
        assert!(e.to_string().contains("--redisbloom"), "{e}");
        let odd = redis_filter(1001, 7);
        let e = BloomDump::from_bloom_filter(&odd, None).unwrap_err();
        assert!(e.to_string().contains("1001 bits"), "{e}");
    }

    #[test]
    fn the_layer_keeps_k_when_the_target_fpp_implies_another() {
        // ε = 0.01 gives ⌈ln 2 · bpe⌉ = 7; a filter with k = 3 must still say 3.
        let f = redis_filter(1024, 3);
        let dump = BloomDump::from_bloom_filter(&f, Some(2)).unwrap();
        let l = dump.header.layers[0];
        assert_eq!((l.hashes, hashes_for(l.bpe)), (3, Some(3)));
        assert!(l.error > 0.0 && l.error < 1.0);
        assert_eq!(dump.header.options & OPT_NO_SCALING, 0);
    }

    #[test]
    fn damaged_dumps_are_refused() {
        let mut f = redis_filter(2048, 5);
        f.insert("x");
        let dump = Dump::Bloom(BloomDump::from_bloom_filter(&f, None).unwrap());
        let chunks: Vec<(u64, Vec<u8>)> = dump.chunks().map(|(i, d)| (i, d.to_vec())).collect();
        // Every truncation of the header.
        for len in 0..chunks[0].1.len() {
            let mut c = chunks.clone();
            c[0].1.truncate(len);
            assert!(Dump::from_chunks(c).is_err(), "header cut at {len}");
        }
        // A data chunk moved past the end, shortened, or repeated.
        let mut c = chunks.clone();
        c[1].0 += 1;
        assert!(Dump::from_chunks(c).is_err());
        let mut c = chunks.clone();
        c[1].1.pop();
        assert!(Dump::from_chunks(c).is_err());
        let mut c = chunks.clone();
        c.push(c[1].clone());
        assert!(Dump::from_chunks(c).is_err());
        // A header whose k does not follow from its bpe.
        let mut c = chunks.clone();
        let at = BLOOM_HEADER_FIXED_BYTES + 40;
        c[0].1[at] += 1;
        let e = Dump::from_chunks(c).unwrap_err().to_string();
        assert!(e.contains("hashes"), "{e}");
        // A header claiming 2^40 bytes with 256 following: refused before allocating.
        let mut c = chunks;
        let huge = 1u64 << 40;
        c[0].1[20..28].copy_from_slice(&huge.to_le_bytes());
        c[0].1[28..36].copy_from_slice(&(huge * 8).to_le_bytes());
        assert!(Dump::from_chunks(c).is_err());
    }

    #[test]
    fn redis_cli_quoting_is_undone() {
        assert_eq!(
            unquote(br#""a\x00\xff\n\r\t\a\b\"\\z""#).unwrap(),
            b"a\x00\xff\n\r\t\x07\x08\"\\z"
        );
        assert!(unquote(br#""\x0""#).is_err());
        assert!(unquote(br#""\q""#).is_err());
        assert!(unquote(b"abc").is_err());
    }

    #[test]
    fn hostile_scandump_files_are_errors_not_panics() {
        for input in [
            &b"*2\r\n:1\r\n$999999999999\r\n"[..],
            b"*2\r\n:1\r\n$-7\r\nabc\r\n",
            b"*3\r\n",
            b"*2\r\n:x\r\n",
            b"*2\r\n:-1\r\n$0\r\n\r\n",
            b"-ERR not found\r\n",
            b"*2\r\n-ERR not found\r\n",
            b"1) (integer) 1\n",
            b"2) \"\"\n",
            b"(error) ERR not found\n",
            b"hello",
            b"",
        ] {
            assert!(parse_scandump(input).is_err(), "{input:?}");
        }
    }

    fn redis_cuckoo(capacity: u64) -> CuckooFilter {
        CuckooFilter::builder()
            .layout(Layout::RedisBloom)
            .capacity(capacity)
            .build()
            .unwrap()
    }

    /// The rule written out from RedisBloom's documentation (`shared/redisbloom-2.4.md`),
    /// with `%` and C's int product, apart from the library's code: every inserted item's
    /// fingerprint is in one of its two buckets of the dumped slots.
    #[test]
    fn a_redisbloom_cuckoo_filter_puts_fingerprints_where_redisbloom_looks() {
        let mut f = redis_cuckoo(1000);
        let items: Vec<String> = (0..800).map(|i| format!("item-{i}")).collect();
        for item in &items {
            f.insert(item.as_str()).unwrap();
        }
        assert!(!f.is_full());
        let Dump::Cuckoo(dump) = dump_filter(AnyFilter::from(f), None).unwrap() else {
            panic!("a cuckoo dump")
        };
        let (n, b) = (dump.header.buckets, dump.header.bucket_size as u64);
        assert_eq!((n, b, dump.header.items), (1024, 2, 800));
        let slots = &dump.filters[0];
        for item in &items {
            let h = crate::hash::murmur64a(item.as_bytes(), 0);
            let fp = (h % 255 + 1) as u8;
            let i1 = h % n;
            let product = (fp as i32).wrapping_mul(0x5bd1_e995) as i64 as u64;
            let i2 = (i1 ^ product) % n;
            let bucket = |i: u64| &slots[(i * b) as usize..((i + 1) * b) as usize];
            assert!(
                bucket(i1).contains(&fp) || bucket(i2).contains(&fp),
                "{item}: fp {fp} in neither bucket {i1} nor {i2}"
            );
        }
    }

    #[test]
    fn a_redisbloom_cuckoo_filter_round_trips_through_its_dump() {
        let mut f = redis_cuckoo(4096);
        for i in 0..3000u32 {
            f.insert(&i).unwrap();
        }
        let any = AnyFilter::from(f.clone());
        let back = streamed(&any).into_filter().unwrap();
        let AnyFilter::Cuckoo(back) = back else {
            panic!("a cuckoo filter")
        };
        let same = CuckooDump::from_cuckoo_filter(&back, None).unwrap()
            == CuckooDump::from_cuckoo_filter(&f, None).unwrap();
        assert!(same, "the same table, count and shape");
        assert!((0..3000u32).all(|i| back.contains(&i)));
        // The commands carry the same chunks.
        let mut commands = Vec::new();
        FilterDump::new(&any, Some(1))
            .unwrap()
            .write_commands(b"k", &mut commands)
            .unwrap();
        let Dump::Cuckoo(d) = parse_scandump(&commands).unwrap() else {
            panic!()
        };
        assert_eq!((d.header.expansion, d.header.max_iterations), (1, 500));
        assert!(d.to_cuckoo_filter().unwrap().contains(&2999u32));
        assert!(
            d.filters == vec![CuckooDump::from_cuckoo_filter(&f, None).unwrap().filters[0].clone()]
        );
    }

    /// A filter grown to several sub-filters streams every sub-filter's own bytes (as the
    /// owned dump copies them), and its dump loads back into the same filter, counts and
    /// expansion included.
    #[test]
    fn a_grown_cuckoo_filter_streams_each_sub_filter_and_round_trips() {
        let mut f = CuckooFilter::builder()
            .layout(Layout::RedisBloom)
            .capacity(64)
            .max_kicks(20)
            .expansion(2)
            .build()
            .unwrap();
        for i in 0..600u32 {
            f.insert(&i).unwrap();
        }
        for i in (0..600u32).step_by(9) {
            f.remove(&i).unwrap();
        }
        assert!(f.num_sub_filters() > 2, "{}", f.num_sub_filters());
        let owned = CuckooDump::from_cuckoo_filter(&f, None).unwrap();
        let any = AnyFilter::from(f.clone());
        let Dump::Cuckoo(streamed) = streamed(&any) else {
            panic!("a cuckoo dump")
        };
        assert!(
            streamed == owned,
            "the streamed chunks are the sub-filters' bytes"
        );
        assert_eq!(streamed.header.expansion, 2);
        let back = streamed.to_cuckoo_filter().unwrap();
        assert_eq!(back.redisbloom_table(), f.redisbloom_table());
        assert!(
            FilterDump::new(&any, Some(4)).is_err(),
            "a grown filter keeps its expansion"
        );
    }

    #[test]
    fn cuckoo_filters_redisbloom_cannot_hold_are_refused_with_the_reason() {
        let paper = AnyFilter::with_capacity(Kind::Cuckoo, 1000, 0.01).unwrap();
        let e = FilterDump::new(&paper, None).err().unwrap().to_string();
        assert!(e.contains("--kind cuckoo --redisbloom"), "{e}");
        // Sub-filters of other sizes than the header gives, and a count the slots deny.
        let header = CuckooHeader {
            items: 1,
            buckets: 2,
            deletes: 0,
            filters: 2,
            bucket_size: 2,
            max_iterations: 20,
            expansion: 1,
        };
        let grown = CuckooDump {
            header,
            filters: vec![vec![0, 0, 9, 0], vec![0; 8]],
        };
        let e = grown.to_cuckoo_filter().unwrap_err().to_string();
        assert!(e.contains("2 sub-filters of [4, 4] bytes"), "{e}");
        let f = CuckooDump {
            filters: vec![vec![0, 0, 9, 0], vec![0; 4]],
            ..grown
        }
        .to_cuckoo_filter()
        .unwrap();
        assert_eq!((f.num_sub_filters(), f.expansion()), (2, 1));
        let miscounted = CuckooDump {
            header: CuckooHeader {
                filters: 1,
                items: 3,
                ..header
            },
            filters: vec![vec![0, 0, 9, 0]],
        };
        let e = miscounted.to_cuckoo_filter().unwrap_err().to_string();
        assert!(e.contains("counts 3 items, but 1"), "{e}");
    }

    /// Past 16 MiB the data goes in several chunks, none crossing a layer, read straight
    /// from the filter: they load back into the same bits.
    #[test]
    fn a_large_filter_streams_in_chunks_that_load_back() {
        let bits = (MAX_CHUNK_BYTES + 4096) * 8;
        let mut f = redis_filter(bits, 3);
        for i in 0..1000u32 {
            f.insert(&i);
        }
        let any = AnyFilter::from(f.clone());
        let streamed = FilterDump::new(&any, None).unwrap();
        let mut sizes = Vec::new();
        streamed
            .for_each_chunk(|iter, data| -> Result<(), ()> {
                sizes.push((iter, data.len() as u64));
                Ok(())
            })
            .unwrap();
        assert_eq!(
            sizes[1..],
            [
                (MAX_CHUNK_BYTES + 1, MAX_CHUNK_BYTES),
                (MAX_CHUNK_BYTES + 4096 + 1, 4096)
            ]
        );
        let mut commands = Vec::new();
        streamed.write_commands(b"k", &mut commands).unwrap();
        let back = parse_scandump(&commands).unwrap().into_filter().unwrap();
        let AnyFilter::Bloom(back) = back else {
            panic!()
        };
        assert_eq!(back.bits, f.bits);
    }

    /// Every cut of a dump's replies is refused unless it falls where a dump may end
    /// (after the last data chunk, or after the end marker).
    #[test]
    fn every_truncation_of_a_dump_is_refused() {
        let mut cf = redis_cuckoo(64);
        let mut bf = redis_filter(512, 4);
        for i in 0..40u32 {
            cf.insert(&i).unwrap();
            bf.insert(&i);
        }
        for filter in [AnyFilter::from(cf), AnyFilter::from(bf)] {
            let mut replies = Vec::new();
            FilterDump::new(&filter, None)
                .unwrap()
                .write_scandump(&mut replies)
                .unwrap();
            let end_marker = b"*2\r\n:0\r\n$0\r\n\r\n".len();
            let complete = [replies.len() - end_marker, replies.len()];
            for cut in 0..=replies.len() {
                let got = parse_scandump(&replies[..cut]).and_then(Dump::into_filter);
                assert_eq!(
                    got.is_ok(),
                    complete.contains(&cut),
                    "{} cut at {cut}: {:?}",
                    Filter::kind(&filter),
                    got.err()
                );
            }
        }
    }

    /// A chain grows as RedisBloom grows one — the rule written out here from its
    /// documentation: s times the newest capacity, half its error, bits ⌊n·bpe⌋ rounded up
    /// to 64, k = ⌈ln 2 · bpe⌉ — and its dump loads back as the same layers.
    #[test]
    fn a_chain_grows_as_redisbloom_and_round_trips_through_its_dump() {
        let mut first = redis_filter(1152, 8);
        first.target_fpp = 0.005;
        let mut chain = ScalableBloomFilter::from_redisbloom_layers(vec![first], 3).unwrap();
        for i in 0..2000u32 {
            chain.insert(&i).unwrap();
        }
        let (mut n, mut e) = (100u64, 0.005f64);
        for (i, layer) in chain.layers().iter().enumerate() {
            let bpe = -e.ln() / 0.480453013918201;
            let bits = ((n as f64 * bpe) as u64).div_ceil(64) * 64;
            // libbloom's ln 2 to 15 digits, as RedisBloom computes k.
            #[allow(clippy::approx_constant)]
            let k = (0.693147180559945 * bpe).ceil() as u32;
            assert_eq!(
                (
                    layer.capacity(),
                    layer.target_fpp(),
                    layer.num_bits(),
                    layer.num_hashes()
                ),
                (n, e, bits, k),
                "layer {i}"
            );
            n *= 3;
            e /= 2.0;
        }
        assert_eq!(chain.num_layers(), 4); // 100 + 300 + 900 < 2000 ≤ … + 2700
        let any = AnyFilter::from(chain.clone());
        let Dump::Bloom(dump) = streamed(&any) else {
            panic!()
        };
        assert_eq!((dump.header.growth, dump.header.size), (3, chain.len()));
        assert!(chain.len() > 1950, "few items taken for present");
        assert_eq!(dump.header.options, OPT_NOROUND | OPT_FORCE64);
        let back = dump.to_scalable_filter().unwrap();
        assert!(back == chain, "the same layers, counts and growth");
        assert!(FilterDump::new(&any, Some(2)).is_err(), "another expansion");
        let paper = AnyFilter::with_capacity(Kind::Scalable, 100, 0.01).unwrap();
        let e = FilterDump::new(&paper, None).err().unwrap().to_string();
        assert!(e.contains("paper's rule"), "{e}");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]

        /// Hostile dumps: bytes overwritten anywhere in a valid dump (header fields
        /// included: counts, sizes, lengths), in each of the three forms, give an error or
        /// a filter, never a panic, and no allocation beyond what the input holds.
        #[test]
        fn damaged_dumps_are_errors_or_filters_never_panics(
            which in 0u8..3,
            form in 0u8..3,
            edits in proptest::collection::vec((proptest::num::usize::ANY, proptest::num::u8::ANY), 1..6),
        ) {
            let filter = match which {
                0 => {
                    let mut f = redis_cuckoo(32);
                    for i in 0..20u32 { f.insert(&i).unwrap(); }
                    AnyFilter::from(f)
                }
                1 => {
                    let mut f = redis_filter(256, 3);
                    for i in 0..20u32 { f.insert(&i); }
                    AnyFilter::from(f)
                }
                _ => {
                    // A chain of three layers.
                    let mut f = ScalableBloomFilter::from_redisbloom_layers(
                        vec![redis_filter(128, 3)], 1).unwrap();
                    for i in 0..20u32 { f.insert(&i).unwrap(); }
                    AnyFilter::from(f)
                }
            };
            let dump = FilterDump::new(&filter, None).unwrap();
            let mut bytes = Vec::new();
            match form {
                0 => dump.write_scandump(&mut bytes).unwrap(),
                1 => dump.write_commands(b"key", &mut bytes).unwrap(),
                _ => dump
                    .for_each_chunk(|iter, data| -> Result<(), ()> {
                        bytes.extend_from_slice(format!("1) (integer) {iter}\n2) \"").as_bytes());
                        for &b in data {
                            bytes.extend_from_slice(format!("\\x{b:02x}").as_bytes());
                        }
                        bytes.extend_from_slice(b"\"\n");
                        Ok(())
                    })
                    .unwrap(),
            }
            let pristine = parse_scandump(&bytes).and_then(Dump::into_filter).unwrap();
            proptest::prop_assert!((0..20u32).all(|i| Filter::contains(&pristine, &i)));
            for (at, value) in edits {
                let at = at % bytes.len();
                bytes[at] = value;
            }
            if let Ok(f) = parse_scandump(&bytes).and_then(Dump::into_filter) {
                // Whatever loads is a consistent filter: its file reads back.
                proptest::prop_assert!(<AnyFilter as Persist>::from_bytes(&f.to_bytes()).is_ok());
            }
        }
    }
}
