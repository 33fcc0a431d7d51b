//! Holding a background job in the middle of its work: an env whose hook stops the first table
//! append made on a chosen kind of thread once armed, until the test lets it go; and, while
//! told to, fails the table appends of those threads.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use strata::testing::{EnvOp, HookEnv};
use strata::Env;

/// Whether the calling thread is one of a compaction's (a compaction thread's, or a sub-range's
/// scoped thread).
pub fn on_a_compaction_thread() -> bool {
    let name = std::thread::current().name().map(str::to_owned);
    name.is_some_and(|n| n.starts_with("strata-bg-compact") || n == "strata-bg-sub")
}

/// The switches the hook reads.
struct Switches {
    armed: AtomicBool,
    failing: AtomicBool,
    hold: Mutex<Option<(mpsc::Sender<()>, mpsc::Receiver<()>)>>,
}

/// An env over another that holds one table append (see the module documentation).
pub struct Hold {
    env: HookEnv,
    switches: Arc<Switches>,
    held: mpsc::Receiver<()>,
    release: mpsc::Sender<()>,
}

impl Hold {
    /// Over `inner`, for table appends made on threads where `on_thread()` holds. A `FaultEnv`
    /// goes inside, not around: it keeps a lock over each append, which a held one would keep.
    pub fn new(inner: Arc<dyn Env>, on_thread: fn() -> bool) -> Hold {
        let (held_tx, held) = mpsc::channel();
        let (release, release_rx) = mpsc::channel();
        let switches = Arc::new(Switches {
            armed: AtomicBool::new(false),
            failing: AtomicBool::new(false),
            hold: Mutex::new(Some((held_tx, release_rx))),
        });
        let hook = Arc::clone(&switches);
        let env = HookEnv::new(inner, move |call| {
            let table = call.path.extension().is_some_and(|e| e == "ldb");
            if call.op != EnvOp::Append || !table || !on_thread() {
                return Ok(());
            }
            if hook.armed.swap(false, Ordering::AcqRel) {
                let (held, release) = hook.hold.lock().unwrap().take().unwrap();
                held.send(()).unwrap();
                // A test that fails drops the sender, which ends the wait too.
                let _ = release.recv();
            } else if hook.failing.load(Ordering::Acquire) {
                return Err(strata::Error::io(
                    "injected table write error",
                    std::io::Error::other("injected"),
                ));
            }
            Ok(())
        });
        Hold {
            env,
            switches,
            held,
            release,
        }
    }

    /// The env to open the database with.
    pub fn env(&self) -> &HookEnv {
        &self.env
    }

    /// Holds the next table append (once).
    pub fn arm(&self) {
        self.switches.armed.store(true, Ordering::Release);
    }

    /// Whether the append armed for is held now (true once).
    pub fn is_held(&self) -> bool {
        self.held.try_recv().is_ok()
    }

    /// Waits up to `timeout` for the append armed for to be held; whether it is (true once,
    /// as for [`Hold::is_held`]).
    pub fn wait_held(&self, timeout: Duration) -> bool {
        self.held.recv_timeout(timeout).is_ok()
    }

    /// Lets the held append go on.
    pub fn release(&self) {
        self.release.send(()).unwrap();
    }

    /// Fails table appends (other than the held one) while `failing`.
    pub fn fail_tables(&self, failing: bool) {
        self.switches.failing.store(failing, Ordering::Release);
    }
}
