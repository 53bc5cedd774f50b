//! Table functions written in Rust: a [`TableUdf`] registered with the library API is called in
//! `LATERAL TABLE(name(args))`, and each input row is joined with the rows it emits for that
//! row's arguments, as Flink joins the rows of a `TableFunction`'s `collect` calls.

use std::fmt;
use std::sync::Arc;

use weir_runtime::{DataType, Error, Field, Result, Value};

use crate::expr::functions::Arity;
use crate::expr::{Expr, ExprError};

/// A table function written in Rust.
///
/// weir types each call once, at planning, with [`result_fields`](Self::result_fields), and
/// calls [`eval`](Self::eval) for every input row with that row's arguments (NULLs included:
/// the function decides what a NULL gives).
pub trait TableUdf: fmt::Debug + Send + Sync {
    /// The SQL name, as EXPLAIN and error messages print it.
    fn name(&self) -> &str;

    /// How many arguments it takes.
    fn arity(&self) -> Arity;

    /// The columns of the rows it emits for arguments of `args`: their names (which
    /// `AS t(a, b)` may rename) and types.
    ///
    /// # Errors
    /// Argument types the function does not take, in Flink's words
    /// ([`wrong_types`](crate::expr::functions::wrong_types)).
    fn result_fields(&self, args: &[&DataType]) -> Result<Vec<Field>, ExprError>;

    /// Calls `emit` once per row the arguments `args` give, with that row's values, as many
    /// and of the types [`result_fields`](Self::result_fields) said. No call of `emit` is an
    /// empty table.
    ///
    /// # Errors
    /// A failure that fails the job, in the function's words.
    fn eval(&self, args: &[Value], emit: &mut dyn FnMut(&[Value])) -> Result<(), ExprError>;

    /// Whether it is a Python function (EXPLAIN prints its correlate as a `PythonCorrelate`,
    /// as Flink's).
    fn is_python(&self) -> bool {
        false
    }

    /// Whether the function produces its rows lazily (a Python generator), so that the
    /// correlate pulls them with [`stream`](Self::stream) instead of calling
    /// [`eval`](Self::eval): it takes at most a chunk of them per step and sends it on before
    /// it asks for more, so an endless one holds no more than a chunk and stops when the job
    /// does.
    fn streams(&self) -> bool {
        false
    }

    /// The rows the arguments `args` give, pulled one at a time. The default collects what
    /// [`eval`](Self::eval) emits.
    ///
    /// # Errors
    /// A failure that fails the job, in the function's words.
    fn stream(&self, args: &[Value]) -> Result<TableRows, ExprError> {
        let mut rows = Vec::new();
        self.eval(args, &mut |row| rows.push(row.to_vec()))?;
        Ok(Box::new(rows.into_iter().map(Ok)))
    }
}

/// The rows of one call of a [`TableUdf`], pulled one at a time.
pub type TableRows = Box<dyn Iterator<Item = Result<Vec<Value>, ExprError>> + Send>;

/// The rows of one call, checked as they come: each of the width of the function's type, a
/// failure named with the function.
pub struct RowStream {
    rows: TableRows,
    name: String,
    width: usize,
}

impl fmt::Debug for RowStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RowStream").field("name", &self.name).field("width", &self.width).finish()
    }
}

impl RowStream {
    /// The next row; `None` once the function has given all.
    ///
    /// # Errors
    /// The function's own failure, or a row of another width than its type's.
    pub fn next_row(&mut self) -> Result<Option<Vec<Value>>> {
        match self.rows.next() {
            None => Ok(None),
            Some(Err(e)) => Err(Error::execution(format!("Table function '{}' failed: {}", self.name, e.0))),
            Some(Ok(row)) if row.len() == self.width => Ok(Some(row)),
            Some(Ok(row)) => Err(Error::execution(format!(
                "Table function '{}' emitted a row of {} values; its result type has {} columns",
                self.name,
                row.len(),
                self.width
            ))),
        }
    }
}

/// A call of a [`TableUdf`] on expressions over the input row.
#[derive(Debug, Clone)]
pub struct TableFunctionCall {
    /// The function.
    pub function: Arc<dyn TableUdf>,
    /// Its arguments, over the input row.
    pub args: Vec<Expr>,
    /// The columns of each row it emits, as its `result_fields` typed them for `args`.
    pub fields: Vec<Field>,
}

impl TableFunctionCall {
    /// The call over an input whose columns moved as `map` says.
    pub fn remap(self, map: &[Option<usize>]) -> TableFunctionCall {
        let args = self.args.into_iter().map(|a| a.remap(map)).collect();
        TableFunctionCall { args, ..self }
    }

