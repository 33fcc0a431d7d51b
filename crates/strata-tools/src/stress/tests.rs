use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;

use proptest::prelude::*;

use super::journal::{parse_journal, read_journal, Journal, Progress};
use super::run::op_batch;
use super::verify::{apply, Touch};
use super::workload::{OpKind, Scratch, SlotWrite, Workload, MAX_BATCH, MAX_KEYS};
use super::*;
use strata::WriteOptions;

const WORKLOAD: Workload = Workload {
    seed: 42,
    keys: 40,
    value_size: 30,
    range_deletes: false,
    value_separation: None,
};

fn options(threads: u32, ops: u64, sync_every: u64) -> StressOptions {
    StressOptions {
        threads,
        duration: Duration::from_secs(60),
        sync_every,
        max_ops_per_thread: Some(ops),
        seed: Some(WORKLOAD.seed),
        keys_per_thread: Some(WORKLOAD.keys),
        value_size: Some(WORKLOAD.value_size),
        ..StressOptions::default()
    }
}

/// Runs a fresh stress database in `dir` for `ops` ops per thread; returns its path.
fn stressed(dir: &Path, threads: u32, ops: u64, sync_every: u64) -> PathBuf {
    let path = dir.join("db");
    let session = StressSession::open(&path, &options(threads, ops, sync_every)).unwrap();
    assert!(session.report().is_ok(), "{}", session.report());
    let summary = session.run().unwrap();
    assert_eq!(summary.ops, u64::from(threads) * ops);
    assert!(summary.violations.is_empty(), "{:?}", summary.violations);
    path
}

fn verify_options(model: CrashModel) -> StressOptions {
    StressOptions {
        model,
        ..StressOptions::default()
    }
}

fn verify(path: &Path, model: CrashModel) -> VerifyReport {
    verify_stress_db(path, &verify_options(model)).unwrap()
}

fn journal_threads(path: &Path) -> BTreeMap<u32, Progress> {
    read_journal(&journal_path(path)).unwrap().unwrap().threads
}

/// The state ops `0..n` of `thread` leave.
fn replay(thread: u32, n: u64) -> Vec<Option<Touch>> {
    let mut state = vec![None; WORKLOAD.keys as usize];
    let mut scratch = Scratch::default();
    for index in 0..n {
        apply(&WORKLOAD, thread, index, &mut state, &mut scratch);
    }
    state
}

/// What a reader can tell of a slot's state: which put it holds, if any.
fn visible(t: Option<Touch>) -> Option<(u64, u8)> {
    t.filter(|t| t.put).map(|t| (t.op, t.pos))
}

fn value_of(thread: u32, touch: Touch, slot: u32) -> Vec<u8> {
    let mut value = Vec::new();
    WORKLOAD.write_value(thread, touch.op, touch.pos, slot, &mut value);
    value
}

/// Sets a key of `thread` to the state `touch` describes, through the DB API.
fn set_slot(db: &DB, thread: u32, slot: u32, touch: Option<Touch>) {
    let key = WORKLOAD.key(thread, slot);
    match touch {
        Some(t) if t.put => db.put(&key, &value_of(thread, t, slot)).unwrap(),
        _ => db.delete(&key).unwrap(),
    }
}

fn open_db(path: &Path) -> DB {
    DB::open(path, Options::default()).unwrap()
}

fn only_violation(report: &VerifyReport) -> &Violation {
    assert_eq!(report.violations.len(), 1, "{report}");
    &report.violations[0]
}

#[test]
fn ops_are_a_function_of_seed_thread_and_index() {
    let mut a = Vec::new();
    let mut b = Vec::new();
    let mut kinds = [0usize; 3];
    for index in 0..2000 {
        let kind = WORKLOAD.op(3, index, &mut a);
        assert_eq!(WORKLOAD.op(3, index, &mut b), kind);
        assert_eq!(a, b);
        match kind {
            OpKind::Put => assert!(matches!(a.as_slice(), [SlotWrite { put: true, .. }])),
            OpKind::Delete => assert!(matches!(a.as_slice(), [SlotWrite { put: false, .. }])),
            OpKind::Batch => assert!((2..=MAX_BATCH).contains(&a.len())),
            OpKind::DeleteRange => panic!("a range delete in a workload without them"),
        }
        assert!(a.iter().all(|w| w.slot < WORKLOAD.keys));
        kinds[kind as usize] += 1;
    }
    // Every kind occurs, in roughly the documented shares (45/20/35).
    assert!(kinds.iter().all(|&k| k > 300), "{kinds:?}");
    // Another thread or seed gives other ops.
    let other: Vec<_> = (0..50)
        .map(|i| {
            WORKLOAD.op(4, i, &mut a);
            a.clone()
        })
        .collect();
    let mine: Vec<_> = (0..50)
        .map(|i| {
            WORKLOAD.op(3, i, &mut a);
            a.clone()
        })
        .collect();
    assert_ne!(other, mine);
}

