//! Operator specs: an operator of a plan described by its parameters alone. The planner's
//! physical node holds the spec; EXPLAIN reads its parameters; the job graph asks it for a
//! factory that builds one operator per subtask. An operator's parameters are thus written once,
//! in its spec, next to the operator.

use std::sync::Arc;

use weir_runtime::graph::OperatorFactory;
use weir_runtime::{Operator, SubtaskInfo};

/// An operator described by its parameters; builds a fresh operator for each subtask.
pub trait OperatorSpec: std::fmt::Debug + Clone + Send + Sync + 'static {
    /// The operator this spec builds.
    type Operator: Operator + 'static;

    /// A new operator for `subtask`, with no state.
    fn build(&self, subtask: &SubtaskInfo) -> Self::Operator;

    /// The job graph's factory of this operator (every subtask builds its own).
    fn factory(&self) -> OperatorFactory {
        let spec = self.clone();
        Arc::new(move |subtask| Box::new(spec.build(subtask)))
    }
}
