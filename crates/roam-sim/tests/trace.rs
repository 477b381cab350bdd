//! Packet traces: observing a run does not change it, and the records agree with the link
//! counters.

mod common;

use common::{link, load, two_hosts};
use roam_proto::Time;
use roam_sim::trace::{PacketFate, PacketObserver, PacketRecord};

/// Keeps every record, owned.
#[derive(Default)]
struct Keep(Vec<(Time, String, PacketFate, Option<String>, String)>);

impl PacketObserver for Keep {
    fn observe(&mut self, r: &PacketRecord<'_>) {
        self.0.push((
            r.time,
            r.link.to_owned(),
            r.fate,
            r.flow.map(str::to_owned),
            r.summary.to_owned(),
        ));
    }
}

fn lossy_transfer() -> String {
    two_hosts(
        "60s",
        "rate = \"2Mbps\"\ndelay = \"10ms\"\nqueue = \"10p\"",
        "[link.forward]\nloss = 0.02\nduplicate = 0.01\n",
        "[[flow]]\nid = \"f\"\nprotocol = \"tcp\"\nfrom = \"a\"\nto = \"b\"\nsize = \"300KB\"\n",
    )
}

#[test]
fn a_traced_run_gives_the_untraced_result() {
    let s = load(&lossy_transfer());
    let mut keep = Keep::default();
    let traced = roam_sim::run_traced(&s, &mut |_| {}, &mut keep);
    assert_eq!(traced, roam_sim::run(&s));
    assert!(!keep.0.is_empty());
}

#[test]
fn trace_records_agree_with_the_link_counters() {
    let s = load(&lossy_transfer());
    let mut keep = Keep::default();
    let r = roam_sim::run_traced(&s, &mut |_| {}, &mut keep);
    let count = |dir: &str, fate: PacketFate| {
        keep.0
            .iter()
            .filter(|(_, l, f, _, _)| l == dir && *f == fate)
            .count() as u64
    };
    let fwd = link(&r, "l:fwd");
    assert_eq!(count("l:fwd", PacketFate::Sent), fwd.packets_sent);
    assert_eq!(count("l:fwd", PacketFate::QueueDrop), fwd.queue_drops);
    assert_eq!(
        count("l:fwd", PacketFate::Lost) + count("l:fwd", PacketFate::Corrupted),
        fwd.impairment_drops
    );
    assert!(count("l:fwd", PacketFate::Duplicated) > 0);
    assert!(keep.0.windows(2).all(|w| w[0].0 <= w[1].0), "time order");
    assert!(keep
        .0
        .iter()
        .all(|(_, _, _, flow, _)| flow.as_deref() == Some("f")));
    // The first datagram on the wire is the SYN.
    let first = &keep.0[0];
    assert_eq!(first.2, PacketFate::Sent);
    assert!(first.4.starts_with("seg [S]"), "{}", first.4);
}

/// Keeps the records of one flow only, saying so before the run.
struct KeepOnly {
    flow: &'static str,
    kept: Keep,
}

impl PacketObserver for KeepOnly {
    fn observe(&mut self, r: &PacketRecord<'_>) {
        self.kept.observe(r);
    }

    fn wants(&self, flow: Option<&str>) -> bool {
        flow == Some(self.flow)
    }
}

#[test]
fn an_observer_gets_only_the_flows_it_wants_and_the_run_is_unchanged() {
    let two_flows = lossy_transfer()
        + "[[flow]]\nid = \"g\"\nprotocol = \"tcp\"\nfrom = \"b\"\nto = \"a\"\nsize = \"100KB\"\n";
    let s = load(&two_flows);
    let mut all = Keep::default();
    let everything = roam_sim::run_traced(&s, &mut |_| {}, &mut all);
    let mut only_g = KeepOnly {
        flow: "g",
        kept: Keep::default(),
    };
    let filtered = roam_sim::run_traced(&s, &mut |_| {}, &mut only_g);
    assert_eq!(filtered, everything);
    let g_of_all: Vec<_> = all
        .0
        .iter()
        .filter(|r| r.3.as_deref() == Some("g"))
        .cloned()
        .collect();
    assert!(!g_of_all.is_empty() && g_of_all.len() < all.0.len());
    assert_eq!(only_g.kept.0, g_of_all);
}
