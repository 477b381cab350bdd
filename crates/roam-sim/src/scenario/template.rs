//! Document-level editing before validation: `count = N` repetition with `{i}` substitution,
//! and dotted-key overrides for sweeps and the CLI.

use toml::Value;

use super::error::ScenarioError;

/// Most entries one section may expand to (guards against `count = 1e12`).
pub const MAX_EXPANDED: u64 = 100_000;

/// One entry after repetition: the table and its repetition index (0 when not repeated).
pub(crate) struct Expanded {
    pub value: Value,
    pub index: u64,
}

/// Expands the `count` of every entry of the array `section`, substituting `{i}` in every string
/// of a repeated entry (recursively). Entries without `count` are kept as they are.
pub(crate) fn expand(section: &str, items: Vec<Value>) -> Result<Vec<Expanded>, String> {
    let mut out = Vec::new();
    for (pos, item) in items.into_iter().enumerate() {
        let Value::Table(mut table) = item else {
            return Err(format!("{section}[{pos}]: expected a table"));
        };
        let Some(count) = table.remove("count") else {
            out.push(Expanded {
                value: Value::Table(table),
                index: 0,
            });
            continue;
        };
        let count = match count {
            Value::Integer(n) if (0..=MAX_EXPANDED as i64).contains(&n) => n as u64,
            other => {
                return Err(format!(
                "{section}[{pos}]: count: expected an integer in 0..={MAX_EXPANDED}, got {other}"
            ))
            }
        };
        if out.len() as u64 + count > MAX_EXPANDED {
            return Err(format!(
                "{section}[{pos}]: count: more than {MAX_EXPANDED} {section} entries in total"
            ));
        }
        let template = Value::Table(table);
        for i in 0..count {
            let mut v = template.clone();
            substitute(&mut v, &i.to_string());
            out.push(Expanded { value: v, index: i });
        }
    }
    Ok(out)
}

fn substitute(v: &mut Value, i: &str) {
    match v {
        Value::String(s) if s.contains("{i}") => *s = s.replace("{i}", i),
        Value::Array(items) => items.iter_mut().for_each(|x| substitute(x, i)),
        Value::Table(t) => t.iter_mut().for_each(|(_, x)| substitute(x, i)),
        _ => {}
    }
}

/// Parses an override value: any TOML value (integer, float, boolean, quoted string, array,
/// inline table) if it parses as one, else the raw text as a string (so `10Mbps` needs no
/// quotes).
pub fn parse_param_value(text: &str) -> Value {
    if let Ok(mut t) = format!("v = {text}").parse::<toml::Table>() {
        if t.len() == 1 {
            if let Some(v) = t.remove("v") {
                if !matches!(v, Value::Datetime(_)) {
                    return v;
                }
            }
        }
    }
    Value::String(text.to_string())
}

/// Sets `key` (a dotted path) in a scenario document to `value` (see [`parse_param_value`]).
///
/// Each segment selects a table key (missing intermediate tables are created), an array index,
/// or the array element whose `name` or `id` equals the segment: `link.bottleneck.forward.loss`,
/// `flow.0.cc`, `flow.f3.size`, `run.seed`. Names are matched as written in the document, so
/// the elements of a repeated entry are addressed by its template name (`flow.f{i}.cc`) or index.
pub fn set_param(doc: &mut Value, key: &str, value: &str) -> Result<(), ScenarioError> {
    let fail = |msg: String| ScenarioError::Param {
        key: key.to_string(),
        msg,
    };
    let segments: Vec<&str> = key.split('.').collect();
    if segments.iter().any(|s| s.trim().is_empty()) {
        return Err(fail("empty key segment".into()));
    }
    let new_value = parse_param_value(value);
    let mut cur = doc;
    for (n, seg) in segments.iter().enumerate() {
        let last = n + 1 == segments.len();
        let here = segments[..=n].join(".");
        cur = match cur {
            Value::Table(t) => {
                if last {
                    t.insert((*seg).to_string(), new_value);
                    return Ok(());
                }
                t.entry((*seg).to_string())
                    .or_insert_with(|| Value::Table(toml::Table::new()))
            }
            Value::Array(items) => {
                let idx = match seg.parse::<usize>() {
                    Ok(i) if i < items.len() => Some(i),
                    Ok(i) => {
                        return Err(fail(format!(
                            "{here}: index {i} out of range (array has {} elements)",
                            items.len()
                        )))
                    }
                    Err(_) => items.iter().position(|it| named(it, seg)),
                };
                let Some(idx) = idx else {
                    return Err(fail(format!("{here}: no element with name or id {seg:?}")));
                };
                if last {
                    items[idx] = new_value;
                    return Ok(());
                }
                &mut items[idx]
            }
            _ => {
                return Err(fail(format!(
                    "{}: is not a table or an array",
                    segments[..n].join(".")
                )))
            }
        };
    }
    Ok(())
}

fn named(item: &Value, name: &str) -> bool {
    let Value::Table(t) = item else { return false };
    ["name", "id"]
        .iter()
        .any(|k| matches!(t.get(*k), Some(Value::String(s)) if s == name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> Value {
        r#"
            [run]
            seed = 1
            [[link]]
            name = "bottleneck"
            rate = "10Mbps"
            [[flow]]
            id = "f0"
            cc = "newreno"
        "#
        .parse::<toml::Table>()
        .map(Value::Table)
        .unwrap()
    }

    #[test]
    fn set_param_walks_tables_arrays_and_names() {
        let mut d = doc();
        set_param(&mut d, "run.seed", "7").unwrap();
        set_param(&mut d, "link.bottleneck.forward.loss", "0.01").unwrap();
        set_param(&mut d, "flow.0.cc", "westwood").unwrap();
        set_param(&mut d, "flow.f0.size", "5MiB").unwrap();
        assert_eq!(d["run"]["seed"].as_integer(), Some(7));
        assert_eq!(d["link"][0]["forward"]["loss"].as_float(), Some(0.01));
        assert_eq!(d["flow"][0]["cc"].as_str(), Some("westwood"));
        assert_eq!(d["flow"][0]["size"].as_str(), Some("5MiB"));
    }

    #[test]
    fn set_param_reports_bad_paths() {
        let mut d = doc();
        assert!(set_param(&mut d, "flow.9.cc", "x").is_err());
        assert!(set_param(&mut d, "link.nope.rate", "1").is_err());
        assert!(set_param(&mut d, "run.seed.x", "1").is_err());
        assert!(set_param(&mut d, "run..seed", "1").is_err());
    }

    #[test]
    fn param_values_are_scalars_when_they_parse() {
        assert_eq!(parse_param_value("3"), Value::Integer(3));
        assert_eq!(parse_param_value("true"), Value::Boolean(true));
        assert_eq!(parse_param_value("10Mbps"), Value::String("10Mbps".into()));
        assert_eq!(
            parse_param_value("1\nx = 2"),
            Value::String("1\nx = 2".into())
        );
    }

    #[test]
    fn count_expands_and_substitutes() {
        let items = vec![r#"id = "f{i}"
            count = 3
            to = "d{i}""#
            .parse::<toml::Table>()
            .map(Value::Table)
            .unwrap()];
        let out = expand("flow", items).unwrap();
        assert_eq!(out.len(), 3);
        assert_eq!(out[2].value["id"].as_str(), Some("f2"));
        assert_eq!(out[2].value["to"].as_str(), Some("d2"));
        assert_eq!(out[2].index, 2);
    }
}
