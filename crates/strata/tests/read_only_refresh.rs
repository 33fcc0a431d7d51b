//! `DB::refresh` on a read-only handle beside a writer: every acknowledged write becomes
//! visible; iterators and snapshots keep the state they were made in, also through tables the
//! writer deletes; and the races with the writer — a table, a log or the manifest deleted between
//! the moment the reader learns of it and the moment it opens it — are retries, not errors.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use rand::{Rng, SeedableRng};
use strata::{CompressionType, Env, Error, MemEnv, Options, ReadOptions, WriteBatch, DB};

mod support;

use support::race_env::RaceEnv;
use support::state::{scan, Model};

fn key(i: usize) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

fn small(options: Options) -> Options {
    Options {
        write_buffer_size: 64 << 10,
        max_file_size: 1 << 20,
        ..options
    }
}

/// Tables in all levels.
fn tables(db: &DB) -> usize {
    (0..7)
        .map(|level| {
            db.property(&format!("leveldb.num-files-at-level{level}"))
                .unwrap()
                .parse::<usize>()
                .unwrap()
        })
        .sum()
}

#[test]
fn a_refresh_sees_every_write_acknowledged_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let writer = DB::open(
        dir.path(),
        small(Options {
            create_if_missing: true,
            ..Options::default()
        }),
    )
    .unwrap();
    let reader = DB::open_read_only(dir.path(), Options::default()).unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(15);
    let mut model = Model::new();
    for round in 0..60 {
        for _ in 0..rng.gen_range(1..120) {
            let mut batch = WriteBatch::new();
            for _ in 0..rng.gen_range(1..5) {
                let k = key(rng.gen_range(0..800));
                if rng.gen_bool(0.15) {
                    batch.delete(&k);
                    model.remove(&k);
                } else {
                    let v = format!("{round}-{}", "v".repeat(rng.gen_range(0..300)));
                    batch.put(&k, v.as_bytes());
                    model.insert(k, v.into_bytes());
                }
            }
            writer.write(&batch).unwrap();
        }
        if round % 10 == 9 {
            writer.compact_range(None, None).unwrap();
        }
        reader.refresh().unwrap();
        assert_eq!(
            scan(&reader, &ReadOptions::default()).unwrap(),
            model,
            "round {round}"
        );
    }
    assert!(tables(&writer) > 0, "the writer should have written tables");
}

#[test]
fn iterators_and_snapshots_keep_their_state_through_tables_the_writer_deletes() {
    // More tables than the reader's table cache holds (`max_open_files` at its least, 74, keeps
    // 64), so tables are closed and reopened after the writer deleted them.
    let env = MemEnv::new();
    let options = Options {
        env: Arc::new(env.clone()),
        compression: CompressionType::None,
        ..small(Options::default())
    };
    let writer = DB::open(
        "/db",
        Options {
            create_if_missing: true,
            ..options.clone()
        },
    )
    .unwrap();
    let old_value = |i: usize| format!("old-{i}-{}", "o".repeat(1000)).into_bytes();
    for i in 0..70_000 {
        writer.put(&key(i), &old_value(i)).unwrap();
    }
    writer.compact_range(None, None).unwrap();
    assert!(tables(&writer) > 64, "{} tables", tables(&writer));

    let reader = DB::open_read_only(
        "/db",
        Options {
            max_open_files: 0, // clamped to the least
            ..options.clone()
        },
    )
    .unwrap();
    let snapshot = reader.snapshot();
    let mut before = reader.iter();
    before.seek_to_first();
    // The reader opens every table once, then the writer replaces them all.
    assert_eq!(
        scan(&reader, &ReadOptions::default()).unwrap().len(),
        70_000
    );
    for i in 0..70_000 {
        writer.put(&key(i), b"new").unwrap();
    }
    writer.compact_range(None, None).unwrap();
    let left: Vec<String> = env
        .children(Path::new("/db"))
        .unwrap()
        .into_iter()
        .filter(|name| name.ends_with(".ldb"))
        .collect();
    assert!(left.len() < 5, "the old tables are deleted: {left:?}");

    reader.refresh().unwrap();
    assert_eq!(reader.get(&key(7)).unwrap(), Some(b"new".to_vec()));
    // The snapshot still reads the old values, which the writer's compaction dropped.
    let at_snapshot = ReadOptions {
        snapshot: Some(snapshot),
        ..ReadOptions::default()
    };
    assert_eq!(
        reader.get_opt(&at_snapshot, &key(7)).unwrap(),
        Some(old_value(7))
    );
    let old = scan(&reader, &at_snapshot).unwrap();
    assert_eq!(old.len(), 70_000);
    for (k, v) in &old {
        assert!(v.starts_with(b"old-"), "{k:?} changed under the snapshot");
    }
    // The iterator made before the refresh goes on over the deleted tables.
    let mut count = 0;
    while before.valid() {
        assert!(before.value().starts_with(b"old-"));
        count += 1;
        before.next();
    }
    before.status().unwrap();
    assert_eq!(count, 70_000);
}

