//! Chunks: the unit of data that crosses a mailbox.
//!
//! A [`Chunk`] holds a batch of rows of one arity, row-major in a single `Vec<Value>`, with
//! one [`RowKind`] per row. Building or splitting a chunk allocates per chunk, never per row
//! or per field. A chunk also remembers when its oldest data left a source, so sinks can
//! measure source-to-sink latency.

use crate::row::{write_row, Row, RowKind};
use crate::value::Value;

/// A batch of rows with their kinds.
///
/// ```
/// use weir_runtime::{Chunk, RowKind, Value};
///
/// let mut chunk = Chunk::new(2);
/// chunk.push(RowKind::Insert, &[Value::BigInt(1), Value::string("apple")]);
/// chunk.push(RowKind::UpdateBefore, &[Value::BigInt(2), Value::Null]);
/// assert_eq!(chunk.to_lines(), ["+I[1, apple]", "-U[2, null]"]);
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Chunk {
    arity: usize,
    kinds: Vec<RowKind>,
    values: Vec<Value>,
    /// Monotonic nanoseconds (see [`crate::clock::monotonic_nanos`]) at which the data in this
    /// chunk left its source; 0 when unknown.
    origin_nanos: u64,
}

impl Chunk {
    /// An empty chunk of rows with `arity` fields.
    pub fn new(arity: usize) -> Self {
        Chunk { arity, ..Default::default() }
    }

    /// An empty chunk with room for `rows` rows.
    pub fn with_capacity(arity: usize, rows: usize) -> Self {
        Chunk { arity, kinds: Vec::with_capacity(rows), values: Vec::with_capacity(rows * arity), origin_nanos: 0 }
    }

    /// A chunk holding `rows`, all of which must have `arity` fields.
    ///
    /// # Panics
    /// Panics if a row has another number of fields: that is a programming error.
    pub fn from_rows(arity: usize, rows: impl IntoIterator<Item = Row>) -> Self {
        let mut chunk = Chunk::new(arity);
        for row in rows {
            assert_eq!(row.values.len(), arity, "row {row} does not have {arity} fields");
            chunk.kinds.push(row.kind);
            chunk.values.extend(row.values);
        }
        chunk
    }

    /// Number of fields per row.
    pub fn arity(&self) -> usize {
        self.arity
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.kinds.len()
    }

    /// Whether the chunk has no rows.
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    /// The kind of row `i`.
    pub fn kind(&self, i: usize) -> RowKind {
        self.kinds[i]
    }

    /// The fields of row `i`.
    pub fn row(&self, i: usize) -> &[Value] {
        &self.values[i * self.arity..(i + 1) * self.arity]
    }

    /// The kinds of all rows.
    pub fn kinds(&self) -> &[RowKind] {
        &self.kinds
    }

