//! The batch calls' software pipeline: each item is *located* (hashed, its cache line
//! prefetched) a fixed number of items before it is *used* (tested or set).
//!
//! A query whose line is in main memory waits about 100 ns for it; the CPU can have a
//! couple of dozen such reads under way at once. Locating a whole group and then using it
//! (what the batch calls did before) keeps the reads in flight only while the group is
//! being located: the group's uses then wait for the slowest of its reads, and the next
//! group's reads start only after that. Here the window slides by one item: when item j
//! is used, items j + 1 … j + W − 1 are already on their way and item j + W is sent, so
//! about W reads are always in flight.
//!
//! W was chosen by measurement (`BLOOMKIT_BENCH_N=100000000 BLOOMKIT_BENCH_FPP=0.01
//! BLOOMKIT_BENCH_ONLY='u64 fast' cargo bench -p bloomkit --bench peers` with [`WINDOW`] set
//! to each value; 2-core AMD EPYC, filters of 114–120 MiB, a random-read floor of 4.6 ns;
//! the numbers are the batch-query columns): the blocked filter's
//! batch queries took 18.7, 12.5, 8.8, 8.4 and 7.9 ns for W = 8, 16, 32, 64 and 128, the
//! split-block filter's 16.9, 11.7, 7.9, 6.2 and 6.2 ns (the groups of 16 used before:
//! 17–21 and 16–22 ns). In the caches (n = 10⁶ and 10⁷) W = 16 and W = 64 measured the
//! same within 0.1 ns for the `u64` paths.
//!
//! Items are used in their order, so a batch of inserts leaves the filter as the single
//! inserts do and counts the same changes.

/// Inputs located ahead of the one being used.
pub const WINDOW: usize = 64;

/// What a batch call does with each input: *locate* it (hash it, prefetch its line), then,
/// a window of inputs later, *use* it (test or set it).
///
/// Implementations mark both methods `#[inline(always)]`. The pipeline runs inside the
/// kernels' `#[target_feature]` function ([`arch::dispatch`](crate::arch::dispatch)), and
/// only code inlined into that function is compiled with its features: a closure would be
/// compiled on its own, without them, and call its kernel out of line (measured: the blocked
/// filter's batch queries at n = 10⁶ took 5.5 ns with closures here against 3.1 ns).
pub(crate) trait Stages<Input> {
    /// What both stages need: the filter's blocks when `used` writes them, else the answers.
    type State: ?Sized;
    /// What `locate` hands to `used`: the block and the bits the kernel takes.
    type Located: Copy + Default;
    /// Hashes and prefetches.
    fn locate(&self, state: &Self::State, input: Input) -> Self::Located;
    /// Tests or sets.
    fn used(&mut self, state: &mut Self::State, located: Self::Located);
}

/// A batch query's answers in a new vector: `fill` (a kind's `contains_batch_into`) writes
/// them into a vector made for `len` of them.
#[inline]
pub(crate) fn answers(len: usize, fill: impl FnOnce(&mut Vec<bool>)) -> Vec<bool> {
    let mut out = Vec::with_capacity(len);
    fill(&mut out);
    out
}

/// Empties `out` and makes room for `len` answers: what a `contains_batch_into` does first.
#[inline]
pub(crate) fn ready(out: &mut Vec<bool>, len: usize) {
    out.clear();
    out.reserve(len);
}

/// For every input in order: `stages.locate`, then, [`WINDOW`] inputs later,
/// `stages.used`.
#[inline(always)]
pub(crate) fn pipeline<In, P: Stages<In>>(
    stages: &mut P,
    state: &mut P::State,
    inputs: impl IntoIterator<Item = In>,
) {
    const W: usize = WINDOW;
    let mut inputs = inputs.into_iter();
    let mut ring = [P::Located::default(); W];
    let mut filled = 0;
    for slot in ring.iter_mut() {
        match inputs.next() {
            Some(input) => {
                *slot = stages.locate(state, input);
                filled += 1;
            }
            None => break,
        }
    }
    let mut oldest = 0;
    for input in inputs {
        let next = stages.locate(state, input);
        stages.used(state, std::mem::replace(&mut ring[oldest], next));
        oldest = (oldest + 1) % W;
    }
    if filled < W {
        for &item in &ring[..filled] {
            stages.used(state, item);
        }
    } else {
        for i in 0..W {
            stages.used(state, ring[(oldest + i) % W]);
        }
    }
}

/// `hashing`, unless its scheme is the seeded one, which hashes the item once per position
/// and so has no one digest to go by: the [`ByDigest::digest_hashing`] of most kinds.
#[inline]
pub(crate) fn unless_seeded(hashing: crate::hash::Hashing) -> Option<crate::hash::Hashing> {
    (hashing.scheme != crate::hash::IndexScheme::SeededHashes).then_some(hashing)
}

