//! Proptest twins of the cargo-fuzz targets in `fuzz/`: each runs the very function its fuzz
//! target runs (`strata::testing::fuzz::*`) on arbitrary bytes, so the test command keeps every
//! target body compiling and honest without a nightly toolchain. `STRATA_FUZZ_CASES` overrides
//! the number of cases per target (a long run: `STRATA_FUZZ_CASES=100000`).

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::Config;
use strata::testing::fuzz;

/// `default` cases, or `STRATA_FUZZ_CASES` when set.
fn config(default: u32) -> Config {
    let cases = std::env::var("STRATA_FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default);
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}

// The decoder targets: a few milliseconds a case.
proptest! {
    #![proptest_config(config(2048))]

    #[test]
    fn fuzz_twin_block(data in vec(any::<u8>(), 0..1500)) {
        fuzz::block(&data);
    }

    #[test]
    fn fuzz_twin_filter(data in vec(any::<u8>(), 0..1500)) {
        fuzz::filter(&data);
    }

    #[test]
    fn fuzz_twin_table(data in vec(any::<u8>(), 0..3000)) {
        fuzz::table(&data);
    }

    #[test]
    fn fuzz_twin_log(data in vec(any::<u8>(), 0..1500)) {
        fuzz::log(&data);
    }

    #[test]
    fn fuzz_twin_value_file(data in vec(any::<u8>(), 0..1500)) {
        fuzz::value_file(&data);
    }

    #[test]
    fn fuzz_twin_version_edit(data in vec(any::<u8>(), 0..600)) {
        fuzz::version_edit(&data);
    }
}

// The targets that open databases: slower a case.
proptest! {
    #![proptest_config(config(512))]

    #[test]
    fn fuzz_twin_write_batch(data in vec(any::<u8>(), 0..1500)) {
        fuzz::write_batch(&data);
    }

    #[test]
    fn fuzz_twin_db_ops(data in vec(any::<u8>(), 0..4000)) {
        fuzz::db_ops(&data);
    }
}
