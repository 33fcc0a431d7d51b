//! An iterator over one sorted level (>= 1): the concatenation of its files' entries, opening
//! each table only when the cursor reaches it.

use std::sync::Arc;

use super::version::{find_file, FileRef, Version};
use crate::error::Result;
use crate::iter::InternalIterator;
use crate::table::reader::TableIter;
use crate::table::BlockReads;
use crate::util::internal_key::InternalKeyComparator;
use crate::version::table_cache::TableCache;

/// The files a [`LevelIter`] walks.
pub(crate) enum LevelFiles {
    /// A level of a version the iterator shares (readers: nothing is copied).
    Level(Arc<Version>, usize),
    /// A list of its own (a compaction's inputs).
    Owned(Vec<FileRef>),
}

impl std::ops::Deref for LevelFiles {
    type Target = [FileRef];

    fn deref(&self) -> &[FileRef] {
        match self {
            LevelFiles::Level(version, level) => {
                version.files.get(*level).map_or(&[], Vec::as_slice)
            }
            LevelFiles::Owned(files) => files,
        }
    }
}

/// Iterates the files of a sorted, non-overlapping level in key order.
///
/// Thread safety: owned by one reader; holds `Arc`s to the files' metadata and the table cache.
pub(crate) struct LevelIter {
    icmp: InternalKeyComparator,
    files: LevelFiles,
    table_cache: Arc<TableCache>,
    reads: BlockReads,
    /// Index of the file `current` iterates, `files.len()` when unpositioned.
    index: usize,
    current: Option<TableIter>,
    error: Option<crate::error::Error>,
}

impl LevelIter {
    pub(crate) fn new(
        icmp: InternalKeyComparator,
        files: LevelFiles,
        table_cache: Arc<TableCache>,
        reads: BlockReads,
    ) -> LevelIter {
        let index = files.len();
        LevelIter {
            icmp,
            files,
            table_cache,
            reads,
            index,
            current: None,
            error: None,
        }
    }

    /// Opens file `index` (or clears the cursor when out of range).
    fn open(&mut self, index: usize) {
        if index == self.index && self.current.is_some() {
            return;
        }
        self.index = index;
        self.current = None;
        let Some(file) = self.files.get(index) else {
            return;
        };
        match self
            .table_cache
            .iter(self.reads, file.number(), file.meta.file_size)
        {
            Ok(iter) => self.current = Some(iter),
            Err(e) => {
                if self.error.is_none() {
                    self.error = Some(e);
                }
            }
        }
    }

    /// Moves an error of the current file's iterator into `error` and drops that iterator;
    /// true when there was one.
    fn current_failed(&mut self) -> bool {
        match self.current.as_ref().map(|c| c.status()) {
            Some(Err(e)) => {
                self.error.get_or_insert(e);
                self.current = None;
                true
            }
            _ => false,
        }
    }

    fn skip_forward(&mut self) {
        while !self.current.as_ref().is_some_and(|c| c.valid()) {
            if self.current_failed() {
                return;
            }
            // A read that must not wait stops at a table it could not open (see
            // `TableIter::skip_empty_blocks_forward`).
            if self.reads.memory_only && self.current.is_none() && self.index < self.files.len() {
                return;
            }
            if self.index + 1 >= self.files.len() {
                self.current = None;
                self.index = self.files.len();
                return;
            }
            self.open(self.index + 1);
            if let Some(c) = self.current.as_mut() {
                c.seek_to_first();
            }
        }
    }

    fn skip_backward(&mut self) {
        while !self.current.as_ref().is_some_and(|c| c.valid()) {
            if self.current_failed() {
                return;
            }
            // A read that must not wait stops at a table it could not open (see
            // `TableIter::skip_empty_blocks_forward`).
            if self.reads.memory_only && self.current.is_none() && self.index < self.files.len() {
                return;
            }
            if self.index == 0 || self.index > self.files.len() {
                self.current = None;
                self.index = self.files.len();
                return;
            }
            self.open(self.index - 1);
            if let Some(c) = self.current.as_mut() {
                c.seek_to_last();
            }
        }
    }
}

impl InternalIterator for LevelIter {
    fn valid(&self) -> bool {
        self.current.as_ref().is_some_and(|c| c.valid())
    }

    fn seek_to_first(&mut self) {
        self.open(0);
        if let Some(c) = self.current.as_mut() {
            c.seek_to_first();
        }
        self.skip_forward();
    }

    fn seek_to_last(&mut self) {
        if self.files.is_empty() {
            self.current = None;
            return;
        }
        self.open(self.files.len() - 1);
        if let Some(c) = self.current.as_mut() {
            c.seek_to_last();
        }
        self.skip_backward();
    }

    fn seek(&mut self, target: &[u8]) {
        let index = find_file(&self.icmp, &self.files, target);
        self.open(index);
        if let Some(c) = self.current.as_mut() {
            c.seek(target);
        }
        self.skip_forward();
    }

    fn next(&mut self) {
        if let Some(c) = self.current.as_mut() {
            c.next();
        }
        self.skip_forward();
    }

    fn prev(&mut self) {
        if let Some(c) = self.current.as_mut() {
            c.prev();
        }
        self.skip_backward();
    }

    fn key(&self) -> &[u8] {
        self.current.as_ref().map_or(&[], |c| c.key())
    }

    fn value(&self) -> &[u8] {
        self.current.as_ref().map_or(&[], |c| c.value())
    }

    fn status(&self) -> Result<()> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        self.current.as_ref().map_or(Ok(()), |c| c.status())
    }
}
