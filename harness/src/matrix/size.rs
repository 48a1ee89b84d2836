//! Fault sizes relative to what a lock promises: `"2x lease"`, `"+1.5x ttl"`, `"0.5x lease +
//! 200ms"`, or plain milliseconds. A matrix column gives its sizes this way so every row gets a
//! fault of the same weight against its own lease, and the row resolves them to the concrete
//! milliseconds of an ordinary scenario.

use super::error::MatrixError;
use crate::scenario::Source;
use serde::Serialize;
use std::fmt;
use std::path::Path;
use toml::Spanned;

/// What a relative size is a multiple of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Basis {
    /// The lease the lock actually gives a holder (etcd's whole-second TTL, ZooKeeper's session
    /// timeout, a SQL server's idle timeout that frees a lease-less lock).
    Lease,
    /// The TTL the clients ask for (`[lock] ttl_ms`).
    Ttl,
}

impl Basis {
    pub fn name(self) -> &'static str {
        match self {
            Basis::Lease => "lease",
            Basis::Ttl => "ttl",
        }
    }
}

/// A size in milliseconds: fixed, or `factor × basis + offset_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum Size {
    Ms(i64),
    Relative {
        factor: f64,
        basis: Basis,
        offset_ms: i64,
    },
}

/// What a row promises, for resolving sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Promise {
    /// The effective lease, in milliseconds.
    pub lease_ms: u64,
    /// The requested TTL, in milliseconds.
    pub ttl_ms: u64,
}

/// The largest size a matrix may ask for: a day, as a scenario's longest run.
const MAX_ABS_MS: f64 = 86_400_000.0;

impl Size {
    /// Reads `text`: `1500ms`, `1500`, `2x lease`, `+1.5x ttl`, `0.5x lease + 200ms`. The error
    /// says what is allowed.
    pub fn parse(text: &str) -> Result<Size, String> {
        let allowed = "allowed: milliseconds (1500 or \"1500ms\") or a multiple of the row's \
                       lease or ttl (\"2x lease\", \"+1.5x ttl\", \"0.5x lease + 200ms\")";
        let bad = || format!("{text:?} is not a size; {allowed}");
        let t = text.trim();
        if let Some(ms) = parse_ms(t) {
            return Ok(Size::Ms(ms));
        }
        let (head, offset_ms) = match t.rsplit_once(['+', '-']) {
            // A trailing "+ 200ms" / "- 200ms"; a leading sign of the factor is not one.
            Some((head, tail)) if !head.trim().is_empty() && head.contains('x') => {
                let ms = parse_ms(tail.trim()).ok_or_else(bad)?;
                let negative = t[head.len()..].starts_with('-');
                (head.trim(), if negative { -ms } else { ms })
            }
            _ => (t, 0),
        };
        let (factor, basis) = head.split_once('x').ok_or_else(bad)?;
        let factor: f64 = factor.trim().parse().map_err(|_| bad())?;
        if !factor.is_finite() || factor.abs() > 1000.0 {
            return Err(format!(
                "{text:?}: the factor {factor} is out of range; allowed: -1000 to 1000"
            ));
        }
        let basis = match basis.trim() {
            "lease" => Basis::Lease,
            "ttl" => Basis::Ttl,
            other => {
                return Err(format!(
                    "{text:?}: unknown basis {other:?}; allowed: lease, ttl"
                ))
            }
        };
        Ok(Size::Relative {
            factor,
            basis,
            offset_ms,
        })
    }

    /// The size for a row that promises `p`, in milliseconds, rounded to the nearest; `None`
    /// when it leaves ±a day.
    pub fn resolve(&self, p: Promise) -> Option<i64> {
        let ms = match *self {
            Size::Ms(ms) => ms as f64,
            Size::Relative {
                factor,
                basis,
                offset_ms,
            } => {
                let of = match basis {
                    Basis::Lease => p.lease_ms,
                    Basis::Ttl => p.ttl_ms,
                } as f64;
                factor * of + offset_ms as f64
            }
        };
        (ms.abs() <= MAX_ABS_MS).then(|| ms.round() as i64)
    }

