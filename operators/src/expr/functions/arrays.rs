//! Collection functions with Flink's semantics: ARRAY_CONTAINS, ARRAY_DISTINCT, ARRAY_POSITION,
//! ARRAY_REMOVE, ARRAY_REVERSE, ARRAY_SLICE, ARRAY_SORT, ARRAY_MAX, ARRAY_MIN, ARRAY_APPEND,
//! ARRAY_PREPEND, ARRAY_CONCAT, ARRAY_UNION, ARRAY_EXCEPT, ARRAY_INTERSECT, ARRAY_JOIN and
//! MAP_KEYS, MAP_VALUES, MAP_ENTRIES, MAP_FROM_ARRAYS, MAP_UNION.
//!
//! Elements compare by value across numeric types (`ARRAY[1, 2]` contains `CAST(2 AS BIGINT)`);
//! NULL elements equal each other where Flink's `equals` makes them so (DISTINCT, REMOVE,
//! POSITION, CONTAINS).

use std::cmp::Ordering;
use std::sync::Arc;

use weir_runtime::types::{Field, LogicalType};
use weir_runtime::{DataType, Value};

use super::{nullable_if_any, string, text, Arity, Builtin, Entry, Nulls, ScalarRef};
use crate::expr::types::{is_integer, is_string};
use crate::expr::{compare, ExprError};

pub(super) fn entries() -> Vec<Entry> {
    vec![
        Entry { names: &["ARRAY_CONTAINS"], make: || ScalarRef::new(ARRAY_CONTAINS) },
        Entry { names: &["ARRAY_DISTINCT"], make: || ScalarRef::new(ARRAY_DISTINCT) },
        Entry { names: &["ARRAY_POSITION"], make: || ScalarRef::new(ARRAY_POSITION) },
        Entry { names: &["ARRAY_REMOVE"], make: || ScalarRef::new(ARRAY_REMOVE) },
        Entry { names: &["ARRAY_REVERSE"], make: || ScalarRef::new(ARRAY_REVERSE) },
        Entry { names: &["ARRAY_SLICE"], make: || ScalarRef::new(ARRAY_SLICE) },
        Entry { names: &["ARRAY_SORT"], make: || ScalarRef::new(ARRAY_SORT) },
        Entry { names: &["ARRAY_MAX"], make: || ScalarRef::new(ARRAY_MAX) },
        Entry { names: &["ARRAY_MIN"], make: || ScalarRef::new(ARRAY_MIN) },
        Entry { names: &["ARRAY_APPEND"], make: || ScalarRef::new(ARRAY_APPEND) },
        Entry { names: &["ARRAY_PREPEND"], make: || ScalarRef::new(ARRAY_PREPEND) },
        Entry { names: &["ARRAY_CONCAT"], make: || ScalarRef::new(ARRAY_CONCAT) },
        Entry { names: &["ARRAY_UNION"], make: || ScalarRef::new(ARRAY_UNION) },
        Entry { names: &["ARRAY_EXCEPT"], make: || ScalarRef::new(ARRAY_EXCEPT) },
        Entry { names: &["ARRAY_INTERSECT"], make: || ScalarRef::new(ARRAY_INTERSECT) },
        Entry { names: &["ARRAY_JOIN"], make: || ScalarRef::new(ARRAY_JOIN) },
        Entry { names: &["MAP_KEYS"], make: || ScalarRef::new(MAP_KEYS) },
        Entry { names: &["MAP_VALUES"], make: || ScalarRef::new(MAP_VALUES) },
        Entry { names: &["MAP_ENTRIES"], make: || ScalarRef::new(MAP_ENTRIES) },
        Entry { names: &["MAP_FROM_ARRAYS"], make: || ScalarRef::new(MAP_FROM_ARRAYS) },
        Entry { names: &["MAP_UNION"], make: || ScalarRef::new(MAP_UNION) },
    ]
}

/// The element type of an ARRAY type.
fn element_of(ty: &DataType) -> Option<&DataType> {
    match &ty.logical {
        LogicalType::Array(element) => Some(element),
        _ => None,
    }
}

fn array_type(element: DataType) -> DataType {
    DataType::new(LogicalType::Array(Box::new(element)))
}

/// Whether two elements are equal as Flink's `equals` sees them: NULL equals NULL, numbers by value.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Null, _) | (_, Value::Null) => false,
        _ => compare(a, b) == Some(Ordering::Equal),
    }
}

