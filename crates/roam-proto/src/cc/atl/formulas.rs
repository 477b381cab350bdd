//! The closed forms of atl.txt §III: window-based AIMD throughput (eq. 7, after Yang & Lam),
//! its inverse in α (eq. 9), the rate-based AIMD throughput (eq. 10 / 29) and its inverse
//! (eq. 13), and the decomposition of measured loss and RTT into congestion and wireless parts
//! (eqs. 5–6 and 16–17).
//!
//! Units: throughput in packets per second, times in seconds, α in packets per RTT (window) or
//! packets per second per RTT (rate), β dimensionless. Every function is total: NaN, infinite or
//! out-of-range inputs give a finite, documented answer instead of NaN, ∞ or a panic.

/// Throughput used when a formula would divide by zero (no loss: unbounded throughput).
pub const UNBOUNDED: f64 = 1e12;

fn finite_or(x: f64, fallback: f64) -> f64 {
    if x.is_finite() {
        x
    } else {
        fallback
    }
}

/// Clamps a probability into [0, 1]; NaN becomes 0.
pub fn prob(p: f64) -> f64 {
    if p.is_nan() {
        0.0
    } else {
        p.clamp(0.0, 1.0)
    }
}

/// A non-negative finite number; NaN and negatives become 0, +∞ becomes [`UNBOUNDED`].
pub fn nonneg(x: f64) -> f64 {
    if x.is_nan() || x <= 0.0 {
        0.0
    } else {
        x.min(UNBOUNDED)
    }
}

/// β clamped into the paper's range [0.5, 1) (atl.txt §III-B: "∀β ∈ [0.5, 1)"); NaN gives ½.
pub fn beta_in_range(beta: f64) -> f64 {
    if beta.is_nan() {
        0.5
    } else {
        beta.clamp(0.5, 0.99)
    }
}

/// atl.txt eq. 7 (Yang & Lam's general AIMD TCP throughput), implemented as printed:
///
/// T = 1 / ( R·√(2b(1−β)p / (α(1+β))) + T0·3·√((1−β²)bp / (2α))·p·(1+32p²) )
///
/// With (α, β) = (1, ½) this is Padhye et al.'s formula without its `min(1, ·)`. Returns
/// [`UNBOUNDED`] when the denominator is zero (p = 0) and 0 when α ≤ 0.
pub fn window_throughput(alpha: f64, beta: f64, p: f64, rtt: f64, t0: f64, b: f64) -> f64 {
    let (p, beta) = (prob(p), beta_in_range(beta));
    let (alpha, rtt, t0, b) = (nonneg(alpha), nonneg(rtt), nonneg(t0), nonneg(b).max(1.0));
    if alpha == 0.0 {
        return 0.0;
    }
    let first = rtt * (2.0 * b * (1.0 - beta) * p / (alpha * (1.0 + beta))).sqrt();
    let second =
        t0 * 3.0 * ((1.0 - beta * beta) * b * p / (2.0 * alpha)).sqrt() * p * (1.0 + 32.0 * p * p);
    let denom = first + second;
    if denom.is_finite() && denom > 0.0 {
        (1.0 / denom).min(UNBOUNDED)
    } else {
        UNBOUNDED
    }
}

/// atl.txt eq. 9, as printed: the α that makes eq. 7 equal `target` (T̂) at loss p, RTT R,
/// timeout T0 and decrease factor β:
///
/// α = b·p·(1−β) / (2(1+β)) · [ T̂·(2R + 3·T0·p·(1+32p²)·(1+β)) ]²
///
/// It is the exact inverse of [`window_throughput`] in α. The result is finite (at most
/// [`UNBOUNDED`]) but not capped: the caller caps it (see [`super::AtlConfig::alpha_max`]).
pub fn window_alpha(target: f64, beta: f64, p: f64, rtt: f64, t0: f64, b: f64) -> f64 {
    let (p, beta) = (prob(p), beta_in_range(beta));
    let (target, rtt, t0, b) = (nonneg(target), nonneg(rtt), nonneg(t0), nonneg(b).max(1.0));
    let bracket = target * (2.0 * rtt + 3.0 * t0 * p * (1.0 + 32.0 * p * p) * (1.0 + beta));
    let alpha = b * p * (1.0 - beta) / (2.0 * (1.0 + beta)) * bracket * bracket;
    finite_or(alpha, UNBOUNDED).min(UNBOUNDED)
}

