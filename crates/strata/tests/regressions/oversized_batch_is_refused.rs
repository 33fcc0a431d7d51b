//! A batch given a key or value of 4 GiB or more cannot be encoded (the update is dropped and
//! the batch marked). Writing it must fail up front with `InvalidArgument`: it used to be
//! logged without the dropped update, fail at the memtable, and turn into a background error
//! that refused every later write, while the rest of the batch came back after reopen.

use std::sync::Arc;

use strata::{Error, MemEnv, WriteBatch, DB};

use crate::support::options;

#[test]
fn oversized_batch_fails_alone_and_leaves_nothing() {
    let env = Arc::new(MemEnv::new());
    let options = options(&env);
    let db = DB::open("/db", options.clone()).unwrap();
    // Zero pages are not touched: this costs address space, not memory.
    let huge = vec![0u8; u32::MAX as usize + 1];
    let mut batch = WriteBatch::new();
    batch.put(b"small", b"1");
    batch.put(b"big", &huge);
    drop(huge);
    let err = db.write(&batch).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    assert_eq!(db.get(b"small").unwrap(), None);
    db.put(b"after", b"2").unwrap();
    drop(db);
    let db = DB::open("/db", options).unwrap();
    assert_eq!(db.get(b"small").unwrap(), None);
    assert_eq!(db.get(b"after").unwrap(), Some(b"2".to_vec()));
}
