//! The framing of a table file: block handles, block trailers and the footer.
//!
//! A table file is a sequence of blocks followed by a fixed-size footer:
//!
//! ```text
//! table    := data_block* filter_block? metaindex_block index_block footer
//! block    := contents trailer
//! trailer  := type (1 byte: 0 = none, 1 = Snappy)
//!             masked_crc32c(contents ++ type) (fixed32 LE)            -- 5 bytes
//! handle   := offset (varint64) size (varint64)                       -- at most 20 bytes
//! footer   := metaindex_handle index_handle zero padding up to 40 bytes
//!             magic 0xdb4775248b80fb57 (fixed64 LE)                    -- 48 bytes
//! ```
//!
//! A handle's `size` counts the block's contents as stored (compressed or not) and excludes the
//! trailer, so the next block starts at `offset + size + 5`. The CRC is computed over the stored
//! (possibly compressed) contents and the type byte. Snappy blocks use the raw Snappy format (no
//! framing), whose header is the uncompressed length as a varint.
//!
//! Decoders here return `Error::Corruption` with the offset of the bad bytes in the file; the
//! table layer attaches the file name. They never panic and never allocate by a length read from
//! disk before checking it against the file size.

use bytes::Bytes;

use super::contents::Contents;
use crate::env::{read_fully, RandomAccessFile};
use crate::error::{Error, Result};
use crate::util::coding::{decode_fixed32, decode_fixed64, get_varint64, put_varint64};
use crate::util::{crc, snappy};

/// How blocks are compressed in tables. On-disk (the trailer's type byte): never change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CompressionType {
    /// Blocks are stored as they are.
    None = 0,
    /// Data blocks are Snappy-compressed when that saves at least 1/8 of their size (Strata
    /// stores index, metaindex and filter blocks raw; a reader takes either).
    #[default]
    Snappy = 1,
}

impl CompressionType {
    pub(crate) fn from_byte(byte: u8) -> Option<CompressionType> {
        match byte {
            0 => Some(CompressionType::None),
            1 => Some(CompressionType::Snappy),
            _ => None,
        }
    }
}

/// Length of the trailer after every block: type byte + masked CRC32C. On-disk: never change.
pub(crate) const BLOCK_TRAILER_LEN: usize = 5;

/// Length of the footer at the end of every table. On-disk: never change.
pub(crate) const FOOTER_LEN: usize = 48;

/// Magic number ending every table (fixed64 LE). On-disk: never change.
pub(crate) const TABLE_MAGIC: u64 = 0xdb47_7524_8b80_fb57;

/// Longest encoding of a [`BlockHandle`]: two varint64s.
pub(crate) const MAX_BLOCK_HANDLE_LEN: usize = 20;

/// Where a block lives in a table file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct BlockHandle {
    /// File offset of the block's first byte.
    pub(crate) offset: u64,
    /// Length of the stored contents, without the trailer.
    pub(crate) size: u64,
}

impl BlockHandle {
    pub(crate) fn new(offset: u64, size: u64) -> BlockHandle {
        BlockHandle { offset, size }
    }

    /// Appends the encoded handle to `dst`.
    pub(crate) fn encode_to(&self, dst: &mut Vec<u8>) {
        put_varint64(dst, self.offset);
        put_varint64(dst, self.size);
    }

    /// Decodes a handle from the front of `src`, advancing it; `None` when truncated or malformed.
    pub(crate) fn decode_from(src: &mut &[u8]) -> Option<BlockHandle> {
        let offset = get_varint64(src)?;
        let size = get_varint64(src)?;
        Some(BlockHandle { offset, size })
    }

    /// Checks that the block and its trailer lie inside a file of `file_size` bytes.
    pub(crate) fn check_within(&self, file_size: u64) -> Result<()> {
        let end = self
            .offset
            .checked_add(self.size)
            .and_then(|e| e.checked_add(BLOCK_TRAILER_LEN as u64));
        match end {
            Some(end) if end <= file_size => Ok(()),
            _ => Err(Error::corruption_at(
                self.offset,
                format!(
                    "block handle (offset {}, size {}) extends past the end of the file ({} bytes)",
                    self.offset, self.size, file_size
                ),
            )),
        }
    }
}

/// The last [`FOOTER_LEN`] bytes of a table: where its metaindex and index blocks are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Footer {
    pub(crate) metaindex: BlockHandle,
    pub(crate) index: BlockHandle,
}

