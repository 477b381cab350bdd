//! Media flows (`protocol = "media"`, and `protocol = "atl"` with `service = "media"`): the
//! rate controller name and the engine options, checked at load time; and the construction of
//! a media flow's two agents.

use roam_proto::media::{MediaConfig, RateKind, ServiceType};

use crate::agent::{Agent, FlowIdx, IfaceIdx, SockAddr};
use crate::agents::media::{media_sink, media_source, MediaSourceParams};

/// How to build the two endpoints of a media flow.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MediaSetup {
    /// Rate controller (`rcp-atl` or `aimd`).
    pub kind: RateKind,
    /// Engine options.
    pub config: MediaConfig,
}

/// Checks a media flow's `cc` (rate controller), `packet_size` and `rate` (the encoder's top
/// rate, default 1 Gb/s). Messages start with the field.
pub(crate) fn parse(
    cc: Option<&str>,
    packet_size: Option<u64>,
    max_rate_bps: Option<u64>,
) -> Result<MediaSetup, String> {
    let kind = match cc {
        None => RateKind::Atl,
        Some(name) => RateKind::parse(name)
            .ok_or_else(|| format!("cc: unknown rate control {name:?} (known: rcp-atl, aimd)"))?,
    };
    let mut config = MediaConfig::default();
    if let Some(size) = packet_size {
        if !(1..=65_000).contains(&size) {
            return Err("packet_size: expected 1..=65000 bytes".into());
        }
        config.packet_size = size as u32;
    }
    if let Some(rate) = max_rate_bps {
        if rate < config.min_rate_bps {
            return Err(format!(
                "rate: must be at least {} bit/s",
                config.min_rate_bps
            ));
        }
        config.max_rate_bps = rate;
        config.initial_rate_bps = config.initial_rate_bps.min(rate);
    }
    Ok(MediaSetup { kind, config })
}

/// Parses an ATL flow's `service` (atl.txt §IV: the requested service selects the protocol).
pub(crate) fn service(name: Option<&str>) -> Result<ServiceType, String> {
    match name {
        None => Ok(ServiceType::Reliable),
        Some(s) => ServiceType::parse(s)
            .ok_or_else(|| format!("service: expected \"reliable\" or \"media\", got {s:?}")),
    }
}

/// Where a media flow's endpoints live.
pub(crate) struct MediaEnds {
    pub flow: FlowIdx,
    pub sender_iface: IfaceIdx,
    pub sender_port: u16,
    pub receiver_iface: IfaceIdx,
    pub receiver_port: u16,
    pub peer: SockAddr,
    pub stop: Option<roam_proto::Time>,
    pub conn_seed: u64,
}

/// Builds the (source, sink) agents of a media flow.
pub(crate) fn agents(setup: &MediaSetup, e: &MediaEnds) -> (Box<dyn Agent>, Box<dyn Agent>) {
    let source = media_source(MediaSourceParams {
        flow: e.flow,
        config: setup.config,
        kind: setup.kind,
        iface: e.sender_iface,
        local_port: e.sender_port,
        peer: e.peer,
        stop: e.stop,
        conn_seed: e.conn_seed,
    });
    let sink = media_sink(e.flow, setup.config, e.receiver_iface, e.receiver_port);
    (source, sink)
}
