//! One write at a time for sinks that buffer rows and hand them to a write running elsewhere (a
//! PostgreSQL transaction, a table store commit on a thread of its own): the jdbc and managed
//! sinks' shared piece. The sink keeps its buffer; this keeps the write in flight, polls it with
//! the subtask's waker, and says what the subtask's mailbox should do meanwhile.

use std::future::Future;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use weir_runtime::{AsyncState, OperatorContext};

/// The write in flight, if any.
#[derive(Default)]
pub struct WriteInFlight {
    write: Option<BoxFuture<'static, Result<(), String>>>,
}

impl WriteInFlight {
    /// Whether no write is in flight (a new one may start).
    pub fn is_idle(&self) -> bool {
        self.write.is_none()
    }

    /// Starts `write` and polls it once. Call only when [`is_idle`](Self::is_idle).
    ///
    /// # Errors
    /// The write's own error, when it finished at once.
    pub fn start(
        &mut self,
        write: impl Future<Output = Result<(), String>> + Send + 'static,
        ctx: &mut OperatorContext,
    ) -> Result<bool, String> {
        debug_assert!(self.write.is_none(), "a write is already in flight");
        self.write = Some(Box::pin(write));
        self.poll(ctx)
    }

    /// Polls the write in flight with the subtask's waker: `Ok(true)` when it has just finished
    /// (none is in flight any more), `Ok(false)` while it runs or when there is none.
    ///
    /// # Errors
    /// The write's error; none is in flight afterwards.
    pub fn poll(&mut self, ctx: &mut OperatorContext) -> Result<bool, String> {
        let Some(write) = self.write.as_mut() else { return Ok(false) };
        let waker = ctx.waker();
        let Poll::Ready(result) = write.as_mut().poll(&mut Context::from_waker(&waker)) else { return Ok(false) };
        self.write = None;
        result.map(|()| true)
    }

    /// The sink's state for its mailbox: idle without a write, saturated (no input taken) while
    /// one is in flight and the sink's buffer is `full`, busy otherwise.
    pub fn async_state(&self, full: bool) -> AsyncState {
        match (&self.write, full) {
            (None, _) => AsyncState::Idle,
            (Some(_), true) => AsyncState::Saturated,
            (Some(_), false) => AsyncState::Busy,
        }
    }
}
