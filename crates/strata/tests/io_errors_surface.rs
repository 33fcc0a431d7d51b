//! Every injected I/O error surfaces, and none costs an acknowledged write.
//!
//! Each trial preloads a database (over a `FaultEnv` on a `MemEnv`, 64 KiB write buffer, so
//! there are tables on several levels and flushes and compactions keep running), then arms one
//! fault — EIO, ENOSPC or a short write, on the `n`th operation of a kind or on all of them
//! (a full disk) — either while the database runs a workload of writes, reads, scans and
//! `compact_range`s, or while it is being reopened. Then it checks:
//! - **surfaces**: a call that met a fault itself (on the caller's thread: the open, a write,
//!   a get, a scan) fails; a fault met by background work (a flush, a compaction) shows up in
//!   a later call (`compact_range` and a probe write are run last so it has one to show up in).
//!   Faults the engine may absorb are exempt: a failed removal of an obsolete file (retried at
//!   the next open), anything on the info `LOG`, and a background thread's failure to create a
//!   log (it switches the memtable only for garbage collection of value files, and leaves the
//!   switch to the next write or background look when it cannot: nothing is lost);
//! - **sticks**: once a write fails with an error other than a failure to create a new log
//!   (which leaves nothing behind), every later write fails too;
//! - **reads stay right**: every read that succeeds returns what the acknowledged writes say,
//!   and once the fault clears every read succeeds again;
//! - **no live file is deleted**: every table the current version lists exists;
//! - **nothing acknowledged is lost**: after the fault clears, the database reopens cleanly and
//!   holds exactly the acknowledged writes, plus at most one write that failed after the last
//!   acknowledged one (its record may have reached the log before its sync failed).
//!
//! Trials whose seed has bit 1 set keep values of 200 bytes or more in value files, so faults
//! also hit value-file appends, syncs, creations, reads (by gets, scans and garbage
//! collection) and removals.
//!
//! `STRATA_IO_TRIALS` sets the trials per fault and phase (default 30); `STRATA_IO_SEED` reruns
//! one seed (as a failure reports it) in both phases.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::collections::BTreeMap;
use std::path::Path;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use strata::testing::{FaultEnv, InjectedError, InjectedFault, OpKind};
use strata::{Options, ReadOptions, ValueSeparation, WriteOptions, DB};
use support::fault_env;
use support::files::{log_tail, numbered_files};
use support::history::{History, Op};
use support::state::{live_tables, read_state, scan, Model};
use support::trials::trials;

const DIR: &str = "/db";
const KEYS: u32 = 500;
const DEFAULT_TRIALS: u64 = 30;

type Counts = [u64; OpKind::ALL.len()];

fn counts(env: &FaultEnv) -> Counts {
    OpKind::ALL.map(|kind| env.op_count(kind))
}

fn index(kind: OpKind) -> usize {
    OpKind::ALL.iter().position(|k| *k == kind).unwrap()
}

/// When the fault is armed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// While the open database runs a workload.
    Running,
    /// While the database is being reopened (recovery).
    Open,
}

