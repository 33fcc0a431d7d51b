//! Internals exposed to fuzz targets, benches and interop tests (feature `testing`).
//! Not part of the stable API.

use std::sync::Arc;

use parking_lot::Mutex;

use crate::error::{Error, Result};
use crate::log::vec_file::{VecSink, VecSource};
use crate::log::{LogReader, LogWriter, Reporter};
use crate::version::edit::VersionEdit;
use crate::write_batch::WriteBatch;

/// Collects a log reader's reports as readable lines.
struct CollectReports(Arc<Mutex<Vec<String>>>);

impl Reporter for CollectReports {
    fn corruption(&mut self, bytes: u64, reason: &Error) {
        self.0
            .lock()
            .push(format!("{bytes} bytes dropped: {reason}"));
    }
}

/// Reads every logical record of a log file's bytes (checksums verified), returning the records
/// and one line per reported corruption.
pub fn read_log_records(bytes: &[u8]) -> (Vec<Vec<u8>>, Vec<String>) {
    let reports = Arc::new(Mutex::new(Vec::new()));
    let mut reader = LogReader::new(
        Box::new(VecSource::new(bytes.to_vec())),
        Some(Box::new(CollectReports(reports.clone()))),
        true,
        0,
    );
    let mut records = Vec::new();
    let mut scratch = Vec::new();
    while let Some(record) = reader.read_record(&mut scratch) {
        records.push(record.to_vec());
    }
    drop(reader);
    let reports = std::mem::take(&mut *reports.lock());
    (records, reports)
}

/// The bytes of a log file holding `records` in order.
pub fn write_log_records(records: &[&[u8]]) -> Vec<u8> {
    let sink = VecSink::new();
    let mut writer = LogWriter::new(Box::new(sink.clone()));
    for record in records {
        // The in-memory sink never fails.
        let _ = writer.add_record(record);
    }
    sink.contents()
}

/// Decodes a version edit (a manifest record's payload) into its readable form.
pub fn decode_version_edit(bytes: &[u8]) -> Result<String> {
    VersionEdit::decode(bytes).map(|edit| edit.to_string())
}

/// A write batch from its encoded form (a WAL record's payload); see `WriteBatch`'s layout.
pub fn write_batch_from_contents(bytes: Vec<u8>) -> Result<WriteBatch> {
    WriteBatch::from_contents(bytes)
}

/// The encoded form of `batch`: header and records, as the WAL stores it.
pub fn write_batch_contents(batch: &WriteBatch) -> &[u8] {
    batch.contents()
}

/// The sequence number in `batch`'s header.
pub fn write_batch_sequence(batch: &WriteBatch) -> u64 {
    batch.sequence()
}

/// Sets the sequence number in `batch`'s header.
pub fn write_batch_set_sequence(batch: &mut WriteBatch, sequence: u64) {
    batch.set_sequence(sequence);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_helpers_round_trip_and_report() {
        let big = vec![3u8; 70_000];
        let mut bytes = write_log_records(&[b"a", b"", &big]);
        let (records, reports) = read_log_records(&bytes);
        assert_eq!(records, vec![b"a".to_vec(), Vec::new(), big]);
        assert!(reports.is_empty());
        bytes[7] ^= 1;
        let (records, reports) = read_log_records(&bytes);
        assert!(records.is_empty());
        assert!(reports[0].contains("checksum mismatch"), "{reports:?}");
    }

    #[test]
    fn version_edit_helper_prints_or_fails() {
        let text = decode_version_edit(&[2, 5]).unwrap();
        assert!(text.contains("LogNumber: 5"), "{text}");
        assert!(decode_version_edit(&[2]).unwrap_err().is_corruption());
    }
}
