//! The HTTP check, pure part: what the endpoint answered, and what that means for the check.
//!
//! After Argo Rollouts' `web` metric provider: the stepper GETs the URL configured under the set's
//! `http-check` name (`--http-check NAME=URL`); the value at `http-check-jsonpath` of the JSON answer
//! is compared with `http-check-expect`. A value that matches is a success; a value that does not is
//! a **failure** (the endpoint says no: Elasticsearch `yellow` when `green` is expected); no usable
//! answer — a timeout, a refused connection, a non-2xx status, a body that is not JSON, a path that
//! selects nothing — is an **error**: the check could not be made. The counting is shared with the
//! Prometheus check ([`crate::gates::check`]). Also here: gate `HttpCheck`, and the read and annotation
//! changes the check asks for (mirroring the Prometheus check's: the counts in
//! `<prefix>/http-check-state`, the pause after `failure-limit` failures, the `CheckErrors` record).

use jiff::Timestamp;
use jsonpath_rust::JsonPath;
use serde_json::Value;
use sts_safe_rollout_rules::annotations as names;

use super::kind::CheckKind;
use super::{self as check, CheckResult, CheckState, Measured, count};
use crate::config::check::CheckLimits;
use crate::config::http_check::{Expect, HttpCheckConfig};
use crate::gates::effect::StateKey;
use crate::gates::input::GateInput;
pub use crate::gates::probes::HttpAnswer;
use crate::gates::probes::{CheckRead, Need};
use crate::model::degraded::Record;
use crate::model::fields::{Field, set as of_set};
use crate::model::reasons::Reason;

/// The gate's name in the check's messages.
pub const KIND: &str = "HttpCheck";

/// The value as text: a string's content, anything else as compact JSON (`3`, `true`, `null`).
fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// What the check found from `answer`.
pub fn measure(config: &HttpCheckConfig, answer: &HttpAnswer) -> Measured {
    let name = &config.name;
    let path = &config.jsonpath;
    let json = match answer {
        HttpAnswer::Json(json) => json,
        HttpAnswer::Error(cause) => {
            return Measured::Errored(format!("http-check {name} got no answer: {cause}"));
        }
    };
    let found = match json.query(path) {
        Ok(found) => found,
        Err(e) => return Measured::Errored(format!("http-check {name}: {path}: {e}")),
    };
    let value = match found.as_slice() {
        [one] => *one,
        [] => {
            return Measured::Errored(format!(
                "http-check {name}: {path} selects nothing in the answer"
            ));
        }
        many => {
            return Measured::Errored(format!(
                "http-check {name}: {path} selects {} values; expected one",
                many.len()
            ));
        }
    };
    let shown = text(value);
    let ok = match &config.expect {
        Expect::Equals(want) => shown == *want,
        Expect::OneOf(list) => list.contains(&shown),
        Expect::Compare(op, bound) => {
            let n = value
                .as_f64()
                .or_else(|| value.as_str()?.trim().parse().ok());
            n.is_some_and(|n| op.holds(n, *bound))
        }
    };
    if ok {
        return Measured::Passed;
    }
    let want = match &config.expect {
        Expect::Equals(want) => want.clone(),
        Expect::OneOf(list) => format!("in({})", list.join(",")),
        Expect::Compare(op, bound) => format!("{}{bound}", op.as_str()),
    };
    let mut shown: String = shown.chars().take(100).collect();
    if shown.len() < text(value).len() {
        shown.push('…');
    }
    Measured::Failed(format!(
        "http-check {name}: {path} is {shown:?}, expected {want}"
    ))
}

/// The check's result at `now` for a set at `partition` / `update_revision`, from its `config`, its
/// stored `state` ([`check::current_state`]) and, when a check was due and made, the `answer`;
/// counted by [`check::count`].
pub fn check_result(
    config: &HttpCheckConfig,
    state: Option<&CheckState>,
    answer: Option<&HttpAnswer>,
    partition: i32,
    update_revision: &str,
    now: Timestamp,
) -> CheckResult {
    let measured = answer.map(|a| measure(config, a));
    count(
        KIND,
        &config.limits,
        state,
        measured,
        partition,
        update_revision,
        now,
    )
}

