//! Power loss at random moments never loses a synced write and never leaves a hole: after
//! every crash and reboot the database holds exactly the state after some prefix of the writes
//! it was given, and that prefix reaches at least the last write acknowledged with `sync` (or,
//! where open asks for repair, a salvage: below).
//!
//! Each round runs a random workload (puts, deletes, batches, some synced, now and then a
//! `compact_range`) over a `FaultEnv` on a `MemEnv`, with a 64 KiB write buffer so memtable
//! flushes and compactions happen all the time. The process is killed after the `n`th
//! operation of a random kind (an append, a sync, a file creation or removal, a rename, a
//! directory sync: inside WAL writes, flushes, compactions, manifest writes and `CURRENT`
//! replacement alike), or at a random moment; then the power fails (unsynced data dropped,
//! torn, or replaced by garbage, as the configuration says), recovery itself is sometimes
//! crashed the same way, and finally the database is reopened and its whole state is checked
//! against the recorded history. Every configuration runs with `reuse_logs` off and on. Where
//! garbage in the last manifest edit makes open ask for repair, the repaired database must
//! hold every synced write and nothing no write put there, but need not be a prefix: repair
//! salvages what an open would leave out (docs/guarantees.md).
//!
//! Rounds with an odd seed open the database with `Options::range_deletes` and delete ranges
//! now and then (alone or in a batch with other updates), so range tombstones go through the
//! same crashes in logs, flushes, compactions and recovery. Rounds whose seed has bit 1 set
//! keep values of 200 bytes or more (about one in five) in value files, so value-file appends
//! and syncs, garbage collection and the replay's pointer checks go through them too (and
//! crashes are aimed at value files as well); a paranoid reopen may then refuse a log whose
//! last values a torn tail cut, naming the value file, as it refuses a torn log.
//!
//! `STRATA_POWER_ROUNDS` sets the rounds per configuration (default 150); `STRATA_POWER_SEED`
//! runs one round with that seed (as a failure reports it) in each configuration.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::collections::BTreeMap;
use std::path::Path;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use strata::testing::{FaultEnv, OpKind, PowerLossMode};
use strata::{Env, Options, ValueSeparation, WriteOptions, DB};
use support::fault_env;
use support::files::log_tail;
use support::history::{History, Op};
use support::state::{read_state, Model};
use support::trials::trials;

const DIR: &str = "/db";
/// Distinct user keys; the first `HOT_KEYS` are written more often.
const KEYS: u32 = 800;
const HOT_KEYS: u32 = 60;
const CYCLES_PER_ROUND: usize = 3;
const DEFAULT_ROUNDS: u64 = 150;

type Counts = [u64; OpKind::ALL.len()];

