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
    /// `key` is taken when the lookup starts (`None` from the start for a NULL key).
    Record {
        kind: RowKind,
        row: Vec<Value>,
        key: Option<Vec<Value>>,
        joined: Option<Chunk>,
        origin: u64,
    },
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
                let future = lookup(&self.function, &self.spec, key.take(), &self.options);
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
                Slot::Record { joined: Some(chunk), origin, .. } => {
                    if blocked && self.options.ordered {
                        break;
                    }
                    if rows.origin_nanos() == 0 {
                        rows.set_origin_nanos(*origin);
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
        "LookupJoin"
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
            let origin = chunk.origin_nanos();
            let seq = self.push_slot(Slot::Record { kind, row: row.to_vec(), key, joined: None, origin });
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use weir_runtime::harness::OperatorHarness;
    use weir_runtime::{DataType, LookupFuture};

    use super::*;
    use crate::lookup::LookupJoinType;

    /// Finds `[k, k * 10]` after `k` milliseconds.
    struct Slow;

    impl LookupFunction for Slow {
        fn lookup(&self, key: Vec<Value>) -> LookupFuture {
            let k = key[0].as_i64().unwrap_or(0);
            Box::pin(async move {
                tokio::time::sleep(Duration::from_millis(k as u64)).await;
                Ok(vec![vec![Value::BigInt(k), Value::BigInt(k * 10)]])
            })
        }
    }

    fn operator(capacity: usize, ordered: bool) -> AsyncLookupJoinOperator {
        let spec = Arc::new(LookupJoinSpec {
            table: "dim".into(),
            join_type: LookupJoinType::Inner,
            keys: vec![crate::expr::Expr::column(0, DataType::bigint())],
            key_names: vec!["id".into()],
            dim_arity: 2,
            dim_filter: None,
            join_condition: None,
        });
        let options = AsyncLookupOptions { capacity, timeout: Duration::from_secs(10), ordered, retry: None };
        AsyncLookupJoinOperator::new(spec, Arc::new(Slow), options, 1)
    }

    #[tokio::test]
    async fn a_full_buffer_saturates_and_ordered_results_keep_input_order() {
        let mut h = OperatorHarness::new(operator(2, true));
        h.push("op | k BIGINT\n+I | 5\n+I | 1\n+I | 3").unwrap();
        h.watermark(7).unwrap();
        // Three records and a watermark held with room for two: no more input until some complete.
        assert_eq!(h.async_state(), AsyncState::Saturated);
        h.settle().await.unwrap();
        assert_eq!(h.async_state(), AsyncState::Idle);
        assert_eq!(h.take_lines(), ["+I[5, 5, 50]", "+I[1, 1, 10]", "+I[3, 3, 30]", "watermark 7"]);
    }

    #[tokio::test]
    async fn unordered_results_leave_as_they_complete_but_not_past_a_watermark() {
        let mut h = OperatorHarness::new(operator(10, false));
        h.push("op | k BIGINT\n+I | 20\n+I | 1").unwrap();
        h.watermark(7).unwrap();
        h.push("op | k BIGINT\n+I | 0").unwrap();
        h.end_input().unwrap();
        h.settle().await.unwrap();
        assert_eq!(h.take_lines(), ["+I[1, 1, 10]", "+I[20, 20, 200]", "watermark 7", "+I[0, 0, 0]"]);
    }
}
