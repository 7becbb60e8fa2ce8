//! The one [`Context`] every command against a cluster shares, built once per run (the flags, the kube
//! client, the current namespace, the metrics, the annotation keys), as kube-rs `controller-rs` shares
//! its `Context` with its reconciler; and the exit status a subcommand ends with ([`Exit`]).

use std::sync::Arc;

use anyhow::{Result, anyhow};
use jiff::SignedDuration;
use kube::Client;

use super::connect;
use crate::cli::namespace::controller_namespaces;
use crate::cli::{GateArgs, GlobalArgs, PassArgs, ScopeArgs, Target, TargetRef};
use crate::cluster::kube::{KubeCluster, Scope};
use crate::config::{Keys, Served, StepperScope};
use crate::gates::GateOptions;
use crate::pass::probes::ProbeOptions;
use crate::pass::{PassOptions, PodReads};
use crate::serve::metrics::Metrics;

/// Process exit status of a subcommand that ran to its end (errors exit 1 through `main`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Success.
    Ok,
    /// The subcommand's own failure (a set errored, a wait timed out).
    Failed,
}

/// The pod reads of a command about `target`: that set's own ([`PodReads::Set`]); with no target,
/// every pod in scope ([`PodReads::Scope`]).
pub(super) fn pod_reads_of(target: Option<&Target>) -> PodReads {
    target.map_or(PodReads::Scope, |t| PodReads::Set {
        namespace: t.namespace.clone(),
        name: t.name.clone(),
    })
}

/// What every command against a cluster shares, built once: the global flags, the kube client, the
/// current namespace, the metrics and the annotation keys.
pub struct Context {
    /// The global flags.
    pub global: GlobalArgs,
    /// The kube client (kubeconfig, `--context`, or the in-cluster service account).
    pub client: Client,
    /// The current namespace as kubectl has it without `-n`: the kubeconfig context's, else
    /// `default`; in a pod its own ([`crate::cli::NamespaceSource::current_namespace`]).
    pub namespace: String,
    /// The pass metrics (`watch` serves them on `/metrics`).
    pub metrics: Arc<Metrics>,
    /// The annotation keys under `--annotation-prefix`: built here, once, for every layer below.
    pub keys: Arc<Keys>,
}

impl Context {
    /// Connects (`connect::client`).
    ///
    /// # Errors
    /// No Kubernetes configuration, or one that cannot be read.
    pub async fn new(global: &GlobalArgs) -> Result<Self> {
        let (client, namespace) = connect::client(global).await?;
        Ok(Context {
            global: global.clone(),
            client,
            namespace,
            metrics: Arc::new(Metrics::new()),
            keys: Arc::new(Keys::new(&global.annotation_prefix)),
        })
    }

    /// The named StatefulSet in its namespace: typed, else `-n`, else the current one.
    ///
    /// # Errors
    /// `-n` twice, or a typed namespace that differs from `-n`.
    pub(super) fn target(&self, target: &TargetRef) -> Result<Target> {
        target
            .resolve(&self.global.namespaces, &self.namespace)
            .map_err(|e| anyhow!(e))
    }

    /// The cluster over `namespaces` (empty: all) and the label `selector`.
    pub(super) fn cluster_over(
        &self,
        namespaces: Vec<String>,
        selector: Option<String>,
    ) -> KubeCluster {
        self.kube_cluster(Scope {
            namespaces,
            label_selector: selector,
            field_selector: None,
        })
    }

    /// The cluster of a controller subcommand (`once`, `watch`): every StatefulSet of its namespaces
    /// (all without `-n`), with no label selector sent to the API server, and the stepper's scope
    /// (`--selector`, the excluded namespaces) judged by the gates on each set listed
    /// ([`StepperScope`], gate `OutOfScope`): a guarded set that left the scope is seen, not lost.
    ///
    /// # Errors
    /// `--selector` is not a label selector (the message names it and the expected form).
    pub(super) fn controller_cluster(
        &self,
        scope: &ScopeArgs,
        pass: &PassArgs,
    ) -> Result<(KubeCluster, StepperScope)> {
        let namespaces = controller_namespaces(&self.global.namespaces, scope.all_namespaces);
        let stepper_scope = StepperScope::with_namespaces(
            scope.selector.as_deref(),
            pass.namespace_selector.as_deref(),
        )
        .map_err(|e| anyhow!(e))?;
        Ok((self.cluster_over(namespaces, None), stepper_scope))
    }

    /// The cluster of one `target`, listing as `listing` says.
    pub(super) fn cluster_of(&self, target: &Target, listing: Listing) -> KubeCluster {
        self.kube_cluster(Scope {
            namespaces: vec![target.namespace.clone()],
            label_selector: None,
            field_selector: (listing == Listing::OnlyTarget)
                .then(|| format!("metadata.name={}", target.name)),
        })
    }

    fn kube_cluster(&self, scope: Scope) -> KubeCluster {
        let instance = std::env::var("POD_NAME").ok().filter(|s| !s.is_empty());
        KubeCluster::new(self.client.clone(), scope, instance)
    }

    /// The pass settings from the flags, reading pods as `pod_reads` says; without `pass` (the
    /// subcommands other than `once` and `watch`) its defaults: no recovery, no step budget.
    pub(super) fn pass_options(
        &self,
        pod_reads: PodReads,
        gates: &GateArgs,
        pass: Option<&PassArgs>,
        dry_run: bool,
    ) -> PassOptions {
        let defaults = PassArgs::default();
        let pass = pass.unwrap_or(&defaults);
        PassOptions {
            gates: GateOptions {
                keys: self.keys.clone(),
                pdb_gate: !gates.no_pdb_gate,
                max_steps_per_pass: pass.max_steps_per_pass,
                max_steps_per_minute: pass.max_steps_per_minute,
                recover_stuck_pods: pass.recover_stuck_pods,
                served: Served::default(),
                scope: StepperScope::default(),
            },
            dry_run,
            pod_reads,
            max_decision_age: to_std(pass.max_decision_age),
            probes: ProbeOptions::default(),
        }
    }
}

/// How a single-set subcommand lists: `wait` needs only the set (a field selector); `step` and
/// `status` list the set's namespace, because `GroupBusy` judges the set against its group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Listing {
    /// Only the target (a field selector on its name).
    OnlyTarget,
    /// The target's namespace.
    TargetNamespace,
}

/// `d` as a `std` duration (its magnitude: the flags' durations are never negative).
pub(super) fn to_std(d: SignedDuration) -> std::time::Duration {
    d.unsigned_abs()
}
