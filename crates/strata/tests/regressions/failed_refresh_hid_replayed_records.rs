//! A read-only handle's refresh that failed after replaying the new records of one log (the
//! next log could not be opened: a transient `EMFILE`) left those records in the log's
//! memtable, and the log's read position past them, but did not count their sequence numbers.
//! The next refresh succeeded and still hid them, and took the next log's first write for one
//! past a gap, leaving that whole log out: a refresh that returned `Ok` missed every write
//! since the one before the failure, until the writer's next flush. Found in the review of
//! issue 15. `Follower::read_logs` now counts what it replayed also when a log fails.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use strata::testing::{EnvOp, HookEnv};
use strata::{Env, Error, MemEnv, Options, ReadOptions, DB};

use crate::support;
use crate::support::state::{scan, Model};

/// `EMFILE` on Linux: the error a reader short of descriptors meets.
const EMFILE: i32 = 24;

fn logs(env: &MemEnv, dir: &Path) -> Vec<String> {
    let mut logs: Vec<String> = env
        .children(dir)
        .unwrap()
        .into_iter()
        .filter(|name| name.ends_with(".log"))
        .collect();
    logs.sort();
    logs
}

/// Two live logs (the writer's flush is held back); the reader's refresh reads the first one's
/// new records, then fails to open the second once. The refresh after it must see every write.
#[test]
fn records_read_by_a_failed_refresh_stayed_hidden_after_the_next_one() {
    let mem = MemEnv::new();
    let dir = Path::new("/db");
    let hold_flush = Arc::new(AtomicBool::new(false));
    let held = Arc::clone(&hold_flush);
    let writer_env = HookEnv::new(Arc::new(mem.clone()), move |call| {
        if call.op == EnvOp::NewWritableFile && call.path.extension().is_some_and(|e| e == "ldb") {
            while held.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        Ok(())
    });
    let writer = DB::open(
        dir,
        Options {
            write_buffer_size: 64 << 10,
            ..support::options(&writer_env)
        },
    )
    .unwrap();
    // The log (by file number) the reader fails to open, once; 0: none.
    let fail_log = Arc::new(AtomicUsize::new(0));
    let failing = Arc::clone(&fail_log);
    let reader_env = HookEnv::new(Arc::new(mem.clone()), move |call| {
        let number = failing.load(Ordering::SeqCst);
        let name = call.path.file_name().unwrap().to_string_lossy();
        if number != 0 && call.op == EnvOp::NewSequentialFile && name == format!("{number:06}.log")
        {
            failing.store(0, Ordering::SeqCst);
            return Err(Error::Io {
                context: format!("open {}", call.path.display()),
                source: Arc::new(std::io::Error::from_raw_os_error(EMFILE)),
            });
        }
        Ok(())
    });
    let mut model = Model::new();
    let mut put = |key: String, size: usize| {
        let (key, value) = (key.into_bytes(), vec![b'v'; size]);
        writer.put(&key, &value).unwrap();
        model.insert(key, value);
    };
    put("first".into(), 10);
    let reader = DB::open_read_only(dir, support::options(&reader_env)).unwrap();
    hold_flush.store(true, Ordering::SeqCst);
    let mut i = 0;
    while logs(&mem, dir).len() < 2 {
        put(format!("fill{i:06}"), 1000);
        i += 1;
    }
    put("in the second log".into(), 10);
    let second: usize = logs(&mem, dir)[1][..6].parse().unwrap();
    fail_log.store(second, Ordering::SeqCst);
    assert!(reader.refresh().is_err(), "the failure is reported");
    assert_eq!(
        fail_log.load(Ordering::SeqCst),
        0,
        "the failure was injected"
    );
    reader.refresh().unwrap();
    let seen = scan(&reader, &ReadOptions::default()).unwrap();
    hold_flush.store(false, Ordering::SeqCst);
    assert_eq!(
        (seen.len(), seen == model),
        (model.len(), true),
        "the refresh sees every write acknowledged before it"
    );
}
