//! weir runs Flink SQL on one machine. This crate is its library facade: build and run
//! pipelines from Rust with the [`pipeline`] API, on the actor-based runtime in
//! [`runtime`].
//!
//! The crates behind it: [`runtime`] (data model, execution), [`operators`] (stream
//! operators), [`connectors`] (sources and sinks), [`planner`] (SQL to plans and job graphs),
//! [`session`] (statements, jobs and what outlives them), [`store`] (managed tables) and [`web`]
//! (Flink's REST API, the dashboard and Prometheus metrics over a [`runtime::jobs::JobRegistry`]).

pub mod lookup;
pub mod pipeline;
pub mod stats;

pub use weir_connectors as connectors;
pub use weir_operators as operators;
pub use weir_planner as planner;
pub use weir_runtime as runtime;
pub use weir_session as session;
pub use weir_store as store;
pub use weir_web as web;

/// The names most pipelines need.
pub mod prelude {
    pub use crate::lookup::LookupJoin;
    pub use crate::pipeline::{KeyedStream, Pipeline, Stream};
    pub use weir_connectors::{
        BatchCollectHandle, ChangelogBatch, CollectHandle, ConnectorRegistry, PrintTarget, TableDescriptor,
    };
    pub use weir_operators::aggregate::AggregateUdf;
    pub use weir_operators::expr::functions::{Arity, Nulls, ScalarFunction, ScalarRef};
    pub use weir_operators::expr::ExprError;
    pub use weir_operators::{CountByKey, KeyedProcessFunction, TableUdf};
    pub use weir_runtime::columnar::RecordBatch;
    pub use weir_runtime::{
        Chunk, DataType, Error, Field, JobHandle, JobStatus, OperatorContext, Result, Row, RowKind, RuntimeConfig,
        Schema, Timer, Timestamp, Value,
    };
    pub use weir_session::Session;
}
