//! Redlock's arithmetic: the quorum of N masters, the clock drift allowance and the validity
//! left after an acquisition, done on `Duration`s so it can neither underflow nor wrap.

use std::time::Duration;

/// How many masters must grant the lock: a strict majority, `n / 2 + 1`.
pub fn quorum(n: usize) -> usize {
    n / 2 + 1
}

/// The allowance for clock drift between client and masters: 1 % of the TTL plus 2 ms, as in
/// the published algorithm. Rounded up so the allowance is never smaller than the formula.
pub fn drift(ttl: Duration) -> Duration {
    let ttl_us = u64::try_from(ttl.as_micros()).unwrap_or(u64::MAX);
    Duration::from_micros(ttl_us.div_ceil(100)) + Duration::from_millis(2)
}

/// The time the client may use the lock after taking `elapsed` to acquire it with `ttl`:
/// `ttl − elapsed − drift`, or `None` when that is zero or less (the lock is not held even
/// with a majority).
pub fn validity(ttl: Duration, elapsed: Duration) -> Option<Duration> {
    ttl.checked_sub(elapsed)
        .and_then(|left| left.checked_sub(drift(ttl)))
        .filter(|v| !v.is_zero())
}

/// The longest the client may use the lock counted from the start of the acquisition:
/// `ttl − drift` (saturating). The client's own lease check counts from the start, so this is
/// the lease a grant carries.
pub fn lease_from_start(ttl: Duration) -> Duration {
    ttl.saturating_sub(drift(ttl))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn quorum_is_a_strict_majority() {
        assert_eq!(quorum(1), 1);
        assert_eq!(quorum(2), 2);
        assert_eq!(quorum(3), 2);
        assert_eq!(quorum(4), 3);
        assert_eq!(quorum(5), 3);
        assert_eq!(quorum(7), 4);
    }

    #[test]
    fn drift_is_one_percent_plus_two_ms_rounded_up() {
        assert_eq!(drift(MS(1000)), MS(12));
        assert_eq!(drift(MS(10_000)), MS(102));
        // 1 % of 150 ms is 1.5 ms.
        assert_eq!(drift(MS(150)), Duration::from_micros(3500));
        assert_eq!(drift(Duration::from_micros(1)), Duration::from_micros(2001));
        assert_eq!(drift(Duration::ZERO), MS(2));
    }

    #[test]
    fn validity_subtracts_elapsed_and_drift() {
        assert_eq!(validity(MS(1000), MS(100)), Some(MS(888)));
        assert_eq!(validity(MS(1000), Duration::ZERO), Some(MS(988)));
    }

    #[test]
    fn validity_is_none_when_acquisition_took_the_whole_ttl_or_longer() {
        // Exactly used up by elapsed + drift.
        assert_eq!(validity(MS(1000), MS(988)), None);
        // Drift alone exceeds what is left.
        assert_eq!(validity(MS(1000), MS(995)), None);
        assert_eq!(validity(MS(1000), MS(1000)), None);
        // Far longer than the TTL: no underflow, no wrap to a huge validity.
        assert_eq!(validity(MS(1000), MS(60_000)), None);
        assert_eq!(validity(MS(1000), Duration::MAX), None);
        assert_eq!(validity(MS(1), Duration::ZERO), None);
        assert_eq!(validity(Duration::ZERO, Duration::ZERO), None);
    }

    #[test]
    fn validity_never_exceeds_the_lease_counted_from_the_start() {
        for elapsed in [0, 1, 10, 500, 987, 988, 2000] {
            if let Some(v) = validity(MS(1000), MS(elapsed)) {
                assert_eq!(v + MS(elapsed), lease_from_start(MS(1000)));
            }
        }
        assert_eq!(lease_from_start(MS(1)), Duration::ZERO);
        assert_eq!(
            lease_from_start(Duration::MAX),
            Duration::MAX - drift(Duration::MAX)
        );
    }
}
