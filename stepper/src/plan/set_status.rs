//! One StatefulSet's rollout status as `status` shows it: a row of the table, and an item of the
//! versioned document `status -o json|yaml` prints (docs/status-output.md documents every field).
//!
//! The document is a stable interface for scripts: fields are only ever added within one
//! [`API_VERSION`] (a change of meaning or a removal takes a new version). Every field of an item is
//! always present; a value that is not known is `null`.

use jiff::{SignedDuration, Timestamp};
use serde::Serialize;

use crate::gates::recovery::{Action, Finding};
use crate::gates::{Idle, Verdict};
use crate::plan::SetPlan;
use crate::rollout::health::Health;
use crate::rollout::record::{Freshness, Record};

/// The document's `apiVersion`.
pub const API_VERSION: &str = "safe-rollout.dev/v1";
/// The document's `kind`.
pub const LIST_KIND: &str = "RolloutStatusList";

/// What `status -o json|yaml` prints: one [`RolloutStatus`] per StatefulSet, in namespace/name order.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RolloutStatusList {
    /// [`API_VERSION`].
    pub api_version: &'static str,
    /// [`LIST_KIND`].
    pub kind: &'static str,
    /// The StatefulSets.
    pub items: Vec<RolloutStatus>,
}

impl RolloutStatusList {
    /// The document of `items`.
    pub fn new(items: Vec<RolloutStatus>) -> Self {
        RolloutStatusList {
            api_version: API_VERSION,
            kind: LIST_KIND,
            items,
        }
    }
}

/// One StatefulSet's rollout, as read and judged in one pass (counts are pods).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RolloutStatus {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// `spec.updateStrategy.rollingUpdate.partition`; `null` when absent (0 to the controller).
    pub partition: Option<i32>,
    /// `spec.replicas` (default 1).
    pub replicas: i32,
    /// `status.currentReplicas`: pods on `currentRevision`.
    pub current_replicas: i32,
    /// `status.updatedReplicas`: pods on `updateRevision`.
    pub updated_replicas: i32,
    /// `status.readyReplicas`.
    pub ready_replicas: i32,
    /// `status.currentRevision`.
    pub current_revision: Option<String>,
    /// `status.updateRevision`.
    pub update_revision: Option<String>,
    /// `<prefix>/last-partition-update`: the last step (RFC 3339), when readable.
    pub last_partition_update: Option<String>,
    /// What the stepper does next.
    pub verdict: VerdictStatus,
    /// The rollout's health as Argo CD and Flux report it with `deploy/gitops/`
    /// ([`crate::rollout::health`]).
    pub health: HealthDoc,
    /// `<prefix>/paused: "true"`: a person or a failed check holds the rollout.
    pub paused: bool,
    /// `<prefix>/paused-reason`, who paused it and why.
    pub paused_reason: Option<String>,
    /// `<prefix>/degraded-reason`: why the rollout needs a person (`<Kind>: <detail>`, e.g.
    /// `StepRejected: admission webhook "x" denied the request: …`).
    pub degraded_reason: Option<String>,
    /// A pod stuck on a revision its ordinal should no longer run, and what stuck-pod recovery does
    /// with it.
    pub stuck_pod: Option<StuckPodStatus>,
    /// `<prefix>/pause-at`, the canary plan, and where the rollout stands against it; `null` without
    /// a readable plan.
    pub pause_plan: Option<PausePlanDoc>,
    /// What the in-cluster stepper recorded on the set ([`crate::rollout::record`]), and whether that
    /// record is current: the verdict `status` shows first.
    pub recorded: RecordDoc,
    /// What [`RolloutStatus::verdict`], evaluated on the machine running `status`, could not judge there.
    pub local_view: LocalViewDoc,
    /// Not in the document: the health is the built-in rule's, because the set lacks the guarded mark
    /// (`<prefix>/guarded: "true"`) or is `OnDelete` or forced; `health.message` says which, and the
    /// table lists it below even when Healthy.
    #[serde(skip)]
    pub unguarded: bool,
}

