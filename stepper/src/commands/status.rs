//! `status`: the guarded StatefulSets with their next step or first blocking gate, as a table or as
//! the versioned document of `-o json|yaml` ([`crate::plan::set_status`]).
//!
//! Scope as `kubectl get`: one named set, the current namespace, `-n`'s, or `-A` every namespace.
//! Columns: partition, updated/ready/replicas, revisions, health, next action. Below the table, the
//! health message of each set that is not Healthy or is unguarded (no guarded mark, so judged by the
//! built-in rule: `unguarded (no <prefix>/guarded mark): …`) ([`crate::rollout::health`]: what Argo CD
//! and Flux report with `deploy/gitops/`), where each set with a canary plan stands against it
//! ([`pause_plan::describe`]), then the stuck pods ([`crate::gates::recovery`]) and what recovery
//! does with them.

use anyhow::{Context as _, Result, bail};
use jiff::Timestamp;
use k8s_openapi::api::apps::v1::StatefulSet;
use sts_safe_rollout_rules::annotations as names;

use super::checks::{check_options, checks};
use super::context::{Context, Exit, Listing, pod_reads_of};
use super::heartbeat::heartbeats;
use super::status_view;
use super::table::{sections, table};
use crate::cli::namespace::query_namespaces;
use crate::cli::{OutputFormat, StatusArgs, Target};
use crate::cluster::kube::MANAGER;
use crate::cluster::{AllProbes, Checks, Cluster};
use crate::config::Served;
use crate::gates::UNMARKED;
use crate::gates::Verdict;
use crate::model;
use crate::pass::{self, PassOptions};
use crate::plan::set_status::{PausePlanDoc, RecordDoc, RolloutStatus, RolloutStatusList};
use crate::rollout::health::health;
use crate::rollout::local_view::missing_flags;
use crate::rollout::pause_plan;
use crate::rollout::record::{freshness, record};

/// Prints the table, or the document of `-o`.
///
/// # Errors
/// `-A` with a named set, an ambiguous namespace, a failed LIST, or the target not found.
pub async fn run(ctx: &Context, args: &StatusArgs) -> Result<Exit> {
    let target = match &args.target {
        Some(_) if args.scope.all_namespaces => {
            bail!("a StatefulSet cannot be named across all namespaces (-A): name it, or drop -A")
        }
        Some(t) => Some(ctx.target(t)?),
        None => None,
    };
    let namespaces = query_namespaces(
        &ctx.global.namespaces,
        args.scope.all_namespaces,
        &ctx.namespace,
    );
    let cluster = match &target {
        Some(t) => ctx.cluster_of(t, Listing::TargetNamespace),
        None => ctx.cluster_over(namespaces.clone(), args.scope.selector.clone()),
    };
    let checks = checks(&args.checks)?;
    // `status` predicts what a stepper with stuck-pod recovery on would do with a stuck pod.
    let mut opts = ctx.pass_options(pod_reads_of(target.as_ref()), &args.gates, None, false);
    opts.gates.recover_stuck_pods = true;
    check_options(&args.checks, &checks, &mut opts);
    // `status` only reads: a webhook call asks the application to act. It shows the last answer.
    opts.probes.call_webhooks = false;
    // A machine with no --http-check (no webhook) at all judges none of those checks here
    // (`localView.missingFlags` says so), rather than call them an InvalidAnnotation the in-cluster
    // stepper, which has the flags, never sees; with some, a name it lacks is judged as the stepper would.
    opts.gates.served.forget_empty();
    let local = checks.served();
    let now = Timestamp::now();
    let mut items =
        status_items_with(&cluster, &checks, &opts, target.as_ref(), &local, now).await?;
    // The stepper's signs of life, only when there is a record to judge.
    let (beats, unknown) = if items.is_empty() {
        (Vec::new(), "no StatefulSet listed".to_string())
    } else {
        heartbeats(&ctx.client, &args.record.stepper_namespace).await
    };
    let fresh = freshness(&beats, &unknown, now, args.record.stale_after);
    for item in &mut items {
        item.recorded.judge(&fresh, now, args.record.stale_after);
    }
    match args.output {
        Some(OutputFormat::Json) => {
            let doc = RolloutStatusList::new(items);
            println!(
                "{}",
                serde_json::to_string_pretty(&doc).context("encoding JSON")?
            );
        }
        Some(OutputFormat::Yaml) => {
            let doc = RolloutStatusList::new(items);
            print!(
                "{}",
                serde_saphyr::to_string(&doc).context("encoding YAML")?
            );
        }
        None if items.is_empty() => {
            let place = match namespaces.as_slice() {
                [] => "any namespace".to_string(),
                [one] => format!("namespace {one}"),
                many => format!("namespaces {}", many.join(", ")),
            };
            eprintln!("No guarded StatefulSets found in {place}.");
        }
        None => print!(
            "{}",
            status_view::render(
                &items,
                &status_view::View {
                    local: args.record.local,
                    freshness: fresh.describe(now, args.record.stale_after),
                },
                opts.gates.recover_stuck_pods,
                opts.gates.keys.of(names::PAUSE_AT)
            )
        ),
    }
    Ok(Exit::Ok)
}

