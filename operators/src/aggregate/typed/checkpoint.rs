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
        let start = out.len();
        key_columns.iter().for_each(|column| out.value(&value_at(column.as_ref(), i)));
        slab.words(id).iter().for_each(|&w| out.i64(w));
        if i == 0 {
            // Groups of fixed-width keys take the first one's size; others about it.
            out.reserve((out.len() - start) * (ids.len() - 1));
        }
    }
}

/// One group as [`write_groups`] writes it: its key values and its words.
type Entry = (Vec<Value>, Vec<i64>);

/// Reads a section [`write_groups`] wrote (keys of `arity` columns): its words per group and
/// the groups whose keys `owns` accepts.
fn read_entries(
    input: &mut Decoder<'_>,
    arity: usize,
    owns: impl Fn(&[Value]) -> bool,
) -> Result<(usize, Vec<Entry>), DecodeError> {
    let stride = input.u32()? as usize;
    let mut kept = Vec::new();
    for _ in 0..input.u32()? {
        let key: Vec<Value> = (0..arity).map(|_| input.value()).collect::<Result<_, _>>()?;
        let words: Vec<i64> = (0..stride).map(|_| input.i64()).collect::<Result<_, _>>()?;
        if owns(&key) {
            kept.push((key, words));
        }
    }
    Ok((stride, kept))
}

/// Rewrites as one section the groups of `sections` (each written by [`write_groups`], with
/// keys of `arity` columns) whose keys `owns` accepts, without the typed state they belong to.
///
/// # Errors
/// A damaged encoding, or sections of different layouts.
pub(crate) fn filter_groups(
    sections: Vec<Decoder<'_>>,
    arity: usize,
    owns: impl Fn(&[Value]) -> bool,
    out: &mut Encoder,
) -> Result<(), DecodeError> {
    let mut stride = None;
    let mut kept: Vec<Entry> = Vec::new();
    for mut input in sections {
        let (s, entries) = read_entries(&mut input, arity, &owns)?;
        if stride.is_some_and(|t| t != s) {
            return Err(DecodeError { offset: 0, what: format!("groups of one layout, not {s} words") });
        }
        stride = Some(s);
        kept.extend(entries);
    }
    out.u32(stride.unwrap_or(0) as u32);
    out.u32(kept.len() as u32);
    for (key, words) in kept {
        key.iter().for_each(|v| out.value(v));
        words.iter().for_each(|&w| out.i64(w));
    }
    Ok(())
}

/// Rewrites a section [`write_groups`] wrote (keys of `arity` columns) for other calls: each
/// group's words for call `i` are those of old call `calls[i]`, or zero (an empty accumulator
/// without a last result) when it is `None`. A group's words are `[rows, validity of the last
/// results, (value, count, last) per call]` ([`super::Slab`]).
///
/// # Errors
/// A damaged encoding.
pub(crate) fn remap_groups(
    mut input: Decoder<'_>,
    arity: usize,
    calls: &[Option<usize>],
    out: &mut Encoder,
) -> Result<(), DecodeError> {
    let (_, entries) = read_entries(&mut input, arity, |_| true)?;
    out.u32((2 + 3 * calls.len()) as u32);
    out.u32(entries.len() as u32);
    for (key, words) in entries {
        key.iter().for_each(|v| out.value(v));
        let old_call = |j: usize| words.get(2 + 3 * j..2 + 3 * j + 3);
        let mut valid = 0i64;
        for (i, old) in calls.iter().enumerate() {
            if let Some(j) = old {
                valid |= ((words[1] >> j) & 1) << i;
            }
        }
        out.i64(words[0]);
        out.i64(valid);
        for old in calls {
            let triple = old.and_then(old_call).unwrap_or(&[0, 0, 0]);
            triple.iter().for_each(|&w| out.i64(w));
        }
    }
    Ok(())
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
    let types: Arc<[ArrowType]> = keys.arrow_types().into();
    let arity = types.len();
    let (stride, entries) = read_entries(input, arity, owns)?;
    if stride != slab.stride() {
        return Err(DecodeError { offset: 0, what: format!("{} words per group, not {stride}", slab.stride()) });
    }
    if entries.is_empty() {
        return Ok(());
    }
    let mut owned = Chunk::with_arrow_types(Arc::clone(&types), entries.len());
    entries.iter().for_each(|(key, _)| owned.push(RowKind::Insert, key));
    let bad_keys = || DecodeError { offset: 0, what: "group keys of the aggregate's key types".into() };
    let columns: Vec<ArrayRef> = (0..arity).map(|k| owned.columns().compacted(k)).collect();
    let columns = keys.columns(&columns).ok_or_else(bad_keys)?;
    let chunk_keys = keys.read(&columns).ok_or_else(bad_keys)?;
    for (i, (_, group)) in entries.iter().enumerate() {
        let id = match chunk_keys.get(table, i) {
            Some(id) => id,
            None => chunk_keys.insert(table, i, || slab.grow()),
        };
        slab.set_words(id, group);
    }
    Ok(())
}
