//! weir's built-in primary-key table store: tables that merge every write into the stored row
//! of its primary key, with the merge engines of Apache Fluss.
//!
//! - [`agg`]: the aggregation merge engine's field functions (`'fields.f.agg' = 'sum'`, …),
//!   with Fluss's names, type rules, messages and semantics.
//! - [`row_merger`]: the merge engines (last row, `first_row`, `versioned`, `aggregation`),
//!   partial writes and delete behavior, and the changes each write emits.
//! - [`table`]: a primary-key table over a [`kv::KvStore`] ([`RedbStore`]: one `redb` file,
//!   locked against a second process), writing each batch atomically and durably; [`codec`]
//!   turns rows into bytes.
//! - [`bitmap32`] and [`bitmap64`]: the `rbm32` / `rbm64` byte formats (RoaringBitmap's
//!   portable format; Java `Roaring64Bitmap`'s own), so that bitmaps written by Fluss load here
//!   and back.
//!
//! SQL reaches these tables as managed tables (a `CREATE TABLE` without `'connector'`):
//! `weir-connectors`' `managed` module scans, writes and looks them up; the planner keeps their
//! definitions in the same store.

pub mod agg;
pub mod bitmap32;
pub mod bitmap64;
pub mod checksum;
pub mod codec;
pub mod error;
pub mod kv;
pub mod row_merger;
pub mod table;

pub use agg::AggFunction;
pub use error::{Error, Result};
pub use kv::{KvStore, RedbStore};
pub use row_merger::{Change, DeleteBehavior, MergeEngine, RowMerger, ScanChanges};
pub use table::PkTable;
