//! Reading logical records back from a log file (layout in `log/mod.rs`).
//!
//! What the reader does with damage:
//! - A bad checksum or a length that overruns its block drops the rest of that block; a
//!   fragment sequence that does not fit (`MIDDLE`/`LAST` without a `FIRST`, a `FIRST` or `FULL`
//!   while a record is open) or an unknown type drops what it concerns. Each drop is reported to
//!   the [`Reporter`] with the number of bytes lost and an `Error::Corruption` carrying the file
//!   offset where the lost bytes start; reading goes on with what follows.
//! - The end of the file cutting a header, a payload or a fragmented record short is what a
//!   crash in the middle of a write leaves behind: it ends the log cleanly, without a report.
//! - Zero-filled regions (type 0, length 0, as in preallocated files) are skipped silently
//!   when nothing but zeros follows them to the end of the file. Zeros followed by anything
//!   else are damage, not preallocation: they are reported (with the bytes they cost) as soon
//!   as the reader meets what follows.
//! - A write-ahead log's reader ([`LogReader::write_ahead_log`]; such a log may be written
//!   through a memory map: `env/posix/mapped_log.rs`) differs in two ways. A zero header in a
//!   whole block (the mapped writer reserves its block before copying a record in) is where
//!   the writer stopped: the rest of the block is a record whose header was never published (a
//!   writer killed while copying it), skipped silently like zeros; in a short block (a file
//!   cut at its written length, as a closed log is) it is damage, as above. And a zero region
//!   followed by data is a *gap*, not reported: everything from the zeros to the next whole
//!   record (torn or orphaned fragments included) is skipped, and the caller is told of it
//!   with [`LogReader::take_gap`] after that record. Whether the record may be used is the
//!   caller's to decide (`db/log_continuity.rs`: only if its write batch continues the sequence
//!   numbers exactly): a power loss writes a mapped file's pages back in any order, so a gap
//!   may hide records that later ones must not be replayed without, while a writer killed
//!   mid-record, or LevelDB appending to such a log at its next block (`reuse_logs`), leaves a
//!   gap that hides nothing. A gap that no whole record follows ends the log silently.
//! - A read error is reported (as a whole block dropped) and ends the log.

use super::{RecordType, BLOCK_SIZE, HEADER_SIZE};
use crate::env::SequentialFile;
use crate::error::Error;
use crate::util::crc;

/// Receives the damage a [`LogReader`] finds and skips.
pub(crate) trait Reporter: Send {
    /// `bytes` bytes of the log were dropped because of `reason` (a corruption carrying the
    /// offset of the dropped bytes, or the read error that ended the log).
    fn corruption(&mut self, bytes: u64, reason: &Error);
}

/// The outcome of reading one physical record.
enum Physical {
    /// A well-formed fragment: its type byte, its payload at `block[start..start + len]` and
    /// the file offset of its header.
    Record {
        kind: u8,
        start: usize,
        len: usize,
        offset: u64,
    },
    /// A fragment that starts before the initial offset: not ours to return.
    Skipped,
    /// Damage (already reported) or a zero-filled region.
    Bad,
    /// End of the log.
    Eof,
}

/// Returns the logical records of a log file in order, skipping and reporting damage.
///
/// Thread safety: not shared; one reader is driven by one thread (recovery, manifest replay,
/// the dump tool).
pub(crate) struct LogReader {
    file: Box<dyn SequentialFile>,
    reporter: Option<Box<dyn Reporter>>,
    verify_checksums: bool,
    /// The current block; its unread bytes are `block[pos..end]`.
    block: Box<[u8]>,
    pos: usize,
    end: usize,
    /// The last block read was short: no more blocks follow.
    eof: bool,
    /// File offset just past `block[..end]`.
    end_of_buffer_offset: u64,
    /// File offset of the header of the last record returned.
    last_record_offset: u64,
    /// File offset just past the last fragment of the last record returned.
    last_record_end: u64,
    /// Records starting before this file offset are not returned.
    initial_offset: u64,
    /// The initial skip to `initial_offset`'s block has been done.
    positioned: bool,
    /// Still skipping `MIDDLE`/`LAST` fragments of a record that began before `initial_offset`.
    resyncing: bool,
    /// File offset where the zero-filled region being skipped starts, while one is: reported
    /// if anything but zeros follows it.
    zeros_from: Option<u64>,
    /// See [`LogReader::write_ahead_log`].
    write_ahead: bool,
    /// File offset where a gap (see the module documentation) being skipped starts, while
    /// one is: reports are withheld until the next whole record.
    gap_from: Option<u64>,
    /// The gap skipped before the last record returned: its file offset and length.
    gap: Option<(u64, u64)>,
}

