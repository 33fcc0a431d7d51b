//! [`Logger`]: where a database's informational messages go instead of its `LOG` file.

/// A sink for the human-readable messages a database writes about its work (opens,
/// recoveries, flushes, compactions, background errors): what LevelDB's `Options::info_log`
/// receives.
///
/// Thread safety: called from the thread that opens the database, from writers and from
/// background threads, possibly at the same time. Each call is one whole message, without a
/// trailing newline or a timestamp. A logger must not call back into the database that logs to
/// it, and should return quickly: the background work that logs waits for it.
pub trait Logger: Send + Sync {
    /// Records one message.
    fn log(&self, message: &str);
}
