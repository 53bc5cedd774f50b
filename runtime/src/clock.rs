//! Processing time: a clock that tests can replace, and a monotonic clock for latency.

use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures::future::BoxFuture;
use tokio::sync::watch;

/// The source of processing time for a job: timers, idleness and mini-batch intervals.
///
/// Implementations must be monotonic: `now_millis` never goes back.
pub trait Clock: Send + Sync + 'static {
    /// Current processing time in milliseconds since the epoch.
    fn now_millis(&self) -> i64;

    /// A future that completes once `now_millis() >= millis`.
    fn sleep_until(&self, millis: i64) -> BoxFuture<'static, ()>;
}

/// The wall clock, with tokio timers.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_millis(&self) -> i64 {
        SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
    }

    fn sleep_until(&self, millis: i64) -> BoxFuture<'static, ()> {
        let wait = (millis - self.now_millis()).max(0) as u64;
        Box::pin(tokio::time::sleep(Duration::from_millis(wait)))
    }
}

/// A clock that moves only when told to; for tests of timers and idleness.
#[derive(Debug)]
pub struct ManualClock {
    now: watch::Sender<i64>,
}

impl ManualClock {
    /// A clock standing at `millis`.
    pub fn new(millis: i64) -> Self {
        ManualClock { now: watch::Sender::new(millis) }
    }

    /// Moves the clock forward by `millis` and wakes every sleeper whose time has come.
    pub fn advance(&self, millis: i64) {
        self.now.send_modify(|now| *now += millis.max(0));
    }

    /// Moves the clock to `millis`, if that is later than now.
    pub fn set(&self, millis: i64) {
        self.now.send_if_modified(|now| {
            let later = millis > *now;
            *now = (*now).max(millis);
            later
        });
    }
}

impl Clock for ManualClock {
    fn now_millis(&self) -> i64 {
        *self.now.borrow()
    }

    fn sleep_until(&self, millis: i64) -> BoxFuture<'static, ()> {
        let mut rx = self.now.subscribe();
        Box::pin(async move {
            // An error means the clock is gone: nothing will ever wake us, so stop waiting.
            let _ = rx.wait_for(|now| *now >= millis).await;
        })
    }
}

/// Nanoseconds since the first call in this process, from a monotonic clock; never 0.
pub fn monotonic_nanos() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    let start = *START.get_or_init(Instant::now);
    start.elapsed().as_nanos() as u64 + 1
}

/// Milliseconds since the epoch, by the wall clock ([`SystemClock`]).
pub fn epoch_millis() -> i64 {
    SystemClock.now_millis()
}
