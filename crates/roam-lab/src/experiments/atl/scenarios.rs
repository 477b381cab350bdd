//! The ATL runs: which template, which parameters, for every part of the reproduction.

use crate::runner::Job;
use crate::template::Template;
use crate::{Ctx, LabError};

/// Wireless loss probabilities of Figs. 6–8 and 12–14.
pub const PWS_FULL: [f64; 8] = [1e-6, 1e-5, 1e-4, 1e-3, 5e-3, 1e-2, 5e-2, 1e-1];
/// Quick mode: the two ends and one middle point.
pub const PWS_QUICK: [f64; 3] = [1e-5, 1e-2, 1e-1];
/// One-way wireless delays (ms): WLAN, 3G, satellite.
pub const DWS_FULL: [u32; 3] = [10, 50, 150];
/// Quick mode delays (ms).
pub const DWS_QUICK: [u32; 2] = [10, 150];

/// The (p_w, d_w in ms) grid of Figs. 6–8 and 12–14 for this mode.
pub fn pw_dw_grid(ctx: &Ctx) -> (&'static [f64], &'static [u32]) {
    if ctx.quick {
        (&PWS_QUICK, &DWS_QUICK)
    } else {
        (&PWS_FULL, &DWS_FULL)
    }
}

/// TCP protocols compared: (label, `cc`).
pub const TCP_PROTOCOLS: [(&str, &str); 3] = [
    ("TCP-ATL", "atl"),
    ("NewReno", "newreno"),
    ("Westwood+", "westwood"),
];
/// Media protocols compared: (label, `cc`).
pub const MEDIA_PROTOCOLS: [(&str, &str); 2] = [("RCP-ATL", "rcp-atl"), ("AIMD (RAP)", "aimd")];

/// A wireless profile of §V-A2: (name, d_w in ms, p_w).
#[derive(Debug, Clone, Copy)]
pub struct Profile {
    /// WLAN, 3G or Sat.
    pub name: &'static str,
    /// One-way delay (ms).
    pub d_w_ms: u32,
    /// Loss probability.
    pub p_w: f64,
}

/// atl.txt §V-A2: p_w = 1e-5, 1e-4, 1e-3 and d_w = 10, 50, 150 ms.
pub const WLAN: Profile = Profile {
    name: "WLAN",
    d_w_ms: 10,
    p_w: 1e-5,
};
/// 3G cellular.
pub const G3: Profile = Profile {
    name: "3G",
    d_w_ms: 50,
    p_w: 1e-4,
};
/// Satellite.
pub const SAT: Profile = Profile {
    name: "Sat",
    d_w_ms: 150,
    p_w: 1e-3,
};

/// One row of Tables II/III: (t1, t2) in s, the three networks, the paper's throughput for a
/// wireless source and for a wireless receiver (Mb/s).
pub type RoamingRow = ((u32, u32), [Profile; 3], f64, f64);

/// Tables II and III.
pub const ROAMING: [RoamingRow; 6] = [
    ((100, 300), [WLAN, G3, SAT], 1.8870, 1.8521),
    ((200, 300), [WLAN, SAT, G3], 1.9149, 1.8943),
    ((200, 500), [SAT, WLAN, G3], 1.8919, 1.8755),
    ((200, 400), [SAT, G3, WLAN], 1.8979, 1.8771),
    ((100, 200), [G3, WLAN, SAT], 1.8701, 1.8561),
    ((400, 500), [G3, SAT, WLAN], 1.9210, 1.9093),
];

/// Blackout durations of Fig. 9 (s).
pub const BLACKOUTS_FULL: [f64; 7] = [0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0];
/// Quick mode blackouts (s).
pub const BLACKOUTS_QUICK: [f64; 2] = [0.1, 2.0];
/// Protocols of Fig. 9 (plus NewReno for reference).
pub const BLACKOUT_PROTOCOLS: [(&str, &str); 3] = TCP_PROTOCOLS;

/// Run length (s) and time scale of the schedule (quick mode compresses 600 s to 60 s).
pub fn duration_s(ctx: &Ctx) -> f64 {
    ctx.pick(60.0, 600.0)
}

/// Seeds per point.
pub fn seeds(ctx: &Ctx) -> u64 {
    ctx.pick(1, 3)
}

fn ms(v: u32) -> String {
    format!("\"{v}ms\"")
}

/// Loads a template of this experiment.
pub fn template(ctx: &Ctx, file: &str) -> Result<Template, LabError> {
    Template::load(&ctx.experiment_dir("atl").join(file))
}

