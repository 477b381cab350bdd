//! The real-time forwarding loop: packets read from one TUN end of a path go through that
//! direction's [`DirModel`] (the simulator's link code) and are written to the other end when
//! the model delivers them.
//!
//! Each direction of each path has its own thread (directions share nothing, and on a
//! machine with few cores the kernel's stacks at both ends need the rest). Each turn a thread
//! advances its model to the present, writes what it delivers, then waits (`ppoll`,
//! nanosecond timeout, 1 µs timer slack) until its TUN end is readable or the model's next
//! deadline comes, and reads up to [`READ_BATCH`] packets in a batch. The threads run in the
//! real-time FIFO class at a low priority where allowed ([`sys::realtime_priority`]).

use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use roam_proto::Time;
use roam_sim::link::emulation::{DirModel, DirStats, Fate};

use crate::config::PathModel;
use crate::sys;

/// Packets read from a TUN end before the model's deliveries are looked at again.
pub const READ_BATCH: usize = 64;
/// Largest packet read (TUN devices are made with the default 1500-byte MTU; anything up to
/// 64 KiB is carried).
const MAX_PACKET: usize = 65_536;
/// Datagrams one direction holds at once (queued or in flight); beyond it new ones are
/// dropped and counted, so a misconfigured link cannot take the machine's memory.
pub const MAX_HELD: usize = 1 << 19;
/// The longest wait without looking at the stop flag.
const MAX_WAIT: Duration = Duration::from_millis(50);
/// Lateness histogram: buckets of 10 µs up to 100 ms (the last bucket holds the rest).
const LATE_BUCKET_NS: u64 = 10_000;
const LATE_BUCKETS: usize = 10_000;

/// The monotonic clock: the emulator is a host (like the simulator and the UDP runtime), and
/// reads real time here and in nothing below it.
#[allow(clippy::disallowed_methods)]
pub fn monotonic() -> Instant {
    Instant::now()
}

/// Counters of one direction of one path.
#[derive(Debug, Clone, Default)]
pub struct DirReport {
    /// The model's counters (sent, queue and impairment drops).
    pub model: DirStats,
    /// Datagrams read from the sending end.
    pub read: u64,
    /// Datagrams written to the receiving end.
    pub written: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Writes the receiving end refused.
    pub write_errors: u64,
    /// Datagrams dropped because [`MAX_HELD`] were held.
    pub overflow: u64,
    /// Bytes written in each second since the start.
    pub per_second: Vec<u64>,
    /// How late deliveries were written after the model's arrival time: counts per 10 µs.
    pub lateness: Vec<u64>,
}

impl DirReport {
    /// The `q`-quantile (0..=1) of the deliveries' lateness, to 10 µs (`None` without any).
    pub fn lateness_quantile(&self, q: f64) -> Option<Duration> {
        let total: u64 = self.lateness.iter().sum();
        if total == 0 {
            return None;
        }
        let rank = ((total - 1) as f64 * q.clamp(0.0, 1.0)).round() as u64;
        let mut seen = 0;
        for (i, n) in self.lateness.iter().enumerate() {
            seen += n;
            if seen > rank {
                return Some(Duration::from_nanos((i as u64 + 1) * LATE_BUCKET_NS));
            }
        }
        None
    }
}

/// What a run of the wire did, per path: `[up, down]`.
#[derive(Debug, Clone, Default)]
pub struct WireReport {
    /// Per path, inner → outer then outer → inner.
    pub paths: Vec<[DirReport; 2]>,
    /// Wall time the wire ran.
    pub elapsed: Duration,
}

/// The datagrams held by a model, by id.
#[derive(Default)]
struct Held {
    bufs: Vec<Vec<u8>>,
    free: Vec<u32>,
    count: usize,
}

impl Held {
    fn put(&mut self, bytes: &[u8]) -> Option<u32> {
        if self.count >= MAX_HELD {
            return None;
        }
        let id = match self.free.pop() {
            Some(id) => id,
            None => {
                let id = u32::try_from(self.bufs.len()).ok()?;
                self.bufs.push(Vec::new());
                id
            }
        };
        self.count += 1;
        let b = &mut self.bufs[id as usize];
        b.clear();
        b.extend_from_slice(bytes);
        Some(id)
    }

    fn get(&self, id: u32) -> &[u8] {
        &self.bufs[id as usize]
    }

    fn release(&mut self, id: u32) {
        self.count -= 1;
        self.free.push(id);
    }
}

/// One direction: reads `from`, writes `to`.
struct Dir {
    model: DirModel,
    from: File,
    to: File,
    held: Held,
    report: DirReport,
}

/// The TUN ends and the models between them.
pub struct Wire {
    /// `dirs[2k]`: path k inner → outer; `dirs[2k+1]` the reverse.
    dirs: Vec<Dir>,
}

