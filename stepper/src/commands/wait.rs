//! `wait`: polls one StatefulSet until its rollout is complete or the timeout passes.
//!
//! "Complete" is [`crate::rollout::complete::rollout_complete`].

use std::time::Instant;

use anyhow::{Result, bail};
use jiff::Timestamp;
use tracing::info;

use super::context::{Context, Exit, Listing, pod_reads_of, to_std};
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
/// An ambiguous namespace, a failed LIST, or the set not found.
pub async fn run(ctx: &Context, args: &WaitArgs) -> Result<Exit> {
    let target = ctx.target(&args.target)?;
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