/// A kind whose query and insert, under a digest index scheme, need nothing of the item but
/// its digest: the counting, variable-increment, deletable, stable, spectral and generalized
/// filters. Their batch calls go through the window by digests ([`contains_by_digest_in`],
/// [`insert_by_digest_in`]) at the k their window by positions ([`ByPositions`]) does not
/// take: each item is hashed once and the words of its positions prefetched a window
/// ahead, then the kind's own single-item step runs on the digest, in the items' order, so
/// the filter ends as after the single calls.
pub(crate) trait ByDigest {
    /// The hashing whose digest the steps take, or `None` when the batch must run the
    /// single calls instead (the seeded scheme, which hashes once per position; a stored
    /// scheme that needs the item's bytes).
    /// Most kinds answer [`unless_seeded`]`(hashing)`.
    fn digest_hashing(&self) -> Option<crate::hash::Hashing>;
    /// The bits of the structure the steps read (cells times their width).
    fn batch_bits(&self) -> u64;
    /// Whether that structure is small enough for the caches, so that the batch runs the
    /// single calls' loop (see [`batch_cached_max_bits`]).
    ///
    /// [`batch_cached_max_bits`]: crate::bloom::batch_cached_max_bits
    fn batch_in_cache(&self) -> bool {
        self.batch_bits() <= crate::bloom::batch_cached_max_bits()
    }
    /// Prefetches the words a query of the item with this digest reads.
    fn prefetch_query(&self, digest: u128);
    /// Prefetches the words an insert of the item with this digest touches, when
    /// `pending` inserts run before it (a kind whose insert also touches places drawn from
    /// its own generator — the stable filter's decrements — finds them from that).
    fn prefetch_insert(&self, digest: u128, pending: u64) {
        let _ = pending;
        self.prefetch_query(digest);
    }
    /// The query of the item with this digest.
    fn contains_digest(&self, digest: u128) -> bool;
    /// The insert of the item with this digest; `true` when it was certainly new.
    fn insert_digest(&mut self, digest: u128) -> bool;
    /// Before a batch of `items` inserts: advises huge pages for the array they write when
    /// they touch most of its pages — the storage's `advise_bulk_write` with `items` times
    /// the cells one insert writes (the huge-page policy, in [`arch`](crate::arch)).
    fn advise_batch_insert(&mut self, items: u64);
}

/// The batch queries of a [`ByDigest`] kind: the filter and whether it reads by digests.
struct DigestQueries<'a, F>(&'a F, crate::hash::Hashing);

impl<F: ByDigest, I: crate::hash::Item> Stages<&I> for DigestQueries<'_, F> {
    type State = Vec<bool>;
    type Located = u128;
    #[inline(always)]
    fn locate(&self, _: &Vec<bool>, item: &I) -> u128 {
        let digest = item.with_bytes(|bytes| self.1.digest(bytes));
        self.0.prefetch_query(digest);
        digest
    }
    #[inline(always)]
    fn used(&mut self, out: &mut Vec<bool>, digest: u128) {
        out.push(self.0.contains_digest(digest));
    }
}

/// The batch inserts of a [`ByDigest`] kind: the hashing, the inputs located and used so
/// far (their difference is what runs before the one being located), the count of new items.
struct DigestInserts {
    hashing: crate::hash::Hashing,
    located: std::cell::Cell<u64>,
    used: u64,
    new: u64,
}

impl<F: ByDigest, I: crate::hash::Item> Stages<&I>
    for (DigestInserts, std::marker::PhantomData<F>)
{
    type State = F;
    type Located = u128;
    #[inline(always)]
    fn locate(&self, filter: &F, item: &I) -> u128 {
        let stages = &self.0;
        let digest = item.with_bytes(|bytes| stages.hashing.digest(bytes));
        let j = stages.located.get();
        filter.prefetch_insert(digest, j - stages.used);
        stages.located.set(j + 1);
        digest
    }
    #[inline(always)]
    fn used(&mut self, filter: &mut F, digest: u128) {
        self.0.used += 1;
        self.0.new += u64::from(filter.insert_digest(digest));
    }
}

/// The answers of a [`ByDigest`] kind's query for every item, appended to `out` (cleared
/// first): through the window by digests unless `in_cache` (the caller decides the
/// filter's size; tests send small filters through the window), or `single` item by item
/// when the kind says so. What [`contains_by_positions`] runs for the k it has no window
/// of positions for.
#[inline(always)]
fn contains_by_digest_in<F: ByDigest, I: crate::hash::Item>(
    filter: &F,
    items: &[I],
    out: &mut Vec<bool>,
    single: impl Fn(&F, &I) -> bool,
    in_cache: bool,
) {
    ready(out, items.len());
    match filter.digest_hashing() {
        Some(hashing) if !in_cache => pipeline(&mut DigestQueries(filter, hashing), out, items),
        _ => out.extend(items.iter().map(|item| single(filter, item))),
    }
}

