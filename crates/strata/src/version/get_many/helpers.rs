//! The threads that help `get_many` look up its runs (see the parent module).
//!
//! One pool per process, made on first use: one thread fewer than the machine has cores (at
//! least one), so that with the caller there is one runner per core. The pool is the engine's
//! own, not rayon's global one: an application's rayon work never delays a batch, and a
//! batch never takes a thread the application's work is waiting for.
//!
//! Why helpers linger: waking a sleeping thread costs tens of microseconds on a virtual
//! machine (measured on this project's 2-core VM: median 25–35 µs, p99 beyond 100 µs, once
//! the thread has slept), a large share of a 100-key batch's ~200 µs. So a helper that
//! finds no batch posted keeps looking for up to [`LINGER`] before it goes back to the pool,
//! yielding its core to any other runnable thread meanwhile and leaving early once other
//! threads need the cores (`util/spin.rs`); batches that follow one another
//! then start on a helper that is already awake. A caller posts its batch and starts only as
//! many new helpers as are not awake already.
//!
//! Contract: helping is only ever an optimization. A caller claims runs itself and looks up
//! any run a helper has not started, so a batch no helper reaches (a race between posting and
//! a helper leaving, helpers busy with other batches) is still answered, on the caller alone.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::thread;
use std::time::Duration;

use parking_lot::Mutex;

use crate::util::spin::spin_until;

/// How long a helper with nothing to do keeps looking for a batch before it sleeps.
const LINGER: Duration = Duration::from_micros(200);

/// A batch of runs helpers can claim.
pub(super) trait Batch: Send + Sync {
    /// Claims runs and looks them up until none is left to claim.
    fn claim_runs(&self);
    /// Whether a run is still unclaimed.
    fn has_unclaimed(&self) -> bool;
}

/// The process's helpers: the pool and the batches posted for it.
pub(super) struct Helpers {
    pool: rayon::ThreadPool,
    /// Batches posted and maybe not fully claimed, oldest first.
    posted: Mutex<Vec<Weak<dyn Batch>>>,
    /// Bumped at every post: helpers watch it instead of taking the lock.
    posts: AtomicU64,
    /// Helpers awake (claiming runs or lingering).
    awake: AtomicUsize,
}

impl Helpers {
    /// The process's helpers, started on first use; `None` when the pool could not be made
    /// (every run is then looked up on the caller).
    pub(super) fn get() -> Option<&'static Helpers> {
        static HELPERS: OnceLock<Option<Helpers>> = OnceLock::new();
        HELPERS
            .get_or_init(|| {
                let cores = thread::available_parallelism().map_or(1, |n| n.get());
                rayon::ThreadPoolBuilder::new()
                    .num_threads(cores.saturating_sub(1).max(1))
                    .thread_name(|i| format!("strata-get-many-{i}"))
                    .build()
                    .ok()
                    .map(|pool| Helpers {
                        pool,
                        posted: Mutex::new(Vec::new()),
                        posts: AtomicU64::new(0),
                        awake: AtomicUsize::new(0),
                    })
            })
            .as_ref()
    }

    /// Helper threads in the pool.
    pub(super) fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// Offers `batch` to up to `wanted` helpers: awake ones find it posted, and new ones are
    /// started for the rest.
    pub(super) fn post(&'static self, batch: &Arc<dyn Batch>, wanted: usize) {
        self.posted.lock().push(Arc::downgrade(batch));
        // SeqCst here and where a helper leaves: of a post and a helper leaving at once, at
        // least one sees the other (the poster the helper gone, or the helper the post).
        self.posts.fetch_add(1, Ordering::SeqCst);
        let awake = self.awake.load(Ordering::SeqCst);
        for _ in awake..wanted {
            self.pool.spawn(move || self.help());
        }
    }

    /// Takes `batch` off the posted list (its caller has claimed every run).
    pub(super) fn withdraw(&self, batch: &Arc<dyn Batch>) {
        let target = Arc::downgrade(batch);
        self.posted.lock().retain(|w| !w.ptr_eq(&target));
    }

    /// The oldest posted batch with a run left to claim, dropping those without one.
    fn next_batch(&self) -> Option<Arc<dyn Batch>> {
        let mut posted = self.posted.lock();
        while let Some(first) = posted.first() {
            match first.upgrade() {
                Some(batch) if batch.has_unclaimed() => return Some(batch),
                _ => {
                    posted.remove(0);
                }
            }
        }
        None
    }

    /// A helper's stay: claims runs of posted batches until none has been posted for
    /// [`LINGER`] (or spinning stops paying: `util/spin.rs`).
    fn help(&self) {
        self.awake.fetch_add(1, Ordering::SeqCst);
        loop {
            // Read before draining: a batch posted meanwhile changes it.
            let seen = self.posts.load(Ordering::SeqCst);
            while let Some(batch) = self.next_batch() {
                batch.claim_runs();
            }
            if spin_until(LINGER, || self.posts.load(Ordering::SeqCst) != seen) {
                continue;
            }
            self.awake.fetch_sub(1, Ordering::SeqCst);
            // A batch posted while this helper was leaving may have counted on it: stay.
            if self.posts.load(Ordering::SeqCst) == seen {
                return;
            }
            self.awake.fetch_add(1, Ordering::SeqCst);
        }
    }
}
