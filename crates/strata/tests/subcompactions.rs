//! Subcompactions: a compaction cut into key ranges merged in parallel (`max_subcompactions`)
//! must write exactly the entries one merge would, at the range boundaries too (many versions
//! of one user key, deletions, entries a snapshot still needs, unparseable keys); it installs
//! every range's tables or none, and leaves no output file behind when a range fails, panics or
//! the database closes under it; and writers waiting for a memtable flush do not wait for the
//! slowest range.
//!
//! Two kinds of databases:
//! - one written through the API (overwrites, deletions, a held snapshot, `compact_range`),
//!   run with one thread and with four: the contents must be the same, and the model's;
//! - one built by hand (tables and manifest written directly) so that exactly one compaction
//!   runs at open, level 0 into level 1, over entries chosen to sit at the cut points: its
//!   output must be the very same entry list with one thread and with several. A wrapping
//!   `Env` aims faults, panics and slowness at the subcompaction threads alone (by thread name).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::cmp::Ordering as CmpOrdering;
use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use strata::testing::{
    build_table, EditFields, EditNewFile, EnvCall, EnvOp, FaultEnv, HookEnv, OpKind, PowerLossMode,
    TableFile,
};
use strata::{CompressionType, Env, Error, MemEnv, Options, ReadOptions, Result, Snapshot, DB};
use support::files::{log_tail, numbered_files, read_file, write_file, write_manifest};
use support::state::{tables_by_level as live_tables, Model};
use support::TestEnv;

const DIR: &str = "/db";
const MIB: usize = 1 << 20;
/// The name the engine gives the threads that merge the ranges after the first.
const SUB_THREAD: &str = "strata-bg-sub";

fn options(env: &impl TestEnv, max_subcompactions: usize) -> Options {
    Options {
        write_buffer_size: MIB,
        // The smallest allowed: a range needs 2 x this much input, so 4 MiB compactions split.
        max_file_size: MIB,
        compression: CompressionType::None,
        max_subcompactions,
        ..support::options(env)
    }
}

/// A table entry: internal key, value.
type Entry = (Vec<u8>, Vec<u8>);

fn info_log(env: &dyn Env) -> String {
    support::files::info_log(env, Path::new(DIR))
}

/// The `N`s of the log's "merging N key ranges in parallel" lines.
fn split_counts(log: &str) -> Vec<usize> {
    log.lines()
        .filter_map(|line| {
            let rest = &line[line.find("merging ")? + "merging ".len()..];
            let (n, tail) = rest.split_once(' ')?;
            tail.starts_with("key ranges in parallel")
                .then(|| n.parse().ok())
                .flatten()
        })
        .collect()
}

fn table_path(number: u64) -> PathBuf {
    Path::new(DIR).join(format!("{number:06}.ldb"))
}

/// Every entry of table `number`, checksums verified, forward and backward.
fn table_entries(env: &dyn Env, number: u64) -> Vec<Entry> {
    let bytes = read_file(env, &table_path(number)).unwrap();
    TableFile::open(bytes, None).unwrap().entries().unwrap()
}

/// Numbers of the table files in the directory.
fn tables_on_disk(env: &dyn Env) -> BTreeSet<u64> {
    numbered_files(env, Path::new(DIR), ".ldb")
}

/// Polls `done` until it holds, failing the test after a minute.
#[track_caller]
fn wait_until(what: &str, done: impl FnMut() -> bool) {
    support::trials::wait_until(what, Duration::from_secs(60), done);
}

// ---------------------------------------------------------------------------------------------
// A database written through the API.

const KEYS: usize = 20_000;

fn key(i: usize) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

/// A value naming the write that made it, 100 to 300 bytes long.
fn value(rng: &mut StdRng, op: usize) -> Vec<u8> {
    let mut v = format!("op{op:07}-").into_bytes();
    let len = rng.gen_range(100..300);
    while v.len() < len {
        v.push(rng.gen_range(b'a'..=b'z'));
    }
    v
}

