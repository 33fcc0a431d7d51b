//! A file created in the database directory survives power loss only once the directory is
//! synced (the `Env` contract; `FaultEnv` models it). Two ways this lost data:
//! - a flushed or compacted table was synced and named in a synced manifest edit, but its
//!   directory entry was not durable: after power loss the manifest named a missing table and
//!   the database did not open;
//! - a `sync` write to the log started at a memtable switch was acknowledged, but the new
//!   log's directory entry was not durable: after power loss the log, and the write, were gone.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use strata::testing::{FaultEnv, InjectedError, OpKind, PowerLossMode};
use strata::{Env, MemEnv, Options, WriteOptions, DB};

fn options(env: &FaultEnv) -> Options {
    Options {
        create_if_missing: true,
        env: Arc::new(env.clone()) as Arc<dyn Env>,
        ..Options::default()
    }
}

const SYNC: WriteOptions = WriteOptions { sync: true };

#[test]
fn flushed_tables_survive_power_loss() {
    let env = FaultEnv::new(Arc::new(MemEnv::new()));
    {
        let db = DB::open("/db", options(&env)).unwrap();
        for i in 0..100u32 {
            db.put_opt(&SYNC, format!("key{i:03}").as_bytes(), b"v")
                .unwrap();
        }
        // Flush to a table; the manifest edit naming it is synced, the log is dropped.
        db.compact_range(None, None).unwrap();
        assert_eq!(db.property("leveldb.num-files-at-level2").unwrap(), "1");
        env.simulate_power_loss(PowerLossMode::DropUnsynced, 1)
            .unwrap();
    }
    let db = DB::open("/db", options(&env)).unwrap();
    for i in 0..100u32 {
        assert_eq!(
            db.get(format!("key{i:03}").as_bytes()).unwrap(),
            Some(b"v".to_vec())
        );
    }
}

#[test]
fn sync_writes_to_a_new_log_survive_power_loss() {
    let env = FaultEnv::new(Arc::new(MemEnv::new()));
    {
        let db = DB::open("/db", options(&env)).unwrap();
        db.put_opt(&SYNC, b"before", b"1").unwrap();
        // Switches to a new log (and flushes the old memtable).
        db.compact_range(None, None).unwrap();
        db.put_opt(&SYNC, b"after", b"2").unwrap();
        env.simulate_power_loss(PowerLossMode::DropUnsynced, 2)
            .unwrap();
    }
    let db = DB::open("/db", options(&env)).unwrap();
    assert_eq!(db.get(b"before").unwrap(), Some(b"1".to_vec()));
    assert_eq!(db.get(b"after").unwrap(), Some(b"2".to_vec()));
}

fn log_files(env: &FaultEnv) -> std::collections::BTreeSet<String> {
    env.inner()
        .children(std::path::Path::new("/db"))
        .unwrap()
        .into_iter()
        .filter(|n| n.ends_with(".log"))
        .collect()
}

#[test]
fn sync_write_right_after_a_memtable_switch_is_durable_or_refused() {
    let small = |env: &FaultEnv| Options {
        write_buffer_size: 64 << 10,
        ..options(env)
    };
    let value = vec![b'x'; 1000];
    // Find which write of a fresh database switches to a new log (memtable accounting is
    // deterministic), so the synced write below is exactly that one.
    let switching_write = {
        let env = FaultEnv::new(Arc::new(MemEnv::new()));
        let db = DB::open("/db", small(&env)).unwrap();
        (0..1000u32)
            .find(|i| {
                let before = log_files(&env);
                db.put(format!("fill{i:03}").as_bytes(), &value).unwrap();
                !log_files(&env).is_subset(&before)
            })
            .expect("a switch within 1000 writes")
    };
    let env = FaultEnv::new(Arc::new(MemEnv::new()));
    let acknowledged;
    {
        let db = DB::open("/db", small(&env)).unwrap();
        for i in 0..switching_write {
            db.put(format!("fill{i:03}").as_bytes(), &value).unwrap();
        }
        // The memtable is full: the next write switches to a new log. No directory sync can
        // succeed from now on, so nothing else makes the new log's entry durable.
        let before = log_files(&env);
        env.fail_always(OpKind::SyncDir, InjectedError::Io);
        acknowledged = db.put_opt(&SYNC, b"after", &value).is_ok();
        assert!(
            !log_files(&env).is_subset(&before),
            "the write did not start a new log"
        );
        env.simulate_power_loss(PowerLossMode::DropUnsynced, 3)
            .unwrap();
    }
    env.clear_faults();
    let db = DB::open("/db", small(&env)).unwrap();
    if acknowledged {
        assert_eq!(db.get(b"after").unwrap(), Some(value));
    }
}
