//! Running the stress workload: one writer thread per workload thread, plus one thread that
//! compacts a random thread's key range every couple of seconds.
//!
//! Each writer continues its thread's ops from where verification found it, one database call
//! per op (`put`, `delete` or `write` of a batch; every `sync_every`-th op with `sync`), and
//! after each acknowledgment appends the thread's progress to the journal, then applies the op
//! to its own copy of the thread's state. One op in sixteen is followed by a `get` of a key it
//! wrote, which must return exactly the thread's state (no other thread writes its keys).

use std::collections::BTreeMap;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::journal::{Journal, Progress};
use super::report::{Violation, ViolationKind};
use super::verify::{apply, describe, Touch};
use super::workload::{OpKind, Rng, Scratch, Workload};
use strata::{Result, WriteBatch, WriteOptions, DB};

/// What a run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunSummary {
    /// Ops acknowledged by the database (and recorded in the journal).
    pub ops: u64,
    /// Of those, ops written with `sync`.
    pub synced_ops: u64,
    /// Single puts.
    pub puts: u64,
    /// Single deletes.
    pub deletes: u64,
    /// Batches.
    pub batches: u64,
    /// Reads made right after a write to check it.
    pub reads_checked: u64,
    /// `compact_range` calls that completed.
    pub compactions: u64,
    /// Wall time of the run.
    pub elapsed: Duration,
    /// Reads that did not return what was just written; the run stops at the first.
    pub violations: Vec<Violation>,
}

/// How long and how hard to run.
pub(crate) struct Plan<'a> {
    pub(crate) workload: Workload,
    /// Threads to run: `0..threads`.
    pub(crate) threads: u32,
    pub(crate) duration: Duration,
    pub(crate) sync_every: u64,
    pub(crate) max_ops_per_thread: Option<u64>,
    /// Where each thread resumes (missing: from the start).
    pub(crate) progress: &'a BTreeMap<u32, Progress>,
    pub(crate) states: &'a BTreeMap<u32, Vec<Option<Touch>>>,
}

#[derive(Default)]
struct Counters {
    ops: AtomicU64,
    synced_ops: AtomicU64,
    puts: AtomicU64,
    deletes: AtomicU64,
    batches: AtomicU64,
    reads_checked: AtomicU64,
    compactions: AtomicU64,
}

/// Runs `plan` against `db`, recording progress in `journal`. Stops at the deadline, after
/// `max_ops_per_thread`, at the first database error (returned) or the first violation
/// (in the summary).
pub(crate) fn run_workload(db: &DB, journal: &Journal, plan: &Plan<'_>) -> Result<RunSummary> {
    let start = Instant::now();
    let deadline = start + plan.duration;
    let stop = AtomicBool::new(false);
    let counters = Counters::default();
    let violations = Mutex::new(Vec::new());
    let errors = Mutex::new(Vec::new());
    let writing = AtomicU32::new(plan.threads);
    std::thread::scope(|scope| {
        for thread in 0..plan.threads {
            let (stop, counters, violations, errors) = (&stop, &counters, &violations, &errors);
            let writing = &writing;
            scope.spawn(move || {
                let writer = Writer {
                    db,
                    journal,
                    plan,
                    thread,
                    stop,
                    counters,
                    violations,
                };
                let outcome = writer.run(deadline);
                writing.fetch_sub(1, Ordering::AcqRel);
                if let Err(e) = outcome {
                    stop.store(true, Ordering::Release);
                    errors.lock().push(e);
                }
            });
        }
        let (stop, counters, errors, writing) = (&stop, &counters, &errors, &writing);
        scope.spawn(move || {
            let done = || {
                stop.load(Ordering::Acquire)
                    || Instant::now() >= deadline
                    || writing.load(Ordering::Acquire) == 0
            };
            if let Err(e) = compactor(db, plan, &done, counters) {
                stop.store(true, Ordering::Release);
                errors.lock().push(e);
            }
        });
    });
    if let Some(e) = errors.into_inner().into_iter().next() {
        return Err(e);
    }
    let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
    Ok(RunSummary {
        ops: get(&counters.ops),
        synced_ops: get(&counters.synced_ops),
        puts: get(&counters.puts),
        deletes: get(&counters.deletes),
        batches: get(&counters.batches),
        reads_checked: get(&counters.reads_checked),
        compactions: get(&counters.compactions),
        elapsed: start.elapsed(),
        violations: violations.into_inner(),
    })
}

struct Writer<'a> {
    db: &'a DB,
    journal: &'a Journal,
    plan: &'a Plan<'a>,
    thread: u32,
    stop: &'a AtomicBool,
    counters: &'a Counters,
    violations: &'a Mutex<Vec<Violation>>,
}

