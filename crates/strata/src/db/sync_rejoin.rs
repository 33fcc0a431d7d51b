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
//! transactions are active). Measured with `strata bench --benchmarks fillsync --threads N
//! --num 4000000` (4,000 synced writes per thread; µs per write per thread, alternated runs
//! against the build before): 2 threads 116-123 against 153-198, 4 threads 151-164 against
//! 182-197, 8 threads 193-201 against 226-281; one thread unchanged (98-104 against 97-105 in
//! five runs each). Eight threads then write 4.0-4.1 times as fast as one (2.8-3.1 before).

use std::thread::ThreadId;
use std::time::Duration;

/// The longest a synced group waits, whatever the last commit took: the leader watches the
/// queue, yielding its processor between looks, and a thread on its way back needs tens of
/// microseconds (beside three or five processor hogs, `tests/synced_writers_share_syncs.rs`
/// still took 62-77 syncs for 240 writes, against 61 without the hogs).
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
    /// The longest a group waits, whatever the last commit took: [`MAX_WAIT`]. Only tests
    /// change it, for waits that outlast a loaded machine's scheduling delays.
    max_wait: Duration,
    /// Whether a leader is in its wait now (`db/write.rs`'s `rejoin`), for tests to act
    /// during it: set once the wait begins and cleared when it ends, both under the state
    /// mutex, which the leader releases between its looks at the queue.
    #[cfg(test)]
    pub(super) in_wait: bool,
}

