//! Many processes, one database: a writer process — Strata, or real LevelDB through Debian's
//! `python3-plyvel` — writes, flushes, compacts, and now and then closes and opens the
//! database again, without pause, while reader processes open it read-only and read, iterate
//! and refresh in a loop. The readers run as an
//! unprivileged user in a directory they cannot write to, so a reader that tried to change it
//! would fail.
//!
//! Every reader checks, after each refresh, that what it sees is exactly the state after some
//! prefix of the writer's batches (every value was written, nothing is torn), and that the
//! prefix holds every batch the writer had acknowledged before the refresh began; that point
//! reads agree with the scan; and that an iterator and a snapshot taken before a refresh still
//! read the state before it, although the writer has deleted its tables since. No reader may
//! meet an error.
//!
//! The runs here last a few seconds (`STRATA_READERS_SECS`, default 4, with
//! `STRATA_READERS` readers, default 2); `scripts/readers-soak.sh` runs them for 60 seconds
//! with 4 readers. Readers run as user `nobody` through `setpriv`, which needs root, so a plain
//! `cargo test` leaves these tests out (`#[ignore]`) and `make test-readonly` (part of
//! `make test`, as root) runs them; run as another user, they fail rather than check less.
//!
//! The test binary is its own child: it runs itself with `STRATA_READERS_ROLE` set to play the
//! Strata writer or a reader.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use strata::{Options, ReadOptions, WriteBatch, DB};

mod support;

use support::state::Model;

// The workload; leveldb_writer.py writes the same.
const KEYS: u64 = 2000;
const BATCH: u64 = 8;

fn key(j: u64) -> Vec<u8> {
    format!("k{:05}", j % KEYS).into_bytes()
}

fn value(j: u64) -> Vec<u8> {
    let mut v = format!("v{j}-").into_bytes();
    v.resize(v.len() + (j % 173) as usize, b'x');
    v
}

fn is_delete(j: u64) -> bool {
    j % 11 == 5
}

const ROLE: &str = "STRATA_READERS_ROLE";
const DIR: &str = "STRATA_READERS_DIR";
const SECS: &str = "STRATA_READERS_SECS";
const NOBODY: &str = "65534";

/// Where a run keeps its files; every process finds them from `STRATA_READERS_DIR`.
struct Paths {
    root: PathBuf,
}

impl Paths {
    fn from_env() -> Paths {
        Paths {
            root: PathBuf::from(std::env::var(DIR).unwrap()),
        }
    }
    fn db(&self) -> PathBuf {
        self.root.join("db")
    }
    fn progress(&self) -> PathBuf {
        self.root.join("progress")
    }
    fn stop(&self) -> PathBuf {
        self.root.join("stop")
    }
}

