//! What a pass reads, and when: the StatefulSet list first, then pods and PDBs for the candidates only.
//!
//! Every read here is a LIST without `resourceVersion`: a consistent read (the API server answers as of
//! now; from Kubernetes 1.31 served from its watch cache after a quorum check), so no step is decided
//! on a stale object. What is read follows the work (docs/design.md, "Reads follow the work"): a pass with
//! no candidate reads no pod.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Instant;

use jiff::Timestamp;
use kube::core::Selector;

use crate::cluster::{Cluster, ClusterError};
use crate::config::SetConfig;
use crate::model::set;
use crate::pass::options::PassOptions;
use crate::pass::options::PodReads;
use crate::plan::rbac::needs_pod_delete;
use crate::plan::{Planner, Snapshot};
use k8s_openapi::api::apps::v1::StatefulSet;
use tracing::warn;

/// What a pass read ([`snapshot_parsed`]): the snapshot, its sets' parsed annotations, and the reads
/// that failed, by the index of each set that needed them.
#[derive(Debug)]
pub struct Read {
    /// The snapshot; a set whose read failed is named in [`Snapshot::read_failures`].
    pub snap: Snapshot,
    /// The sets' annotations parsed under `opts.gates.keys`, in the order of `snap.statefulsets`.
    pub configs: Vec<Arc<SetConfig>>,
    /// The failed read of each set that needed it (a LIST shared by several sets fails them all).
    pub failed: BTreeMap<usize, ClusterError>,
}

/// Reads the snapshot at time `now`: one LIST of StatefulSets, then the pods and PDBs
/// `opts.pod_reads` asks for (PDBs only with the PDB gate on). No StatefulSet listed, or no
/// candidate: no pod is read. A pod or PDB LIST that fails blocks only the sets that needed it
/// ([`Snapshot::read_failures`]: they are blocked `ApiError`); every other set is decided as usual.
///
/// # Errors
/// The StatefulSet LIST failed: there is nothing to decide.
pub async fn snapshot<C: Cluster>(
    cluster: &C,
    opts: &PassOptions,
    now: Timestamp,
) -> Result<Snapshot, ClusterError> {
    Ok(snapshot_parsed(cluster, opts, now).await?.snap)
}

/// [`snapshot`], with the sets' annotations parsed under `opts.gates.keys`
/// ([`Cluster::list_parsed_statefulsets`], in the order of the snapshot's sets) for the pass's planner
/// ([`Planner::with_configs`]): one parse per set and pass at most (none from `watch`'s caches); and
/// the errors of the reads that failed, per set ([`Read::failed`]).
///
/// # Errors
/// As [`snapshot`].
pub async fn snapshot_parsed<C: Cluster>(
    cluster: &C,
    opts: &PassOptions,
    now: Timestamp,
) -> Result<Read, ClusterError> {
    let gates = &opts.gates;
    let (statefulsets, mut configs): (Vec<_>, Vec<_>) = cluster
        .list_parsed_statefulsets(&gates.keys)
        .await?
        .into_iter()
        .unzip();
    let mut snap = Snapshot {
        statefulsets,
        ..Snapshot::default()
    };
    if opts.pod_reads == PodReads::Candidates {
        snap.pod_delete = pod_delete(cluster, &snap.statefulsets, &configs).await;
    }
    if let Some(ns) = &gates.scope.namespace_selector {
        // The scope cannot be told without them: like the StatefulSet LIST, a failure fails the pass.
        snap.covered_namespaces = Some(
            cluster
                .list_namespaces(&ns.text)
                .await?
                .into_iter()
                .collect(),
        );
    }
    let chosen: Vec<usize> = match &opts.pod_reads {
        PodReads::Scope => {
            let mut failed = BTreeMap::new();
            if !snap.statefulsets.is_empty() {
                snap.pods_read_at = Some(Instant::now());
                let mut error = match cluster.list_pods().await {
                    Ok(pods) => {
                        snap.pods = pods;
                        None
                    }
                    Err(e) => Some(e),
                };
                if gates.pdb_gate && error.is_none() {
                    match cluster.list_pdbs().await {
                        Ok(pdbs) => snap.pdbs = pdbs,
                        Err(e) => error = Some(e),
                    }
                }
                // One LIST for the whole scope: every set needed it.
                if let Some(e) = error {
                    let all: Vec<usize> = (0..snap.statefulsets.len()).collect();
                    fail(&mut snap, &mut failed, &all, &e);
                    snap.pods_read_for = Some(BTreeSet::new());
                }
            }
            return Ok(Read {
                snap,
                configs,
                failed,
            });
        }
        PodReads::Candidates => {
            let planner = Planner::with_configs(&snap, gates, configs);
            let mut chosen = planner.candidates(now);
            chosen.extend(planner.recovery_candidates(gates.recover_stuck_pods));
            chosen.sort_unstable();
            chosen.dedup();
            configs = planner.into_configs();
            chosen
        }
        PodReads::Set { namespace, name } => snap
            .statefulsets
            .iter()
            .position(|s| {
                s.metadata.namespace.as_deref() == Some(namespace.as_str())
                    && s.metadata.name.as_deref() == Some(name.as_str())
            })
            .into_iter()
            .collect(),
    };
    if !chosen.is_empty() {
        snap.pods_read_at = Some(Instant::now());
    }
    let failed = read_pods_of(cluster, &mut snap, &chosen, gates.pdb_gate).await;
    snap.pods_read_for = Some(
        chosen
            .into_iter()
            .filter(|i| !failed.contains_key(i))
            .collect(),
    );
    Ok(Read {
        snap,
        configs,
        failed,
    })
}

