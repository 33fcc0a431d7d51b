//! `stress`: a crash test against a real directory. Kill the process at any moment, start it
//! again, and it proves the database kept its promises before writing more.
//!
//! A run is a multi-threaded workload of puts, deletes and atomic batches; every thread owns
//! its own keys and numbers its operations, and each operation's content is a pure function of
//! `(seed, thread, op number)` (see `stress/workload.rs` for the key and value layout). After
//! the database acknowledges an op, the thread appends its progress (ops acknowledged, ops
//! sync-acknowledged) to a journal beside the database, `DB.stress-journal`
//! ([`journal_path`]; format in `stress/journal.rs`).
//!
//! Every start ([`StressSession::open`]) first verifies the database against the journal, and
//! [`verify_stress_db`] does only that. For each thread the database must show exactly the
//! state that ops `0..n` leave, for one `n` between what had to survive (every acknowledged op
//! after a process crash, the sync-acknowledged ones after a power loss: [`CrashModel`]) and
//! one past the acknowledged (the op in flight). That is: no lost write, no hole, no
//! resurrected deletion, no value that was never written, no stray key, and a scan and point
//! reads that agree. Anything else is a [`Violation`] in the [`VerifyReport`], naming the
//! thread, key and op with the expected and found states.
//!
//! ```no_run
//! # fn demo() -> strata::Result<()> {
//! use strata_tools::{StressOptions, StressSession};
//! let options = StressOptions {
//!     duration: std::time::Duration::from_secs(60),
//!     ..StressOptions::default()
//! };
//! let session = StressSession::open(std::path::Path::new("/tmp/stressdb"), &options)?;
//! println!("{}", session.report());
//! if session.report().is_ok() {
//!     let summary = session.run()?;
//!     println!("{} ops acknowledged", summary.ops);
//! }
//! # Ok(())
//! # }
//! ```

mod journal;
mod report;
mod run;
#[cfg(test)]
mod tests;
mod verify;
mod workload;

use std::collections::BTreeMap;
use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};
use std::time::Duration;

use strata::{Error, Options, Result, DB};

pub use journal::journal_path;
pub use report::{CrashModel, KeyState, ThreadVerdict, VerifyReport, Violation, ViolationKind};
pub use run::RunSummary;

use journal::{read_journal, Journal, JournalContents, Progress};
use verify::{verify_db, Touch};
use workload::{Workload, MAX_KEYS, MAX_THREADS};

/// Slots per thread unless chosen.
pub const DEFAULT_KEYS_PER_THREAD: u32 = 1000;
/// Largest ordinary payload unless chosen.
pub const DEFAULT_VALUE_SIZE: u32 = 100;

/// How to run (and verify) a stress test.
#[derive(Debug, Clone)]
pub struct StressOptions {
    /// Writer threads (at most 1024). A restart may use more or fewer: each thread resumes its
    /// own ops, and threads not running keep being verified.
    pub threads: u32,
    /// How long the workload runs.
    pub duration: Duration,
    /// Every `sync_every`-th op of a thread is written with `sync` (0: none).
    pub sync_every: u64,
    /// Stop each thread after this many ops (for tests); `None`: run for `duration`.
    pub max_ops_per_thread: Option<u64>,
    /// Seed of the workload. Fixed by the journal once it exists (giving another is an error);
    /// `None` picks one at random for a new journal.
    pub seed: Option<u64>,
    /// Slots per thread (at most 1,000,000); fixed by the journal once it exists.
    pub keys_per_thread: Option<u32>,
    /// Largest ordinary value payload; fixed by the journal once it exists.
    pub value_size: Option<u32>,
    /// What verification demands.
    pub model: CrashModel,
    /// Options the database is opened with (`create_if_missing` is set as needed). The
    /// default has a 256 KiB write buffer, so flushes and compactions happen often enough for
    /// a kill to land inside them.
    pub db_options: Options,
}