/// One run of the single wireless-source topology (TCP or media).
pub fn single(
    t: &Template,
    label: String,
    cc: &str,
    p_w: f64,
    d_w_ms: u32,
    duration: f64,
    seed: u64,
) -> Result<Job, LabError> {
    let params = [
        ("link.wl.delay", ms(d_w_ms)),
        ("link.wl.forward.loss", p_w.to_string()),
        ("flow.0.cc", format!("\"{cc}\"")),
        ("run.duration", duration.to_string()),
        ("run.seed", seed.to_string()),
    ];
    t.job(label, &params)
}

/// One roaming run: the networks switch at `t1`, `t2` (already scaled); `loss_dir` is the
/// direction carrying data over the wireless link (`forward` for a wireless source, `reverse`
/// for a wireless receiver).
#[allow(clippy::too_many_arguments)] // One flat call per table row.
pub fn roaming(
    t: &Template,
    label: String,
    nets: &[Profile; 3],
    (t1, t2): (f64, f64),
    loss_dir: &str,
    duration: f64,
    seed: u64,
) -> Result<Job, LabError> {
    let mut events = Vec::new();
    for (at, n) in [(t1, nets[1]), (t2, nets[2])] {
        events.push(format!(
            "{{ at = \"{at}s\", link = \"wl\", set = {{ delay = {} }} }}",
            ms(n.d_w_ms)
        ));
        events.push(format!(
            "{{ at = \"{at}s\", link = \"wl\", direction = \"{loss_dir}\", set = {{ loss = {} }} }}",
            n.p_w
        ));
    }
    let params = [
        ("link.wl.delay", ms(nets[0].d_w_ms)),
        (
            if loss_dir == "forward" {
                "link.wl.forward.loss"
            } else {
                "link.wl.reverse.loss"
            },
            nets[0].p_w.to_string(),
        ),
        ("event", format!("[{}]", events.join(", "))),
        ("run.duration", duration.to_string()),
        ("run.seed", seed.to_string()),
    ];
    t.job(label, &params)
}

/// One blackout run: d_w = 50 ms, p_w = 1e-3, a blackout of `secs` at `at` on both directions.
pub fn blackout(
    t: &Template,
    label: String,
    cc: &str,
    (at, secs): (f64, f64),
    duration: f64,
    seed: u64,
) -> Result<Job, LabError> {
    let b = format!("[{{ at = \"{at}s\", duration = \"{secs}s\" }}]");
    let params = [
        ("link.wl.delay", ms(50)),
        ("link.wl.forward.loss", "0.001".to_owned()),
        ("link.wl.forward.blackouts", b.clone()),
        ("link.wl.reverse.blackouts", b),
        ("flow.0.cc", format!("\"{cc}\"")),
        ("run.duration", duration.to_string()),
        ("run.seed", seed.to_string()),
    ];
    t.job(label, &params)
}

/// A reference variant of the five-plus-five fairness run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reference {
    /// As the paper: TCP-ATL on the wireless hosts.
    None,
    /// NewReno instead of TCP-ATL on the wireless hosts.
    NewReno,
    /// NewReno on the wireless hosts and no wireless loss: only the topology differs.
    NewRenoNoLoss,
}

/// What a fairness run changes in its template.
#[derive(Debug, Clone, Copy)]
pub struct FairnessSetup {
    /// TCP-ATL as in the paper, or a reference controller on the wireless hosts.
    pub reference: Reference,
    /// Overrides the delay of the wired hosts' access links `wd{i}` (the paper does not give
    /// it; the template uses 1 ms).
    pub wired_access_delay_ms: Option<u64>,
    /// Access links (repeated names such as `wl{i}`) whose phase-breaking jitter is removed,
    /// making the run fully deterministic apart from the wireless loss.
    pub without_jitter: &'static [&'static str],
}

/// One fairness run.
pub fn fairness(
    t: &Template,
    label: String,
    setup: FairnessSetup,
    duration: f64,
    seed: u64,
) -> Result<Job, LabError> {
    let FairnessSetup {
        reference,
        wired_access_delay_ms,
        without_jitter,
    } = setup;
    let jitter_keys: Vec<String> = without_jitter
        .iter()
        .map(|l| format!("link.{l}.forward.jitter"))
        .collect();
    let mut params: Vec<(&str, String)> = vec![
        ("run.duration", duration.to_string()),
        ("run.seed", seed.to_string()),
    ];
    params.extend(
        jitter_keys
            .iter()
            .map(|k| (k.as_str(), "\"0ms\"".to_owned())),
    );
    if reference != Reference::None {
        params.push(("flow.a{i}.cc", "\"newreno\"".to_owned()));
    }
    if reference == Reference::NewRenoNoLoss {
        params.push(("link.wl{i}.forward.loss", "0.0".to_owned()));
    }
    if let Some(ms) = wired_access_delay_ms {
        params.push(("link.wd{i}.delay", format!("\"{ms}ms\"")));
    }
    t.job(label, &params)
}
