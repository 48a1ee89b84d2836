//! What every history verb means for fault windows, decided once per verb: whether it opens a
//! window, closes one or is a client operation; for an opener, how its window ends and the
//! colour of its band in the reports.
//!
//! [`role`] is an exhaustive match on [`F`], so a new verb does not compile until it is decided
//! here. The window logic ([`crate::faults`]), the reports' fault bands and the harness's faults
//! all read this table instead of guessing from verb names.

use crate::history::F;

/// What a verb does to fault windows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Role {
    /// A client operation: it has nothing to do with faults.
    Client,
    /// A nemesis verb that opens a window.
    Opens(Opener),
    /// A nemesis verb that ends the windows of every opener naming it in [`Ends::HealedBy`].
    Closes,
}

/// What a nemesis event is aimed at: a client (its `value.client` is set) or nodes (the ones
/// in `value.nodes`, or every node when it names none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Nodes,
    Client,
}

impl Target {
    /// The target of a nemesis event (or window) whose client is `client`.
    pub fn of(client: Option<u64>) -> Target {
        match client {
            Some(_) => Target::Client,
            None => Target::Nodes,
        }
    }
}

/// How the window an opener opens ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ends {
    /// At a completion without error of this verb (a [`Role::Closes`] verb). On nodes, once
    /// every node the window names has been named by one; on a client, at one naming that
    /// client. A closer naming neither nodes nor a client ends every window it heals, and a
    /// window naming no node is ended by any closer of its verb.
    HealedBy(F),
    /// Where it opens: a point in time, not a stretch during which the system was degraded.
    Instant,
    /// Never: nothing heals it, so it stays open to the end of the history.
    Never,
}

/// An opener's row of the table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Opener {
    /// How its window ends when it is aimed at nodes.
    pub on_nodes: Ends,
    /// How its window ends when it is aimed at a client.
    pub on_client: Ends,
    /// The colour of its band in the reports' charts.
    pub band: Rgba,
}

impl Opener {
    /// How its window ends when aimed at `target`.
    pub fn ends(&self, target: Target) -> Ends {
        match target {
            Target::Nodes => self.on_nodes,
            Target::Client => self.on_client,
        }
    }
}

/// A colour and its opacity as plain numbers, so that the checker needs no drawing library;
/// the reports turn it into theirs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rgba {
    pub r: u8,
    pub g: u8,
    pub b: u8,
    /// Opacity, from 0 (transparent) to 1.
    pub alpha: f64,
}

const fn rgba(r: u8, g: u8, b: u8, alpha: f64) -> Rgba {
    Rgba { r, g, b, alpha }
}

/// The table: what `f` does to fault windows.
pub const fn role(f: F) -> Role {
    use Ends::{HealedBy, Instant, Never};
    match f {
        F::Acquire | F::Release | F::Renew | F::Write | F::Read | F::Cas | F::Notice => {
            Role::Client
        }
        // Network faults act on nodes' links; nothing records a heal for one aimed at a
        // client.
        F::Partition => Role::Opens(Opener {
            on_nodes: HealedBy(F::Heal),
            on_client: Never,
            band: rgba(142, 36, 170, 0.16),
        }),
        F::Slow => Role::Opens(Opener {
            on_nodes: HealedBy(F::Heal),
            on_client: Never,
            band: rgba(253, 216, 53, 0.30),
        }),
        F::Pause => Role::Opens(Opener {
            on_nodes: HealedBy(F::Resume),
            on_client: HealedBy(F::Resume),
            band: rgba(255, 152, 0, 0.20),
        }),
        // A crashed client never comes back (its logical client goes on under a fresh
        // process): the crash is an instant, which does not excuse a later lack of progress.
        F::Crash => Role::Opens(Opener {
            on_nodes: HealedBy(F::Restart),
            on_client: Instant,
            band: rgba(97, 97, 97, 0.20),
        }),
        F::Clock => Role::Opens(Opener {
            on_nodes: HealedBy(F::ClockReset),
            on_client: HealedBy(F::ClockReset),
            band: rgba(120, 144, 156, 0.20),
        }),
        // The old primary stays down: starting it again would make a second primary.
        F::Failover => Role::Opens(Opener {
            on_nodes: Never,
            on_client: Never,
            band: rgba(198, 40, 40, 0.14),
        }),
        F::Heal | F::Resume | F::Restart | F::ClockReset => Role::Closes,
    }
}

/// The row of `f` if it opens windows.
pub fn opener(f: F) -> Option<Opener> {
    match role(f) {
        Role::Opens(o) => Some(o),
        Role::Client | Role::Closes => None,
    }
}

