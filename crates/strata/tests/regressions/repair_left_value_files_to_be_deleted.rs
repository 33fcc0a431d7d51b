//! Repair left in `lost/` tables whose value files the database then deleted (noticed in the
//! reviews of the change making repair read every value a table points to). A table set aside
//! whole (its footer or index block damaged) names values in value files; once no salvaged
//! table named a file, or named only some of its values (files are shared by many tables), the
//! database's garbage collection deleted it, and the table in `lost/` pointed to nothing. Now
//! a value file no salvaged table names goes to `lost/`, and `lost/` gets a second name for
//! each of the others: repair deletes nothing.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use strata::{Env, MemEnv, Options, ValueSeparation, DB};

use super::repair_ignored_value_pointers::{key, value};
use crate::support;

const DIR: &str = "/db";

fn separating(env: &Arc<MemEnv>) -> Options {
    Options {
        value_separation: Some(ValueSeparation::new(256)),
        ..support::options(env)
    }
}

/// A database of one table per range of keys (`start..end` pairs; their values in one value
/// file) whose first table's footer is zeroed: it cannot be opened, so repair sets it aside
/// whole. Returns the tables and value files.
fn first_table_unreadable(
    env: &Arc<MemEnv>,
    ranges: &[(u32, u32)],
) -> (BTreeSet<u64>, BTreeSet<u64>) {
    let db = DB::open(DIR, separating(env)).unwrap();
    for &(start, end) in ranges {
        for i in start..end {
            db.put(&key(i), &value(i)).unwrap();
        }
        db.compact_range(Some(&key(start)), Some(&key(end - 1)))
            .unwrap();
    }
    drop(db);
    let dir = Path::new(DIR);
    let tables = support::files::numbered_files(&**env, dir, ".ldb");
    let value_files = support::files::numbered_files(&**env, dir, ".vlog");
    assert_eq!((tables.len(), value_files.len()), (ranges.len(), 1));
    let table = dir.join(format!("{:06}.ldb", tables.first().unwrap()));
    support::files::rewrite_file(&**env, &table, |bytes| {
        let len = bytes.len();
        bytes[len - 48..].fill(0);
    });
    (tables, value_files)
}

#[test]
fn a_value_file_only_a_table_set_aside_names_goes_to_lost_with_it() {
    let env = Arc::new(MemEnv::new());
    let (tables, value_files) = first_table_unreadable(&env, &[(0, 50)]);
    let dir = Path::new(DIR);

    strata::repair(DIR, &separating(&env)).unwrap();
    let lost = dir.join("lost");
    assert_eq!(
        support::files::numbered_files(&*env, &lost, ".vlog"),
        value_files
    );
    let db = DB::open(DIR, separating(&env)).unwrap();
    db.put(b"after", &value(1)).unwrap();
    db.compact_range(None, None).unwrap();
    drop(db);
    assert_eq!(
        support::files::numbered_files(&*env, &lost, ".vlog"),
        value_files,
        "the value file set aside is still there after the database ran"
    );
    assert_eq!(support::files::numbered_files(&*env, &lost, ".ldb"), tables);
}

#[test]
fn a_value_file_a_table_set_aside_shares_with_a_salvaged_one_is_kept_in_lost_too() {
    let env = Arc::new(MemEnv::new());
    let (_, value_files) = first_table_unreadable(&env, &[(0, 50), (100, 150)]);
    let dir = Path::new(DIR);

    strata::repair(DIR, &separating(&env)).unwrap();
    let lost = dir.join("lost");
    assert_eq!(
        support::files::numbered_files(&*env, dir, ".vlog"),
        value_files
    );
    assert_eq!(
        support::files::numbered_files(&*env, &lost, ".vlog"),
        value_files
    );
    // The database collects the file (the salvaged table holds a third of it or less) and
    // relocates what it reads; the copy in lost/ stays whole.
    let vlog = Path::new("lost").join(format!("{:06}.vlog", value_files.first().unwrap()));
    let size = env.file_size(&dir.join(&vlog)).unwrap();
    let db = DB::open(DIR, separating(&env)).unwrap();
    for i in 100..150 {
        assert_eq!(db.get(&key(i)).unwrap(), Some(value(i)));
    }
    db.put(b"after", &value(1)).unwrap();
    db.compact_range(None, None).unwrap();
    drop(db);
    assert_eq!(env.file_size(&dir.join(&vlog)).unwrap(), size);
}
