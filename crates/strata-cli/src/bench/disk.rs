//! What a run costs on disk, measured from outside the engine and the same way for every one.
//!
//! Each engine runs in a process of its own (see `process`), so the kernel's per-process
//! counters are per engine. Around each run the harness reads:
//!
//! - **Bytes written**: `write_bytes` of the engine's process in `/proc/<pid>/io`, before the
//!   run and after the engine settled (so the compactions the run caused are in it; with
//!   `--no_settle` they land in whichever run is next). The kernel counts a page each time the
//!   process dirties it in the page cache, whatever dirtied it: `write`, `pwrite` or a store
//!   through a shared mapping (Strata's write-ahead log is one). Every file counts — logs,
//!   manifests, the info `LOG`, tables and value or blob files, even those deleted before they
//!   reached the device. The unit is the page: an append to a page already written back (after
//!   a sync) counts it again, as the device sees it. Counting `write` calls (`wchar`) would
//!   miss mapped writes; summing file sizes would miss files that came and went.
//! - **Bytes read**: `read_bytes` likewise: reads that reached the device, not the page cache.
//! - **Directory size**: the bytes allocated to the files under the engine's directory
//!   (`st_blocks`, what `du` counts) at the same moment.
//! - **Live bytes**: the keys and values the database holds, from `live`'s model of the
//!   workloads, the same for every engine.
//!
//! Write amplification is bytes written over the bytes of keys and values the run put; space
//! amplification is the directory size over the live bytes. A file system that does not
//! account written pages (tmpfs) leaves `write_bytes` at 0: the harness then reports the
//! bytes written as unknown rather than as nothing.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// A process's I/O counters from `/proc/<pid>/io`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoCounters {
    /// Bytes of pages the process dirtied (`write_bytes`).
    pub written: u64,
    /// Bytes the process caused to be read from the device (`read_bytes`).
    pub read: u64,
}

impl IoCounters {
    /// The counters of process `pid`; `None` where the kernel does not offer them.
    pub fn of(pid: u32) -> Option<IoCounters> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/io")).ok()?;
        IoCounters::parse(&text)
    }

    fn parse(text: &str) -> Option<IoCounters> {
        let field = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
                .and_then(|v| v.trim().parse::<u64>().ok())
        };
        Some(IoCounters {
            written: field("write_bytes")?,
            read: field("read_bytes")?,
        })
    }
}

/// What one run cost on disk (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskUse {
    /// Bytes the engine's process wrote; `None` when not accounted.
    pub written: Option<u64>,
    /// Bytes the engine's process read from the device; `None` when not accounted.
    pub read: Option<u64>,
    /// Bytes allocated to the database directory after the run.
    pub dir_bytes: u64,
    /// Bytes of live keys and values; `None` when not known.
    pub live_bytes: Option<u64>,
}

impl DiskUse {
    /// The difference of the counters `before` and `after` a run, with the directory's size
    /// and the live bytes after it.
    pub fn between(
        before: Option<IoCounters>,
        after: Option<IoCounters>,
        dir: &Path,
        live_bytes: Option<u64>,
    ) -> DiskUse {
        let (written, read) = match (before, after) {
            (Some(b), Some(a)) => (
                Some(a.written.saturating_sub(b.written)).filter(|&w| w > 0),
                Some(a.read.saturating_sub(b.read)),
            ),
            _ => (None, None),
        };
        DiskUse {
            written,
            read,
            dir_bytes: dir_bytes(dir),
            live_bytes,
        }
    }
}

/// Bytes allocated to the files under `dir`, recursively; files that vanish while it walks
/// (an engine deleting a table) count as nothing.
pub fn dir_bytes(dir: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|entry| match entry.metadata() {
            Ok(m) if m.is_dir() => dir_bytes(&entry.path()),
            Ok(m) => m.blocks() * 512,
            Err(_) => 0,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_kernels_io_file() {
        let text = "rchar: 6976\nwchar: 10\nsyscr: 10\nsyscw: 1\nread_bytes: 4096\n\
                    write_bytes: 8192\ncancelled_write_bytes: 0\n";
        assert_eq!(
            IoCounters::parse(text),
            Some(IoCounters {
                written: 8192,
                read: 4096
            })
        );
        assert_eq!(IoCounters::parse("rchar: 1\n"), None);
    }

    #[test]
    fn own_counters_are_readable_on_linux() {
        assert!(IoCounters::of(std::process::id()).is_some());
    }

    #[test]
    fn directory_size_counts_allocated_blocks_of_nested_files() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        assert_eq!(dir_bytes(dir.path()), 0);
        std::fs::write(dir.path().join("a"), vec![1u8; 10_000]).unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir(dir.path().join("sub")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(dir.path().join("sub/b"), vec![1u8; 5_000])
            .unwrap_or_else(|e| panic!("{e}"));
        let size = dir_bytes(dir.path());
        assert!(
            (15_000..=15_000 + 3 * 4096 + 4096).contains(&size),
            "{size}"
        );
        assert_eq!(dir_bytes(&dir.path().join("missing")), 0);
    }

    #[test]
    fn no_pages_written_reads_as_unknown_not_as_zero() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let c = |written, read| Some(IoCounters { written, read });
        let same = DiskUse::between(c(100, 5), c(100, 9), dir.path(), Some(7));
        assert_eq!(
            (same.written, same.read, same.live_bytes),
            (None, Some(4), Some(7))
        );
        let grew = DiskUse::between(c(100, 5), c(4196, 5), dir.path(), None);
        assert_eq!(grew.written, Some(4096));
        let absent = DiskUse::between(None, c(1, 1), dir.path(), None);
        assert_eq!((absent.written, absent.read), (None, None));
    }
}
