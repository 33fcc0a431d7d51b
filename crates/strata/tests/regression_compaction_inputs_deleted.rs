//! The tables a compaction replaced must be deleted when it finishes. The sweep ran while the
//! compaction still held its input version, which kept every input "live": they lingered
//! until some later flush or compaction (or the next open), wasting space, and `repair` would
//! take them for data.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;

use strata::{Env, MemEnv, Options, DB};

fn tables_on_disk(env: &MemEnv) -> usize {
    env.children(Path::new("/db"))
        .unwrap()
        .iter()
        .filter(|n| n.ends_with(".ldb"))
        .count()
}

fn live_tables(db: &DB) -> usize {
    (0..7)
        .map(|l| {
            db.property(&format!("leveldb.num-files-at-level{l}"))
                .unwrap()
                .parse::<usize>()
                .unwrap()
        })
        .sum()
}

#[test]
fn compaction_inputs_are_deleted_when_it_finishes() {
    let env = Arc::new(MemEnv::new());
    let options = Options {
        create_if_missing: true,
        env: env.clone(),
        ..Options::default()
    };
    let db = DB::open("/db", options).unwrap();
    for round in 0..3 {
        for i in 0..100u32 {
            db.put(
                format!("key{i:03}").as_bytes(),
                format!("v{round}").as_bytes(),
            )
            .unwrap();
        }
        db.compact_range(None, None).unwrap();
        assert_eq!(tables_on_disk(&env), live_tables(&db), "round {round}");
    }
    assert_eq!(live_tables(&db), 1);
}
