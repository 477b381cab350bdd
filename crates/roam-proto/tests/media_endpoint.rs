//! The media engines driven through an [`Endpoint`], as the simulator and the UDP runtime
//! drive them: every timer that fires makes progress or moves its deadline forward
//! (docs/ENDPOINT.md, "Timers make progress"), so a host that fires a source's timers without
//! sending at once is not woken again at the same instant.

use std::time::Duration;

use roam_proto::endpoint::{
    DatagramEvent, Endpoint, EndpointConfig, NoAcceptor, PathAddrs, PathId, TokenKey,
};
use roam_proto::media::{MediaAcceptor, MediaConfig, MediaSender, RateKind};
use roam_proto::Time;
use roam_wire::ConnId;

fn source() -> MediaSender {
    MediaSender::new(MediaConfig::default(), RateKind::Atl, ConnId(7))
}

#[test]
fn a_fired_pacing_timer_is_not_reported_again_until_the_source_sends() {
    let mut tx = source();
    let mut buf = Vec::new();
    assert!(tx.poll_transmit(Time::ZERO, &mut buf).is_some());
    let at = tx.poll_timeout().expect("the next paced send");
    // The host fires the timer but has not sent yet (e.g. its interface is down).
    tx.handle_timeout(at);
    let next = tx.poll_timeout().expect("the feedback deadline");
    assert!(next > at, "fired at {at:?}, re-armed at {next:?}");
    // Sending makes the pacing deadline count again.
    buf.clear();
    assert!(tx.poll_transmit(at, &mut buf).is_some());
    let paced = tx.poll_timeout().expect("the next paced send");
    assert!(paced > at && paced < next, "{paced:?}");
}

#[test]
fn a_fired_feedback_timer_moves_forward_even_with_a_zero_minimum() {
    let config = MediaConfig {
        min_feedback_timeout: Duration::ZERO,
        ..MediaConfig::default()
    };
    let mut tx = MediaSender::new(config, RateKind::Aimd, ConnId(7));
    let mut buf = Vec::new();
    let mut now = Time::ZERO;
    for _ in 0..1000 {
        buf.clear();
        let _ = tx.poll_transmit(now, &mut buf);
        let at = tx.poll_timeout().expect("a deadline");
        now = now.max(at);
        tx.handle_timeout(now);
        assert!(tx.poll_timeout().is_some_and(|t| t > now) || tx.poll_timeout().is_none());
    }
    assert!(tx.stats().feedback_timeouts > 0);
}

#[test]
fn an_endpoint_firing_a_source_that_does_not_send_returns_and_moves_on() {
    let config = EndpointConfig {
        idle_timeout: None,
        ..EndpointConfig::default()
    };
    let mut ep: Endpoint<u32, (), NoAcceptor<MediaSender>> =
        Endpoint::new(config, TokenKey::new([0; 16]), NoAcceptor::default());
    let path = PathAddrs {
        path: PathId::PRIMARY,
        local: (),
        remote: 1,
    };
    let h = ep.insert(Time::ZERO, source(), &[path]).expect("inserted");
    let mut buf = Vec::new();
    assert!(ep.poll_transmit(Time::ZERO, &mut buf).is_some());
    while ep.poll_transmit(Time::ZERO, &mut buf).is_some() {}
    // The host fires every due deadline but sends nothing (its interface has no address):
    // each deadline fires once, and time moves on to the feedback timer.
    let mut now = Time::ZERO;
    let mut fired = 0;
    while now < Time::from_millis(2000) {
        let at = ep.poll_timeout().expect("a deadline");
        assert!(at > now || fired == 0, "{at:?} at {now:?}: a timer loop");
        now = at;
        ep.handle_timeout(now);
        fired += 1;
        assert!(fired < 100, "woken {fired} times by 2 s");
    }
    let sent_before = ep.connection(h).expect("held").stats().packets_sent;
    // Once the host sends again, the source resumes its pacing.
    assert!(ep.poll_transmit(now, &mut buf).is_some());
    assert!(ep.connection(h).expect("held").stats().packets_sent > sent_before);
}

