//! Corruption reports (`Agent::on_corrupted`) and measured link info, observed by a recording
//! agent in place of a flow's receiver.

use std::cell::RefCell;
use std::rc::Rc;

use super::*;
use crate::agent::{Agent, NetCtx, Packet};

#[derive(Default)]
struct Seen {
    delivered: u64,
    corrupted: u64,
    /// PER in link info at the last corruption report.
    last_per: f64,
}

struct Recorder(Rc<RefCell<Seen>>);

impl Agent for Recorder {
    fn start(&mut self, _ctx: &mut dyn NetCtx) {}
    fn on_packet(&mut self, _iface: IfaceIdx, _packet: &Packet, _ctx: &mut dyn NetCtx) {
        self.0.borrow_mut().delivered += 1;
    }
    fn on_timer(&mut self, _ctx: &mut dyn NetCtx) {}
    fn next_timer(&self) -> Option<Time> {
        None
    }
    fn on_corrupted(&mut self, iface: IfaceIdx, _packet: &Packet, ctx: &mut dyn NetCtx) {
        let mut s = self.0.borrow_mut();
        s.corrupted += 1;
        s.last_per = ctx.link_info(iface).map_or(f64::NAN, |i| i.per);
    }
}

fn observe(link_extra: &str) -> Seen {
    let text = format!(
        r#"
[run]
duration = "60s"
[[node]]
name = "a"
[[node]]
name = "b"
[[link]]
name = "w"
a = "a"
b = "b"
rate = "2Mbps"
delay = "10ms"
{link_extra}
[link.forward]
loss = 0.2
blackouts = [{{ at = "30s", duration = "5s" }}]
[[flow]]
id = "f"
protocol = "cbr"
from = "a"
to = "b"
rate = "100kbps"
packet_size = 100
"#
    );
    let s = Scenario::from_toml_str(&text, "t").expect("scenario");
    let seen = Rc::new(RefCell::new(Seen::default()));
    let mut runner = Runner::new(&s);
    runner.agents[0].agent = Box::new(Recorder(Rc::clone(&seen)));
    runner.run(&mut |_| {}, None);
    let out = std::mem::take(&mut *seen.borrow_mut());
    out
}

#[test]
fn corrupted_frames_reach_the_destination_agent_with_measured_per() {
    let seen = observe("link_info = { window = \"5s\" }");
    let total = (seen.delivered + seen.corrupted) as f64;
    let share = seen.corrupted as f64 / total;
    assert!((share - 0.2).abs() < 0.03, "corrupted share {share}");
    // Measured over the last 5 s of arrivals (blackout drops are not arrivals).
    assert!(
        (seen.last_per - 0.2).abs() < 0.08,
        "measured PER {}",
        seen.last_per
    );
}

#[test]
fn exact_link_info_reports_the_model_loss() {
    let seen = observe("");
    assert!(seen.corrupted > 0);
    assert!((seen.last_per - 0.2).abs() < 1e-12, "{}", seen.last_per);
}

#[test]
fn wired_links_report_no_corruption() {
    let seen = observe("wireless = false");
    assert_eq!(seen.corrupted, 0);
    assert!(seen.delivered > 0);
}
