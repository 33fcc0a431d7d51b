//! What verification reports: the verdict per thread and every violation, each naming the
//! thread, key and op with the expected and found states of the key.

use std::fmt;

/// Which crash the database is verified against: what it must have kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CrashModel {
    /// The process died (`SIGKILL`, abort) but the machine did not: every acknowledged write,
    /// synced or not, must be present.
    #[default]
    ProcessCrash,
    /// The machine lost power: sync-acknowledged writes must be present, the rest a prefix.
    PowerLoss,
}

impl fmt::Display for CrashModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CrashModel::ProcessCrash => "process crash: every acknowledged op must be visible",
            CrashModel::PowerLoss => "power loss: every sync-acknowledged op must be visible",
        })
    }
}

/// What is wrong, in one word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ViolationKind {
    /// An op that had to survive is not visible: the key holds an older state.
    LostWrite,
    /// A key deleted by an op that had to survive holds a value again.
    ResurrectedDeletion,
    /// A later op of the thread is visible while an earlier one is not.
    Hole,
    /// A value no write of the workload stored at this key (bad checksum, wrong identity,
    /// wrong bytes).
    NeverWritten,
    /// The value of an op the thread had not yet issued when it stopped.
    NotIssued,
    /// A key the workload never writes.
    StrayKey,
    /// A scan and a point read of the same key saw different things.
    ReadsDisagree,
}

impl fmt::Display for ViolationKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ViolationKind::LostWrite => "lost write",
            ViolationKind::ResurrectedDeletion => "resurrected deletion",
            ViolationKind::Hole => "hole",
            ViolationKind::NeverWritten => "value never written",
            ViolationKind::NotIssued => "op never issued",
            ViolationKind::StrayKey => "stray key",
            ViolationKind::ReadsDisagree => "reads disagree",
        })
    }
}

/// The state of one key, expected or found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyState {
    /// No value; when expected, `deleted_by` names the op that deleted it (if any did).
    Absent {
        /// The deleting op.
        deleted_by: Option<u64>,
    },
    /// The value stored by write `pos` of op `op` of the key's thread.
    Written {
        /// The op.
        op: u64,
        /// The write's position within the op (0 unless it is a batch).
        pos: u8,
    },
    /// A value that is not one the workload wrote here.
    Unreadable {
        /// Its length.
        len: usize,
        /// What is wrong with it.
        reason: String,
    },
}

impl fmt::Display for KeyState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyState::Absent { deleted_by: None } => f.write_str("absent"),
            KeyState::Absent {
                deleted_by: Some(op),
            } => write!(f, "absent (deleted by op {op})"),
            KeyState::Written { op, pos } => write!(f, "value of op {op} (write #{pos})"),
            KeyState::Unreadable { len, reason } => write!(f, "a {len}-byte value: {reason}"),
        }
    }
}

/// One broken promise, precise enough to go and look.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// What kind.
    pub kind: ViolationKind,
    /// The thread whose key it is (`None` for a stray key).
    pub thread: Option<u32>,
    /// The key.
    pub key: Vec<u8>,
    /// The op the violation is about (the lost or missing one, or the value's), if any.
    pub op: Option<u64>,
    /// The state the key should be in, when one state is required.
    pub expected: Option<KeyState>,
    /// The state found.
    pub found: KeyState,
    /// More context (what makes the expectation binding).
    pub note: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(thread) = self.thread {
            write!(f, "thread {thread}: ")?;
        }
        write!(f, "{} at key {}", self.kind, self.key.escape_ascii())?;
        if let Some(op) = self.op {
            write!(f, " (op {op})")?;
        }
        f.write_str(": ")?;
        if let Some(expected) = &self.expected {
            write!(f, "expected {expected}, ")?;
        }
        write!(f, "found {}", self.found)?;
        if !self.note.is_empty() {
            write!(f, "; {}", self.note)?;
        }
        Ok(())
    }
}

/// The verdict on one thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadVerdict {
    /// The thread.
    pub thread: u32,
    /// Ops acknowledged, by the journal.
    pub acknowledged: u64,
    /// Ops acknowledged by a sync write, by the journal.
    pub synced: u64,
    /// How many ops the database shows (`0..visible` applied); `None` if no allowed prefix
    /// matches.
    pub visible: Option<u64>,
}

/// The result of verifying a stress database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyReport {
    /// The crash verified against.
    pub model: CrashModel,
    /// Every thread of the journal or the database, in order.
    pub threads: Vec<ThreadVerdict>,
    /// Keys the scan saw.
    pub keys: u64,
    /// Bytes of a torn journal tail that were ignored.
    pub torn_journal_bytes: u64,
    /// Everything wrong; empty if the database kept every promise.
    pub violations: Vec<Violation>,
}

impl VerifyReport {
    /// True if there is no violation.
    pub fn is_ok(&self) -> bool {
        self.violations.is_empty()
    }

    /// Ops acknowledged, over all threads.
    pub fn acknowledged(&self) -> u64 {
        self.threads.iter().map(|t| t.acknowledged).sum()
    }

    /// Ops sync-acknowledged, over all threads.
    pub fn synced(&self) -> u64 {
        self.threads.iter().map(|t| t.synced).sum()
    }

    /// Ops visible, over the threads where a prefix matched.
    pub fn visible(&self) -> u64 {
        self.threads.iter().filter_map(|t| t.visible).sum()
    }
}

/// Violations shown by `Display`; the rest are counted.
const SHOWN_VIOLATIONS: usize = 100;

impl fmt::Display for VerifyReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "verified {} threads, {} keys: {} ops acknowledged ({} synced), {} visible; {} violations",
            self.threads.len(),
            self.keys,
            self.acknowledged(),
            self.synced(),
            self.visible(),
            self.violations.len()
        )?;
        writeln!(f, "  crash model: {}", self.model)?;
        if self.torn_journal_bytes > 0 {
            writeln!(
                f,
                "  journal: ignored a torn tail of {} bytes",
                self.torn_journal_bytes
            )?;
        }
        for t in &self.threads {
            let visible = t
                .visible
                .map_or("none matches".to_owned(), |v| v.to_string());
            writeln!(
                f,
                "  thread {}: acknowledged {}, synced {}, visible {visible}",
                t.thread, t.acknowledged, t.synced
            )?;
        }
        for v in self.violations.iter().take(SHOWN_VIOLATIONS) {
            writeln!(f, "VIOLATION {v}")?;
        }
        if self.violations.len() > SHOWN_VIOLATIONS {
            writeln!(
                f,
                "... and {} more violations",
                self.violations.len() - SHOWN_VIOLATIONS
            )?;
        }
        Ok(())
    }
}