/// atl.txt eq. 10 (= eq. 29, the Appendix's rate-based AIMD throughput):
///
/// T^r = α / (4(1−β)) · [ 1+β + √((3−β)² + 8(1−β²) / (α·R·p)) ]
///
/// Returns [`UNBOUNDED`] when α·R·p = 0 (no loss) and 0 when α ≤ 0.
pub fn rate_throughput(alpha: f64, beta: f64, p: f64, rtt: f64) -> f64 {
    let (p, beta) = (prob(p), beta_in_range(beta));
    let (alpha, rtt) = (nonneg(alpha), nonneg(rtt));
    if alpha == 0.0 {
        return 0.0;
    }
    let arp = alpha * rtt * p;
    if arp <= 0.0 {
        return UNBOUNDED;
    }
    let root = ((3.0 - beta).powi(2) + 8.0 * (1.0 - beta * beta) / arp).sqrt();
    finite_or(
        alpha / (4.0 * (1.0 - beta)) * (1.0 + beta + root),
        UNBOUNDED,
    )
    .min(UNBOUNDED)
}

/// atl.txt eq. 13: the α that makes eq. 10 equal `target` (T̂):
///
/// α = (1+β)/2 · (T̂ + 1/(R·p)) · [ √(1 + 8T̂²(1−β) / ((T̂ + 1/(R·p))²(1+β)²)) − 1 ]
///
/// It is the positive root of α² + (1+β)(T̂ + 1/(Rp))·α − 2(1−β)T̂² = 0, the exact inverse of
/// eq. 10. `√(1+x) − 1` is evaluated as `x / (√(1+x) + 1)` so small x does not cancel. With
/// R·p = 0 (no loss) the limit is α = 0 … which would freeze the rate, so the caller keeps its
/// previous α (see [`super::params`]).
pub fn rate_alpha(target: f64, beta: f64, p: f64, rtt: f64) -> f64 {
    let (p, beta) = (prob(p), beta_in_range(beta));
    let (target, rtt) = (nonneg(target), nonneg(rtt));
    let rp = rtt * p;
    if rp <= 0.0 || target == 0.0 {
        return 0.0;
    }
    let a = (target + 1.0 / rp).min(UNBOUNDED);
    let x = 8.0 * target * target * (1.0 - beta) / (a * a * (1.0 + beta) * (1.0 + beta));
    let x = finite_or(x, UNBOUNDED);
    let alpha = (1.0 + beta) / 2.0 * a * (x / ((1.0 + x).sqrt() + 1.0));
    finite_or(alpha, UNBOUNDED).min(UNBOUNDED)
}

/// atl.txt eq. 5 (one wireless hop) and eq. 16 (wireless at both ends, with `p_w_other`):
/// p_c = 1 − (1−p) / ((1−p_w)(1−p_w')). With `p_w_other = 0` this is eq. 5,
/// (p − p_w)/(1 − p_w). May be ≤ 0 when the measured p is below the wireless share (the
/// caller floors it). When the wireless hops lose everything (p_w = 1) the congestion share is
/// unobservable and 0 is returned.
pub fn congestion_loss(p: f64, p_w: f64, p_w_other: f64) -> f64 {
    let (p, p_w, p_w_other) = (prob(p), prob(p_w), prob(p_w_other));
    let pass = (1.0 - p_w) * (1.0 - p_w_other);
    if pass <= 0.0 {
        return 0.0;
    }
    finite_or(1.0 - (1.0 - p) / pass, 0.0).min(1.0)
}

