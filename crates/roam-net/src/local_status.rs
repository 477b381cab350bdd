//! What the host knows about its local addresses beyond what the sockets report: an address
//! it saw go away (a netlink watcher, a test) is marked down, and a multipath fetch then drops
//! that address's pipes and socket at once instead of waiting for a send error or a stall,
//! and binds it again only once it is marked up.

use std::net::IpAddr;
use std::sync::{Arc, Mutex};

/// Local addresses the host has marked down; cheap to clone (shared).
#[derive(Debug, Clone, Default)]
pub struct LocalStatus {
    down: Arc<Mutex<Vec<IpAddr>>>,
}

impl LocalStatus {
    /// No address marked down.
    pub fn new() -> Self {
        Self::default()
    }

    /// Marks `addr` down (`true`) or up again (`false`).
    pub fn set_down(&self, addr: IpAddr, down: bool) {
        let mut d = self.down.lock().unwrap_or_else(|e| e.into_inner());
        d.retain(|a| *a != addr);
        if down {
            d.push(addr);
        }
    }

    /// True if `addr` is marked down.
    pub fn is_down(&self, addr: IpAddr) -> bool {
        self.down
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(&addr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_is_down_until_marked_up_and_clones_share_the_state() {
        let s = LocalStatus::new();
        let a: IpAddr = "127.0.0.2".parse().unwrap();
        let seen = s.clone();
        assert!(!seen.is_down(a));
        s.set_down(a, true);
        s.set_down(a, true);
        assert!(seen.is_down(a));
        s.set_down(a, false);
        assert!(!seen.is_down(a));
    }
}
