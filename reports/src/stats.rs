//! The statistics a matrix cell's figures need: the exact (Clopper-Pearson) interval of a
//! rate seen in k of n runs, and Fisher's exact test of whether two such rates differ. Written
//! out here (no statistics crate); the tests hold them to values computed independently.

/// The name pages print beside an interval, so a reader knows how it was made.
pub const INTERVAL_METHOD: &str = "Clopper-Pearson, 95%";

/// The two-sided 95% Clopper-Pearson interval of a rate seen in `k` of `n` trials, as
/// fractions `(low, high)`; `None` for `n = 0` (nothing was seen). Exact and conservative:
/// a rate outside it would have given `k` or a rarer count with probability under 2.5% on
/// that side.
pub fn clopper_pearson(k: u64, n: u64) -> Option<(f64, f64)> {
    clopper_pearson_at(k, n, 0.05)
}

/// [`clopper_pearson`] at level `1 - alpha`.
pub fn clopper_pearson_at(k: u64, n: u64, alpha: f64) -> Option<(f64, f64)> {
    if n == 0 || k > n {
        return None;
    }
    let (kf, nf) = (k as f64, n as f64);
    let half = alpha / 2.0;
    let low = if k == 0 {
        0.0
    } else {
        beta_quantile(half, kf, nf - kf + 1.0)
    };
    let high = if k == n {
        1.0
    } else {
        beta_quantile(1.0 - half, kf + 1.0, nf - kf)
    };
    Some((low, high))
}

/// The fewest runs, all without a violation, after which the upper end of the interval is
/// at most `bound` (a fraction); `None` for a bound no count reaches (0 or less).
pub fn runs_until_bound(bound: f64) -> Option<u64> {
    if bound <= 0.0 {
        return None;
    }
    // With no violation the upper end is 1 - (alpha/2)^(1/n), falling with n.
    (1..=1_000_000u64).find(|&n| clopper_pearson(0, n).is_some_and(|(_, hi)| hi <= bound))
}

/// Fisher's exact test, two-sided, of a 2×2 table: `a` of `n1` runs in one set against `b`
/// of `n2` in another. The probability, with the margins fixed, of a table as likely as this
/// one or less (tables within a relative 1e-7 count as equal, as R's `fisher.test` does).
pub fn fisher_exact(a: u64, n1: u64, b: u64, n2: u64) -> f64 {
    if a > n1 || b > n2 {
        return 1.0;
    }
    let (k, n) = (a + b, n1 + n2);
    // The tables with these margins: `x` of the `k` events in the first set.
    let lo = k.saturating_sub(n2);
    let hi = k.min(n1);
    let log_p = |x: u64| ln_choose(n1, x) + ln_choose(n2, k - x) - ln_choose(n, k);
    let observed = log_p(a);
    let p: f64 = (lo..=hi)
        .map(log_p)
        .filter(|&lp| lp <= observed + 1e-7_f64.ln_1p())
        .map(f64::exp)
        .sum();
    p.min(1.0)
}

/// ln C(n, k).
fn ln_choose(n: u64, k: u64) -> f64 {
    ln_gamma(n as f64 + 1.0) - ln_gamma(k as f64 + 1.0) - ln_gamma((n - k) as f64 + 1.0)
}

/// The `p` quantile of the Beta(a, b) distribution, by bisection on its distribution
/// function (monotone in x), to well under a millionth.
fn beta_quantile(p: f64, a: f64, b: f64) -> f64 {
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    for _ in 0..200 {
        let mid = (lo + hi) / 2.0;
        if incomplete_beta(mid, a, b) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo + hi) / 2.0
}

/// The regularized incomplete beta function I_x(a, b), from its continued fraction, taken
/// on the side where it converges fast.
fn incomplete_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    if x < (a + 1.0) / (a + b + 2.0) {
        ln_front.exp() * beta_fraction(x, a, b) / a
    } else {
        1.0 - ln_front.exp() * beta_fraction(1.0 - x, b, a) / b
    }
}

/// The continued fraction of the incomplete beta function (modified Lentz's method).
fn beta_fraction(x: f64, a: f64, b: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..=10_000 {
        let m = m as f64;
        let m2 = 2.0 * m;
        // The even step, then the odd one.
        for aa in [
            m * (b - m) * x / ((qam + m2) * (a + m2)),
            -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)),
        ] {
            d = 1.0 + aa * d;
            if d.abs() < TINY {
                d = TINY;
            }
            c = 1.0 + aa / c;
            if c.abs() < TINY {
                c = TINY;
            }
            d = 1.0 / d;
            h *= d * c;
        }
        // The last odd step's factor is d * c; done when it no longer moves h.
        if (d * c - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms: about 15 significant digits).
fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x) Γ(1 - x) = π / sin(πx).
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let t = x + G + 0.5;
    let series = C[1..]
        .iter()
        .enumerate()
        .fold(C[0], |acc, (i, c)| acc + c / (x + i as f64 + 1.0));
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + series.ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(got: f64, want: f64, tol: f64) -> bool {
        (got - want).abs() <= tol
    }

    #[test]
    fn clopper_pearson_matches_independently_computed_intervals() {
        // The quantiles of Beta(k, n-k+1) and Beta(k+1, n-k), computed independently by
        // bisection on mpmath's betainc at 30 digits (what R's binom.test(k, n) reports).
        for (k, n, lo, hi) in [
            (0, 10, 0.0, 0.308_497_1),
            (3, 10, 0.066_739_51, 0.652_452_9),
            (10, 10, 0.691_502_9, 1.0),
            (1, 17, 0.001_488_174, 0.286_889_4),
            (7, 10, 0.347_547_1, 0.933_260_5),
            (0, 17, 0.0, 0.195_064_3),
            (50, 100, 0.398_321_1, 0.601_678_9),
        ] {
            let (l, h) = clopper_pearson(k, n).unwrap();
            assert!(close(l, lo, 2e-6) && close(h, hi, 2e-6), "{k}/{n}: {l} {h}");
        }
        assert_eq!(clopper_pearson(0, 0), None);
        assert_eq!(clopper_pearson(3, 2), None);
    }

    #[test]
    fn a_safe_cell_needs_17_runs_for_an_upper_bound_of_20_percent_and_10_give_31() {
        assert_eq!(runs_until_bound(0.20), Some(17));
        assert_eq!(runs_until_bound(0.10), Some(36));
        assert!(close(clopper_pearson(0, 10).unwrap().1, 0.3085, 1e-4));
        assert_eq!(runs_until_bound(0.0), None);
    }

    #[test]
    fn fisher_exact_matches_exact_sums() {
        // Summed exactly over the tables with these margins with Python's fractions (what
        // R's fisher.test(matrix(c(a, n1 - a, b, n2 - b), 2)) reports).
        for (a, n1, b, n2, p) in [
            (3, 4, 1, 4, 0.485_714_3),
            (10, 10, 0, 10, 1.082_509e-5),
            (2, 10, 3, 10, 1.0),
            (7, 10, 2, 10, 0.069_778_52),
            (0, 10, 0, 10, 1.0),
            (1, 10, 0, 10, 1.0),
        ] {
            let got = fisher_exact(a, n1, b, n2);
            assert!(
                close(got, p, 1e-6 + p * 1e-5),
                "{a}/{n1} vs {b}/{n2}: {got}"
            );
        }
    }

    #[test]
    fn ln_gamma_is_ln_factorial_at_integers() {
        let mut f = 1.0_f64;
        for n in 1..30u32 {
            f *= n as f64;
            assert!(close(ln_gamma(n as f64 + 1.0), f.ln(), 1e-10), "{n}");
        }
    }
}
