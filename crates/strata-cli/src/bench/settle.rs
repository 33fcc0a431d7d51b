//! Waiting, untimed, for an engine's background work to finish.
//!
//! Engines run interleaved: workload A on Strata, then on LevelDB, then on RocksDB. Without a
//! pause, the compactions Strata still owes after A would run on the second core while LevelDB
//! is being timed, and every engine would be measured against the others' debt. So after each
//! run the harness waits until the engine's directory has stopped changing (no file created,
//! deleted, grown or rewritten) for [`QUIET`]: flushes and compactions write steadily, and an
//! engine with pending work schedules it at once, so a quiet directory is an idle engine. The
//! test is the same for every engine and needs nothing from their APIs.
//!
//! This differs from db_bench, where workload B on the same database pays for compactions
//! A left behind; `--no_settle` restores that (meaningful with one engine).

use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

/// How long the directory must stay unchanged.
const QUIET: Duration = Duration::from_millis(500);
/// Polling interval.
const POLL: Duration = Duration::from_millis(50);

/// One observation of a directory: each file's name, length and modification time.
type Listing = Vec<(std::ffi::OsString, u64, Option<SystemTime>)>;

fn listing(dir: &Path) -> Listing {
    let mut files: Listing = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .flatten()
            .map(|e| {
                let meta = e.metadata().ok();
                let len = meta.as_ref().map_or(0, |m| m.len());
                let modified = meta.and_then(|m| m.modified().ok());
                (e.file_name(), len, modified)
            })
            .collect(),
        Err(_) => Vec::new(),
    };
    files.sort();
    files
}

/// Waits until `dir` has been unchanged for [`QUIET`], or `limit` has passed. Returns how long
/// it waited and whether it gave up.
pub fn wait_idle(dir: &Path, limit: Duration) -> (Duration, bool) {
    let start = Instant::now();
    let mut last = listing(dir);
    let mut quiet_since = Instant::now();
    loop {
        if quiet_since.elapsed() >= QUIET {
            return (start.elapsed(), false);
        }
        if start.elapsed() >= limit {
            return (start.elapsed(), true);
        }
        std::thread::sleep(POLL);
        let now = listing(dir);
        if now != last {
            last = now;
            quiet_since = Instant::now();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quiet_directory_settles_after_the_quiet_period() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let (waited, gave_up) = wait_idle(dir.path(), Duration::from_secs(10));
        assert!(!gave_up);
        assert!(
            waited >= QUIET && waited < Duration::from_secs(5),
            "{waited:?}"
        );
    }

    #[test]
    fn busy_directory_hits_the_limit() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let path = dir.path().to_owned();
        let writer = std::thread::spawn(move || {
            for i in 0..40 {
                let _ = std::fs::write(path.join(format!("{i}.ldb")), [0u8; 8]);
                std::thread::sleep(Duration::from_millis(30));
            }
        });
        let (_, gave_up) = wait_idle(dir.path(), Duration::from_millis(700));
        assert!(gave_up);
        let _ = writer.join();
    }
}
