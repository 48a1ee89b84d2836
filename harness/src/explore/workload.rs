//! The workload shape `lockpick explore` draws beside the faults: how long a holder keeps the
//! lock, how long it waits before the next acquire, how many clients contend, and whether
//! lockpick's watchdog renews the lease. Some bugs need no fault at all but a shape: a release
//! that straddles the lease's end needs holds close to the lease, and a renewal after the
//! lease ran out needs holds long enough for the watchdog to renew. Pure and seeded.
//!
//! Hold and think times are spread log-uniformly relative to the lease (holds over
//! [`HOLD_FACTORS`], thinks over [`THINK_FACTORS`]); a quarter of the draws keep the
//! scenario's own shape, so the faults-only search the scenario was written for is still
//! tried. The watchdog is drawn only when the scenario renews (`watchdog = true`): that is
//! the scenario's statement that its client supports `renew` (the adapter refuses the run
//! otherwise), and a lock that cannot renew is never asked to.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

pub use lockpick_store::explore::Workload;

/// The shortest and longest hold drawn, as a multiple of the lease.
pub const HOLD_FACTORS: (f64, f64) = (0.01, 1.5);

/// The shortest and longest wait between a release and the next acquire, as a multiple of
/// the lease.
pub const THINK_FACTORS: (f64, f64) = (0.005, 0.5);

/// The most clients drawn: each is a process on a shared machine.
pub const MAX_CLIENTS: usize = 8;

/// The scenario's own shape, which the draw spreads around and shrinking goes back to.
#[derive(Debug, Clone, PartialEq)]
pub struct BaseShape {
    pub workload: Workload,
    pub clients: usize,
    /// Whether the draw may change the shape at all (`--no-workload` keeps the scenario's).
    pub drawn: bool,
}

/// A value log-uniform over `factors` × `lease_ms`, at least 1 ms.
fn spread(rng: &mut ChaCha8Rng, lease_ms: u64, factors: (f64, f64)) -> u64 {
    let (lo, hi) = factors;
    let f = rng.random_range(lo.ln()..=hi.ln()).exp();
    ((lease_ms as f64 * f).round() as u64).max(1)
}

/// Draws a workload shape and a client count: the scenario's own a quarter of the time.
pub fn draw_shape(rng: &mut ChaCha8Rng, base: &BaseShape, lease_ms: u64) -> (Workload, usize) {
    if !base.drawn || rng.random_range(0..4) == 0 {
        return (base.workload.clone(), base.clients);
    }
    let hold = spread(rng, lease_ms, HOLD_FACTORS);
    let think = spread(rng, lease_ms, THINK_FACTORS);
    // A watchdog the scenario has may be switched off: a holder that renews hides expiries.
    let watchdog = base.workload.watchdog && rng.random_range(0..4) != 0;
    let most = (base.clients * 2).clamp(2, MAX_CLIENTS.max(base.clients));
    let clients = rng.random_range(2..=most);
    (
        Workload {
            // A range, not a fixed value: each hold differs, so some end near the lease's end.
            hold_ms: [hold / 2, hold],
            think_ms: [0, think],
            watchdog,
        },
        clients,
    )
}

