//! `resume NAME`: undo a pause (a person's or a Prometheus check's), as `kubectl rollout
//! resume` does; who resumed it goes into a `RolloutResumed` Event.

use std::sync::Arc;

use anyhow::Result;

use super::context::{Context, Exit, Listing};
use super::pause::apply;
use super::target::{target_set, whoami};
use crate::cli::{ResumeArgs, Target};
use crate::cluster::Cluster;
use crate::config::Keys;
use crate::plan::events::EventNote;
use crate::plan::pause::{resume_patch, retry_patch};

/// Resumes the target and prints what it did.
///
/// # Errors
/// See [`resume_set`].
pub async fn run(ctx: &Context, args: &ResumeArgs) -> Result<Exit> {
    let target = ctx.target(&args.target)?;
    let cluster = ctx.cluster_of(&target, Listing::OnlyTarget);
    let who = whoami(cluster.client()).await;
    let keys = ctx.keys.clone();
    let done = resume_set(&cluster, &keys, &target, &who, args.retry, args.dry_run).await?;
    println!("{done}");
    Ok(Exit::Ok)
}

/// `resume`: removes `paused`, `paused-reason` and the Prometheus check's counts
/// (`prometheus-check`) from `target` (the only set `cluster` lists) in one JSON Patch that first
/// `test`s each value it read, then a `RolloutResumed` Event naming `who`. A set with none of them is
/// left alone (`… is not paused`). With `retry` (`--retry`), the rollback's record goes too
/// ([`retry_patch`]): the revision the stepper rolled back may be stepped again.
///
/// # Errors
/// As `target_set` and `apply`.
pub async fn resume_set<C: Cluster>(
    cluster: &C,
    keys: &Arc<Keys>,
    target: &Target,
    who: &str,
    retry: bool,
    dry_run: bool,
) -> Result<String> {
    let (set, config) = target_set(cluster, keys, target).await?;
    let patch = if retry {
        retry_patch(&set, &config)
    } else {
        resume_patch(&set, &config)
    };
    let Some(patch) = patch else {
        let what = if retry {
            "paused nor rolled back"
        } else {
            "paused"
        };
        return Ok(format!("{target} is not {what}: nothing to resume"));
    };
    let event = EventNote::resumed(who, config.paused_reason.as_deref());
    apply(cluster, &set, &patch, &event, dry_run).await
}
