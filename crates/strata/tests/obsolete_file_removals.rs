//! Obsolete files are removed by the thread of the pass that chose them, after that pass has
//! ended (`db/obsolete_files.rs`): writes waiting for garbage collection's plan do not wait for
//! the removals, but `DB::compact_range` still returns only once the files it made obsolete
//! are gone, and a pass running meanwhile leaves them to that thread.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::channel;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use strata::testing::{EnvOp, HookEnv};
use strata::{MemEnv, Options, DB};
use support::files::file_names;

const DIR: &str = "/db";
/// Long enough for a thread that is not blocked to finish a compaction here.
const SETTLE: Duration = Duration::from_millis(300);
/// Longer than anything here takes unless it hangs.
const LIMIT: Duration = Duration::from_secs(20);

/// A gate the hook holds removals of tables at while it is closed.
#[derive(Default)]
struct Gate {
    closed: Mutex<bool>,
    opened: Condvar,
}

impl Gate {
    fn wait(&self) {
        let mut closed = self.closed.lock().unwrap();
        while *closed {
            closed = self.opened.wait(closed).unwrap();
        }
    }

    fn set(&self, closed: bool) {
        *self.closed.lock().unwrap() = closed;
        self.opened.notify_all();
    }
}

#[test]
fn compact_range_returns_once_the_tables_it_made_obsolete_are_removed() {
    let gate = Arc::new(Gate::default());
    let holding = Arc::new(AtomicBool::new(false));
    let (entered, removal_entered) = channel::<()>();
    let entered = Mutex::new(entered);
    let env = {
        let (gate, holding) = (Arc::clone(&gate), Arc::clone(&holding));
        HookEnv::new(Arc::new(MemEnv::new()), move |call| {
            let table = call.path.extension().is_some_and(|e| e == "ldb");
            if call.op == EnvOp::RemoveFile && table && holding.load(Ordering::SeqCst) {
                let _ = entered.lock().unwrap().send(());
                gate.wait();
            }
            Ok(())
        })
    };
    let listing = env.clone();
    let db = Arc::new(
        DB::open(
            Path::new(DIR),
            Options {
                write_buffer_size: 64 << 10,
                ..support::options(&env)
            },
        )
        .unwrap(),
    );
    // Several tables on level 0 and below, which a full compaction replaces.
    for round in 0..4u32 {
        for i in 0..2000u32 {
            db.put(format!("key{i:06}").as_bytes(), &[round as u8; 100])
                .unwrap();
        }
    }
    let before = file_names(&listing, Path::new(DIR), |n| n.ends_with(".ldb"));
    assert!(before.len() > 1, "tables: {before:?}");
    gate.set(true);
    holding.store(true, Ordering::SeqCst);
    let (done, compacted) = channel();
    let compacting = {
        let db = Arc::clone(&db);
        std::thread::spawn(move || {
            let result = db.compact_range(None, None);
            done.send(()).unwrap();
            result
        })
    };
    removal_entered
        .recv_timeout(LIMIT)
        .expect("no table removal was attempted");
    assert!(
        compacted.recv_timeout(SETTLE).is_err(),
        "compact_range returned while a table it made obsolete was still being removed"
    );
    holding.store(false, Ordering::SeqCst);
    gate.set(false);
    compacted
        .recv_timeout(LIMIT)
        .expect("compact_range never returned");
    compacting.join().unwrap().unwrap();
    let after = file_names(&listing, Path::new(DIR), |n| n.ends_with(".ldb"));
    assert!(
        after.iter().all(|name| !before.contains(name)),
        "tables replaced by the compaction are still there: {after:?} (before: {before:?})"
    );
    for i in (0..2000u32).step_by(97) {
        assert_eq!(
            db.get(format!("key{i:06}").as_bytes()).unwrap(),
            Some(vec![3u8; 100])
        );
    }
}
