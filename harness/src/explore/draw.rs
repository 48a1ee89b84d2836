//! The distribution `lockpick explore` draws fault schedules from: which faults, how many at
//! once, where in the workload and how big, every size spread log-uniformly over 0.1× to 3×
//! of the lock's lease (client pauses weighted toward more than one lease). Pure and seeded: the same seed draws the same sequence of schedules.
//!
//! A drawn fault is concrete data (a node name, a client index, milliseconds), never a range
//! or a "random-one", so that the run's schedule is the drawn one and the shrinker can change
//! one number at a time. It becomes an ordinary `[[nemesis]]` table ([`Drawn::entry`]), which
//! the fault's own parser reads. What is drawn for a fault, and into which of its fields, is
//! the fault's own declaration ([`crate::fault::Drawing`]): no fault is known here by name.

use super::workload::{draw_shape, BaseShape};
use crate::fault::{find_fault, Aim, Drawing, Sign};
use crate::vocab::PausePoint;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// The smallest and largest size drawn, as a multiple of the lease.
pub const SIZE_FACTORS: (f64, f64) = (0.1, 3.0);

/// At most this many faults in one schedule.
pub const MAX_FAULTS: usize = 3;

/// The longest workload drawn, as a multiple of the scenario's.
pub const LONGEST_RUN: u64 = 4;

pub use lockpick_store::explore::{Drawn, Schedule};

/// What the draw may choose from, fixed for one exploration.
#[derive(Debug, Clone)]
pub struct Space {
    /// Fault names the lock's servers can take (and `--faults` allows), in registration order.
    pub faults: Vec<&'static str>,
    /// The lock's nodes, `n1` … `nN`.
    pub nodes: Vec<String>,
    pub clients: usize,
    pub lease_ms: u64,
    pub duration_ms: u64,
    /// The points a client pause may stop this scenario's clients at, and those a client crash
    /// may kill them at: those the scenario loader accepts for its client kind (`during-op`
    /// needs an adapter process, and no crash takes it).
    pub pause_points: Vec<PausePoint>,
    pub crash_points: Vec<PausePoint>,
    /// The scenario's workload shape, which the draw spreads around (or keeps).
    pub shape: BaseShape,
}

impl Space {
    /// The points a client fault aimed as `aim` may be drawn at; `None` for a fault not aimed
    /// at a client.
    pub fn points_mut(&mut self, aim: Option<Aim>) -> Option<&mut Vec<PausePoint>> {
        match aim? {
            Aim::ClientPause => Some(&mut self.pause_points),
            Aim::ClientCrash => Some(&mut self.crash_points),
            Aim::Node | Aim::Once => None,
        }
    }
}

/// How fault `name` is drawn, as its module declares it; `None` for a name no fault has.
pub fn drawing(name: &str) -> Option<Drawing> {
    find_fault(name).map(|f| f.drawing())
}

/// What the harness adds to a drawn fault: its `[[nemesis]]` table and its line for people,
/// both as the fault's [`Drawing`] says (the record itself lives in `lockpick-store`).
pub trait DrawnExt {
    /// The fault's `[[nemesis]]` table.
    fn entry(&self) -> toml::Table;
    /// One line for people: `latency 312 ms on n1 at 1.200 s for 2.000 s`.
    fn describe(&self) -> String;
}

impl DrawnExt for Drawn {
    fn entry(&self) -> toml::Table {
        let mut t = toml::Table::new();
        let int = |v: u64| toml::Value::Integer(v.min(i64::MAX as u64) as i64);
        t.insert("fault".into(), self.fault.clone().into());
        t.insert("at_ms".into(), int(self.at_ms));
        match self.every_ms {
            Some(every) => {
                t.insert("every_ms".into(), int(every.max(1)));
            }
            None => {
                t.insert("count".into(), 1.into());
            }
        }
        if let Some(c) = self.client {
            t.insert("client".into(), int(c as u64));
        }
        if let Some(p) = &self.point {
            t.insert("point".into(), p.clone().into());
        }
        if let Some(o) = &self.op {
            t.insert("ops".into(), toml::Value::Array(vec![o.clone().into()]));
        }
        if let Some(n) = &self.node {
            t.insert("nodes".into(), toml::Value::Array(vec![n.clone().into()]));
        }
        let Some(drawing) = drawing(&self.fault) else {
            return t;
        };
        let size = self.size_ms.max(1);
        if let Some(field) = drawing.size {
            let value = match drawing.sign {
                Sign::Either if self.negative => -(size.min(i64::MAX as u64) as i64),
                Sign::Plain | Sign::Either | Sign::Amplitude => size.min(i64::MAX as u64) as i64,
            };
            t.insert(field.into(), value.into());
        }
        if let Some(field) = drawing.window {
            t.insert(field.into(), int(self.window_ms.unwrap_or(size).max(1)));
        }
        for (field, value) in (drawing.extra)(size) {
            t.insert(field.into(), value);
        }
        t
    }

