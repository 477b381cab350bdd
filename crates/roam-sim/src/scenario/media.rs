//! Media flows (`protocol = "media"`, and `protocol = "atl"` with `service = "media"`): the
//! rate controller name and the engine options, checked at load time (its agents:
//! `agents::media::build`).

use roam_proto::media::{MediaConfig, RateKind, ServiceType};

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
