//! Every formula of the crate by one path: `params::name`.
//!
//! Each kind keeps its theory — its sizing, its false-positive rate, their sources — in its
//! own folder (`kinds/<kind>/theory.rs`, the classic filter's in `kinds/bloom/theory.rs`);
//! this module only re-exports them, so that code written against `bloomkit::params` keeps
//! working and the formulas can be compared side by side.

pub use crate::kinds::blocked::theory::*;
pub use crate::kinds::bloom::theory::*;
pub use crate::kinds::compressed::theory::*;
pub use crate::kinds::counting::theory::*;
pub use crate::kinds::cuckoo::theory::*;
pub use crate::kinds::deletable::theory::*;
pub use crate::kinds::generalized::theory::*;
pub use crate::kinds::partitioned::theory::*;
pub use crate::kinds::robust::theory::*;
pub use crate::kinds::scalable::theory::*;
pub use crate::kinds::spectral::theory::*;
pub use crate::kinds::stable::theory::*;
pub use crate::kinds::vi_counting::theory::*;
pub use crate::kinds::weighted::theory::*;
pub use crate::structures::bloomier::theory::*;
pub use crate::structures::buffered::theory::*;