/// A 64 KiB write buffer and small blocks and tables, so flushes and compactions keep running;
/// values of 200 bytes or more in value files when `value_separation`.
fn options(env: &FaultEnv, reuse_logs: bool, value_separation: bool) -> Options {
    Options {
        value_separation: value_separation.then(|| ValueSeparation::new(200)),
        write_buffer_size: 64 << 10,
        block_size: 1024,
        max_file_size: 1 << 20,
        reuse_logs,
        ..support::options(env)
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

fn all_keys() -> Vec<Vec<u8>> {
    (0..KEYS).map(key).collect()
}

/// Whether a fault on `path` must surface: faults on the info log are absorbed by design.
fn is_database_file(path: &Path) -> bool {
    !path
        .file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("LOG"))
}

/// Whether a fault must surface: all but failed removals (of obsolete files, retried at the
/// next open), faults on the info log, and a background thread's failed creation of a log
/// (`write::switch_memtable_for_collection`, retried later).
fn must_surface(fault: &InjectedFault) -> bool {
    let background_log = fault.kind == OpKind::Open
        && fault.path.extension().is_some_and(|e| e == "log")
        && fault.thread.starts_with("strata-bg");
    fault.kind != OpKind::Remove && is_database_file(&fault.path) && !background_log
}

/// Tables the current version names that are not on disk. Background compactions may run
/// meanwhile and delete their inputs at once, so a table counts only if it is live both before
/// and after the directory is listed: a table leaves the version for good, so one live at both
/// moments was live while the listing was taken.
fn live_tables_missing(db: &DB, env: &FaultEnv) -> Vec<u64> {
    let before = live_tables(db);
    let on_disk = numbered_files(env, Path::new(DIR), ".ldb");
    let after = live_tables(db);
    before
        .intersection(&after)
        .filter(|number| !on_disk.contains(number))
        .copied()
        .collect()
}

/// Figures for the report.
#[derive(Default)]
struct Tally {
    trials: u64,
    /// Faults injected, by kind and error.
    injected: BTreeMap<String, u64>,
    /// Faults that had to surface, by where the trial stood.
    surfaced_in_open: u64,
    surfaced_in_workload: u64,
    /// Faults exempt from surfacing (obsolete-file removal, info log, a background log).
    absorbed: u64,
    /// Faults met only by the final `compact_range` and probe write (or background work after).
    late: u64,
    /// Faults met by the caller's own thread, each failing the call that met it.
    met_by_caller: u64,
    failed_writes: u64,
    acked_writes: u64,
    maybe_write_present: u64,
}

struct Trial<'a> {
    env: FaultEnv,
    rng: StdRng,
    seed: u64,
    kind: OpKind,
    error: InjectedError,
    phase: Phase,
    /// `None`: every operation of the kind fails (a full disk, a dead device).
    n: Option<u64>,
    reuse_logs: bool,
    /// Values of 200 bytes or more go to value files (seeds with bit 1 set).
    value_separation: bool,
    history: History,
    /// The acknowledged state: `history.base` plus every acknowledged op.
    model: Model,
    /// Every error a call returned, in order, with the call's name.
    errors: Vec<String>,
    /// A write failed with an error that must stick: every later write must fail.
    sticky: Option<String>,
    tally: &'a mut Tally,
}

