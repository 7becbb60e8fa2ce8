//! `wait` without a name, and `release --wait`: the sets in scope polled until none has an update staged
//! behind its partition ([`crate::rollout::staged`]) or the timeout passes. One LIST of StatefulSets per
//! poll and no pod read: what holds each set is what the in-cluster stepper, which finishes them,
//! recorded on it (`blocked-reason`, a pause, `degraded-reason`; docs/annotations.md).

use std::sync::Arc;

use anyhow::Result;
use jiff::{SignedDuration, Timestamp};
use tracing::info;

use super::context::to_std;
use crate::cluster::Cluster;
use crate::cluster::kube::MANAGER;
use crate::config::{Keys, SetConfig};
use crate::rollout::staged::{StillStaged, still_staged};

/// How long to wait, and how often to look.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Patience {
    /// Give up after this long (`--timeout`).
    pub timeout: SignedDuration,
    /// Time between two LISTs (`--poll`).
    pub poll: SignedDuration,
}

/// How a wait for the staged sets ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Waited {
    /// No set in scope is staged (any more); `listed`: how many sets the last LIST returned.
    NoneStaged {
        /// Sets listed by the last poll.
        listed: usize,
    },
    /// The timeout passed with these sets still staged, in namespace/name order.
    TimedOut(Vec<StillStaged>),
}

/// The sets `cluster` lists that are still staged at `now`, and how many it listed.
///
/// # Errors
/// A failed LIST.
pub async fn staged_now<C: Cluster>(
    cluster: &C,
    keys: &Arc<Keys>,
    now: Timestamp,
) -> Result<(usize, Vec<StillStaged>)> {
    let listed = cluster.list_statefulsets().await?;
    let sets: Vec<_> = listed.iter().map(|s| (**s).clone()).collect();
    let configs: Vec<SetConfig> = sets.iter().map(|s| SetConfig::parse(s, keys)).collect();
    Ok((sets.len(), still_staged(&sets, &configs, MANAGER, now)))
}

/// Polls `cluster` every `patience.poll` until none of its sets is staged, or `patience.timeout` has
/// passed since the first LIST (time as tokio keeps it). Logs a line (INFO) per set each time it moves
/// or its recorded gate changes, and when it is staged no more.
///
/// # Errors
/// A failed LIST (the wait stops at once: a scope it cannot read is not "nothing staged").
pub async fn wait_none_staged<C: Cluster>(
    cluster: &C,
    keys: &Arc<Keys>,
    patience: Patience,
) -> Result<Waited> {
    let started = tokio::time::Instant::now();
    let mut last: Vec<(String, String)> = Vec::new();
    loop {
        let (listed, staged) = staged_now(cluster, keys, Timestamp::now()).await?;
        let now_keys: Vec<(String, String)> = staged
            .iter()
            .map(|s| (s.set.clone(), s.progress_key()))
            .collect();
        for (set, _) in last
            .iter()
            .filter(|(s, _)| !staged.iter().any(|n| n.set == *s))
        {
            info!(statefulset = %set, "no longer staged");
        }
        for s in &staged {
            if !last.iter().any(|(_, k)| *k == s.progress_key()) {
                info!(statefulset = %s.set, partition = s.partition, recorded = %s.recorded, "still staged");
            }
        }
        last = now_keys;
        if staged.is_empty() {
            return Ok(Waited::NoneStaged { listed });
        }
        if started.elapsed() >= to_std(patience.timeout) {
            return Ok(Waited::TimedOut(staged));
        }
        tokio::time::sleep(to_std(patience.poll)).await;
    }
}

/// The lines `wait` (and `release --wait`) print when the timeout passed with `staged` still staged in
/// `scope` (words: `in namespace demo`): a heading, one line per set, and what to do.
pub fn timed_out_lines(
    staged: &[StillStaged],
    timeout: SignedDuration,
    scope: &str,
) -> Vec<String> {
    let mut lines = vec![format!(
        "timed out after {}: {} StatefulSet{} still staged {scope}:",
        jiff::fmt::friendly::SpanPrinter::new().duration_to_string(&timeout),
        staged.len(),
        if staged.len() == 1 { "" } else { "s" }
    )];
    lines.extend(staged.iter().map(|s| format!("  {}", s.line())));
    lines.push(
        "Only a lowered partition rolls them on: is the stepper running (`kubectl safe-rollout status -A` \
         says whether its records are current)? Clear the gate it recorded, step a set by hand \
         (`kubectl safe-rollout step`), or wait longer (--timeout)."
            .into(),
    );
    lines
}

/// ` labelled SELECTOR` (the sets' label), then ` in namespace demo`, ` in namespaces a, b`, ` in every
/// namespace`: the scope of a LIST in words (the label first, so it never reads as the namespaces').
pub fn scope_words(namespaces: &[String], selector: Option<&str>) -> String {
    let place = match namespaces {
        [] => "in every namespace".to_string(),
        [one] => format!("in namespace {one}"),
        many => format!("in namespaces {}", many.join(", ")),
    };
    match selector {
        Some(l) => format!("labelled {l}, {place}"),
        None => place,
    }
}