/// What the in-cluster stepper recorded on a set ([`crate::rollout::record::Record`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordDoc {
    /// `<prefix>/blocked-reason`: the gate that held the step at the stepper's last announcement.
    pub blocked_reason: Option<String>,
    /// `<prefix>/approval-pending`: what the approval gates wait for.
    pub approval_pending: Option<String>,
    /// `<prefix>/missing-rbac`: an RBAC rule the stepper lacks for this set and the Component that
    /// grants it (checked before it is needed, `plan::rbac`).
    pub missing_rbac: Option<String>,
    /// The stepper's last write to the set (RFC 3339, from its `managedFields` entry); `null` when it
    /// never wrote on it.
    pub written_at: Option<String>,
    /// The record in one line, most urgent first ([`Record::summary`]), e.g. `Blocked PodNotReady
    /// (written 3m ago)`.
    pub summary: String,
    /// `true` when the stepper showed no sign of life within `--stale-after`, `false` when it did,
    /// `null` when that could not be read.
    pub stale: Option<bool>,
    /// The same in words, with the sign of life read ([`Freshness::describe`]).
    pub freshness: String,
}

impl RecordDoc {
    /// The document of `record` at `now`; freshness not judged yet (`stale: null`).
    pub fn of(record: &Record, now: Timestamp) -> Self {
        RecordDoc {
            blocked_reason: record.blocked_reason.clone(),
            approval_pending: record.approval_pending.clone(),
            missing_rbac: record.missing_rbac.clone(),
            written_at: record.written_at.map(|t| t.to_string()),
            summary: record.summary(now),
            stale: None,
            freshness: "not checked".into(),
        }
    }

    /// Records `freshness` (the same for every set of one `status`).
    pub fn judge(&mut self, freshness: &Freshness, now: Timestamp, bound: SignedDuration) {
        self.stale = freshness.stale();
        self.freshness = freshness.describe(now, bound);
    }
}

/// What the local evaluation of the gates could not judge ([`crate::rollout::local_view`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LocalViewDoc {
    /// The flags the machine running `status` lacks for the set's checks, e.g. `--http-check
    /// es-health=URL`; empty when it judges every gate as a stepper configured for them.
    pub missing_flags: Vec<String>,
}

/// A set's canary plan ([`crate::rollout::pause_plan`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PausePlanDoc {
    /// The plan, normalised: `1,60%:30` (points, each a count or a percentage of `spec.replicas`,
    /// optionally with a bake time in seconds).
    pub written: String,
    /// Where the rollout stands, e.g. `next pause at 60% (3 pods), point 2 of 2, bake 30 s` or
    /// `paused at point 2 of 2 (3 of 5 pods), 540 s of bake left`.
    pub state: String,
}

/// A set's rollout health ([`crate::rollout::health::health`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HealthDoc {
    /// `Healthy`, `Progressing`, `Suspended` or `Degraded` (Argo CD's health codes).
    pub status: &'static str,
    /// One line for people, e.g. `stepping: 2 of 5 pods on web-7d7598bf9d, partition 3`.
    pub message: String,
}

/// The verdict of the gates for one set.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VerdictStatus {
    /// `Step` (every gate passes), `Blocked` (a gate fails), `Idle` (nothing to step) or
    /// `Unguarded` (the stepper leaves the set alone).
    #[serde(rename = "type")]
    pub type_: &'static str,
    /// `Blocked`: the gate's reason (`PodNotReady`, …); `Idle`: `UpToDate` or `PartitionZero`;
    /// `Unguarded`: `OnDelete`, `ForceRollingUpdate` or `UnknownUpdateStrategy`; `Step`: `null`.
    pub reason: Option<&'static str>,
    /// One line for people: the gate's detail (`web-1: ContainersNotReady`), the step (`partition
    /// 5→4`), or why the set is idle or unguarded.
    pub message: String,
    /// `Step`: the partition now; else `null`.
    pub from: Option<i32>,
    /// `Step`: the partition after the step; else `null`.
    pub to: Option<i32>,
}

/// A stuck pod ([`crate::gates::recovery`]) and what recovery does with it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StuckPodStatus {
    /// The pod's `metadata.name`.
    pub name: String,
    /// Seconds since it stopped being Ready.
    pub not_ready_seconds: i64,
    /// The revision it runs.
    pub revision: String,
    /// The revision its ordinal should run.
    pub expected_revision: String,
    /// `Delete` (this pass), `Wait` (until it has been not Ready for `recover-after-seconds`) or
    /// `Hold` (not deleted: the message says why), for a stepper with `--recover-stuck-pods`.
    pub recovery: &'static str,
    /// What recovery does, in words (`deleted in 120s`, `not deleted: another pod is down: …`).
    pub recovery_message: String,
}

