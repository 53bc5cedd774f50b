//! Which rows a window aggregate drops as late, against a from-scratch recomputation: a HOP
//! window over a disordered file, planned as LocalWindowAggregate / GlobalWindowAggregate, with
//! mini-batch on and off. A row counts in every window of it that has not fired when it arrives
//! (the watermark before it: the largest time so far less the delay); a row all of whose windows
//! have fired is dropped. The watermark goes out after every row that moves it on
//! (`pipeline.auto-watermark-interval` = 0), so that which rows are late does not depend on when
//! processing-time ticks come.

use crate::common;

use std::collections::BTreeMap;

const ROWS: u64 = 20_000;
const SIZE: u64 = 3_000;
const SLIDE: u64 = 1_000;
const DELAY: u64 = 1_000;

/// `k,t` rows, one every 7 ms, each up to 0.5, 2 or 5 s early (from `seed`); and per key and
/// window end the count a recomputation gives.
fn input(seed: u64) -> (String, BTreeMap<(u64, u64), u64>) {
    let mut random = seed;
    let mut next = move || {
        random ^= random << 13;
        random ^= random >> 7;
        random ^= random << 17;
        random
    };
    let (mut text, mut counts) = (String::new(), BTreeMap::new());
    let mut watermark: Option<u64> = None;
    for i in 0..ROWS {
        let disorder = [500, 2_000, 5_000][(next() % 3) as usize];
        let t = (i * 7).saturating_sub(next() % disorder);
        let k = next() % 4;
        text.push_str(&format!("{k},{t}\n"));
        let first_end = (t / SLIDE + 1) * SLIDE;
        for end in (first_end..first_end + SIZE).step_by(SLIDE as usize) {
            if watermark.is_none_or(|w| end - 1 > w) {
                *counts.entry((k, end)).or_default() += 1;
            }
        }
        watermark = Some(watermark.map_or(t.saturating_sub(DELAY), |w| w.max(t.saturating_sub(DELAY))));
    }
    (text, counts)
}

#[test]
fn a_two_phase_hop_window_drops_late_rows_as_a_recomputation_says() {
    for seed in [0x9e37_79b9_7f4a_7c15_u64, 0x2545_f491_4f6c_dd1d, 0x5851_f42d_4c95_7f2d] {
        let dir = tempfile::tempdir().unwrap();
        let (text, expected) = input(seed);
        std::fs::write(dir.path().join("in.csv"), text).unwrap();
        for mini_batch in [false, true] {
            let script = format!(
                "SET 'sql-client.execution.result-mode' = 'changelog';\n\
                 SET 'pipeline.auto-watermark-interval' = '0';\n\
                 SET 'table.exec.mini-batch.enabled' = '{mini_batch}';\n\
                 SET 'table.exec.mini-batch.allow-latency' = '50 ms';\n\
                 SET 'table.exec.mini-batch.size' = '7';\n\
                 CREATE TABLE src (k INT, t BIGINT, ts AS TO_TIMESTAMP_LTZ(t, 3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)\n\
                   WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');\n\
                 SELECT k, UNIX_TIMESTAMP(DATE_FORMAT(window_end, 'yyyy-MM-dd HH:mm:ss')), COUNT(*)\n\
                   FROM TABLE(HOP(TABLE src, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '3' SECOND))\n\
                   GROUP BY k, window_start, window_end;\n",
                dir.path().join("in.csv").display()
            );
            let out = common::Buffer::default();
            let config = weir::runtime::RuntimeConfig::default().with_parallelism(1);
            let registry = weir::connectors::ConnectorRegistry::default();
            let mut session = weir::session::Session::new(config, registry, Box::new(out.clone()));
            session.execute_script(&script).map_err(|e| e.error.to_string()).unwrap();
            let printed = String::from_utf8_lossy(&out.0.lock()).to_string();
            let got: BTreeMap<(u64, u64), u64> = printed
                .lines()
                .filter_map(|l| l.strip_prefix("+I[")?.strip_suffix(']').map(str::to_string))
                .map(|row| {
                    let f: Vec<u64> = row.split(", ").map(|x| x.parse().unwrap()).collect();
                    ((f[0], f[1] * 1000), f[2])
                })
                .collect();
            assert!(
                got == expected,
                "seed {seed:#x}, mini-batch {mini_batch}: {} windows, {} expected",
                got.len(),
                expected.len()
            );
        }
    }
}