fn has_extension(path: &Path, extension: &str) -> bool {
    path.extension().is_some_and(|e| e == extension)
}

fn wait_for(done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < deadline, "timed out");
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn wait_until_gone(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while path.exists() {
        assert!(
            Instant::now() < deadline,
            "{} was not deleted",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// A writer with some tables and a reader on a hook env, opened side by side.
fn writer_and_reader(dir: &Path) -> (Arc<Mutex<Option<DB>>>, DB, RaceEnv, Model) {
    let writer = DB::open(
        dir,
        small(Options {
            create_if_missing: true,
            ..Options::default()
        }),
    )
    .unwrap();
    let mut model = Model::new();
    for i in 0..1500 {
        let v = format!("first-{i}-{}", "f".repeat(100)).into_bytes();
        writer.put(&key(i), &v).unwrap();
        model.insert(key(i), v);
    }
    let env = RaceEnv::new();
    let reader = DB::open_read_only(
        dir,
        Options {
            env: env.env(),
            ..Options::default()
        },
    )
    .unwrap();
    assert_eq!(scan(&reader, &ReadOptions::default()).unwrap(), model);
    (Arc::new(Mutex::new(Some(writer))), reader, env, model)
}

/// Arms `env` with `hook` for the first open `matches` accepts, refreshes `reader` (the hook
/// runs inside the refresh), and checks that the race happened and the reader sees `model`.
fn refresh_through_race(
    env: &RaceEnv,
    reader: &DB,
    model: &Model,
    matches: impl Fn(&Path) -> bool + Send + 'static,
    hook: impl FnOnce(&Path) + Send + 'static,
) {
    env.arm(matches, hook);
    reader.refresh().unwrap();
    assert_eq!(env.fired(), 1, "the race was staged");
    assert_eq!(&scan(reader, &ReadOptions::default()).unwrap(), model);
}

/// Writes `count` more keys (enough for a new level-0 table) and returns them in the model.
fn write_more(writer: &DB, model: &mut Model, count: usize) {
    for i in 0..count {
        let v = format!("more-{i}-{}", "m".repeat(100)).into_bytes();
        writer.put(&key(100_000 + i), &v).unwrap();
        model.insert(key(100_000 + i), v);
    }
}

/// Writes enough more keys for a new table and waits for the background flush that makes it
/// (so the manifest holds its edit).
fn write_and_flush(writer: &DB, model: &mut Model) {
    let before = tables(writer);
    write_more(writer, model, 700);
    wait_for(|| tables(writer) > before);
}

#[test]
fn a_table_deleted_before_the_reader_opens_it_is_a_retry() {
    let dir = tempfile::tempdir().unwrap();
    let (writer, reader, env, mut model) = writer_and_reader(dir.path());
    write_and_flush(writer.lock().as_ref().unwrap(), &mut model);
    // The reader opens only tables it has not opened yet, each once (it keeps them open). The
    // first time it opens one, the writer writes the same keys again and compacts everything
    // (every table is rewritten, that one goes) before the open reaches the file system.
    let hook_writer = Arc::clone(&writer);
    let rewrite = model.clone();
    refresh_through_race(
        &env,
        &reader,
        &model,
        |path| has_extension(path, "ldb"),
        move |path| {
            let guard = hook_writer.lock();
            let db = guard.as_ref().unwrap();
            for (k, v) in rewrite {
                db.put(&k, &v).unwrap();
            }
            db.compact_range(None, None).unwrap();
            wait_until_gone(path);
        },
    );
}

#[test]
fn a_log_deleted_before_the_reader_reads_it_is_a_retry() {
    let dir = tempfile::tempdir().unwrap();
    let (writer, reader, env, mut model) = writer_and_reader(dir.path());
    write_more(writer.lock().as_ref().unwrap(), &mut model, 100);
    // When the reader opens a live log, the writer flushes it to a table and deletes it.
    let hook_writer = Arc::clone(&writer);
    let dir_path = dir.path().to_path_buf();
    refresh_through_race(
        &env,
        &reader,
        &model,
        |path| has_extension(path, "log"),
        move |_| {
            let logs = |dir: &Path| -> Vec<PathBuf> {
                std::fs::read_dir(dir)
                    .unwrap()
                    .map(|e| e.unwrap().path())
                    .filter(|p| has_extension(p, "log"))
                    .collect()
            };
            let before = logs(&dir_path);
            hook_writer
                .lock()
                .as_ref()
                .unwrap()
                .compact_range(None, None)
                .unwrap();
            for log in before {
                wait_until_gone(&log);
            }
        },
    );
}

#[test]
fn a_manifest_replaced_while_the_reader_reads_it_is_a_retry() {
    let dir = tempfile::tempdir().unwrap();
    let (writer, reader, env, mut model) = writer_and_reader(dir.path());
    // A flush appends an edit to the manifest, so the refresh opens it (waited for: the flush
    // runs in the background, and a refresh that finds the manifest unchanged opens nothing).
    write_and_flush(writer.lock().as_ref().unwrap(), &mut model);
    // Just before the reader opens the manifest, the writer closes and opens again: a new
    // manifest, `CURRENT` renamed to it, the old one deleted.
    let hook_writer = Arc::clone(&writer);
    let dir_path = dir.path().to_path_buf();
    refresh_through_race(
        &env,
        &reader,
        &model,
        |path| {
            path.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("MANIFEST-"))
        },
        move |_| {
            let mut slot = hook_writer.lock();
            drop(slot.take());
            *slot = Some(DB::open(&dir_path, small(Options::default())).unwrap());
        },
    );
    // And it follows the new manifest from then on.
    write_more(writer.lock().as_ref().unwrap(), &mut model, 700);
    reader.refresh().unwrap();
    assert_eq!(scan(&reader, &ReadOptions::default()).unwrap(), model);
}

#[test]
fn a_table_missing_while_the_manifest_stays_put_is_a_corruption_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = DB::open(
            dir.path(),
            small(Options {
                create_if_missing: true,
                ..Options::default()
            }),
        )
        .unwrap();
        write_more(&db, &mut Model::new(), 2000);
        db.compact_range(None, None).unwrap();
    }
    let table = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| has_extension(p, "ldb"))
        .unwrap();
    std::fs::remove_file(&table).unwrap();
    let err = DB::open_read_only(dir.path(), Options::default()).unwrap_err();
    assert!(err.is_corruption(), "{err}");
    let name = table.file_name().unwrap().to_string_lossy().into_owned();
    assert!(err.to_string().contains(&name), "{err}");
}

