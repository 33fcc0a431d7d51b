//! Which write batches of a write-ahead log may be replayed after a gap or damage, for
//! recovery (`db/log_replay.rs`) and the tools that read logs (`strata check`,
//! `tools/check/mod.rs`).
//!
//! Each batch a writer logs takes the sequence numbers right after the batch before it. A
//! power loss writes a memory-mapped log's pages back in any order (`env/posix/mapped_log.rs`),
//! so a gap (zeros, a torn record) or damage the log reader skipped may hide batches that the
//! records after it must not be replayed without. A batch whose sequence number is exactly the
//! one the last replayed batch left off at cannot have lost a predecessor: replay goes on
//! through it. The first batch after a gap or damage that does not continue exactly (or that
//! follows one whose end is unknown) ends the log for recovery: what follows it may rest on
//! lost writes. With nothing skipped before it, a batch is taken as it comes (a log's first
//! batch is checked against the logs before it by `log_replay::Sequences`).
//!
//! A gap before a log's *first* batch proves less: the sequence the log is due to start at
//! comes from the manifest (or the logs before), and LevelDB records as its manifest's last
//! sequence every write made so far, including writes already in the log the same edit names.
//! A batch that continues that number may follow zeros that hid such writes. It is replayed
//! (LevelDB's own reader goes on past zeros the same way), and the gap is reported as damage
//! ([`gap_before_first_batch`]): fatal under `paranoid_checks`, noted otherwise.

use crate::write_batch::WriteBatch;

/// Follows one log's batches in order; see the module documentation.
pub(crate) struct Continuity {
    /// The sequence number the next batch must start at, when known.
    next: Option<u64>,
    /// A gap, damage or an unusable record was skipped since the last batch.
    skipped: bool,
}

/// A batch after a gap or damage that does not continue the batches before it.
#[derive(Debug)]
pub(crate) struct Jump {
    /// The sequence number it had to start at (`None`: unknown, nothing before it was read).
    pub(crate) expected: Option<u64>,
    /// The one it starts at.
    pub(crate) found: u64,
}

impl std::fmt::Display for Jump {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.expected {
            Some(expected) => write!(
                f,
                "the batch after it starts at sequence {} where the writes before end at {}",
                self.found,
                expected.wrapping_sub(1)
            ),
            None => write!(
                f,
                "the batch after it (sequence {}) cannot be shown to continue the writes",
                self.found
            ),
        }
    }
}

impl Jump {
    /// Where the log ends and why, for a jump at the record at file offset `record`, after
    /// `gap` (file offset and length) if one came before it: at the gap, or at the record
    /// (the damage before it having been reported on its own).
    pub(crate) fn ending(&self, gap: Option<(u64, u64)>, record: u64) -> (u64, String) {
        match gap {
            Some((start, bytes)) => (
                start,
                format!("zero-filled region followed by data ({bytes} bytes), and {self}"),
            ),
            None => (record, format!("after damage, {self}")),
        }
    }
}

/// Why a gap before a log's first batch is damage although the batch continues the sequence
/// the log was due to start at (see the module documentation).
pub(crate) fn gap_before_first_batch(bytes: u64, sequence: u64) -> String {
    format!(
        "zero-filled region followed by data ({bytes} bytes) before the log's first batch \
         (sequence {sequence}): the writes the manifest counts before it may have been in it"
    )
}

impl Continuity {
    /// Follows a log read from where the batch starting at `expected` is due (`None`: not
    /// known).
    pub(crate) fn new(expected: Option<u64>) -> Continuity {
        Continuity {
            next: expected,
            skipped: false,
        }
    }

    /// The sequence number the next batch is due to start at, when known (for `strata
    /// check`'s own findings).
    #[cfg(any(test, feature = "tools"))]
    pub(crate) fn expected(&self) -> Option<u64> {
        self.next
    }

    /// Something was skipped before the next batch: a gap or damage. (A whole record that is
    /// not a usable batch is no gap: the log around it is intact.)
    pub(crate) fn skipped(&mut self) {
        self.skipped = true;
    }

    /// Whether a gap or damage was skipped that no batch has been followed past yet.
    pub(crate) fn skip_pending(&self) -> bool {
        self.skipped
    }

    /// Takes the next batch read: `Err` when a gap or damage comes before it and it does not
    /// continue exactly — the log ends before it.
    pub(crate) fn follow(&mut self, batch: &WriteBatch) -> Result<(), Jump> {
        let found = batch.sequence();
        if std::mem::take(&mut self.skipped) && self.next != Some(found) {
            return Err(Jump {
                expected: self.next,
                found,
            });
        }
        self.next = found.checked_add(u64::from(batch.count()));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(sequence: u64, count: u32) -> WriteBatch {
        let mut batch = WriteBatch::new();
        for i in 0..count {
            batch.put(&i.to_le_bytes(), b"v");
        }
        batch.set_sequence(sequence);
        batch
    }

    #[test]
    fn after_a_skip_only_an_exact_continuation_is_followed() {
        let mut c = Continuity::new(Some(10));
        assert!(c.follow(&batch(10, 3)).is_ok());
        // Nothing skipped: taken as it comes.
        assert!(c.follow(&batch(20, 1)).is_ok());
        assert_eq!(c.expected(), Some(21));
        c.skipped();
        assert!(c.follow(&batch(21, 2)).is_ok());
        c.skipped();
        let jump = c.follow(&batch(24, 1)).unwrap_err();
        assert_eq!((jump.expected, jump.found), (Some(23), 24));
        // Back in time after a skip ends the log too.
        let mut c = Continuity::new(Some(10));
        c.skipped();
        assert!(c.follow(&batch(9, 1)).is_err());
        // Where the writes before stood is unknown: nothing after a skip can be followed.
        let mut c = Continuity::new(None);
        assert!(c.follow(&batch(5, 1)).is_ok());
        let mut c = Continuity::new(None);
        c.skipped();
        assert!(c.follow(&batch(5, 1)).unwrap_err().expected.is_none());
    }
}
