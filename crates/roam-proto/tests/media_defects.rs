//! Issue 16's RCP-ATL media defects, each shown by a test against the engine as it was: these
//! fail until the fixes that follow them (and are then rewritten for the new API).

use roam_proto::media::MediaReceiver;
use roam_proto::Time;
use roam_wire::{ConnId, MediaPacket};

fn packet(conn: u64, seq: u64, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    MediaPacket {
        conn_id: ConnId(conn),
        seq,
        send_time_us: 0,
        rate_bps: 0,
        payload,
    }
    .encode(&mut out);
    out
}

/// The sink answers every packet with a report: a small packet with a forged source address
/// makes it send more bytes to the victim than the attacker sent.
#[test]
fn a_report_is_never_larger_than_the_packet_it_answers() {
    let mut rx = MediaReceiver::new(true);
    rx.set_link_info(
        Time::ZERO,
        roam_proto::linkinfo::LinkInfo {
            wireless: true,
            ..Default::default()
        },
    );
    let p = packet(9, 0, &[]);
    rx.handle_datagram(Time::ZERO, &p).expect("decodes");
    let mut buf = Vec::new();
    while let Some(n) = rx.poll_transmit(Time::ZERO, &mut buf) {
        assert!(
            n <= p.len(),
            "{n}-byte report for a {}-byte packet",
            p.len()
        );
        buf.clear();
    }
}

/// The sink adopts the connection of the first packet it sees: one forged packet arriving
/// first locks the real flow out.
#[test]
fn a_forged_first_packet_cannot_lock_out_the_real_flow() {
    let mut rx = MediaReceiver::new(false);
    rx.handle_datagram(Time::ZERO, &packet(666, 0, &[0; 100]))
        .expect("decodes");
    for seq in 0..10 {
        rx.handle_datagram(Time::ZERO, &packet(9, seq, &[0; 100]))
            .expect("decodes");
    }
    assert!(
        rx.stats().packets >= 10,
        "only {} packets counted",
        rx.stats().packets
    );
}