impl LogReader {
    /// A reader over `file`, positioned at its start. Damage is reported to `reporter` if given.
    /// With `verify_checksums` off, checksums are not computed (lengths are still checked).
    /// Only records whose first fragment starts at or after `initial_offset` are returned.
    pub(crate) fn new(
        file: Box<dyn SequentialFile>,
        reporter: Option<Box<dyn Reporter>>,
        verify_checksums: bool,
        initial_offset: u64,
    ) -> LogReader {
        LogReader {
            file,
            reporter,
            verify_checksums,
            block: vec![0u8; BLOCK_SIZE].into_boxed_slice(),
            pos: 0,
            end: 0,
            eof: false,
            end_of_buffer_offset: 0,
            last_record_offset: 0,
            last_record_end: 0,
            initial_offset,
            positioned: false,
            resyncing: initial_offset > 0,
            zeros_from: None,
            write_ahead: false,
            gap_from: None,
            gap: None,
        }
    }

    /// This reader for a write-ahead log (see the module documentation): what follows a zero
    /// header in its whole block is an unpublished record, not damage, and a zero region
    /// followed by data is a gap, left to the caller to judge by [`LogReader::take_gap`].
    pub(crate) fn write_ahead_log(mut self) -> LogReader {
        self.write_ahead = true;
        self
    }

    /// The gap skipped just before the last record returned (write-ahead log readers only):
    /// its file offset and length in bytes. Asked for after each record; the next
    /// `read_record` forgets it.
    pub(crate) fn take_gap(&mut self) -> Option<(u64, u64)> {
        self.gap.take()
    }

    /// The next logical record, or `None` at the end of the log.
    ///
    /// A record held in one fragment is returned straight from the reader's block buffer;
    /// a fragmented one is assembled in `scratch` (which is cleared first). Either way the
    /// slice is valid until the next call.
    pub(crate) fn read_record<'a>(&'a mut self, scratch: &'a mut Vec<u8>) -> Option<&'a [u8]> {
        if !self.positioned {
            self.positioned = true;
            self.skip_to_initial_block();
        }
        scratch.clear();
        self.gap = None;
        // Offset of the FIRST fragment of the record being assembled, while one is.
        let mut open_record: Option<u64> = None;
        loop {
            let (kind, start, len, offset) = match self.read_physical_record() {
                Physical::Record {
                    kind,
                    start,
                    len,
                    offset,
                } => (kind, start, len, offset),
                Physical::Skipped => continue,
                Physical::Bad => {
                    if let Some(record_offset) = open_record.take() {
                        self.report(scratch.len(), record_offset, "error in middle of record");
                        scratch.clear();
                    }
                    continue;
                }
                Physical::Eof => {
                    // A fragmented record cut short by the end of the file is a torn write;
                    // a gap that no record follows, a writer's unpublished tail.
                    scratch.clear();
                    self.gap_from = None;
                    return None;
                }
            };
            let record_type = RecordType::from_byte(kind);
            if self.resyncing {
                match record_type {
                    Some(RecordType::Middle) => continue,
                    Some(RecordType::Last) => {
                        self.resyncing = false;
                        continue;
                    }
                    _ => self.resyncing = false,
                }
            }
            // `read_physical_record` checked `start + len <= end <= BLOCK_SIZE`.
            let fragment = start..start + len;
            match record_type {
                Some(RecordType::Full) => {
                    self.drop_unfinished(&mut open_record, scratch);
                    self.end_gap(offset);
                    self.last_record_offset = offset;
                    self.last_record_end = self.position();
                    return Some(&self.block[fragment]);
                }
                Some(RecordType::First) => {
                    self.drop_unfinished(&mut open_record, scratch);
                    scratch.extend_from_slice(&self.block[fragment]);
                    open_record = Some(offset);
                }
                Some(RecordType::Middle) => match open_record {
                    Some(_) => scratch.extend_from_slice(&self.block[fragment]),
                    None => self.report(len, offset, "missing start of fragmented record"),
                },
                Some(RecordType::Last) => match open_record {
                    Some(record_offset) => {
                        scratch.extend_from_slice(&self.block[fragment]);
                        self.end_gap(record_offset);
                        self.last_record_offset = record_offset;
                        self.last_record_end = self.position();
                        return Some(scratch.as_slice());
                    }
                    None => self.report(len, offset, "missing start of fragmented record"),
                },
                Some(RecordType::Zero) | None => {
                    let (dropped, at) = match open_record.take() {
                        Some(record_offset) => (len + scratch.len(), record_offset),
                        None => (len, offset),
                    };
                    scratch.clear();
                    if self.reporter.is_some() {
                        self.report(dropped, at, format!("unknown record type {kind}"));
                    }
                }
            }
        }
    }

