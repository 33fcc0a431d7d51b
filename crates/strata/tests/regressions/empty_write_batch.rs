//! An empty `WriteBatch` is a valid write (LevelDB logs it and moves on): it must not panic
//! (the sequence arithmetic once computed `count - 1` on a count of 0), must not consume a
//! sequence number, and must not wedge the writer queue for the writes that follow.

use std::sync::Arc;

use strata::{MemEnv, WriteBatch, DB};

use crate::support::options;

#[test]
fn empty_batch_is_a_no_op_write() {
    let env = Arc::new(MemEnv::new());
    {
        let db = DB::open("/db", options(&env)).unwrap();
        db.put(b"a", b"1").unwrap();
        let before = db.snapshot().sequence();
        db.write(&WriteBatch::new()).unwrap();
        assert_eq!(
            db.snapshot().sequence(),
            before,
            "an empty batch uses no sequence"
        );
        db.put(b"b", b"2").unwrap();
        assert_eq!(db.snapshot().sequence(), before + 1);
        assert_eq!(db.get(b"a").unwrap(), Some(b"1".to_vec()));
        assert_eq!(db.get(b"b").unwrap(), Some(b"2".to_vec()));
    }
    let db = DB::open("/db", options(&env)).unwrap();
    assert_eq!(db.get(b"a").unwrap(), Some(b"1".to_vec()));
    assert_eq!(db.get(b"b").unwrap(), Some(b"2".to_vec()));
    let last = db.snapshot().sequence();
    assert_eq!(last, 2, "recovery must not count the empty batch either");
    db.write(&WriteBatch::new()).unwrap();
    db.put(b"c", b"3").unwrap();
    assert_eq!(db.get(b"c").unwrap(), Some(b"3".to_vec()));
}
