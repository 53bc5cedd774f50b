//! weir's SQL session: runs the statements of scripts in order against one catalog and one set
//! of options, as Flink's SQL client does — DDL, `SET`, queries, INSERTs and statement sets — and
//! owns what outlives a statement: the running jobs, the REST and Prometheus servers, the table
//! store of managed tables, Python functions and recovery. Planning is `weir_planner`'s: the
//! session asks its [`Planner`] for plans and job graphs.

use std::io::Write;

use std::sync::Arc;
use weir_connectors::{CollectHandle, ConnectorRegistry, RowConsumer, RowSink};

use parking_lot::Mutex;
use weir_runtime::job::{self, JobCanceller, JobHandle};
use weir_runtime::report::JobReport;
use weir_runtime::settings::{Setting, Settings};
use weir_runtime::RuntimeConfig;

use weir_planner::catalog::apply_hints;
use weir_planner::catalog::{Catalog, CatalogEntry};
use weir_planner::error::{Error, Position, Result};
use weir_planner::parser::{parse_script, Insert, Located, Statement};
use weir_planner::phases::Planner;
use weir_planner::physical::op::sink::Sink;
use weir_planner::plan::Plan;

use crate::tableau::TableauPrinter;

mod catalogs;
mod compat;
mod ddl;
mod describe;
mod functions;
mod jobs;
mod modify;
mod namespaces;
pub mod python;
pub use compat::check_scripts;
pub use jobs::{
    PROMETHEUS_FACTORY, PROMETHEUS_PORT, REST_ADDRESS, REST_BIND_ADDRESS, REST_IDLENESS_TIMEOUT, REST_MAX_CONNECTIONS,
    REST_PORT, REST_SAVEPOINT_DIRS, REST_TOKEN,
};
pub mod managed;
pub mod recovery;
pub mod settings;
pub mod tableau;

/// `sql-client.execution.result-mode`: how query results print. weir has no interactive table
/// view, so `TABLE` prints as `TABLEAU` does.
pub static RESULT_MODE: Setting<&'static str> = Setting::choice(
    "sql-client.execution.result-mode",
    &["TABLEAU", "TABLE", "CHANGELOG"],
    "TABLEAU",
    "how query results print: a table with an op column, or a changelog (+I[...])",
);
/// `sql-client.execution.max-table-result.rows`: the rows Flink's interactive `TABLE` view
/// keeps. Checked as Flink checks it; weir prints `TABLE` as `TABLEAU`, which, as in Flink,
/// keeps no rows and prints them all.
pub static MAX_TABLE_RESULT_ROWS: Setting<i64> = Setting::int(
    "sql-client.execution.max-table-result.rows",
    1_000_000,
    "1000000",
    |n| n > 0,
    "a positive integer",
    "rows the interactive TABLE view keeps; TABLEAU (what weir prints) keeps none and prints every row",
);
/// `table.dml-sync`: whether an INSERT into an unbounded job waits for it to end.
pub static DML_SYNC: Setting<bool> =
    Setting::boolean("table.dml-sync", false, "an INSERT waits for its job to end, even an unbounded one");
/// `weir.print-metrics`: each finished job's report on standard error (`weir run --metrics`).
pub static PRINT_METRICS: Setting<bool> = Setting::boolean(
    "weir.print-metrics",
    false,
    "print each finished job's rows, bundles and latencies to standard error",
)
.weir_only();

