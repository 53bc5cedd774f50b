//! The planner's entry point: one statement's way from parsed SQL to a job graph, in named
//! phases. `docs/architecture.md` walks a statement through them.
//!
//! 1. **bind** ([`Planner::bind_query`], [`Planner::bind_insert`]): names and types against the
//!    catalog ([`crate::binder`]); an INSERT's rows cast to its sink's columns.
//! 2. **logical rewrites** ([`Planner::optimize`]): the rules of [`crate::rules`], each in its
//!    own file, then scan reuse across the statements of a statement set.
//! 3. **physical plan** ([`Planner::physical_query`], [`Planner::physical_inserts`]): operators as
//!    Flink names them with their changelog modes ([`crate::physical`]), then parallelism and
//!    sink exchanges ([`crate::physical::distribution`]). Connectors are asked what they offer
//!    (their abilities), never built.
//! 4. **job graph** ([`Planner::job_graph`]): the physical plan wired into vertices and edges
//!    ([`crate::translate`]); sources and sinks are built here and read nothing until the job
//!    runs.
//!
//! EXPLAIN ([`Planner::explain`]) prints phases 2 and 3 and stops there. The session
//! (`weir_session`) owns the catalog, the settings and the running jobs; the planner only reads
//! them.

use std::collections::BTreeSet;
use std::sync::Arc;

use sqlparser::ast::Query;
use weir_connectors::{ConnectorRegistry, LookupTable, SinkChangelogMode, SinkContext, SinkTable};
use weir_runtime::settings::Settings;
use weir_runtime::Clock;

use crate::binder::sink_rows::{conform_to_sink, target_columns};
use crate::binder::Binder;
use crate::catalog::{Catalog, CatalogEntry, CatalogTable};
use crate::error::{Error, Position, Result};
use crate::explain::{explain, ExplainDetails, LogicalStatement};
use crate::options::PlannerOptions;
use crate::parser::{Insert, Statement};
use crate::physical::distribution::Distribution;
use crate::physical::{physical_query, physical_sink, PhysicalNode, SinkTarget};
use crate::plan::{Node, Plan};
use crate::resolve::Resolver;
use crate::translate::{Output, Translator};

/// Plans the statements of one session state (its catalog, connectors and settings).
pub struct Planner<'a> {
    catalog: &'a Catalog,
    /// Resolves each table the statement uses once per role.
    resolver: Resolver<'a>,
    options: PlannerOptions,
    parallelism: usize,
    clock: Arc<dyn Clock>,
    /// Where the statement's join operators start (refused joins are reported there).
    join_operators: &'a [Position],
}

/// An INSERT after binding: the table it writes and its rows, cast to the table's columns.
pub struct BoundInsert {
    /// The sink table.
    pub sink: CatalogTable,
    /// The sink table as its connector resolved it.
    pub resolved: SinkTable,
    /// The rows written.
    pub plan: Plan,
}

impl<'a> Planner<'a> {
    /// A planner over `catalog` and `registry` with the session's `settings`, the statement's
    /// query hints (`LOOKUP`, `STATE_TTL`) and the places of its join operators; jobs run at `parallelism` with lookup caches reading `clock`.
    ///
    /// # Errors
    /// Settings that do not fit together (mini-batch on without a latency).
    pub fn new(
        catalog: &'a Catalog,
        registry: &'a ConnectorRegistry,
        settings: &Settings,
        query_hints: crate::hints::QueryHints,
        join_operators: &'a [Position],
        parallelism: usize,
        clock: Arc<dyn Clock>,
    ) -> Result<Self> {
        let mut options = PlannerOptions::from_settings(settings)?;
        options.lookup_hints = query_hints.lookup;
        options.state_ttl_hints = query_hints.state_ttl;
        Ok(Planner { catalog, resolver: Resolver::new(registry), options, parallelism, clock, join_operators })
    }

    /// The options the planner plans with.
    pub fn options(&self) -> &PlannerOptions {
        &self.options
    }

    /// Phase 1: a query's logical plan.
    ///
    /// # Errors
    /// Unknown tables or columns, type mismatches, unsupported SQL.
    pub fn bind_query(&self, query: &Query) -> Result<Plan> {
        Binder::new(self.catalog, &self.resolver)
            .with_join_operators(self.join_operators)
            .with_zone(self.options.local_time_zone)
            .bind_query(query)
    }

