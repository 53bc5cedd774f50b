//! Correlate: each input row joined with the rows a table expression gives for it, as Flink's
//! `Correlate` joins them: `CROSS JOIN UNNEST(collection)` (the elements of an ARRAY or the
//! entries of a MAP, [`unnest`]) and `LATERAL TABLE(function(args))` (the rows a table function
//! emits, [`table_function`]), or their `LEFT JOIN … ON TRUE` forms.
//!
//! Each input row is followed by its generated rows: one output row per generated row, the
//! input's columns first, with the input row's kind. A row that generates nothing gives no row,
//! or with `left` one row whose generated columns are NULL.
//!
//! A function that produces its rows lazily ([`TableUdf::streams`], a Python generator) is
//! pulled a chunk at a time: once a chunk is full the operator sends it and takes no input
//! until the runtime has sent it on and asks for more ([`AsyncState::Saturated`]), keeping what
//! arrived meanwhile (rows, watermarks, flush markers) in order behind the rows still to come.
//! So an endless generator holds no more than a chunk, and ends when the job does.

pub mod table_function;
pub mod unnest;

use std::collections::VecDeque;
use std::sync::Arc;

use weir_runtime::{AsyncState, Chunk, Error, Operator, OperatorContext, Output, Result, RowKind, Value};

use crate::expr::Expr;
use crate::spec::OperatorSpec;
pub use table_function::{RowStream, TableFunctionCall, TableRows, TableUdf};
use unnest::Elements;

/// What a correlate joins each input row with.
#[derive(Debug, Clone)]
pub enum CorrelatedTable {
    /// `UNNEST(collection) [WITH ORDINALITY]`.
    Unnest {
        /// The collection, over the input row: an ARRAY or a MAP.
        collection: Expr,
        /// `WITH ORDINALITY`: a last column numbers the elements from 1 (NULL on a kept row
        /// without).
        ordinality: bool,
    },
    /// `LATERAL TABLE(function(args))`.
    Function(TableFunctionCall),
}

impl CorrelatedTable {
    /// How many columns each generated row adds.
    pub fn width(&self) -> usize {
        match self {
            CorrelatedTable::Unnest { collection, ordinality } => {
                Elements::of(collection.ty()).width() + usize::from(*ordinality)
            }
            CorrelatedTable::Function(call) => call.fields.len(),
        }
    }

    /// Marks the input columns the table reads.
    pub fn mark_columns(&self, used: &mut [bool]) {
        match self {
            CorrelatedTable::Unnest { collection, .. } => collection.mark_columns(used),
            CorrelatedTable::Function(call) => call.args.iter().for_each(|a| a.mark_columns(used)),
        }
    }

    /// The table over an input whose columns moved as `map` says.
    pub fn remap(self, map: &[Option<usize>]) -> CorrelatedTable {
        match self {
            CorrelatedTable::Unnest { collection, ordinality } => {
                CorrelatedTable::Unnest { collection: collection.remap(map), ordinality }
            }
            CorrelatedTable::Function(call) => CorrelatedTable::Function(call.remap(map)),
        }
    }
}

/// Everything a [`CorrelateOperator`] is built from.
#[derive(Debug, Clone)]
pub struct CorrelateSpec {
    /// What each input row is joined with.
    pub table: CorrelatedTable,
    /// Whether a row that generates nothing is kept, with NULL generated columns.
    pub left: bool,
}

impl OperatorSpec for CorrelateSpec {
    type Operator = CorrelateOperator;

    fn build(&self, _subtask: &weir_runtime::SubtaskInfo) -> CorrelateOperator {
        CorrelateOperator::new(self.clone())
    }

    fn factory(&self) -> weir_runtime::graph::OperatorFactory {
        let spec = self.clone();
        Arc::new(move |_| Box::new(CorrelateOperator::new(spec.clone())))
    }
}

/// Joins each row with the rows its table gives (see the module).
#[derive(Debug)]
pub struct CorrelateOperator {
    spec: CorrelateSpec,
    width: usize,
    /// Whether the table is a function pulled a chunk at a time.
    streams: bool,
    /// Reused for every row: a function's arguments, an element's columns.
    scratch: Vec<Value>,
    /// The input row whose generated rows are being pulled.
    current: Option<Pulling>,
    /// What arrived while rows were still to come, in order.
    backlog: VecDeque<Held>,
}

impl Clone for CorrelateOperator {
    /// A fresh operator of the same spec (nothing in progress is cloned).
    fn clone(&self) -> Self {
        CorrelateOperator::new(self.spec.clone())
    }
}

/// An input row whose function is being pulled.
#[derive(Debug)]
struct Pulling {
    kind: RowKind,
    row: Vec<Value>,
    rows: RowStream,
    generated: usize,
}

/// An element that waits for the generated rows before it.
#[derive(Debug)]
enum Held {
    /// Input rows, from `next` on.
    Rows {
        chunk: Chunk,
        next: usize,
    },
    Watermark(i64),
    FlushMarker(i64),
}

impl CorrelateOperator {
    /// The operator of `spec`.
    pub fn new(spec: CorrelateSpec) -> Self {
        let streams = matches!(&spec.table, CorrelatedTable::Function(call) if call.function.streams());
        CorrelateOperator {
            width: spec.table.width(),
            streams,
            spec,
            scratch: Vec::new(),
            current: None,
            backlog: VecDeque::new(),
        }
    }