    fn describe(&self) -> String {
        let mut s = self.fault.clone();
        if let Some(p) = &self.point {
            s.push_str(&format!(" {p}"));
        }
        if let Some(o) = &self.op {
            s.push_str(&format!(" ({o})"));
        }
        if let Some(d) = drawing(&self.fault).filter(|d| d.size.is_some()) {
            match d.sign {
                Sign::Either => s.push_str(&format!(
                    " {}{} ms",
                    if self.negative { "-" } else { "+" },
                    self.size_ms
                )),
                Sign::Amplitude => s.push_str(&format!(" ±{} ms", self.size_ms)),
                Sign::Plain => s.push_str(&format!(" {} ms", self.size_ms)),
            }
        }
        if let Some(c) = self.client {
            s.push_str(&format!(" on client {c}"));
        }
        if let Some(n) = &self.node {
            s.push_str(&format!(" on {n}"));
        }
        s.push_str(&format!(" at {:.3} s", self.at_ms as f64 / 1000.0));
        if let Some(every) = self.every_ms {
            s.push_str(&format!(" every {every} ms"));
        }
        if let Some(w) = self.window_ms {
            s.push_str(&format!(" for {:.3} s", w as f64 / 1000.0));
        }
        s
    }
}

/// A schedule's line for people.
pub trait ScheduleExt {
    /// `latency 312 ms on n1 at 1.200 s; hold 300-600 ms, …, 3 clients`.
    fn describe(&self) -> String;

    /// What shrinking left, for the terminal: `shrunk to 1 fault(s): …`, or `shrunk to no
    /// fault; …` when the workload alone breaks the lock; `not shrunk …` when the find did
    /// not reproduce reliably enough to shrink.
    fn shrunk_headline(&self, shrunk: bool) -> String;
}

impl ScheduleExt for Schedule {
    fn describe(&self) -> String {
        let faults = if self.faults.is_empty() {
            "no fault".to_owned()
        } else {
            let parts: Vec<String> = self.faults.iter().map(DrawnExt::describe).collect();
            parts.join(" + ")
        };
        match &self.workload {
            None => faults,
            Some(w) => format!("{faults}; {}, {} clients", w.describe(), self.clients),
        }
    }

    fn shrunk_headline(&self, shrunk: bool) -> String {
        let what = if shrunk {
            "shrunk to"
        } else {
            "not shrunk (it did not reproduce reliably):"
        };
        match self.faults.len() {
            0 => format!("{what} {}", self.describe()),
            n => format!("{what} {n} fault(s): {}", self.describe()),
        }
    }
}
/// A size drawn log-uniformly over [`SIZE_FACTORS`] × `lease_ms`: as many pauses of 0.1× to
/// 0.3× as of 1× to 3×, since short delays find races and long ones find expiries.
fn size(rng: &mut ChaCha8Rng, lease_ms: u64) -> u64 {
    let (lo, hi) = SIZE_FACTORS;
    let f = (rng.random_range(lo.ln()..=hi.ln())).exp();
    ((lease_ms as f64 * f).round() as u64).max(1)
}

/// A client pause's size: half the time over the whole range ([`size`]), half the time
/// between one and three leases. A pause shorter than the lease a holder has left cannot let
/// the lock move to another client, and whatever a lock's bug (a release that deletes
/// another's key, a renewal that extends another's), it needs the lock to move under the
/// stopped client; the lease left is at most one lease wherever the pause lands, so a pause
/// of more than one lease always outlasts it.
fn pause_size(rng: &mut ChaCha8Rng, lease_ms: u64) -> u64 {
    if rng.random_bool(0.5) {
        return size(rng, lease_ms);
    }
    long_pause(rng, lease_ms)
}

