//! Timing of one run: per-thread counters while it runs, merged into a [`RunResult`] after.
//!
//! Figures are db_bench's: **µs/op** is the threads' summed busy time divided by the total
//! operations (so it is per-thread latency, not wall time / ops), **MB/s** is the bytes of keys
//! and values moved divided by the wall time from the first thread's start to the last one's
//! finish. Workloads that move no bytes by db_bench's accounting (point reads, seeks,
//! deletes) report no MB/s. Apart from that, every put counts its key and value as **bytes
//! written by the user**, the denominator of write amplification (see `disk`).
//!
//! The per-op cost of the bookkeeping is an increment and a compare; `--histogram` adds a clock
//! read per op, and the latency trace (kept for `fillseq` and `fillrandom`) one per 1000 ops.

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::disk::DiskUse;
use super::progress::Progress;

/// Operations per point of the latency trace (the seed blog's batches of 1000 writes).
pub const TRACE_BATCH: u64 = 1000;
/// Operations between progress bar updates.
const PROGRESS_EVERY: u64 = 1024;

/// Counters of one worker thread.
pub struct ThreadStats {
    start: Instant,
    finish: Option<Instant>,
    last_op: Instant,
    done: u64,
    bytes: u64,
    written: u64,
    found: u64,
    hist: Option<Histogram<u64>>,
    trace: Option<Trace>,
    progress: Progress,
    unreported: u64,
}

/// Average latency per batch of [`TRACE_BATCH`] ops, in µs: one `f64` per batch, so ten
/// million ops cost 80 KB.
struct Trace {
    batch_start: Instant,
    in_batch: u64,
    points: Vec<f64>,
}

/// A latency histogram in nanoseconds, from 1 ns to one hour, 3 significant digits.
pub fn new_histogram() -> Histogram<u64> {
    match Histogram::new_with_bounds(1, 3_600_000_000_000, 3) {
        Ok(h) => h,
        Err(e) => panic!("constant histogram bounds rejected: {e}"),
    }
}

impl ThreadStats {
    /// Starts the clock. `histogram` records every op's latency; `trace` keeps the per-batch
    /// latency trace.
    pub fn start(histogram: bool, trace: bool, progress: Progress) -> Self {
        let now = Instant::now();
        ThreadStats {
            start: now,
            finish: None,
            last_op: now,
            done: 0,
            bytes: 0,
            written: 0,
            found: 0,
            hist: histogram.then(new_histogram),
            trace: trace.then(|| Trace {
                batch_start: now,
                in_batch: 0,
                points: Vec::new(),
            }),
            progress,
            unreported: 0,
        }
    }

    /// Counts one finished operation that moved `bytes` bytes.
    #[inline]
    pub fn op(&mut self, bytes: usize) {
        self.done += 1;
        self.bytes += bytes as u64;
        if self.hist.is_some() || self.trace.is_some() {
            self.time_op();
        }
        self.unreported += 1;
        if self.unreported == PROGRESS_EVERY {
            self.progress.inc(PROGRESS_EVERY);
            self.unreported = 0;
        }
    }

    /// Counts `bytes` of keys and values the user wrote (a put), whatever the op counts for
    /// throughput.
    #[inline]
    pub fn wrote(&mut self, bytes: usize) {
        self.written += bytes as u64;
    }

    /// Counts a read that found its key.
    #[inline]
    pub fn found(&mut self) {
        self.found += 1;
    }

    fn time_op(&mut self) {
        if let Some(hist) = &mut self.hist {
            let now = Instant::now();
            let nanos = now.duration_since(self.last_op).as_nanos();
            hist.saturating_record(u64::try_from(nanos).unwrap_or(u64::MAX).max(1));
            self.last_op = now;
        }
        if let Some(trace) = &mut self.trace {
            trace.in_batch += 1;
            if trace.in_batch == TRACE_BATCH {
                let now = Instant::now();
                let batch = now.duration_since(trace.batch_start);
                trace
                    .points
                    .push(batch.as_secs_f64() * 1e6 / TRACE_BATCH as f64);
                trace.batch_start = now;
                trace.in_batch = 0;
            }
        }
    }

    /// Stops the clock.
    pub fn finish(&mut self) {
        self.finish = Some(Instant::now());
        self.progress.inc(self.unreported);
        self.unreported = 0;
    }

    fn elapsed(&self) -> Duration {
        self.finish
            .unwrap_or_else(Instant::now)
            .duration_since(self.start)
    }
}

/// Latency percentiles of one run, in µs, from a histogram of every op.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    pub mean_us: f64,
    pub p50_us: f64,
    pub p75_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
    /// Ops recorded.
    pub count: u64,
}

