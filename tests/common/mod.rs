//! Helpers shared by the end-to-end tests.

#![allow(dead_code)]

pub mod compat_scripts;
pub mod conformance;
pub mod events;
pub mod http;
pub mod kafka;
pub mod keyed_totals;
pub mod postgres;

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use weir::connectors::{CollectHandle, GeneratorSource, MemorySource, SourceStep};
use weir::runtime::graph::JobGraph;
use weir::runtime::{Row, Value, VertexId};

/// `f` of every item, in the items' order, computed by as many threads as the machine has
/// cores (each takes the next item not taken yet): for cases that each run a process of their own.
pub fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, items.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<R>>> = items.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                *slots[i].lock() = Some(f(item));
            });
        }
    });
    slots.into_iter().map(|slot| slot.into_inner().expect("every item was mapped")).collect()
}

/// Waits until `condition` holds, failing the test after 20 s (a hang, not a slow machine).
pub fn wait_until(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Adds a source of `count` rows `[n % keys, n]` (two BIGINT fields).
pub fn keyed_numbers(graph: &mut JobGraph, parallelism: usize, count: u64, keys: u64) -> VertexId {
    let source = GeneratorSource::new(
        "Numbers",
        2,
        count,
        std::sync::Arc::new(move |n, out: &mut Vec<Value>| {
            out.push(Value::BigInt((n % keys) as i64));
            out.push(Value::BigInt(n as i64));
        }),
    );
    graph.add_source("Numbers", parallelism, move |info| Box::new(source.for_subtask(info)))
}

/// Adds a source playing `steps` over rows of `arity` fields.
pub fn scripted(graph: &mut JobGraph, name: &str, arity: usize, steps: Vec<SourceStep>) -> VertexId {
    let source = MemorySource::new(name, arity, steps);
    graph.add_source(name, 1, move |info| Box::new(source.for_subtask(info)))
}

/// Adds a collecting sink of `parallelism` subtasks.
pub fn collect(graph: &mut JobGraph, parallelism: usize) -> (VertexId, CollectHandle) {
    let handle = CollectHandle::new();
    let sink = handle.clone();
    let id = graph.add_operator("Sink: Collect", parallelism, move |info| Box::new(sink.sink(info)));
    (id, handle)
}

/// A one-field BIGINT insert row.
pub fn row(v: i64) -> Row {
    Row::insert(vec![Value::BigInt(v)])
}

/// Settings that turn mini-batch on, its batches small enough that a test's rows make many.
pub const MINI_BATCH: &str = "SET 'table.exec.mini-batch.enabled' = 'true';\n\
    SET 'table.exec.mini-batch.allow-latency' = '1 s';\nSET 'table.exec.mini-batch.size' = '100';\n";

/// A writer into a shared buffer: what a session printed, for tests to read.
#[derive(Clone, Default)]
pub struct Buffer(pub Arc<Mutex<Vec<u8>>>);

impl Buffer {
    /// The last row printed for each key (the first column) of the changelog printed so far,
    /// as the rest of its columns; deleted keys gone.
    pub fn final_rows(&self) -> std::collections::BTreeMap<String, String> {
        let text = String::from_utf8_lossy(&self.0.lock()).into_owned();
        let mut rows = std::collections::BTreeMap::new();
        for line in text.lines() {
            let Some((op, body)) = line.split_once('[') else { continue };
            let body = body.trim_end_matches(']');
            let (key, rest) = body.split_once(", ").unwrap_or((body, ""));
            match op {
                "+I" | "+U" => {
                    rows.insert(key.to_string(), rest.to_string());
                }
                "-D" => {
                    rows.remove(key);
                }
                _ => {}
            }
        }
        rows
    }
}

impl Write for Buffer {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.0.lock().extend_from_slice(data);
        Ok(data.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Polls `source` `polls` times (or until it ends), calling `before_each` before every poll,
/// and returns the first column of every row it emitted, as integers.
pub fn poll_first_column(
    source: &mut Box<dyn weir::runtime::Source>,
    ctx: &mut weir::runtime::OperatorContext,
    polls: Option<usize>,
    mut before_each: impl FnMut(),
) -> Vec<i64> {
    let mut values = Vec::new();
    let mut out = weir::runtime::Output::new();
    for _ in 0..polls.unwrap_or(usize::MAX) {
        before_each();
        let status = source.poll_next(ctx, &mut out).unwrap();
        for element in out.drain() {
            if let weir::runtime::StreamElement::Chunk(c) = element {
                values.extend(c.rows().map(|(_, r)| r[0].as_i64().unwrap()));
            }
        }
        if status == weir::runtime::SourceStatus::Finished {
            break;
        }
    }
    values
}

/// Runs the sources `factory` builds at `before` subtasks for `polls(index)` polls each, takes
/// their checkpoint, restores them at `after` subtasks and runs those to their end; returns
/// the first column of every row sent, before and after. `context` makes a subtask's context,
/// `before_each` runs before every poll.
pub fn checkpoint_and_restore(
    factory: &weir::runtime::graph::SourceFactory,
    context: impl Fn(usize, usize) -> weir::runtime::OperatorContext,
    (before, after): (usize, usize),
    polls: impl Fn(usize) -> usize,
    mut before_each: impl FnMut(),
) -> Vec<i64> {
    let mut seen = Vec::new();
    let mut states = Vec::new();
    for index in 0..before {
        let mut ctx = context(index, before);
        let mut source = factory(ctx.subtask());
        source.open(&mut ctx).unwrap();
        seen.extend(poll_first_column(&mut source, &mut ctx, Some(polls(index)), &mut before_each));
        let mut state = weir::runtime::checkpoint::StateWriter::new();
        source.snapshot_state(1, &mut ctx, &mut state).unwrap();
        states.push(state.into_reader());
    }
    for index in 0..after {
        let mut ctx = context(index, after);
        let mut source = factory(ctx.subtask());
        source.restore_state(&mut ctx, &states).unwrap();
        source.open(&mut ctx).unwrap();
        seen.extend(poll_first_column(&mut source, &mut ctx, None, &mut before_each));
    }
    seen.sort_unstable();
    seen
}

/// Every `.rs` file below `dir`, sorted.
pub fn rust_sources(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
        let path = entry.path();
        if path.is_dir() {
            files.extend(rust_sources(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// The rows of the visible part files of a filesystem sink's directory `dir`, sorted (hidden
/// `.…inprogress` files are not part of the output); none when `dir` does not exist.
pub fn sink_rows(dir: &std::path::Path) -> Vec<String> {
    let mut rows = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return rows };
    for entry in entries.map(Result::unwrap) {
        if !entry.file_name().to_string_lossy().starts_with('.') {
            rows.extend(std::fs::read_to_string(entry.path()).unwrap().lines().map(str::to_string));
        }
    }
    rows.sort();
    rows
}

/// Starts run 1, 2, … with `start` and kills each (`kill -9`) after a random pause in
/// `pause_ms` (from `seed`), `kills` times in all; then lets the last run finish and checks that it
/// succeeded. Fails when the job finished before it was killed `kills` times.
pub fn kill_until_done(
    kills: usize,
    seed: u64,
    pause_ms: std::ops::Range<u64>,
    mut start: impl FnMut(usize) -> std::process::Child,
) {
    let (mut random, mut killed, mut runs) = (seed, 0, 0);
    let started = Instant::now();
    loop {
        runs += 1;
        let mut child = start(runs);
        if killed < kills {
            random ^= random << 13;
            random ^= random >> 7;
            random ^= random << 17;
            std::thread::sleep(Duration::from_millis(pause_ms.start + random % (pause_ms.end - pause_ms.start)));
            if child.try_wait().unwrap().is_none() {
                child.kill().unwrap();
                child.wait().unwrap();
                killed += 1;
                continue;
            }
        }
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "run {runs}: {}", String::from_utf8_lossy(&output.stderr));
        break;
    }
    eprintln!("finished after {killed} kills and {runs} runs in {:.1} s", started.elapsed().as_secs_f64());
    assert_eq!(killed, kills, "the job finished before it was killed {kills} times");
}

/// The lines `child` writes to its standard output (piped), as they come.
pub fn stdout_lines(child: &mut std::process::Child) -> std::sync::mpsc::Receiver<String> {
    use std::io::BufRead;
    let stdout = child.stdout.take().expect("the child's standard output is piped");
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
            if send.send(line).is_err() {
                break;
            }
        }
    });
    receive
}

/// `weir run job.sql` in `dir` with `args` (the crash tests' jobs): its output dropped, its
/// standard error piped, for a failure's report.
pub fn weir_job(dir: &std::path::Path, args: &[&str]) -> std::process::Child {
    std::process::Command::new(env!("CARGO_BIN_EXE_weir"))
        .arg("run")
        .args(args)
        .arg(dir.join("job.sql"))
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}
