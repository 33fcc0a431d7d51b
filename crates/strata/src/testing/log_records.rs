//! Log files (write-ahead logs and manifests) as lists of records: written with the engine's
//! `LogWriter`, read back with its `LogReader` (checksums verified), the reader's reports of
//! damage collected as text.

use std::path::Path;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::env::vec_files::{VecSink, VecSource};
use crate::env::{Env, SequentialFile};
use crate::error::{Error, Result};
use crate::log::{LogReader, LogWriter, Reporter};

/// What reading a log file gave.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogRecords {
    /// Every logical record the reader returned, in order.
    pub records: Vec<Vec<u8>>,
    /// One line per corruption the reader reported (bytes dropped and why), in order.
    pub reports: Vec<String>,
}

/// Collects a log reader's reports as readable lines.
struct CollectReports(Arc<Mutex<Vec<String>>>);

impl Reporter for CollectReports {
    fn corruption(&mut self, bytes: u64, reason: &Error) {
        self.0
            .lock()
            .push(format!("{bytes} bytes dropped: {reason}"));
    }
}

/// Reads every logical record of a log file's bytes (checksums verified).
pub fn read_log_records(bytes: &[u8]) -> LogRecords {
    read_all_records(Box::new(VecSource::new(bytes.to_vec())))
}

/// Like [`read_log_records`], reading the log file at `path` through `env`.
pub fn read_log_file(env: &dyn Env, path: &Path) -> Result<LogRecords> {
    Ok(read_all_records(env.new_sequential_file(path)?))
}

fn read_all_records(file: Box<dyn SequentialFile>) -> LogRecords {
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
    LogRecords { records, reports }
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
