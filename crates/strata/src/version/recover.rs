//! Reading the manifest at open: `CURRENT`, the manifest it names, and the state its edits
//! replay to.
//!
//! Contract:
//! - `CURRENT` must be one manifest name and a newline; the manifest must exist. Anything else
//!   is a corruption naming `CURRENT`.
//! - Every edit is decoded and checked: the comparator it records must be the one the database
//!   is opened with (`InvalidArgument` otherwise); counters past [`MAX_FILE_NUMBER`] or
//!   [`MAX_SEQUENCE`], and tables numbered at or past the next file number, are corruptions
//!   naming the manifest.
//! - Damage at the manifest's end, with no whole record after it, is what a crash in the middle
//!   of appending an edit leaves (the edit was never synced, so never installed, and nothing
//!   depends on it): it is skipped unless `paranoid_checks` is set, and returned in
//!   [`ManifestState::damaged_tail`]. Damage followed by whole records is corruption and fails.
//!   A read error is never taken for a torn tail: it fails.
//! - A manifest another process is still appending to ends, at any moment, in whole edits and
//!   perhaps the first bytes of the next (a torn tail without damage): the read stops after the
//!   last whole edit and [`ManifestState::clean_end`] says where. [`ReadManifest::read_after`]
//!   later goes on from there with only the edits appended since, or reads the whole of a new
//!   manifest `CURRENT` has moved to.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use super::builder::VersionBuilder;
use super::edit::VersionEdit;
use super::policy::set_compaction_score;
use super::version::Version;
use super::NUM_LEVELS;
use crate::env::{read_file_to_vec, Env};
use crate::error::{Error, Result};
use crate::extension::{parse_recorded_name, Extensions};
use crate::filename::{current_file_name, parse_own_file_name, FileType, MAX_FILE_NUMBER};
use crate::log::{LogReader, Reporter};
use crate::util::internal_key::{SequenceNumber, MAX_SEQUENCE};

/// What the live manifest says, replayed from its first edit.
#[derive(Clone)]
pub(super) struct ManifestState {
    /// The tables of every level, scored for compaction.
    pub(super) version: Arc<Version>,
    pub(super) next_file_number: u64,
    pub(super) log_number: u64,
    pub(super) prev_log_number: u64,
    pub(super) last_sequence: SequenceNumber,
    pub(super) compact_pointers: [Vec<u8>; NUM_LEVELS],
    /// The manifest's number and path.
    pub(super) manifest_number: u64,
    pub(super) manifest_path: PathBuf,
    /// Where the last whole record ends: appending is safe only when the file ends there.
    pub(super) clean_end: u64,
    /// Damage skipped at the manifest's end (a torn last edit), for the info log.
    pub(super) damaged_tail: Option<Error>,
    /// The format extensions the manifest records (`extension.rs`).
    pub(super) extensions: Extensions,
}

/// How the manifest is read.
pub(super) struct ReadManifest<'a> {
    pub(super) env: &'a dyn Env,
    pub(super) dir: &'a Path,
    /// The name of the comparator the database is opened with.
    pub(super) comparator: &'a str,
    /// The format extensions the database is opened with: the manifest may record no other.
    pub(super) extensions: Extensions,
    /// Fail on a damaged last edit instead of skipping it.
    pub(super) paranoid_checks: bool,
    /// The empty version the edits are applied to.
    pub(super) base: &'a Arc<Version>,
}

/// Keeps the first damage and the first read error the manifest reader reports.
struct ManifestReporter {
    first_error: Arc<Mutex<Option<Error>>>,
    read_error: Arc<Mutex<Option<Error>>>,
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

/// The counters the edits set, the last value of each winning.
#[derive(Default)]
struct Counters {
    log_number: Option<u64>,
    prev_log_number: Option<u64>,
    next_file_number: Option<u64>,
    last_sequence: Option<SequenceNumber>,
}

/// Where replaying starts: a manifest's first edit, or the edits appended after those an
/// earlier read applied.
struct Start<'b> {
    /// File offset of the first edit to read.
    offset: u64,
    base: &'b Arc<Version>,
    counters: Counters,
    compact_pointers: [Vec<u8>; NUM_LEVELS],
    /// The format extensions the edits before `offset` record.
    extensions: Extensions,
}