/// A pause between one and three leases, log-uniformly.
fn long_pause(rng: &mut ChaCha8Rng, lease_ms: u64) -> u64 {
    let f = rng.random_range(0.0..=SIZE_FACTORS.1.ln()).exp();
    ((lease_ms as f64 * f).round() as u64).max(1)
}

/// Draws one fault of kind `fault`, aimed at one of `clients` when it stops a client, in a
/// workload of `duration_ms`; `renews`: the watchdog runs, so a pause may stop a renewal.
fn draw_fault(
    rng: &mut ChaCha8Rng,
    space: &Space,
    fault: &'static str,
    (clients, duration_ms): (usize, u64),
    renews: bool,
) -> Drawn {
    let lease = space.lease_ms;
    // Late enough to find a holder, early enough that the run outlives the fault
    // ([`outlived`] moves it once the fault's length is drawn).
    let at_ms = rng.random_range(0..=duration_ms * 6 / 10);
    let mut d = Drawn {
        fault: fault.to_owned(),
        at_ms,
        size_ms: 0,
        window_ms: None,
        client: None,
        point: None,
        node: None,
        negative: false,
        op: None,
        every_ms: None,
    };
    let node = |rng: &mut ChaCha8Rng| space.nodes[rng.random_range(0..space.nodes.len())].clone();
    // Every point the client can stop at, those added later included (as the space allows).
    let point = |rng: &mut ChaCha8Rng, points: &[PausePoint]| {
        let all = if points.is_empty() {
            PausePoint::ALL
        } else {
            points
        };
        all[rng.random_range(0..all.len())].name().to_owned()
    };
    let window = |rng: &mut ChaCha8Rng| lease * rng.random_range(1..=3);
    let Some(drawing) = drawing(fault) else {
        return d;
    };
    match drawing.aim {
        Aim::ClientPause => {
            d.client = Some(rng.random_range(0..clients));
            // A pause inside each request (acquire, release, renew) is a place of its own:
            // a release that stops between its read and its write is where a release's bug
            // is, and a pause that stopped whichever request came first would seldom be it.
            let places = pause_places(&space.pause_points, renews);
            let (p, op) = places[rng.random_range(0..places.len())];
            d.point = Some(p.name().to_owned());
            d.op = op.map(str::to_owned);
            // A stop inside a request matters to the lock when the lease runs out meanwhile
            // (the lock moves between a release's read and its write, between an acquire's
            // check and its set, before a bare renewal); a long stop also covers every short
            // window a short one would, and short stops on the way are latency's and a
            // node pause's to draw.
            d.size_ms = if op.is_some() {
                long_pause(rng, lease)
            } else {
                pause_size(rng, lease)
            };
            // Half the pauses come again until the run ends, every half to one and a half
            // leases, as a GC that pauses often does; a pause inside a request always does.
            // It must land in a short window (between a release's read and its write, where
            // a two-round-trip release's bug is): in get-then-del's seeds 1-4, a single pause
            // longer than the lease found that bug in 1 of 5 runs, a recurring one in both runs
            // where no clock or crash explained the overlap first. Shrinking tries it once.
            if op.is_some() || rng.random_bool(0.5) {
                d.every_ms = Some(((lease as f64) * rng.random_range(0.5..=1.5)).round() as u64);
            }
        }
        Aim::ClientCrash => {
            d.client = Some(rng.random_range(0..clients));
            d.point = Some(point(rng, &space.crash_points));
        }
        Aim::Node => d.node = Some(node(rng)),
        Aim::Once => {}
    }
    // A client pause's size is its own (above); any other size, window and sign as declared,
    // drawn in this order so that a fault's draws stay where they were.
    if drawing.aim != Aim::ClientPause {
        if drawing.size.is_some() {
            d.size_ms = size(rng, lease);
        }
        if drawing.window.is_some() {
            d.window_ms = Some(window(rng));
        }
        if drawing.sign == Sign::Either {
            d.negative = rng.random_bool(0.5);
        }
    }
    d.at_ms = outlived(&d, duration_ms, lease);
    d
}

