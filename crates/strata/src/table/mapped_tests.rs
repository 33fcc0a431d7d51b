//! Tables read out of their file's mapping: the blocks a table reads in place there
//! (`read_lasting_block` for the index, filter and metaindex blocks, `read_data_block` for data
//! blocks; `Contents::Shared`) are checked as copies are, data blocks read in place stay out of
//! the block cache, and a read that must not wait for the disk does not search the meta blocks
//! once they left memory.

use std::sync::Arc;

use proptest::prelude::*;

use super::block_cache::BlockCache;
use super::format::{
    block_trailer, read_block, read_data_block, read_footer, read_lasting_block, BlockHandle,
    CompressionType, BLOCK_TRAILER_LEN,
};
use super::reader::{Table, META_RECHECK};
use super::tests::Entries;
use super::{BlockReads, TableOptions};
use crate::env::vec_files::VecFile;
use crate::env::{Env, PosixEnv, RandomAccessFile};
use crate::error::Result;
use crate::iter::InternalIterator;
use crate::util::internal_key::{internal_key, ValueType, MAX_SEQUENCE};

/// A file whose "mapping" (`shared`) is its first `map_len` bytes (shorter: the file grew since
/// it was mapped; longer than the bytes is clipped), the rest read with `read_at`.
struct SharedVec {
    bytes: Vec<u8>,
    map_len: usize,
}

impl RandomAccessFile for SharedVec {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        VecFile::new(self.bytes.clone()).read_at(offset, buf)
    }
    fn mapped(&self) -> Option<&[u8]> {
        Some(&self.bytes[..self.map_len.min(self.bytes.len())])
    }
    fn shared(&self) -> Option<bytes::Bytes> {
        Some(bytes::Bytes::copy_from_slice(
            &self.bytes[..self.map_len.min(self.bytes.len())],
        ))
    }
}

fn stored_block(prefix: usize, contents: &[u8], ctype: CompressionType) -> Vec<u8> {
    let mut file = vec![7u8; prefix];
    file.extend_from_slice(contents);
    file.extend_from_slice(&block_trailer(contents, ctype));
    file
}

type Outcome = std::result::Result<(Vec<u8>, bool), (String, Option<Option<u64>>)>;

fn lasting(f: &dyn RandomAccessFile, size: u64, h: &BlockHandle, verify: bool) -> Outcome {
    outcome(read_lasting_block(f.shared().as_ref(), f, size, h, verify))
}

/// `read_data_block` into a recycled buffer full of stale bytes.
fn data(f: &dyn RandomAccessFile, size: u64, h: &BlockHandle, verify: bool) -> Outcome {
    let stale = || vec![0xa5; 700];
    outcome(read_data_block(
        f.shared().as_ref(),
        f,
        size,
        h,
        verify,
        stale,
    ))
}

fn outcome(read: Result<super::contents::Contents>) -> Outcome {
    read.map(|c| (c.to_vec(), c.is_shared()))
        .map_err(|e| (e.to_string(), e.corruption_details().map(|d| d.offset)))
}

fn copied(bytes: &[u8], size: u64, h: &BlockHandle, verify: bool) -> Outcome {
    read_block(&VecFile::new(bytes.to_vec()), size, h, verify)
        .map(|c| (c, false))
        .map_err(|e| (e.to_string(), e.corruption_details().map(|d| d.offset)))
}

/// The shared path verifies the checksum when asked (and only then), with the block's offset.
#[test]
fn a_damaged_shared_block_is_a_checksum_corruption_at_its_offset() {
    let raw = b"hello hello hello hello hello".repeat(10);
    let compressed = snap::raw::Encoder::new().compress_vec(&raw).unwrap();
    for (stored, ctype) in [
        (&raw[..], CompressionType::None),
        (&compressed[..], CompressionType::Snappy),
    ] {
        let mut bytes = stored_block(3, stored, ctype);
        let handle = BlockHandle::new(3, stored.len() as u64);
        let len = bytes.len() as u64;
        let good = SharedVec {
            bytes: bytes.clone(),
            map_len: usize::MAX,
        };
        for read in [lasting, data] {
            let (got, shared) = read(&good, len, &handle, true).unwrap();
            assert_eq!((got, shared), (raw.clone(), ctype == CompressionType::None));
        }

        bytes[10] ^= 0x40;
        let bad = SharedVec {
            bytes: bytes.clone(),
            map_len: usize::MAX,
        };
        for read in [lasting, data] {
            let (reason, offset) = read(&bad, len, &handle, true).unwrap_err();
            assert_eq!(offset, Some(Some(3)), "{ctype:?}: {reason}");
            assert!(reason.contains("checksum"), "{ctype:?}: {reason}");
            if ctype == CompressionType::None {
                // Unverified, the damage is kept as is, in the mapping.
                let (got, shared) = read(&bad, len, &handle, false).unwrap();
                assert!(shared && got != raw);
            }
        }
    }
}

