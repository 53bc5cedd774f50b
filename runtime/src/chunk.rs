//! Chunks: the unit of data that crosses a mailbox.
//!
//! A [`Chunk`] is a batch of rows of one arity: one [`RowKind`] per row plus one Apache Arrow
//! array per column ([`Chunk::columns`]), optionally with a selection, so that a filter marks
//! rows instead of copying them and a projection reuses arrays. Operators that work a row at a
//! time read the same rows through [`Chunk::row`] / [`Chunk::rows`], a row-major view of
//! [`Value`]s built once per chunk, on first use, by one typed loop per column.
//!
//! A chunk built row by row ([`Chunk::push`] and friends) keeps the rows it was built from as
//! that view and builds its arrays on first use, in the column types it was declared with
//! ([`Chunk::with_types`]) or, without, in the types of its values. So a chain of row-at-a-time
//! operators never converts, and a chain of columnar operators never materializes rows.
//! Building or splitting a chunk allocates per chunk or per column, never per row or per field
//! (strings read into the row view are the exception: each is one `Arc<str>`).
//!
//! A chunk also remembers when its oldest data left a source, so sinks can measure
//! source-to-sink latency. A chunk is `Send` but not `Sync`: it moves from subtask to subtask
//! (its lazily built views are plain cells, no atomics on the per-row path), it is never shared.

use std::cell::OnceCell;
use std::fmt;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, RecordBatch, UInt32Array};

use crate::columnar::{array_from_values, arrow_type, infer_type, scatter_column, ArrowType};
use crate::row::{write_row, Row, RowKind};
use crate::types::DataType;
use crate::value::Value;

/// The Arrow arrays of a chunk and the rows of them it holds.
#[derive(Debug, Clone)]
pub struct Columns {
    arrays: Vec<ArrayRef>,
    selection: Option<Arc<[u32]>>,
}

impl Columns {
    /// The arrays, one per column, all of one length. With a selection, only the rows it
    /// lists belong to the chunk.
    pub fn arrays(&self) -> &[ArrayRef] {
        &self.arrays
    }

    /// The rows of the arrays that belong to the chunk, in order; `None` when all do.
    pub fn selection(&self) -> Option<&[u32]> {
        self.selection.as_deref()
    }

    /// Column `i` holding exactly the chunk's rows: the array itself without a selection,
    /// else the selected rows gathered into a new array.
    pub fn compacted(&self, i: usize) -> ArrayRef {
        match &self.selection {
            None => Arc::clone(&self.arrays[i]),
            Some(selection) => take(&self.arrays[i], selection),
        }
    }
}

/// The rows of the arrays that positions `kept` of a chunk with `selection` are.
fn narrowed(selection: Option<&[u32]>, kept: &[u32]) -> Arc<[u32]> {
    match selection {
        None => Arc::from(kept),
        Some(old) => kept.iter().map(|&i| old[i as usize]).collect(),
    }
}

/// Gathers rows `indices` of `array` (Arrow's `take`).
pub fn take(array: &ArrayRef, indices: &[u32]) -> ArrayRef {
    let indices = UInt32Array::from(indices.to_vec());
    // Indices come from the chunk itself and are in bounds, so `take` cannot fail here.
    arrow_select::take::take(array.as_ref(), &indices, None).unwrap_or_else(|e| panic!("take: {e}"))
}

/// A batch of rows with their kinds.
///
/// ```
/// use weir_runtime::{Chunk, RowKind, Value};
///
/// let mut chunk = Chunk::new(2);
/// chunk.push(RowKind::Insert, &[Value::BigInt(1), Value::string("apple")]);
/// chunk.push(RowKind::UpdateBefore, &[Value::BigInt(2), Value::Null]);
/// assert_eq!(chunk.to_lines(), ["+I[1, apple]", "-U[2, null]"]);
/// assert_eq!(chunk.columns().arrays()[1].null_count(), 1);
/// ```
#[derive(Clone, Default)]
pub struct Chunk {
    arity: usize,
    /// The kind of each row of the chunk (after the selection).
    kinds: Vec<RowKind>,
    columns: OnceCell<Columns>,
    /// All fields of all rows, row-major.
    rows: OnceCell<Vec<Value>>,
    /// Declared column types for arrays built from rows; `None` infers them from the values.
    types: Option<Arc<[ArrowType]>>,
    /// Monotonic nanoseconds (see [`crate::clock::monotonic_nanos`]) at which the data in this
    /// chunk left its source; 0 when unknown.
    origin_nanos: u64,
    /// The split of a source reading several side by side that the rows came from
    /// ([`crate::operator::Source::splits`]); kept across FORWARD edges only.
    splits: Option<Arc<crate::subtask::Splits>>,
}

