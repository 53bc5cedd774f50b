//! `weir sql`: an interactive shell with line editing and history. Statements may span lines
//! and end with `;`; `HELP;` lists what the shell takes and `QUIT;` (or Ctrl-D) leaves it.

use rustyline::error::ReadlineError;
use rustyline::DefaultEditor;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use weir::planner::Error;
use weir::session::Session;

const HELP: &str = "\
Statements end with ';' and may span several lines:
  CREATE TABLE … WITH (…);     declare a table with a connector
  CREATE VIEW v AS SELECT …;   name a query
  SET 'key' = 'value';         set an option; SET; lists them; RESET;
  SHOW TABLES;  DESCRIBE t;    look at the catalog
  SELECT …;                    run a query and print its rows
  INSERT INTO t SELECT …;      run a job into a table (an unbounded one runs on in the background)
  SHOW JOBS;                   the session's jobs, their ids and states
  DESCRIBE JOB '<id>';         one of them
  STOP JOB '<id>' [WITH SAVEPOINT [WITH DRAIN]];  stop one, taking a savepoint first
  EXPLAIN …;                   print the plans of a statement
  HELP;                        this text
  QUIT;                        leave (Ctrl-D too)";

/// Why the shell stopped before QUIT;.
enum Stopped {
    /// Standard output cannot be written.
    Output(std::io::Error),
    /// The terminal cannot be read or the shell cannot start.
    Shell(String),
}

impl From<std::io::Error> for Stopped {
    fn from(e: std::io::Error) -> Self {
        Stopped::Output(e)
    }
}

