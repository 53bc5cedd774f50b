//! Input alignment: one subtask's view of all its input channels.
//!
//! The watermark a subtask sees is the minimum over its channels that are neither idle nor
//! finished, and it never goes back. When every open channel is idle, the subtask itself is
//! idle and its watermark may rise to the largest one among them (as Flink's watermark valve
//! does). Flush markers align the same way. The input ends when every channel has ended. A
//! channel from a sender known to emit nothing (a source subtask given no file) is left out of
//! the alignment from the start, until it sends something after all.

use crate::element::NO_WATERMARK;

#[derive(Debug, Clone)]
struct Channel {
    input: usize,
    watermark: i64,
    marker: i64,
    idle: bool,
    ended: bool,
    /// Its sender emits nothing: it does not hold the watermark back.
    silent: bool,
}

/// What changed at the subtask's input after an element arrived on one channel.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Progress {
    /// A new aligned watermark to deliver.
    pub watermark: Option<i64>,
    /// A new aligned flush marker to deliver.
    pub marker: Option<i64>,
    /// The subtask's idleness changed to this.
    pub idle: Option<bool>,
    /// Every channel has now ended.
    pub ended: bool,
}

/// Alignment state over the input channels of one subtask.
#[derive(Debug)]
pub(crate) struct InputGate {
    channels: Vec<Channel>,
    watermark: i64,
    marker: i64,
    idle: bool,
    open: usize,
}

impl InputGate {
    /// A gate over channels whose input ports are `inputs[channel]`.
    pub(crate) fn new(inputs: Vec<usize>) -> Self {
        let open = inputs.len();
        let channels = inputs
            .into_iter()
            .map(|input| Channel {
                input,
                watermark: NO_WATERMARK,
                marker: NO_WATERMARK,
                idle: false,
                ended: false,
                silent: false,
            })
            .collect();
        InputGate { channels, watermark: NO_WATERMARK, marker: NO_WATERMARK, idle: false, open }
    }

    /// The gate with the channels whose `silent[channel]` is set left out of the alignment
    /// until they send something.
    pub(crate) fn with_silent(mut self, silent: &[bool]) -> Self {
        for (c, &s) in self.channels.iter_mut().zip(silent) {
            c.silent = s;
        }
        self
    }

    /// The input port of `channel`.
    pub(crate) fn input_of(&self, channel: usize) -> usize {
        self.channels[channel].input
    }

    /// Whether the gate has no channels at all (its input is over before it starts).
    pub(crate) fn is_empty(&self) -> bool {
        self.channels.is_empty()
    }

    /// Data arrived on `channel`: an idle channel becomes active again.
    pub(crate) fn on_data(&mut self, channel: usize) -> Progress {
        self.channels[channel].silent = false;
        if self.channels[channel].idle {
            self.on_idle(channel, false)
        } else {
            Progress::default()
        }
    }

    pub(crate) fn on_watermark(&mut self, channel: usize, watermark: i64) -> Progress {
        let mut progress = self.on_data(channel);
        let c = &mut self.channels[channel];
        c.watermark = c.watermark.max(watermark);
        self.align(&mut progress);
        progress
    }

    pub(crate) fn on_marker(&mut self, channel: usize, marker: i64) -> Progress {
        let mut progress = self.on_data(channel);
        let c = &mut self.channels[channel];
        c.marker = c.marker.max(marker);
        self.align(&mut progress);
        progress
    }

    pub(crate) fn on_idle(&mut self, channel: usize, idle: bool) -> Progress {
        let mut progress = Progress::default();
        self.channels[channel].idle = idle;
        self.align(&mut progress);
        progress
    }

    pub(crate) fn on_end(&mut self, channel: usize) -> Progress {
        let mut progress = Progress::default();
        if !self.channels[channel].ended {
            self.channels[channel].ended = true;
            self.open -= 1;
        }
        self.align(&mut progress);
        progress.ended = self.open == 0;
        progress
    }

    fn align(&mut self, progress: &mut Progress) {
        let open = || self.channels.iter().filter(|c| !c.ended && !c.silent);
        let active: Vec<&Channel> = open().filter(|c| !c.idle).collect();
        let all_idle = active.is_empty() && open().next().is_some();
        let (watermark, marker) = if !active.is_empty() {
            (active.iter().map(|c| c.watermark).min(), active.iter().map(|c| c.marker).min())
        } else if all_idle {
            (open().map(|c| c.watermark).max(), open().map(|c| c.marker).max())
        } else {
            (None, None)
        };
        if let Some(w) = watermark.filter(|w| *w > self.watermark) {
            self.watermark = w;
            progress.watermark = Some(w);
        }
        if let Some(m) = marker.filter(|m| *m > self.marker) {
            self.marker = m;
            progress.marker = Some(m);
        }
        if all_idle != self.idle {
            self.idle = all_idle;
            progress.idle = Some(all_idle);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watermark_is_the_minimum_over_channels() {
        let mut g = InputGate::new(vec![0, 0]);
        assert_eq!(g.on_watermark(0, 10).watermark, None);
        assert_eq!(g.on_watermark(1, 5).watermark, Some(5));
        assert_eq!(g.on_watermark(1, 20).watermark, Some(10));
        assert_eq!(g.on_watermark(0, 30).watermark, Some(20));
        // A late watermark on one channel never moves the output back.
        assert_eq!(g.on_watermark(0, 1).watermark, None);
    }

    #[test]
    fn idle_channels_do_not_hold_the_watermark_back() {
        let mut g = InputGate::new(vec![0, 1]);
        g.on_watermark(0, 100);
        assert_eq!(g.on_idle(1, true), Progress { watermark: Some(100), ..Default::default() });
        assert_eq!(g.on_watermark(0, 150).watermark, Some(150));
        // Back to active at a lower watermark: holds the output until it catches up.
        g.on_idle(1, false);
        assert_eq!(g.on_watermark(0, 200).watermark, None);
        assert_eq!(g.on_watermark(1, 300).watermark, Some(200));
    }

    #[test]
    fn all_idle_makes_the_subtask_idle() {
        let mut g = InputGate::new(vec![0, 0]);
        g.on_watermark(0, 7);
        g.on_watermark(1, 3);
        assert_eq!(g.on_idle(0, true).idle, None);
        let p = g.on_idle(1, true);
        assert_eq!(p.idle, Some(true));
        assert_eq!(p.watermark, Some(7));
        assert_eq!(g.on_data(1).idle, Some(false));
    }

    #[test]
    fn input_ends_when_every_channel_ends() {
        let mut g = InputGate::new(vec![0, 1]);
        g.on_watermark(0, 5);
        g.on_watermark(1, 8);
        let p = g.on_end(0);
        assert!(!p.ended);
        assert_eq!(p.watermark, Some(8));
        assert!(g.on_end(1).ended);
    }

    #[test]
    fn silent_channels_do_not_hold_the_watermark_back() {
        let mut g = InputGate::new(vec![0, 0, 0]).with_silent(&[false, true, false]);
        assert_eq!(g.on_watermark(0, 10).watermark, None, "channel 2 holds it back");
        assert_eq!(g.on_watermark(2, 7).watermark, Some(7), "channel 1 does not");
        // A silent channel that sends a row after all takes part from then on.
        g.on_data(1);
        assert_eq!(g.on_watermark(2, 12).watermark, None);
        assert_eq!(g.on_watermark(1, 11).watermark, Some(10));
        assert!(!g.on_end(1).ended && !g.on_end(0).ended && g.on_end(2).ended);
    }
}
