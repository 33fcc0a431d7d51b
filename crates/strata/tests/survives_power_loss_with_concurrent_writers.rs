//! Power loss while several threads write at once (their writes grouped into shared log
//! records): each thread's keys hold a prefix of that thread's writes reaching its last synced
//! one, and the prefixes agree with real time — a write that survives brings along every write
//! acknowledged (to any thread) before it was issued, so a synced write makes everything
//! acknowledged before it durable.
//!
//! Each round runs a few crash cycles over one database; the crash is a rule on a random
//! operation kind or a kill from the main thread at a random moment; power-loss mode and
//! `reuse_logs` vary by round. `STRATA_POWER_ROUNDS` scales the rounds (default 150, of which
//! this test runs a fifth); `STRATA_POWER_SEED` reruns one round.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use strata::testing::{FaultEnv, OpKind, PowerLossMode};
use strata::{Options, WriteOptions, DB};
use support::fault_env;
use support::history::{History, Op};
use support::state::{read_state, Model};
use support::trials::{seeds, trials};

const DIR: &str = "/db";
const THREADS: usize = 3;
const KEYS_PER_THREAD: u32 = 200;
const CYCLES: usize = 3;

/// A 64 KiB write buffer and small blocks, so flushes and compactions keep running.
fn options(env: &FaultEnv, reuse_logs: bool) -> Options {
    Options {
        write_buffer_size: 64 << 10,
        block_size: 1024,
        reuse_logs,
        ..support::options(env)
    }
}

fn key(thread: usize, i: u32) -> Vec<u8> {
    format!("t{thread}-key{i:04}").into_bytes()
}

/// One thread's writes in a cycle, each with the global tickets taken just before the call
/// and just after it returned.
#[derive(Default)]
struct Writes {
    history: History,
    tickets: Vec<(u64, u64)>,
}

/// Runs one writer thread until `ops` writes are done or one fails.
fn writer(db: &DB, thread: usize, seed: u64, ops: usize, clock: &AtomicU64) -> Writes {
    let mut rng = StdRng::seed_from_u64(seed);
    let sync_p = [0.0, 0.05, 0.3][rng.gen_range(0..3)];
    let mut writes = Writes::default();
    for n in 0..ops {
        let count = if rng.gen_bool(0.2) {
            rng.gen_range(2..5)
        } else {
            1
        };
        let updates = (0..count)
            .map(|p| {
                let k = key(thread, rng.gen_range(0..KEYS_PER_THREAD));
                let v = (!rng.gen_bool(0.2)).then(|| {
                    let mut v = format!("s{seed}t{thread}o{n}p{p}|").into_bytes();
                    v.resize(v.len() + rng.gen_range(0..400), b'x');
                    v
                });
                (k, v)
            })
            .collect();
        let mut op = Op {
            range_deletes: Vec::new(),
            updates,
            sync: rng.gen_bool(sync_p),
            acked: false,
        };
        let start = clock.fetch_add(1, Ordering::SeqCst);
        let result = db.write_opt(&WriteOptions { sync: op.sync }, &op.batch());
        let end = clock.fetch_add(1, Ordering::SeqCst);
        op.acked = result.is_ok();
        writes.history.ops.push(op);
        writes.tickets.push((start, end));
        if result.is_err() {
            break;
        }
    }
    writes
}

/// The least per-thread prefix lengths that explain `state` and respect real time, or why
/// there are none. `prefixes[t]` are thread `t`'s candidate lengths (increasing).
fn consistent_prefixes(writes: &[Writes], prefixes: &[Vec<usize>]) -> Result<Vec<usize>, String> {
    let mut chosen: Vec<usize> = prefixes
        .iter()
        .enumerate()
        .map(|(t, p)| {
            p.first()
                .copied()
                .ok_or(format!("thread {t}: no prefix matches"))
        })
        .collect::<Result<_, _>>()?;
    loop {
        // Every write included (any thread) needs every write acknowledged before it started.
        let mut required = vec![0usize; writes.len()];
        for (t, w) in writes.iter().enumerate() {
            for &(start, _) in &w.tickets[..chosen[t]] {
                for (u, other) in writes.iter().enumerate() {
                    let before = other
                        .tickets
                        .iter()
                        .zip(&other.history.ops)
                        .rposition(|(&(_, end), op)| op.acked && end < start)
                        .map_or(0, |i| i + 1);
                    required[u] = required[u].max(before);
                }
            }
        }
        let mut changed = false;
        for u in 0..writes.len() {
            if chosen[u] < required[u] {
                chosen[u] = *prefixes[u]
                    .iter()
                    .find(|&&len| len >= required[u])
                    .ok_or(format!(
                    "thread {u}: writes up to #{} were acknowledged before surviving writes of \
                     other threads were issued, but its state holds only one of the prefixes \
                     {:?}",
                    required[u] - 1,
                    prefixes[u]
                ))?;
                changed = true;
            }
        }
        if !changed {
            return Ok(chosen);
        }
    }
}

fn split_by_thread(state: &Model) -> Vec<Model> {
    let mut parts = vec![Model::new(); THREADS];
    for (k, v) in state {
        let t = usize::from(k[1] - b'0');
        parts[t].insert(k.clone(), v.clone());
    }
    parts
}

