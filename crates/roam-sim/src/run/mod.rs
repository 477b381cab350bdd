//! Running a scenario: building the network and agents, the event loop, and the result.

use std::time::Duration;

use roam_proto::Time;

use crate::agent::{FlowIdx, IfaceIdx};
use crate::agents::flow::{self, FlowAgents, FlowEnds};
use crate::event::{EventKind, Popped};
use crate::link::LinkDir;
use crate::metrics::{build_result, RunTotals, Sampler};
use crate::result::RunResult;
use crate::rng::{stream_id, stream_rng};
use crate::scenario::routing::out_dir;
use crate::scenario::{EventAction, FlowKind, NodeKind, Scenario};
use crate::sim::{arm_timer, call_agent, AgentSlot, Arrival, Call, IfaceRt, Net, NodeRt};
use crate::trace::{PacketObserver, PacketRecord, PendingRecord, TraceBuffer};

/// Port of flow `i`'s receiving agent.
pub fn receiver_port(i: usize) -> u16 {
    5000u16.saturating_add(u16::try_from(i).unwrap_or(u16::MAX))
}

/// Port of flow `i`'s sending agent.
pub fn sender_port(i: usize) -> u16 {
    30000u16.saturating_add(u16::try_from(i).unwrap_or(u16::MAX))
}

/// Runs a scenario to its end (or until every non-cross flow is sized and complete, if
/// `stop_when_done`). Deterministic: the same scenario and seed give the same result.
pub fn run(scenario: &Scenario) -> RunResult {
    run_with_progress(scenario, &mut |_| {})
}

/// Like [`run`], calling `progress` with the fraction of simulated time done (at most about
/// 100 times, the last time with 1.0).
pub fn run_with_progress(scenario: &Scenario, progress: &mut dyn FnMut(f64)) -> RunResult {
    Runner::new(scenario).run(progress, None)
}

/// Like [`run_with_progress`], also handing `observer` a record of what happened to every
/// datagram at every link direction, in time order ([`crate::trace`]). The result is the one
/// [`run`] gives.
pub fn run_traced(
    scenario: &Scenario,
    progress: &mut dyn FnMut(f64),
    observer: &mut dyn PacketObserver,
) -> RunResult {
    let mut runner = Runner::new(scenario);
    runner.trace_to(observer);
    runner.run(progress, Some(observer))
}

/// Hands the records the simulator collected to `observer`, naming links and flows.
fn hand_over(
    s: &Scenario,
    records: &mut Vec<PendingRecord>,
    link_names: &[String],
    observer: &mut dyn PacketObserver,
) {
    for r in records.drain(..) {
        observer.observe(&PacketRecord {
            time: r.time,
            link: link_names.get(r.dir as usize).map_or("?", String::as_str),
            fate: r.fate,
            flow: r.flow.and_then(|f| s.flows.get(f.0)).map(|f| f.id.as_str()),
            bytes: r.bytes,
            summary: &r.summary,
            src: r.src,
            dst: r.dst,
            payload: r.payload.as_deref(),
        });
    }
}

struct Runner<'s> {
    s: &'s Scenario,
    net: Net,
    agents: Vec<AgentSlot>,
    /// Sender agent of each flow.
    senders: Vec<u32>,
}

