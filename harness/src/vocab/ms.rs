//! Millisecond values that are either fixed (`500`) or drawn from a range (`[400, 900]`).

use rand::Rng;
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use std::fmt;

/// A duration in milliseconds, fixed or drawn uniformly from `min..=max` with the run's seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MsRange {
    pub min: u64,
    pub max: u64,
}

impl MsRange {
    pub fn fixed(ms: u64) -> MsRange {
        MsRange { min: ms, max: ms }
    }

    /// Draws a value; fixed ranges draw nothing, so adding a fixed value to a scenario does not
    /// shift the random stream of everything after it.
    pub fn draw(&self, rng: &mut impl Rng) -> u64 {
        if self.min == self.max {
            self.min
        } else {
            rng.random_range(self.min..=self.max)
        }
    }
}

impl fmt::Display for MsRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.min == self.max {
            write!(f, "{} ms", self.min)
        } else {
            write!(f, "{}–{} ms", self.min, self.max)
        }
    }
}

impl<'de> Deserialize<'de> for MsRange {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = MsRange;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("milliseconds as a whole number, or a range [min, max]")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<MsRange, E> {
                u64::try_from(v)
                    .map(MsRange::fixed)
                    .map_err(|_| E::custom("milliseconds must not be negative"))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<MsRange, E> {
                Ok(MsRange::fixed(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<MsRange, A::Error> {
                let min: u64 = seq
                    .next_element()?
                    .ok_or_else(|| de::Error::custom("a range needs [min, max]"))?;
                let max: u64 = seq
                    .next_element()?
                    .ok_or_else(|| de::Error::custom("a range needs [min, max]"))?;
                if seq.next_element::<u64>()?.is_some() {
                    return Err(de::Error::custom(
                        "a range has exactly two values [min, max]",
                    ));
                }
                if min > max {
                    return Err(de::Error::custom(format!(
                        "range [{min}, {max}] has min above max"
                    )));
                }
                Ok(MsRange { min, max })
            }
        }
        d.deserialize_any(V)
    }
}
