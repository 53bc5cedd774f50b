//! Projection push-down for any source: only the columns a query reads leave the source.

use weir_runtime::checkpoint::{StateReader, StateWriter};
use weir_runtime::{OperatorContext, Output, Result, Source, SourceStatus, StreamElement};

/// Wraps a source and keeps, in order, the columns listed in `projection` of every row.
pub struct ProjectingSource {
    inner: Box<dyn Source>,
    projection: Vec<usize>,
    buffer: Output,
}

impl ProjectingSource {
    /// A source emitting `projection`'s columns of `inner`'s rows.
    pub fn new(inner: Box<dyn Source>, projection: Vec<usize>) -> Self {
        ProjectingSource { inner, projection, buffer: Output::new() }
    }
}

impl Source for ProjectingSource {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn open(&mut self, ctx: &mut OperatorContext) -> Result<()> {
        self.inner.open(ctx)
    }

    fn poll_next(&mut self, ctx: &mut OperatorContext, out: &mut Output) -> Result<SourceStatus> {
        let status = self.inner.poll_next(ctx, &mut self.buffer)?;
        for element in self.buffer.drain() {
            match element {
                StreamElement::Chunk(chunk) => out.collect(chunk.project(&self.projection)),
                other => out.emit(other),
            }
        }
        Ok(status)
    }

    /// The inner source's state: projecting keeps none of its own.
    fn snapshot_state(&mut self, checkpoint: u64, ctx: &mut OperatorContext, state: &mut StateWriter) -> Result<()> {
        self.inner.snapshot_state(checkpoint, ctx, state)
    }

    fn restore_state(&mut self, ctx: &mut OperatorContext, states: &[StateReader]) -> Result<()> {
        self.inner.restore_state(ctx, states)
    }

    fn notify_checkpoint_complete(&mut self, checkpoint: u64, ctx: &mut OperatorContext) -> Result<()> {
        self.inner.notify_checkpoint_complete(checkpoint, ctx)
    }

    fn caught_up(&self) -> bool {
        self.inner.caught_up()
    }

    fn idle_now(&self) -> bool {
        self.inner.idle_now()
    }

    fn progress(&self) -> Option<weir_runtime::SourceProgress> {
        self.inner.progress()
    }

    fn emits_nothing(&self) -> bool {
        self.inner.emits_nothing()
    }

    fn splits(&self) -> Option<weir_runtime::Splits> {
        self.inner.splits()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A source whose every answer differs from the trait's default.
    struct Unusual;

    impl Source for Unusual {
        fn name(&self) -> &str {
            "unusual"
        }

        fn poll_next(&mut self, _ctx: &mut OperatorContext, _out: &mut Output) -> Result<SourceStatus> {
            Ok(SourceStatus::Finished)
        }

        fn progress(&self) -> Option<weir_runtime::SourceProgress> {
            Some(weir_runtime::SourceProgress { bytes_read: 3, bytes_total: 7 })
        }

        fn caught_up(&self) -> bool {
            false
        }

        fn idle_now(&self) -> bool {
            true
        }

        fn emits_nothing(&self) -> bool {
            true
        }

        fn splits(&self) -> Option<weir_runtime::Splits> {
            Some(weir_runtime::Splits { current: 1, open: vec![false, true] })
        }
    }

    /// A projected source answers what its source answers: a Kafka subtask given no partition
    /// is idle at once, projected or not; a file source's progress shows through.
    #[test]
    fn a_projected_source_answers_as_its_source() {
        let projected = ProjectingSource::new(Box::new(Unusual), vec![0]);
        let inner = Unusual;
        assert_eq!(projected.name(), inner.name());
        assert_eq!(projected.progress(), inner.progress());
        assert_eq!(projected.caught_up(), inner.caught_up());
        assert_eq!(projected.idle_now(), inner.idle_now());
        assert_eq!(projected.emits_nothing(), inner.emits_nothing());
        assert_eq!(projected.splits().map(|s| (s.current, s.open)), inner.splits().map(|s| (s.current, s.open)));
    }
}
