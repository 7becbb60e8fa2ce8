//! The plan: from one snapshot of the cluster to the writes and Events of one pass, as plain data.
//!
//! [`Planner::new`] parses each StatefulSet's annotations once ([`SetConfig`]) and indexes the
//! snapshot (pods by owner, PDBs by namespace, rollout-group holders); [`Planner::needs`] says which
//! reads the I/O gates still want; [`Planner::plan`] runs the gates for every set, applies the
//! fleet's step budget ([`crate::gates::throttle`]) and returns per set the figures to report, the verdict and
//! the JSON Patches to send. All rollout state is read from annotations on the StatefulSet and written
//! back there, so a pass in a CronJob and a pass in `watch` plan the same.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;

use crate::config::{Keys, SetConfig};
use crate::gates::{self, Evaluation, FleetView, GateInput, GateOptions, Need, Probes, Verdict};
use crate::gates::{pause_points, recovery, throttle};
use crate::model::pods::{PdbView, controller_uid, pods_by_ordinal};
use crate::model::reasons::{Blocked, Reason};
use crate::plan::patch;
use crate::plan::set_plan::{SetPlan, plan_evaluated};
pub use crate::plan::snapshot::{ProbeMap, Snapshot};

/// One snapshot made ready for the gates, built once per pass: each set's [`SetConfig`], pods grouped
/// by their controller's uid, PDBs by namespace and rollout-group holders by (namespace, group), so
/// planning stays linear in the number of objects.
pub struct Planner<'s> {
    snapshot: &'s Snapshot,
    opts: &'s GateOptions,
    configs: Vec<Arc<SetConfig>>,
    pods_by_owner: HashMap<&'s str, Vec<&'s Pod>>,
    pdbs_by_namespace: HashMap<&'s str, Vec<PdbView<'s>>>,
    group_holders: HashMap<(&'s str, String), &'s StatefulSet>,
}

/// Each StatefulSet's annotations parsed under `keys` ([`SetConfig::parse`]), in the order of `sets`:
/// the first thing [`Planner::new`] does. A pass that chose its reads with one planner hands the
/// configs on to the next ([`Planner::into_configs`], [`Planner::with_configs`]): one parse per set
/// and pass.
pub fn parse_configs(sets: &[Arc<StatefulSet>], keys: &Arc<Keys>) -> Vec<Arc<SetConfig>> {
    sets.iter()
        .map(|s| Arc::new(SetConfig::parse(s, keys)))
        .collect()
}

impl<'s> Planner<'s> {
    /// Parses and indexes `snapshot` under `opts` (annotation prefix, PDB gate, step budget).
    pub fn new(snapshot: &'s Snapshot, opts: &'s GateOptions) -> Self {
        let configs = parse_configs(&snapshot.statefulsets, &opts.keys);
        Self::with_configs(snapshot, opts, configs)
    }

    /// Indexes `snapshot` under `opts` with its sets' annotations already parsed: `configs` must be
    /// [`parse_configs`] of `snapshot.statefulsets` under `opts.keys` (or the same, parsed earlier:
    /// [`crate::cluster::Cluster::list_parsed_statefulsets`]; the sets may have gained pods and PDBs
    /// since, not changed).
    ///
    /// # Panics
    /// When `configs` and `snapshot.statefulsets` differ in length (a caller's bug, not bad input).
    pub fn with_configs(
        snapshot: &'s Snapshot,
        opts: &'s GateOptions,
        configs: Vec<Arc<SetConfig>>,
    ) -> Self {
        assert_eq!(
            configs.len(),
            snapshot.statefulsets.len(),
            "one parsed config per StatefulSet"
        );
        let mut pods_by_owner: HashMap<&str, Vec<&Pod>> = HashMap::new();
        for pod in &snapshot.pods {
            if let Some(uid) = controller_uid(pod) {
                pods_by_owner.entry(uid).or_default().push(pod);
            }
        }
        let mut pdbs_by_namespace: HashMap<&str, Vec<PdbView<'_>>> = HashMap::new();
        for pdb in &snapshot.pdbs {
            let ns = pdb.metadata.namespace.as_deref().unwrap_or("");
            pdbs_by_namespace
                .entry(ns)
                .or_default()
                .push(PdbView::new(pdb));
        }
        let mut members: HashMap<(&str, String), Vec<&StatefulSet>> = HashMap::new();
        for (set, config) in snapshot.statefulsets.iter().zip(&configs) {
            if let Some(group) = &config.rollout_group
                && config.guarded(set)
            {
                let ns = set.metadata.namespace.as_deref().unwrap_or("");
                members.entry((ns, group.clone())).or_default().push(set);
            }
        }
        let group_holders = members
            .into_iter()
            .filter_map(|(k, sets)| Some((k, gates::group_holder(sets)?)))
            .collect();
        Planner {
            snapshot,
            opts,
            configs,
            pods_by_owner,
            pdbs_by_namespace,
            group_holders,
        }
    }

