//! CSV writers: per-run time series, flows and links, and generic tables for sweeps.
//!
//! Missing values (`None`) are written as empty cells. Numbers use Rust's shortest
//! round-trip formatting, so files are identical for identical results.

use std::io::Write;
use std::path::Path;

use roam_sim::result::{FlowResult, FlowSeries, LinkResult};

use crate::error::{CliError, Result};

/// Header of `series.csv` (long format: one row per flow and bin).
pub const SERIES_HEADER: [&str; 5] = ["flow", "time_s", "throughput_bps", "cwnd_bytes", "seq"];

fn csv_err(e: csv::Error) -> std::io::Error {
    match e.into_kind() {
        csv::ErrorKind::Io(io) => io,
        other => std::io::Error::other(format!("{other:?}")),
    }
}

fn opt<T: ToString>(v: Option<&Option<T>>) -> String {
    match v {
        Some(Some(x)) => x.to_string(),
        _ => String::new(),
    }
}

/// Writes the time series of all flows in long format: `flow,time_s,throughput_bps,cwnd_bytes,seq`.
pub fn write_series<W: Write>(w: W, series: &[FlowSeries]) -> std::io::Result<()> {
    let mut out = csv::Writer::from_writer(w);
    out.write_record(SERIES_HEADER).map_err(csv_err)?;
    for s in series {
        for (i, t) in s.time_s.iter().enumerate() {
            let thr = s
                .throughput_bps
                .get(i)
                .map(f64::to_string)
                .unwrap_or_default();
            out.write_record([
                s.id.clone(),
                t.to_string(),
                thr,
                opt(s.cwnd_bytes.get(i)),
                opt(s.seq.get(i)),
            ])
            .map_err(csv_err)?;
        }
    }
    out.flush()
}

/// Writes one row per flow: the run's scenario and seed, then every field of [`FlowResult`]
/// (header = `scenario`, `seed` and the field names), so that files of several runs concatenate
/// into one long table.
pub fn write_flows<W: Write>(
    w: W,
    scenario: &str,
    seed: u64,
    flows: &[FlowResult],
) -> std::io::Result<()> {
    let keys = [scenario.to_owned(), seed.to_string()];
    let rows: Vec<(&[String], &FlowResult)> = flows.iter().map(|f| (&keys[..], f)).collect();
    write_keyed(w, &["scenario", "seed"], &rows)
}

/// Writes one row per `(keys, value)`: the key cells under `key_names`, then every field of the
/// value (header = field names, as serde names them). Without rows only the key names are
/// written (there is no value to name the fields).
pub fn write_keyed<W: Write, K: AsRef<str>, T: serde::Serialize>(
    w: W,
    key_names: &[&str],
    rows: &[(&[K], &T)],
) -> std::io::Result<()> {
    // Serialise the values alone, then read the cells back to put the keys in front of them.
    let mut values = csv::Writer::from_writer(Vec::new());
    for (_, v) in rows {
        values.serialize(v).map_err(csv_err)?;
    }
    let bytes = values
        .into_inner()
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    let mut reader = csv::Reader::from_reader(&bytes[..]);
    let fields = if rows.is_empty() {
        csv::StringRecord::new()
    } else {
        reader.headers().map_err(csv_err)?.clone()
    };
    let mut out = csv::Writer::from_writer(w);
    out.write_record(key_names.iter().copied().chain(fields.iter()))
        .map_err(csv_err)?;
    for ((keys, _), record) in rows.iter().zip(reader.records()) {
        let record = record.map_err(csv_err)?;
        out.write_record(keys.iter().map(AsRef::as_ref).chain(record.iter()))
            .map_err(csv_err)?;
    }
    out.flush()
}

/// Writes one row per link direction with every field of [`LinkResult`].
pub fn write_links<W: Write>(w: W, links: &[LinkResult]) -> std::io::Result<()> {
    write_serialized(w, links)
}

fn write_serialized<W: Write, T: serde::Serialize>(w: W, rows: &[T]) -> std::io::Result<()> {
    let mut out = csv::Writer::from_writer(w);
    for r in rows {
        out.serialize(r).map_err(csv_err)?;
    }
    out.flush()
}

/// Writes a table given as a header and rows of cells (already formatted).
pub fn write_table<W: Write>(w: W, header: &[String], rows: &[Vec<String>]) -> std::io::Result<()> {
    let mut out = csv::Writer::from_writer(w);
    out.write_record(header).map_err(csv_err)?;
    for r in rows {
        out.write_record(r).map_err(csv_err)?;
    }
    out.flush()
}

