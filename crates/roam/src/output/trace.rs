//! `roam sim --trace`: the packet trace as CSV (`time_s,link,event,flow,bytes,summary`), one
//! row per thing that happened to a datagram at a link direction, optionally for some flows only.

use std::io::Write;

use roam_sim::trace::{PacketObserver, PacketRecord};

/// Header of the trace file.
pub const TRACE_HEADER: [&str; 6] = ["time_s", "link", "event", "flow", "bytes", "summary"];

/// Writes trace records as CSV. Write errors are kept (the simulator cannot be interrupted) and
/// reported by [`CsvTrace::finish`].
pub struct CsvTrace<W: Write> {
    out: csv::Writer<W>,
    /// Keep only these flows' records (all when empty).
    flows: Vec<String>,
    rows: u64,
    error: Option<csv::Error>,
}

impl<W: Write> CsvTrace<W> {
    /// A trace writing to `w`, keeping only the records of `flows` (every record if empty).
    pub fn new(w: W, flows: Vec<String>) -> CsvTrace<W> {
        let mut out = csv::Writer::from_writer(w);
        let error = out.write_record(TRACE_HEADER).err();
        CsvTrace {
            out,
            flows,
            rows: 0,
            error,
        }
    }

    /// Flushes; returns the number of rows written, or the first write error.
    pub fn finish(mut self) -> std::io::Result<u64> {
        if let Some(e) = self.error.take() {
            return Err(std::io::Error::other(e));
        }
        self.out.flush()?;
        Ok(self.rows)
    }
}

impl<W: Write> PacketObserver for CsvTrace<W> {
    fn observe(&mut self, r: &PacketRecord<'_>) {
        if self.error.is_some() {
            return;
        }
        let flow = r.flow.unwrap_or("");
        if !self.wants(r.flow) {
            return;
        }
        let time = format!("{:.9}", r.time.as_secs_f64());
        let bytes = r.bytes.to_string();
        match self.out.write_record([
            time.as_str(),
            r.link,
            r.fate.name(),
            flow,
            &bytes,
            r.summary,
        ]) {
            Ok(()) => self.rows += 1,
            Err(e) => self.error = Some(e),
        }
    }

    fn wants(&self, flow: Option<&str>) -> bool {
        self.flows.is_empty() || flow.is_some_and(|id| self.flows.iter().any(|f| f == id))
    }
}

/// Two observers fed the same records (`roam sim --trace` with `--pcap`): each gets what either
/// wants and filters for itself.
pub struct Both<'a, A: PacketObserver, B: PacketObserver>(pub &'a mut A, pub &'a mut B);

impl<A: PacketObserver, B: PacketObserver> PacketObserver for Both<'_, A, B> {
    fn observe(&mut self, r: &PacketRecord<'_>) {
        self.0.observe(r);
        self.1.observe(r);
    }

    fn wants(&self, flow: Option<&str>) -> bool {
        self.0.wants(flow) || self.1.wants(flow)
    }

    fn wants_payload(&self) -> bool {
        self.0.wants_payload() || self.1.wants_payload()
    }
}

#[cfg(test)]
mod tests {
    use roam_proto::Time;
    use roam_sim::trace::PacketFate;

    use super::*;

    fn record<'a>(flow: Option<&'a str>, summary: &'a str) -> PacketRecord<'a> {
        PacketRecord {
            time: Time::from_millis(1500),
            link: "l:fwd",
            fate: PacketFate::Sent,
            flow,
            bytes: 1041,
            summary,
            src: roam_sim::agent::SockAddr {
                addr: roam_sim::agent::Addr(1),
                port: 1,
            },
            dst: roam_sim::agent::SockAddr {
                addr: roam_sim::agent::Addr(1),
                port: 1,
            },
            payload: None,
        }
    }

    #[test]
    fn rows_follow_the_header_and_the_flow_filter() {
        let mut buf = Vec::new();
        let mut t = CsvTrace::new(&mut buf, vec!["f".to_owned()]);
        t.observe(&record(Some("f"), "seg [A] seq=1 ack=1 len=1000 win=65535"));
        t.observe(&record(Some("g"), "seg [A] seq=1 ack=1 len=1000 win=65535"));
        t.observe(&record(None, "raw len=12"));
        assert_eq!(t.finish().unwrap(), 1);
        assert_eq!(
            String::from_utf8(buf).unwrap(),
            "time_s,link,event,flow,bytes,summary\n\
             1.500000000,l:fwd,sent,f,1041,seg [A] seq=1 ack=1 len=1000 win=65535\n"
        );
    }

    #[test]
    fn summaries_with_commas_are_quoted() {
        let mut buf = Vec::new();
        let mut t = CsvTrace::new(&mut buf, Vec::new());
        t.observe(&record(None, "seg [A] sack=1-2,3-4"));
        t.finish().unwrap();
        assert!(String::from_utf8(buf)
            .unwrap()
            .contains("\"seg [A] sack=1-2,3-4\""));
    }
}
