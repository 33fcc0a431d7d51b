//! Fuzz target `filter`: see `strata::testing::fuzz::filter`, which its proptest twin also runs.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| strata::testing::fuzz::filter(data));
