//! `rbm32`: 32-bit RoaringBitmaps in the RoaringBitmap portable format, as Fluss stores them
//! (run containers where smaller, as Java's `runOptimize()` decides — the `roaring` crate's
//! `optimize()` makes the same choices, so the bytes are identical).

use roaring::RoaringBitmap;

use crate::error::{Error, Result};

/// The bitmap in `bytes`.
///
/// # Errors
/// Bytes that are not a portable RoaringBitmap.
pub fn decode(bytes: &[u8]) -> Result<RoaringBitmap> {
    RoaringBitmap::deserialize_from(bytes)
        .map_err(|e| Error::Merge(format!("Unable to deserialize roaring bitmap: {e}")))
}

/// The bytes of `bitmap`, run-optimized as Fluss writes them.
pub fn encode(mut bitmap: RoaringBitmap) -> Vec<u8> {
    bitmap.optimize();
    let mut bytes = Vec::with_capacity(bitmap.serialized_size());
    // Writing into a Vec cannot fail.
    let _ = bitmap.serialize_into(&mut bytes);
    bytes
}

/// The union of two serialized bitmaps, serialized.
///
/// # Errors
/// Either input is not a portable RoaringBitmap.
pub fn union(acc: &[u8], input: &[u8]) -> Result<Vec<u8>> {
    let mut merged = decode(acc)?;
    merged |= decode(input)?;
    Ok(encode(merged))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02X}")).collect()
    }

    fn bitmap(values: impl IntoIterator<Item = u32>) -> RoaringBitmap {
        values.into_iter().collect()
    }

    #[test]
    fn encodes_byte_for_byte_as_fluss() {
        let cases: Vec<(RoaringBitmap, &str)> = vec![
            (bitmap([1, 2]), "3A30000001000000000001001000000001000200"),
            (bitmap([2, 3]), "3A30000001000000000001001000000002000300"),
            (bitmap([1, 2, 3]), "3A300000010000000000020010000000010002000300"),
            (bitmap([1, 2, 3, 4]), "3B3000000100000300010001000300"),
            (bitmap([]), "3A30000000000000"),
            (bitmap([1, 65536, 131077]), "3A30000003000000000000000100000002000000200000002200000024000000010000000500"),
            (bitmap(0..100_000), "3B300100030000FFFF01009F8601000000FFFF010000009F86"),
            (bitmap([u32::MAX]), "3A30000001000000FFFF000010000000FFFF"),
            (
                bitmap([1, 1 << 16, 2 << 16, 3 << 16, 4 << 16].into_iter().chain((5 << 16)..((5 << 16) + 100))),
                "3B300500200000000001000000020000000300000004000000050063003500000037000000390000003B0000003D0000003F00000001000000000000000000010000006300",
            ),
        ];
        for (set, expected) in cases {
            let bytes = encode(set.clone());
            assert_eq!(hex(&bytes), expected, "{set:?}");
            assert_eq!(decode(&bytes).unwrap(), set);
        }
    }

    #[test]
    fn union_merges_as_fluss_does() {
        let merged = union(&encode(bitmap([1, 2])), &encode(bitmap([2, 3]))).unwrap();
        assert_eq!(hex(&merged), "3A300000010000000000020010000000010002000300");
        let error = union(b"not a bitmap", &encode(bitmap([1]))).unwrap_err().to_string();
        assert!(error.starts_with("Unable to deserialize roaring bitmap"), "{error}");
    }
}