impl Latency {
    /// The summary of a nanosecond histogram; `None` when it is empty.
    pub fn of(h: &Histogram<u64>) -> Option<Latency> {
        let us = |q: f64| h.value_at_quantile(q) as f64 / 1000.0;
        (!h.is_empty()).then(|| Latency {
            mean_us: h.mean() / 1000.0,
            p50_us: us(0.50),
            p75_us: us(0.75),
            p99_us: us(0.99),
            p999_us: us(0.999),
            max_us: h.max() as f64 / 1000.0,
            count: h.len(),
        })
    }
}

/// The merged outcome of one workload on one engine. Made in the engine's process and sent
/// to the harness as JSON, which adds `disk`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResult {
    /// Operations done by all threads.
    pub ops: u64,
    /// db_bench's µs/op (see the module doc).
    pub micros_per_op: f64,
    /// db_bench's MB/s, `None` when the workload moves no bytes by its accounting.
    pub mb_per_s: Option<f64>,
    /// Wall time of the run in seconds.
    pub seconds: f64,
    /// Reads that found their key, for workloads that look keys up.
    pub found: Option<u64>,
    /// Bytes of keys and values written by puts (see the module doc).
    pub user_bytes_written: u64,
    /// Percentiles of every op's latency (with `--histogram`, and always for `leveledmix`).
    pub latency: Option<Latency>,
    /// Per-batch latency trace of thread 0 (µs per op), when kept.
    pub trace: Option<Vec<f64>>,
    /// What the run cost on disk, measured by the harness from outside the engine's process.
    #[serde(default)]
    pub disk: Option<DiskUse>,
}

/// How even a latency trace is: seed 000's stall test asks that no batch take more than
/// [`STALL_FACTOR`] times the median batch.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TraceSummary {
    /// Median and slowest batch, in µs per op.
    pub median_us: f64,
    pub max_us: f64,
    /// Batches slower than [`STALL_FACTOR`] × the median, of `batches`.
    pub stalls: usize,
    pub batches: usize,
}

/// A batch slower than this many times the median counts as a stall.
pub const STALL_FACTOR: f64 = 10.0;

impl TraceSummary {
    /// The summary of `trace`; `None` when it is empty.
    pub fn of(trace: &[f64]) -> Option<TraceSummary> {
        let median_us = median(trace);
        let max_us = trace.iter().copied().reduce(f64::max)?;
        Some(TraceSummary {
            median_us,
            max_us,
            stalls: trace
                .iter()
                .filter(|&&us| us > STALL_FACTOR * median_us)
                .count(),
            batches: trace.len(),
        })
    }
}

impl RunResult {
    /// Bytes the engine wrote to disk per byte the user wrote (see `disk`); `None` when the
    /// run wrote nothing or the file system does not account written pages.
    pub fn write_amplification(&self) -> Option<f64> {
        let written = self.disk.as_ref()?.written?;
        (self.user_bytes_written > 0).then(|| written as f64 / self.user_bytes_written as f64)
    }

    /// Size of the database directory per byte of live keys and values; `None` when the
    /// live bytes are not known (see `live`).
    pub fn space_amplification(&self) -> Option<f64> {
        let disk = self.disk.as_ref()?;
        let live = disk.live_bytes.filter(|&b| b > 0)?;
        Some(disk.dir_bytes as f64 / live as f64)
    }

    /// Summary of the latency trace, when one was kept.
    pub fn trace_summary(&self) -> Option<TraceSummary> {
        self.trace.as_deref().and_then(TraceSummary::of)
    }

    /// Merges the threads' counters. `reports_found` says whether `found` means anything.
    pub fn merge(threads: Vec<ThreadStats>, reports_found: bool) -> RunResult {
        let mut ops = 0;
        let mut bytes = 0;
        let mut written = 0;
        let mut found = 0;
        let mut busy = 0.0;
        let mut histogram: Option<Histogram<u64>> = None;
        let mut trace = None;
        let mut first_start: Option<Instant> = None;
        let mut last_finish: Option<Instant> = None;
        for t in threads {
            ops += t.done;
            bytes += t.bytes;
            written += t.written;
            found += t.found;
            busy += t.elapsed().as_secs_f64();
            let finish = t.finish.unwrap_or_else(Instant::now);
            first_start = Some(first_start.map_or(t.start, |s| s.min(t.start)));
            last_finish = Some(last_finish.map_or(finish, |f| f.max(finish)));
            if let Some(h) = t.hist {
                match &mut histogram {
                    Some(all) => {
                        // Same bounds everywhere, so adding cannot fail.
                        let _ = all.add(&h);
                    }
                    None => histogram = Some(h),
                }
            }
            if trace.is_none() {
                trace = t.trace.map(|t| t.points);
            }
        }
        let seconds = match (first_start, last_finish) {
            (Some(s), Some(f)) => f.duration_since(s).as_secs_f64(),
            _ => 0.0,
        };
        let micros_per_op = if ops == 0 {
            0.0
        } else {
            busy * 1e6 / ops as f64
        };
        let mb_per_s = (bytes > 0 && seconds > 0.0).then(|| bytes as f64 / 1048576.0 / seconds);
        RunResult {
            ops,
            micros_per_op,
            mb_per_s,
            seconds,
            found: reports_found.then_some(found),
            user_bytes_written: written,
            latency: histogram.as_ref().and_then(Latency::of),
            trace,
            disk: None,
        }
    }
}