/// Statements run one after another; bounded jobs finish before the next statement starts.
pub struct Session {
    catalog: Catalog,
    registry: ConnectorRegistry,
    runtime: RuntimeConfig,
    /// The runtime configuration the session started with: what `RESET` restores.
    initial_runtime: RuntimeConfig,
    /// The values `SET` gave; `runtime` is `initial_runtime` configured with them.
    settings: Settings,
    /// The `LOOKUP` hints of the statement being planned.
    query_hints: weir_planner::hints::QueryHints,
    /// Where the join operators of the statement being planned start.
    join_operators: Vec<Position>,
    /// Jobs started in the background, not waited for yet.
    running: Vec<BackgroundJob>,
    /// Reports of the jobs that finished, in the order they ended.
    reports: Vec<JobReport>,
    /// Every job started, and where it takes its savepoint when stopped (see
    /// [`recovery::SavepointTarget`]).
    cancellers: Arc<Mutex<Vec<StartedJob>>>,
    /// Set by the interrupter (Ctrl-C): a statement that waits on a background job (`STOP
    /// JOB`) stops waiting.
    interrupted: Arc<std::sync::atomic::AtomicBool>,
    /// Where results print; shared with the sink of a running query, which prints as rows come.
    out: Arc<Mutex<Box<dyn Write + Send>>>,
    /// Set while a script is only explained: DDL changes the catalog but not the data directory.
    dry_run: bool,
    /// Whether jobs resume from their newest checkpoint ([`Session::resume_from_checkpoints`]).
    resume: bool,
    /// Every job the session started, as the REST API and `SHOW JOBS` list them.
    jobs: weir_runtime::jobs::JobRegistry,
    /// The web servers `rest.port` and `metrics.reporter.prom.port` ask for.
    servers: jobs::Servers,
    /// Whether an INSERT into an unbounded job returns at once, announcing its id, and the
    /// statements after it run while it does (the shell), instead of the script waiting for
    /// every job at its end.
    detached: bool,
    /// The jobs started in the background since [`Session::take_submitted`] last asked.
    submitted: Vec<weir_runtime::jobs::JobId>,
}

/// A job the session started, as Ctrl-C and a stop reach it.
#[derive(Debug, Clone)]
struct StartedJob {
    canceller: JobCanceller,
    /// Where it takes its savepoint when stopped.
    target: Option<recovery::SavepointTarget>,
    /// Runs on in the background of a detached session (the shell): Ctrl-C, which cancels the
    /// statement running, leaves it be.
    detached: bool,
}

/// A job running in the background: what it runs, and where its statement starts (a failure
/// of the job is reported there).
#[derive(Debug)]
struct BackgroundJob {
    name: String,
    at: Position,
    handle: JobHandle,
}

/// An error and the position of the statement it belongs to.
#[derive(Debug)]
pub struct ScriptError {
    /// Where the statement starts (the error's own position is more precise when it has one).
    pub statement: Position,
    /// What went wrong.
    pub error: Error,
}

impl ScriptError {
    /// The most precise position known.
    pub fn position(&self) -> Position {
        self.error.position().unwrap_or(self.statement)
    }

    /// The error as a command reports it for a script read from `file`: `file:line:column:
    /// message`, the position written once (the prefix, not Flink's "From line …").
    pub fn in_file(&self, file: &str) -> String {
        let at = self.position();
        format!("{file}:{}:{}: {}", at.line, at.column, self.error.message_without_position())
    }

    /// The error as the interactive shell reports it: Flink's message, which names the position
    /// of a validation error; other errors with a position start with it.
    pub fn in_statement(&self) -> String {
        match (&self.error, self.error.position()) {
            (Error::Validation { .. }, _) | (_, None) => self.error.to_string(),
            (error, Some(at)) => format!("At {at}: {error}"),
        }
    }
}

impl Session {
    /// A session whose jobs run with `runtime` (its `parallelism.default` is the session's
    /// default) and whose query results are written to `out`.
    pub fn new(runtime: RuntimeConfig, registry: ConnectorRegistry, out: Box<dyn Write + Send>) -> Self {
        Session {
            catalog: Catalog::default(),
            registry,
            initial_runtime: runtime.clone(),
            runtime,
            settings: crate::settings::session_settings(),
            query_hints: Default::default(),
            join_operators: Vec::new(),
            running: Vec::new(),
            reports: Vec::new(),
            cancellers: Arc::default(),
            interrupted: Arc::default(),
            out: Arc::new(Mutex::new(out)),
            dry_run: false,
            resume: false,
            jobs: Default::default(),
            servers: Default::default(),
            detached: false,
            submitted: Vec::new(),
        }
    }

    /// The ids of the jobs started in the background (INSERTs into unbounded jobs) since the
    /// last call, oldest first: what the shell announces as submitted.
    pub fn take_submitted(&mut self) -> Vec<weir_runtime::jobs::JobId> {
        std::mem::take(&mut self.submitted)
    }

    /// Makes scripts not wait at their end for the jobs they started in the background
    /// (INSERTs into unbounded jobs; see [`Session::take_submitted`]), so that the statements of
    /// the interactive shell run while they do. `table.dml-sync` still waits for each.
    pub fn detach_unbounded_jobs(&mut self, detached: bool) {
        self.detached = detached;
    }

