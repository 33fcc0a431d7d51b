//! A deletion pass deleted value files while a log naming their values was still on disk (found
//! in the review of the pass that removes obsolete logs before value files). The pass picks its
//! obsolete logs when it lists the directory, and decides which value files nothing reaches
//! later, from views taken after its removals: a flush installing in between made a log
//! obsolete (its memtable left the views) that the pass had not listed, a compaction then
//! dropped every pointer into a value file, and the pass deleted the file with the log still
//! there (a kill then left a log naming values whose file was gone: see
//! `obsolete_log_outlived_its_value_files.rs`). Now a pass deletes value files only when the
//! first live log is still the one it listed by.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use strata::testing::{EnvOp, HookEnv};
use strata::{Env, MemEnv, Options, ValueSeparation, DB};

use crate::support;

const DIR: &str = "/db";

fn key(i: u32) -> Vec<u8> {
    format!("k{i:04}").into_bytes()
}

/// What the hook saw: the log to watch, and each value file removed while it was on disk.
#[derive(Default)]
struct Seen {
    watched_log: Option<PathBuf>,
    violations: Vec<String>,
}

fn options(env: Arc<dyn Env>) -> Options {
    Options {
        create_if_missing: true,
        env,
        write_buffer_size: 16 << 10,
        max_background_jobs: 3,
        value_separation: Some(ValueSeparation::new(256).with_file_size(16 << 10)),
        ..Options::default()
    }
}

#[test]
fn no_value_file_is_deleted_while_a_log_naming_it_is_on_disk() {
    let env = Arc::new(MemEnv::new());
    let armed = Arc::new(AtomicBool::new(false));
    let seen = Arc::new(Mutex::new(Seen::default()));
    let (entered_tx, entered_rx) = mpsc::channel::<()>();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let (entered_tx, release_rx) = (Mutex::new(entered_tx), Mutex::new(release_rx));
    let test_thread = thread::current().id();
    let hooked: Arc<dyn Env> = {
        let (armed, seen, env) = (armed.clone(), seen.clone(), env.clone());
        Arc::new(HookEnv::new(env.clone(), move |call| {
            if call.op != EnvOp::RemoveFile {
                return Ok(());
            }
            let ext = call.path.extension().and_then(|e| e.to_str()).unwrap_or("");
            // Hold one pass in its removals, off this test's thread: its listing is taken.
            if ext == "ldb"
                && thread::current().id() != test_thread
                && armed.swap(false, Ordering::AcqRel)
            {
                entered_tx.lock().unwrap().send(()).unwrap();
                let _ = release_rx
                    .lock()
                    .unwrap()
                    .recv_timeout(Duration::from_secs(8));
            }
            if ext == "vlog" {
                let mut seen = seen.lock().unwrap();
                let on_disk = seen.watched_log.clone().filter(|log| env.file_exists(log));
                if let Some(log) = on_disk {
                    seen.violations.push(format!(
                        "{} removed while {} is on disk",
                        call.path.display(),
                        log.display()
                    ));
                }
            }
            Ok(())
        }))
    };
    let db = Arc::new(DB::open(DIR, options(hooked)).unwrap());
    for round in 0..2 {
        for i in 0..200 {
            db.put(&key(i), format!("small-{round}").as_bytes())
                .unwrap();
        }
        if round == 0 {
            db.compact_range(None, None).unwrap();
        }
    }
    armed.store(true, Ordering::Release);
    let compacting = {
        let db = db.clone();
        thread::spawn(move || db.compact_range(None, None))
    };
    entered_rx
        .recv_timeout(Duration::from_secs(20))
        .expect("a pass held in its removals");
    // The current log takes large values; later flushes make it obsolete and overwrites
    // leave its values to nothing, while the held pass goes on from its old listing.
    let log = support::files::numbered_files(&*env, Path::new(DIR), ".log")
        .into_iter()
        .max()
        .unwrap();
    seen.lock().unwrap().watched_log = Some(Path::new(DIR).join(format!("{log:06}.log")));
    for i in 0..30 {
        db.put(&key(i), &[b'L'; 10_000]).unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    for round in 1.. {
        for i in 0..200 {
            db.put(&key(i), format!("s{round}").as_bytes()).unwrap();
        }
        let live: u64 = db
            .property("strata.value-files.live-bytes")
            .unwrap()
            .parse()
            .unwrap();
        if live == 0 {
            break;
        }
        assert!(Instant::now() < deadline, "live value bytes stayed {live}");
    }
    release_tx.send(()).unwrap();
    compacting.join().unwrap().unwrap();
    drop(Arc::try_unwrap(db).ok().unwrap());
    let violations = seen.lock().unwrap().violations.clone();
    assert!(violations.is_empty(), "{violations:?}");
}
