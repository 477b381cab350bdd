//! What the engine fuzz targets share: the script reader (bytes, numbers an attacker would
//! try), link facts read from the script, and the bound on datagrams in flight.

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

    #[allow(dead_code)] // Each engine target uses a part of the script reader.
    pub fn u32(&mut self) -> u32 {
        u32::from(self.u16()) | u32::from(self.u16()) << 16
    }

    #[allow(dead_code)]
    pub fn u64(&mut self) -> u64 {
        u64::from(self.u32()) | u64::from(self.u32()) << 32
    }

    /// Up to `n` bytes of the script (fewer once it runs out).
    #[allow(dead_code)]
    pub fn take(&mut self, n: usize) -> &[u8] {
        let (a, b) = self.0.split_at(n.min(self.0.len()));
        self.0 = b;
        a
    }

    /// A 64-bit number an attacker would try: near one of `bases` (the connection's own
    /// numbers), at an edge of the 64-bit space or of the ISN range below 2^62, or anything.
    #[allow(dead_code)]
    pub fn number(&mut self, bases: &[u64]) -> u64 {
        const MAX_ISN: u64 = (1 << 62) - 1;
        let small = u64::from(self.u16());
        match self.byte() % 8 {
            0 => small,
            1 => u64::MAX - small,
            2 => MAX_ISN.wrapping_add(small).wrapping_sub(1 << 15),
            3 => (1 << 63) ^ small,
            4 | 5 if !bases.is_empty() => {
                let base = bases[usize::from(self.byte()) % bases.len()];
                base.wrapping_add(small).wrapping_sub(1 << 10)
            }
            6 if !bases.is_empty() => {
                let base = bases[usize::from(self.byte()) % bases.len()];
                base.wrapping_add(u64::from(self.u32()))
            }
            _ => self.u64(),
        }
    }

    /// Wireless link facts, every field read from the script.
    #[allow(dead_code)]
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
