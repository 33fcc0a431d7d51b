//! Checkpoints (`DB::checkpoint`): an openable copy of a database as it was at one point in
//! time, made while writes go on.
//!
//! A checkpoint holds every table of the version current at that point (hard links where the
//! `Env` can make them, copies otherwise: across file systems, or on an `Env` without links),
//! the live write-ahead logs as far as they reached then (copied: the writer goes on appending
//! to them), and a fresh manifest describing exactly that version, which `CURRENT` names. It is
//! a directory in LevelDB 1.23's format that Strata and LevelDB open as they would open the
//! database after a crash at that point, with nothing lost: every file was synced. A target
//! inside the database's own directory is refused: the copy would be written into the source.
//!
//! The point in time, on a handle that writes, is taken with the state mutex held (no version
//! is installed, no memtable switched) and the write-ahead log's mutex (no write group is
//! appending): the current version, the manifest's log numbers and last sequence, and the
//! length of each live log, opened there and then. Every write acknowledged before the call is
//! in those log bytes or those tables. The files stay readable afterwards: the version is held,
//! so its tables are not deleted, and a log deleted by a flush finishing meanwhile stays open.
//! On a read-only handle it is the state the handle sees: its version (whose tables it keeps
//! pinned) and the live logs up to where it read them (it keeps them open).
//!
//! Crash safety: everything is written into a temporary directory beside the target (the
//! target's name plus `.checkpoint-tmp-<process>-<call>`, so two checkpoints to one target never
//! share one), each file synced, `CURRENT` last (written, synced, renamed into place) and the
//! directory synced; only then is the temporary directory renamed to the target and the
//! target's parent synced. A crash or a power loss at any moment leaves the target absent or
//! whole, and the source untouched: nothing is written into it. A temporary directory a crash
//! leaves behind holds no `CURRENT` unless it is complete, so it never opens as a partial
//! database; it may be deleted.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::log_replay::live_logs;
use super::DbInner;
use crate::env::{parent_dir, Env, RandomAccessFile};
use crate::error::{Error, Result};
use crate::filename::{log_file_name, sst_table_file_name, table_file_name};
use crate::version::edit::VersionEdit;
use crate::version::manifest::write_first_manifest;
use crate::version::version::Version;

/// Bytes copied at a time.
const COPY_CHUNK: usize = 1 << 20;
/// Most directory listings a checkpoint takes to find the log taking writes (each new log
/// started meanwhile costs one more; a log deleted behind the database's back, all of them).
const MAX_LISTINGS: usize = 100;

/// Everything a checkpoint copies, fixed at its point in time.
pub(super) struct Capture {
    /// The manifest's counters and the version's tables; the counters are completed when
    /// the checkpoint's file numbers are known.
    pub(super) edit: VersionEdit,
    /// Held so its tables are not deleted while they are copied.
    pub(super) version: Arc<Version>,
    /// Live logs: number, length at the point in time, and the open file.
    pub(super) logs: Vec<(u64, u64, Arc<dyn RandomAccessFile>)>,
}

/// Makes a checkpoint of `db` in `target`, which must not exist; see the module documentation.
pub(crate) fn checkpoint(db: &DbInner, target: &Path) -> Result<()> {
    // The options' env: a read-only handle's own refuses every write, and the target is no
    // part of the database it reads.
    let env = &*db.options.env;
    if db.options.value_separation.is_some() {
        return Err(Error::NotSupported(
            "checkpoint: a database with Options::value_separation cannot be checkpointed \
             yet (its value files would be left out)"
                .into(),
        ));
    }
    if env.file_exists(target) {
        return Err(Error::InvalidArgument(format!(
            "checkpoint: {} exists",
            target.display()
        )));
    }
    if is_inside(&db.dir, target) {
        return Err(Error::InvalidArgument(format!(
            "checkpoint: {} is inside the database's directory {}",
            target.display(),
            db.dir.display()
        )));
    }
    let temp = temporary_dir(target)?;
    env.create_dir(&temp)?;
    let written = capture(db).and_then(|capture| write(db, env, &temp, capture));
    let renamed = written.and_then(|()| env.rename(&temp, target));
    if let Err(e) = renamed {
        let _ = remove_dir_and_files(env, &temp);
        return Err(e);
    }
    env.sync_dir(&parent_dir(target))
}

/// Whether `target` lies inside `dir` (both resolved, where they exist on the file system).
/// A checkpoint there would write into the source, under a name the database may take for one
/// of its own files: a directory `000123.log` fails every later open of it.
fn is_inside(dir: &Path, target: &Path) -> bool {
    let resolve = |path: &Path| std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    resolve(&parent_dir(target)).starts_with(resolve(dir))
}

/// `<target>.checkpoint-tmp-<process>-<call>`, beside the target, named for this call alone.
fn temporary_dir(target: &Path) -> Result<PathBuf> {
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let name = target
        .file_name()
        .ok_or_else(|| {
            Error::InvalidArgument(format!(
                "checkpoint: {} names no directory",
                target.display()
            ))
        })?
        .to_string_lossy();
    let call = CALLS.fetch_add(1, Ordering::Relaxed);
    let temp = target.with_file_name(format!(
        "{name}.checkpoint-tmp-{}-{call}",
        std::process::id()
    ));
    Ok(temp)
}

/// Removes the files of `dir`, then `dir` (a subdirectory in it makes this fail).
fn remove_dir_and_files(env: &dyn Env, dir: &Path) -> Result<()> {
    for name in env.children(dir)? {
        env.remove_file(&dir.join(name))?;
    }
    env.remove_dir(dir)
}

