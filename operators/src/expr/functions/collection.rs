//! Functions on ARRAY, MAP and ROW values: the constructors (`ARRAY[…]`, `MAP[…]`, `ROW(…)`),
//! `CARDINALITY`, `ELEMENT`, the subscript `ITEM` (`tags[1]`, `attrs['k']`) and field access
//! (`meta.device`).

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef};
use arrow_buffer::NullBuffer;
use weir_runtime::types::{Field, LogicalType};
use weir_runtime::{DataType, Value};

use super::{nullable_if_any, wrong_types, Arity, Builtin, Entry, Nulls, ScalarFunction, ScalarRef};
use crate::expr::types::is_integer;
use crate::expr::ExprError;

pub(super) fn entries() -> Vec<Entry> {
    vec![
        Entry { names: &["CARDINALITY"], make: || ScalarRef::new(CARDINALITY) },
        Entry { names: &["ELEMENT"], make: || ScalarRef::new(ELEMENT) },
        Entry { names: &["ITEM"], make: || ScalarRef::new(ITEM) },
        Entry { names: &["ROW"], make: || ScalarRef::new(ROW) },
        // The bracket constructors, under names a call cannot have: `ARRAY(1, 2)` and `MAP(…)`
        // are no functions in Flink.
        Entry { names: &[ARRAY_CONSTRUCTOR], make: || ScalarRef::new(ARRAY) },
        Entry { names: &[MAP_CONSTRUCTOR], make: || ScalarRef::new(MAP) },
    ]
}

/// The registry name of `ARRAY[…]` (the parser's call for the brackets).
pub const ARRAY_CONSTRUCTOR: &str = "$ARRAY";
/// The registry name of `MAP[…]` (the parser's call for the brackets).
pub const MAP_CONSTRUCTOR: &str = "$MAP";

/// The type of elements `types` share (the binder casts them to one type first), nullable
/// when any is.
fn element_type(types: &[&DataType]) -> DataType {
    let mut element = types[0].clone();
    element.nullable = types.iter().any(|t| t.nullable);
    element
}

/// `ARRAY[a, b, …]`: an array of the values, which the binder gives one type.
pub const ARRAY: Builtin = Builtin::new(
    "ARRAY",
    Arity::at_least(1),
    |_, types| Ok(DataType::new(LogicalType::Array(Box::new(element_type(types)))).not_null()),
    |args, _| Ok(Value::Array(args.into())),
)
.with_nulls(Nulls::Own);

/// `MAP[k1, v1, k2, v2, …]`: a map of the pairs (a later key replaces an earlier one, as in
/// Flink), keys and values each of one type.
pub const MAP: Builtin = Builtin::new(
    "MAP",
    Arity::at_least(2),
    |f, types| {
        f.expect(types.len() % 2 == 0, types, "<KEY>, <VALUE>, …")?;
        let keys: Vec<&DataType> = types.iter().step_by(2).copied().collect();
        let values: Vec<&DataType> = types.iter().skip(1).step_by(2).copied().collect();
        let map = LogicalType::Map(Box::new(element_type(&keys)), Box::new(element_type(&values)));
        Ok(DataType::new(map).not_null())
    },
    |args, _| {
        let mut entries: Vec<(Value, Value)> = Vec::with_capacity(args.len() / 2);
        for pair in args.chunks(2) {
            match entries.iter_mut().find(|(k, _)| *k == pair[0]) {
                Some(entry) => entry.1 = pair[1].clone(),
                None => entries.push((pair[0].clone(), pair[1].clone())),
            }
        }
        Ok(Value::Map(entries.into()))
    },
)
.with_nulls(Nulls::Own);

