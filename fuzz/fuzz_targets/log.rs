//! Fuzz target `log`: see `strata::testing::fuzz::log`, which its proptest twin also runs.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| strata::testing::fuzz::log(data));
