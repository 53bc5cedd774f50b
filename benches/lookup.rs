//! Load test of lookup joins: rows per second through a lookup join whose every lookup takes
//! 1 ms (an in-memory table answering after a timer), per scheduling mode, at parallelism 2.
//!
//! ```text
//! cargo bench --bench lookup               # every scenario
//! cargo bench --bench lookup -- key        # scenarios whose name contains "key"
//! ```
//!
//! Inputs: `insert-only` is a generator of `[n % 10000, n]` rows; `updating` is the running
//! count per key of the same rows (`+I`, then `-U`/`+U` per change), as a GROUP BY emits it.
//! Every lookup finds one row. Rows/s counts the rows that enter the join (for the updating
//! input, each change row is one lookup). Sync lookups run one at a time per subtask, so they
//! get far fewer rows. The `_0ms` scenarios answer at once (as a cache hit does) and measure the
//! operators themselves. Compare scenarios within one run: the machine is shared.

use std::time::{Duration, Instant};

use weir::connectors::MemoryLookupTable;
use weir::lookup::LookupJoin;
use weir::prelude::*;
use weir::runtime::LookupProvider;

const KEYS: i64 = 10_000;
const LATENCY: Duration = Duration::from_millis(1);

fn input_schema() -> Schema {
    Schema::new(vec![Field::new("key", DataType::bigint()), Field::new("n", DataType::bigint())])
}

fn dim_schema() -> Schema {
    Schema::new(vec![Field::new("id", DataType::bigint()), Field::new("name", DataType::string())])
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Sync,
    Ordered,
    Unordered,
    KeyOrdered,
}

struct Scenario {
    name: &'static str,
    updating: bool,
    mode: Mode,
    rows: u64,
    latency: Duration,
}

fn run(s: &Scenario) {
    let latency = s.latency;
    let table = MemoryLookupTable::new(
        (0..KEYS).map(|k| vec![Value::BigInt(k), Value::string(&format!("name-{k}"))]).collect(),
    )
    .with_latency(move |_| latency);
    let stats = table.stats();
    let pipeline = Pipeline::new(RuntimeConfig::default().with_parallelism(2));
    let numbers = pipeline.generate("Numbers", input_schema(), s.rows, |n, out| {
        out.push(Value::BigInt(n as i64 % KEYS));
        out.push(Value::BigInt(n as i64));
    });
    let input =
        if s.updating { numbers.key_by(&[0]).process("CountByKey", input_schema(), CountByKey) } else { numbers };
    let join = LookupJoin::new("dim", dim_schema(), &["id"], table.lookup_function(&[0]).unwrap(), &[0]).unwrap();
    let join = match s.mode {
        Mode::Sync => join.sync(),
        Mode::Ordered => join.ordered(100),
        Mode::Unordered => join.unordered(100),
        Mode::KeyOrdered => join.key_ordered(&[0], 100),
    };
    let out = input.lookup_join(join).discard();
    let started = Instant::now();
    pipeline.run().expect("the job runs");
    let seconds = started.elapsed().as_secs_f64();
    let rows = out.load(std::sync::atomic::Ordering::Relaxed);
    println!(
        "{:<28} {:>9} rows in {:>6.2} s = {:>9.0} rows/s  (lookups {}, at most {} in flight)",
        s.name,
        rows,
        seconds,
        rows as f64 / seconds,
        stats.lookups(),
        stats.max_in_flight()
    );
}

fn main() {
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-')).unwrap_or_default();
    let scenarios = [
        Scenario { name: "sync_updating", updating: true, mode: Mode::Sync, rows: 2_000, latency: LATENCY },
        Scenario { name: "ordered_updating", updating: true, mode: Mode::Ordered, rows: 100_000, latency: LATENCY },
        Scenario {
            name: "key_ordered_updating",
            updating: true,
            mode: Mode::KeyOrdered,
            rows: 100_000,
            latency: LATENCY,
        },
        Scenario { name: "sync_insert_only", updating: false, mode: Mode::Sync, rows: 4_000, latency: LATENCY },
        Scenario { name: "ordered_insert_only", updating: false, mode: Mode::Ordered, rows: 200_000, latency: LATENCY },
        Scenario {
            name: "unordered_insert_only",
            updating: false,
            mode: Mode::Unordered,
            rows: 200_000,
            latency: LATENCY,
        },
        // Lookups that answer at once (a cache hit): the operators' own cost.
        Scenario {
            name: "ordered_0ms",
            updating: false,
            mode: Mode::Ordered,
            rows: 2_000_000,
            latency: Duration::ZERO,
        },
        Scenario {
            name: "key_ordered_0ms",
            updating: true,
            mode: Mode::KeyOrdered,
            rows: 1_000_000,
            latency: Duration::ZERO,
        },
    ];
    println!("lookup latency {} ms, capacity 100, parallelism 2", LATENCY.as_millis());
    for s in scenarios.iter().filter(|s| s.name.contains(&filter)) {
        run(s);
    }
}
