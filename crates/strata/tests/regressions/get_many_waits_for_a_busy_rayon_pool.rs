//! `get_many` with `ReadOptions::get_many_parallel` (the default) hands a large batch to
//! `rayon::join`, documented as letting idle threads of rayon's pool take runs "and has the
//! caller look up any the pool leaves". Called from a thread outside the pool (every
//! application thread), `rayon::join` does not run either half on the caller: it queues the
//! whole job in the global pool and blocks the caller until pool threads have run it. So a
//! `get_many` waits for the application's own rayon work to free a thread, and never returns
//! while that work waits for the caller (a lock the caller holds, a message it would send
//! after the read): a deadlock. Found in the review of issue 16 (review16b).
//!
//! Fixed: runs are claimed by the caller and by helper threads; the caller waits only for
//! runs a helper has started, and looks up itself those a helper claimed but has not started.
//! Since then the helpers are a pool of the engine's own (`version/get_many/helpers.rs`), so
//! rayon's global pool is not involved at all; the test keeps guarding the contract.

use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use strata::{MemEnv, ReadOptions, DB};

#[test]
fn get_many_returns_while_every_thread_of_rayons_pool_is_busy() {
    let env = Arc::new(MemEnv::new());
    let db = Arc::new(DB::open("/busy-pool", crate::support::options(&env)).unwrap());
    let key = |i: u32| format!("key{i:05}").into_bytes();
    for i in 0..2000 {
        db.put(&key(i), b"value").unwrap();
    }
    db.compact_range(None, None).unwrap();

    // The application's rayon work: every pool thread busy until the test lets it go.
    let threads = rayon::current_num_threads();
    let (started_tx, started_rx) = mpsc::channel::<()>();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let release_rx = Arc::new(std::sync::Mutex::new(release_rx));
    for _ in 0..threads {
        let (started, release) = (started_tx.clone(), Arc::clone(&release_rx));
        rayon::spawn(move || {
            started.send(()).unwrap();
            let _ = release.lock().unwrap().recv();
        });
    }
    for _ in 0..threads {
        started_rx.recv_timeout(Duration::from_secs(30)).unwrap();
    }

    let (done_tx, done_rx) = mpsc::channel();
    let reader = {
        let db = Arc::clone(&db);
        std::thread::spawn(move || {
            let keys: Vec<Vec<u8>> = (0..500).map(key).collect();
            let read = ReadOptions {
                get_many_parallel: true,
                ..ReadOptions::default()
            };
            done_tx.send(db.get_many_opt(&read, &keys)).unwrap();
        })
    };
    let answer = done_rx.recv_timeout(Duration::from_secs(10));
    // Free the pool whatever happened, so the reader (and the test binary) can finish.
    for _ in 0..threads {
        release_tx.send(()).unwrap();
    }
    reader.join().unwrap();
    let values = answer
        .expect("get_many did not return in 10 s while rayon's pool was busy")
        .unwrap();
    assert!(values
        .iter()
        .all(|v| v.as_deref() == Some(b"value".as_slice())));
}
