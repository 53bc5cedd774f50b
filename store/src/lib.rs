//! weir's built-in primary-key table store: tables that merge every write into the stored row
//! of its primary key, with the merge engines of Apache Fluss.
//!
//! - [`agg`]: the aggregation merge engine's field functions (`'fields.f.agg' = 'sum'`, …),
//!   with Fluss's names, type rules, messages and semantics.
//! - [`row_merger`]: the merge engines (last row, `first_row`, `versioned`, `aggregation`),
//!   partial writes and delete behavior, and the changes each write emits.
//! - [`bitmap32`] and [`bitmap64`]: the `rbm32` / `rbm64` byte formats (RoaringBitmap's
//!   portable format; Java `Roaring64Bitmap`'s own), so that bitmaps written by Fluss load here
//!   and back.
//!
//! Storage on disk, managed tables in SQL and scans follow; this crate holds the rules they
//! apply.

pub mod agg;
pub mod bitmap32;
pub mod bitmap64;
pub mod error;
pub mod row_merger;

pub use agg::AggFunction;
pub use error::{Error, Result};
pub use row_merger::{Change, DeleteBehavior, MergeEngine, RowMerger};
