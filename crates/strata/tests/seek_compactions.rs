//! Reads that keep looking past a file make it a seek-compaction candidate (LevelDB's rule: a
//! file earns `max(100, size / 16 KiB)` such reads), and the compaction that follows pushes it
//! down. It is merged on the background thread alone, even when its input is large enough to
//! be cut into key ranges: the readers that asked for it keep the other core.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use strata::{CompressionType, Logger, MemEnv, Options, DB};

mod support;
use support::state::files_at_level;
use support::trials::wait_until;

/// Keeps every message the database logs.
#[derive(Default)]
struct Messages(Mutex<Vec<String>>);

impl Logger for Messages {
    fn log(&self, message: &str) {
        self.0.lock().push(message.to_owned());
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

#[test]
fn a_file_read_past_is_compacted_down_on_one_thread() {
    let messages = Arc::new(Messages::default());
    let options = Options {
        write_buffer_size: 8 << 20,
        max_file_size: 1 << 20,
        compression: CompressionType::None,
        max_subcompactions: 4,
        info_log: Some(messages.clone()),
        ..support::options(&Arc::new(MemEnv::new()))
    };
    let db = DB::open("/db", options).unwrap();
    // 6 MiB below level 1: what a size-triggered compaction of this much would cut in ranges.
    let value = vec![b'v'; 150];
    for i in 0..40_000 {
        db.put(&key(i), &value).unwrap();
    }
    db.compact_range(None, None).unwrap();
    assert_eq!((files_at_level(&db, 0), files_at_level(&db, 1)), (0, 0));
    // A small table over the whole key range, flushed into level 1 above them.
    for i in (0..40_000).step_by(400) {
        db.put(&key(i), b"new").unwrap();
    }
    db.compact_range(Some(b"zzz"), Some(b"zzz")).unwrap();
    assert_eq!(
        files_at_level(&db, 1),
        1,
        "{}",
        db.property("leveldb.sstables").unwrap()
    );
    messages.0.lock().clear();

    // Each read of a key the small table lacks looks at it first, then finds the key below.
    for i in (1..40_000).step_by(202) {
        assert_eq!(db.get(&key(i)).unwrap().as_deref(), Some(&value[..]));
    }
    wait_until(
        "the level-1 table is compacted down",
        Duration::from_secs(30),
        || files_at_level(&db, 1) == 0,
    );
    let log = messages.0.lock().join("\n");
    assert!(
        log.contains("compacting 1@1 + "),
        "a seek compaction of the level-1 table:\n{log}"
    );
    assert!(
        !log.contains("key ranges in parallel"),
        "not cut into ranges:\n{log}"
    );
    for i in (0..40_000).step_by(400) {
        assert_eq!(db.get(&key(i)).unwrap().as_deref(), Some(&b"new"[..]));
    }
}
