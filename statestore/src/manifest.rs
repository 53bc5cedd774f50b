//! What a checkpoint of a store holds: the runs it consists of, newest first, by the names of
//! their files in the checkpoint's shared directory.

use crate::error::{Error, Result};

const MAGIC: &[u8; 4] = b"WSM1";

/// One run of a checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunRef {
    /// The file's name in the shared directory (unique: runs are named at random).
    pub name: String,
    /// Its first key.
    pub first_key: Vec<u8>,
    /// Its last key.
    pub last_key: Vec<u8>,
    /// Its entries.
    pub entries: u64,
    /// Its size in bytes.
    pub bytes: u64,
}

/// The runs of one store at a checkpoint, newest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Manifest {
    /// The runs, newest first.
    pub runs: Vec<RunRef>,
}

impl Manifest {
    /// The bytes to keep in a checkpoint.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&(self.runs.len() as u32).to_le_bytes());
        for run in &self.runs {
            for part in [run.name.as_bytes(), &run.first_key, &run.last_key] {
                out.extend_from_slice(&(part.len() as u32).to_le_bytes());
                out.extend_from_slice(part);
            }
            out.extend_from_slice(&run.entries.to_le_bytes());
            out.extend_from_slice(&run.bytes.to_le_bytes());
        }
        out
    }

    /// Reads what [`encode`](Self::encode) wrote.
    ///
    /// # Errors
    /// Bytes that are not a manifest.
    pub fn decode(bytes: &[u8]) -> Result<Manifest> {
        Self::read(bytes).ok_or_else(|| Error::damaged("<manifest>", "not a state store manifest"))
    }

    fn read(bytes: &[u8]) -> Option<Manifest> {
        let mut at = 0usize;
        let mut take = |n: usize| -> Option<&[u8]> {
            let s = bytes.get(at..at.checked_add(n)?)?;
            at += n;
            Some(s)
        };
        if take(4)? != MAGIC {
            return None;
        }
        let count = u32::from_le_bytes(take(4)?.try_into().ok()?);
        let mut runs = Vec::new();
        for _ in 0..count {
            let mut part = || -> Option<Vec<u8>> {
                let len = u32::from_le_bytes(take(4)?.try_into().ok()?) as usize;
                Some(take(len)?.to_vec())
            };
            let name = String::from_utf8(part()?).ok()?;
            let (first_key, last_key) = (part()?, part()?);
            let entries = u64::from_le_bytes(take(8)?.try_into().ok()?);
            let bytes = u64::from_le_bytes(take(8)?.try_into().ok()?);
            runs.push(RunRef { name, first_key, last_key, entries, bytes });
        }
        (at == bytes.len()).then_some(Manifest { runs })
    }

    /// Bytes of all its runs.
    pub fn bytes(&self) -> u64 {
        self.runs.iter().map(|r| r.bytes).sum()
    }
}
