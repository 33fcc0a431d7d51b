//! Fuzz target `value_file`: see `strata::testing::fuzz::value_file`, which its proptest twin also
//! runs.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| strata::testing::fuzz::value_file(data));
