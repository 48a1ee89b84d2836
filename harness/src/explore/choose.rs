//! The search's choices, pure: which finds are re-run once the budget is spent, which find is
//! shrunk, when a find that came back too seldom is tried on a longer run, and which of two
//! confirmations is kept.

use super::classify::Found;
use super::draw::Schedule;

/// How many finds of the classes that do not stop the search are re-run once the budget is
/// spent, when no bug of the lock was found.
const LATER_TRIES: usize = 6;

/// The finds to re-run after the search, from `finds` (class, run number) in the order found:
/// the first of each class, worst class first, then the second of each, and so on, at most
/// [`LATER_TRIES`]: one class whose finds never reproduce does not use up the tries of the next.
pub(super) fn later_order(finds: &[(Found, usize)]) -> Vec<(Found, usize)> {
    let mut ranked: Vec<(usize, Found, usize)> = finds
        .iter()
        .enumerate()
        .map(|(i, &(c, n))| {
            let nth = finds[..i].iter().filter(|&&(d, _)| d == c).count();
            (nth, c, n)
        })
        .collect();
    ranked.sort();
    ranked
        .into_iter()
        .take(LATER_TRIES)
        .map(|(_, c, n)| (c, n))
        .collect()
}

/// Whether a find that reproduced `hits` of `runs`, too seldom, is worth a run twice as long:
/// when it came back at all, the first time (`before` is `None`); after that only while the
/// rate rises over the last length's, since a race that more tries per run wins more often
/// shows it by climbing, and one that does not climb will not reach the rate wanted.
pub(super) fn lengthen_again(before: Option<(u32, u32)>, hits: u32, runs: u32) -> bool {
    hits > 0 && before.is_none_or(|b| higher_rate((hits, runs), b))
}

/// Whether `a` (hits, runs) is a higher reproduction rate than `b`.
fn higher_rate(a: (u32, u32), b: (u32, u32)) -> bool {
    u64::from(a.0) * u64::from(b.1) > u64::from(b.0) * u64::from(a.1)
}

/// A schedule's confirming runs: it, its hits, its runs, and the seed of its first hit.
pub(super) type Confirmed = (Schedule, u32, u32, Option<u64>);

/// The confirmation with the higher rate; `shorter` (the one before a lengthening) on a tie.
pub(super) fn better(shorter: Confirmed, longer: Confirmed) -> Confirmed {
    if higher_rate((longer.1, longer.2), (shorter.1, shorter.2)) {
        longer
    } else {
        shorter
    }
}

/// The find to shrink: its class, its run, and the schedule that reproduced it, if one did.
pub(super) type Best = Option<(Found, usize, Option<Schedule>)>;

/// Offers run `n`'s find to `best`: it becomes the find when it reproduced, or when there is
/// none yet (a find that came back too seldom is still reported, not shrunk). True when it
/// reproduced.
pub(super) fn offer(best: &mut Best, class: Found, n: usize, reproduced: Option<Schedule>) -> bool {
    let ok = reproduced.is_some();
    if ok || best.is_none() {
        *best = Some((class, n, reproduced));
    }
    ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lengthened_confirmation_is_kept_only_when_its_rate_is_higher() {
        let at = |ms: u64, hits: u32, runs: u32| -> Confirmed {
            let schedule = Schedule {
                faults: Vec::new(),
                clients: 2,
                duration_ms: ms,
                workload: None,
            };
            (schedule, hits, runs, Some(1))
        };
        assert_eq!(
            better(at(5000, 7, 10), at(10_000, 9, 10)).0.duration_ms,
            10_000
        );
        assert_eq!(
            better(at(5000, 7, 10), at(10_000, 6, 10)).0.duration_ms,
            5000
        );
        assert_eq!(
            better(at(5000, 7, 10), at(10_000, 7, 10)).0.duration_ms,
            5000,
            "a tie keeps the shorter"
        );
    }

    #[test]
    fn a_find_too_seldom_is_lengthened_while_its_rate_rises() {
        assert!(lengthen_again(None, 1, 3), "came back once: try longer");
        assert!(!lengthen_again(None, 0, 2), "never came back");
        assert!(lengthen_again(Some((1, 3)), 3, 5), "1/3 to 3/5 rises");
        assert!(!lengthen_again(Some((3, 5)), 3, 5), "no rise: stop");
        assert!(!lengthen_again(Some((3, 5)), 1, 3), "fell: stop");
        assert!(!lengthen_again(Some((1, 3)), 0, 2));
    }

    #[test]
    fn later_finds_are_re_run_a_class_at_a_time_worst_first_and_capped() {
        use Found::{Clock, Kleppmann, NodeRestart};
        let finds = [
            (Kleppmann, 2),
            (Clock, 5),
            (Kleppmann, 7),
            (Clock, 9),
            (Clock, 11),
            (NodeRestart, 12),
            (Kleppmann, 14),
            (Clock, 20),
        ];
        assert_eq!(
            later_order(&finds),
            vec![
                (Clock, 5),
                (NodeRestart, 12),
                (Kleppmann, 2),
                (Clock, 9),
                (Kleppmann, 7),
                (Clock, 11),
            ]
        );
        assert!(later_order(&[]).is_empty());
        assert_eq!(later_order(&[(Kleppmann, 3)]), vec![(Kleppmann, 3)]);
    }
}
