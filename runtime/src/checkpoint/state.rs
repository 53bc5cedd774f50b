//! What an operator writes into a checkpoint and reads back on restore: named sections of
//! encoded values ([`super::codec`]).

use std::sync::Arc;

use parking_lot::Mutex;

use super::codec::{DecodeError, Decoder, Encoder};

/// Buffers of states let go (a checkpoint older than the retained ones), by section name, kept
/// for the next snapshots: a section writes into the buffer a section of its name had, memory
/// the process already has and about the size it needs, instead of fresh pages, which the
/// system must first clear (on a virtual machine, dearly).
static SPARE_BUFFERS: Mutex<Vec<(String, Vec<u8>)>> = Mutex::new(Vec::new());
/// Spare buffers kept at most.
const MAX_SPARE_BUFFERS: usize = 64;
/// Buffers smaller than this are not worth keeping.
const MIN_SPARE_CAPACITY: usize = 64 * 1024;

/// A spare buffer a section named `name` had, emptied, or a new one.
fn spare_buffer(name: &str) -> Vec<u8> {
    let mut spares = SPARE_BUFFERS.lock();
    match spares.iter().position(|(n, _)| n == name) {
        Some(at) => spares.swap_remove(at).1,
        None => Vec::new(),
    }
}

fn give_back(name: String, mut bytes: Vec<u8>) {
    if bytes.capacity() < MIN_SPARE_CAPACITY {
        return;
    }
    bytes.clear();
    let mut spares = SPARE_BUFFERS.lock();
    if spares.len() < MAX_SPARE_BUFFERS {
        spares.push((name, bytes));
    }
}

/// The state one operator (or source) writes at a checkpoint: sections with distinct names,
/// each a run of encoded values. An operator without state writes none.
#[derive(Debug, Default, Clone)]
pub struct StateWriter {
    sections: Vec<(String, Encoder)>,
}

impl StateWriter {
    /// An empty writer.
    pub fn new() -> Self {
        StateWriter::default()
    }

    /// The section `name`, started empty the first time it is asked for.
    pub fn section(&mut self, name: &str) -> &mut Encoder {
        let at = match self.sections.iter().position(|(n, _)| n == name) {
            Some(at) => at,
            None => {
                self.sections.push((name.to_string(), Encoder::from_buffer(spare_buffer(name))));
                self.sections.len() - 1
            }
        };
        &mut self.sections[at].1
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.sections.is_empty()
    }

    /// The state as it is stored: the section count, then each section's name and bytes.
    pub fn encode(self, out: &mut Encoder) {
        out.u32(self.sections.len() as u32);
        for (name, section) in self.sections {
            out.str(&name);
            out.bytes(&section.into_bytes());
        }
    }

    /// The state as a reader sees it after a restore.
    pub fn into_reader(self) -> StateReader {
        let sections = self.sections.into_iter().map(|(n, e)| (n, e.into_bytes())).collect();
        StateReader { sections: Arc::new(Sections(sections)) }
    }
}

/// The sections of a state; their buffers are kept for later snapshots when it is let go.
#[derive(Debug, Default, PartialEq, Eq)]
struct Sections(Vec<(String, Vec<u8>)>);

impl Drop for Sections {
    fn drop(&mut self) {
        std::mem::take(&mut self.0).into_iter().for_each(|(name, bytes)| give_back(name, bytes));
    }
}

/// State restored from a checkpoint: the sections one operator wrote. Cloning it shares the
/// bytes (every subtask of a restored job is handed every old subtask's state).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct StateReader {
    sections: Arc<Sections>,
}

impl StateReader {
    /// Bytes of state held (the sections' bytes, without their names).
    pub fn byte_len(&self) -> u64 {
        self.sections.0.iter().map(|(_, bytes)| bytes.len() as u64).sum()
    }

    /// Reads what [`StateWriter::encode`] wrote.
    ///
    /// # Errors
    /// A damaged encoding.
    pub fn decode(input: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        let count = input.u32()?;
        let mut sections = Vec::new();
        for _ in 0..count {
            let name = input.str()?.to_string();
            sections.push((name, input.bytes()?.to_vec()));
        }
        Ok(StateReader { sections: Arc::new(Sections(sections)) })
    }

    /// Writes the state as [`StateWriter::encode`] does, into `out` and, for the sections'
    /// bytes, as slices of its own into `pieces` (so a large state is written to a file without
    /// being copied): `out` is cut into `pieces` before each section's bytes.
    /// `rewrite` may give a section other bytes to be stored in its place (its name and its
    /// bytes in, `None` to store it as it is).
    pub fn encode_into<'a>(
        &'a self,
        out: &mut Encoder,
        pieces: &mut Vec<std::borrow::Cow<'a, [u8]>>,
        rewrite: &dyn Fn(&str, &[u8]) -> Option<Vec<u8>>,
    ) {
        out.u32(self.sections.0.len() as u32);
        for (name, bytes) in self.sections.0.iter() {
            let stored: std::borrow::Cow<'a, [u8]> = match rewrite(name, bytes) {
                Some(other) => other.into(),
                None => bytes.as_slice().into(),
            };
            out.str(name);
            out.u32(stored.len() as u32);
            pieces.push(std::mem::take(out).into_bytes().into());
            pieces.push(stored);
        }
    }

    /// A decoder over section `name`, if the operator wrote one.
    pub fn section(&self, name: &str) -> Option<Decoder<'_>> {
        self.sections.0.iter().find(|(n, _)| n == name).map(|(_, bytes)| Decoder::new(bytes))
    }

    /// The names of the sections, in the order they were written.
    pub fn section_names(&self) -> impl Iterator<Item = &str> {
        self.sections.0.iter().map(|(n, _)| n.as_str())
    }

    /// Whether the operator wrote nothing.
    pub fn is_empty(&self) -> bool {
        self.sections.0.is_empty()
    }

    /// This state with section `name` holding `bytes` (replacing one of that name): how a
    /// restore hands an operator what it must know about the state besides the state itself.
    pub fn with_section(&self, name: &str, bytes: Vec<u8>) -> StateReader {
        let mut sections: Vec<(String, Vec<u8>)> =
            self.sections.0.iter().filter(|(n, _)| n != name).map(|(n, b)| (n.clone(), b.clone())).collect();
        sections.push((name.to_string(), bytes));
        StateReader { sections: Arc::new(Sections(sections)) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Value;

    #[test]
    fn sections_read_back_by_name() {
        let mut w = StateWriter::new();
        w.section("counts").value(&Value::BigInt(3));
        w.section("position").u64(42);
        w.section("counts").value(&Value::string("a"));
        let mut e = Encoder::new();
        w.encode(&mut e);
        let bytes = e.into_bytes();
        let r = StateReader::decode(&mut Decoder::new(&bytes)).unwrap();
        assert_eq!(r.section_names().collect::<Vec<_>>(), ["counts", "position"]);
        let mut counts = r.section("counts").unwrap();
        assert_eq!(counts.value().unwrap(), Value::BigInt(3));
        assert_eq!(counts.value().unwrap().as_str(), Some("a"));
        assert!(counts.is_at_end());
        assert_eq!(r.section("position").unwrap().u64().unwrap(), 42);
        assert!(r.section("missing").is_none());
    }
}
