//! Write batches replayed from a log are disk data: whatever they hold, recovery must not
//! panic, must apply a batch whole or not at all, and must not accept sequence numbers the
//! internal-key format cannot hold (56 bits) or that overflow.

use std::path::Path;
use std::sync::Arc;

use strata::testing::{
    write_batch_contents, write_batch_from_contents, write_batch_set_sequence, write_log_file,
    EditFields, MAX_SEQUENCE,
};
use strata::{Env, Error, MemEnv, Options, WriteBatch, DB};

use crate::support::files::write_manifest;

fn options(env: &Arc<MemEnv>, paranoid: bool) -> Options {
    Options {
        paranoid_checks: paranoid,
        ..crate::support::options(env)
    }
}

/// A database holding `a -> 1` (sequence 1), closed, plus log 100 holding `records`.
fn database_with_log(records: &[Vec<u8>]) -> Arc<MemEnv> {
    let env = Arc::new(MemEnv::new());
    let db = DB::open("/db", options(&env, false)).unwrap();
    db.put(b"a", b"1").unwrap();
    drop(db);
    let records: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
    write_log_file(&*env, Path::new("/db/000100.log"), &records).unwrap();
    env
}

fn batch_at(sequence: u64, ops: &[(&[u8], &[u8])]) -> Vec<u8> {
    let mut batch = WriteBatch::new();
    for (k, v) in ops {
        batch.put(k, v);
    }
    write_batch_set_sequence(&mut batch, sequence);
    write_batch_contents(&batch).to_vec()
}

#[test]
fn a_batch_that_fails_to_decode_part_way_is_not_applied_at_all() {
    // Checksummed, but its second record has an unknown tag: count says 2.
    let mut bytes = batch_at(2, &[(b"b", b"2")]);
    bytes.push(7);
    bytes[8] = 2;
    assert!(write_batch_from_contents(bytes.clone()).is_ok());
    let env = database_with_log(&[bytes, batch_at(3, &[(b"c", b"3")])]);

    let err = DB::open("/db", options(&env, true)).unwrap_err();
    assert!(matches!(err, Error::Corruption(_)), "{err}");

    let db = DB::open("/db", options(&env, false)).unwrap();
    assert_eq!(db.get(b"a").unwrap(), Some(b"1".to_vec()));
    assert_eq!(db.get(b"b").unwrap(), None, "half a batch was applied");
    assert_eq!(db.get(b"c").unwrap(), Some(b"3".to_vec()));
    // New writes must not share a sequence number with anything replayed.
    db.put(b"d", b"4").unwrap();
    assert_eq!(db.get(b"b").unwrap(), None);
    drop(db);
    let db = DB::open("/db", options(&env, false)).unwrap();
    assert_eq!(db.get(b"b").unwrap(), None);
    assert_eq!(db.get(b"d").unwrap(), Some(b"4".to_vec()));
}

#[test]
fn sequence_numbers_past_56_bits_in_a_log_are_corruption() {
    for sequence in [MAX_SEQUENCE, u64::MAX - 1, u64::MAX] {
        // Two updates: the second would need a sequence past the limit.
        let env = database_with_log(&[batch_at(sequence, &[(b"x", b"1"), (b"y", b"2")])]);
        let err = DB::open("/db", options(&env, true)).unwrap_err();
        assert!(matches!(err, Error::Corruption(_)), "{sequence}: {err}");
        let db = DB::open("/db", options(&env, false)).unwrap();
        assert_eq!(db.get(b"a").unwrap(), Some(b"1".to_vec()));
        assert_eq!(db.get(b"x").unwrap(), None);
        db.put(b"z", b"3").unwrap();
        assert_eq!(db.get(b"z").unwrap(), Some(b"3".to_vec()));
    }
}

/// A database whose only manifest says `last_sequence`.
fn database_with_last_sequence(last_sequence: u64) -> Arc<MemEnv> {
    let env = Arc::new(MemEnv::new());
    env.create_dir(Path::new("/db")).unwrap();
    let edit = EditFields {
        comparator: Some("leveldb.BytewiseComparator".into()),
        log_number: Some(0),
        next_file_number: Some(10),
        last_sequence: Some(last_sequence),
        ..EditFields::default()
    };
    write_manifest(&*env, Path::new("/db"), 5, &[edit]);
    env
}

#[test]
fn last_sequence_past_56_bits_in_the_manifest_is_corruption() {
    for last in [MAX_SEQUENCE + 1, u64::MAX] {
        let env = database_with_last_sequence(last);
        let err = DB::open("/db", options(&env, false)).unwrap_err();
        assert!(matches!(err, Error::Corruption(_)), "{last}: {err}");
    }
}

#[test]
fn writes_past_the_last_sequence_number_are_refused() {
    let env = database_with_last_sequence(MAX_SEQUENCE - 1);
    let db = DB::open("/db", options(&env, false)).unwrap();
    db.put(b"last", b"fits").unwrap();
    assert!(db.put(b"one", b"too many").is_err());
    let mut two = WriteBatch::new();
    two.put(b"p", b"1");
    two.put(b"q", b"2");
    assert!(db.write(&two).is_err());
    assert_eq!(db.get(b"last").unwrap(), Some(b"fits".to_vec()));
    assert_eq!(db.get(b"one").unwrap(), None);
    drop(db);
    let db = DB::open("/db", options(&env, false)).unwrap();
    assert_eq!(db.get(b"last").unwrap(), Some(b"fits".to_vec()));
    assert_eq!(db.get(b"one").unwrap(), None);
}