impl Writer<'_> {
    fn run(&self, deadline: Instant) -> Result<()> {
        let workload = &self.plan.workload;
        let thread = self.thread;
        let mut progress = self.plan.progress.get(&thread).copied().unwrap_or_default();
        let mut state = self
            .plan
            .states
            .get(&thread)
            .cloned()
            .unwrap_or_else(|| vec![None; workload.keys as usize]);
        let mut scratch = Scratch::default();
        let mut key = Vec::new();
        let mut done = 0u64;
        while !self.stop.load(Ordering::Acquire)
            && Instant::now() < deadline
            && self.plan.max_ops_per_thread.is_none_or(|max| done < max)
        {
            let index = progress.acked;
            let kind = workload.op(thread, index, &mut scratch.writes);
            let sync = self.plan.sync_every > 0 && (index + 1) % self.plan.sync_every == 0;
            let options = WriteOptions { sync };
            match (kind, scratch.writes.first()) {
                (OpKind::Put, Some(w)) => {
                    key.clear();
                    workload.write_key(thread, w.slot, &mut key);
                    scratch.value.clear();
                    workload.write_value(thread, index, 0, w.slot, &mut scratch.value);
                    self.db.put_opt(&options, &key, &scratch.value)?;
                    self.counters.puts.fetch_add(1, Ordering::Relaxed);
                }
                (OpKind::Delete, Some(w)) => {
                    key.clear();
                    workload.write_key(thread, w.slot, &mut key);
                    self.db.delete_opt(&options, &key)?;
                    self.counters.deletes.fetch_add(1, Ordering::Relaxed);
                }
                (OpKind::DeleteRange, _) => {
                    let batch = op_batch(workload, thread, index, &mut scratch);
                    self.db.write_opt(&options, &batch)?;
                    self.counters.deletes.fetch_add(1, Ordering::Relaxed);
                }
                _ => {
                    let batch = op_batch(workload, thread, index, &mut scratch);
                    self.db.write_opt(&options, &batch)?;
                    self.counters.batches.fetch_add(1, Ordering::Relaxed);
                }
            }
            progress.acked = index + 1;
            if sync {
                progress.synced = index + 1;
                self.counters.synced_ops.fetch_add(1, Ordering::Relaxed);
            }
            self.journal.record(thread, progress, sync)?;
            self.counters.ops.fetch_add(1, Ordering::Relaxed);
            done += 1;
            apply(workload, thread, index, &mut state, &mut scratch);
            if Rng::new(workload.seed, u64::from(thread), index, 0x7265).below(16) == 0 {
                self.check_read(index, &state, &mut scratch)?;
            }
        }
        Ok(())
    }

    /// Reads back the first key op `index` wrote and compares it with the thread's state.
    fn check_read(&self, index: u64, state: &[Option<Touch>], scratch: &mut Scratch) -> Result<()> {
        let workload = &self.plan.workload;
        let Some(slot) = scratch.writes.first().map(|w| w.slot) else {
            return Ok(());
        };
        let key = workload.key(self.thread, slot);
        let found = self.db.get(&key)?;
        self.counters.reads_checked.fetch_add(1, Ordering::Relaxed);
        let expected = state.get(slot as usize).copied().flatten();
        let expected_bytes = match expected {
            Some(t) if t.put => {
                scratch.value.clear();
                workload.write_value(self.thread, t.op, t.pos, slot, &mut scratch.value);
                Some(scratch.value.as_slice())
            }
            _ => None,
        };
        if found.as_deref() == expected_bytes {
            return Ok(());
        }
        let found_state = describe(workload, found.as_deref());
        let expected_state = Touch::expected(expected);
        self.violations.lock().push(Violation {
            kind: ViolationKind::LostWrite,
            thread: Some(self.thread),
            key,
            op: Some(index),
            expected: Some(expected_state),
            found: found_state,
            note: format!("read right after op {index} was acknowledged, while running"),
        });
        self.stop.store(true, Ordering::Release);
        Ok(())
    }
}

/// The writes of op `index` of `thread` (generated into `scratch.writes`) as one batch: a
/// range delete's is its one range-delete record.
pub(crate) fn op_batch(
    workload: &Workload,
    thread: u32,
    index: u64,
    scratch: &mut Scratch,
) -> WriteBatch {
    let kind = workload.op(thread, index, &mut scratch.writes);
    let mut batch = WriteBatch::new();
    let mut key = Vec::new();
    if let (OpKind::DeleteRange, Some(first), Some(last)) =
        (kind, scratch.writes.first(), scratch.writes.last())
    {
        let mut end = Vec::new();
        workload.write_key(thread, first.slot, &mut key);
        workload.write_range_end(thread, last.slot, &mut end);
        batch.delete_range(&key, &end);
        return batch;
    }
    for (pos, w) in scratch.writes.iter().enumerate() {
        key.clear();
        workload.write_key(thread, w.slot, &mut key);
        if w.put {
            scratch.value.clear();
            workload.write_value(thread, index, pos as u8, w.slot, &mut scratch.value);
            batch.put(&key, &scratch.value);
        } else {
            batch.delete(&key);
        }
    }
    batch
}

/// Every 1–3 s, compacts the key range of a random thread, so crashes also land inside manual
/// compactions.
fn compactor(db: &DB, plan: &Plan<'_>, done: &dyn Fn() -> bool, counters: &Counters) -> Result<()> {
    let workload = &plan.workload;
    if plan.threads == 0 || workload.keys == 0 {
        return Ok(());
    }
    let mut rng = Rng::new(
        std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish(),
        0,
        0,
        0,
    );
    loop {
        let pause = Instant::now() + Duration::from_millis(1000 + rng.below(2000));
        while Instant::now() < pause {
            if done() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let thread = rng.below(u64::from(plan.threads)) as u32;
        let begin = workload.key(thread, 0);
        let end = workload.key(thread, workload.keys - 1);
        db.compact_range(Some(&begin), Some(&end))?;
        counters.compactions.fetch_add(1, Ordering::Relaxed);
    }
}
