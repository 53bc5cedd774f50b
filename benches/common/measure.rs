//! The CPU seconds and peak memory of a command's whole process tree (an engine under a
//! launcher: Flink's JVM under Python), sampled from `/proc` every 50 ms: the measure the
//! benchmarks that run weir beside Apache Flink take of both.

use std::process::Command;
use std::time::Duration;

/// What one run of a command cost.
pub struct Measured {
    /// User and system CPU seconds of every process of the tree.
    pub cpu: f64,
    /// The most memory the tree held resident at once, in MiB.
    pub peak_mb: f64,
}

/// The pids of `root` and all its descendants.
fn process_tree(root: u32) -> Vec<u32> {
    let mut parents = Vec::new();
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for entry in entries.flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
            let ppid = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok());
            if let Some(ppid) = ppid {
                parents.push((pid, ppid));
            }
        }
    }
    let mut tree = vec![root];
    let mut i = 0;
    while i < tree.len() {
        let parent = tree[i];
        tree.extend(parents.iter().filter(|(_, pp)| *pp == parent).map(|(p, _)| *p));
        i += 1;
    }
    tree
}

/// CPU ticks (user + system) and resident pages of `pid`.
fn usage(pid: u32) -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    let pages = fields.get(21)?.parse::<u64>().ok()?;
    Some((ticks, pages))
}

/// Runs `command`, sampling its process tree's CPU and memory until it ends.
pub fn measure(mut command: Command) -> Result<Measured, String> {
    let mut child = command
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let mut ticks: std::collections::BTreeMap<u32, u64> = Default::default();
    let mut peak_pages = 0u64;
    let status = loop {
        let mut pages = 0;
        for pid in process_tree(child.id()) {
            if let Some((t, p)) = usage(pid) {
                ticks.insert(pid, t);
                pages += p;
            }
        }
        peak_pages = peak_pages.max(pages);
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    if !status.success() {
        let mut error = String::new();
        if let Some(mut stderr) = child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut stderr, &mut error);
        }
        let last: Vec<&str> = error.lines().rev().take(3).collect();
        return Err(last.join(" / "));
    }
    Ok(Measured {
        cpu: ticks.values().sum::<u64>() as f64 / 100.0,
        peak_mb: (peak_pages * 4096) as f64 / (1024.0 * 1024.0),
    })
}
