//! `sts-stepper`: see `sts-stepper --help`.

use std::io::IsTerminal;
use std::process::ExitCode;

use sts_stepper::cli::plugin;
use sts_stepper::cli::{Command, LogFormat};
use sts_stepper::commands::alloc::Global;
use sts_stepper::commands::{self, Exit};
use tracing_subscriber::EnvFilter;

/// The allocator `benches/watch_memory/` measures (`commands::alloc`).
#[global_allocator]
static ALLOCATOR: Global = Global;

fn main() -> ExitCode {
    // A bug must still end in one line, not a backtrace.
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!("sts-stepper: internal error{at}: {msg}");
    }));
    let cli = match plugin::parse_from(std::env::args_os()) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    // `simulate` prints its timeline; the simulated passes' own warnings (a simulated webhook that
    // fails on purpose) would interleave with it on the terminal, about objects that do not exist.
    let default = match cli.command {
        Command::Simulate(_) => "error",
        _ => "info",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal());
    match cli.global.log_format {
        LogFormat::Json => builder.json().flatten_event(true).init(),
        LogFormat::Text => builder.init(),
    }
    // One worker thread beside the main one (which runs the command's own future): the stepper's
    // work is one pass at a time and waiting on sockets; a worker per core only added, per task
    // woken, a wakeup of the parked worker (tokio's eventfd and a futex), once per pod watch event
    // on a real API server (BENCHMARKS.md, "CPU per pod watch event"). TOKIO_WORKER_THREADS still
    // sets another number.
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    if std::env::var_os("TOKIO_WORKER_THREADS").is_none() {
        runtime.worker_threads(1);
    }
    let runtime = match runtime.enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("sts-stepper: error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(commands::run(cli)) {
        Ok(Exit::Ok) => ExitCode::SUCCESS,
        Ok(Exit::Failed) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("sts-stepper: error: {}", one_line(&e));
            ExitCode::FAILURE
        }
    }
}

/// The error and its causes on one line, skipping a cause its parent already quotes.
fn one_line(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if !out.contains(&text) {
            if !out.is_empty() {
                out.push_str(": ");
            }
            out.push_str(&text);
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}
