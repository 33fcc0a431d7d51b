//! Verifying a stress database against its journal.
//!
//! Every key is read twice, by one full scan (checksums verified) and by a point `get` of every
//! slot of every thread; the two must agree. Each value must be one the workload wrote at that
//! key (checksum, identity and bytes recomputed). Then, per thread, the slots must together
//! show the state that exactly ops `0..n` leave behind, for some `n` in `lower..=acked + 1`:
//!
//! - `lower` is what must have survived: every acknowledged op (`acked`) after a process
//!   crash, since each acknowledged write reached the operating system; the sync-acknowledged
//!   ones (`synced`) after a power loss ([`CrashModel`]);
//! - `acked + 1`: the journal lags the database by at most the one op a thread had in flight.
//!
//! The search replays the thread's ops once, tracking how many slots differ from the replayed
//! state, so it costs one pass over the thread's history and memory for one state. When no `n`
//! fits, the report says why, key by key: a slot no allowed prefix explains is a lost write (or
//! a resurrected deletion); slots each explainable but only by different prefixes are a hole.

use std::collections::BTreeMap;

use super::journal::Progress;
use super::report::{CrashModel, KeyState, ThreadVerdict, VerifyReport, Violation, ViolationKind};
use super::workload::{Scratch, Workload};
use crc_fast::crc32_iscsi as crc32c;
use strata::{ReadOptions, Result, DB};

/// The last write to a slot in a replayed state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Touch {
    pub(crate) op: u64,
    pub(crate) pos: u8,
    pub(crate) put: bool,
}

impl Touch {
    pub(super) fn expected(slot: Option<Touch>) -> KeyState {
        match slot {
            None => KeyState::Absent { deleted_by: None },
            Some(t) if !t.put => KeyState::Absent {
                deleted_by: Some(t.op),
            },
            Some(t) => KeyState::Written {
                op: t.op,
                pos: t.pos,
            },
        }
    }
}

/// Applies op `index` of `thread` to `state` (one entry per slot).
pub(crate) fn apply(
    workload: &Workload,
    thread: u32,
    index: u64,
    state: &mut [Option<Touch>],
    scratch: &mut Scratch,
) {
    workload.op(thread, index, &mut scratch.writes);
    for (pos, w) in scratch.writes.iter().enumerate() {
        if let Some(slot) = state.get_mut(w.slot as usize) {
            *slot = Some(Touch {
                op: index,
                pos: pos as u8,
                put: w.put,
            });
        }
    }
}

/// What the scan found in one slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    Absent,
    Written {
        op: u64,
        pos: u8,
    },
    /// Already reported as a violation; matches any state so it is not reported again.
    Excluded,
}

impl Seen {
    fn matches(self, slot: Option<Touch>) -> bool {
        match (self, slot) {
            (Seen::Excluded, _) => true,
            (Seen::Absent, None) => true,
            (Seen::Absent, Some(t)) => !t.put,
            (Seen::Written { op, pos }, Some(t)) => t.put && t.op == op && t.pos == pos,
            (Seen::Written { .. }, None) => false,
        }
    }

    fn found(self) -> KeyState {
        match self {
            Seen::Absent | Seen::Excluded => KeyState::Absent { deleted_by: None },
            Seen::Written { op, pos } => KeyState::Written { op, pos },
        }
    }
}

struct ThreadSeen {
    slots: Vec<Seen>,
    /// Length and CRC of each slot's value, to compare the scan with point reads.
    prints: Vec<Option<(usize, u32)>>,
}

impl ThreadSeen {
    fn new(keys: u32) -> ThreadSeen {
        ThreadSeen {
            slots: vec![Seen::Absent; keys as usize],
            prints: vec![None; keys as usize],
        }
    }
}

/// A verification, with the state of every thread that matched a prefix (what a run resumes
/// from).
pub(crate) struct Verified {
    pub(crate) report: VerifyReport,
    pub(crate) states: BTreeMap<u32, Vec<Option<Touch>>>,
}

