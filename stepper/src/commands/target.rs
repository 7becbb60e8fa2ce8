//! What a person's command about one set starts from: the set as listed, with its annotations read
//! ([`target_set`]), and who runs it ([`whoami`]: recorded by `step --force`, `pause`, `resume`).

use std::sync::Arc;

use anyhow::{Result, bail};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::authentication::v1::SelfSubjectReview;
use kube::Client;
use kube::api::{Api, PostParams};
use tracing::debug;

use crate::cli::Target;
use crate::cluster::Cluster;
use crate::config::{Keys, SetConfig};

/// Who runs `step --force`, `pause` or `resume`: the API server's SelfSubjectReview username, and the
/// local user.
pub(super) async fn whoami(client: &Client) -> String {
    let local = std::env::var("USER").unwrap_or_else(|_| "unknown".into());
    let api: Api<SelfSubjectReview> = Api::all(client.clone());
    match api
        .create(&PostParams::default(), &SelfSubjectReview::default())
        .await
    {
        Ok(r) => match r.status.and_then(|s| s.user_info).and_then(|u| u.username) {
            Some(user) => format!("{user} (local user {local})"),
            None => format!("local user {local}"),
        },
        Err(e) => {
            debug!(error = %e, "SelfSubjectReview failed; naming the local user");
            format!("local user {local}")
        }
    }
}

/// The target as listed by `cluster` (whose scope is the target), with its annotations read.
///
/// # Errors
/// A failed LIST, or the set not found.
pub(super) async fn target_set<C: Cluster>(
    cluster: &C,
    keys: &Arc<Keys>,
    target: &Target,
) -> Result<(StatefulSet, SetConfig)> {
    let found = cluster.list_statefulsets().await?.into_iter().find(|s| {
        s.metadata.namespace.as_deref() == Some(target.namespace.as_str())
            && s.metadata.name.as_deref() == Some(target.name.as_str())
    });
    let Some(found) = found else {
        bail!("statefulset {target} not found");
    };
    let config = SetConfig::parse(&found, keys);
    Ok((Arc::unwrap_or_clone(found), config))
}
