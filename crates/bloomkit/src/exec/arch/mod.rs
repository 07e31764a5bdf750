//! The one place of the crate where `unsafe` is allowed: prefetch hints, SIMD kernels chosen
//! once at run time, huge-page advice for large allocations, and read-only memory maps of
//! filter files ([`mmap`], for [`FilterView`](crate::format::view::FilterView)). Everything here is exposed
//! through safe functions; every `unsafe` block carries a `// SAFETY:` comment.
//!
//! # Kernels
//!
//! Two block layouts have kernels here, each as a **scalar twin** (plain Rust, the reference)
//! and SIMD versions that must give the same answers and set the same bits (property tests in
//! this module and in `tests/suite/kernels.rs` hold them to it):
//!
//! * [`block512`]: the [`BlockedBloomFilter`](crate::BlockedBloomFilter)'s 512-bit block of
//!   eight `u64` words. Bit t of an item goes to word `t mod 8` at the 6-bit field
//!   `(fields >> 6(t mod 8)) & 63` of its round's 64 fields bits. AVX2 builds the mask of a
//!   round with two variable shifts per 256-bit half (`vpsrlvq`, `vpsllvq`); AVX-512 with one
//!   of each over the whole block.
//! * [`block256`]: Parquet's split block, eight `u32` words; word i gets the bit
//!   `(x · salt[i]) >> 27`. AVX2: one `vpmulld`, one shift, one `vpsllvd`.
//!
//! And one hash: [`murmur2x8`], 32-bit MurmurHash2 of one input under eight seeds in one
//! pass (the rows of RedisBloom's sketches), eight states in one AVX2 register.
//!
//! # Choosing a kernel
//!
//! [`simd_level`] detects the CPU once (`is_x86_feature_detected!`) and caches the answer;
//! the kernels dispatch on it. Setting the environment variable `BLOOMKIT_FORCE_SCALAR=1`
//! before the first query forces the scalar twins (the test script runs the kernel tests
//! once that way). A build with `-C target-cpu=native` on a CPU with the features still
//! dispatches at run time, but the scalar twins are then compiled with the same features.
//! Other architectures (aarch64 included) use the scalar twins, which LLVM vectorises where
//! the target has per-lane shifts.
//!
//! # Prefetch and huge pages
//!
//! [`prefetch`] issues `prefetcht0` for an address (x86-64); the batch calls of the
//! classic, blocked and split-block filters prefetch each item's lines a window of items
//! before they test it ([`lookahead`](crate::lookahead)), so that the cache misses overlap.
//! [`zeroed_vec`] allocates large zeroed vectors and, on Linux, advises the kernel to back
//! them with transparent huge pages (`madvise(MADV_HUGEPAGE)`) before the first touch, so
//! that a random probe needs one TLB entry per 2 MiB instead of per 4 KiB. Failure of the
//! advice is silent: the memory works either way.
//! `BLOOMKIT_NO_HUGE_PAGES=1` turns the advice off (to measure its effect).
//!
//! # Memory written once
//!
//! [`calloc_vec`] (and [`zeroed_words`]) take zeroed memory from the allocator: a fresh
//! large block's pages are zeroed by the kernel as they are first touched, where
//! [`zeroed_vec`] writes every zero itself. [`scatter_into`] is a counting sort's scatter into
//! a vector's reserved room, each element written once (the Bloomier construction's bucketing
//! of its keys). Both have written twins that property tests hold them to.

use std::sync::atomic::{AtomicU8, Ordering};

pub mod block256;
pub mod block512;
pub mod mmap;
pub mod murmur2x8;
#[cfg(target_arch = "x86_64")]
mod x86;

/// The instruction-set level the kernels run at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum SimdLevel {
    /// Plain Rust (the scalar twins).
    Scalar = 1,
    /// x86-64 AVX2.
    Avx2 = 2,
    /// x86-64 AVX-512 (F); the 256-bit layouts use their AVX2 kernels.
    Avx512 = 3,
}

