//! The fleet the mocked API server serves: objects rendered from the fixtures (`fixtures/api/scale/`)
//! as JSON templates with holes, straight into the bytes of a page.

use serde_json::{Value, json};

/// A fixture object (`fixtures/api/<file>`): the object, or a list's first item.
pub fn fixture(file: &str) -> Value {
    let path = format!("{}/../fixtures/api/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let object: Value = serde_json::from_slice(&text).expect("fixture JSON");
    match object.get("items") {
        Some(items) => items[0].clone(),
        None => object,
    }
}

/// A fixture object as JSON text with holes: `@N@` inside its strings stands for value `N`.
pub struct Template(Vec<(String, Option<usize>)>);

impl Template {
    pub fn new(object: &Value) -> Self {
        let text = serde_json::to_string(object).expect("json");
        let mut parts = Vec::new();
        let mut rest = text.as_str();
        while let Some(at) = rest.find('@') {
            let hole = rest[at + 1..].find('@').and_then(|end| {
                let n = rest[at + 1..at + 1 + end].parse().ok()?;
                Some((n, at + end + 2))
            });
            match hole {
                Some((n, next)) => {
                    parts.push((rest[..at].to_string(), Some(n)));
                    rest = &rest[next..];
                }
                None => {
                    parts.push((rest[..=at].to_string(), None));
                    rest = &rest[at + 1..];
                }
            }
        }
        parts.push((rest.to_string(), None));
        Template(parts)
    }

    pub fn render(&self, out: &mut Vec<u8>, values: &[&str]) {
        for (text, hole) in &self.0 {
            out.extend_from_slice(text.as_bytes());
            if let Some(n) = hole {
                out.extend_from_slice(values[*n].as_bytes());
            }
        }
    }
}

/// The objects the mock serves, by index: set `i` is `ns-<i % 100>/set-<i>` (uid `uid-<i>`, selector
/// `app=set-<i>`), its pods `set-<i>-<o>`; one PDB per namespace. Rendered from templates straight into
/// the page's bytes, so the mock's own garbage stays small (it shares the process being measured).
pub struct Fleet {
    pub sets: usize,
    pub pods_per_set: usize,
    pub set: Template,
    pub pod: Template,
    /// The pod a step asks: with the handshake's annotations.
    pub asked: Template,
    pub pdb: Template,
}

/// The holes: 0 set name, 1 pod name, 2 namespace, 3 pod uid, 4 ordinal, 5 set uid. The pods carry an
/// annotation of the application's own; the asked pod also the approval request and its answer.
pub fn templates(
    mut set: Value,
    mut pod: Value,
    mut pdb: Value,
) -> (Template, Template, Template, Template) {
    set["metadata"]["name"] = json!("@0@");
    set["metadata"]["namespace"] = json!("@2@");
    set["metadata"]["uid"] = json!("@5@");
    set["metadata"]["annotations"]["safe-rollout.dev/initialized"] = json!("true");
    set["spec"]["selector"] = json!({"matchLabels": {"app": "@0@"}});
    set["spec"]["template"]["metadata"]["labels"] = json!({"app": "@0@"});
    pod["metadata"]["name"] = json!("@1@");
    pod["metadata"]["namespace"] = json!("@2@");
    pod["metadata"]["uid"] = json!("@3@");
    pod["metadata"]["labels"] = json!({"app": "@0@", "apps.kubernetes.io/pod-index": "@4@",
        "controller-revision-hash": "@0@-a", "statefulset.kubernetes.io/pod-name": "@1@"});
    pod["metadata"]["ownerReferences"][0]["name"] = json!("@0@");
    pod["metadata"]["ownerReferences"][0]["uid"] = json!("@5@");
    pdb["metadata"]["namespace"] = json!("@2@");
    pod["metadata"]["annotations"] = json!({"example.com/owned-by-app": "keep-me"});
    let mut asked = pod.clone();
    asked["metadata"]["annotations"] = json!({
        "example.com/owned-by-app": "keep-me",
        "safe-rollout.dev/update-requested": "@0@-7d7598bf9d",
        "safe-rollout.dev/update-requested-at": "2026-11-27T23:00:00Z",
        "safe-rollout.dev/update-request-phase": "Update",
        "safe-rollout.dev/update-approved": "@0@-7d7598bf9d",
    });
    (
        Template::new(&set),
        Template::new(&pod),
        Template::new(&asked),
        Template::new(&pdb),
    )
}

impl Fleet {
    /// Renders object `k` of `kind` into `out`.
    pub fn render(&self, kind: &str, k: usize, out: &mut Vec<u8>) {
        let (template, i, o) = match kind {
            "statefulsets" => (&self.set, k, 0),
            "pods" if k % self.pods_per_set == self.pods_per_set - 1 => {
                (&self.asked, k / self.pods_per_set, k % self.pods_per_set)
            }
            "pods" => (&self.pod, k / self.pods_per_set, k % self.pods_per_set),
            _ => (&self.pdb, k, 0),
        };
        let (set, pod) = (format!("set-{i}"), format!("set-{i}-{o}"));
        let (ns, pod_uid, set_uid) = (
            format!("ns-{}", i % 100),
            format!("pod-uid-{k}"),
            format!("uid-{i}"),
        );
        template.render(out, &[&set, &pod, &ns, &pod_uid, &o.to_string(), &set_uid]);
    }

    /// One page of a LIST: items `[start, start + limit)`, with the `continue` token of the next page.
    pub fn page(&self, kind: &str, start: usize, limit: usize) -> Vec<u8> {
        let count = match kind {
            "statefulsets" => self.sets,
            "pods" => self.sets * self.pods_per_set,
            _ => 100.min(self.sets),
        };
        let end = (start + limit).min(count);
        let next = if end < count {
            format!(r#","continue":"{end}""#)
        } else {
            String::new()
        };
        let mut out = format!(
            r#"{{"apiVersion":"v1","kind":"List","metadata":{{"resourceVersion":"9"{next}}},"items":["#
        )
        .into_bytes();
        for k in start..end {
            if k > start {
                out.push(b',');
            }
            self.render(kind, k, &mut out);
        }
        out.extend_from_slice(b"]}");
        out
    }
}
