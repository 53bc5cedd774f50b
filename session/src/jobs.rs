//! The jobs of a session as its user watches and steers them: the web server of `rest.port`
//! (Flink's REST API and a dashboard) and the Prometheus endpoint of
//! `metrics.reporter.prom.port` over the session's [`JobRegistry`], and the shell's
//! `SHOW JOBS`, `DESCRIBE JOB '<id>'` and `STOP JOB '<id>' [WITH SAVEPOINT]`.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::Duration;

use weir_runtime::jobs::{JobInfo, JobRegistry, Registration};
use weir_runtime::settings::Setting;
use weir_web::{Access, Serves, WebServer};

use super::recovery::SAVEPOINT_DIR;
use super::Session;
use crate::tableau::text_table;
use weir_planner::error::{Error, Result};

/// `rest.port`: serve Flink's REST API and the dashboard on this port (only when set).
pub static REST_PORT: Setting<i64> = Setting::int(
    "rest.port",
    8081,
    "8081",
    |n| (0..=65535).contains(&n),
    "a port number from 0 to 65535",
    "serve Flink's REST API, the web dashboard and /metrics on this port (only when set; 0 picks a free port)",
);
/// `rest.bind-address`: the address the REST server binds.
pub static REST_BIND_ADDRESS: Setting<String> = Setting::text(
    "rest.bind-address",
    "",
    "the address the REST server binds (unset: rest.address, else 127.0.0.1, loopback only)",
)
.shown_as("none");
/// `rest.address`: the address clients reach the REST server at.
pub static REST_ADDRESS: Setting<String> = Setting::text(
    "rest.address",
    "",
    "the address clients reach the REST server at; bound when rest.bind-address is unset",
)
.shown_as("none");
/// `rest.idleness-timeout`: a REST connection idle this long is closed (Flink's key and default).
pub static REST_IDLENESS_TIMEOUT: Setting<Duration> = Setting::duration(
    "rest.idleness-timeout",
    Duration::from_secs(300),
    "5 min",
    "a REST or /metrics connection that sends and receives nothing for this long is closed",
);
/// `rest.server.max-connections`: weir's cap on open REST connections.
pub static REST_MAX_CONNECTIONS: Setting<i64> = Setting::int(
    "rest.server.max-connections",
    128,
    "128",
    |n| (1..=65_536).contains(&n),
    "an integer from 1 to 65536",
    "connections the REST server holds open at once (weir's); more wait until one closes",
);
/// `rest.authentication.token`: weir's bearer token for the REST API.
pub static REST_TOKEN: Setting<String> = Setting::text(
    "rest.authentication.token",
    "",
    "when set, every REST request must carry 'Authorization: Bearer <token>' (weir's; others are answered 401)",
)
.shown_as("none");
/// `rest.savepoint.allowed-directories`: where REST requests may write savepoints.
pub static REST_SAVEPOINT_DIRS: Setting<String> = Setting::text(
    "rest.savepoint.allowed-directories",
    "",
    "directories (comma-separated) a REST request may name as a savepoint's target besides \
     execution.checkpointing.savepoint-dir (weir's; nothing else is written to)",
)
.shown_as("none");
/// `metrics.reporter.prom.port`: serve `/metrics` for Prometheus on this port (or the first
/// free one of a range `9250-9260`), as Flink's Prometheus reporter does.
pub static PROMETHEUS_PORT: Setting<String> = Setting::text(
    "metrics.reporter.prom.port",
    "9249",
    "serve /metrics in the Prometheus text format on this port or the first free one of a range (only when set)",
);
/// `metrics.reporter.prom.factory.class`: Flink's way to turn the Prometheus reporter on.
pub static PROMETHEUS_FACTORY: Setting<String> = Setting::text(
    "metrics.reporter.prom.factory.class",
    "",
    "org.apache.flink.metrics.prometheus.PrometheusReporterFactory serves /metrics on metrics.reporter.prom.port",
)
.shown_as("none");

const PROMETHEUS_FACTORY_CLASS: &str = "org.apache.flink.metrics.prometheus.PrometheusReporterFactory";

/// The web servers a session runs, each with the address it was asked for.
#[derive(Debug, Default)]
pub(crate) struct Servers {
    rest: Option<(String, WebServer)>,
    /// What the REST server lets clients do: a change restarts it.
    rest_access: Option<Access>,
    prometheus: Option<(String, WebServer)>,
}

impl Session {
    /// The jobs this session started, oldest first, as the REST API lists them.
    pub fn jobs(&self) -> &JobRegistry {
        &self.jobs
    }

    /// Where the REST API and dashboard are served, when they are.
    pub fn rest_address(&self) -> Option<std::net::SocketAddr> {
        self.servers.rest.as_ref().map(|(_, s)| s.address())
    }