/// The elements of an ARRAY argument.
fn items(v: &Value) -> &[Value] {
    match v {
        Value::Array(items) => items,
        _ => &[],
    }
}

/// The entries of a MAP argument.
fn entries_of(v: &Value) -> &[(Value, Value)] {
    match v {
        Value::Map(entries) => entries,
        _ => &[],
    }
}

/// `f(array)` giving the same ARRAY type.
fn same_array(f: &Builtin, types: &[&DataType]) -> Result<DataType, ExprError> {
    f.expect(element_of(types[0]).is_some(), types, "<ARRAY>")?;
    Ok(types[0].clone())
}

/// `f(array, element)`: the element must compare with the array's elements.
fn array_and_element(f: &Builtin, types: &[&DataType], result: DataType) -> Result<DataType, ExprError> {
    f.expect(element_of(types[0]).is_some(), types, "<ARRAY>, <COMMON>")?;
    let mut result = result;
    result.nullable = types[0].nullable;
    Ok(result)
}

/// `ARRAY_CONTAINS(array, element)`
pub const ARRAY_CONTAINS: Builtin = Builtin::new(
    "ARRAY_CONTAINS",
    Arity::exactly(2),
    |f, types| array_and_element(f, types, DataType::boolean()),
    |args, _| {
        if matches!(args[0], Value::Null) {
            return Ok(Value::Null);
        }
        Ok(Value::Boolean(items(&args[0]).iter().any(|e| same(e, &args[1]))))
    },
)
.with_nulls(Nulls::Own);

/// `ARRAY_POSITION(array, element)`: the 1-based position of the first equal element, 0 for
/// none; NULL for a NULL element.
pub const ARRAY_POSITION: Builtin = Builtin::new(
    "ARRAY_POSITION",
    Arity::exactly(2),
    |f, types| array_and_element(f, types, DataType::int()),
    |args, _| Ok(Value::Int(items(&args[0]).iter().position(|e| same(e, &args[1])).map_or(0, |p| p as i32 + 1))),
);

/// `ARRAY_REMOVE(array, element)`: the array without the elements equal to `element`.
pub const ARRAY_REMOVE: Builtin = Builtin::new(
    "ARRAY_REMOVE",
    Arity::exactly(2),
    |f, types| array_and_element(f, types, types[0].clone()),
    |args, _| {
        if matches!(args[0], Value::Null) {
            return Ok(Value::Null);
        }
        Ok(Value::Array(items(&args[0]).iter().filter(|e| !same(e, &args[1])).cloned().collect()))
    },
)
.with_nulls(Nulls::Own);

/// `ARRAY_DISTINCT(array)`: the first of each group of equal elements, in order.
pub const ARRAY_DISTINCT: Builtin = Builtin::new("ARRAY_DISTINCT", Arity::exactly(1), same_array, |args, _| {
    Ok(Value::Array(distinct(items(&args[0]).iter()).into()))
});

fn distinct<'a>(values: impl Iterator<Item = &'a Value>) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for v in values {
        if !out.iter().any(|o| same(o, v)) {
            out.push(v.clone());
        }
    }
    out
}

/// `ARRAY_REVERSE(array)`
pub const ARRAY_REVERSE: Builtin = Builtin::new("ARRAY_REVERSE", Arity::exactly(1), same_array, |args, _| {
    Ok(Value::Array(items(&args[0]).iter().rev().cloned().collect()))
});

/// `ARRAY_SLICE(array, start[, end])`: elements `start` to `end` (1-based, inclusive; negative
/// counts from the end, 0 is the first), an empty array when the range holds none.
pub const ARRAY_SLICE: Builtin = Builtin::new(
    "ARRAY_SLICE",
    Arity::between(2, 3),
    |f, types| {
        let ok = element_of(types[0]).is_some() && types[1..].iter().all(|t| is_integer(t));
        f.expect(ok, types, "<ARRAY>, <INTEGER>[, <INTEGER>]")?;
        Ok(nullable_if_any(types[0].clone(), types))
    },
    |args, _| {
        let all = items(&args[0]);
        let n = all.len() as i64;
        let at = |i: i64| {
            if i < 0 {
                n + i + 1
            } else if i == 0 {
                1
            } else {
                i
            }
        };
        let start = at(args[1].as_i64().unwrap_or(1)).max(1);
        let end = at(args.get(2).map_or(n, |e| e.as_i64().unwrap_or(n))).min(n);
        if start > end {
            return Ok(Value::Array(Arc::from([])));
        }
        Ok(Value::Array(all[(start - 1) as usize..end as usize].iter().cloned().collect()))
    },
);