/// True when `closer` ends a window that `opener` opened on `target`.
pub fn closes(closer: F, opener: F, target: Target) -> bool {
    self::opener(opener).is_some_and(|o| o.ends(target) == Ends::HealedBy(closer))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TARGETS: [Target; 2] = [Target::Nodes, Target::Client];

    #[test]
    fn every_verb_of_f_all_is_listed_once_clients_first_as_their_role_says() {
        for (i, f) in F::ALL.iter().enumerate() {
            assert!(!F::ALL[..i].contains(f), "{f} listed twice in F::ALL");
        }
        // F::ALL promises the client verbs first; the table must agree on which they are.
        let clients = F::ALL.iter().take_while(|f| role(**f) == Role::Client);
        assert_eq!(
            clients.map(|f| f.name()).collect::<Vec<_>>(),
            ["acquire", "release", "renew", "write", "read", "cas", "notice"]
        );
        let nemesis: Vec<&str> = F::ALL[7..].iter().map(|f| f.name()).collect();
        assert!(
            F::ALL[7..].iter().all(|f| role(*f) != Role::Client),
            "a client verb after the nemesis verbs: {nemesis:?}"
        );
        assert_eq!(
            nemesis,
            [
                "partition",
                "slow",
                "heal",
                "pause",
                "resume",
                "crash",
                "restart",
                "clock",
                "clock-reset",
                "failover"
            ]
        );
    }

    #[test]
    fn every_opener_is_healed_by_a_closer_or_declared_unhealed_and_every_closer_heals() {
        for &f in &F::ALL {
            let Some(o) = opener(f) else { continue };
            for target in TARGETS {
                if let Ends::HealedBy(c) = o.ends(target) {
                    assert_eq!(role(c), Role::Closes, "{f} on {target:?} healed by {c}");
                    assert!(F::ALL.contains(&c), "{c} missing from F::ALL");
                }
            }
        }
        for &c in F::ALL.iter().filter(|c| role(**c) == Role::Closes) {
            let heals = F::ALL
                .iter()
                .any(|&f| TARGETS.iter().any(|&t| closes(c, f, t)));
            assert!(heals, "{c} is a closer no opener names");
        }
        // Faults on nodes are all healed but a failover; one on a client is healed when paused or
        // clock-moved, an instant when crashed, and never for the rest.
        let unhealed: Vec<(F, Target, Ends)> = F::ALL
            .iter()
            .filter_map(|&f| opener(f).map(|o| (f, o)))
            .flat_map(|(f, o)| TARGETS.map(|t| (f, t, o.ends(t))))
            .filter(|(_, _, e)| !matches!(e, Ends::HealedBy(_)))
            .collect();
        assert_eq!(
            unhealed,
            [
                (F::Partition, Target::Client, Ends::Never),
                (F::Slow, Target::Client, Ends::Never),
                (F::Crash, Target::Client, Ends::Instant),
                (F::Failover, Target::Nodes, Ends::Never),
                (F::Failover, Target::Client, Ends::Never),
            ]
        );
    }

    #[test]
    fn each_closer_heals_exactly_these_openers_on_these_targets() {
        // Each (closer, opener, target) that ends a window; every other combination does not.
        let pairs = [
            (F::Heal, F::Partition, Target::Nodes),
            (F::Heal, F::Slow, Target::Nodes),
            (F::Resume, F::Pause, Target::Nodes),
            (F::Resume, F::Pause, Target::Client),
            (F::Restart, F::Crash, Target::Nodes),
            (F::ClockReset, F::Clock, Target::Nodes),
            (F::ClockReset, F::Clock, Target::Client),
        ];
        for &c in &F::ALL {
            for &f in &F::ALL {
                for t in TARGETS {
                    assert_eq!(
                        closes(c, f, t),
                        pairs.contains(&(c, f, t)),
                        "{c} closing {f} on {t:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn every_opener_has_a_visible_band_of_its_own() {
        let bands: Vec<(F, Rgba)> = F::ALL
            .iter()
            .filter_map(|&f| opener(f).map(|o| (f, o.band)))
            .collect();
        for (i, (f, band)) in bands.iter().enumerate() {
            assert!(
                band.alpha > 0.0 && band.alpha <= 1.0,
                "{f}: alpha {}",
                band.alpha
            );
            let same = bands[..i]
                .iter()
                .find(|(_, b)| (b.r, b.g, b.b) == (band.r, band.g, band.b));
            assert!(
                same.is_none(),
                "{f} has the colour of {:?}",
                same.map(|s| s.0)
            );
        }
    }
}