    /// The parsed annotations of every set, for the next planner on the same sets
    /// ([`Planner::with_configs`]).
    pub fn into_configs(self) -> Vec<Arc<SetConfig>> {
        self.configs
    }

    /// The steps of the whole fleet in the minute before `now` ([`throttle::steps_in_last_minute`]): a
    /// walk over every set, so counted once per question, not once per set.
    fn steps_in_last_minute(&self, now: Timestamp) -> u32 {
        throttle::steps_in_last_minute(self.configs.iter().map(|c| &**c), now)
    }

    /// The holder of the rollout group of the set at index `i` ([`FleetView`]).
    fn fleet(&self, i: usize) -> FleetView<'s> {
        let set = &self.snapshot.statefulsets[i];
        let ns = set.metadata.namespace.as_deref().unwrap_or("");
        FleetView {
            covered_namespaces: self.snapshot.covered_namespaces.as_ref(),
            group_holder: self.configs[i]
                .rollout_group
                .as_ref()
                .and_then(|g| self.group_holders.get(&(ns, g.clone())).copied()),
        }
    }

    /// The indexes of the sets whose pods stuck-pod recovery must see, judged from the StatefulSet list
    /// alone: with `--recover-stuck-pods` (`all`) every guarded set with fewer Ready pods than replicas
    /// ([`recovery::may_have_stuck_pod`]); without, those stepping back from a failed revision with a
    /// pod not Ready ([`recovery::may_have_failed_pod`]: returned at once, on or off).
    pub fn recovery_candidates(&self, all: bool) -> Vec<usize> {
        let sets = &self.snapshot.statefulsets;
        (0..sets.len())
            .filter(|&i| {
                let (set, config) = (&sets[i], &self.configs[i]);
                if all {
                    recovery::may_have_stuck_pod(set, config)
                } else {
                    recovery::may_have_failed_pod(set, config)
                }
            })
            .collect()
    }

    /// The candidates of this pass, by index in the snapshot: the sets that can step as far as the
    /// StatefulSet list tells — guarded, staged, partition > 0 ([`gates::before_gates`]), past every
    /// gate judged from the list ([`gates::list_gate_block`]: `Paused`, `InvalidAnnotation`,
    /// `NotObserved`, `Settling`, `GroupBusy`) — and none when the fleet's step budget is spent
    /// (`Throttled`, [`throttle::budget`]); sets held `FailedRevision` with pods to return
    /// ([`gates::returning::may_return`]); and sets whose approval requests are withdrawn
    /// ([`gates::withdraws_requests`]). Only they get pod and PDB reads (docs/design.md: "Reads follow
    /// the work"); the snapshot's pods are not read here.
    pub fn candidates(&self, now: Timestamp) -> Vec<usize> {
        let recent = self.steps_in_last_minute(now);
        if throttle::budget(self.opts, recent) == 0 {
            return Vec::new();
        }
        let (no_pods, none) = (BTreeMap::new(), Probes::default());
        let sets = &self.snapshot.statefulsets;
        (0..sets.len())
            .filter(|&i| {
                let (set, config) = (&sets[i], &self.configs[i]);
                if gates::before_gates(set, config).is_some() {
                    return gates::withdraws_requests(config); // read to withdraw the requests
                }
                match gates::list_gate_block(&GateInput {
                    set,
                    config,
                    pods: &no_pods,
                    pdbs: &[],
                    fleet: self.fleet(i),
                    probes: &none,
                    opts: self.opts,
                    now,
                }) {
                    None => true,
                    // Read to return the pods a re-apply left on the failed revision.
                    Some(b) if b.reason == Reason::FailedRevision => {
                        gates::returning::may_return(set, config)
                    }
                    Some(_) => false,
                }
            })
            .collect()
    }

    /// True when the pods of the set at index `i` were read ([`Snapshot::pods_read_for`]).
    fn pods_read(&self, i: usize) -> bool {
        self.snapshot
            .pods_read_for
            .as_ref()
            .is_none_or(|read| read.contains(&i))
    }

    /// The evaluation of the set at index `i` when its pods were not read ([`Snapshot::pods_read_for`]):
    /// the gates before any gate (`Unguarded`, `Idle`), then the gates of the list; past them
    /// `ApiError` when its read failed ([`Snapshot::read_failures`]), `Throttled` (the only other
    /// reason a set that passes them is not read in a pass), or — for a set a single-set command did
    /// not ask about — blocked `PodNotReady` as not read. `None` when the pods were read.
    /// `recent`: [`Planner::steps_in_last_minute`] at `now`, counted once by the caller, not per set.
    fn unread(&self, i: usize, now: Timestamp, recent: u32) -> Option<Evaluation> {
        if self.pods_read(i) {
            return None;
        }
        let (set, config) = (&self.snapshot.statefulsets[i], &self.configs[i]);
        let (no_pods, none) = (BTreeMap::new(), Probes::default());
        let input = GateInput {
            set,
            config,
            pods: &no_pods,
            pdbs: &[],
            fleet: self.fleet(i),
            probes: &none,
            opts: self.opts,
            now,
        };
        let mut ev = gates::evaluate_input(&input);
        if !matches!(ev.verdict, Verdict::Blocked(_) | Verdict::Step { .. }) {
            return Some(ev);
        }
        // The gates run in order, so when the first to block is a gate of the list, it is also the
        // first gate of the list to block: no need to run them again, and the verdict stays.
        if !matches!(&ev.verdict, Verdict::Blocked(b) if gates::reads_list(b.reason)) {
            let blocked = gates::list_gate_block(&input).unwrap_or_else(|| {
                if let Some(failure) = self.snapshot.read_failures.get(&i) {
                    Blocked::new(Reason::ApiError, failure.clone())
                } else if throttle::budget(self.opts, recent) == 0 {
                    Blocked::new(Reason::Throttled, throttle::detail(self.opts, recent))
                } else {
                    Blocked::new(Reason::PodNotReady, "pods not read in this pass")
                }
            });
            ev.verdict = Verdict::Blocked(blocked);
        }
        ev.need = None;
        // The gates' writes on the set wait for a pass that read its pods; the approval note stays.
        ev.effects
            .retain(|e| matches!(e, gates::Effect::ApprovalNote { .. }));
        // A pause now or a lift is judged from the list alone; a step's effects are not.
        ev.canary = ev
            .canary
            .filter(|c| !matches!(**c, pause_points::PlanEffect::WithStep { .. }));
        Some(ev)
    }

    /// The gates for the set at index `i`, given what the I/O gates read for it (`recent`: as
    /// [`Planner::unread`]).
    fn evaluate(
        &self,
        i: usize,
        probes: &Probes,
        now: Timestamp,
        recent: u32,
    ) -> (BTreeMap<u32, &'s Pod>, Evaluation) {
        let set = &self.snapshot.statefulsets[i];
        let config = &self.configs[i];
        if let Some(unread) = self.unread(i, now, recent) {
            return (BTreeMap::new(), unread);
        }
        let uid = set.metadata.uid.as_deref().unwrap_or("");
        let owned = self
            .pods_by_owner
            .get(uid)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let pods = pods_by_ordinal(set, owned.iter().copied());
        let ns = set.metadata.namespace.as_deref().unwrap_or("");
        let pdbs = self
            .pdbs_by_namespace
            .get(ns)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let ev = gates::evaluate_input(&GateInput {
            set,
            config,
            pods: &pods,
            pdbs,
            fleet: self.fleet(i),
            probes,
            opts: self.opts,
            now,
        });
        (pods, ev)
    }

    /// The reads the pass must do before the plan is final: for each StatefulSet (by index in the
    /// snapshot) that passes every gate before an I/O gate whose read is not in `probes` yet, that
    /// read ([`Need`]). Empty when the plan is final.
    pub fn needs(&self, now: Timestamp, probes: &ProbeMap) -> Vec<(usize, Need)> {
        let none = Probes::default();
        let recent = self.steps_in_last_minute(now);
        (0..self.configs.len())
            .filter(|&i| gates::may_need_reads(&self.configs[i]))
            .filter_map(|i| {
                let (_, ev) = self.evaluate(i, probes.get(&i).unwrap_or(&none), now, recent);
                Some((i, ev.need?))
            })
            .collect()
    }

    /// Plans the pass: one [`SetPlan`] per StatefulSet, in the snapshot's order, given what the I/O
    /// gates read (`probes`). After every set's own gates, the fleet's step budget
    /// ([`throttle::throttle`]) turns the steps beyond `--max-steps-per-pass` /
    /// `--max-steps-per-minute` into `Throttled` blocks. The last use of the planner: each plan
    /// takes its set's parsed annotations.
    pub fn plan(mut self, now: Timestamp, probes: &ProbeMap) -> Vec<SetPlan> {
        let sets = &self.snapshot.statefulsets;
        let none = Probes::default();
        let recent = self.steps_in_last_minute(now);
        let mut evaluated: Vec<_> = (0..sets.len())
            .map(|i| self.evaluate(i, probes.get(&i).unwrap_or(&none), now, recent))
            .collect();
        let steps: Vec<(usize, &StatefulSet)> = evaluated
            .iter()
            .enumerate()
            .filter(|(_, (_, ev))| matches!(ev.verdict, Verdict::Step { .. }))
            .map(|(i, _)| (i, &*sets[i]))
            .collect();
        for (i, blocked) in throttle::throttle(&steps, self.opts, recent) {
            evaluated[i].1.verdict = Verdict::Blocked(blocked);
        }
        let configs = std::mem::take(&mut self.configs);
        let this = &self;
        sets.iter()
            .zip(configs)
            .zip(evaluated)
            .enumerate()
            .map(|(i, ((set, config), (pods, ev)))| {
                // A set whose pods were not read has no recovery finding.
                let read = this.pods_read(i);
                let stuck = read
                    .then(|| {
                        recovery::decide(set, &config, &pods, this.opts.recover_stuck_pods, now)
                    })
                    .flatten();
                let ns = set.metadata.namespace.as_deref().unwrap_or("");
                let may_delete = this.snapshot.pod_delete.get(ns).copied();
                let mut p = plan_evaluated(set, config, &pods, ev, (read, stuck, may_delete), now);
                if this.opts.max_steps_per_minute.is_some() && p.write.is_step() {
                    let (key, value) = patch::recent_step(&p.config, now);
                    p.write.annotations.set(key, value);
                }
                p
            })
            .collect()
    }
}

/// [`Planner::needs`] for one snapshot.
pub fn needs(
    snapshot: &Snapshot,
    opts: &GateOptions,
    now: Timestamp,
    probes: &ProbeMap,
) -> Vec<(usize, Need)> {
    Planner::new(snapshot, opts).needs(now, probes)
}

/// Plans a pass with no I/O results: [`plan_with`] and an empty [`ProbeMap`].
pub fn plan(snapshot: &Snapshot, opts: &GateOptions, now: Timestamp) -> Vec<SetPlan> {
    plan_with(snapshot, opts, now, &ProbeMap::new())
}

/// [`Planner::plan`] for one snapshot.
pub fn plan_with(
    snapshot: &Snapshot,
    opts: &GateOptions,
    now: Timestamp,
    probes: &ProbeMap,
) -> Vec<SetPlan> {
    Planner::new(snapshot, opts).plan(now, probes)
}
