//! ControllerRevisions: the set's `spec.template` snapshots, their names, and scenario templates.
//!
//! Upstream: `pkg/controller/history/controller_history.go` (`ControllerRevisionName`,
//! `HashControllerRevision`) and `getStatefulSetRevisions` in `stateful_set_control.go`.

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
