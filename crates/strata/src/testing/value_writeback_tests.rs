//! The value-file writer's writeback requests and batched appends (`vlog/writer.rs`), seen
//! through [`HookEnv`].
//! They are tested here rather than beside the writer because an engine module may not import
//! `testing` (tests/module_layers.rs).

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use crate::env::{Env, MemEnv};
use crate::error::Error;
use crate::testing::{EnvOp, HookEnv};
use crate::vlog::writer::{Handoff, ValueFileWriter, WRITEBACK_EVERY};
use crate::vlog::{record_size, StoredValue};

/// A writer's env over memory that counts writeback requests and fails them once `fail`
/// is set.
fn counting_env(count: Arc<AtomicUsize>, fail: Arc<AtomicBool>) -> HookEnv {
    HookEnv::new(Arc::new(MemEnv::new()), move |call| {
        if call.op == EnvOp::StartWriteback {
            count.fetch_add(1, Ordering::SeqCst);
            if fail.load(Ordering::SeqCst) {
                return Err(Error::io("writeback", std::io::Error::other("refused")));
            }
        }
        Ok(())
    })
}

/// A writer with writeback on, appending to file 1 of `/db` in a [`counting_env`], with
/// that env's count of writeback requests and the switch that fails them.
fn writer_counting() -> (ValueFileWriter, HookEnv, Arc<AtomicUsize>, Arc<AtomicBool>) {
    let (count, fail): (Arc<AtomicUsize>, Arc<AtomicBool>) = Default::default();
    let env = counting_env(Arc::clone(&count), Arc::clone(&fail));
    env.create_dir(Path::new(DIR)).unwrap();
    let mut writer = ValueFileWriter::new(64 << 20, Handoff::Batched);
    writer.start(&env, Path::new(DIR), 1).unwrap();
    (writer, env, count, fail)
}

const DIR: &str = "/db";

#[test]
fn writeback_starts_each_time_a_file_has_grown_by_writeback_every_bytes() {
    let (mut writer, env, count, _) = writer_counting();
    let dir = Path::new(DIR);
    let value = vec![7u8; 1000];
    let record = record_size(1, value.len());
    let mut since = 0;
    let mut expected = 0;
    for _ in 0..3500 {
        writer
            .append([(&b"k"[..], StoredValue::raw(&value))])
            .unwrap();
        since += record;
        if since >= WRITEBACK_EVERY {
            expected += 1;
            since = 0;
        }
        assert_eq!(count.load(Ordering::SeqCst), expected);
    }
    assert_eq!(expected, 3, "3.5 MB appended crosses 1 MiB three times");
    // A new file counts from zero: what file 1 had appended since its last writeback,
    // and one record short of the next, does not carry over.
    while since + 2 * record < WRITEBACK_EVERY {
        writer
            .append([(&b"k"[..], StoredValue::raw(&value))])
            .unwrap();
        since += record;
    }
    writer.start(&env, dir, 2).unwrap();
    writer
        .append([(&b"k"[..], StoredValue::raw(&value))])
        .unwrap();
    writer
        .append([(&b"k"[..], StoredValue::raw(&value))])
        .unwrap();
    assert_eq!(count.load(Ordering::SeqCst), 3);
    // A writer without writeback never asks for it.
    let mut without = ValueFileWriter::new(64 << 20, Handoff::Immediate);
    without.start(&env, dir, 3).unwrap();
    let large = vec![7u8; 3 * WRITEBACK_EVERY as usize];
    without
        .append([(&b"k"[..], StoredValue::raw(&large))])
        .unwrap();
    assert_eq!(count.load(Ordering::SeqCst), 3);
}

/// The hook's error stands for the flush a writeback request makes (the request itself
/// is a hint whose failure `PosixEnv` ignores: env/posix.rs).
#[test]
fn a_failed_writeback_flush_fails_the_append_and_every_later_call() {
    let (mut writer, env, count, fail) = writer_counting();
    let dir = Path::new(DIR);
    fail.store(true, Ordering::SeqCst);
    let value = vec![7u8; WRITEBACK_EVERY as usize];
    let err = writer
        .append([(&b"k"[..], StoredValue::raw(&value))])
        .unwrap_err();
    assert!(err.to_string().contains("writeback: refused"), "{err}");
    assert_eq!(count.load(Ordering::SeqCst), 1);
    // The file's tail is unknown now: nothing more is appended or synced.
    fail.store(false, Ordering::SeqCst);
    assert!(writer
        .append([(&b"k"[..], StoredValue::raw(b"v"))])
        .is_err());
    assert!(writer.sync_current(&env, dir, u64::MAX).is_err());
}

/// A batched writer leaves its appends in the file's buffer (`MemEnv`'s files have none, so
/// the flushes that would write it out are counted): none per append, one when the file is
/// retired, a sync of the current file (which writes the buffer out first: `PosixEnv`), and
/// one when the database closes. An immediate writer writes each append out.
#[test]
fn a_batched_writer_writes_appends_out_when_it_retires_syncs_or_closes_a_file() {
    let flushes = Arc::new(AtomicUsize::new(0));
    let syncs = Arc::new(AtomicUsize::new(0));
    let (counted, synced) = (Arc::clone(&flushes), Arc::clone(&syncs));
    let env = HookEnv::new(Arc::new(MemEnv::new()), move |call| {
        match call.op {
            EnvOp::Flush => counted.fetch_add(1, Ordering::SeqCst),
            EnvOp::Sync => synced.fetch_add(1, Ordering::SeqCst),
            _ => 0,
        };
        Ok(())
    });
    let dir = Path::new(DIR);
    env.create_dir(dir).unwrap();
    let value = vec![7u8; 1000];
    let append = |writer: &mut ValueFileWriter, times: usize| {
        for _ in 0..times {
            writer
                .append([(&b"k"[..], StoredValue::raw(&value))])
                .unwrap();
        }
    };
    let mut batched = ValueFileWriter::new(64 << 20, Handoff::Batched);
    batched.start(&env, dir, 1).unwrap();
    append(&mut batched, 100);
    assert_eq!(flushes.load(Ordering::SeqCst), 0);
    assert_eq!(batched.current(), Some((1, 100 * record_size(1, 1000))));
    batched.start(&env, dir, 2).unwrap();
    assert_eq!(
        flushes.load(Ordering::SeqCst),
        1,
        "file 1 written out as it retires"
    );
    append(&mut batched, 3);
    assert_eq!(flushes.load(Ordering::SeqCst), 1);
    assert_eq!(syncs.load(Ordering::SeqCst), 0);
    batched.sync_current(&env, dir, u64::MAX).unwrap();
    assert_eq!(syncs.load(Ordering::SeqCst), 1, "file 2's appends synced");
    // A closing database writes out what a compaction that did not install left buffered.
    append(&mut batched, 2);
    batched.write_out();
    assert_eq!(flushes.load(Ordering::SeqCst), 2);

    let mut immediate = ValueFileWriter::new(64 << 20, Handoff::Immediate);
    immediate.start(&env, dir, 3).unwrap();
    append(&mut immediate, 5);
    assert_eq!(flushes.load(Ordering::SeqCst), 2 + 5);
}
