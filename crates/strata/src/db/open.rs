//! Opening a database: locking the directory, creating it if asked, and recovering its state.
//!
//! Recovery reads `CURRENT` and the manifest (the version set), checks that every table the
//! manifest lists exists, then replays every write-ahead log at or after the manifest's log
//! number (plus the previous log, which older LevelDBs could leave), in file-number order,
//! into memtables that are flushed to level-0 tables as they fill. A damaged log record, or a
//! missing log the manifest names, is skipped and logged, unless `paranoid_checks` is set, in
//! which case open fails; a read error always fails open (the unread rest of the log may hold
//! acknowledged writes). A log whose first write does not continue the sequence numbers where
//! the tables and earlier logs end lost its predecessor's tail to a power loss: it and the
//! later logs are skipped, so the database keeps a prefix of its writes (see `db/wal.rs`). Finally a new log is started (or, with `reuse_logs`, the last one is
//! appended to, if it ends with a whole record: records appended behind a torn tail would be
//! lost with it) and the new state is recorded in the manifest. A failed open changes nothing
//! that was stored: new files it wrote
//! are not referenced by any manifest and old ones are only deleted after success.
//!
//! A directory without `CURRENT` is a new database (with `create_if_missing`), unless it holds
//! tables: then `CURRENT` was lost, and open fails with a corruption error rather than create
//! an empty database over them (which would delete them as obsolete).

use std::collections::{HashSet, VecDeque};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;

use parking_lot::{Condvar, Mutex, MutexGuard};

use super::edits::apply_edit;
use super::flush::write_level0_table;
use super::log_replay::{LogBatches, LogEnd, Sequences};
use super::obsolete_files::delete_obsolete_files;
use super::published::Published;
use super::read_only::Follower;
use super::value_files::ValueLane;
use super::wal::Wal;
use super::{value_files, value_gc, DbInner, DbState, InfoLog, SuperVersion};
use crate::compaction::running::Running;
use crate::env::Env;
use crate::error::{Error, Result};
use crate::filename::{
    descriptor_file_name, lock_file_name, log_file_name, parse_file_name, parse_own_file_name,
    FileType,
};
use crate::log::LogWriter;
use crate::memtable::MemTable;
use crate::options::Options;
use crate::table::block_cache::BlockCache;
use crate::util::internal_key::InternalKeyComparator;
use crate::version::edit::VersionEdit;
use crate::version::manifest::write_first_manifest;
use crate::version::table_cache::TableCache;
use crate::version::version_set::{VersionSet, VersionSetOptions};
use crate::vlog::reader::ValueFiles;
use crate::vlog::Lane;

/// Files kept open for purposes other than tables (logs, manifest, LOG, LOCK).
const NON_TABLE_FILES: usize = 10;
/// Default block cache when the options bring none.
const DEFAULT_BLOCK_CACHE_BYTES: usize = 8 << 20;

/// Clamps options to workable ranges, as LevelDB does, and fills in the block cache.
pub(super) fn sanitize(mut options: Options) -> Options {
    options.max_open_files = options.max_open_files.clamp(64 + NON_TABLE_FILES, 50_000);
    options.write_buffer_size = options.write_buffer_size.clamp(64 << 10, 1 << 30);
    options.max_file_size = options.max_file_size.clamp(1 << 20, 1 << 30);
    options.block_size = options.block_size.clamp(1 << 10, 4 << 20);
    options.max_subcompactions = options.max_subcompactions.clamp(1, 16);
    options.max_background_jobs = options.max_background_jobs.clamp(1, 16);
    options.block_restart_interval = options.block_restart_interval.max(1);
    if let Some(separation) = &mut options.value_separation {
        separation.file_size = separation.file_size.max(64 << 10);
    }
    if options.block_cache.is_none() {
        options.block_cache = Some(BlockCache::new(DEFAULT_BLOCK_CACHE_BYTES));
    }
    options
}

/// Refuses options this build cannot honour together: a compaction filter would be handed
/// value pointers instead of the values kept in value files.
pub(super) fn refuse_unsupported_combinations(options: &Options) -> Result<()> {
    if options.value_separation.is_some() && options.compaction_filter.is_some() {
        return Err(Error::NotSupported(
            "Options::compaction_filter with Options::value_separation: compaction filters \
             do not see values kept in value files yet"
                .into(),
        ));
    }
    Ok(())
}

