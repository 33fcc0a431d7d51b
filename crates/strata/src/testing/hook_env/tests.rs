use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use super::*;
use crate::env::{MemEnv, PosixEnv};
use crate::error::Error;

/// The error the hooks of these tests fail operations with.
fn refused(call: &EnvCall<'_>) -> Error {
    Error::io(
        format!(
            "{:?} {} (refused by the hook)",
            call.op,
            call.path.display()
        ),
        io::Error::other("refused"),
    )
}

fn read_all(env: &dyn Env, path: &str) -> Vec<u8> {
    crate::env::read_file_to_vec(env, Path::new(path)).unwrap()
}

#[test]
fn a_hook_that_lets_everything_through_keeps_the_env_contract() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&calls);
    let count = move |_: &EnvCall<'_>| {
        counter.fetch_add(1, Ordering::SeqCst);
        Ok(())
    };
    let mem = HookEnv::new(Arc::new(MemEnv::new()), count.clone());
    crate::env::conformance::run_all(&mem, Path::new("/hook"));
    let dir = tempfile::tempdir().unwrap();
    let posix = HookEnv::new(Arc::new(PosixEnv::new()), count);
    crate::env::conformance::run_all(&posix, dir.path());
    assert!(
        calls.load(Ordering::SeqCst) > 100,
        "the hook was not called"
    );
}

#[test]
fn the_hook_sees_every_operation_with_its_path() {
    type Seen = (EnvOp, PathBuf, Option<PathBuf>);
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let log = Arc::clone(&seen);
    let env = HookEnv::new(Arc::new(MemEnv::new()), move |call: &EnvCall<'_>| {
        let to = call.to.map(Path::to_path_buf);
        log.lock().push((call.op, call.path.to_path_buf(), to));
        Ok(())
    });
    let (dir, a, b) = (Path::new("/d"), Path::new("/d/a"), Path::new("/d/b"));
    env.create_dir(dir).unwrap();
    let mut w = env.new_writable_file(a).unwrap();
    w.append(b"hello").unwrap();
    w.flush().unwrap();
    w.start_writeback().unwrap();
    w.sync().unwrap();
    w.close().unwrap();
    let mut w = env.new_appendable_file(a).unwrap();
    w.append(b"!").unwrap();
    drop(w);
    let mut r = env.new_sequential_file(a).unwrap();
    r.skip(1).unwrap();
    r.read(&mut [0; 4]).unwrap();
    let r = env.new_random_access_file(a).unwrap();
    r.read_at(0, &mut [0; 2]).unwrap();
    assert!(env.file_exists(a), "not hooked");
    env.file_size(a).unwrap();
    env.rename(a, b).unwrap();
    env.children(dir).unwrap();
    env.sync_dir(dir).unwrap();
    let lock = env.lock_file(Path::new("/d/LOCK")).unwrap();
    env.unlock_file(lock).unwrap();
    env.remove_file(b).unwrap();
    env.remove_file(Path::new("/d/LOCK")).unwrap();
    env.remove_dir(dir).unwrap();
    let _ = env.now_micros();

    let on = |op, path: &Path| (op, path.to_path_buf(), None);
    let expected: Vec<Seen> = vec![
        on(EnvOp::CreateDir, dir),
        on(EnvOp::NewWritableFile, a),
        on(EnvOp::Append, a),
        on(EnvOp::Flush, a),
        on(EnvOp::StartWriteback, a),
        on(EnvOp::Sync, a),
        on(EnvOp::Close, a),
        on(EnvOp::NewAppendableFile, a),
        on(EnvOp::Append, a),
        on(EnvOp::NewSequentialFile, a),
        on(EnvOp::Skip, a),
        on(EnvOp::Read, a),
        on(EnvOp::NewRandomAccessFile, a),
        on(EnvOp::ReadAt, a),
        on(EnvOp::FileSize, a),
        (EnvOp::Rename, a.to_path_buf(), Some(b.to_path_buf())),
        on(EnvOp::Children, dir),
        on(EnvOp::SyncDir, dir),
        on(EnvOp::LockFile, Path::new("/d/LOCK")),
        on(EnvOp::UnlockFile, Path::new("/d/LOCK")),
        on(EnvOp::RemoveFile, b),
        on(EnvOp::RemoveFile, Path::new("/d/LOCK")),
        on(EnvOp::RemoveDir, dir),
    ];
    assert_eq!(*seen.lock(), expected);
}

