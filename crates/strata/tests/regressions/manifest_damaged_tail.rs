//! A manifest edit cut by power loss and replaced by garbage (a complete-looking record with a
//! bad checksum at the end of the manifest) made open fail with a corruption error, though the
//! edit was never acknowledged and nothing depended on it. Found by the power-loss tests.

use strata::testing::FaultEnv;
use strata::{Options, DB};

use crate::support::fault_env;
use crate::support::files::append_raw;
use crate::workload::{self, assert_holds, fill, names, DIR};

/// Appends to the last manifest a full record of 5 payload bytes whose checksum does not match.
fn append_bad_record(env: &FaultEnv) {
    let manifests = names(env, "MANIFEST-");
    append_raw(
        &**env.inner(),
        DIR,
        manifests.last().unwrap(),
        &[1, 2, 3, 4, 5, 0, 1, 9, 9, 9, 9, 9],
    );
}

#[test]
fn manifest_with_a_damaged_tail_opens() {
    for reuse_logs in [false, true] {
        let env = fault_env();
        let db = DB::open(DIR, workload::options(&env, reuse_logs)).unwrap();
        fill(&db, 0..500, 1);
        db.compact_range(None, None).unwrap();
        drop(db);
        append_bad_record(&env);
        let db = DB::open(DIR, workload::options(&env, reuse_logs)).unwrap();
        assert_holds(&db, 0..500, 1);
        fill(&db, 500..600, 2);
        drop(db);
        // The damaged manifest was replaced, and later opens are clean.
        let db = DB::open(DIR, workload::options(&env, reuse_logs)).unwrap();
        assert_holds(&db, 0..500, 1);
        assert_holds(&db, 500..600, 2);
        drop(db);
        // Paranoid checks refuse a damaged manifest tail.
        let env = fault_env();
        let db = DB::open(DIR, workload::options(&env, reuse_logs)).unwrap();
        fill(&db, 0..10, 1);
        drop(db);
        append_bad_record(&env);
        let paranoid = Options {
            paranoid_checks: true,
            ..workload::options(&env, reuse_logs)
        };
        let err = DB::open(DIR, paranoid).unwrap_err();
        assert!(err.is_corruption(), "{err}");
    }
}
