//! Versions: the set of tables that make up the database at a point in time, the edits that
//! move from one version to the next, and the manifest that logs those edits.

pub(crate) mod edit;

/// Number of levels in the LSM tree. On-disk: never change (levels are stored in the manifest
/// and LevelDB rejects a level it does not have).
pub(crate) const NUM_LEVELS: usize = 7;

pub(crate) mod builder;
pub(crate) mod level_iter;
#[allow(clippy::module_inception)]
pub(crate) mod version;
pub(crate) mod version_set;