    /// The connectors the session plans with (its table store once managed tables exist).
    pub fn registry(&self) -> &ConnectorRegistry {
        &self.registry
    }

    /// The runtime configuration the session's next job starts with (`SET` and `RESET` change it).
    pub fn runtime(&self) -> &RuntimeConfig {
        &self.runtime
    }

    /// Cancels every job this session started, from any thread (for Ctrl-C), but those running
    /// on in the background of a detached session ([`Session::detach_unbounded_jobs`]); a
    /// statement waiting on one of those (`STOP JOB`) stops waiting and cancels it.
    pub fn interrupter(&self) -> impl Fn() + Send + Sync + 'static {
        let cancellers = Arc::clone(&self.cancellers);
        let interrupted = Arc::clone(&self.interrupted);
        move || {
            interrupted.store(true, std::sync::atomic::Ordering::SeqCst);
            cancellers.lock().iter().filter(|job| !job.detached).for_each(|job| job.canceller.cancel())
        }
    }

    /// Whether every job the session started has ended.
    pub fn all_ended(&self) -> bool {
        self.jobs.jobs().iter().all(|job| job.lifecycle().state().is_terminal())
    }

    /// Stops every running job, as the interrupter does, but first takes a savepoint of each job
    /// that checkpoints when `execution.checkpointing.savepoint-dir` was set for it; returns a
    /// line per savepoint (its path, or why there is none).
    pub fn stopper(&self) -> impl Fn() -> Vec<String> + Send + Sync + 'static {
        let cancellers = Arc::clone(&self.cancellers);
        move || {
            let jobs = cancellers.lock().clone();
            jobs.iter().filter_map(|job| recovery::stop(&job.canceller, job.target.as_ref())).collect()
        }
    }

    /// Sets an option as `SET 'key' = 'value'` does. A declared key's value is checked now;
    /// keys weir does not read are kept, as Flink keeps them.
    ///
    /// # Errors
    /// A malformed value, naming the key and the values it accepts (nothing changes then).
    pub fn set(&mut self, key: &str, value: &str) -> Result<()> {
        let before = self.settings.text(key).map(str::to_string);
        self.settings.set(key, value)?;
        self.runtime = self.initial_runtime.configured(&self.settings);
        if let Err(e) = self.apply_web_settings() {
            // The setting is refused: what was set before stays.
            match before {
                Some(old) => self.settings.set(key, &old)?,
                None => {
                    self.settings.reset(key);
                }
            }
            self.runtime = self.initial_runtime.configured(&self.settings);
            return Err(e);
        }
        Ok(())
    }

    /// Forgets the value of `key` (`RESET 'key'`) or of every key (`RESET`): a key reads as its
    /// default again, a runtime key as the session started with it (the command line's
    /// `--parallelism`, say).
    pub fn reset(&mut self, key: Option<&str>) {
        match key {
            Some(k) => {
                self.settings.reset(k);
            }
            None => self.settings.clear(),
        }
        self.runtime = self.initial_runtime.configured(&self.settings);
        // Stopping or moving back a server cannot fail to bind anything new but a default
        // port; the reset takes effect all the same.
        if let Err(e) = self.apply_web_settings() {
            tracing::warn!(error = %e, "the web server cannot follow the reset");
        }
    }

    /// Runs every statement of `sql` in order, then waits for the jobs still running.
    ///
    /// # Errors
    /// The first statement that fails, with its position.
    pub fn execute_script(&mut self, sql: &str) -> Result<(), ScriptError> {
        on_planning_stack(|| self.execute_script_here(sql))
    }

    fn execute_script_here(&mut self, sql: &str) -> Result<(), ScriptError> {
        let statements = parse_script(sql).map_err(|error| ScriptError { statement: Position::default(), error })?;
        for located in &statements {
            self.reap();
            self.execute(located).map_err(|error| self.script_error(located.position, error))?;
        }
        if self.detached {
            self.reap();
            return Ok(());
        }
        self.wait_all()
    }

    /// Keeps the reports of the background jobs that have ended (a detached session lets them
    /// run past the script that started them); a failure is in the job's exceptions.
    fn reap(&mut self) {
        let (ended, running): (Vec<_>, Vec<_>) =
            std::mem::take(&mut self.running).into_iter().partition(|job| job.handle.is_finished());
        self.running = running;
        for job in ended {
            if let Err(error) = self.finished(job.name, job.handle) {
                tracing::info!(%error, "a background job ended");
            }
        }
    }

    /// Runs the DDL and `SET` statements of `sql` and returns the EXPLAIN of every query, INSERT
    /// and statement set in it (and of its EXPLAIN statements), without running any job.
    ///
    /// # Errors
    /// The first statement that fails, with its position.
    pub fn explain_script(&mut self, sql: &str) -> Result<String, ScriptError> {
        on_planning_stack(|| self.explain_script_here(sql))
    }

    fn explain_script_here(&mut self, sql: &str) -> Result<String, ScriptError> {
        self.dry_run(sql, Self::explain_statements)
    }

    /// Runs `f` over the statements of `sql` without running any job or writing managed tables
    /// (DDL changes the catalog only); then tables that only existed in memory for it leave with
    /// their store.
    ///
    /// # Errors
    /// A script that does not parse, what `f` reports, a store that cannot be closed.
    pub(crate) fn dry_run<T>(
        &mut self,
        sql: &str,
        f: impl FnOnce(&mut Self, &[Located]) -> Result<T, ScriptError>,
    ) -> Result<T, ScriptError> {
        let statements = parse_script(sql).map_err(|error| ScriptError { statement: Position::default(), error })?;
        self.dry_run = true;
        let result = f(self, &statements);
        self.dry_run = false;
        if let Some(store) = self.registry.table_store().filter(|s| !s.is_on_disk()).cloned() {
            let closed = crate::managed::close_store(&store, &mut self.catalog);
            self.registry.set_table_store(None);
            closed.map_err(|error| ScriptError { statement: Position::default(), error })?;
        }
        result
    }

    /// The error of the statement at `statement`, pointing at the option of the table it is
    /// about when a connector refused one.
    fn script_error(&self, statement: Position, error: Error) -> ScriptError {
        let error = match error {
            Error::Connector(source) => {
                let written = source.table().and_then(|table| match self.catalog.get(&Catalog::qualified(table)) {
                    Some(CatalogEntry::Table(t)) => {
                        let positions = &t.option_positions;
                        source
                            .option_key()
                            .and_then(|key| positions.get(key))
                            .or_else(|| positions.get("WITH"))
                            .copied()
                    }
                    _ => None,
                });
                match written {
                    Some(position) => Error::ConnectorAt { position, source: Box::new(source) },
                    None => Error::Connector(source),
                }
            }
            error => error,
        };
        ScriptError { statement, error }
    }

    fn explain_statements(&mut self, statements: &[Located]) -> Result<String, ScriptError> {
        let mut text = String::new();
        for located in statements {
            let explained = match &located.statement {
                Statement::Insert(_) | Statement::StatementSet(_) | Statement::Query(_) => {
                    self.with_hints(located, |s| s.explain(&located.statement, &[], located.position))
                }
                Statement::Explain { details, statement } => {
                    self.with_hints(located, |s| s.explain(statement, details, located.position))
                }
                _ => self.execute(located).map(|()| String::new()),
            };
            text.push_str(&explained.map_err(|error| self.script_error(located.position, error))?);
        }
        Ok(text)
    }

    /// Waits for every job started without waiting (jobs with unbounded sources).
    ///
    /// # Errors
    /// The first job that failed, at the statement that started it (at the option of a table
    /// when a connector refused one).
    pub fn wait_all(&mut self) -> Result<(), ScriptError> {
        for job in std::mem::take(&mut self.running) {
            self.finished(job.name, job.handle).map_err(|error| self.script_error(job.at, error))?;
        }
        Ok(())
    }

    /// What each job that finished did, in the order they ended (see `weir run --stats`).
    pub fn job_reports(&self) -> &[JobReport] {
        &self.reports
    }

    fn print_metrics(&self) -> bool {
        self.settings.get(&PRINT_METRICS)
    }

    /// Cancels every running job.
    pub fn cancel_all(&mut self) {
        for job in &self.running {
            job.handle.cancel();
        }
    }

    /// Runs one statement.
    ///
    /// # Errors
    /// Whatever the statement does wrong.
    pub fn execute(&mut self, located: &Located) -> Result<()> {
        self.with_hints(located, |session| session.execute_statement(located))
    }

    /// Runs `f` with the statement's `OPTIONS` hints applied to the catalog's tables.
    ///
    /// The table store of the data directory is opened (its managed tables joining the catalog)
    /// only when the statement needs it: one that lists or names tables the catalog does not
    /// hold, or one that failed after looking up a name the catalog does not hold (it runs again
    /// with the store open). So `SELECT 1` runs beside another weir that has the store open.
    fn with_hints<T>(&mut self, located: &Located, mut f: impl FnMut(&mut Self) -> Result<T>) -> Result<T> {
        let setting = matches!(located.statement, Statement::Set { .. } | Statement::Reset(_));
        let names_unknown = |name: &str| self.catalog.get(name).is_none();
        // A store open for another directory than `table.store.path` names is switched at once,
        // so that no statement reads the tables of the old one.
        let switched =
            self.registry.table_store().is_some_and(|s| s.dir() != crate::managed::store_dir(&self.settings));
        let needs_store = switched && !setting
            || match &located.statement {
                Statement::ShowTables { .. } => true,
                Statement::Describe(name) | Statement::Drop { name, .. } => names_unknown(name),
                Statement::Delete { table, .. } | Statement::Update { table, .. } => names_unknown(table),
                _ => false,
            };
        if needs_store {
            self.table_store(false)?;
        }
        let may_retry = self.registry.table_store().is_none() && !setting;
        self.catalog.forget_misses();
        let result = self.with_hints_once(located, &mut f);
        match result {
            // Only a statement refused while planning runs again: a job that ran and failed
            // does not.
            Err(Error::Runtime(e)) => Err(Error::Runtime(e)),
            Err(_) if may_retry && self.catalog.missed() && self.table_store(false)?.is_some() => {
                self.with_hints_once(located, &mut f)
            }
            other => other,
        }
    }

    fn with_hints_once<T>(&mut self, located: &Located, f: &mut impl FnMut(&mut Self) -> Result<T>) -> Result<T> {
        self.query_hints = located.query_hints.clone();
        self.join_operators = located.join_operators.clone();
        if located.hints.is_empty() {
            return f(self);
        }
        let hinted = apply_hints(&self.catalog, &located.hints)?;
        let saved = std::mem::replace(&mut self.catalog, hinted);
        let result = f(self);
        let hinted = std::mem::replace(&mut self.catalog, saved);
        if hinted.missed() {
            self.catalog.note_miss();
        }
        result
    }

    fn execute_statement(&mut self, located: &Located) -> Result<()> {
        match &located.statement {
            Statement::CreateTable(t) => self.create_table(t, located.position),
            Statement::CreateView { name, query, if_not_exists } => {
                // A view is checked when it is created, as Flink checks it: its tables and
                // columns exist (so it cannot refer to itself) and its types fit.
                let key = self.catalog.key(name);
                self.check_database_of(&key, "CreateView", located.position)?;
                if self.catalog.get(name).is_none() {
                    self.planner()?.bind_query(query)?;
                }
                if !self.catalog.add(name, CatalogEntry::View(query.clone())) && !if_not_exists {
                    return Err(Error::validation(
                        located.position,
                        format!("Could not execute CREATE VIEW: view '{}' already exists", Catalog::qualified(&key)),
                    ));
                }
                Ok(())
            }
            Statement::Drop { name, if_exists, view } => self.drop(name, *if_exists, *view, located.position),
            Statement::Set { key: Some(key), value } => self.set(key, value),
            Statement::Set { key: None, .. } => {
                let listing = crate::settings::listing(&self.settings, &self.initial_runtime);
                self.write_text(&crate::tableau::key_value_table(&listing))
            }
            Statement::Reset(key) => {
                self.reset(key.as_deref());
                Ok(())
            }
            Statement::CreateFunction { name, class, language, if_not_exists } => {
                self.create_function(name, class, language, *if_not_exists, located.position)
            }
            Statement::DropFunction { name, if_exists } => self.drop_function(name, *if_exists, located.position),
            Statement::ShowTables { database, like } => {
                self.show_tables(database.as_deref(), like.as_ref(), false, located.position)
            }
            Statement::ShowCatalogs { like } => {
                let catalogs =
                    describe::matching(self.catalog.namespaces().catalogs(), like.as_ref(), located.position)?;
                self.show_list("catalog name", &catalogs)
            }
            Statement::ShowDatabases { catalog, like } => {
                self.show_databases(catalog.as_deref(), like.as_ref(), located.position)
            }
            Statement::ShowCurrent { catalog } => {
                let (current_catalog, database) = self.catalog.current();
                match catalog {
                    true => self.show_list("current catalog name", &[current_catalog]),
                    false => self.show_list("current database name", &[database]),
                }
            }
            Statement::ShowViews { database, like } => {
                self.show_tables(database.as_deref(), like.as_ref(), true, located.position)
            }
            Statement::ShowColumns { table, like } => self.show_columns(table, like.as_ref(), located.position),
            Statement::ShowCreate { name, view } => self.show_create(name, *view, located.position),
            Statement::ShowFunctions { user, like } => self.show_functions(*user, like.as_ref(), located.position),
            Statement::Use { name, catalog } => self.use_namespace(name, *catalog, located.position),
            Statement::CreateNamespace { kind, name, if_not_exists, options } => {
                self.create_namespace(kind, name, *if_not_exists, options, located.position)
            }
            Statement::DropNamespace { kind, name, if_exists, cascade } => {
                self.drop_namespace(kind, name, *if_exists, *cascade, located.position)
            }
            Statement::AlterTable { table, change } => self.alter_table(table, change, located.position),
            Statement::ShowJobs => self.show_jobs(),
            Statement::DescribeJob(id) => self.describe_job(id),
            Statement::StopJob { id, savepoint, drain } => self.stop_job(id, *savepoint, *drain),
            Statement::Describe(name) => self.describe(name, located.position),
            Statement::Delete { table, selection } => {
                self.modify(table, modify::Modification::Delete, selection.as_deref(), located.position)
            }
            Statement::Update { table, assignments, selection } => {
                let modification = modify::Modification::Update(assignments);
                self.modify(table, modification, selection.as_deref(), located.position)
            }
            Statement::Insert(insert) => self.insert(std::slice::from_ref(insert), located.position),
            Statement::StatementSet(inserts) => self.insert(inserts, located.position),
            Statement::Query(query) => self.select(query),
            Statement::Explain { details, statement } => {
                let mut text = self.explain(statement, details, located.position)?;
                text.push('\n');
                self.write_text(&text)
            }
        }
    }

    /// The planner of the statement being run: this session's catalog, connectors, settings
    /// and the statement's `LOOKUP` hints.
    ///
    /// # Errors
    /// Settings that do not fit together.
    pub fn planner(&self) -> Result<Planner<'_>> {
        self.planner_with(self.query_hints.clone())
    }

    /// A planner as [`Session::planner`]'s, with the query hints `hints`.
    ///
    /// # Errors
    /// Settings that do not fit together.
    pub(crate) fn planner_with(&self, hints: weir_planner::hints::QueryHints) -> Result<Planner<'_>> {
        Planner::new(
            &self.catalog,
            &self.registry,
            &self.settings,
            hints,
            &self.join_operators,
            self.runtime.default_parallelism,
            Arc::clone(&self.runtime.clock),
        )
    }

    /// Writes `text` to the session's output and flushes it.
    fn write_text(&self, text: &str) -> Result<()> {
        let mut out = self.out.lock();
        out.write_all(text.as_bytes())
            .and_then(|()| out.flush())
            .map_err(|e| weir_runtime::Error::writing("the query's results", &e).into())
    }

    /// The EXPLAIN text of a statement.
    ///
    /// # Errors
    /// Whatever planning the statement reports.
    pub fn explain(&self, statement: &Statement, details: &[String], at: Position) -> Result<String> {
        self.planner()?.explain(statement, details, at)
    }

    /// Plans every INSERT into one job and runs it.
    pub(crate) fn insert(&mut self, inserts: &[Insert], at: Position) -> Result<()> {
        let planner = self.planner()?;
        let batch = planner.options().batch;
        let plans = planner.physical_inserts(inserts, at)?;
        let (mut translator, _) = planner.job_graph_to_start(&plans)?;
        // A job that never ends runs in the background unless `table.dml-sync` is set.
        let sync = self.settings.get(&DML_SYNC);
        // The distribution marked each sink with whether its sources all end.
        let unbounded = plans.iter().any(|p| p.op::<Sink>().is_some_and(|sink| !sink.bounded_input));
        let graph = std::mem::take(&mut translator.graph);
        let background = unbounded && !sync;
        let sinks: Vec<&str> = inserts.iter().map(|i| i.table.as_str()).collect();
        let job_name = self.job_name(&sinks);
        let mut runtime = self.job_runtime(&job_name, batch)?;
        let shape = self.job_shape(&translator, &graph)?;
        self.follow_compatibility(&job_name, &shape, &mut runtime)?;
        let target = self.savepoint_target(&job_name, &runtime);
        let checkpointing = runtime.checkpointing.clone();
        let handle = job::start(graph, runtime)?;
        self.register_job(&handle, &job_name, !batch, checkpointing);
        let detached = background && self.detached;
        self.cancellers.lock().push(StartedJob { canceller: handle.canceller(), target, detached });
        let tables: Vec<String> = inserts.iter().map(|i| format!("INSERT INTO {}", i.table)).collect();
        let name = match tables.as_slice() {
            [one] => one.clone(),
            many => format!("STATEMENT SET ({})", many.join(", ")),
        };
        if background {
            self.submitted.push(handle.id().clone());
            self.running.push(BackgroundJob { name, at, handle });
            Ok(())
        } else {
            self.finished(name, handle)
        }
    }

    /// Waits for a job and keeps its report; a cancelled job is an error, so that a script
    /// stops after Ctrl-C. With `weir.print-metrics` set, prints each vertex's rows in and out,
    /// and its mini-batch bundles, to standard error.
    fn finished(&mut self, name: String, job: JobHandle) -> Result<()> {
        let metrics = job.metrics().clone();
        let checkpoints = job.checkpoint_history();
        let started = job.started();
        let status = job.wait()?;
        let report = JobReport::new(name, started.elapsed(), &metrics).with_checkpoints(&checkpoints.lock().stats);
        if self.print_metrics() {
            print_metrics(&report);
        }
        self.reports.push(report);
        match status {
            weir_runtime::JobStatus::Finished => Ok(()),
            weir_runtime::JobStatus::Cancelled => Err(weir_runtime::Error::Cancelled.into()),
        }
    }

    /// Runs a query and writes its rows as they come, as a table with an `op` column (Flink's
    /// tableau; without it in batch mode) or as a changelog (`+I[…]`, `-U[…]`, …) when
    /// `sql-client.execution.result-mode` is `changelog`. A reader that does not keep up holds
    /// the query back instead of letting its rows pile up.
    fn select(&mut self, query: &sqlparser::ast::Query) -> Result<()> {
        let planner = self.planner()?;
        let plan = planner.bind_query(query)?;
        let changelog = self.settings.get(&RESULT_MODE) == "CHANGELOG";
        let printer = Arc::new(Mutex::new(TableauPrinter::new(&plan.fields, planner.options().batch)));
        let (out, rows_printer) = (Arc::clone(&self.out), Arc::clone(&printer));
        let zone = planner.options().local_time_zone;
        let consumer: RowConsumer = Arc::new(move |rows: &[weir_runtime::Row]| {
            // A TIMESTAMP_LTZ prints as the session zone's wall clock, as Flink's client prints it.
            let zoned: Vec<weir_runtime::Row>;
            let rows = if zone.is_utc() {
                rows
            } else {
                zoned = rows.iter().map(|r| in_zone(r, zone)).collect();
                &zoned
            };
            // One text, one write and one flush per chunk.
            let mut text = String::new();
            if changelog {
                for row in rows {
                    let _ = std::fmt::Write::write_fmt(&mut text, format_args!("{row}\n"));
                }
            } else {
                let mut printer = rows_printer.lock();
                rows.iter().for_each(|row| text.push_str(&printer.row(row)));
            }
            let mut out = out.lock();
            out.write_all(text.as_bytes())
                .and_then(|()| out.flush())
                .map_err(|e| weir_runtime::Error::writing("the query's results", &e))
        });
        let graph = query_graph(&planner, plan, Arc::new(move |_| Box::new(RowSink::new(Arc::clone(&consumer)))));
        drop(planner);
        let ran = graph.and_then(|graph| self.run_query(graph));
        if !changelog && matches!(ran, Err(Error::Runtime(weir_runtime::Error::Cancelled))) {
            let end = printer.lock().terminated();
            let _ = self.write_text(&end);
        }
        ran?;
        if !changelog {
            let end = printer.lock().finish();
            self.write_text(&end)?;
        }
        Ok(())
    }

    /// Runs the job `graph` of a query (see [`query_graph`]) to its end.
    fn run_query(&mut self, graph: weir_runtime::graph::JobGraph) -> Result<()> {
        // A query's rows go to the client as they come: its job takes no checkpoints.
        let mut runtime = self.runtime.clone();
        runtime.checkpointing.interval = None;
        let checkpointing = runtime.checkpointing.clone();
        let job = job::start(graph, runtime)?;
        self.register_job(&job, "collect", true, checkpointing);
        self.cancellers.lock().push(StartedJob { canceller: job.canceller(), target: None, detached: false });
        self.finished("SELECT".to_string(), job)
    }
}