impl Trial<'_> {
    fn random_key(&mut self) -> Vec<u8> {
        key(self.rng.gen_range(0..KEYS))
    }

    fn random_op(&mut self, tag: &str) -> Op {
        let count = if self.rng.gen_bool(0.2) {
            self.rng.gen_range(2..6)
        } else {
            1
        };
        let n = self.history.ops.len();
        let mut updates = Vec::new();
        for p in 0..count {
            let key = self.random_key();
            let value = (!self.rng.gen_bool(0.2)).then(|| {
                let mut v = format!("{tag}{}o{n}p{p}|", self.seed).into_bytes();
                let len = if self.rng.gen_bool(0.05) {
                    self.rng.gen_range(2_000..9_000)
                } else {
                    self.rng.gen_range(0..300)
                };
                v.resize(v.len() + len, b'a' + (n % 26) as u8);
                v
            });
            updates.push((key, value));
        }
        Op {
            range_deletes: Vec::new(),
            updates,
            sync: self.rng.gen_bool(0.1),
            acked: false,
        }
    }

    fn record_error(&mut self, call: &str, e: &strata::Error) {
        self.errors.push(format!("{call}: {e}"));
    }

    /// Runs one call; a fault this thread met during it must make it fail.
    fn call<T>(&mut self, name: &str, f: impl FnOnce() -> strata::Result<T>) -> strata::Result<T> {
        let mark = self.env.injected_faults().len();
        let result = f();
        let here = std::thread::current().name().map(str::to_owned);
        let met: Vec<InjectedFault> = self.env.injected_faults()[mark..]
            .iter()
            .filter(|f| must_surface(f) && Some(&f.thread) == here.as_ref())
            .cloned()
            .collect();
        if let Err(e) = &result {
            self.record_error(name, e);
            self.tally.met_by_caller += met.len() as u64;
        } else {
            assert!(
                met.is_empty(),
                "{}: {name} met {met:?} and succeeded",
                self.context()
            );
        }
        result
    }

    /// One write: recorded in the history, checked for stickiness.
    fn write(&mut self, db: &DB, tag: &str) -> bool {
        let mut op = self.random_op(tag);
        let result = self.call("write", || {
            db.write_opt(&WriteOptions { sync: op.sync }, &op.batch())
        });
        op.acked = result.is_ok();
        if let Some(first) = &self.sticky {
            assert!(
                !op.acked,
                "seed {}: a write succeeded after the sticky error {first}",
                self.seed
            );
        }
        match &result {
            Ok(()) => {
                op.apply(&mut self.model);
                self.tally.acked_writes += 1;
            }
            Err(e) => {
                self.tally.failed_writes += 1;
                let text = e.to_string();
                // Failing to create a new log or value file changes nothing: the next write
                // may try again.
                let transient =
                    text.contains("create") && (text.contains(".log") || text.contains(".vlog"));
                if !transient {
                    self.sticky.get_or_insert(text);
                }
            }
        }
        self.history.ops.push(op);
        result.is_ok()
    }

    /// Writes, reads, scans and compactions; every read that succeeds must match the model.
    fn workload(&mut self, db: &DB, ops: usize, tag: &str) {
        for _ in 0..ops {
            match self.rng.gen_range(0..100) {
                0..=69 => {
                    self.write(db, tag);
                }
                70..=94 => {
                    let key = self.random_key();
                    if let Ok(got) = self.call("get", || db.get(&key)) {
                        assert_eq!(
                            got.as_ref(),
                            self.model.get(&key),
                            "seed {}: get {} disagrees with the acknowledged writes",
                            self.seed,
                            String::from_utf8_lossy(&key)
                        );
                    }
                }
                95..=98 => self.scan(db),
                _ => {
                    let _ = self.call("compact_range", || db.compact_range(None, None));
                }
            }
        }
    }

    fn scan(&mut self, db: &DB) {
        let scanned = self.call("scan", || scan(db, &ReadOptions::default()));
        let Ok(seen) = scanned else {
            return;
        };
        let first_diff = self
            .model
            .keys()
            .chain(seen.keys())
            .find(|k| self.model.get(*k) != seen.get(*k));
        assert!(
            first_diff.is_none(),
            "{}: a scan saw {} entries, not the {} acknowledged; first difference at {:?}; \
             errors: {:?}",
            self.context(),
            seen.len(),
            self.model.len(),
            first_diff.map(|k| String::from_utf8_lossy(k).into_owned()),
            self.errors
        );
    }

    fn arm(&self) {
        match self.n {
            Some(n) => self.env.fail_after(self.kind, n, self.error),
            None => self.env.fail_always(self.kind, self.error),
        }
    }

    /// The faults injected so far that must surface.
    fn must_surface(&self) -> Vec<InjectedFault> {
        self.env
            .injected_faults()
            .into_iter()
            .filter(must_surface)
            .collect()
    }

    fn options(&self) -> Options {
        options(&self.env, self.reuse_logs, self.value_separation)
    }

    fn context(&self) -> String {
        format!(
            "seed {} ({:?} {:?} {} at #{:?}, reuse_logs {}, value separation {})",
            self.seed,
            self.phase,
            self.kind,
            error_name(self.error),
            self.n,
            self.reuse_logs,
            self.value_separation
        )
    }

    fn run(&mut self, typical: &mut [Counts; 2]) {
        // Preload without faults: tables on several levels, a log with data in it.
        let db = DB::open(DIR, self.options()).unwrap();
        let preload = self.rng.gen_range(300..1_500);
        for _ in 0..preload {
            assert!(self.write(&db, "pre"), "{}: preload failed", self.context());
        }
        if self.rng.gen_bool(0.3) {
            db.compact_range(None, None).unwrap();
        }
        let state = self.model.clone();
        self.history.restart(state);

        let mut before = counts(&self.env);
        let mut phase_counts = None;
        let db = match self.phase {
            Phase::Running => {
                self.arm();
                Some(db)
            }
            Phase::Open => {
                drop(db);
                before = counts(&self.env);
                self.arm();
                let options = self.options();
                let opened = self.call("open", || DB::open(DIR, options));
                phase_counts = Some(counts(&self.env));
                opened.ok()
            }
        };
        let opened = db.is_some();
        if let Some(db) = &db {
            let ops = self.rng.gen_range(200..1_200);
            self.workload(db, ops, "w");
        }
        let after = phase_counts.unwrap_or_else(|| counts(&self.env));
        let surfacing = self.must_surface();
        if let Some(db) = &db {
            // Give background faults a call to show up in.
            let _ = self.call("final compact_range", || db.compact_range(None, None));
            self.write(db, "probe");
            let missing = live_tables_missing(db, &self.env);
            assert!(
                missing.is_empty(),
                "{}: live tables deleted: {missing:?}; errors: {:?}",
                self.context(),
                self.errors
            );
            // A read fault leaves no trace: once faults clear, every read works (a background
            // error stops writes, not reads).
            self.env.clear_faults();
            match read_state(db, &all_keys()) {
                Ok(state) => assert!(
                    state == self.model,
                    "{}: reads after the fault cleared disagree with the acknowledged writes",
                    self.context()
                ),
                Err(e) => panic!(
                    "{}: reads fail after the fault cleared: {e}",
                    self.context()
                ),
            }
        }
        drop(db);
        if self.env.injected_faults().is_empty() {
            // Not reached: remember how far this phase goes, to aim the next trials.
            typical[self.phase as usize] = std::array::from_fn(|i| after[i] - before[i]);
        }
        self.tally_faults(&surfacing, opened);
        if !surfacing.is_empty() {
            assert!(
                !self.errors.is_empty(),
                "{}: injected {surfacing:?} but no call failed",
                self.context()
            );
        }

        // The fault clears: the database reopens cleanly with every acknowledged write.
        self.env.clear_faults();
        let db = DB::open(DIR, self.options()).unwrap_or_else(|e| {
            panic!(
                "{}: reopen after the fault cleared failed: {e}\nerrors: {:?}\nLOG:\n{}",
                self.context(),
                self.errors,
                log_tail(&**self.env.inner(), Path::new(DIR), 30)
            )
        });
        self.check_state(&db);
        let missing = live_tables_missing(&db, &self.env);
        assert!(
            missing.is_empty(),
            "{}: tables missing after reopen: {missing:?}",
            self.context()
        );
        // And it works: more writes, a compaction, another reopen.
        self.sticky = None;
        let state = read_state(&db, &[]).unwrap();
        self.model = state.clone();
        self.history.restart(state);
        for _ in 0..50 {
            assert!(
                self.write(&db, "after"),
                "{}: write after recovery failed",
                self.context()
            );
        }
        db.compact_range(None, None).unwrap();
        drop(db);
        let db = DB::open(DIR, self.options()).unwrap();
        assert!(
            read_state(&db, &all_keys()).unwrap() == self.model,
            "{}: second reopen lost writes",
            self.context()
        );
    }

    /// The reopened state must be the acknowledged one, plus at most one write that failed
    /// after the last acknowledged write.
    fn check_state(&mut self, db: &DB) {
        let state = match read_state(db, &all_keys()) {
            Ok(state) => state,
            Err(e) => panic!("{}: reading after reopen failed: {e}", self.context()),
        };
        if state == self.model {
            return;
        }
        let last_acked = self.history.acked_len();
        for op in &self.history.ops[last_acked..] {
            let mut maybe = self.model.clone();
            op.apply(&mut maybe);
            if maybe == state {
                self.tally.maybe_write_present += 1;
                return;
            }
        }
        panic!(
            "{}: reopened state is not the acknowledged one\n{}\nerrors: {:?}\nLOG:\n{}",
            self.context(),
            self.history.explain(&state, last_acked),
            self.errors,
            log_tail(&**self.env.inner(), Path::new(DIR), 30)
        );
    }

    fn tally_faults(&mut self, surfacing: &[InjectedFault], opened: bool) {
        let all = self.env.injected_faults();
        for f in &all {
            *self
                .tally
                .injected
                .entry(format!("{:?} {}", f.kind, error_name(f.error)))
                .or_default() += 1;
        }
        let exempt = all.iter().filter(|f| !must_surface(f)).count() as u64;
        let surfaced = surfacing.len() as u64;
        self.tally.absorbed += exempt;
        self.tally.late += all.len() as u64 - exempt - surfaced;
        if opened {
            self.tally.surfaced_in_workload += surfaced;
        } else {
            self.tally.surfaced_in_open += surfaced;
        }
    }
}

