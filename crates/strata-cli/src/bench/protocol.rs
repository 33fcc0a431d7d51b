//! What the harness and an engine's process say to each other: one JSON object per line,
//! requests on the process's stdin, replies on its stdout (its stderr stays the terminal's,
//! for its progress bar).
//!
//! The conversation: [`Request::Open`] first (answered by [`Reply::Opened`]), then any number
//! of [`Request::Run`] and [`Request::Stats`], then [`Request::Close`] (answered by
//! [`Reply::Closed`], after which the process exits). A sweep's process opens no database of
//! its own: it gets [`Request::Sweep`] steps (answered by [`Reply::Swept`]), then the close. Every request gets exactly one reply;
//! a request that fails gets [`Reply::Failed`] and the process exits. Both sides are this
//! binary, so the format needs no versioning.

use std::io::{BufRead, Write};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::config::{Benchmark, Config, EngineKind};
use super::engine::BenchResult;
use super::memory::PeakMemory;
use super::stats::RunResult;
use super::sweep::{Round, SweepStep};

/// From the harness to an engine's process.
#[derive(Debug, Serialize, Deserialize)]
pub enum Request {
    /// Open `engine`'s database under `config.db` (emptied first unless
    /// `config.use_existing_db`).
    Open {
        engine: EngineKind,
        config: Box<Config>,
    },
    /// Run the workload at position `pos` of the list (its `occurrence`-th listing).
    Run {
        pos: usize,
        bench: Benchmark,
        occurrence: usize,
    },
    /// The engine's statistics text and table files per level.
    Stats,
    /// A step of `--sweep` (it opens and closes the databases it needs).
    Sweep(SweepStep),
    /// Close the database and report the process's peak memory.
    Close,
}

/// From an engine's process to the harness.
#[derive(Debug, Serialize, Deserialize)]
pub enum Reply {
    /// The database is open; the engine's name and version.
    Opened { version: String },
    /// A run's result.
    Ran(RunResult),
    /// A sweep step's measurements.
    Swept(Round),
    /// The engine's statistics.
    Stats {
        text: Option<String>,
        levels: Option<String>,
    },
    /// The database is closed; the process's peak memory.
    Closed(PeakMemory),
    /// The request failed; the process exits.
    Failed(String),
}

/// Writes `message` as one line and flushes it.
pub fn send<T: Serialize>(out: &mut impl Write, message: &T) -> BenchResult<()> {
    let mut line = serde_json::to_vec(message).map_err(|e| format!("encode: {e}"))?;
    line.push(b'\n');
    out.write_all(&line)
        .and_then(|()| out.flush())
        .map_err(|e| format!("send: {e}"))
}

/// Reads the next message; `None` at the end of the stream.
pub fn receive<T: DeserializeOwned>(input: &mut impl BufRead) -> BenchResult<Option<T>> {
    let mut line = String::new();
    let n = input
        .read_line(&mut line)
        .map_err(|e| format!("receive: {e}"))?;
    if n == 0 {
        return Ok(None);
    }
    serde_json::from_str(&line)
        .map(Some)
        .map_err(|e| format!("receive: {e}: {}", line.trim_end()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip_one_per_line() {
        let mut wire = Vec::new();
        send(&mut wire, &Request::Stats).unwrap_or_else(|e| panic!("{e}"));
        send(&mut wire, &Reply::Failed("no\nluck".into())).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(wire.iter().filter(|&&b| b == b'\n').count(), 2);
        let mut input = wire.as_slice();
        assert!(matches!(
            receive::<Request>(&mut input),
            Ok(Some(Request::Stats))
        ));
        assert!(matches!(
            receive::<Reply>(&mut input),
            Ok(Some(Reply::Failed(m))) if m == "no\nluck"
        ));
        assert!(matches!(receive::<Reply>(&mut input), Ok(None)));
        assert!(receive::<Reply>(&mut b"garbage\n".as_slice()).is_err());
    }
}
