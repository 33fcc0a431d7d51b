//! A checkpoint of a read-only handle failed (`NotFound`) once the writer had flushed and
//! deleted a log the handle had read: the handle kept the log open for checkpoints as it was
//! when it first found a record in it, and that handle — a mapping, which ends where the file
//! ended then — does not hold the records later refreshes read. Copying them reopened the file
//! by name, and it was gone. Found in the review of issue 15. The handle now opens a log again
//! after each refresh that read new records of it.

use std::time::Duration;

use strata::{Options, ReadOptions, DB};

use crate::support::state::{scan, Model};

#[test]
fn a_reader_checkpoint_lost_the_log_records_read_after_the_log_was_first_opened() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("db");
    let writer = DB::open(
        &source,
        Options {
            create_if_missing: true,
            ..Options::default()
        },
    )
    .unwrap();
    let mut model = Model::new();
    let mut put = |key: String| {
        let (key, value) = (key.into_bytes(), vec![b'v'; 100]);
        writer.put(&key, &value).unwrap();
        model.insert(key, value);
    };
    for i in 0..10 {
        put(format!("a{i:04}"));
    }
    let reader = DB::open_read_only(&source, Options::default()).unwrap();
    for i in 0..2000 {
        put(format!("b{i:04}"));
    }
    reader.refresh().unwrap();
    assert_eq!(scan(&reader, &ReadOptions::default()).unwrap(), model);
    let log = std::fs::read_dir(&source)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "log"))
        .unwrap();
    // The writer flushes its memtable: the log is retired, then deleted.
    writer.compact_range(None, None).unwrap();
    crate::support::trials::wait_until("the log's deletion", Duration::from_secs(20), || {
        !log.exists()
    });
    let target = dir.path().join("copy");
    reader.checkpoint(&target).unwrap();
    let paranoid = Options {
        paranoid_checks: true,
        ..Options::default()
    };
    let copy = DB::open(&target, paranoid).unwrap();
    assert_eq!(scan(&copy, &ReadOptions::default()).unwrap(), model);
}
