//! Closing retired write-ahead logs off the write path.
//!
//! A log whose writes have reached a table is closed when the next memtable switch or sync
//! write notices, on that writer's thread. By then the log may be deleted (obsolete files go
//! as soon as a flush commits), and the last close of a deleted file frees its pages, which
//! waits for any writeback of them in flight: for a log written through a memory map
//! (`env/posix/mapped_log.rs`), hundreds of milliseconds after a few megabytes of writes. So
//! such logs are handed to one closer thread, started on first use; closing the database
//! waits for it, so that no descriptor or mapping outlives the handle.
//!
//! The closer runs at the lowest priority of the normal scheduling, not under an idle policy
//! (`Env::lowest_thread_priority`, nice 19 on Linux): freeing a deleted log's blocks can be a
//! discard it waits for piece by piece, and at its own priority each completion woke it ahead
//! of the writer that had just switched logs; starved, it let retired logs pile up, each
//! holding a descriptor, a mapping and the deleted file's blocks.

use std::sync::mpsc::{channel, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::env::Env;
use crate::log::LogWriter;

/// Closes retired logs on its own thread; see the module documentation.
pub(crate) struct LogCloser {
    /// Sets the closer thread's priority.
    env: Arc<dyn Env>,
    /// Where logs are sent, and the thread closing them; `None` until first used.
    worker: Option<(Sender<LogWriter>, JoinHandle<()>)>,
}

impl LogCloser {
    pub(crate) fn new(env: Arc<dyn Env>) -> LogCloser {
        LogCloser { env, worker: None }
    }

    /// Closes `log` (without syncing: its writes are in tables) on the closer thread, or here
    /// if that thread cannot be started. Errors are ignored: nothing needs the log any more.
    pub(crate) fn close(&mut self, log: LogWriter) {
        let log = match self.sender() {
            Some(sender) => match sender.send(log) {
                Ok(()) => return,
                Err(unsent) => unsent.0,
            },
            None => log,
        };
        close_quietly(log);
    }

    /// Waits until every log handed over is closed.
    pub(crate) fn finish(&mut self) {
        if let Some((sender, thread)) = self.worker.take() {
            drop(sender);
            let _ = thread.join();
        }
    }

    fn sender(&mut self) -> Option<&Sender<LogWriter>> {
        if self.worker.is_none() {
            let (sender, receiver) = channel::<LogWriter>();
            let env = Arc::clone(&self.env);
            let thread = std::thread::Builder::new()
                .name("strata-log-closer".into())
                .spawn(move || {
                    env.lowest_thread_priority();
                    // The default time slice, not the one of the thread that starts it (the
                    // flushing thread's, say): the slice is a choice made for that thread.
                    env.set_thread_time_slice(Duration::ZERO);
                    receiver.into_iter().for_each(close_quietly)
                })
                .ok()?;
            self.worker = Some((sender, thread));
        }
        self.worker.as_ref().map(|(sender, _)| sender)
    }
}

fn close_quietly(mut log: LogWriter) {
    let _ = log.close();
}
