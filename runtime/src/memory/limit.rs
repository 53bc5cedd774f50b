//! Memory limits: the one a user sets, the ones the system imposes, and the heap a job may
//! fill under them.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use super::{heap_bytes, Bytes};

/// Where a [`MemoryLimit`] comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LimitSource {
    /// The session's `taskmanager.memory.process.size`.
    Configured,
    /// The memory limit of the process's cgroup, read from the named file.
    Cgroup(String),
    /// The process's address-space limit (`ulimit -v`, `RLIMIT_AS`).
    AddressSpace,
    /// The process's data-segment limit (`ulimit -d`, `RLIMIT_DATA`).
    DataSegment,
}

impl fmt::Display for LimitSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LimitSource::Configured => f.write_str("'taskmanager.memory.process.size'"),
            LimitSource::Cgroup(file) => write!(f, "the cgroup's limit in '{file}'"),
            LimitSource::AddressSpace => {
                f.write_str("the address-space limit, ulimit -v, which counts reserved memory too")
            }
            LimitSource::DataSegment => f.write_str("the data-segment limit, ulimit -d"),
        }
    }
}

/// The most memory the process may use, and who says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryLimit {
    /// The limit in bytes.
    pub bytes: u64,
    /// Where it comes from; it also decides how the process's use is measured against it.
    pub source: LimitSource,
}

/// cgroup v1 writes "no limit" as a number near 2^63.
const UNLIMITED: u64 = 1 << 62;

impl MemoryLimit {
    /// A limit the user configured.
    pub fn configured(bytes: u64) -> Self {
        MemoryLimit { bytes, source: LimitSource::Configured }
    }

    /// The tightest limit the system puts on this process (its cgroup's, `ulimit -v`,
    /// `ulimit -d`), or `None` when there is none. Linux only; elsewhere always `None`.
    pub fn detected() -> Option<Self> {
        let mut limits = cgroup_limit().into_iter().collect::<Vec<_>>();
        if let Ok(text) = std::fs::read_to_string("/proc/self/limits") {
            for (name, source) in
                [("Max address space", LimitSource::AddressSpace), ("Max data size", LimitSource::DataSegment)]
            {
                if let Some(bytes) = rlimit(&text, name) {
                    limits.push(MemoryLimit { bytes, source });
                }
            }
        }
        limits.into_iter().min_by_key(|l| l.bytes)
    }

    /// What of this limit's measure the process uses now: for a cgroup, the group's usage
    /// less its file cache (which the kernel drops before it kills anything); for a configured
    /// limit, resident anonymous memory (`RssAnon`; the binary's and libraries' pages mapped
    /// from files are left out for the same reason: how many of them are resident depends on
    /// the page cache, not on the job); for the address-space and data-segment limits, the
    /// mappings they count.
    fn used(&self) -> Option<u64> {
        let fields: &[&str] = match &self.source {
            LimitSource::Cgroup(file) => return cgroup_usage(file),
            LimitSource::Configured => &["RssAnon:", "VmRSS:"],
            LimitSource::AddressSpace => &["VmSize:"],
            LimitSource::DataSegment => &["VmData:"],
        };
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let kb = |field: &str| {
            let line = status.lines().find(|l| l.starts_with(field))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        };
        Some(fields.iter().find_map(|f| kb(f))? * 1024)
    }
}

/// The usage less the file cache of the cgroup whose limit is in `limit_file`: v2
/// `memory.current` less `file`, v1 `memory.usage_in_bytes` less `total_cache`.
fn cgroup_usage(limit_file: &str) -> Option<u64> {
    let dir = std::path::Path::new(limit_file).parent()?;
    let (usage, cache) = if limit_file.ends_with("memory.max") {
        ("memory.current", "file")
    } else {
        ("memory.usage_in_bytes", "total_cache")
    };
    let usage: u64 = std::fs::read_to_string(dir.join(usage)).ok()?.trim().parse().ok()?;
    let stat = std::fs::read_to_string(dir.join("memory.stat")).unwrap_or_default();
    let cache =
        stat.lines().find_map(|l| l.strip_prefix(cache)?.strip_prefix(' ')?.trim().parse::<u64>().ok()).unwrap_or(0);
    Some(usage.saturating_sub(cache))
}

/// The address space the process may still map under `ulimit -v`, when it has that limit.
pub(super) fn address_space_room() -> Option<u64> {
    let limit = rlimit(&std::fs::read_to_string("/proc/self/limits").ok()?, "Max address space")?;
    let mapped = MemoryLimit { bytes: limit, source: LimitSource::AddressSpace }.used().unwrap_or(0);
    Some(limit.saturating_sub(mapped))
}

