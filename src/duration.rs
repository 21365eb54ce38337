//! Durations as people write them (`90s`, `45m`, `1h30m`, `7d`), for flags
//! and (later) config files alike: no clap here, so any layer may use it.
//!
//! The grammar is humantime's (units `ms`, `s`, `m`, `h`, `d`, `w`, their
//! long names, fractions such as `1.5h`, several parts such as `1h 30m`),
//! plus a bare number of seconds (`90`). Its arithmetic is checked, so no
//! input can panic or wrap. baton counts in milliseconds and gives no limit
//! beyond a year, so anything from 1 ms to 365 days is accepted, and `0`
//! (which a caller may refuse, or take as "off").

use std::time::Duration;

use crate::error::{Error, Result};

/// The longest duration accepted: a year. Longer is a typo, and keeps every
/// deadline far from the clock's overflow.
pub const MAX: Duration = Duration::from_secs(365 * 86_400);

/// Parse `90`, `90s`, `45m`, `2h`, `1h30m`, `500ms`, `7d`, `0`.
pub fn parse(s: &str) -> Result<Duration> {
    let t = s.trim();
    let bad = |why: &str| {
        Error::usage_hint(
            format!("invalid duration `{s}`: {why}"),
            "use a number with a unit, from 1ms to 365d: 500ms, 90s, 45m, 2h, 1h30m, 7d \
             (a bare number is seconds)",
        )
    };
    let d = if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        // Seconds. Too many digits for a u64 is out of range, not malformed.
        Duration::from_secs(t.parse::<u64>().map_err(|_| bad("too long"))?)
    } else {
        humantime::parse_duration(t).map_err(|e| bad(&e.to_string()))?
    };
    if d > MAX {
        return Err(bad("more than 365 days"));
    }
    if !d.is_zero() && d < Duration::from_millis(1) {
        return Err(bad("less than 1ms"));
    }
    Ok(d)
}

/// `d` in whole milliseconds (exact for everything `parse` returns).
pub fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn documented_forms() {
        assert_eq!(parse("90").unwrap(), Duration::from_secs(90));
        assert_eq!(parse("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse("45m").unwrap(), Duration::from_secs(2700));
        assert_eq!(parse("2h").unwrap(), Duration::from_secs(7200));
        assert_eq!(parse("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse("7d").unwrap(), Duration::from_secs(7 * 86400));
        assert_eq!(parse(" 0 ").unwrap(), Duration::ZERO);
        assert_eq!(parse("0s").unwrap(), Duration::ZERO);
        assert_eq!(parse("365d").unwrap(), MAX);
    }

    #[test]
    fn malformed_and_out_of_range_are_usage_errors() {
        for bad in [
            "",
            "10x",
            "m",
            "5m3",
            "-5s",
            "5124095576030432h",
            "18446744073709552s",
            "213503982335d",
            "99999999999999999999999",
            "366d",
            "0.0001s",
            "999us",
        ] {
            let e = parse(bad).unwrap_err();
            assert_eq!(e.kind(), "usage", "{bad}");
            assert_eq!(e.exit_code(), 2, "{bad}");
        }
    }

    proptest! {
        #[test]
        fn never_panics(s in "\\PC{0,40}") {
            let _ = parse(&s);
        }

        #[test]
        fn unit_soup_never_panics(s in "[0-9. ]{0,25}(ns|us|ms|s|m|h|d|w|M|y)?[0-9]{0,22}(ms|s|m|h|d)?") {
            if let Ok(d) = parse(&s) {
                prop_assert!(d <= MAX);
                prop_assert!(d.is_zero() || d >= Duration::from_millis(1));
            }
        }

        #[test]
        fn whole_milliseconds_round_trip(ms in 1u64..=MAX.as_millis() as u64) {
            let d = Duration::from_millis(ms);
            let text = humantime::format_duration(d).to_string();
            prop_assert_eq!(parse(&text).unwrap(), d);
            prop_assert_eq!(parse(&format!("{ms}ms")).unwrap(), d);
            prop_assert_eq!(millis(d), ms);
        }

        #[test]
        fn seconds_round_trip(secs in 0u64..=MAX.as_secs()) {
            prop_assert_eq!(parse(&secs.to_string()).unwrap(), Duration::from_secs(secs));
            prop_assert_eq!(parse(&format!("{secs}s")).unwrap(), Duration::from_secs(secs));
        }

        #[test]
        fn beyond_a_year_is_refused(secs in MAX.as_secs() + 1..=u64::MAX) {
            let days = secs / 86_400 + 1;
            for text in [secs.to_string(), format!("{secs}s"), format!("{days}d")] {
                prop_assert!(parse(&text).is_err(), "{}", text);
            }
        }
    }
}
