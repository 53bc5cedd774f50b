//! String functions with Flink's semantics: UPPER, LOWER, INITCAP, SUBSTRING, CONCAT, CONCAT_WS,
//! CHAR_LENGTH, POSITION, LPAD, RPAD, REPLACE, SPLIT_INDEX and TRIM.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, StringArray};
use weir_runtime::{DataType, Value};

use super::{nullable_if_any, string, text, Arity, Builtin, Entry, Kernel, Nulls, ScalarFunction, ScalarRef};
use crate::expr::types::{is_integer, is_string, string_length};
use crate::expr::{text::to_text, ExprError, TrimSide};

pub(super) fn entries() -> Vec<Entry> {
    vec![
        Entry { names: &["UPPER"], make: || ScalarRef::new(UPPER) },
        Entry { names: &["LOWER"], make: || ScalarRef::new(LOWER) },
        Entry { names: &["INITCAP"], make: || ScalarRef::new(INITCAP) },
        Entry { names: &["SUBSTRING", "SUBSTR"], make: || ScalarRef::new(SUBSTRING) },
        Entry { names: &["CONCAT"], make: || ScalarRef::new(CONCAT) },
        Entry { names: &["||"], make: || ScalarRef::new(CONCAT_OPERATOR) },
        Entry { names: &["CONCAT_WS"], make: || ScalarRef::new(CONCAT_WS) },
        Entry { names: &["CHAR_LENGTH", "CHARACTER_LENGTH"], make: || ScalarRef::new(CHAR_LENGTH) },
        Entry { names: &["POSITION"], make: || ScalarRef::new(POSITION) },
        Entry { names: &["LPAD"], make: || ScalarRef::new(LPAD) },
        Entry { names: &["RPAD"], make: || ScalarRef::new(RPAD) },
        Entry { names: &["REPLACE"], make: || ScalarRef::new(REPLACE) },
        Entry { names: &["SPLIT_INDEX"], make: || ScalarRef::new(SPLIT_INDEX) },
    ]
}

/// The type rule of a function of one string that keeps its length (UPPER, LOWER, INITCAP):
/// the argument's type, as Flink types it.
fn string_of_string(f: &Builtin, types: &[&DataType]) -> Result<DataType, ExprError> {
    f.expect(is_string(types[0]), types, "<CHARACTER>")?;
    Ok(nullable_if_any(DataType::new(types[0].logical.clone()), types))
}

/// A `VARCHAR` as long as the string type `ty` (a part of a string is at most as long).
pub(super) fn varchar_as_long_as(ty: &DataType) -> DataType {
    let length = string_length(&ty.logical).unwrap_or(weir_runtime::types::MAX_LENGTH);
    DataType::new(weir_runtime::LogicalType::Varchar(length))
}

/// `UPPER(s)`
pub const UPPER: Builtin =
    Builtin::new("UPPER", Arity::exactly(1), string_of_string, |args, _| Ok(change_case(text(&args[0]), true)))
        .with_kernel(Kernel {
            accepts: |types| is_string(types[0]),
            eval: |args, _| change_case_column(&args[0], true),
        });

/// `LOWER(s)`
pub const LOWER: Builtin =
    Builtin::new("LOWER", Arity::exactly(1), string_of_string, |args, _| Ok(change_case(text(&args[0]), false)))
        .with_kernel(Kernel {
            accepts: |types| is_string(types[0]),
            eval: |args, _| change_case_column(&args[0], false),
        });

/// `INITCAP(s)`: the first letter of each alphanumeric word upper case, the rest lower case.
pub const INITCAP: Builtin =
    Builtin::new("INITCAP", Arity::exactly(1), string_of_string, |args, _| Ok(string(initcap(text(&args[0])))));