/// The soft limit of one `Max …` line of `/proc/self/limits`, when it has one.
fn rlimit(limits: &str, name: &str) -> Option<u64> {
    let line = limits.lines().find(|l| l.starts_with(name))?;
    line[name.len()..].split_whitespace().next()?.parse().ok()
}

/// The memory limit of this process's cgroup (v2 `memory.max`, v1 `memory.limit_in_bytes`).
fn cgroup_limit() -> Option<MemoryLimit> {
    let groups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mut candidates = Vec::new();
    for line in groups.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        if id == "0" && controllers.is_empty() {
            candidates.push(format!("/sys/fs/cgroup{path}/memory.max"));
            candidates.push("/sys/fs/cgroup/memory.max".to_string());
        } else if controllers.split(',').any(|c| c == "memory") {
            candidates.push(format!("/sys/fs/cgroup/memory{path}/memory.limit_in_bytes"));
            candidates.push("/sys/fs/cgroup/memory/memory.limit_in_bytes".to_string());
        }
    }
    candidates.into_iter().find_map(|file| {
        let bytes = std::fs::read_to_string(&file).ok()?.trim().parse::<u64>().ok()?;
        (bytes < UNLIMITED).then_some(MemoryLimit { bytes, source: LimitSource::Cgroup(file) })
    })
}

/// How close to its limit a process may come: a tenth of the limit stays free for what grows
/// between two measurements and for the system's own rounding.
const USABLE_TENTHS: u64 = 9;

/// Watches a process's use against a [`MemoryLimit`] as the heap grows, and holds large
/// allocations to what the limit leaves (a twentieth of it stays free): past that they are
/// refused, which state that grows through [`super::fallible`] reports as an error.
///
/// Measuring the use (reading `/proc/self/status`) costs microseconds, so it is measured only
/// when the counted heap has grown by a 64th of the limit (at least 4 MiB) since the last
/// measurement; between two, a check is one atomic load.
#[derive(Debug)]
pub struct MemoryGuard {
    limit: MemoryLimit,
    /// The heap size at which the use is measured next.
    next_measure: AtomicU64,
    step: u64,
}

/// What a [`MemoryGuard`] found when the process came too close to its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exceeded {
    /// The process's use, in the limit's measure.
    pub used: u64,
    /// What the heap held.
    pub heap: u64,
}

impl Drop for MemoryGuard {
    fn drop(&mut self) {
        super::set_ceiling(u64::MAX, None);
    }
}

impl MemoryGuard {
    /// A guard for `limit`, or `None` when the heap is not counted (no
    /// [`super::TrackingAllocator`] installed) or the use cannot be measured.
    pub fn new(limit: MemoryLimit) -> Option<Self> {
        let heap = heap_bytes()?;
        limit.used()?;
        let step = (limit.bytes / 64).max(4 << 20);
        tracing::debug!(limit = limit.bytes, source = %limit.source, heap, "memory guard");
        Some(MemoryGuard { limit, next_measure: AtomicU64::new(0), step })
    }

    /// What the process uses when it has come within a tenth of the limit.
    pub fn exceeded(&self) -> Option<Exceeded> {
        let heap = heap_bytes()?;
        if heap < self.next_measure.load(Ordering::Relaxed) {
            return None;
        }
        let used = self.limit.used()?;
        self.next_measure.store(heap + self.step, Ordering::Relaxed);
        let room = self.limit.bytes.saturating_sub(used).saturating_sub(self.limit.bytes / 20);
        super::set_ceiling(heap.saturating_add(room), Some(&self.limit));
        (used > self.limit.bytes / 10 * USABLE_TENTHS).then_some(Exceeded { used, heap })
    }

    /// What a job whose process came too close to the limit reports.
    pub fn error(&self, found: Exceeded) -> crate::Error {
        crate::Error::MemoryExceeded {
            used: Bytes(found.used),
            limit: Bytes(self.limit.bytes),
            source_of_limit: self.limit.source.to_string(),
            heap: Bytes(found.heap),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn soft_limits_are_read_from_proc_limits() {
        let text = "Limit                     Soft Limit           Hard Limit           Units\n\
                    Max data size             unlimited            unlimited            bytes\n\
                    Max address space         1073741824           unlimited            bytes\n";
        assert_eq!(rlimit(text, "Max address space"), Some(1 << 30));
        assert_eq!(rlimit(text, "Max data size"), None);
    }

    #[test]
    fn byte_counts_print_as_flink_prints_sizes() {
        assert_eq!(Bytes(512).to_string(), "512 bytes");
        assert_eq!(Bytes(1536 << 10).to_string(), "1.5 mb");
        assert_eq!(Bytes(2 << 30).to_string(), "2 gb");
    }
}
