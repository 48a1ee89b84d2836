//! Numeric command-line options with a documented range: clap refuses a value outside it,
//! naming the range, before anything runs (exit 3), so no option reaches code that would
//! panic or run away on it (`Duration::from_secs_f64(1e300)` panics).

use std::fmt::Display;
use std::str::FromStr;

/// A clap value parser for a number in `min..=max`; `unit` follows the numbers in the error.
pub fn within<T>(
    min: T,
    max: T,
    unit: &'static str,
) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static
where
    T: FromStr + PartialOrd + Display + Copy + Send + Sync + 'static,
    T::Err: Display,
{
    move |s: &str| {
        let v: T = s
            .trim()
            .parse()
            .map_err(|e| format!("{s:?} is not a number ({e}); allowed: {min} to {max} {unit}"))?;
        // NaN compares false both ways and is refused here too.
        if v >= min && v <= max {
            Ok(v)
        } else {
            Err(format!(
                "{s} is outside the allowed range {min} to {max} {unit}"
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_values_outside_the_range_with_the_range() {
        let seconds = within(0.001, 86_400.0, "seconds");
        assert_eq!(seconds("60"), Ok(60.0));
        for bad in ["1e300", "0", "-1", "NaN", "inf", "x"] {
            let e = seconds(bad).unwrap_err();
            assert!(e.contains("0.001 to 86400 seconds"), "{bad}: {e}");
        }
        let ms = within(1u64, 86_400_000, "ms");
        assert_eq!(ms("3000"), Ok(3000));
        assert!(ms("0").unwrap_err().contains("1 to 86400000 ms"));
        assert!(ms("99999999999999999999999").is_err());
    }
}
