//! The emulated direction in virtual time: the simulator's link rules seen from a host that
//! only sends datagrams and asks what arrives.

use super::*;
use crate::scenario::Scenario;

fn scenario(link: &str, extra: &str) -> Scenario {
    let text = format!(
        "[run]\nduration = \"100s\"\nseed = 3\n[[node]]\nname = \"a\"\n[[node]]\nname = \"b\"\n\
         [[link]]\nname = \"l\"\na = \"a\"\nb = \"b\"\n{link}\n{extra}"
    );
    Scenario::from_toml_str(&text, "t").unwrap()
}

/// Runs `sends` (time, wire size) through `m` and returns every outcome with its time.
fn drive(m: &mut DirModel, sends: &[(Time, u32)], until: Time) -> Vec<(Time, Outcome)> {
    let mut got = Vec::new();
    let mut take = |m: &mut DirModel, t: Time| {
        got.extend(m.outcomes().map(|o| (t, o)));
    };
    for (id, &(t, wire)) in sends.iter().enumerate() {
        while let Some(d) = m.next_deadline().filter(|&d| d < t) {
            m.advance(d);
            take(m, d);
        }
        m.send(t, id as u32, wire);
        take(m, t);
    }
    while let Some(d) = m.next_deadline().filter(|&d| d <= until) {
        m.advance(d);
        take(m, d);
    }
    got
}

fn delivered(got: &[(Time, Outcome)]) -> Vec<(Time, u32)> {
    got.iter()
        .filter(|(_, o)| o.fate == Fate::Delivered)
        .map(|(t, o)| (*t, o.id))
        .collect()
}

#[test]
fn rate_and_delay_serialise_then_propagate() {
    let s = scenario("rate = \"12Mbps\"\ndelay = \"10ms\"\nqueue = \"1000p\"", "");
    let [mut fwd, _] = DirModel::for_link(&s, "l").unwrap();
    let sends: Vec<_> = (0..100).map(|_| (Time::ZERO, 1500)).collect();
    let got = delivered(&drive(&mut fwd, &sends, Time::from_millis(1000)));
    assert_eq!(got.len(), 100);
    for (k, (t, id)) in got.iter().enumerate() {
        assert_eq!(*id, k as u32, "in order");
        assert_eq!(
            *t,
            Time::from_millis(10 + k as u64 + 1),
            "1 ms each at 12 Mb/s"
        );
    }
}

#[test]
fn a_full_queue_drops_at_the_tail() {
    let s = scenario("rate = \"12Mbps\"\nqueue = \"10p\"", "");
    let [mut fwd, _] = DirModel::for_link(&s, "l").unwrap();
    let sends: Vec<_> = (0..30).map(|_| (Time::ZERO, 1500)).collect();
    let got = drive(&mut fwd, &sends, Time::from_millis(1000));
    let drops: Vec<u32> = got
        .iter()
        .filter(|(_, o)| o.fate == Fate::QueueDrop)
        .map(|(_, o)| o.id)
        .collect();
    // One on the wire, ten waiting, the rest refused.
    assert_eq!(drops, (11..30).collect::<Vec<_>>());
    assert_eq!(fwd.stats().queue_drops, 19);
    assert_eq!(delivered(&got).len(), 11);
}

#[test]
fn a_trace_delivers_at_its_opportunities() {
    let dir = std::env::temp_dir().join(format!("roam-emu-trace-{}", std::process::id()));
    std::fs::write(&dir, "5\n5\n9\n20\n").unwrap();
    let s = scenario(
        &format!(
            "queue = \"100p\"\n[link.forward]\ntrace = {:?}\n[link.reverse]\nrate = \"1Mbps\"",
            dir.display().to_string()
        ),
        "",
    );
    let _ = std::fs::remove_file(&dir);
    let [mut fwd, _] = DirModel::for_link(&s, "l").unwrap();
    let sends: Vec<_> = (0..6).map(|_| (Time::ZERO, 1500)).collect();
    let got = delivered(&drive(&mut fwd, &sends, Time::from_millis(1000)));
    let ms: Vec<u64> = got.iter().map(|(t, _)| t.as_nanos() / 1_000_000).collect();
    // Opportunities at 5, 5, 9, 20, then the trace repeats shifted by 20: 25, 25.
    assert_eq!(ms, vec![5, 5, 9, 20, 25, 25]);
}

