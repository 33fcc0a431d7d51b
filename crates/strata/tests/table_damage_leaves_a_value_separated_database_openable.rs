//! A damaged table data block costs the keys of that block, with or without value files
//! (docs/guarantees.md, "Table data blocks": reading a key of the block fails with a
//! corruption, every other key reads back). Since the value files' accounting errors became
//! the background error (merge 2a64cb4), the accounting pass that open runs over every table
//! (checksums verified) meets the damaged block, and the open of a database with
//! `Options::value_separation` fails with the corruption: no key reads back until `repair`.
//! The same damage in a database without value files opens as before.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::path::Path;
use std::sync::Arc;

use strata::{Error, MemEnv, Options, ReadOptions, ValueSeparation, DB};

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

/// A database in one table, inline values and (with value separation) some in value files,
/// with one byte of its first data block flipped; returns the options to open it with.
fn damaged_database(env: &Arc<MemEnv>, separation: Option<ValueSeparation>) -> Options {
    let options = Options {
        value_separation: separation,
        ..support::options(env)
    };
    let db = DB::open("/db", options.clone()).unwrap();
    for i in 0..500 {
        let size = if i % 10 == 0 { 1000 } else { 100 };
        db.put(&key(i), &vec![b'v'; size]).unwrap();
    }
    db.compact_range(None, None).unwrap();
    drop(db);
    let tables = support::files::numbered_files(&**env, Path::new("/db"), ".ldb");
    assert_eq!(tables.len(), 1, "setup: one table");
    let table = Path::new("/db").join(format!("{:06}.ldb", tables.first().unwrap()));
    support::files::rewrite_file(&**env, &table, |bytes| bytes[20] ^= 0x40);
    options
}

/// What a damaged first data block must leave: the database opens, a key of another block
/// reads back, a verified read of a key of the damaged block fails with a corruption.
fn check_opens_and_loses_only_the_block(options: Options, what: &str) {
    let db = match DB::open("/db", options) {
        Ok(db) => db,
        Err(e) => panic!("{what}: a damaged data block made the open fail: {e}"),
    };
    assert_eq!(db.get(&key(499)).unwrap(), Some(vec![b'v'; 100]), "{what}");
    let verified = ReadOptions {
        verify_checksums: true,
        ..ReadOptions::default()
    };
    assert!(
        matches!(db.get_opt(&verified, &key(1)), Err(Error::Corruption(_))),
        "{what}"
    );
}

/// The control: the same damage without value separation (passes).
#[test]
fn without_value_files_a_damaged_data_block_costs_only_its_keys() {
    let env = Arc::new(MemEnv::new());
    let options = damaged_database(&env, None);
    check_opens_and_loses_only_the_block(options, "without value separation");
}

/// Fails on review-nowait: the open fails with "corruption: block checksum mismatch (in
/// /db/000006.ldb at offset 0)", met by `value_files::delete_unreferenced` (its
/// `BlockReads::checked_uncached` pass over every table) and made the background error by
/// `background::delete_obsolete_files`, which `open::recover` then returns.
#[test]
fn with_value_files_a_damaged_data_block_costs_only_its_keys() {
    let env = Arc::new(MemEnv::new());
    let options = damaged_database(&env, Some(ValueSeparation::new(256)));
    check_opens_and_loses_only_the_block(options, "with value separation");
}
