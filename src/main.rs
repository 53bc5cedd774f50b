//! The `weir` command: runs Flink SQL scripts (`weir run`), prints their plans (`weir explain`)
//! and offers an interactive shell (`weir sql`); `weir help` and `COMMAND --help` print the usage
//! below.

mod progress;
mod shell;

/// mimalloc: stateful operators allocate and free many small keys and accumulators per
/// mini-batch, which glibc's allocator serves markedly slower. Counted, so that a job under a
/// memory limit ends with an error naming the operator (see `weir::runtime::memory`). Built
/// without transparent huge pages (`no_thp`): mimalloc returns freed memory in 64 KiB pieces,
/// and each piece touched again cost the kernel a whole 2 MiB page to zero (q5 spent 4–5 s of
/// system time so at 10 M events, 1.6–1.9 s without).
#[global_allocator]
static ALLOCATOR: TrackingAllocator<mimalloc::MiMalloc> = TrackingAllocator(mimalloc::MiMalloc);

use std::process::ExitCode;

use weir::connectors::ConnectorRegistry;
use weir::runtime::memory::TrackingAllocator;
use weir::runtime::RuntimeConfig;
use weir::session::Session;

const USAGE: &str = "\
usage: weir run FILE.sql [OPTIONS]       run a script: its statements in order, its jobs to their end
       weir explain FILE.sql [OPTIONS]   print the plans of a script's statements
       weir sql [OPTIONS]                an interactive SQL shell
       weir compat OLD.sql NEW.sql       whether NEW.sql can start from a savepoint of OLD.sql
       weir help | --help | -h           this text; COMMAND --help for one command
       weir --version | -V               weir's version";

const RUN_USAGE: &str = "\
usage: weir run FILE.sql [OPTIONS]

Runs the statements of FILE.sql in order (FILE.sql and the paths in it resolve against the
working directory, as in Flink). SELECT prints its rows as they come; Ctrl-C stops the running
jobs and ends the command.