/// `SUBSTRING(s, start[, length])`, 1-based.
pub const SUBSTRING: Builtin = Builtin::new(
    "SUBSTRING",
    Arity::between(2, 3),
    |f, types| {
        let ok = is_string(types[0]) && types[1..].iter().all(|t| is_integer(t));
        f.expect(ok, types, "<CHARACTER>, <INTEGER>[, <INTEGER>]")?;
        // NULL for a start or length out of range, whatever the arguments.
        Ok(varchar_as_long_as(types[0]))
    },
    |args, _| {
        let length = args.get(2).and_then(Value::as_i64);
        Ok(substring(text(&args[0]), args[1].as_i64().unwrap_or(1), length).map_or(Value::Null, string))
    },
);

/// `CONCAT(a, b, …)`: NULL if any argument is NULL.
pub const CONCAT: Builtin = Builtin::new(
    "CONCAT",
    Arity::at_least(1),
    |_, types| Ok(nullable_if_any(DataType::string(), types)),
    |args, _| Ok(string(args.iter().map(|v| v.as_str().map_or_else(|| to_text(v), str::to_string)).collect())),
);

/// `a || b`: two character strings (or two byte strings) joined, NULL if either is NULL. Its
/// type is as long as both together, as in Flink: `CHAR(n + m)` of two CHARs, otherwise
/// `VARCHAR(n + m)` (`VARBINARY` for bytes) up to STRING.
pub const CONCAT_OPERATOR: Builtin = Builtin::new("||", Arity::exactly(2), concat_operator_type, |args, _| {
    Ok(match (&args[0], &args[1]) {
        (Value::Binary(a), Value::Binary(b)) => Value::Binary(a.iter().chain(b.iter()).copied().collect()),
        (a, b) => string(format!("{}{}", text(a), text(b))),
    })
});

fn concat_operator_type(_: &Builtin, types: &[&DataType]) -> Result<DataType, ExprError> {
    use weir_runtime::LogicalType::{Binary, Char, Varbinary, Varchar};
    let sum = |n: &u32, m: &u32| crate::expr::types::joined_length(*n, *m);
    let logical = match (&types[0].logical, &types[1].logical) {
        (Char(n), Char(m)) => Char(sum(n, m)),
        (Char(n) | Varchar(n), Char(m) | Varchar(m)) => Varchar(sum(n, m)),
        (Binary(n), Binary(m)) => Binary(sum(n, m)),
        (Binary(n) | Varbinary(n), Binary(m) | Varbinary(m)) => Varbinary(sum(n, m)),
        _ => {
            let name = |t: &DataType| crate::expr::types::calcite_name(&t.logical);
            return Err(ExprError(format!(
                "Cannot apply '||' to arguments of type '<{}> || <{}>'. Supported form(s): '<STRING> || <STRING>'\n'<EQUIVALENT_TYPE> || <EQUIVALENT_TYPE>'",
                name(types[0]),
                name(types[1])
            )));
        }
    };
    Ok(nullable_if_any(DataType::new(logical), types))
}

/// `CONCAT_WS(separator, a, b, …)`: NULL arguments after the separator are skipped.
pub const CONCAT_WS: Builtin = Builtin::new(
    "CONCAT_WS",
    Arity::at_least(1),
    |_, types| Ok(nullable_if_any(DataType::string(), &types[..1])),
    |args, _| {
        let Some(separator) = args[0].as_str() else { return Ok(Value::Null) };
        let parts: Vec<&str> = args[1..].iter().filter_map(Value::as_str).collect();
        Ok(string(parts.join(separator)))
    },
)
.with_nulls(Nulls::Own);

/// `CHAR_LENGTH(s)`: the number of characters.
pub const CHAR_LENGTH: Builtin = Builtin::new(
    "CHAR_LENGTH",
    Arity::exactly(1),
    |f, types| {
        f.expect(is_string(types[0]), types, "<CHARACTER>")?;
        Ok(nullable_if_any(DataType::int(), types))
    },
    |args, _| Ok(Value::Int(text(&args[0]).chars().count() as i32)),
);