#[test]
fn keys_and_values_round_trip() {
    let mut scratch = Scratch::default();
    for slot in [0, 1, 12, 39] {
        let key = WORKLOAD.key(7, slot);
        assert_eq!(WORKLOAD.parse_key(&key), Some((7, slot)));
        let mut value = Vec::new();
        WORKLOAD.write_value(7, 1234, 3, slot, &mut value);
        let id = WORKLOAD.decode_value(&value).unwrap();
        assert_eq!((id.thread, id.op, id.pos, id.slot), (7, 1234, 3, slot));
    }
    assert_eq!(
        WORKLOAD.parse_key(b"0007/000040"),
        None,
        "slot out of range"
    );
    assert_eq!(WORKLOAD.parse_key(b"0007/000001"), None, "filler missing");
    assert_eq!(WORKLOAD.parse_key(b"x007/000000"), None);
    // A value names its write; regenerating it must give the same bytes.
    let mut writes = Vec::new();
    let (index, pos, slot) = (0..)
        .find_map(|i| {
            WORKLOAD.op(1, i, &mut writes);
            writes
                .iter()
                .position(|w| w.put)
                .map(|p| (i, p as u8, writes[p].slot))
        })
        .unwrap();
    let mut value = Vec::new();
    WORKLOAD.write_value(1, index, pos, slot, &mut value);
    let id = WORKLOAD.decode_value(&value).unwrap();
    assert!(WORKLOAD.is_written(id, &value, &mut scratch));
    let mut flipped = value.clone();
    let last = flipped.len() - 5;
    flipped[last] ^= 1;
    assert!(
        WORKLOAD.decode_value(&flipped).is_err(),
        "checksum catches a flip"
    );
    // A well-formed value naming a write of another slot is not written.
    let wrong = super::workload::ValueId {
        slot: (slot + 1) % WORKLOAD.keys,
        ..id
    };
    let mut forged = Vec::new();
    WORKLOAD.write_value(1, index, pos, wrong.slot, &mut forged);
    assert_eq!(WORKLOAD.decode_value(&forged).unwrap(), wrong);
    assert!(!WORKLOAD.is_written(wrong, &forged, &mut scratch));
}

proptest! {
    #[test]
    fn decoders_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        let _ = WORKLOAD.decode_value(&bytes);
        let _ = WORKLOAD.parse_key(&bytes);
        let _ = parse_journal(bytes.as_slice());
    }

    #[test]
    fn journal_survives_any_torn_tail(cut in 0usize..400, garbage in proptest::collection::vec(any::<u8>(), 0..40)) {
        let text = journal_text(&[(0, 5, 2), (1, 9, 0), (0, 6, 2), (2, 1, 1)]);
        let cut = cut.min(text.len());
        let mut torn = text[..cut].to_vec();
        torn.extend(garbage.iter().filter(|&&b| b != b'\n'));
        // Whatever is left of a torn journal either parses to a prefix of its lines or fails
        // because the header itself is torn.
        match parse_journal(torn.as_slice()) {
            Ok(contents) => {
                prop_assert_eq!(contents.workload, WORKLOAD);
                for (thread, p) in contents.threads {
                    prop_assert!(thread <= 2 && p.acked <= 9);
                }
            }
            Err(e) => prop_assert!(e.is_corruption()),
        }
    }
}

fn journal_text(lines: &[(u32, u64, u64)]) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j");
    let journal = Journal::create(&path, WORKLOAD, BTreeMap::new()).unwrap();
    for &(thread, acked, synced) in lines {
        journal
            .record(thread, Progress { acked, synced }, synced == acked)
            .unwrap();
    }
    std::fs::read(&path).unwrap()
}

