//! Gate `Throttled`: the fleet's step budget over all sets in scope.
//!
//! `--max-steps-per-pass` and `--max-steps-per-minute`, counted from the sets' `recent-steps` /
//! `last-partition-update` stamps.

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::apps::v1::StatefulSet;

use super::options::GateOptions;
use crate::config::SetConfig;
use crate::model::reasons::{Blocked, Reason};
use crate::model::set;

/// What blocks, in `sts-stepper --help`'s words ([`crate::gates::help`]).
pub const HELP: &str = "--max-steps-per-pass / --max-steps-per-minute spent (the whole fleet)";

/// The times of the set's steps later than `since`: from `<prefix>/recent-steps` when the set carries
/// it (unreadable entries skipped), else its `<prefix>/last-partition-update` alone.
pub fn recent_steps(config: &SetConfig, since: Timestamp) -> Vec<Timestamp> {
    let stamps = &config.stamps;
    let mut times: Vec<Timestamp> = match &stamps.recent_steps {
        Some(list) => list.clone(),
        None => stamps.last_partition_update.into_iter().collect(),
    };
    times.retain(|t| *t > since);
    times
}

/// How many steps the StatefulSets of `configs` took in the last 60 seconds before `now` (later than
/// `now − 60 s`), by [`recent_steps`]. A count.
pub fn steps_in_last_minute<'a>(
    configs: impl IntoIterator<Item = &'a SetConfig>,
    now: Timestamp,
) -> u32 {
    let since = now - SignedDuration::from_secs(60);
    let n: usize = configs
        .into_iter()
        .map(|c| recent_steps(c, since).len())
        .sum();
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// How many sets may step in this pass: `min(max_steps_per_pass, max_steps_per_minute − recent)`
/// (unset = unlimited, `usize::MAX`), `recent` from [`steps_in_last_minute`]. A count of sets; 0 means
/// every set is `Throttled` whatever its pods.
pub fn budget(opts: &GateOptions, recent: u32) -> usize {
    let per_pass = opts.max_steps_per_pass.map_or(usize::MAX, |n| n as usize);
    let per_minute = opts
        .max_steps_per_minute
        .map_or(usize::MAX, |n| n.saturating_sub(recent) as usize);
    per_pass.min(per_minute)
}

/// The detail of a `Throttled` block: which flag spends the budget, and how.
pub fn detail(opts: &GateOptions, recent: u32) -> String {
    let per_pass = opts.max_steps_per_pass.map_or(usize::MAX, |n| n as usize);
    let per_minute = opts
        .max_steps_per_minute
        .map_or(usize::MAX, |n| n.saturating_sub(recent) as usize);
    if per_pass <= per_minute {
        format!(
            "--max-steps-per-pass {}: {per_pass} sets step first in this pass",
            opts.max_steps_per_pass.unwrap_or_default()
        )
    } else {
        format!(
            "--max-steps-per-minute {}: {recent} steps in the last 60s, {} more in this pass",
            opts.max_steps_per_minute.unwrap_or_default(),
            per_pass.min(per_minute)
        )
    }
}

/// The fleet's step budget (gate `Throttled`, moco#572: an operator upgrade must not restart every
/// database at once). `steps` are the sets whose own gates all passed, with their snapshot index;
/// `recent` the steps already taken in the last minute ([`steps_in_last_minute`]). The budget is
/// `min(max_steps_per_pass, max_steps_per_minute − recent)` (unset = unlimited); it goes to started
/// rollouts first (finish what is half done), then by namespace and name. Returns the sets beyond it,
/// each with its `Throttled` block.
pub fn throttle(
    steps: &[(usize, &StatefulSet)],
    opts: &GateOptions,
    recent: u32,
) -> Vec<(usize, Blocked)> {
    let budget = budget(opts, recent);
    let mut order: Vec<&(usize, &StatefulSet)> = steps.iter().collect();
    order.sort_by_key(|(_, s)| {
        (
            !set::rollout_started(s),
            s.metadata.namespace.as_deref(),
            s.metadata.name.as_deref(),
        )
    });
    let detail = detail(opts, recent);
    order
        .into_iter()
        .skip(budget)
        .map(|(i, _)| (*i, Blocked::new(Reason::Throttled, detail.clone())))
        .collect()
}
