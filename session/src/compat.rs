//! The state compatibility check in a session: the shape of a script's jobs, and a restore that
//! follows the check's verdicts (see [`weir_planner::compat`]).

use std::sync::Arc;

use weir_runtime::checkpoint::Restore;
use weir_runtime::graph::JobGraph;

use super::{ScriptError, Session};
use weir_planner::compat::shape::ShapeCollector;
use weir_planner::compat::{self, CompatOptions, JobShape, Report, StateOptions};
use weir_planner::error::{Position, Result};
use weir_planner::options::STATE_TTL;
use weir_planner::parser::{Insert, Located, Statement};
use weir_planner::translate::Translator;

impl Session {
    /// The check's options as this session sets them.
    pub fn compat_options(&self) -> CompatOptions {
        CompatOptions {
            ignore_filter: self.settings.get(&compat::IGNORE_FILTER),
            ignore_sink: self.settings.get(&compat::IGNORE_SINK),
        }
    }

    /// The options of this session that change how a job holds state, as set.
    fn state_options(&self) -> StateOptions {
        [&STATE_TTL.spec]
            .iter()
            .filter_map(|s| self.settings.text(s.key).map(|v| (s.key.to_string(), v.to_string())))
            .collect()
    }

    /// The shape of the job `translator` built into `graph`.
    ///
    /// # Errors
    /// A graph with a cycle.
    pub(super) fn job_shape(&self, translator: &Translator<'_>, graph: &JobGraph) -> Result<JobShape> {
        let ids = graph.operator_ids()?;
        let mut shapes = ShapeCollector::default();
        for (placed, vertex) in &translator.placed {
            shapes.place(*placed, *vertex);
        }
        Ok(shapes.finish(&ids, self.runtime.default_parallelism, self.state_options()))
    }

    /// The shape of the job of `inserts`, planned as it would run.
    fn insert_shape(&self, inserts: &[Insert], at: Position) -> Result<JobShape> {
        let planner = self.planner()?;
        let plans = planner.physical_inserts(inserts, at)?;
        let (mut translator, _) = planner.job_graph(&plans)?;
        let graph = std::mem::take(&mut translator.graph);
        self.job_shape(&translator, &graph)
    }

    /// Runs the DDL and `SET` statements of `sql` and returns the shape of all its INSERTs and
    /// statement sets together, without running any job: what `weir compat` compares.
    ///
    /// # Errors
    /// The first statement that fails, with its position.
    pub fn script_shape(&mut self, sql: &str) -> Result<JobShape, ScriptError> {
        super::on_planning_stack(|| self.script_shape_here(sql))
    }

    fn script_shape_here(&mut self, sql: &str) -> Result<JobShape, ScriptError> {
        self.dry_run(sql, Self::statements_shape)
    }

    /// The shape of the INSERTs and statement sets of `statements` together, after their DDL
    /// and `SET` statements ran.
    fn statements_shape(&mut self, statements: &[Located]) -> Result<JobShape, ScriptError> {
        let mut shape: Option<JobShape> = None;
        for located in statements {
            let planned = match &located.statement {
                Statement::Insert(insert) => self
                    .with_hints(located, |s| s.insert_shape(std::slice::from_ref(insert), located.position))
                    .map(Some),
                Statement::StatementSet(inserts) => {
                    self.with_hints(located, |s| s.insert_shape(inserts, located.position)).map(Some)
                }
                Statement::Query(_) | Statement::Explain { .. } => Ok(None),
                _ => self.execute(located).map(|()| None),
            };
            let Some(job) = planned.map_err(|error| self.script_error(located.position, error))? else { continue };
            match &mut shape {
                None => shape = Some(job),
                Some(all) => {
                    all.sources.extend(job.sources);
                    all.sinks.extend(job.sinks);
                    all.operators.extend(job.operators);
                }
            }
        }
        Ok(shape.unwrap_or_else(|| {
            weir_planner::compat::shape::ShapeCollector::default().finish(
                &[],
                self.runtime.default_parallelism,
                self.state_options(),
            )
        }))
    }

    /// Makes `runtime` write `shape` into the job's checkpoints and, when it restores, restore
    /// as the check of `shape` against the checkpoint's own says: each operator's state goes
    /// to the operator the check paired it with, that of operators gone is dropped, state the
    /// new operator cannot use refuses the restore (unless unclaimed state may be dropped).
    ///
    /// # Errors
    /// A restore the check refuses, naming the operator.
    pub(super) fn follow_compatibility(
        &self,
        job: &str,
        shape: &JobShape,
        runtime: &mut weir_runtime::RuntimeConfig,
    ) -> Result<()> {
        let text = serde_json::to_string(shape).map_err(|e| weir_runtime::Error::Restore(e.to_string()))?;
        runtime.checkpointing.plan = Some(Arc::new(text));
        let Some(restore) = &runtime.checkpointing.restore else { return Ok(()) };
        // A checkpoint of a job that did not describe itself restores by operator id alone.
        let Some(old) = restore.checkpoint.plan.as_deref().and_then(|p| serde_json::from_str::<JobShape>(p).ok())
        else {
            return Ok(());
        };
        let report: Report = compat::check(&old, shape, self.compat_options());
        let verdict = report.verdict();
        tracing::info!(job, verdict = %verdict, "state compatibility of the restore");
        for j in report.judgements.iter().filter(|j| j.verdict > compat::Verdict::FullyCompatible) {
            tracing::warn!(job, subject = %j.subject, verdict = %j.verdict, reason = %j.reason, "state compatibility");
        }
        let rewritten =
            compat::restore::rewrite(&restore.checkpoint, &old, shape, &report, restore.ignore_unclaimed_state)
                .map_err(|e| weir_runtime::Error::Restore(format!("job '{job}': {e}")))?;
        runtime.checkpointing.restore =
            Some(Restore { checkpoint: Arc::new(rewritten), ignore_unclaimed_state: restore.ignore_unclaimed_state });
        Ok(())
    }
}

/// Checks whether the script `new` can start from a savepoint of the script `old`: each planned
/// in a session `session` makes (a fresh one per script), the check configured by the new
/// script's session.
///
/// # Errors
/// A statement of either script that fails, with the script it is in (`"old"` or `"new"`).
pub fn check_scripts(
    old: &str,
    new: &str,
    session: impl Fn() -> Session,
) -> std::result::Result<Report, (&'static str, Box<ScriptError>)> {
    let old_shape = session().script_shape(old).map_err(|e| ("old", Box::new(e)))?;
    let mut new_session = session();
    let new_shape = new_session.script_shape(new).map_err(|e| ("new", Box::new(e)))?;
    Ok(compat::check(&old_shape, &new_shape, new_session.compat_options()))
}
