//! Which peer addresses are one host, for the endpoint's per-host connection cap
//! (`EndpointConfig::max_per_peer`, `Endpoint::set_host_of`): every port of an IPv4 address,
//! and every address of an IPv6 /64 (one subnet, which a single machine usually holds whole:
//! RFC 4291 §2.5.4, RFC 8981 §3 temporary addresses), so that one machine cannot take the whole
//! connection table by using many source ports or addresses (issue 28, item 4).

use std::net::{IpAddr, Ipv6Addr, SocketAddr};

/// The host key of `addr`: its IPv4 address (an IPv4-mapped IPv6 address counts as the IPv4
/// address), or its IPv6 /64 prefix, with port 0.
pub fn host_key(addr: &SocketAddr) -> SocketAddr {
    let ip = match addr.ip() {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let prefix = u128::from(v6) & !((1u128 << 64) - 1);
                IpAddr::V6(Ipv6Addr::from(prefix))
            }
        },
    };
    SocketAddr::new(ip, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(s: &str) -> SocketAddr {
        host_key(&s.parse().unwrap())
    }

    #[test]
    fn ports_and_a_64_are_one_host() {
        assert_eq!(key("10.0.0.1:5000"), key("10.0.0.1:6000"));
        assert_ne!(key("10.0.0.1:5000"), key("10.0.0.2:5000"));
        assert_eq!(key("[2001:db8:1:2::1]:1"), key("[2001:db8:1:2:ffff::9]:2"));
        assert_ne!(key("[2001:db8:1:2::1]:1"), key("[2001:db8:1:3::1]:1"));
        assert_eq!(key("[::ffff:10.0.0.1]:7"), key("10.0.0.1:9"));
    }
}