#[test]
fn the_journal_lives_beside_the_database() {
    for (db, journal) in [
        ("/data/db", "/data/db.stress-journal"),
        ("/data/db/", "/data/db.stress-journal"),
        ("db", "db.stress-journal"),
    ] {
        assert_eq!(journal_path(Path::new(db)), PathBuf::from(journal));
    }
    let dir = tempfile::tempdir().unwrap();
    let inside = dir.path().join("db").join("..");
    std::fs::create_dir(dir.path().join("db")).unwrap();
    let expected = {
        let real = std::fs::canonicalize(dir.path()).unwrap();
        let mut name = real.file_name().unwrap().to_owned();
        name.push(".stress-journal");
        real.parent().unwrap().join(name)
    };
    assert_eq!(journal_path(&inside), expected);
}

#[test]
fn journal_keeps_each_threads_last_line_and_ignores_a_torn_tail() {
    let text = journal_text(&[(0, 5, 2), (1, 9, 0), (0, 6, 2)]);
    let contents = parse_journal(text.as_slice()).unwrap();
    assert_eq!(contents.workload, WORKLOAD);
    assert_eq!(contents.torn_bytes, 0);
    assert_eq!(
        contents.threads,
        BTreeMap::from([
            (
                0,
                Progress {
                    acked: 6,
                    synced: 2
                }
            ),
            (
                1,
                Progress {
                    acked: 9,
                    synced: 0
                }
            )
        ])
    );
    // Cut the last line short: it is ignored and thread 0 falls back to its previous line.
    let torn = &text[..text.len() - 3];
    let contents = parse_journal(torn).unwrap();
    assert_eq!(
        contents.threads[&0],
        Progress {
            acked: 5,
            synced: 2
        }
    );
    assert!(contents.torn_bytes > 0);
    // A complete last line with a bad checksum is a torn tail too.
    let mut flipped = text.clone();
    let at = flipped.len() - 20;
    flipped[at] ^= 0x01;
    assert_eq!(
        parse_journal(flipped.as_slice()).unwrap().threads[&0].acked,
        5
    );
    // Damage followed by intact lines is corruption of the journal, named with its offset.
    let mut middle = text.clone();
    let second_line = middle.iter().position(|&b| b == b'\n').unwrap() + 3;
    middle[second_line] ^= 0x01;
    let err = parse_journal(middle.as_slice()).unwrap_err();
    let details = err.corruption_details().unwrap();
    assert_eq!(details.offset, Some(second_line as u64 - 2));
    assert!(details.reason.contains("later lines are intact"), "{err}");
    // An empty journal has no header.
    assert!(parse_journal(&b""[..]).unwrap_err().is_corruption());
}

#[test]
fn journal_rotation_keeps_the_latest_progress() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j");
    let journal = Journal::create(&path, WORKLOAD, BTreeMap::new())
        .unwrap()
        .rotating_at(300);
    for acked in 1..=100 {
        for thread in 0..3 {
            let progress = Progress {
                acked: acked + thread as u64,
                synced: acked / 2,
            };
            journal.record(thread, progress, false).unwrap();
        }
    }
    let size = std::fs::metadata(&path).unwrap().len();
    assert!(size < 400, "rotated to a short file, not {size} bytes");
    let contents = read_journal(&path).unwrap().unwrap();
    for thread in 0..3 {
        assert_eq!(
            contents.threads[&thread],
            Progress {
                acked: 100 + thread as u64,
                synced: 50
            }
        );
    }
}