impl Footer {
    /// The encoded footer: both handles, zero padding to 40 bytes, then the magic number.
    pub(crate) fn encode(&self) -> [u8; FOOTER_LEN] {
        let mut handles = Vec::with_capacity(2 * MAX_BLOCK_HANDLE_LEN);
        self.metaindex.encode_to(&mut handles);
        self.index.encode_to(&mut handles);
        let mut out = [0u8; FOOTER_LEN];
        // Two handles take at most 40 bytes, so this always fits before the magic number.
        let (head, magic) = out.split_at_mut(FOOTER_LEN - 8);
        for (dst, src) in head.iter_mut().zip(&handles) {
            *dst = *src;
        }
        magic.copy_from_slice(&TABLE_MAGIC.to_le_bytes());
        out
    }

    /// Decodes a footer from exactly [`FOOTER_LEN`] bytes read at `file_offset`. The padding is
    /// not checked (LevelDB does not check it either).
    pub(crate) fn decode(bytes: &[u8], file_offset: u64) -> Result<Footer> {
        if bytes.len() != FOOTER_LEN {
            return Err(Error::corruption_at(
                file_offset,
                format!("footer is {} bytes, expected {FOOTER_LEN}", bytes.len()),
            ));
        }
        let magic_at = FOOTER_LEN - 8;
        let magic = bytes.get(magic_at..).and_then(decode_fixed64);
        if magic != Some(TABLE_MAGIC) {
            return Err(Error::corruption_at(
                file_offset + magic_at as u64,
                "not an sstable (bad magic number)",
            ));
        }
        let mut handles = bytes.get(..magic_at).unwrap_or(&[]);
        let metaindex = BlockHandle::decode_from(&mut handles);
        let index = BlockHandle::decode_from(&mut handles);
        match (metaindex, index) {
            (Some(metaindex), Some(index)) => Ok(Footer { metaindex, index }),
            _ => Err(Error::corruption_at(
                file_offset,
                "bad block handle in table footer",
            )),
        }
    }
}

/// The trailer of a block with `contents` stored as `ctype`.
pub(crate) fn block_trailer(contents: &[u8], ctype: CompressionType) -> [u8; BLOCK_TRAILER_LEN] {
    let type_byte = ctype as u8;
    let crc = crc::mask(crc::extend(crc::crc32c(contents), &[type_byte]));
    let c = crc.to_le_bytes();
    [type_byte, c[0], c[1], c[2], c[3]]
}

/// Reads the block at `handle` from `file` (of `file_size` bytes), verifies its CRC when
/// `verify_checksum` is set, and returns its uncompressed contents.
///
/// The handle is checked against `file_size` before anything is allocated, and a Snappy block's
/// claimed uncompressed length is checked against what its compressed length could possibly
/// expand to. Errors are `Corruption` at the block's offset (or I/O errors from the file).
pub(crate) fn read_block(
    file: &dyn RandomAccessFile,
    file_size: u64,
    handle: &BlockHandle,
    verify_checksum: bool,
) -> Result<Vec<u8>> {
    let mut contents = read_block_into(file, file_size, handle, verify_checksum, Vec::new())?;
    // Never recycled (index, filter and meta blocks live as long as their table): no room kept.
    contents.shrink_to_fit();
    Ok(contents)
}

/// [`read_block`], with the contents placed in `buf`: whatever it held is overwritten, and its
/// allocation is reused, which spares allocating and zeroing a fresh one. A buffer left more
/// than twice as large as the block is shrunk, so a block never holds much more memory than
/// its size, which is what the block cache charges for it.
pub(crate) fn read_block_into(
    file: &dyn RandomAccessFile,
    file_size: u64,
    handle: &BlockHandle,
    verify_checksum: bool,
    buf: Vec<u8>,
) -> Result<Vec<u8>> {
    read_stored_block(file, file_size, handle, verify_checksum, buf).map(fit)
}

/// `contents`, shrunk when its buffer is more than twice as large as it (see
/// [`read_block_into`]).
fn fit(mut contents: Vec<u8>) -> Vec<u8> {
    if contents.capacity() / 2 > contents.len() {
        contents.shrink_to_fit();
    }
    contents
}

/// Bytes of a block [`touch_lines`] loads ahead of reading it.
const TOUCHED: usize = 4096;

