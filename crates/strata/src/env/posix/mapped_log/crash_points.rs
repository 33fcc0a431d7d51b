//! Crash points of the mapped write-ahead log, for tests (feature `testing`): a thread can make
//! the mapped logs it writes stop after a number of steps, as if the process were killed there,
//! and then look at the files as the kill left them.
//!
//! The steps of a write (`mapped_log.rs` numbers them): reserving a block, copying a record's
//! payload into the map, publishing its header, and each piece of a `pwrite` past the end of
//! the file that ends at a 4 KiB page boundary (the kernel copies a `pwrite` page by page and
//! may stop between two pages for a fatal signal). The step the budget runs out at is killed
//! part-way where a kill could cut it: a copy then leaves about two thirds of its bytes, spread
//! over it (a `memcpy` stores in any order); the other steps are single instructions or
//! system calls, and do not happen. Once the budget is spent nothing more of those logs
//! changes: no step, no sync, no truncation at close, until the budget is lifted.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once any thread sets a budget: until then a step costs one relaxed load.
static ARMED: AtomicBool = AtomicBool::new(false);

/// Size of the pieces a `pwrite` may stop between.
const PAGE: u64 = 4096;

thread_local! {
    /// Steps this thread's mapped logs may still take; `None`: no limit.
    static BUDGET: Cell<Option<u64>> = const { Cell::new(None) };
    /// The error (`errno`) the probe for `fallocate` meets on this thread, if set.
    static REFUSED: Cell<Option<i32>> = const { Cell::new(None) };
    /// Whether reserving space ahead of a log's end fails on this thread (a disk too full).
    static REFUSED_AHEAD: Cell<bool> = const { Cell::new(false) };
}

/// Makes the logs this thread creates meet `errno` when they probe their file system for
/// `fallocate` (as on a file system without it, `EOPNOTSUPP`), or lifts that (`None`): such a
/// log is then written with `write`, not through a map.
pub fn refuse_mapped_log_reservation(errno: Option<i32>) {
    REFUSED.with(|refused| refused.set(errno));
}

/// The error the `fallocate` probe is to meet on this thread, if one is set.
pub(super) fn refuse_reservation() -> Option<std::io::Error> {
    REFUSED
        .with(Cell::get)
        .map(std::io::Error::from_raw_os_error)
}

/// Makes the mapped logs this thread writes fail to reserve space ahead of their end with
/// `ENOSPC`, as on a disk with less free space than the stretch ahead, or lifts that.
pub fn refuse_reserving_ahead(refuse: bool) {
    REFUSED_AHEAD.with(|refused| refused.set(refuse));
}

/// Reserves the stretch `from..to` ahead with `reserve`, or, when this thread refuses that,
/// does what ext4 does on a disk too full for it: reserves part of it, then fails with `ENOSPC`.
pub(super) fn reserve_ahead(
    from: u64,
    to: u64,
    reserve: impl FnOnce(u64, u64) -> std::io::Result<u64>,
) -> std::io::Result<u64> {
    if !REFUSED_AHEAD.with(Cell::get) {
        return reserve(from, to);
    }
    reserve(from, from + (to - from) / 2)?;
    Err(std::io::Error::from_raw_os_error(libc::ENOSPC))
}

/// Makes the mapped write-ahead logs this thread writes stop after `steps` more steps (see the
/// module documentation), or lifts the limit (`None`).
pub fn stop_mapped_log_writes_after(steps: Option<u64>) {
    ARMED.store(true, Ordering::Relaxed);
    BUDGET.with(|budget| budget.set(steps));
}

/// Whether this thread's budget of steps is spent: its mapped logs stopped where a kill would
/// have stopped them.
pub fn mapped_log_writes_stopped() -> bool {
    !alive()
}

/// Whether the next step may run; counts it.
pub(super) fn step() -> bool {
    if !ARMED.load(Ordering::Relaxed) {
        return true;
    }
    BUDGET.with(|budget| match budget.get() {
        None => true,
        Some(0) => false,
        Some(n) => {
            budget.set(Some(n - 1));
            true
        }
    })
}

/// Whether the budget is not spent (counts nothing).
pub(super) fn alive() -> bool {
    !ARMED.load(Ordering::Relaxed) || BUDGET.with(|budget| budget.get() != Some(0))
}

/// The part of `data`, to be written at file offset `offset`, that the budget lets through:
/// whole pieces ending at page boundaries, one step each.
pub(super) fn pwrite_prefix(offset: u64, data: &[u8]) -> &[u8] {
    let mut end = 0;
    while end < data.len() {
        let to_boundary = PAGE - (offset + end as u64) % PAGE;
        // Below a page, so it fits a usize.
        let piece_end = data.len().min(end + to_boundary as usize);
        if !step() {
            break;
        }
        end = piece_end;
    }
    &data[..end]
}

/// A copy of `source` into `target` killed part-way: about two thirds of the bytes, spread.
pub(super) fn copy_torn(target: &mut [u8], source: &[u8]) {
    for (i, (to, from)) in target.iter_mut().zip(source).enumerate() {
        if (i as u64).wrapping_mul(2_654_435_761) % 3 != 0 {
            *to = *from;
        }
    }
}