impl SimdLevel {
    /// A short name for reports: `scalar`, `avx2`, `avx512`.
    pub fn name(self) -> &'static str {
        match self {
            SimdLevel::Scalar => "scalar",
            SimdLevel::Avx2 => "avx2",
            SimdLevel::Avx512 => "avx512",
        }
    }
}

static LEVEL: AtomicU8 = AtomicU8::new(0);

/// Whether an environment variable is set to something other than empty or `0`.
fn env_flag(name: &str) -> bool {
    std::env::var_os(name).is_some_and(|v| !v.is_empty() && v != "0")
}

/// The level the kernels use: detected on the first call, then cached. Scalar when
/// `BLOOMKIT_FORCE_SCALAR` is set (to anything but `0`) at that first call.
#[inline]
pub fn simd_level() -> SimdLevel {
    match LEVEL.load(Ordering::Relaxed) {
        1 => SimdLevel::Scalar,
        2 => SimdLevel::Avx2,
        3 => SimdLevel::Avx512,
        _ => detect(),
    }
}

#[cold]
fn detect() -> SimdLevel {
    let level = if env_flag("BLOOMKIT_FORCE_SCALAR") {
        SimdLevel::Scalar
    } else {
        cpu_level()
    };
    LEVEL.store(level as u8, Ordering::Relaxed);
    level
}

/// The best level this CPU runs, whatever `BLOOMKIT_FORCE_SCALAR` says (cached).
#[inline]
pub(crate) fn cpu_level() -> SimdLevel {
    static CPU: AtomicU8 = AtomicU8::new(0);
    match CPU.load(Ordering::Relaxed) {
        1 => SimdLevel::Scalar,
        2 => SimdLevel::Avx2,
        3 => SimdLevel::Avx512,
        _ => {
            let level = detect_cpu();
            CPU.store(level as u8, Ordering::Relaxed);
            level
        }
    }
}

/// A SIMD level this CPU was seen to run. Only this module makes one — from detection
/// ([`simd_level`], `supported`) or in the `#[target_feature]` functions that
/// [`dispatch`] calls after detection — so a kernel handed one may use that level's
/// instructions: the proof travels in the type, not in a convention of the callers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Supported(SimdLevel);

impl Supported {
    /// The level.
    pub fn level(self) -> SimdLevel {
        self.0
    }
}

/// [`simd_level`], as the proof the kernels take.
#[inline(always)]
pub(crate) fn detected() -> Supported {
    Supported(simd_level())
}

/// `level` if this CPU runs it, else scalar.
#[inline(always)]
pub(crate) fn supported(level: SimdLevel) -> Supported {
    if level as u8 <= cpu_level() as u8 {
        Supported(level)
    } else {
        Supported(SimdLevel::Scalar)
    }
}