/// Where a crash is aimed: weight, operation kind, file kind (`None`: any file, `n` bounded by
/// the count seen last time), bound on `n`.
type Target = (u32, OpKind, Option<&'static str>, u64);

/// Crash points while the database runs: WAL writes, flushes, compactions, manifest edits.
const WORKLOAD_TARGETS: &[Target] = &[
    (4, OpKind::Append, None, 0),
    (3, OpKind::Sync, None, 0),
    (1, OpKind::Open, None, 0),
    (1, OpKind::Remove, None, 0),
    (1, OpKind::SyncDir, None, 0),
    (2, OpKind::Append, Some("wal"), 1_000),
    (2, OpKind::Sync, Some("wal"), 60),
    (2, OpKind::Append, Some("table"), 300),
    (2, OpKind::Sync, Some("table"), 25),
    (3, OpKind::Append, Some("manifest"), 25),
    (3, OpKind::Sync, Some("manifest"), 25),
    (1, OpKind::Remove, Some("table"), 25),
    (1, OpKind::Remove, Some("wal"), 10),
    (2, OpKind::Append, Some("vlog"), 300),
    (2, OpKind::Sync, Some("vlog"), 25),
    (1, OpKind::Remove, Some("vlog"), 5),
];

/// Crash points inside recovery: log replay, its flushes, the new manifest, `CURRENT`.
const RECOVERY_TARGETS: &[Target] = &[
    (3, OpKind::Append, None, 0),
    (2, OpKind::Sync, None, 0),
    (1, OpKind::Open, None, 0),
    (1, OpKind::Read, None, 0),
    (1, OpKind::Remove, None, 0),
    (2, OpKind::Append, Some("table"), 60),
    (1, OpKind::Sync, Some("table"), 3),
    (2, OpKind::Append, Some("manifest"), 2),
    (2, OpKind::Sync, Some("manifest"), 2),
    (1, OpKind::Append, Some("CURRENT-temp"), 1),
    (1, OpKind::Sync, Some("CURRENT-temp"), 1),
    (2, OpKind::Rename, Some("CURRENT"), 1),
    (2, OpKind::SyncDir, Some("dir"), 2),
    (1, OpKind::Remove, Some("wal"), 3),
    (1, OpKind::Remove, Some("manifest"), 3),
    (1, OpKind::Sync, Some("vlog"), 2),
];

fn counts(env: &FaultEnv) -> Counts {
    OpKind::ALL.map(|kind| env.op_count(kind))
}

fn delta(after: &Counts, before: &Counts) -> Counts {
    std::array::from_fn(|i| after[i] - before[i])
}

/// What the tests report per configuration.
#[derive(Default)]
struct Tally {
    rounds: u64,
    power_losses: u64,
    /// Crash points by where they hit: "<op kind> <file kind>".
    crash_points: BTreeMap<String, u64>,
    recovery_crashes: u64,
    acked: u64,
    synced: u64,
    /// Acknowledged unsynced writes a power loss took away (allowed).
    lost_unsynced: u64,
    /// Reopens that needed repair (garbage in the last manifest edit).
    repairs: u64,
    /// Those of them whose state held every synced write but was no prefix (repair salvages).
    salvaged_repairs: u64,
    /// Paranoid reopens refused for a write-ahead log torn before its end, then done lenient.
    torn_log_refusals: u64,
    /// Those of them refused for a log naming a value a torn value-file tail cut.
    torn_value_refusals: u64,
}

/// The kind of database file `path` names, for the tally.
fn file_kind(path: &Path) -> &'static str {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    match name.as_deref() {
        None => "dir",
        Some(n) if n.ends_with(".log") => "wal",
        Some(n) if n.ends_with(".ldb") || n.ends_with(".sst") => "table",
        Some(n) if n.ends_with(".vlog") => "vlog",
        Some(n) if n.starts_with("MANIFEST") => "manifest",
        Some("CURRENT") => "CURRENT",
        Some(n) if n.ends_with(".dbtmp") => "CURRENT-temp",
        Some(n) if n.starts_with("LOG") => "info-log",
        Some("LOCK") => "lock",
        Some("db") => "dir",
        Some(_) => "other",
    }
}

/// The smallest value kept in a value file, in rounds that separate values.
const SEPARATED: usize = 200;

