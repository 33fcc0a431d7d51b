//! The value files' I/O errors as background errors (merge 2a64cb4): a transient read error
//! met by the accounting pass at open fails that open only (the database is not left
//! unopenable, and the next open has everything), and after a failed value-file append
//! every later write fails while a reopen holds every acknowledged write and none of the
//! failed ones.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use strata::testing::{EnvOp, HookEnv};
use strata::{Error, MemEnv, Options, ValueSeparation, DB};

fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

fn value(i: u32) -> Vec<u8> {
    let size = if i % 3 == 0 { 1000 } else { 40 };
    format!("{i}-").bytes().cycle().take(size).collect()
}

/// An env over `mem` failing the next operation `op` on a file with extension `ext` once
/// `armed` is set (and disarming itself).
fn failing_env(
    mem: &Arc<MemEnv>,
    op: EnvOp,
    ext: &'static str,
    armed: &Arc<AtomicBool>,
) -> HookEnv {
    let armed = Arc::clone(armed);
    HookEnv::new(Arc::clone(mem) as _, move |call| {
        if call.op == op
            && call.path.extension().is_some_and(|e| e == ext)
            && armed.swap(false, Ordering::SeqCst)
        {
            return Err(Error::io(
                format!("{}", call.path.display()),
                std::io::Error::other("injected"),
            ));
        }
        Ok(())
    })
}

#[test]
fn a_transient_read_error_at_open_fails_that_open_and_the_next_opens_whole() {
    let mem = Arc::new(MemEnv::new());
    let armed = Arc::new(AtomicBool::new(false));
    let env = failing_env(&mem, EnvOp::NewRandomAccessFile, "ldb", &armed);
    let options = Options {
        value_separation: Some(ValueSeparation::new(256)),
        ..support::options(&env)
    };
    let db = DB::open("/db", options.clone()).unwrap();
    for i in 0..600 {
        db.put(&key(i), &value(i)).unwrap();
    }
    db.compact_range(None, None).unwrap();
    drop(db);
    // The log is empty: the only tables open opens are the accounting pass's, and the first
    // open fails there.
    armed.store(true, Ordering::SeqCst);
    let failed = DB::open("/db", options.clone());
    assert!(
        matches!(failed, Err(ref e) if e.is_io_error()),
        "{failed:?}"
    );
    assert!(!armed.load(Ordering::SeqCst), "the error was never met");
    // Nothing of the failed open keeps the next one out, and nothing was lost.
    let db = DB::open("/db", options).unwrap();
    for i in 0..600 {
        assert_eq!(db.get(&key(i)).unwrap(), Some(value(i)), "key {i}");
    }
    db.put(b"after", &[b'x'; 1000]).unwrap();
    assert_eq!(db.get(b"after").unwrap(), Some(vec![b'x'; 1000]));
}

#[test]
fn after_a_failed_value_file_append_a_reopen_holds_every_acknowledged_write() {
    let mem = Arc::new(MemEnv::new());
    let armed = Arc::new(AtomicBool::new(false));
    let env = failing_env(&mem, EnvOp::Append, "vlog", &armed);
    let options = Options {
        value_separation: Some(ValueSeparation::new(256)),
        ..support::options(&env)
    };
    let db = DB::open("/db", options.clone()).unwrap();
    for i in 0..300 {
        db.put(&key(i), &value(i)).unwrap();
    }
    armed.store(true, Ordering::SeqCst);
    assert!(db.put(&key(300), &value(300)).is_err(), "large value");
    assert!(!armed.load(Ordering::SeqCst));
    // Every later write fails, small values too: the value file's tail is unknown.
    assert!(db.put(&key(301), &value(301)).is_err(), "small value");
    assert!(db.put(&key(303), &value(303)).is_err(), "large value");
    // Reads go on.
    assert_eq!(db.get(&key(3)).unwrap(), Some(value(3)));
    drop(db);
    let db = DB::open("/db", options).unwrap();
    for i in 0..300 {
        assert_eq!(db.get(&key(i)).unwrap(), Some(value(i)), "key {i}");
    }
    for i in 300..304 {
        assert_eq!(db.get(&key(i)).unwrap(), None, "failed write {i} is there");
    }
    db.put(&key(300), &value(300)).unwrap();
    assert_eq!(db.get(&key(300)).unwrap(), Some(value(300)));
}
