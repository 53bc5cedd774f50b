//! Generated events `id,k,v,ts` for the crash and restore tests: from a fixed-seed xorshift,
//! row `id` at `EPOCH + id` ms less up to 2 s of disorder, and the one-second windows a
//! watermark of the largest time so far less 1 s keeps of them.

use std::collections::BTreeMap;

/// Event time of row 0 (2023-11-14T22:13:20).
pub const EPOCH: u64 = 1_700_000_000_000;

/// One generated event.
pub struct Event {
    pub id: u64,
    pub k: u64,
    pub v: u64,
    pub ts: u64,
}

impl Event {
    /// `id,k,v`
    pub fn fields(&self) -> String {
        format!("{},{},{}", self.id, self.k, self.v)
    }

    /// The CSV line `id,k,v,2023-11-14 hh:mm:ss.mmm` with its newline (every time falls on
    /// 2023-11-14 for inputs of up to about 6 million rows).
    pub fn line(&self) -> String {
        let second = self.ts / 1000 % 86_400;
        let (h, m, s, millis) = (second / 3600, second / 60 % 60, second % 60, self.ts % 1000);
        format!("{},2023-11-14 {h:02}:{m:02}:{s:02}.{millis:03}\n", self.fields())
    }
}

/// `rows` events over keys `0..keys`, values `0..100`, from `seed`.
pub fn events(rows: u64, keys: u64, seed: u64) -> impl Iterator<Item = Event> {
    let mut random = seed;
    (0..rows).map(move |id| {
        random ^= random << 13;
        random ^= random >> 7;
        random ^= random << 17;
        Event { id, k: random % keys, v: (random >> 32) % 100, ts: EPOCH + id - (random >> 48) % 2_000 }
    })
}

/// Per one-second window of event time (by its end), the count and sum of `v` of the events
/// not late for the watermark (the largest time so far less 1 s), fed in input order: the
/// windows of a job whose watermark goes out after every advance
/// (`pipeline.auto-watermark-interval` = 0; at the default 200 ms, processing-time ticks decide
/// some late rows, so a killed and resumed run may differ).
#[derive(Default)]
pub struct OnTimeWindows {
    watermark: u64,
    pub windows: BTreeMap<u64, (u64, u64)>,
}

impl OnTimeWindows {
    /// Takes the next event of the input.
    pub fn add(&mut self, event: &Event) {
        let end = event.ts - event.ts % 1000 + 1000;
        if end - 1 > self.watermark {
            let window = self.windows.entry(end).or_default();
            window.0 += 1;
            window.1 += event.v;
        }
        self.watermark = self.watermark.max(event.ts.saturating_sub(1000));
    }
}
