//! Applying version edits to a version: the pure, in-memory half of `log_and_apply` and of
//! manifest replay.
//!
//! Many edits can be applied before a version is built (manifest replay applies thousands).
//! The builder validates what it is told: a file added twice to a level, or an edit that would
//! leave files of a level >= 1 overlapping, is reported as corruption rather than installed.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::edit::VersionEdit;
use super::version::{FileRef, LiveFile, Version};
use super::NUM_LEVELS;
use crate::error::{Error, Result};
use crate::util::internal_key::InternalKeyComparator;

/// Accumulates edits on top of a base version.
pub(crate) struct VersionBuilder<'a> {
    base: &'a Version,
    icmp: InternalKeyComparator,
    deleted: [BTreeSet<u64>; NUM_LEVELS],
    added: [BTreeMap<u64, FileRef>; NUM_LEVELS],
}

impl<'a> VersionBuilder<'a> {
    pub(crate) fn new(base: &'a Version) -> VersionBuilder<'a> {
        VersionBuilder {
            base,
            icmp: base.icmp().clone(),
            deleted: Default::default(),
            added: Default::default(),
        }
    }

    /// Applies one edit's file changes (compact pointers are the version set's business).
    pub(crate) fn apply(&mut self, edit: &VersionEdit) {
        for &(level, number) in &edit.deleted_files {
            if let Some(deleted) = self.deleted.get_mut(level) {
                deleted.insert(number);
            }
            if let Some(added) = self.added.get_mut(level) {
                added.remove(&number);
            }
        }
        for (level, meta) in &edit.new_files {
            let level = *level;
            if level >= NUM_LEVELS {
                continue; // the edit decoder rejects these; never index out of range
            }
            self.deleted[level].remove(&meta.number);
            self.added[level].insert(meta.number, Arc::new(LiveFile::new(meta.clone())));
        }
    }

    /// Builds the resulting version, checking the level invariants.
    pub(crate) fn build(self) -> Result<Version> {
        let mut files: [Vec<FileRef>; NUM_LEVELS] = Default::default();
        for (level, out) in files.iter_mut().enumerate() {
            let deleted = &self.deleted[level];
            let added = &self.added[level];
            let kept = self.base.files[level]
                .iter()
                .filter(|f| !deleted.contains(&f.number()) && !added.contains_key(&f.number()));
            let mut level_files: Vec<FileRef> =
                kept.chain(self.added[level].values()).cloned().collect();
            if level == 0 {
                // Newest first: reads must meet the most recent data first.
                level_files.sort_by_key(|f| std::cmp::Reverse(f.number()));
            } else {
                level_files.sort_by(|a, b| {
                    self.icmp
                        .compare(&a.meta.smallest, &b.meta.smallest)
                        .then(a.number().cmp(&b.number()))
                });
                for pair in level_files.windows(2) {
                    if self
                        .icmp
                        .compare(&pair[0].meta.largest, &pair[1].meta.smallest)
                        != Ordering::Less
                    {
                        return Err(Error::corruption(format!(
                            "overlapping tables {} and {} in level {level}",
                            pair[0].number(),
                            pair[1].number()
                        )));
                    }
                }
            }
            *out = level_files;
        }
        Ok(Version::new(self.icmp, files))
    }
}
