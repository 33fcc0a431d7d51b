//! An env over a fresh `MemEnv` that counts the reads of table files (`.ldb`), for tests about
//! how many blocks an operation reads.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use strata::testing::{EnvOp, HookEnv};
use strata::MemEnv;

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
