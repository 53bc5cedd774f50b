//! `rbm64`: 64-bit bitmaps in the byte layout of Java's `Roaring64Bitmap.serialize` (an ART
//! over the 48 high bits, then 16-bit containers), which is how Fluss stores them. There is no
//! published specification; the layout (all integers little-endian unless noted):
//!
//! ```text
//! u8 tag (0: empty, and nothing follows) · i64 number of high keys · the ART, pre-order:
//!   u8 type (0 NODE4, 1 NODE16, 2 NODE48, 3 NODE256, 4 LEAF) · i16 children · u8 prefix length · prefix
//!   NODE4: 4 key bytes (an i32 packing them big-endian) · NODE16: 16 (two i64) ·
//!   NODE48: 256-byte child index (32 i64) · NODE256: 256-bit presence mask (4 i64) ·
//!   LEAF: 6-byte high key (big-endian) · i64 container index — then the children in key order
//! containers: i32 first-level size (1) · u8 0xFE · i32 capacity · per slot 0x00 (empty) or
//!   0x01 · u8 type (0 run, 1 bitmap, 2 array) · i32 cardinality · payload (as RoaringBitmap's
//!   portable format) · then i64 container count · i32 first-level index · i32 last slot
//! ```
//!
//! [`decode`] reads any such bytes. [`encode`] writes the canonical form — high keys and
//! containers in ascending order, run-optimized — which is byte for byte what Java writes for a
//! bitmap built in ascending order (every single-high-key bitmap, so every Fluss test vector),
//! and which Java reads back in all cases.

use std::collections::BTreeMap;

use roaring::{RoaringBitmap, RoaringTreemap};

use crate::error::{Error, Result};

fn malformed(why: &str) -> Error {
    Error::Merge(format!("Unable to deserialize roaring bitmap: {why}"))
}

