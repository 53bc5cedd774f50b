//! The state compatibility check: can a changed script start from the old one's savepoint?
//!
//! Each job is described by a [`JobShape`]: its stateful operators
//! ([`StateShape`](shape::StateShape): what each keeps in state, in terms of the source columns
//! it derives from), its sources and sinks, the options that change how state is held, and its
//! parallelism. The planner writes the shape of a
//! job that checkpoints into every checkpoint, so that a restore can judge the new plan against
//! the one the state was written by; `weir compat OLD.sql NEW.sql` plans both scripts and judges
//! the same way.
//!
//! [`check`] pairs the old and the new stateful operators ([`matching`]), judges each pair by the
//! rules of [`rules`] (Ververica's documented rules where they exist, Flink's restore behaviour
//! where they do not) and gives one verdict per operator and one for the job, the worst of them.
//! [`restore`] rewrites a checkpoint so that the new job restores from it as the verdicts say.

mod matching;
pub mod restore;
mod rules;
pub mod shape;

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use weir_runtime::settings::Setting;

pub use shape::JobShape;

/// `table.optimizer.state-compatibility.ignore-filter`
pub static IGNORE_FILTER: Setting<bool> = Setting::boolean(
    "table.optimizer.state-compatibility.ignore-filter",
    false,
    "the state compatibility check ignores a changed WHERE or pushed-down filter before a stateful operator",
);
/// `table.optimizer.state-compatibility.ignore-sink`
pub static IGNORE_SINK: Setting<bool> = Setting::boolean(
    "table.optimizer.state-compatibility.ignore-sink",
    true,
    "the state compatibility check treats sinks as stateless (false: a changed sink is incompatible)",
);

/// How the check is configured: the two options of the new script's session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompatOptions {
    /// `table.optimizer.state-compatibility.ignore-filter`
    pub ignore_filter: bool,
    /// `table.optimizer.state-compatibility.ignore-sink`
    pub ignore_sink: bool,
}

impl Default for CompatOptions {
    fn default() -> Self {
        CompatOptions { ignore_filter: false, ignore_sink: true }
    }
}

/// A verdict, from best to worst.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Verdict {
    /// The new job gives the results a run over the whole history would give.
    FullyCompatible,
    /// Some columns have state; the others (new aggregates) start from the restore.
    PartiallyCompatible,
    /// The rules do not decide: the reason says why.
    Unknown,
    /// The state cannot be used.
    Incompatible,
}

impl Verdict {
    /// The words `weir compat` prints.
    pub fn text(self) -> &'static str {
        match self {
            Verdict::FullyCompatible => "Fully compatible",
            Verdict::PartiallyCompatible => "Partially compatible",
            Verdict::Incompatible => "Incompatible",
            Verdict::Unknown => "Compatibility unknown",
        }
    }

    /// `weir compat`'s exit code: 0 fully or partially compatible, 1 incompatible, 2 unknown.
    pub fn exit_code(self) -> i32 {
        match self {
            Verdict::FullyCompatible | Verdict::PartiallyCompatible => 0,
            Verdict::Incompatible => 1,
            Verdict::Unknown => 2,
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text())
    }
}

/// The verdict on one operator (or on a source, a sink, an option of the job).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgement {
    /// What is judged: `GroupAggregate(groupBy=[MyTable.a])`, `source MyTable`, …
    pub subject: String,
    /// The verdict.
    pub verdict: Verdict,
    /// Why, in a sentence.
    pub reason: String,
}

/// What a restore does with an old operator's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StateFate {
    /// The new operator `new_id` takes it; `calls` maps each of its aggregate calls to the old
    /// call whose accumulators it continues (`None`: it starts empty), when the calls changed.
    Kept {
        /// The old operator's id.
        old_id: String,
        /// The new operator's id.
        new_id: String,
        /// The old call each new call continues, when they differ.
        calls: Option<Vec<Option<usize>>>,
    },
    /// It is dropped: the operator is gone.
    Dropped {
        /// The old operator's id.
        old_id: String,
    },
    /// It cannot be used by the new operator: the restore is refused unless unclaimed state may
    /// be dropped.
    Refused {
        /// The old operator's id.
        old_id: String,
        /// The new operator, as the report names it.
        subject: String,
        /// Why.
        reason: String,
    },
}

/// The result of a check: a judgement per stateful operator and per changed source, sink or
/// option, the changed items VVR counts, and what a restore does with each old operator's state.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// One per stateful operator (new ones, then dropped ones), then the job's own.
    pub judgements: Vec<Judgement>,
    /// The changes that count as items (an operator's aggregates, a filter, a sink).
    pub items: Vec<String>,
    /// What happens to each old operator's state.
    pub fates: Vec<StateFate>,
}

impl Report {
    /// The job's verdict: the worst of its judgements; more than one changed item makes a
    /// compatible job's verdict unknown, as VVR's check says.
    pub fn verdict(&self) -> Verdict {
        let worst = self.judgements.iter().map(|j| j.verdict).max().unwrap_or(Verdict::FullyCompatible);
        if worst < Verdict::Unknown && self.items.len() > 1 {
            return Verdict::Unknown;
        }
        worst
    }

    /// The report as `weir compat` prints it: a line per judgement (`subject: verdict: reason`)
    /// and the job's verdict last.
    pub fn text(&self) -> String {
        let mut text = String::new();
        for j in &self.judgements {
            text.push_str(&format!("{}: {}: {}\n", j.subject, j.verdict, j.reason));
        }
        if self.items.len() > 1 && self.judgements.iter().all(|j| j.verdict < Verdict::Unknown) {
            text.push_str(&format!(
                "more than one item changed ({}): {} (check one change at a time)\n",
                self.items.join("; "),
                Verdict::Unknown
            ));
        }
        text.push_str(self.verdict().text());
        text.push('\n');
        text
    }
}

/// Judges whether the job `new` can start from the state of the job `old`.
pub fn check(old: &JobShape, new: &JobShape, options: CompatOptions) -> Report {
    let mut report = Report::default();
    matching::judge_operators(old, new, options, &mut report);
    rules::judge_job(old, new, options, &mut report);
    report
}

/// The options of a session that change how a job holds its state, by key, as the shape keeps
/// them (only those set differ from their defaults).
pub type StateOptions = BTreeMap<String, String>;
