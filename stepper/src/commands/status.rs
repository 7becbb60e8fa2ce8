//! `status`: the table of guarded StatefulSets with their next step or first blocking gate.
//!
//! Columns: partition, updated/ready/replicas, revisions, health, next action; one named set, or all in
//! scope. Below the table, the health message of each set that is not Healthy
//! ([`crate::rollout::health`]: what Argo CD and Flux report with `deploy/gitops/`), where each set
//! with a canary plan stands against it ([`pause_plan::describe`]), then the stuck pods
//! ([`crate::gates::recovery`]) and what recovery does with them.

use anyhow::{Result, bail};
use jiff::Timestamp;

use super::{Context, Exit, Listing};
use crate::cli::{StatusArgs, Target};
use crate::cluster::{Cluster, NoPrometheus, Prometheus};
use crate::gates::recovery::Finding;
use crate::gates::{Idle, Verdict};
use crate::pass::recovery;
use crate::pass::{self, PassOptions};
use crate::rollout::health::{HealthStatus, health};
use crate::rollout::pause_plan;

/// One row of the `status` table.
fn next_action(verdict: &Verdict) -> String {
    match verdict {
        Verdict::Step { from, to, .. } => format!("Step {from}→{to} due"),
        Verdict::Blocked(b) => format!("Blocked {b}"),
        Verdict::Idle(Idle::UpToDate) => "Idle: up to date".into(),
        Verdict::Idle(Idle::PartitionZero) => {
            "Rolling: partition 0, the controller finishes".into()
        }
        Verdict::Unguarded(why) => format!("Unguarded ({why})"),
    }
}

/// Prints the table.
///
/// # Errors
/// A failed LIST, or the target not found.
pub async fn run(ctx: &Context, args: &StatusArgs) -> Result<Exit> {
    let cluster = ctx.cluster(args.target.as_ref().map(|t| (t, Listing::TargetNamespace)));
    let prometheus = &ctx.prometheus;
    let opts = ctx.pass_options(super::pod_reads_of(args.target.as_ref()));
    print!(
        "{}",
        status_table_with(
            &cluster,
            prometheus,
            &opts,
            args.target.as_ref(),
            Timestamp::now()
        )
        .await?
    );
    Ok(Exit::Ok)
}

/// The `status` table for the StatefulSets `cluster` lists (guarded ones only, unless `target` names
/// one): partition, updated/ready/replicas, revisions, health ([`health`]), and the next step or the
/// first blocking gate; below it, the health message of each set shown that is not Healthy.
///
/// # Errors
/// A failed LIST, or `target` not found.
pub async fn status_table<C: Cluster>(
    cluster: &C,
    opts: &PassOptions,
    target: Option<&Target>,
    now: Timestamp,
) -> Result<String> {
    status_table_with(cluster, &NoPrometheus, opts, target, now).await
}

/// [`status_table`] with the Prometheus the `PrometheusCheck` gate queries (the check runs when due;
/// `status` records nothing).
///
/// # Errors
/// A failed LIST, or `target` not found.
pub async fn status_table_with<C: Cluster, P: Prometheus>(
    cluster: &C,
    prometheus: &P,
    opts: &PassOptions,
    target: Option<&Target>,
    now: Timestamp,
) -> Result<String> {
    let snap = crate::pass::reads::snapshot(cluster, opts, now).await?;
    let is_target = |namespace: &str, name: &str| {
        target.is_none_or(|t| t.namespace == namespace && t.name == name)
    };
    if let Some(t) = target
        && !snap
            .statefulsets
            .iter()
            .any(|s| s.metadata.name.as_deref() == Some(t.name.as_str()))
    {
        bail!("statefulset {t} not found");
    }
    let plans = pass::plan_pass(cluster, prometheus, &snap, opts, now).await;
    let mut rows = vec![[
        "NAMESPACE".to_string(),
        "STATEFULSET".into(),
        "PARTITION".into(),
        "UPDATED/READY/REPLICAS".into(),
        "CURRENT-REVISION".into(),
        "UPDATE-REVISION".into(),
        "HEALTH".into(),
        "NEXT".into(),
    ]];
    let mut unhealthy = Vec::new();
    for (set, p) in snap.statefulsets.iter().zip(&plans).filter(|(_, p)| {
        is_target(&p.namespace, &p.name)
            && (target.is_some() || !matches!(p.verdict, Verdict::Unguarded(_)))
    }) {
        let f = &p.figures;
        let h = health(set, &p.config);
        if h.status != HealthStatus::Healthy {
            unhealthy.push(format!("  {}/{} {h}\n", p.namespace, p.name));
        }
        rows.push([
            p.namespace.clone(),
            p.name.clone(),
            f.partition.map_or("-".into(), |v| v.to_string()),
            format!("{}/{}/{}", f.updated_replicas, f.ready_replicas, f.replicas),
            f.current_revision.clone().unwrap_or_else(|| "-".into()),
            f.update_revision.clone().unwrap_or_else(|| "-".into()),
            h.status.to_string(),
            next_action(&p.verdict),
        ]);
    }
    let mut out = table(&rows);
    if !unhealthy.is_empty() {
        out.push_str("\nHealth (as Argo CD and Flux report it with deploy/gitops/):\n");
        out.extend(unhealthy);
    }
    let plans_text: Vec<String> = (snap.statefulsets.iter())
        .zip(&plans)
        .filter(|(_, p)| is_target(&p.namespace, &p.name))
        .filter_map(|(set, p)| {
            let text = pause_plan::describe(set, &p.config, now)?;
            let written = pause_plan::written(p.config.pause_at.as_ref()?);
            Some(format!("  {}/{} {written}: {text}\n", p.namespace, p.name))
        })
        .collect();
    if !plans_text.is_empty() {
        out.push_str(&format!("\nPause points ({}):\n", opts.gates.keys.pause_at));
        out.push_str(&plans_text.concat());
    }
    let findings = recovery::findings(&plans);
    let stuck: Vec<_> = findings
        .iter()
        .filter(|(i, _)| is_target(&plans[*i].namespace, &plans[*i].name))
        .collect();
    if !stuck.is_empty() {
        let on = if opts.gates.recover_stuck_pods {
            "on"
        } else {
            "off"
        };
        out.push_str(&format!(
            "\nStuck pods (recovery {on}, --recover-stuck-pods):\n"
        ));
        for (i, f) in stuck {
            out.push_str(&stuck_line(&plans[*i].namespace, &plans[*i].name, f));
        }
    }
    Ok(out)
}

/// One stuck pod of the `status` output: the pod, how long not Ready on which revision, and what
/// recovery does with it.
fn stuck_line(namespace: &str, name: &str, f: &Finding) -> String {
    let p = &f.pod;
    let next = f.action.to_string();
    format!(
        "  {namespace}/{name} {}: not Ready for {}s on revision {}, its ordinal runs {}: {next}\n",
        p.name, p.not_ready_seconds, p.revision, p.expected_revision
    )
}

/// Left-aligned columns separated by two spaces; the last column is not padded.
pub fn table<const N: usize>(rows: &[[String; N]]) -> String {
    let mut widths = [0usize; N];
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i + 1 == N {
                line.push_str(cell);
            } else {
                line.push_str(cell);
                line.push_str(&" ".repeat(widths[i] - cell.chars().count() + 2));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
