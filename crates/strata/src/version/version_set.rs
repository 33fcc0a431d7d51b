//! The version set: the current version, the file-number and sequence counters, and the
//! manifest that makes every change to them durable.
//!
//! Contract:
//! - The manifest is a log (see `log/`) of version edits. Replaying it from the start gives the
//!   current version; `CURRENT` names the live manifest.
//! - A change is applied in three steps so the DB mutex is not held over manifest I/O:
//!   [`VersionSet::prepare`] (under the mutex: build the new version and encode the record),
//!   [`ManifestWrite::write`] (unlocked: append and sync, maybe start a new manifest and point
//!   `CURRENT` at it; `version/manifest.rs`), [`VersionSet::install`] (under the mutex again). Only one change is in
//!   flight at a time: the caller guarantees it (the database's edit turn, `db/edits.rs`, or
//!   open before the background threads start). Each change is built on the version the
//!   previous one installed, and may delete only files that version holds.
//! - A new version is installed only after its edit is durable, so a crash at any point leaves
//!   `CURRENT` naming a manifest that describes files which all exist. Files are created
//!   without syncing the directory: before an edit is appended to a manifest, the directory
//!   is synced, so the edit is never durable before the names of the files it names (tables,
//!   a new log) are.
//! - If replacing `CURRENT` fails after the rename, the new manifest stays: `CURRENT` may name
//!   it.
//!
//! Thread safety: lives inside the DB mutex; `Version`s it hands out are immutable `Arc`s.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};

use super::builder::VersionBuilder;
use super::edit::VersionEdit;
use super::follow::ManifestFollower;
use super::manifest::{ManifestWrite, MAX_MANIFEST_SIZE};
use super::policy::set_compaction_score;
use super::recover::ReadManifest;
use super::version::Version;
use super::NUM_LEVELS;
use crate::env::Env;
use crate::error::{Error, Result};
use crate::extension::Extensions;
use crate::log::LogWriter;
use crate::util::internal_key::{InternalKeyComparator, SequenceNumber};

/// What the version set needs of the database's options.
#[derive(Clone)]
pub(crate) struct VersionSetOptions {
    /// The file system the manifest and `CURRENT` live on.
    pub(crate) env: Arc<dyn Env>,
    /// Fail recovery on a damaged last manifest edit instead of skipping it.
    pub(crate) paranoid_checks: bool,
    /// Append to the recovered manifest instead of starting a new one, when it ends cleanly
    /// and is smaller than `max_file_size`.
    pub(crate) reuse_logs: bool,
    /// Target size of a table: bounds compaction outputs and their overlap with the level
    /// below, and a manifest that may be reused.
    pub(crate) max_file_size: u64,
    /// The format extensions the database is opened with: recorded in every new manifest
    /// (see `extension.rs`).
    pub(crate) extensions: Extensions,
}

/// The version set. See the module documentation.
pub(crate) struct VersionSet {
    dir: PathBuf,
    env: Arc<dyn Env>,
    icmp: InternalKeyComparator,
    pub(crate) options: VersionSetOptions,
    pub(crate) next_file_number: u64,
    pub(crate) manifest_file_number: u64,
    manifest_size: u64,
    /// The last sequence number used by a write.
    pub(crate) last_sequence: SequenceNumber,
    /// The last sequence the manifest records: every write up to it is in the tables, every
    /// later one in the logs from `log_number` on (see `db/wal.rs`). Edits that do not set
    /// their own record this again.
    recorded_sequence: SequenceNumber,
    pub(crate) log_number: u64,
    pub(crate) prev_log_number: u64,
    /// The open manifest; `None` until the first edit after open creates one (or while an edit
    /// is being written, when the writer is lent to the [`ManifestWrite`]).
    manifest: Option<LogWriter>,
    current: Arc<Version>,
    /// Every version handed out, so files they use are not deleted while they live.
    live: Vec<Weak<Version>>,
    /// Per level, the largest key compacted last time: the next compaction starts after it.
    pub(crate) compact_pointers: [Vec<u8>; NUM_LEVELS],
    /// The format extensions the live manifest records: what the logs and tables it covers may
    /// hold. Equal to `options.extensions` once a manifest written by this handle is live.
    recorded_extensions: Extensions,
}

