//! `roam-emu-probe`: the probe of [`roam_emu::probe`] as a program of its own (the tests and
//! the benchmark run it inside namespaces).

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Err(e) = roam_emu::probe::main(&args) {
        eprintln!("roam-emu-probe: {e}");
        std::process::exit(2);
    }
}
