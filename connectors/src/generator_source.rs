//! A source that computes its rows from their sequence number: fast, bounded, parallel.

use std::sync::Arc;

use weir_runtime::{Chunk, OperatorContext, Output, Result, RowKind, Source, SourceStatus, SubtaskInfo, Value};

/// Fills the fields of row `n` (0-based) onto the vector.
pub type RowGenerator = Arc<dyn Fn(u64, &mut Vec<Value>) + Send + Sync>;

/// Emits `+I` rows 0..count, computed by a function. With parallelism p the sequence is
/// split into p contiguous ranges without overlap or gaps, one per subtask.
#[derive(Clone)]
pub struct GeneratorSource {
    name: String,
    arity: usize,
    count: u64,
    generate: RowGenerator,
    next: u64,
    end: u64,
}

impl std::fmt::Debug for GeneratorSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GeneratorSource")
            .field("name", &self.name)
            .field("next", &self.next)
            .field("end", &self.end)
            .finish()
    }
}

impl GeneratorSource {
    /// A source named `name` of `count` rows with `arity` fields.
    pub fn new(name: impl Into<String>, arity: usize, count: u64, generate: RowGenerator) -> Self {
        GeneratorSource { name: name.into(), arity, count, generate, next: 0, end: count }
    }

    /// The instance for one subtask: rows `[count * i / p, count * (i + 1) / p)`.
    pub fn for_subtask(&self, info: &SubtaskInfo) -> Self {
        let p = info.parallelism.max(1) as u128;
        let range = |i: u128| (u128::from(self.count) * i / p) as u64;
        let i = info.index as u128;
        GeneratorSource { next: range(i), end: range(i + 1), ..self.clone() }
    }
}

impl Source for GeneratorSource {
    fn name(&self) -> &str {
        &self.name
    }

    fn poll_next(&mut self, ctx: &mut OperatorContext, out: &mut Output) -> Result<SourceStatus> {
        let rows = (self.end - self.next).min(ctx.chunk_size() as u64);
        let mut chunk = Chunk::with_capacity(self.arity, rows as usize);
        for n in self.next..self.next + rows {
            chunk.push_with(RowKind::Insert, |fields| (self.generate)(n, fields));
        }
        if chunk.len() as u64 != rows {
            return Err(weir_runtime::Error::execution(format!(
                "the row generator of '{}' did not produce {} fields per row",
                self.name, self.arity
            )));
        }
        self.next += rows;
        out.collect(chunk);
        Ok(if self.next < self.end { SourceStatus::Ready } else { SourceStatus::Finished })
    }
}