/// `POSITION(needle IN s)`: the 1-based character position of the first match, 0 for none.
pub const POSITION: Builtin = Builtin::new(
    "POSITION",
    Arity::exactly(2),
    |f, types| {
        f.expect(types.iter().all(|t| is_string(t)), types, "<CHARACTER>, <CHARACTER>")?;
        Ok(nullable_if_any(DataType::int(), types))
    },
    |args, _| {
        let (needle, haystack) = (text(&args[0]), text(&args[1]));
        Ok(Value::Int(haystack.find(needle).map_or(0, |byte| haystack[..byte].chars().count() as i32 + 1)))
    },
);

fn pad_type(f: &Builtin, types: &[&DataType]) -> Result<DataType, ExprError> {
    // The length is an INT, as Flink's `lpad(String, int, String)` takes it: Flink cannot run
    // LPAD with a BIGINT length (its generated code does not compile), weir refuses it.
    let int_length = is_integer(types[1]) && !matches!(types[1].logical, weir_runtime::LogicalType::BigInt);
    let ok = is_string(types[0]) && int_length && is_string(types[2]);
    f.expect(ok, types, "<CHARACTER>, <INTEGER>, <CHARACTER>")?;
    Ok(nullable_if_any(DataType::string(), types))
}

/// The most characters LPAD and RPAD make: a longer result is an error, not an allocation
/// that ends the process.
pub const MAX_PADDED_LENGTH: usize = 64 << 20;

fn pad_value(args: &[Value], left: bool) -> Result<Value, ExprError> {
    let length = args[1].as_i64().unwrap_or(0);
    if usize::try_from(length).is_ok_and(|n| n > MAX_PADDED_LENGTH) {
        let name = if left { "LPAD" } else { "RPAD" };
        return Err(ExprError(format!(
            "{name} cannot make a string of {length} characters: weir's limit for a padded string is {MAX_PADDED_LENGTH} characters"
        )));
    }
    pad(text(&args[0]), length, text(&args[2]), left).map(string)
}

/// `LPAD(s, length, pad)`
pub const LPAD: Builtin = Builtin::new("LPAD", Arity::exactly(3), pad_type, |args, _| pad_value(args, true));

/// `RPAD(s, length, pad)`
pub const RPAD: Builtin = Builtin::new("RPAD", Arity::exactly(3), pad_type, |args, _| pad_value(args, false));

/// `REPLACE(s, search, replacement)`: every occurrence replaced.
pub const REPLACE: Builtin = Builtin::new(
    "REPLACE",
    Arity::exactly(3),
    |f, types| {
        f.expect(types.iter().all(|t| is_string(t)), types, "<CHARACTER>, <CHARACTER>, <CHARACTER>")?;
        Ok(nullable_if_any(DataType::string(), types))
    },
    |args, _| Ok(string(text(&args[0]).replace(text(&args[1]), text(&args[2])))),
);

/// `SPLIT_INDEX(s, delimiter, index)`: the 0-based part, NULL past the end or for an empty
/// delimiter.
pub const SPLIT_INDEX: Builtin = Builtin::new(
    "SPLIT_INDEX",
    Arity::exactly(3),
    |f, types| {
        let ok = is_string(types[0]) && is_string(types[1]) && is_integer(types[2]);
        f.expect(ok, types, "<CHARACTER>, <CHARACTER>, <INTEGER>")?;
        // NULL for an index past the parts, whatever the arguments.
        Ok(DataType::string())
    },
    |args, _| {
        let index = usize::try_from(args[2].as_i64().unwrap_or(-1)).ok().filter(|_| !text(&args[1]).is_empty());
        let part = index.and_then(|i| text(&args[0]).split(text(&args[1])).nth(i));
        Ok(part.map_or(Value::Null, |p| string(p.to_string())))
    },
)
.with_kernel(Kernel {
    accepts: |types| is_string(types[0]) && is_string(types[1]) && is_integer(types[2]),
    eval: |args, _| split_index_column(&args[0], &args[1], &args[2]),
});

