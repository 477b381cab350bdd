//! Plots of a sweep: a metric against the first `--param` whose values are numbers (or, when
//! none is, against the first `--param`'s values as named categories), one line per combination
//! of the other parameters' values, each point the mean over seeds with its 95 % confidence
//! bar.

use std::path::{Path, PathBuf};

use roam_lab::chart::{self, Axes, Series};
use roam_lab::stats::Estimate;

use crate::cli::Param;
use crate::cmd::sweep::{Point, PointSummary};
use crate::error::{CliError, Result};

/// What the user named (`--title`, `--xlabel`, `--label KEY=TEXT`), over readable defaults.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PlotLabels {
    /// Chart title [default: the scenario's name].
    pub title: Option<String>,
    /// X-axis label [default: the swept parameter's name, with the values' unit].
    pub xlabel: Option<String>,
    /// Names of swept parameters (by key) and of their values, in `--label` order.
    pub names: Vec<(String, String)>,
}

impl PlotLabels {
    /// The name of parameter `key`: the user's, else [`readable_key`].
    pub fn key(&self, key: &str) -> String {
        self.named(key).unwrap_or_else(|| readable_key(key))
    }

    /// The name of value `value`: the user's, else the value as given.
    pub fn value(&self, value: &str) -> String {
        self.named(value).unwrap_or_else(|| value.to_owned())
    }

    fn named(&self, what: &str) -> Option<String> {
        self.names
            .iter()
            .rev()
            .find(|(k, _)| k == what)
            .map(|(_, t)| t.clone())
    }
}

/// A dotted scenario key as words: the section (`link`, `flow`, `node`, `run`) left out when an
/// entry name follows it, dots as spaces: `link.wlan.forward.gilbert.bad.loss` → `wlan forward
/// gilbert bad loss`, `flow.tcp-ww.cc` → `tcp-ww cc`, `run.duration` → `duration`; an entry
/// addressed by index keeps its section (`flow.0.size` → `flow 0 size`).
pub fn readable_key(key: &str) -> String {
    let parts: Vec<&str> = key.split('.').collect();
    let sections = ["link", "flow", "node", "event"];
    let words: &[&str] = match parts.as_slice() {
        ["run", rest @ ..] if !rest.is_empty() => rest,
        [section, name, rest @ ..]
            if sections.contains(section) && !rest.is_empty() && name.parse::<u64>().is_err() =>
        {
            &parts[1..]
        }
        _ => &parts,
    };
    words.join(" ")
}

/// The swept parameter used as the x axis.
#[derive(Debug, Clone, PartialEq)]
pub struct XAxis {
    /// Position of the parameter in `--param` order (and in every [`Point`]).
    pub index: usize,
    /// Axis label: the key, with the values' unit in parentheses.
    pub label: String,
    /// Logarithmic: all values positive and spanning at least two decades.
    pub log: bool,
    /// The values as named categories, in `--param` order (points at x = 0, 1, …), when they
    /// are not numbers in one unit.
    pub categories: Option<Vec<String>>,
}

impl XAxis {
    /// Where a value of the parameter sits on this axis.
    fn position(&self, value: &str) -> Option<f64> {
        match &self.categories {
            Some(c) => c.iter().position(|v| v == value).map(|k| k as f64),
            None => numeric_value(value).map(|(v, _)| v),
        }
    }
}

/// Reads a parameter value as a number and its unit: `"10ms"` → `(10, "ms")`, `"0.01"` →
/// `(0.01, "")`, `"2.5 Mbps"` → `(2.5, "Mbps")`; `None` when it does not start with a finite
/// number (`"newreno"`).
pub fn numeric_value(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    (1..=s.len())
        .rev()
        .filter(|&i| s.is_char_boundary(i))
        .find_map(|i| {
            let v: f64 = s[..i].parse().ok()?;
            v.is_finite().then(|| (v, s[i..].trim()))
        })
}

