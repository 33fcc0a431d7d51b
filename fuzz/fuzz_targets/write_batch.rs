//! Fuzz target `write_batch`: see `strata::testing::fuzz::write_batch`, which its proptest twin also runs.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| strata::testing::fuzz::write_batch(data));
