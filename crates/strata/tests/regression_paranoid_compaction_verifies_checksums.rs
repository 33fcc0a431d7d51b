//! (Guard; this held already: the table reader verifies every block under `paranoid_checks`.)
//! With `paranoid_checks`, "any corruption met fails the operation". A compaction reads every
//! block of its inputs; it must verify their checksums then, or a damaged block is rewritten
//! into a new table under a fresh, valid checksum and the damage becomes undetectable.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use strata::{CompressionType, Env, MemEnv, Options, ReadOptions, DB};

fn read_all(env: &MemEnv, path: &Path) -> Vec<u8> {
    let mut file = env.new_sequential_file(path).unwrap();
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = file.read(&mut buf).unwrap();
        if n == 0 {
            return out;
        }
        out.extend_from_slice(&buf[..n]);
    }
}

fn value(i: u32) -> Vec<u8> {
    format!("value-{i:03}-{}", "x".repeat(80)).into_bytes()
}

#[test]
fn paranoid_compaction_refuses_a_damaged_block() {
    let env = Arc::new(MemEnv::new());
    let options = Options {
        create_if_missing: true,
        paranoid_checks: true,
        compression: CompressionType::None,
        env: env.clone(),
        ..Options::default()
    };
    {
        let db = DB::open("/db", options.clone()).unwrap();
        for i in 0..100u32 {
            db.put(format!("key{i:03}").as_bytes(), &value(i)).unwrap();
        }
        db.compact_range(None, None).unwrap();
    }
    // Damage one value inside the table, leaving its block checksum stale.
    let table: PathBuf = env
        .children(Path::new("/db"))
        .unwrap()
        .into_iter()
        .find(|n| n.ends_with(".ldb"))
        .map(|n| Path::new("/db").join(n))
        .unwrap();
    let mut bytes = read_all(&env, &table);
    let at = bytes.windows(9).position(|w| w == b"value-050").unwrap();
    bytes[at + 6] = b'9';
    let mut file = env.new_writable_file(&table).unwrap();
    file.append(&bytes).unwrap();
    file.close().unwrap();

    let db = DB::open("/db", options).unwrap();
    // Overlapping writes, so the damaged table is merged, not moved.
    for i in (5..100u32).step_by(10) {
        db.put(format!("key{i:03}").as_bytes(), b"new").unwrap();
    }
    let compacted = db.compact_range(None, None);
    let verified = ReadOptions {
        verify_checksums: true,
        ..ReadOptions::default()
    };
    let read = db.get_opt(&verified, b"key050");
    let laundered =
        compacted.is_ok() && matches!(&read, Ok(Some(v)) if v.starts_with(b"value-950"));
    assert!(
        !laundered,
        "the damaged value was compacted into a table with a valid checksum"
    );
}
