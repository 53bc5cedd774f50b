//! Rows and the four changelog row kinds.

use std::fmt;

use crate::print::write_value;
use crate::value::Value;

/// What a row means to the table it changes, as in Flink's `RowKind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RowKind {
    /// `+I`: a new row.
    Insert,
    /// `-U`: the previous content of a row that is being updated.
    UpdateBefore,
    /// `+U`: the new content of an updated row.
    UpdateAfter,
    /// `-D`: a row that is removed.
    Delete,
}

impl RowKind {
    /// Flink's short form: `+I`, `-U`, `+U`, `-D`.
    pub fn short_string(self) -> &'static str {
        match self {
            RowKind::Insert => "+I",
            RowKind::UpdateBefore => "-U",
            RowKind::UpdateAfter => "+U",
            RowKind::Delete => "-D",
        }
    }

    /// Parses the short form.
    pub fn from_short_string(s: &str) -> Option<Self> {
        match s {
            "+I" => Some(RowKind::Insert),
            "-U" => Some(RowKind::UpdateBefore),
            "+U" => Some(RowKind::UpdateAfter),
            "-D" => Some(RowKind::Delete),
            _ => None,
        }
    }

    /// Flink's byte value (`RowKind.toByteValue`): 0 `+I`, 1 `-U`, 2 `+U`, 3 `-D`; how
    /// checkpoints and stored buffers write a kind.
    pub fn to_byte(self) -> u8 {
        match self {
            RowKind::Insert => 0,
            RowKind::UpdateBefore => 1,
            RowKind::UpdateAfter => 2,
            RowKind::Delete => 3,
        }
    }

    /// The kind of a byte [`RowKind::to_byte`] wrote; `None` for any other byte.
    pub fn from_byte(byte: u8) -> Option<Self> {
        match byte {
            0 => Some(RowKind::Insert),
            1 => Some(RowKind::UpdateBefore),
            2 => Some(RowKind::UpdateAfter),
            3 => Some(RowKind::Delete),
            _ => None,
        }
    }

    /// `+I` and `+U` add a row to a table; `-U` and `-D` retract one.
    pub fn is_accumulate(self) -> bool {
        matches!(self, RowKind::Insert | RowKind::UpdateAfter)
    }
}

impl fmt::Display for RowKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.short_string())
    }
}

/// An owned row with its kind; prints as Flink's print connector does (`+I[1, apple]`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Row {
    /// The changelog kind.
    pub kind: RowKind,
    /// Field values in schema order.
    pub values: Vec<Value>,
}

impl Row {
    /// A row of the given kind.
    pub fn new(kind: RowKind, values: Vec<Value>) -> Self {
        Row { kind, values }
    }

    /// An insert (`+I`) row.
    pub fn insert(values: Vec<Value>) -> Self {
        Row::new(RowKind::Insert, values)
    }
}

/// Writes `kind[v1, v2, …]` as Flink prints a row.
pub fn write_row(out: &mut String, kind: RowKind, values: &[Value]) {
    write_fields(out, kind, values, write_value);
}

/// Writes `kind[f1, f2, …]`, each field by `write`: the frame of a printed row, whatever its
/// fields are read from.
pub(crate) fn write_fields<T>(out: &mut String, kind: RowKind, fields: &[T], write: impl Fn(&mut String, &T)) {
    out.push_str(kind.short_string());
    out.push('[');
    for (i, field) in fields.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write(out, field);
    }
    out.push(']');
}

impl fmt::Display for Row {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        write_row(&mut s, self.kind, &self.values);
        f.write_str(&s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_print_with_their_kind() {
        let row = Row::new(RowKind::UpdateBefore, vec![Value::BigInt(1), Value::string("apple"), Value::Null]);
        assert_eq!(row.to_string(), "-U[1, apple, null]");
        for kind in [RowKind::Insert, RowKind::UpdateBefore, RowKind::UpdateAfter, RowKind::Delete] {
            assert_eq!(RowKind::from_short_string(kind.short_string()), Some(kind));
        }
    }
}