/// SPLIT_INDEX over columns: each row's part copied straight into the result's buffer.
fn split_index_column(strings: &ArrayRef, delimiters: &ArrayRef, indices: &ArrayRef) -> Option<ArrayRef> {
    let (strings, delimiters) = (strings.as_string_opt::<i32>()?, delimiters.as_string_opt::<i32>()?);
    let indices = weir_runtime::columnar::IntColumn::of(indices.as_ref())?;
    let valid = |i: usize| indices.nulls.as_ref().is_none_or(|n| n.is_valid(i));
    let mut out = arrow_array::builder::StringBuilder::with_capacity(strings.len(), strings.values().len() / 4);
    for i in 0..strings.len() {
        let part = if strings.is_valid(i) && delimiters.is_valid(i) && valid(i) {
            let (text, delimiter) = (strings.value(i), delimiters.value(i));
            usize::try_from(indices.values[i]).ok().filter(|_| !delimiter.is_empty()).and_then(|n| {
                match delimiter.as_bytes() {
                    // One ASCII byte: the same parts, found by a scan of the bytes.
                    [d] if d.is_ascii() => nth_part(text, *d, n),
                    _ => text.split(delimiter).nth(n),
                }
            })
        } else {
            None
        };
        out.append_option(part);
    }
    Some(Arc::new(out.finish()))
}

/// Part `n` of `text` split at the ASCII byte `delimiter` (`text.split(delimiter).nth(n)`).
fn nth_part(text: &str, delimiter: u8, n: usize) -> Option<&str> {
    let mut start = 0;
    let mut part = 0;
    for (i, &b) in text.as_bytes().iter().enumerate() {
        if b == delimiter {
            if part == n {
                return Some(&text[start..i]);
            }
            part += 1;
            start = i + 1;
        }
    }
    (part == n).then(|| &text[start..])
}

/// `TRIM([BOTH | LEADING | TRAILING] [chars] FROM s)`: arguments `s, chars`.
#[derive(Debug, Clone, Copy)]
pub struct Trim {
    side: TrimSide,
}

impl Trim {
    /// TRIM cutting from `side`.
    pub fn of(side: TrimSide) -> ScalarRef {
        ScalarRef::new(Trim { side })
    }
}

impl ScalarFunction for Trim {
    fn name(&self) -> &str {
        "TRIM"
    }

    fn arity(&self) -> Arity {
        Arity::exactly(2)
    }

    fn return_type(&self, types: &[&DataType]) -> Result<DataType, ExprError> {
        super::expect(types.iter().all(|t| is_string(t)), self, types, "<CHARACTER>, <CHARACTER>")?;
        Ok(nullable_if_any(varchar_as_long_as(types[0]), types))
    }

    fn eval(&self, args: &[Value], _: &DataType) -> Result<Value, ExprError> {
        let (s, chars) = (text(&args[0]), text(&args[1]));
        let set = |c: char| chars.contains(c);
        Ok(string(
            match self.side {
                TrimSide::Both => s.trim_matches(set),
                TrimSide::Leading => s.trim_start_matches(set),
                TrimSide::Trailing => s.trim_end_matches(set),
            }
            .to_string(),
        ))
    }
}

/// UPPER / LOWER of one value; ASCII text is converted in a stack buffer so the result is
/// allocated once.
fn change_case(s: &str, upper: bool) -> Value {
    let mut buffer = [0u8; 128];
    if s.is_ascii() && s.len() <= buffer.len() {
        let bytes = &mut buffer[..s.len()];
        bytes.copy_from_slice(s.as_bytes());
        if upper {
            bytes.make_ascii_uppercase();
        } else {
            bytes.make_ascii_lowercase();
        }
        return Value::String(Arc::from(std::str::from_utf8(bytes).unwrap_or_default()));
    }
    string(if upper { s.to_uppercase() } else { s.to_lowercase() })
}