/// Inserts every item of a [`ByDigest`] kind in order, as `single` (the kind's insert)
/// would, through the window by digests where the kind reads by digests and not
/// `in_cache` (as [`contains_by_digest_in`]); returns how many were certainly new. What
/// [`insert_by_positions`] runs for the k it has no window of positions for.
#[inline(always)]
fn insert_by_digest_in<F: ByDigest, I: crate::hash::Item>(
    filter: &mut F,
    items: &[I],
    mut single: impl FnMut(&mut F, &I) -> bool,
    in_cache: bool,
) -> u64 {
    match filter.digest_hashing() {
        Some(hashing) if !in_cache => {
            let mut stages = (
                DigestInserts {
                    hashing,
                    located: std::cell::Cell::new(0),
                    used: 0,
                    new: 0,
                },
                std::marker::PhantomData::<F>,
            );
            pipeline(&mut stages, filter, items);
            stages.0.new
        }
        _ => items
            .iter()
            .map(|item| u64::from(single(filter, item)))
            .sum(),
    }
}

/// A [`ByDigest`] kind whose steps need nothing of the digest but the item's k positions
/// in `[0, m)` (and, for the variable-increment filter, a word of the digest besides: its
/// [`Extra`](Self::Extra)): the counting, variable-increment, deletable, stable, spectral
/// (minimum selection, minimal increase) and generalized filters. For the k of ε = 5%, 1%
/// and 0.1% (the kind's [`WINDOW_KS`](Self::WINDOW_KS): 4, 7 and 10 for most, as
/// [`with_common_k`]'s; the variable-increment and generalized filters draw other counts
/// of positions at those ε) their batches go through [`insert_by_positions`] /
/// [`contains_by_positions`]: each item is hashed once, its k positions computed once into
/// its slot of the ring (not derived again for the step, as the window by digests does)
/// and prefetched, and the step takes them from the slot, as the classic filter's own
/// window does. Any other k takes the window by digests.
///
/// [`with_common_k`]: crate::hash::with_common_k
pub(crate) trait ByPositions: ByDigest {
    /// The k that take the window by positions, as a mask (bit k set), each one a window
    /// compiled for that k; only those among the k there is a window for count (3, 4, 5, 7,
    /// 8, 10, 11: [`WINDOW_ARMS`]).
    const WINDOW_KS: u32 = 1 << 4 | 1 << 7 | 1 << 10;
    /// What the step needs of the digest besides the positions, kept in the item's slot
    /// with them (`()` for every kind but the variable-increment filter, whose increments
    /// come from the digest).
    type Extra: Copy + Default;
    /// The [`Extra`](Self::Extra) of the item with this digest.
    #[inline(always)]
    fn extra(&self, digest: u128) -> Self::Extra {
        let _ = digest;
        Self::Extra::default()
    }
    /// k, and m: the range the positions are drawn from.
    fn position_range(&self) -> (u32, u64);
    /// Prefetches the words a query of the item at these positions reads.
    fn prefetch_query_at(&self, positions: &[u64]);
    /// Prefetches the words an insert at these positions touches when `pending` inserts
    /// run before it (as [`ByDigest::prefetch_insert`]).
    fn prefetch_insert_at(&self, positions: &[u64], pending: u64) {
        let _ = pending;
        self.prefetch_query_at(positions);
    }
    /// The query of the item at these positions (what `contains` answers).
    fn contains_at(&self, positions: &[u64], extra: Self::Extra) -> bool;
    /// The insert of the item at these positions (what `insert` does, counts included);
    /// `true` when it was certainly new.
    fn insert_at(&mut self, positions: &[u64], extra: Self::Extra) -> bool;
}

/// The two [`ByPositions`] methods that read the same in every kind whose positions index
/// one array from 0 — its counters, cells or bits, a `PackedCounters` or a `BitVec` (both
/// have `len` and `prefetch_all`) — written once: inside `impl ByPositions for T`,
/// `one_array_positions!(array, k)` gives `position_range`, k and the length of the field
/// `array`, and `prefetch_query_at`, that array's `prefetch_all` of the positions. `k` names
/// the field that holds k, or is a sum of fields (`set_hashes + reset_hashes`: the
/// generalized filter's k₁ + k₀). A kind whose positions land elsewhere (the deletable
/// filter's, past its region bits) writes both out.
macro_rules! one_array_positions {
    ($array:ident, $k:ident $(+ $more:ident)*) => {
        fn position_range(&self) -> (u32, u64) {
            (self.$k $(+ self.$more)*, self.$array.len())
        }
        #[inline(always)]
        fn prefetch_query_at(&self, positions: &[u64]) {
            self.$array.prefetch_all(positions);
        }
    };
}
pub(crate) use one_array_positions;

