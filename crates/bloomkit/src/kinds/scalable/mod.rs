//! The scalable Bloom filter: a Bloom filter that grows with its content and still keeps
//! a chosen bound ε on the false-positive probability. It follows Almeida, Baquero,
//! Preguiça & Hutchison, "Scalable Bloom Filters", Information Processing Letters 101(6),
//! 2007.
//!
//! # Structure
//!
//! A classic Bloom filter must be sized for its final number of items n in advance: put
//! more in and its false-positive probability climbs towards 1. A scalable filter is a
//! stack of classic filters, the *layers*, each a [`BloomFilter`] of its own. Only the
//! newest layer takes insertions; when it is full, a new, larger and more accurate layer is
//! added on top. A query asks every layer and says "maybe" if any of them does.
//!
//! Layer i (counted from 0) is sized by the classic formulas for
//!
//! ```text
//!     capacity  nᵢ = n₀ · sⁱ        (s, the growth factor: 2 or 4)
//!     error     εᵢ = ε₀ · rⁱ        (r, the tightening ratio, in (0, 1))
//! ```
//!
//! so it has `mᵢ = ⌈−nᵢ ln εᵢ / (ln 2)²⌉` bits and `kᵢ = round((mᵢ/nᵢ) ln 2)` hash
//! functions (see [`crate::params`]). A query for an absent item is a false positive when
//! at least one layer answers "maybe", so by the union bound the compound false-positive
//! probability of L layers is at most
//!
//! ```text
//!     Σ_{i<L} ε₀ rⁱ  =  ε₀ (1 − r^L) / (1 − r)  <  ε₀ / (1 − r)
//! ```
//!
//! however many layers are added (the paper's analysis of the compound error). This filter takes
//! `ε₀ = ε (1 − r)`, which makes the limit exactly the requested ε
//! ([`params::scalable_initial_fpp`], [`params::scalable_fpp_bound`]). The paper
//! recommends s = 2 for slow growth and s = 4 for fast growth, and r between 0.8 and 0.9
//! when the filter will grow a lot; the default here is s = 2 and r = 0.5, which
//! spends fewer bits on the first layers and more on the later ones.
//!
//! # When a layer is full
//!
//! The paper splits each layer into k slices and calls it full when the fraction of set
//! bits reaches 1/2, the fill of a filter sized with the optimal k at its capacity. This
//! filter instead counts: a layer is full when the number of insertions that changed it
//! reaches its capacity nᵢ. The two criteria agree on average (the sizing formulas say a
//! layer with nᵢ items is half full and has error εᵢ); counting is exact, costs nothing
//! (the classic filter already counts the insertions that changed it), keeps the number of
//! layers a deterministic function of the number of items ([`params::scalable_num_layers`]),
//! and is the criterion RedisBloom uses (the Redis module's layers count the same way).
//!
//! # Insert, query, limits
//!
//! An insert first asks every layer; if one says "maybe", the item is (probably) already
//! in and nothing changes (`Ok(false)`). Otherwise it goes into the newest layer, after a
//! new layer is added if the newest one is full. Items are never moved between layers, so
//! nothing inserted is ever lost, and an inserted item is always found.
//!
//! A filter may be given a maximum number of layers and a maximum total number of bits
//! (at most [`params::MAX_NUM_BITS`], the default). When a new layer would pass either, the
//! insert returns an error ([`Error::Full`], [`Error::TooLarge`],
//! [`Error::CapacityTooLarge`] for a layer past the crate's limit, [`Error::SizeOverflow`] or
//! [`Error::UnreachableFpp`]) and the filter is
//! unchanged — an item is never silently dropped. With `max_layers(1)` the filter behaves
//! like a classic filter that refuses to overfill.
//!
//! All layers use the filter's one [`Hashing`] (function, index scheme, seed). Their sizes
//! differ, so an item lands on unrelated positions in each; and the bound above is a union
//! bound, which holds whether or not the layers' answers are independent.
//!
//! # RedisBloom's growth
//!
//! A RedisBloom 2.4 Bloom filter (`BF.RESERVE key ε n EXPANSION s`) is such a stack too, with
//! its own sizing: the first layer has ε/2, each new layer `s` times the capacity and half
//! the error of the newest one (r = 1/2), a layer is full when its count reaches its
//! capacity, and each is sized by [`params::redisbloom_layer_shape`] (libbloom's bits per
//! entry rounded up to 64 bits, `k = ⌈ln 2 · bpe⌉`) and hashed with
//! [`Hashing::redisbloom`]. A filter with that growth
//! ([`ScalableBloomFilter::growth_rule`] [`GrowthRule::RedisBloom`]) keeps every layer as it
//! was made (from a `BF.SCANDUMP` with several layers: `interop::redisbloom`), adds new
//! ones as RedisBloom adds them, and answers as RedisBloom answers, bit for bit; its
//! expansion is any s ≥ 1. The source of these rules: RedisBloom's documentation of
//! `BF.RESERVE`, as collected in the workspace's `shared/redisbloom-2.4.md`.
//!
//! # Not mergeable, not removable
//!
//! Removal is impossible for the same reason as in a classic filter (bits are shared).
//! There is no union either: OR-ing two stacks layer by layer keeps every item, but each
//! layer then holds up to twice its capacity, and a layer sized for εᵢ = 0.5% at nᵢ items has
//! an error of about 12% at 2nᵢ — the ε guarantee, the point of this kind, would be gone.
//! Appending one stack's layers to the other's would instead add the two bounds (up to 2ε).
//! Neither is "the filter that inserting both sets would have built", so the kind does not
//! implement [`Mergeable`](crate::Mergeable).
//!
//! ```
//! use bloomkit::{Filter, ScalableBloomFilter};
//!
//! // Starts with room for 1 000 items, grows as needed, false positives stay below 1%.
//! let mut filter = ScalableBloomFilter::with_capacity(1_000, 0.01)?;
//! for i in 0..10_000u32 {
//!     filter.insert(&i)?;
//! }
//! assert!((0..10_000u32).all(|i| filter.contains(&i)));
//! assert_eq!(filter.num_layers(), 4); // 1 000 + 2 000 + 4 000 + 8 000 ≥ 10 000
//! assert!(filter.fpp_bound() < 0.01);
//! assert!(!filter.insert(&7u32)?); // already in: nothing changes
//! # Ok::<(), bloomkit::Error>(())
//! ```

mod options;
pub mod theory;

use crate::bits::BitVec;
use crate::bloom::{BloomFilter, DEFAULT_FPP};
use crate::codec::{invalid, Parts, Persist, Reader};
use crate::error::{DecodeError, Error};
use crate::filter::{Filter, Kind};
use crate::hash::HashingChoice;
use crate::hash::{Hashing, Item};
use crate::params::{self, MAX_NUM_BITS};

/// The default growth factor s: each layer has twice the capacity of the one before.
pub const DEFAULT_GROWTH: u32 = 2;

/// The default tightening ratio r: each layer has half the error of the one before.
pub const DEFAULT_TIGHTENING: f64 = 0.5;

/// The initial capacity used by `collect()` when the iterator does not say how many items
/// it has.
pub const DEFAULT_INITIAL_CAPACITY: u64 = 1000;

/// How a scalable filter sizes the layers it adds (see the module documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GrowthRule {
    /// Almeida et al.'s: layer i from the filter's n₀, ε, s and r, sized by the classic
    /// formulas.
    #[default]
    Paper,
    /// RedisBloom 2.4's: the next layer from the newest one (s times its capacity, half its
    /// error), sized as libbloom sizes it; layers loaded from a dump are kept as they were.
    RedisBloom,
}

