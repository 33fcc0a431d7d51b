//! Fuzz target `version_edit`: see `strata::testing::fuzz::version_edit`, which its proptest twin also runs.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| strata::testing::fuzz::version_edit(data));
