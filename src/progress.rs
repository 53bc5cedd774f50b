//! `weir run`'s progress line on a terminal: rows read and their rate, and for files the bytes
//! read of their total with the time left, redrawn a few times a second while the script's
//! jobs run (not when standard error is not a terminal, nor when the script prints rows on the
//! same terminal); then a summary line, on a terminal or off one: rows written per sink and
//! wall time (on a terminal also how long a run took before it failed or was stopped).

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use indicatif::{HumanCount, ProgressBar, ProgressDrawTarget, ProgressStyle};
use weir::runtime::jobs::JobRegistry;
use weir::runtime::report::JobReport;

/// How often the line is redrawn.
const TICK: Duration = Duration::from_millis(200);

/// The progress of a run: its line, drawn by a thread of its own until dropped, and its summary.
pub struct Progress {
    done: Arc<AtomicBool>,
    /// The thread drawing the line, when it is drawn: a summary then follows even when
    /// nothing was written.
    thread: Option<std::thread::JoinHandle<()>>,
}

/// How a run ended, as its summary line says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Every statement ran.
    Done,
    /// A statement failed (its error follows the summary).
    Failed,
    /// Ctrl-C or SIGTERM stopped the jobs.
    Stopped,
}

/// Whether running `sql` prints anything on standard output: query results, listings, plans,
/// or rows of a `print` table. A progress line redrawn on the same terminal would garble them.
pub fn prints_to_terminal(sql: &str) -> bool {
    use weir::planner::parser::{parse_script, Statement};
    let Ok(statements) = parse_script(sql) else { return true };
    statements.iter().any(|located| match &located.statement {
        Statement::CreateTable(table) => table.options.get("connector").is_some_and(|c| c == "print"),
        Statement::Query(_)
        | Statement::Explain { .. }
        | Statement::ShowTables { .. }
        | Statement::ShowCatalogs { .. }
        | Statement::ShowDatabases { .. }
        | Statement::ShowCurrent { .. }
        | Statement::ShowViews { .. }
        | Statement::ShowColumns { .. }
        | Statement::ShowCreate { .. }
        | Statement::ShowFunctions { .. }
        | Statement::ShowJobs
        | Statement::Describe(_)
        | Statement::DescribeJob(_)
        | Statement::StopJob { .. }
        | Statement::Set { key: None, .. } => true,
        Statement::CreateView { .. }
        | Statement::CreateFunction { .. }
        | Statement::DropFunction { .. }
        | Statement::Drop { .. }
        | Statement::Use { .. }
        | Statement::DropNamespace { .. }
        | Statement::CreateNamespace { .. }
        | Statement::AlterTable { .. }
        | Statement::Set { .. }
        | Statement::Reset(_)
        | Statement::Insert(_)
        | Statement::Delete { .. }
        | Statement::Update { .. }
        | Statement::StatementSet(_) => false,
    })
}

impl Progress {
    /// Starts drawing the progress of the jobs of `jobs` on standard error, when it is a
    /// terminal and `sql` prints nothing on the same terminal.
    pub fn start(jobs: JobRegistry, sql: &str) -> Progress {
        let done = Arc::new(AtomicBool::new(false));
        let shared_terminal = std::io::stdout().is_terminal() && prints_to_terminal(sql);
        let thread = (std::io::stderr().is_terminal() && !shared_terminal)
            .then(|| {
                let stop = Arc::clone(&done);
                std::thread::Builder::new().name("weir-progress".into()).spawn(move || draw(&jobs, &stop)).ok()
            })
            .flatten();
        Progress { done, thread }
    }

