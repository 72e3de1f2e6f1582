//! How late recent answers were past their deadlines: a maximum that decays
//! with time, not with the number of answers, so that fifty matches answering
//! at once do not wash out the lateness one of them measured a moment ago.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Time after which a measured lateness counts half.
const HALF_LIFE: Duration = Duration::from_secs(20);

/// The decaying maximum of recent lateness, shared by every match.
#[derive(Debug)]
pub(crate) struct Lateness {
    /// The maximum, and when it was last updated.
    recent: Mutex<(Duration, Instant)>,
}

impl Lateness {
    /// No lateness yet.
    pub(crate) fn new() -> Lateness {
        Lateness {
            recent: Mutex::new((Duration::ZERO, Instant::now())),
        }
    }

    /// The lateness at `now`: the recorded maximum, halved for each half-life since.
    pub(crate) fn at(&self, now: Instant) -> Duration {
        let (late, since) = *self.recent.lock().unwrap_or_else(|e| e.into_inner());
        decayed(late, now.saturating_duration_since(since))
    }

    /// Takes in an answer `late` past its deadline at `now`.
    pub(crate) fn record(&self, late: Duration, now: Instant) {
        let mut recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        let (before, since) = *recent;
        let now = now.max(since);
        *recent = (late.max(decayed(before, now - since)), now);
    }
}

/// `late` after `elapsed` has passed.
fn decayed(late: Duration, elapsed: Duration) -> Duration {
    late.mul_f64(0.5f64.powf(elapsed.as_secs_f64() / HALF_LIFE.as_secs_f64()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lateness_is_a_maximum_that_halves_every_half_life() {
        let lateness = Lateness::new();
        let t0 = Instant::now();
        assert_eq!(lateness.at(t0), Duration::ZERO);
        lateness.record(Duration::from_millis(200), t0);
        // Many punctual answers at the same moment do not wash it out.
        for _ in 0..50 {
            lateness.record(Duration::ZERO, t0);
        }
        assert_eq!(lateness.at(t0), Duration::from_millis(200));
        let later = lateness.at(t0 + HALF_LIFE);
        assert!(
            later.abs_diff(Duration::from_millis(100)) < Duration::from_micros(1),
            "{later:?}"
        );
        lateness.record(Duration::from_millis(150), t0 + HALF_LIFE);
        assert_eq!(lateness.at(t0 + HALF_LIFE), Duration::from_millis(150));
    }
}
