//! `DB::try_write` must not wait. The state mutex is held over file I/O in two places —
//! a memtable switch creating the new log, a checkpoint opening the live logs — and
//! `try_write` takes that mutex with a blocking `lock()` before it can see that another
//! write is in progress: an event loop calling it then waits for the disk.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use strata::testing::{EnvOp, HookEnv};
use strata::{Error, MemEnv, WriteBatch, WriteOptions, DB};

/// How long the hook holds the file creation before giving up on `try_write`.
const HOLD: Duration = Duration::from_secs(10);

#[derive(Default)]
struct Gate {
    /// The hook is holding the log's creation (with the state mutex held by its caller).
    holding: bool,
    /// `try_write` has returned.
    returned: bool,
}

/// A writer switching to a new log (here `compact_range`'s flush) creates the log with the
/// state mutex held; the hook holds that creation until `try_write` on another thread has
/// returned, or `HOLD` has passed. `try_write` must return (refused: another write is in
/// progress) while the creation is still held. Fails on review-nowait: `write_waiting` takes
/// `db.state.lock()` before it looks at `leading`, so `try_write` waits the whole `HOLD`
/// (10 s) and then, the switch done and no write in progress, writes (`Ok`).
#[test]
fn try_write_returns_while_another_writer_creates_a_log() {
    let armed = Arc::new(AtomicBool::new(false));
    let gate = Arc::new((Mutex::new(Gate::default()), Condvar::new()));
    // Set by the hook: it let the creation go because `HOLD` passed, not because `try_write`
    // had returned.
    let timed_out = Arc::new(AtomicBool::new(false));
    let env = {
        let (armed, gate, timed_out) = (
            Arc::clone(&armed),
            Arc::clone(&gate),
            Arc::clone(&timed_out),
        );
        HookEnv::new(Arc::new(MemEnv::new()), move |call| {
            let is_log = call.path.extension().is_some_and(|e| e == "log");
            if call.op == EnvOp::NewWritableFile && is_log && armed.swap(false, Ordering::SeqCst) {
                let (lock, wake) = &*gate;
                let mut state = lock.lock().unwrap();
                state.holding = true;
                wake.notify_all();
                let deadline = Instant::now() + HOLD;
                while !state.returned {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        timed_out.store(true, Ordering::SeqCst);
                        break;
                    }
                    state = wake.wait_timeout(state, left).unwrap().0;
                }
            }
            Ok(())
        })
    };
    let db = Arc::new(DB::open("/db", support::options(&env)).unwrap());
    db.put(b"a", b"1").unwrap();
    armed.store(true, Ordering::SeqCst);
    let flusher = {
        let db = Arc::clone(&db);
        thread::spawn(move || db.compact_range(Some(b"zzz"), Some(b"zzz")))
    };
    {
        let (lock, wake) = &*gate;
        let mut state = lock.lock().unwrap();
        while !state.holding {
            state = wake.wait(state).unwrap();
        }
    }
    let mut batch = WriteBatch::new();
    batch.put(b"quick", b"write");
    let started = Instant::now();
    let refused = db.try_write(&WriteOptions::default(), &batch);
    let took = started.elapsed();
    {
        let (lock, wake) = &*gate;
        lock.lock().unwrap().returned = true;
        wake.notify_all();
    }
    flusher.join().unwrap().unwrap();
    assert!(
        !timed_out.load(Ordering::SeqCst),
        "try_write waited {took:?} for another writer's log creation (it returned {refused:?} \
         only once the file I/O under the state mutex was done)"
    );
    assert!(matches!(refused, Err(Error::WouldBlock(_))), "{refused:?}");
    assert_eq!(db.get(b"quick").unwrap(), None);
}
