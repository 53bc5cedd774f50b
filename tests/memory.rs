//! Memory limits: a job whose state outgrows `taskmanager.memory.process.size` fails with an
//! error naming the operator, and the next job runs as if nothing happened.
//!
//! The tests share one process-wide allocator and limit, so they run one at a time.

use parking_lot::Mutex;
use weir::connectors::ConnectorRegistry;
use weir::runtime::memory::{self, TrackingAllocator};
use weir::runtime::RuntimeConfig;
use weir::session::Session;

#[global_allocator]
static ALLOCATOR: TrackingAllocator<std::alloc::System> = TrackingAllocator(std::alloc::System);

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// `keys` distinct keys counted into a blackhole, with the session's `settings` first.
fn group_by_script(settings: &str, keys: u64) -> String {
    format!(
        "{settings}
CREATE TABLE src (k BIGINT, v BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '1000000000',
  'number-of-rows' = '{keys}', 'fields.k.kind' = 'sequence', 'fields.k.start' = '1', 'fields.k.end' = '{keys}');
CREATE TABLE out (k BIGINT, c BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT k, COUNT(*) FROM src GROUP BY k;"
    )
}

fn session() -> Session {
    Session::new(RuntimeConfig::default().with_parallelism(2), ConnectorRegistry::default(), Box::new(std::io::sink()))
}

/// What the process has resident now, from `/proc/self/status`.
fn resident_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
}

#[test]
fn the_heap_is_counted() {
    let _one = ONE_AT_A_TIME.lock();
    let before = memory::heap_bytes().expect("the tracking allocator is installed");
    let block = vec![1u8; 64 << 20];
    let during = memory::heap_bytes().unwrap();
    drop(block);
    let after = memory::heap_bytes().unwrap();
    assert!(during >= before + (63 << 20), "{before} -> {during}");
    assert!(after + (63 << 20) <= during, "{during} -> {after}");
}

#[test]
fn a_job_past_its_memory_limit_fails_naming_the_operator_and_the_next_job_runs() {
    let _one = ONE_AT_A_TIME.lock();
    // The limit leaves this process 48 MB more than it has now; a million keys need well over.
    let limit = (resident_bytes() >> 20) + 48;
    let mut session = session();
    let settings = format!("SET 'taskmanager.memory.process.size' = '{limit} mb';");
    let error = session.execute_script(&group_by_script(&settings, 1_000_000)).unwrap_err().error.to_string();
    assert!(error.contains("out of memory"), "{error}");
    assert!(error.contains("GroupAggregate"), "the operator is named: {error}");
    assert!(error.contains("raise the limit"), "{error}");

    // Without the limit, the next job runs to its end.
    session.execute_script("RESET 'taskmanager.memory.process.size';").unwrap();
    assert_eq!(session.runtime().memory_limit, None);
    self::session().execute_script(&group_by_script("", 20_000)).unwrap();
}

#[test]
fn state_that_cannot_grow_is_an_error_not_an_abort() {
    let _one = ONE_AT_A_TIME.lock();
    let heap = memory::heap_bytes().unwrap();
    let limit = memory::MemoryLimit::configured(resident_bytes() + (16 << 20));
    let guard = memory::MemoryGuard::new(limit).expect("the use can be measured");
    assert_eq!(guard.exceeded(), None, "the first measurement sets the ceiling");
    let mut table: std::collections::HashMap<u64, u64> = std::collections::HashMap::new();
    let error = memory::fallible(|| table.try_reserve(64 << 20)).unwrap_err().to_string();
    assert!(error.starts_with("out of memory: the state cannot grow by"), "{error}");
    drop(guard);
    // The ceiling goes with the guard.
    memory::fallible(|| table.try_reserve(4 << 20)).unwrap();
    assert!(memory::heap_bytes().unwrap() > heap);
}
