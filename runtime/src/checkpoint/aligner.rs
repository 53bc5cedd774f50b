//! Barrier alignment: when a subtask with several input channels may take its checkpoint.
//!
//! A checkpoint's barrier arrives on each channel at its own time. The subtask snapshots its
//! state once every open channel has delivered the barrier: its state then holds exactly what
//! came before the barrier on every channel. In [`CheckpointingMode::ExactlyOnce`] a channel
//! that has delivered the barrier is blocked until then (what it sends meanwhile waits, after
//! the checkpoint); in [`CheckpointingMode::AtLeastOnce`] nothing waits and the barriers are
//! only counted. A barrier of a later checkpoint that arrives during an alignment aborts the
//! earlier checkpoint, as in Flink; barriers of checkpoints already aligned or aborted are
//! ignored. A channel that ends no longer holds an alignment back.

use crate::element::{CheckpointBarrier, CheckpointingMode};

/// What a barrier or the end of a channel did to the alignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alignment {
    /// The alignment goes on (or nothing changed).
    Pending,
    /// Every open channel has delivered this barrier: snapshot, forward it, and take what the
    /// blocked channels sent.
    Aligned(CheckpointBarrier),
    /// The checkpoint `id` cannot complete (a later barrier arrived first); the later one is
    /// being aligned now (and may itself be aligned already: see the second element).
    Aborted(u64, Option<CheckpointBarrier>),
}

/// Barrier alignment over the input channels of one subtask.
#[derive(Debug)]
pub struct BarrierAligner {
    /// Per channel: delivered the pending barrier.
    seen: Vec<bool>,
    ended: Vec<bool>,
    pending: Option<CheckpointBarrier>,
    /// The highest checkpoint aligned or aborted here.
    done: u64,
}

impl BarrierAligner {
    /// An aligner over `channels` input channels.
    pub fn new(channels: usize) -> Self {
        BarrierAligner { seen: vec![false; channels], ended: vec![false; channels], pending: None, done: 0 }
    }

    /// Whether what `channel` delivers now must wait until the pending checkpoint is aligned.
    pub fn is_blocked(&self, channel: usize) -> bool {
        matches!(self.pending, Some(b) if b.mode == CheckpointingMode::ExactlyOnce) && self.seen[channel]
    }

    /// The checkpoint being aligned, if any.
    pub fn pending(&self) -> Option<CheckpointBarrier> {
        self.pending
    }

    /// `channel` delivered `barrier`.
    pub fn on_barrier(&mut self, channel: usize, barrier: CheckpointBarrier) -> Alignment {
        if barrier.id <= self.done {
            return Alignment::Pending;
        }
        let mut aborted = None;
        match self.pending {
            Some(p) if p.id == barrier.id => {}
            Some(p) if p.id > barrier.id => return Alignment::Pending,
            Some(p) => {
                aborted = Some(p.id);
                self.start(barrier);
            }
            None => self.start(barrier),
        }
        self.seen[channel] = true;
        let aligned = self.try_align();
        match aborted {
            Some(id) => Alignment::Aborted(id, aligned),
            None => aligned.map_or(Alignment::Pending, Alignment::Aligned),
        }
    }

    /// `channel` has ended: it no longer holds the pending alignment back.
    pub fn on_end(&mut self, channel: usize) -> Alignment {
        self.ended[channel] = true;
        self.try_align().map_or(Alignment::Pending, Alignment::Aligned)
    }

    fn start(&mut self, barrier: CheckpointBarrier) {
        self.pending = Some(barrier);
        self.seen.iter_mut().for_each(|s| *s = false);
    }

    fn try_align(&mut self) -> Option<CheckpointBarrier> {
        let barrier = self.pending?;
        if self.seen.iter().zip(&self.ended).all(|(seen, ended)| *seen || *ended) {
            self.pending = None;
            self.done = barrier.id;
            self.seen.iter_mut().for_each(|s| *s = false);
            return Some(barrier);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn barrier(id: u64, mode: CheckpointingMode) -> CheckpointBarrier {
        CheckpointBarrier { id, timestamp: 0, mode }
    }

    #[test]
    fn exactly_once_blocks_each_channel_until_all_delivered() {
        let b1 = barrier(1, CheckpointingMode::ExactlyOnce);
        let mut a = BarrierAligner::new(3);
        assert_eq!(a.on_barrier(0, b1), Alignment::Pending);
        assert!(a.is_blocked(0) && !a.is_blocked(1));
        assert_eq!(a.on_barrier(2, b1), Alignment::Pending);
        assert!(a.is_blocked(2));
        assert_eq!(a.on_barrier(1, b1), Alignment::Aligned(b1));
        assert!((0..3).all(|c| !a.is_blocked(c)));
        // A repeated barrier of a checkpoint already taken changes nothing.
        assert_eq!(a.on_barrier(0, b1), Alignment::Pending);
        assert!(!a.is_blocked(0));
    }

    #[test]
    fn at_least_once_counts_barriers_and_blocks_nothing() {
        let b1 = barrier(1, CheckpointingMode::AtLeastOnce);
        let mut a = BarrierAligner::new(2);
        assert_eq!(a.on_barrier(1, b1), Alignment::Pending);
        assert!(!a.is_blocked(1));
        assert_eq!(a.on_barrier(0, b1), Alignment::Aligned(b1));
    }

    #[test]
    fn a_later_barrier_aborts_the_pending_checkpoint() {
        let (b1, b2) = (barrier(1, CheckpointingMode::ExactlyOnce), barrier(2, CheckpointingMode::ExactlyOnce));
        let mut a = BarrierAligner::new(2);
        a.on_barrier(0, b1);
        assert_eq!(a.on_barrier(1, b2), Alignment::Aborted(1, None));
        assert!(a.is_blocked(1) && !a.is_blocked(0), "channel 0 has not delivered barrier 2 yet");
        // The late barrier 1 is ignored; barrier 2 aligns.
        assert_eq!(a.on_barrier(0, b1), Alignment::Pending);
        assert_eq!(a.on_barrier(0, b2), Alignment::Aligned(b2));
    }

    #[test]
    fn ended_channels_do_not_hold_an_alignment_back() {
        let b1 = barrier(1, CheckpointingMode::ExactlyOnce);
        let mut a = BarrierAligner::new(2);
        a.on_barrier(0, b1);
        assert_eq!(a.on_end(1), Alignment::Aligned(b1));
        let mut single = BarrierAligner::new(1);
        assert_eq!(
            single.on_barrier(0, barrier(4, CheckpointingMode::ExactlyOnce)),
            Alignment::Aligned(barrier(4, CheckpointingMode::ExactlyOnce))
        );
    }
}
