//! `release NAME|-A`: hand StatefulSets back to the native rolling update ([`crate::plan::release`]),
//! the last step of an uninstall, once the policy is gone, nothing is staged (`wait`) and the stepper is
//! gone (docs/install.md, "Uninstall"). One LIST; per set at most two PATCHes (the partition, then the
//! annotations), each pinned by `test` ops; `--dry-run` writes nothing. With `--wait`, the LISTs of
//! [`super::wait_staged`] first, until nothing in scope is staged: then nothing is forced.

use std::sync::Arc;

use anyhow::{Result, bail};
use jiff::Timestamp;
use k8s_openapi::api::apps::v1::StatefulSet;

use super::context::{Context, Exit, Listing};
use super::wait_staged::{Patience, Waited, scope_words, timed_out_lines, wait_none_staged};
use crate::cli::namespace::query_namespaces;
use crate::cli::{ReleaseArgs, Target};
use crate::cluster::{Cluster, PatchOutcome};
use crate::config::{Keys, SetConfig};
use crate::model::set;
use crate::plan::release::{Lower, ReleasePlan, cleanup_patch, lower_patch, release_plan};

/// Releases the sets the flags name and prints one line per set; [`Exit::Failed`] when a set was
/// not released (staged without `--force`, or a write that failed).
///
/// # Errors
/// `-A` with a named set, an ambiguous namespace, a failed LIST, or the named set not found.
pub async fn run(ctx: &Context, args: &ReleaseArgs) -> Result<Exit> {
    let target = match &args.target {
        Some(_) if args.all_namespaces => {
            bail!("a StatefulSet cannot be named across all namespaces (-A): name it, or drop -A")
        }
        Some(t) => Some(ctx.target(t)?),
        None => None,
    };
    let namespaces = match &target {
        Some(t) => vec![t.namespace.clone()],
        None => query_namespaces(&ctx.global.namespaces, args.all_namespaces, &ctx.namespace),
    };
    let cluster = match &target {
        Some(t) => ctx.cluster_of(t, Listing::OnlyTarget),
        None => ctx.cluster_over(namespaces.clone(), args.selector.clone()),
    };
    if args.wait {
        let patience = Patience {
            timeout: args.timeout,
            poll: args.poll,
        };
        if let Waited::TimedOut(staged) = wait_none_staged(&cluster, &ctx.keys, patience).await? {
            let selector = target
                .is_none()
                .then_some(args.selector.as_deref())
                .flatten();
            let scope = scope_words(&namespaces, selector);
            for line in timed_out_lines(&staged, args.timeout, &scope) {
                println!("{line}");
            }
            println!("Nothing released: release --wait never forces.");
            return Ok(Exit::Failed);
        }
    }
    let how = How {
        force: args.force,
        dry_run: args.dry_run,
    };
    let report = release_sets(&cluster, &ctx.keys, target.as_ref(), how, Timestamp::now()).await?;
    for line in &report.lines {
        println!("{line}");
    }
    Ok(if report.not_released > 0 {
        Exit::Failed
    } else {
        Exit::Ok
    })
}

/// `--force` and `--dry-run`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct How {
    /// Release a staged set too.
    pub force: bool,
    /// Write nothing.
    pub dry_run: bool,
}

/// What `release` did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReleaseReport {
    /// One line per set it acted on or refused (a set with nothing to release is named only when
    /// it was named).
    pub lines: Vec<String>,
    /// Sets released (or that would be, with `--dry-run`).
    pub released: usize,
    /// Sets not released: staged without `--force`, or a write that failed or lost a race.
    pub not_released: usize,
}