/// Creates `path` and lets `f` write CSV into it, mapping I/O errors to the path.
pub fn to_file(
    path: &Path,
    f: impl FnOnce(std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> Result<()> {
    let file = std::fs::File::create(path).map_err(|e| CliError::write(path, e))?;
    f(std::io::BufWriter::new(file)).map_err(|e| CliError::write(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(id: &str, completion: Option<f64>) -> FlowResult {
        FlowResult {
            id: id.to_owned(),
            protocol: "tcp".to_owned(),
            cc: "newreno".to_owned(),
            cross: false,
            start_s: 0.0,
            goodput_bps: 1.5e6,
            bytes_delivered: 1000,
            completion_s: completion,
            failure: None,
            failed_s: None,
            retransmitted_segments: 2,
            timeouts: 0,
            recoveries: 0,
            wireless_excused: 0,
            integrity_errors: 0,
            datagrams_sent: 10,
            transport_bytes_sent: 1100,
            overhead_pct: 10.0,
            energy_j: None,
            sleep_s: None,
            media: None,
            multipath: None,
        }
    }

    fn text(f: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>) -> String {
        let mut buf = Vec::new();
        f(&mut buf).unwrap();
        String::from_utf8(buf).unwrap()
    }

    #[test]
    fn series_is_long_format_with_empty_cells_for_none() {
        let s = FlowSeries {
            id: "a".to_owned(),
            time_s: vec![0.1, 0.2],
            throughput_bps: vec![8000.0, 0.0],
            cwnd_bytes: vec![Some(1000), None],
            seq: vec![None, Some(5000)],
        };
        let t = text(|b| write_series(b, &[s]));
        assert_eq!(
            t,
            "flow,time_s,throughput_bps,cwnd_bytes,seq\n\
             a,0.1,8000,1000,\n\
             a,0.2,0,,5000\n"
        );
    }

    #[test]
    fn series_tolerates_short_columns() {
        let s = FlowSeries {
            id: "udp".to_owned(),
            time_s: vec![1.0],
            throughput_bps: vec![],
            cwnd_bytes: vec![],
            seq: vec![],
        };
        let t = text(|b| write_series(b, &[s]));
        assert!(t.ends_with("udp,1,,,\n"), "{t}");
    }

    #[test]
    fn flows_have_field_names_as_header_and_blank_completion() {
        let t = text(|b| write_flows(b, "s", 7, &[flow("a", Some(2.5)), flow("b", None)]));
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].starts_with(
            "scenario,seed,id,protocol,cc,cross,start_s,goodput_bps,bytes_delivered,completion_s,"
        ));
        assert!(lines[1].starts_with("s,7,a,tcp,newreno,false,0.0,1500000.0,1000,2.5,"));
        assert!(lines[2].starts_with("s,7,b,tcp,newreno,false,0.0,1500000.0,1000,,"));
        let cells = |l: &str| l.split(',').count();
        assert!(lines.iter().all(|l| cells(l) == cells(lines[0])));
    }

    #[test]
    fn keyed_rows_without_values_still_name_the_keys() {
        let rows: Vec<(&[String], &FlowResult)> = Vec::new();
        assert_eq!(
            text(|b| write_keyed(b, &["loss", "seed"], &rows)),
            "loss,seed\n"
        );
    }

    #[test]
    fn links_csv() {
        let l = LinkResult {
            id: "bottleneck:fwd".to_owned(),
            packets_sent: 3,
            bytes_sent: 3000,
            queue_drops: 1,
            impairment_drops: 0,
            utilization: 0.5,
        };
        let t = text(|b| write_links(b, &[l]));
        assert_eq!(
            t,
            "id,packets_sent,bytes_sent,queue_drops,impairment_drops,utilization\n\
             bottleneck:fwd,3,3000,1,0,0.5\n"
        );
    }

    #[test]
    fn generic_table_quotes_when_needed() {
        let header = vec!["k".to_owned(), "v".to_owned()];
        let rows = vec![vec!["a,b".to_owned(), String::new()]];
        assert_eq!(text(|b| write_table(b, &header, &rows)), "k,v\n\"a,b\",\n");
    }

    #[test]
    fn to_file_reports_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let bad = dir.path().join("missing-dir").join("x.csv");
        let err = to_file(&bad, |_| Ok(())).unwrap_err().to_string();
        assert!(err.contains("x.csv"), "{err}");
        let good = dir.path().join("x.csv");
        to_file(&good, |w| write_table(w, &["h".to_owned()], &[])).unwrap();
        assert_eq!(std::fs::read_to_string(good).unwrap(), "h\n");
    }
}