/// Reads a byte of each 64-byte line of the first [`TOUCHED`] bytes of `block` and of its last
/// line: a block read straight out of a table's mapping (trailer included) before it is
/// decoded, or a block found in the block cache before a lookup searches it.
///
/// Such a block is usually in no CPU cache yet. Decoding reads the trailer, then the contents
/// front to back, and a lookup reads the restart array at the end, then a restart entry or
/// two, then entries front to back: each line would wait for memory in turn, as each load
/// depends on the one before and the hardware prefetcher starts late on a block of a few
/// lines. These loads depend on nothing, so the CPU has all of them in flight at once and the
/// reads then find the lines cached. In `strata bench --sweep paper --repeat 3`, uncached
/// Snappy lookups of absent keys without a filter (1 KiB blocks) went from 0.88 and 0.86 of
/// LevelDB's median to 0.81 and 0.81. Past [`TOUCHED`] bytes the prefetcher has caught up, and
/// touching a large block whole would only push its start out of the cache again.
pub(crate) fn touch_lines(block: &[u8]) {
    let ahead = &block[..block.len().min(TOUCHED)];
    let mut seen = block.last().copied().unwrap_or(0);
    for line in ahead.chunks(64) {
        seen ^= line[0];
    }
    std::hint::black_box(seen);
}

fn read_stored_block(
    file: &dyn RandomAccessFile,
    file_size: u64,
    handle: &BlockHandle,
    verify_checksum: bool,
    buf: Vec<u8>,
) -> Result<Vec<u8>> {
    let (stored_len, total) = stored_extent(file_size, handle)?;
    let mapped = file
        .mapped()
        .and_then(|map| map.get(stored_range(handle, total)?));
    if let Some(stored) = mapped {
        // No system call: check and decompress straight out of the mapping.
        let mut buf = Some(buf);
        let take = || buf.take().unwrap_or_default();
        return Ok(
            match decode_mapped(stored, stored_len, handle.offset, verify_checksum, take)? {
                Decoded::Uncompressed(uncompressed) => uncompressed,
                Decoded::Raw => {
                    let mut buf = with_room(buf.unwrap_or_default(), stored_len);
                    buf.clear();
                    buf.extend_from_slice(&stored[..stored_len]);
                    buf
                }
            },
        );
    }
    let mut stored = vec![0u8; total];
    let read = read_fully(file, handle.offset, &mut stored)?;
    if read != total {
        return Err(Error::corruption_at(
            handle.offset,
            format!("truncated block read: got {read} of {total} bytes"),
        ));
    }
    let (contents, trailer) = stored.split_at(stored_len);
    match decode_stored_block(contents, trailer, handle.offset, verify_checksum, || buf)? {
        Decoded::Uncompressed(uncompressed) => Ok(uncompressed),
        Decoded::Raw => {
            // Stored raw: the read buffer is the block.
            stored.truncate(stored_len);
            Ok(stored)
        }
    }
}

/// The length of the block at `handle` and that length with its trailer, once the handle is
/// checked against `file_size`.
fn stored_extent(file_size: u64, handle: &BlockHandle) -> Result<(usize, usize)> {
    handle.check_within(file_size)?;
    // Fits in memory: it lies inside the file (checked above); on a 32-bit target a file larger
    // than the address space is reported as corruption rather than truncated.
    let stored_len = usize::try_from(handle.size)
        .map_err(|_| Error::corruption_at(handle.offset, "block too large for this platform"))?;
    let total = stored_len
        .checked_add(BLOCK_TRAILER_LEN)
        .ok_or_else(|| Error::corruption_at(handle.offset, "block too large"))?;
    Ok((stored_len, total))
}

/// Where in a mapping of its file the block at `handle` lies, `total` bytes with its trailer.
fn stored_range(handle: &BlockHandle, total: usize) -> Option<std::ops::Range<usize>> {
    let start = usize::try_from(handle.offset).ok()?;
    Some(start..start.checked_add(total)?)
}

/// [`read_block`] for a block that lives as long as its table: the index, filter and
/// metaindex blocks. With `map`, the shared mapping of `file` ([`RandomAccessFile::shared`]),
/// one stored uncompressed stays in the mapping (see [`super::contents`]), its checksum
/// verified as for a copy when `verify_checksum` is set; any other is read as [`read_block`]
/// reads it.
pub(crate) fn read_lasting_block(
    map: Option<&Bytes>,
    file: &dyn RandomAccessFile,
    file_size: u64,
    handle: &BlockHandle,
    verify_checksum: bool,
) -> Result<Contents> {
    let Some((map, stored)) = in_mapping(map, file_size, handle)? else {
        return read_block(file, file_size, handle, verify_checksum).map(Contents::from);
    };
    Ok(
        match read_shared_block(map, stored, handle, verify_checksum, Vec::new)? {
            // Never recycled: no room kept.
            Contents::Owned(mut uncompressed) => {
                uncompressed.shrink_to_fit();
                Contents::Owned(uncompressed)
            }
            shared => shared,
        },
    )
}

