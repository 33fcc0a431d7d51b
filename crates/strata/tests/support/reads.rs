//! An env over a fresh `MemEnv` that counts the reads of table files (`.ldb`), for tests about
//! how many blocks an operation reads, a database with range deletes filled over it, and a
//! whole scan.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use strata::testing::{EnvOp, HookEnv};
use strata::{CompressionType, MemEnv, Options, ReadOptions, DB};

/// The env, and the count of table-file reads made through it so far.
pub fn table_read_counter() -> (HookEnv, Arc<AtomicUsize>) {
    let reads = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&reads);
    let env = HookEnv::new(Arc::new(MemEnv::new()), move |call| {
        if call.op == EnvOp::ReadAt && call.path.extension().is_some_and(|e| e == "ldb") {
            counter.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    });
    (env, reads)
}

/// The key of entry `i` in [`range_deletes_db`]'s database.
pub fn numbered_key(i: u32) -> Vec<u8> {
    format!("k{i:06}").into_bytes()
}

/// A database with range deletes at `dir` over [`table_read_counter`]'s env (uncompressed 4 KiB
/// blocks), holding `keys` keys ([`numbered_key`]) of 100-byte values compacted below level 0;
/// its options, to reopen it; and the count of table reads.
pub fn range_deletes_db(dir: &str, keys: u32) -> (DB, Options, Arc<AtomicUsize>) {
    let (env, reads) = table_read_counter();
    let options = Options {
        range_deletes: true,
        block_size: 4096,
        compression: CompressionType::None,
        ..super::options(&env)
    };
    let db = DB::open(dir, options.clone()).unwrap();
    for i in 0..keys {
        db.put(&numbered_key(i), &[b'v'; 100]).unwrap();
    }
    db.compact_range(None, None).unwrap();
    (db, options, reads)
}

/// Every entry of `db`, in order, through an iterator; the error it met, if any.
pub fn scan(db: &DB) -> strata::Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let mut it = db.iter_opt(&ReadOptions::default());
    it.seek_to_first();
    let mut all = Vec::new();
    while it.valid() {
        all.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    it.status()?;
    Ok(all)
}
