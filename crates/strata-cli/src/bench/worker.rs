//! An engine's process: `strata bench-worker` (hidden), started by the harness (`process`),
//! one per engine of the run. It holds that engine's database open across the workloads,
//! runs the ones it is asked to and answers over the `protocol`.
//!
//! Contract: it prints nothing on stdout but replies; it runs one request at a time and
//! nothing in between (so the harness's `/proc` readings around a run see that run alone,
//! plus the engine's own background work); a `fill*` workload closes, destroys and reopens
//! its database before the clock starts, as the in-process suite did. It samples its
//! anonymous memory from start to close (`memory`). At the end of stdin it closes its
//! database and exits, so a harness that stopped on an error leaves no process behind. A
//! sweep's process opens no database of its own: it runs the sweep's steps (`sweep`), each
//! opening and closing the databases it needs.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;

use super::config::{Benchmark, Config, EngineKind};
use super::engine::{files_per_level, with_engine, BenchResult, Engine, OpenEngine};
use super::keys::ValuePool;
use super::memory::Sampler;
use super::progress::ProgressRun;
use super::protocol::{receive, send, Reply, Request};
use super::stats::RunResult;
use super::suite::{label, VALUE_SEED};
use super::sweep::{self, SweepStep};
use super::workloads::{self, Workload};

/// One engine's database, open or closed.
struct Slot {
    kind: EngineKind,
    dir: PathBuf,
    config: Config,
    values: ValuePool,
    open: Option<OpenEngine>,
}

impl Slot {
    fn engine(&mut self) -> BenchResult<&OpenEngine> {
        if self.open.is_none() {
            self.open = Some(OpenEngine::open(
                self.kind,
                &self.dir,
                &self.config.options,
            )?);
        }
        self.open
            .as_ref()
            .ok_or_else(|| format!("{}: database not open", self.kind.name()))
    }

    fn run(&mut self, pos: usize, bench: Benchmark, occurrence: usize) -> BenchResult<RunResult> {
        if bench.fresh_db() {
            // Close before destroying: engines hold a lock on their directory.
            self.open = None;
            OpenEngine::destroy(self.kind, &self.dir)?;
        }
        self.engine()?;
        let Slot {
            kind,
            config,
            values,
            open,
            ..
        } = self;
        let engine = open
            .as_ref()
            .ok_or_else(|| format!("{}: database not open", kind.name()))?;
        let w = Workload::at(config, bench, pos, values);
        let total = w.ops_per_thread().map(|n| n * w.thread_count() as u64);
        let progress = ProgressRun::start(
            config.progress,
            total,
            format!("{} on {}", label(bench, occurrence), kind.name()),
        );
        let result = with_engine!(engine, e => workloads::run(e, &w, &progress.handle()));
        progress.finish();
        result
    }

    fn stats(&mut self) -> BenchResult<Reply> {
        let engine = self.engine()?;
        let (text, levels) = with_engine!(engine, e => (e.stats(), files_per_level(e)));
        Ok(Reply::Stats { text, levels })
    }
}

/// Serves the harness on stdin/stdout until it asks to close (or goes away).
pub fn serve() -> BenchResult<()> {
    let sampler = Sampler::start();
    let mut input = BufReader::new(std::io::stdin().lock());
    let mut output = std::io::stdout().lock();
    let (engine, config) = match receive(&mut input)? {
        Some(Request::Open { engine, config }) => (engine, config),
        Some(Request::Sweep(step)) => return serve_sweep(step, &mut input, &mut output, sampler),
        _ => {
            return fail(
                &mut output,
                "the first request must open a database or be a sweep's step".to_owned(),
            )
        }
    };
    let mut slot = Slot {
        kind: engine,
        dir: config.db.join(engine.name()),
        values: ValuePool::new(VALUE_SEED, workloads::largest_value(config.value_size)),
        config: *config,
        open: None,
    };
    if !slot.config.use_existing_db {
        if let Err(e) = OpenEngine::destroy(engine, &slot.dir) {
            return fail(&mut output, e);
        }
    }
    match slot.engine() {
        Ok(e) => send(
            &mut output,
            &Reply::Opened {
                version: e.version(),
            },
        )?,
        Err(e) => return fail(&mut output, e),
    }
    loop {
        let reply = match receive(&mut input)? {
            None | Some(Request::Close) => break,
            Some(Request::Open { .. }) => Err("the database is already open".to_owned()),
            Some(Request::Run {
                pos,
                bench,
                occurrence,
            }) => slot.run(pos, bench, occurrence).map(Reply::Ran),
            Some(Request::Stats) => slot.stats(),
            Some(Request::Sweep(_)) => Err("a sweep's step beside an open database".to_owned()),
        };
        match reply {
            Ok(reply) => send(&mut output, &reply)?,
            Err(e) => return fail(&mut output, e),
        }
    }
    slot.open = None;
    let peak = sampler.finish();
    // The harness may be gone (end of stdin): a failed reply is of no consequence then.
    let _ = send(&mut output, &Reply::Closed(peak));
    Ok(())
}

/// Serves a sweep's steps, `first` then every other until the harness asks to close. Every
/// job of a sweep has the same value size, so one pool serves them all.
fn serve_sweep(
    first: SweepStep,
    input: &mut impl BufRead,
    output: &mut impl Write,
    sampler: Sampler,
) -> BenchResult<()> {
    let values = ValuePool::new(VALUE_SEED, first.job().value_size());
    let mut step = first;
    loop {
        match sweep::serve_step(step, &values) {
            Ok(round) => send(output, &Reply::Swept(round))?,
            Err(e) => return fail(output, e),
        }
        step = match receive(input)? {
            None | Some(Request::Close) => break,
            Some(Request::Sweep(next)) => next,
            Some(other) => return fail(output, format!("{other:?} in a sweep's process")),
        };
    }
    let _ = send(output, &Reply::Closed(sampler.finish()));
    Ok(())
}

/// Replies `Failed(message)` and ends the process's service with the same error.
fn fail(output: &mut impl Write, message: String) -> BenchResult<()> {
    send(output, &Reply::Failed(message.clone()))?;
    Err(message)
}
