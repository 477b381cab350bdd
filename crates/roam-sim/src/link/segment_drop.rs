//! A deterministic impairment: drop the first transmission of chosen data segments on one
//! link direction (`drop_segments = { segments = [500, 504], mss = 1000 }`).
//!
//! Used to replay rcp-r2cp.txt Figure 5(b), where segments 500, 504, 508, 512, 525, 528 and
//! 531 are lost on the wireless hop. The impairment looks at the roam datagram header like a
//! packet filter would: segment *k* (0-based) of a TCP-like stream starts at sequence number
//! `1 + k·mss` (the SYN takes sequence number 0), of an RCP object at offset `k·mss`. Each
//! listed segment is dropped once (its retransmission passes), as a corruption loss, so a
//! wireless receiver hears about it exactly as with random loss.

use std::collections::BTreeSet;

use roam_wire::{Data, Segment};

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
}

impl SegmentDrop {
    pub(crate) fn new(spec: &SegmentDropSpec) -> Self {
        SegmentDrop {
            pending: spec.segments.clone(),
            mss: spec.mss.max(1),
        }
    }

    /// True if `datagram` is the first transmission of a listed segment (it is then
    /// forgotten, so later copies pass).
    pub(crate) fn should_drop(&mut self, datagram: &[u8]) -> bool {
        if self.pending.is_empty() {
            return false;
        }
        let offset = if let Ok(s) = Segment::decode(datagram) {
            if s.payload.is_empty() || s.seq == 0 {
                return false;
            }
            s.seq - 1
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
    use roam_wire::{ConnId, Flags, Options};

    #[test]
    fn drops_the_first_copy_of_listed_tcp_and_rcp_segments() {
        let spec = SegmentDropSpec {
            segments: [2, 5].into_iter().collect(),
            mss: 1000,
        };
        let mut d = SegmentDrop::new(&spec);
        let payload = [0u8; 1000];
        let seg = |seq| {
            let mut out = Vec::new();
            Segment {
                conn_id: ConnId(1),
                flags: Flags::ACK,
                seq,
                ack: 0,
                window: 0,
                ts_val: 0,
                ts_ecr: 0,
                options: Options::default(),
                payload: &payload,
            }
            .encode(&mut out);
            out
        };
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
        assert!(!d.should_drop(&seg(1001)));
        assert!(d.should_drop(&seg(2001)));
        assert!(!d.should_drop(&seg(2001)), "the retransmission passes");
        assert!(d.should_drop(&data(5000)));
        assert!(!d.should_drop(&data(5000)));
    }
}