#[cfg(target_arch = "x86_64")]
fn detect_cpu() -> SimdLevel {
    if std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx2")
    {
        SimdLevel::Avx512
    } else if std::arch::is_x86_feature_detected!("avx2") {
        SimdLevel::Avx2
    } else {
        SimdLevel::Scalar
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn detect_cpu() -> SimdLevel {
    SimdLevel::Scalar
}

/// A piece of work run with the kernels' level known at compile time (see [`dispatch`]).
pub trait AtLevel {
    /// What the work returns.
    type Output;
    /// Does the work at `level`. Implementations mark it `#[inline(always)]`, so that it is
    /// compiled into the `#[target_feature]` function of each level and the kernels it calls
    /// with that level inline into it.
    fn run(self, level: Supported) -> Self::Output;
}

/// Runs `work` at [`simd_level`], the whole of it compiled for that level: on x86-64 the
/// AVX2 and AVX-512 cases go through a `#[target_feature]` function into which
/// `work.run` (marked `#[inline(always)]`) is inlined, and with it the kernels that `work`
/// reaches through `has_with(level, …)`: one call for the work, none per kernel.
#[inline(always)]
pub fn dispatch<W: AtLevel>(work: W) -> W::Output {
    match simd_level() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `simd_level` is AVX-512 only when the CPU was seen to have AVX-512F and AVX2.
        SimdLevel::Avx512 => unsafe { x86::run_avx512(work) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `simd_level` is AVX2 only when the CPU was seen to have AVX2.
        SimdLevel::Avx2 => unsafe { x86::run_avx2(work) },
        _ => work.run(Supported(SimdLevel::Scalar)),
    }
}

/// Every level this CPU can run, scalar first: what the property tests compare.
pub fn available_levels() -> Vec<SimdLevel> {
    [SimdLevel::Scalar, SimdLevel::Avx2, SimdLevel::Avx512]
        .into_iter()
        .filter(|&l| l as u8 <= cpu_level() as u8)
        .collect()
}

/// Asks the CPU to bring the cache line holding `value` into the caches (a hint: it never
/// faults and changes no result). A no-op where there is no prefetch instruction.
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `prefetcht0` only hints the cache; it cannot fault or write, and SSE is part of
    // the x86-64 baseline. The pointer comes from a live reference.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// Allocations of at least this many bytes are advised to use huge pages (one 2 MiB page).
pub const HUGE_PAGE_BYTES: usize = 2 << 20;

/// Whether [`zeroed_vec`] advises huge pages: yes unless `BLOOMKIT_NO_HUGE_PAGES` is set.
pub fn huge_pages_enabled() -> bool {
    static ENABLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ENABLED.get_or_init(|| !env_flag("BLOOMKIT_NO_HUGE_PAGES"))
}

/// A vector of `len` copies of `T::default()` (all-zero for the block types), or `None` if
/// the memory cannot be had. When `len` elements take at least [`HUGE_PAGE_BYTES`], the
/// memory is advised to use transparent huge pages *before* it is first written (Linux;
/// elsewhere, or when the advice is refused, the memory is ordinary).
pub fn zeroed_vec<T: Clone + Default>(len: usize) -> Option<Vec<T>> {
    let mut v = reserved_vec(len)?;
    v.resize(len, T::default());
    Some(v)
}

/// An empty vector with room for exactly `capacity` elements, advised to use huge pages as
/// [`zeroed_vec`] is when that room takes at least [`HUGE_PAGE_BYTES`], or `None` if the
/// memory cannot be had. For an array filled by pushing: each page is then written once,
/// where a [`zeroed_vec`] overwritten afterwards writes it twice.
///
/// ```
/// let mut v = bloomkit::arch::reserved_vec::<u64>(1 << 20).unwrap();
/// assert!(v.is_empty() && v.capacity() == 1 << 20);
/// v.extend(0..1 << 20);
/// assert_eq!(v.capacity(), 1 << 20);
/// assert!(bloomkit::arch::reserved_vec::<u64>(usize::MAX / 4).is_none());
/// ```
pub fn reserved_vec<T>(capacity: usize) -> Option<Vec<T>> {
    let mut v: Vec<T> = Vec::new();
    v.try_reserve_exact(capacity).ok()?;
    let bytes = capacity.saturating_mul(std::mem::size_of::<T>());
    if bytes >= HUGE_PAGE_BYTES && huge_pages_enabled() {
        advise_huge_pages(v.as_mut_ptr().cast::<u8>(), bytes);
    }
    Some(v)
}

/// `len` zero words, or `None` if the memory cannot be had — from the allocator's zeroed
/// allocation (`calloc`), so a large array costs memory only as it is written: the fresh
/// pages of a big allocation are the kernel's shared zero page until touched. Safe Rust can
/// allocate a zeroed vector fallibly only by writing every zero itself (`try_reserve_exact`
/// then `resize`: [`zeroed_words_written`], its twin, which a test holds it to), and a
/// filter of 2 GiB created empty would then write 2 GiB before its first insert — the Redis
/// module's `BF.RESERVE` of a large filter stalled the server for seconds that way.
pub fn zeroed_words(len: usize) -> Option<Vec<u64>> {
    if len == 0 {
        return Some(Vec::new());
    }
    let layout = std::alloc::Layout::array::<u64>(len).ok()?;
    // SAFETY: the layout's size is not zero (len > 0 words of 8 bytes). alloc_zeroed returns
    // null or a block of exactly that layout, every byte zero.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<u64>();
    if ptr.is_null() {
        return None;
    }
    // SAFETY: `ptr` comes from the global allocator with the layout of `[u64; len]`, so it is
    // a valid allocation for a Vec of capacity `len`; all `len` elements are initialised,
    // since all-zero bytes are the u64 0; the Vec takes sole ownership of the block.
    Some(unsafe { Vec::from_raw_parts(ptr, len, len) })
}

/// The scalar twin of [`zeroed_words`]: the same vector, every zero written.
pub fn zeroed_words_written(len: usize) -> Option<Vec<u64>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).ok()?;
    v.resize(len, 0);
    Some(v)
}

