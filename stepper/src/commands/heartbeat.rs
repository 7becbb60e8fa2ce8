//! The in-cluster stepper's signs of life, read for `status` to judge whether the records on the sets
//! are current ([`crate::rollout::record::freshness`]): the `renewTime` of the HA Deployment's Lease and
//! the `lastSuccessfulTime` of the CronJob, both named `sts-stepper` in the stepper's namespace (as
//! `deploy/stepper/` ships them). Two GETs; either may be absent (one mode runs) or forbidden (the
//! person running `status` may not read that namespace): what could not be read is said, never guessed.

use k8s_openapi::api::batch::v1::CronJob;
use k8s_openapi::api::coordination::v1::Lease;
use kube::Client;
use kube::api::Api;

use crate::rollout::record::Heartbeat;

/// The name of the stepper's Lease (`--leader-election-lease-name`'s default) and of its CronJob in
/// `deploy/stepper/`.
pub const STEPPER_NAME: &str = "sts-stepper";

/// The heartbeats readable in `namespace`, and, when there are none, why (one line naming each read).
pub async fn heartbeats(client: &Client, namespace: &str) -> (Vec<Heartbeat>, String) {
    let mut found = Vec::new();
    let mut missing = Vec::new();
    let leases: Api<Lease> = Api::namespaced(client.clone(), namespace);
    match leases.get_opt(STEPPER_NAME).await {
        Ok(Some(lease)) => match lease.spec.and_then(|s| s.renew_time) {
            Some(t) => found.push(Heartbeat {
                at: t.0,
                source: format!("Lease {namespace}/{STEPPER_NAME} renewed"),
            }),
            None => missing.push(format!("Lease {namespace}/{STEPPER_NAME} never renewed")),
        },
        Ok(None) => missing.push(format!("no Lease {namespace}/{STEPPER_NAME}")),
        Err(e) => missing.push(format!("Lease {namespace}/{STEPPER_NAME}: {e}")),
    }
    let cronjobs: Api<CronJob> = Api::namespaced(client.clone(), namespace);
    match cronjobs.get_opt(STEPPER_NAME).await {
        Ok(Some(job)) => match job.status.and_then(|s| s.last_successful_time) {
            Some(t) => found.push(Heartbeat {
                at: t.0,
                source: format!("CronJob {namespace}/{STEPPER_NAME} last succeeded"),
            }),
            None => missing.push(format!(
                "CronJob {namespace}/{STEPPER_NAME} never succeeded"
            )),
        },
        Ok(None) => missing.push(format!("no CronJob {namespace}/{STEPPER_NAME}")),
        Err(e) => missing.push(format!("CronJob {namespace}/{STEPPER_NAME}: {e}")),
    }
    let why = format!(
        "{} (the stepper's namespace is --stepper-namespace)",
        missing.join("; ")
    );
    (found, why)
}
