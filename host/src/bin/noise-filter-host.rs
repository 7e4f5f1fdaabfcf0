//! `noise-filter-host`: the binary's name before it became `noise-filter`,
//! kept so scripts and deployments that run it go on working. It runs the
//! `noise-filter` beside it with the same arguments.

use std::os::unix::process::CommandExt as _;
use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let beside = std::env::current_exe()
        .map(|exe| exe.with_file_name("noise-filter"))
        .unwrap_or_else(|_| "noise-filter".into());
    // `exec` returns only if it failed.
    let error = Command::new(&beside)
        .args(std::env::args_os().skip(1))
        .exec();
    eprintln!(
        "error: noise-filter-host runs {}, which cannot be started: {error}",
        beside.display()
    );
    ExitCode::FAILURE
}