/// Opens the database in `dir`; the caller starts the background threads.
pub(crate) fn open(dir: &Path, options: Options) -> Result<Arc<DbInner>> {
    let options = Arc::new(sanitize(options));
    refuse_unsupported_combinations(&options)?;
    let env = Arc::clone(&options.env);
    if options.create_if_missing {
        refuse_orphan_tables(&*env, dir)?;
        env.create_dir(dir)?;
    } else if !env.file_exists(&crate::filename::current_file_name(dir)) {
        return Err(Error::InvalidArgument(format!(
            "{}: does not exist (create_if_missing is false)",
            dir.display()
        )));
    }
    let lock = env.lock_file(&lock_file_name(dir)).map_err(|e| match e {
        Error::Io { context, source } => Error::Io {
            context: format!("{context} (is the database open in another process?)"),
            source,
        },
        other => other,
    })?;
    match open_locked(dir, Arc::clone(&options), lock) {
        Ok(db) => Ok(db),
        Err((e, lock)) => {
            if let Some(lock) = lock {
                let _ = env.unlock_file(lock);
            }
            Err(e)
        }
    }
}

/// With `create_if_missing`, fails when `CURRENT` is missing but `dir` holds tables: they
/// belong to a database whose `CURRENT` was lost, and opening would create a new, empty
/// database and delete them as obsolete (as LevelDB does). `repair` rebuilds the database from
/// them instead. (Without `create_if_missing`, open fails as LevelDB's does: the database
/// "does not exist".)
fn refuse_orphan_tables(env: &dyn crate::env::Env, dir: &Path) -> Result<()> {
    let current = crate::filename::current_file_name(dir);
    if env.file_exists(&current) {
        return Ok(());
    }
    // An unreadable or missing directory holds no tables; open reports it as it would.
    let names = env.children(dir).unwrap_or_default();
    let mut tables = names
        .iter()
        .filter(|name| matches!(parse_file_name(name), Some((_, FileType::Table))));
    match tables.next() {
        Some(first) => Err(Error::corruption(format!(
            "missing, but the directory holds {} table file(s), e.g. {first}: run repair to \
             rebuild the database from them",
            1 + tables.count()
        ))
        .in_file(current.display())),
        None => Ok(()),
    }
}

type OpenFailure = (Error, Option<Box<dyn crate::env::FileLock>>);

fn open_locked(
    dir: &Path,
    options: Arc<Options>,
    lock: Box<dyn crate::env::FileLock>,
) -> std::result::Result<Arc<DbInner>, OpenFailure> {
    let env = Arc::clone(&options.env);
    let db = new_inner(dir, options, env, None);
    let result = {
        let mut state = db.state.lock();
        recover(&db, &mut state)
    };
    match result {
        Ok(()) => {
            *db.lock.lock() = Some(lock);
            Ok(db)
        }
        Err(e) => {
            db.info_log.log(format_args!("open failed: {e}"));
            Err((e, Some(lock)))
        }
    }
}

