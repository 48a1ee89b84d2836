//! How `lockpick explore` draws a fault and writes the drawn numbers back into its own
//! `[[nemesis]]` fields: declared by each fault ([`super::FaultKind::drawing`]) and read by
//! explore's draw and shrink, which know no fault by name.

/// What explore draws a fault against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aim {
    /// Stops one client at a pause point (and, for an adapter, inside one of its requests);
    /// explore weighs it by its places and lets it recur (`client`, `point`, `ops`).
    ClientPause,
    /// Kills one client at a point, once; wherever it dies, the lock sees the same
    /// (`client`, `point`).
    ClientCrash,
    /// Hits one node of the lock (`nodes`).
    Node,
    /// Nothing is drawn: the fault happens once, with its own defaults (failover), and appears
    /// once at most in a schedule.
    Once,
}

impl Aim {
    /// Whether it is drawn against a client (at a point) rather than the lock's servers.
    pub fn at_client(self) -> bool {
        match self {
            Aim::ClientPause | Aim::ClientCrash => true,
            Aim::Node | Aim::Once => false,
        }
    }
}

/// How a drawn size reads and is written: a plain length, a signed move, or an amplitude.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sign {
    /// `312 ms`.
    Plain,
    /// Drawn forward or back, half the time each: `+312 ms`, `-312 ms` (a clock jump).
    Either,
    /// Swings both ways around real time: `±312 ms` (a clock strobe).
    Amplitude,
}

/// A fault's declaration to explore: what it is aimed at, where its drawn size goes and
/// whether it has a window of one to three leases over which that size applies.
#[derive(Debug, Clone, Copy)]
pub struct Drawing {
    pub aim: Aim,
    /// The field the drawn size (0.1× to 3× the lease) is written to; `None`: no size.
    pub size: Option<&'static str>,
    pub sign: Sign,
    /// The field a window of one to three leases is written to, when the size is not the
    /// fault's length (a latency of 300 ms for 2 s); `None`: the size is its length.
    pub window: Option<&'static str>,
    /// Fields fixed or derived from the drawn size (a clock rate, a strobe's period).
    pub extra: fn(size_ms: u64) -> Vec<(&'static str, toml::Value)>,
}

impl Drawing {
    /// A fault on one node whose length is the drawn size, written to `duration_ms`.
    pub const fn node_window() -> Drawing {
        Drawing {
            aim: Aim::Node,
            size: Some("duration_ms"),
            sign: Sign::Plain,
            window: None,
            extra: no_extra,
        }
    }

    /// A fault on one node of size `size` held for a window of one to three leases
    /// (`duration_ms`).
    pub const fn node_size_over_window(size: &'static str, sign: Sign) -> Drawing {
        Drawing {
            aim: Aim::Node,
            size: Some(size),
            sign,
            window: Some("duration_ms"),
            extra: no_extra,
        }
    }

    /// A fault with no size, drawn as `aim` says.
    pub const fn without_size(aim: Aim) -> Drawing {
        Drawing {
            aim,
            size: None,
            sign: Sign::Plain,
            window: None,
            extra: no_extra,
        }
    }

    /// The same, with `extra` fields from the drawn size.
    pub const fn with_extra(
        self,
        extra: fn(size_ms: u64) -> Vec<(&'static str, toml::Value)>,
    ) -> Drawing {
        Drawing { extra, ..self }
    }

    /// How long a drawn fault lasts: its window if it has one, else its size if it has one.
    pub fn length_ms(&self, size_ms: u64, window_ms: Option<u64>) -> u64 {
        match (self.window, self.size) {
            (Some(_), _) => window_ms.unwrap_or(0),
            (None, Some(_)) => size_ms,
            (None, None) => 0,
        }
    }
}

/// No fields beyond the size and window.
pub fn no_extra(_size_ms: u64) -> Vec<(&'static str, toml::Value)> {
    Vec::new()
}
