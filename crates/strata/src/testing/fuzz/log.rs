//! Fuzz body for the log format (write-ahead logs and manifests).

use std::sync::Arc;

use arbitrary::{Result, Unstructured};
use parking_lot::Mutex;

use super::{damage, is_subsequence, pattern_value};
use crate::env::vec_files::{VecSink, VecSource};
use crate::error::Error;
use crate::log::{LogReader, LogWriter, Reporter, BLOCK_SIZE, HEADER_SIZE};

/// Fuzz target `log`: `data` as a raw log file read with and without checksums, then as a
/// recipe for records that must read back exactly (also from an initial offset), and, damaged
/// once, read back as a subsequence of what was written.
pub fn log(data: &[u8]) {
    read_log(data.to_vec(), true, 0);
    read_log(data.to_vec(), false, 0);
    let _ = log_round_trip(&mut Unstructured::new(data));
}

/// Counts the reader's reports.
struct CountReports(Arc<Mutex<usize>>);

impl Reporter for CountReports {
    fn corruption(&mut self, _bytes: u64, reason: &Error) {
        // Corruption reports name where the damage is; read errors cannot happen here.
        assert!(reason.is_corruption(), "unexpected report: {reason}");
        *self.0.lock() += 1;
    }
}

/// Every record of `bytes` with the offset the reader gives for it, and the number of reports.
/// Asserts the reading ends: every record takes at least one header.
fn read_log(bytes: Vec<u8>, verify: bool, initial_offset: u64) -> (Vec<(u64, Vec<u8>)>, usize) {
    let bound = bytes.len() / HEADER_SIZE + 1;
    let reports = Arc::new(Mutex::new(0));
    let mut reader = LogReader::new(
        Box::new(VecSource::new(bytes)),
        Some(Box::new(CountReports(Arc::clone(&reports)))),
        verify,
        initial_offset,
    );
    let mut records = Vec::new();
    let mut scratch = Vec::new();
    while let Some(record) = reader.read_record(&mut scratch) {
        let record = record.to_vec();
        records.push((reader.last_record_offset(), record));
        assert!(
            records.len() <= bound,
            "log reader returns more records than fit"
        );
    }
    drop(reader);
    let reports = *reports.lock();
    (records, reports)
}

/// Where the reader sees a record start that the writer began at `file_len`: a block's tail
/// too short for a header is padding, and the record starts in the next block.
fn record_start(file_len: u64) -> u64 {
    let block = BLOCK_SIZE as u64;
    let left = block - file_len % block;
    if left < HEADER_SIZE as u64 {
        file_len + left
    } else {
        file_len
    }
}

fn log_round_trip(u: &mut Unstructured<'_>) -> Result<()> {
    let sink = VecSink::new();
    let mut writer = LogWriter::new(Box::new(sink.clone()));
    let mut written: Vec<(u64, Vec<u8>)> = Vec::new();
    for _ in 0..u.int_in_range(0..=24)? {
        let record = pattern_value(u, 3 * BLOCK_SIZE)?;
        let start = record_start(writer.file_len());
        if let Err(e) = writer.add_record(&record) {
            panic!("writing to memory failed: {e}");
        }
        written.push((start, record));
    }
    let bytes = sink.contents();
    assert_eq!(writer.file_len(), bytes.len() as u64);

    for verify in [true, false] {
        let (read, reports) = read_log(bytes.clone(), verify, 0);
        assert_eq!(reports, 0, "an intact log reports damage");
        assert_eq!(read, written, "a log reads back different records");
    }
    let initial_offset = u.int_in_range(0..=bytes.len() as u64 + 8)?;
    let expected: Vec<(u64, Vec<u8>)> = written
        .iter()
        .filter(|(start, _)| *start >= initial_offset)
        .cloned()
        .collect();
    let (read, reports) = read_log(bytes.clone(), true, initial_offset);
    assert_eq!(
        reports, 0,
        "an intact log read from {initial_offset} reports damage"
    );
    assert_eq!(read, expected, "reading from offset {initial_offset}");

    let mut damaged = bytes;
    let done = damage(u, &mut damaged)?;
    let verify = u.arbitrary()?;
    let (read, _) = read_log(damaged, verify, 0);
    if verify && done.len() == 1 {
        let records: Vec<&Vec<u8>> = read.iter().map(|(_, r)| r).collect();
        let originals: Vec<&Vec<u8>> = written.iter().map(|(_, r)| r).collect();
        assert!(
            is_subsequence(&records, &originals),
            "after {done:?} the log returns a record that was never written"
        );
    }
    Ok(())
}