fn recover(db: &Arc<DbInner>, state: &mut MutexGuard<'_, DbState>) -> Result<()> {
    let dir = &db.dir;
    let env = &db.env;
    let current = crate::filename::current_file_name(dir);
    if !env.file_exists(&current) {
        if db.options.create_if_missing {
            db.info_log
                .log(format_args!("creating database {}", dir.display()));
            new_db(db)?;
        } else {
            return Err(Error::InvalidArgument(format!(
                "{}: does not exist (create_if_missing is false)",
                dir.display()
            )));
        }
    } else if db.options.error_if_exists {
        return Err(Error::InvalidArgument(format!(
            "{}: exists (error_if_exists is true)",
            dir.display()
        )));
    }

    let recovered = state.versions.recover()?;
    let mut save_manifest = recovered.save_manifest;
    if let Some(e) = recovered.damaged_tail {
        refuse_if_damaged_edit_may_be_installed(db, &state.versions, &e)?;
        db.info_log.log(format_args!(
            "skipped a torn edit at the manifest's end: {e}"
        ));
    }
    db.info_log.log(format_args!(
        "recovered manifest #{}: {}",
        state.versions.manifest_file_number,
        state.versions.level_summary()
    ));

    // Every table the manifest lists must exist; find the logs to replay.
    let min_log = state.versions.log_number;
    let prev_log = state.versions.prev_log_number;
    let mut expected: HashSet<u64> = state.versions.live_files();
    let mut logs = Vec::new();
    for name in env.children(dir)? {
        match parse_own_file_name(&name) {
            Some((number, kind)) => {
                state.versions.mark_file_number_used(number);
                match kind {
                    FileType::Table => {
                        expected.remove(&number);
                    }
                    FileType::Log if number >= min_log || number == prev_log => logs.push(number),
                    _ => {}
                }
            }
            _ => db
                .info_log
                .log(format_args!("ignoring unknown file {name}")),
        }
    }
    if let Some(&missing) = expected.iter().min() {
        return Err(Error::corruption(format!(
            "{} table file(s) listed in the manifest are missing, e.g. {}",
            expected.len(),
            crate::filename::table_file_name(dir, missing).display()
        ))
        .in_file(descriptor_file_name(dir, state.versions.manifest_file_number).display()));
    }

    // The log the manifest names is created before the edit naming it and deleted only after
    // a later edit moves past it (0: the database never had one, or `repair` rebuilt it).
    let live_log_missing = min_log > 0 && !logs.contains(&min_log);
    if live_log_missing {
        let e = Error::corruption(format!(
            "{}, the log the manifest names, is missing: the writes it held are lost",
            log_file_name(dir, min_log).display()
        ))
        .in_file(descriptor_file_name(dir, state.versions.manifest_file_number).display());
        if db.options.paranoid_checks {
            return Err(e);
        }
        db.info_log.log(format_args!("{e}"));
    }
    logs.sort_unstable();
    let mut replay = Replay {
        edit: VersionEdit::default(),
        // A missing live log is damage, not a power loss (a later log's directory entry
        // becomes durable only with it): it costs its own writes, not the later logs'.
        sequences: Sequences::new(state.versions.last_sequence, !live_log_missing),
        value_files: HashSet::new(),
    };
    for (i, &number) in logs.iter().enumerate() {
        let last = i + 1 == logs.len();
        save_manifest |= replay_log(db, state, number, last, &mut replay)?;
        // The log's number is used: later logs must get higher numbers.
        state.versions.mark_file_number_used(number);
        if replay.sequences.gap {
            // The later logs are skipped too; the new log's number is past them (every file
            // number in the directory is marked used), so they are deleted as obsolete.
            save_manifest = true;
            break;
        }
    }
    if state.versions.last_sequence < replay.sequences.max_sequence {
        state.versions.last_sequence = replay.sequences.max_sequence;
    }

    if !db.wal.lock().is_open() {
        // Start a fresh log for new writes.
        let number = state.versions.new_file_number();
        let file = env.new_log_file(&log_file_name(dir, number))?;
        db.wal.lock().start(number, LogWriter::new(file), 0);
        state.log_file_number = number;
        state.log_first_sequence = state.versions.last_sequence + 1;
        save_manifest = true;
    }
    if save_manifest {
        state.retire_older_logs(&mut replay.edit);
        apply_edit(db, state, &mut replay.edit)?;
    }
    state.refresh_super_version();
    delete_obsolete_files(db, state);
    if let Some(e) = &state.bg_error {
        // The value files' accounting failed: this open met the error, so it fails with it.
        return Err(e.clone());
    }
    db.info_log.log(format_args!(
        "opened: last sequence {}, log #{}, {}",
        state.versions.last_sequence,
        state.log_file_number,
        state.versions.level_summary()
    ));
    db.bg_work.notify_all();
    Ok(())
}

