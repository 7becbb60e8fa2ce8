//! Whether the stepper may do what a set's annotations will need it to (`plan::rbac`): a
//! SelfSubjectAccessReview (`authorization.k8s.io/v1`, which Kubernetes' `system:basic-user` role lets
//! every authenticated user create) asking the API server's authorizer about the stepper's own
//! credentials, as `kubectl auth can-i` does. The answer is kept for [`ANSWER_TTL`] per question (verb,
//! kind, namespace) in the process (a `watch` replica passes often; a `once` run asks once), so a
//! Component added later is seen within that time.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
};
use kube::Client;
use kube::api::{Api, PostParams};

use crate::cluster::ClusterError;
use crate::cluster::kube_error::error;
use crate::cluster::object::Object;

/// How long an answer is reused: 5 minutes.
pub const ANSWER_TTL: Duration = Duration::from_secs(300);

/// One question: verb, API group (`""`: the core group), resource (the kind's plural), namespace.
type Question = (String, String, String, String);

/// The answers so far, by question, with when each was given.
#[derive(Clone, Debug, Default)]
pub struct AccessAnswers(Arc<Mutex<HashMap<Question, (Instant, bool)>>>);

impl AccessAnswers {
    /// Whether the credentials of `client` may `verb` objects of kind `K` in `namespace`: a kept answer
    /// younger than [`ANSWER_TTL`], else a new SelfSubjectAccessReview.
    ///
    /// # Errors
    /// The review could not be created (the API server's error, naming the question).
    pub async fn may<K: Object>(
        &self,
        client: &Client,
        verb: &str,
        namespace: &str,
    ) -> Result<bool, ClusterError> {
        let (group, resource) = (K::group(&()).into_owned(), K::plural(&()).into_owned());
        let question: Question = (
            verb.to_string(),
            group.clone(),
            resource.clone(),
            namespace.to_string(),
        );
        let kept = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(&question)
            .filter(|(at, _)| at.elapsed() < ANSWER_TTL)
            .map(|(_, allowed)| *allowed);
        if let Some(allowed) = kept {
            return Ok(allowed);
        }
        // kubectl's `resource.group`; the core group is sent as no group at all.
        let what = match group.as_str() {
            "" => resource.clone(),
            g => format!("{resource}.{g}"),
        };
        let review = SelfSubjectAccessReview {
            spec: SelfSubjectAccessReviewSpec {
                resource_attributes: Some(ResourceAttributes {
                    namespace: Some(namespace.to_string()),
                    verb: Some(verb.to_string()),
                    group: (!group.is_empty()).then_some(group),
                    resource: Some(resource),
                    ..ResourceAttributes::default()
                }),
                ..SelfSubjectAccessReviewSpec::default()
            },
            ..SelfSubjectAccessReview::default()
        };
        let api: Api<SelfSubjectAccessReview> = Api::all(client.clone());
        let answer = api
            .create(&PostParams::default(), &review)
            .await
            .map_err(|e| {
                error(
                    format!(
                        "create selfsubjectaccessreview ({verb} {what} in namespace {namespace})"
                    ),
                    e,
                )
            })?;
        let allowed = answer.status.is_some_and(|s| s.allowed);
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(question, (Instant::now(), allowed));
        Ok(allowed)
    }
}
