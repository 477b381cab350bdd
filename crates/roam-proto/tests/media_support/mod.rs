//! The sink's host for media engine tests: a [`MediaAcceptor`] answering packets of flows it
//! does not hold without state, and the sinks it opened.

#![allow(dead_code)] // Each test binary uses part of the harness.

use roam_proto::endpoint::{Acceptor, TokenKey, Unknown};
use roam_proto::linkinfo::LinkInfo;
use roam_proto::media::{MediaAcceptor, MediaConfig, MediaReceiver};
use roam_proto::Time;
use roam_wire::{Header, MediaReport};

/// The source's address as the sink's host sees it.
pub const SOURCE_ADDR: &str = "10.0.0.1:5000";

/// The sink's host.
pub struct SinkHost {
    pub acceptor: MediaAcceptor,
    pub key: TokenKey,
    /// The sink opened for the flow, once its source echoed a token.
    pub sink: Option<MediaReceiver>,
    /// Link facts the host hands to every sink it opens.
    pub link: Option<LinkInfo>,
    /// Stateless replies sent.
    pub replies: u64,
}

impl SinkHost {
    /// A host opening sinks with `config`.
    pub fn new(config: MediaConfig) -> Self {
        SinkHost {
            acceptor: MediaAcceptor::new(config),
            key: TokenKey::new(*b"media-sink-key!!"),
            sink: None,
            link: None,
            replies: 0,
        }
    }

    /// Hands a datagram to the sink it names or to the acceptor; what the host sends back
    /// (stateless replies and the sink's reports) is appended to `out`. Panics if a stateless
    /// reply is larger than the datagram.
    pub fn handle(&mut self, now: Time, bytes: &[u8], out: &mut Vec<Vec<u8>>) {
        let ours = match (&self.sink, Header::peek_conn_id(bytes)) {
            (Some(s), Ok(id)) => s.conn_id() == id,
            _ => false,
        };
        if ours {
            if let Some(s) = self.sink.as_mut() {
                let _ = s.handle_datagram(now, bytes);
            }
        } else {
            let mut buf = Vec::new();
            match self
                .acceptor
                .on_unknown(now, &self.key, SOURCE_ADDR, bytes, &mut buf)
            {
                Unknown::Drop => {}
                Unknown::Reply { len } | Unknown::Reset { len } => {
                    assert!(
                        len <= bytes.len(),
                        "a stateless answer larger than its cause"
                    );
                    self.replies += 1;
                    out.push(buf[..len].to_vec());
                }
                Unknown::Accept(mut s) => {
                    if let Some(l) = self.link {
                        s.set_link_info(now, l);
                    }
                    self.sink = Some(s);
                }
            }
        }
        self.poll(now, out);
    }

    /// The sink's reports, appended to `out` (each checked to decode).
    pub fn poll(&mut self, now: Time, out: &mut Vec<Vec<u8>>) {
        if let Some(s) = self.sink.as_mut() {
            let mut buf = Vec::new();
            while s.poll_transmit(now, &mut buf).is_some() {
                assert!(MediaReport::decode(&buf).is_ok());
                out.push(std::mem::take(&mut buf));
            }
        }
    }

    /// Link facts for the sink (now and when it opens).
    pub fn set_link_info(&mut self, now: Time, info: LinkInfo) {
        self.link = Some(info);
        if let Some(s) = self.sink.as_mut() {
            s.set_link_info(now, info);
        }
    }
}
