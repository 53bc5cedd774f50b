//! Lookup joins in the pipeline API: enrich a stream with rows a [`LookupFunction`] finds.
//!
//! ```
//! use std::sync::Arc;
//! use weir::lookup::LookupJoin;
//! use weir::prelude::*;
//! use weir::runtime::{LookupFunction, LookupFuture};
//!
//! /// Every id names itself.
//! struct Names;
//! impl LookupFunction for Names {
//!     fn lookup(&self, key: Vec<Value>) -> LookupFuture {
//!         let name = Value::string(&format!("user-{}", weir::runtime::print::value_to_string(&key[0])));
//!         Box::pin(async move { Ok(vec![vec![key[0].clone(), name]]) })
//!     }
//! }
//!
//! let pipeline = Pipeline::new(RuntimeConfig::default());
//! let ids = pipeline.from_rows(
//!     "ids",
//!     Schema::new(vec![Field::new("id", DataType::int())]),
//!     vec![Row::insert(vec![Value::Int(1)]), Row::insert(vec![Value::Int(2)])],
//! );
//! let users = Schema::new(vec![Field::new("id", DataType::int()), Field::new("name", DataType::string())]);
//! let join = LookupJoin::new("users", users, &["id"], Arc::new(Names), &[0]).unwrap().ordered(10);
//! let rows = ids.lookup_join(join).collect();
//! pipeline.run().unwrap();
//! assert_eq!(rows.lines(), ["+I[1, 1, user-1]", "+I[2, 2, user-2]"]);
//! ```

use std::sync::Arc;
use std::time::Duration;

use weir_operators::expr::Expr;
use weir_operators::{lookup_join_factory, AsyncLookupOptions, LookupJoinSpec, LookupJoinType};
use weir_runtime::{Error, LookupFunction, Result, Schema, ShipStrategy};

use crate::pipeline::Stream;

/// How lookups are scheduled.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Scheduling {
    Sync,
    Async { ordered: bool },
    KeyOrdered { order_key: Vec<usize> },
}

/// A lookup join: which table, by which input columns, and how lookups are scheduled.
/// Defaults: INNER, ORDERED async lookups, capacity 100, timeout 3 minutes (Flink's defaults).
#[derive(Clone)]
pub struct LookupJoin {
    table: String,
    dim_schema: Schema,
    key_names: Vec<String>,
    function: Arc<dyn LookupFunction>,
    input_keys: Vec<usize>,
    join_type: LookupJoinType,
    scheduling: Scheduling,
    capacity: usize,
    timeout: Duration,
}

impl LookupJoin {
    /// A join with table `table` (columns `dim_schema`) looked up by its columns `key_columns`
    /// through `function`, whose key values come from the input columns `input_keys`.
    ///
    /// # Errors
    /// A key column the table does not have, or a different number of key and input columns.
    pub fn new(
        table: &str,
        dim_schema: Schema,
        key_columns: &[&str],
        function: Arc<dyn LookupFunction>,
        input_keys: &[usize],
    ) -> Result<Self> {
        if key_columns.len() != input_keys.len() || key_columns.is_empty() {
            return Err(Error::InvalidGraph(format!(
                "a lookup join on '{table}' needs one input column per key column: {} key columns, {} input columns",
                key_columns.len(),
                input_keys.len()
            )));
        }
        for c in key_columns {
            if !dim_schema.fields.iter().any(|f| f.name == *c) {
                return Err(Error::InvalidGraph(format!("table '{table}' has no column '{c}' to look up by")));
            }
        }
        Ok(LookupJoin {
            table: table.to_string(),
            dim_schema,
            key_names: key_columns.iter().map(|c| c.to_string()).collect(),
            function,
            input_keys: input_keys.to_vec(),
            join_type: LookupJoinType::Inner,
            scheduling: Scheduling::Async { ordered: true },
            capacity: 100,
            timeout: Duration::from_secs(180),
        })
    }

    /// Keeps input rows without a match, padded with NULLs (`LEFT JOIN`).
    pub fn left_outer(mut self) -> Self {
        self.join_type = LookupJoinType::LeftOuter;
        self
    }

    /// One lookup at a time per subtask, results in input order.
    pub fn sync(mut self) -> Self {
        self.scheduling = Scheduling::Sync;
        self.capacity = 1;
        self
    }

    /// Up to `capacity` lookups in flight, results in input order.
    pub fn ordered(mut self, capacity: usize) -> Self {
        self.scheduling = Scheduling::Async { ordered: true };
        self.capacity = capacity;
        self
    }

    /// Up to `capacity` lookups in flight, results as they complete (between watermarks).
    /// Only correct for insert-only input.
    pub fn unordered(mut self, capacity: usize) -> Self {
        self.scheduling = Scheduling::Async { ordered: false };
        self.capacity = capacity;
        self
    }

    /// Up to `capacity` lookups in flight but one per value of the input columns `order_key`
    /// (the update key), whose results leave in arrival order. The stream is hashed on
    /// `order_key` first so that each key is looked up by one subtask.
    pub fn key_ordered(mut self, order_key: &[usize], capacity: usize) -> Self {
        self.scheduling = Scheduling::KeyOrdered { order_key: order_key.to_vec() };
        self.capacity = capacity;
        self
    }

    /// The longest a record may wait for its lookup before the job fails.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
}

impl Stream {
    /// Joins each row with the rows `join` looks up; the output has this stream's columns
    /// followed by the table's, and each input row's kind.
    pub fn lookup_join(&self, join: LookupJoin) -> Stream {
        let input_schema = self.schema().clone();
        let input_arity = input_schema.arity();
        let keys = join.input_keys.iter().map(|&k| Expr::column(k, input_schema.fields[k].data_type.clone())).collect();
        let spec = Arc::new(LookupJoinSpec {
            table: join.table.clone(),
            join_type: join.join_type,
            keys,
            key_names: join.key_names.clone(),
            dim_arity: join.dim_schema.arity(),
            dim_filter: None,
            join_condition: None,
        });
        let mut fields = input_schema.fields.clone();
        fields.extend(join.dim_schema.fields.iter().cloned().map(|mut f| {
            f.data_type.nullable |= join.join_type == LookupJoinType::LeftOuter;
            f
        }));
        let schema = Schema::new(fields);
        let ordered = join.scheduling != Scheduling::Async { ordered: false };
        let options = AsyncLookupOptions { capacity: join.capacity, timeout: join.timeout, ordered, retry: None };
        match join.scheduling {
            Scheduling::KeyOrdered { order_key } => {
                let factory = lookup_join_factory(spec, join.function, options, input_arity, Some(order_key.clone()));
                // Each update key is looked up by one subtask.
                self.partition(ShipStrategy::Hash(order_key)).then("LookupJoin", schema, factory)
            }
            _ => self.then("LookupJoin", schema, lookup_join_factory(spec, join.function, options, input_arity, None)),
        }
    }
}
