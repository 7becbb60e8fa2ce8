//! What one pass reads ([`Snapshot`]) and what the I/O gates read for its sets ([`ProbeMap`]): the
//! planner's input, as plain data.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;

use crate::gates::Probes;

/// Everything one pass reads: the result of one LIST of each kind (no per-pod or per-set GET).
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    /// StatefulSets in scope (`--namespace`, `--selector`), shared with the reads' source
    /// ([`crate::cluster::Cluster::list_statefulsets`]).
    pub statefulsets: Vec<Arc<StatefulSet>>,
    /// Pods of the same namespaces; empty when no StatefulSet needs its pods judged.
    pub pods: Vec<Pod>,
    /// PodDisruptionBudgets of the same namespaces; empty when no StatefulSet needs them.
    pub pdbs: Vec<PodDisruptionBudget>,
    /// The sets (by index in `statefulsets`) whose pods and PDBs were read ([`crate::pass::reads`]); `None`:
    /// every set's. A set whose pods were not read is judged by the gates of the list alone
    /// ([`crate::gates::list_gate_block`]); past them it is `Throttled` when the step budget is spent, else
    /// blocked as not read — never stepped.
    pub pods_read_for: Option<BTreeSet<usize>>,
    /// When the pod reads started (monotonic clock; `None`: no pod read). A step decided on pods read
    /// longer ago than `--max-decision-age` is decided again on a fresh read before it is written.
    pub pods_read_at: Option<std::time::Instant>,
    /// The sets (by index in `statefulsets`) whose pod or PDB read failed, with the failure in one line
    /// naming the read (`list pods in namespace team-a (app=web): …`). Such a set is not in
    /// `pods_read_for`; past the gates of the list it is blocked `ApiError` with this detail — a failed
    /// read blocks only the sets that needed it, never the fleet.
    pub read_failures: BTreeMap<usize, String>,
    /// Whether the stepper may delete pods, by namespace, for the namespaces of sets that will need it
    /// ([`crate::plan::rbac::needs_pod_delete`]; asked with a SelfSubjectAccessReview); a namespace
    /// absent was not asked, or got no answer.
    pub pod_delete: BTreeMap<String, bool>,
    /// The namespaces the stepper's `--namespace-selector` selects, listed this pass
    /// ([`crate::cluster::Cluster::list_namespaces`]); `None` without that flag. A set of another namespace
    /// is outside the scope (gate `OutOfScope`).
    pub covered_namespaces: Option<BTreeSet<String>>,
}

/// What the I/O gates read for each StatefulSet of a snapshot, by its index in
/// [`Snapshot::statefulsets`] (absent: nothing read).
pub type ProbeMap = HashMap<usize, Probes>;
