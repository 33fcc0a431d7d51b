//! Reads a log file (WAL or manifest) for the tools: every logical record with its offset, and
//! every damaged region the reader skipped, in file order.

use std::path::Path;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::env::Env;
use crate::error::{Error, Result};
use crate::log::{LogReader, Reporter};

/// One thing met while reading a log, in file order.
pub(crate) enum LogItem<'a> {
    /// A logical record whose first fragment starts at `offset`.
    Record { offset: u64, data: &'a [u8] },
    /// `bytes` bytes skipped because of `reason`, starting at `offset` when known.
    Damage {
        offset: Option<u64>,
        bytes: u64,
        reason: String,
    },
}

/// Collects the reader's reports until they are handed on.
struct Queue(Arc<Mutex<Vec<(u64, Error)>>>);

impl Reporter for Queue {
    fn corruption(&mut self, bytes: u64, reason: &Error) {
        self.0.lock().push((bytes, reason.clone()));
    }
}

/// Hands every record and every damaged region of the log at `path` to `f`, in file order.
/// Stops at the first error `f` returns.
pub(crate) fn for_each_record(
    env: &dyn Env,
    path: &Path,
    verify_checksums: bool,
    f: &mut dyn FnMut(LogItem<'_>) -> Result<()>,
) -> Result<()> {
    let reports = Arc::new(Mutex::new(Vec::new()));
    let file = env.new_sequential_file(path)?;
    let mut reader = LogReader::new(
        file,
        Some(Box::new(Queue(Arc::clone(&reports)))),
        verify_checksums,
        0,
    );
    let mut scratch = Vec::new();
    loop {
        // Copied out: the reader stays borrowed while the record's slice lives, and its
        // offset is asked for after.
        let record = reader.read_record(&mut scratch).map(<[u8]>::to_vec);
        // Damage reported while finding this record lies before it.
        let damage = std::mem::take(&mut *reports.lock());
        for (bytes, error) in damage {
            let (offset, reason) = match &error {
                Error::Corruption(c) => (c.offset, c.reason.clone()),
                other => (None, other.to_string()),
            };
            f(LogItem::Damage {
                offset,
                bytes,
                reason,
            })?;
        }
        let Some(data) = record else {
            return Ok(());
        };
        let offset = reader.last_record_offset();
        f(LogItem::Record {
            offset,
            data: &data,
        })?;
    }
}

/// Describes an error from decoding a record's payload, whose offsets count from the start of
/// the record rather than the file.
pub(crate) fn describe_in_record(error: &Error) -> String {
    match error {
        Error::Corruption(c) => match c.offset {
            Some(at) => format!("{} (at byte {at} of the record)", c.reason),
            None => c.reason.clone(),
        },
        other => other.to_string(),
    }
}
