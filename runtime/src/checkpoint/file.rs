//! Snapshot files: a versioned, checksummed container, written so that a crash never leaves
//! a file that reads as complete.
//!
//! ```text
//! "WEIRSNAP"   8 bytes, the magic
//! version      u32 LE, the format version (this reader takes 3)
//! length       u64 LE, the payload's length
//! payload      `length` bytes
//! crc32        u32 LE, CRC-32 (IEEE) of the payload
//! ```
//!
//! A file is written under a temporary name in its directory, flushed to disk and renamed into
//! place, so a reader finds either no file or a whole one. A reader checks all four parts and
//! refuses a file that fails any, saying which: it never hands out part of a payload.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The first bytes of every snapshot file.
pub const MAGIC: &[u8; 8] = b"WEIRSNAP";
/// The format version this build writes and reads.
pub const FORMAT_VERSION: u32 = 3;
const HEADER: usize = 8 + 4 + 8;

/// Why a snapshot file cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// The file system refused.
    #[error("cannot read snapshot '{}': {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the file system said.
        source: std::io::Error,
    },
    /// Something other than a regular file (a directory, a FIFO, a device) has its name.
    #[error("snapshot '{}' is not a regular file", path.display())]
    NotAFile {
        /// The path.
        path: PathBuf,
    },
    /// The file does not start as a snapshot does.
    #[error("'{}' is not a weir snapshot (it does not start with WEIRSNAP)", path.display())]
    NotASnapshot {
        /// The file.
        path: PathBuf,
    },
    /// Written by a format this build does not read.
    #[error("snapshot '{}' has format version {found}; this weir reads version {FORMAT_VERSION}", path.display())]
    UnsupportedVersion {
        /// The file.
        path: PathBuf,
        /// The version in the file.
        found: u32,
    },
    /// Shorter or longer than its header says: cut off while written or copied.
    #[error("snapshot '{}' is incomplete: {found} bytes where its header announces {expected}", path.display())]
    Truncated {
        /// The file.
        path: PathBuf,
        /// The size the header announces.
        expected: u64,
        /// The file's size.
        found: u64,
    },
    /// The payload is not what was written.
    #[error("snapshot '{}' is damaged: its checksum does not match its contents", path.display())]
    ChecksumMismatch {
        /// The file.
        path: PathBuf,
    },
}

/// Writes `payload` as a snapshot file at `path`: under a temporary name, synced, then renamed.
///
/// # Errors
/// What the file system reports; `path` is then left as it was.
pub fn write_snapshot(path: &Path, payload: &[u8]) -> std::io::Result<()> {
    write_snapshot_parts(path, &[payload.into()])
}

/// Writes the concatenation of `parts` as the payload of a snapshot file at `path`, as
/// [`write_snapshot`] does, without joining them in memory first.
///
/// # Errors
/// What the file system reports; `path` is then left as it was.
pub fn write_snapshot_parts(path: &Path, parts: &[std::borrow::Cow<'_, [u8]>]) -> std::io::Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("snapshot");
    let temporary = dir.join(format!(".{name}.{}.inprogress", std::process::id()));
    let written = (|| {
        let mut file = std::io::BufWriter::with_capacity(1 << 16, File::create(&temporary)?);
        let length: usize = parts.iter().map(|p| p.len()).sum();
        file.write_all(MAGIC)?;
        file.write_all(&FORMAT_VERSION.to_le_bytes())?;
        file.write_all(&(length as u64).to_le_bytes())?;
        let mut crc = crc32fast::Hasher::new();
        for part in parts {
            crc.update(part);
            file.write_all(part)?;
        }
        file.write_all(&crc.finalize().to_le_bytes())?;
        file.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        fs::rename(&temporary, path)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    written?;
    // The rename itself survives a crash once the directory is synced.
    File::open(dir).and_then(|d| d.sync_all())
}

/// Reads the payload of the snapshot file at `path`, after checking its magic, version, length
/// and checksum.
///
/// # Errors
/// A [`SnapshotError`] saying which check failed.
pub fn read_snapshot(path: &Path) -> Result<Vec<u8>, SnapshotError> {
    let io = |source| SnapshotError::Io { path: path.to_path_buf(), source };
    // Only a regular file is read: a FIFO or device in its place would block or never end.
    let metadata = fs::metadata(path).map_err(io)?;
    if !metadata.is_file() {
        return Err(SnapshotError::NotAFile { path: path.to_path_buf() });
    }
    let bytes = fs::read(path).map_err(io)?;
    let path_buf = || path.to_path_buf();
    if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
        return Err(SnapshotError::NotASnapshot { path: path_buf() });
    }
    if bytes.len() < HEADER {
        return Err(SnapshotError::Truncated {
            path: path_buf(),
            expected: HEADER as u64 + 4,
            found: bytes.len() as u64,
        });
    }
    let version = u32::from_le_bytes(bytes[8..12].try_into().unwrap_or_default());
    if version != FORMAT_VERSION {
        return Err(SnapshotError::UnsupportedVersion { path: path_buf(), found: version });
    }
    let length = u64::from_le_bytes(bytes[12..20].try_into().unwrap_or_default());
    let expected = (HEADER as u64).saturating_add(length).saturating_add(4);
    if bytes.len() as u64 != expected {
        return Err(SnapshotError::Truncated { path: path_buf(), expected, found: bytes.len() as u64 });
    }
    let payload = &bytes[HEADER..bytes.len() - 4];
    let stored = u32::from_le_bytes(bytes[bytes.len() - 4..].try_into().unwrap_or_default());
    if crc32fast::hash(payload) != stored {
        return Err(SnapshotError::ChecksumMismatch { path: path_buf() });
    }
    Ok(payload.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_reads_back_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("chk-1").join("state");
        write_snapshot(&path, b"hello state").unwrap();
        assert_eq!(read_snapshot(&path).unwrap(), b"hello state");
        let names: Vec<String> = fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names, vec!["state".to_string()]);
    }

    #[test]
    fn damaged_snapshots_are_refused_with_what_is_wrong() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state");
        write_snapshot(&path, b"0123456789").unwrap();
        let whole = fs::read(&path).unwrap();

        fs::write(&path, &whole[..whole.len() - 3]).unwrap();
        let error = read_snapshot(&path).unwrap_err();
        assert!(matches!(error, SnapshotError::Truncated { expected: 34, found: 31, .. }), "{error}");
        assert!(error.to_string().contains("is incomplete: 31 bytes where its header announces 34"));

        let mut flipped = whole.clone();
        flipped[25] ^= 1;
        fs::write(&path, &flipped).unwrap();
        assert!(matches!(read_snapshot(&path).unwrap_err(), SnapshotError::ChecksumMismatch { .. }));

        let mut newer = whole.clone();
        newer[8] = 9;
        fs::write(&path, &newer).unwrap();
        let error = read_snapshot(&path).unwrap_err();
        assert!(error.to_string().ends_with("has format version 9; this weir reads version 3"), "{error}");

        fs::write(&path, b"{\"not\": \"a snapshot\"}").unwrap();
        assert!(matches!(read_snapshot(&path).unwrap_err(), SnapshotError::NotASnapshot { .. }));
        assert!(matches!(read_snapshot(&dir.path().join("missing")).unwrap_err(), SnapshotError::Io { .. }));
        assert!(matches!(read_snapshot(dir.path()).unwrap_err(), SnapshotError::NotAFile { .. }));
    }
}
