//! Recovery after a gap or damage in a write-ahead log (`db/log_continuity.rs`): the batches
//! after it are replayed while their sequence numbers continue exactly where the last replayed
//! batch ended, and the log ends at the first that does not. A gap (zeros followed by data) the
//! batches continue across is no damage, even for `paranoid_checks`; a jump after a gap, and
//! any damage, is (fatal under `paranoid_checks`, noted in `LOG` otherwise).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use strata::testing::{
    encode_version_edit, write_batch_contents, write_batch_set_sequence, write_log_file,
    write_log_records, EditFields, EnvOp,
};
use strata::tools::check_db;
use strata::{Env, Error, MemEnv, Options, WriteBatch, DB};
use support::wal::{
    batch, blocks, database_with_log, hooked, options, paranoid_read_only_open_beside_a_writer,
    present, BLOCK, KEYS,
};

/// Options over `env` counting in `opens` each time log 100 is opened for reading.
fn counting_log_opens(env: &Arc<MemEnv>, paranoid_checks: bool, opens: &Arc<AtomicU64>) -> Options {
    let opens = Arc::clone(opens);
    hooked(env, paranoid_checks, move |call| {
        if call.op == EnvOp::NewSequentialFile && call.path == Path::new("/db/000100.log") {
            opens.fetch_add(1, Ordering::SeqCst);
        }
        Ok(())
    })
}

/// A database on disk in `dir` holding `a` (sequence 1), closed.
fn database_on_disk_with_a(dir: &Path) {
    let db = DB::open(
        dir,
        Options {
            create_if_missing: true,
            ..Options::default()
        },
    )
    .unwrap();
    db.put(b"a", b"v").unwrap();
}

/// A paranoid read-only open of `dir` during which the writer, right after the handle's
/// first read of `log`, makes the log `full`.
fn open_read_only_while_the_writer_goes_on(
    dir: &Path,
    log: &Path,
    full: &[u8],
) -> strata::Result<DB> {
    let (log, full) = (log.to_path_buf(), full.to_vec());
    let is_the_log = {
        let log = log.clone();
        move |path: &Path| path == log
    };
    paranoid_read_only_open_beside_a_writer(dir, is_the_log, move || {
        let file = std::fs::OpenOptions::new().write(true).open(&log).unwrap();
        file.write_all_at(&full, 0).unwrap();
    })
}

fn info_log(env: &MemEnv) -> String {
    let mut text = String::new();
    let mut file = env.new_sequential_file(Path::new("/db/LOG")).unwrap();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf).unwrap();
        if n == 0 {
            return text;
        }
        text.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
}

#[test]
fn records_that_continue_the_sequence_after_zeros_are_replayed_even_when_paranoid() {
    // b, c, then zeros to the block's end (a writer killed before publishing its next
    // record), then d and e continuing at sequence 4 (LevelDB appending with reuse_logs).
    let log = blocks(&[
        vec![batch("b", 2), batch("c", 3)],
        vec![batch("d", 4), batch("e", 5)],
    ]);
    let env = database_with_log(&log);
    for paranoid in [true, false] {
        let db = DB::open("/db", options(&env, paranoid)).unwrap();
        assert_eq!(present(&db, &KEYS), KEYS, "paranoid {paranoid}");
    }
}

#[test]
fn records_that_jump_after_zeros_end_the_log() {
    // Sequence 4 is missing after the zeros: a power loss may have lost its page.
    let log = blocks(&[vec![batch("b", 2), batch("c", 3)], vec![batch("d", 5)]]);
    let env = database_with_log(&log);
    let err = DB::open("/db", options(&env, true)).unwrap_err();
    assert!(matches!(err, Error::Corruption(_)), "{err}");
    assert!(
        err.to_string()
            .contains("zero-filled region followed by data"),
        "{err}"
    );
    let db = DB::open("/db", options(&env, false)).unwrap();
    assert_eq!(present(&db, &KEYS), ["a", "b", "c"]);
    let log = info_log(&env);
    assert!(
        log.contains("starts at sequence 5 where the writes before end at 3"),
        "{log}"
    );
    // New writes after the recovery are not hidden behind the dropped ones.
    db.put(b"f", b"v").unwrap();
    drop(db);
    let db = DB::open("/db", options(&env, false)).unwrap();
    assert_eq!(
        present(&db, &["a", "b", "c", "d", "f"]),
        ["a", "b", "c", "f"]
    );
}

