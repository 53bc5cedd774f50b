//! Connectors are resolved to answer the planner's questions and built only for a job: a
//! counting connector (datagen's source and blackhole's sink behind counters) shows that EXPLAIN
//! of any statement builds no source and no sink, that a statement resolves each table once per
//! role, and that running a job builds each of its scans' sources and each sink exactly once.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::Buffer;
use weir::connectors::api::{ConnectorFactory, FactoryContext};
use weir::connectors::blackhole::BlackholeFactory;
use weir::connectors::datagen::DatagenFactory;
use weir::connectors::options::TableOptions;
use weir::connectors::{
    ConnectorRegistry, ResolvedSink, ResolvedSource, ScanContext, SinkAbilities, SinkContext, SinkProvider,
    SourceAbilities, SourceProvider, TableDescriptor,
};
use weir::runtime::RuntimeConfig;
use weir::session::Session;

use crate::common;

/// How often each step ran.
#[derive(Default)]
struct Counts {
    sources_resolved: AtomicUsize,
    sinks_resolved: AtomicUsize,
    sources_built: AtomicUsize,
    sinks_built: AtomicUsize,
}

impl Counts {
    fn get(&self) -> [usize; 4] {
        [&self.sources_resolved, &self.sinks_resolved, &self.sources_built, &self.sinks_built]
            .map(|c| c.load(Ordering::SeqCst))
    }
}

/// `'connector' = 'counting'`: datagen as a source, blackhole as a sink, counted.
struct CountingFactory(Arc<Counts>);

struct Counted<T: ?Sized> {
    inner: Arc<T>,
    counts: Arc<Counts>,
}

impl ConnectorFactory for CountingFactory {
    fn identifier(&self) -> &'static str {
        "counting"
    }

    fn resolve_source(
        &self,
        table: &TableDescriptor,
        options: &mut TableOptions,
        ctx: &FactoryContext<'_>,
    ) -> weir::connectors::Result<Arc<dyn ResolvedSource>> {
        self.0.sources_resolved.fetch_add(1, Ordering::SeqCst);
        let inner = DatagenFactory.resolve_source(table, options, ctx)?;
        Ok(Arc::new(Counted { inner, counts: Arc::clone(&self.0) }))
    }

    fn resolve_sink(
        &self,
        table: &TableDescriptor,
        options: &mut TableOptions,
        ctx: &FactoryContext<'_>,
    ) -> weir::connectors::Result<Arc<dyn ResolvedSink>> {
        self.0.sinks_resolved.fetch_add(1, Ordering::SeqCst);
        let inner = BlackholeFactory.resolve_sink(table, options, ctx)?;
        Ok(Arc::new(Counted { inner, counts: Arc::clone(&self.0) }))
    }
}

impl ResolvedSource for Counted<dyn ResolvedSource> {
    fn abilities(&self, scan: &ScanContext) -> SourceAbilities {
        self.inner.abilities(scan)
    }

    fn create(&self, scan: &ScanContext) -> weir::connectors::Result<SourceProvider> {
        self.counts.sources_built.fetch_add(1, Ordering::SeqCst);
        self.inner.create(scan)
    }
}

impl ResolvedSink for Counted<dyn ResolvedSink> {
    fn abilities(&self, sink: &SinkContext) -> weir::connectors::Result<SinkAbilities> {
        self.inner.abilities(sink)
    }

    fn create(&self, sink: &SinkContext) -> weir::connectors::Result<SinkProvider> {
        self.counts.sinks_built.fetch_add(1, Ordering::SeqCst);
        self.inner.create(sink)
    }
}

const TABLES: &str = "
CREATE TABLE src (id BIGINT, k INT, v INT, ts AS TO_TIMESTAMP_LTZ(id, 3), WATERMARK FOR ts AS ts)
  WITH ('connector' = 'counting', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '1000',
        'fields.k.min' = '0', 'fields.k.max' = '9');
CREATE TABLE dim (k INT, name STRING) WITH ('connector' = 'counting', 'number-of-rows' = '10');
CREATE TABLE out1 (k INT, n BIGINT) WITH ('connector' = 'counting');
CREATE TABLE out2 (id BIGINT, v INT) WITH ('connector' = 'counting');
";

/// Statements over the counted tables, and how many scans and sinks each job has.
const STATEMENTS: &[(&str, usize, usize)] = &[
    ("INSERT INTO out1 SELECT k, COUNT(*) FROM src GROUP BY k", 1, 1),
    (
        "EXECUTE STATEMENT SET BEGIN
           INSERT INTO out1 SELECT k, COUNT(*) FROM src GROUP BY k;
           INSERT INTO out2 SELECT id, v FROM src WHERE v > 0;
         END",
        1,
        2,
    ),
    ("INSERT INTO out1 SELECT s.k, COUNT(*) FROM src AS s JOIN dim AS d ON s.k = d.k GROUP BY s.k", 2, 1),
    (
        "INSERT INTO out1 SELECT k, COUNT(*) FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '1' SECOND))
           GROUP BY k, window_start, window_end",
        1,
        1,
    ),
];

fn session(counts: &Arc<Counts>, out: Buffer) -> Session {
    let mut registry = ConnectorRegistry::default();
    registry.register(Arc::new(CountingFactory(Arc::clone(counts))));
    let mut session = Session::new(RuntimeConfig::default().with_parallelism(2), registry, Box::new(out));
    session.execute_script(TABLES).unwrap();
    session
}

#[test]
fn explain_builds_no_source_and_no_sink() {
    let counts = Arc::new(Counts::default());
    let out = Buffer::default();
    let mut session = session(&counts, out.clone());
    for (statement, _, _) in STATEMENTS {
        for details in ["", "CHANGELOG_MODE, JSON_EXECUTION_PLAN "] {
            session.execute_script(&format!("EXPLAIN {details}{statement};")).unwrap();
        }
    }
    session.execute_script("EXPLAIN SELECT k, COUNT(*) FROM src GROUP BY k;").unwrap();
    let text = String::from_utf8(out.0.lock().clone()).unwrap();
    assert!(text.contains("TableSourceScan(table=[[default_catalog, default_database, src]]"));
    let [sources_resolved, sinks_resolved, sources_built, sinks_built] = counts.get();
    assert_eq!((sources_built, sinks_built), (0, 0), "EXPLAIN built connectors");
    assert!(sources_resolved > 0 && sinks_resolved > 0);
}

#[test]
fn a_job_builds_each_scan_and_each_sink_once_and_resolves_each_table_once_per_role() {
    for (statement, scans, sinks) in STATEMENTS {
        let counts = Arc::new(Counts::default());
        let mut session = session(&counts, Buffer::default());
        session.execute_script(&format!("{statement};")).unwrap();
        let [sources_resolved, sinks_resolved, sources_built, sinks_built] = counts.get();
        assert_eq!((sources_built, sinks_built), (*scans, *sinks), "{statement}");
        // Each table read is resolved once as a source, each table written once as a sink.
        assert_eq!((sources_resolved, sinks_resolved), (*scans, *sinks), "{statement}");
    }
}
