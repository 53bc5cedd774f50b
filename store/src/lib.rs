//! weir's built-in primary-key table store: tables that merge every write into the stored row
//! of its primary key, with the merge engines of Apache Fluss.
//!
//! - [`agg`]: the aggregation merge engine's field functions (`'fields.f.agg' = 'sum'`, …),
//!   with Fluss's names, type rules, messages and semantics.
//! - [`bitmap32`] and [`bitmap64`]: the `rbm32` / `rbm64` byte formats (RoaringBitmap's
//!   portable format; Java `Roaring64Bitmap`'s own), so that bitmaps written by Fluss load here
//!   and back.

pub mod agg;
pub mod bitmap32;
pub mod bitmap64;
pub mod error;

pub use agg::AggFunction;
pub use error::{Error, Result};
