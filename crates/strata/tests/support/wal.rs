//! Hand-made write-ahead logs over a `MemEnv`, for the tests of recovery and read-only handles
//! reading logs (`log_continuity_after_gaps.rs`, `read_only_log_reads_again.rs`): batch records,
//! log blocks, a database holding `a` plus a log, options whose env a hook watches, and a
//! paranoid read-only open that a writer overtakes (also `mapped_log_under_attack.rs`).

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use strata::testing::{
    write_batch_contents, write_batch_set_sequence, write_log_records, EnvCall, EnvOp, HookEnv,
};
use strata::{Env, MemEnv, Options, WriteBatch, DB};

/// A log block's size.
pub const BLOCK: usize = 32 * 1024;

/// The keys the tests write, `a` at sequence 1 and the others after it.
pub const KEYS: [&str; 5] = ["a", "b", "c", "d", "e"];

/// The tests' options over `env`, with `paranoid_checks` as given.
pub fn options(env: &Arc<MemEnv>, paranoid_checks: bool) -> Options {
    Options {
        paranoid_checks,
        ..super::options(env)
    }
}

/// Options over `env` whose hook sees every call first.
pub fn hooked(
    env: &Arc<MemEnv>,
    paranoid_checks: bool,
    hook: impl Fn(&EnvCall<'_>) -> strata::Result<()> + Send + Sync + 'static,
) -> Options {
    let inner: Arc<dyn Env> = env.clone();
    Options {
        env: Arc::new(HookEnv::new(inner, hook)),
        ..options(env, paranoid_checks)
    }
}

/// The log record of a batch putting `key` at `sequence`.
pub fn batch(key: &str, sequence: u64) -> Vec<u8> {
    let mut batch = WriteBatch::new();
    batch.put(key.as_bytes(), b"v");
    write_batch_set_sequence(&mut batch, sequence);
    write_batch_contents(&batch).to_vec()
}

/// Log blocks: each list of records written from a block's start, zero-filled to its end
/// (the last block is not padded; an empty block is a whole block of zeros).
pub fn blocks(blocks: &[Vec<Vec<u8>>]) -> Vec<u8> {
    let mut bytes = Vec::new();
    for (i, records) in blocks.iter().enumerate() {
        let records: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
        bytes.extend(write_log_records(&records));
        if i + 1 < blocks.len() {
            let end = bytes.len().next_multiple_of(BLOCK).max((i + 1) * BLOCK);
            bytes.resize(end, 0);
        }
    }
    bytes
}

/// A database holding `a` (sequence 1), closed, plus log 100 holding `log`.
pub fn database_with_log(log: &[u8]) -> Arc<MemEnv> {
    let env = Arc::new(MemEnv::new());
    let db = DB::open("/db", options(&env, false)).unwrap();
    db.put(b"a", b"v").unwrap();
    drop(db);
    write_log(&env, "000100.log", log);
    env
}

/// Writes `bytes` as the file `name` of the database in `/db`.
pub fn write_log(env: &MemEnv, name: &str, bytes: &[u8]) {
    let mut file = env.new_writable_file(&Path::new("/db").join(name)).unwrap();
    file.append(bytes).unwrap();
    file.close().unwrap();
}

/// Which of `keys` `db` holds.
pub fn present(db: &DB, keys: &[&str]) -> Vec<String> {
    keys.iter()
        .filter(|k| db.get(k.as_bytes()).unwrap().is_some())
        .map(|k| k.to_string())
        .collect()
}

/// A paranoid read-only open of `dir` on the disk, during which a writer goes on: right after
/// the handle's first read of a log `is_the_log` picks, `writer_goes_on` runs. Asserts that the
/// handle read that log again.
pub fn paranoid_read_only_open_beside_a_writer(
    dir: &Path,
    is_the_log: impl Fn(&Path) -> bool + Send + Sync + 'static,
    writer_goes_on: impl Fn() + Send + Sync + 'static,
) -> strata::Result<DB> {
    let log_reads = Arc::new(AtomicU64::new(0));
    let env = {
        let log_reads = Arc::clone(&log_reads);
        HookEnv::new(Options::default().env, move |call| {
            if call.op == EnvOp::Read
                && is_the_log(call.path)
                && log_reads.fetch_add(1, Ordering::SeqCst) == 1
            {
                writer_goes_on();
            }
            Ok(())
        })
    };
    let reader = DB::open_read_only(
        dir,
        Options {
            paranoid_checks: true,
            env: Arc::new(env),
            ..Options::default()
        },
    );
    assert!(
        log_reads.load(Ordering::SeqCst) >= 2,
        "the handle read the log in fewer than two reads"
    );
    reader
}
