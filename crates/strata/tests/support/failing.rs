//! An env whose chosen operations on the files of one kind fail with an injected I/O error
//! while a switch is on: for tests of what an error the disk reports costs.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use strata::testing::{EnvOp, HookEnv};
use strata::{Env, Error, MemEnv};

/// `env`, with every operation of `ops` on a file named `*.{extension}` failing while `on`.
pub fn failing_while(
    env: &Arc<MemEnv>,
    on: &Arc<AtomicBool>,
    ops: &'static [EnvOp],
    extension: &'static str,
) -> Arc<dyn Env> {
    let on = Arc::clone(on);
    Arc::new(HookEnv::new(env.clone(), move |call| {
        let aimed = call.path.extension().is_some_and(|e| e == extension);
        if aimed && ops.contains(&call.op) && on.load(Ordering::SeqCst) {
            return Err(Error::io(
                format!("injected, {}", call.path.display()),
                io::Error::other("EIO"),
            ));
        }
        Ok(())
    }))
}
