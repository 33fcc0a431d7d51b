//! The version set: the current version, the file-number and sequence counters, and the
//! manifest that makes every change to them durable.
//!
//! Contract:
//! - The manifest is a log (see `log/`) of version edits. Replaying it from the start gives the
//!   current version; `CURRENT` names the live manifest.
//! - A change is applied in three steps so the DB mutex is not held over manifest I/O:
//!   [`VersionSet::prepare`] (under the mutex: build the new version and encode the record),
//!   [`ManifestWrite::write`] (unlocked: append and sync, maybe start a new manifest and point
//!   `CURRENT` at it), [`VersionSet::install`] (under the mutex again). Only one change is in
//!   flight at a time: the caller (the background worker, or open before it starts) guarantees
//!   it.
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
use super::version::{total_file_size, Version};
use super::NUM_LEVELS;
use crate::db::filename::{current_file_name, descriptor_file_name, temp_file_name};
use crate::env::{parent_dir, Env};
use crate::error::{Error, Result};
use crate::log::{LogReader, LogWriter, Reporter};
use crate::options::Options;
use crate::util::internal_key::{InternalKeyComparator, SequenceNumber, MAX_SEQUENCE};

/// Level-0 file count that triggers a compaction.
pub(crate) const L0_COMPACTION_TRIGGER: usize = 4;
/// Level-0 file count at which writes are slowed down by 1 ms each.
pub(crate) const L0_SLOWDOWN_WRITES_TRIGGER: usize = 8;
/// Level-0 file count at which writes stop until a compaction finishes.
pub(crate) const L0_STOP_WRITES_TRIGGER: usize = 12;
/// Deepest level a flushed memtable may be placed in when it overlaps nothing.
pub(crate) const MAX_MEM_COMPACT_LEVEL: usize = 2;
/// A manifest larger than this is replaced by a fresh one holding a snapshot.
const MAX_MANIFEST_SIZE: u64 = 64 << 20;
/// Largest file number a database uses: half the `u64` range, so counting up from any accepted
/// number never overflows. A larger number in a manifest or a file name is damage, not ours.
pub(crate) const MAX_FILE_NUMBER: u64 = u64::MAX / 2;

/// Byte budget of a level (>= 1): 10 MiB at level 1, ten times more per level below.
pub(crate) fn max_bytes_for_level(level: usize) -> f64 {
    let mut result = 10.0 * 1048576.0;
    for _ in 1..level {
        result *= 10.0;
    }
    result
}

/// The version set. See the module documentation.
pub(crate) struct VersionSet {
    dir: PathBuf,
    env: Arc<dyn Env>,
    icmp: InternalKeyComparator,
    pub(crate) options: Arc<Options>,
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
}

/// What [`VersionSet::recover`] found besides the state it installed.
pub(crate) struct Recovered {
    /// A new manifest must be written: the old one is not appended to (`reuse_logs` is off,
    /// or the manifest is too large or does not end cleanly).
    pub(crate) save_manifest: bool,
    /// Damage skipped at the manifest's end (a torn last edit), for the info log.
    pub(crate) damaged_tail: Option<Error>,
}

/// A version edit on its way to the manifest, prepared under the mutex.
pub(crate) struct ManifestWrite {
    version: Version,
    record: Vec<u8>,
    /// Set when a new manifest must be started: its number and the snapshot record it opens with.
    new_manifest: Option<(u64, Vec<u8>)>,
    writer: Option<LogWriter>,
    dir: PathBuf,
    env: Arc<dyn Env>,
}

/// Keeps the first damage and the first read error the manifest reader reports.
struct ManifestReporter {
    first_error: Arc<parking_lot::Mutex<Option<Error>>>,
    read_error: Arc<parking_lot::Mutex<Option<Error>>>,
}

impl Reporter for ManifestReporter {
    fn corruption(&mut self, _bytes: u64, reason: &Error) {
        // A read error is no damage on disk: the reader stops there, so what follows is
        // unknown and must never be taken for a torn tail.
        let slot = if reason.is_corruption() {
            &self.first_error
        } else {
            &self.read_error
        };
        slot.lock().get_or_insert_with(|| reason.clone());
    }
}