#[test]
fn range_deletes_delete_exactly_their_slots() {
    for keys in [WORKLOAD.keys, MAX_KEYS] {
        let workload = Workload {
            range_deletes: true,
            keys,
            ..WORKLOAD
        };
        let mut writes = Vec::new();
        let mut ranges = 0;
        for index in 0..3000 {
            if workload.op(2, index, &mut writes) != OpKind::DeleteRange {
                continue;
            }
            ranges += 1;
            assert!((1..=MAX_BATCH).contains(&writes.len()), "{writes:?}");
            assert!(writes.iter().all(|w| !w.put && w.slot < keys));
            assert!(writes.windows(2).all(|w| w[1].slot == w[0].slot + 1));
        }
        // About a quarter of the 20% of single deletes.
        assert!((75..=225).contains(&ranges), "{ranges} range deletes");
        // The keys of [first, last] and nothing else, at the end of the slots too.
        for (first, last) in [(0, 3), (5, 5), (keys - 3, keys - 1)] {
            let start = workload.key(2, first);
            let mut end = Vec::new();
            workload.write_range_end(2, last, &mut end);
            for thread in 1..=3 {
                for slot in (0..6).chain(keys - 6..keys) {
                    let key = workload.key(thread, slot);
                    let inside = key >= start && key < end;
                    assert_eq!(
                        inside,
                        thread == 2 && (first..=last).contains(&slot),
                        "thread {thread} slot {slot} in [{first}, {last}] of {keys} slots"
                    );
                }
            }
        }
    }
}

#[test]
fn a_run_with_range_deletes_verifies_and_needs_the_option() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let with_range_deletes = |o: StressOptions| StressOptions {
        db_options: strata::Options {
            range_deletes: true,
            ..o.db_options
        },
        ..o
    };
    let session = StressSession::open(&path, &with_range_deletes(options(3, 400, 7))).unwrap();
    let summary = session.run().unwrap();
    assert!(summary.violations.is_empty(), "{:?}", summary.violations);
    for model in [CrashModel::ProcessCrash, CrashModel::PowerLoss] {
        let options = with_range_deletes(StressOptions {
            model,
            ..StressOptions::default()
        });
        let report = verify_stress_db(&path, &options).unwrap();
        assert!(report.is_ok(), "{report}");
    }
    let journal = std::fs::read_to_string(journal_path(&path)).unwrap();
    assert!(journal.lines().next().unwrap().contains(" range-deletes"));
    let err = verify_stress_db(&path, &StressOptions::default()).unwrap_err();
    assert!(err.to_string().contains("range_deletes"), "{err}");
}

#[test]
fn a_run_with_value_separation_verifies_with_its_values_in_value_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let separating = |o: StressOptions| StressOptions {
        // Most values are 0-2 KiB: those of 500 bytes or more go to value files.
        value_size: Some(2000),
        db_options: strata::Options {
            value_separation: Some(strata::ValueSeparation::new(500)),
            ..o.db_options
        },
        ..o
    };
    let session = StressSession::open(&path, &separating(options(3, 400, 7))).unwrap();
    let summary = session.run().unwrap();
    assert!(summary.violations.is_empty(), "{:?}", summary.violations);
    // The journal records the option: a session or a verify without it, or with another
    // size, is refused naming it.
    let journal = std::fs::read_to_string(journal_path(&path)).unwrap();
    assert!(
        journal
            .lines()
            .next()
            .unwrap()
            .contains(" value-separation=500 "),
        "{journal}"
    );
    for other in [None, Some(strata::ValueSeparation::new(800))] {
        let mut asked = verify_options(CrashModel::ProcessCrash);
        asked.db_options.value_separation = other;
        let err = verify_stress_db(&path, &asked).unwrap_err();
        assert!(
            err.to_string().contains("ValueSeparation::new(500)"),
            "{err}"
        );
        let err = StressSession::open(&path, &asked).map(|_| ()).unwrap_err();
        assert!(
            err.to_string().contains("ValueSeparation::new(500)"),
            "{err}"
        );
    }
    for model in [CrashModel::ProcessCrash, CrashModel::PowerLoss] {
        let report = verify_stress_db(&path, &separating(verify_options(model))).unwrap();
        assert!(report.is_ok(), "{report}");
    }
    let check = strata::tools::check_db(&path, &strata::Options::default()).unwrap();
    assert!(check.is_ok(), "{check}");
    assert!(check.value_files > 0 && check.value_pointers > 0, "{check}");

    // Without its value files the database cannot be what the journal says.
    for entry in std::fs::read_dir(&path).unwrap() {
        let entry = entry.unwrap().path();
        if entry.extension().is_some_and(|e| e == "vlog") {
            std::fs::remove_file(entry).unwrap();
        }
    }
    let err =
        verify_stress_db(&path, &separating(verify_options(CrashModel::ProcessCrash))).unwrap_err();
    assert!(
        err.is_corruption() && err.to_string().contains(".vlog"),
        "{err}"
    );
}

