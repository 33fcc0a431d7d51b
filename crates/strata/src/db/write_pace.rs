//! Slowing writes down while level 0 is crowded: a steady pace, not a stall.
//!
//! From [`L0_SLOWDOWN_WRITES_TRIGGER`] level-0 files on, writes are held to a byte rate, halved
//! from the next file on ([`rate`]); from `L0_STOP_WRITES_TRIGGER` files a full memtable also
//! stops them (`db/write.rs`). Each write group's bytes are charged when it
//! commits ([`WritePace::charge`]); the next group's leader waits until what was charged is
//! paid for ([`WritePace::wait`]), once the debt reaches [`MIN_WAIT`] (shorter sleeps cost more
//! than they pace). The time writes wait is spread evenly over the crowded stretch, so batches
//! of writes slow down alike. The leader sleeps [`WAIT_STEP`] at most at a time, looking at
//! level 0 again between steps: a debt ends as soon as level 0 is relieved. A debt is at most
//! [`MAX_DEBT`]: what a large batch owes beyond it is forgiven.
//!
//! Time is the monotonic clock (`Instant`), read only while writes are slowed: a wall clock
//! set back would turn into debt, and two clock reads per write cost `fillseq` 12%.
//!
//! LevelDB sleeps 1 ms per write instead, which concentrates the delay: seed 000's stall test
//! (10M random writes in batches of 1000, no batch over 10x the median) counted 118 batches
//! over it here with that rule, at up to 126 µs a write in a batch, from 1474 sleeps.

use std::time::{Duration, Instant};

use crate::version::policy::L0_SLOWDOWN_WRITES_TRIGGER;

/// The rate writes are held to at [`L0_SLOWDOWN_WRITES_TRIGGER`] files, in bytes a second
/// (halved from the next file on). Half of what one writer thread puts here unslowed
/// (~120 MB/s of 16-byte keys and 100-byte values).
const RATE_AT_TRIGGER: u64 = 64 << 20;
/// How many times the rate halves as level 0 grows: once, to 32 MiB/s (a write of 100 bytes
/// about 4 µs, 4x its unslowed cost here). 10M random writes in batches of 1000 here, counting
/// the batches over 10x the median (charges then rounded down to whole microseconds, which
/// halved a small put's): halving down to an eighth (8 MiB/s) left 63-69, to a quarter 46-68
/// (writes slowed that much are the ones the count counts), once 4-12, and never halving
/// (64 MiB/s throughout) 33-39, with level 0 reaching the stop trigger 100 times a run. Once,
/// charged to the nanosecond: 12-18, where LevelDB's 1 ms per write left 108-124.
const MAX_HALVINGS: usize = 1;
/// The shortest wait: debts below it carry over to the next write.
const MIN_WAIT: Duration = Duration::from_millis(1);
/// The longest sleep before level 0 is looked at again.
const WAIT_STEP: Duration = Duration::from_millis(10);
/// The largest debt: what a large batch owes beyond it is forgiven.
const MAX_DEBT: Duration = Duration::from_millis(100);

/// The byte rate writes are held to with `level0` files in level 0; `None` below the
/// slowdown trigger.
fn rate(level0: usize) -> Option<u64> {
    let over = level0.checked_sub(L0_SLOWDOWN_WRITES_TRIGGER)?;
    let halvings = over.min(MAX_HALVINGS);
    Some(RATE_AT_TRIGGER >> halvings)
}

/// The debt of the writes charged while slowed, as the time by which they are paid for
/// (`None`: no debt); see the module documentation.
#[derive(Debug, Default)]
pub(crate) struct WritePace {
    paid_at: Option<Instant>,
}

impl WritePace {
    /// Charges a committed group of `bytes`, with `level0` files in level 0, at the time
    /// `now` gives (asked only while writes are slowed); a group written while writes are not
    /// slowed forgives the debt.
    pub(crate) fn charge(&mut self, level0: usize, bytes: usize, now: impl FnOnce() -> Instant) {
        let Some(rate) = rate(level0) else {
            self.paid_at = None;
            return;
        };
        let now = now();
        // In nanoseconds: a put of 100 bytes costs 2 µs at 64 MiB/s, so whole microseconds
        // would undercharge small writes by half.
        let cost = Duration::from_nanos((bytes as u64).saturating_mul(1_000_000_000) / rate);
        let from = self.paid_at.map_or(now, |paid_at| paid_at.max(now));
        let debt = (from - now).saturating_add(cost).min(MAX_DEBT);
        self.paid_at = Some(now + debt);
    }

