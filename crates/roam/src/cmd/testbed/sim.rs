//! The simulator beside the emulator (issue 29, item 5): the same `[[link]]`s, the same bytes,
//! roam's engine simulated. One link model, two hosts: where they disagree by more than
//! ±10 %, the runtime, the emulation or the simulator is wrong. Done for the single-path RCP
//! modes (`roam-a`, `roam-b`: an `rcp` flow pinned to that link); the multipath modes are not
//! simulated here yet.

use toml::Value;

use super::modes::Mode;
use super::Case;

/// The simulated goodput (Mb/s) of `mode` over `case`'s links, if the mode is simulated here
/// and the flow completed.
pub fn goodput(case: &Case, mode: &Mode) -> Option<f64> {
    let Mode::Roam(k) = mode else {
        return None;
    };
    let mut doc = case.doc.clone();
    let link = match doc.get_mut("link") {
        Some(Value::Array(links)) => links.get_mut(*k)?,
        _ => return None,
    };
    let Value::Table(l) = link else { return None };
    // The test bed's roles: each link's `a` end is the mobile host.
    l.insert("a".into(), Value::String("mobile".into()));
    l.insert("b".into(), Value::String("server".into()));
    let name = l.get("name")?.as_str()?.to_string();
    if let Some(Value::Array(links)) = doc.get_mut("link") {
        for (i, other) in links.iter_mut().enumerate() {
            if let (true, Value::Table(t)) = (i != *k, other) {
                t.insert("a".into(), Value::String("mobile".into()));
                t.insert("b".into(), Value::String("server".into()));
            }
        }
    }
    let table = |pairs: &[(&str, Value)]| {
        Value::Table(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        )
    };
    let s = |x: &str| Value::String(x.into());
    doc.insert(
        "run".into(),
        table(&[("duration", s("3600s")), ("seed", Value::Integer(1))]),
    );
    doc.insert(
        "node".into(),
        Value::Array(vec![
            table(&[("name", s("mobile"))]),
            table(&[("name", s("server"))]),
        ]),
    );
    doc.insert(
        "flow".into(),
        Value::Array(vec![table(&[
            ("id", s("roam")),
            ("protocol", s("rcp")),
            ("from", s("server")),
            ("to", s("mobile")),
            ("to_iface", s(&name)),
            ("from_iface", s(&name)),
            ("size", Value::Integer(i64::try_from(case.size).ok()?)),
        ])]),
    );
    let scenario =
        roam_sim::Scenario::from_value_in(Value::Table(doc), &case.name, case.file.parent())
            .ok()?;
    let result = roam_sim::run(&scenario);
    let f = result.flows.first()?;
    let secs = f.completion_s?;
    (secs > 0.0).then(|| case.size as f64 * 8.0 / secs / 1e6)
}
