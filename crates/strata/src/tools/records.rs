//! Reads a log file (WAL or manifest) for the tools: every logical record with its offset, and
//! every damaged region the reader skipped, in file order.

use std::path::Path;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::env::Env;
use crate::error::{Error, Result};
use crate::log::{LogReader, Reporter, BLOCK_SIZE, HEADER_SIZE};

/// One thing met while reading a log, in file order.
pub(crate) enum LogItem<'a> {
    /// A logical record whose first fragment starts at `offset`.
    Record { offset: u64, data: &'a [u8] },
    /// A write-ahead log's gap (`log/reader.rs`): `bytes` bytes from `offset`, zeros and what
    /// follows them up to the next record, skipped without a report. Whether it hides writes
    /// shows in the next record's sequence numbers (`db/log_continuity.rs`).
    Gap { offset: u64, bytes: u64 },
    /// `bytes` bytes skipped because of `reason`, starting at `offset` when known.
    Damage {
        offset: Option<u64>,
        bytes: u64,
        reason: String,
    },
    /// The last item: `bytes` bytes from `offset` to the end of the file are not a complete
    /// record and not zero padding. The log reader ends there without a report, since that is
    /// what a write cut short by a crash leaves; a damaged length or type byte looks the same.
    Tail { offset: u64, bytes: u64 },
}

/// Collects the reader's reports until they are handed on.
struct Queue(Arc<Mutex<Vec<(u64, Error)>>>);

impl Reporter for Queue {
    fn corruption(&mut self, bytes: u64, reason: &Error) {
        self.0.lock().push((bytes, reason.clone()));
    }
}

/// Hands every record and every damaged region of the log at `path` to `f`, in file order,
/// then the incomplete tail if there is one. Stops at the first error `f` returns.
/// `write_ahead_log`: the file is read as recovery reads a write-ahead log (a record never
/// published is no damage, a gap is handed over as [`LogItem::Gap`]).
pub(crate) fn for_each_record(
    env: &dyn Env,
    path: &Path,
    verify_checksums: bool,
    write_ahead_log: bool,
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
    if write_ahead_log {
        reader = reader.write_ahead_log();
    }
    let mut scratch = Vec::new();
    // File offset past the last record or reported damage; `None` once a read error left the
    // rest of the file unread.
    let mut end = Some(0u64);
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
            end = match offset {
                Some(at) => end.map(|e| e.max(at.saturating_add(bytes))),
                None => None,
            };
            f(LogItem::Damage {
                offset,
                bytes,
                reason,
            })?;
        }
        let Some(data) = record else {
            return match end {
                Some(end) => match nonzero_tail(env, path, end)? {
                    Some(bytes) => f(LogItem::Tail { offset: end, bytes }),
                    None => Ok(()),
                },
                None => Ok(()),
            };
        };
        if let Some((offset, bytes)) = reader.take_gap() {
            f(LogItem::Gap { offset, bytes })?;
        }
        let offset = reader.last_record_offset();
        end = end.map(|e| e.max(physical_end(offset, data.len() as u64)));
        f(LogItem::Record {
            offset,
            data: &data,
        })?;
    }
}

/// File offset just past a record of `len` payload bytes whose first header is at `start`, as
/// the writer lays it out: a fragment per block, each with its header, and blocks whose last
/// bytes cannot hold a header padded.
fn physical_end(start: u64, len: u64) -> u64 {
    let (block, header) = (BLOCK_SIZE as u64, HEADER_SIZE as u64);
    let (mut pos, mut left) = (start, len);
    loop {
        let room = block - pos % block;
        if room < header {
            pos += room;
            continue;
        }
        let take = left.min(room - header);
        pos += header + take;
        left -= take;
        if left == 0 {
            return pos;
        }
    }
}

/// The number of bytes from `from` to the end of the file when any of them is not zero.
fn nonzero_tail(env: &dyn Env, path: &Path, from: u64) -> Result<Option<u64>> {
    let size = env.file_size(path)?;
    if from >= size {
        return Ok(None);
    }
    let file = env.new_random_access_file(path)?;
    let mut buf = vec![0u8; 64 * 1024];
    let mut at = from;
    while at < size {
        let n = file.read_at(at, &mut buf)?;
        if n == 0 {
            break;
        }
        if buf
            .get(..n)
            .is_some_and(|read| read.iter().any(|&b| b != 0))
        {
            return Ok(Some(size - from));
        }
        at += n as u64;
    }
    Ok(None)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::{write_file, MemEnv};
    use crate::tools::test_db::write_log;

    /// `(offset, length)` of each record, and `(offset, bytes)` of the tail if any.
    type Found = (Vec<(u64, usize)>, Option<(u64, u64)>);

    fn read(env: &MemEnv, path: &Path) -> Found {
        let mut records = Vec::new();
        let mut tail = None;
        for_each_record(env, path, true, false, &mut |item| {
            match item {
                LogItem::Record { offset, data } => records.push((offset, data.len())),
                LogItem::Tail { offset, bytes } => tail = Some((offset, bytes)),
                LogItem::Damage { reason, .. } => panic!("unexpected damage: {reason}"),
                LogItem::Gap { offset, .. } => panic!("unexpected gap at {offset}"),
            }
            Ok(())
        })
        .unwrap();
        (records, tail)
    }

    #[test]
    fn record_ends_follow_the_writer_across_blocks() {
        let env = MemEnv::new();
        env.create_dir(Path::new("/l")).unwrap();
        let path = Path::new("/l/log");
        // Sizes that leave 0..7 bytes at block ends, and records spanning several blocks.
        let sizes = [
            0,
            10,
            BLOCK_SIZE - 2 * HEADER_SIZE - 10 - 3,
            0,
            3 * BLOCK_SIZE + 5,
            1,
        ];
        let records: Vec<Vec<u8>> = sizes.iter().map(|&n| vec![7u8; n]).collect();
        write_log(&env, path, &records);
        let bytes = read_file_to_vec(&env, path);
        let (found, tail) = read(&env, path);
        assert_eq!(found.iter().map(|r| r.1).collect::<Vec<_>>(), sizes);
        assert_eq!(tail, None);
        let (last_offset, last_len) = found[found.len() - 1];
        assert_eq!(
            physical_end(last_offset, last_len as u64),
            bytes.len() as u64
        );
        for pair in found.windows(2) {
            assert_eq!(
                physical_end(pair[0].0, pair[0].1 as u64),
                pair[1].0,
                "{pair:?}"
            );
        }

        // Zero padding after the end is not a tail; anything else is.
        let mut padded = bytes.clone();
        padded.extend_from_slice(&[0; 100]);
        write_file(&env, path, &padded, false).unwrap();
        assert_eq!(read(&env, path).1, None);
        let cut = bytes.len() - 3;
        write_file(&env, path, &bytes[..cut], false).unwrap();
        let (found, tail) = read(&env, path);
        assert_eq!(found.len(), sizes.len() - 1);
        let end = physical_end(found[found.len() - 1].0, found[found.len() - 1].1 as u64);
        assert_eq!(tail, Some((end, cut as u64 - end)));
    }

    fn read_file_to_vec(env: &MemEnv, path: &Path) -> Vec<u8> {
        crate::env::read_file_to_vec(env, path).unwrap()
    }
}
