//! Repair lists every salvaged table at level 0, where a lookup stops at the first (newest
//! numbered) table holding the key. Tables that came from different levels can interleave in
//! sequence numbers: a compaction output can hold an *old* version of `k` next to a newer
//! key, while a table that sat above it holds a newer `k`. Ordering level 0 by one number
//! per table then makes `get(k)` return the old version (LevelDB's repair has the same flaw).
//! Repair now compacts the database whole when tables interleave like that.

use std::sync::Arc;

use strata::{MemEnv, Options, ReadOptions, DB};

use crate::support::options;
use crate::support::state::scan;

fn flush(db: &DB) {
    // A range nothing lives in: flushes the memtable, compacts nothing.
    db.compact_range(Some(b"zz1"), Some(b"zz2")).unwrap();
}

#[test]
fn repaired_database_returns_the_newest_version() {
    let env = Arc::new(MemEnv::new());
    let options = options(&env);
    {
        let db = DB::open("/db", options.clone()).unwrap();
        db.put(b"a", b"a1").unwrap();
        db.put(b"k", b"old").unwrap();
        db.put(b"m", b"m1").unwrap();
        flush(&db); // level 2: {a, k@2, m}
        db.put(b"w", b"w1").unwrap();
        db.put(b"z", b"z1").unwrap();
        flush(&db); // level 2: {w, z}
        db.put(b"k", b"new").unwrap();
        db.put(b"x", b"x1").unwrap();
        flush(&db); // level 1: {k@6, x}
        db.put(b"j", b"j1").unwrap();
        flush(&db); // level 1: {j@8}
                    // {j} merges with {a, k@2, m} (taking {k, x} too would pull in {w, z}): the output
                    // holds sequences 1 to 8, while the newer k@6 stays in level 1.
        db.compact_range(Some(b"j"), Some(b"j")).unwrap();
        let sstables = db.property("leveldb.sstables").unwrap();
        assert_eq!(
            db.property("leveldb.num-files-at-level1").unwrap(),
            "1",
            "{sstables}"
        );
        assert_eq!(db.get(b"k").unwrap(), Some(b"new".to_vec()));
    }
    strata::repair("/db", &options).unwrap();
    let db = DB::open("/db", options).unwrap();
    for (key, value) in [
        (&b"a"[..], &b"a1"[..]),
        (b"j", b"j1"),
        (b"k", b"new"),
        (b"m", b"m1"),
        (b"w", b"w1"),
        (b"x", b"x1"),
        (b"z", b"z1"),
    ] {
        assert_eq!(db.get(key).unwrap().as_deref(), Some(value), "{key:?}");
    }
}

/// Random histories (flushes and compactions through a small write buffer, deletes, data left
/// in the log), with or without the manifest: repair gives back exactly what was written.
#[test]
fn repair_gives_back_random_histories() {
    use rand::{Rng, SeedableRng};
    use std::collections::BTreeMap;
    use std::path::Path;
    use strata::Env;

    for seed in 0..30u64 {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let env = Arc::new(MemEnv::new());
        let options = Options {
            write_buffer_size: 64 << 10,
            ..options(&env)
        };
        let mut model = BTreeMap::new();
        {
            let db = DB::open("/db", options.clone()).unwrap();
            for i in 0..rng.gen_range(100..5000) {
                let key = format!("key{:04}", rng.gen_range(0..1500)).into_bytes();
                if rng.gen_bool(0.15) {
                    db.delete(&key).unwrap();
                    model.remove(&key);
                } else {
                    let value = format!("v{i}-{}", "x".repeat(rng.gen_range(0..300)));
                    db.put(&key, value.as_bytes()).unwrap();
                    model.insert(key, value.into_bytes());
                }
                if rng.gen_bool(0.002) {
                    db.compact_range(None, None).unwrap();
                }
            }
        }
        if rng.gen_bool(0.5) {
            for name in env.children(Path::new("/db")).unwrap() {
                if name.starts_with("MANIFEST") || name == "CURRENT" {
                    env.remove_file(&Path::new("/db").join(name)).unwrap();
                }
            }
        }
        strata::repair("/db", &options).unwrap();
        let db = DB::open("/db", options).unwrap();
        let got = scan(&db, &ReadOptions::default()).unwrap();
        assert!(got == model, "seed {seed}: scan differs");
        for (key, value) in &model {
            assert_eq!(db.get(key).unwrap().as_ref(), Some(value), "seed {seed}");
        }
    }
}
