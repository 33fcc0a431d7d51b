//! Time writes spent held back by `make_room_for_write` (`db/write.rs`), by cause: what the
//! property `strata.write-stalls` reports, for telling why writes were slow (RocksDB reports
//! the like among its statistics; LevelDB does not).
//!
//! Counters only, kept with relaxed atomics: each wait adds one to its cause's count and its
//! length in microseconds when it ends. A group leader waits for the whole group, so a wait
//! counts once however many writes it held back.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Why a write waited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stall {
    /// Slowed to a byte rate while level 0 is crowded (`db/write_pace.rs`).
    Level0Slowdown,
    /// Stopped while level 0 holds the stop trigger's number of tables.
    Level0Stop,
    /// Stopped while the memtable is full and the one before is still being flushed.
    MemtableFull,
    /// Stopped for garbage collection of value files: over the space bound, waiting for a
    /// plan, or for a plan a released snapshot or reader asked for (`db/value_gc.rs`).
    ValueFiles,
}

impl Stall {
    const ALL: [Stall; 4] = [
        Stall::Level0Slowdown,
        Stall::Level0Stop,
        Stall::MemtableFull,
        Stall::ValueFiles,
    ];

    /// The cause's name in the property.
    fn name(self) -> &'static str {
        match self {
            Stall::Level0Slowdown => "level0-slowdown",
            Stall::Level0Stop => "level0-stop",
            Stall::MemtableFull => "memtable-full",
            Stall::ValueFiles => "value-files",
        }
    }
}

/// The counts and total lengths of the waits, per [`Stall`].
#[derive(Debug, Default)]
pub(crate) struct WriteStalls {
    counts: [AtomicU64; Stall::ALL.len()],
    micros: [AtomicU64; Stall::ALL.len()],
}

impl WriteStalls {
    /// Counts a wait for `cause` that lasted `waited`.
    pub(crate) fn record(&self, cause: Stall, waited: Duration) {
        let micros = u64::try_from(waited.as_micros()).unwrap_or(u64::MAX);
        self.counts[cause as usize].fetch_add(1, Ordering::Relaxed);
        self.micros[cause as usize].fetch_add(micros, Ordering::Relaxed);
    }

    /// The property's text: a line per cause, `<cause> <waits> <microseconds>`, every cause
    /// listed, in the order of [`Stall`].
    pub(crate) fn report(&self) -> String {
        let mut out = String::new();
        for cause in Stall::ALL {
            let i = cause as usize;
            let _ = writeln!(
                out,
                "{} {} {}",
                cause.name(),
                self.counts[i].load(Ordering::Relaxed),
                self.micros[i].load(Ordering::Relaxed)
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_cause_adds_up_its_own_waits() {
        let stalls = WriteStalls::default();
        stalls.record(Stall::MemtableFull, Duration::from_micros(1500));
        stalls.record(Stall::MemtableFull, Duration::from_micros(500));
        stalls.record(Stall::ValueFiles, Duration::from_millis(3));
        assert_eq!(
            stalls.report(),
            "level0-slowdown 0 0\nlevel0-stop 0 0\nmemtable-full 2 2000\nvalue-files 1 3000\n"
        );
    }
}
