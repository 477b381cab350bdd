//! Scenarios that load but cannot measure what they seem to: no flow, only cross traffic, a
//! flow that starts when the run is over, an event that never comes. Such a run would still
//! print numbers (a Jain's index over nothing, a goodput of zero), so the checks are reported
//! as warnings beside the result ([`crate::result::RunResult::warnings`]) and by the CLI.

use std::time::Duration;

use super::{EventAction, Scenario};

/// Seconds with up to three decimals and no trailing zeros (`60 s`, `0.25 s`).
pub(crate) fn secs(d: Duration) -> String {
    let s = format!("{:.3}", d.as_secs_f64());
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s} s")
}

impl Scenario {
    /// What in this scenario cannot produce a result, in file order; empty when nothing.
    pub fn warnings(&self) -> Vec<String> {
        let end = self.run.duration;
        let mut out = Vec::new();
        if self.flows.is_empty() {
            out.push(
                "no [[flow]]: the run measures nothing (no goodput, no Jain's index)".to_owned(),
            );
        } else if self.flows.iter().all(|f| f.cross) {
            out.push(
                "every flow is cross traffic: the aggregate goodput and Jain's index cover no \
                 flow"
                    .to_owned(),
            );
        }
        for f in &self.flows {
            if f.start >= end {
                out.push(format!(
                    "flow {:?} starts at {}, when the run (run.duration = {}) is over: it sends \
                     nothing",
                    f.id,
                    secs(f.start),
                    secs(end)
                ));
            }
        }
        for (i, e) in self.events.iter().enumerate() {
            if e.at >= end {
                let what = match &e.action {
                    EventAction::Link { link, .. } => {
                        format!("on link {:?}", self.links[*link].name)
                    }
                    EventAction::Iface { node, .. } => {
                        format!("on node {:?}", self.nodes[*node].name)
                    }
                };
                out.push(format!(
                    "event[{i}] {what} at {} never happens: the run (run.duration = {}) is over \
                     by then",
                    secs(e.at),
                    secs(end)
                ));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = r#"
[run]
duration = "10s"
[[node]]
name = "a"
[[node]]
name = "b"
[[link]]
name = "l"
a = "a"
b = "b"
rate = "1Mbps"
"#;

    fn warnings(extra: &str) -> Vec<String> {
        Scenario::from_toml_str(&format!("{BASE}{extra}"), "t")
            .unwrap()
            .warnings()
    }

    #[test]
    fn a_scenario_without_flows_or_with_cross_traffic_only_is_flagged() {
        assert_eq!(warnings("").len(), 1);
        assert!(warnings("")[0].starts_with("no [[flow]]"));
        let cross = "[[flow]]\nid = \"c\"\nprotocol = \"cbr\"\nfrom = \"a\"\nto = \"b\"\nrate = \"1kbps\"\ncross = true\n";
        assert!(warnings(cross)[0].starts_with("every flow is cross traffic"));
    }

    #[test]
    fn flows_and_events_after_the_end_are_flagged_and_others_are_not() {
        let text = "[[flow]]\nid = \"f\"\nprotocol = \"tcp\"\nfrom = \"a\"\nto = \"b\"\nstart = \"12s\"\n\
                    [[flow]]\nid = \"g\"\nprotocol = \"tcp\"\nfrom = \"a\"\nto = \"b\"\nstart = \"9.5s\"\n\
                    [[event]]\nat = \"30s\"\nlink = \"l\"\nset = { rate = \"2Mbps\" }\n\
                    [[event]]\nat = \"5s\"\nlink = \"l\"\nset = { rate = \"2Mbps\" }\n";
        let w = warnings(text);
        assert_eq!(w.len(), 2, "{w:?}");
        assert_eq!(
            w[0],
            "flow \"f\" starts at 12 s, when the run (run.duration = 10 s) is over: it sends nothing"
        );
        assert_eq!(
            w[1],
            "event[0] on link \"l\" at 30 s never happens: the run (run.duration = 10 s) is over by then"
        );
    }

    #[test]
    fn seconds_print_short() {
        assert_eq!(secs(Duration::from_secs(60)), "60 s");
        assert_eq!(secs(Duration::from_millis(250)), "0.25 s");
        assert_eq!(secs(Duration::from_micros(1500)), "0.002 s");
    }
}
