//! Fault proxies: every node is reached through a Toxiproxy proxy, driven only through the
//! `toxiproxy_rust` client so that an external Toxiproxy (`--toxiproxy HOST:PORT`) and the
//! embedded one behave the same.
//!
//! The embedded server speaks Toxiproxy 2.12's HTTP API (proxies, populate, reset, toxics
//! including `noop`, version; its JSON shapes, error bodies, 400/403/404/405/409 codes,
//! request ids and refusal of browser User-Agents). Toxic attributes are Toxiproxy's int64s;
//! anything else is a 400 naming the attribute, and the engine saturates instead of
//! overflowing. Toxicity is any float32, as in Toxiproxy (≥ 1: always, ≤ 0: never).
//! Its engine is written here on tokio rather than taken from the `noxious` crate: noxious
//! 1.0.4 pulls rand 0.8, tokio-util 0.6 and mockall_double into the build next to the
//! workspace's rand 0.9, its "remove all toxics" only clears upstream ones, and it has no
//! notion of a disabled proxy that closes its listener and connections. The engine
//! (`link`, `listener`) re-reads the toxic list for every chunk, so toxic changes reach open
//! connections, including data already waiting in a latency toxic. As in Toxiproxy 2.x,
//! timeout toxics drop data (timeout 0: until removed) and removing one closes the
//! connections it was on; toxicity is rolled per connection. Disabling a proxy closes its
//! listener and every connection before the API answers; enabling it listens again on the
//! same address. Listen addresses must be loopback (the server answers 400 otherwise).
//! Unlike Toxiproxy, a connection whose upstream refuses it is not closed at once: it waits
//! up to [`link::UPSTREAM_WAIT`] for the server to listen, then is reset (the proxy accepted
//! the connect a network would have refused; see there).
//!
//! The HTTP layer is hyper 0.14 because reqwest 0.11, required by toxiproxy_rust, already
//! brings it in: no second HTTP stack in the build.

mod api;
mod api_worker;
mod embedded;
mod error;
mod facade;
mod link;
mod listener;
mod registry;
mod toxic;

pub use embedded::{serve_standalone, EmbeddedToxiproxy};
pub use error::ProxyError;
pub use facade::FaultProxies;