options:
  -p, --parallelism N          parallelism.default of the session (default: the number of cores)
  --set key=value              a session option, as SET 'key' = 'value' would set it (repeatable)
  --format tableau|changelog   how SELECT prints its rows (sql-client.execution.result-mode)
  --metrics                    print each job's metrics on standard error when it ends
  -pyfs, --pyFiles FILES       python.files: the files Python functions import from (comma-separated)
  -pyexec, --pyExecutable PY   python.executable: the interpreter whose packages they import
  --stats                      print what the run took (time, CPU, memory, rows) on standard error
  --stats-json FILE            write the same as JSON into FILE
  --resume                     start each job that checkpoints from its newest complete checkpoint
                               (under execution.checkpointing.dir, in the job's directory)
  -h, --help                   this text

--set rest.port=8081 serves Flink's REST API and a dashboard of the running jobs at
http://127.0.0.1:8081/ (rest.bind-address to bind another address); --set
metrics.reporter.prom.port=9249 serves Prometheus metrics at http://127.0.0.1:9249/metrics.

Ctrl-C or SIGTERM stops the running jobs; with execution.checkpointing.savepoint-dir set, each
job that checkpoints first takes a savepoint there and its path is printed. WEIR_LOG=info (any
tracing filter) logs what the jobs do, checkpoints included, to standard error.";

const EXPLAIN_USAGE: &str = "\
usage: weir explain FILE.sql [OPTIONS]

Prints the plans of the statements of FILE.sql, as EXPLAIN prints them, without running them.

options:
  -p, --parallelism N          parallelism.default of the session (default: the number of cores)
  --set key=value              a session option, as SET 'key' = 'value' would set it (repeatable)
  -h, --help                   this text";

const SQL_USAGE: &str = "\
usage: weir sql [OPTIONS]

An interactive SQL shell: statements end with ';' and may span lines; HELP; lists what it takes,
QUIT; or Ctrl-D leaves it; Ctrl-C cancels the running statement.

An INSERT into an unbounded job returns at once with the job's id and the job runs on in the
background (unless table.dml-sync is true); SHOW JOBS lists the session's jobs, STOP JOB '<id>'
[WITH SAVEPOINT] stops one. With rest.port set, Flink's REST API and a dashboard of the jobs are
served at http://127.0.0.1:PORT/.

options:
  -f, --file FILE              run the statements of FILE as the shell would, then wait for its jobs
  -i, --init INIT_FILE         run the statements of INIT_FILE before the first prompt (or FILE)
  -p, --parallelism N          parallelism.default of the session (default: the number of cores)
  --set key=value              a session option, as SET 'key' = 'value' would set it (repeatable);
                               rest.port=8081 serves the REST API and dashboard,
                               metrics.reporter.prom.port=9249 Prometheus metrics
  --format tableau|changelog   how SELECT prints its rows (sql-client.execution.result-mode)
  -h, --help                   this text";

const COMPAT_USAGE: &str = "\
usage: weir compat OLD.sql NEW.sql [OPTIONS]

Plans both scripts (without running them) and says whether a job of NEW.sql can start from a
savepoint of the job of OLD.sql: one line per stateful operator and per changed source, sink or
option (what, verdict, why), then the verdict on the whole job: Fully compatible, Partially
compatible, Incompatible or Compatibility unknown. docs/compat.md lists the rules.

exit code: 0 fully or partially compatible, 1 incompatible, 2 unknown, 3 a script does not plan.

options:
  -p, --parallelism N          parallelism.default of both sessions
  --set key=value              a session option of both sessions, as SET would set it (repeatable);
                               table.optimizer.state-compatibility.ignore-filter (default false) and
                               table.optimizer.state-compatibility.ignore-sink (default true) tune the check
  -h, --help                   this text";

/// `weir compat`'s exit code when a script does not plan.
const COMPAT_ERROR: u8 = 3;

fn main() -> ExitCode {
    // `WEIR_LOG=info` (any tracing filter) logs what jobs do, checkpoints included, to
    // standard error.
    if let Ok(filter) = std::env::var("WEIR_LOG") {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
            .with_writer(std::io::stderr)
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .init();
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().is_some_and(|a| a == "compat") && !args.iter().any(|a| a == "--help" || a == "-h") {
        return match compat(&args[1..]) {
            Ok(code) => ExitCode::from(code),
            Err(message) => {
                complain(&message);
                ExitCode::from(COMPAT_ERROR)
            }
        };
    }
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            complain(&message);
            ExitCode::FAILURE
        }
    }
}

fn run(args: &[String]) -> Result<(), String> {
    let (command, rest) = args.split_first().ok_or_else(|| USAGE.to_string())?;
    let wants_help = rest.iter().any(|a| a == "--help" || a == "-h");
    match command.as_str() {
        "run" if wants_help => print_text(RUN_USAGE),
        "explain" if wants_help => print_text(EXPLAIN_USAGE),
        "sql" if wants_help => print_text(SQL_USAGE),
        "compat" if wants_help => print_text(COMPAT_USAGE),
        "run" => run_script(rest),
        "explain" => explain_script(rest),
        "sql" => {
            let (files, rest) = shell_files(rest)?;
            let settings = parse_settings(&rest)?;
            match files.script {
                Some(file) => shell::run_file(session(&settings)?, &file, files.init.as_deref()),
                None => shell::run(session(&settings)?, files.init.as_deref()),
            }
        }
        "--help" | "-h" | "help" => match rest.first().map(String::as_str) {
            Some("run") => print_text(RUN_USAGE),
            Some("explain") => print_text(EXPLAIN_USAGE),
            Some("sql") => print_text(SQL_USAGE),
            Some("compat") => print_text(COMPAT_USAGE),
            _ => print_text(USAGE),
        },
        "--version" | "-V" => print_text(concat!("weir ", env!("CARGO_PKG_VERSION"))),
        other => Err(format!("Unknown command '{other}'.\n{USAGE}")),
    }
}

/// Prints `text` and a newline on standard output; a closed standard output is no error.
/// Writes a line to standard error; a reader of it that has gone is no reason to fail (nor
/// to panic, as `eprintln!` would).
fn complain(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{text}");
}

