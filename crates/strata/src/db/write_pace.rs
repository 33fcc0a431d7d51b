//! Slowing writes down while level 0 is crowded: a steady pace, not a stall.
//!
//! From [`L0_SLOWDOWN_WRITES_TRIGGER`] level-0 files on, writes are held to a byte rate that
//! halves with each file more ([`rate`]), until [`L0_STOP_WRITES_TRIGGER`] stops them. Each
//! write group's bytes are charged when it commits ([`WritePace::charge`]); the next group's
//! leader waits until what was charged is paid for ([`WritePace::wait`]), once the debt reaches
//! [`MIN_WAIT_MICROS`] (shorter sleeps cost more than they pace). The time writes wait is
//! spread evenly over the crowded stretch, so batches of writes slow down alike. One wait is
//! at most [`MAX_WAIT_MICROS`]: the debt of a large batch is paid by the writes after it, each
//! of which looks at level 0 again (a debt ends once it is relieved).
//!
//! LevelDB sleeps 1 ms per write instead, which concentrates the delay: seed 000's stall test
//! (10M random writes in batches of 1000, no batch over 10x the median) counted 118 batches
//! over it here with that rule, at up to 126 µs a write in a batch, from 1474 sleeps.

use crate::version::policy::{L0_SLOWDOWN_WRITES_TRIGGER, L0_STOP_WRITES_TRIGGER};

/// The rate writes are held to at [`L0_SLOWDOWN_WRITES_TRIGGER`] files, in bytes a second
/// (halved for each file more). Half of what one writer thread puts here unslowed (~120 MB/s
/// of 16-byte keys and 100-byte values), an eighth at the last file before the stop.
const RATE_AT_TRIGGER: u64 = 64 << 20;
/// The shortest wait: debts below it carry over to the next write.
pub(crate) const MIN_WAIT_MICROS: u64 = 1000;
/// The longest wait of one write; the rest of the debt carries over.
const MAX_WAIT_MICROS: u64 = 10_000;

/// The byte rate writes are held to with `level0` files in level 0; `None` when they are not
/// slowed (below the slowdown trigger, or at the stop trigger, where they wait instead).
pub(crate) fn rate(level0: usize) -> Option<u64> {
    if !(L0_SLOWDOWN_WRITES_TRIGGER..L0_STOP_WRITES_TRIGGER).contains(&level0) {
        return None;
    }
    Some(RATE_AT_TRIGGER >> (level0 - L0_SLOWDOWN_WRITES_TRIGGER))
}

/// The debt of the writes charged while slowed, as the time (`Env::now_micros`) by which they
/// are paid for; see the module documentation.
#[derive(Debug, Default)]
pub(crate) struct WritePace {
    paid_at: u64,
}

impl WritePace {
    /// Charges a committed group of `bytes`, with `level0` files in level 0, at the time
    /// `now` gives (asked only while writes are slowed: a clock read per write costs); a group
    /// written while writes are not slowed forgives the debt.
    pub(crate) fn charge(&mut self, level0: usize, bytes: usize, now: impl FnOnce() -> u64) {
        match rate(level0) {
            Some(rate) => {
                let cost = (bytes as u64).saturating_mul(1_000_000).div_ceil(rate);
                self.paid_at = self.paid_at.max(now()).saturating_add(cost);
            }
            None => self.paid_at = 0,
        }
    }

    /// How many microseconds the next group waits with `level0` files in level 0, at the
    /// time `now` gives (asked only while writes are slowed and a debt is owed): the debt,
    /// once it is [`MIN_WAIT_MICROS`] or more, up to [`MAX_WAIT_MICROS`].
    pub(crate) fn wait(&self, level0: usize, now: impl FnOnce() -> u64) -> Option<u64> {
        if rate(level0).is_none() || self.paid_at == 0 {
            return None;
        }
        let debt = self.paid_at.saturating_sub(now());
        (debt >= MIN_WAIT_MICROS).then_some(debt.min(MAX_WAIT_MICROS))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SLOW: usize = L0_SLOWDOWN_WRITES_TRIGGER;

    #[test]
    fn rate_halves_per_file_from_the_slowdown_to_the_stop_trigger() {
        assert_eq!(rate(SLOW - 1), None);
        assert_eq!(rate(SLOW), Some(RATE_AT_TRIGGER));
        assert_eq!(rate(SLOW + 1), Some(RATE_AT_TRIGGER / 2));
        assert_eq!(rate(L0_STOP_WRITES_TRIGGER - 1), Some(RATE_AT_TRIGGER / 8));
        assert_eq!(rate(L0_STOP_WRITES_TRIGGER), None);
    }

    #[test]
    fn small_debts_carry_over_until_they_are_worth_a_wait() {
        let mut pace = WritePace::default();
        // 64 KiB at 64 MiB/s: 977 µs, under the shortest wait.
        pace.charge(SLOW, 64 << 10, || 10_000);
        assert_eq!(pace.wait(SLOW, || 10_000), None);
        pace.charge(SLOW, 64 << 10, || 10_000);
        assert_eq!(pace.wait(SLOW, || 10_000), Some(1954));
        // Time that passed pays for part of it.
        assert_eq!(pace.wait(SLOW, || 10_900), Some(1054));
        assert_eq!(pace.wait(SLOW, || 11_000), None);
    }

    #[test]
    fn the_clock_is_read_only_while_writes_are_slowed() {
        let mut pace = WritePace::default();
        let unread = || -> u64 { panic!("clock read while writes are not slowed") };
        pace.charge(SLOW - 1, 1 << 20, unread);
        assert_eq!(pace.wait(SLOW - 1, unread), None);
        // Slowed, with no debt owed yet.
        assert_eq!(pace.wait(SLOW, unread), None);
    }

    #[test]
    fn a_crowded_level_zero_costs_more_per_byte() {
        let mut pace = WritePace::default();
        pace.charge(SLOW + 2, 64 << 10, || 0);
        assert_eq!(pace.wait(SLOW + 2, || 0), Some(3907));
    }

    #[test]
    fn a_large_batch_is_paid_for_by_the_writes_after_it_while_level_zero_stays_crowded() {
        let mut pace = WritePace::default();
        // 64 MiB at 8 MiB/s: 8 s of debt.
        pace.charge(L0_STOP_WRITES_TRIGGER - 1, 64 << 20, || 0);
        assert_eq!(
            pace.wait(L0_STOP_WRITES_TRIGGER - 1, || 0),
            Some(MAX_WAIT_MICROS)
        );
        assert_eq!(pace.wait(SLOW, || 7_995_000), Some(5000));
        // Level 0 relieved: the next write goes at once, and its charge ends the debt.
        assert_eq!(pace.wait(SLOW - 1, || 20_000), None);
        pace.charge(SLOW - 1, 100, || 20_000);
        assert_eq!(pace.wait(SLOW, || 20_000), None);
    }

    #[test]
    fn idle_time_is_no_credit_and_a_relieved_level_zero_forgives_the_debt() {
        let mut pace = WritePace::default();
        pace.charge(SLOW, 1 << 20, || 0);
        // Long after: the debt is paid, and the idle time is not saved up for a burst.
        pace.charge(SLOW, 128 << 10, || 5_000_000);
        assert_eq!(pace.wait(SLOW, || 5_000_000), Some(1954));
        // Level 0 below the trigger: no wait, and the debt is gone for good.
        assert_eq!(pace.wait(SLOW - 1, || 5_000_000), None);
        pace.charge(SLOW - 1, 1 << 20, || 5_000_000);
        assert_eq!(pace.wait(SLOW, || 5_000_000), None);
    }
}
