//! `step`: one step of one named StatefulSet now, through the gates or past them with `--force`.
//!
//! A forced step needs `--reason` and is recorded in a `ForcedStep` Event naming who and why.

use anyhow::{Context as _, Result, bail};
use jiff::Timestamp;
use tracing::warn;

use super::checks::{check_options, checks};
use super::context::{Context, Exit, Listing, pod_reads_of};
use super::pass_log::log_set;
use super::target::{target_set, whoami};
use crate::cli::{StepArgs, Target};
use crate::cluster::kube::MANAGER;
use crate::cluster::{AllProbes, Checks, Cluster};
use crate::gates::{Idle, Verdict, pause_points};
use crate::pass::{self, Outcome, PassOptions, SetReport};
use crate::plan::events::EventNote;
use crate::plan::set_write::{SetWrite, SpecWrite};
use crate::plan::{canary, patch};
use crate::rollout::local_view::{missing_flags, step_note};
use crate::rollout::record::record;

/// Takes the step and prints its outcome; [`Exit::Failed`] unless the set stepped (or would have).
///
/// # Errors
/// `--force` without `--reason`, and the errors of [`step_once`].
pub async fn run(ctx: &Context, args: &StepArgs) -> Result<Exit> {
    let target = ctx.target(&args.target)?;
    let cluster = ctx.cluster_of(&target, Listing::TargetNamespace);
    let checks = &checks(&args.checks)?;
    let mut opts = ctx.pass_options(pod_reads_of(Some(&target)), &args.gates, None, args.dry_run);
    check_options(&args.checks, checks, &mut opts);
    let force = match (args.force, &args.reason) {
        (true, Some(reason)) => Some(Forced {
            who: whoami(cluster.client()).await,
            reason: reason.clone(),
        }),
        (true, None) => bail!("--force needs --reason TEXT"),
        (false, _) => None,
    };
    // A forced step asks no one: the application is not called about a step it cannot stop.
    opts.probes.call_webhooks &= force.is_none();
    if force.is_none() {
        eprintln!("{}", judgement_note(ctx, &target, checks).await?);
    }
    let report = step_once_with(
        &cluster,
        checks,
        &opts,
        &target,
        force.as_ref(),
        Timestamp::now(),
    )
    .await?;
    log_set(&report);
    println!("{target}: {}", report.outcome);
    Ok(match report.outcome {
        Outcome::Stepped { .. } | Outcome::WouldStep { .. } => Exit::Ok,
        _ => Exit::Failed,
    })
}

/// What a step without `--force` judges here and what it cannot ([`step_note`]), with the record of
/// the in-cluster stepper on `target` (one more read of the set).
///
/// # Errors
/// A failed LIST, or the set not found.
async fn judgement_note(ctx: &Context, target: &Target, checks: &Checks) -> Result<String> {
    let cluster = ctx.cluster_of(target, Listing::OnlyTarget);
    let (set, config) = target_set(&cluster, &ctx.keys, target).await?;
    let missing = missing_flags(&config, &checks.served());
    let recorded = record(&set, &config, MANAGER).summary(Timestamp::now());
    Ok(step_note(&missing, &recorded))
}

/// Who forces a step, and why (`step --force --reason`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Forced {
    /// The requester: the API server's SelfSubjectReview username and the local user.
    pub who: String,
    /// `--reason`.
    pub reason: String,
}

/// `step`: plans `target` (the only set `cluster` lists) and takes one step now with the stepper's
/// own patch shape. Without `force` the gates apply; with it a blocked step is taken anyway and a
/// `ForcedStep` Event records who and why. Honours `opts.dry_run`. No check is configured
/// ([`Checks::default`]): a set whose step needs a check's read is held.
///
/// # Errors
/// A failed LIST; the set not found, not guarded, with nothing staged, at partition 0, blocked
/// (without `force`), or with an unreadable `<prefix>/step`.
pub async fn step_once<C: Cluster>(
    cluster: &C,
    opts: &PassOptions,
    target: &Target,
    force: Option<&Forced>,
    now: Timestamp,
) -> Result<SetReport> {
    step_once_with(cluster, &Checks::default(), opts, target, force, now).await
}