impl Default for StressOptions {
    fn default() -> StressOptions {
        StressOptions {
            threads: 4,
            duration: Duration::from_secs(10),
            sync_every: 16,
            max_ops_per_thread: None,
            seed: None,
            keys_per_thread: None,
            value_size: None,
            model: CrashModel::ProcessCrash,
            db_options: Options {
                write_buffer_size: 256 << 10,
                ..Options::default()
            },
        }
    }
}

/// An open stress database that has been verified: run more of the workload on it with
/// [`StressSession::run`] if the report is clean.
pub struct StressSession {
    db: DB,
    journal_path: PathBuf,
    workload: Workload,
    /// Per thread, where it resumes: the ops visible, and the journal's sync mark.
    progress: BTreeMap<u32, Progress>,
    states: BTreeMap<u32, Vec<Option<Touch>>>,
    report: VerifyReport,
    options: StressOptions,
}

impl std::fmt::Debug for StressSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StressSession")
            .field("db", &self.db)
            .field("journal", &self.journal_path)
            .field("ok", &self.report.is_ok())
            .finish_non_exhaustive()
    }
}

impl StressSession {
    /// Opens (creating if needed) the stress database at `path` and verifies it against its
    /// journal. A directory that holds a database but no journal is refused: only databases
    /// that `stress` created can be verified. An existing journal is not changed until
    /// [`run`]; a new one is written before the database is created.
    ///
    /// [`run`]: StressSession::run
    pub fn open(path: &Path, options: &StressOptions) -> Result<StressSession> {
        if options.threads > MAX_THREADS {
            return Err(Error::InvalidArgument(format!(
                "at most {MAX_THREADS} threads, not {}",
                options.threads
            )));
        }
        let journal_path = journal_path(path);
        let contents = match read_journal(&journal_path)? {
            Some(contents) => {
                check_fixed(&contents.workload, options)?;
                contents
            }
            None => {
                if path.join("CURRENT").exists() {
                    return Err(Error::InvalidArgument(format!(
                        "{} holds a database but there is no stress journal {}: stress only \
                         runs on databases it created",
                        path.display(),
                        journal_path.display()
                    )));
                }
                let workload = new_workload(options)?;
                // The journal exists before the database does, so no crash can leave a
                // database without one.
                drop(Journal::create(&journal_path, workload, BTreeMap::new())?);
                JournalContents {
                    workload,
                    threads: BTreeMap::new(),
                    torn_bytes: 0,
                }
            }
        };
        let db = DB::open(
            path,
            Options {
                create_if_missing: true,
                ..options.db_options.clone()
            },
        )?;
        let verified = verify_db(
            &db,
            &contents.workload,
            &contents.threads,
            options.model,
            contents.torn_bytes,
        )?;
        let progress = verified
            .report
            .threads
            .iter()
            .map(|t| {
                let visible = t.visible.unwrap_or(t.acknowledged);
                let progress = Progress {
                    acked: visible,
                    synced: t.synced.min(visible),
                };
                (t.thread, progress)
            })
            .collect();
        Ok(StressSession {
            db,
            journal_path,
            workload: contents.workload,
            progress,
            states: verified.states,
            report: verified.report,
            options: options.clone(),
        })
    }

    /// The verification done at open.
    pub fn report(&self) -> &VerifyReport {
        &self.report
    }

    /// The open database.
    pub fn db(&self) -> &DB {
        &self.db
    }

    /// Runs the workload for the options' duration, each thread resuming after the ops the
    /// database shows. Refuses to run on a database whose verification found violations.
    pub fn run(self) -> Result<RunSummary> {
        if !self.report.is_ok() {
            return Err(Error::InvalidArgument(format!(
                "verification found {} violations; not writing more",
                self.report.violations.len()
            )));
        }
        // Ops the database shows count as acknowledged from here on, so the journal again
        // lags it by at most the op in flight.
        let journal = Journal::create(&self.journal_path, self.workload, self.progress.clone())?;
        let plan = run::Plan {
            workload: self.workload,
            threads: self.options.threads,
            duration: self.options.duration,
            sync_every: self.options.sync_every,
            max_ops_per_thread: self.options.max_ops_per_thread,
            progress: &self.progress,
            states: &self.states,
        };
        run::run_workload(&self.db, &journal, &plan)
    }
}

