//! The publishing store; which file systems get a mapped log.

use super::*;

/// The header is published by the word store, and the bytes around it keep their values.
#[test]
fn store_word_writes_eight_bytes_and_nothing_else() {
    let mut bytes = [0xAAu8; 24];
    store_word(&mut bytes[5..13], *b"12345678");
    assert_eq!(&bytes[5..13], b"12345678");
    assert!(bytes[..5].iter().chain(&bytes[13..]).all(|&b| b == 0xAA));
}

/// A mapped log only where space can be reserved for every store: `fallocate` works and the
/// file system does not copy on write.
#[test]
fn only_file_systems_that_reserve_space_get_a_mapped_log() {
    const EXT4: i64 = 0xef53;
    const TMPFS: i64 = 0x0102_1994;
    const BTRFS: i64 = 0x9123_683e;
    let unsupported = || Err(io::Error::from_raw_os_error(libc::EOPNOTSUPP));
    assert!(mappable(EXT4, Ok(())));
    assert!(mappable(TMPFS, Ok(())));
    assert!(!mappable(EXT4, unsupported()));
    assert!(!mappable(BTRFS, Ok(())));
    // The file system these tests run on reserves space.
    let file = tempfile::tempfile().unwrap();
    assert!(reservable(&file));
    assert_eq!(file.metadata().unwrap().len(), 0, "the probe grew the file");
}
