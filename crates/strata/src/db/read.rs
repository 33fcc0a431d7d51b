//! The read path: point lookups and iterators over memtable, immutable memtable and tables.
//!
//! A read takes the state mutex only to clone the current [`SuperVersion`](super::SuperVersion)
//! and the sequence number to read at; everything after runs without locks on immutable data.

use std::sync::Arc;

use super::iterator::DbIterator;
use super::{DbInner, SuperVersion};
use crate::error::Result;
use crate::iter::db_iter::DbIter;
use crate::iter::merging::merging_iterator;
use crate::iter::InternalIterator;
use crate::memtable::MemGet;
use crate::options::ReadOptions;
use crate::util::internal_key::lookup_key;
use crate::version::level_iter::{LevelFiles, LevelIter};
use crate::version::version::{SeekCharge, TableLookup};

/// The state to read and the sequence number to read it at: the snapshot's, or the latest.
/// A read-only handle's snapshot brings the state it was taken on (see `snapshot.rs`).
fn read_view(db: &DbInner, options: &ReadOptions) -> (Arc<SuperVersion>, u64) {
    let pinned = options
        .snapshot
        .as_ref()
        .and_then(|snapshot| snapshot.view_in(&db.snapshots))
        .and_then(|view| view.downcast::<SuperVersion>().ok());
    let state = db.state.lock();
    let sequence = options
        .snapshot_sequence()
        .unwrap_or(state.versions.last_sequence);
    (
        pinned.unwrap_or_else(|| Arc::clone(&state.super_version)),
        sequence,
    )
}

/// The value of `key` as of the read options' snapshot (or now).
pub(crate) fn get(db: &Arc<DbInner>, options: &ReadOptions, key: &[u8]) -> Result<Option<Vec<u8>>> {
    let (view, sequence) = read_view(db, options);
    match view.mem.get(key, sequence) {
        MemGet::Found(value) => return Ok(Some(value)),
        MemGet::Deleted => return Ok(None),
        MemGet::Absent => {}
    }
    if let Some(imm) = &view.imm {
        match imm.get(key, sequence) {
            MemGet::Found(value) => return Ok(Some(value)),
            MemGet::Deleted => return Ok(None),
            MemGet::Absent => {}
        }
    }
    let lookup = lookup_key(key, sequence);
    let mut charge = SeekCharge::default();
    let found = view
        .version
        .get(options.block_reads(), &lookup, &db.table_cache, &mut charge)?;
    if view.version.charge_seek(charge) {
        let _state = db.state.lock();
        db.bg_work.notify_all();
    }
    Ok(match found {
        TableLookup::Found(value) => Some(value),
        TableLookup::Deleted | TableLookup::Absent | TableLookup::Corrupt => None,
    })
}

/// A user iterator over every source, as of the read options' snapshot (or now).
pub(crate) fn new_iterator(db: &Arc<DbInner>, options: &ReadOptions) -> DbIterator {
    let (view, sequence) = read_view(db, options);
    let version = &view.version;
    // The memtables, each level-0 table, one cursor per other non-empty level.
    let sources =
        2 + version.files[0].len() + version.files[1..].iter().filter(|f| !f.is_empty()).count();
    let mut children: Vec<Box<dyn InternalIterator>> = Vec::with_capacity(sources);
    children.push(Box::new(view.mem.iter()));
    if let Some(imm) = &view.imm {
        children.push(Box::new(imm.iter()));
    }
    let block_reads = options.block_reads();
    for file in &version.files[0] {
        match db
            .table_cache
            .iter(block_reads, file.number(), file.meta.file_size)
        {
            Ok(iter) => children.push(Box::new(iter)),
            Err(e) => children.push(Box::new(crate::iter::ErrorIter::new(e))),
        }
    }
    for (level, files) in version.files.iter().enumerate().skip(1) {
        if !files.is_empty() {
            children.push(Box::new(LevelIter::new(
                db.icmp.clone(),
                LevelFiles::Level(Arc::clone(version), level),
                Arc::clone(&db.table_cache),
                block_reads,
            )));
        }
    }
    let merged = merging_iterator(db.icmp.clone(), children);
    let mut iter = DbIter::new(
        merged,
        db.icmp.clone(),
        sequence,
        options.lower_bound.clone(),
        options.upper_bound.clone(),
    );
    // Reads sampled while iterating charge seeks, so hot overlapping ranges get compacted.
    let version = Arc::clone(&view.version);
    let weak_db = Arc::downgrade(db);
    iter.set_read_sampler(
        Box::new(move |internal_key, _bytes| {
            if version.record_read_sample(internal_key) {
                if let Some(db) = weak_db.upgrade() {
                    let _state = db.state.lock();
                    db.bg_work.notify_all();
                }
            }
        }),
        db.env.now_micros() ^ sequence,
    );
    DbIterator::new(iter, view)
}