/// An unsigned integer type whose all-zero bytes are the value 0: what [`calloc_vec`] may
/// hand out without writing it. Sealed: implemented for `u8`, `u16`, `u32` and `u64` only.
pub trait ZeroBits: Copy + Default + sealed::Sealed {}

mod sealed {
    pub trait Sealed {}
    impl Sealed for u8 {}
    impl Sealed for u16 {}
    impl Sealed for u32 {}
    impl Sealed for u64 {}
}

impl ZeroBits for u8 {}
impl ZeroBits for u16 {}
impl ZeroBits for u32 {}
impl ZeroBits for u64 {}

/// `len` zeros of `T`, or `None` if the memory cannot be had — as [`zeroed_words`], from the
/// allocator's zeroed allocation (`calloc`), whose fresh pages are zeroed by the kernel when
/// first touched instead of by a pass of writes here; and, when the array takes at least
/// [`HUGE_PAGE_BYTES`] and `huge` is set, advised to use transparent huge pages (before the
/// first touch when the allocation is fresh; a recycled one the allocator has zeroed by
/// writing, where the advice changes nothing). [`zeroed_vec`] is its written twin.
///
/// ```
/// let counts: Vec<u8> = bloomkit::arch::calloc_vec(3 << 20, true).unwrap();
/// assert!(counts.len() == 3 << 20 && counts.iter().all(|&c| c == 0));
/// assert!(bloomkit::arch::calloc_vec::<u64>(usize::MAX / 4, false).is_none());
/// ```
pub fn calloc_vec<T: ZeroBits>(len: usize, huge: bool) -> Option<Vec<T>> {
    if len == 0 {
        return Some(Vec::new());
    }
    let layout = std::alloc::Layout::array::<T>(len).ok()?;
    // SAFETY: the layout's size is not zero (len > 0 elements of a type of 1 to 8 bytes).
    // alloc_zeroed returns null or a block of exactly that layout, every byte zero.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<T>();
    if ptr.is_null() {
        return None;
    }
    if huge && layout.size() >= HUGE_PAGE_BYTES && huge_pages_enabled() {
        advise_huge_pages(ptr.cast::<u8>(), layout.size());
    }
    // SAFETY: `ptr` comes from the global allocator with the layout of `[T; len]`, so it is a
    // valid allocation for a Vec of capacity `len`; all `len` elements are initialised, since
    // all-zero bytes are the value 0 of every `ZeroBits` type (unsigned integers); the Vec
    // takes sole ownership of the block.
    Some(unsafe { Vec::from_raw_parts(ptr, len, len) })
}

