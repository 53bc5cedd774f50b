//! The key-ordered async lookup join (Flink's TableKeyedAsyncWaitOperator, FLIP-519): for
//! updating input, the changes of one update key are looked up one at a time, in arrival
//! order, while different keys are looked up concurrently.

use std::collections::VecDeque;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use futures::stream::{FuturesUnordered, StreamExt};
use hashbrown::HashMap;
use weir_runtime::element::StreamElement;
use weir_runtime::{
    AsyncState, Chunk, LookupFunction, LookupRows, Operator, OperatorContext, Output, Result, RowKind, Value,
};

use super::{lookup, AsyncLookupOptions, LookupJoinSpec};

/// A record on its way through the operator.
struct Record {
    kind: RowKind,
    row: Vec<Value>,
    lookup_key: Option<Vec<Value>>,
    order_key: Vec<Value>,
    epoch: u64,
    /// When the record's data left its source (for latency).
    origin: u64,
}

/// The records between two watermarks (or flush markers): their results collect here and leave
/// once every earlier epoch is done; the marker that closes the epoch leaves after them.
struct Epoch {
    pending: usize,
    outputs: Chunk,
    closed_by: Option<StreamElement>,
}

type Pending = BoxFuture<'static, (Record, Result<LookupRows>)>;

/// Joins each input row with the rows its lookup finds, one lookup at a time per update key.
///
/// Guarantees: the results of one update key leave in the order its records arrived; at most
/// one lookup per key is in flight and at most `capacity` in all; the operator reports itself
/// saturated while it holds `capacity` records or more; a watermark or flush marker leaves only
/// after the results of every record that arrived before it; results within one epoch leave in
/// completion order. A failed or timed-out lookup fails the job.
pub struct KeyOrderedLookupJoinOperator {
    spec: Arc<LookupJoinSpec>,
    function: Arc<dyn LookupFunction>,
    options: AsyncLookupOptions,
    input_arity: usize,
    /// Columns of the update key (all columns when the input has none).
    order_key: Vec<usize>,
    /// Keys with a record in flight or waiting for capacity, and the records queued behind it.
    blocked: HashMap<Vec<Value>, VecDeque<Record>>,
    /// Records whose key is free, waiting for room under `capacity`.
    waiting: VecDeque<Record>,
    in_flight: FuturesUnordered<Pending>,
    epochs: VecDeque<Epoch>,
    first_epoch: u64,
    held: usize,
}

impl KeyOrderedLookupJoinOperator {
    /// A key-ordered lookup join over input rows of `input_arity` columns, ordered by the
    /// columns `order_key`.
    pub fn new(
        spec: Arc<LookupJoinSpec>,
        function: Arc<dyn LookupFunction>,
        options: AsyncLookupOptions,
        input_arity: usize,
        order_key: Vec<usize>,
    ) -> Self {
        let outputs = Chunk::new(spec.output_arity(input_arity));
        KeyOrderedLookupJoinOperator {
            spec,
            function,
            options: AsyncLookupOptions { capacity: options.capacity.max(1), ..options },
            input_arity,
            order_key,
            blocked: HashMap::new(),
            waiting: VecDeque::new(),
            in_flight: FuturesUnordered::new(),
            epochs: VecDeque::from([Epoch { pending: 0, outputs, closed_by: None }]),
            first_epoch: 0,
            held: 0,
        }
    }

    fn current_epoch(&self) -> u64 {
        self.first_epoch + self.epochs.len() as u64 - 1
    }

    fn launch(&mut self, record: Record) {
        let future = lookup(&self.function, &self.spec, record.lookup_key.clone(), &self.options);
        self.in_flight.push(Box::pin(async move { (record, future.await) }));
    }

    /// Starts lookups while there is room, takes in completed ones and emits what may leave.
    fn pump(&mut self, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        let waker = ctx.waker();
        let mut cx = Context::from_waker(&waker);
        loop {
            while self.in_flight.len() < self.options.capacity {
                let Some(record) = self.waiting.pop_front() else { break };
                self.launch(record);
            }
            let mut completed = false;
            while let Poll::Ready(Some((record, result))) = self.in_flight.poll_next_unpin(&mut cx) {
                completed = true;
                self.complete(record, result?)?;
            }
            if !completed || self.waiting.is_empty() {
                break;
            }
        }
        self.emit(out);
        Ok(())
    }

    /// Adds a record's result to its epoch's output and frees its key.
    fn complete(&mut self, record: Record, rows: LookupRows) -> Result<()> {
        self.held -= 1;
        let epoch = &mut self.epochs[(record.epoch - self.first_epoch) as usize];
        epoch.pending -= 1;
        if epoch.outputs.origin_nanos() == 0 {
            epoch.outputs.set_origin_nanos(record.origin);
        }
        self.spec.join_into(record.kind, &record.row, &rows, &mut epoch.outputs)?;
        match self.blocked.get_mut(&record.order_key).and_then(VecDeque::pop_front) {
            Some(next) => self.waiting.push_back(next),
            None => {
                self.blocked.remove(&record.order_key);
            }
        }
        Ok(())
    }

    /// Emits the oldest epoch's results; then, while that epoch is done, its closing marker and
    /// the next epoch's results.
    fn emit(&mut self, out: &mut Output) {
        let arity = self.spec.output_arity(self.input_arity);
        loop {
            out.collect(std::mem::replace(&mut self.epochs[0].outputs, Chunk::new(arity)));
            if self.epochs.len() == 1 || self.epochs[0].pending > 0 {
                return;
            }
            let Some(epoch) = self.epochs.pop_front() else { return };
            self.first_epoch += 1;
            if let Some(mark) = epoch.closed_by {
                out.emit(mark);
            }
        }
    }

    fn close_epoch(&mut self, mark: StreamElement, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        let arity = self.spec.output_arity(self.input_arity);
        if let Some(last) = self.epochs.back_mut() {
            last.closed_by = Some(mark);
        }
        self.epochs.push_back(Epoch { pending: 0, outputs: Chunk::new(arity), closed_by: None });
        self.pump(ctx, out)
    }
}

impl Operator for KeyOrderedLookupJoinOperator {
    fn name(&self) -> &str {
        "LookupJoin"
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        ctx: &mut OperatorContext,
        out: &mut Output,
    ) -> Result<()> {
        let epoch = self.current_epoch();
        for (kind, row) in chunk.rows() {
            let record = Record {
                kind,
                row: row.to_vec(),
                lookup_key: self.spec.key_of(row)?,
                order_key: self.order_key.iter().map(|&c| row[c].clone()).collect(),
                epoch,
                origin: chunk.origin_nanos(),
            };
            self.held += 1;
            if let Some(e) = self.epochs.back_mut() {
                e.pending += 1;
            }
            match self.blocked.get_mut(&record.order_key) {
                Some(queue) => queue.push_back(record),
                None => {
                    self.blocked.insert(record.order_key.clone(), VecDeque::new());
                    self.waiting.push_back(record);
                }
            }
        }
        self.pump(ctx, out)
    }

    fn process_watermark(&mut self, watermark: i64, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        self.close_epoch(StreamElement::Watermark(watermark), ctx, out)
    }

    fn process_flush_marker(&mut self, marker: i64, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        self.close_epoch(StreamElement::FlushMarker(marker), ctx, out)
    }

    fn async_state(&self) -> AsyncState {
        if self.held == 0 && self.epochs.len() == 1 {
            AsyncState::Idle
        } else if self.held >= self.options.capacity {
            AsyncState::Saturated
        } else {
            AsyncState::Busy
        }
    }

    fn poll_async(&mut self, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        self.pump(ctx, out)
    }
}