#[test]
fn a_clean_run_verifies_and_a_restart_resumes_each_thread() {
    let dir = tempfile::tempdir().unwrap();
    let path = stressed(dir.path(), 3, 200, 7);
    let report = verify(&path, CrashModel::ProcessCrash);
    assert!(report.is_ok(), "{report}");
    assert_eq!(report.acknowledged(), 600);
    assert_eq!(report.synced(), 3 * (200 / 7 * 7));
    for t in &report.threads {
        assert_eq!(t.visible, Some(200), "{report}");
    }
    assert!(report.keys > 0);
    // A restart with one thread more: the old ones continue, the new one starts at 0.
    let session = StressSession::open(&path, &options(4, 50, 7)).unwrap();
    assert!(session.report().is_ok(), "{}", session.report());
    let summary = session.run().unwrap();
    assert_eq!(summary.ops, 200);
    let progress = journal_threads(&path);
    let acked: Vec<u64> = progress.values().map(|p| p.acked).collect();
    assert_eq!(acked, [250, 250, 250, 50]);
    let report = verify(&path, CrashModel::PowerLoss);
    assert!(report.is_ok(), "{report}");
    assert_eq!(report.visible(), 800);
}

#[test]
fn the_op_in_flight_may_be_visible_but_not_the_one_after() {
    let dir = tempfile::tempdir().unwrap();
    let path = stressed(dir.path(), 2, 100, 0);
    let mut scratch = Scratch::default();
    // Thread 1's next op reached the database but the journal never heard of it.
    let db = open_db(&path);
    db.write(&op_batch(&WORKLOAD, 1, 100, &mut scratch))
        .unwrap();
    drop(db);
    let report = verify(&path, CrashModel::ProcessCrash);
    assert!(report.is_ok(), "{report}");
    assert_eq!(report.threads[1].visible, Some(101));
    // A restart counts it and continues after it.
    let session = StressSession::open(&path, &options(2, 10, 0)).unwrap();
    session.run().unwrap();
    assert_eq!(journal_threads(&path)[&1].acked, 111);
    assert!(verify(&path, CrashModel::ProcessCrash).is_ok());
    // Two ops past the journal cannot be: the second was never issued. Find an op pair whose
    // second puts a key nothing later in the pair overwrites.
    let acked = 111;
    let db = open_db(&path);
    db.write(&op_batch(&WORKLOAD, 1, acked, &mut scratch))
        .unwrap();
    let mut writes = Vec::new();
    let mut index = acked + 1;
    loop {
        WORKLOAD.op(1, index, &mut writes);
        db.write(&op_batch(&WORKLOAD, 1, index, &mut scratch))
            .unwrap();
        let survives = |(i, w): (usize, &SlotWrite)| {
            w.put && !writes[i + 1..].iter().any(|x| x.slot == w.slot)
        };
        if writes.iter().enumerate().any(survives) {
            break;
        }
        index += 1;
    }
    drop(db);
    let report = verify(&path, CrashModel::ProcessCrash);
    assert!(!report.is_ok());
    let v = &report.violations[0];
    assert_eq!(v.kind, ViolationKind::NotIssued, "{report}");
    assert_eq!(v.thread, Some(1));
    assert!(v.op.unwrap() > acked, "{v}");
    assert!(StressSession::open(&path, &options(2, 10, 0))
        .unwrap()
        .run()
        .is_err());
}

#[test]
fn a_deleted_acknowledged_key_is_a_lost_write() {
    let dir = tempfile::tempdir().unwrap();
    let path = stressed(dir.path(), 2, 150, 1);
    let state = replay(0, 150);
    let (slot, touch) = state
        .iter()
        .enumerate()
        .find_map(|(s, t)| t.filter(|t| t.put).map(|t| (s as u32, t)))
        .unwrap();
    let key = WORKLOAD.key(0, slot);
    let db = open_db(&path);
    db.delete(&key).unwrap();
    drop(db);
    let report = verify(&path, CrashModel::PowerLoss);
    let v = only_violation(&report);
    assert_eq!(v.kind, ViolationKind::LostWrite);
    assert_eq!((v.thread, v.op), (Some(0), Some(touch.op)));
    assert_eq!(v.key, key);
    assert_eq!(
        v.expected,
        Some(KeyState::Written {
            op: touch.op,
            pos: touch.pos
        })
    );
    assert_eq!(v.found, KeyState::Absent { deleted_by: None });
    let text = report.to_string();
    assert!(
        text.contains(&format!("key {}", key.escape_ascii())),
        "{text}"
    );
    assert!(text.contains("sync-acknowledged"), "{text}");
    assert_eq!(report.threads[0].visible, None);
    assert_eq!(report.threads[1].visible, Some(150));
}