    /// Phase 1: an INSERT's sink and logical plan, its rows cast to the sink's types.
    ///
    /// # Errors
    /// An unknown sink, and the query's errors.
    pub fn bind_insert(&self, insert: &Insert, at: Position) -> Result<BoundInsert> {
        let sink = self.sink_table(&insert.table)?;
        let resolved = self.resolver.sink(&sink.descriptor)?;
        let plan = self.bind_query(&insert.source)?;
        let plan = conform_to_sink(plan, &sink, &insert.columns, at)?;
        Ok(BoundInsert { sink, resolved, plan })
    }

    /// The table `name` as a sink.
    ///
    /// # Errors
    /// Flink's message when the catalog has no such table.
    pub fn sink_table(&self, name: &str) -> Result<CatalogTable> {
        match self.catalog.get(name) {
            // A sink writes every column but the virtual metadata ones.
            Some(CatalogEntry::Table(t)) => {
                Ok(CatalogTable { descriptor: t.descriptor.for_writing(), ..(**t).clone() })
            }
            _ => Err(Error::Catalog(format!(
                "Cannot find table '{}' in any of the catalogs [{}], nor as a temporary table.",
                Catalog::quoted_qualified(&self.catalog.key(name)),
                self.catalog.namespaces().catalogs().join(", ")
            ))),
        }
    }

    /// Phase 2: the logical rewrites every plan goes through ([`crate::rules::rewrite`]).
    ///
    /// # Errors
    /// A table whose connector refuses its options.
    pub fn optimize(&self, plan: Plan) -> Result<Plan> {
        crate::rules::rewrite(plan, &self.options)
    }

    /// [`Planner::optimize`] for a query on its own: a table it reads twice (a self-join, a
    /// subquery) is scanned once, as in a statement set.
    fn optimize_query(&self, plan: Plan) -> Result<Plan> {
        let shared = crate::rules::scan_reuse::share_scans(vec![self.optimize(plan)?]);
        Ok(shared.into_iter().next().unwrap_or_else(|| unreachable!("one plan in, one out")))
    }

    /// Phases 2 and 3 for a query whose rows are collected.
    ///
    /// # Errors
    /// What the rewrites and the distribution report.
    pub fn physical_query(&self, plan: Plan) -> Result<PhysicalNode> {
        self.check_state_ttl_hints([&plan])?;
        let options = self.with_lookup_abilities([&plan])?;
        let mut physical = physical_query(self.optimize_query(plan)?, &options);
        self.distribution().assign(&mut physical)?;
        Ok(physical)
    }

    /// [`Planner::physical_query`] as EXPLAIN shows it (an upserting root emits no `-U`).
    ///
    /// # Errors
    /// What the rewrites and the distribution report.
    pub fn physical_explained_query(&self, plan: Plan) -> Result<PhysicalNode> {
        self.check_state_ttl_hints([&plan])?;
        let options = self.with_lookup_abilities([&plan])?;
        let mut physical = crate::physical::physical_explained_query(self.optimize_query(plan)?, &options);
        self.distribution().assign(&mut physical)?;
        Ok(physical)
    }

    /// Phases 1 to 3 for the INSERTs of one job (one per sink, scans shared between them).
    ///
    /// # Errors
    /// Unknown tables or columns, type mismatches, an updating query into an append-only sink,
    /// and what the sinks' connectors refuse.
    pub fn physical_inserts(&self, inserts: &[Insert], at: Position) -> Result<Vec<PhysicalNode>> {
        let bound = inserts.iter().map(|i| self.bind_insert(i, at)).collect::<Result<Vec<_>>>()?;
        let (bound, inserts) = union_inserts_into_one_table(bound, inserts);
        let inserts = inserts.as_slice();
        self.check_state_ttl_hints(bound.iter().map(|b| &b.plan))?;
        let options = self.with_lookup_abilities(bound.iter().map(|b| &b.plan))?;
        let mut sinks = Vec::new();
        let mut logical = Vec::new();
        for b in bound {
            logical.push(self.optimize(b.plan)?);
            sinks.push((b.sink, b.resolved));
        }
        let distribution = self.distribution();
        let mut plans = Vec::new();
        for (((sink, resolved), plan), &insert) in
            sinks.iter().zip(crate::rules::scan_reuse::share_scans(logical)).zip(inserts)
        {
            let targets = target_columns(&sink.descriptor, &insert.columns);
            let context = SinkContext { bounded_input: false, targets: targets.clone() };
            let mode = resolved.abilities(&context)?.changelog_mode;
            let mode = mode.for_input(plan.is_insert_only());
            if mode == SinkChangelogMode::Append && !plan.is_insert_only() {
                return Err(Error::validation(
                    at,
                    format!(
                        "Table sink '{}' doesn't support consuming update changes which is produced by node {}",
                        Catalog::qualified(&insert.table),
                        plan.updating_node().unwrap_or("an updating node")
                    ),
                ));
            }
            let primary_key: Vec<usize> = sink
                .primary_key
                .iter()
                .filter_map(|k| sink.descriptor.schema.fields.iter().position(|f| &f.name == k))
                .collect();
            let target = SinkTarget { table: resolved, mode, primary_key, on_conflict: insert.on_conflict, targets };
            let mut physical = physical_sink(plan, target, &options, at)?;
            distribution.assign(&mut physical)?;
            plans.push(physical);
        }
        Ok(plans)
    }