/// The core of a database in `dir`, empty until recovered: its files are reached through
/// `env` (the options' env, or for a read-only handle one that refuses every change).
pub(super) fn new_inner(
    dir: &Path,
    options: Arc<Options>,
    env: Arc<dyn Env>,
    follower: Option<Follower>,
) -> Arc<DbInner> {
    let icmp = InternalKeyComparator::new(Arc::clone(&options.comparator));
    let info_log = InfoLog::open(&env, dir, options.info_log.as_ref());
    let value_files = Arc::new(ValueFiles::new(Arc::clone(&env), dir));
    let value_file_size = options
        .value_separation
        .map_or(0, |s| super::value_gc::value_file_size(0, s.file_size));
    let table_entries = options.max_open_files - NON_TABLE_FILES;
    let table_cache = Arc::new(TableCache::new(
        dir,
        Arc::clone(&env),
        options.table_options(),
        table_entries,
    ));
    let versions = VersionSet::new(
        dir,
        VersionSetOptions {
            env: Arc::clone(&env),
            ..options.version_set_options()
        },
        icmp.clone(),
    );
    let mem = Arc::new(MemTable::for_buffer(
        icmp.clone(),
        options.write_buffer_size,
    ));
    let super_version = Arc::new(SuperVersion {
        mem: Arc::clone(&mem),
        imm: None,
        version: Arc::clone(versions.current()),
        table_tombstones: std::sync::OnceLock::new(),
        sequence: versions.last_sequence,
    });
    let super_versions = vec![Arc::downgrade(&super_version)];
    let published = Arc::new(Published::new(super_version, versions.last_sequence));
    let compactions = Running::new(icmp.clone());
    let wal = Wal::new(Arc::clone(&env));
    Arc::new(DbInner {
        dir: dir.to_path_buf(),
        options,
        icmp,
        env,
        table_cache,
        state: Mutex::new(DbState {
            mem,
            imm: None,
            versions,
            log_file_number: 0,
            log_first_sequence: 1,
            bg_error: None,
            manual: None,
            pending_outputs: HashSet::new(),
            stats: Default::default(),
            leading: false,
            flush_unannounced: false,
            writers: VecDeque::new(),
            sync_rejoin: Default::default(),
            write_pace: Default::default(),
            super_versions,
            published: Arc::clone(&published),
            workers_started: 0,
            compaction_jobs: 0,
            compactions_suspended: 0,
            filtering_compactions: 0,
            compactions,
            obsolete_files: Default::default(),
            value_gc: Default::default(),
        }),
        published,
        snapshots: Arc::default(),
        bg_done: Condvar::new(),
        bg_work: Condvar::new(),
        edit_turn: Mutex::new(()),
        wal: Mutex::new(wal),
        shutting_down: AtomicBool::new(false),
        has_imm: AtomicBool::new(false),
        info_log,
        lock: Mutex::new(None),
        value_files,
        table_value_refs: Default::default(),
        write_stalls: Default::default(),
        mem_separated_limit: AtomicU64::new(value_gc::memtable_value_limit(0)),
        value_bytes_appended: AtomicU64::new(0),
        relocated_bytes: AtomicU64::new(0),
        value_lanes: Lane::ALL.map(|lane| ValueLane::new(lane, value_file_size)),
        read_only: follower.map(Mutex::new),
    })
}

/// A damaged last manifest edit may be skipped only when it cannot have been installed. An
/// installed edit that added tables (a flush or a compaction) is followed by work that depends
/// on it (its logs and inputs are deleted), so skipping it would lose data silently. Tables
/// numbered at or past the recovered next file number were made after the last readable edit;
/// if any exist, the damaged edit may have named them, and open refuses (repair salvages them).
/// Otherwise the damage is a torn write that was never acknowledged, and is skipped.
fn refuse_if_damaged_edit_may_be_installed(
    db: &DbInner,
    versions: &VersionSet,
    damage: &Error,
) -> Result<()> {
    let newer_table = db
        .env
        .children(&db.dir)?
        .into_iter()
        .find_map(|name| match parse_file_name(&name) {
            Some((number, FileType::Table)) if number >= versions.next_file_number => Some(name),
            _ => None,
        });
    match newer_table {
        Some(table) => Err(Error::corruption(format!(
            "the manifest's last edit is damaged ({damage}) and table {table}, which it may have \
             added, exists: run repair to salvage it"
        ))
        .in_file(descriptor_file_name(&db.dir, versions.manifest_file_number).display())),
        None => Ok(()),
    }
}