/// A scalable Bloom filter: a stack of classic Bloom filters of growing capacity and
/// shrinking error, with a compound false-positive probability below the requested ε.
///
/// ```
/// use bloomkit::{Filter, ScalableBloomFilter};
///
/// let mut filter = ScalableBloomFilter::builder()
///     .capacity(100)
///     .fpp(0.001)
///     .growth_factor(4)
///     .tightening_ratio(0.8)
///     .build()?;
/// for i in 0..1_000u32 {
///     filter.insert(&i)?;
/// }
/// assert_eq!(filter.num_layers(), 3); // 100 + 400 + 1 600 ≥ 1 000
/// assert_eq!(filter.layers()[2].capacity(), 1_600);
/// assert!(filter.fpp_bound() < 0.001);
/// assert_eq!(Filter::capacity(&filter), 100 + 400 + 1_600);
/// # Ok::<(), bloomkit::Error>(())
/// ```
#[derive(Clone, PartialEq)]
pub struct ScalableBloomFilter {
    /// Never empty; only the last layer takes insertions.
    layers: Vec<BloomFilter>,
    hashing: Hashing,
    initial_capacity: u64,
    fpp: f64,
    growth: u32,
    tightening: f64,
    max_layers: Option<u32>,
    max_bits: u64,
    rule: GrowthRule,
}

/// The size of one layer, derived from the filter's parameters alone.
#[derive(Clone, Copy, Debug, PartialEq)]
struct LayerShape {
    capacity: u64,
    fpp: f64,
    num_bits: u64,
    num_hashes: u32,
}

/// The shape of layer `index`: nᵢ = n₀ sⁱ, εᵢ = ε₀ rⁱ, and the classic m and k for them.
fn layer_shape(
    initial_capacity: u64,
    fpp: f64,
    growth: u32,
    tightening: f64,
    index: u32,
) -> Result<LayerShape, Error> {
    let capacity =
        params::scalable_layer_capacity(initial_capacity, growth, index).ok_or_else(|| {
            Error::SizeOverflow {
                what: format!(
                    "the capacity of layer {index}, {initial_capacity} · {growth}^{index},"
                ),
            }
        })?;
    let initial_fpp = params::scalable_initial_fpp(fpp, tightening);
    let layer_fpp = params::scalable_layer_fpp(initial_fpp, tightening, index);
    if layer_fpp <= 0.0 {
        return Err(Error::UnreachableFpp {
            kind: Kind::Scalable,
            fpp: layer_fpp,
            reason: format!(
                "layer {index} would need an error of {initial_fpp:e} · {tightening}^{index}, \
                 which is 0 in floating point; use a tightening ratio closer to 1"
            ),
        });
    }
    // m and k as the layer's `BloomFilter` builder sizes them: past k = 64 (ε below about
    // 10⁻²⁰) m grows for the capped k, which the plain formulas do not know.
    let d = crate::sizing::dimensions(Some(capacity), Some(layer_fpp), None, None, 1)?;
    Ok(LayerShape {
        capacity,
        fpp: layer_fpp,
        num_bits: d.num_cells,
        num_hashes: d.num_hashes,
    })
}

impl ScalableBloomFilter {
    /// A filter whose first layer holds `capacity` items and whose false-positive
    /// probability stays below `fpp` however much it grows, with the defaults s = 2,
    /// r = 0.5, no layer limit, and the default hashing.
    ///
    /// ```
    /// use bloomkit::ScalableBloomFilter;
    /// let filter = ScalableBloomFilter::with_capacity(1_000, 0.01)?;
    /// assert_eq!(filter.num_layers(), 1);
    /// assert_eq!(filter.initial_fpp(), 0.005); // ε₀ = ε (1 − r)
    /// assert!(ScalableBloomFilter::with_capacity(0, 0.01).is_err());
    /// assert!(ScalableBloomFilter::with_capacity(1_000, f64::NAN).is_err());
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn with_capacity(capacity: impl crate::params::ItemCount, fpp: f64) -> Result<Self, Error> {
        Self::builder().capacity(capacity).fpp(fpp).build()
    }

    /// A builder for every other choice: growth factor, tightening ratio, limits, hashing.
    pub fn builder() -> ScalableBloomFilterBuilder {
        ScalableBloomFilterBuilder::default()
    }

    /// Adds an item. `Ok(true)` if it was added, `Ok(false)` if some layer already reported
    /// it present (nothing changes). An error if the newest layer is full and a new layer
    /// would pass the filter's limits; the filter is then unchanged.
    pub fn insert<I: Item + ?Sized>(&mut self, item: &I) -> Result<bool, Error> {
        item.with_bytes(|bytes| {
            if self.contains(bytes) {
                return Ok(false);
            }
            if self.newest_is_full() {
                self.grow()?;
            }
            let newest = self
                .layers
                .last_mut()
                .expect("a filter has at least one layer");
            let changed = newest.insert(bytes);
            debug_assert!(changed, "an item absent from a layer changes it");
            Ok(true)
        })
    }

    /// `false` if the item is certainly absent, `true` if it may be present (some layer
    /// says "maybe").
    pub fn contains<I: Item + ?Sized>(&self, item: &I) -> bool {
        // The newest layers are the largest and hold most items, so they go first.
        item.with_bytes(|bytes| self.layers.iter().rev().any(|layer| layer.contains(bytes)))
    }

    /// The number of layers, at least 1.
    pub fn num_layers(&self) -> usize {
        self.layers.len()
    }

    /// The layers, oldest (smallest) first, for their capacity, error, fill and count.
    ///
    /// ```
    /// use bloomkit::{Filter, ScalableBloomFilter};
    /// let mut filter = ScalableBloomFilter::with_capacity(10, 0.01)?;
    /// for i in 0..25u32 {
    ///     filter.insert(&i)?;
    /// }
    /// for layer in filter.layers() {
    ///     println!("{} of {} items, ε {}, fill {:.2}",
    ///              layer.len(), layer.capacity(), layer.target_fpp(), layer.fill_ratio());
    /// }
    /// assert_eq!(filter.layers()[1].target_fpp(), 0.0025);
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn layers(&self) -> &[BloomFilter] {
        &self.layers
    }

    crate::sizing::getters! {
        /// n₀, the capacity of the first layer.
        initial_capacity: u64;
    }

    /// ε, the bound on the compound false-positive probability.
    pub fn target_fpp(&self) -> f64 {
        self.fpp
    }

    /// ε₀ = ε (1 − r), the error of the first layer.
    pub fn initial_fpp(&self) -> f64 {
        params::scalable_initial_fpp(self.fpp, self.tightening)
    }

    /// s, the factor by which each layer's capacity grows.
    pub fn growth_factor(&self) -> u32 {
        self.growth
    }

    /// r, the factor by which each layer's error shrinks.
    pub fn tightening_ratio(&self) -> f64 {
        self.tightening
    }

    /// The most layers the filter may have, if limited.
    pub fn max_layers(&self) -> Option<u32> {
        self.max_layers
    }

    crate::sizing::getters! {
        /// The most bits all layers together may have.
        max_bits: u64;
    }

    /// The total number of bits of all layers.
    pub fn num_bits(&self) -> u64 {
        self.layers.iter().map(BloomFilter::num_bits).sum()
    }

