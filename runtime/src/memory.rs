//! Memory accounting: the bytes the process's heap holds, the limit a job must stay under,
//! and a clear end when it does not.
//!
//! A program that wants its jobs to stop cleanly at a memory limit installs
//! [`TrackingAllocator`] as its global allocator (the `weir` command does). It counts the
//! bytes allocated and not yet freed; [`heap_bytes`] reads the count. Each job watches its
//! [`MemoryLimit`] (`taskmanager.memory.process.size`, else the process's cgroup or `ulimit`
//! limit) with a [`MemoryGuard`]: after each step of work a subtask asks the guard, which
//! measures the process's use whenever the heap has grown by a step, and the subtask that finds
//! the process within a tenth of its limit fails the job, naming itself, as a JVM names the
//! task whose allocation failed. An allocation the system refuses all the same (one larger
//! than the tenth left) still ends the process, but only after a message naming the operator
//! that was running on the thread.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;
use std::fmt::{self, Write as _};
use std::io::Write as _;
use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicU64, Ordering};

/// Bytes a thread counts before adding them to the shared count: the shared count is off by
/// at most this much per thread, and a thread touches the shared counter once per this many
/// bytes allocated or freed instead of on every allocation.
const FLUSH_BYTES: isize = 256 << 10;

/// Heap bytes of all threads, up to each thread's unflushed count.
static HEAP: AtomicIsize = AtomicIsize::new(0);
/// Whether a [`TrackingAllocator`] is the global allocator.
static TRACKING: AtomicBool = AtomicBool::new(false);
/// The heap size no large allocation may take the heap past ([`MemoryGuard`] sets it from its
/// last measurement); `u64::MAX` when no limit is watched.
static CEILING: AtomicU64 = AtomicU64::new(u64::MAX);
/// Allocations at least this big are held against [`CEILING`]: the growth of a large table or
/// buffer, which doubles its size at once.
const LARGE_BYTES: usize = 1 << 20;

/// Longest operator name kept for the message on a refused allocation.
const NAME_CAPACITY: usize = 192;

thread_local! {
    /// This thread's bytes not yet added to [`HEAP`].
    static UNFLUSHED: Cell<isize> = const { Cell::new(0) };
    /// The bytes this thread added to [`HEAP`] (allocated less freed, at each flush).
    static FLUSHED_HERE: Cell<isize> = const { Cell::new(0) };
    /// The operator running on this thread, for the message on a refused allocation: a copy,
    /// so that reading it allocates nothing and borrows nothing.
    static RUNNING: Cell<[u8; NAME_CAPACITY]> = const { Cell::new([0; NAME_CAPACITY]) };
    /// How many bytes of [`RUNNING`] are the name; 0 when no operator runs.
    static RUNNING_LEN: Cell<usize> = const { Cell::new(0) };
    /// Whether this thread is in [`fallible`]: a refused allocation is its caller's to report.
    static FALLIBLE: Cell<bool> = const { Cell::new(false) };
    /// The size of the last allocation refused on this thread.
    static REFUSED: Cell<usize> = const { Cell::new(0) };
}

/// A global allocator that counts the bytes its inner allocator holds.
///
/// ```ignore
/// #[global_allocator]
/// static ALLOCATOR: TrackingAllocator<std::alloc::System> = TrackingAllocator(std::alloc::System);
/// ```
///
/// Counting costs one thread-local addition per allocation and one shared atomic addition per
/// 256 KiB allocated or freed.
#[derive(Debug, Default)]
pub struct TrackingAllocator<A>(pub A);

fn count(delta: isize) {
    let flushed = UNFLUSHED.try_with(|unflushed| {
        let pending = unflushed.get() + delta;
        if pending.abs() >= FLUSH_BYTES {
            HEAP.fetch_add(pending, Ordering::Relaxed);
            let _ = FLUSHED_HERE.try_with(|here| here.set(here.get() + pending));
            unflushed.set(0);
        } else {
            unflushed.set(pending);
        }
    });
    // A thread being torn down has no thread-locals left: count directly.
    if flushed.is_err() {
        HEAP.fetch_add(delta, Ordering::Relaxed);
    }
}

/// Whether an allocation of `size` bytes would take the heap past the ceiling.
fn above_ceiling(size: usize) -> bool {
    size >= LARGE_BYTES
        && (HEAP.load(Ordering::Relaxed).max(0) as u64).saturating_add(size as u64) > CEILING.load(Ordering::Relaxed)
}

fn counted(ptr: *mut u8, size: usize) -> *mut u8 {
    if ptr.is_null() {
        report_refused(size);
    } else {
        if !TRACKING.load(Ordering::Relaxed) {
            TRACKING.store(true, Ordering::Relaxed);
        }
        count(size as isize);
    }
    ptr
}

// SAFETY: every call is forwarded to the inner allocator with the caller's arguments; the
// counting around it never allocates (thread-locals with constant initializers, atomics).
#[allow(unsafe_code)]
unsafe impl<A: GlobalAlloc> GlobalAlloc for TrackingAllocator<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if above_ceiling(layout.size()) {
            return counted(std::ptr::null_mut(), layout.size());
        }
        counted(unsafe { self.0.alloc(layout) }, layout.size())
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if above_ceiling(layout.size()) {
            return counted(std::ptr::null_mut(), layout.size());
        }
        counted(unsafe { self.0.alloc_zeroed(layout) }, layout.size())
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { self.0.dealloc(ptr, layout) };
        count(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() && above_ceiling(new_size) {
            report_refused(new_size);
            return std::ptr::null_mut();
        }
        let moved = unsafe { self.0.realloc(ptr, layout, new_size) };
        if moved.is_null() {
            report_refused(new_size);
        } else {
            count(new_size as isize - layout.size() as isize);
        }
        moved
    }
}