/// A bad compression type and a Snappy length bomb are corruptions on the shared path too.
#[test]
fn the_shared_path_rejects_bad_types_and_snappy_bombs() {
    let bytes = stored_block(3, b"abc", CompressionType::None);
    let mut bad_type = bytes.clone();
    bad_type[6] = 9;
    let f = SharedVec {
        bytes: bad_type,
        map_len: usize::MAX,
    };
    for read in [lasting, data] {
        let (err, _) = read(&f, bytes.len() as u64, &BlockHandle::new(3, 3), false).unwrap_err();
        assert!(err.contains("compression type"), "{err}");
    }

    let bomb = [0xff, 0xff, 0xff, 0xff, 0x0f];
    let bytes = stored_block(3, &bomb, CompressionType::Snappy);
    let f = SharedVec {
        bytes: bytes.clone(),
        map_len: usize::MAX,
    };
    for read in [lasting, data] {
        let (err, offset) =
            read(&f, bytes.len() as u64, &BlockHandle::new(3, 5), true).unwrap_err();
        assert_eq!(offset, Some(Some(3)), "{err}");
    }
}

proptest! {
    /// `read_lasting_block` and `read_data_block` (into a stale recycled buffer) on a file that
    /// shares its mapping give exactly what `read_block` gives on a copy of the file (bytes, or
    /// the same error at the same offset), for any handle, damage, mapping shorter than the
    /// file (it grew since) and `file_size` shorter or longer than the bytes; never a panic.
    #[test]
    fn mapped_reads_agree_with_read_block(
        contents in proptest::collection::vec(prop_oneof![Just(b'a'), any::<u8>()], 0..400),
        snappy in any::<bool>(),
        prefix in 0usize..20,
        damage in proptest::option::of((0usize..500, 1u8..=255)),
        handle_shift in prop_oneof![Just((0i64, 0i64)), (-10i64..10, -10i64..10)],
        map_cut in prop_oneof![Just(None), (0usize..500).prop_map(Some)],
        size_shift in prop_oneof![Just(0i64), -20i64..20],
        verify in any::<bool>(),
    ) {
        let (stored, ctype) = if snappy {
            (snap::raw::Encoder::new().compress_vec(&contents).unwrap(), CompressionType::Snappy)
        } else {
            (contents.clone(), CompressionType::None)
        };
        let mut bytes = stored_block(prefix, &stored, ctype);
        if let Some((at, x)) = damage {
            let at = at % bytes.len();
            bytes[at] ^= x;
        }
        let offset = (prefix as i64 + handle_shift.0).max(0) as u64;
        let size = (stored.len() as i64 + handle_shift.1).max(0) as u64;
        let handle = BlockHandle::new(offset, size);
        let file_size = (bytes.len() as i64 + size_shift).max(0) as u64;
        let map_len = map_cut.map_or(usize::MAX, |cut| cut % (bytes.len() + 1));
        let f = SharedVec { bytes: bytes.clone(), map_len };
        let want = copied(&bytes, file_size, &handle, verify);
        for got in [lasting(&f, file_size, &handle, verify), data(&f, file_size, &handle, verify)] {
            match (&got, &want) {
                (Ok((g, _)), Ok((w, _))) => prop_assert_eq!(g, w),
                _ => prop_assert_eq!(got, want.clone()),
            }
        }
    }
}

/// Options of the table round trips, with a bloom filter.
fn options(compression: CompressionType) -> TableOptions {
    super::tests::options(compression, true)
}

fn key(i: usize) -> Vec<u8> {
    format!("key{:06}", i * 2).into_bytes()
}

/// A table of the `n` keys `key(i)`, each with a 100-byte value.
fn build(opts: &TableOptions, n: usize) -> Vec<u8> {
    let entries: Entries = (0..n)
        .map(|i| {
            let k = internal_key(&key(i), 1000 + i as u64, ValueType::Value);
            (k, vec![b'v'; 100])
        })
        .collect();
    super::tests::build(opts, &entries)
}