/// `row` with each TIMESTAMP_LTZ (nested ones too) as its wall-clock time in `zone`, for
/// printing.
fn in_zone(row: &weir_runtime::Row, zone: weir_runtime::time_zone::TimeZone) -> weir_runtime::Row {
    fn value(v: &weir_runtime::Value, zone: weir_runtime::time_zone::TimeZone) -> weir_runtime::Value {
        use weir_runtime::Value;
        match v {
            Value::TimestampLtz(t) => Value::Timestamp(weir_runtime::Timestamp {
                millis: zone.to_local(t.millis),
                nanos_of_milli: t.nanos_of_milli,
            }),
            Value::Array(items) => Value::Array(items.iter().map(|i| value(i, zone)).collect()),
            Value::Row(fields) => Value::Row(fields.iter().map(|f| value(f, zone)).collect()),
            Value::Map(entries) => Value::Map(entries.iter().map(|(k, v)| (value(k, zone), value(v, zone))).collect()),
            other => other.clone(),
        }
    }
    weir_runtime::Row { kind: row.kind, values: row.values.iter().map(|v| value(v, zone)).collect() }
}

/// The job graph of query `plan` (bound by `planner`), its rows going in one stream into the
/// sink `sink` builds.
fn query_graph(
    planner: &Planner<'_>,
    plan: Plan,
    sink: weir_runtime::graph::OperatorFactory,
) -> Result<weir_runtime::graph::JobGraph> {
    let physical = planner.physical_query(plan)?;
    let (mut translator, outputs) = planner.job_graph_to_start(std::slice::from_ref(&physical))?;
    let sink = translator.graph.add_vertex(weir_runtime::graph::Vertex {
        name: "Sink: Collect".to_string(),
        parallelism: 1,
        kind: weir_runtime::graph::VertexKind::Operator(sink),
    });
    let strategy = if physical.parallelism == 1 {
        weir_runtime::ShipStrategy::Forward
    } else {
        weir_runtime::ShipStrategy::Rebalance
    };
    translator.graph.connect(outputs[0].vertex, sink, strategy);
    Ok(translator.graph)
}

