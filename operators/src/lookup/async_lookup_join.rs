//! The lookup join that keeps up to `capacity` lookups in flight (Flink's AsyncWaitOperator
//! around an AsyncLookupJoinRunner; sync lookups are the same with a capacity of 1).

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use futures::stream::{FuturesUnordered, StreamExt};
use weir_runtime::element::StreamElement;
use weir_runtime::{
    AsyncState, Chunk, LookupFunction, LookupRows, Operator, OperatorContext, Output, Result, RowKind, Value,
};

use super::{lookup, AsyncLookupOptions, LookupJoinSpec};

/// A record or a watermark/flush marker waiting to be emitted, in arrival order.
enum Slot {
    Record { kind: RowKind, row: Vec<Value>, key: Option<Option<Vec<Value>>>, joined: Option<Chunk> },
    Mark(StreamElement),
}

type Pending = BoxFuture<'static, (u64, Result<LookupRows>)>;

/// Joins each input row with the rows its lookup finds.
///
/// Guarantees: at most `capacity` lookups in flight; the operator reports itself saturated
/// while it holds `capacity` records or more, so the runtime stops feeding it. ORDERED emits
/// results in input order. UNORDERED emits a result as soon as its lookup completes, but never
/// before a watermark or flush marker that arrived ahead of its record, nor such a marker before
/// the records that arrived ahead of it. A failed or timed-out lookup fails the job.
pub struct AsyncLookupJoinOperator {
    name: String,
    spec: Arc<LookupJoinSpec>,
    function: Arc<dyn LookupFunction>,
    options: AsyncLookupOptions,
    input_arity: usize,
    next_seq: u64,
    slots: BTreeMap<u64, Slot>,
    unlaunched: VecDeque<u64>,
    in_flight: FuturesUnordered<Pending>,
}

impl AsyncLookupJoinOperator {
    /// A lookup join over input rows of `input_arity` columns.
    pub fn new(
        spec: Arc<LookupJoinSpec>,
        function: Arc<dyn LookupFunction>,
        options: AsyncLookupOptions,
        input_arity: usize,
    ) -> Self {
        AsyncLookupJoinOperator {
            name: "LookupJoin".to_string(),
            spec,
            function,
            options: AsyncLookupOptions { capacity: options.capacity.max(1), ..options },
            input_arity,
            next_seq: 0,
            slots: BTreeMap::new(),
            unlaunched: VecDeque::new(),
            in_flight: FuturesUnordered::new(),
        }
    }

    fn push_slot(&mut self, slot: Slot) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.slots.insert(seq, slot);
        seq
    }

    /// Starts lookups while there is room, takes in completed ones and emits what may leave.
    fn pump(&mut self, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        let waker = ctx.waker();
        let mut cx = Context::from_waker(&waker);
        loop {
            while self.in_flight.len() < self.options.capacity {
                let Some(seq) = self.unlaunched.pop_front() else { break };
                let Some(Slot::Record { key, .. }) = self.slots.get_mut(&seq) else { continue };
                let future = lookup(&self.function, &self.spec, key.take().flatten(), &self.options);
                self.in_flight.push(Box::pin(async move { (seq, future.await) }));
            }
            let mut completed = false;
            while let Poll::Ready(Some((seq, result))) = self.in_flight.poll_next_unpin(&mut cx) {
                completed = true;
                let rows = result?;
                if let Some(Slot::Record { kind, row, joined, .. }) = self.slots.get_mut(&seq) {
                    let mut chunk = Chunk::with_capacity(self.spec.output_arity(self.input_arity), rows.len().max(1));
                    self.spec.join_into(*kind, row, &rows, &mut chunk)?;
                    *joined = Some(chunk);
                }
            }
            if !completed || self.unlaunched.is_empty() {
                break;
            }
        }
        self.emit(out);
        Ok(())
    }

    /// Emits the completed records and markers that may leave, in the mode's order.
    fn emit(&mut self, out: &mut Output) {
        let mut rows = Chunk::new(self.spec.output_arity(self.input_arity));
        let mut done = Vec::new();
        let mut blocked = false;
        for (&seq, slot) in &mut self.slots {
            match slot {
                Slot::Record { joined: Some(chunk), .. } => {
                    if blocked && self.options.ordered {
                        break;
                    }
                    for (kind, row) in chunk.rows() {
                        rows.push(kind, row);
                    }
                    done.push(seq);
                }
                Slot::Record { joined: None, .. } => {
                    blocked = true;
                    if self.options.ordered {
                        break;
                    }
                }
                Slot::Mark(mark) => {
                    if blocked {
                        break;
                    }
                    out.collect(std::mem::replace(&mut rows, Chunk::new(self.spec.output_arity(self.input_arity))));
                    out.emit(mark.clone());
                    done.push(seq);
                }
            }
        }
        out.collect(rows);
        for seq in done {
            self.slots.remove(&seq);
        }
    }
}

impl Operator for AsyncLookupJoinOperator {
    fn name(&self) -> &str {
        &self.name
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        ctx: &mut OperatorContext,
        out: &mut Output,
    ) -> Result<()> {
        for (kind, row) in chunk.rows() {
            let key = self.spec.key_of(row)?;
            let seq = self.push_slot(Slot::Record { kind, row: row.to_vec(), key: Some(key), joined: None });
            self.unlaunched.push_back(seq);
        }
        self.pump(ctx, out)
    }

    fn process_watermark(&mut self, watermark: i64, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        self.push_slot(Slot::Mark(StreamElement::Watermark(watermark)));
        self.pump(ctx, out)
    }

    fn process_flush_marker(&mut self, marker: i64, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        self.push_slot(Slot::Mark(StreamElement::FlushMarker(marker)));
        self.pump(ctx, out)
    }

    fn async_state(&self) -> AsyncState {
        if self.slots.is_empty() {
            AsyncState::Idle
        } else if self.slots.len() >= self.options.capacity {
            AsyncState::Saturated
        } else {
            AsyncState::Busy
        }
    }

    fn poll_async(&mut self, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        self.pump(ctx, out)
    }
}
