//! Fuzz target `table`: see `strata::testing::fuzz::table`, which its proptest twin also runs.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| strata::testing::fuzz::table(data));