/// The job graph of query `plan` (bound by `planner`) whose rows `handle` collects.
fn collect_graph(planner: &Planner<'_>, plan: Plan, handle: &CollectHandle) -> Result<weir_runtime::graph::JobGraph> {
    let collector = handle.clone();
    query_graph(planner, plan, Arc::new(move |info| Box::new(collector.sink(info))))
}

/// The stack a script is parsed, bound and planned on: plans of machine-generated SQL (a flat
/// chain of thousands of `+` or `OR`, hundreds of nested calls) are walked recursively, a level
/// per node. Only the pages a script touches are used.
const PLANNING_STACK: usize = 1 << 30;

/// Runs `f` on a thread with [`PLANNING_STACK`] bytes of stack (an 8th of `ulimit -v` when that
/// is less; on this thread when none can be started), passing on its panic.
fn on_planning_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    let work = Mutex::new(Some(f));
    let run = || work.lock().take().map(|f| f());
    let spawned = std::thread::scope(|scope| {
        let planning = std::thread::Builder::new()
            .name("weir-planner".into())
            .stack_size(weir_runtime::memory::stack_size(PLANNING_STACK, 8));
        match planning.spawn_scoped(scope, run) {
            Ok(thread) => Some(thread.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))),
            Err(e) => {
                tracing::warn!(error = %e, "cannot start the planning thread; planning on this one");
                None
            }
        }
    });
    match spawned.flatten() {
        Some(result) => result,
        None => (work.into_inner().expect("the work was not taken"))(),
    }
}

/// The job's report ([`JobReport::write_text`]) to standard error.
fn print_metrics(report: &JobReport) {
    let mut text = format!("job ended: {}\n", report.name);
    report.write_text(&mut text);
    // A reader of standard error that has gone is no reason to fail the script.
    let _ = std::io::Write::write_all(&mut std::io::stderr(), text.as_bytes());
}
