//! `strata bench`: db_bench's workloads on Strata and its peers in one run.
//!
//! The same workload, keys, values and options run on every engine named by `--engines`
//! (Strata always; LevelDB 1.23 with the cargo feature `leveldb`; current RocksDB with
//! `rocksdb`, as `rocksdb` and, with BlobDB, `rocksdb-blob`), interleaved per workload, each
//! engine in its own process and its own directory under `--db`. The result is a table of
//! µs/op, MB/s and the ratio to Strata per workload, a table of latency percentiles, write
//! and space amplification, and each engine's peak memory; medians over `--repeat` runs with
//! their spread, optionally JSON (`--json`) and SVG charts (`--plot`). `--sweep paper` runs
//! the configuration study of the paper in `shared/seeds/003_*` instead (in this process).
//!
//! Layout: [`config`] (what to run), [`engine`] (the trait and its three adapters, each of which
//! documents how it is configured and where its API costs it something), [`keys`] (db_bench's
//! keys and compressible values), [`workloads`] (the timed loops; `leveled_mix` and `pareto`
//! for Leveled's mix), [`stats`] (db_bench's accounting), [`suite`] (interleaving, repeats,
//! settling), `process`/`worker`/`protocol` (an engine's process, both sides and what they
//! say), `disk` (bytes written, directory size), `live` (live bytes), `memory` (peak RSS),
//! [`report`], [`json`], [`plot`], [`sweep`], [`progress`].

pub mod config;
mod disk;
pub mod engine;
mod json;
mod keys;
#[cfg(feature = "leveldb")]
mod leveldb_engine;
mod leveled_mix;
mod live;
mod memory;
mod pareto;
mod plot;
mod process;
mod progress;
mod protocol;
mod report;
#[cfg(feature = "rocksdb")]
mod rocksdb_engine;
mod settle;
mod stats;
mod strata_engine;
mod suite;
mod sweep;
mod worker;
mod workloads;

pub use config::{BenchOptions, Benchmark, Compression, Config, EngineKind, Sweep};
pub use engine::BenchResult;
pub use process::WORKER_COMMAND;
pub use worker::serve as serve_worker;

/// The engines to run when `--engines` is not given: every engine compiled in for the suite,
/// `rocksdb-blob` only with value separation (`separated`); Strata and LevelDB for the sweep
/// (the paper's study is about LevelDB).
pub fn default_engines(sweep: bool, separated: bool) -> Vec<EngineKind> {
    [
        EngineKind::Strata,
        EngineKind::Leveldb,
        EngineKind::Rocksdb,
        EngineKind::RocksdbBlob,
    ]
    .into_iter()
    .filter(|k| k.compiled_in())
    .filter(|k| !sweep || !k.is_rocksdb())
    .filter(|k| separated || *k != EngineKind::RocksdbBlob)
    .collect()
}

/// Checks `cfg` and runs it: the suite, or the sweep if one is asked for.
pub fn run(cfg: &Config) -> BenchResult<()> {
    validate(cfg)?;
    prepare_outputs(cfg)?;
    if let Some(sweep) = cfg.sweep {
        let results = sweep::run(cfg, sweep, &cfg.engines)?;
        if let Some(path) = &cfg.json {
            json::write(path, &sweep::to_json(&results)?)?;
            println!("wrote {}", path.display());
        }
        return Ok(());
    }
    let results = suite::run(cfg)?;
    println!();
    print!("{}", report::table(&results, cfg.repeat));
    if let Some(path) = &cfg.json {
        json::write(path, &json::to_json(cfg, &results)?)?;
        println!("wrote {}", path.display());
    }
    if let Some(dir) = &cfg.plot {
        for file in plot::write_all(dir, &results)? {
            println!("wrote {}", file.display());
        }
    }
    Ok(())
}

/// Creates the output directories up front, so a bad path fails before a long run, not after.
fn prepare_outputs(cfg: &Config) -> BenchResult<()> {
    let json_dir = cfg
        .json
        .as_deref()
        .and_then(std::path::Path::parent)
        .filter(|p| !p.as_os_str().is_empty());
    for dir in json_dir.into_iter().chain(cfg.plot.as_deref()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    Ok(())
}

fn validate(cfg: &Config) -> BenchResult<()> {
    if cfg.engines.contains(&EngineKind::RocksdbBlob) {
        if cfg.options.value_separation.is_none() {
            return Err(
                "engine `rocksdb-blob` needs --value_separation N (its min_blob_size, \
                        the same as Strata's threshold)"
                    .to_owned(),
            );
        }
        if cfg.sweep.is_some() {
            return Err(
                "the sweep does not run `rocksdb-blob` (it studies the tree's own \
                        settings)"
                    .to_owned(),
            );
        }
    }
    if let Some(missing) = cfg.engines.iter().find(|k| !k.compiled_in()) {
        return Err(engine::not_compiled_in(*missing));
    }
    if cfg.engines.is_empty() {
        return Err("no engine to run".to_owned());
    }
    let mut seen = Vec::new();
    for e in &cfg.engines {
        if seen.contains(e) {
            return Err(format!("engine `{}` listed twice", e.name()));
        }
        seen.push(*e);
    }
    if cfg.num == 0 {
        return Err("--num must be at least 1".to_owned());
    }
    if cfg.repeat == 0 {
        return Err("--repeat must be at least 1".to_owned());
    }
    if cfg.threads == 0 {
        return Err("--threads must be at least 1".to_owned());
    }
    if cfg.value_size > 64 << 20 {
        return Err("--value_size is limited to 64 MiB".to_owned());
    }
    if cfg.sweep.is_none() && cfg.benchmarks.is_empty() {
        return Err("--benchmarks lists nothing to run".to_owned());
    }
    Ok(())
}