    /// File offset of the header where the last record returned by `read_record` starts.
    pub(crate) fn last_record_offset(&self) -> u64 {
        self.last_record_offset
    }

    /// File offset just past the last fragment of the last record returned by `read_record`
    /// (0 before the first). When it equals the file's length and nothing was reported, the
    /// log ends cleanly: a writer may append to it (log reuse) without its new records landing
    /// behind a torn or damaged tail, which would make readers drop them.
    pub(crate) fn end_of_last_record(&self) -> u64 {
        self.last_record_end
    }

    /// File offset of the next unread byte of the buffer.
    fn position(&self) -> u64 {
        self.end_of_buffer_offset - (self.end - self.pos) as u64
    }

    /// A new record began while another was still open: the open one is lost.
    fn drop_unfinished(&mut self, open_record: &mut Option<u64>, scratch: &mut Vec<u8>) {
        if let Some(record_offset) = open_record.take() {
            // An empty open record is an empty FIRST fragment at a block's end, which LevelDB
            // writers before 1.4 left behind before starting over: not damage.
            if !scratch.is_empty() {
                self.report(scratch.len(), record_offset, "partial record without end");
            }
            scratch.clear();
        }
    }

    /// Moves the file to the first block that can hold a record starting at `initial_offset`.
    fn skip_to_initial_block(&mut self) {
        let block_size = BLOCK_SIZE as u64;
        let in_block = self.initial_offset % block_size;
        let mut block_start = self.initial_offset - in_block;
        if in_block > (BLOCK_SIZE - HEADER_SIZE) as u64 {
            // Only a trailer can sit this close to the block's end.
            block_start += block_size;
        }
        self.end_of_buffer_offset = block_start;
        if block_start > 0 {
            if let Err(e) = self.file.skip(block_start) {
                self.report_error(block_start, &e);
                self.eof = true;
            }
        }
    }

    /// Reads the next block into the buffer, looping over short reads.
    fn read_block(&mut self) -> Result<(), Error> {
        self.pos = 0;
        self.end = 0;
        while self.end < BLOCK_SIZE {
            let n = self.file.read(&mut self.block[self.end..])?;
            if n == 0 {
                break;
            }
            // A file that claims more than it was given must not push `end` past the buffer.
            self.end = (self.end + n).min(BLOCK_SIZE);
        }
        self.end_of_buffer_offset += self.end as u64;
        if self.end < BLOCK_SIZE {
            self.eof = true;
        }
        Ok(())
    }