/// [`read_block_into`] for a data block: with `map`, the shared mapping of `file`
/// ([`RandomAccessFile::shared`]), a block stored uncompressed is read in place, a range of the
/// mapping (no copy); any other is decompressed or copied into `buf()`, which is only called
/// then.
pub(crate) fn read_data_block(
    map: Option<&Bytes>,
    file: &dyn RandomAccessFile,
    file_size: u64,
    handle: &BlockHandle,
    verify_checksum: bool,
    buf: impl FnOnce() -> Vec<u8>,
) -> Result<Contents> {
    let Some((map, stored)) = in_mapping(map, file_size, handle)? else {
        return read_block_into(file, file_size, handle, verify_checksum, buf())
            .map(Contents::from);
    };
    Ok(
        match read_shared_block(map, stored, handle, verify_checksum, buf)? {
            Contents::Owned(uncompressed) => Contents::Owned(fit(uncompressed)),
            shared => shared,
        },
    )
}

/// `map` and where in it the block at `handle` lies with its trailer, once the handle is
/// checked against `file_size`; `None` without a mapping, or when the block lies past its end
/// (the file grew since it was mapped) and is read through the file instead.
fn in_mapping<'m>(
    map: Option<&'m Bytes>,
    file_size: u64,
    handle: &BlockHandle,
) -> Result<Option<(&'m Bytes, std::ops::Range<usize>)>> {
    let Some(map) = map else {
        return Ok(None);
    };
    let (_, total) = stored_extent(file_size, handle)?;
    Ok(stored_range(handle, total)
        .filter(|range| range.end <= map.len())
        .map(|range| (map, range)))
}

/// The block at `handle`, stored at `stored` (with its trailer) in `map`, the shared mapping
/// of its file: a block stored uncompressed is a range of the mapping, a compressed one is
/// decompressed into `buf()` (only called then).
fn read_shared_block(
    map: &Bytes,
    stored: std::ops::Range<usize>,
    handle: &BlockHandle,
    verify_checksum: bool,
    buf: impl FnOnce() -> Vec<u8>,
) -> Result<Contents> {
    let contents = stored.start..stored.end - BLOCK_TRAILER_LEN;
    let decoded = decode_mapped(
        &map[stored],
        contents.len(),
        handle.offset,
        verify_checksum,
        buf,
    )?;
    Ok(match decoded {
        Decoded::Raw => Contents::Shared(map.slice(contents)),
        Decoded::Uncompressed(uncompressed) => Contents::Owned(uncompressed),
    })
}

/// Checks and decodes a block read straight out of a table's mapping (`stored`: its
/// `stored_len` bytes of contents, then its trailer, found at file offset `offset`), once its
/// lines are touched ([`touch_lines`]); see [`decode_stored_block`].
fn decode_mapped(
    stored: &[u8],
    stored_len: usize,
    offset: u64,
    verify_checksum: bool,
    out: impl FnOnce() -> Vec<u8>,
) -> Result<Decoded> {
    touch_lines(stored);
    let (contents, trailer) = stored.split_at(stored_len);
    decode_stored_block(contents, trailer, offset, verify_checksum, out)
}

/// What [`decode_stored_block`] made of a block.
enum Decoded {
    /// Decompressed into the output buffer.
    Uncompressed(Vec<u8>),
    /// Stored raw: the stored contents are the block (no output buffer was asked for).
    Raw,
}

