//! Every run of the reproduction, built from `experiments/last-link/access.toml`, run in one
//! parallel batch, and reduced to one [`Point`] per (run set, RTT, variant).

use super::variants::{
    Variant, REFERENCES, SHARED_ACCESS, SUPP_PER, SUPP_WINDOW, TABLE1, VARIANTS,
};
use crate::draws;
use crate::runner::{run_jobs, Job};
use crate::stats::Estimate;
use crate::template::Template;
use crate::{Ctx, LabError};

/// What a run of the reproduction covers (quick mode: fewer RTTs, seeds and PERs, 60 s).
pub(super) struct Plan {
    /// Round-trip propagation times, ms.
    pub(super) rtts: Vec<u64>,
    pub(super) seeds: u64,
    /// Run length, s.
    pub(super) duration: u64,
    /// The cross flows start uniformly at random in [0, span) s.
    pub(super) span: f64,
    /// Fig. 5's PER values; the claims use 0.8 % (the last entry).
    pub(super) pers: Vec<f64>,
    /// PER values of the shared-access-link extension (Fig. 5's lowest and highest).
    pub(super) shared_pers: Vec<f64>,
}

impl Plan {
    pub(super) fn new(ctx: &Ctx) -> Plan {
        Plan {
            rtts: ctx.pick(vec![100, 300], vec![100, 200, 300, 400]),
            seeds: ctx.pick(1, 3),
            duration: ctx.pick(60, 1000),
            span: ctx.pick(5.0, 50.0),
            pers: ctx.pick(vec![0.008], vec![0.0008, 0.002, 0.004, 0.008]),
            shared_pers: ctx.pick(vec![0.008], vec![0.0008, 0.008]),
        }
    }
}

/// One variant at one RTT, over the seeds (kb/s unless said otherwise).
pub(super) struct Point {
    pub(super) main: Estimate,
    /// Mean throughput of the five bulk cross flows.
    pub(super) dummy: Estimate,
    /// The shared-access-link neighbour's throughput (empty when the run has none).
    pub(super) neighbour: Estimate,
    /// The main connection's PLR = retransmitted / transmitted segments.
    pub(super) plr: Estimate,
    /// Share of the main connection's detected losses (recovery episodes and timeouts) it
    /// answered without a window cut as wireless.
    pub(super) excused: Estimate,
}

/// Points by RTT (the plan's order), then by variant (the run set's order).
pub(super) type Grid = Vec<Vec<Point>>;

/// All results, one grid per run set.
pub(super) struct Runs {
    /// Fig. 3: [`VARIANTS`] at PER 0.
    pub(super) fig3: Grid,
    /// [`TABLE1`] at each of the plan's PERs.
    pub(super) by_per: Vec<Grid>,
    /// Supplementary: [`TABLE1`] with the main flow limited to [`SUPP_WINDOW`] segments.
    pub(super) supp: Grid,
    /// References: [`REFERENCES`] at [`SUPP_PER`].
    pub(super) references: Grid,
    /// Extension: [`SHARED_ACCESS`] with the neighbour download, at each `shared_pers` value.
    pub(super) shared: Vec<Grid>,
}

/// A group of runs: every variant at every RTT and seed, with one PER and main-flow setup.
struct RunSet {
    variants: &'static [Variant],
    /// PER of the access link's forward direction.
    loss: f64,
    /// The main flow's window limit in segments (0 = none).
    window: u32,
    /// Whether the shared-access-link neighbour download runs.
    neighbour: bool,
}

impl RunSet {
    fn new(variants: &'static [Variant], loss: f64) -> RunSet {
        RunSet {
            variants,
            loss,
            window: 0,
            neighbour: false,
        }
    }
}

const CROSS_IDS: [&str; 7] = ["ftp0", "ftp1", "ftp2", "ftp3", "ftp4", "telnet0", "telnet1"];

/// Start times of the cross flows for the run with this seed, uniform in [0, span) seconds.
fn starts(seed: u64, n: usize, span: f64) -> Vec<f64> {
    draws::uniform(seed, 0x11, n)
        .into_iter()
        .map(|u| u * span)
        .collect()
}