    fn read_physical_record(&mut self) -> Physical {
        loop {
            let available = self.end - self.pos;
            if available < HEADER_SIZE {
                if self.eof {
                    // A header cut short by the end of the file: a torn write, or a trailer.
                    self.pos = self.end;
                    return Physical::Eof;
                }
                // What is left is the block's zero trailer: go on with the next block.
                if let Err(e) = self.read_block() {
                    self.report_error(BLOCK_SIZE as u64, &e);
                    self.pos = 0;
                    self.end = 0;
                    self.eof = true;
                    return Physical::Eof;
                }
                continue;
            }
            let offset = self.end_of_buffer_offset - available as u64;
            let header = &self.block[self.pos..self.pos + HEADER_SIZE];
            let stored_crc = u32::from_le_bytes([header[0], header[1], header[2], header[3]]);
            let len = usize::from(u16::from_le_bytes([header[4], header[5]]));
            let kind = header[6];
            if kind == RecordType::Zero as u8 && len == 0 {
                // Never written (preallocated), if only zeros follow: skip the block's rest.
                let rest_is_zero = self.block[self.pos..self.end].iter().all(|&b| b == 0);
                self.pos = self.end;
                self.zeros_from.get_or_insert(offset);
                // Bytes after a zero-filled header in the same block: damage — unless, in a
                // write-ahead log, the block is whole: a mapped log's writer reserves its block
                // to the end before copying a record in, so a record it never published lies
                // in a whole block (were more of the file to follow, the zeros are reported
                // when it is met). A short block is a file cut at its written length: there,
                // the bytes are records a damaged header hides.
                if !rest_is_zero && (!self.write_ahead || self.eof) {
                    self.report_zeros(self.end_of_buffer_offset, false);
                }
                return Physical::Bad;
            }
            // A header that is not zeros: zeros skipped before it were no preallocated tail.
            self.report_zeros(offset, self.write_ahead);
            if HEADER_SIZE + len > available {
                self.pos = self.end;
                if self.eof {
                    // A payload cut short by the end of the file: a torn write.
                    return Physical::Eof;
                }
                self.report(available, offset, "bad record length");
                return Physical::Bad;
            }
            let start = self.pos + HEADER_SIZE;
            if self.verify_checksums {
                // The checksum covers the type byte and the payload, which are contiguous.
                let actual = crc::crc32c(&self.block[start - 1..start + len]);
                if actual != crc::unmask(stored_crc) {
                    // The length itself may be what is damaged: drop the whole block's rest.
                    self.pos = self.end;
                    self.report(available, offset, "checksum mismatch");
                    return Physical::Bad;
                }
            }
            self.pos = start + len;
            if offset < self.initial_offset {
                return Physical::Skipped;
            }
            return Physical::Record {
                kind,
                start,
                len,
                offset,
            };
        }
    }

    /// Reports the zero-filled region being skipped, if any, as damage ending at file offset
    /// `end` (where data was found after it) — or, `as_gap`, starts a gap there.
    fn report_zeros(&mut self, end: u64, as_gap: bool) {
        if let Some(start) = self.zeros_from.take() {
            if as_gap {
                self.gap_from.get_or_insert(start);
                return;
            }
            let bytes = usize::try_from(end.saturating_sub(start)).unwrap_or(usize::MAX);
            self.report(bytes, start, "zero-filled region followed by data");
        }
    }

    /// Reports `bytes` dropped at file offset `offset`, unless they lie before the initial
    /// offset (the caller asked not to see that part of the log).
    /// Withheld while a gap is being skipped: it is part of the gap.
    fn report(&mut self, bytes: usize, offset: u64, reason: impl Into<String>) {
        if offset < self.initial_offset || self.gap_from.is_some() {
            return;
        }
        if let Some(reporter) = self.reporter.as_mut() {
            reporter.corruption(bytes as u64, &Error::corruption_at(offset, reason));
        }
    }

    /// A whole record starting at file offset `record` is about to be returned: a gap being
    /// skipped ends before it.
    fn end_gap(&mut self, record: u64) {
        self.gap = self
            .gap_from
            .take()
            .map(|start| (start, record.saturating_sub(start)));
    }

    fn report_error(&mut self, bytes: u64, error: &Error) {
        if let Some(reporter) = self.reporter.as_mut() {
            reporter.corruption(bytes, error);
        }
    }
}
