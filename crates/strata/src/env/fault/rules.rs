//! The fault rules of a [`FaultEnv`](super::FaultEnv): operation counters, armed failures, the
//! crash point, and the record of every failure injected.
//!
//! Each counted operation asks [`Faults::on_op`] for a [`Verdict`] before it touches the inner
//! env. Once a crash rule has fired the process is dead: every later operation gets
//! [`Verdict::Dead`] until the env is revived (power loss, or `clear_faults`).
//!
//! Not thread-safe by itself: the `FaultEnv` keeps it inside a mutex.

use std::path::{Path, PathBuf};

use super::{InjectedError, OpKind, KINDS};

/// A failure injected into one operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InjectedFault {
    /// The kind of the failed operation.
    pub kind: OpKind,
    /// The error it reported.
    pub error: InjectedError,
    /// The file (or directory, or rename target) it was about.
    pub path: PathBuf,
    /// The name of the thread that met it (its id when unnamed): tells a caller's own calls
    /// from background work.
    pub thread: String,
}

/// The operation after which a crash rule killed the process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrashPoint {
    /// Its kind.
    pub kind: OpKind,
    /// The file (or directory, or rename target) it was about.
    pub path: PathBuf,
}

/// What an operation may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Verdict {
    /// Go ahead.
    Proceed,
    /// Fail with this injected error (already recorded).
    Fail(InjectedError),
    /// The process has crashed: fail, and change nothing.
    Dead,
}

/// Which paths a crash rule counts.
pub(super) type PathFilter = Box<dyn Fn(&Path) -> bool + Send>;

/// An armed crash: the operations of `kind` on paths `filter` accepts, `left` to go until the
/// last one.
struct CrashRule {
    kind: OpKind,
    filter: PathFilter,
    left: u64,
}

/// A failure rule for one kind.
#[derive(Clone, Copy)]
struct Rule {
    /// Operations left until the failing one (1: the next), or `None` to fail all.
    countdown: Option<u64>,
    error: InjectedError,
}

/// Counters, rules and records; see the module documentation.
#[derive(Default)]
pub(super) struct Faults {
    counts: [u64; KINDS],
    rules: [Option<Rule>; KINDS],
    crash: Option<CrashRule>,
    /// Set once the process is dead; holds the operation that fired the crash rule, if one did.
    dead: Option<Option<CrashPoint>>,
    injected: Vec<InjectedFault>,
}

impl Faults {
    /// Counts one operation of `kind` on `path` and says what it may do.
    pub(super) fn on_op(&mut self, kind: OpKind, path: &Path) -> Verdict {
        let i = kind as usize;
        self.counts[i] += 1;
        if self.dead.is_some() {
            return Verdict::Dead;
        }
        if let Some(rule) = self
            .crash
            .as_mut()
            .filter(|r| r.kind == kind && (r.filter)(path))
        {
            rule.left -= 1;
            if rule.left == 0 {
                // This operation is the process's last.
                self.crash = None;
                self.dead = Some(Some(CrashPoint {
                    kind,
                    path: path.to_path_buf(),
                }));
            }
        }
        let Some(rule) = self.rules[i] else {
            return Verdict::Proceed;
        };
        match rule.countdown {
            Some(left) if left > 1 => {
                self.rules[i] = Some(Rule {
                    countdown: Some(left - 1),
                    ..rule
                });
                return Verdict::Proceed;
            }
            Some(_) => self.rules[i] = None,
            None => {}
        }
        let thread = std::thread::current();
        self.injected.push(InjectedFault {
            kind,
            error: rule.error,
            path: path.to_path_buf(),
            thread: thread
                .name()
                .map_or_else(|| format!("{:?}", thread.id()), str::to_owned),
        });
        Verdict::Fail(rule.error)
    }

    /// A non-counted operation (creating a directory, flushing or closing a writer): only
    /// refused once the process is dead.
    pub(super) fn is_dead(&self) -> bool {
        self.dead.is_some()
    }

    pub(super) fn set_rule(&mut self, kind: OpKind, countdown: Option<u64>, error: InjectedError) {
        self.rules[kind as usize] = Some(Rule { countdown, error });
    }

    pub(super) fn set_crash(&mut self, kind: OpKind, n: u64, filter: PathFilter) {
        self.crash = Some(CrashRule {
            kind,
            filter,
            left: n.max(1),
        });
    }

    pub(super) fn crash_now(&mut self) {
        self.crash = None;
        self.dead.get_or_insert(None);
    }

    /// Disarms the crash rule and brings the process back to life.
    pub(super) fn revive(&mut self) {
        self.crash = None;
        self.dead = None;
    }

    /// Disarms every rule, the crash rule included, and revives the process.
    pub(super) fn clear(&mut self) {
        self.rules = [None; KINDS];
        self.revive();
    }

    pub(super) fn count(&self, kind: OpKind) -> u64 {
        self.counts[kind as usize]
    }

    pub(super) fn counts(&self) -> [u64; KINDS] {
        self.counts
    }

    /// `Some` once dead: the operation that fired the crash rule (`None` for `crash_now`).
    pub(super) fn crash_point(&self) -> Option<Option<CrashPoint>> {
        self.dead.clone()
    }

    pub(super) fn injected(&self) -> &[InjectedFault] {
        &self.injected
    }
}
