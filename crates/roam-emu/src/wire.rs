//! The real-time forwarding loop: packets read from one TUN end of a path go through that
//! direction's [`DirModel`] (the simulator's link code) and are written to the other end when
//! the model delivers them.
//!
//! One thread serves every path. Each turn it advances every model to the present, writes
//! what they deliver, then waits (`ppoll`, nanosecond timeout, 1 µs timer slack) until a TUN
//! end is readable or the earliest model deadline comes, and reads every readable end in a
//! batch (up to [`READ_BATCH`] packets each) before the next turn.

use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use roam_proto::Time;
use roam_sim::link::emulation::{DirModel, DirStats, Fate};

use crate::config::PathModel;
use crate::sys;

/// Packets read from one TUN end before the loop looks at the others.
pub const READ_BATCH: usize = 64;
/// Largest packet read (TUN devices are made with the default 1500-byte MTU; anything up to
/// 64 KiB is carried).
const MAX_PACKET: usize = 65_536;
/// Datagrams held at once (queued or in flight) over all paths; beyond it new ones are
/// dropped and counted, so a misconfigured link cannot take the machine's memory.
pub const MAX_HELD: usize = 1 << 20;
/// The longest wait without looking at the stop flag.
const MAX_WAIT: Duration = Duration::from_millis(50);

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
}

/// What a run of the wire did, per path: `[up, down]`.
#[derive(Debug, Clone, Default)]
pub struct WireReport {
    /// Per path, inner → outer then outer → inner.
    pub paths: Vec<[DirReport; 2]>,
    /// Wall time the wire ran.
    pub elapsed: Duration,
}

/// The monotonic clock: the emulator is a host (like the simulator and the UDP runtime), and
/// reads real time here and in nothing below it.
#[allow(clippy::disallowed_methods)]
pub fn monotonic() -> Instant {
    Instant::now()
}

/// One direction at run time.
struct Dir {
    model: DirModel,
    /// The TUN end it writes to.
    to: usize,
    report: DirReport,
}

/// The datagrams held by the models, by id.
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
        self.count += 1;
        let id = match self.free.pop() {
            Some(id) => id,
            None => {
                self.bufs.push(Vec::new());
                u32::try_from(self.bufs.len() - 1).ok()?
            }
        };
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

/// The TUN ends and the models between them.
pub struct Wire {
    ends: Vec<File>,
    fds: Vec<RawFd>,
    /// `dirs[2k]`: path k inner → outer (reads `ends[2k]`, writes `ends[2k+1]`); `dirs[2k+1]`
    /// the reverse.
    dirs: Vec<Dir>,
    held: Held,
    start: Instant,
}

impl Wire {
    /// A wire over `paths`, whose TUN ends are `ends[2k]` (inner) and `ends[2k+1]` (outer).
    pub fn new(paths: Vec<PathModel>, ends: Vec<File>) -> Wire {
        let mut dirs = Vec::new();
        for (k, p) in paths.into_iter().enumerate() {
            let (inner, outer) = (2 * k, 2 * k + 1);
            dirs.push(Dir {
                model: p.up,
                to: outer,
                report: DirReport::default(),
            });
            dirs.push(Dir {
                model: p.down,
                to: inner,
                report: DirReport::default(),
            });
        }
        let fds = ends.iter().map(AsRawFd::as_raw_fd).collect();
        Wire {
            ends,
            fds,
            dirs,
            held: Held::default(),
            start: monotonic(),
        }
    }

    fn now(&self) -> Time {
        Time::from_nanos(u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX))
    }

    /// Forwards until `stop` is set or `limit` has passed since the wire started; the link
    /// models' time zero is this call. Returns the counters.
    pub fn run(
        mut self,
        stop: &AtomicBool,
        limit: Option<Duration>,
    ) -> std::io::Result<WireReport> {
        sys::tight_timer_slack();
        self.start = monotonic();
        let mut ready = vec![false; self.fds.len()];
        let mut buf = vec![0u8; MAX_PACKET];
        loop {
            if stop.load(Ordering::Relaxed) || limit.is_some_and(|l| self.start.elapsed() >= l) {
                break;
            }
            let now = self.now();
            for d in 0..self.dirs.len() {
                self.dirs[d].model.advance(now);
                self.flush(d);
            }
            let next = self
                .dirs
                .iter()
                .filter_map(|d| d.model.next_deadline())
                .min();
            let wait = next
                .map_or(MAX_WAIT, |t| {
                    Duration::from_nanos(t.as_nanos().saturating_sub(now.as_nanos()))
                })
                .min(MAX_WAIT);
            if !wait.is_zero() {
                sys::wait_readable(&self.fds, &mut ready, Some(wait))?;
            } else {
                ready.iter_mut().for_each(|r| *r = true);
            }
            for (end, &r) in ready.iter().enumerate() {
                if r {
                    self.read_end(end, &mut buf)?;
                }
            }
        }
        let elapsed = self.start.elapsed();
        let paths = self
            .dirs
            .chunks(2)
            .map(|pair| {
                let r = |d: &Dir| DirReport {
                    model: d.model.stats(),
                    ..d.report.clone()
                };
                [r(&pair[0]), r(&pair[1])]
            })
            .collect();
        Ok(WireReport { paths, elapsed })
    }

    /// Reads up to [`READ_BATCH`] packets from TUN end `end` into its direction's model.
    fn read_end(&mut self, end: usize, buf: &mut [u8]) -> std::io::Result<()> {
        // End 2k is path k's inner end, read by direction 2k; end 2k+1 by direction 2k+1.
        let d = end;
        for _ in 0..READ_BATCH {
            let n = match (&self.ends[end]).read(buf) {
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            let now = self.now();
            let dir = &mut self.dirs[d];
            dir.report.read += 1;
            let Some(id) = self.held.put(&buf[..n]) else {
                dir.report.overflow += 1;
                continue;
            };
            dir.model
                .send(now, id, u32::try_from(n).unwrap_or(u32::MAX));
            self.flush(d);
        }
        Ok(())
    }

    /// Writes what direction `d`'s model delivered, frees what it is done with.
    fn flush(&mut self, d: usize) {
        let sec = self.start.elapsed().as_secs() as usize;
        let dir = &mut self.dirs[d];
        let out = &self.ends[dir.to];
        for o in dir.model.outcomes() {
            if o.fate == Fate::Delivered {
                let bytes = self.held.get(o.id);
                // A TUN write takes the whole packet or fails.
                match (&*out).write(bytes) {
                    Ok(n) if n == bytes.len() => {
                        let r = &mut dir.report;
                        r.written += 1;
                        r.bytes_written += bytes.len() as u64;
                        if r.per_second.len() <= sec {
                            r.per_second.resize(sec + 1, 0);
                        }
                        r.per_second[sec] += bytes.len() as u64;
                    }
                    Ok(_) | Err(_) => dir.report.write_errors += 1,
                }
            }
            if !o.copy {
                self.held.release(o.id);
            }
        }
    }
}
