//! `wait`: polls one StatefulSet until its rollout is complete or the timeout passes; without a name,
//! every set in scope until none is staged ([`super::wait_staged`]).
//!
//! "Complete" is [`crate::rollout::complete::rollout_complete`]; "staged" is
//! [`crate::rollout::staged::is_staged`].

use std::time::Instant;

use anyhow::{Result, bail};
use jiff::Timestamp;
use tracing::info;

use super::context::{Context, Exit, Listing, pod_reads_of, to_std};
use super::wait_staged::{Patience, Waited, scope_words, timed_out_lines, wait_none_staged};
use crate::cli::namespace::query_namespaces;
use crate::cli::{Target, WaitArgs};
use crate::cluster::Cluster;
use crate::model::pods::{PdbView, pods_by_ordinal};
use crate::model::reasons::Blocked;
use crate::model::set;
use crate::pass::PassOptions;
use crate::rollout::complete::rollout_complete;

/// `wait`'s check: `Ok(Ok(summary))` when the rollout of `target` is complete
/// ([`rollout_complete`]), `Ok(Err(blocked))` with what it still waits for.
///
/// # Errors
/// A failed LIST (of the set, its pods or its PDBs), or the set not found.
pub async fn check_complete<C: Cluster>(
    cluster: &C,
    opts: &PassOptions,
    target: &Target,
    now: Timestamp,
) -> Result<Result<String, Blocked>> {
    let snap = crate::pass::reads::snapshot(cluster, opts, now).await?;
    let Some(set) = snap.statefulsets.first() else {
        bail!("statefulset {target} not found");
    };
    if let Some(failure) = snap.read_failures.values().next() {
        bail!("{failure}");
    }
    let by_ordinal = pods_by_ordinal(set, snap.pods.iter());
    let views: Vec<PdbView<'_>> = snap.pdbs.iter().map(PdbView::new).collect();
    Ok(
        rollout_complete(set, &by_ordinal, &views, &opts.gates, now).map(|()| {
            format!(
                "rollout complete: {} pods on {}, all Ready",
                set::replicas(set),
                set.status
                    .as_ref()
                    .and_then(|s| s.update_revision.as_deref())
                    .unwrap_or("-")
            )
        }),
    )
}

/// Waits; prints the summary, or what it still waits for at the timeout ([`Exit::Failed`]).
///
/// # Errors
/// `-A` or `-l` with a name, an ambiguous namespace, a failed LIST, or the set not found.
pub async fn run(ctx: &Context, args: &WaitArgs) -> Result<Exit> {
    let Some(target) = &args.target else {
        return run_scope(ctx, args).await;
    };
    if args.scope.all_namespaces {
        bail!("a StatefulSet cannot be named across all namespaces (-A): name it, or drop -A");
    }
    if args.scope.selector.is_some() {
        bail!(
            "-l/--selector chooses the sets to wait for when none is named: name one, or drop -l"
        );
    }
    let target = ctx.target(target)?;
    let cluster = ctx.cluster_of(&target, Listing::OnlyTarget);
    let opts = ctx.pass_options(pod_reads_of(Some(&target)), &args.gates, None, false);
    let started = Instant::now();
    let mut last_reason = String::new();
    loop {
        match check_complete(&cluster, &opts, &target, Timestamp::now()).await? {
            Ok(summary) => {
                println!("{target}: {summary}");
                return Ok(Exit::Ok);
            }
            Err(b) => {
                let text = b.to_string();
                if text != last_reason {
                    info!(statefulset = %target, waiting_for = %text, "not complete yet");
                    last_reason = text;
                }
                if started.elapsed() >= to_std(args.timeout) {
                    println!(
                        "{target}: timed out after {}: {b}",
                        jiff::fmt::friendly::SpanPrinter::new().duration_to_string(&args.timeout)
                    );
                    return Ok(Exit::Failed);
                }
            }
        }
        tokio::time::sleep(to_std(args.poll)).await;
    }
}

/// `wait` without a name: until no set in scope is staged; prints that, or at the timeout the sets
/// still staged and what the stepper recorded as holding each ([`Exit::Failed`]).
///
/// # Errors
/// A failed LIST.
async fn run_scope(ctx: &Context, args: &WaitArgs) -> Result<Exit> {
    let namespaces = query_namespaces(
        &ctx.global.namespaces,
        args.scope.all_namespaces,
        &ctx.namespace,
    );
    let scope = scope_words(&namespaces, args.scope.selector.as_deref());
    let cluster = ctx.cluster_over(namespaces, args.scope.selector.clone());
    let patience = Patience {
        timeout: args.timeout,
        poll: args.poll,
    };
    match wait_none_staged(&cluster, &ctx.keys, patience).await? {
        Waited::NoneStaged { listed } => {
            println!("no StatefulSet staged {scope} ({listed} listed): `release` forces nothing");
            Ok(Exit::Ok)
        }
        Waited::TimedOut(staged) => {
            for line in timed_out_lines(&staged, args.timeout, &scope) {
                println!("{line}");
            }
            Ok(Exit::Failed)
        }
    }
}
