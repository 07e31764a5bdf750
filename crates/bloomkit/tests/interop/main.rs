//! Foreign formats against the real writers and readers: Guava's jar (feature `guava`) and
//! Spark's sketch jar (feature `spark`), driven by small Java programs kept next to this file
//! and compiled into a temporary directory at test time.

#[cfg(any(feature = "guava", feature = "spark"))]
mod jvm;

#[cfg(feature = "guava")]
mod guava;
#[cfg(feature = "spark")]
mod spark;

mod hostile;
