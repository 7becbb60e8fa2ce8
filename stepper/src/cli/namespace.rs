//! Which namespace a command means, as kubectl decides it: `-n` over the kubeconfig context's
//! namespace over `default` (in a pod: `$POD_NAMESPACE`, then the service account's namespace).
//!
//! Pure: the kubeconfig and the pod's files are read by `commands`, which hands the result here as a
//! [`NamespaceSource`]. The rules are client-go's (`k8s.io/client-go/tools/clientcmd`,
//! `DirectClientConfig::Namespace` and `inClusterClientConfig::Namespace`), which kube-rs does not
//! apply: kube has no `-n` override, keeps a context's empty `namespace: ""` empty, and does not
//! trim the service account file.

use crate::cli::values::{Target, TargetRef};

/// Where the current namespace comes from (read by `commands` when it connects).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NamespaceSource {
    /// A kubeconfig (`--kubeconfig`, `$KUBECONFIG` or `~/.kube/config`): the `namespace` of the
    /// selected context (`--context`, else `current-context`), as written.
    Kubeconfig {
        /// The context's `namespace`, `None` when absent.
        context_namespace: Option<String>,
    },
    /// The in-cluster service account (no kubeconfig).
    InCluster {
        /// `$POD_NAMESPACE`, when set (the downward API; client-go reads it first).
        pod_namespace: Option<String>,
        /// The content of `/var/run/secrets/kubernetes.io/serviceaccount/namespace`, when readable.
        service_account_namespace: Option<String>,
    },
}

impl NamespaceSource {
    /// The current namespace (kubectl's, without `-n`): the context's namespace, else `default`; in a
    /// pod, `$POD_NAMESPACE`, else the service account's namespace, else `default`. Values are
    /// trimmed; an empty one counts as absent (client-go; kube-rs would keep `""`).
    pub fn current_namespace(&self) -> String {
        let candidates: Vec<Option<&String>> = match self {
            NamespaceSource::Kubeconfig { context_namespace } => vec![context_namespace.as_ref()],
            NamespaceSource::InCluster {
                pod_namespace,
                service_account_namespace,
            } => vec![pod_namespace.as_ref(), service_account_namespace.as_ref()],
        };
        candidates
            .into_iter()
            .flatten()
            .map(|ns| ns.trim())
            .find(|ns| !ns.is_empty())
            .unwrap_or("default")
            .to_string()
    }
}

impl TargetRef {
    /// The namespace of a named StatefulSet: the one typed as `NAMESPACE/NAME`, else `-n`
    /// (`namespaces`), else `current` ([`NamespaceSource::current_namespace`]).
    ///
    /// # Errors
    /// `-n` given more than once, or a typed namespace that differs from `-n` (kubectl refuses the
    /// same ambiguity).
    pub fn resolve(&self, namespaces: &[String], current: &str) -> Result<Target, String> {
        let flag = match namespaces {
            [] => None,
            [one] => Some(one.as_str()),
            _ => {
                return Err(format!(
                    "{}: a named StatefulSet is in one namespace; give -n once (got {})",
                    self.name,
                    namespaces.join(", ")
                ));
            }
        };
        let namespace = match (self.namespace.as_deref(), flag) {
            (Some(typed), Some(flag)) if typed != flag => {
                return Err(format!(
                    "{typed}/{}: the namespace {typed:?} differs from -n {flag:?}; give one",
                    self.name
                ));
            }
            (Some(typed), _) => typed,
            (None, Some(flag)) => flag,
            (None, None) => current,
        };
        Ok(Target {
            namespace: namespace.to_string(),
            name: self.name.clone(),
        })
    }
}

/// The namespaces `status` lists (empty = all), as `kubectl get`: `-A` every namespace, `-n` the
/// ones given, else the current one.
pub fn query_namespaces(namespaces: &[String], all: bool, current: &str) -> Vec<String> {
    if all {
        Vec::new()
    } else if namespaces.is_empty() {
        vec![current.to_string()]
    } else {
        namespaces.to_vec()
    }
}

/// The namespaces `once` and `watch` pass over (empty = all): `-n` the ones given, else every
/// namespace (`-A` says so explicitly). They are controllers, not queries: run in a pod, the current
/// namespace is the stepper's own, not the one its StatefulSets live in.
pub fn controller_namespaces(namespaces: &[String], all: bool) -> Vec<String> {
    if all { Vec::new() } else { namespaces.to_vec() }
}