/// Verifies `db` against the journal's `progress` (see the module documentation).
pub(crate) fn verify_db(
    db: &DB,
    workload: &Workload,
    progress: &BTreeMap<u32, Progress>,
    model: CrashModel,
    torn_journal_bytes: u64,
) -> Result<Verified> {
    let mut scratch = Scratch::default();
    let mut violations = Vec::new();
    let (mut seen, keys) = scan(db, workload, progress, &mut scratch, &mut violations)?;
    for &thread in progress.keys() {
        seen.entry(thread)
            .or_insert_with(|| ThreadSeen::new(workload.keys));
    }
    point_reads(db, workload, &seen, &mut violations)?;

    let mut threads = Vec::with_capacity(seen.len());
    let mut states = BTreeMap::new();
    for (&thread, thread_seen) in &seen {
        let p = progress.get(&thread).copied().unwrap_or_default();
        let visible = search_prefix(
            workload,
            thread,
            p,
            model,
            thread_seen,
            &mut scratch,
            &mut violations,
        );
        if visible.is_some() {
            let state = thread_seen
                .slots
                .iter()
                .map(|s| match *s {
                    Seen::Written { op, pos } => Some(Touch { op, pos, put: true }),
                    Seen::Absent | Seen::Excluded => None,
                })
                .collect();
            states.insert(thread, state);
        }
        threads.push(ThreadVerdict {
            thread,
            acknowledged: p.acked,
            synced: p.synced,
            visible,
        });
    }
    Ok(Verified {
        report: VerifyReport {
            model,
            threads,
            keys,
            torn_journal_bytes,
            violations,
        },
        states,
    })
}

/// Reads every key, checking that each is a workload key holding a value written there.
fn scan(
    db: &DB,
    workload: &Workload,
    progress: &BTreeMap<u32, Progress>,
    scratch: &mut Scratch,
    violations: &mut Vec<Violation>,
) -> Result<(BTreeMap<u32, ThreadSeen>, u64)> {
    let mut seen: BTreeMap<u32, ThreadSeen> = BTreeMap::new();
    let mut keys = 0u64;
    let options = ReadOptions {
        verify_checksums: true,
        fill_cache: false,
        ..ReadOptions::default()
    };
    let mut it = db.iter_opt(&options);
    it.seek_to_first();
    while it.valid() {
        keys += 1;
        let (key, value) = (it.key(), it.value());
        let Some((thread, slot)) = workload.parse_key(key) else {
            violations.push(Violation {
                kind: ViolationKind::StrayKey,
                thread: None,
                key: key.to_vec(),
                op: None,
                expected: Some(KeyState::Absent { deleted_by: None }),
                found: describe(workload, Some(value)),
                note: "no thread of this workload writes such a key".to_owned(),
            });
            it.next();
            continue;
        };
        let thread_seen = seen
            .entry(thread)
            .or_insert_with(|| ThreadSeen::new(workload.keys));
        if let Some(print) = thread_seen.prints.get_mut(slot as usize) {
            *print = Some((value.len(), crc32c(value)));
        }
        let issued = progress.get(&thread).map_or(0, |p| p.acked) + 1;
        let state = match check_value(workload, thread, slot, value, issued, scratch) {
            Ok(state) => state,
            Err((kind, op, found, note)) => {
                violations.push(Violation {
                    kind,
                    thread: Some(thread),
                    key: key.to_vec(),
                    op,
                    expected: None,
                    found,
                    note,
                });
                Seen::Excluded
            }
        };
        if let Some(s) = thread_seen.slots.get_mut(slot as usize) {
            *s = state;
        }
        it.next();
    }
    it.status()?;
    Ok((seen, keys))
}

type ValueProblem = (ViolationKind, Option<u64>, KeyState, String);

/// Checks that `value`, found at `slot` of `thread`, is one the workload wrote there, by an op
/// below `issued`.
fn check_value(
    workload: &Workload,
    thread: u32,
    slot: u32,
    value: &[u8],
    issued: u64,
    scratch: &mut Scratch,
) -> std::result::Result<Seen, ValueProblem> {
    let unreadable = |reason: String| KeyState::Unreadable {
        len: value.len(),
        reason,
    };
    let id = workload.decode_value(value).map_err(|reason| {
        let note = "no write stores such bytes".to_owned();
        (ViolationKind::NeverWritten, None, unreadable(reason), note)
    })?;
    if id.thread != thread || id.slot != slot {
        let reason = format!(
            "it names write #{} of op {} of thread {} on slot {}",
            id.pos, id.op, id.thread, id.slot
        );
        let note = "a value stored under another key".to_owned();
        return Err((
            ViolationKind::NeverWritten,
            Some(id.op),
            unreadable(reason),
            note,
        ));
    }
    if !workload.is_written(id, value, scratch) {
        let reason = format!(
            "its checksum holds but op {} did not write these bytes at write #{}",
            id.op, id.pos
        );
        let note = "the value's bytes do not match its op".to_owned();
        return Err((
            ViolationKind::NeverWritten,
            Some(id.op),
            unreadable(reason),
            note,
        ));
    }
    let found = KeyState::Written {
        op: id.op,
        pos: id.pos,
    };
    if id.op >= issued {
        let note = format!(
            "the journal acknowledges {} ops, so at most op {} can have been issued",
            issued - 1,
            issued - 1
        );
        return Err((ViolationKind::NotIssued, Some(id.op), found, note));
    }
    Ok(Seen::Written {
        op: id.op,
        pos: id.pos,
    })
}