/// Verifies the stress database at `path` against its journal without writing anything to
/// the journal (opening the database recovers it, as any open does). Uses `options.model`
/// and `options.db_options`.
pub fn verify_stress_db(path: &Path, options: &StressOptions) -> Result<VerifyReport> {
    let journal_path = journal_path(path);
    let contents = read_journal(&journal_path)?.ok_or_else(|| {
        Error::InvalidArgument(format!(
            "no stress journal {} beside {}",
            journal_path.display(),
            path.display()
        ))
    })?;
    check_fixed(&contents.workload, options)?;
    let db = DB::open(path, options.db_options.clone())?;
    let verified = verify_db(
        &db,
        &contents.workload,
        &contents.threads,
        options.model,
        contents.torn_bytes,
    )?;
    Ok(verified.report)
}

fn new_workload(options: &StressOptions) -> Result<Workload> {
    let keys = options.keys_per_thread.unwrap_or(DEFAULT_KEYS_PER_THREAD);
    if keys == 0 || keys > MAX_KEYS {
        return Err(Error::InvalidArgument(format!(
            "keys per thread must be 1..={MAX_KEYS}, not {keys}"
        )));
    }
    let seed = options.seed.unwrap_or_else(|| {
        std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish()
    });
    Ok(Workload {
        seed,
        keys,
        value_size: options.value_size.unwrap_or(DEFAULT_VALUE_SIZE),
        range_deletes: options.db_options.range_deletes,
        value_separation: value_separation(options)?,
    })
}

/// The minimum value size of `options`' value separation, as the journal records it.
fn value_separation(options: &StressOptions) -> Result<Option<u32>> {
    options
        .db_options
        .value_separation
        .map(|separation| {
            u32::try_from(separation.min_value_size).map_err(|_| {
                Error::InvalidArgument(format!(
                    "value separation from {} bytes: the stress journal records at most {}",
                    separation.min_value_size,
                    u32::MAX
                ))
            })
        })
        .transpose()
}

/// Fails if `options` ask for workload parameters other than the journal's.
fn check_fixed(workload: &Workload, options: &StressOptions) -> Result<()> {
    let clash = |name: &str, asked: u64, fixed: u64| {
        Error::InvalidArgument(format!(
            "the stress journal fixes {name} = {fixed}; cannot use {asked}"
        ))
    };
    if let Some(seed) = options.seed.filter(|&s| s != workload.seed) {
        return Err(clash("seed", seed, workload.seed));
    }
    if let Some(keys) = options.keys_per_thread.filter(|&k| k != workload.keys) {
        return Err(clash("keys per thread", keys.into(), workload.keys.into()));
    }
    if let Some(size) = options.value_size.filter(|&v| v != workload.value_size) {
        return Err(clash("value size", size.into(), workload.value_size.into()));
    }
    if options.db_options.range_deletes != workload.range_deletes {
        return Err(Error::InvalidArgument(format!(
            "the stress journal fixes range deletes = {}: open with Options::range_deletes = {}",
            workload.range_deletes, workload.range_deletes
        )));
    }
    if value_separation(options)? != workload.value_separation {
        let fixed = match workload.value_separation {
            Some(min) => format!("values of {min} bytes and more in value files"),
            None => "no value separation".to_owned(),
        };
        return Err(Error::InvalidArgument(format!(
            "the stress journal fixes {fixed}: open with Options::value_separation = {}",
            match workload.value_separation {
                Some(min) => format!("Some(ValueSeparation::new({min}))"),
                None => "None".to_owned(),
            }
        )));
    }
    Ok(())
}
