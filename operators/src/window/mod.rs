//! Event-time windows of the window table functions TUMBLE, HOP and CUMULATE, and the
//! operators over them: [`WindowTableFunctionOperator`] (the columns `window_start`,
//! `window_end`, `window_time` per window of a row), [`LocalWindowAggregateOperator`] and
//! [`WindowAggregateOperator`] (one phase, or the global phase after the local one), and over rows
//! that carry their window, [`WindowRankOperator`] and [`WindowDeduplicateOperator`].
//!
//! Window aggregation runs on **slices**, as Flink's does: a slice is identified by its end,
//! every row belongs to exactly one slice, and a window is a run of slices. TUMBLE's slice is
//! its window; HOP's slices are `gcd(size, slide)` long and a window merges `size / slice` of
//! them; CUMULATE's slices are one step long and its window ending at `e` merges the slices from
//! its start to `e`. A window fires when the watermark reaches `window_end - 1` (over a
//! TIMESTAMP_LTZ, in the session time zone: see [`WindowZone`]).

mod aggregate;
mod attached;
mod deduplicate;
mod local_aggregate;
mod operator;
mod rank;
mod session;
mod session_table_function;
mod sessions;
mod slices;
mod table_function;

pub use aggregate::{WindowAggregateInput, WindowAggregateOperator, WindowAggregateSpec};
pub use deduplicate::{WindowDeduplicateOperator, WindowDeduplicateSpec};
pub use local_aggregate::{LocalWindowAggregateOperator, LocalWindowAggregateSpec};
pub use operator::{Fired, WindowOperator, Windows};
pub use rank::{WindowRankOperator, WindowRankSpec};
pub use session::{SessionWindowAggregateOperator, SessionWindowAggregateSpec};
pub use session_table_function::{SessionTableFunctionOperator, SessionTableFunctionSpec};
pub(crate) use table_function::millis_of;
pub use table_function::{WindowTableFunctionOperator, WindowTableFunctionSpec};

use weir_runtime::time_zone::TimeZone;
use weir_runtime::{Timestamp, Value};

/// The shape of a window, sizes in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowKind {
    /// `TUMBLE(…, size)`: windows of `size` one after the other.
    Tumble {
        /// Window length.
        size: i64,
    },
    /// `HOP(…, slide, size)`: windows of `size` starting every `slide`.
    Hop {
        /// Window length.
        size: i64,
        /// Distance between window starts.
        slide: i64,
    },
    /// `CUMULATE(…, step, size)`: windows starting every `max_size`, each ending every `step`
    /// until `max_size`.
    Cumulate {
        /// Length of the largest window.
        max_size: i64,
        /// Distance between window ends.
        step: i64,
    },
    /// `SESSION(…, gap)`: per key, rows less than `gap` apart in one window, which ends `gap`
    /// after its last row. Not sliced: only [`SessionWindowAggregateOperator`] computes it; the
    /// slice methods treat each row's own window `[ts, ts + gap)` as its only one.
    Session {
        /// The gap.
        gap: i64,
    },
}

/// A window table function's windows: their shape, the offset their starts are aligned to,
/// and where they meet instants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowSpec {
    /// The shape.
    pub kind: WindowKind,
    /// Window starts are `offset` plus a multiple of the alignment (0: aligned to the epoch).
    pub offset: i64,
    /// The session time zone when the time column is a TIMESTAMP_LTZ (set by the physical
    /// plan); times of a TIMESTAMP column are taken as they are.
    pub zone: WindowZone,
}

/// Where windows meet instants (Flink's shift time zone). Windows over a TIMESTAMP time column
/// are aligned on its values and fire when the watermark reaches their end - 1. Windows over a
/// TIMESTAMP_LTZ (rowtime or proctime) are aligned on the wall clock of the session time zone
/// (`table.local-time-zone`): `window_start` and `window_end` are local TIMESTAMPs; a window
/// fires when event or processing time reaches the instant of its local end - 1 (the later one
/// when the clocks pass that time twice, so both passes are in the window), and its
/// `window_time` is the earlier such instant, as Flink computes both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WindowZone(pub Option<TimeZone>);

