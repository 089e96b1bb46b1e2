//! Reconnect delays: 1 s doubling to 30 s (OpenClaw's own client uses the same curve), each
//! with ±20 % jitter so many clients restarting together do not reconnect in lockstep.

use std::time::Duration;

/// First delay after a failure.
pub const INITIAL: Duration = Duration::from_secs(1);
/// Longest delay between attempts.
pub const MAX: Duration = Duration::from_secs(30);
/// Jitter as a fraction of the delay, either way.
const JITTER: f64 = 0.2;

/// Exponential backoff with jitter.
#[derive(Debug, Clone)]
pub struct Backoff {
    next: Duration,
    rng: fastrand::Rng,
}

impl Default for Backoff {
    fn default() -> Self {
        Self::new()
    }
}

impl Backoff {
    /// Starts at [`INITIAL`].
    pub fn new() -> Self {
        Self {
            next: INITIAL,
            rng: fastrand::Rng::new(),
        }
    }

    /// A backoff with a fixed random seed (tests).
    #[cfg(test)]
    pub fn with_seed(seed: u64) -> Self {
        Self {
            next: INITIAL,
            rng: fastrand::Rng::with_seed(seed),
        }
    }

    /// The delay before the next attempt; doubles the one after it, up to [`MAX`].
    pub fn next_delay(&mut self) -> Duration {
        let base = self.next;
        self.next = (self.next * 2).min(MAX);
        let factor = 1.0 + JITTER * (self.rng.f64() * 2.0 - 1.0);
        base.mul_f64(factor)
    }

    /// Back to [`INITIAL`] after a successful connection.
    pub fn reset(&mut self) {
        self.next = INITIAL;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_to_the_cap_with_bounded_jitter_and_resets() {
        let mut backoff = Backoff::with_seed(7);
        let bases = [1, 2, 4, 8, 16, 30, 30, 30];
        for base in bases {
            let delay = backoff.next_delay().as_secs_f64();
            let base = f64::from(base);
            assert!(
                delay >= base * 0.8 - 1e-9 && delay <= base * 1.2 + 1e-9,
                "{delay} vs {base}"
            );
        }
        backoff.reset();
        assert!(backoff.next_delay() <= INITIAL.mul_f64(1.2));
    }
}
