//! The rank of a request (rcp-r2cp.txt §4.1.4, §4.3.1, Fig. 8): "the assignment should be made
//! based on the time the corresponding data will arrive, not the time the request is sent".
//! Our estimate (the paper's copy is cut short): see `docs/R2CP.md`, "Scheduling by rank".

use std::time::Duration;

/// What the scheduler knows of one usable pipe.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PipeRate {
    /// Smoothed RTT (the time from a request to its data).
    pub srtt: Duration,
    /// Congestion window (bytes).
    pub cwnd: u64,
}

/// Bytes of unbound data that the other pipes will request *and receive* before a request sent
/// now through `me` arrives: for each faster pipe q, its window rate `cwnd_q / srtt_q` over
/// the interval `srtt_me − srtt_q` in which its requests still overtake ours, rounded down to
/// whole segments of `mss`. The request's rank is this skip in segments plus one.
pub fn skip_bytes(me: PipeRate, others: &[PipeRate], mss: u64) -> u64 {
    let mss = mss.max(1);
    let mut skip = 0u64;
    for q in others {
        if q.srtt >= me.srtt || q.srtt.is_zero() {
            continue;
        }
        let lead = (me.srtt - q.srtt).as_secs_f64();
        let bytes = q.cwnd as f64 * lead / q.srtt.as_secs_f64();
        // Saturating conversion: a huge window or RTT ratio just means "far down the order".
        let segments = (bytes / mss as f64).floor().min(u32::MAX as f64) as u64;
        skip = skip.saturating_add(segments.saturating_mul(mss));
    }
    skip
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fig8_slow_pipe_request_gets_the_third_unbound_segment() {
        // Fig. 8: pipe 1 (fast) issues one request per 5 ms (cwnd 2 segments, RTT 10 ms);
        // pipe 2's request at T takes 20 ms to bring its data. The two requests pipe 1 issues
        // in [T, T + 10 ms) arrive before it: rank 3.
        let mss = 1000;
        let fast = PipeRate {
            srtt: Duration::from_millis(10),
            cwnd: 2000,
        };
        let slow = PipeRate {
            srtt: Duration::from_millis(20),
            cwnd: 2000,
        };
        let skip = skip_bytes(slow, &[fast], mss);
        assert_eq!(skip / mss + 1, 3);
        assert_eq!(
            skip_bytes(fast, &[slow], mss),
            0,
            "the fast pipe ranks first"
        );
    }

    #[test]
    fn equal_rtts_rank_first_and_huge_ratios_saturate() {
        let a = PipeRate {
            srtt: Duration::from_millis(30),
            cwnd: 10_000,
        };
        assert_eq!(skip_bytes(a, &[a], 1000), 0);
        let tiny = PipeRate {
            srtt: Duration::from_nanos(1),
            cwnd: u64::MAX,
        };
        let slow = PipeRate {
            srtt: Duration::from_secs(100),
            cwnd: 1,
        };
        assert!(skip_bytes(slow, &[tiny, tiny], 1000) > 0);
    }
}