    /// The rows the function gives for the input row `row`, pulled as they are needed
    /// ([`TableUdf::stream`]); `args` holds the evaluated arguments (reused between rows).
    ///
    /// # Errors
    /// An argument that fails to evaluate, or the function's own failure to start.
    pub fn stream(&self, row: &[Value], args: &mut Vec<Value>) -> Result<RowStream> {
        args.clear();
        for arg in &self.args {
            args.push(arg.eval(row).map_err(|e| Error::execution(e.0))?);
        }
        let name = self.function.name();
        let rows = self
            .function
            .stream(args)
            .map_err(|e| Error::execution(format!("Table function '{name}' failed: {}", e.0)))?;
        Ok(RowStream { rows, name: name.to_string(), width: self.fields.len() })
    }

    /// Calls `emit` with each row the function emits for the input row `row`; `args` holds the
    /// evaluated arguments (reused between rows).
    ///
    /// # Errors
    /// An argument that fails to evaluate, the function's own failure, or a row of another
    /// width than its type's, named with the function.
    pub fn rows(&self, row: &[Value], args: &mut Vec<Value>, emit: &mut dyn FnMut(&[Value])) -> Result<()> {
        args.clear();
        for arg in &self.args {
            args.push(arg.eval(row).map_err(|e| Error::execution(e.0))?);
        }
        let width = self.fields.len();
        let mut wrong_width = None;
        self.function
            .eval(args, &mut |emitted| {
                if emitted.len() == width {
                    emit(emitted);
                } else {
                    wrong_width.get_or_insert(emitted.len());
                }
            })
            .map_err(|e| Error::execution(format!("Table function '{}' failed: {}", self.function.name(), e.0)))?;
        match wrong_width {
            None => Ok(()),
            Some(emitted) => Err(Error::execution(format!(
                "Table function '{}' emitted a row of {emitted} values; its result type has {width} columns",
                self.function.name()
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::correlate::{CorrelateOperator, CorrelateSpec, CorrelatedTable, TableRows};
    use crate::spec::OperatorSpec;
    use weir_runtime::harness::OperatorHarness;
    use weir_runtime::{Chunk, RowKind};

    /// `SPLIT(s, sep)`: a row (word, length) per part of `s`; nothing for NULL.
    #[derive(Debug)]
    struct Split;

    impl TableUdf for Split {
        fn name(&self) -> &str {
            "SPLIT"
        }
        fn arity(&self) -> Arity {
            Arity::exactly(2)
        }
        fn result_fields(&self, _args: &[&DataType]) -> Result<Vec<Field>, ExprError> {
            Ok(vec![Field::new("word", DataType::string()), Field::new("length", DataType::int())])
        }
        fn eval(&self, args: &[Value], emit: &mut dyn FnMut(&[Value])) -> Result<(), ExprError> {
            let (Some(s), Some(sep)) = (args[0].as_str(), args[1].as_str()) else { return Ok(()) };
            if sep.is_empty() {
                return Err(ExprError("the separator is empty".into()));
            }
            for word in s.split(sep) {
                emit(&[Value::string(word), Value::Int(word.chars().count() as i32)]);
            }
            Ok(())
        }
    }

    /// Emits one value where its type says two.
    #[derive(Debug)]
    struct Narrow;

    impl TableUdf for Narrow {
        fn name(&self) -> &str {
            "NARROW"
        }
        fn arity(&self) -> Arity {
            Arity::exactly(0)
        }
        fn result_fields(&self, _args: &[&DataType]) -> Result<Vec<Field>, ExprError> {
            Ok(vec![Field::new("a", DataType::int()), Field::new("b", DataType::int())])
        }
        fn eval(&self, _args: &[Value], emit: &mut dyn FnMut(&[Value])) -> Result<(), ExprError> {
            emit(&[Value::Int(1)]);
            Ok(())
        }
    }

    /// `COUNT_TO(n)`: the rows 0 … n - 1 (endless for NULL), produced lazily when `lazy`.
    #[derive(Debug)]
    struct CountTo {
        lazy: bool,
    }

    impl TableUdf for CountTo {
        fn name(&self) -> &str {
            "COUNT_TO"
        }
        fn arity(&self) -> Arity {
            Arity::exactly(1)
        }
        fn result_fields(&self, _args: &[&DataType]) -> Result<Vec<Field>, ExprError> {
            Ok(vec![Field::new("i", DataType::bigint())])
        }
        fn eval(&self, args: &[Value], emit: &mut dyn FnMut(&[Value])) -> Result<(), ExprError> {
            for row in self.stream(args)? {
                emit(&row?);
            }
            Ok(())
        }
        fn streams(&self) -> bool {
            self.lazy
        }
        fn stream(&self, args: &[Value]) -> Result<TableRows, ExprError> {
            let end = args[0].as_i64().unwrap_or(i64::MAX);
            Ok(Box::new((0..end).map(|i| Ok(vec![Value::BigInt(i)]))))
        }
    }

    fn count_to(lazy: bool, left: bool) -> CorrelateOperator {
        operator(Arc::new(CountTo { lazy }), vec![Expr::column(0, DataType::bigint())], left)
    }

    /// An endless generator is pulled a chunk at a time: each poll emits one full chunk, the
    /// operator takes no input meanwhile, and the watermark behind the row waits.
    #[test]
    fn an_endless_function_is_pulled_a_chunk_at_a_time() {
        let mut harness = OperatorHarness::new(count_to(true, false));
        let mut chunk = Chunk::new(1);
        chunk.push(RowKind::Insert, &[Value::Null]);
        harness.push_chunk(0, chunk).unwrap();
        harness.watermark(5).unwrap();
        for _ in 0..3 {
            let out = harness.take_output();
            assert_eq!(out.len(), 1, "one chunk per step");
            let weir_runtime::StreamElement::Chunk(chunk) = &out[0] else { panic!("{out:?}") };
            assert_eq!(chunk.len(), 1024);
            assert_eq!(harness.async_state(), weir_runtime::AsyncState::Saturated);
            harness.poll_async().unwrap();
        }
    }

    /// Pulled a chunk at a time, the rows, the LEFT rows of no match, watermarks and the input
    /// that came meanwhile leave in the order an eager call gives them, on random input.
    #[test]
    fn a_lazy_function_gives_what_an_eager_call_gives_in_order() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
        for left in [false, true] {
            let (mut lazy, mut eager) =
                (OperatorHarness::new(count_to(true, left)), OperatorHarness::new(count_to(false, left)));
            for step in 0..30 {
                if rng.random_bool(0.2) {
                    lazy.watermark(step).unwrap();
                    eager.watermark(step).unwrap();
                    continue;
                }
                let mut chunk = Chunk::new(1);
                for _ in 0..rng.random_range(1..4) {
                    let n = if rng.random_bool(0.3) { 0 } else { rng.random_range(0..2500) };
                    chunk.push(
                        if rng.random_bool(0.8) { RowKind::Insert } else { RowKind::Delete },
                        &[Value::BigInt(n)],
                    );
                }
                lazy.push_chunk(0, chunk.clone()).unwrap();
                eager.push_chunk(0, chunk).unwrap();
                if rng.random_bool(0.5) {
                    lazy.poll_async().unwrap();
                }
            }
            while lazy.async_state() != weir_runtime::AsyncState::Idle {
                lazy.poll_async().unwrap();
            }
            let (lazy, eager) = (lazy.take_lines(), eager.take_lines());
            assert!(eager.len() > 10_000);
            assert_eq!(lazy, eager, "left: {left}");
        }
    }

    fn operator(function: Arc<dyn TableUdf>, args: Vec<Expr>, left: bool) -> CorrelateOperator {
        let types: Vec<&DataType> = args.iter().map(Expr::ty).collect();
        let fields = function.result_fields(&types).unwrap();
        let table = CorrelatedTable::Function(TableFunctionCall { function, args, fields });
        CorrelateSpec { table, left }.build(&weir_runtime::SubtaskInfo::new("Correlate", 0, 1))
    }

    fn split(left: bool, separator: &str) -> CorrelateOperator {
        let args =
            vec![Expr::column(1, DataType::string()), Expr::literal(Value::string(separator), DataType::string())];
        operator(Arc::new(Split), args, left)
    }

    fn run(op: CorrelateOperator, input: &[(RowKind, Vec<Value>)]) -> weir_runtime::Result<Vec<String>> {
        let mut harness = OperatorHarness::new(op);
        let mut chunk = Chunk::new(2);
        input.iter().for_each(|(k, r)| chunk.push(*k, r));
        harness.push_chunk(0, chunk)?;
        Ok(harness.take_lines())
    }

    #[test]
    fn every_emitted_row_joins_its_input_row_with_its_kind() {
        let input = [
            (RowKind::Insert, vec![Value::Int(1), Value::string("a bb")]),
            (RowKind::Delete, vec![Value::Int(2), Value::string("ccc")]),
            (RowKind::Insert, vec![Value::Int(3), Value::Null]),
        ];
        assert_eq!(
            run(split(false, " "), &input).unwrap(),
            ["+I[1, a bb, a, 1]", "+I[1, a bb, bb, 2]", "-D[2, ccc, ccc, 3]"]
        );
        assert_eq!(
            run(split(true, " "), &input).unwrap(),
            ["+I[1, a bb, a, 1]", "+I[1, a bb, bb, 2]", "-D[2, ccc, ccc, 3]", "+I[3, null, null, null]"]
        );
    }

    #[test]
    fn a_failing_function_and_a_row_of_the_wrong_width_fail_the_job_naming_the_function() {
        let input = [(RowKind::Insert, vec![Value::Int(1), Value::string("a")])];
        let err = run(split(false, ""), &input).unwrap_err().to_string();
        assert!(err.contains("Table function 'SPLIT' failed: the separator is empty"), "{err}");
        let err = run(operator(Arc::new(Narrow), Vec::new(), false), &input).unwrap_err().to_string();
        assert!(
            err.contains("Table function 'NARROW' emitted a row of 1 values; its result type has 2 columns"),
            "{err}"
        );
    }
}
