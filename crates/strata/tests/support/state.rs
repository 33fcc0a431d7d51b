//! What a database holds, read through its API: a scan, a checked read of the whole state, and
//! the tables its current version lists, the writes' stalls; and a level 0 crowded on purpose.

use std::collections::{BTreeMap, BTreeSet};

use strata::{ReadOptions, DB};

/// A database's contents: user key to value.
pub type Model = BTreeMap<Vec<u8>, Vec<u8>>;

/// Every key and value a forward scan with `read` yields.
pub fn scan(db: &DB, read: &ReadOptions) -> strata::Result<Model> {
    let mut it = db.iter_opt(read);
    it.seek_to_first();
    let mut state = Model::new();
    while it.valid() {
        state.insert(it.key().to_vec(), it.value().to_vec());
        it.next();
    }
    it.status()?;
    Ok(state)
}

/// The whole database by a forward scan, checked against a backward scan and point lookups of
/// `probe_keys` (which must agree with the scan).
pub fn read_state(db: &DB, probe_keys: &[Vec<u8>]) -> strata::Result<Model> {
    let state = scan(db, &ReadOptions::default())?;
    let mut it = db.iter();
    let mut backward = 0;
    it.seek_to_last();
    while it.valid() {
        backward += 1;
        it.prev();
    }
    it.status()?;
    assert_eq!(backward, state.len(), "backward scan saw a different count");
    for key in probe_keys {
        let got = db.get(key)?;
        assert_eq!(
            got.as_ref(),
            state.get(key),
            "get and scan disagree on {}",
            String::from_utf8_lossy(key)
        );
    }
    Ok(state)
}

/// Table numbers per level, as the `leveldb.sstables` property lists them.
pub fn tables_by_level(db: &DB) -> Vec<Vec<u64>> {
    let text = db.property("leveldb.sstables").unwrap();
    let mut levels: Vec<Vec<u64>> = Vec::new();
    for line in text.lines() {
        if line.starts_with("--- level") {
            levels.push(Vec::new());
        } else if let Some((number, _)) = line.trim_start().split_once(':') {
            levels.last_mut().unwrap().push(number.parse().unwrap());
        }
    }
    levels
}

/// Every table number the current version lists.
pub fn live_tables(db: &DB) -> BTreeSet<u64> {
    tables_by_level(db).into_iter().flatten().collect()
}

/// The waits and microseconds `strata.write-stalls` reports for `cause` (`level0-slowdown`,
/// `level0-stop`, `memtable-full`, `value-files`).
pub fn write_stalls(db: &DB, cause: &str) -> (u64, u64) {
    let stalls = db.property("strata.write-stalls").unwrap();
    stalls
        .lines()
        .find_map(|line| {
            let (waits, micros) = line
                .strip_prefix(cause)?
                .strip_prefix(' ')?
                .split_once(' ')?;
            Some((waits.parse().ok()?, micros.parse().ok()?))
        })
        .unwrap_or_else(|| panic!("no {cause} line in {stalls:?}"))
}

/// The number of tables at `level` (the `leveldb.num-files-at-level<N>` property).
pub fn files_at_level(db: &DB, level: usize) -> usize {
    db.property(&format!("leveldb.num-files-at-level{level}"))
        .unwrap()
        .parse()
        .unwrap()
}

/// Level-0 tables that start a compaction (`version/policy.rs`).
pub const L0_COMPACTION_TRIGGER: usize = 4;
/// Level-0 tables at which writes wait for a compaction (`version/policy.rs`).
pub const L0_STOP_WRITES_TRIGGER: usize = 12;

/// Calls `write_round` with 0, 1, ... until level 0 holds at least [`L0_COMPACTION_TRIGGER`]
/// tables, and returns the number of rounds written. A test that holds the compaction starting
/// then waits for the hold instead of writing on: on a loaded machine the compaction may start
/// late, and rounds written meanwhile could take level 0 to its stop trigger, where a write
/// waits for the held compaction for good.
pub fn write_until_level0_compacts(db: &DB, mut write_round: impl FnMut(u32)) -> u32 {
    let mut round = 0;
    while files_at_level(db, 0) < L0_COMPACTION_TRIGGER {
        assert!(round < 40, "level 0 never reached the compaction trigger");
        write_round(round);
        round += 1;
    }
    round
}

/// Suspends compactions and puts `value` under the same 100 keys, over and over, until level
/// 0 holds `files` tables (each memtable flushed there, over those keys).
pub fn crowd_level_0(db: &DB, files: usize, value: &[u8]) {
    db.suspend_compactions();
    let mut n = 0u32;
    while files_at_level(db, 0) < files {
        assert!(n < 100_000, "level 0 never filled up");
        db.put(format!("k{:03}", n % 100).as_bytes(), value)
            .unwrap();
        n += 1;
    }
}