impl Default for SyncRejoin {
    fn default() -> SyncRejoin {
        SyncRejoin {
            threads: Vec::new(),
            commit_time: Duration::ZERO,
            waiting: true,
            max_wait: MAX_WAIT,
            #[cfg(test)]
            in_wait: false,
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
        let limit = (self.commit_time / 2).min(self.max_wait);
        (!awaited.is_empty() && !limit.is_zero()).then_some((limit, awaited))
    }

    /// Records a synced group's commit: its writers' threads (the leader's first), how long it
    /// took, and whether the group waited and with what result (`Some(true)` when some
    /// awaited thread joined it).
    pub(crate) fn record(
        &mut self,
        threads: impl IntoIterator<Item = ThreadId>,
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

    /// This thread's id, another's, and no synced group yet.
    fn two_threads() -> (ThreadId, ThreadId, SyncRejoin) {
        let me = std::thread::current().id();
        (me, other_thread(), SyncRejoin::default())
    }

    #[test]
    fn awaits_the_last_groups_other_threads_for_half_its_commit() {
        let (me, other, mut rejoin) = two_threads();
        assert_eq!(rejoin.awaited(me), None, "no group yet");
        rejoin.record([me, other], Duration::from_micros(100), None);
        assert_eq!(
            rejoin.awaited(me),
            Some((Duration::from_micros(50), vec![other]))
        );
        assert_eq!(
            rejoin.awaited(other),
            Some((Duration::from_micros(50), vec![me]))
        );
        // A lone writer after a group of itself waits for nobody.
        rejoin.record([me], Duration::from_micros(100), None);
        assert_eq!(rejoin.awaited(me), None);
    }

    #[test]
    fn the_wait_is_bounded_whatever_the_commit_took() {
        let (me, other, mut rejoin) = two_threads();
        rejoin.record([other], Duration::from_secs(1), None);
        assert_eq!(rejoin.awaited(me), Some((MAX_WAIT, vec![other])));
    }

    #[test]
    fn a_wait_nobody_joined_stops_waiting_until_writers_meet_again() {
        let (me, other, mut rejoin) = two_threads();
        rejoin.record([other], Duration::from_micros(100), None);
        assert!(rejoin.awaited(me).is_some());
        // `me` waited for `other`, who did not come.
        rejoin.record([me], Duration::from_micros(100), Some(false));
        rejoin.record([other], Duration::from_micros(100), None);
        assert_eq!(rejoin.awaited(me), None, "a lone group is no sign");
        rejoin.record([other, me], Duration::from_micros(100), None);
        assert!(
            rejoin.awaited(me).is_some(),
            "two writers met without waiting"
        );
        // A wait some thread joined keeps groups waiting.
        rejoin.record([me, other], Duration::from_micros(100), Some(true));
        assert!(rejoin.awaited(me).is_some());
    }

    /// The wait in the write path (`db/write.rs`'s `rejoin`). Each test acts while a leader
    /// waits, and lets the wait last `WAIT` rather than [`MAX_WAIT`]: a test thread off the
    /// processor for a millisecond (on a loaded machine) missed the wait, or came after it had
    /// ended.
    mod in_the_write_path {
        use std::sync::Arc;
        use std::thread::{self, ThreadId};
        use std::time::Duration;

        use super::other_thread;
        use crate::db::DB;
        use crate::env::MemEnv;
        use crate::error::Error;
        use crate::options::{Options, WriteOptions};

        const SYNCED: WriteOptions = WriteOptions { sync: true };

        /// The longest a synced group waits here: long enough for a test thread to get the
        /// processor within it on a loaded machine. A test whose waits run out pays it in full
        /// each time, so such a test runs few rounds.
        const WAIT: Duration = Duration::from_millis(200);

        /// A database whose synced groups wait up to [`WAIT`].
        fn open() -> DB {
            let options = Options {
                env: Arc::new(MemEnv::new()),
                create_if_missing: true,
                ..Options::default()
            };
            let db = DB::open("/db", options).unwrap();
            db.inner.state.lock().sync_rejoin.max_wait = WAIT;
            db
        }

        /// Makes `threads` the last synced group, whose commit took a second: the next synced
        /// group waits for them (up to [`WAIT`]).
        fn last_group(db: &DB, threads: &[ThreadId]) {
            let mut state = db.inner.state.lock();
            state
                .sync_rejoin
                .record(threads.iter().copied(), Duration::from_secs(1), Some(true));
        }

        /// Waits until `leader`'s write is in its wait for the last group's threads, then runs
        /// `then` with the state mutex held: the wait cannot end before the leader's next look
        /// at the queue, after `then`. Fails the test if the leader finished unseen in its wait.
        fn once_waiting<T>(
            db: &DB,
            leader: &thread::ScopedJoinHandle<'_, T>,
            then: impl FnOnce(&mut crate::db::DbState),
        ) {
            loop {
                let mut state = db.inner.state.lock();
                if state.sync_rejoin.in_wait {
                    then(&mut state);
                    return;
                }
                assert!(
                    !leader.is_finished(),
                    "the leader's write finished unseen in its wait"
                );
                drop(state);
                thread::yield_now();
            }
        }

        /// Found in review: a writer queued while the leader waited was taken into its group
        /// even when a background error was set meanwhile, and acknowledged (50 of 50 rounds).
        /// Here the error is set during every leader's wait, which only the error can end
        /// early (the awaited thread never comes), and the next write queues during it.
        #[test]
        fn a_write_begun_after_a_background_error_gets_the_error() {
            let db = open();
            let gone = other_thread();
            for round in 0..20 {
                db.inner.state.lock().bg_error = None;
                last_group(&db, &[gone]);
                thread::scope(|scope| {
                    let leader = scope.spawn(|| db.put_opt(&SYNCED, b"leader", b"v"));
                    once_waiting(&db, &leader, |state| {
                        state.bg_error = Some(Error::InvalidArgument("a job failed".into()));
                    });
                    let after = db.put_opt(&SYNCED, format!("after{round}").as_bytes(), b"v");
                    assert!(
                        matches!(&after, Err(Error::InvalidArgument(why)) if why == "a job failed"),
                        "round {round}: a write begun after the background error got {after:?}"
                    );
                    let _ = leader.join().unwrap();
                });
            }
            db.inner.state.lock().bg_error = None;
        }

        /// Found in review: an awaited thread that came back with a write that does not sync
        /// joined the group uncounted, so the leader waited out its limit and then stopped
        /// waiting for good (20 of 20 rounds). Here the other awaited thread never comes, so
        /// every wait runs out (a few rounds of [`WAIT`]); the groups keep waiting only if the
        /// joined write counted.
        #[test]
        fn an_awaited_thread_joining_with_a_write_that_does_not_sync_counts() {
            let db = open();
            let me = thread::current().id();
            let gone = other_thread();
            for round in 0..3 {
                last_group(&db, &[me, gone]);
                thread::scope(|scope| {
                    let leader = scope.spawn(|| db.put_opt(&SYNCED, b"leader", b"v"));
                    once_waiting(&db, &leader, |_| {});
                    db.put(format!("unsynced{round}").as_bytes(), b"v").unwrap();
                    leader.join().unwrap().unwrap();
                });
                assert!(
                    db.inner.state.lock().sync_rejoin.waiting,
                    "round {round}: groups stopped waiting after a wait this thread joined"
                );
            }
        }
    }
}
