//! A Bloom filter over a run's keys: a `get` of a key the run does not hold reads no block of it
//! (but for about one key in a hundred, at 10 bits per key).

/// A stable 64-bit hash of `bytes` (the filter is stored, so the hash must never change).
pub(crate) fn hash64(bytes: &[u8]) -> u64 {
    // FNV-1a over the bytes, then SplitMix64's finalizer to spread the bits.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h ^= h >> 30;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^= h >> 27;
    h = h.wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

/// Probes per key: optimal for 10 bits per key.
const PROBES: u32 = 7;
/// Bits per key.
const BITS_PER_KEY: usize = 10;

/// A Bloom filter: no false negatives.
#[derive(Debug, Clone)]
pub(crate) struct Bloom {
    bits: Vec<u8>,
}

impl Bloom {
    /// A filter holding the keys of `hashes`.
    pub(crate) fn build(hashes: &[u64]) -> Bloom {
        let bytes = (hashes.len() * BITS_PER_KEY).div_ceil(8).max(8);
        let mut bits = vec![0u8; bytes];
        for &h in hashes {
            for bit in probes(h, bytes * 8) {
                bits[bit / 8] |= 1 << (bit % 8);
            }
        }
        Bloom { bits }
    }

    /// The filter of stored bytes.
    pub(crate) fn from_bytes(bits: Vec<u8>) -> Bloom {
        Bloom { bits }
    }

    /// The bytes to store.
    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.bits
    }

    /// Whether the key of hash `h` may be in the set (false: it is not).
    pub(crate) fn may_contain(&self, h: u64) -> bool {
        !self.bits.is_empty() && probes(h, self.bits.len() * 8).all(|bit| self.bits[bit / 8] & (1 << (bit % 8)) != 0)
    }
}

/// The bits of `h` among `n`: double hashing.
fn probes(h: u64, n: usize) -> impl Iterator<Item = usize> {
    let n = n as u64;
    let step = h.rotate_left(32) | 1;
    (0..u64::from(PROBES)).map(move |i| (h.wrapping_add(i.wrapping_mul(step)) % n) as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_put_in_is_found_and_most_others_are_not() {
        let hashes: Vec<u64> = (0..10_000u64).map(|i| hash64(&i.to_be_bytes())).collect();
        let bloom = Bloom::from_bytes(Bloom::build(&hashes).as_bytes().to_vec());
        assert!(hashes.iter().all(|&h| bloom.may_contain(h)));
        let false_positives = (10_000..110_000u64).filter(|i| bloom.may_contain(hash64(&i.to_be_bytes()))).count();
        assert!(false_positives < 2_000, "{false_positives} false positives in 100000");
    }
}