fn build_net(s: &Scenario) -> Net {
    let routing = std::sync::Arc::clone(s.routing());
    let seed = s.run.seed;
    let iface_at = |node: usize, link: usize| {
        s.nodes[node]
            .ifaces
            .iter()
            .position(|&l| l == link)
            .unwrap_or(0) as u32
    };
    let mut dirs = Vec::with_capacity(2 * s.links.len());
    for (li, l) in s.links.iter().enumerate() {
        dirs.push(LinkDir::new(
            &l.forward,
            l.b as u32,
            iface_at(l.b, li),
            seed,
            &format!("link:{}:fwd", l.name),
            l.wireless,
            l.link_info,
        ));
        dirs.push(LinkDir::new(
            &l.reverse,
            l.a as u32,
            iface_at(l.a, li),
            seed,
            &format!("link:{}:rev", l.name),
            l.wireless,
            l.link_info,
        ));
    }
    let nodes = s
        .nodes
        .iter()
        .enumerate()
        .map(|(ni, n)| NodeRt {
            is_router: n.kind == NodeKind::Router,
            ifaces: n
                .ifaces
                .iter()
                .enumerate()
                .map(|(k, &l)| IfaceRt {
                    out: out_dir(&s.links, l, ni),
                    addr: (n.kind == NodeKind::Host).then(|| routing.addr(ni, k as u32)),
                    up: true,
                    handoffs: 0,
                })
                .collect(),
            ports: Vec::new(),
        })
        .collect();
    Net::new(dirs, nodes, routing, s.flows.len(), s.run.header_overhead)
}

