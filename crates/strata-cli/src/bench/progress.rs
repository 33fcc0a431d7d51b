//! A progress bar on stderr for runs that take more than a couple of seconds.
//!
//! Quiet unless stderr is a terminal: piped or captured runs (CI, `make bench | tee`) get the
//! results and nothing else. A bar starts hidden and a watcher thread shows it only if the run
//! is still going after [`SHOW_AFTER`], so short runs never flicker. Workers report every 1024
//! ops (see `stats`), which keeps the bar's cost out of the per-op path.

use std::io::IsTerminal;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long a run must last before its bar appears.
const SHOW_AFTER: Duration = Duration::from_secs(2);

/// A cheap, cloneable handle the workers advance.
#[derive(Clone, Debug, Default)]
pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A handle that shows nothing.
    pub fn hidden() -> Self {
        Progress { bar: None }
    }

    /// Advances the bar by `n` operations.
    pub fn inc(&self, n: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(n);
        }
    }
}

/// The bar of one run, shown after [`SHOW_AFTER`] if stderr is a terminal; cleared by
/// [`ProgressRun::finish`].
pub struct ProgressRun {
    bar: Option<ProgressBar>,
    stop: Option<mpsc::Sender<()>>,
    watcher: Option<JoinHandle<()>>,
}

impl ProgressRun {
    /// Starts a run of `len` operations (`None`: unknown, a spinner) labelled `message`.
    /// `enabled = false` or a non-terminal stderr gives a run that shows nothing.
    pub fn start(enabled: bool, len: Option<u64>, message: String) -> ProgressRun {
        if !enabled || !std::io::stderr().is_terminal() {
            return ProgressRun {
                bar: None,
                stop: None,
                watcher: None,
            };
        }
        let style = match len {
            Some(_) => ProgressStyle::with_template("{msg:24} [{wide_bar}] {percent:>3}% {eta:>4}"),
            None => ProgressStyle::with_template("{msg:24} {spinner} {elapsed}"),
        };
        let bar =
            ProgressBar::with_draw_target(len, ProgressDrawTarget::hidden()).with_message(message);
        if let Ok(style) = style {
            bar.set_style(style.progress_chars("=> "));
        }
        let (stop, stopped) = mpsc::channel::<()>();
        let shown = bar.clone();
        let watcher = std::thread::spawn(move || {
            if let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(SHOW_AFTER) {
                shown.set_draw_target(ProgressDrawTarget::stderr());
                shown.enable_steady_tick(Duration::from_millis(250));
            }
        });
        ProgressRun {
            bar: Some(bar),
            stop: Some(stop),
            watcher: Some(watcher),
        }
    }

    /// The handle workers advance.
    pub fn handle(&self) -> Progress {
        Progress {
            bar: self.bar.clone(),
        }
    }

    /// Removes the bar (if it was shown) so results print on clean lines.
    pub fn finish(mut self) {
        // Dropping the sender wakes the watcher before its timeout.
        drop(self.stop.take());
        if let Some(watcher) = self.watcher.take() {
            let _ = watcher.join();
        }
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disabled_run_shows_nothing_and_finishes() {
        let run = ProgressRun::start(false, Some(10), "x".into());
        run.handle().inc(5);
        assert!(run.handle().bar.is_none());
        run.finish();
        Progress::hidden().inc(1);
    }
}
