//! The publishing store; which file systems get a mapped log; the space reserved for the file
//! (ahead of its end, given back at close, block by block on a disk too full for more); the
//! windows' readahead advice.

use super::*;

/// Bytes of a log block (`log::BLOCK_SIZE`: `env` sits below `log`, so it is not imported).
const BLOCK: usize = 32 << 10;

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

/// A log on a fresh file in `dir`.
fn new_log(dir: &Path) -> (MappedLogFile, PathBuf) {
    let path = dir.join("000001.log");
    let file = File::options()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)
        .unwrap();
    let Ok(log) = MappedLogFile::new(file, &path) else {
        panic!("the test's file system gets no mapped log");
    };
    (log, path)
}

/// Appends a record of 100 bytes the way the log writer does (given the room left in its
/// block).
fn append_one(log: &mut MappedLogFile) {
    let block_left = BLOCK - log.len as usize % BLOCK;
    log.append_record(&[7u8; 100], block_left).unwrap();
}

/// Bytes of the file at `path`, bytes of disk allocated to it, and its allocation unit.
fn sizes(path: &Path) -> (u64, u64, u64) {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).unwrap();
    (meta.len(), meta.blocks() * 512, meta.blksize())
}

/// Space is reserved ahead of the file's end while it is written (one `fallocate` serves many
/// blocks), and closing the log frees what was not written.
#[test]
fn space_reserved_ahead_is_freed_at_close() {
    let dir = tempfile::tempdir().unwrap();
    let (mut log, path) = new_log(dir.path());
    for _ in 0..1000 {
        append_one(&mut log);
    }
    let (size, allocated, _) = sizes(&path);
    assert!(size < RESERVE_AHEAD, "the test writes {size} bytes");
    assert!(
        allocated >= RESERVE_AHEAD,
        "{allocated} bytes allocated to a file of {size}"
    );
    log.close().unwrap();
    let (len, allocated, unit) = sizes(&path);
    assert_eq!(len, log.len);
    assert!(
        allocated <= len.next_multiple_of(unit),
        "{allocated} bytes still allocated to a closed log of {len}"
    );
}

/// A disk with room for a block but not for the stretch ahead: each block is still reserved
/// before a store goes into it (the space allocated covers the file at every step, so no store
/// can meet a `SIGBUS`), and no more than a block is reserved past the file's end (ext4 also
/// counts its extent tree's blocks as allocated).
#[test]
fn a_disk_too_full_to_reserve_ahead_still_reserves_each_block() {
    crash_points::refuse_reserving_ahead(true);
    let dir = tempfile::tempdir().unwrap();
    let (mut log, path) = new_log(dir.path());
    for i in 0..1000 {
        append_one(&mut log);
        let (size, allocated, unit) = sizes(&path);
        assert!(
            allocated >= size && allocated <= size.next_multiple_of(unit) + BLOCK as u64,
            "after record {i}: {allocated} bytes allocated to a file of {size}"
        );
    }
    crash_points::refuse_reserving_ahead(false);
    assert!(
        log.len > 3 * BLOCK as u64,
        "the test crosses {} bytes",
        log.len
    );
}

/// Every window is advised against readahead (`rr` in its `smaps` flags): a fault into a newly
/// grown block then maps one page instead of reading the block's zeros ahead.
#[test]
fn windows_are_advised_against_readahead() {
    let dir = tempfile::tempdir().unwrap();
    let (mut log, path) = new_log(dir.path());
    // Into the second window (the first is mapped by `new`, the others by `window`).
    while log.len <= WINDOW + BLOCK as u64 {
        append_one(&mut log);
    }
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
    let name = path.to_str().unwrap();
    let mut mapping = smaps.lines().skip_while(|line| !line.ends_with(name));
    let offset = mapping
        .next()
        .and_then(|header| header.split_whitespace().nth(2))
        .unwrap_or_else(|| panic!("no mapping of {name} in smaps"));
    assert_ne!(
        u64::from_str_radix(offset, 16),
        Ok(0),
        "still the first window"
    );
    let flags = mapping
        .find_map(|line| line.strip_prefix("VmFlags:"))
        .unwrap_or_else(|| panic!("no flags for the mapping of {name}"));
    assert!(
        flags.split_whitespace().any(|flag| flag == "rr"),
        "the window's flags: {flags}"
    );
    drop(log);
}