/// Runs the shell on the terminal until QUIT; or Ctrl-D. Ctrl-C at the prompt clears the line;
/// while a statement runs (the terminal then sends it as a signal) it cancels the statement's
/// jobs and the prompt comes back. A reader of standard output that goes away (`| head`) ends
/// the shell quietly; standard output that cannot be written otherwise (`> /dev/full`) ends it
/// with that error. The session's jobs are cancelled either way; the shell waits until they have
/// ended, unless Ctrl-C asks it to leave at once.
pub fn run(mut session: Session, init: Option<&str>) -> Result<(), String> {
    session.detach_unbounded_jobs(true);
    let interrupted = Arc::new(AtomicBool::new(false));
    let interrupt = session.interrupter();
    let pressed = Arc::clone(&interrupted);
    ctrlc::set_handler(move || {
        pressed.store(true, Ordering::SeqCst);
        interrupt();
    })
    .map_err(|e| format!("cannot start the shell: {e}"))?;
    if let Some(file) = init {
        let sql = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
        session.execute_script(&sql).map_err(|e| e.in_file(file))?;
        announce_submitted(&mut session).map(drop).or_else(output_failed)?;
    }
    let result = shell(&mut session);
    session.cancel_all();
    if !session.all_ended() {
        interrupted.store(false, Ordering::SeqCst);
        say("Cancelling the session's jobs... (Ctrl-C to leave without waiting)").or_else(output_failed)?;
        while !session.all_ended() {
            if interrupted.load(Ordering::SeqCst) {
                // A job stuck in a function call may never end: leave it to the process's end,
                // as a crash would (sinks that commit on checkpoints commit nothing more).
                std::mem::forget(session);
                return say("Left without waiting for the jobs to end.").or_else(output_failed);
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
    match result {
        Ok(()) => say("Shutting down the session...\ndone.").or_else(output_failed),
        Err(Stopped::Output(e)) => output_failed(e),
        Err(Stopped::Shell(message)) => Err(message),
    }
}

/// `weir sql -f FILE`: runs the file's statements as the shell would (INSERTs into unbounded
/// jobs announced with their ids), then waits for the jobs it started; Ctrl-C stops them.
pub fn run_file(mut session: Session, file: &str, init: Option<&str>) -> Result<(), String> {
    session.detach_unbounded_jobs(true);
    // Ctrl-C stops every job of the file, with savepoints where configured, as `weir run` does.
    let stop = session.stopper();
    let _ = ctrlc::set_handler(move || {
        use std::io::Write;
        stop().iter().for_each(|line| {
            let _ = writeln!(std::io::stderr(), "{line}");
        });
    });
    for file in init.into_iter().chain([file]) {
        let sql = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
        let ran = session.execute_script(&sql);
        announce_submitted(&mut session).map(drop).or_else(output_failed)?;
        match ran {
            Err(e) if matches!(e.error, Error::Runtime(weir::runtime::Error::Cancelled)) => return Ok(()),
            Err(e) if e.error.is_output_closed() => return Ok(()),
            other => other.map_err(|e| e.in_file(file))?,
        }
    }
    // A job's failure is reported at its INSERT, in the file that started it: the last one
    // (an init file's jobs are counted against the file that follows it).
    match session.wait_all() {
        Err(e) if matches!(e.error, Error::Runtime(weir::runtime::Error::Cancelled)) => Ok(()),
        other => other.map_err(|e| e.in_file(file)),
    }
}

/// Flink's lines for each INSERT the session started in the background since it last said;
/// whether there was any.
fn announce_submitted(session: &mut Session) -> std::io::Result<bool> {
    let submitted = session.take_submitted();
    for id in &submitted {
        say(&format!(
            "[INFO] Submitting SQL update statement to the cluster...\n\
             [INFO] SQL update statement has been successfully submitted to the cluster:\n\
             Job ID: {id}\n"
        ))?;
    }
    Ok(!submitted.is_empty())
}

/// A write to standard output failed: quiet when its reader has gone, else the error.
fn output_failed(e: std::io::Error) -> Result<(), String> {
    match e.kind() {
        std::io::ErrorKind::BrokenPipe => Ok(()),
        _ => Err(format!("cannot write to standard output: {e}")),
    }
}

/// Writes a line of the shell's own to standard output.
fn say(text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}")?;
    out.flush()
}

fn shell(session: &mut Session) -> Result<(), Stopped> {
    let mut editor = DefaultEditor::new().map_err(|e| Stopped::Shell(format!("cannot start the shell: {e}")))?;
    say("weir SQL shell. Statements end with ';'. Type HELP; for help, QUIT; to leave.")?;
    let mut statement = String::new();
    loop {
        let prompt = if statement.is_empty() { "weir> " } else { "   -> " };
        match editor.readline(prompt) {
            Ok(line) => {
                if !statement.is_empty() {
                    statement.push('\n');
                }
                statement.push_str(&line);
                if !statement.trim_end().ends_with(';') {
                    continue;
                }
                let _ = editor.add_history_entry(statement.as_str());
                let text = std::mem::take(&mut statement);
                let serving = session.web_addresses();
                match text.trim().trim_end_matches(';').trim().to_ascii_uppercase().as_str() {
                    "QUIT" | "EXIT" => return Ok(()),
                    "HELP" => say(HELP)?,
                    "" => {}
                    _ => match session.execute_script(&text) {
                        Ok(()) if announce_submitted(session)? => {}
                        Ok(()) => say("[INFO] Execute statement succeeded.")?,
                        Err(e) if matches!(e.error, Error::Runtime(weir::runtime::Error::Cancelled)) => {
                            say("[INFO] The statement was cancelled.")?
                        }
                        // The query's rows could not be written: standard output is gone.
                        Err(e) if e.error.is_output_closed() => {
                            return Err(Stopped::Output(std::io::ErrorKind::BrokenPipe.into()))
                        }
                        Err(e) => {
                            say(&format!("[ERROR] Could not execute SQL statement. Reason:\n{}", e.in_statement()))?
                        }
                    },
                }
                // A SET that started or moved a web server says where it is.
                for line in session.web_addresses().into_iter().filter(|l| !serving.contains(l)) {
                    say(&format!("[INFO] {line}"))?;
                }
            }
            Err(ReadlineError::Interrupted) => statement.clear(),
            Err(ReadlineError::Eof) => return Ok(()),
            Err(ReadlineError::Io(e)) => return Err(Stopped::Output(e)),
            Err(e) => return Err(Stopped::Shell(format!("cannot read the terminal: {e}"))),
        }
    }
}
