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
//! once that way); `BLOOMKIT_SIMD=avx2` (or `scalar`) caps the level instead, to measure
//! one level against another on the machine in use. A build with `-C target-cpu=native` on a CPU with the features still
//! dispatches at run time, but the scalar twins are then compiled with the same features.
//! Other architectures (aarch64 included) use the scalar twins, which LLVM vectorises where
//! the target has per-lane shifts.
//!
//! # Prefetch and huge pages
//!
//! [`prefetch`] issues `prefetcht0` for an address (x86-64); the batch calls of the
//! classic, blocked and split-block filters prefetch each item's lines a window of items
//! before they test it ([`lookahead`](crate::lookahead)), so that the cache misses overlap.
//!
//! A random probe of a large array also needs the page's translation: on 4 KiB pages a
//! filter of 1.8 GiB is 470 000 pages, whose page-table entries do not stay in the caches,
//! so every probe walks the page table; on 2 MiB transparent huge pages it is 915 of them.
//! Linux backs memory with huge pages when asked (`madvise(MADV_HUGEPAGE)`, the only way
//! where THP is in `madvise` mode) before the memory is first written; advice given later
//! only lets the kernel's `khugepaged` merge pages in the background. But a huge page costs
//! 2 MiB of memory at its first touch, where a 4 KiB page costs 4 KiB: a filter reserved
//! large and filled slowly would take all its memory at once. **The policy**: advise the
//! arrays that are about to be written whole or nearly so, never the others.
//!
//! 1. **Written whole:** an array decoded from a file (every kind's `from_le_bytes` of its
//!    storage, through [`reserved_vec`]; a bit vector's whole image written in one call,
//!    [`advise_whole_write`]), and the vectors of [`zeroed_vec`] (the blocked and
//!    split-block filters, whose zeros are written when they are made).
//! 2. **A bulk build:** a batch insert into an array of at least [`HUGE_PAGE_BYTES`] that
//!    writes at least two cells per 4 KiB page of it ([`bulk_write_takes_huge_pages`], which
//!    derives the threshold; [`advise_bulk_write`]), advised before the batch writes. A
//!    filter reserved for 10⁸ items that takes a thousand at a time is never advised.
//! 3. **Never** where [`forbid_huge_pages`] was called: the Redis module calls it when it
//!    is loaded. `BLOOMKIT_NO_HUGE_PAGES=1` (read at the first advice) turns all advice off
//!    too, to measure its effect.
//!
//! Arrays made empty and filled one insert at a time ([`zeroed_words`], calloc) are never
//! advised, so that an empty filter costs memory only as it is written. Failure of the
//! advice is silent: the memory works either way. Measured at 10⁸ items on the
//! development VM: BENCHMARKS.md, "Huge pages for arrays written whole".
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
    let cap = std::env::var("BLOOMKIT_SIMD").ok();
    let level = level_to_use(
        cpu_level(),
        env_flag("BLOOMKIT_FORCE_SCALAR"),
        cap.as_deref(),
    );
    LEVEL.store(level as u8, Ordering::Relaxed);
    level
}