#[test]
fn a_blackout_loses_what_arrives_in_it_and_a_rate_event_applies() {
    let s = scenario(
        "rate = \"12Mbps\"\ndelay = \"5ms\"\n[link.forward]\nblackouts = [{ at = \"100ms\", duration = \"50ms\" }]",
        "[[event]]\nat = \"300ms\"\nlink = \"l\"\nset = { rate = \"6Mbps\" }",
    );
    let [mut fwd, mut rev] = DirModel::for_link(&s, "l").unwrap();
    // One datagram every 10 ms for 400 ms.
    let sends: Vec<_> = (0..40).map(|k| (Time::from_millis(10 * k), 1500)).collect();
    let got = drive(&mut fwd, &sends, Time::from_millis(1000));
    for (t, o) in &got {
        let in_dark = *t >= Time::from_millis(100) && *t < Time::from_millis(150);
        assert_eq!(o.fate == Fate::Outage, in_dark, "{t:?} {o:?}");
    }
    assert_eq!(
        got.iter().filter(|(_, o)| o.fate == Fate::Outage).count(),
        5
    );
    // After the change a datagram takes 2 ms to serialise.
    let last = delivered(&got).last().copied().unwrap();
    assert_eq!(last, (Time::from_millis(390 + 2 + 5), 39));
    // The reverse direction has no blackout.
    let got = drive(&mut rev, &sends, Time::from_millis(1000));
    assert_eq!(delivered(&got).len(), 40);
}

#[test]
fn bernoulli_loss_is_seeded_and_near_its_rate() {
    let s = scenario(
        "rate = \"100Mbps\"\nqueue = \"100000p\"\n[link.forward]\nloss = 0.1",
        "",
    );
    let run = || {
        let [mut fwd, _] = DirModel::for_link(&s, "l").unwrap();
        let sends: Vec<_> = (0..20_000)
            .map(|k| (Time::from_micros(200 * k), 1000))
            .collect();
        drive(&mut fwd, &sends, Time::from_millis(10_000))
    };
    let (a, b) = (run(), run());
    assert_eq!(a, b, "same seed, same outcomes");
    let lost = a.iter().filter(|(_, o)| o.fate == Fate::Lost).count() as f64;
    // Binomial(20000, 0.1): sd = 42; 5 sd either way.
    assert!((lost - 2000.0).abs() < 212.0, "{lost}");
}

#[test]
fn a_duplicate_comes_before_its_original() {
    let s = scenario("rate = \"100Mbps\"\n[link.forward]\nduplicate = 1.0", "");
    let [mut fwd, _] = DirModel::for_link(&s, "l").unwrap();
    let got = drive(&mut fwd, &[(Time::ZERO, 100)], Time::from_millis(1000));
    let copies: Vec<bool> = got.iter().map(|(_, o)| o.copy).collect();
    assert_eq!(copies, vec![true, false]);
}

#[test]
fn interface_events_and_segment_drops_are_refused() {
    let s = scenario(
        "rate = \"1Mbps\"",
        "[[event]]\nat = \"1s\"\nnode = \"a\"\niface = \"l\"\nup = false",
    );
    assert!(matches!(
        DirModel::for_link(&s, "l"),
        Err(EmulationError::IfaceEvent(_))
    ));
    assert!(matches!(
        DirModel::for_link(&s, "m"),
        Err(EmulationError::NoLink(_))
    ));
}
