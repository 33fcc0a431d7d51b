//! What the interop tests share: the model a database's contents are compared with, and a scan
//! of a Strata database into one.

use std::collections::BTreeMap;

use strata::{ReadOptions, DB};

/// A database's contents: every key with its value, in key order.
pub type Model = BTreeMap<Vec<u8>, Vec<u8>>;

/// Every entry `db` holds as `options` read it (the iterator's error fails the test).
pub fn scan(db: &DB, options: &ReadOptions) -> Model {
    let mut it = db.iter_opt(options);
    it.seek_to_first();
    let mut out = Model::new();
    while it.valid() {
        out.insert(it.key().to_vec(), it.value().to_vec());
        it.next();
    }
    it.status().expect("strata iterator");
    out
}