#[test]
fn a_failing_hook_fails_the_operation_and_leaves_the_files_alone() {
    let refuse: Arc<Mutex<Vec<EnvOp>>> = Arc::default();
    let ops = Arc::clone(&refuse);
    let inner = Arc::new(MemEnv::new());
    let env = HookEnv::new(inner.clone(), move |call: &EnvCall<'_>| {
        if ops.lock().contains(&call.op) {
            return Err(refused(call));
        }
        Ok(())
    });
    let set = |ops: &[EnvOp]| *refuse.lock() = ops.to_vec();
    env.create_dir(Path::new("/d")).unwrap();

    set(&[EnvOp::NewWritableFile]);
    let err = env.new_writable_file(Path::new("/d/new")).err().unwrap();
    assert!(err.to_string().contains("refused by the hook"), "{err}");
    assert!(!inner.file_exists(Path::new("/d/new")));

    set(&[]);
    let mut w = env.new_writable_file(Path::new("/d/w")).unwrap();
    w.append(b"a").unwrap();
    set(&[EnvOp::Append, EnvOp::Sync]);
    assert!(w.append(b"b").is_err());
    assert!(w.sync().is_err());
    set(&[]);
    w.append(b"c").unwrap();
    w.close().unwrap();
    assert_eq!(read_all(&*inner, "/d/w"), b"ac", "a refused append wrote");

    set(&[EnvOp::Rename, EnvOp::RemoveFile]);
    assert!(env.rename(Path::new("/d/w"), Path::new("/d/v")).is_err());
    assert!(env.remove_file(Path::new("/d/w")).is_err());
    assert!(inner.file_exists(Path::new("/d/w")));
    assert!(!inner.file_exists(Path::new("/d/v")));

    set(&[EnvOp::ReadAt]);
    let r = env.new_random_access_file(Path::new("/d/w")).unwrap();
    let mut buf = [0u8; 2];
    assert!(r.read_at(0, &mut buf).is_err());
    assert_eq!(buf, [0, 0], "a refused read filled the buffer");
}

#[test]
fn a_hook_can_hold_an_operation_until_it_is_let_go() {
    // The gate: closed while true; the count of syncs waiting at it.
    let gate: Arc<(Mutex<(bool, usize)>, Condvar)> =
        Arc::new((Mutex::new((true, 0)), Condvar::new()));
    let held = Arc::clone(&gate);
    let env = HookEnv::new(Arc::new(MemEnv::new()), move |call: &EnvCall<'_>| {
        if call.op == EnvOp::Sync {
            let (lock, cvar) = &*held;
            let mut state = lock.lock();
            state.1 += 1;
            while state.0 {
                cvar.wait(&mut state);
            }
        }
        Ok(())
    });
    env.create_dir(Path::new("/d")).unwrap();
    let writer = {
        let env = env.clone();
        std::thread::spawn(move || {
            let mut w = env.new_writable_file(Path::new("/d/f")).unwrap();
            w.append(b"data")?;
            w.sync()
        })
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while gate.0.lock().1 == 0 {
        assert!(Instant::now() < deadline, "the sync never reached the hook");
        std::thread::sleep(Duration::from_millis(1));
    }
    std::thread::sleep(Duration::from_millis(50));
    assert!(!writer.is_finished(), "the sync went through a closed gate");
    gate.0.lock().0 = false;
    gate.1.notify_all();
    writer.join().unwrap().unwrap();
}

#[test]
fn a_sleeping_hook_delays_the_operation() {
    let env = HookEnv::new(Arc::new(MemEnv::new()), |call: &EnvCall<'_>| {
        if call.op == EnvOp::Flush {
            std::thread::sleep(Duration::from_millis(40));
        }
        Ok(())
    });
    env.create_dir(Path::new("/d")).unwrap();
    let mut w = env.new_writable_file(Path::new("/d/f")).unwrap();
    let start = Instant::now();
    w.flush().unwrap();
    assert!(start.elapsed() >= Duration::from_millis(40));
}

#[test]
fn a_panicking_hook_panics_the_operation_before_it_happens() {
    let inner = Arc::new(MemEnv::new());
    let env = HookEnv::new(inner.clone(), |call: &EnvCall<'_>| {
        if call.op == EnvOp::Append {
            panic!("injected panic in {}", call.path.display());
        }
        Ok(())
    });
    env.create_dir(Path::new("/d")).unwrap();
    let mut w = env.new_writable_file(Path::new("/d/f")).unwrap();
    let panicked = catch_unwind(AssertUnwindSafe(|| w.append(b"never")));
    assert!(panicked.is_err(), "the append did not panic");
    w.close().unwrap();
    assert!(read_all(&*inner, "/d/f").is_empty());
}

#[test]
fn reads_of_a_mapped_file_go_through_the_hook() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("table");
    std::fs::write(&path, vec![7u8; 4096]).unwrap();
    let posix: Arc<dyn Env> = Arc::new(PosixEnv::new());
    assert!(
        posix
            .new_random_access_file(&path)
            .unwrap()
            .mapped()
            .is_some(),
        "the inner file is mapped"
    );
    let reads = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&reads);
    let env = HookEnv::new(posix, move |call: &EnvCall<'_>| {
        if call.op == EnvOp::ReadAt {
            counter.fetch_add(1, Ordering::SeqCst);
        }
        Ok(())
    });
    let file = env.new_random_access_file(&path).unwrap();
    assert!(file.mapped().is_none(), "the mapping would bypass the hook");
    let mut buf = [0u8; 16];
    assert_eq!(file.read_at(100, &mut buf).unwrap(), 16);
    assert_eq!(buf, [7u8; 16]);
    assert_eq!(reads.load(Ordering::SeqCst), 1);
}