    /// How long the next group's leader sleeps before it looks again, with `level0` files in
    /// level 0, at the time `now` gives (asked only while writes are slowed and a debt is
    /// owed): the debt, once it is [`MIN_WAIT`] or more, up to [`WAIT_STEP`].
    pub(crate) fn wait(&self, level0: usize, now: impl FnOnce() -> Instant) -> Option<Duration> {
        let paid_at = self.paid_at.filter(|_| rate(level0).is_some())?;
        let debt = paid_at.saturating_duration_since(now());
        (debt >= MIN_WAIT).then_some(debt.min(WAIT_STEP))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::version::policy::L0_STOP_WRITES_TRIGGER;

    const SLOW: usize = L0_SLOWDOWN_WRITES_TRIGGER;

    fn micros(n: u64) -> Duration {
        Duration::from_micros(n)
    }

    fn nanos(n: u64) -> Duration {
        Duration::from_nanos(n)
    }

    #[test]
    fn a_small_put_is_charged_to_the_nanosecond() {
        let t = Instant::now();
        let mut pace = WritePace::default();
        // A put of a 16-byte key and a 100-byte value: 131 bytes, 1952 ns at 64 MiB/s.
        for _ in 0..1024 {
            pace.charge(SLOW, 131, || t);
        }
        assert_eq!(pace.wait(SLOW, || t), Some(nanos(1024 * 1952)));
    }

    #[test]
    fn rate_halves_once_past_the_slowdown_trigger() {
        assert_eq!(rate(SLOW - 1), None);
        assert_eq!(rate(SLOW), Some(RATE_AT_TRIGGER));
        assert_eq!(rate(SLOW + 1), Some(RATE_AT_TRIGGER / 2));
        // At the stop trigger and past it writes stay slowed (a full memtable stops them).
        assert_eq!(rate(L0_STOP_WRITES_TRIGGER), Some(RATE_AT_TRIGGER / 2));
        assert_eq!(rate(100), Some(RATE_AT_TRIGGER / 2));
    }

    #[test]
    fn small_debts_carry_over_until_they_are_worth_a_wait() {
        let t = Instant::now();
        let mut pace = WritePace::default();
        // 64 KiB at 64 MiB/s: 976.5625 µs, under the shortest wait.
        pace.charge(SLOW, 64 << 10, || t);
        assert_eq!(pace.wait(SLOW, || t), None);
        pace.charge(SLOW, 64 << 10, || t);
        assert_eq!(pace.wait(SLOW, || t), Some(micros(1953) + nanos(124)));
        // Time that passed pays for part of it.
        assert_eq!(
            pace.wait(SLOW, || t + micros(900)),
            Some(micros(1053) + nanos(124))
        );
        assert_eq!(pace.wait(SLOW, || t + micros(1000)), None);
    }

    #[test]
    fn the_clock_is_read_only_while_writes_are_slowed() {
        let mut pace = WritePace::default();
        let unread = || -> Instant { panic!("clock read while writes are not slowed") };
        pace.charge(SLOW - 1, 1 << 20, unread);
        assert_eq!(pace.wait(SLOW - 1, unread), None);
        // Slowed, with no debt owed yet.
        assert_eq!(pace.wait(SLOW, unread), None);
    }

    #[test]
    fn a_crowded_level_zero_costs_more_per_byte() {
        let t = Instant::now();
        let mut pace = WritePace::default();
        pace.charge(SLOW + 2, 64 << 10, || t);
        assert_eq!(pace.wait(SLOW + 2, || t), Some(micros(1953) + nanos(125)));
    }

    #[test]
    fn a_large_batch_owes_at_most_the_largest_debt_paid_a_step_at_a_time() {
        let t = Instant::now();
        let mut pace = WritePace::default();
        // 64 MiB at 32 MiB/s would be 2 s.
        pace.charge(L0_STOP_WRITES_TRIGGER, 64 << 20, || t);
        assert_eq!(pace.wait(L0_STOP_WRITES_TRIGGER, || t), Some(WAIT_STEP));
        assert_eq!(pace.wait(SLOW, || t + micros(95_000)), Some(micros(5000)));
        assert_eq!(pace.wait(SLOW, || t + MAX_DEBT), None);
        // More writes at once add no more than the largest debt either.
        pace.charge(SLOW, 64 << 20, || t);
        assert_eq!(
            pace.wait(SLOW, || t + MAX_DEBT - micros(1500)),
            Some(micros(1500))
        );
    }

    #[test]
    fn a_relieved_level_zero_ends_the_debt() {
        let t = Instant::now();
        let mut pace = WritePace::default();
        pace.charge(SLOW, 1 << 20, || t);
        assert_eq!(pace.wait(SLOW - 1, || t), None);
        pace.charge(SLOW - 1, 100, || t);
        assert_eq!(pace.wait(SLOW, || t), None);
    }

    #[test]
    fn idle_time_is_no_credit() {
        let t = Instant::now();
        let mut pace = WritePace::default();
        pace.charge(SLOW, 1 << 20, || t);
        // Long after: the debt is paid, and the idle time is not saved up for a burst.
        let later = t + Duration::from_secs(5);
        pace.charge(SLOW, 128 << 10, || later);
        assert_eq!(pace.wait(SLOW, || later), Some(micros(1953) + nanos(125)));
    }
}
