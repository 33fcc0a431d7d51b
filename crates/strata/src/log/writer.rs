//! Appending logical records to a log file (layout in `log/mod.rs`).

use super::{RecordType, BLOCK_SIZE, HEADER_SIZE, MAX_RECORD_TYPE};
use crate::env::WritableFile;
use crate::error::Result;
use crate::util::crc;

/// Records are staged in memory and handed to the file in one `append`; a record larger than
/// this is handed over in pieces of about this size, so staging memory stays bounded.
const STAGE_LIMIT: usize = 256 * 1024;

/// Writes logical records to a log file, fragmenting them over 32 KiB blocks.
///
/// Thread safety: not shared; the owner (the write path's leader, or the version set under its
/// lock) serialises calls. After any error the file's tail is unknown: the log must be abandoned
/// (the database records a background error), not written further.
pub(crate) struct LogWriter {
    file: Box<dyn WritableFile>,
    /// Position within the current block where the next header goes.
    block_offset: usize,
    /// Bytes in the file, including those present before this writer.
    file_len: u64,
    /// CRC32C of each type byte alone.
    type_crcs: [u32; MAX_RECORD_TYPE as usize + 1],
    /// Reused staging buffer for one record's headers, payload and block trailers.
    stage: Vec<u8>,
}

impl LogWriter {
    /// A writer for an empty file.
    pub(crate) fn new(file: Box<dyn WritableFile>) -> LogWriter {
        LogWriter::with_offset(file, 0)
    }

    /// A writer appending to a log that already holds `existing_len` bytes (log reuse at open).
    pub(crate) fn with_offset(file: Box<dyn WritableFile>, existing_len: u64) -> LogWriter {
        let mut type_crcs = [0u32; MAX_RECORD_TYPE as usize + 1];
        for (t, c) in (0u8..).zip(type_crcs.iter_mut()) {
            *c = crc::crc32c(&[t]);
        }
        LogWriter {
            file,
            // The remainder is < BLOCK_SIZE, so it fits a usize.
            block_offset: (existing_len % BLOCK_SIZE as u64) as usize,
            file_len: existing_len,
            type_crcs,
            stage: Vec::new(),
        }
    }

    /// Appends one logical record (possibly empty) and flushes it to the operating system.
    ///
    /// A record staged whole reaches the file in one [`WritableFile::append_record`]; a larger
    /// one in plain `append`s, so that a file showing zeros after a record boundary never shows
    /// them after a part of a record.
    pub(crate) fn add_record(&mut self, record: &[u8]) -> Result<()> {
        self.stage.clear();
        // A record that ended at a block's end leaves `block_offset` at `BLOCK_SIZE`.
        let block_left = BLOCK_SIZE - self.block_offset % BLOCK_SIZE;
        let mut rest = record;
        let mut first = true;
        let mut split = false;
        loop {
            let leftover = BLOCK_SIZE - self.block_offset;
            if leftover < HEADER_SIZE {
                // Too small for a header: zero-fill the block's tail and start the next block.
                self.stage
                    .extend_from_slice(&[0u8; HEADER_SIZE][..leftover]);
                self.block_offset = 0;
            }
            let available = BLOCK_SIZE - self.block_offset - HEADER_SIZE;
            let (fragment, tail) = rest.split_at(rest.len().min(available));
            let last = tail.is_empty();
            let kind = match (first, last) {
                (true, true) => RecordType::Full,
                (true, false) => RecordType::First,
                (false, false) => RecordType::Middle,
                (false, true) => RecordType::Last,
            };
            self.stage_fragment(kind, fragment);
            rest = tail;
            first = false;
            if last {
                break;
            }
            if self.stage.len() >= STAGE_LIMIT {
                self.write_stage(None)?;
                split = true;
            }
        }
        self.write_stage((!split).then_some(block_left))?;
        self.file.flush()
    }

    /// Makes every record added so far durable.
    pub(crate) fn sync(&mut self) -> Result<()> {
        self.file.sync()
    }

    /// Bytes in the file so far, including those present before this writer was created.
    pub(crate) fn file_len(&self) -> u64 {
        self.file_len
    }

    /// Flushes and closes the file.
    pub(crate) fn close(&mut self) -> Result<()> {
        self.file.close()
    }

    fn stage_fragment(&mut self, kind: RecordType, payload: &[u8]) {
        debug_assert!(self.block_offset + HEADER_SIZE + payload.len() <= BLOCK_SIZE);
        // A fragment fits in a block, so its length fits 16 bits.
        let len = payload.len() as u16;
        let checksum = crc::mask(crc::extend(self.type_crcs[kind as usize], payload));
        self.stage.extend_from_slice(&checksum.to_le_bytes());
        self.stage.extend_from_slice(&len.to_le_bytes());
        self.stage.push(kind as u8);
        self.stage.extend_from_slice(payload);
        self.block_offset += HEADER_SIZE + payload.len();
    }