/// Checks the database (at `snapshot`, if given) holds exactly `expected`: a forward scan, a
/// backward scan and point lookups.
fn assert_contents(db: &DB, expected: &Model, snapshot: Option<&Snapshot>, what: &str) {
    let read = ReadOptions {
        snapshot: snapshot.cloned(),
        ..ReadOptions::default()
    };
    let mut it = db.iter_opt(&read);
    let mut forward = Vec::new();
    it.seek_to_first();
    while it.valid() {
        forward.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    it.status().unwrap();
    let mut backward = Vec::new();
    it.seek_to_last();
    while it.valid() {
        backward.push((it.key().to_vec(), it.value().to_vec()));
        it.prev();
    }
    it.status().unwrap();
    backward.reverse();
    assert!(forward == backward, "{what}: backward scan differs");
    let want: Vec<Entry> = expected
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if forward != want {
        let first = forward
            .iter()
            .zip(&want)
            .position(|(a, b)| a != b)
            .unwrap_or(forward.len().min(want.len()));
        panic!(
            "{what}: scan has {} entries, model {}; first difference at #{first}: {:?} vs {:?}",
            forward.len(),
            want.len(),
            forward.get(first).map(|(k, _)| String::from_utf8_lossy(k)),
            want.get(first).map(|(k, _)| String::from_utf8_lossy(k)),
        );
    }
    for i in (0..KEYS).step_by(37) {
        assert_eq!(
            db.get_opt(&read, &key(i)).unwrap().as_ref(),
            expected.get(&key(i)),
            "{what}: get of key {i}"
        );
    }
}

/// Every table the version lists reads back with verified checksums, and no internal key is in
/// two tables (a range boundary merged twice would put it in two outputs).
fn assert_tables_sound(env: &dyn Env, db: &DB) {
    let mut seen = HashSet::new();
    for (level, tables) in live_tables(db).iter().enumerate() {
        for &number in tables {
            for (k, _) in table_entries(env, number) {
                assert!(
                    seen.insert(k.clone()),
                    "entry {:?} is in two tables (second: #{number} at level {level})",
                    String::from_utf8_lossy(&k)
                );
            }
        }
    }
}

struct ApiRun {
    env: Arc<MemEnv>,
    latest: Model,
    at_snapshot: Model,
    log: String,
}

/// Writes, overwrites and deletes with a snapshot held, then compacts everything; checks the
/// contents against the model before returning.
fn api_workload(max_subcompactions: usize) -> ApiRun {
    let env = Arc::new(MemEnv::new());
    let db = DB::open(DIR, options(&env, max_subcompactions)).unwrap();
    let mut rng = StdRng::seed_from_u64(0x005e_ed5b);
    let mut model = Model::new();
    let mut op = 0;
    let mut put = |db: &DB, model: &mut Model, rng: &mut StdRng, i: usize| {
        op += 1;
        let v = value(rng, op);
        db.put(&key(i), &v).unwrap();
        model.insert(key(i), v);
    };
    let mut order: Vec<usize> = (0..KEYS).collect();
    order.shuffle(&mut rng);
    for &i in &order {
        put(&db, &mut model, &mut rng, i);
    }
    for _ in 0..KEYS {
        let i = rng.gen_range(0..KEYS);
        put(&db, &mut model, &mut rng, i);
    }
    let snapshot = db.snapshot();
    let at_snapshot = model.clone();
    for _ in 0..KEYS {
        let i = rng.gen_range(0..KEYS);
        if rng.gen_bool(0.3) {
            db.delete(&key(i)).unwrap();
            model.remove(&key(i));
        } else {
            put(&db, &mut model, &mut rng, i);
        }
    }
    // Many versions of a few keys, some ending deleted: their entries span tables.
    for round in 0..150 {
        for i in (0..KEYS).step_by(997) {
            if round % 7 == 3 {
                db.delete(&key(i)).unwrap();
                model.remove(&key(i));
            } else {
                put(&db, &mut model, &mut rng, i);
            }
        }
    }
    db.compact_range(None, None).unwrap();
    assert_contents(&db, &model, None, "latest");
    assert_contents(&db, &at_snapshot, Some(&snapshot), "at the snapshot");
    assert_tables_sound(&*env, &db);
    // Compact again with the snapshot gone: what it protected can go now.
    drop(snapshot);
    db.compact_range(None, None).unwrap();
    assert_contents(&db, &model, None, "latest, snapshot released");
    assert_tables_sound(&*env, &db);
    drop(db);
    let log = info_log(&*env);
    ApiRun {
        env,
        latest: model,
        at_snapshot,
        log,
    }
}

#[test]
fn split_compactions_keep_what_one_thread_keeps() {
    let single = api_workload(1);
    let split = api_workload(4);
    assert!(
        split_counts(&single.log).is_empty(),
        "max_subcompactions = 1 split a compaction"
    );
    let counts = split_counts(&split.log);
    assert!(
        counts.iter().any(|&n| n >= 2),
        "no compaction was split (log says {counts:?})"
    );
    assert!(counts.iter().all(|&n| (2..=4).contains(&n)), "{counts:?}");
    assert!(single.latest == split.latest, "latest contents differ");
    assert!(
        single.at_snapshot == split.at_snapshot,
        "contents at the snapshot differ"
    );
}

#[test]
fn a_database_reopened_after_split_compactions_reads_everything() {
    let run = api_workload(4);
    assert!(!split_counts(&run.log).is_empty(), "nothing was split");
    for max_subcompactions in [1, 4] {
        let db = DB::open(DIR, options(&run.env, max_subcompactions)).unwrap();
        assert_contents(&db, &run.latest, None, "after reopen");
        assert_tables_sound(&*run.env, &db);
    }
}

// ---------------------------------------------------------------------------------------------
// A database built by hand, where one level-0 compaction runs at open.

const HAND_KEYS: usize = 20_000;
/// Level-1 tables hold `HAND_KEYS / L1_TABLES` keys each.
const L1_TABLES: usize = 5;
/// The manifest's last sequence: entries above it are newer than the oldest reader (as if a
/// snapshot at 350 were held), so the entries they shadow must stay.
const LAST_SEQUENCE: u64 = 350;

fn hkey(i: usize) -> Vec<u8> {
    format!("u{i:05}").into_bytes()
}

/// An internal key with a raw type byte (1 value, 0 deletion, anything else unparseable).
fn ikey(user: &[u8], seq: u64, type_byte: u8) -> Vec<u8> {
    let mut k = user.to_vec();
    k.extend_from_slice(&((seq << 8) | u64::from(type_byte)).to_le_bytes());
    k
}

/// The engine's internal-key order over the bytewise comparator: user key ascending, then the
/// trailer descending; a key shorter than a trailer is an empty user key with trailer 0.
fn internal_order(a: &[u8], b: &[u8]) -> CmpOrdering {
    let split = |k: &[u8]| -> (Vec<u8>, u64) {
        match k.len().checked_sub(8) {
            Some(n) => (
                k[..n].to_vec(),
                u64::from_le_bytes(k[n..].try_into().unwrap()),
            ),
            None => (Vec::new(), 0),
        }
    };
    let (ua, ta) = split(a);
    let (ub, tb) = split(b);
    ua.cmp(&ub).then(tb.cmp(&ta))
}

fn padded(label: String, len: usize) -> Vec<u8> {
    let mut v = label.into_bytes();
    let mut x = v.len();
    while v.len() < len {
        v.push(b'a' + (x % 26) as u8);
        x = x.wrapping_mul(31).wrapping_add(7);
    }
    v
}

/// The last key of level-1 table `j` (for `j` below the last): its versions continue in table
/// `j + 1`, and a cut at it must keep all of them in one range.
fn l1_boundary(j: usize) -> usize {
    (j + 1) * (HAND_KEYS / L1_TABLES) - 1
}

/// Writes the tables and a manifest:
/// - level 1: `L1_TABLES` tables (numbers 10..) of consecutive keys at sequence 100; each
///   boundary key has ten versions (values and deletions, sequences 100 down to 55), split
///   between the two tables;
/// - level 2: table 30, every third key of `u08000..u09000` at sequence 5 (deletions of those
///   keys are not at their base level);
/// - level 0: four tables (numbers 20..23, sequences 200, 300, 400, 500), each a fifth of the
///   keys spread over the whole range, some deletions; each ends with a key holding two
///   versions; table 20 also holds unparseable entries (type byte 7) at every thousandth key and
///   at every level-1 boundary key, table 21 a key too short to hold a trailer (after an entry
///   of the empty user key).
///
/// Returns the table numbers written.
fn build_hand_database(env: &MemEnv) -> BTreeSet<u64> {
    let dir = Path::new(DIR);
    env.create_dir(dir).unwrap();
    let mut tables: Vec<(usize, u64, Vec<Entry>)> = Vec::new();

    let per_table = HAND_KEYS / L1_TABLES;
    for j in 0..L1_TABLES {
        let mut entries = Vec::new();
        for i in j * per_table..(j + 1) * per_table {
            entries.push((ikey(&hkey(i), 100, 1), padded(format!("base-{i}-"), 200)));
        }
        // Versions of the boundary keys: the newer half here, the older half in the next table.
        let mut versions = |i: usize, seqs: std::ops::Range<u64>| {
            for step in seqs {
                let seq = 100 - 5 * step;
                let type_byte = u8::from(step % 3 != 1);
                entries.push((
                    ikey(&hkey(i), seq, type_byte),
                    format!("v{seq}").into_bytes(),
                ));
            }
        };
        if j + 1 < L1_TABLES {
            versions(l1_boundary(j), 1..5);
        }
        if j > 0 {
            versions(l1_boundary(j - 1), 5..10);
        }
        tables.push((1, 10 + j as u64, entries));
    }

    let level2 = (8000..9000)
        .step_by(3)
        .map(|i| (ikey(&hkey(i), 5, 1), b"deep".to_vec()))
        .collect();
    tables.push((2, 30, level2));

    let boundaries: Vec<usize> = (0..L1_TABLES - 1).map(l1_boundary).collect();
    for f in 0..4usize {
        let seq = 200 + 100 * f as u64;
        let mut entries = Vec::new();
        for i in 0..HAND_KEYS - 10 {
            let chosen =
                (i * 31 + f * 7) % 5 == 0 || boundaries.contains(&i) || (8000..8030).contains(&i);
            if !chosen {
                continue;
            }
            if (i / 3 + f) % 4 == 0 {
                entries.push((ikey(&hkey(i), seq, 0), Vec::new()));
            } else {
                entries.push((ikey(&hkey(i), seq, 1), padded(format!("l0-{f}-{i}-"), 150)));
            }
        }
        // The table's largest key (a possible cut) has two versions.
        let last = HAND_KEYS - 10 + f;
        entries.push((ikey(&hkey(last), seq, 1), b"newest".to_vec()));
        entries.push((ikey(&hkey(last), seq - 50, 0), Vec::new()));
        if f == 0 {
            for i in (0..HAND_KEYS)
                .step_by(1000)
                .chain(boundaries.iter().copied())
            {
                entries.push((ikey(&hkey(i), 150, 7), b"unparseable".to_vec()));
            }
        }
        if f == 1 {
            // Sorts as an empty user key with trailer 0: after the empty key's real entries,
            // one of which starts the table (a table's bounds must parse).
            entries.push((b"tiny".to_vec(), b"too short for a trailer".to_vec()));
            entries.push((ikey(b"", seq, 1), b"empty key".to_vec()));
        }
        tables.push((0, 20 + f as u64, entries));
    }

    let mut new_files = Vec::new();
    let mut numbers = BTreeSet::new();
    for (level, number, mut entries) in tables {
        entries.sort_by(|a, b| internal_order(&a.0, &b.0));
        let bytes = build_table(&entries, CompressionType::None, 4096, 16, None).unwrap();
        write_file(env, &table_path(number), &bytes);
        new_files.push(EditNewFile {
            level,
            number,
            file_size: bytes.len() as u64,
            smallest: entries.first().unwrap().0.clone(),
            largest: entries.last().unwrap().0.clone(),
        });
        numbers.insert(number);
    }
    let edit = EditFields {
        comparator: Some("leveldb.BytewiseComparator".into()),
        log_number: Some(0),
        prev_log_number: Some(0),
        next_file_number: Some(100),
        last_sequence: Some(LAST_SEQUENCE),
        new_files,
        ..EditFields::default()
    };
    write_manifest(env, dir, 2, &[edit]);
    numbers
}

/// The level-0 compaction has run when level 0 is empty; fails at once on a background error.
fn wait_for_level0_compaction(env: &dyn Env, db: &DB) {
    wait_until("the level-0 compaction", || {
        assert!(
            !info_log(env).contains("background error"),
            "the compaction failed:\n{}",
            log_tail(env, Path::new(DIR), 20)
        );
        db.property("leveldb.num-files-at-level0").as_deref() == Some("0")
    });
}

/// Every entry of level 1, in order.
fn level1_entries(env: &dyn Env, db: &DB) -> Vec<Entry> {
    let levels = live_tables(db);
    assert!(levels[0].is_empty());
    assert_eq!(levels[2], vec![30], "level 2 was not touched");
    levels[1]
        .iter()
        .flat_map(|&n| table_entries(env, n))
        .collect()
}

/// Opens a fresh hand-built database with `max_subcompactions`, lets the compaction at open run
/// and returns level 1's entries and the info log.
fn hand_compaction(max_subcompactions: usize) -> (Vec<Entry>, String) {
    let env = Arc::new(MemEnv::new());
    build_hand_database(&env);
    let db = DB::open(DIR, options(&env, max_subcompactions)).unwrap();
    wait_for_level0_compaction(&*env, &db);
    let entries = level1_entries(&*env, &db);
    drop(db);
    (entries, info_log(&*env))
}

fn describe(entry: &Entry) -> String {
    format!(
        "{:?} -> {:?}",
        String::from_utf8_lossy(&entry.0),
        String::from_utf8_lossy(&entry.1)
    )
}

#[test]
fn a_split_merge_writes_exactly_the_entries_of_one_merge() {
    let (single, single_log) = hand_compaction(1);
    assert!(split_counts(&single_log).is_empty());
    // The reference is sane: it kept the unparseable entries and dropped shadowed ones.
    let unparseable = single
        .iter()
        .filter(|(k, _)| k.len() < 8 || k[k.len() - 8] == 7);
    assert_eq!(unparseable.count(), 20 + 4 + 1, "unparseable entries kept");
    assert!(
        single.len() < HAND_KEYS + 4 * HAND_KEYS / 5,
        "nothing was dropped"
    );

    for max_subcompactions in [2, 3, 4, 16] {
        let (split, log) = hand_compaction(max_subcompactions);
        let counts = split_counts(&log);
        assert_eq!(
            counts,
            vec![max_subcompactions.min(3)],
            "the compaction (about 7 MiB) was not cut as expected"
        );
        if split != single {
            let first = split
                .iter()
                .zip(&single)
                .position(|(a, b)| a != b)
                .unwrap_or(split.len().min(single.len()));
            panic!(
                "{max_subcompactions} threads: {} entries, one thread {}; first difference at \
                 #{first}: {:?} vs {:?}",
                split.len(),
                single.len(),
                split.get(first).map(describe),
                single.get(first).map(describe),
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Faults aimed at the subcompaction threads.

/// What happens to the tables the subcompaction threads write.
#[derive(Debug, Clone, Copy)]
enum SubFault {
    /// The `n`th append (counting all their tables) fails with an I/O error.
    Fail(u64),
    /// The `n`th append panics, as a bug would.
    Panic(u64),
    /// Every append first sleeps this long.
    Slow(Duration),
}

/// The fault aimed at the tables the subcompaction threads write (the files they create), and
/// what those threads did: the hook of the database's env.
struct SubStats {
    fault: SubFault,
    /// The files a subcompaction thread created.
    files: Mutex<HashSet<PathBuf>>,
    files_opened: AtomicUsize,
    /// Appends to those files.
    appends: AtomicU64,
    injected: AtomicUsize,
}

impl SubStats {
    fn new(fault: SubFault) -> SubStats {
        SubStats {
            fault,
            files: Mutex::default(),
            files_opened: AtomicUsize::new(0),
            appends: AtomicU64::new(0),
            injected: AtomicUsize::new(0),
        }
    }

    /// Notes the files a subcompaction thread creates, and applies the fault to their appends.
    fn hook(&self, call: &EnvCall<'_>) -> Result<()> {
        match call.op {
            EnvOp::NewWritableFile if std::thread::current().name() == Some(SUB_THREAD) => {
                self.files_opened.fetch_add(1, Ordering::SeqCst);
                self.files.lock().insert(call.path.to_path_buf());
            }
            EnvOp::Append if self.files.lock().contains(call.path) => {
                let n = self.appends.fetch_add(1, Ordering::SeqCst) + 1;
                match self.fault {
                    SubFault::Fail(at) if n == at => {
                        self.injected.fetch_add(1, Ordering::SeqCst);
                        return Err(Error::io(
                            "append on a subcompaction thread (injected)",
                            std::io::Error::other("injected"),
                        ));
                    }
                    SubFault::Panic(at) if n == at => {
                        self.injected.fetch_add(1, Ordering::SeqCst);
                        panic!("injected panic on a subcompaction thread");
                    }
                    SubFault::Slow(pause) => std::thread::sleep(pause),
                    _ => {}
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// A hand-built database opened with four threads a compaction over an env applying `fault`
/// to the subcompaction threads' tables.
struct Faulted {
    plain: Arc<MemEnv>,
    stats: Arc<SubStats>,
    inputs: BTreeSet<u64>,
    db: DB,
}

fn open_with_sub_fault(fault: SubFault, write_buffer_size: usize) -> Faulted {
    let plain = Arc::new(MemEnv::new());
    let inputs = build_hand_database(&plain);
    let stats = Arc::new(SubStats::new(fault));
    let hook = Arc::clone(&stats);
    let env = HookEnv::new(plain.clone(), move |call: &EnvCall<'_>| hook.hook(call));
    let db = DB::open(
        DIR,
        Options {
            write_buffer_size,
            ..options(&env, 4)
        },
    )
    .unwrap();
    Faulted {
        plain,
        stats,
        inputs,
        db,
    }
}

/// After the failed compaction: the version still lists exactly the inputs, no other table is
/// on disk, and a reopen without faults compacts to the entries one thread writes.
fn assert_nothing_installed_and_recovers(f: Faulted) {
    let listed: BTreeSet<u64> = live_tables(&f.db).into_iter().flatten().collect();
    assert_eq!(
        listed, f.inputs,
        "the failed compaction changed the version"
    );
    let on_disk = tables_on_disk(&*f.plain);
    assert_eq!(
        on_disk, f.inputs,
        "output tables of the failed compaction were left on disk"
    );
    drop(f.db);
    let (reference, _) = hand_compaction(1);
    let db = DB::open(DIR, options(&f.plain, 4)).unwrap();
    wait_for_level0_compaction(&*f.plain, &db);
    assert!(
        level1_entries(&*f.plain, &db) == reference,
        "after reopening, the compaction did not write what one thread writes"
    );
}

/// A sub range meeting `fault` fails the compaction with an error saying `says`: writes then
/// fail, nothing is installed and no output is left.
fn a_faulty_sub_range_installs_nothing(fault: SubFault, says: &str) {
    let f = open_with_sub_fault(fault, MIB);
    wait_until("the background error", || {
        info_log(&*f.plain).contains("background error")
    });
    assert_eq!(f.stats.injected.load(Ordering::SeqCst), 1);
    let err = f.db.put(b"k", b"v").unwrap_err();
    assert!(err.to_string().contains(says), "{err}");
    assert_nothing_installed_and_recovers(f);
}

#[test]
fn a_failing_sub_range_installs_nothing_and_leaves_no_output() {
    a_faulty_sub_range_installs_nothing(SubFault::Fail(40), "injected");
}

#[test]
fn a_panicking_sub_range_installs_nothing_and_leaves_no_output() {
    a_faulty_sub_range_installs_nothing(SubFault::Panic(40), "panicked");
}

#[test]
fn closing_during_a_split_compaction_removes_its_outputs() {
    let f = open_with_sub_fault(SubFault::Slow(Duration::from_millis(2)), MIB);
    wait_until("a subcompaction thread writing", || {
        f.stats.appends.load(Ordering::SeqCst) >= 3
    });
    let Faulted {
        plain,
        stats,
        inputs,
        db,
    } = f;
    let start = Instant::now();
    drop(db);
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "closing waited {:?} for the compaction",
        start.elapsed()
    );
    let log = info_log(&*plain);
    assert!(log.contains("database closed during compaction"), "{log}");
    assert!(stats.files_opened.load(Ordering::SeqCst) >= 1);
    assert_eq!(tables_on_disk(&*plain), inputs, "outputs left after close");
    let (reference, _) = hand_compaction(1);
    let db = DB::open(DIR, options(&plain, 4)).unwrap();
    wait_for_level0_compaction(&*plain, &db);
    assert!(level1_entries(&*plain, &db) == reference);
}

#[test]
fn writers_do_not_wait_for_the_slowest_sub_range() {
    // Sub ranges take seconds (3 ms an append); the first range, on the background thread,
    // takes a fraction of one. Writes that need a memtable flush must get it meanwhile.
    let write_buffer = 64 << 10;
    let f = open_with_sub_fault(SubFault::Slow(Duration::from_millis(3)), write_buffer);
    wait_until("a subcompaction thread writing", || {
        f.stats.appends.load(Ordering::SeqCst) >= 3
    });
    std::thread::sleep(Duration::from_millis(700)); // the first range is done by now
    assert!(
        !info_log(&*f.plain).contains("compacted to"),
        "the compaction ended before the test could write: make the sub ranges slower"
    );
    let start = Instant::now();
    let value = vec![b'w'; 1000];
    // Three memtables' worth: the third must wait for the first to be flushed.
    for i in 0..3 * write_buffer / 1000 {
        f.db.put(format!("w{i:05}").as_bytes(), &value).unwrap();
    }
    let waited = start.elapsed();
    let log = info_log(&*f.plain);
    assert!(
        !log.contains("compacted to"),
        "writes waited {waited:?}, until the whole compaction ended"
    );
    assert!(log.contains("level-0 table #"), "no flush happened");
    wait_for_level0_compaction_or_flush(&f.db);
    for i in (0..3 * write_buffer / 1000).step_by(7) {
        assert_eq!(
            f.db.get(format!("w{i:05}").as_bytes()).unwrap().as_deref(),
            Some(&value[..])
        );
    }
}

/// Waits until the compaction installed (level 1 replaced): the flush's own level-0 table may
/// remain at level 0.
fn wait_for_level0_compaction_or_flush(db: &DB) {
    wait_until("the compaction", || {
        live_tables(db)[1].iter().all(|&n| n >= 100)
    });
}

#[test]
fn a_crash_during_a_split_compaction_loses_nothing() {
    let (reference, _) = hand_compaction(1);
    // How many output tables the split compaction writes (each synced once).
    let (_, split_log) = hand_compaction(4);
    let outputs = split_log.matches("generated table").count() as u64;
    let ranges = split_counts(&split_log);
    assert!(
        outputs >= 3 && ranges.len() == 1 && ranges[0] >= 2,
        "{outputs} outputs, {ranges:?}"
    );
    let is_table = |p: &Path| p.extension().is_some_and(|e| e == "ldb");
    let is_manifest = |p: &Path| {
        p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("MANIFEST"))
    };
    // Crash after the first, a middle and the last output table's sync, after the manifest
    // sync of the edit that installs them (the second: the first is the open's), and after the
    // first input removal.
    let cases: [(OpKind, u64, bool); 5] = [
        (OpKind::Sync, 1, true),
        (OpKind::Sync, outputs / 2, true),
        (OpKind::Sync, outputs, true),
        (OpKind::Sync, 2, false),
        (OpKind::Remove, 1, true),
    ];
    for (seed, (kind, n, tables)) in cases.into_iter().enumerate() {
        let plain = Arc::new(MemEnv::new());
        build_hand_database(&plain);
        let fault = FaultEnv::new(plain.clone());
        if tables {
            fault.crash_after_matching(kind, n, move |p| is_table(p));
        } else {
            fault.crash_after_matching(kind, n, move |p| is_manifest(p));
        }
        let db = DB::open(DIR, options(&fault, 4)).unwrap();
        wait_until("the crash", || fault.crash_point().is_some());
        drop(db);
        fault
            .simulate_power_loss(PowerLossMode::DropUnsynced, seed as u64)
            .unwrap();
        fault.clear_faults();
        let db = DB::open(DIR, options(&fault, 4)).unwrap();
        wait_for_level0_compaction(&*plain, &db);
        let what = format!(
            "crash after {kind:?} #{n} on a {}",
            if tables { "table" } else { "manifest" }
        );
        assert!(
            level1_entries(&*plain, &db) == reference,
            "{what}: level 1 differs from one thread's compaction"
        );
        wait_until("obsolete tables to go", || {
            let live: BTreeSet<u64> = live_tables(&db).into_iter().flatten().collect();
            tables_on_disk(&*plain) == live
        });
        assert!(
            split_counts(&info_log(&*plain))
                .iter()
                .all(|&n| n == ranges[0]),
            "{what}"
        );
    }
}
