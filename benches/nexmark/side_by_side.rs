//! The file variant, weir and Apache Flink side by side in one run: weir's `nexmark` connector
//! writes the events once as JSON (`ddl_gen.sql` at the runner's rate, into a temporary
//! folder); then each query runs over that file (`config.sql`, `ddl_files.sql`, the views, the
//! query unchanged) on weir and on Flink 2.3 (PyFlink's local mini-cluster, `flink/run_sql.py`), one
//! after the other, each measured the same way: CPU seconds and peak RSS of the whole process
//! tree, sampled from `/proc` every 50 ms (Flink runs a JVM under Python), less the start-up of
//! an engine measured once on a file of no events.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::measure::{measure, Measured};

/// One query on both engines.
pub struct Pair {
    pub query: String,
    pub parallelism: usize,
    pub weir: Result<Measured, String>,
    pub flink: Result<Measured, String>,
}

/// The engines and where their inputs are.
pub struct Setup {
    pub python: String,
    pub dir: PathBuf,
    pub events: u64,
    /// Start-up CPU seconds of each engine (a query over no events).
    pub startup: [f64; 2],
    /// The class path holding the CountChar UDF for q14, when it could be compiled.
    pub udf_jar: Option<PathBuf>,
}

fn read(file: &str) -> Result<String, String> {
    std::fs::read_to_string(Path::new("benches/nexmark").join(file)).map_err(|e| format!("{file}: {e}"))
}

/// Writes `events` events as JSON into `dir/<name>` with weir.
fn write_events(dir: &Path, name: &str, events: u64) -> Result<PathBuf, String> {
    let path = dir.join(name);
    let _ = std::fs::remove_dir_all(&path);
    let sink = format!(
        "CREATE TABLE events (event_type int, person {p}, auction {a}, bid {b}) WITH (\n\
         'connector' = 'filesystem', 'path' = '{}', 'format' = 'json');\n\
         INSERT INTO events SELECT event_type, person, auction, bid FROM datagen;\n",
        path.display(),
        p = "ROW<id BIGINT, name VARCHAR, emailAddress VARCHAR, creditCard VARCHAR, city VARCHAR, state VARCHAR, \
             `dateTime` TIMESTAMP(3), extra VARCHAR>",
        a = "ROW<id BIGINT, itemName VARCHAR, description VARCHAR, initialBid BIGINT, reserve BIGINT, \
             `dateTime` TIMESTAMP(3), expires TIMESTAMP(3), seller BIGINT, category BIGINT, extra VARCHAR>",
        b = "ROW<auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, `dateTime` TIMESTAMP(3), \
             extra VARCHAR>",
    );
    let script = super::substitute(&(read("queries/ddl_gen.sql")? + "\n" + &sink), events, dir, Some(&path));
    let file = dir.join(format!("{name}.sql"));
    std::fs::write(&file, script).map_err(|e| e.to_string())?;
    let output = Command::new(super::weir_binary())
        .args(["run", &file.display().to_string(), "-p", "1"])
        .output()
        .map_err(|e| e.to_string())?;
    if !output.status.success() {
        return Err(format!("writing the events failed: {}", String::from_utf8_lossy(&output.stderr).trim()));
    }
    Ok(path)
}

/// The file variant of `query` over `events_path`.
fn script(query: &str, setup: &Setup, events_path: &Path) -> Result<String, String> {
    let text = read("config.sql")?
        + "\n"
        + &read("ddl_files.sql")?
        + "\n"
        + &read("queries/ddl_views.sql")?
        + "\n"
        + &read(&format!("queries/{query}.sql"))?;
    Ok(super::substitute(&text, setup.events, &setup.dir, Some(events_path)))
}

fn weir(script: &Path, parallelism: usize) -> Command {
    let mut command = Command::new(super::weir_binary());
    command.args(["run", &script.display().to_string(), "-p", &parallelism.to_string()]);
    command
}

fn flink(setup: &Setup, script: &Path, parallelism: usize) -> Command {
    let mut command = Command::new(&setup.python);
    command.arg("benches/nexmark/flink/run_sql.py").arg(script).arg(parallelism.to_string());
    if let Some(jar) = &setup.udf_jar {
        command.env("HADOOP_CLASSPATH", jar);
    }
    command
}

