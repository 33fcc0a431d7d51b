//! Value separation is a format extension (docs/design.md, section 4.4): a database opened with
//! `Options::value_separation` records the `value-separation` token in its marker before open
//! returns, keeps it, and opens afterwards only with the option on; the error names the option.
//! (That real LevelDB refuses such a directory is proven in `crates/leveldb-peer/tests`.)

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::path::Path;
use std::sync::Arc;

use strata::{Error, MemEnv, Options, ValueSeparation, DB};
use support::files::recorded_comparator;

const DIR: &str = "/db";

fn separating(env: &Arc<MemEnv>) -> Options {
    Options {
        value_separation: Some(ValueSeparation::new(100)),
        ..support::options(env)
    }
}

#[test]
fn the_option_records_the_marker_and_is_then_required_by_name() {
    let env = Arc::new(MemEnv::new());
    let db = DB::open(DIR, separating(&env)).unwrap();
    assert_eq!(
        recorded_comparator(&*env, Path::new(DIR)),
        "strata.v1+value-separation:leveldb.BytewiseComparator"
    );
    db.put(b"k", b"v").unwrap();
    drop(db);

    let err = DB::open(DIR, support::options(&env)).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    let message = err.to_string();
    assert!(
        message.contains("`value-separation`")
            && message.contains("Options::value_separation = Some(ValueSeparation { .. })"),
        "{message}"
    );
    let db = DB::open(DIR, separating(&env)).unwrap();
    assert_eq!(db.get(b"k").unwrap(), Some(b"v".to_vec()));
}

#[test]
fn enabling_it_on_a_database_with_other_extensions_lists_them_in_order() {
    let env = Arc::new(MemEnv::new());
    let ttl = Options {
        expiring_keys: true,
        ..support::options(&env)
    };
    drop(DB::open(DIR, ttl.clone()).unwrap());
    let both = Options {
        expiring_keys: true,
        ..separating(&env)
    };
    drop(DB::open(DIR, both).unwrap());
    assert_eq!(
        recorded_comparator(&*env, Path::new(DIR)),
        "strata.v1+expiring-keys+value-separation:leveldb.BytewiseComparator"
    );
    let err = DB::open(DIR, ttl).unwrap_err();
    assert!(
        err.to_string().contains("Options::value_separation"),
        "{err}"
    );
}