/// The first parameter whose values are all numbers in one unit; failing that, the first
/// parameter, its values as categories; `None` without parameters. The label is
/// `labels.xlabel`, else the parameter's name with the values' unit.
pub fn x_axis(params: &[Param], labels: &PlotLabels) -> Option<XAxis> {
    let mut x = numeric_x_axis(params, labels).or_else(|| {
        params.first().map(|p| XAxis {
            index: 0,
            label: labels.key(&p.key),
            log: false,
            categories: Some(p.values.clone()),
        })
    })?;
    if let Some(l) = &labels.xlabel {
        x.label.clone_from(l);
    }
    Some(x)
}

fn numeric_x_axis(params: &[Param], labels: &PlotLabels) -> Option<XAxis> {
    params.iter().enumerate().find_map(|(index, p)| {
        let parsed: Vec<(f64, &str)> = p
            .values
            .iter()
            .map(|v| numeric_value(v))
            .collect::<Option<_>>()?;
        let unit = parsed.first()?.1;
        if parsed.iter().any(|(_, u)| *u != unit) {
            return None;
        }
        let (min, max) = parsed
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), (v, _)| {
                (lo.min(*v), hi.max(*v))
            });
        Some(XAxis {
            index,
            label: if unit.is_empty() {
                labels.key(&p.key)
            } else {
                format!("{} ({unit})", labels.key(&p.key))
            },
            log: min > 0.0 && max / min >= 100.0,
            categories: None,
        })
    })
}

/// One line per combination of the other parameters' values (in grid order), each with
/// `metric` of every grid point on it at the x of its swept value.
fn lines(
    x: &XAxis,
    labels: &PlotLabels,
    points: &[Point],
    summaries: &[PointSummary],
    metric: impl Fn(&PointSummary) -> Estimate,
) -> Vec<Series> {
    let mut out: Vec<(Point, Series)> = Vec::new();
    for (point, summary) in points.iter().zip(summaries) {
        let Some(xv) = point.get(x.index).and_then(|(_, v)| x.position(v)) else {
            continue;
        };
        let others: Point = point
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != x.index)
            .map(|(_, kv)| kv.clone())
            .collect();
        let line = match out.iter_mut().position(|(o, _)| *o == others) {
            Some(i) => &mut out[i].1,
            None => {
                let label = if others.is_empty() {
                    "mean over seeds".to_owned()
                } else {
                    others
                        .iter()
                        .map(|(k, v)| format!("{} = {}", labels.key(k), labels.value(v)))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                out.push((others, Series::new(label, Vec::new())));
                &mut out.last_mut().expect("just pushed").1
            }
        };
        line.push_estimate(xv, &metric(summary));
    }
    for (_, s) in &mut out {
        sort_by_x(s);
    }
    out.into_iter().map(|(_, s)| s).collect()
}

/// Orders a line's points (and their bars) by x, so that values given out of order on the
/// command line still draw a line, not a zigzag.
fn sort_by_x(s: &mut Series) {
    let mut pairs: Vec<((f64, f64), f64)> = s
        .points
        .iter()
        .copied()
        .zip(s.errors.iter().copied())
        .collect();
    pairs.sort_by(|a, b| a.0 .0.total_cmp(&b.0 .0));
    (s.points, s.errors) = pairs.into_iter().unzip();
}

