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

/// A log on a fresh file in `dir`, with `records` records of 100 bytes appended the way the
/// log writer appends them (each given the room left in its block).
fn log_with_records(dir: &Path, records: usize) -> (MappedLogFile, PathBuf) {
    const BLOCK: usize = 32 << 10;
    let path = dir.join("000001.log");
    let file = File::options()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)
        .unwrap();
    let Ok(mut log) = MappedLogFile::new(file, &path) else {
        panic!("the test's file system gets no mapped log");
    };
    let record = [7u8; 100];
    for _ in 0..records {
        let block_left = BLOCK - log.len as usize % BLOCK;
        log.append_record(&record, block_left).unwrap();
    }
    (log, path)
}

/// Bytes of disk allocated to the file at `path`.
fn allocated(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).unwrap().blocks() * 512
}

/// Space is reserved ahead of the file's end while it is written (one `fallocate` serves many
/// blocks), and closing the log frees what was not written.
#[test]
fn space_reserved_ahead_is_freed_at_close() {
    let dir = tempfile::tempdir().unwrap();
    let (mut log, path) = log_with_records(dir.path(), 1000);
    let size = std::fs::metadata(&path).unwrap().len();
    assert!(size < RESERVE_AHEAD, "the test writes {size} bytes");
    assert!(
        allocated(&path) >= RESERVE_AHEAD,
        "{} bytes allocated to a file of {size}",
        allocated(&path)
    );
    log.close().unwrap();
    let len = std::fs::metadata(&path).unwrap().len();
    assert_eq!(len, log.len);
    assert!(
        allocated(&path) <= len.next_multiple_of(4096),
        "{} bytes still allocated to a closed log of {len}",
        allocated(&path)
    );
}

/// The window is advised against readahead (`rr` in its `smaps` flags): a fault into a newly
/// grown block then maps one page instead of reading the block's zeros ahead.
#[test]
fn windows_are_advised_against_readahead() {
    let dir = tempfile::tempdir().unwrap();
    let (log, path) = log_with_records(dir.path(), 10);
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
    let name = path.to_str().unwrap();
    let flags = smaps
        .lines()
        .skip_while(|line| !line.ends_with(name))
        .find_map(|line| line.strip_prefix("VmFlags:"))
        .unwrap_or_else(|| panic!("no mapping of {name} in smaps"));
    assert!(
        flags.split_whitespace().any(|flag| flag == "rr"),
        "the window's flags: {flags}"
    );
    drop(log);
}