#[test]
fn damage_costs_the_records_after_it_only_where_the_sequence_jumps() {
    // A bad checksum at the end of block 0: what it dropped held no batch (d continues c).
    let mut log = blocks(&[vec![batch("b", 2), batch("c", 3)], vec![batch("d", 4)]]);
    let garbage = write_log_records(&[b"not a batch".as_slice()]);
    let at = write_log_records(&[&batch("b", 2), &batch("c", 3)]).len();
    log[at..at + garbage.len()].copy_from_slice(&garbage);
    log[at] ^= 1; // its checksum
    let env = database_with_log(&log);
    assert!(matches!(
        DB::open("/db", options(&env, true)).unwrap_err(),
        Error::Corruption(_)
    ));
    let db = DB::open("/db", options(&env, false)).unwrap();
    assert_eq!(present(&db, &KEYS), ["a", "b", "c", "d"]);
    drop(db);

    // A bad checksum on c: d, after it, lost its predecessor, and the log ends there.
    let mut log = blocks(&[vec![batch("b", 2), batch("c", 3)], vec![batch("d", 4)]]);
    let c = write_log_records(&[&batch("b", 2)]).len();
    log[c] ^= 1;
    let env = database_with_log(&log);
    let db = DB::open("/db", options(&env, false)).unwrap();
    assert_eq!(present(&db, &KEYS), ["a", "b"]);
    let log = info_log(&env);
    assert!(log.contains("checksum mismatch"), "{log}");
    assert!(
        log.contains("starts at sequence 4 where the writes before end at 2"),
        "{log}"
    );
}

/// `strata check` reads logs by recovery's rule: what a paranoid open takes cleanly it calls
/// clean, and it reports what a paranoid open refuses.
#[test]
fn check_reports_a_gap_where_a_paranoid_open_fails_and_only_there() {
    let continues = blocks(&[vec![batch("b", 2), batch("c", 3)], vec![batch("d", 4)]]);
    let jumps = blocks(&[vec![batch("b", 2), batch("c", 3)], vec![batch("d", 5)]]);
    for (log, clean) in [(continues, true), (jumps, false)] {
        let env = database_with_log(&log);
        let report = check_db(Path::new("/db"), &options(&env, false)).unwrap();
        let opened = DB::open("/db", options(&env, true)).map(drop);
        assert_eq!(opened.is_ok(), clean, "{opened:?}");
        assert_eq!(report.problems.is_empty(), clean, "{:?}", report.problems);
        if !clean {
            assert!(
                report.problems.iter().any(|p| p.file == "000100.log"),
                "{:?}",
                report.problems
            );
        }
    }
}

/// A gap that the batches continue across in one log, then a later log that continues it:
/// every write is replayed, paranoid too.
#[test]
fn a_gap_the_batches_continue_across_keeps_the_later_logs() {
    let log = blocks(&[vec![batch("b", 2)], vec![batch("c", 3)]]);
    let env = database_with_log(&log);
    let mut file = env.new_writable_file(Path::new("/db/000101.log")).unwrap();
    file.append(&blocks(&[vec![batch("d", 4), batch("e", 5)]]))
        .unwrap();
    file.close().unwrap();
    let db = DB::open("/db", options(&env, true)).unwrap();
    assert_eq!(present(&db, &KEYS), KEYS);
}