/// atl.txt eq. 6 / eq. 17: R_c = R − 2(d_w + d_w'), in seconds. May be ≤ 0 (the caller
/// decides).
pub fn congestion_rtt(rtt: f64, d_w_total: f64) -> f64 {
    nonneg(rtt) - 2.0 * nonneg(d_w_total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * a.abs().max(b.abs()).max(1e-12)
    }

    #[test]
    fn eq7_with_one_half_is_padhye_without_the_min() {
        let (p, r, t0) = (0.01_f64, 0.1, 0.4);
        let padhye = 1.0
            / (r * (2.0 * p / 3.0).sqrt()
                + t0 * 3.0 * (3.0 * p / 8.0).sqrt() * p * (1.0 + 32.0 * p * p));
        assert!(close(
            window_throughput(1.0, 0.5, p, r, t0, 1.0),
            padhye,
            1e-12
        ));
    }

    #[test]
    fn eq9_put_back_into_eq7_returns_the_target() {
        for &p in &[1e-6, 1e-4, 1e-3, 0.01, 0.05, 0.1, 0.3] {
            for &beta in &[0.5, 0.75, 0.8, 0.85] {
                for &(r, target) in &[(0.05, 200.0), (0.3, 20.0), (0.6, 3.0)] {
                    let t0 = 4.0 * r;
                    let alpha = window_alpha(target, beta, p, r, t0, 1.0);
                    let back = window_throughput(alpha, beta, p, r, t0, 1.0);
                    assert!(
                        close(back, target, 1e-9),
                        "p={p} β={beta}: {back} vs {target}"
                    );
                }
            }
        }
    }

    #[test]
    fn eq13_put_back_into_eq10_returns_the_target() {
        for &p in &[1e-6, 1e-4, 1e-3, 0.01, 0.05, 0.1, 0.3] {
            for &beta in &[0.5, 0.75, 0.8, 0.85] {
                for &(r, target) in &[(0.05, 200.0), (0.3, 20.0), (0.6, 3.0)] {
                    let alpha = rate_alpha(target, beta, p, r);
                    let back = rate_throughput(alpha, beta, p, r);
                    assert!(
                        close(back, target, 1e-7),
                        "p={p} β={beta}: {back} vs {target}"
                    );
                }
            }
        }
    }

    #[test]
    fn no_wireless_hop_gives_back_one_half() {
        // p_w = 0 and d_w = 0: p_c = p, R_c = R, so T̂ is the throughput at (1, ½) and eq. 9 at
        // β = ½ must give α = 1 exactly (up to rounding).
        for &p in &[1e-5, 1e-3, 0.02, 0.2] {
            let r = 0.08;
            let pc = congestion_loss(p, 0.0, 0.0);
            let rc = congestion_rtt(r, 0.0);
            let target = window_throughput(1.0, 0.5, pc, rc, 4.0 * rc, 1.0);
            let alpha = window_alpha(target, 0.5, p, r, 4.0 * r, 1.0);
            assert!(close(alpha, 1.0, 1e-9), "p={p}: α={alpha}");
        }
    }

    #[test]
    fn eq16_reduces_to_eq5_with_one_wireless_hop() {
        let (p, pw) = (0.03, 0.01);
        assert!(close(
            congestion_loss(p, pw, 0.0),
            (p - pw) / (1.0 - pw),
            1e-12
        ));
        // Eq. 14 inverted by eq. 16.
        let (pws, pwr, pc) = (0.01, 0.02, 0.005);
        let total = 1.0 - (1.0 - pws) * (1.0 - pc) * (1.0 - pwr);
        assert!(close(congestion_loss(total, pws, pwr), pc, 1e-9));
        assert!(congestion_loss(0.001, 0.01, 0.0) < 0.0);
        assert!(close(congestion_rtt(0.4, 0.15), 0.1, 1e-12));
    }

    #[test]
    fn degenerate_inputs_give_finite_answers() {
        let bad = [
            0.0,
            -1.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            1e300,
            2.0,
        ];
        for &a in &bad {
            for &b in &bad {
                for &c in &bad {
                    let outs = [
                        window_throughput(a, b, c, a, b, c),
                        window_alpha(a, b, c, a, b, c),
                        rate_throughput(a, b, c, a),
                        rate_alpha(a, b, c, a),
                        congestion_loss(a, b, c),
                        congestion_rtt(a, b),
                    ];
                    for o in outs {
                        assert!(o.is_finite(), "inputs {a} {b} {c} gave {o}");
                    }
                }
            }
        }
        assert_eq!(window_throughput(1.0, 0.5, 0.0, 0.1, 0.4, 1.0), UNBOUNDED);
        assert_eq!(rate_throughput(1.0, 0.5, 0.0, 0.1), UNBOUNDED);
        assert_eq!(congestion_loss(0.5, 1.0, 0.0), 0.0);
    }
}