impl VersionSet {
    pub(crate) fn new(
        dir: &Path,
        options: Arc<Options>,
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
        }
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

    /// Reads `CURRENT` and the manifest it names, and makes their state current.
    ///
    /// Damage at the manifest's end, with no whole record after it, is what a crash in the
    /// middle of appending an edit leaves (the edit was never synced, so never installed, and
    /// nothing depends on it): it is skipped unless `paranoid_checks` is set, and reported in
    /// the result. Damage followed by whole records is corruption and fails.
    pub(crate) fn recover(&mut self) -> Result<Recovered> {
        let current_path = current_file_name(&self.dir);
        let current = crate::env::read_file_to_vec(&*self.env, &current_path)?;
        let name = match current.strip_suffix(b"\n") {
            Some(name) if !name.is_empty() && !name.contains(&b'/') => {
                String::from_utf8(name.to_vec()).map_err(|_| {
                    Error::corruption("CURRENT names a manifest that is not UTF-8")
                        .in_file(current_path.display())
                })?
            }
            _ => {
                return Err(
                    Error::corruption("CURRENT file does not end with a newline")
                        .in_file(current_path.display()),
                )
            }
        };
        let manifest_path = self.dir.join(&name);
        let file = self
            .env
            .new_sequential_file(&manifest_path)
            .map_err(|e| match e {
                Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                    Error::corruption(format!("CURRENT points to a non-existent file: {name}"))
                        .in_file(current_path.display())
                }
                other => other,
            })?;
        let first_error = Arc::new(parking_lot::Mutex::new(None));
        let read_error = Arc::new(parking_lot::Mutex::new(None));
        let reporter = ManifestReporter {
            first_error: Arc::clone(&first_error),
            read_error: Arc::clone(&read_error),
        };
        let mut reader = LogReader::new(file, Some(Box::new(reporter)), true, 0);

        let mut builder_edits = Vec::new();
        let mut log_number = None;
        let mut prev_log_number = None;
        let mut next_file = None;
        let mut last_sequence = None;
        let mut compact_pointers: [Vec<u8>; NUM_LEVELS] = Default::default();
        let mut scratch = Vec::new();
        while let Some(record) = reader.read_record(&mut scratch) {
            if let Some(error) = first_error.lock().take() {
                // A whole record after damage: the damage is not a torn last edit.
                return Err(error.in_file(manifest_path.display()));
            }
            let decoded = VersionEdit::decode(record);
            let offset = reader.last_record_offset();
            let edit = decoded.map_err(|e| e.offset_by(offset).in_file(manifest_path.display()))?;
            if let Some(cmp) = &edit.comparator {
                if cmp != self.icmp.user_comparator().name() {
                    return Err(Error::InvalidArgument(format!(
                        "{}: comparator {cmp:?} of the database does not match the comparator \
                         {:?} it is opened with",
                        self.dir.display(),
                        self.icmp.user_comparator().name()
                    )));
                }
            }
            log_number = edit.log_number.or(log_number);
            prev_log_number = edit.prev_log_number.or(prev_log_number);
            next_file = edit.next_file_number.or(next_file);
            last_sequence = edit.last_sequence.or(last_sequence);
            for (level, key) in &edit.compact_pointers {
                if let Some(slot) = compact_pointers.get_mut(*level) {
                    slot.clone_from(key);
                }
            }
            builder_edits.push(edit);
        }
        if let Some(error) = read_error.lock().take() {
            return Err(error.in_file(manifest_path.display()));
        }
        let damaged_tail = first_error
            .lock()
            .take()
            .map(|error| error.in_file(manifest_path.display()));
        if let Some(error) = damaged_tail
            .as_ref()
            .filter(|_| self.options.paranoid_checks)
        {
            return Err(error.clone());
        }
        let clean_end = reader.end_of_last_record();
        drop(reader);
        let missing = |what: &str| {
            Error::corruption(format!("no {what} entry in manifest"))
                .in_file(manifest_path.display())
        };
        let next_file = next_file.ok_or_else(|| missing("next-file-number"))?;
        let log_number = log_number.ok_or_else(|| missing("log-number"))?;
        let last_sequence = last_sequence.ok_or_else(|| missing("last-sequence"))?;
        if last_sequence > MAX_SEQUENCE {
            return Err(Error::corruption(format!(
                "last sequence {last_sequence} is past the largest sequence number {MAX_SEQUENCE}"
            ))
            .in_file(manifest_path.display()));
        }
        let prev_log_number = prev_log_number.unwrap_or(0);
        for (what, number) in [
            ("next file number", next_file),
            ("log number", log_number),
            ("previous log number", prev_log_number),
        ] {
            if number > MAX_FILE_NUMBER {
                return Err(Error::corruption(format!(
                    "{what} {number} is past the largest file number {MAX_FILE_NUMBER}"
                ))
                .in_file(manifest_path.display()));
            }
        }