    /// The bound on the false-positive probability with the layers there are now:
    /// `Σ εᵢ = ε₀ (1 − r^L) / (1 − r)`, always below [`target_fpp`](Self::target_fpp).
    pub fn fpp_bound(&self) -> f64 {
        params::scalable_fpp_bound(
            self.initial_fpp(),
            self.tightening,
            self.layers.len() as u32,
        )
    }

    /// How the filter sizes the layers it adds.
    pub fn growth_rule(&self) -> GrowthRule {
        self.rule
    }

    /// A filter with RedisBloom's growth holding `layers` as they are (oldest first, each a
    /// classic filter with [`Hashing::redisbloom`]): what a `BF.SCANDUMP` of a filter that
    /// grew holds. `growth` is its expansion (at least 1); ε is twice the first layer's
    /// error, as `BF.RESERVE` gives the first layer ε/2.
    ///
    /// ```
    /// use bloomkit::scalable::{GrowthRule, ScalableBloomFilter};
    /// use bloomkit::{BloomFilter, Filter, Hashing};
    /// let h = Hashing::redisbloom();
    /// // A first layer of 100 items at ε 0.005 (a dump's layers come as RedisBloom sized them).
    /// let first = BloomFilter::builder()
    ///     .capacity(100).fpp(0.005)
    ///     .hash_function(h.function).index_scheme(h.scheme).seed(h.seed)
    ///     .build()?;
    /// let mut f = ScalableBloomFilter::from_redisbloom_layers(vec![first], 2)?;
    /// for i in 0..150u32 {
    ///     f.insert(&i)?;
    /// }
    /// // The second layer as RedisBloom adds it: 200 items at ε 0.0025.
    /// let second = &f.layers()[1];
    /// assert_eq!((second.capacity(), second.target_fpp()), (200, 0.0025));
    /// assert_eq!((second.num_bits(), second.num_hashes()), (2496, 9)); // ⌊200 · 12.47⌋ → 64s
    /// assert_eq!(f.growth_rule(), GrowthRule::RedisBloom);
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn from_redisbloom_layers(layers: Vec<BloomFilter>, growth: u32) -> Result<Self, Error> {
        let bad = |reason: String| Error::InvalidParameter {
            parameter: "RedisBloom layers",
            reason,
        };
        let Some(first) = layers.first() else {
            return Err(bad("no layer; a filter has at least one".into()));
        };
        if growth == 0 {
            return Err(bad(
                "expansion 0; a scaling filter grows by 1 or more".into()
            ));
        }
        if let Some(i) = layers
            .iter()
            .position(|l| l.hashing() != Hashing::redisbloom())
        {
            return Err(bad(format!("layer {i} does not hash as RedisBloom does")));
        }
        let total = layers
            .iter()
            .fold(0u64, |t, l| t.saturating_add(l.num_bits()));
        if total > MAX_NUM_BITS {
            return Err(Error::TooLarge {
                bits: total,
                max: MAX_NUM_BITS,
            });
        }
        let fpp = (first.target_fpp() * 2.0).min(0.999_999);
        Ok(ScalableBloomFilter {
            initial_capacity: first.capacity(),
            fpp,
            layers,
            hashing: Hashing::redisbloom(),
            growth,
            tightening: 0.5,
            max_layers: None,
            max_bits: MAX_NUM_BITS,
            rule: GrowthRule::RedisBloom,
        })
    }

    /// The next layer's shape under RedisBloom's rule: s times the newest layer's capacity,
    /// half its error.
    fn redisbloom_next_shape(&self, newest: &BloomFilter) -> Result<LayerShape, Error> {
        let capacity = newest
            .capacity()
            .checked_mul(self.growth as u64)
            .ok_or_else(|| Error::SizeOverflow {
                what: format!(
                    "the capacity of the next layer, {} · {},",
                    newest.capacity(),
                    self.growth
                ),
            })?;
        let fpp = newest.target_fpp() * 0.5;
        let (num_bits, num_hashes, _) =
            params::redisbloom_layer_shape(capacity, fpp).ok_or_else(|| Error::SizeOverflow {
                what: format!("a RedisBloom layer of {capacity} items at ε = {fpp:e}"),
            })?;
        Ok(LayerShape {
            capacity,
            fpp,
            num_bits,
            num_hashes,
        })
    }

    fn newest_is_full(&self) -> bool {
        let newest = self.layers.last().expect("a filter has at least one layer");
        Filter::len(newest) >= newest.capacity()
    }

    /// Adds a layer on top, or fails (changing nothing) if it would pass a limit.
    fn grow(&mut self) -> Result<(), Error> {
        let index = self.layers.len() as u32;
        if let Some(max) = self.max_layers
            && index >= max
        {
            return Err(Error::Full {
                kind: Kind::Scalable,
                // Only the layer limit makes it full: past max_bits the error is
                // `TooLarge`.
                reason: format!(
                    "all {max} layers are full ({} items), as many as it was built to \
                         have; build a filter with a larger max_layers, or none, and add the \
                         items again",
                    Filter::len(self)
                ),
            });
        }
        let shape = match (self.rule, self.layers.last()) {
            (GrowthRule::RedisBloom, Some(newest)) => self.redisbloom_next_shape(newest)?,
            _ => layer_shape(
                self.initial_capacity,
                self.fpp,
                self.growth,
                self.tightening,
                index,
            )?,
        };
        let total = self.num_bits().saturating_add(shape.num_bits);
        if total > self.max_bits {
            return Err(Error::TooLarge {
                bits: total,
                max: self.max_bits,
            });
        }
        let mut builder = BloomFilter::builder()
            .capacity(shape.capacity)
            .fpp(shape.fpp)
            .hash_function(self.hashing.function)
            .index_scheme(self.hashing.scheme)
            .seed(self.hashing.seed);
        if self.rule == GrowthRule::RedisBloom {
            builder = builder
                .num_bits(shape.num_bits)
                .num_hashes(shape.num_hashes);
        }
        let mut layer = builder.build()?;
        if self.rule == GrowthRule::RedisBloom {
            // Given m and k, the builder states the rate they reach; RedisBloom's layer keeps
            // the error it was made for (ε/2 of the one before), which its dump records.
            layer.target_fpp = shape.fpp;
        }
        debug_assert_eq!(
            (layer.num_bits(), layer.num_hashes()),
            (shape.num_bits, shape.num_hashes)
        );
        self.layers.try_reserve(1).map_err(|_| Error::OutOfMemory {
            bytes: std::mem::size_of::<BloomFilter>() as u64,
        })?;
        self.layers.push(layer);
        Ok(())
    }
}

/// Joins per-layer values for [`Filter::properties`].
fn per_layer(layers: &[BloomFilter], value: impl Fn(&BloomFilter) -> String) -> String {
    layers.iter().map(value).collect::<Vec<_>>().join(", ")
}

impl Filter for ScalableBloomFilter {
    crate::filter::filter_basics!(Scalable: hashing, try_insert, contains);

    /// Back to a single, empty first layer (the memory of the others is freed).
    fn clear(&mut self) {
        self.layers.truncate(1);
        self.layers[0].clear();
    }

    fn len(&self) -> u64 {
        self.layers.iter().map(Filter::len).sum()
    }

    fn estimated_len(&self) -> f64 {
        self.layers.iter().map(Filter::estimated_len).sum()
    }

    fn memory_bytes(&self) -> usize {
        self.layers.iter().map(Filter::memory_bytes).sum()
    }

