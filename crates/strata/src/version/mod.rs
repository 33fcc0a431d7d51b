//! Versions: the set of tables that make up the database at a point in time, the edits that
//! move from one version to the next, and the manifest that logs those edits.
//!
//! - [`version`]: one immutable table layout, point lookups and overlap queries over it;
//!   [`get_many`]: batched point lookups.
//! - [`edit`]: a version edit and its on-disk encoding; [`builder`] applies edits to a version.
//! - [`version_set`]: the current version and the counters, changed by prepare/write/install.
//! - [`manifest`]: writing edits to the manifest and pointing `CURRENT` at it; `recover`:
//!   reading them back at open; [`follow`]: reading them as another process appends them (a
//!   read-only handle).
//! - [`policy`]: compaction scores and the level-0 triggers that slow and stop writes.
//! - [`table_cache`]: open tables by file number; [`level_iter`]: a cursor over one level.

pub(crate) mod builder;
pub(crate) mod edit;
pub(crate) mod follow;
pub(crate) mod get_many;
pub(crate) mod level_iter;
pub(crate) mod manifest;
pub(crate) mod memtable_read;
pub(crate) mod policy;
mod recover;
pub(crate) mod table_cache;
#[cfg(test)]
pub(crate) mod tests;
#[allow(clippy::module_inception)]
pub(crate) mod version;
pub(crate) mod version_set;

/// Number of levels in the LSM tree. On-disk: never change (levels are stored in the manifest
/// and LevelDB rejects a level it does not have).
pub(crate) const NUM_LEVELS: usize = 7;