impl VerdictStatus {
    /// The verdict as the document shows it.
    pub fn of(verdict: &Verdict) -> Self {
        let (type_, reason, message, step) = match verdict {
            Verdict::Step { from, to, .. } => (
                "Step",
                None,
                format!("partition {from}→{to}"),
                Some((*from, *to)),
            ),
            Verdict::Blocked(b) => ("Blocked", Some(b.reason.as_str()), b.detail.clone(), None),
            Verdict::Idle(Idle::UpToDate) => {
                ("Idle", Some("UpToDate"), "up to date".to_string(), None)
            }
            Verdict::Idle(Idle::PartitionZero) => (
                "Idle",
                Some("PartitionZero"),
                "partition 0, the controller finishes".to_string(),
                None,
            ),
            Verdict::Unguarded(why) => (
                "Unguarded",
                Some(unguarded_reason(why)),
                why.to_string(),
                None,
            ),
        };
        VerdictStatus {
            type_,
            reason,
            message,
            from: step.map(|s| s.0),
            to: step.map(|s| s.1),
        }
    }

    /// The table's NEXT column: `Step 5→4 due`, `Blocked PodNotReady web-1: …`, `Idle: up to date`,
    /// `Rolling: partition 0, the controller finishes`, `Unguarded (force-rolling-update)`.
    pub fn next(&self) -> String {
        match (self.type_, self.reason, self.from, self.to) {
            ("Step", _, Some(from), Some(to)) => format!("Step {from}→{to} due"),
            ("Blocked", Some(reason), _, _) => format!("Blocked {reason} {}", self.message),
            ("Idle", Some("PartitionZero"), _, _) => format!("Rolling: {}", self.message),
            ("Unguarded", _, _, _) => format!("Unguarded ({})", self.message),
            _ => format!("{}: {}", self.type_, self.message),
        }
    }
}

/// The PascalCase reason of an unguarded set, from [`crate::gates::before_gates`]' wording.
fn unguarded_reason(why: &str) -> &'static str {
    match why {
        "force-rolling-update" => "ForceRollingUpdate",
        "updateStrategy OnDelete" => "OnDelete",
        _ => "UnknownUpdateStrategy",
    }
}

impl StuckPodStatus {
    /// A stuck pod as the document shows it.
    pub fn of(finding: &Finding) -> Self {
        let p = &finding.pod;
        StuckPodStatus {
            name: p.name.clone(),
            not_ready_seconds: p.not_ready_seconds,
            revision: p.revision.clone(),
            expected_revision: p.expected_revision.clone(),
            recovery: match finding.action {
                Action::Delete => "Delete",
                Action::Wait { .. } => "Wait",
                Action::Hold(_) => "Hold",
            },
            recovery_message: finding.action.to_string(),
        }
    }
}

impl RolloutStatus {
    /// The status of the set `plan` planned for, with its stuck pod's `finding`, if any, and its
    /// `health`.
    pub fn of(plan: &SetPlan, finding: Option<&Finding>, health: &Health) -> Self {
        let f = &plan.figures;
        let c = &plan.config;
        RolloutStatus {
            namespace: plan.namespace.clone(),
            name: plan.name.clone(),
            partition: f.partition,
            replicas: f.replicas,
            current_replicas: f.current_replicas,
            updated_replicas: f.updated_replicas,
            ready_replicas: f.ready_replicas,
            current_revision: f.revisions.current().map(str::to_string),
            update_revision: f.revisions.update().map(str::to_string),
            last_partition_update: f.last_partition_update.map(|t| t.to_string()),
            verdict: VerdictStatus::of(&plan.verdict),
            health: HealthDoc {
                status: health.status.as_str(),
                message: health.message.clone(),
            },
            paused: c.paused,
            paused_reason: c.paused_reason.clone(),
            degraded_reason: c.stamps.degraded_reason.clone(),
            stuck_pod: finding.map(StuckPodStatus::of),
            pause_plan: None,
            recorded: RecordDoc::default(),
            local_view: LocalViewDoc::default(),
            unguarded: !c.marked || matches!(plan.verdict, Verdict::Unguarded(_)),
        }
    }

    /// The table row: namespace, name, partition, updated/ready/replicas, revisions, HEALTH, NEXT.
    pub fn row(&self) -> [String; 8] {
        let dash = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
        [
            self.namespace.clone(),
            self.name.clone(),
            self.partition.map_or("-".into(), |v| v.to_string()),
            format!(
                "{}/{}/{}",
                self.updated_replicas, self.ready_replicas, self.replicas
            ),
            dash(&self.current_revision),
            dash(&self.update_revision),
            self.health.status.to_string(),
            self.next(),
        ]
    }

    /// The NEXT column, with the degraded reason when there is one.
    fn next(&self) -> String {
        match &self.degraded_reason {
            Some(why) => format!("{} [{why}]", self.verdict.next()),
            None => self.verdict.next(),
        }
    }
}