    /// The total capacity of the layers there are now, `Σ nᵢ`: the items the filter holds
    /// before it adds another layer.
    fn capacity(&self) -> u64 {
        self.layers.iter().map(BloomFilter::capacity).sum()
    }

    fn properties(&self) -> Vec<(&'static str, String)> {
        let layers = &self.layers;
        vec![
            ("target fpp (ε)", format!("{}", self.fpp)),
            ("initial capacity (n₀)", self.initial_capacity.to_string()),
            ("first layer fpp (ε₀)", format!("{}", self.initial_fpp())),
            ("growth factor (s)", self.growth.to_string()),
            (
                "growth rule",
                match self.rule {
                    GrowthRule::Paper => "paper".to_string(),
                    GrowthRule::RedisBloom => {
                        "RedisBloom (s × the newest capacity, ε/2, libbloom's sizing)".to_string()
                    }
                },
            ),
            ("tightening ratio (r)", format!("{}", self.tightening)),
            ("layers", layers.len().to_string()),
            (
                "max layers",
                self.max_layers
                    .map_or_else(|| "unlimited".to_string(), |m| m.to_string()),
            ),
            ("max bits", self.max_bits.to_string()),
            ("total bits", self.num_bits().to_string()),
            ("compound fpp bound", format!("{:.6e}", self.fpp_bound())),
            (
                "layer capacities",
                per_layer(layers, |l| l.capacity().to_string()),
            ),
            (
                "layer fpps",
                per_layer(layers, |l| format!("{}", l.target_fpp())),
            ),
            (
                "layer items",
                per_layer(layers, |l| Filter::len(l).to_string()),
            ),
            (
                "layer hash functions",
                per_layer(layers, |l| l.num_hashes().to_string()),
            ),
            (
                "layer fill ratios",
                per_layer(layers, |l| format!("{:.4}", l.fill_ratio())),
            ),
        ]
    }

    /// `1 − Π(1 − pᵢ)`, with each layer's pᵢ from its fill (a query is a false positive when
    /// some layer answers "maybe"), over the layers, computed as `−expm1(Σ ln(1 − pᵢ))` so that rates
    /// far below 10⁻¹⁶ do not round to 0.
    fn expected_fpp(&self) -> f64 {
        let log_all_negative: f64 = self
            .layers
            .iter()
            .map(|l| (-l.expected_fpp()).ln_1p())
            .sum();
        -log_all_negative.exp_m1()
    }

    fn target_fpp(&self) -> f64 {
        ScalableBloomFilter::target_fpp(self)
    }

    /// The layers fill in turn — n₀ items into the first, n₀·s into the second, … — and a
    /// query is a false positive when any layer says "maybe":
    /// `1 − Π (1 − FPP_exact(mᵢ, kᵢ, items in layer i))`, over the layers that n items
    /// open (shaped as the filter shapes them when it grows).
    fn fpp_at(&self, n: u64) -> f64 {
        if self.rule == GrowthRule::RedisBloom {
            // The layers there are, then those RedisBloom would add after the newest.
            let (mut left, mut pass) = (n, 1.0);
            let mut shapes: Vec<LayerShape> = self
                .layers
                .iter()
                .map(|l| LayerShape {
                    capacity: l.capacity(),
                    fpp: l.target_fpp(),
                    num_bits: l.num_bits(),
                    num_hashes: l.num_hashes(),
                })
                .collect();
            let mut i = 0;
            while left > 0 {
                if i == shapes.len() {
                    let newest = shapes[i - 1];
                    let Ok(next) = self.redisbloom_next_shape(
                        &BloomFilter::builder()
                            .num_bits(64)
                            .num_hashes(1)
                            .capacity(newest.capacity)
                            .fpp(newest.fpp)
                            .build()
                            .expect("a 64-bit filter builds"),
                    ) else {
                        break;
                    };
                    shapes.push(next);
                }
                let shape = shapes[i];
                let here = left.min(shape.capacity);
                pass *= 1.0 - params::fpp_exact(shape.num_bits, shape.num_hashes, here);
                left -= here;
                i += 1;
            }
            return 1.0 - pass;
        }
        let (mut left, mut pass, mut index) = (n, 1.0, 0);
        while left > 0 {
            let Ok(shape) = layer_shape(
                self.initial_capacity,
                self.fpp,
                self.growth,
                self.tightening,
                index,
            ) else {
                break; // no further layer can exist: the filter refuses the rest
            };
            let here = left.min(shape.capacity);
            pass *= 1.0 - params::fpp_exact(shape.num_bits, shape.num_hashes, here);
            left -= here;
            index += 1;
        }
        1.0 - pass
    }
}

crate::registry::registered!(
    ScalableBloomFilter,
    {
        name: "scalable",
        summary:
            "Scalable Bloom filter (Almeida et al. 2007): grows past its capacity and keeps ε.",
        grow: true,
        forgets: false,
        index_scheme: true,
    }
);

// No `Extend`: an insert can fail (past `max_layers`, `max_bits` or the crate's size limit)
// and `Extend` cannot say so. Use `Filter::try_extend`, which stops at the first error.

/// Collects items into a scalable filter at ε = 1% whose first layer holds them all (at
/// least [`DEFAULT_INITIAL_CAPACITY`]), so collecting never needs to grow and cannot fail;
/// the filter grows on later inserts.
///
/// ```
/// use bloomkit::ScalableBloomFilter;
/// let filter: ScalableBloomFilter = (0..5_000u32).collect();
/// assert!(filter.contains(&4_999u32));
/// assert_eq!(filter.num_layers(), 1);
/// ```
impl<I: Item> FromIterator<I> for ScalableBloomFilter {
    fn from_iter<T: IntoIterator<Item = I>>(iter: T) -> Self {
        let items: Vec<I> = iter.into_iter().collect();
        let initial = (items.len() as u64).max(DEFAULT_INITIAL_CAPACITY);
        let mut filter = ScalableBloomFilter::with_capacity(initial, DEFAULT_FPP)
            .expect("ε = 1% is valid and any in-memory collection fits");
        filter
            .try_extend(items)
            .expect("one layer holds every item, so nothing grows");
        filter
    }
}

/// Builds a [`ScalableBloomFilter`].
///
/// ```
/// use bloomkit::{Error, HashFunction, ScalableBloomFilter};
///
/// let filter = ScalableBloomFilter::builder()
///     .capacity(10_000)
///     .fpp(0.001)
///     .growth_factor(4)
///     .tightening_ratio(0.9)
///     .max_layers(5)
///     .hash_function(HashFunction::Xxh3)
///     .seed(42)
///     .build()?;
/// assert_eq!(filter.max_layers(), Some(5));
///
/// assert!(matches!(
///     ScalableBloomFilter::builder().capacity(10).growth_factor(3).build(),
///     Err(Error::InvalidParameter { .. })
/// ));
/// # Ok::<(), bloomkit::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
#[must_use = "a builder does nothing until .build() is called"]
pub struct ScalableBloomFilterBuilder {
    capacity: Option<u64>,
    fpp: Option<f64>,
    growth: Option<u32>,
    tightening: Option<f64>,
    max_layers: Option<u32>,
    max_bits: Option<u64>,
    rule: Option<GrowthRule>,
    hashing: HashingChoice,
}

impl ScalableBloomFilterBuilder {
    crate::hash::hashing_setters!(index_scheme);