/// `ROW(a, b, …)`: a row of the values, its fields named `EXPR$0`, `EXPR$1`, … as in Flink.
pub const ROW: Builtin = Builtin::new(
    "ROW",
    Arity::at_least(1),
    |_, types| {
        let fields = types.iter().enumerate().map(|(i, t)| Field::new(format!("EXPR${i}"), (*t).clone())).collect();
        Ok(DataType::new(LogicalType::Row(fields)).not_null())
    },
    |args, _| Ok(Value::Row(args.into())),
)
.with_nulls(Nulls::Own);

/// The call `ROW(args…)` over bound arguments (JSON_OBJECTAGG's key and value travel as one).
pub fn row_of(args: Vec<crate::expr::Expr>) -> crate::expr::Expr {
    let fields = args.iter().enumerate().map(|(i, a)| Field::new(format!("EXPR${i}"), a.ty().clone())).collect();
    let ty = DataType::new(LogicalType::Row(fields)).not_null();
    crate::expr::Expr::Call { function: crate::expr::Function::Scalar(ScalarRef::new(ROW)), args, ty }
}

/// `CARDINALITY(array | map)`: the number of elements or entries.
pub const CARDINALITY: Builtin = Builtin::new(
    "CARDINALITY",
    Arity::exactly(1),
    |f, types| {
        let collection = matches!(types[0].logical, LogicalType::Array(_) | LogicalType::Map(..));
        f.expect(collection, types, "<MULTISET>'\n'CARDINALITY(<ARRAY>)'\n'CARDINALITY(<MAP>)")?;
        Ok(nullable_if_any(DataType::int(), types))
    },
    |args, _| match &args[0] {
        Value::Array(items) => Ok(Value::Int(items.len() as i32)),
        Value::Map(entries) => Ok(Value::Int(entries.len() as i32)),
        other => Err(ExprError(format!("CARDINALITY of {other:?}"))),
    },
);

/// `ELEMENT(array)`: the only element of an array of one, NULL for an empty one; more than one
/// element is an error, as in Flink.
pub const ELEMENT: Builtin = Builtin::new(
    "ELEMENT",
    Arity::exactly(1),
    |f, types| match &types[0].logical {
        LogicalType::Array(element) => Ok(nullable(element)),
        _ => Err(wrong_types(f.name, types, "<ARRAY>")),
    },
    |args, _| match &args[0] {
        Value::Array(items) if items.len() > 1 => Err(ExprError("Array has more than one element.".into())),
        Value::Array(items) => Ok(items.first().cloned().unwrap_or(Value::Null)),
        other => Err(ExprError(format!("ELEMENT of {other:?}"))),
    },
);

/// `ITEM(array, i)` (`array[i]`, from 1) and `ITEM(map, key)` (`map[key]`): NULL when there is
/// no such element or key.
pub const ITEM: Builtin = Builtin::new(
    "ITEM",
    Arity::exactly(2),
    |f, types| match &types[0].logical {
        LogicalType::Array(element) if is_integer(types[1]) => Ok(nullable(element)),
        LogicalType::Map(key, value) if key.logical == types[1].logical || both_strings(key, types[1]) => {
            Ok(nullable(value))
        }
        _ => Err(wrong_types(f.name, types, "<ARRAY>, <INTEGER>'\n'ITEM(<MAP>, <ANY>)")),
    },
    |args, _| match &args[0] {
        Value::Array(items) => {
            let index = args[1].as_i64().unwrap_or(0);
            Ok(usize::try_from(index - 1).ok().and_then(|i| items.get(i)).cloned().unwrap_or(Value::Null))
        }
        Value::Map(entries) => Ok(entries.iter().find(|(k, _)| k == &args[1]).map_or(Value::Null, |(_, v)| v.clone())),
        other => Err(ExprError(format!("ITEM of {other:?}"))),
    },
);

/// `ty`, nullable: an element or value that may be missing.
fn nullable(ty: &DataType) -> DataType {
    let mut ty = ty.clone();
    ty.nullable = true;
    ty
}