        let mut builder = VersionBuilder::new(&self.current);
        for edit in &builder_edits {
            builder.apply(edit);
        }
        let mut version = builder
            .build()
            .map_err(|e| e.in_file(manifest_path.display()))?;
        finalize(&mut version);
        for files in &version.files {
            for f in files {
                if f.number() >= next_file {
                    return Err(Error::corruption(format!(
                        "table {} is numbered at or past the next file number {next_file}",
                        f.number()
                    ))
                    .in_file(manifest_path.display()));
                }
            }
        }

        self.install_version(version);
        self.next_file_number = next_file;
        self.mark_file_number_used(log_number);
        self.mark_file_number_used(prev_log_number);
        self.log_number = log_number;
        self.prev_log_number = prev_log_number;
        self.last_sequence = last_sequence;
        self.recorded_sequence = last_sequence;
        self.compact_pointers = compact_pointers;
        let manifest_number = crate::db::filename::parse_file_name(&name)
            .filter(|&(n, kind)| {
                kind == crate::db::filename::FileType::Descriptor && n <= MAX_FILE_NUMBER
            })
            .map(|(n, _)| n)
            .ok_or_else(|| {
                Error::corruption(format!("CURRENT names {name:?}, which is not a manifest"))
                    .in_file(current_path.display())
            })?;
        self.manifest_file_number = manifest_number;
        self.mark_file_number_used(manifest_number);

        let mut save_manifest = true;
        if self.options.reuse_logs && damaged_tail.is_none() {
            let size = self.env.file_size(&manifest_path)?;
            // Appending behind a torn last record would hide every later edit from readers.
            if size == clean_end && size < MAX_MANIFEST_SIZE.min(self.options.max_file_size as u64)
            {
                let file = self.env.new_appendable_file(&manifest_path)?;
                self.manifest = Some(LogWriter::with_offset(file, size));
                self.manifest_size = size;
                save_manifest = false;
            }
        }
        Ok(Recovered {
            save_manifest,
            damaged_tail,
        })
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