/// The scatter of a counting sort: `dst` becomes, for each bucket b in turn, the values of the
/// `items` that `place` puts in bucket b, in the items' order — `place(item)` gives the
/// item's bucket and value, and `sizes[b]` must be the number of items of bucket b. Each value
/// is written once, into the room `dst` has reserved (no zeros written first: the array is
/// fully overwritten anyway). If the items do not match the sizes (a bucket past the last or
/// over its size, or sizes that do not add up to the items), `dst` is left empty and the
/// answer is `false`; so is it if the room cannot be had.
/// [`scatter_into_written`] is its scalar twin, which a property test holds it to.
///
/// ```
/// // Words by their top two bits: 4 buckets of sizes 1, 0, 2, 1.
/// let words = [0xC0u8, 0x80, 0x01, 0x81];
/// let mut sorted = Vec::new();
/// let by_top = |w: &u8| (usize::from(w >> 6), *w);
/// assert!(bloomkit::arch::scatter_into(&mut sorted, &words, &[1, 0, 2, 1], by_top));
/// assert_eq!(sorted, [0x01, 0x80, 0x81, 0xC0]);
/// // Sizes that do not match the words: refused, nothing kept.
/// assert!(!bloomkit::arch::scatter_into(&mut sorted, &words, &[2, 0, 1, 1], by_top));
/// assert!(sorted.is_empty());
/// ```
pub fn scatter_into<S, T: Copy>(
    dst: &mut Vec<T>,
    items: &[S],
    sizes: &[usize],
    place: impl Fn(&S) -> (usize, T),
) -> bool {
    dst.clear();
    let Some(mut ranges) = bucket_ranges(sizes, items.len()) else {
        return false;
    };
    if dst.try_reserve_exact(items.len()).is_err() {
        return false;
    }
    let spare = &mut dst.spare_capacity_mut()[..items.len()];
    for item in items {
        let (bucket, value) = place(item);
        match ranges.get_mut(bucket) {
            Some([next, end]) if *next < *end => {
                spare[*next].write(value);
                *next += 1;
            }
            _ => return false,
        }
    }
    // Every item was written into its own slot of 0..items.len(): each write went to the next
    // slot of its bucket's range and the ranges are disjoint and cover 0..items.len() (they
    // are the prefix sums of sizes adding up to items.len()), so items.len() writes with no
    // bucket over its size fill every slot exactly once.
    debug_assert!(ranges.iter().all(|&[next, end]| next == end));
    // SAFETY: the first items.len() elements of the spare capacity were all written (above),
    // and the capacity is at least items.len() (reserved above).
    unsafe { dst.set_len(items.len()) };
    true
}

/// The scalar twin of [`scatter_into`]: the same answer and the same `dst`, by writing zeros
/// first and then each value.
pub fn scatter_into_written<S, T: Copy + Default>(
    dst: &mut Vec<T>,
    items: &[S],
    sizes: &[usize],
    place: impl Fn(&S) -> (usize, T),
) -> bool {
    dst.clear();
    let Some(mut ranges) = bucket_ranges(sizes, items.len()) else {
        return false;
    };
    if dst.try_reserve_exact(items.len()).is_err() {
        return false;
    }
    dst.resize(items.len(), T::default());
    for item in items {
        let (bucket, value) = place(item);
        match ranges.get_mut(bucket) {
            Some([next, end]) if *next < *end => {
                dst[*next] = value;
                *next += 1;
            }
            _ => {
                dst.clear();
                return false;
            }
        }
    }
    true
}

/// Each bucket's `[first slot, end]` from the bucket sizes, if they add up to `total`.
fn bucket_ranges(sizes: &[usize], total: usize) -> Option<Vec<[usize; 2]>> {
    let mut at = 0usize;
    let ranges = sizes
        .iter()
        .map(|&size| {
            let start = at;
            at = at.saturating_add(size);
            [start, at]
        })
        .collect();
    (at == total).then_some(ranges)
}

