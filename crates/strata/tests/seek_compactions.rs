//! Reads that keep looking past a file make it a seek-compaction candidate (LevelDB's rule: a
//! file earns `max(100, size / 16 KiB)` such reads), and the compaction that follows pushes it
//! down. It is merged on the background thread alone, even when its input is large enough to
//! be cut into key ranges: the readers that asked for it keep the other core. Reads that a
//! file's filter answers read no block of it and are not charged.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use strata::{BloomFilterPolicy, CompressionType, FilterPolicy, Logger, MemEnv, Options, DB};

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

/// A database of 40,000 keys with 150-byte values below level 1 (6 MiB: what a
/// size-triggered compaction of this much would cut in ranges), and above them, alone in level
/// 1, a small table over the whole key range holding every 400th key with the value `new`;
/// `filter` as its filter policy. The log starts empty after the setup.
fn read_past_setup(filter: Option<Arc<dyn FilterPolicy>>) -> (DB, Arc<Messages>, Vec<u8>) {
    let messages = Arc::new(Messages::default());
    let options = Options {
        write_buffer_size: 8 << 20,
        max_file_size: 1 << 20,
        compression: CompressionType::None,
        max_subcompactions: 4,
        filter_policy: filter,
        info_log: Some(messages.clone()),
        ..support::options(&Arc::new(MemEnv::new()))
    };
    let db = DB::open("/db", options).unwrap();
    let value = vec![b'v'; 150];
    for i in 0..40_000 {
        db.put(&key(i), &value).unwrap();
    }
    db.compact_range(None, None).unwrap();
    assert_eq!((files_at_level(&db, 0), files_at_level(&db, 1)), (0, 0));
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
    (db, messages, value)
}

/// Reads 199 keys the level-1 table of [`read_past_setup`] lacks: each looks at that table
/// first, then finds the key below.
fn read_past(db: &DB, value: &[u8]) {
    for i in (1..40_000).step_by(202) {
        assert_eq!(db.get(&key(i)).unwrap().as_deref(), Some(value));
    }
}

#[test]
fn a_file_read_past_is_compacted_down_on_one_thread() {
    let (db, messages, value) = read_past_setup(None);
    read_past(&db, &value);
    let log = compacted_down(&db, &messages);
    assert!(
        !log.contains("key ranges in parallel"),
        "not cut into ranges:\n{log}"
    );
}

/// Waits for [`read_past_setup`]'s level-1 table to be compacted down by a seek compaction,
/// checks its keys still read `new`, and returns the log.
fn compacted_down(db: &DB, messages: &Messages) -> String {
    wait_until(
        "the level-1 table is compacted down",
        Duration::from_secs(30),
        || files_at_level(db, 1) == 0,
    );
    let log = messages.0.lock().join("\n");
    assert!(
        log.contains("compacting 1@1 + "),
        "a seek compaction of the level-1 table:\n{log}"
    );
    for i in (0..40_000).step_by(400) {
        assert_eq!(db.get(&key(i)).unwrap().as_deref(), Some(&b"new"[..]));
    }
    log
}

/// Checks that [`read_past_setup`]'s level-1 table stays where it is and nothing is compacted.
fn stays(db: &DB, messages: &Messages) {
    // The compaction the reads would set off starts at once: give it time to show.
    std::thread::sleep(Duration::from_millis(500));
    let log = messages.0.lock().join("\n");
    assert_eq!(files_at_level(db, 1), 1, "the level-1 table stays:\n{log}");
    assert!(!log.contains("compacting"), "no compaction:\n{log}");
}

/// With a filter, the level-1 table's filter rules the keys out without a block read, so the
/// reads past it cost nothing a compaction would save: no seek is charged (unlike LevelDB,
/// which charges them as if each had read a block), and the table stays where it is. Twice
/// the reads that compact it without a filter.
#[test]
fn reads_a_filter_answers_charge_no_seek() {
    let (db, messages, value) = read_past_setup(Some(Arc::new(BloomFilterPolicy::new(10))));
    read_past(&db, &value);
    read_past(&db, &value);
    stays(&db, &messages);
}

/// The keys [`read_past`] reads, for one `get_many`.
fn read_past_keys() -> Vec<Vec<u8>> {
    (1..40_000).step_by(202).map(key).collect()
}

/// `get_many` charges as `get` does: without a filter each key the level-1 table lacks
/// searches its block in vain and goes on below, so the table is charged and compacted down.
#[test]
fn get_many_reads_past_a_file_compact_it_down() {
    let (db, messages, value) = read_past_setup(None);
    let keys = read_past_keys();
    let found = db.get_many(&keys).unwrap();
    assert!(found.iter().all(|v| v.as_deref() == Some(&value[..])));
    compacted_down(&db, &messages);
}

/// With a filter, `get_many` charges no seek for the keys the level-1 table's filter rules
/// out, even right after a key of the same batch searched (and found its key in) that table's
/// block: every absent key follows a present one in the same table, so a "searched" mark left
/// over from the previous key would charge the table 2 x 100 times.
#[test]
fn get_many_reads_a_filter_answers_charge_no_seek() {
    let (db, messages, value) = read_past_setup(Some(Arc::new(BloomFilterPolicy::new(10))));
    let keys = read_past_keys();
    for _ in 0..2 {
        let found = db.get_many(&keys).unwrap();
        assert!(found.iter().all(|v| v.as_deref() == Some(&value[..])));
    }
    // Each present key (in the level-1 table) followed by an absent one (found below).
    let pairs: Vec<Vec<u8>> = (0..40_000)
        .step_by(400)
        .flat_map(|i| [key(i), key(i + 1)])
        .collect();
    for _ in 0..2 {
        let found = db.get_many(&pairs).unwrap();
        for (k, v) in pairs.iter().zip(&found) {
            let expected: &[u8] = if k.ends_with(b"0") { b"new" } else { &value };
            assert_eq!(v.as_deref(), Some(expected));
        }
    }
    stays(&db, &messages);
}