/// Releases the sets `cluster` lists (`target`: the one named, which must exist) as `how` says, at
/// `now` (the stamp of a lowered partition).
///
/// # Errors
/// A failed LIST, or `target` not found.
pub async fn release_sets<C: Cluster>(
    cluster: &C,
    keys: &Arc<Keys>,
    target: Option<&Target>,
    how: How,
    now: Timestamp,
) -> Result<ReleaseReport> {
    let mut sets = cluster.list_statefulsets().await?;
    if let Some(t) = target {
        sets.retain(|s| s.metadata.name.as_deref() == Some(t.name.as_str()));
        if sets.is_empty() {
            bail!("statefulset {t} not found");
        }
    }
    sets.sort_by(|a, b| {
        (&a.metadata.namespace, &a.metadata.name).cmp(&(&b.metadata.namespace, &b.metadata.name))
    });
    let mut report = ReleaseReport::default();
    for set in &sets {
        let config = SetConfig::parse(set, keys);
        let name = format!(
            "{}/{}",
            set.metadata.namespace.as_deref().unwrap_or(""),
            set::name(set)
        );
        match release_plan(set, &config, how.force) {
            ReleasePlan::Nothing if target.is_some() => report.lines.push(format!(
                "{name}: nothing to release: no partition above 0, no annotation of the stepper or the policy"
            )),
            ReleasePlan::Nothing => {}
            ReleasePlan::NeedsForce(why) => {
                report.not_released += 1;
                report.lines.push(format!("{name}: not released: {why}"));
            }
            ReleasePlan::Release { lower, annotations } => {
                let what = describe(lower.as_ref(), &annotations);
                if how.dry_run {
                    report.released += 1;
                    report
                        .lines
                        .push(format!("{name}: would release (dry run): {what}"));
                    continue;
                }
                match write(cluster, set, &config, lower.as_ref(), keys, now).await {
                    Ok(()) => {
                        report.released += 1;
                        report.lines.push(format!("{name}: released: {what}"));
                    }
                    Err(why) => {
                        report.not_released += 1;
                        report.lines.push(format!("{name}: not released: {why}"));
                    }
                }
            }
        }
    }
    Ok(report)
}

/// The partition's PATCH (when `lower`), then the annotations' PATCH on the object it returned.
/// Returns why it stopped, for the line of the set.
async fn write<C: Cluster>(
    cluster: &C,
    set: &StatefulSet,
    config: &SetConfig,
    lower: Option<&Lower>,
    keys: &Keys,
    now: Timestamp,
) -> Result<(), String> {
    let ns = set.metadata.namespace.as_deref().unwrap_or("");
    let name = set::name(set);
    let mut stored = set.clone();
    if let Some(l) = lower {
        match cluster
            .patch_statefulset(ns, name, &lower_patch(set, config, l, now))
            .await
        {
            Ok(PatchOutcome::Applied(s)) => stored = *s,
            Ok(PatchOutcome::Conflict(msg)) => {
                return Err(format!(
                    "it changed since it was read ({msg}); nothing written, run release again"
                ));
            }
            Err(e) => return Err(format!("{e}; nothing written")),
        }
    }
    let Some(patch) = cleanup_patch(&stored, keys) else {
        return Ok(());
    };
    let done = if lower.is_some() {
        "the partition is 0 already; "
    } else {
        ""
    };
    match cluster.patch_statefulset(ns, name, &patch).await {
        Ok(PatchOutcome::Applied(_)) => Ok(()),
        Ok(PatchOutcome::Conflict(msg)) => Err(format!(
            "{done}its annotations changed since they were read ({msg}); run release again"
        )),
        Err(e) => Err(format!("{done}its annotations were not removed: {e}")),
    }
}

/// `partition 5→0 (…); 6 annotations removed: a, b` in words.
fn describe(lower: Option<&Lower>, annotations: &[(String, String)]) -> String {
    let partition = lower.map(|l| match &l.rolls {
        None => format!("partition {}→0 (nothing staged, nothing rolls)", l.from),
        Some(what) => format!(
            "partition {}→0: the StatefulSet controller now replaces {what}, natively, without the gates",
            l.from
        ),
    });
    let removed = (!annotations.is_empty()).then(|| {
        let keys: Vec<&str> = annotations.iter().map(|(k, _)| k.as_str()).collect();
        format!(
            "{} annotations removed: {}",
            annotations.len(),
            keys.join(", ")
        )
    });
    [partition, removed]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join("; ")
}
