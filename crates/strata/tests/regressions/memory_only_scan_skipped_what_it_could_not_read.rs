//! A scan with `ReadOptions::memory_only` yielded entries the database does not hold. A
//! level's iterator that could not open a table (`WouldBlock`: not in the table cache) moved
//! on to the level's next table, and a table's iterator that could not read a block from
//! memory moved on to its next block, each keeping the error for `status()` but staying
//! valid; the merge stops only at a child that is invalid with an error, so it went on with
//! the other sources: keys of the skipped table or block came from older levels with their
//! old values (or not at all), while `valid()` was true. (LevelDB's iterators skip a block
//! that fails the same way; for damage Strata keeps that, a scan then yields every key it can
//! read, but a memory-only read is refused all the time.) Now a memory-only table or level
//! iterator stops at the first block or table it cannot read from memory, invalid with
//! `WouldBlock`, and the merge stops with it. Found by the review of branch `memory-only`.

use std::sync::Arc;

use strata::{Error, MemEnv, ReadOptions, DB};

use crate::support;

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

/// Entries as a scan yields them: key and value.
type Entries = Vec<(Vec<u8>, Vec<u8>)>;

/// Forces the memtable into a table without compacting anything (the range overlaps no key).
fn flush(db: &DB) {
    db.compact_range(Some(b"zzz"), Some(b"zzz")).unwrap();
}