    /// Iterates over `(kind, fields)` of every row.
    pub fn rows(&self) -> impl ExactSizeIterator<Item = (RowKind, &[Value])> + '_ {
        let arity = self.arity;
        self.kinds.iter().enumerate().map(move |(i, kind)| (*kind, &self.values[i * arity..(i + 1) * arity]))
    }

    /// Mutable access to all fields of all rows, row-major; the arity cannot change.
    pub fn values_mut(&mut self) -> &mut [Value] {
        &mut self.values
    }

    /// Appends a row, cloning its fields.
    ///
    /// # Panics
    /// Panics if `fields` does not have the chunk's arity.
    pub fn push(&mut self, kind: RowKind, fields: &[Value]) {
        assert_eq!(fields.len(), self.arity, "row arity differs from chunk arity");
        self.kinds.push(kind);
        self.values.extend_from_slice(fields);
    }

    /// Appends a row whose fields `fill` pushes onto the chunk's value buffer. Returns the
    /// number of fields pushed; when it differs from the arity the row is removed again and
    /// the chunk is unchanged.
    pub fn push_with(&mut self, kind: RowKind, fill: impl FnOnce(&mut Vec<Value>)) -> usize {
        let start = self.values.len();
        fill(&mut self.values);
        let pushed = self.values.len() - start;
        if pushed == self.arity {
            self.kinds.push(kind);
        } else {
            self.values.truncate(start);
        }
        pushed
    }

    /// Appends an owned row.
    ///
    /// # Panics
    /// Panics if the row does not have the chunk's arity.
    pub fn push_row(&mut self, row: Row) {
        assert_eq!(row.values.len(), self.arity, "row arity differs from chunk arity");
        self.kinds.push(row.kind);
        self.values.extend(row.values);
    }

    /// Keeps the rows for which `keep(kind, fields)` is true, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(RowKind, &[Value]) -> bool) {
        let arity = self.arity;
        let mut write = 0;
        for read in 0..self.kinds.len() {
            let kind = self.kinds[read];
            if keep(kind, &self.values[read * arity..(read + 1) * arity]) {
                if write != read {
                    self.kinds[write] = kind;
                    for f in 0..arity {
                        self.values.swap(write * arity + f, read * arity + f);
                    }
                }
                write += 1;
            }
        }
        self.kinds.truncate(write);
        self.values.truncate(write * arity);
    }

    /// All fields of all rows, row-major, consuming the chunk.
    pub fn into_values(self) -> Vec<Value> {
        self.values
    }

    /// The rows as owned [`Row`]s.
    pub fn to_rows(&self) -> Vec<Row> {
        self.rows().map(|(kind, fields)| Row::new(kind, fields.to_vec())).collect()
    }

    /// When this chunk's data left its source (monotonic nanoseconds), 0 when unknown.
    pub fn origin_nanos(&self) -> u64 {
        self.origin_nanos
    }

    /// Records when this chunk's data left its source; keeps the older of two known times.
    pub fn set_origin_nanos(&mut self, nanos: u64) {
        if self.origin_nanos == 0 || (nanos != 0 && nanos < self.origin_nanos) {
            self.origin_nanos = nanos;
        }
    }

    /// Removes all rows, keeping the allocation.
    pub fn clear(&mut self) {
        self.kinds.clear();
        self.values.clear();
        self.origin_nanos = 0;
    }

    /// Each row printed as Flink prints it, one per line.
    pub fn to_lines(&self) -> Vec<String> {
        self.rows()
            .map(|(kind, fields)| {
                let mut s = String::new();
                write_row(&mut s, kind, fields);
                s
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk() -> Chunk {
        let mut c = Chunk::new(2);
        for i in 0..5 {
            c.push(RowKind::Insert, &[Value::BigInt(i), Value::string("x")]);
        }
        c
    }

    #[test]
    fn rows_come_back_in_order() {
        let c = chunk();
        assert_eq!(c.len(), 5);
        assert_eq!(c.row(3), &[Value::BigInt(3), Value::string("x")]);
        assert_eq!(c.to_lines()[4], "+I[4, x]");
    }

    #[test]
    fn retain_keeps_order_and_kinds() {
        let mut c = chunk();
        c.push(RowKind::Delete, &[Value::BigInt(6), Value::Null]);
        c.retain(|_, r| r[0].as_i64().is_some_and(|v| v % 2 == 0));
        assert_eq!(c.to_lines(), ["+I[0, x]", "+I[2, x]", "+I[4, x]", "-D[6, null]"]);
    }

    #[test]
    fn push_with_rejects_a_wrong_arity() {
        let mut c = Chunk::new(2);
        assert_eq!(c.push_with(RowKind::Insert, |v| v.push(Value::Int(1))), 1);
        assert!(c.is_empty());
        assert_eq!(c.push_with(RowKind::Insert, |v| v.extend([Value::Int(1), Value::Int(2)])), 2);
        assert_eq!(c.len(), 1);
    }

    #[test]
    fn zero_arity_rows_iterate() {
        let mut c = Chunk::new(0);
        c.push(RowKind::Insert, &[]);
        c.push(RowKind::Delete, &[]);
        assert_eq!(c.rows().count(), 2);
        assert_eq!(c.to_lines(), ["+I[]", "-D[]"]);
    }
}
