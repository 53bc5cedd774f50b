//! Group keys of the typed state: one integer (or DATE) column read as its values, any other
//! key columns as `arrow-row` rows (a memcmp-able byte encoding of all key columns, equal
//! exactly when the keys are). Both map to dense group ids through one [`KeyTable`].

use std::hash::{Hash, Hasher};

use arrow_array::ArrayRef;
use arrow_row::{RowConverter, Rows, SortField};
use arrow_schema::DataType as ArrowType;
use hashbrown::{HashMap, TryReserveError};
use rustc_hash::FxHasher;
use weir_runtime::columnar::{conform, IntColumn};
use weir_runtime::{DataType, LogicalType};

use super::word_column;

/// How an aggregate's key columns are read: one integer or DATE column as its values, any
/// other key columns encoded by arrow-row.
#[derive(Debug)]
pub(crate) struct GroupKeys {
    types: Vec<ArrowType>,
    /// `None` for one integer column.
    converter: Option<RowConverter>,
}

impl GroupKeys {
    /// The keys of columns of Arrow types `types`; `None` when they cannot key the typed
    /// state: no key at all, or a nested layout (ARRAY, MAP, ROW, TIMESTAMP(7..9)) or an
    /// all-NULL column that shows no type, whose values keep equality rules of their own.
    pub fn for_arrow_types(types: Vec<ArrowType>) -> Option<GroupKeys> {
        let integer = |t: &ArrowType| {
            matches!(t, ArrowType::Int8 | ArrowType::Int16 | ArrowType::Int32 | ArrowType::Int64 | ArrowType::Date32)
        };
        let flat = |t: &ArrowType| {
            !matches!(t, ArrowType::Null | ArrowType::List(_) | ArrowType::Struct(_) | ArrowType::Map(..))
        };
        if !types.iter().all(flat) {
            return None;
        }
        match types.as_slice() {
            [] => None,
            [t] if integer(t) => Some(GroupKeys { types, converter: None }),
            _ => {
                let fields = types.iter().map(|t| SortField::new(t.clone())).collect();
                let converter = RowConverter::new(fields).ok()?;
                Some(GroupKeys { types, converter: Some(converter) })
            }
        }
    }

    /// Whether columns of `ty` can key the typed state.
    pub fn supports(ty: &DataType) -> bool {
        !matches!(
            ty.logical,
            LogicalType::Array(_) | LogicalType::Map(..) | LogicalType::Multiset(_) | LogicalType::Row(_)
        )
    }

    /// One chunk's key `columns` in the key types (see `columnar::conform`); `None` when a
    /// column holds values of another type.
    pub fn columns(&self, columns: &[ArrayRef]) -> Option<Vec<ArrayRef>> {
        if columns.len() != self.types.len() {
            return None;
        }
        columns.iter().zip(&self.types).map(|(c, t)| conform(c, t)).collect()
    }

    /// Makes room in `table` for `additional` more keys of these columns.
    pub fn try_reserve(&self, table: &mut KeyTable, additional: usize) -> Result<(), TryReserveError> {
        table.keys.try_reserve(additional).map_err(|_| TryReserveError::CapacityOverflow)?;
        match self.converter {
            None => table.ints.try_reserve(additional),
            Some(_) => table.rows.try_reserve(additional),
        }
    }

    /// The keys of key `columns` (as [`GroupKeys::columns`] returns them).
    pub fn read(&self, columns: &[ArrayRef]) -> Option<ChunkKeys> {
        match &self.converter {
            None => Some(ChunkKeys::Integer(IntColumn::of(columns.first()?.as_ref())?)),
            Some(converter) => Some(ChunkKeys::Rows(converter.convert_columns(columns).ok()?)),
        }
    }

    /// The Arrow types of the key columns.
    pub fn arrow_types(&self) -> &[ArrowType] {
        &self.types
    }

    /// Key columns holding the keys of groups `ids` of `table`, in order.
    pub fn arrays(&self, table: &KeyTable, ids: impl Iterator<Item = u32>) -> Vec<ArrayRef> {
        match &self.converter {
            None => {
                let keys: Vec<Option<i64>> = ids
                    .map(|id| match &table.keys[id as usize] {
                        StoredKey::Integer(k) => *k,
                        StoredKey::Row(_) => None,
                    })
                    .collect();
                vec![word_column(&self.types[0], &keys)]
            }
            Some(converter) => {
                let parser = converter.parser();
                let rows: Vec<&[u8]> = ids
                    .map(|id| match &table.keys[id as usize] {
                        StoredKey::Row(bytes) => &bytes[..],
                        StoredKey::Integer(_) => &[][..],
                    })
                    .collect();
                // The bytes were made by this converter: decoding them cannot fail.
                converter
                    .convert_rows(rows.into_iter().map(|r| parser.parse(r)))
                    .unwrap_or_else(|e| panic!("group keys encoded by this aggregate do not decode: {e}"))
            }
        }
    }
}