/// A little-endian reader over the bytes.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8]> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len()).ok_or_else(|| malformed("truncated"))?;
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }

    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    fn u16(&mut self) -> Result<u16> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    fn i32(&mut self) -> Result<i32> {
        let b = self.take(4)?;
        Ok(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn i64(&mut self) -> Result<i64> {
        let mut b = [0u8; 8];
        b.copy_from_slice(self.take(8)?);
        Ok(i64::from_le_bytes(b))
    }
}

/// Collects `(high key, container index)` from the ART node at the reader, recursively.
fn read_node(r: &mut Reader<'_>, leaves: &mut Vec<(u64, i64)>, depth: usize) -> Result<()> {
    if depth > 8 {
        return Err(malformed("the key tree is deeper than a 48-bit key allows"));
    }
    let kind = r.u8()?;
    let children = r.u16()? as i16;
    let prefix = r.u8()? as usize;
    r.take(prefix)?;
    let body = match kind {
        0 => 4,
        1 => 16,
        2 => 256,
        3 => 32,
        4 => {
            let key = r.take(6)?.iter().fold(0u64, |k, &b| (k << 8) | u64::from(b));
            leaves.push((key, r.i64()?));
            return Ok(());
        }
        other => return Err(malformed(&format!("unknown node type {other}"))),
    };
    r.take(body)?;
    for _ in 0..children.max(0) {
        read_node(r, leaves, depth + 1)?;
    }
    Ok(())
}

/// The 16-bit values of one container payload.
fn read_container(r: &mut Reader<'_>) -> Result<Vec<u16>> {
    let kind = r.u8()?;
    let cardinality = r.i32()?.max(0) as usize;
    Ok(match kind {
        0 => {
            let runs = r.u16()?;
            let mut values = Vec::with_capacity(cardinality);
            for _ in 0..runs {
                let (start, length) = (r.u16()?, r.u16()?);
                values.extend((0..=u32::from(length)).map(|i| (u32::from(start) + i) as u16));
            }
            values
        }
        1 => {
            let mut values = Vec::with_capacity(cardinality);
            for word in 0..1024u32 {
                let bits = r.i64()? as u64;
                values.extend((0..64u32).filter(|b| bits >> b & 1 == 1).map(|b| (word * 64 + b) as u16));
            }
            values
        }
        2 => (0..cardinality).map(|_| r.u16()).collect::<Result<_>>()?,
        other => return Err(malformed(&format!("unknown container type {other}"))),
    })
}

/// The bitmap in `bytes`.
///
/// # Errors
/// Bytes that are not a serialized `Roaring64Bitmap`.
pub fn decode(bytes: &[u8]) -> Result<RoaringTreemap> {
    let mut r = Reader { bytes, at: 0 };
    let mut bitmap = RoaringTreemap::new();
    if r.u8()? == 0 {
        return Ok(bitmap);
    }
    let keys = r.i64()?;
    let mut leaves = Vec::new();
    read_node(&mut r, &mut leaves, 0)?;
    if leaves.len() as i64 != keys {
        return Err(malformed("the number of keys does not match the key tree"));
    }
    let mut containers: BTreeMap<i64, Vec<u16>> = BTreeMap::new();
    for first in 0..r.i32()? {
        r.u8()?; // trim mark
        for slot in 0..r.i32()? {
            if r.u8()? == 1 {
                containers.insert((i64::from(first) << 32) | i64::from(slot), read_container(&mut r)?);
            }
        }
    }
    for (high, index) in leaves {
        let values = containers.get(&index).ok_or_else(|| malformed("a key points to no container"))?;
        bitmap.extend(values.iter().map(|&low| (high << 16) | u64::from(low)));
    }
    Ok(bitmap)
}

/// A container as Java writes it: type, cardinality and payload, run-optimized.
fn container(values: RoaringBitmap) -> (u8, u32, Vec<u8>) {
    // roaring's portable bytes of one container carry the same payload Java writes.
    let cardinality = values.len() as u32;
    let bytes = crate::bitmap32::encode(values);
    let cookie = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    if cookie & 0xFFFF == 12347 {
        // cookie, one run flag byte, one (key, cardinality - 1) header, no offsets
        let run = bytes[4] & 1 == 1;
        let payload = bytes[9..].to_vec();
        let kind = if run {
            0
        } else if cardinality <= 4096 {
            2
        } else {
            1
        };
        (kind, cardinality, payload)
    } else {
        // cookie, container count, one header, one offset
        let kind = if cardinality <= 4096 { 2 } else { 1 };
        (kind, cardinality, bytes[16..].to_vec())
    }
}

/// Java's growth of the container array: 1, 2, 3, 4, 6, 9, 13, 19, 28, …
fn capacity(containers: usize) -> usize {
    let mut capacity = 1;
    while capacity < containers {
        capacity += (capacity / 2).max(1);
    }
    capacity
}

/// Writes the ART over `keys` (6-byte big-endian high keys, ascending, with their container
/// indices) from byte `depth` on.
fn write_node(out: &mut Vec<u8>, keys: &[([u8; 6], usize)], depth: usize) {
    if let [(key, index)] = keys {
        out.extend_from_slice(&[4, 0, 0, 0]);
        out.extend_from_slice(key);
        out.extend_from_slice(&(*index as i64).to_le_bytes());
        return;
    }
    let first = keys[0].0;
    let last = keys[keys.len() - 1].0;
    let mut prefix = 0;
    while depth + prefix < 6 && first[depth + prefix] == last[depth + prefix] {
        prefix += 1;
    }
    let at = depth + prefix;
    let mut groups: Vec<(u8, &[([u8; 6], usize)])> = Vec::new();
    let mut start = 0;
    for i in 1..=keys.len() {
        if i == keys.len() || keys[i].0[at] != keys[start].0[at] {
            groups.push((keys[start].0[at], &keys[start..i]));
            start = i;
        }
    }
    let n = groups.len();
    let kind: u8 = match n {
        0..=4 => 0,
        5..=16 => 1,
        17..=48 => 2,
        _ => 3,
    };
    out.push(kind);
    out.extend_from_slice(&(n as i16).to_le_bytes());
    out.push(prefix as u8);
    out.extend_from_slice(&first[depth..at]);
    let packed = |bytes: &[u8]| -> Vec<u8> {
        // Each 8 (or 4) key bytes form a big-endian integer, written little-endian.
        bytes.chunks(8).flat_map(|c| c.iter().rev().copied().collect::<Vec<u8>>()).collect()
    };
    match kind {
        0 => {
            let mut key_bytes = [0u8; 4];
            groups.iter().enumerate().for_each(|(i, (b, _))| key_bytes[i] = *b);
            out.extend(key_bytes.iter().rev());
        }
        1 => {
            let mut key_bytes = [0u8; 16];
            groups.iter().enumerate().for_each(|(i, (b, _))| key_bytes[i] = *b);
            out.extend(packed(&key_bytes));
        }
        2 => {
            let mut index = [0xFFu8; 256];
            groups.iter().enumerate().for_each(|(i, (b, _))| index[usize::from(*b)] = i as u8);
            out.extend(packed(&index));
        }
        _ => {
            let mut mask = [0u64; 4];
            groups.iter().for_each(|(b, _)| mask[usize::from(*b) / 64] |= 1 << (b % 64));
            mask.iter().for_each(|m| out.extend_from_slice(&m.to_le_bytes()));
        }
    }
    for (_, children) in groups {
        write_node(out, children, at + 1);
    }
}

/// The bytes of `bitmap`, in the canonical form described above.
pub fn encode(bitmap: &RoaringTreemap) -> Vec<u8> {
    if bitmap.is_empty() {
        return vec![0];
    }
    let mut by_key: BTreeMap<u64, RoaringBitmap> = BTreeMap::new();
    for value in bitmap.iter() {
        by_key.entry(value >> 16).or_default().insert((value & 0xFFFF) as u32);
    }
    let keys: Vec<([u8; 6], usize)> = by_key
        .keys()
        .enumerate()
        .map(|(i, k)| {
            let b = k.to_be_bytes();
            ([b[2], b[3], b[4], b[5], b[6], b[7]], i)
        })
        .collect();
    let mut out = vec![1];
    out.extend_from_slice(&(keys.len() as i64).to_le_bytes());
    write_node(&mut out, &keys, 0);
    out.extend_from_slice(&1i32.to_le_bytes());
    out.push(0xFE);
    let slots = capacity(keys.len());
    out.extend_from_slice(&(slots as i32).to_le_bytes());
    for values in by_key.into_values() {
        let (kind, cardinality, payload) = container(values);
        out.extend_from_slice(&[1, kind]);
        out.extend_from_slice(&(cardinality as i32).to_le_bytes());
        out.extend_from_slice(&payload);
    }
    out.extend(std::iter::repeat_n(0u8, slots - keys.len()));
    out.extend_from_slice(&(keys.len() as i64).to_le_bytes());
    out.extend_from_slice(&0i32.to_le_bytes());
    out.extend_from_slice(&(keys.len() as i32 - 1).to_le_bytes());
    out
}

/// The union of two serialized bitmaps, serialized.
///
/// # Errors
/// Either input is not a serialized `Roaring64Bitmap`.
pub fn union(acc: &[u8], input: &[u8]) -> Result<Vec<u8>> {
    let mut merged = decode(acc)?;
    merged |= decode(input)?;
    Ok(encode(&merged))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02X}")).collect()
    }

    fn unhex(text: &str) -> Vec<u8> {
        (0..text.len() / 2).map(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16).unwrap()).collect()
    }

    fn set(values: impl IntoIterator<Item = u64>) -> RoaringTreemap {
        values.into_iter().collect()
    }

    /// Java 1.3.0's bytes for bitmaps built in ascending order: decoded to the set and
    /// re-encoded byte for byte.
    #[test]
    fn round_trips_javas_bytes() {
        let cases: Vec<(RoaringTreemap, &str)> = vec![
            (set([10, 20]), "01010000000000000004000000000000000000000000000000000001000000FE010000000102020000000A00140001000000000000000000000000000000"),
            (set([20, 30]), "01010000000000000004000000000000000000000000000000000001000000FE0100000001020200000014001E0001000000000000000000000000000000"),
            (set([10, 20, 30]), "01010000000000000004000000000000000000000000000000000001000000FE010000000102030000000A0014001E0001000000000000000000000000000000"),
            (set([]), "00"),
            (set([1, 2, 3, 4]), "01010000000000000004000000000000000000000000000000000001000000FE0100000001000400000001000100030001000000000000000000000000000000"),
            (set([1, 65537]), "0102000000000000000002000500000000000000010004000000000000000000000000000000000004000000000000000001010000000000000001000000FE020000000102010000000100010201000000010002000000000000000000000001000000"),
            (set([1, (1 << 32) + 5]), "010200000000000000000200030000000000010004000000000000000000000000000000000004000000000000010000010000000000000001000000FE020000000102010000000100010201000000050002000000000000000000000001000000"),
            (set([1, 65537, 131073, 196609]), "0104000000000000000004000500000000000302010004000000000000000000000000000000000004000000000000000001010000000000000004000000000000000002020000000000000004000000000000000003030000000000000001000000FE04000000010201000000010001020100000001000102010000000100010201000000010004000000000000000000000003000000"),
            (set([1, 65537, 131073, 196609, 262145]), "0105000000000000000105000500000000000000000403020100000000000000000004000000000000000000000000000000000004000000000000000001010000000000000004000000000000000002020000000000000004000000000000000003030000000000000004000000000000000004040000000000000001000000FE06000000010201000000010001020100000001000102010000000100010201000000010001020100000001000005000000000000000000000004000000"),
            (set(0..100_000), "0102000000000000000002000500000000000000010004000000000000000000000000000000000004000000000000000001010000000000000001000000FE0200000001000000010001000000FFFF0100A0860000010000009F8602000000000000000000000001000000"),
        ];
        for (expected, bytes) in cases {
            assert_eq!(decode(&unhex(bytes)).unwrap(), expected, "decoding {bytes}");
            assert_eq!(hex(&encode(&expected)), bytes, "encoding {expected:?}");
        }
    }

    /// Java bytes whose container order follows insertion history still decode to their set.
    #[test]
    fn reads_bitmaps_built_in_any_order() {
        let cases = [
            (set([0, u64::MAX]), "010200000000000000000200000000FF0004000000000000000000010000000000000004000000FFFFFFFFFFFF000000000000000001000000FE02000000010201000000FFFF010201000000000002000000000000000000000001000000"),
            (set([1, 65537, 131073, 196609]), "0104000000000000000004000500000000000302010004000000000000000000020000000000000004000000000000000001030000000000000004000000000000000002000000000000000004000000000000000003010000000000000001000000FE04000000010201000000010001020100000001000102010000000100010201000000010004000000000000000000000003000000"),
        ];
        for (expected, bytes) in cases {
            assert_eq!(decode(&unhex(bytes)).unwrap(), expected);
        }
    }

    #[test]
    fn union_merges_as_fluss_does_and_bad_bytes_are_an_error() {
        let merged = union(&encode(&set([10, 20])), &encode(&set([20, 30]))).unwrap();
        assert_eq!(hex(&merged), "01010000000000000004000000000000000000000000000000000001000000FE010000000102030000000A0014001E0001000000000000000000000000000000");
        assert!(union(&[1, 2, 3], &encode(&set([1]))).unwrap_err().to_string().contains("Unable to deserialize"));
        // Large and sparse sets survive the round trip, whatever their node types.
        let sparse = set((0..300u64).map(|i| i << 20).chain([u64::MAX, 1 << 40]));
        assert_eq!(decode(&encode(&sparse)).unwrap(), sparse);
    }
}