/// A zeroed header in the last, whole block of a log left by a killed writer (a memory-mapped
/// log's file ends at its block's end, reserved before the writer copied its last record in)
/// reads as a record the writer never published: the rest of the block is skipped without a
/// report, paranoid too, and the records after the zeros in that block are not replayed. The
/// whole records there could show the zeros to be damage, but telling them from the payload of
/// an unpublished record would mean trusting bytes a user value can forge. LevelDB's reader
/// does the same in every block (a zero-type, zero-length header drops the rest of its block
/// silently); Strata does it only in a log's last block, and reports zeros followed by data in
/// any earlier block (the gap rules of `db/log_continuity.rs`).
#[test]
fn a_zeroed_header_in_a_killed_logs_last_block_drops_the_rest_of_that_block() {
    let records = [batch("b", 2), batch("c", 3), batch("d", 4)];
    let mut log = blocks(std::slice::from_ref(&records.to_vec()));
    let c = write_log_records(&[&records[0]]).len();
    log[c..c + 7].fill(0);
    log.resize(BLOCK, 0);
    let env = database_with_log(&log);
    let db = DB::open("/db", options(&env, true)).unwrap();
    assert_eq!(present(&db, &KEYS), ["a", "b"]);
    drop(db);
    // Not in the last block: the zeros followed by data are a gap, and the batch after the
    // gap jumps (c's write is lost), so the log ends there as damage.
    let mut log = blocks(&[records.to_vec(), vec![batch("e", 5)]]);
    log[c..c + 7].fill(0);
    let env = database_with_log(&log);
    let opened = DB::open("/db", options(&env, true)).map(drop);
    assert!(matches!(opened, Err(Error::Corruption(_))), "{opened:?}");
}

/// LevelDB records as its manifest's last sequence every write made so far, including the
/// ones already in the log the same edit names (its memtable flush runs while writers go on
/// logging to the new log). So where a LevelDB manifest names log 100 with last sequence 3,
/// log 100 may hold the writes of sequences 1 to 3 — and when a power loss lost them (zeros)
/// while a later page kept the batch at sequence 4, that batch "continues" the manifest's
/// sequence exactly, yet the writes before it are lost: it must not be replayed without them
/// (or a paranoid open must fail). Strata's own manifests record exactly the sequence before
/// the log's first write (`DbState::retire_older_logs`), but a manifest does not say who wrote
/// it: any gap before a log's first batch is damage
/// (`a_gap_before_a_logs_first_batch_is_replayed_and_reported`), so a paranoid open fails here.
#[test]
fn a_gap_at_a_logs_start_does_not_continue_a_leveldb_manifest_past_the_logs_first_write() {
    let env = Arc::new(MemEnv::new());
    env.create_dir(Path::new("/db")).unwrap();
    let edit = encode_version_edit(&EditFields {
        comparator: Some("leveldb.BytewiseComparator".into()),
        log_number: Some(100),
        prev_log_number: Some(0),
        next_file_number: Some(101),
        last_sequence: Some(3),
        ..EditFields::default()
    })
    .unwrap();
    write_log_file(&*env, Path::new("/db/MANIFEST-000002"), &[&edit]).unwrap();
    let mut current = env.new_writable_file(Path::new("/db/CURRENT")).unwrap();
    current.append(b"MANIFEST-000002\n").unwrap();
    current.close().unwrap();
    // Block 0 held a, b and c (sequences 1 to 3) and reached the disk as zeros; d, in block
    // 1, reached it.
    let log = blocks(&[vec![], vec![batch("d", 4)]]);
    let mut file = env.new_writable_file(Path::new("/db/000100.log")).unwrap();
    file.append(&log).unwrap();
    file.close().unwrap();
    let opened = DB::open("/db", options(&env, true)).map(drop);
    assert!(
        matches!(opened, Err(Error::Corruption(_))),
        "d replayed without the writes before it: {opened:?}"
    );
}