/// The `status` table for the StatefulSets `cluster` lists (guarded ones only, unless `target` names
/// one): partition, updated/ready/replicas, revisions, health ([`health`]), and the next step or the
/// first blocking gate; below it, the health message of each set shown that is not Healthy or is
/// unguarded. No check is configured ([`Checks::default`]: every check's read is an error).
///
/// # Errors
/// A failed LIST, or `target` not found.
pub async fn status_table<C: Cluster>(
    cluster: &C,
    opts: &PassOptions,
    target: Option<&Target>,
    now: Timestamp,
) -> Result<String> {
    status_table_with(cluster, &Checks::default(), opts, target, now).await
}

/// [`status_table`] with the checks' clients `checks` (each I/O gate's reads: [`AllProbes`]; a check
/// runs when due; `status` records nothing).
///
/// # Errors
/// A failed LIST, or `target` not found.
pub async fn status_table_with<C: Cluster, P: AllProbes>(
    cluster: &C,
    checks: &P,
    opts: &PassOptions,
    target: Option<&Target>,
    now: Timestamp,
) -> Result<String> {
    let items = status_items(cluster, checks, opts, target, now).await?;
    Ok(render(
        &items,
        opts.gates.recover_stuck_pods,
        opts.gates.keys.of(names::PAUSE_AT),
    ))
}

/// The status of the StatefulSets `cluster` lists, in namespace/name order: the guarded ones, or the
/// one `target` names (guarded or not). Stuck pods are judged as `opts.gates.recover_stuck_pods` says.
///
/// # Errors
/// A failed LIST, or `target` not found.
pub async fn status_items<C: Cluster, P: AllProbes>(
    cluster: &C,
    checks: &P,
    opts: &PassOptions,
    target: Option<&Target>,
    now: Timestamp,
) -> Result<Vec<RolloutStatus>> {
    status_items_with(cluster, checks, opts, target, &Served::default(), now).await
}

/// [`status_items`] judged by a machine with the check flags `local` (each item's
/// `localView.missingFlags`), with each set's record ([`record`]; freshness not judged yet).
///
/// # Errors
/// A failed LIST, or `target` not found.
pub async fn status_items_with<C: Cluster, P: AllProbes>(
    cluster: &C,
    checks: &P,
    opts: &PassOptions,
    target: Option<&Target>,
    local: &Served,
    now: Timestamp,
) -> Result<Vec<RolloutStatus>> {
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
    let plans = pass::plan_pass(cluster, checks, &snap, opts, now).await;
    let mut items: Vec<RolloutStatus> = snap
        .statefulsets
        .iter()
        .zip(&plans)
        .filter(|(set, p)| {
            is_target(&p.namespace, &p.name)
                && (target.is_some()
                    || !matches!(p.verdict, Verdict::Unguarded(_))
                    || staged_unmarked(set, &p.verdict))
        })
        .map(|(set, p)| {
            let mut item = RolloutStatus::of(p, p.recovery.as_deref(), &health(set, &p.config));
            item.pause_plan = p.config.pause_at.as_ref().and_then(|plan| {
                Some(PausePlanDoc {
                    written: pause_plan::written(plan),
                    state: pause_plan::describe(set, &p.config, now)?,
                })
            });
            item.recorded = RecordDoc::of(&record(set, &p.config, MANAGER), now);
            item.local_view.missing_flags = missing_flags(&p.config, local);
            item
        })
        .collect();
    items.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    Ok(items)
}

/// The local view's table of `items` (NEXT: the gates evaluated here), then [`sections`].
fn render(items: &[RolloutStatus], recovery_on: bool, pause_at_key: &str) -> String {
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
    rows.extend(items.iter().map(RolloutStatus::row));
    let mut out = table(&rows);
    out.push_str(&sections(items, recovery_on, pause_at_key));
    out
}

/// True for a set the stepper leaves alone for want of the policy's mark ([`UNMARKED`]) while an update
/// is staged behind its partition (a person's canary, a set the policy does not cover): `status` lists
/// it, saying why the stepper does not step it, where it leaves idle unmarked sets out.
fn staged_unmarked(set: &StatefulSet, verdict: &Verdict) -> bool {
    *verdict == Verdict::Unguarded(UNMARKED)
        && model::set::has_staged_update(set)
        && model::set::partition(set).unwrap_or(0) > 0
}