    crate::sizing::capacity_and_fpp_setters!(
        "n₀, the capacity of the first layer (required).",
        "ε, the bound on the compound false-positive probability (default 1%)."
    );

    /// s, the factor by which each layer's capacity grows: 2 (the default) or 4; any s ≥ 1
    /// with [`GrowthRule::RedisBloom`] (`BF.RESERVE`'s EXPANSION).
    pub fn growth_factor(mut self, growth: u32) -> Self {
        self.growth = Some(growth);
        self
    }

    /// r, the factor by which each layer's error shrinks, strictly between 0 and 1
    /// (default 0.5). Closer to 1 spends fewer bits on later layers and more on the first.
    pub fn tightening_ratio(mut self, tightening: f64) -> Self {
        self.tightening = Some(tightening);
        self
    }

    crate::sizing::setters! {
        /// The most layers the filter may have (default: no limit but `max_bits`).
        max_layers: u32;

        /// The most bits all layers together may have (default and at most
        /// [`params::MAX_NUM_BITS`]).
        max_bits: u64;
    }

    /// How layers are sized: the paper's rule (the default), or RedisBloom's, as
    /// `BF.RESERVE key ε n EXPANSION s` makes them: the first layer n items at ε/2, each
    /// next s times the newest's items at half its error, sized by libbloom's formulas
    /// ([`params::redisbloom_layer_shape`]), hashed as RedisBloom hashes
    /// ([`Hashing::redisbloom`], so no other hash function or scheme, and a seed given is
    /// not used); s is any whole number ≥ 1
    /// and the tightening ratio ½. `bloomkit export --to redis` writes such a filter as
    /// `BF.LOADCHUNK` commands, after which RedisBloom grows it as it grows its own.
    ///
    /// ```
    /// use bloomkit::scalable::{GrowthRule, ScalableBloomFilter};
    /// let mut f = ScalableBloomFilter::builder()
    ///     .growth_rule(GrowthRule::RedisBloom).capacity(100).fpp(0.01).growth_factor(3)
    ///     .build()?;
    /// let first = &f.layers()[0];
    /// assert_eq!((first.capacity(), first.target_fpp(), first.num_bits()), (100, 0.005, 1152));
    /// for i in 0..150u32 {
    ///     f.insert(&i)?;
    /// }
    /// assert_eq!(f.layers()[1].capacity(), 300); // BF.RESERVE … EXPANSION 3
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn growth_rule(mut self, rule: GrowthRule) -> Self {
        self.rule = Some(rule);
        self
    }

    /// [`growth_rule`](Self::growth_rule) by its name (the registry's `growth-rule` option).
    pub(crate) fn growth_rule_named(self, name: &str) -> Self {
        self.growth_rule(if name == "redisbloom" {
            GrowthRule::RedisBloom
        } else {
            GrowthRule::Paper
        })
    }

    /// Validates the parameters and allocates the first layer.
    pub fn build(self) -> Result<ScalableBloomFilter, Error> {
        let fpp = crate::sizing::fpp(self.fpp)?;
        let initial_capacity = match self.capacity {
            None | Some(0) => return Err(Error::ZeroCapacity),
            Some(n) => n,
        };
        if self.rule == Some(GrowthRule::RedisBloom) {
            return self.build_redisbloom(initial_capacity, fpp);
        }
        let growth = check_growth(self.growth.unwrap_or(DEFAULT_GROWTH))?;
        let tightening = check_tightening(self.tightening.unwrap_or(DEFAULT_TIGHTENING))?;
        if self.max_layers == Some(0) {
            return Err(Error::InvalidParameter {
                parameter: "max layers",
                reason: "a filter needs at least one layer".into(),
            });
        }
        let max_bits = match self.max_bits {
            Some(0) => return Err(Error::ZeroBits),
            Some(bits) if bits > MAX_NUM_BITS => {
                return Err(Error::TooLarge {
                    bits,
                    max: MAX_NUM_BITS,
                })
            }
            Some(bits) => bits,
            None => MAX_NUM_BITS,
        };
        let hashing = self.hashing.resolve()?;
        let mut filter = ScalableBloomFilter {
            layers: Vec::new(),
            hashing,
            initial_capacity,
            fpp,
            growth,
            tightening,
            max_layers: self.max_layers,
            max_bits,
            rule: GrowthRule::Paper,
        };
        filter.grow()?;
        Ok(filter)
    }
}

impl ScalableBloomFilterBuilder {
    /// [`build`](Self::build) with [`GrowthRule::RedisBloom`]: `BF.RESERVE`'s first layer.
    fn build_redisbloom(
        self,
        initial_capacity: u64,
        fpp: f64,
    ) -> Result<ScalableBloomFilter, Error> {
        let bad = |parameter, reason: String| Error::InvalidParameter { parameter, reason };
        let growth = self.growth.unwrap_or(DEFAULT_GROWTH);
        if growth == 0 {
            return Err(bad(
                "growth factor",
                "RedisBloom's expansion is at least 1 (BF.RESERVE … EXPANSION s)".into(),
            ));
        }
        if self.tightening.is_some_and(|r| r != 0.5) {
            return Err(bad(
                "tightening ratio",
                "RedisBloom halves each layer's error: its ratio is 0.5".into(),
            ));
        }
        let h = Hashing::redisbloom();
        let chosen = self.hashing.hashing;
        let default = Hashing::default();
        // A seed has no part in RedisBloom's hashing (its seed is fixed): one given (the
        // registry's builds always give one) is not used, as in the cuckoo filter's
        // RedisBloom layout.
        let function_ok = chosen.function == default.function || chosen.function == h.function;
        let scheme_ok = chosen.scheme == default.scheme || chosen.scheme == h.scheme;
        if !(function_ok && scheme_ok) {
            return Err(bad(
                "hashing",
                format!(
                    "RedisBloom's growth hashes as RedisBloom does ({h}); it takes no other \
                     hash function or index scheme"
                ),
            ));
        }
        let max_bits = self.max_bits.unwrap_or(MAX_NUM_BITS).min(MAX_NUM_BITS);
        let first_fpp = fpp / 2.0;
        let (num_bits, num_hashes, _) = params::redisbloom_layer_shape(initial_capacity, first_fpp)
            .ok_or_else(|| Error::SizeOverflow {
                what: format!(
                    "a RedisBloom layer of {initial_capacity} items at ε = {first_fpp:e}"
                ),
            })?;
        if num_bits > max_bits {
            return Err(Error::TooLarge {
                bits: num_bits,
                max: max_bits,
            });
        }
        let mut first = BloomFilter::builder()
            .capacity(initial_capacity)
            .fpp(first_fpp)
            .num_bits(num_bits)
            .num_hashes(num_hashes)
            .hash_function(h.function)
            .index_scheme(h.scheme)
            .seed(h.seed)
            .build()?;
        // As in `grow`: the layer keeps the error it was made for, which its dump records.
        first.target_fpp = first_fpp;
        let mut filter = ScalableBloomFilter::from_redisbloom_layers(vec![first], growth)?;
        filter.max_layers = self.max_layers;
        filter.max_bits = max_bits;
        Ok(filter)
    }
}

fn check_growth(growth: u32) -> Result<u32, Error> {
    if growth == 2 || growth == 4 {
        Ok(growth)
    } else {
        Err(Error::InvalidParameter {
            parameter: "growth factor",
            reason: format!("must be 2 or 4 (the paper's slow and fast growth), got {growth}"),
        })
    }
}

