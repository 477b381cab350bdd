//! A deterministic impairment: drop the first transmission of chosen data segments on one
//! link direction (`drop_segments = { segments = [500, 504], mss = 1000 }`).
//!
//! Used to replay rcp-r2cp.txt Figure 5(b), where segments 500, 504, 508, 512, 525, 528 and
//! 531 are lost on the wireless hop. The impairment looks at the roam datagram header like a
//! stateful packet filter would: segment *k* (0-based) of a TCP-like stream starts at sequence
//! number `ISN + 1 + k·mss`, the ISN learnt from the connection's SYN (which travels the same
//! way as its data), of an RCP object at offset `k·mss`. Each listed segment is dropped once
//! (its retransmission passes), as a corruption loss, so a wireless receiver hears about it
//! exactly as with random loss.

use std::collections::{BTreeMap, BTreeSet};

use roam_wire::{ConnId, Data, Flags, Segment};

/// Connections whose ISN one link direction remembers (the simulator's own flows: far fewer).
const MAX_STREAMS: usize = 4096;

/// Which segments to drop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentDropSpec {
    /// Segment indices (0-based).
    pub segments: BTreeSet<u64>,
    /// Segment size used to number segments.
    pub mss: u64,
}

/// Run-time state: the segments still to drop.
#[derive(Debug, Clone)]
pub(crate) struct SegmentDrop {
    pending: BTreeSet<u64>,
    mss: u64,
    /// The ISN of each TCP-like connection whose SYN passed.
    isn: BTreeMap<ConnId, u64>,
}

impl SegmentDrop {
    pub(crate) fn new(spec: &SegmentDropSpec) -> Self {
        SegmentDrop {
            pending: spec.segments.clone(),
            mss: spec.mss.max(1),
            isn: BTreeMap::new(),
        }
    }

    /// True if `datagram` is the first transmission of a listed segment (it is then
    /// forgotten, so later copies pass).
    pub(crate) fn should_drop(&mut self, datagram: &[u8]) -> bool {
        if self.pending.is_empty() {
            return false;
        }
        let offset = if let Ok(s) = Segment::decode(datagram) {
            if s.flags.contains(Flags::SYN) && !s.flags.contains(Flags::ACK) {
                if self.isn.len() < MAX_STREAMS || self.isn.contains_key(&s.conn_id) {
                    self.isn.insert(s.conn_id, s.seq);
                }
                return false;
            }
            let Some(isn) = self.isn.get(&s.conn_id) else {
                return false;
            };
            if s.payload.is_empty() {
                return false;
            }
            match s.seq.checked_sub(isn.saturating_add(1)) {
                Some(offset) => offset,
                None => return false,
            }
        } else if let Ok(d) = Data::decode(datagram) {
            if d.payload.is_empty() {
                return false;
            }
            d.seq
        } else {
            return false;
        };
        if offset % self.mss != 0 {
            return false;
        }
        self.pending.remove(&(offset / self.mss))
    }
}

/// Parses `segments = [500, 504, …]` (at most 100 000 non-negative integers).
pub(crate) fn parse_segments(v: &toml::Value) -> Result<BTreeSet<u64>, String> {
    let items = v
        .as_array()
        .ok_or_else(|| "expected an array of segment numbers".to_string())?;
    if items.len() > 100_000 {
        return Err("more than 100000 segments".into());
    }
    items
        .iter()
        .map(|x| match x.as_integer() {
            Some(i) if i >= 0 => Ok(i as u64),
            _ => Err(format!("expected a non-negative integer, got {x}")),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use roam_wire::Options;

    fn tcp(conn: u64, flags: Flags, seq: u64, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        Segment {
            conn_id: ConnId(conn),
            flags,
            seq,
            ack: 0,
            window: 0,
            ts_val: 0,
            ts_ecr: 0,
            options: Options::default(),
            payload,
        }
        .encode(&mut out);
        out
    }

    #[test]
    fn tcp_segments_are_numbered_from_their_connections_isn() {
        let spec = SegmentDropSpec {
            segments: [0, 3].into_iter().collect(),
            mss: 100,
        };
        let mut d = SegmentDrop::new(&spec);
        let payload = [0u8; 100];
        let isn = (1 << 62) - 7;
        assert!(!d.should_drop(&tcp(9, Flags::SYN, isn, &[])));
        // Another connection's SYN-ACK (its own ISN) changes nothing.
        assert!(!d.should_drop(&tcp(9, Flags::SYN | Flags::ACK, 5, &[])));
        assert!(!d.should_drop(&tcp(9, Flags::ACK, isn + 101, &payload)));
        assert!(d.should_drop(&tcp(9, Flags::ACK, isn + 301, &payload)));
        assert!(
            !d.should_drop(&tcp(8, Flags::ACK, isn + 1, &payload)),
            "unknown stream"
        );
        assert!(
            !d.should_drop(&tcp(9, Flags::ACK, isn - 50, &payload)),
            "below the ISN"
        );
        assert!(d.should_drop(&tcp(9, Flags::ACK, isn + 1, &payload)));
    }

    #[test]
    fn drops_the_first_copy_of_listed_tcp_and_rcp_segments() {
        let spec = SegmentDropSpec {
            segments: [2, 5].into_iter().collect(),
            mss: 1000,
        };
        let mut d = SegmentDrop::new(&spec);
        let payload = [0u8; 1000];
        let seg = |seq| tcp(1, Flags::ACK, seq, &payload);
        let data = |seq| {
            let mut out = Vec::new();
            Data {
                conn_id: ConnId(1),
                flags: Flags::ACK,
                seq,
                window: 0,
                ts_val: 0,
                ts_ecr: 0,
                pull_id: 0,
                object_len: None,
                token: None,
                payload: &payload,
            }
            .encode(&mut out);
            out
        };
        assert!(!d.should_drop(&seg(2001)), "no SYN seen: not numbered");
        assert!(!d.should_drop(&tcp(1, Flags::SYN, 0, &[])));
        assert!(!d.should_drop(&seg(1001)));
        assert!(d.should_drop(&seg(2001)));
        assert!(!d.should_drop(&seg(2001)), "the retransmission passes");
        assert!(d.should_drop(&data(5000)));
        assert!(!d.should_drop(&data(5000)));
    }
}
