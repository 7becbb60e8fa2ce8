//! How a built-in answerer reaches the member behind a pod: an address template of the stepper's own
//! configuration (never an annotation: anyone who can edit a StatefulSet must not be able to point the
//! stepper at a host), e.g. `http://{pod}.{service}.{namespace}.svc:8008` — Kubernetes gives each pod of
//! a StatefulSet the stable DNS name `<pod>.<serviceName>.<namespace>.svc` through its governing
//! Service — with explicit addresses per pod name overriding it (members not reachable by DNS, tests on
//! 127.0.0.1).

use std::collections::BTreeMap;

use super::question::Question;

/// The placeholders a template may use, and what each becomes.
pub const PLACEHOLDERS: [&str; 5] = ["{pod}", "{ordinal}", "{set}", "{service}", "{namespace}"];

/// What an address must look like once filled in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// An `http://` or `https://` URL without a trailing `/` (a REST API's base).
    Url,
    /// `host:port` (a TCP service such as Redis Sentinel's).
    HostPort,
}

/// A member's address by pod: the template, and the pods given by hand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Addresses {
    template: Option<String>,
    by_pod: BTreeMap<String, String>,
}

impl Addresses {
    /// Checks `template` (`None`: only `by_pod`) and `by_pod` against `form`; `field` names them in
    /// errors (`answerers[0].patroni`).
    ///
    /// # Errors
    /// Neither given; a `{…}` that is not one of [`PLACEHOLDERS`]; an address that is not of `form`
    /// (checked on the template filled with sample values); each naming the field and the expected
    /// form.
    pub fn new(
        template: Option<String>,
        by_pod: BTreeMap<String, String>,
        form: Form,
        field: &str,
    ) -> Result<Addresses, String> {
        if template.is_none() && by_pod.is_empty() {
            return Err(format!(
                "{field}: neither `address` nor `members` given; expected an address template such as {}",
                example(form)
            ));
        }
        if let Some(t) = &template {
            let mut rest = t.as_str();
            while let Some(open) = rest.find('{') {
                let close = rest[open..].find('}').map(|c| open + c + 1);
                let Some(close) = close else {
                    return Err(format!("{field}.address: {t:?}: an unclosed `{{`"));
                };
                let word = &rest[open..close];
                if !PLACEHOLDERS.contains(&word) {
                    return Err(format!(
                        "{field}.address: {t:?}: {word} is not a placeholder; expected {}",
                        PLACEHOLDERS.join(", ")
                    ));
                }
                rest = &rest[close..];
            }
            let sample = fill(t, "web-0", 0, "web", "web", "demo");
            check(&sample, form).map_err(|e| format!("{field}.address: {t:?}: {e}"))?;
        }
        for (pod, address) in &by_pod {
            check(address, form).map_err(|e| format!("{field}.members.{pod}: {address:?}: {e}"))?;
        }
        Ok(Addresses { template, by_pod })
    }

    /// The address of the member behind pod `pod` (ordinal `ordinal`) of `q`'s set: the pod's own when
    /// given, else the template filled in; `None` with neither.
    pub fn of(&self, q: &Question, pod: &str, ordinal: u32) -> Option<String> {
        if let Some(a) = self.by_pod.get(pod) {
            return Some(a.clone());
        }
        let s = &q.stateful_set;
        let t = self.template.as_ref()?;
        Some(fill(
            t,
            pod,
            ordinal,
            &s.name,
            &s.service_name,
            &s.namespace,
        ))
    }
}

fn fill(t: &str, pod: &str, ordinal: u32, set: &str, service: &str, namespace: &str) -> String {
    t.replace("{pod}", pod)
        .replace("{ordinal}", &ordinal.to_string())
        .replace("{set}", set)
        .replace("{service}", service)
        .replace("{namespace}", namespace)
}

fn example(form: Form) -> &'static str {
    match form {
        Form::Url => "http://{pod}.{service}.{namespace}.svc:8008",
        Form::HostPort => "{pod}.{service}.{namespace}.svc:6379",
    }
}

fn check(address: &str, form: Form) -> Result<(), String> {
    match form {
        Form::Url => {
            let url = reqwest::Url::parse(address)
                .map_err(|e| format!("not a URL ({e}); expected {}", example(form)))?;
            if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
                return Err(format!("expected an http(s) URL such as {}", example(form)));
            }
            if address.ends_with('/') {
                return Err("expected no trailing `/` (the API's paths are appended)".into());
            }
            Ok(())
        }
        Form::HostPort => match address.rsplit_once(':') {
            Some((host, port)) if !host.is_empty() && port.parse::<u16>().is_ok_and(|p| p > 0) => {
                Ok(())
            }
            _ => Err(format!("expected host:port such as {}", example(form))),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn question() -> Question {
        Question::read(&json!({
            "requestId": "1", "phase": "Update", "pods": [], "updateRevision": "b",
            "partition": {"from": 3, "to": 2}, "replicas": 3,
            "statefulSet": {"namespace": "db", "name": "pg", "serviceName": "pg-hl"}
        }))
        .expect("question")
    }

    #[test]
    fn a_template_is_filled_and_a_pod_given_by_hand_wins() {
        let by_pod = BTreeMap::from([("pg-1".to_string(), "http://127.0.0.1:8009".to_string())]);
        let a = Addresses::new(
            Some("http://{pod}.{service}.{namespace}.svc:8008".into()),
            by_pod,
            Form::Url,
            "answerers[0].patroni",
        )
        .expect("valid");
        let q = question();
        assert_eq!(
            a.of(&q, "pg-0", 0).as_deref(),
            Some("http://pg-0.pg-hl.db.svc:8008")
        );
        assert_eq!(
            a.of(&q, "pg-1", 1).as_deref(),
            Some("http://127.0.0.1:8009")
        );
    }

    #[test]
    fn bad_templates_name_the_field_and_the_form() {
        for (template, form, words) in [
            (
                "http://{host}:8008",
                Form::Url,
                "{host} is not a placeholder",
            ),
            ("{pod}:8008", Form::Url, "expected an http(s) URL"),
            ("http://{pod}:8008/", Form::Url, "no trailing"),
            ("{pod}.{service}", Form::HostPort, "expected host:port"),
            ("http://{pod", Form::Url, "unclosed"),
        ] {
            let e = Addresses::new(
                Some(template.into()),
                BTreeMap::new(),
                form,
                "answerers[2].x",
            )
            .expect_err(template);
            assert!(e.starts_with("answerers[2].x.address: "), "{e}");
            assert!(e.contains(words), "{template}: {e}");
        }
        let e = Addresses::new(None, BTreeMap::new(), Form::Url, "answerers[0].etcd")
            .expect_err("none");
        assert!(e.contains("neither `address` nor `members`"), "{e}");
        let by_pod = BTreeMap::from([("r-0".to_string(), "localhost".to_string())]);
        let e = Addresses::new(None, by_pod, Form::HostPort, "answerers[1].redisSentinel")
            .expect_err("no port");
        assert!(
            e.starts_with("answerers[1].redisSentinel.members.r-0: "),
            "{e}"
        );
    }
}
