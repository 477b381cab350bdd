//! Coverage-guided search through the RCP engines' states: the input is a script of API calls
//! (reads, freezes, thaws, timers, clock steps, link facts, corruption reports, changes to what
//! the sender has available) and of what the wire does with each datagram (deliver in any
//! order, drop, duplicate). Nothing may panic, and the receiver must have read a prefix of the
//! range it asked for.
#![no_main]

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{cap_in_flight, Script};
use libfuzzer_sys::fuzz_target;
use roam_proto::cc::CcKind;
use roam_proto::rcp::{
    reset_for, ObjectStore, RcpCc, RcpConfig, RcpReceiver, RcpSender, ResetLimiter,
};
use roam_proto::Time;
use roam_wire::ConnId;

fn object_byte(offset: u64) -> u8 {
    (offset.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 56) as u8
}

/// One generated object, "obj", of a given length.
struct Generated(u64);

impl ObjectStore for Generated {
    fn object_len(&self, name: &[u8]) -> Option<u64> {
        (name == b"obj").then_some(self.0)
    }
    fn read(&self, _name: &[u8], offset: u64, len: usize, out: &mut Vec<u8>) {
        out.extend((offset..offset + len as u64).map(object_byte));
    }
}

fuzz_target!(|data: &[u8]| {
    let mut s = Script(data);
    let flags = s.byte();
    let cc = match s.byte() % 4 {
        3 => RcpCc::Stp,
        k => RcpCc::Shared(CcKind::ALL[usize::from(k) % CcKind::ALL.len()]),
    };
    let mss = 100 + u16::from(s.byte()) * 5;
    let config = Arc::new(RcpConfig {
        mss,
        eln: flags & 1 != 0,
        recv_buffer: u64::from(mss) * (2 + u64::from(s.byte() % 40)),
        sender_window: if flags & 2 != 0 {
            u64::from(mss) * (1 + u64::from(s.byte() % 40))
        } else {
            0
        },
        status_interval_ms: if flags & 4 != 0 {
            1 + u64::from(s.byte())
        } else {
            0
        },
        idle_timeout_ms: if flags & 8 != 0 {
            u64::from(s.byte()) * 20
        } else {
            RcpConfig::default().idle_timeout_ms
        },
        ..RcpConfig::default()
    });
    let len = 1 + u64::from(s.u16()) * 4;
    let start = u64::from(s.u16()) % len;
    let end = start + 1 + u64::from(s.u16()) * 4;
    let store: Arc<dyn ObjectStore> = Arc::new(Generated(len));
    let mut now = Time::from_millis(1);
    let Ok(mut rx) = RcpReceiver::connect(config.clone(), cc, ConnId(5), b"obj", (start, end), now)
    else {
        return;
    };
    let mut tx: Option<RcpSender> = None;
    let mut available = None;
    // The host's reset budget: a few a second when flag bit 4 is set, else the default.
    let mut resets = ResetLimiter::new(if flags & 16 != 0 {
        u32::from(flags >> 5)
    } else {
        ResetLimiter::DEFAULT_PER_SECOND
    });
    let mut read = Vec::new();
    let mut checked = 0;
    // In flight: (to the sender?, bytes).
    let mut wire: Vec<(bool, Vec<u8>)> = Vec::new();
    let mut buf = Vec::new();
    while !s.done() {
        let op = s.byte();
        match op % 12 {
            0 => {
                rx.read(&mut read, usize::from(s.u16()));
            }
            1 => rx.freeze(now),
            2 => {
                rx.thaw(now);
            }
            3 => now = now + Duration::from_micros(u64::from(s.u16()) * 100),
            4 => {
                let back = u64::from(s.u16()) * 1000;
                now = Time::from_nanos(now.as_nanos().saturating_sub(back));
            }
            5 => {
                // Jump to the deadline (or handle timers early).
                if let Some(t) = rx.poll_timeout().filter(|_| op & 16 == 0) {
                    now = now.max(t);
                }
                rx.handle_timeout(now);
                // The sender's idle timer; the host drops a sender that expired.
                if let Some(t) = tx.as_mut() {
                    t.handle_timeout(now);
                }
                if tx.as_ref().is_some_and(RcpSender::is_expired) {
                    tx = None;
                }
            }
            6..=8 if !wire.is_empty() => {
                let i = usize::from(s.u16()) % wire.len();
                match op % 12 {
                    6 => {
                        let (to_sender, bytes) = wire.remove(i);
                        if !to_sender {
                            let _ = rx.handle_datagram(now, &bytes);
                        } else if let Some(t) = tx.as_mut() {
                            let _ = t.handle_datagram(now, &bytes);
                        } else if let Ok(mut t) =
                            RcpSender::accept(&config, store.clone(), now, &bytes)
                        {
                            t.set_available(available);
                            tx = Some(t);
                        } else if reset_for(now, &bytes, &mut buf).is_some() && resets.allow(now) {
                            wire.push((false, buf.clone()));
                        }
                    }
                    7 => {
                        wire.remove(i);
                    }
                    _ => {
                        let copy = wire[i].clone();
                        wire.push(copy);
                    }
                }
            }
            9 => {
                let info = s.link_info();
                rx.set_link_info(now, &info);
            }
            10 => rx.note_corrupted(u64::from(s.u16()) * 4),
            11 => {
                available = (s.byte() & 1 == 0).then(|| u64::from(s.u16()) * 4);
                if let Some(t) = tx.as_mut() {
                    t.set_available(available);
                }
            }
            _ => {}
        }
        while rx.poll_transmit(now, &mut buf).is_some() {
            wire.push((true, buf.clone()));
        }
        while rx.poll_event().is_some() {}
        if let Some(t) = tx.as_mut() {
            while t.poll_transmit(now, &mut buf).is_some() {
                wire.push((false, buf.clone()));
            }
        }
        cap_in_flight(&mut wire);
        assert!(
            read.len() as u64 <= end.min(len) - start,
            "read past the range"
        );
        for (i, b) in read.iter().enumerate().skip(checked) {
            assert_eq!(*b, object_byte(start + i as u64), "object corrupted at {i}");
        }
        checked = read.len();
    }
});