/// The keys of one chunk, read once.
pub(crate) enum ChunkKeys {
    Integer(IntColumn),
    Rows(Rows),
}

impl ChunkKeys {
    /// A hash of row `i`'s key (equal keys hash equal).
    pub fn hash(&self, i: usize) -> u64 {
        let mut h = FxHasher::default();
        match self {
            ChunkKeys::Integer(c) => c.get(i).hash(&mut h),
            ChunkKeys::Rows(rows) => rows.row(i).as_ref().hash(&mut h),
        }
        h.finish()
    }

    /// The id of row `i`'s key in `table`, if it has one.
    #[inline]
    pub fn get(&self, table: &KeyTable, i: usize) -> Option<u32> {
        match self {
            ChunkKeys::Integer(c) => match c.get(i) {
                Some(k) => table.ints.get(&k).copied(),
                None => table.null_key,
            },
            ChunkKeys::Rows(rows) => table.rows.get(rows.row(i).as_ref()).copied(),
        }
    }

    /// A new id for row `i`'s key (which has none); `grow` is called when the id is new.
    pub fn insert(&self, table: &mut KeyTable, i: usize, grow: impl FnOnce()) -> u32 {
        let key = match self {
            ChunkKeys::Integer(c) => StoredKey::Integer(c.get(i)),
            ChunkKeys::Rows(rows) => StoredKey::Row(rows.row(i).as_ref().into()),
        };
        table.insert(key, grow)
    }
}

/// A key as the table keeps it, to emit it again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StoredKey {
    Integer(Option<i64>),
    Row(Box<[u8]>),
}

/// Group keys to dense group ids; ids of dropped groups are reused.
#[derive(Debug, Default)]
pub(crate) struct KeyTable {
    ints: HashMap<i64, u32>,
    null_key: Option<u32>,
    rows: HashMap<Box<[u8]>, u32>,
    /// The key of each id.
    keys: Vec<StoredKey>,
    free: Vec<u32>,
}

impl KeyTable {
    fn insert(&mut self, key: StoredKey, grow: impl FnOnce()) -> u32 {
        let id = match self.free.pop() {
            Some(id) => id,
            None => {
                grow();
                self.keys.push(StoredKey::Integer(None));
                (self.keys.len() - 1) as u32
            }
        };
        match &key {
            StoredKey::Integer(Some(k)) => {
                self.ints.insert(*k, id);
            }
            StoredKey::Integer(None) => self.null_key = Some(id),
            StoredKey::Row(bytes) => {
                self.rows.insert(bytes.clone(), id);
            }
        }
        self.keys[id as usize] = key;
        id
    }

    /// Forgets the key of `id`, which becomes free.
    pub fn remove(&mut self, id: u32) {
        match &self.keys[id as usize] {
            StoredKey::Integer(Some(k)) => {
                self.ints.remove(k);
            }
            StoredKey::Integer(None) => self.null_key = None,
            StoredKey::Row(bytes) => {
                self.rows.remove(bytes);
            }
        }
        self.free.push(id);
    }

    /// The id of the key of `other`'s group `id`, if this table has it.
    pub fn get_key_of(&self, other: &KeyTable, id: u32) -> Option<u32> {
        match &other.keys[id as usize] {
            StoredKey::Integer(Some(k)) => self.ints.get(k).copied(),
            StoredKey::Integer(None) => self.null_key,
            StoredKey::Row(bytes) => self.rows.get(bytes).copied(),
        }
    }

    /// A new id for the key of `other`'s group `id` (which this table does not have).
    pub fn insert_key_of(&mut self, other: &KeyTable, id: u32, grow: impl FnOnce()) -> u32 {
        self.insert(other.keys[id as usize].clone(), grow)
    }

    /// The ids that hold a key, lowest first.
    pub fn live_ids(&self) -> Vec<u32> {
        let mut free = vec![false; self.keys.len()];
        self.free.iter().for_each(|&id| free[id as usize] = true);
        (0..self.keys.len() as u32).filter(|&id| !free[id as usize]).collect()
    }

    /// Number of keys with an id.
    pub fn len(&self) -> usize {
        self.ints.len() + usize::from(self.null_key.is_some()) + self.rows.len()
    }

    /// Forgets every key, keeping the allocations.
    pub fn clear(&mut self) {
        self.ints.clear();
        self.null_key = None;
        self.rows.clear();
        self.keys.clear();
        self.free.clear();
    }
}