/// [`step_once`] with the checks' clients `checks` (each I/O gate's reads: [`AllProbes`]). The
/// fleet's step budget (`Throttled`) does not apply to a person's step.
///
/// # Errors
/// As [`step_once`].
pub async fn step_once_with<C: Cluster, P: AllProbes>(
    cluster: &C,
    checks: &P,
    opts: &PassOptions,
    target: &Target,
    force: Option<&Forced>,
    now: Timestamp,
) -> Result<SetReport> {
    let snap = crate::pass::reads::snapshot(cluster, opts, now).await?;
    let Some(index) = snap.statefulsets.iter().position(|s| {
        s.metadata.namespace.as_deref() == Some(target.namespace.as_str())
            && s.metadata.name.as_deref() == Some(target.name.as_str())
    }) else {
        bail!("statefulset {target} not found");
    };
    // Never forced on pods that could not be read.
    if let Some(failure) = snap.read_failures.get(&index) {
        bail!("{target} not stepped: {failure}");
    }
    let set = &snap.statefulsets[index];
    let mut unthrottled = opts.clone();
    unthrottled.gates.max_steps_per_pass = None;
    unthrottled.gates.max_steps_per_minute = None;
    let mut p = pass::plan_pass(cluster, checks, &snap, &unthrottled, now)
        .await
        .into_iter()
        .nth(index)
        .context("no plan for the statefulset")?;
    let mut forced_note = None;
    match (&p.verdict, force) {
        (Verdict::Step { .. }, _) => {}
        (Verdict::Unguarded(why), _) => bail!("{target} is not guarded ({why}): nothing to step"),
        (Verdict::Idle(Idle::UpToDate), _) => bail!("{target}: no staged update, nothing to step"),
        (Verdict::Idle(Idle::PartitionZero), _) => {
            bail!("{target}: partition is already 0, the controller finishes the rollout")
        }
        (Verdict::Blocked(b), None) => bail!(
            "{target} not stepped: {b} (wait for the gate, or step anyway with --force --reason TEXT)"
        ),
        (Verdict::Blocked(b), Some(forced)) => {
            let next = match p.next_step() {
                Some(Ok(next)) => next,
                Some(Err(why)) => bail!("{target}: {why}"),
                None => bail!("{target}: no step to force"),
            };
            forced_note = Some(EventNote::forced(
                next.from,
                next.to,
                b,
                &forced.who,
                &forced.reason,
            ));
            let mut write = SetWrite {
                spec: SpecWrite::Step {
                    from: next.from,
                    to: next.to,
                    update_revision: next.update_revision.clone(),
                },
                annotations: patch::step_changes(set, &p.config, &next.update_revision, now)
                    .into_iter()
                    .collect(),
                ..SetWrite::default()
            };
            // A forced step never jumps a pause point either (`next.to` is clamped), and one that
            // reaches a point pauses there in the same patch.
            if let Some(effect) = pause_points::step_effect(set, &p.config, next.to, now) {
                let w = canary::writes(set, &p.config, &effect);
                write.annotations.extend(w.changes);
                write.pins = w.pins;
                write.events = w.events;
            }
            p.write = write;
            p.verdict = Verdict::Step {
                from: next.from,
                to: next.to,
                update_revision: next.update_revision,
            };
        }
    }
    let reference = p.reference();
    let report = pass::execute(cluster, p, opts.dry_run).await;
    if let (Outcome::Stepped { .. }, Some(note)) = (&report.outcome, &forced_note)
        && let Err(e) = cluster.publish_event(&reference, note).await
    {
        warn!(error = %e, "ForcedStep event not published");
    }
    Ok(report)
}