#[test]
fn a_key_brought_back_after_its_deletion_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    let path = stressed(dir.path(), 1, 300, 10);
    let state = replay(0, 300);
    // A slot whose last op deleted it, and the put before that deletion.
    let mut scratch = Scratch::default();
    let (slot, deleted_by) = state
        .iter()
        .enumerate()
        .find_map(|(s, t)| t.filter(|t| !t.put).map(|t| (s as u32, t.op)))
        .unwrap();
    let mut earlier = vec![None; WORKLOAD.keys as usize];
    let mut put = None;
    for index in 0..deleted_by {
        apply(&WORKLOAD, 0, index, &mut earlier, &mut scratch);
        if let Some(t) = earlier[slot as usize].filter(|t| t.put) {
            put = Some(t);
        }
    }
    let put = put.expect("some op put the slot before deleting it");
    let db = open_db(&path);
    set_slot(&db, 0, slot, Some(put));
    drop(db);
    let v = verify(&path, CrashModel::ProcessCrash).violations[0].clone();
    assert_eq!(v.kind, ViolationKind::ResurrectedDeletion, "{v}");
    assert_eq!(v.op, Some(deleted_by));
    assert_eq!(
        v.expected,
        Some(KeyState::Absent {
            deleted_by: Some(deleted_by)
        })
    );
}

#[test]
fn a_later_op_visible_without_an_earlier_one_is_a_hole() {
    let dir = tempfile::tempdir().unwrap();
    // Nothing synced: after a power loss any prefix would do, but not a hole.
    let path = stressed(dir.path(), 1, 300, 0);
    let last = replay(0, 300);
    let mut scratch = Scratch::default();
    // A slot last written by a put at op `a`, whose earlier state differs, with some later op
    // visible on another slot.
    let (slot, before) = (100..290u64)
        .rev()
        .find_map(|a| {
            let mut state = replay(0, a);
            let pre = state.clone();
            apply(&WORKLOAD, 0, a, &mut state, &mut scratch);
            let after_a = state.clone();
            last.iter().enumerate().find_map(|(s, t)| {
                let t = (*t)?;
                let later_visible = last
                    .iter()
                    .zip(&after_a)
                    .enumerate()
                    .any(|(k, (&x, &y))| k != s && visible(x) != visible(y));
                (t.op == a && t.put && visible(pre[s]) != visible(last[s]) && later_visible)
                    .then_some((s as u32, pre[s]))
            })
        })
        .unwrap();
    let db = open_db(&path);
    set_slot(&db, 0, slot, before);
    drop(db);
    let report = verify(&path, CrashModel::PowerLoss);
    let v = only_violation(&report);
    assert_eq!(v.kind, ViolationKind::Hole, "{report}");
    assert_eq!(v.key, WORKLOAD.key(0, slot), "{report}");
    assert!(v.note.contains("must all be visible"), "{v}");
    // Under the process-crash model the same damage is a lost acknowledged write.
    let report = verify(&path, CrashModel::ProcessCrash);
    assert_eq!(only_violation(&report).kind, ViolationKind::LostWrite);
}