/// [`ByDigest::prefetch_query`] as it reads in every kind whose positions index one array
/// from 0 with `hashing`'s positions of the digest (the counting, spectral, stable and
/// generalized filters), written once: inside `impl ByDigest for T`,
/// `one_array_prefetch_query!(array, k)`, with `array` and `k` as for
/// [`one_array_positions!`], prefetches each position's word of `array` (its `prefetch`).
/// A kind with a faster path for the default scheme, or positions elsewhere, writes it out.
macro_rules! one_array_prefetch_query {
    ($array:ident, $k:ident $(+ $more:ident)*) => {
        #[inline(always)]
        fn prefetch_query(&self, digest: u128) {
            let (k, m) = (self.$k $(+ self.$more)*, self.$array.len());
            self.hashing
                .positions_with_digest(&[], digest, k, m)
                .for_each(|p| self.$array.prefetch(p));
        }
    };
}
pub(crate) use one_array_prefetch_query;

/// The `K` positions in `[0, m)` of the item with this digest under `hashing` (a digest
/// scheme), into `out`: exactly [`Hashing::positions`](crate::hash::Hashing::positions)'s.
/// The default scheme through [`EnhancedDouble`](crate::hash::EnhancedDouble), inlined and
/// unrolled for a constant `K`; the others through `Positions`' fold.
#[inline(always)]
pub(crate) fn positions_into<const K: usize>(
    hashing: crate::hash::Hashing,
    digest: u128,
    m: u64,
    out: &mut [u64; K],
) {
    if hashing.scheme == crate::hash::IndexScheme::EnhancedDoubleHashing {
        for (at, p) in out
            .iter_mut()
            .zip(crate::hash::EnhancedDouble::new(digest, K as u32, m))
        {
            *at = p;
        }
    } else {
        hashing
            .positions_with_digest(&[], digest, K as u32, m)
            .fold(0, |i, p| {
                out[i] = p;
                i + 1
            });
    }
}

/// Inserts every item of a [`ByPositions`] kind in order, as `single` (the kind's insert)
/// would: through the window by positions for the kind's [`ByPositions::WINDOW_KS`] past
/// the caches, else as [`insert_by_digest_in`]. Returns how many were certainly new.
#[inline]
pub(crate) fn insert_by_positions<F: ByPositions, I: crate::hash::Item>(
    filter: &mut F,
    items: &[I],
    single: impl FnMut(&mut F, &I) -> bool,
) -> u64 {
    filter.advise_batch_insert(items.len() as u64);
    let in_cache = filter.batch_in_cache();
    insert_by_positions_in(filter, items, single, in_cache)
}

/// The k `by_window_k!` has a window for, as a mask: a k of a kind's
/// [`ByPositions::WINDOW_KS`] outside it takes the window by digests.
const WINDOW_ARMS: u32 = 1 << 3 | 1 << 4 | 1 << 5 | 1 << 7 | 1 << 8 | 1 << 10 | 1 << 11;

/// Whether the kind takes the window by positions at this k.
#[inline(always)]
fn takes<F: ByPositions>(k: u32) -> bool {
    k < 32 && F::WINDOW_KS & WINDOW_ARMS & (1 << k) != 0
}

/// `$go::<K>` for the k among the kinds' window k's (a constant in each arm, so that the
/// window is compiled, unrolled, for it) that `F` takes, else `$otherwise`.
macro_rules! by_window_k {
    ($f:ty, $k:expr, $go:ident($($arg:expr),*), $otherwise:expr) => {
        match $k {
            7 if takes::<$f>(7) => $go::<7, _, _>($($arg),*),
            10 if takes::<$f>(10) => $go::<10, _, _>($($arg),*),
            4 if takes::<$f>(4) => $go::<4, _, _>($($arg),*),
            5 if takes::<$f>(5) => $go::<5, _, _>($($arg),*),
            8 if takes::<$f>(8) => $go::<8, _, _>($($arg),*),
            11 if takes::<$f>(11) => $go::<11, _, _>($($arg),*),
            3 if takes::<$f>(3) => $go::<3, _, _>($($arg),*),
            _ => $otherwise,
        }
    };
}

