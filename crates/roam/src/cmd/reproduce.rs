//! `roam reproduce`: run a paper's experiment set and write its report and claims.

use std::io::IsTerminal;

use roam_lab::claims::Verdict;

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
    let mut text = String::new();
    if ctx.quick {
        text.push_str(
            "quick mode: a smoke test, not a reproduction (fewer seeds, shorter runs, smaller \
             transfers; numbers not comparable with the paper's)\n",
        );
    }
    for c in &report.claims {
        let verdict = match c.verdict {
            Verdict::Holds => "holds",
            Verdict::Fails => "FAILS",
            Verdict::NotJudged => "not judged",
        };
        text.push_str(&format!("{verdict:<10} {:<32} {}\n", c.id, c.claim));
        if let Some(n) = &c.note {
            text.push_str(&format!("{:<10} {:<32} ({n})\n", "", ""));
        }
    }
    text.push_str(&format!(
        "{}; report: {}\n",
        report.verdict_line(),
        out_dir.join("report.md").display()
    ));
    crate::cmd::print(&text)
}
