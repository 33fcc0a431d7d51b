//! Introspection: named properties and approximate sizes.
//!
//! Property names are LevelDB's, so tools written for it keep working:
//! `leveldb.num-files-at-level<N>`, `leveldb.stats`, `leveldb.sstables`,
//! `leveldb.approximate-memory-usage`. Strata's own: `strata.value-files.total-bytes`,
//! `strata.value-files.live-bytes` and `strata.value-files.space-amplification` (format
//! extension `value-separation`, see `db/value_files.rs`).

use std::fmt::Write as _;
use std::sync::Arc;

use super::{value_files, DbInner, Range};
use crate::util::internal_key::{internal_key, ValueType, MAX_SEQUENCE};
use crate::version::version_set::VersionSet;
use crate::version::NUM_LEVELS;

/// The value of property `name`, or `None` when the name is unknown.
pub(crate) fn property(db: &Arc<DbInner>, name: &str) -> Option<String> {
    if let Some(what) = name.strip_prefix("strata.value-files.") {
        // A property that cannot be computed (a table that cannot be read) is unknown.
        return value_files::property(db, what)?.ok();
    }
    if name == "strata.write-stalls" {
        return Some(db.write_stalls.report());
    }
    let rest = name.strip_prefix("leveldb.")?;
    let state = db.state.lock();
    let version = state.versions.current();
    if let Some(level) = rest.strip_prefix("num-files-at-level") {
        let level: usize = level.parse().ok()?;
        return (level < NUM_LEVELS).then(|| version.num_files(level).to_string());
    }
    match rest {
        "stats" => {
            let mut out = String::new();
            let _ = writeln!(out, "                               Compactions");
            let _ = writeln!(out, "Level  Files Size(MB) Time(sec) Read(MB) Write(MB)");
            let _ = writeln!(out, "--------------------------------------------------");
            for level in 0..NUM_LEVELS {
                let files = version.num_files(level);
                let stats = &state.stats[level];
                if files > 0 || stats.micros > 0 {
                    let _ = writeln!(
                        out,
                        "{level:>3} {files:>8} {:>8.0} {:>9.0} {:>8.0} {:>9.0}",
                        version.level_bytes(level) as f64 / 1048576.0,
                        stats.micros as f64 / 1e6,
                        stats.bytes_read as f64 / 1048576.0,
                        stats.bytes_written as f64 / 1048576.0
                    );
                }
            }
            Some(out)
        }
        "sstables" => Some(version.debug_string()),
        "approximate-memory-usage" => {
            let mut total = 0;
            for mem in std::iter::once(&state.mem).chain(&state.imm) {
                total += mem.approximate_memory_usage() + mem.filter_memory();
            }
            if let Some(cache) = &db.options.block_cache {
                total += cache.total_charge();
            }
            Some(total.to_string())
        }
        _ => None,
    }
}

/// Approximate bytes of table files used by each key range.
pub(crate) fn approximate_sizes(db: &Arc<DbInner>, ranges: &[Range<'_>]) -> Vec<u64> {
    let version = Arc::clone(db.state.lock().versions.current());
    ranges
        .iter()
        .map(|range| {
            let start = internal_key(range.start, MAX_SEQUENCE, ValueType::Value);
            let limit = internal_key(range.limit, MAX_SEQUENCE, ValueType::Value);
            let start = VersionSet::approximate_offset_of(&version, &start, &db.table_cache);
            let limit = VersionSet::approximate_offset_of(&version, &limit, &db.table_cache);
            limit.saturating_sub(start)
        })
        .collect()
}