impl Chunk {
    /// An empty chunk of rows with `arity` fields.
    pub fn new(arity: usize) -> Self {
        Chunk::with_capacity(arity, 0)
    }

    /// An empty chunk with room for `rows` rows.
    pub fn with_capacity(arity: usize, rows: usize) -> Self {
        Chunk {
            arity,
            kinds: Vec::with_capacity(rows),
            columns: OnceCell::new(),
            rows: OnceCell::from(Vec::with_capacity(rows * arity)),
            types: None,
            origin_nanos: 0,
            splits: None,
        }
    }

    /// An empty chunk whose columns have the Arrow types of `types` (Flink's types).
    pub fn with_types(types: &[DataType]) -> Self {
        let mut chunk = Chunk::new(types.len());
        chunk.types = Some(types.iter().map(arrow_type).collect());
        chunk
    }

    /// An empty chunk with room for `rows` rows whose columns have Arrow types `types` (see
    /// [`crate::columnar::arrow_type`]); the types are shared, not copied.
    pub fn with_arrow_types(types: Arc<[ArrowType]>, rows: usize) -> Self {
        let mut chunk = Chunk::with_capacity(types.len(), rows);
        chunk.types = Some(types);
        chunk
    }

    /// A chunk holding `rows`, all of which must have `arity` fields.
    ///
    /// # Panics
    /// Panics if a row has another number of fields: that is a programming error.
    pub fn from_rows(arity: usize, rows: impl IntoIterator<Item = Row>) -> Self {
        let mut chunk = Chunk::new(arity);
        for row in rows {
            chunk.push_row(row);
        }
        chunk
    }

    /// A chunk of `arrays` (one per column) with one kind per row.
    ///
    /// # Panics
    /// Panics if an array's length differs from the number of kinds: a programming error.
    pub fn from_arrays(kinds: Vec<RowKind>, arrays: Vec<ArrayRef>) -> Self {
        for a in &arrays {
            assert_eq!(a.len(), kinds.len(), "column length differs from the number of rows");
        }
        Chunk {
            arity: arrays.len(),
            kinds,
            columns: OnceCell::from(Columns { arrays, selection: None }),
            rows: OnceCell::new(),
            types: None,
            origin_nanos: 0,
            splits: None,
        }
    }

    /// A chunk of the rows of `batch`, all of kind `kind`.
    pub fn from_record_batch(batch: &RecordBatch, kind: RowKind) -> Self {
        Chunk::from_arrays(vec![kind; batch.num_rows()], batch.columns().to_vec())
    }

    /// The chunk's rows as a record batch with columns named `names` (row kinds are not part
    /// of it: see [`Chunk::kinds`]).
    ///
    /// # Errors
    /// `names` does not name every column.
    pub fn to_record_batch(&self, names: &[&str]) -> std::result::Result<RecordBatch, arrow_schema::ArrowError> {
        let columns = self.columns();
        let arrays: Vec<ArrayRef> = (0..self.arity).map(|i| columns.compacted(i)).collect();
        let fields: Vec<arrow_schema::Field> = names
            .iter()
            .zip(&arrays)
            .map(|(name, a)| arrow_schema::Field::new(*name, a.data_type().clone(), true))
            .collect();
        if fields.len() != arrays.len() {
            return Err(arrow_schema::ArrowError::SchemaError(format!(
                "{} names for {} columns",
                names.len(),
                arrays.len()
            )));
        }
        let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(self.len()));
        RecordBatch::try_new_with_options(Arc::new(arrow_schema::Schema::new(fields)), arrays, &options)
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

    /// The kinds of all rows.
    pub fn kinds(&self) -> &[RowKind] {
        &self.kinds
    }

