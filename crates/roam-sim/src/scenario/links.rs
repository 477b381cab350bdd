//! `[[link]]` entries: rate, delay, queue and each direction's impairments.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use toml::Value;

use super::fields::Fields;
use super::{
    entry_ctx, node_by_name, units, Blackout, Capacity, DirSpec, GeState, GilbertSpec, LinkSpec,
    NodeSpec, QueueLimit, ReorderSpec,
};
use crate::link::trace::Trace;

/// Link-level defaults that each direction may override.
struct LinkDefaults {
    rate: Option<u64>,
    delay: Duration,
    queue: QueueLimit,
}

pub(super) fn parse_link(
    v: Value,
    pos: usize,
    nodes: &[NodeSpec],
    base_dir: Option<&Path>,
) -> Result<LinkSpec, String> {
    let ctx = entry_ctx("link", &v, "name", pos);
    let mut f = Fields::new(v, &ctx, "")?;
    let name = f.req::<String>("name")?;
    let a_name = f.req::<String>("a")?;
    let a = node_by_name(&f, "a", nodes, &a_name)?;
    let b_name = f.req::<String>("b")?;
    let b = node_by_name(&f, "b", nodes, &b_name)?;
    if a == b {
        return Err(f.err("b", "a link must join two different nodes"));
    }
    let defaults = LinkDefaults {
        rate: f.get_with("rate", units::rate)?,
        delay: f.get::<Duration>("delay")?.unwrap_or_default(),
        queue: f
            .get::<QueueLimit>("queue")?
            .unwrap_or(QueueLimit::Packets(100)),
    };
    let wireless = f.get::<bool>("wireless")?;
    let link_info = f.get_with("link_info", link_info_mode)?.unwrap_or_default();
    let forward = parse_dir(f.sub("forward")?, &f, "forward", &defaults, base_dir)?;
    let reverse = parse_dir(f.sub("reverse")?, &f, "reverse", &defaults, base_dir)?;
    f.finish()?;
    let lossy = |d: &DirSpec| {
        d.loss > 0.0 || d.gilbert.is_some() || matches!(d.capacity, Capacity::Trace(_))
    };
    Ok(LinkSpec {
        name,
        a,
        b,
        wireless: wireless.unwrap_or(lossy(&forward) || lossy(&reverse)),
        link_info,
        forward,
        reverse,
    })
}

/// `link_info = "exact"` or `link_info = { window = "5s" }` (a positive duration).
fn link_info_mode(v: &Value) -> Result<crate::link::meter::LinkInfoMode, String> {
    use crate::link::meter::LinkInfoMode;
    match v {
        Value::String(s) if s == "exact" => Ok(LinkInfoMode::Exact),
        Value::Table(t) if t.len() == 1 && t.contains_key("window") => {
            let window = units::duration(&t["window"]).map_err(|e| format!("window: {e}"))?;
            if window.is_zero() {
                return Err("window: must be positive".into());
            }
            Ok(LinkInfoMode::Measured { window })
        }
        other => Err(format!(
            "expected \"exact\" or {{ window = \"5s\" }}, got {other}"
        )),
    }
}

fn parse_dir(
    sub: Option<Fields>,
    link: &Fields,
    which: &str,
    d: &LinkDefaults,
    base_dir: Option<&Path>,
) -> Result<DirSpec, String> {
    let Some(mut f) = sub else {
        let rate = d.rate.ok_or_else(|| {
            link.err("rate", format!("missing (needed by the {which} direction)"))
        })?;
        return Ok(DirSpec {
            capacity: Capacity::Rate(rate),
            delay: d.delay,
            queue: d.queue,
            loss: 0.0,
            gilbert: None,
            blackouts: Vec::new(),
            reorder: None,
            duplicate: 0.0,
            jitter: Duration::ZERO,
            drop_segments: None,
        });
    };
    let rate = f.get_with("rate", units::rate)?.or(d.rate);
    let delay = f.get::<Duration>("delay")?.unwrap_or(d.delay);
    let queue = f.get::<QueueLimit>("queue")?.unwrap_or(d.queue);
    let loss = f.get_with("loss", units::probability)?.unwrap_or(0.0);
    let duplicate = f.get_with("duplicate", units::probability)?.unwrap_or(0.0);
    let jitter = f.get::<Duration>("jitter")?.unwrap_or(Duration::ZERO);
    let trace = match f.get::<String>("trace")? {
        None => None,
        Some(p) => {
            let path = resolve(base_dir, &p);
            Some(Arc::new(Trace::load(&path).map_err(|e| f.err("trace", e))?))
        }
    };
    let capacity = match (trace, rate) {
        (Some(t), _) => Capacity::Trace(t),
        (None, Some(r)) => Capacity::Rate(r),
        (None, None) => {
            return Err(link.err(
                "rate",
                format!("missing (give rate, or {which}.rate or {which}.trace)"),
            ))
        }
    };
    let gilbert = match f.sub("gilbert")? {
        None => None,
        Some(g) => Some(parse_gilbert(g)?),
    };
    let mut blackouts = Vec::new();
    for mut bf in f.sub_array("blackouts")? {
        let at = bf.req::<Duration>("at")?;
        let duration = bf.req::<Duration>("duration")?;
        bf.finish()?;
        blackouts.push(Blackout { at, duration });
    }
    let drop_segments = match f.sub("drop_segments")? {
        None => None,
        Some(mut sf) => {
            let segments = sf.req::<Value>("segments")?;
            let segments = crate::link::segment_drop::parse_segments(&segments)
                .map_err(|e| sf.err("segments", e))?;
            let mss = sf.get::<u64>("mss")?.unwrap_or(1000);
            if mss == 0 {
                return Err(sf.err("mss", "must be positive"));
            }
            sf.finish()?;
            Some(crate::link::segment_drop::SegmentDropSpec { segments, mss })
        }
    };
    let reorder = match f.sub("reorder")? {
        None => None,
        Some(mut rf) => {
            let probability = rf.req_with("probability", units::probability)?;
            let delay = rf.req::<Duration>("delay")?;
            rf.finish()?;
            Some(ReorderSpec { probability, delay })
        }
    };
    f.finish()?;
    Ok(DirSpec {
        capacity,
        delay,
        queue,
        loss,
        gilbert,
        blackouts,
        reorder,
        duplicate,
        jitter,
        drop_segments,
    })
}

fn resolve(base_dir: Option<&Path>, p: &str) -> PathBuf {
    let path = Path::new(p);
    match base_dir {
        Some(dir) if path.is_relative() => dir.join(path),
        _ => path.to_path_buf(),
    }
}

fn parse_gilbert(mut g: Fields) -> Result<GilbertSpec, String> {
    let state = |g: &mut Fields, key: &'static str| -> Result<GeState, String> {
        let mut s = g.sub(key)?.ok_or_else(|| g.missing(key))?;
        let mean = s.req::<Duration>("mean")?;
        if mean < Duration::from_micros(1) {
            return Err(s.err("mean", "must be at least 1us"));
        }
        let loss = s.req_with("loss", units::probability)?;
        s.finish()?;
        Ok(GeState { mean, loss })
    };
    let good = state(&mut g, "good")?;
    let bad = state(&mut g, "bad")?;
    let start_bad = match g.get::<String>("start")?.as_deref() {
        None | Some("good") => false,
        Some("bad") => true,
        Some(other) => {
            return Err(g.err(
                "start",
                format!("expected \"good\" or \"bad\", got {other:?}"),
            ))
        }
    };
    g.finish()?;
    Ok(GilbertSpec {
        good,
        bad,
        start_bad,
    })
}
