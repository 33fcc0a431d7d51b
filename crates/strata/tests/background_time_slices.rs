//! The time slices a database's background threads run with on Linux (`db/background.rs`):
//! the flushing thread asks for a long one, so a writer that wakes may take the processor from
//! it at once; compaction threads keep the scheduler's default. Read from outside the threads,
//! by thread id, as the scheduler reports them (`sched_getattr`).
//!
//! Alone in its binary: it looks through every thread of the process by name.

#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use strata::{Options, DB};

/// Thread `tid`'s time slice in nanoseconds (0 from a kernel before 6.12, which has none).
fn slice_of(tid: libc::pid_t) -> u64 {
    // SAFETY: all-zero bytes are a valid `sched_attr` (integers only).
    let mut attr: libc::sched_attr = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::sched_attr>() as libc::c_uint;
    // SAFETY: the kernel writes at most `size` bytes into `attr` during the call.
    let done = unsafe { libc::syscall(libc::SYS_sched_getattr, tid, &mut attr, size, 0) };
    assert_eq!(done, 0, "{}", std::io::Error::last_os_error());
    attr.sched_runtime
}

/// The ids of this process's threads named `name` (as Linux keeps a name: its first 15
/// bytes).
fn threads_named(name: &str) -> Vec<libc::pid_t> {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|entry| {
            let path = entry.unwrap().path();
            let comm = std::fs::read_to_string(path.join("comm")).ok()?;
            let tid = path.file_name()?.to_str()?.parse().ok()?;
            (comm.trim_end() == name).then_some(tid)
        })
        .collect()
}

#[test]
fn the_flushing_thread_runs_with_a_longer_slice_than_the_default_and_compactions_with_it() {
    // SAFETY: no arguments; returns the calling thread's id.
    let default_slice = slice_of(unsafe { libc::gettid() });
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(
        dir.path(),
        Options {
            create_if_missing: true,
            max_background_jobs: 2,
            ..Options::default()
        },
    )
    .unwrap();
    // The threads set their slice when they start, before the open returns.
    let flush = threads_named("strata-bg-flush");
    let compactions = threads_named("strata-bg-compa");
    assert_eq!(flush.len(), 1, "one flushing thread");
    assert_eq!(compactions.len(), 2, "two compaction threads");
    let flush_slice = slice_of(flush[0]);
    if default_slice == 0 {
        // A kernel without per-thread slices: nothing is set.
        assert_eq!(flush_slice, 0);
    } else {
        assert!(
            flush_slice > default_slice,
            "the flushing thread's slice {flush_slice} ns, the default {default_slice} ns"
        );
    }
    for tid in compactions {
        assert_eq!(slice_of(tid), default_slice, "a compaction thread's slice");
    }
    drop(db);
}
