//! The checks' clients as the flags configure them ([`Checks`], one `Option` per kind of read), and
//! what a pass reads through ([`AllProbes`]: every check kind's read and the webhooks' POSTs).

use std::future::Future;

use super::answerer::Answerers;
use super::http_check::HttpChecks;
use super::probe::Probe;
use super::prometheus::{PromQuery, PrometheusClient};
use super::webhook::{WebhookCall, Webhooks};
use crate::config::{Served, check, http_check, webhook};
use crate::gates::approval::webhook::answer::WebhookAnswer;
use crate::gates::{CheckAnswer, CheckRead};

/// Everything a pass reads outbound: a check kind's read ([`CheckRead`]: PromQL queries, an HTTP
/// check's GET) and an approval webhook's POST. The pass and the commands take one `P: AllProbes`
/// ([`Checks`]; the simulation's application; tests' stand-ins), not one parameter per kind; a kind
/// one of them does not model answers as a stepper without its flag would ([`Checks::default`]'s
/// answers). A read never fails: no answer is the answer's own error, its cause in one line.
pub trait AllProbes: Sync {
    /// Reads `read` now, its parts one after another (the pass gives each part its own job:
    /// [`CheckRead::parts`]); each client bounds its own time, the pass bounds them all.
    fn check(&self, read: &CheckRead) -> impl Future<Output = CheckAnswer> + Send;
    /// POSTs `call` to the approval webhook (or the built-in answerer) it names.
    fn webhook(&self, call: &WebhookCall) -> impl Future<Output = WebhookAnswer> + Send;
}

/// The checks' clients the flags configure, one per kind of read: Prometheus (`--prometheus-url`,
/// `None` without it), the HTTP checks (`--http-check`, `None` without any), the approval webhooks
/// (`--webhook`, `None` without any). Each read goes to its kind's client; a kind with none answers
/// its [`super::probe::Kind::unconfigured`] error. `Checks::default()`: none configured, every read
/// an error (a set that needs one never steps — fail closed).
#[derive(Clone, Debug, Default)]
pub struct Checks {
    /// The Prometheus client.
    pub prometheus: Option<PrometheusClient>,
    /// The HTTP checks' client.
    pub http: Option<HttpChecks>,
    /// The approval webhooks' client.
    pub webhooks: Option<Webhooks>,
    /// The built-in answerers of `--answerer-config` (`None` without the file): a set's
    /// `pre-update-webhook` may name one as it names a webhook; the names are one namespace.
    pub answerers: Option<Answerers>,
}

impl Checks {
    /// Each name a set's `pre-update-webhook` may give, with its kind: `webhook`, or the built-in
    /// answerer's (`patroni`, …).
    pub fn approval_kinds(&self) -> Vec<(String, &'static str)> {
        let mut kinds: Vec<(String, &'static str)> = (self.webhooks.iter())
            .flat_map(Webhooks::names)
            .map(|n| (n, "webhook"))
            .collect();
        if let Some(a) = &self.answerers {
            kinds.extend(
                a.names()
                    .into_iter()
                    .filter_map(|n| Some((n.clone(), a.get(&n)?.kind()))),
            );
        }
        kinds
    }

    /// The endpoints configured, by the flag a set's annotation names them under
    /// ([`crate::config::Served`]): `--prometheus-url` when set, the HTTP checks' names, the names a
    /// `pre-update-webhook` may give ([`Checks::approval_names`]), each bound to the sets it serves.
    pub fn served(&self) -> Served {
        let mut served = Served::default();
        if self.prometheus.is_some() {
            served.insert(&check::PROMETHEUS_FLAG, Vec::new());
        }
        let http = self.http.as_ref().map(HttpChecks::names);
        served.insert(&http_check::FLAG, http.unwrap_or_default());
        served.insert(&webhook::FLAG, self.approval_names());
        for (name, serves) in self.webhooks.iter().flat_map(Webhooks::bound) {
            served.bind(&webhook::FLAG, name, serves.clone());
        }
        if let Some(a) = &self.answerers {
            for name in a.names() {
                if let Some(serves) = a.serves(&name) {
                    served.bind(&webhook::FLAG, &name, serves.clone());
                }
            }
        }
        served
    }

    /// The names a set's `pre-update-webhook` may give: the webhooks' and the built-in answerers',
    /// sorted.
    pub fn approval_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.webhooks.iter().flat_map(Webhooks::names).collect();
        names.extend(self.answerers.iter().flat_map(Answerers::names));
        names.sort();
        names
    }
}

/// Each read to its kind's client; a call to a name of `--answerer-config` is answered by that built-in
/// answerer, any other by the webhooks.
impl AllProbes for Checks {
    async fn check(&self, read: &CheckRead) -> CheckAnswer {
        match read {
            CheckRead::Queries(queries) => {
                let mut outcomes = Vec::with_capacity(queries.len());
                for query in queries {
                    outcomes.push(Probe::<PromQuery>::answer(&self.prometheus, &query.expr).await);
                }
                CheckAnswer::Queries(outcomes)
            }
            CheckRead::Http(name) => CheckAnswer::Http(self.http.answer(name).await),
        }
    }

    async fn webhook(&self, call: &WebhookCall) -> WebhookAnswer {
        match &self.answerers {
            Some(a) if a.get(&call.name).is_some() => a.answer(&call.name, &call.body).await,
            _ => self.webhooks.answer(call).await,
        }
    }
}