/// `ARRAY_SORT(array[, ascending[, nulls_first]])`: ascending with NULLs first by default;
/// descending puts NULLs last unless told.
pub const ARRAY_SORT: Builtin = Builtin::new(
    "ARRAY_SORT",
    Arity::between(1, 3),
    |f, types| {
        let ok = element_of(types[0]).is_some() && types[1..].iter().all(|t| matches!(t.logical, LogicalType::Boolean));
        f.expect(ok, types, "<ARRAY>[, <BOOLEAN>[, <BOOLEAN>]]")?;
        Ok(nullable_if_any(types[0].clone(), types))
    },
    |args, _| {
        let ascending = args.get(1).is_none_or(|a| matches!(a, Value::Boolean(true)));
        let nulls_first = args.get(2).map_or(ascending, |n| matches!(n, Value::Boolean(true)));
        let mut sorted: Vec<Value> = items(&args[0]).to_vec();
        sorted.sort_by(|a, b| match (a, b) {
            (Value::Null, Value::Null) => Ordering::Equal,
            (Value::Null, _) => {
                if nulls_first {
                    Ordering::Less
                } else {
                    Ordering::Greater
                }
            }
            (_, Value::Null) => {
                if nulls_first {
                    Ordering::Greater
                } else {
                    Ordering::Less
                }
            }
            _ => {
                let order = compare(a, b).unwrap_or(Ordering::Equal);
                if ascending {
                    order
                } else {
                    order.reverse()
                }
            }
        });
        Ok(Value::Array(sorted.into()))
    },
);

/// `ARRAY_MAX` / `ARRAY_MIN`: the element's type, nullable.
fn extreme_type(f: &Builtin, types: &[&DataType]) -> Result<DataType, ExprError> {
    f.expect(element_of(types[0]).is_some(), types, "<ARRAY>")?;
    let mut element = element_of(types[0]).cloned().unwrap_or_else(DataType::string);
    element.nullable = true;
    Ok(element)
}

/// The greatest (or least) non-NULL element, NULL for none.
fn extreme(args: &[Value], greatest: bool) -> Value {
    let mut best: Option<&Value> = None;
    for e in items(&args[0]).iter().filter(|e| !matches!(e, Value::Null)) {
        let better = best.is_none_or(|b| {
            let order = compare(e, b).unwrap_or(Ordering::Equal);
            if greatest {
                order == Ordering::Greater
            } else {
                order == Ordering::Less
            }
        });
        if better {
            best = Some(e);
        }
    }
    best.cloned().unwrap_or(Value::Null)
}

/// `ARRAY_MAX(array)`
pub const ARRAY_MAX: Builtin =
    Builtin::new("ARRAY_MAX", Arity::exactly(1), extreme_type, |args, _| Ok(extreme(args, true)));

/// `ARRAY_MIN(array)`
pub const ARRAY_MIN: Builtin =
    Builtin::new("ARRAY_MIN", Arity::exactly(1), extreme_type, |args, _| Ok(extreme(args, false)));

/// `ARRAY_APPEND(array, element)`
pub const ARRAY_APPEND: Builtin = Builtin::new(
    "ARRAY_APPEND",
    Arity::exactly(2),
    |f, types| array_and_element(f, types, with_element(types)),
    |args, _| {
        if matches!(args[0], Value::Null) {
            return Ok(Value::Null);
        }
        Ok(Value::Array(items(&args[0]).iter().chain([&args[1]]).cloned().collect()))
    },
)
.with_nulls(Nulls::Own);

/// `ARRAY_PREPEND(array, element)`
pub const ARRAY_PREPEND: Builtin = Builtin::new(
    "ARRAY_PREPEND",
    Arity::exactly(2),
    |f, types| array_and_element(f, types, with_element(types)),
    |args, _| {
        if matches!(args[0], Value::Null) {
            return Ok(Value::Null);
        }
        Ok(Value::Array([&args[1]].into_iter().chain(items(&args[0])).cloned().collect()))
    },
)
.with_nulls(Nulls::Own);

