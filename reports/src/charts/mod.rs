//! SVG charts of a run, drawn with plotters into strings that the HTML inlines.

mod common;
mod latency;
mod matrix;
mod overlay;
mod server_lanes;
mod throughput;
mod timeline;
mod tokens;

pub(crate) use common::{drawn, CHART_WIDTH};
pub use latency::latency_svg;
pub use matrix::{availability_svg, first_violation_strip_svg, latency_bars_svg};
pub(crate) use overlay::Links;
pub use server_lanes::{server_lanes, ServerLane};
pub use throughput::throughput_svg;
pub use timeline::{timeline_svg, TimelineSpec};
pub use tokens::tokens_svg;