/// Checks a stored block (`contents`, then its 5-byte `trailer`) found at file offset
/// `offset`, decompressing it into `out()` when it is compressed (`out` is called only then).
fn decode_stored_block(
    contents: &[u8],
    trailer: &[u8],
    offset: u64,
    verify_checksum: bool,
    out: impl FnOnce() -> Vec<u8>,
) -> Result<Decoded> {
    let type_byte = trailer.first().copied().unwrap_or(0xff);
    if verify_checksum {
        let stored = trailer.get(1..).and_then(decode_fixed32).unwrap_or(0);
        let actual = crc::extend(crc::crc32c(contents), &[type_byte]);
        if crc::unmask(stored) != actual {
            return Err(Error::corruption_at(offset, "block checksum mismatch"));
        }
    }
    match CompressionType::from_byte(type_byte) {
        Some(CompressionType::None) => Ok(Decoded::Raw),
        Some(CompressionType::Snappy) => {
            snappy_decompress_into(contents, offset, out()).map(Decoded::Uncompressed)
        }
        None => Err(Error::corruption_at(
            offset,
            format!("bad block compression type {type_byte}"),
        )),
    }
}

/// `buf` when it can hold `len` bytes, else a new buffer that can, with an eighth more room:
/// growing a recycled buffer would copy its stale bytes (the allocator moves all of them, not
/// knowing they are stale; a fifth of the time of the paper sweep's uncached Snappy block
/// reads went to that copy), and the room lets the buffer, once recycled, hold the blocks of
/// its table's other sizes (those of one block size differ by an entry or so) without a new
/// allocation.
fn with_room(buf: Vec<u8>, len: usize) -> Vec<u8> {
    if buf.capacity() >= len {
        buf
    } else {
        Vec::with_capacity(len.saturating_add(len / 8))
    }
}

/// Decompresses a raw-Snappy block whose stored contents start at file offset `offset` into
/// `out` (its old contents are overwritten; only bytes past its old length need zeroing first).
fn snappy_decompress_into(compressed: &[u8], offset: u64, out: Vec<u8>) -> Result<Vec<u8>> {
    let claimed = snap::raw::decompress_len(compressed)
        .map_err(|e| Error::corruption_at(offset, format!("bad Snappy block header: {e}")))?;
    let bound = compressed.len().saturating_mul(snappy::MAX_EXPANSION);
    if claimed > bound {
        return Err(Error::corruption_at(
            offset,
            format!(
                "Snappy block claims {claimed} bytes from {} compressed bytes",
                compressed.len()
            ),
        ));
    }
    let mut out = with_room(out, claimed);
    out.resize(claimed, 0);
    let n = snap::raw::Decoder::new()
        .decompress(compressed, &mut out)
        .map_err(|e| Error::corruption_at(offset, format!("corrupted Snappy block: {e}")))?;
    out.truncate(n);
    Ok(out)
}

