//! `roam reproduce`: run a paper's experiment set and write its report and claims.

use std::io::IsTerminal;

use crate::cli::ReproduceArgs;
use crate::error::{CliError, Result};
use crate::output;

/// Runs the command.
pub fn run(args: &ReproduceArgs) -> Result<()> {
    let all = roam_lab::registry();
    if args.list {
        for e in &all {
            println!("{:<12} {}", e.name(), e.title());
        }
        return Ok(());
    }
    let name = args.name.clone().unwrap_or_default();
    let exp = roam_lab::find(&name).ok_or_else(|| CliError::UnknownExperiment {
        name: name.clone(),
        known: all.iter().map(|e| e.name()).collect::<Vec<_>>().join(", "),
    })?;
    let root = crate::root::find(args.root.as_deref())?;
    let out_dir = args
        .out
        .clone()
        .unwrap_or_else(|| root.join("results").join(exp.name()));
    let png = output::png_writer(args.png)?;
    let ctx = roam_lab::Ctx {
        quick: args.quick,
        repo_root: root,
        out_dir: out_dir.clone(),
        progress: !args.quiet && std::io::stderr().is_terminal(),
    };
    eprintln!(
        "reproducing {}: {}{}",
        exp.name(),
        exp.title(),
        if ctx.quick { " (quick mode)" } else { "" }
    );
    let report = exp.run(&ctx)?;
    report.write(&out_dir)?;
    let images: Vec<_> = report.images.iter().map(|f| out_dir.join(f)).collect();
    output::write_pngs(png.as_ref(), &images)?;
    let held = report.claims.iter().filter(|c| c.holds).count();
    for c in &report.claims {
        println!(
            "{:<5} {:<32} {}",
            if c.holds { "holds" } else { "FAILS" },
            c.id,
            c.claim
        );
    }
    println!(
        "{held} of {} claims hold; report: {}",
        report.claims.len(),
        out_dir.join("report.md").display()
    );
    Ok(())
}
