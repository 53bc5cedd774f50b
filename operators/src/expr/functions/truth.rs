//! `x IS [NOT] TRUE` and `x IS [NOT] FALSE` on BOOLEANs: never NULL, with a column kernel each.
//! They have syntax of their own; the binder finds them by their SQL text (`IS TRUE`, …), which no
//! function call can spell. (`IS [NOT] UNKNOWN` is planned as `IS [NOT] NULL`, as Flink plans it.)

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, BooleanArray};
use arrow_buffer::BooleanBuffer;
use weir_runtime::{DataType, LogicalType, Value};

use super::{Arity, Builtin, Entry, Kernel, Nulls, ScalarFunction, ScalarRef};
use crate::expr::ExprError;

pub(super) fn entries() -> Vec<Entry> {
    vec![
        Entry { names: &["IS TRUE"], make: || ScalarRef::new(IS_TRUE) },
        Entry { names: &["IS NOT TRUE"], make: || ScalarRef::new(IS_NOT_TRUE) },
        Entry { names: &["IS FALSE"], make: || ScalarRef::new(IS_FALSE) },
        Entry { names: &["IS NOT FALSE"], make: || ScalarRef::new(IS_NOT_FALSE) },
    ]
}

/// Checks that the operand of the postfix test `test` (`IS TRUE`, `IS UNKNOWN`, …) is a BOOLEAN.
///
/// # Errors
/// Flink's message, the operand before the test.
pub fn expect_boolean(test: &str, operand: &DataType) -> Result<(), ExprError> {
    if operand.logical == LogicalType::Boolean {
        return Ok(());
    }
    Err(ExprError(format!(
        "Cannot apply '{test}' to arguments of type '<{}> {test}'. Supported form(s): '<BOOLEAN> {test}'",
        crate::expr::types::calcite_name(&operand.logical)
    )))
}

/// The type rule of every test: a BOOLEAN operand, a BOOLEAN result that is never NULL.
fn boolean_argument(f: &Builtin, types: &[&DataType]) -> Result<DataType, ExprError> {
    expect_boolean(f.name(), types[0])?;
    Ok(DataType::boolean().not_null())
}

/// Whether `value` (a BOOLEAN or NULL) is `wanted`, or with `negated`, is not.
fn passes(wanted: bool, negated: bool, value: &Value) -> bool {
    (value.as_bool() == Some(wanted)) != negated
}

/// The same test over a BOOLEAN column: a column without NULLs.
fn column(wanted: bool, negated: bool, args: &[ArrayRef]) -> Option<ArrayRef> {
    let input = args[0].as_boolean_opt()?;
    let valid = match input.nulls() {
        Some(nulls) => nulls.inner().clone(),
        None => BooleanBuffer::new_set(input.len()),
    };
    let hit = if wanted { &valid & input.values() } else { &valid & &!input.values() };
    let result = if negated { !&hit } else { hit };
    Some(Arc::new(BooleanArray::new(result, None)))
}

macro_rules! truth_test {
    ($constant:ident, $name:literal, $wanted:literal, $negated:literal) => {
        #[doc = concat!("`x ", $name, "`")]
        pub const $constant: Builtin = Builtin::new($name, Arity::exactly(1), boolean_argument, |args, _| {
            Ok(Value::Boolean(passes($wanted, $negated, &args[0])))
        })
        .with_nulls(Nulls::Own)
        .postfix()
        .with_kernel(Kernel {
            accepts: |types| types[0].logical == LogicalType::Boolean,
            eval: |args, _| column($wanted, $negated, args),
        });
    };
}

truth_test!(IS_TRUE, "IS TRUE", true, false);
truth_test!(IS_NOT_TRUE, "IS NOT TRUE", true, true);
truth_test!(IS_FALSE, "IS FALSE", false, false);
truth_test!(IS_NOT_FALSE, "IS NOT FALSE", false, true);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_test_gives_sqls_truth_table_by_row_and_by_column() {
        let inputs = [Value::Boolean(true), Value::Boolean(false), Value::Null];
        let expected: [(Builtin, [bool; 3]); 4] = [
            (IS_TRUE, [true, false, false]),
            (IS_NOT_TRUE, [false, true, true]),
            (IS_FALSE, [false, true, false]),
            (IS_NOT_FALSE, [true, false, true]),
        ];
        let column: ArrayRef = Arc::new(BooleanArray::from(vec![Some(true), Some(false), None]));
        for (f, truth) in expected {
            let rows: Vec<bool> = inputs
                .iter()
                .map(|v| f.eval(std::slice::from_ref(v), &DataType::boolean()).unwrap() == Value::Boolean(true))
                .collect();
            assert_eq!(rows, truth, "{} by row", f.name());
            let out = f.eval_columns(std::slice::from_ref(&column), &DataType::boolean()).unwrap();
            let out = out.as_boolean();
            assert_eq!(out.null_count(), 0);
            assert_eq!(out.iter().map(Option::unwrap_or_default).collect::<Vec<_>>(), truth, "{} by column", f.name());
        }
    }
}