fn run_round(seed: u64) -> (u64, u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mode = [
        PowerLossMode::DropUnsynced,
        PowerLossMode::TornTail,
        PowerLossMode::GarbageTail,
    ][rng.gen_range(0..3)];
    let reuse_logs = rng.gen_bool(0.5);
    let env = fault_env();
    let mut bases = vec![Model::new(); THREADS];
    let mut db = DB::open(DIR, options(&env, reuse_logs)).unwrap();
    let (mut acked, mut crashes) = (0, 0);
    for cycle in 0..CYCLES {
        let kinds = [OpKind::Append, OpKind::Sync, OpKind::Open, OpKind::SyncDir];
        let kind = kinds[rng.gen_range(0..kinds.len())];
        let bound = match kind {
            OpKind::Append => 3_000,
            OpKind::Sync => 200,
            _ => 20,
        };
        let by_rule = rng.gen_bool(0.6);
        if by_rule {
            env.crash_after(kind, rng.gen_range(1..=bound));
        }
        let kill_after = Duration::from_micros(rng.gen_range(0..40_000));
        let clock = AtomicU64::new(0);
        let thread_seeds: Vec<u64> = (0..THREADS).map(|_| rng.gen()).collect();
        let ops = rng.gen_range(100..800);
        let writes: Vec<Writes> = std::thread::scope(|s| {
            let handles: Vec<_> = thread_seeds
                .iter()
                .enumerate()
                .map(|(t, &ts)| {
                    let (db, clock) = (&db, &clock);
                    s.spawn(move || writer(db, t, ts, ops, clock))
                })
                .collect();
            if !by_rule {
                std::thread::sleep(kill_after);
                env.crash_now();
            }
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        crashes += u64::from(matches!(env.crash_point(), Some(Some(_))));
        env.crash_now();
        drop(db);
        env.simulate_power_loss(mode, rng.gen()).unwrap();
        env.clear_faults();
        db = DB::open(DIR, options(&env, reuse_logs))
            .unwrap_or_else(|e| panic!("seed {seed} cycle {cycle}: reopen failed: {e}"));
        let state = read_state(&db, &[]).unwrap();
        let parts = split_by_thread(&state);
        let mut writes = writes;
        let mut prefixes = Vec::new();
        for (t, w) in writes.iter_mut().enumerate() {
            w.history.base = std::mem::take(&mut bases[t]);
            acked += w.history.ops.iter().filter(|op| op.acked).count() as u64;
            let found = w
                .history
                .matching_prefixes(&parts[t], w.history.synced_len());
            if found.is_empty() {
                panic!(
                    "seed {seed} cycle {cycle} ({mode:?}, reuse_logs {reuse_logs}): thread {t} \
                     holds no prefix of its writes\n{}",
                    w.history.explain(&parts[t], w.history.synced_len())
                );
            }
            prefixes.push(found);
        }
        if let Err(why) = consistent_prefixes(&writes, &prefixes) {
            panic!("seed {seed} cycle {cycle} ({mode:?}, reuse_logs {reuse_logs}): {why}");
        }
        bases = parts;
    }
    (acked, crashes)
}

#[test]
fn concurrent_writers_keep_consistent_prefixes() {
    let rounds = (trials("STRATA_POWER_ROUNDS", 150) / 5).max(1);
    let seeds = seeds("STRATA_POWER_SEED", rounds, 0xc0c0);
    let (mut acked, mut crashes) = (0, 0);
    for &seed in &seeds {
        let (a, c) = run_round(seed);
        acked += a;
        crashes += c;
    }
    eprintln!(
        "power loss with {THREADS} concurrent writers: {} rounds passed ({} power losses, {} by \
         a crash rule), {acked} writes acknowledged",
        seeds.len(),
        seeds.len() * CYCLES,
        crashes
    );
}

/// The checker: real-time order across threads is enforced.
#[test]
fn consistent_prefixes_enforce_real_time_order() {
    let op = |acked| Op {
        range_deletes: Vec::new(),
        updates: vec![(b"k".to_vec(), Some(b"v".to_vec()))],
        sync: false,
        acked,
    };
    // Thread 0's write ended (ticket 1) before thread 1's write started (ticket 2).
    let writes = vec![
        Writes {
            history: History {
                base: Model::new(),
                ops: vec![op(true)],
            },
            tickets: vec![(0, 1)],
        },
        Writes {
            history: History {
                base: Model::new(),
                ops: vec![op(true)],
            },
            tickets: vec![(2, 3)],
        },
    ];
    assert_eq!(
        consistent_prefixes(&writes, &[vec![1], vec![1]]),
        Ok(vec![1, 1])
    );
    assert_eq!(
        consistent_prefixes(&writes, &[vec![0, 1], vec![1]]),
        Ok(vec![1, 1])
    );
    assert_eq!(
        consistent_prefixes(&writes, &[vec![1], vec![0]]),
        Ok(vec![1, 0])
    );
    // Thread 1's write survived without thread 0's earlier one.
    assert!(consistent_prefixes(&writes, &[vec![0], vec![1]]).is_err());
}