fn found(table: &Table, reads: BlockReads, i: usize) -> Result<bool> {
    let lookup = internal_key(&key(i), MAX_SEQUENCE, ValueType::Value);
    table
        .get(reads, &lookup, |k, _| k[..k.len() - 8] == key(i)[..])
        .map(|f| f == Some(true))
}

/// Asserts that `table` finds each of the `n` keys `build` wrote.
fn finds_every_key(table: &Table, n: usize) {
    for i in 0..n {
        assert!(
            found(table, BlockReads::default(), i).unwrap(),
            "key {i} missing"
        );
    }
}

/// The handle the metaindex of `bytes` (a table) stores for its filter.
fn filter_handle(bytes: &[u8], metaindex: &BlockHandle) -> BlockHandle {
    let contents = read_block(
        &VecFile::new(bytes.to_vec()),
        bytes.len() as u64,
        metaindex,
        true,
    );
    let block = Arc::new(super::block::Block::new(contents.unwrap(), metaindex.offset).unwrap());
    let mut it = block.iter(super::block::KeyOrder::Bytewise);
    it.seek_to_first();
    assert!(it.key().starts_with(b"filter."));
    BlockHandle::decode_from(&mut it.value()).unwrap()
}

/// Damage in the index, filter and metaindex blocks of a mapped table (kept in the mapping
/// when intact): a damaged index is a corruption at open at the index's offset, naming the
/// file; a damaged filter or metaindex is ignored and every key is still found. Each damage
/// is one only the checksum can catch: a byte of the stored CRC, or a byte change the block's
/// structure survives (a separator byte, filter bits).
#[test]
fn damaged_meta_blocks_of_a_mapped_table_are_caught_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let opts = options(CompressionType::None);
    let n = 2000;
    let bytes = build(&opts, n);
    let len = bytes.len() as u64;
    let footer = read_footer(&VecFile::new(bytes.clone()), len).unwrap();
    let filter = filter_handle(&bytes, &footer.metaindex);
    let path = dir.path().join("000042.ldb");
    let open = |bytes: &[u8]| {
        std::fs::write(&path, bytes).unwrap();
        let file = PosixEnv::new().new_random_access_file(&path).unwrap();
        assert!(file.shared().is_some(), "setup: the file is mapped");
        Table::open(opts.clone(), file, len, "000042.ldb".into())
    };
    let intact = open(&bytes).unwrap();
    assert_eq!(
        intact.meta_blocks_shared(),
        (true, Some(true)),
        "setup: the shared path"
    );
    let crc_byte = |h: &BlockHandle| (h.offset + h.size + 2) as usize;

    // Index: a byte of its CRC; the 6th byte of the first separator (after its three
    // one-byte varints), a digit.
    for at in [
        crc_byte(&footer.index),
        footer.index.offset as usize + 3 + 5,
    ] {
        let mut damaged = bytes.clone();
        damaged[at] ^= 0x01;
        let err = open(&damaged).map(|_| ()).unwrap_err();
        let details = err.corruption_details().expect("a corruption");
        assert_eq!(details.offset, Some(footer.index.offset), "{err}");
        assert!(err.to_string().contains("000042.ldb"), "{err}");
    }

    // Filter: a byte of its CRC, or its first 16 bytes of bits cleared; metaindex: a byte of
    // its CRC.
    let filter_bits = filter.offset as usize..filter.offset as usize + 16;
    for range in [
        crc_byte(&filter)..crc_byte(&filter) + 1,
        filter_bits,
        crc_byte(&footer.metaindex)..crc_byte(&footer.metaindex) + 1,
    ] {
        let mut damaged = bytes.clone();
        for b in &mut damaged[range.clone()] {
            *b = !*b & if range.len() > 1 { 0 } else { 0xff };
        }
        let table = open(&damaged).unwrap();
        assert!(
            !table.has_filter(),
            "a damaged meta block ({range:?}) was used"
        );
        finds_every_key(&table, n);
    }
}

/// A table whose file grew after it was mapped (its meta blocks past the mapping) is read
/// through `pread`: opens, finds every key, and keeps copies.
#[test]
fn a_table_past_its_mapping_is_read_with_pread() {
    let dir = tempfile::tempdir().unwrap();
    let opts = options(CompressionType::None);
    let bytes = build(&opts, 500);
    let path = dir.path().join("000042.ldb");
    let half = bytes.len() / 2;
    std::fs::write(&path, &bytes[..half]).unwrap();
    let file = PosixEnv::new().new_random_access_file(&path).unwrap();
    assert_eq!(file.mapped().map(<[u8]>::len), Some(half));
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .and_then(|mut f| std::io::Write::write_all(&mut f, &bytes[half..]))
        .unwrap();
    let table = Table::open(opts, file, bytes.len() as u64, "000042.ldb".into()).unwrap();
    assert_eq!(table.meta_blocks_shared(), (false, Some(false)));
    finds_every_key(&table, 500);
}