    /// Where `/metrics` is served on a port of its own, when it is.
    pub fn prometheus_address(&self) -> Option<std::net::SocketAddr> {
        self.servers.prometheus.as_ref().map(|(_, s)| s.address())
    }

    /// The lines that say where the web servers are, as Flink's logs say it
    /// (`Web frontend listening at http://127.0.0.1:8081.`): for a command to print.
    pub fn web_addresses(&self) -> Vec<String> {
        let rest = self.rest_address().map(|a| format!("Web frontend listening at http://{a}."));
        let prometheus = self.prometheus_address().map(|a| format!("Prometheus metrics at http://{a}/metrics."));
        rest.into_iter().chain(prometheus).collect()
    }

    /// Starts, moves or stops the web servers as the settings now ask.
    ///
    /// # Errors
    /// An address that cannot be bound (a port in use), naming the option.
    pub(super) fn apply_web_settings(&mut self) -> Result<()> {
        let rest = self.settings.text(REST_PORT.spec.key).map(|_| {
            let host = [&REST_BIND_ADDRESS, &REST_ADDRESS]
                .into_iter()
                .map(|s| self.settings.get(s))
                .find(|h| !h.is_empty())
                .unwrap_or_else(|| "127.0.0.1".to_string());
            format!("{host}:{}", self.settings.get(&REST_PORT))
        });
        let access = self.rest_access()?;
        if self.servers.rest_access.as_ref() != Some(&access) {
            self.servers.rest = None;
        }
        if let Some(address) = &rest {
            warn_if_reachable_from_elsewhere(address, &access);
        }
        let jobs = self.jobs.clone();
        let given = access.clone();
        replace_server(&mut self.servers.rest, rest, |address| {
            WebServer::start(jobs.clone(), address, Serves::RestAndDashboard, "rest.port", given.clone())
                .map_err(|e| Error::Configuration(e.to_string()))
        })?;
        self.servers.rest_access = Some(access);
        let factory = self.settings.get(&PROMETHEUS_FACTORY);
        if !factory.is_empty() && factory != PROMETHEUS_FACTORY_CLASS {
            return Err(Error::Configuration(format!(
                "Could not load the metric reporter '{factory}': weir has the Prometheus reporter only \
                 ('{PROMETHEUS_FACTORY_CLASS}')."
            )));
        }
        let wanted = self.settings.text(PROMETHEUS_PORT.spec.key).is_some() || !factory.is_empty();
        let ports = wanted.then(|| self.settings.get(&PROMETHEUS_PORT));
        let jobs = self.jobs.clone();
        replace_server(&mut self.servers.prometheus, ports, |ports| start_prometheus(&jobs, ports))?;
        Ok(())
    }

    /// Adds a started job to the session's registry.
    pub(super) fn register_job(
        &self,
        handle: &weir_runtime::JobHandle,
        name: &str,
        streaming: bool,
        checkpointing: weir_runtime::checkpoint::CheckpointConfig,
    ) {
        let dir = self.settings.get(&SAVEPOINT_DIR);
        self.jobs.register(
            handle,
            Registration {
                name: name.to_string(),
                streaming,
                checkpointing,
                savepoint_dir: (!dir.is_empty()).then(|| PathBuf::from(dir)),
            },
        );
    }

    /// Waits until `job` has ended, at most `timeout`; Ctrl-C stops the wait (the job was
    /// asked to stop already and goes on stopping in the background).
    fn await_end(&mut self, job: &JobInfo, timeout: std::time::Duration) -> Result<()> {
        let deadline = std::time::Instant::now() + timeout;
        while !job.await_end(INTERRUPT_POLL) && std::time::Instant::now() < deadline {
            if self.interrupted.load(Ordering::SeqCst) {
                return self.abandon_stop(job);
            }
        }
        Ok(())
    }

    /// Ctrl-C while `STOP JOB` waited: the job is cancelled (no savepoint is written once it is)
    /// and the statement ends at once, saying so; the job ends in the background.
    fn abandon_stop(&mut self, job: &JobInfo) -> Result<()> {
        job.cancel();
        self.write_text(&format!(
            "Stopping job {} was interrupted: the job is being cancelled in the background; no savepoint path is reported.\n",
            job.id
        ))?;
        Err(Error::Runtime(weir_runtime::Error::Cancelled))
    }

    fn job(&self, id: &str) -> Result<std::sync::Arc<JobInfo>> {
        self.jobs.get(id).ok_or_else(|| Error::Table(format!("Could not find job '{id}' in this session.")))
    }

