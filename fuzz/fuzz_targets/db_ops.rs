//! Fuzz target `db_ops`: see `strata::testing::fuzz::db_ops`, which its proptest twin also runs.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| strata::testing::fuzz::db_ops(data));