fn both_strings(a: &DataType, b: &DataType) -> bool {
    let string = |t: &DataType| matches!(t.logical, LogicalType::Char(_) | LogicalType::Varchar(_));
    string(a) && string(b)
}

/// `row.field`: field `index` of a ROW value, NULL when the row is.
#[derive(Debug, Clone)]
pub struct FieldAccess {
    name: String,
    index: usize,
}

impl FieldAccess {
    /// Access to field `index`, called `name`, of a ROW.
    pub fn of(name: impl Into<String>, index: usize) -> ScalarRef {
        ScalarRef::new(FieldAccess { name: name.into(), index })
    }
}

impl ScalarFunction for FieldAccess {
    fn name(&self) -> &str {
        "DOT"
    }

    fn arity(&self) -> Arity {
        Arity::exactly(1)
    }

    fn return_type(&self, args: &[&DataType]) -> Result<DataType, ExprError> {
        match &args[0].logical {
            LogicalType::Row(fields) if self.index < fields.len() => {
                let mut ty = fields[self.index].data_type.clone();
                ty.nullable |= args[0].nullable;
                Ok(ty)
            }
            _ => Err(ExprError(format!("Field '{}' of a value that is not a ROW", self.name))),
        }
    }

    fn eval(&self, args: &[Value], _ty: &DataType) -> Result<Value, ExprError> {
        match &args[0] {
            Value::Row(values) => Ok(values.get(self.index).cloned().unwrap_or(Value::Null)),
            other => Err(ExprError(format!("field '{}' of {other:?}", self.name))),
        }
    }

    fn explain(&self, args: &[String], _infix: bool) -> String {
        format!("{}.{}", args[0], self.name)
    }

    fn field_index(&self) -> Option<usize> {
        Some(self.index)
    }

    fn has_kernel(&self, args: &[&DataType]) -> bool {
        matches!(&args[0].logical, LogicalType::Row(fields) if self.index < fields.len())
    }

    /// The field's child column, NULL also where the row is.
    fn eval_columns(&self, args: &[ArrayRef], _ty: &DataType) -> Option<ArrayRef> {
        let rows = args[0].as_struct_opt()?;
        let field = rows.columns().get(self.index)?;
        let nulls = NullBuffer::union(rows.nulls(), field.nulls());
        if nulls.as_ref().map(NullBuffer::null_count) == field.nulls().map(NullBuffer::null_count) {
            return Some(Arc::clone(field));
        }
        let data = field.to_data().into_builder().nulls(nulls).build().ok()?;
        Some(arrow_array::make_array(data))
    }
}

#[cfg(test)]
mod tests {
    use weir_runtime::columnar::{array_from_values, arrow_type, value_at};

    use super::*;

    /// The column kernel of `row.field` gives what the row path gives, NULL rows included.
    #[test]
    fn field_access_by_column_equals_by_row() {
        let ty = DataType::new(LogicalType::Row(vec![
            Field::new("a", DataType::bigint()),
            Field::new("b", DataType::string()),
        ]));
        let values = [
            Value::Row(vec![Value::BigInt(1), Value::string("x")].into()),
            Value::Null,
            Value::Row(vec![Value::Null, Value::string("y")].into()),
        ];
        let refs: Vec<&Value> = values.iter().collect();
        let column = array_from_values(&arrow_type(&ty), &refs).unwrap();
        for index in 0..2 {
            let f = FieldAccess::of("f", index);
            let out_ty = f.0.return_type(&[&ty]).unwrap();
            assert!(f.0.has_kernel(&[&ty]));
            let by_column = f.0.eval_columns(&[Arc::clone(&column)], &out_ty).unwrap();
            for (i, v) in values.iter().enumerate() {
                let by_row = match v {
                    Value::Null => Value::Null,
                    v => f.0.eval(std::slice::from_ref(v), &out_ty).unwrap(),
                };
                assert_eq!(value_at(by_column.as_ref(), i), by_row, "field {index} of row {i}");
            }
        }
    }
}
