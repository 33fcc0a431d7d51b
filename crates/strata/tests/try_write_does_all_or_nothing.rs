//! `DB::try_write` writes at once or fails having written nothing: refused writes leave no
//! trace among concurrent writers, an error that is not about waiting (a background error, a
//! read-only handle) is reported as itself, and a crowded level 0 is waited for by the
//! ordinary write only.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;

use strata::testing::{EnvOp, HookEnv};
use strata::{Error, MemEnv, Options, WriteBatch, WriteOptions, DB};

fn put(key: &[u8], value: &[u8]) -> WriteBatch {
    let mut batch = WriteBatch::new();
    batch.put(key, value);
    batch
}

/// Writers that wait (some `sync`) and one that never does share a small memtable: every
/// acknowledged write of either kind is there, before and after a reopen, and no refused
/// `try_write` left any of its keys behind.
#[test]
fn refused_try_writes_leave_nothing_among_concurrent_writers() {
    let env = Arc::new(MemEnv::new());
    let options = Options {
        write_buffer_size: 32 << 10,
        ..support::options(&env)
    };
    let db = Arc::new(DB::open("/db", options.clone()).unwrap());
    let value = [b'x'; 300];
    let writing = Arc::new(AtomicUsize::new(3));
    let writers: Vec<_> = (0..3u32)
        .map(|w| {
            let db = Arc::clone(&db);
            let writing = Arc::clone(&writing);
            thread::spawn(move || {
                for i in 0..600u32 {
                    let mut batch = WriteBatch::new();
                    batch.put(format!("w{w}-{i:05}-a").as_bytes(), &value);
                    batch.put(format!("w{w}-{i:05}-b").as_bytes(), &value);
                    let sync = i % 50 == 0;
                    db.write_opt(&WriteOptions { sync }, &batch).unwrap();
                    if i % 8 == 0 {
                        thread::yield_now();
                    }
                }
                writing.fetch_sub(1, Ordering::SeqCst);
            })
        })
        .collect();
    let trier = {
        let db = Arc::clone(&db);
        let writing = Arc::clone(&writing);
        thread::spawn(move || {
            let (mut done, mut refused) = (Vec::new(), Vec::new());
            let mut done_among_writers = 0;
            // While the writers write, then as many tries again on their own.
            let mut after = 0;
            for i in 0u32.. {
                if writing.load(Ordering::SeqCst) == 0 {
                    after += 1;
                    if after > 500 {
                        break;
                    }
                }
                let mut batch = WriteBatch::new();
                batch.put(format!("t-{i:05}-a").as_bytes(), &value);
                batch.put(format!("t-{i:05}-b").as_bytes(), &value);
                match db.try_write(&WriteOptions::default(), &batch) {
                    Ok(()) => {
                        done.push(i);
                        done_among_writers += usize::from(after == 0);
                    }
                    Err(Error::WouldBlock(_)) => refused.push(i),
                    Err(e) => panic!("try_write failed: {e}"),
                }
            }
            (done, refused, done_among_writers)
        })
    };
    for writer in writers {
        writer.join().unwrap();
    }
    let (done, refused, done_among_writers) = trier.join().unwrap();
    assert!(
        done_among_writers > 0 && !refused.is_empty(),
        "{done_among_writers} done while the writers wrote, {} refused: the race was not run",
        refused.len()
    );
    let check = |db: &DB| {
        for w in 0..3u32 {
            for i in 0..600u32 {
                for part in ["a", "b"] {
                    let key = format!("w{w}-{i:05}-{part}");
                    assert!(db.get(key.as_bytes()).unwrap().is_some(), "{key} lost");
                }
            }
        }
        for &i in &done {
            for part in ["a", "b"] {
                let key = format!("t-{i:05}-{part}");
                assert!(db.get(key.as_bytes()).unwrap().is_some(), "{key} lost");
            }
        }
        for &i in &refused {
            for part in ["a", "b"] {
                let key = format!("t-{i:05}-{part}");
                assert_eq!(
                    db.get(key.as_bytes()).unwrap(),
                    None,
                    "refused {key} was written"
                );
            }
        }
    };
    check(&db);
    drop(db);
    let db = DB::open("/db", options).unwrap();
    check(&db);
}

/// After a failed log write the database refuses every write with that error: `try_write`
/// reports it too (not `WouldBlock`, which would send the caller to a write that fails the
/// same way only after a thread hand-off), and writes nothing.
#[test]
fn try_write_reports_a_background_error_as_itself() {
    let fail = Arc::new(AtomicBool::new(false));
    let env = {
        let fail = Arc::clone(&fail);
        HookEnv::new(Arc::new(MemEnv::new()), move |call| {
            let is_log = call.path.extension().is_some_and(|e| e == "log");
            if call.op == EnvOp::Append && is_log && fail.swap(false, Ordering::SeqCst) {
                return Err(Error::io(
                    "injected",
                    std::io::Error::other("log append failure"),
                ));
            }
            Ok(())
        })
    };
    let db = DB::open("/db", support::options(&env)).unwrap();
    // A moment's busy state (background work after the open) is not what this tests.
    support::try_write_past_busy(&db, &put(b"before", b"1")).unwrap();
    fail.store(true, Ordering::SeqCst);
    assert!(db.put(b"failed", b"2").is_err());
    let refused = support::try_write_past_busy(&db, &put(b"after", b"3"));
    assert!(
        matches!(refused, Err(ref e) if !matches!(e, Error::WouldBlock(_))),
        "{refused:?}"
    );
    assert_eq!(db.get(b"after").unwrap(), None);
    assert_eq!(db.get(b"before").unwrap().as_deref(), Some(&b"1"[..]));
}

/// A read-only handle refuses `try_write` as it refuses every write, and changes nothing.
#[test]
fn try_write_on_a_read_only_handle_is_not_supported() {
    let env = Arc::new(MemEnv::new());
    let db = DB::open("/db", support::options(&env)).unwrap();
    db.put(b"k", b"v").unwrap();
    drop(db);
    let reader = DB::open_read_only("/db", support::options(&env)).unwrap();
    let refused = reader.try_write(&WriteOptions::default(), &put(b"k", b"w"));
    assert!(
        matches!(refused, Err(Error::NotSupported(_))),
        "{refused:?}"
    );
    assert_eq!(reader.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    drop(reader);
    let db = DB::open("/db", support::options(&env)).unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
}

/// With level 0 at its slowdown trigger writes are slowed down: `try_write` refuses,
/// having written nothing, and the ordinary write goes through.
#[test]
fn try_write_is_refused_while_level_0_is_crowded() {
    let env = Arc::new(MemEnv::new());
    let options = Options {
        write_buffer_size: 16 << 10,
        ..support::options(&env)
    };
    let db = DB::open("/db", options).unwrap();
    support::state::crowd_level_0(&db, 8, &[b'v'; 200]);
    // Refused for level 0 (asked again while the background thread holds the state a moment).
    let refused = support::try_write_past_busy(&db, &put(b"quick", b"1"));
    assert!(
        matches!(refused, Err(Error::WouldBlock(ref why)) if why.contains("level 0")),
        "{refused:?}"
    );
    assert_eq!(db.get(b"quick").unwrap(), None);
    db.put(b"quick", b"1").unwrap();
    assert_eq!(db.get(b"quick").unwrap().as_deref(), Some(&b"1"[..]));
    db.resume_compactions();
}