/// The reductions of a drawn shape toward the scenario's own, simplest first: the whole
/// shape back to the scenario's, the watchdog back, holds halved (not below the
/// scenario's), thinks back. Each is `(what changed, the shape it makes)`.
pub fn shape_candidates(w: &Workload, base: &Workload) -> Vec<(String, Workload)> {
    let mut out = Vec::new();
    if w == base {
        return out;
    }
    out.push((
        format!(
            "the scenario's own workload ({}) instead of {}",
            base.describe(),
            w.describe()
        ),
        base.clone(),
    ));
    if w.watchdog != base.watchdog {
        out.push((
            format!(
                "watchdog {} as in the scenario",
                if base.watchdog { "on" } else { "off" }
            ),
            Workload {
                watchdog: base.watchdog,
                ..w.clone()
            },
        ));
    }
    let [lo, hi] = w.hold_ms;
    if hi / 2 >= base.hold_ms[1] && hi / 2 < hi {
        let nh = [(lo / 2).max(base.hold_ms[0]).min(hi / 2), hi / 2];
        out.push((
            format!("hold {lo}-{hi} ms → {}-{} ms", nh[0], nh[1]),
            Workload {
                hold_ms: nh,
                ..w.clone()
            },
        ));
    }
    if w.think_ms != base.think_ms {
        out.push((
            format!(
                "think {}-{} ms → {}-{} ms as in the scenario",
                w.think_ms[0], w.think_ms[1], base.think_ms[0], base.think_ms[1]
            ),
            Workload {
                think_ms: base.think_ms,
                ..w.clone()
            },
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn base() -> BaseShape {
        BaseShape {
            workload: Workload {
                hold_ms: [1, 5],
                think_ms: [0, 10],
                watchdog: true,
            },
            clients: 4,
            drawn: true,
        }
    }

    #[test]
    fn holds_spread_from_a_hundredth_to_one_and_a_half_leases_and_the_base_is_kept_a_quarter_of_the_time(
    ) {
        let b = base();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let (mut kept, mut short, mut past_lease, mut no_watchdog) = (0, 0, 0, 0);
        let n = 4000;
        for _ in 0..n {
            let (w, clients) = draw_shape(&mut rng, &b, 1000);
            assert!((2..=8).contains(&clients), "{clients}");
            if w == b.workload && clients == b.clients {
                kept += 1;
                continue;
            }
            let [lo, hi] = w.hold_ms;
            assert!((10..=1500).contains(&hi) && lo <= hi, "{w:?}");
            assert!(w.think_ms[1] <= 500 && w.think_ms[0] == 0, "{w:?}");
            short += (hi < 100) as u32;
            past_lease += (hi > 1000) as u32;
            no_watchdog += (!w.watchdog) as u32;
        }
        let share = kept as f64 / n as f64;
        assert!((0.2..0.3).contains(&share), "kept {share}");
        assert!(short > 300 && past_lease > 100, "{short} {past_lease}");
        assert!(no_watchdog > 300, "the watchdog is switched off too");
    }

    #[test]
    fn a_scenario_without_a_watchdog_is_never_renewed_and_no_draw_keeps_its_shape() {
        let mut b = base();
        b.workload.watchdog = false;
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        for _ in 0..500 {
            assert!(!draw_shape(&mut rng, &b, 1000).0.watchdog);
        }
        b.drawn = false;
        for _ in 0..50 {
            assert_eq!(draw_shape(&mut rng, &b, 1000), (b.workload.clone(), 4));
        }
    }

    #[test]
    fn the_same_seed_draws_the_same_shapes() {
        let b = base();
        let seq = |seed| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            (0..30)
                .map(|_| draw_shape(&mut rng, &b, 800))
                .collect::<Vec<_>>()
        };
        assert_eq!(seq(5), seq(5));
        assert_ne!(seq(5), seq(6));
    }

    #[test]
    fn shrinking_a_shape_goes_back_toward_the_scenarios_and_ends_there() {
        let b = base().workload;
        let drawn = Workload {
            hold_ms: [600, 1200],
            think_ms: [0, 300],
            watchdog: false,
        };
        let c = shape_candidates(&drawn, &b);
        assert_eq!(c[0].1, b, "the scenario's own shape first");
        assert!(c
            .iter()
            .any(|(_, w)| w.watchdog && w.hold_ms == [600, 1200]));
        assert!(c.iter().any(|(_, w)| w.hold_ms == [300, 600]));
        assert!(c.iter().any(|(_, w)| w.think_ms == [0, 10]));
        assert!(shape_candidates(&b, &b).is_empty());
        // Halving the hold alone ends at the scenario's holds, never below them.
        let mut w = Workload {
            watchdog: true,
            think_ms: [0, 10],
            ..drawn
        };
        let mut steps = 0;
        while let Some((_, next)) = shape_candidates(&w, &b)
            .into_iter()
            .find(|(what, _)| what.starts_with("hold"))
        {
            assert!(
                next.hold_ms[1] < w.hold_ms[1] && next.hold_ms[1] >= 5,
                "{next:?}"
            );
            assert!(next.hold_ms[0] <= next.hold_ms[1]);
            w = next;
            steps += 1;
            assert!(steps < 20);
        }
        assert!(w.hold_ms[1] < 10, "{w:?}");
    }
}
