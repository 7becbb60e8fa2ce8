//! `once`: one pass over the StatefulSets in scope, then exit (a CronJob's command).

use anyhow::Result;

use super::{Context, Exit, timed_pass};
use crate::pass::PodReads;

/// Runs one pass; [`Exit::Failed`] when an API error blocked some set.
///
/// # Errors
/// A failed LIST (nothing was written).
pub async fn run(ctx: &Context) -> Result<Exit> {
    let cluster = ctx.cluster(None);
    let opts = ctx.pass_options(PodReads::Candidates);
    let report = timed_pass(&cluster, &ctx.prometheus, &opts, None).await?;
    Ok(if report.any_errored() {
        Exit::Failed
    } else {
        Exit::Ok
    })
}