impl<'s> Runner<'s> {
    fn new(s: &'s Scenario) -> Runner<'s> {
        Runner::with_net(s, build_net(s))
    }

    /// Sets up the agents and the first events of `s` on `net` (built by [`build_net`]).
    fn with_net(s: &'s Scenario, mut net: Net) -> Runner<'s> {
        let seed = s.run.seed;
        let mut agents = Vec::new();
        let mut senders = Vec::new();
        let mut starts = Vec::new();
        let routing = std::sync::Arc::clone(&net.routing);
        for (i, f) in s.flows.iter().enumerate() {
            let flow = FlowIdx(i);
            let FlowAgents {
                sender,
                receiver,
                sender_node,
                extra: extra_servers,
            } = flow::build(&FlowEnds {
                flow,
                spec: f,
                routing: &routing,
                sender_port: sender_port(i),
                receiver_port: receiver_port(i),
                conn_seed: stream_id(&format!("conn:{}:{seed}", f.id)),
                header_overhead: s.run.header_overhead,
            });
            let receiver = match (&f.kind, f.energy) {
                (FlowKind::Rcp(_) | FlowKind::R2cp(_), _) | (_, None) => receiver,
                (_, Some(model)) => crate::energy::metered(
                    receiver,
                    flow,
                    IfaceIdx(f.to_iface),
                    model,
                    s.run.header_overhead,
                ),
            };
            let rx = agents.len() as u32;
            agents.push(AgentSlot {
                agent: receiver,
                node: f.to as u32,
                rng: stream_rng(seed, &format!("agent:{}:rx", f.id)),
                pending: None,
                flow: i as u32,
            });
            net.nodes[f.to].ports.push((receiver_port(i), rx));
            let tx = agents.len() as u32;
            agents.push(AgentSlot {
                agent: sender,
                node: sender_node as u32,
                rng: stream_rng(seed, &format!("agent:{}:tx", f.id)),
                pending: None,
                flow: i as u32,
            });
            net.nodes[sender_node].ports.push((sender_port(i), tx));
            for (k, (node, agent)) in extra_servers.into_iter().enumerate() {
                let a = agents.len() as u32;
                agents.push(AgentSlot {
                    agent,
                    node: node as u32,
                    rng: stream_rng(seed, &format!("agent:{}:tx{}", f.id, k + 1)),
                    pending: None,
                    flow: i as u32,
                });
                net.nodes[node].ports.push((sender_port(i), a));
                starts.push((Time::ZERO + f.start, a));
            }
            // RCP's congestion window and progress live at the receiver.
            senders.push(if matches!(f.kind, FlowKind::Rcp(_) | FlowKind::R2cp(_)) {
                rx
            } else {
                tx
            });
            net.events.push(Time::ZERO, EventKind::AgentStart(rx));
            starts.push((Time::ZERO + f.start, tx));
        }
        for (t, a) in starts {
            net.events.push(t, EventKind::AgentStart(a));
        }
        for n in &mut net.nodes {
            n.ports.sort_unstable();
        }
        let mut runner = Runner {
            s,
            net,
            agents,
            senders,
        };
        runner.schedule_link_events();
        runner
    }

    /// Records what happens to every datagram for `observer` (before [`Runner::run`]).
    fn trace_to(&mut self, observer: &dyn PacketObserver) {
        self.net.trace = Some(TraceBuffer::for_observer(
            observer,
            self.s.flows.iter().map(|f| f.id.as_str()),
        ));
    }

    fn schedule_link_events(&mut self) {
        let net = &mut self.net;
        for (li, l) in self.s.links.iter().enumerate() {
            for (k, spec) in [&l.forward, &l.reverse].into_iter().enumerate() {
                let dir = (2 * li + k) as u32;
                if let Some(g) = net.dirs[dir as usize].imp.gilbert.as_mut() {
                    let first = g.sojourn();
                    net.events
                        .push(Time::ZERO + first, EventKind::GilbertFlip(dir));
                }
                for b in &spec.blackouts {
                    if b.duration.is_zero() {
                        continue;
                    }
                    let at = Time::ZERO + b.at;
                    net.events.push(at, EventKind::Blackout { dir, on: true });
                    net.events
                        .push(at + b.duration, EventKind::Blackout { dir, on: false });
                }
            }
        }
        for (i, e) in self.s.events.iter().enumerate() {
            net.events
                .push(Time::ZERO + e.at, EventKind::Scheduled(i as u32));
        }
        let interval = self.s.run.sample_interval;
        if !interval.is_zero() && interval <= self.s.run.duration {
            net.events.push(Time::ZERO + interval, EventKind::Sample);
        }
    }

    /// Calls every agent on `node` (if a host) about a change on its interface `iface`.
    fn notify_iface(&mut self, node: u32, iface: u32, done: &mut Completion) {
        let n = &self.net.nodes[node as usize];
        if n.is_router {
            return;
        }
        for k in 0..n.ports.len() {
            let a = self.net.nodes[node as usize].ports[k].1;
            let slot = &mut self.agents[a as usize];
            call_agent(&mut self.net, slot, a, Call::LinkChange(IfaceIdx(iface)));
            done.check(self.agents[a as usize].flow, &self.net);
        }
    }

    /// Hands an arrived packet to its agent, if it has one.
    fn deliver(&mut self, arrival: Arrival, done: &mut Completion) {
        let Arrival::Agent(a, call) = arrival else {
            return;
        };
        let agent = &mut self.agents[a as usize];
        call_agent(&mut self.net, agent, a, call);
        done.check(self.agents[a as usize].flow, &self.net);
    }

    /// Notifies the agents at both ends of the link that direction `dir` belongs to.
    fn notify_link(&mut self, dir: u32, done: &mut Completion) {
        for d in [dir, dir ^ 1] {
            let (node, iface) = {
                let ld = &self.net.dirs[d as usize];
                (ld.to_node, ld.to_iface)
            };
            self.notify_iface(node, iface, done);
        }
    }

    fn run(
        mut self,
        progress: &mut dyn FnMut(f64),
        mut observer: Option<&mut dyn PacketObserver>,
    ) -> RunResult {
        let s = self.s;
        let link_names: Vec<String> = s
            .links
            .iter()
            .flat_map(|l| [format!("{}:fwd", l.name), format!("{}:rev", l.name)])
            .collect();
        let end = Time::ZERO + s.run.duration;
        let step = (s.run.duration / 100).max(Duration::from_nanos(1));
        let mut next_progress = Time::ZERO + step;
        let mut sampler = Sampler::new(s);
        let mut last_sample = Time::ZERO;
        let mut done = Completion::new(s);
        let mut events = 0u64;
        let mut stopped_at = None;
        while let Some((t, popped)) = self.net.events.pop_until(end) {
            self.net.now = t;
            match popped {
                Popped::Lane(dir, pkt) => match self.net.arrive(dir, pkt) {
                    Arrival::None => {}
                    arrival => self.deliver(arrival, &mut done),
                },
                Popped::Event(EventKind::AgentStart(a)) => {
                    call_agent(&mut self.net, &mut self.agents[a as usize], a, Call::Start);
                    done.check(self.agents[a as usize].flow, &self.net);
                }
                Popped::Event(EventKind::AgentTimer(a)) => {
                    let slot = &mut self.agents[a as usize];
                    if slot.pending == Some(t) {
                        slot.pending = None;
                    }
                    if slot.agent.next_timer().is_some_and(|x| x <= t) {
                        call_agent(&mut self.net, slot, a, Call::Timer);
                        done.check(self.agents[a as usize].flow, &self.net);
                    } else {
                        arm_timer(&mut self.net, slot, a, t, false);
                    }
                }
                Popped::TxReady(d) => self.net.tx_ready(d),
                Popped::Event(EventKind::Arrive(slot)) => {
                    let arrival = self.net.arrive_alone(slot);
                    self.deliver(arrival, &mut done);
                }
                Popped::Event(EventKind::GilbertFlip(d)) => {
                    if let Some(g) = self.net.dirs[d as usize].imp.gilbert.as_mut() {
                        let next = g.flip();
                        self.net.events.push(t + next, EventKind::GilbertFlip(d));
                    }
                    self.notify_link(d, &mut done);
                }
                Popped::Event(EventKind::Blackout { dir, on }) => {
                    self.net.dirs[dir as usize].blackout(on);
                    self.notify_link(dir, &mut done);
                }
                Popped::Event(EventKind::Scheduled(i)) => {
                    if let Some(e) = s.events.get(i as usize) {
                        self.net.apply(e);
                        match &e.action {
                            EventAction::Link { link, .. } => {
                                self.notify_link(2 * *link as u32, &mut done)
                            }
                            EventAction::Iface { node, iface, .. } => {
                                self.notify_iface(*node as u32, *iface, &mut done)
                            }
                        }
                    }
                }
                Popped::Event(EventKind::Sample) => {
                    let agents = &self.agents;
                    let senders = &self.senders;
                    sampler.sample(t, &self.net.counters, |i| {
                        agents[senders[i] as usize].agent.sample()
                    });
                    last_sample = t;
                    let next = t + s.run.sample_interval;
                    if next <= end {
                        self.net.events.push(next, EventKind::Sample);
                    }
                }
            }
            // Counted and reported after the event, so that nothing stands between the pop and
            // the dispatch on what it popped.
            events += 1;
            if t >= next_progress {
                progress(t.as_secs_f64() / end.as_secs_f64());
                let k = t.as_nanos() / step.as_nanos().max(1) as u64 + 1;
                next_progress = Time::from_nanos(k.saturating_mul(step.as_nanos() as u64));
            }
            if let (Some(trace), Some(obs)) = (self.net.trace.as_mut(), observer.as_mut()) {
                hand_over(s, &mut trace.records, &link_names, &mut **obs);
            }
            if done.all_done() {
                stopped_at = Some(t);
                break;
            }
        }
        let end = stopped_at.unwrap_or(end);
        if stopped_at.is_some() && !s.run.sample_interval.is_zero() && end > last_sample {
            let agents = &self.agents;
            let senders = &self.senders;
            sampler.sample(end, &self.net.counters, |i| {
                agents[senders[i] as usize].agent.sample()
            });
        }
        progress(1.0);
        build_result(
            s,
            RunTotals {
                end,
                events,
                counters: &self.net.counters,
                dirs: &self.net.dirs,
                series: sampler.into_series(),
                stopped_early: stopped_at.is_some(),
            },
        )
    }
}

/// Tracks which flows have completed, for `stop_when_done`.
struct Completion {
    counted: Vec<bool>,
    done: Vec<bool>,
    remaining: usize,
    can_stop: bool,
}

impl Completion {
    fn new(s: &Scenario) -> Completion {
        let counted: Vec<bool> = s.flows.iter().map(|f| !f.cross).collect();
        let remaining = counted.iter().filter(|&&c| c).count();
        Completion {
            can_stop: s.run.stop_when_done
                && remaining > 0
                && s.flows.iter().all(|f| f.cross || f.size.is_some()),
            done: vec![false; counted.len()],
            counted,
            remaining,
        }
    }

    /// Notes whether flow `f` has completed (after one of its agents was called); nothing to
    /// note in a run that cannot stop early.
    #[inline(always)]
    fn check(&mut self, f: u32, net: &Net) {
        if !self.can_stop {
            return;
        }
        let f = f as usize;
        if !self.done[f] && net.counters[f].completed_at.is_some() {
            self.done[f] = true;
            if self.counted[f] {
                self.remaining -= 1;
            }
        }
    }

    fn all_done(&self) -> bool {
        self.can_stop && self.remaining == 0
    }
}

#[cfg(test)]
mod wireless_tests;

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;

    use roam_proto::linkinfo::{ChannelState, LinkInfo};

    use super::*;
    use crate::agent::{Agent, NetCtx, Packet};

    type Log = Rc<RefCell<Vec<(f64, LinkInfo)>>>;

    /// Records every link change it is told about.
    struct Recorder(Log);

    impl Agent for Recorder {
        fn start(&mut self, _ctx: &mut dyn NetCtx) {}
        fn on_packet(&mut self, _iface: IfaceIdx, _packet: &Packet, _ctx: &mut dyn NetCtx) {}
        fn on_timer(&mut self, _ctx: &mut dyn NetCtx) {}
        fn next_timer(&self) -> Option<Time> {
            None
        }
        fn on_link_change(&mut self, iface: IfaceIdx, ctx: &mut dyn NetCtx) {
            if let Some(info) = ctx.link_info(iface) {
                self.0.borrow_mut().push((ctx.now().as_secs_f64(), info));
            }
        }
    }

    /// Every packet record of a traced run, as text.
    #[derive(Default)]
    struct Records(Vec<String>);

    impl PacketObserver for Records {
        fn observe(&mut self, r: &PacketRecord<'_>) {
            self.0.push(format!(
                "{} {} {:?} {:?} {} {}",
                r.time.as_nanos(),
                r.link,
                r.fate,
                r.flow,
                r.bytes,
                r.summary
            ));
        }
    }

    /// A traced run of `s`, with the event queue's lanes or (`lanes` false) every arrival
    /// scheduled on its own.
    fn traced_run(s: &Scenario, lanes: bool) -> (RunResult, Vec<String>) {
        traced_run_with(s, |net| {
            if !lanes {
                net.events = crate::event::EventQueue::with_lanes(0);
            }
        })
    }

    /// A traced run of `s` on the network as `adjust` leaves it.
    fn traced_run_with(s: &Scenario, adjust: impl FnOnce(&mut Net)) -> (RunResult, Vec<String>) {
        let mut net = build_net(s);
        adjust(&mut net);
        let mut runner = Runner::with_net(s, net);
        let mut records = Records::default();
        runner.trace_to(&records);
        let result = runner.run(&mut |_| {}, Some(&mut records));
        (result, records.0)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(6))]
        /// Link lanes change nothing: under jitter, reordering, duplication, loss and delay
        /// and rate changes (packets that overtake others, or would, are scheduled on their
        /// own), the run gives the same result and the same packet records, in the same
        /// order, as a queue without lanes.
        #[test]
        fn lanes_give_the_same_run_as_one_heap(
            seed in 1u64..1000,
            jitter_us in 0u64..3000,
            reorder in 0.0f64..0.2,
            duplicate in 0.0f64..0.1,
            cut_ms in 1u64..30,
        ) {
            let s = Scenario::from_toml_str(
                &format!(
                    r#"
[run]
duration = "4s"
seed = {seed}
[[node]]
name = "a"
[[node]]
name = "r"
kind = "router"
[[node]]
name = "b"
[[link]]
name = "in"
a = "a"
b = "r"
rate = "20Mbps"
delay = "5ms"
[link.forward]
jitter = "{jitter_us}us"
duplicate = {duplicate}
[link.reverse]
reorder = {{ probability = {reorder}, delay = "3ms" }}
[[link]]
name = "out"
a = "r"
b = "b"
rate = "5Mbps"
delay = "30ms"
queue = "40p"
[link.forward]
loss = 0.01
reorder = {{ probability = {reorder}, delay = "2ms" }}
[[flow]]
id = "bulk"
protocol = "tcp"
from = "a"
to = "b"
[[flow]]
id = "cbr"
protocol = "cbr"
from = "b"
to = "a"
rate = "500kbps"
[[event]]
at = "1s"
link = "out"
set = {{ delay = "{cut_ms}ms" }}
[[event]]
at = "2s"
link = "in"
set = {{ rate = "4Mbps", delay = "1ms" }}
"#
                ),
                "lanes",
            )
            .unwrap();
            let (with, with_records) = traced_run(&s, true);
            let (without, without_records) = traced_run(&s, false);
            proptest::prop_assert!(with.events > 1000);
            proptest::prop_assert_eq!(with_records, without_records);
            proptest::prop_assert_eq!(with, without);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(6))]
        /// A router's plain hop (forwarded without the arrival checks), a plain departure
        /// (without the jitter, reordering and duplication draws) and an agent's send in one
        /// step change nothing: with loss, jitter, reordering, duplication, blackouts, loss and
        /// delay and rate changes, a link taken down and a router's and a host's interface
        /// taken down and up again (directions that stop and start being plain), the run gives
        /// the same result and the same packet records, in the same order, as one where every
        /// arrival and departure takes the checked path and agents send by separate calls.
        #[test]
        fn plain_paths_give_the_same_run_as_the_checked_paths(
            seed in 1u64..1000,
            loss in 0.0f64..0.05,
            jitter_us in 0u64..2000,
            reorder in 0.0f64..0.2,
            duplicate in 0.0f64..0.1,
            blackout_ms in 1u64..400,
        ) {
            let s = Scenario::from_toml_str(
                &format!(
                    r#"
[run]
duration = "5s"
seed = {seed}
[[node]]
name = "a"
[[node]]
name = "c"
[[node]]
name = "r1"
kind = "router"
[[node]]
name = "r2"
kind = "router"
[[node]]
name = "b"
[[link]]
name = "in"
a = "a"
b = "r1"
rate = "20Mbps"
delay = "2ms"
[link.forward]
duplicate = {duplicate}
[[link]]
name = "side"
a = "c"
b = "r1"
rate = "10Mbps"
delay = "4ms"
[link.forward]
reorder = {{ probability = {reorder}, delay = "3ms" }}
[link.reverse]
loss = {loss}
[[link]]
name = "mid"
a = "r1"
b = "r2"
rate = "8Mbps"
delay = "10ms"
queue = "30p"
[link.forward]
loss = {loss}
jitter = "{jitter_us}us"
blackouts = [{{ at = "1500ms", duration = "{blackout_ms}ms" }}]
[link.reverse]
reorder = {{ probability = {reorder}, delay = "2ms" }}
[[link]]
name = "out"
a = "r2"
b = "b"
rate = "50Mbps"
delay = "1ms"
[[flow]]
id = "bulk"
protocol = "tcp"
from = "a"
to = "b"
[[flow]]
id = "side"
protocol = "tcp"
from = "c"
to = "b"
[[flow]]
id = "cbr"
protocol = "cbr"
from = "b"
to = "a"
rate = "400kbps"
[[event]]
at = "1s"
link = "mid"
set = {{ loss = 0.02, delay = "15ms" }}
[[event]]
at = "2s"
link = "mid"
set = {{ loss = 0.0, rate = "4Mbps" }}
[[event]]
at = "2500ms"
node = "r2"
iface = 0
up = false
[[event]]
at = "2800ms"
node = "r2"
iface = 0
up = true
[[event]]
at = "2000ms"
node = "a"
iface = 0
up = false
[[event]]
at = "4500ms"
node = "a"
iface = 0
up = true
[[event]]
at = "3200ms"
link = "in"
set = {{ up = false }}
[[event]]
at = "3500ms"
link = "in"
set = {{ up = true, delay = "1ms" }}
"#
                ),
                "forwarding",
            )
            .unwrap();
            let (fast, fast_records) = traced_run_with(&s, |_| {});
            let (checked, checked_records) = traced_run_with(&s, |net| net.checked_only = true);
            proptest::prop_assert!(fast.events > 1000);
            proptest::prop_assert!(fast_records.iter().any(|r| r.contains("Forwarded")));
            proptest::prop_assert_eq!(fast_records, checked_records);
            proptest::prop_assert_eq!(fast, checked);
        }
    }

    /// A direction that starts plain (nothing can drop an arriving packet, so arrivals skip the
    /// impairment checks) loses packets again once loss, a blackout or a down link is switched
    /// on at run time, and stops when it is switched off.
    #[test]
    fn impairments_switched_on_at_run_time_drop_arrivals() {
        let s = Scenario::from_toml_str(
            r#"
[run]
duration = "7s"
[[node]]
name = "a"
[[node]]
name = "b"
[[link]]
name = "w"
a = "a"
b = "b"
rate = "10Mbps"
delay = "10ms"
[link.forward]
blackouts = [{ at = "3s", duration = "1s" }]
[[flow]]
id = "f"
protocol = "cbr"
from = "a"
to = "b"
rate = "1Mbps"
packet_size = "1000B"
[[event]]
at = "1s"
link = "w"
set = { loss = 1.0 }
[[event]]
at = "2s"
link = "w"
set = { loss = 0.0 }
[[event]]
at = "5s"
link = "w"
set = { up = false }
[[event]]
at = "6s"
link = "w"
set = { up = true }
"#,
            "t",
        )
        .unwrap();
        let r = run(&s);
        // 125 datagrams a second, lost for three of the seven seconds.
        let drops = r.links[0].impairment_drops;
        assert!((360..=390).contains(&drops), "{drops} drops");
        let delivered = r.flows[0].bytes_delivered;
        assert!((480_000..=510_000).contains(&delivered), "{delivered} B");
    }

    #[test]
    fn agents_observe_channel_state_blackouts_handoffs_and_rate_changes() {
        let s = Scenario::from_toml_str(
            r#"
[run]
duration = "30s"
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
[link.forward]
gilbert = { good = { mean = "2s", loss = 0.0 }, bad = { mean = "1s", loss = 0.5 } }
blackouts = [{ at = "25s", duration = "1s" }]
[[flow]]
id = "f"
protocol = "cbr"
from = "a"
to = "b"
rate = "100kbps"
[[event]]
at = "10s"
link = "w"
set = { rate = "1Mbps" }
[[event]]
at = "12s"
node = "b"
iface = 0
up = false
[[event]]
at = "13s"
node = "b"
iface = "w"
up = true
"#,
            "t",
        )
        .unwrap();
        let log: Log = Rc::default();
        let mut runner = Runner::new(&s);
        runner.agents[0].agent = Box::new(Recorder(Rc::clone(&log)));
        runner.run(&mut |_| {}, None);
        let log = log.borrow();
        let flips = log
            .windows(2)
            .filter(|w| w[0].1.channel != w[1].1.channel)
            .count();
        assert!(flips >= 6, "{flips} channel changes in {log:?}");
        assert!(log.iter().all(|(_, i)| i.wireless));
        let at = |t: f64| log.iter().find(|(x, _)| (*x - t).abs() < 1e-9).map(|e| e.1);
        assert_eq!(at(10.0).map(|i| i.bandwidth_bps), Some(1_000_000));
        assert_eq!(at(12.0).map(|i| i.up), Some(false));
        let back = at(13.0).expect("up again");
        assert!(back.up);
        assert_eq!(back.handoffs, 2, "rate change + interface back up");
        assert_eq!(at(25.0).map(|i| i.channel), Some(ChannelState::Bad));
        assert!((log[0].1.loss_prob - 0.5 / 3.0).abs() < 1e-9);
    }
}
