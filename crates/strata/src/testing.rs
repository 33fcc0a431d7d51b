//! Internals exposed to fuzz targets, benches and interop tests (feature `testing`).
//! Not part of the stable API.

use std::path::Path;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::env::{Env, SequentialFile};
use crate::error::{Error, Result};
use crate::log::vec_file::{VecSink, VecSource};
use crate::log::{LogReader, LogWriter, Reporter};
use crate::version::edit::VersionEdit;
use crate::version::NUM_LEVELS;
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
    read_all_records(Box::new(VecSource::new(bytes.to_vec())))
}

/// Like [`read_log_records`], reading the log file at `path` through `env`.
pub fn read_log_file(env: &dyn Env, path: &Path) -> Result<(Vec<Vec<u8>>, Vec<String>)> {
    Ok(read_all_records(env.new_sequential_file(path)?))
}

fn read_all_records(file: Box<dyn SequentialFile>) -> (Vec<Vec<u8>>, Vec<String>) {
    let reports = Arc::new(Mutex::new(Vec::new()));
    let mut reader = LogReader::new(
        file,
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

/// Writes a new log file at `path` through `env` holding `records` in order, synced and closed.
pub fn write_log_file(env: &dyn Env, path: &Path, records: &[&[u8]]) -> Result<()> {
    let mut writer = LogWriter::new(env.new_writable_file(path)?);
    for record in records {
        writer.add_record(record)?;
    }
    writer.sync()?;
    writer.close()
}

/// A table a version edit adds, in plain public fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditNewFile {
    /// Level the table joins.
    pub level: usize,
    /// File number (`NNNNNN.ldb`).
    pub number: u64,
    /// File size in bytes.
    pub file_size: u64,
    /// Smallest internal key.
    pub smallest: Vec<u8>,
    /// Largest internal key.
    pub largest: Vec<u8>,
}

/// Every field of a version edit, in plain public fields, for tests that build or inspect
/// manifests. Converts losslessly to and from the engine's `VersionEdit`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EditFields {
    /// Comparator name.
    pub comparator: Option<String>,
    /// Log number.
    pub log_number: Option<u64>,
    /// Previous log number.
    pub prev_log_number: Option<u64>,
    /// Next file number.
    pub next_file_number: Option<u64>,
    /// Last sequence number.
    pub last_sequence: Option<u64>,
    /// Compaction pointers: (level, internal key).
    pub compact_pointers: Vec<(usize, Vec<u8>)>,
    /// Deleted tables: (level, file number), ascending.
    pub deleted_files: Vec<(usize, u64)>,
    /// Added tables, in edit order.
    pub new_files: Vec<EditNewFile>,
}

/// Decodes a version edit (a manifest record's payload) into its fields.
pub fn version_edit_fields(bytes: &[u8]) -> Result<EditFields> {
    let edit = VersionEdit::decode(bytes)?;
    Ok(EditFields {
        comparator: edit.comparator,
        log_number: edit.log_number,
        prev_log_number: edit.prev_log_number,
        next_file_number: edit.next_file_number,
        last_sequence: edit.last_sequence,
        compact_pointers: edit.compact_pointers,
        deleted_files: edit.deleted_files.into_iter().collect(),
        new_files: edit
            .new_files
            .into_iter()
            .map(|(level, f)| EditNewFile {
                level,
                number: f.number,
                file_size: f.file_size,
                smallest: f.smallest,
                largest: f.largest,
            })
            .collect(),
    })
}

/// Encodes `fields` as the engine's `VersionEdit` encodes an edit (a manifest record's payload).
/// Fails with `InvalidArgument` for a level outside the tree.
pub fn encode_version_edit(fields: &EditFields) -> Result<Vec<u8>> {
    let levels = fields
        .compact_pointers
        .iter()
        .map(|(level, _)| *level)
        .chain(fields.deleted_files.iter().map(|(level, _)| *level))
        .chain(fields.new_files.iter().map(|f| f.level));
    for level in levels {
        if level >= NUM_LEVELS {
            return Err(Error::InvalidArgument(format!(
                "level {level} is not below {NUM_LEVELS}"
            )));
        }
    }
    let mut edit = VersionEdit::new();
    if let Some(name) = &fields.comparator {
        edit.set_comparator_name(name);
    }
    edit.log_number = fields.log_number;
    edit.prev_log_number = fields.prev_log_number;
    edit.next_file_number = fields.next_file_number;
    edit.last_sequence = fields.last_sequence;
    for (level, key) in &fields.compact_pointers {
        edit.set_compact_pointer(*level, key.clone());
    }
    for &(level, number) in &fields.deleted_files {
        edit.delete_file(level, number);
    }
    for f in &fields.new_files {
        edit.add_file(
            f.level,
            f.number,
            f.file_size,
            f.smallest.clone(),
            f.largest.clone(),
        );
    }
    let mut out = Vec::new();
    edit.encode(&mut out);
    Ok(out)
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
    fn log_file_helpers_round_trip_through_an_env() {
        let env = crate::env::MemEnv::new();
        let path = Path::new("/db/000003.log");
        env.create_dir(Path::new("/db")).unwrap();
        let big = vec![9u8; 40_000];
        write_log_file(&env, path, &[b"x", &big]).unwrap();
        let (records, reports) = read_log_file(&env, path).unwrap();
        assert_eq!(records, vec![b"x".to_vec(), big]);
        assert!(reports.is_empty(), "{reports:?}");
        assert!(read_log_file(&env, Path::new("/db/missing.log")).is_err());
    }

    #[test]
    fn edit_fields_round_trip_and_reject_bad_levels() {
        let key = |user: &[u8], seq: u64| {
            let mut k = user.to_vec();
            k.extend_from_slice(&((seq << 8) | 1).to_le_bytes());
            k
        };
        let fields = EditFields {
            comparator: Some("leveldb.BytewiseComparator".into()),
            log_number: Some(3),
            prev_log_number: Some(0),
            next_file_number: Some(4),
            last_sequence: Some(77),
            compact_pointers: vec![(1, key(b"m", 5))],
            deleted_files: vec![(0, 2), (3, 1)],
            new_files: vec![EditNewFile {
                level: 6,
                number: 9,
                file_size: 1234,
                smallest: key(b"a", 1),
                largest: key(b"z", 2),
            }],
        };
        let bytes = encode_version_edit(&fields).unwrap();
        assert_eq!(version_edit_fields(&bytes).unwrap(), fields);
        let bad = EditFields {
            deleted_files: vec![(NUM_LEVELS, 1)],
            ..EditFields::default()
        };
        assert!(matches!(
            encode_version_edit(&bad),
            Err(Error::InvalidArgument(_))
        ));
    }

    #[test]
    fn version_edit_helper_prints_or_fails() {
        let text = decode_version_edit(&[2, 5]).unwrap();
        assert!(text.contains("LogNumber: 5"), "{text}");
        assert!(decode_version_edit(&[2]).unwrap_err().is_corruption());
    }
}
