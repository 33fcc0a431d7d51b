//! `Options::compaction_filter`: what a filter drops or changes is gone or changed after a
//! compaction (older values of a dropped key stay hidden), it is asked only about the newest
//! entry of each key and never about one a live snapshot can see, and a snapshot taken while a
//! filtering compaction runs keeps reading what it saw when it was taken.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use strata::{CompactionFilter, FilterDecision, MemEnv, Options, ReadOptions, DB};
use support::state::{scan, Model};

const DIR: &str = "/filter-db";

/// One call of a filter: the level, the key and the value.
type Call = (usize, Vec<u8>, Vec<u8>);

/// Drops keys starting with `drop`, upper-cases values of keys starting with `change` (the
/// filter is asked again at each compaction: a change must bear repeating), and notes every
/// call.
#[derive(Default)]
struct Rules {
    calls: Mutex<Vec<Call>>,
}

impl CompactionFilter for Rules {
    fn filter(&self, level: usize, key: &[u8], value: &[u8]) -> FilterDecision {
        self.calls
            .lock()
            .push((level, key.to_vec(), value.to_vec()));
        if key.starts_with(b"drop") {
            FilterDecision::Remove
        } else if key.starts_with(b"change") {
            FilterDecision::ChangeValue(value.to_ascii_uppercase())
        } else {
            FilterDecision::Keep
        }
    }
}

fn options(env: &Arc<MemEnv>, filter: Arc<dyn CompactionFilter>) -> Options {
    Options {
        compaction_filter: Some(filter),
        expiring_keys: true,
        ..support::options(env)
    }
}

fn model(entries: &[(&str, &str)]) -> Model {
    entries
        .iter()
        .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
        .collect()
}

#[test]
fn dropped_keys_go_changed_values_change_and_older_values_stay_hidden() {
    let env = Arc::new(MemEnv::new());
    env.set_clock(Some(1_767_225_600_000_000));
    let rules = Arc::new(Rules::default());
    let db = DB::open(DIR, options(&env, rules.clone())).unwrap();
    // Older values in a deeper level first: dropping the newer value must not uncover them.
    db.put(b"drop-me", b"older").unwrap();
    db.put(b"change-me", b"older").unwrap();
    db.compact_range(None, None).unwrap();
    rules.calls.lock().clear();
    db.put(b"drop-me", b"newer").unwrap();
    db.put(b"change-me", b"ab").unwrap();
    db.put_with_ttl(b"change-expiring", b"xy", Duration::from_secs(60))
        .unwrap();
    db.put(b"keep", b"k").unwrap();
    db.delete(b"keep-deleted").unwrap();
    db.compact_range(None, None).unwrap();

    let expected = model(&[
        ("change-expiring", "XY"),
        ("change-me", "AB"),
        ("keep", "k"),
    ]);
    assert_eq!(scan(&db, &ReadOptions::default()).unwrap(), expected);
    assert_eq!(db.get(b"drop-me").unwrap(), None);
    // Asked once per key about its newest value (not about the older values it shadows, nor
    // about the deletion), at the output level, with the user's bytes (no expiry time).
    let mut asked: Vec<(Vec<u8>, Vec<u8>)> = rules
        .calls
        .lock()
        .iter()
        .map(|(level, k, v)| {
            assert!(*level >= 1, "asked at level {level}");
            (k.clone(), v.clone())
        })
        .collect();
    asked.sort();
    asked.dedup_by(|a, b| a.0 == b.0);
    let keys: Vec<&[u8]> = asked.iter().map(|(k, _)| k.as_slice()).collect();
    assert_eq!(
        keys,
        [&b"change-expiring"[..], b"change-me", b"drop-me", b"keep"]
    );
    assert!(rules
        .calls
        .lock()
        .iter()
        .all(|(_, _, v)| v.as_slice() != b"older"));

    // The changed expiring value keeps its expiry time; everything survives a reopen.
    drop(db);
    let db = DB::open(DIR, options(&env, Arc::new(Rules::default()))).unwrap();
    assert_eq!(scan(&db, &ReadOptions::default()).unwrap(), expected);
    env.advance_clock(Duration::from_secs(60));
    assert_eq!(db.get(b"change-expiring").unwrap(), None);
}

#[test]
fn entries_a_live_snapshot_sees_are_never_filtered() {
    let env = Arc::new(MemEnv::new());
    let rules = Arc::new(Rules::default());
    let db = DB::open(DIR, options(&env, rules.clone())).unwrap();
    db.put(b"drop-before", b"a").unwrap();
    db.put(b"change-before", b"b").unwrap();
    let snapshot = db.snapshot();
    db.put(b"drop-after", b"c").unwrap();
    db.put(b"change-after", b"d").unwrap();
    db.compact_range(None, None).unwrap();

    let at_snapshot = ReadOptions {
        snapshot: Some(snapshot.clone()),
        ..ReadOptions::default()
    };
    let seen = model(&[("change-before", "b"), ("drop-before", "a")]);
    assert_eq!(scan(&db, &at_snapshot).unwrap(), seen);
    assert_eq!(
        scan(&db, &ReadOptions::default()).unwrap(),
        model(&[
            ("change-after", "D"),
            ("change-before", "b"),
            ("drop-before", "a")
        ])
    );
    let asked: Vec<Vec<u8>> = rules.calls.lock().iter().map(|c| c.1.clone()).collect();
    assert!(
        asked.iter().all(|k| k.ends_with(b"after")),
        "asked about entries the snapshot sees: {asked:?}"
    );

    // Once the snapshot is gone, the next compaction filters the rest.
    drop((snapshot, at_snapshot));
    db.compact_range(None, None).unwrap();
    assert_eq!(
        scan(&db, &ReadOptions::default()).unwrap(),
        model(&[("change-after", "D"), ("change-before", "B")])
    );
}