/// What a stored value is, without checking it against the workload.
pub(super) fn describe(workload: &Workload, value: Option<&[u8]>) -> KeyState {
    match value {
        None => KeyState::Absent { deleted_by: None },
        Some(value) => match workload.decode_value(value) {
            Ok(id) => KeyState::Written {
                op: id.op,
                pos: id.pos,
            },
            Err(reason) => KeyState::Unreadable {
                len: value.len(),
                reason,
            },
        },
    }
}

/// Reads every slot of every thread with `get`, comparing with what the scan saw.
fn point_reads(
    db: &DB,
    workload: &Workload,
    seen: &BTreeMap<u32, ThreadSeen>,
    violations: &mut Vec<Violation>,
) -> Result<()> {
    let options = ReadOptions {
        verify_checksums: true,
        fill_cache: false,
        ..ReadOptions::default()
    };
    let mut key = Vec::new();
    for (&thread, thread_seen) in seen {
        for (slot, &print) in thread_seen.prints.iter().enumerate() {
            key.clear();
            workload.write_key(thread, slot as u32, &mut key);
            let value = db.get_opt(&options, &key)?;
            let got = value.as_deref().map(|v| (v.len(), crc32c(v)));
            if got != print {
                violations.push(Violation {
                    kind: ViolationKind::ReadsDisagree,
                    thread: Some(thread),
                    key: key.clone(),
                    op: None,
                    expected: None,
                    found: describe(workload, value.as_deref()),
                    note: format!(
                        "found by get; the scan saw {}",
                        match print {
                            None => "no such key".to_owned(),
                            Some((len, crc)) => format!("a {len}-byte value with crc {crc:#010x}"),
                        }
                    ),
                });
            }
        }
    }
    Ok(())
}