/// A read-only handle beside a live mapped writer reads the log a block at a time. It can read
/// block 0 while the writer is copying a record that starts there (its header not yet
/// published: zeros, then the payload, to the block's end), and read block 1 after the writer
/// published that record (its last fragment opens block 1) and the next one: to the reader,
/// zeros followed by an orphaned fragment, then a record whose sequence is past the one it
/// expects (the skipped record's). Nothing was lost, the writer was only ahead of the reader:
/// a paranoid read-only open must not fail, and must see the records before, the ones it read
/// again after the jump, and what a refresh finds appended after them.
#[test]
fn a_reader_overtaken_by_the_writer_in_the_middle_of_a_block_is_not_damage() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("db");
    database_on_disk_with_a(&dir);
    let mut big = WriteBatch::new();
    big.put(b"d", &[7u8; 40_000]);
    write_batch_set_sequence(&mut big, 4);
    let records = [
        batch("b", 2),
        batch("c", 3),
        write_batch_contents(&big).to_vec(),
        batch("e", 5),
    ];
    let full = blocks(&[records.to_vec()]);
    assert!(full.len() > BLOCK + 7, "d does not spill into block 1");
    let first = write_log_records(&[&records[0], &records[1]]).len();
    // What the reader's first read finds: d's first fragment copied, its header not published.
    let mut block0 = full[..BLOCK].to_vec();
    block0[first..first + 7].fill(0);
    let log = dir.join("000100.log");
    std::fs::write(&log, &block0).unwrap();
    // The writer publishes d and writes e meanwhile.
    let reader = open_read_only_while_the_writer_goes_on(&dir, &log, &full);
    let reader = reader.unwrap_or_else(|e| panic!("read-only open beside the writer: {e}"));
    assert_eq!(present(&reader, &["a", "b", "c"]), ["a", "b", "c"]);
    // The read again after the excused jump went on from where the first stopped: d and e
    // were taken then, and the next write the writer appends is the next a refresh sees.
    assert_eq!(present(&reader, &KEYS), KEYS);
    let more = [records.to_vec(), vec![batch("f", 6)]].concat();
    let longer = blocks(&[more]);
    assert!(longer.starts_with(&full));
    let file = std::fs::OpenOptions::new().write(true).open(&log).unwrap();
    file.write_all_at(&longer, 0).unwrap();
    reader.refresh().unwrap();
    assert_eq!(
        present(&reader, &["a", "b", "c", "d", "e", "f"]),
        ["a", "b", "c", "d", "e", "f"]
    );
    let mut it = reader.iter();
    it.seek_to_first();
    let mut seen = Vec::new();
    while it.valid() {
        seen.push(String::from_utf8(it.key().to_vec()).unwrap());
        it.next();
    }
    assert_eq!(seen, ["a", "b", "c", "d", "e", "f"]);
}

/// The other face of the race above: the reader's `read` copies the header of a record the
/// writer is still copying before all of its payload (the kernel copies in no promised order),
/// a checksum mismatch. In the newest log that is read again, not damage, even for a paranoid
/// handle: whether records follow the spoiled one or it is the last.
#[test]
fn a_record_read_before_all_of_its_payload_is_not_damage() {
    for records_after in [true, false] {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("db");
        database_on_disk_with_a(&dir);
        let mut d = WriteBatch::new();
        d.put(b"d", &[7u8; 1_000]);
        write_batch_set_sequence(&mut d, 4);
        let mut records = vec![
            batch("b", 2),
            batch("c", 3),
            write_batch_contents(&d).to_vec(),
        ];
        if records_after {
            records.push(batch("e", 5));
        }
        let full = blocks(&[records.clone()]);
        let d_at = write_log_records(&[&records[0], &records[1]]).len();
        // What the first read finds: d's header published, part of its payload not yet.
        let mut torn = full.clone();
        torn[d_at + 7 + 500..d_at + 7 + 600].fill(0);
        let log = dir.join("000100.log");
        std::fs::write(&log, &torn).unwrap();
        // The writer finishes copying d meanwhile.
        let reader = open_read_only_while_the_writer_goes_on(&dir, &log, &full);
        let reader = reader.unwrap_or_else(|e| {
            panic!("read-only open beside the writer (records after: {records_after}): {e}")
        });
        let expected: &[&str] = if records_after { &KEYS } else { &KEYS[..4] };
        assert_eq!(
            present(&reader, &KEYS),
            expected,
            "records after: {records_after}"
        );
    }
}

