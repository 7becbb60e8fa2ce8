//! ControllerRevisions: the set's `spec.template` snapshots, their names, and scenario templates.
//!
//! Upstream: `pkg/controller/history/controller_history.go` (`ControllerRevisionName`,
//! `HashControllerRevision`) and `getStatefulSetRevisions` in `stateful_set_control.go`.

use k8s_openapi::api::apps::v1::ControllerRevision;
use serde_json::{Value, json};

use super::world::World;

/// A ControllerRevision of the set: a snapshot of `spec.template`.
#[derive(Clone, Debug, PartialEq)]
pub struct Revision {
    /// `<set>-<hash>` (Kubernetes `ControllerRevisionName` over a hash of the revision data).
    pub name: String,
    /// `.revision`: bumped when an old revision becomes the update revision again (a rollback).
    pub number: i64,
    /// The pod template it holds.
    pub template: Value,
    /// A short letter for timelines (`A`, `B`, … in order of creation).
    pub letter: char,
}

/// Fowler–Noll–Vo 1a, 32 bit (the hash family `controller.ComputeHash`/`hashutil` use).
fn fnv1a32(bytes: &[u8]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in bytes {
        h ^= u32::from(*b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// `<set>-<hash>` like the controller's ControllerRevision names (`history.ControllerRevisionName` with
/// the hash encoded by `rand.SafeEncodeString`: decimal digits mapped onto a vowel-free alphabet).
pub fn revision_name(set_name: &str, template: &Value) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let hash = fnv1a32(template.to_string().as_bytes()).to_string();
    let encoded: String = hash
        .bytes()
        .map(|b| char::from(ALPHABET[usize::from(b) % ALPHABET.len()]))
        .collect();
    format!("{set_name}-{encoded}")
}

/// The pod template for `image` (labels `app=<set>`, one container `app`).
pub fn template(set_name: &str, image: &str) -> Value {
    json!({
        "metadata": {"labels": {"app": set_name}},
        "spec": {"containers": [{"name": "app", "image": format!("example.com/{set_name}:{image}")}]}
    })
}

/// The image tag of a template made by [`template`].
pub fn template_image(template: &Value) -> Option<&str> {
    template
        .pointer("/spec/containers/0/image")?
        .as_str()?
        .rsplit(':')
        .next()
}

impl World {
    /// The timeline letter of revision `name` (`?` if unknown).
    pub fn letter(&self, name: &str) -> char {
        self.revisions
            .iter()
            .find(|r| r.name == name)
            .map_or('?', |r| r.letter)
    }

    /// The revision named `name`.
    pub fn revision(&self, name: &str) -> Option<&Revision> {
        self.revisions.iter().find(|r| r.name == name)
    }

    /// ControllerRevision `namespace/name` as the API server returns it (`GET
    /// /apis/apps/v1/namespaces/{namespace}/controllerrevisions/{name}`), or `None` (404): see
    /// [`World::revision_object`].
    ///
    /// # Errors
    /// The object does not decode as a ControllerRevision (a bug in the simulation).
    pub fn controller_revision(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<ControllerRevision>, String> {
        let Some(r) = self
            .revision(name)
            .filter(|_| self.namespace() == namespace)
        else {
            return Ok(None);
        };
        serde_json::from_value(self.revision_object(r))
            .map(Some)
            .map_err(|e| format!("ControllerRevision {name}: {e}"))
    }

    /// Revision `r` as the API server stores it (JSON), shaped as upstream's `newRevision`
    /// (`stateful_set_utils.go`) makes it — labels the template's and `controller.kubernetes.io/hash`,
    /// the set as controller owner, `data` the strategic merge patch
    /// `{"spec":{"template":{…,"$patch":"replace"}}}` (`getPatch`), `revision` its number (bumped when
    /// a rollback reuses it). Not modelled: the set's annotations the revision copies, timestamps and
    /// `resourceVersion`.
    pub fn revision_object(&self, r: &Revision) -> Value {
        let (name, namespace) = (&r.name, self.namespace());
        let set_name = self.name();
        let hash = name.strip_prefix(&format!("{set_name}-")).unwrap_or(name);
        let mut labels = r.template["metadata"]["labels"].clone();
        if !labels.is_object() {
            labels = json!({});
        }
        labels["controller.kubernetes.io/hash"] = json!(hash);
        let mut data = r.template.clone();
        data["$patch"] = json!("replace");
        json!({
            "apiVersion": "apps/v1",
            "kind": "ControllerRevision",
            "metadata": {
                "name": name,
                "namespace": namespace,
                "uid": format!("uid-{name}"),
                "labels": labels,
                "ownerReferences": [{
                    "apiVersion": "apps/v1", "kind": "StatefulSet", "name": set_name,
                    "uid": self.set["metadata"]["uid"], "controller": true, "blockOwnerDeletion": true,
                }],
            },
            "data": {"spec": {"template": data}},
            "revision": r.number,
        })
    }

    /// True when the revision named `name` holds an image of [`World::bad_images`] (its pods never
    /// become Ready).
    pub fn revision_is_bad(&self, name: &str) -> bool {
        self.revision(name)
            .and_then(|r| template_image(&r.template))
            .is_some_and(|img| self.bad_images.iter().any(|b| b == img))
    }

    /// The update revision for the current template (Kubernetes `getStatefulSetRevisions`): the latest
    /// revision if equal; an older equal revision gets the next `.revision` number (a rollback reuses
    /// its name); else a new revision `<set>-<hash>`.
    pub(super) fn update_revision_for_template(&mut self) -> String {
        let tpl = self.set["spec"]["template"].clone();
        let next = self.revisions.iter().map(|r| r.number).max().unwrap_or(0) + 1;
        let latest = self.revisions.iter().max_by_key(|r| r.number);
        if let Some(latest) = latest
            && latest.template == tpl
        {
            return latest.name.clone();
        }
        if let Some(old) = self.revisions.iter_mut().find(|r| r.template == tpl) {
            old.number = next;
            return old.name.clone();
        }
        let name = revision_name(&self.name(), &tpl);
        let letter = char::from(b'A' + u8::try_from(self.revisions.len() % 26).unwrap_or(0));
        self.revisions.push(Revision {
            name: name.clone(),
            number: next,
            template: tpl,
            letter,
        });
        name
    }

    /// The template of the revision before the latest (`kubectl rollout undo` with no `--to-revision`).
    pub fn previous_template(&self) -> Option<Value> {
        let mut revs: Vec<&Revision> = self.revisions.iter().collect();
        revs.sort_by_key(|r| r.number);
        revs.iter().rev().nth(1).map(|r| r.template.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::kubelet::Timing;
    use crate::sim::world::SetShape;

    #[test]
    fn a_revision_is_served_as_the_api_server_stores_it_and_renumbered_by_a_rollback() {
        let shape = SetShape {
            name: "web".into(),
            namespace: "demo".into(),
            replicas: 3,
            pod_management_policy: "OrderedReady".into(),
            min_ready_seconds: 0,
            image: "v1".into(),
        };
        let mut w =
            World::new(&shape, Timing::default(), false, "safe-rollout.dev", 1).expect("new");
        let v1 = w.status_str("currentRevision");
        let (undo, mut apply) = (w.set.clone(), w.set.clone());
        apply["spec"]["template"] = template("web", "v2");
        w.write(apply, "apply").expect("apply v2");
        w.tick(1);
        let got = w
            .controller_revision("demo", &v1)
            .expect("decodes")
            .expect("found");
        let wire = serde_json::to_value(&got).expect("json");
        let hash = v1.strip_prefix("web-").expect("<set>-<hash>");
        assert_eq!(wire["metadata"]["name"], json!(v1));
        assert_eq!(wire["metadata"]["labels"]["app"], "web", "the template's");
        assert_eq!(
            wire["metadata"]["labels"]["controller.kubernetes.io/hash"],
            hash
        );
        let owner = &wire["metadata"]["ownerReferences"][0];
        assert_eq!(
            (
                &owner["kind"],
                &owner["name"],
                &owner["uid"],
                &owner["controller"]
            ),
            (
                &json!("StatefulSet"),
                &json!("web"),
                &json!("uid-web"),
                &json!(true)
            )
        );
        let mut stored = template("web", "v1");
        stored["$patch"] = json!("replace");
        assert_eq!(wire["data"], json!({"spec": {"template": stored}}));
        assert_eq!(got.revision, 1);
        assert_eq!(w.controller_revision("other", &v1), Ok(None), "namespaced");
        assert_eq!(w.controller_revision("demo", "web-nosuch"), Ok(None));
        // `kubectl rollout undo`: the old revision is the update revision again, with a new number.
        w.write(undo, "undo").expect("undo");
        w.tick(2);
        assert_eq!(w.status_str("updateRevision"), v1);
        let again = w
            .controller_revision("demo", &v1)
            .expect("decodes")
            .expect("found");
        assert_eq!(again.revision, 3);
    }
}
