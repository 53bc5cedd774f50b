//! Typed group state in checkpoints: each group's key values and its slab words, written and
//! read the same way by the one-phase and the global aggregate.

use std::sync::Arc;

use arrow_array::ArrayRef;
use arrow_schema::DataType as ArrowType;
use weir_runtime::checkpoint::codec::{DecodeError, Decoder, Encoder};
use weir_runtime::columnar::value_at;
use weir_runtime::{Chunk, RowKind, Value};

use super::keys::{GroupKeys, KeyTable};
use super::Slab;

/// Writes every group of `table`: the words per group, the number of groups, then each group's
/// key values and words.
pub(crate) fn write_groups(keys: &GroupKeys, table: &KeyTable, slab: &Slab, out: &mut Encoder) {
    let ids = table.live_ids();
    let key_columns = keys.arrays(table, ids.iter().copied());
    out.u32(slab.stride() as u32);
    out.u32(ids.len() as u32);
    for (i, &id) in ids.iter().enumerate() {
        key_columns.iter().for_each(|column| out.value(&value_at(column.as_ref(), i)));
        slab.words(id).iter().for_each(|&w| out.i64(w));
    }
}

/// Adds to `table` and `slab` the groups [`write_groups`] wrote whose keys `owns` accepts.
///
/// # Errors
/// A damaged encoding, or groups of other calls or key types than these.
pub(crate) fn read_groups(
    keys: &GroupKeys,
    table: &mut KeyTable,
    slab: &mut Slab,
    input: &mut Decoder<'_>,
    owns: impl Fn(&[Value]) -> bool,
) -> Result<(), DecodeError> {
    let stride = input.u32()? as usize;
    if stride != slab.stride() {
        return Err(DecodeError { offset: 0, what: format!("{} words per group, not {stride}", slab.stride()) });
    }
    let types: Arc<[ArrowType]> = keys.arrow_types().into();
    let arity = types.len();
    let count = input.u32()? as usize;
    let mut owned = Chunk::with_arrow_types(Arc::clone(&types), count);
    let mut words = Vec::new();
    let mut key = Vec::with_capacity(arity);
    for _ in 0..count {
        key.clear();
        for _ in 0..arity {
            key.push(input.value()?);
        }
        let group: Vec<i64> = (0..stride).map(|_| input.i64()).collect::<Result<_, _>>()?;
        if owns(&key) {
            owned.push(RowKind::Insert, &key);
            words.push(group);
        }
    }
    if words.is_empty() {
        return Ok(());
    }
    let bad_keys = || DecodeError { offset: 0, what: "group keys of the aggregate's key types".into() };
    let columns: Vec<ArrayRef> = (0..arity).map(|k| owned.columns().compacted(k)).collect();
    let columns = keys.columns(&columns).ok_or_else(bad_keys)?;
    let chunk_keys = keys.read(&columns).ok_or_else(bad_keys)?;
    for (i, group) in words.iter().enumerate() {
        let id = match chunk_keys.get(table, i) {
            Some(id) => id,
            None => chunk_keys.insert(table, i, || slab.grow()),
        };
        slab.set_words(id, group);
    }
    Ok(())
}