/// The level the kernels use on a CPU that runs `cpu`: scalar when forced, else at most the
/// level named by `BLOOMKIT_SIMD` (`scalar`, `avx2` or `avx512`; any other value is no cap).
/// The cap is for measuring one level against another on the machine in use (on some Intel
/// CPUs 512-bit instructions lower the clock) and for pinning a level in production.
fn level_to_use(cpu: SimdLevel, force_scalar: bool, cap: Option<&str>) -> SimdLevel {
    let cap = match cap {
        _ if force_scalar => SimdLevel::Scalar,
        Some("scalar") => SimdLevel::Scalar,
        Some("avx2") => SimdLevel::Avx2,
        _ => SimdLevel::Avx512,
    };
    if cap as u8 <= cpu as u8 {
        cap
    } else {
        cpu
    }
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

/// [`prefetch`] of `slice[index]`, without checking that `index` is in the slice: the
/// address is only formed (`wrapping_add`), and a prefetch of any address is a hint that
/// never faults, so an index past the end prefetches a line nobody reads, where `get` and a
/// bounds check would cost a compare and a branch a prefetch (for callers whose indexes are
/// in the slice by construction: a filter's positions).
#[inline(always)]
pub fn prefetch_at<T>(slice: &[T], index: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: as `prefetch`: `prefetcht0` only hints the cache, and it cannot fault even at
    // an address outside any allocation; the pointer is never dereferenced.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(slice.as_ptr().wrapping_add(index).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (slice, index);
}

/// Allocations of at least this many bytes are advised to use huge pages (one 2 MiB page).
pub const HUGE_PAGE_BYTES: usize = 2 << 20;

/// The base page size the policy counts in: 4 KiB, what x86-64 and most aarch64 Linux
/// kernels map by default (a kernel with larger base pages only makes the policy more
/// cautious, since it counts more pages than there are).
pub const SMALL_PAGE_BYTES: u64 = 4 << 10;

/// Set by [`forbid_huge_pages`]: no advice for the rest of the process.
static FORBIDDEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether this crate advises huge pages: yes unless `BLOOMKIT_NO_HUGE_PAGES` is set (read
/// once, at the first call) or [`forbid_huge_pages`] was called.
pub fn huge_pages_enabled() -> bool {
    static ENABLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    !FORBIDDEN.load(Ordering::Relaxed)
        && *ENABLED.get_or_init(|| !env_flag("BLOOMKIT_NO_HUGE_PAGES"))
}

/// Turns every huge-page advice of this crate off for the rest of the process, whatever
/// the sizes: for a program that embeds the filters where 2 MiB per first touch is the wrong
/// trade. The Redis module (`bloomkit-redis`) calls it when Redis loads it: its filters are
/// reserved large and filled a few items per command (`BF.RESERVE` then `BF.ADD`), they live
/// in Redis's own allocator (jemalloc, which manages its pages itself), and a `BGSAVE`
/// forks, after which every write copies its whole page — 2 MiB instead of 4 KiB on a huge
/// page.
///
/// ```
/// bloomkit::arch::forbid_huge_pages();
/// assert!(!bloomkit::arch::huge_pages_enabled());
/// // Even a write that touches every page of a large array takes no advice now.
/// let mut words = bloomkit::arch::zeroed_words(1 << 20).unwrap(); // 8 MiB
/// assert_eq!(bloomkit::arch::advise_bulk_write(&mut words, u64::MAX), 0);
/// ```
pub fn forbid_huge_pages() {
    FORBIDDEN.store(true, Ordering::Relaxed);
}

/// Whether a write of `writes` cells at independent uniformly random places of an array
/// of `array_bytes` bytes, not yet backed by huge pages, should first advise huge pages
/// for it: the decision of [`advise_bulk_write`], a pure function of the sizes.
///
/// Yes when the array spans at least one huge page ([`HUGE_PAGE_BYTES`]) and
/// `writes ≥ 2·P`, with `P = ⌈array_bytes / 4 KiB⌉` its small pages. The reason: w random
/// writes over P pages leave a given page untouched with probability (1 − 1/P)^w ≈ e^(−w/P),
/// so on 4 KiB pages the write commits a fraction 1 − e^(−w/P) of the array; on huge pages
/// it commits all of it as soon as each 2 MiB page (512 small ones) is touched once, which
/// fails only with probability e^(−512·w/P). Advising therefore costs at most a fraction
/// e^(−w/P) of the array in memory beyond what the write takes anyway: at most
/// e^(−2) = 13.5% from w = 2P on (and 37% at w = P, 5% at w = 3P). In time huge pages
/// gain once the array is mostly touched: one fault instead of 512 for each 2 MiB zeroed,
/// and every later probe needs one TLB entry per 2 MiB (at 10⁸ items the spectral filter's
/// batch insert took 231 ns on huge pages against 440 ns, BENCHMARKS.md, third round).
/// So the threshold is set by memory: a filter reserved large and filled by small batches
/// (a thousand items into a filter sized for 10⁸: w/P = 0.24) never takes the advice,
/// and a batch that takes it commits at least 86% of the array on its own.
///
/// ```
/// use bloomkit::arch::bulk_write_takes_huge_pages as takes;
/// let array = 114 << 20; // a classic filter for 10^8 items at 1%: 29 184 small pages
/// assert!(!takes(array, 1_000 * 7)); // a thousand inserts of 7 probes
/// assert!(takes(array, 100_000_000 * 7)); // the filter built whole
/// assert!(takes(array, 2 * 29_184) && !takes(array, 2 * 29_184 - 1));
/// assert!(!takes(1 << 20, u64::MAX)); // smaller than one huge page
/// ```
pub fn bulk_write_takes_huge_pages(array_bytes: u64, writes: u64) -> bool {
    array_bytes >= HUGE_PAGE_BYTES as u64
        && writes >= array_bytes.div_ceil(SMALL_PAGE_BYTES).saturating_mul(2)
}

/// Advises huge pages for `words`, an array about to be written whole (a file's array
/// loaded into it at once), when it spans at least [`HUGE_PAGE_BYTES`] and
/// [`huge_pages_enabled`]; returns the bytes advised. Every page is written, so huge pages
/// cost no memory the write would not take anyway.
///
/// ```
/// // 4 MiB about to be filled: advised where huge pages are on and allowed (Linux), and
/// // never more than the array; a small array never.
/// let mut words = bloomkit::arch::zeroed_words(1 << 19).unwrap();
/// assert!(bloomkit::arch::advise_whole_write(&mut words) <= 4 << 20);
/// assert_eq!(bloomkit::arch::advise_whole_write(&mut [0u64; 512]), 0);
/// ```
pub fn advise_whole_write(words: &mut [u64]) -> usize {
    advise_bulk_write(words, u64::MAX)
}

/// Advises huge pages for `words`, the array of a filter that `writes` cell writes at
/// random places are about to go to (a batch insert: items × the cells each writes), when
/// [`bulk_write_takes_huge_pages`] says so and [`huge_pages_enabled`]; returns the bytes
/// advised (0 when not). On Linux, `madvise(MADV_HUGEPAGE)` over the whole 2 MiB pages of
/// the array: its pages not yet touched are then backed by huge pages when first written;
/// those already written stay 4 KiB pages until the kernel's `khugepaged` merges them
/// later (its `max_ptes_none` allows that for a 2 MiB range with few of its pages in use,
/// which is why a small batch must not advise). Elsewhere nothing.
///
/// The array is the filter's own, allocated zeroed ([`zeroed_words`]), so the advice
/// changes no content: it only decides how the pages are backed.
///
/// ```
/// // 8 MiB (2 048 pages of 4 KiB): a thousand writes are not advised, whatever the system.
/// let mut words = bloomkit::arch::zeroed_words(1 << 20).unwrap();
/// assert_eq!(bloomkit::arch::advise_bulk_write(&mut words, 1_000), 0);
/// assert!(words.iter().all(|&w| w == 0)); // the advice never changes the contents
/// ```
pub fn advise_bulk_write(words: &mut [u64], writes: u64) -> usize {
    let bytes = std::mem::size_of_val(words);
    if bulk_write_takes_huge_pages(bytes as u64, writes) && huge_pages_enabled() {
        advise_huge_pages(words.as_mut_ptr().cast::<u8>(), bytes)
    } else {
        0
    }
}

/// A vector of `len` copies of `T::default()` (all-zero for the block types), or `None` if
/// the memory cannot be had. When `len` elements take at least [`HUGE_PAGE_BYTES`], the
/// memory is advised to use transparent huge pages *before* it is first written (Linux;
/// elsewhere, when the advice is refused or [`huge_pages_enabled`] says no, the memory is
/// ordinary). Every element is written here, so the advice costs no memory the vector
/// would not take anyway (the policy's first case, in the module docs).
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

/// `len` zero words, or `None` if the memory cannot be had, never advised to use huge pages
/// (a filter's array filled one insert at a time; a batch that writes most of it advises it
/// then, [`advise_bulk_write`]) — from the allocator's zeroed
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
///
/// ```
/// let words = [0xC0u8, 0x80, 0x01, 0x81];
/// let by_top = |w: &u8| (usize::from(w >> 6), *w);
/// let (mut a, mut b) = (Vec::new(), Vec::new());
/// assert!(bloomkit::arch::scatter_into_written(&mut a, &words, &[1, 0, 2, 1], by_top));
/// assert!(bloomkit::arch::scatter_into(&mut b, &words, &[1, 0, 2, 1], by_top));
/// assert_eq!(a, b);
/// ```
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
        #[cfg(test)]
        ADVISED.with(|advised| advised.set(advised.get() + (end - begin) as u64));
        end - begin
    } else {
        0
    }
}

