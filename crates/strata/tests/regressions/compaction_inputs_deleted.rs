//! The tables a compaction replaced must be deleted when it finishes. The sweep ran while the
//! compaction still held its input version, which kept every input "live": they lingered
//! until some later flush or compaction (or the next open), wasting space, and `repair` would
//! take them for data.

use std::path::Path;
use std::sync::Arc;

use strata::{MemEnv, DB};

use crate::support::files::numbered_files;
use crate::support::options;
use crate::support::state::files_at_level;

fn tables_on_disk(env: &MemEnv) -> usize {
    numbered_files(env, Path::new("/db"), ".ldb").len()
}

fn live_tables(db: &DB) -> usize {
    (0..7).map(|l| files_at_level(db, l)).sum()
}

#[test]
fn compaction_inputs_are_deleted_when_it_finishes() {
    let env = Arc::new(MemEnv::new());
    let db = DB::open("/db", options(&env)).unwrap();
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
