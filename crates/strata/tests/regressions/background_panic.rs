//! A panic in background work (a bug) used to leave the worker dead and everyone waiting for
//! it forever: `compact_range` never returned, writes hung at the memtable limit. Now the
//! panic becomes the background error, which every later write and flush reports.

use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use strata::testing::{InjectedError, OpKind};
use strata::{Options, DB};

use crate::support::fault_env;

/// Runs `f` on another thread and fails the test if it does not finish in time.
pub(crate) fn within_a_minute<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (done, result) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(f());
    });
    result
        .recv_timeout(Duration::from_secs(60))
        .expect("still waiting a minute later: the background panic was not reported")
}

#[test]
fn a_panicking_flush_fails_writes_and_flushes_instead_of_hanging() {
    let env = fault_env();
    let options = Options {
        write_buffer_size: 64 << 10,
        ..crate::support::options(&env)
    };
    let db = Arc::new(DB::open("/db", options.clone()).unwrap());
    db.put(b"before", b"the panic").unwrap();
    // Only the background syncs here: the flush syncs its table (these writes are not synced).
    env.fail_always(OpKind::Sync, InjectedError::Panic);

    let flushing = Arc::clone(&db);
    let err = within_a_minute(move || flushing.compact_range(None, None)).unwrap_err();
    assert!(err.to_string().contains("panicked"), "{err}");

    // Writes fail with the same error once the memtable is full, instead of waiting.
    let writing = Arc::clone(&db);
    let err = within_a_minute(move || -> strata::Error {
        let value = vec![b'v'; 1024];
        for i in 0u32.. {
            if let Err(e) = writing.put(&i.to_be_bytes(), &value) {
                return e;
            }
        }
        unreachable!("the loop ends with an error")
    });
    assert!(err.to_string().contains("panicked"), "{err}");

    // Reads still work, and closing does not hang either.
    assert_eq!(
        db.get(b"before").unwrap().as_deref(),
        Some(&b"the panic"[..])
    );
    within_a_minute(move || drop(db));
    env.clear_faults();
    let db = DB::open("/db", options).unwrap();
    assert_eq!(
        db.get(b"before").unwrap().as_deref(),
        Some(&b"the panic"[..])
    );
}
