//! I/O errors of value files, and of the value files' accounting, went unseen. Found when the
//! I/O-error suite (`io_errors_surface.rs`) got value-file trials (issue 14):
//! - A failed append to a value file failed that write and left the value-file writer failing
//!   every later append, but a later write of small values only, which does not append to a
//!   value file, went through: the database took writes after a write error it could not
//!   account for (a failed log write stops every later write). Now the failure is the
//!   background error, as a failed log write is.
//! - The accounting that garbage collection runs after every flush and compaction, and at
//!   open, reads every table's pointers; when a read failed it logged "not collected" and went
//!   on, so the error surfaced nowhere (an open met it and succeeded). Now it is the background
//!   error, and an open that meets it fails. (One of its reads also returned early past a
//!   failed block, losing the error: `rewrite_reclaims` now checks the iterator's status
//!   before answering.)

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use strata::testing::{EnvOp, HookEnv};
use strata::{Error, MemEnv, Options, ValueSeparation, DB};

const DIR: &str = "/value-file-io-errors";

/// A `MemEnv` whose `op` on files ending in `suffix` fails while `armed` is set.
fn failing(op: EnvOp, suffix: &'static str, armed: &Arc<AtomicBool>) -> HookEnv {
    let armed = Arc::clone(armed);
    HookEnv::new(Arc::new(MemEnv::new()), move |call| {
        let aimed = call.path.to_string_lossy().ends_with(suffix);
        if call.op == op && aimed && armed.load(Ordering::Acquire) {
            return Err(Error::io(
                format!("{} (test)", call.path.display()),
                io::Error::other("injected by the test"),
            ));
        }
        Ok(())
    })
}

fn options(env: &HookEnv) -> Options {
    Options {
        value_separation: Some(ValueSeparation::new(100)),
        ..crate::support::options(env)
    }
}

#[test]
fn a_write_of_small_values_went_through_after_a_value_file_append_failed() {
    let armed = Arc::new(AtomicBool::new(false));
    let env = failing(EnvOp::Append, ".vlog", &armed);
    let db = DB::open(DIR, options(&env)).unwrap();
    db.put(b"before", &[1u8; 500]).unwrap();
    armed.store(true, Ordering::Release);
    let err = db.put(b"failed", &[2u8; 500]).unwrap_err();
    assert!(err.is_io_error(), "{err}");
    armed.store(false, Ordering::Release);
    // Every later write fails with that error, whether it has large values or not.
    let small = db.put(b"small", b"inline").unwrap_err();
    assert!(small.to_string().contains(".vlog"), "{small}");
    assert!(db.put(b"large", &[3u8; 500]).is_err());
    // Reads go on, and a reopen takes writes again.
    assert_eq!(db.get(b"before").unwrap(), Some(vec![1u8; 500]));
    drop(db);
    let db = DB::open(DIR, options(&env)).unwrap();
    assert_eq!(db.get(b"before").unwrap(), Some(vec![1u8; 500]));
    assert_eq!(db.get(b"failed").unwrap(), None);
    db.put(b"small", b"inline").unwrap();
}

#[test]
fn an_open_met_a_read_error_of_the_value_accounting_and_succeeded() {
    let armed = Arc::new(AtomicBool::new(false));
    let env = failing(EnvOp::ReadAt, ".ldb", &armed);
    let db = DB::open(DIR, options(&env)).unwrap();
    for i in 0..100u32 {
        db.put(format!("k{i:03}").as_bytes(), &[i as u8; 300])
            .unwrap();
    }
    db.compact_range(None, None).unwrap();
    drop(db);
    // The open reads no table but for the accounting, which reads them all.
    armed.store(true, Ordering::Release);
    let err = DB::open(DIR, options(&env)).unwrap_err();
    assert!(err.is_io_error(), "{err}");
    assert!(err.to_string().contains(".ldb"), "{err}");
    armed.store(false, Ordering::Release);
    let db = DB::open(DIR, options(&env)).unwrap();
    for i in 0..100u32 {
        let got = db.get(format!("k{i:03}").as_bytes()).unwrap();
        assert_eq!(got, Some(vec![i as u8; 300]));
    }
}
