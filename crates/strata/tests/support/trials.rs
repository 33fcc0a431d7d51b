//! Running tests over time: the seeds of randomized trials, and waiting for background work.

use std::time::{Duration, Instant};

/// How many trials to run: the number in the environment variable `count_var`, else
/// `default_count`.
pub fn trials(count_var: &str, default_count: u64) -> u64 {
    std::env::var(count_var)
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default_count)
}

/// The seeds of a randomized test's trials: the one in the environment variable `seed_var`
/// alone if set (to rerun a reported failure), else `count` seeds spread from `salt`.
pub fn seeds(seed_var: &str, count: u64, salt: u64) -> Vec<u64> {
    if let Ok(seed) = std::env::var(seed_var) {
        return vec![seed
            .parse()
            .unwrap_or_else(|_| panic!("{seed_var} is a number"))];
    }
    (0..count)
        .map(|trial: u64| trial.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ salt)
        .collect()
}

/// Polls `done` every few milliseconds until it holds, failing the test (naming `what`) once
/// `timeout` has passed.
#[track_caller]
pub fn wait_until(what: &str, timeout: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !done() {
        assert!(Instant::now() < deadline, "still waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}
