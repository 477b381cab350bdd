//! `[[flow]]` entries: endpoints, protocol and its options, start, size or duration.

use std::time::Duration;

use toml::Value;

use super::fields::{Fields, IfaceRef};
use super::{
    entry_ctx, host_by_name, http, media, ptcp, r2cp, rcp, resolve_iface, tcp, units, FlowKind,
    FlowSpec, LinkSpec, NodeSpec,
};

/// Keys of the datagram sources (`cbr`, `pareto`) that the connection protocols do not use.
const DATAGRAM_KEYS: [&str; 6] = [
    "rate",
    "packet_size",
    "on_time",
    "off_time",
    "shape",
    "duration",
];

pub(super) fn parse_flow(
    v: Value,
    index: u64,
    pos: usize,
    nodes: &[NodeSpec],
    links: &[LinkSpec],
) -> Result<FlowSpec, String> {
    let ctx = entry_ctx("flow", &v, "id", pos);
    let mut f = Fields::new(v, &ctx, "")?;
    let id = f.req::<String>("id")?;
    let protocol = f.req::<String>("protocol")?;
    let from_name = f.req::<String>("from")?;
    let from = host_by_name(&f, "from", nodes, &from_name)?;
    let to_name = f.req::<String>("to")?;
    let to = host_by_name(&f, "to", nodes, &to_name)?;
    if from == to {
        return Err(f.err("to", "must differ from `from`"));
    }
    let from_iface = f.get::<IfaceRef>("from_iface")?;
    let from_iface = resolve_iface(&f, "from_iface", from_iface, from, nodes, links)?;
    let to_iface = f.get::<IfaceRef>("to_iface")?;
    let to_iface = resolve_iface(&f, "to_iface", to_iface, to, nodes, links)?;
    let start = f.get::<Duration>("start")?.unwrap_or_default();
    let step = f.get::<Duration>("start_step")?.unwrap_or_default();
    let start = u32::try_from(index)
        .ok()
        .and_then(|i| step.checked_mul(i))
        .and_then(|s| start.checked_add(s))
        .ok_or_else(|| f.err("start_step", "start time overflows"))?;
    let size = f.get_with("size", units::size)?;
    let duration = f.get::<Duration>("duration")?;
    let cross = f.get::<bool>("cross")?.unwrap_or(false);
    let cc = f.get::<String>("cc")?;
    let tcp_table = f.get::<Value>("tcp")?;
    let rcp_table = f.get::<Value>("rcp")?;
    let http_table = f.get::<Value>("http")?;
    if http_table.is_some() && protocol != "http" {
        return Err(f.err("http", format!("not used by protocol {protocol:?}")));
    }
    if rcp_table.is_some() && protocol != "rcp" && protocol != "r2cp" {
        return Err(f.err("rcp", format!("not used by protocol {protocol:?}")));
    }
    let energy = rcp::parse_energy(f.get::<Value>("energy")?).map_err(|e| f.err_entry(e))?;
    let rate = f.get_with("rate", units::rate)?;
    let packet_size = f.get_with("packet_size", units::size)?;
    let on = f.get::<Duration>("on_time")?;
    let off = f.get::<Duration>("off_time")?;
    let shape = f.get::<f64>("shape")?;
    let service = f.get::<String>("service")?;
    if service.is_some() && protocol != "atl" {
        return Err(f.err("service", format!("not used by protocol {protocol:?}")));
    }
    // The keys only some protocols use; naming one a protocol does not use is an error rather
    // than silently ignored.
    let given = [
        ("rate", rate.is_some()),
        ("packet_size", packet_size.is_some()),
        ("on_time", on.is_some()),
        ("off_time", off.is_some()),
        ("shape", shape.is_some()),
        ("duration", duration.is_some()),
        ("tcp", tcp_table.is_some()),
        ("cc", cc.is_some()),
        ("size", size.is_some()),
    ];
    let reject = |f: &Fields, unused: &[&str]| match given
        .iter()
        .find(|(key, present)| *present && unused.contains(key))
    {
        Some((key, _)) => Err(f.err(key, format!("not used by protocol {protocol:?}"))),
        None => Ok(()),
    };
    let kind = match protocol.as_str() {
        "tcp" => {
            reject(&f, &DATAGRAM_KEYS)?;
            FlowKind::Tcp(tcp::parse(cc, tcp_table).map_err(|e| f.err_entry(e))?)
        }
        "http" => {
            reject(&f, &DATAGRAM_KEYS)?;
            reject(&f, &["tcp", "cc", "size"])?;
            FlowKind::Http(http::parse(http_table).map_err(|e| f.err_entry(e))?)
        }
        "rcp" => {
            reject(&f, &DATAGRAM_KEYS)?;
            reject(&f, &["tcp"])?;
            FlowKind::Rcp(rcp::parse(cc, rcp_table).map_err(|e| f.err_entry(e))?)
        }
        "r2cp" => {
            reject(&f, &DATAGRAM_KEYS)?;
            reject(&f, &["tcp"])?;
            let setup = rcp::parse(cc, rcp_table).map_err(|e| f.err_entry(e))?;
            let d = r2cp::Defaults {
                from,
                from_iface,
                to,
                to_iface,
            };
            FlowKind::R2cp(r2cp::parse(&mut f, setup, &d, nodes, links)?)
        }
        "ptcp" => {
            reject(&f, &DATAGRAM_KEYS)?;
            let setup = tcp::parse(cc, tcp_table).map_err(|e| f.err_entry(e))?;
            let e = ptcp::Ends {
                from,
                from_iface,
                to,
                to_iface,
            };
            FlowKind::Ptcp(ptcp::parse(&mut f, setup, &e, nodes, links)?)
        }
        "cbr" | "pareto" => {
            reject(&f, &["cc", "tcp"])?;
            let rate_bps = rate.ok_or_else(|| f.missing("rate"))?;
            let packet_size = packet_size.unwrap_or(1000);
            if !(1..=65_507).contains(&packet_size) {
                return Err(f.err("packet_size", "expected 1..=65507 bytes"));
            }
            let packet_size = packet_size as u32;
            if protocol == "cbr" {
                reject(&f, &["on_time", "off_time", "shape"])?;
                FlowKind::Cbr {
                    rate_bps,
                    packet_size,
                }
            } else {
                let shape = shape.unwrap_or(1.5);
                if !(shape > 1.0 && shape <= 100.0) {
                    return Err(f.err("shape", "expected a number in (1, 100]"));
                }
                let mean_on = on.unwrap_or(Duration::from_millis(500));
                let mean_off = off.unwrap_or(Duration::from_millis(500));
                if mean_on.is_zero() {
                    return Err(f.err("on_time", "must be positive"));
                }
                FlowKind::Pareto {
                    rate_bps,
                    packet_size,
                    mean_on,
                    mean_off,
                    shape,
                }
            }
        }
        "media" | "atl" => {
            reject(&f, &["on_time", "off_time", "shape"])?;
            let service = if protocol == "atl" {
                media::service(service.as_deref()).map_err(|e| f.err_entry(e))?
            } else {
                roam_proto::media::ServiceType::Media
            };
            if service == roam_proto::media::ServiceType::Reliable {
                // atl.txt §IV: reliable data runs TCP-ATL; the wireless end reports its link.
                reject(&f, &["rate", "packet_size", "duration"])?;
                let mut setup =
                    tcp::parse(cc.or(Some("atl".into())), tcp_table).map_err(|e| f.err_entry(e))?;
                std::sync::Arc::make_mut(&mut setup.config).report_link_info = true;
                FlowKind::Tcp(setup)
            } else {
                reject(&f, &["tcp", "size"])?;
                FlowKind::Media(
                    media::parse(cc.as_deref(), packet_size, rate).map_err(|e| f.err_entry(e))?,
                )
            }
        }
        other => {
            return Err(f.err(
                "protocol",
                format!(
                    "expected \"tcp\", \"ptcp\", \"http\", \"rcp\", \"r2cp\", \"cbr\", \"pareto\", \"media\" or \"atl\", got {other:?}"
                ),
            ))
        }
    };
    f.finish()?;
    Ok(FlowSpec {
        id,
        kind,
        from,
        to,
        from_iface,
        to_iface,
        start,
        size,
        stop: duration.map(|d| start.saturating_add(d)),
        cross,
        energy,
    })
}