impl Wire {
    /// A wire over `paths`, whose TUN ends are `ends[2k]` (inner) and `ends[2k+1]` (outer).
    pub fn new(paths: Vec<PathModel>, ends: Vec<File>) -> std::io::Result<Wire> {
        let mut dirs = Vec::new();
        let mut ends = ends.into_iter();
        for p in paths {
            let (Some(inner), Some(outer)) = (ends.next(), ends.next()) else {
                return Err(std::io::Error::other("two TUN ends per path"));
            };
            let new = |model, from: &File, to: &File| -> std::io::Result<Dir> {
                Ok(Dir {
                    model,
                    from: from.try_clone()?,
                    to: to.try_clone()?,
                    held: Held::default(),
                    report: DirReport::default(),
                })
            };
            dirs.push(new(p.up, &inner, &outer)?);
            dirs.push(new(p.down, &outer, &inner)?);
        }
        Ok(Wire { dirs })
    }

    /// Forwards until `stop` is set or `limit` has passed since the wire started; the link
    /// models' time zero is this call. Returns the counters.
    pub fn run(self, stop: &AtomicBool, limit: Option<Duration>) -> std::io::Result<WireReport> {
        let start = monotonic();
        let results: Vec<std::io::Result<DirReport>> = std::thread::scope(|s| {
            let handles: Vec<_> = self
                .dirs
                .into_iter()
                .map(|d| s.spawn(move || d.run(start, stop, limit)))
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(std::io::Error::other("a wire thread panicked")))
                })
                .collect()
        });
        let mut reports = Vec::new();
        for r in results {
            reports.push(r?);
        }
        let mut paths = Vec::new();
        let mut it = reports.into_iter();
        while let (Some(up), Some(down)) = (it.next(), it.next()) {
            paths.push([up, down]);
        }
        Ok(WireReport {
            paths,
            elapsed: start.elapsed(),
        })
    }
}

impl Dir {
    fn run(
        mut self,
        start: Instant,
        stop: &AtomicBool,
        limit: Option<Duration>,
    ) -> std::io::Result<DirReport> {
        sys::tight_timer_slack();
        sys::realtime_priority();
        let now =
            || Time::from_nanos(u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX));
        let fd = [self.from.as_raw_fd()];
        let mut ready = [false];
        let mut buf = vec![0u8; MAX_PACKET];
        self.report.lateness = vec![0; LATE_BUCKETS];
        loop {
            if stop.load(Ordering::Relaxed) || limit.is_some_and(|l| start.elapsed() >= l) {
                break;
            }
            let t = now();
            self.model.advance(t);
            self.flush(start);
            let wait = self
                .model
                .next_deadline()
                .map_or(MAX_WAIT, |d| {
                    Duration::from_nanos(d.as_nanos().saturating_sub(t.as_nanos()))
                })
                .min(MAX_WAIT);
            if wait.is_zero() {
                ready[0] = true;
            } else {
                sys::wait_readable(&fd, &mut ready, Some(wait))?;
            }
            if !ready[0] {
                continue;
            }
            for _ in 0..READ_BATCH {
                let n = match (&self.from).read(&mut buf) {
                    Ok(n) => n,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                };
                self.report.read += 1;
                let Some(id) = self.held.put(&buf[..n]) else {
                    self.report.overflow += 1;
                    continue;
                };
                let wire = u32::try_from(n).unwrap_or(u32::MAX);
                self.model.send(now(), id, wire);
                self.flush(start);
            }
        }
        self.report.model = self.model.stats();
        Ok(self.report)
    }

    /// Writes what the model delivered, frees what it is done with.
    fn flush(&mut self, start: Instant) {
        let mut sec = None;
        for o in self.model.outcomes() {
            if o.fate == Fate::Delivered {
                let bytes = self.held.get(o.id);
                // A TUN write takes the whole packet or fails.
                match (&self.to).write(bytes) {
                    Ok(n) if n == bytes.len() => {
                        let elapsed = start.elapsed();
                        let r = &mut self.report;
                        r.written += 1;
                        r.bytes_written += n as u64;
                        let s = *sec.get_or_insert(elapsed.as_secs() as usize);
                        if r.per_second.len() <= s {
                            r.per_second.resize(s + 1, 0);
                        }
                        r.per_second[s] += n as u64;
                        let late = u64::try_from(elapsed.as_nanos())
                            .unwrap_or(u64::MAX)
                            .saturating_sub(o.at.as_nanos());
                        let b = ((late / LATE_BUCKET_NS) as usize).min(LATE_BUCKETS - 1);
                        r.lateness[b] += 1;
                    }
                    Ok(_) | Err(_) => self.report.write_errors += 1,
                }
            }
            if !o.copy {
                self.held.release(o.id);
            }
        }
    }
}
