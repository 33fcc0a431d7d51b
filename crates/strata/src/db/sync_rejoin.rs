//! Synced groups that wait a moment for the writers of the previous one.
//!
//! A group commit syncs once for all its writers, but threads that each make synced writes
//! one after another fall into two cohorts: the writers acknowledged by one group come back
//! while the next group is already syncing, so they queue for the group after it, and every
//! group holds about half of the threads. Measured on this project's 2-core VM (`strata bench
//! --threads 8 --benchmarks fillsync`), groups held 4.6 writers on average and each took
//! 105 µs of `fdatasync` plus 20 µs more.
//!
//! So the leader of a synced group, before it writes the log record, waits for the threads of
//! the last synced group to queue behind it again (they are on their way back: each was just
//! woken), taking them into its group as they come. The wait ends when all of them joined, or
//! when the queue's front cannot join (a group's size limit, a flush request), or after half of
//! the last synced commit's duration ([`MAX_WAIT`] at most): a writer that comes back later
//! waits for the next group, as it would have anyway, and on a device whose sync is quick the
//! wait is as short. A thread that does not come back (it stopped writing, or writes seldom)
//! costs one group that wait; after a wait that nobody joined, groups stop waiting until a
//! group forms with two or more writers without it, the sign that threads are writing side by
//! side again (PostgreSQL's `commit_delay` likewise waits only when `commit_siblings` other
//! transactions are active). Measured with `strata bench --benchmarks fillsync --threads N`
//! (4,000 synced writes per thread, µs per write per thread, two alternated runs): 1 thread
//! 90-96 against 90 before; 2 threads 112-129 against 150-158; 4 threads 139-151 against
//! 190-194; 8 threads 174-182 against 230-234.

use std::thread::ThreadId;
use std::time::Duration;

/// The longest a synced group waits, whatever the last commit took: the leader watches the
/// queue, yielding its processor between looks, and a thread on its way back needs tens of
/// microseconds (beside three processor hogs, `tests/synced_writers_share_syncs.rs` still
/// shared 65-71 syncs among 240 writes, against 61 without the hogs).
const MAX_WAIT: Duration = Duration::from_millis(1);

/// What the next synced group waits for; kept in the state (under its mutex).
#[derive(Debug)]
pub(crate) struct SyncRejoin {
    /// The threads whose writes the last synced group committed.
    threads: Vec<ThreadId>,
    /// How long that group's commit took (log append, sync and memtable inserts).
    commit_time: Duration,
    /// Whether groups wait: false after a wait that no writer joined, until a group of two or
    /// more writers forms without one.
    waiting: bool,
}

impl Default for SyncRejoin {
    fn default() -> SyncRejoin {
        SyncRejoin {
            threads: Vec::new(),
            commit_time: Duration::ZERO,
            waiting: true,
        }
    }
}

impl SyncRejoin {
    /// How long a synced group led by `leader` may wait for the last group's other threads,
    /// and which those are; `None` when it does not wait.
    pub(crate) fn awaited(&self, leader: ThreadId) -> Option<(Duration, Vec<ThreadId>)> {
        if !self.waiting {
            return None;
        }
        let awaited: Vec<ThreadId> = self
            .threads
            .iter()
            .copied()
            .filter(|&thread| thread != leader)
            .collect();
        let limit = (self.commit_time / 2).min(MAX_WAIT);
        (!awaited.is_empty() && !limit.is_zero()).then_some((limit, awaited))
    }

    /// Records a synced group's commit: its writers' threads (the leader's first), how long it
    /// took, and whether the group waited and with what result (`Some(true)` when some
    /// awaited thread joined it).
    pub(crate) fn record(
        &mut self,
        threads: impl Iterator<Item = ThreadId>,
        commit_time: Duration,
        waited: Option<bool>,
    ) {
        self.threads.clear();
        self.threads.extend(threads);
        self.commit_time = commit_time;
        match waited {
            Some(joined) => self.waiting = joined,
            None => self.waiting |= self.threads.len() >= 2,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn other_thread() -> ThreadId {
        std::thread::spawn(|| std::thread::current().id())
            .join()
            .unwrap()
    }

    #[test]
    fn awaits_the_last_groups_other_threads_for_half_its_commit() {
        let me = std::thread::current().id();
        let other = other_thread();
        let mut rejoin = SyncRejoin::default();
        assert_eq!(rejoin.awaited(me), None, "no group yet");
        rejoin.record([me, other].into_iter(), Duration::from_micros(100), None);
        assert_eq!(
            rejoin.awaited(me),
            Some((Duration::from_micros(50), vec![other]))
        );
        assert_eq!(
            rejoin.awaited(other),
            Some((Duration::from_micros(50), vec![me]))
        );
        // A lone writer after a group of itself waits for nobody.
        rejoin.record([me].into_iter(), Duration::from_micros(100), None);
        assert_eq!(rejoin.awaited(me), None);
    }

    #[test]
    fn the_wait_is_bounded_whatever_the_commit_took() {
        let me = std::thread::current().id();
        let other = other_thread();
        let mut rejoin = SyncRejoin::default();
        rejoin.record([other].into_iter(), Duration::from_secs(1), None);
        assert_eq!(rejoin.awaited(me), Some((MAX_WAIT, vec![other])));
    }

    #[test]
    fn a_wait_nobody_joined_stops_waiting_until_writers_meet_again() {
        let me = std::thread::current().id();
        let other = other_thread();
        let mut rejoin = SyncRejoin::default();
        rejoin.record([other].into_iter(), Duration::from_micros(100), None);
        assert!(rejoin.awaited(me).is_some());
        // `me` waited for `other`, who did not come.
        rejoin.record([me].into_iter(), Duration::from_micros(100), Some(false));
        rejoin.record([other].into_iter(), Duration::from_micros(100), None);
        assert_eq!(rejoin.awaited(me), None, "a lone group is no sign");
        rejoin.record([other, me].into_iter(), Duration::from_micros(100), None);
        assert!(
            rejoin.awaited(me).is_some(),
            "two writers met without waiting"
        );
        // A wait some thread joined keeps groups waiting.
        rejoin.record(
            [me, other].into_iter(),
            Duration::from_micros(100),
            Some(true),
        );
        assert!(rejoin.awaited(me).is_some());
    }
}