/// Compiles `flink/CountChar.java` against PyFlink's jars, for q14 on Flink.
fn udf_jar(python: &str, dir: &Path) -> Option<PathBuf> {
    let lib = Command::new(python)
        .args(["-c", "import os, pyflink; print(os.path.join(os.path.dirname(pyflink.__file__), 'lib'))"])
        .output()
        .ok()?;
    let lib = String::from_utf8(lib.stdout).ok()?.trim().to_string();
    let classes = dir.join("udf-classes");
    let compiled = Command::new("javac")
        .args(["--release", "11", "-cp", &format!("{lib}/*"), "-d", &classes.display().to_string()])
        .arg("benches/nexmark/flink/CountChar.java")
        .status()
        .ok()?;
    let jar = dir.join("count-char.jar");
    let packed = Command::new("jar")
        .args(["cf", &jar.display().to_string(), "-C", &classes.display().to_string(), "."])
        .status()
        .ok()?;
    (compiled.success() && packed.success()).then_some(jar)
}

/// The events and the scripts are removed with the setup (1 M events take 320 MB as JSON).
impl Drop for Setup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Setup {
    /// Writes the events and measures each engine's start-up.
    pub fn new(python: String, events: u64) -> Result<Setup, String> {
        let dir = std::env::temp_dir().join(format!("weir-nexmark-files-{}", std::process::id()));
        super::write_side_input(&dir).map_err(|e| e.to_string())?;
        let udf_jar = udf_jar(&python, &dir);
        let mut setup = Setup { python, dir, events, startup: [0.0; 2], udf_jar };
        eprintln!("writing {events} events as JSON …");
        write_events(&setup.dir, "events", events)?;
        let empty = setup.dir.join("no-events");
        std::fs::create_dir_all(&empty).map_err(|e| e.to_string())?;
        let file = setup.dir.join("startup.sql");
        std::fs::write(&file, script("q0", &setup, &empty)?).map_err(|e| e.to_string())?;
        setup.startup = [measure(weir(&file, 1))?.cpu, measure(flink(&setup, &file, 1))?.cpu];
        eprintln!("start-up CPU seconds: weir {:.2}, Flink {:.2}", setup.startup[0], setup.startup[1]);
        Ok(setup)
    }

    /// Runs `query` on both engines over the events.
    pub fn run(&self, query: &str, parallelism: usize) -> Result<Pair, String> {
        let file = self.dir.join(format!("{query}-files.sql"));
        std::fs::write(&file, script(query, self, &self.dir.join("events"))?).map_err(|e| e.to_string())?;
        let _ = std::fs::remove_dir_all(self.dir.join("data/output"));
        let weir = measure(weir(&file, parallelism));
        let _ = std::fs::remove_dir_all(self.dir.join("data/output"));
        let flink = measure(flink(self, &file, parallelism));
        Ok(Pair { query: query.to_string(), parallelism, weir, flink })
    }

    /// Prints the table of `pairs`.
    pub fn print(&self, pairs: &[Pair]) {
        println!(
            "File variant: {} events as JSON, read by both engines; CPU less start-up (weir {:.2} s, Flink {:.2} s)",
            self.events, self.startup[0], self.startup[1]
        );
        println!(
            "{:<5} {:>2} | {:>12} {:>8} | {:>12} {:>8} | {:>7} {:>9}",
            "query", "p", "weir ev/CPU", "weir MB", "Flink ev/CPU", "Flink MB", "CPU ×", "memory ÷"
        );
        let per_cpu = |m: &Measured, startup: f64| self.events as f64 / (m.cpu - startup).max(0.01);
        for pair in pairs {
            let cell = |m: &Result<Measured, String>, startup: f64| match m {
                Ok(m) => format!("{:>12.0} {:>8.0}", per_cpu(m, startup), m.peak_mb),
                Err(_) => format!("{:>12} {:>8}", "failed", "-"),
            };
            let ratios = match (&pair.weir, &pair.flink) {
                (Ok(w), Ok(f)) => format!(
                    "{:>6.1}× {:>8.1}×",
                    per_cpu(w, self.startup[0]) / per_cpu(f, self.startup[1]),
                    f.peak_mb / w.peak_mb.max(1.0)
                ),
                _ => format!("{:>7} {:>9}", "-", "-"),
            };
            println!(
                "{:<5} {:>2} | {} | {} | {ratios}",
                pair.query,
                pair.parallelism,
                cell(&pair.weir, self.startup[0]),
                cell(&pair.flink, self.startup[1])
            );
            for (engine, m) in [("weir", &pair.weir), ("Flink", &pair.flink)] {
                if let Err(e) = m {
                    println!("      {engine} failed: {e}");
                }
            }
        }
    }
}