/// Finds the largest `n` in `lower..=acked + 1` such that ops `0..n` of `thread` leave exactly
/// the state `seen` shows (not counting trailing ops with no visible effect); reports why when
/// there is none.
fn search_prefix(
    workload: &Workload,
    thread: u32,
    progress: Progress,
    model: CrashModel,
    seen: &ThreadSeen,
    scratch: &mut Scratch,
    violations: &mut Vec<Violation>,
) -> Option<u64> {
    let lower = match model {
        CrashModel::ProcessCrash => progress.acked,
        CrashModel::PowerLoss => progress.synced.min(progress.acked),
    };
    let upper = progress.acked + 1;
    let keys = seen.slots.len();
    let mut state = vec![None; keys];
    for index in 0..lower {
        apply(workload, thread, index, &mut state, scratch);
    }
    let base = state.clone();
    // Per slot: whether it matches the replayed state now, and the first and last `n` at
    // which it did.
    let mut matching: Vec<bool> = seen
        .slots
        .iter()
        .zip(&state)
        .map(|(s, &t)| s.matches(t))
        .collect();
    let mut first: Vec<Option<u64>> = matching.iter().map(|&m| m.then_some(lower)).collect();
    let mut last: Vec<Option<u64>> = vec![None; keys];
    let mut mismatched = matching.iter().filter(|&&m| !m).count();
    // The largest matching `n`, except that ops which change nothing a reader can see (a
    // delete of an absent key) do not count as visible.
    let mut best = None;
    let mut diverged = false;
    let mut touched = Vec::with_capacity(super::workload::MAX_BATCH);
    for n in lower..=upper {
        if mismatched == 0 && (best.is_none() || diverged) {
            best = Some(n);
            diverged = false;
        }
        if n == upper {
            break;
        }
        apply(workload, thread, n, &mut state, scratch);
        touched.clear();
        touched.extend(scratch.writes.iter().map(|w| w.slot as usize));
        touched.sort_unstable();
        touched.dedup();
        for &slot in &touched {
            let (Some(s), Some(&t), Some(m)) = (
                seen.slots.get(slot),
                state.get(slot),
                matching.get_mut(slot),
            ) else {
                continue;
            };
            let now = s.matches(t);
            if now == *m {
                continue;
            }
            *m = now;
            if now {
                mismatched -= 1;
                if let Some(f) = first.get_mut(slot) {
                    f.get_or_insert(n + 1);
                }
            } else {
                mismatched += 1;
                if let Some(l) = last.get_mut(slot) {
                    *l = Some(n);
                }
            }
        }
        diverged |= mismatched > 0;
    }
    if best.is_some() {
        return best;
    }
    for (l, &m) in last.iter_mut().zip(&matching) {
        if m {
            *l = Some(upper);
        }
    }
    let before = violations.len();
    let acked_note = |op: u64| {
        if op < progress.synced {
            format!("op {op} was sync-acknowledged")
        } else {
            format!("op {op} was acknowledged")
        }
    };
    for (slot, (&s, &f)) in seen.slots.iter().zip(&first).enumerate() {
        if f.is_some() {
            continue;
        }
        let expected = base.get(slot).copied().flatten();
        let key = workload.key(thread, slot as u32);
        let (kind, op, note) = match (s, expected) {
            (Seen::Written { op, .. }, Some(t)) if t.op == op => (
                ViolationKind::NeverWritten,
                Some(op),
                format!("a later write of the same op {op} overwrites this one"),
            ),
            (Seen::Written { op, .. }, _) if op >= lower => (
                ViolationKind::NeverWritten,
                Some(op),
                format!("a later write of the same op {op} overwrites this one"),
            ),
            (Seen::Written { .. }, Some(t)) if !t.put => (
                ViolationKind::ResurrectedDeletion,
                Some(t.op),
                acked_note(t.op),
            ),
            (_, Some(t)) => (ViolationKind::LostWrite, Some(t.op), acked_note(t.op)),
            (_, None) => (
                ViolationKind::LostWrite,
                None,
                "no acknowledged op explains this state".to_owned(),
            ),
        };
        violations.push(Violation {
            kind,
            thread: Some(thread),
            key,
            op,
            expected: Some(Touch::expected(expected)),
            found: s.found(),
            note,
        });
    }
    if violations.len() == before {
        violations.push(hole(
            workload, thread, lower, &base, seen, &first, &last, scratch,
        ));
    }
    None
}

/// Explains why slots that each match some prefix match no common one: the slot that needs
/// the longest prefix against one that cannot have it.
#[allow(clippy::too_many_arguments)]
fn hole(
    workload: &Workload,
    thread: u32,
    lower: u64,
    base: &[Option<Touch>],
    seen: &ThreadSeen,
    first: &[Option<u64>],
    last: &[Option<u64>],
    scratch: &mut Scratch,
) -> Violation {
    let (ahead, need) = first
        .iter()
        .enumerate()
        .filter_map(|(slot, f)| f.map(|f| (slot, f)))
        .max_by_key(|&(_, f)| f)
        .unwrap_or((0, lower));
    let ahead_key = workload.key(thread, ahead as u32);
    let ahead_found = seen.slots.get(ahead).map_or(Seen::Absent, |s| *s).found();
    let behind = last
        .iter()
        .enumerate()
        .filter_map(|(slot, l)| l.filter(|&l| l < need).map(|l| (slot, l)))
        .min_by_key(|&(_, l)| l);
    let Some((behind, shows)) = behind else {
        return Violation {
            kind: ViolationKind::Hole,
            thread: Some(thread),
            key: ahead_key,
            op: need.checked_sub(1),
            expected: None,
            found: ahead_found,
            note: "each key matches some prefix of the thread's ops, but no one prefix \
                   matches them all"
                .to_owned(),
        };
    };
    let mut state = base.to_vec();
    for index in lower..need {
        apply(workload, thread, index, &mut state, scratch);
    }
    let expected = state.get(behind).copied().flatten();
    Violation {
        kind: ViolationKind::Hole,
        thread: Some(thread),
        key: workload.key(thread, behind as u32),
        op: expected.map(|t| t.op),
        expected: Some(Touch::expected(expected)),
        found: seen.slots.get(behind).map_or(Seen::Absent, |s| *s).found(),
        note: format!(
            "key {} shows {ahead_found}, so ops 0..{need} must all be visible, \
             but this key shows the state after at most {shows} ops",
            ahead_key.escape_ascii()
        ),
    }
}