/// [`insert_by_positions`] with the filter's size decided by the caller.
#[inline(always)]
pub(crate) fn insert_by_positions_in<F: ByPositions, I: crate::hash::Item>(
    filter: &mut F,
    items: &[I],
    single: impl FnMut(&mut F, &I) -> bool,
    in_cache: bool,
) -> u64 {
    match filter.digest_hashing() {
        Some(hashing) if !in_cache => by_window_k!(
            F,
            filter.position_range().0,
            insert_window(filter, hashing, items),
            insert_by_digest_in(filter, items, single, in_cache)
        ),
        _ => insert_by_digest_in(filter, items, single, in_cache),
    }
}

/// The answers of a [`ByPositions`] kind's query for every item, into `out` (cleared
/// first): through the window by positions for the kind's [`ByPositions::WINDOW_KS`]
/// past the caches, else as [`contains_by_digest_in`].
#[inline]
pub(crate) fn contains_by_positions<F: ByPositions, I: crate::hash::Item>(
    filter: &F,
    items: &[I],
    out: &mut Vec<bool>,
    single: impl Fn(&F, &I) -> bool,
) {
    contains_by_positions_in(filter, items, out, single, filter.batch_in_cache())
}

/// [`contains_by_positions`] with the filter's size decided by the caller.
#[inline(always)]
pub(crate) fn contains_by_positions_in<F: ByPositions, I: crate::hash::Item>(
    filter: &F,
    items: &[I],
    out: &mut Vec<bool>,
    single: impl Fn(&F, &I) -> bool,
    in_cache: bool,
) {
    match filter.digest_hashing() {
        Some(hashing) if !in_cache && takes::<F>(filter.position_range().0) => {
            ready(out, items.len());
            by_window_k!(
                F,
                filter.position_range().0,
                contains_window(filter, hashing, items, out),
                unreachable!("a k the kind takes has a window")
            )
        }
        _ => contains_by_digest_in(filter, items, out, single, in_cache),
    }
}

/// The window by positions for a k known at compile time: item j is hashed, its `K`
/// positions written into its slot of a ring of [`WINDOW`] slots (with the kind's
/// [`ByPositions::Extra`] of its digest) and prefetched; when the slot comes round again
/// (`WINDOW` items later), `each` gets the filter, the positions and the extra, and the
/// slot takes the next item. Items are used in their order.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn positions_window<const K: usize, S, E: Copy + Default, I: crate::hash::Item>(
    state: &mut S,
    hashing: crate::hash::Hashing,
    m: u64,
    items: &[I],
    extra: impl Fn(&S, u128) -> E,
    mut locate: impl FnMut(&S, &[u64; K], u64),
    mut each: impl FnMut(&mut S, &[u64; K], E),
) {
    const W: usize = WINDOW;
    let mut ring = [([0u64; K], E::default()); W];
    let mut fill = |state: &S, item: &I, slot: &mut ([u64; K], E), pending: u64| {
        let digest = item.with_bytes(|bytes| hashing.digest(bytes));
        positions_into(hashing, digest, m, &mut slot.0);
        slot.1 = extra(state, digest);
        locate(state, &slot.0, pending);
    };
    // One loop, with one call of each stage, so that both are inlined into it (two loops
    // for the first window and the last, as before, called each stage twice, out of line:
    // about 30 instructions an item of calls, saved registers and arguments). Step j uses
    // item j − W, then fills its slot with item j; the `min(j, W − 1)` items before item j
    // in the ring run before it.
    let n = items.len();
    for j in 0..n + W {
        let slot = &mut ring[j % W];
        if j >= W && j - W < n {
            each(state, &slot.0, slot.1);
        }
        if let Some(item) = items.get(j) {
            fill(state, item, slot, j.min(W - 1) as u64);
        }
    }
}

#[inline(always)]
fn insert_window<const K: usize, F: ByPositions, I: crate::hash::Item>(
    filter: &mut F,
    hashing: crate::hash::Hashing,
    items: &[I],
) -> u64 {
    let m = filter.position_range().1;
    let mut new = 0;
    positions_window::<K, F, F::Extra, I>(
        filter,
        hashing,
        m,
        items,
        |f, digest| f.extra(digest),
        |f, ps, pending| f.prefetch_insert_at(ps, pending),
        |f, ps, e| new += u64::from(f.insert_at(ps, e)),
    );
    new
}

