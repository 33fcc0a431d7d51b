//! `strata stress DB --duration SECONDS`: the crash test (`strata_tools::StressSession`).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use strata::{Options, ValueSeparation};
use strata_tools::{verify_stress_db, CrashModel, StressOptions, StressSession};

use super::{io_error, CommandResult, NEGATIVE};

/// Run a crash-test workload of puts, deletes (and range deletes) and batches (values in value
/// files or not), recording every acknowledged op in DB.stress-journal. Every start first
/// verifies the database against that journal (no lost write, no hole, no resurrected
/// deletion, no value never written) and exits 1 with a report naming each violation; kill it
/// at any moment and start it again.
#[derive(Args)]
pub struct StressArgs {
    /// The database directory (created if missing; must have been created by stress).
    db: PathBuf,
    /// Seconds to run the workload after verifying.
    #[arg(long, required_unless_present = "verify_only")]
    duration: Option<f64>,
    /// Writer threads, each with its own keys.
    #[arg(long, default_value_t = 4)]
    threads: u32,
    /// Write every K-th op of a thread with sync (0: never).
    #[arg(long, value_name = "K", default_value_t = 16)]
    sync_every: u64,
    /// Only verify; write nothing.
    #[arg(long)]
    verify_only: bool,
    /// Workload seed for a new database (default: random; fixed by the journal afterwards).
    #[arg(long)]
    seed: Option<u64>,
    /// Keys per thread for a new database (default 1000).
    #[arg(long)]
    keys: Option<u32>,
    /// Largest ordinary value payload in bytes for a new database (default 100).
    #[arg(long)]
    value_size: Option<u32>,
    /// Verify what survives a power loss (sync-acknowledged ops) instead of a process crash
    /// (every acknowledged op).
    #[arg(long)]
    power_loss: bool,
    /// Memtable size in bytes (small, so flushes and compactions happen often).
    #[arg(long, default_value_t = 256 << 10)]
    write_buffer_size: usize,
    /// Open with reuse_logs.
    #[arg(long)]
    reuse_logs: bool,
    /// Open with paranoid_checks.
    #[arg(long)]
    paranoid_checks: bool,
    /// Range deletes among the deletes (format extension; fixed by the journal of a new
    /// database, and needed on every later run of it).
    #[arg(long)]
    range_deletes: bool,
    /// Keep values of N bytes or more in value files (format extension; recorded by the
    /// database, and needed on every later run of it). One value in 64 is 1-17 KiB; with
    /// --value-size above N, most are separated.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    value_separation: Option<u64>,
}

pub fn run(args: StressArgs) -> CommandResult {
    let duration = args.duration.unwrap_or(0.0);
    let duration = Duration::try_from_secs_f64(duration)
        .map_err(|_| strata::Error::InvalidArgument(format!("bad --duration {duration}")))?;
    let options = StressOptions {
        threads: args.threads,
        duration,
        sync_every: args.sync_every,
        max_ops_per_thread: None,
        seed: args.seed,
        keys_per_thread: args.keys,
        value_size: args.value_size,
        model: if args.power_loss {
            CrashModel::PowerLoss
        } else {
            CrashModel::ProcessCrash
        },
        db_options: Options {
            write_buffer_size: args.write_buffer_size,
            reuse_logs: args.reuse_logs,
            paranoid_checks: args.paranoid_checks,
            range_deletes: args.range_deletes,
            value_separation: args
                .value_separation
                .map(|n| ValueSeparation::new(usize::try_from(n).unwrap_or(usize::MAX))),
            ..Options::default()
        },
    };
    let mut out = std::io::stdout().lock();
    if args.verify_only {
        let report = verify_stress_db(&args.db, &options)?;
        write!(out, "{report}").map_err(io_error("writing the report"))?;
        return Ok(exit(report.is_ok()));
    }
    let session = StressSession::open(&args.db, &options)?;
    let report = session.report();
    // Out before any write, so a driver that kills the run still sees it.
    write!(out, "{report}")
        .and_then(|()| out.flush())
        .map_err(io_error("writing the report"))?;
    if !report.is_ok() {
        return Ok(ExitCode::from(NEGATIVE));
    }
    writeln!(
        out,
        "running {} threads for {:.1} s, {}",
        args.threads,
        duration.as_secs_f64(),
        match args.sync_every {
            0 => "no op synced".to_owned(),
            k => format!("1 op in {k} synced"),
        }
    )
    .and_then(|()| out.flush())
    .map_err(io_error("writing"))?;
    let summary = session.run()?;
    let secs = summary.elapsed.as_secs_f64();
    writeln!(
        out,
        "ran {secs:.1} s: {} ops acknowledged ({:.0}/s; {} synced): {} puts, {} deletes, {} \
         batches; {} reads checked, {} compactions; {} violations",
        summary.ops,
        summary.ops as f64 / secs.max(1e-9),
        summary.synced_ops,
        summary.puts,
        summary.deletes,
        summary.batches,
        summary.reads_checked,
        summary.compactions,
        summary.violations.len()
    )
    .map_err(io_error("writing the summary"))?;
    for v in &summary.violations {
        writeln!(out, "VIOLATION {v}").map_err(io_error("writing the summary"))?;
    }
    Ok(exit(summary.violations.is_empty()))
}

fn exit(ok: bool) -> ExitCode {
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(NEGATIVE)
    }
}