/// UPPER / LOWER of a column: ASCII text in one pass over the bytes, keeping the offsets.
fn change_case_column(column: &ArrayRef, upper: bool) -> Option<ArrayRef> {
    let strings = column.as_string_opt::<i32>()?;
    let offsets = strings.offsets();
    let start = offsets[0] as usize;
    let end = offsets[offsets.len() - 1] as usize;
    let bytes = &strings.values()[start..end];
    if bytes.is_ascii() && start == 0 {
        let mut changed = bytes.to_vec();
        if upper {
            changed.make_ascii_uppercase();
        } else {
            changed.make_ascii_lowercase();
        }
        // Same offsets over ASCII bytes whose case changed: still valid UTF-8 at the same boundaries.
        return Some(Arc::new(StringArray::new(offsets.clone(), changed.into(), strings.nulls().cloned())));
    }
    let changed: StringArray =
        strings.iter().map(|s| s.map(|s| if upper { s.to_uppercase() } else { s.to_lowercase() })).collect();
    Some(Arc::new(changed))
}

fn initcap(s: &str) -> String {
    // As Flink's: a word is a run of ASCII letters and digits; other characters (accented
    // letters among them) are kept as they are and start a new word.
    let mut out = String::with_capacity(s.len());
    let mut start_of_word = true;
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(if start_of_word { c.to_ascii_uppercase() } else { c.to_ascii_lowercase() });
            start_of_word = false;
        } else {
            out.push(c);
            start_of_word = true;
        }
    }
    out
}

/// SUBSTRING from 1-based position `start` (0 is the first character, a negative start counts
/// from the end), `length` characters or to the end; NULL for a negative length, as Flink's.
fn substring(s: &str, start: i64, length: Option<i64>) -> Option<String> {
    let chars: Vec<char> = s.chars().collect();
    let len = chars.len() as i64;
    if length.is_some_and(|l| l < 0) {
        return None;
    }
    let from = match start {
        p if p > 0 => p - 1,
        p if p < 0 => len + p,
        _ => 0,
    };
    let to = length.map_or(len, |l| from.saturating_add(l)).min(len);
    let from = from.max(0);
    if from >= to {
        return Some(String::new());
    }
    Some(chars[from as usize..to as usize].iter().collect())
}