/// Writes `goodput.svg` (aggregate goodput) and, when some flow completed, `completion.svg` into
/// `dir`; returns the files written (none without parameters).
pub fn write(
    dir: &Path,
    scenario: &str,
    labels: &PlotLabels,
    params: &[Param],
    points: &[Point],
    summaries: &[PointSummary],
) -> Result<Vec<PathBuf>> {
    let Some(x) = x_axis(params, labels) else {
        return Ok(Vec::new());
    };
    let title = labels.title.as_deref().unwrap_or(scenario);
    let categories: Option<Vec<String>> = x
        .categories
        .as_ref()
        .map(|c| c.iter().map(|v| labels.value(v)).collect());
    let mut written = Vec::new();
    let mut plot = |file: &str, y: &str, series: Vec<Series>| -> Result<()> {
        let path = dir.join(file);
        let axes = Axes {
            title,
            x: &x.label,
            y,
            log_x: x.log,
            y_from_zero: true,
        };
        match &categories {
            Some(c) => chart::categories(&path, &axes, c, &series),
            None => chart::lines(&path, &axes, &series),
        }
        .map_err(|e| CliError::Plot {
            path: path.clone(),
            message: e.to_string(),
        })?;
        written.push(path);
        Ok(())
    };
    plot(
        "goodput.svg",
        "aggregate goodput (Mb/s), mean ± 95 % CI",
        lines(&x, labels, points, summaries, |s| s.aggregate_goodput_mbps),
    )?;
    if summaries.iter().any(|s| s.completion_s.mean.is_some()) {
        plot(
            "completion.svg",
            "completion time (s), mean ± 95 % CI",
            lines(&x, labels, points, summaries, |s| s.completion_s),
        )?;
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn param(key: &str, values: &[&str]) -> Param {
        Param {
            key: key.to_owned(),
            values: values.iter().map(|v| (*v).to_owned()).collect(),
        }
    }

    fn estimate(values: &[f64]) -> Estimate {
        Estimate::from_sample(values)
    }

    fn summary(goodput: &[f64]) -> PointSummary {
        PointSummary {
            runs: goodput.len(),
            aggregate_goodput_mbps: estimate(goodput),
            jain_index: estimate(&[1.0]),
            completion_s: estimate(&[]),
            overhead_pct: estimate(&[]),
        }
    }

    #[test]
    fn values_are_read_as_number_and_unit() {
        assert_eq!(numeric_value("10ms"), Some((10.0, "ms")));
        assert_eq!(numeric_value("0.01"), Some((0.01, "")));
        assert_eq!(numeric_value("1e-3"), Some((0.001, "")));
        assert_eq!(numeric_value("2.5 Mbps"), Some((2.5, "Mbps")));
        assert_eq!(numeric_value("newreno"), None);
        assert_eq!(numeric_value("inf"), None);
        assert_eq!(numeric_value(""), None);
        assert_eq!(numeric_value("é1"), None);
    }

    #[test]
    fn the_first_numeric_parameter_in_one_unit_is_the_x_axis() {
        let none = PlotLabels::default();
        let params = [
            param("flow.f.cc", &["newreno", "westwood"]),
            param("link.l.delay", &["10ms", "1s"]),
            param("link.l.forward.loss", &["0.0001", "0.001", "0.01"]),
        ];
        let x = x_axis(&params, &none).unwrap();
        assert_eq!((x.index, x.log), (2, true));
        assert_eq!(x.label, "l forward loss");
        let x = x_axis(&[param("link.l.delay", &["10ms", "50ms"])], &none).unwrap();
        assert_eq!((x.label.as_str(), x.log), ("l delay (ms)", false));
        let x = x_axis(&[param("flow.f.cc", &["newreno", "stp"])], &none).unwrap();
        assert_eq!(x.categories, Some(vec!["newreno".into(), "stp".into()]));
        assert_eq!((x.position("stp"), x.position("vegas")), (Some(1.0), None));
        assert_eq!(x_axis(&[], &none), None);
    }

    #[test]
    fn keys_read_as_words_and_the_users_names_win() {
        assert_eq!(
            readable_key("link.wlan.forward.gilbert.bad.loss"),
            "wlan forward gilbert bad loss"
        );
        assert_eq!(readable_key("flow.tcp-ww.cc"), "tcp-ww cc");
        assert_eq!(readable_key("run.duration"), "duration");
        assert_eq!(readable_key("flow.0.size"), "flow 0 size");
        assert_eq!(readable_key("loss"), "loss");
        let labels = PlotLabels {
            title: None,
            xlabel: None,
            names: vec![
                ("link.wlan.forward.loss".into(), "PER".into()),
                ("newreno".into(), "NewReno".into()),
            ],
        };
        let x = x_axis(&[param("link.wlan.forward.loss", &["0", "0.1"])], &labels).unwrap();
        assert_eq!(x.label, "PER");
        assert_eq!(labels.value("newreno"), "NewReno");
        assert_eq!(labels.value("westwood"), "westwood");
        let xl = PlotLabels {
            xlabel: Some("packet error rate (%)".into()),
            ..labels
        };
        let x = x_axis(&[param("link.wlan.forward.loss", &["0", "0.1"])], &xl).unwrap();
        assert_eq!(x.label, "packet error rate (%)");
    }

    #[test]
    fn one_line_per_combination_of_the_other_parameters_sorted_by_x() {
        let params = [
            param("flow.f.cc", &["newreno", "westwood"]),
            param("loss", &["0.01", "0"]),
        ];
        let points: Vec<Point> = ["newreno", "westwood"]
            .iter()
            .flat_map(|cc| {
                ["0.01", "0"].iter().map(move |l| {
                    vec![
                        ("flow.f.cc".into(), (*cc).into()),
                        ("loss".into(), (*l).into()),
                    ]
                })
            })
            .collect();
        let summaries: Vec<PointSummary> = [[1.0, 2.0], [9.0, 9.0], [3.0, 3.0], [8.0, 8.0]]
            .iter()
            .map(|g| summary(g))
            .collect();
        let labels = PlotLabels {
            names: vec![("westwood".into(), "Westwood+".into())],
            ..PlotLabels::default()
        };
        let x = x_axis(&params, &labels).unwrap();
        let ls = lines(&x, &labels, &points, &summaries, |s| {
            s.aggregate_goodput_mbps
        });
        assert_eq!(ls.len(), 2);
        assert_eq!(ls[0].label, "f cc = newreno");
        assert_eq!(ls[0].points, vec![(0.0, 9.0), (0.01, 1.5)]);
        assert!(ls[0].errors[0] == 0.0 && ls[0].errors[1] > 0.0);
        assert_eq!(ls[1].label, "f cc = Westwood+");
        assert_eq!(ls[1].points, vec![(0.0, 8.0), (0.01, 3.0)]);
    }

    #[test]
    fn writes_goodput_plot_against_numbers_or_categories() {
        let dir = tempfile::tempdir().unwrap();
        let none = PlotLabels::default();
        let points: Vec<Point> = vec![vec![("loss".into(), "0.01".into())]];
        let summaries = vec![summary(&[1.0, 2.0])];
        let files = write(
            dir.path(),
            "t",
            &none,
            &[param("loss", &["0.01"])],
            &points,
            &summaries,
        )
        .unwrap();
        assert_eq!(files, vec![dir.path().join("goodput.svg")]);
        let svg = std::fs::read_to_string(&files[0]).unwrap();
        assert!(svg.contains("aggregate goodput (Mb/s)") && svg.contains("mean over seeds"));
        let titled = PlotLabels {
            title: Some("My sweep".into()),
            names: vec![("newreno".into(), "NewReno".into())],
            ..PlotLabels::default()
        };
        let named = write(
            dir.path(),
            "t",
            &titled,
            &[param("cc", &["newreno"])],
            &[vec![("cc".into(), "newreno".into())]],
            &summaries,
        )
        .unwrap();
        assert_eq!(named, vec![dir.path().join("goodput.svg")]);
        let svg = std::fs::read_to_string(&named[0]).unwrap();
        assert!(svg.contains("NewReno"), "the category's name is the tick");
        assert!(svg.contains("My sweep"), "the title");
        assert!(write(dir.path(), "t", &none, &[], &[vec![]], &summaries)
            .unwrap()
            .is_empty());
    }
}