    /// Phase 4: the job graph of `plans` (one job), and the vertex that yields each plan's rows.
    ///
    /// # Errors
    /// A connector that cannot build what it offered.
    pub fn job_graph<'p>(&self, plans: &'p [PhysicalNode]) -> Result<(Translator<'p>, Vec<Output>)> {
        self.translate(Translator::new(), plans)
    }

    /// The job graph of `plans`, built to start now: its scans check that what they read is
    /// there (a file path, say), so that a mistake is reported at the table's option.
    ///
    /// # Errors
    /// As [`Planner::job_graph`]; also what a scan finds missing.
    pub fn job_graph_to_start<'p>(&self, plans: &'p [PhysicalNode]) -> Result<(Translator<'p>, Vec<Output>)> {
        self.translate(Translator::new().starting_job(), plans)
    }

    fn translate<'p>(
        &self,
        translator: Translator<'p>,
        plans: &'p [PhysicalNode],
    ) -> Result<(Translator<'p>, Vec<Output>)> {
        let mut translator = translator
            .with_clock(Arc::clone(&self.clock))
            .with_batch(self.options.batch)
            .with_idle_timeout(self.options.source_idle_timeout);
        let outputs = plans.iter().map(|plan| translator.translate(plan)).collect::<Result<_>>()?;
        Ok((translator, outputs))
    }

    /// The EXPLAIN text of a statement (phases 1 to 3; nothing is built).
    ///
    /// # Errors
    /// Whatever planning the statement reports.
    pub fn explain(&self, statement: &Statement, details: &[String], at: Position) -> Result<String> {
        if self.options.confluent_explain {
            return self.explain_confluent(statement, at);
        }
        let details = ExplainDetails {
            changelog_mode: details.iter().any(|d| d == "CHANGELOG_MODE"),
            json_execution_plan: details.iter().any(|d| d == "JSON_EXECUTION_PLAN"),
            plan_advice: details.iter().any(|d| d == "PLAN_ADVICE").then_some(self.options.advice),
        };
        let (logical, physical): (Vec<LogicalStatement>, Vec<PhysicalNode>) = match statement {
            Statement::Insert(insert) => self.explain_inserts(std::slice::from_ref(insert), at)?,
            Statement::StatementSet(inserts) => self.explain_inserts(inserts, at)?,
            Statement::Query(query) => {
                let plan = self.bind_query(query)?;
                let physical = self.physical_explained_query(plan.clone())?;
                (vec![(None, plan)], vec![physical])
            }
            _ => return Err(Error::Unsupported("EXPLAIN of this statement".into())),
        };
        Ok(explain(&logical, &physical, details))
    }

    /// The EXPLAIN text of a statement in Confluent's format ([`crate::explain::confluent`]): a
    /// SELECT's plan as it runs, its rows going to the client.
    fn explain_confluent(&self, statement: &Statement, at: Position) -> Result<String> {
        let (roots, foreground) = match statement {
            Statement::Insert(insert) => (self.physical_inserts(std::slice::from_ref(insert), at)?, false),
            Statement::StatementSet(inserts) => (self.physical_inserts(inserts, at)?, false),
            Statement::Query(query) => (vec![self.physical_query(self.bind_query(query)?)?], true),
            _ => return Err(Error::Unsupported("EXPLAIN of this statement".into())),
        };
        let options = crate::explain::confluent::ConfluentOptions { state_ttl_millis: self.options.state_ttl_millis };
        Ok(crate::explain::confluent::render(&roots, foreground, &options))
    }

    fn explain_inserts(&self, inserts: &[Insert], at: Position) -> Result<(Vec<LogicalStatement>, Vec<PhysicalNode>)> {
        let mut logical = Vec::new();
        for insert in inserts {
            let plan = self.bind_insert(insert, at)?.plan;
            // The query's own columns, before the cast to the sink's.
            let query_fields = if let Node::Calc { input, .. } = &plan.node {
                if plan.fields.len() == input.fields.len() {
                    &input.fields
                } else {
                    &plan.fields
                }
            } else {
                &plan.fields
            };
            let query_fields = query_fields.clone();
            logical.push((Some((insert.table.clone(), query_fields)), plan));
        }
        Ok((logical, self.physical_inserts(inserts, at)?))
    }

    fn distribution(&self) -> Distribution {
        Distribution { parallelism: self.parallelism, batch: self.options.batch }
    }

    /// The planner's options with the tables `plans` look up that only offer sync lookups.
    ///
    /// # Errors
    /// A lookup join on a table that cannot be looked up.
    /// Refuses a `STATE_TTL` hint naming an input no join of `plans` reads, with Flink's message.
    ///
    /// # Errors
    /// The first hint with such names, at the hint.
    fn check_state_ttl_hints<'p>(&self, plans: impl IntoIterator<Item = &'p Plan>) -> Result<()> {
        fn join_inputs<'a>(plan: &'a Plan, out: &mut Vec<&'a str>) {
            if let Node::Join { names, .. } = &plan.node {
                out.extend(names.iter().flatten().map(String::as_str));
            }
            plan.node.inputs().into_iter().for_each(|input| join_inputs(input, out));
        }
        let mut names = Vec::new();
        plans.into_iter().for_each(|plan| join_inputs(plan, &mut names));
        for hint in &self.options.state_ttl_hints {
            let unknown: Vec<&str> = hint.ttls.keys().map(String::as_str).filter(|k| !names.contains(k)).collect();
            if !unknown.is_empty() {
                return Err(Error::validation(
                    hint.position,
                    format!(
                        "The options of following hints cannot match the name of input tables or views: \n`{}` in `STATE_TTL`",
                        unknown.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    fn with_lookup_abilities<'p>(&self, plans: impl IntoIterator<Item = &'p Plan>) -> Result<PlannerOptions> {
        fn lookup_tables<'a>(plan: &'a Plan, out: &mut Vec<&'a LookupTable>) {
            match &plan.node {
                Node::LookupJoin { input, table, .. } => {
                    out.push(table);
                    lookup_tables(input, out);
                }
                node => node.inputs().into_iter().for_each(|i| lookup_tables(i, out)),
            }
        }
        let mut tables = Vec::new();
        plans.into_iter().for_each(|p| lookup_tables(p, &mut tables));
        let mut sync = BTreeSet::new();
        for table in tables {
            if !table.abilities().supports_async {
                sync.insert(table.name.clone());
            }
        }
        Ok(PlannerOptions { sync_lookup_tables: sync, ..self.options.clone() })
    }
}

/// The INSERTs of a statement set, those into one table (with the same target columns and
/// `ON CONFLICT`) joined into one: a Sink over a Union of their queries, as Flink plans them.
/// Returns the bound INSERTs and the statement of each, in the order of their first INSERT.
fn union_inserts_into_one_table(bound: Vec<BoundInsert>, inserts: &[Insert]) -> (Vec<BoundInsert>, Vec<&Insert>) {
    // Per table written: its sink, the statement of its first INSERT and every query into it.
    let mut groups: Vec<((CatalogTable, SinkTable), &Insert, Vec<Plan>)> = Vec::with_capacity(bound.len());
    for (b, insert) in bound.into_iter().zip(inserts) {
        let same = groups.iter_mut().find(|(_, i, _)| {
            i.table == insert.table && i.columns == insert.columns && i.on_conflict == insert.on_conflict
        });
        match same {
            Some((_, _, plans)) => plans.push(b.plan),
            None => groups.push(((b.sink, b.resolved), insert, vec![b.plan])),
        }
    }
    groups
        .into_iter()
        .map(|((sink, resolved), insert, mut plans)| {
            let plan = match plans.len() {
                1 => plans.remove(0),
                _ => {
                    let fields = plans[0].fields.clone();
                    Plan { node: Node::Union { inputs: plans }, fields }
                }
            };
            (BoundInsert { sink, resolved, plan }, insert)
        })
        .unzip()
}
