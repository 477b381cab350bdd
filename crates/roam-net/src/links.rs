//! Link facts per local address (`--link ADDR:pw=0.01,dw=20ms,bw=2Mbps,per=0.01`, or a file of
//! such lines given with `--links FILE`): what the user knows about the hop behind each of the
//! host's addresses, handed to every connection opened on that address through the engines'
//! `set_link_info` (`docs/RUNTIME.md`, "Link facts").

use std::net::IpAddr;
use std::time::Duration;

use roam_proto::linkinfo::LinkInfo;

/// Link facts by local IP address.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LinkTable {
    entries: Vec<(IpAddr, LinkInfo)>,
}

impl LinkTable {
    /// No facts (every link is assumed wired and good).
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) the facts of one address.
    pub fn insert(&mut self, addr: IpAddr, info: LinkInfo) {
        self.entries.retain(|(a, _)| *a != addr);
        self.entries.push((addr, info.sanitized()));
    }

    /// The facts of `addr`, if given.
    pub fn get(&self, addr: IpAddr) -> Option<LinkInfo> {
        self.entries
            .iter()
            .find(|(a, _)| *a == addr)
            .map(|(_, i)| *i)
    }

    /// True if no facts were given.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Parses one `ADDR:key=value,…` entry and adds it. Keys: `pw` (wireless loss
    /// probability, 0..=1), `per` (packet error rate, 0..=1), `dw` (one-way delay of the hop:
    /// `20ms`, `1.5s`, `300us`), `bw` (bandwidth: `2Mbps`, `500kbps`, `1Gbps`, `9600bps`),
    /// `handoffs` (a count; changing it means "a new network"), and the flag `wired` (the
    /// facts describe a wired hop; otherwise the hop is wireless). An IPv6 address is
    /// written in brackets: `[fe80::1]:pw=0.01`.
    pub fn parse_entry(&mut self, s: &str) -> Result<(), LinkFactsError> {
        let (addr, facts) = split_addr(s)?;
        let mut info = LinkInfo {
            wireless: true,
            up: true,
            ..LinkInfo::default()
        };
        for kv in facts.split(',').filter(|kv| !kv.is_empty()) {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            match k {
                "pw" => info.loss_prob = probability(k, v)?,
                "per" => info.per = probability(k, v)?,
                "dw" => info.one_way_delay = duration(v)?,
                "bw" => info.bandwidth_bps = bandwidth(v)?,
                "handoffs" => {
                    info.handoffs = v
                        .parse()
                        .map_err(|_| LinkFactsError::Handoffs(v.to_string()))?
                }
                "wired" if v.is_empty() => info.wireless = false,
                _ => return Err(LinkFactsError::Unknown(kv.to_string())),
            }
        }
        self.insert(addr, info);
        Ok(())
    }

    /// Parses a link-facts file and adds its entries: one `ADDR:key=value,…` entry per line,
    /// in the syntax of [`LinkTable::parse_entry`]; blank lines and text after `#` are
    /// ignored; a later entry for the same address replaces an earlier one. The error names
    /// the first bad line (1-based).
    pub fn parse_file(&mut self, text: &str) -> Result<(), LinkFactsError> {
        for (i, line) in text.lines().enumerate() {
            let entry = line.split('#').next().unwrap_or("").trim();
            if entry.is_empty() {
                continue;
            }
            self.parse_entry(entry)
                .map_err(|why| LinkFactsError::Line {
                    line: i + 1,
                    error: Box::new(why),
                })?;
        }
        Ok(())
    }
}

fn split_addr(s: &str) -> Result<(IpAddr, &str), LinkFactsError> {
    let err = || LinkFactsError::Syntax(s.to_string());
    let (addr, rest) = if let Some(r) = s.strip_prefix('[') {
        let (a, rest) = r.split_once(']').ok_or_else(err)?;
        (a, rest.strip_prefix(':').unwrap_or(rest))
    } else {
        s.split_once(':').ok_or_else(err)?
    };
    let addr = addr
        .parse()
        .map_err(|_| LinkFactsError::Address(addr.to_string()))?;
    Ok((addr, rest))
}

fn probability(k: &str, v: &str) -> Result<f64, LinkFactsError> {
    match v.parse::<f64>() {
        Ok(p) if (0.0..=1.0).contains(&p) => Ok(p),
        _ => Err(LinkFactsError::Probability {
            key: k.to_string(),
            value: v.to_string(),
        }),
    }
}

fn number_with_unit<'a>(v: &'a str, units: &[(&str, f64)]) -> Option<(f64, &'a str)> {
    let split = v
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(v.len());
    let (n, unit) = v.split_at(split);
    let n: f64 = n.parse().ok()?;
    let scale = units.iter().find(|(u, _)| *u == unit)?.1;
    let x = n * scale;
    x.is_finite().then_some((x, unit))
}