/// Holds the first call until the test lets it go.
struct Gate {
    reached: Mutex<Option<mpsc::Sender<()>>>,
    release: Mutex<mpsc::Receiver<()>>,
}

impl CompactionFilter for Gate {
    fn filter(&self, _level: usize, _key: &[u8], value: &[u8]) -> FilterDecision {
        if let Some(reached) = self.reached.lock().take() {
            reached.send(()).unwrap();
            self.release.lock().recv().unwrap();
        }
        FilterDecision::ChangeValue([b"filtered-", value].concat())
    }
}

#[test]
fn a_snapshot_taken_during_a_filtering_compaction_keeps_its_view() {
    let env = Arc::new(MemEnv::new());
    let (reached_tx, reached_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel();
    let gate = Arc::new(Gate {
        reached: Mutex::new(Some(reached_tx)),
        release: Mutex::new(release_rx),
    });
    let db = Arc::new(DB::open(DIR, options(&env, gate)).unwrap());
    for i in 0..100u32 {
        db.put(format!("k{i:03}").as_bytes(), b"v").unwrap();
    }
    let compacting = {
        let db = Arc::clone(&db);
        std::thread::spawn(move || db.compact_range(None, None))
    };
    reached_rx.recv().unwrap();
    // The compaction is merging: a snapshot now sees the unfiltered values, and must keep
    // seeing them after the compaction installs the filtered ones.
    let snapshot = db.snapshot();
    let at_snapshot = ReadOptions {
        snapshot: Some(snapshot),
        ..ReadOptions::default()
    };
    let before = scan(&db, &at_snapshot).unwrap();
    assert!(before.values().all(|v| v == b"v"));
    release_tx.send(()).unwrap();
    compacting.join().unwrap().unwrap();
    assert_eq!(scan(&db, &at_snapshot).unwrap(), before);
    assert_eq!(
        db.get_opt(&at_snapshot, b"k007").unwrap(),
        Some(b"v".to_vec())
    );
    assert_eq!(
        db.get_many_opt(&at_snapshot, &[b"k000", b"k099"]).unwrap(),
        vec![Some(b"v".to_vec()), Some(b"v".to_vec())]
    );
    assert_eq!(db.get(b"k007").unwrap(), Some(b"filtered-v".to_vec()));
}

/// Panics on keys starting with `boom`.
struct Panics;

impl CompactionFilter for Panics {
    fn filter(&self, _level: usize, key: &[u8], _value: &[u8]) -> FilterDecision {
        assert!(!key.starts_with(b"boom"), "the filter met a boom");
        FilterDecision::Keep
    }
}

/// A filter that panics fails the compaction (and `compact_range`, which does not hang); the
/// database keeps what it holds, refuses writes with the panic as its background error, and
/// reopens with every entry once the filter is fixed.
#[test]
fn a_panicking_filter_stops_writes_and_loses_nothing() {
    let env = Arc::new(MemEnv::new());
    let db = DB::open(DIR, options(&env, Arc::new(Panics))).unwrap();
    db.put(b"boom", b"1").unwrap();
    db.put(b"keep", b"2").unwrap();
    let (done, finished) = mpsc::channel();
    let db = Arc::new(db);
    let compacting = Arc::clone(&db);
    std::thread::spawn(move || {
        let result = compacting.compact_range(None, None);
        // Closed by the last handle, the test's, before it reopens.
        drop(compacting);
        done.send(result)
    });
    let err = finished
        .recv_timeout(Duration::from_secs(60))
        .expect("compact_range returned")
        .unwrap_err();
    assert!(err.to_string().contains("panicked"), "{err}");
    assert_eq!(db.get(b"keep").unwrap(), Some(b"2".to_vec()));
    assert_eq!(db.get(b"boom").unwrap(), Some(b"1".to_vec()));
    let refused = db.put(b"later", b"3").unwrap_err();
    assert!(refused.to_string().contains("panicked"), "{refused}");
    let db = Arc::into_inner(db).expect("the only handle left");
    drop(db);
    let db = DB::open(DIR, options(&env, Arc::new(Rules::default()))).unwrap();
    assert_eq!(
        scan(&db, &ReadOptions::default()).unwrap(),
        model(&[("boom", "1"), ("keep", "2")])
    );
}
