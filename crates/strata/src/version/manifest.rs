//! Writing the manifest: appending a prepared version edit (step 2 of the version set's
//! prepare/write/install, run without the DB mutex), starting a new manifest when the old one
//! is too large or absent, and pointing `CURRENT` at a new manifest.
//!
//! Contract: an edit is durable once [`ManifestWrite::write`] returns `Ok`. The directory is
//! synced before an edit is appended, so the edit is never durable before the names of the
//! files it names are. A new manifest that fails before `CURRENT` was renamed to it is removed;
//! once the rename happened it stays, since `CURRENT` may name it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::edit::VersionEdit;
use super::version::Version;
use crate::env::{parent_dir, Env};
use crate::error::{Error, Result};
use crate::filename::{current_file_name, descriptor_file_name, temp_file_name};
use crate::log::LogWriter;

/// A manifest larger than this is replaced by a fresh one holding a snapshot.
pub(crate) const MAX_MANIFEST_SIZE: u64 = 64 << 20;

/// A version edit on its way to the manifest, prepared under the mutex.
pub(crate) struct ManifestWrite {
    /// The version the edit leads to, installed once the edit is durable.
    pub(super) version: Version,
    /// The encoded edit.
    pub(super) record: Vec<u8>,
    /// Set when a new manifest must be started: its number and the snapshot record it opens with.
    pub(super) new_manifest: Option<(u64, Vec<u8>)>,
    /// The open manifest, lent by the version set (`None` when a new one is started).
    pub(super) writer: Option<LogWriter>,
    pub(super) dir: PathBuf,
    pub(super) env: Arc<dyn Env>,
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

/// Starts the database in `dir` from one edit: writes `MANIFEST-<number>` holding `edit`,
/// syncs it and points `CURRENT` at it. Before `CURRENT` names the manifest, a failure removes
/// it; after, the manifest stays (even if syncing the directory failed).
pub(crate) fn write_first_manifest(
    env: &dyn Env,
    dir: &Path,
    number: u64,
    edit: &VersionEdit,
) -> Result<()> {
    let path = descriptor_file_name(dir, number);
    let written = (|| {
        let mut log = LogWriter::new(env.new_writable_file(&path)?);
        let mut record = Vec::new();
        edit.encode(&mut record);
        log.add_record(&record)?;
        log.sync()?;
        log.close()
    })();
    if let Err(e) = written {
        let _ = env.remove_file(&path);
        return Err(e);
    }
    set_current_file(env, dir, number).map_err(|failure| {
        if !failure.renamed {
            let _ = env.remove_file(&path);
        }
        failure.error
    })
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
