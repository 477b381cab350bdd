//! Progress bars on stderr, hidden when stderr is not a terminal or `--quiet` is given.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A bar of `len` steps with `message`, drawing to stderr only when it is a terminal and
/// `quiet` is false.
pub fn bar(len: u64, message: &str, quiet: bool) -> ProgressBar {
    let target = if quiet || !std::io::stderr().is_terminal() {
        ProgressDrawTarget::hidden()
    } else {
        ProgressDrawTarget::stderr()
    };
    let pb = ProgressBar::with_draw_target(Some(len), target);
    let style = ProgressStyle::with_template(
        "{msg:>12} [{elapsed_precise}] {wide_bar} {pos}/{len} ({eta} left)",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    pb.set_style(style);
    pb.set_message(message.to_owned());
    pb
}