fn print_text(text: &str) -> Result<(), String> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}").and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(format!("cannot write to standard output: {e}")),
        _ => Ok(()),
    }
}

/// The files `weir sql` reads: `-f FILE` (run it and end) and `-i INIT_FILE` (run first).
#[derive(Debug, Default)]
struct ShellFiles {
    script: Option<String>,
    init: Option<String>,
}

/// Takes `-f`/`--file` and `-i`/`--init` out of `weir sql`'s arguments.
fn shell_files(args: &[String]) -> Result<(ShellFiles, Vec<String>), String> {
    let mut files = ShellFiles::default();
    let mut rest = Vec::new();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        match arg.as_str() {
            "-f" | "--file" => files.script = Some(iter.next().ok_or("-f needs a file")?.clone()),
            "-i" | "--init" => files.init = Some(iter.next().ok_or("-i needs a file")?.clone()),
            _ => rest.push(arg.clone()),
        }
    }
    Ok((files, rest))
}

/// The session options of `weir sql` (no script file).
fn parse_settings(args: &[String]) -> Result<Vec<(String, String)>, String> {
    let mut with_file = vec!["-".to_string()];
    with_file.extend_from_slice(args);
    parse_arguments(&with_file).map(|(_, settings)| settings)
}

/// Where `weir run` reports what the run did.
#[derive(Debug, Default)]
struct StatsOutput {
    /// `--stats`: as text on standard error.
    text: bool,
    /// `--stats-json FILE`: as JSON into FILE.
    json: Option<String>,
}

/// What `weir run` was asked for.
struct RunArguments {
    file: String,
    settings: Vec<(String, String)>,
    stats: StatsOutput,
    /// `--resume`
    resume: bool,
}

/// The script file and the session options given on the command line.
fn parse_arguments(args: &[String]) -> Result<(String, Vec<(String, String)>), String> {
    parse_run_arguments(args).map(|a| (a.file, a.settings))
}

/// The script file, the session options, the stats outputs and `--resume`.
fn parse_run_arguments(args: &[String]) -> Result<RunArguments, String> {
    let mut file = None;
    let mut settings = Vec::new();
    let mut stats = StatsOutput::default();
    let mut resume = false;
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        match arg.as_str() {
            "--stats" => stats.text = true,
            "--resume" => resume = true,
            "--stats-json" => stats.json = Some(iter.next().ok_or("--stats-json needs a file")?.clone()),
            "--parallelism" | "-p" => {
                let n = iter.next().ok_or("--parallelism needs a number")?;
                settings.push(("parallelism.default".to_string(), n.clone()));
            }
            "--format" => {
                let format = iter.next().ok_or("--format needs tableau or changelog")?;
                settings.push(("sql-client.execution.result-mode".to_string(), format.clone()));
            }
            "--metrics" => settings.push(("weir.print-metrics".to_string(), "true".to_string())),
            // The Flink SQL client's spellings of the two Python settings.
            "-pyfs" | "--pyFiles" => {
                let files = iter.next().ok_or("--pyFiles needs files")?;
                settings.push(("python.files".to_string(), files.clone()));
            }
            "-pyexec" | "--pyExecutable" => {
                let python = iter.next().ok_or("--pyExecutable needs an interpreter")?;
                settings.push(("python.executable".to_string(), python.clone()));
            }
            "--set" => {
                let pair = iter.next().ok_or("--set needs key=value")?;
                let (k, v) = pair.split_once('=').ok_or_else(|| format!("--set needs key=value, got '{pair}'"))?;
                settings.push((k.trim().to_string(), v.trim().to_string()));
            }
            other if file.is_none() && (!other.starts_with('-') || other == "-") => file = Some(other.to_string()),
            other => return Err(format!("Unexpected argument '{other}'.\n{USAGE}")),
        }
    }
    let file = file.ok_or_else(|| USAGE.to_string())?;
    Ok(RunArguments { file, settings, stats, resume })
}

/// A session with the command line's options applied.
fn session(settings: &[(String, String)]) -> Result<Session, String> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let runtime = RuntimeConfig::default().with_parallelism(cores);
    let mut session = Session::new(runtime, ConnectorRegistry::default(), Box::new(std::io::stdout()));
    for (k, v) in settings {
        session.set(k, v).map_err(|e| format!("--set {k}={v}: {e}"))?;
    }
    session.web_addresses().iter().for_each(|line| complain(line));
    Ok(session)
}