fn error_name(error: InjectedError) -> &'static str {
    match error {
        InjectedError::Io => "EIO",
        InjectedError::NoSpace => "ENOSPC",
        InjectedError::ShortWrite => "short write",
        InjectedError::Panic => "panic",
    }
}

/// The trial seeds for one fault and phase: `STRATA_IO_SEED` alone if set, else one per trial.
fn seeds(salt: u64) -> Vec<u64> {
    let count = trials("STRATA_IO_TRIALS", DEFAULT_TRIALS);
    support::trials::seeds("STRATA_IO_SEED", count, salt)
}

/// Runs the trials for one fault kind and error, in both phases, once and persistent.
fn run_fault(kind: OpKind, error: InjectedError) {
    let mut tally = Tally::default();
    // Operations per phase in a fault-free run, to aim `n`; a first guess until measured.
    let mut typical = [
        [40, 400, 1_500, 40, 1, 10, 0, 10],
        [10, 60, 60, 4, 2, 6, 1, 2],
    ];
    let salt = (index(kind) as u64) << 8 | error as u64;
    for phase in [Phase::Running, Phase::Open] {
        for seed in seeds(salt ^ (phase as u64) << 16) {
            let mut rng = StdRng::seed_from_u64(seed);
            let bound = typical[phase as usize][index(kind)];
            let n = if rng.gen_bool(0.2) {
                None
            } else {
                Some(rng.gen_range(1..=bound + bound / 5 + 1))
            };
            let reuse_logs = rng.gen_bool(0.5);
            let mut t = Trial {
                env: fault_env(),
                rng,
                seed,
                kind,
                error,
                phase,
                n,
                reuse_logs,
                value_separation: seed & 2 != 0,
                history: History::default(),
                model: Model::new(),
                errors: Vec::new(),
                sticky: None,
                tally: &mut tally,
            };
            t.run(&mut typical);
            tally.trials += 1;
        }
    }
    eprintln!(
        "I/O errors ({kind:?}, {}): {} trials passed; injected {:?}: surfaced {} at open and \
         {} while running, exempt {} (obsolete-file removal, info log, background log), {} met by \
         the final \
         calls, {} failing the very call that met them; {} writes acknowledged, {} failed, \
         {} failed writes found after reopen",
        error_name(error),
        tally.trials,
        tally.injected,
        tally.surfaced_in_open,
        tally.surfaced_in_workload,
        tally.absorbed,
        tally.late,
        tally.met_by_caller,
        tally.acked_writes,
        tally.failed_writes,
        tally.maybe_write_present,
    );
}

