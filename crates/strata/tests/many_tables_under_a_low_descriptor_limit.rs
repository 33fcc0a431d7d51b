//! A database of thousands of tables opens, reads, iterates and compacts in a process whose
//! descriptor limit is 256: mapped tables hold no descriptor, and the others keep one only
//! within a budget of a fifth of the limit. (Each cached table used to keep its descriptor, so
//! about a thousand tables — the table cache's default size — failed with EMFILE, and a
//! compaction meeting it stopped every write.)
//!
//! The database is written by hand (tables and a manifest, through `strata::testing`) so that
//! it has thousands of tables without gigabytes of data; the checks run in a child process
//! (this test binary again, running `child_reads_and_compacts_every_table`) whose
//! `RLIMIT_NOFILE` is set before it starts.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

use strata::testing::{build_table, internal_key, EditFields, EditNewFile};
use strata::{CompressionType, Options, PosixEnv, ReadOptions, DB};

mod support;

const TABLES: u64 = 3_200;
const KEYS_PER_TABLE: u64 = 4;
const DESCRIPTOR_LIMIT: u64 = 256;
/// Where the child finds the database.
const DIR_VAR: &str = "STRATA_MANY_TABLES_DIR";

fn key(table: u64, i: u64) -> Vec<u8> {
    format!("t{table:05}-{i}").into_bytes()
}

fn value(table: u64, i: u64) -> Vec<u8> {
    format!("value of {table}/{i}").into_bytes()
}

/// Writes `TABLES` small tables at level 1 (non-overlapping, in key order), one at level 2
/// under all of them (so that compacting level 1 has somewhere to go), and a manifest naming
/// them.
fn write_database(dir: &Path) {
    let mut edit = EditFields {
        comparator: Some("leveldb.BytewiseComparator".to_owned()),
        log_number: Some(0),
        next_file_number: Some(TABLES + 10),
        last_sequence: Some(TABLES * KEYS_PER_TABLE + 2),
        ..EditFields::default()
    };
    let mut sequence = 0;
    for table in 0..TABLES {
        let entries: Vec<(Vec<u8>, Vec<u8>)> = (0..KEYS_PER_TABLE)
            .map(|i| {
                sequence += 1;
                (
                    internal_key(&key(table, i), sequence + 2, true),
                    value(table, i),
                )
            })
            .collect();
        let bytes = build_table(&entries, CompressionType::Snappy, 4096, 16, None).unwrap();
        let number = table + 5;
        std::fs::write(dir.join(format!("{number:06}.ldb")), &bytes).unwrap();
        edit.new_files.push(EditNewFile {
            level: 1,
            number,
            file_size: bytes.len() as u64,
            smallest: entries[0].0.clone(),
            largest: entries[entries.len() - 1].0.clone(),
        });
    }
    let below = [
        (internal_key(b"t", 1, true), b"under".to_vec()),
        (internal_key(b"u", 2, true), b"under".to_vec()),
    ];
    let bytes = build_table(&below, CompressionType::Snappy, 4096, 16, None).unwrap();
    std::fs::write(dir.join("000001.ldb"), &bytes).unwrap();
    edit.new_files.push(EditNewFile {
        level: 2,
        number: 1,
        file_size: bytes.len() as u64,
        smallest: below[0].0.clone(),
        largest: below[1].0.clone(),
    });
    support::files::write_manifest(&PosixEnv::new(), dir, 2, &[edit]);
}

#[test]
fn thousands_of_tables_work_under_a_256_descriptor_limit() {
    let dir = tempfile::tempdir().unwrap();
    write_database(dir.path());
    let mut child = Command::new(std::env::current_exe().unwrap());
    child
        .args([
            "--exact",
            "child_reads_and_compacts_every_table",
            "--ignored",
        ])
        .args(["--nocapture", "--test-threads", "1"])
        .env(DIR_VAR, dir.path());
    // SAFETY: `setrlimit` is async-signal-safe, and the closure touches nothing else.
    unsafe {
        child.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: DESCRIPTOR_LIMIT,
                rlim_max: DESCRIPTOR_LIMIT,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    let output = child.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains("1 passed"),
        "the child failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
}

#[test]
#[ignore = "run by thousands_of_tables_work_under_a_256_descriptor_limit in a child process"]
fn child_reads_and_compacts_every_table() {
    let dir = std::env::var_os(DIR_VAR).expect("run by the parent test");
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `getrlimit` fills the struct it is given.
    assert_eq!(
        unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) },
        0
    );
    assert_eq!(limit.rlim_cur, DESCRIPTOR_LIMIT, "the parent set the limit");

    let db = DB::open(&dir, Options::default()).unwrap();
    // Every key, by point reads (each table opened, the table cache evicting as it goes)...
    for table in 0..TABLES {
        for i in 0..KEYS_PER_TABLE {
            assert_eq!(
                db.get(&key(table, i)).unwrap(),
                Some(value(table, i)),
                "{table}/{i}"
            );
        }
    }
    // ...by one iterator holding every table it passes...
    let mut it = db.iter_opt(&ReadOptions {
        fill_cache: false,
        ..ReadOptions::default()
    });
    it.seek_to_first();
    let mut count = 0;
    while it.valid() {
        count += 1;
        it.next();
    }
    it.status().unwrap();
    assert_eq!(count, TABLES * KEYS_PER_TABLE + 2);
    drop(it);
    // ...and a compaction of all of them, with writes going on.
    db.put(b"a-write-before", b"x").unwrap();
    db.compact_range(None, None).unwrap();
    db.put(b"a-write-after", b"y").unwrap();
    assert_eq!(
        db.get(&key(TABLES - 1, 3)).unwrap(),
        Some(value(TABLES - 1, 3))
    );
    let level1: usize = db
        .property("leveldb.num-files-at-level1")
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(level1, 0, "compacted down");
}