/// Zeros before a log's first batch (a writer killed while copying the log's first record, then
/// LevelDB appending with `reuse_logs` at the next block), then a batch that continues the
/// manifest's last sequence: nothing proves the zeros hid no write the manifest counts (see the
/// next test), so it is damage — a paranoid open fails and `strata check` reports it at the
/// zeros — while a lenient open replays the batch, as LevelDB does, and notes the zeros.
#[test]
fn a_gap_before_a_logs_first_batch_is_replayed_and_reported() {
    let log = blocks(&[vec![], vec![batch("b", 2)]]);
    let env = database_with_log(&log);
    let opened = DB::open("/db", options(&env, true)).map(drop);
    assert!(matches!(opened, Err(Error::Corruption(_))), "{opened:?}");
    let db = DB::open("/db", options(&env, false)).unwrap();
    assert_eq!(present(&db, &KEYS), ["a", "b"]);
    drop(db);
    let info = info_log(&env);
    assert!(info.contains("before the log's first batch"), "{info}");
    let env = database_with_log(&log);
    let report = check_db(Path::new("/db"), &options(&env, false)).unwrap();
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.file == "000100.log" && p.message.contains("first batch")),
        "{:?}",
        report.problems
    );
}

/// A read-only handle reads a jump after zeros in the newest log again (its writer may be
/// copying the record the zeros are) before calling it damage — and then still calls it
/// damage: a paranoid read-only open fails after its re-reads, a lenient one keeps the batches
/// before the zeros. A jump in an older log, which its writer finished, fails at once: that
/// log is read once.
#[test]
fn a_read_only_handle_re_reads_only_the_live_log_and_still_fails_on_a_real_jump() {
    // Sequence 4 is missing after the zeros: no writer will ever fill it in.
    let jump = blocks(&[vec![batch("b", 2), batch("c", 3)], vec![batch("e", 5)]]);
    for older in [false, true] {
        let env = database_with_log(&jump);
        if older {
            let mut file = env.new_writable_file(Path::new("/db/000101.log")).unwrap();
            file.append(&blocks(&[vec![batch("f", 6)]])).unwrap();
            file.close().unwrap();
        }
        let opens = Arc::new(AtomicU64::new(0));
        let hooked = |paranoid_checks: bool| counting_log_opens(&env, paranoid_checks, &opens);
        let opened = DB::open_read_only("/db", hooked(true)).map(drop);
        assert!(
            matches!(opened, Err(Error::Corruption(_))),
            "older {older}: {opened:?}"
        );
        // The newest log: read once, then again ten times; an older one: once.
        let reads = if older { 1 } else { 11 };
        assert_eq!(opens.swap(0, Ordering::SeqCst), reads, "older {older}");
        let db = DB::open_read_only("/db", hooked(false)).unwrap();
        assert_eq!(
            present(&db, &["a", "b", "c", "d", "e", "f"]),
            ["a", "b", "c"]
        );
        assert_eq!(
            opens.load(Ordering::SeqCst),
            reads,
            "older {older}, lenient"
        );
    }
}

/// Real damage in the newest log (a checksum that will never match) is read again like a jump,
/// then still called damage: a paranoid read-only open fails after its re-reads, a lenient one
/// keeps the batches before it, and the batch after it, which does not continue them, is left
/// out too.
#[test]
fn a_read_only_handle_still_fails_on_real_damage_in_the_live_log() {
    let mut log = blocks(&[vec![
        batch("b", 2),
        batch("c", 3),
        batch("d", 4),
        batch("e", 5),
    ]]);
    let d_at = write_log_records(&[&batch("b", 2), &batch("c", 3)]).len();
    log[d_at + 7] ^= 0xff;
    let env = database_with_log(&log);
    let opens = Arc::new(AtomicU64::new(0));
    let hooked = |paranoid_checks: bool| counting_log_opens(&env, paranoid_checks, &opens);
    let opened = DB::open_read_only("/db", hooked(true)).map(drop);
    assert!(matches!(opened, Err(Error::Corruption(_))), "{opened:?}");
    assert_eq!(opens.swap(0, Ordering::SeqCst), 11);
    let db = DB::open_read_only("/db", hooked(false)).unwrap();
    assert_eq!(present(&db, &KEYS), ["a", "b", "c"]);
    assert_eq!(opens.load(Ordering::SeqCst), 11);
}
