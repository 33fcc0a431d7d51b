//! `leveledmix`: the mix of Leveled's volume tests (seed 004) on the existing database.
//!
//! Each thread does `reads` ops: five point reads for every update, in a fixed rhythm (ops
//! 0-4 read, op 5 updates, and so on), each op's key drawn from [`ParetoKeys`] over
//! `0..num`. An update is a put of a new `--value_size` value, one per write batch, so with
//! `--value_size 8192` it is the 8 KB mix. Every op's latency is recorded (the mix
//! exists for its tail), reads and updates in one histogram; the updates' keys and values
//! count as bytes written by the user (write amplification), and no op counts toward MB/s.

use rand::rngs::SmallRng;

use super::engine::{BenchResult, Engine};
use super::keys::{KeyBuf, KEY_SIZE};
use super::pareto::ParetoKeys;
use super::stats::ThreadStats;
use super::workloads::Workload;

/// Point reads per update.
pub const READS_PER_UPDATE: u64 = 5;

/// Runs `ops` ops of the mix on one thread.
pub fn run<E: Engine>(
    engine: &E,
    w: &Workload<'_>,
    rng: &mut SmallRng,
    stats: &mut ThreadStats,
    ops: u64,
) -> BenchResult<()> {
    let keys = ParetoKeys::over(w.num);
    let mut values = w.values.cursor();
    let mut key = KeyBuf::new();
    let mut batch = E::new_batch();
    for i in 0..ops {
        let k = key.key(keys.sample(rng));
        if i % (READS_PER_UPDATE + 1) == READS_PER_UPDATE {
            E::batch_put(&mut batch, k, values.next_value(w.value_size));
            engine.write(&mut batch, false)?;
            stats.wrote(KEY_SIZE + w.value_size);
        } else if engine.get(k)?.is_some() {
            stats.found();
        }
        stats.op(0);
    }
    Ok(())
}
