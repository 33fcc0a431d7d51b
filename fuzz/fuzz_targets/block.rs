//! Fuzz target `block`: see `strata::testing::fuzz::block`, which its proptest twin also runs.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| strata::testing::fuzz::block(data));