impl WindowZone {
    /// The local time windows are aligned on, of a time column's value (milliseconds).
    pub fn local(self, time: i64) -> i64 {
        match self.0 {
            Some(zone) => zone.to_local(time),
            None => time,
        }
    }

    /// The instant at which the window ending at local time `end` fires.
    pub fn fire_time(self, end: i64) -> i64 {
        match self.0 {
            Some(zone) => zone.to_utc_later(end - 1),
            None => end - 1,
        }
    }

    /// Whether the window ending at `end` has fired once time has reached `progress`.
    pub fn fired(self, end: i64, progress: i64) -> bool {
        self.fire_time(end) <= progress
    }

    /// The `window_time` of the window ending at `end`: a TIMESTAMP, or over a TIMESTAMP_LTZ the
    /// (earlier) instant of its end - 1.
    pub fn window_time(self, end: i64) -> Value {
        match self.0 {
            Some(zone) => Value::TimestampLtz(Timestamp::from_millis(zone.to_utc(end - 1))),
            None => Value::Timestamp(Timestamp::from_millis(end - 1)),
        }
    }
}

/// Windows carried by the rows themselves, in their `window_start` and `window_end` columns (a
/// window table function's or a window aggregate's output): Flink's window-attached windowing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttachedWindow {
    /// The `window_start` column.
    pub start: usize,
    /// The `window_end` column: a row's window fires when the watermark reaches it - 1.
    pub end: usize,
    /// The windows' shape (for EXPLAIN: `TUMBLE(win_start=[…], win_end=[…], size=[…])`).
    pub spec: WindowSpec,
}