        let mut builder = VersionBuilder::new(&self.current);
        builder.apply(edit);
        let mut version = builder.build()?;
        finalize(&mut version);

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
        for (level, key) in &edit.compact_pointers {
            if let Some(slot) = self.compact_pointers.get_mut(*level) {
                slot.clone_from(key);
            }
        }
        self.install_version(write.version);
    }

    /// Returns the manifest writer lent to a failed write, so later edits append to it (or,
    /// if it may be damaged, start a new manifest).
    pub(crate) fn abandon(&mut self, mut write: ManifestWrite, writer_ok: bool) {
        if write.new_manifest.is_none() && writer_ok {
            self.manifest = write.writer.take();
        }
    }

    fn install_version(&mut self, version: Version) {
        let version = Arc::new(version);
        self.live.retain(|v| v.strong_count() > 0);
        self.live.push(Arc::downgrade(&version));
        self.current = version;
    }

    /// An edit that recreates the current state from nothing: the first record of a manifest.
    fn snapshot_edit(&self) -> VersionEdit {
        let mut edit = VersionEdit {
            comparator: Some(self.icmp.user_comparator().name().to_owned()),
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
        table_cache: &crate::cache::table_cache::TableCache,
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

impl ManifestWrite {
    /// Step 2: appends the edit (starting a new manifest first when asked) and syncs it.
    /// Call without the DB mutex.
    pub(crate) fn write(&mut self) -> Result<()> {
        let mut created = None;
        if let Some((number, snapshot)) = &self.new_manifest {
            let path = descriptor_file_name(&self.dir, *number);
            let file = self.env.new_writable_file(&path)?;
            created = Some(path);
            let mut writer = LogWriter::new(file);
            let result = writer.add_record(snapshot);
            self.writer = Some(writer);
            if let Err(e) = result {
                return Err(self.fail_new_manifest(created, e));
            }
        }
        let Some(writer) = self.writer.as_mut() else {
            return Err(Error::InvalidArgument("manifest writer is missing".into()));
        };
        if created.is_none() {
            // Files are created without syncing the directory: the entries of the tables and
            // log this edit names must be durable before the edit can be. (A new manifest gets
            // this from the directory sync in `set_current_file`, which comes after its edit.)
            self.env.sync_dir(&self.dir)?;
        }
        let result = writer.add_record(&self.record).and_then(|()| writer.sync());
        if let Err(e) = result {
            return Err(self.fail_new_manifest(created, e));
        }
        if let Some((number, _)) = &self.new_manifest {
            if let Err(failure) = set_current_file(&*self.env, &self.dir, *number) {
                // Once the rename happened `CURRENT` names the new manifest (durably or not):
                // removing it would leave `CURRENT` naming nothing.
                let created = created.filter(|_| !failure.renamed);
                return Err(self.fail_new_manifest(created, failure.error));
            }
        }
        Ok(())
    }

    fn fail_new_manifest(&mut self, created: Option<PathBuf>, error: Error) -> Error {
        if let Some(path) = created {
            self.writer = None;
            let _ = self.env.remove_file(&path);
        }
        error
    }
}

/// Why [`set_current_file`] failed.
#[derive(Debug)]
pub(crate) struct SetCurrentError {
    pub(crate) error: Error,
    /// The rename over `CURRENT` happened (only syncing the directory failed): `CURRENT` may
    /// name the new manifest now or after a crash, so the manifest must not be removed.
    pub(crate) renamed: bool,
}

/// Points `CURRENT` at `MANIFEST-<number>`: writes a temporary file, syncs it, renames it over
/// `CURRENT` and syncs the directory.
pub(crate) fn set_current_file(
    env: &dyn Env,
    dir: &Path,
    manifest_number: u64,
) -> std::result::Result<(), SetCurrentError> {
    let manifest = descriptor_file_name(dir, manifest_number);
    let name = manifest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = temp_file_name(dir, manifest_number);
    let contents = format!("{name}\n");
    let current = current_file_name(dir);
    let renamed = crate::env::write_file(env, &temp, contents.as_bytes(), true)
        .and_then(|()| env.rename(&temp, &current));
    if let Err(error) = renamed {
        let _ = env.remove_file(&temp);
        return Err(SetCurrentError {
            error,
            renamed: false,
        });
    }
    env.sync_dir(&parent_dir(&current))
        .map_err(|error| SetCurrentError {
            error,
            renamed: true,
        })
}

/// Computes which level most needs compaction, and how much.
pub(crate) fn finalize(version: &mut Version) {
    let mut best_level = 0;
    let mut best_score = -1.0;
    for level in 0..NUM_LEVELS - 1 {
        let score = if level == 0 {
            // Counted in files, not bytes: with small write buffers many small L0 files would
            // otherwise pile up, and every read must merge all of them.
            version.files[0].len() as f64 / L0_COMPACTION_TRIGGER as f64
        } else {
            total_file_size(&version.files[level]) as f64 / max_bytes_for_level(level)
        };
        if score > best_score {
            best_level = level;
            best_score = score;
        }
    }
    version.compaction_level = best_level;
    version.compaction_score = best_score;
}