/// A 64 KiB write buffer and small blocks and tables, so flushes and compactions keep running.
fn options(env: &FaultEnv, reuse_logs: bool, paranoid: bool, extensions: Extensions) -> Options {
    Options {
        range_deletes: extensions.range_deletes,
        value_separation: extensions
            .value_separation
            .then(|| ValueSeparation::new(SEPARATED)),
        write_buffer_size: 64 << 10,
        block_size: 1024,
        max_file_size: 1 << 20,
        reuse_logs,
        paranoid_checks: paranoid,
        ..support::options(env)
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

fn all_keys() -> Vec<Vec<u8>> {
    (0..KEYS).map(key).collect()
}

/// The format extensions a round's database uses.
#[derive(Debug, Clone, Copy)]
struct Extensions {
    /// Range deletes (odd seeds).
    range_deletes: bool,
    /// Values in value files (seeds with bit 1 set).
    value_separation: bool,
}

impl Extensions {
    fn of_seed(seed: u64) -> Extensions {
        Extensions {
            range_deletes: seed % 2 == 1,
            value_separation: seed & 2 != 0,
        }
    }
}

/// One round: a fresh database through several crash cycles.
struct Round<'a> {
    env: FaultEnv,
    rng: StdRng,
    seed: u64,
    reuse_logs: bool,
    extensions: Extensions,
    mode: PowerLossMode,
    history: History,
    /// Operations of each kind in the last workload and the last open, to aim crash points.
    workload_counts: Counts,
    open_counts: Counts,
    tally: &'a mut Tally,
    /// What happened so far, for failure reports.
    trail: Vec<String>,
}

impl Round<'_> {
    fn random_key(&mut self) -> Vec<u8> {
        if self.rng.gen_bool(0.4) {
            key(self.rng.gen_range(0..HOT_KEYS))
        } else {
            key(self.rng.gen_range(0..KEYS))
        }
    }

    /// A value naming its write (round seed, cycle, op, position in the batch).
    fn value(&mut self, cycle: usize, op: usize, position: usize) -> Vec<u8> {
        let mut v = format!("s{}c{cycle}o{op}p{position}|", self.seed).into_bytes();
        let len = match self.rng.gen_range(0..50) {
            0 => self.rng.gen_range(2_000..12_000),
            1..=10 => self.rng.gen_range(200..1_200),
            _ => self.rng.gen_range(0..120),
        };
        let fill = self.rng.gen::<u8>();
        v.extend((0..len).map(|i| fill.wrapping_add((i % 7) as u8)));
        v
    }

    fn random_op(&mut self, cycle: usize, sync_p: f64) -> Op {
        let n = self.history.ops.len();
        let count = match self.rng.gen_range(0..10) {
            0..=1 => self.rng.gen_range(2..8),
            _ => 1,
        };
        let mut range_deletes = Vec::new();
        if self.extensions.range_deletes && self.rng.gen_bool(0.06) {
            let start = self.rng.gen_range(0..KEYS);
            let end = start + self.rng.gen_range(0..40);
            range_deletes.push((key(start), key(end)));
        }
        let mut updates = Vec::with_capacity(count);
        for position in 0..count {
            let key = self.random_key();
            let value = if self.rng.gen_bool(0.22) {
                None
            } else {
                Some(self.value(cycle, n, position))
            };
            updates.push((key, value));
        }
        Op {
            range_deletes,
            updates,
            sync: self.rng.gen_bool(sync_p),
            acked: false,
        }
    }

    /// Runs writes until `ops` are done or one fails (the process died), recording each.
    fn workload(&mut self, db: &DB, cycle: usize, ops: usize, crash_at_op: Option<usize>) {
        let sync_p = [0.0, 0.02, 0.1, 0.5][self.rng.gen_range(0..4)];
        for i in 0..ops {
            if crash_at_op == Some(i) {
                self.env.crash_now();
            }
            if self.rng.gen_ratio(1, 400) {
                let (a, b) = (self.random_key(), self.random_key());
                let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
                if db.compact_range(Some(&lo), Some(&hi)).is_err() {
                    return;
                }
            }
            let mut op = self.random_op(cycle, sync_p);
            let result = db.write_opt(&WriteOptions { sync: op.sync }, &op.batch());
            op.acked = result.is_ok();
            self.tally.acked += u64::from(op.acked);
            self.tally.synced += u64::from(op.acked && op.sync);
            self.history.ops.push(op);
            if result.is_err() {
                return;
            }
        }
    }

    /// Arms a crash after the `n`th operation of a kind picked from `targets` by weight, on any
    /// file or on one kind of file; `n` is drawn up to the target's bound, or for an untargeted
    /// kind from how many such operations the same phase did last time.
    fn arm_crash(&mut self, typical: Counts, targets: &[(u32, OpKind, Option<&'static str>, u64)]) {
        // Value files are aimed at only where there are some.
        let separated = self.extensions.value_separation;
        let targets: Vec<Target> = targets
            .iter()
            .filter(|t| separated || t.2 != Some("vlog"))
            .copied()
            .collect();
        let total: u32 = targets.iter().map(|t| t.0).sum();
        let mut pick = self.rng.gen_range(0..total);
        let mut chosen = targets[0];
        for &target in &targets {
            if pick < target.0 {
                chosen = target;
                break;
            }
            pick -= target.0;
        }
        let (_, kind, file, bound) = chosen;
        let bound = match file {
            Some(_) => bound,
            None => {
                let i = OpKind::ALL.iter().position(|k| *k == kind).unwrap();
                typical[i] + typical[i] / 5 + 1
            }
        };
        let n = self.rng.gen_range(1..=bound.max(1));
        match file {
            Some(target) => self
                .env
                .crash_after_matching(kind, n, move |path| file_kind(path) == target),
            None => self.env.crash_after(kind, n),
        }
        self.trail.push(format!(
            "armed crash after {kind:?} #{n} on {}",
            file.unwrap_or("any file")
        ));
    }

    /// Kills the process (if a crash rule did not already) and records where it died.
    fn kill(&mut self, recovery: bool) {
        let point = self.env.crash_point();
        let label = match &point {
            Some(Some(p)) => format!("{:?} {}", p.kind, file_kind(&p.path)),
            _ => "at a random moment".to_owned(),
        };
        self.trail.push(format!("crashed: {label}"));
        let label = if recovery {
            format!("recovery: {label}")
        } else {
            label
        };
        *self.tally.crash_points.entry(label).or_default() += 1;
        self.env.crash_now();
    }

    fn power_loss(&mut self) {
        let seed = self.rng.gen();
        self.env.simulate_power_loss(self.mode, seed).unwrap();
        self.tally.power_losses += 1;
    }

    fn paranoid(&mut self) -> bool {
        self.mode != PowerLossMode::GarbageTail && self.rng.gen_bool(0.25)
    }

    fn open(&mut self) -> strata::Result<DB> {
        let paranoid = self.paranoid();
        let before = counts(&self.env);
        let db = DB::open(
            DIR,
            options(&self.env, self.reuse_logs, paranoid, self.extensions),
        );
        if db.is_ok() {
            self.open_counts = delta(&counts(&self.env), &before);
        }
        self.trail.push(format!(
            "open (paranoid {paranoid}): {}",
            db.as_ref().map_or_else(|e| e.to_string(), |_| "ok".into())
        ));
        db
    }

    /// Reopens after a power loss, checks the state against the history, and restarts the
    /// history from it.
    fn reopen_and_check(&mut self) -> DB {
        self.env.clear_faults();
        let mut repaired = false;
        let db = match self.open() {
            Ok(db) => db,
            // Garbage where the last manifest edit was being written cannot be told from an
            // installed edit gone bad, so open refuses and asks for repair, which must then
            // keep every synced write; it salvages, so it may keep unsynced writes whose
            // predecessors were lost (checked below).
            Err(e) if self.repair_refusal(&e) => {
                self.trail.push(format!("repair after: {e}"));
                self.tally.repairs += 1;
                repaired = true;
                let options = options(&self.env, self.reuse_logs, false, self.extensions);
                if let Err(e) = strata::repair(DIR, &options) {
                    self.fail(&format!("repair failed: {e}"));
                }
                match self.open() {
                    Ok(db) => db,
                    Err(e) => self.fail(&format!("reopen after repair failed: {e}")),
                }
            }
            // The write-ahead log is written through a memory map (FaultEnv models its pages):
            // a power loss writes its unsynced pages back in any order, and may tear a record
            // before the end of the file, which paranoid checks refuse, naming the log. Without
            // them the open must keep a prefix of the history with every synced write.
            Err(e) if self.torn_log_refusal(&e) => {
                self.trail.push(format!("lenient open after: {e}"));
                self.tally.torn_log_refusals += 1;
                self.tally.torn_value_refusals += u64::from(e.to_string().contains(".vlog "));
                let options = options(&self.env, self.reuse_logs, false, self.extensions);
                match DB::open(DIR, options) {
                    Ok(db) => db,
                    Err(e) => self.fail(&format!("lenient reopen failed: {e}")),
                }
            }
            Err(e) => self.fail(&format!("reopen failed: {e}")),
        };
        let state = match read_state(&db, &all_keys()) {
            Ok(state) => state,
            Err(e) => self.fail(&format!("reading the reopened database failed: {e}")),
        };
        let min_len = self.history.synced_len();
        let prefixes = self.history.matching_prefixes(&state, min_len);
        let Some(&len) = prefixes.last() else {
            if repaired && self.history.salvaged(&state, min_len) {
                self.tally.salvaged_repairs += 1;
                self.trail
                    .push("verified: salvaged by repair, no prefix".into());
                self.history.restart(state);
                return db;
            }
            let why = self.history.explain(&state, min_len);
            drop(db);
            self.fail(&format!("state is no prefix of the history\n{why}"));
        };
        let acked = self.history.acked_len();
        self.tally.lost_unsynced += self.history.ops[len.min(acked)..acked]
            .iter()
            .filter(|op| op.acked)
            .count() as u64;
        self.trail.push(format!(
            "verified: prefix {len} of {} ops (synced {min_len})",
            self.history.ops.len()
        ));
        self.history.restart(state);
        db
    }

    /// Whether `e`, from an open after a power loss, refuses a manifest whose last edit
    /// garbage replaced and asks for repair (see `reopen_and_check`).
    fn repair_refusal(&self, e: &strata::Error) -> bool {
        self.mode == PowerLossMode::GarbageTail && e.to_string().contains("run repair")
    }

    /// Whether `e`, from a paranoid open after a power loss, refuses a write-ahead log whose
    /// mapped pages reached the disk out of order (see `reopen_and_check`), or one naming a
    /// value that a torn value-file tail cut (a write never synced).
    fn torn_log_refusal(&self, e: &strata::Error) -> bool {
        let text = e.to_string();
        let torn =
            text.contains(".log ") || (self.extensions.value_separation && text.contains(".vlog "));
        self.mode == PowerLossMode::TornTail && e.is_corruption() && torn
    }

    fn fail(&self, what: &str) -> ! {
        let inner: &dyn Env = &**self.env.inner();
        let mut files = inner.children(Path::new(DIR)).unwrap_or_default();
        files.sort();
        panic!(
            "seed {} (reuse_logs {}, {:?}, {:?}): {what}\ntrail:\n  {}\nfiles: {files:?}\nLOG \
             tail:\n{}",
            self.seed,
            self.reuse_logs,
            self.mode,
            self.extensions,
            self.trail.join("\n  "),
            log_tail(inner, Path::new(DIR), 40),
        );
    }

    fn run(&mut self) {
        let mut db = self.open().unwrap();
        self.workload_counts = [40, 0, 3_000, 80, 1, 10, 0, 1];
        for cycle in 0..CYCLES_PER_ROUND {
            // Crash the running database: after some operation, or at a random write.
            let ops = self.rng.gen_range(100..1_500);
            let mut crash_at_op = None;
            if self.rng.gen_bool(0.8) {
                self.arm_crash(self.workload_counts, WORKLOAD_TARGETS);
            } else {
                crash_at_op = Some(self.rng.gen_range(0..ops));
            }
            let before = counts(&self.env);
            self.workload(&db, cycle, ops, crash_at_op);
            if self.env.crash_point().is_none() {
                self.workload_counts = delta(&counts(&self.env), &before);
            }
            self.kill(false);
            drop(db);
            self.power_loss();

            // Sometimes crash the recovery too, once or twice.
            for _ in 0..2 {
                if !self.rng.gen_bool(0.4) {
                    break;
                }
                self.env.clear_faults();
                self.arm_crash(self.open_counts, RECOVERY_TARGETS);
                let opened = self.open();
                if let Err(e) = &opened {
                    // The refusals `reopen_and_check` accepts come before any crash point;
                    // the reopen after this attempt meets them again.
                    let refusal = self.torn_log_refusal(e) || self.repair_refusal(e);
                    if self.env.crash_point().is_none() && !refusal {
                        self.fail("open failed before its crash point");
                    }
                }
                self.tally.recovery_crashes += 1;
                self.kill(true);
                drop(opened);
                self.power_loss();
            }
            db = self.reopen_and_check();
        }
        drop(db);
    }
}

/// The round seeds of a configuration: `STRATA_POWER_SEED` alone if set, else one per round.
fn seeds(salt: u64) -> Vec<u64> {
    let count = trials("STRATA_POWER_ROUNDS", DEFAULT_ROUNDS);
    support::trials::seeds("STRATA_POWER_SEED", count, salt)
}

fn run_config(reuse_logs: bool, mode: PowerLossMode) {
    let mut tally = Tally::default();
    let salt = u64::from(reuse_logs) * 1_000_003 + mode as u64 * 7_919;
    for seed in seeds(salt) {
        let env = fault_env();
        let mut r = Round {
            env,
            rng: StdRng::seed_from_u64(seed),
            seed,
            reuse_logs,
            extensions: Extensions::of_seed(seed),
            mode,
            history: History::default(),
            workload_counts: [0; OpKind::ALL.len()],
            open_counts: [1; OpKind::ALL.len()],
            tally: &mut tally,
            trail: Vec::new(),
        };
        r.run();
        tally.rounds += 1;
    }
    eprintln!(
        "power loss (reuse_logs {reuse_logs}, {mode:?}): {} rounds passed, {} power losses \
         ({} during recovery), {} writes acknowledged ({} synced), {} unsynced lost as \
         allowed, {} reopens through repair ({} salvaged, no prefix), {} paranoid reopens \
         refused for a torn log ({} for a value a torn value file cut); crash points: {:?}",
        tally.rounds,
        tally.power_losses,
        tally.recovery_crashes,
        tally.acked,
        tally.synced,
        tally.lost_unsynced,
        tally.repairs,
        tally.salvaged_repairs,
        tally.torn_log_refusals,
        tally.torn_value_refusals,
        tally.crash_points
    );
}

#[test]
fn drop_unsynced_without_log_reuse() {
    run_config(false, PowerLossMode::DropUnsynced);
}

#[test]
fn drop_unsynced_with_log_reuse() {
    run_config(true, PowerLossMode::DropUnsynced);
}

#[test]
fn torn_tail_without_log_reuse() {
    run_config(false, PowerLossMode::TornTail);
}

#[test]
fn torn_tail_with_log_reuse() {
    run_config(true, PowerLossMode::TornTail);
}

#[test]
fn garbage_tail_without_log_reuse() {
    run_config(false, PowerLossMode::GarbageTail);
}

#[test]
fn garbage_tail_with_log_reuse() {
    run_config(true, PowerLossMode::GarbageTail);
}

/// The checkers themselves: a state is a prefix exactly when it is the state after the ops up
/// to some point at or past the last synced write; a salvage holds, key by key, the synced
/// state or what a later op left.
#[test]
fn prefix_and_salvage_checks_accept_what_they_should_and_reject_holes() {
    let put = |k: &str, v: &str, sync: bool| Op {
        range_deletes: Vec::new(),
        updates: vec![(k.as_bytes().to_vec(), Some(v.as_bytes().to_vec()))],
        sync,
        acked: true,
    };
    let history = History {
        base: Model::from([(b"a".to_vec(), b"0".to_vec())]),
        ops: vec![
            put("a", "1", false),
            put("b", "1", true),
            put("a", "2", false),
            Op {
                range_deletes: Vec::new(),
                updates: vec![(b"b".to_vec(), None)],
                sync: false,
                acked: true,
            },
        ],
    };
    assert_eq!(history.synced_len(), 2);
    let state = |pairs: &[(&str, &str)]| -> Model {
        pairs
            .iter()
            .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
            .collect()
    };
    assert_eq!(history.matching_prefixes(&state(&[("a", "0")]), 0), [0]);
    assert!(history
        .matching_prefixes(&state(&[("a", "0")]), 2)
        .is_empty());
    assert_eq!(
        history.matching_prefixes(&state(&[("a", "1"), ("b", "1")]), 2),
        [2]
    );
    assert_eq!(history.matching_prefixes(&state(&[("a", "2")]), 2), [4]);
    // A hole: op 3 (delete b) without op 2 (a = 2).
    assert!(history
        .matching_prefixes(&state(&[("a", "1")]), 2)
        .is_empty());
    // A value never written.
    assert!(history
        .matching_prefixes(&state(&[("a", "2"), ("b", "9")]), 0)
        .is_empty());
    assert!(history
        .explain(&state(&[("a", "1")]), 2)
        .contains("keys differ"));
    // What repair may leave: the synced writes, with any of the later ones.
    assert!(history.salvaged(&state(&[("a", "1")]), 2));
    assert!(history.salvaged(&state(&[("a", "2"), ("b", "1")]), 2));
    // A synced write lost, an older value back, a value never written, a key never written.
    assert!(!history.salvaged(&state(&[("a", "1")]), 3));
    assert!(!history.salvaged(&state(&[("a", "0")]), 2));
    assert!(!history.salvaged(&state(&[("a", "3")]), 2));
    assert!(!history.salvaged(&state(&[("a", "1"), ("c", "1")]), 2));
    // A range deletion after the synced writes may take what it covers.
    let mut ranged = history.clone();
    ranged.ops.push(Op {
        range_deletes: vec![(b"a".to_vec(), b"b".to_vec())],
        updates: Vec::new(),
        sync: false,
        acked: true,
    });
    assert!(ranged.salvaged(&state(&[("b", "1")]), 2));
    // A batch counts by what it leaves: writing a key twice, only the second value.
    let mut twice = history.clone();
    twice.ops.push(Op {
        range_deletes: Vec::new(),
        updates: vec![
            (b"a".to_vec(), Some(b"x".to_vec())),
            (b"a".to_vec(), Some(b"y".to_vec())),
        ],
        sync: false,
        acked: true,
    });
    assert!(twice.salvaged(&state(&[("a", "y")]), 2));
    assert!(!twice.salvaged(&state(&[("a", "x")]), 2));
    assert!(!history.salvaged(&state(&[("b", "1")]), 2));
}
