//! The subcommands, one file each, dispatched by [`run`], and the one [`Context`] they share
//! (`context`).

pub mod alloc;
mod checks;
mod connect;
mod context;
mod heartbeat;
mod once;
mod pass_log;
mod pause;
mod preview;
mod release;
mod resume;
mod simulate;
mod status;
mod status_view;
mod step;
mod table;
mod target;
mod wait;
mod wait_staged;
mod watch;

pub use checks::{check_options, checks, probe_options, prometheus};

use anyhow::Result;

pub use connect::{SERVICE_ACCOUNT_NAMESPACE, load};
pub use context::{Context, Exit};
pub use heartbeat::heartbeats;
pub use pass_log::log_pass;
pub use pause::pause_set;
pub use preview::preview_text;
pub use release::{How, ReleaseReport, release_sets};
pub use resume::resume_set;
pub use status::{status_items, status_items_with, status_table, status_table_with};
pub use status_view::{View, render as status_view};
pub use step::{Forced, step_once, step_once_with};
pub use table::table;
pub use wait::check_complete;
pub use wait_staged::{
    Patience, Waited, scope_words, staged_now, timed_out_lines, wait_none_staged,
};

use crate::cli::{Cli, Command};

/// Runs the parsed command line.
///
/// # Errors
/// Configuration, connection or API errors, one line each through `main`.
pub async fn run(cli: Cli) -> Result<Exit> {
    if let Command::Simulate(args) = &cli.command {
        return simulate::run(args);
    }
    let ctx = Context::new(&cli.global).await?;
    match &cli.command {
        Command::Once(args) => once::run(&ctx, args).await,
        Command::Watch(args) => watch::run(&ctx, args).await,
        Command::Status(args) => status::run(&ctx, args).await,
        Command::Step(args) => step::run(&ctx, args).await,
        Command::Wait(args) => wait::run(&ctx, args).await,
        Command::Pause(args) => pause::run(&ctx, args).await,
        Command::Resume(args) => resume::run(&ctx, args).await,
        Command::Preview(args) => preview::run(&ctx, args).await,
        Command::Release(args) => release::run(&ctx, args).await,
        Command::Simulate(_) => unreachable!("handled above"),
    }
}