    /// Calls `emit` with the generated columns of each row the table gives for `row`.
    fn generate(&mut self, row: &[Value], emit: &mut dyn FnMut(&[Value])) -> Result<()> {
        let scratch = &mut self.scratch;
        match &self.spec.table {
            CorrelatedTable::Unnest { collection, ordinality } => {
                let elements = Elements::of(collection.ty());
                let value = collection.eval(row).map_err(|e| Error::execution(e.0))?;
                unnest::elements(&value, elements, *ordinality, scratch, emit)
            }
            CorrelatedTable::Function(call) => call.rows(row, scratch, emit),
        }
    }

    /// Joins every row of `chunk` with all its generated rows, at once.
    fn join_all(&mut self, chunk: &Chunk, out: &mut Output) -> Result<()> {
        let mut joined = Chunk::with_capacity(chunk.arity() + self.width, chunk.len());
        for (kind, row) in chunk.rows() {
            let mut count = 0;
            self.generate(row, &mut |generated| {
                count += 1;
                joined.push_with(kind, |values| {
                    values.extend_from_slice(row);
                    values.extend_from_slice(generated);
                });
            })?;
            if count == 0 && self.spec.left {
                push_unmatched(&mut joined, kind, row, self.width);
            }
        }
        if !joined.is_empty() {
            joined.set_origin_nanos(chunk.origin_nanos());
            out.collect(joined);
        }
        Ok(())
    }

    /// Pulls generated rows into chunks of at most the chunk size, taking the backlog in order,
    /// until a chunk is full while rows are still to come (the rest waits for the next poll)
    /// or nothing is left.
    fn pull(&mut self, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        let CorrelatedTable::Function(call) = &self.spec.table else {
            return Err(Error::execution("only a table function is pulled".to_string()));
        };
        let limit = ctx.chunk_size().max(1);
        let mut joined: Option<Chunk> = None;
        loop {
            if let Some(pulling) = &mut self.current {
                let chunk = joined.get_or_insert_with(|| Chunk::with_capacity(pulling.row.len() + self.width, limit));
                while chunk.len() < limit {
                    let Some(generated) = pulling.rows.next_row()? else { break };
                    pulling.generated += 1;
                    chunk.push_with(pulling.kind, |values| {
                        values.extend_from_slice(&pulling.row);
                        values.extend(generated);
                    });
                }
                if chunk.len() >= limit {
                    joined.take().into_iter().for_each(|j| out.collect(j));
                    ctx.waker().wake();
                    return Ok(());
                }
                if pulling.generated == 0 && self.spec.left {
                    push_unmatched(chunk, pulling.kind, &pulling.row, self.width);
                }
                self.current = None;
                continue;
            }
            let Some(held) = self.backlog.front_mut() else { break };
            match held {
                Held::Rows { chunk, next } if *next < chunk.len() => {
                    let (kind, row) = (chunk.kind(*next), chunk.row(*next).to_vec());
                    *next += 1;
                    let rows = call.stream(&row, &mut self.scratch)?;
                    self.current = Some(Pulling { kind, row, rows, generated: 0 });
                }
                Held::Rows { .. } => {
                    self.backlog.pop_front();
                }
                Held::Watermark(watermark) => {
                    let watermark = *watermark;
                    self.backlog.pop_front();
                    joined.take().into_iter().for_each(|j| out.collect(j));
                    out.emit_watermark(watermark);
                }
                Held::FlushMarker(marker) => {
                    let marker = *marker;
                    self.backlog.pop_front();
                    joined.take().into_iter().for_each(|j| out.collect(j));
                    out.emit_flush_marker(marker);
                }
            }
        }
        joined.into_iter().for_each(|j| out.collect(j));
        Ok(())
    }

    /// Whether generated rows are still to come, or input waits behind them.
    fn pending(&self) -> bool {
        self.current.is_some() || !self.backlog.is_empty()
    }
}

/// A row of `row`'s columns and NULL generated columns: `left` keeps a row that generated none.
fn push_unmatched(joined: &mut Chunk, kind: RowKind, row: &[Value], width: usize) {
    joined.push_with(kind, |values| {
        values.extend_from_slice(row);
        values.extend(std::iter::repeat_n(Value::Null, width));
    });
}

impl Operator for CorrelateOperator {
    fn name(&self) -> &str {
        "Correlate"
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        ctx: &mut OperatorContext,
        out: &mut Output,
    ) -> Result<()> {
        if !self.streams {
            return self.join_all(&chunk, out);
        }
        self.backlog.push_back(Held::Rows { chunk, next: 0 });
        if self.current.is_some() || self.backlog.len() > 1 {
            return Ok(());
        }
        self.pull(ctx, out)
    }

    fn process_watermark(&mut self, watermark: i64, _ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        if self.pending() {
            self.backlog.push_back(Held::Watermark(watermark));
        } else {
            out.emit_watermark(watermark);
        }
        Ok(())
    }

    fn process_flush_marker(&mut self, marker: i64, _ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        if self.pending() {
            self.backlog.push_back(Held::FlushMarker(marker));
        } else {
            out.emit_flush_marker(marker);
        }
        Ok(())
    }

    fn async_state(&self) -> AsyncState {
        if self.pending() {
            AsyncState::Saturated
        } else {
            AsyncState::Idle
        }
    }

    fn poll_async(&mut self, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        self.pull(ctx, out)
    }
}