    /// The chunk's Arrow arrays (built from its rows on first use when it was built row by row).
    pub fn columns(&self) -> &Columns {
        self.columns.get_or_init(|| {
            let rows = self.rows.get().map_or(&[][..], Vec::as_slice);
            let arrays = (0..self.arity)
                .map(|c| {
                    let values: Vec<&Value> = rows.iter().skip(c).step_by(self.arity).collect();
                    let declared = self.types.as_ref().map(|t| &t[c]);
                    let built = declared.map(|ty| array_from_values(ty, &values));
                    match built {
                        Some(Ok(array)) => array,
                        // Values that do not fit the declared type keep their own.
                        _ => array_from_values(&infer_type(&values), &values)
                            .unwrap_or_else(|e| panic!("an inferred column type refused a value: {e}")),
                    }
                })
                .collect();
            Columns { arrays, selection: None }
        })
    }

    /// Whether the chunk's arrays are built (it came from arrays, or they were asked for since
    /// it last changed): columnar work on it then converts nothing.
    pub fn is_columnar(&self) -> bool {
        self.columns.get().is_some()
    }

    /// The rows `kept` (positions in this chunk, ascending) as a chunk of their own that shares
    /// this one's arrays under a narrower selection (the row view is not carried over).
    pub fn selected(&self, kept: &[u32]) -> Chunk {
        let columns = self.columns();
        let selection = narrowed(columns.selection(), kept);
        Chunk {
            arity: self.arity,
            kinds: kept.iter().map(|&i| self.kinds[i as usize]).collect(),
            columns: OnceCell::from(Columns { arrays: columns.arrays.clone(), selection: Some(selection) }),
            rows: OnceCell::new(),
            types: self.types.clone(),
            origin_nanos: self.origin_nanos,
            splits: self.splits.clone(),
        }
    }

    /// The chunk of columns `columns` of this one, in that order: the same arrays under the same
    /// selection when the chunk has its arrays, else the rows' fields.
    pub fn project(&self, columns: &[usize]) -> Chunk {
        if let Some(built) = self.columns.get() {
            let arrays = columns.iter().map(|&c| Arc::clone(&built.arrays[c])).collect();
            return Chunk {
                arity: columns.len(),
                kinds: self.kinds.clone(),
                columns: OnceCell::from(Columns { arrays, selection: built.selection.clone() }),
                rows: OnceCell::new(),
                types: None,
                origin_nanos: self.origin_nanos,
                splits: self.splits.clone(),
            };
        }
        let mut projected = Chunk::with_capacity(columns.len(), self.len());
        for (kind, row) in self.rows() {
            projected.push_with(kind, |fields| fields.extend(columns.iter().map(|&c| row[c].clone())));
        }
        projected.types = self.types.as_ref().map(|t| columns.iter().map(|&c| t[c].clone()).collect());
        projected.origin_nanos = self.origin_nanos;
        projected.splits = self.splits.clone();
        projected
    }

    /// The values of column `column` at rows `rows` (positions in this chunk), in order. Read
    /// from the column's array when the chunk has no row view yet, so that an expression over
    /// one column does not turn every column (a nested ROW among them) into values.
    pub fn column_values(&self, column: usize, rows: &[u32]) -> Vec<Value> {
        if let (None, Some(columns)) = (self.rows.get(), self.columns.get()) {
            let physical: Vec<u32> = match columns.selection() {
                None => rows.to_vec(),
                Some(selection) => rows.iter().map(|&r| selection[r as usize]).collect(),
            };
            let mut out = vec![Value::Null; rows.len()];
            scatter_column(columns.arrays[column].as_ref(), Some(&physical), &mut out, 1);
            return out;
        }
        rows.iter().map(|&r| self.row(r as usize)[column].clone()).collect()
    }

    /// All fields of all rows, row-major (built from the arrays on first use).
    fn values(&self) -> &[Value] {
        self.rows.get_or_init(|| {
            let Some(columns) = self.columns.get() else { return Vec::new() };
            let mut out = vec![Value::Null; self.len() * self.arity];
            for (c, array) in columns.arrays.iter().enumerate() {
                if !out.is_empty() {
                    scatter_column(array.as_ref(), columns.selection(), &mut out[c..], self.arity);
                }
            }
            out
        })
    }

    /// The row-major fields for changing them: the arrays are dropped (they are rebuilt when
    /// asked for). Called per pushed row: a chunk of rows only checks two cells.
    #[inline]
    fn values_for_change(&mut self) -> &mut Vec<Value> {
        if self.columns.get_mut().is_some() || self.rows.get_mut().is_none() {
            self.rows_instead_of_columns();
        }
        match self.rows.get_mut() {
            Some(rows) => rows,
            None => unreachable!("the row view was just set"),
        }
    }

