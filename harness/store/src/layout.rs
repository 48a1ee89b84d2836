//! Where runs go: `store/<scenario>/<run-id>/`, the run id `<UTC stamp>-seed<N>[-n]`, and the
//! `latest` link beside the runs of one scenario. The harness names runs with these; the
//! index and `serve` read them back.

use std::time::{SystemTime, UNIX_EPOCH};

/// The link, in a scenario's folder, to its newest run.
pub const LATEST: &str = "latest";

/// UTC time as `YYYYMMDDTHHMMSSZ`.
pub fn utc_stamp(t: SystemTime) -> String {
    let secs = t
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}{month:02}{day:02}T{:02}{:02}{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// The id of a run started at `stamp` with `seed`; `n` > 0 tells apart runs started in the
/// same second.
pub fn run_id(stamp: &str, seed: u64, n: u32) -> String {
    match n {
        0 => format!("{stamp}-seed{seed}"),
        _ => format!("{stamp}-seed{seed}-{n}"),
    }
}

/// The seed in a run id `…-seed<N>[-n]`, 0 if it names none.
pub fn seed_of(id: &str) -> u64 {
    id.rsplit_once("-seed")
        .and_then(|(_, rest)| rest.split('-').next()?.parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn utc_stamp_formats_known_instants() {
        assert_eq!(utc_stamp(UNIX_EPOCH), "19700101T000000Z");
        assert_eq!(
            utc_stamp(UNIX_EPOCH + Duration::from_secs(1_795_303_614)),
            "20261121T232654Z"
        );
        assert_eq!(
            utc_stamp(UNIX_EPOCH + Duration::from_secs(951_782_400)),
            "20000229T000000Z"
        );
    }

    #[test]
    fn a_run_id_gives_back_its_seed() {
        assert_eq!(run_id("20261121T233700Z", 17, 0), "20261121T233700Z-seed17");
        assert_eq!(seed_of(&run_id("20261121T233700Z", 17, 2)), 17);
        assert_eq!(seed_of("imported"), 0);
    }
}