#[inline(always)]
fn contains_window<const K: usize, F: ByPositions, I: crate::hash::Item>(
    filter: &F,
    hashing: crate::hash::Hashing,
    items: &[I],
    out: &mut Vec<bool>,
) {
    let m = filter.position_range().1;
    let mut state = (filter, out);
    positions_window::<K, _, F::Extra, I>(
        &mut state,
        hashing,
        m,
        items,
        |(f, _), digest| f.extra(digest),
        |(f, _), ps, _| f.prefetch_query_at(ps),
        |(f, out), ps, e| out.push(f.contains_at(ps, e)),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records the order of both stages: `located` counts what `locate` produced (a
    /// `Cell`, since `locate` gets the state shared), `seen` what `used` received.
    struct Recorder {
        n: usize,
        window: usize,
        located: std::cell::Cell<usize>,
        seen: Vec<usize>,
    }

    impl Stages<usize> for Recorder {
        type State = ();
        type Located = usize;
        fn locate(&self, _: &(), j: usize) -> usize {
            assert_eq!(j, self.located.get(), "n {}: located out of order", self.n);
            self.located.set(j + 1);
            j
        }
        fn used(&mut self, _: &mut (), j: usize) {
            let ahead = (j + self.window).min(self.n);
            assert!(
                self.located.get() >= ahead,
                "n {}: {j} used too early",
                self.n
            );
            self.seen.push(j);
        }
    }

    /// Every input is located once and used once, both in order, for every length around
    /// the window (shorter, equal, one more, several windows and a remainder), and input
    /// j + W − 1 has been located before input j is used.
    #[test]
    fn every_input_is_used_once_in_order_after_the_window_is_located() {
        for n in (0..3 * WINDOW + 2).chain([1000]) {
            let mut recorder = Recorder {
                n,
                window: WINDOW,
                located: std::cell::Cell::new(0),
                seen: Vec::new(),
            };
            pipeline(&mut recorder, &mut (), 0..n);
            assert_eq!(recorder.located.get(), n);
            assert_eq!(recorder.seen, (0..n).collect::<Vec<_>>(), "n = {n}");
        }
    }

    use crate::codec::Persist;
    use crate::hash::{Hashing, IndexScheme};
    use crate::spectral::SpectralMethod;
    use crate::vi_counting::IncrementHashing;
    use crate::{
        CountingBloomFilter, DeletableBloomFilter, GeneralizedBloomFilter, SpectralBloomFilter,
        StableBloomFilter, VariableIncrementBloomFilter,
    };

    /// Every [`ByDigest`] kind's batch through the window (forced, whatever its size)
    /// against its single calls: the same count of new items, the same filter byte for
    /// byte, the same answers, and every inserted item found (the kinds that forget — stable,
    /// generalized — excepted from the last).
    fn window_matches_single_calls<F: ByDigest + Persist + Clone>(
        filter: F,
        items: &[u64],
        probes: &[u64],
        insert: impl Fn(&mut F, &u64) -> bool,
        contains: impl Fn(&F, &u64) -> bool,
        forgets: bool,
    ) -> Result<(), proptest::test_runner::TestCaseError> {
        let mut single = filter.clone();
        let new_single: u64 = items
            .iter()
            .map(|i| u64::from(insert(&mut single, i)))
            .sum();
        let mut windowed = filter;
        let new_windowed = insert_by_digest_in(&mut windowed, items, &insert, false);
        proptest::prop_assert_eq!(new_windowed, new_single);
        proptest::prop_assert!(windowed.to_bytes() == single.to_bytes(), "filters differ");
        let mut answers = Vec::new();
        contains_by_digest_in(&windowed, probes, &mut answers, &contains, false);
        let expected: Vec<bool> = probes.iter().map(|p| contains(&single, p)).collect();
        proptest::prop_assert_eq!(&answers, &expected);
        if !forgets {
            contains_by_digest_in(&windowed, items, &mut answers, &contains, false);
            proptest::prop_assert!(answers.iter().all(|&a| a), "a false negative");
        }
        Ok(())
    }

    /// A [`ByPositions`] kind's batches through the window by positions (forced, whatever
    /// its size, at every k: 4, 7 and 10 take the ring of positions, any other the window
    /// by digests) against its single calls, as [`window_matches_single_calls`].
    fn positions_window_matches_single_calls<F: ByPositions + Persist + Clone>(
        filter: F,
        items: &[u64],
        probes: &[u64],
        insert: impl Fn(&mut F, &u64) -> bool,
        contains: impl Fn(&F, &u64) -> bool,
        forgets: bool,
    ) -> Result<(), proptest::test_runner::TestCaseError> {
        let mut single = filter.clone();
        let new_single: u64 = items
            .iter()
            .map(|i| u64::from(insert(&mut single, i)))
            .sum();
        let mut windowed = filter;
        let new_windowed = insert_by_positions_in(&mut windowed, items, &insert, false);
        proptest::prop_assert_eq!(new_windowed, new_single);
        proptest::prop_assert!(windowed.to_bytes() == single.to_bytes(), "filters differ");
        let mut answers = vec![true; 3]; // cleared first
        contains_by_positions_in(&windowed, probes, &mut answers, &contains, false);
        let expected: Vec<bool> = probes.iter().map(|p| contains(&single, p)).collect();
        proptest::prop_assert_eq!(&answers, &expected);
        if !forgets {
            contains_by_positions_in(&windowed, items, &mut answers, &contains, false);
            proptest::prop_assert_eq!(answers.len(), items.len());
            proptest::prop_assert!(answers.iter().all(|&a| a), "a false negative");
        }
        Ok(())
    }

    /// Every k a kind asks the window by positions for has one (a k outside
    /// [`WINDOW_ARMS`] would silently take the window by digests), and each kind asks for
    /// the three k its sizing gives at ε = 5%, 1% and 0.1%.
    #[test]
    fn every_window_k_a_kind_asks_for_has_a_window() {
        fn ks<F: ByPositions>() -> u32 {
            assert_eq!(
                F::WINDOW_KS & !WINDOW_ARMS,
                0,
                "{}",
                std::any::type_name::<F>()
            );
            F::WINDOW_KS
        }
        let common = 1 << 4 | 1 << 7 | 1 << 10;
        assert_eq!(ks::<CountingBloomFilter>(), common);
        assert_eq!(ks::<DeletableBloomFilter>(), common);
        assert_eq!(ks::<StableBloomFilter>(), common);
        assert_eq!(ks::<SpectralBloomFilter>(), common);
        let sized = |fpp: f64| {
            let vi = VariableIncrementBloomFilter::with_capacity(1000, fpp).unwrap();
            let g = GeneralizedBloomFilter::with_capacity(1000, fpp).unwrap();
            (vi.num_hashes(), g.set_hashes() + g.reset_hashes())
        };
        for fpp in [0.05, 0.01, 0.001] {
            let (vi, generalized) = sized(fpp);
            assert_ne!(
                ks::<VariableIncrementBloomFilter>() & 1 << vi,
                0,
                "vi at {fpp}"
            );
            assert_ne!(
                ks::<GeneralizedBloomFilter>() & 1 << generalized,
                0,
                "{fpp}"
            );
        }
        assert_eq!(ks::<VariableIncrementBloomFilter>().count_ones(), 3);
        assert_eq!(ks::<GeneralizedBloomFilter>().count_ones(), 3);
    }

    fn scheme(i: usize) -> IndexScheme {
        [
            IndexScheme::EnhancedDoubleHashing,
            IndexScheme::DoubleHashing,
            IndexScheme::GuavaMitz64,
            IndexScheme::SeededHashes,
        ][i]
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(48))]

        /// The batches of the counting, variable-increment (all three increment sources, two
        /// counter widths), deletable, stable, spectral (all three methods) and generalized
        /// filters through the window by positions leave the filter as the single calls do
        /// and answer as they do, at every k the kinds have a ring of positions for (4, 7
        /// and 10; the variable-increment filter's 3, 5 and 7; the generalized filter's
        /// k₁ + 1 = 5, 8 and 11) and others (the window by digests), under four index
        /// schemes (the seeded one runs the single calls), any seed, from a few cells up (so
        /// that an item's positions repeat and counters saturate), with repeated items,
        /// batches shorter and longer than the window.
        #[test]
        fn batches_through_the_window_by_positions_match_the_single_calls(
            cells in 16u64..3_000,
            k in proptest::sample::select(vec![4u32, 7, 10, 3, 5, 12]),
            scheme_at in 0usize..4,
            seed in proptest::num::u64::ANY,
            items in proptest::collection::vec(0u64..300, 0..300),
            probes in proptest::collection::vec(proptest::num::u64::ANY, 0..200),
        ) {
            let (scheme, m) = (scheme(scheme_at), cells);
            positions_window_matches_single_calls(
                DeletableBloomFilter::builder().num_bits(m).num_hashes(k).index_scheme(scheme).seed(seed).build().unwrap(),
                &items, &probes, |f, i| f.insert(i), |f, i| f.contains(i), false)?;
            positions_window_matches_single_calls(
                StableBloomFilter::builder().num_cells(m).num_hashes(k).decrements(m.min(20)).index_scheme(scheme).seed(seed).build().unwrap(),
                &items, &probes, |f, i| f.insert(i), |f, i| f.contains(i), true)?;
            for method in [SpectralMethod::MinimumSelection, SpectralMethod::MinimalIncrease, SpectralMethod::RecurringMinimum] {
                for width in [16, 2] {
                    positions_window_matches_single_calls(
                        SpectralBloomFilter::builder().num_counters(m).num_hashes(k).counter_width(width)
                            .method(method).index_scheme(scheme).seed(seed).build().unwrap(),
                        &items, &probes, |f, i| f.insert(i), |f, i| f.contains(i), false)?;
                }
            }
            for width in [4, 1] {
                positions_window_matches_single_calls(
                    CountingBloomFilter::builder().num_counters(m).num_hashes(k).counter_width(width)
                        .index_scheme(scheme).seed(seed).build().unwrap(),
                    &items, &probes, |f, i| f.insert(i), |f, i| f.contains(i), false)?;
            }
            for source in [IncrementHashing::PackedDigest, IncrementHashing::PositionDigest, IncrementHashing::SecondDigest] {
                for width in [8, 4] {
                    positions_window_matches_single_calls(
                        VariableIncrementBloomFilter::builder().num_counters(m).num_hashes(k)
                            .counter_width(width).increment_base(if width == 4 { 2 } else { 4 })
                            .increment_hashing(source).index_scheme(scheme).seed(seed).build().unwrap(),
                        &items, &probes, |f, i| f.insert(i), |f, i| f.contains(i), false)?;
                }
            }
            positions_window_matches_single_calls(
                GeneralizedBloomFilter::builder().num_bits(m).set_hashes(k).reset_hashes(1)
                    .index_scheme(scheme).seed(seed).build().unwrap(),
                &items, &probes, |f, i| f.insert(i), |f, i| f.contains(i), true)?;
            positions_window_matches_single_calls(
                GeneralizedBloomFilter::builder().num_bits(m).set_hashes(k.min(9)).reset_hashes(2)
                    .index_scheme(scheme).seed(seed).build().unwrap(),
                &items, &probes, |f, i| f.insert(i), |f, i| f.contains(i), true)?;
        }

        /// The batch calls of the counting, variable-increment (all three increment sources),
        /// deletable, stable, spectral (all three methods) and generalized filters through the
        /// window by digests leave the filter as the single calls do and answer as they do,
        /// under four index schemes (the seeded one runs the single calls), any seed, any
        /// size from a few counters up, with repeated items.
        #[test]
        fn batches_through_the_window_match_the_single_calls(
            capacity in 1u64..400,
            fpp in proptest::prop_oneof![proptest::strategy::Just(0.01), 0.0005f64..0.3],
            scheme_at in 0usize..4,
            seed in proptest::num::u64::ANY,
            items in proptest::collection::vec(0u64..300, 0..300),
            probes in proptest::collection::vec(proptest::num::u64::ANY, 0..200),
        ) {
            let hashing = Hashing { scheme: scheme(scheme_at), seed, ..Hashing::default() };
            let (n, f, h) = (capacity, fpp, hashing);
            window_matches_single_calls(
                CountingBloomFilter::builder().capacity(n).fpp(f).index_scheme(h.scheme).seed(h.seed).build().unwrap(),
                &items, &probes, |f, i| f.insert(i), |f, i| f.contains(i), false)?;
            for source in [IncrementHashing::PackedDigest, IncrementHashing::PositionDigest, IncrementHashing::SecondDigest] {
                window_matches_single_calls(
                    VariableIncrementBloomFilter::builder().capacity(n).fpp(f).increment_hashing(source)
                        .index_scheme(h.scheme).seed(h.seed).build().unwrap(),
                    &items, &probes, |f, i| f.insert(i), |f, i| f.contains(i), false)?;
            }
            window_matches_single_calls(
                DeletableBloomFilter::builder().capacity(n).fpp(f).index_scheme(h.scheme).seed(h.seed).build().unwrap(),
                &items, &probes, |f, i| f.insert(i), |f, i| f.contains(i), false)?;
            window_matches_single_calls(
                // The stable filter refuses an ε its few cells cannot reach (it would need
                // more decrements per insert than it has cells): from 200 items on it has
                // enough.
                StableBloomFilter::builder().capacity(n + 200).fpp(f).index_scheme(h.scheme).seed(h.seed).build().unwrap(),
                &items, &probes, |f, i| f.insert(i), |f, i| f.contains(i), true)?;
            for method in [SpectralMethod::MinimumSelection, SpectralMethod::MinimalIncrease, SpectralMethod::RecurringMinimum] {
                window_matches_single_calls(
                    SpectralBloomFilter::builder().capacity(n).fpp(f).method(method)
                        .index_scheme(h.scheme).seed(h.seed).build().unwrap(),
                    &items, &probes, |f, i| f.insert(i), |f, i| f.contains(i), false)?;
            }
            window_matches_single_calls(
                GeneralizedBloomFilter::builder().capacity(n).fpp(f).index_scheme(h.scheme).seed(h.seed).build().unwrap(),
                &items, &probes, |f, i| f.insert(i), |f, i| f.contains(i), true)?;
        }
    }
}