/// Every `(key, value)` an iterator made with `read` yields from the first key, and its status.
fn scan(db: &DB, read: &ReadOptions) -> (Entries, strata::Result<()>) {
    let mut it = db.iter_opt(read);
    it.seek_to_first();
    let mut seen = Vec::new();
    while it.valid() {
        seen.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    (seen, it.status())
}

/// What a scan of `db` in `direction` with `read` yields while valid, and its status.
fn scan_from_either_end(
    db: &DB,
    read: &ReadOptions,
    backward: bool,
) -> (Entries, strata::Result<()>) {
    if !backward {
        return scan(db, read);
    }
    let mut it = db.iter_opt(read);
    it.seek_to_last();
    let mut seen = Vec::new();
    while it.valid() {
        seen.push((it.key().to_vec(), it.value().to_vec()));
        it.prev();
    }
    (seen, it.status())
}

/// Level 1 holds the newest values in three tables, level 2 the older values of the same
/// keys. Reopened, the first and last level-1 tables and the level-2 table are open, the
/// middle level-1 table is not: a memory-only scan, forward or backward, must stop with
/// `WouldBlock` when it reaches the middle table's keys — not skip to the next level-1 table
/// and meanwhile yield those keys from level 2 with their old values.
#[test]
fn a_memory_only_scan_never_yields_values_a_table_it_could_not_open_hides() {
    let env = Arc::new(MemEnv::new());
    let options = support::options(&env);
    let db = DB::open("/db", options.clone()).unwrap();
    // The oldest values, and keys 200..210 that only level 2 will hold.
    for i in 0..210 {
        db.put(&key(i), b"old").unwrap();
    }
    flush(&db);
    for range in [0..70, 70..140, 140..200] {
        for i in range {
            db.put(&key(i), b"new").unwrap();
        }
        flush(&db);
    }
    let layout = support::state::tables_by_level(&db);
    assert_eq!(
        (layout[1].len(), layout[2].len()),
        (3, 1),
        "setup: three tables at level 1 over one at level 2: {layout:?}"
    );
    drop(db);

    let db = DB::open("/db", options).unwrap();
    // Reads that may wait open the first and last level-1 tables (keys 5 and 150 are there)
    // and the level-2 table (key 205 is only there); the middle level-1 table stays closed.
    assert_eq!(db.get(&key(5)).unwrap().as_deref(), Some(&b"new"[..]));
    assert_eq!(db.get(&key(150)).unwrap().as_deref(), Some(&b"new"[..]));
    assert_eq!(db.get(&key(205)).unwrap().as_deref(), Some(&b"old"[..]));
    assert!(
        matches!(
            db.get_opt(&support::memory_only(), &key(100)),
            Err(Error::WouldBlock(_))
        ),
        "setup: the middle level-1 table is not open"
    );

    // What the database holds (a scan that may wait would open the middle table).
    let expected: Entries = (0..210)
        .map(|i| {
            (
                key(i),
                if i < 200 {
                    b"new".to_vec()
                } else {
                    b"old".to_vec()
                },
            )
        })
        .collect();
    for backward in [false, true] {
        let (seen, status) = scan_from_either_end(&db, &support::memory_only(), backward);
        let mut model = expected.clone();
        if backward {
            model.reverse();
        }
        let wrong = seen.iter().zip(&model).position(|(a, b)| a != b);
        assert!(
            wrong.is_none(),
            "a memory-only scan (backward: {backward}) yielded {:?} where the database holds \
             {:?} (status {status:?})",
            wrong.map(|at| (
                String::from_utf8_lossy(&seen[at].0),
                String::from_utf8_lossy(&seen[at].1)
            )),
            wrong.map(|at| (
                String::from_utf8_lossy(&model[at].0),
                String::from_utf8_lossy(&model[at].1)
            )),
        );
        match status {
            Ok(()) => assert_eq!(seen, model),
            Err(e) => assert!(matches!(e, Error::WouldBlock(_)), "{e}"),
        }
    }
    // The scan that may wait agrees with the model.
    let (all, status) = scan(&db, &ReadOptions::default());
    status.unwrap();
    assert_eq!(all, expected);
}

/// The same within one table: level 1 holds the newest values in one table whose pages the
/// operating system dropped (`posix_fadvise(DONTNEED)`, as memory pressure would) except the
/// last block's, level 2 the older values. Every table is open. A memory-only iterator finds
/// the first blocks of the level-1 table not in memory; it must stop there with
/// `WouldBlock`, not skip to the table's last block and yield the first keys from level 2.
#[test]
fn a_memory_only_scan_never_yields_values_a_block_not_in_memory_hides() {
    let dir = tempfile::tempdir().unwrap();
    let options = strata::Options {
        create_if_missing: true,
        compression: strata::CompressionType::None,
        env: Arc::new(strata::PosixEnv::new()),
        ..strata::Options::default()
    };
    let db = DB::open(dir.path(), options.clone()).unwrap();
    for i in 0..2010 {
        db.put(&key(i), &[b'o'; 100]).unwrap();
    }
    flush(&db);
    for i in 0..2000 {
        db.put(&key(i), &[b'n'; 100]).unwrap();
    }
    flush(&db);
    let layout = support::state::tables_by_level(&db);
    assert_eq!(
        (layout[1].len(), layout[2].len()),
        (1, 1),
        "setup: one table at level 1 over one at level 2: {layout:?}"
    );
    let newest = dir.path().join(format!("{:06}.ldb", layout[1][0]));
    drop(db);

    let db = DB::open(dir.path(), options).unwrap();
    // Both tables open: key 1999 is in the level-1 table's last block, key 2005 only in
    // level 2.
    assert_eq!(db.get(&key(1999)).unwrap(), Some(vec![b'n'; 100]));
    assert_eq!(db.get(&key(2005)).unwrap(), Some(vec![b'o'; 100]));
    let file = std::fs::File::open(&newest).unwrap();
    // SAFETY: posix_fadvise only reads its integer arguments; the descriptor is open.
    let advised = unsafe {
        libc::posix_fadvise(
            std::os::fd::AsRawFd::as_raw_fd(&file),
            0,
            0,
            libc::POSIX_FADV_DONTNEED,
        )
    };
    assert_eq!(advised, 0);
    if !matches!(
        db.get_opt(&support::memory_only(), &key(0)),
        Err(Error::WouldBlock(_))
    ) {
        // A file system that keeps every page (tmpfs) cannot stage this; the test above
        // checks the same rule at the level of tables.
        eprintln!("the OS kept the dropped pages in memory: nothing to check here");
        return;
    }
    assert_eq!(
        db.get_opt(&support::memory_only(), &key(1999)).unwrap(),
        Some(vec![b'n'; 100]),
        "setup: the last block is in memory"
    );

    let mut it = db.iter_opt(&support::memory_only());
    it.seek_to_first();
    if it.valid() {
        assert_eq!(
            (it.key(), it.value().first()),
            (&key(0)[..], Some(&b'n')),
            "a memory-only iterator yielded {:?} = {:?}... first (status {:?}); the \
             database's first entry is key000000 = nnn...",
            String::from_utf8_lossy(it.key()),
            String::from_utf8_lossy(&it.value()[..3.min(it.value().len())]),
            it.status()
        );
    } else {
        assert!(
            matches!(it.status(), Err(Error::WouldBlock(_))),
            "{:?}",
            it.status()
        );
    }
}
