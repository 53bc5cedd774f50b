//! Expand: each input row once per grouping set, as Flink plans `GROUP BY GROUPING SETS`,
//! `ROLLUP` and `CUBE` (`Expand(projects=[{a, b, 0 AS $e}, {a, null AS b, 1 AS $e}, …])`).
//!
//! Output: the input's columns, with the columns a set leaves out NULL, then the set's id
//! (`$e`, BIGINT NOT NULL). The rows for one input row follow each other, one per set in the
//! order given, with the input row's kind. The aggregate above groups on the keys and `$e`, so
//! equal key values of different sets stay apart (a NULL of the data and a NULL of the set
//! differ by `$e`).

use std::sync::Arc;

use arrow_array::{new_null_array, Array, ArrayRef, Int64Array};
use weir_runtime::{Chunk, Operator, OperatorContext, Output, Result};

use crate::spec::OperatorSpec;

/// One grouping set of an [`ExpandSpec`]: which input columns it makes NULL, and its id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpandProject {
    /// The input columns this set leaves out (NULL in its rows), ascending.
    pub nulled: Vec<usize>,
    /// The value of the `$e` column in this set's rows.
    pub id: i64,
}

/// Everything an [`ExpandOperator`] is built from.
#[derive(Debug, Clone)]
pub struct ExpandSpec {
    /// The sets, in the order their rows follow an input row.
    pub projects: Vec<ExpandProject>,
}

impl OperatorSpec for ExpandSpec {
    type Operator = ExpandOperator;

    fn build(&self, _subtask: &weir_runtime::SubtaskInfo) -> ExpandOperator {
        ExpandOperator { spec: self.clone() }
    }
}

/// Emits each input row once per set of its spec (see the module).
#[derive(Debug, Clone)]
pub struct ExpandOperator {
    spec: ExpandSpec,
}

impl Operator for ExpandOperator {
    fn name(&self) -> &str {
        "Expand"
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        _ctx: &mut OperatorContext,
        out: &mut Output,
    ) -> Result<()> {
        if chunk.is_empty() {
            return Ok(());
        }
        let sets = &self.spec.projects;
        let rows = chunk.len();
        let columns = chunk.columns();
        // Output row `r * sets + s` is input row `r` in set `s`.
        let repeated: Vec<u32> = (0..rows as u32).flat_map(|r| std::iter::repeat_n(r, sets.len())).collect();
        let mut arrays: Vec<ArrayRef> = Vec::with_capacity(chunk.arity() + 1);
        for c in 0..chunk.arity() {
            let array = columns.compacted(c);
            if !sets.iter().any(|set| set.nulled.contains(&c)) {
                arrays.push(weir_runtime::chunk::take(&array, &repeated));
                continue;
            }
            // Row 0 of `null` stands for every left-out value.
            let null = new_null_array(array.data_type(), 1);
            let sources: [&dyn Array; 2] = [array.as_ref(), null.as_ref()];
            let picks: Vec<(usize, usize)> = (0..rows)
                .flat_map(|r| sets.iter().map(move |set| if set.nulled.contains(&c) { (1, 0) } else { (0, r) }))
                .collect();
            let expanded = arrow_select::interleave::interleave(&sources, &picks)
                .map_err(|e| weir_runtime::Error::execution(format!("Expand: {e}")))?;
            arrays.push(expanded);
        }
        let ids: Int64Array = (0..rows).flat_map(|_| sets.iter().map(|set| set.id)).collect();
        arrays.push(Arc::new(ids));
        let kinds = chunk.kinds().iter().flat_map(|&k| std::iter::repeat_n(k, sets.len())).collect();
        let mut expanded = Chunk::from_arrays(kinds, arrays);
        expanded.set_origin_nanos(chunk.origin_nanos());
        out.collect(expanded);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weir_runtime::harness::OperatorHarness;
    use weir_runtime::{RowKind, SubtaskInfo, Value};

    fn rollup() -> ExpandOperator {
        // ROLLUP(a, b) over (a, b, x): {a, b}, {a}, {}.
        let projects = vec![
            ExpandProject { nulled: vec![], id: 0 },
            ExpandProject { nulled: vec![1], id: 1 },
            ExpandProject { nulled: vec![0, 1], id: 3 },
        ];
        ExpandSpec { projects }.build(&SubtaskInfo::new("Expand", 0, 1))
    }

    fn expanded(chunk: Chunk) -> Vec<String> {
        let mut harness = OperatorHarness::new(rollup());
        harness.push_chunk(0, chunk).unwrap();
        harness.take_lines()
    }

    #[test]
    fn each_row_follows_itself_once_per_set_with_its_kind() {
        let mut chunk = Chunk::new(3);
        chunk.push(RowKind::Insert, &[Value::string("a"), Value::Int(1), Value::Double(2.5)]);
        chunk.push(RowKind::Delete, &[Value::string("b"), Value::Null, Value::Double(1.0)]);
        assert_eq!(
            expanded(chunk),
            [
                "+I[a, 1, 2.5, 0]",
                "+I[a, null, 2.5, 1]",
                "+I[null, null, 2.5, 3]",
                "-D[b, null, 1.0, 0]",
                "-D[b, null, 1.0, 1]",
                "-D[null, null, 1.0, 3]",
            ]
        );
    }

    #[test]
    fn a_selection_is_honoured() {
        let mut chunk = Chunk::new(3);
        for i in 0..4 {
            chunk.push(RowKind::Insert, &[Value::string(&format!("k{i}")), Value::Int(i), Value::Double(0.0)]);
        }
        chunk.columns();
        let lines = expanded(chunk.selected(&[1, 3]));
        assert_eq!(lines.len(), 6);
        assert_eq!(lines[0], "+I[k1, 1, 0.0, 0]");
        assert_eq!(lines[3], "+I[k3, 3, 0.0, 0]");
        assert_eq!(lines[4], "+I[k3, null, 0.0, 1]");
    }
}
