//! Threads that each make synced writes one after another share log syncs: a synced group
//! waits a moment for the writers of the group before it (`db/sync_rejoin.rs`), so the
//! threads do not split into two cohorts that sync in turn.
//!
//! The log's syncs take 4 ms here (a hook sleeps in them), far longer than a woken thread
//! needs to queue its next write, so the count of syncs depends little on the machine's
//! speed. Measured on the project's 2-core VM, for 240 writes (and one sync at the open):
//! without the wait, 93-102 syncs (one per 2.5 writes), 101-104 beside three processor hogs;
//! with it, 61 (one per four), 62-77 beside three or five hogs.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use strata::testing::{EnvOp, HookEnv};
use strata::{MemEnv, WriteOptions, DB};

const THREADS: usize = 4;
const WRITES_PER_THREAD: usize = 60;
const LOG_SYNC_TIME: Duration = Duration::from_millis(4);

#[test]
fn four_synced_writers_share_most_syncs() {
    let log_syncs = Arc::new(AtomicUsize::new(0));
    let env = {
        let log_syncs = Arc::clone(&log_syncs);
        HookEnv::new(Arc::new(MemEnv::new()), move |call| {
            let is_log = call.path.extension().is_some_and(|e| e == "log");
            if call.op == EnvOp::Sync && is_log {
                log_syncs.fetch_add(1, Ordering::SeqCst);
                std::thread::sleep(LOG_SYNC_TIME);
            }
            Ok(())
        })
    };
    let db = DB::open("/db", support::options(&env)).unwrap();
    let synced = WriteOptions { sync: true };
    std::thread::scope(|scope| {
        for thread in 0..THREADS {
            let (db, synced) = (&db, &synced);
            scope.spawn(move || {
                for i in 0..WRITES_PER_THREAD {
                    let key = format!("t{thread}-{i:03}");
                    db.put_opt(synced, key.as_bytes(), b"value").unwrap();
                }
            });
        }
    });
    let writes = THREADS * WRITES_PER_THREAD;
    let syncs = log_syncs.load(Ordering::SeqCst);
    assert!(
        syncs * 100 <= writes * 35,
        "{syncs} log syncs for {writes} synced writes of {THREADS} threads"
    );
    for thread in 0..THREADS {
        for i in 0..WRITES_PER_THREAD {
            let key = format!("t{thread}-{i:03}");
            assert_eq!(
                db.get(key.as_bytes()).unwrap().as_deref(),
                Some(&b"value"[..])
            );
        }
    }
}
