//! A read-only handle reads the newest log again from where a read stopped (at a jump or, beside
//! a writer, at damage: `db/read_only.rs`), and every refresh goes on from where the one before
//! stopped. Reading a log in several pieces must take exactly what one read of it takes: the
//! batches after a gap or damage only while they continue the sequence numbers exactly, so the
//! handle sees a prefix of the writer's writes, and a read error stays fatal.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use strata::testing::{write_log_records, EnvOp};
use strata::{Env, Error, DB};
use support::wal::{batch, blocks, database_with_log, hooked, options, present, write_log, KEYS};

/// A whole record that is no batch (its checksum holds: no gap, but nothing a batch can
/// continue from).
fn not_a_batch() -> Vec<u8> {
    b"not a batch".to_vec()
}

/// b, then zeros to the block's end that hid c (sequence 3: a power loss lost its page), then
/// a whole record that is no batch, then d at sequence 4: d does not continue b, so the log
/// ends before it, however the log is read — in one read, or in two refreshes that stop
/// after the unusable record.
#[test]
fn a_batch_after_a_gap_and_an_unusable_record_is_left_out_by_a_later_refresh_too() {
    let whole = blocks(&[vec![batch("b", 2)], vec![not_a_batch(), batch("d", 4)]]);
    // One read of the whole log: the open's rule.
    let env = database_with_log(&whole);
    let db = DB::open_read_only("/db", options(&env, false)).unwrap();
    assert_eq!(present(&db, &KEYS), ["a", "b"]);
    drop(db);

    // The handle reads the log before d was appended, then refreshes.
    let env = database_with_log(&blocks(&[vec![batch("b", 2)], vec![not_a_batch()]]));
    let db = DB::open_read_only("/db", options(&env, false)).unwrap();
    assert_eq!(present(&db, &KEYS), ["a", "b"]);
    write_log(&env, "000100.log", &whole);
    db.refresh().unwrap();
    assert_eq!(
        present(&db, &KEYS),
        ["a", "b"],
        "a refresh took d, which does not continue b after a gap"
    );
}

/// The same log, read beside the writer: d is read first while it is being copied (its header
/// before all of its payload), so that read stops after the unusable record and the next one
/// goes on from there. It must not take d either.
#[test]
fn a_batch_after_a_gap_and_an_unusable_record_is_left_out_after_a_read_stops_at_damage() {
    let whole = blocks(&[vec![batch("b", 2)], vec![not_a_batch(), batch("d", 4)]]);
    let mut torn = whole.clone();
    let len = torn.len();
    torn[len - 3..].fill(0); // part of d's payload, not copied yet
    let env = database_with_log(&torn);
    let log_opens = Arc::new(AtomicU64::new(0));
    let options = {
        let (env2, log_opens) = (env.clone(), log_opens.clone());
        hooked(&env, false, move |call| {
            if call.op == EnvOp::NewSequentialFile
                && call.path == Path::new("/db/000100.log")
                && log_opens.fetch_add(1, Ordering::SeqCst) == 1
            {
                // The writer has finished copying d before the second read.
                write_log(&env2, "000100.log", &whole);
            }
            Ok(())
        })
    };
    let db = DB::open_read_only("/db", options).unwrap();
    assert!(log_opens.load(Ordering::SeqCst) >= 2, "read once only");
    assert_eq!(
        present(&db, &KEYS),
        ["a", "b"],
        "a read again from after the unusable record took d"
    );
}

/// The log the manifest names is gone (a lenient handle goes on without it), and log 100 holds
/// b, c, damage that hid no batch, then d continuing c: one read keeps d. Read beside the
/// writer, the newest log is read again from after c before its damage is reported, and that
/// read must keep d as well — as must a refresh that finds the damage and d appended.
#[test]
fn reading_the_newest_log_again_keeps_what_one_read_keeps() {
    let mut log = blocks(&[vec![batch("b", 2), batch("c", 3)], vec![batch("d", 4)]]);
    let garbage = write_log_records(&[b"not a batch".as_slice()]);
    let at = write_log_records(&[&batch("b", 2), &batch("c", 3)]).len();
    log[at..at + garbage.len()].copy_from_slice(&garbage);
    log[at] ^= 1; // its checksum
    let without_named_log = |log: &[u8]| {
        let env = database_with_log(log);
        for name in env.children(Path::new("/db")).unwrap() {
            if name.ends_with(".log") && name != "000100.log" {
                env.remove_file(&Path::new("/db").join(name)).unwrap();
            }
        }
        env
    };
    for newest in [false, true] {
        let env = without_named_log(&log);
        if !newest {
            write_log(&env, "000101.log", &[]);
        }
        let db = DB::open_read_only("/db", options(&env, false)).unwrap();
        assert_eq!(
            present(&db, &KEYS[1..]),
            ["b", "c", "d"],
            "log 100 newest: {newest}"
        );
    }
    // A refresh reading from after c.
    let env = without_named_log(&log[..at]);
    let db = DB::open_read_only("/db", options(&env, false)).unwrap();
    assert_eq!(present(&db, &KEYS[1..]), ["b", "c"]);
    write_log(&env, "000100.log", &log);
    db.refresh().unwrap();
    assert_eq!(present(&db, &KEYS[1..]), ["b", "c", "d"], "refresh");
}

/// Damage the reader withholds beside the writer, then a read error: the error fails the open
/// (lenient or paranoid), as it does in a log read once; it is no corruption to read again.
#[test]
fn a_read_error_after_withheld_damage_is_fatal() {
    let mut log = blocks(&[vec![batch("b", 2), batch("c", 3)], vec![batch("d", 4)]]);
    let c = write_log_records(&[&batch("b", 2)]).len();
    log[c] ^= 1; // c's checksum
    for paranoid in [false, true] {
        let env = database_with_log(&log);
        let reads = Arc::new(AtomicU64::new(0));
        let options = {
            let reads = reads.clone();
            hooked(&env, paranoid, move |call| {
                if call.path != Path::new("/db/000100.log") {
                    return Ok(());
                }
                match call.op {
                    EnvOp::NewSequentialFile => reads.store(0, Ordering::SeqCst),
                    // Block 0 reads; block 1 does not.
                    EnvOp::Read if reads.fetch_add(1, Ordering::SeqCst) >= 1 => {
                        return Err(Error::Io {
                            context: "test".into(),
                            source: Arc::new(std::io::Error::other("injected read error")),
                        })
                    }
                    _ => {}
                }
                Ok(())
            })
        };
        let opened = DB::open_read_only("/db", options).map(drop);
        assert!(
            matches!(&opened, Err(e) if e.is_io_error()),
            "paranoid {paranoid}: {opened:?}"
        );
    }
}
