//! Flushing memtables to tables: the immutable memtable once the write path switched to a new
//! one (on the background thread that flushes, `db/background.rs`), and memtables replayed
//! from logs at open (always to level 0).
//!
//! A flushed table goes to level 0, or deeper (at most level 2) when it overlaps nothing
//! there, so sequential loads skip the rewrites of level-0 compactions. Its level is chosen
//! with the edit turn held (`db/edits.rs`), on the version the edit is built on, and above the
//! output level of every compaction in flight whose range it meets
//! (`compaction::running::Running::flush_level`); until the edit is installed the table is in
//! flight there too, so no compaction picked meanwhile lands over or above it.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use parking_lot::MutexGuard;

use super::edits::take_turn;
use super::obsolete_files::delete_obsolete_files;
use super::table_build::build_table;
use super::{value_files, DbInner, DbState, LevelStats};
use crate::compaction::picker::pick_level_for_memtable_output;
use crate::error::{Error, Result};
use crate::memtable::MemTable;
use crate::options::WriteOptions;
use crate::util::internal_key::user_key;
use crate::version::edit::{FileMetaData, VersionEdit};
use crate::vlog::Lane;

/// A table written from a memtable, not yet in an edit.
pub(crate) struct FlushedTable {
    meta: FileMetaData,
    /// When writing it began (`Env::now_micros`), for the level's statistics.
    start: u64,
}

/// Flushes the immutable memtable to a table and drops the logs it no longer needs.
pub(crate) fn compact_memtable(
    db: &Arc<DbInner>,
    state: &mut MutexGuard<'_, DbState>,
) -> Result<()> {
    let Some(imm) = state.imm.clone() else {
        return Ok(());
    };
    let table = write_memtable(db, state, &imm)?;
    if db.shutting_down.load(Ordering::Acquire) {
        if let Some(table) = &table {
            state.pending_outputs.remove(&table.meta.number);
        }
        return Err(Error::InvalidArgument(
            "database closed during memtable flush".into(),
        ));
    }
    let turn = take_turn(db, state);
    let mut edit = VersionEdit::default();
    let in_flight = table.map(|table| {
        let level = flush_level(db, state, &table.meta);
        let (smallest, largest) = (
            user_key(&table.meta.smallest),
            user_key(&table.meta.largest),
        );
        let id = state.compactions.start_flush(level, smallest, largest);
        let number = table.meta.number;
        add_table(state, &mut edit, level, table, db.env.now_micros());
        (id, number)
    });
    state.retire_older_logs(&mut edit);
    let applied = turn.apply(state, &mut edit);
    if let Some((id, number)) = in_flight {
        state.compactions.finish(id);
        // Installed, the table is live; if not, it may be deleted as obsolete.
        state.pending_outputs.remove(&number);
    }
    applied?;
    state.imm = None;
    db.has_imm.store(false, Ordering::Release);
    state.refresh_super_version();
    // Writers waiting for room need not wait for the deletions too.
    db.bg_done.notify_all();
    delete_obsolete_files(db, state);
    Ok(())
}

/// Writes `mem` to a new level-0 table and records it in `edit` (open's replay of the logs:
/// no pass deleting obsolete files runs before open applies the edit).
pub(crate) fn write_level0_table(
    db: &DbInner,
    state: &mut MutexGuard<'_, DbState>,
    mem: &Arc<MemTable>,
    edit: &mut VersionEdit,
) -> Result<()> {
    if let Some(table) = write_memtable(db, state, mem)? {
        state.pending_outputs.remove(&table.meta.number);
        add_table(state, edit, 0, table, db.env.now_micros());
    }
    Ok(())
}

/// Writes `mem` to a new table, without the state mutex; `None` when it holds nothing. The
/// table stays a pending output (kept from deletion) until the caller removes it, once an
/// installed edit names it or it is given up.
fn write_memtable(
    db: &DbInner,
    state: &mut MutexGuard<'_, DbState>,
    mem: &Arc<MemTable>,
) -> Result<Option<FlushedTable>> {
    let start = db.env.now_micros();
    let number = state.versions.new_file_number();
    state.pending_outputs.insert(number);
    db.info_log
        .log(format_args!("level-0 table #{number}: started"));
    let options = db.options.table_options();
    let result = MutexGuard::unlocked(state, || {
        // The values the memtable's pointers name become durable before the table does.
        value_files::sync(db, Lane::Writes)?;
        let mut iter = mem.iter();
        build_table(
            &db.dir,
            &*db.env,
            &options,
            &db.table_cache,
            &mut iter,
            mem.range_tombstones().as_deref(),
            number,
        )
    });
    let meta = result.inspect_err(|_| {
        state.pending_outputs.remove(&number);
    })?;
    if meta.file_size == 0 {
        // An empty memtable leaves no table.
        state.pending_outputs.remove(&number);
        return Ok(None);
    }
    db.info_log.log(format_args!(
        "level-0 table #{number}: {} bytes",
        meta.file_size
    ));
    Ok(Some(FlushedTable { meta, start }))
}

/// The level a flushed table goes to (see the module documentation); call with the edit turn
/// held.
fn flush_level(db: &DbInner, state: &DbState, meta: &FileMetaData) -> usize {
    let (smallest, largest) = (user_key(&meta.smallest), user_key(&meta.largest));
    let level = pick_level_for_memtable_output(
        state.versions.current(),
        smallest,
        largest,
        db.options.max_file_size as u64,
    );
    state.compactions.flush_level(smallest, largest, level)
}

/// Records `table` in `edit` at `level`, and its writing in the level's statistics.
fn add_table(
    state: &mut DbState,
    edit: &mut VersionEdit,
    level: usize,
    table: FlushedTable,
    now: u64,
) {
    state.stats[level].add(&LevelStats {
        micros: now.saturating_sub(table.start),
        bytes_read: 0,
        bytes_written: table.meta.file_size,
    });
    edit.new_files.push((level, table.meta));
}

/// Forces the memtable to a table and waits until it is written.
pub(crate) fn flush_memtable(db: &Arc<DbInner>) -> Result<()> {
    super::write::write(db, &WriteOptions::default(), None)?;
    let mut state = db.state.lock();
    while state.imm.is_some() && state.bg_error.is_none() {
        db.bg_done.wait(&mut state);
    }
    match &state.bg_error {
        Some(e) => Err(e.clone()),
        None => Ok(()),
    }
}