/// The `degraded-reason` this check records for `state` ([`check::degraded`]).
pub fn degraded(config: &HttpCheckConfig, state: &CheckState) -> Option<Record> {
    check::degraded(KIND, &config.limits, state)
}

/// What `HttpCheck` reads of the set beside its annotations: the revision its state is pinned to.
pub const READS: &[Field] = &[of_set("status.updateRevision")];

/// The HTTP check as a [`CheckKind`]: gate `HttpCheck` over the endpoint its `http-check` names.
pub enum Http {}

impl CheckKind for Http {
    type Config = HttpCheckConfig;
    type Answer = HttpAnswer;
    const REASON: Reason = Reason::HttpCheck;
    const STATE: StateKey = StateKey::of(names::HTTP_CHECK_STATE);

    fn config<'a>(input: &GateInput<'a>) -> Option<&'a HttpCheckConfig> {
        input.config.http_check.as_ref()
    }

    fn answer<'a>(input: &GateInput<'a>) -> Option<&'a HttpAnswer> {
        input.probes.http.as_ref()
    }

    fn limits(config: &HttpCheckConfig) -> &CheckLimits {
        &config.limits
    }

    fn measure(config: &HttpCheckConfig, answer: &HttpAnswer) -> Measured {
        measure(config, answer)
    }

    fn need(config: &HttpCheckConfig) -> Need {
        Need::Check(CheckRead::Http(config.name.clone()))
    }

    fn due(config: &HttpCheckConfig) -> String {
        format!("check due ({}), not run yet", config.name)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::config::check::CheckLimits;
    use crate::config::http_check::parse_expect;

    fn config(path: &str, expect: &str) -> HttpCheckConfig {
        HttpCheckConfig {
            name: "es".into(),
            jsonpath: path.into(),
            expect: parse_expect(expect).expect("expect"),
            limits: CheckLimits {
                period_seconds: 30,
                success_threshold: 1,
                failure_limit: None,
                error_limit: 4,
            },
        }
    }

    fn m(path: &str, expect: &str, body: Value) -> Measured {
        measure(&config(path, expect), &HttpAnswer::Json(body))
    }

    #[test]
    fn a_match_passes_a_mismatch_fails() {
        let es = json!({"status": "green", "number_of_nodes": 3, "a": {"b": [{"c": true}]}});
        assert_eq!(m("$.status", "green", es.clone()), Measured::Passed);
        assert_eq!(
            m("$.status", "in(green,yellow)", es.clone()),
            Measured::Passed
        );
        assert_eq!(m("$.number_of_nodes", ">=3", es.clone()), Measured::Passed);
        assert_eq!(m("$.a.b[0].c", "true", es.clone()), Measured::Passed);
        let yellow = m("$.status", "green", json!({"status": "yellow"}));
        assert_eq!(
            yellow,
            Measured::Failed("http-check es: $.status is \"yellow\", expected green".into())
        );
        assert!(matches!(
            m("$.number_of_nodes", ">3", es.clone()),
            Measured::Failed(_)
        ));
        assert!(matches!(m("$.status", ">=3", es), Measured::Failed(_)));
    }

    #[test]
    fn no_value_or_no_answer_is_an_error() {
        assert!(matches!(
            m("$.health", "green", json!({"status": "green"})),
            Measured::Errored(e) if e.contains("selects nothing")
        ));
        assert!(matches!(
            m("$.x[*]", "1", json!({"x": [1, 2]})),
            Measured::Errored(e) if e.contains("selects 2 values")
        ));
        let none = measure(
            &config("$.status", "green"),
            &HttpAnswer::Error("HTTP 500".into()),
        );
        assert_eq!(
            none,
            Measured::Errored("http-check es got no answer: HTTP 500".into())
        );
    }
}