/// `madvise(MADV_HUGEPAGE)` on the whole 2 MiB-aligned pages inside `[start, start + len)`;
/// the number of bytes the kernel accepted the advice for (0 when there is no whole page or
/// the advice is refused).
#[cfg(target_os = "linux")]
fn advise_huge_pages(start: *mut u8, len: usize) -> usize {
    let begin = (start as usize).next_multiple_of(HUGE_PAGE_BYTES);
    let end = (start as usize + len) / HUGE_PAGE_BYTES * HUGE_PAGE_BYTES;
    if end <= begin {
        return 0;
    }
    // SAFETY: [begin, end) lies inside an allocation the caller owns (reserved, not yet
    // shared with anything). MADV_HUGEPAGE only changes how the kernel backs the pages; it
    // never changes their contents or validity, and an error (for example EINVAL where THP is
    // compiled out) leaves the memory as it was.
    let result =
        unsafe { libc::madvise(begin as *mut libc::c_void, end - begin, libc::MADV_HUGEPAGE) };
    if result == 0 {
        end - begin
    } else {
        0
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_start: *mut u8, _len: usize) -> usize {
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forcing_the_scalar_path_is_honoured() {
        // The test script runs this binary once with BLOOMKIT_FORCE_SCALAR=1.
        if env_flag("BLOOMKIT_FORCE_SCALAR") {
            assert_eq!(simd_level(), SimdLevel::Scalar);
        } else {
            assert_eq!(Some(&simd_level()), available_levels().last());
        }
    }

    proptest::proptest! {
        /// Any length, up to 4 MiB and past a page boundary: the calloc'd vector equals its
        /// written twin, has exactly that capacity, and is an ordinary vector afterwards —
        /// written, grown and freed through the same allocator (a wrong layout shows up
        /// here under the allocator's checks).
        #[test]
        fn zeroed_words_equal_their_written_twin(
            len in proptest::prop_oneof![0usize..70, 0usize..(4 << 17)],
            writes in proptest::collection::vec((0usize..1 << 20, proptest::num::u64::ANY), 0..8),
        ) {
            let mut fast = zeroed_words(len).unwrap();
            let mut twin = zeroed_words_written(len).unwrap();
            proptest::prop_assert_eq!(&fast, &twin);
            proptest::prop_assert_eq!(fast.capacity(), len);
            for &(at, value) in &writes {
                if len > 0 {
                    fast[at % len] = value;
                    twin[at % len] = value;
                }
            }
            fast.push(1);
            twin.push(1);
            proptest::prop_assert_eq!(fast, twin);
        }
    }

    proptest::proptest! {
        /// Any length and element width, up to 4 MiB, with and without huge-page advice: the
        /// calloc'd vector equals its written twin ([`zeroed_vec`]), has exactly that
        /// capacity, and is an ordinary vector afterwards (written, grown, freed).
        #[test]
        fn calloc_vectors_equal_their_written_twin(
            len in proptest::prop_oneof![0usize..70, 0usize..(4 << 20)],
            huge in proptest::bool::ANY,
            writes in proptest::collection::vec((0usize..1 << 22, proptest::num::u8::ANY), 0..8),
        ) {
            let mut fast: Vec<u8> = calloc_vec(len, huge).unwrap();
            let mut twin: Vec<u8> = zeroed_vec(len).unwrap();
            proptest::prop_assert_eq!(&fast, &twin);
            proptest::prop_assert_eq!(fast.capacity(), len);
            for &(at, value) in &writes {
                if len > 0 {
                    fast[at % len] = value;
                    twin[at % len] = value;
                }
            }
            fast.push(1);
            twin.push(1);
            proptest::prop_assert_eq!(fast, twin);
            let wide: Vec<u64> = calloc_vec(len / 8, huge).unwrap();
            proptest::prop_assert_eq!(wide, zeroed_vec::<u64>(len / 8).unwrap());
        }

        /// Any items, bucket counts and sizes — matching the items or not, into a vector
        /// empty, short or holding old values: the scatter gives the answer and the vector of
        /// its written twin, and a true answer is the stable counting sort of the items.
        #[test]
        fn scatter_equals_its_written_twin(
            items in proptest::collection::vec((0usize..9, proptest::num::u64::ANY), 0..300),
            buckets in 1usize..9,
            skew in proptest::collection::vec(0usize..3, 0..9),
            old in proptest::collection::vec(proptest::num::u64::ANY, 0..400),
        ) {
            let place = |&(b, v): &(usize, u64)| (b, v);
            // Exact sizes when `skew` is empty or all zeros, otherwise perturbed.
            let mut sizes = vec![0usize; buckets];
            for &(b, _) in &items {
                if b < buckets {
                    sizes[b] += 1;
                }
            }
            for (s, &d) in sizes.iter_mut().zip(&skew) {
                *s = (*s + d) % (items.len() + 1);
            }
            let mut fast = old.clone();
            let mut twin = old.clone();
            let a = scatter_into(&mut fast, &items, &sizes, place);
            let b = scatter_into_written(&mut twin, &items, &sizes, place);
            proptest::prop_assert_eq!(a, b);
            proptest::prop_assert_eq!(&fast, &twin);
            if a {
                let mut sorted = items.clone();
                sorted.sort_by_key(|&(b, _)| b); // stable
                let want: Vec<u64> = sorted.iter().map(|&(_, v)| v).collect();
                proptest::prop_assert_eq!(fast, want);
            } else {
                proptest::prop_assert!(fast.is_empty());
            }
        }
    }

    /// A scatter whose sizes match its items fills the vector (the case the property test
    /// reaches only when its perturbation is zero); one bucket over its size, a bucket past
    /// the last, or sizes summing to more, leave it empty.
    #[test]
    fn scatter_fills_exactly_or_refuses() {
        let items = [(1usize, 10u64), (0, 20), (1, 30), (0, 40), (2, 50)];
        let place = |&(b, v): &(usize, u64)| (b, v);
        let mut v = vec![7u64; 2];
        assert!(scatter_into(&mut v, &items, &[2, 2, 1], place));
        assert_eq!(v, [20, 40, 10, 30, 50]);
        for sizes in [&[3, 1, 1][..], &[2, 2], &[2, 2, 2], &[1, 2, 2]] {
            assert!(!scatter_into(&mut v, &items, sizes, place), "{sizes:?}");
            assert!(v.is_empty());
        }
    }

    #[test]
    fn zeroed_words_refuse_what_cannot_be_had() {
        assert!(zeroed_words(usize::MAX / 4).is_none());
        assert!(zeroed_words(usize::MAX).is_none());
        assert!(zeroed_words_written(usize::MAX / 4).is_none());
    }

    #[test]
    fn zeroed_vectors_are_zero_at_every_size() {
        for len in [0usize, 1, 1000, (HUGE_PAGE_BYTES / 8) * 3 + 5] {
            let v: Vec<u64> = zeroed_vec(len).unwrap();
            assert_eq!(v.len(), len);
            assert!(v.iter().all(|&w| w == 0));
        }
        assert!(zeroed_vec::<u64>(usize::MAX / 4).is_none());
    }

    /// The advice covers the whole 2 MiB pages of a large allocation and the kernel accepts
    /// it (`madvise` returns 0); an allocation with no whole 2 MiB page gets none. Whether the
    /// kernel then backs the range with huge pages depends on its free contiguous memory:
    /// the development VM (Firecracker, THP in `madvise` mode) granted none on one day and,
    /// on the next, 516 of 524 MiB of split-block filters (`cargo run --release -p bloomkit
    /// --example hash_cost -- speed 100000000` prints it), so no test can demand them.
    #[cfg(target_os = "linux")]
    #[test]
    fn large_allocations_are_advised_and_the_advice_is_accepted() {
        let mut big: Vec<u64> = Vec::with_capacity(8 << 20); // 64 MiB
        assert_eq!(
            advise_huge_pages(big.as_mut_ptr().cast(), 64 << 20),
            31 << 21
        );
        let mut small: Vec<u64> = Vec::with_capacity(1 << 17); // 1 MiB
        assert_eq!(advise_huge_pages(small.as_mut_ptr().cast(), 1 << 20), 0);
    }
}
