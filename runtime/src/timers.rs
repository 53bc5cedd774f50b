//! Event-time and processing-time timers of one operator instance.

use std::collections::BTreeSet;

use crate::value::Value;

/// Which clock a timer follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TimeDomain {
    /// Fires when the watermark reaches the timer's time.
    EventTime,
    /// Fires when the job's clock reaches the timer's time.
    ProcessingTime,
}

/// A timer that fired: its domain, time and the key it was registered for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timer {
    /// The clock the timer followed.
    pub domain: TimeDomain,
    /// Epoch milliseconds the timer was set for.
    pub time: i64,
    /// The key given at registration (empty for unkeyed operators).
    pub key: Vec<Value>,
}

/// Pending timers, ordered by time then key; one entry per `(domain, time, key)`.
#[derive(Debug, Default)]
pub struct TimerService {
    event_time: BTreeSet<(i64, Vec<Value>)>,
    processing_time: BTreeSet<(i64, Vec<Value>)>,
}

impl TimerService {
    fn set(&mut self, domain: TimeDomain) -> &mut BTreeSet<(i64, Vec<Value>)> {
        match domain {
            TimeDomain::EventTime => &mut self.event_time,
            TimeDomain::ProcessingTime => &mut self.processing_time,
        }
    }

    /// Adds a timer; a duplicate is ignored.
    pub fn register(&mut self, domain: TimeDomain, time: i64, key: Vec<Value>) {
        self.set(domain).insert((time, key));
    }

    /// Removes a timer if present.
    pub fn delete(&mut self, domain: TimeDomain, time: i64, key: &[Value]) {
        self.set(domain).remove(&(time, key.to_vec()));
    }

    /// Removes and returns the earliest timer of `domain` due at `now`, if any.
    pub fn pop_due(&mut self, domain: TimeDomain, now: i64) -> Option<Timer> {
        let set = self.set(domain);
        if set.first().is_some_and(|(t, _)| *t <= now) {
            set.pop_first().map(|(time, key)| Timer { domain, time, key })
        } else {
            None
        }
    }

    /// The earliest pending processing-time timer.
    pub fn next_processing_time(&self) -> Option<i64> {
        self.processing_time.first().map(|(t, _)| *t)
    }

    /// Number of pending timers in both domains.
    pub fn len(&self) -> usize {
        self.event_time.len() + self.processing_time.len()
    }

    /// Whether no timer is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Writes every pending timer into `state` (sections `timers.event-time` and
    /// `timers.processing-time`: per timer its time and key).
    pub fn snapshot(&self, state: &mut crate::checkpoint::StateWriter) {
        for (section, set) in [(EVENT_TIME, &self.event_time), (PROCESSING_TIME, &self.processing_time)] {
            let out = state.section(section);
            out.u32(set.len() as u32);
            for (time, key) in set {
                out.i64(*time);
                out.values(key);
            }
        }
    }

    /// Takes back the timers every old subtask wrote whose keys subtask `info` owns (timers of
    /// an unkeyed operator, with an empty key, go to each subtask that restores them).
    ///
    /// # Errors
    /// A damaged section.
    pub fn restore(
        &mut self,
        states: &[crate::checkpoint::StateReader],
        info: &crate::subtask::SubtaskInfo,
    ) -> crate::error::Result<()> {
        let malformed = |e| crate::error::Error::Restore(format!("an operator's timers are malformed: {e}"));
        for state in states {
            for (section, domain) in
                [(EVENT_TIME, TimeDomain::EventTime), (PROCESSING_TIME, TimeDomain::ProcessingTime)]
            {
                let Some(mut input) = state.section(section) else { continue };
                for _ in 0..input.u32().map_err(malformed)? {
                    let time = input.i64().map_err(malformed)?;
                    let key: Vec<Value> = input.values().map_err(malformed)?;
                    if key.is_empty() || crate::state::owns_key(&key, info) {
                        self.register(domain, time, key);
                    }
                }
            }
        }
        Ok(())
    }
}

/// The checkpoint sections of an operator's timers.
const EVENT_TIME: &str = "timers.event-time";
const PROCESSING_TIME: &str = "timers.processing-time";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timers_fire_in_time_order_once() {
        let mut t = TimerService::default();
        t.register(TimeDomain::EventTime, 20, vec![Value::Int(1)]);
        t.register(TimeDomain::EventTime, 10, vec![Value::Int(2)]);
        t.register(TimeDomain::EventTime, 10, vec![Value::Int(2)]);
        t.register(TimeDomain::ProcessingTime, 5, vec![]);
        assert_eq!(t.len(), 3);
        assert_eq!(t.pop_due(TimeDomain::EventTime, 15).unwrap().time, 10);
        assert!(t.pop_due(TimeDomain::EventTime, 15).is_none());
        assert_eq!(t.next_processing_time(), Some(5));
        t.delete(TimeDomain::EventTime, 20, &[Value::Int(1)]);
        assert!(t.pop_due(TimeDomain::EventTime, i64::MAX).is_none());
    }
}
