//! Appending values to value files (layout in `vlog/mod.rs`).
//!
//! Thread safety: not shared; the database keeps one writer per lane (`vlog::Lane`), each
//! behind a mutex. The writer never allocates file numbers (the caller does, under the
//! database's state mutex, without holding this writer's): [`ValueFileWriter::needs_file`]
//! says when [`ValueFileWriter::start`] must be called before the next append. A writer starts
//! files in increasing number order, so a file it creates later always has a higher number
//! than its current one.
//!
//! Files in use: the current file, and every file an append went to whose pointers have not
//! reached a memtable (or, for relocated values, a table) yet ([`ValueFileWriter::in_use`];
//! the caller reports each such append done with [`ValueFileWriter::done`]). Garbage
//! collection deletes neither, and counts the bytes of those appends
//! ([`ValueFileWriter::pending_bytes`]) as live, not as garbage.
//!
//! Handing appends to the operating system ([`Handoff`]): a writer made with
//! `Handoff::Immediate` (the writes' lane) writes each append out before it returns, so a
//! reader can read the value as soon as its pointer is published. One made with
//! `Handoff::Batched` (the relocations' lane, whose values nobody reads before a sync makes
//! them durable: see `db/value_files.rs`) leaves appends in the file's buffer, written out as
//! it fills, when the file is retired, and at a writeback request or a sync. Its count of the
//! current file's bytes ([`ValueFileWriter::current`]) includes them; the file's size on disk
//! may not yet.
//!
//! Durability: a file replaced by the next one is *retired* (its buffer written out), not
//! synced there: the write that filled it does not wait for the disk. A sync makes every
//! append so far durable (with the directory entries of new files): the retired files up to
//! the file current when it began, which [`ValueFileWriter::take_retired`] hands out to be
//! synced without this writer's lock (a caller claims durability only once none of those is
//! left or being synced: `db/value_files.rs`'s `sync`), then that file if it is still the
//! current one ([`ValueFileWriter::sync_current`]). Files started later hold only later
//! appends: a sync does not chase them (relocation appends without the log's mutex a synced
//! write holds, and could retire file after file).
//! A `Handoff::Batched` writer also asks the operating system, each [`WRITEBACK_EVERY`] bytes
//! appended to a file, to start writing them to the device ([`WritableFile::start_writeback`]),
//! so the sync that follows waits for the rest only. That makes nothing durable sooner than
//! the sync.
//! After a failed append, write of the buffer or sync (or the flush a writeback request makes)
//! the file's tail is unknown, and values appended before may never become durable: the writer
//! then fails every later call with that error (as the database fails every write after a
//! failed log write), so nothing can claim those values durable.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use super::{encode_record, StoredValue, ValuePointer};
use crate::env::{Env, WritableFile};
use crate::error::{Error, Result};
use crate::filename::value_file_name;

/// Bytes appended to a value file between requests to start their writeback.
pub(crate) const WRITEBACK_EVERY: u64 = 1 << 20;

/// How a writer hands its appends to the operating system; see the module documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Handoff {
    /// Each append is written out before it returns.
    Immediate,
    /// Appends gather in the file's buffer, and writeback is started as the file grows.
    Batched,
}

/// The value file being appended to, or a retired one.
struct Current {
    number: u64,
    file: Box<dyn WritableFile>,
    /// Bytes in the file.
    len: u64,
    /// Appends since the last sync.
    dirty: bool,
    /// Bytes appended since writeback was last started (or the file created).
    since_writeback: u64,
    /// Whether the file's directory entry is durable.
    dir_synced: bool,
}

impl Current {
    /// Closes the file once its appends are synced: closing then loses nothing, whatever it
    /// reports.
    fn close_synced(mut self) {
        let _ = self.file.close();
    }
}

/// A file's appends whose pointers are not in a memtable yet.
#[derive(Default)]
struct Pending {
    appends: usize,
    bytes: u64,
}

/// Appends records to the current value file; see the module documentation.
pub(crate) struct ValueFileWriter {
    current: Option<Current>,
    /// Files replaced by the next one with appends or a directory entry not yet synced.
    retired: Vec<Current>,
    /// The numbers of the retired files handed out by [`ValueFileWriter::take_retired`] and
    /// not yet reported synced.
    retired_syncing: Vec<u64>,
    /// A file is replaced once it holds this many bytes.
    file_size: u64,
    /// Appends per file whose pointers are not in a memtable yet.
    pending: HashMap<u64, Pending>,
    /// The records of one append (kept to reuse its allocation).
    buffer: Vec<u8>,
    /// The first failed append (its writeback request included) or sync: every later call
    /// fails with it.
    failed: Option<Error>,
    /// Files garbage collection would have closed or collected but for appends not in a
    /// memtable yet: [`ValueFileWriter::done`] says when the last one of each is.
    wanted: HashSet<u64>,
    /// How appends reach the operating system.
    handoff: Handoff,
}

