//! A write batch's encoded form (a write-ahead log record's payload) and the sequence number
//! in its header, which the public `WriteBatch` API keeps to the engine.

use crate::error::Result;
use crate::write_batch::WriteBatch;

/// A write batch from its encoded form (a WAL record's payload); see `WriteBatch`'s layout.
pub fn write_batch_from_contents(bytes: Vec<u8>) -> Result<WriteBatch> {
    WriteBatch::from_contents(bytes)
}

/// The encoded form of `batch`: header and records, as the WAL stores it.
pub fn write_batch_contents(batch: &WriteBatch) -> &[u8] {
    batch.contents()
}

/// The sequence number in `batch`'s header.
pub fn write_batch_sequence(batch: &WriteBatch) -> u64 {
    batch.sequence()
}

/// Sets the sequence number in `batch`'s header.
pub fn write_batch_set_sequence(batch: &mut WriteBatch, sequence: u64) {
    batch.set_sequence(sequence);
}