/// Runs every set of the plan and reduces the results.
pub(super) fn run(ctx: &Ctx, plan: &Plan) -> Result<Runs, LabError> {
    let template = Template::load(&ctx.experiment_dir("last-link").join("access.toml"))?;
    // Fig. 3 (variants at PER 0), then NewReno and the PER heuristic at each PER.
    let mut sets: Vec<RunSet> = vec![RunSet::new(&VARIANTS, 0.0)];
    for &p in &plan.pers {
        sets.push(RunSet::new(&TABLE1, p));
    }
    // Supplementary, not the paper's setup as we read it: the main flow limited to ns-2's
    // default window of 20 segments, so that no slow-start overshoot can happen.
    sets.push(RunSet {
        window: SUPP_WINDOW,
        ..RunSet::new(&TABLE1, SUPP_PER)
    });
    // References at the claims' PER: exact per-loss differentiation (TCP-ELN), and the PER
    // heuristic counting only recent transmissions.
    sets.push(RunSet::new(&REFERENCES, SUPP_PER));
    // Extension: a NewReno neighbour shares the access link.
    for &p in &plan.shared_pers {
        sets.push(RunSet {
            neighbour: true,
            ..RunSet::new(&SHARED_ACCESS, p)
        });
    }
    let mut jobs = Vec::new();
    for set in &sets {
        for &rtt in &plan.rtts {
            for v in set.variants {
                for seed in 1..=plan.seeds {
                    jobs.push(job(&template, plan, set, v, rtt, seed)?);
                }
            }
        }
    }
    let results = run_jobs(jobs, ctx.progress)?;
    let mut it = results.iter();
    let mut collect = |n: usize| -> Grid {
        plan.rtts
            .iter()
            .map(|_| {
                (0..n)
                    .map(|_| point(it.by_ref().take(plan.seeds as usize)))
                    .collect()
            })
            .collect()
    };
    Ok(Runs {
        fig3: collect(VARIANTS.len()),
        by_per: plan.pers.iter().map(|_| collect(TABLE1.len())).collect(),
        supp: collect(TABLE1.len()),
        references: collect(REFERENCES.len()),
        shared: plan
            .shared_pers
            .iter()
            .map(|_| collect(SHARED_ACCESS.len()))
            .collect(),
    })
}

/// The scenario of one run.
fn job(
    template: &Template,
    plan: &Plan,
    set: &RunSet,
    v: &Variant,
    rtt: u64,
    seed: u64,
) -> Result<Job, LabError> {
    let (loss, window, neighbour) = (set.loss, set.window, set.neighbour);
    // RTT = 2 × (1 + core + 1) ms: access 1 ms, server link 1 ms.
    let core = (rtt / 2).saturating_sub(2);
    let mut params = vec![
        ("link.core.delay".to_owned(), format!("{core}ms")),
        ("link.access.forward.loss".to_owned(), loss.to_string()),
        (
            "flow.main.tcp.last_link.max_cwnd".to_owned(),
            v.max_cwnd.to_string(),
        ),
        (
            "flow.main.tcp.last_link.initial".to_owned(),
            v.initial.to_string(),
        ),
        ("flow.main.tcp.last_link.per".to_owned(), v.per.to_string()),
        (
            "flow.main.tcp.last_link.initial_burst".to_owned(),
            v.initial_burst.to_string(),
        ),
        ("flow.main.tcp.eln".to_owned(), v.eln.to_string()),
        (
            "flow.main.tcp.last_link.plr_window".to_owned(),
            v.plr_window.to_string(),
        ),
        ("run.seed".to_owned(), seed.to_string()),
        ("run.duration".to_owned(), format!("{}s", plan.duration)),
    ];
    if window > 0 {
        params.push((
            "flow.main.tcp.max_window_segments".to_owned(),
            window.to_string(),
        ));
    }
    if neighbour {
        params.push(("flow.neighbour{i}.count".to_owned(), "1".to_owned()));
    }
    for (id, s) in CROSS_IDS
        .iter()
        .zip(starts(seed, CROSS_IDS.len(), plan.span))
    {
        params.push((format!("flow.{id}.start"), format!("{s:.3}s")));
    }
    let name = format!(
        "rtt={rtt} loss={loss} window={window} neighbour={neighbour} {} seed={seed}",
        v.label
    );
    template.job(name, &params)
}

/// Reduces the seeds of one variant at one RTT.
fn point<'a>(runs: impl Iterator<Item = &'a roam_sim::result::RunResult>) -> Point {
    let (mut m, mut d, mut plr, mut nb) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut excused = Vec::new();
    for r in runs {
        if let Some(f) = r.flows.iter().find(|f| !f.cross) {
            let retx = f.retransmitted_segments as f64;
            let sent = f.bytes_delivered as f64 / 1000.0 + retx;
            plr.push(if sent > 0.0 { retx / sent } else { 0.0 });
            let detected = (f.recoveries + f.timeouts) as f64;
            excused.push(if detected > 0.0 {
                f.wireless_excused as f64 / detected
            } else {
                0.0
            });
        }
        m.push(
            r.flows
                .iter()
                .filter(|f| !f.cross)
                .map(|f| f.goodput_bps)
                .sum::<f64>()
                / 1e3,
        );
        let bulk: Vec<f64> = r
            .flows
            .iter()
            .filter(|f| f.id.starts_with("ftp"))
            .map(|f| f.goodput_bps / 1e3)
            .collect();
        d.push(bulk.iter().sum::<f64>() / bulk.len().max(1) as f64);
        nb.extend(
            r.flows
                .iter()
                .filter(|f| f.id == "neighbour0")
                .map(|f| f.goodput_bps / 1e3),
        );
    }
    Point {
        main: Estimate::from_sample(&m),
        dummy: Estimate::from_sample(&d),
        neighbour: Estimate::from_sample(&nb),
        plr: Estimate::from_sample(&plr),
        excused: Estimate::from_sample(&excused),
    }
}
