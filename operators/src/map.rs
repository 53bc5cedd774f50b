//! Map: one output row per input row, computed by a function.

use weir_runtime::{Chunk, Error, Operator, OperatorContext, Output, Result, Value};

/// Applies a function to every row. The function pushes the output row's fields onto the
/// vector it is given; it must push exactly `arity` of them. Row kinds pass through unchanged.
pub struct MapOperator<F> {
    name: String,
    arity: usize,
    f: F,
}

impl<F> MapOperator<F>
where
    F: FnMut(&[Value], &mut Vec<Value>) + Send,
{
    /// A map named `name` whose output rows have `arity` fields.
    pub fn new(name: impl Into<String>, arity: usize, f: F) -> Self {
        MapOperator { name: name.into(), arity, f }
    }
}

impl<F> Operator for MapOperator<F>
where
    F: FnMut(&[Value], &mut Vec<Value>) + Send,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        _ctx: &mut OperatorContext,
        out: &mut Output,
    ) -> Result<()> {
        let mut mapped = Chunk::with_capacity(self.arity, chunk.len());
        for (kind, row) in chunk.rows() {
            let pushed = mapped.push_with(kind, |fields| (self.f)(row, fields));
            if pushed != self.arity {
                return Err(Error::execution(format!(
                    "the map function produced {pushed} fields where {} were declared",
                    self.arity
                )));
            }
        }
        mapped.set_origin_nanos(chunk.origin_nanos());
        out.collect(mapped);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weir_runtime::harness::OperatorHarness;

    #[test]
    fn maps_every_row_and_keeps_kinds() {
        let mut h = OperatorHarness::new(MapOperator::new("Double", 2, |row: &[Value], out: &mut Vec<Value>| {
            out.push(row[0].clone());
            out.push(Value::BigInt(row[1].as_i64().unwrap_or(0) * 2));
        }));
        h.push("op | k STRING | v BIGINT\n+I | a | 1\n-D | b | 5").unwrap();
        assert_eq!(h.take_lines(), ["+I[a, 2]", "-D[b, 10]"]);
    }

    #[test]
    fn a_wrong_number_of_fields_fails_naming_the_operator() {
        let mut h = OperatorHarness::new(MapOperator::new("Broken", 2, |_: &[Value], out: &mut Vec<Value>| {
            out.push(Value::Null);
        }));
        let err = h.push("op | INT\n+I | 1").unwrap_err().to_string();
        assert_eq!(
            err,
            "Operator 'Broken' (subtask 1/1) failed: the map function produced 1 fields where 2 were declared"
        );
    }
}