    /// Stops drawing and clears the line; then prints the run's summary on standard error:
    /// rows written per sink and wall time (`Done in 1.20 s: wrote 6,000 rows to out.`), or,
    /// on a terminal, how long it ran before it failed or was stopped. Off a terminal, a run
    /// that wrote into no table (queries, EXPLAIN, DDL) or did not end well prints nothing.
    pub fn finish(mut self, reports: &[JobReport], wall: Duration, outcome: Outcome) {
        let drawn = self.thread.is_some();
        self.stop();
        let mut sinks: Vec<(String, u64)> = Vec::new();
        // A query's job (named `SELECT`) prints its rows; it writes into no table.
        for vertex in reports.iter().filter(|r| r.name != "SELECT").flat_map(|r| &r.vertices) {
            if let Some((_, sink)) = vertex.name.rsplit_once("Sink: ") {
                match sinks.iter_mut().find(|(name, _)| name == sink) {
                    Some((_, rows)) => *rows += vertex.records_into_last,
                    None => sinks.push((sink.to_string(), vertex.records_into_last)),
                }
            }
        }
        // Off a terminal, a failure or a stop is said by what follows (the error, the savepoints),
        // and a run that wrote into no table (queries, EXPLAIN, DDL) needs no summary.
        let wanted = match outcome {
            Outcome::Done => drawn || !sinks.is_empty(),
            Outcome::Failed | Outcome::Stopped => drawn,
        };
        if !wanted {
            return;
        }
        let written: Vec<String> =
            sinks.iter().map(|(sink, rows)| format!("{} rows to {sink}", HumanCount(*rows))).collect();
        let written =
            if written.is_empty() { "nothing written".to_string() } else { format!("wrote {}", written.join(", ")) };
        let seconds = wall.as_secs_f64();
        let precision = if seconds < 10.0 { 2 } else { 1 };
        let line = match outcome {
            Outcome::Done => format!("Done in {seconds:.precision$} s: {written}."),
            Outcome::Failed => format!("Failed after {seconds:.precision$} s ({written} by the jobs that ended)."),
            Outcome::Stopped => format!("Stopped after {seconds:.precision$} s ({written} by the jobs that ended)."),
        };
        // A standard error that has gone is no reason to fail the run.
        let _ = writeln!(std::io::stderr(), "{line}");
    }

    fn stop(&mut self) {
        self.done.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop();
    }
}

/// What the sources of the running jobs have read.
#[derive(Debug, Default, Clone, Copy)]
struct Read {
    rows: u64,
    bytes: u64,
    bytes_total: u64,
}

fn read_so_far(jobs: &JobRegistry) -> Read {
    let mut read = Read::default();
    for job in jobs.jobs().iter().filter(|j| !j.lifecycle().state().is_terminal()) {
        for subtask in job.topology.vertices.iter().flat_map(|v| &v.subtasks) {
            let c = subtask.counters();
            read.rows += c.records_read;
            read.bytes += c.bytes_read;
            read.bytes_total += c.bytes_total;
        }
    }
    read
}

fn draw(jobs: &JobRegistry, done: &AtomicBool) {
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    let rows_only =
        ProgressStyle::with_template("{spinner} {msg}").unwrap_or_else(|_| ProgressStyle::default_spinner());
    let with_bytes = ProgressStyle::with_template("[{bar:30}] {percent:>3}% {bytes}/{total_bytes} {msg}, ETA {eta}")
        .map(|s| s.progress_chars("=> "))
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(rows_only.clone());
    let started = Instant::now();
    let mut styled_with_bytes = false;
    while !done.load(Ordering::Acquire) {
        let read = read_so_far(jobs);
        let seconds = started.elapsed().as_secs_f64().max(0.001);
        let rate = read.rows as f64 / seconds;
        let message = format!("{} rows read, {} rows/s", HumanCount(read.rows), HumanCount(rate as u64));
        if read.bytes_total > 0 {
            if !styled_with_bytes {
                bar.set_style(with_bytes.clone());
                styled_with_bytes = true;
            }
            bar.set_length(read.bytes_total);
            bar.set_position(read.bytes.min(read.bytes_total));
        } else if styled_with_bytes {
            bar.set_style(rows_only.clone());
            styled_with_bytes = false;
        }
        bar.set_message(message);
        bar.tick();
        std::thread::sleep(TICK);
    }
    bar.finish_and_clear();
}
