//! The publishing store.

use super::*;

/// The header is published by the word store, and the bytes around it keep their values.
#[test]
fn store_word_writes_eight_bytes_and_nothing_else() {
    let mut bytes = [0xAAu8; 24];
    store_word(&mut bytes[5..13], *b"12345678");
    assert_eq!(&bytes[5..13], b"12345678");
    assert!(bytes[..5].iter().chain(&bytes[13..]).all(|&b| b == 0xAA));
}
