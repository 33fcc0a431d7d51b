//! The database's side of value separation (format extension `value-separation`,
//! docs/design.md section 4.4): which values go to value files, keeping each pointer from
//! becoming durable before its value, and resolving pointers for reads.
//!
//! Order of writes: [`separate`] appends a batch's large values before the batch (holding
//! pointers in their place) is queued for the log; [`sync`] runs before every log sync and
//! before a flush records its table, so a durable pointer always names a durable value;
//! recovery checks every replayed pointer ([`check_replayed`]) and syncs the files it read.
//!
//! Locks: `DbInner::value_writer` is never taken with the state mutex held, and the state
//! mutex never while holding it (a writer allocates a file number first, then takes the
//! writer), since the log's mutex is taken under the state mutex and the writer under the
//! log's.

use std::collections::HashSet;

use super::DbInner;
use crate::error::Result;
use crate::filename::value_file_name;
use crate::util::entry::Stored;
use crate::vlog::ValuePointer;
use crate::write_batch::{BatchOp, WriteBatch};

/// `batch` with its large values (per `Options::value_separation`) appended to the current
/// value file and replaced by pointers; `None` when nothing is separated.
pub(super) fn separate(db: &DbInner, batch: &WriteBatch) -> Result<Option<WriteBatch>> {
    let Some(separation) = db.options.value_separation else {
        return Ok(None);
    };
    batch.with_separated_values(separation.min_value_size, |large| loop {
        {
            let mut writer = db.value_writer.lock();
            if !writer.needs_file() {
                let pointers = writer.append(large.iter().copied())?;
                return Ok(pointers.iter().map(|p| p.encode()).collect());
            }
        }
        // A number allocated here and not used (another writer started a file meanwhile)
        // is simply skipped.
        let number = db.state.lock().versions.new_file_number();
        let mut writer = db.value_writer.lock();
        if writer.needs_file() {
            writer.start(&*db.env, &db.dir, number)?;
        }
    })
}

/// Makes every value appended so far durable.
pub(super) fn sync(db: &DbInner) -> Result<()> {
    db.value_writer.lock().sync(&*db.env, &db.dir)
}

/// The user's value from what a point read found.
pub(super) fn resolve(db: &DbInner, key: &[u8], stored: Stored) -> Result<Vec<u8>> {
    match stored {
        Stored::Value(value) => Ok(value),
        Stored::Pointer(pointer) => db.value_files.read(key, &pointer),
    }
}

/// The length of the user's value from what a point read found, without reading a value
/// file.
pub(super) fn stored_len(key: &[u8], stored: &Stored) -> Result<u64> {
    match stored {
        Stored::Value(value) => Ok(value.len() as u64),
        Stored::Pointer(pointer) => pointer_len(key, pointer),
    }
}

/// The value length a pointer (of the entry of `key`) records.
pub(super) fn pointer_len(key: &[u8], pointer: &[u8]) -> Result<u64> {
    ValuePointer::decode(pointer)
        .map(|p| u64::from(p.length))
        .ok_or_else(|| ValuePointer::malformed(key, pointer))
}

/// Checks that every pointer of a batch read back from a log names its value, and syncs each
/// value file the first time it is met (`synced` holds those done): the replayed pointers
/// may reach a table, their values must be durable first. A pointer whose value is missing
/// or damaged fails with the corruption error.
pub(super) fn check_replayed(
    db: &DbInner,
    batch: &WriteBatch,
    synced: &mut HashSet<u64>,
) -> Result<()> {
    for op in batch.iter() {
        if let BatchOp::PutSeparated { key, pointer } = op? {
            db.value_files.read(key, pointer)?;
            if let Some(file) = ValuePointer::decode(pointer).map(|p| p.file) {
                if synced.insert(file) {
                    let mut handle = db
                        .env
                        .new_appendable_file(&value_file_name(&db.dir, file))?;
                    handle.sync()?;
                }
            }
        }
    }
    Ok(())
}
