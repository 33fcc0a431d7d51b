//! Pareto-skewed key numbers, for `leveledmix` (Leveled's volume tests drew their keys "with
//! a pareto distribution of load").
//!
//! A key number is a draw of the Lomax distribution (a Pareto distribution shifted to start
//! at 0) of shape [`SHAPE`] and scale `num / 10`: `scale * ((1 - u)^(-1 / shape) - 1)` for `u`
//! uniform in `[0, 1)`. Its CDF is `1 - (1 + x / scale)^-shape`, so about 65% of the draws
//! fall on the lowest tenth of the key numbers and 80% on the lowest fifth (the "80/20"
//! rule); a draw at or beyond `num` (2.7% of them) is drawn again, so every draw names an
//! existing key. Hot keys are the low numbers, next to each other in key order.

use rand::Rng;

/// The distribution's shape (its tail index): 1.5 puts 80% of the draws on 20% of the keys.
pub const SHAPE: f64 = 1.5;

/// Draws key numbers in `0..num`, skewed toward 0.
#[derive(Debug, Clone, Copy)]
pub struct ParetoKeys {
    num: u64,
    scale: f64,
}

impl ParetoKeys {
    /// Draws over `0..num` (at least one key).
    pub fn over(num: u64) -> ParetoKeys {
        let num = num.max(1);
        ParetoKeys {
            num,
            scale: num as f64 / 10.0,
        }
    }

    /// The next key number.
    pub fn sample<R: Rng>(&self, rng: &mut R) -> u64 {
        loop {
            let u: f64 = rng.gen();
            let x = self.scale * ((1.0 - u).powf(-1.0 / SHAPE) - 1.0);
            if x < self.num as f64 {
                return x as u64;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    use super::*;

    #[test]
    fn four_fifths_of_the_draws_fall_on_the_lowest_fifth_of_the_keys() {
        let keys = ParetoKeys::over(1_000_000);
        let mut rng = SmallRng::seed_from_u64(7);
        let draws: Vec<u64> = (0..100_000).map(|_| keys.sample(&mut rng)).collect();
        assert!(draws.iter().all(|&k| k < 1_000_000));
        let share = |limit: u64| draws.iter().filter(|&&k| k < limit).count() as f64 / 1e5;
        // Truncated at num: P(x < a) = (1 - (1 + a/scale)^-1.5) / (1 - 11^-1.5).
        assert!((share(200_000) - 0.830).abs() < 0.01, "{}", share(200_000));
        assert!((share(100_000) - 0.664).abs() < 0.01, "{}", share(100_000));
        // The tail is long: some draws land in the top half.
        assert!(share(500_000) < 0.98);
    }

    #[test]
    fn a_single_key_is_always_drawn() {
        let keys = ParetoKeys::over(0);
        let mut rng = SmallRng::seed_from_u64(1);
        assert!((0..100).all(|_| keys.sample(&mut rng) == 0));
    }
}
