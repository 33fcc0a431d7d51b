//! Following the manifest of a database another process writes: the table layout a read-only
//! handle (`db/read_only.rs`) sees, kept current by reading only what the writer appended.
//!
//! Contract:
//! - [`ManifestFollower::open`] reads `CURRENT` and the whole manifest it names, with the rules
//!   of open (`recover.rs`); [`ManifestFollower::refresh`] reads the edits appended since (or the
//!   whole of a new manifest, when the writer started one). A writer in the middle of appending
//!   an edit leaves its first bytes: the follower stops before them and reads the edit whole
//!   next time.
//! - The writer replaces a manifest by writing the new one, renaming `CURRENT` to it, then
//!   deleting the old one; a refresh that read `CURRENT` just before the rename and found the
//!   manifest it named gone reads the new one instead (manifest numbers only grow, so `CURRENT`
//!   naming another manifest after a failed read means the writer moved on).
//! - [`ManifestFollower::position`] changes whenever the follower reads a new edit: a table or
//!   log found missing while the position did not change is missing for good, not deleted by
//!   the writer after an edit the follower had not read yet.
//!
//! Thread safety: none needed. The follower reads files, so it lives outside the DB mutex;
//! the version set takes its state over in one step under the mutex ([`VersionSet::adopt`]).
//!
//! [`VersionSet::adopt`]: super::version_set::VersionSet::adopt

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::recover::{read_current, ManifestState, ReadManifest};
use super::version::Version;
use crate::env::Env;
use crate::error::{Error, Result};
use crate::extension::Extensions;
use crate::filename::current_file_name;
use crate::util::internal_key::{InternalKeyComparator, SequenceNumber};

/// Most manifests a refresh moves through before it gives up on one the writer keeps replacing.
const MAX_MANIFEST_SWITCHES: usize = 64;

/// What a follower has read of the live manifest so far.
pub(crate) struct ManifestFollower {
    env: Arc<dyn Env>,
    dir: PathBuf,
    comparator: String,
    /// The format extensions the handle is opened with: the manifest may record no other.
    extensions: Extensions,
    paranoid_checks: bool,
    /// The empty version a new manifest's edits are applied to.
    empty: Arc<Version>,
    state: ManifestState,
}

impl ManifestFollower {
    /// Reads `CURRENT` and the manifest it names. A manifest recording a format extension
    /// not in `extensions` is refused, as open refuses it. `paranoid_checks` fails on a
    /// damaged last edit instead of skipping it.
    pub(crate) fn open(
        env: Arc<dyn Env>,
        dir: &Path,
        icmp: &InternalKeyComparator,
        extensions: Extensions,
        paranoid_checks: bool,
    ) -> Result<ManifestFollower> {
        let empty = Arc::new(Version::new(icmp.clone(), Default::default()));
        let comparator = icmp.user_comparator().name().to_owned();
        let state = read_moving(&*env, dir, |env| {
            ReadManifest {
                env,
                dir,
                comparator: &comparator,
                extensions,
                paranoid_checks,
                base: &empty,
            }
            .read()
        })?;
        Ok(ManifestFollower {
            env,
            dir: dir.to_path_buf(),
            comparator,
            extensions,
            paranoid_checks,
            empty,
            state,
        })
    }

    /// Reads the edits appended since the last read, or the whole of the manifest `CURRENT`
    /// names now if the writer replaced it. On failure the follower keeps what it had.
    ///
    /// A manifest numbered below the one read before belongs to another database made in the
    /// same directory (destroyed and created again): its file numbers mean other files, so
    /// following it from what was read of the old one could mix the two. That is refused
    /// (`NotSupported`): open the database again.
    pub(crate) fn refresh(&mut self) -> Result<()> {
        let state = read_moving(&*self.env, &self.dir, |env| {
            ReadManifest {
                env,
                dir: &self.dir,
                comparator: &self.comparator,
                extensions: self.extensions,
                paranoid_checks: self.paranoid_checks,
                base: &self.empty,
            }
            .read_after(&self.state)
        })?;
        if state.manifest_number < self.state.manifest_number {
            return Err(Error::NotSupported(format!(
                "{}: the database was replaced (its manifest went from #{} back to #{}): open \
                 it again to read the new one",
                self.dir.display(),
                self.state.manifest_number,
                state.manifest_number
            )));
        }
        self.state = state;
        Ok(())
    }

    pub(super) fn state(&self) -> &ManifestState {
        &self.state
    }

    /// The manifest read.
    pub(crate) fn manifest_path(&self) -> &Path {
        &self.state.manifest_path
    }

    /// The tables the manifest lists.
    pub(crate) fn version(&self) -> &Arc<Version> {
        &self.state.version
    }

    /// The format extensions the manifest records: what its logs and tables may hold.
    pub(crate) fn extensions(&self) -> Extensions {
        self.state.extensions
    }

    /// The oldest write-ahead log still needed.
    pub(crate) fn log_number(&self) -> u64 {
        self.state.log_number
    }

    /// The log an older LevelDB may still need besides those from `log_number` on (0: none).
    pub(crate) fn prev_log_number(&self) -> u64 {
        self.state.prev_log_number
    }

    /// The last sequence the manifest records.
    pub(crate) fn last_sequence(&self) -> SequenceNumber {
        self.state.last_sequence
    }

    /// The manifest's number and where its last whole edit ends; see the module documentation.
    pub(crate) fn position(&self) -> (u64, u64) {
        (self.state.manifest_number, self.state.clean_end)
    }

    /// The damage skipped at the manifest's end, if any (a torn edit of a writer that died).
    pub(crate) fn damaged_tail(&self) -> Option<&Error> {
        self.state.damaged_tail.as_ref()
    }
}

/// Runs `read` until it succeeds or fails while `CURRENT` stays put: a failure during which
/// `CURRENT` moved to another manifest may be the writer deleting the one that was read.
fn read_moving(
    env: &dyn Env,
    dir: &Path,
    read: impl Fn(&dyn Env) -> Result<ManifestState>,
) -> Result<ManifestState> {
    let current = current_file_name(dir);
    let mut switches = 0;
    loop {
        let before = read_current(env, &current)?;
        match read(env) {
            Ok(state) => return Ok(state),
            Err(e) => {
                let moved = read_current(env, &current).is_ok_and(|now| now != before);
                if !moved || switches == MAX_MANIFEST_SWITCHES {
                    return Err(e);
                }
                switches += 1;
            }
        }
    }
}
