//! A throwaway PostgreSQL server for the tests of one test binary: initialized in a temporary
//! directory, listening on a free loopback port, stopped (and its directory removed) when the
//! test process exits. The server programs come from `scripts/ensure-postgres`.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// A running server.
pub struct PgServer {
    /// Its TCP port on 127.0.0.1.
    pub port: u16,
    bin: PathBuf,
    /// The shell that runs the server and stops it after this process.
    _watchdog: std::process::Child,
}

fn bin_dir() -> PathBuf {
    if let Ok(dir) = std::env::var("WEIR_PG_BIN") {
        return PathBuf::from(dir);
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|entries| entries.filter_map(|e| e.ok()).map(|e| e.path().join("bin")).collect())
        .unwrap_or_default();
    found.retain(|d| d.join("initdb").exists());
    found.sort();
    found.pop().unwrap_or_else(|| {
        panic!("PostgreSQL's server programs are not installed: run scripts/test (or scripts/ensure-postgres)")
    })
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// A command running `program` as the `postgres` user when the tests run as root (the server
/// refuses to run as root).
fn as_server_user(program: &str) -> Command {
    if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--", program]);
        c
    } else {
        Command::new(program)
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).unwrap()
}

/// The server of this test binary, started on first use.
pub fn server() -> &'static PgServer {
    static SERVER: OnceLock<PgServer> = OnceLock::new();
    SERVER.get_or_init(start)
}

fn start() -> PgServer {
    let bin = bin_dir();
    let base = std::env::temp_dir().join(format!("weir-pg-{}-{}", std::process::id(), free_port()));
    let data = base.join("data");
    std::fs::create_dir_all(&base).unwrap();
    if is_root() {
        let status = Command::new("chown").args(["-R", "postgres:postgres"]).arg(&base).status().unwrap();
        assert!(status.success(), "could not hand {} to the postgres user", base.display());
    }
    let initdb = bin.join("initdb");
    let output = as_server_user(initdb.to_str().unwrap())
        .args(["-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8", "-D"])
        .arg(&data)
        .output()
        .unwrap();
    assert!(output.status.success(), "initdb failed: {}", String::from_utf8_lossy(&output.stderr));
    let port = free_port();
    // The server runs under a shell that stops it, and removes its directory, once this test
    // process is gone.
    let script = format!(
        "{postgres} -D {data} -p {port} -k {base} -c listen_addresses=127.0.0.1 -c fsync=off \
         -c max_connections=200 >{base}/log 2>&1 & pg=$!; \
         while [ -d /proc/{pid} ]; do sleep 0.5; done; kill -INT $pg; wait $pg; rm -rf {base}",
        postgres = bin.join("postgres").display(),
        data = data.display(),
        base = base.display(),
        pid = std::process::id(),
    );
    let watchdog = as_server_user("sh")
        .args(["-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let server = PgServer { port, bin, _watchdog: watchdog };
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let ready = Command::new(server.bin.join("pg_isready"))
            .args(["-q", "-h", "127.0.0.1", "-p", &port.to_string()])
            .status()
            .is_ok_and(|s| s.success());
        if ready {
            break;
        }
        let log = std::fs::read_to_string(base.join("log")).unwrap_or_default();
        assert!(Instant::now() < deadline, "PostgreSQL did not start: {log}");
        std::thread::sleep(Duration::from_millis(100));
    }
    server
}

impl PgServer {
    /// `jdbc:postgresql://127.0.0.1:port/postgres`
    pub fn url(&self) -> String {
        format!("jdbc:postgresql://127.0.0.1:{}/postgres", self.port)
    }

    /// Runs SQL through psql, panicking with its message on failure; returns what it printed
    /// (unaligned, tuples only).
    pub fn psql(&self, sql: &str) -> String {
        let output = Command::new(self.bin.join("psql"))
            .args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-U", "postgres"])
            .args(["-p", &self.port.to_string(), "-d", "postgres", "-c", sql])
            .output()
            .unwrap();
        assert!(output.status.success(), "psql failed on {sql}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap()
    }
}
