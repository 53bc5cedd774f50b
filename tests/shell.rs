//! `weir sql` driven through a pseudo-terminal: a user types statements and reads the screen.

use rexpect::session::spawn_command;
use std::process::Command;

#[test]
fn the_shell_runs_statements_typed_at_its_prompt() {
    let mut command = Command::new(env!("CARGO_BIN_EXE_weir"));
    command.args(["sql", "--parallelism", "1"]);
    let mut shell = spawn_command(command, Some(30_000)).unwrap();
    shell.exp_string("weir> ").unwrap();
    shell.send_line("CREATE TABLE t (a INT) WITH ('connector' = 'datagen', 'number-of-rows' = '3',").unwrap();
    shell.exp_string("-> ").unwrap();
    shell.send_line("'fields.a.kind' = 'sequence', 'fields.a.start' = '1', 'fields.a.end' = '3');").unwrap();
    shell.exp_string("[INFO] Execute statement succeeded.").unwrap();
    shell.send_line("SELECT SUM(a) AS total FROM t;").unwrap();
    shell.exp_string("| +U |           6 |").unwrap();
    shell.exp_string("Received a total of 5 rows").unwrap();
    shell.send_line("SELECT nope FROM t;").unwrap();
    shell.exp_string("Column 'nope' not found in any table").unwrap();
    shell.send_line("HELP;").unwrap();
    shell.exp_string("QUIT;                        leave").unwrap();
    shell.send_line("QUIT;").unwrap();
    shell.exp_eof().unwrap();
}
