//! A user key's versions may be split between two adjacent files of one level (a compaction cuts
//! its output by size, also between two versions of one key kept for a snapshot). A point
//! lookup at a level >= 1 must then find the file by *internal* key: picking it by user key
//! alone reads only the first file, misses the older version in the second, and returns an
//! even older value from a deeper level (or nothing).

use std::sync::Arc;

use strata::{MemEnv, Options, ReadOptions, DB};

/// Incompressible bytes, so the value's size is the table's size.
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

#[test]
fn snapshot_read_finds_the_older_version_in_the_next_file() {
    let env = Arc::new(MemEnv::new());
    let options = Options {
        max_file_size: 1 << 20,
        ..crate::support::options(&env)
    };
    let db = DB::open("/db", options).unwrap();
    // Something at level 2, so the next flush lands at level 1 and is compacted into level 2.
    db.put(b"a", b"first").unwrap();
    db.put(b"z", b"last").unwrap();
    db.compact_range(None, None).unwrap();
    assert_eq!(db.property("leveldb.num-files-at-level2").unwrap(), "1");

    let old = noise(1, 1_200_000);
    let new = noise(2, 1_200_000);
    db.put(b"k", &old).unwrap();
    let snapshot = db.snapshot();
    db.put(b"k", &new).unwrap();
    db.compact_range(None, None).unwrap();
    // The output was cut right after k's newest version: k spans two level-2 files.
    let sstables = db.property("leveldb.sstables").unwrap();
    let files: usize = db
        .property("leveldb.num-files-at-level2")
        .unwrap()
        .parse()
        .unwrap();
    assert!(files >= 2, "{sstables}");

    assert_eq!(db.get(b"k").unwrap(), Some(new.clone()));
    let at_snapshot = ReadOptions {
        snapshot: Some(snapshot.clone()),
        ..ReadOptions::default()
    };
    let got = db.get_opt(&at_snapshot, b"k").unwrap();
    assert!(
        got.as_ref() == Some(&old),
        "snapshot read of k returned {:?} bytes",
        got.map(|v| v.len())
    );

    // The iterator agrees.
    let mut it = db.iter_opt(&at_snapshot);
    it.seek(b"k");
    assert!(it.valid());
    assert_eq!(it.key(), b"k");
    assert!(it.value() == old.as_slice());
}