/// Data blocks of a table whose file shares its mapping: stored uncompressed, lookups and scans
/// read them in place and leave the block cache empty, but for a memory-only read that fills
/// the cache, which caches a copy (the next such read then asks the kernel nothing); stored
/// compressed, they are cached as before.
#[test]
fn uncompressed_data_blocks_of_a_mapped_table_are_read_in_place_uncached() {
    for compression in [CompressionType::None, CompressionType::Snappy] {
        let cache = BlockCache::new(1 << 20);
        let mut opts = options(compression);
        opts.block_cache = Some(Arc::clone(&cache));
        let n = 2000;
        let bytes = build(&opts, n);
        let len = bytes.len() as u64;
        let file = Arc::new(VecFile::sharing(bytes));
        let table = Table::open(opts, file, len, "000042.ldb".into()).unwrap();
        finds_every_key(&table, n);
        assert_eq!(super::tests::scan_forward(&table).len(), n);
        let in_place = compression == CompressionType::None;
        assert_eq!(cache.total_charge() == 0, in_place, "{compression:?}");
        assert!(found(&table, memory_only(), 0).unwrap());
        assert!(cache.total_charge() > 0, "{compression:?}: nothing cached");
    }
}

/// A damaged data block read in place reads back damaged without verification, and is a
/// checksum corruption naming the file and the block's offset with it.
#[test]
fn a_damaged_data_block_read_in_place_fails_verification() {
    let opts = options(CompressionType::None);
    let mut bytes = build(&opts, 100);
    let len = bytes.len() as u64;
    let at = bytes.iter().position(|&b| b == b'v').unwrap();
    bytes[at] = b'w';
    let file = Arc::new(VecFile::sharing(bytes));
    let table = Table::open(opts, file, len, "000042.ldb".into()).unwrap();
    let lookup = internal_key(&key(0), MAX_SEQUENCE, ValueType::Value);
    let value = table.get(BlockReads::default(), &lookup, |_, v| v.to_vec());
    assert_eq!(value.unwrap().unwrap()[0], b'w');
    let verify = BlockReads {
        verify_checksums: true,
        ..BlockReads::default()
    };
    let err = table.get(verify, &lookup, |_, _| ()).unwrap_err();
    let details = err.corruption_details().expect("a corruption");
    assert_eq!(details.file.as_deref(), Some("000042.ldb"), "{err}");
    assert_eq!(details.offset, Some(0), "{err}");
    assert!(details.reason.contains("checksum"), "{err}");
}

/// `ReadOptions::memory_only` promises a read that never waits for the disk. Copies of the
/// index and filter blocks on the heap always answered from memory; pages of the mapping are
/// dropped under memory pressure, and a search of them would then wait. Staged here: every page
/// of the table dropped (out of the process's page tables, then out of the page cache), then
/// only its first data block read back. A memory-only lookup of a key in that block, and a
/// memory-only scan, must give `WouldBlock` rather than read the index from the disk. Both for
/// an uncompressed table with a filter and for a Snappy table without one, whose index (stored
/// raw since ade265a; a heap copy before) is the only meta block it keeps in the mapping.
#[test]
fn a_memory_only_read_does_not_search_an_index_no_longer_in_memory() {
    for (compression, filter) in [
        (CompressionType::None, true),
        (CompressionType::Snappy, false),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let opts = super::tests::options(compression, filter);
        let bytes = build(&opts, 6000);
        let len = bytes.len() as u64;
        let path = write_synced(dir.path(), &bytes);
        let file = PosixEnv::new().new_random_access_file(&path).unwrap();
        let footer = read_footer(&*file, len).unwrap();
        assert!(
            footer.index.offset > 8192,
            "setup: the index is past the first pages"
        );
        let table = Table::open(opts, Arc::clone(&file), len, "000042.ldb".into()).unwrap();
        let shared = (true, filter.then_some(true));
        assert_eq!(table.meta_blocks_shared(), shared, "setup: {compression:?}");
        let reads = memory_only();
        assert!(found(&table, reads, 0).unwrap(), "in memory after the open");

        if !drop_pages(&*file, &path, len) {
            return;
        }
        let fd = std::fs::File::open(&path).unwrap();
        let index_len = footer.index.size as usize + BLOCK_TRAILER_LEN;
        let mut page = [0u8; 4096];
        std::os::unix::fs::FileExt::read_exact_at(&fd, &mut page, 0).unwrap();
        assert!(
            file.in_memory(0, 1024) && !file.in_memory(footer.index.offset, index_len),
            "setup: the first data block in memory, the index not"
        );

        // A finding that they were in memory is trusted this long.
        std::thread::sleep(META_RECHECK);
        let answer = found(&table, reads, 0);
        assert!(
            matches!(answer, Err(crate::error::Error::WouldBlock(_))),
            "{compression:?}: a memory-only lookup answered {answer:?}"
        );
        let mut scan = table.iter(reads);
        scan.seek_to_first();
        assert!(!scan.valid());
        assert!(
            matches!(scan.status(), Err(crate::error::Error::WouldBlock(_))),
            "{compression:?}: {:?}",
            scan.status()
        );
        assert!(
            !file.in_memory(footer.index.offset, index_len),
            "{compression:?}: the index was read from the disk"
        );
        // Once the file is back in memory, memory-only reads answer again.
        let mut whole = vec![0u8; bytes.len()];
        std::os::unix::fs::FileExt::read_exact_at(&fd, &mut whole, 0).unwrap();
        assert!(found(&table, reads, 0).unwrap());
    }
}