/// A run of `micros_per_op` with nothing else measured, for tests of what is made of runs.
#[cfg(test)]
pub fn sample_run(micros_per_op: f64) -> RunResult {
    RunResult {
        ops: 100,
        micros_per_op,
        mb_per_s: None,
        seconds: 1.0,
        found: None,
        user_bytes_written: 0,
        latency: None,
        trace: None,
        disk: None,
    }
}

/// Median of `values` (the mean of the middle two for an even count); 0 for none.
pub fn median(values: &[f64]) -> f64 {
    let mut sorted: Vec<f64> = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    match n {
        0 => 0.0,
        _ if n % 2 == 1 => sorted[n / 2],
        _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// Smallest and largest of `values`; `(0, 0)` for none.
pub fn spread(values: &[f64]) -> (f64, f64) {
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if values.is_empty() {
        (0.0, 0.0)
    } else {
        (min, max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
        assert_eq!(spread(&[3.0, 1.0, 2.0]), (1.0, 3.0));
        assert_eq!(spread(&[]), (0.0, 0.0));
    }

    #[test]
    fn trace_summary_counts_batches_over_ten_times_the_median() {
        let trace = [1.0, 1.0, 2.0, 1.0, 10.5, 30.0, 1.0];
        let s = TraceSummary::of(&trace).unwrap();
        assert_eq!(s.median_us, 1.0);
        assert_eq!(s.max_us, 30.0);
        assert_eq!((s.stalls, s.batches), (2, 7));
        assert_eq!(TraceSummary::of(&[]), None);
    }

    #[test]
    fn merge_sums_ops_and_bytes_and_keeps_first_trace() {
        let mut a = ThreadStats::start(true, true, Progress::hidden());
        let mut b = ThreadStats::start(true, false, Progress::hidden());
        for _ in 0..2500 {
            a.op(116);
            a.wrote(116);
        }
        for _ in 0..500 {
            b.op(0);
            b.found();
        }
        a.finish();
        b.finish();
        let r = RunResult::merge(vec![a, b], true);
        assert_eq!(r.ops, 3000);
        assert_eq!(r.found, Some(500));
        // Two full batches of 1000 in thread a's trace; the partial third is dropped.
        assert_eq!(r.trace.as_ref().map(Vec::len), Some(2));
        assert_eq!(r.latency.map(|l| l.count), Some(3000));
        assert_eq!(r.user_bytes_written, 2500 * 116);
        assert!(r.mb_per_s.is_some_and(|m| m > 0.0));
        assert!(r.micros_per_op >= 0.0);
    }

    #[test]
    fn no_bytes_means_no_throughput() {
        let mut a = ThreadStats::start(false, false, Progress::hidden());
        a.op(0);
        a.finish();
        let r = RunResult::merge(vec![a], false);
        assert_eq!(r.mb_per_s, None);
        assert_eq!(r.found, None);
        assert!(r.latency.is_none() && r.trace.is_none());
        assert_eq!(r.user_bytes_written, 0);
        assert_eq!(r.write_amplification(), None);
    }

    #[test]
    fn latency_percentiles_come_from_the_histogram() {
        let mut h = new_histogram();
        for micros in 1..=1000u64 {
            h.saturating_record(micros * 1000);
        }
        let l = Latency::of(&h).unwrap_or_else(|| panic!("empty"));
        assert_eq!(l.count, 1000);
        assert!((l.p50_us - 500.0).abs() < 1.0, "{l:?}");
        assert!((l.p99_us - 990.0).abs() < 1.0, "{l:?}");
        assert!((l.p999_us - 999.0).abs() < 1.0, "{l:?}");
        assert!(l.p50_us <= l.p75_us && l.p99_us <= l.p999_us && l.p999_us <= l.max_us);
        assert_eq!(Latency::of(&new_histogram()), None);
    }

    #[test]
    fn amplifications_divide_disk_bytes_by_user_and_live_bytes() {
        let mut a = ThreadStats::start(false, false, Progress::hidden());
        a.op(100);
        a.wrote(100);
        a.finish();
        let mut r = RunResult::merge(vec![a], false);
        assert_eq!(r.space_amplification(), None);
        r.disk = Some(DiskUse {
            written: Some(250),
            read: Some(0),
            dir_bytes: 300,
            live_bytes: Some(200),
        });
        assert_eq!(r.write_amplification(), Some(2.5));
        assert_eq!(r.space_amplification(), Some(1.5));
        r.disk = Some(DiskUse {
            written: None,
            read: None,
            dir_bytes: 300,
            live_bytes: None,
        });
        assert_eq!(
            (r.write_amplification(), r.space_amplification()),
            (None, None)
        );
    }
}
