//! An engine process's peak memory, as the process itself reads it from `/proc/self/status`.
//!
//! - **Peak RSS** is `VmHWM`, the kernel's high-water mark of the resident set: the counter
//!   `wait4` and `getrusage` return as `ru_maxrss`. The engine's process reads it once its
//!   database is closed, just before it exits, and sends it to the harness; reading it there
//!   keeps `strata-cli` free of `unsafe` (the standard library's `wait` returns no usage).
//!   It counts every resident page, the pages of mapped files included: an engine that maps
//!   its tables (LevelDB, Strata; RocksDB with `allow_mmap_reads`) counts the table pages it
//!   touched that are in the page cache, an engine that `pread`s them does not.
//! - **Peak anonymous RSS** leaves those out: the largest `RssAnon` (heap, caches, memtables)
//!   seen by a thread that samples it every [`SAMPLE_EVERY`] while the engine runs. The kernel
//!   keeps no high-water mark of it, so a spike shorter than the interval can be missed.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Interval of the anonymous-memory sampler.
pub const SAMPLE_EVERY: Duration = Duration::from_millis(100);

/// An engine process's peak memory in bytes; `None` where `/proc` does not tell.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeakMemory {
    pub rss: Option<u64>,
    pub anon_rss: Option<u64>,
}

/// A `kB` field of `/proc/self/status`, in bytes.
fn status_field(name: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    parse_kib(&text, name)
}

fn parse_kib(text: &str, name: &str) -> Option<u64> {
    let kib = proc_field(text, name)?
        .strip_suffix("kB")?
        .trim()
        .parse::<u64>()
        .ok()?;
    Some(kib * 1024)
}

/// The value of field `name` in a `/proc` text of `name: value` lines (`/proc/self/status`,
/// `/proc/self/io`), trimmed.
pub fn proc_field<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
        .map(str::trim)
}

/// Samples this process's anonymous RSS until [`Sampler::finish`].
pub struct Sampler {
    stop: Arc<AtomicBool>,
    peak: Arc<AtomicU64>,
    thread: Option<JoinHandle<()>>,
}

impl Sampler {
    /// Starts the sampling thread.
    pub fn start() -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let peak = Arc::new(AtomicU64::new(0));
        let (stopped, highest) = (stop.clone(), peak.clone());
        let thread = std::thread::spawn(move || {
            while !stopped.load(Ordering::Relaxed) {
                if let Some(anon) = status_field("RssAnon") {
                    highest.fetch_max(anon, Ordering::Relaxed);
                }
                std::thread::sleep(SAMPLE_EVERY);
            }
        });
        Sampler {
            stop,
            peak,
            thread: Some(thread),
        }
    }

    /// Stops sampling (after one last sample) and returns the peaks.
    pub fn finish(mut self) -> PeakMemory {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        if let Some(anon) = status_field("RssAnon") {
            self.peak.fetch_max(anon, Ordering::Relaxed);
        }
        let anon = self.peak.load(Ordering::Relaxed);
        PeakMemory {
            rss: status_field("VmHWM"),
            anon_rss: (anon > 0).then_some(anon),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_kib_fields() {
        let text = "Name:\tstrata\nVmHWM:\t   12345 kB\nRssAnon:\t    2048 kB\n";
        assert_eq!(parse_kib(text, "VmHWM"), Some(12345 * 1024));
        assert_eq!(parse_kib(text, "RssAnon"), Some(2048 * 1024));
        assert_eq!(parse_kib(text, "Name"), None);
        assert_eq!(parse_kib(text, "VmRSS"), None);
    }

    #[test]
    fn sampler_sees_a_large_allocation_and_the_peak_covers_it() {
        let sampler = Sampler::start();
        let block = vec![1u8; 64 << 20];
        std::thread::sleep(SAMPLE_EVERY * 3);
        let touched: u64 = block.iter().step_by(4096).map(|&b| u64::from(b)).sum();
        let peak = sampler.finish();
        drop(block);
        assert!(touched > 0);
        let (rss, anon) = (peak.rss.unwrap_or(0), peak.anon_rss.unwrap_or(0));
        assert!(anon >= 64 << 20, "{peak:?}");
        assert!(rss >= anon, "{peak:?}");
    }
}
