//! [`RaceEnv`]: stages one race with a writer deterministically. A hook runs once, just before
//! the first open of a file a predicate accepts, so a test can have the writer delete that file
//! between the moment a reader learns of it and the moment it opens it. Built on
//! `strata::testing::HookEnv` over the real file system (so, like it, it maps nothing and cannot
//! hard-link: a checkpoint through it copies its tables).

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use strata::testing::{EnvOp, HookEnv};
use strata::{Env, PosixEnv};

/// Which opens the armed hook waits for, and what it does then (given the path being opened).
type Armed = (
    Box<dyn Fn(&Path) -> bool + Send>,
    Box<dyn FnOnce(&Path) + Send>,
);

/// An env over the real file system that runs an armed hook (once) just before a matching open.
pub struct RaceEnv {
    env: Arc<dyn Env>,
    armed: Arc<Mutex<Option<Armed>>>,
    fired: Arc<AtomicUsize>,
}

impl RaceEnv {
    pub fn new() -> RaceEnv {
        let armed: Arc<Mutex<Option<Armed>>> = Arc::default();
        let fired = Arc::new(AtomicUsize::new(0));
        let (slot, count) = (Arc::clone(&armed), Arc::clone(&fired));
        let env = HookEnv::new(Arc::new(PosixEnv::new()), move |call| {
            if matches!(
                call.op,
                EnvOp::NewSequentialFile | EnvOp::NewRandomAccessFile
            ) {
                let mut slot = slot.lock();
                if slot.as_ref().is_some_and(|(matches, _)| matches(call.path)) {
                    let (_, hook) = slot.take().unwrap();
                    drop(slot);
                    hook(call.path);
                    count.fetch_add(1, Ordering::SeqCst);
                }
            }
            Ok(())
        });
        RaceEnv {
            env: Arc::new(env),
            armed,
            fired,
        }
    }

    /// The env to open databases with.
    pub fn env(&self) -> Arc<dyn Env> {
        Arc::clone(&self.env)
    }

    /// Runs `hook` (once) just before the next open `matches` accepts, on the thread that
    /// makes it.
    pub fn arm(
        &self,
        matches: impl Fn(&Path) -> bool + Send + 'static,
        hook: impl FnOnce(&Path) + Send + 'static,
    ) {
        *self.armed.lock() = Some((Box::new(matches), Box::new(hook)));
    }

    /// How many times an armed hook ran.
    pub fn fired(&self) -> usize {
        self.fired.load(Ordering::SeqCst)
    }
}