/// Fixes the checkpoint's point in time (see the module documentation).
fn capture(db: &DbInner) -> Result<Capture> {
    if let Some(follower) = &db.read_only {
        let follower = follower.lock();
        let state = db.state.lock();
        return Ok(follower.capture(&state.versions));
    }
    for _ in 0..MAX_LISTINGS {
        // Listed before the mutexes are taken; a log started since sends us round again.
        let names = db.env.children(&db.dir)?;
        let state = db.state.lock();
        let appends = db.wal.lock();
        let versions = &state.versions;
        let logs = live_logs(&names, versions.log_number, versions.prev_log_number);
        if !logs.contains(&state.log_file_number) {
            continue;
        }
        let mut opened = Vec::with_capacity(logs.len());
        for number in logs {
            let path = log_file_name(&db.dir, number);
            let file = db.env.new_held_random_access_file(&path)?;
            // An open log's written length: a mapped one ends in zeros (which the writer fills
            // after this point, and cuts off when it closes the log) until it is closed.
            let len = match appends.written_len(number) {
                Some(len) => len,
                None => db.env.file_size(&path)?,
            };
            opened.push((number, len, file));
        }
        return Ok(Capture {
            edit: counters(versions),
            version: Arc::clone(versions.current()),
            logs: opened,
        });
    }
    Err(Error::corruption(format!(
        "the log taking writes, {}, is not in the directory",
        log_file_name(&db.dir, db.state.lock().log_file_number).display()
    )))
}

/// The version set's current state as the first edit of a new manifest (file numbers to be
/// completed). It records the format extensions the live manifest records, which a read-only
/// handle's options may not all enable.
pub(super) fn counters(versions: &crate::version::version_set::VersionSet) -> VersionEdit {
    VersionEdit {
        comparator: Some(versions.recorded_comparator()),
        log_number: Some(versions.log_number),
        prev_log_number: Some(versions.prev_log_number),
        last_sequence: Some(versions.recorded_sequence()),
        next_file_number: Some(versions.next_file_number),
        ..versions.snapshot_edit()
    }
}

/// Writes the captured files into `dir`, syncs them and points `CURRENT` at a new manifest.
fn write(db: &DbInner, env: &dyn Env, dir: &Path, capture: Capture) -> Result<()> {
    let Capture {
        mut edit,
        version,
        mut logs,
    } = capture;
    let mut largest = 0;
    for file in version.files.iter().flatten() {
        let number = file.number();
        largest = largest.max(number);
        link_or_copy_table(db, env, number, file.meta.file_size, dir)?;
    }
    logs.sort_unstable_by_key(|&(number, _, _)| number);
    for (number, len, file) in &logs {
        largest = largest.max(*number);
        copy(&**file, *len, env, &log_file_name(dir, *number))?;
    }
    // The log the manifest names exists, if empty so far (a read-only handle keeps no log it
    // found no record in): without it, opening the copy would report it missing.
    let log_number = edit.log_number.unwrap_or(0);
    if log_number > 0 && !logs.iter().any(|&(number, _, _)| number == log_number) {
        largest = largest.max(log_number);
        let mut empty = env.new_writable_file(&log_file_name(dir, log_number))?;
        empty.sync()?;
        empty.close()?;
    }
    let manifest = edit.next_file_number.unwrap_or(0).max(largest + 1);
    edit.next_file_number = Some(manifest + 1);
    // Hard links and the logs' entries become durable with the directory, which writing
    // `CURRENT` syncs last.
    write_first_manifest(env, dir, manifest, &edit)
}

/// Puts table `number` into `dir`: a hard link to the source when the env makes one, a copy
/// read through the database's own env otherwise (on a read-only handle, from the file it
/// keeps pinned, which the writer may have deleted since).
fn link_or_copy_table(
    db: &DbInner,
    env: &dyn Env,
    number: u64,
    size: u64,
    dir: &Path,
) -> Result<()> {
    let to = table_file_name(dir, number);
    for from in [
        table_file_name(&db.dir, number),
        sst_table_file_name(&db.dir, number),
    ] {
        if env.link_file(&from, &to).is_ok() {
            return Ok(());
        }
    }
    let ldb = table_file_name(&db.dir, number);
    let file = db.env.new_random_access_file(&ldb).or_else(|e| {
        db.env
            .new_random_access_file(&sst_table_file_name(&db.dir, number))
            .map_err(|_| e)
    })?;
    copy(&*file, size, env, &to)
}

/// Writes the first `len` bytes of `from` to a new file `to` and syncs it (checkpoints, and
/// repair's copies in `lost/`). `to` must not exist: it could be a hard link to a file of the
/// source, which creating it would truncate.
pub(super) fn copy(from: &dyn RandomAccessFile, len: u64, env: &dyn Env, to: &Path) -> Result<()> {
    if env.file_exists(to) {
        return Err(Error::InvalidArgument(format!(
            "copying to {}: it exists already",
            to.display()
        )));
    }
    let mut out = env.new_writable_file(to)?;
    let mut buf = vec![0u8; COPY_CHUNK];
    let mut offset = 0;
    while offset < len {
        let want = usize::try_from(len - offset).map_or(COPY_CHUNK, |rest| rest.min(COPY_CHUNK));
        let chunk = &mut buf[..want];
        let n = from.read_at(offset, chunk)?;
        if n == 0 {
            return Err(Error::io(
                format!("copying to {}", to.display()),
                std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    format!("the source ends at {offset} of {len} bytes"),
                ),
            ));
        }
        out.append(&chunk[..n])?;
        offset += n as u64;
    }
    out.sync()?;
    out.close()
}