/// What [`VersionSet::recover`] found besides the state it installed.
pub(crate) struct Recovered {
    /// A new manifest must be written: the old one is not appended to (`reuse_logs` is off,
    /// or the manifest is too large or does not end cleanly).
    pub(crate) save_manifest: bool,
    /// Damage skipped at the manifest's end (a torn last edit), for the info log.
    pub(crate) damaged_tail: Option<Error>,
}

impl VersionSet {
    pub(crate) fn new(
        dir: &Path,
        options: VersionSetOptions,
        icmp: InternalKeyComparator,
    ) -> VersionSet {
        let current = Arc::new(Version::new(icmp.clone(), Default::default()));
        VersionSet {
            dir: dir.to_path_buf(),
            env: Arc::clone(&options.env),
            icmp,
            options,
            next_file_number: 2,
            manifest_file_number: 0,
            manifest_size: 0,
            last_sequence: 0,
            recorded_sequence: 0,
            log_number: 0,
            prev_log_number: 0,
            manifest: None,
            live: vec![Arc::downgrade(&current)],
            current,
            compact_pointers: Default::default(),
            recorded_extensions: Extensions::NONE,
        }
    }

    /// A version set in memory whose current version is `version` (its compaction score
    /// set), with tables cut at `max_file_size`: for tests of what reads it.
    #[cfg(test)]
    pub(crate) fn with_version(mut version: Version, max_file_size: u64) -> VersionSet {
        set_compaction_score(&mut version);
        let options = VersionSetOptions {
            env: Arc::new(crate::env::MemEnv::new()),
            paranoid_checks: false,
            reuse_logs: false,
            max_file_size,
            extensions: Extensions::NONE,
        };
        let mut vset = VersionSet::new(Path::new("/db"), options, version.icmp().clone());
        vset.install_version(Arc::new(version));
        vset
    }

    pub(crate) fn current(&self) -> &Arc<Version> {
        &self.current
    }

    pub(crate) fn new_file_number(&mut self) -> u64 {
        let number = self.next_file_number;
        self.next_file_number += 1;
        number
    }

    /// Gives back a number taken by [`VersionSet::new_file_number`] and not used, if it is
    /// still the latest one.
    pub(crate) fn reuse_file_number(&mut self, number: u64) {
        if self.next_file_number == number + 1 {
            self.next_file_number = number;
        }
    }

    pub(crate) fn mark_file_number_used(&mut self, number: u64) {
        if self.next_file_number <= number {
            self.next_file_number = number + 1;
        }
    }

    /// Numbers of every table referenced by any version still alive.
    pub(crate) fn live_files(&mut self) -> std::collections::HashSet<u64> {
        self.live.retain(|v| v.strong_count() > 0);
        let mut live = std::collections::HashSet::new();
        for version in self.live.iter().filter_map(Weak::upgrade) {
            for files in &version.files {
                live.extend(files.iter().map(|f| f.number()));
            }
        }
        live
    }

    /// Reads `CURRENT` and the manifest it names, and makes their state current (see
    /// `version/recover.rs` for what is checked and what damage is skipped).
    pub(crate) fn recover(&mut self) -> Result<Recovered> {
        let state = ReadManifest {
            env: &*self.env,
            dir: &self.dir,
            comparator: self.icmp.user_comparator().name(),
            extensions: self.options.extensions,
            paranoid_checks: self.options.paranoid_checks,
            base: &self.current,
        }
        .read()?;
        self.install_version(state.version);
        self.next_file_number = state.next_file_number;
        self.mark_file_number_used(state.log_number);
        self.mark_file_number_used(state.prev_log_number);
        self.log_number = state.log_number;
        self.prev_log_number = state.prev_log_number;
        self.last_sequence = state.last_sequence;
        self.recorded_sequence = state.last_sequence;
        self.compact_pointers = state.compact_pointers;
        self.manifest_file_number = state.manifest_number;
        self.mark_file_number_used(state.manifest_number);
        self.recorded_extensions = state.extensions;

        let mut save_manifest = true;
        // A manifest that does not record the extensions enabled now is not appended to: the
        // marker goes in a new manifest's first edit, where LevelDB checks it.
        let marker_current = state.extensions == self.options.extensions;
        if self.options.reuse_logs && state.damaged_tail.is_none() && marker_current {
            let size = self.env.file_size(&state.manifest_path)?;
            // Appending behind a torn last record would hide every later edit from readers.
            if size == state.clean_end && size < MAX_MANIFEST_SIZE.min(self.options.max_file_size) {
                let file = self.env.new_appendable_file(&state.manifest_path)?;
                self.manifest = Some(LogWriter::with_offset(file, size));
                self.manifest_size = size;
                save_manifest = false;
            }
        }
        Ok(Recovered {
            save_manifest,
            damaged_tail: state.damaged_tail,
        })
    }