    /// Hands the staged bytes to the file; `whole`: they are a whole record, starting this many
    /// bytes before the end of their block.
    fn write_stage(&mut self, whole: Option<usize>) -> Result<()> {
        if self.stage.is_empty() {
            return Ok(());
        }
        if let Some(block_left) = whole {
            self.file.append_record(&self.stage, block_left)?;
        } else {
            self.file.append(&self.stage)?;
        }
        self.file_len += self.stage.len() as u64;
        self.stage.clear();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::vec_files::VecSink;

    fn write(records: &[&[u8]]) -> Vec<u8> {
        let sink = VecSink::new();
        let mut w = LogWriter::new(Box::new(sink.clone()));
        for r in records {
            w.add_record(r).expect("in-memory append");
        }
        assert_eq!(w.file_len(), sink.contents().len() as u64);
        sink.contents()
    }

    fn header(bytes: &[u8], at: usize) -> (u32, usize, u8) {
        let crc = u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
        let len = u16::from_le_bytes([bytes[at + 4], bytes[at + 5]]) as usize;
        (crc, len, bytes[at + 6])
    }

    #[test]
    fn small_record_layout_matches_the_format() {
        let bytes = write(&[b"hello"]);
        assert_eq!(bytes.len(), HEADER_SIZE + 5);
        let (checksum, len, kind) = header(&bytes, 0);
        assert_eq!((len, kind), (5, RecordType::Full as u8));
        assert_eq!(&bytes[7..], b"hello");
        assert_eq!(checksum, crc::mask(crc::crc32c(b"\x01hello")));
    }

    #[test]
    fn empty_record_is_one_empty_full_fragment() {
        let bytes = write(&[b""]);
        assert_eq!(bytes.len(), HEADER_SIZE);
        assert_eq!(header(&bytes, 0).1, 0);
        assert_eq!(header(&bytes, 0).2, RecordType::Full as u8);
    }

    #[test]
    fn short_block_tail_is_zero_filled() {
        // First record leaves 3 bytes in the block: they become a zero trailer.
        let first = vec![b'a'; BLOCK_SIZE - HEADER_SIZE - 3];
        let bytes = write(&[&first, b"xy"]);
        assert_eq!(bytes.len(), BLOCK_SIZE + HEADER_SIZE + 2);
        assert_eq!(&bytes[BLOCK_SIZE - 3..BLOCK_SIZE], &[0, 0, 0]);
        let (_, len, kind) = header(&bytes, BLOCK_SIZE);
        assert_eq!((len, kind), (2, RecordType::Full as u8));
    }

    #[test]
    fn large_record_is_fragmented_first_middle_last() {
        let record = vec![7u8; 2 * BLOCK_SIZE + 100];
        let bytes = write(&[&record]);
        let avail = BLOCK_SIZE - HEADER_SIZE;
        assert_eq!(header(&bytes, 0).1, avail);
        assert_eq!(header(&bytes, 0).2, RecordType::First as u8);
        assert_eq!(header(&bytes, BLOCK_SIZE).2, RecordType::Middle as u8);
        let (_, len, kind) = header(&bytes, 2 * BLOCK_SIZE);
        assert_eq!(kind, RecordType::Last as u8);
        assert_eq!(len, record.len() - 2 * avail);
        assert_eq!(bytes.len(), 2 * BLOCK_SIZE + HEADER_SIZE + len);
    }

    #[test]
    fn exactly_a_header_left_gets_an_empty_first_fragment() {
        let first = vec![b'a'; BLOCK_SIZE - 2 * HEADER_SIZE];
        let bytes = write(&[&first, b"next"]);
        let (_, len, kind) = header(&bytes, BLOCK_SIZE - HEADER_SIZE);
        assert_eq!((len, kind), (0, RecordType::First as u8));
        let (_, len, kind) = header(&bytes, BLOCK_SIZE);
        assert_eq!((len, kind), (4, RecordType::Last as u8));
    }

    #[test]
    fn with_offset_continues_the_block_of_an_existing_log() {
        let existing = write(&[&vec![1u8; 1000]]);
        let sink = VecSink::new();
        let mut w = LogWriter::with_offset(Box::new(sink.clone()), existing.len() as u64);
        let second = vec![2u8; BLOCK_SIZE];
        w.add_record(&second).expect("append");
        let mut whole = existing.clone();
        whole.extend_from_slice(&sink.contents());
        assert_eq!(whole, write(&[&vec![1u8; 1000], &second]));
        assert_eq!(w.file_len(), whole.len() as u64);
    }

    #[test]
    fn huge_record_is_staged_in_bounded_appends() {
        struct Counting {
            total: std::sync::Arc<parking_lot::Mutex<Vec<usize>>>,
        }
        impl WritableFile for Counting {
            fn append(&mut self, data: &[u8]) -> Result<()> {
                self.total.lock().push(data.len());
                Ok(())
            }
            fn flush(&mut self) -> Result<()> {
                Ok(())
            }
            fn sync(&mut self) -> Result<()> {
                Ok(())
            }
            fn close(&mut self) -> Result<()> {
                Ok(())
            }
        }
        let sizes = std::sync::Arc::new(parking_lot::Mutex::new(Vec::new()));
        let mut w = LogWriter::new(Box::new(Counting {
            total: sizes.clone(),
        }));
        w.add_record(b"small").expect("append");
        assert_eq!(sizes.lock().len(), 1, "a small record is one append");
        w.add_record(&vec![0u8; 4 * STAGE_LIMIT]).expect("append");
        let sizes = sizes.lock();
        assert!(sizes.len() > 2);
        assert!(sizes
            .iter()
            .all(|&n| n <= STAGE_LIMIT + BLOCK_SIZE + HEADER_SIZE));
    }
}