fn check_tightening(tightening: f64) -> Result<f64, Error> {
    if tightening > 0.0 && tightening < 1.0 {
        Ok(tightening)
    } else {
        Err(Error::InvalidParameter {
            parameter: "tightening ratio",
            reason: format!("must be strictly between 0 and 1, got {tightening}"),
        })
    }
}

crate::codec::stored! {
    /// The scalable filter's parameters on disk (44 bytes), `max_layers` 0 for no limit.
    /// Payload: for each layer, oldest first, the layer as the classic filter encodes itself:
    /// parameter length u32, parameters, payload length u64, payload (see `BloomFilter`).
    struct Stored of f: ScalableBloomFilter {
        initial_capacity: u64 = f.initial_capacity,
        fpp: f64 = f.fpp,
        growth: u32 = f.growth,
        tightening: f64 = f.tightening,
        max_layers: u32 = f.max_layers.unwrap_or(0),
        max_bits: u64 = f.max_bits,
        num_layers: u32 = f.layers.len() as u32,
    }
}

impl Persist for ScalableBloomFilter {
    /// With RedisBloom's growth, the parameters are followed by a u32 1 (48 bytes).
    fn encode_params(&self, out: &mut Vec<u8>) {
        Stored::of(self).write(out);
        if self.rule == GrowthRule::RedisBloom {
            out.extend_from_slice(&REDISBLOOM_RULE_MARK.to_le_bytes());
        }
    }

    fn encode_payload(&self, out: &mut Vec<u8>) {
        for layer in &self.layers {
            let mut layer_params = Vec::new();
            layer.encode_params(&mut layer_params);
            out.extend_from_slice(&(layer_params.len() as u32).to_le_bytes());
            out.extend_from_slice(&layer_params);
            let length_at = out.len();
            out.extend_from_slice(&0u64.to_le_bytes());
            layer.encode_payload(out);
            let length = (out.len() - length_at - 8) as u64;
            out[length_at..length_at + 8].copy_from_slice(&length.to_le_bytes());
        }
    }

    fn decode_parts(parts: &Parts<'_>) -> Result<Self, DecodeError> {
        parts.expect_kind(Kind::Scalable)?;
        if parts.params.len() == STORED_BYTES + 4 {
            return decode_redisbloom(parts);
        }
        let Stored {
            initial_capacity,
            fpp,
            growth,
            tightening,
            max_layers,
            max_bits,
            num_layers,
        } = Stored::read(parts.params)?;
        // The checks every decoder shares, on this layout's fields: the first layer's
        // capacity, and ε.
        crate::codec::check_positive("initial_capacity", initial_capacity)?;
        crate::codec::check_probability("fpp", fpp)?;
        check_growth(growth).map_err(|e| invalid("growth", e.to_string()))?;
        check_tightening(tightening).map_err(|e| invalid("tightening", e.to_string()))?;
        if max_bits == 0 || max_bits > MAX_NUM_BITS {
            return Err(invalid(
                "max_bits",
                format!("{max_bits} is not in 1..={MAX_NUM_BITS}"),
            ));
        }
        if num_layers == 0 || (max_layers != 0 && num_layers > max_layers) {
            return Err(invalid(
                "num_layers",
                format!("{num_layers} layers with a limit of {max_layers} (0 = none)"),
            ));
        }
        // The layers' sizes follow from the parameters. Work them out, and check that they
        // fit in max_bits, before reading (and allocating) any layer. Sizes at least double
        // from layer to layer, so a hostile layer count fails here after a few dozen steps.
        let mut shapes = Vec::new();
        let mut total_bits = 0u64;
        for index in 0..num_layers {
            let shape = layer_shape(initial_capacity, fpp, growth, tightening, index)
                .map_err(|e| invalid("num_layers", format!("layer {index}: {e}")))?;
            total_bits = total_bits.saturating_add(shape.num_bits);
            if total_bits > max_bits {
                return Err(invalid(
                    "num_layers",
                    format!("{num_layers} layers need more than max_bits = {max_bits} bits"),
                ));
            }
            shapes.push(shape);
        }
        let mut r = Reader::new(parts.payload);
        let mut layers = Vec::with_capacity(shapes.len());
        for (index, shape) in shapes.iter().enumerate() {
            let layer = read_layer(&mut r, parts.hashing, index, Some(shape.num_bits))?;
            let found = LayerShape {
                capacity: layer.capacity(),
                fpp: layer.target_fpp(),
                num_bits: layer.num_bits(),
                num_hashes: layer.num_hashes(),
            };
            if found != *shape {
                return Err(invalid(
                    "layer",
                    format!("layer {index} is {found:?}, the parameters imply {shape:?}"),
                ));
            }
            let items = Filter::len(&layer);
            let is_last = index + 1 == shapes.len();
            if items > shape.capacity || (!is_last && items != shape.capacity) {
                return Err(invalid(
                    "layer",
                    format!(
                        "layer {index} holds {items} items of {}; only the newest layer may \
                         be less than full, and none more",
                        shape.capacity
                    ),
                ));
            }
            layers.push(layer);
        }
        r.finish("payload")?;
        Ok(ScalableBloomFilter {
            layers,
            hashing: parts.hashing,
            initial_capacity,
            fpp,
            growth,
            tightening,
            max_layers: (max_layers != 0).then_some(max_layers),
            max_bits,
            rule: GrowthRule::Paper,
        })
    }
}

/// Reads layer `index` as the payload stores it — its parameters' length (u32) and bytes,
/// its bits' length (u64) and bytes — and decodes it as a classic filter with the chain's
/// `hashing`. `implied_bits`: the layer's m where the chain's parameters imply it, against
/// which the stored length is checked before the bits are read.
fn read_layer(
    r: &mut Reader<'_>,
    hashing: Hashing,
    index: usize,
    implied_bits: Option<u64>,
) -> Result<BloomFilter, DecodeError> {
    let params_len = r.u32()?;
    let params = r.take_u64(params_len as u64)?;
    let payload_len = r.u64()?;
    if let Some(num_bits) = implied_bits {
        let implied = BitVec::encoded_len(num_bits);
        if payload_len != implied {
            return Err(invalid(
                "layer",
                format!(
                    "layer {index} has {payload_len} bytes of bits, its parameters imply {implied}"
                ),
            ));
        }
    }
    let payload = r.take_u64(payload_len)?;
    BloomFilter::decode_parts(&Parts {
        kind: Kind::Bloom,
        hashing,
        params,
        payload,
    })
}

/// The bytes of the stored parameters (`Stored`).
const STORED_BYTES: usize = 44;
/// The u32 after the parameters of a filter with RedisBloom's growth.
const REDISBLOOM_RULE_MARK: u32 = 1;