impl ValueFileWriter {
    /// A writer whose files are replaced once they hold `file_size` bytes, handing its appends
    /// to the operating system as `handoff` says (see the module documentation).
    pub(crate) fn new(file_size: u64, handoff: Handoff) -> ValueFileWriter {
        ValueFileWriter {
            current: None,
            retired: Vec::new(),
            retired_syncing: Vec::new(),
            file_size,
            pending: HashMap::new(),
            buffer: Vec::new(),
            failed: None,
            wanted: HashSet::new(),
            handoff,
        }
    }

    /// Cuts files at `file_size` bytes from now on (garbage collection sizes them).
    pub(crate) fn set_file_size(&mut self, file_size: u64) {
        self.file_size = file_size;
    }

    /// How this writer hands its appends to the operating system.
    #[cfg(test)]
    pub(crate) fn handoff(&self) -> Handoff {
        self.handoff
    }

    /// The size files are cut at now.
    pub(crate) fn file_size(&self) -> u64 {
        self.file_size
    }

    /// True when the next append needs a new file: none is open, or the current one is full.
    pub(crate) fn needs_file(&self) -> bool {
        self.current
            .as_ref()
            .is_none_or(|current| current.len >= self.file_size)
    }

    /// Whether file `number` is being appended to or has appends not yet in a memtable.
    pub(crate) fn in_use(&self, number: u64) -> bool {
        self.current.as_ref().is_some_and(|c| c.number == number)
            || self.pending.contains_key(&number)
    }

    /// Record bytes appended to file `number` whose pointers are not in a memtable yet.
    pub(crate) fn pending_bytes(&self, number: u64) -> u64 {
        self.pending.get(&number).map_or(0, |p| p.bytes)
    }

    /// Notes that garbage collection wants file `number` once nothing is pending in it
    /// (see [`ValueFileWriter::done`]).
    pub(crate) fn want_when_done(&mut self, number: u64) {
        self.wanted.insert(number);
    }

    /// Reports that the pointers of one append of `bytes` record bytes to file `number`
    /// reached a memtable, or never will (the write failed). True when that was the last
    /// append pending in a file [`ValueFileWriter::want_when_done`] named: garbage collection
    /// should look again (nothing else may run it once writes stop).
    pub(crate) fn done(&mut self, number: u64, bytes: u64) -> bool {
        let Some(pending) = self.pending.get_mut(&number) else {
            // Reported to the wrong lane's writer: the file would stay in use for ever.
            debug_assert!(false, "value file {number} has no append pending");
            return false;
        };
        pending.appends -= 1;
        pending.bytes = pending.bytes.saturating_sub(bytes);
        if pending.appends > 0 {
            return false;
        }
        self.pending.remove(&number);
        self.wanted.remove(&number)
    }

    /// Retires the current file, if any (see the module documentation), and creates file
    /// `number` to append to. A number not above the current file's is not used (files start
    /// in number order).
    pub(crate) fn start(&mut self, env: &dyn Env, dir: &Path, number: u64) -> Result<()> {
        self.check()?;
        if self.current.as_ref().is_some_and(|c| c.number >= number) {
            return Ok(());
        }
        if let Some(old) = self.current.as_mut() {
            // Written out, so that only the current file's size on disk can lag its appends.
            if let Err(e) = old.file.flush() {
                self.failed = Some(e.clone());
                return Err(e);
            }
        }
        if let Some(old) = self.current.take() {
            if old.dirty || !old.dir_synced {
                self.retired.push(old);
            } else {
                old.close_synced();
            }
        }
        let file = env.new_writable_file(&value_file_name(dir, number))?;
        self.current = Some(Current {
            number,
            file,
            len: 0,
            dirty: false,
            since_writeback: 0,
            dir_synced: false,
        });
        Ok(())
    }

    /// The current file's number and length, if one is open.
    pub(crate) fn current(&self) -> Option<(u64, u64)> {
        self.current.as_ref().map(|c| (c.number, c.len))
    }

    /// Syncs and closes the current file, so the next append starts a new one and the closed
    /// file can be collected once nothing pending points into it.
    pub(crate) fn close_current(&mut self, env: &dyn Env, dir: &Path) -> Result<()> {
        self.sync_current(env, dir, u64::MAX)?;
        if let Some(old) = self.current.take() {
            old.close_synced();
        }
        Ok(())
    }