/// Writes acknowledged by the writer so far (0 before it recorded any).
fn read_progress(paths: &Paths) -> u64 {
    std::fs::read_to_string(paths.progress())
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

/// Runs this test binary as `role`, as user `nobody` when `unprivileged`.
fn spawn_role(test: &str, role: &str, paths: &Paths, secs: u64, unprivileged: bool) -> Child {
    let exe = std::env::current_exe().unwrap();
    let mut command = if unprivileged {
        let mut c = Command::new("setpriv");
        c.args([
            &format!("--reuid={NOBODY}"),
            &format!("--regid={NOBODY}"),
            "--clear-groups",
        ])
        .arg(&exe);
        c
    } else {
        Command::new(&exe)
    };
    command
        .args([
            test,
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(ROLE, role)
        .env(DIR, &paths.root)
        .env(SECS, secs.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("starting {role}: {e}"))
}

/// Plays the role this process was started for, if any, then exits with its outcome.
fn play_role_if_child() {
    let Ok(role) = std::env::var(ROLE) else {
        return;
    };
    let paths = Paths::from_env();
    let secs: u64 = std::env::var(SECS).unwrap().parse().unwrap();
    let outcome = match role.as_str() {
        "writer" => strata_writer(&paths),
        "reader" => reader(&paths, secs),
        "read-protected" => read_protected(&paths),
        other => Err(format!("unknown role {other}")),
    };
    match outcome {
        Ok(summary) => {
            eprintln!("{role}: {summary}");
            std::process::exit(0)
        }
        Err(e) => {
            eprintln!("{role} FAILED: {e}");
            std::process::exit(1)
        }
    }
}

/// The Strata writer: the workload batch by batch, the progress file after each, a compaction
/// of everything every 200 batches (flushes happen on their own with a 64 KiB buffer), and
/// every 500 batches a close and a new open (a new manifest, the logs recovered; every other
/// time with `reuse_logs`, appending to the old log and manifest instead).
fn strata_writer(paths: &Paths) -> Result<String, String> {
    let open = |reuse_logs: bool| {
        DB::open(
            paths.db(),
            Options {
                create_if_missing: true,
                write_buffer_size: 64 << 10,
                max_file_size: 1 << 20,
                reuse_logs,
                ..Options::default()
            },
        )
        .map_err(|e| e.to_string())
    };
    let mut db = open(false)?;
    let mut batches = 0;
    while !paths.stop().exists() {
        let mut batch = WriteBatch::new();
        for j in batches * BATCH..(batches + 1) * BATCH {
            if is_delete(j) {
                batch.delete(&key(j));
            } else {
                batch.put(&key(j), &value(j));
            }
        }
        db.write(&batch).map_err(|e| e.to_string())?;
        batches += 1;
        let temporary = paths.root.join("progress.tmp");
        std::fs::write(&temporary, (batches * BATCH).to_string()).map_err(|e| e.to_string())?;
        std::fs::rename(&temporary, paths.progress()).map_err(|e| e.to_string())?;
        if batches % 200 == 0 {
            db.compact_range(None, None).map_err(|e| e.to_string())?;
        }
        if batches % 500 == 0 {
            drop(db);
            db = open(batches % 1000 == 0)?;
        }
    }
    Ok(format!("{} writes", batches * BATCH))
}

fn scan(db: &DB, options: &ReadOptions) -> Result<Model, String> {
    support::state::scan(db, options).map_err(|e| e.to_string())
}

/// The `j` a value says it was written by, if it is one the workload writes.
fn written_by(k: u64, found: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(found).ok()?;
    let j: u64 = text.strip_prefix('v')?.split('-').next()?.parse().ok()?;
    (j % KEYS == k && !is_delete(j) && value(j) == found).then_some(j)
}

/// The number of writes `p` (a whole number of batches, `lo <= p <= hi`) after which the
/// database holds exactly `view`; an error saying why there is none.
fn prefix_of(view: &Model, lo: u64, hi: u64) -> Result<u64, String> {
    // Each value found bounds p: its write is in the prefix and the key's next write is not.
    let (mut low, mut high) = (lo, hi);
    for (found_key, found) in view {
        let k = std::str::from_utf8(found_key)
            .ok()
            .and_then(|s| s.strip_prefix('k'))
            .and_then(|s| s.parse::<u64>().ok())
            .filter(|&k| k < KEYS)
            .ok_or_else(|| format!("a key never written: {found_key:?}"))?;
        let j = written_by(k, found).ok_or_else(|| {
            format!(
                "a value never written: {:?} = {:?}",
                String::from_utf8_lossy(found_key),
                String::from_utf8_lossy(found)
            )
        })?;
        low = low.max(j + 1);
        high = high.min(j + KEYS);
    }
    let mut p = low.div_ceil(BATCH) * BATCH;
    while p <= high {
        let matches = (0..KEYS).all(|k| {
            let last = (p > k).then(|| k + (p - 1 - k) / KEYS * KEYS);
            let expected = last.filter(|&j| !is_delete(j)).map(value);
            view.get(&key(k)) == expected.as_ref()
        });
        if matches {
            return Ok(p);
        }
        p += BATCH;
    }
    Err(format!(
        "no prefix of {lo}..={hi} writes holds what was read ({} keys, values bound it to \
         {low}..={high})",
        view.len()
    ))
}

/// A reader: open, then refresh, scan and check until the time is up.
fn reader(paths: &Paths, secs: u64) -> Result<String, String> {
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut rng = rand::rngs::StdRng::seed_from_u64(std::process::id().into());
    let acked_before = read_progress(paths);
    let db = DB::open_read_only(paths.db(), Options::default()).map_err(|e| e.to_string())?;
    let mut view = scan(&db, &ReadOptions::default())?;
    let mut p = prefix_of(&view, acked_before, read_progress(paths) + BATCH)?;
    let (mut refreshes, first) = (0u64, p);
    while Instant::now() < deadline {
        // An iterator and a snapshot taken now must keep reading this state after the refresh.
        let keep = refreshes % 4 == 0;
        let mut old_iter = keep.then(|| db.iter());
        let old_snapshot = keep.then(|| db.snapshot());
        let old_view = view.clone();

        let acked_before = read_progress(paths);
        db.refresh().map_err(|e| e.to_string())?;
        refreshes += 1;
        view = scan(&db, &ReadOptions::default())?;
        p = prefix_of(&view, acked_before.max(p), read_progress(paths) + BATCH)
            .map_err(|e| format!("refresh {refreshes}: {e}"))?;
        for _ in 0..50 {
            let k = key(rng.gen_range(0..KEYS));
            let got = db.get(&k).map_err(|e| e.to_string())?;
            if got.as_ref() != view.get(&k) {
                return Err(format!("get({k:?}) disagrees with the scan"));
            }
        }
        if let (Some(iter), Some(snapshot)) = (old_iter.as_mut(), old_snapshot) {
            iter.seek_to_first();
            let mut seen = Model::new();
            while iter.valid() {
                seen.insert(iter.key().to_vec(), iter.value().to_vec());
                iter.next();
            }
            iter.status().map_err(|e| e.to_string())?;
            if seen != old_view {
                return Err("an iterator made before a refresh changed".into());
            }
            let at_snapshot = ReadOptions {
                snapshot: Some(snapshot),
                ..ReadOptions::default()
            };
            if scan(&db, &at_snapshot)? != old_view {
                return Err("a snapshot taken before a refresh changed".into());
            }
        }
    }
    Ok(format!(
        "{refreshes} refreshes, from {first} to {p} writes seen"
    ))
}

/// Reads a database in a directory nobody may write to (see the test below).
fn read_protected(paths: &Paths) -> Result<String, String> {
    if let Ok(db) = DB::open(paths.db(), Options::default()) {
        drop(db);
        return Err("a writable open succeeded: the directory is not write-protected".into());
    }
    // A database in a directory this user may not enter is a permission error, not missing.
    match DB::open_read_only(paths.root.join("private/db"), Options::default()) {
        Err(strata::Error::Io { source, .. })
            if source.kind() == std::io::ErrorKind::PermissionDenied => {}
        other => return Err(format!("opening a private database: {other:?}")),
    }
    let db = DB::open_read_only(paths.db(), Options::default()).map_err(|e| e.to_string())?;
    db.refresh().map_err(|e| e.to_string())?;
    let view = scan(&db, &ReadOptions::default())?;
    let expected = read_progress(paths);
    let p = prefix_of(&view, expected, expected)?;
    Ok(format!("read all {p} writes"))
}

/// Fails unless this process may run others as `nobody`.
fn require_root() {
    // SAFETY: geteuid has no preconditions.
    let euid = unsafe { libc::geteuid() };
    assert_eq!(
        euid, 0,
        "these tests run readers as user nobody (uid {NOBODY}) through setpriv, which needs \
         root; make test runs as root"
    );
}

/// A fresh directory the readers (as `nobody`) can reach and read but not write.
fn run_root() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let root = tempfile::tempdir().unwrap();
    std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    root
}

fn wait_with_output(child: Child, what: &str) -> (bool, String) {
    let output = child.wait_with_output().unwrap();
    let text = format!(
        "{what}: {}{}",
        String::from_utf8_lossy(&output.stdout).trim(),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text)
}

fn settings() -> (u64, usize) {
    let secs = std::env::var(SECS).ok().map_or(4, |s| s.parse().unwrap());
    let readers = std::env::var("STRATA_READERS")
        .ok()
        .map_or(2, |s| s.parse().unwrap());
    (secs, readers)
}

/// Starts `writer`, then once it has written, the readers; checks every process's outcome.
fn run_beside(test: &str, writer: impl FnOnce(&Paths) -> Child) {
    require_root();
    let (secs, readers) = settings();
    let root = run_root();
    let paths = Paths {
        root: root.path().to_path_buf(),
    };
    let mut writer = writer(&paths);
    let started = Instant::now();
    while read_progress(&paths) < 1000 {
        if let Some(status) = writer.try_wait().unwrap() {
            let (_, text) = wait_with_output(writer, "writer");
            panic!("the writer ended early ({status}): {text}");
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the writer wrote nothing"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let children: Vec<Child> = (0..readers)
        .map(|_| spawn_role(test, "reader", &paths, secs, true))
        .collect();
    let mut report = Vec::new();
    let mut all_ok = true;
    for (i, child) in children.into_iter().enumerate() {
        let (ok, text) = wait_with_output(child, &format!("reader {i}"));
        all_ok &= ok;
        report.push(text);
    }
    std::fs::write(paths.stop(), b"").unwrap();
    let (ok, text) = wait_with_output(writer, "writer");
    all_ok &= ok;
    report.push(text);
    let report = report.join("\n");
    eprintln!("{report}");
    assert!(all_ok, "{report}");

    // Afterwards the database holds exactly the writes the writer acknowledged.
    let db = DB::open(
        paths.db(),
        Options {
            paranoid_checks: true,
            ..Options::default()
        },
    )
    .unwrap();
    let total = read_progress(&paths);
    prefix_of(&scan(&db, &ReadOptions::default()).unwrap(), total, total).unwrap();
}

#[test]
#[ignore = "needs root (readers run as nobody): make test-readonly runs it"]
fn readers_beside_a_strata_writer() {
    play_role_if_child();
    let test = "readers_beside_a_strata_writer";
    run_beside(test, |paths| spawn_role(test, "writer", paths, 0, false));
}

#[test]
#[ignore = "needs root (readers run as nobody): make test-readonly runs it"]
fn readers_beside_a_leveldb_writer() {
    play_role_if_child();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/readers/leveldb_writer.py");
    let probe = Command::new("/usr/bin/python3")
        .args(["-c", "import plyvel"])
        .status()
        .expect("run /usr/bin/python3");
    assert!(
        probe.success(),
        "python3-plyvel (real LevelDB) is missing: scripts/install-deps.sh installs it"
    );
    run_beside("readers_beside_a_leveldb_writer", |paths| {
        Command::new("/usr/bin/python3")
            .arg(&script)
            .args([paths.db(), paths.progress(), paths.stop()])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the LevelDB writer")
    });
}

#[test]
#[ignore = "needs root (the reader runs as nobody): make test-readonly runs it"]
fn a_read_only_open_works_in_a_directory_nobody_may_write() {
    play_role_if_child();
    require_root();
    let root = run_root();
    let paths = Paths {
        root: root.path().to_path_buf(),
    };
    // A database nobody may reach.
    {
        use std::os::unix::fs::PermissionsExt;
        let private = paths.root.join("private");
        DB::open(
            private.join("db"),
            Options {
                create_if_missing: true,
                ..Options::default()
            },
        )
        .unwrap();
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    // A database with tables and records in its live log, then `chmod -R a-w`.
    {
        let db = DB::open(
            paths.db(),
            Options {
                create_if_missing: true,
                write_buffer_size: 64 << 10,
                ..Options::default()
            },
        )
        .unwrap();
        let writes = 400 * BATCH;
        for j in 0..writes {
            if is_delete(j) {
                db.delete(&key(j)).unwrap();
            } else {
                db.put(&key(j), &value(j)).unwrap();
            }
        }
        std::fs::write(paths.progress(), writes.to_string()).unwrap();
    }
    let live_log = std::fs::read_dir(paths.db())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "log"))
        .unwrap();
    assert!(
        std::fs::metadata(&live_log).unwrap().len() > 0,
        "records in the live log"
    );
    let status = Command::new("chmod")
        .args(["-R", "a-w"])
        .arg(paths.db())
        .status()
        .unwrap();
    assert!(status.success());
    let child = spawn_role(
        "a_read_only_open_works_in_a_directory_nobody_may_write",
        "read-protected",
        &paths,
        0,
        true,
    );
    let (ok, text) = wait_with_output(child, "reader");
    // Let the temporary directory be removed.
    Command::new("chmod")
        .args(["-R", "u+w"])
        .arg(paths.db())
        .status()
        .unwrap();
    assert!(ok, "{text}");
    eprintln!("{text}");
}
