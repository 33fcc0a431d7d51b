//! Compactions read their input without verifying checksums (unless `paranoid_checks`): a
//! damaged value was copied into a new table under a fresh, valid checksum, and from then on
//! read back as data. Found by the corruption tests (the first test works on a copy of the
//! template database of `corruption/mod.rs`). The second test guards the paranoid case, which
//! held already: the table reader verifies every block under `paranoid_checks`, so a compaction
//! must not launder a damaged block then either.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use strata::{CompressionType, MemEnv, Options, DB};

use crate::corruption::{
    self, assert_corruption_in, check_reads, copy_with_a_damaged_value, options, template, verified,
};
use crate::support::files::{file_names, rewrite_file};

/// Compactions read their input without verifying checksums (unless `paranoid_checks`): a
/// damaged value was copied into a new table under a fresh, valid checksum, and from then on
/// read back as data even with `verify_checksums`. Compactions now always verify; one that
/// meets damage fails, and the database refuses writes until it is repaired.
#[test]
fn compaction_copied_damage_under_fresh_checksums() {
    let t = template();
    let table = &t.tables[0];
    let (copy, key) = copy_with_a_damaged_value(t);
    let db = DB::open(&copy.path, options(false)).unwrap();
    // A key inside the damaged table's range makes the compaction read it.
    db.put(b"a000100x", b"overlaps").unwrap();
    let err = db.compact_range(None, None).unwrap_err();
    assert_corruption_in(&err, &table.name, Some(&table.data[5].0.range()));
    let err = db.put(b"later", b"write").unwrap_err();
    assert!(
        err.is_corruption(),
        "writes after a failed compaction: {err}"
    );
    // Reads go on: the damaged block fails, everything else reads back.
    let lost: BTreeSet<Vec<u8>> = table.data[5].1.iter().cloned().collect();
    let mut expected = t.expected.clone();
    expected.insert(b"a000100x".to_vec(), b"overlaps".to_vec());
    let reads = check_reads(
        &expected,
        &db,
        &verified(),
        &lost,
        &table.name,
        Some(&table.data[5].0.range()),
    );
    assert_eq!(reads.failed, lost.len());
    drop(db);
    // Repair leaves out the damaged block and nothing else.
    let repaired = corruption::copy_dir(&copy.path);
    strata::repair(&repaired.path, &options(false)).unwrap();
    let db = DB::open(&repaired.path, options(true)).unwrap();
    assert_eq!(db.get(key).unwrap(), None);
    assert_eq!(
        db.get(b"a000100x").unwrap().as_deref(),
        Some(&b"overlaps"[..])
    );
    db.put(b"later", b"write").unwrap();
}

fn value(i: u32) -> Vec<u8> {
    format!("value-{i:03}-{}", "x".repeat(80)).into_bytes()
}

#[test]
fn paranoid_compaction_refuses_a_damaged_block() {
    let env = Arc::new(MemEnv::new());
    let options = Options {
        paranoid_checks: true,
        compression: CompressionType::None,
        ..crate::support::options(&env)
    };
    {
        let db = DB::open("/db", options.clone()).unwrap();
        for i in 0..100u32 {
            db.put(format!("key{i:03}").as_bytes(), &value(i)).unwrap();
        }
        db.compact_range(None, None).unwrap();
    }
    // Damage one value inside the table, leaving its block checksum stale.
    let tables = file_names(&*env, Path::new("/db"), |n| n.ends_with(".ldb"));
    let table: PathBuf = Path::new("/db").join(&tables[0]);
    rewrite_file(&*env, &table, |bytes| {
        let at = bytes.windows(9).position(|w| w == b"value-050").unwrap();
        bytes[at + 6] = b'9';
    });

    let db = DB::open("/db", options).unwrap();
    // Overlapping writes, so the damaged table is merged, not moved.
    for i in (5..100u32).step_by(10) {
        db.put(format!("key{i:03}").as_bytes(), b"new").unwrap();
    }
    let compacted = db.compact_range(None, None);
    let read = db.get_opt(&verified(), b"key050");
    let laundered =
        compacted.is_ok() && matches!(&read, Ok(Some(v)) if v.starts_with(b"value-950"));
    assert!(
        !laundered,
        "the damaged value was compacted into a table with a valid checksum"
    );
}