/// The ARRAY type of `types[0]` whose elements may also be `types[1]`'s values.
fn with_element(types: &[&DataType]) -> DataType {
    let mut element = element_of(types[0]).cloned().unwrap_or_else(DataType::string);
    element.nullable |= types[1].nullable;
    array_type(element)
}

/// The ARRAY type of two ARRAY arguments, its elements nullable when either's are.
fn two_arrays(f: &Builtin, types: &[&DataType]) -> Result<DataType, ExprError> {
    let ok = types.iter().all(|t| element_of(t).is_some());
    f.expect(ok, types, &vec!["<ARRAY>"; types.len()].join(", "))?;
    let mut element = element_of(types[0]).cloned().unwrap_or_else(DataType::string);
    element.nullable = types.iter().any(|t| element_of(t).is_some_and(|e| e.nullable));
    Ok(nullable_if_any(array_type(element), types))
}

/// `ARRAY_CONCAT(a, b, …)`: the elements of all, in order.
pub const ARRAY_CONCAT: Builtin = Builtin::new("ARRAY_CONCAT", Arity::at_least(1), two_arrays, |args, _| {
    Ok(Value::Array(args.iter().flat_map(|a| items(a).iter().cloned()).collect()))
});

/// `ARRAY_UNION(a, b)`: the distinct elements of both, in order.
pub const ARRAY_UNION: Builtin = Builtin::new("ARRAY_UNION", Arity::exactly(2), two_arrays, |args, _| {
    Ok(Value::Array(distinct(items(&args[0]).iter().chain(items(&args[1]))).into()))
});

/// `ARRAY_EXCEPT(a, b)`: the distinct elements of `a` that are not in `b`, in order.
pub const ARRAY_EXCEPT: Builtin = Builtin::new("ARRAY_EXCEPT", Arity::exactly(2), two_arrays, |args, _| {
    let b = items(&args[1]);
    Ok(Value::Array(distinct(items(&args[0]).iter().filter(|e| !b.iter().any(|x| same(x, e)))).into()))
});

/// `ARRAY_INTERSECT(a, b)`: the elements of `a` also in `b`, each as often as both hold it, in order.
pub const ARRAY_INTERSECT: Builtin = Builtin::new("ARRAY_INTERSECT", Arity::exactly(2), two_arrays, |args, _| {
    Ok(Value::Array(multiset_intersection(items(&args[0]), items(&args[1])).into()))
});

/// The elements of `a` that match an unused element of `b`, each taking one.
fn multiset_intersection(a: &[Value], b: &[Value]) -> Vec<Value> {
    let mut unused: Vec<&Value> = b.iter().collect();
    let mut out = Vec::new();
    for e in a {
        if let Some(i) = unused.iter().position(|u| same(u, e)) {
            unused.remove(i);
            out.push(e.clone());
        }
    }
    out
}

/// `ARRAY_JOIN(array, delimiter[, null_replacement])`: the elements as text between delimiters,
/// NULL elements left out unless replaced.
pub const ARRAY_JOIN: Builtin = Builtin::new(
    "ARRAY_JOIN",
    Arity::between(2, 3),
    |f, types| {
        let ok = element_of(types[0]).is_some_and(is_string) && types[1..].iter().all(|t| is_string(t));
        f.expect(ok, types, "ARRAY<STRING>, <CHARACTER>[, <CHARACTER>]")?;
        Ok(nullable_if_any(DataType::string(), &types[..2]))
    },
    |args, _| {
        if matches!(args[0], Value::Null) || matches!(args[1], Value::Null) {
            return Ok(Value::Null);
        }
        let replacement = args.get(2).and_then(Value::as_str);
        let parts: Vec<&str> = items(&args[0])
            .iter()
            .filter_map(|e| match e {
                Value::Null => replacement,
                other => Some(text(other)),
            })
            .collect();
        Ok(string(parts.join(text(&args[1]))))
    },
)
.with_nulls(Nulls::Own);

/// The key and value types of a MAP type.
fn map_types(ty: &DataType) -> Option<(&DataType, &DataType)> {
    match &ty.logical {
        LogicalType::Map(k, v) => Some((k, v)),
        _ => None,
    }
}

