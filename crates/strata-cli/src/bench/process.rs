//! The harness's side of an engine's process (`worker`): each engine of a suite runs in a
//! child process of its own, a re-execution of this binary as `strata bench-worker`.
//!
//! Why: every engine gets its own allocator and caches (no engine runs on a heap another
//! fragmented), and the kernel's per-process counters become per-engine figures: peak memory
//! (`memory`) and bytes written and read (`disk`, read by the harness from `/proc/<pid>/io`
//! around each run). The processes start together and live for the whole suite, each holding
//! its database open between workloads, and the harness asks them one at a time, so the
//! suite's order and interleaving are those of one process: only one engine works at a time.

use std::io::BufReader;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use super::config::{Benchmark, Config, EngineKind};
use super::disk::IoCounters;
use super::engine::BenchResult;
use super::memory::PeakMemory;
use super::protocol::{receive, send, Reply, Request};
use super::stats::RunResult;
use super::sweep::{Round, SweepStep};

/// The hidden subcommand an engine's process runs.
pub const WORKER_COMMAND: &str = "bench-worker";

/// A running engine process.
pub struct EngineProcess {
    kind: EngineKind,
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl EngineProcess {
    /// Starts `kind`'s process and opens its database as `cfg` says; returns the process and
    /// the engine's version.
    pub fn start(kind: EngineKind, cfg: &Config) -> BenchResult<(EngineProcess, String)> {
        let mut process = EngineProcess::spawn(kind)?;
        let open = Request::Open {
            engine: kind,
            config: Box::new(cfg.clone()),
        };
        match process.call(&open)? {
            Reply::Opened { version } => Ok((process, version)),
            other => Err(process.unexpected(&other)),
        }
    }

    /// Starts `kind`'s process without opening a database (for [`EngineProcess::sweep`]).
    pub fn spawn(kind: EngineKind) -> BenchResult<EngineProcess> {
        let exe = std::env::current_exe().map_err(|e| format!("cannot find this binary: {e}"))?;
        let mut child = Command::new(exe)
            .arg(WORKER_COMMAND)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start the {} process: {e}", kind.name()))?;
        let (Some(input), Some(output)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(format!("the {} process has no pipes", kind.name()));
        };
        Ok(EngineProcess {
            kind,
            child,
            input,
            output: BufReader::new(output),
        })
    }

    /// The engine this process runs.
    pub fn kind(&self) -> EngineKind {
        self.kind
    }

    /// The process's I/O counters now.
    pub fn io(&self) -> Option<IoCounters> {
        IoCounters::of(self.child.id())
    }

    /// Runs the workload at position `pos`.
    pub fn run(
        &mut self,
        pos: usize,
        bench: Benchmark,
        occurrence: usize,
    ) -> BenchResult<RunResult> {
        match self.call(&Request::Run {
            pos,
            bench,
            occurrence,
        })? {
            Reply::Ran(result) => Ok(result),
            other => Err(self.unexpected(&other)),
        }
    }

    /// The engine's statistics text and table files per level.
    pub fn stats(&mut self) -> BenchResult<(Option<String>, Option<String>)> {
        match self.call(&Request::Stats)? {
            Reply::Stats { text, levels } => Ok((text, levels)),
            other => Err(self.unexpected(&other)),
        }
    }

    /// Runs a step of `--sweep` and returns its measurements.
    pub fn sweep(&mut self, step: SweepStep) -> BenchResult<Round> {
        match self.call(&Request::Sweep(step))? {
            Reply::Swept(round) => Ok(round),
            other => Err(self.unexpected(&other)),
        }
    }

    /// Closes the database, waits for the process to exit and returns its peak memory.
    pub fn close(mut self) -> BenchResult<PeakMemory> {
        let reply = self.call(&Request::Close)?;
        drop(self.input);
        let status = self
            .child
            .wait()
            .map_err(|e| format!("waiting for the {} process: {e}", self.kind.name()))?;
        match reply {
            Reply::Closed(peak) if status.success() => Ok(peak),
            Reply::Closed(_) => Err(format!(
                "the {} process exited with {status}",
                self.kind.name()
            )),
            other => Err(format!(
                "the {} process answered {other:?} to close",
                self.kind.name()
            )),
        }
    }

    /// Sends `request` and reads the reply; a failure or a vanished process is an error.
    fn call(&mut self, request: &Request) -> BenchResult<Reply> {
        let name = self.kind.name();
        send(&mut self.input, request).map_err(|e| format!("{name} process: {e}"))?;
        match receive(&mut self.output).map_err(|e| format!("{name} process: {e}"))? {
            Some(Reply::Failed(message)) => Err(message),
            Some(reply) => Ok(reply),
            None => {
                let status = self
                    .child
                    .wait()
                    .map_or_else(|e| e.to_string(), |s| s.to_string());
                Err(format!(
                    "the {name} process ended without a reply ({status})"
                ))
            }
        }
    }

    fn unexpected(&self, reply: &Reply) -> String {
        format!("the {} process answered {reply:?}", self.kind.name())
    }
}