#[test]
fn append_eio() {
    run_fault(OpKind::Append, InjectedError::Io);
}

#[test]
fn append_enospc() {
    run_fault(OpKind::Append, InjectedError::NoSpace);
}

#[test]
fn append_short_write() {
    run_fault(OpKind::Append, InjectedError::ShortWrite);
}

#[test]
fn sync_eio() {
    run_fault(OpKind::Sync, InjectedError::Io);
}

#[test]
fn sync_enospc() {
    run_fault(OpKind::Sync, InjectedError::NoSpace);
}

#[test]
fn open_eio() {
    run_fault(OpKind::Open, InjectedError::Io);
}

#[test]
fn open_enospc() {
    run_fault(OpKind::Open, InjectedError::NoSpace);
}

#[test]
fn rename_eio() {
    run_fault(OpKind::Rename, InjectedError::Io);
}

#[test]
fn remove_eio() {
    run_fault(OpKind::Remove, InjectedError::Io);
}

#[test]
fn read_eio() {
    run_fault(OpKind::Read, InjectedError::Io);
}

#[test]
fn sync_dir_eio() {
    run_fault(OpKind::SyncDir, InjectedError::Io);
}

#[test]
fn lock_eio() {
    run_fault(OpKind::Lock, InjectedError::Io);
}