    /// `SHOW JOBS`: id, name, status and start time of every job of the session.
    pub(super) fn show_jobs(&mut self) -> Result<()> {
        let rows: Vec<Vec<String>> = self.jobs.jobs().iter().map(|job| job_row(job)).collect();
        self.write_text(&text_table(&JOB_COLUMNS, &rows))
    }

    /// `DESCRIBE JOB '<id>'`: the job's line of `SHOW JOBS`.
    pub(super) fn describe_job(&mut self, id: &str) -> Result<()> {
        let job = self.job(id)?;
        self.write_text(&text_table(&JOB_COLUMNS, &[job_row(&job)]))
    }

    /// `STOP JOB '<id>' [WITH SAVEPOINT] [WITH DRAIN]`: cancels the job, first taking a
    /// savepoint into `execution.checkpointing.savepoint-dir` (the session's now, else the
    /// job's) when asked, of a job that checkpoints periodically; prints the savepoint's
    /// absolute path. `WITH DRAIN` ends the job's sources before the savepoint, so that event time ends
    /// and every window fires; as in Flink's SQL client it only counts with `WITH SAVEPOINT`
    /// (without, the job is cancelled).
    pub(super) fn stop_job(&mut self, id: &str, savepoint: bool, drain: bool) -> Result<()> {
        let job = self.job(id)?;
        if job.lifecycle().state().is_terminal() {
            return Err(Error::Table(format!(
                "Could not stop job {id}: the job is {}.",
                job.lifecycle().state().as_str()
            )));
        }
        // As Flink's client, the statement returns once the job has stopped; Ctrl-C stops the
        // wait and cancels the job.
        self.interrupted.store(false, Ordering::SeqCst);
        let ended = job.checkpointing.timeout.max(std::time::Duration::from_secs(60));
        if !savepoint {
            job.cancel();
            return self.await_end(&job, ended);
        }
        // As Flink's client: the session's directory at the time of the stop, else the one the
        // job was started with.
        let session_dir = self.settings.get(&SAVEPOINT_DIR);
        let Some(dir) =
            (!session_dir.is_empty()).then(|| PathBuf::from(session_dir)).or_else(|| job.savepoint_dir.clone())
        else {
            return Err(Error::Configuration(format!(
                "Could not stop job {id} with a savepoint: no savepoint directory is set. Set one with SET \
                 'execution.checkpointing.savepoint-dir' = '/path/to/savepoints'; and stop the job again."
            )));
        };
        let (done, stopped) = std::sync::mpsc::channel();
        let stopping = std::sync::Arc::clone(&job);
        std::thread::Builder::new()
            .name("weir-stop".into())
            .spawn(move || {
                let _ = done.send(stopping.stop_with_savepoint(&dir, stopping.checkpointing.timeout, drain));
            })
            .map_err(|e| Error::Runtime(weir_runtime::Error::execution(format!("cannot stop job {id}: {e}"))))?;
        let started = std::time::Instant::now();
        let mut told = false;
        let path = loop {
            match stopped.recv_timeout(INTERRUPT_POLL) {
                Ok(result) => break result?,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) if self.interrupted.load(Ordering::SeqCst) => {
                    return self.abandon_stop(&job);
                }
                // A savepoint that takes a while: the wait says so (on stderr, so that the
                // statement's output stays Flink's) and how to end it.
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) if !told && started.elapsed() >= SLOW_STOP => {
                    told = true;
                    eprintln!("Waiting for the savepoint of job {id}... (Ctrl-C to stop waiting and cancel the job)");
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break None,
            }
        };
        self.await_end(&job, ended)?;
        let path = path.map_or_else(|| "(the job ended before its savepoint)".to_string(), |p| p.display().to_string());
        self.write_text(&text_table(&["savepoint path"], &[vec![path]]))
    }
}

/// Puts the server `start` starts for `wanted` (`host:port`, or the reporter's `port` or
/// `low-high`) in `slot`, unless it already serves `wanted`; `None` stops it. Should the new one
/// not start, the old one keeps serving: the new one is started first, and only when the old one
/// holds a port the new one may take is the old one stopped, the new one tried again, and the old
/// one started again should that fail.
///
/// # Errors
/// The new server cannot start.
fn replace_server(
    slot: &mut Option<(String, WebServer)>,
    wanted: Option<String>,
    start: impl Fn(&str) -> Result<WebServer>,
) -> Result<()> {
    if slot.as_ref().map(|(serving, _)| serving) == wanted.as_ref() {
        return Ok(());
    }
    let Some(address) = wanted else {
        *slot = None;
        return Ok(());
    };
    let refused = match start(&address) {
        Ok(server) => {
            tracing::info!(address = %server.address(), "web server started");
            *slot = Some((address, server));
            return Ok(());
        }
        Err(refused) => refused,
    };
    let holds_wanted_port = slot
        .as_ref()
        .is_some_and(|(_, old)| ports_of(&address).is_some_and(|ports| ports.contains(&old.address().port())));
    if !holds_wanted_port {
        return Err(refused);
    }
    let Some((old_address, old)) = slot.take() else { return Err(refused) };
    drop(old);
    match start(&address) {
        Ok(server) => {
            *slot = Some((address, server));
            Ok(())
        }
        Err(refused) => {
            *slot = start(&old_address).ok().map(|server| (old_address, server));
            Err(refused)
        }
    }
}

