//! How work is run: batches that prefetch a window ahead ([`lookahead`]), builds on every
//! core (`parallel`, cargo feature `rayon`), and [`arch`], the one module with `unsafe`
//! (prefetch, run-time-dispatched SIMD kernels with scalar twins, huge-page advice), and
//! [`caches`], the sizes of the machine's caches that some choices depend on.

#[allow(unsafe_code)]
pub mod arch;
pub mod caches;
pub mod lookahead;
#[cfg(feature = "rayon")]
#[cfg_attr(docsrs, doc(cfg(feature = "rayon")))]
pub mod parallel;