/// LPAD / RPAD to `length` characters; a negative length, or an empty pad that is needed,
/// fails, as in Flink.
fn pad(s: &str, length: i64, pad: &str, left: bool) -> Result<String, ExprError> {
    let name = if left { "LPAD" } else { "RPAD" };
    let length = usize::try_from(length).map_err(|_| ExprError(format!("{name} of a negative length: {length}")))?;
    let chars: Vec<char> = s.chars().collect();
    if chars.len() >= length {
        return Ok(chars[..length].iter().collect());
    }
    if pad.is_empty() {
        return Err(ExprError(format!("{name} cannot fill {length} characters with an empty pad")));
    }
    let filler: String = pad.chars().cycle().take(length - chars.len()).collect();
    Ok(if left { filler + s } else { format!("{s}{filler}") })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> Value {
        Value::string(v)
    }

    #[test]
    fn string_functions_follow_flink() {
        let ty = DataType::string();
        assert_eq!(INITCAP.eval(&[s("user1 of bandung")], &ty).unwrap(), s("User1 Of Bandung"));
        assert_eq!(substring("apple", 1, Some(3)).unwrap(), "app");
        assert_eq!(substring("apple", 0, Some(2)).unwrap(), "ap");
        assert_eq!(substring("apple", -3, Some(2)).unwrap(), "pl");
        assert_eq!(substring("apple", 4, None).unwrap(), "le");
        assert_eq!(substring("apple", 2, Some(-1)), None);
        assert_eq!(pad("1", 4, "0", true).unwrap(), "0001");
        assert_eq!(pad("Medan", 10, ".", false).unwrap(), "Medan.....");
        assert_eq!(pad("Bandung", 3, ".", false).unwrap(), "Ban");
        let huge = [s("a"), Value::Int(i32::MAX), s(".")];
        let refused = RPAD.eval(&huge, &ty).unwrap_err();
        assert!(refused.0.contains("RPAD cannot make a string of 2147483647 characters"), "{}", refused.0);
        assert!(LPAD.eval(&[s("a"), Value::Int(-1), s(".")], &ty).is_err(), "Flink fails on a negative length");
        assert_eq!(Trim { side: TrimSide::Both }.eval(&[s("uuser1u"), s("u")], &ty).unwrap(), s("ser1"));
        assert_eq!(
            CONCAT_WS.eval(&[s("-"), s("a"), Value::Null, s("b")], &ty).unwrap(),
            s("a-b"),
            "NULL parts are skipped"
        );
        assert_eq!(POSITION.eval(&[s("an"), s("Bandung")], &DataType::int()).unwrap(), Value::Int(2));
    }

    #[test]
    fn the_case_kernels_equal_the_row_path_on_random_text() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let alphabet = ['a', 'B', 'z', 'ß', 'İ', ' ', '9', 'é'];
        let values: Vec<Option<String>> = (0..300)
            .map(|_| {
                rng.random_bool(0.9)
                    .then(|| (0..rng.random_range(0..12)).map(|_| alphabet[rng.random_range(0..8)]).collect())
            })
            .collect();
        let column: ArrayRef = Arc::new(StringArray::from(values.clone()));
        let ascii: ArrayRef = Arc::new(StringArray::from(vec![Some("abc"), None, Some("Q r")]));
        for f in [UPPER, LOWER] {
            for input in [&column, &ascii] {
                let out = f.eval_columns(std::slice::from_ref(input), &DataType::string()).unwrap();
                let strings = input.as_string::<i32>();
                for (i, got) in out.as_string::<i32>().iter().enumerate() {
                    let expected = strings.is_valid(i).then(|| f.eval(&[s(strings.value(i))], &DataType::string()));
                    assert_eq!(got.map(Value::string), expected.map(Result::unwrap), "{} row {i}", f.name());
                }
            }
        }
    }

    #[test]
    fn the_split_index_kernel_equals_the_row_path_on_random_text() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(8);
        let alphabet = ["a", "/", "//", "é", "ab", ""];
        let strings: Vec<Option<String>> = (0..300)
            .map(|_| {
                rng.random_bool(0.9)
                    .then(|| (0..rng.random_range(0..8)).map(|_| alphabet[rng.random_range(0..6)]).collect())
            })
            .collect();
        let delimiters: Vec<Option<&str>> =
            (0..300).map(|_| rng.random_bool(0.95).then(|| ["/", "ab", "", "é"][rng.random_range(0..4)])).collect();
        let indices: Vec<Option<i32>> =
            (0..300).map(|_| rng.random_bool(0.95).then(|| rng.random_range(-1..5))).collect();
        let columns: [ArrayRef; 3] = [
            Arc::new(StringArray::from(strings.clone())),
            Arc::new(StringArray::from(delimiters.clone())),
            Arc::new(arrow_array::Int32Array::from(indices.clone())),
        ];
        let types = [DataType::string(), DataType::string(), DataType::int()];
        assert!(SPLIT_INDEX.has_kernel(&types.iter().collect::<Vec<_>>()));
        let out = SPLIT_INDEX.eval_columns(&columns, &DataType::string()).unwrap();
        for (i, got) in out.as_string::<i32>().iter().enumerate() {
            let expected = match (&strings[i], delimiters[i], indices[i]) {
                (Some(text), Some(delimiter), Some(index)) => {
                    SPLIT_INDEX.eval(&[s(text), s(delimiter), Value::Int(index)], &DataType::string()).unwrap()
                }
                _ => Value::Null,
            };
            assert_eq!(got.map(Value::string).unwrap_or(Value::Null), expected, "row {i}");
        }
    }
}
