//! Physical quantities written as strings in scenario files: rates, times, sizes, queue limits
//! and probabilities. Every parser returns a message fit to follow the field's name.

use std::time::Duration;

use toml::Value;

/// A drop-tail queue limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueLimit {
    /// At most this many packets wait (the one being transmitted is not counted).
    Packets(u64),
    /// At most this many on-wire bytes wait.
    Bytes(u64),
}

/// Splits `"10.5 Mbps"` into `(10.5, "Mbps")`; `None` if there is no leading number.
fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_digit() || c == '.' || c == '_' || c == 'e' || c == 'E'))
        .map_or(s.len(), |(i, _)| i);
    // "e" may only be an exponent when followed by a digit or sign; back off otherwise.
    let mut end = end;
    while end > 0 && matches!(s.as_bytes()[end - 1], b'e' | b'E') {
        end -= 1;
    }
    let num: String = s[..end].chars().filter(|&c| c != '_').collect();
    let value: f64 = num.parse().ok()?;
    Some((value, s[end..].trim()))
}

/// A finite, non-negative number from a TOML integer or float.
fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Integer(i) => Some(*i as f64),
        Value::Float(f) => Some(*f),
        _ => None,
    }
}

fn show(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

/// Parses a bit rate: `"10Mbps"`, `"100kbps"`, `"1.5Gbps"`, `"2Mb/s"`, `"64kbit/s"`, or a plain
/// number of bits per second. Must be positive.
pub fn rate(v: &Value) -> Result<u64, String> {
    let bad = || format!("expected a rate like \"10Mbps\" or bits/s, got {}", show(v));
    let bps = match v {
        Value::String(s) => {
            let (n, unit) = split_number(s).ok_or_else(bad)?;
            let (mult, rest) = match unit.as_bytes().first() {
                Some(b'k' | b'K') => (1e3, &unit[1..]),
                Some(b'm' | b'M') => (1e6, &unit[1..]),
                Some(b'g' | b'G') => (1e9, &unit[1..]),
                Some(b't' | b'T') => (1e12, &unit[1..]),
                _ => (1.0, unit),
            };
            let ok = unit.is_empty() || matches!(rest, "bps" | "b/s" | "bit/s" | "bits/s");
            if !ok {
                return Err(bad());
            }
            n * mult
        }
        other => number(other).ok_or_else(bad)?,
    };
    let bps = within(bps, 1.0..=1e15, "a rate between 1 bit/s and 1 Pbit/s", v)?;
    Ok(bps.round() as u64)
}

/// `x` (read from `v`) if it is finite and within `range`; else "expected `what`, got `v`".
fn within(
    x: f64,
    range: std::ops::RangeInclusive<f64>,
    what: &str,
    v: &Value,
) -> Result<f64, String> {
    if x.is_finite() && range.contains(&x) {
        Ok(x)
    } else {
        Err(format!("expected {what}, got {}", show(v)))
    }
}

/// Parses a time span: `"20ms"`, `"1.5s"`, `"300us"`, `"2min"`, or a plain number of seconds.
/// Must be non-negative and at most about 10^7 s.
pub fn duration(v: &Value) -> Result<Duration, String> {
    let bad = || format!("expected a time like \"20ms\" or seconds, got {}", show(v));
    let secs = match v {
        Value::String(s) => {
            let (n, unit) = split_number(s).ok_or_else(bad)?;
            let mult = match unit {
                "ns" => 1e-9,
                "us" | "µs" => 1e-6,
                "ms" => 1e-3,
                "s" | "" => 1.0,
                "min" => 60.0,
                "h" => 3600.0,
                _ => return Err(bad()),
            };
            n * mult
        }
        other => number(other).ok_or_else(bad)?,
    };
    let secs = within(secs, 0.0..=1e7, "a time between 0 and 10^7 s", v)?;
    Ok(Duration::from_nanos((secs * 1e9).round() as u64))
}

fn size_unit(unit: &str) -> Option<f64> {
    Some(match unit {
        "" | "B" => 1.0,
        "kB" | "KB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "KiB" => 1024.0,
        "MiB" => 1_048_576.0,
        "GiB" => 1_073_741_824.0,
        _ => return None,
    })
}

/// Parses a byte count: `"5MB"` (10^6), `"5MiB"` (2^20), `"1000B"`, `"64KB"`, `"64KiB"`, or a
/// plain number of bytes.
pub fn size(v: &Value) -> Result<u64, String> {
    let bad = || {
        format!(
            "expected a size like \"5MB\", \"64KiB\" or bytes, got {}",
            show(v)
        )
    };
    let bytes = match v {
        Value::String(s) => {
            let (n, unit) = split_number(s).ok_or_else(bad)?;
            n * size_unit(unit).ok_or_else(bad)?
        }
        other => number(other).ok_or_else(bad)?,
    };
    let bytes = within(bytes, 0.0..=1e15, "a size between 0 and 10^15 bytes", v)?;
    Ok(bytes.round() as u64)
}

/// Parses a queue limit: `"100p"` (packets), a plain integer (packets) or a byte size
/// (`"64KB"`).
pub fn queue(v: &Value) -> Result<QueueLimit, String> {
    let bad = || {
        format!(
            "expected a queue limit like \"100p\", 100 or \"64KB\", got {}",
            show(v)
        )
    };
    match v {
        Value::Integer(i) if *i >= 0 => Ok(QueueLimit::Packets(*i as u64)),
        Value::String(s) => {
            let (n, unit) = split_number(s).ok_or_else(bad)?;
            if matches!(unit, "p" | "pkt" | "pkts" | "packets") {
                if n.is_finite() && n >= 0.0 && n.fract() == 0.0 && n <= 1e12 {
                    Ok(QueueLimit::Packets(n as u64))
                } else {
                    Err(bad())
                }
            } else {
                size(v).map(QueueLimit::Bytes).map_err(|_| bad())
            }
        }
        _ => Err(bad()),
    }
}

/// Parses a probability in [0, 1].
pub fn probability(v: &Value) -> Result<f64, String> {
    match number(v) {
        Some(p) if (0.0..=1.0).contains(&p) => Ok(p),
        _ => Err(format!("expected a probability in [0,1], got {}", show(v))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> Value {
        Value::String(x.into())
    }

    #[test]
    fn rates_accept_common_spellings() {
        assert_eq!(rate(&s("10Mbps")), Ok(10_000_000));
        assert_eq!(rate(&s("100kbps")), Ok(100_000));
        assert_eq!(rate(&s("1.5Gbps")), Ok(1_500_000_000));
        assert_eq!(rate(&s("2Mb/s")), Ok(2_000_000));
        assert_eq!(rate(&s("64 kbit/s")), Ok(64_000));
        assert_eq!(rate(&Value::Integer(9600)), Ok(9600));
        assert!(rate(&s("10MBps")).is_err());
        assert!(rate(&s("fast")).is_err());
        assert!(rate(&s("0bps")).is_err());
        assert_eq!(rate(&s("1200")), Ok(1200));
    }

    #[test]
    fn times_accept_units_and_plain_seconds() {
        assert_eq!(duration(&s("20ms")), Ok(Duration::from_millis(20)));
        assert_eq!(duration(&s("1.5s")), Ok(Duration::from_millis(1500)));
        assert_eq!(duration(&s("300us")), Ok(Duration::from_micros(300)));
        assert_eq!(
            duration(&Value::Float(0.25)),
            Ok(Duration::from_millis(250))
        );
        assert_eq!(duration(&Value::Integer(2)), Ok(Duration::from_secs(2)));
        assert!(duration(&s("-1s")).is_err());
        assert!(duration(&s("1 fortnight")).is_err());
        assert!(duration(&Value::Float(f64::NAN)).is_err());
    }

    #[test]
    fn sizes_distinguish_decimal_and_binary_units() {
        assert_eq!(size(&s("5MB")), Ok(5_000_000));
        assert_eq!(size(&s("5MiB")), Ok(5 * 1_048_576));
        assert_eq!(size(&s("1000B")), Ok(1000));
        assert_eq!(size(&s("64KB")), Ok(64_000));
        assert_eq!(size(&s("64KiB")), Ok(65_536));
        assert_eq!(size(&Value::Integer(1500)), Ok(1500));
        assert!(size(&s("5Mb")).is_err());
    }

    #[test]
    fn queues_are_packets_or_bytes() {
        assert_eq!(queue(&s("100p")), Ok(QueueLimit::Packets(100)));
        assert_eq!(queue(&Value::Integer(50)), Ok(QueueLimit::Packets(50)));
        assert_eq!(queue(&s("64KB")), Ok(QueueLimit::Bytes(64_000)));
        assert!(queue(&s("1.5p")).is_err());
    }

    #[test]
    fn probabilities_are_checked() {
        assert_eq!(probability(&Value::Float(0.01)), Ok(0.01));
        assert_eq!(probability(&Value::Integer(1)), Ok(1.0));
        assert_eq!(
            probability(&Value::Float(1.5)),
            Err("expected a probability in [0,1], got 1.5".to_string())
        );
    }
}
