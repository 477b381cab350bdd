//! Runs one reproduction until `roam reproduce` is wired: `cargo run --release -p roam-lab
//! --example reproduce -- <name> [--quick]`; writes `results/<name>/`.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let name = args
        .iter()
        .find(|a| !a.starts_with("--"))
        .ok_or("usage: reproduce <name> [--quick]")?;
    let quick = args.iter().any(|a| a == "--quick");
    let repo_root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let exp = roam_lab::find(name).ok_or("unknown experiment")?;
    let ctx = roam_lab::Ctx {
        quick,
        out_dir: repo_root.join("results").join(name),
        repo_root,
        progress: true,
    };
    let report = exp.run(&ctx)?;
    report.write(&ctx.out_dir)?;
    println!("{}", report.markdown());
    Ok(())
}