    /// Builds the row view and drops the arrays, keeping their types for rebuilding them.
    #[cold]
    fn rows_instead_of_columns(&mut self) {
        self.values();
        if let Some(columns) = self.columns.take() {
            if self.types.is_none() {
                self.types = Some(columns.arrays.iter().map(|a| a.data_type().clone()).collect());
            }
        }
    }

    /// The fields of row `i`.
    pub fn row(&self, i: usize) -> &[Value] {
        &self.values()[i * self.arity..(i + 1) * self.arity]
    }

    /// Iterates over `(kind, fields)` of every row.
    pub fn rows(&self) -> impl ExactSizeIterator<Item = (RowKind, &[Value])> + '_ {
        let arity = self.arity;
        let values = self.values();
        self.kinds.iter().enumerate().map(move |(i, kind)| (*kind, &values[i * arity..(i + 1) * arity]))
    }

    /// Mutable access to all fields of all rows, row-major; the arity cannot change.
    pub fn values_mut(&mut self) -> &mut [Value] {
        self.values_for_change()
    }

    /// Appends a row, cloning its fields.
    ///
    /// # Panics
    /// Panics if `fields` does not have the chunk's arity.
    pub fn push(&mut self, kind: RowKind, fields: &[Value]) {
        assert_eq!(fields.len(), self.arity, "row arity differs from chunk arity");
        self.values_for_change().extend_from_slice(fields);
        self.kinds.push(kind);
    }

    /// Appends a row whose fields `fill` pushes onto the chunk's value buffer. Returns the
    /// number of fields pushed; when it differs from the arity the row is removed again and
    /// the chunk is unchanged.
    pub fn push_with(&mut self, kind: RowKind, fill: impl FnOnce(&mut Vec<Value>)) -> usize {
        let arity = self.arity;
        let values = self.values_for_change();
        let start = values.len();
        fill(values);
        let pushed = values.len() - start;
        if pushed == arity {
            self.kinds.push(kind);
        } else {
            values.truncate(start);
        }
        pushed
    }

    /// Appends an owned row.
    ///
    /// # Panics
    /// Panics if the row does not have the chunk's arity.
    pub fn push_row(&mut self, row: Row) {
        assert_eq!(row.values.len(), self.arity, "row arity differs from chunk arity");
        self.values_for_change().extend(row.values);
        self.kinds.push(row.kind);
    }

    /// Keeps the rows for which `keep(kind, fields)` is true, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(RowKind, &[Value]) -> bool) {
        // Nothing is allocated while every row stays.
        let mut kept: Option<Vec<u32>> = None;
        for (i, (kind, row)) in self.rows().enumerate() {
            match (&mut kept, keep(kind, row)) {
                (None, true) | (Some(_), false) => {}
                (None, false) => kept = Some((0..i as u32).collect()),
                (Some(rows), true) => rows.push(i as u32),
            }
        }
        if let Some(kept) = kept {
            self.select(&kept);
        }
    }

    /// Keeps rows `kept` (positions in this chunk, ascending) and drops the others. The
    /// arrays are not copied: the chunk's selection narrows.
    pub fn select(&mut self, kept: &[u32]) {
        self.kinds = kept.iter().map(|&i| self.kinds[i as usize]).collect();
        if let Some(columns) = self.columns.get_mut() {
            columns.selection = Some(narrowed(columns.selection.as_deref(), kept));
        }
        if let Some(rows) = self.rows.get_mut() {
            let arity = self.arity;
            let mut write = 0;
            for &read in kept {
                let read = read as usize;
                if write != read {
                    for f in 0..arity {
                        rows.swap(write * arity + f, read * arity + f);
                    }
                }
                write += 1;
            }
            rows.truncate(write * arity);
        }
    }

    /// All fields of all rows, row-major, consuming the chunk.
    pub fn into_values(mut self) -> Vec<Value> {
        std::mem::take(self.values_for_change())
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

    /// The split of the source its rows came from, when the source reads several side by side.
    pub fn splits(&self) -> Option<&Arc<crate::subtask::Splits>> {
        self.splits.as_ref()
    }

    /// Marks the rows as coming from the split `splits` says (`None`: from one stream).
    pub fn set_splits(&mut self, splits: Option<Arc<crate::subtask::Splits>>) {
        self.splits = splits;
    }

    /// Removes all rows, keeping the declared types.
    pub fn clear(&mut self) {
        self.kinds.clear();
        self.columns = OnceCell::new();
        self.rows = OnceCell::from(Vec::new());
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

impl PartialEq for Chunk {
    /// Equal when the rows and their kinds are, whichever way each chunk holds them.
    fn eq(&self, other: &Self) -> bool {
        self.arity == other.arity && self.kinds == other.kinds && self.values() == other.values()
    }
}

impl fmt::Debug for Chunk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Chunk").field("arity", &self.arity).field("rows", &self.to_lines()).finish()
    }
}