/// `MAP_KEYS(map)`
pub const MAP_KEYS: Builtin = Builtin::new(
    "MAP_KEYS",
    Arity::exactly(1),
    |f, types| {
        f.expect(map_types(types[0]).is_some(), types, "<MAP>")?;
        let key = map_types(types[0]).map(|(k, _)| k.clone()).unwrap_or_else(DataType::string);
        Ok(nullable_if_any(array_type(key), types))
    },
    |args, _| Ok(Value::Array(entries_of(&args[0]).iter().map(|(k, _)| k.clone()).collect())),
);

/// `MAP_VALUES(map)`
pub const MAP_VALUES: Builtin = Builtin::new(
    "MAP_VALUES",
    Arity::exactly(1),
    |f, types| {
        f.expect(map_types(types[0]).is_some(), types, "<MAP>")?;
        let value = map_types(types[0]).map(|(_, v)| v.clone()).unwrap_or_else(DataType::string);
        Ok(nullable_if_any(array_type(value), types))
    },
    |args, _| Ok(Value::Array(entries_of(&args[0]).iter().map(|(_, v)| v.clone()).collect())),
);

/// `MAP_ENTRIES(map)`: an array of `ROW<key, value>`.
pub const MAP_ENTRIES: Builtin = Builtin::new(
    "MAP_ENTRIES",
    Arity::exactly(1),
    |f, types| {
        f.expect(map_types(types[0]).is_some(), types, "<MAP>")?;
        let (k, v) =
            map_types(types[0]).map_or((DataType::string(), DataType::string()), |(k, v)| (k.clone(), v.clone()));
        let row = LogicalType::Row(vec![Field::new("key", k), Field::new("value", v)]);
        Ok(nullable_if_any(array_type(DataType::new(row).not_null()), types))
    },
    |args, _| {
        Ok(Value::Array(
            entries_of(&args[0]).iter().map(|(k, v)| Value::Row(Arc::from([k.clone(), v.clone()]))).collect(),
        ))
    },
);

/// `MAP_FROM_ARRAYS(keys, values)`: the pairs at equal positions, a repeated key kept as
/// Flink keeps it; arrays of different lengths fail.
pub const MAP_FROM_ARRAYS: Builtin = Builtin::new(
    "MAP_FROM_ARRAYS",
    Arity::exactly(2),
    |f, types| {
        f.expect(types.iter().all(|t| element_of(t).is_some()), types, "<ARRAY>, <ARRAY>")?;
        let key = element_of(types[0]).cloned().unwrap_or_else(DataType::string);
        let value = element_of(types[1]).cloned().unwrap_or_else(DataType::string);
        Ok(nullable_if_any(DataType::new(LogicalType::Map(Box::new(key), Box::new(value))), types))
    },
    |args, _| {
        let (keys, values) = (items(&args[0]), items(&args[1]));
        if keys.len() != values.len() {
            return Err(ExprError(format!(
                "Invalid function MAP_FROM_ARRAYS call:\nThe length of the keys array {} is not equal to the length of \
                 the values array {}",
                keys.len(),
                values.len()
            )));
        }
        Ok(Value::Map(keys.iter().cloned().zip(values.iter().cloned()).collect()))
    },
);

/// `entries` with `pairs` put in: a key already there takes the new value in its place.
fn insert_all(mut entries: Vec<(Value, Value)>, pairs: impl Iterator<Item = (Value, Value)>) -> Vec<(Value, Value)> {
    for (k, v) in pairs {
        match entries.iter_mut().find(|(key, _)| same(key, &k)) {
            Some(entry) => entry.1 = v,
            None => entries.push((k, v)),
        }
    }
    entries
}

/// `MAP_UNION(a, b, …)`: the entries of all, a later map's value winning for a shared key;
/// NULL when any map is NULL.
pub const MAP_UNION: Builtin = Builtin::new(
    "MAP_UNION",
    Arity::at_least(1),
    |f, types| {
        f.expect(types.iter().all(|t| map_types(t).is_some()), types, "<MAP>, <MAP>, …")?;
        Ok(nullable_if_any(types[0].clone(), types))
    },
    |args, _| {
        let merged = args.iter().fold(Vec::new(), |acc, m| insert_all(acc, entries_of(m).iter().cloned()));
        Ok(Value::Map(merged.into()))
    },
);
