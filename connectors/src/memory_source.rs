//! An in-memory source: rows, watermarks and pauses given up front.

use std::sync::Arc;
use std::time::Duration;

use weir_runtime::{Chunk, OperatorContext, Output, Result, Row, Source, SourceStatus, SubtaskInfo};

/// One step of a [`MemorySource`]'s script.
#[derive(Debug, Clone, PartialEq)]
pub enum SourceStep {
    /// Rows to emit. With parallelism p, subtask i emits rows i, i + p, i + 2p, … of the step.
    Rows(Vec<Row>),
    /// A watermark every subtask emits after the rows before it.
    Watermark(i64),
    /// Every subtask waits until processing time reaches this many epoch milliseconds.
    WaitUntil(i64),
}

/// A bounded source that plays a script of [`SourceStep`]s, then finishes.
#[derive(Debug, Clone)]
pub struct MemorySource {
    name: String,
    arity: usize,
    steps: Arc<[SourceStep]>,
    subtask: usize,
    parallelism: usize,
    step: usize,
    row: usize,
}

impl MemorySource {
    /// A source named `name` of rows with `arity` fields playing `steps`.
    pub fn new(name: impl Into<String>, arity: usize, steps: Vec<SourceStep>) -> Self {
        MemorySource { name: name.into(), arity, steps: steps.into(), subtask: 0, parallelism: 1, step: 0, row: 0 }
    }

    /// A source that emits `rows` and finishes.
    pub fn from_rows(name: impl Into<String>, arity: usize, rows: Vec<Row>) -> Self {
        Self::new(name, arity, vec![SourceStep::Rows(rows)])
    }

    /// The instance for one subtask: it plays its share of the rows.
    pub fn for_subtask(&self, info: &SubtaskInfo) -> Self {
        MemorySource { subtask: info.index, parallelism: info.parallelism.max(1), step: 0, row: 0, ..self.clone() }
    }
}

impl Source for MemorySource {
    fn name(&self) -> &str {
        &self.name
    }

    fn poll_next(&mut self, ctx: &mut OperatorContext, out: &mut Output) -> Result<SourceStatus> {
        let Some(step) = self.steps.get(self.step) else {
            return Ok(SourceStatus::Finished);
        };
        match step {
            SourceStep::Rows(rows) => {
                let mut chunk = Chunk::with_capacity(self.arity, ctx.chunk_size());
                let mut i = self.row.max(self.subtask);
                while i < rows.len() && chunk.len() < ctx.chunk_size() {
                    if rows[i].values.len() != self.arity {
                        return Err(weir_runtime::Error::execution(format!(
                            "row {} has {} fields, the source declares {}",
                            rows[i],
                            rows[i].values.len(),
                            self.arity
                        )));
                    }
                    chunk.push(rows[i].kind, &rows[i].values);
                    i += self.parallelism;
                }
                out.collect(chunk);
                if i >= rows.len() {
                    self.step += 1;
                    self.row = 0;
                } else {
                    self.row = i;
                }
            }
            SourceStep::Watermark(w) => {
                out.emit_watermark(*w);
                self.step += 1;
            }
            SourceStep::WaitUntil(t) => {
                let now = ctx.processing_time();
                if now < *t {
                    return Ok(SourceStatus::Wait(Duration::from_millis((t - now) as u64)));
                }
                self.step += 1;
            }
        }
        Ok(if self.step < self.steps.len() { SourceStatus::Ready } else { SourceStatus::Finished })
    }
}