/// Writes the manifest of an empty database and points `CURRENT` at it.
fn new_db(db: &DbInner) -> Result<()> {
    let edit = VersionEdit {
        comparator: Some(
            db.options
                .extensions()
                .recorded_name(db.icmp.user_comparator().name()),
        ),
        log_number: Some(0),
        next_file_number: Some(2),
        last_sequence: Some(0),
        ..VersionEdit::default()
    };
    write_first_manifest(&*db.env, &db.dir, 1, &edit)
}

/// What replaying the logs has established so far.
struct Replay {
    /// The tables flushed from replayed memtables.
    edit: VersionEdit,
    sequences: Sequences,
    /// The value files replayed pointers name, synced (see `value_files::check_replayed`).
    value_files: HashSet<u64>,
}

/// Replays log `number` into memtables (see `db/log_replay.rs` for the rules). Returns whether
/// the manifest must be rewritten (a table was flushed, or the log could not be reused).
fn replay_log(
    db: &Arc<DbInner>,
    state: &mut MutexGuard<'_, DbState>,
    number: u64,
    last_log: bool,
    replay: &mut Replay,
) -> Result<bool> {
    let path = log_file_name(&db.dir, number);
    db.info_log.log(format_args!("recovering log #{number}"));
    let mut first_sequence = replay.sequences.start_log();
    let mut batches = LogBatches::open(
        &*db.env,
        &path,
        number,
        0,
        db.options.paranoid_checks,
        state.versions.recorded_extensions(),
        replay.sequences.expected_start(),
    )?;
    let mut mem: Option<Arc<MemTable>> = None;
    let mut flushed = false;
    while let Some(logged) = batches.next(&db.info_log)? {
        if !replay.sequences.admit(&logged, number, &db.info_log) {
            break;
        }
        if logged.starts_log {
            // Past the expected start only after a missing log: this log starts there.
            first_sequence = first_sequence.max(logged.batch.sequence());
        }
        if let Err(e) = value_files::check_replayed(
            &*db.env,
            &db.dir,
            &db.value_files,
            &logged.batch,
            &mut replay.value_files,
        ) {
            let e = e.in_file(path.display());
            if !e.is_corruption() || db.options.paranoid_checks {
                return Err(e);
            }
            // A value never synced (a sync covers every value appended before it): this
            // write and every later one were never acknowledged as durable.
            db.info_log.log(format_args!(
                "log #{number}: a write at sequence {} names a value that is not in its value \
                 file ({e}); leaving out that write and every later one",
                logged.batch.sequence()
            ));
            replay.sequences.gap = true;
            break;
        }
        // Only a reused log's memtable is read from (it becomes the live one); the others
        // only become tables, and need no key filter.
        let memtable = mem.get_or_insert_with(|| {
            if db.options.reuse_logs {
                db.new_memtable()
            } else {
                Arc::new(MemTable::new(db.icmp.clone()))
            }
        });
        if !batches.apply(&logged, memtable, &db.info_log)? {
            continue;
        }
        replay.sequences.replayed(&logged.batch);
        if memtable.approximate_memory_usage() > db.options.write_buffer_size {
            if let Some(full) = mem.take() {
                write_level0_table(db, state, &full, &mut replay.edit)?;
                flushed = true;
            }
        }
    }
    let LogEnd { clean_end, damaged } = batches.finish(&db.info_log)?;

    // With reuse_logs the last log keeps taking writes, if nothing of it was flushed and it
    // ends with a whole record: records appended behind a torn or damaged tail would be
    // dropped with it by the next recovery.
    let size = db.env.file_size(&path)?;
    // A log older than the manifest's log number (an old LevelDB's previous log, left alone
    // when the newer one is missing) is not reused: the write path treats such logs as flushed.
    let reusable =
        number >= state.versions.log_number && !flushed && !damaged && !replay.sequences.gap;
    if db.options.reuse_logs && last_log && reusable && clean_end == size {
        let file = db.env.new_appendable_file(&path)?;
        db.wal
            .lock()
            .start(number, LogWriter::with_offset(file, size), 0);
        state.log_file_number = number;
        state.log_first_sequence = first_sequence;
        if let Some(mem) = mem.take() {
            state.mem = mem;
        }
        db.info_log.log(format_args!("reusing log #{number}"));
        return Ok(false);
    }
    if let Some(rest) = mem.take() {
        write_level0_table(db, state, &rest, &mut replay.edit)?;
    }
    Ok(true)
}