#[test]
fn values_never_written_and_stray_keys_are_caught() {
    let dir = tempfile::tempdir().unwrap();
    let path = stressed(dir.path(), 2, 100, 4);
    let db = open_db(&path);
    let key = WORKLOAD.key(1, 3);
    db.put(&key, b"not a value anyone wrote").unwrap();
    // A value valid in every byte, stored under another slot's key.
    let mut moved = Vec::new();
    WORKLOAD.write_value(0, 5, 0, 7, &mut moved);
    db.put(&WORKLOAD.key(0, 8), &moved).unwrap();
    db.put(b"zzz", b"1").unwrap();
    drop(db);
    let report = verify(&path, CrashModel::ProcessCrash);
    let kinds: Vec<_> = report
        .violations
        .iter()
        .map(|v| (v.kind, v.key.clone()))
        .collect();
    assert_eq!(
        kinds,
        [
            (ViolationKind::NeverWritten, WORKLOAD.key(0, 8)),
            (ViolationKind::NeverWritten, key),
            (ViolationKind::StrayKey, b"zzz".to_vec()),
        ],
        "{report}"
    );
    assert!(matches!(
        report.violations[1].found,
        KeyState::Unreadable { len: 24, .. }
    ));
}

#[test]
fn refuses_databases_it_did_not_create_and_other_workloads() {
    let dir = tempfile::tempdir().unwrap();
    let foreign = dir.path().join("foreign");
    let db = DB::open(
        &foreign,
        Options {
            create_if_missing: true,
            ..Options::default()
        },
    )
    .unwrap();
    db.put_opt(&WriteOptions { sync: true }, b"k", b"v")
        .unwrap();
    drop(db);
    let err = StressSession::open(&foreign, &options(1, 1, 1)).unwrap_err();
    assert!(err.to_string().contains("no stress journal"), "{err}");
    assert!(verify_stress_db(&foreign, &StressOptions::default()).is_err());

    let path = stressed(dir.path(), 1, 10, 1);
    let other_seed = StressOptions {
        seed: Some(WORKLOAD.seed + 1),
        ..options(1, 1, 1)
    };
    let err = StressSession::open(&path, &other_seed).unwrap_err();
    assert!(err.to_string().contains("fixes seed = 42"), "{err}");
}

#[test]
fn a_torn_journal_tail_is_reported_and_verification_still_holds() {
    let dir = tempfile::tempdir().unwrap();
    let path = stressed(dir.path(), 1, 50, 0);
    let mut journal = std::fs::OpenOptions::new()
        .append(true)
        .open(journal_path(&path))
        .unwrap();
    journal.write_all(b"T 0 acked=9999 syn").unwrap();
    drop(journal);
    let report = verify(&path, CrashModel::ProcessCrash);
    assert!(report.is_ok(), "{report}");
    assert_eq!(report.torn_journal_bytes, 18);
    assert!(report.to_string().contains("torn tail of 18 bytes"));
}

#[test]
fn a_batch_applied_in_part_is_caught() {
    // The first op of thread 0 from 50 on that is a batch putting two different slots, each
    // as that slot's last write in the batch.
    let mut writes = Vec::new();
    let (index, first, _second) = (50..)
        .find_map(|i| {
            if WORKLOAD.op(0, i, &mut writes) != OpKind::Batch {
                return None;
            }
            let last_puts: Vec<(usize, u32)> = writes
                .iter()
                .enumerate()
                .filter(|&(p, w)| w.put && !writes[p + 1..].iter().any(|x| x.slot == w.slot))
                .map(|(p, w)| (p, w.slot))
                .collect();
            match last_puts.as_slice() {
                [a, b, ..] if a.1 != b.1 => Some((i, *a, *b)),
                _ => None,
            }
        })
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = stressed(dir.path(), 1, index, 0);
    // The op in flight at the crash reached the database by half.
    let (pos, slot) = first;
    let touch = Touch {
        op: index,
        pos: pos as u8,
        put: true,
    };
    let db = open_db(&path);
    set_slot(&db, 0, slot, Some(touch));
    drop(db);
    for model in [CrashModel::ProcessCrash, CrashModel::PowerLoss] {
        let report = verify(&path, model);
        let v = only_violation(&report);
        assert_eq!(v.kind, ViolationKind::Hole, "{report}");
        // The missing part: another slot the op changed (the second put, or a delete).
        let missing: Vec<Vec<u8>> = writes
            .iter()
            .filter(|w| w.slot != slot)
            .map(|w| WORKLOAD.key(0, w.slot))
            .collect();
        assert!(missing.contains(&v.key), "{report}");
        assert_eq!(v.op, Some(index), "{report}");
        assert!(
            v.note.contains(&format!("ops 0..{}", index + 1)),
            "{report}"
        );
    }
}