#[cfg(test)]
mod tests {
    use arrow_array::{Int64Array, StringArray};

    use super::*;

    fn chunk() -> Chunk {
        let mut c = Chunk::new(2);
        for i in 0..5 {
            c.push(RowKind::Insert, &[Value::BigInt(i), Value::string("x")]);
        }
        c
    }

    fn columnar() -> Chunk {
        let ids: ArrayRef = Arc::new(Int64Array::from(vec![Some(0), Some(1), None, Some(3)]));
        let names: ArrayRef = Arc::new(StringArray::from(vec!["a", "b", "c", "d"]));
        Chunk::from_arrays(
            vec![RowKind::Insert, RowKind::Delete, RowKind::Insert, RowKind::UpdateAfter],
            vec![ids, names],
        )
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
        assert_eq!(c.to_record_batch(&[]).unwrap().num_rows(), 2);
    }

    #[test]
    fn arrays_read_as_rows_and_rows_build_arrays() {
        let c = columnar();
        assert_eq!(c.to_lines(), ["+I[0, a]", "-D[1, b]", "+I[null, c]", "+U[3, d]"]);
        let rebuilt = Chunk::from_rows(2, c.to_rows());
        assert_eq!(rebuilt, c);
        assert_eq!(rebuilt.columns().arrays()[0].data_type(), &ArrowType::Int64);
        assert_eq!(rebuilt.columns().arrays()[0].null_count(), 1);
    }

    #[test]
    fn a_selection_narrows_the_rows_without_copying_the_arrays() {
        let mut c = columnar();
        c.select(&[1, 2, 3]);
        c.select(&[0, 2]);
        assert_eq!(c.columns().arrays()[0].len(), 4);
        assert_eq!(c.columns().selection(), Some(&[1, 3][..]));
        assert_eq!(c.to_lines(), ["-D[1, b]", "+U[3, d]"]);
        let batch = c.to_record_batch(&["id", "name"]).unwrap();
        assert_eq!(batch.num_rows(), 2);
        // Changing a row drops the arrays; they come back from the rows.
        c.push(RowKind::Insert, &[Value::BigInt(9), Value::string("z")]);
        assert_eq!(c.columns().selection(), None);
        assert_eq!(c.columns().arrays()[1].len(), 3);
    }

    #[test]
    fn declared_types_shape_the_arrays() {
        let mut c = Chunk::with_types(&[DataType::bigint(), DataType::string()]);
        c.push(RowKind::Insert, &[Value::Int(1), Value::Null]);
        let arrays = c.columns().arrays();
        assert_eq!(arrays[0].data_type(), &ArrowType::Int64);
        assert_eq!(arrays[1].data_type(), &ArrowType::Utf8);
    }

    #[test]
    fn a_projection_shares_the_arrays_and_keeps_the_selection() {
        let mut chunk = Chunk::with_types(&[DataType::int(), DataType::string(), DataType::bigint()]);
        for i in 0..4 {
            chunk.push(RowKind::Insert, &[Value::Int(i), Value::string(&format!("s{i}")), Value::BigInt(i.into())]);
        }
        let from_rows = chunk.project(&[2, 0]);
        chunk.columns();
        chunk.select(&[1, 3]);
        let from_arrays = chunk.project(&[2, 0]);
        assert!(Arc::ptr_eq(&from_arrays.columns().arrays()[0], &chunk.columns().arrays()[2]));
        assert_eq!(from_arrays.to_lines(), ["+I[1, 1]", "+I[3, 3]"]);
        assert_eq!(from_rows.to_lines(), ["+I[0, 0]", "+I[1, 1]", "+I[2, 2]", "+I[3, 3]"]);
    }
}