fn run_script(args: &[String]) -> Result<(), String> {
    let RunArguments { file, settings, stats, resume } = parse_run_arguments(args)?;
    let sql = std::fs::read_to_string(&file).map_err(|e| format!("{file}: {e}"))?;
    let started = std::time::Instant::now();
    let mut session = session(&settings)?;
    session.resume_from_checkpoints(resume);
    // Ctrl-C or SIGTERM stops the running jobs cleanly (with savepoints where configured); the
    // command then exits.
    let stop = session.stopper();
    let stopping = std::sync::Arc::new(std::sync::Mutex::new(()));
    let handler_stopping = std::sync::Arc::clone(&stopping);
    let _ = ctrlc::set_handler(move || {
        let _stopping = handler_stopping.lock();
        complain("Stopping the running jobs...");
        stop().iter().for_each(|line| complain(line));
    });
    // A progress line while the jobs run (on a terminal only), and a summary line at the end.
    let progress = progress::Progress::start(session.jobs().clone(), &sql);
    let (result, outcome) = match session.execute_script(&sql) {
        // Ctrl-C: the jobs were stopped; the command ends without an error.
        Err(e) if matches!(e.error, weir::planner::Error::Runtime(weir::runtime::Error::Cancelled)) => {
            (Ok(()), Some(progress::Outcome::Stopped))
        }
        // The reader of standard output has gone (`| head`): the command ends quietly.
        Err(e) if e.error.is_output_closed() => (Ok(()), None),
        // A statement refused before any job ran needs no summary.
        Err(e) => {
            let ran = !session.jobs().jobs().is_empty();
            (Err(e.in_file(&file)), ran.then_some(progress::Outcome::Failed))
        }
        Ok(()) => (Ok(()), Some(progress::Outcome::Done)),
    };
    // A stop in progress (savepoints being written) finishes, and says so, before the command ends.
    drop(stopping.lock());
    if let Some(outcome) = outcome {
        progress.finish(session.job_reports(), started.elapsed(), outcome);
    }
    if stats.text || stats.json.is_some() {
        let report = weir::stats::RunStats {
            wall: started.elapsed(),
            usage: weir::runtime::report::ProcessUsage::now(),
            jobs: session.job_reports().to_vec(),
        };
        if stats.text {
            let _ = std::io::Write::write_all(&mut std::io::stderr(), report.text().as_bytes());
        }
        if let Some(path) = &stats.json {
            std::fs::write(path, report.json()).map_err(|e| format!("--stats-json {path}: {e}"))?;
        }
    }
    result
}

/// `weir compat OLD.sql NEW.sql`: prints the check's report; its verdict's exit code.
fn compat(args: &[String]) -> Result<u8, String> {
    let (old_file, rest) = args.split_first().ok_or_else(|| COMPAT_USAGE.to_string())?;
    let (new_file, settings) = parse_arguments(rest).map_err(|_| COMPAT_USAGE.to_string())?;
    let read = |file: &str| std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"));
    let (old, new) = (read(old_file)?, read(&new_file)?);
    // Both sessions are made before planning, so a bad option is reported once.
    session(&settings)?;
    let make = || session(&settings).expect("the options were accepted above");
    let report = weir::session::check_scripts(&old, &new, make).map_err(|(which, e)| {
        let file = if which == "old" { old_file.as_str() } else { new_file.as_str() };
        e.in_file(file)
    })?;
    print_text(report.text().trim_end_matches('\n'))?;
    Ok(report.verdict().exit_code() as u8)
}

fn explain_script(args: &[String]) -> Result<(), String> {
    let (file, settings) = parse_arguments(args)?;
    let sql = std::fs::read_to_string(&file).map_err(|e| format!("{file}: {e}"))?;
    let text = session(&settings)?.explain_script(&sql).map_err(|e| e.in_file(&file))?;
    print_text(text.trim_end_matches('\n'))
}
