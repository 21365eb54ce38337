//! Durations as people write them (`90s`, `45m`, `1h30m`, `7d`), for flags
//! and (later) config files alike: no clap here, so any layer may use it.

use std::time::Duration;

use crate::error::{Error, Result};

/// Parse `90`, `90s`, `45m`, `2h`, `1h30m`, `500ms`, `7d`.
pub fn parse(s: &str) -> Result<Duration> {
    let bad = || {
        Error::usage_hint(
            format!("invalid duration `{s}`"),
            "use a number with a unit: 500ms, 90s, 45m, 2h, 1h30m, 7d",
        )
    };
    let t = s.trim();
    if t.is_empty() {
        return Err(bad());
    }
    if let Ok(n) = t.parse::<u64>() {
        return Ok(Duration::from_secs(n));
    }
    let mut total = Duration::ZERO;
    let mut num = String::new();
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() || c == '.' {
            num.push(c);
            continue;
        }
        let mut unit = c.to_string();
        while let Some(&n) = chars.peek() {
            if n.is_ascii_alphabetic() {
                unit.push(n);
                chars.next();
            } else {
                break;
            }
        }
        let v: f64 = num.parse().map_err(|_| bad())?;
        num.clear();
        let secs = match unit.as_str() {
            "ms" => v / 1000.0,
            "s" | "sec" | "secs" => v,
            "m" | "min" | "mins" => v * 60.0,
            "h" | "hr" | "hrs" => v * 3600.0,
            "d" => v * 86400.0,
            _ => return Err(bad()),
        };
        total += Duration::from_secs_f64(secs);
    }
    if !num.is_empty() {
        return Err(bad());
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse("90").unwrap(), Duration::from_secs(90));
        assert_eq!(parse("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse("45m").unwrap(), Duration::from_secs(2700));
        assert_eq!(parse("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse("7d").unwrap(), Duration::from_secs(7 * 86400));
        assert!(parse("10x").is_err());
        assert!(parse("m").is_err());
        assert!(parse("5m3").is_err());
    }
}