/// Writes `bytes` to a table file in `dir` and syncs it (clean pages, which [`drop_pages`] can
/// drop); returns its path.
fn write_synced(dir: &std::path::Path, bytes: &[u8]) -> std::path::PathBuf {
    let path = dir.join("000042.ldb");
    let f = std::fs::File::create(&path).unwrap();
    std::io::Write::write_all(&mut &f, bytes).unwrap();
    f.sync_all().unwrap();
    path
}

/// Reads that must not wait for the disk.
fn memory_only() -> BlockReads {
    BlockReads {
        memory_only: true,
        ..BlockReads::default()
    }
}

/// Drops every page of the file at `path` (mapped as `file`) out of the process's page tables
/// and then out of the page cache; false (saying so) when the OS keeps them anyway (tmpfs),
/// and nothing can be staged.
fn drop_pages(file: &dyn RandomAccessFile, path: &std::path::Path, len: u64) -> bool {
    file.release(0, len);
    let fd = std::fs::File::open(path).unwrap();
    // SAFETY: posix_fadvise only reads its integer arguments; the descriptor is open.
    let advised = unsafe {
        libc::posix_fadvise(
            std::os::fd::AsRawFd::as_raw_fd(&fd),
            0,
            0,
            libc::POSIX_FADV_DONTNEED,
        )
    };
    assert_eq!(advised, 0);
    let dropped = !file.in_memory(0, 1);
    if !dropped {
        eprintln!("the OS kept the dropped pages in memory: nothing to check here");
    }
    dropped
}

/// Review of aa7577b: a memory-only scan keeps the data block it is positioned in. Before,
/// that block was a copy on the heap, so stepping through it never waited for the disk
/// whatever became of the file's pages; read in place (memory-only, `fill_cache` off), it is a
/// range of the mapping, and stepping through it after its pages left memory reads them back
/// from the disk: no residency check guards a step within a block (only
/// `check_in_memory` when a block is loaded, and `index_in_memory` between blocks).
#[test]
fn a_memory_only_scan_does_not_step_through_a_block_no_longer_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = options(CompressionType::None);
    opts.block_cache = Some(BlockCache::new(1 << 20));
    let bytes = build(&opts, 2000);
    let len = bytes.len() as u64;
    let path = write_synced(dir.path(), &bytes);
    let file = PosixEnv::new().new_random_access_file(&path).unwrap();
    let table = Table::open(opts, Arc::clone(&file), len, "000042.ldb".into()).unwrap();
    let reads = BlockReads {
        fill_cache: false,
        ..memory_only()
    };
    let mut scan = table.iter(reads);
    scan.seek_to_first();
    assert!(
        scan.valid(),
        "{:?}: the first block in memory",
        scan.status()
    );

    if !drop_pages(&*file, &path, len) {
        return;
    }
    // Step within the first block (1 KiB blocks of ~110-byte entries: all in page 0).
    for _ in 0..4 {
        scan.next();
        if !scan.valid() {
            break;
        }
        std::hint::black_box(scan.value().first());
    }
    assert!(
        !file.in_memory(0, 1),
        "a memory-only scan read its block's page back from the disk"
    );
}
