//! The checks' outbound reads behind one trait, [`Probe`], one client per [`Kind`] of read (as Argo
//! Rollouts' metric providers: one `Provider` per metric source). Each kind lives beside its client:
//! the `PrometheusCheck` gate's PromQL queries ([`super::prometheus::PromQuery`], answered by
//! `PrometheusClient`), the `HttpCheck` gate's GETs ([`super::http_check::HttpGet`], `HttpChecks`),
//! the approval webhook's POSTs ([`super::webhook::WebhookPost`], `Webhooks`). Each kind also says,
//! once, what a read of it answers when no client of the kind is configured ([`Kind::unconfigured`]:
//! an error naming the flag, so a set that needs the read never steps — fail closed); `None` of a
//! client ([`Option`]) answers that. [`super::Checks`] holds the clients the flags configure and
//! routes each read to its kind's.
//!
//! What a gate asks to read and what it judges are the gates' vocabulary ([`crate::gates::Need`],
//! [`crate::gates::Probes`]); this module only asks and answers.

use std::future::Future;

/// One kind of outbound read: what is asked, what comes back, and the answer when no client of the
/// kind is configured.
pub trait Kind {
    /// What a read asks, borrowed for the read (a PromQL expression, a configured name, a name and a
    /// request body).
    type Request: ?Sized + Sync;
    /// What a read answers: one of the gates' answer types ([`crate::gates::Probes`]' fields). A read
    /// never fails: no answer is the answer's own error variant, its cause in one line.
    type Answer: Send;

    /// The answer to `request` when no client of this kind is configured: the error variant, naming
    /// the flag that configures one (e.g. `no Prometheus configured (--prometheus-url)`).
    fn unconfigured(request: &Self::Request) -> Self::Answer;
}

/// A client of one [`Kind`] of read `K`: the HTTP clients under `cluster/`, the simulation's
/// application, tests' stand-ins. A client of several kinds implements `Probe` once per kind.
pub trait Probe<K: Kind>: Sync {
    /// Reads `request` now. Never fails (see [`Kind::Answer`]); the client bounds its own time (its
    /// kind's timeout), the pass bounds them all (`--check-deadline`).
    fn answer(&self, request: &K::Request) -> impl Future<Output = K::Answer> + Send;
}

/// A client of kind `K` if one is configured; `None` answers [`Kind::unconfigured`].
impl<K: Kind, P: Probe<K>> Probe<K> for Option<P> {
    async fn answer(&self, request: &K::Request) -> K::Answer {
        match self {
            Some(client) => client.answer(request).await,
            None => K::unconfigured(request),
        }
    }
}
