//! One module per verb, plus the pieces they share: [`input`] (items from arguments,
//! standard input or files, progress bars) and [`store`] (filter options, creating,
//! opening and saving filters).

pub mod add;
pub mod bloomier;
pub mod build;
pub mod check;
pub mod create;
pub mod export;
pub mod foreign;
pub mod import;
pub mod info;
pub mod input;
pub mod merge;
pub mod parquet;
pub mod remove;
pub mod ssd;
pub mod store;

/// The exit code of every error, distinct from `check`'s 1 for "definitely absent".
pub const EXIT_ERROR: u8 = 2;