    /// Whether it depends on the row.
    pub fn is_relative(&self) -> bool {
        matches!(self, Size::Relative { .. })
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Size::Ms(ms) => write!(f, "{ms} ms"),
            Size::Relative {
                factor,
                basis,
                offset_ms,
            } => {
                write!(f, "{factor}x {}", basis.name())?;
                match offset_ms {
                    0 => Ok(()),
                    o if o > 0 => write!(f, " + {o} ms"),
                    o => write!(f, " - {} ms", -o),
                }
            }
        }
    }
}

/// `1500`, `1500ms`, `-200 ms`.
fn parse_ms(text: &str) -> Option<i64> {
    let t = text.trim();
    let t = t.strip_suffix("ms").unwrap_or(t).trim();
    let (sign, digits) = match t.strip_prefix('-') {
        Some(rest) => (-1, rest),
        None => (1, t.strip_prefix('+').unwrap_or(t)),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let ms: i64 = digits.parse().ok()?;
    ((ms as f64) <= MAX_ABS_MS).then_some(sign * ms)
}

/// A size field: an integer (ms) or a string [`Size::parse`] reads.
pub(super) fn size_field(
    src: &Source,
    path: &Path,
    field: &str,
    v: &Spanned<toml::Value>,
) -> Result<Size, MatrixError> {
    let parsed = match v.get_ref() {
        toml::Value::Integer(ms) => Ok(Size::Ms(*ms)),
        toml::Value::String(s) => Size::parse(s),
        other => Err(format!(
            "a {} is not a size; allowed: milliseconds or a string such as \"2x lease\"",
            other.type_str()
        )),
    };
    parsed.map_err(|message| MatrixError::Invalid {
        path: path.to_owned(),
        line: src.line_of(v.span().start),
        field: field.to_owned(),
        message,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ETCD: Promise = Promise {
        lease_ms: 1000,
        ttl_ms: 300,
    };

    #[test]
    fn relative_sizes_resolve_against_the_rows_promise() {
        let r = |t: &str| Size::parse(t).unwrap().resolve(ETCD).unwrap();
        assert_eq!(r("2x lease"), 2000);
        assert_eq!(r("+1.5x ttl"), 450);
        assert_eq!(r("0.5x lease"), 500);
        assert_eq!(r("-1x lease"), -1000);
        assert_eq!(r("0.5x lease + 200ms"), 700);
        assert_eq!(r("3x lease - 250 ms"), 2750);
        assert_eq!(r("1500ms"), 1500);
        assert_eq!(r("1500"), 1500);
        assert_eq!(r("-200ms"), -200);
        // The motivating case: a pause sized from the requested 300 ms TTL is shorter than
        // etcd's one-second lease; sized from the lease it is not.
        assert!(r("2x ttl") < ETCD.lease_ms as i64);
        assert!(r("2x lease") > ETCD.lease_ms as i64);
    }

    #[test]
    fn bad_sizes_say_what_is_allowed() {
        for (text, needle) in [
            ("2 lease", "allowed: milliseconds"),
            (
                "2x lifetime",
                "unknown basis \"lifetime\"; allowed: lease, ttl",
            ),
            ("twox lease", "allowed"),
            ("2x lease + soon", "allowed"),
            ("5000x lease", "out of range"),
            ("", "allowed"),
        ] {
            let err = Size::parse(text).unwrap_err();
            assert!(err.contains(needle), "{text:?}: {err}");
        }
        let huge = Size::parse("1000x lease").unwrap();
        assert_eq!(
            huge.resolve(Promise {
                lease_ms: 1_000_000,
                ttl_ms: 1
            }),
            None
        );
    }

    #[test]
    fn sizes_print_as_written() {
        assert_eq!(Size::parse("+1.5x ttl").unwrap().to_string(), "1.5x ttl");
        assert_eq!(
            Size::parse("2x lease - 100ms").unwrap().to_string(),
            "2x lease - 100 ms"
        );
        assert_eq!(Size::parse("70").unwrap().to_string(), "70 ms");
    }
}
