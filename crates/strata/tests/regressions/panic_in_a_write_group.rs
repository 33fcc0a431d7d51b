//! A panic inside a write group — a user comparator's, while the group is inserted into the
//! memtable — used to leave the group's leadership taken: every writer queued behind it, and
//! every later one, waited forever (found by the Java binding's comparator tests). Now the panic
//! fails the group like a failed log write: its writers and every later write get the error,
//! and reads and closing go on working.

use std::cmp::Ordering;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use strata::{Comparator, MemEnv, Options, DB};

use crate::support;

/// Bytewise, but panics on any comparison that involves the key `poison`.
struct Poisoned;

impl Comparator for Poisoned {
    fn name(&self) -> &str {
        "test.Poisoned"
    }
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        assert!(
            a != b"poison" && b != b"poison",
            "the comparator met the poison key"
        );
        a.cmp(b)
    }
}

fn open() -> Arc<DB> {
    let options = Options {
        comparator: Arc::new(Poisoned),
        ..support::options(&Arc::new(MemEnv::new()))
    };
    Arc::new(DB::open("/db", options).unwrap())
}

#[test]
fn the_group_fails_and_queued_writers_are_answered() {
    let db = open();
    for i in 0..100u32 {
        db.put(format!("k{i:03}").as_bytes(), b"v").unwrap();
    }
    // Sixteen writers race the poisoned one; each must get an answer, Ok or Err.
    let (done, answers) = mpsc::channel();
    let mut writers = Vec::new();
    for t in 0..16u32 {
        let (db, done) = (Arc::clone(&db), done.clone());
        writers.push(std::thread::spawn(move || {
            let key: Vec<u8> = if t == 7 {
                b"poison".to_vec()
            } else {
                format!("w{t:02}").into_bytes()
            };
            let result =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| db.put(&key, b"x")));
            done.send((t, result.map(|r| r.is_ok()))).unwrap();
        }));
    }
    let mut poisoned_ok = None;
    for _ in 0..16 {
        let (t, outcome) = answers
            .recv_timeout(Duration::from_secs(30))
            .expect("a writer is still waiting: the write path hung");
        let ok = outcome.expect("a write call itself panicked");
        if t == 7 {
            poisoned_ok = Some(ok);
        }
    }
    assert_eq!(
        poisoned_ok,
        Some(false),
        "the poisoned write reports an error"
    );
    for w in writers {
        w.join().unwrap();
    }

    // Later writes fail with the recorded error; reads of the earlier data go on.
    let err = db.put(b"later", b"v").unwrap_err();
    assert!(err.to_string().contains("panicked"), "{err}");
    assert_eq!(db.get(b"k042").unwrap().as_deref(), Some(&b"v"[..]));
    // And the database closes.
    assert!(
        Arc::try_unwrap(db).is_ok(),
        "no other handle; dropping it closes"
    );
}
