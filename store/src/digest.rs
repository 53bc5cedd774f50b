//! A table's digest: how many records it holds and the wrapping sum of a 64-bit hash of each
//! record (its key and its value as stored). Every write updates it in the same transaction;
//! a full scan recomputes it from what it read and compares. A value's own checksum catches a
//! damaged record; the digest catches what no record's checksum can: records a damaged index
//! page hides from a scan, or shows twice.

/// The count and hash sum of a table's records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Digest {
    /// Records in the table.
    pub count: u64,
    /// Wrapping sum of the records' hashes.
    pub sum: u64,
}

impl Digest {
    /// Counts record `key` → `stored` in.
    pub fn add(&mut self, key: &[u8], stored: &[u8]) {
        self.count = self.count.wrapping_add(1);
        self.sum = self.sum.wrapping_add(record_hash(key, stored));
    }

    /// Counts record `key` → `stored` out.
    pub fn remove(&mut self, key: &[u8], stored: &[u8]) {
        self.count = self.count.wrapping_sub(1);
        self.sum = self.sum.wrapping_sub(record_hash(key, stored));
    }

    /// The digest as stored: count then sum, little-endian.
    pub fn encode(&self) -> [u8; 16] {
        let mut bytes = [0; 16];
        bytes[..8].copy_from_slice(&self.count.to_le_bytes());
        bytes[8..].copy_from_slice(&self.sum.to_le_bytes());
        bytes
    }

    /// A stored digest; `None` when the bytes are not one.
    pub fn decode(bytes: &[u8]) -> Option<Self> {
        let count = u64::from_le_bytes(bytes.get(..8)?.try_into().ok()?);
        let sum = u64::from_le_bytes(bytes.get(8..16)?.try_into().ok()?);
        (bytes.len() == 16).then_some(Digest { count, sum })
    }
}

/// FNV-1a over the key's length, the key and the stored value.
fn record_hash(key: &[u8], stored: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let length = (key.len() as u64).to_le_bytes();
    for &byte in length.iter().chain(key).chain(stored) {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_digest_counts_records_in_and_out_in_any_order() {
        let mut a = Digest::default();
        a.add(b"k1", b"v1");
        a.add(b"k2", b"v2");
        let mut b = Digest::default();
        b.add(b"k2", b"v2");
        b.add(b"k3", b"v3");
        b.add(b"k1", b"v1");
        b.remove(b"k3", b"v3");
        assert_eq!(a, b);
        assert_eq!(Digest::decode(&a.encode()), Some(a));
        assert_eq!(Digest::decode(&a.encode()[..15]), None);
        let mut twice = a;
        twice.add(b"k1", b"v1");
        twice.remove(b"k2", b"v2");
        assert_ne!(twice, a, "one record shown twice and one hidden");
        let mut moved = Digest::default();
        moved.add(b"k1v", b"1");
        moved.add(b"k2", b"v2");
        assert_ne!(moved, a, "key and value bytes are told apart");
    }
}