/// Records on `snap` and in `failed` that the read failing with `e` was needed by the sets `sets`.
fn fail(
    snap: &mut Snapshot,
    failed: &mut BTreeMap<usize, ClusterError>,
    sets: &[usize],
    e: &ClusterError,
) {
    for &i in sets {
        snap.read_failures.entry(i).or_insert_with(|| e.to_string());
        failed.entry(i).or_insert_with(|| e.clone());
    }
}

/// Adds to `snap` the pods of the sets at indexes `chosen` (one LIST per distinct namespace and
/// selector, in the order of `chosen`, naming the uids of the sets that share it) and, with
/// `pdb_gate`, the PDBs of their namespaces (one LIST per namespace, skipped for a namespace whose
/// every chosen set's pod read failed). A LIST that fails fails the sets that needed it, and only
/// them: recorded in [`Snapshot::read_failures`], returned by set index (the first failure of each).
pub async fn read_pods_of<C: Cluster>(
    cluster: &C,
    snap: &mut Snapshot,
    chosen: &[usize],
    pdb_gate: bool,
) -> BTreeMap<usize, ClusterError> {
    // (namespace, selector, owner uids, set indexes) per distinct read.
    let mut reads: Vec<(String, Selector, Vec<String>, Vec<usize>)> = Vec::new();
    let mut read_of: HashMap<(String, String), usize> = HashMap::new();
    let mut namespaces: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for &i in chosen {
        let s = &snap.statefulsets[i];
        let ns = s.metadata.namespace.clone().unwrap_or_default();
        let selector = set::pod_selector(s);
        let at = *read_of
            .entry((ns.clone(), selector.to_string()))
            .or_insert_with(|| {
                reads.push((ns.clone(), selector, Vec::new(), Vec::new()));
                reads.len() - 1
            });
        reads[at].2.extend(s.metadata.uid.clone());
        reads[at].3.push(i);
        namespaces.entry(ns).or_default().push(i);
    }
    let mut failed = BTreeMap::new();
    for (ns, selector, owners, sets) in &reads {
        match cluster.list_set_pods(ns, selector, owners).await {
            Ok(pods) => snap.pods.extend(pods),
            Err(e) => fail(snap, &mut failed, sets, &e),
        }
    }
    if pdb_gate {
        for (ns, sets) in &namespaces {
            if sets.iter().all(|i| failed.contains_key(i)) {
                continue; // nothing left in this namespace to judge
            }
            match cluster.list_namespace_pdbs(ns).await {
                Ok(pdbs) => snap.pdbs.extend(pdbs),
                Err(e) => fail(snap, &mut failed, sets, &e),
            }
        }
    }
    failed
}

/// A snapshot of the one set `set` read again as of now: the fresh consistent read a step waits for
/// when its decision has grown old or was made on caches (docs/design.md, "A step is decided on fresh
/// pods"; "Reads follow the work"). The set by a GET ([`Cluster::get_statefulset`]; when it is gone,
/// as listed: its step patch then fails), its pods by a consistent LIST
/// ([`Cluster::list_set_pods_consistent`]) and, with `pdb_gate`, its namespace's PDBs.
///
/// # Errors
/// The read that failed.
pub async fn reread_set<C: Cluster>(
    cluster: &C,
    set: &StatefulSet,
    pdb_gate: bool,
) -> Result<Snapshot, ClusterError> {
    let ns = set.metadata.namespace.clone().unwrap_or_default();
    let name = set.metadata.name.clone().unwrap_or_default();
    let read_at = Instant::now();
    let fresh = cluster
        .get_statefulset(&ns, &name)
        .await?
        .unwrap_or_else(|| set.clone());
    let owners: Vec<String> = fresh.metadata.uid.iter().cloned().collect();
    let pods = cluster
        .list_set_pods_consistent(&ns, &set::pod_selector(&fresh), &owners)
        .await?;
    let pdbs = if pdb_gate {
        cluster.list_namespace_pdbs(&ns).await?
    } else {
        Vec::new()
    };
    Ok(Snapshot {
        statefulsets: vec![Arc::new(fresh)],
        pods,
        pdbs,
        pods_read_for: None,
        pods_read_at: Some(read_at),
        read_failures: BTreeMap::new(),
        // Not asked again: a set's `missing-rbac` record is left as the pass's first read decided.
        pod_delete: BTreeMap::new(),
        // A fresh read confirms a step of a set already judged in scope.
        covered_namespaces: None,
    })
}

/// Whether the stepper may delete pods, asked once per namespace of the sets that will need it
/// ([`crate::plan::rbac::needs_pod_delete`]); a namespace whose review failed is left out (its sets keep
/// their record as it is), the failure logged.
async fn pod_delete<C: Cluster>(
    cluster: &C,
    sets: &[Arc<StatefulSet>],
    configs: &[Arc<SetConfig>],
) -> BTreeMap<String, bool> {
    let namespaces: BTreeSet<&str> = sets
        .iter()
        .zip(configs)
        .filter(|(s, c)| needs_pod_delete(s, c))
        .map(|(s, _)| s.metadata.namespace.as_deref().unwrap_or(""))
        .collect();
    let mut out = BTreeMap::new();
    for ns in namespaces {
        match cluster.may_delete_pods(ns).await {
            Ok(allowed) => {
                out.insert(ns.to_string(), allowed);
            }
            Err(e) => {
                warn!(namespace = ns, error = %e, "could not ask whether pods may be deleted")
            }
        }
    }
    out
}
