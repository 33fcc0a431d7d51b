//! The write-ahead log as the write path holds it: the log taking writes, and the logs it
//! replaced whose tails may still be only in the operating system's hands.
//!
//! A memtable switch starts a new log without syncing the old one or the directory: that
//! would put every logged byte on the disk, although the old memtable's flush soon makes the
//! old log unnecessary (and deleting a log whose bytes never left the page cache is cheap).
//! Three rules keep the write guarantees of `docs/guarantees.md`:
//! - A `sync` write first syncs every older log still open, oldest first, and the directory
//!   (once per new log), then its own log: once it is acknowledged, it and every write before
//!   it are durable, under their files' names.
//! - The manifest edit that makes a log the oldest one to replay records, as its last sequence,
//!   the sequence number just before that log's first write (`DbState::log_first_sequence`).
//! - Recovery checks that each log continues the sequence numbers where the tables and the
//!   logs before it end, and stops at the first that does not (`db/open.rs`): after a power
//!   loss that kept a later log but lost the tail of an earlier one, the later writes are
//!   dropped instead of replayed behind a hole.
//!
//! A replaced log whose memtable has reached a table is closed without a sync, on another
//! thread (`db/log_closer.rs`: closing a deleted, memory-mapped log can wait for writeback).

use std::path::Path;
use std::sync::Arc;

use super::log_closer::LogCloser;
use crate::env::Env;
use crate::error::{Error, Result};
use crate::log::LogWriter;

/// The open logs of a database. Used by one write-group leader at a time (behind a mutex).
pub(crate) struct Wal {
    /// The log taking writes and its file number; `None` before recovery and after close.
    current: Option<(u64, LogWriter)>,
    /// Logs replaced by a memtable switch and not yet synced, oldest first, by file number.
    older: Vec<(u64, LogWriter)>,
    /// Whether the current log's directory entry is known to be durable.
    dir_synced: bool,
    /// The record being appended (kept to reuse its allocation).
    record: Vec<u8>,
    /// Closes the logs whose writes have reached tables.
    closer: LogCloser,
}

impl Wal {
    /// No log yet; `env` is the database's (for the closer thread).
    pub(crate) fn new(env: Arc<dyn Env>) -> Wal {
        Wal {
            current: None,
            older: Vec::new(),
            dir_synced: false,
            record: Vec::new(),
            closer: LogCloser::new(env),
        }
    }

    /// Makes `log` (file `number`) the log taking writes. The previous one is kept open until
    /// it is synced or no longer needed: logs numbered below `min_live_log` (the manifest's
    /// log number) are closed at once, their writes being in tables.
    pub(crate) fn start(&mut self, number: u64, log: LogWriter, min_live_log: u64) {
        if let Some(previous) = self.current.replace((number, log)) {
            self.older.push(previous);
        }
        self.forget_flushed(min_live_log);
        self.dir_synced = false;
    }

    /// Whether a log is open.
    pub(crate) fn is_open(&self) -> bool {
        self.current.is_some()
    }

    /// Appends one record, written into a buffer by `encode`, to the current log and hands it
    /// to the operating system.
    pub(crate) fn append_with(&mut self, encode: impl FnOnce(&mut Vec<u8>)) -> Result<()> {
        let mut record = std::mem::take(&mut self.record);
        encode(&mut record);
        let result = self.current_log().and_then(|log| log.add_record(&record));
        self.record = record;
        result
    }

    /// Makes every record appended so far, in every log, durable. Logs numbered below
    /// `min_live_log` hold nothing the tables lack: they are closed without a sync.
    pub(crate) fn sync(&mut self, env: &dyn Env, dir: &Path, min_live_log: u64) -> Result<()> {
        self.current_log()?;
        self.forget_flushed(min_live_log);
        while let Some((_, log)) = self.older.first_mut() {
            log.sync()?;
            log.close()?;
            self.older.remove(0);
        }
        if !self.dir_synced {
            env.sync_dir(dir)?;
            self.dir_synced = true;
        }
        self.current_log()?.sync()
    }

    /// Closes the older logs numbered below `min_live_log`, without syncing them, off this
    /// thread.
    pub(crate) fn forget_flushed(&mut self, min_live_log: u64) {
        let (flushed, live): (Vec<_>, Vec<_>) = std::mem::take(&mut self.older)
            .into_iter()
            .partition(|(number, _)| *number < min_live_log);
        self.older = live;
        for (_, log) in flushed {
            self.closer.close(log);
        }
    }

    /// Bytes written to log `number`, if it is open here. A log written through a memory map
    /// is longer on disk (zeros up to its block's end) until it is closed.
    pub(crate) fn written_len(&self, number: u64) -> Option<u64> {
        self.current
            .iter()
            .chain(&self.older)
            .find(|(n, _)| *n == number)
            .map(|(_, log)| log.file_len())
    }

    /// Closes every log (without syncing, as a clean close of LevelDB does).
    pub(crate) fn close(&mut self) {
        for (_, mut log) in self.older.drain(..) {
            let _ = log.close();
        }
        if let Some((_, mut log)) = self.current.take() {
            let _ = log.close();
        }
        self.closer.finish();
    }

    fn current_log(&mut self) -> Result<&mut LogWriter> {
        self.current
            .as_mut()
            .map(|(_, log)| log)
            .ok_or_else(|| Error::InvalidArgument("database is closed".into()))
    }
}
