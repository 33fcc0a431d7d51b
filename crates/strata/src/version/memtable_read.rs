//! A point lookup through the memtables of a read view, newest first.
//!
//! Contract: the answer is decided by the newest memtable that has an entry for the key at the
//! read's sequence, or by a range tombstone of a memtable covering it; otherwise the tables
//! below decide, joining `read.covered` (the newest covering tombstone seen here).

use std::sync::Arc;

use super::version::PointRead;
use crate::error::Result;
use crate::memtable::MemTable;
use crate::util::entry::{visible, Stored};
use crate::util::internal_key::SequenceNumber;

/// What `memtables` (newest first) say of `key` at `sequence`: `Ok(Some(answer))` when they
/// decide it (an entry, or a range tombstone covering it), `Ok(None)` to look in the tables,
/// with `read.covered` then holding the newest tombstone they have covering it (none: it
/// would have decided). A value found may be a pointer into a value file, which the database
/// layer resolves. It is borrowed from its memtable.
#[inline]
pub(crate) fn memtables_get<'a>(
    memtables: impl IntoIterator<Item = &'a Arc<MemTable>>,
    key: &[u8],
    sequence: SequenceNumber,
    read: &mut PointRead,
) -> Result<Option<Option<Stored<'a>>>> {
    for mem in memtables {
        if let Some(tombstones) = mem.range_tombstones() {
            read.covered = read.covered.max(tombstones.newest_covering(key, sequence));
        }
        if let Some(entry) = mem.get(key, sequence) {
            let seen = visible(
                entry.value_type,
                entry.sequence,
                entry.value,
                read.covered,
                read.now,
            )?;
            return Ok(Some(seen.to_stored(read.presence_only)));
        }
        if read.covered.is_some() {
            return Ok(Some(None));
        }
    }
    Ok(None)
}
