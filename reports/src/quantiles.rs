//! Latency quantiles per operation type and outcome.

use crate::view::{OpView, Outcome};
use lockpick_checker::history::F;
use serde::Serialize;

/// Latency quantiles of one group of operations, in milliseconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Quantiles {
    pub f: String,
    pub outcome: String,
    pub count: usize,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
}

/// The `q`-quantile (0..=1) of sorted values, nearest rank. Precondition: `sorted` is sorted
/// and not empty.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// Quantiles of completed `ops` grouped by type and outcome, in a fixed order.
pub fn latency_quantiles(ops: &[OpView]) -> Vec<Quantiles> {
    let mut out = Vec::new();
    for f in [F::Acquire, F::Write, F::Release, F::Renew, F::Read, F::Cas] {
        for outcome in [Outcome::Ok, Outcome::Fail, Outcome::Info] {
            let mut v: Vec<f64> = ops
                .iter()
                .filter(|o| o.f == f && o.outcome == outcome && o.completed)
                .map(OpView::latency_ms)
                .collect();
            if v.is_empty() {
                continue;
            }
            v.sort_by(f64::total_cmp);
            out.push(Quantiles {
                f: f.name().to_owned(),
                outcome: outcome.name().to_owned(),
                count: v.len(),
                p50: quantile(&v, 0.5),
                p90: quantile(&v, 0.9),
                p99: quantile(&v, 0.99),
                max: v[v.len() - 1],
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_quantiles() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(quantile(&v, 0.5), 50.0);
        assert_eq!(quantile(&v, 0.99), 99.0);
        assert_eq!(quantile(&v, 1.0), 100.0);
        assert_eq!(quantile(&[7.0], 0.5), 7.0);
    }
}
