//! What a pass reads, and when: the StatefulSet list first, then pods and PDBs for the candidates only.
//!
//! Every read here is a LIST without `resourceVersion`: a consistent read (the API server answers as of
//! now; from Kubernetes 1.31 served from its watch cache after a quorum check), so no step is decided
//! on a stale object. What is read follows the work (docs/design.md, "Reads follow the work"): a pass with
//! no candidate reads no pod.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Instant;

use jiff::Timestamp;
use kube::core::Selector;

use crate::cluster::{Cluster, ClusterError};
use crate::config::SetConfig;
use crate::model::set;
use crate::pass::options::PassOptions;
use crate::pass::options::PodReads;
use crate::plan::{Planner, Snapshot};
use k8s_openapi::api::apps::v1::StatefulSet;

/// Reads the snapshot at time `now`: one LIST of StatefulSets, then the pods and PDBs
/// `opts.pod_reads` asks for (PDBs only with the PDB gate on). No StatefulSet listed, or no
/// candidate: no pod is read.
///
/// # Errors
/// The first LIST that failed; nothing is decided on a partial snapshot.
pub async fn snapshot<C: Cluster>(
    cluster: &C,
    opts: &PassOptions,
    now: Timestamp,
) -> Result<Snapshot, ClusterError> {
    Ok(snapshot_parsed(cluster, opts, now).await?.0)
}

/// [`snapshot`], with the sets' annotations parsed under `opts.gates.keys`
/// ([`Cluster::list_parsed_statefulsets`], in the order of the snapshot's sets) for the pass's planner
/// ([`Planner::with_configs`]): one parse per set and pass at most (none from `watch`'s caches).
///
/// # Errors
/// As [`snapshot`].
pub async fn snapshot_parsed<C: Cluster>(
    cluster: &C,
    opts: &PassOptions,
    now: Timestamp,
) -> Result<(Snapshot, Vec<Arc<SetConfig>>), ClusterError> {
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
    let chosen: Vec<usize> = match &opts.pod_reads {
        PodReads::Scope => {
            if !snap.statefulsets.is_empty() {
                snap.pods_read_at = Some(Instant::now());
                snap.pods = cluster.list_pods().await?;
                if gates.pdb_gate {
                    snap.pdbs = cluster.list_pdbs().await?;
                }
            }
            return Ok((snap, configs));
        }
        PodReads::Candidates => {
            let planner = Planner::with_configs(&snap, gates, configs);
            let mut chosen = planner.candidates(now);
            if gates.recover_stuck_pods {
                chosen.extend(planner.recovery_candidates());
                chosen.sort_unstable();
                chosen.dedup();
            }
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
    read_pods_of(cluster, &mut snap, &chosen, gates.pdb_gate).await?;
    snap.pods_read_for = Some(chosen.into_iter().collect());
    Ok((snap, configs))
}

/// Adds to `snap` the pods of the sets at indexes `chosen` (one LIST per distinct namespace and
/// selector, in the order of `chosen`, naming the uids of the sets that share it) and, with
/// `pdb_gate`, the PDBs of their namespaces (one LIST per namespace).
///
/// # Errors
/// The first LIST that failed.
pub async fn read_pods_of<C: Cluster>(
    cluster: &C,
    snap: &mut Snapshot,
    chosen: &[usize],
    pdb_gate: bool,
) -> Result<(), ClusterError> {
    let mut reads: Vec<(String, Selector, Vec<String>)> = Vec::new();
    let mut read_of: HashMap<(String, String), usize> = HashMap::new();
    let mut namespaces = BTreeSet::new();
    for &i in chosen {
        let s = &snap.statefulsets[i];
        let ns = s.metadata.namespace.clone().unwrap_or_default();
        let selector = set::pod_selector(s);
        let at = *read_of
            .entry((ns.clone(), selector.to_string()))
            .or_insert_with(|| {
                reads.push((ns.clone(), selector, Vec::new()));
                reads.len() - 1
            });
        reads[at].2.extend(s.metadata.uid.clone());
        namespaces.insert(ns);
    }
    for (ns, selector, owners) in &reads {
        snap.pods
            .extend(cluster.list_set_pods(ns, selector, owners).await?);
    }
    if pdb_gate {
        for ns in &namespaces {
            snap.pdbs.extend(cluster.list_namespace_pdbs(ns).await?);
        }
    }
    Ok(())
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
    })
}
