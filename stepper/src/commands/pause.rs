//! `pause NAME --reason TEXT`: hold a rollout, as `kubectl rollout pause` does for a
//! Deployment; who and why go into `<prefix>/paused-reason` and a `RolloutPaused` Event.

use std::sync::Arc;

use anyhow::{Result, bail};
use k8s_openapi::api::apps::v1::StatefulSet;

use super::context::{Context, Exit, Listing};
use super::target::{target_set, whoami};
use crate::cli::{PauseArgs, Target};
use crate::cluster::{Cluster, PatchOutcome};
use crate::config::Keys;
use crate::model::set;
use crate::plan::events::EventNote;
use crate::plan::pause::pause_patch;

/// Pauses the target and prints what it did.
///
/// # Errors
/// See [`pause_set`].
pub async fn run(ctx: &Context, args: &PauseArgs) -> Result<Exit> {
    let target = ctx.target(&args.target)?;
    let cluster = ctx.cluster_of(&target, Listing::OnlyTarget);
    let who = whoami(cluster.client()).await;
    let keys = ctx.keys.clone();
    let done = pause_set(&cluster, &keys, &target, &who, &args.reason, args.dry_run).await?;
    println!("{done}");
    Ok(Exit::Ok)
}

/// Applies a pause or resume `patch` to `target` and publishes `event` once it is applied; with
/// `dry_run` writes nothing. Returns the line to print.
///
/// # Errors
/// A failed PATCH, or a `test` op that no longer holds (the set changed since it was read: run again).
pub(super) async fn apply<C: Cluster>(
    cluster: &C,
    set: &StatefulSet,
    patch: &json_patch::Patch,
    event: &EventNote,
    dry_run: bool,
) -> Result<String> {
    let target = format!(
        "{}/{}",
        set.metadata.namespace.as_deref().unwrap_or(""),
        set::name(set)
    );
    if dry_run {
        return Ok(format!(
            "{target}: would {} (dry run): {}",
            event.action.to_lowercase(),
            event.note
        ));
    }
    let ns = set.metadata.namespace.as_deref().unwrap_or("");
    match cluster.patch_statefulset(ns, set::name(set), patch).await? {
        PatchOutcome::Applied(_) => {}
        PatchOutcome::Conflict(msg) => {
            bail!("{target} changed while being written ({msg}); run the command again")
        }
    }
    if let Err(e) = cluster.publish_event(&set::reference(set), event).await {
        tracing::warn!(error = %e, "{} event not published", event.reason);
    }
    Ok(format!("{target}: {}", event.note))
}

/// `pause`: sets `paused: "true"` and `paused-reason` on `target` (the only set `cluster` lists) in
/// one JSON Patch, then a `RolloutPaused` Event naming `who` and `reason`. Pausing a paused set
/// replaces its reason.
///
/// # Errors
/// As `target_set` and `apply`.
pub async fn pause_set<C: Cluster>(
    cluster: &C,
    keys: &Arc<Keys>,
    target: &Target,
    who: &str,
    reason: &str,
    dry_run: bool,
) -> Result<String> {
    let (set, config) = target_set(cluster, keys, target).await?;
    let patch = pause_patch(&set, &config, who, reason);
    apply(
        cluster,
        &set,
        &patch,
        &EventNote::paused_by(who, reason),
        dry_run,
    )
    .await
}
