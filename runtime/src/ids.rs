//! Ids that stay the same across builds and platforms: a job's id ([`JobId`]) and the hash
//! that makes ids (`Fnv`).

use std::sync::atomic::Ordering;
use std::time::{SystemTime, UNIX_EPOCH};

/// A job's id: 32 hexadecimal digits, as Flink writes a `JobID`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JobId(String);

impl JobId {
    /// A new id, different from every other this process makes.
    pub fn random() -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let count = NEXT.fetch_add(1, Ordering::Relaxed);
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
        let mixed = Fnv::of(&[&nanos.to_le_bytes(), &std::process::id().to_le_bytes(), &count.to_le_bytes()]);
        JobId(format!("{mixed:016x}{:016x}", Fnv::of(&[&mixed.to_le_bytes(), &count.to_le_bytes()])))
    }

    /// The id as Flink prints it.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for JobId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// FNV-1a, 64 bits: a hash that stays the same across builds and platforms.
pub(crate) struct Fnv(pub(crate) u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    /// The hash of `parts`, one after another.
    pub(crate) fn of(parts: &[&[u8]]) -> u64 {
        let mut hash = Fnv::default();
        parts.iter().for_each(|part| hash.write(part));
        hash.0
    }

    /// Adds `bytes` to the hash.
    pub(crate) fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}
