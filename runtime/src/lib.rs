//! weir's runtime: the data model and the actor-based execution core.
//!
//! - Data model: [`types`] (Flink's SQL types), [`value`], [`row`], [`chunk`] (columnar, on
//!   Apache Arrow: [`columnar`] maps the types and converts values), and [`print`](mod@print)
//!   (values printed exactly as Flink's print connector prints them).
//! - Operator contract: [`operator`] ([`Operator`], [`Source`], [`Output`]) and [`timers`];
//!   operators are plain state machines, tested with [`harness`] and [`fixture`].
//! - Execution: [`graph`] (vertices, edges, chaining), [`partition`] (ship strategies and key
//!   groups), [`job`] (deployment on a fixed pool of actix worker threads, failure,
//!   cancellation) and [`metrics`].
//!
//! `runtime` knows nothing of SQL.

pub mod call_failure;
pub mod checkpoint;
pub mod chunk;
pub mod clock;
pub mod columnar;
pub mod config;
pub mod element;
pub mod error;
pub mod fixture;
pub mod graph;
pub mod harness;
pub mod ids;
pub mod java_hash;
pub mod java_random;
pub mod job;
pub mod jobs;
pub mod lifecycle;
pub mod lookup;
pub mod memory;
pub mod metrics;
pub mod operator;
pub mod parse;
pub mod partition;
pub mod print;
pub mod report;
pub mod row;
pub mod settings;
pub mod state;
pub mod subtask;
pub mod time_zone;
pub mod timers;
pub mod types;
pub mod value;

mod actor;
mod chain;
mod input;

pub use chunk::{Chunk, Columns};
pub use clock::{Clock, ManualClock, SystemClock};
pub use config::RuntimeConfig;
pub use element::StreamElement;
pub use error::{Error, Result};
pub use graph::{JobGraph, VertexId};
pub use job::{JobHandle, JobStatus};
pub use lookup::{LookupFunction, LookupFuture, LookupProvider, LookupRows};
pub use operator::{AsyncNotifier, AsyncState, Operator, OperatorContext, Output, Source, SourceStatus};
pub use partition::ShipStrategy;
pub use row::{Row, RowKind};
pub use subtask::{SourceProgress, Splits, SubtaskInfo};
pub use timers::{TimeDomain, Timer};
pub use types::{DataType, Field, LogicalType, Schema};
pub use value::{Decimal, Timestamp, Value};