    /// Makes what `followed` read of a manifest another process writes the current state:
    /// its version and counters (the last sequence it records becomes the recorded one; the
    /// last sequence used is the caller's). For a read-only handle, which writes no manifest.
    pub(crate) fn adopt(&mut self, followed: &ManifestFollower) {
        let state = followed.state();
        if !Arc::ptr_eq(&state.version, &self.current) {
            self.install_version(Arc::clone(&state.version));
        }
        self.next_file_number = state.next_file_number;
        self.log_number = state.log_number;
        self.prev_log_number = state.prev_log_number;
        self.recorded_sequence = state.last_sequence;
        self.compact_pointers.clone_from(&state.compact_pointers);
        self.manifest_file_number = state.manifest_number;
        self.recorded_extensions = state.extensions;
    }

    /// The last sequence the manifest records (see `recorded_sequence`).
    pub(crate) fn recorded_sequence(&self) -> SequenceNumber {
        self.recorded_sequence
    }

    /// Step 1 of applying `edit`: fills in the counters, builds the new version and encodes the
    /// record. Call with the DB mutex held.
    pub(crate) fn prepare(&mut self, edit: &mut VersionEdit) -> Result<ManifestWrite> {
        if let Some(log) = edit.log_number {
            debug_assert!(log >= self.log_number && log < self.next_file_number);
        } else {
            edit.log_number = Some(self.log_number);
        }
        if edit.prev_log_number.is_none() {
            edit.prev_log_number = Some(self.prev_log_number);
        }
        edit.next_file_number = Some(self.next_file_number);
        edit.last_sequence.get_or_insert(self.recorded_sequence);
        // Compactions run side by side take disjoint inputs: a deletion of a file the current
        // version lacks would mean two took one file (a bug), and installing it would lose
        // the other's outputs' data.
        for &(level, number) in &edit.deleted_files {
            let present = self
                .current
                .files
                .get(level)
                .is_some_and(|files| files.iter().any(|f| f.number() == number));
            if !present {
                return Err(Error::corruption(format!(
                    "an edit deletes table {number} from level {level}, which does not hold it"
                )));
            }
        }

        let mut builder = VersionBuilder::new(&self.current);
        builder.apply(edit);
        let mut version = builder.build()?;
        set_compaction_score(&mut version);

        let mut new_manifest = None;
        if self.manifest.is_none() || self.manifest_size >= MAX_MANIFEST_SIZE {
            let number = self.new_file_number();
            edit.next_file_number = Some(self.next_file_number);
            let mut snapshot = Vec::new();
            self.snapshot_edit().encode(&mut snapshot);
            new_manifest = Some((number, snapshot));
        }
        let mut record = Vec::new();
        edit.encode(&mut record);
        Ok(ManifestWrite {
            version,
            record,
            writer: if new_manifest.is_some() {
                None
            } else {
                self.manifest.take()
            },
            new_manifest,
            dir: self.dir.clone(),
            env: Arc::clone(&self.env),
        })
    }

