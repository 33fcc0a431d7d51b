//! Internals exposed to fuzz targets, benches and interop tests (feature `testing`); not part of
//! the stable API. By subject:
//! - log files as lists of records ([`read_log_file`], [`write_log_file`], ...);
//! - version edits in plain fields ([`EditFields`], [`encode_version_edit`], ...);
//! - a write batch's encoded form and header sequence ([`write_batch_contents`], ...);
//! - whole tables ([`build_table`], [`TableFile`], ...) and their parts one at a time: blocks,
//!   the footer, filter blocks ([`decode_block`], [`decode_footer`], ...);
//! - envs for reliability tests: [`FaultEnv`] (error injection and power loss) and [`HookEnv`]
//!   (a hook before every operation, to fail, delay or hold it);
//! - the bodies of the fuzz targets ([`fuzz`]).

mod blocks;
pub mod fuzz;
mod hook_env;
mod log_records;
mod tables;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod value_writeback_tests;
mod version_edits;
mod write_batches;

pub use self::blocks::{
    build_block, decode_block, decode_footer, filter_block_may_match, read_block_at, BlockSpan,
    TableFooter,
};
pub use self::hook_env::{EnvCall, EnvOp, HookEnv};
pub use self::log_records::{
    read_log_file, read_log_records, write_log_file, write_log_records, LogRecords,
};
pub use self::tables::{
    build_table, internal_key, read_table_entries, table_get, TableEntry, TableFile, TableGet,
    MAX_SEQUENCE,
};
pub use self::version_edits::{
    decode_version_edit, encode_version_edit, version_edit_fields, EditFields, EditNewFile,
};
pub use self::write_batches::{
    write_batch_contents, write_batch_from_contents, write_batch_sequence, write_batch_set_sequence,
};
pub use crate::env::fault::{
    CrashPoint, FaultEnv, InjectedError, InjectedFault, OpKind, PowerLossMode,
};
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub use crate::env::posix::mapped_log::crash_points::{
    mapped_log_writes_stopped, refuse_mapped_log_reservation, refuse_reserving_ahead,
    stop_mapped_log_writes_after,
};

use crate::error::Result;
use crate::iter::InternalIterator;

/// Every key and value `it` yields from its first entry on, and its status after the last.
fn forward_entries(it: &mut impl InternalIterator) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let mut out = Vec::new();
    it.seek_to_first();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    it.status()?;
    Ok(out)
}
