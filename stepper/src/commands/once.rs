//! `once`: one pass over the StatefulSets in scope, then exit (a CronJob's command).

use anyhow::Result;

use super::checks::{check_options, checks};
use super::context::{Context, Exit};
use super::pass_log::timed_pass;
use crate::cli::OnceArgs;
use crate::pass::PodReads;

/// Runs one pass over every namespace, or `-n`'s; [`Exit::Failed`] when an API error blocked some set.
///
/// # Errors
/// A bad `--prometheus-*` flag, or a failed StatefulSet LIST (nothing was written).
pub async fn run(ctx: &Context, args: &OnceArgs) -> Result<Exit> {
    let (cluster, scope) = ctx.controller_cluster(&args.scope, &args.pass)?;
    let mut opts = ctx.pass_options(
        PodReads::Candidates,
        &args.gates,
        Some(&args.pass),
        args.dry_run,
    );
    opts.gates.scope = scope;
    let checks = checks(&args.checks)?;
    check_options(&args.checks, &checks, &mut opts);
    let report = timed_pass(&cluster, &checks, &opts, None).await?;
    Ok(if report.any_errored() {
        Exit::Failed
    } else {
        Exit::Ok
    })
}