/// The ports `wanted` (`host:port`, `port` or `low-high`) names; `None` when it names none.
fn ports_of(wanted: &str) -> Option<std::ops::RangeInclusive<u16>> {
    let spec = wanted.rsplit_once(':').map_or(wanted, |(_, port)| port);
    let (low, high) = spec.split_once('-').unwrap_or((spec, spec));
    Some(low.trim().parse::<u16>().ok()?..=high.trim().parse::<u16>().ok()?)
}

/// How often a wait of `STOP JOB` looks for Ctrl-C.
const INTERRUPT_POLL: std::time::Duration = std::time::Duration::from_millis(20);

/// How long `STOP JOB … WITH SAVEPOINT` waits before it says it is waiting.
const SLOW_STOP: std::time::Duration = std::time::Duration::from_secs(1);

/// The columns of `SHOW JOBS`, as Flink's SQL client prints them.
const JOB_COLUMNS: [&str; 4] = ["job id", "job name", "status", "start time"];

fn job_row(job: &JobInfo) -> Vec<String> {
    let start = weir_runtime::Value::Timestamp(weir_runtime::Timestamp::from_millis(job.lifecycle().start_time()));
    let start = weir_runtime::print::value_to_string(&start);
    vec![job.id.to_string(), job.name.clone(), job.lifecycle().state().as_str().to_string(), start]
}

impl Session {
    /// What the REST server lets its clients do, from the `rest.*` settings.
    fn rest_access(&self) -> Result<Access> {
        let directories = self.settings.get(&REST_SAVEPOINT_DIRS);
        let savepoint_directories = directories
            .split(',')
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(|d| {
                weir_runtime::settings::local_path(d).map(PathBuf::from).map_err(|reason| {
                    Error::Configuration(format!(
                        "Invalid value '{directories}' for option '{}': {reason}",
                        REST_SAVEPOINT_DIRS.spec.key
                    ))
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let token = self.settings.get(&REST_TOKEN);
        Ok(Access {
            max_connections: self.settings.get(&REST_MAX_CONNECTIONS) as usize,
            idle_timeout: self.settings.get(&REST_IDLENESS_TIMEOUT),
            token: (!token.is_empty()).then_some(token),
            savepoint_directories,
        })
    }
}

/// A REST server bound to an address other machines may reach can stop and savepoint jobs for
/// anyone there: say so on standard error, and how to require a token.
fn warn_if_reachable_from_elsewhere(address: &str, access: &Access) {
    let host = address.rsplit_once(':').map_or(address, |(host, _)| host).trim_matches(['[', ']']);
    let loopback = host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
    if loopback {
        return;
    }
    let protection = if access.token.is_some() {
        "requests must carry the rest.authentication.token".to_string()
    } else {
        "anyone who reaches it can stop jobs and take savepoints; set 'rest.authentication.token' to require a token"
            .to_string()
    };
    eprintln!("Warning: the REST API listens on {address}, which other machines may reach: {protection}.");
    tracing::warn!(address, token = access.token.is_some(), "the REST API listens beyond loopback");
}

/// Starts the Prometheus endpoint on `ports` (`9249`, or the first free port of `9250-9260`).
fn start_prometheus(jobs: &JobRegistry, ports: &str) -> Result<WebServer> {
    let option = "metrics.reporter.prom.port";
    let invalid =
        || Error::Configuration(format!("Invalid value for {option}: '{ports}' is not a port or a range of ports"));
    let (low, high) = match ports.split_once('-') {
        Some((low, high)) => {
            (low.trim().parse::<u16>().map_err(|_| invalid())?, high.trim().parse::<u16>().map_err(|_| invalid())?)
        }
        None => {
            let port = ports.trim().parse::<u16>().map_err(|_| invalid())?;
            (port, port)
        }
    };
    let mut last = None;
    for port in low..=high.max(low) {
        let address = format!("127.0.0.1:{port}");
        match WebServer::start(jobs.clone(), &address, Serves::PrometheusOnly, option, Access::default()) {
            Ok(server) => return Ok(server),
            Err(e) => last = Some(e),
        }
    }
    Err(Error::Configuration(last.map_or_else(|| format!("No port of '{ports}' is free"), |e| e.to_string())))
}