#[cfg(test)]
thread_local! {
    /// Bytes this thread had advised (tests: each runs on its own thread).
    static ADVISED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// The bytes the calling thread had accepted huge-page advice for so far: what a test
/// compares before and after a call.
#[cfg(test)]
pub(crate) fn advised_on_this_thread() -> u64 {
    ADVISED.with(std::cell::Cell::get)
}

/// Whether the mapping holding `addr` carries the huge-page advice (`hg` among its
/// `VmFlags` in `/proc/self/smaps`): what the kernel recorded, whether or not it then had
/// huge pages to give. `None` when no mapping holds it or smaps cannot be read.
#[cfg(all(test, target_os = "linux"))]
pub(crate) fn advice_recorded_at(addr: usize) -> Option<bool> {
    let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
    let mut inside = false;
    for line in smaps.lines() {
        let first = line.split_whitespace().next().unwrap_or("");
        if let Some((lo, hi)) = first.split_once('-')
            && let (Ok(lo), Ok(hi)) = (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
        {
            inside = (lo..hi).contains(&addr);
            continue;
        }
        if inside && let Some(flags) = line.strip_prefix("VmFlags:") {
            return Some(flags.split_whitespace().any(|f| f == "hg"));
        }
    }
    None
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
        } else if let Ok(cap) = std::env::var("BLOOMKIT_SIMD") {
            assert_eq!(simd_level(), level_to_use(cpu_level(), false, Some(&cap)));
        } else {
            assert_eq!(Some(&simd_level()), available_levels().last());
        }
    }

    #[test]
    fn the_simd_cap_lowers_the_level_but_never_raises_it() {
        use SimdLevel::*;
        for cpu in [Scalar, Avx2, Avx512] {
            assert_eq!(level_to_use(cpu, false, None), cpu);
            assert_eq!(level_to_use(cpu, false, Some("no such level")), cpu);
            assert_eq!(level_to_use(cpu, false, Some("avx512")), cpu);
            assert_eq!(level_to_use(cpu, false, Some("scalar")), Scalar);
            assert_eq!(level_to_use(cpu, true, Some("avx512")), Scalar);
        }
        assert_eq!(level_to_use(Avx512, false, Some("avx2")), Avx2);
        assert_eq!(level_to_use(Avx2, false, Some("avx2")), Avx2);
        assert_eq!(level_to_use(Scalar, false, Some("avx2")), Scalar);
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

    /// The policy's decision for a batch: a filter reserved for 10⁸ items that takes a
    /// thousand inserts gets no advice, whatever its kind's array; one built whole does;
    /// the threshold is two writes per 4 KiB page (see `bulk_write_takes_huge_pages`).
    #[test]
    fn only_a_write_to_most_pages_of_a_large_array_takes_huge_pages() {
        // The arrays of the kinds for 10^8 items at 1%: classic 114 MiB, deletable 128 MiB,
        // stable (3-bit cells) 348 MiB, counting (4 bits) 457 MiB, spectral (16 bits)
        // 1.8 GiB; k = 7 (stable: 8 cells written per insert).
        for array in [114u64 << 20, 128 << 20, 348 << 20, 457 << 20, 1830 << 20] {
            let pages = array / SMALL_PAGE_BYTES;
            assert!(!bulk_write_takes_huge_pages(array, 1_000 * 8), "{array}");
            assert!(!bulk_write_takes_huge_pages(array, pages), "{array}");
            assert!(
                !bulk_write_takes_huge_pages(array, 2 * pages - 1),
                "{array}"
            );
            assert!(bulk_write_takes_huge_pages(array, 2 * pages), "{array}");
            assert!(
                bulk_write_takes_huge_pages(array, 100_000_000 * 7),
                "{array}"
            );
        }
        // An array of part of a page counts that page whole.
        assert!(!bulk_write_takes_huge_pages((8 << 20) + 1, 2 * 2048 + 1));
        assert!(bulk_write_takes_huge_pages((8 << 20) + 1, 2 * 2049));
        // Below one huge page, never; no overflow at the extremes.
        assert!(!bulk_write_takes_huge_pages(
            HUGE_PAGE_BYTES as u64 - 1,
            u64::MAX
        ));
        assert!(bulk_write_takes_huge_pages(
            HUGE_PAGE_BYTES as u64,
            u64::MAX
        ));
        assert!(!bulk_write_takes_huge_pages(u64::MAX, (1 << 53) - 1));
        assert!(bulk_write_takes_huge_pages(u64::MAX, 1 << 53));
        assert!(!bulk_write_takes_huge_pages(0, 0));
    }

    /// `advise_bulk_write` advises an untouched 64 MiB array (a fresh map of its own: above
    /// glibc's largest threshold for serving from the heap, 32 MiB) only for a write that
    /// takes the policy's yes, and the kernel records it on that array's mapping; with
    /// huge pages turned off (`BLOOMKIT_NO_HUGE_PAGES=1`) never.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_bulk_write_advises_the_array_it_writes_and_a_small_one_does_not() {
        let mut words = zeroed_words(8 << 20).unwrap();
        let inside = (words.as_ptr() as usize).next_multiple_of(HUGE_PAGE_BYTES);
        let pages = (64 << 20) / SMALL_PAGE_BYTES;
        let before = advised_on_this_thread();
        assert_eq!(advise_bulk_write(&mut words, 1_000 * 7), 0);
        assert_eq!(advise_bulk_write(&mut words, 2 * pages - 1), 0);
        assert_eq!(advised_on_this_thread(), before);
        assert_eq!(advice_recorded_at(inside), Some(false));
        let advised = advise_bulk_write(&mut words, 2 * pages);
        if huge_pages_enabled() {
            assert_eq!(advised, 31 << 21);
            assert_eq!(advised_on_this_thread(), before + (31 << 21));
            assert_eq!(advice_recorded_at(inside), Some(true));
        } else {
            assert_eq!(advised, 0);
            assert_eq!(advice_recorded_at(inside), Some(false));
        }
        // The contents are untouched.
        assert!(words.iter().all(|&w| w == 0));
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
