//! Functions Flink scripts register by Java class (`CREATE FUNCTION name AS 'class'`) that weir
//! implements natively. weir runs no JVM, so a class is usable only when it is listed here; its
//! implementation follows the class's `eval` exactly, including what it does with NULLs.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, Int64Array};
use weir_runtime::{DataType, Value};

use super::{expect, text, Arity, Nulls, ScalarFunction, ScalarRef};
use crate::expr::types::is_string;
use crate::expr::ExprError;

const COUNT_CHAR: &str = "com.github.nexmark.flink.udf.CountChar";

/// The classes weir implements and how to make each as the function called `name`, in the
/// order messages list them.
const CLASSES: &[(&str, fn(&str) -> ScalarRef)] =
    &[(COUNT_CHAR, |name| ScalarRef::new(CountChar { name: name.to_string() }))];

/// The names of the classes weir implements.
pub fn java_classes() -> impl Iterator<Item = &'static str> {
    CLASSES.iter().map(|(class, _)| *class)
}

/// The function `name` implemented by Java class `class`, if weir has the class.
pub fn java_class(class: &str, name: &str) -> Option<ScalarRef> {
    CLASSES.iter().find(|(c, _)| *c == class).map(|(_, make)| make(name))
}

/// The Nexmark benchmark's `CountChar` (q14): how many bytes of the UTF-8 text `s` equal the
/// first byte of `character`; 0 for a NULL `s`. A NULL or empty `character` fails, as the
/// class does (it reads the first byte unchecked).
#[derive(Debug)]
struct CountChar {
    name: String,
}

impl ScalarFunction for CountChar {
    fn name(&self) -> &str {
        &self.name
    }

    fn arity(&self) -> Arity {
        Arity::exactly(2)
    }

    fn return_type(&self, types: &[&DataType]) -> Result<DataType, ExprError> {
        expect(types.iter().all(|t| is_string(t)), self, types, "<STRING>, <STRING>")?;
        Ok(DataType::bigint().not_null())
    }

    fn nulls(&self) -> Nulls {
        Nulls::Own
    }

    fn eval(&self, args: &[Value], _: &DataType) -> Result<Value, ExprError> {
        let Some(character) = args[1].as_str().and_then(|c| c.as_bytes().first().copied()) else {
            return Err(ExprError(format!(
                "{} ({COUNT_CHAR}) failed: the character to count is NULL or empty",
                self.name
            )));
        };
        let count = match &args[0] {
            Value::Null => 0,
            s => text(s).bytes().filter(|b| *b == character).count(),
        };
        Ok(Value::BigInt(count as i64))
    }

    fn has_kernel(&self, _args: &[&DataType]) -> bool {
        true
    }

    /// Counted column by column; a NULL or empty character anywhere leaves the chunk to the row
    /// path, which fails on it.
    fn eval_columns(&self, args: &[ArrayRef], _: &DataType) -> Option<ArrayRef> {
        let (strings, characters) = (args[0].as_string_opt::<i32>()?, args[1].as_string_opt::<i32>()?);
        let counts: Option<Vec<i64>> = (0..strings.len())
            .map(|i| {
                let character = characters.is_valid(i).then(|| characters.value(i).as_bytes().first().copied())??;
                let text = if strings.is_valid(i) { strings.value(i) } else { "" };
                Some(text.bytes().filter(|b| *b == character).count() as i64)
            })
            .collect();
        Some(Arc::new(Int64Array::from(counts?)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_char_counts_bytes_as_the_class_does() {
        let f = java_class(COUNT_CHAR, "count_char").unwrap();
        let ty = DataType::bigint();
        let eval = |s: Value, c: Value| f.0.eval(&[s, c], &ty);
        assert_eq!(eval(Value::string("abcabc"), Value::string("c")).unwrap(), Value::BigInt(2));
        assert_eq!(eval(Value::string("xyz"), Value::string("cb")).unwrap(), Value::BigInt(0));
        assert_eq!(eval(Value::Null, Value::string("c")).unwrap(), Value::BigInt(0));
        assert!(eval(Value::string("c"), Value::Null).is_err());
        let strings: ArrayRef = Arc::new(arrow_array::StringArray::from(vec![Some("abcabc"), None, Some("xyz")]));
        let c: ArrayRef = Arc::new(arrow_array::StringArray::from(vec!["c", "c", "cb"]));
        let counts = f.0.eval_columns(&[Arc::clone(&strings), c], &ty).unwrap();
        assert_eq!(counts.as_primitive::<arrow_array::types::Int64Type>().values().to_vec(), vec![2, 0, 0]);
        let empty: ArrayRef = Arc::new(arrow_array::StringArray::from(vec!["c", "", "c"]));
        assert!(f.0.eval_columns(&[strings, empty], &ty).is_none(), "the row path reports the empty character");
        assert!(eval(Value::string("c"), Value::string("")).is_err());
        assert_eq!(f.0.name(), "count_char");
        assert!(java_class("com.example.Missing", "f").is_none());
    }
}