    /// Step 3: makes the written edit's version current. Call with the DB mutex held.
    pub(crate) fn install(&mut self, mut write: ManifestWrite, edit: &VersionEdit) {
        if let Some((number, _)) = write.new_manifest {
            self.manifest_file_number = number;
            self.recorded_extensions = self.options.extensions;
        }
        self.manifest = write.writer.take();
        self.manifest_size = self.manifest.as_ref().map_or(0, LogWriter::file_len);
        if let Some(log) = edit.log_number {
            self.log_number = log;
        }
        if let Some(prev) = edit.prev_log_number {
            self.prev_log_number = prev;
        }
        if let Some(sequence) = edit.last_sequence {
            self.recorded_sequence = sequence;
        }
        self.install_version(Arc::new(write.version));
    }

    /// Moves the compact pointers to where `edit` (a compaction's, as it starts) says the
    /// next compaction of each level begins. Done when a compaction starts, not when its edit
    /// is installed: compactions of one level in flight together finish in any order, and an
    /// earlier one must not move the pointer back.
    pub(crate) fn record_compact_pointers(&mut self, edit: &VersionEdit) {
        for (level, key) in &edit.compact_pointers {
            if let Some(slot) = self.compact_pointers.get_mut(*level) {
                slot.clone_from(key);
            }
        }
    }

    /// Returns the manifest writer lent to a failed write, so later edits append to it (or,
    /// if it may be damaged, start a new manifest).
    pub(crate) fn abandon(&mut self, mut write: ManifestWrite, writer_ok: bool) {
        if write.new_manifest.is_none() && writer_ok {
            self.manifest = write.writer.take();
        }
    }

    fn install_version(&mut self, version: Arc<Version>) {
        self.live.retain(|v| v.strong_count() > 0);
        self.live.push(Arc::downgrade(&version));
        self.current = version;
    }

    /// An edit that recreates the current state from nothing: the first record of a manifest
    /// (and of a checkpoint's).
    pub(crate) fn snapshot_edit(&self) -> VersionEdit {
        let mut edit = VersionEdit {
            comparator: Some(
                self.options
                    .extensions
                    .recorded_name(self.icmp.user_comparator().name()),
            ),
            ..VersionEdit::default()
        };
        for (level, key) in self.compact_pointers.iter().enumerate() {
            if !key.is_empty() {
                edit.compact_pointers.push((level, key.clone()));
            }
        }
        for (level, files) in self.current.files.iter().enumerate() {
            for f in files {
                edit.new_files.push((level, f.meta.clone()));
            }
        }
        edit
    }

    /// The format extensions the live manifest records (what its logs and tables may hold).
    pub(crate) fn recorded_extensions(&self) -> Extensions {
        self.recorded_extensions
    }

    /// The comparator name the live manifest records: the user comparator's, marked with
    /// [`VersionSet::recorded_extensions`] (what a copy of this state must record).
    pub(crate) fn recorded_comparator(&self) -> String {
        self.recorded_extensions
            .recorded_name(self.icmp.user_comparator().name())
    }

    /// Total bytes in each level of the current version.
    pub(crate) fn level_summary(&self) -> String {
        let counts: Vec<String> = (0..NUM_LEVELS)
            .map(|l| self.current.num_files(l).to_string())
            .collect();
        format!("files[ {} ]", counts.join(" "))
    }

    /// Approximate byte offset of `ikey` in the whole database, as laid out in `version`.
    pub(crate) fn approximate_offset_of(
        version: &Version,
        ikey: &[u8],
        table_cache: &crate::version::table_cache::TableCache,
    ) -> u64 {
        let icmp = version.icmp();
        let mut result = 0;
        for (level, files) in version.files.iter().enumerate() {
            for f in files {
                if icmp.compare(&f.meta.largest, ikey) != std::cmp::Ordering::Greater {
                    result = f.meta.file_size.saturating_add(result);
                } else if icmp.compare(&f.meta.smallest, ikey) == std::cmp::Ordering::Greater {
                    if level > 0 {
                        break; // sorted: later files are past the key too
                    }
                } else if let Ok(table) = table_cache.find_table(f.number(), f.meta.file_size) {
                    result += table.approximate_offset_of(ikey);
                }
            }
        }
        result
    }
}