/// `timestamp` rounded down to a multiple of `size` (plus `offset`): Flink's
/// `TimeWindow.getWindowStartWithOffset`, right for negative timestamps too.
pub fn window_start_with_offset(timestamp: i64, offset: i64, size: i64) -> i64 {
    let remainder = (timestamp - offset) % size;
    if remainder < 0 {
        timestamp - (remainder + size)
    } else {
        timestamp - remainder
    }
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

impl WindowSpec {
    /// Windows of `kind` aligned to `offset`, over a TIMESTAMP (no time zone).
    pub const fn new(kind: WindowKind, offset: i64) -> Self {
        WindowSpec { kind, offset, zone: WindowZone(None) }
    }

    /// The windows `[start, end)` that contain `timestamp`, in the order Flink's window table
    /// function emits them (HOP: latest start first; CUMULATE: smallest end first).
    pub fn windows_of(&self, timestamp: i64) -> Vec<(i64, i64)> {
        let offset = self.offset;
        match self.kind {
            WindowKind::Tumble { size } => {
                let start = window_start_with_offset(timestamp, offset, size);
                vec![(start, start + size)]
            }
            WindowKind::Hop { size, slide } => {
                let mut windows = Vec::with_capacity((size / slide.max(1)) as usize + 1);
                let mut start = window_start_with_offset(timestamp, offset, slide);
                while start > timestamp - size {
                    windows.push((start, start + size));
                    start -= slide;
                }
                windows
            }
            WindowKind::Session { gap } => vec![(timestamp, timestamp + gap)],
            WindowKind::Cumulate { max_size, step } => {
                let start = window_start_with_offset(timestamp, offset, max_size);
                let last_end = start + max_size;
                let mut end = window_start_with_offset(timestamp, offset, step) + step;
                let mut windows = Vec::new();
                while end <= last_end {
                    windows.push((start, end));
                    end += step;
                }
                windows
            }
        }
    }

    /// The length of a slice: a TUMBLE window, `gcd(size, slide)` of a HOP, a CUMULATE step.
    pub fn slice_size(&self) -> i64 {
        match self.kind {
            WindowKind::Tumble { size } | WindowKind::Session { gap: size } => size,
            WindowKind::Hop { size, slide } => gcd(size, slide),
            WindowKind::Cumulate { step, .. } => step,
        }
    }

    /// The end of the slice `timestamp` belongs to.
    pub fn slice_end(&self, timestamp: i64) -> i64 {
        let size = self.slice_size();
        window_start_with_offset(timestamp, self.offset, size) + size
    }

    /// The end of the last window that contains the slice ending at `slice_end`: once it has
    /// fired, nothing needs the slice any more.
    pub fn last_window_end(&self, slice_end: i64) -> i64 {
        match self.kind {
            WindowKind::Tumble { .. } | WindowKind::Session { .. } => slice_end,
            WindowKind::Hop { size, .. } => slice_end - self.slice_size() + size,
            WindowKind::Cumulate { max_size, .. } => {
                window_start_with_offset(slice_end - 1, self.offset, max_size) + max_size
            }
        }
    }

    /// The ends of every window that contains the slice ending at `slice_end`, earliest first.
    pub fn window_ends_of_slice(&self, slice_end: i64) -> impl Iterator<Item = i64> {
        let (first, every) = match self.kind {
            WindowKind::Tumble { size } | WindowKind::Session { gap: size } => (slice_end, size),
            WindowKind::Hop { slide, .. } => {
                // The first window end at or after the slice's end, on the slide's grid.
                let below = window_start_with_offset(slice_end, self.offset, slide);
                (if below == slice_end { below } else { below + slide }, slide)
            }
            WindowKind::Cumulate { step, .. } => (slice_end, step),
        };
        let last = self.last_window_end(slice_end);
        (0..).map(move |i| first + i * every).take_while(move |&end| end <= last)
    }

    /// The start of the window ending at `window_end`.
    pub fn window_start(&self, window_end: i64) -> i64 {
        match self.kind {
            WindowKind::Tumble { size } | WindowKind::Hop { size, .. } | WindowKind::Session { gap: size } => {
                window_end - size
            }
            WindowKind::Cumulate { max_size, .. } => window_start_with_offset(window_end - 1, self.offset, max_size),
        }
    }

    /// The ends of the slices the window ending at `window_end` merges, earliest first.
    pub fn slice_ends_of_window(&self, window_end: i64) -> impl Iterator<Item = i64> {
        let size = self.slice_size();
        let first = self.window_start(window_end) + size;
        (0..).map(move |i| first + i * size).take_while(move |&end| end <= window_end)
    }

    /// The slices of the window ending at `window_end` in the order Flink's slice assigners
    /// merge them, which order-keeping aggregates (`LISTAGG`, `ARRAY_AGG`) show: a HOP window's
    /// from its latest slice back, a CUMULATE window's from its first on.
    pub fn slice_ends_in_merge_order(&self, window_end: i64) -> Vec<i64> {
        let mut ends: Vec<i64> = self.slice_ends_of_window(window_end).collect();
        if matches!(self.kind, WindowKind::Hop { .. }) {
            ends.reverse();
        }
        ends
    }

    /// Whether the window's slices are each a whole window (TUMBLE): nothing to merge.
    pub fn unshared(&self) -> bool {
        matches!(self.kind, WindowKind::Tumble { .. } | WindowKind::Session { .. })
    }

    /// Flink's text of the window: `TUMBLE(<first>, size=[1 min])`, `HOP(<first>, size=[10 min],
    /// slide=[5 min])`, `CUMULATE(<first>, max_size=[1 h], step=[10 min])`, with `, offset=[…]`
    /// when there is one; `first` names the time column (`time_col=[ts]`) or the slice end.
    pub fn explain(&self, first: &str) -> String {
        let mut text = match self.kind {
            WindowKind::Tumble { size } => format!("TUMBLE({first}, size=[{}]", duration_text(size)),
            WindowKind::Hop { size, slide } => {
                format!("HOP({first}, size=[{}], slide=[{}]", duration_text(size), duration_text(slide))
            }
            WindowKind::Cumulate { max_size, step } => {
                format!("CUMULATE({first}, max_size=[{}], step=[{}]", duration_text(max_size), duration_text(step))
            }
            WindowKind::Session { gap } => format!("SESSION({first}, gap=[{}]", duration_text(gap)),
        };
        if self.offset != 0 {
            text.push_str(&format!(", offset=[{}]", duration_text(self.offset)));
        }
        text.push(')');
        text
    }
}

/// A duration as Flink prints it: in the largest unit that divides it (`1 min`, `30 s`, `1 h`,
/// `1 d`, `500 ms`).
pub fn duration_text(millis: i64) -> String {
    const UNITS: [(i64, &str); 4] = [(86_400_000, "d"), (3_600_000, "h"), (60_000, "min"), (1_000, "s")];
    for (unit, name) in UNITS {
        if millis != 0 && millis % unit == 0 {
            return format!("{} {name}", millis / unit);
        }
    }
    format!("{millis} ms")
}

#[cfg(test)]
mod slicing_tests {
    use super::*;

    const MIN: i64 = 60_000;

    fn spec(kind: WindowKind) -> WindowSpec {
        WindowSpec::new(kind, 0)
    }

    #[test]
    fn windows_of_a_timestamp_are_flinks() {
        let tumble = spec(WindowKind::Tumble { size: MIN });
        assert_eq!(tumble.windows_of(90_000), [(MIN, 2 * MIN)]);
        assert_eq!(tumble.windows_of(-1), [(-MIN, 0)], "negative timestamps round down");
        let hop = spec(WindowKind::Hop { size: 2 * MIN, slide: MIN / 2 });
        assert_eq!(
            hop.windows_of(MIN),
            [(MIN, 3 * MIN), (MIN / 2, 5 * MIN / 2), (0, 2 * MIN), (-MIN / 2, 3 * MIN / 2)]
        );
        let cumulate = spec(WindowKind::Cumulate { max_size: 5 * MIN, step: MIN });
        assert_eq!(cumulate.windows_of(3 * MIN + 5), [(0, 4 * MIN), (0, 5 * MIN)]);
        let offset = WindowSpec::new(WindowKind::Tumble { size: MIN }, 10_000);
        assert_eq!(offset.windows_of(5_000), [(-50_000, 10_000)]);
    }

    /// For every shape, the slices of each window a row is in contain the row's slice, and the
    /// windows of a slice are exactly the windows the table function gives its rows.
    #[test]
    fn slices_and_windows_agree() {
        let shapes = [
            spec(WindowKind::Tumble { size: MIN }),
            spec(WindowKind::Hop { size: 2 * MIN, slide: MIN / 2 }),
            spec(WindowKind::Cumulate { max_size: 5 * MIN, step: MIN }),
            WindowSpec::new(WindowKind::Hop { size: 2 * MIN, slide: MIN }, 7_000),
        ];
        for shape in shapes {
            for ts in (-300_000..300_000).step_by(7_919) {
                let slice = shape.slice_end(ts);
                assert!(slice - shape.slice_size() <= ts && ts < slice, "{shape:?} {ts}");
                let mut from_tvf: Vec<i64> = shape.windows_of(ts).into_iter().map(|(_, end)| end).collect();
                from_tvf.sort_unstable();
                let from_slice: Vec<i64> = shape.window_ends_of_slice(slice).collect();
                assert_eq!(from_slice, from_tvf, "{shape:?} {ts}");
                for (start, end) in shape.windows_of(ts) {
                    assert_eq!(shape.window_start(end), start);
                    assert!(shape.slice_ends_of_window(end).any(|s| s == slice));
                }
                assert_eq!(shape.last_window_end(slice), *from_tvf.last().unwrap());
            }
        }
    }

    #[test]
    fn durations_print_in_their_largest_unit() {
        assert_eq!(duration_text(MIN), "1 min");
        assert_eq!(duration_text(3_600_000), "1 h");
        assert_eq!(duration_text(30_000), "30 s");
        assert_eq!(duration_text(1_500), "1500 ms");
        assert_eq!(
            spec(WindowKind::Hop { size: 10 * MIN, slide: 5 * MIN }).explain("time_col=[rowtime]"),
            "HOP(time_col=[rowtime], size=[10 min], slide=[5 min])"
        );
    }
}

#[cfg(test)]
mod attached_tests;
#[cfg(test)]
mod tests;

/// `signature` with what every window operator writes besides its own state: the timers of
/// the windows to fire (`timers`, keyed like the windows) and the watermark fired up to.
pub(crate) fn windows_signature(
    signature: crate::signature::StateSignature,
    timers: &str,
    key: Vec<String>,
) -> crate::signature::StateSignature {
    use crate::signature::StateKind;
    signature.state(timers, StateKind::Timers, key, vec!["BIGINT (window end - 1)".to_string()]).state(
        operator::PROGRESS,
        StateKind::Raw,
        Vec::new(),
        vec!["BIGINT (watermark)".to_string()],
    )
}
