//! Filter: keeps the rows a predicate accepts.

use weir_runtime::{Chunk, Operator, OperatorContext, Output, Result, Value};

/// Keeps the rows for which the predicate is true, in order, with their kinds.
pub struct FilterOperator<F> {
    name: String,
    predicate: F,
}

impl<F> FilterOperator<F>
where
    F: FnMut(&[Value]) -> bool + Send,
{
    /// A filter named `name`.
    pub fn new(name: impl Into<String>, predicate: F) -> Self {
        FilterOperator { name: name.into(), predicate }
    }
}

impl<F> Operator for FilterOperator<F>
where
    F: FnMut(&[Value]) -> bool + Send,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        mut chunk: Chunk,
        _ctx: &mut OperatorContext,
        out: &mut Output,
    ) -> Result<()> {
        chunk.retain(|_, row| (self.predicate)(row));
        out.collect(chunk);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weir_runtime::harness::OperatorHarness;

    #[test]
    fn keeps_matching_rows_in_order() {
        let mut h = OperatorHarness::new(FilterOperator::new("Even", |row: &[Value]| {
            row[0].as_i64().is_some_and(|v| v % 2 == 0)
        }));
        h.push("op | INT\n+I | 1\n+I | 2\n-U | 4\n+I | 5").unwrap();
        h.push("op | INT\n+I | 7").unwrap();
        assert_eq!(h.take_lines(), ["+I[2]", "-U[4]"]);
    }
}