/// The bytes the heap holds (within 256 KiB per thread), or `None` when no
/// [`TrackingAllocator`] is installed.
pub fn heap_bytes() -> Option<u64> {
    TRACKING.load(Ordering::Relaxed).then(|| HEAP.load(Ordering::Relaxed).max(0) as u64)
}

/// The bytes this thread allocated less those it freed, exactly, since it started (`None`
/// when no [`TrackingAllocator`] is installed): what a piece of work allocated is the
/// difference of two readings around it.
pub fn thread_heap_bytes() -> Option<i64> {
    if !TRACKING.load(Ordering::Relaxed) {
        return None;
    }
    let here = FLUSHED_HERE.try_with(Cell::get).ok()?;
    let unflushed = UNFLUSHED.try_with(Cell::get).ok()?;
    Some((here + unflushed) as i64)
}

/// Records `name` as the operator running on this thread until [`clear_running`]. Cheap: a
/// copy of the name (at most 192 bytes) into a thread-local.
pub fn set_running(name: &str) {
    let mut end = name.len().min(NAME_CAPACITY);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    let _ = RUNNING.try_with(|running| {
        let bytes: &Cell<[u8]> = running;
        bytes.as_slice_of_cells().iter().zip(&name.as_bytes()[..end]).for_each(|(cell, &b)| cell.set(b));
    });
    let _ = RUNNING_LEN.try_with(|len| len.set(end));
}

/// Records that no operator runs on this thread.
pub fn clear_running() {
    let _ = RUNNING_LEN.try_with(|len| len.set(0));
}

/// Runs `grow` (a `try_reserve`), turning a refused allocation into
/// [`crate::Error::AllocationRefused`]: the way for state to grow without ending the process
/// when the memory limit is reached.
///
/// # Errors
/// [`crate::Error::AllocationRefused`] when `grow` fails.
pub fn fallible<E>(grow: impl FnOnce() -> Result<(), E>) -> crate::Result<()> {
    let outer = FALLIBLE.replace(true);
    let grown = grow();
    FALLIBLE.set(outer);
    grown.map_err(|_| crate::Error::AllocationRefused {
        bytes: Bytes(REFUSED.get() as u64),
        heap: Bytes(HEAP.load(Ordering::Relaxed).max(0) as u64),
        limit: match &*WATCHED.lock() {
            Some(limit) => format!("the memory limit of {} ({})", Bytes(limit.bytes), limit.source),
            None => "what the system allows".to_string(),
        },
    })
}

/// The limit the last [`MemoryGuard`] watches, for the message of a refused allocation.
static WATCHED: parking_lot::Mutex<Option<MemoryLimit>> = parking_lot::Mutex::new(None);

/// Sets the heap size large allocations may not take the heap past, under `limit`.
pub(crate) fn set_ceiling(bytes: u64, limit: Option<&MemoryLimit>) {
    CEILING.store(bytes, Ordering::Relaxed);
    let mut watched = WATCHED.lock();
    if watched.as_ref() != limit {
        *watched = limit.cloned();
    }
}

/// Writes what was refused, and where, to standard error without allocating (unless the
/// caller reports it, see [`fallible`]).
fn report_refused(size: usize) {
    let _ = REFUSED.try_with(|refused| refused.set(size));
    if FALLIBLE.try_with(Cell::get).unwrap_or(false) {
        return;
    }
    let mut message = StackText::default();
    let name = RUNNING.try_with(Cell::get).unwrap_or([0; NAME_CAPACITY]);
    let len = RUNNING_LEN.try_with(Cell::get).unwrap_or(0);
    let operator = std::str::from_utf8(&name[..len]).unwrap_or("");
    let heap = HEAP.load(Ordering::Relaxed).max(0) as u64;
    let _ = if operator.is_empty() {
        write!(message, "weir: out of memory: the system refused {size} bytes")
    } else {
        write!(message, "weir: out of memory in operator '{operator}': the system refused {size} bytes")
    };
    let _ = writeln!(message, " with {} on the heap", Bytes(heap));
    let _ = std::io::stderr().write_all(message.text());
}

/// Text formatted into a fixed buffer on the stack, cut at its capacity.
struct StackText {
    buffer: [u8; 512],
    len: usize,
}

impl Default for StackText {
    fn default() -> Self {
        StackText { buffer: [0; 512], len: 0 }
    }
}

impl StackText {
    fn text(&self) -> &[u8] {
        &self.buffer[..self.len]
    }
}

impl fmt::Write for StackText {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let room = self.buffer.len() - self.len;
        let n = s.len().min(room);
        self.buffer[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}

/// A byte count printed as Flink prints memory sizes (`512 bytes`, `1.5 mb`, `2 gb`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bytes(pub u64);

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [(&str, u64); 3] = [("gb", 1 << 30), ("mb", 1 << 20), ("kb", 1 << 10)];
        for (unit, size) in UNITS {
            if self.0 >= size {
                let whole = self.0 / size;
                let tenths = (self.0 % size) * 10 / size;
                return if tenths == 0 { write!(f, "{whole} {unit}") } else { write!(f, "{whole}.{tenths} {unit}") };
            }
        }
        write!(f, "{} bytes", self.0)
    }
}

/// `wanted` bytes of stack for a thread, or less under an address-space limit (`ulimit -v`),
/// where every thread's stack is reserved in full: at most a `share`th of the address space
/// still free under the limit, and at least 8 MiB.
pub fn stack_size(wanted: usize, share: u64) -> usize {
    match limit::address_space_room() {
        Some(room) => wanted.min((room / share).max(8 << 20) as usize),
        None => wanted,
    }
}

pub use limit::{Exceeded, LimitSource, MemoryGuard, MemoryLimit};

mod limit;
