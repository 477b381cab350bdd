//! `[[event]]` entries (timed link changes) and `[[route]]` overrides.

use std::time::Duration;

use toml::Value;

use super::fields::{Fields, IfaceRef};
use super::{
    host_by_name, link_by_name, node_by_name, resolve_iface, units, EventAction, EventSpec,
    LinkChange, LinkSpec, NodeKind, NodeSpec, RouteSpec,
};

pub(super) fn parse_event(
    v: Value,
    pos: usize,
    nodes: &[NodeSpec],
    links: &[LinkSpec],
) -> Result<EventSpec, String> {
    let ctx = format!("event[{pos}]");
    let mut f = Fields::new(v, &ctx, "")?;
    let at = f.req::<Duration>("at")?;
    let link = f.get::<String>("link")?;
    let node = f.get::<String>("node")?;
    let action = match (link, node) {
        (Some(link), None) => {
            let link = link_by_name(&f, "link", links, &link)?;
            let (forward, reverse) = match f.get::<String>("direction")?.as_deref() {
                None | Some("both") => (true, true),
                Some("forward") => (true, false),
                Some("reverse") => (false, true),
                Some(other) => {
                    return Err(f.err(
                        "direction",
                        format!("expected \"forward\", \"reverse\" or \"both\", got {other:?}"),
                    ))
                }
            };
            let mut s = f.sub("set")?.ok_or_else(|| f.missing("set"))?;
            let change = LinkChange {
                rate: s.get_with("rate", units::rate)?,
                delay: s.get::<Duration>("delay")?,
                loss: s.get_with("loss", units::probability)?,
                up: s.get::<bool>("up")?,
            };
            s.finish()?;
            EventAction::Link {
                link,
                forward,
                reverse,
                change,
            }
        }
        (None, Some(node)) => {
            let node = node_by_name(&f, "node", nodes, &node)?;
            let iface = f.get::<IfaceRef>("iface")?;
            if iface.is_none() {
                return Err(f.missing("iface"));
            }
            let iface = resolve_iface(&f, "iface", iface, node, nodes, links)?;
            let up = f.req::<bool>("up")?;
            EventAction::Iface { node, iface, up }
        }
        _ => return Err(f.err_entry("give exactly one of `link` or `node`")),
    };
    f.finish()?;
    Ok(EventSpec { at, action })
}

pub(super) fn parse_route(
    v: Value,
    pos: usize,
    nodes: &[NodeSpec],
    links: &[LinkSpec],
) -> Result<RouteSpec, String> {
    let ctx = format!("route[{pos}]");
    let mut f = Fields::new(v, &ctx, "")?;
    let router_name = f.req::<String>("node")?;
    let router = node_by_name(&f, "node", nodes, &router_name)?;
    if nodes[router].kind != NodeKind::Router {
        return Err(f.err("node", format!("{router_name:?} is not a router")));
    }
    let host_name = f.req::<String>("to")?;
    let host = host_by_name(&f, "to", nodes, &host_name)?;
    let iface = f.get::<IfaceRef>("to_iface")?;
    let iface = resolve_iface(&f, "to_iface", iface, host, nodes, links)?;
    let via = f.req::<String>("via")?;
    let link = link_by_name(&f, "via", links, &via)?;
    if links[link].a != router && links[link].b != router {
        return Err(f.err(
            "via",
            format!("link {via:?} is not attached to {router_name:?}"),
        ));
    }
    f.finish()?;
    Ok(RouteSpec {
        router,
        host,
        iface,
        link,
    })
}
