//! Choosing (α, β) from what is measured and what the link layer reports: the pseudo-algorithm
//! of atl.txt Fig. 4, shared by TCP-ATL (α by eq. 9) and RCP-ATL (α by eq. 13).

use super::formulas::{
    congestion_loss, congestion_rtt, prob, rate_alpha, window_alpha, window_throughput,
};

/// Additive-increase and multiplicative-decrease parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Aimd {
    /// Additive increase per RTT, in packets per RTT: the window grows by α segments per RTT;
    /// a rate grows by α/R packets/s per RTT (eq. 13's α times R).
    pub alpha: f64,
    /// Multiplicative decrease factor on loss.
    pub beta: f64,
}

impl Aimd {
    /// TCP's (1, ½): where every ATL connection starts (atl.txt §IV-A).
    pub const TCP: Aimd = Aimd {
        alpha: 1.0,
        beta: 0.5,
    };
}

/// Which throughput model α is solved for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Service {
    /// Window-based AIMD (TCP-ATL): α by eq. 9.
    Window,
    /// Rate-based AIMD (RCP-ATL): α by eq. 13.
    Rate,
}

/// Tunables of the adaptation. Defaults follow atl.txt §III-B/§V-A1 where the paper says.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AtlConfig {
    /// Sliding measurement window τ in RTTs (atl.txt §V-A1: 10·RTT).
    pub tau_rtts: f64,
    /// b, packets acknowledged per ACK (atl.txt §III-B: 1).
    pub b: f64,
    /// T0 = `t0_rtts`·R for the connection and T0c = `t0_rtts`·R_c for the target
    /// (atl.txt §III-B: T0c ≈ 4·R_c, after TFRC).
    pub t0_rtts: f64,
    /// Hard upper bound on α (our choice; eq. 9 grows like p⁷ as p → 1). The engines also
    /// never let one RTT's additive increase exceed the current window/rate (no faster than
    /// slow start). See docs/ATL.md.
    pub alpha_max: f64,
}

impl Default for AtlConfig {
    fn default() -> Self {
        AtlConfig {
            tau_rtts: 10.0,
            b: 1.0,
            t0_rtts: 4.0,
            alpha_max: 1000.0,
        }
    }
}

/// The inputs of one (α, β) computation.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PathFacts {
    /// Measured end-to-end loss rate p over the window τ.
    pub p: f64,
    /// Packets (delivered + lost) the measurement of p is based on.
    pub samples: f64,
    /// Measured RTT R (seconds).
    pub rtt: f64,
    /// Wireless loss probability of the local hop (source side), p_w^s.
    pub p_w_local: f64,
    /// One-way delay of the local wireless hop (seconds), d_w^s.
    pub d_w_local: f64,
    /// Wireless loss probability forwarded by the peer (receiver side), p_w^r.
    pub p_w_peer: f64,
    /// One-way delay of the peer's wireless hop (seconds), d_w^r.
    pub d_w_peer: f64,
}

/// atl.txt §IV-A: β = 0.75 / 0.80 / 0.85 for 0 < d_w < 50 ms, 50 ≤ d_w < 150 ms, d_w ≥ 150 ms;
/// ½ without wireless delay.
pub fn beta_for_delay(d_w_secs: f64) -> f64 {
    if d_w_secs.is_nan() || d_w_secs <= 0.0 {
        0.5
    } else if d_w_secs < 0.050 {
        0.75
    } else if d_w_secs < 0.150 {
        0.80
    } else {
        0.85
    }
}

