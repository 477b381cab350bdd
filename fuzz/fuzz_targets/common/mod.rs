//! What the engine fuzz targets share: the script reader, link facts read from the script, and
//! the bound on datagrams in flight.

use std::time::Duration;

use roam_proto::linkinfo::{ChannelState, LinkInfo};

/// Reads the script byte by byte (zeros once it runs out).
pub struct Script<'a>(pub &'a [u8]);

impl Script<'_> {
    pub fn byte(&mut self) -> u8 {
        let (b, rest) = self.0.split_first().map_or((0, &[][..]), |(b, r)| (*b, r));
        self.0 = rest;
        b
    }

    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.byte(), self.byte()])
    }

    pub fn done(&self) -> bool {
        self.0.is_empty()
    }

    /// Wireless link facts, every field read from the script.
    pub fn link_info(&mut self) -> LinkInfo {
        let good = self.byte() & 1 == 0;
        LinkInfo {
            wireless: true,
            loss_prob: f64::from(self.byte()) / 200.0,
            per: f64::from(self.byte()) / 200.0,
            one_way_delay: Duration::from_micros(u64::from(self.u16()) * 10),
            bandwidth_bps: u64::from(self.u16()) * 1000,
            channel: if good {
                ChannelState::Good
            } else {
                ChannelState::Bad
            },
            up: good,
            handoffs: u32::from(self.byte() % 4),
        }
    }
}

/// Keeps at most 512 datagrams in flight, dropping the oldest.
pub fn cap_in_flight<T>(wire: &mut Vec<T>) {
    const MAX_IN_FLIGHT: usize = 512;
    if wire.len() > MAX_IN_FLIGHT {
        wire.drain(..wire.len() - MAX_IN_FLIGHT);
    }
}
