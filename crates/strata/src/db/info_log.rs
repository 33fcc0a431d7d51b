//! The info log: the human-readable `LOG` file of a database directory.
//!
//! At open the previous `LOG` becomes `LOG.old`. Each line is
//! `YYYY/MM/DD-HH:MM:SS.micros <thread> <message>` (UTC), the shape LevelDB's LOG has, so
//! tools that read one read the other. With `Options::info_log` set, messages go to that
//! [`Logger`] instead and no `LOG` file is written (as in LevelDB). Logging never fails an
//! operation: write errors are dropped.

use std::fmt;
use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::env::{Env, Logger, WritableFile};
use crate::filename::{info_log_file_name, old_info_log_file_name};

/// Writes timestamped lines to the `LOG` file (a no-op when none could be opened), or hands
/// messages to the user's [`Logger`].
pub(crate) enum InfoLog {
    File {
        file: Mutex<Option<Box<dyn WritableFile>>>,
        env: Arc<dyn Env>,
    },
    User(Arc<dyn Logger>),
}

impl InfoLog {
    /// Sends messages to `user` when given; otherwise rotates `LOG` to `LOG.old` and starts a
    /// new `LOG` in `dir`.
    pub(crate) fn open(env: &Arc<dyn Env>, dir: &Path, user: Option<&Arc<dyn Logger>>) -> InfoLog {
        if let Some(user) = user {
            return InfoLog::User(Arc::clone(user));
        }
        let path = info_log_file_name(dir);
        if env.file_exists(&path) {
            let _ = env.rename(&path, &old_info_log_file_name(dir));
        }
        InfoLog::File {
            file: Mutex::new(env.new_writable_file(&path).ok()),
            env: Arc::clone(env),
        }
    }

    /// Appends one line.
    pub(crate) fn log(&self, message: fmt::Arguments<'_>) {
        let (file, env) = match self {
            InfoLog::User(logger) => return logger.log(&message.to_string()),
            InfoLog::File { file, env } => (file, env),
        };
        let mut guard = file.lock();
        let Some(file) = guard.as_mut() else {
            return;
        };
        let mut line = Vec::with_capacity(128);
        let thread = std::thread::current();
        let _ = write!(
            line,
            "{} {} {}",
            format_timestamp(env.now_micros()),
            thread.name().unwrap_or("-"),
            message
        );
        line.push(b'\n');
        let _ = file.append(&line).and_then(|()| file.flush());
    }
}

/// Formats microseconds since the Unix epoch as `YYYY/MM/DD-HH:MM:SS.uuuuuu` (UTC).
pub(crate) fn format_timestamp(micros: u64) -> String {
    let secs = micros / 1_000_000;
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}/{month:02}/{day:02}-{:02}:{:02}:{:02}.{:06}",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60,
        micros % 1_000_000
    )
}

/// Gregorian date of a day count since 1970-01-01 (Howard Hinnant's days-to-civil algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_utc_calendar_dates() {
        assert_eq!(format_timestamp(0), "1970/01/01-00:00:00.000000");
        // 2026-11-21 23:41:38.5 UTC
        assert_eq!(
            format_timestamp(1_795_304_498_500_000),
            "2026/11/21-23:41:38.500000"
        );
        // A leap day.
        assert_eq!(
            format_timestamp(951_782_400_000_000),
            "2000/02/29-00:00:00.000000"
        );
    }
}