/// Fig. 4 of atl.txt. Returns the new (α, β), or `previous` when the inputs cannot support a
/// computation (no RTT yet, or R_c = R − 2d_w ≤ 0: the RTT samples still describe the path
/// before a handoff that added delay).
///
/// * Case 4 (no wireless hop at either end, p_w = d_w = 0): exactly (1, ½).
/// * Cases 1–3: p_c by eq. 5/16, R_c by eq. 6/17, T̂ by eq. 7 at (1, ½) with T0c = 4·R_c and
///   b = 1, β by d_w = d_w^s + d_w^r, α by eq. 9 (window) or eq. 13 (rate), capped at
///   `cfg.alpha_max`.
/// * Measurement resolution: within τ we saw `samples` packets, so no loss rate below
///   1/samples is observable; p and p_c are floored there (this also settles p_c ≤ 0, when the
///   measured p is below p_w).
pub fn adapt(service: Service, cfg: &AtlConfig, f: &PathFacts, previous: Aimd) -> Aimd {
    let (pw_s, pw_r) = (prob(f.p_w_local), prob(f.p_w_peer));
    let d_w = nonneg_secs(f.d_w_local) + nonneg_secs(f.d_w_peer);
    if pw_s == 0.0 && pw_r == 0.0 && d_w == 0.0 {
        return Aimd::TCP;
    }
    let rtt = nonneg_secs(f.rtt);
    let rtt_c = congestion_rtt(rtt, d_w);
    if rtt <= 0.0 || rtt_c <= 0.0 {
        return previous;
    }
    let floor = 1.0 / f.samples.max(1.0);
    let p = prob(f.p).max(floor);
    let p_c = congestion_loss(p, pw_s, pw_r).max(floor);
    let t0c = cfg.t0_rtts * rtt_c;
    let target = window_throughput(1.0, 0.5, p_c, rtt_c, t0c, cfg.b);
    let beta = beta_for_delay(d_w);
    let alpha = match service {
        Service::Window => window_alpha(target, beta, p, rtt, cfg.t0_rtts * rtt, cfg.b),
        // Eq. 13 gives packets/s per RTT; we carry α in packets per RTT (the window's unit),
        // so that (1, ½) is RAP's "one packet per RTT per RTT" and the engine adds α/R.
        Service::Rate => rate_alpha(target, beta, p, rtt) * rtt,
    };
    if alpha.is_nan() || alpha <= 0.0 {
        return previous;
    }
    Aimd {
        alpha: alpha.min(cfg.alpha_max.max(1.0)),
        beta,
    }
}

fn nonneg_secs(x: f64) -> f64 {
    if x.is_finite() && x > 0.0 {
        x
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(p: f64, rtt: f64, pw: f64, dw: f64) -> PathFacts {
        PathFacts {
            p,
            samples: 1e6,
            rtt,
            p_w_local: pw,
            d_w_local: dw,
            ..PathFacts::default()
        }
    }

    #[test]
    fn no_wireless_link_means_exactly_tcp() {
        let cfg = AtlConfig::default();
        let prev = Aimd {
            alpha: 7.0,
            beta: 0.8,
        };
        for service in [Service::Window, Service::Rate] {
            assert_eq!(
                adapt(service, &cfg, &facts(0.02, 0.1, 0.0, 0.0), prev),
                Aimd::TCP
            );
        }
    }

    #[test]
    fn beta_follows_the_delay_table() {
        assert_eq!(beta_for_delay(0.0), 0.5);
        assert_eq!(beta_for_delay(0.010), 0.75);
        assert_eq!(beta_for_delay(0.050), 0.80);
        assert_eq!(beta_for_delay(0.149), 0.80);
        assert_eq!(beta_for_delay(0.150), 0.85);
        assert_eq!(beta_for_delay(f64::NAN), 0.5);
    }

    #[test]
    fn alpha_grows_with_wireless_loss_and_delay() {
        let cfg = AtlConfig::default();
        let a = |pw: f64, dw: f64| {
            let p = 1.0 - (1.0 - pw) * (1.0 - 0.002);
            adapt(
                Service::Window,
                &cfg,
                &facts(p, 0.06 + 2.0 * dw, pw, dw),
                Aimd::TCP,
            )
        };
        assert!(a(0.01, 0.01).alpha > a(0.001, 0.01).alpha);
        assert!(a(0.001, 0.15).alpha > a(0.001, 0.01).alpha);
        assert_eq!(a(0.001, 0.15).beta, 0.85);
    }

    #[test]
    fn inconsistent_delay_keeps_the_previous_parameters() {
        let cfg = AtlConfig::default();
        let prev = Aimd {
            alpha: 3.0,
            beta: 0.75,
        };
        // R = 60 ms but the new link reports d_w = 150 ms: R_c < 0 until RTT samples catch up.
        assert_eq!(
            adapt(Service::Window, &cfg, &facts(0.01, 0.06, 0.001, 0.15), prev),
            prev
        );
        assert_eq!(
            adapt(Service::Rate, &cfg, &facts(0.01, 0.0, 0.001, 0.01), prev),
            prev
        );
    }

    #[test]
    fn measured_loss_below_wireless_loss_is_floored_not_negative() {
        let cfg = AtlConfig::default();
        let mut f = facts(0.0, 0.1, 0.05, 0.01);
        f.samples = 200.0;
        for service in [Service::Window, Service::Rate] {
            let out = adapt(service, &cfg, &f, Aimd::TCP);
            assert!(out.alpha.is_finite() && out.alpha > 0.0 && out.alpha <= cfg.alpha_max);
        }
    }

    #[test]
    fn alpha_is_capped_in_a_blackout() {
        let cfg = AtlConfig::default();
        let out = adapt(
            Service::Window,
            &cfg,
            &facts(0.9, 0.2, 0.9, 0.05),
            Aimd::TCP,
        );
        assert_eq!(out.alpha, cfg.alpha_max);
    }
}