/// Reads the footer of a table of `file_size` bytes.
pub(crate) fn read_footer(file: &dyn RandomAccessFile, file_size: u64) -> Result<Footer> {
    let footer_offset = file_size
        .checked_sub(FOOTER_LEN as u64)
        .ok_or_else(|| Error::corruption("file is too short to be an sstable"))?;
    let mut buf = [0u8; FOOTER_LEN];
    let read = read_fully(file, footer_offset, &mut buf)?;
    if read != FOOTER_LEN {
        return Err(Error::corruption_at(
            footer_offset,
            format!("truncated footer read: got {read} of {FOOTER_LEN} bytes"),
        ));
    }
    Footer::decode(&buf, footer_offset)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::vec_files::VecFile;
    use proptest::prelude::*;

    #[test]
    fn a_recycled_buffer_is_kept_only_when_the_block_fits() {
        let roomy = Vec::with_capacity(8192);
        let at = roomy.as_ptr();
        let kept = with_room(roomy, 4200);
        assert_eq!(kept.as_ptr(), at, "big enough: reused");

        let mut small = Vec::with_capacity(4096);
        small.extend_from_slice(&[7u8; 4096]);
        let replaced = with_room(small, 4200);
        assert!(
            replaced.capacity() >= 4200 + 4200 / 8,
            "with room for larger blocks"
        );
        assert!(
            replaced.is_empty(),
            "too small: a new buffer, the stale bytes not carried over"
        );
    }

    #[test]
    fn read_block_keeps_no_room() {
        let raw = b"0123456789abcdef-value-value-value".repeat(300);
        for_each_stored(&raw, |ctype, f, len, handle| {
            let got = read_block(f, len, handle, true).unwrap();
            assert_eq!(got, raw);
            assert_eq!(
                got.capacity(),
                got.len(),
                "{ctype:?}: a long-lived block kept room"
            );
        });
    }

    #[test]
    fn handle_round_trip_and_max_len() {
        for h in [
            BlockHandle::new(0, 0),
            BlockHandle::new(1 << 40, 4096),
            BlockHandle::new(u64::MAX, u64::MAX),
        ] {
            let mut buf = Vec::new();
            h.encode_to(&mut buf);
            assert!(buf.len() <= MAX_BLOCK_HANDLE_LEN);
            let mut cursor = &buf[..];
            assert_eq!(BlockHandle::decode_from(&mut cursor), Some(h));
            assert!(cursor.is_empty());
        }
        let mut buf = Vec::new();
        BlockHandle::new(u64::MAX, u64::MAX).encode_to(&mut buf);
        assert_eq!(buf.len(), MAX_BLOCK_HANDLE_LEN);
        assert_eq!(BlockHandle::decode_from(&mut &buf[..15]), None);
    }

    #[test]
    fn footer_layout_is_leveldbs() {
        let footer = Footer {
            metaindex: BlockHandle::new(300, 20),
            index: BlockHandle::new(325, 7),
        };
        let bytes = footer.encode();
        // varint(300) = ac 02, varint(20) = 14, varint(325) = c5 02, varint(7) = 07.
        assert_eq!(&bytes[..7], &[0xac, 0x02, 0x14, 0xc5, 0x02, 0x07, 0x00]);
        assert!(bytes[6..40].iter().all(|&b| b == 0));
        assert_eq!(
            &bytes[40..],
            &[0x57, 0xfb, 0x80, 0x8b, 0x24, 0x75, 0x47, 0xdb]
        );
        assert_eq!(Footer::decode(&bytes, 0).unwrap(), footer);
        let max = Footer {
            metaindex: BlockHandle::new(u64::MAX, u64::MAX),
            index: BlockHandle::new(u64::MAX, u64::MAX),
        };
        assert_eq!(Footer::decode(&max.encode(), 0).unwrap(), max);
    }

    #[test]
    fn footer_rejects_bad_magic_and_length() {
        let mut bytes = Footer {
            metaindex: BlockHandle::new(1, 2),
            index: BlockHandle::new(3, 4),
        }
        .encode();
        bytes[47] ^= 1;
        let err = Footer::decode(&bytes, 1000).unwrap_err();
        assert_eq!(err.corruption_details().unwrap().offset, Some(1040));
        assert!(Footer::decode(&bytes[..47], 0).unwrap_err().is_corruption());
        let file = VecFile::new(vec![0u8; 10]);
        assert!(read_footer(&file, 10).unwrap_err().is_corruption());
    }

    fn stored_block(contents: &[u8], ctype: CompressionType) -> Vec<u8> {
        let mut file = vec![7u8; 3]; // some leading bytes so the offset is not zero
        file.extend_from_slice(contents);
        file.extend_from_slice(&block_trailer(contents, ctype));
        file
    }

    #[test]
    fn read_block_verifies_and_decompresses() {
        let raw = b"hello hello hello hello hello hello hello".repeat(10);
        let file = stored_block(&raw, CompressionType::None);
        let handle = BlockHandle::new(3, raw.len() as u64);
        let f = VecFile::new(file.clone());
        assert_eq!(
            read_block(&f, file.len() as u64, &handle, true).unwrap(),
            raw
        );

        let compressed = snap::raw::Encoder::new().compress_vec(&raw).unwrap();
        let file = stored_block(&compressed, CompressionType::Snappy);
        let handle = BlockHandle::new(3, compressed.len() as u64);
        let f = VecFile::new(file.clone());
        assert_eq!(
            read_block(&f, file.len() as u64, &handle, true).unwrap(),
            raw
        );

        // Flip one byte of the contents: caught only when verifying.
        let mut bad = stored_block(&raw, CompressionType::None);
        bad[10] ^= 0x40;
        let handle = BlockHandle::new(3, raw.len() as u64);
        let f = VecFile::new(bad.clone());
        let err = read_block(&f, bad.len() as u64, &handle, true).unwrap_err();
        let details = err.corruption_details().unwrap();
        assert_eq!(details.offset, Some(3));
        assert!(details.reason.contains("checksum"), "{err}");
        assert!(read_block(&f, bad.len() as u64, &handle, false).is_ok());
    }

    /// A file whose bytes are all "mapped", so reads take `read_block`'s no-system-call path.
    struct MappedFile(Vec<u8>);

    impl RandomAccessFile for MappedFile {
        fn read_at(&self, _offset: u64, _buf: &mut [u8]) -> Result<usize> {
            panic!("a mapped file is read through its mapping");
        }
        fn mapped(&self) -> Option<&[u8]> {
            Some(&self.0)
        }
    }

    /// Calls `f` with `raw` stored as a block, raw and Snappy-compressed, each in a file read
    /// with `read_at` and in a mapped one: the compression, the file, its length and the
    /// block's handle.
    fn for_each_stored(
        raw: &[u8],
        mut f: impl FnMut(CompressionType, &dyn RandomAccessFile, u64, &BlockHandle),
    ) {
        let compressed = snap::raw::Encoder::new().compress_vec(raw).unwrap();
        for (stored, ctype) in [
            (raw, CompressionType::None),
            (&compressed[..], CompressionType::Snappy),
        ] {
            let file = stored_block(stored, ctype);
            let handle = BlockHandle::new(3, stored.len() as u64);
            let len = file.len() as u64;
            f(ctype, &VecFile::new(file.clone()), len, &handle);
            f(ctype, &MappedFile(file), len, &handle);
        }
    }

    #[test]
    fn read_block_into_overwrites_a_reused_buffer_exactly() {
        let raw = b"0123456789abcdef-value-value-value".repeat(20);
        for_each_stored(&raw, |ctype, f, len, handle| {
            // Longer and shorter than the block, full of bytes the block does not hold.
            for dirty in [vec![0xee; raw.len() * 3], vec![0xee; 10], Vec::new()] {
                let got = read_block_into(f, len, handle, true, dirty).unwrap();
                assert_eq!(got, raw, "{ctype:?}");
                assert!(got.capacity() <= 2 * got.len(), "oversized buffer kept");
            }
        });
    }

    #[test]
    fn read_block_rejects_out_of_file_handles_and_bad_types() {
        let file = stored_block(b"abc", CompressionType::None);
        let f = VecFile::new(file.clone());
        let len = file.len() as u64;
        for handle in [
            BlockHandle::new(3, 4),
            BlockHandle::new(u64::MAX, 1),
            BlockHandle::new(0, u64::MAX),
        ] {
            assert!(read_block(&f, len, &handle, false)
                .unwrap_err()
                .is_corruption());
        }
        let mut bad_type = file.clone();
        bad_type[6] = 9;
        let f = VecFile::new(bad_type);
        let err = read_block(&f, len, &BlockHandle::new(3, 3), false).unwrap_err();
        assert!(err.to_string().contains("compression type"), "{err}");
    }

    #[test]
    fn snappy_length_bomb_is_rejected_before_allocating() {
        // Header claims 2^32 - 1 bytes from a five-byte input.
        let bomb = [0xff, 0xff, 0xff, 0xff, 0x0f];
        let err = snappy_decompress_into(&bomb, 77, Vec::new()).unwrap_err();
        assert_eq!(err.corruption_details().unwrap().offset, Some(77));
        assert!(snappy_decompress_into(&[], 0, Vec::new()).is_err());
    }

    proptest! {
        #[test]
        fn footer_decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..60)) {
            let _ = Footer::decode(&bytes, 0);
            let f = VecFile::new(bytes.clone());
            let _ = read_footer(&f, bytes.len() as u64);
        }

        #[test]
        fn footer_with_valid_magic_decodes_or_errs(mut head in proptest::collection::vec(any::<u8>(), 40)) {
            head.extend_from_slice(&TABLE_MAGIC.to_le_bytes());
            if let Ok(footer) = Footer::decode(&head, 0) {
                let again = footer.encode();
                prop_assert_eq!(Footer::decode(&again, 0).unwrap(), footer);
            }
        }

        #[test]
        fn read_block_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200),
                                   offset in 0u64..220, size in 0u64..220, verify in any::<bool>()) {
            let f = VecFile::new(bytes.clone());
            let _ = read_block(&f, bytes.len() as u64, &BlockHandle::new(offset, size), verify);
        }

        /// A mapped file and one read with `read_at` give the same bytes, or the same error at
        /// the same offset, for any handle into any bytes (past their end included).
        #[test]
        fn mapped_and_read_at_reads_agree(bytes in proptest::collection::vec(any::<u8>(), 0..6000),
                                          offset in 0u64..6100, size in 0u64..6100,
                                          verify in any::<bool>()) {
            let handle = BlockHandle::new(offset, size);
            let outcome = |f: &dyn RandomAccessFile| {
                read_block(f, bytes.len() as u64, &handle, verify)
                    .map_err(|e| (e.to_string(), e.corruption_details().map(|d| d.offset)))
            };
            prop_assert_eq!(
                outcome(&VecFile::new(bytes.clone())),
                outcome(&MappedFile(bytes.clone()))
            );
        }

        /// Any block (raw or Snappy, empty or not, mapped or read with `read_at`) read into a
        /// recycled buffer of any capacity and stale length comes back exactly as a fresh read
        /// has it; a buffer that fits is reused, and none is kept more than twice the block.
        #[test]
        fn a_recycled_buffer_of_any_shape_reads_the_block_exactly(
            raw in proptest::collection::vec(prop_oneof![Just(b'a'), any::<u8>()], 0..3000),
            snappy in any::<bool>(),
            cap_shape in 0usize..6,
            cap_jitter in 0usize..64,
            stale_frac in 0usize..=100,
            stale_byte in any::<u8>(),
        ) {
            let compressed = snap::raw::Encoder::new().compress_vec(&raw).unwrap();
            let (stored, ctype) = if snappy {
                (&compressed, CompressionType::Snappy)
            } else {
                (&raw, CompressionType::None)
            };
            let file = stored_block(stored, ctype);
            let handle = BlockHandle::new(3, stored.len() as u64);
            let len = file.len() as u64;
            let n = raw.len();
            let cap = match cap_shape {
                0 => 0,
                1 => n,                               // exactly the block
                2 => n.saturating_sub(1 + cap_jitter), // just too small
                3 => n + cap_jitter,                  // a little larger
                4 => n + n / 8 + cap_jitter,          // around with_room's size
                _ => 2 * n + 2 + cap_jitter,          // shrunk after the read
            };
            let files: [Box<dyn RandomAccessFile>; 2] = [
                Box::new(VecFile::new(file.clone())),
                Box::new(MappedFile(file)),
            ];
            let fresh = read_block(&*files[0], len, &handle, true).unwrap();
            prop_assert_eq!(&fresh, &raw);
            for (mapped, f) in files.iter().enumerate() {
                let mut dirty = Vec::with_capacity(cap);
                dirty.resize(cap * stale_frac / 100, stale_byte);
                let (at, had) = (dirty.as_ptr(), dirty.capacity());
                let got = read_block_into(&**f, len, &handle, true, dirty).unwrap();
                prop_assert_eq!(&got, &raw, "mapped {} {:?} cap {}", mapped, ctype, had);
                prop_assert!(got.capacity() <= 2 * got.len() + 1, "oversized: {}", got.capacity());
                let decoded_into_buf = snappy || mapped == 1;
                if decoded_into_buf && had >= n && had / 2 <= n && had > 0 {
                    prop_assert_eq!(got.as_ptr(), at, "a buffer that fits is reused");
                }
            }
        }

        /// A damaged Snappy block read into a recycled buffer is a corruption error, never a
        /// panic, whatever the buffer.
        #[test]
        fn a_damaged_snappy_block_in_a_recycled_buffer_is_an_error(
            raw in proptest::collection::vec(prop_oneof![Just(b'z'), any::<u8>()], 1..2000),
            flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
            cap in 0usize..5000,
            stale_byte in any::<u8>(),
        ) {
            let mut compressed = snap::raw::Encoder::new().compress_vec(&raw).unwrap();
            for (at, x) in &flips {
                let i = at.index(compressed.len());
                compressed[i] ^= x;
            }
            let file = stored_block(&compressed, CompressionType::Snappy);
            let handle = BlockHandle::new(3, compressed.len() as u64);
            let len = file.len() as u64;
            let files: [Box<dyn RandomAccessFile>; 2] = [
                Box::new(VecFile::new(file.clone())),
                Box::new(MappedFile(file)),
            ];
            for f in &files {
                let mut dirty = Vec::with_capacity(cap);
                dirty.resize(cap / 2, stale_byte);
                // Unverified, so damage reaches the decompressor.
                match read_block_into(&**f, len, &handle, false, dirty) {
                    Ok(got) => prop_assert!(got.len() <= compressed.len() * snappy::MAX_EXPANSION),
                    Err(e) => prop_assert!(e.is_corruption(), "{}", e),
                }
            }
        }

        #[test]
        fn snappy_decompress_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..100)) {
            let _ = snappy_decompress_into(&bytes, 0, vec![7; 64]);
        }
    }
}