/// The start `at_ms` (drawn over the first 0.6 of the workload) moved, in proportion, into
/// the stretch after which the fault still ends a lease before the workload does: a pause
/// that ends after the last acquire tests nothing, and what a fault breaks shows only once
/// another client could take the lock after it (up to a lease later).
fn outlived(d: &Drawn, duration_ms: u64, lease_ms: u64) -> u64 {
    let length = drawing(&d.fault).map_or(0, |w| w.length_ms(d.size_ms, d.window_ms));
    let drawn_over = duration_ms * 6 / 10;
    let latest = duration_ms
        .saturating_sub(length + lease_ms)
        .min(drawn_over);
    if drawn_over == 0 {
        return d.at_ms.min(latest);
    }
    d.at_ms * latest / drawn_over
}

/// The places a client pause may stop at: each point, and `during-op` once per request it
/// may stop inside (a renewal only when the watchdog renews). Empty `points`: all of them.
fn pause_places(points: &[PausePoint], renews: bool) -> Vec<(PausePoint, Option<&'static str>)> {
    let all = if points.is_empty() {
        PausePoint::ALL
    } else {
        points
    };
    let ops: &[&'static str] = if renews {
        &["acquire", "release", "renew"]
    } else {
        &["acquire", "release"]
    };
    all.iter()
        .flat_map(|&p| match p {
            PausePoint::DuringOp => ops.iter().map(|&o| (p, Some(o))).collect::<Vec<_>>(),
            PausePoint::AfterAcquire | PausePoint::BeforeWrite | PausePoint::BeforeRelease => {
                vec![(p, None)]
            }
        })
        .collect()
}

/// Draws the next schedule: first the workload's shape and client count
/// ([`super::workload::draw_shape`]), then 1 to [`MAX_FAULTS`] faults (one half the time, so that single
/// faults, the easiest to read, are tried most), each of a kind drawn from `space`, a client
/// pause weighing as many kinds as it has places.
pub fn draw(rng: &mut ChaCha8Rng, space: &Space) -> Schedule {
    let (workload, clients) = draw_shape(rng, &space.shape, space.lease_ms);
    let duration_ms = draw_length(rng, space);
    let n = match rng.random_range(0..10) {
        0..5 => 1,
        5..8 => 2,
        _ => MAX_FAULTS,
    };
    // A client pause at each place (a point, or inside each request) is a fault of its own:
    // the lock sees each differently, so the kind weighs as many as it has places (and gains
    // weight when a point is added).
    let weight = |kind: &str| match drawing(kind).map(|d| d.aim) {
        Some(Aim::ClientPause) => pause_places(&space.pause_points, workload.watchdog).len(),
        // Wherever a client died, the lock sees the same: a client that never comes back
        // (the point decides only whether it wrote first), so a crash weighs one kind.
        Some(Aim::ClientCrash) => 1,
        Some(Aim::Node | Aim::Once) | None => 1,
    };
    let total: usize = space.faults.iter().map(|k| weight(k)).sum();
    let mut faults: Vec<Drawn> = (0..n)
        .map(|_| {
            let mut pick = rng.random_range(0..total);
            let kind = space
                .faults
                .iter()
                .copied()
                .find(|k| {
                    let w = weight(k);
                    let here = pick < w;
                    pick = pick.saturating_sub(w);
                    here
                })
                .expect("the weights add up to the total");
            draw_fault(rng, space, kind, (clients, duration_ms), workload.watchdog)
        })
        .collect();
    // A fault that happens once (failover) appears once at most.
    let mut seen_once = false;
    faults.retain(|d| {
        let once = drawing(&d.fault).is_some_and(|w| w.aim == Aim::Once);
        let keep = !(once && seen_once);
        seen_once |= once;
        keep
    });
    faults.sort_by_key(|d| d.at_ms);
    // A stop inside a request recurs until the run ends, and lands where a library's bug is
    // (between two of its round trips) only now and then: a run of the scenario's own length
    // gives it one or two tries.
    let duration_ms = if space.shape.drawn && faults.iter().any(|d| d.op.is_some()) {
        duration_ms.max(space.duration_ms * 2)
    } else {
        duration_ms
    };
    Schedule {
        faults,
        clients,
        duration_ms,
        workload: Some(workload),
    }
}