#[test]
fn a_sink_endpoint_answers_with_a_token_then_accepts_the_echo() {
    let mut ep: Endpoint<u32, (), MediaAcceptor> = Endpoint::new(
        EndpointConfig::default(),
        TokenKey::new([9; 16]),
        MediaAcceptor::new(MediaConfig::default()),
    );
    let mut tx = source();
    let (mut pkt, mut out) = (Vec::new(), Vec::new());
    assert!(tx.poll_transmit(Time::ZERO, &mut pkt).is_some());
    let Some(DatagramEvent::Respond { remote: 1, len, .. }) =
        ep.handle(Time::ZERO, (), 1, &pkt, &mut out)
    else {
        panic!("a stateless report with a token");
    };
    tx.handle_datagram(Time::from_millis(40), &out[..len])
        .expect("a report");
    assert!(tx.echoing_token());
    pkt.clear();
    let t = tx.poll_timeout().expect("the next paced send");
    assert!(tx.poll_transmit(t, &mut pkt).is_some());
    assert!(matches!(
        ep.handle(t, (), 1, &pkt, &mut out),
        Some(DatagramEvent::Accepted(_))
    ));
    // Its report (without a token) goes back on the path it came from.
    let sent = ep.poll_transmit(t, &mut out).expect("a report");
    assert_eq!(sent.remote, 1);
}

#[test]
fn a_source_opens_its_sink_again_after_the_sink_expired() {
    let idle = Duration::from_secs(60);
    let config = MediaConfig {
        idle_timeout: Some(idle),
        ..MediaConfig::default()
    };
    let mut sink: Endpoint<u32, (), MediaAcceptor> = Endpoint::new(
        EndpointConfig {
            idle_timeout: None,
            ..EndpointConfig::default()
        },
        TokenKey::new([9; 16]),
        MediaAcceptor::new(config),
    );
    let mut tx = MediaSender::new(config, RateKind::Atl, ConnId(7));
    let (mut pkt, mut out) = (Vec::new(), Vec::new());
    let mut accepted = 0;
    // One exchange at `now` (no delay): the source's due packets to the sink, the sink's
    // answers back.
    let mut exchange = |tx: &mut MediaSender, sink: &mut Endpoint<u32, (), MediaAcceptor>, now| {
        tx.handle_timeout(now);
        pkt.clear();
        while tx.poll_transmit(now, &mut pkt).is_some() {
            match sink.handle(now, (), 1, &pkt, &mut out) {
                Some(DatagramEvent::Respond { len, .. }) => {
                    let _ = tx.handle_datagram(now, &out[..len]);
                }
                Some(DatagramEvent::Accepted(_)) => accepted += 1,
                _ => {}
            }
            while let Some(t) = sink.poll_transmit(now, &mut out) {
                let _ = tx.handle_datagram(now, &out[..t.len]);
            }
            pkt.clear();
        }
        sink.handle_timeout(now);
        while sink.poll_event().is_some() {}
        accepted
    };
    let ms = Time::from_millis;
    for t in 0..20 {
        exchange(&mut tx, &mut sink, ms(100 * t));
    }
    assert_eq!(exchange(&mut tx, &mut sink, ms(2000)), 1);
    assert!(!tx.echoing_token());
    // Nothing reaches the sink for longer than its idle timeout: it expires.
    sink.handle_timeout(ms(2000) + idle + Duration::from_secs(5));
    assert_eq!(sink.stats().drained, 1, "the sink expired");
    let reports = tx.stats().reports;
    // The source's next packets get token reports; it echoes and the sink opens again, and
    // its reports (counting from 1 again) steer the source.
    let back = 2000 + 70_000;
    for t in 0..20 {
        exchange(&mut tx, &mut sink, ms(back + 100 * t));
    }
    assert_eq!(accepted, 2, "opened again");
    assert!(!tx.echoing_token());
    assert!(tx.stats().reports > reports + 5, "{:?}", tx.stats());
}