impl ReadManifest<'_> {
    /// Reads `CURRENT` and the manifest it names (see the module documentation).
    pub(super) fn read(&self) -> Result<ManifestState> {
        let name = read_current(self.env, &current_file_name(self.dir))?;
        self.replay(&name, self.first_edit())
    }

    /// Reads what the manifest says now, when `previous` is what it said before: only the edits
    /// appended after `previous.clean_end` if `CURRENT` still names the same manifest, else the
    /// whole of the one it names now. With nothing appended, `previous` comes back as it was.
    pub(super) fn read_after(&self, previous: &ManifestState) -> Result<ManifestState> {
        let name = read_current(self.env, &current_file_name(self.dir))?;
        if self.dir.join(&name) != previous.manifest_path {
            return self.replay(&name, self.first_edit());
        }
        if previous.damaged_tail.is_none()
            && self.env.file_size(&previous.manifest_path)? == previous.clean_end
        {
            return Ok(previous.clone());
        }
        let start = Start {
            offset: previous.clean_end,
            base: &previous.version,
            counters: Counters {
                log_number: Some(previous.log_number),
                prev_log_number: Some(previous.prev_log_number),
                next_file_number: Some(previous.next_file_number),
                last_sequence: Some(previous.last_sequence),
            },
            compact_pointers: previous.compact_pointers.clone(),
            extensions: previous.extensions,
        };
        self.replay(&name, start)
    }

    fn first_edit(&self) -> Start<'_> {
        Start {
            offset: 0,
            base: self.base,
            counters: Counters::default(),
            compact_pointers: Default::default(),
            extensions: Extensions::NONE,
        }
    }

    /// Applies the edits of manifest `name` from `start` on.
    fn replay(&self, name: &str, start: Start<'_>) -> Result<ManifestState> {
        let current_path = current_file_name(self.dir);
        let manifest_path = self.dir.join(name);
        let in_manifest = |e: Error| e.in_file(manifest_path.display());
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
        let first_error = Arc::new(Mutex::new(None));
        let read_error = Arc::new(Mutex::new(None));
        let reporter = ManifestReporter {
            first_error: Arc::clone(&first_error),
            read_error: Arc::clone(&read_error),
        };
        let mut reader = LogReader::new(file, Some(Box::new(reporter)), true, start.offset);

        let mut builder = VersionBuilder::new(start.base);
        let mut counters = start.counters;
        let mut compact_pointers = start.compact_pointers;
        let mut scratch = Vec::new();
        let mut extensions = start.extensions;
        while let Some(record) = reader.read_record(&mut scratch) {
            if let Some(error) = first_error.lock().take() {
                // A whole record after damage: the damage is not a torn last edit.
                return Err(in_manifest(error));
            }
            let decoded = VersionEdit::decode(record);
            let offset = reader.last_record_offset();
            let edit = decoded.map_err(|e| in_manifest(e.offset_by(offset)))?;
            let recorded = self
                .check_comparator(&edit)
                .map_err(|e| in_manifest(e.offset_by(offset)))?;
            extensions = extensions.union(recorded);
            counters.log_number = edit.log_number.or(counters.log_number);
            counters.prev_log_number = edit.prev_log_number.or(counters.prev_log_number);
            counters.next_file_number = edit.next_file_number.or(counters.next_file_number);
            counters.last_sequence = edit.last_sequence.or(counters.last_sequence);
            for (level, key) in &edit.compact_pointers {
                if let Some(slot) = compact_pointers.get_mut(*level) {
                    slot.clone_from(key);
                }
            }
            builder.apply(&edit);
        }
        if let Some(error) = read_error.lock().take() {
            return Err(in_manifest(error));
        }
        let damaged_tail = first_error.lock().take().map(in_manifest);
        if let Some(error) = damaged_tail.as_ref().filter(|_| self.paranoid_checks) {
            return Err(error.clone());
        }
        // Nothing read leaves the read where it started.
        let clean_end = reader.end_of_last_record().max(start.offset);
        drop(reader);

        let missing =
            |what: &str| in_manifest(Error::corruption(format!("no {what} entry in manifest")));
        let next_file_number = counters
            .next_file_number
            .ok_or_else(|| missing("next-file-number"))?;
        let log_number = counters.log_number.ok_or_else(|| missing("log-number"))?;
        let last_sequence = counters
            .last_sequence
            .ok_or_else(|| missing("last-sequence"))?;
        if last_sequence > MAX_SEQUENCE {
            return Err(in_manifest(Error::corruption(format!(
                "last sequence {last_sequence} is past the largest sequence number {MAX_SEQUENCE}"
            ))));
        }
        let prev_log_number = counters.prev_log_number.unwrap_or(0);
        for (what, number) in [
            ("next file number", next_file_number),
            ("log number", log_number),
            ("previous log number", prev_log_number),
        ] {
            if number > MAX_FILE_NUMBER {
                return Err(in_manifest(Error::corruption(format!(
                    "{what} {number} is past the largest file number {MAX_FILE_NUMBER}"
                ))));
            }
        }

        let mut version = builder.build().map_err(in_manifest)?;
        set_compaction_score(&mut version);
        let version = Arc::new(version);
        if let Some(f) = version
            .files
            .iter()
            .flatten()
            .find(|f| f.number() >= next_file_number)
        {
            return Err(in_manifest(Error::corruption(format!(
                "table {} is numbered at or past the next file number {next_file_number}",
                f.number()
            ))));
        }
        let manifest_number = parse_own_file_name(name)
            .filter(|&(_, kind)| kind == FileType::Descriptor)
            .map(|(n, _)| n)
            .ok_or_else(|| {
                Error::corruption(format!("CURRENT names {name:?}, which is not a manifest"))
                    .in_file(current_path.display())
            })?;
        Ok(ManifestState {
            version,
            next_file_number,
            log_number,
            prev_log_number,
            last_sequence,
            compact_pointers,
            manifest_number,
            manifest_path,
            clean_end,
            damaged_tail,
            extensions,
        })
    }

    /// Checks the comparator name an edit records, if any (the user comparator's, or a marker
    /// naming it and the format extensions the database uses: `extension.rs`), and returns the
    /// extensions it records.
    fn check_comparator(&self, edit: &VersionEdit) -> Result<Extensions> {
        let Some(name) = &edit.comparator else {
            return Ok(Extensions::NONE);
        };
        let in_dir = |e: Error| match e {
            Error::InvalidArgument(m) => {
                Error::InvalidArgument(format!("{}: {m}", self.dir.display()))
            }
            Error::NotSupported(m) => Error::NotSupported(format!("{}: {m}", self.dir.display())),
            other => other,
        };
        let recorded = parse_recorded_name(name).map_err(in_dir)?;
        if recorded.comparator != self.comparator {
            return Err(Error::InvalidArgument(format!(
                "{}: comparator {:?} of the database does not match the comparator {:?} it \
                 is opened with",
                self.dir.display(),
                recorded.comparator,
                self.comparator
            )));
        }
        recorded
            .extensions
            .check_enabled(self.extensions)
            .map_err(in_dir)?;
        Ok(recorded.extensions)
    }
}

/// The manifest name `CURRENT` (at `path`) holds.
pub(super) fn read_current(env: &dyn Env, path: &Path) -> Result<String> {
    let corrupt = |reason: &str| Error::corruption(reason).in_file(path.display());
    let current = read_file_to_vec(env, path)?;
    match current.strip_suffix(b"\n") {
        Some(name) if !name.is_empty() && !name.contains(&b'/') => String::from_utf8(name.to_vec())
            .map_err(|_| corrupt("CURRENT names a manifest that is not UTF-8")),
        _ => Err(corrupt("CURRENT file does not end with a newline")),
    }
}
