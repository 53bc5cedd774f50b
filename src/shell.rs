//! `weir sql`: an interactive shell with line editing and history. Statements may span lines
//! and end with `;`; `HELP;` lists what the shell takes and `QUIT;` (or Ctrl-D) leaves it.

use rustyline::error::ReadlineError;
use rustyline::DefaultEditor;
use weir::planner::{Error, Session};

const HELP: &str = "\
Statements end with ';' and may span several lines:
  CREATE TABLE … WITH (…);     declare a table with a connector
  CREATE VIEW v AS SELECT …;   name a query
  SET 'key' = 'value';         set an option; SET; lists them; RESET;
  SHOW TABLES;  DESCRIBE t;    look at the catalog
  SELECT …;                    run a query and print its rows
  INSERT INTO t SELECT …;      run a job into a table
  EXPLAIN …;                   print the plans of a statement
  HELP;                        this text
  QUIT;                        leave (Ctrl-D too)";

/// Runs the shell on the terminal until QUIT; or Ctrl-D. Ctrl-C at the prompt clears the line;
/// while a statement runs (the terminal then sends it as a signal) it cancels the statement's
/// jobs and the prompt comes back.
pub fn run(mut session: Session) -> Result<(), String> {
    let mut editor = DefaultEditor::new().map_err(|e| format!("cannot start the shell: {e}"))?;
    let interrupt = session.interrupter();
    ctrlc::set_handler(interrupt).map_err(|e| format!("cannot start the shell: {e}"))?;
    println!("weir SQL shell. Statements end with ';'. Type HELP; for help, QUIT; to leave.");
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
                match text.trim().trim_end_matches(';').trim().to_ascii_uppercase().as_str() {
                    "QUIT" | "EXIT" => break,
                    "HELP" => println!("{HELP}"),
                    "" => {}
                    _ => match session.execute_script(&text) {
                        Ok(()) => println!("[INFO] Execute statement succeeded."),
                        Err(e) if matches!(e.error, Error::Runtime(weir::runtime::Error::Cancelled)) => {
                            println!("[INFO] The statement was cancelled.")
                        }
                        Err(e) => println!("[ERROR] Could not execute SQL statement. Reason:\n{}", e.in_statement()),
                    },
                }
            }
            Err(ReadlineError::Interrupted) => statement.clear(),
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(format!("cannot read the terminal: {e}")),
        }
    }
    session.cancel_all();
    println!("Shutting down the session...\ndone.");
    Ok(())
}