#[test]
fn a_record_half_written_at_a_logs_end_is_read_whole_by_a_later_refresh() {
    let dir = tempfile::tempdir().unwrap();
    let log = {
        let db = DB::open(
            dir.path(),
            Options {
                create_if_missing: true,
                ..Options::default()
            },
        )
        .unwrap();
        db.put(b"first", b"1").unwrap();
        std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| has_extension(p, "log"))
            .unwrap()
    };
    // The next write's record, as the writer would append it (sequence 2), in two halves.
    let mut batch = WriteBatch::new();
    batch.put(b"second", b"2");
    strata::testing::write_batch_set_sequence(&mut batch, 2);
    let record =
        strata::testing::write_log_records(&[strata::testing::write_batch_contents(&batch)]);
    let (head, tail) = record.split_at(record.len() / 2);
    let append = |bytes: &[u8]| {
        use std::io::Write as _;
        let mut file = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
        file.write_all(bytes).unwrap();
    };
    let size = std::fs::metadata(&log).unwrap().len();
    assert!(
        size + (record.len() as u64) < 32 << 10,
        "the record fits the block"
    );
    append(head);
    let reader = DB::open_read_only(
        dir.path(),
        Options {
            paranoid_checks: true,
            ..Options::default()
        },
    )
    .unwrap();
    assert_eq!(reader.get(b"first").unwrap(), Some(b"1".to_vec()));
    assert_eq!(reader.get(b"second").unwrap(), None);
    reader.refresh().unwrap();
    assert_eq!(reader.get(b"second").unwrap(), None);
    append(tail);
    reader.refresh().unwrap();
    assert_eq!(reader.get(b"second").unwrap(), Some(b"2".to_vec()));
}

#[test]
fn a_refresh_that_fails_keeps_the_state_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(
        dir.path(),
        Options {
            create_if_missing: true,
            ..Options::default()
        },
    )
    .unwrap();
    db.put(b"a", b"1").unwrap();
    drop(db);
    let reader = DB::open_read_only(dir.path(), Options::default()).unwrap();
    std::fs::write(dir.path().join("CURRENT"), b"garbage").unwrap();
    let err = reader.refresh().unwrap_err();
    assert!(matches!(err, Error::Corruption(_)), "{err}");
    assert_eq!(reader.get(b"a").unwrap(), Some(b"1".to_vec()));
}

#[test]
fn a_database_destroyed_and_created_again_is_refused_by_refresh() {
    let dir = tempfile::tempdir().unwrap();
    let create = || {
        DB::open(
            dir.path(),
            Options {
                create_if_missing: true,
                ..Options::default()
            },
        )
        .unwrap()
    };
    let db = create();
    db.put(b"old", b"1").unwrap();
    drop(db);
    for _ in 0..3 {
        drop(DB::open(dir.path(), Options::default()).unwrap()); // a few manifests later
    }
    let reader = DB::open_read_only(dir.path(), Options::default()).unwrap();
    strata::destroy(dir.path(), &Options::default()).unwrap();
    let db = create();
    db.put(b"new", b"2").unwrap();
    let err = reader.refresh().unwrap_err();
    assert!(matches!(err, Error::NotSupported(_)), "{err}");
    assert!(err.to_string().contains("open it again"), "{err}");
    // The handle keeps what it read; a new handle reads the new database.
    assert_eq!(reader.get(b"old").unwrap(), Some(b"1".to_vec()));
    let again = DB::open_read_only(dir.path(), Options::default()).unwrap();
    assert_eq!(again.get(b"new").unwrap(), Some(b"2".to_vec()));
    assert_eq!(again.get(b"old").unwrap(), None);
}
