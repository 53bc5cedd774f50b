//! What a checkpoint of a store holds: its layers, newest first, then its base, in key order,
//! by the names of their files in the checkpoint's shared directory.

use crate::error::{Error, Result};
use crate::key_groups::KeyGroupSet;

/// Checkpoints written before layers and base: every run a layer, nothing merged.
const MAGIC_V1: &[u8; 4] = b"WSM1";
const MAGIC: &[u8; 4] = b"WSM2";

/// Where a run sits in its store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunKind {
    /// A layer: entries of a key range's whole history since the base took its last merge;
    /// newer layers shadow older ones, and every layer shadows the base.
    Layer,
    /// A file of the base: the store's oldest entries, one file per key range, no two overlapping.
    Base,
}

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
    /// A layer or a file of the base.
    pub kind: RunKind,
    /// For a layer, the key groups already merged into the base: its entries there are dead.
    pub merged: KeyGroupSet,
}

/// The runs of one store at a checkpoint: its layers newest first, then its base files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Manifest {
    /// The runs.
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
            out.push(match run.kind {
                RunKind::Layer => 0,
                RunKind::Base => 1,
            });
            run.merged.encode(&mut out);
        }
        out
    }

    /// Reads what [`encode`](Self::encode) wrote, or a manifest of a version before layers
    /// (whose runs are all layers).
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
        let layered = match take(4)? {
            m if m == MAGIC => true,
            m if m == MAGIC_V1 => false,
            _ => return None,
        };
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
            let (kind, merged) = if layered {
                let kind = match take(1)?[0] {
                    0 => RunKind::Layer,
                    1 => RunKind::Base,
                    _ => return None,
                };
                let ranges = u32::from_le_bytes(take(4)?.try_into().ok()?);
                let mut pairs = Vec::new();
                for _ in 0..ranges {
                    let a = u16::from_le_bytes(take(2)?.try_into().ok()?);
                    let b = u16::from_le_bytes(take(2)?.try_into().ok()?);
                    pairs.push((a, b));
                }
                (kind, KeyGroupSet::from_sorted(pairs)?)
            } else {
                (RunKind::Layer, KeyGroupSet::default())
            };
            runs.push(RunRef { name, first_key, last_key, entries, bytes, kind, merged });
        }
        (at == bytes.len()).then_some(Manifest { runs })
    }

    /// Bytes of all its runs.
    pub fn bytes(&self) -> u64 {
        self.runs.iter().map(|r| r.bytes).sum()
    }
}
