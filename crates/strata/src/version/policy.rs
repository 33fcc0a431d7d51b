//! Compaction policy: when a level needs compaction and how urgently, and the level-0 file
//! counts at which writes slow down and stop. LevelDB 1.23's constants, so the two engines
//! shape their trees alike.
//!
//! A version's score (set by [`set_compaction_score`] whenever one is built) is, per level, its
//! size over its budget: files over [`L0_COMPACTION_TRIGGER`] for level 0 (counted in files: with
//! small write buffers many small level-0 files would otherwise pile up, and every read merges
//! all of them), bytes over [`max_bytes_for_level`] below. A score of 1 or more asks for a
//! compaction of the level with the highest score.

use super::version::{total_file_size, Version};
use super::NUM_LEVELS;

/// Level-0 file count that triggers a compaction.
pub(crate) const L0_COMPACTION_TRIGGER: usize = 4;
/// Level-0 file count from which writes are slowed down (`db/write_pace.rs`).
pub(crate) const L0_SLOWDOWN_WRITES_TRIGGER: usize = 8;
/// Level-0 file count from which a full memtable makes writes wait for a compaction (below
/// it, they wait only for the memtable's flush).
pub(crate) const L0_STOP_WRITES_TRIGGER: usize = 12;
/// Deepest level a flushed memtable may be placed in when it overlaps nothing.
pub(crate) const MAX_MEM_COMPACT_LEVEL: usize = 2;
/// Byte budget of a level (>= 1): 10 MiB at level 1, ten times more per level below.
pub(crate) fn max_bytes_for_level(level: usize) -> f64 {
    let mut result = 10.0 * 1048576.0;
    for _ in 1..level {
        result *= 10.0;
    }
    result
}

/// Computes which level most needs compaction, and how much.
pub(crate) fn set_compaction_score(version: &mut Version) {
    let mut best_level = 0;
    let mut best_score = -1.0;
    for level in 0..NUM_LEVELS - 1 {
        let score = if level == 0 {
            version.files[0].len() as f64 / L0_COMPACTION_TRIGGER as f64
        } else {
            total_file_size(&version.files[level]) as f64 / max_bytes_for_level(level)
        };
        if score > best_score {
            best_level = level;
            best_score = score;
        }
    }
    version.compaction_level = best_level;
    version.compaction_score = best_score;
}