    /// Appends one record per `(key, value)` in one piece (handed to the operating system as
    /// the writer's [`Handoff`] says), and returns their pointers in order and the bytes
    /// written; the file is in use until [`ValueFileWriter::done`] is called for it. Requires
    /// a file (see [`ValueFileWriter::needs_file`]).
    pub(crate) fn append<'a>(
        &mut self,
        entries: impl IntoIterator<Item = (&'a [u8], StoredValue<'a>)>,
    ) -> Result<(Vec<ValuePointer>, u64)> {
        self.check()?;
        let Some(current) = self.current.as_mut() else {
            return Err(Error::InvalidArgument(
                "no value file is open to append to".into(),
            ));
        };
        self.buffer.clear();
        let mut pointers = Vec::new();
        for (key, value) in entries {
            let offset = current.len + self.buffer.len() as u64;
            let crc = encode_record(&mut self.buffer, key, value.bytes);
            let stored = value.bytes.len() as u32;
            pointers.push(ValuePointer {
                file: current.number,
                offset,
                length: value.raw_len.unwrap_or(stored),
                crc,
                stored: value.raw_len.map(|_| stored),
            });
        }
        let written = self.buffer.len() as u64;
        let batched = self.handoff == Handoff::Batched;
        let writeback = batched && current.since_writeback + written >= WRITEBACK_EVERY;
        let done = current.file.append(&self.buffer).and_then(|()| {
            if writeback {
                current.file.start_writeback()
            } else if batched {
                Ok(())
            } else {
                current.file.flush()
            }
        });
        if let Err(e) = done {
            self.failed = Some(e.clone());
            return Err(e);
        }
        current.len += written;
        current.dirty |= written > 0;
        current.since_writeback = if writeback {
            0
        } else {
            current.since_writeback + written
        };
        let pending = self.pending.entry(current.number).or_default();
        pending.appends += 1;
        pending.bytes += written;
        Ok((pointers, written))
    }

    /// The retired files numbered up to `up_to`, to be synced by the caller without this
    /// writer's lock ([`Retired::sync`]), who then reports the outcome
    /// ([`ValueFileWriter::retired_synced`]); `None` when there are none.
    pub(crate) fn take_retired(&mut self, up_to: u64) -> Result<Option<Retired>> {
        self.check()?;
        if !self.retired.iter().any(|f| f.number <= up_to) {
            return Ok(None);
        }
        let (files, later): (Vec<_>, Vec<_>) = std::mem::take(&mut self.retired)
            .into_iter()
            .partition(|f| f.number <= up_to);
        self.retired = later;
        self.retired_syncing.extend(files.iter().map(|f| f.number));
        Ok(Some(Retired(files)))
    }

    /// Whether retired files numbered up to `up_to` handed out are still being synced.
    pub(crate) fn retired_syncing(&self, up_to: u64) -> bool {
        self.retired_syncing.iter().any(|&number| number <= up_to)
    }

    /// Reports how syncing the retired files `files` handed out ended; a failure fails the
    /// writer (see the module documentation).
    pub(crate) fn retired_synced(&mut self, files: &[u64], synced: &Result<()>) {
        self.retired_syncing
            .retain(|number| !files.contains(number));
        if let Err(e) = synced {
            self.failed.get_or_insert_with(|| e.clone());
        }
    }

    /// Makes every append to the current file durable, with its directory entry, when it is
    /// numbered up to `up_to` (a later one holds only appends made after a sync began). Retired
    /// files are left to [`ValueFileWriter::take_retired`].
    pub(crate) fn sync_current(&mut self, env: &dyn Env, dir: &Path, up_to: u64) -> Result<()> {
        self.check()?;
        let Some(current) = self.current.as_mut().filter(|c| c.number <= up_to) else {
            return Ok(());
        };
        let mut synced = Ok(());
        if current.dirty {
            synced = current.file.sync();
        }
        if synced.is_ok() && !current.dir_synced {
            synced = env.sync_dir(dir);
            current.dir_synced = synced.is_ok();
        }
        match synced {
            Ok(()) => {
                current.dirty = false;
                Ok(())
            }
            Err(e) => {
                self.failed = Some(e.clone());
                Err(e)
            }
        }
    }

    /// Writes out the appends the current file holds in its buffer (retired files were written
    /// out as they retired), when the database closes. A failure is ignored: nothing claims
    /// those values durable without a sync, which would report it.
    pub(crate) fn write_out(&mut self) {
        if let Some(current) = self.current.as_mut() {
            let _ = current.file.flush();
        }
    }

    /// Whether an append (its writeback request included) or sync failed: every later call
    /// fails.
    pub(crate) fn has_failed(&self) -> bool {
        self.failed.is_some()
    }

    /// The error of an earlier failed append or sync, if any.
    fn check(&self) -> Result<()> {
        match &self.failed {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }
}

/// Retired value files handed out to be synced ([`ValueFileWriter::take_retired`]).
pub(crate) struct Retired(Vec<Current>);

impl Retired {
    /// The files' numbers.
    pub(crate) fn numbers(&self) -> Vec<u64> {
        self.0.iter().map(|f| f.number).collect()
    }

    /// Syncs each file's appends and then the directory (when a file's entry is not synced
    /// yet), and closes them.
    pub(crate) fn sync(self, env: &dyn Env, dir: &Path) -> Result<()> {
        let mut dir_needed = false;
        for mut retired in self.0 {
            if retired.dirty {
                retired.file.sync()?;
            }
            dir_needed |= !retired.dir_synced;
            retired.close_synced();
        }
        if dir_needed {
            env.sync_dir(dir)?;
        }
        Ok(())
    }
}