fn duration(v: &str) -> Result<Duration, LinkFactsError> {
    number_with_unit(v, &[("s", 1.0), ("ms", 1e-3), ("us", 1e-6)])
        .filter(|(x, _)| *x <= 3600.0)
        .map(|(x, _)| Duration::from_secs_f64(x))
        .ok_or_else(|| LinkFactsError::Delay(v.to_string()))
}

fn bandwidth(v: &str) -> Result<u64, LinkFactsError> {
    number_with_unit(
        v,
        &[("bps", 1.0), ("kbps", 1e3), ("Mbps", 1e6), ("Gbps", 1e9)],
    )
    .filter(|(x, _)| *x >= 1.0 && *x <= 1e13)
    .map(|(x, _)| x.round() as u64)
    .ok_or_else(|| LinkFactsError::Bandwidth(v.to_string()))
}

/// Why a link-facts entry (`--link`) or file (`--links`) was refused; each message says what
/// is wrong and what is expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinkFactsError {
    /// No `ADDR:` in front of the facts (or an unclosed `[`): the whole entry.
    #[error("{0:?}: expected ADDR:pw=0.01,dw=20ms,bw=2Mbps,per=0.01")]
    Syntax(String),
    /// The address is not an IP address.
    #[error("{0:?} is not an IP address")]
    Address(String),
    /// `pw` or `per` is not a probability.
    #[error("{key}={value}: expected a probability between 0 and 1")]
    Probability {
        /// The key.
        key: String,
        /// The value given.
        value: String,
    },
    /// `dw` is not a delay of at most an hour.
    #[error("dw={0}: expected a delay such as 20ms, 1.5s or 300us (at most 1 h)")]
    Delay(String),
    /// `bw` is not a rate.
    #[error("bw={0}: expected a rate such as 2Mbps, 500kbps or 1Gbps")]
    Bandwidth(String),
    /// `handoffs` is not a count.
    #[error("handoffs={0}: expected a count")]
    Handoffs(String),
    /// A key that names no fact.
    #[error("unknown link fact {0:?} (expected pw=, per=, dw=, bw=, handoffs=, wired)")]
    Unknown(String),
    /// A bad line of a links file.
    #[error("line {line}: {error}")]
    Line {
        /// The line (1-based).
        line: usize,
        /// What is wrong with it.
        error: Box<LinkFactsError>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_parse_into_link_facts() {
        let mut t = LinkTable::new();
        t.parse_entry("10.0.0.2:pw=0.01,dw=20ms,bw=2Mbps,per=0.02")
            .unwrap();
        let i = t.get("10.0.0.2".parse().unwrap()).unwrap();
        assert!(i.wireless && i.up);
        assert_eq!(i.loss_prob, 0.01);
        assert_eq!(i.per, 0.02);
        assert_eq!(i.one_way_delay, Duration::from_millis(20));
        assert_eq!(i.bandwidth_bps, 2_000_000);
        t.parse_entry("[::1]:bw=1Gbps,wired,handoffs=3").unwrap();
        let i = t.get("::1".parse().unwrap()).unwrap();
        assert!(!i.wireless);
        assert_eq!((i.bandwidth_bps, i.handoffs), (1_000_000_000, 3));
        assert_eq!(t.get("10.0.0.3".parse().unwrap()), None);
    }

    #[test]
    fn a_file_holds_one_entry_per_line_with_comments() {
        let mut t = LinkTable::new();
        t.parse_file(
            "# the phone's two radios\n\n10.0.0.2:pw=0.01,dw=20ms # WLAN\n  10.0.0.3:bw=2Mbps\n10.0.0.2:per=0.1\n",
        )
        .unwrap();
        let wlan = t.get("10.0.0.2".parse().unwrap()).unwrap();
        assert_eq!(
            (wlan.loss_prob, wlan.per),
            (0.0, 0.1),
            "the later line replaces"
        );
        assert_eq!(
            t.get("10.0.0.3".parse().unwrap()).unwrap().bandwidth_bps,
            2_000_000
        );
        let err = LinkTable::new()
            .parse_file("10.0.0.2:pw=0.1\n\n10.0.0.3:pw=2\n")
            .unwrap_err();
        assert!(matches!(err, LinkFactsError::Line { line: 3, .. }), "{err}");
        assert!(err.to_string().starts_with("line 3: "), "{err}");
        assert!(LinkTable::new().parse_file("").is_ok());
    }

    #[test]
    fn bad_entries_are_errors_not_panics() {
        for bad in [
            "",
            "10.0.0.2",
            "nothost:pw=0.1",
            "10.0.0.2:pw=1.5",
            "10.0.0.2:pw=NaN",
            "10.0.0.2:per=-0.1",
            "10.0.0.2:dw=20",
            "10.0.0.2:dw=99999999999s",
            "10.0.0.2:bw=0bps",
            "10.0.0.2:bw=1e400Mbps",
            "10.0.0.2:bw=2MBps",
            "10.0.0.2:handoffs=-1",
            "10.0.0.2:color=red",
            "[::1:pw=0.1",
        ] {
            assert!(LinkTable::new().parse_entry(bad).is_err(), "{bad:?}");
        }
    }
}