/// Reads a filter with RedisBloom's growth: its layers as stored, each checked as a classic
/// filter is (with RedisBloom's hashing), their sizes against `max_bits` before they are
/// read, and the parameters RedisBloom's growth implies.
fn decode_redisbloom(parts: &Parts<'_>) -> Result<ScalableBloomFilter, DecodeError> {
    let (params, mark) = parts.params.split_at(STORED_BYTES);
    if mark != REDISBLOOM_RULE_MARK.to_le_bytes() {
        return Err(invalid(
            "growth rule",
            format!("{mark:?} after the parameters; RedisBloom's growth is marked 1"),
        ));
    }
    if parts.hashing != Hashing::redisbloom() {
        return Err(invalid(
            "hashing",
            "a filter with RedisBloom's growth hashes as RedisBloom does".into(),
        ));
    }
    let Stored {
        growth,
        num_layers,
        max_layers,
        max_bits,
        ..
    } = Stored::read(params)?;
    if growth == 0 || max_layers != 0 || max_bits != MAX_NUM_BITS || num_layers == 0 {
        return Err(invalid(
            "parameters",
            format!(
                "growth {growth}, {num_layers} layers, max layers {max_layers}, max bits \
                 {max_bits}: RedisBloom's growth has growth ≥ 1, at least one layer, no limits"
            ),
        ));
    }
    let mut r = Reader::new(parts.payload);
    let mut layers = Vec::new();
    let mut total_bits = 0u64;
    for index in 0..num_layers {
        let layer = read_layer(&mut r, parts.hashing, index as usize, None)?;
        total_bits = total_bits.saturating_add(layer.num_bits());
        if total_bits > MAX_NUM_BITS {
            return Err(invalid(
                "layer",
                format!("layer {index} takes the layers past {MAX_NUM_BITS} bits"),
            ));
        }
        layers.push(layer);
    }
    r.finish("payload")?;
    ScalableBloomFilter::from_redisbloom_layers(layers, growth)
        .map_err(|e| invalid("layers", e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A layer whose bits are not as long as the chain's parameters imply is refused, by
    /// name, before its bits are read: here the payload of a chain sized for 1,000 items
    /// under the parameters of one sized for 2,000.
    #[test]
    fn a_layer_of_the_wrong_length_is_refused_by_name() {
        let small = ScalableBloomFilter::with_capacity(1_000, 0.01).unwrap();
        let large = ScalableBloomFilter::with_capacity(2_000, 0.01).unwrap();
        let (mut params, mut payload) = (Vec::new(), Vec::new());
        large.encode_params(&mut params);
        small.encode_payload(&mut payload);
        let e = ScalableBloomFilter::decode_parts(&Parts {
            kind: Kind::Scalable,
            hashing: small.hashing,
            params: &params,
            payload: &payload,
        })
        .unwrap_err();
        assert!(
            e.to_string().contains("layer 0 has ")
                && e.to_string().contains("its parameters imply"),
            "{e}"
        );
    }

    fn redisbloom_chain() -> ScalableBloomFilter {
        let h = Hashing::redisbloom();
        let first = BloomFilter::builder()
            .num_bits(1152)
            .num_hashes(8)
            .capacity(100)
            .fpp(0.005)
            .hash_function(h.function)
            .index_scheme(h.scheme)
            .seed(h.seed)
            .build()
            .unwrap();
        let mut f = ScalableBloomFilter::from_redisbloom_layers(vec![first], 5).unwrap();
        for i in 0..500u32 {
            f.insert(&i).unwrap();
        }
        f
    }

    #[test]
    fn a_redisbloom_chain_saves_and_loads_with_its_growth_rule() {
        let f = redisbloom_chain();
        assert_eq!(
            (f.num_layers(), f.growth_rule()),
            (2, GrowthRule::RedisBloom)
        );
        let bytes = f.to_bytes();
        let back = ScalableBloomFilter::from_bytes(&bytes).unwrap();
        assert!(back == f);
        // It goes on growing by RedisBloom's rule after loading.
        let mut back = back;
        for i in 500..4000u32 {
            back.insert(&i).unwrap();
        }
        let caps: Vec<u64> = back.layers().iter().map(|l| l.capacity()).collect();
        assert_eq!(caps, [100, 500, 2500, 12500]);
    }

    #[test]
    fn a_redisbloom_chain_with_damaged_parameters_is_refused() {
        let f = redisbloom_chain();
        let mut params = Vec::new();
        f.encode_params(&mut params);
        let mut payload = Vec::new();
        f.encode_payload(&mut payload);
        let decode = |params: &[u8], hashing: Hashing| {
            ScalableBloomFilter::decode_parts(&Parts {
                kind: Kind::Scalable,
                hashing,
                params,
                payload: &payload,
            })
        };
        assert!(decode(&params, Hashing::redisbloom()).is_ok());
        let mut bad_mark = params.clone();
        *bad_mark.last_mut().unwrap() = 9;
        assert!(decode(&bad_mark, Hashing::redisbloom()).is_err());
        assert!(
            decode(&params, Hashing::default()).is_err(),
            "another hashing"
        );
        let mut zero_growth = params.clone();
        zero_growth[16..20].copy_from_slice(&0u32.to_le_bytes());
        assert!(decode(&zero_growth, Hashing::redisbloom()).is_err());
        let mut more_layers = params.clone();
        more_layers[40..44].copy_from_slice(&3u32.to_le_bytes());
        assert!(
            decode(&more_layers, Hashing::redisbloom()).is_err(),
            "a layer missing"
        );
    }

    #[test]
    fn layers_follow_the_growth_and_tightening_laws() {
        let mut f = ScalableBloomFilter::builder()
            .capacity(100)
            .fpp(0.01)
            .growth_factor(4)
            .tightening_ratio(0.8)
            .build()
            .unwrap();
        f.try_extend(0..20_000u32).unwrap();
        let e0 = 0.01 * (1.0 - 0.8);
        for (i, layer) in f.layers().iter().enumerate() {
            assert_eq!(layer.capacity(), 100 * 4u64.pow(i as u32));
            let expected = e0 * 0.8f64.powi(i as i32);
            assert!((layer.target_fpp() - expected).abs() < expected * 1e-12);
        }
        assert_eq!(
            f.num_layers() as u32,
            params::scalable_num_layers(Filter::len(&f), 100, 4)
        );
        assert!(f.fpp_bound() < 0.01);
    }

    #[test]
    fn a_new_layer_is_added_only_when_the_newest_is_full() {
        let mut f = ScalableBloomFilter::with_capacity(10, 0.001).unwrap();
        let mut added = 0u32;
        let mut i = 0u32;
        while added < 10 {
            added += f.insert(&i).unwrap() as u32;
            i += 1;
        }
        assert_eq!(f.num_layers(), 1);
        assert_eq!(Filter::len(&f.layers()[0]), 10);
        while !f.insert(&i).unwrap() {
            i += 1;
        }
        assert_eq!(f.num_layers(), 2);
        assert_eq!(Filter::len(&f.layers()[1]), 1);
    }

    #[test]
    fn inserting_a_present_item_changes_nothing() {
        let mut f = ScalableBloomFilter::with_capacity(10, 0.01).unwrap();
        assert!(f.insert("x").unwrap());
        let before = f.clone();
        assert!(!f.insert("x").unwrap());
        assert_eq!(f, before);
        assert_eq!(Filter::len(&f), 1);
    }

    #[test]
    fn max_layers_refuses_growth_and_keeps_every_item() {
        let mut f = ScalableBloomFilter::builder()
            .capacity(10)
            .max_layers(2)
            .build()
            .unwrap();
        let mut inserted = Vec::new();
        let mut error = None;
        for i in 0..100u32 {
            match f.insert(&i) {
                Ok(_) => inserted.push(i),
                Err(e) => {
                    error = Some(e);
                    break;
                }
            }
        }
        assert!(matches!(
            error,
            Some(Error::Full {
                kind: Kind::Scalable,
                ..
            })
        ));
        assert_eq!(f.num_layers(), 2);
        assert_eq!(Filter::len(&f), 30);
        assert!(inserted.iter().all(|i| f.contains(i)));
        // Still refused, still unchanged, for an item it does not hold (one it reports
        // present is not refused: nothing needs adding); present items are still fine.
        let before = f.clone();
        let absent = (1000u32..).find(|i| !f.contains(i)).unwrap();
        assert!(matches!(
            f.insert(&absent),
            Err(Error::Full {
                kind: Kind::Scalable,
                ..
            })
        ));
        assert_eq!(f, before);
        assert_eq!(f.insert(&0u32), Ok(false));
    }

    #[test]
    fn max_bits_refuses_growth_with_too_large() {
        let first = params::optimal_num_bits(100, 0.005).unwrap();
        let mut f = ScalableBloomFilter::builder()
            .capacity(100)
            .max_bits(first + 10)
            .build()
            .unwrap();
        let result = f.try_extend(0..1000u32);
        assert!(
            matches!(result, Err(Error::TooLarge { max, .. }) if max == first + 10),
            "{result:?}"
        );
        assert_eq!(f.num_layers(), 1);
        assert!(matches!(
            ScalableBloomFilter::builder()
                .capacity(100)
                .max_bits(10)
                .build(),
            Err(Error::TooLarge { .. })
        ));
    }

    #[test]
    fn a_tiny_fpp_whose_layers_need_more_than_64_hashes_builds_grows_and_round_trips() {
        // `ScalableBloomFilter::with_capacity(10, 1e-300)` panicked (a debug assertion: the
        // layer's shape, from the plain formulas, was not the m its builder sizes for k
        // capped at 64), and in a release build its file did not load again.
        let mut f = ScalableBloomFilter::with_capacity(10, 1e-300).unwrap();
        for i in 0..40u32 {
            assert_eq!(f.insert(&i), Ok(true), "{i}");
        }
        assert!(f.num_layers() > 1);
        assert!((0..40u32).all(|i| f.contains(&i)));
        let copy = ScalableBloomFilter::from_bytes(&f.to_bytes()).unwrap();
        assert_eq!(copy, f);
    }

    #[test]
    fn growth_past_the_crate_limit_is_an_error_not_a_panic() {
        // A first layer of about 2³⁸ bits: the third alone would pass 2⁴⁰ bits. Checked
        // without allocating by asking for the shapes directly.
        let n0 = (1u64 << 38) / 10;
        let e = 0.01;
        let total: u64 = (0..2)
            .map(|i| layer_shape(n0, e, 2, 0.5, i).unwrap().num_bits)
            .sum();
        assert!(total < MAX_NUM_BITS);
        assert!(matches!(
            layer_shape(n0, e, 2, 0.5, 2),
            Err(Error::CapacityTooLarge { .. })
        ));
        assert!(matches!(
            layer_shape(u64::MAX / 2, e, 4, 0.5, 1),
            Err(Error::SizeOverflow { .. })
        ));
        assert!(matches!(
            layer_shape(10, e, 2, 1e-300, 3),
            Err(Error::UnreachableFpp {
                kind: Kind::Scalable,
                ..
            })
        ));
    }

    #[test]
    fn degenerate_parameters_are_errors() {
        let b = || ScalableBloomFilter::builder().capacity(10);
        assert_eq!(
            ScalableBloomFilter::builder().build().unwrap_err(),
            Error::ZeroCapacity
        );
        for s in [0, 1, 3, 8] {
            assert!(matches!(
                b().growth_factor(s).build(),
                Err(Error::InvalidParameter {
                    parameter: "growth factor",
                    ..
                })
            ));
        }
        for r in [0.0, 1.0, -0.5, 2.0, f64::NAN] {
            assert!(matches!(
                b().tightening_ratio(r).build(),
                Err(Error::InvalidParameter {
                    parameter: "tightening ratio",
                    ..
                })
            ));
        }
        for e in [0.0, 1.0, f64::NAN, -1.0] {
            assert!(matches!(b().fpp(e).build(), Err(Error::InvalidFpp(_))));
        }
        assert!(matches!(
            b().max_layers(0).build(),
            Err(Error::InvalidParameter { .. })
        ));
        assert_eq!(b().max_bits(0).build().unwrap_err(), Error::ZeroBits);
        assert!(matches!(
            b().max_bits(u64::MAX).build(),
            Err(Error::TooLarge { .. })
        ));
        assert!(matches!(
            ScalableBloomFilter::with_capacity(u64::MAX, 0.01),
            Err(Error::CapacityTooLarge {
                capacity: u64::MAX,
                ..
            })
        ));
    }

    #[test]
    fn clear_returns_to_one_empty_layer() {
        let mut f = ScalableBloomFilter::with_capacity(10, 0.01).unwrap();
        f.try_extend(0..100u32).unwrap();
        assert!(f.num_layers() > 1);
        f.clear();
        assert_eq!(f, ScalableBloomFilter::with_capacity(10, 0.01).unwrap());
        assert!(Filter::is_empty(&f));
    }

    #[test]
    fn counts_and_estimates_add_up_over_layers() {
        let mut f = ScalableBloomFilter::with_capacity(1000, 0.01).unwrap();
        f.try_extend(0..20_000u32).unwrap();
        let n = Filter::len(&f);
        assert!(n > 19_800 && n <= 20_000, "{n}");
        let est = f.estimated_len();
        assert!((est - n as f64).abs() < n as f64 * 0.02, "{est} vs {n}");
        assert_eq!(Filter::capacity(&f), 1000 * 31);
        assert!(f.expected_fpp() < 0.01);
        assert_eq!(
            f.memory_bytes(),
            f.layers().iter().map(|l| l.memory_bytes()).sum::<usize>()
        );
        let props = f.properties();
        let get = |k| props.iter().find(|(l, _)| *l == k).unwrap().1.clone();
        assert_eq!(get("layers"), "5");
        assert_eq!(get("layer capacities"), "1000, 2000, 4000, 8000, 16000");
        assert_eq!(get("max layers"), "unlimited");
    }

    #[test]
    fn debug_shows_the_parameters_not_the_bits() {
        let f = ScalableBloomFilter::with_capacity(1000, 0.01).unwrap();
        let s = format!("{f:?}");
        for needle in [
            "fpp: 0.01",
            "initial_capacity: 1000",
            "growth: 2",
            "tightening: 0.5",
            "num_layers: 1",
        ] {
            assert!(s.contains(needle), "{s}");
        }
        assert!(s.len() < 400, "{s}");
    }

    #[test]
    fn round_trip_keeps_every_layer() {
        let mut f = ScalableBloomFilter::builder()
            .capacity(50)
            .fpp(0.02)
            .max_layers(9)
            .seed(7)
            .build()
            .unwrap();
        f.try_extend(0..1000u32).unwrap();
        let back = ScalableBloomFilter::from_bytes(&f.to_bytes()).unwrap();
        assert_eq!(back, f);
    }

    #[test]
    fn try_extend_stops_at_the_first_item_that_does_not_fit() {
        let mut f = ScalableBloomFilter::builder()
            .capacity(10)
            .max_layers(1)
            .build()
            .unwrap();
        let err = f.try_extend(0..100u32).unwrap_err();
        assert!(matches!(err, Error::Full { .. }), "{err}");
        // The ten that fit are in; the rest are not (the one layer is full).
        assert_eq!(Filter::len(&f), 10);
        assert!((0..10u32).all(|i| f.contains(&i)));
        assert_eq!(f.try_insert(&1000u32), Err(err));
    }
}