/// The workload's length: the scenario's half the time, else two or four times it (when the
/// shape is drawn at all). A race that one stop in a run rarely wins (a release stopped
/// between its read and its write, while a third client can still take the lock) gets more
/// tries in a longer run, so the rate at which its schedule reproduces rises with the
/// length; shrinking halves it back while the rate holds.
fn draw_length(rng: &mut ChaCha8Rng, space: &Space) -> u64 {
    if !space.shape.drawn {
        return space.duration_ms;
    }
    match rng.random_range(0..4) {
        0 | 1 => space.duration_ms,
        2 => space.duration_ms * 2,
        _ => space.duration_ms * LONGEST_RUN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fault::FAULTS;
    use rand::SeedableRng;

    fn space(faults: Vec<&'static str>) -> Space {
        Space {
            faults,
            nodes: vec!["n1".into(), "n2".into(), "n3".into()],
            clients: 4,
            lease_ms: 1000,
            duration_ms: 5000,
            pause_points: PausePoint::ALL.to_vec(),
            crash_points: PausePoint::ALL.to_vec(),
            shape: BaseShape {
                workload: super::super::workload::Workload {
                    hold_ms: [1, 5],
                    think_ms: [0, 10],
                    watchdog: false,
                },
                clients: 4,
                drawn: true,
            },
        }
    }

    fn all() -> Vec<&'static str> {
        FAULTS.iter().map(|f| f.name()).collect()
    }

    /// A latency of `size_ms` on n1 from `at_ms`, for 2 s.
    fn latency(at_ms: u64, size_ms: u64) -> Drawn {
        Drawn {
            fault: "latency".into(),
            at_ms,
            size_ms,
            window_ms: Some(2000),
            client: None,
            point: None,
            node: Some("n1".into()),
            negative: false,
            op: None,
            every_ms: None,
        }
    }

    #[test]
    fn a_shrunk_schedule_without_faults_says_no_fault() {
        let mut s = Schedule {
            faults: Vec::new(),
            clients: 2,
            duration_ms: 2000,
            workload: None,
        };
        assert_eq!(s.shrunk_headline(true), "shrunk to no fault");
        s.faults.push(latency(100, 86));
        let one = s.shrunk_headline(false);
        assert!(
            one.starts_with(
                "not shrunk (it did not reproduce reliably): 1 fault(s): latency 86 ms"
            ),
            "{one}"
        );
    }

    #[test]
    fn every_fault_draws_into_fields_it_reads() {
        for f in FAULTS {
            let d = f.drawing();
            let extra = (d.extra)(500);
            let fields = d
                .size
                .into_iter()
                .chain(d.window)
                .chain(extra.iter().map(|(field, _)| *field));
            for field in fields {
                assert!(
                    f.fields().contains(&field),
                    "{}: explore writes {field}, which it does not read",
                    f.name()
                );
            }
            assert!(
                d.window.is_none() || d.size.is_some(),
                "{}: a window holds a size",
                f.name()
            );
        }
    }

    #[test]
    fn the_same_seed_draws_the_same_schedules_and_another_seed_others() {
        let s = space(all());
        let seq = |seed| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            (0..50).map(|_| draw(&mut rng, &s)).collect::<Vec<_>>()
        };
        assert_eq!(seq(7), seq(7));
        assert_ne!(seq(7), seq(8));
    }

    #[test]
    fn sizes_stay_within_a_tenth_and_three_leases_and_spread_over_them() {
        let s = space(all());
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let (mut small, mut large) = (0, 0);
        for _ in 0..2000 {
            let sched = draw(&mut rng, &s);
            assert!((1..=MAX_FAULTS).contains(&sched.faults.len()));
            for d in &sched.faults {
                assert!(d.at_ms <= sched.duration_ms * 6 / 10, "{d:?}");
                if drawing(&d.fault).unwrap().size.is_none() {
                    assert_eq!(d.size_ms, 0);
                    continue;
                }
                assert!((100..=3000).contains(&d.size_ms), "{d:?}");
                small += (d.size_ms < 300) as u32;
                large += (d.size_ms > 1000) as u32;
                if let Some(c) = d.client {
                    assert!(c < sched.clients, "aimed at a client that runs");
                }
            }
        }
        assert!(small > 200 && large > 200, "small {small}, large {large}");
    }

    #[test]
    fn every_fault_ends_a_lease_before_the_workload_and_starts_spread_over_what_is_left() {
        // A pause or a cut that ends after the workload tests nothing: with a 5 s workload
        // and a 1 s lease, a fault of length L starts no later than 4 s - L.
        let s = space(all());
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let (mut late_short, mut shorts) = (0, 0);
        for _ in 0..2000 {
            let sched = draw(&mut rng, &s);
            for d in sched.faults {
                // A window when it has one, else its size (none: 0).
                let length = d.window_ms.unwrap_or(d.size_ms);
                assert!(d.at_ms + length + 1000 <= sched.duration_ms, "{d:?}");
                if length > 0 && length < 500 && sched.duration_ms == 5000 {
                    shorts += 1;
                    late_short += (d.at_ms > 2000) as u32;
                }
            }
        }
        // A short fault still starts anywhere in the first 0.6 of the workload (to 3 s).
        assert!(
            late_short * 5 > shorts,
            "{late_short} of {shorts} after 2 s"
        );
    }

    #[test]
    fn half_the_runs_are_the_scenarios_length_and_the_rest_two_or_four_times_it() {
        let s = space(all());
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let (mut by, mut inside) = (std::collections::BTreeMap::new(), 0);
        for _ in 0..2000 {
            let d = draw(&mut rng, &s);
            if d.faults.iter().any(|f| f.op.is_some()) {
                // A stop inside a request gets tries: twice the scenario's length at least.
                assert!(d.duration_ms >= 10_000, "{d:?}");
                inside += 1;
                continue;
            }
            *by.entry(d.duration_ms).or_insert(0) += 1;
        }
        let keys: Vec<u64> = by.keys().copied().collect();
        assert_eq!(keys, vec![5000, 10000, 20000]);
        let rest = 2000 - inside;
        assert!(inside > 100, "{inside}");
        assert!(
            (rest * 45 / 100..rest * 55 / 100).contains(&by[&5000]),
            "{by:?}"
        );
        // A fixed workload (a matrix cell's) keeps its length.
        let mut fixed = space(all());
        fixed.shape.drawn = false;
        assert!((0..200).all(|_| draw(&mut rng, &fixed).duration_ms == 5000));
    }

    #[test]
    fn most_client_pauses_outlast_a_whole_lease_those_inside_requests_all_and_short_ones_are_still_drawn(
    ) {
        let s = space(vec!["client-pause"]);
        let mut rng = ChaCha8Rng::seed_from_u64(12);
        let (mut longer, mut short, mut all) = (0, 0, 0);
        for _ in 0..2000 {
            for d in draw(&mut rng, &s).faults {
                if d.op.is_some() {
                    // Inside a request: always longer than a lease.
                    assert!((1000..=3000).contains(&d.size_ms), "{d:?}");
                    continue;
                }
                all += 1;
                longer += (d.size_ms > 1000) as u32;
                short += (d.size_ms < 300) as u32;
                assert!((100..=3000).contains(&d.size_ms), "{d:?}");
            }
        }
        // Half of them from 1x to 3x, and a third of the other half: about two in three.
        let share = longer as f64 / all as f64;
        assert!((0.6..0.73).contains(&share), "{share}");
        assert!(short as f64 / all as f64 > 0.1, "{short} of {all}");
    }

    #[test]
    fn only_the_faults_allowed_are_drawn_and_every_one_of_them_is() {
        let s = space(vec!["latency", "partition"]);
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..200 {
            for d in draw(&mut rng, &s).faults {
                assert!(
                    ["latency", "partition"].contains(&d.fault.as_str()),
                    "{d:?}"
                );
                seen.insert(d.fault);
            }
        }
        assert_eq!(seen.len(), 2);
    }

    #[test]
    fn a_client_pause_weighs_as_many_kinds_as_it_has_places() {
        let s = space(vec!["client-pause", "latency"]);
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let (mut pauses, mut all) = (0, 0);
        for _ in 0..2000 {
            for d in draw(&mut rng, &s).faults {
                all += 1;
                pauses += (d.fault == "client-pause") as usize;
            }
        }
        let share = pauses as f64 / all as f64;
        // `during-op` counts once per request it stops inside: acquire and release (the
        // space's scenario does not renew).
        let places = PausePoint::ALL.len() + 1;
        let want = places as f64 / (places + 1) as f64;
        assert!((share - want).abs() < 0.05, "share {share}, want {want}");
    }

    #[test]
    fn a_client_crash_weighs_one_kind_whatever_its_points() {
        let s = space(vec!["client-crash", "latency"]);
        let mut rng = ChaCha8Rng::seed_from_u64(13);
        let (mut crashes, mut all) = (0, 0);
        let mut points = std::collections::BTreeSet::new();
        for _ in 0..2000 {
            for d in draw(&mut rng, &s).faults {
                all += 1;
                if d.fault == "client-crash" {
                    crashes += 1;
                    points.insert(d.point.unwrap());
                }
            }
        }
        let share = crashes as f64 / all as f64;
        assert!((0.45..0.55).contains(&share), "share {share}");
        assert!(points.len() > 1, "its point is still drawn: {points:?}");
    }

    #[test]
    fn a_pause_inside_requests_names_one_and_a_renewal_only_when_the_watchdog_runs() {
        let mut s = space(vec!["client-pause"]);
        let mut seen = std::collections::BTreeSet::new();
        for watchdog in [false, true] {
            s.shape.workload.watchdog = watchdog;
            let mut rng = ChaCha8Rng::seed_from_u64(4);
            for _ in 0..600 {
                let sched = draw(&mut rng, &s);
                for d in sched.faults {
                    let inside = d.point.as_deref() == Some("during-op");
                    assert_eq!(d.op.is_some(), inside, "{d:?}");
                    if let Some(op) = d.op.clone() {
                        let renews = sched.workload.as_ref().unwrap().watchdog;
                        assert!(op != "renew" || renews, "a renewal without a watchdog");
                        assert_eq!(
                            d.entry()["ops"].as_array().unwrap()[0].as_str(),
                            Some(op.as_str())
                        );
                        seen.insert(op);
                    }
                }
            }
        }
        assert_eq!(seen.len(), 3, "{seen:?}");
    }

    #[test]
    fn half_the_client_pauses_between_requests_recur_those_inside_all_do_and_nothing_else_does() {
        let s = space(all());
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        let (mut pauses, mut recurring) = (0, 0);
        for _ in 0..2000 {
            for d in draw(&mut rng, &s).faults {
                if d.fault != "client-pause" {
                    assert_eq!(d.every_ms, None, "{d:?}");
                    assert_eq!(d.entry()["count"].as_integer(), Some(1));
                    continue;
                }
                if d.op.is_some() {
                    assert!(
                        d.every_ms.is_some(),
                        "a pause inside a request recurs: {d:?}"
                    );
                    continue;
                }
                pauses += 1;
                if let Some(every) = d.every_ms {
                    recurring += 1;
                    assert!((500..=1500).contains(&every), "{d:?}");
                    assert_eq!(d.entry()["every_ms"].as_integer(), Some(every as i64));
                    assert!(!d.entry().contains_key("count"), "until the run ends");
                }
            }
        }
        let share = recurring as f64 / pauses as f64;
        assert!((0.45..0.55).contains(&share), "{share}");
    }

    #[test]
    fn every_pause_point_is_drawn() {
        let s = space(vec!["client-pause"]);
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..300 {
            for d in draw(&mut rng, &s).faults {
                seen.insert(d.point.unwrap());
            }
        }
        assert_eq!(seen.len(), PausePoint::ALL.len());
    }

    #[test]
    fn an_entry_has_the_faults_own_fields_with_the_drawn_numbers() {
        let d = latency(1200, 312);
        let e = d.entry();
        assert_eq!(e["latency_ms"].as_integer(), Some(312));
        assert_eq!(e["duration_ms"].as_integer(), Some(2000));
        assert_eq!(e["count"].as_integer(), Some(1));
        assert_eq!(d.describe(), "latency 312 ms on n1 at 1.200 s for 2.000 s");
    }
}
